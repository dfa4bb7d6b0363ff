//! The host side of `make -C examples/doca-pcc check`: writes a deterministic DOCA-shaped event
//! sequence for the C harness (`events FILE`, 64-byte records, format in
//! examples/doca-pcc/harness.c) and prints what the adapter answers on the host for it
//! (`expected`), line for line as the harness prints it under QEMU.
//!
//! The sequence is closed-loop: a probe is answered only after the adapter asked for it, after
//! the probe's RTT (20 µs + a queue that grows and drains + the responder's turnaround); some
//! probes are lost, some answered after the timeout, a few responses are unsolicited or carry a
//! turnaround longer than the RTT. The 32-bit clock wraps in the middle, the switch's byte
//! counter too; there are long pauses (telemetry gaps), path changes, coalesced TX/ACK/NACK/CNP
//! events, undocumented types, two ports and parameter changes, accepted and refused. The
//! expected side runs `cc_pcc` directly (not the C ABI), so the comparison covers the C glue,
//! the C ABI and the rv64 build at once. A sequence that does not exercise all of this is
//! refused (exit 1) rather than compared.

use std::fmt::Write as _;
use std::io::Write as _;
use std::process::ExitCode;

use cc_pcc::{
    COUNTER_NAMES, COUNTER_NUM, Counter, Counters, Event, FlowContext, HPCC_PARAMS, HpccPccConfig,
    TIMELY_PARAMS, TimelyPccConfig, hpcc_on_event, timely_on_event,
};

const SLOTS: usize = 2;
const PORTS: usize = 2;
const FLOWS: usize = 5;
const STEPS: u32 = 6_000;

/// What the generator produced: the records for the harness and the lines the host expects.
pub struct Sequence {
    /// 64-byte records.
    pub records: Vec<[u8; 64]>,
    /// The expected output, one `\n`-terminated line each.
    pub expected: String,
    /// Why the sequence would not make a meaningful comparison (empty: fine).
    pub missing: Vec<String>,
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u32 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 32) as u32
    }
    fn below(&mut self, n: u32) -> u32 {
        self.next() % n
    }
    fn pct(&mut self, p: u32) -> bool {
        self.below(1000) < p
    }
}

#[derive(Clone, Copy)]
struct Probe {
    req_send: u32,
    due: u32,
    lost: bool,
    turnaround: u32,
    invalid: bool,
}

struct Flow {
    probe: Option<Probe>,
    ctx: FlowContext,
}

struct Switch {
    tx_bytes: u32,
    clock_offset: u32,
    last_t: u32,
}

fn record(op: u32, slot: usize, port: usize, arg: u32, num: u32, payload: &[u8]) -> [u8; 64] {
    let mut r = [0u8; 64];
    let slot_port = u32::try_from(slot | port << 8).unwrap_or(0);
    for (i, w) in [op, slot_port, arg, num].iter().enumerate() {
        r[4 * i..4 * i + 4].copy_from_slice(&w.to_le_bytes());
    }
    r[16..16 + payload.len()].copy_from_slice(payload);
    r
}

/// Builds the sequence (deterministic).
#[must_use]
pub fn generate() -> Sequence {
    let mut rng = Rng(0x5EED_D0CA_0018_0002);
    let mut out = String::new();
    let mut records = Vec::new();
    // Declarations, in the order doca_pcc_dev_user_init makes them.
    for (algo, table) in [(0, &TIMELY_PARAMS[..]), (1, &HPCC_PARAMS[..])] {
        for p in table {
            let _ = writeln!(
                out,
                "param {algo} {} {} {} {} {}",
                p.id, p.name, p.default, p.min, p.max
            );
        }
        for (i, n) in COUNTER_NAMES.iter().enumerate() {
            let _ = writeln!(out, "counter {algo} {i} {n}");
        }
    }
    let Ok(hpcc_default) = HpccPccConfig::default_values() else {
        return Sequence {
            records,
            expected: out,
            missing: vec!["the HPCC table's defaults are refused".into()],
        };
    };
    let mut timely = [TimelyPccConfig::DEFAULT; PORTS];
    let mut hpcc = [hpcc_default; PORTS];
    let mut counters = [[Counters::default(); PORTS]; SLOTS];
    let mut used = [[false; PORTS]; SLOTS];
    let mut flows: Vec<Vec<Flow>> = (0..SLOTS)
        .map(|_| {
            (0..FLOWS)
                .map(|_| Flow {
                    probe: None,
                    ctx: [0; 12],
                })
                .collect()
        })
        .collect();
    let mut switches = [0u32, 1].map(|i| Switch {
        tx_bytes: u32::MAX - 20_000_000 * (i + 1),
        clock_offset: 0x9000_0000u32.wrapping_mul(i + 1),
        last_t: 0,
    });
    // The NIC clock starts 6 ms before it wraps.
    let mut t: u32 = u32::MAX - 6_000_000;
    let mut queue_ns = [0u32; SLOTS];
    let mut drift = [1i64; SLOTS];
    let (mut accepted, mut refused) = (0u32, 0u32);
    let mut wrapped_in_probe = [false; SLOTS];
    let mut rates: [std::collections::BTreeSet<u32>; SLOTS] = Default::default();

    let param_changes: [(u32, usize, u32, &[u32]); 7] = [
        (1_000, 0, 4, &[300_000]),    // T_HIGH 300 µs: accepted
        (1_500, 0, 3, &[600_000]),    // T_LOW above T_HIGH: refused
        (2_000, 0, 12, &[0, 0]),      // past the table: refused
        (2_500, 1, 2, &[900]),        // η 0.9: accepted
        (3_000, 1, 6, &[10]),         // speed code 10: refused
        (3_500, 0, 12, &[1]),         // KEEP_TURNAROUND: accepted
        (4_000, 1, 3, &[0, 200, 50]), // maxStage 0, W_AI 200, min 50 Mb/s: accepted
    ];

    let mut n: u32 = 0;
    for step in 0..STEPS {
        // Time advances 0.5–4 µs a step; now and then a pause of 3–20 ms.
        let dt = if rng.pct(2) {
            3_000_000 + rng.below(17_000_000)
        } else {
            500 + rng.below(3_500)
        };
        t = t.wrapping_add(dt);
        for s in 0..SLOTS {
            // The queue grows and drains in turns: 0–400 µs of delay on TIMELY's path (around
            // T_low and T_high), 0–100 µs (1.25 MB at 100 Gb/s) on HPCC's.
            if rng.pct(3) {
                drift[s] = -drift[s];
            }
            let (step_ns, max_ns) = if s == 0 {
                (400, 400_000)
            } else {
                (100, 100_000)
            };
            let q = i64::from(queue_ns[s]) + drift[s] * i64::from(rng.below(step_ns));
            queue_ns[s] = u32::try_from(q.clamp(0, max_ns)).unwrap_or(0);
        }
        for &(at, slot, base, values) in &param_changes {
            if at != step {
                continue;
            }
            let num = u32::try_from(values.len()).unwrap_or(0);
            let payload: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
            records.push(record(2, slot, 0, base, num, &payload));
            let ok = if slot == 0 {
                timely[0].set_params(base, values).is_ok()
            } else {
                hpcc[0].set_params(base, values).is_ok()
            };
            if ok {
                accepted += 1;
            } else {
                refused += 1;
            }
            let _ = writeln!(out, "set {n} {slot} {base} {num} {}", u32::from(!ok));
            n += 1;
        }
        // Responses that are due, in flow order; then one event of a random flow.
        let mut events: Vec<(usize, usize, Event)> = Vec::new();
        for (s, slot_flows) in flows.iter_mut().enumerate() {
            for (f, flow) in slot_flows.iter_mut().enumerate() {
                let Some(p) = flow.probe else { continue };
                if t.wrapping_sub(p.due) >= 1 << 31 {
                    continue; // not due yet
                }
                flow.probe = None;
                if p.lost {
                    continue;
                }
                let req_recv = rng.next();
                let turnaround = if p.invalid {
                    t.wrapping_sub(p.req_send).wrapping_add(1_000)
                } else {
                    p.turnaround
                };
                let mut spec = [p.req_send, req_recv, req_recv.wrapping_add(turnaround), 0];
                if s == 1 {
                    // One hop of switch telemetry in the 12 bytes after the request send time.
                    let idx = usize::from(rng.pct(10));
                    let sw = &mut switches[idx];
                    let elapsed = t.wrapping_sub(sw.last_t).min(50_000_000);
                    sw.last_t = t;
                    // 100 Gb/s = 12.5 B/ns, at 60–100 % utilisation.
                    let util = 600 + rng.below(400);
                    let sent = u64::from(elapsed) * 25 / 2 * u64::from(util) / 1000;
                    sw.tx_bytes = sw
                        .tx_bytes
                        .wrapping_add(u32::try_from(sent).unwrap_or(u32::MAX));
                    let cells = (u64::from(queue_ns[1]) * 25 / 2 / 256).min(65_535);
                    let mut tel = [0u8; 12];
                    tel[0..2].copy_from_slice(&u16::try_from(cells).unwrap_or(0).to_be_bytes());
                    tel[2] = u8::try_from(idx).unwrap_or(0);
                    tel[3] = 0x04;
                    tel[4..8].copy_from_slice(&sw.tx_bytes.to_be_bytes());
                    tel[8..12].copy_from_slice(&t.wrapping_add(sw.clock_offset).to_be_bytes());
                    spec[1] = u32::from_be_bytes([tel[0], tel[1], tel[2], tel[3]]);
                    spec[2] = u32::from_be_bytes([tel[4], tel[5], tel[6], tel[7]]);
                    spec[3] = u32::from_be_bytes([tel[8], tel[9], tel[10], tel[11]]);
                }
                if p.req_send > t {
                    wrapped_in_probe[s] = true;
                }
                events.push((s, f, ev(6, 0, t, spec)));
            }
        }
        let s = usize::from(rng.pct(500));
        let f = usize::try_from(rng.below(u32::try_from(FLOWS).unwrap_or(1))).unwrap_or(0);
        let kind = rng.below(1000);
        let e = match kind {
            0..=599 => {
                let pk = 1 + rng.below(16);
                ev(
                    3,
                    0,
                    t,
                    [t.wrapping_sub(dt / 2), (pk * 32) << 16 | pk, 77, 0],
                )
            }
            600..=799 => ev(4, 0, t, [t, step, 1 + rng.below(8), 0]),
            800..=849 => ev(
                5,
                1 + u8::try_from(rng.below(3)).unwrap_or(0),
                t,
                [t, step, 1, 0],
            ),
            850..=899 => ev(2, 0, t, [t, step, 1 + rng.below(4), 0]),
            900..=909 => ev(
                [0, 1, 7, 255][usize::try_from(rng.below(4)).unwrap_or(0)],
                0,
                t,
                [0; 4],
            ),
            // An unsolicited response (no probe of this request time).
            910..=914 => ev(6, 0, t, [t.wrapping_sub(rng.below(1 << 30)), 0, 0, 0]),
            _ => {
                let pk = 1 + rng.below(4);
                ev(3, 0, t, [t, (pk * 30) << 16 | pk, 77, 0])
            }
        };
        events.push((s, f, e));
        for (s, f, mut e) in events {
            // The last flow of each slot lives on port 1 (its own configuration).
            let port = usize::from(f == FLOWS - 1);
            e.port = u8::try_from(port).unwrap_or(0);
            let bytes = e.encode();
            records.push(record(1, s, port, u32::try_from(f).unwrap_or(0), 0, &bytes));
            let k = &mut counters[s][port];
            let fl = &mut flows[s][f];
            let r = if s == 0 {
                timely_on_event(&timely[port], &mut fl.ctx, &e, k)
            } else {
                let mut tel = [0u8; 12];
                tel.copy_from_slice(&bytes[32..44]);
                hpcc_on_event(&hpcc[port], &mut fl.ctx, &e, &tel, k)
            };
            used[s][port] = true;
            rates[s].insert(r.rate_q20);
            if r.rtt_req {
                // The probe leaves 0–2 µs after the request; 3 % are lost, 3 % answered after
                // the timeout, 2 % come back with a turnaround longer than the RTT.
                let req_send = t.wrapping_add(rng.below(2_000));
                let turnaround = 500 + rng.below(4_500);
                let late = rng.pct(30);
                let net = 20_000 + queue_ns[s] + if late { 400_000 } else { 0 };
                fl.probe = Some(Probe {
                    req_send,
                    due: req_send.wrapping_add(net).wrapping_add(turnaround),
                    lost: rng.pct(30),
                    turnaround,
                    invalid: rng.pct(20),
                });
            }
            let _ = writeln!(
                out,
                "ev {n} {s} {f} {} {}",
                r.rate_q20,
                u32::from(r.rtt_req)
            );
            n += 1;
        }
    }
    for (s, per_port) in counters.iter().enumerate() {
        for (p, k) in per_port.iter().enumerate() {
            if !used[s][p] {
                continue;
            }
            let _ = write!(out, "counters {s} {p}");
            for v in k.0 {
                let _ = write!(out, " {v}");
            }
            out.push('\n');
        }
    }
    out.push_str("params");
    for v in timely[0].values().iter().chain(hpcc[0].values()) {
        let _ = write!(out, " {v}");
    }
    out.push('\n');
    let _ = writeln!(out, "records {n}");

    // What a meaningful comparison needs.
    let mut missing = Vec::new();
    let sum = |c: Counter, s: usize| counters[s].iter().map(|k| k.get(c)).sum::<u32>();
    for s in 0..SLOTS {
        for c in [
            Counter::EvCnp,
            Counter::EvTx,
            Counter::EvAck,
            Counter::EvNack,
            Counter::EvRtt,
            Counter::EvUnknown,
            Counter::ProbesTimedOut,
            Counter::ProbesLate,
            Counter::NewFlows,
        ] {
            if sum(c, s) == 0 {
                missing.push(format!("slot {s}: no {}", COUNTER_NAMES[c as usize]));
            }
        }
        if sum(Counter::ProbesAnswered, s) < 200 {
            missing.push(format!("slot {s}: fewer than 200 probes answered"));
        }
        if rates[s].len() < 50 {
            missing.push(format!("slot {s}: fewer than 50 distinct rates"));
        }
        if !wrapped_in_probe[s] {
            missing.push(format!("slot {s}: the clock never wrapped inside a probe"));
        }
    }
    if sum(Counter::RttInvalid, 0) == 0 {
        missing.push("TIMELY: no response with a turnaround longer than the RTT".into());
    }
    if sum(Counter::TelemetryGap, 1) == 0 {
        missing.push("HPCC: no telemetry gap".into());
    }
    if !used[0][1] || !used[1][1] {
        missing.push("port 1 unused".into());
    }
    if accepted < 2 || refused < 2 {
        missing.push("fewer than two accepted and two refused parameter changes".into());
    }
    debug_assert_eq!(COUNTER_NUM, 20);
    Sequence {
        records,
        expected: out,
        missing,
    }
}

fn ev(type_code: u8, subtype: u8, ts_ns: u32, spec: [u32; 4]) -> Event {
    Event {
        type_code,
        subtype,
        port: 0,
        flags: 0,
        flow_tag: 0x00C0_FFEE,
        sn: 0,
        ts_ns,
        spec,
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let seq = generate();
    if !seq.missing.is_empty() {
        eprintln!(
            "doca_pcc_events: the sequence would not be a meaningful comparison: {}",
            seq.missing.join("; ")
        );
        return ExitCode::from(1);
    }
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["events", path] => {
            let bytes: Vec<u8> = seq.records.iter().flatten().copied().collect();
            // Written whole: a temporary file renamed over the target.
            let tmp = format!("{path}.tmp");
            if let Err(e) = std::fs::write(&tmp, &bytes).and_then(|()| std::fs::rename(&tmp, path))
            {
                eprintln!("doca_pcc_events: {path}: {e}");
                return ExitCode::from(2);
            }
            ExitCode::SUCCESS
        }
        ["expected"] => {
            if let Err(e) = std::io::stdout().write_all(seq.expected.as_bytes()) {
                eprintln!("doca_pcc_events: standard output: {e}");
                return ExitCode::from(2);
            }
            ExitCode::SUCCESS
        }
        _ => {
            eprintln!("usage: doca_pcc_events events FILE | expected");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_event_sequence_exercises_every_event_type_probe_outcome_and_parameter_change() {
        let s = generate();
        assert!(s.missing.is_empty(), "{:?}", s.missing);
        assert!(s.records.len() > 5_000);
    }

    #[test]
    fn the_event_sequence_is_deterministic() {
        let (a, b) = (generate(), generate());
        assert_eq!(a.records, b.records);
        assert_eq!(a.expected, b.expected);
    }
}
