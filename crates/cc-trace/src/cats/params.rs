//! Both sides' parameters from the trace's `# set` lines and `--set` (one rule set, [`Param`]).

use super::{DEFAULT_SND_BUF_BYTES, INFO, QUEUE_CAPACITY};
use crate::{InputError, Param};
use cats_conductor::{Config, ConfigError, Multiplier, Prio};
use cc_reference::cats::RefParams;
use std::path::Path;

/// The parameters of one replay, as given and as each side runs them.
#[derive(Debug, Clone)]
pub struct Setup {
    /// The firmware configuration.
    pub cfg: Config,
    /// The reference's parameters (multipliers are the Q16 values the firmware runs).
    pub params: RefParams,
    /// Free send-buffer space at the start.
    pub snd_buf_bytes: u64,
    /// Multipliers that were not multiples of 2^-16: (key, given, used).
    pub quantised: Vec<(String, f64, f64)>,
}

/// Builds both sides' parameters from `# set`/`--set` (later wins). `L_p` defaults to 50 % of
/// the effective `H_p` (rounded down). Multipliers are rounded to the nearest Q16.16 step and the
/// reference is given the same rounded value (so the comparison is of the algorithm, not of the
/// parameter's representation); such roundings are listed in the summary.
pub fn setup(path: &Path, params: &[Param]) -> Result<Setup, InputError> {
    let d = Config::default();
    let mut mss: u32 = d.mss_bytes();
    let mut snd_buf = DEFAULT_SND_BUF_BYTES;
    let mut high: [u32; 4] = [0, 1, 2, 3].map(|i| d.high_bytes(Prio::ALL[i]).unwrap_or(1));
    let mut low: [Option<u32>; 4] = [None; 4];
    let mut mult: [f64; 5] =
        [0, 1, 2, 3, 4].map(|i| f64::from(d.multiplier(Prio::ALL[i]).to_bits()) / 65_536.0);
    let mut last: std::collections::HashMap<&str, &Param> = Default::default();
    for p in params {
        let key = p.key.as_str();
        let Some(k) = INFO.keys.iter().map(|k| k.name).find(|&k| k == key) else {
            return Err(p.error(format!(
                "unknown parameter {key:?} (cats keys: {})",
                INFO.key_list()
            )));
        };
        last.insert(k, p);
        match k {
            "mss_bytes" => mss = p.uint_as()?,
            "snd_buf_bytes" => snd_buf = p.uint()?,
            _ => {
                let i = usize::from(k.as_bytes()[1] - b'0');
                match k.as_bytes()[0] {
                    b'h' => high[i] = p.uint_as()?,
                    b'l' => low[i] = Some(p.uint_as()?),
                    _ => mult[i] = p.decimal()?,
                }
            }
        }
    }
    let low: [u32; 4] = std::array::from_fn(|i| low[i].unwrap_or(high[i] / 2));
    let mut quantised = Vec::new();
    let mut mq = [Multiplier::from_bits(0); 5];
    let mut mult_used = [0.0; 5];
    for i in 0..5 {
        let bits = (mult[i] * 65_536.0).round();
        let bits = if bits > f64::from(u32::MAX) {
            u32::MAX
        } else {
            bits as u32
        };
        mq[i] = Multiplier::from_bits(bits);
        mult_used[i] = f64::from(bits) / 65_536.0;
        if mult_used[i] != mult[i] {
            quantised.push((format!("m{i}"), mult[i], mult_used[i]));
        }
    }
    let cfg = Config::new(mss, high, low, mq).map_err(|e| {
        // Blame the key the user set: `L_p` defaults to `H_p / 2`, so a bad default low
        // watermark is the fault of `h_p`; a zero multiplier sum is the fault of the last `m_k`
        // set (the defaults sum to 5.25).
        let low_or_high = |p: Prio| {
            let l = format!("l{}", p.index());
            if last.contains_key(l.as_str()) {
                l
            } else {
                format!("h{}", p.index())
            }
        };
        let (key, what) = match e {
            ConfigError::MssOutOfRange => ("mss_bytes".to_string(), "must be 1..=65535".into()),
            ConfigError::HighTooLarge(p) => (
                format!("h{}", p.index()),
                format!("must be ≤ {}", Config::MAX_HIGH_BYTES),
            ),
            ConfigError::LowIsZero(p) => {
                let k = low_or_high(p);
                let what = if k.starts_with('l') {
                    "must be > 0".into()
                } else {
                    format!(
                        "must be ≥ 2 (L{0} defaults to h{0}/2, which must be > 0)",
                        p.index()
                    )
                };
                (k, what)
            }
            ConfigError::LowNotBelowHigh(p) => (
                low_or_high(p),
                format!(
                    "gives L{0} = {1} ≥ H{0} = {2} (L{0} must be < H{0})",
                    p.index(),
                    low[p.index()],
                    high[p.index()]
                ),
            ),
            ConfigError::MultiplierTooLarge(p) => {
                (format!("m{}", p.index()), "must be ≤ 64".into())
            }
            ConfigError::MultiplierSumZero => {
                let k = params
                    .iter()
                    .rev()
                    .find(|p| p.key.starts_with('m') && p.key.len() == 2)
                    .map_or_else(|| "m0".to_string(), |p| p.key.clone());
                (k, "makes m0+…+m4 = 0 (must be > 0)".into())
            }
        };
        let msg = format!("invalid cats configuration: {key} {what} ({e:?})");
        match last.get(key.as_str()) {
            Some(p) => p.error(msg),
            None => InputError::file(path, msg),
        }
    })?;
    Ok(Setup {
        params: RefParams {
            mss: f64::from(mss),
            high: high.map(f64::from),
            low: low.map(f64::from),
            mult: mult_used,
            capacity: QUEUE_CAPACITY,
        },
        cfg,
        snd_buf_bytes: snd_buf,
        quantised,
    })
}

impl crate::kinds::Values for Setup {
    fn values(&self) -> Vec<(String, String, Option<&'static str>)> {
        const HIGH: [&str; 4] = ["h0", "h1", "h2", "h3"];
        let p = &self.params;
        let mut v = vec![
            ("mss_bytes".to_string(), format!("{}", p.mss), None),
            ("snd_buf_bytes".into(), self.snd_buf_bytes.to_string(), None),
        ];
        for (i, h) in p.high.iter().enumerate() {
            v.push((format!("h{i}"), format!("{h}"), None));
        }
        for (i, l) in p.low.iter().enumerate() {
            v.push((format!("l{i}"), format!("{l}"), HIGH.get(i).copied()));
        }
        for (i, m) in p.mult.iter().enumerate() {
            v.push((format!("m{i}"), format!("{m}"), None));
        }
        v
    }
}
