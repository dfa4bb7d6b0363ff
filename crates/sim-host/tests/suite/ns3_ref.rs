//! `switch_model = "ns3"` against the HPCC authors' ns-3 simulator's own outputs
//! (`tests/ns3-ref/`, README there): each run's `fct.txt` is held against ns-3's, flow by flow,
//! matched by (sip, dip, sport, dport).

use cc_netsim::SimOpts;
use cc_netsim::scenario::ControllerKind;
use sim_host::sim::run_file;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

fn dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/ns3-ref")
        .join(name)
}

/// A `fct.txt` line: `(size, start ns, fct ns)` by `(sip, dip, sport, dport)`.
type Fct = HashMap<(String, String, u16, u16), (u64, u64, u64)>;

fn parse_fct(p: &Path) -> Fct {
    let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let mut m = Fct::new();
    for (i, l) in text.lines().enumerate() {
        let f: Vec<&str> = l.split_whitespace().collect();
        assert_eq!(f.len(), 8, "{}: line {}", p.display(), i + 1);
        let n = |k: usize| -> u64 { f[k].parse().unwrap() };
        let key = (f[0].to_string(), f[1].to_string(), n(2) as u16, n(3) as u16);
        assert!(
            m.insert(key, (n(4), n(5), n(6))).is_none(),
            "{}: line {}: a flow twice",
            p.display(),
            i + 1
        );
    }
    m
}

/// Runs `scenario` on ns-3's topology and flow files; our `fct.txt`, read back.
fn run_ours(scenario: &Path, topo: &Path, flows: &Path) -> Fct {
    run_with(scenario, topo, flows, None)
}

/// [`run_ours`] with `--controller`.
fn run_with(scenario: &Path, topo: &Path, flows: &Path, controller: Option<ControllerKind>) -> Fct {
    run_set(scenario, topo, flows, controller, Vec::new())
}

/// [`run_with`] and `--set` parameters.
fn run_set(
    scenario: &Path,
    topo: &Path,
    flows: &Path,
    controller: Option<ControllerKind>,
    set: Vec<cc_trace::Param>,
) -> Fct {
    let d = tempfile::tempdir().unwrap();
    let o = SimOpts {
        ns3_out: Some(d.path().to_path_buf()),
        ns3_topology: Some(topo.to_path_buf()),
        ns3_flows: Some(flows.to_path_buf()),
        controller,
        set,
        ..SimOpts::default()
    };
    let (r, _) = run_file(scenario, &o).unwrap_or_else(|e| panic!("{e}"));
    assert!(r.violations.is_empty(), "{:?}", r.violations);
    parse_fct(&d.path().join("fct.txt"))
}

/// Every ns-3 flow finished in our run too, with its size and start; `(ns-3 FCT, ours)` per
/// flow.
fn matched(ns3: &Fct, ours: &Fct) -> Vec<(u64, u64)> {
    assert_eq!(ours.len(), ns3.len(), "finished flows: ours vs ns-3's");
    ns3.iter()
        .map(|(k, &(size, start, fct))| {
            let &(s, st, f) = ours
                .get(k)
                .unwrap_or_else(|| panic!("ns-3's flow {k:?} is not in our fct.txt"));
            assert_eq!((s, st), (size, start), "flow {k:?}: size and start");
            (fct, f)
        })
        .collect()
}

#[test]
fn ns3_model_episodes_finish_at_ns3_s_fct_to_the_nanosecond() {
    let d = dir("episodes");
    let ns3 = parse_fct(&d.join("fct.txt"));
    let ours = run_ours(
        &dir("A_hp").join("scenario.toml"),
        &d.join("topology.txt"),
        &d.join("flow.txt"),
    );
    let pairs = matched(&ns3, &ours);
    assert_eq!(pairs.len(), 20);
    let off: Vec<_> = pairs.iter().filter(|(a, b)| a != b).collect();
    assert!(off.is_empty(), "(ns-3, ours) FCTs that differ: {off:?}");
}

#[test]
fn ns3_model_fat_tree_flows_finish_within_a_nanosecond_of_ns3() {
    let d = dir("fat_tree");
    let ns3 = parse_fct(&d.join("fct.txt"));
    let ours = run_ours(
        &d.join("scenario.toml"),
        &d.join("topology.txt"),
        &d.join("flow.txt"),
    );
    let pairs = matched(&ns3, &ours);
    assert_eq!(pairs.len(), 30);
    let exact = pairs.iter().filter(|(a, b)| a == b).count();
    let worst = pairs.iter().map(|&(a, b)| a.abs_diff(b)).max().unwrap();
    // Measured: 28 of 30 exact, 2 one ns apart (a pacing gap rounded differently: the
    // crate's fixed point against ns-3's double).
    assert!(
        worst <= 1 && exact >= 28,
        "{exact} of 30 exact, worst {worst} ns"
    );
    // With ns-3's arithmetic, every flow to the ns.
    let ours = run_with(
        &d.join("scenario.toml"),
        &d.join("topology.txt"),
        &d.join("flow.txt"),
        Some(ControllerKind::Ns3),
    );
    let off: Vec<_> = matched(&ns3, &ours)
        .into_iter()
        .filter(|(a, b)| a != b)
        .collect();
    assert!(
        off.is_empty(),
        "--controller ns3: (ns-3, ours) that differ: {off:?}"
    );
}

/// The percentile `p` of sorted `v`, as `v[⌊p·n⌋]`.
fn pct(v: &[f64], p: f64) -> f64 {
    v[((p * v.len() as f64) as usize).min(v.len() - 1)]
}

/// Pearson's r of `(x, y)`.
fn pearson(xy: &[(f64, f64)]) -> f64 {
    let n = xy.len() as f64;
    let (mx, my) = (
        xy.iter().map(|p| p.0).sum::<f64>() / n,
        xy.iter().map(|p| p.1).sum::<f64>() / n,
    );
    let (mut c, mut vx, mut vy) = (0.0, 0.0, 0.0);
    for &(x, y) in xy {
        c += (x - mx) * (y - my);
        vx += (x - mx) * (x - mx);
        vy += (y - my) * (y - my);
    }
    c / (vx * vy).sqrt()
}

/// The shared ns-3 workload (../shared/ns3-ref/A_hp; docs/sim.md, "Agreement with ns-3"): 2061 web-search flows on the authors' leaf-spine, as ns-3 ran them.
/// Every flow is matched, log FCTs correlate at r ≥ 0.999 and the median per-flow ratio is 1
/// within 0.5 %. The spread of the ratios is held at what two runs of this network with
/// different controller roundings give (docs/sim.md, "Agreement with ns-3"): the crate's
/// fixed point against the f64 reference on our own model gives p5 / p95 0.955 / 1.054, ours
/// against ns-3 0.963 / 1.056 (with ns-3's arithmetic, `--controller ns3` with its `RATE_AI`,
/// every flow is exact: the test below).
#[test]
fn ns3_model_matches_ns3_flow_by_flow_on_the_authors_web_search_run() {
    let d = dir("A_hp");
    let ns3 = parse_fct(&d.join("fct.txt"));
    let ours = run_ours(
        &d.join("scenario.toml"),
        &d.join("leafspine32.txt"),
        &d.join("ws30_ls32_30ms.txt"),
    );
    let pairs = matched(&ns3, &ours);
    assert_eq!(pairs.len(), 2061);
    let logs: Vec<(f64, f64)> = pairs
        .iter()
        .map(|&(a, b)| ((a as f64).ln(), (b as f64).ln()))
        .collect();
    let r = pearson(&logs);
    let mut ratio: Vec<f64> = pairs.iter().map(|&(a, b)| b as f64 / a as f64).collect();
    ratio.sort_by(f64::total_cmp);
    let (p5, p50, p95) = (pct(&ratio, 0.05), pct(&ratio, 0.5), pct(&ratio, 0.95));
    let msg = format!("r {r:.5}, ratio p5 {p5:.4} p50 {p50:.4} p95 {p95:.4}");
    assert!(r >= 0.999, "{msg}");
    assert!((0.995..=1.005).contains(&p50), "{msg}");
    assert!(p5 >= 0.94 && p95 <= 1.08, "{msg}");
}

/// `--set rate_ai_bps=50000000`: the `RATE_AI` of `A_hp/config.txt`.
fn rate_ai_50mbps() -> cc_trace::Param {
    cc_trace::Param {
        key: "rate_ai_bps".into(),
        value: "50000000".into(),
        source: "--set".into(),
        line: None,
    }
}

/// `--controller ns3` (HPCC with ns-3's own arithmetic, and ns-3's `RATE_AI` 50 Mb/s as
/// `rate_ai_bps`) on the ns-3 switch model reproduces the authors' simulator exactly on the
/// whole web-search run: every one of the 2061 flows finishes at ns-3's FCT to the nanosecond.
/// Measured on 2026-12-06: the two simulators' packet traces agree on all 17.2 M switch
/// enqueues.
#[test]
fn ns3_controller_on_the_ns3_model_reproduces_ns3_flow_for_flow() {
    let a = dir("A_hp");
    let ns3 = parse_fct(&a.join("fct.txt"));
    let ours = run_set(
        &a.join("scenario.toml"),
        &a.join("leafspine32.txt"),
        &a.join("ws30_ls32_30ms.txt"),
        Some(ControllerKind::Ns3),
        vec![rate_ai_50mbps()],
    );
    let pairs = matched(&ns3, &ours);
    assert_eq!(pairs.len(), 2061);
    let off: Vec<_> = pairs.iter().filter(|(a, b)| a != b).take(5).collect();
    assert!(off.is_empty(), "(ns-3, ours) FCTs that differ: {off:?}");
}

#[test]
fn rate_ai_bps_is_refused_for_a_controller_that_does_not_read_it() {
    let a = dir("A_hp");
    let o = SimOpts {
        set: vec![rate_ai_50mbps()],
        ..SimOpts::default()
    };
    let e = run_file(&a.join("scenario.toml"), &o)
        .err()
        .expect("refused")
        .to_string();
    assert!(
        e.contains("--set rate_ai_bps") && e.contains("--controller ns3 only"),
        "{e}"
    );
}

#[test]
fn the_ns3_controller_is_refused_for_an_algorithm_without_one() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("t.toml");
    std::fs::write(
        &p,
        r#"
name = "t"
algorithm = "timely"
duration_ns = 100_000
[topology]
kind = "star"
hosts = 2
host_rate_bps = 10_000_000_000
[[flows]]
kind = "long"
src = [1]
dst = 0
"#,
    )
    .unwrap();
    let o = SimOpts {
        controller: Some(ControllerKind::Ns3),
        ..SimOpts::default()
    };
    let e = run_file(&p, &o).err().expect("refused").to_string();
    assert!(e.contains("controller ns3") && e.contains("timely"), "{e}");
}
