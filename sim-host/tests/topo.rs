//! `sim-host sim`: the setup the HPCC authors simulated — `T` and the initial window from the
//! topology's longest base RTT, HPCC's presets, the fat tree and its routes.

use sim_host::sim::scenario;
use sim_host::sim::{SimOpts, paths, run_loaded};
use sim_host::trace::Param;
use std::path::{Path, PathBuf};

fn scenarios_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/scenarios")
}

/// A scenario from text, as if it were a file in fixtures/scenarios.
fn load(name: &str, text: &str) -> scenario::Loaded {
    scenario::parse(&scenarios_dir().join(name), text).unwrap_or_else(|e| panic!("{e}"))
}

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

fn run(l: &scenario::Loaded, set: Vec<Param>) -> sim_host::sim::Report {
    let o = SimOpts {
        set,
        ..SimOpts::default()
    };
    run_loaded(l, &o).unwrap_or_else(|e| panic!("{e}")).0
}

fn param<'a>(r: &'a sim_host::sim::Report, key: &str) -> (&'a str, &'a str) {
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
