//! Property: the fixed-point crate tracks the f64 reference on random realistic INT sequences.

use hpcc_cc::{Config, State};
use proptest::prelude::*;
use sim_host::hpcc::reference::{RefHop, RefParams, Reference, encode_int};

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]
    #[test]
    fn fixed_tracks_f64(
        steps in proptest::collection::vec((50u32..20_000, 0.0f64..1.3, 0u32..3000, any::<bool>()), 50..400),
        code in 1u8..=9, start_ts in 0u32..(1 << 24), start_tx in 0u32..(1 << 20),
    ) {
        let cfg = Config::PAPER;
        let mut fixed: State = State::new(&cfg);
        let mut r = Reference::new(RefParams::default());
        let b = f64::from([0u32, 10, 25, 40, 50, 100, 200, 400, 800, 1600][usize::from(code)]) / 8.0;
        let (mut ts, mut tx, mut seq) = (start_ts, f64::from(start_tx) * 128.0, 0u32);
        let mut agree = 0usize;
        let mut worst = 0.0f64;
        for (i, &(dts, load, q, upd)) in steps.iter().enumerate() {
            ts = ts.wrapping_add(dts) & 0xFF_FFFF;
            tx += load * b * f64::from(dts);
            let int = encode_int(7, &[RefHop { code, ts, tx: ((tx / 128.0) as u64 & 0xF_FFFF) as u32, qlen: q }]);
            if upd { seq += 1000; }
            let up = fixed.on_ack(&cfg, seq, seq + 500 * i as u32 % 7, &int);
            let br = r.on_ack(u64::from(seq), u64::from(seq + 500 * i as u32 % 7), &int);
            agree += usize::from(br == up.branch.name());
            let w = f64::from(up.window_q8_bytes) / 256.0;
            worst = worst.max((w - r.w).abs() / r.w);
        }
        prop_assert!(agree as f64 >= 0.99 * steps.len() as f64, "agreement {agree}/{}", steps.len());
        prop_assert!(worst <= 1e-3, "window rel. error {worst:e}");
    }
}
