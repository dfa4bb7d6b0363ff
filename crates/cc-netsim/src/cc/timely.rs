//! TIMELY (SIGCOMM 2015): the rate from the gradient of NIC-measured RTTs, one update per
//! completed TSO segment. Fixed point: `timely_cc::State::on_completion`, exactly as firmware
//! calls it; f64: the reference written from the paper.
//!
//! `[params] preset = "ns3"` (or `--set preset=ns3`) runs it as the HPCC authors' ns-3
//! simulator does (`simulation/src/point-to-point/model/rdma-hw.cc`, `HandleAckTimely` /
//! `UpdateRateTimely`, cc_mode 7, at commit `9f4be2a`): every packet paced alone (no TSO
//! segments), one update per round trip (on the first ACK past the `snd_nxt` of the previous
//! update, with that ACK's RTT sample, no serialisation subtracted), and the 1 Gb/s least rate
//! of their `simulation/run.py` (`MIN_RATE 1000Mb/s`). A key given wins over the preset's.

use super::{Ack, Algo, Cx, Entry, FlowCc, Reply, Sent};
use crate::ctrl::PRESET_KEY;
use crate::record::Format;
use crate::scenario::{ControllerKind, Loaded};
use cc_reference::timely::{RefParams, RefState};
use cc_trace::Param;
use std::collections::VecDeque;
use std::sync::Arc;

/// The registry line.
pub const ENTRY: Entry = Entry {
    name: "timely",
    setup: "the `replay timely --set` keys, line_rate_bps from topology.host_rate_bps",
    topo_keys: &["line_rate_bps"],
    refuses: super::applies_all,
    scenario_keys: &["segment_bytes"],
    int_default: false,
    needs_int: false,
    ns3_int_bytes: 8,
    ns3_keys: &[],
    build,
};

const RATE_KEY: &str = "line_rate_bps";

/// How the NIC runs TIMELY: a named set of behaviours and parameter values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preset {
    /// The paper's NIC (the default): TSO segments of the scenario's `segment_bytes`, one
    /// update per completed segment.
    Paper,
    /// As the HPCC authors' ns-3 simulator runs it (see the module's comment).
    Ns3,
}

impl Preset {
    /// Every preset, the default first.
    pub const ALL: [Preset; 2] = [Preset::Paper, Preset::Ns3];

    /// Its `preset` value.
    pub fn name(self) -> &'static str {
        match self {
            Preset::Paper => "paper",
            Preset::Ns3 => "ns3",
        }
    }

    /// The keys it sets and their values.
    pub fn values(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Preset::Paper => &[],
            Preset::Ns3 => &[("min_rate_bps", "1000000000")],
        }
    }
}

/// Both sides' configuration, the NIC's TSO segment and the preset.
struct Timely {
    cfg: Arc<timely_cc::Config>,
    rp: Arc<RefParams>,
    segment_bytes: u64,
    preset: Preset,
}

/// The preset in force: the last `preset` of `[params]` then `--set`, or `paper`; a name that
/// is no preset is refused, naming where it was given.
fn preset(l: &Loaded, extra: &[Param]) -> Result<Preset, String> {
    let names: Vec<&str> = Preset::ALL.iter().map(|p| p.name()).collect();
    super::preset_in_force(l, extra, "a timely preset", &names, Preset::Paper, |v| {
        Preset::ALL.into_iter().find(|x| x.name() == v)
    })
}

fn build(l: &Loaded, extra: &[Param]) -> Result<Box<dyn Algo>, String> {
    let preset = preset(l, extra)?;
    // The NIC rate, the preset's values, then the scenario's and --set (without `preset`).
    let mut params = super::with_nic_rate(l, RATE_KEY, extra);
    params.retain(|p| p.key != PRESET_KEY);
    let values = preset.values().iter().map(|&(k, v)| Param {
        key: k.into(),
        value: v.into(),
        source: format!("<preset {}>", preset.name()).into(),
        line: None,
    });
    params.splice(1..1, values);
    let b = cc_trace::timely::params::build(&l.file, &params).map_err(|e| e.to_string())?;
    super::check_nic_rate(l, extra, RATE_KEY, b.cfg.params().line_rate_bps)?;
    let max = b.cfg.params().max_rate_bps;
    if max > l.sc.topology.host_rate_bps {
        // The NIC cannot send faster than its link: the rate above it would never be reached.
        return Err(format!(
            "{}: {max} b/s is above the host links' {} b/s (topology.host_rate_bps of {})",
            super::given_at(l, extra, "max_rate_bps"),
            l.sc.topology.host_rate_bps,
            l.file.display()
        ));
    }
    if preset == Preset::Ns3 && l.given.contains(SEGMENT_KEY) {
        return Err(format!(
            "{}: key `{SEGMENT_KEY}`: preset ns3 sends every packet as its own segment (mtu_bytes): give one of them",
            l.file.display()
        ));
    }
    let segment_bytes = match preset {
        Preset::Paper => u64::from(l.sc.segment_bytes),
        // Every packet its own segment: paced alone, its ACK its completion.
        Preset::Ns3 => u64::from(l.sc.mtu_bytes),
    };
    Ok(Box::new(Timely {
        cfg: Arc::new(b.cfg),
        rp: Arc::new(b.reference),
        segment_bytes,
        preset,
    }))
}

impl Algo for Timely {
    /// The replay keys (a key the preset sets follows the preset when not given), then
    /// `preset` and, under `ns3`, the segment (one packet).
    fn values(&self) -> Vec<(String, String, Option<&'static str>)> {
        use cc_trace::kinds::Values as _;
        let mut v: Vec<_> = cc_trace::timely::params::Both {
            cfg: *self.cfg,
            reference: *self.rp,
        }
        .values()
        .into_iter()
        .map(|(k, val, follows)| {
            if self.preset.values().iter().any(|(pk, _)| *pk == k) {
                (k, val, Some("preset ns3"))
            } else {
                (k, val, follows)
            }
        })
        .collect();
        v.push((PRESET_KEY.into(), self.preset.name().into(), None));
        if self.preset == Preset::Ns3 {
            v.push((
                SEGMENT_KEY.into(),
                self.segment_bytes.to_string(),
                Some("preset ns3: mtu_bytes, every packet paced alone"),
            ));
        }
        v
    }

    fn new_flow(&self, kind: ControllerKind) -> Box<dyn FlowCc> {
        match kind {
            ControllerKind::Fixed => Box::new(Flow {
                side: Fixed {
                    st: timely_cc::State::new(&self.cfg),
                    cfg: self.cfg.clone(),
                },
                segs: VecDeque::new(),
                per_rtt: (self.preset == Preset::Ns3).then_some(0),
            }),
            // `ns3` is refused for TIMELY before any flow is made (`Algo::has_ns3_side`).
            ControllerKind::Reference | ControllerKind::Ns3 => Box::new(Flow {
                side: Reference {
                    st: RefState::new(&self.rp),
                    rp: self.rp.clone(),
                },
                segs: VecDeque::new(),
                per_rtt: (self.preset == Preset::Ns3).then_some(0),
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

/// The scenario key the `ns3` preset replaces (listed among the values under it; not a replay
/// key).
pub const SEGMENT_KEY: &str = "segment_bytes";

/// A TIMELY flow: its side, its outstanding segments `(start, end, t_send_ns)` and, under the
/// `ns3` preset, the `snd_nxt` of its last update (ns-3's `m_lastUpdateSeq`).
struct Flow<S> {
    side: S,
    segs: VecDeque<(u64, u64, u64)>,
    per_rtt: Option<u64>,
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
    ///
    /// Under the `ns3` preset every packet is a segment, and only the ACK past the previous
    /// update's `snd_nxt` runs the algorithm (ns-3's `ack_seq > m_lastUpdateSeq`), with the RTT
    /// of the packet it acknowledges and no serialisation subtracted (`bytes` 0); the others
    /// complete their packets without an update.
    fn on_ack(&mut self, cx: &mut Cx<'_>, a: &Ack<'_>) -> Reply {
        let now_ns = cx.now_ns();
        let mut branch = None;
        let mut last = None;
        while let Some(&(s0, s1, t_send)) = self.segs.front() {
            if s1 > a.snd_una {
                break;
            }
            self.segs.pop_front();
            if self.per_rtt.is_some() {
                last = Some(t_send);
                continue;
            }
            let bytes = (s1 - s0) as u32;
            branch = Some(self.side.complete(t_send, now_ns, bytes));
            if let Some(r) = cx.rec.as_deref_mut() {
                r.timely_row(cx.flow, t_send, now_ns, bytes);
            }
        }
        if let (Some(mark), Some(t_send)) = (self.per_rtt, last)
            && (a.seq > mark || mark == 0)
        {
            self.per_rtt = Some(a.snd_nxt);
            branch = Some(self.side.complete(t_send, now_ns, 0));
            if let Some(r) = cx.rec.as_deref_mut() {
                r.timely_row(cx.flow, t_send, now_ns, 0);
            }
        }
        Reply {
            probe: false,
            branch,
            rate_set: false,
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
