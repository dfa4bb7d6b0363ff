//! DOCA PCC event traces end to end: every shipped fixture (scripted or recorded from the
//! closed loop) replays within tolerance, the
//! fixtures are what the generators make, and the edge cases of the platform's events (the
//! 32-bit clock wrapping inside a probe, lost and late probes, coalesced and undocumented
//! events, parameters changed mid-flow) behave the same on both sides; bad rows are refused
//! with their line; the JSON matches the schema.

use crate::common::{root, sim_host};
use cc_replay::opts::ReplayOpts;
use cc_replay::summary::Summary;
use sim_host::fixtures;
use std::collections::BTreeSet;
use std::path::PathBuf;

fn fixture_files() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root().join("fixtures/pcc"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "csv"))
        .collect();
    v.sort();
    v
}

const HEAD: &str = "type,subtype,flags,flow,ts_ns,a,b,c,telemetry\n";

/// Two answered TIMELY probes on flow [`TAIL_FLOW`] (no packets, no bytes, answered within
/// 20 µs): one step of Algorithm 1 after `init`. A scripted TIMELY stream of one sample per flow
/// (`init`) steps the algorithm nowhere, so on its own it compares nothing meaningful and writes
/// no `--out`; [`replay_rows`] then adds this tail and leaves its rows out.
const TAIL: &str = "tx,,,7,10000000,10000000,0,0,\n\
                    rtt,,,7,10020000,10000000,0,0,\n\
                    tx,,,7,10030000,10030000,0,0,\n\
                    rtt,,,7,10050000,10030000,0,0,\n";
const TAIL_FLOW: &str = "7";

/// Replays `rows` (after the header) with `--out` — with [`TAIL`] after them when they compare
/// nothing meaningful on their own; the summary and the `--out` data rows of `rows`.
fn replay_rows(rows: &str) -> Result<(Summary, Vec<Vec<String>>), String> {
    let (s, out) = replay_text(&format!("{HEAD}{rows}"))?;
    if s.nothing_to_compare.is_none() {
        return Ok((s, out.unwrap_or_default()));
    }
    let (s, out) = replay_text(&format!("{HEAD}{rows}{TAIL}"))?;
    let out = out.unwrap_or_else(|| panic!("{:?}", s.nothing_to_compare));
    Ok((
        s,
        out.into_iter()
            .filter(|r| col(r, "flow") != TAIL_FLOW)
            .collect(),
    ))
}

/// The data rows of an `--out` file, split into fields.
type Rows = Vec<Vec<String>>;

/// Replays a whole trace with `--out`; the summary and the `--out` data rows (`None`: not
/// written, nothing meaningful compared).
fn replay_text(text: &str) -> Result<(Summary, Option<Rows>), String> {
    let d = tempfile::tempdir().unwrap();
    let trace = d.path().join("t.csv");
    std::fs::write(&trace, text).unwrap();
    let out = d.path().join("out.csv");
    let opts = ReplayOpts {
        out: Some(out.clone()),
        min_meaningful: Some(0.0),
        ..ReplayOpts::default()
    };
    let s = cc_replay::pcc::replay(&trace, &opts)
        .map_err(|e| e.to_string())?
        .remove(0);
    let Ok(text) = std::fs::read_to_string(&out) else {
        return Ok((s, None));
    };
    let rows = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .skip(1)
        .map(|l| l.split(',').map(String::from).collect())
        .collect();
    Ok((s, Some(rows)))
}

/// Column `name` of an `--out` row.
fn col<'a>(row: &'a [String], name: &str) -> &'a str {
    let i = cc_replay::pcc::OUT_HEADER
        .split(',')
        .position(|c| c == name)
        .unwrap();
    &row[i]
}

#[test]
fn every_fixture_replays_within_tolerance() {
    let files = fixture_files();
    assert_eq!(files.len(), 9, "{files:?}");
    let mut seen = BTreeSet::new();
    for f in &files {
        let s = cc_replay::pcc::replay(f, &ReplayOpts::default())
            .unwrap()
            .remove(0);
        assert!(s.within_tolerance, "{}", s.render());
        let e = s.rel_err.as_ref().unwrap();
        assert!(s.agreement.ratio >= 0.999 && e.p99 <= 1e-3 && e.max <= 1e-2);
        if let Some(serde_json::Value::Object(m)) = s.details.get("branches ref") {
            seen.extend(m.keys().cloned());
        }
    }
    // Together the fixtures take every probe outcome and the main rate branches.
    for b in [
        "probe",
        "timeout",
        "tx",
        "late",
        "unsolicited",
        "duplicate",
        "counted",
        "init",
        "low",
        "inc",
        "dec",
        "hai",
        "high",
        "ai",
        "md",
    ] {
        assert!(seen.contains(b), "no fixture takes branch {b}: {seen:?}");
    }
}

#[test]
fn committed_fixtures_are_what_the_generators_make() {
    let made = fixtures::generate(cc_replay::pcc::KIND);
    assert_eq!(made.len(), 9);
    for f in made {
        let on_disk = std::fs::read(root().join("fixtures/pcc").join(&f.name)).unwrap();
        assert!(
            on_disk == f.bytes,
            "fixtures/pcc/{} differs from its generator: run `cargo run -p sim-host -- fixtures --only pcc`",
            f.name
        );
    }
}

#[test]
fn the_clock_wrap_fixture_answers_a_probe_across_the_wrap() {
    let text = std::fs::read_to_string(root().join("fixtures/pcc/timely_clock_wrap.csv")).unwrap();
    let across = text.lines().filter(|l| l.starts_with("rtt,")).any(|l| {
        let f: Vec<u64> = l
            .split(',')
            .skip(4)
            .take(2)
            .map(|x| x.parse().unwrap())
            .collect();
        f[0] < f[1]
    });
    assert!(
        across,
        "no probe response timestamped before its request (wrapped)"
    );
}

#[test]
fn an_rtt_across_the_32_bit_clock_wrap_is_the_wrapped_difference() {
    // Requested 1 000 ns before the wrap, sent 100 ns later, answered 30 µs after the request
    // (past the wrap); the responder's clock wraps too: turnaround 2 µs from 4294967000.
    let t0 = u32::MAX - 999;
    let rows = format!(
        "tx,,,1,{t0},{t0},512,16,\nrtt,,,1,{},{},4294967000,1704,\ntx,,,1,{},{},512,16,\n",
        t0.wrapping_add(30_000),
        t0 + 100,
        t0.wrapping_add(40_000),
        t0.wrapping_add(40_000),
    );
    let (s, out) = replay_rows(&rows).unwrap();
    // 30 000 − 100 − 2 000 = 27 900 ns on both sides (one RTT: `init`).
    assert_eq!(col(&out[1], "rtt_ns"), "27900");
    assert_eq!(col(&out[1], "branch_fixed"), "init");
    assert_eq!(col(&out[2], "branch_fixed"), "probe");
    assert_eq!(s.agreement.ratio, 1.0);
}

#[test]
fn a_late_answer_to_a_timed_out_probe_is_ignored_on_both_sides() {
    let rows = "tx,,,1,1000,1000,512,16,\n\
                tx,,,1,301000,301000,512,16,\n\
                rtt,,,1,320000,1100,5000,6000,\n\
                rtt,,,1,330000,301100,5000,6000,\n\
                rtt,,,1,340000,301100,5000,6000,\n";
    let (s, out) = replay_rows(rows).unwrap();
    let br: Vec<_> = out.iter().map(|r| col(r, "branch_ref")).collect();
    let bf: Vec<_> = out.iter().map(|r| col(r, "branch_fixed")).collect();
    // The second TX gives the first probe up; the old probe's answer is late; the new one's
    // answer is a sample; a duplicate of it comes with no probe outstanding: unsolicited.
    assert_eq!(br, ["probe", "timeout", "late", "init", "unsolicited"]);
    assert_eq!(bf, br);
    let c = &s.details["adapter counters"];
    assert_eq!(c["PROBES_TIMED_OUT"], 1);
    assert_eq!(c["PROBES_LATE"], 1);
    assert_eq!(c["PROBES_UNSOLICITED"], 1);
}

#[test]
fn coalesced_and_undocumented_events_leave_the_rate_and_are_counted() {
    let rows = "tx,,,1,1000,1000,2048,64,\n\
                ack,,,1,2000,1500,10,32,\n\
                nack,1,,1,2100,2100,11,3,\n\
                cnp,,,1,2200,2200,0,5,\n\
                9,,,1,2300,,,,\n\
                rtt,,,1,30000,1200,500,1500,\n";
    let (s, out) = replay_rows(rows).unwrap();
    for r in &out[1..5] {
        assert_eq!(col(r, "branch_ref"), "counted");
        assert_eq!(col(r, "branch_fixed"), "counted");
        assert_eq!(col(r, "rate_fixed_q20"), "1048576");
    }
    let c = &s.details["adapter counters"];
    assert_eq!(c["TX_PACKETS"], 64);
    assert_eq!(c["TX_32B_UNITS"], 2048);
    assert_eq!(c["ACK_COALESCED"], 32);
    assert_eq!(c["NACK_COALESCED"], 3);
    assert_eq!(c["CNP_COALESCED"], 5);
    assert_eq!(c["EV_UNKNOWN"], 1);
}

#[test]
fn a_param_row_changes_both_sides_from_that_event_on() {
    // Two samples at 100 µs then 120 µs: gradient 0.875·20/20 = 0.875 → dec by β·0.875; with
    // β set to 0.5 before the second sample, the rate falls to 1 − 0.4375 of line rate.
    let rows = "tx,,,1,1000,1000,512,16,\n\
                rtt,,,1,101000,1000,0,0,\n\
                tx,,,1,102000,102000,512,16,\n\
                param,,,0,102500,7,500,,\n\
                rtt,,,1,222000,102000,0,0,\n";
    let (s, out) = replay_rows(rows).unwrap();
    assert_eq!(s.details["parameter changes"], 1);
    // `--out` has the change where it happened (a comment row, skipped by `replay_rows`).
    assert_eq!(out.len(), 4);
    let last = out.last().unwrap();
    assert_eq!(col(last, "branch_fixed"), "dec");
    let q20: f64 = col(last, "rate_fixed_q20").parse().unwrap();
    let expect = (1.0 - 0.5 * 0.875) * f64::from(1u32 << 20);
    assert!((q20 - expect).abs() <= 0.5, "{q20} vs {expect}");
    assert_eq!(s.agreement.ratio, 1.0);
}

#[test]
fn a_param_row_the_adapter_refuses_is_an_error_at_its_line() {
    let e = replay_rows("tx,,,1,1000,1000,512,16,\nparam,,,0,1000,3,600000,,\n").unwrap_err();
    assert!(e.contains(":3: param row refused"), "{e}");
    let e = replay_rows("param,,,0,1000,99,1,,\n").unwrap_err();
    assert!(e.contains(":2: param row refused"), "{e}");
    let e = replay_rows("param,,,0,1000,7,,,\n").unwrap_err();
    assert!(e.contains(":2: a param row needs"), "{e}");
}

#[test]
fn malformed_event_rows_are_refused_with_their_line_and_field() {
    for (row, what) in [
        (
            "tx,,,1,1000,1000,65536,16,\n",
            "field b (sent 32-byte units)",
        ),
        ("tx,,,1,1000,1000,16,70000,\n", "field c (packets)"),
        ("rtt,,,1,1000,900,,5,\n", "field b: empty"),
        (
            "rtt,,,1,1000,900,1,5,00112233445566778899aabb\n",
            "field telemetry",
        ),
        ("probe,,,1,1000,900,1,5,\n", "field type"),
        ("tx,,,1,4294967296,1,1,1,\n", "ts_ns"),
    ] {
        let e = replay_rows(row).unwrap_err();
        assert!(e.contains(":2:") && e.contains(what), "{row}: {e}");
    }
}

#[test]
fn a_timely_trace_replayed_as_hpcc_is_refused_at_its_first_probe_answer() {
    let o = sim_host(&[
        "replay",
        "pcc",
        "fixtures/pcc/timely_steady.csv",
        "--set",
        "algorithm=hpcc",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("field telemetry") && e.contains("24 hex digits"),
        "{e}"
    );
}

/// The 12-byte telemetry record as hex: queue cells, switch index, tx bytes, tx timestamp.
fn tel(cells: u16, index: u8, tx: u32, ts: u32) -> String {
    let mut b = Vec::new();
    b.extend(cells.to_be_bytes());
    b.extend([index, 0]);
    b.extend(tx.to_be_bytes());
    b.extend(ts.to_be_bytes());
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// A probe requested by a TX at `t`, leaving with the TX at `t + 100` (`RTT_REQ_SENT`, flag 4),
/// answered 10 µs after the request with `telemetry` as the response's raw data.
fn hpcc_probe(t: u32, telemetry: &str) -> String {
    format!(
        "tx,,,1,{t},{t},512,16,\ntx,,4,1,{},{},512,16,\nrtt,,,1,{},,,,{telemetry}\n",
        t + 100,
        t + 100,
        t + 10_000,
    )
}

#[test]
fn hpcc_responses_are_matched_by_departure_on_both_sides() {
    let mut rows = "# set algorithm=hpcc\n".to_string();
    let (a, b) = (tel(10, 3, 0, 0), tel(10, 3, 125_000, 12_500));
    rows += "rtt,,,1,500,,,,000a03000000000000000001\n"; // nothing asked: unsolicited
    rows += "tx,,,1,1000,1000,512,16,\n"; // requested
    rows += &format!("rtt,,,1,1050,,,,{a}\n"); // before it left: late
    rows += &format!("tx,,4,1,1100,1100,512,16,\nrtt,,,1,11000,,,,{a}\n"); // left, answered: init
    rows += &format!("rtt,,,1,11100,,,,{a}\n"); // the same record again: duplicate
    rows += "tx,,,1,13500,13500,512,16,\ntx,,4,1,13600,13600,512,16,\n";
    rows += &format!("rtt,,,1,23500,,,,{a}\nrtt,,,1,23600,,,,{b}\n"); // duplicate, then the answer
    let (s, out) = replay_rows(&rows).unwrap();
    let rtt: Vec<(String, String)> = out
        .iter()
        .filter(|r| col(r, "type") == "rtt")
        .map(|r| (col(r, "branch_ref").into(), col(r, "branch_fixed").into()))
        .collect();
    let refs: Vec<&str> = rtt.iter().map(|x| x.0.as_str()).collect();
    assert_eq!(
        refs,
        [
            "unsolicited",
            "late",
            "init",
            "duplicate",
            "duplicate",
            "ai"
        ]
    );
    assert!(rtt.iter().all(|(a, b)| a == b), "{rtt:?}");
    let c = &s.details["adapter counters"];
    assert_eq!(
        (
            &c["PROBES_DEPARTED"],
            &c["PROBES_DUPLICATE"],
            &c["PROBES_LATE"]
        ),
        (&2.into(), &2.into(), &1.into())
    );
}

#[test]
fn an_hpcc_rtt_row_with_timestamps_is_refused_at_its_line() {
    let rows = format!(
        "# set algorithm=hpcc\ntx,,,1,1000,1000,512,16,\nrtt,,,1,9000,1100,0,0,{}\n",
        tel(1, 3, 0, 0)
    );
    let e = replay_rows(&rows).unwrap_err();
    assert!(e.contains(":4:") && e.contains("leave a,b,c empty"), "{e}");
}

#[test]
fn docs_pcc_md_layout_table_is_the_adapters_layout() {
    let doc = std::fs::read_to_string(root().join("docs/pcc.md")).unwrap();
    let (b, e) = (
        doc.find("<!-- pcc-layout:begin").unwrap(),
        doc.find("<!-- pcc-layout:end").unwrap(),
    );
    let rows: Vec<&str> = doc[b..e].lines().filter(|l| l.starts_with("| `")).collect();
    assert_eq!(rows.len(), cc_pcc::LAYOUT.len());
    for (row, f) in rows.iter().zip(cc_pcc::LAYOUT) {
        let want = format!(
            "| `{}` | {}–{} | {}–{} |",
            f.getter,
            f.offset,
            f.offset + 3,
            f.shift,
            f.shift + f.bits - 1
        );
        assert!(row.starts_with(&want), "{row}\n  want {want}");
    }
}

#[test]
fn hpcc_reads_telemetry_counters_across_their_wrap() {
    // 100G port, 12.5 µs between samples: 125 000 bytes (a multiple of 32) across the byte
    // counter's 2^32 wrap and the switch clock's; queue 10 cells.
    let mut rows = "# set algorithm=hpcc\n".to_string();
    let (tx0, ts0) = (u32::MAX - 60_000, u32::MAX - 5_000);
    for i in 0..4u32 {
        let t = 1_000 + i * 12_500;
        rows += &hpcc_probe(
            t,
            &tel(
                10,
                3,
                tx0.wrapping_add(i * 125_000),
                ts0.wrapping_add(i * 12_500),
            ),
        );
    }
    let (s, out) = replay_rows(&rows).unwrap();
    let br: Vec<_> = out
        .iter()
        .filter(|r| col(r, "type") == "rtt")
        .map(|r| col(r, "branch_fixed").to_string())
        .collect();
    assert_eq!(br[0], "init");
    assert!(br[1..].iter().all(|b| b == "md" || b == "ai"), "{br:?}");
    assert_eq!(s.agreement.ratio, 1.0);
    assert!(s.rel_err.unwrap().max < 1e-5);
}

#[test]
fn a_telemetry_gap_and_another_switch_restart_the_hop_on_both_sides() {
    let mut rows = "# set algorithm=hpcc\n".to_string();
    rows += &hpcc_probe(1_000, &tel(10, 3, 0, 0));
    rows += &hpcc_probe(13_500, &tel(10, 3, 125_000, 12_500));
    // 5 ms later: more than the counters span at 100G (1.34 ms): `init`, counted.
    rows += &hpcc_probe(5_013_500, &tel(10, 3, 50_000_000, 5_012_500));
    rows += &hpcc_probe(5_026_000, &tel(10, 3, 50_125_000, 5_025_000));
    // Switch 4 instead of 3: a path change.
    rows += &hpcc_probe(5_038_500, &tel(10, 4, 50_250_000, 5_037_500));
    let (s, out) = replay_rows(&rows).unwrap();
    let br: Vec<_> = out
        .iter()
        .filter(|r| col(r, "type") == "rtt")
        .map(|r| {
            (
                col(r, "branch_ref").to_string(),
                col(r, "branch_fixed").to_string(),
            )
        })
        .collect();
    let names: Vec<&str> = br.iter().map(|b| b.0.as_str()).collect();
    assert!(br.iter().all(|(a, b)| a == b), "{br:?}");
    assert_eq!(names[0], "init");
    assert_eq!(names[2], "init");
    assert_eq!(names[4], "resync");
    assert_eq!(s.details["adapter counters"]["TELEMETRY_GAP"], 1);
}

/// The adapter keeps the byte counter in 32-byte units (docs/pcc.md): on a port whose counter
/// advances byte by byte, each sample's Δtx is off by up to 31 bytes, U near η flips an
/// `ai`/`md` decision now and then, and in free mode the offset lasts. The shipped fixtures
/// count in multiples of 32 bytes; this pins what byte-granular counters cost on the same
/// stream (docs/pcc.md quotes it).
#[test]
fn byte_granular_tx_counters_cost_hpcc_the_p99_target_through_the_32_byte_unit() {
    let mut k = cc_replay::pcc::generate::STREAMS
        .iter()
        .find(|k| k.name == "hpcc_telemetry.csv")
        .unwrap()
        .clone();
    k.tx_granule = 1;
    let f = cc_replay::pcc::generate::stream(&k);
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("bytes.csv");
    std::fs::write(&p, &f.bytes).unwrap();
    let s = cc_replay::pcc::replay(&p, &ReplayOpts::default())
        .unwrap()
        .remove(0);
    let e = s.rel_err.as_ref().unwrap();
    // The flips are rare (branch agreement stays ≥ 99.9 %), but each leaves a lasting offset of
    // about 1 % of the window: both error targets are exceeded, and bounded (docs/pcc.md).
    assert!(s.agreement.ratio >= 0.999 && e.max < 2e-2, "{}", s.render());
    assert!(
        e.p99 > 1e-3 && e.max > 1e-2,
        "p99 {:.3e}, max {:.3e}: update docs/pcc.md",
        e.p99,
        e.max
    );
}

#[test]
fn replay_all_finds_pcc_traces_and_the_json_matches_the_schema() {
    let text = std::fs::read_to_string(root().join("docs/replay.schema.json")).unwrap();
    let schema =
        jsonschema::validator_for(&serde_json::from_str(&text).unwrap()).expect("a JSON Schema");
    let o = sim_host(&["replay", "all", "fixtures/pcc", "--json"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let errs: Vec<String> = schema.iter_errors(&v).map(|e| e.to_string()).collect();
    assert!(errs.is_empty(), "{errs:?}");
    let results = v["results"].as_array().unwrap();
    assert_eq!(results.len(), 9);
    assert!(results.iter().all(|r| r["kind"] == "pcc"));
}

#[test]
fn an_hpcc_trace_compares_its_values_with_hpccs_defaults() {
    // sim_hpcc.csv sets every HPCC key, most at HPCC's defaults: only those that differ from
    // HPCC's table (not from TIMELY's, the kind's default algorithm) are listed as differing.
    let s = cc_replay::pcc::replay(
        &root().join("fixtures/pcc/sim_hpcc.csv"),
        &ReplayOpts::default(),
    )
    .unwrap()
    .remove(0);
    let differs: Vec<&str> = s
        .params
        .iter()
        .filter(|p| p.differs)
        .map(|p| p.key.as_str())
        .collect();
    assert!(differs.is_empty(), "{differs:?}");
    assert!(
        s.params
            .iter()
            .any(|p| p.key == "eta_milli" && p.value == "950")
    );
}

#[test]
fn help_lists_every_parameter_of_both_adapter_tables() {
    let o = sim_host(&["replay", "pcc", "--help"]);
    let text = String::from_utf8_lossy(&o.stdout);
    for p in cc_pcc::TIMELY_PARAMS.iter().chain(&cc_pcc::HPCC_PARAMS) {
        assert!(
            text.contains(&p.name.to_ascii_lowercase()),
            "{} missing:\n{text}",
            p.name
        );
    }
    assert!(text.contains(cc_replay::pcc::HEADER));
}
