//! Probe calls for the pacer crate: one `probe_pacer_*` function per per-event entry point.
//!
//! The configuration (which divides to precompute the line's and the hybrid rate's time per
//! byte) and the flows are set up in [`run`]; the probes take the pacer by reference.

use cc_pacer::{Config, FlowId, FlowMode, FlowSpec, Instant, Pacer, Rate};
use core::hint::black_box;

/// The probe's pacer: 64 flows, all of which may be window or hybrid flows.
pub type Probe = Pacer<64, 64>;

/// `Pacer::next`: one scheduling decision (pops, paces, re-files; lazy update, windows, hybrid
/// bursts and page entry on their paths).
#[unsafe(no_mangle)]
#[inline(never)]
pub extern "C" fn probe_pacer_next(p: &mut Probe, now: u32) -> u64 {
    match p.next(Instant::from_raw(now)) {
        Some(s) => (u64::from(s.t_send.raw()) << 32) | u64::from(s.bytes) ^ (s.flow.index() as u64),
        None => u64::MAX,
    }
}

/// `Pacer::set_rate`: the division-free reciprocal of the rate.
#[unsafe(no_mangle)]
#[inline(never)]
pub extern "C" fn probe_pacer_set_rate(p: &mut Probe, flow: u32, rate_u128bps: u32) -> u32 {
    #[allow(clippy::cast_possible_truncation)] // any value: unknown flows are refused
    match p.set_rate(
        FlowId::from_index(flow as u16),
        Rate::from_units(rate_u128bps),
    ) {
        Ok(c) => c as u32,
        Err(_) => 9,
    }
}

/// `Pacer::enqueue`.
#[unsafe(no_mangle)]
#[inline(never)]
pub extern "C" fn probe_pacer_enqueue(p: &mut Probe, flow: u32, bytes: u32, now: u32) -> u32 {
    #[allow(clippy::cast_possible_truncation)]
    match p.enqueue(
        FlowId::from_index(flow as u16),
        bytes,
        Instant::from_raw(now),
    ) {
        Ok(e) => e as u32,
        Err(_) => 9,
    }
}

/// `Pacer::on_ack`.
#[unsafe(no_mangle)]
#[inline(never)]
pub extern "C" fn probe_pacer_on_ack(p: &mut Probe, flow: u32, bytes: u32, now: u32) -> u32 {
    #[allow(clippy::cast_possible_truncation)]
    match p.on_ack(
        FlowId::from_index(flow as u16),
        bytes,
        Instant::from_raw(now),
    ) {
        Ok(e) => e as u32,
        Err(_) => 9,
    }
}

/// `Pacer::set_window`.
#[unsafe(no_mangle)]
#[inline(never)]
pub extern "C" fn probe_pacer_set_window(p: &mut Probe, flow: u32, bytes: u32, now: u32) -> u32 {
    #[allow(clippy::cast_possible_truncation)]
    match p.set_window(
        FlowId::from_index(flow as u16),
        bytes,
        Instant::from_raw(now),
    ) {
        Ok(e) => e as u32,
        Err(_) => 9,
    }
}

/// `Pacer::earliest`.
#[unsafe(no_mangle)]
#[inline(never)]
pub extern "C" fn probe_pacer_earliest(p: &Probe) -> u32 {
    p.earliest().map_or(0, Instant::raw)
}

/// Builds the configuration and flows (may divide), then calls every per-event entry point.
pub fn run(seed: u32) -> u32 {
    let cfg = Config::new(Rate::from_units(black_box(781_250_000)))
        .and_then(|c| c.with_hybrid(Rate::from_units(black_box(5_468_750)), black_box(4_096)))
        .unwrap_or(Config::DEFAULT);
    let mut p: Probe = Pacer::new(&cfg);
    for i in 0..12u32 {
        let mode = match i % 3 {
            0 => FlowMode::Paced,
            1 => FlowMode::Window {
                window_bytes: black_box(40_000),
            },
            _ => FlowMode::Hybrid,
        };
        let _ = p.add_flow(FlowSpec {
            seg_bytes: black_box(16_384),
            rate: Rate::from_units(black_box(7_812_500 + i * 100_000)),
            mode,
        });
    }
    let mut acc = seed;
    let mut now = 0u32;
    for i in 0..12u32 {
        acc = acc.wrapping_add(probe_pacer_enqueue(
            black_box(&mut p),
            black_box(i),
            black_box(100_000),
            black_box(now),
        ));
    }
    for k in 0..400u32 {
        now = now.wrapping_add(black_box(20_000));
        if k % 7 == 0 {
            acc = acc.wrapping_add(probe_pacer_set_rate(
                black_box(&mut p),
                black_box(k % 12),
                black_box(3_000_000 + k * 10_000),
            ));
        }
        if k % 5 == 1 {
            acc = acc.wrapping_add(probe_pacer_on_ack(
                black_box(&mut p),
                black_box(1 + 3 * (k % 4)),
                black_box(16_384),
                black_box(now),
            ));
        }
        if k % 11 == 4 {
            acc = acc.wrapping_add(probe_pacer_set_window(
                black_box(&mut p),
                black_box(1 + 3 * (k % 4)),
                black_box(20_000 + k * 100),
                black_box(now),
            ));
        }
        for _ in 0..4 {
            #[allow(clippy::cast_possible_truncation)]
            {
                acc = acc.wrapping_add(probe_pacer_next(black_box(&mut p), black_box(now)) as u32);
            }
        }
        acc = acc.wrapping_add(probe_pacer_earliest(black_box(&p)));
    }
    acc
}
