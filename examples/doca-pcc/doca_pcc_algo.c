/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* DOCA PCC user algorithms over the project's adapter (crates/cc-pcc through libcc_ffi.a):
 *   algorithm slot 0: TIMELY on probe RTTs (algo_idx 0);
 *   algorithm slot 1: HPCC on one hop of switch telemetry (algo_idx 1);
 *   any other slot:   the platform's built-in algorithm.
 * This file is what a DOCA PCC project copies, beside libcc_ffi.a and cc_ffi.h. It builds
 * against the project's own declarations (doca_pcc_decl.h) or, with PCC_WITH_DOCA_SDK (the
 * Makefile sets it when DOCA_DIR is given), against the SDK's headers.
 *
 * Per event nothing here divides or allocates: the configuration of each (port, slot) is
 * validated and precomputed at init and on set_algo_params; the event goes to the adapter with
 * the flow's 48-byte context and the platform's counter array as they are. */
#include <stdint.h>

#ifdef PCC_WITH_DOCA_SDK
#include <doca_pcc_dev.h>
#include <doca_pcc_dev_event.h>
#include <doca_pcc_dev_algo_access.h>
#else
#include "doca_pcc_decl.h"
#endif
#include "cc_ffi.h"

#define PCC_SLOT_TIMELY 0u
#define PCC_SLOT_HPCC 1u
#define PCC_ALGO_IDX_TIMELY 0u
#define PCC_ALGO_IDX_HPCC 1u
/* Parameter permission: writable by the host (the samples' value). Counter permission: read. */
#define PCC_PARAM_PERM_RW 1u
#define PCC_COUNTER_PERM_RO 2u

_Static_assert(sizeof(doca_pcc_dev_algo_ctxt_t) == 4 * CC_PCC_CONTEXT_WORDS, "the flow context is 48 bytes");
_Static_assert(CC_PCC_TIMELY_PARAM_NUM <= 38 && CC_PCC_HPCC_PARAM_NUM <= 38, "at most 38 parameters");
_Static_assert(CC_PCC_COUNTER_NUM <= 63, "at most 63 counters");
#ifndef PCC_WITH_DOCA_SDK
_Static_assert(sizeof(doca_pcc_dev_event_t) == CC_PCC_EVENT_BYTES, "the event is 44 bytes");
#endif

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
 * tables. Returns 0, or -1 if the library's tables could not be read (a library/header
 * mismatch: the algorithm is then left undeclared and its slot disabled). */
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
	doca_pcc_dev_algo_init_metadata(algo_idx, &meta, param_num, CC_PCC_COUNTER_NUM);
	for (uint32_t i = 0; i < param_num; i++)
		doca_pcc_dev_algo_init_param(algo_idx, defs[i].id, defs[i].default_value, defs[i].max, defs[i].min,
					     PCC_PARAM_PERM_RW, name_len(defs[i].name),
					     (uint64_t)(uintptr_t)defs[i].name);
	for (uint32_t i = 0; i < CC_PCC_COUNTER_NUM; i++)
		doca_pcc_dev_algo_init_counter(algo_idx, i, UINT32_MAX, PCC_COUNTER_PERM_RO, name_len(counter_names[i]),
					       (uint64_t)(uintptr_t)counter_names[i]);
	return 0;
}

void doca_pcc_dev_user_init(uint32_t *disable_event_bitmask) {
	int timely_ok = declare(PCC_ALGO_IDX_TIMELY, timely_desc, sizeof timely_desc, timely_defs,
				CC_PCC_TIMELY_PARAM_NUM) == 0;
	int hpcc_ok = declare(PCC_ALGO_IDX_HPCC, hpcc_desc, sizeof hpcc_desc, hpcc_defs, CC_PCC_HPCC_PARAM_NUM) == 0;
	for (uint32_t port = 0; port < DOCA_PCC_DEV_MAX_NUM_PORTS; port++) {
		/* The tables' defaults (what the declarations above make the platform's arrays hold). */
		cc_pcc_timely_config_default(&timely_cfg[port]);
		if (cc_pcc_hpcc_config_default(&hpcc_cfg[port]) != CC_STATUS_OK) hpcc_ok = 0;
		doca_pcc_dev_init_algo_slot(port, PCC_SLOT_TIMELY, PCC_ALGO_IDX_TIMELY, (uint32_t)timely_ok);
		doca_pcc_dev_init_algo_slot(port, PCC_SLOT_HPCC, PCC_ALGO_IDX_HPCC, (uint32_t)hpcc_ok);
	}
	/* Every event type is handled (ACK, NACK, CNP are counted): none is masked out. */
	*disable_event_bitmask = 0;
}

/* The event's fields in host order. Our declaration of the event is the 44 bytes as delivered,
 * which the adapter decodes; with the SDK the same bytes are read (the SDK's event is assumed to
 * be that layout) and, with PCC_CHECK_LAYOUT, checked against the SDK's getters. */
static inline int event_fields(doca_pcc_dev_event_t *event, CcPccEvent *ev) {
	cc_pcc_event_decode((const uint8_t(*)[CC_PCC_EVENT_BYTES])(const void *)event, ev);
#ifdef PCC_CHECK_LAYOUT
	doca_pcc_dev_event_general_attr_t a = doca_pcc_dev_get_ev_attr(event);
	if (a.ev_type != ev->type_code || a.port_num != ev->port || a.flags != ev->flags ||
	    doca_pcc_dev_get_timestamp(event) != ev->ts_ns)
		return -1;
	if (a.ev_type == DOCA_PCC_DEV_EVNT_RTT && (doca_pcc_dev_get_rtt_req_send_timestamp(event) != ev->spec[0] ||
						   doca_pcc_dev_get_rtt_req_recv_timestamp(event) != ev->spec[1]))
		return -1;
#endif
	return 0;
}

void doca_pcc_dev_user_algo(doca_pcc_dev_algo_ctxt_t *algo_ctxt, doca_pcc_dev_event_t *event,
			    const doca_pcc_dev_attr_t *attr, doca_pcc_dev_results_t *results) {
	CcPccEvent ev;
	uint32_t slot = attr->algo_slot;
	if (event_fields(event, &ev) != 0 || ev.port >= DOCA_PCC_DEV_MAX_NUM_PORTS ||
	    (slot != PCC_SLOT_TIMELY && slot != PCC_SLOT_HPCC)) {
		doca_pcc_dev_default_internal_algo(algo_ctxt, event, attr, results);
		return;
	}
	uint32_t *counters = doca_pcc_dev_get_counters(ev.port, slot); /* may be NULL */
	uint32_t(*ctx)[CC_PCC_CONTEXT_WORDS] = (uint32_t(*)[CC_PCC_CONTEXT_WORDS])(void *)algo_ctxt;
	CcPccResult r;
	if (slot == PCC_SLOT_TIMELY) {
		r = cc_pcc_timely_on_event(&timely_cfg[ev.port], ctx, &ev, counters);
	} else {
		const uint8_t(*tel)[CC_PCC_TELEMETRY_BYTES] =
			(const uint8_t(*)[CC_PCC_TELEMETRY_BYTES])(const void *)doca_pcc_dev_get_rtt_raw_data(event);
		r = cc_pcc_hpcc_on_event(&hpcc_cfg[ev.port], ctx, &ev, tel, counters);
	}
	results->rate = r.rate_q20;
	results->rtt_req = r.rtt_req;
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
