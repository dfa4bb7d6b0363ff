//! Reports that tell the truth (issue 32 §5): what a capture holds and why nothing in it was
//! compared, one exit code and one table row for "nothing to compare" whatever the input, DOCA
//! PCC streams whose probes were never answered, the names of traces read from standard input,
//! and the counts and ranges in messages and `--help`. Each test is named after the property it
//! pins.

use sim_host::hpcc::capture::{CaptureFlow, frames_of, write_pcapng};
use sim_host::hpcc::generate::{AckRow, HopSpec, Load, PathSpec, Scenario, simulate};
use sim_host::hpcc::reference::RefParams;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn sim_host(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sim-host"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("run sim-host")
}

/// `sim-host ARGS` with `input` on standard input.
fn sim_host_stdin(args: &[&str], input: &[u8]) -> Output {
    use std::io::Write as _;
    let mut c = Command::new(env!("CARGO_BIN_EXE_sim-host"))
        .args(args)
        .current_dir(root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run sim-host");
    c.stdin.take().unwrap().write_all(input).unwrap();
    c.wait_with_output().unwrap()
}

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}{}", out(o), err(o)))
}

/// Checks `v` against docs/replay.schema.json.
fn valid(v: &serde_json::Value) {
    let schema = std::fs::read_to_string(root().join("docs/replay.schema.json")).unwrap();
    let schema = jsonschema::validator_for(&serde_json::from_str(&schema).unwrap()).unwrap();
    let errs: Vec<String> = schema.iter_errors(v).map(|e| e.to_string()).collect();
    assert!(errs.is_empty(), "{errs:?}");
}

fn rows(seed: u64, acks: usize) -> Vec<AckRow> {
    simulate(&Scenario {
        seed,
        acks,
        params: RefParams::default(),
        pkt_bytes: 1000.0,
        paths: vec![(
            0,
            PathSpec {
                id: 0x100 + seed as u16,
                hops: vec![HopSpec {
                    code: 5,
                    load: Load::constant(0.5),
                    copies: 1.0,
                }],
            },
        )],
        ts0: 1_000_000 * seed,
        tx0: 0.0,
        dup_every: 0,
        bad_every: 0,
        seq0: 0,
        ties: None,
        queue_noise_bytes: 2_000.0,
    })
}

fn flow(src: u8, ack_qp: u32, data_qp: u32, sport: u16, rows: Vec<AckRow>) -> CaptureFlow {
    CaptureFlow {
        src: [10, 0, 0, src],
        dst: [10, 0, 0, 2],
        data_qp,
        ack_qp,
        sport,
        psn0: 0,
        pkt_bytes: 1000,
        seq0: 0,
        rows,
    }
}

/// A capture of two flows into 10.0.0.2, the second one's data packets left out (only its
/// ACKs captured): the first flow passes, the second compares nothing.
fn half_capture(dir: &Path) -> PathBuf {
    let frames = frames_of(&[
        flow(1, 21, 0x221, 0xC021, rows(61, 100)),
        flow(3, 22, 0x222, 0xC022, rows(62, 100)),
    ]);
    // Data from 10.0.0.3 left out (the IPv4 source address is at bytes 26..30).
    let some: Vec<_> = frames
        .into_iter()
        .filter(|(_, f)| !(f[26..30] == [10, 0, 0, 3] && f[42 + 2] != 0x11))
        .collect();
    let p = dir.join("half.pcapng");
    std::fs::write(&p, write_pcapng(&some, 128)).unwrap();
    p
}

/// A TIMELY trace of one row whose completion comes before its send: skipped by both sides,
/// nothing compared.
const TIMELY_NOTHING: &str = "t_send_ns,t_complete_ns,bytes\n10,5,0\n";

#[test]
fn nothing_to_compare_exits_2_for_a_csv_and_a_capture_flow_alike() {
    let d = tempfile::tempdir().unwrap();
    let csv = d.path().join("nothing.csv");
    std::fs::write(&csv, TIMELY_NOTHING).unwrap();
    let cap = half_capture(d.path());
    for (p, results) in [(&csv, 1), (&cap, 2)] {
        let o = sim_host(&["replay", "all", p.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{}{}", out(&o), err(&o));
        assert!(
            out(&o).contains("verdict             NOTHING TO COMPARE: "),
            "{}",
            out(&o)
        );
        assert!(
            err(&o).contains("error: ") && err(&o).contains(p.to_str().unwrap()),
            "{}",
            err(&o)
        );
        let o = sim_host(&["replay", "all", p.to_str().unwrap(), "--json"]);
        assert_eq!(o.status.code(), Some(2), "{}", err(&o));
        let v = json(&o);
        valid(&v);
        assert_eq!(v["summary"]["exit_code"], 2);
        assert_eq!(v["summary"]["results"], results);
        assert_eq!(v["summary"]["nothing_to_compare"], 1);
        assert_eq!(v["summary"]["outside_tolerance"], 0);
        assert_eq!(v["summary"]["errors"], 0);
        let r = v["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["nothing_to_compare"].is_string())
            .unwrap();
        assert_eq!(r["within_tolerance"], false, "{r:#}");
    }
}

#[test]
fn a_trace_with_nothing_to_compare_is_listed_in_a_directory_table_with_its_reason() {
    let d = tempfile::tempdir().unwrap();
    std::fs::copy(
        root().join("fixtures/timely/incast.csv"),
        d.path().join("good.csv"),
    )
    .unwrap();
    std::fs::write(d.path().join("nothing.csv"), TIMELY_NOTHING).unwrap();
    half_capture(d.path());
    std::fs::write(
        d.path().join("broken.csv"),
        "t_send_ns,t_complete_ns,bytes\n1,x,0\n",
    )
    .unwrap();
    let o = sim_host(&["replay", "all", d.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}{}", out(&o), err(&o));
    let text = out(&o);
    let row = |name: &str| {
        text.lines()
            .find(|l| l.contains(name) && !l.contains("replay of"))
            .unwrap_or_else(|| panic!("{name}\n{text}"))
            .to_string()
    };
    assert!(row("good.csv").ends_with("PASS"), "{text}");
    assert!(row("nothing.csv").ends_with("NOTHING TO COMPARE"), "{text}");
    assert!(
        row("half.pcapng#qp22@10.0.0.3->qp?@10.0.0.2").ends_with("NOTHING TO COMPARE"),
        "{text}"
    );
    assert!(row("half.pcapng#qp21@10.0.0.1").ends_with("PASS"), "{text}");
    // The reasons below the table, and the footer counts them apart from unreadable files.
    assert!(
        text.contains("NOTHING TO COMPARE: nothing meaningful to compare in")
            && text.contains("NOTHING TO COMPARE: no data packets from 10.0.0.3 to 10.0.0.2"),
        "{text}"
    );
    assert!(
        text.contains(
            "5 traces: 2 within tolerance, 0 outside, 2 nothing to compare, 1 unreadable"
        ),
        "{text}"
    );
}
