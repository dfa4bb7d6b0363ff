#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::cast_possible_truncation,
    clippy::float_arithmetic
)]

use crate::params::timely_id;
use crate::*;
use proptest::prelude::*;
use timely_cc::{State, U28F4};

fn ev(type_code: u8, ts_ns: u32, spec: [u32; 3]) -> Event {
    Event {
        type_code,
        subtype: 0,
        port: 1,
        flags: 0,
        flow_tag: 9,
        sn: 0,
        ts_ns,
        spec,
    }
}

fn tx(ts: u32) -> Event {
    ev(
        3,
        ts,
        Event::tx_spec(&Tx {
            first_ts_ns: ts,
            packets: 1,
            sent_32b_units: 47,
            qpn: 0x11,
        }),
    )
}

/// A probe response arriving at `ts` for a request sent at `req_send`, with the responder
/// holding it `turnaround` ns (responder clock starting at an arbitrary 7e8).
fn rtt_ev(ts: u32, req_send: u32, turnaround: u32) -> Event {
    let recv = 700_000_000u32;
    ev(6, ts, [req_send, recv, recv.wrapping_add(turnaround)])
}

struct Flow {
    cfg: TimelyPccConfig,
    ctx: FlowContext,
    counters: Counters,
}

impl Flow {
    fn new(cfg: TimelyPccConfig) -> Self {
        Self {
            cfg,
            ctx: [0; CONTEXT_WORDS],
            counters: Counters::default(),
        }
    }
    /// Through the bytes, as the platform delivers the event.
    fn on(&mut self, e: Event) -> PccResult {
        let bytes = e.encode();
        timely_on_event(
            &self.cfg,
            &mut self.ctx,
            &Event::decode(&bytes),
            &mut self.counters,
        )
    }
    fn flow(&self) -> TimelyFlow {
        TimelyFlow::load(&self.ctx).unwrap()
    }
    fn count(&self, c: Counter) -> u32 {
        self.counters.get(c)
    }
}

/// Bytes of an event with `bytes` written at `offset`, everything else 0.
fn bytes_at(offset: usize, bytes: &[u8]) -> [u8; EVENT_BYTES] {
    let mut b = [0u8; EVENT_BYTES];
    b[offset..offset + bytes.len()].copy_from_slice(bytes);
    b
}

// Every row of the SDK's layout, pinned with hand-built bytes (DOCA SDK 3.0,
// doca_pcc_dev_event.h and doca_pcc_dev_data_structure_le_bf3.h: each getter byte-swaps the
// word at its offset and takes a little-endian bit field of the value).

#[test]
fn the_attribute_word_puts_the_type_in_byte_15_subtype_14_port_13_flags_12() {
    let e = Event::decode(&bytes_at(12, &[0x84, 2, 5, 6])); // flags 0x84, port 2, subtype 5, RTT
    assert_eq!((e.type_code, e.subtype, e.port, e.flags), (6, 5, 2, 0x84));
    assert_eq!(e.event_type(), Some(EventType::Rtt));
    // Byte 12 alone is the flags, not the type.
    let e = Event::decode(&bytes_at(12, &[3, 0, 0, 0]));
    assert_eq!((e.type_code, e.flags), (0, 3));
}

#[test]
fn flow_tag_sn_and_timestamp_are_whole_big_endian_words() {
    let e = Event::decode(&bytes_at(
        16,
        &[0, 0, 1, 2, 0xAA, 0xBB, 0xCC, 0xDD, 0xFF, 0xFF, 0xFF, 0xFE],
    ));
    assert_eq!(
        (e.flow_tag, e.sn, e.ts_ns),
        (258, 0xAABB_CCDD, u32::MAX - 1)
    );
}

#[test]
fn tx_counters_put_packets_in_the_high_half_and_32_byte_units_in_the_low_half() {
    // Word 32..36 = 0x0002_0030: 2 packets, 48 units of 32 B (1 536 bytes).
    let mut b = bytes_at(28, &[0, 0, 0, 4, 0x00, 0x02, 0x00, 0x30]);
    b[15] = 3;
    let t = Event::decode(&b).tx();
    assert_eq!((t.first_ts_ns, t.packets, t.sent_32b_units), (4, 2, 48));
}

#[test]
fn the_tx_qpn_is_the_low_24_bits_and_its_high_byte_is_reserved() {
    let mut b = bytes_at(36, &[0xFF, 0xAB, 0xCD, 0xEF]);
    b[15] = 3;
    let e = Event::decode(&b);
    assert_eq!(e.tx().qpn, 0x00AB_CDEF);
    // Encoding the fields back leaves the reserved byte 0.
    let spec = Event::tx_spec(&e.tx());
    assert_eq!(spec[2], 0x00AB_CDEF);
}

#[test]
fn the_number_coalesced_is_the_low_16_bits_and_its_high_half_is_reserved() {
    let mut b = bytes_at(28, &[0, 0, 0, 1, 0, 0, 0, 2, 0xDE, 0xAD, 0x00, 0x03]);
    b[15] = 4;
    let a = Event::decode(&b).ack();
    assert_eq!((a.first_ts_ns, a.first_sn, a.coalesced), (1, 2, 3));
    assert_eq!(Event::ack_spec(&a)[2], 3);
}

#[test]
fn rtt_timestamps_are_the_three_words_at_28_32_36() {
    let mut b = bytes_at(28, &[0, 0, 3, 0xE8, 0, 0, 7, 0xD0, 0, 0, 0x0B, 0xB8]);
    b[15] = 6;
    let r = Event::decode(&b).rtt();
    assert_eq!(
        (r.req_send_ts_ns, r.req_recv_ts_ns, r.resp_send_ts_ns),
        (1000, 2000, 3000)
    );
}

#[test]
fn rtt_raw_data_is_bytes_28_to_40_unswapped_overlaying_the_timestamps() {
    let raw = [1u8, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12];
    let mut b = bytes_at(RTT_RAW_DATA_OFFSET, &raw);
    b[40..44].copy_from_slice(&[0xEE; 4]); // the reserved fourth word is not raw data
    let e = Event::decode(&b);
    assert_eq!(e.rtt_raw_data(), raw);
    // The same bytes read as timestamps: a telemetry response has no request-send timestamp.
    assert_eq!(e.rtt().req_send_ts_ns, 0x0102_0304);
    assert_eq!(Event::raw_data_spec(&raw), e.spec);
}

#[test]
fn the_layout_table_is_every_getter_at_its_offset_and_bits() {
    // (getter, byte offset, lowest bit, width), as the SDK declares them.
    let want: [(&str, usize, u32, u32); 16] = [
        ("ev_attr.flags", 12, 24, 8),
        ("ev_attr.port_num", 12, 16, 8),
        ("ev_attr.ev_subtype", 12, 8, 8),
        ("ev_attr.ev_type", 12, 0, 8),
        ("get_flowtag", 16, 0, 32),
        ("get_sn", 20, 0, 32),
        ("get_timestamp", 24, 0, 32),
        ("get_roce_first_timestamp", 28, 0, 32),
        ("get_roce_tx_cntrs.sent_pkts", 32, 16, 16),
        ("get_roce_tx_cntrs.sent_32bytes", 32, 0, 16),
        ("get_flow_qpn", 36, 0, 24),
        ("get_roce_ack_first_sn", 32, 0, 32),
        ("get_ack_nack_cnp_extra.num_coalesced", 36, 0, 16),
        ("get_rtt_req_send_timestamp", 28, 0, 32),
        ("get_rtt_req_recv_timestamp", 32, 0, 32),
        ("get_rtt_resp_send_timestamp", 36, 0, 32),
    ];
    for (f, w) in LAYOUT.iter().zip(want) {
        assert_eq!((f.getter, f.offset, f.shift, f.bits), w);
        // A field of all ones read from hand-built bytes: exactly its bits of its word.
        let v = f.put(0, u32::MAX);
        let b = bytes_at(f.offset, &v.to_be_bytes());
        let word = u32::from_be_bytes(b[f.offset..f.offset + 4].try_into().unwrap());
        assert_eq!(f.get(word), f.mask(), "{}", f.getter);
        assert_eq!(word, f.mask() << f.shift, "{}", f.getter);
    }
}

#[test]
fn event_type_codes_and_flags_are_the_sdks() {
    use crate::event::{nack_subtype, tx_flag, type_code};
    assert_eq!(
        [
            type_code::NULL,
            type_code::FW,
            type_code::CNP,
            type_code::TX,
            type_code::ACK,
            type_code::NACK,
            type_code::RTT,
            type_code::ROCE_TX_FOR_ACK_NACK
        ],
        [0, 1, 2, 3, 4, 5, 6, 31]
    );
    assert_eq!(
        [nack_subtype::RNR, nack_subtype::OOS, nack_subtype::DUP_READ],
        [1, 2, 3]
    );
    assert_eq!(
        [
            tx_flag::ACK_EXPECTED,
            tx_flag::OVERLOADED,
            tx_flag::RTT_REQ_SENT
        ],
        [1, 2, 4]
    );
}

#[test]
fn telemetry_record_reads_big_endian_queue_bytes_and_timestamp() {
    let b = [0x01, 0x02, 3, 0x40, 0, 0, 0x10, 0, 0x80, 0, 0, 1];
    let t = Telemetry::decode(&b);
    assert_eq!(t.qlen_256b_cells, 0x0102);
    assert_eq!(t.qlen_bytes(), 0x0102 * 256);
    assert_eq!((t.index, t.flags), (3, 0x40));
    assert_eq!((t.tx_bytes, t.tx_ts_ns), (4096, 0x8000_0001));
    assert_eq!(t.encode(), b, "encode is decode's inverse");
}

#[test]
fn ignored_and_undefined_event_types_are_none() {
    for code in [0u8, 1, 7, 31, 255] {
        assert_eq!(EventType::from_code(code), None);
    }
}

#[test]
fn q20_rounds_to_nearest_and_clamps_at_both_ends() {
    let cfg = TimelyPccConfig::DEFAULT; // 10 Gb/s: line = 78 125 000 units of 128 b/s
    // 37·2^20/78 125 000 = 0.4966 → 0 → clamped to 1; 38 → 0.510 → 1.
    assert_eq!(cfg.rate_q20(0), (1, -1));
    assert_eq!(cfg.rate_q20(37), (1, -1));
    assert_eq!(cfg.rate_q20(38), (1, 0));
    // Line rate is exactly 2^20; 37 units above rounds back to it, 38 above rounds over: clamp.
    assert_eq!(cfg.rate_q20(78_125_000), (1 << 20, 0));
    assert_eq!(cfg.rate_q20(78_125_037), (1 << 20, 0));
    assert_eq!(cfg.rate_q20(78_125_038), (1 << 20, 1));
    // 10 Mb/s = 78 125 units: 1048.576 → 1049.
    assert_eq!(cfg.rate_q20(78_125), (1049, 0));
    // Half of line rate: exactly 2^19.
    assert_eq!(cfg.rate_q20(39_062_500), (1 << 19, 0));
}

#[test]
fn a_zeroed_context_is_a_new_flow_at_the_initial_rate_that_requests_a_probe() {
    let mut cfg = TimelyPccConfig::DEFAULT;
    cfg.set_param(timely_id::INIT_RATE_Q20, 1 << 19).unwrap();
    let mut f = Flow::new(cfg);
    let r = f.on(tx(1_000));
    assert_eq!(
        r,
        PccResult {
            rate_q20: 1 << 19,
            rtt_req: true
        }
    );
    assert_eq!(f.count(Counter::NewFlows), 1);
    assert_eq!(f.count(Counter::ProbesSent), 1);
    assert!(f.flow().probe_outstanding());
    // The context is stored: the next event is not a new flow.
    f.on(tx(2_000));
    assert_eq!(f.count(Counter::NewFlows), 1);
}

/// Drives the adapter and a bare timely-cc State side by side: the adapter must hand
/// Algorithm 1 exactly `ts − req_send − turnaround` (or without the turnaround subtracted).
fn probe_rtts_match_timely(keep_turnaround: bool) {
    let mut cfg = TimelyPccConfig::DEFAULT;
    cfg.set_param(timely_id::KEEP_TURNAROUND, u32::from(keep_turnaround))
        .unwrap();
    let mut f = Flow::new(cfg);
    let mut st = State::new(cfg.timely());
    // (network RTT, turnaround) per probe: init, AI, a rise, T_high.
    let samples = [
        (40_000u32, 3_000u32),
        (41_000, 5_000),
        (80_000, 2_000),
        (650_000, 1_000),
    ];
    let mut t = 10_000u32;
    for (net, turn) in samples {
        assert!(f.on(tx(t)).rtt_req);
        let send = t + 100;
        let r = f.on(rtt_ev(send + net + turn, send, turn));
        let rtt = if keep_turnaround { net + turn } else { net };
        st.on_rtt(cfg.timely(), U28F4::from_bits(rtt << 4), 0, None);
        assert_eq!(f.flow().timely, st);
        assert_eq!(r.rate_q20, cfg.rate_q20(st.rate_u128bps()).0);
        assert!(!r.rtt_req);
        t += 1_000_000;
    }
    assert_eq!(f.count(Counter::ProbesAnswered), 4);
    // The T_high sample cut the rate: 1 − 0.8·(1 − 500/650) = 0.815 of the previous rate.
    assert!(f.flow().timely.rate_u128bps() < 78_125_000);
}

#[test]
fn probe_rtt_is_event_time_minus_request_send_minus_turnaround() {
    probe_rtts_match_timely(false);
}

#[test]
fn keep_turnaround_hands_timely_the_whole_probe_rtt() {
    probe_rtts_match_timely(true);
}

#[test]
fn turnaround_jitter_reaches_the_gradient_only_when_kept() {
    // Network RTT constant at 100 µs (between T_low and T_high); the responder's turnaround
    // alternates 2 µs / 8 µs. Subtracted, every RTT is 100 µs: gradient 0, the rate climbs
    // (AI then HAI). Kept, the RTT alternates ±6 µs: the gradient swings, every rise cuts.
    let run = |keep: u32| {
        let mut cfg = TimelyPccConfig::DEFAULT;
        cfg.set_param(timely_id::INIT_RATE_Q20, 1 << 19).unwrap();
        cfg.set_param(timely_id::KEEP_TURNAROUND, keep).unwrap();
        let mut f = Flow::new(cfg);
        let mut t = 0u32;
        let mut rate = 0;
        for i in 0..40u32 {
            f.on(tx(t));
            let turn = if i % 2 == 0 { 2_000 } else { 8_000 };
            rate = f.on(rtt_ev(t + 100_000 + turn, t, turn)).rate_q20;
            t += 200_000;
        }
        rate
    };
    let (subtracted, kept) = (run(0), run(1));
    // The figures docs/pcc.md quotes: 0.679 and 0.012 of line rate.
    assert_eq!((subtracted, kept), (711_983, 12_646));
}

#[test]
fn at_most_one_probe_is_outstanding_until_the_timeout() {
    let mut f = Flow::new(TimelyPccConfig::DEFAULT); // timeout 300 µs
    assert!(f.on(tx(0)).rtt_req);
    assert!(!f.on(tx(1_000)).rtt_req);
    assert!(!f.on(tx(299_999)).rtt_req);
    assert_eq!(f.count(Counter::ProbesTimedOut), 0);
    // 300 µs after the request: timed out, a new probe.
    assert!(f.on(tx(300_000)).rtt_req);
    assert_eq!(f.count(Counter::ProbesTimedOut), 1);
    assert_eq!(f.count(Counter::ProbesSent), 2);
}

#[test]
fn a_late_answer_to_a_timed_out_probe_is_counted_and_ignored() {
    let mut f = Flow::new(TimelyPccConfig::DEFAULT);
    f.on(tx(0)); // probe 1 requested at 0, sent at 50
    f.on(tx(400_000)); // timed out; probe 2 requested at 400 µs
    let before = f.flow();
    // Probe 1's answer arrives: its request left at 50 ns, before probe 2 was requested.
    let r = f.on(rtt_ev(450_000, 50, 1_000));
    assert_eq!(f.count(Counter::ProbesLate), 1);
    assert_eq!(f.count(Counter::ProbesAnswered), 0);
    assert_eq!(f.flow(), before);
    assert!(!r.rtt_req);
    // Probe 2's answer is used.
    f.on(rtt_ev(470_000, 400_010, 1_000));
    assert_eq!(f.count(Counter::ProbesAnswered), 1);
    assert!(!f.flow().probe_outstanding());
    assert!(f.flow().timely.started());
}

#[test]
fn a_probe_answer_with_none_outstanding_is_counted_unsolicited() {
    let mut f = Flow::new(TimelyPccConfig::DEFAULT);
    f.on(rtt_ev(10_000, 5_000, 0));
    assert_eq!(f.count(Counter::ProbesUnsolicited), 1);
    assert_eq!(f.count(Counter::ProbesLate), 0);
    assert!(!f.flow().timely.started());
}

#[test]
fn a_turnaround_longer_than_the_rtt_is_counted_invalid_and_takes_no_sample() {
    let mut f = Flow::new(TimelyPccConfig::DEFAULT);
    f.on(tx(0));
    // RTT 10 µs, turnaround claimed 20 µs.
    f.on(ev(6, 10_000, [0, 100, 20_100]));
    assert_eq!(f.count(Counter::RttInvalid), 1);
    assert_eq!(f.count(Counter::ProbesAnswered), 1);
    assert!(!f.flow().timely.started());
    assert!(!f.flow().probe_outstanding());
}

#[test]
fn ack_nack_cnp_and_unknown_events_are_counted_and_leave_the_rate() {
    let mut f = Flow::new(TimelyPccConfig::DEFAULT);
    let start = f.on(tx(0));
    let flow = f.flow();
    for (code, n) in [(4u8, 3u32), (5, 2), (2, 4), (9, 0), (0, 0), (1, 0), (31, 0)] {
        let r = f.on(ev(code, 10, [0, 0, n]));
        assert_eq!(
            r,
            PccResult {
                rate_q20: start.rate_q20,
                rtt_req: false
            }
        );
    }
    assert_eq!(f.flow(), flow);
    assert_eq!(
        [
            f.count(Counter::EvAck),
            f.count(Counter::AckCoalesced),
            f.count(Counter::EvNack),
            f.count(Counter::NackCoalesced),
            f.count(Counter::EvCnp),
            f.count(Counter::CnpCoalesced),
            f.count(Counter::EvUnknown),
        ],
        [1, 3, 1, 2, 1, 4, 4]
    );
}

#[test]
fn nack_subtypes_are_counted_by_name() {
    let mut f = Flow::new(TimelyPccConfig::DEFAULT);
    for sub in [1u8, 2, 2, 3, 3, 3, 0, 9] {
        let mut e = ev(5, 10, [0, 0, 1]);
        e.subtype = sub;
        f.on(e);
    }
    assert_eq!(
        [
            f.count(Counter::EvNack),
            f.count(Counter::NackRnr),
            f.count(Counter::NackOos),
            f.count(Counter::NackDupRead)
        ],
        [8, 1, 2, 3]
    );
}

#[test]
fn set_params_refuses_out_of_range_values_and_keeps_the_config() {
    let mut cfg = TimelyPccConfig::DEFAULT;
    let before = cfg;
    assert_eq!(
        cfg.set_param(timely_id::ALPHA_MILLI, 62),
        Err(ParamError::OutOfRange {
            id: timely_id::ALPHA_MILLI,
            value: 62
        })
    );
    assert_eq!(
        cfg.set_param(timely_id::KEEP_TURNAROUND, 2),
        Err(ParamError::OutOfRange {
            id: timely_id::KEEP_TURNAROUND,
            value: 2
        })
    );
    // Each in range, together inconsistent: T_low above T_high.
    assert!(matches!(
        cfg.set_params(timely_id::T_LOW_NS, &[600_000, 500_000]),
        Err(ParamError::Timely(_))
    ));
    // Running past the table: nothing applied, not even the first value.
    assert_eq!(
        cfg.set_params(12, &[1, 1]),
        Err(ParamError::IdOutOfTable { base: 12, num: 2 })
    );
    assert_eq!(
        cfg.set_params(u32::MAX, &[1]),
        Err(ParamError::IdOutOfTable {
            base: u32::MAX,
            num: 1
        })
    );
    assert_eq!(cfg, before);
}

#[test]
fn set_params_re_derives_the_q20_scale_and_timely_constants() {
    let mut cfg = TimelyPccConfig::DEFAULT;
    cfg.set_params(timely_id::LINE_RATE_MBPS, &[100_000, 100])
        .unwrap();
    assert_eq!(cfg.values()[0], 100_000);
    assert_eq!(cfg.timely().params().line_rate_bps, 100_000_000_000);
    assert_eq!(cfg.timely().params().min_rate_bps, 100_000_000);
    // 100 Gb/s = 781 250 000 units: 2^20; 10 Gb/s is a tenth.
    assert_eq!(cfg.rate_q20(781_250_000), (1 << 20, 0));
    assert_eq!(cfg.rate_q20(78_125_000), (104_858, 0)); // 104 857.6 → 104 858
}

#[test]
fn the_parameter_table_is_in_id_order_with_defaults_inside_their_ranges() {
    for (i, p) in TIMELY_PARAMS.iter().enumerate() {
        assert_eq!(p.id as usize, i);
        assert!(p.min <= p.default && p.default <= p.max, "{}", p.name);
    }
    const { assert!(TIMELY_PARAM_NUM <= 38 && COUNTER_NUM <= 63) };
    assert_eq!(COUNTER_NAMES.len(), COUNTER_NUM);
    assert_eq!(Counter::ProbesUnsolicited as usize, COUNTER_NUM - 1);
}

#[test]
fn the_flow_fits_the_48_byte_context() {
    assert!(core::mem::size_of::<TimelyFlow>() <= 48);
    assert_eq!(core::mem::size_of::<FlowContext>(), 48);
}

proptest! {
    #[test]
    fn decode_of_encode_is_the_event_for_every_field(
        attr in any::<[u8; 4]>(), flow in any::<u32>(), sn in any::<u32>(), ts in any::<u32>(),
        spec in any::<[u32; 3]>(),
    ) {
        let [type_code, subtype, port, flags] = attr;
        let e = Event { type_code, subtype, port, flags, flow_tag: flow, sn, ts_ns: ts, spec };
        let b = e.encode();
        prop_assert_eq!(Event::decode(&b), e);
        prop_assert_eq!(&b[..12], &[0u8; 12][..]);
        prop_assert_eq!(&b[40..], &[0u8; 4][..]);
    }

    #[test]
    fn the_unions_fields_survive_encode_and_decode(
        first in any::<u32>(), packets in any::<u16>(), units in any::<u16>(), qpn in 0u32..(1 << 24),
        sn in any::<u32>(), coalesced in any::<u16>(), t in any::<[u32; 3]>(), raw in any::<[u8; 12]>(),
    ) {
        let through = |type_code: u8, spec: [u32; 3]| {
            Event::decode(&Event { type_code, subtype: 0, port: 0, flags: 0, flow_tag: 0, sn: 0, ts_ns: 0, spec }.encode())
        };
        let tx = Tx { first_ts_ns: first, packets, sent_32b_units: units, qpn };
        prop_assert_eq!(through(3, Event::tx_spec(&tx)).tx(), tx);
        let ack = Ack { first_ts_ns: first, first_sn: sn, coalesced };
        prop_assert_eq!(through(4, Event::ack_spec(&ack)).ack(), ack);
        let rtt = Rtt { req_send_ts_ns: t[0], req_recv_ts_ns: t[1], resp_send_ts_ns: t[2] };
        prop_assert_eq!(through(6, Event::rtt_spec(&rtt)).rtt(), rtt);
        prop_assert_eq!(through(6, Event::raw_data_spec(&raw)).rtt_raw_data(), raw);
    }

    #[test]
    fn q20_is_monotone_and_within_bounds(line in 1u32..=400_000, a in any::<u32>(), b in any::<u32>()) {
        let mut cfg = TimelyPccConfig::DEFAULT;
        // min rate 1 Mb/s ≤ line
        cfg.set_params(timely_id::LINE_RATE_MBPS, &[line, 1]).unwrap();
        let (lo, hi) = (a.min(b), a.max(b));
        let (ql, qh) = (cfg.rate_q20(lo).0, cfg.rate_q20(hi).0);
        prop_assert!(ql <= qh);
        prop_assert!((1..=1 << 20).contains(&ql) && (1..=1 << 20).contains(&qh));
        // Within half a unit (plus the scale's 2^-32 relative) of the exact value, unclamped.
        let exact = f64::from(hi) * 128.0 * f64::from(1u32 << 20) / (f64::from(line) * 1e6);
        if (1.0..=f64::from(1u32 << 20)).contains(&exact) {
            prop_assert!((f64::from(qh) - exact).abs() <= 0.5 + exact * 1e-9, "{qh} vs {exact}");
        }
    }

    #[test]
    fn the_32_bit_clock_wrapping_inside_a_probe_gives_the_true_rtt(
        back in 0u32..(1 << 27), lead in 0u32..10_000, net in 1u32..(1 << 27), turn in 0u32..1_000_000,
    ) {
        // The first request `back` ns before the clock wraps: the wrap falls inside the first
        // probe whenever back < lead + net + turn (most cases), else inside the second.
        let t0 = u32::MAX.wrapping_sub(back);
        let cfg = TimelyPccConfig::DEFAULT;
        let mut f = Flow::new(cfg);
        let mut st = State::new(cfg.timely());
        // Two probes so the second reaches Algorithm 1 past its first sample.
        let mut t = t0;
        for _ in 0..2 {
            f.on(tx(t));
            let send = t.wrapping_add(lead);
            f.on(rtt_ev(send.wrapping_add(net).wrapping_add(turn), send, turn));
            let q4 = if net > (1 << 27) - 1 { (1 << 31) - 1 } else { net << 4 };
            st.on_rtt(cfg.timely(), U28F4::from_bits(q4), 0, None);
            t = t.wrapping_add(net).wrapping_add(turn).wrapping_add(lead).wrapping_add(1);
        }
        prop_assert_eq!(f.count(Counter::ProbesAnswered), 2);
        prop_assert_eq!(f.flow().timely, st);
    }

    #[test]
    fn coalesced_counts_are_summed(evs in proptest::collection::vec((any::<u16>(), any::<u16>(), 0u32..1000), 1..50)) {
        let mut f = Flow::new(TimelyPccConfig::DEFAULT);
        let (mut pk, mut by, mut acks) = (0u32, 0u32, 0u32);
        for (i, &(p, b, a)) in evs.iter().enumerate() {
            let t = i as u32 * 10;
            f.on(ev(3, t, Event::tx_spec(&Tx { first_ts_ns: t, packets: p, sent_32b_units: b, qpn: 0 })));
            f.on(ev(4, t + 1, [t, 0, a]));
            pk = pk.wrapping_add(u32::from(p));
            by = by.wrapping_add(u32::from(b));
            acks = acks.wrapping_add(a);
        }
        prop_assert_eq!(f.count(Counter::TxPackets), pk);
        prop_assert_eq!(f.count(Counter::Tx32bUnits), by);
        prop_assert_eq!(f.count(Counter::AckCoalesced), acks);
        prop_assert_eq!(f.count(Counter::EvTx), evs.len() as u32);
    }

    #[test]
    fn a_stored_flow_loads_back_unchanged(
        rate in any::<u32>(), prev in 0u32..(1 << 31), diff in any::<i64>(), resid in any::<i16>(),
        hai in any::<u8>(), started in any::<bool>(), probe in any::<u32>(), out in any::<bool>(),
    ) {
        let cfg = TimelyPccConfig::DEFAULT;
        let mut ctx = [0u32; CONTEXT_WORDS];
        let mut flow = TimelyFlow::new(&cfg);
        flow.timely = State::from_raw_parts(timely_cc::RawParts {
            rate_u128bps: rate,
            prev_rtt_ns: U28F4::from_bits(prev),
            rtt_diff_ns: timely_cc::I60F68::from_bits(i128::from(diff) << 20),
            residual: resid,
            hai_count: hai,
            started,
        });
        flow.probe_req_ts_ns = probe;
        if out {
            // Request a probe through the policy, so the flag is the real one.
            let mut c = Counters::default();
            flow.on_event(&cfg, &ev(3, probe, [0; 3]), &mut c);
        }
        flow.store(&mut ctx);
        prop_assert_eq!(TimelyFlow::load(&ctx), Some(flow));
    }
}

// ---- HPCC on switch telemetry ----

use crate::hpcc::hpcc_id;
use hpcc_cc::{HpccBranch, U24F8};

fn tel(qcells: u16, index: u8, tx_bytes: u32, ts: u32) -> [u8; TELEMETRY_BYTES] {
    let mut b = [0u8; TELEMETRY_BYTES];
    b[0..2].copy_from_slice(&qcells.to_be_bytes());
    b[2] = index;
    b[4..8].copy_from_slice(&tx_bytes.to_be_bytes());
    b[8..12].copy_from_slice(&ts.to_be_bytes());
    b
}

struct HFlow {
    cfg: HpccPccConfig,
    flow: HpccFlow,
    counters: Counters,
    t: u32,
}

impl HFlow {
    fn new() -> Self {
        let cfg = HpccPccConfig::default_values().unwrap();
        Self {
            flow: HpccFlow::new(&cfg),
            cfg,
            counters: Counters::default(),
            t: 5_000,
        }
    }
    /// One event through the bytes, as the platform delivers it; an RTT event's telemetry is
    /// its raw data (`doca_pcc_dev_get_rtt_raw_data`).
    fn on(&mut self, e: Event) -> (PccResult, Option<HpccBranch>) {
        let e = Event::decode(&e.encode());
        self.flow
            .on_event(&self.cfg, &e, &e.rtt_raw_data(), &mut self.counters)
    }
    /// A TX event that requests a probe, the TX event that carries `RTT_REQ_SENT` 10 ns later,
    /// the answer carrying `tel` 8 µs after that; the next probe `gap` ns later.
    fn probe(
        &mut self,
        telemetry: [u8; TELEMETRY_BYTES],
        gap: u32,
    ) -> (PccResult, Option<HpccBranch>) {
        let (r, _) = self.on(tx(self.t));
        assert!(r.rtt_req);
        let send = self.t.wrapping_add(10);
        self.on(sent(send));
        let out = self.on(answer(send.wrapping_add(8_000), telemetry));
        self.t = self.t.wrapping_add(gap);
        out
    }
}

/// A TX event whose flags say the requested probe has left.
fn sent(ts: u32) -> Event {
    let mut e = tx(ts);
    e.flags = tx_flag::RTT_REQ_SENT;
    e
}

/// A probe response at `ts` carrying one hop of telemetry as its raw data.
fn answer(ts: u32, telemetry: [u8; TELEMETRY_BYTES]) -> Event {
    ev(6, ts, Event::raw_data_spec(&telemetry))
}

#[test]
fn telemetry_at_full_utilisation_takes_md_to_eta_of_line_rate() {
    // 100G port, T = 13 µs: W_max = 162 500 B. Second sample 13 µs later (τ = T: U = u'),
    // queue empty, 162 496 B sent (5 078 units of 32 B): u' = 162 496/162 500 = 0.999 975 ≥ η:
    // W = Wc·η/U + W_AI = 162 500·0.95/0.999 975 + 80 = 154 458.86 B → Q20 = W/W_max·2^20.
    let mut h = HFlow::new();
    let (_, b) = h.probe(tel(0, 3, 1_000_000 * 32, 40_000), 13_000);
    assert_eq!(b, Some(HpccBranch::Init));
    let (r, b) = h.probe(tel(0, 3, (1_000_000 + 5_078) * 32, 53_000), 13_000);
    assert_eq!(b, Some(HpccBranch::Md));
    let w = h.flow.hpcc.window_bytes().to_num::<f64>();
    let want = 162_500.0 * 0.95 / (162_496.0 / 162_500.0) + 80.0;
    assert!((w - want).abs() / want < 2e-5, "{w} vs {want}");
    let q = f64::from(r.rate_q20);
    assert!(
        (q - w / 162_500.0 * f64::from(1u32 << 20)).abs() <= 1.0,
        "{q}"
    );
}

#[test]
fn telemetry_at_half_utilisation_takes_ai() {
    // 81 248 B in 13 µs (2 539 units): u' = 0.49998 < η: W = Wc + W_AI, capped at W_max.
    let mut h = HFlow::new();
    h.probe(tel(0, 3, 0, 0), 13_000);
    let (r, b) = h.probe(tel(0, 3, 2_539 * 32, 13_000), 13_000);
    assert_eq!(b, Some(HpccBranch::Ai));
    assert_eq!(r.rate_q20, 1 << 20);
}

#[test]
fn a_queue_counts_in_256_byte_cells() {
    // No bytes sent, a queue of 635 cells = 162 560 B ≥ B·T: u' = 162 560/162 500 = 1.00037
    // (Δts = T) → MD: W = 162 500·0.95/1.000 37 + 80.
    let mut h = HFlow::new();
    h.probe(tel(635, 1, 0, 0), 13_000);
    let (_, b) = h.probe(tel(635, 1, 0, 13_000), 13_000);
    assert_eq!(b, Some(HpccBranch::Md));
    let w = h.flow.hpcc.window_bytes().to_num::<f64>();
    let want = 162_500.0 * 0.95 / (162_560.0 / 162_500.0) + 80.0;
    assert!((w - want).abs() / want < 2e-5, "{w} vs {want}");
}

#[test]
fn another_switch_index_resyncs_the_hop() {
    let mut h = HFlow::new();
    h.probe(tel(0, 3, 0, 0), 13_000);
    let w = h.flow.hpcc.window_bytes();
    let (_, b) = h.probe(tel(9, 4, 99_999, 13_000), 13_000);
    assert_eq!(b, Some(HpccBranch::Resync));
    assert_eq!(h.flow.hpcc.window_bytes(), w);
}

#[test]
fn a_telemetry_gap_beyond_half_a_counter_wrap_restarts_the_hop() {
    let mut h = HFlow::new();
    let gap = h.cfg.gap_ns();
    // 100G: 2^25 B of 32-byte units wrap in 2.68 ms; half is 1 342 177 ns.
    assert_eq!(gap, 1_342_177);
    h.probe(tel(0, 3, 0, 0), gap);
    let w = h.flow.hpcc.window_bytes();
    let (_, b) = h.probe(tel(0, 3, 500_000, 0), 13_000);
    assert_eq!(b, Some(HpccBranch::Init));
    assert_eq!(h.counters.get(Counter::TelemetryGap), 1);
    assert_eq!(h.flow.hpcc.window_bytes(), w);
    // Just inside the gap: a normal step.
    let (_, b) = h.probe(tel(0, 3, 500_000, 13_000), 13_000);
    assert!(matches!(b, Some(HpccBranch::Ai | HpccBranch::Md)));
    assert_eq!(h.counters.get(Counter::TelemetryGap), 1);
}

#[test]
fn hpcc_ignores_ack_nack_cnp_and_other_event_types() {
    let mut h = HFlow::new();
    h.probe(tel(0, 3, 0, 0), 13_000);
    let before = h.flow.hpcc;
    for code in [2u8, 4, 5, 9, 0, 1, 31] {
        let (r, b) = h.on(ev(code, 1, [0, 0, 1]));
        assert_eq!((r.rate_q20, r.rtt_req, b), (1 << 20, false, None));
    }
    assert_eq!(h.flow.hpcc, before);
}

#[test]
fn an_hpcc_response_with_no_probe_outstanding_is_unsolicited_and_ignored() {
    let mut h = HFlow::new();
    h.probe(tel(0, 3, 0, 0), 13_000);
    let before = h.flow;
    let (_, b) = h.on(answer(50_000, tel(500, 3, 9_000, 9_000)));
    assert_eq!(b, None);
    assert_eq!(h.counters.get(Counter::ProbesUnsolicited), 1);
    assert_eq!(h.flow, before);
}

#[test]
fn an_hpcc_response_before_the_requested_probe_left_is_late_and_ignored() {
    let mut h = HFlow::new();
    assert!(h.on(tx(1_000)).0.rtt_req); // requested, not yet departed
    let (_, b) = h.on(answer(9_000, tel(0, 3, 0, 0)));
    assert_eq!(b, None);
    assert_eq!(h.counters.get(Counter::ProbesLate), 1);
    assert!(h.flow.probe_outstanding() && !h.flow.probe_departed());
    // Once it has left, its answer is used.
    h.on(sent(10_000));
    assert_eq!(h.counters.get(Counter::ProbesDeparted), 1);
    let (_, b) = h.on(answer(18_000, tel(0, 3, 0, 0)));
    assert_eq!(b, Some(HpccBranch::Init));
    assert_eq!(h.counters.get(Counter::ProbesAnswered), 1);
    assert!(!h.flow.probe_outstanding());
}

#[test]
fn a_duplicate_hpcc_response_is_counted_and_keeps_the_probe_outstanding() {
    let mut h = HFlow::new();
    let first = tel(4, 3, 64_000, 40_000);
    h.probe(first, 13_000);
    // The same response delivered again, with no probe outstanding: a duplicate, not
    // unsolicited.
    let (_, b) = h.on(answer(30_000, first));
    assert_eq!(b, None);
    assert_eq!(h.counters.get(Counter::ProbesDuplicate), 1);
    assert_eq!(h.counters.get(Counter::ProbesUnsolicited), 0);
    // A new probe departs; a copy of the old telemetry arrives first: duplicate, probe kept.
    h.on(tx(h.t));
    h.on(sent(h.t + 10));
    let (_, b) = h.on(answer(h.t + 5_000, first));
    assert_eq!(b, None);
    assert_eq!(h.counters.get(Counter::ProbesDuplicate), 2);
    assert!(h.flow.probe_outstanding());
    // The real answer is used.
    let (_, b) = h.on(answer(h.t + 8_000, tel(4, 3, 128_000, 53_000)));
    assert!(matches!(b, Some(HpccBranch::Ai | HpccBranch::Md)));
}

#[test]
fn a_duplicate_is_the_same_switch_and_the_same_32_bit_transmit_timestamp() {
    let mut h = HFlow::new();
    h.probe(tel(4, 3, 64_000, 40_000), 13_000);
    h.on(tx(h.t));
    h.on(sent(h.t + 10));
    // The same timestamp modulo 2^24 but not the same sample: an answer, not a duplicate.
    let (_, b) = h.on(answer(h.t + 8_000, tel(4, 3, 64_000, 40_000 + (1 << 24))));
    assert!(b.is_some());
    assert_eq!(h.counters.get(Counter::ProbesDuplicate), 0);
    // The same timestamp from another switch: not a duplicate either (unsolicited here).
    h.on(answer(h.t + 9_000, tel(4, 5, 64_000, 40_000 + (1 << 24))));
    assert_eq!(h.counters.get(Counter::ProbesDuplicate), 0);
    assert_eq!(h.counters.get(Counter::ProbesUnsolicited), 1);
}

#[test]
fn the_hpcc_probe_timeout_runs_from_the_departure_not_the_request() {
    let mut h = HFlow::new(); // timeout 300 µs
    assert!(h.on(tx(0)).0.rtt_req);
    h.on(sent(200_000)); // left 200 µs after the request
    // 350 µs after the request but 150 µs after the departure: still outstanding.
    assert!(!h.on(tx(350_000)).0.rtt_req);
    assert_eq!(h.counters.get(Counter::ProbesTimedOut), 0);
    // 300 µs after the departure: timed out, requested again (not departed).
    assert!(h.on(tx(500_000)).0.rtt_req);
    assert_eq!(h.counters.get(Counter::ProbesTimedOut), 1);
    assert!(!h.flow.probe_departed());
    // A request that never leaves times out from the request.
    assert!(h.on(tx(800_000)).0.rtt_req);
    assert_eq!(h.counters.get(Counter::ProbesTimedOut), 2);
    // A departure flag with no request waiting is not a departure.
    let mut i = HFlow::new();
    i.on(sent(5));
    assert_eq!(i.counters.get(Counter::ProbesDeparted), 0);
}

#[test]
fn hpcc_q20_rounds_to_nearest_and_clamps_at_both_ends() {
    let cfg = HpccPccConfig::default_values().unwrap();
    let w_max = cfg.hpcc().w_max_bytes().to_bits(); // 162 500 B in Q24.8
    assert_eq!(cfg.rate_q20(U24F8::from_bits(w_max)), (1 << 20, 0));
    // One Q24.8 unit is 2^20/41 600 000 = 0.0252 Q20 units: +19 → 2^20 + 0.479 rounds back,
    // +20 → 2^20 + 0.504 rounds over: clamped.
    assert_eq!(cfg.rate_q20(U24F8::from_bits(w_max + 19)), (1 << 20, 0));
    assert_eq!(cfg.rate_q20(U24F8::from_bits(w_max + 20)), (1 << 20, 1));
    assert_eq!(cfg.rate_q20(U24F8::from_bits(0)), (1, -1));
    assert_eq!(cfg.rate_q20(U24F8::from_bits(19)), (1, -1)); // 0.479 → 0 → 1
    assert_eq!(cfg.rate_q20(U24F8::from_bits(20)), (1, 0)); // 0.504 → 1
    // W_min = 100 Mb/s·13 µs = 162.5 B: 2^20/1000 = 1048.58 → 1049.
    assert_eq!(cfg.rate_q20(cfg.hpcc().w_min_bytes()), (1049, 0));
}

#[test]
fn hpcc_set_params_refuses_and_keeps_the_config() {
    let mut cfg = HpccPccConfig::default_values().unwrap();
    let before = cfg;
    // 10 Tb/s · 16.7 ms: W_max far above 16 MiB.
    assert!(matches!(
        cfg.set_params(hpcc_id::LINE_RATE_MBPS, &[10_000_000, 0xFF_FFFF]),
        Err(HpccParamError::Hpcc(_))
    ));
    assert_eq!(
        cfg.set_params(hpcc_id::LINK_SPEED_CODE, &[10]),
        Err(HpccParamError::OutOfRange {
            id: hpcc_id::LINK_SPEED_CODE,
            value: 10
        })
    );
    assert_eq!(
        cfg.set_params(7, &[1, 2]),
        Err(HpccParamError::IdOutOfTable { base: 7, num: 2 })
    );
    assert_eq!(cfg, before);
    // 10G switch port: the 24-bit timestamp's half wrap (2^23 ns) is the shorter.
    cfg.set_params(hpcc_id::LINK_SPEED_CODE, &[1]).unwrap();
    assert_eq!(cfg.gap_ns(), 1 << 23);
}

#[test]
fn the_hpcc_flow_fits_the_context_with_one_hop_and_not_two() {
    // 32 bytes of hpcc-cc state at one hop + 16 of the adapter's (probe time, flags, last
    // telemetry time, last sample's switch timestamp) = 48: the whole context.
    assert_eq!(core::mem::size_of::<hpcc_cc::State<1>>(), 32);
    assert_eq!(core::mem::size_of::<HpccFlow>(), 48);
    // A second hop adds 8 bytes: 56 > 48.
    assert!(core::mem::size_of::<hpcc_cc::State<2>>() + 16 > 48);
    for (i, p) in HPCC_PARAMS.iter().enumerate() {
        assert_eq!(p.id as usize, i);
        assert!(p.min <= p.default && p.default <= p.max, "{}", p.name);
    }
}

proptest! {
    #[test]
    fn telemetry_counters_wrapping_leave_the_windows_unchanged(
        steps in proptest::collection::vec((0u16..2_000, 0u32..400_000, 1_000u32..30_000), 2..40),
        tx_back in 0u32..(1 << 24), ts_back in 0u32..(1 << 20),
    ) {
        // The same deltas from two starting points: one far from any wrap, one just below the
        // 32-bit wrap of both counters (which then wrap inside the run, as the packed 24-bit
        // timestamp and the 20-bit count of 32-byte units do).
        let run = |tx_base: u32, ts_base: u32| {
            let mut h = HFlow::new();
            let (mut tx_b, mut ts) = (tx_base, ts_base);
            let mut out = [0u32; 40];
            for (i, &(q, dtx, dts)) in steps.iter().enumerate() {
                tx_b = tx_b.wrapping_add(dtx & !31);
                ts = ts.wrapping_add(dts);
                out[i] = h.probe(tel(q, 2, tx_b, ts), 13_000).0.rate_q20;
            }
            let p = h.flow.hpcc.raw_parts();
            (out, p.w_bytes, p.wc_bytes, p.u, p.inc_stage, p.last_update_seq)
        };
        prop_assert_eq!(run(0, 0), run(u32::MAX.wrapping_sub(tx_back) & !31, u32::MAX.wrapping_sub(ts_back)));
    }

    #[test]
    fn a_stored_hpcc_flow_loads_back_unchanged(
        w in any::<u32>(), wc in any::<u32>(), u in any::<u64>(), lus in any::<u32>(),
        inc in any::<u8>(), hdr in proptest::option::of(any::<u16>()), hop in any::<u64>(),
        probe in any::<u32>(), tel_ts in any::<u32>(), sample_ts in any::<u32>(),
    ) {
        let cfg = HpccPccConfig::default_values().unwrap();
        let mut flow = HpccFlow::new(&cfg);
        flow.hpcc = hpcc_cc::State::from_raw_parts(hpcc_cc::RawParts {
            w_bytes: U24F8::from_bits(w),
            wc_bytes: U24F8::from_bits(wc),
            u: hpcc_cc::U32F32::from_bits(u),
            last_update_seq: lus,
            inc_stage: inc,
            int_header: hdr,
            hops: [hop],
        });
        flow.probe_ts_ns = probe;
        flow.last_tel_ts_ns = tel_ts;
        flow.last_sample_ts_ns = sample_ts;
        let mut ctx = [0u32; CONTEXT_WORDS];
        flow.store(&mut ctx);
        prop_assert_eq!(HpccFlow::load(&ctx), Some(flow));
    }
}
