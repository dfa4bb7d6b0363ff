//! The HPCC INT wire format: `IntView::parse` never panics; it accepts exactly what `on_ack`
//! accepts (else branch `bad`, state unchanged) and what the reference's own decoder accepts;
//! an accepted block decodes to the reference's fields and re-encodes to the same bytes;
//! `sim-host int decode` on its hex (and on the raw input as text) returns text or an error.
//!
//! Input: the INT block's bytes.
#![no_main]

use hpcc_cc::int::{HEADER_BYTES, HOP_BYTES, encode};
use hpcc_cc::{HpccBranch, Config, IntError, IntView, State};
use libfuzzer_sys::fuzz_target;
use cc_replay::hpcc::reference::{self, decode_int};

fuzz_target!(|data: &[u8]| {
    let v5 = IntView::<5>::parse(data);
    let v15 = IntView::<15>::parse(data);

    // The checks and their order (IntError docs).
    match v15 {
        Ok(v) => {
            assert_eq!(data.len(), HEADER_BYTES + HOP_BYTES * usize::from(v.nhop()));
            assert_eq!(v.header(), u16::from_be_bytes([data[0], data[1]]));
            assert_eq!(v.hops().count(), usize::from(v.nhop()));
            // Round trip: the decoded hops re-encode to the same bytes.
            let hops: Vec<_> = v.hops().collect();
            let mut buf = [0u8; HEADER_BYTES + 15 * HOP_BYTES];
            let n = encode::<15>(v.path_id(), &hops, &mut buf).expect("re-encode");
            assert_eq!(&buf[..n], data);
            for (i, (h, w)) in hops.iter().zip(v.hop_words()).enumerate() {
                assert_eq!(h.to_word(), w);
                assert_eq!(v.hop(i), Some(*h));
            }
            // At most 5 hops: the 5-hop view agrees.
            assert_eq!(v5.is_ok(), v.nhop() <= 5);
        }
        Err(IntError::TooShort { len }) => assert!(len < 2 && len == data.len()),
        Err(IntError::TooManyHops { nhop, max }) => assert!(usize::from(nhop) > max),
        Err(IntError::LengthMismatch { len, expected }) => {
            assert_eq!(len, data.len());
            assert_ne!(len, expected);
        }
        Err(IntError::ReservedSpeed { hop, code }) => {
            assert!(code == 0 || code > 9);
            assert_eq!(data[HEADER_BYTES + HOP_BYTES * usize::from(hop)] >> 4, code);
        }
    }
    if let Err(e) = v5 {
        assert!(!e.to_string().is_empty());
    }

    // on_ack accepts exactly what the 5-hop parser accepts, and a rejected block changes nothing.
    let cfg = Config::PAPER;
    let mut st: State = State::new(&cfg);
    let before = st;
    let up = st.on_ack(&cfg, 1, 2, data);
    assert_eq!(up.branch == HpccBranch::Bad, v5.is_err(), "{up:?}");
    if v5.is_err() {
        assert_eq!(st, before);
    }

    // The reference's decoder (at most reference::MAX_HOPS = 5 hops) agrees field by field.
    assert_eq!(reference::MAX_HOPS, 5);
    match (decode_int(data), v5) {
        (Ok(r), Ok(v)) => {
            assert_eq!((r.nhop, r.path_id), (v.nhop(), v.path_id()));
            for (a, b) in r.hops.iter().zip(v.hops()) {
                assert_eq!(
                    (a.code, a.ts, a.tx, a.qlen),
                    (b.speed.code(), b.ts_ns, b.tx_units, u32::from(b.qlen_units))
                );
            }
        }
        (Err(_), Err(_)) => {}
        (r, v) => panic!("reference {r:?} vs firmware {v:?}"),
    }

    // `sim-host int decode HEX` (accepts up to 15 hops).
    let hex: String = data.iter().map(|b| format!("{b:02x}")).collect();
    let dec = cc_replay::hpcc::int_decode(&hex);
    assert_eq!(dec.is_ok(), v15.is_ok(), "{dec:?}");
    let _ = cc_replay::hpcc::int_decode(&format!("0X{}", hex.to_uppercase()));
    // …and on the raw input as text (bad hex, odd lengths, multi-byte characters).
    let _ = cc_replay::hpcc::int_decode(&String::from_utf8_lossy(data));
});
