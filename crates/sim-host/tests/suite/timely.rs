//! TIMELY end to end through sim-host's library API: every shipped fixture replays within
//! tolerance (free and forced), the fixtures are exactly what the generators make, the replay's
//! outputs and errors, and the identical-RTT EWMA regression.

use cc_replay::opts::{Mode, ReplayOpts};
use cc_replay::timely::lockstep::Lockstep;
use cc_replay::timely::params;
use cc_trace::{Param, parse_cli_set};
use sim_host::fixtures;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/timely")
}

fn fixture_files() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(fixture_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "csv"))
        .collect();
    v.sort();
    v
}

#[test]
fn every_fixture_replays_within_tolerance_in_both_modes() {
    let files = fixture_files();
    assert!(files.len() >= 4, "{files:?}");
    let mut seen = BTreeSet::new();
    for f in &files {
        for mode in [Mode::Free, Mode::Forced] {
            let opts = ReplayOpts {
                mode,
                ..ReplayOpts::default()
            };
            let s = cc_replay::timely::replay(f, &opts).unwrap().remove(0);
            assert!(s.events >= 20_000, "{}: {} events", f.display(), s.events);
            assert!(s.within_tolerance, "{}", s.render());
            // The fidelity targets (docs/timely.md, "Measured fidelity"), spelled out.
            let e = s.rel_err.as_ref().unwrap();
            assert!(s.agreement.ratio >= 0.999 && e.p99 <= 1e-3 && e.max <= 1e-2);
            if let Some(serde_json::Value::Object(m)) = s.details.get("branches ref") {
                seen.extend(m.keys().cloned());
            }
        }
    }
    // Together the fixtures exercise every branch.
    for b in cc_replay::timely::BRANCHES.map(timely_cc::TimelyBranch::name) {
        assert!(seen.contains(b), "no fixture takes branch {b}: {seen:?}");
    }
}

#[test]
fn committed_fixtures_are_what_the_generators_make() {
    let made = fixtures::generate(cc_replay::timely::KIND);
    assert!(made.len() >= 4);
    for f in made {
        let on_disk = std::fs::read(fixture_dir().join(&f.name)).unwrap();
        assert!(
            on_disk == f.bytes,
            "fixtures/timely/{} differs from its generator: run `cargo run -p sim-host -- fixtures --only timely`",
            f.name
        );
    }
}

/// Regression (identical-RTT EWMA): after a rise, a queue that holds still gives identical RTTs.
/// The f64 EWMA of the difference decays by 1/8 per event and its gradient flushes to 0 after
/// ≈ 357 samples; a round-to-nearest fixed EWMA would reach 0 within ~7 and switch to the
/// increase branches early, and the first fix (a one-ulp floor) never switched at all. The
/// residual counter now ends the `dec` run within one event of the reference's, with the rate
/// unchanged by the residual.
#[test]
fn identical_rtt_hold_ends_with_the_f64_underflow() {
    let both = params::build(Path::new("test"), &[]).unwrap();
    let mut ls = Lockstep::new(&both, Mode::Free);
    // 1500 B serialise in exactly 1.2 µs at 10 Gb/s.
    let ev = |i: u64, rtt: u64| (i * 20_000, i * 20_000 + rtt + 1_200);
    let (s, c) = ev(0, 100_000);
    assert_eq!(ls.step(s, c, 1_500).branch_ref, "init");
    let (s, c) = ev(1, 101_000); // +1 µs: rtt_diff = 875 ns
    assert_eq!(ls.step(s, c, 1_500).branch_ref, "dec");
    let (mut ref_decs, mut fixed_decs, mut differ) = (0, 0, 0);
    let mut worst = 0f64;
    for i in 2..3_000u64 {
        let (s, c) = ev(i, 101_000);
        let o = ls.step(s, c, 1_500);
        ref_decs += usize::from(o.branch_ref == "dec");
        fixed_decs += usize::from(o.branch_fixed == "dec");
        differ += usize::from(o.branch_ref != o.branch_fixed);
        let e = (o.rate_fixed_bps as f64 - o.rate_ref_bps).abs() / o.rate_ref_bps;
        worst = worst.max(e);
    }
    // g = 875 ns/20 µs · 8^-k falls below 2^-1075 (half the smallest subnormal) at k ≈ 357.
    assert!(
        (350..=362).contains(&ref_decs),
        "f64 g reached 0 after {ref_decs} equal samples"
    );
    assert!(
        differ <= 1,
        "{differ} events differ ({fixed_decs} vs {ref_decs} dec)"
    );
    assert!(worst < 1e-5, "rate error {worst:e}");
    eprintln!("f64: {ref_decs} dec, fixed: {fixed_decs} dec, worst rate error {worst:e}");
}

fn write_trace(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn out_csv_has_the_documented_columns_and_skip_rows() {
    let dir = tempfile::tempdir().unwrap();
    let trace = write_trace(
        dir.path(),
        "t.csv",
        "# set beta=0.8\nt_send_ns,t_complete_ns,bytes\n0,101200,1500\n10,600010,1500\n20,10,1500\n30,40030,1500\n",
    );
    let out = dir.path().join("out.csv");
    let svg = dir.path().join("p.svg");
    let opts = ReplayOpts {
        out: Some(out.clone()),
        plot: Some(svg.clone()),
        ..ReplayOpts::default()
    };
    let s = cc_replay::timely::replay(&trace, &opts).unwrap().remove(0);
    assert_eq!((s.events, s.skipped), (4, 1));
    let text = std::fs::read_to_string(&out).unwrap();
    let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(
        lines[0],
        "event,t_ns,rtt_ns,rate_ref_bps,rate_fixed_bps,branch_ref,branch_fixed"
    );
    assert_eq!(lines.len(), 5);
    assert!(lines[1].ends_with(",init,init"), "{}", lines[1]);
    // 1500 B at 10 Gb/s: ⌊1500·M/2^32⌋ = 19 199 sixteenths of a ns removed (M of docs/timely.md, "Conventions").
    assert!(
        lines[2].starts_with("1,600010,598800.0625,"),
        "{}",
        lines[2]
    );
    assert!(lines[2].ends_with(",high,high"), "{}", lines[2]);
    assert!(
        lines[3].ends_with(",skip,skip") && lines[3].starts_with("2,10,,"),
        "{}",
        lines[3]
    );
    assert!(lines[4].ends_with(",low,low"), "{}", lines[4]);
    assert!(std::fs::read_to_string(&svg).unwrap().starts_with("<svg"));
}

#[test]
fn bad_parameters_name_their_source() {
    let dir = tempfile::tempdir().unwrap();
    let trace = write_trace(
        dir.path(),
        "bad.csv",
        "# comment\n# set t_low_ns=600000\nt_send_ns,t_complete_ns,bytes\n0,30000,1\n0,30000,1\n",
    );
    let e = cc_replay::timely::replay(&trace, &ReplayOpts::default()).unwrap_err();
    assert_eq!(e.line, Some(2), "{e}");
    assert!(e.msg.contains("t_low_ns"), "{e}");
    // A valid trace with a bad --set: the error points at --set.
    let ok = write_trace(
        dir.path(),
        "ok.csv",
        "t_send_ns,t_complete_ns,bytes\n0,1,1\n",
    );
    for bad in [
        "beta=1.5",
        "hai_after=300",
        "alpha=x",
        "nonsense=1",
        "min_rtt_ns=0",
    ] {
        let opts = ReplayOpts {
            params: vec![parse_cli_set(bad).unwrap()],
            ..ReplayOpts::default()
        };
        let e = cc_replay::timely::replay(&ok, &opts).unwrap_err();
        assert!(e.to_string().starts_with("--set: "), "{bad}: {e}");
    }
    // --set wins over # set.
    let fixed = Param {
        key: "t_low_ns".into(),
        value: "40000".into(),
        source: PathBuf::from("--set"),
        line: None,
    };
    let opts = ReplayOpts {
        params: vec![fixed],
        ..ReplayOpts::default()
    };
    assert!(cc_replay::timely::replay(&trace, &opts).is_ok());
}

#[test]
fn malformed_rows_name_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    for (text, line) in [
        ("t_send_ns,t_complete_ns,bytes\n0,10,1\n-5,10,1\n", 3),
        ("t_send_ns,t_complete_ns,bytes\n0,10\n", 2),
        ("t_send_ns,t_complete_ns,bytes\n0,10,99999999999\n", 2),
    ] {
        let t = write_trace(dir.path(), "m.csv", text);
        let e = cc_replay::timely::replay(&t, &ReplayOpts::default()).unwrap_err();
        assert_eq!(e.line, Some(line), "{e}");
    }
    let t = write_trace(dir.path(), "h.csv", "a,b,c\n1,2,3\n");
    assert!(cc_replay::timely::replay(&t, &ReplayOpts::default()).is_err());
}

#[test]
fn optional_rules_replay_within_tolerance() {
    // The §5 per-completion scaling rule (off by default) on a shipped fixture: both sides
    // implement it.
    let f = fixture_dir().join("gradient_hai.csv");
    let opts = ReplayOpts {
        params: vec![parse_cli_set("per_completion_scaling=true").unwrap()],
        ..ReplayOpts::default()
    };
    let s = cc_replay::timely::replay(&f, &opts).unwrap().remove(0);
    assert!(s.within_tolerance, "{}", s.render());
}

/// The application-limited rule (§5) on a trace where it fires: a flow allowed 5 Gb/s that
/// sends a 16 KB segment every 100 µs (1.3 Gb/s, below 80 % of its rate) on an idle path
/// (RTT 20 µs < T_low). With the rule every `low` increase is suppressed on both sides; without
/// it the rate climbs by δ per completion.
#[test]
fn app_limited_rule_suppresses_increases_on_both_sides() {
    let mut text = String::from("# set init_rate_bps=5000000000\nt_send_ns,t_complete_ns,bytes\n");
    for i in 0..2_000u64 {
        let t = 1_000_000 + i * 100_000;
        text += &format!("{t},{},16384\n", t + 20_000 + 13_108);
    }
    let dir = tempfile::tempdir().unwrap();
    let trace = write_trace(dir.path(), "app.csv", &text);
    for (rule, want_growth) in [("app_limited=0.8", false), ("app_limited=off", true)] {
        let set = vec![parse_cli_set(rule).unwrap()];
        let s = cc_replay::timely::replay(
            &trace,
            &ReplayOpts {
                params: set.clone(),
                ..ReplayOpts::default()
            },
        )
        .unwrap()
        .remove(0);
        assert!(s.within_tolerance, "{rule}: {}", s.render());
        // Drive both sides directly and look at the rates.
        let mut all = vec![parse_cli_set("init_rate_bps=5000000000").unwrap()];
        all.extend(set);
        let both = params::build(&trace, &all).unwrap();
        let mut ls = Lockstep::new(&both, Mode::Free);
        let mut last = None;
        for i in 0..2_000u64 {
            let t = 1_000_000 + i * 100_000;
            let o = ls.step(t, t + 20_000 + 13_108, 16_384);
            last = Some(o);
        }
        let o = last.unwrap();
        assert_eq!(
            o.rate_fixed_bps as f64 > 5.0e9,
            want_growth,
            "{rule}: {o:?}"
        );
        assert_eq!(o.rate_ref_bps > 5.0e9, want_growth, "{rule}: {o:?}");
        if !want_growth {
            assert_eq!(
                o.rate_fixed_bps, 5_000_000_000,
                "{rule}: suppressed increases leave the rate"
            );
            assert_eq!(o.rate_ref_bps, 5e9, "{rule}");
        }
    }
}
