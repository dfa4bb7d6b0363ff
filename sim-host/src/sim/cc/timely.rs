//! TIMELY (SIGCOMM 2015): the rate from the gradient of NIC-measured RTTs, one update per
//! completed TSO segment. Fixed point: `timely_cc::State::on_completion`, exactly as firmware
//! calls it; f64: the reference written from the paper.

use super::{Ack, Algo, Cx, Entry, FlowCc, Reply, Sent};
use crate::sim::record::Format;
use crate::sim::scenario::{ControllerKind, Loaded};
use crate::timely::reference::{RefParams, RefState};
use crate::trace::Param;
use std::collections::VecDeque;
use std::sync::Arc;

/// The registry line.
pub const ENTRY: Entry = Entry {
    name: "timely",
    setup: "the `replay timely --set` keys, line_rate_bps from topology.host_rate_bps",
    topo_keys: &["line_rate_bps"],
    refuses: super::applies_all,
    scenario_keys: &[],
    int_default: false,
    needs_int: false,
    build,
};

const RATE_KEY: &str = "line_rate_bps";

/// Both sides' configuration and the NIC's TSO segment.
struct Timely {
    cfg: Arc<timely_cc::Config>,
    rp: Arc<RefParams>,
    segment_bytes: u64,
}

fn build(l: &Loaded, extra: &[Param]) -> Result<Box<dyn Algo>, String> {
    let params = super::with_nic_rate(l, RATE_KEY, extra);
    let b = crate::timely::params::build(&l.file, &params).map_err(|e| e.to_string())?;
    super::check_nic_rate(l, RATE_KEY, b.cfg.params().line_rate_bps)?;
    Ok(Box::new(Timely {
        cfg: Arc::new(b.cfg),
        rp: Arc::new(b.reference),
        segment_bytes: u64::from(l.sc.segment_bytes),
    }))
}

impl Algo for Timely {
    fn values(&self) -> Vec<(String, String, Option<&'static str>)> {
        use crate::trace::kinds::Values as _;
        crate::timely::params::Both {
            cfg: *self.cfg,
            reference: *self.rp,
        }
        .values()
    }

    fn new_flow(&self, kind: ControllerKind) -> Box<dyn FlowCc> {
        match kind {
            ControllerKind::Fixed => Box::new(Flow {
                side: Fixed {
                    st: timely_cc::State::new(&self.cfg),
                    cfg: self.cfg.clone(),
                },
                segs: VecDeque::new(),
            }),
            ControllerKind::Reference => Box::new(Flow {
                side: Reference {
                    st: RefState::new(&self.rp),
                    rp: self.rp.clone(),
                },
                segs: VecDeque::new(),
            }),
        }
    }

    fn segment_bytes(&self) -> Option<u64> {
        Some(self.segment_bytes)
    }

    fn record_format(&self) -> Format {
        Format::Timely
    }
}

/// One side's TIMELY step.
trait Side: Send {
    const NAME: &'static str;
    /// One completion (NIC timestamps, ns; segment bytes); the branch taken.
    fn complete(&mut self, t_send_ns: u64, t_complete_ns: u64, bytes: u32) -> &'static str;
    fn rate_bps(&self) -> f64;
}

struct Fixed {
    cfg: Arc<timely_cc::Config>,
    st: timely_cc::State,
}

impl Side for Fixed {
    const NAME: &'static str = "timely fixed";
    fn complete(&mut self, t_send_ns: u64, t_complete_ns: u64, bytes: u32) -> &'static str {
        let ev = timely_cc::Completion::new(t_send_ns, t_complete_ns, bytes);
        self.st.on_completion(&self.cfg, &ev).branch.name()
    }
    fn rate_bps(&self) -> f64 {
        self.st.rate_bps() as f64
    }
}

struct Reference {
    rp: Arc<RefParams>,
    st: RefState,
}

impl Side for Reference {
    const NAME: &'static str = "timely reference";
    fn complete(&mut self, t_send_ns: u64, t_complete_ns: u64, bytes: u32) -> &'static str {
        self.st
            .on_completion(&self.rp, t_send_ns, t_complete_ns, bytes, None)
            .branch
    }
    fn rate_bps(&self) -> f64 {
        self.st.rate_bps
    }
}

/// A TIMELY flow: its side and its outstanding segments `(start, end, t_send_ns)`.
struct Flow<S> {
    side: S,
    segs: VecDeque<(u64, u64, u64)>,
}

impl<S: Side> FlowCc for Flow<S> {
    fn name(&self) -> &'static str {
        S::NAME
    }

    fn on_send(&mut self, cx: &mut Cx<'_>, s: &Sent) -> Option<Reply> {
        if let Some((start, end)) = s.segment {
            self.segs.push_back((start, end, cx.now_ns()));
        }
        // A segment's send time is recorded; the algorithm runs on its completion.
        None
    }

    /// Every segment whose last byte is now acknowledged completes, in order:
    /// `t_send` = when its first packet went on the wire, `t_complete` = now.
    fn on_ack(&mut self, cx: &mut Cx<'_>, a: &Ack<'_>) -> Reply {
        let now_ns = cx.now_ns();
        let mut branch = None;
        while let Some(&(s0, s1, t_send)) = self.segs.front() {
            if s1 > a.snd_una {
                break;
            }
            self.segs.pop_front();
            let bytes = (s1 - s0) as u32;
            branch = Some(self.side.complete(t_send, now_ns, bytes));
            if let Some(r) = cx.rec.as_deref_mut() {
                r.timely_row(cx.flow, t_send, now_ns, bytes);
            }
        }
        Reply {
            probe: false,
            branch,
        }
    }

    fn on_rewind(&mut self, snd_nxt: u64) {
        while self.segs.back().is_some_and(|s| s.1 > snd_nxt) {
            self.segs.pop_back();
        }
    }

    fn on_timeout(&mut self) {
        self.segs.clear();
    }

    fn rate_bps(&self) -> f64 {
        self.side.rate_bps()
    }

    fn window_bytes(&self) -> Option<f64> {
        None
    }
}
