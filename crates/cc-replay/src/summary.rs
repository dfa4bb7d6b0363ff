//! What a replay concludes: agreement between the fixed-point crate and the f64 reference,
//! relative error statistics in bounded memory, tolerances and the verdict.

use crate::opts::{Mode, Tolerances};
use cc_trace::kinds::KindInfo;
use serde::Serialize;
use std::fmt::Write as _;

/// JSON for a `u64`: a number up to 2^53, a decimal string beyond (readers that hold JSON
/// numbers in f64 — JavaScript, jq, pandas — would round it).
pub fn safe_u64<S: serde::Serializer>(v: &u64, s: S) -> Result<S::Ok, S::Error> {
    if *v <= 1 << 53 {
        s.serialize_u64(*v)
    } else {
        s.serialize_str(&v.to_string())
    }
}

fn safe_opt_u64<S: serde::Serializer>(v: &Option<u64>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(x) => safe_u64(x, s),
        None => s.serialize_none(),
    }
}

/// A detail for the text report: strings as they are, numbers short, objects as `key value`
/// pairs and arrays (per priority P0..P4) as `P0 value` pairs, joined by ` · `.
fn plain(v: &serde_json::Value) -> String {
    use serde_json::Value;
    match v {
        Value::String(t) => t.clone(),
        Value::Number(n) => match (n.as_u64(), n.as_f64()) {
            (Some(i), _) => i.to_string(),
            (None, Some(f)) if f.fract() == 0.0 && f.abs() < 1e15 => format!("{f:.0}"),
            (None, Some(f)) if f != 0.0 && !(1e-3..1e6).contains(&f.abs()) => format!("{f:.3e}"),
            (None, Some(f)) => format!("{f:.4}"),
            _ => n.to_string(),
        },
        Value::Object(m) if m.is_empty() => "none".into(),
        Value::Array(a) if a.is_empty() => "none".into(),
        Value::Object(m) => m
            .iter()
            .map(|(k, v)| format!("{k} {}", plain(v)))
            .collect::<Vec<_>>()
            .join(" · "),
        Value::Array(a) => a
            .iter()
            .enumerate()
            .map(|(i, v)| match v {
                Value::Object(_) => format!("P{i} ({})", plain(v).replace(" · ", ", ")),
                _ => format!("P{i} {}", plain(v)),
            })
            .collect::<Vec<_>>()
            .join(" · "),
        Value::Null => "-".into(),
        Value::Bool(b) => b.to_string(),
    }
}

/// Where in a trace something happened.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct At {
    /// 0-based event (or chunk) number.
    #[serde(serialize_with = "safe_u64")]
    pub event: u64,
    /// Trace time of that event, ns.
    #[serde(serialize_with = "safe_u64")]
    pub t_ns: u64,
    /// Line in the trace file, where one applies.
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "safe_opt_u64"
    )]
    pub line: Option<u64>,
}

/// `|fixed − reference| / |reference|`; `0` when both are zero, `+∞` when only the reference is.
pub fn rel_err(fixed: f64, reference: f64) -> f64 {
    let d = (fixed - reference).abs();
    if d == 0.0 {
        0.0
    } else if reference == 0.0 {
        f64::INFINITY
    } else {
        d / reference.abs()
    }
}

/// Relative-error statistics in constant memory: exact max and mean, and p99 from a log-spaced
/// histogram (64 bins per decade from 1e-12 to 1e3, so p99 is reported as the upper edge of its
/// bin: at most 3.7 % above the true quantile, never below it; errors of 1e3 and more, ∞ too,
/// share the top bin, whose quantile is the exact maximum).
#[derive(Debug, Clone)]
pub struct ErrStats {
    bins: Vec<u64>,
    zeros: u64,
    count: u64,
    sum: f64,
    max: f64,
    worst: Option<At>,
}

const DECADES_LO: i32 = -12;
const DECADES_HI: i32 = 3;
const PER_DECADE: usize = 64;

impl Default for ErrStats {
    fn default() -> Self {
        Self {
            bins: vec![0; (DECADES_HI - DECADES_LO) as usize * PER_DECADE + 2],
            zeros: 0,
            count: 0,
            sum: 0.0,
            max: 0.0,
            worst: None,
        }
    }
}

impl ErrStats {
    /// Adds one relative error observed at `at`.
    pub fn add(&mut self, err: f64, at: At) {
        self.count += 1;
        if err.is_finite() {
            self.sum += err;
        } else {
            self.sum = f64::INFINITY;
        }
        if err > self.max || self.worst.is_none() {
            if err > self.max {
                self.max = err;
            }
            if err > 0.0 || self.worst.is_none() {
                self.worst = Some(at);
            }
        }
        if err <= 0.0 {
            self.zeros += 1;
            return;
        }
        let pos = (err.log10() - f64::from(DECADES_LO)) * PER_DECADE as f64;
        // `as usize` is the floor of a `pos ≥ 0` and saturates an infinite one (an infinite
        // error) into the top bin.
        let idx = if pos < 0.0 {
            0
        } else {
            (pos as usize).saturating_add(1).min(self.bins.len() - 1)
        };
        self.bins[idx] += 1;
    }

    /// Number of samples.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Largest error seen.
    pub fn max(&self) -> f64 {
        self.max
    }

    /// Mean error.
    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum / self.count as f64
        }
    }

    /// Where the largest error happened.
    pub fn worst(&self) -> Option<At> {
        self.worst
    }

    /// Quantile `q` (0..1), conservative (bin upper edge, capped at the exact max).
    pub fn quantile(&self, q: f64) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        let rank = ((q * self.count as f64).ceil() as u64).max(1);
        if rank <= self.zeros {
            return 0.0;
        }
        let mut seen = self.zeros;
        for (i, &n) in self.bins.iter().enumerate() {
            seen += n;
            if seen >= rank {
                // The top bin holds every error from 10^3 up, ∞ too: its only upper edge is
                // the maximum.
                if i == self.bins.len() - 1 {
                    return self.max;
                }
                let upper = 10f64.powf(f64::from(DECADES_LO) + i as f64 / PER_DECADE as f64);
                return upper.min(self.max);
            }
        }
        self.max
    }

    /// The summary numbers.
    pub fn summary(&self, quantity: &str) -> ErrSummary {
        ErrSummary {
            quantity: quantity.to_string(),
            max: self.max,
            p99: self.quantile(0.99),
            mean: self.mean(),
            worst: self.worst,
        }
    }
}

/// Relative error of one quantity (rate, window …).
#[derive(Debug, Clone, Serialize)]
pub struct ErrSummary {
    /// What was compared, e.g. `rate` or `window`.
    pub quantity: String,
    /// Largest relative error.
    pub max: f64,
    /// 99th percentile (conservative, see [`ErrStats`]).
    pub p99: f64,
    /// Mean.
    pub mean: f64,
    /// Where the largest error happened.
    pub worst: Option<At>,
}

/// Events per decision name (a branch), in order of first appearance. A replay sees a handful
/// of names: scanning them (by address first, the names being `'static`) costs less per event
/// than a map lookup.
#[derive(Debug, Clone, Default)]
pub struct Counts(Vec<(&'static str, u64)>);

impl Counts {
    /// Counts one event of `name`.
    pub fn add(&mut self, name: &'static str) {
        match self
            .0
            .iter_mut()
            .find(|(k, _)| std::ptr::eq(*k, name) || *k == name)
        {
            Some((_, n)) => *n += 1,
            None => self.0.push((name, 1)),
        }
    }

    /// The count of `name`, if it was seen.
    pub fn get(&self, name: &str) -> Option<u64> {
        self.0.iter().find(|(k, _)| *k == name).map(|&(_, n)| n)
    }

    /// Every name seen with its count, by name.
    pub fn by_name(&self) -> Vec<(&'static str, u64)> {
        let mut v = self.0.clone();
        v.sort_unstable();
        v
    }
}

/// Agreement of decisions (branches taken, or chunks chosen).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Agreement {
    /// What was compared: `branch` or `order`.
    pub what: String,
    /// Events where both sides decided the same.
    #[serde(serialize_with = "safe_u64")]
    pub agree: u64,
    /// Events compared.
    #[serde(serialize_with = "safe_u64")]
    pub total: u64,
    /// `agree / total` (1 when nothing was compared).
    pub ratio: f64,
    /// The first event where they differed.
    pub first_difference: Option<At>,
}

impl Agreement {
    /// A new counter for `what`.
    pub fn new(what: &str) -> Self {
        Self {
            what: what.to_string(),
            ratio: 1.0,
            ..Self::default()
        }
    }
    /// Counts one comparison.
    pub fn add(&mut self, same: bool, at: At) {
        self.total += 1;
        if same {
            self.agree += 1;
        } else if self.first_difference.is_none() {
            self.first_difference = Some(at);
        }
        self.ratio = self.agree as f64 / self.total as f64;
    }
}

/// The limits a replay was judged by, as reported.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct TolerancesUsed {
    /// Minimum agreement ratio.
    pub min_agreement: f64,
    /// Maximum p99 relative error (`None`: the kind reports no relative error).
    pub max_p99_rel_err: Option<f64>,
    /// Maximum relative error (`None`: the kind reports no relative error).
    pub max_rel_err: Option<f64>,
}

impl TolerancesUsed {
    fn of(t: Tolerances, has_rel_err: bool) -> Self {
        Self {
            min_agreement: t.min_agreement,
            max_p99_rel_err: has_rel_err.then_some(t.max_p99_rel_err),
            max_rel_err: has_rel_err.then_some(t.max_rel_err),
        }
    }
}

/// A measured value that must stay within an upper bound the algorithm guarantees (CATS: a
/// queue's worst starvation gap against its bound); [`Summary::judge`] fails the replay when it
/// does not.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Bounded {
    /// What was measured, e.g. `P2 starvation gap (bytes)`.
    pub what: String,
    /// The measured value.
    pub value: f64,
    /// Its bound (`+∞`, serialised as `null`: no finite bound exists).
    pub bound: f64,
}

/// One parameter in force, as reported: `origin` is `default`, `default (follows KEY)`,
/// `FILE:LINE` (a `# set` line) or `--set`.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct ParamReport {
    /// The key.
    pub key: String,
    /// The value the replay ran with.
    pub value: String,
    /// Where it came from.
    pub origin: String,
    /// The value with no parameters given (`null` where there is none, e.g. a per-flow key).
    pub default: Option<String>,
    /// Given, and to a value other than the default.
    pub differs: bool,
}

impl From<&cc_trace::kinds::InForce> for ParamReport {
    fn from(f: &cc_trace::kinds::InForce) -> Self {
        Self {
            key: f.key.clone(),
            value: f.value.clone(),
            origin: f.origin.describe(),
            default: f.default.clone(),
            differs: f.differs(),
        }
    }
}

/// The result of replaying one trace.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// `timely`, `hpcc` or `cats`.
    pub kind: String,
    /// The trace (file, or file plus flow for captures).
    pub trace: String,
    /// `free` or `forced`.
    pub mode: String,
    /// Events read.
    #[serde(serialize_with = "safe_u64")]
    pub events: u64,
    /// Events rejected by both sides (bad input the algorithm must ignore).
    #[serde(serialize_with = "safe_u64")]
    pub skipped: u64,
    /// Events that moved the reference's state by the algorithm's rule (for CATS and the pacer,
    /// events that led to a decision compared; for DOCA PCC, probe answers that step Algorithm
    /// 1): what the verdict rests on. Never more than `events`.
    #[serde(serialize_with = "safe_u64")]
    pub meaningful: u64,
    /// The parameters in force, each with the value run and where it came from.
    pub params: Vec<ParamReport>,
    /// Decision agreement.
    pub agreement: Agreement,
    /// Relative error of the main output, if the kind has one.
    pub rel_err: Option<ErrSummary>,
    /// Kind-specific details (branch counts, per-priority bytes, …), printed as `key: value`.
    pub details: serde_json::Map<String, serde_json::Value>,
    /// Values that must stay within their bounds (checked by [`judge`](Self::judge)).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub bounds: Vec<Bounded>,
    /// The limits applied.
    #[serde(skip)]
    pub tolerances: Tolerances,
    /// The limits applied, as JSON: the relative-error limits are `null` for a kind that has no
    /// relative error (CATS).
    #[serde(rename = "tolerances")]
    pub tolerances_used: TolerancesUsed,
    /// Which limits were broken (empty when within tolerance).
    pub failures: Vec<String>,
    /// Why nothing meaningful was compared (`null` when something was): such a result has no
    /// verdict on fidelity; it is neither within nor outside tolerance and its run exits 2, as
    /// for bad input (docs/robustness.md § 3).
    pub nothing_to_compare: Option<String>,
    /// `failures.is_empty()` and something meaningful was compared.
    pub within_tolerance: bool,
}

impl Summary {
    /// A summary before the verdict; call [`judge`](Self::judge) once filled.
    pub fn new(kind: &KindInfo, trace: String, mode: Mode, agreement: Agreement) -> Self {
        Self {
            kind: kind.name.to_string(),
            trace,
            mode: mode.name().to_string(),
            events: 0,
            skipped: 0,
            meaningful: 0,
            params: Vec::new(),
            agreement,
            rel_err: None,
            details: serde_json::Map::new(),
            bounds: Vec::new(),
            tolerances: Tolerances::for_kind(kind),
            tolerances_used: TolerancesUsed::of(Tolerances::for_kind(kind), false),
            failures: Vec::new(),
            nothing_to_compare: None,
            within_tolerance: true,
        }
    }

    /// Marks the result as comparing nothing meaningful, for `why` (its verdict is then
    /// neither pass nor fail; [`judge`](Self::judge) keeps it).
    pub fn nothing_compared(&mut self, why: impl Into<String>) {
        self.nothing_to_compare = Some(why.into());
        self.within_tolerance = false;
    }

    /// Whether a fidelity limit was broken (a result with nothing to compare has no verdict).
    pub fn outside_tolerance(&self) -> bool {
        self.nothing_to_compare.is_none() && !self.within_tolerance
    }

    /// Adds a kind-specific detail.
    pub fn detail(&mut self, key: &str, value: impl Into<serde_json::Value>) {
        self.details.insert(key.to_string(), value.into());
    }

    /// Adds a value that must not exceed `bound`.
    pub fn bound(&mut self, what: impl Into<String>, value: f64, bound: f64) {
        self.bounds.push(Bounded {
            what: what.into(),
            value,
            bound,
        });
    }

    /// Applies `tol` and the recorded [`bounds`](Self::bounds), and records the verdict.
    pub fn judge(&mut self, tol: Tolerances) {
        self.tolerances = tol;
        self.tolerances_used = TolerancesUsed::of(tol, self.rel_err.is_some());
        self.failures.clear();
        let a = &self.agreement;
        if a.ratio < tol.min_agreement {
            self.failures.push(format!(
                "{} agreement {} < {}",
                a.what,
                pct(a.ratio),
                pct(tol.min_agreement)
            ));
        }
        if let Some(e) = &self.rel_err {
            if e.p99 > tol.max_p99_rel_err {
                self.failures.push(format!(
                    "{} p99 relative error {:.3e} > {:.3e}",
                    e.quantity, e.p99, tol.max_p99_rel_err
                ));
            }
            if e.max > tol.max_rel_err {
                self.failures.push(format!(
                    "{} max relative error {:.3e} > {:.3e}",
                    e.quantity, e.max, tol.max_rel_err
                ));
            }
        }
        for b in &self.bounds {
            if b.value > b.bound {
                self.failures.push(format!(
                    "{} {} > bound {} (by {})",
                    b.what,
                    num(b.value),
                    num(b.bound),
                    num(b.value - b.bound)
                ));
            }
        }
        self.within_tolerance = self.failures.is_empty() && self.nothing_to_compare.is_none();
    }

    /// The parameters in force, two wrapped groups: those given (with where each was set) and
    /// the defaults.
    pub fn render_params(&self) -> String {
        let (given, defaults): (Vec<&ParamReport>, Vec<&ParamReport>) = self
            .params
            .iter()
            .partition(|p| !p.origin.starts_with("default"));
        let mut s = String::new();
        let mut group = |label: &str, items: Vec<String>| {
            if items.is_empty() {
                return;
            }
            let mut line = format!("  {label:<19} ");
            let indent = " ".repeat(22);
            let start = line.len();
            for (i, it) in items.iter().enumerate() {
                if line.len() > start && line.len() + it.len() > 100 {
                    s.push_str(line.trim_end());
                    s.push('\n');
                    line = indent.clone();
                }
                line.push_str(it);
                if i + 1 < items.len() {
                    line.push_str(", ");
                }
            }
            s.push_str(line.trim_end());
            s.push('\n');
        };
        group(
            "parameters given",
            given
                .iter()
                .map(|p| format!("{}={} ({})", p.key, p.value, p.origin))
                .collect(),
        );
        group(
            "defaults in force",
            defaults
                .iter()
                .map(|p| match p.origin.strip_prefix("default (") {
                    Some(f) => format!("{}={} ({}", p.key, p.value, f),
                    None => format!("{}={}", p.key, p.value),
                })
                .collect(),
        );
        s
    }

    /// The human report.
    pub fn render(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "{} replay of {} (mode {})",
            self.kind, self.trace, self.mode
        );
        let _ = writeln!(
            s,
            "  events              {} ({} skipped, {} meaningful)",
            self.events, self.skipped, self.meaningful
        );
        s.push_str(&self.render_params());
        let a = &self.agreement;
        let _ = write!(
            s,
            "  {:<19} {} ({} of {} differ)",
            format!("{} agreement", a.what),
            pct(a.ratio),
            a.total - a.agree,
            a.total
        );
        if let Some(at) = a.first_difference {
            let _ = write!(s, "; first at {}", where_(at));
        }
        s.push('\n');
        if let Some(e) = &self.rel_err {
            let _ = writeln!(
                s,
                "  {:<19} max {:.3e} · p99 {:.3e} · mean {:.3e}",
                format!("{} rel. error", e.quantity),
                e.max,
                e.p99,
                e.mean
            );
            if let Some(at) = e.worst.filter(|_| e.max > 0.0) {
                let _ = writeln!(s, "  {:<19} {}", "worst at", where_(at));
            }
        }
        for (k, v) in &self.details {
            let _ = writeln!(s, "  {k:<19} {}", plain(v));
        }
        let t = &self.tolerances;
        let mut limits = if self.rel_err.is_some() {
            format!(
                "{} ≥ {}, p99 ≤ {:.1e}, max ≤ {:.1e}",
                a.what,
                pct(t.min_agreement),
                t.max_p99_rel_err,
                t.max_rel_err
            )
        } else {
            format!("{} ≥ {}", a.what, pct(t.min_agreement))
        };
        if !self.bounds.is_empty() {
            let _ = write!(limits, ", {} values ≤ their bounds", self.bounds.len());
        }
        if let Some(why) = &self.nothing_to_compare {
            let _ = writeln!(s, "  verdict             NOTHING TO COMPARE: {why}");
        } else if self.within_tolerance {
            let _ = writeln!(s, "  verdict             PASS (within {limits})");
        } else {
            let _ = writeln!(
                s,
                "  verdict             FAIL: {} (limits {limits})",
                self.failures.join("; ")
            );
        }
        s
    }
}

/// A measured value or bound for a failure message: whole numbers from 100 up, else 4
/// significant digits.
fn num(x: f64) -> String {
    if !x.is_finite() || x.abs() >= 100.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.4}")
    }
}

/// `0.99912` → `99.912 %`.
pub fn pct(r: f64) -> String {
    format!("{:.3} %", r * 100.0)
}

fn where_(at: At) -> String {
    match at.line {
        Some(l) => format!("event {} (t = {} ns, line {})", at.event, at.t_ns, l),
        None => format!("event {} (t = {} ns)", at.event, at.t_ns),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(e: u64) -> At {
        At {
            event: e,
            t_ns: e * 10,
            line: None,
        }
    }

    #[test]
    fn p99_is_conservative_and_close() {
        let mut s = ErrStats::default();
        for i in 0..1000u64 {
            s.add(if i < 990 { 1e-6 } else { 1e-3 }, at(i));
        }
        let p = s.quantile(0.99);
        assert!((1e-6..=1.04e-6).contains(&p), "{p}");
        assert_eq!(s.max(), 1e-3);
        assert_eq!(s.worst().unwrap().event, 990);
        assert!((s.quantile(0.999) - 1e-3).abs() < 1e-12);
    }

    /// An infinite error (the reference 0, the fixed side not) counts in the top bin, and a
    /// quantile in the top bin is the maximum (∞ here), never a finite bin edge below it.
    #[test]
    fn an_infinite_error_counts_in_the_top_bin() {
        let mut s = ErrStats::default();
        for i in 0..10 {
            s.add(if i < 5 { 1e-6 } else { f64::INFINITY }, at(i));
        }
        assert!(s.quantile(0.99).is_infinite());
        assert!((1e-6..=1.04e-6).contains(&s.quantile(0.5)));
    }

    /// A name counts as the same name wherever its text lives; the report lists names sorted.
    #[test]
    fn counts_are_per_name_text() {
        let mut c = Counts::default();
        let elsewhere: &'static str = Box::leak(String::from("low").into_boxed_str());
        for name in ["low", "high", "low", elsewhere] {
            c.add(name);
        }
        assert_eq!(c.get("low"), Some(3));
        assert_eq!(c.get("dec"), None);
        assert_eq!(c.by_name(), [("high", 1), ("low", 3)]);
    }

    #[test]
    fn zeros_give_zero_quantiles() {
        let mut s = ErrStats::default();
        for i in 0..100 {
            s.add(0.0, at(i));
        }
        assert_eq!(s.quantile(0.99), 0.0);
        assert_eq!(s.max(), 0.0);
    }

    #[test]
    fn rel_err_edges() {
        assert_eq!(rel_err(1.0, 1.0), 0.0);
        assert_eq!(rel_err(0.0, 0.0), 0.0);
        assert!(rel_err(1.0, 0.0).is_infinite());
        assert!((rel_err(101.0, 100.0) - 0.01).abs() < 1e-12);
    }

    #[test]
    fn judge_reports_each_broken_limit() {
        let mut a = Agreement::new("branch");
        a.add(true, at(0));
        a.add(false, at(1));
        let mut s = Summary::new(&crate::timely::INFO, "t".into(), Mode::Free, a);
        s.rel_err = Some(ErrSummary {
            quantity: "rate".into(),
            max: 0.5,
            p99: 0.1,
            mean: 0.01,
            worst: Some(at(1)),
        });
        s.judge(Tolerances::for_kind(&crate::timely::INFO));
        assert_eq!(s.failures.len(), 3, "{:?}", s.failures);
        assert!(!s.within_tolerance);
        assert!(s.render().contains("FAIL"));
    }

    /// A value over its bound fails the verdict, naming what and by how much; a value equal to
    /// its bound, or under an infinite one, does not.
    #[test]
    fn judge_fails_a_value_over_its_bound() {
        let mut a = Agreement::new("order");
        a.add(true, at(0));
        let mut s = Summary::new(&crate::cats::INFO, "t".into(), Mode::Free, a);
        s.bound("P0 starvation gap (bytes)", 64_561.0, 64_561.0);
        s.bound("P1 starvation gap (bytes)", 1e12, f64::INFINITY);
        s.judge(Tolerances::for_kind(&crate::cats::INFO));
        assert!(s.within_tolerance, "{:?}", s.failures);
        assert!(
            s.render()
                .contains("PASS (within order ≥ 100.000 %, 2 values ≤ their bounds)")
        );
        s.bound("P3 starvation gap (bytes)", 70_000.0, 64_560.6);
        s.judge(Tolerances::for_kind(&crate::cats::INFO));
        assert_eq!(
            s.failures,
            ["P3 starvation gap (bytes) 70000 > bound 64561 (by 5439)"]
        );
        assert!(!s.within_tolerance);
        assert!(
            s.render().contains("FAIL: P3 starvation gap"),
            "{}",
            s.render()
        );
    }
}
