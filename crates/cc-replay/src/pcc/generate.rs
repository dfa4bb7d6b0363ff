//! Deterministic generators of the DOCA PCC fixtures (`fixtures/pcc/`, described in its
//! README): scripted event streams as the platform delivers them to one algorithm.
//!
//! Each flow sends coalesced TX bursts paced by the f64 reference's rate (the reference runs
//! the same events in the same order as the replay, so its probe requests are the ones the
//! stream answers); a fluid queue per flow, drained at a share of line rate, sets the network
//! RTT of each probe; the responder's clock has its own offset and a turnaround; ACKs arrive
//! one RTT after every second burst. Knobs add lost probes, late answers, coalesced
//! ACK/NACK/CNP and undocumented events, parameter changes mid-flow, a start just before
//! the 32-bit clock wraps, and for HPCC the port's telemetry (cross traffic sharing the port,
//! the byte counter and switch clock starting anywhere, an idle pause). Seeded `rand_pcg::Pcg64Mcg`, no clock, no environment.

use super::params::{self, Setup};
use super::reference::{RefHpccFlow, RefHpccStep, RefTelemetry, RefTimelyFlow, RefTimelyStep};
use crate::kinds::FixtureFile;
use cc_trace::Param;
use rand_core::Rng;
use rand_pcg::Pcg64Mcg;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// One generated stream's knobs.
#[derive(Debug, Clone)]
pub struct Knobs {
    /// File name.
    pub name: &'static str,
    /// Comment lines.
    pub about: &'static [&'static str],
    /// Seed.
    pub seed: u64,
    /// Rows to write (events, not counting `param` rows).
    pub events: usize,
    /// The platform clock at the first event, ns.
    pub t0: u32,
    /// Flows, interleaved.
    pub flows: usize,
    /// Network RTT with an empty queue, ns.
    pub base_rtt_ns: u64,
    /// Uniform jitter added to each network RTT, ns.
    pub jitter_ns: u64,
    /// The share of line rate the flow's queue drains at.
    pub capacity: f64,
    /// The responder's turnaround, ns (uniform in the range).
    pub turnaround_ns: (u64, u64),
    /// Probability that a probe or its answer is lost.
    pub lose: f64,
    /// Probability that an answer comes after the probe timeout (plus 10–200 µs).
    pub late: f64,
    /// HPCC: probability that an answer is delivered twice (the copy 1–5 µs later).
    pub duplicate: f64,
    /// Variable coalescing (1–64 packets per TX, ACKs of 1–32) plus NACK, CNP and undocumented
    /// events.
    pub coalesce: bool,
    /// `# set` lines.
    pub set: &'static [(&'static str, &'static str)],
    /// `param` rows: before event number `at`, parameter `id` becomes `value`.
    pub changes: &'static [(usize, u32, u32)],
    /// HPCC: probe responses carry the switch's telemetry record.
    pub hpcc: bool,
    /// The switch port's transmitted-bytes counter at the start.
    pub port_tx0: u32,
    /// The switch's clock at the start, ns.
    pub switch_t0: u32,
    /// After burst number `.0` of each flow, the flow is idle for `.1` ns.
    pub pause: Option<(u64, u64)>,
    /// The port's byte counter advances in multiples of this many bytes (32: exactly the
    /// adapter's unit; 1: byte-granular, where the adapter's 32-byte truncation shows).
    pub tx_granule: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Pending {
    Ack {
        flow: usize,
        n: u32,
    },
    Resp {
        flow: usize,
        send: u64,
        recv: u32,
        resp: u32,
        tel: [u8; 12],
    },
    Nack {
        flow: usize,
        subtype: u8,
    },
    Cnp {
        flow: usize,
    },
    Unknown {
        flow: usize,
    },
}

/// A flow's reference, by algorithm: what paces the stream and asks for its probes.
enum GenRef {
    Timely(RefTimelyFlow),
    Hpcc(RefHpccFlow),
}

impl GenRef {
    fn new(setup: &Setup) -> Self {
        match setup {
            Setup::Timely(b) => GenRef::Timely(RefTimelyFlow::new(&b.reference)),
            Setup::Hpcc(b) => GenRef::Hpcc(RefHpccFlow::new(&b.reference)),
        }
    }

    /// A TX event (`departed`: it carries `RTT_REQ_SENT`): whether a probe is requested.
    fn on_tx(&mut self, setup: &Setup, ts: u32, departed: bool) -> bool {
        match (self, setup) {
            (GenRef::Timely(f), Setup::Timely(b)) => {
                matches!(
                    f.on_tx(&b.reference, ts),
                    RefTimelyStep::Tx { probe: true, .. }
                )
            }
            (GenRef::Hpcc(f), Setup::Hpcc(b)) => {
                matches!(
                    f.on_tx(&b.reference, ts, departed),
                    RefHpccStep::Tx { probe: true, .. }
                )
            }
            _ => false,
        }
    }

    fn on_response(
        &mut self,
        setup: &Setup,
        ts: u32,
        send: u32,
        recv: u32,
        resp: u32,
        tel: &[u8; 12],
    ) {
        match (self, setup) {
            (GenRef::Timely(f), Setup::Timely(b)) => {
                f.on_response(&b.reference, ts, send, recv, resp);
            }
            (GenRef::Hpcc(f), Setup::Hpcc(b)) => {
                f.on_response(&b.reference, ts, &RefTelemetry::decode(tel));
            }
            _ => {}
        }
    }

    fn rate_fraction(&self, setup: &Setup) -> f64 {
        match (self, setup) {
            (GenRef::Timely(f), Setup::Timely(b)) => f.rate_fraction(&b.reference),
            (GenRef::Hpcc(f), Setup::Hpcc(b)) => f.rate_fraction(&b.reference),
            _ => 1.0,
        }
    }
}

/// Line rate, b/s, and probe timeout, ns, of a setup.
fn line_and_timeout(setup: &Setup) -> (f64, u64) {
    match setup {
        Setup::Timely(b) => (
            b.reference.timely.max_rate_bps,
            b.reference.probe_timeout_ns,
        ),
        Setup::Hpcc(b) => (b.reference.hpcc.nic_rate_bps, b.reference.probe_timeout_ns),
    }
}

struct Flow {
    reference: GenRef,
    /// The switch port's transmitted-bytes counter (wraps modulo 2^32).
    port_tx: u32,
    next_tx: u64,
    last_tx: u64,
    queue_bytes: f64,
    bursts: u64,
    /// HPCC: a probe was requested and leaves with the flow's next TX burst (which carries
    /// `RTT_REQ_SENT`).
    probe_waiting: bool,
}

fn uniform(rng: &mut Pcg64Mcg) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

fn range(rng: &mut Pcg64Mcg, lo: u64, hi: u64) -> u64 {
    lo + rng.next_u64() % (hi - lo + 1)
}

fn clock(t0: u32, t: u64) -> u32 {
    (u64::from(t0) + t) as u32
}

/// Generates one stream.
pub fn stream(k: &Knobs) -> FixtureFile {
    let src = PathBuf::from(k.name);
    let given: Vec<Param> = k
        .set
        .iter()
        .map(|(key, v)| Param {
            key: (*key).into(),
            value: (*v).into(),
            source: src.clone(),
            line: None,
        })
        .collect();
    let mut both: Setup = params::build(Path::new(k.name), &given).expect("fixture parameters");
    let mut rng = Pcg64Mcg::new(u128::from(k.seed));
    let mut text = String::new();
    let _ = writeln!(
        text,
        "# {}: generated by `sim-host fixtures --only pcc` (crates/cc-replay/src/pcc/generate.rs)",
        k.name
    );
    for a in k.about {
        let _ = writeln!(text, "# {a}");
    }
    for (key, v) in k.set {
        let _ = writeln!(text, "# set {key}={v}");
    }
    text.push_str(super::HEADER);
    text.push('\n');
    let responder_offset = rng.next_u64() as u32;
    let mut flows: Vec<Flow> = (0..k.flows)
        .map(|i| Flow {
            reference: GenRef::new(&both),
            port_tx: k.port_tx0,
            next_tx: 1_000 + 7_919 * i as u64,
            last_tx: 0,
            queue_bytes: 0.0,
            bursts: 0,
            probe_waiting: false,
        })
        .collect();
    let mut heap: BinaryHeap<Reverse<(u64, u64, Pending)>> = BinaryHeap::new();
    let mut seq = 0u64;
    let mut rows = 0usize;
    let mut last_t = 0u64;
    let mut changes = k.changes.iter().peekable();
    let tag = |f: usize| 1_000 + f as u32;
    while rows < k.events {
        while let Some(&&(at, id, value)) = changes.peek()
            && at <= rows
        {
            both.set(id, value).expect("fixture parameter change");
            let _ = writeln!(text, "param,,,0,{},{id},{value},,", clock(k.t0, last_t));
            changes.next();
        }
        let (line_bps, timeout_ns) = line_and_timeout(&both);
        let (fi, tx_at) = flows
            .iter()
            .enumerate()
            .map(|(i, f)| (i, f.next_tx))
            .min_by_key(|&(i, t)| (t, i))
            .expect("a flow");
        if let Some(Reverse((t, _, p))) = heap.peek().copied()
            && t <= tx_at
        {
            heap.pop();
            last_t = t;
            let ts = clock(k.t0, t);
            match p {
                Pending::Ack { flow, n } => {
                    let _ = writeln!(text, "ack,,,{},{ts},{ts},{},{n},", tag(flow), rows);
                }
                Pending::Nack { flow, subtype } => {
                    let _ = writeln!(text, "nack,{subtype},,{},{ts},{ts},{},1,", tag(flow), rows);
                }
                Pending::Cnp { flow } => {
                    let _ = writeln!(text, "cnp,,,{},{ts},{ts},0,1,", tag(flow));
                }
                Pending::Unknown { flow } => {
                    let _ = writeln!(text, "9,,,{},{ts},,,,", tag(flow));
                }
                Pending::Resp {
                    flow,
                    send,
                    recv,
                    resp,
                    tel,
                } => {
                    let send = clock(k.t0, send);
                    flows[flow]
                        .reference
                        .on_response(&both, ts, send, recv, resp, &tel);
                    if k.hpcc {
                        // The telemetry is the response's raw data: no timestamps.
                        let hex: String = tel.iter().map(|b| format!("{b:02x}")).collect();
                        let _ = writeln!(text, "rtt,,,{},{ts},,,,{hex}", tag(flow));
                    } else {
                        let _ = writeln!(text, "rtt,,,{},{ts},{send},{recv},{resp},", tag(flow));
                    }
                }
            }
            rows += 1;
            continue;
        }
        // A TX burst of flow `fi` at `tx_at`.
        let f = &mut flows[fi];
        let packets = if k.coalesce {
            range(&mut rng, 1, 64)
        } else {
            16
        };
        let bytes = packets * 1_024;
        let dt = (tx_at - f.last_tx) as f64;
        // The port drains at line rate; cross traffic takes (1 − capacity) of it.
        let arrivals = bytes as f64 + (1.0 - k.capacity) * line_bps * dt / 8e9;
        let drained = (f.queue_bytes + arrivals).min(line_bps * dt / 8e9);
        let granule = f64::from(k.tx_granule.max(1));
        f.port_tx = f
            .port_tx
            .wrapping_add(((drained / granule).round() as u32) * k.tx_granule.max(1));
        f.queue_bytes = (f.queue_bytes + bytes as f64 - k.capacity * line_bps * dt / 8e9).max(0.0);
        f.last_tx = tx_at;
        last_t = tx_at;
        let ts = clock(k.t0, tx_at);
        // HPCC: a requested probe leaves with this burst (RTT_REQ_SENT); TIMELY's leaves 100–400
        // ns after the TX event that requested it (its timestamps say when).
        let departs = k.hpcc && std::mem::take(&mut f.probe_waiting);
        let probe = f.reference.on_tx(&both, ts, departs);
        let flags = if departs {
            cc_pcc::tx_flag::RTT_REQ_SENT.to_string()
        } else {
            String::new()
        };
        let _ = writeln!(
            text,
            "tx,,{flags},{},{ts},{ts},{},{packets},",
            tag(fi),
            bytes / 32
        );
        rows += 1;
        let net = k.base_rtt_ns as f64
            + f.queue_bytes * 8e9 / line_bps
            + uniform(&mut rng) * k.jitter_ns as f64;
        let net = net.round() as u64;
        let leaves = if k.hpcc {
            f.probe_waiting = probe;
            departs
        } else {
            probe
        };
        if leaves && uniform(&mut rng) >= k.lose {
            let send = if k.hpcc {
                tx_at
            } else {
                tx_at + range(&mut rng, 100, 400)
            };
            let turn = range(&mut rng, k.turnaround_ns.0, k.turnaround_ns.1);
            let recv = clock(responder_offset, send + net / 2);
            let resp = recv.wrapping_add(turn as u32);
            let mut arrive = send + net + turn;
            if uniform(&mut rng) < k.late {
                arrive += timeout_ns + range(&mut rng, 10_000, 200_000);
            }
            // The switch's telemetry as the probe passes: queue in 256-byte cells, switch
            // index, transmitted bytes, transmit time on the switch's clock.
            let tel = cc_pcc::Telemetry {
                qlen_256b_cells: ((f.queue_bytes / 256.0).round() as u64).min(0xffff) as u16,
                index: 3,
                flags: 0,
                tx_bytes: f.port_tx,
                tx_ts_ns: clock(k.switch_t0, send + net / 2),
            }
            .encode();
            let resp = Pending::Resp {
                flow: fi,
                send,
                recv,
                resp,
                tel,
            };
            seq += 1;
            heap.push(Reverse((arrive, seq, resp)));
            if k.hpcc && uniform(&mut rng) < k.duplicate {
                seq += 1;
                heap.push(Reverse((arrive + range(&mut rng, 1_000, 5_000), seq, resp)));
            }
        }
        f.bursts += 1;
        let ser = (bytes as f64 * 8e9 / line_bps) as u64;
        if f.bursts.is_multiple_of(2) {
            let n = if k.coalesce {
                range(&mut rng, 1, 32) as u32
            } else {
                2
            };
            seq += 1;
            heap.push(Reverse((
                tx_at + net + ser,
                seq,
                Pending::Ack { flow: fi, n },
            )));
        }
        if k.coalesce {
            let extra = match rng.next_u64() % 40 {
                0 => Some(Pending::Nack {
                    flow: fi,
                    subtype: (rng.next_u64() % 3) as u8,
                }),
                1 => Some(Pending::Cnp { flow: fi }),
                2 => Some(Pending::Unknown { flow: fi }),
                _ => None,
            };
            if let Some(p) = extra {
                seq += 1;
                heap.push(Reverse((tx_at + net + ser + 50, seq, p)));
            }
        }
        let rate_bps = f.reference.rate_fraction(&both) * line_bps;
        f.next_tx = tx_at + (bytes as f64 * 8e9 / rate_bps).ceil() as u64;
        if let Some((at, idle_ns)) = k.pause
            && f.bursts == at
        {
            f.next_tx += idle_ns;
        }
    }
    FixtureFile {
        name: k.name.to_string(),
        bytes: text.into_bytes(),
    }
}

/// The shipped streams.
pub const STREAMS: [Knobs; 7] = [
    Knobs {
        name: "timely_steady.csv",
        about: &[
            "One TIMELY flow at 10 Gb/s: 16 KiB TX bursts (16 packets), a probe whenever none \
             is outstanding, a queue drained at 90 % of line rate (base RTT 12 µs), turnaround 1–3 µs.",
        ],
        seed: 0x5EAD1,
        events: 20_000,
        t0: 1_000_000,
        flows: 1,
        base_rtt_ns: 45_000,
        jitter_ns: 2_000,
        capacity: 0.9,
        turnaround_ns: (1_000, 3_000),
        lose: 0.0,
        late: 0.0,
        duplicate: 0.0,
        coalesce: false,
        set: &[("algorithm", "timely")],
        changes: &[],
        hpcc: false,
        port_tx0: 0,
        switch_t0: 0,
        pause: None,
        tx_granule: 32,
    },
    Knobs {
        name: "timely_clock_wrap.csv",
        about: &[
            "As timely_steady.csv (queue drained at 85 %, base RTT 20 µs), starting 20 ms before the 32-bit clock wraps (and the \
             responder's clock wrapping at its own offset): probes whose request and answer lie \
             on either side of the wrap.",
        ],
        seed: 0x3A9,
        events: 6_000,
        t0: u32::MAX - 20_010_000,
        flows: 1,
        base_rtt_ns: 20_000,
        jitter_ns: 4_000,
        capacity: 0.85,
        turnaround_ns: (500, 5_000),
        lose: 0.0,
        late: 0.0,
        duplicate: 0.0,
        coalesce: false,
        set: &[("algorithm", "timely")],
        changes: &[],
        hpcc: false,
        port_tx0: 0,
        switch_t0: 0,
        pause: None,
        tx_granule: 32,
    },
    Knobs {
        name: "timely_lost_late.csv",
        about: &[
            "Two flows at 25 Gb/s (queues drained at 80 %); 10 % of probes lost (timed out after 300 µs and re-requested), \
             8 % answered after the timeout (late answers to given-up probes).",
        ],
        seed: 0x1057,
        events: 20_000,
        t0: 3_000_000_000,
        flows: 2,
        base_rtt_ns: 15_000,
        jitter_ns: 3_000,
        capacity: 0.8,
        turnaround_ns: (1_000, 2_000),
        lose: 0.10,
        late: 0.08,
        duplicate: 0.0,
        coalesce: false,
        set: &[
            ("algorithm", "timely"),
            ("line_rate_mbps", "25000"),
            ("min_rate_mbps", "100"),
        ],
        changes: &[],
        hpcc: false,
        port_tx0: 0,
        switch_t0: 0,
        pause: None,
        tx_granule: 32,
    },
    Knobs {
        name: "timely_coalesced.csv",
        about: &[
            "Three interleaved flows at 100 Gb/s (queues drained at 70 %): TX events coalescing 1–64 packets, ACKs \
             coalescing 1–32, NACKs (subtypes 0–2), CNPs and an undocumented type 9 (counted, \
             rate unchanged).",
        ],
        seed: 0xC0A1,
        events: 20_000,
        t0: 123_456_789,
        flows: 3,
        base_rtt_ns: 8_000,
        jitter_ns: 1_000,
        capacity: 0.7,
        turnaround_ns: (300, 1_500),
        lose: 0.02,
        late: 0.0,
        duplicate: 0.0,
        coalesce: true,
        set: &[
            ("algorithm", "timely"),
            ("line_rate_mbps", "100000"),
            ("min_rate_mbps", "100"),
            ("delta_mbps", "100"),
            ("t_low_ns", "20000"),
            ("t_high_ns", "200000"),
            ("min_rtt_ns", "8000"),
        ],
        changes: &[],
        hpcc: false,
        port_tx0: 0,
        switch_t0: 0,
        pause: None,
        tx_granule: 32,
    },
    Knobs {
        name: "timely_param_change.csv",
        about: &[
            "One flow at 10 Gb/s whose parameters change mid-flow (the platform's \
             set_algo_params as `param` rows): beta 0.8 → 0.5 at event 5000, T_low 50 → 30 µs \
             at 10000, the probe timeout 300 → 100 µs at 12000, the turnaround kept from 15000.",
        ],
        seed: 0x9A7A,
        events: 20_000,
        t0: 42,
        flows: 1,
        base_rtt_ns: 45_000,
        jitter_ns: 2_000,
        capacity: 0.9,
        turnaround_ns: (1_000, 6_000),
        lose: 0.03,
        late: 0.02,
        duplicate: 0.0,
        coalesce: false,
        set: &[("algorithm", "timely")],
        changes: &[
            (5_000, 7, 500),
            (10_000, 3, 30_000),
            (12_000, 11, 100_000),
            (15_000, 12, 1),
        ],
        hpcc: false,
        port_tx0: 0,
        switch_t0: 0,
        pause: None,
        tx_granule: 32,
    },
    Knobs {
        name: "hpcc_telemetry.csv",
        about: &[
            "One HPCC flow at 100 Gb/s on a 100G switch port (speed code 5) shared with cross \
             traffic taking 10 % of it; every answered probe carries the port's telemetry. The \
             port's byte counter starts 4 MB below 2^32 (it wraps once, and its 32-byte units \
             modulo 2^20 every 2.7 ms), the switch clock 3 ms below 2^32.",
        ],
        seed: 0x4CC1,
        events: 20_000,
        t0: 77_000,
        flows: 1,
        base_rtt_ns: 8_000,
        jitter_ns: 500,
        capacity: 0.9,
        turnaround_ns: (300, 1_000),
        lose: 0.0,
        late: 0.0,
        duplicate: 0.0,
        coalesce: false,
        set: &[("algorithm", "hpcc")],
        changes: &[],
        hpcc: true,
        port_tx0: u32::MAX - 4_000_000,
        switch_t0: u32::MAX - 3_000_000,
        pause: None,
        tx_granule: 32,
    },
    Knobs {
        name: "hpcc_lost_gap_param.csv",
        about: &[
            "Two HPCC flows at 100 Gb/s, cross traffic taking 30 % of each port; 5 % of probes \
             lost, 5 % answered late, 3 % of answers delivered twice; each flow idles 3 ms after its 2000th burst (a gap longer \
             than the telemetry counters span: the hop restarts); η 0.95 → 0.9 at event 8000 \
             and W_AI 80 → 160 B at 12000 (`param` rows).",
        ],
        seed: 0x4CC2,
        events: 20_000,
        t0: 4_000_000_000,
        flows: 2,
        base_rtt_ns: 8_000,
        jitter_ns: 1_000,
        capacity: 0.7,
        turnaround_ns: (300, 1_000),
        lose: 0.05,
        late: 0.05,
        duplicate: 0.03,
        coalesce: false,
        set: &[("algorithm", "hpcc")],
        changes: &[(8_000, 2, 900), (12_000, 4, 160)],
        hpcc: true,
        port_tx0: 123_456_789,
        switch_t0: 987_654_321,
        pause: Some((2_000, 3_000_000)),
        tx_granule: 32,
    },
];

/// Every shipped fixture of the kind.
pub fn all() -> Vec<FixtureFile> {
    STREAMS.iter().map(stream).collect()
}
