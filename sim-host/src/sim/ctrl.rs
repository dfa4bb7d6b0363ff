//! A flow's controller in the loop: the fixed-point crate (called exactly as firmware would,
//! through `timely_cc::State::on_completion` / `hpcc_cc::State::on_ack`) or the f64
//! reference, chosen per run. A small enum, no dynamic dispatch.

use super::scenario::{Algorithm, ControllerKind, Loaded, Scheduler, TopoKind};
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
    /// CATS: the conductor's parameters (both sides), the page and the paced sender.
    Cats(Box<WebSetup>),
}

/// A CATS scenario's sender.
#[derive(Debug, Clone)]
pub struct WebSetup {
    /// Both conductors' parameters, exactly as `replay cats` builds them.
    pub su: crate::cats::Setup,
    /// What feeds the transport.
    pub scheduler: Scheduler,
    /// Messages `(priority, bytes)` in application order.
    pub messages: Vec<(u8, u32)>,
    /// Pacing rate on the wire, b/s.
    pub pacing_rate_bps: u64,
    /// Bytes in flight at most.
    pub window_bytes: u64,
}

impl WebSetup {
    fn build(l: &Loaded, extra: &[Param]) -> Result<WebSetup, String> {
        let (Some(w), Some(page)) = (&l.sc.web, &l.page) else {
            return Err(format!("{}: key `web`: required", l.file.display()));
        };
        let mut params = page.params.clone();
        params.extend(l.params.iter().cloned());
        params.extend(extra.iter().cloned());
        let su = crate::cats::setup(&l.file, &params).map_err(|e| e.to_string())?;
        let mss = su.cfg.mss_bytes();
        if mss != l.sc.mtu_bytes {
            return Err(format!(
                "{}: key `mtu_bytes`: {} differs from the conductor's mss_bytes {mss} (one chunk per packet)",
                l.file.display(),
                l.sc.mtu_bytes
            ));
        }
        for p in 0..5u8 {
            let n = page.messages.iter().filter(|m| m.0 == p).count();
            if n > crate::cats::QUEUE_CAPACITY {
                return Err(format!(
                    "{}: key `web.page`: {n} P{p} messages; a conductor queue holds {}",
                    l.file.display(),
                    crate::cats::QUEUE_CAPACITY
                ));
            }
        }
        let t = &l.sc.topology;
        let bottleneck = match t.kind {
            TopoKind::Star => t.host_rate_bps,
            _ => t
                .host_rate_bps
                .min(t.fabric_rate_bps.unwrap_or(t.host_rate_bps)),
        };
        let fabric_delay = t.fabric_delay_ns.unwrap_or(t.host_delay_ns);
        let one_way_ns = match t.kind {
            TopoKind::Star => 2 * t.host_delay_ns,
            TopoKind::Dumbbell => 2 * t.host_delay_ns + fabric_delay,
            TopoKind::LeafSpine => 2 * t.host_delay_ns + 2 * fabric_delay,
        };
        let pacing = w.pacing_rate_bps.unwrap_or(bottleneck);
        // Twice the bandwidth-delay product (BBR's cwnd gain), at least two packets.
        let bdp = u128::from(bottleneck) * u128::from(2 * one_way_ns) / 8_000_000_000;
        let window = w
            .window_bytes
            .unwrap_or((2 * bdp as u64).max(2 * u64::from(mss)));
        Ok(WebSetup {
            su,
            scheduler: w.scheduler,
            messages: page.messages.clone(),
            pacing_rate_bps: pacing,
            window_bytes: window,
        })
    }
}

impl Setup {
    /// Both sides from the scenario's `[params]` then `extra` (`--set`); the NIC rate key
    /// (`line_rate_bps` / `nic_rate_bps`) defaults to the host link rate and must equal it.
    pub fn build(l: &Loaded, extra: &[Param]) -> Result<Setup, String> {
        if l.sc.algorithm == Algorithm::Cats {
            return Ok(Setup::Cats(Box::new(WebSetup::build(l, extra)?)));
        }
        let host = l.sc.topology.host_rate_bps;
        let rate_key = match l.sc.algorithm {
            Algorithm::Timely => "line_rate_bps",
            Algorithm::Hpcc | Algorithm::Cats => "nic_rate_bps",
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
            Algorithm::Hpcc | Algorithm::Cats => {
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
            Setup::Cats(_) => host,
        };
        if nic != host {
            return Err(format!(
                "{}: key `params.{rate_key}`: {nic} b/s differs from topology.host_rate_bps {host} b/s",
                l.file.display()
            ));
        }
        Ok(s)
    }

    /// The least retransmission timeout, ps: 0 (the engine's datacenter timeout) except for
    /// CATS, whose wide-area TCP has RFC 6298's (and ns-3's) 1 s floor.
    pub fn min_rto_ps(&self) -> u64 {
        match self {
            Setup::Cats(_) => 1_000_000_000_000,
            Setup::Timely { .. } | Setup::Hpcc { .. } => 0,
        }
    }

    /// Width of the RTT histogram's buckets, ns: 10 in a datacenter, 10 µs for CATS's
    /// wide-area paths (2^20 buckets either way: up to 10.5 ms or 10.5 s).
    pub fn rtt_bucket_ns(&self) -> u64 {
        match self {
            Setup::Cats(_) => 10_000,
            Setup::Timely { .. } | Setup::Hpcc { .. } => 10,
        }
    }

    /// HPCC's base RTT T, ps (0 for TIMELY).
    pub fn base_rtt_ps(&self) -> u64 {
        match self {
            Setup::Timely { .. } | Setup::Cats(_) => 0,
            Setup::Hpcc { cfg, .. } => u64::from(cfg.params().base_rtt_ns) * 1_000,
        }
    }

    /// The `# set` lines of a recorded trace: every key with the value in force.
    pub fn set_lines(&self) -> Vec<String> {
        self.values()
            .into_iter()
            .map(|(k, v, _)| format!("{k}={v}"))
            .collect()
    }

    /// The parameters the controllers run with, `(key, value, what a default follows)`, as
    /// `replay` lists them (`cc_trace::kinds::Values` of the same setups).
    pub fn values(&self) -> Vec<(String, String, Option<&'static str>)> {
        use crate::trace::kinds::Values as _;
        match self {
            Setup::Timely { cfg, rp } => crate::timely::params::Both {
                cfg: *cfg,
                reference: *rp,
            }
            .values(),
            Setup::Hpcc { cfg, rp } => crate::hpcc::Setup {
                cfg: *cfg,
                refp: *rp,
            }
            .values(),
            Setup::Cats(w) => w.su.values(),
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
    /// A fixed pacing rate (b/s) and window (bytes): the CATS sender's transport.
    Paced {
        /// Pacing rate, b/s.
        rate_bps: f64,
        /// Window, bytes.
        window: f64,
    },
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
            // The controller kind picks the conductor (sim::web), not the transport.
            (Setup::Cats(w), _) => Ctrl::Paced {
                rate_bps: w.pacing_rate_bps as f64,
                window: w.window_bytes as f64,
            },
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
            (Ctrl::Paced { rate_bps, .. }, _) => *rate_bps,
            (Ctrl::HpccFixed(_), _) => 0.0,
        }
    }

    /// The window, bytes (HPCC), `None` for TIMELY.
    pub fn window_bytes(&self) -> Option<f64> {
        match self {
            Ctrl::TimelyFixed(_) | Ctrl::TimelyRef(_) => None,
            Ctrl::HpccFixed(st) => Some(st.window_bytes().to_num()),
            Ctrl::HpccRef(r) => Some(r.w),
            Ctrl::Paced { window, .. } => Some(*window),
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

/// One algorithm parameter in force in a run, and where its value came from.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ParamInForce {
    /// The key (a `replay --set` key).
    pub key: String,
    /// The value the controllers run with.
    pub value: String,
    /// `default` (TIMELY's `max_rate_bps` and `init_rate_bps`: `default: line_rate_bps`,
    /// `default: max_rate_bps`), `scenario FILE [params]`, `scenario FILE
    /// topology.host_rate_bps` (the NIC rate), `page FILE line N` (a CATS page's `# set` line)
    /// or `--set`.
    pub origin: String,
}

/// Where `p` came from, for [`ParamInForce::origin`].
fn origin(l: &Loaded, p: &Param) -> String {
    if p.source == std::path::Path::new("--set") {
        "--set".into()
    } else if p.source == l.file {
        format!("scenario {} [params]", l.file.display())
    } else {
        match p.line {
            Some(n) => format!("page {} line {n}", p.source.display()),
            None => format!("page {}", p.source.display()),
        }
    }
}

/// Every parameter in force for `setup` (built from `l` and `extra` by [`Setup::build`]): its
/// value and its origin (the last setting of the key wins, as in the build). A FIFO sender's
/// list leaves out the conductor's keys, which it does not apply.
pub fn in_force(l: &Loaded, extra: &[Param], setup: &Setup) -> Vec<ParamInForce> {
    let rate_key = match l.sc.algorithm {
        Algorithm::Timely => Some("line_rate_bps"),
        Algorithm::Hpcc => Some("nic_rate_bps"),
        Algorithm::Cats => None,
    };
    let page: &[Param] = l.page.as_ref().map_or(&[], |p| &p.params);
    let given: Vec<(&Param, String)> = page
        .iter()
        .chain(&l.params)
        .chain(extra)
        .map(|p| (p, origin(l, p)))
        .collect();
    setup
        .values()
        .into_iter()
        .filter(|(key, _, _)| applies(l, key))
        .map(|(key, value, follows)| {
            let origin = match given.iter().rev().find(|(p, _)| p.key == key) {
                Some((_, o)) => o.clone(),
                None if Some(key.as_str()) == rate_key => {
                    format!("scenario {} topology.host_rate_bps", l.file.display())
                }
                // A default tied to another key (TIMELY's max and init rates).
                None => match follows {
                    Some(k) => format!("default: {k}"),
                    None => "default".into(),
                },
            };
            ParamInForce { key, value, origin }
        })
        .collect()
}

/// The CATS conductor's own keys (`h0`…`h3`, `l0`…`l3`, `m0`…`m4`): a FIFO sender has no
/// conductor and applies only `mss_bytes` and `snd_buf_bytes`.
fn conductor_key(k: &str) -> bool {
    let b = k.as_bytes();
    b.len() == 2 && matches!(b[0], b'h' | b'l' | b'm') && b[1].is_ascii_digit()
}

/// Whether the run applies `key` (every key of the algorithm, except the conductor's under
/// `scheduler = "fifo"`).
fn applies(l: &Loaded, key: &str) -> bool {
    let fifo =
        l.sc.web
            .as_ref()
            .is_some_and(|w| w.scheduler == Scheduler::Fifo);
    !(fifo && conductor_key(key))
}

/// Refuses a parameter that the run would not apply: a `--set` key given twice (only the last
/// would apply), and the conductor's keys in `[params]` or `--set` of a `scheduler = "fifo"`
/// scenario (no conductor runs). A parameter given is applied or refused, never dropped. (A
/// page's `# set` lines describe the page and are not refused.)
pub fn check_applied(l: &Loaded, extra: &[Param]) -> Result<(), String> {
    refuse_repeated(extra)?;
    for p in l.params.iter().chain(extra) {
        if !applies(l, &p.key) {
            let at = if p.source == std::path::Path::new("--set") {
                format!("--set {}", p.key)
            } else {
                format!("{}: key `params.{}`", l.file.display(), p.key)
            };
            return Err(format!(
                "{at}: scheduler fifo has no conductor: only mss_bytes and snd_buf_bytes apply"
            ));
        }
    }
    Ok(())
}

/// Refuses a `--set` key given twice: only the last would apply.
fn refuse_repeated(extra: &[Param]) -> Result<(), String> {
    for (i, p) in extra.iter().enumerate() {
        if let Some(q) = extra[i + 1..].iter().find(|q| q.key == p.key) {
            return Err(format!(
                "--set {}: given twice ({} and {}); only one value can apply",
                p.key, p.value, q.value
            ));
        }
    }
    Ok(())
}
