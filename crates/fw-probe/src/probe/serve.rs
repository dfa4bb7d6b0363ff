//! The counting server: after the synthetic calls, `_start` reads commands from standard input
//! until it ends and answers each on standard output, so that `fw-bench counts` can run fixture
//! events through the same `probe_*` entry points under QEMU user mode (riscv64, and riscv32 for
//! the column beside it) and count the instructions of each call from QEMU's execution trace.
//! Under the gates or a plain run standard input is empty and the server returns at once.
//!
//! A command is a little-endian `u32` opcode and a fixed payload; every command is answered with
//! one little-endian `u64`:
//!
//! | opcode | payload | answer |
//! |---|---|---|
//! | 1 TIMELY configuration | `CcTimelyParams` layout: line, min, max, init, delta rate (`u64` b/s); `t_low`, `t_high`, `min_rtt` (ns), α, β (num, den), `hai_n`, `hai_after`, app-limited (num, den; 0/0 none), per-completion scaling (`u32` each) | 0 built (the flow restarts), 1 refused (the previous configuration and flow stay) |
//! | 2 TIMELY RTT | RTT (`U28F4` bits), bytes | `probe_timely_on_rtt` (no sending rate) |
//! | 3 HPCC configuration | `CcHpccParams` layout: NIC rate, min rate (`u64` b/s); base RTT (ns), η (num, den), `W_AI` bytes, max stage, 0 (`u32` each) | 0 built (the flow restarts), 1 refused (the previous configuration and flow stay) |
//! | 4 HPCC ACK | ack seq, snd nxt, INT length (`u32` each), 44 INT bytes (the first `length` used) | `probe_hpcc_on_ack` |
//! | 5 HPCC state | `CcHpccState` layout: U (`U32F32` bits), five hop records (`u64`), W, W_c (`U24F8` bits), last update seq (`u32`), INT header (`u16`), has header, inc stage (`u8`) | 0; the flow continues from this state (`State::from_raw_parts`) |
//! | 6 PCC TIMELY configuration | the 13 values of `cc_pcc::TIMELY_PARAMS` (`u32` each, id order) | 0 built (a new flow: zeroed context and counters), 1 refused (the previous configuration, flow and counters stay) |
//! | 7 PCC TIMELY event | the platform's 44 event bytes (big-endian fields) | `probe_pcc_timely_on_event` in the high word, [`fold`] of the context and counters after it in the low word |
//! | 8 PCC HPCC configuration | the 8 values of `cc_pcc::HPCC_PARAMS` (`u32` each, id order) | as 6 |
//! | 9 PCC HPCC event | 44 event bytes, then the 12 telemetry bytes | `probe_pcc_hpcc_on_event` in the high word, [`fold`] in the low word |
//! | 10 PCC event decode | 44 event bytes | `probe_pcc_event_decode` |
//!
//! The event is decoded (`Event::decode`) by the server before an event command's call, so the
//! adapter's rows count the per-event path without the decode, and opcode 10 counts the decode
//! alone.
//!
//! An unknown opcode, an event before its configuration or a short command ends the server with
//! the answer `u64::MAX`, so fw-bench reports the command it refused.

use core::hint::black_box;

use cc_pcc::{
    Counters, EVENT_BYTES, Event, FlowContext, HPCC_PARAM_NUM, HpccPccConfig, TELEMETRY_BYTES,
    TIMELY_PARAM_NUM, TimelyPccConfig,
};

use super::{
    hpcc::probe_hpcc_on_ack,
    pcc::{probe_pcc_event_decode, probe_pcc_hpcc_on_event, probe_pcc_timely_on_event},
    timely::probe_timely_on_rtt,
};

/// `read(0, buf, len)` until `buf` is full; false at the end of input (or a short read at it).
fn read_exact(buf: &mut [u8]) -> bool {
    let mut done = 0usize;
    while let Some(rest) = buf.get_mut(done..) {
        if rest.is_empty() {
            return true;
        }
        let n: isize;
        // SAFETY: `read` (a7 = 63) writes at most `rest.len()` bytes into `rest`, which is ours.
        unsafe {
            core::arch::asm!("ecall", inlateout("a0") 0isize => n, in("a1") rest.as_mut_ptr(),
                in("a2") rest.len(), in("a7") 63usize, options(nostack));
        }
        match usize::try_from(n) {
            Ok(0) | Err(_) => return false,
            Ok(k) => done = done.saturating_add(k),
        }
    }
    false
}

/// `write(1, bytes, len)` until all is written (or the reader is gone).
fn write_all(bytes: &[u8]) {
    let mut done = 0usize;
    while let Some(rest) = bytes.get(done..) {
        if rest.is_empty() {
            return;
        }
        let n: isize;
        // SAFETY: `write` (a7 = 64) reads at most `rest.len()` bytes from `rest`.
        unsafe {
            core::arch::asm!("ecall", inlateout("a0") 1isize => n, in("a1") rest.as_ptr(),
                in("a2") rest.len(), in("a7") 64usize, options(nostack, readonly));
        }
        match usize::try_from(n) {
            Ok(0) | Err(_) => return,
            Ok(k) => done = done.saturating_add(k),
        }
    }
}

/// Little-endian words of a payload.
struct Words<'a>(&'a [u8]);

impl Words<'_> {
    fn u32(&mut self) -> u32 {
        let (head, tail) = self.0.split_at_checked(4).unwrap_or((&[], &[]));
        self.0 = tail;
        head.try_into().map_or(0, u32::from_le_bytes)
    }
    fn u64(&mut self) -> u64 {
        u64::from(self.u32()) | u64::from(self.u32()) << 32
    }
}

fn timely_params(w: &mut Words<'_>) -> timely_cc::Params {
    let (line, min, max, init, delta) = (w.u64(), w.u64(), w.u64(), w.u64(), w.u64());
    let (t_low, t_high, min_rtt) = (w.u32(), w.u32(), w.u32());
    let alpha = timely_cc::Ratio {
        num: w.u32(),
        den: w.u32(),
    };
    let beta = timely_cc::Ratio {
        num: w.u32(),
        den: w.u32(),
    };
    let (hai_n, hai_after) = (w.u32(), w.u32());
    let al = timely_cc::Ratio {
        num: w.u32(),
        den: w.u32(),
    };
    let pcs = w.u32() != 0;
    timely_cc::Params {
        line_rate_bps: line,
        min_rate_bps: min,
        max_rate_bps: max,
        init_rate_bps: init,
        t_low_ns: t_low,
        t_high_ns: t_high,
        min_rtt_ns: min_rtt,
        alpha,
        beta,
        delta_bps: delta,
        hai_n,
        hai_after,
        app_limited: (al.num != 0 || al.den != 0).then_some(al),
        per_completion_scaling: pcs,
    }
}

fn hpcc_params(w: &mut Words<'_>) -> hpcc_cc::Params {
    let (nic, min) = (w.u64(), w.u64());
    let base_rtt = w.u32();
    let eta = hpcc_cc::Ratio {
        num: w.u32(),
        den: w.u32(),
    };
    let w_ai = w.u32();
    let max_stage = u8::try_from(w.u32()).unwrap_or(u8::MAX);
    hpcc_cc::Params {
        nic_rate_bps: nic,
        base_rtt_ns: base_rtt,
        eta,
        max_stage,
        w_ai_bytes: w_ai,
        min_rate_bps: min,
    }
}

fn hpcc_state(w: &mut Words<'_>) -> hpcc_cc::State {
    let u = hpcc_cc::U32F32::from_bits(w.u64());
    let hops = [w.u64(), w.u64(), w.u64(), w.u64(), w.u64()];
    let w_bytes = hpcc_cc::U24F8::from_bits(w.u32());
    let wc_bytes = hpcc_cc::U24F8::from_bits(w.u32());
    let last_update_seq = w.u32();
    let tail = w.u32().to_le_bytes();
    let [h0, h1, has, inc_stage] = tail;
    hpcc_cc::State::from_raw_parts(hpcc_cc::RawParts {
        w_bytes,
        wc_bytes,
        u,
        last_update_seq,
        inc_stage,
        int_header: (has != 0).then_some(u16::from_le_bytes([h0, h1])),
        hops,
    })
}

/// The first `N` bytes of a payload (zeros if it is shorter, which the payload sizes exclude).
fn bytes<const N: usize>(w: &Words<'_>) -> [u8; N] {
    w.0.get(..N)
        .and_then(|s| s.try_into().ok())
        .unwrap_or([0; N])
}

/// `N` little-endian words of a payload.
fn values<const N: usize>(w: &mut Words<'_>) -> [u32; N] {
    let mut v = [0u32; N];
    for x in &mut v {
        *x = w.u32();
    }
    v
}

/// What an adapter event left behind, in one word: the context words, then the counters, each
/// folded as `acc = acc.rotate_left(5) ^ word` from 0 (fw-bench folds the host build's the same
/// way). Computed outside the counted call.
pub fn fold(ctx: &FlowContext, counters: &Counters) -> u32 {
    ctx.iter()
        .chain(counters.0.iter())
        .fold(0u32, |acc, &w| acc.rotate_left(5) ^ w)
}

/// One adapter flow: its configuration, context and counters.
struct PccFlow<C> {
    cfg: C,
    ctx: FlowContext,
    counters: Counters,
}

impl<C> PccFlow<C> {
    fn new(cfg: C) -> Self {
        Self {
            cfg,
            ctx: [0; 12],
            counters: Counters::default(),
        }
    }
    /// The answer to an event command: the probe's result, then the fold of what it left.
    fn answer(&self, result: u32) -> u64 {
        u64::from(result) << 32 | u64::from(fold(&self.ctx, &self.counters))
    }
}

/// Payload bytes of each opcode (index = opcode; 0 is not one).
const PAYLOAD: [usize; 11] = [
    0,
    5 * 8 + 12 * 4,
    8,
    2 * 8 + 6 * 4,
    3 * 4 + 44,
    64,
    4 * TIMELY_PARAM_NUM,
    EVENT_BYTES,
    4 * HPCC_PARAM_NUM,
    EVENT_BYTES + TELEMETRY_BYTES,
    EVENT_BYTES,
];

/// Serves commands until standard input ends or a command is refused. Never inlined: fw-bench
/// counts the `probe_*` calls made from this function.
#[unsafe(no_mangle)]
#[inline(never)]
pub extern "C" fn fw_probe_serve() {
    let mut timely: Option<(timely_cc::Config, timely_cc::State)> = None;
    let mut hpcc: Option<(hpcc_cc::Config, hpcc_cc::State)> = None;
    let mut pcc_timely: Option<PccFlow<TimelyPccConfig>> = None;
    let mut pcc_hpcc: Option<PccFlow<HpccPccConfig>> = None;
    let mut buf = [0u8; 96];
    loop {
        let mut op = [0u8; 4];
        if !read_exact(&mut op) {
            return;
        }
        let op = u32::from_le_bytes(op);
        let Some((&len, payload)) = usize::try_from(op)
            .ok()
            .and_then(|i| PAYLOAD.get(i))
            .filter(|&&n| n > 0)
            .and_then(|n| Some((n, buf.get_mut(..*n)?)))
        else {
            write_all(&u64::MAX.to_le_bytes());
            return;
        };
        if !read_exact(payload) {
            write_all(&u64::MAX.to_le_bytes());
            return;
        }
        let mut w = Words(buf.get(..len).unwrap_or(&[]));
        let answer = match op {
            1 => match timely_cc::Config::new(timely_params(&mut w)) {
                Ok(c) => {
                    let st = timely_cc::State::new(&c);
                    timely = Some((c, st));
                    0
                }
                Err(_) => 1,
            },
            2 => match timely.as_mut() {
                Some((cfg, st)) => {
                    let rtt = timely_cc::U28F4::from_bits(w.u32());
                    let bytes = w.u32();
                    probe_timely_on_rtt(black_box(cfg), black_box(st), rtt, bytes, 0)
                }
                None => u64::MAX,
            },
            3 => match hpcc_cc::Config::new(hpcc_params(&mut w)) {
                Ok(c) => {
                    let st = hpcc_cc::State::new(&c);
                    hpcc = Some((c, st));
                    0
                }
                Err(_) => 1,
            },
            4 => match hpcc.as_mut() {
                Some((cfg, st)) => {
                    let (ack, nxt) = (w.u32(), w.u32());
                    let len = usize::try_from(w.u32()).unwrap_or(usize::MAX);
                    let int: [u8; 42] =
                        w.0.get(..42)
                            .and_then(|s| s.try_into().ok())
                            .unwrap_or([0; 42]);
                    u64::from(probe_hpcc_on_ack(
                        black_box(st),
                        black_box(cfg),
                        ack,
                        nxt,
                        black_box(&int),
                        len,
                    ))
                }
                None => u64::MAX,
            },
            5 => match hpcc.as_mut() {
                Some((_, st)) => {
                    *st = hpcc_state(&mut w);
                    0
                }
                None => u64::MAX,
            },
            6 => match TimelyPccConfig::from_values(values(&mut w)) {
                Ok(c) => {
                    pcc_timely = Some(PccFlow::new(c));
                    0
                }
                Err(_) => 1,
            },
            7 => match pcc_timely.as_mut() {
                Some(f) => {
                    let ev = Event::decode(&bytes::<EVENT_BYTES>(&w));
                    let r = probe_pcc_timely_on_event(
                        black_box(&f.cfg),
                        black_box(&mut f.ctx),
                        black_box(&ev),
                        black_box(&mut f.counters),
                    );
                    f.answer(r)
                }
                None => u64::MAX,
            },
            8 => match HpccPccConfig::from_values(values(&mut w)) {
                Ok(c) => {
                    pcc_hpcc = Some(PccFlow::new(c));
                    0
                }
                Err(_) => 1,
            },
            9 => match pcc_hpcc.as_mut() {
                Some(f) => {
                    let raw = bytes::<{ EVENT_BYTES + TELEMETRY_BYTES }>(&w);
                    let (ev, tel) = raw.split_at(EVENT_BYTES);
                    let ev = Event::decode(ev.try_into().unwrap_or(&[0; EVENT_BYTES]));
                    let tel: [u8; TELEMETRY_BYTES] = tel.try_into().unwrap_or([0; TELEMETRY_BYTES]);
                    let r = probe_pcc_hpcc_on_event(
                        black_box(&f.cfg),
                        black_box(&mut f.ctx),
                        black_box(&ev),
                        black_box(&tel),
                        black_box(&mut f.counters),
                    );
                    f.answer(r)
                }
                None => u64::MAX,
            },
            10 => u64::from(probe_pcc_event_decode(black_box(&bytes::<EVENT_BYTES>(&w)))),
            _ => u64::MAX,
        };
        write_all(&answer.to_le_bytes());
        if answer == u64::MAX {
            return;
        }
    }
}
