/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* DOCA PCC user algorithms over the project's adapter (crates/cc-pcc through libcc_ffi.a):
 *   algorithm slot 0: TIMELY on probe RTTs (algo_idx 0);
 *   algorithm slot 1: HPCC on one hop of switch telemetry (algo_idx 1);
 *   any other slot:   the platform's built-in algorithm.
 * This file and doca_pcc_glue.h are what a DOCA PCC project copies, beside libcc_ffi.a and
 * cc_ffi.h. It builds against the SDK's headers with PCC_WITH_DOCA_SDK (BlueField-3 only), or
 * against the project's own declarations (doca_pcc_decl.h) for the QEMU test.
 *
 * Per event nothing here divides or allocates: the configuration of each (port, slot) is
 * validated and precomputed at init and on set_algo_params; the event's fields are read with
 * the platform's getters and go to the adapter with the flow's 48-byte context and the
 * platform's counter array as they are. */
#include <stdint.h>

#ifdef PCC_WITH_DOCA_SDK
/* doca_pcc_dev_get_rtt_raw_data (HPCC's telemetry) is experimental in the SDK. */
#define DOCA_ALLOW_EXPERIMENTAL_API
#include <doca_pcc_dev.h>
#include <doca_pcc_dev_event.h>
#include <doca_pcc_dev_algo_access.h>
#if !defined(__NV_DPA) || !defined(__NV_DPA_BF3) || !defined(__NV_DPA_CX8)
#error "doca_pcc_algo.c: __NV_DPA, __NV_DPA_BF3 and __NV_DPA_CX8 are undefined: build with dpacc -mcpu=nv-dpa-bf3 (or predefine them, README.md 'GCC')"
#elif __NV_DPA >= __NV_DPA_CX8
#error "doca_pcc_algo.c: ConnectX-8 is not supported: its RTT timestamps are 28-bit fields the adapter does not read (build for BlueField-3: -mcpu=nv-dpa-bf3)"
#elif __NV_DPA != __NV_DPA_BF3
#error "doca_pcc_algo.c: only BlueField-3 (__NV_DPA == __NV_DPA_BF3) is supported"
#endif
#else
#include "doca_pcc_decl.h"
#endif
#include "cc_ffi.h"
#include "doca_pcc_glue.h"

#define PCC_SLOT_TIMELY 0u
#define PCC_SLOT_HPCC 1u
#define PCC_ALGO_IDX_TIMELY 0u
#define PCC_ALGO_IDX_HPCC 1u
/* Parameter permission: writable by the host (the samples' value). Counter permission: read. */
#define PCC_PARAM_PERM_RW 1u
#define PCC_COUNTER_PERM_RO 2u

_Static_assert(sizeof(doca_pcc_dev_algo_ctxt_t) == 4 * CC_PCC_CONTEXT_WORDS, "the flow context is 48 bytes");
_Static_assert(sizeof(doca_pcc_dev_event_t) == CC_PCC_EVENT_BYTES, "the event is 44 bytes");
_Static_assert(CC_PCC_TIMELY_PARAM_NUM <= 38 && CC_PCC_HPCC_PARAM_NUM <= 38, "at most 38 parameters");
_Static_assert(CC_PCC_COUNTER_NUM <= 63, "at most 63 counters");

volatile uint32_t pcc_glue_counters[PCC_GLUE_COUNTER_NUM];

static inline void glue_count(uint32_t i) { __atomic_fetch_add(&pcc_glue_counters[i], 1u, __ATOMIC_RELAXED); }

/* One validated configuration per port and algorithm (written at init and by set_algo_params,
 * read by every event of the port). */
static CcPccTimelyConfig timely_cfg[DOCA_PCC_DEV_MAX_NUM_PORTS];
static CcPccHpccConfig hpcc_cfg[DOCA_PCC_DEV_MAX_NUM_PORTS];

/* Names the platform reads through the descriptors' addresses: they must outlive init. */
static CcPccParamDef timely_defs[CC_PCC_TIMELY_PARAM_NUM];
static CcPccParamDef hpcc_defs[CC_PCC_HPCC_PARAM_NUM];
static uint8_t counter_names[CC_PCC_COUNTER_NUM][CC_PCC_NAME_BYTES];
static const char timely_desc[] = "TIMELY on probe RTTs (dc-cc cc-pcc)";
static const char hpcc_desc[] = "HPCC on switch telemetry (dc-cc cc-pcc)";

static uint32_t name_len(const uint8_t *s) {
	uint32_t n = 0;
	while (n < CC_PCC_NAME_BYTES && s[n]) n++;
	return n + 1; /* with the NUL */
}

/* Declares one algorithm: metadata, every parameter row and every counter, from the adapter's
 * tables. Returns 0, or -1 at the first failure (the library's tables could not be read, or
 * the platform refused a declaration): the caller then disables the algorithm's slot. */
static int declare(uint32_t algo_idx, const char *desc, uint32_t desc_size, CcPccParamDef *defs, uint32_t param_num) {
	for (uint32_t i = 0; i < param_num; i++)
		if (cc_pcc_param_def(algo_idx == PCC_ALGO_IDX_TIMELY ? CC_PCC_ALGO_TIMELY : CC_PCC_ALGO_HPCC, i,
				     &defs[i]) != CC_STATUS_OK)
			return -1;
	for (uint32_t i = 0; i < CC_PCC_COUNTER_NUM; i++)
		if (cc_pcc_counter_name(i, &counter_names[i]) != CC_STATUS_OK) return -1;

	struct doca_pcc_dev_algo_meta_data meta = {0};
	meta.algo_id = 0xBF00u + algo_idx;
	meta.algo_major_version = 1;
	meta.algo_minor_version = CC_FFI_ABI_VERSION;
	meta.algo_desc_size = desc_size;
	meta.algo_desc_addr = (uint64_t)(uintptr_t)desc;
	if (doca_pcc_dev_algo_init_metadata(algo_idx, &meta, param_num, CC_PCC_COUNTER_NUM) != DOCA_PCC_DEV_STATUS_OK)
		return -1;
	for (uint32_t i = 0; i < param_num; i++)
		if (doca_pcc_dev_algo_init_param(algo_idx, defs[i].id, defs[i].default_value, defs[i].max, defs[i].min,
						 PCC_PARAM_PERM_RW, name_len(defs[i].name),
						 (uint64_t)(uintptr_t)defs[i].name) != DOCA_PCC_DEV_STATUS_OK)
			return -1;
	for (uint32_t i = 0; i < CC_PCC_COUNTER_NUM; i++)
		if (doca_pcc_dev_algo_init_counter(algo_idx, i, UINT32_MAX, PCC_COUNTER_PERM_RO,
						   name_len(counter_names[i]),
						   (uint64_t)(uintptr_t)counter_names[i]) != DOCA_PCC_DEV_STATUS_OK)
			return -1;
	return 0;
}

void doca_pcc_dev_user_init(uint32_t *disable_event_bitmask) {
	int timely_ok = declare(PCC_ALGO_IDX_TIMELY, timely_desc, sizeof timely_desc, timely_defs,
				CC_PCC_TIMELY_PARAM_NUM) == 0;
	int hpcc_ok = declare(PCC_ALGO_IDX_HPCC, hpcc_desc, sizeof hpcc_desc, hpcc_defs, CC_PCC_HPCC_PARAM_NUM) == 0;
	/* The tables' defaults (what the declarations above make the platform's arrays hold). */
	for (uint32_t port = 0; port < DOCA_PCC_DEV_MAX_NUM_PORTS; port++) {
		cc_pcc_timely_config_default(&timely_cfg[port]);
		if (cc_pcc_hpcc_config_default(&hpcc_cfg[port]) != CC_STATUS_OK) hpcc_ok = 0;
	}
	if (!timely_ok) glue_count(PCC_GLUE_DECL_FAILED_TIMELY);
	if (!hpcc_ok) glue_count(PCC_GLUE_DECL_FAILED_HPCC);
	for (uint32_t port = 0; port < DOCA_PCC_DEV_MAX_NUM_PORTS; port++) {
		if (doca_pcc_dev_init_algo_slot(port, PCC_SLOT_TIMELY, PCC_ALGO_IDX_TIMELY, (uint32_t)timely_ok) !=
		    DOCA_PCC_DEV_STATUS_OK)
			glue_count(PCC_GLUE_SLOT_INIT_FAILED);
		if (doca_pcc_dev_init_algo_slot(port, PCC_SLOT_HPCC, PCC_ALGO_IDX_HPCC, (uint32_t)hpcc_ok) !=
		    DOCA_PCC_DEV_STATUS_OK)
			glue_count(PCC_GLUE_SLOT_INIT_FAILED);
	}
	/* Every event type is handled (ACK, NACK, CNP are counted): none is masked out. */
	*disable_event_bitmask = 0;
}

/* The event's fields from the platform's getters, as the adapter takes them (CcPccEvent in
 * cc_ffi.h): the union words by type, none for the types the adapter ignores. */
void pcc_glue_event(doca_pcc_dev_event_t *event, CcPccEvent *ev) {
	doca_pcc_dev_event_general_attr_t a = doca_pcc_dev_get_ev_attr(event);
	ev->type_code = (uint8_t)a.ev_type;
	ev->subtype = (uint8_t)a.ev_subtype;
	ev->port = (uint8_t)a.port_num;
	ev->flags = (uint8_t)a.flags;
	ev->flow_tag = doca_pcc_dev_get_flowtag(event);
	ev->sn = doca_pcc_dev_get_sn(event);
	ev->ts_ns = doca_pcc_dev_get_timestamp(event);
	switch (a.ev_type) {
	case DOCA_PCC_DEV_EVNT_ROCE_TX: {
		doca_pcc_dev_roce_tx_cntrs_t c = doca_pcc_dev_get_roce_tx_cntrs(event);
		ev->spec[0] = doca_pcc_dev_get_roce_first_timestamp(event);
		ev->spec[1] = (uint32_t)c.sent_pkts << 16 | (uint32_t)c.sent_32bytes;
		ev->spec[2] = doca_pcc_dev_get_flow_qpn(event);
		break;
	}
	case DOCA_PCC_DEV_EVNT_ROCE_ACK:
	case DOCA_PCC_DEV_EVNT_ROCE_NACK:
	case DOCA_PCC_DEV_EVNT_ROCE_CNP:
		ev->spec[0] = doca_pcc_dev_get_roce_first_timestamp(event);
		ev->spec[1] = doca_pcc_dev_get_roce_ack_first_sn(event);
		ev->spec[2] = doca_pcc_dev_get_ack_nack_cnp_extra(event).num_coalesced;
		break;
	case DOCA_PCC_DEV_EVNT_RTT:
		ev->spec[0] = doca_pcc_dev_get_rtt_req_send_timestamp(event);
		ev->spec[1] = doca_pcc_dev_get_rtt_req_recv_timestamp(event);
		ev->spec[2] = doca_pcc_dev_get_rtt_resp_send_timestamp(event);
		break;
	default:
		ev->spec[0] = ev->spec[1] = ev->spec[2] = 0;
		break;
	}
}

/* Sets the two results NVIDIA's templates set (rate, rtt_req); the others are left as the
 * platform passed them. */
static inline void answer(doca_pcc_dev_results_t *results, uint32_t rate, uint32_t rtt_req) {
	results->rate = rate;
	results->rtt_req = rtt_req;
}

void doca_pcc_dev_user_algo(doca_pcc_dev_algo_ctxt_t *algo_ctxt, doca_pcc_dev_event_t *event,
			    const doca_pcc_dev_attr_t *attr, doca_pcc_dev_results_t *results) {
	uint32_t slot = attr->algo_slot;
	if (slot != PCC_SLOT_TIMELY && slot != PCC_SLOT_HPCC) {
		doca_pcc_dev_default_internal_algo(algo_ctxt, event, attr, results);
		return;
	}
	uint32_t(*ctx)[CC_PCC_CONTEXT_WORDS] = (uint32_t(*)[CC_PCC_CONTEXT_WORDS])(void *)algo_ctxt;
	CcPccEvent ev;
	pcc_glue_event(event, &ev);
	if (ev.port >= DOCA_PCC_DEV_MAX_NUM_PORTS) {
		/* No configuration or counter array for this port: the flow's rate as stored (port
		 * 0's configuration converts it), no probe, the context untouched. */
		glue_count(PCC_GLUE_PORT_BEYOND_TABLE);
		const uint32_t(*stored)[CC_PCC_CONTEXT_WORDS] = (const uint32_t(*)[CC_PCC_CONTEXT_WORDS])ctx;
		answer(results,
		       slot == PCC_SLOT_TIMELY ? cc_pcc_timely_rate(&timely_cfg[0], stored)
					       : cc_pcc_hpcc_rate(&hpcc_cfg[0], stored),
		       0);
		return;
	}
	uint32_t *counters = doca_pcc_dev_get_counters(ev.port, slot); /* may be NULL */
	CcPccResult r;
	if (slot == PCC_SLOT_TIMELY) {
		r = cc_pcc_timely_on_event(&timely_cfg[ev.port], ctx, &ev, counters);
	} else {
		/* The RTT response's 12 bytes of raw data (bytes 28..40 as delivered: one hop of
		 * telemetry); read by the adapter for RTT events only. */
		const uint8_t(*tel)[CC_PCC_TELEMETRY_BYTES] =
			(const uint8_t(*)[CC_PCC_TELEMETRY_BYTES])(const void *)doca_pcc_dev_get_rtt_raw_data(event);
		r = cc_pcc_hpcc_on_event(&hpcc_cfg[ev.port], ctx, &ev, tel, counters);
	}
	answer(results, r.rate_q20, r.rtt_req);
}

/* All or none: the adapter validates the new values with the ones in force and re-derives every
 * constant; only then are they copied into the platform's array. `params` is taken to point at
 * the first changed parameter (the samples' description: "the beginning of the current
 * parameters to be changed"). */
doca_pcc_dev_error_t doca_pcc_dev_user_set_algo_params(uint32_t port_num, uint32_t algo_slot, uint32_t param_id_base,
						       uint32_t param_num, const uint32_t *new_param_values,
						       uint32_t *params) {
	if (port_num >= DOCA_PCC_DEV_MAX_NUM_PORTS || new_param_values == 0 || params == 0)
		return DOCA_PCC_DEV_STATUS_FAIL;
	CcStatus s;
	if (algo_slot == PCC_SLOT_TIMELY)
		s = cc_pcc_timely_set_params(&timely_cfg[port_num], param_id_base, param_num, new_param_values);
	else if (algo_slot == PCC_SLOT_HPCC)
		s = cc_pcc_hpcc_set_params(&hpcc_cfg[port_num], param_id_base, param_num, new_param_values);
	else
		return DOCA_PCC_DEV_STATUS_FAIL;
	if (s != CC_STATUS_OK) return DOCA_PCC_DEV_STATUS_FAIL;
	for (uint32_t i = 0; i < param_num; i++) params[i] = new_param_values[i];
	return DOCA_PCC_DEV_STATUS_OK;
}
