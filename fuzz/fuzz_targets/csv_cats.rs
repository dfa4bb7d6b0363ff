//! `sim-host replay cats` on an arbitrary file: the CSV trace reader, `# set` lines, the
//! parameter parser and the lockstep replay must return a summary or an error that names the
//! file and a line inside it — never panic, never hang.
//!
//! Input: one option byte (bit 0 forced mode, bit 1 `--out`, bit 2 `--plot`), then the file.
#![no_main]

use fuzz_common::{check_input_error, replay_opts, scratch_file};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&opt, text)) = data.split_first() else {
        return;
    };
    let path = scratch_file("trace.csv", text);
    // Recognising the kind reads the header row only.
    let _ = sim_host::replay::Kind::detect(&path);
    match sim_host::cats::replay(&path, &replay_opts(opt)) {
        Ok(sums) => assert!(!sums.is_empty()),
        Err(e) => check_input_error(&e, &path, text),
    }
});
