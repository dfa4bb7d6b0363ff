//! CATS in the loop (algorithm `cats`): one sender, one page. The application queues the page's
//! messages at the flow's start; what feeds the transport's send buffer is either the CATS
//! conductor (`scheduler = "cats"`: one chunk of at most MSS bytes per decision, the fixed-point
//! crate or the f64 reference by the controller kind) or the application order itself
//! (`scheduler = "fifo"`, the baseline: a plain socket filled as space frees). The transport
//! sends the byte stream in order, paced by the NIC's pacer ([`super::engine::pacer`]); its ACKs free
//! send-buffer space, which is the conductor's `ack` event. The receiver attributes every byte
//! delivered in order to the priority of the chunk it belongs to.
//!
//! The event rule is `replay cats`'s ([`cc_trace::cats::Event::feed`]): an `enqueue` makes one feed
//! attempt, an `ack` or a `feed` feeds until nothing is sent; `--record` writes these events
//! in the replay's CSV format.

use super::cc::cats::WebSetup;
use super::record::Recorder;
use super::scenario::{ControllerKind, Scheduler};
use cats_conductor::{Conductor, Config, Decision, Descriptor, Prio};
use cc_reference::cats::{RefConductor, RefDecision};
use cc_trace::cats::{Event, QUEUE_CAPACITY};
use serde::Serialize;
use std::collections::VecDeque;
use std::convert::Infallible;

/// What feeds the send buffer.
enum Feeder {
    /// The fixed-point conductor (`cats-conductor`, through its public API).
    Fixed(Box<Conductor<QUEUE_CAPACITY>>, Config),
    /// The f64 reference conductor.
    Reference(Box<RefConductor>),
    /// Application order: `(priority, bytes left)` per message, MSS-sized chunks.
    Fifo(VecDeque<(u8, u64)>, u64),
}

impl Feeder {
    /// Queues a message; false when the conductor refuses it.
    fn enqueue(&mut self, prio: u8, bytes: u32, handle: u32) -> bool {
        match self {
            Feeder::Fixed(c, _) => {
                let p = Prio::from_index(usize::from(prio)).unwrap_or(Prio::P4);
                c.enqueue(
                    p,
                    Descriptor {
                        handle,
                        len_bytes: bytes,
                    },
                )
                .is_ok()
            }
            Feeder::Reference(r) => r.enqueue(usize::from(prio), u64::from(bytes)),
            Feeder::Fifo(q, _) => {
                q.push_back((prio, u64::from(bytes)));
                true
            }
        }
    }

    /// One decision with `space` bytes free: the chunk fed, if any. `deadlocks` counts the
    /// fixed conductor's kept deadlock resolutions.
    fn next(&mut self, space: u64, deadlocks: &mut u64) -> Option<(u8, u64)> {
        match self {
            Feeder::Fixed(c, cfg) => {
                match c.next_chunk(cfg, u32::try_from(space).unwrap_or(u32::MAX)) {
                    Decision::Send {
                        chunk,
                        deadlock_resolved,
                    } => {
                        *deadlocks += u64::from(deadlock_resolved);
                        Some((chunk.prio.index() as u8, u64::from(chunk.len_bytes)))
                    }
                    Decision::NoSpace {
                        deadlock_resolved, ..
                    } => {
                        *deadlocks += u64::from(deadlock_resolved);
                        None
                    }
                    Decision::Empty => None,
                }
            }
            Feeder::Reference(r) => match r.next(space) {
                RefDecision::Send { prio, bytes, .. } => Some((prio as u8, bytes)),
                RefDecision::NoSpace | RefDecision::Empty => None,
            },
            Feeder::Fifo(q, mss) => {
                let (p, left) = q.front_mut()?;
                let n = (*mss).min(*left);
                if n > space {
                    return None;
                }
                *left -= n;
                let p = *p;
                if *left == 0 {
                    q.pop_front();
                }
                Some((p, n))
            }
        }
    }
}

/// One CATS flow's application, conductor and receiver bookkeeping.
pub struct WebFlow {
    feeder: Feeder,
    scheduler: Scheduler,
    messages: Vec<(u8, u32)>,
    /// Free send-buffer space, bytes.
    space: u64,
    /// Bytes fed into the transport's stream.
    fed: u64,
    /// The transport's acknowledged offset as last seen.
    acked: u64,
    /// Fed chunks not yet wholly delivered: (end offset in the stream, priority).
    pending: VecDeque<(u64, u8)>,
    /// Stream offset delivered in order at the receiver.
    delivered_upto: u64,
    start_ns: u64,
    fixed_deadlocks: u64,
    /// Page bytes per priority.
    pub total: [u64; 5],
    /// Bytes fed per priority.
    pub fed_bytes: [u64; 5],
    /// Bytes delivered per priority.
    pub delivered: [u64; 5],
    /// When each priority's last byte reached the receiver, ns after the flow's start.
    pub done_ns: [Option<u64>; 5],
    /// When the page's first byte reached the receiver, ns after the flow's start.
    pub first_byte_ns: Option<u64>,
    /// The transport the page went through.
    transport: Transport,
    /// Every chunk fed, in stream order: (priority, bytes).
    pub chunks: Vec<(u8, u64)>,
    /// Bytes delivered per priority after each in-order delivery: (ns after the start, bytes).
    pub progress: Vec<(u64, [u64; 5])>,
}

impl WebFlow {
    /// The flow's application of a CATS scenario; `kind` picks the conductor.
    pub fn new(w: &WebSetup, kind: ControllerKind) -> Box<WebFlow> {
        let feeder = match (w.scheduler, kind) {
            (Scheduler::Cats, ControllerKind::Fixed) => Feeder::Fixed(Box::default(), w.su.cfg),
            // `ns3` is refused for cats before any flow is made (`Algo::has_ns3_side`).
            (Scheduler::Cats, ControllerKind::Reference | ControllerKind::Ns3) => {
                Feeder::Reference(Box::new(RefConductor::new(w.su.params.clone())))
            }
            (Scheduler::Fifo, _) => Feeder::Fifo(VecDeque::new(), u64::from(w.su.cfg.mss_bytes())),
        };
        let mut total = [0; 5];
        for &(p, b) in &w.messages {
            total[usize::from(p)] += u64::from(b);
        }
        Box::new(WebFlow {
            feeder,
            scheduler: w.scheduler,
            messages: w.messages.clone(),
            space: w.su.snd_buf_bytes,
            fed: 0,
            acked: 0,
            pending: VecDeque::new(),
            delivered_upto: 0,
            start_ns: 0,
            fixed_deadlocks: 0,
            total,
            fed_bytes: [0; 5],
            delivered: [0; 5],
            done_ns: [None; 5],
            first_byte_ns: None,
            transport: Transport {
                pacing_rate_bps: w.pacing_rate_bps,
                window_bytes: w.window_bytes,
                initial_window_bytes: w.initial_window_bytes,
                origin: w.transport_origin,
            },
            chunks: Vec::new(),
            progress: Vec::new(),
        })
    }

    /// The page's size, bytes.
    pub fn total_bytes(&self) -> u64 {
        self.total.iter().sum()
    }

    /// Bytes the transport may send: what has been fed.
    pub fn fed(&self) -> u64 {
        self.fed
    }

    /// Runs `ev`'s feeding (the replay's event rule) and returns nothing; chunks go to the
    /// stream.
    fn feed(&mut self, ev: Event) {
        let _ = ev.feed(|| {
            Ok::<bool, Infallible>(
                match self.feeder.next(self.space, &mut self.fixed_deadlocks) {
                    Some((p, n)) => {
                        self.space -= n;
                        self.fed += n;
                        self.fed_bytes[usize::from(p)] += n;
                        self.pending.push_back((self.fed, p));
                        self.chunks.push((p, n));
                        true
                    }
                    None => false,
                },
            )
        });
    }

    /// The flow starts: the application queues every message in order (each enqueue makes
    /// one feed attempt), then a `feed`.
    pub fn start(&mut self, now_ns: u64, rec: &mut Recorder, fid: u32, record: bool) {
        self.start_ns = now_ns;
        let msgs = std::mem::take(&mut self.messages);
        for (k, &(p, b)) in msgs.iter().enumerate() {
            if record {
                rec.cats_row(fid, now_ns, "enqueue", Some(p), u64::from(b));
            }
            // Setup refuses a page a conductor could not hold; a refusal here would stall the
            // flow (it never completes), which the report shows.
            let _ = self.feeder.enqueue(p, b, k as u32 + 1);
            let prio = Prio::from_index(usize::from(p)).unwrap_or(Prio::P4);
            self.feed(Event::Enqueue { prio, len_bytes: b });
        }
        self.messages = msgs;
        if record {
            rec.cats_row(fid, now_ns, "feed", None, 0);
        }
        self.feed(Event::Feed);
    }

    /// The transport's cumulative ACK reached `snd_una`: the newly acknowledged bytes leave the
    /// send buffer (an `ack` event), then feed until nothing is sent.
    pub fn on_ack(
        &mut self,
        snd_una: u64,
        now_ns: u64,
        rec: &mut Recorder,
        fid: u32,
        record: bool,
    ) {
        if snd_una <= self.acked {
            return;
        }
        let freed = snd_una - self.acked;
        self.acked = snd_una;
        self.space += freed;
        if record {
            rec.cats_row(fid, now_ns, "ack", None, freed);
        }
        self.feed(Event::Ack { bytes: freed });
    }

    /// The receiver has every byte below `rcv_next` in order.
    pub fn on_deliver(&mut self, rcv_next: u64, now_ns: u64) {
        let t = now_ns.saturating_sub(self.start_ns);
        if rcv_next > 0 && self.first_byte_ns.is_none() {
            self.first_byte_ns = Some(t);
        }
        while self.delivered_upto < rcv_next {
            let Some(&(end, p)) = self.pending.front() else {
                break;
            };
            let upto = end.min(rcv_next);
            let q = usize::from(p);
            self.delivered[q] += upto - self.delivered_upto;
            self.delivered_upto = upto;
            if upto == end {
                self.pending.pop_front();
            }
            if self.delivered[q] == self.total[q] && self.done_ns[q].is_none() {
                self.done_ns[q] = Some(t);
            }
        }
        self.progress.push((t, self.delivered));
    }

    /// Deadlock resolutions the conductor made (0 for FIFO).
    pub fn deadlocks(&self) -> u64 {
        match &self.feeder {
            Feeder::Fixed(..) => self.fixed_deadlocks,
            Feeder::Reference(r) => r.deadlocks,
            Feeder::Fifo(..) => 0,
        }
    }

    /// This run's results.
    pub fn run_report(&self) -> WebRun {
        let fcp = [0, 1]
            .iter()
            .filter(|&&p| self.total[p] > 0)
            .map(|&p| self.done_ns[p])
            .try_fold(None, |acc: Option<u64>, d| {
                d.map(|d| Some(acc.map_or(d, |a| a.max(d))))
            })
            .flatten();
        let present: Vec<usize> = (0..5).filter(|&p| self.total[p] > 0).collect();
        let page_load = present
            .iter()
            .map(|&p| self.done_ns[p])
            .try_fold(0, |acc, d| d.map(|d| acc.max(d)));
        let mut order: Vec<(u64, u8)> = present
            .iter()
            .filter_map(|&p| self.done_ns[p].map(|t| (t, p as u8)))
            .collect();
        order.sort();
        WebRun {
            scheduler: self.scheduler.name().into(),
            bytes: self.total,
            delivered_bytes: self.delivered,
            completion_ns: self.done_ns,
            first_byte_ns: self.first_byte_ns,
            transport: self.transport,
            page_load_ns: page_load,
            fcp_ns: fcp,
            completion_order: order.into_iter().map(|(_, p)| p).collect(),
            chunks: self.chunks.len() as u64,
            deadlocks_resolved: self.deadlocks(),
        }
    }
}

/// One CATS run's page results.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct WebRun {
    /// cats or fifo.
    pub scheduler: String,
    /// Page bytes per priority P0..P4.
    pub bytes: [u64; 5],
    /// Bytes delivered in order per priority.
    pub delivered_bytes: [u64; 5],
    /// When the last byte of each priority reached the receiver, ns after the start (`None`:
    /// not by the end, or no such bytes).
    pub completion_ns: [Option<u64>; 5],
    /// When the page's first byte reached the receiver, ns after the start: the origin of the
    /// CATS authors' released experiment's completion times (theirs count from it).
    pub first_byte_ns: Option<u64>,
    /// The transport's pacing and window in force.
    pub transport: Transport,
    /// Total page load: every priority complete, ns.
    pub page_load_ns: Option<u64>,
    /// First contentful paint: P0 and P1 complete, ns.
    pub fcp_ns: Option<u64>,
    /// Priorities in the order they completed.
    pub completion_order: Vec<u8>,
    /// Chunks fed to the transport.
    pub chunks: u64,
    /// Deadlock resolutions by the conductor.
    pub deadlocks_resolved: u64,
}

/// The CATS sender's transport in force: `[web] pacing_rate_bps`, `window_bytes` and
/// `initial_window_packets` (× MSS), or their defaults.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
pub struct Transport {
    /// Pacing rate on the wire, b/s.
    pub pacing_rate_bps: u64,
    /// Bytes in flight at most.
    pub window_bytes: u64,
    /// Slow start's first window, bytes; `None`: no slow start.
    pub initial_window_bytes: Option<u64>,
    /// Where the pacing rate and the window came from: the `[web]` key or the default.
    pub origin: [&'static str; 2],
}

/// A CATS scenario's page results: this run, and the FIFO baseline when it ran.
#[derive(Debug, Clone, Serialize)]
pub struct WebReport {
    /// This run.
    pub run: WebRun,
    /// The FIFO baseline on the same network (scheduler cats with `baseline = true`).
    pub baseline: Option<WebRun>,
    /// `100·(1 − FCP / FCP of the baseline)`, %.
    pub fcp_improvement_pct: Option<f64>,
    /// Page load minus the baseline's, ns.
    pub page_load_diff_ns: Option<i64>,
}

impl WebReport {
    /// This run against `baseline`.
    pub fn new(run: WebRun, baseline: Option<WebRun>) -> WebReport {
        let b = baseline.as_ref();
        let fcp_improvement_pct = b.and_then(|b| match (run.fcp_ns, b.fcp_ns) {
            (Some(c), Some(f)) if f > 0 => Some(100.0 * (1.0 - c as f64 / f as f64)),
            _ => None,
        });
        let page_load_diff_ns = b.and_then(|b| match (run.page_load_ns, b.page_load_ns) {
            (Some(c), Some(f)) => Some(c as i64 - f as i64),
            _ => None,
        });
        WebReport {
            run,
            baseline,
            fcp_improvement_pct,
            page_load_diff_ns,
        }
    }
}

/// Bookkeeping that must hold whatever the timing: every chunk fed is in the stream once, no
/// priority is fed or delivered more than its page bytes, and a finished page delivered every
/// byte of every priority.
pub fn violations(w: &WebFlow) -> Option<String> {
    let fed: u64 = w.chunks.iter().map(|c| c.1).sum();
    if fed != w.fed {
        return Some(format!(
            "cats: chunks sum to {fed} B, stream holds {} B",
            w.fed
        ));
    }
    for p in 0..5 {
        if w.fed_bytes[p] > w.total[p] || w.delivered[p] > w.fed_bytes[p] {
            return Some(format!(
                "cats: P{p} page {} B, fed {} B, delivered {} B",
                w.total[p], w.fed_bytes[p], w.delivered[p]
            ));
        }
    }
    if w.delivered_upto >= w.total_bytes() && w.delivered != w.total {
        return Some(format!(
            "cats: page delivered but per priority {:?} ≠ {:?}",
            w.delivered, w.total
        ));
    }
    None
}

/// `--out`: `NAME_priorities.csv` (completion per priority, FCP and page load, each run a
/// column) and `NAME_delivery.csv` (bytes delivered per priority after every in-order
/// delivery), as `(path, contents)` for the caller to write together with the run's others.
pub fn out_files(
    d: &std::path::Path,
    name: &str,
    r: &WebReport,
    w: &WebFlow,
    base: Option<&WebFlow>,
) -> Vec<(std::path::PathBuf, String)> {
    use std::fmt::Write as _;
    let runs: Vec<(&WebRun, &WebFlow)> = std::iter::once((&r.run, w))
        .chain(r.baseline.iter().zip(base))
        .collect();
    let cell = |v: Option<u64>| v.map_or(String::new(), |t| t.to_string());
    let mut files = Vec::new();
    let mut s = String::from("group,bytes");
    for (run, _) in &runs {
        let _ = write!(s, ",{}_ns", run.scheduler);
    }
    s.push('\n');
    for p in 0..5 {
        let _ = write!(s, "P{p},{}", r.run.bytes[p]);
        for (run, _) in &runs {
            let _ = write!(s, ",{}", cell(run.completion_ns[p]));
        }
        s.push('\n');
    }
    let total: u64 = r.run.bytes.iter().sum();
    for (g, b, f) in [
        (
            "fcp",
            r.run.bytes[0] + r.run.bytes[1],
            (|x: &WebRun| x.fcp_ns) as fn(&WebRun) -> Option<u64>,
        ),
        ("page_load", total, |x: &WebRun| x.page_load_ns),
    ] {
        let _ = write!(s, "{g},{b}");
        for (run, _) in &runs {
            let _ = write!(s, ",{}", cell(f(run)));
        }
        s.push('\n');
    }
    files.push((d.join(format!("{name}_priorities.csv")), s));
    let mut s = String::from("scheduler,t_ns,p0_bytes,p1_bytes,p2_bytes,p3_bytes,p4_bytes\n");
    for (run, f) in &runs {
        for (t, b) in &f.progress {
            let _ = writeln!(
                s,
                "{},{t},{},{},{},{},{}",
                run.scheduler, b[0], b[1], b[2], b[3], b[4]
            );
        }
    }
    files.push((d.join(format!("{name}_delivery.csv")), s));
    files
}
