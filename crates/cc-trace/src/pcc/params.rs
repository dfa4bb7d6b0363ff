//! `# set KEY=VALUE` / `--set KEY=VALUE` → the adapter's validated configuration
//! (`cc_pcc::TimelyPccConfig`, from its parameter table's values) and the reference's
//! parameters, from the same values; a `param` row changes one value on both sides.

use super::TIMELY_KEYS;
use crate::{InputError, Param};
use cc_pcc::{TIMELY_PARAM_NUM, TimelyPccConfig};
use cc_reference::pcc::RefPccParams;
use cc_reference::timely::RefParams;
use std::path::Path;

/// Both sides' parameters, built from the same values (the adapter's table, in id order).
#[derive(Debug, Clone)]
pub struct Both {
    /// The table's values in force.
    pub values: [u32; TIMELY_PARAM_NUM],
    /// The adapter's configuration.
    pub cfg: TimelyPccConfig,
    /// The reference's parameters.
    pub reference: RefPccParams,
}

/// The reference's parameters from the table's values (id order as in docs/pcc.md): rates in
/// Mb/s, ratios in thousandths, the initial rate a Q20 fraction of line rate.
pub fn reference(v: &[u32; TIMELY_PARAM_NUM]) -> RefPccParams {
    let line = f64::from(v[0]) * 1e6;
    RefPccParams {
        timely: RefParams {
            line_rate_bps: u64::from(v[0]) * 1_000_000,
            min_rate_bps: f64::from(v[1]) * 1e6,
            max_rate_bps: line,
            init_rate_bps: line * f64::from(v[2]) / f64::from(1u32 << 20),
            t_low_ns: f64::from(v[3]),
            t_high_ns: f64::from(v[4]),
            min_rtt_ns: f64::from(v[5]),
            alpha: f64::from(v[6]) / 1000.0,
            beta: f64::from(v[7]) / 1000.0,
            delta_bps: f64::from(v[8]) * 1e6,
            hai_n: f64::from(v[9]),
            hai_after: u64::from(v[10]),
            app_limited: None,
            per_completion_scaling: false,
        },
        probe_timeout_ns: u64::from(v[11]),
        keep_turnaround: v[12] != 0,
    }
}

impl Both {
    /// Both sides from a whole value array; the adapter's refusal as text.
    pub fn from_values(values: [u32; TIMELY_PARAM_NUM]) -> Result<Self, String> {
        let cfg = TimelyPccConfig::from_values(values).map_err(|e| e.to_string())?;
        Ok(Self {
            values,
            cfg,
            reference: reference(&values),
        })
    }

    /// The platform's `set_algo_params` with one value: the adapter's `set_param` (all or
    /// none) and the reference rebuilt from the same values. On refusal nothing changes.
    pub fn set(&mut self, id: u32, value: u32) -> Result<(), String> {
        let mut cfg = self.cfg;
        cfg.set_param(id, value).map_err(|e| e.to_string())?;
        self.values = *cfg.values();
        self.cfg = cfg;
        self.reference = reference(&self.values);
        Ok(())
    }
}

impl crate::kinds::Values for Both {
    fn values(&self) -> Vec<(String, String, Option<&'static str>)> {
        let mut v = vec![("algorithm".to_string(), "timely".to_string(), None)];
        v.extend(
            TIMELY_KEYS
                .iter()
                .zip(self.values)
                .map(|(k, x)| (k.to_string(), x.to_string(), None)),
        );
        v
    }
}

/// Builds both sides' parameters from `params` (trace `# set` lines first, then `--set`).
pub fn build(trace: &Path, params: &[Param]) -> Result<Both, InputError> {
    let mut values = *TimelyPccConfig::DEFAULT.values();
    for q in params {
        if q.key == "algorithm" {
            match q.value.trim() {
                "timely" => {}
                "hpcc" => {
                    return Err(q.error(
                        "algorithm=hpcc: replaying HPCC event traces (telemetry) is not \
                         implemented yet; only algorithm=timely is replayed",
                    ));
                }
                other => {
                    return Err(q.error(format!("algorithm={other:?}: expected timely or hpcc")));
                }
            }
            continue;
        }
        let Some(id) = TIMELY_KEYS.iter().position(|k| *k == q.key) else {
            return Err(q.error(format!(
                "unknown parameter {:?} (known: {})",
                q.key,
                super::INFO.key_list()
            )));
        };
        values[id] = q.uint_as::<u32>()?;
    }
    Both::from_values(values).map_err(|msg| {
        // Name the last setting that could be to blame: the one the adapter names, else the
        // last one given.
        let named = TIMELY_KEYS
            .iter()
            .position(|k| msg.contains(&k.to_ascii_uppercase()));
        let q = params
            .iter()
            .rev()
            .find(|q| named.is_some_and(|i| q.key == TIMELY_KEYS[i]))
            .or_else(|| params.iter().rev().find(|q| q.key != "algorithm"));
        match q {
            Some(q) => q.error(format!("invalid configuration: {msg}")),
            None => InputError::file(trace, format!("invalid configuration: {msg}")),
        }
    })
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
    fn keys_are_the_adapter_table_in_id_order() {
        for (i, (k, d)) in TIMELY_KEYS.iter().zip(cc_pcc::TIMELY_PARAMS).enumerate() {
            assert_eq!(d.id as usize, i);
            assert_eq!(k.to_ascii_uppercase(), d.name);
            let info = super::super::INFO.key(k).unwrap();
            assert_eq!(info.default, d.default.to_string(), "{k}");
            assert!(
                info.limits.starts_with(&format!("{} ..= {}", d.min, d.max)),
                "{k}"
            );
        }
    }

    #[test]
    fn defaults_match_the_timely_reference_defaults() {
        let b = build(Path::new("t.csv"), &[]).unwrap();
        assert_eq!(b.reference.timely, RefParams::default());
        assert_eq!(b.reference.probe_timeout_ns, 300_000);
    }

    #[test]
    fn a_refused_value_names_its_setting() {
        let e = build(Path::new("t.csv"), &[set("t_low_ns", "600000")]).unwrap_err();
        assert!(
            e.to_string().starts_with("--set: invalid configuration"),
            "{e}"
        );
        let e = build(Path::new("t.csv"), &[set("alpha_milli", "5")]).unwrap_err();
        assert!(e.to_string().contains("ALPHA_MILLI"), "{e}");
        let e = build(Path::new("t.csv"), &[set("algorithm", "hpcc")]).unwrap_err();
        assert!(e.to_string().contains("not implemented"), "{e}");
        let e = build(Path::new("t.csv"), &[set("gamma", "1")]).unwrap_err();
        assert!(e.msg.contains("unknown parameter"), "{e}");
    }

    #[test]
    fn a_parameter_change_reaches_both_sides_or_neither() {
        let mut b = build(Path::new("t.csv"), &[]).unwrap();
        b.set(7, 500).unwrap();
        assert_eq!(b.reference.timely.beta, 0.5);
        assert_eq!(b.cfg.values()[7], 500);
        let before = b.values;
        assert!(b.set(3, 600_000).is_err());
        assert_eq!(b.values, before);
        assert_eq!(b.reference.timely.t_low_ns, 50_000.0);
    }
}
