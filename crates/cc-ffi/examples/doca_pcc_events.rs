//! The host side of `make -C examples/doca-pcc check`: writes a deterministic DOCA-shaped event
//! sequence for the C harness (`events FILE`, 64-byte records, format in
//! examples/doca-pcc/harness.c) and prints what the adapter answers on the host for it
//! (`expected`), line for line as the harness prints it under QEMU.
//!
//! The sequence follows the platform's contract (docs/pcc.md; examples/doca-pcc/README.md cites
//! the SDK): a TX event carries its first timestamp, packets and 32-byte units and the flow's
//! QPN; after the adapter asks for a probe (`rtt_req`), the probe leaves 0–2 µs later, which is a
//! TX event whose flags carry `RTT_REQ_SENT` (2 % of the requested probes never leave). The
//! answer comes back after the probe's RTT (20 µs + a queue that grows and drains + the
//! responder's turnaround): on the TIMELY slot it carries the three timestamps, on the HPCC slot
//! only one hop of switch telemetry as its 12 bytes of raw data (no timestamps). Some probes are
//! lost, some answered after the timeout, some answers delivered twice; stragglers arrive while
//! a requested probe has not left, a few responses nobody asked for, a few with a turnaround
//! longer than the RTT. The 32-bit clock wraps in the middle, the switch's byte counter too;
//! there are long pauses (telemetry gaps), path changes, coalesced TX/ACK/NACK/CNP events, NACKs
//! of each subtype, the types the adapter ignores (NULL 0, FW 1, ROCE_TX_FOR_ACK_NACK 31 and
//! undefined codes), reserved bits set, events on a port beyond the glue's configuration table,
//! events of slots the glue leaves to the platform's built-in algorithm, two ports and parameter
//! changes, accepted and refused. The expected side runs `cc_pcc` directly (not the C ABI), so
//! the comparison covers the C glue, its getters, the C ABI and the rv64 build at once. A
//! sequence that does not exercise all of this is refused (exit 1) rather than compared.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::io::Write as _;
use std::process::ExitCode;

use cc_pcc::{
    Ack, COUNTER_NAMES, COUNTER_NUM, Counter, Counters, Event, FlowContext, HPCC_PARAMS, HpccFlow,
    HpccPccConfig, PccResult, Rtt, TIMELY_PARAMS, Telemetry, TimelyFlow, TimelyPccConfig, Tx,
    hpcc_on_event, nack_subtype, timely_on_event, tx_flag, type_code,
};

/// The glue's algorithm slots (0 TIMELY, 1 HPCC).
const SLOTS: usize = 2;
/// Ports the sequence's flows live on (the last flow of each slot on port 1).
const PORTS: usize = 2;
/// `DOCA_PCC_DEV_MAX_NUM_PORTS` on BlueField-3: the glue's configuration tables.
const TABLE_PORTS: u8 = 4;
const FLOWS: usize = 5;
const STEPS: u32 = 6_000;
/// What harness.c's built-in algorithm answers (rate; no probe).
const BUILTIN_RATE: u32 = 4096;
/// The glue's counters (doca_pcc_glue.h): only `PCC_GLUE_PORT_BEYOND_TABLE` moves here.
const GLUE_COUNTER_NUM: usize = 4;
const GLUE_PORT_BEYOND_TABLE: usize = 3;

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
    /// True with probability `p`/1000.
    fn pct(&mut self, p: u32) -> bool {
        self.below(1000) < p
    }
    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        let n = u32::try_from(xs.len()).unwrap_or(1);
        xs[usize::try_from(self.below(n)).unwrap_or(0)]
    }
}

/// What is scheduled for a flow at a later time.
#[derive(Clone, Copy)]
enum Due {
    /// The requested probe leaves the NIC: a TX event carrying `RTT_REQ_SENT`.
    Departure,
    /// The answer to the probe that left at `depart`.
    Response {
        depart: u32,
        turnaround: u32,
        invalid: bool,
        duplicate: bool,
    },
    /// A second delivery of an answer already delivered (same raw data).
    Copy(Event),
    /// The answer to an earlier probe, given up, arriving while the one requested since has not
    /// left.
    Straggler,
}

struct Pending {
    due: u32,
    order: u64,
    slot: usize,
    flow: usize,
    what: Due,
}

struct Flow {
    ctx: FlowContext,
    port: u8,
    qpn: u32,
    sn: u32,
}

struct Switch {
    tx_bytes: u32,
    clock_offset: u32,
    last_t: u32,
}

fn record(op: u32, slot: usize, port: u8, arg: u32, num: u32, payload: &[u8]) -> [u8; 64] {
    let mut r = [0u8; 64];
    let slot_port = u32::try_from(slot).unwrap_or(0xFF) | u32::from(port) << 8;
    for (i, w) in [op, slot_port, arg, num].iter().enumerate() {
        r[4 * i..4 * i + 4].copy_from_slice(&w.to_le_bytes());
    }
    r[16..16 + payload.len()].copy_from_slice(payload);
    r
}

/// `a` is at or after `b` on the 32-bit wrapping clock.
fn not_before(a: u32, b: u32) -> bool {
    a.wrapping_sub(b) < 1 << 31
}

struct Gen {
    rng: Rng,
    out: String,
    records: Vec<[u8; 64]>,
    n: u32,
    timely: [TimelyPccConfig; PORTS],
    hpcc: [HpccPccConfig; PORTS],
    counters: [[Counters; PORTS]; SLOTS],
    used: [[bool; PORTS]; SLOTS],
    flows: Vec<Vec<Flow>>,
    switches: [Switch; 2],
    queue_ns: [u32; SLOTS],
    pending: Vec<Pending>,
    order: u64,
    glue: [u32; GLUE_COUNTER_NUM],
    builtin: u32,
    // What the sequence exercised, beyond the counters.
    rates: [BTreeSet<u32>; SLOTS],
    wrapped_in_probe: [bool; SLOTS],
    never_departed: [u32; SLOTS],
    beyond_table: [u32; SLOTS],
    ignored_codes: BTreeSet<u8>,
}

impl Gen {
    fn schedule(&mut self, due: u32, slot: usize, flow: usize, what: Due) {
        self.order += 1;
        self.pending.push(Pending {
            due,
            order: self.order,
            slot,
            flow,
            what,
        });
    }

    /// One hop of telemetry from switch `idx` (10 % of the answers take the other path) at `t`.
    fn telemetry(&mut self, t: u32) -> [u8; 12] {
        let idx = usize::from(self.rng.pct(100));
        let util = 600 + self.rng.below(400);
        let sw = &mut self.switches[idx];
        let elapsed = t.wrapping_sub(sw.last_t).min(50_000_000);
        sw.last_t = t;
        // 100 Gb/s = 12.5 B/ns, at 60–100 % utilisation.
        let sent = u64::from(elapsed) * 25 / 2 * u64::from(util) / 1000;
        sw.tx_bytes = sw
            .tx_bytes
            .wrapping_add(u32::try_from(sent).unwrap_or(u32::MAX));
        let cells = (u64::from(self.queue_ns[1]) * 25 / 2 / 256).min(65_535);
        Telemetry {
            qlen_256b_cells: u16::try_from(cells).unwrap_or(u16::MAX),
            index: u8::try_from(idx).unwrap_or(0),
            flags: 0x04,
            tx_bytes: sw.tx_bytes,
            tx_ts_ns: t.wrapping_add(sw.clock_offset),
        }
        .encode()
    }

    fn event(
        &mut self,
        slot: usize,
        flow: usize,
        type_code: u8,
        ts_ns: u32,
        spec: [u32; 3],
    ) -> Event {
        let f = &mut self.flows[slot.min(SLOTS - 1)][flow];
        f.sn = f.sn.wrapping_add(1);
        Event {
            type_code,
            subtype: 0,
            port: f.port,
            flags: 0,
            flow_tag: 0x00C0_FF00 | u32::try_from(slot << 4 | flow).unwrap_or(0),
            sn: f.sn,
            ts_ns,
            spec,
        }
    }

    fn tx(
        &mut self,
        slot: usize,
        flow: usize,
        t: u32,
        first: u32,
        packets: u16,
        flags: u8,
    ) -> Event {
        let qpn = self.flows[slot.min(SLOTS - 1)][flow].qpn;
        let mut spec = Event::tx_spec(&Tx {
            first_ts_ns: first,
            packets,
            sent_32b_units: packets.saturating_mul(32),
            qpn,
        });
        // Now and then the reserved byte above the QPN is set: no reader may take it.
        if self.rng.pct(100) {
            spec[2] |= self.rng.next() << 24;
        }
        let mut e = self.event(slot, flow, type_code::TX, t, spec);
        e.flags = flags;
        e
    }

    fn ack(&mut self, slot: usize, flow: usize, ty: u8, subtype: u8, t: u32) -> Event {
        let first_sn = self.flows[slot.min(SLOTS - 1)][flow].sn;
        let coalesced = u16::try_from(1 + self.rng.below(8)).unwrap_or(1);
        let mut spec = Event::ack_spec(&Ack {
            first_ts_ns: t.wrapping_sub(self.rng.below(4_000)),
            first_sn,
            coalesced,
        });
        if self.rng.pct(100) {
            spec[2] |= self.rng.next() << 16;
        }
        let mut e = self.event(slot, flow, ty, t, spec);
        e.subtype = subtype;
        e
    }

    /// A probe answer at `t`: the three timestamps on TIMELY's slot, one hop of telemetry as raw
    /// data on HPCC's.
    fn answer(
        &mut self,
        slot: usize,
        flow: usize,
        t: u32,
        req_send: u32,
        turnaround: u32,
    ) -> Event {
        let spec = if slot == 0 {
            let req_recv = self.rng.next();
            Event::rtt_spec(&Rtt {
                req_send_ts_ns: req_send,
                req_recv_ts_ns: req_recv,
                resp_send_ts_ns: req_recv.wrapping_add(turnaround),
            })
        } else {
            let tel = self.telemetry(t);
            Event::raw_data_spec(&tel)
        };
        self.event(slot, flow, type_code::RTT, t, spec)
    }

    /// Delivers one event of `flow` in algorithm slot `slot` to the glue: writes the record and
    /// the line the harness must print, and schedules what the answer asks for.
    fn deliver(&mut self, slot: usize, flow: usize, e: Event) {
        let bytes = e.encode();
        self.records.push(record(
            1,
            slot,
            e.port,
            u32::try_from(flow).unwrap_or(0),
            0,
            &bytes,
        ));
        let r = if slot >= SLOTS {
            // The glue leaves other slots to the platform's built-in algorithm.
            self.builtin += 1;
            PccResult {
                rate_q20: BUILTIN_RATE,
                rtt_req: false,
            }
        } else if e.port >= TABLE_PORTS {
            // No configuration for this port: the stored rate under port 0's, nothing changed.
            self.glue[GLUE_PORT_BEYOND_TABLE] += 1;
            self.beyond_table[slot] += 1;
            let ctx = &self.flows[slot][flow].ctx;
            let rate_q20 = if slot == 0 {
                let cfg = &self.timely[0];
                let fl = TimelyFlow::load(ctx).unwrap_or_else(|| TimelyFlow::new(cfg));
                cfg.rate_q20(fl.timely.rate_u128bps()).0
            } else {
                let cfg = &self.hpcc[0];
                let fl = HpccFlow::load(ctx).unwrap_or_else(|| HpccFlow::new(cfg));
                cfg.rate_q20(fl.hpcc.window_bytes()).0
            };
            PccResult {
                rate_q20,
                rtt_req: false,
            }
        } else {
            let port = usize::from(e.port);
            let k = &mut self.counters[slot][port];
            let fl = &mut self.flows[slot][flow];
            let r = if slot == 0 {
                timely_on_event(&self.timely[port], &mut fl.ctx, &e, k)
            } else {
                hpcc_on_event(&self.hpcc[port], &mut fl.ctx, &e, &e.rtt_raw_data(), k)
            };
            self.used[slot][port] = true;
            self.rates[slot].insert(r.rate_q20);
            r
        };
        let _ = writeln!(
            self.out,
            "ev {} {slot} {flow} {} {}",
            self.n,
            r.rate_q20,
            u32::from(r.rtt_req)
        );
        self.n += 1;
        if r.rtt_req {
            let t = e.ts_ns;
            if self.rng.pct(20) {
                // This probe never leaves; now and then an answer to an earlier one arrives
                // while it waits (before its timeout).
                self.never_departed[slot] += 1;
                if self.rng.pct(500) {
                    let at = t.wrapping_add(1 + self.rng.below(250_000));
                    self.schedule(at, slot, flow, Due::Straggler);
                }
            } else {
                let at = t.wrapping_add(self.rng.below(2_001));
                self.schedule(at, slot, flow, Due::Departure);
            }
        }
    }

    /// Handles one scheduled item at its time `due`.
    fn run_due(&mut self, p: &Pending) {
        let (s, f, t) = (p.slot, p.flow, p.due);
        match p.what {
            Due::Departure => {
                let flags = tx_flag::RTT_REQ_SENT | tx_flag::ACK_EXPECTED;
                let e = self.tx(s, f, t, t, 1, flags);
                self.deliver(s, f, e);
                // 3 % are lost, 3 % answered after the timeout, 2 % come back with a turnaround
                // longer than the RTT, 3 % are delivered twice.
                if self.rng.pct(30) {
                    return;
                }
                let turnaround = 500 + self.rng.below(4_500);
                let late = self.rng.pct(30);
                let net = 20_000 + self.queue_ns[s] + if late { 400_000 } else { 0 };
                let due = t.wrapping_add(net).wrapping_add(turnaround);
                let (invalid, duplicate) = (self.rng.pct(20), self.rng.pct(30));
                self.schedule(
                    due,
                    s,
                    f,
                    Due::Response {
                        depart: t,
                        turnaround,
                        invalid,
                        duplicate,
                    },
                );
            }
            Due::Response {
                depart,
                turnaround,
                invalid,
                duplicate,
            } => {
                let turnaround = if invalid {
                    t.wrapping_sub(depart).wrapping_add(1_000)
                } else {
                    turnaround
                };
                if depart > t {
                    self.wrapped_in_probe[s] = true;
                }
                let e = self.answer(s, f, t, depart, turnaround);
                self.deliver(s, f, e);
                if duplicate {
                    let at = t.wrapping_add(1 + self.rng.below(5_000));
                    self.schedule(at, s, f, Due::Copy(e));
                }
            }
            Due::Copy(mut e) => {
                e.ts_ns = t;
                self.deliver(s, f, e);
            }
            Due::Straggler => {
                // It left before the waiting probe was requested (at most 250 µs ago).
                let req_send = t.wrapping_sub(300_000 + self.rng.below(1_000_000));
                let e = self.answer(s, f, t, req_send, 2_000);
                self.deliver(s, f, e);
            }
        }
    }

    /// Runs every scheduled item due at or before `t`, oldest first (an item may schedule more).
    fn run_due_until(&mut self, t: u32) {
        loop {
            let next = self
                .pending
                .iter()
                .enumerate()
                .filter(|(_, p)| not_before(t, p.due))
                .max_by_key(|(_, p)| (t.wrapping_sub(p.due), std::cmp::Reverse(p.order)))
                .map(|(i, _)| i);
            let Some(i) = next else { break };
            let p = self.pending.swap_remove(i);
            self.run_due(&p);
        }
    }

    /// One event of a random kind for a random flow at `t` (`dt` since the last step).
    fn random_event(&mut self, t: u32, dt: u32) {
        let s = usize::from(self.rng.pct(500));
        let f = usize::try_from(self.rng.below(u32::try_from(FLOWS).unwrap_or(1))).unwrap_or(0);
        let kind = self.rng.below(1000);
        let e = match kind {
            0..=579 => {
                let pk = u16::try_from(1 + self.rng.below(16)).unwrap_or(1);
                let mut flags = 0;
                if self.rng.pct(500) {
                    flags |= tx_flag::ACK_EXPECTED;
                }
                if self.rng.pct(50) {
                    flags |= tx_flag::OVERLOADED;
                }
                // A departure flag with no probe waiting for it changes nothing.
                if self.rng.pct(10) {
                    flags |= tx_flag::RTT_REQ_SENT;
                }
                self.tx(s, f, t, t.wrapping_sub(dt / 2), pk, flags)
            }
            580..=779 => self.ack(s, f, type_code::ACK, 0, t),
            780..=829 => {
                let sub = self.rng.pick(&[
                    nack_subtype::RNR,
                    nack_subtype::OOS,
                    nack_subtype::DUP_READ,
                    nack_subtype::RNR,
                    nack_subtype::OOS,
                    nack_subtype::DUP_READ,
                    0,
                ]);
                self.ack(s, f, type_code::NACK, sub, t)
            }
            830..=879 => self.ack(s, f, type_code::CNP, 0, t),
            880..=894 => {
                // Types the adapter ignores, their union words whatever they are.
                let code = self.rng.pick(&[
                    type_code::NULL,
                    type_code::FW,
                    type_code::ROCE_TX_FOR_ACK_NACK,
                    7,
                    30,
                    32,
                    200,
                    255,
                ]);
                self.ignored_codes.insert(code);
                let spec = [self.rng.next(), self.rng.next(), self.rng.next()];
                self.event(s, f, code, t, spec)
            }
            // A response nobody asked for (no probe, or not this one).
            895..=899 => {
                let req_send = t.wrapping_sub(self.rng.below(1 << 30));
                self.answer(s, f, t, req_send, 1_000)
            }
            // An event whose port is beyond the glue's configuration table.
            900..=904 => {
                let mut e = if self.rng.pct(500) {
                    self.tx(s, f, t, t, 1, tx_flag::ACK_EXPECTED)
                } else {
                    self.answer(s, f, t, t.wrapping_sub(30_000), 1_000)
                };
                e.port = self.rng.pick(&[TABLE_PORTS, 5, 7, 200, 255]);
                e
            }
            // A slot the glue leaves to the built-in algorithm.
            905..=909 => {
                let slot = self.rng.pick(&[2usize, 3, 7, 15]);
                let e = self.tx(0, f, t, t, 1, 0);
                self.deliver(slot, f, e);
                return;
            }
            _ => {
                let pk = u16::try_from(1 + self.rng.below(4)).unwrap_or(1);
                self.tx(s, f, t, t, pk, 0)
            }
        };
        self.deliver(s, f, e);
    }
}

/// Builds the sequence (deterministic).
#[must_use]
pub fn generate() -> Sequence {
    let mut out = String::new();
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
            records: Vec::new(),
            expected: out,
            missing: vec!["the HPCC table's defaults are refused".into()],
        };
    };
    let mut rng = Rng(0x5EED_D0CA_0018_0003);
    let flows: Vec<Vec<Flow>> = (0..SLOTS)
        .map(|_| {
            (0..FLOWS)
                .map(|f| Flow {
                    ctx: [0; 12],
                    // The last flow of each slot lives on port 1 (its own configuration).
                    port: u8::from(f == FLOWS - 1),
                    qpn: rng.next() & 0xFF_FFFF,
                    sn: rng.next(),
                })
                .collect()
        })
        .collect();
    let mut g = Gen {
        rng,
        out,
        records: Vec::new(),
        n: 0,
        timely: [TimelyPccConfig::DEFAULT; PORTS],
        hpcc: [hpcc_default; PORTS],
        counters: [[Counters::default(); PORTS]; SLOTS],
        used: [[false; PORTS]; SLOTS],
        flows,
        switches: [0u32, 1].map(|i| Switch {
            tx_bytes: u32::MAX - 20_000_000 * (i + 1),
            clock_offset: 0x9000_0000u32.wrapping_mul(i + 1),
            last_t: 0,
        }),
        queue_ns: [0; SLOTS],
        pending: Vec::new(),
        order: 0,
        glue: [0; GLUE_COUNTER_NUM],
        builtin: 0,
        rates: Default::default(),
        wrapped_in_probe: [false; SLOTS],
        never_departed: [0; SLOTS],
        beyond_table: [0; SLOTS],
        ignored_codes: BTreeSet::new(),
    };
    // The NIC clock starts 6 ms before it wraps.
    let mut t: u32 = u32::MAX - 6_000_000;
    let mut drift = [1i64; SLOTS];
    let (mut accepted, mut refused) = (0u32, 0u32);

    let param_changes: [(u32, usize, u32, &[u32]); 7] = [
        (1_000, 0, 4, &[300_000]),    // T_HIGH 300 µs: accepted
        (1_500, 0, 3, &[600_000]),    // T_LOW above T_HIGH: refused
        (2_000, 0, 12, &[0, 0]),      // past the table: refused
        (2_500, 1, 2, &[900]),        // η 0.9: accepted
        (3_000, 1, 6, &[10]),         // speed code 10: refused
        (3_500, 0, 12, &[1]),         // KEEP_TURNAROUND: accepted
        (4_000, 1, 3, &[0, 200, 50]), // maxStage 0, W_AI 200, min 50 Mb/s: accepted
    ];

    for step in 0..STEPS {
        // Time advances 0.5–4 µs a step; now and then a pause of 3–20 ms, but not across the
        // clock's wrap (so that the wrap falls while probes are in flight).
        let pause = 3_000_000 + g.rng.below(17_000_000);
        let dt = if g.rng.pct(2) && t.checked_add(pause).is_some() {
            pause
        } else {
            500 + g.rng.below(3_500)
        };
        t = t.wrapping_add(dt);
        for (s, d) in drift.iter_mut().enumerate() {
            // The queue grows and drains in turns: 0–400 µs of delay on TIMELY's path (around
            // T_low and T_high), 0–100 µs (1.25 MB at 100 Gb/s) on HPCC's.
            if g.rng.pct(3) {
                *d = -*d;
            }
            let (step_ns, max_ns) = if s == 0 {
                (400, 400_000)
            } else {
                (100, 100_000)
            };
            let q = i64::from(g.queue_ns[s]) + *d * i64::from(g.rng.below(step_ns));
            g.queue_ns[s] = u32::try_from(q.clamp(0, max_ns)).unwrap_or(0);
        }
        for &(at, slot, base, values) in &param_changes {
            if at != step {
                continue;
            }
            let num = u32::try_from(values.len()).unwrap_or(0);
            let payload: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
            g.records.push(record(2, slot, 0, base, num, &payload));
            let ok = if slot == 0 {
                g.timely[0].set_params(base, values).is_ok()
            } else {
                g.hpcc[0].set_params(base, values).is_ok()
            };
            if ok {
                accepted += 1;
            } else {
                refused += 1;
            }
            let _ = writeln!(g.out, "set {} {slot} {base} {num} {}", g.n, u32::from(!ok));
            g.n += 1;
        }
        // Departures and answers that are due, oldest first; then one event of a random flow.
        g.run_due_until(t);
        g.random_event(t, dt);
    }
    let mut out = std::mem::take(&mut g.out);
    for (s, per_port) in g.counters.iter().enumerate() {
        for (p, k) in per_port.iter().enumerate() {
            if !g.used[s][p] {
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
    for v in g.timely[0].values().iter().chain(g.hpcc[0].values()) {
        let _ = write!(out, " {v}");
    }
    out.push('\n');
    out.push_str("glue");
    for v in g.glue {
        let _ = write!(out, " {v}");
    }
    out.push('\n');
    let _ = writeln!(out, "builtin {}", g.builtin);
    let _ = writeln!(out, "records {}", g.records.len());

    // What a meaningful comparison needs.
    let mut missing = Vec::new();
    let sum = |c: Counter, s: usize| g.counters[s].iter().map(|k| k.get(c)).sum::<u32>();
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
            Counter::ProbesUnsolicited,
            Counter::NackRnr,
            Counter::NackOos,
            Counter::NackDupRead,
            Counter::NewFlows,
        ] {
            if sum(c, s) == 0 {
                missing.push(format!("slot {s}: no {}", COUNTER_NAMES[c as usize]));
            }
        }
        if sum(Counter::ProbesAnswered, s) < 200 {
            missing.push(format!("slot {s}: fewer than 200 probes answered"));
        }
        if g.rates[s].len() < 50 {
            missing.push(format!("slot {s}: fewer than 50 distinct rates"));
        }
        if !g.wrapped_in_probe[s] {
            missing.push(format!("slot {s}: the clock never wrapped inside a probe"));
        }
        if g.never_departed[s] == 0 {
            missing.push(format!("slot {s}: every requested probe left"));
        }
        if g.beyond_table[s] == 0 {
            missing.push(format!("slot {s}: no event on a port beyond the table"));
        }
    }
    for c in [
        Counter::ProbesDeparted,
        Counter::ProbesDuplicate,
        Counter::TelemetryGap,
    ] {
        if sum(c, 1) == 0 {
            missing.push(format!("HPCC: no {}", COUNTER_NAMES[c as usize]));
        }
    }
    if sum(Counter::RttInvalid, 0) == 0 {
        missing.push("TIMELY: no response with a turnaround longer than the RTT".into());
    }
    for code in [
        type_code::NULL,
        type_code::FW,
        type_code::ROCE_TX_FOR_ACK_NACK,
    ] {
        if !g.ignored_codes.contains(&code) {
            missing.push(format!("no event of type {code}"));
        }
    }
    if !g
        .ignored_codes
        .iter()
        .any(|&c| c > type_code::RTT && c != type_code::ROCE_TX_FOR_ACK_NACK)
    {
        missing.push("no event of an undefined type".into());
    }
    if g.builtin == 0 {
        missing.push("no event for the built-in algorithm".into());
    }
    if !g.used[0][1] || !g.used[1][1] {
        missing.push("port 1 unused".into());
    }
    if accepted < 2 || refused < 2 {
        missing.push("fewer than two accepted and two refused parameter changes".into());
    }
    debug_assert_eq!(COUNTER_NUM, 26);
    Sequence {
        records: g.records,
        expected: out,
        missing,
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
