//! Nothing silent: every parameter a user gives is applied or refused, every report shows the
//! parameters in force and where each came from, and a verdict means something was compared.
//! Each test is named after the property it pins.

use crate::common::{err, out, root, sim_host};
use std::process::{Command, Output, Stdio};

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}{}", out(o), err(o)))
}

/// A fixture rewritten with its `# set` lines moved from before the header row to just after
/// it (other comments dropped).
fn sets_after_header(fixture: &str) -> String {
    let text = std::fs::read_to_string(root().join(fixture)).unwrap();
    let sets: Vec<&str> = text.lines().filter(|l| l.starts_with("# set ")).collect();
    let mut rest = text.lines().filter(|l| !l.starts_with('#'));
    let header = rest.next().unwrap();
    let mut v = vec![header];
    v.extend(sets);
    v.extend(rest);
    v.join("\n") + "\n"
}

/// The parts of a JSON result that say what was compared and how it came out (not the trace's
/// name, not where the parameters came from).
fn outcome(r: &serde_json::Value) -> serde_json::Value {
    let params: Vec<(String, String)> = r["params"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["key"].as_str().unwrap().to_string(),
                p["value"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    // Details name trace lines (`worst event … line N`), which moving the comments shifts.
    let mut details = r["details"].as_object().unwrap().clone();
    details.retain(|_, v| !v.as_str().is_some_and(|t| t.contains("line ")));
    serde_json::json!({
        "events": r["events"], "skipped": r["skipped"], "meaningful": r["meaningful"],
        "agreement": r["agreement"]["total"], "rel_err": r["rel_err"]["max"],
        "details": details, "params": params,
    })
}

#[test]
fn set_lines_after_the_header_row_are_applied_for_every_kind() {
    let d = tempfile::tempdir().unwrap();
    // Each fixture sets a value other than the default.
    for (kind, fixture) in [
        ("timely", "fixtures/timely/nic_25g.csv"),
        ("hpcc", "fixtures/hpcc/near_eta.csv"),
        ("cats", "fixtures/cats/web_page.csv"),
        ("pacer", "fixtures/pacer/hybrid.csv"),
    ] {
        let before = sim_host(&["replay", kind, fixture, "--json"]);
        assert_eq!(before.status.code(), Some(0), "{kind}: {}", err(&before));
        let moved = d.path().join(format!("{kind}.csv"));
        std::fs::write(&moved, sets_after_header(fixture)).unwrap();
        let after = sim_host(&["replay", kind, moved.to_str().unwrap(), "--json"]);
        assert_eq!(after.status.code(), Some(0), "{kind}: {}", err(&after));
        let (b, a) = (json(&before), json(&after));
        assert_eq!(
            outcome(&b["results"][0]),
            outcome(&a["results"][0]),
            "{kind}: the same parameters after the header row replay the same"
        );
        // The origins name the lines after the header row (line 2 on).
        let given: Vec<&serde_json::Value> = a["results"][0]["params"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["differs"] == true)
            .collect();
        assert!(!given.is_empty(), "{kind}: a non-default value is listed");
        for p in given {
            let o = p["origin"].as_str().unwrap();
            assert!(
                o.starts_with(moved.to_str().unwrap()),
                "{kind}: {p} comes from the trace"
            );
        }
        // The same through standard input and through `replay all` on the directory.
        let piped = Command::new(env!("CARGO_BIN_EXE_sim-host"))
            .args(["replay", kind, "-", "--json"])
            .stdin(std::fs::File::open(&moved).unwrap())
            .output()
            .unwrap();
        assert_eq!(
            outcome(&json(&piped)["results"][0]),
            outcome(&b["results"][0]),
            "{kind} from stdin"
        );
    }
    let all = sim_host(&["replay", "all", d.path().to_str().unwrap(), "--json"]);
    assert_eq!(all.status.code(), Some(0), "{}", err(&all));
    assert_eq!(json(&all)["results"].as_array().unwrap().len(), 4);
}

#[test]
fn a_set_key_of_another_kind_is_refused_on_a_one_kind_replay() {
    let o = sim_host(&[
        "replay",
        "hpcc",
        "fixtures/hpcc/near_eta.csv",
        "--set",
        "line_rate_bps=25e9",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let e = err(&o);
    assert!(
        e.contains("timely") && e.contains("pacer") && e.contains("nic_rate_bps"),
        "names the kinds that have the key and the closest hpcc key: {e}"
    );
    for set in ["eta=0.5", "hpcc.eta=0.5"] {
        let o = sim_host(&[
            "replay",
            "timely",
            "fixtures/timely/incast.csv",
            "--set",
            set,
        ]);
        assert_eq!(o.status.code(), Some(2), "{set}");
        assert!(err(&o).contains("hpcc"), "{set}: {}", err(&o));
    }
    // A key given twice: one value would be dropped.
    let o = sim_host(&[
        "replay",
        "timely",
        "fixtures/timely/incast.csv",
        "--set",
        "beta=0.5",
        "--set",
        "beta=0.6",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("given twice"), "{}", err(&o));
    // A capture and a directory are refused the same way.
    for path in ["fixtures/hpcc/capture.pcapng", "fixtures/hpcc"] {
        let o = sim_host(&["replay", "hpcc", path, "--set", "beta=0.5"]);
        assert_eq!(o.status.code(), Some(2), "{path}: {}", err(&o));
    }
}

#[test]
fn replay_all_refuses_a_key_that_no_trace_of_the_run_uses() {
    let o = sim_host(&["replay", "all", "fixtures/cats", "--set", "beta=0.5"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        err(&o).contains("applies to no trace of this run"),
        "{}",
        err(&o)
    );
    // The same key is applied where a trace of its kind is replayed.
    let o = sim_host(&[
        "replay",
        "all",
        "fixtures/timely",
        "--set",
        "beta=0.5",
        "--json",
    ]);
    let v = json(&o);
    for r in v["results"].as_array().unwrap() {
        let beta = r["params"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["key"] == "beta")
            .unwrap();
        assert_eq!(beta["value"], "0.5");
        assert_eq!(beta["origin"], "--set");
    }
}

#[test]
fn the_pacer_reads_values_by_the_one_grammar_and_refuses_what_it_would_not_apply() {
    for v in ["10e9", "10_000_000_000", "10000000000"] {
        let o = sim_host(&[
            "replay",
            "pacer",
            "fixtures/pacer/hybrid.csv",
            "--set",
            &format!("line_rate_bps={v}"),
        ]);
        assert_eq!(o.status.code(), Some(0), "{v}: {}", err(&o));
    }
    // A burst size without the hybrid pacer changes nothing: refused.
    let o = sim_host(&[
        "replay",
        "pacer",
        "fixtures/pacer/lazy_update.csv",
        "--set",
        "burst_bytes=2048",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("hybrid_rate_bps"), "{}", err(&o));
    // The pacer has no forced mode: refused, not reported as in force.
    let o = sim_host(&[
        "replay",
        "pacer",
        "fixtures/pacer/hybrid.csv",
        "--mode",
        "forced",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("no forced mode"), "{}", err(&o));
}

#[test]
fn every_report_lists_the_parameters_in_force_with_their_origins() {
    let d = tempfile::tempdir().unwrap();
    let csv = d.path().join("o.csv");
    let args = [
        "replay",
        "timely",
        "fixtures/timely/nic_25g.csv",
        "--set",
        "beta=1/2",
    ];
    let o = sim_host(&args);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let text = out(&o);
    assert!(
        text.contains("beta=0.5 (--set)"),
        "text names --set: {text}"
    );
    assert!(
        text.contains("line_rate_bps=25000000000 (fixtures/timely/nic_25g.csv:7)"),
        "text names FILE:LINE: {text}"
    );
    assert!(text.contains("defaults in force"), "{text}");
    // JSON: every key of the kind, with its origin.
    let mut a = args.to_vec();
    a.push("--json");
    let v = json(&sim_host(&a));
    let keys: Vec<&str> = v["results"][0]["params"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["key"].as_str().unwrap())
        .collect();
    for k in [
        "line_rate_bps",
        "min_rate_bps",
        "max_rate_bps",
        "init_rate_bps",
        "t_low_ns",
        "t_high_ns",
        "min_rtt_ns",
        "alpha",
        "beta",
        "delta_bps",
        "hai_n",
        "hai_after",
        "app_limited",
        "per_completion_scaling",
    ] {
        assert!(keys.contains(&k), "{k} in {keys:?}");
    }
    // --out: the parameters as comment lines before the header row.
    let mut a = args.to_vec();
    a.extend(["--out", csv.to_str().unwrap()]);
    assert_eq!(sim_host(&a).status.code(), Some(0));
    let body = std::fs::read_to_string(&csv).unwrap();
    assert!(body.contains("# param beta=0.5 (--set)\n"), "{body}");
    assert!(
        body.contains("# param app_limited=off (default)\n"),
        "{body}"
    );
    assert_eq!(
        body.lines().find(|l| !l.starts_with('#')),
        Some("event,t_ns,rtt_ns,rate_ref_bps,rate_fixed_bps,branch_ref,branch_fixed")
    );
}

/// Writes `text`, replays it as `kind` with `--out` and `--plot`, and checks the replay is
/// refused (exit 2, `reason` in the message) and leaves no output behind.
fn refused(kind: &str, text: &str, reason: &str) {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("t.csv");
    std::fs::write(&p, text).unwrap();
    let (o_csv, o_svg) = (d.path().join("o.csv"), d.path().join("o.svg"));
    let o = sim_host(&[
        "replay",
        kind,
        p.to_str().unwrap(),
        "--out",
        o_csv.to_str().unwrap(),
        "--plot",
        o_svg.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{kind}: {}{}", out(&o), err(&o));
    assert!(err(&o).contains(reason), "{kind}: {}", err(&o));
    assert!(!o_csv.exists() && !o_svg.exists(), "{kind}: outputs left");
    let left: Vec<_> = std::fs::read_dir(d.path()).unwrap().collect();
    assert_eq!(left.len(), 1, "{kind}: only the trace remains: {left:?}");
}

#[test]
fn a_trace_in_which_nothing_meaningful_happened_does_not_pass() {
    let near_eta = std::fs::read_to_string(root().join("fixtures/hpcc/near_eta.csv")).unwrap();
    let rows: Vec<&str> = near_eta
        .lines()
        .filter(|l| !l.starts_with('#'))
        .skip(1)
        .collect();
    let first: Vec<&str> = rows[0].split(',').collect();
    // Every INT after the first a duplicate: the window never moves.
    let mut dup = String::from("t_ns,ack_seq,snd_nxt,int\n");
    for i in 0..50u64 {
        dup += &format!(
            "{},{},{},{}\n",
            i * 100,
            1000 * (i + 1),
            100_000 + 1000 * i,
            first[3]
        );
    }
    refused("hpcc", &dup, "nothing meaningful to compare");
    // Every ACK ahead of snd_nxt: data never sent.
    let mut ahead = String::from("t_ns,ack_seq,snd_nxt,int\n");
    for r in rows.iter().take(100) {
        let f: Vec<&str> = r.split(',').collect();
        let ack: u64 = f[1].parse().unwrap();
        ahead += &format!("{},{},{},{}\n", f[0], ack + 1_000_000, f[2], f[3]);
    }
    refused("hpcc", &ahead, "ACKs ahead of snd_nxt");
    // RTTs all 0 (a trace written with the completion time copied from the send time).
    let mut zero = String::from("t_send_ns,t_complete_ns,bytes\n");
    for i in 0..100u64 {
        zero += &format!("{0},{0},0\n", i * 1000);
    }
    refused("timely", &zero, "zero RTTs");
    // 999 of 1 000 rows skipped (completion before send).
    let mut skipped = String::from("t_send_ns,t_complete_ns,bytes\n0,30000,0\n20,40000,0\n");
    for i in 0..998u64 {
        skipped += &format!("{},{},0\n", 50_000 + i * 10, 40_000 + i * 10);
    }
    refused("timely", &skipped, "too little to compare");
    // --min-meaningful lowers the share; at least one meaningful event is always needed.
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("s.csv");
    std::fs::write(&p, &skipped).unwrap();
    let o = sim_host(&[
        "replay",
        "timely",
        p.to_str().unwrap(),
        "--min-meaningful",
        "0",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(out(&o).contains("998 skipped, 1 meaningful"), "{}", out(&o));
}

#[test]
fn out_and_plot_naming_the_same_file_are_refused() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("same");
    let o = sim_host(&[
        "replay",
        "timely",
        "fixtures/timely/incast.csv",
        "--out",
        f.to_str().unwrap(),
        "--plot",
        f.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("same file"), "{}", err(&o));
    assert!(!f.exists());
}

#[test]
fn dev_stdin_and_a_process_substitution_read_like_dash() {
    let trace = root().join("fixtures/timely/incast.csv");
    let o = Command::new(env!("CARGO_BIN_EXE_sim-host"))
        .args(["replay", "timely", "/dev/stdin"])
        .stdin(Stdio::from(std::fs::File::open(&trace).unwrap()))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(
        out(&o).contains("timely replay of /dev/stdin"),
        "{}",
        out(&o)
    );
    let o = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "{} replay all <(cat {})",
            env!("CARGO_BIN_EXE_sim-host"),
            trace.display()
        ))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}{}", out(&o), err(&o));
    assert!(out(&o).contains("events              20000"), "{}", out(&o));
}

#[test]
fn a_link_inside_a_replayed_directory_does_not_lead_out_of_it() {
    let d = tempfile::tempdir().unwrap();
    let sub = d.path().join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    std::fs::copy(root().join("fixtures/timely/incast.csv"), sub.join("a.csv")).unwrap();
    // A trace beside the replayed directory, reachable only through `up -> ..`.
    std::fs::copy(
        root().join("fixtures/cats/web_page.csv"),
        d.path().join("b.csv"),
    )
    .unwrap();
    std::os::unix::fs::symlink("..", sub.join("up")).unwrap();
    // A link that stays inside is followed (each file once).
    std::os::unix::fs::symlink("a.csv", sub.join("again.csv")).unwrap();
    let o = sim_host(&["replay", "all", sub.to_str().unwrap(), "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let v = json(&o);
    let traces: Vec<&str> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["trace"].as_str().unwrap())
        .collect();
    assert_eq!(traces.len(), 1, "{traces:?}");
    assert!(traces[0].ends_with("a.csv") || traces[0].ends_with("again.csv"));
    assert!(err(&o).contains("leads out of"), "{}", err(&o));
}

#[test]
fn a_named_pipe_in_a_replayed_directory_is_named_and_skipped_not_waited_on() {
    let d = tempfile::tempdir().unwrap();
    std::fs::copy(
        root().join("fixtures/timely/incast.csv"),
        d.path().join("a.csv"),
    )
    .unwrap();
    let fifo = d.path().join("pipe.csv");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    // Opening the pipe would block the run until a writer came: it must not be opened.
    let o = sim_host(&["replay", "all", d.path().to_str().unwrap(), "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert_eq!(json(&o)["results"].as_array().unwrap().len(), 1);
    assert!(
        err(&o).contains("pipe.csv") && err(&o).contains("named pipe"),
        "{}",
        err(&o)
    );
}

#[test]
fn a_scenario_name_that_would_put_outputs_outside_the_out_directory_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let text =
        std::fs::read_to_string(root().join("fixtures/scenarios/hpcc_incast_7to1.toml")).unwrap();
    for bad in ["../escaped", "a/b", "..", ""] {
        let sc = d.path().join("sc.toml");
        let name_line = text
            .lines()
            .find(|l| l.starts_with("name ="))
            .unwrap()
            .to_string();
        std::fs::write(&sc, text.replace(&name_line, &format!("name = {bad:?}"))).unwrap();
        let out = d.path().join("out");
        let o = sim_host(&["sim", sc.to_str().unwrap(), "--out", out.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{bad:?}: {}", err(&o));
        assert!(
            err(&o).contains("sc.toml") && err(&o).contains("key `name`"),
            "{bad:?}: {}",
            err(&o)
        );
        assert!(!d.path().join("escaped_flows.csv").exists());
    }
}
