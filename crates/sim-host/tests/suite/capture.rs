//! RoCEv2 captures as NICs write them: each end of a connection with its own QPN, flows that
//! fail on their own, corrupt lengths named at their packet, captures that compare nothing, and
//! `sim --record`'s pcapng describing the same run as its CSV. Each test is named after what it
//! pins.

use crate::common::text;
use crate::common::{ack_rows as rows, root, sim_host};
use cc_trace::capture::{
    self, CaptureFlow, Pairing, StreamInfo, frames_of, pair_streams, read_capture, write_pcap,
    write_pcapng,
};
use cc_trace::hpcc::AckRow;
use std::path::{Path, PathBuf};

fn flow(src: u8, dst: u8, ack_qp: u32, data_qp: u32, sport: u16, rows: Vec<AckRow>) -> CaptureFlow {
    CaptureFlow {
        src: [10, 0, 0, src],
        dst: [10, 0, 0, dst],
        data_qp,
        ack_qp,
        sport,
        psn0: 0,
        pkt_bytes: 1000,
        seq0: 0,
        rows,
    }
}

/// The BTH opcode and destination QP of a frame the writer made (Ethernet, IPv4, UDP, INT).
fn bth(f: &[u8]) -> (u8, u32) {
    let at = 42 + 2 + 8 * usize::from(f[42] >> 4);
    (
        f[at],
        u32::from_be_bytes([0, f[at + 5], f[at + 6], f[at + 7]]),
    )
}

/// The streams of a capture file, as pass 1 of the replay sees them.
fn streams_of(p: &Path) -> Vec<StreamInfo> {
    let mut v: Vec<StreamInfo> = Vec::new();
    read_capture(p, |pk| {
        match v.iter_mut().find(|s| s.key == pk.stream()) {
            Some(s) => s.packets += 1,
            None => v.push(StreamInfo {
                key: pk.stream(),
                sport: Some(pk.sport),
                packets: 1,
            }),
        }
        Ok(())
    })
    .unwrap();
    v
}

/// The flow names (after `#`) and verdict lines of `replay hpcc` on `p`, with its exit code.
fn replay(p: &Path) -> (Option<i32>, String, String) {
    let o = sim_host(&["replay", "hpcc", p.to_str().unwrap()]);
    let (out, err) = text(&o);
    (o.status.code(), out, err)
}

#[test]
fn data_and_acks_carrying_each_ends_own_qpn_pair_into_one_flow() {
    let p = root().join("fixtures/hpcc/roce_pairs.pcapng");
    let streams = streams_of(&p);
    assert_eq!(streams.len(), 6, "{streams:#?}");
    let pairs = pair_streams(&streams);
    assert_eq!(pairs.len(), 3);
    for (k, pairing) in &pairs {
        let Pairing::Data(d) = pairing else {
            panic!("{pairing:?}")
        };
        let (ack, data) = (streams[*k].key, streams[*d].key);
        // The data carry the receiver's QPN, the ACKs the sender's: never the same here.
        assert_ne!(ack.qp, data.qp);
        assert_eq!((ack.src, ack.dst), (data.dst, data.src));
        assert_eq!(streams[*k].sport, streams[*d].sport);
    }
    let (code, out, err) = replay(&p);
    assert_eq!(code, Some(0), "{out}{err}");
    for name in [
        "roce_pairs.pcapng#qp161@10.0.3.1->qp433@10.0.3.2",
        "roce_pairs.pcapng#qp162@10.0.3.1->qp434@10.0.3.2",
        "roce_pairs.pcapng#qp433@10.0.3.2->qp161@10.0.3.1",
    ] {
        assert!(out.contains(name), "{name}\n{out}");
    }
    assert_eq!(
        out.matches("events              600 (0 skipped,").count(),
        3
    );
    assert!(
        out.contains("0 data packets of flows without ACKs"),
        "every data packet is paired: {out}"
    );
}

/// Each flow of the fixture replays exactly as the same flow alone in a capture (the pairing
/// feeds each flow its own data packets, whatever else the capture holds).
#[test]
fn each_paired_flow_replays_as_it_does_alone() {
    let d = tempfile::tempdir().unwrap();
    let frames = cc_replay::hpcc::generate::capture::roce_pairs_frames();
    let all = d.path().join("all.pcapng");
    std::fs::write(&all, write_pcapng(&frames, 128)).unwrap();
    let out_all = d.path().join("all.csv");
    let o = sim_host(&[
        "replay",
        "hpcc",
        all.to_str().unwrap(),
        "--out",
        out_all.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    for (tag, sender, sender_qp, receiver_qp) in [
        (
            "qp161@10.0.3.1-qp433@10.0.3.2",
            [10u8, 0, 3, 1],
            0x0A1,
            0x1B1,
        ),
        ("qp433@10.0.3.2-qp161@10.0.3.1", [10, 0, 3, 2], 0x1B1, 0x0A1),
    ] {
        // Keep this flow's data (from the sender, to the receiver's QPN) and its ACKs (to the
        // sender's QPN).
        let alone: Vec<(u64, Vec<u8>)> = frames
            .iter()
            .filter(|(_, f)| match bth(f) {
                (0x11, qp) => f[30..34] == sender && qp == sender_qp,
                (_, qp) => f[26..30] == sender && qp == receiver_qp,
            })
            .cloned()
            .collect();
        let one = d.path().join(format!("{tag}.pcapng"));
        std::fs::write(&one, write_pcapng(&alone, 128)).unwrap();
        let out_one = d.path().join(format!("{tag}.csv"));
        let o = sim_host(&[
            "replay",
            "hpcc",
            one.to_str().unwrap(),
            "--out",
            out_one.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
        // The rows, not the comment lines that name the input and the parameters.
        let rows = |p: &Path| {
            std::fs::read_to_string(p)
                .unwrap()
                .lines()
                .filter(|l| !l.starts_with('#'))
                .map(str::to_string)
                .collect::<Vec<_>>()
        };
        let got = rows(&d.path().join(format!("all-{tag}.csv")));
        let want = rows(&out_one);
        assert_eq!(got.len(), 601, "{tag}");
        assert!(
            got == want,
            "{tag}: the flow replays differently beside the others"
        );
    }
}

#[test]
fn both_directions_on_one_qp_number_are_two_flows() {
    // The older writer's convention: both ends use QPN 5, and data flow both ways.
    let d = tempfile::tempdir().unwrap();
    let frames = frames_of(&[
        flow(1, 2, 5, 5, 0xC005, rows(41, 200)),
        flow(2, 1, 5, 5, 0xC005, rows(42, 150)),
    ]);
    let p = d.path().join("both.pcap");
    std::fs::write(&p, write_pcap(&frames, 128)).unwrap();
    let (code, out, err) = replay(&p);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(
        out.contains("both.pcap#qp5@10.0.0.1->qp5@10.0.0.2"),
        "{out}"
    );
    assert!(
        out.contains("both.pcap#qp5@10.0.0.2->qp5@10.0.0.1"),
        "{out}"
    );
    assert!(out.contains("events              200 (0 skipped,"), "{out}");
    assert!(out.contains("events              150 (0 skipped,"), "{out}");
}

/// ACKs that no data stream pairs with compare nothing: the flow is named with the reason and
/// the run exits 2, as a CSV trace with nothing meaningful to compare does.
#[test]
fn acks_no_data_stream_can_be_paired_with_fail_by_name() {
    // Two connections from 10.0.0.1 to 10.0.0.2 whose ACKs leave from other UDP ports than
    // their data: which data stream each acknowledges cannot be told.
    let d = tempfile::tempdir().unwrap();
    let mut frames = frames_of(&[
        flow(1, 2, 7, 0x107, 0xC007, rows(43, 100)),
        flow(1, 2, 8, 0x108, 0xC008, rows(44, 100)),
    ]);
    for (_, f) in &mut frames {
        if f[26..30] == [10, 0, 0, 2] {
            f[34..36].copy_from_slice(&0xE000u16.to_be_bytes());
        }
    }
    let p = d.path().join("amb.pcapng");
    std::fs::write(&p, write_pcapng(&frames, 128)).unwrap();
    let (code, out, err) = replay(&p);
    assert_eq!(code, Some(2), "{out}{err}");
    assert_eq!(out.matches("NOTHING TO COMPARE").count(), 2, "{out}");
    assert_eq!(out.matches("FAIL").count(), 0, "{out}");
    assert!(
        out.contains("amb.pcapng#qp7@10.0.0.1->qp?@10.0.0.2"),
        "{out}"
    );
    assert!(
        out.contains("cannot tell which of the 2 data streams from 10.0.0.1 to 10.0.0.2"),
        "{out}"
    );
}

/// A flow whose every INT block is invalid compares nothing: it is named with the reason (exit
/// 2, as for a CSV trace), and the other flow of the capture keeps its pass.
#[test]
fn a_flow_whose_int_is_all_invalid_fails_by_name_and_the_others_keep_their_verdicts() {
    let d = tempfile::tempdir().unwrap();
    let mut bad = rows(45, 120);
    for r in &mut bad {
        // One hop with the reserved speed code 0: `bad` on both sides.
        r.int = vec![0x10, 0x01, 0, 0, 0, 0, 0, 0, 0, 0];
    }
    let frames = frames_of(&[
        flow(1, 2, 11, 0x211, 0xC011, rows(46, 120)),
        flow(3, 2, 12, 0x212, 0xC012, bad),
    ]);
    let p = d.path().join("mixed.pcapng");
    std::fs::write(&p, write_pcapng(&frames, 128)).unwrap();
    let (code, out, err) = replay(&p);
    assert_eq!(code, Some(2), "{out}{err}");
    let good = "mixed.pcapng#qp11@10.0.0.1->qp529@10.0.0.2";
    let failing = "mixed.pcapng#qp12@10.0.0.3->qp530@10.0.0.2";
    let block = |name: &str| {
        out.split("hpcc replay of ")
            .find(|b| b.contains(name))
            .unwrap_or_else(|| panic!("{name}\n{out}"))
    };
    assert!(block(good).contains("verdict             PASS"), "{out}");
    assert!(
        block(failing)
            .contains("verdict             NOTHING TO COMPARE: nothing meaningful to compare in"),
        "{out}"
    );
    // Standard error says why, once, for the flow that compared nothing.
    assert_eq!(err.matches("error: ").count(), 1, "{err}");
    assert!(
        err.contains("error: nothing meaningful to compare in") && err.contains(failing),
        "{err}"
    );
}

#[test]
fn a_capture_without_data_packets_does_not_pass() {
    let d = tempfile::tempdir().unwrap();
    let frames = frames_of(&[
        flow(1, 2, 13, 0x213, 0xC013, rows(47, 100)),
        flow(3, 2, 14, 0x214, 0xC014, rows(48, 100)),
    ]);
    // Only the ACKs (a capture of one direction): nothing can be compared.
    let acks: Vec<_> = frames
        .iter()
        .filter(|(_, f)| bth(f).0 == 0x11)
        .cloned()
        .collect();
    let p = d.path().join("acks.pcapng");
    std::fs::write(&p, write_pcapng(&acks, 128)).unwrap();
    let (code, out, err) = replay(&p);
    assert_eq!(code, Some(2), "{out}{err}");
    assert!(err.contains("acks.pcapng"), "{err}");
    assert!(
        err.contains("no RoCEv2 data packets") && err.contains("nothing can be compared"),
        "{err}"
    );
    // One flow's data missing: that flow fails, named, with the reason; the other passes.
    let some: Vec<_> = frames
        .iter()
        .filter(|(_, f)| bth(f).0 == 0x11 || f[26..30] != [10, 0, 0, 3])
        .cloned()
        .collect();
    let p = d.path().join("half.pcapng");
    std::fs::write(&p, write_pcapng(&some, 128)).unwrap();
    let (code, out, err) = replay(&p);
    assert_eq!(code, Some(2), "{out}{err}");
    assert!(
        out.contains("PASS") && out.contains("NOTHING TO COMPARE"),
        "{out}"
    );
    assert!(
        out.contains("no data packets from 10.0.0.3 to 10.0.0.2 in the capture"),
        "{out}"
    );
    assert!(
        out.contains("half.pcapng#qp14@10.0.0.3->qp?@10.0.0.2"),
        "{out}"
    );
}

/// Offsets of the records of a nanosecond pcap (after the 24-byte header).
fn pcap_records(b: &[u8]) -> Vec<usize> {
    let mut v = Vec::new();
    let mut off = 24;
    while off + 16 <= b.len() {
        v.push(off);
        off += 16 + u32::from_le_bytes(b[off + 8..off + 12].try_into().unwrap()) as usize;
    }
    v
}

/// Offsets of the Enhanced Packet Blocks of a little-endian pcapng.
fn pcapng_packets(b: &[u8]) -> Vec<usize> {
    let mut v = Vec::new();
    let mut off = 0;
    while off + 12 <= b.len() {
        let ty = u32::from_le_bytes(b[off..off + 4].try_into().unwrap());
        if ty == 6 {
            v.push(off);
        }
        off += u32::from_le_bytes(b[off + 4..off + 8].try_into().unwrap()) as usize;
    }
    v
}

#[test]
fn a_corrupt_record_length_mid_file_is_an_error_at_that_packet() {
    let d = tempfile::tempdir().unwrap();
    let pcap = std::fs::read(root().join("fixtures/hpcc/capture.pcap")).unwrap();
    let pcapng = std::fs::read(root().join("fixtures/hpcc/capture.pcapng")).unwrap();
    let (recs, blocks) = (pcap_records(&pcap), pcapng_packets(&pcapng));
    assert_eq!(recs.len(), blocks.len());
    let k = recs.len() * 6 / 10; // 60 % into the file
    let mut cases: Vec<(&str, Vec<u8>)> = Vec::new();
    // pcap: a captured length far past the buffer and the end of the file.
    let mut b = pcap.clone();
    b[recs[k] + 8..recs[k] + 12].copy_from_slice(&0x0100_0000u32.to_le_bytes());
    cases.push(("huge.pcap", b));
    // pcapng: a block length past the end of the file, and one 8 bytes too long inside it.
    for (name, len) in [("huge.pcapng", 0x0100_0000u32), ("plus8.pcapng", 0)] {
        let mut b = pcapng.clone();
        let at = blocks[k] + 4;
        let old = u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
        let new = if len == 0 { old + 8 } else { len };
        b[at..at + 4].copy_from_slice(&new.to_le_bytes());
        cases.push((name, b));
    }
    for (name, bytes) in cases {
        let p = d.path().join(name);
        std::fs::write(&p, bytes).unwrap();
        let (code, out, err) = replay(&p);
        assert_eq!(code, Some(2), "{name}: {out}{err}");
        assert!(err.contains(name), "{err}");
        assert!(
            err.contains(&format!("corrupt record at packet {}", k + 1)),
            "{name}: {err}"
        );
        assert!(!err.contains("capture ends inside"), "{name}: {err}");
    }
}

const RECORDED: &str = r#"
name = "t_rec"
algorithm = "hpcc"
duration_ns = 1_000_000
[params]
base_rtt_ns = 13000
[topology]
kind = "star"
hosts = 5
host_rate_bps = 100_000_000_000
buffer = "per_port"
buffer_bytes = 60_000
ecn_threshold_bytes = 20_000
[[flows]]
kind = "incast"
src = [1, 2, 3, 4]
dst = 0
size_bytes = 200_000
start_ns = 1_000
[output]
record_flows = [0, 1]
"#;

/// The `--out` columns of a replay that describe the run (all but `t_ns`, which the capture
/// offsets to 2023).
fn windows(out: &Path) -> Vec<String> {
    std::fs::read_to_string(out)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            [&f[..1], &f[2..]].concat().join(",")
        })
        .collect()
}

#[test]
fn the_recorded_pcapng_replays_to_the_same_windows_as_the_recorded_csv() {
    let d = tempfile::tempdir().unwrap();
    let sc = d.path().join("t_rec.toml");
    std::fs::write(&sc, RECORDED).unwrap();
    let rec = d.path().join("rec");
    std::fs::create_dir(&rec).unwrap();
    let o = sim_host(&[
        "sim",
        sc.to_str().unwrap(),
        "--record",
        rec.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    for id in [0, 1] {
        // The run's values (e.g. the authors' preset's maxStage 0, which is not the replay's
        // default) are `# set` lines of the CSV and `set` comments of the capture's section
        // header: both replay without `--set`.
        let csv = std::fs::read_to_string(rec.join(format!("t_rec_flow{id}.csv"))).unwrap();
        assert!(csv.contains("# set max_stage=0\n"), "{csv}");
        let mut got = Vec::new();
        for ext in ["csv", "pcapng"] {
            let input = rec.join(format!("t_rec_flow{id}.{ext}"));
            let out = d.path().join(format!("flow{id}.{ext}.out.csv"));
            let o = sim_host(&[
                "replay",
                "hpcc",
                input.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
                "--json",
            ]);
            assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
            let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
            let params = v.to_string();
            assert!(
                params.contains(&input.display().to_string()),
                "flow {id} {ext}: the parameters in force do not name the file: {params}"
            );
            got.push(windows(&out));
        }
        assert!(got[0].len() > 150, "flow {id}: {} ACKs", got[0].len());
        assert_eq!(got[0].len(), got[1].len(), "flow {id}");
        for (a, b) in got[0].iter().zip(&got[1]) {
            assert_eq!(
                a, b,
                "flow {id}: the capture and the CSV describe different runs"
            );
        }
    }
}

/// The summaries of `replay hpcc` on `p` read once (no `--out`: streams paired as they appear)
/// and read twice (`--out`: streams found and paired first).
fn once_and_twice(p: &Path, out_dir: &Path) -> (serde_json::Value, serde_json::Value) {
    use cc_replay::opts::ReplayOpts;
    let once = cc_replay::hpcc::replay(p, &ReplayOpts::default()).unwrap();
    let twice = cc_replay::hpcc::replay(
        p,
        &ReplayOpts {
            out: Some(out_dir.join("o.csv")),
            ..ReplayOpts::default()
        },
    )
    .unwrap();
    (
        serde_json::to_value(&once).unwrap(),
        serde_json::to_value(&twice).unwrap(),
    )
}

#[test]
fn a_capture_read_once_replays_exactly_as_read_twice() {
    let d = tempfile::tempdir().unwrap();
    // Every data stream seen before its ACKs: the pairing as streams appear is the final one.
    let (once, twice) = once_and_twice(&root().join("fixtures/hpcc/roce_pairs.pcapng"), d.path());
    assert_eq!(once, twice);
    assert_eq!(once.as_array().unwrap().len(), 3);
    // An ACK before any data of its connection (the capture started mid-flow), and a second
    // connection of the host pair showing up later: the first pairing of both ACK streams
    // differs from the final one, so the capture is replayed again with the final pairing.
    let mut later = rows(52, 150);
    for r in &mut later {
        r.t_ns += 5_000;
    }
    let mut frames = frames_of(&[
        flow(1, 2, 21, 0x221, 0xC021, rows(51, 150)),
        flow(1, 2, 22, 0x222, 0xC022, later),
    ]);
    let late = frames
        .iter()
        .position(|(_, f)| f[34..36] == [0xC0, 0x22])
        .unwrap();
    let first = frames.iter().position(|(_, f)| bth(f).0 == 0x11).unwrap();
    let mut early_ack = frames[first].clone();
    early_ack.0 = frames[0].0 - 1;
    frames.insert(0, early_ack);
    assert!(late > 20, "the second connection starts later ({late})");
    let p = d.path().join("late.pcapng");
    std::fs::write(&p, write_pcapng(&frames, 128)).unwrap();
    let (once, twice) = once_and_twice(&p, d.path());
    assert_eq!(once, twice);
    let flows = once.as_array().unwrap();
    assert_eq!(flows.len(), 2);
    assert!(
        flows
            .iter()
            .all(|s| s["within_tolerance"] == true && s["events"] != 0),
        "{once:#}"
    );
}

/// A pcapng Simple Packet Block has no timestamp: it is counted as such, not replayed, and
/// its length is checked like any block's (its data may be cut to the snapshot length).
#[test]
fn simple_packet_blocks_are_counted_as_without_a_timestamp() {
    let d = tempfile::tempdir().unwrap();
    let mut b = std::fs::read(root().join("fixtures/hpcc/capture.pcapng")).unwrap();
    // An SPB whose frame (1 100 bytes on the wire) was cut to 64 bytes.
    let mut spb = Vec::new();
    spb.extend_from_slice(&3u32.to_le_bytes());
    spb.extend_from_slice(&(12u32 + 4 + 64).to_le_bytes());
    spb.extend_from_slice(&1100u32.to_le_bytes());
    spb.extend_from_slice(&[0u8; 64]);
    spb.extend_from_slice(&(12u32 + 4 + 64).to_le_bytes());
    b.extend_from_slice(&spb);
    let p = d.path().join("spb.pcapng");
    std::fs::write(&p, &b).unwrap();
    let (code, out, err) = replay(&p);
    assert_eq!(code, Some(0), "{out}{err}");
    assert_eq!(out.matches("1 without a timestamp").count(), 2, "{out}");
}

/// In `--json`, a flow that compares nothing is a result with its reason (neither within nor
/// outside tolerance), beside the other flows' results.
#[test]
fn a_failing_flow_is_a_result_with_its_reason_in_json() {
    let d = tempfile::tempdir().unwrap();
    let frames = frames_of(&[
        flow(1, 2, 15, 0x215, 0xC015, rows(49, 100)),
        flow(3, 2, 16, 0x216, 0xC016, rows(50, 100)),
    ]);
    let some: Vec<_> = frames
        .iter()
        .filter(|(_, f)| bth(f).0 == 0x11 || f[26..30] != [10, 0, 0, 3])
        .cloned()
        .collect();
    let p = d.path().join("half.pcapng");
    std::fs::write(&p, write_pcapng(&some, 128)).unwrap();
    let o = sim_host(&["replay", "hpcc", p.to_str().unwrap(), "--json"]);
    assert_eq!(o.status.code(), Some(2), "{:?}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let schema = std::fs::read_to_string(root().join("docs/replay.schema.json")).unwrap();
    let schema = jsonschema::validator_for(&serde_json::from_str(&schema).unwrap()).unwrap();
    let errs: Vec<String> = schema.iter_errors(&v).map(|e| e.to_string()).collect();
    assert!(errs.is_empty(), "{errs:?}");
    assert_eq!(v["summary"]["results"], 2);
    assert_eq!(v["summary"]["within_tolerance"], 1);
    assert_eq!(v["summary"]["outside_tolerance"], 0);
    assert_eq!(v["summary"]["nothing_to_compare"], 1);
    assert_eq!(v["summary"]["errors"], 0);
    assert_eq!(v["summary"]["exit_code"], 2);
    let failing = &v["results"][1];
    assert!(
        failing["trace"]
            .as_str()
            .unwrap()
            .ends_with("half.pcapng#qp16@10.0.0.3->qp?@10.0.0.2"),
        "{failing:#}"
    );
    assert_eq!(failing["details"]["ACKs not replayed"], 100);
    assert!(
        failing["nothing_to_compare"]
            .as_str()
            .unwrap()
            .starts_with("no data packets from 10.0.0.3 to 10.0.0.2"),
        "{failing:#}"
    );
    assert_eq!(failing["within_tolerance"], false);
    assert_eq!(failing["failures"].as_array().unwrap().len(), 0);
}

/// The capture of one generated flow, its section header commented with `comments`.
fn commented(d: &Path, name: &str, comments: &[&str]) -> PathBuf {
    let flow = CaptureFlow {
        src: [10, 0, 0, 1],
        dst: [10, 0, 0, 2],
        data_qp: 0x11,
        ack_qp: 0x12,
        sport: 0xC001,
        psn0: 0,
        pkt_bytes: 1000,
        seq0: 0,
        rows: rows(3, 200),
    };
    let comments: Vec<String> = comments.iter().map(|c| c.to_string()).collect();
    let p = d.join(name);
    let bytes = capture::write_pcapng_with(&frames_of(&[flow]), 128, 9, 0, &comments);
    std::fs::write(&p, bytes).unwrap();
    p
}

#[test]
fn a_pcapng_section_header_sets_parameters_and_set_wins_over_them() {
    let d = tempfile::tempdir().unwrap();
    let p = commented(
        d.path(),
        "c.pcapng",
        &["recorded by hand", "set max_stage=2", "set\teta=0.9"],
    );
    let params = capture::capture_params(&p).unwrap();
    let kv: Vec<(&str, &str)> = params
        .iter()
        .map(|p| (p.key.as_str(), p.value.as_str()))
        .collect();
    assert_eq!(kv, [("max_stage", "2"), ("eta", "0.9")]);
    let o = sim_host(&["replay", "hpcc", p.to_str().unwrap(), "--set", "eta=0.8"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(
        out.contains("max_stage=2 (") && out.contains("(section header)"),
        "{out}"
    );
    assert!(out.contains("eta=0.8 (--set)"), "{out}");
    // A pcap has no section header: no parameters.
    let pcap = d.path().join("c.pcap");
    std::fs::write(
        &pcap,
        write_pcap(&cc_replay::hpcc::generate::capture::capture_frames(), 128),
    )
    .unwrap();
    assert!(capture::capture_params(&pcap).unwrap().is_empty());
}

#[test]
fn a_capture_parameter_that_is_malformed_mistyped_repeated_or_in_a_later_section_is_refused() {
    let d = tempfile::tempdir().unwrap();
    // The same rules as a trace's `# set` lines: each of these would otherwise leave a
    // default in force, or pick one of two values, without a word.
    for (comments, says) in [
        (&["set eta"][..], "needs KEY=VALUE"),
        (&["set =0.9"][..], "needs KEY=VALUE"),
        (
            &["Set eta=0.9"][..],
            "looks like a parameter line but is not one",
        ),
        (
            &["SET eta=0.9"][..],
            "looks like a parameter line but is not one",
        ),
        (
            &["set:eta=0.9"][..],
            "looks like a parameter line but is not one",
        ),
        (
            &["set eta=0.9", "set eta=0.5"][..],
            "`set eta` again (first set in an earlier comment)",
        ),
        (&["set eta=abc"][..], "(section header): parameter eta"),
        (&["set bogus=1"][..], "unknown parameter \"bogus\""),
    ] {
        let p = commented(d.path(), "bad.pcapng", comments);
        let o = sim_host(&["replay", "hpcc", p.to_str().unwrap()]);
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{comments:?}: {err}");
        assert!(err.contains(says), "{comments:?}: {err}");
    }
    // Two sections: the second's `set` would apply to packets already replayed.
    let first = std::fs::read(commented(d.path(), "a.pcapng", &["set eta=0.9"])).unwrap();
    let second = std::fs::read(commented(d.path(), "b.pcapng", &["set eta=0.5"])).unwrap();
    let p = d.path().join("two.pcapng");
    std::fs::write(&p, [first, second].concat()).unwrap();
    let o = sim_host(&["replay", "hpcc", p.to_str().unwrap()]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("section 2's header sets parameters (eta)"),
        "{err}"
    );
}
