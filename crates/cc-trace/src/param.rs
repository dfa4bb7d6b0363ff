//! The one grammar of parameters: a `KEY=VALUE` [`Param`] and where it came from, the rules for
//! its values (whole numbers, ratios, decimals, booleans), `--set` on the command line, and the
//! rule that makes a comment a parameter (`# set KEY=VALUE` in a trace, `set` comments in a
//! pcapng).

use crate::InputError;
use std::fmt;
use std::path::PathBuf;

/// One `KEY=VALUE` parameter and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Param {
    /// Parameter name (a `Config` field name).
    pub key: String,
    /// Its value, as written.
    pub value: String,
    /// The trace file, or `--set` when it came from the command line.
    pub source: PathBuf,
    /// Line in `source` (`None` for the command line).
    pub line: Option<u64>,
}

impl Param {
    /// An error about this parameter, pointing at where it was set.
    pub fn error(&self, msg: impl Into<String>) -> InputError {
        InputError {
            file: self.source.clone(),
            line: self.line,
            msg: msg.into(),
        }
    }

    /// Parses the value as a number (or anything `FromStr`), naming the key on failure.
    pub fn parse<T: std::str::FromStr>(&self) -> Result<T, InputError> {
        self.value.trim().parse::<T>().map_err(|_| {
            self.error(format!(
                "parameter {}: cannot read {:?} as a {}",
                self.key,
                self.value,
                short_type_name::<T>()
            ))
        })
    }
}

/// The one set of rules for parameter values, used by every kind:
/// * whole numbers: decimal digits, `_` between digits allowed (`10_000_000`), or an exact
///   scientific form (`10e9`, `2.5e6`); no sign, no fraction, no `0x`;
/// * ratios: a decimal with at most 9 decimals (`0.875`, kept exact as 875/1000) or a fraction
///   of whole numbers (`7/8`);
/// * decimals (CATS multipliers): any finite number ≥ 0;
/// * booleans: `true`/`false`, `on`/`off`, `yes`/`no`, `1`/`0`.
impl Param {
    /// A whole number ≥ 0 (see the rules above).
    pub fn uint(&self) -> Result<u64, InputError> {
        let v = self.value.trim();
        let bad = || {
            self.error(format!(
                "parameter {}: {v:?} is not a whole number ≥ 0 (write 10000000, 10_000_000 or 10e6)",
                self.key
            ))
        };
        let digits = v.replace('_', "");
        if v.starts_with('_') || v.ends_with('_') || v.contains("__") {
            return Err(bad());
        }
        if !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit()) {
            return digits.parse::<u64>().map_err(|_| bad());
        }
        // Scientific notation, exact only: `10e9`, `2.5e6`.
        let lower = digits.to_ascii_lowercase();
        let Some((mant, exp)) = lower.split_once('e') else {
            return Err(bad());
        };
        let exp: u32 = exp.parse().map_err(|_| bad())?;
        let (int, frac) = mant.split_once('.').unwrap_or((mant, ""));
        if int.is_empty() || !int.chars().chain(frac.chars()).all(|c| c.is_ascii_digit()) {
            return Err(bad());
        }
        let frac = frac.trim_end_matches('0');
        let shift = exp.checked_sub(frac.len() as u32).ok_or_else(bad)?;
        let m: u64 = format!("{int}{frac}").parse().map_err(|_| bad())?;
        10u64
            .checked_pow(shift)
            .and_then(|p| m.checked_mul(p))
            .ok_or_else(bad)
    }

    /// A whole number that fits `T` (e.g. `u32`), naming its limit otherwise.
    pub fn uint_as<T: TryFrom<u64> + fmt::Display + num_max::Max>(&self) -> Result<T, InputError> {
        let x = self.uint()?;
        T::try_from(x).map_err(|_| {
            self.error(format!(
                "parameter {}: {x} is too large (at most {})",
                self.key,
                T::MAX_VALUE
            ))
        })
    }

    /// A ratio `num/den`, exact (see the rules above).
    pub fn ratio(&self) -> Result<(u32, u32), InputError> {
        let v = self.value.trim();
        let bad = || {
            self.error(format!(
                "parameter {}: {v:?} is not a ratio (write a decimal like 0.875 with at most 9 \
                 decimals, or a fraction like 7/8)",
                self.key
            ))
        };
        if let Some((a, b)) = v.split_once('/') {
            let num = a.trim().parse::<u32>().map_err(|_| bad())?;
            let den = b.trim().parse::<u32>().map_err(|_| bad())?;
            return Ok((num, den));
        }
        let (int, frac) = v.split_once('.').unwrap_or((v, ""));
        if frac.len() > 9
            || (int.is_empty() && frac.is_empty())
            || !int.chars().chain(frac.chars()).all(|c| c.is_ascii_digit())
        {
            return Err(bad());
        }
        let den = 10u64.pow(frac.len() as u32);
        let i: u64 = if int.is_empty() {
            0
        } else {
            int.parse().map_err(|_| bad())?
        };
        let f: u64 = if frac.is_empty() {
            0
        } else {
            frac.parse().map_err(|_| bad())?
        };
        let num = i
            .checked_mul(den)
            .and_then(|x| x.checked_add(f))
            .ok_or_else(bad)?;
        Ok((
            u32::try_from(num).map_err(|_| bad())?,
            u32::try_from(den).map_err(|_| bad())?,
        ))
    }

    /// A finite decimal ≥ 0.
    pub fn decimal(&self) -> Result<f64, InputError> {
        match self.value.trim().parse::<f64>() {
            Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
            _ => Err(self.error(format!(
                "parameter {}: {:?} is not a finite number ≥ 0",
                self.key, self.value
            ))),
        }
    }

    /// A boolean (see the rules above).
    pub fn boolean(&self) -> Result<bool, InputError> {
        match self.value.trim().to_ascii_lowercase().as_str() {
            "true" | "1" | "on" | "yes" => Ok(true),
            "false" | "0" | "off" | "no" => Ok(false),
            _ => Err(self.error(format!(
                "parameter {}: {:?} is not a boolean (true/false)",
                self.key, self.value
            ))),
        }
    }
}

/// The largest value of an integer type, for messages.
pub mod num_max {
    /// `MAX` of an integer type.
    pub trait Max {
        /// The largest value.
        const MAX_VALUE: u64;
    }
    impl Max for u8 {
        const MAX_VALUE: u64 = u8::MAX as u64;
    }
    impl Max for u16 {
        const MAX_VALUE: u64 = u16::MAX as u64;
    }
    impl Max for u32 {
        const MAX_VALUE: u64 = u32::MAX as u64;
    }
    impl Max for u64 {
        const MAX_VALUE: u64 = u64::MAX;
    }
}

fn short_type_name<T>() -> &'static str {
    let n = std::any::type_name::<T>();
    n.rsplit("::").next().unwrap_or(n)
}

/// Parses `KEY=VALUE` from the command line's `--set`.
pub fn parse_cli_set(s: &str) -> Result<Param, String> {
    let (k, v) = s
        .split_once('=')
        .ok_or_else(|| format!("--set {s:?}: expected KEY=VALUE"))?;
    if k.trim().is_empty() {
        return Err(format!("--set {s:?}: empty key"));
    }
    Ok(Param {
        key: k.trim().to_string(),
        value: v.trim().to_string(),
        source: PathBuf::from("--set"),
        line: None,
    })
}

/// The one rule that makes a comment a parameter, for every input that carries parameters as
/// comments (a trace's `# set` lines, a pcapng section header's `set` comments): `set`, in
/// lowercase, then a space or a tab, then `KEY=VALUE`. `body` is the comment's text after its
/// marker (`# ` in a trace, nothing in a pcapng), which errors quote with `marker` before it.
///
/// `Ok(None)`: a descriptive comment. `Ok(Some((key, value)))`, both trimmed: a parameter.
/// Refused, because each would leave a default in force silently: a comment that looks like a
/// mistyped parameter line (`SET k=v`, `Set k=v`, `set: k=v`, `set:k=v`), and a `set` without
/// `KEY=VALUE` or with an empty key.
pub fn comment_param<'a>(
    body: &'a str,
    marker: &str,
) -> Result<Option<(&'a str, &'a str)>, String> {
    let body = body.trim();
    let Some(rest) = body
        .strip_prefix("set ")
        .or_else(|| body.strip_prefix("set\t"))
    else {
        let lower = body.to_ascii_lowercase();
        if lower.starts_with("set ") || lower.starts_with("set\t") || lower.starts_with("set:") {
            return Err(format!(
                "{:?} looks like a parameter line but is not one: write `{marker}set KEY=VALUE` \
                 (lowercase `set`, a space, no colon)",
                format!("{marker}{body}").trim()
            ));
        }
        return Ok(None);
    };
    match rest.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok(Some((k.trim(), v.trim()))),
        _ => Err(format!(
            "`{marker}set` line needs KEY=VALUE, found {:?}",
            rest.trim()
        )),
    }
}

/// Refuses a key that `params` (one input's parameters so far) already sets: an input gives each
/// parameter one value, so a second one is a mistake, not an override (`--set` is the override).
pub fn param_unset(params: &[Param], key: &str, marker: &str) -> Result<(), String> {
    match params.iter().find(|p| p.key == key) {
        None => Ok(()),
        Some(first) => Err(format!(
            "`{marker}set {key}` again (first set {}): one value per parameter",
            first.line.map_or_else(
                || "in an earlier comment".to_string(),
                |l| format!("at line {l}")
            )
        )),
    }
}

/// The parameters that apply to one replay: the trace's `# set` lines, then `--set` (which wins).
pub fn merged_params(trace: &[Param], cli: &[Param]) -> Vec<Param> {
    trace.iter().chain(cli.iter()).cloned().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_comment_is_a_parameter_only_as_lowercase_set_and_key_value() {
        assert_eq!(comment_param("set eta=0.9", "# "), Ok(Some(("eta", "0.9"))));
        assert_eq!(
            comment_param(" set\t eta = 0.9 ", ""),
            Ok(Some(("eta", "0.9")))
        );
        assert_eq!(comment_param("settings as recorded", ""), Ok(None));
        assert_eq!(comment_param("recorded by sim", ""), Ok(None));
        for mistyped in ["SET eta=0.9", "Set eta=0.9", "set:eta=0.9", "set: eta=0.9"] {
            let e = comment_param(mistyped, "# ").unwrap_err();
            assert!(e.contains("looks like a parameter line"), "{mistyped}: {e}");
        }
        for bare in ["set eta", "set =0.9"] {
            let e = comment_param(bare, "").unwrap_err();
            assert!(e.contains("needs KEY=VALUE"), "{bare}: {e}");
        }
    }

    #[test]
    fn a_key_set_twice_is_refused_naming_where_it_was_first_set() {
        let p = |line| Param {
            key: "eta".into(),
            value: "0.9".into(),
            source: "t.csv".into(),
            line,
        };
        assert_eq!(param_unset(&[p(Some(3))], "beta", "# "), Ok(()));
        let e = param_unset(&[p(Some(3))], "eta", "# ").unwrap_err();
        assert!(e.contains("`# set eta` again (first set at line 3)"), "{e}");
        let e = param_unset(&[p(None)], "eta", "").unwrap_err();
        assert!(e.contains("first set in an earlier comment"), "{e}");
    }

    #[test]
    fn cli_set_parses() {
        let p = parse_cli_set("beta = 0.5").unwrap();
        assert_eq!((p.key.as_str(), p.value.as_str()), ("beta", "0.5"));
        assert!(parse_cli_set("novalue").is_err());
        assert_eq!(p.parse::<f64>().unwrap(), 0.5);
        assert!(p.error("x").to_string().starts_with("--set: "));
    }

    fn param(v: &str) -> Param {
        Param {
            key: "k".into(),
            value: v.into(),
            source: PathBuf::from("--set"),
            line: None,
        }
    }

    /// One rule set for every kind (the three kinds used to parse `_`, `e` and ratios
    /// differently).
    #[test]
    fn one_parameter_rule_set() {
        for (v, want) in [
            ("10000000", Some(10_000_000)),
            ("10_000_000", Some(10_000_000)),
            ("10e6", Some(10_000_000)),
            ("2.5e6", Some(2_500_000)),
            ("25E9", Some(25_000_000_000)),
            ("2.55e1", None),
            ("-1", None),
            ("1.5", None),
            ("0x10", None),
            ("_1", None),
            ("1__0", None),
            ("", None),
            ("1e30", None),
        ] {
            assert_eq!(param(v).uint().ok(), want, "{v:?}");
        }
        assert_eq!(param("0.875").ratio().unwrap(), (875, 1000));
        assert_eq!(param("7/8").ratio().unwrap(), (7, 8));
        assert!(param("0.1234567891").ratio().is_err());
        assert!(param("-0.5").ratio().is_err());
        assert_eq!(
            param("300").uint_as::<u8>().unwrap_err().msg,
            "parameter k: 300 is too large (at most 255)"
        );
        assert!(param("on").boolean().unwrap() && !param("No").boolean().unwrap());
        assert!(param("maybe").boolean().is_err());
        assert!(param("inf").decimal().is_err() && param("-1").decimal().is_err());
    }
}
