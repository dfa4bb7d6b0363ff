//! `sim-host replay timely` on an arbitrary file: the CSV trace reader, `# set` lines, the
//! parameter parser and the lockstep replay must return a summary or an error that names the
//! file and a line inside it — never panic, never hang.
//!
//! Input: one option byte (bit 0 forced mode, bit 1 `--out`, bit 2 `--plot`), then the file.
#![no_main]

use fuzz_common::replay_csv_input;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&opt, text)) = data.split_first() else {
        return;
    };
    replay_csv_input(opt, text, cc_replay::timely::replay);
});
