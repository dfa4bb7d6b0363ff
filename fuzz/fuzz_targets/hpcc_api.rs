//! HPCC's public API with arbitrary parameters and ACK sequences (raw INT bytes, or well-formed
//! INT blocks whose hop counters move by arbitrary steps), next to the f64 reference:
//! * every accepted configuration runs without a panic;
//! * the window stays in `[W_min, W_max]` and the rate is `Config::rate_bps(window)`;
//! * `bad` exactly when `IntView::parse` rejects the block (on both sides), state unchanged;
//!   `on_hop_words::<IntHop>` on the parsed view does exactly what `on_ack` did; raw parts
//!   round-trip;
//! * the reference's window stays in its exact `[min_rate·T, nic_rate·T]`;
//! * one step from the reference's state (forced mode) takes the reference's branch, except
//!   `md`/`ai` when the reference's `U` is within 2^-24 of `η` (docs/hpcc.md §2: the two `U`s
//!   differ by ~1e-9), and lands within 2^-28 (+2^-30) of its `U` and 1e-3 (+2/256 B) of its
//!   window (the Q24.8 window and Q32.32 `U` of a tiny `U`; docs/hpcc.md §3), plus, for `md`,
//!   the rounding of `a = Wc·η` (1/512 B, and η's 2^-32) divided by `U`.
//!
//! Input (little-endian): flags `u8` (bit 0: a parameter block follows: `nic_rate_bps: u64,
//! base_rtt_ns: u32, eta: (u32, u32), max_stage: u8, w_ai_bytes: u32, min_rate_bps: u64`; else
//! `Params::PAPER`), then events, each a kind byte:
//! * `0x00..=0x7f`: raw, `ack_seq: u32, snd_nxt: u32`, then `kind & 0x3f` bytes of INT;
//! * `0x80..`: well-formed, `nhop = (kind & 7) % 6`, bit 6 a new `path_id: u16` follows,
//!   `Δack_seq: u16, snd_nxt − ack_seq: u16`, then per hop `code: u8` (`% 9 + 1`),
//!   `Δts: u16, Δtx: u16, qlen: u16` added to that hop's previous counters (mod 2^24, 2^20).
#![no_main]

use fuzz_common::Bytes;
use hpcc_cc::{HpccBranch, IntView, Params, Ratio, State};
use libfuzzer_sys::fuzz_target;
use cc_replay::hpcc::reference::{RefHop, RefState, encode_int};
use cc_replay::hpcc::{Setup, quantise};

fuzz_target!(|data: &[u8]| {
    let mut b = Bytes::new(data);
    let flags = b.u8();
    let params = if flags & 1 != 0 {
        Params {
            nic_rate_bps: b.u64(),
            base_rtt_ns: b.u32(),
            eta: Ratio {
                num: b.u32(),
                den: b.u32(),
            },
            max_stage: b.u8(),
            w_ai_bytes: b.u32(),
            min_rate_bps: b.u64(),
        }
    } else {
        Params::PAPER
    };
    let Ok(Setup { cfg, refp }) = Setup::new(params) else {
        return;
    };
    let eta = refp.eta();
    let (w_min, w_max) = (cfg.w_min_bytes(), cfg.w_max_bytes());

    let mut fixed: State = State::new(&cfg);
    let mut reference = RefState::new(refp);
    let (mut ack, mut path_id) = (0u32, 0u16);
    let mut ts = [0u32; 5];
    let mut tx = [0u32; 5];
    let mut n = 0;
    while !b.is_empty() && n < 4096 {
        n += 1;
        let kind = b.u8();
        let (ack_seq, snd_nxt, int) = if kind & 0x80 == 0 {
            let (a, s) = (b.u32(), b.u32());
            (a, s, b.take(usize::from(kind & 0x3f)).to_vec())
        } else {
            let nhop = usize::from(kind & 7) % 6;
            if kind & 0x40 != 0 {
                path_id = b.u16() & 0x0FFF;
            }
            ack = ack.wrapping_add(u32::from(b.u16()));
            let nxt = ack.wrapping_add(u32::from(b.u16()));
            let hops: Vec<RefHop> = (0..nhop)
                .map(|i| {
                    let code = b.u8() % 9 + 1;
                    ts[i] = ts[i].wrapping_add(u32::from(b.u16())) & 0xFF_FFFF;
                    tx[i] = tx[i].wrapping_add(u32::from(b.u16())) & 0xF_FFFF;
                    RefHop {
                        code,
                        ts: ts[i],
                        tx: tx[i],
                        qlen: u32::from(b.u16()),
                    }
                })
                .collect();
            (ack, nxt, encode_int(path_id, &hops))
        };

        let view = IntView::<5>::parse(&int);
        let before = fixed;
        let ref_before = reference.clone();
        // One step from the reference's pre-event state (forced mode).
        let mut shadow: State = State::from_raw_parts(quantise(&reference));
        let forced = shadow.on_ack(&cfg, ack_seq, snd_nxt, &int);
        let up = fixed.on_ack(&cfg, ack_seq, snd_nxt, &int);
        let br = reference.on_ack(u64::from(ack_seq), u64::from(snd_nxt), &int);

        assert!((w_min..=w_max).contains(&up.window_bytes), "{up:?}");
        assert_eq!(up.rate_bps, cfg.rate_bps(up.window_bytes));
        assert_eq!(State::from_raw_parts(fixed.raw_parts()), fixed);
        let (w_ref, u_ref) = (reference.w, reference.u);
        // The reference clamps to the exact W_min = min_rate·T, W_max = nic_rate·T (the
        // config holds them in Q24.8).
        assert!(
            refp.w_min() <= w_ref && w_ref <= refp.w_max(),
            "reference window {w_ref} outside [{}, {}] ({params:?})",
            refp.w_min(),
            refp.w_max()
        );
        match view {
            Err(_) => {
                assert_eq!(up.branch, HpccBranch::Bad);
                assert_eq!(fixed, before, "a bad INT changed the state");
                assert_eq!(br, "bad");
            }
            Ok(v) => {
                assert_ne!(up.branch, HpccBranch::Bad);
                assert_ne!(br, "bad");
                // The parsed view's hop words through the format-generic entry point are the
                // same update.
                let mut again = before;
                let words = v.as_bytes().get(2..).unwrap_or(&[]);
                assert_eq!(
                    again.on_hop_words::<hpcc_cc::IntHop>(&cfg, ack_seq, snd_nxt, v.header(), words),
                    (up.window_bytes, up.branch),
                    "on_hop_words ≠ on_ack"
                );
                assert_eq!(again, fixed);
            }
        }

        // The forced step against the reference.
        let near_eta = (u_ref - eta).abs() <= 2f64.powi(-24);
        let md_ai = matches!((br, forced.branch.name()), ("md", "ai") | ("ai", "md"));
        assert!(
            forced.branch.name() == br || (md_ai && near_eta),
            "forced step: {} vs reference {br} (U {u_ref}, η {eta})",
            forced.branch.name()
        );
        if forced.branch.name() == br {
            let u_fx: f64 = shadow.u().to_num();
            let du = (u_fx - u_ref).abs();
            // The common ACK's 32-bit EWMA step floors in Q4.28: within two units (2^-27)
            // of the exact step, absolute (docs/hpcc.md § 8); the rest is relative.
            assert!(
                du <= 2f64.powi(-27) + 2f64.powi(-30) + 2f64.powi(-28) * u_ref,
                "U {u_fx} vs {u_ref}"
            );
            let w_fx: f64 = forced.window_bytes.to_num();
            let dw = (w_fx - w_ref).abs();
            // MD divides a = Wc·η, rounded to 1/512 B with η in Q1.31 (2^-32), by U: those
            // roundings grow by 1/U (docs/hpcc.md §3; a tiny η or Wc·η shows it).
            let md = if br == "md" {
                (1.0 / 512.0 + ref_before.wc * 2f64.powi(-32)) / u_ref
            } else {
                0.0
            };
            assert!(
                dw <= 2.0 / 256.0 + 1e-3 * w_ref + md,
                "window {w_fx} vs {w_ref} ({br}; U {u_fx} vs {u_ref})\n{params:?}\n\
                 reference before: {ref_before:?}\nafter: {reference:?}\n\
                 ack {ack_seq} nxt {snd_nxt} int {int:02x?}"
            );
        }
    }
});
