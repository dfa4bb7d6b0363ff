//! `sim-host merge`: each run counted once whatever its result files are called or wherever
//! they lie, a conflicting copy refused naming both files, and the warnings about a sweep's
//! missing jobs naming only shards that had jobs to run.

use crate::common::err;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A 4-host incast, 100 µs: a run takes milliseconds.
const SCENARIO: &str = r#"
name = "t_merge"
algorithm = "hpcc"
duration_ns = 100_000
[params]
base_rtt_ns = 13000
[topology]
kind = "star"
hosts = 5
host_rate_bps = 100_000_000_000
buffer = "per_port"
buffer_bytes = 60_000
ecn_threshold_bytes = 20_000
[[flows]]
kind = "incast"
src = [1, 2, 3, 4]
dst = 0
size_bytes = 200_000
start_ns = 1_000
"#;

fn sim_host<S: AsRef<OsStr>>(args: &[S]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sim-host"))
        .args(args)
        .output()
        .unwrap()
}

/// Writes the scenario to `scenario` and sweeps it with the fixed controller over `seeds` into
/// `results`, with `extra` arguments (a shard).
fn sweep(scenario: &Path, results: &Path, seeds: &str, extra: &[&str]) {
    std::fs::create_dir_all(scenario.parent().unwrap()).unwrap();
    std::fs::write(scenario, SCENARIO).unwrap();
    let mut args: Vec<&OsStr> = vec!["sim".as_ref(), scenario.as_os_str()];
    args.extend(["--controller", "fixed", "--seeds", seeds, "--results"].map(OsStr::new));
    args.push(results.as_os_str());
    args.extend(extra.iter().map(OsStr::new));
    let o = sim_host(&args);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
}

/// `merge DIRS... --summary SUMMARY`: the output, the table and the summary.
fn merge(dirs: &[&Path], summary: &Path) -> (Output, String, String) {
    let mut args: Vec<&OsStr> = vec!["merge".as_ref()];
    args.extend(dirs.iter().map(|d| d.as_os_str()));
    args.extend(["--summary".as_ref(), summary.as_os_str()]);
    let o = sim_host(&args);
    let table = String::from_utf8_lossy(&o.stdout).into_owned();
    let s = std::fs::read_to_string(summary).unwrap_or_default();
    (o, table, s)
}

fn results(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    v.sort();
    v
}

/// The `seeds` column of the summary's goodput row.
fn goodput_seeds(summary: &str) -> &str {
    summary
        .lines()
        .find(|l| l.contains(",goodput_bps,"))
        .and_then(|l| l.split(',').nth(4))
        .unwrap_or_else(|| panic!("no goodput row: {summary}"))
}

#[test]
fn a_copied_result_file_is_counted_once_and_named_as_a_duplicate() {
    let tmp = tempfile::tempdir().unwrap();
    let res = tmp.path().join("res");
    sweep(&tmp.path().join("a.toml"), &res, "1..3", &[]);
    let summary = tmp.path().join("summary.csv");
    let (o, table, s) = merge(&[&res], &summary);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(o.stderr.is_empty(), "{}", err(&o));
    assert_eq!(table.lines().count(), 1 + 2, "{table}");
    assert_eq!(goodput_seeds(&s), "2", "{s}");

    // A copy as a file manager makes it: the same content under another name.
    let files = results(&res);
    let original = &files[0];
    let copy = res.join(format!(
        "{} (copy).json",
        original.file_stem().unwrap().to_str().unwrap()
    ));
    std::fs::copy(original, &copy).unwrap();
    let (o, table2, s2) = merge(&[&res], &summary);
    let e = err(&o);
    assert_eq!(o.status.code(), Some(0), "{e}");
    assert_eq!(table2, table, "the copy is not a row of its own");
    assert_eq!(goodput_seeds(&s2), "2", "two seeds, not three: {s2}");
    assert!(
        e.contains(&format!(
            "{}: a duplicate of {}",
            copy.display(),
            original.display()
        )) && e.contains("counted once"),
        "{e}"
    );

    // Renamed, the only file of its run: its row and hash are what its content says.
    std::fs::remove_file(original).unwrap();
    let (o, table3, _) = merge(&[&res], &summary);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(o.stderr.is_empty(), "{}", err(&o));
    assert_eq!(table3, table, "the hash column comes from the content");
    std::fs::rename(&copy, original).unwrap();

    // The same job rerun from another directory (another scenario path, another sweep), and
    // the same directory given twice: one row per run, every extra file named.
    let res2 = tmp.path().join("res2");
    sweep(&tmp.path().join("elsewhere/a.toml"), &res2, "1..2", &[]);
    let (o, table4, s4) = merge(&[&res, &res2, &res], &summary);
    let e = err(&o);
    assert_eq!(o.status.code(), Some(0), "{e}");
    assert_eq!(table4, table);
    assert_eq!(goodput_seeds(&s4), "2", "{s4}");
    let again = results(&res2);
    assert_eq!(again.len(), 1);
    assert!(
        e.contains(&format!("{}: a duplicate of ", again[0].display())),
        "{e}"
    );
    assert!(
        e.contains(&format!("{}: given more than once", res.display())),
        "{e}"
    );
}

#[test]
fn two_results_of_one_run_with_different_content_are_refused_naming_both() {
    let tmp = tempfile::tempdir().unwrap();
    let res = tmp.path().join("res");
    sweep(&tmp.path().join("a.toml"), &res, "1..2", &[]);
    let original = results(&res).remove(0);
    let text = std::fs::read_to_string(&original).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let copy = res.join("other.json");
    let refused = |v: &serde_json::Value| -> String {
        std::fs::write(&copy, serde_json::to_vec_pretty(v).unwrap()).unwrap();
        let o = sim_host(&["merge".as_ref(), res.as_os_str()]);
        assert_eq!(o.status.code(), Some(2), "{}", err(&o));
        assert!(o.stdout.is_empty(), "no table");
        err(&o)
    };

    // Another goodput for the same run: which is right cannot be known.
    let mut w = v.clone();
    w["report"]["goodput_bps"] = serde_json::json!(1.0);
    let e = refused(&w);
    assert!(
        e.contains(&original.display().to_string())
            && e.contains(&copy.display().to_string())
            && e.contains("report.goodput_bps")
            && e.contains("contents differ"),
        "{e}"
    );

    // A file whose identity was edited is refused by itself: the seed against the report's,
    // the experiment digest against the scenario text and parameters the file holds.
    let mut w = v.clone();
    w["seed"] = serde_json::json!(7);
    let e = refused(&w);
    assert!(
        e.contains(&copy.display().to_string()) && e.contains("disagree with the report"),
        "{e}"
    );
    let mut w = v.clone();
    w["scenario_text"] = serde_json::json!(format!("{}\n# edited\n", v["scenario_text"]));
    let e = refused(&w);
    assert!(
        e.contains(&copy.display().to_string()) && e.contains("field `experiment`"),
        "{e}"
    );
    let mut w = v.clone();
    w["set"] = serde_json::json!("eta=0.5");
    let e = refused(&w);
    assert!(e.contains("field `set`"), "{e}");
}

#[test]
fn shard_warnings_name_only_shards_that_have_jobs() {
    // Three jobs (seeds 1, 2, 3) in four shards: shard 3/4 has no job. With only shard 0/4 run,
    // shards 1/4 and 2/4 left no result; 3/4 had nothing to leave.
    let tmp = tempfile::tempdir().unwrap();
    let res = tmp.path().join("res");
    let a = tmp.path().join("a.toml");
    sweep(&a, &res, "1..4", &["--shard", "0/4"]);
    sweep(&a, &res, "1..4", &["--shard", "3/4"]);
    assert_eq!(results(&res).len(), 1, "shard 3/4 ran nothing");
    let o = sim_host(&["merge".as_ref(), res.as_os_str()]);
    let e = err(&o);
    assert_eq!(o.status.code(), Some(0), "{e}");
    assert!(e.contains("2 of 3 jobs have no result"), "{e}");
    assert!(
        e.contains("no result at all from shard 1/4, 2/4") && !e.contains("3/4"),
        "{e}"
    );
}

#[test]
fn every_shard_of_a_sweep_refuses_a_reference_only_scenario_before_any_job_runs() {
    // Jobs: hpcc fixed 1, 2; hpcc reference 1, 2; dcqcn fixed 1, 2; dcqcn reference 1, 2.
    // Shard 2/4 holds jobs 2 and 6, neither a fixed DCQCN run: it is refused all the same, or a
    // job array would run some shards and fail others.
    let tmp = tempfile::tempdir().unwrap();
    let scenarios = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/scenarios");
    let hpcc = tmp.path().join("a.toml");
    std::fs::write(&hpcc, SCENARIO).unwrap();
    let dcqcn = scenarios.join("dcqcn_incast_7to1.toml");
    let res = tmp.path().join("res");
    for shard in ["0/4", "2/4"] {
        let o = sim_host(&[
            "sim".as_ref(),
            hpcc.as_os_str(),
            dcqcn.as_os_str(),
            "--seeds".as_ref(),
            "1..3".as_ref(),
            "--shard".as_ref(),
            shard.as_ref(),
            "--results".as_ref(),
            res.as_os_str(),
        ]);
        let e = err(&o);
        assert_eq!(o.status.code(), Some(2), "shard {shard}: {e}");
        assert!(
            e.contains("dcqcn_incast_7to1.toml") && e.contains("no fixed-point implementation"),
            "{e}"
        );
        assert!(
            !res.exists() || results(&res).is_empty(),
            "no job ran in shard {shard}"
        );
    }
}

#[test]
fn a_scenario_given_twice_in_a_sweep_is_refused_before_any_job_runs() {
    // Two jobs would write one result file, and merge would report the overwritten one missing.
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("a.toml");
    let b = tmp.path().join("b.toml");
    std::fs::write(&a, SCENARIO).unwrap();
    std::fs::write(&b, SCENARIO).unwrap();
    let res = tmp.path().join("res");
    for (x, y, what) in [
        (&a, &a, "given more than once"),
        (&a, &b, "the same scenario text"),
    ] {
        let o = sim_host(&[
            "sim".as_ref(),
            x.as_os_str(),
            y.as_os_str(),
            "--results".as_ref(),
            res.as_os_str(),
        ]);
        let e = err(&o);
        assert_eq!(o.status.code(), Some(2), "{e}");
        assert!(
            e.contains(&a.display().to_string()) && e.contains(what),
            "{e}"
        );
        assert!(!res.exists() || results(&res).is_empty(), "no job ran");
    }
}
