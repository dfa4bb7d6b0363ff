//! DCQCN (Zhu et al., SIGCOMM 2015): the sender's rate from the CNPs its receiver sends when
//! CE-marked data arrives, with an α updated on a timer, a cut per decrease interval, and
//! fast recovery, additive and hyper increase on a timer (and a byte counter). An f64
//! reference only ([`reference`](mod@reference)): there is no firmware crate, so `--controller fixed` is
//! refused. The receivers send a flow at most one CNP per `cnp_interval_ns`.

pub mod reference;

use super::keys::{self, Key};
use super::{Ack, Algo, Cx, Entry, FlowCc, Reply, Sent};
use crate::record::Format;
use crate::scenario::{ControllerKind, Loaded};
use cc_trace::Param;
use reference::{Params, State};

/// The registry line.
pub const ENTRY: Entry = Entry {
    name: "dcqcn",
    setup: "the keys of sim/cc/dcqcn (ns-3 mix/config.txt defaults), line_rate_bps from topology.host_rate_bps",
    topo_keys: &["line_rate_bps"],
    refuses: super::applies_all,
    scenario_keys: &[],
    int_default: false,
    needs_int: false,
    ns3_int_bytes: 0,
    ns3_keys: &[],
    build,
};

/// The parameters; defaults as the HPCC authors ran DCQCN (`simulation/run.py --cc dcqcn`,
/// commit `9f4be2a`, which writes ns-3's `mix/config.txt` keys named in the comments; `bw` is
/// the host link rate in Gb/s).
pub const KEYS: &[Key] = &[
    keys::LINE_RATE,
    // MIN_RATE 1000Mb/s
    keys::MIN_RATE_1G,
    // RATE_AI 5·bw/25 Mb/s (20 Mb/s at 100 Gb/s)
    Key {
        name: "rate_ai_bps",
        default: 0.0,
        min: 0.0,
        max: 1.6e12,
        integer: true,
        per_line_rate: Some((2e-4, "line_rate_bps/5000 (run.py: RATE_AI 5·bw/25 Mb/s)")),
    },
    // RATE_HAI 50·bw/25 Mb/s (200 Mb/s at 100 Gb/s)
    Key {
        name: "rate_hai_bps",
        default: 0.0,
        min: 0.0,
        max: 1.6e12,
        integer: true,
        per_line_rate: Some((2e-3, "line_rate_bps/500 (run.py: RATE_HAI 50·bw/25 Mb/s)")),
    },
    // EWMA_GAIN 0.00390625 (1/256)
    Key {
        name: "g",
        default: 0.00390625,
        min: 0.0,
        max: 1.0,
        integer: false,
        per_line_rate: None,
    },
    // ALPHA_RESUME_INTERVAL 1 (µs)
    Key {
        name: "alpha_interval_ns",
        default: 1_000.0,
        min: 1.0,
        max: 1e9,
        integer: true,
        per_line_rate: None,
    },
    // RATE_DECREASE_INTERVAL 4 (µs)
    Key {
        name: "decrease_interval_ns",
        default: 4_000.0,
        min: 1.0,
        max: 1e9,
        integer: true,
        per_line_rate: None,
    },
    // RP_TIMER 300 (µs)
    Key {
        name: "rp_timer_ns",
        default: 300_000.0,
        min: 1.0,
        max: 1e10,
        integer: true,
        per_line_rate: None,
    },
    // FAST_RECOVERY_TIMES 1
    Key {
        name: "fast_recovery_times",
        default: 1.0,
        min: 0.0,
        max: 1e6,
        integer: true,
        per_line_rate: None,
    },
    // No byte counter in ns-3's Mellanox version (the DCQCN paper's B is 10 MB).
    Key {
        name: "byte_counter_bytes",
        default: 0.0,
        min: 0.0,
        max: 1e12,
        integer: true,
        per_line_rate: None,
    },
    // CLAMP_TARGET_RATE 0
    Key {
        name: "clamp_target_rate",
        default: 0.0,
        min: 0.0,
        max: 1.0,
        integer: true,
        per_line_rate: None,
    },
    // RdmaHw's RateOnFirstCnp 1.0 (run.py does not set it)
    Key {
        name: "rate_on_first_cnp",
        default: 1.0,
        min: 0.0,
        max: 1.0,
        integer: false,
        per_line_rate: None,
    },
    // The receiver's CNP interval: ns-3 flags every ACK of a CE-marked packet; one CNP per
    // α slot (ALPHA_RESUME_INTERVAL) carries what the sender keeps of them.
    Key {
        name: "cnp_interval_ns",
        default: 1_000.0,
        min: 0.0,
        max: 1e9,
        integer: true,
        per_line_rate: None,
    },
    // HAS_WIN 0; else bytes in flight ≤ win·Rc/line rate (VAR_WIN 1)
    Key {
        name: "win_bytes",
        default: 0.0,
        min: 0.0,
        max: 1e12,
        integer: true,
        per_line_rate: None,
    },
];

/// The run's setup.
struct Dcqcn {
    v: Vec<f64>,
    p: Params,
    cnp_interval_ps: u64,
    win_bytes: f64,
}

fn build(l: &Loaded, extra: &[Param]) -> Result<Box<dyn Algo>, String> {
    let params = super::with_nic_rate(l, "line_rate_bps", extra);
    let v = keys::parse(l, "dcqcn", KEYS, &params)?;
    super::check_nic_rate(l, extra, "line_rate_bps", v[0] as u64)?;
    keys::need_ecn(l, "dcqcn")?;
    let ns = |x: f64| x as u64 * 1_000;
    let p = Params {
        line_rate_bps: v[0],
        min_rate_bps: v[1],
        rate_ai_bps: v[2],
        rate_hai_bps: v[3],
        g: v[4],
        alpha_interval_ps: ns(v[5]),
        decrease_interval_ps: ns(v[6]),
        rp_timer_ps: ns(v[7]),
        fast_recovery_times: v[8] as u32,
        byte_counter_bytes: v[9] as u64,
        clamp_target_rate: v[10] != 0.0,
        rate_on_first_cnp: v[11],
    };
    if p.min_rate_bps > p.line_rate_bps {
        return Err(format!(
            "{}: key `params.min_rate_bps`: {} b/s is above the line rate {} b/s",
            l.file.display(),
            p.min_rate_bps,
            p.line_rate_bps
        ));
    }
    Ok(Box::new(Dcqcn {
        cnp_interval_ps: ns(v[12]),
        win_bytes: v[13],
        v,
        p,
    }))
}

impl Algo for Dcqcn {
    fn values(&self) -> Vec<(String, String, Option<&'static str>)> {
        keys::values(KEYS, &self.v)
    }

    fn new_flow(&self, kind: ControllerKind) -> Box<dyn FlowCc> {
        // `run_loaded` refuses a fixed-point run of a reference-only algorithm first.
        assert_eq!(kind, ControllerKind::Reference, "dcqcn is reference only");
        Box::new(Flow {
            st: State::new(&self.p),
            p: self.p,
            win_bytes: self.win_bytes,
        })
    }

    fn cnp_interval_ps(&self) -> Option<u64> {
        Some(self.cnp_interval_ps)
    }

    fn reference_only(&self) -> Option<&'static str> {
        Some("DCQCN is a baseline: an f64 reference, no firmware crate")
    }

    fn record_format(&self) -> Format {
        unreachable!("`run_loaded` refuses --record for a reference-only algorithm")
    }
}

/// One flow's reaction point.
struct Flow {
    p: Params,
    st: State,
    win_bytes: f64,
}

impl FlowCc for Flow {
    fn name(&self) -> &'static str {
        "dcqcn reference"
    }

    fn on_send(&mut self, cx: &mut Cx<'_>, s: &Sent) -> Option<Reply> {
        self.st
            .on_sent(&self.p, cx.now_ps, u64::from(s.payload))
            .map(|b| Reply {
                probe: false,
                branch: Some(b),
                rate_set: false,
            })
    }

    fn on_ack(&mut self, cx: &mut Cx<'_>, _a: &Ack<'_>) -> Reply {
        Reply {
            probe: false,
            branch: self.st.advance(&self.p, cx.now_ps),
            rate_set: false,
        }
    }

    fn on_cnp(&mut self, cx: &mut Cx<'_>) -> Reply {
        Reply {
            probe: false,
            branch: Some(self.st.on_cnp(&self.p, cx.now_ps)),
            rate_set: false,
        }
    }

    fn rate_bps(&self) -> f64 {
        self.st.rc
    }

    fn window_bytes(&self) -> Option<f64> {
        // ns-3 VAR_WIN: win·Rc/line rate, at least one byte.
        (self.win_bytes > 0.0).then(|| {
            (self.win_bytes * self.st.rc / self.p.line_rate_bps)
                .floor()
                .max(1.0)
        })
    }
}
