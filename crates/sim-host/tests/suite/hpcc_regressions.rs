//! HPCC regression tests, each named after the bug it pins. They drive the public lockstep
//! driver ([`Flow`]: firmware crate and f64 reference side by side) so they test exactly what
//! `sim-host replay hpcc` reports; where both windows sit at a clamp (W_min or W_max) the window
//! proves nothing, so those tests also assert U or the branch.

use cc_replay::hpcc::reference::{RefHop, RefParams, RefState, encode_int};
use cc_replay::hpcc::{Flow, Setup};
use cc_replay::opts::{Mode, ReplayOpts};
use cc_replay::summary::Summary;
use cc_trace::{InputError, parse_cli_set};

fn setup(sets: &[&str]) -> Setup {
    let params: Vec<_> = sets.iter().map(|s| parse_cli_set(s).unwrap()).collect();
    Setup::from_params(&params).unwrap()
}

/// One hop per ACK: `(dts, dtx_units, qlen)` applied `n` times after a first INT at ts 0, tx 0.
/// `ack_seq` = i·1000, `snd_nxt` = ack_seq + 1000 (so every ACK updates Wc).
fn constant_hop(
    setup: Setup,
    code: u8,
    dts: u32,
    dtx: u32,
    qlen: u32,
    n: u32,
    mode: Mode,
) -> Summary {
    let mut f = Flow::new("t".into(), setup, &[], mode, None, None).unwrap();
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
    s.details["U max abs. error"].as_f64().unwrap()
}

/// The reference's branch counts (`branches (ref)`: `{"ai": 3, "md": 5}`).
fn branches(s: &Summary) -> std::collections::BTreeMap<String, u64> {
    s.details["branches (ref)"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_u64().unwrap()))
        .collect()
}

fn assert_targets(s: &Summary) {
    let e = s.rel_err.as_ref().unwrap();
    assert!(s.agreement.ratio >= 0.999, "{}", s.render());
    assert!(e.p99 <= 1e-3 && e.max <= 1e-2, "{}", s.render());
}

/// Regression: paper config, 100G hop, Δts 41 ns, Δtx 2
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

/// Regression, a second case: T = 1 ms, 10G, qlen 14842, Δts 1024:
/// T/(2τ) ≈ 488 ulps of dead band in the old format.
#[test]
fn ewma_deadband_long_rtt_slow_link() {
    let st = setup(&["nic_rate_bps=10000000000", "base_rtt_ns=1000000"]);
    for mode in [Mode::Free, Mode::Forced] {
        let s = constant_hop(st, 1, 1024, 0, 14842, 30_000, mode);
        assert_targets(&s);
        // u' = 14842·80/(1.25·1e6) = 0.949 888 < η: the window climbs to W_max on both sides,
        // so U and the branches carry the evidence.
        assert!(u_err(&s) < 1e-6, "{}", s.render());
        assert!(branches(&s)["ai"] > 20_000, "{}", s.render());
    }
}

/// Regression, idle link: u' = 0, Δts 100, T 13 000: the reference
/// decays to 0; the old fixed U stayed at 64 ulps (1.5e-5) forever.
#[test]
fn ewma_deadband_idle_link_decays_to_zero() {
    let s = constant_hop(setup(&[]), 5, 100, 0, 0, 20_000, Mode::Free);
    assert_targets(&s);
    assert!(u_err(&s) < 1e-6, "{}", s.render());
}

/// Regression: one 100G hop, (ts 0, tx 0) then (ts 16383, tx 959941):
/// txRate/B = 959941·128/16383/12.5 = 600.0; W = 162500·0.95/600 + 80 = 337.3 B. The old code
/// saturated the intermediate at ~512 and reported u = 1024, W = 230.8 B.
#[test]
fn tx_term_saturated_at_512_instead_of_its_true_value_600() {
    let s = constant_hop(setup(&[]), 5, 16383, 959_941, 0, 1, Mode::Free);
    assert_targets(&s);
    assert!(u_err(&s) < 1e-4, "{}", s.render());
    assert_eq!(branches(&s).get("md"), Some(&1), "{}", s.render());
}

/// Regression: a genuine queue above the old 1024 limit: 25G hop, T = 1000 ns, qlen 65535:
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
    // W = Wc·η/1677.7 is far below W_min = 125 B: both windows sit at W_min, so the window
    // proves nothing. U must be the true 1677.7 (not clipped) on both sides, and every update MD.
    assert!(u_err(&s) < 1e-6 * 1678.0, "{}", s.render());
    let u_ref: f64 = s.details["U max (ref)"].as_f64().unwrap();
    assert!((u_ref - 1677.7).abs() < 0.1, "{}", s.render());
    assert_eq!(branches(&s).get("md"), Some(&2_000), "{}", s.render());
}

/// Regression, glitch sample: Δts 353 ns, Δtx 50 MB (a switch counter reset) gives u' ≈ 9063
/// on one ACK, then normal traffic; the old code clipped it to 1024 and the window stayed 10× off.
#[test]
fn u_clipped_at_1024_on_a_counter_glitch() {
    let mut f = Flow::new("t".into(), setup(&[]), &[], Mode::Free, None, None).unwrap();
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
    // U jumps to ≈ 1 + (9063 − 1)·353/13 000 ≈ 247 and decays; both sides follow it.
    assert!(u_err(&s) < 1e-6 * 247.0, "{}", s.render());
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
    // Both windows at W_min: U (≈ 1.07e8, not saturated) and the branch are what is checked.
    assert!(u_err(&s) <= 1e-6 * 1.08e8, "{}", s.render());
    assert_eq!(branches(&s).get("md"), Some(&3), "{}", s.render());
}

/// Regression: W_min of a fraction of a byte is not representable in Q24.8 and must be
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

/// Regression: the error names the line that set the offending key,
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
    let e = cc_replay::hpcc::replay(&t, &ReplayOpts::default()).unwrap_err();
    assert_eq!(e.line, Some(1), "{e}");
    assert!(e.msg.contains("min_rate_bps"), "{e}");
    std::fs::write(&t, "# set eta=0.9\n# set base_rtt_ns=5\n# set w_ai_bytes=80\nt_ns,ack_seq,snd_nxt,int\n1,2,3,0000\n").unwrap();
    let e = cc_replay::hpcc::replay(&t, &ReplayOpts::default()).unwrap_err();
    assert_eq!(e.line, Some(2), "{e}");
}

/// Minor: `int decode` accepted `0x` but not `0X`.
#[test]
fn int_decode_accepts_upper_case_0x_prefix() {
    let a = cc_replay::hpcc::int_decode("0x1abc5abcdef123456789").unwrap();
    let b = cc_replay::hpcc::int_decode("0X1ABC5ABCDEF123456789").unwrap();
    assert_eq!(a, b);
}

fn fixture(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/hpcc")
        .join(name)
}

/// Regression: a record above the reader's initial 64 KiB buffer (here a 100 KiB non-RoCE
/// frame in front of the shipped capture's frames) made the whole capture unreadable
/// (BufferTooSmall), in pcap and pcapng.
#[test]
fn capture_with_a_record_over_64_kib_was_rejected() {
    use cc_trace::capture;
    let d = tempfile::tempdir().unwrap();
    let mut frames = vec![(1u64, vec![0u8; 100 << 10])];
    frames.extend(cc_replay::hpcc::generate::capture::capture_frames());
    let want = cc_replay::hpcc::replay(&fixture("capture.pcap"), &ReplayOpts::default()).unwrap();
    for (name, bytes) in [
        ("big.pcap", capture::write_pcap(&frames, 1 << 20)),
        ("big.pcapng", capture::write_pcapng(&frames, 1 << 20)),
    ] {
        let p = d.path().join(name);
        std::fs::write(&p, bytes).unwrap();
        let got = cc_replay::hpcc::replay(&p, &ReplayOpts::default()).unwrap();
        assert_eq!(got.len(), want.len(), "{name}");
        for (g, w) in got.iter().zip(&want) {
            assert_eq!(g.events, w.events, "{name}");
            assert!(g.within_tolerance, "{}", g.render());
        }
    }
}

/// Regression: a capture whose last record is cut (tcpdump killed) was rejected whole
/// (UnexpectedEof); now what was read is replayed and the cut is reported.
#[test]
fn capture_cut_inside_its_last_record_was_rejected_whole() {
    let d = tempfile::tempdir().unwrap();
    for name in ["capture.pcap", "capture.pcapng"] {
        let full = std::fs::read(fixture(name)).unwrap();
        let p = d.path().join(name);
        std::fs::write(&p, &full[..full.len() - 7]).unwrap();
        let got = cc_replay::hpcc::replay(&p, &ReplayOpts::default()).unwrap();
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
    use cc_trace::capture;
    let d = tempfile::tempdir().unwrap();
    let frames: Vec<_> = cc_replay::hpcc::generate::capture::capture_frames()
        .into_iter()
        .take(50)
        .collect();
    let p = d.path().join("b2.pcapng");
    // 2^30 ticks per second, timestamps offset by 1000 s.
    let offset = 1000i64;
    let frames: Vec<_> = frames
        .into_iter()
        .map(|(t, f)| (t + 1_000_000_000 * offset as u64, f))
        .collect();
    std::fs::write(
        &p,
        capture::write_pcapng_with(&frames, 4096, 0x80 | 30, offset, &[]),
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

/// Seen on a NIC-like trace: two 400G hops with exactly equal u' (qlen 253/298,
/// Δtx/Δts 111/832 and 735/5600, T = 13 µs: u' = 0.372 676 9… on both). The f64 sums differ by
/// one ulp, and a reference comparing them took the second hop (τ = 5 600) while the fixed side
/// keeps the first (τ = 832): 67.5 % branch agreement. Both sides now take the first hop:
/// U = 1 + (u' − 1)·832/13 000 = 0.959 85 after the first tie (with τ = 5 600: 0.729 9).
#[test]
fn tie_between_hops_goes_to_first_hop_on_both_sides() {
    let hop = |ts, tx, qlen| RefHop {
        code: 7,
        ts,
        tx,
        qlen,
    };
    // The same tie on every ACK; the queues stay at 253/298 (qmin of two equal reports).
    let int_at = |k: u32| {
        encode_int(
            0x2A,
            &[
                hop(
                    (1_000 + 832 * k) & 0xFF_FFFF,
                    (50 + 111 * k) & 0xF_FFFF,
                    253,
                ),
                hop(
                    (9_000 + 5_600 * k) & 0xFF_FFFF,
                    (70 + 735 * k) & 0xF_FFFF,
                    298,
                ),
            ],
        )
    };
    let st = setup(&[]);
    // Both sides, first tie: U after the first hop's τ.
    let mut fixed = hpcc_cc::State::<5>::new(&st.cfg);
    let mut r = RefState::new(st.refp);
    fixed.on_ack(&st.cfg, 0, 1_000, &int_at(0));
    r.on_ack(0, 1_000, &int_at(0));
    let up = fixed.on_ack(&st.cfg, 1_000, 2_000, &int_at(1));
    assert_eq!(r.on_ack(1_000, 2_000, &int_at(1)), "md");
    assert_eq!(up.branch, hpcc_cc::HpccBranch::Md);
    let u1 = (640.0 * 253.0 * 832.0 + 1024.0 * 111.0 * 13_000.0) / (400.0 * 13_000.0 * 832.0);
    let want = 1.0 + (u1 - 1.0) * 832.0 / 13_000.0;
    let u_fix = fixed.u().to_num::<f64>();
    assert!((r.u - want).abs() < 1e-12, "reference U {} vs {want}", r.u);
    assert!((u_fix - want).abs() < 1e-8, "fixed U {u_fix} vs {want}");
    // A stream of such ties, free and forced: the branches and U agree throughout.
    for mode in [Mode::Free, Mode::Forced] {
        let mut f = Flow::new("tie".into(), st, &[], mode, None, None).unwrap();
        for k in 0..2_000u32 {
            f.event(
                None,
                u64::from(k) * 832,
                k * 1_000,
                k * 1_000 + 40_000,
                &int_at(k),
            )
            .unwrap();
        }
        let s = f.finish(&ReplayOpts::default()).unwrap();
        assert_targets(&s);
        assert_eq!(s.agreement.ratio, 1.0, "{}", s.render());
        // U: the firmware's 32-bit EWMA step (U in Q4.28) settles within ≈ (T/τ)·2^-28 of the
        // reference, 5.8e-8 at T/τ = 13 000/832 (measured 2.2e-8); the tie itself is pinned by
        // the branch agreement above and the first step's U.
        assert!(u_err(&s) < 1e-7, "{}", s.render());
    }
}

/// A flow's ACKs through both sides: `(window bytes, U, branch)` per ACK, sequence numbers
/// offset by `off` (modulo 2^32).
fn run_seq(st: Setup, off: u32, n: u32) -> Vec<(u32, u64, &'static str, f64, f64)> {
    let mut fixed = hpcc_cc::State::<5>::new(&st.cfg);
    let mut r = RefState::new(st.refp);
    let mut out = Vec::new();
    let (mut ts, mut tx) = (0u32, 0u32);
    for k in 0..n {
        // 1 000 B per ACK, 80 µs of traffic per 1000 ACKs; a queue that comes and goes.
        let qlen = if (k / 300) % 2 == 0 { 0 } else { 900 };
        let int = encode_int(
            1,
            &[RefHop {
                code: 5,
                ts,
                tx,
                qlen,
            }],
        );
        let ack = (k * 1_000).wrapping_add(off);
        let nxt = ack.wrapping_add(100_000);
        let up = fixed.on_ack(&st.cfg, ack, nxt, &int);
        let br = r.on_ack(u64::from(ack), u64::from(nxt), &int);
        assert_eq!(br, up.branch.name(), "ACK {k} (offset {off})");
        out.push((
            up.window_bytes.to_bits(),
            fixed.u().to_bits(),
            br,
            r.w,
            r.wc,
        ));
        ts = (ts + 85) & 0xFF_FFFF;
        tx = (tx + 8) & 0xF_FFFF;
    }
    out
}

/// Seen on a long flow: its byte sequence numbers pass 2^32 (every 0.34 s at 100 Gb/s);
/// with a plain `ack_seq > last_update_seq` no ACK updated Wc again after the wrap (window error
/// up to 3.3× against a wrap-aware reference). Serial-number order on both sides: the same
/// ACKs with the sequence numbers offset so that they cross 2^32 (at ACK 1 000) give exactly the
/// same windows, U and branches as without the wrap, and Wc keeps changing after it.
#[test]
fn wc_updates_after_seq_wraps_2_pow_32() {
    let st = setup(&[]);
    let plain = run_seq(st, 0, 3_000);
    let wrapped = run_seq(st, u32::MAX - 999_999, 3_000); // ACK 1 000 carries 0
    assert_eq!(plain, wrapped);
    let wc_changes_after_wrap = wrapped[1_001..]
        .windows(2)
        .filter(|w| w[0].4 != w[1].4)
        .count();
    assert!(wc_changes_after_wrap > 10, "{wc_changes_after_wrap}");
    // And through the lockstep driver, free and forced (forced re-seeds lastUpdateSeq mod 2^32).
    for mode in [Mode::Free, Mode::Forced] {
        let mut f = Flow::new("wrap".into(), st, &[], mode, None, None).unwrap();
        let (mut ts, mut tx) = (0u32, 0u32);
        for k in 0..3_000u32 {
            let int = encode_int(
                1,
                &[RefHop {
                    code: 5,
                    ts,
                    tx,
                    qlen: 0,
                }],
            );
            let ack = (k * 1_000).wrapping_add(u32::MAX - 999_999);
            f.event(
                None,
                u64::from(k) * 85,
                ack,
                ack.wrapping_add(100_000),
                &int,
            )
            .unwrap();
            ts = (ts + 85) & 0xFF_FFFF;
            tx = (tx + 8) & 0xF_FFFF;
        }
        let s = f.finish(&ReplayOpts::default()).unwrap();
        assert_targets(&s);
        assert_eq!(s.agreement.ratio, 1.0, "{}", s.render());
    }
    // The reference on its own, with u64 byte counts past 2^32 (as the generators pass them).
    let mut r = RefState::new(RefParams::default());
    let int = |k: u32| {
        encode_int(
            1,
            &[RefHop {
                code: 5,
                ts: k * 85,
                tx: k * 8,
                qlen: 0,
            }],
        )
    };
    r.on_ack((1 << 32) - 2_000, (1 << 32) - 1_000, &int(0));
    r.on_ack((1 << 32) + 500, (1 << 32) + 9_000, &int(1));
    assert_eq!(
        r.last_update_seq,
        (1 << 32) + 9_000,
        "an update ACK past 2^32"
    );
}

/// Captures: the BTH PSN is 24 bits. Passed on as is, the first ACK after the PSN
/// wrap looked 2^24 behind lastUpdateSeq and Wc froze for the rest of the capture. The reader
/// extends PSNs to 32 bits per flow: the shipped PSN-wrap capture replays exactly like the same
/// traffic with PSNs starting at 0 (no wrap), flow by flow, free and forced.
#[test]
fn capture_psn_wrap_replays_like_the_capture_without_it() {
    use cc_trace::capture;
    let d = tempfile::tempdir().unwrap();
    let no_wrap = d.path().join("no_wrap.pcapng");
    std::fs::write(
        &no_wrap,
        capture::write_pcapng(
            &cc_replay::hpcc::generate::capture::psn_wrap_frames_with([0, 0]),
            96,
        ),
    )
    .unwrap();
    for mode in [Mode::Free, Mode::Forced] {
        let o = ReplayOpts {
            mode,
            ..ReplayOpts::default()
        };
        let got = cc_replay::hpcc::replay(&fixture("psn_wrap.pcapng"), &o).unwrap();
        let want = cc_replay::hpcc::replay(&no_wrap, &o).unwrap();
        assert_eq!(got.len(), 2);
        for (g, w) in got.iter().zip(&want) {
            assert_eq!(g.events, 3_000);
            assert_eq!(g.events, w.events);
            assert_eq!(g.agreement.ratio, w.agreement.ratio, "{}", g.render());
            let (ge, we) = (g.rel_err.as_ref().unwrap(), w.rel_err.as_ref().unwrap());
            assert_eq!(
                (ge.max, ge.p99, ge.mean),
                (we.max, we.p99, we.mean),
                "{}\n{}",
                g.render(),
                w.render()
            );
            for k in ["branches (ref)", "U max abs. error", "U max (ref)"] {
                assert_eq!(g.details[k], w.details[k], "{k}");
            }
            assert!(g.within_tolerance, "{}", g.render());
        }
    }
}

/// The 24-bit PSN extension: wraps counted forwards, retransmissions (behind the largest PSN
/// sent) and ACKs on either side of the wrap map to consecutive 32-bit values.
#[test]
fn psn_extension_counts_24_bit_wraps() {
    use cc_trace::capture::PsnExtender;
    let top = (1u32 << 24) - 2;
    let mut e = PsnExtender::default();
    assert_eq!(
        e.on_ack(top - 5),
        (top - 5, 0),
        "before any data: the PSN as is"
    );
    let mut e = PsnExtender::default();
    for p in [top, top + 1, 0, 1] {
        e.on_data(p & 0xFF_FFFF);
    }
    e.on_data(top); // a retransmission: behind, ignored
    assert_eq!(e.on_ack(top + 1), (top + 1, (1 << 24) + 1));
    assert_eq!(e.on_ack(0), (1 << 24, (1 << 24) + 1));
    assert_eq!(e.on_ack(1), ((1 << 24) + 1, (1 << 24) + 1));
    // Many wraps: the 32-bit values keep counting, then wrap modulo 2^32.
    let mut e = PsnExtender::default();
    let mut psn = 0u64;
    for _ in 0..300 {
        for _ in 0..8 {
            psn += 1 << 21;
            e.on_data((psn & 0xFF_FFFF) as u32);
        }
        let (ack, nxt) = e.on_ack((psn & 0xFF_FFFF) as u32);
        assert_eq!(u64::from(ack), psn & 0xFFFF_FFFF);
        assert_eq!(ack, nxt);
    }
}

/// Found by the `hpcc_api` fuzz target (not a defect: the documented format's rounding). MD
/// computes `a = Wc·η` rounded to 1/512 B with `η` in Q1.31, then `a/U`: with η = 19/268 435 476
/// (7.1e-8, valid: η ∈ (0, 1]) and U = 8.5e-5, `a` = 0.0115 B is off by up to 1/512 B and the
/// window by up to 23 B: one step from the reference's state gives 218.12 B against 215.57 B
/// (1.2 %). The fuzz target's budget for an MD step is the rounding of `a` over U
/// (docs/robustness.md, docs/hpcc.md §3); this pins it on the case found.
#[test]
fn md_window_with_a_tiny_eta_is_off_by_the_rounding_of_wc_eta_over_u() {
    use cc_replay::hpcc::reference::RefInt;
    use hpcc_cc::{Params, Ratio, State};
    let params = Params {
        eta: Ratio {
            num: 19,
            den: 268_435_476,
        },
        ..Params::PAPER
    };
    let Setup { cfg, refp } = Setup::new(params).unwrap();
    let mut r = RefState::new(refp);
    (r.w, r.wc, r.u, r.inc_stage, r.last_update_seq) =
        (162.5, 162_500.0, 1621.103658809193, 0, 161_000);
    r.prev = Some(RefInt {
        nhop: 1,
        path_id: 161,
        hops: heapless::Vec::from_slice(&[RefHop {
            code: 5,
            ts: 124_636,
            tx: 38_931,
            qlen: 0,
        }])
        .unwrap(),
    });
    let int = [0x10, 0xa1, 0x50, 0x1e, 0x39, 0x10, 0x98, 0x9e, 0x00, 0x26];
    let mut fixed: State = State::from_raw_parts(cc_replay::hpcc::quantise(&r));
    let wc = r.wc;
    let up = fixed.on_ack(&cfg, 1_000, 164_000, &int);
    assert_eq!(
        (r.on_ack(1_000, 164_000, &int), up.branch.name()),
        ("md", "md")
    );
    let w = up.window_bytes.to_num::<f64>();
    let budget = 2.0 / 256.0 + 1e-3 * r.w + (1.0 / 512.0 + wc * 2f64.powi(-32)) / r.u;
    assert!(
        (w - r.w).abs() <= budget,
        "{w} vs {} (budget {budget})",
        r.w
    );
    assert!(
        (w - r.w).abs() > 1e-3 * r.w,
        "the rounding shows: {w} vs {}",
        r.w
    );
}
