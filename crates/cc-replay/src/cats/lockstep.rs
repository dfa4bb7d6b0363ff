//! Drives the fixed-point conductor (through its public API) and the f64 reference with the same
//! trace events, in free or forced mode: what `sim-host replay cats` compares, and what the
//! random lockstep proptest (`crates/sim-host/tests/suite/cats_props.rs`) drives directly.

use super::reference::{RefConductor, RefDecision};
use super::{Event, QUEUE_CAPACITY, Setup};
use crate::opts::Mode;
use cats_conductor::{Conductor, Config, Decision, Descriptor, State};
use std::convert::Infallible;

/// One chunk fed by one side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fed {
    /// The queue it came from (0–4).
    pub prio: usize,
    /// Its length, bytes.
    pub bytes: u64,
    /// Bit `q` set when queue `q` held data just before this decision (for the starvation gaps).
    pub waiting: u8,
}

/// One side's `k`-th chunk of an event as the replay compares it: (priority, length); `None`
/// where that side fed fewer chunks.
pub type Compared = Option<(usize, u64)>;

/// What one event did on both sides.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StepOut {
    /// Chunks the fixed-point conductor fed, in order.
    pub fixed: Vec<Fed>,
    /// Chunks the reference fed, in order.
    pub reference: Vec<Fed>,
    /// For an enqueue: whether (fixed, reference) accepted the message.
    pub accepted: Option<(bool, bool)>,
    /// Deadlock resolutions the fixed side kept in this event (also those whose chunk then did
    /// not fit). The reference counts its own in [`RefConductor::deadlocks`].
    pub fixed_deadlocks: u64,
}

impl StepOut {
    /// The comparison the replay makes: chunk `k` agrees when both sides fed one and it has the
    /// same priority and length. Pairs are (reference, fixed).
    pub fn pairs(&self) -> impl Iterator<Item = (Compared, Compared)> {
        let side = |v: &[Fed], k: usize| v.get(k).map(|f| (f.prio, f.bytes));
        (0..self.fixed.len().max(self.reference.len()))
            .map(move |k| (side(&self.reference, k), side(&self.fixed, k)))
    }

    /// Whether every chunk of this event agrees (same count, priorities and lengths).
    pub fn agrees(&self) -> bool {
        self.pairs().all(|(r, f)| r.is_some() && r == f)
    }
}

/// Both sides of one connection, each with its own queues, debts and free send-buffer space.
#[derive(Debug, Clone)]
pub struct Lockstep {
    cfg: Config,
    mode: Mode,
    fixed: Box<Conductor<QUEUE_CAPACITY>>,
    reference: RefConductor,
    space_fixed: u64,
    space_ref: u64,
    handle: u32,
}

impl Lockstep {
    /// Empty queues, zero debts, `su.snd_buf_bytes` free on both sides.
    pub fn new(su: &Setup, mode: Mode) -> Self {
        Self {
            cfg: su.cfg,
            mode,
            fixed: Box::default(),
            reference: RefConductor::new(su.params.clone()),
            space_fixed: su.snd_buf_bytes,
            space_ref: su.snd_buf_bytes,
            handle: 0,
        }
    }

    /// The fixed-point conductor.
    pub fn fixed(&self) -> &Conductor<QUEUE_CAPACITY> {
        &self.fixed
    }

    /// The reference conductor.
    pub fn reference(&self) -> &RefConductor {
        &self.reference
    }

    /// Free send-buffer space (fixed, reference), bytes.
    pub fn space(&self) -> (u64, u64) {
        (self.space_fixed, self.space_ref)
    }

    /// Runs one trace event on both sides; `out` is cleared first. `enqueue`: queue the message,
    /// then exactly one feed attempt; `ack`: free `bytes` of space, then feed until nothing;
    /// `feed`: feed until nothing. In forced mode the fixed side's `State` is then re-seeded from
    /// the reference's debts and In-Debt flags.
    pub fn step(&mut self, ev: Event, out: &mut StepOut) {
        out.fixed.clear();
        out.reference.clear();
        out.accepted = None;
        out.fixed_deadlocks = 0;
        match ev {
            Event::Enqueue { prio, len_bytes } => {
                self.handle = self.handle.wrapping_add(1);
                let desc = Descriptor {
                    handle: self.handle,
                    len_bytes,
                };
                let ok_fx = self.fixed.enqueue(prio, desc).is_ok();
                let ok_rf = self.reference.enqueue(prio.index(), u64::from(len_bytes));
                out.accepted = Some((ok_fx, ok_rf));
            }
            Event::Ack { bytes } => {
                self.space_fixed = self.space_fixed.saturating_add(bytes);
                self.space_ref = self.space_ref.saturating_add(bytes);
            }
            Event::Feed => {}
        }
        // Fixed-point side, fed by the event rule (`Event::feed`).
        let _ = ev.feed(|| {
            let waiting = self.fixed.nonempty_mask();
            let space = u32::try_from(self.space_fixed).unwrap_or(u32::MAX);
            Ok::<bool, Infallible>(match self.fixed.next_chunk(&self.cfg, space) {
                Decision::Send {
                    chunk,
                    deadlock_resolved,
                } => {
                    let b = u64::from(chunk.len_bytes);
                    self.space_fixed -= b;
                    out.fixed_deadlocks += u64::from(deadlock_resolved);
                    out.fixed.push(Fed {
                        prio: chunk.prio.index(),
                        bytes: b,
                        waiting,
                    });
                    true
                }
                Decision::NoSpace {
                    deadlock_resolved, ..
                } => {
                    // A kept resolution (released-code semantics, docs/cats.md).
                    out.fixed_deadlocks += u64::from(deadlock_resolved);
                    false
                }
                Decision::Empty => false,
            })
        });
        // Reference side, the same rule.
        let _ = ev.feed(|| {
            let waiting = ref_mask(&self.reference);
            Ok::<bool, Infallible>(match self.reference.next(self.space_ref) {
                RefDecision::Send { prio, bytes, .. } => {
                    self.space_ref -= bytes;
                    out.reference.push(Fed {
                        prio,
                        bytes,
                        waiting,
                    });
                    true
                }
                RefDecision::NoSpace | RefDecision::Empty => false,
            })
        });
        if self.mode == Mode::Forced {
            // Re-seed the firmware's hysteresis state from the reference (its debts are integers
            // by construction: sums of chunk lengths and truncated products).
            let r = &self.reference;
            let debts = r.debt.map(|d| d.clamp(0.0, f64::from(u32::MAX)) as u32);
            let mask = (0..4).fold(0u8, |m, q| if r.in_debt[q] { m | 1 << q } else { m });
            self.fixed.set_state(State::from_raw_parts(debts, mask));
        }
    }
}

/// Bit `q` set when the reference's queue `q` holds data.
fn ref_mask(r: &RefConductor) -> u8 {
    (0..5).fold(0u8, |m, q| {
        if r.queues[q].is_empty() {
            m
        } else {
            m | 1 << q
        }
    })
}
