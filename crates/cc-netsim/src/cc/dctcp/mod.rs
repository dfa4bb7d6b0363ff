//! DCTCP (Alizadeh et al., SIGCOMM 2010) as the HPCC authors' ns-3 simulator runs it: a rate,
//! cut by `(1 − α/2)` on an ECN echo once per window, α the EWMA of the marked fraction per
//! window, additive increase per window ([`reference`](mod@reference)). An f64 reference only: there is no
//! firmware crate, so `--controller fixed` is refused.

pub mod reference;

use super::keys::{self, Key};
use super::{Ack, Algo, Cx, Entry, FlowCc, Reply};
use crate::record::Format;
use crate::scenario::{ControllerKind, Loaded};
use cc_trace::Param;
use reference::{Params, State};

/// The registry line.
pub const ENTRY: Entry = Entry {
    name: "dctcp",
    setup: "the keys of sim/cc/dctcp (ns-3 mix/config.txt defaults), line_rate_bps from topology.host_rate_bps",
    topo_keys: &["line_rate_bps"],
    refuses: super::applies_all,
    scenario_keys: &[],
    int_default: false,
    needs_int: false,
    ns3_int_bytes: 0,
    ns3_keys: &[],
    build,
};

/// The parameters; defaults as the HPCC authors ran DCTCP (`simulation/run.py --cc dctcp`,
/// commit `9f4be2a`, which writes ns-3's `mix/config.txt` keys named in the comments).
pub const KEYS: &[Key] = &[
    keys::LINE_RATE,
    // MIN_RATE 1000Mb/s
    keys::MIN_RATE_1G,
    // DCTCP_RATE_AI 615 Mb/s (run.py: "calculated from RTT=13us and MTU=1KB")
    Key {
        name: "rate_ai_bps",
        default: 615e6,
        min: 0.0,
        max: 1.6e12,
        integer: true,
        per_line_rate: None,
    },
    // EWMA_GAIN 0.0625 (1/16, the DCTCP paper's g)
    Key {
        name: "g",
        default: 0.0625,
        min: 0.0,
        max: 1.0,
        integer: false,
        per_line_rate: None,
    },
    // HAS_WIN 1, VAR_WIN 1: bytes in flight ≤ win·R/line rate, win = the topology's largest
    // bandwidth-delay product (third.cc maxBdp) unless given; 0: no window.
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
struct Dctcp {
    v: Vec<f64>,
    p: Params,
    win_bytes: f64,
}

fn build(l: &Loaded, extra: &[Param]) -> Result<Box<dyn Algo>, String> {
    // The window defaults to the topology's largest bandwidth-delay product (ns-3's maxBdp);
    // the scenario and `--set` win over it.
    let mut params = super::with_nic_rate(l, "line_rate_bps", extra);
    params.splice(1..1, crate::paths::topology_params(l, &["win_bytes"]));
    let v = keys::parse(l, "dctcp", KEYS, &params)?;
    super::check_nic_rate(l, extra, "line_rate_bps", v[0] as u64)?;
    keys::need_ecn(l, "dctcp")?;
    let p = Params {
        line_rate_bps: v[0],
        min_rate_bps: v[1],
        rate_ai_bps: v[2],
        g: v[3],
        mtu_bytes: u64::from(l.sc.mtu_bytes),
    };
    if p.min_rate_bps > p.line_rate_bps {
        return Err(format!(
            "{}: key `params.min_rate_bps`: {} b/s is above the line rate {} b/s",
            l.file.display(),
            p.min_rate_bps,
            p.line_rate_bps
        ));
    }
    Ok(Box::new(Dctcp {
        win_bytes: v[4],
        v,
        p,
    }))
}

impl Algo for Dctcp {
    fn values(&self) -> Vec<(String, String, Option<&'static str>)> {
        keys::values(KEYS, &self.v)
    }

    fn new_flow(&self, kind: ControllerKind) -> Box<dyn FlowCc> {
        // `run_loaded` refuses a fixed-point run of a reference-only algorithm first.
        assert_eq!(kind, ControllerKind::Reference, "dctcp is reference only");
        Box::new(Flow {
            st: State::new(&self.p),
            p: self.p,
            win_bytes: self.win_bytes,
        })
    }

    fn reference_only(&self) -> Option<&'static str> {
        Some("DCTCP is a baseline: an f64 reference, no firmware crate")
    }

    fn record_format(&self) -> Format {
        unreachable!("`run_loaded` refuses --record for a reference-only algorithm")
    }
}

/// One flow's sender.
struct Flow {
    p: Params,
    st: State,
    win_bytes: f64,
}

impl FlowCc for Flow {
    fn name(&self) -> &'static str {
        "dctcp reference"
    }

    /// Every ACK (NACKs too, as ns-3's `ReceiveAck` hands both to it) with its ECN echo.
    fn on_ack(&mut self, _cx: &mut Cx<'_>, a: &Ack<'_>) -> Reply {
        Reply {
            probe: false,
            branch: Some(self.st.on_ack(&self.p, a.seq, a.snd_nxt, a.ecn_echo)),
            rate_set: false,
        }
    }

    fn rate_bps(&self) -> f64 {
        self.st.rate_bps
    }

    fn window_bytes(&self) -> Option<f64> {
        (self.win_bytes > 0.0).then(|| {
            (self.win_bytes * self.st.rate_bps / self.p.line_rate_bps)
                .floor()
                .max(1.0)
        })
    }
}
