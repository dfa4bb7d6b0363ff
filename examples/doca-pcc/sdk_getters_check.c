/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* `make sdk-check DOCA_INC=dir`: the DOCA SDK's own event getters against the adapter's decoder,
 * run under QEMU user mode (rv64imac_zbb). Built against the SDK's headers (PCC_WITH_DOCA_SDK,
 * GCC with the stand-in gcc-dpa/dpaintrin.h) and linked with doca_pcc_algo.c built the same way.
 *
 * For many events of pseudo-random bytes (the type byte cycling through every defined type and
 * a random one) it compares:
 *   1. every SDK getter (type, subtype, port, flags, flow tag, sn, timestamp, the TX counters'
 *      two halves, QPN, first timestamp, first sn, number coalesced, the three RTT timestamps,
 *      the 12 raw-data bytes) with cc_pcc_event_decode's fields read as the adapter reads them
 *      (the masks of CcPccEvent's documentation in cc_ffi.h);
 *   2. the event the glue fills from the getters (pcc_glue_event) with the getters, by type;
 *   3. doca_pcc_dev_user_algo (the glue, slot 0 or 1, per-flow contexts kept) with the adapter
 *      called directly on the decoder's event and bytes 28..40 as telemetry: rate, probe request,
 *      context and counters, and that the results' other three fields are left untouched.
 * Prints one summary line; exits 1 after listing the first differences, 0 when there are none.
 * Never part of the DPA build (it provides stand-ins for the platform's functions the glue
 * calls). */
#include <stddef.h>
#include <stdint.h>

#define DOCA_ALLOW_EXPERIMENTAL_API
#include <doca_pcc_dev.h>
#include <doca_pcc_dev_event.h>
#include <doca_pcc_dev_algo_access.h>

#include "cc_ffi.h"
#include "doca_pcc_glue.h"
#include "qemu_io.h"

#define EVENTS 200000u
#define FLOWS 8
#define PORTS DOCA_PCC_DEV_MAX_NUM_PORTS

/* The numbers doca_pcc_decl.h declares for the QEMU test build, against the SDK's. */
_Static_assert(DOCA_PCC_DEV_MAX_NUM_PORTS == 4, "BlueField-3: 4 ports");
_Static_assert(sizeof(doca_pcc_dev_event_t) == 44, "the event is 44 bytes");
_Static_assert(sizeof(doca_pcc_dev_algo_ctxt_t) == 48, "the context is 48 bytes");
_Static_assert(sizeof(doca_pcc_dev_results_t) == 20 && offsetof(doca_pcc_dev_results_t, rtt_req) == 4,
	       "results: rate, rtt_req, then three more words");
_Static_assert(DOCA_PCC_DEV_EVNT_NULL == 0 && DOCA_PCC_DEV_EVNT_FW == 1 && DOCA_PCC_DEV_EVNT_ROCE_CNP == 2 &&
		       DOCA_PCC_DEV_EVNT_ROCE_TX == 3 && DOCA_PCC_DEV_EVNT_ROCE_ACK == 4 &&
		       DOCA_PCC_DEV_EVNT_ROCE_NACK == 5 && DOCA_PCC_DEV_EVNT_RTT == 6 &&
		       DOCA_PCC_DEV_EVNT_ROCE_TX_FOR_ACK_NACK == 31,
	       "event type codes");
_Static_assert(DOCA_PCC_DEV_NACK_EVNT_RNR == 1 && DOCA_PCC_DEV_NACK_EVNT_OOS == 2 &&
		       DOCA_PCC_DEV_NACK_EVNT_DUP_READ == 3,
	       "NACK subtypes");
_Static_assert(DOCA_PCC_DEV_TX_FLAG_ACK_EXPECTED == 1 && DOCA_PCC_DEV_TX_FLAG_OVERLOADED == 2 &&
		       DOCA_PCC_DEV_TX_FLAG_RTT_REQ_SENT == 4,
	       "TX flags");
_Static_assert(DOCA_PCC_DEV_MAX_RATE == 1u << 20, "Q20");
_Static_assert(DOCA_PCC_DEV_MAX_NUM_PARAMS_PER_ALGO == 38 && DOCA_PCC_DEV_MAX_NUM_COUNTERS_PER_ALGO == 63,
	       "38 parameters, 63 counters");
_Static_assert(DOCA_PCC_DEV_STATUS_OK == 0 && DOCA_PCC_DEV_STATUS_FAIL == 1, "status codes");

/* ---- Stand-ins for the platform's functions the glue calls --------------------------------- */

/* Referenced by the SDK's inline timer getters, which its headers mark used; never called. */
uint64_t __dpa_thread_time(void) { return 0; }

static uint32_t platform_counters[PORTS][2][DOCA_PCC_DEV_MAX_NUM_COUNTERS_PER_ALGO];
static uint32_t slots_enabled, builtin_calls;

doca_pcc_dev_error_t doca_pcc_dev_algo_init_metadata(uint32_t algo_idx,
						     const struct doca_pcc_dev_algo_meta_data *user_def,
						     uint32_t param_num, uint32_t counter_num) {
	(void)algo_idx, (void)user_def, (void)param_num, (void)counter_num;
	return DOCA_PCC_DEV_STATUS_OK;
}
doca_pcc_dev_error_t doca_pcc_dev_algo_init_param(uint32_t algo_idx, uint32_t param_id, uint32_t default_value,
						  uint32_t max_value, uint32_t min_value, uint32_t permissions,
						  uint32_t param_desc_size, uint64_t param_desc_addr) {
	(void)algo_idx, (void)param_id, (void)default_value, (void)max_value, (void)min_value, (void)permissions,
		(void)param_desc_size, (void)param_desc_addr;
	return DOCA_PCC_DEV_STATUS_OK;
}
doca_pcc_dev_error_t doca_pcc_dev_algo_init_counter(uint32_t algo_idx, uint32_t counter_id, uint32_t max_value,
						    uint32_t permissions, uint32_t counter_desc_size,
						    uint64_t counter_desc_addr) {
	(void)algo_idx, (void)counter_id, (void)max_value, (void)permissions, (void)counter_desc_size,
		(void)counter_desc_addr;
	return DOCA_PCC_DEV_STATUS_OK;
}
doca_pcc_dev_error_t doca_pcc_dev_init_algo_slot(uint32_t portid, uint32_t algo_slot, uint32_t algo_idx,
						 uint32_t algo_en) {
	(void)portid, (void)algo_slot, (void)algo_idx;
	slots_enabled += algo_en;
	return DOCA_PCC_DEV_STATUS_OK;
}
uint32_t *doca_pcc_dev_get_counters(uint32_t port_num, uint32_t algo_slot) {
	return port_num < PORTS && algo_slot < 2 ? platform_counters[port_num][algo_slot] : 0;
}
void doca_pcc_dev_default_internal_algo(doca_pcc_dev_algo_ctxt_t *algo_ctxt, doca_pcc_dev_event_t *event,
					const doca_pcc_dev_attr_t *attr, doca_pcc_dev_results_t *results) {
	(void)algo_ctxt, (void)event, (void)attr, (void)results;
	builtin_calls++;
}

/* ---- Comparison bookkeeping ---------------------------------------------------------------- */

static uint32_t compared, differences;

static void cmp(uint32_t i, const char *what, uint32_t want, uint32_t got) {
	compared++;
	if (want == got) return;
	if (differences++ < 10) {
		puts_("event "), putu(i), puts_(": "), puts_(what), puts_(": expected "), putx(want);
		puts_(", got "), putx(got), putc_('\n');
	}
}

static uint64_t rng = 0x5D4C0FFEE0D0CA03ull;
static uint32_t next32(void) {
	/* xorshift64* */
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return (uint32_t)((rng * 0x2545F4914F6CDD1Dull) >> 32);
}

static uint32_t be(const uint8_t *p) {
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

int main(void) {
	uint32_t mask = 0xFFFFFFFFu;
	doca_pcc_dev_user_init(&mask);
	if (slots_enabled != 2 * PORTS || mask != 0) {
		puts_("sdk-check: doca_pcc_dev_user_init did not enable both slots on every port\n");
		flush_fd(1);
		return 1;
	}
	static CcPccTimelyConfig tcfg;
	static CcPccHpccConfig hcfg;
	cc_pcc_timely_config_default(&tcfg);
	if (cc_pcc_hpcc_config_default(&hcfg) != CC_STATUS_OK) return 1;
	static doca_pcc_dev_algo_ctxt_t glue_ctx[2][FLOWS];
	static uint32_t direct_ctx[2][FLOWS][CC_PCC_CONTEXT_WORDS];
	static uint32_t direct_counters[PORTS][2][CC_PCC_COUNTER_NUM];
	static const uint8_t types[9] = {0, 1, 2, 3, 4, 5, 6, 31, 0};
	uint32_t getter_cmp = 0, glue_cmp = 0, beyond = 0;

	for (uint32_t i = 0; i < EVENTS; i++) {
		static doca_pcc_dev_event_t event;
		uint8_t *b = (uint8_t *)&event;
		for (uint32_t w = 0; w < 11; w++) {
			uint32_t r = next32();
			for (uint32_t k = 0; k < 4; k++) b[4 * w + k] = (uint8_t)(r >> (8 * k));
		}
		/* Every defined type in turn, then a random code; mostly a port in the table. */
		if (i % 9 != 8) b[15] = types[i % 9];
		if (i % 16 != 15) b[13] &= PORTS - 1;

		/* 1. The SDK's getters against the decoder, read as the adapter reads it. */
		uint32_t c0 = compared;
		CcPccEvent d;
		cc_pcc_event_decode((const uint8_t(*)[CC_PCC_EVENT_BYTES])(const void *)b, &d);
		doca_pcc_dev_event_general_attr_t a = doca_pcc_dev_get_ev_attr(&event);
		cmp(i, "ev_type", d.type_code, a.ev_type);
		cmp(i, "ev_subtype", d.subtype, a.ev_subtype);
		cmp(i, "port_num", d.port, a.port_num);
		cmp(i, "flags", d.flags, a.flags);
		cmp(i, "flow tag", d.flow_tag, doca_pcc_dev_get_flowtag(&event));
		cmp(i, "sn", d.sn, doca_pcc_dev_get_sn(&event));
		cmp(i, "timestamp", d.ts_ns, doca_pcc_dev_get_timestamp(&event));
		cmp(i, "first timestamp", d.spec[0], doca_pcc_dev_get_roce_first_timestamp(&event));
		doca_pcc_dev_roce_tx_cntrs_t tx = doca_pcc_dev_get_roce_tx_cntrs(&event);
		cmp(i, "sent_pkts", d.spec[1] >> 16, tx.sent_pkts);
		cmp(i, "sent_32bytes", d.spec[1] & 0xFFFFu, tx.sent_32bytes);
		cmp(i, "flow qpn", d.spec[2] & 0xFFFFFFu, doca_pcc_dev_get_flow_qpn(&event));
		cmp(i, "first sn", d.spec[1], doca_pcc_dev_get_roce_ack_first_sn(&event));
		cmp(i, "num_coalesced", d.spec[2] & 0xFFFFu, doca_pcc_dev_get_ack_nack_cnp_extra(&event).num_coalesced);
		cmp(i, "rtt req send", d.spec[0], doca_pcc_dev_get_rtt_req_send_timestamp(&event));
		cmp(i, "rtt req recv", d.spec[1], doca_pcc_dev_get_rtt_req_recv_timestamp(&event));
		cmp(i, "rtt resp send", d.spec[2], doca_pcc_dev_get_rtt_resp_send_timestamp(&event));
		const unsigned char *raw = doca_pcc_dev_get_rtt_raw_data(&event);
		for (uint32_t k = 0; k < 3; k++) cmp(i, "raw data word", d.spec[k], be(raw + 4 * k));
		cmp(i, "raw data size", 12, (uint32_t)doca_pcc_dev_get_rtt_raw_data_size(&event));
		getter_cmp += compared - c0;

		/* 2. The glue's event against the getters, by type. */
		c0 = compared;
		CcPccEvent g;
		pcc_glue_event(&event, &g);
		cmp(i, "glue type", a.ev_type, g.type_code);
		cmp(i, "glue subtype", a.ev_subtype, g.subtype);
		cmp(i, "glue port", a.port_num, g.port);
		cmp(i, "glue flags", a.flags, g.flags);
		cmp(i, "glue flow tag", doca_pcc_dev_get_flowtag(&event), g.flow_tag);
		cmp(i, "glue sn", doca_pcc_dev_get_sn(&event), g.sn);
		cmp(i, "glue timestamp", doca_pcc_dev_get_timestamp(&event), g.ts_ns);
		uint32_t want[3] = {0, 0, 0};
		switch (a.ev_type) {
		case DOCA_PCC_DEV_EVNT_ROCE_TX:
			want[0] = doca_pcc_dev_get_roce_first_timestamp(&event);
			want[1] = (uint32_t)tx.sent_pkts << 16 | tx.sent_32bytes;
			want[2] = doca_pcc_dev_get_flow_qpn(&event);
			break;
		case DOCA_PCC_DEV_EVNT_ROCE_ACK:
		case DOCA_PCC_DEV_EVNT_ROCE_NACK:
		case DOCA_PCC_DEV_EVNT_ROCE_CNP:
			want[0] = doca_pcc_dev_get_roce_first_timestamp(&event);
			want[1] = doca_pcc_dev_get_roce_ack_first_sn(&event);
			want[2] = doca_pcc_dev_get_ack_nack_cnp_extra(&event).num_coalesced;
			break;
		case DOCA_PCC_DEV_EVNT_RTT:
			want[0] = doca_pcc_dev_get_rtt_req_send_timestamp(&event);
			want[1] = doca_pcc_dev_get_rtt_req_recv_timestamp(&event);
			want[2] = doca_pcc_dev_get_rtt_resp_send_timestamp(&event);
			break;
		default:
			break;
		}
		for (uint32_t k = 0; k < 3; k++) cmp(i, "glue union word", want[k], g.spec[k]);
		glue_cmp += compared - c0;

		/* 3. The callback against the adapter called directly. */
		uint32_t slot = i & 1, flow = (i >> 1) % FLOWS;
		doca_pcc_dev_attr_t attr = {0};
		attr.algo_slot = slot & 0xF;
		doca_pcc_dev_results_t res = {0};
		res.probe_type_slot = 0xA5A5A5A5u, res.credits = 0x5A5A5A5Au, res.reload_credits = 0xC3C3C3C3u;
		doca_pcc_dev_user_algo(&glue_ctx[slot][flow], &event, &attr, &res);
		uint32_t(*dctx)[CC_PCC_CONTEXT_WORDS] = &direct_ctx[slot][flow];
		CcPccResult r = {0, 0};
		if (d.port >= PORTS) {
			r.rate_q20 = slot == 0 ? cc_pcc_timely_rate(&tcfg, (const uint32_t(*)[CC_PCC_CONTEXT_WORDS])dctx)
					       : cc_pcc_hpcc_rate(&hcfg, (const uint32_t(*)[CC_PCC_CONTEXT_WORDS])dctx);
			beyond++;
		} else if (slot == 0) {
			r = cc_pcc_timely_on_event(&tcfg, dctx, &d, direct_counters[d.port][0]);
		} else {
			r = cc_pcc_hpcc_on_event(&hcfg, dctx, &d, (const uint8_t(*)[CC_PCC_TELEMETRY_BYTES])(b + 28),
						 direct_counters[d.port][1]);
		}
		cmp(i, "rate", r.rate_q20, res.rate);
		cmp(i, "rtt_req", r.rtt_req, res.rtt_req);
		cmp(i, "probe_type_slot untouched", 0xA5A5A5A5u, res.probe_type_slot);
		cmp(i, "credits untouched", 0x5A5A5A5Au, res.credits);
		cmp(i, "reload_credits untouched", 0xC3C3C3C3u, res.reload_credits);
		for (uint32_t k = 0; k < CC_PCC_CONTEXT_WORDS; k++) cmp(i, "context word", (*dctx)[k], glue_ctx[slot][flow].data[k]);
	}
	for (uint32_t p = 0; p < PORTS; p++)
		for (uint32_t s = 0; s < 2; s++)
			for (uint32_t k = 0; k < CC_PCC_COUNTER_NUM; k++)
				cmp(EVENTS, "counter", direct_counters[p][s][k], platform_counters[p][s][k]);
	cmp(EVENTS, "glue PORT_BEYOND_TABLE", beyond, pcc_glue_counters[PCC_GLUE_PORT_BEYOND_TABLE]);
	cmp(EVENTS, "built-in algorithm calls", 0, builtin_calls);

	puts_("sdk-check: "), putu(EVENTS), puts_(" events of random bytes: ");
	putu(getter_cmp), puts_(" SDK getter readings vs cc_pcc_event_decode, ");
	putu(glue_cmp), puts_(" glue event fields vs the SDK getters, ");
	putu(EVENTS), puts_(" callbacks vs the adapter called directly (");
	putu(beyond), puts_(" on a port beyond the table); ");
	putu(compared), puts_(" comparisons, "), putu(differences), puts_(" differences\n");
	flush_fd(1);
	return differences ? 1 : 0;
}
