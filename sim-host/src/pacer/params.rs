//! Both sides' parameters from the trace's `# set` lines and `--set` (one rule set, [`Param`]).

use super::KEYS;
use crate::trace::{InputError, Param};
use cc_pacer::{Config, Rate};
use std::collections::HashMap;
use std::path::Path;

/// The parameters of one replay.
#[derive(Debug, Clone)]
pub struct Setup {
    /// The fixed side's NIC.
    pub cfg: Config,
    /// Line rate, units of 128 b/s.
    pub line_units: u64,
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
            "line_rate_bps" => line_bps = p.parse()?,
            "seg_bytes" => seg = check_seg(p, p.parse()?)?,
            "init_rate_bps" => init = Some(p.parse()?),
            "hybrid_rate_bps" => hybrid_bps = Some(p.parse()?),
            "burst_bytes" => burst = p.parse()?,
            k => {
                if let Some(f) = k.strip_prefix("seg_bytes.") {
                    let f: u32 = f.parse().map_err(|_| {
                        p.error(format!("parameter {k}: expected seg_bytes.<flow number>"))
                    })?;
                    seg_of.insert(f, check_seg(p, p.parse()?)?);
                } else {
                    return Err(p.error(format!(
                        "unknown parameter {k:?} (pacer keys: {})",
                        KEYS.join(", ")
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
        line_units: u64::from(line.units()),
        hybrid,
        seg_bytes: seg,
        seg_of,
        init_rate_bps: init.unwrap_or(line_bps),
    })
}
