//! Both sides' parameters from the trace's `# set` lines and `--set` (one rule set, [`Param`]).

use crate::{InputError, Param};
use cc_reference::hpcc::RefParams;
use hpcc_cc::{Config, ConfigError, Params, Ratio};
use std::collections::BTreeMap;
use std::path::Path;

/// Both sides' configuration.
#[derive(Debug, Clone, Copy)]
pub struct Setup {
    /// Firmware config.
    pub cfg: Config,
    /// Reference parameters (the same values as numbers).
    pub refp: RefParams,
}

impl Default for Setup {
    fn default() -> Self {
        Self {
            cfg: Config::PAPER,
            refp: RefParams::default(),
        }
    }
}

/// Parses a decimal like `0.95` (or a fraction `19/20`) into an exact ratio, by the one
/// parameter rule set (`Param::ratio`).
pub fn decimal_ratio(s: &str) -> Option<Ratio> {
    let p = Param {
        key: String::new(),
        value: s.to_string(),
        source: std::path::PathBuf::new(),
        line: None,
    };
    p.ratio().ok().map(|(num, den)| Ratio { num, den })
}

/// A whole-number parameter (`Param::uint`: `100000000000`, `100_000_000_000` or `100e9`).
fn int_param(p: &Param) -> Result<u64, InputError> {
    p.uint()
}

impl Setup {
    /// Builds both sides from `KEY=VALUE` parameters (keys are the `Config` names); the last
    /// occurrence of a key wins.
    pub fn from_params(params: &[Param]) -> Result<Setup, InputError> {
        let mut p = Params::PAPER;
        // The line that set each key last (so a config error names the right line).
        let mut set_by: BTreeMap<&str, (usize, &Param)> = BTreeMap::new();
        for (i, prm) in params.iter().enumerate() {
            let narrow = |v: u64| {
                u32::try_from(v)
                    .map_err(|_| prm.error(format!("parameter {}: {v} is too large", prm.key)))
            };
            match prm.key.as_str() {
                "nic_rate_bps" => p.nic_rate_bps = int_param(prm)?,
                "base_rtt_ns" => p.base_rtt_ns = narrow(int_param(prm)?)?,
                "eta" => {
                    p.eta = decimal_ratio(&prm.value).ok_or_else(|| {
                        prm.error(format!(
                            "parameter eta: {:?} is not a decimal like 0.95",
                            prm.value
                        ))
                    })?
                }
                "max_stage" => {
                    p.max_stage = u8::try_from(int_param(prm)?)
                        .map_err(|_| prm.error("parameter max_stage: must be 0..=255"))?
                }
                "w_ai_bytes" => p.w_ai_bytes = narrow(int_param(prm)?)?,
                "min_rate_bps" => p.min_rate_bps = int_param(prm)?,
                other => {
                    return Err(prm.error(format!(
                        "unknown parameter {other:?} (hpcc keys: {})",
                        super::INFO.key_list()
                    )));
                }
            }
            set_by.insert(prm.key.as_str(), (i, prm));
        }
        Setup::new(p).map_err(|e| match blame(&set_by, e) {
            Some(prm) => prm.error(format!("invalid hpcc configuration: {e}")),
            None => InputError::file(
                Path::new("--set"),
                format!("invalid hpcc configuration: {e}"),
            ),
        })
    }

    /// Both sides from the firmware's parameters (the reference gets the same values as
    /// numbers; `η` stays an exact ratio on both).
    pub fn new(p: Params) -> Result<Setup, ConfigError> {
        let cfg = Config::new(p)?;
        let refp = RefParams {
            nic_rate_bps: p.nic_rate_bps as f64,
            base_rtt_ns: f64::from(p.base_rtt_ns),
            eta_num: u64::from(p.eta.num),
            eta_den: u64::from(p.eta.den),
            max_stage: u32::from(p.max_stage),
            w_ai_bytes: f64::from(p.w_ai_bytes),
            min_rate_bps: p.min_rate_bps as f64,
        };
        Ok(Setup { cfg, refp })
    }
}

/// The parameter line to blame for a config error: the one that set the key the error is about
/// (for errors about a combination, the last-set key of it); `None` if only defaults were used.
fn blame<'a>(set_by: &BTreeMap<&str, (usize, &'a Param)>, e: ConfigError) -> Option<&'a Param> {
    let keys: &[&str] = match e {
        ConfigError::NicRate => &["nic_rate_bps"],
        ConfigError::BaseRtt => &["base_rtt_ns"],
        ConfigError::Eta => &["eta"],
        ConfigError::MinRate => &["min_rate_bps", "nic_rate_bps", "base_rtt_ns"],
        ConfigError::WindowTooLarge => &["nic_rate_bps", "base_rtt_ns"],
        ConfigError::WAi => &["w_ai_bytes", "nic_rate_bps", "base_rtt_ns"],
    };
    // Of the keys involved, the one set last (command-line `--set` comes after the trace).
    // The first key listed is the one the error names, so prefer it when it was set at all.
    keys.first()
        .and_then(|k| set_by.get(k))
        .or_else(|| {
            keys.iter()
                .filter_map(|k| set_by.get(k))
                .max_by_key(|(i, _)| *i)
        })
        .map(|(_, p)| *p)
}

impl crate::kinds::Values for Setup {
    fn values(&self) -> Vec<(String, String, Option<&'static str>)> {
        let r = &self.refp;
        vec![
            ("nic_rate_bps".into(), format!("{}", r.nic_rate_bps), None),
            ("base_rtt_ns".into(), format!("{}", r.base_rtt_ns), None),
            ("eta".into(), crate::ratio_text(r.eta_num, r.eta_den), None),
            ("max_stage".into(), r.max_stage.to_string(), None),
            ("w_ai_bytes".into(), format!("{}", r.w_ai_bytes), None),
            ("min_rate_bps".into(), format!("{}", r.min_rate_bps), None),
        ]
    }
}
