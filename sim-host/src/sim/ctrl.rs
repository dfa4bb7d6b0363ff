//! A flow's controller in the loop: the fixed-point crate (called exactly as firmware would,
//! through `timely_cc::State::on_completion` / `hpcc_cc::State::on_ack`) or the f64
//! reference, chosen per run. A small enum, no dynamic dispatch.

use super::scenario::{Algorithm, ControllerKind, Loaded};
use crate::hpcc::reference::{RefParams as HpccRefParams, Reference};
use crate::timely::reference::{RefParams as TimelyRefParams, RefState};
use crate::trace::Param;

/// Both sides' configuration, from the same `key=value` parameters as `replay --set`.
#[derive(Debug, Clone)]
pub enum Setup {
    /// TIMELY.
    Timely {
        /// Firmware configuration.
        cfg: timely_cc::Config,
        /// Reference parameters.
        rp: TimelyRefParams,
    },
    /// HPCC.
    Hpcc {
        /// Firmware configuration.
        cfg: hpcc_cc::Config,
        /// Reference parameters.
        rp: HpccRefParams,
    },
}

impl Setup {
    /// Both sides from the scenario's `[params]` then `extra` (`--set`); the NIC rate key
    /// (`line_rate_bps` / `nic_rate_bps`) defaults to the host link rate and must equal it.
    pub fn build(l: &Loaded, extra: &[Param]) -> Result<Setup, String> {
        let host = l.sc.topology.host_rate_bps;
        let rate_key = match l.sc.algorithm {
            Algorithm::Timely => "line_rate_bps",
            Algorithm::Hpcc => "nic_rate_bps",
        };
        let mut params = vec![Param {
            key: rate_key.into(),
            value: host.to_string(),
            source: l.file.clone(),
            line: None,
        }];
        params.extend(l.params.iter().cloned());
        params.extend(extra.iter().cloned());
        let s = match l.sc.algorithm {
            Algorithm::Timely => {
                let b =
                    crate::timely::params::build(&l.file, &params).map_err(|e| e.to_string())?;
                Setup::Timely {
                    cfg: b.cfg,
                    rp: b.reference,
                }
            }
            Algorithm::Hpcc => {
                let s = crate::hpcc::Setup::from_params(&params).map_err(|e| e.to_string())?;
                Setup::Hpcc {
                    cfg: s.cfg,
                    rp: s.refp,
                }
            }
        };
        let nic = match &s {
            Setup::Timely { cfg, .. } => cfg.params().line_rate_bps,
            Setup::Hpcc { cfg, .. } => cfg.params().nic_rate_bps,
        };
        if nic != host {
            return Err(format!(
                "{}: key `params.{rate_key}`: {nic} b/s differs from topology.host_rate_bps {host} b/s",
                l.file.display()
            ));
        }
        Ok(s)
    }

    /// HPCC's base RTT T, ps (0 for TIMELY).
    pub fn base_rtt_ps(&self) -> u64 {
        match self {
            Setup::Timely { .. } => 0,
            Setup::Hpcc { cfg, .. } => u64::from(cfg.params().base_rtt_ns) * 1_000,
        }
    }

    /// The `# set` lines of a recorded trace: every key with the value in force.
    pub fn set_lines(&self) -> Vec<String> {
        match self {
            Setup::Timely { cfg, .. } => {
                let p = cfg.params();
                let r = |x: timely_cc::Ratio| format!("{}/{}", x.num, x.den);
                vec![
                    format!("line_rate_bps={}", p.line_rate_bps),
                    format!("min_rate_bps={}", p.min_rate_bps),
                    format!("max_rate_bps={}", p.max_rate_bps),
                    format!("init_rate_bps={}", p.init_rate_bps),
                    format!("t_low_ns={}", p.t_low_ns),
                    format!("t_high_ns={}", p.t_high_ns),
                    format!("min_rtt_ns={}", p.min_rtt_ns),
                    format!("alpha={}", r(p.alpha)),
                    format!("beta={}", r(p.beta)),
                    format!("delta_bps={}", p.delta_bps),
                    format!("hai_n={}", p.hai_n),
                    format!("hai_after={}", p.hai_after),
                    format!("app_limited={}", p.app_limited.map_or("off".to_string(), r)),
                    format!("per_completion_scaling={}", p.per_completion_scaling),
                ]
            }
            Setup::Hpcc { cfg, .. } => {
                let p = cfg.params();
                vec![
                    format!("nic_rate_bps={}", p.nic_rate_bps),
                    format!("base_rtt_ns={}", p.base_rtt_ns),
                    format!("eta={}/{}", p.eta.num, p.eta.den),
                    format!("max_stage={}", p.max_stage),
                    format!("w_ai_bytes={}", p.w_ai_bytes),
                    format!("min_rate_bps={}", p.min_rate_bps),
                ]
            }
        }
    }
}

/// One flow's controller state.
#[derive(Debug, Clone)]
pub enum Ctrl {
    /// `timely_cc::State`.
    TimelyFixed(timely_cc::State),
    /// The TIMELY f64 reference.
    TimelyRef(RefState),
    /// `hpcc_cc::State`.
    HpccFixed(hpcc_cc::State),
    /// The HPCC f64 reference (boxed: it keeps the previous INT in a `Vec`).
    HpccRef(Box<Reference>),
}

impl Ctrl {
    /// A fresh flow.
    pub fn new(s: &Setup, kind: ControllerKind) -> Ctrl {
        match (s, kind) {
            (Setup::Timely { cfg, .. }, ControllerKind::Fixed) => {
                Ctrl::TimelyFixed(timely_cc::State::new(cfg))
            }
            (Setup::Timely { rp, .. }, ControllerKind::Reference) => {
                Ctrl::TimelyRef(RefState::new(rp))
            }
            (Setup::Hpcc { cfg, .. }, ControllerKind::Fixed) => {
                Ctrl::HpccFixed(hpcc_cc::State::new(cfg))
            }
            (Setup::Hpcc { rp, .. }, ControllerKind::Reference) => {
                Ctrl::HpccRef(Box::new(Reference::new(*rp)))
            }
        }
    }

    /// The pacing rate, b/s (HPCC: `W/T`).
    pub fn rate_bps(&self, s: &Setup) -> f64 {
        match (self, s) {
            (Ctrl::TimelyFixed(st), _) => st.rate_bps() as f64,
            (Ctrl::TimelyRef(st), _) => st.rate_bps,
            (Ctrl::HpccFixed(st), Setup::Hpcc { cfg, .. }) => {
                cfg.rate_bps(st.window_bytes()) as f64
            }
            (Ctrl::HpccRef(r), _) => r.rate_bps(),
            (Ctrl::HpccFixed(_), Setup::Timely { .. }) => 0.0,
        }
    }

    /// The window, bytes (HPCC), `None` for TIMELY.
    pub fn window_bytes(&self) -> Option<f64> {
        match self {
            Ctrl::TimelyFixed(_) | Ctrl::TimelyRef(_) => None,
            Ctrl::HpccFixed(st) => Some(st.window_bytes().to_num()),
            Ctrl::HpccRef(r) => Some(r.w),
        }
    }

    /// One TIMELY completion (NIC timestamps, ns; segment bytes). Returns the branch name.
    pub fn on_completion(
        &mut self,
        s: &Setup,
        t_send_ns: u64,
        t_complete_ns: u64,
        bytes: u32,
    ) -> &'static str {
        match (self, s) {
            (Ctrl::TimelyFixed(st), Setup::Timely { cfg, .. }) => {
                let ev = timely_cc::Completion::new(t_send_ns, t_complete_ns, bytes);
                st.on_completion(cfg, &ev).branch.name()
            }
            (Ctrl::TimelyRef(st), Setup::Timely { rp, .. }) => {
                st.on_completion(rp, t_send_ns, t_complete_ns, bytes, None)
                    .branch
            }
            _ => "none",
        }
    }

    /// One HPCC ACK (sequence numbers modulo 2^32, the INT block as on the wire). Returns the
    /// branch name.
    pub fn on_ack(&mut self, s: &Setup, ack_seq: u32, snd_nxt: u32, int: &[u8]) -> &'static str {
        match (self, s) {
            (Ctrl::HpccFixed(st), Setup::Hpcc { cfg, .. }) => {
                st.on_ack(cfg, ack_seq, snd_nxt, int).branch.name()
            }
            (Ctrl::HpccRef(r), _) => r.on_ack(u64::from(ack_seq), u64::from(snd_nxt), int),
            _ => "none",
        }
    }
}
