//! The registry of trace kinds: for each, its name, title, header row, what its agreement counts,
//! its default tolerances and every parameter key with its default, unit and limits. The host's
//! replay, its `--help`, the fixtures, the reports and fw-bench iterate this list; adding a kind
//! is one entry here (and its own module).

use crate::Param;

/// One parameter key of a kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Key {
    /// The key as written in `# set KEY=VALUE` and `--set KEY=VALUE` (a `.<flow>` suffix names a
    /// family: `seg_bytes.<flow>`).
    pub name: &'static str,
    /// The default, in words where it depends on another key (`line rate`).
    pub default: &'static str,
    /// The unit (`b/s`, `ns`, `bytes`, `ratio`, …).
    pub unit: &'static str,
    /// The values accepted, as the code enforces them.
    pub limits: &'static str,
    /// Other kinds' names for the same quantity (`line_rate_bps` for HPCC's `nic_rate_bps`): a
    /// `--set` of one of them is refused with this key suggested.
    pub aka: &'static [&'static str],
}

/// Default tolerances of a kind (the fidelity targets of each algorithm page's "Measured
/// fidelity").
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DefaultTolerances {
    /// Minimum agreement ratio (branches or order).
    pub min_agreement: f64,
    /// Maximum p99 relative error (0 for kinds that report none).
    pub max_p99_rel_err: f64,
    /// Maximum relative error (0 for kinds that report none).
    pub max_rel_err: f64,
}

/// Decisions must agree on 99.9 % of events; rate or window within 1e-3 at p99 and 1e-2 at most
/// (docs/timely.md § "Measured fidelity", docs/hpcc.md § 8).
pub const ESTIMATE_TOLERANCES: DefaultTolerances = DefaultTolerances {
    min_agreement: 0.999,
    max_p99_rel_err: 1e-3,
    max_rel_err: 1e-2,
};

/// Decisions, not estimates: the order must be identical (CATS, the pacer).
pub const ORDER_TOLERANCES: DefaultTolerances = DefaultTolerances {
    min_agreement: 1.0,
    max_p99_rel_err: 0.0,
    max_rel_err: 0.0,
};

/// What the registry knows of one trace kind.
#[derive(Debug, Clone, Copy)]
pub struct KindInfo {
    /// Its name on the command line (`timely`).
    pub name: &'static str,
    /// Its name in titles (`TIMELY`).
    pub title: &'static str,
    /// One line: what a trace of this kind holds.
    pub about: &'static str,
    /// The CSV header row that identifies the kind, exactly.
    pub header: &'static str,
    /// What one row is, for `--help`.
    pub rows: &'static str,
    /// What the agreement counts: `branch` or `order`.
    pub agreement: &'static str,
    /// The quantity whose relative error is reported (`rate`, `window`), if any.
    pub rel_err_of: Option<&'static str>,
    /// Whether `--mode forced` means something for this kind (re-seeding the fixed side).
    pub has_forced_mode: bool,
    /// What a meaningful event is (`--min-meaningful`, `replay KIND --help`): the events the
    /// verdict rests on (docs/robustness.md § 3).
    pub meaningful: &'static str,
    /// Whether pcap/pcapng captures are traces of this kind.
    pub reads_captures: bool,
    /// Default tolerances.
    pub tolerances: DefaultTolerances,
    /// Every parameter key.
    pub keys: &'static [Key],
}

impl KindInfo {
    /// Whether `key` is one of the kind's parameters (a family key `x.<flow>` matches `x.N`).
    pub fn has_key(&self, key: &str) -> bool {
        self.key(key).is_some()
    }

    /// The key's entry (a family key `x.<flow>` matches `x.N` for a whole number `N`).
    pub fn key(&self, key: &str) -> Option<&'static Key> {
        self.keys.iter().find(|k| match k.name.split_once(".<") {
            Some((stem, _)) => key
                .strip_prefix(stem)
                .and_then(|r| r.strip_prefix('.'))
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())),
            None => k.name == key,
        })
    }

    /// The key names, comma-separated (for messages).
    pub fn key_list(&self) -> String {
        self.keys
            .iter()
            .map(|k| k.name)
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The key of this kind closest to `key` by edit distance, if any is close (for "did you
    /// mean" hints).
    pub fn closest_key(&self, key: &str) -> Option<&'static str> {
        if let Some(k) = self.keys.iter().find(|k| k.aka.contains(&key)) {
            return Some(k.name);
        }
        self.keys
            .iter()
            .map(|k| (edit_distance(k.name, key), k.name))
            .filter(|&(d, name)| d <= name.len().max(key.len()) / 2)
            .min()
            .map(|(_, n)| n)
    }

    /// The `--help` text of the kind's format and keys, generated from this entry.
    pub fn help(&self) -> String {
        use std::fmt::Write as _;
        let mut t = format!(
            "Trace: CSV, header row `{}`, {}. `#` lines are comments; `# set KEY=VALUE` lines \
             before the first data row (before or after the header row) set parameters; `--set \
             KEY=VALUE` wins over them (`--set {}.KEY=VALUE` in `replay all`). Every report lists \
             the parameters in force and where each came from.\n\nKeys (default; unit; limits):\n",
            self.header, self.rows, self.name
        );
        let w = self.keys.iter().map(|k| k.name.len()).max().unwrap_or(0);
        for k in self.keys {
            let _ = writeln!(
                t,
                "  {:<w$}  {}; {}; {}",
                k.name, k.default, k.unit, k.limits
            );
        }
        t
    }
}

/// Every trace kind, in report order.
pub static KINDS: [&KindInfo; 5] = [
    &crate::timely::INFO,
    &crate::hpcc::INFO,
    &crate::cats::INFO,
    &crate::pacer::INFO,
    &crate::pcc::INFO,
];

/// The kind named `name`.
pub fn by_name(name: &str) -> Option<&'static KindInfo> {
    KINDS.iter().copied().find(|k| k.name == name)
}

/// The kind whose header row is `header` (spaces removed).
pub fn by_header(header: &str) -> Option<&'static KindInfo> {
    KINDS.iter().copied().find(|k| k.header == header)
}

/// Levenshtein distance (small strings: parameter names).
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

/// A kind's configuration, as the report lists it.
pub trait Values {
    /// The parameters in force, `(key, value, what a default follows)`: every key of the kind
    /// with the value the replay runs with (after defaults and derivations; CATS multipliers as
    /// rounded to 2^-16), in the registry's order.
    fn values(&self) -> Vec<(String, String, Option<&'static str>)>;
}

/// Where a parameter's value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// The kind's default (with what it follows, e.g. `line_rate_bps`, if it is derived).
    Default(Option<&'static str>),
    /// A `# set` line, `--set`, or a scenario key: the [`Param`] that set it last.
    Given(Param),
}

impl Origin {
    /// `default`, `default (= line_rate_bps)`, `FILE:LINE` (a `# set` line) or `--set`.
    pub fn describe(&self) -> String {
        match self {
            Origin::Default(None) => "default".into(),
            Origin::Default(Some(from)) => format!("default (follows {from})"),
            Origin::Given(p) => match p.line {
                Some(l) => format!("{}:{l}", p.source.display()),
                None => p.source.display().to_string(),
            },
        }
    }
}

/// One parameter in force: its key, the value the replay ran with, and where that came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InForce {
    /// The key.
    pub key: String,
    /// The value in force, as the setup holds it (after defaults and derivations).
    pub value: String,
    /// Where it came from.
    pub origin: Origin,
    /// The value with nothing given (`None` where the key has no value then, e.g. a per-flow
    /// key).
    pub default: Option<String>,
}

impl InForce {
    /// Given, and to a value other than the default: what makes this run differ from one
    /// with no parameters.
    pub fn differs(&self) -> bool {
        matches!(self.origin, Origin::Given(_)) && self.default.as_ref() != Some(&self.value)
    }
}

/// The parameters in force: for each `(key, value, derived_from)` of `setup`, the last of
/// `given` that set the key (or the default), beside the value of `defaults` (the setup built
/// from no parameters).
pub fn in_force(
    setup: &impl Values,
    defaults: Option<&impl Values>,
    given: &[Param],
) -> Vec<InForce> {
    let dflt = defaults.map(Values::values).unwrap_or_default();
    setup
        .values()
        .into_iter()
        .map(|(key, value, derived)| {
            let origin = match given.iter().rev().find(|p| p.key == key) {
                Some(p) => Origin::Given(p.clone()),
                None => Origin::Default(derived),
            };
            let default = dflt.iter().find(|d| d.0 == key).map(|d| d.1.clone());
            InForce {
                key,
                value,
                origin,
                default,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_is_found_by_name_and_header() {
        for k in KINDS {
            assert_eq!(by_name(k.name).map(|x| x.name), Some(k.name));
            assert_eq!(by_header(k.header).map(|x| x.name), Some(k.name));
        }
    }

    #[test]
    fn family_keys_match_numbered_members_only() {
        let p = by_name("pacer").unwrap();
        assert!(p.has_key("seg_bytes.7"));
        assert!(!p.has_key("seg_bytes."));
        assert!(!p.has_key("seg_bytes.x"));
        assert!(p.has_key("seg_bytes"));
    }

    #[test]
    fn closest_key_suggests_the_near_name() {
        let h = by_name("hpcc").unwrap();
        assert_eq!(h.closest_key("line_rate_bps"), Some("nic_rate_bps"));
        assert_eq!(h.closest_key("nic_rate"), Some("nic_rate_bps"));
        assert_eq!(h.closest_key("zzzzzzzzzzzzzzzzzzzz"), None);
    }
}
