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
//! Each fixture contributes at most `limit / fixtures` calls per entry point, from its start.

use std::collections::VecDeque;
use std::path::Path;

use anyhow::{Context, Result, bail, ensure};
use cats_conductor::{Conductor, Config, Decision, Descriptor, Multiplier, Prio};
use cc_ffi::cats::CC_CATS_QUEUE_CAPACITY;

use super::Ctx;
use crate::machine::Machine;
use crate::table::Sample;

/// One trace event.
#[derive(Clone, Copy, Debug)]
enum Event {
    Enqueue { prio: u32, bytes: u32 },
    Ack { bytes: u64 },
    Feed,
}

/// A parsed trace: the `# set` parameters as firmware parameters, the start space and events.
struct Trace {
    name: String,
    mss: u32,
    high: [u32; 4],
    low: [u32; 4],
    mult_q16: [u32; 5],
    snd_buf_bytes: u64,
    events: Vec<Event>,
}

/// Parses `t_ns,event,prio,bytes` with `# set KEY=VALUE` lines, as sim-host does (`L_p`
/// defaults to half the effective `H_p`; multipliers are decimals rounded to Q16.16).
fn parse(path: &Path) -> Result<Trace> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let d = Config::DEFAULT;
    let mut mss = d.mss_bytes();
    let mut high = [0, 1, 2, 3].map(|i| d.high_bytes(Prio::ALL[i]).unwrap_or(1));
    let mut low: [Option<u32>; 4] = [None; 4];
    let mut mult_q16 = Prio::ALL.map(|p| d.multiplier(p).to_q16_bits());
    let mut snd_buf_bytes = 131_072u64;
    let mut events = Vec::new();
    let mut header = false;
    for (no, line) in text.lines().enumerate() {
        let at = || format!("{}:{}", path.display(), no + 1);
        let line = line.trim();
        if let Some(c) = line.strip_prefix('#') {
            if let Some((k, v)) = c
                .trim()
                .strip_prefix("set ")
                .and_then(|s| s.split_once('='))
            {
                let (k, v) = (k.trim(), v.trim());
                let int = || v.parse::<u32>().with_context(at);
                match k {
                    "mss_bytes" => mss = int()?,
                    "snd_buf_bytes" => snd_buf_bytes = v.parse().with_context(at)?,
                    _ if k.len() == 2 => {
                        let i = usize::from(k.as_bytes()[1].wrapping_sub(b'0'));
                        match (k.as_bytes()[0], i) {
                            (b'h', 0..=3) => high[i] = int()?,
                            (b'l', 0..=3) => low[i] = Some(int()?),
                            (b'm', 0..=4) => {
                                let m: f64 = v.parse().with_context(at)?;
                                mult_q16[i] = (m * 65_536.0).round() as u32;
                            }
                            _ => bail!("{}: unknown parameter {k}", at()),
                        }
                    }
                    _ => bail!("{}: unknown parameter {k}", at()),
                }
            }
            continue;
        }
        if line.is_empty() {
            continue;
        }
        if !header {
            ensure!(
                line == "t_ns,event,prio,bytes",
                "{}: not a CATS trace",
                at()
            );
            header = true;
            continue;
        }
        let f: Vec<&str> = line.split(',').collect();
        ensure!(f.len() == 4, "{}: expected 4 fields", at());
        events.push(match f[1] {
            "enqueue" => Event::Enqueue {
                prio: f[2].parse().with_context(at)?,
                bytes: f[3].parse().with_context(at)?,
            },
            "ack" => Event::Ack {
                bytes: f[3].parse().with_context(at)?,
            },
            "feed" => Event::Feed,
            e => bail!("{}: unknown event {e}", at()),
        });
    }
    Ok(Trace {
        name: path
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
        mss,
        high,
        low: std::array::from_fn(|i| low[i].unwrap_or(high[i] / 2)),
        mult_q16,
        snd_buf_bytes,
        events,
    })
}

/// The CATS fixtures, sorted by name.
fn traces(ctx: &Ctx) -> Result<Vec<Trace>> {
    let dir = ctx.fixtures.join("cats");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "csv"))
        .collect();
    paths.sort();
    paths.iter().map(|p| parse(p)).collect()
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
    fn record(&mut self, entry: Entry, label: &str, instret: u64) {
        if entry == self.keep && self.budget > 0 {
            self.samples.push(Sample::new(label, instret));
            self.budget -= 1;
        }
    }

    fn enqueue_c(&mut self, prio: u32, d: Descriptor) -> Result<()> {
        let r = self
            .m
            .call("cc_cats_enqueue", &[self.conn, prio, d.handle, d.len_bytes])?;
        match r.a0 {
            0 => self.record(Entry::Enqueue, "accepted", r.instret),
            1 | 2 => self.record(Entry::Enqueue, "refused", r.instret),
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
        self.record(Entry::NextChunk, label, r.instret);
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
            Event::Enqueue { prio, bytes } => {
                ensure!(prio <= 4 && bytes > 0, "{}: bad enqueue", self.trace);
                self.next_handle += 1;
                let d = Descriptor {
                    handle: self.next_handle,
                    len_bytes: bytes,
                };
                let p = Prio::from_index(prio as usize).context("prio")?;
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
                self.decide()?;
            }
            Event::Ack { bytes } => {
                self.space += bytes;
                while self.decide()? {}
            }
            Event::Feed => while self.decide()? {},
        }
        Ok(())
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
        let params = m.push_bytes(
            &words(&[&[t.mss][..], &t.high[..], &t.low[..], &t.mult_q16[..]].concat()),
            4,
        )?;
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
        let host_cfg = Config::new(
            t.mss,
            t.high,
            t.low,
            t.mult_q16.map(Multiplier::from_q16_bits),
        )
        .map_err(|e| anyhow::anyhow!("{}: config {e:?}", t.name))?;
        let mut sim = Sim {
            m,
            cfg,
            conn,
            out,
            space: t.snd_buf_bytes,
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
pub fn run_next_chunk(m: &mut Machine, ctx: &Ctx) -> Result<Vec<Sample>> {
    run(m, ctx, Entry::NextChunk)
}

/// `cc_cats_enqueue(conn, prio, handle, len_bytes) -> CcCatsEnqueue`.
pub fn run_enqueue(m: &mut Machine, ctx: &Ctx) -> Result<Vec<Sample>> {
    run(m, ctx, Entry::Enqueue)
}
