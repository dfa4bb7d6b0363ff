//! Regression tests for the HPCC review (docs/hpcc.md "Review fixes"), each named after the bug.
//! They drive the public lockstep driver ([`Flow`]: firmware crate and f64 reference side by side)
//! so they test exactly what `sim-host replay hpcc` reports.

use sim_host::hpcc::reference::{RefHop, encode_int};
use sim_host::hpcc::replay::{Flow, Setup};
use sim_host::replay::{Mode, ReplayOpts};
use sim_host::summary::Summary;
use sim_host::trace::{InputError, parse_cli_set};

fn setup(sets: &[&str]) -> Setup {
    let params: Vec<_> = sets.iter().map(|s| parse_cli_set(s).unwrap()).collect();
    Setup::from_params(&params).unwrap()
}

/// One hop per ACK: `(dts, dtx_units, qlen)` applied `n` times after a first INT at ts 0, tx 0.
/// `ack_seq` = i·1000, `snd_nxt` = ack_seq + 1000 (so every ACK updates Wc, as in /tmp/rv).
fn constant_hop(
    setup: Setup,
    code: u8,
    dts: u32,
    dtx: u32,
    qlen: u32,
    n: u32,
    mode: Mode,
) -> Summary {
    let mut f = Flow::new("t".into(), setup, mode, None, None).unwrap();
    let (mut ts, mut tx, mut t) = (0u32, 0u32, 0u64);
    for i in 0..=n {
        let int = encode_int(1, &[RefHop { code, ts, tx, qlen }]);
        f.event(None, t, i * 1000, i * 1000 + 1000, &int).unwrap();
        ts = ts.wrapping_add(dts) & 0xFF_FFFF;
        tx = tx.wrapping_add(dtx) & 0xF_FFFF;
        t += u64::from(dts);
    }
    f.finish(&ReplayOpts::default()).unwrap()
}

fn u_err(s: &Summary) -> f64 {
    s.details["U max abs. error"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap()
}

fn assert_targets(s: &Summary) {
    let e = s.rel_err.as_ref().unwrap();
    assert!(s.agreement.ratio >= 0.999, "{}", s.render());
    assert!(e.p99 <= 1e-3 && e.max <= 1e-2, "{}", s.render());
}

/// Review defect 1 (reviewer's /tmp/rv/deadband2.csv): paper config, 100G hop, Δts 41 ns, Δtx 2
/// units, qlen 915: u' = 915·80/(12.5·13000) + 256/(41·12.5) = 0.45046 + 0.49951 = 0.949974 < η.
/// The reference settles just below η (`ai`); the old Q10.22 EWMA stopped ~T/(2τ) = 158 ulps
/// (3.8e-5) short of u, above η, and took `md`: 23 % branch agreement.
#[test]
fn ewma_deadband_constant_u_just_below_eta() {
    for mode in [Mode::Free, Mode::Forced] {
        let s = constant_hop(setup(&[]), 5, 41, 2, 915, 30_000, mode);
        assert_targets(&s);
        assert!(u_err(&s) < 1e-6, "{}", s.render());
    }
}

/// Review defect 1, second trace (/tmp/rv/deadband.csv): T = 1 ms, 10G, qlen 14842, Δts 1024:
/// T/(2τ) ≈ 488 ulps of dead band in the old format.
#[test]
fn ewma_deadband_long_rtt_slow_link() {
    let st = setup(&["nic_rate_bps=10000000000", "base_rtt_ns=1000000"]);
    for mode in [Mode::Free, Mode::Forced] {
        let s = constant_hop(st, 1, 1024, 0, 14842, 30_000, mode);
        assert_targets(&s);
    }
}

/// Review defect 1, idle link (/tmp/rv/smallu.csv-like): u' = 0, Δts 100, T 13 000: the reference
/// decays to 0; the old fixed U stayed at 64 ulps (1.5e-5) forever.
#[test]
fn ewma_deadband_idle_link_decays_to_zero() {
    let s = constant_hop(setup(&[]), 5, 100, 0, 0, 20_000, Mode::Free);
    assert_targets(&s);
    assert!(u_err(&s) < 1e-6, "{}", s.render());
}

/// Review defect 2 (/tmp/rv/sat2.csv): one 100G hop, (ts 0, tx 0) then (ts 16383, tx 959941):
/// txRate/B = 959941·128/16383/12.5 = 600.0; W = 162500·0.95/600 + 80 = 337.3 B. The old code
/// saturated the intermediate at ~512 and reported u = 1024, W = 230.8 B.
#[test]
fn tx_term_saturated_at_512_instead_of_its_true_value_600() {
    let s = constant_hop(setup(&[]), 5, 16383, 959_941, 0, 1, Mode::Free);
    assert_targets(&s);
    assert!(u_err(&s) < 1e-4, "{}", s.render());
}

/// Review defect 3: a genuine queue above the old 1024 limit: 25G hop, T = 1000 ns, qlen 65535:
/// u' = 65535·80/(3.125·1000) = 1677.7 on every ACK.
#[test]
fn u_clipped_at_1024_with_a_real_queue() {
    let st = setup(&[
        "base_rtt_ns=1000",
        "nic_rate_bps=25000000000",
        "min_rate_bps=1000000000",
    ]);
    let s = constant_hop(st, 2, 100, 0, 65535, 2_000, Mode::Free);
    assert_targets(&s);
    assert!(u_err(&s) < 1e-3 * 1678.0, "{}", s.render());
}

/// Review defect 3, glitch sample: Δts 353 ns, Δtx 50 MB (a switch counter reset) gives u' ≈ 9063
/// on one ACK, then normal traffic; the old code clipped it to 1024 and the window stayed 10× off.
#[test]
fn u_clipped_at_1024_on_a_counter_glitch() {
    let mut f = Flow::new("t".into(), setup(&[]), Mode::Free, None, None).unwrap();
    let mut ts = 0u32;
    let mut tx = 0u32;
    for i in 0..400u32 {
        let int = encode_int(
            1,
            &[RefHop {
                code: 5,
                ts,
                tx,
                qlen: 10,
            }],
        );
        f.event(None, u64::from(ts), i * 1000, i * 1000 + 1000, &int)
            .unwrap();
        let (dts, dtx) = if i == 5 {
            (353, 50_000_000 / 128)
        } else {
            (800, 70)
        };
        ts = (ts + dts) & 0xFF_FFFF;
        tx = (tx + dtx) & 0xF_FFFF;
    }
    let s = f.finish(&ReplayOpts::default()).unwrap();
    assert_targets(&s);
}

/// The largest u' the wire format can produce: 10G hop, T = 1000 ns, qlen 65535, Δts = 1 ns,
/// Δtx = 2^20 − 1 units: u' = 4194.2 + 107 374 080 ≈ 1.07e8 (the documented range: < 2^27).
#[test]
fn largest_u_the_wire_can_carry_is_not_saturated() {
    let st = setup(&[
        "base_rtt_ns=1000",
        "nic_rate_bps=10000000000",
        "min_rate_bps=1000000000",
    ]);
    let s = constant_hop(st, 1, 1, (1 << 20) - 1, 65535, 3, Mode::Free);
    assert_targets(&s);
    assert!(u_err(&s) <= 1e-6 * 1.08e8, "{}", s.render());
}

/// Review defect 4: W_min of a fraction of a byte is not representable in Q24.8 and must be
/// rejected (nic 1 Mb/s, T 16 777 215, min_rate 1 b/s → W_min = 2 mB).
#[test]
fn tiny_w_min_is_rejected() {
    for sets in [
        [
            "nic_rate_bps=1000000",
            "base_rtt_ns=16777215",
            "min_rate_bps=1",
        ],
        [
            "nic_rate_bps=100000000000",
            "base_rtt_ns=100000",
            "min_rate_bps=1000",
        ],
    ] {
        let params: Vec<_> = sets.iter().map(|s| parse_cli_set(s).unwrap()).collect();
        let e: InputError = Setup::from_params(&params).unwrap_err();
        assert!(e.msg.contains("min_rate_bps"), "{e}");
    }
}

/// Review defect 6 (/tmp/rv/mis.csv): the error names the line that set the offending key,
/// not the last parameter line.
#[test]
fn config_error_names_the_line_of_the_wrong_key() {
    let d = tempfile::tempdir().unwrap();
    let t = d.path().join("mis.csv");
    std::fs::write(
        &t,
        "# set min_rate_bps=200e9\n# set eta=0.9\nt_ns,ack_seq,snd_nxt,int\n1,2,3,0000\n",
    )
    .unwrap();
    let e = sim_host::hpcc::replay(&t, &ReplayOpts::default()).unwrap_err();
    assert_eq!(e.line, Some(1), "{e}");
    assert!(e.msg.contains("min_rate_bps"), "{e}");
    std::fs::write(&t, "# set eta=0.9\n# set base_rtt_ns=5\n# set w_ai_bytes=80\nt_ns,ack_seq,snd_nxt,int\n1,2,3,0000\n").unwrap();
    let e = sim_host::hpcc::replay(&t, &ReplayOpts::default()).unwrap_err();
    assert_eq!(e.line, Some(2), "{e}");
}

/// Minor: `int decode` accepted `0x` but not `0X`.
#[test]
fn int_decode_accepts_upper_case_0x_prefix() {
    let a = sim_host::hpcc::int_decode("0x1abc5abcdef123456789").unwrap();
    let b = sim_host::hpcc::int_decode("0X1ABC5ABCDEF123456789").unwrap();
    assert_eq!(a, b);
}

fn fixture(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/hpcc")
        .join(name)
}

/// Review defect 5: a record above the reader's initial 64 KiB buffer (here a 100 KiB non-RoCE
/// frame in front of the shipped capture's frames) made the whole capture unreadable
/// (BufferTooSmall), in pcap and pcapng.
#[test]
fn capture_with_a_record_over_64_kib_was_rejected() {
    use sim_host::hpcc::capture;
    let d = tempfile::tempdir().unwrap();
    let mut frames = vec![(1u64, vec![0u8; 100 << 10])];
    frames.extend(capture::capture_frames());
    let want = sim_host::hpcc::replay(&fixture("capture.pcap"), &ReplayOpts::default()).unwrap();
    for (name, bytes) in [
        ("big.pcap", capture::write_pcap(&frames, 1 << 20)),
        ("big.pcapng", capture::write_pcapng(&frames, 1 << 20)),
    ] {
        let p = d.path().join(name);
        std::fs::write(&p, bytes).unwrap();
        let got = sim_host::hpcc::replay(&p, &ReplayOpts::default()).unwrap();
        assert_eq!(got.len(), want.len(), "{name}");
        for (g, w) in got.iter().zip(&want) {
            assert_eq!(g.events, w.events, "{name}");
            assert!(g.within_tolerance, "{}", g.render());
        }
    }
}

/// Review defect 5: a capture whose last record is cut (tcpdump killed) was rejected whole
/// (UnexpectedEof); now what was read is replayed and the cut is reported.
#[test]
fn capture_cut_inside_its_last_record_was_rejected_whole() {
    let d = tempfile::tempdir().unwrap();
    for name in ["capture.pcap", "capture.pcapng"] {
        let full = std::fs::read(fixture(name)).unwrap();
        let p = d.path().join(name);
        std::fs::write(&p, &full[..full.len() - 7]).unwrap();
        let got = sim_host::hpcc::replay(&p, &ReplayOpts::default()).unwrap();
        let total: u64 = got.iter().map(|s| s.events).sum();
        assert!(total >= 799, "{name}: {total}");
        let warn = got[0]
            .details
            .get("warning")
            .and_then(|v| v.as_str())
            .unwrap_or("");
        assert!(
            warn.contains("capture ends inside"),
            "{name}: {}",
            got[0].render()
        );
    }
}

/// Minor: pcapng with a base-2 `if_tsresol` (bit 7 set) was read as microseconds, and
/// `if_tsoffset` was ignored.
#[test]
fn pcapng_base_2_tsresol_and_tsoffset_were_ignored() {
    use sim_host::hpcc::capture;
    let d = tempfile::tempdir().unwrap();
    let frames: Vec<_> = capture::capture_frames().into_iter().take(50).collect();
    let p = d.path().join("b2.pcapng");
    // 2^30 ticks per second, timestamps offset by 1000 s.
    let offset = 1000i64;
    let frames: Vec<_> = frames
        .into_iter()
        .map(|(t, f)| (t + 1_000_000_000 * offset as u64, f))
        .collect();
    std::fs::write(
        &p,
        capture::write_pcapng_with(&frames, 4096, 0x80 | 30, offset),
    )
    .unwrap();
    let mut got = Vec::new();
    capture::read_capture(&p, |pk| {
        got.push(pk.t_ns);
        Ok(())
    })
    .unwrap();
    assert_eq!(got.len(), frames.len());
    for (g, (t, _)) in got.iter().zip(&frames) {
        assert!(g.abs_diff(*t) <= 1, "{g} vs {t}");
    }
}
