//! The NIC pacer in the closed loop: every NIC paces through `cc-pacer` (fixed-point runs) or
//! the f64 reference pacer (reference runs, or the scenario's `pacer`). What these pin: no
//! segment leaves before its pacing gap, the two pacers give the same packet times, a flow
//! beyond the pacer's flow table waits for a slot and is counted, and a seed gives the same
//! files.

use crate::common::{load, scenarios_dir};

use cc_netsim::scenario::{self, ControllerKind};
use cc_netsim::{Report, SimOpts};
use sim_host::sim::run_loaded;
use std::path::Path;

fn run(name: &str, text: &str, controller: ControllerKind, out: Option<&Path>) -> Report {
    let l = load(name, text);
    let o = SimOpts {
        controller: Some(controller),
        out: out.map(Path::to_path_buf),
        record: out.map(|d| d.join("rec")),
        ..SimOpts::default()
    };
    let (r, _) = run_loaded(&l, &o).unwrap_or_else(|e| panic!("{e}"));
    assert!(r.violations.is_empty(), "{:?}", r.violations);
    r
}

/// Two HPCC window flows into one port, per-packet pacing.
const HPCC_INCAST: &str = r#"
name = "t_pacer_incast"
algorithm = "hpcc"
duration_ns = 400_000
[params]
base_rtt_ns = 13000
[topology]
kind = "star"
hosts = 3
host_rate_bps = 100_000_000_000
[[flows]]
kind = "incast"
src = [1, 2]
dst = 0
size_bytes = 1_000_000
[output]
sample_ns = 1000
"#;

/// One TIMELY flow in 16 KiB segments for 600 ms: the fixed pacer's clock wraps twice.
const TIMELY_ONE: &str = r#"
name = "t_pacer_timely"
algorithm = "timely"
duration_ns = 600_000_000
segment_bytes = 16384
[params]
init_rate_bps = 2_000_000_000
[topology]
kind = "dumbbell"
left_hosts = 1
right_hosts = 1
host_rate_bps = 10_000_000_000
fabric_rate_bps = 10_000_000_000
host_delay_ns = 5000
[[flows]]
kind = "long"
src = [0]
dst = 1
[output]
sample_ns = 100_000
record_flows = [0]
"#;

const LEAF_SPINE: &str = r#"
name = "t_pacer_leaf_spine"
algorithm = "hpcc"
duration_ns = 300_000
seed = 7
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
cdf = "cdf/hadoop.cdf"
stop_ns = 250_000
"#;

#[test]
fn nics_send_no_segment_before_its_pacing_gap() {
    for (name, text, per_packet) in [
        ("t_pacer_incast.toml", HPCC_INCAST, true),
        ("t_pacer_timely.toml", TIMELY_ONE, false),
    ] {
        for c in [ControllerKind::Fixed, ControllerKind::Reference] {
            let r = run(name, text, c, None);
            let k = &r.counters;
            // Checked by the engine against the previous segment's time plus its gap at the
            // rate it left with, computed apart from the pacer (a violation otherwise).
            assert_eq!(k.pacer_early, 0, "{name} {c:?}");
            assert!(k.pacer_segments > 100, "{name} {c:?}: {k:?}");
            if per_packet {
                assert_eq!(k.pacer_segments, k.sent, "one segment per packet");
            } else {
                assert!(
                    k.pacer_segments * 16 <= k.sent,
                    "16 KiB segments of 1 kB packets"
                );
            }
            // Paced pairs measure the documented roundings against the controller's rate: a
            // gap exceeds 8·b/rate by less than 1/16 ns + b·2^-22 ns (≤ 0.016 ns) plus what
            // rounding the rate down to 128 b/s adds (< 0.002 ns here), and is never shorter.
            assert!(k.pacer_paced_pairs > 50, "{name} {c:?}: {k:?}");
            assert!(k.pacer_gap_excess_max_ns < 0.08, "{name} {c:?}: {k:?}");
            assert!(k.pacer_gap_err_min >= -1e-12, "{name} {c:?}: {k:?}");
        }
    }
}

#[test]
fn fixed_and_reference_pacers_give_a_flow_the_same_packet_times() {
    // The same controller (fixed point) with either pacer: same segments at the same times, so
    // the same packets, completions and files — across two wraps of the fixed pacer's clock.
    for (name, text, rec) in [
        (
            "t_pacer_timely.toml",
            TIMELY_ONE,
            Some("t_pacer_timely_flow0.csv"),
        ),
        ("t_pacer_incast.toml", HPCC_INCAST, None),
    ] {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        let stem = name.trim_end_matches(".toml");
        let ra = run(name, text, ControllerKind::Fixed, Some(a.path()));
        let ref_text = text.replacen("\n[params]", "\npacer = \"reference\"\n[params]", 1);
        let rb = run(name, &ref_text, ControllerKind::Fixed, Some(b.path()));
        assert_eq!(
            (ra.pacer.as_str(), rb.pacer.as_str()),
            ("fixed", "reference")
        );
        assert_eq!(ra.counters.pacer_segments, rb.counters.pacer_segments);
        for f in [
            format!("{stem}_flows.csv"),
            format!("{stem}_timeseries.csv"),
        ] {
            let x = std::fs::read(a.path().join(&f)).unwrap();
            let y = std::fs::read(b.path().join(&f)).unwrap();
            assert!(x == y, "{name}: {f} differs between the pacers");
        }
        if let Some(rec) = rec {
            let x = std::fs::read_to_string(a.path().join("rec").join(rec)).unwrap();
            let y = std::fs::read_to_string(b.path().join("rec").join(rec)).unwrap();
            let rows = x.lines().filter(|l| !l.starts_with('#')).count();
            // 600 ms at 2–10 Gb/s in 16 KiB segments: tens of thousands of completions, each
            // with its segment's send time.
            assert!(rows > 10_000, "{rows} completions");
            let strip = |s: &str| {
                s.lines()
                    .filter(|l| !l.starts_with('#'))
                    .collect::<Vec<_>>()
                    .join("\n")
            };
            assert!(
                strip(&x) == strip(&y),
                "{name}: the TIMELY completions differ"
            );
        }
    }
}

#[test]
fn flows_beyond_the_pacers_flow_table_wait_for_a_slot_and_are_counted() {
    // Host 1 starts four flows at once; its pacer holds two.
    let text = HPCC_INCAST
        .replace("src = [1, 2]", "src = [1, 1, 1, 1]")
        .replace("size_bytes = 1_000_000", "size_bytes = 100_000")
        .replace("\n[params]", "\npacer_flows = 2\n[params]");
    for c in [ControllerKind::Fixed, ControllerKind::Reference] {
        let r = run("t_pacer_full.toml", &text, c, None);
        let k = &r.counters;
        assert_eq!(r.pacer_flows, 2);
        assert_eq!(k.pacer_max_flows, 2, "{c:?}");
        assert_eq!(k.pacer_waits, 2, "{c:?}: two flows wait");
        assert!(k.pacer_wait_ns > 0, "{c:?}");
        assert_eq!(
            r.flows_finished, 4,
            "{c:?}: the waiting flows run once slots free"
        );
        let t = sim_host::sim::text(&r);
        assert!(t.contains("2 flows waited for a slot"), "{t}");
    }
    // Without the limit nobody waits.
    let r = run(
        "t_pacer_full.toml",
        &text.replace("pacer_flows = 2\n", ""),
        ControllerKind::Fixed,
        None,
    );
    assert_eq!((r.counters.pacer_waits, r.counters.pacer_max_flows), (0, 4));
}

#[test]
fn a_pacer_flow_table_or_segment_it_cannot_hold_is_refused() {
    for (bad, key) in [
        ("pacer_flows = 0\n", "pacer_flows"),
        ("pacer_flows = 1025\n", "pacer_flows"),
        ("segment_bytes = 20000\n", "segment_bytes"),
        ("segment_bytes = 131072\n", "segment_bytes"),
        // serde names the line and the values it knows, not the key.
        (
            "pacer = \"float\"\n",
            "expected one of `fixed`, `reference`",
        ),
        // ns-3's arithmetic is a controller, not a pacer.
        ("pacer = \"ns3\"\n", "pacer"),
    ] {
        let text = HPCC_INCAST.replacen("\n[params]", &format!("\n{bad}[params]"), 1);
        let e = scenario::parse(&scenarios_dir().join("t_bad.toml"), &text)
            .err()
            .unwrap_or_else(|| panic!("{bad} was accepted"));
        let m = e.to_string();
        assert!(m.contains("t_bad.toml") && m.contains(key), "{bad}: {m}");
    }
}

#[test]
fn a_seed_gives_the_same_files_with_either_pacer() {
    for pacer in ["fixed", "reference"] {
        let text = LEAF_SPINE.replacen(
            "\n[topology]",
            &format!("\npacer = \"{pacer}\"\n[topology]"),
            1,
        );
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        let ra = run(
            "t_pacer_ls.toml",
            &text,
            ControllerKind::Fixed,
            Some(a.path()),
        );
        run(
            "t_pacer_ls.toml",
            &text,
            ControllerKind::Fixed,
            Some(b.path()),
        );
        assert!(ra.flows_finished > 20, "{pacer}: {}", ra.flows_finished);
        for f in [
            "t_pacer_leaf_spine_flows.csv",
            "t_pacer_leaf_spine_timeseries.csv",
        ] {
            let x = std::fs::read(a.path().join(f)).unwrap();
            let y = std::fs::read(b.path().join(f)).unwrap();
            assert!(
                !x.is_empty() && x == y,
                "{pacer}: {f} differs between two runs"
            );
        }
    }
}

/// Host 1 sends two long flows to host 0 (together near its line) while receiving two (its
/// port also carries their ACKs); a 2 kB flow from host 1 starts after 1 ms.
const BUSY_NIC: &str = r#"
name = "t_pacer_busy"
algorithm = "hpcc"
duration_ns = 1_500_000
[params]
base_rtt_ns = 13000
[topology]
kind = "star"
hosts = 4
host_rate_bps = 100_000_000_000
[[flows]]
kind = "long"
src = [1, 1]
dst = 0
[[flows]]
kind = "long"
src = [2, 3]
dst = 1
[[flows]]
kind = "incast"
src = [1]
dst = 2
size_bytes = 2000
start_ns = 1_000_000
"#;

#[test]
fn a_new_flow_on_a_nic_busy_with_acks_does_not_wait_behind_its_pacers_past() {
    // The port's ACKs take line time the pacer does not hand out; unless the pacer's line is
    // told (its line flow), its schedule falls behind the port by the ACKs' share and the new
    // flow, scheduled at `now`, waits behind every flow due in that past.
    for c in [ControllerKind::Fixed, ControllerKind::Reference] {
        let r = run("t_pacer_busy.toml", BUSY_NIC, c, None);
        assert!(
            r.counters.pacer_line_bytes > 100_000,
            "{c:?}: {:?}",
            r.counters
        );
        let b = r
            .slowdown
            .iter()
            .find(|b| b.flows == 1)
            .expect("the short flow finished");
        assert!(b.p99.unwrap() < 4.0, "{c:?}: slowdown {:?}", b.p99);
    }
}

#[test]
fn one_packet_segments_are_paced_per_packet_and_every_flow_gets_a_slot() {
    // TIMELY's ns-3 preset makes every packet a segment (1000 B: no pacer segment size); the
    // NIC paces such flows per packet, at their wire bytes, and never turns one away.
    let text = HPCC_INCAST
        .replace("algorithm = \"hpcc\"", "algorithm = \"timely\"")
        .replace("base_rtt_ns = 13000", "preset = \"ns3\"");
    for c in [ControllerKind::Fixed, ControllerKind::Reference] {
        let r = run("t_pacer_ns3_timely.toml", &text, c, None);
        assert_eq!(r.counters.pacer_refused, 0);
        assert_eq!(r.counters.pacer_waits, 0);
        assert_eq!(r.flows_finished, 2, "{c:?}: both flows finish");
        assert_eq!(
            r.counters.pacer_segments, r.counters.sent,
            "{c:?}: one pacer segment per packet"
        );
    }
}
