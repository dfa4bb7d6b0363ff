//! timely: f64 reference, trace format, lockstep replay and fixture generators.
//!
//! Trace format: CSV with the header row `t_send_ns,t_complete_ns,bytes`, one completion per
//! row; `#` lines are comments; `# set KEY=VALUE` lines (before the header) set parameters, with
//! keys exactly the `timely_cc::Params` field names (see [`params::KEYS`]).

pub mod generate;
pub mod lockstep;
pub mod params;
pub mod reference;

use crate::fixtures::FixtureFile;
use crate::output::Output;
use crate::plot::{self, Envelope, Panel};
use crate::replay::Kind;
use crate::replay::ReplayOpts;
use crate::summary::{Agreement, At, ErrStats, Summary, rel_err};
use crate::trace::{InputError, TraceReader, merged_params};
use lockstep::Lockstep;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

/// The trace's header row, exactly.
pub const HEADER: &str = "t_send_ns,t_complete_ns,bytes";
/// The columns of `--out`, exactly.
pub const OUT_HEADER: &str =
    "event,t_ns,rtt_ns,rate_ref_bps,rate_fixed_bps,branch_ref,branch_fixed";
/// Branch names in report order.
pub const BRANCHES: [&str; 7] = ["init", "low", "high", "hai", "inc", "dec", "skip"];

/// One trace row.
#[derive(Debug, Clone, Copy, Deserialize)]
pub struct Row {
    /// Send time, ns.
    pub t_send_ns: u64,
    /// Completion time, ns.
    pub t_complete_ns: u64,
    /// Segment size.
    pub bytes: u32,
}

fn counts_json(c: &BTreeMap<&'static str, u64>) -> serde_json::Value {
    let mut m = serde_json::Map::new();
    for b in BRANCHES {
        if let Some(n) = c.get(b) {
            m.insert(b.to_string(), (*n).into());
        }
    }
    serde_json::Value::Object(m)
}

/// Replays one trace; one summary per trace.
pub fn replay(path: &Path, opts: &ReplayOpts) -> Result<Vec<Summary>, InputError> {
    let mut rdr = TraceReader::open(path)?;
    rdr.expect_header(HEADER)?;
    let params = merged_params(rdr.params(), &opts.params);
    let both = params::build(path, &params)?;
    let mut ls = Lockstep::new(&both, opts.mode);

    let mut out = match &opts.out {
        Some(p) => {
            let mut o = Output::create(p, &[path])?;
            o.line(format_args!("{OUT_HEADER}"))?;
            Some(o)
        }
        None => None,
    };
    // Plot: rate (ref, fixed), RTT, relative error; marks where the branches differ.
    let mut env = Envelope::new(4, plot::COLUMNS);
    let mut t0: Option<u64> = None;

    let mut agreement = Agreement::new("branch");
    let mut err = ErrStats::default();
    let mut forced_agree = Agreement::new("branch");
    let mut forced_err = ErrStats::default();
    let mut br_ref: BTreeMap<&'static str, u64> = BTreeMap::new();
    let mut br_fixed: BTreeMap<&'static str, u64> = BTreeMap::new();
    let mut events = 0u64;
    let mut skipped = 0u64;
    let mut worst: Option<(f64, At, lockstep::StepOut)> = None;

    while let Some(row) = rdr.next_row::<Row>() {
        let (line, r) = row?;
        let o = ls.step(r.t_send_ns, r.t_complete_ns, r.bytes);
        let at = At {
            event: events,
            t_ns: r.t_complete_ns,
            line: Some(line),
        };
        events += 1;
        if o.branch_ref == "skip" {
            skipped += 1;
        }
        *br_ref.entry(o.branch_ref).or_default() += 1;
        *br_fixed.entry(o.branch_fixed).or_default() += 1;
        agreement.add(o.branch_ref == o.branch_fixed, at);
        let e = rel_err(o.rate_fixed_bps as f64, o.rate_ref_bps);
        err.add(e, at);
        if worst.as_ref().is_none_or(|w| e > w.0) {
            worst = Some((e, at, o));
        }
        forced_agree.add(o.branch_ref == o.forced_branch, at);
        forced_err.add(rel_err(o.forced_rate_bps as f64, o.rate_ref_bps), at);
        if let Some(w) = out.as_mut() {
            let rtt = o.rtt_ns.map(|x| x.to_string()).unwrap_or_default();
            w.line(format_args!(
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
        if opts.plot.is_some() {
            let t0 = *t0.get_or_insert(r.t_complete_ns);
            env.offer(
                at.event,
                r.t_complete_ns.saturating_sub(t0) as f64,
                &[
                    o.rate_ref_bps,
                    o.rate_fixed_bps as f64,
                    o.rtt_ns.unwrap_or(f64::NAN),
                    e,
                ],
                o.branch_ref != o.branch_fixed,
            );
        }
    }
    if let Some(w) = out {
        w.commit()?;
    }
    if let Some(p) = &opts.plot {
        let (div, x_label) = env.time_axis();
        let panels = vec![
            Panel::new(
                "rate (b/s)",
                vec![
                    env.line(0, div, "reference (f64)", plot::REF),
                    env.line(1, div, "fixed point", plot::FIXED),
                ],
            ),
            Panel::new(
                "RTT (ns)",
                vec![env.line(2, div, "RTT (serialisation removed)", plot::OTHER)],
            ),
            Panel {
                log_y: true,
                marks: Some(("branches differ".into(), env.marks_in(div))),
                ..Panel::new(
                    "rate rel. error",
                    vec![env.line(3, div, "|fixed − ref| / ref", plot::FIXED)],
                )
            },
        ];
        let title = format!(
            "TIMELY: {} ({} mode)",
            path.file_name().and_then(|n| n.to_str()).unwrap_or("trace"),
            opts.mode.name()
        );
        plot::draw(p, &title, x_label, &panels).map_err(|e| InputError::file(p, e))?;
    }

    let mut s = Summary::new(
        Kind::Timely,
        path.display().to_string(),
        opts.mode,
        agreement,
    );
    s.events = events;
    s.skipped = skipped;
    s.rel_err = Some(err.summary("rate"));
    s.detail("branches ref", counts_json(&br_ref));
    s.detail("branches fixed", counts_json(&br_fixed));
    if let Some((e, at, o)) = worst.filter(|w| w.0 > 0.0) {
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
    if opts.mode == crate::replay::Mode::Free {
        let f = forced_err.summary("rate");
        s.detail(
            "per-step (forced)",
            serde_json::json!({
                "branch_agreement": forced_agree.ratio,
                "rate_max_rel_err": f.max,
                "rate_p99_rel_err": f.p99,
                "rate_mean_rel_err": f.mean,
            }),
        );
    }
    s.judge(opts.tolerances(Kind::Timely));
    Ok(vec![s])
}

/// The shipped fixtures of this kind.
pub fn fixtures() -> Vec<FixtureFile> {
    generate::all()
}
