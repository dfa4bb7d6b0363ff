//! Probe calls for the timely crate: one `probe_timely_*` function per per-event entry point.

/// Builds the configuration (may divide) and then calls every per-event entry point.
pub fn run(seed: u32) -> u32 {
    seed
}
