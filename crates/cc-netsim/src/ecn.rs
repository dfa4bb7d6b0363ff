//! ECN marking at switch egress, as the HPCC authors' ns-3 simulator does it
//! (`SwitchMmu::ShouldSendCN`, `simulation/src/point-to-point/model/switch-mmu.cc`, commit
//! `9f4be2a`): when a data packet leaves an egress queue, with `q` the bytes still queued
//! behind it, it is marked CE
//!
//! * never when `q ≤ Kmin`,
//! * with probability `Pmax · (q − Kmin) / (Kmax − Kmin)` when `Kmin < q ≤ Kmax`,
//! * always when `q > Kmax`.
//!
//! Kmin, Kmax and Pmax are chosen per egress link rate (ns-3's `KMIN_MAP`, `KMAX_MAP`,
//! `PMAX_MAP` in `simulation/mix/config.txt`, in KB there: 25 Gb/s 100/400 KB, 50 Gb/s
//! 200/800 KB, 100 Gb/s 400/1600 KB, Pmax 0.2 each; `simulation/run.py` adds the fabric's
//! 4× rates on the same scale: 200 Gb/s 800/3200 KB, 400 Gb/s 1600/6400 KB). A single threshold
//! (`topology.ecn_threshold_bytes = K`) is the same rule with Kmin = Kmax = K: the probability
//! band is empty and every packet leaving a queue longer than K is marked.
//!
//! The scenario gives the maps as `[topology.ecn]` with `kmin_bytes`, `kmax_bytes` and `pmax`,
//! each a list of `[rate_bps, value]` pairs over ns-3's defaults. Every switch egress rate of
//! the topology needs all three (ns-3 asserts the same: "must set kmin for each link speed");
//! a pair for a rate no switch port runs at does not apply and is refused.

use super::scenario::{Loaded, ScenarioError, TopoKind};
use serde::Serialize;

/// ns-3's Kmin per link rate, bytes: `KMIN_MAP` of `simulation/mix/config.txt` (25, 50,
/// 100 Gb/s, in KB there; `SwitchMmu::ConfigEcn` multiplies by 1000) and the 4×-rate fabric
/// entries `simulation/run.py` writes for `--bw 50` and `--bw 100` (200, 400 Gb/s): 4 KB per
/// Gb/s throughout.
pub const NS3_KMIN: [(u64, u64); 5] = [
    (25_000_000_000, 100_000),
    (50_000_000_000, 200_000),
    (100_000_000_000, 400_000),
    (200_000_000_000, 800_000),
    (400_000_000_000, 1_600_000),
];
/// ns-3's Kmax per link rate, bytes (`KMAX_MAP`, run.py): 16 KB per Gb/s.
pub const NS3_KMAX: [(u64, u64); 5] = [
    (25_000_000_000, 400_000),
    (50_000_000_000, 800_000),
    (100_000_000_000, 1_600_000),
    (200_000_000_000, 3_200_000),
    (400_000_000_000, 6_400_000),
];
/// ns-3's Pmax per link rate (`PMAX_MAP`, run.py): 0.2.
pub const NS3_PMAX: [(u64, f64); 5] = [
    (25_000_000_000, 0.2),
    (50_000_000_000, 0.2),
    (100_000_000_000, 0.2),
    (200_000_000_000, 0.2),
    (400_000_000_000, 0.2),
];

/// `[topology.ecn]`: per-rate `[rate_bps, value]` pairs over ns-3's maps.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EcnSpec {
    /// Kmin per egress link rate, bytes.
    #[serde(default)]
    pub kmin_bytes: Vec<(u64, u64)>,
    /// Kmax per egress link rate, bytes.
    #[serde(default)]
    pub kmax_bytes: Vec<(u64, u64)>,
    /// Pmax per egress link rate, in `0 ..= 1`.
    #[serde(default)]
    pub pmax: Vec<(u64, f64)>,
}

/// The marking rule of the switch ports that run at one rate, and where its values came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EcnRule {
    /// The egress link rate, b/s.
    pub rate_bps: u64,
    /// No mark at or below this queue, bytes.
    pub kmin_bytes: u64,
    /// Always a mark above this queue, bytes.
    pub kmax_bytes: u64,
    /// The marking probability at Kmax.
    pub pmax: f64,
    /// Where Kmin, Kmax and Pmax came from (`default: ns-3 …` or the scenario key).
    pub origin: [String; 3],
}

impl EcnRule {
    /// Whether a packet leaving a queue of `q` bytes is marked; `u` is a uniform draw in
    /// `[0, 1)`, used only inside the probability band.
    pub fn marks(&self, q: u64, u: impl FnOnce() -> f64) -> bool {
        if q > self.kmax_bytes {
            true
        } else if q > self.kmin_bytes {
            // ns-3: p = Pmax·(q − Kmin)/(Kmax − Kmin); Kmin < q ≤ Kmax, so Kmax > Kmin here.
            let p = self.pmax * (q - self.kmin_bytes) as f64
                / (self.kmax_bytes - self.kmin_bytes) as f64;
            u() < p
        } else {
            false
        }
    }
}

/// The egress link rates of the topology's switch ports, ascending, without repeats.
fn switch_rates(l: &Loaded) -> Vec<u64> {
    let t = &l.sc.topology;
    let mut r = vec![t.host_rate_bps];
    if t.kind != TopoKind::Star {
        r.push(t.fabric_rate_bps.unwrap_or(t.host_rate_bps));
    }
    r.sort_unstable();
    r.dedup();
    r
}

fn gbps(r: u64) -> String {
    if r.is_multiple_of(1_000_000_000) {
        format!("{} Gb/s", r / 1_000_000_000)
    } else {
        format!("{r} b/s")
    }
}

/// The marking rules in force, one per switch egress rate (empty: no ECN marking), or the
/// error naming the key that cannot apply.
pub fn rules(l: &Loaded) -> Result<Vec<EcnRule>, ScenarioError> {
    let t = &l.sc.topology;
    let file = l.file.display().to_string();
    let rates = switch_rates(l);
    match (&t.ecn, t.ecn_threshold_bytes) {
        (None, None) => Ok(Vec::new()),
        (Some(_), Some(_)) => Err(l.err(
            "topology.ecn_threshold_bytes",
            "one marking rule only: a single threshold or [topology.ecn], not both",
        )),
        (None, Some(k)) => {
            let origin = format!("scenario {file} topology.ecn_threshold_bytes");
            Ok(rates
                .iter()
                .map(|&rate_bps| EcnRule {
                    rate_bps,
                    kmin_bytes: k,
                    kmax_bytes: k,
                    pmax: 1.0,
                    origin: [origin.clone(), origin.clone(), origin.clone()],
                })
                .collect())
        }
        (Some(spec), None) => {
            let all = rates
                .iter()
                .map(|r| gbps(*r))
                .collect::<Vec<_>>()
                .join(", ");
            // Every pair names a rate some switch port runs at, once.
            fn check_keys<V>(
                l: &Loaded,
                key: &str,
                pairs: &[(u64, V)],
                rates: &[u64],
                all: &str,
            ) -> Result<(), ScenarioError> {
                for (i, (r, _)) in pairs.iter().enumerate() {
                    if !rates.contains(r) {
                        return Err(l.err(
                            &format!("topology.ecn.{key}"),
                            format!(
                                "{r} b/s: no switch port of this topology runs at that rate \
                                 (switch egress rates: {all}): the entry would not apply"
                            ),
                        ));
                    }
                    if pairs[..i].iter().any(|(q, _)| q == r) {
                        return Err(l.err(
                            &format!("topology.ecn.{key}"),
                            format!("{r} b/s is given twice"),
                        ));
                    }
                }
                Ok(())
            }
            check_keys(l, "kmin_bytes", &spec.kmin_bytes, &rates, &all)?;
            check_keys(l, "kmax_bytes", &spec.kmax_bytes, &rates, &all)?;
            check_keys(l, "pmax", &spec.pmax, &rates, &all)?;
            let mut out = Vec::new();
            for &rate_bps in &rates {
                let (kmin, o0) = pick(
                    l,
                    "kmin_bytes",
                    "KMIN_MAP",
                    rate_bps,
                    &spec.kmin_bytes,
                    &NS3_KMIN,
                )?;
                let (kmax, o1) = pick(
                    l,
                    "kmax_bytes",
                    "KMAX_MAP",
                    rate_bps,
                    &spec.kmax_bytes,
                    &NS3_KMAX,
                )?;
                let (pmax, o2) = pick(l, "pmax", "PMAX_MAP", rate_bps, &spec.pmax, &NS3_PMAX)?;
                if kmin > kmax {
                    return Err(l.err(
                        "topology.ecn",
                        format!("{}: kmin {kmin} B is above kmax {kmax} B", gbps(rate_bps)),
                    ));
                }
                if !(0.0..=1.0).contains(&pmax) {
                    return Err(l.err(
                        "topology.ecn.pmax",
                        format!("{}: {pmax} is outside 0 ..= 1", gbps(rate_bps)),
                    ));
                }
                out.push(EcnRule {
                    rate_bps,
                    kmin_bytes: kmin,
                    kmax_bytes: kmax,
                    pmax,
                    origin: [o0, o1, o2],
                });
            }
            Ok(out)
        }
    }
}

/// The value of `key` for the ports at `rate_bps`: the scenario's pair, else ns-3's default,
/// else an error naming the key; with its origin.
fn pick<T: Copy>(
    l: &Loaded,
    key: &str,
    map: &str,
    rate_bps: u64,
    given: &[(u64, T)],
    dflt: &[(u64, T)],
) -> Result<(T, String), ScenarioError> {
    let find = |pairs: &[(u64, T)]| pairs.iter().find(|p| p.0 == rate_bps).map(|p| p.1);
    match (find(given), find(dflt)) {
        (Some(v), _) => Ok((
            v,
            format!("scenario {} topology.ecn.{key}", l.file.display()),
        )),
        (None, Some(v)) => Ok((
            v,
            format!("default: ns-3 {map} (mix/config.txt, run.py)"),
        )),
        (None, None) => Err(l.err(
            &format!("topology.ecn.{key}"),
            format!(
                "no value for the {} switch ports (ns-3's {map} covers 25, 50, 100, 200 and 400 Gb/s): \
                 give `{key} = [[{rate_bps}, …]]`",
                gbps(rate_bps)
            ),
        )),
    }
}
