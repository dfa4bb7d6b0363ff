//! timely: f64 reference, trace format, lockstep replay and fixture generators.
//!
//! Trace format: CSV with the header row `t_send_ns,t_complete_ns,bytes`, one completion per
//! row; `#` lines are comments; `# set KEY=VALUE` lines (anywhere before the first data row) set parameters, with
//! keys exactly the `timely_cc::Params` field names (see [`params`]).
//!
//! Files, as in every algorithm folder: [`reference`](mod@reference) (the f64 reference, from the paper),
//! [`params`] (both sides' configuration from `# set` and `--set`), [`lockstep`] (both sides
//! driven by one event), `generate` (fixture generators); this module holds the trace row and
//! the algorithm's place in the one replay driver (`Replay`).

#[cfg(feature = "generate")]
pub mod generate;
pub mod lockstep;
pub use cc_reference::timely as reference;
pub use cc_trace::timely::{HEADER, INFO, Row, params};

use crate::kinds::Kind;
use crate::opts::Mode;
use crate::opts::ReplayOpts;
use crate::summary::{Agreement, At, Counts, ErrStats, Summary, rel_err};
use cc_output::plot::{self, Envelope, Panel};
use cc_trace::InputError;
use lockstep::Lockstep;
use std::path::Path;

/// The columns of `--out`, exactly.
pub const OUT_HEADER: &str =
    "event,t_ns,rtt_ns,rate_ref_bps,rate_fixed_bps,branch_ref,branch_fixed";
/// The branches in report order (their names are `timely_cc`'s, which the f64 reference's
/// labels must equal).
pub const BRANCHES: [timely_cc::TimelyBranch; 7] = {
    use timely_cc::TimelyBranch::{Dec, Hai, High, Inc, Init, Low, Skip};
    [Init, Low, High, Hai, Inc, Dec, Skip]
};

fn counts_json(c: &Counts) -> serde_json::Value {
    let mut m = serde_json::Map::new();
    for b in BRANCHES.map(timely_cc::TimelyBranch::name) {
        if let Some(n) = c.get(b) {
            m.insert(b.to_string(), n.into());
        }
    }
    serde_json::Value::Object(m)
}

/// timely in the host's registry of trace kinds ([`crate::kinds`]).
pub static ENTRY: crate::kinds::KindEntry = crate::kinds::KindEntry {
    info: &INFO,
    replay,
    #[cfg(feature = "generate")]
    fixtures,
};

/// timely as a [`Kind`].
pub const KIND: crate::kinds::Kind = crate::kinds::Kind(&ENTRY);

/// Replays one trace; one summary per trace (the one driver, [`crate::driver`]).
pub fn replay(path: &Path, opts: &ReplayOpts) -> Result<Vec<Summary>, InputError> {
    crate::driver::replay_csv::<Replay>(path, opts)
}

/// TIMELY in the replay driver: the lockstep of both sides plus what the report adds (branch
/// counts, the worst event, the free-mode run's per-step shadow).
pub struct Replay {
    ls: Lockstep,
    mode: Mode,
    forced_agree: Agreement,
    forced_err: ErrStats,
    br_ref: Counts,
    br_fixed: Counts,
    worst: Option<(f64, At, lockstep::StepOut)>,
}

impl crate::driver::SideBySide for Replay {
    const KIND: Kind = KIND;
    const OUT_HEADER: &'static str = OUT_HEADER;
    const PLOT_SERIES: usize = 4;
    type Setup = params::Both;
    type Row = Row;

    fn setup(trace: &Path, params: &[cc_trace::Param]) -> Result<params::Both, InputError> {
        params::build(trace, params)
    }

    fn new(both: &params::Both, mode: Mode) -> Self {
        Self {
            ls: Lockstep::new(both, mode),
            mode,
            forced_agree: Agreement::new("branch"),
            forced_err: ErrStats::default(),
            br_ref: Counts::default(),
            br_fixed: Counts::default(),
            worst: None,
        }
    }

    fn step(
        &mut self,
        _trace: &Path,
        line: u64,
        r: &Row,
        tally: &mut crate::driver::Tally,
    ) -> Result<(), InputError> {
        let o = self.ls.step(r.t_send_ns, r.t_complete_ns, r.bytes);
        let at = tally.at(r.t_complete_ns, Some(line));
        tally.events += 1;
        if o.branch_ref == "skip" {
            tally.skipped += 1;
        }
        // A rate branch on a measured RTT moves the state by the algorithm's rule; `init` only
        // seeds it, and an RTT of 0 ns (a trace written in µs, a send time copied into the
        // completion) is no measurement.
        if o.rtt_ns == Some(0.0) {
            tally.implausible("zero RTTs");
        } else if !matches!(o.branch_ref, "skip" | "init") {
            tally.meaningful += 1;
        }
        self.br_ref.add(o.branch_ref);
        self.br_fixed.add(o.branch_fixed);
        tally.agreement.add(o.branch_ref == o.branch_fixed, at);
        let e = rel_err(o.rate_fixed_bps as f64, o.rate_ref_bps);
        tally.err.add(e, at);
        if self.worst.as_ref().is_none_or(|w| e > w.0) {
            self.worst = Some((e, at, o));
        }
        self.forced_agree.add(o.branch_ref == o.forced_branch, at);
        self.forced_err
            .add(rel_err(o.forced_rate_bps as f64, o.rate_ref_bps), at);
        if tally.writes_rows() {
            let rtt = o.rtt_ns.map(|x| x.to_string()).unwrap_or_default();
            tally.row(format_args!(
                "{},{},{},{},{},{},{}",
                at.event,
                at.t_ns,
                rtt,
                o.rate_ref_bps,
                o.rate_fixed_bps,
                o.branch_ref,
                o.branch_fixed
            ))?;
        }
        tally.plot(
            at.event,
            r.t_complete_ns,
            &[
                o.rate_ref_bps,
                o.rate_fixed_bps as f64,
                o.rtt_ns.unwrap_or(f64::NAN),
                e,
            ],
            o.branch_ref != o.branch_fixed,
        );
        Ok(())
    }

    fn finish(self, _tally: &crate::driver::Tally, s: &mut Summary) {
        s.detail("branches ref", counts_json(&self.br_ref));
        s.detail("branches fixed", counts_json(&self.br_fixed));
        if let Some((e, at, o)) = self.worst.filter(|w| w.0 > 0.0) {
            s.detail(
                "worst event",
                format!(
                    "event {} (t = {} ns, line {}): rtt {} ns, rate ref {:.0} vs fixed {} b/s \
                     (rel. {:.2e}), branch {} / {}",
                    at.event,
                    at.t_ns,
                    at.line.unwrap_or(0),
                    o.rtt_ns.map_or("-".to_string(), |r| format!("{r:.1}")),
                    o.rate_ref_bps,
                    o.rate_fixed_bps,
                    e,
                    o.branch_ref,
                    o.branch_fixed
                ),
            );
        }
        if self.mode == Mode::Free {
            let f = self.forced_err.summary("rate");
            s.detail(
                "per-step (forced)",
                serde_json::json!({
                    "branch_agreement": self.forced_agree.ratio,
                    "rate_max_rel_err": f.max,
                    "rate_p99_rel_err": f.p99,
                    "rate_mean_rel_err": f.mean,
                }),
            );
        }
    }

    fn panels(env: &Envelope, div: f64) -> Vec<Panel> {
        vec![
            env.ref_vs_fixed(0, div, "rate (b/s)"),
            Panel::new(
                "RTT (ns)",
                vec![env.line(2, div, "RTT (serialisation removed)", plot::OTHER)],
            ),
            env.rel_err_panel(3, div, "rate rel. error"),
        ]
    }
}

/// The shipped fixtures of this kind.
#[cfg(feature = "generate")]
pub fn fixtures() -> Vec<crate::kinds::FixtureFile> {
    generate::all()
}
