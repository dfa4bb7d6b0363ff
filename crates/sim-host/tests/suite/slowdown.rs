//! `sim-host slowdown`: the HPCC authors' binning of FCT slowdown by flow size, read from
//! `sim --out`'s per-flow CSV or an ns-3 fct.txt, written as CSV and as a Fig. 10/11-style
//! SVG; malformed inputs are refused with the file and the line, and nothing is written.

use crate::common::err;
use cc_netsim::SimOpts;
use sim_host::sim::run_file;
use sim_host::sim::slowdown::{FLOWS_HEADER, Format, read};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn sim_host(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sim-host"))
        .args(args)
        .output()
        .unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// An fct.txt of `n` flows, sizes 1000·(i+1), FCT = standalone·(1 + i/n), dport 100.
fn fct_txt(n: u64) -> String {
    (0..n)
        .map(|i| {
            format!(
                "0b000001 0b000101 {} 100 {} {} {} 10000\n",
                10000 + i,
                1000 * (i + 1),
                2_000_000_000 + i * 1000,
                10000 + 10000 * i / n
            )
        })
        .collect()
}

#[test]
fn a_malformed_fct_txt_is_refused_naming_file_and_line() {
    let d = tempfile::tempdir().unwrap();
    let cases = [
        ("0b000001 0b000101 10000 100 1000 0 1000\n", "7 fields"),
        (
            "0b000001 0b000101 10000 100 1000 0 1000 0\n",
            "standalone_fct_ns is 0",
        ),
        ("0b000001 0b000101 10000 100 1k 0 1000 900\n", "size"),
        ("zz000001 0b000101 10000 100 1000 0 1000 900\n", "sip"),
        ("0b000001 0b000101 70000 100 1000 0 1000 900\n", "sport"),
        ("\n", "0 fields"),
    ];
    for (k, (bad, what)) in cases.iter().enumerate() {
        let p = d.path().join(format!("fct{k}.txt"));
        std::fs::write(&p, format!("{}{bad}", fct_txt(2))).unwrap();
        let out_csv = d.path().join(format!("o{k}.csv"));
        let svg = d.path().join(format!("o{k}.svg"));
        let o = sim_host(&["slowdown", s(&p), "--out", s(&out_csv), "--plot", s(&svg)]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(
            err.contains(&format!("{}:3: ", p.display())) && err.contains(what),
            "{what}: {err}"
        );
        assert!(!out_csv.exists() && !svg.exists(), "nothing is written");
    }
}

#[test]
fn a_malformed_per_flow_csv_is_refused_naming_file_and_line() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("x_flows.csv");
    std::fs::write(
        &p,
        format!(
            "{FLOWS_HEADER}\n0,0,0,1,1000,0,finished,1000,1500.000,1000.000,1.5000\n\
             1,0,0,1,1000,0,lost,0,,1000.000,\n"
        ),
    )
    .unwrap();
    let o = sim_host(&["slowdown", s(&p)]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("{}:3: status \"lost\"", p.display())),
        "{err}"
    );
}

#[test]
fn the_svg_is_written_whole_with_log_size_axis_and_legend() {
    let d = tempfile::tempdir().unwrap();
    let a = d.path().join("a_fct.txt");
    let b = d.path().join("b_fct.txt");
    std::fs::write(&a, fct_txt(400)).unwrap();
    std::fs::write(&b, fct_txt(300)).unwrap();
    let svg = d.path().join("fig.svg");
    let csv = d.path().join("bins.csv");
    let o = sim_host(&[
        "slowdown",
        s(&a),
        s(&b),
        "--label",
        "HPCC fixed",
        "--label",
        "HPCC f64",
        "--plot",
        s(&svg),
        "--out",
        s(&csv),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    // 400 and 300 flows: every bin under 100, flagged for both series.
    assert!(
        err.contains("HPCC fixed: 20 of 20 bins rest on fewer than 100 flows"),
        "{err}"
    );
    assert!(err.contains("HPCC f64: 20 of 20 bins"), "{err}");
    let t = std::fs::read_to_string(&svg).unwrap();
    assert!(t.starts_with("<svg") && t.trim_end().ends_with("</svg>"));
    for want in [
        "HPCC fixed",
        "HPCC f64",
        "p50 FCT slowdown",
        "p95 FCT slowdown",
        "p99 FCT slowdown",
        "flow size (bytes",
        "10K",
        "100K",
    ] {
        assert!(t.contains(want), "{want} missing from the SVG");
    }
    assert_eq!(t.matches("HPCC fixed").count(), 3, "one legend per panel");
    let c = std::fs::read_to_string(&csv).unwrap();
    assert!(
        c.starts_with(
            "# sim-host slowdown: warmup_ns 0, end_ns last start, capacity_bps not given, \
             dport any\n# HPCC fixed: sized 400, finished 400,"
        ),
        "{c}"
    );
    let rows: Vec<&str> = c.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(
        rows[0],
        "series,bin,from_fraction,flows,size_min_bytes,size_max_bytes,p50,p95,p99,few_flows"
    );
    assert_eq!(rows.len(), 1 + 2 * 20);
    // 400 flows: bin 0 holds sizes 1000..20000; slowdown 1 + i/400 (standalone 10000 ns).
    assert_eq!(
        rows[1],
        "HPCC fixed,0,0.00,20,1000,20000,1.0250,1.0475,1.0475,true"
    );
}

#[test]
fn outputs_never_overwrite_an_input() {
    let d = tempfile::tempdir().unwrap();
    let a = d.path().join("fct.txt");
    std::fs::write(&a, fct_txt(40)).unwrap();
    for opt in ["--out", "--plot"] {
        let o = sim_host(&["slowdown", s(&a), opt, s(&a)]);
        assert_eq!(o.status.code(), Some(2));
        assert_eq!(std::fs::read_to_string(&a).unwrap(), fct_txt(40));
    }
}

#[test]
fn a_warm_up_past_every_flow_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let a = d.path().join("fct.txt");
    std::fs::write(&a, fct_txt(40)).unwrap();
    let o = sim_host(&["slowdown", s(&a), "--warmup-ns", "5", "--end-ns", "5"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("--end-ns 5"), "{}", err(&o));
    let o = sim_host(&["slowdown", s(&a), "--warmup-ns", "3000000000"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("no finished flow started after the warm-up"),
        "{err}"
    );
}

#[test]
fn labels_must_match_the_inputs_and_dport_needs_fct_txt() {
    let d = tempfile::tempdir().unwrap();
    let a = d.path().join("fct.txt");
    std::fs::write(&a, fct_txt(40)).unwrap();
    let o = sim_host(&["slowdown", s(&a), "--label", "x", "--label", "y"]);
    assert_eq!(o.status.code(), Some(2));
    let p = d.path().join("x_flows.csv");
    std::fs::write(&p, format!("{FLOWS_HEADER}\n")).unwrap();
    let o = sim_host(&["slowdown", s(&p), "--dport", "100"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("--dport"), "{err}");
}

/// One run read twice, from `--out`'s per-flow CSV and from `--ns3-out`'s fct.txt: the same
/// finished flows (counts and bin edges agree), the CSV also knows the unfinished ones.
#[test]
fn the_per_flow_csv_and_fct_txt_of_one_run_bin_the_same_flows() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let d = tempfile::tempdir().unwrap();
    let o = SimOpts {
        out: Some(d.path().to_path_buf()),
        ns3_out: Some(d.path().to_path_buf()),
        ..SimOpts::default()
    };
    let sc = root.join("fixtures/ns3/leaf_spine.toml");
    let (r, _) = run_file(&sc, &o).unwrap_or_else(|e| panic!("{e}"));
    let name = &r.scenario;
    let csv: PathBuf = d.path().join(format!("{name}_flows.csv"));
    let fct = d.path().join("fct.txt");
    let a = read(&csv, None).unwrap();
    let b = read(&fct, None).unwrap();
    assert_eq!((a.format, b.format), (Format::FlowsCsv, Format::Ns3Fct));
    let opts = sim_host::sim::slowdown::Opts::default();
    let sa = sim_host::sim::slowdown::analyse("csv", &[&a], &opts);
    let sb = sim_host::sim::slowdown::analyse("fct", &[&b], &opts);
    assert!(sa.counts.finished > 0);
    assert_eq!(sa.counts.finished, r.flows_finished);
    assert_eq!(sa.counts.unfinished, r.flows_unfinished);
    assert_eq!(sa.counts.finished, sb.counts.finished);
    let edges = |x: &sim_host::sim::slowdown::Series| -> Vec<_> {
        x.bins.iter().map(|b| (b.flows, b.size)).collect()
    };
    assert_eq!(edges(&sa), edges(&sb));
}

/// A directory stands for its one per-flow CSV, or its fct.txt when it has none; two CSVs
/// are refused, naming both.
#[test]
fn a_run_directory_stands_for_its_per_flow_csv_or_fct_txt() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("run");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("fct.txt"), fct_txt(40)).unwrap();
    let o = sim_host(&["slowdown", s(&dir)]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains("run/fct.txt"));
    let row = "0,0,0,1,1000,0,finished,1000,1500.000,1000.000,1.5000";
    std::fs::write(dir.join("a_flows.csv"), format!("{FLOWS_HEADER}\n{row}\n")).unwrap();
    let o = sim_host(&["slowdown", s(&dir)]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0));
    assert!(
        out.contains("run/a_flows.csv") && out.contains("1 sized flows"),
        "{out}"
    );
    std::fs::write(dir.join("b_flows.csv"), format!("{FLOWS_HEADER}\n{row}\n")).unwrap();
    let o = sim_host(&["slowdown", s(&dir)]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("a_flows.csv, b_flows.csv"), "{err}");
    // An output over the file a directory stands for is refused, and the file is kept.
    std::fs::remove_file(dir.join("b_flows.csv")).unwrap();
    let a_csv = dir.join("a_flows.csv");
    let o = sim_host(&["slowdown", s(&dir), "--out", s(&a_csv)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(std::fs::read_to_string(&a_csv).unwrap().contains(row));
    let empty = d.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    assert_eq!(sim_host(&["slowdown", s(&empty)]).status.code(), Some(2));
}

#[test]
fn one_file_given_twice_is_refused_naming_it() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("run");
    std::fs::create_dir(&dir).unwrap();
    let a = dir.join("fct.txt");
    std::fs::write(&a, fct_txt(40)).unwrap();
    // As the same path, and as the file and the directory that stands for it, in one series
    // or in two.
    for args in [
        vec![s(&a), s(&a)],
        vec![s(&a), s(&dir)],
        vec![s(&a), s(&a), "--label", "x", "--label", "y"],
    ] {
        let mut v = vec!["slowdown"];
        v.extend(args);
        let o = sim_host(&v);
        let e = err(&o);
        assert_eq!(o.status.code(), Some(2), "{e}");
        assert!(e.contains(&format!("{}: given twice", a.display())), "{e}");
        assert!(o.stdout.is_empty());
    }
}

#[test]
fn identical_inputs_are_refused_in_one_series_and_named_across_two() {
    let d = tempfile::tempdir().unwrap();
    let a = d.path().join("a.txt");
    let b = d.path().join("b.txt");
    std::fs::write(&a, fct_txt(40)).unwrap();
    std::fs::write(&b, fct_txt(40)).unwrap();
    let o = sim_host(&["slowdown", s(&a), s(&b)]);
    // Unlabelled, each input is its own series: named, not refused.
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(
        err(&o).contains("are identical: the two series show one run"),
        "{}",
        err(&o)
    );
    let o = sim_host(&["slowdown", s(&a), s(&b), "--label", "x", "--label", "x"]);
    let e = err(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(
        e.contains(&format!(
            "{} and {} are identical",
            a.display(),
            b.display()
        )) && e.contains("count twice"),
        "{e}"
    );
}

/// A leaf-spine with Poisson traffic (the seed matters), 300 µs.
fn poisson_scenario(name: &str) -> String {
    let cdf = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/scenarios/cdf/hadoop.cdf");
    format!(
        r#"
name = "{name}"
algorithm = "hpcc"
duration_ns = 300_000
[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
hosts_per_leaf = 4
host_rate_bps = 100_000_000_000
fabric_rate_bps = 400_000_000_000
[[flows]]
kind = "poisson"
load = 0.5
cdf = "{}"
stop_ns = 250_000
"#,
        cdf.display()
    )
}

#[test]
fn runs_of_different_scenarios_or_controllers_in_one_series_are_named_in_the_report() {
    let d = tempfile::tempdir().unwrap();
    let run = |scenario: &str, out: &str, extra: &[&str]| -> PathBuf {
        let sc = d.path().join(format!("{scenario}.toml"));
        std::fs::write(&sc, poisson_scenario(scenario)).unwrap();
        let dir = d.path().join(out);
        let mut v = vec!["sim", s(&sc), "--out", s(&dir)];
        v.extend(extra);
        let o = sim_host(&v);
        assert_eq!(o.status.code(), Some(0), "{}", err(&o));
        dir
    };
    let s1 = run("p", "s1", &["--seed", "1"]);
    let s2 = run("p", "s2", &["--seed", "2"]);
    let other = run("q", "q", &["--seed", "3"]);
    let eta = run("p", "eta", &["--seed", "3", "--set", "eta=0.5"]);
    let reference = run("p", "ref", &["--seed", "3", "--controller", "reference"]);
    let pooled = |dirs: &[&Path]| -> (Output, String, String) {
        let mut v = vec!["slowdown"];
        for x in dirs {
            v.push(s(x));
        }
        for _ in dirs {
            v.extend(["--label", "L"]);
        }
        let csv = d.path().join("o.csv");
        v.extend(["--out", s(&csv)]);
        let o = sim_host(&v);
        assert_eq!(o.status.code(), Some(0), "{}", err(&o));
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        let csv = std::fs::read_to_string(&csv).unwrap();
        (o, out, csv)
    };
    // Two seeds of one scenario and controller: what a series is for; each input's run named.
    let (o, out, _) = pooled(&[&s1, &s2]);
    // (A few-flows warning is all standard error has.)
    assert!(
        !out.contains("note:") && !err(&o).contains("pools") && !err(&o).contains("one run"),
        "{out}{}",
        err(&o)
    );
    assert!(
        out.contains("s1/p_flows.csv: scenario p (hpcc), controller fixed, seed 1"),
        "{out}"
    );
    // Another scenario in the series: said in the report, the CSV and on standard error.
    let (o, out, csv) = pooled(&[&s1, &other]);
    for t in [&out, &csv, &err(&o)] {
        assert!(
            t.contains("pools runs of different scenarios: p (hpcc)") && t.contains("q (hpcc) ("),
            "{t}"
        );
    }
    // The same scenario with other parameters in force, and another controller.
    let (_, out, _) = pooled(&[&s1, &eta]);
    assert!(
        out.contains("pools runs of scenario p with different parameters in force")
            && out.contains("eta=0.5"),
        "{out}"
    );
    let (_, out, _) = pooled(&[&s1, &reference]);
    assert!(
        out.contains("pools runs of different controllers: controller fixed"),
        "{out}"
    );
    // One run's per-flow CSV and its fct.txt (one summary beside both): refused.
    let both = run(
        "p",
        "both",
        &["--seed", "1", "--ns3-out", s(&d.path().join("both"))],
    );
    let o = sim_host(&[
        "slowdown",
        s(&both.join("p_flows.csv")),
        s(&both.join("fct.txt")),
        "--label",
        "L",
        "--label",
        "L",
    ]);
    let e = err(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(
        e.contains("are one run") && e.contains("p_summary.json"),
        "{e}"
    );
    // An input whose run is not known: said, not guessed.
    let bare = d.path().join("bare");
    std::fs::create_dir(&bare).unwrap();
    std::fs::copy(s1.join("p_flows.csv"), bare.join("renamed.csv")).unwrap();
    let o = sim_host(&[
        "slowdown",
        s(&bare.join("renamed.csv")),
        s(&s2),
        "--label",
        "L",
        "--label",
        "L",
    ]);
    let e = err(&o);
    assert_eq!(o.status.code(), Some(0), "{e}");
    assert!(
        e.contains("cannot tell whether its 2 inputs are runs of one scenario")
            && e.contains("renamed.csv"),
        "{e}"
    );
}
