//! Per-call statistics and their markdown table.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::machine::CallResult;
use crate::timing::Stalls;

/// One measured call: the case label it belongs to (usually the branch the algorithm took, as
/// reported by the callee), its retired-instruction count and, where the machine estimated them,
/// its cycles.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sample {
    /// Row label inside the entry point, e.g. `"branch low"`, `"5 hops, md"`.
    pub case: String,
    /// Retired instructions of this call.
    pub instret: u64,
    /// Estimated CV32E40P cycles of this call ([`crate::timing`]) and their part beyond one per
    /// instruction by cause; `None` where only instructions were counted (QEMU's traces,
    /// `fw-bench counts`).
    pub cycles: Option<(u64, Stalls)>,
    /// The call's [`CallResult::seq`] on its machine, for a call on rvsim (`fw-bench rtl`
    /// matches the RTL's measurement of the same call by it).
    pub call: Option<u64>,
}

impl Sample {
    /// A sample labelled `case` with an instruction count only.
    pub fn new(case: impl Into<String>, instret: u64) -> Self {
        Self {
            case: case.into(),
            instret,
            cycles: None,
            call: None,
        }
    }

    /// A sample labelled `case` of a call on rvsim: its instructions and estimated cycles.
    pub fn of_call(case: impl Into<String>, r: &CallResult) -> Self {
        Self {
            case: case.into(),
            instret: r.instret,
            cycles: Some((r.cycles, r.stalls)),
            call: Some(r.seq),
        }
    }
}

/// Estimated cycles of a row's calls (CV32E40P timing model).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cycles {
    /// Median (lower median for even `n`).
    pub median: u64,
    /// 99th percentile (nearest rank).
    pub p99: u64,
    /// The cycles beyond one per instruction of all the row's calls, by cause (a sum: divide
    /// by the row's `n` for the mean per call).
    pub stalls: Stalls,
}

/// A goal for the median of one row (an entry point and a branch), from docs/performance.md § "The
/// budget".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Goal {
    /// Median instructions per call must not exceed this.
    pub median_max: u64,
}

/// One table row: algorithm / entry point / case, with count statistics.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    /// `TIMELY`, `HPCC`, `CATS`, `cc-math`.
    pub algorithm: String,
    /// The entry point (the called symbol, or a readable name for it).
    pub entry: String,
    /// Case label (branch, hop count…).
    pub case: String,
    /// Number of calls measured.
    pub n: usize,
    /// Fewest instructions.
    pub min: u64,
    /// Median (lower median for even `n`).
    pub median: u64,
    /// 99th percentile (nearest rank).
    pub p99: u64,
    /// Most instructions.
    pub max: u64,
    /// The goal, if docs/performance.md sets one.
    pub goal: Option<Goal>,
    /// Estimated cycles, when every sample of the row has them.
    pub cycles: Option<Cycles>,
}

/// `(median, p99)` of sorted, non-empty `v`: the lower median and the nearest-rank 99th
/// percentile.
fn median_p99(v: &[u64]) -> (u64, u64) {
    let n = v.len();
    let rank = |q: f64| v[((q * n as f64).ceil() as usize).clamp(1, n) - 1];
    (v[(n - 1) / 2], rank(0.99))
}

/// Groups `samples` by case label (in first-seen order) and summarises each group.
pub fn rows(
    algorithm: &str,
    entry: &str,
    goal: fn(&str) -> Option<Goal>,
    samples: &[Sample],
) -> Vec<Row> {
    let mut order: Vec<&str> = Vec::new();
    // Per case: the instruction counts and the cycle estimates with their summed stalls
    // (`None` once a sample lacks an estimate).
    type Group = (Vec<u64>, Option<(Vec<u64>, Stalls)>);
    let mut groups: BTreeMap<&str, Group> = BTreeMap::new();
    for s in samples {
        let g = groups.entry(&s.case).or_insert_with(|| {
            order.push(&s.case);
            (Vec::new(), Some((Vec::new(), Stalls::default())))
        });
        g.0.push(s.instret);
        g.1 = match (g.1.take(), s.cycles) {
            (Some((mut c, mut st)), Some((x, xs))) => {
                c.push(x);
                st.add(&xs);
                Some((c, st))
            }
            _ => None,
        };
    }
    order
        .into_iter()
        .map(|case| {
            let (mut v, c) = groups.remove(case).unwrap_or_default();
            v.sort_unstable();
            let n = v.len();
            let (median, p99) = median_p99(&v);
            let cycles = c.map(|(mut c, stalls)| {
                c.sort_unstable();
                let (median, p99) = median_p99(&c);
                Cycles {
                    median,
                    p99,
                    stalls,
                }
            });
            Row {
                algorithm: algorithm.to_owned(),
                entry: entry.to_owned(),
                case: case.to_owned(),
                n,
                min: v[0],
                median,
                p99,
                max: v[n - 1],
                goal: goal(case),
                cycles,
            }
        })
        .collect()
}

/// The markdown table of `rows`.
pub fn markdown(rows: &[Row]) -> String {
    markdown_with_zbb(rows, None)
}

/// The markdown table of `rows` (the rv32imac build): instructions, then the estimated cycles
/// (median and p99, CV32E40P), then the median and p99 instructions of the same row (same
/// algorithm, entry point and case) of a `+zbb` build when `zbb` is given. Goals are judged on
/// the rv32imac instruction median.
pub fn markdown_with_zbb(rows: &[Row], zbb: Option<&[Row]>) -> String {
    let mut s = String::from(match zbb {
        None => {
            "| algorithm | entry point | case / branch | n calls | min | median | p99 | max | cycles median | cycles p99 | goal (median) |\n\
             |---|---|---|---:|---:|---:|---:|---:|---:|---:|---|\n"
        }
        Some(_) => {
            "| algorithm | entry point | case / branch | n calls | min | median | p99 | max | cycles median | cycles p99 | Zbb median | Zbb p99 | goal (rv32imac median) |\n\
             |---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n"
        }
    });
    for r in rows {
        let goal = match r.goal {
            Some(g) if r.median <= g.median_max => format!("≤ {} ✔", g.median_max),
            Some(g) => format!("≤ {} **missed**", g.median_max),
            None => "—".to_owned(),
        };
        let zbb_cols = match zbb {
            None => String::new(),
            Some(z) => match z
                .iter()
                .find(|z| z.algorithm == r.algorithm && z.entry == r.entry && z.case == r.case)
            {
                Some(z) => format!(" {} | {} |", z.median, z.p99),
                None => " — | — |".to_owned(),
            },
        };
        let cycles = match r.cycles {
            Some(c) => format!(" {} | {} |", c.median, c.p99),
            None => " — | — |".to_owned(),
        };
        let _ = writeln!(
            s,
            "| {} | `{}` | {} | {} | {} | {} | {} | {} |{cycles}{zbb_cols} {} |",
            r.algorithm, r.entry, r.case, r.n, r.min, r.median, r.p99, r.max, goal
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_and_summarises_in_first_seen_order() {
        let samples: Vec<Sample> = [("b", 5), ("a", 1), ("b", 7), ("b", 6), ("a", 3)]
            .iter()
            .map(|&(c, n)| Sample::new(c, n))
            .collect();
        let r = rows("X", "f", |_| Some(Goal { median_max: 5 }), &samples);
        assert_eq!(r.len(), 2);
        assert_eq!(
            (r[0].case.as_str(), r[0].n, r[0].min, r[0].median, r[0].max),
            ("b", 3, 5, 6, 7)
        );
        assert_eq!((r[1].case.as_str(), r[1].median, r[1].p99), ("a", 1, 3));
        let md = markdown(&r);
        assert!(md.contains("≤ 5 **missed**"), "{md}");
        assert!(md.contains("≤ 5 ✔"), "{md}");
        // The Zbb columns: matched by case; a row the Zbb build lacks shows dashes; goals stay
        // on the rv32imac median.
        let z = rows("X", "f", |_| None, &samples[1..2]);
        let md = markdown_with_zbb(&r, Some(&z));
        assert!(md.contains("| Zbb median | Zbb p99 |"), "{md}");
        // Instruction counts alone (QEMU's): the cycle columns show dashes.
        assert!(md.contains("| 1 | 3 | 3 | — | — | 1 | 1 | ≤ 5 ✔ |"), "{md}");
        assert!(
            md.contains("| 7 | — | — | — | — | ≤ 5 **missed** |"),
            "{md}"
        );
    }

    fn timed(case: &str, instret: u64, cycles: u64) -> Sample {
        let mut stalls = Stalls::default();
        stalls.0[0] = cycles - instret;
        Sample {
            case: case.to_owned(),
            instret,
            cycles: Some((cycles, stalls)),
            call: None,
        }
    }

    #[test]
    fn a_row_has_cycles_only_when_every_call_has_them() {
        let mut samples: Vec<Sample> = (1..=100).map(|i| timed("t", i, 3 * i)).collect();
        samples.push(timed("m", 4, 9));
        samples.push(Sample::new("m", 5));
        let r = rows("X", "f", |_| None, &samples);
        // 100 calls: lower median the 50th, p99 the 99th (nearest rank), of the cycles alone.
        let c = r[0].cycles.unwrap();
        assert_eq!((c.median, c.p99), (150, 297));
        // Σ (3i − i) over i = 1..100.
        assert_eq!(c.stalls.total(), 2 * 5050);
        assert_eq!((r[0].median, r[0].p99), (50, 99));
        assert_eq!(r[1].cycles, None);
        let md = markdown(&r);
        assert!(md.contains("| 100 | 150 | 297 | — |"), "{md}");
        assert!(md.contains("| 5 | — | — | — |"), "{md}");
    }
}
