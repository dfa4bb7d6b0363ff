//! A flow's controller in the loop: the fixed-point crate (called exactly as firmware would,
//! through `timely_cc::State::on_completion` / `hpcc_cc::State::on_ack`) or the f64
//! reference, chosen per run. A small enum, no dynamic dispatch.

use super::scenario::{Algorithm, ControllerKind, Loaded, Scheduler, TopoKind};
use crate::hpcc::reference::{RefParams as HpccRefParams, Reference};
use crate::pcc::params::Setup as PccSetup;
use crate::pcc::reference::{RefHpccStep, RefPccFlow, RefPccHpccFlow, RefPccStep, RefTelemetry};
use crate::timely::reference::{RefParams as TimelyRefParams, RefState};
use crate::trace::Param;

/// The DOCA PCC setup's line rate, b/s (the adapter's `line_rate_mbps`).
fn pcc_line_bps(p: &PccSetup) -> f64 {
    f64::from(p.line_rate_mbps()) * 1e6
}

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
    /// The DOCA PCC adapter: TIMELY or HPCC, the adapter's table on both sides (exactly as
    /// `replay pcc` builds them).
    Pcc(Box<crate::pcc::params::Setup>),
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
        if l.sc.algorithm == Algorithm::Pcc {
            return Ok(Setup::Pcc(Box::new(pcc_setup(l, extra)?)));
        }
        let host = l.sc.topology.host_rate_bps;
        let rate_key = match l.sc.algorithm {
            Algorithm::Timely => "line_rate_bps",
            Algorithm::Hpcc | Algorithm::Cats | Algorithm::Pcc => "nic_rate_bps",
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
            Algorithm::Hpcc | Algorithm::Cats | Algorithm::Pcc => {
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
            Setup::Cats(_) | Setup::Pcc(_) => host,
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
            Setup::Timely { .. } | Setup::Hpcc { .. } | Setup::Pcc(_) => 0,
        }
    }

    /// Width of the RTT histogram's buckets, ns: 10 in a datacenter, 10 µs for CATS's
    /// wide-area paths (2^20 buckets either way: up to 10.5 ms or 10.5 s).
    pub fn rtt_bucket_ns(&self) -> u64 {
        match self {
            Setup::Cats(_) => 10_000,
            Setup::Timely { .. } | Setup::Hpcc { .. } | Setup::Pcc(_) => 10,
        }
    }

    /// HPCC's base RTT T, ps (0 for TIMELY).
    pub fn base_rtt_ps(&self) -> u64 {
        match self {
            Setup::Timely { .. } | Setup::Cats(_) => 0,
            Setup::Hpcc { cfg, .. } => u64::from(cfg.params().base_rtt_ns) * 1_000,
            Setup::Pcc(p) => match &**p {
                crate::pcc::params::Setup::Timely(_) => 0,
                crate::pcc::params::Setup::Hpcc(b) => {
                    u64::from(b.values[cc_pcc::hpcc::hpcc_id::BASE_RTT_NS as usize]) * 1_000
                }
            },
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
            Setup::Pcc(p) => p.values(),
        }
    }
}

/// The DOCA PCC setup: the adapter's table from `[params]` then `extra`, with
/// `line_rate_mbps` defaulting to the host link rate (and refused when it differs) and, under
/// HPCC, `link_speed_code` to the speed of the port whose telemetry the probes carry (the
/// receiver's edge link, at the host rate).
fn pcc_setup(l: &Loaded, extra: &[Param]) -> Result<crate::pcc::params::Setup, String> {
    let host = l.sc.topology.host_rate_bps;
    let topo = |key: &str, value: String| Param {
        key: key.into(),
        value,
        source: l.file.clone(),
        line: None,
    };
    if !host.is_multiple_of(1_000_000) {
        return Err(format!(
            "{}: key `topology.host_rate_bps`: {host} b/s is not a whole number of Mb/s (the \
             adapter's line_rate_mbps)",
            l.file.display()
        ));
    }
    let hpcc = l
        .params
        .iter()
        .chain(extra)
        .rev()
        .find(|p| p.key == "algorithm")
        .is_some_and(|p| p.value.trim() == "hpcc");
    let mut params = vec![topo("line_rate_mbps", (host / 1_000_000).to_string())];
    if hpcc {
        let Some(code) = hpcc_cc::int::SPEED_BPS.iter().position(|&r| r == host) else {
            return Err(format!(
                "{}: key `topology.host_rate_bps`: {host} b/s has no speed code for the \
                 telemetry's link_speed_code (10/25/40/50/100/200/400/800/1600 Gb/s)",
                l.file.display()
            ));
        };
        params.push(topo("link_speed_code", code.to_string()));
    }
    params.extend(l.params.iter().cloned());
    params.extend(extra.iter().cloned());
    let s = crate::pcc::params::build(&l.file, &params).map_err(|e| e.to_string())?;
    if l.sc.pcc_inflight_cap && !matches!(s, crate::pcc::params::Setup::Hpcc(_)) {
        return Err(format!(
            "{}: key `pcc_inflight_cap`: needs [params] algorithm = \"hpcc\" (the cap is HPCC's \
             window, rate × base_rtt_ns)",
            l.file.display()
        ));
    }
    let line = s.line_rate_mbps();
    if u64::from(line) * 1_000_000 != host {
        return Err(format!(
            "{}: key `params.line_rate_mbps`: {line} Mb/s differs from topology.host_rate_bps \
             {host} b/s",
            l.file.display()
        ));
    }
    Ok(s)
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
    /// The DOCA PCC adapter (TIMELY or HPCC, as the setup says): the flow's 48-byte context as
    /// the platform keeps it between events, and the rate of the adapter's last answer.
    PccFixed {
        /// The context.
        ctx: cc_pcc::FlowContext,
        /// Rate, Q20 of line rate.
        rate_q20: u32,
    },
    /// TIMELY on probe RTTs, the f64 reference.
    PccTimelyRef(crate::pcc::reference::RefPccFlow),
    /// HPCC on switch telemetry, the f64 reference.
    PccHpccRef(crate::pcc::reference::RefPccHpccFlow),
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
            (Setup::Pcc(p), ControllerKind::Fixed) => Ctrl::PccFixed {
                // The platform zeroes a new flow's context; the NIC starts at the rate the
                // adapter gives a new flow (TIMELY's init_rate_q20, HPCC's W_max = line rate).
                ctx: [0; cc_pcc::CONTEXT_WORDS],
                rate_q20: match &**p {
                    PccSetup::Timely(b) => {
                        b.values[cc_pcc::params::timely_id::INIT_RATE_Q20 as usize]
                    }
                    PccSetup::Hpcc(_) => cc_pcc::Q20_ONE,
                },
            },
            (Setup::Pcc(p), ControllerKind::Reference) => match &**p {
                PccSetup::Timely(b) => Ctrl::PccTimelyRef(RefPccFlow::new(&b.reference)),
                PccSetup::Hpcc(b) => Ctrl::PccHpccRef(RefPccHpccFlow::new(&b.reference)),
            },
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
            (Ctrl::PccFixed { rate_q20, .. }, Setup::Pcc(p)) => {
                f64::from(*rate_q20) * pcc_line_bps(p) / f64::from(cc_pcc::Q20_ONE)
            }
            (Ctrl::PccTimelyRef(r), Setup::Pcc(p)) => match &**p {
                PccSetup::Timely(b) => r.rate_fraction(&b.reference) * pcc_line_bps(p),
                PccSetup::Hpcc(_) => 0.0,
            },
            (Ctrl::PccHpccRef(r), Setup::Pcc(p)) => match &**p {
                PccSetup::Hpcc(b) => r.rate_fraction(&b.reference) * pcc_line_bps(p),
                PccSetup::Timely(_) => 0.0,
            },
            (Ctrl::HpccFixed(_) | Ctrl::PccFixed { .. }, _)
            | (Ctrl::PccTimelyRef(_) | Ctrl::PccHpccRef(_), _) => 0.0,
        }
    }

    /// One DOCA PCC event (`ev` as the platform fills it; `telemetry`: an RTT response's
    /// switch-telemetry record) for the adapter, which gets the 44 bytes as delivered, or the
    /// reference, which gets the same fields. Returns whether the flow asks for an RTT probe.
    pub fn on_pcc(
        &mut self,
        s: &Setup,
        ev: &cc_pcc::Event,
        telemetry: &[u8; cc_pcc::TELEMETRY_BYTES],
        counters: &mut cc_pcc::Counters,
    ) -> bool {
        use cc_pcc::EventType;
        let Setup::Pcc(p) = s else { return false };
        match (self, &**p) {
            (Ctrl::PccFixed { ctx, rate_q20 }, setup) => {
                let delivered = cc_pcc::Event::decode(&ev.encode());
                let r = match setup {
                    PccSetup::Timely(b) => {
                        cc_pcc::timely_on_event(&b.cfg, ctx, &delivered, counters)
                    }
                    PccSetup::Hpcc(b) => {
                        cc_pcc::hpcc_on_event(&b.cfg, ctx, &delivered, telemetry, counters)
                    }
                };
                *rate_q20 = r.rate_q20;
                r.rtt_req
            }
            (Ctrl::PccTimelyRef(f), PccSetup::Timely(b)) => match ev.event_type() {
                Some(EventType::Tx) => matches!(
                    f.on_tx(&b.reference, ev.ts_ns),
                    RefPccStep::Tx { probe: true, .. }
                ),
                Some(EventType::Rtt) => {
                    let [req_send, req_recv, resp_send, _] = ev.spec;
                    f.on_response(&b.reference, ev.ts_ns, req_send, req_recv, resp_send);
                    false
                }
                _ => false,
            },
            (Ctrl::PccHpccRef(f), PccSetup::Hpcc(b)) => match ev.event_type() {
                Some(EventType::Tx) => matches!(
                    f.on_tx(&b.reference, ev.ts_ns),
                    RefHpccStep::Tx { probe: true, .. }
                ),
                Some(EventType::Rtt) => {
                    let tel = RefTelemetry::decode(telemetry);
                    f.on_response(&b.reference, ev.ts_ns, ev.spec[0], &tel);
                    false
                }
                _ => false,
            },
            _ => false,
        }
    }

    /// The window, bytes (HPCC), `None` for TIMELY.
    pub fn window_bytes(&self) -> Option<f64> {
        match self {
            // The DOCA PCC adapter gives a rate only: no inflight cap.
            Ctrl::TimelyFixed(_)
            | Ctrl::TimelyRef(_)
            | Ctrl::PccFixed { .. }
            | Ctrl::PccTimelyRef(_)
            | Ctrl::PccHpccRef(_) => None,
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
    // Keys whose default the topology gives (the NIC rate; the telemetry port's speed code).
    let topo_keys: &[&str] = match l.sc.algorithm {
        Algorithm::Timely => &["line_rate_bps"],
        Algorithm::Hpcc => &["nic_rate_bps"],
        Algorithm::Pcc => &["line_rate_mbps", "link_speed_code"],
        Algorithm::Cats => &[],
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
                None if topo_keys.contains(&key.as_str()) => {
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
