//! Probe calls for the hpcc crate: one `probe_hpcc_*` function per per-event entry point.

use core::hint::black_box;
use hpcc_cc::{Config, IntView, State};

/// `State::on_ack` (parses the INT block, then Algorithm 1) on opaque inputs.
#[unsafe(no_mangle)]
#[inline(never)]
pub extern "C" fn probe_hpcc_on_ack(
    state: &mut State,
    cfg: &Config,
    ack_seq: u32,
    snd_nxt: u32,
    int: &[u8; 42],
    len: usize,
) -> u32 {
    let bytes = int.get(..len).unwrap_or(&[]);
    let up = state.on_ack(cfg, ack_seq, snd_nxt, bytes);
    up.window_bytes.to_bits() ^ (up.rate_bps as u32) ^ (up.branch as u32)
}

/// `IntView::parse` alone (the zero-copy INT parser) on opaque bytes.
#[unsafe(no_mangle)]
#[inline(never)]
pub extern "C" fn probe_hpcc_int_parse(int: &[u8; 42], len: usize) -> u32 {
    let bytes = int.get(..len).unwrap_or(&[]);
    match IntView::<5>::parse(bytes) {
        Ok(v) => u32::from(v.header()) ^ v.hop_words().fold(0u32, |a, w| a ^ (w as u32)),
        Err(_) => u32::MAX,
    }
}

/// Builds the configuration (may divide) and then calls every per-event entry point.
pub fn run(seed: u32) -> u32 {
    let params = hpcc_cc::Params {
        base_rtt_ns: black_box(13_000u32.wrapping_add(seed)),
        ..hpcc_cc::Params::PAPER
    };
    let cfg = Config::new(params).unwrap_or(Config::PAPER);
    let mut state = State::new(&cfg);
    // A 5-hop block, then the same path 1 µs later with traffic on every hop.
    let mut int = [0u8; 42];
    int[0] = 0x50;
    int[1] = 0x12;
    for h in 0..5 {
        int[2 + 8 * h] = 0x50;
    }
    let mut acc = probe_hpcc_on_ack(
        &mut state,
        &cfg,
        black_box(0),
        black_box(1_000),
        black_box(&int),
        black_box(42),
    );
    for h in 0..5 {
        int[2 + 8 * h + 2] = 0x04; // ts += 1024 ns
        int[2 + 8 * h + 5] = 0x01; // tx += 16 units
        int[2 + 8 * h + 7] = h as u8; // qlen
    }
    acc ^= probe_hpcc_on_ack(
        &mut state,
        &cfg,
        black_box(1_001),
        black_box(2_000),
        black_box(&int),
        black_box(42),
    );
    acc ^ probe_hpcc_int_parse(black_box(&int), black_box(42))
}
