//! `sim-host replay cats` on an arbitrary file: the CSV trace reader, `# set` lines, the
//! parameter parser and the lockstep replay must return a summary or an error that names the
//! file and a line inside it — never panic, never hang.
//!
//! Input: one option byte (bit 0 forced mode, bit 1 `--out`, bit 2 `--plot`), then the file.
//!
//! Harness limit: the replay's work is a decision per chunk, up to 2^20 chunks per event
//! (`cats::MAX_CHUNKS_PER_EVENT`), so a few rows can ask for minutes of it. Inputs whose
//! enqueued bytes exceed 2^18 chunks of their MSS (1 byte when the `mss_bytes` line does not
//! read as a plain number) are skipped: an execution stays in milliseconds.
#![no_main]

use fuzz_common::replay_csv_input;
use libfuzzer_sys::fuzz_target;

/// An upper bound on the chunks the trace can feed.
fn chunks(text: &[u8]) -> u64 {
    let text = String::from_utf8_lossy(text);
    let mut mss = 1460u64;
    let mut bytes = 0u64;
    for line in text.lines() {
        if line.contains("mss_bytes") {
            mss = line
                .split_once('=')
                .and_then(|(_, v)| v.trim().parse::<u64>().ok())
                .filter(|&m| m > 0)
                .unwrap_or(1);
        }
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        if f.len() >= 4 && f[1].contains("enqueue") {
            bytes = bytes.saturating_add(f[3].parse::<u64>().unwrap_or(u64::from(u32::MAX)));
        }
    }
    bytes / mss.min(1460)
}

fuzz_target!(|data: &[u8]| {
    let Some((&opt, text)) = data.split_first() else {
        return;
    };
    if chunks(text) > 1 << 18 {
        return;
    }
    replay_csv_input(opt, text, cc_replay::cats::replay);
});
