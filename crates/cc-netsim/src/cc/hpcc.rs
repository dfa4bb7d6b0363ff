//! HPCC (SIGCOMM 2019): the window from in-band network telemetry, per ACK. Fixed point:
//! `hpcc_cc::State::on_ack` with the INT bytes as on the wire, exactly as firmware calls it;
//! f64: the reference written from the paper. The scenario's `reaction` picks which ACKs reach
//! the algorithm.
//!
//! The parameters, lowest precedence first: the NIC rate from the host links; `T`
//! (`base_rtt_ns`) from the topology, its longest base RTT ([`crate::paths`]), which also
//! makes the initial window (`nic_rate·T`) the largest bandwidth-delay product; the preset's
//! values ([`Preset`], `[params] preset` or `--set preset=`, default `authors`); then the
//! scenario's `[params]` and `--set`.

use super::{Ack, Algo, Cx, Entry, FlowCc, Reply};
use crate::ctrl::PRESET_KEY;
use crate::paths;
use crate::record::Format;
use crate::scenario::{ControllerKind, Loaded, Reaction};
use cc_reference::hpcc::{RefParams, RefState as RefFlow};
use cc_trace::Param;
use std::path::PathBuf;
use std::sync::Arc;

/// The registry line.
pub const ENTRY: Entry = Entry {
    name: "hpcc",
    setup: "the `replay hpcc --set` keys, nic_rate_bps from topology.host_rate_bps",
    topo_keys: &["nic_rate_bps"],
    refuses: super::applies_all,
    scenario_keys: &["reaction"],
    int_default: true,
    needs_int: true,
    ns3_int_bytes: 42,
    ns3_keys: &[RATE_AI_KEY],
    build,
};

const RATE_KEY: &str = "nic_rate_bps";
/// `--controller ns3` only: ns-3's `RATE_AI`, the additive increase as a rate, b/s (default:
/// `w_ai_bytes · 8 / T`). The crate's W_AI is whole bytes; ns-3's 50 Mb/s at T = 8.2 µs is
/// 51.25 B.
const RATE_AI_KEY: &str = "rate_ai_bps";

/// A named set of HPCC parameter values, applied before the scenario's `[params]` (a key given
/// there or with `--set` wins over the preset's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preset {
    /// What the authors ran (the default): `maxStage` 0 and `η` 0.95. Their simulator's
    /// `simulation/mix/config.txt` sets `MI_THRESH 0` and `U_TARGET 0.95`,
    /// `simulation/mix/config_doc.txt` names `MI_THRESH` "maxStage in paper", and its
    /// `simulation/run.py` defaults `--mi` to 0 and `--utgt` to 95 (github.com/alibaba-edu/
    /// High-Precision-Congestion-Control at commit `9f4be2a`).
    Authors,
    /// The values the paper prints: `maxStage` 5 and `η` 0.95.
    Paper,
}

impl Preset {
    /// Every preset, the default first.
    pub const ALL: [Preset; 2] = [Preset::Authors, Preset::Paper];

    /// Its `preset` value.
    pub fn name(self) -> &'static str {
        match self {
            Preset::Authors => "authors",
            Preset::Paper => "paper",
        }
    }

    /// The preset named `name`.
    pub fn named(name: &str) -> Option<Preset> {
        Preset::ALL.into_iter().find(|p| p.name() == name.trim())
    }

    /// The keys it sets and their values.
    pub fn values(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Preset::Authors => &[("max_stage", "0"), ("eta", "0.95")],
            Preset::Paper => &[("max_stage", "5"), ("eta", "0.95")],
        }
    }

    /// The origin the report gives a value it set.
    fn origin(self) -> &'static str {
        match self {
            Preset::Authors => "preset authors",
            Preset::Paper => "preset paper",
        }
    }
}

/// Both sides' configuration, the reaction and the preset.
struct Hpcc {
    cfg: Arc<hpcc_cc::Config>,
    rp: RefParams,
    reaction: Reaction,
    preset: Preset,
    /// `rate_ai_bps` when given (`--controller ns3` only).
    rate_ai_bps: Option<u64>,
}

/// The preset in force: the last `preset` of `[params]` then `--set`, or `authors`; a name
/// that is no preset is refused, naming where it was given.
pub fn preset(l: &Loaded, extra: &[Param]) -> Result<Preset, String> {
    let names: Vec<&str> = Preset::ALL.iter().map(|p| p.name()).collect();
    super::preset_in_force(
        l,
        extra,
        "an hpcc preset",
        &names,
        Preset::Authors,
        Preset::named,
    )
}

/// The parameters HPCC is built from, lowest precedence first (see the module's comment).
pub fn params(l: &Loaded, extra: &[Param]) -> Result<(Preset, Vec<Param>), String> {
    let preset = preset(l, extra)?;
    let given = |src: PathBuf, (k, v): (&str, String)| Param {
        key: k.into(),
        value: v,
        source: src,
        line: None,
    };
    let mut v = vec![given(
        l.file.clone(),
        (RATE_KEY, l.sc.topology.host_rate_bps.to_string()),
    )];
    v.extend(paths::topology_params(l, &["base_rtt_ns"]));
    v.extend(preset.values().iter().map(|&(k, val)| {
        given(
            PathBuf::from(format!("<{}>", preset.origin())),
            (k, val.to_string()),
        )
    }));
    v.extend(
        l.params
            .iter()
            .chain(extra)
            .filter(|p| p.key != PRESET_KEY && p.key != RATE_AI_KEY)
            .cloned(),
    );
    Ok((preset, v))
}

fn build(l: &Loaded, extra: &[Param]) -> Result<Box<dyn Algo>, String> {
    let (preset, params) = params(l, extra)?;
    let s = cc_trace::hpcc::Setup::from_params(&params).map_err(|e| e.to_string())?;
    super::check_nic_rate(l, extra, RATE_KEY, s.cfg.params().nic_rate_bps)?;
    let nic = s.cfg.params().nic_rate_bps;
    let rate_ai_bps = match l
        .params
        .iter()
        .chain(extra)
        .rev()
        .find(|p| p.key == RATE_AI_KEY)
    {
        None => None,
        Some(p) => match p.value.parse::<u64>() {
            Ok(v) if v > 0 && v <= nic => Some(v),
            _ => {
                return Err(format!(
                    "{}: {:?}: must be a whole number of b/s in 1 ..= the NIC rate {nic}",
                    super::given_at(l, extra, RATE_AI_KEY),
                    p.value
                ));
            }
        },
    };
    Ok(Box::new(Hpcc {
        cfg: Arc::new(s.cfg),
        rp: s.refp,
        reaction: l.sc.reaction,
        preset,
        rate_ai_bps,
    }))
}

impl Algo for Hpcc {
    /// The replay keys (a key the preset sets follows the preset when not given), then
    /// `preset`.
    fn values(&self) -> Vec<(String, String, Option<&'static str>)> {
        use cc_trace::kinds::Values as _;
        let mut v: Vec<_> = cc_trace::hpcc::Setup {
            cfg: *self.cfg,
            refp: self.rp,
        }
        .values()
        .into_iter()
        .map(|(k, val, follows)| {
            let by_preset = self.preset.values().iter().any(|(pk, _)| *pk == k);
            let follows = if by_preset {
                Some(self.preset.origin())
            } else {
                follows
            };
            (k, val, follows)
        })
        .collect();
        v.push((PRESET_KEY.into(), self.preset.name().into(), None));
        if let Some(r) = self.rate_ai_bps {
            v.push((RATE_AI_KEY.into(), r.to_string(), None));
        }
        v
    }

    fn new_flow(&self, kind: ControllerKind) -> Box<dyn FlowCc> {
        match kind {
            ControllerKind::Fixed => Box::new(Flow {
                side: Fixed {
                    st: hpcc_cc::State::new(&self.cfg),
                    cfg: self.cfg.clone(),
                },
                reaction: self.reaction,
                rtt_mark: 0,
            }),
            ControllerKind::Reference => Box::new(Flow {
                side: RefFlow::new(self.rp),
                reaction: self.reaction,
                rtt_mark: 0,
            }),
            ControllerKind::Ns3 => Box::new(Flow {
                side: super::hpcc_ns3::Ns3Hpcc::new(self.cfg.params(), self.rate_ai_bps),
                reaction: self.reaction,
                rtt_mark: 0,
            }),
        }
    }

    fn has_ns3_side(&self) -> bool {
        true
    }

    fn record_format(&self) -> Format {
        Format::Hpcc
    }
}

/// One side's HPCC step.
trait Side: Send {
    const NAME: &'static str;
    /// One ACK (sequence numbers modulo 2^32, the INT block as on the wire); the branch.
    fn ack(&mut self, ack_seq: u32, snd_nxt: u32, int: &[u8]) -> &'static str;
    fn rate_bps(&self) -> f64;
    fn window_bytes(&self) -> f64;
}

struct Fixed {
    cfg: Arc<hpcc_cc::Config>,
    st: hpcc_cc::State,
}

impl Side for Fixed {
    const NAME: &'static str = "hpcc fixed";
    fn ack(&mut self, ack_seq: u32, snd_nxt: u32, int: &[u8]) -> &'static str {
        self.st
            .on_ack(&self.cfg, ack_seq, snd_nxt, int)
            .branch
            .name()
    }
    fn rate_bps(&self) -> f64 {
        self.cfg.rate_bps(self.st.window_bytes()) as f64
    }
    fn window_bytes(&self) -> f64 {
        self.st.window_bytes().to_num()
    }
}

impl Side for super::hpcc_ns3::Ns3Hpcc {
    const NAME: &'static str = "hpcc ns3";
    fn ack(&mut self, ack_seq: u32, snd_nxt: u32, int: &[u8]) -> &'static str {
        super::hpcc_ns3::Ns3Hpcc::ack(self, ack_seq, snd_nxt, int)
    }
    fn rate_bps(&self) -> f64 {
        super::hpcc_ns3::Ns3Hpcc::rate_bps(self)
    }
    fn window_bytes(&self) -> f64 {
        super::hpcc_ns3::Ns3Hpcc::window_bytes(self)
    }
}

impl Side for RefFlow {
    const NAME: &'static str = "hpcc reference";
    fn ack(&mut self, ack_seq: u32, snd_nxt: u32, int: &[u8]) -> &'static str {
        self.on_ack(u64::from(ack_seq), u64::from(snd_nxt), int)
    }
    fn rate_bps(&self) -> f64 {
        RefFlow::rate_bps(self)
    }
    fn window_bytes(&self) -> f64 {
        self.w
    }
}

/// An HPCC flow: its side and, under `reaction = "per_rtt"`, the `snd_nxt` of the last update.
struct Flow<S> {
    side: S,
    reaction: Reaction,
    rtt_mark: u64,
}

impl<S: Side> FlowCc for Flow<S> {
    fn name(&self) -> &'static str {
        S::NAME
    }

    /// `ack_seq` = the receiver's next expected byte, `snd_nxt` = the sender's, mod 2^32;
    /// `per_ack` passes `snd_nxt = ack_seq`, `per_rtt` only the first ACK past the previous
    /// update's `snd_nxt`.
    fn on_ack(&mut self, cx: &mut Cx<'_>, a: &Ack<'_>) -> Reply {
        let (ack32, nxt32) = (a.seq as u32, a.snd_nxt as u32);
        let call = match self.reaction {
            Reaction::Hpcc => Some((ack32, nxt32)),
            Reaction::PerAck => Some((ack32, ack32)),
            Reaction::PerRtt => {
                if a.seq > self.rtt_mark || self.rtt_mark == 0 {
                    self.rtt_mark = a.snd_nxt;
                    Some((ack32, nxt32))
                } else {
                    None
                }
            }
        };
        let Some((s_ack, s_nxt)) = call else {
            return Reply::default();
        };
        let branch = self.side.ack(s_ack, s_nxt, a.int);
        if let Some(r) = cx.rec.as_deref_mut() {
            let now_ns = cx.now_ps / 1_000;
            r.hpcc_row(cx.flow, now_ns, s_ack, s_nxt, a.int);
            r.hpcc_capture_row(cx.flow, now_ns, a.seq, a.snd_nxt, a.int);
        }
        Reply {
            probe: false,
            branch: Some(branch),
            // A window step sets the rate (ns-3: `ChangeRate` after every update).
            rate_set: matches!(branch, "md" | "ai"),
        }
    }

    fn rate_bps(&self) -> f64 {
        self.side.rate_bps()
    }

    fn window_bytes(&self) -> Option<f64> {
        Some(self.side.window_bytes())
    }
}
