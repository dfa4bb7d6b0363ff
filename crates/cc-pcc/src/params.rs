//! The parameter table of the probe-RTT TIMELY algorithm and its validated configuration.
//!
//! The platform declares parameters one by one (id, default, min, max) and hands them to the
//! algorithm as a `uint32_t` array; [`TIMELY_PARAMS`] is that declaration, in id order, and
//! [`TimelyPccConfig::set_params`] is `doca_pcc_dev_user_set_algo_params`: every new value is
//! range-checked, the whole set is validated by `timely_cc::Config::new`, and every constant the
//! event path uses is re-derived — or nothing changes and the error names the parameter.

use cc_math::Scale;
use timely_cc::{Config, ConfigError, MAX_RTT_NS, Params, Ratio};

/// One row of a parameter table: what the C side declares from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct ParamDef {
    /// Index in the parameter array (`param_id`).
    pub id: u32,
    /// Name (also the C enumerator's suffix).
    pub name: &'static str,
    /// Value before any `set_algo_params`.
    pub default: u32,
    /// Smallest accepted value.
    pub min: u32,
    /// Largest accepted value.
    pub max: u32,
    /// Unit.
    pub unit: &'static str,
}

/// Ids of [`TIMELY_PARAMS`].
pub mod timely_id {
    /// Port line rate, Mb/s (rates go out as fractions of it).
    pub const LINE_RATE_MBPS: u32 = 0;
    /// Lowest rate, Mb/s.
    pub const MIN_RATE_MBPS: u32 = 1;
    /// Rate of a new flow, Q20 of line rate.
    pub const INIT_RATE_Q20: u32 = 2;
    /// `T_low`, ns.
    pub const T_LOW_NS: u32 = 3;
    /// `T_high`, ns.
    pub const T_HIGH_NS: u32 = 4;
    /// `minRTT`, ns.
    pub const MIN_RTT_NS: u32 = 5;
    /// `α`, thousandths.
    pub const ALPHA_MILLI: u32 = 6;
    /// `β`, thousandths.
    pub const BETA_MILLI: u32 = 7;
    /// `δ`, Mb/s.
    pub const DELTA_MBPS: u32 = 8;
    /// HAI multiplier `N`.
    pub const HAI_N: u32 = 9;
    /// Samples with `g ≤ 0` before HAI.
    pub const HAI_AFTER: u32 = 10;
    /// Probe timeout, ns.
    pub const PROBE_TIMEOUT_NS: u32 = 11;
    /// 1: keep the responder's turnaround in the RTT; 0 (default): subtract it.
    pub const KEEP_TURNAROUND: u32 = 12;
}

/// Number of TIMELY parameters.
pub const TIMELY_PARAM_NUM: usize = 13;

/// Highest line rate, Mb/s (TIMELY's rate format holds 549.7 Gb/s).
pub const MAX_LINE_RATE_MBPS: u32 = 400_000;
/// `1.0` in Q20 (the platform's line rate).
pub const Q20_ONE: u32 = 1 << 20;

/// The TIMELY parameter table, in id order. Defaults: TIMELY §6 (timely-cc's
/// `Params::DEFAULT`: 10 Gb/s, `T_low` 50 µs, `T_high` 500 µs, `minRTT` 20 µs, `α` 0.875,
/// `β` 0.8, `δ` 10 Mb/s, HAI ×5 after 5), a new flow at line rate, and the RTT template's
/// 300 µs probe timeout.
pub const TIMELY_PARAMS: [ParamDef; TIMELY_PARAM_NUM] = [
    ParamDef {
        id: timely_id::LINE_RATE_MBPS,
        name: "LINE_RATE_MBPS",
        default: 10_000,
        min: 1,
        max: MAX_LINE_RATE_MBPS,
        unit: "Mb/s",
    },
    ParamDef {
        id: timely_id::MIN_RATE_MBPS,
        name: "MIN_RATE_MBPS",
        default: 10,
        min: 1,
        max: MAX_LINE_RATE_MBPS,
        unit: "Mb/s",
    },
    ParamDef {
        id: timely_id::INIT_RATE_Q20,
        name: "INIT_RATE_Q20",
        default: Q20_ONE,
        min: 1,
        max: Q20_ONE,
        unit: "Q20 of line rate",
    },
    ParamDef {
        id: timely_id::T_LOW_NS,
        name: "T_LOW_NS",
        default: 50_000,
        min: 0,
        max: MAX_RTT_NS,
        unit: "ns",
    },
    ParamDef {
        id: timely_id::T_HIGH_NS,
        name: "T_HIGH_NS",
        default: 500_000,
        min: 1,
        max: MAX_RTT_NS,
        unit: "ns",
    },
    ParamDef {
        id: timely_id::MIN_RTT_NS,
        name: "MIN_RTT_NS",
        default: 20_000,
        min: 1,
        max: MAX_RTT_NS,
        unit: "ns",
    },
    ParamDef {
        id: timely_id::ALPHA_MILLI,
        name: "ALPHA_MILLI",
        default: 875,
        min: 63,
        max: 1000,
        unit: "1/1000",
    },
    ParamDef {
        id: timely_id::BETA_MILLI,
        name: "BETA_MILLI",
        default: 800,
        min: 1,
        max: 1000,
        unit: "1/1000",
    },
    ParamDef {
        id: timely_id::DELTA_MBPS,
        name: "DELTA_MBPS",
        default: 10,
        min: 1,
        max: MAX_LINE_RATE_MBPS,
        unit: "Mb/s",
    },
    ParamDef {
        id: timely_id::HAI_N,
        name: "HAI_N",
        default: 5,
        min: 1,
        max: 255,
        unit: "",
    },
    ParamDef {
        id: timely_id::HAI_AFTER,
        name: "HAI_AFTER",
        default: 5,
        min: 0,
        max: 255,
        unit: "samples",
    },
    ParamDef {
        id: timely_id::PROBE_TIMEOUT_NS,
        name: "PROBE_TIMEOUT_NS",
        default: 300_000,
        min: 1_000,
        max: (1 << 31) - 1,
        unit: "ns",
    },
    ParamDef {
        id: timely_id::KEEP_TURNAROUND,
        name: "KEEP_TURNAROUND",
        default: 0,
        min: 0,
        max: 1,
        unit: "bool",
    },
];

/// Why new parameter values were refused (the configuration in force is unchanged).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum ParamError {
    /// `param_id_base + param_num` runs past the table.
    IdOutOfTable {
        /// First id given.
        base: u32,
        /// Values given.
        num: u32,
    },
    /// A value outside its row's `[min, max]`.
    OutOfRange {
        /// The parameter id.
        id: u32,
        /// The value given.
        value: u32,
    },
    /// Each value is in range but the set is not a valid TIMELY configuration (e.g.
    /// `T_low > T_high`, `min_rate > line rate`).
    Timely(ConfigError),
}

impl core::fmt::Display for ParamError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            ParamError::IdOutOfTable { base, num } => write!(
                f,
                "parameters {base}..{base}+{num} run past the table of {TIMELY_PARAM_NUM}"
            ),
            ParamError::OutOfRange { id, value } => {
                let (name, min, max) = TIMELY_PARAMS
                    .iter()
                    .find(|p| p.id == id)
                    .map_or(("?", 0, 0), |p| (p.name, p.min, p.max));
                write!(
                    f,
                    "parameter {id} ({name}) = {value} is outside {min}..={max}"
                )
            }
            ParamError::Timely(e) => write!(
                f,
                "the parameter set is not a valid TIMELY configuration: {e:?}"
            ),
        }
    }
}

/// The validated configuration of the probe-RTT TIMELY adapter: the parameter values in force
/// and every constant the event path uses, derived from them (the only place that divides).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct TimelyPccConfig {
    values: [u32; TIMELY_PARAM_NUM],
    pub(crate) timely: Config,
    /// `rate_u128bps ↦ rate·2^20/line_rate` (Q20 of line rate), rounded to nearest by
    /// [`Scale::apply`].
    pub(crate) q20: Scale,
    pub(crate) probe_timeout_ns: u32,
    pub(crate) keep_turnaround: bool,
}

/// Parameter value `id` of `v` (constant ids below the table length).
#[allow(
    clippy::cast_possible_truncation,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)] // configuration time: i < TIMELY_PARAM_NUM
const fn val(v: &[u32; TIMELY_PARAM_NUM], id: u32) -> u32 {
    let mut i = 0;
    while i < TIMELY_PARAM_NUM {
        if i as u32 == id {
            return v[i];
        }
        i += 1;
    }
    0
}

/// The table's defaults as a value array.
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)] // compile time: i < len
const fn defaults() -> [u32; TIMELY_PARAM_NUM] {
    let mut v = [0u32; TIMELY_PARAM_NUM];
    let mut i = 0;
    while i < TIMELY_PARAM_NUM {
        v[i] = TIMELY_PARAMS[i].default;
        i += 1;
    }
    v
}

impl TimelyPccConfig {
    /// The table's defaults, validated at compile time.
    pub const DEFAULT: TimelyPccConfig = match TimelyPccConfig::from_values(defaults()) {
        Ok(c) => c,
        #[allow(clippy::panic)] // compile-time only: a const evaluation failure is a build error
        Err(_) => panic!("the parameter table's defaults are valid"),
    };

    /// Validates a whole value array (in id order) and derives every constant.
    ///
    /// # Errors
    /// [`ParamError::OutOfRange`] for the first value outside its row, else
    /// [`ParamError::Timely`] when timely-cc refuses the set.
    #[allow(
        clippy::arithmetic_side_effects,
        clippy::indexing_slicing,
        clippy::cast_possible_truncation
    )] // configuration time: bounded by the table's ranges checked first
    pub const fn from_values(v: [u32; TIMELY_PARAM_NUM]) -> Result<TimelyPccConfig, ParamError> {
        let mut i = 0;
        while i < TIMELY_PARAM_NUM {
            let p = TIMELY_PARAMS[i];
            if v[i] < p.min || v[i] > p.max {
                return Err(ParamError::OutOfRange {
                    id: p.id,
                    value: v[i],
                });
            }
            i += 1;
        }
        let line_bps = val(&v, timely_id::LINE_RATE_MBPS) as u64 * 1_000_000;
        // init = line·q20/2^20, rounded to nearest bit/s.
        let init_bps = ((line_bps as u128 * val(&v, timely_id::INIT_RATE_Q20) as u128 + (1 << 19))
            >> 20) as u64;
        let params = Params {
            line_rate_bps: line_bps,
            min_rate_bps: val(&v, timely_id::MIN_RATE_MBPS) as u64 * 1_000_000,
            max_rate_bps: line_bps,
            init_rate_bps: init_bps,
            t_low_ns: val(&v, timely_id::T_LOW_NS),
            t_high_ns: val(&v, timely_id::T_HIGH_NS),
            min_rtt_ns: val(&v, timely_id::MIN_RTT_NS),
            alpha: Ratio::new(val(&v, timely_id::ALPHA_MILLI), 1000),
            beta: Ratio::new(val(&v, timely_id::BETA_MILLI), 1000),
            delta_bps: val(&v, timely_id::DELTA_MBPS) as u64 * 1_000_000,
            hai_n: val(&v, timely_id::HAI_N),
            hai_after: val(&v, timely_id::HAI_AFTER),
            app_limited: None,
            per_completion_scaling: false,
        };
        let timely = match Config::new(params) {
            Ok(c) => c,
            Err(e) => return Err(ParamError::Timely(e)),
        };
        // Q20 of line rate = rate_u·128·2^20/line_bps (line_bps ≥ 1e6: the scale is < 2^32).
        let Some(q20) = Scale::from_ratio(128 << 20, line_bps as u128) else {
            return Err(ParamError::OutOfRange {
                id: timely_id::LINE_RATE_MBPS,
                value: val(&v, timely_id::LINE_RATE_MBPS),
            });
        };
        Ok(TimelyPccConfig {
            values: v,
            timely,
            q20,
            probe_timeout_ns: val(&v, timely_id::PROBE_TIMEOUT_NS),
            keep_turnaround: val(&v, timely_id::KEEP_TURNAROUND) != 0,
        })
    }

    /// `doca_pcc_dev_user_set_algo_params`: sets `new_values.len()` parameters starting at id
    /// `base`, all or none.
    ///
    /// # Errors
    /// [`ParamError`]; `self` is unchanged on error.
    pub fn set_params(&mut self, base: u32, new_values: &[u32]) -> Result<(), ParamError> {
        let num = u32::try_from(new_values.len()).unwrap_or(u32::MAX);
        let mut v = self.values;
        let dst = usize::try_from(base)
            .ok()
            .and_then(|b| v.get_mut(b..b.checked_add(new_values.len())?))
            .ok_or(ParamError::IdOutOfTable { base, num })?;
        dst.copy_from_slice(new_values);
        *self = TimelyPccConfig::from_values(v)?;
        Ok(())
    }

    /// Sets one parameter ([`set_params`](Self::set_params) with one value).
    ///
    /// # Errors
    /// As [`set_params`](Self::set_params).
    pub fn set_param(&mut self, id: u32, value: u32) -> Result<(), ParamError> {
        self.set_params(id, &[value])
    }

    /// The values in force, in id order (what the platform's `params` array holds).
    #[must_use]
    pub const fn values(&self) -> &[u32; TIMELY_PARAM_NUM] {
        &self.values
    }

    /// The timely-cc configuration derived from the values.
    #[must_use]
    pub const fn timely(&self) -> &Config {
        &self.timely
    }

    /// A rate in units of 128 b/s as Q20 of line rate: `round(rate·2^20/line)`, clamped to
    /// `[1, 2^20]`; the second value is `-1` / `+1` when the clamp acted, else 0.
    #[inline]
    #[must_use]
    #[allow(clippy::cast_possible_truncation)] // compared against 2^20 first
    pub fn rate_q20(&self, rate_u128bps: u32) -> (u32, i8) {
        // docs/pcc.md § "Sources" (results): the rate goes out as a 20-bit fixed-point fraction of
        // line rate in (0, 1].
        let q = self.q20.apply(rate_u128bps);
        if q > u64::from(Q20_ONE) {
            (Q20_ONE, 1)
        } else if q == 0 {
            (1, -1)
        } else {
            (q as u32, 0)
        }
    }
}

impl Default for TimelyPccConfig {
    fn default() -> Self {
        Self::DEFAULT
    }
}
