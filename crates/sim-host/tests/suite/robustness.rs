//! The host tool with a user's data: nothing overwritten or garbled, no vacuous pass, input as
//! people really write it (docs/robustness.md §1–§3). Each test is named after what it pins.

use crate::common::{err, out, root};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn sim_host_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sim-host"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run sim-host")
}

fn sim_host(args: &[&str]) -> Output {
    sim_host_in(&root(), args)
}

const TIMELY: &str = "t_send_ns,t_complete_ns,bytes\n0,60000,0\n100,60100,0\n200,70200,0\n";

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    if let Some(d) = p.parent() {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(&p, text).unwrap();
    p
}

// ---------------------------------------------------------------- §1 never destroy data

#[test]
fn out_or_plot_naming_the_input_is_refused_and_the_input_survives() {
    let d = tempfile::tempdir().unwrap();
    let t = write(d.path(), "t.csv", TIMELY);
    for flag in ["--out", "--plot"] {
        for target in ["t.csv", "./t.csv"] {
            let o = sim_host_in(d.path(), &["replay", "timely", "t.csv", flag, target]);
            assert_eq!(o.status.code(), Some(2), "{flag} {target}: {}", err(&o));
            assert!(
                err(&o).contains("refusing to write an output over the input"),
                "{}",
                err(&o)
            );
            assert_eq!(std::fs::read_to_string(&t).unwrap(), TIMELY);
        }
    }
}

#[test]
fn directory_outputs_are_unique_per_trace_and_capture_flow() {
    let d = tempfile::tempdir().unwrap();
    let src = d.path().join("in");
    write(&src, "a/same.csv", TIMELY);
    write(&src, "b/same.csv", TIMELY);
    for f in ["capture.pcap", "capture.pcapng"] {
        std::fs::copy(root().join("fixtures/hpcc").join(f), src.join(f)).unwrap();
    }
    let (o_dir, p_dir) = (d.path().join("o"), d.path().join("p"));
    let o = sim_host(&[
        "replay",
        "all",
        src.to_str().unwrap(),
        "--out",
        o_dir.to_str().unwrap(),
        "--plot",
        p_dir.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    for f in ["a/same.csv.out.csv", "b/same.csv.out.csv"] {
        let text = std::fs::read_to_string(o_dir.join(f)).unwrap();
        assert_eq!(
            text.lines().filter(|l| !l.starts_with('#')).count(),
            4,
            "{f}: one header and three events, not interleaved"
        );
    }
    assert!(p_dir.join("a/same.csv.svg").exists() && p_dir.join("b/same.csv.svg").exists());
    // Two captures of the same flows and two flows each: four distinct files.
    let mut caps: Vec<String> = std::fs::read_dir(&o_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("capture"))
        .collect();
    caps.sort();
    assert_eq!(caps.len(), 4, "{caps:?}");
    assert!(
        caps.iter()
            .all(|c| c.contains("-qp") && c.contains("10.0.0.")),
        "{caps:?}"
    );
}

#[test]
fn a_bad_row_with_out_and_plot_leaves_no_partial_file() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "t.csv", &format!("{TIMELY}300,x,0\n"));
    let old = write(d.path(), "old.csv", "kept\n");
    let o = sim_host_in(
        d.path(),
        &[
            "replay", "timely", "t.csv", "--out", "old.csv", "--plot", "p.svg",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("t.csv:5:"), "{}", err(&o));
    assert_eq!(std::fs::read_to_string(old).unwrap(), "kept\n");
    assert!(!d.path().join("p.svg").exists());
    let left: Vec<_> = std::fs::read_dir(d.path()).unwrap().collect();
    assert_eq!(left.len(), 2, "no temporary file left behind");
}

#[test]
fn stdout_write_error_is_exit_2() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        return; // no /dev/full on this system
    };
    let o = Command::new(env!("CARGO_BIN_EXE_sim-host"))
        .args(["replay", "all", "fixtures/cats", "--json"])
        .current_dir(root())
        .stdout(full)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", err(&o));
    assert!(err(&o).contains("standard output"), "{}", err(&o));
}

#[test]
fn every_subcommand_reports_a_failed_write_of_standard_output_with_exit_2() {
    if std::fs::metadata("/dev/full").is_err() {
        return; // no /dev/full on this system
    }
    let int = "45c3598982392de900027989ae18703200003989d9f7b266000f698a05a6f4b50000";
    for args in [
        &["int", "decode", int][..],
        &["fixtures", "--check", "--only", "cats"],
        &["replay", "timely", "fixtures/timely/incast.csv"],
        &["sim", "fixtures/scenarios/hpcc_incast_7to1.toml"],
    ] {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let o = Command::new(env!("CARGO_BIN_EXE_sim-host"))
            .args(args)
            .current_dir(root())
            .stdout(full)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", err(&o));
        assert!(
            err(&o).contains("cannot write to standard output"),
            "{args:?}: {}",
            err(&o)
        );
    }
}

#[cfg(unix)]
#[test]
fn symlink_loops_end_and_every_trace_is_replayed_once() {
    let d = tempfile::tempdir().unwrap();
    let top = d.path().join("top");
    write(&top, "sub/t.csv", TIMELY);
    std::os::unix::fs::symlink("..", top.join("sub/up")).unwrap();
    std::os::unix::fs::symlink(".", top.join("self")).unwrap();
    let o = sim_host(&["replay", "timely", top.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(
        out(&o).contains("1 traces: 1 within tolerance"),
        "{}",
        out(&o)
    );
}

// ---------------------------------------------------------------- §2 no vacuous pass

#[test]
fn zero_comparable_events_is_exit_2_for_every_kind() {
    let d = tempfile::tempdir().unwrap();
    let cases = [
        // every completion before its send: all skipped
        (
            "timely.csv",
            "t_send_ns,t_complete_ns,bytes\n10,5,0\n20,6,0\n",
        ),
        // every INT block malformed
        ("hpcc.csv", "t_ns,ack_seq,snd_nxt,int\n1,1,2,00\n2,2,3,01\n"),
        // messages but nothing fed (no ack, no feed): no chunk compared
        ("cats.csv", "t_ns,event,prio,bytes\n"),
    ];
    for (name, text) in cases {
        write(d.path(), name, text);
        let o = sim_host_in(d.path(), &["replay", "all", name]);
        assert_eq!(o.status.code(), Some(2), "{name}: {}{}", out(&o), err(&o));
        assert!(
            err(&o).contains("nothing meaningful to compare"),
            "{name}: {}",
            err(&o)
        );
    }
}

#[test]
fn unknown_csv_in_a_directory_fails_unless_skip_unknown() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "good.csv", TIMELY);
    write(d.path(), "notes.csv", "a,b\n1,2\n");
    let dir = d.path().to_str().unwrap();
    let o = sim_host(&["replay", "timely", dir]);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("notes.csv") && err(&o).contains("not a known trace kind"));
    let o = sim_host(&["replay", "timely", dir, "--skip-unknown"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(out(&o).contains("1 unknown skipped"), "{}", out(&o));
}

// ---------------------------------------------------------------- §3 input people write

#[test]
fn utf8_bom_and_set_right_after_the_header_are_accepted() {
    let d = tempfile::tempdir().unwrap();
    let text = format!(
        "\u{feff}# made in a spreadsheet\nt_send_ns,t_complete_ns,bytes\n# set beta=0.5\n{}",
        TIMELY.split_once('\n').unwrap().1
    );
    write(d.path(), "bom.csv", &text);
    let o = sim_host_in(d.path(), &["replay", "all", "bom.csv", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
}

#[test]
fn stdin_dash_replays_csv_and_captures() {
    for (kind, bytes) in [
        ("timely", TIMELY.as_bytes().to_vec()),
        (
            "hpcc",
            std::fs::read(root().join("fixtures/hpcc/capture.pcapng")).unwrap(),
        ),
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_sim-host"))
            .args(["replay", kind, "-"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(&bytes).unwrap();
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{kind}: {}", err(&o));
        assert!(out(&o).contains("replay of -"), "{kind}: {}", out(&o));
    }
}

#[test]
fn capture_extensions_in_any_case() {
    let d = tempfile::tempdir().unwrap();
    std::fs::copy(
        root().join("fixtures/hpcc/capture.pcap"),
        d.path().join("CAP.PCAP"),
    )
    .unwrap();
    std::fs::copy(
        root().join("fixtures/hpcc/capture.pcap"),
        d.path().join("old.cap"),
    )
    .unwrap();
    for f in ["CAP.PCAP", "old.cap"] {
        let o = sim_host_in(d.path(), &["replay", "hpcc", f]);
        assert_eq!(o.status.code(), Some(0), "{f}: {}", err(&o));
    }
}

#[test]
fn rejected_at_their_line() {
    let d = tempfile::tempdir().unwrap();
    let cases = [
        (
            "empty row",
            "t_send_ns,t_complete_ns,bytes\n0,60000,0\n,,\n",
            3,
            "empty row",
        ),
        (
            "hex number",
            "t_send_ns,t_complete_ns,bytes\n0,0x100,0\n",
            2,
            "0x prefix",
        ),
        (
            "duplicate set",
            "# set beta=0.5\n# set beta=0.6\nt_send_ns,t_complete_ns,bytes\n0,60000,0\n",
            2,
            "first set at line 1",
        ),
        (
            "upper-case SET",
            "# SET beta=0.5\nt_send_ns,t_complete_ns,bytes\n0,60000,0\n",
            1,
            "looks like a parameter line",
        ),
        (
            "set with a colon",
            "# set: beta=0.5\nt_send_ns,t_complete_ns,bytes\n0,60000,0\n",
            1,
            "looks like a parameter line",
        ),
        (
            "set after data",
            "t_send_ns,t_complete_ns,bytes\n0,60000,0\n# set beta=0.5\n",
            3,
            "after the first data row",
        ),
        ("unknown header", "a,b\n1,2\n", 1, "not a known trace kind"),
    ];
    for (what, text, line, msg) in cases {
        write(d.path(), "x.csv", text);
        let o = sim_host_in(d.path(), &["replay", "all", "x.csv"]);
        assert_eq!(o.status.code(), Some(2), "{what}");
        let e = err(&o);
        assert!(
            e.contains(&format!("x.csv:{line}:")) && e.contains(msg),
            "{what}: {e}"
        );
    }
}

#[test]
fn kind_names_are_lowercase_in_messages() {
    let o = sim_host(&["replay", "hpcc", "fixtures/timely/incast.csv"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("not a hpcc one"), "{}", err(&o));
    let d = tempfile::tempdir().unwrap();
    let o = sim_host(&["replay", "cats", d.path().to_str().unwrap()]);
    assert!(err(&o).contains("no cats traces found"), "{}", err(&o));
}

#[test]
fn fixtures_check_of_a_missing_directory_is_a_usage_error() {
    let o = sim_host(&["fixtures", "--check", "--dir", "/nonexistent/fixtures"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("not a directory"), "{}", err(&o));
}

/// Blocks of a pcapng file: (offset, type).
fn pcapng_blocks(b: &[u8]) -> Vec<(usize, u32)> {
    let mut v = Vec::new();
    let mut off = 0;
    while off + 12 <= b.len() {
        let t = u32::from_le_bytes(b[off..off + 4].try_into().unwrap());
        let len = u32::from_le_bytes(b[off + 4..off + 8].try_into().unwrap()) as usize;
        v.push((off, t));
        off += len.max(12);
    }
    v
}

#[test]
fn corrupt_pcap_record_length_is_named_with_its_packet() {
    let mut b = std::fs::read(root().join("fixtures/hpcc/capture.pcap")).unwrap();
    // Record 50's captured length + 37: the rest of the file would be read out of step.
    let mut off = 24;
    for _ in 1..50 {
        let incl = u32::from_le_bytes(b[off + 8..off + 12].try_into().unwrap()) as usize;
        off += 16 + incl;
    }
    let incl = u32::from_le_bytes(b[off + 8..off + 12].try_into().unwrap());
    b[off + 8..off + 12].copy_from_slice(&(incl + 37).to_le_bytes());
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("c.pcap"), &b).unwrap();
    let o = sim_host_in(d.path(), &["replay", "hpcc", "c.pcap"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        err(&o).contains("corrupt record at packet 50"),
        "{}",
        err(&o)
    );
}

#[test]
fn a_capture_cut_short_warns_on_stderr_in_directory_mode_too() {
    let b = std::fs::read(root().join("fixtures/hpcc/capture.pcap")).unwrap();
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("cut.pcap"), &b[..b.len() - 37]).unwrap();
    for kind in ["hpcc", "all"] {
        let o = sim_host_in(d.path(), &["replay", kind, "."]);
        assert_eq!(o.status.code(), Some(0), "{kind}: {}", err(&o));
        // One warning line per flow, each naming the flow and where the capture was cut.
        let warnings: Vec<&str> = std::str::from_utf8(&o.stderr)
            .unwrap()
            .lines()
            .filter(|l| l.starts_with("warning: "))
            .collect();
        assert_eq!(warnings.len(), 2, "{kind}: {}", err(&o));
        for w in warnings {
            assert!(w.contains("cut.pcap#qp"), "{w}");
            assert!(
                w.contains("capture ends inside the record after packet 1603"),
                "{w}"
            );
        }
    }
}

#[test]
fn a_capture_cut_before_its_first_ack_says_it_was_cut() {
    let b = std::fs::read(root().join("fixtures/hpcc/capture.pcap")).unwrap();
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("cut.pcap"), &b[..30_000]).unwrap();
    let o = sim_host_in(d.path(), &["replay", "hpcc", "cut.pcap"]);
    assert_eq!(o.status.code(), Some(2));
    let e = err(&o);
    assert!(e.contains("no RoCEv2 RC ACKs"), "{e}");
    assert!(
        e.contains("capture ends inside the record after packet"),
        "{e}"
    );
}

#[test]
fn plot_errors_name_the_path_once() {
    let d = tempfile::tempdir().unwrap();
    let t = write(d.path(), "t.csv", TIMELY);
    let plot = d.path().join("missing").join("p.svg");
    let o = sim_host(&[
        "replay",
        "timely",
        t.to_str().unwrap(),
        "--plot",
        plot.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let e = err(&o);
    assert_eq!(e.lines().count(), 1, "{e}");
    assert_eq!(e.matches(plot.to_str().unwrap()).count(), 1, "{e}");
    assert!(e.contains("cannot draw plot"), "{e}");
}

#[test]
fn non_ethernet_link_type_is_named() {
    let mut b = std::fs::read(root().join("fixtures/hpcc/capture.pcap")).unwrap();
    b[20..24].copy_from_slice(&113u32.to_le_bytes()); // LINKTYPE_LINUX_SLL
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("sll.pcap"), &b).unwrap();
    let o = sim_host_in(d.path(), &["replay", "hpcc", "sll.pcap"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        err(&o).contains("link type 113 (Linux cooked capture) is not Ethernet"),
        "{}",
        err(&o)
    );
}

#[test]
fn pcapng_packet_on_an_undescribed_interface_is_refused() {
    let mut b = std::fs::read(root().join("fixtures/hpcc/capture.pcapng")).unwrap();
    let (epb, _) = *pcapng_blocks(&b).iter().find(|(_, t)| *t == 6).unwrap();
    b[epb + 8..epb + 12].copy_from_slice(&7u32.to_le_bytes());
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("i.pcapng"), &b).unwrap();
    let o = sim_host_in(d.path(), &["replay", "hpcc", "i.pcapng"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        err(&o).contains("on interface 7, which the capture never described"),
        "{}",
        err(&o)
    );
}

#[test]
fn corrupt_pcapng_block_gives_one_short_line() {
    let mut b = std::fs::read(root().join("fixtures/hpcc/capture.pcapng")).unwrap();
    let (epb, _) = pcapng_blocks(&b)[5];
    b[epb + 4..epb + 8].copy_from_slice(&13u32.to_le_bytes()); // a block length that cannot be
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("b.pcapng"), &b).unwrap();
    let o = sim_host_in(d.path(), &["replay", "hpcc", "b.pcapng"]);
    assert_eq!(o.status.code(), Some(2), "{}", out(&o));
    let e = err(&o);
    assert!(
        e.lines().count() == 1 && e.len() < 300,
        "{} bytes: {e}",
        e.len()
    );
}

#[test]
fn set_in_replay_all_is_scoped_by_kind_and_unknown_keys_are_named_once() {
    // `beta` is a TIMELY key: the HPCC and CATS traces replay without it.
    let o = sim_host(&["replay", "all", "fixtures", "--set", "beta=0.5"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    // Scoped keys: each kind gets its own.
    let o = sim_host(&[
        "replay",
        "all",
        "fixtures",
        "--set",
        "timely.beta=0.5",
        "--set",
        "hpcc.eta=0.9",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    // A key no kind has: one usage error before anything runs, naming every kind's keys.
    for bad in ["gamma=1", "timely.eta=0.9", "tcp.beta=1"] {
        let o = sim_host(&["replay", "all", "fixtures", "--set", bad]);
        assert_eq!(o.status.code(), Some(2), "{bad}");
        let e = err(&o);
        assert_eq!(e.lines().count(), 1, "{bad}: {e}");
        assert!(
            e.contains("belongs to no trace kind") && e.contains("hpcc: "),
            "{bad}: {e}"
        );
    }
}

// ---------------------------------------------------------------- §7 help

#[test]
fn each_kinds_help_lists_its_header_every_key_and_the_exit_codes() {
    use cc_replay::kinds::Kind;
    for k in Kind::all() {
        let o = sim_host(&["replay", k.name(), "--help"]);
        assert_eq!(o.status.code(), Some(0));
        let h = out(&o);
        assert!(h.contains(k.header()), "{}: header row missing", k.name());
        for key in k.info().keys.iter().map(|k| k.name) {
            assert!(
                h.contains(key),
                "{}: key {key} missing from --help",
                k.name()
            );
        }
        assert!(
            h.contains("Exit codes: 0") && h.contains("repeatable"),
            "{}",
            k.name()
        );
    }
}

// ---------------------------------------------------------------- §6 JSON with a schema

fn schema() -> jsonschema::Validator {
    let text = std::fs::read_to_string(root().join("docs/replay.schema.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    jsonschema::validator_for(&v).expect("a valid JSON Schema")
}

fn assert_valid(what: &str, o: &Output) -> serde_json::Value {
    let v: serde_json::Value =
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{what}: not JSON: {e}"));
    let errs: Vec<String> = schema().iter_errors(&v).map(|e| e.to_string()).collect();
    assert!(errs.is_empty(), "{what}: {errs:?}");
    assert_eq!(
        v["summary"]["exit_code"],
        o.status.code().unwrap(),
        "{what}"
    );
    v
}

#[test]
fn json_of_a_file_a_capture_a_directory_and_an_error_matches_the_schema() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "bad.csv",
        "t_send_ns,t_complete_ns,bytes\n0,1,x\n",
    );
    let bad = d.path().join("bad.csv");
    for (what, args) in [
        (
            "file",
            vec!["replay", "timely", "fixtures/timely/incast.csv", "--json"],
        ),
        (
            "capture",
            vec!["replay", "hpcc", "fixtures/hpcc/capture.pcapng", "--json"],
        ),
        (
            "cats",
            vec!["replay", "cats", "fixtures/cats/web_page.csv", "--json"],
        ),
        ("directory", vec!["replay", "all", "fixtures", "--json"]),
        (
            "error",
            vec!["replay", "timely", bad.to_str().unwrap(), "--json"],
        ),
        (
            "outside",
            vec![
                "replay",
                "timely",
                "fixtures/timely/incast.csv",
                "--json",
                "--max-rel-err",
                "0",
            ],
        ),
    ] {
        let o = sim_host(&args);
        let v = assert_valid(what, &o);
        match what {
            "capture" => assert_eq!(v["results"].as_array().unwrap().len(), 2),
            "error" => {
                assert_eq!(o.status.code(), Some(2));
                assert_eq!(v["errors"][0]["line"], 2);
                assert!(
                    v["errors"][0]["message"]
                        .as_str()
                        .unwrap()
                        .contains("bytes")
                );
            }
            "cats" => {
                // CATS has no relative error: its limits are null, not 0.
                assert!(v["results"][0]["tolerances"]["max_rel_err"].is_null());
            }
            "outside" => assert_eq!(o.status.code(), Some(1)),
            _ => assert_eq!(o.status.code(), Some(0), "{what}: {}", err(&o)),
        }
    }
}

#[test]
fn json_writes_integers_beyond_2_pow_53_as_strings() {
    let d = tempfile::tempdir().unwrap();
    // Completion times near 2^63 ns: exact as strings, not rounded floats.
    let big = 9_223_372_036_854_775_000u64;
    write(
        d.path(),
        "big.csv",
        &format!(
            "t_send_ns,t_complete_ns,bytes\n{big},{},0\n{},{},0\n",
            big + 60_000,
            big + 10,
            big + 80_010
        ),
    );
    let o = sim_host_in(d.path(), &["replay", "timely", "big.csv", "--json"]);
    let v = assert_valid("big", &o);
    let worst = &v["results"][0]["rel_err"]["worst"];
    assert_eq!(
        worst["t_ns"],
        serde_json::json!((big + 80_010).to_string()),
        "{v}"
    );
}

// ---------------------------------------------------------------- §5 plots

#[test]
fn plots_have_an_error_panel_marks_legend_and_relative_time() {
    let d = tempfile::tempdir().unwrap();
    for (kind, f, want) in [
        ("timely", "fixtures/timely/incast.csv", "rate rel. error"),
        ("hpcc", "fixtures/hpcc/capture.pcap", "window rel. error"),
        ("cats", "fixtures/cats/web_page.csv", "order differs"),
    ] {
        let svg = d.path().join(format!("{kind}.svg"));
        let o = sim_host(&["replay", kind, f, "--plot", svg.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(0), "{kind}: {}", err(&o));
        // A capture of two flows: one file per flow, named by QP and endpoints.
        let file = if kind == "hpcc" {
            std::fs::read_dir(d.path())
                .unwrap()
                .map(|e| e.unwrap().path())
                .find(|p| p.to_string_lossy().contains("hpcc-qp17"))
                .unwrap()
        } else {
            svg
        };
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(text.contains(want), "{kind}: no {want:?}");
        if kind != "cats" {
            assert!(text.contains("time since the first event"), "{kind}");
            assert!(text.contains("branches differ (0)"), "{kind}");
        }
    }
}

/// Regression (fuzz, `pcap_reader`): a pcapng Process Information Block whose length field is
/// 10 made pcap-parser 0.17 compute `10 − 12` (a panic in debug builds, where this test runs):
/// now exit 2 naming the file and the block.
#[test]
fn a_pcapng_process_information_block_shorter_than_12_bytes_is_refused() {
    let capture: [u8; 61] = [
        0x0a, 0x0d, 0x0d, 0x0a, 0x1c, 0x00, 0x00, 0x00, 0x4d, 0x3c, 0x2b, 0x1a, 0x01, 0x00, 0x32,
        0x00, 0x3a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x1c, 0x00, 0x00, 0x00, 0x01, 0x00,
        0x00, 0x80, 0x0a, 0x00, 0x00, 0x00, 0x4d, 0x3c, 0xb2, 0xa1, 0x02, 0x00, 0xf1, 0x00, 0xff,
        0x02, 0x06, 0xa1, 0x00, 0x04, 0x00, 0x1b, 0x2b, 0x3c, 0x4d, 0x04, 0x00, 0x00, 0xff, 0xff,
        0x00,
    ];
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bad.pcapng");
    std::fs::write(&p, capture).unwrap();
    let o = sim_host(&["replay", "hpcc", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", err(&o));
    let e = err(&o);
    assert!(
        e.contains("bad.pcapng") && e.contains("Process Information Block of 10 bytes"),
        "{e}"
    );
    assert!(!e.contains("panicked"), "{e}");
}

#[test]
fn an_unusable_plot_path_leaves_no_out_file_behind() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("o.csv");
    let plot = d.path().join("no-such-folder").join("p.svg");
    let o = sim_host(&[
        "replay",
        "timely",
        root().join("fixtures/timely/incast.csv").to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--plot",
        plot.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", err(&o));
    assert!(err(&o).contains("p.svg"), "{}", err(&o));
    assert!(
        !out.exists(),
        "--out written although the run failed on --plot"
    );
    let left: Vec<_> = std::fs::read_dir(d.path()).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
}
