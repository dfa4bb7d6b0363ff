//! `kind = "poisson_incast"`: Poisson arrivals of incast events (the HPCC paper's Fig. 11
//! incast as its first author specified it: each event one receiver and `fan_in` senders at
//! random, each sending `size_bytes`; the events' bytes `load` of the network's capacity). What
//! is pinned: the events' shape, their rate and gaps, the window they fall in, determinism, the
//! report, and the refusals.

use crate::common::{scenarios_dir, sim_exit};

use cc_netsim::SimOpts;
use cc_netsim::scenario::{self, ControllerKind};
use sim_host::sim::run_loaded;
use std::collections::{BTreeMap, BTreeSet};

/// 8 hosts on a 100 Gb/s star (800 Gb/s of host links), HPCC; one poisson_incast group with
/// `group` as its keys.
fn star(group: &str, duration_ns: u64, seed: u64) -> String {
    format!(
        r#"
name = "t_poisson_incast"
algorithm = "hpcc"
seed = {seed}
duration_ns = {duration_ns}
[topology]
kind = "star"
hosts = 8
host_rate_bps = 100_000_000_000
[[flows]]
kind = "poisson_incast"
{group}
"#
    )
}

/// 2 senders of 1 500 B at 10 % of 800 Gb/s: 80 Gb/s / 24 000 bits per event, one event every
/// 300 ns on average.
const SMALL: &str = "load = 0.1\nfan_in = 2\nsize_bytes = 1500";
/// Mean gap of `SMALL`, ns: fan_in·size·8 / (load·hosts·rate) = 24 000 / 80e9 s = 300 ns.
const SMALL_GAP_NS: f64 = 300.0;

fn load(text: &str) -> scenario::Loaded {
    crate::common::load("t_poisson_incast.toml", text)
}

fn run(text: &str) -> (cc_netsim::Report, cc_netsim::engine::Sim) {
    let o = SimOpts {
        controller: Some(ControllerKind::Fixed),
        ..SimOpts::default()
    };
    let (r, sim) = run_loaded(&load(text), &o).unwrap_or_else(|e| panic!("{e}"));
    assert!(r.violations.is_empty(), "{:?}", r.violations);
    (r, sim)
}

/// The events of a run: flows grouped by their start (every flow of an event starts at its
/// time), as (start ps, receiver(s), senders).
fn events(sim: &cc_netsim::engine::Sim) -> Vec<(u64, BTreeSet<u32>, Vec<u32>)> {
    let mut by_t: BTreeMap<u64, (BTreeSet<u32>, Vec<u32>)> = BTreeMap::new();
    for f in &sim.flows {
        let e = by_t.entry(f.start_ps).or_default();
        e.0.insert(f.dst);
        e.1.push(f.src);
    }
    by_t.into_iter().map(|(t, (d, s))| (t, d, s)).collect()
}

#[test]
fn each_incast_has_fan_in_distinct_senders_and_one_receiver_not_among_them() {
    let (r, sim) = run(&star(
        "load = 0.1\nfan_in = 5\nsize_bytes = 1500",
        200_000,
        1,
    ));
    let ev = events(&sim);
    assert!(ev.len() > 50, "{} events", ev.len());
    let mut receivers = BTreeSet::new();
    let mut senders = BTreeSet::new();
    for (t, dst, src) in &ev {
        assert_eq!(dst.len(), 1, "one receiver at {t} ps: {dst:?}");
        let d = *dst.first().unwrap();
        let distinct: BTreeSet<u32> = src.iter().copied().collect();
        assert_eq!(src.len(), 5, "fan_in senders at {t} ps: {src:?}");
        assert_eq!(distinct.len(), 5, "distinct senders at {t} ps: {src:?}");
        assert!(
            !distinct.contains(&d),
            "the receiver {d} sends to itself at {t} ps"
        );
        receivers.insert(d);
        senders.extend(distinct);
    }
    // Uniform picks: over this many events every host receives and sends at least once.
    assert_eq!(receivers.len(), 8, "{receivers:?}");
    assert_eq!(senders.len(), 8, "{senders:?}");
    assert!(sim.flows.iter().all(|f| f.size_bytes == 1500));
    assert_eq!(r.flows_sized, sim.flows.len());
}

#[test]
fn a_fan_in_of_every_other_host_makes_each_host_but_the_receiver_send() {
    let (_, sim) = run(&star(
        "load = 0.1\nfan_in = 7\nsize_bytes = 1500",
        50_000,
        2,
    ));
    let ev = events(&sim);
    assert!(ev.len() > 5, "{} events", ev.len());
    for (t, dst, src) in ev {
        let d = *dst.first().unwrap();
        let want: BTreeSet<u32> = (0..8).filter(|&h| h != d).collect();
        assert_eq!(src.into_iter().collect::<BTreeSet<_>>(), want, "at {t} ps");
    }
}

#[test]
fn poisson_incast_realises_its_load_within_10_percent() {
    // 300 µs at one event per 300 ns: ~1 000 events, so the count's standard deviation is
    // ~3 % and 10 % is over 3 of them.
    let (r, _) = run(&star(SMALL, 300_000, 3));
    assert_eq!(r.load.len(), 1);
    let g = &r.load[0];
    assert_eq!(g.nominal, 0.1);
    let capacity_bits = 8.0 * 100e9 * 300e-6;
    assert!((g.realised - g.bytes as f64 * 8.0 / capacity_bits).abs() < 1e-12);
    assert!((g.realised / 0.1 - 1.0).abs() < 0.10, "{g:?}");
    assert_eq!(g.fan_in, Some(2));
    assert_eq!(g.incasts, Some(g.flows / 2));
    assert_eq!(g.flows % 2, 0, "every event makes fan_in flows");
    assert_eq!(g.bytes, g.flows as u64 * 1500);
}

#[test]
fn incast_gaps_have_the_mean_of_the_load_and_the_spread_of_a_poisson_process() {
    let (_, sim) = run(&star(SMALL, 300_000, 4));
    let t: Vec<f64> = events(&sim)
        .iter()
        .map(|(t, _, _)| *t as f64 / 1e3)
        .collect();
    let gaps: Vec<f64> = t.windows(2).map(|w| w[1] - w[0]).collect();
    let n = gaps.len() as f64;
    let mean = gaps.iter().sum::<f64>() / n;
    let sd = (gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / n).sqrt();
    // Exponential gaps: the mean is fan_in·size·8 / (load·hosts·rate), and the standard
    // deviation equals the mean (coefficient of variation 1; a fixed period would give 0).
    assert!(
        (mean / SMALL_GAP_NS - 1.0).abs() < 0.10,
        "mean gap {mean} ns"
    );
    assert!((sd / mean - 1.0).abs() < 0.15, "cv {}", sd / mean);
}

#[test]
fn poisson_incast_events_fall_between_start_ns_and_stop_ns() {
    let group = format!("{SMALL}\nstart_ns = 50_000\nstop_ns = 150_000");
    let (r, sim) = run(&star(&group, 200_000, 5));
    let ev = events(&sim);
    assert!(!ev.is_empty());
    for (t, _, _) in &ev {
        assert!((50_000_000..150_000_000).contains(t), "event at {t} ps");
    }
    // The realised load is over the window the events may fall in (100 µs).
    let g = &r.load[0];
    let capacity_bits = 8.0 * 100e9 * 100e-6;
    assert!((g.realised - g.bytes as f64 * 8.0 / capacity_bits).abs() < 1e-12);
    assert!((g.realised / 0.1 - 1.0).abs() < 0.2, "{g:?}");
}

#[test]
fn poisson_incast_is_the_same_for_a_seed_and_differs_with_another() {
    let shape = |seed| {
        let (_, sim) = run(&star(SMALL, 20_000, seed));
        events(&sim)
    };
    let a = shape(6);
    assert_eq!(a, shape(6));
    assert_ne!(a, shape(7));
}

#[test]
fn the_report_prints_the_incast_events_beside_the_realised_load() {
    let (r, _) = run(&star(SMALL, 20_000, 8));
    let g = &r.load[0];
    let t = sim_host::sim::text(&r);
    let line = format!(
        "load of flows[0]: nominal 0.100, realised {:.3} ({} flows, {} B; incast events: {}, 2 senders each)",
        g.realised,
        g.flows,
        g.bytes,
        g.incasts.unwrap()
    );
    assert!(t.contains(&line), "{line}\n{t}");
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["load"][0]["incasts"], serde_json::json!(g.incasts));
    assert_eq!(json["load"][0]["fan_in"], serde_json::json!(2));
}

#[test]
fn poisson_incast_refuses_fan_in_above_hosts() {
    let e = scenario::parse(
        &scenarios_dir().join("t_poisson_incast.toml"),
        &star("load = 0.1\nfan_in = 8\nsize_bytes = 1500", 20_000, 0),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("t_poisson_incast.toml"), "{e}");
    assert!(e.contains("flows[0].fan_in"), "{e}");
    assert!(e.contains("1 ..= 7"), "{e}");
}

#[test]
fn poisson_incast_refuses_missing_impossible_and_foreign_keys_naming_file_and_key() {
    let s = |g: &str| star(g, 20_000, 0);
    let cdf = scenarios_dir().join("cdf/hadoop.cdf");
    let cases = [
        (
            s("fan_in = 2\nsize_bytes = 1500"),
            "flows[0].load",
            "required",
        ),
        (
            s("load = 0\nfan_in = 2\nsize_bytes = 1500"),
            "flows[0].load",
            "(0, 1)",
        ),
        (
            s("load = 1.0\nfan_in = 2\nsize_bytes = 1500"),
            "flows[0].load",
            "(0, 1)",
        ),
        (
            s("load = 0.1\nsize_bytes = 1500"),
            "flows[0].fan_in",
            "required",
        ),
        (
            s("load = 0.1\nfan_in = 0\nsize_bytes = 1500"),
            "flows[0].fan_in",
            "1 ..= 7",
        ),
        (
            s("load = 0.1\nfan_in = 2"),
            "flows[0].size_bytes",
            "required",
        ),
        (
            s("load = 0.1\nfan_in = 2\nsize_bytes = 0"),
            "flows[0].size_bytes",
            "> 0",
        ),
        (
            s(&format!("{SMALL}\nsrc = [1]")),
            "flows[0].src",
            "does not apply",
        ),
        (
            s(&format!("{SMALL}\ndst = 0")),
            "flows[0].dst",
            "does not apply",
        ),
        (
            s(&format!("{SMALL}\nstagger_ns = 10")),
            "flows[0].stagger_ns",
            "does not apply",
        ),
        (
            s(&format!("{SMALL}\ncdf = \"cdf/hadoop.cdf\"")),
            "flows[0].cdf",
            "does not apply",
        ),
        (
            s(&format!("{SMALL}\nstop_ns = 0")),
            "flows[0].stop_ns",
            "after start_ns",
        ),
        (s(&format!("{SMALL}\nfan_out = 2")), "fan_out", ""),
        // fan_in belongs to poisson_incast only.
        (
            s(SMALL)
                .replace(
                    "kind = \"poisson_incast\"",
                    "kind = \"incast\"\nsrc = [1]\ndst = 0",
                )
                .replace("load = 0.1\n", ""),
            "flows[0].fan_in",
            "poisson_incast only",
        ),
        (
            s(&format!(
                "load = 0.1\nfan_in = 2\ncdf = \"{}\"",
                cdf.display()
            ))
            .replace("kind = \"poisson_incast\"", "kind = \"poisson\""),
            "flows[0].fan_in",
            "poisson_incast only",
        ),
    ];
    for (text, key, why) in cases {
        let (code, err, p) = sim_exit(&text, &[]);
        assert_eq!(code, Some(2), "{key}: {err}");
        assert!(
            err.contains(&p.display().to_string()),
            "{key}: names the file: {err}"
        );
        assert!(err.contains(key), "{key}: names the key: {err}");
        assert!(err.contains(why), "{key}: says why ({why}): {err}");
    }
}

#[test]
fn the_fat_tree_incast_scenarios_run_the_paper_s_incast() {
    for a in ["hpcc", "dcqcn", "dctcp", "timely"] {
        let p = scenarios_dir().join(format!("{a}_fat_hadoop_30_incast.toml"));
        let l = scenario::load(&p).unwrap_or_else(|e| panic!("{e}"));
        let g: Vec<_> = l.sc.flows.iter().map(|g| (g.kind, g.load)).collect();
        assert_eq!(
            g,
            [
                (scenario::GroupKind::Poisson, Some(0.3)),
                (scenario::GroupKind::PoissonIncast, Some(0.02))
            ],
            "{a}"
        );
        let i = &l.sc.flows[1];
        assert_eq!((i.fan_in, i.size_bytes), (Some(60), Some(500_000)), "{a}");
        assert_eq!(l.hosts, 320, "{a}");
    }
}
