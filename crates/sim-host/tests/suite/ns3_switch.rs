//! `topology.switch_model = "ns3"` (the HPCC authors' ns-3 switch: ACKs in the data class,
//! ns-3's packet sizes with a fixed 42-byte INT header, ns-3's dynamic PFC threshold with pause
//! frames as packets) and
//! `output.ideal_fct = "ns3"` (slowdowns against ns-3's standalone FCT).

use crate::common::sim_exit;

use cc_netsim::SimOpts;
use cc_netsim::scenario;
use sim_host::sim::run_loaded;

fn load(text: &str) -> scenario::Loaded {
    crate::common::load("t_ns3.toml", text)
}

fn run(text: &str, o: &SimOpts) -> (cc_netsim::Report, cc_netsim::engine::Sim) {
    let (r, sim) = run_loaded(&load(text), o).unwrap_or_else(|e| panic!("{e}"));
    assert!(r.violations.is_empty(), "{:?}", r.violations);
    (r, sim)
}

/// One HPCC flow of `packets` full packets from host 1 to host 0 across one switch.
fn one_flow(model: &str, packets: u64) -> String {
    format!(
        r#"
name = "t_ns3"
algorithm = "hpcc"
duration_ns = 2_000_000
[params]
base_rtt_ns = 13000
[topology]
kind = "star"
hosts = 2
host_rate_bps = 100_000_000_000
switch_model = "{model}"
[[flows]]
kind = "incast"
src = [1]
dst = 0
size_bytes = {}
"#,
        packets * 1000
    )
}

#[test]
fn every_data_packet_and_ack_carries_ns3_s_headers_and_42_byte_int_header() {
    let n = 200;
    for (model, data_host, data_switch, ack) in [
        // Ours: 2 bytes of INT header, 8 more per hop stamped (one switch).
        ("default", 1000 + 64 + 2, 1000 + 64 + 2 + 8, 64 + 2 + 8),
        // ns-3's: its 48-byte data header (a 14-byte "PPP" header, IPv4, UDP, SeqTs), its
        // 46-byte ACK, and 42 bytes of INT whatever the hops: 1090 and 88 bytes, as ns-3's own
        // packet trace shows.
        ("ns3", 1090, 1090, 88),
    ] {
        let (r, sim) = run(&one_flow(model, n), &SimOpts::default());
        assert_eq!(r.switch_model, model);
        assert_eq!(r.counters.sent, n, "{model}: no packet sent twice");
        let tx = sim.port_tx();
        // Ports in link order: host 0, switch→host 0, host 1, switch→host 1.
        assert_eq!(tx[2].0, n * data_host, "{model}: host 1 sends the data");
        assert_eq!(tx[1].0, n * data_switch, "{model}: the switch forwards it");
        assert_eq!(
            tx[0].0,
            r.counters.acks * ack,
            "{model}: host 0 sends the ACKs"
        );
    }
}

/// A 16-to-1 HPCC incast on one switch with a buffer of `buffer` bytes.
fn incast(buffer: u64, extra_topology: &str) -> String {
    format!(
        r#"
name = "t_ns3"
algorithm = "hpcc"
duration_ns = 300_000
[params]
base_rtt_ns = 13000
[topology]
kind = "star"
hosts = 17
host_rate_bps = 100_000_000_000
buffer_bytes = {buffer}
{extra_topology}
[[flows]]
kind = "long"
src = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]
dst = 0
start_ns = 10_000
"#
    )
}

#[test]
fn the_ns3_switch_pauses_at_its_dynamic_threshold_and_loses_nothing() {
    // 17 ports × (4 KiB reserve + 37 500 B headroom) = 707 132 B of the 1 MB buffer are fixed:
    // the shared pool starts at 292 868 B and each ingress port's threshold at an eighth of
    // what is free. The incast's first round trip overflows it.
    let (r, _) = run(
        &incast(1_000_000, "switch_model = \"ns3\""),
        &SimOpts::default(),
    );
    assert!(r.counters.pfc_pauses > 0, "the incast pauses its senders");
    assert!(r.counters.pfc_paused_ns > 0);
    assert_eq!(
        (
            r.counters.dropped,
            r.counters.acks_dropped,
            r.counters.timeouts
        ),
        (0, 0, 0),
        "lossless"
    );
    assert!(
        r.counters.max_buffer_used_bytes <= 1_000_000,
        "{}",
        r.counters.max_buffer_used_bytes
    );
    // A larger buffer raises every threshold: fewer pauses.
    let (big, _) = run(
        &incast(4_000_000, "switch_model = \"ns3\""),
        &SimOpts::default(),
    );
    assert!(
        big.counters.pfc_pauses < r.counters.pfc_pauses,
        "{} vs {}",
        big.counters.pfc_pauses,
        r.counters.pfc_pauses
    );
}

#[test]
fn settings_the_ns3_switch_does_not_apply_are_refused_with_their_key() {
    for (text, key) in [
        (
            incast(2_000_000, "switch_model = \"ns3\"\npfc_xoff_bytes = 60_000"),
            "topology.pfc_xoff_bytes",
        ),
        (
            incast(2_000_000, "switch_model = \"ns3\"\nbuffer = \"per_port\""),
            "topology.buffer",
        ),
        // The reserves and headrooms alone (707 132 B) fill a 700 kB buffer.
        (
            incast(700_000, "switch_model = \"ns3\""),
            "topology.buffer_bytes",
        ),
        // An unknown model: serde names the line and the values it knows.
        (
            incast(2_000_000, "switch_model = \"ns-3\""),
            "expected `default` or `ns3`",
        ),
    ] {
        let (code, err, _) = sim_exit(&text, &[]);
        assert_eq!(code, Some(2), "{key}: {err}");
        assert!(err.contains(key), "{key}: {err}");
    }
}

const WEB: &str = r#"
name = "t_ns3"
algorithm = "hpcc"
seed = 3
duration_ns = 5_000_000
[params]
base_rtt_ns = 13000
[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
hosts_per_leaf = 4
host_rate_bps = 100_000_000_000
fabric_rate_bps = 400_000_000_000
switch_model = "ns3"
[[flows]]
kind = "poisson"
load = 0.3
cdf = "cdf/web_search.cdf"
stop_ns = 4_000_000
[output]
ideal_fct = "ns3"
"#;

#[test]
fn ns3_ideal_fct_is_fct_txt_s_standalone_fct_and_slowdowns_are_at_least_one() {
    let d = tempfile::tempdir().unwrap();
    let o = SimOpts {
        out: Some(d.path().to_path_buf()),
        ns3_out: Some(d.path().join("ns3")),
        ..SimOpts::default()
    };
    let (r, _) = run(WEB, &o);
    assert_eq!(r.ideal_fct, "ns3");
    // fct.txt: sip dip sport dport size start_ns fct_ns standalone_fct_ns.
    let fct = std::fs::read_to_string(d.path().join("ns3/fct.txt")).unwrap();
    let mut standalone = std::collections::HashMap::new();
    for l in fct.lines() {
        let v: Vec<u64> = l
            .split_whitespace()
            .skip(4)
            .map(|x| x.parse().unwrap())
            .collect();
        standalone.insert((v[0], v[1]), v[3]);
    }
    let flows = std::fs::read_to_string(d.path().join("t_ns3_flows.csv")).unwrap();
    let mut finished = 0;
    let mut below = 0;
    for l in flows.lines().skip(1) {
        let c: Vec<&str> = l.split(',').collect();
        if c[6] != "finished" {
            continue;
        }
        finished += 1;
        let (size, start): (u64, u64) = (c[4].parse().unwrap(), c[5].parse().unwrap());
        let ideal: f64 = c[9].parse().unwrap();
        let fct: f64 = c[8].parse().unwrap();
        let slowdown: f64 = c[10].parse().unwrap();
        let s = standalone[&(size, start)];
        assert_eq!(
            ideal, s as f64,
            "flow {}: ideal is ns-3's standalone FCT",
            c[0]
        );
        assert!(slowdown >= 1.0, "flow {}: {slowdown}", c[0]);
        below += u32::from(fct < ideal);
    }
    assert_eq!(finished as usize, r.flows_finished);
    assert!(finished > 20, "{finished} flows finished");
    // ns-3's ideal counts a full packet's serialisation on every link: short flows finish
    // below it (their slowdown is then 1), and the run's own lower bound still holds.
    assert!(below > 0, "some short flows finish below ns-3's ideal");
}
