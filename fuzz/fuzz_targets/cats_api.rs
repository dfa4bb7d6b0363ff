//! The CATS conductor's public API with arbitrary configurations and event sequences, twice:
//! 1. sim-host's lockstep (1024 messages per queue) against the f64 reference: identical chunks
//!    and enqueue verdicts after every event, identical debts, In-Debt flags, queues and
//!    deadlock counts; every queue's longest wait within its starvation bound
//!    (`starvation_bound_bytes`, the replay's verdict); after a final drain, bytes out = bytes
//!    in per priority on both sides;
//! 2. a bare `Conductor<4>` (queues fill up): every chunk is `1..=MSS` bytes, continues its
//!    message at the right offset, `last` exactly at its end, messages leave each queue in
//!    order; `QueueFull` exactly at 4 messages, `ZeroLength` exactly for 0 bytes; `NoSpace` only
//!    when the chunk is larger than the space, `Empty` only with no data queued; debts below
//!    `H_p + MSS` and In-Debt only with a debt; after the drain, bytes out = bytes in.
//!
//! Input (little-endian): flags `u8` (bit 0: a parameter block follows: `mss: u16, H_0..H_3:
//! u32, L_0..L_3: u32, M_0..M_4: u32` (Q16.16 bits), `snd_buf_bytes: u32`; else the paper's
//! configuration and 131 072 bytes), then events, each a kind byte `k % 8`: 0–4 enqueue at
//! priority `k` a message of `u32` bytes (then one feed attempt), 5 ack `u32` bytes, 6 feed,
//! 7 ack `u64` bytes (ack and feed: feed until nothing is sent). A harness limit keeps the
//! work bounded: enqueues past 10 000 chunks of MSS in total are dropped.
#![no_main]

use cats_conductor::{Conductor, Config, Decision, Descriptor, EnqueueError, Multiplier, Prio};
use fuzz_common::Bytes;
use libfuzzer_sys::fuzz_target;
use cc_replay::cats::lockstep::{Lockstep, StepOut};
use cc_replay::cats::reference::{RefParams, starvation_bound_bytes};
use cc_replay::cats::{DEFAULT_SND_BUF_BYTES, Event, QUEUE_CAPACITY, Setup};
use cc_replay::opts::Mode;
use std::collections::VecDeque;

const SMALL: usize = 4;
const MAX_CHUNKS: u64 = 10_000;

/// The bare conductor and what it must do.
struct Bare {
    c: Box<Conductor<SMALL>>,
    space: u64,
    /// Per queue: (handle, length, bytes fed) of each queued message, in order.
    msgs: [VecDeque<(u32, u32, u32)>; 5],
    bytes_in: [u64; 5],
    bytes_out: [u64; 5],
    handle: u32,
}

impl Bare {
    fn feed(&mut self, cfg: &Config, attempts: u64) {
        let mut n = 0;
        while n < attempts {
            n += 1;
            let space = u32::try_from(self.space).unwrap_or(u32::MAX);
            let d = self.c.next_chunk(cfg, space);
            match d {
                Decision::Empty => {
                    assert_eq!(self.c.nonempty_mask(), 0);
                    assert!(self.msgs.iter().all(VecDeque::is_empty));
                    break;
                }
                Decision::NoSpace {
                    prio, len_bytes, ..
                } => {
                    assert!(
                        len_bytes > space,
                        "NoSpace for {len_bytes} with {space} free"
                    );
                    let (_, len, fed) = self.msgs[prio.index()][0];
                    assert_eq!(len_bytes, (len - fed).min(cfg.mss_bytes()));
                    break;
                }
                Decision::Send { chunk, .. } => {
                    let q = chunk.prio.index();
                    let head = self.msgs[q]
                        .front_mut()
                        .expect("a chunk from an empty queue");
                    assert_eq!(chunk.handle, head.0, "messages out of order");
                    assert_eq!(
                        chunk.offset_bytes, head.2,
                        "chunk does not continue its message"
                    );
                    assert!((1..=cfg.mss_bytes()).contains(&chunk.len_bytes));
                    assert!(u64::from(chunk.len_bytes) <= self.space);
                    head.2 += chunk.len_bytes;
                    assert!(head.2 <= head.1);
                    assert_eq!(chunk.last, head.2 == head.1);
                    if chunk.last {
                        self.msgs[q].pop_front();
                    }
                    self.space -= u64::from(chunk.len_bytes);
                    self.bytes_out[q] += u64::from(chunk.len_bytes);
                }
            }
            self.check_state(cfg);
        }
    }

    fn check_state(&self, cfg: &Config) {
        let st = self.c.state();
        for p in Prio::ALL {
            let d = st.debt_of(p);
            if let Some(h) = cfg.high_bytes(p) {
                assert!(
                    d < h + cfg.mss_bytes(),
                    "P{}: debt {d} ≥ H + MSS",
                    p.index()
                );
            }
            assert!(!st.is_in_debt(p) || d > 0, "In-Debt without a debt");
            let q = p.index();
            assert_eq!(self.c.queued_messages(p), self.msgs[q].len());
            assert_eq!(
                self.c.nonempty_mask() & (1 << q) != 0,
                !self.msgs[q].is_empty()
            );
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let mut b = Bytes::new(data);
    let flags = b.u8();
    let (cfg, snd_buf) = if flags & 1 != 0 {
        let mss = u32::from(b.u16());
        let high = [b.u32(), b.u32(), b.u32(), b.u32()];
        let low = [b.u32(), b.u32(), b.u32(), b.u32()];
        let mult = [(); 5].map(|()| Multiplier::from_bits(b.u32()));
        let Ok(cfg) = Config::new(mss, high, low, mult) else {
            return;
        };
        (cfg, u64::from(b.u32()))
    } else {
        (Config::default(), DEFAULT_SND_BUF_BYTES)
    };
    let wm = |f: fn(&Config, Prio) -> Option<u32>| {
        [0, 1, 2, 3].map(|i| f64::from(f(&cfg, Prio::ALL[i]).unwrap_or(0)))
    };
    let su = Setup {
        cfg,
        params: RefParams {
            mss: f64::from(cfg.mss_bytes()),
            high: wm(Config::high_bytes),
            low: wm(Config::low_bytes),
            mult: Prio::ALL.map(|p| f64::from(cfg.multiplier(p).to_bits()) / 65_536.0),
            capacity: QUEUE_CAPACITY,
        },
        snd_buf_bytes: snd_buf,
        quantised: Vec::new(),
    };

    let mut ls = Lockstep::new(&su, Mode::Free);
    let mut out = StepOut::default();
    let mut bare = Bare {
        c: Box::default(),
        space: snd_buf,
        msgs: Default::default(),
        bytes_in: [0; 5],
        bytes_out: [0; 5],
        handle: 0,
    };
    let mut in_ls = [0u64; 5];
    let (mut out_fx, mut out_rf) = ([0u64; 5], [0u64; 5]);
    let (mut wait, mut worst) = ([0u64; 5], [0u64; 5]);
    let mut min_msg = u64::MAX;
    let mut fixed_deadlocks = 0;
    let mut chunks = 0u64;
    let mss = u64::from(cfg.mss_bytes());

    let mut events: Vec<Event> = Vec::new();
    let mut k = 0;
    while !b.is_empty() && k < 2048 {
        k += 1;
        let kind = b.u8() % 8;
        let ev = match kind {
            0..=4 => Event::Enqueue {
                prio: Prio::ALL[usize::from(kind)],
                len_bytes: b.u32(),
            },
            5 => Event::Ack {
                bytes: u64::from(b.u32()),
            },
            6 => Event::Feed,
            _ => Event::Ack { bytes: b.u64() },
        };
        if let Event::Enqueue { len_bytes, .. } = ev {
            chunks += u64::from(len_bytes).div_ceil(mss);
            if chunks > MAX_CHUNKS {
                continue;
            }
        }
        events.push(ev);
    }
    // Drain: space for everything, then feed.
    events.push(Event::Ack { bytes: u64::MAX });

    for ev in events {
        // The bare conductor.
        match ev {
            Event::Enqueue { prio, len_bytes } => {
                bare.handle = bare.handle.wrapping_add(1);
                let d = Descriptor {
                    handle: bare.handle,
                    len_bytes,
                };
                let q = prio.index();
                match bare.c.enqueue(prio, d) {
                    Ok(()) => {
                        assert!(len_bytes > 0 && bare.msgs[q].len() < SMALL);
                        bare.msgs[q].push_back((d.handle, len_bytes, 0));
                        bare.bytes_in[q] += u64::from(len_bytes);
                    }
                    Err(EnqueueError::ZeroLength(x)) => assert!(x == d && len_bytes == 0),
                    Err(EnqueueError::QueueFull(x)) => {
                        assert!(x == d && len_bytes > 0 && bare.msgs[q].len() == SMALL)
                    }
                }
                bare.check_state(&cfg);
                bare.feed(&cfg, 1);
            }
            Event::Ack { bytes } => {
                bare.space = bare.space.saturating_add(bytes);
                bare.feed(&cfg, u64::MAX);
            }
            Event::Feed => bare.feed(&cfg, u64::MAX),
        }

        // The lockstep against the reference.
        ls.step(ev, &mut out);
        assert!(
            out.agrees(),
            "{ev:?}: chunks differ\n ref   {:?}\n fixed {:?}",
            out.reference,
            out.fixed
        );
        if let Some((f, r)) = out.accepted {
            assert_eq!(f, r, "{ev:?}: enqueue verdicts differ");
            if let (true, Event::Enqueue { prio, len_bytes }) = (r, ev) {
                in_ls[prio.index()] += u64::from(len_bytes);
                min_msg = min_msg.min(u64::from(len_bytes));
            }
        }
        fixed_deadlocks += out.fixed_deadlocks;
        for f in &out.fixed {
            out_fx[f.prio] += f.bytes;
            for q in 0..5 {
                if q == f.prio {
                    wait[q] = 0;
                } else if f.waiting & (1 << q) != 0 {
                    wait[q] += f.bytes;
                    worst[q] = worst[q].max(wait[q]);
                }
            }
        }
        for f in &out.reference {
            out_rf[f.prio] += f.bytes;
        }
        let (fx, rf) = (ls.fixed(), ls.reference());
        let st = fx.state();
        assert!(
            (0..4).all(|q| f64::from(st.debt_bytes()[q]) == rf.debt[q]),
            "debts fixed {:?} ref {:?}",
            st.debt_bytes(),
            rf.debt
        );
        let flags = (0..4).fold(0u8, |m, q| m | u8::from(rf.in_debt[q]) << q);
        assert_eq!(st.in_debt_mask(), flags, "In-Debt flags");
        let nonempty = (0..5).fold(0u8, |m, q| m | u8::from(!rf.queues[q].is_empty()) << q);
        assert_eq!(fx.nonempty_mask(), nonempty, "queues");
        assert_eq!(fixed_deadlocks, rf.deadlocks, "deadlocks");
        assert_eq!(ls.space().0, ls.space().1, "free space");
    }

    // Drained: bytes out = bytes in, per priority, on every side.
    assert_eq!(bare.c.nonempty_mask(), 0);
    assert_eq!(bare.bytes_out, bare.bytes_in, "bare conductor");
    assert_eq!(ls.fixed().nonempty_mask(), 0);
    assert_eq!(out_fx, in_ls, "fixed side");
    assert_eq!(out_rf, in_ls, "reference");
    // Starvation: every queue's longest wait within its bound.
    let min_msg = if min_msg == u64::MAX {
        1.0
    } else {
        min_msg as f64
    };
    for (q, &gap) in worst.iter().enumerate() {
        let bound = starvation_bound_bytes(&su.params, min_msg, q);
        assert!(
            gap as f64 <= bound,
            "P{q} waited {gap} bytes > bound {bound}"
        );
    }
});
