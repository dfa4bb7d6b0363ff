//! Scenarios: every key applied or refused, every run that cannot mean anything fails, every
//! value blamed on where it was given (docs/robustness.md §6b). Each test is named after the property
//! it pins.

use crate::common::sim_exit;

/// One HPCC incast of two 20 kB flows on a star of three hosts.
const HPCC: &str = r#"
name = "t_keys"
algorithm = "hpcc"
duration_ns = 200_000
[topology]
kind = "star"
hosts = 3
host_rate_bps = 100_000_000_000
[[flows]]
kind = "incast"
src = [1, 2]
dst = 0
size_bytes = 20_000
"#;

/// One TIMELY flow on the same star.
const TIMELY: &str = r#"
name = "t_keys"
algorithm = "timely"
duration_ns = 2_000_000
[topology]
kind = "star"
hosts = 3
host_rate_bps = 10_000_000_000
[[flows]]
kind = "long"
src = [1]
dst = 0
"#;

/// Asserts that `sim-host sim` on `text` exits 2 with a message naming the file and `key`.
fn refused(text: &str, args: &[&str], key: &str, why: &str) {
    let (code, err, p) = sim_exit(text, args);
    assert_eq!(code, Some(2), "{key}: {err}");
    assert!(err.contains(key), "names {key}: {err}");
    assert!(err.contains(why), "says {why:?}: {err}");
    if !key.starts_with("--") {
        assert!(
            err.contains(&p.display().to_string()),
            "names the file: {err}"
        );
    }
}

#[test]
fn a_key_only_another_algorithm_reads_is_refused() {
    // TIMELY's TSO segment in an HPCC scenario (accepted and unused before).
    refused(
        &HPCC.replace("duration_ns", "segment_bytes = 16384\nduration_ns"),
        &[],
        "segment_bytes",
        "read by algorithm timely only",
    );
    // HPCC's reaction in a TIMELY scenario, even at its default value.
    refused(
        &TIMELY.replace("duration_ns", "reaction = \"hpcc\"\nduration_ns"),
        &[],
        "reaction",
        "read by algorithm hpcc only",
    );
}

#[test]
fn a_key_the_flow_group_kind_does_not_read_is_refused() {
    let poisson = HPCC.replace(
        "kind = \"incast\"\nsrc = [1, 2]\ndst = 0\nsize_bytes = 20_000",
        "kind = \"poisson\"\nload = 0.3\ncdf = \"cdf/web_search.cdf\"\nstagger_ns = 1000",
    );
    // A CDF relative to the scenario: run from fixtures/scenarios' copy of it.
    let cdf = crate::common::scenarios_dir().join("cdf/web_search.cdf");
    let poisson = poisson.replace("cdf/web_search.cdf", &cdf.display().to_string());
    refused(
        &poisson,
        &[],
        "flows[0].stagger_ns",
        "a poisson group does not read it",
    );
}

#[test]
fn the_pacer_keys_are_refused_under_the_ns3_nic() {
    for key in [
        "pacer_flows = 8",
        "send_jitter_ns = 100",
        "pacer = \"reference\"",
    ] {
        let text = HPCC
            .replace("duration_ns", &format!("{key}\nduration_ns"))
            .replace("host_rate_bps", "switch_model = \"ns3\"\nhost_rate_bps");
        let k = key.split(' ').next().unwrap();
        refused(&text, &[], k, "ns-3's NIC");
    }
}

#[test]
fn segment_bytes_with_the_timely_ns3_preset_is_refused() {
    let text = TIMELY
        .replace("duration_ns", "segment_bytes = 16384\nduration_ns")
        .replace("[topology]", "[params]\npreset = \"ns3\"\n[topology]");
    refused(&text, &[], "segment_bytes", "preset ns3");
}

#[test]
fn int_multi_is_refused_where_nothing_reads_it() {
    refused(
        &HPCC.replace("host_rate_bps", "int_multi = 4\nhost_rate_bps"),
        &[],
        "topology.int_multi",
        "needs switch_model",
    );
    let dcqcn = HPCC.replace("\"hpcc\"", "\"dcqcn\"").replace(
        "host_rate_bps",
        "switch_model = \"ns3\"\nint_multi = 4\nhost_rate_bps",
    );
    refused(
        &dcqcn,
        &["--controller", "reference"],
        "topology.int_multi",
        "stamp none",
    );
}

#[test]
fn a_scenario_without_flows_is_refused() {
    let text = HPCC.split("[[flows]]").next().unwrap().to_string();
    refused(&text, &[], "flows", "measure nothing");
}

#[test]
fn an_ns3_flow_file_without_flows_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let f = tmp.path().join("flow.txt");
    std::fs::write(&f, "0\n").unwrap();
    let (code, err, _) = sim_exit(HPCC, &["--ns3-flows", f.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("flow.txt: line 1") && err.contains("no flows"),
        "{err}"
    );
}

#[test]
fn a_run_that_measured_nothing_is_not_reported_healthy() {
    // Long flows whose receiver ACKs every 1024th packet: a window of about 100 packets is
    // never acknowledged, no flow finishes, the controllers never hear anything.
    let text = TIMELY
        .replace("\"timely\"", "\"hpcc\"")
        .replace("10_000_000_000", "100_000_000_000")
        .replace("duration_ns", "ack_every = 1024\nduration_ns");
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("scenario.toml");
    std::fs::write(&p, text).unwrap();
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_sim-host"))
        .arg("sim")
        .arg(&p)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("INVARIANTS VIOLATED: nothing was measured"),
        "{out}"
    );
}

#[test]
fn a_max_rate_above_the_host_links_is_refused_and_blamed_on_set() {
    refused(
        TIMELY,
        &["--set", "max_rate_bps=20000000000"],
        "--set max_rate_bps",
        "above the host links",
    );
    refused(
        &TIMELY.replace(
            "[topology]",
            "[params]\nmax_rate_bps = 20_000_000_000\n[topology]",
        ),
        &[],
        "params.max_rate_bps",
        "above the host links",
    );
}

#[test]
fn a_nic_rate_given_with_set_is_blamed_on_set() {
    refused(
        HPCC,
        &["--set", "nic_rate_bps=25000000000"],
        "--set nic_rate_bps",
        "differs from topology.host_rate_bps",
    );
}

#[test]
fn an_ns3_out_flow_size_beyond_32_bits_is_refused_before_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    let text = HPCC.replace("size_bytes = 20_000", "size_bytes = 5_000_000_000");
    refused(
        &text,
        &["--ns3-out", tmp.path().to_str().unwrap()],
        "flows[0].size_bytes",
        "32-bit",
    );
    assert_eq!(
        std::fs::read_dir(tmp.path()).unwrap().count(),
        0,
        "nothing written"
    );
}

#[test]
fn a_missing_host_is_named_with_the_count_and_the_ids_there_are() {
    refused(
        &HPCC.replace("dst = 0", "dst = 3"),
        &[],
        "flows[0].dst",
        "3 hosts, 0 to 2",
    );
}
