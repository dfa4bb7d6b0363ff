//! `# set KEY=VALUE` / `--set KEY=VALUE` → the adapter's validated configuration
//! (`cc_pcc::TimelyPccConfig` or `HpccPccConfig`, from its parameter table's values) and the
//! reference's parameters, from the same values; a `param` row changes one value on both sides.
//! `algorithm` picks the table; a key of the other table is refused.

use super::{HPCC_KEYS, TIMELY_KEYS};
use crate::{InputError, Param};
use cc_pcc::{HPCC_PARAM_NUM, HPCC_PARAMS, HpccPccConfig, TIMELY_PARAM_NUM, TimelyPccConfig};
use cc_reference::pcc::{RefHpccParams, RefTimelyParams};
use cc_reference::timely::RefParams;
use std::path::Path;

/// Both sides' parameters for the trace's algorithm.
#[derive(Debug, Clone)]
pub enum Setup {
    /// TIMELY on probe RTTs.
    Timely(Both),
    /// HPCC on switch telemetry.
    Hpcc(HpccBoth),
}

impl Setup {
    /// The platform's `set_algo_params` with one value, on the trace's algorithm.
    pub fn set(&mut self, id: u32, value: u32) -> Result<(), String> {
        match self {
            Setup::Timely(b) => b.set(id, value),
            Setup::Hpcc(b) => b.set(id, value),
        }
    }

    /// The line rate in force, Mb/s (`line_rate_mbps`, in both tables).
    pub fn line_rate_mbps(&self) -> u32 {
        match self {
            Setup::Timely(b) => b.values[cc_pcc::params::timely_id::LINE_RATE_MBPS as usize],
            Setup::Hpcc(b) => b.values[cc_pcc::hpcc::hpcc_id::LINE_RATE_MBPS as usize],
        }
    }

    /// The key of parameter `id` in the trace's algorithm's table.
    pub fn key(&self, id: u32) -> &'static str {
        let keys: &[&'static str] = match self {
            Setup::Timely(_) => &TIMELY_KEYS,
            Setup::Hpcc(_) => &HPCC_KEYS,
        };
        keys.get(id as usize).copied().unwrap_or("?")
    }
}

/// HPCC's parameters on both sides, built from the same values (the adapter's table, in id
/// order).
#[derive(Debug, Clone)]
pub struct HpccBoth {
    /// The table's values in force.
    pub values: [u32; HPCC_PARAM_NUM],
    /// The adapter's configuration.
    pub cfg: HpccPccConfig,
    /// The reference's parameters.
    pub reference: RefHpccParams,
}

/// The HPCC reference's parameters from the table's values (id order as in docs/pcc.md).
pub fn hpcc_reference(v: &[u32; HPCC_PARAM_NUM]) -> RefHpccParams {
    RefHpccParams {
        hpcc: cc_reference::hpcc::RefParams {
            nic_rate_bps: f64::from(v[0]) * 1e6,
            base_rtt_ns: f64::from(v[1]),
            eta_num: u64::from(v[2]),
            eta_den: 1000,
            max_stage: v[3],
            w_ai_bytes: f64::from(v[4]),
            min_rate_bps: f64::from(v[5]) * 1e6,
        },
        link_code: v[6] as u8,
        probe_timeout_ns: u64::from(v[7]),
    }
}

/// The adapter's refusal of HPCC values, in words.
fn hpcc_error(e: cc_pcc::HpccParamError) -> String {
    match e {
        cc_pcc::HpccParamError::OutOfRange { id, value } => {
            let d = HPCC_PARAMS.get(id as usize);
            format!(
                "parameter {id} ({}) = {value} is outside {}..={}",
                d.map_or("?", |d| d.name),
                d.map_or(0, |d| d.min),
                d.map_or(0, |d| d.max)
            )
        }
        other => format!("the parameter set is not a valid HPCC configuration: {other:?}"),
    }
}

impl HpccBoth {
    /// Both sides from a whole value array; the adapter's refusal as text.
    pub fn from_values(values: [u32; HPCC_PARAM_NUM]) -> Result<Self, String> {
        let cfg = HpccPccConfig::from_values(values).map_err(hpcc_error)?;
        Ok(Self {
            values,
            cfg,
            reference: hpcc_reference(&values),
        })
    }

    /// `set_algo_params` with one value: all or none on the adapter, the reference rebuilt.
    pub fn set(&mut self, id: u32, value: u32) -> Result<(), String> {
        let mut cfg = self.cfg;
        cfg.set_params(id, &[value]).map_err(hpcc_error)?;
        self.values = *cfg.values();
        self.cfg = cfg;
        self.reference = hpcc_reference(&self.values);
        Ok(())
    }
}

/// Both sides' parameters, built from the same values (the adapter's table, in id order).
#[derive(Debug, Clone)]
pub struct Both {
    /// The table's values in force.
    pub values: [u32; TIMELY_PARAM_NUM],
    /// The adapter's configuration.
    pub cfg: TimelyPccConfig,
    /// The reference's parameters.
    pub reference: RefTimelyParams,
}

/// The reference's parameters from the table's values (id order as in docs/pcc.md): rates in
/// Mb/s, ratios in thousandths, the initial rate a Q20 fraction of line rate.
pub fn reference(v: &[u32; TIMELY_PARAM_NUM]) -> RefTimelyParams {
    let line = f64::from(v[0]) * 1e6;
    RefTimelyParams {
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

impl crate::kinds::Values for Setup {
    fn values(&self) -> Vec<(String, String, Option<&'static str>)> {
        let (name, keys, vals): (&str, &[&str], &[u32]) = match self {
            Setup::Timely(b) => ("timely", &TIMELY_KEYS, &b.values),
            Setup::Hpcc(b) => ("hpcc", &HPCC_KEYS, &b.values),
        };
        let mut v = vec![("algorithm".to_string(), name.to_string(), None)];
        v.extend(
            keys.iter()
                .zip(vals)
                .map(|(k, x)| (k.to_string(), x.to_string(), None)),
        );
        v
    }
}

/// Builds both sides' parameters from `params` (trace `# set` lines first, then `--set`): the
/// last `algorithm` picks the table, then every other key is that table's.
pub fn build(trace: &Path, params: &[Param]) -> Result<Setup, InputError> {
    let mut hpcc = false;
    for q in params.iter().filter(|q| q.key == "algorithm") {
        hpcc = match q.value.trim() {
            "timely" => false,
            "hpcc" => true,
            other => {
                return Err(q.error(format!("algorithm={other:?}: expected timely or hpcc")));
            }
        };
    }
    let (name, keys, other): (&str, &[&str], &[&str]) = if hpcc {
        ("hpcc", &HPCC_KEYS, &TIMELY_KEYS)
    } else {
        ("timely", &TIMELY_KEYS, &HPCC_KEYS)
    };
    let mut values: Vec<u32> = if hpcc {
        HPCC_PARAMS.iter().map(|d| d.default).collect()
    } else {
        TimelyPccConfig::DEFAULT.values().to_vec()
    };
    let given: Vec<&Param> = params.iter().filter(|q| q.key != "algorithm").collect();
    for q in &given {
        let Some(id) = keys.iter().position(|k| *k == q.key) else {
            let why = if other.contains(&q.key.as_str()) {
                format!(
                    "{:?} is not a parameter of algorithm={name} (keys: {})",
                    q.key,
                    keys.join(", ")
                )
            } else {
                format!(
                    "unknown parameter {:?} (known: {})",
                    q.key,
                    super::INFO.key_list()
                )
            };
            return Err(q.error(why));
        };
        values[id] = q.uint_as::<u32>()?;
    }
    let built = if hpcc {
        let v: [u32; HPCC_PARAM_NUM] = values.try_into().unwrap_or_default();
        HpccBoth::from_values(v).map(Setup::Hpcc)
    } else {
        let v: [u32; TIMELY_PARAM_NUM] = values.try_into().unwrap_or_default();
        Both::from_values(v).map(Setup::Timely)
    };
    built.map_err(|msg| {
        // Name the setting the adapter names, else the last one given.
        let named = keys
            .iter()
            .position(|k| msg.contains(&format!("({})", k.to_ascii_uppercase())));
        let q = given
            .iter()
            .rev()
            .find(|q| named.is_some_and(|i| q.key == keys[i]))
            .or_else(|| given.last());
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
    fn keys_are_the_adapter_tables_in_id_order() {
        let tables: [(&[&str], &[cc_pcc::ParamDef]); 2] = [
            (&TIMELY_KEYS, &cc_pcc::TIMELY_PARAMS),
            (&HPCC_KEYS, &HPCC_PARAMS),
        ];
        for (keys, defs) in tables {
            assert_eq!(keys.len(), defs.len());
            for (i, (k, d)) in keys.iter().zip(defs).enumerate() {
                assert_eq!(d.id as usize, i);
                assert_eq!(k.to_ascii_uppercase(), d.name);
                let info = super::super::INFO.key(k).unwrap();
                assert!(info.default.contains(&d.default.to_string()), "{k}");
                assert!(
                    info.limits.contains(&format!("{} ..= {}", d.min, d.max)),
                    "{k}"
                );
            }
        }
    }

    #[test]
    fn hpcc_keys_follow_the_algorithm_and_timely_keys_are_refused_there() {
        let b = build(
            Path::new("t"),
            &[set("algorithm", "hpcc"), set("eta_milli", "900")],
        )
        .unwrap();
        let Setup::Hpcc(h) = b else { panic!("hpcc") };
        assert_eq!(h.reference.hpcc.eta(), 0.9);
        assert_eq!(h.reference.hpcc.nic_rate_bps, 100e9);
        let e = build(
            Path::new("t"),
            &[set("algorithm", "hpcc"), set("beta_milli", "500")],
        )
        .unwrap_err();
        assert!(e.msg.contains("not a parameter of algorithm=hpcc"), "{e}");
        let e = build(Path::new("t"), &[set("eta_milli", "900")]).unwrap_err();
        assert!(e.msg.contains("not a parameter of algorithm=timely"), "{e}");
    }

    #[test]
    fn defaults_match_the_timely_reference_defaults() {
        let Setup::Timely(b) = build(Path::new("t.csv"), &[]).unwrap() else {
            panic!("timely by default")
        };
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
        let e = build(Path::new("t.csv"), &[set("algorithm", "dcqcn")]).unwrap_err();
        assert!(e.to_string().contains("expected timely or hpcc"), "{e}");
        let e = build(Path::new("t.csv"), &[set("gamma", "1")]).unwrap_err();
        assert!(e.msg.contains("unknown parameter"), "{e}");
    }

    #[test]
    fn a_parameter_change_reaches_both_sides_or_neither() {
        let Setup::Timely(mut b) = build(Path::new("t.csv"), &[]).unwrap() else {
            panic!("timely by default")
        };
        b.set(7, 500).unwrap();
        assert_eq!(b.reference.timely.beta, 0.5);
        assert_eq!(b.cfg.values()[7], 500);
        let before = b.values;
        assert!(b.set(3, 600_000).is_err());
        assert_eq!(b.values, before);
        assert_eq!(b.reference.timely.t_low_ns, 50_000.0);
    }
}
