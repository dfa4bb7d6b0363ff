//! TIMELY's public API with arbitrary parameters and completion sequences, next to the f64
//! reference (sim-host's lockstep, free mode, which also makes the one-step forced comparison):
//! * every accepted configuration runs without a panic;
//! * the rate stays in `[min_rate, max_rate]` (as the 128 b/s units the config rounds them to)
//!   on the fixed side and in `[min_rate, max_rate]` on the reference, a multiple of 128 b/s;
//! * `skip` exactly when `t_complete < t_send`, with the state unchanged;
//! * the reported RTT is the RTT engine's, and `on_rtt` with it does exactly what
//!   `on_completion` did; raw parts round-trip;
//! * one step from the reference's state (forced mode) takes the reference's branch and lands
//!   within the error budget of docs/timely.md: 256 b/s (two roundings to the 128 b/s unit)
//!   plus 2^-20 of the rate before the event (2^-15 with per-completion scaling: its `s` is a
//!   ratio in Q30, and the change it scales is at most that rate; a scaled increase also
//!   `N·δ·2^-30`).
//!
//! Input (little-endian): flags `u8` (bit 0 application-limited rule, bit 1 per-completion
//! scaling, bit 2 a parameter block follows); the block: `line_rate_bps, min_rate_bps,
//! max_rate_bps, init_rate_bps: u64`, `t_low_ns, t_high_ns, min_rtt_ns: u32`, `alpha, beta:
//! (u32 num, u32 den)`, `delta_bps: u64`, `hai_n, hai_after: u32`, `app_limited: (u32, u32)`
//! (else `Params::DEFAULT`, app-limited 4/5); then `t0: u64` and events of 16 bytes
//! `(Δt_send: u32, t_complete − t_send: i64, bytes: u32)`.
#![no_main]

use fuzz_common::Bytes;
use libfuzzer_sys::fuzz_target;
use cc_replay::opts::Mode;
use cc_replay::timely::lockstep::Lockstep;
use cc_replay::timely::params;
use cc_trace::{Param, parse_cli_set};
use std::path::Path;
use timely_cc::{TimelyBranch, Completion, RTT_MAX, State};

fn set(k: &str, v: impl std::fmt::Display) -> Param {
    parse_cli_set(&format!("{k}={v}")).expect("KEY=VALUE")
}

fuzz_target!(|data: &[u8]| {
    let mut b = Bytes::new(data);
    let flags = b.u8();
    let mut sets = Vec::new();
    let mut app = (4u32, 5u32);
    if flags & 4 != 0 {
        for k in [
            "line_rate_bps",
            "min_rate_bps",
            "max_rate_bps",
            "init_rate_bps",
        ] {
            sets.push(set(k, b.u64()));
        }
        for k in ["t_low_ns", "t_high_ns", "min_rtt_ns"] {
            sets.push(set(k, b.u32()));
        }
        for k in ["alpha", "beta"] {
            let (n, d) = (b.u32(), b.u32());
            sets.push(set(k, format!("{n}/{d}")));
        }
        sets.push(set("delta_bps", b.u64()));
        sets.push(set("hai_n", b.u32()));
        sets.push(set("hai_after", b.u32()));
        app = (b.u32(), b.u32());
    }
    if flags & 1 != 0 {
        sets.push(set("app_limited", format!("{}/{}", app.0, app.1)));
    }
    let scaling = flags & 2 != 0;
    if scaling {
        sets.push(set("per_completion_scaling", "true"));
    }
    let Ok(both) = params::build(Path::new("fuzz"), &sets) else {
        return;
    };
    let cfg = both.cfg;
    let p = *cfg.params();
    // The config holds rates as round(x / 128) units (within x/8192 of x, or rejected).
    let unit = |x: u64| (x + 64) / 128 * 128;
    let (lo_fx, hi_fx) = (unit(p.min_rate_bps), unit(p.max_rate_bps));
    let (lo_rf, hi_rf) = (both.reference.min_rate_bps, both.reference.max_rate_bps);

    let mut ls = Lockstep::new(&both, Mode::Free);
    let mut st = State::new(&cfg);
    let mut t_send = b.u64();
    let mut prev_send: Option<u64> = None;
    let mut n = 0;
    while b.len() >= 16 && n < 4096 {
        n += 1;
        t_send = t_send.wrapping_add(u64::from(b.u32()));
        let t_complete = t_send.wrapping_add(b.u64());
        let bytes = b.u32();

        // The lockstep's sending-rate estimate, for the bare state beside it.
        let sending = match prev_send {
            Some(prev) if t_send > prev => {
                Some((f64::from(bytes) * 8e9 / (t_send - prev) as f64).round() as u64)
            }
            _ => None,
        };
        prev_send = Some(t_send);
        let ev = Completion {
            t_send_ns: t_send,
            t_complete_ns: t_complete,
            bytes,
            sending_rate_bps: sending,
        };
        let before = st;
        let ref_before = *ls.reference();
        let up = st.on_completion(&cfg, &ev);
        let o = ls.step(t_send, t_complete, bytes);

        assert_eq!(
            (up.rate_bps, up.branch.name()),
            (o.rate_fixed_bps, o.branch_fixed)
        );
        assert_eq!(State::from_raw_parts(st.raw_parts()), st, "raw parts round trip");
        assert!(
            up.rate_bps.is_multiple_of(128) && (lo_fx..=hi_fx).contains(&up.rate_bps),
            "{up:?}"
        );
        assert!(
            (lo_rf..=hi_rf).contains(&o.rate_ref_bps),
            "ref {}",
            o.rate_ref_bps
        );
        if t_complete < t_send {
            assert_eq!(up.branch, TimelyBranch::Skip, "{ev:?}");
            assert_eq!(st, before, "skip changed the state");
            assert_eq!(o.branch_ref, "skip");
        } else {
            assert_ne!(up.branch, TimelyBranch::Skip);
            let rtt = State::rtt_ns(&cfg, &ev).expect("t_complete ≥ t_send");
            assert!(rtt <= RTT_MAX);
            assert_eq!(up.rtt_ns, rtt);
            let mut again = before;
            assert_eq!(
                again.on_rtt(&cfg, rtt, bytes, sending),
                up,
                "on_rtt ≠ on_completion"
            );
            assert_eq!(again, st);
        }

        // One step from the reference's state: the reference's branch, within the budget.
        assert_eq!(
            o.forced_branch, o.branch_ref,
            "forced step takes another branch: {o:?}"
        );
        let rel = if scaling {
            2f64.powi(-15)
        } else {
            2f64.powi(-20)
        };
        // A scaled increase is s·N·δ with s in Q30: N·δ·2^-31 (docs/timely.md).
        let n = match o.branch_ref {
            "hai" => f64::from(p.hai_n),
            "low" | "inc" => 1.0,
            _ => 0.0,
        };
        let step = n * p.delta_bps as f64;
        let s_q30 = if scaling { step * 2f64.powi(-30) } else { 0.0 };
        // δ itself is held in 128 b/s units, rounded to nearest (Config accepts it only within
        // δ/8192 of the grid): N·δ is off by up to N·64 b/s.
        let delta_grid = n * 64.0;
        // Re-seeding puts the reference's rate on the 128 b/s grid (up to 64 b/s off), and with
        // scaling `s` is inversely proportional to that rate: the scaled step moves by up to
        // 64/rate of itself (a large δ from a small rate makes this the largest term).
        let grid_in_s = if scaling {
            (o.rate_ref_bps - ref_before.rate_bps).abs() * 64.0 / ref_before.rate_bps.max(1.0)
        } else {
            0.0
        };
        let err = (o.forced_rate_bps as f64 - o.rate_ref_bps).abs();
        assert!(
            err <= 256.0 + rel * ref_before.rate_bps + s_q30 + delta_grid + grid_in_s,
            "forced step off by {err} b/s: {o:?}\n{ev:?}\n{p:?}\nreference before: {:?}",
            ref_before
        );
    }
});
