//! `sim-host sim`: the setup the HPCC authors simulated — `T` and the initial window from the
//! topology's longest base RTT, HPCC's presets, the fat tree and its routes.

use crate::common::{load, scenarios_dir};

use cc_netsim::scenario;
use cc_netsim::{SimOpts, paths};
use cc_trace::Param;
use sim_host::sim::run_loaded;
use std::path::{Path, PathBuf};

fn set(k: &str, v: &str) -> Param {
    Param {
        key: k.into(),
        value: v.into(),
        source: PathBuf::from("--set"),
        line: None,
    }
}

/// An HPCC scenario on `topology` (TOML lines) with `params`, one 20 KB flow 0 → 1.
fn hpcc(params: &str, topology: &str) -> String {
    format!(
        r#"
name = "t_topo"
algorithm = "hpcc"
duration_ns = 100_000
[params]
{params}
[topology]
{topology}
host_rate_bps = 100_000_000_000
[[flows]]
kind = "incast"
src = [1]
dst = 0
size_bytes = 20_000
"#
    )
}

const STAR: &str = "kind = \"star\"\nhosts = 8";
const LEAF_SPINE: &str = "kind = \"leaf_spine\"\nleaves = 4\nspines = 2\nhosts_per_leaf = 8\n\
                          fabric_rate_bps = 400_000_000_000";

/// The base RTT of a full 1000-byte packet and its ACK, by hand, with INT (2 bytes of header
/// and 8 per hop stamped before the link): star, 100 Gb/s, 1 µs links:
/// data 1066 B → 85.28 ns, 1074 B → 85.92 ns; ACK 64 + 2 + 8 = 74 B → 5.92 ns per link;
/// propagation 4 × 1000 ns: 4183.04 ns, T = 4184 ns; BDP 4184 ns · 100 Gb/s = 52 300 B.
/// Leaf-spine across a spine (100, 400, 400, 100 Gb/s): data 1066 B @ 100 G 85.28, 1074 @ 400 G
/// 21.48, 1082 @ 400 G 21.64, 1090 @ 100 G 87.2; ACK 90 B: 7.2 + 1.8 + 1.8 + 7.2; propagation
/// 8000: 8233.6 ns, T = 8234 ns. Within a leaf it is the star's 4183.04 ns.
#[test]
fn derived_t_is_the_longest_base_rtt_of_the_topology() {
    let star = paths::of(&load("t.toml", &hpcc("", STAR)));
    assert_eq!(star.classes.len(), 1);
    assert_eq!(star.classes[0].base_rtt_ps, 4_183_040);
    assert_eq!(star.classes[0].pairs, 56);
    assert_eq!(star.classes[0].ns3_base_rtt_ns, 4_160);
    assert_eq!(
        (star.longest_rtt_ns, star.largest_bdp_bytes),
        (4_184, 52_300)
    );

    let ls = paths::of(&load("t.toml", &hpcc("", LEAF_SPINE)));
    let rtts: Vec<(u64, u64, u32)> = ls
        .classes
        .iter()
        .map(|c| (c.base_rtt_ps, c.pairs, c.links))
        .collect();
    // 4 leaves × 8 · 7 pairs within a leaf; 32 · 24 across.
    assert_eq!(rtts, [(4_183_040, 224, 2), (8_233_600, 768, 4)]);
    assert_eq!(ls.longest_rtt_ns, 8_234);
    // ns-3's formula: 2 · 4000 + 80 + 20 + 20 + 80.
    assert_eq!(ls.classes[1].ns3_base_rtt_ns, 8_200);
}

fn run(l: &scenario::Loaded, set: Vec<Param>) -> cc_netsim::Report {
    let o = SimOpts {
        set,
        ..SimOpts::default()
    };
    run_loaded(l, &o).unwrap_or_else(|e| panic!("{e}")).0
}

fn param<'a>(r: &'a cc_netsim::Report, key: &str) -> (&'a str, &'a str) {
    let p = r
        .params
        .iter()
        .find(|p| p.key == key)
        .unwrap_or_else(|| panic!("no {key}"));
    (&p.value, &p.origin)
}

#[test]
fn t_defaults_to_the_topology_and_a_given_t_is_applied_and_its_mismatch_warned() {
    // Not given: the longest base RTT, no warning.
    let r = run(&load("t.toml", &hpcc("", LEAF_SPINE)), vec![]);
    assert_eq!(
        param(&r, "base_rtt_ns"),
        ("8234", "topology: the longest base RTT of its paths")
    );
    let p = r.paths.as_ref().unwrap();
    assert_eq!(
        (p.t_ns, p.t_origin.as_deref()),
        (
            Some(8_234),
            Some("topology: the longest base RTT of its paths")
        )
    );
    assert_eq!(p.warning, None);
    // Given in the file: applied, and the mismatch warned with the window it gives.
    let l = load("t.toml", &hpcc("base_rtt_ns = 13000", LEAF_SPINE));
    let r = run(&l, vec![]);
    assert_eq!(param(&r, "base_rtt_ns").0, "13000");
    assert!(param(&r, "base_rtt_ns").1.ends_with("[params]"));
    let w = r
        .paths
        .as_ref()
        .unwrap()
        .warning
        .clone()
        .expect("a warning");
    assert!(w.contains("base_rtt_ns = 13000"), "{w}");
    assert!(w.contains("8234 ns"), "{w}");
    // 13 µs at 100 Gb/s = 162 500 B against 8234 ns · 100 Gb/s = 102 925 B: 1.58×.
    assert!(w.contains("162500 B") && w.contains("1.58×"), "{w}");
    // --set wins over the file; equal to the topology's: no warning.
    let r = run(&l, vec![set("base_rtt_ns", "8234")]);
    assert_eq!(param(&r, "base_rtt_ns"), ("8234", "--set"));
    assert_eq!(r.paths.as_ref().unwrap().warning, None);
    // The text report prints the classes, the T in force and the warning.
    let r = run(&l, vec![]);
    let text = sim_host::sim::text(&r);
    assert!(text.contains("via a spine"), "{text}");
    assert!(text.contains("T in force: 13000 ns"), "{text}");
    assert!(text.contains("  warning: base_rtt_ns = 13000"), "{text}");
}

#[test]
fn the_authors_preset_is_the_default_and_the_paper_preset_sets_exactly_its_values() {
    let l = load("t.toml", &hpcc("", STAR));
    let r = run(&l, vec![]);
    assert_eq!(param(&r, "preset"), ("authors", "default"));
    assert_eq!(param(&r, "max_stage"), ("0", "default: preset authors"));
    assert_eq!(param(&r, "eta"), ("0.95", "default: preset authors"));
    let base: Vec<(String, String)> = r
        .params
        .iter()
        .map(|p| (p.key.clone(), p.value.clone()))
        .collect();
    let r = run(&l, vec![set("preset", "paper")]);
    assert_eq!(param(&r, "preset"), ("paper", "--set"));
    assert_eq!(param(&r, "max_stage"), ("5", "default: preset paper"));
    // Every other value is the default's.
    let paper: Vec<(String, String)> = r
        .params
        .iter()
        .map(|p| (p.key.clone(), p.value.clone()))
        .collect();
    let differ: Vec<&str> = base
        .iter()
        .zip(&paper)
        .filter(|(a, b)| a != b)
        .map(|(a, _)| a.0.as_str())
        .collect();
    assert_eq!(differ, ["max_stage", "preset"]);
    // A key given wins over the preset's.
    let l = load("t.toml", &hpcc("preset = \"paper\"\nmax_stage = 2", STAR));
    let r = run(&l, vec![]);
    assert!(param(&r, "preset").1.ends_with("[params]"));
    assert!(param(&r, "max_stage").1.ends_with("[params]"));
    assert_eq!(param(&r, "max_stage").0, "2");
}

#[test]
fn an_unknown_preset_is_refused_naming_where_it_was_given() {
    let l = load("t.toml", &hpcc("preset = \"ns3\"", STAR));
    let e = run_loaded(&l, &SimOpts::default())
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("t.toml: key `params.preset`"), "{e}");
    assert!(
        e.contains("\"ns3\" is not an hpcc preset (authors, paper)"),
        "{e}"
    );
    let l = load("t.toml", &hpcc("", STAR));
    let o = SimOpts {
        set: vec![set("preset", "Paper")],
        ..SimOpts::default()
    };
    let e = run_loaded(&l, &o).err().unwrap().to_string();
    assert!(e.starts_with("--set preset: \"Paper\""), "{e}");
}

#[test]
fn recorded_traces_carry_the_preset_values_not_the_preset() {
    let dir = std::env::temp_dir().join(format!("topo-rec-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let l = load("t.toml", &hpcc("", STAR));
    let o = SimOpts {
        record: Some(dir.clone()),
        ..SimOpts::default()
    };
    let (r, _) = run_loaded(&l, &o).unwrap_or_else(|e| panic!("{e}"));
    let csv = r
        .files
        .iter()
        .find(|f| f.ends_with(".csv"))
        .expect("a recorded trace");
    let text = std::fs::read_to_string(csv).unwrap();
    assert!(text.contains("# set max_stage=0"), "{text}");
    assert!(text.contains("# set base_rtt_ns=4184"), "{text}");
    assert!(!text.contains("preset"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

const FAT: &str = "kind = \"fat_tree\"\nfabric_rate_bps = 400_000_000_000";

/// The paper's tree (every shape key at its default): 320 hosts. Within a ToR the star's
/// 4183.04 ns; within a pod the leaf-spine's 8233.6 ns; across pods (100, 400 × 4, 100 Gb/s)
/// data 1066 B @ 100 G 85.28, 1074/1082/1090/1098 B @ 400 G 21.48 + 21.64 + 21.8 + 21.96, 1106 B
/// @ 100 G 88.48; ACK 64 + 2 + 5 · 8 = 106 B: 2 · 8.48 + 4 · 2.12; propagation 12 000:
/// 12 286.08 ns, T = 12 287 ns; BDP 12 287 ns · 100 Gb/s = 153 587 B.
#[test]
fn fat_tree_t_is_the_base_rtt_across_pods() {
    let l = load("t.toml", &hpcc("", FAT));
    assert_eq!(l.hosts, 320);
    let p = paths::of(&l);
    let got: Vec<(&str, u64, u32, u64, u64)> = p
        .classes
        .iter()
        .map(|c| (c.name, c.pairs, c.links, c.base_rtt_ps, c.ns3_base_rtt_ns))
        .collect();
    assert_eq!(
        got,
        [
            ("same ToR", 20 * 16 * 15, 2, 4_183_040, 4_160),
            ("same pod, via aggregation", 320 * 48, 4, 8_233_600, 8_200),
            ("across pods, via a core", 320 * 256, 6, 12_286_080, 12_240),
        ]
    );
    assert_eq!(p.classes.iter().map(|c| c.pairs).sum::<u64>(), 320 * 319);
    assert_eq!((p.longest_rtt_ns, p.largest_bdp_bytes), (12_287, 153_587));
}

fn sim_of(l: &scenario::Loaded) -> cc_netsim::engine::Sim {
    let setup = cc_netsim::ctrl::Setup::build(l, &[]).unwrap();
    cc_netsim::engine::Sim::new(
        l,
        setup,
        scenario::ControllerKind::Fixed,
        1,
        cc_netsim::record::Recorder::none(),
    )
}

#[test]
fn fat_tree_routes_reach_every_host_through_the_switches_of_its_path() {
    let l = load("t.toml", &hpcc("", FAT));
    let sim = sim_of(&l);
    let f = scenario::FatTree::PAPER;
    // Switch node ids: hosts 0..320, ToRs 320..340, aggregation 340..360, cores 360..376.
    let tier = |n: u32| match n {
        320..340 => 't',
        340..360 => 'a',
        360..376 => 'c',
        _ => 'h',
    };
    for src in 0..320 {
        for dst in (0..320).filter(|&d| d != src) {
            for flow in [0, 7, 1000 + src * 320 + dst] {
                let w = sim.walk(src, dst, flow);
                assert_eq!(w.last(), Some(&dst), "{src} -> {dst} flow {flow}: {w:?}");
                let tiers: String = w[..w.len() - 1].iter().map(|&n| tier(n)).collect();
                let want = if f.tor_of(src) == f.tor_of(dst) {
                    "t"
                } else if f.pod_of(src) == f.pod_of(dst) {
                    "tat"
                } else {
                    "tacat"
                };
                assert_eq!(tiers, want, "{src} -> {dst}: {w:?}");
                assert_eq!(sim.shape_of(src, dst).1, want.len() as u64);
                // The first ToR is the source's, the last the destination's.
                assert_eq!(w[0], 320 + f.tor_of(src));
                assert_eq!(w[w.len() - 2], 320 + f.tor_of(dst));
            }
        }
    }
    // ECMP by flow spreads host 0's flows to pod 1 over every aggregation switch of its pod
    // and every core.
    let mut aggs = std::collections::BTreeSet::new();
    let mut cores = std::collections::BTreeSet::new();
    for flow in 0..512 {
        let w = sim.walk(0, 100, flow);
        aggs.insert(w[1]);
        cores.insert(w[2]);
    }
    assert_eq!(aggs.into_iter().collect::<Vec<_>>(), [340, 341, 342, 343]);
    assert_eq!(cores.len(), 16);
}

/// The authors' `mix/fat.txt` layout, made from its rule (not copied): the counts line, the
/// switch ids, then hosts to their ToR, every ToR to each aggregation switch of its pod, every
/// aggregation switch to each core of its plane.
fn fat_txt() -> String {
    let mut links = Vec::new();
    for h in 0..320 {
        links.push(format!("{h} {} 100Gbps 1000ns 0.000000", 320 + h / 16));
    }
    for t in 0..20 {
        for i in 0..4 {
            links.push(format!(
                "{} {} 400Gbps 1000ns 0.000000",
                320 + t,
                340 + (t / 4) * 4 + i
            ));
        }
    }
    for a in 0..20 {
        for j in 0..4 {
            links.push(format!(
                "{} {} 400Gbps 1000ns 0.000000",
                340 + a,
                360 + (a % 4) * 4 + j
            ));
        }
    }
    let sw: Vec<String> = (320..376).map(|s: u32| s.to_string()).collect();
    format!(
        "376 56 {}\n{}\n{}\n",
        links.len(),
        sw.join(" "),
        links.join("\n")
    )
}

#[test]
fn the_authors_fat_txt_layout_is_read_as_the_paper_s_fat_tree() {
    use cc_netsim::ns3::{classify, parse_topology};
    let p = Path::new("fat.txt");
    let text = fat_txt();
    let t = parse_topology(p, &text).unwrap();
    let s = classify(p, &t).unwrap();
    assert_eq!(s.kind, scenario::TopoKind::FatTree);
    assert_eq!(s.fat, Some(scenario::FatTree::PAPER));
    assert_eq!(
        s.ns3_id,
        (0..376).collect::<Vec<_>>(),
        "our ids are fat.txt's"
    );
    assert_eq!((s.host_rate_bps, s.host_delay_ns), (100_000_000_000, 1000));
    assert_eq!(s.fabric, Some((400_000_000_000, 1000)));
    // One aggregation-to-core link moved to another plane's core: no longer that tree.
    let broken = text.replace("340 360 400Gbps", "340 364 400Gbps");
    let t = parse_topology(p, &broken).unwrap();
    let e = classify(p, &t).unwrap_err();
    assert!(e.contains("three-tier fat tree"), "{e}");
}

/// A small fat tree (2 pods of 2 ToRs, 2 planes of 2 cores, 2 hosts per ToR) with Poisson
/// traffic: written as ns-3 files and read back, the same network and flows come out.
#[test]
fn a_fat_tree_round_trips_through_the_ns3_files() {
    let d = std::env::temp_dir().join(format!("topo-ns3-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    let sc = d.join("fat.toml");
    let cdf = scenarios_dir().join("cdf/hadoop.cdf");
    std::fs::write(
        &sc,
        format!(
            "name = \"t_fat\"\nalgorithm = \"hpcc\"\nduration_ns = 100_000\n[topology]\n{FAT}\n\
             pods = 2\ntors_per_pod = 2\naggs_per_pod = 2\ncores_per_agg = 2\nhosts_per_tor = 2\n\
             host_rate_bps = 100_000_000_000\n[[flows]]\nkind = \"poisson\"\nload = 0.5\n\
             cdf = \"{}\"\nstop_ns = 50_000\n",
            cdf.display()
        ),
    )
    .unwrap();
    let run = |out: &str, topo: Option<PathBuf>, flows: Option<PathBuf>| {
        let o = SimOpts {
            ns3_out: Some(d.join(out)),
            ns3_topology: topo,
            ns3_flows: flows,
            ..SimOpts::default()
        };
        let (r, _) = sim_host::sim::run_file(&sc, &o).unwrap_or_else(|e| panic!("{e}"));
        assert!(r.violations.is_empty(), "{:?}", r.violations);
        r
    };
    let a = run("a", None, None);
    assert!(a.flows_sized > 0);
    let b = run(
        "b",
        Some(d.join("a/topology.txt")),
        Some(d.join("a/flow.txt")),
    );
    assert_eq!(
        b.ns3
            .as_ref()
            .unwrap()
            .inputs
            .as_ref()
            .unwrap()
            .shape
            .as_deref(),
        Some("fat_tree of 8 hosts")
    );
    for f in ["topology.txt", "flow.txt"] {
        let read = |p: PathBuf| std::fs::read_to_string(p).unwrap();
        assert_eq!(read(d.join("a").join(f)), read(d.join("b").join(f)), "{f}");
    }
    assert_eq!(a.flows_sized, b.flows_sized);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn fat_tree_keys_default_to_the_paper_s_tree_and_are_refused_on_other_kinds() {
    let l = load("t.toml", &hpcc("", "kind = \"fat_tree\"\npods = 3"));
    assert_eq!(l.hosts, 3 * 4 * 16);
    assert_eq!(
        l.sc.topology.fat_tree(),
        scenario::FatTree {
            pods: 3,
            ..scenario::FatTree::PAPER
        }
    );
    let e = scenario::parse(
        &scenarios_dir().join("t.toml"),
        &hpcc("", "kind = \"star\"\nhosts = 4\nhosts_per_tor = 2"),
    )
    .unwrap_err();
    assert_eq!(e.key, "topology.hosts_per_tor");
    assert!(e.msg.contains("does not apply to kind Star"), "{}", e.msg);
    for (k, v, want) in [
        ("pods", "1", "too small (at least 2)"),
        ("cores_per_agg", "0", "too small (at least 1)"),
        ("hosts_per_tor", "2000", "at most 1024"),
        ("spines", "2", "does not apply to kind FatTree"),
    ] {
        let e = scenario::parse(
            &scenarios_dir().join("t.toml"),
            &hpcc("", &format!("kind = \"fat_tree\"\n{k} = {v}")),
        )
        .unwrap_err();
        assert_eq!(e.key, format!("topology.{k}"));
        assert!(e.msg.contains(want), "{k}: {}", e.msg);
    }
}

/// A TIMELY scenario on a 10 Gb/s star with `params` (the default 16 KB segments: a
/// `segment_bytes` given would be refused under `preset = "ns3"`, which sets its own).
fn timely(params: &str) -> String {
    format!(
        r#"
name = "t_timely"
algorithm = "timely"
duration_ns = 100_000
[params]
{params}
[topology]
kind = "star"
hosts = 3
host_rate_bps = 10_000_000_000
[[flows]]
kind = "long"
src = [1]
dst = 0
"#
    )
}

fn cx(now_ns: u64) -> cc_netsim::cc::Cx<'static> {
    cc_netsim::cc::Cx {
        now_ps: now_ns * 1_000,
        flow: 0,
        src: 1,
        rec: None,
    }
}

#[test]
fn the_ns3_timely_preset_sets_exactly_its_values() {
    let l = load("t.toml", &timely(""));
    let base = run(&l, vec![]);
    assert_eq!(param(&base, "preset"), ("paper", "default"));
    assert!(base.params.iter().all(|p| p.key != "segment_bytes"));
    let ns3 = run(&l, vec![set("preset", "ns3")]);
    assert_eq!(param(&ns3, "preset"), ("ns3", "--set"));
    assert_eq!(
        param(&ns3, "min_rate_bps"),
        ("1000000000", "default: preset ns3")
    );
    assert_eq!(
        param(&ns3, "segment_bytes"),
        (
            "1000",
            "default: preset ns3: mtu_bytes, every packet paced alone"
        )
    );
    // Every other replay key keeps its value.
    for p in &base.params {
        if !["min_rate_bps", "preset"].contains(&p.key.as_str()) {
            assert_eq!(param(&ns3, &p.key), (p.value.as_str(), p.origin.as_str()));
        }
    }
    // A key given wins over the preset's; a bad preset is refused.
    let l = load(
        "t.toml",
        &timely("preset = \"ns3\"\nmin_rate_bps = 500_000_000"),
    );
    assert_eq!(
        run(&l, vec![])
            .params
            .iter()
            .find(|p| p.key == "min_rate_bps")
            .unwrap()
            .value,
        "500000000"
    );
    let l = load("t.toml", &timely("preset = \"authors\""));
    let e = run_loaded(&l, &SimOpts::default())
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("key `params.preset`: \"authors\" is not a timely preset (paper, ns3)"),
        "{e}"
    );
}

#[test]
fn the_ns3_timely_preset_paces_every_packet_and_updates_once_per_round_trip() {
    use cc_netsim::cc::{Ack, Sent};
    use cc_netsim::scenario::ControllerKind;
    let l = load("t.toml", &timely(""));
    let paper = cc_netsim::ctrl::Setup::build(&l, &[]).unwrap();
    assert_eq!(paper.algo().segment_bytes(), Some(16_384));
    let s = cc_netsim::ctrl::Setup::build(&l, &[set("preset", "ns3")]).unwrap();
    assert_eq!(
        s.algo().segment_bytes(),
        Some(1_000),
        "one packet per segment"
    );
    for kind in [ControllerKind::Fixed, ControllerKind::Reference] {
        let mut f = s.algo().new_flow(kind);
        let send = |f: &mut Box<dyn cc_netsim::cc::FlowCc>, k: u64| {
            let sent = Sent {
                seq: k * 1000,
                payload: 1000,
                wire: 1064,
                segment: Some((k * 1000, (k + 1) * 1000)),
            };
            assert!(f.on_send(&mut cx(k * 100), &sent).is_none());
        };
        let ack = |seq: u64, snd_nxt: u64| Ack {
            seq,
            nack: false,
            snd_una: seq,
            snd_nxt,
            int: &[],
            ecn_echo: false,
            rtt_ps: 0,
        };
        for k in 0..10 {
            send(&mut f, k);
        }
        // The first ACK updates and marks snd_nxt = 10 000; the ACKs up to it do not.
        let mut updates = Vec::new();
        for k in 1..=10 {
            let r = f.on_ack(&mut cx(20_000 + k * 100), &ack(k * 1000, 10_000));
            updates.push(r.branch.is_some());
        }
        send(&mut f, 10);
        let r = f.on_ack(&mut cx(22_000), &ack(11_000, 11_000));
        updates.push(r.branch.is_some());
        let mut want = vec![true];
        want.extend([false; 9]);
        want.push(true);
        assert_eq!(updates, want, "{kind:?}");
    }
}
