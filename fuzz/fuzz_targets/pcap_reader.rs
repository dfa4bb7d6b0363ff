//! The pcap/pcapng RoCEv2 capture reader and `sim-host replay hpcc CAPTURE`: any file gives
//! packets and a summary per flow, or an error naming the file — never a panic or a hang.
//! Every packet the reader yields holds a whole INT block (`2 + 8·nhop` bytes), a 24-bit PSN and
//! QP; the PSN extender keeps each PSN modulo 2^24 and near its anchor; the stream pairing gives
//! every ACK stream one pairing, and a data stream to at most one ACK stream.
//!
//! Input: one option byte (bit 0 forced mode, bit 1 `--out`, bit 2 `--plot`, bit 3 name the file
//! `.pcapng` instead of `.pcap`: the reader recognises the format by its magic either way), then
//! the capture.
#![no_main]

use fuzz_common::{check_input_error, replay_opts, scratch_file};
use libfuzzer_sys::fuzz_target;
use cc_trace::capture::{
    OPCODE_RC_ACK, Pairing, PsnExtender, StreamInfo, pair_streams, read_capture,
};
use std::collections::HashMap;

fuzz_target!(|data: &[u8]| {
    let Some((&opt, bytes)) = data.split_first() else {
        return;
    };
    let name = if opt & 8 != 0 {
        "capture.pcapng"
    } else {
        "capture.pcap"
    };
    let path = scratch_file(name, bytes);
    let mut ext: HashMap<_, PsnExtender> = HashMap::new();
    let mut streams: Vec<StreamInfo> = Vec::new();
    let r = read_capture(&path, |p| {
        let nhop = usize::from(p.int[0] >> 4);
        assert_eq!(p.int.len(), 2 + 8 * nhop);
        assert!(p.psn < 1 << 24 && p.qp < 1 << 24);
        let e = ext.entry(p.stream()).or_default();
        if !streams.iter().any(|s: &StreamInfo| s.key == p.stream()) {
            streams.push(StreamInfo {
                key: p.stream(),
                sport: Some(p.sport),
                packets: 1,
            });
        }
        if p.opcode == OPCODE_RC_ACK {
            let (ack, _) = e.on_ack(p.psn);
            assert_eq!(ack & 0xFF_FFFF, p.psn);
        } else {
            e.on_data(p.psn);
        }
        // Anchored: a packet moves nothing by more than half the 24-bit PSN space.
        for anchor in [0u32, 1 << 23, u32::MAX, p.psn.wrapping_mul(0x9E37_79B9)] {
            let x = PsnExtender::extend(anchor, p.psn);
            assert_eq!(x & 0xFF_FFFF, p.psn);
            let d = x.wrapping_sub(anchor) as i32;
            assert!(
                (-(1 << 23)..(1 << 23)).contains(&d),
                "{anchor} {} {x}",
                p.psn
            );
        }
        Ok(())
    });
    let pairs = pair_streams(&streams);
    assert_eq!(pairs.len(), streams.iter().filter(|s| s.key.ack).count());
    let mut used = std::collections::HashSet::new();
    for (k, pairing) in &pairs {
        assert!(streams[*k].key.ack);
        if let Pairing::Data(d) = pairing {
            assert!(!streams[*d].key.ack && used.insert(*d), "{pairs:?}");
            assert_eq!(
                (streams[*d].key.src, streams[*d].key.dst),
                (streams[*k].key.dst, streams[*k].key.src)
            );
        }
    }
    // Capture errors are about the whole file (no line).
    if let Err(e) = r {
        check_input_error(&e, &path, &[]);
    }
    match cc_replay::hpcc::replay(&path, &replay_opts(opt)) {
        Ok(sums) => assert!(!sums.is_empty()),
        Err(e) => check_input_error(&e, &path, &[]),
    }
});
