//! The pacer replay: every shipped fixture agrees with the f64 reference (order identical, send
//! times within 1 ns), the committed fixtures are what the generators make, and bad traces are
//! refused with file and line.
//!
//! `PACER_BLESS=1 cargo test -p sim-host --test suite pacer::` (re)writes `fixtures/pacer/`.

use crate::common::root;
use cc_replay::opts::ReplayOpts;
use cc_replay::pacer::{self, generate::FIXTURE_EXT};
use std::path::PathBuf;

fn dir() -> PathBuf {
    root().join("fixtures/pacer")
}

#[test]
fn committed_fixtures_are_what_the_generators_produce() {
    let files = pacer::fixtures();
    assert!(files.len() >= 6);
    if std::env::var_os("PACER_BLESS").is_some() {
        std::fs::create_dir_all(dir()).unwrap();
        for f in &files {
            std::fs::write(dir().join(&f.name), &f.bytes).unwrap();
        }
    }
    for f in &files {
        let p = dir().join(&f.name);
        let got = std::fs::read(&p).unwrap_or_default();
        assert!(
            got == f.bytes,
            "{} differs from its generator; regenerate with PACER_BLESS=1 cargo test -p sim-host --test suite pacer::",
            p.display()
        );
    }
    // Nothing else in the folder but the README.
    for e in std::fs::read_dir(dir()).unwrap() {
        let name = e.unwrap().file_name().into_string().unwrap();
        assert!(
            name == "README.md" || files.iter().any(|f| f.name == name),
            "fixtures/pacer/{name} has no generator"
        );
    }
}

fn replay(name: &str) -> cc_replay::summary::Summary {
    let p = dir().join(format!("{name}.{FIXTURE_EXT}"));
    let mut s = pacer::replay(&p, &ReplayOpts::default()).unwrap();
    assert_eq!(s.len(), 1);
    s.remove(0)
}

fn check(name: &str, min_segments: u64) -> cc_replay::summary::Summary {
    let s = replay(name);
    println!("{}", s.render());
    assert!(s.within_tolerance, "{}", s.render());
    assert_eq!(s.agreement.ratio, 1.0);
    assert_eq!(s.agreement.agree, s.agreement.total);
    assert!(s.agreement.total >= min_segments, "{}", s.render());
    assert!(s.bounds.iter().all(|b| b.value <= 1.0));
    s
}

#[test]
fn many_flows_agrees() {
    check("many_flows", 1_000);
}

#[test]
fn lazy_update_agrees_and_refiles() {
    let s = check("lazy_update", 300);
    let ev = &s.details["reference events"];
    assert!(ev["lazy_refiles"].as_u64().unwrap() >= 100, "{ev}");
}

#[test]
fn hpcc_window_agrees_and_windows_close() {
    let s = check("hpcc_window", 2_000);
    let ev = &s.details["reference events"];
    assert!(ev["window_closures"].as_u64().unwrap() > 0, "{ev}");
}

#[test]
fn hybrid_agrees() {
    check("hybrid", 1_000);
}

#[test]
fn incast_line_agrees() {
    check("incast_line", 1_000);
}

#[test]
fn wrap_idle_agrees() {
    check("wrap_idle", 20);
}

fn write(text: &str) -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("t.csv");
    std::fs::write(&p, text).unwrap();
    (d, p)
}

#[test]
fn bad_rows_name_the_line() {
    for (text, line, what) in [
        (
            "t_ns,event,flow,value\n0,enqueue,1,100\n5,jump,1,1\n",
            3,
            "event \"jump\"",
        ),
        (
            "t_ns,event,flow,value\n10,tick,,\n5,tick,,\n",
            3,
            "time order",
        ),
        ("t_ns,event,flow,value\n0,enqueue,,100\n", 2, "needs a flow"),
        (
            "t_ns,event,flow,value\n0,enqueue,1,100\n1,ack,1,10\n",
            3,
            "ack is for window flows",
        ),
        (
            "# set seg_bytes=1000\nt_ns,event,flow,value\n0,tick,,\n",
            1,
            "multiple of 256",
        ),
        (
            "# set colour=red\nt_ns,event,flow,value\n0,tick,,\n",
            1,
            "unknown parameter",
        ),
    ] {
        let (_d, p) = write(text);
        let e = pacer::replay(&p, &ReplayOpts::default()).unwrap_err();
        assert_eq!(e.line, Some(line), "{e}");
        assert!(e.msg.contains(what), "{e}");
    }
}

#[test]
fn a_hand_made_trace() {
    // Two flows at 10 Gb/s on a 100 Gb/s line; the second drops to 5 Gb/s while waiting. Its
    // second segment was due at 1 310.72 + 13 107.25 ns (slot 225, from 14 400 ns): at the tick
    // at 14 450 ns it is found early (due at 1 310.72 + 26 214.4 ns now) and re-filed.
    let (_d, p) = write(
        "t_ns,event,flow,value\n0,rate,1,10000000000\n0,rate,2,10000000000\n\
         0,enqueue,1,50000\n0,enqueue,2,50000\n5000,rate,2,5000000000\n14450,tick,,\n100000,tick,,\n",
    );
    let s = pacer::replay(&p, &ReplayOpts::default()).unwrap().remove(0);
    assert!(s.within_tolerance, "{}", s.render());
    assert_eq!(s.details["segments"], 8);
    let ev = &s.details["reference events"];
    assert_eq!(ev["lazy_refiles"], 1, "{ev}");
}
