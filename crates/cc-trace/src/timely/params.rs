//! `# set KEY=VALUE` / `--set KEY=VALUE` → the fixed-point `Params` and the reference's
//! `RefParams`, from the same text (keys are exactly the `timely_cc::Params` field names).

use crate::{InputError, Param};
use cc_reference::timely::RefParams;
use std::path::Path;
use timely_cc::{Config, ConfigError, Params, Ratio};

/// Both sides' parameters, built from the same settings.
#[derive(Debug, Clone)]
pub struct Both {
    /// The firmware configuration.
    pub cfg: Config,
    /// The reference's parameters.
    pub reference: RefParams,
}

fn parse_u64(p: &Param) -> Result<u64, InputError> {
    p.uint()
}

fn parse_u32(p: &Param) -> Result<u32, InputError> {
    p.uint_as::<u32>()
}

/// A ratio written as a decimal (`0.875`) or a fraction (`7/8`), kept exact.
fn parse_ratio(p: &Param) -> Result<Ratio, InputError> {
    let (num, den) = p.ratio()?;
    Ok(Ratio::new(num, den))
}

fn ratio_f64(r: Ratio) -> f64 {
    f64::from(r.num) / f64::from(r.den)
}

fn parse_bool(p: &Param) -> Result<bool, InputError> {
    p.boolean()
}

/// The keys a configuration error is about.
fn blame(e: ConfigError) -> (&'static [&'static str], &'static str) {
    use ConfigError::*;
    match e {
        LineRateTooLow => (&["line_rate_bps"], "line_rate_bps must be at least 1 Mb/s"),
        ZeroRate => (
            &["min_rate_bps", "max_rate_bps", "init_rate_bps", "delta_bps"],
            "rates must be non-zero",
        ),
        RateNotRepresentable => (
            &["min_rate_bps", "max_rate_bps", "init_rate_bps", "delta_bps"],
            "rates must be within 1/8192 of a multiple of 128 b/s (any rate ≥ 524288 b/s is)",
        ),
        MinAboveMax => (
            &["min_rate_bps", "max_rate_bps"],
            "min_rate_bps is above max_rate_bps",
        ),
        InitOutOfRange => (
            &["init_rate_bps", "min_rate_bps", "max_rate_bps"],
            "init_rate_bps must lie in [min_rate_bps, max_rate_bps]",
        ),
        RateTooHigh => (
            &["max_rate_bps", "line_rate_bps"],
            "max_rate_bps is above the rate format's top (≈ 549.7 Gb/s)",
        ),
        TLowAboveTHigh => (&["t_low_ns", "t_high_ns"], "t_low_ns is above t_high_ns"),
        THighOutOfRange => (
            &["t_high_ns"],
            "t_high_ns must be in 1 ..= 134217727 ns (timely_cc::MAX_RTT_NS, the RTT format's top)",
        ),
        ZeroMinRtt => (&["min_rtt_ns"], "min_rtt_ns must be > 0"),
        AlphaOutOfRange => (&["alpha"], "alpha must be in [1/16, 1]"),
        BetaOutOfRange => (&["beta"], "beta must be in (0, 1]"),
        BetaOverMinRttTooSmall => (
            &["beta", "min_rtt_ns"],
            "beta/min_rtt_ns is too small to represent",
        ),
        ZeroHaiN => (&["hai_n"], "hai_n must be ≥ 1"),
        HaiAfterTooLarge => (&["hai_after"], "hai_after must be ≤ 255"),
        AppLimitedOutOfRange => (&["app_limited"], "app_limited must be in (0, 1] or off"),
    }
}

impl crate::kinds::Values for Both {
    fn values(&self) -> Vec<(String, String, Option<&'static str>)> {
        let p = self.cfg.params();
        let r = |x: Ratio| crate::ratio_text(u64::from(x.num), u64::from(x.den));
        vec![
            ("line_rate_bps".into(), p.line_rate_bps.to_string(), None),
            ("min_rate_bps".into(), p.min_rate_bps.to_string(), None),
            (
                "max_rate_bps".into(),
                p.max_rate_bps.to_string(),
                Some("line_rate_bps"),
            ),
            (
                "init_rate_bps".into(),
                p.init_rate_bps.to_string(),
                Some("max_rate_bps"),
            ),
            ("t_low_ns".into(), p.t_low_ns.to_string(), None),
            ("t_high_ns".into(), p.t_high_ns.to_string(), None),
            ("min_rtt_ns".into(), p.min_rtt_ns.to_string(), None),
            ("alpha".into(), r(p.alpha), None),
            ("beta".into(), r(p.beta), None),
            ("delta_bps".into(), p.delta_bps.to_string(), None),
            ("hai_n".into(), p.hai_n.to_string(), None),
            ("hai_after".into(), p.hai_after.to_string(), None),
            (
                "app_limited".into(),
                p.app_limited.map_or_else(|| "off".into(), r),
                None,
            ),
            (
                "per_completion_scaling".into(),
                p.per_completion_scaling.to_string(),
                None,
            ),
        ]
    }
}

/// Builds both sides' parameters from `params` (trace `# set` lines first, then `--set`).
pub fn build(trace: &Path, params: &[Param]) -> Result<Both, InputError> {
    let mut p = Params::DEFAULT;
    let (mut max_set, mut init_set) = (false, false);
    for q in params {
        match q.key.as_str() {
            "line_rate_bps" => p.line_rate_bps = parse_u64(q)?,
            "min_rate_bps" => p.min_rate_bps = parse_u64(q)?,
            "max_rate_bps" => {
                p.max_rate_bps = parse_u64(q)?;
                max_set = true;
            }
            "init_rate_bps" => {
                p.init_rate_bps = parse_u64(q)?;
                init_set = true;
            }
            "t_low_ns" => p.t_low_ns = parse_u32(q)?,
            "t_high_ns" => p.t_high_ns = parse_u32(q)?,
            "min_rtt_ns" => p.min_rtt_ns = parse_u32(q)?,
            "alpha" => p.alpha = parse_ratio(q)?,
            "beta" => p.beta = parse_ratio(q)?,
            "delta_bps" => p.delta_bps = parse_u64(q)?,
            "hai_n" => p.hai_n = parse_u32(q)?,
            "hai_after" => p.hai_after = parse_u32(q)?,
            "app_limited" => {
                let v = q.value.trim().to_ascii_lowercase();
                p.app_limited = if matches!(v.as_str(), "off" | "none" | "0" | "false") {
                    None
                } else {
                    Some(parse_ratio(q)?)
                };
            }
            "per_completion_scaling" => p.per_completion_scaling = parse_bool(q)?,
            other => {
                return Err(q.error(format!(
                    "unknown parameter {other:?} (known: {})",
                    super::INFO.key_list()
                )));
            }
        }
    }
    // The defaults tie max and init to the line rate (docs/timely.md § "API").
    if !max_set {
        p.max_rate_bps = p.line_rate_bps;
    }
    if !init_set {
        p.init_rate_bps = p.max_rate_bps;
    }
    let cfg = Config::new(p).map_err(|e| {
        let (keys, msg) = blame(e);
        match params.iter().rev().find(|q| keys.contains(&q.key.as_str())) {
            Some(q) => q.error(format!("invalid configuration ({e:?}): {msg}")),
            None => InputError::file(trace, format!("invalid configuration ({e:?}): {msg}")),
        }
    })?;
    let reference = RefParams {
        line_rate_bps: p.line_rate_bps,
        min_rate_bps: p.min_rate_bps as f64,
        max_rate_bps: p.max_rate_bps as f64,
        init_rate_bps: p.init_rate_bps as f64,
        t_low_ns: f64::from(p.t_low_ns),
        t_high_ns: f64::from(p.t_high_ns),
        min_rtt_ns: f64::from(p.min_rtt_ns),
        alpha: ratio_f64(p.alpha),
        beta: ratio_f64(p.beta),
        delta_bps: p.delta_bps as f64,
        hai_n: f64::from(p.hai_n),
        hai_after: u64::from(p.hai_after),
        app_limited: p.app_limited.map(ratio_f64),
        per_completion_scaling: p.per_completion_scaling,
    };
    Ok(Both { cfg, reference })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn set(k: &str, v: &str) -> Param {
        Param {
            key: k.into(),
            value: v.into(),
            source: PathBuf::from("--set"),
            line: None,
        }
    }

    #[test]
    fn defaults_match_reference_defaults() {
        let b = build(Path::new("t.csv"), &[]).unwrap();
        assert_eq!(b.reference, RefParams::default());
        assert_eq!(*b.cfg.params(), Params::DEFAULT);
    }

    #[test]
    fn ratios_are_exact() {
        assert_eq!(parse_ratio(&set("beta", "0.8")).unwrap(), Ratio::new(8, 10));
        assert_eq!(parse_ratio(&set("beta", "7/8")).unwrap(), Ratio::new(7, 8));
        assert_eq!(parse_ratio(&set("beta", "1")).unwrap(), Ratio::new(1, 1));
        assert!(parse_ratio(&set("beta", "-0.5")).is_err());
        assert!(parse_ratio(&set("beta", "abc")).is_err());
    }

    #[test]
    fn bad_config_names_the_setting() {
        let file_param = Param {
            key: "t_low_ns".into(),
            value: "600000".into(),
            source: PathBuf::from("x.csv"),
            line: Some(3),
        };
        let e = build(Path::new("x.csv"), &[file_param]).unwrap_err();
        assert_eq!(e.line, Some(3));
        assert!(e.to_string().starts_with("x.csv:3: "), "{e}");
        let e = build(Path::new("x.csv"), &[set("beta", "0")]).unwrap_err();
        assert!(e.to_string().starts_with("--set: "), "{e}");
        let e = build(Path::new("x.csv"), &[set("gamma", "1")]).unwrap_err();
        assert!(e.msg.contains("unknown parameter"), "{e}");
    }

    #[test]
    fn line_rate_carries_max_and_init() {
        let b = build(Path::new("t"), &[set("line_rate_bps", "25e9")]).unwrap();
        assert_eq!(b.cfg.params().max_rate_bps, 25_000_000_000);
        assert_eq!(b.reference.init_rate_bps, 25e9);
    }
}
