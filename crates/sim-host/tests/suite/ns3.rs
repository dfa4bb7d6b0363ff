//! The HPCC authors' ns-3 file formats: `--ns3-out` writes fct.txt, pfc.txt, qlen.txt,
//! topology.txt and flow.txt in them; `--ns3-topology` / `--ns3-flows` read the topology and
//! flow files, refusing what the engine cannot model with the file and the line.

use crate::common::root;
use cc_netsim::SimOpts;
use cc_netsim::ns3::{self, classify, parse_delay, parse_flows, parse_rate, parse_topology};
use cc_netsim::scenario::{self, TopoKind};
use sim_host::sim::run_file;
use std::path::{Path, PathBuf};
use std::process::Command;

fn fixture(name: &str) -> PathBuf {
    root().join("fixtures/ns3").join(name)
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Runs `scenario` with `--ns3-out` into a fresh directory, with the ns-3 inputs given.
fn run_ns3(
    scenario: &Path,
    topo: Option<&Path>,
    flows: Option<&Path>,
) -> (tempfile::TempDir, cc_netsim::Report) {
    let d = tempfile::tempdir().unwrap();
    let o = SimOpts {
        ns3_out: Some(d.path().to_path_buf()),
        ns3_topology: topo.map(Path::to_path_buf),
        ns3_flows: flows.map(Path::to_path_buf),
        ..SimOpts::default()
    };
    let (r, _) = run_file(scenario, &o).unwrap_or_else(|e| panic!("{e}"));
    assert!(r.violations.is_empty(), "{:?}", r.violations);
    (d, r)
}

fn any_host(_: u32) -> bool {
    true
}

#[test]
fn ns3_units_parse_as_ns3_writes_them() {
    for (s, bps) in [
        ("100Gbps", 100_000_000_000),
        ("400Gbps", 400_000_000_000),
        ("25Gb/s", 25_000_000_000),
        ("1.5Mbps", 1_500_000),
        ("10Kbps", 10_000),
        ("1GBps", 8_000_000_000),
        ("999bps", 999),
    ] {
        assert_eq!(parse_rate(s), Ok(bps), "{s}");
    }
    for (s, ns) in [
        ("0.001ms", 1000),
        ("1000ns", 1000),
        ("1us", 1000),
        ("2s", 2_000_000_000),
    ] {
        assert_eq!(parse_delay(s), Ok(ns), "{s}");
    }
    for bad in ["100", "100Gbit", "Gbps", "1.2.3Gbps", "0Gbps", "0.5bps"] {
        assert!(parse_rate(bad).is_err(), "{bad}");
    }
    for bad in ["1", "1min", "ms", "0.0001ns", "1500ps"] {
        assert!(parse_delay(bad).is_err(), "{bad}");
    }
}

#[test]
fn the_fixture_pair_parses_into_a_leaf_spine() {
    let p = fixture("topology.txt");
    let t = parse_topology(&p, &read(&p)).unwrap();
    assert_eq!((t.nodes, t.switches.len(), t.links.len()), (12, 4, 12));
    // "0.001ms", "1us" and "1000ns" are the same delay.
    assert!(t.links.iter().all(|l| l.delay_ns == 1000));
    let s = classify(&p, &t).unwrap();
    assert_eq!(s.kind, TopoKind::LeafSpine);
    assert_eq!((s.hosts_per_edge.clone(), s.spines), (vec![4, 4], 2));
    assert_eq!(
        (s.host_rate_bps, s.fabric),
        (100_000_000_000, Some((400_000_000_000, 1000)))
    );
    // Our hosts 0..8 are ns-3's 1..4 (leaf 0) and 6..9 (leaf 5); then the leaves, the spines.
    assert_eq!(s.ns3_id, vec![1, 2, 3, 4, 6, 7, 8, 9, 0, 5, 10, 11]);
    let f = fixture("flow.txt");
    let flows = parse_flows(&f, &read(&f), &any_host).unwrap();
    assert_eq!(flows.len(), 8);
    assert_eq!(
        (flows[2].src, flows[2].dst, flows[2].size, flows[2].start_ns),
        (3, 6, 30000, 2_000_001_000)
    );
    assert_eq!(flows[7].dport, 200);
}

/// The fixture pair's fct.txt, as the run writes it: `sip dip sport dport size start_ns
/// fct_ns standalone_fct_ns`, addresses in hex as ns-3's `node_id_to_ip` makes them
/// (11.0.x.1 for node x), in order of completion; HPCC with T the topology's longest base RTT
/// (8234 ns) and the authors' maxStage 0, paced by cc-pacer. Start times are read as ns-3
/// reads them, truncated to the ns: the file's `2.000005` is the `double` 2.00000499999… s.
const GOLDEN_FCT: &str = "\
0b000101 0b000601 10000 100 2000 2000000000 8320 8370
0b000301 0b000601 10000 100 30000 2000001000 10820 10753
0b000601 0b000101 10000 100 64000 2000004999 15719 13647
0b000801 0b000101 10000 200 100000 2000010000 33477 16712
0b000901 0b000101 10000 200 100000 2000010000 35008 16712
0b000701 0b000101 10000 200 100000 2000010000 35124 16712
0b000201 0b000701 10000 100 500000 2000000000 54266 50760
0b000401 0b000901 10000 100 1000000 2000001999 100385 93320
";

#[test]
fn fct_txt_lines_are_in_ns3_s_format() {
    let (d, r) = run_ns3(
        &fixture("leaf_spine.toml"),
        Some(&fixture("topology.txt")),
        Some(&fixture("flow.txt")),
    );
    let fct = read(&d.path().join("fct.txt"));
    assert_eq!(fct, GOLDEN_FCT);
    let n = r.ns3.as_ref().unwrap();
    assert_eq!((n.fct_lines, n.unfinished_not_written), (8, 0));
    // The standalone FCT by hand for the first flow: 2000 B over leaf 0 -> spine -> leaf 5,
    // four 1 µs links: base RTT 2·4000 + 2·⌊1000·8/100⌋ + 2·⌊1000·8/400⌋ = 8200 ns (MTU 1000),
    // plus (2000 + 2·64)·8/100 = 170 ns at the 100 Gb/s bottleneck.
    assert_eq!(ns3::node_ip(1), 0x0b00_0101);
    assert!(fct.starts_with("0b000101 0b000601 10000 100 2000 2000000000 8320 8370\n"));
}

#[test]
fn the_authors_awk_filter_reads_our_fct_txt() {
    // fct_analysis.py's own filter (its `-t 0` case, T = 3 s): slowdown and size of the flows
    // to port 100 that finish before T.
    let (d, _) = run_ns3(
        &fixture("leaf_spine.toml"),
        Some(&fixture("topology.txt")),
        Some(&fixture("flow.txt")),
    );
    let prog = "{if ($4==100 && $6+$7<3000000000) {slow=$7/$8;print slow<1?1:slow, $5}}";
    let out = match Command::new("awk")
        .arg(prog)
        .arg(d.path().join("fct.txt"))
        .output()
    {
        Ok(o) => o,
        Err(e) => panic!("awk (Debian's base system has it): {e}"),
    };
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let rows: Vec<(f64, u64)> = text
        .lines()
        .map(|l| {
            let (s, b) = l.split_once(' ').unwrap();
            (s.parse().unwrap(), b.parse().unwrap())
        })
        .collect();
    assert_eq!(rows.len(), 5, "{text}");
    assert!(rows.iter().all(|&(s, _)| s >= 1.0));
    assert_eq!(rows[0], (1.0, 2000), "the clamped slowdown of 8320/8370");
}

#[test]
fn ns3_files_round_trip_a_scenario_s_topology_and_flows() {
    for name in ["hpcc_incast_7to1.toml", "fixture_hpcc_fabric.toml"] {
        let sc = root().join("fixtures/scenarios").join(name);
        let (a, ra) = run_ns3(&sc, None, None);
        let (topo, flows) = (a.path().join("topology.txt"), a.path().join("flow.txt"));
        // The topology read back is the scenario's.
        let t = parse_topology(&topo, &read(&topo)).unwrap();
        let s = classify(&topo, &t).unwrap();
        let l = scenario::load(&sc).unwrap();
        let want = &l.sc.topology;
        assert_eq!(s.kind, want.kind, "{name}");
        assert_eq!(s.host_rate_bps, want.host_rate_bps, "{name}");
        assert_eq!(s.host_delay_ns, want.host_delay_ns, "{name}");
        assert_eq!(s.hosts_per_edge.iter().sum::<u32>(), l.hosts, "{name}");
        assert_eq!(
            s.ns3_id,
            (0..t.nodes).collect::<Vec<_>>(),
            "our node ids are the ns-3 ids"
        );
        // Every sized flow is in flow.txt, in order of start.
        let fl = parse_flows(&flows, &read(&flows), &|h| h < l.hosts).unwrap();
        assert_eq!(fl.len(), ra.flows_sized, "{name}");
        // Read back, the same network and the same flows are written again.
        let (b, rb) = run_ns3(&sc, Some(&topo), Some(&flows));
        for f in ["topology.txt", "flow.txt"] {
            assert_eq!(
                read(&a.path().join(f)),
                read(&b.path().join(f)),
                "{name}: {f}"
            );
        }
        assert_eq!(rb.flows_sized, ra.flows_sized, "{name}");
    }
}

#[test]
fn unfinished_flows_are_counted_not_written() {
    let d = tempfile::tempdir().unwrap();
    let sc = d.path().join("short.toml");
    let text = read(&fixture("leaf_spine.toml")).replace("2_004_000_000", "2_000_020_000");
    std::fs::write(&sc, text).unwrap();
    let (o, r) = run_ns3(
        &sc,
        Some(&fixture("topology.txt")),
        Some(&fixture("flow.txt")),
    );
    let n = r.ns3.unwrap();
    let lines = read(&o.path().join("fct.txt")).lines().count();
    assert_eq!(lines, n.fct_lines);
    assert!(n.unfinished_not_written > 0);
    assert_eq!(n.fct_lines + n.unfinished_not_written, 8);
    assert_eq!(read(&o.path().join("flow.txt")).lines().count(), 9);
}

#[test]
fn pfc_pauses_are_written_as_ns3_s_pause_and_resume_lines() {
    let sc = root().join("fixtures/scenarios/hpcc_incast_16to1_pfc.toml");
    let (d, r) = run_ns3(&sc, None, None);
    let n = r.ns3.unwrap();
    let text = read(&d.path().join("pfc.txt"));
    assert_eq!(text.lines().count(), n.pfc_lines);
    assert!(n.pfc_lines > 0, "the PFC incast pauses");
    let mut last = 0;
    for l in text.lines() {
        let v: Vec<u64> = l.split(' ').map(|x| x.parse().unwrap()).collect();
        // time node nodeType ifIndex type: hosts (type 0) and their one interface (1) are
        // paused by the switch; interface 0 is ns-3's loopback.
        assert_eq!(v.len(), 5, "{l}");
        assert!(v[0] >= last);
        last = v[0];
        assert!(v[2] <= 1 && v[3] >= 1 && v[4] <= 1, "{l}");
    }
    assert_eq!(
        text.lines().filter(|l| l.ends_with(" 1")).count(),
        r.counters.pfc_pauses as usize,
        "one pause line per pause frame"
    );
    let q = read(&d.path().join("qlen.txt"));
    assert!(q.starts_with("time: 0\n"));
    assert_eq!(q.matches("time: ").count(), n.qlen_dumps);
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn bad_ns3_lines_name_file_and_line() {
    let d = tempfile::tempdir().unwrap();
    for (text, want) in [
        ("3 1 2\n0\n0 1 100Gbps 1us 0\n", "line 3: the file ends"),
        (
            "3 1 2\n0\n0 1 100Gbps 1us 0\n0 2 100Gbit 1us 0\n",
            "line 4: rate \"100Gbit\"",
        ),
        (
            "3 1 2\n0\n0 1 100Gbps 1us 0\n0 2 100Gbps 1 0\n",
            "line 4: delay",
        ),
        (
            "3 1 2\n0\n0 1 100Gbps 1us 0\n0 3 100Gbps 1us 0\n",
            "line 4: link destination 3: no such node",
        ),
        (
            "3 1 2\n0\n0 1 100Gbps 1us 0\n0 2 100Gbps 1us 0.001\n",
            "line 4: error rate 0.001: the engine's links do not drop",
        ),
        (
            "3 1 2\n0\n0 1 100Gbps 1us 0\n1 0 100Gbps 1us 0\n",
            "line 4: a second link",
        ),
        (
            "3 1 2\n0\n0 1 100Gbps 1us 0\n0 0 100Gbps 1us 0\n",
            "line 4: a link from node 0",
        ),
        ("3 2 2\n0\n0\n", "line 3: switch 0 is listed twice"),
        (
            "3 1 2\n0\n0 1 100Gbps 1us 0\n0 2 100Gbps 1us 0\nx\n",
            "line 5: \"x\" after the 2 links",
        ),
        ("three 1 2\n", "line 1: the node count \"three\""),
    ] {
        let p = write(d.path(), "topology.txt", text);
        let e = parse_topology(&p, text).unwrap_err();
        assert!(
            e.starts_with(&format!("{}: ", p.display())) && e.contains(want),
            "{text:?}: {e}"
        );
    }
    for (text, want) in [
        ("2\n1 2 3 100 1000 2\n", "line 2: the file ends"),
        (
            "1\n1 1 3 100 1000 2\n",
            "line 2: source and destination are both 1",
        ),
        ("1\n1 2 3 100 0 2\n", "line 2: size 0"),
        (
            "1\n1 2 9 100 1000 2\n",
            "line 2: priority group 9 is above 7",
        ),
        (
            "1\n1 2 3 70000 1000 2\n",
            "line 2: destination port 70000 is above 65535",
        ),
        ("1\n1 2 3 100 1000 soon\n", "line 2: start time \"soon\""),
        ("1\n1 2 3 100 1000 -1\n", "line 2: start time \"-1\""),
        (
            "2\n1 2 3 100 1000 2\n1 2 3 100 1000 1\n",
            "line 3: start time 1 s is before",
        ),
        (
            "2\n1 2 3 100 1000 2\n1 2 0 100 1000 2\n",
            "line 3: priority group 0, line 2 has 3",
        ),
        (
            "1\n1 9 3 100 1000 2\n",
            "line 2: destination 9 is not a host",
        ),
        (
            "1\n1 2 3 100 1000 2\n1 2\n",
            "line 3: \"1\" after the 1 flows",
        ),
    ] {
        let p = write(d.path(), "flow.txt", text);
        let e = parse_flows(&p, text, &|h| h < 8).unwrap_err();
        assert!(
            e.starts_with(&format!("{}: ", p.display())) && e.contains(want),
            "{text:?}: {e}"
        );
    }
}

#[test]
fn ns3_topologies_the_engine_cannot_route_are_refused() {
    let d = tempfile::tempdir().unwrap();
    for (text, want) in [
        // A ring of three switches with a host each.
        (
            "6 3 6\n0 1 2\n0 3 100Gbps 1us 0\n1 4 100Gbps 1us 0\n2 5 100Gbps 1us 0\n\
             0 1 100Gbps 1us 0\n1 2 100Gbps 1us 0\n2 0 100Gbps 1us 0\n",
            "not a star, a dumbbell, a two-tier leaf-spine",
        ),
        // Host links at two rates.
        (
            "3 1 2\n0\n0 1 100Gbps 1us 0\n0 2 25Gbps 1us 0\n",
            "line 4: host link at 25000000000 b/s",
        ),
        // A host with two links.
        (
            "4 2 3\n0 1\n0 2 100Gbps 1us 0\n1 2 100Gbps 1us 0\n0 3 100Gbps 1us 0\n",
            "line 4: host 2 has a second link (the first is on line 3)",
        ),
        // A host without a link.
        ("3 1 1\n0\n0 1 100Gbps 1us 0\n", "host 2 has no link"),
        // Leaves with different host counts.
        (
            "6 3 5\n0 1 2\n0 3 100Gbps 1us 0\n0 4 100Gbps 1us 0\n1 5 100Gbps 1us 0\n\
             0 2 400Gbps 1us 0\n1 2 400Gbps 1us 0\n",
            "not a star",
        ),
    ] {
        let p = write(d.path(), "topology.txt", text);
        let t = parse_topology(&p, text).unwrap_or_else(|e| panic!("{e}"));
        let e = classify(&p, &t).unwrap_err();
        assert!(
            e.starts_with(&format!("{}: line ", p.display())) && e.contains(want),
            "{text:?}: {e}"
        );
    }
}

#[test]
fn a_bad_ns3_file_exits_2_naming_it() {
    let d = tempfile::tempdir().unwrap();
    let run_with_flows = |f: &Path| {
        Command::new(env!("CARGO_BIN_EXE_sim-host"))
            .arg("sim")
            .arg(fixture("leaf_spine.toml"))
            .arg("--ns3-topology")
            .arg(fixture("topology.txt"))
            .arg("--ns3-flows")
            .arg(f)
            .output()
            .unwrap()
    };
    let f = write(d.path(), "flow.txt", "1\n1 6 3 100 1000 2x\n");
    let out = run_with_flows(&f);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("{}: line 2: start time \"2x\"", f.display())),
        "{err}"
    );
    // A flow after the scenario's end is refused, not dropped.
    let f = write(d.path(), "late.txt", "1\n1 6 3 100 1000 9\n");
    let out = run_with_flows(&f);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("line 2: the flow starts at"));
}

#[test]
fn ns3_out_never_overwrites_an_ns3_input() {
    let d = tempfile::tempdir().unwrap();
    let f = write(d.path(), "flow.txt", &read(&fixture("flow.txt")));
    let o = SimOpts {
        ns3_out: Some(d.path().to_path_buf()),
        ns3_topology: Some(fixture("topology.txt")),
        ns3_flows: Some(f.clone()),
        ..SimOpts::default()
    };
    assert!(run_file(&fixture("leaf_spine.toml"), &o).is_err());
    assert_eq!(read(&f), read(&fixture("flow.txt")));
    assert!(!d.path().join("fct.txt").exists(), "whole or not at all");
}
