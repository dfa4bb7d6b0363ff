//! Probe calls for the cc-pcc crate (DOCA PCC adapter): one `probe_pcc_*` function per
//! per-event entry point. The configuration is built and changed in [`run`] (`set_params`
//! divides: configuration time), outside the probes.

use cc_pcc::{
    Counters, EVENT_BYTES, Event, FlowContext, HpccPccConfig, TELEMETRY_BYTES, Telemetry,
    TimelyPccConfig, hpcc_on_event, timely_on_event, tx_flag,
};
use core::hint::black_box;

/// `Event::decode`: the 44-byte event as the SDK's getters read it.
#[unsafe(no_mangle)]
#[inline(never)]
#[allow(improper_ctypes_definitions)] // called from Rust only; extern "C" just pins the symbol
pub extern "C" fn probe_pcc_event_decode(bytes: &[u8; EVENT_BYTES]) -> u32 {
    let e = Event::decode(bytes);
    let [a, b, c] = e.spec;
    u32::from_le_bytes([e.type_code, e.subtype, e.port, e.flags])
        ^ e.flow_tag
        ^ e.sn
        ^ e.ts_ns
        ^ a
        ^ b
        ^ c
}

/// `Telemetry::decode`: the 12-byte switch-telemetry hop record.
#[unsafe(no_mangle)]
#[inline(never)]
#[allow(improper_ctypes_definitions)] // called from Rust only
pub extern "C" fn probe_pcc_telemetry_decode(bytes: &[u8; TELEMETRY_BYTES]) -> u32 {
    let t = Telemetry::decode(bytes);
    t.qlen_bytes() ^ t.tx_bytes ^ t.tx_ts_ns ^ u32::from(t.flags)
}

/// `timely_on_event`: the whole per-event path (load the context, the event, store it back).
#[unsafe(no_mangle)]
#[inline(never)]
#[allow(improper_ctypes_definitions)] // called from Rust only
pub extern "C" fn probe_pcc_timely_on_event(
    cfg: &TimelyPccConfig,
    ctx: &mut FlowContext,
    ev: &Event,
    counters: &mut Counters,
) -> u32 {
    let r = timely_on_event(cfg, ctx, ev, counters);
    r.rate_q20 ^ u32::from(r.rtt_req)
}

/// `TimelyPccConfig::rate_q20`: the Q20 conversion alone.
#[unsafe(no_mangle)]
#[inline(never)]
#[allow(improper_ctypes_definitions)] // called from Rust only
pub extern "C" fn probe_pcc_rate_q20(cfg: &TimelyPccConfig, rate_u128bps: u32) -> u32 {
    let (q, c) = cfg.rate_q20(rate_u128bps);
    q ^ c as u32
}

/// Builds and changes the configuration, then calls every per-event entry point.
pub fn run(seed: u32) -> u32 {
    let mut acc = seed;
    let mut cfg = TimelyPccConfig::DEFAULT;
    // Run-time parameter change (may divide): a 100 Gb/s port, 500 µs probe timeout.
    let _ = cfg.set_params(black_box(0), &[black_box(100_000), black_box(100)]);
    let _ = cfg.set_param(black_box(11), black_box(500_000));
    let mut ctx: FlowContext = [0; 12];
    let mut counters = Counters::default();
    let mut bytes = [0u8; EVENT_BYTES];
    for i in 0..8u32 {
        bytes[15] = black_box([3u8, 6, 4, 5, 2, 9, 3, 6][i as usize]); // the type byte
        bytes[24..28].copy_from_slice(&black_box(i.wrapping_mul(90_000)).to_be_bytes());
        bytes[28..32]
            .copy_from_slice(&black_box(i.wrapping_mul(90_000).wrapping_sub(80_000)).to_be_bytes());
        acc ^= probe_pcc_event_decode(black_box(&bytes));
        let ev = Event::decode(&bytes);
        acc = acc.wrapping_add(probe_pcc_timely_on_event(
            black_box(&cfg),
            black_box(&mut ctx),
            black_box(&ev),
            black_box(&mut counters),
        ));
    }
    let tel = [black_box(1u8); TELEMETRY_BYTES];
    acc ^= probe_pcc_telemetry_decode(black_box(&tel));
    acc ^= probe_pcc_rate_q20(black_box(&cfg), black_box(12_345_678));
    run_hpcc(acc)
}

/// `hpcc_on_event`: the HPCC per-event path (context, event, telemetry hop, Algorithm 1).
#[unsafe(no_mangle)]
#[inline(never)]
#[allow(improper_ctypes_definitions)] // called from Rust only
pub extern "C" fn probe_pcc_hpcc_on_event(
    cfg: &HpccPccConfig,
    ctx: &mut FlowContext,
    ev: &Event,
    telemetry: &[u8; TELEMETRY_BYTES],
    counters: &mut Counters,
) -> u32 {
    let r = hpcc_on_event(cfg, ctx, ev, telemetry, counters);
    r.rate_q20 ^ u32::from(r.rtt_req)
}

/// Builds the HPCC configuration (may divide), then drives a flow through TX and RTT events
/// with telemetry.
pub fn run_hpcc(seed: u32) -> u32 {
    let mut acc = seed;
    let Ok(mut cfg) = HpccPccConfig::default_values() else {
        return acc;
    };
    let _ = cfg.set_params(black_box(6), &[black_box(7)]);
    let mut ctx: FlowContext = [0; 12];
    let mut counters = Counters::default();
    let mut tel = [0u8; TELEMETRY_BYTES];
    for i in 0..8u32 {
        let t = black_box(i.wrapping_mul(13_000));
        let kind = black_box([3u8, 6, 3, 6, 4, 5, 2, 6][i as usize]);
        let ev = Event {
            type_code: kind,
            subtype: 0,
            port: 0,
            // Every other TX carries RTT_REQ_SENT: the requested probe leaves.
            flags: black_box(if i % 4 == 2 { tx_flag::RTT_REQ_SENT } else { 0 }),
            flow_tag: 1,
            sn: i,
            ts_ns: t,
            spec: [t.wrapping_sub(12_000), 0, 0],
        };
        tel[4..8].copy_from_slice(&black_box(i.wrapping_mul(150_000)).to_be_bytes());
        tel[8..12].copy_from_slice(&t.to_be_bytes());
        acc = acc.wrapping_add(probe_pcc_hpcc_on_event(
            black_box(&cfg),
            black_box(&mut ctx),
            black_box(&ev),
            black_box(&tel),
            black_box(&mut counters),
        ));
    }
    acc
}
