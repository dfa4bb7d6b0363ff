//! The parameter table of a reference-only algorithm (one without a firmware crate, so without
//! a `replay --set` kind): each key with its default, unit and limits; the scenario's
//! `[params]` and `--set` parsed against it, every key applied or refused.

use super::super::scenario::Loaded;
use cc_trace::Param;

/// One parameter.
pub struct Key {
    /// The `[params]` / `--set` key.
    pub name: &'static str,
    /// Its default.
    pub default: f64,
    /// Least value allowed.
    pub min: f64,
    /// Largest value allowed.
    pub max: f64,
    /// Whole numbers only.
    pub integer: bool,
    /// A default that follows the line rate (the first key): this factor times it, with the
    /// text the report shows (`None`: `default` as it is).
    pub per_line_rate: Option<(f64, &'static str)>,
}

/// The first key of every table: the NIC's line rate (its default is the topology's host rate,
/// which it must equal).
pub(crate) const LINE_RATE: Key = Key {
    name: "line_rate_bps",
    default: 100e9,
    min: 1e6,
    max: 1.6e12,
    integer: true,
    per_line_rate: None,
};

/// The least rate, `MIN_RATE 1000Mb/s` of the authors' `run.py` for DCQCN and DCTCP.
pub(crate) const MIN_RATE_1G: Key = Key {
    name: "min_rate_bps",
    default: 1e9,
    min: 1.0,
    max: 1.6e12,
    integer: true,
    per_line_rate: None,
};

/// Where a parameter was set, for an error message.
fn at(l: &Loaded, p: &Param) -> String {
    if p.source == std::path::Path::new("--set") {
        format!("--set {}", p.key)
    } else if p.source == l.file {
        format!("{}: key `params.{}`", l.file.display(), p.key)
    } else {
        format!("{}: key `{}`", p.source.display(), p.key)
    }
}

/// The value of every key of `table`, in its order: the default, then each of `params` in
/// turn (the last setting wins, as `with_nic_rate` orders them); a key not given whose default
/// follows the line rate (the table's first key) is computed from it last. A key not in the table, a
/// value that is not a number, not whole where it must be, or outside the limits is refused.
pub(crate) fn parse(
    l: &Loaded,
    algo: &str,
    table: &[Key],
    params: &[Param],
) -> Result<Vec<f64>, String> {
    let mut v: Vec<f64> = table.iter().map(|k| k.default).collect();
    let mut given = vec![false; table.len()];
    for p in params {
        let Some(i) = table.iter().position(|k| k.name == p.key) else {
            let known: Vec<&str> = table.iter().map(|k| k.name).collect();
            return Err(format!(
                "{}: algorithm {algo} has no such parameter (its keys: {})",
                at(l, p),
                known.join(", ")
            ));
        };
        let k = &table[i];
        let x: f64 = p
            .value
            .trim()
            .replace('_', "")
            .parse()
            .map_err(|_| format!("{}: {:?} is not a number", at(l, p), p.value))?;
        if !x.is_finite() || x < k.min || x > k.max {
            return Err(format!(
                "{}: {x} is outside {} ..= {}",
                at(l, p),
                k.min,
                k.max
            ));
        }
        if k.integer && x.fract() != 0.0 {
            return Err(format!("{}: {x} is not a whole number", at(l, p)));
        }
        v[i] = x;
        given[i] = true;
    }
    for (i, k) in table.iter().enumerate() {
        if let (Some((factor, _)), false) = (k.per_line_rate, given[i]) {
            v[i] = (factor * v[0]).round();
        }
    }
    Ok(v)
}

/// `(key, value, what its default follows)` of every key for [`super::Algo::values`], whole
/// numbers without a fraction.
pub(crate) fn values(table: &[Key], v: &[f64]) -> Vec<(String, String, Option<&'static str>)> {
    table
        .iter()
        .zip(v)
        .map(|(k, x)| {
            let text = if k.integer {
                format!("{}", *x as u64)
            } else {
                format!("{x}")
            };
            (k.name.to_string(), text, k.per_line_rate.map(|f| f.1))
        })
        .collect()
}

/// Refuses a run of `algo` on a network whose switches mark nothing: its controller reads ECN
/// (marks echoed on ACKs or CNPs) and would never react.
pub(crate) fn need_ecn(l: &Loaded, algo: &str) -> Result<(), String> {
    let rules = super::super::ecn::rules(l).map_err(|e| e.to_string())?;
    if rules.is_empty() {
        return Err(format!(
            "{}: key `topology`: algorithm {algo} reacts to ECN marks and the switches mark \
             none: give [topology.ecn] (ns-3's Kmin/Kmax/Pmax) or topology.ecn_threshold_bytes",
            l.file.display()
        ));
    }
    Ok(())
}
