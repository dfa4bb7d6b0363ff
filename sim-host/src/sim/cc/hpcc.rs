//! HPCC (SIGCOMM 2019): the window from in-band network telemetry, per ACK. Fixed point:
//! `hpcc_cc::State::on_ack` with the INT bytes as on the wire, exactly as firmware calls it;
//! f64: the reference written from the paper. The scenario's `reaction` picks which ACKs reach
//! the algorithm.

use super::{Ack, Algo, Cx, Entry, FlowCc, Reply};
use crate::hpcc::reference::{RefParams, Reference as RefFlow};
use crate::sim::record::Format;
use crate::sim::scenario::{ControllerKind, Loaded, Reaction};
use crate::trace::Param;
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
    build,
};

const RATE_KEY: &str = "nic_rate_bps";

/// Both sides' configuration and the reaction.
struct Hpcc {
    cfg: Arc<hpcc_cc::Config>,
    rp: RefParams,
    reaction: Reaction,
}

fn build(l: &Loaded, extra: &[Param]) -> Result<Box<dyn Algo>, String> {
    let params = super::with_nic_rate(l, RATE_KEY, extra);
    let s = crate::hpcc::Setup::from_params(&params).map_err(|e| e.to_string())?;
    super::check_nic_rate(l, RATE_KEY, s.cfg.params().nic_rate_bps)?;
    Ok(Box::new(Hpcc {
        cfg: Arc::new(s.cfg),
        rp: s.refp,
        reaction: l.sc.reaction,
    }))
}

impl Algo for Hpcc {
    fn values(&self) -> Vec<(String, String, Option<&'static str>)> {
        use crate::trace::kinds::Values as _;
        crate::hpcc::Setup {
            cfg: *self.cfg,
            refp: self.rp,
        }
        .values()
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
        }
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
        }
    }

    fn rate_bps(&self) -> f64 {
        self.side.rate_bps()
    }

    fn window_bytes(&self) -> Option<f64> {
        Some(self.side.window_bytes())
    }
}
