//! Probe calls for the timely crate: one `probe_timely_*` function per per-event entry point.
//!
//! The configurations are built in [`run`] (at run time from opaque parameters, so the
//! precomputing divisions happen here, outside the probes); the per-event probes take them by
//! reference.

use core::hint::black_box;
use timely_cc::{Completion, Config, I60F68, Params, Ratio, RawParts, State, U28F4};

/// `State::on_completion`: the whole per-event path (RTT engine, Algorithm 1, optional rules).
#[unsafe(no_mangle)]
#[inline(never)]
#[allow(improper_ctypes_definitions)] // called from Rust only; extern "C" just pins the symbol
pub extern "C" fn probe_timely_on_completion(
    cfg: &Config,
    st: &mut State,
    t_send_ns: u64,
    t_complete_ns: u64,
    bytes: u32,
    sending_rate_bps: u64,
) -> u64 {
    let ev = Completion {
        t_send_ns,
        t_complete_ns,
        bytes,
        sending_rate_bps: if sending_rate_bps == 0 {
            None
        } else {
            Some(sending_rate_bps)
        },
    };
    let u = st.on_completion(cfg, &ev);
    u.rate_bps ^ (u.branch as u64) ^ u64::from(u.rtt_ns.to_bits())
}

/// `State::on_rtt`: the rate computation engine alone (a precomputed RTT).
#[unsafe(no_mangle)]
#[inline(never)]
#[allow(improper_ctypes_definitions)] // called from Rust only
pub extern "C" fn probe_timely_on_rtt(
    cfg: &Config,
    st: &mut State,
    rtt_ns: U28F4,
    bytes: u32,
    sending_rate_bps: u64,
) -> u64 {
    let sr = if sending_rate_bps == 0 {
        None
    } else {
        Some(sending_rate_bps)
    };
    let u = st.on_rtt(cfg, rtt_ns, bytes, sr);
    u.rate_bps ^ (u.branch as u64) ^ u64::from(u.rtt_ns.to_bits())
}

/// `State::rtt_ns`: the RTT engine alone.
#[unsafe(no_mangle)]
#[inline(never)]
#[allow(improper_ctypes_definitions)] // called from Rust only
pub extern "C" fn probe_timely_rtt_q4(
    cfg: &Config,
    t_send_ns: u64,
    t_complete_ns: u64,
    bytes: u32,
) -> u64 {
    State::rtt_ns(cfg, &Completion::new(t_send_ns, t_complete_ns, bytes))
        .map_or(u64::MAX, |r| u64::from(r.to_bits()))
}

/// `State::from_raw_parts` and the raw accessors (the re-seeding path).
#[unsafe(no_mangle)]
#[inline(never)]
pub extern "C" fn probe_timely_from_raw(
    rate: u32,
    prev: u32,
    diff: i64,
    resid: i16,
    cnt: u8,
) -> u32 {
    let st = State::from_raw_parts(RawParts {
        rate_u128bps: rate,
        prev_rtt_ns: U28F4::from_bits(prev),
        rtt_diff_ns: I60F68::from_bits(i128::from(diff) << 40),
        residual: resid,
        hai_count: cnt,
        started: true,
    });
    let p = st.raw_parts();
    p.rate_u128bps
        ^ p.prev_rtt_ns.to_bits()
        ^ ((p.rtt_diff_ns.to_bits() >> 64) as u32)
        ^ (p.residual as u32)
        ^ u32::from(p.hai_count)
}

/// Builds the configuration (may divide) and then calls every per-event entry point.
pub fn run(seed: u32) -> u32 {
    let mut acc = seed;
    let plain = Params {
        line_rate_bps: black_box(10_000_000_000),
        min_rtt_ns: black_box(20_000),
        ..Params::DEFAULT
    };
    let optional = Params {
        app_limited: Some(Ratio::new(black_box(4), 5)),
        per_completion_scaling: black_box(true),
        ..plain
    };
    for p in [plain, optional] {
        let Ok(cfg) = Config::new(black_box(p)) else {
            continue;
        };
        let mut st = State::new(&cfg);
        for i in 0..4u64 {
            let r = probe_timely_on_completion(
                black_box(&cfg),
                black_box(&mut st),
                black_box(i * 20_000),
                black_box(i * 20_000 + 100_000 + i * 150_000),
                black_box(16_384),
                black_box(5_000_000_000),
            );
            acc = acc.wrapping_add(r as u32);
        }
        for i in 0..4u64 {
            let r = probe_timely_on_rtt(
                black_box(&cfg),
                black_box(&mut st),
                black_box(U28F4::from_bits(((100_000 + i * 250_000) << 4) as u32)),
                black_box(16_384),
                black_box(5_000_000_000),
            );
            acc = acc.wrapping_add(r as u32);
        }
        acc ^= probe_timely_rtt_q4(&cfg, black_box(0), black_box(50_000), black_box(1_500)) as u32;
    }
    acc ^ probe_timely_from_raw(
        black_box(1),
        black_box(2),
        black_box(-3),
        black_box(5),
        black_box(4),
    )
}
