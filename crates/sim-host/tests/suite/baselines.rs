//! The DCQCN and DCTCP baselines of the closed loop and the engine pieces they need: ECN marking
//! at switch egress with ns-3's Kmin/Kmax/Pmax, CNPs from the receivers, the two f64 reaction
//! points against worked numbers from their papers' equations, and the refusals (no fixed-point
//! side; an ECN key that does not apply).

use crate::common::{load, sim_exit};

use cc_netsim::SimOpts;
use cc_netsim::cc::dcqcn::reference as dcqcn;
use cc_netsim::cc::dctcp::reference as dctcp;
use cc_netsim::ecn::EcnRule;
use cc_netsim::scenario::ControllerKind;
use rand_core::Rng;
use rand_pcg::Pcg64Mcg;
use sim_host::sim::run_loaded;

/// 7-to-1 incast on a 100 Gb/s star, DCQCN with ns-3's marking; `extra` goes into `[params]`.
fn incast(extra: &str, duration_ns: u64) -> String {
    format!(
        r#"
name = "t_dcqcn_incast"
algorithm = "dcqcn"
controller = "reference"
seed = 3
duration_ns = {duration_ns}
[params]
{extra}
[topology]
kind = "star"
hosts = 8
host_rate_bps = 100_000_000_000
[topology.ecn]
[[flows]]
kind = "incast"
src = [1, 2, 3, 4, 5, 6, 7]
dst = 0
size_bytes = 2_000_000
start_ns = 1_000
[output]
sample_ns = 100
"#
    )
}

fn reference() -> SimOpts {
    SimOpts {
        controller: Some(ControllerKind::Reference),
        ..SimOpts::default()
    }
}

#[test]
fn ecn_marking_probability_follows_kmin_kmax_pmax() {
    // ns-3's 100 Gb/s ports: Kmin 400 KB, Kmax 1600 KB, Pmax 0.2.
    let r = EcnRule {
        rate_bps: 100_000_000_000,
        kmin_bytes: 400_000,
        kmax_bytes: 1_600_000,
        pmax: 0.2,
        origin: Default::default(),
    };
    let mut rng = Pcg64Mcg::new(0x5EED);
    let n = 200_000;
    // q → expected p: 0 at and below Kmin; 0.2·(q − Kmin)/(Kmax − Kmin) inside; 0.2 at Kmax;
    // 1 above Kmax.
    for (q, p) in [
        (0u64, 0.0),
        (400_000, 0.0),
        (700_000, 0.05),
        (1_000_000, 0.1),
        (1_300_000, 0.15),
        (1_600_000, 0.2),
        (1_600_001, 1.0),
        (5_000_000, 1.0),
    ] {
        let marked = (0..n)
            .filter(|_| r.marks(q, || (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64))
            .count();
        let got = marked as f64 / n as f64;
        // Four standard deviations of a binomial proportion (and exact at p = 0 or 1).
        let tol = 4.0 * (p * (1.0 - p) / n as f64).sqrt();
        assert!(
            (got - p).abs() <= tol,
            "queue {q} B: marked fraction {got}, expected {p} ± {tol}"
        );
    }
    // A single threshold is Kmin = Kmax: nothing at K, everything above.
    let k = EcnRule {
        kmin_bytes: 20_000,
        kmax_bytes: 20_000,
        pmax: 1.0,
        ..r
    };
    assert!(!k.marks(20_000, || 0.0));
    assert!(k.marks(20_001, || 0.999));
}

#[test]
fn ecn_marks_are_a_function_of_the_seed() {
    let l = load("t_dcqcn_incast.toml", &incast("", 200_000));
    let run = |seed| {
        let o = SimOpts {
            seed: Some(seed),
            ..reference()
        };
        run_loaded(&l, &o).unwrap().0.counters.ecn_marked
    };
    let a = run(3);
    assert!(a > 0, "the incast's queue passes Kmin");
    assert_eq!(a, run(3), "same seed, same marks");
    assert_ne!(
        a,
        run(4),
        "the marks inside (Kmin, Kmax] are drawn from the seed"
    );
}

#[test]
fn cnps_are_rate_limited_per_flow_per_interval() {
    let dur = 200_000;
    let every = load("t_dcqcn_incast.toml", &incast("cnp_interval_ns = 0", dur));
    let (r0, _) = run_loaded(&every, &reference()).unwrap();
    let c = &r0.counters;
    // Interval 0: one CNP per CE-marked data packet that reached its receiver (one switch:
    // each packet is marked at most once).
    assert!(c.ecn_marked > 100, "{c:?}");
    assert!(c.cnps_sent <= c.ecn_marked && c.cnps_sent + c.in_flight >= c.ecn_marked);
    let limited = load(
        "t_dcqcn_incast.toml",
        &incast("cnp_interval_ns = 50_000", dur),
    );
    let (r1, _) = run_loaded(&limited, &reference()).unwrap();
    let c1 = &r1.counters;
    // 7 flows, at most one CNP each per 50 µs over 200 µs: at most 7·(200/50 + 1).
    assert!(c1.cnps_sent > 0);
    assert!(c1.cnps_sent <= 7 * (dur / 50_000 + 1), "{c1:?}");
    // ... and per flow, not per receiver: more than one receiver-wide limit would let through.
    assert!(c1.cnps_sent > dur / 50_000 + 1, "{c1:?}");
    assert!(c1.cnps_sent < c.cnps_sent);
    // Every CNP sent reaches its sender's controller (none is dropped: the ACK class).
    for c in [c, c1] {
        assert!(c.cnps_received <= c.cnps_sent && c.cnps_received + 7 >= c.cnps_sent);
    }
}

/// g = 0 keeps α at 1, so every cut halves the rate: round numbers for the stages.
fn stages_params() -> dcqcn::Params {
    dcqcn::Params {
        line_rate_bps: 100e9,
        min_rate_bps: 1e9,
        rate_ai_bps: 1e9,
        rate_hai_bps: 5e9,
        g: 0.0,
        alpha_interval_ps: 1_000_000,
        decrease_interval_ps: 4_000_000,
        rp_timer_ps: 300_000_000,
        fast_recovery_times: 1,
        byte_counter_bytes: 0,
        clamp_target_rate: false,
        rate_on_first_cnp: 1.0,
    }
}

const US: u64 = 1_000_000;

#[test]
fn dcqcn_cuts_its_rate_on_a_cnp_and_recovers_through_its_stages() {
    use dcqcn::branch::*;
    let p = stages_params();
    let mut s = dcqcn::State::new(&p);
    assert_eq!(s.on_cnp(&p, 0), FIRST_CNP);
    assert_eq!((s.rc, s.rt, s.alpha), (100e9, 100e9, 1.0));
    // The first decrease check is 4 µs + 1 ns after the first CNP: Rc ← Rc·(1 − α/2) = 50 Gb/s;
    // no increase yet since the flow started, so Rt stays at 100 Gb/s.
    assert_eq!(s.advance(&p, 4 * US), Some(ALPHA));
    assert_eq!(s.rc, 100e9);
    assert_eq!(s.advance(&p, 4 * US + 1_000), Some(CUT));
    assert_eq!((s.rc, s.rt), (50e9, 100e9));
    // Checks without a CNP change nothing.
    s.advance(&p, 300 * US);
    assert_eq!(s.rc, 50e9);
    // One RP timer after the cut: fast recovery (T = 0 < F = 1): Rc ← (Rt + Rc)/2 = 75 Gb/s.
    assert_eq!(s.advance(&p, 304 * US + 1_000), Some(FAST_RECOVERY));
    assert_eq!((s.rc, s.rt), (75e9, 100e9));
    // A CNP at 305 µs; the check at 308.001 µs cuts, and the flow has increased since its
    // last cut, so Rt ← Rc = 75 Gb/s, Rc ← 37.5 Gb/s.
    assert_eq!(s.on_cnp(&p, 305 * US), CNP);
    assert_eq!(s.advance(&p, 308 * US + 1_000), Some(CUT));
    assert_eq!((s.rc, s.rt), (37.5e9, 75e9));
    // Fast recovery: Rc = (37.5 + 75)/2 = 56.25 Gb/s.
    assert_eq!(s.advance(&p, 608 * US + 1_000), Some(FAST_RECOVERY));
    assert_eq!((s.rc, s.rt), (56.25e9, 75e9));
    // Additive increase (T = F): Rt = 75 + 1 = 76, Rc = (56.25 + 76)/2 = 66.125 Gb/s.
    assert_eq!(s.advance(&p, 908 * US + 1_000), Some(ADDITIVE));
    assert_eq!((s.rc, s.rt), (66.125e9, 76e9));
    // Hyper increase (T > F): Rt = 76 + 5 = 81, Rc = (66.125 + 81)/2 = 73.5625 Gb/s; then
    // Rt = 86, Rc = 79.78125 Gb/s.
    assert_eq!(s.advance(&p, 1208 * US + 1_000), Some(HYPER));
    assert_eq!((s.rc, s.rt), (73.5625e9, 81e9));
    assert_eq!(s.advance(&p, 1508 * US + 1_000), Some(HYPER));
    assert_eq!((s.rc, s.rt), (79.78125e9, 86e9));
    // Rt never passes the line rate: 86 + 5·3 = 101 → 100 Gb/s.
    s.advance(&p, 2408 * US + 1_000);
    assert_eq!(s.rt, 100e9);
    assert_eq!(s.cuts, 2);
}

#[test]
fn dcqcn_alpha_follows_the_paper_update_per_slot() {
    // g = 1/256: after the first CNP α = 1; each 1 µs slot without a CNP multiplies it by
    // (1 − g), a slot with one adds g after that: α ← (1 − g)·α + g.
    let p = dcqcn::Params {
        g: 1.0 / 256.0,
        ..stages_params()
    };
    let mut s = dcqcn::State::new(&p);
    let _ = s.on_cnp(&p, 0);
    // Slots at 1, 2, 3, 4 µs without a CNP: α = (255/256)^4 = 0.984436…; the cut at 4.001 µs
    // reads it: Rc = 100·(1 − α/2) = 50.7782 Gb/s.
    s.advance(&p, 4 * US + 1_000);
    let a4 = (255.0f64 / 256.0).powi(4);
    assert!((s.alpha - a4).abs() < 1e-15, "{}", s.alpha);
    assert!((s.rc - 100e9 * (1.0 - a4 / 2.0)).abs() < 1.0, "{}", s.rc);
    // A CNP at 4.5 µs: the 5 µs slot adds g: α = (1 − g)·a4 + g.
    let _ = s.on_cnp(&p, 4 * US + 500_000);
    s.advance(&p, 5 * US);
    assert!((s.alpha - ((1.0 - p.g) * a4 + p.g)).abs() < 1e-15);
    // 1000 slots later without a CNP, α has decayed by (1 − g)^1000 (the slots are applied at
    // once; the cut at 8.001 µs reads α at 8 µs).
    let a5 = s.alpha;
    s.advance(&p, 1005 * US);
    let want = a5 * (1.0 - p.g).powi(1000);
    assert!((s.alpha - want).abs() < 1e-12, "{} vs {want}", s.alpha);
    // The rate never goes below the minimum.
    let q = dcqcn::Params {
        min_rate_bps: 40e9,
        ..stages_params()
    };
    let mut m = dcqcn::State::new(&q);
    for k in 0..5 {
        let _ = m.on_cnp(&q, k * 4 * US);
        m.advance(&q, k * 4 * US + 3 * US);
    }
    assert_eq!(m.rc, 40e9);
}

#[test]
fn dcqcn_byte_counter_adds_increase_events() {
    // With a byte counter of 1 MB and a long RP timer, sending 1 MB after the cut runs one
    // fast recovery step; with both counters past F, hyper increase.
    let p = dcqcn::Params {
        byte_counter_bytes: 1_000_000,
        rp_timer_ps: 1_000 * US,
        ..stages_params()
    };
    let mut s = dcqcn::State::new(&p);
    let _ = s.on_cnp(&p, 0);
    s.advance(&p, 4 * US + 1_000);
    assert_eq!(s.rc, 50e9);
    // 999 999 bytes after the cut are not yet 1 MB (the call runs the α slots due only).
    assert_eq!(s.on_sent(&p, 5 * US, 999_999), Some(dcqcn::branch::ALPHA));
    assert_eq!(s.rc, 50e9);
    assert_eq!(s.on_sent(&p, 6 * US, 1), Some(dcqcn::branch::FAST_RECOVERY));
    assert_eq!(s.rc, 75e9);
    // BC = 1 = F, T = 0 < F: additive; then the timer (T = 0, BC = 2): additive again.
    assert_eq!(
        s.on_sent(&p, 7 * US, 1_000_000),
        Some(dcqcn::branch::ADDITIVE)
    );
    assert_eq!(
        s.advance(&p, 1004 * US + 1_000),
        Some(dcqcn::branch::ADDITIVE)
    );
    // T = 1, BC = 2: still additive; T = 2, BC = 2: hyper.
    assert_eq!(
        s.advance(&p, 2004 * US + 1_000),
        Some(dcqcn::branch::ADDITIVE)
    );
    assert_eq!(s.advance(&p, 3004 * US + 1_000), Some(dcqcn::branch::HYPER));
}

fn dctcp_params(g: f64) -> dctcp::Params {
    dctcp::Params {
        line_rate_bps: 100e9,
        min_rate_bps: 1e9,
        rate_ai_bps: 615e6,
        g,
        mtu_bytes: 1_000,
    }
}

/// Feeds ACKs of 1000-byte packets with 10 packets in flight; `marked(i)` says whether the
/// i-th ACK echoes ECN. Returns the state after `n` ACKs.
fn dctcp_run(p: &dctcp::Params, n: u64, marked: impl Fn(u64) -> bool) -> dctcp::State {
    let mut s = dctcp::State::new(p);
    for i in 1..=n {
        let ack = i * 1_000;
        let _ = s.on_ack(p, ack, ack + 10_000, marked(i));
    }
    s
}

#[test]
fn dctcp_alpha_tracks_the_marked_fraction() {
    let p = dctcp_params(1.0 / 16.0);
    // 3 ACKs in 10 marked, spread evenly: α → 0.3 (each window of 11 ACKs holds 3 or 4).
    let s = dctcp_run(&p, 20_000, |i| i % 10 < 3);
    assert!((s.alpha - 0.3).abs() < 0.04, "α = {}", s.alpha);
    // Every ACK marked: α → 1; none: α decays as (1 − g) per window from 1.
    let all = dctcp_run(&p, 20_000, |_| true);
    assert!(all.alpha > 0.999, "{}", all.alpha);
    let none = dctcp_run(&p, 20_000, |_| false);
    assert!(none.alpha < 1e-6, "{}", none.alpha);
    // One window with F = 1 from α = 1 keeps 1; one with F = 0 gives 1 − g = 0.9375.
    let mut w = dctcp::State::new(&p);
    let _ = w.on_ack(&p, 1_000, 11_000, false); // opens the first window (ends at 11 000)
    for ack in (2_000..=11_000).step_by(1_000) {
        let _ = w.on_ack(&p, ack, ack + 10_000, false);
    }
    assert_eq!(w.alpha, 1.0);
    let _ = w.on_ack(&p, 12_000, 22_000, false); // passes 11 000: F = 0
    assert_eq!(w.alpha, 0.9375);
}

#[test]
fn dctcp_cuts_once_per_window_and_increases_per_window() {
    let p = dctcp_params(1.0 / 16.0);
    let mut s = dctcp::State::new(&p);
    let _ = s.on_ack(&p, 1_000, 11_000, false);
    // An ECN echo: R ← R·(1 − α/2) = 50 Gb/s (α = 1); the next marks of the same window
    // (ACKs up to the cut's snd_nxt, 12 000) do not cut again.
    assert_eq!(s.on_ack(&p, 2_000, 12_000, true), dctcp::branch::CUT);
    assert_eq!(s.rate_bps, 50e9);
    for ack in (3_000..=12_000).step_by(1_000) {
        let _ = s.on_ack(&p, ack, ack + 10_000, true);
    }
    assert_eq!(s.rate_bps, 50e9);
    assert_eq!(s.cuts, 1);
    // Past the cut's snd_nxt the next mark cuts again with the α of the window just ended.
    let b = s.on_ack(&p, 13_000, 23_000, true);
    assert_eq!(b, dctcp::branch::CUT);
    assert_eq!(s.cuts, 2);
    // Without marks the rate grows by rate_ai once per window, up to the line rate.
    let r = s.rate_bps;
    let mut ack = 14_000;
    let mut increases = 0;
    while ack < 200_000 {
        if s.on_ack(&p, ack, ack + 10_000, false) == dctcp::branch::INCREASE {
            increases += 1;
        }
        ack += 1_000;
    }
    assert!(increases > 10);
    assert!((s.rate_bps - (r + increases as f64 * 615e6)).abs() < 1.0);
}

#[test]
fn dcqcn_and_dctcp_runs_cut_rates_and_keep_the_invariants() {
    // DCTCP without its window (`win_bytes = 0`): with the topology's BDP as window, seven
    // senders keep the queue under the 100 Gb/s Kmin and nothing is marked.
    for (algo, dur, extra) in [
        ("dcqcn", 300_000u64, ""),
        ("dctcp", 300_000, "win_bytes = 0"),
    ] {
        let text = incast(extra, dur).replace("\"dcqcn\"", &format!("\"{algo}\""));
        let l = load("t_base.toml", &text);
        let (r, sim) = run_loaded(&l, &reference()).unwrap();
        assert!(r.violations.is_empty(), "{algo}: {:?}", r.violations);
        assert!(r.counters.ecn_marked > 0, "{algo}");
        assert_eq!(r.counters.dropped, 0, "{algo}");
        let rates: Vec<f64> = sim.flows.iter().map(|f| f.acked() as f64).collect();
        assert!(
            rates.iter().all(|&b| b > 0.0),
            "{algo}: every flow progresses"
        );
        // DCQCN hears of marks through CNPs, DCTCP through the ECN echo on ACKs.
        assert_eq!(r.counters.cnps_sent > 0, algo == "dcqcn", "{algo}");
        assert_eq!(r.ecn.len(), 1);
    }
}

#[test]
fn controller_fixed_with_dcqcn_or_dctcp_is_refused() {
    for algo in ["dcqcn", "dctcp"] {
        let text = incast("", 10_000).replace("\"dcqcn\"", &format!("\"{algo}\""));
        let (code, err, _) = sim_exit(&text, &["--controller", "fixed"]);
        assert_eq!(code, Some(2), "{err}");
        assert!(
            err.contains("--controller fixed")
                && err.contains(&format!(
                    "algorithm {algo} has no fixed-point implementation"
                )),
            "{err}"
        );
        // The scenario's own `controller = "fixed"` too, naming the file's key.
        let (code, err, _) = sim_exit(
            &text.replace("controller = \"reference\"", "controller = \"fixed\""),
            &[],
        );
        assert_eq!(code, Some(2), "{err}");
        assert!(err.contains("key `controller`"), "{err}");
        // A sweep without --controller runs both sides: refused before any job runs.
        let tmp = tempfile::tempdir().unwrap();
        let res = tmp.path().join("res");
        let (code, err, _) = sim_exit(
            &text,
            &["--seeds", "1..3", "--results", res.to_str().unwrap()],
        );
        assert_eq!(code, Some(2), "{err}");
        assert!(err.contains("reference controller only"), "{err}");
        let written = std::fs::read_dir(&res).map_or(0, |d| d.count());
        assert_eq!(written, 0, "no job ran");
        // --record: no replay kind to record for.
        let tmp = tempfile::tempdir().unwrap();
        let rec = tmp.path().join("rec");
        let (code, err, _) = sim_exit(&text, &["--record", rec.to_str().unwrap()]);
        assert_eq!(code, Some(2), "{err}");
        assert!(err.contains("--record"), "{err}");
    }
}

#[test]
fn an_ecn_key_that_does_not_apply_is_refused() {
    let base = incast("", 10_000);
    let cases = [
        // A rate no switch port of the star runs at.
        (
            "[topology.ecn]\nkmin_bytes = [[400_000_000_000, 1_000]]",
            "topology.ecn.kmin_bytes",
            "would not apply",
        ),
        // Two marking rules at once.
        (
            "ecn_threshold_bytes = 20_000\n[topology.ecn]",
            "topology.ecn_threshold_bytes",
            "one marking rule only",
        ),
        // Kmin above Kmax.
        (
            "[topology.ecn]\nkmin_bytes = [[100_000_000_000, 2_000_000]]",
            "topology.ecn",
            "above kmax",
        ),
        // Pmax outside 0 ..= 1.
        (
            "[topology.ecn]\npmax = [[100_000_000_000, 1.5]]",
            "topology.ecn.pmax",
            "outside 0 ..= 1",
        ),
        // A rate given twice.
        (
            "[topology.ecn]\npmax = [[100_000_000_000, 0.1], [100_000_000_000, 0.2]]",
            "topology.ecn.pmax",
            "given twice",
        ),
        // A key the table does not have.
        (
            "[topology.ecn]\nkmid_bytes = []",
            "kmid_bytes",
            "unknown field",
        ),
    ];
    for (ecn, key, what) in cases {
        let text = base.replace("[topology.ecn]", ecn);
        let (code, err, _) = sim_exit(&text, &[]);
        assert_eq!(code, Some(2), "{ecn}: {err}");
        assert!(err.contains(key) && err.contains(what), "{ecn}: {err}");
    }
    // A link rate ns-3's maps do not cover needs its values.
    let ten = base.replace("100_000_000_000", "10_000_000_000");
    let (code, err, _) = sim_exit(&ten, &[]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("topology.ecn.kmin_bytes") && err.contains("10 Gb/s"),
        "{err}"
    );
    // DCQCN on switches that mark nothing would never react.
    let (code, err, _) = sim_exit(&base.replace("[topology.ecn]\n", ""), &[]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("the switches mark none"), "{err}");
    // A parameter DCQCN does not have.
    let (code, err, _) = sim_exit(&base, &["--set", "eta=0.9"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("--set eta") && err.contains("no such parameter"),
        "{err}"
    );
}

#[test]
fn the_report_shows_the_ecn_values_in_force_and_their_origin() {
    let text = incast("", 10_000).replace(
        "[topology.ecn]",
        "[topology.ecn]\npmax = [[100_000_000_000, 0.5]]",
    );
    let l = load("t_origin.toml", &text);
    let (r, _) = run_loaded(&l, &reference()).unwrap();
    assert_eq!(r.ecn.len(), 1);
    let e = &r.ecn[0];
    assert_eq!(
        (e.kmin_bytes, e.kmax_bytes, e.pmax),
        (400_000, 1_600_000, 0.5)
    );
    assert!(
        e.origin[0].starts_with("default: ns-3 KMIN_MAP"),
        "{:?}",
        e.origin
    );
    assert!(e.origin[2].ends_with("topology.ecn.pmax"), "{:?}", e.origin);
    let text = sim_host::sim::text(&r);
    assert!(
        text.contains("ECN at 100Gb/s egress: kmin 400000 B"),
        "{text}"
    );
    // DCQCN's rate defaults that follow the line rate say so.
    let ai = r.params.iter().find(|p| p.key == "rate_ai_bps").unwrap();
    assert_eq!(ai.value, "20000000");
    assert!(ai.origin.contains("line_rate_bps/5000"), "{}", ai.origin);
}

#[test]
fn dctcp_s_window_defaults_to_the_topology_s_largest_bdp() {
    let text = incast("", 50_000).replace("\"dcqcn\"", "\"dctcp\"");
    let l = load("t_base.toml", &text);
    let (r, _) = run_loaded(&l, &reference()).unwrap();
    let w = r
        .params
        .iter()
        .find(|p| p.key == "win_bytes")
        .expect("win_bytes in force");
    let bdp = r.paths.as_ref().expect("the path table").largest_bdp_bytes;
    assert_eq!(w.value, bdp.to_string());
    assert_eq!(
        w.origin,
        "topology: the largest bandwidth-delay product of its paths"
    );
    // Given, it wins.
    let l = load(
        "t_base.toml",
        &text.replace("[params]\n", "[params]\nwin_bytes = 7000\n"),
    );
    let (r, _) = run_loaded(&l, &reference()).unwrap();
    let w = r.params.iter().find(|p| p.key == "win_bytes").unwrap();
    assert_eq!(w.value, "7000");
    assert!(w.origin.contains("[params]"), "{}", w.origin);
}
