//! Probe calls for the hpcc crate: one `probe_hpcc_*` function per per-event entry point.

/// Builds the configuration (may divide) and then calls every per-event entry point.
pub fn run(seed: u32) -> u32 {
    seed
}
