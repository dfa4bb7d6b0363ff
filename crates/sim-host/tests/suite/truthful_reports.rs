//! Reports that tell the truth (docs/robustness.md §4 and §6b): what a capture holds and why nothing in it was
//! compared, one exit code and one table row for "nothing to compare" whatever the input, DOCA
//! PCC streams whose probes were never answered, the names of traces read from standard input,
//! and the counts and ranges in messages and `--help`. Each test is named after the property it
//! pins.

use crate::common::{ack_rows as rows, root, sim_host};
use crate::common::{err, out};
use cc_trace::capture::{CaptureFlow, frames_of, write_pcapng};
use cc_trace::hpcc::AckRow;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

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
    let unpaired = row("half.pcapng#qp22@10.0.0.3->qp?@10.0.0.2");
    assert!(unpaired.ends_with("NOTHING TO COMPARE"), "{text}");
    // Nothing compared: no agreement shown (not the ratio's 100 % of nothing).
    assert!(!unpaired.contains('%'), "{unpaired}");
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

/// One row of the real captures' table: file, frames, RoCEv2 packets, RoCEv2 packets by BTH
/// opcode, RoCEv1 frames, why nothing is compared.
type CaptureRow = (String, u64, u64, Vec<(u8, u64)>, u64, String);

/// The copied public captures (crates/sim-host/tests/real-captures), with the counts its README gives
/// as tshark decodes them.
fn real_captures() -> Vec<CaptureRow> {
    let dir = root().join("crates/sim-host/tests/real-captures");
    let readme = std::fs::read_to_string(dir.join("README.md")).unwrap();
    let table = readme
        .split("| file | frames | RoCEv2 | RoCEv2 by BTH opcode | RoCEv1 | sim-host |")
        .nth(1)
        .expect("the README's table of counts");
    table
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            let f: Vec<&str> = l.trim_matches('|').split('|').map(str::trim).collect();
            let ops = if f[3] == "-" {
                Vec::new()
            } else {
                f[3].split(", ")
                    .map(|p| {
                        let (op, n) = p.split_once(' ').unwrap();
                        (
                            u8::from_str_radix(op.trim_start_matches("0x"), 16).unwrap(),
                            n.parse().unwrap(),
                        )
                    })
                    .collect()
            };
            (
                f[0].trim_matches('`').to_string(),
                f[1].parse().unwrap(),
                f[2].parse().unwrap(),
                ops,
                f[4].parse().unwrap(),
                f[5].to_string(),
            )
        })
        .collect()
}

#[test]
fn real_captures_are_read_as_tshark_decodes_them_and_none_gives_a_verdict() {
    let dir = root().join("crates/sim-host/tests/real-captures");
    let caps = real_captures();
    assert_eq!(caps.len(), 15, "the README lists every capture");
    let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".pcap"))
        .collect();
    on_disk.sort();
    let mut listed: Vec<String> = caps.iter().map(|c| c.0.clone()).collect();
    listed.sort();
    assert_eq!(on_disk, listed, "every file in the folder is in the table");
    for (file, frames, roce, ops, v1, why) in &caps {
        let p = dir.join(file);
        let o = sim_host(&["replay", "hpcc", p.to_str().unwrap(), "--json"]);
        assert_eq!(o.status.code(), Some(2), "{file}: {}", err(&o));
        let v = json(&o);
        valid(&v);
        let results = v["results"].as_array().unwrap();
        assert!(
            results
                .iter()
                .all(|r| r["failures"] == serde_json::json!([])
                    && r["within_tolerance"] == false
                    && r["nothing_to_compare"].is_string()),
            "{file}: no flow has a verdict: {v:#}"
        );
        if why == "link type 197" {
            // Native InfiniBand in ERF: refused by name before any packet is read.
            assert!(results.is_empty(), "{file}");
            let m = v["errors"][0]["message"].as_str().unwrap();
            assert!(
                m.contains("link type 197 (ERF") && m.contains("ERF type 21: InfiniBand"),
                "{file}: {m}"
            );
            continue;
        }
        assert_eq!(results.len(), 1, "{file}: one result for the capture");
        let r = &results[0];
        assert_eq!(r["trace"], p.to_str().unwrap(), "{file}");
        let reason = r["nothing_to_compare"].as_str().unwrap();
        let expected = match why.as_str() {
            "no ACK carries INT" => "no RoCEv2 ACK carries an HPCC INT block",
            "no RC ACKs" => "no RoCEv2 RC ACKs (BTH opcode 0x11)",
            "no RoCEv2 packets" => "no RoCEv2 packets (UDP destination port 4791)",
            other => panic!("{file}: unknown reason {other:?} in the README"),
        };
        assert!(reason.contains(expected), "{file}: {reason}");
        let d = &r["details"];
        assert_eq!(d["capture frames"], *frames, "{file}: {d:#}");
        // Per opcode, the very counts tshark gives.
        let got: Vec<(u8, u64)> = d["RoCEv2 packets"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, n)| {
                (
                    u8::from_str_radix(&k[2..4], 16).unwrap(),
                    n.as_u64().unwrap(),
                )
            })
            .collect();
        assert_eq!(&got, ops, "{file}: RoCEv2 packets by opcode");
        assert_eq!(got.iter().map(|g| g.1).sum::<u64>(), *roce, "{file}");
        // None carries INT; the ACKs say so.
        for (k, n) in d["with INT"].as_object().unwrap() {
            assert_eq!(n, 0, "{file}: {k}");
        }
        if ops.iter().any(|o| o.0 == 0x11) {
            let acks = ops.iter().find(|o| o.0 == 0x11).unwrap().1;
            assert!(
                reason.contains(&format!("RC ACK {acks} (0 with INT)")),
                "{file}: {reason}"
            );
        }
        // The other frames, by reason: RoCEv1 named as such.
        let not_roce = d["not RoCEv2"].as_object().unwrap();
        assert_eq!(
            not_roce.values().map(|n| n.as_u64().unwrap()).sum::<u64>(),
            frames - roce,
            "{file}: {not_roce:?}"
        );
        let v1_seen = not_roce
            .iter()
            .find(|(k, _)| k.starts_with("RoCEv1"))
            .map_or(0, |(_, n)| n.as_u64().unwrap());
        assert_eq!(v1_seen, *v1, "{file}: {not_roce:?}");
    }
    // The folder as a directory: every capture listed, none passing or failing.
    let o = sim_host(&["replay", "all", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let text = out(&o);
    assert!(!text.contains("PASS") && !text.contains("FAIL"), "{text}");
    assert!(
        text.contains(
            "15 traces: 0 within tolerance, 0 outside, 13 nothing to compare, 2 unreadable"
        ),
        "{text}"
    );
}

/// One RoCEv2 frame as NICs write it (no INT): Ethernet, IPv4, UDP to 4791, the BTH (`opcode`,
/// P_Key 0xffff, destination QP, PSN), then `rest` (extension headers and payload) and a zero
/// ICRC.
fn plain_frame(src: u8, dst: u8, opcode: u8, qp: u32, psn: u32, rest: &[u8]) -> Vec<u8> {
    let udp_len = 8 + 12 + rest.len() + 4;
    let mut f = vec![2, 0, 0, 0, 0, dst, 2, 0, 0, 0, 0, src, 0x08, 0x00];
    let mut ip = [0u8; 20];
    ip[0] = 0x45;
    ip[2..4].copy_from_slice(&((20 + udp_len) as u16).to_be_bytes());
    ip[8] = 64;
    ip[9] = 17;
    ip[12..16].copy_from_slice(&[10, 0, 0, src]);
    ip[16..20].copy_from_slice(&[10, 0, 0, dst]);
    f.extend_from_slice(&ip);
    f.extend_from_slice(&0xC123u16.to_be_bytes());
    f.extend_from_slice(&4791u16.to_be_bytes());
    f.extend_from_slice(&(udp_len as u16).to_be_bytes());
    f.extend_from_slice(&[0, 0]);
    f.push(opcode);
    f.push(0);
    f.extend_from_slice(&[0xFF, 0xFF, 0]);
    f.extend_from_slice(&qp.to_be_bytes()[1..]);
    f.push(0);
    f.extend_from_slice(&psn.to_be_bytes()[1..]);
    f.extend_from_slice(rest);
    f.extend_from_slice(&[0; 4]);
    f
}

#[test]
fn int_block_is_read_only_on_rc_acks() {
    use cc_trace::capture::{Frame, classify_frame, write_pcap};
    // UC, UD and RD/DC packets whose payload holds 0x11 — as its first byte, and where a reader
    // taking the first nibble after UDP for a hop count would find an HPCC BTH (2 + 8·nhop
    // bytes in: 18 for UC opcodes 0x2x, 50 for UD 0x6x, 34 for 0x4x), with zeros around so that
    // the bytes there look like a BTH.
    let payload = |at: &[usize], len: usize| {
        let mut p = vec![0u8; len];
        for &i in at {
            p[i] = 0x11;
        }
        p
    };
    let cases: Vec<(&str, u8, Vec<u8>)> = vec![
        // After the BTH: payload offsets are relative to the byte after the 12-byte BTH.
        ("UC SEND first", 0x20, payload(&[0, 18 - 12], 1024)),
        ("UC RDMA WRITE middle", 0x27, payload(&[18 - 12], 64)),
        // UD: BTH, DETH (8 bytes), payload.
        ("UD SEND only", 0x64, payload(&[8, 50 - 12], 256)),
        ("RD/DC RDMA WRITE middle", 0x47, payload(&[34 - 12], 512)),
    ];
    let mut frames = Vec::new();
    for (i, (what, op, rest)) in cases.iter().enumerate() {
        let f = plain_frame(1, 2, *op, 0x33, i as u32, rest);
        assert_eq!(
            classify_frame(0, &f),
            Frame::Plain { opcode: *op },
            "{what} is read as the RoCEv2 packet it is, not as INT"
        );
        // Both directions, and beside them packets of the same kind with a zero payload: a
        // reader that took the first as ACKs would take these for data and pair them into
        // flows (and fail them on payload bytes read as INT).
        let zeros = vec![0u8; rest.len()];
        for k in 0..20u64 {
            let t = 1_000 * (8 * k + 2 * i as u64);
            frames.push((t, plain_frame(1, 2, *op, 0x33, k as u32, &zeros)));
            frames.push((t + 100, f.clone()));
            frames.push((t + 500, plain_frame(2, 1, *op, 0x44, k as u32, &zeros)));
            frames.push((t + 600, plain_frame(2, 1, *op, 0x44, k as u32, rest)));
        }
    }
    // A real RC ACK (BTH, AETH, ICRC: 28 bytes of UDP) is an RC ACK without INT.
    let ack = plain_frame(2, 1, 0x11, 0x44, 7, &[0x1F, 0, 0, 1]);
    assert_eq!(classify_frame(0, &ack), Frame::Plain { opcode: 0x11 });
    frames.sort_by_key(|f| f.0);
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("uc_ud_dc.pcap");
    std::fs::write(&p, write_pcap(&frames, 4096)).unwrap();
    if let Some(keep) = std::env::var_os("KEEP_CAPTURE") {
        std::fs::copy(&p, keep).unwrap();
    }
    let o = sim_host(&["replay", "hpcc", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}{}", out(&o), err(&o));
    assert!(
        !out(&o).contains("FAIL"),
        "no per-flow verdict: {}",
        out(&o)
    );
    assert!(
        err(&o).contains("no RoCEv2 RC ACKs")
            && err(&o).contains("UC SEND first 80")
            && err(&o).contains("UD SEND only 80"),
        "{}",
        err(&o)
    );
}

#[test]
fn frames_behind_a_third_vlan_tag_are_counted_by_reason() {
    // The shipped capture's frames behind three VLAN tags (802.1ad, 802.1Q, 802.1Q): the reader
    // reads two, and says why it read nothing.
    let tagged = |tags: usize| {
        let d = tempfile::tempdir().unwrap();
        let frames: Vec<(u64, Vec<u8>)> = cc_replay::hpcc::generate::capture::capture_frames()
            .into_iter()
            .map(|(t, f)| {
                let mut g = f[..12].to_vec();
                for i in 0..tags {
                    let tpid: u16 = if i == 0 { 0x88A8 } else { 0x8100 };
                    g.extend_from_slice(&tpid.to_be_bytes());
                    g.extend_from_slice(&(100 + i as u16).to_be_bytes());
                }
                g.extend_from_slice(&f[12..]);
                (t, g)
            })
            .collect();
        let p = d.path().join(format!("vlan{tags}.pcapng"));
        std::fs::write(&p, write_pcapng(&frames, 256)).unwrap();
        let o = sim_host(&["replay", "hpcc", p.to_str().unwrap()]);
        (o, d)
    };
    let (two, _d2) = tagged(2);
    assert_eq!(
        two.status.code(),
        Some(0),
        "two tags are read: {}",
        err(&two)
    );
    let (three, _d3) = tagged(3);
    assert_eq!(three.status.code(), Some(2), "{}", out(&three));
    let e = err(&three);
    assert!(
        e.contains("no RoCEv2 packets")
            && e.contains(
                "1604 frames: 0 RoCEv2; 1604 not RoCEv2 (1604 behind more than two VLAN tags"
            ),
        "{e}"
    );
}

#[test]
fn a_pcc_stream_whose_probes_are_never_answered_compares_nothing() {
    let d = tempfile::tempdir().unwrap();
    for algorithm in ["timely", "hpcc"] {
        // 216 TX events: the probe policy asks for probes, none is ever answered, the rate
        // never moves. The policy's decisions are compared, but they are not steps of the
        // algorithm.
        let mut text =
            format!("# set algorithm={algorithm}\ntype,subtype,flags,flow,ts_ns,a,b,c,telemetry\n");
        for i in 0..216u32 {
            let t = 1_000 + 1_000 * i;
            text += &format!("tx,,,1,{t},{t},32,1,\n");
        }
        let p = d.path().join(format!("{algorithm}_tx_only.csv"));
        std::fs::write(&p, text).unwrap();
        let o = sim_host(&["replay", "pcc", p.to_str().unwrap(), "--json"]);
        assert_eq!(o.status.code(), Some(2), "{algorithm}: {}", err(&o));
        let r = &json(&o)["results"][0];
        assert_eq!(r["events"], 216, "{algorithm}");
        assert_eq!(r["meaningful"], 0, "{algorithm}: {r:#}");
        let why = r["nothing_to_compare"].as_str().unwrap();
        assert!(
            why.contains("none of its 216 events is a step of the algorithm")
                && why.contains("0 probe answers"),
            "{algorithm}: {why}"
        );
    }
    // The shipped streams, whose probes are answered, still pass; their meaningful events are
    // the answers that step Algorithm 1, at most one per probe answer.
    let o = sim_host(&["replay", "all", "fixtures/pcc", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    for r in json(&o)["results"].as_array().unwrap() {
        let answered = r["details"]["reference probes"]["answered"]
            .as_u64()
            .unwrap();
        let m = r["meaningful"].as_u64().unwrap();
        assert!(m > 0 && m <= answered, "{}: {m} of {answered}", r["trace"]);
    }
}

#[test]
fn meaningful_events_never_outnumber_the_events() {
    let d = tempfile::tempdir().unwrap();
    // Two CATS rows that compare 14 chunks: 2 events, not "14 meaningful".
    let p = d.path().join("cats.csv");
    std::fs::write(&p, "t_ns,event,prio,bytes\n0,enqueue,0,20000\n1,feed,,\n").unwrap();
    let o = sim_host(&["replay", "cats", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(
        out(&o).contains("events              2 (0 skipped, 2 meaningful)")
            && out(&o).contains("(0 of 14 differ)"),
        "{}",
        out(&o)
    );
    // Every shipped fixture of every kind.
    let o = sim_host(&["replay", "all", "fixtures", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    for r in json(&o)["results"].as_array().unwrap() {
        let (e, m) = (
            r["events"].as_u64().unwrap(),
            r["meaningful"].as_u64().unwrap(),
        );
        assert!(m <= e, "{}: {m} meaningful of {e} events", r["trace"]);
    }
}

#[test]
fn a_trace_read_from_standard_input_is_named_dash_everywhere() {
    let d = tempfile::tempdir().unwrap();
    // A CSV with `# set` lines: the report, the JSON, the parameter origins and `--out`.
    let csv = std::fs::read(root().join("fixtures/hpcc/near_eta.csv")).unwrap();
    let o_csv = d.path().join("o.csv");
    let o = sim_host_stdin(
        &["replay", "hpcc", "-", "--out", o_csv.to_str().unwrap()],
        &csv,
    );
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let text = out(&o);
    assert!(text.contains("hpcc replay of - (mode free)"), "{text}");
    assert!(text.contains("eta=0.95 (-:5)"), "{text}");
    let written = std::fs::read_to_string(&o_csv).unwrap();
    assert!(written.starts_with("# sim-host replay of -\n"), "{written}");
    assert!(written.contains("# param eta=0.95 (-:5)"), "{written}");
    let o = sim_host_stdin(&["replay", "hpcc", "-", "--json"], &csv);
    let v = json(&o);
    assert_eq!(v["results"][0]["trace"], "-");
    for p in v["results"][0]["params"].as_array().unwrap() {
        let origin = p["origin"].as_str().unwrap();
        assert!(origin == "default" || origin.starts_with("-:"), "{p}");
    }
    // A trace with nothing to compare, and one with a bad row: the messages name `-`.
    let o = sim_host_stdin(&["replay", "hpcc", "-"], b"t_ns,ack_seq,snd_nxt,int\n");
    assert_eq!(o.status.code(), Some(2));
    assert!(
        err(&o).contains("nothing meaningful to compare in -: it has no event"),
        "{}",
        err(&o)
    );
    let o = sim_host_stdin(
        &["replay", "all", "-"],
        b"t_ns,ack_seq,snd_nxt,int\n1,2,3,zz\n",
    );
    assert!(err(&o).contains("error: -:2: field int"), "{}", err(&o));
    // A pcapng whose section header sets a parameter: flows `-#…`, the origin `- (section
    // header)`, and `--out` names `-` and the flow.
    let cap = cc_trace::capture::write_pcapng_with(
        &cc_replay::hpcc::generate::capture::capture_frames(),
        128,
        9,
        0,
        &["set eta=0.9".to_string()],
    );
    let o_cap = d.path().join("c.csv");
    let o = sim_host_stdin(
        &["replay", "hpcc", "-", "--out", o_cap.to_str().unwrap()],
        &cap,
    );
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let text = out(&o);
    assert!(
        text.contains("hpcc replay of -#qp17@10.0.0.1->qp721@10.0.0.2")
            && text.contains("eta=0.9 (- (section header))"),
        "{text}"
    );
    let flow_out = d.path().join("c-qp17@10.0.0.1-qp721@10.0.0.2.csv");
    let written = std::fs::read_to_string(flow_out).unwrap();
    assert!(
        written.starts_with("# sim-host replay of -, flow qp17@10.0.0.1->qp721@10.0.0.2\n"),
        "{written}"
    );
    // Nothing anywhere names the temporary copy.
    for o in [&text, &err(&o)] {
        assert!(!o.contains("sim-host-stdin"), "{o}");
    }
}

#[test]
fn a_capture_flow_out_header_names_the_capture_and_the_flow() {
    let d = tempfile::tempdir().unwrap();
    let o_csv = d.path().join("o.csv");
    let cap = root().join("fixtures/hpcc/roce_pairs.pcapng");
    let o = sim_host(&[
        "replay",
        "hpcc",
        cap.to_str().unwrap(),
        "--out",
        o_csv.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    for (file, flow) in [
        (
            "o-qp161@10.0.3.1-qp433@10.0.3.2.csv",
            "qp161@10.0.3.1->qp433@10.0.3.2",
        ),
        (
            "o-qp433@10.0.3.2-qp161@10.0.3.1.csv",
            "qp433@10.0.3.2->qp161@10.0.3.1",
        ),
    ] {
        let text = std::fs::read_to_string(d.path().join(file)).unwrap();
        let first = text.lines().next().unwrap();
        assert_eq!(
            first,
            format!("# sim-host replay of {}, flow {flow}", cap.display())
        );
    }
}

/// The names a scenario key accepts, from the scenario parser's own refusal of an unknown one
/// (`expected one of `a`, `b``): the registry the help must match.
fn accepted(toml: &str) -> Vec<String> {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("s.toml");
    std::fs::write(&p, toml).unwrap();
    let o = sim_host(&["sim", p.to_str().unwrap()]);
    let e = err(&o);
    let list = e
        .split("expected one of ")
        .nth(1)
        .unwrap_or_else(|| panic!("{e}"));
    list.lines()
        .next()
        .unwrap()
        .split(", ")
        .map(|v| v.trim_matches('`').to_string())
        .collect()
}

#[test]
fn help_names_every_topology_and_flow_kind_that_scenarios_and_ns3_topology_accept() {
    let topo = accepted("name = \"x\"\nalgorithm = \"hpcc\"\n[topology]\nkind = \"?\"\n");
    let flows = accepted("name = \"x\"\nalgorithm = \"hpcc\"\n[[flows]]\nkind = \"?\"\n");
    assert!(topo.contains(&"fat_tree".to_string()), "{topo:?}");
    let help = out(&sim_host(&["sim", "--help"]));
    assert!(
        help.contains(&format!("[topology] ({})", topo.join("|"))),
        "{topo:?}\n{help}"
    );
    assert!(
        help.contains(&format!("[[flows]] ({})", flows.join("|"))),
        "{flows:?}\n{help}"
    );
    // `--ns3-topology` recognises every shape of the scenario's kinds from the file's links.
    let ns3 = help
        .split("--ns3-topology <FILE>")
        .nth(1)
        .unwrap()
        .split("--ns3-flows")
        .next()
        .unwrap()
        .replace(['\n', ' '], "");
    for k in &topo {
        let words = k.replace('_', "-");
        assert!(
            ns3.contains(k.as_str()) || ns3.contains(&words),
            "{k}: {ns3}"
        );
    }
}

#[test]
fn each_kind_help_describes_its_own_options() {
    use cc_replay::kinds::Kind;
    let fixtures = out(&sim_host(&["fixtures", "--help"]));
    for k in Kind::all() {
        let info = k.info();
        assert!(fixtures.contains(k.name()), "fixtures --only: {}", k.name());
        let help = out(&sim_host(&["replay", k.name(), "--help"]));
        let flat = help.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            flat.contains(&format!(
                "Minimum {} agreement, a ratio in [0, 1] [default: {}]",
                info.agreement, info.tolerances.min_agreement
            )),
            "{}: {flat}",
            k.name()
        );
        match info.rel_err_of {
            Some(q) => assert!(
                flat.contains(&format!("Maximum relative error of the {q}")),
                "{}",
                k.name()
            ),
            None => assert!(
                flat.contains(&format!("Not for {}: it compares the order", k.name())),
                "{}",
                k.name()
            ),
        }
        assert_eq!(
            flat.contains("forced is refused"),
            !info.has_forced_mode,
            "{}: --mode",
            k.name()
        );
        assert!(
            flat.contains(&format!("meaningful here: {}", info.meaningful)),
            "{}: --min-meaningful",
            k.name()
        );
        assert!(!flat.contains("0..1"), "{}: ranges as [0, 1]", k.name());
    }
}

#[test]
fn a_relative_error_limit_for_a_kind_without_one_is_refused() {
    let o = sim_host(&[
        "replay",
        "cats",
        "fixtures/cats/web_page.csv",
        "--max-rel-err",
        "0.5",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        err(&o).contains("--max-rel-err: cats compares the order of its decisions"),
        "{}",
        err(&o)
    );
    let o = sim_host(&[
        "replay",
        "all",
        "fixtures/pacer",
        "--max-p99-rel-err",
        "0.5",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        err(&o).contains("--max-p99-rel-err: no trace of this run has a relative error"),
        "{}",
        err(&o)
    );
    // A run with a kind that has one applies it there.
    let o = sim_host(&["replay", "all", "fixtures/timely", "--max-rel-err", "0.5"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
}

#[test]
fn the_docs_give_every_kind_its_registry_header_row() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let robustness = std::fs::read_to_string(root().join("docs/robustness.md")).unwrap();
    for k in cc_replay::kinds::Kind::all() {
        let h = format!("`{}`", k.header());
        assert!(readme.contains(&h), "README.md: {h}");
        assert!(robustness.contains(&h), "docs/robustness.md: {h}");
    }
}
