//! Both sides' parameters from the trace's `# set` lines and `--set` (one rule set, [`Param`]).

use super::INFO;
use crate::{InputError, Param};
use cc_pacer::{Config, Rate};
use std::collections::HashMap;
use std::path::Path;

/// The parameters of one replay.
#[derive(Debug, Clone)]
pub struct Setup {
    /// The fixed side's NIC.
    pub cfg: Config,
    /// Line rate, b/s, as given.
    pub line_bps: u64,
    /// Line rate, units of 128 b/s.
    pub line_units: u64,
    /// Hybrid pacing rate, b/s, as given.
    pub hybrid_bps: Option<u64>,
    /// Hybrid pacing: rate (units) and burst bytes.
    pub hybrid: Option<(u64, u64)>,
    /// Default segment size.
    pub seg_bytes: u32,
    /// Per-flow segment sizes.
    pub seg_of: HashMap<u32, u32>,
    /// Initial rate of a flow, b/s.
    pub init_rate_bps: u64,
}

/// Builds the configuration from `# set`/`--set` parameters (later wins).
pub fn setup(path: &Path, params: &[Param]) -> Result<Setup, InputError> {
    let mut line_bps = 100_000_000_000u64;
    let mut seg: u32 = 16_384;
    let mut init: Option<u64> = None;
    let mut hybrid_bps: Option<u64> = None;
    let mut burst: u32 = 4_096;
    let mut seg_of = HashMap::new();
    let mut last: HashMap<&str, &Param> = HashMap::new();
    let check_seg = |p: &Param, v: u32| {
        if (256..=65_536).contains(&v) && v.is_multiple_of(256) {
            Ok(v)
        } else {
            Err(p.error(format!(
                "parameter {}: a segment is a multiple of 256 in 256..=65536 bytes, got {v}",
                p.key
            )))
        }
    };
    for p in params {
        match p.key.as_str() {
            "line_rate_bps" => line_bps = p.uint()?,
            "seg_bytes" => seg = check_seg(p, p.uint_as()?)?,
            "init_rate_bps" => init = Some(p.uint()?),
            "hybrid_rate_bps" => hybrid_bps = Some(p.uint()?),
            "burst_bytes" => burst = p.uint_as()?,
            k => {
                if let Some(f) = k.strip_prefix("seg_bytes.") {
                    let f: u32 = f.parse().map_err(|_| {
                        p.error(format!("parameter {k}: expected seg_bytes.<flow number>"))
                    })?;
                    seg_of.insert(f, check_seg(p, p.uint_as()?)?);
                } else {
                    return Err(p.error(format!(
                        "unknown parameter {k:?} (pacer keys: {})",
                        INFO.key_list()
                    )));
                }
            }
        }
        last.insert(
            match p.key.as_str() {
                k if k.starts_with("seg_bytes.") => "seg_bytes.<flow>",
                "line_rate_bps" => "line_rate_bps",
                "seg_bytes" => "seg_bytes",
                "init_rate_bps" => "init_rate_bps",
                "hybrid_rate_bps" => "hybrid_rate_bps",
                _ => "burst_bytes",
            },
            p,
        );
    }
    // A burst size means something only to the hybrid pacer: without it the value would be
    // reported as in force and change nothing.
    if hybrid_bps.is_none()
        && let Some(p) = last.get("burst_bytes")
    {
        return Err(p.error(
            "parameter burst_bytes has no effect without hybrid_rate_bps (the hybrid burst pacer \
             is off): set hybrid_rate_bps too, or drop burst_bytes",
        ));
    }
    let blame = |key: &str, msg: String| match last.get(key) {
        Some(p) => p.error(msg),
        None => InputError::file(path, msg),
    };
    let line = Rate::from_bps(line_bps);
    let mut cfg = Config::new(line).map_err(|_| {
        blame(
            "line_rate_bps",
            format!(
                "line_rate_bps {line_bps}: must be ≥ {} b/s",
                Rate::MIN.bps()
            ),
        )
    })?;
    let hybrid = match hybrid_bps {
        None => None,
        Some(h) => {
            cfg = cfg.with_hybrid(Rate::from_bps(h), burst).map_err(|e| {
                blame(
                    "hybrid_rate_bps",
                    format!(
                        "hybrid pacing {h} b/s with {burst}-byte bursts: {e:?} (the rate must \
                         be in {}..=line_rate_bps b/s, bursts 1..=65536 bytes)",
                        Rate::MIN.bps()
                    ),
                )
            })?;
            Some((u64::from(Rate::from_bps(h).units()), u64::from(burst)))
        }
    };
    Ok(Setup {
        cfg,
        line_bps,
        line_units: u64::from(line.units()),
        hybrid,
        hybrid_bps,
        seg_bytes: seg,
        seg_of,
        init_rate_bps: init.unwrap_or(line_bps),
    })
}

impl crate::kinds::Values for Setup {
    fn values(&self) -> Vec<(String, String, Option<&'static str>)> {
        let mut v = vec![
            ("line_rate_bps".to_string(), self.line_bps.to_string(), None),
            ("seg_bytes".into(), self.seg_bytes.to_string(), None),
        ];
        let mut flows: Vec<_> = self.seg_of.iter().collect();
        flows.sort();
        for (f, b) in flows {
            v.push((format!("seg_bytes.{f}"), b.to_string(), None));
        }
        v.push((
            "init_rate_bps".into(),
            self.init_rate_bps.to_string(),
            Some("line_rate_bps"),
        ));
        match self.hybrid {
            None => v.push(("hybrid_rate_bps".into(), "off".into(), None)),
            Some((_, burst)) => {
                v.push((
                    "hybrid_rate_bps".into(),
                    self.hybrid_bps.unwrap_or_default().to_string(),
                    None,
                ));
                v.push(("burst_bytes".into(), burst.to_string(), None));
            }
        }
        v
    }
}
