//! CATS: every shipped fixture replays with identical fixed-point and f64 chunk orders, the
//! committed fixtures are exactly what the generators produce, and the headline behaviours hold.

use sim_host::cats;
use sim_host::fixtures;
use sim_host::replay::{Kind, Mode, ReplayOpts};
use std::path::{Path, PathBuf};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/cats")
}

fn replay(name: &str, mode: Mode) -> sim_host::summary::Summary {
    let opts = ReplayOpts {
        mode,
        ..ReplayOpts::default()
    };
    let mut s = cats::replay(&dir().join(name), &opts).unwrap();
    assert_eq!(s.len(), 1);
    s.remove(0)
}

fn detail(s: &sim_host::summary::Summary, k: &str) -> String {
    match s.details.get(k) {
        Some(serde_json::Value::String(t)) => t.clone(),
        Some(v) => v.to_string(),
        None => panic!("no detail {k:?} in {:?}", s.details),
    }
}

#[test]
fn every_fixture_replays_with_identical_orders() {
    let files = fixtures::generate(Kind::Cats);
    assert!(files.len() >= 4);
    for f in &files {
        for mode in [Mode::Free, Mode::Forced] {
            let s = replay(&f.name, mode);
            assert!(s.agreement.total > 0, "{}: no chunks", f.name);
            assert_eq!(
                s.agreement.agree,
                s.agreement.total,
                "{}: {}",
                f.name,
                s.render()
            );
            assert!(s.within_tolerance, "{}", s.render());
            assert_eq!(detail(&s, "left queued"), "0", "{}", s.render());
            assert!(
                detail(&s, "worst starvation").ends_with("(within)"),
                "{}",
                s.render()
            );
            // Byte conservation: one "bytes out" line (both sides equal) that matches bytes in.
            assert_eq!(
                detail(&s, "bytes out"),
                detail(&s, "bytes in"),
                "{}",
                s.render()
            );
        }
    }
}

#[test]
fn committed_fixtures_are_what_the_generators_produce() {
    for f in fixtures::generate(Kind::Cats) {
        let on_disk = std::fs::read(dir().join(&f.name)).unwrap();
        assert!(
            on_disk == f.bytes,
            "fixtures/cats/{} differs from its generator",
            f.name
        );
    }
}

/// The paper's Table I: CATS delivers P0 and P1 first although they were queued last, and the
/// total is unchanged (283 000 bytes).
#[test]
fn web_page_p0_and_p1_complete_first() {
    let s = replay("web_page.csv", Mode::Free);
    let order = detail(&s, "completion order");
    assert!(
        order.starts_with("P0 (chunk 11) → P1 (chunk 35) → P2"),
        "{order}"
    );
    assert!(order.ends_with("P4 (chunk 282)"), "{order}");
    assert_eq!(s.agreement.total, 283);
    assert_eq!(
        detail(&s, "bytes out"),
        "P0 8000 · P1 25000 · P2 40000 · P3 60000 · P4 150000"
    );
}

/// Under a backlogged P0 stream, P1–P4 still finish their traffic long before P0's backlog
/// drains: the debt scheme does not let P0 starve them.
#[test]
fn heavy_p0_lets_every_other_priority_progress() {
    let s = replay("heavy_p0.csv", Mode::Free);
    let order = detail(&s, "completion order");
    assert!(
        order.ends_with(&format!("P0 (chunk {})", s.agreement.total - 1)),
        "{order}"
    );
    for p in 1..5 {
        assert!(order.contains(&format!("P{p} (chunk")), "{order}");
    }
}

/// The Eq. 1-violating fixture really exercises the clamp, and its summary says Eq. 1 fails.
#[test]
fn eq1_fixture_needs_the_clamp() {
    let s = replay("eq1_violation.csv", Mode::Free);
    assert!(detail(&s, "eq. 1").starts_with("fails for P2, P3"));
    let d = detail(&s, "deadlocks");
    let clamped: u64 = d
        .split(", ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap();
    assert!(clamped > 0, "{d}");
}

#[test]
fn bad_input_names_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bad.csv");
    std::fs::write(
        &p,
        "# set mss_bytes=1000\nt_ns,event,prio,bytes\n0,enqueue,7,100\n",
    )
    .unwrap();
    let e = cats::replay(&p, &ReplayOpts::default()).unwrap_err();
    assert_eq!(e.line, Some(3), "{e}");
    std::fs::write(&p, "# set l0=70000\nt_ns,event,prio,bytes\n").unwrap();
    let e = cats::replay(&p, &ReplayOpts::default()).unwrap_err();
    assert_eq!(e.line, Some(1), "{e}");
    assert!(e.msg.contains("l0"), "{e}");
    std::fs::write(&p, "# set q=1\nt_ns,event,prio,bytes\n").unwrap();
    assert!(cats::replay(&p, &ReplayOpts::default()).is_err());
    std::fs::write(&p, "t_ns,event,prio,bytes\n0,jump,,\n").unwrap();
    assert_eq!(
        cats::replay(&p, &ReplayOpts::default()).unwrap_err().line,
        Some(2)
    );
}

#[test]
fn out_and_plot_are_written() {
    let dir = tempfile::tempdir().unwrap();
    let opts = ReplayOpts {
        out: Some(dir.path().join("o.csv")),
        plot: Some(dir.path().join("o.svg")),
        ..ReplayOpts::default()
    };
    cats::replay(&self::dir().join("web_page.csv"), &opts).unwrap();
    let out = std::fs::read_to_string(dir.path().join("o.csv")).unwrap();
    let mut lines = out.lines();
    assert_eq!(
        lines.next(),
        Some("chunk,t_ns,prio_ref,bytes_ref,prio_fixed,bytes_fixed")
    );
    assert_eq!(lines.next(), Some("0,0,4,1000,4,1000"));
    assert_eq!(out.lines().count(), 1 + 283);
    assert!(
        std::fs::read_to_string(dir.path().join("o.svg"))
            .unwrap()
            .contains("<svg")
    );
}

/// Multipliers that are not multiples of 2^-16 are rounded for both sides and reported.
#[test]
fn inexact_multiplier_is_quantised_for_both_sides() {
    let opts = ReplayOpts {
        params: vec![sim_host::trace::parse_cli_set("m2=0.3").unwrap()],
        ..ReplayOpts::default()
    };
    let s = cats::replay(&dir().join("steady_mixed.csv"), &opts)
        .unwrap()
        .remove(0);
    assert!(
        detail(&s, "multipliers").starts_with("m2 0.3 → 0.300003"),
        "{}",
        s.render()
    );
    assert!(s.within_tolerance, "{}", s.render());
}
