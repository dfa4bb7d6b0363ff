//! CATS conductor through the C ABI: `cc_cats_next_chunk` and `cc_cats_enqueue`, driven by the
//! event traces in `fixtures/cats/*.csv` exactly as `sim-host replay cats` drives them
//! (docs/cats.md): `enqueue` queues a message and makes one decision; `ack` frees send-buffer
//! space and decides until nothing is sent; `feed` decides until nothing is sent.
//!
//! The C connection holds [`CC_CATS_QUEUE_CAPACITY`] (16) descriptors per priority, the traces
//! sometimes more (heavy_p0 backlogs P0). As firmware would, the harness keeps the overflow in a
//! per-priority FIFO and hands the next message over as soon as the queue's head message
//! finishes; since the conductor only ever reads a queue's head and its non-empty bit, the
//! schedule is the same as with unbounded queues. Every simulated decision is checked against
//! the host build of `cats_conductor::Conductor<1024>` fed the raw trace, so a harness or ABI
//! slip cannot produce plausible-looking counts; the ABI's own return codes label the samples.
//!
//! The traces are read, and their `# set` lines mapped to a configuration and start space, by
//! cc-trace (`TraceReader`, `cc_trace::cats::setup`): the configuration `sim-host replay` runs;
//! the C side is given the same parameters.
//!
//! Each fixture contributes at most `limit / fixtures` calls per entry point, from its start.

use std::collections::VecDeque;
use std::path::Path;

use anyhow::{Result, bail, ensure};
use cats_conductor::{Conductor, Config, Decision, Descriptor, Prio};
use cc_ffi::cats::CC_CATS_QUEUE_CAPACITY;
use cc_trace::cats::{Event, HEADER, Row, Setup, setup};

use super::{Ctx, TraceFile, fixture_paths, read_trace};
use crate::machine::{CallResult, Machine};
use crate::table::Sample;

/// A fixture: both sides' configuration and start space from its `# set` lines, and its events.
struct Trace {
    name: String,
    setup: Setup,
    events: Vec<Event>,
}

/// Reads a fixture with cc-trace's trace reader and CATS parameter mapping (`cc_trace::cats::setup`:
/// `L_p` defaults to half the effective `H_p`, multipliers are rounded to Q16.16).
fn parse(path: &Path) -> Result<Trace> {
    let TraceFile { params: set, rows } = read_trace::<Row>(path, HEADER)?;
    let setup = setup(path, &set)?;
    let name = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    // cc-trace's decoding (and its errors): one meaning of a CATS trace row in the project.
    let events = rows
        .into_iter()
        .map(|(line, r)| r.event(path, line))
        .collect::<Result<_, _>>()?;
    Ok(Trace {
        name,
        setup,
        events,
    })
}

/// The CATS fixtures, sorted by name.
fn traces(ctx: &Ctx) -> Result<Vec<Trace>> {
    fixture_paths(ctx, "cats")?
        .iter()
        .map(|p| parse(p))
        .collect()
}

/// `CcCatsParams` (all `u32`: `mss_bytes`, `high_bytes[4]`, `low_bytes[4]`, `mult_q16[5]`)
/// holding `c`'s parameters, the way `cc_cats_config_init` reads them.
fn params_words(c: &Config) -> Vec<u32> {
    let mut v = vec![c.mss_bytes()];
    v.extend(Prio::ALL[..4].iter().map(|&p| c.high_bytes(p).unwrap_or(0)));
    v.extend(Prio::ALL[..4].iter().map(|&p| c.low_bytes(p).unwrap_or(0)));
    v.extend(Prio::ALL.iter().map(|&p| c.multiplier(p).to_bits()));
    debug_assert_eq!(v.len() * 4, size_of::<cc_ffi::cats::CcCatsParams>());
    v
}

fn words(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// Which entry point's samples to keep.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Entry {
    NextChunk,
    Enqueue,
}

/// The simulated connection plus the host-side lockstep check.
struct Sim<'a> {
    m: &'a mut Machine,
    cfg: u32,
    conn: u32,
    out: u32,
    space: u64,
    /// Messages waiting for room in the C queue, per priority.
    pending: [VecDeque<Descriptor>; 5],
    host: Box<Conductor<1024>>,
    host_cfg: Config,
    next_handle: u32,
    keep: Entry,
    samples: Vec<Sample>,
    budget: usize,
    trace: String,
}

impl Sim<'_> {
    fn record(&mut self, entry: Entry, label: &str, r: &CallResult) {
        if entry == self.keep && self.budget > 0 {
            self.samples.push(Sample::of_call(label, r));
            self.budget -= 1;
        }
    }

    fn enqueue_c(&mut self, prio: u32, d: Descriptor) -> Result<()> {
        let r = self
            .m
            .call("cc_cats_enqueue", &[self.conn, prio, d.handle, d.len_bytes])?;
        match r.a0 {
            0 => self.record(Entry::Enqueue, "accepted", &r),
            1 | 2 => self.record(Entry::Enqueue, "refused", &r),
            c => bail!("cc_cats_enqueue returned {c}"),
        }
        ensure!(
            r.a0 == 0,
            "{}: C enqueue refused (code {})",
            self.trace,
            r.a0
        );
        Ok(())
    }

    /// One decision on both sides; returns whether a chunk was sent.
    fn decide(&mut self) -> Result<bool> {
        let space = u32::try_from(self.space).unwrap_or(u32::MAX);
        let r = self.m.call(
            "cc_cats_next_chunk",
            &[self.conn, self.cfg, space, self.out],
        )?;
        let want = self.host.next_chunk(&self.host_cfg, space);
        let b = self.m.read_bytes(self.out, 20)?;
        let w = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        let (prio, handle, offset, len, last, dl) = (w(0), w(4), w(8), w(12), b[16], b[17]);
        let dl = dl != 0;
        let ok = match (r.a0, want) {
            (0, Decision::Empty) => true,
            (
                1,
                Decision::Send {
                    chunk: c,
                    deadlock_resolved,
                },
            ) => {
                (prio, handle, offset, len, last != 0, dl)
                    == (
                        c.prio as u32,
                        c.handle,
                        c.offset_bytes,
                        c.len_bytes,
                        c.last,
                        deadlock_resolved,
                    )
            }
            (
                2,
                Decision::NoSpace {
                    prio: p,
                    len_bytes,
                    deadlock_resolved,
                },
            ) => (prio, len, dl) == (p as u32, len_bytes, deadlock_resolved),
            _ => false,
        };
        ensure!(
            ok,
            "{}: simulated cc_cats_next_chunk = code {} ({prio}, {handle}, {offset}, {len}, {last}, {dl}), host {want:?}",
            self.trace,
            r.a0
        );
        let label = match (r.a0, dl) {
            (0, _) => "empty",
            (1, false) => "send",
            (1, true) => "send, deadlock resolved",
            (2, false) => "no space",
            _ => "no space, deadlock resolved",
        };
        self.record(Entry::NextChunk, label, &r);
        if r.a0 != 1 {
            return Ok(false);
        }
        self.space -= u64::from(len);
        // Hand the next waiting message over once the head of a full queue has left.
        if last != 0
            && let Some(d) = self.pending[prio as usize].pop_front()
        {
            self.enqueue_c(prio, d)?;
        }
        Ok(true)
    }

    fn event(&mut self, e: Event) -> Result<()> {
        match e {
            Event::Enqueue {
                prio: p,
                len_bytes: bytes,
            } => {
                ensure!(bytes > 0, "{}: bad enqueue", self.trace);
                let prio = p.index() as u32;
                self.next_handle += 1;
                let d = Descriptor {
                    handle: self.next_handle,
                    len_bytes: bytes,
                };
                self.host
                    .enqueue(p, d)
                    .map_err(|e| anyhow::anyhow!("host enqueue: {e:?}"))?;
                let room = self.pending[prio as usize].is_empty()
                    && self.queued(prio)? < CC_CATS_QUEUE_CAPACITY as u32;
                if room {
                    self.enqueue_c(prio, d)?;
                } else {
                    self.pending[prio as usize].push_back(d);
                }
            }
            Event::Ack { bytes } => self.space += bytes,
            Event::Feed => {}
        }
        // The CATS event rule (cc_trace::cats::Event::feed): once after an enqueue, until
        // nothing is sent after an ack or a feed.
        e.feed(|| self.decide())
    }

    fn queued(&mut self, prio: u32) -> Result<u32> {
        Ok(self.m.call("cc_cats_queued", &[self.conn, prio])?.a0)
    }
}

fn run(m: &mut Machine, ctx: &Ctx, keep: Entry) -> Result<Vec<Sample>> {
    let traces = traces(ctx)?;
    let share = ctx.limit.div_ceil(traces.len().max(1)).max(1);
    let mut samples = Vec::new();
    for t in traces {
        m.reset_scratch();
        let host_cfg = t.setup.cfg;
        let params = m.push_bytes(&words(&params_words(&host_cfg)), 4)?;
        let cfg = m.alloc(cc_ffi::cats::CC_CATS_CONFIG_BYTES as u32, 8)?;
        // The host's block size (848) is ≥ the target's (784): room enough either way.
        let conn = m.alloc(cc_ffi::cats::CC_CATS_CONN_BYTES as u32, 8)?;
        let out = m.alloc(20, 4)?;
        let r = m.call("cc_cats_config_init", &[cfg, params])?;
        ensure!(
            r.a0 == 0,
            "{}: cc_cats_config_init returned {}",
            t.name,
            r.a0
        );
        m.call("cc_cats_conn_init", &[conn])?;
        let mut sim = Sim {
            m,
            cfg,
            conn,
            out,
            space: t.setup.snd_buf_bytes,
            pending: Default::default(),
            host: Box::default(),
            host_cfg,
            next_handle: 0,
            keep,
            samples: Vec::new(),
            budget: share,
            trace: t.name.clone(),
        };
        for &e in &t.events {
            if sim.budget == 0 {
                break;
            }
            sim.event(e)?;
        }
        samples.append(&mut sim.samples);
    }
    Ok(samples)
}

/// `cc_cats_next_chunk(conn, cfg, space_bytes, &out) -> CcCatsDecision`, labelled by decision.
pub(super) fn run_next_chunk(m: &mut Machine, ctx: &Ctx) -> Result<Vec<Sample>> {
    run(m, ctx, Entry::NextChunk)
}

/// `cc_cats_enqueue(conn, prio, handle, len_bytes) -> CcCatsEnqueue`.
pub(super) fn run_enqueue(m: &mut Machine, ctx: &Ctx) -> Result<Vec<Sample>> {
    run(m, ctx, Entry::Enqueue)
}
