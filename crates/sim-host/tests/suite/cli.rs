//! The command line as a user (or CI) drives it: exit codes, JSON, directory replay, errors that
//! name file and line.

use crate::common::{root, sim_host, text};

#[test]
fn replay_all_fixtures_passes_with_one_line_per_trace() {
    let o = sim_host(&["replay", "all", "fixtures"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}\n{err}");
    for kind in ["timely", "hpcc", "cats"] {
        assert!(
            out.lines()
                .any(|l| l.starts_with(kind) && l.ends_with("PASS")),
            "{kind} missing:\n{out}"
        );
    }
    assert!(!out.contains("FAIL"), "{out}");
}

#[test]
fn json_over_a_directory_is_one_valid_object() {
    let o = sim_host(&["replay", "cats", "fixtures/cats", "--json"]);
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("valid JSON");
    assert_eq!(v["summary"]["exit_code"], 0);
    assert!(v["results"].as_array().unwrap().len() >= 4);
}

#[test]
fn fidelity_outside_tolerance_exits_1() {
    // No fixed-point replay of a TIMELY trace is bit-exact, so a zero tolerance must fail.
    let o = sim_host(&[
        "replay",
        "timely",
        "fixtures/timely/incast.csv",
        "--max-rel-err",
        "0",
    ]);
    let (out, _) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("FAIL") && out.contains("max relative error"),
        "{out}"
    );
}

#[test]
fn bad_input_exits_2_naming_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bad.csv");
    std::fs::write(
        &p,
        "# a comment\nt_send_ns,t_complete_ns,bytes\n1,2,3\n5,x,1\n",
    )
    .unwrap();
    let o = sim_host(&["replay", "timely", p.to_str().unwrap()]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        err.contains("bad.csv:4:") && err.contains("t_complete_ns"),
        "{err}"
    );
}

#[test]
fn unknown_header_in_a_directory_is_reported_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("mystery.csv"), "a,b,c\n1,2,3\n").unwrap();
    std::fs::copy(
        root().join("fixtures/cats/web_page.csv"),
        dir.path().join("web_page.csv"),
    )
    .unwrap();
    let o = sim_host(&["replay", "all", dir.path().to_str().unwrap()]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}\n{err}");
    assert!(
        out.contains("web_page.csv") && out.contains("PASS"),
        "the good trace still replays:\n{out}"
    );
    assert!(
        err.contains("mystery.csv") && err.contains("not a known trace kind"),
        "{err}"
    );
}

#[test]
fn header_only_trace_is_not_a_vacuous_pass() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("empty.csv");
    std::fs::write(&p, "t_send_ns,t_complete_ns,bytes\n").unwrap();
    let o = sim_host(&["replay", "timely", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).1.contains("nothing meaningful to compare"),
        "{}",
        text(&o).1
    );
}

#[test]
fn wrong_kind_and_bad_usage_exit_2() {
    let o = sim_host(&["replay", "hpcc", "fixtures/timely/incast.csv"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("timely trace"), "{}", text(&o).1);
    assert_eq!(sim_host(&["replay", "timely"]).status.code(), Some(2));
    assert_eq!(
        sim_host(&[
            "replay",
            "timely",
            "fixtures/timely",
            "--min-agreement",
            "2"
        ])
        .status
        .code(),
        Some(2)
    );
    assert_eq!(
        sim_host(&["replay", "timely", "fixtures/timely", "--set", "nokey"])
            .status
            .code(),
        Some(2)
    );
}

#[test]
fn out_and_plot_into_directories_for_a_directory_replay() {
    let dir = tempfile::tempdir().unwrap();
    let (out, plot) = (dir.path().join("out"), dir.path().join("plot"));
    let o = sim_host(&[
        "replay",
        "cats",
        "fixtures/cats",
        "--out",
        out.to_str().unwrap(),
        "--plot",
        plot.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    let csv = std::fs::read_to_string(out.join("web_page.csv.out.csv")).unwrap();
    assert_eq!(
        csv.lines().find(|l| !l.starts_with('#')),
        Some("chunk,t_ns,prio_ref,bytes_ref,prio_fixed,bytes_fixed")
    );
    assert!(
        std::fs::read_to_string(plot.join("web_page.csv.svg"))
            .unwrap()
            .starts_with("<svg")
    );
}

#[test]
fn fixtures_check_reports_a_changed_file() {
    let dir = tempfile::tempdir().unwrap();
    let kdir = dir.path().join("cats");
    std::fs::create_dir_all(&kdir).unwrap();
    for e in std::fs::read_dir(root().join("fixtures/cats")).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), kdir.join(e.file_name())).unwrap();
    }
    let d = dir.path().to_str().unwrap();
    assert_eq!(
        sim_host(&["fixtures", "--dir", d, "--only", "cats", "--check"])
            .status
            .code(),
        Some(0)
    );
    let p = kdir.join("web_page.csv");
    let mut b = std::fs::read(&p).unwrap();
    b.extend_from_slice(b"# tampered\n");
    std::fs::write(&p, b).unwrap();
    let o = sim_host(&["fixtures", "--dir", d, "--only", "cats", "--check"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).0.contains("DIFFERENT"), "{}", text(&o).0);
}
