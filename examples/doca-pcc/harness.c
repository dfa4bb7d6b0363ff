/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Test harness for doca_pcc_algo.c under QEMU user mode (never part of the DPA build): plays the
 * platform's part — the event getters, the parameter and counter arrays, the per-flow contexts,
 * the declarations — and feeds an event sequence read from standard input, printing one line per
 * record. The host program (cargo example doca_pcc_events in crates/cc-ffi) writes the same
 * sequence and the lines the adapter gives on the host; `make check` compares the two.
 *
 * The getters read the 44 bytes as the SDK's do (doca_pcc_decl.h has the layout): the word at the
 * field's offset, byte-swapped, then the field's bits. For every event the harness also requires
 * that the event the glue builds from these getters (pcc_glue_event) is, as the adapter reads it,
 * the event cc_pcc_event_decode reads from the same bytes: the C getters and the Rust decoder are
 * checked against each other on every event of the sequence.
 *
 * Input: records of 64 bytes. Words 0..3 (little-endian): op, slot | port << 8, flow or base,
 * num; then 48 payload bytes.
 *   op 1: one event of flow `flow` (< 16) in algorithm slot `slot` (< 16): payload bytes 0..43
 *         are the event as delivered; its port byte (13) must equal the record's port, which may
 *         be beyond the platform's ports (the glue answers those without the adapter). Flow
 *         contexts are kept per (slot, flow).
 *   op 2: doca_pcc_dev_user_set_algo_params(port, slot, base, num, payload words 0..num-1).
 * Output lines:
 *   param ALGO ID NAME DEFAULT MIN MAX     one per declared parameter (at init)
 *   counter ALGO ID NAME                  one per declared counter
 *   ev N SLOT FLOW RATE_Q20 RTT_REQ       record N, an event
 *   set N SLOT BASE NUM STATUS            record N, a parameter change (0 ok, 1 refused)
 *   counters SLOT PORT C0 .. C25          at the end, for every (slot 0/1, port) that had an event
 *   params V ..                           port 0's parameter arrays, slot 0 then slot 1
 *   glue G0 G1 G2 G3                      the glue's counters (doca_pcc_glue.h)
 *   builtin N                             events the platform's built-in algorithm answered
 *   records N
 * The built-in algorithm here answers every event with rate 4096 and no probe.
 * Exit codes: 0 done; 2 bad input (no records, a truncated record, an unknown op, a flow or slot
 * out of range, a parameter change for a port out of range or of more than 12 values, an event
 * whose port byte differs from the record's), after a line `error: standard input: record N: ...`
 * on standard error; 1 the declarations broke the platform's rules, an event of slot 0 or 1
 * reached the built-in algorithm, or the glue's reading of an event differs from the decoder's.
 *
 * Built with -DHARNESS_REFUSE=1 the platform refuses HPCC's parameter row 3 and the slot
 * initialisation of (port 3, slot 0); the harness then checks, without reading input, that the
 * glue disabled HPCC's slot on every port, kept TIMELY's, and counted both refusals. */
#include <stdint.h>

#include "doca_pcc_decl.h"
#include "cc_ffi.h"
#include "doca_pcc_glue.h"
#include "qemu_io.h"

#define SLOTS 2      /* the glue's slots: 0 TIMELY, 1 HPCC */
#define ALL_SLOTS 16 /* attr->algo_slot is 4 bits */
#define FLOWS 16
#define RECORD_BYTES 64
#define BUILTIN_RATE 4096u
#ifndef HARNESS_REFUSE
#define HARNESS_REFUSE 0
#endif

static _Noreturn void die(uint32_t code, uint32_t rec, const char *what) {
	flush_fd(1);
	puts_("error: standard input: record ");
	putu(rec);
	puts_(": ");
	puts_(what);
	putc_('\n');
	flush_fd(2);
	exit_(code);
}

/* ---- The event getters ------------------------------------------------------------------- */

/* The big-endian word at byte 4i, in host order. */
static uint32_t ev_word(const doca_pcc_dev_event_t *e, uint32_t i) { return __builtin_bswap32(e->word[i]); }

doca_pcc_dev_event_general_attr_t doca_pcc_dev_get_ev_attr(doca_pcc_dev_event_t *event) {
	union {
		uint32_t v;
		doca_pcc_dev_event_general_attr_t a;
	} u = {.v = ev_word(event, 3)};
	return u.a;
}
uint32_t doca_pcc_dev_get_flowtag(doca_pcc_dev_event_t *event) { return ev_word(event, 4); }
uint32_t doca_pcc_dev_get_sn(doca_pcc_dev_event_t *event) { return ev_word(event, 5); }
uint32_t doca_pcc_dev_get_timestamp(doca_pcc_dev_event_t *event) { return ev_word(event, 6); }
uint32_t doca_pcc_dev_get_roce_first_timestamp(doca_pcc_dev_event_t *event) { return ev_word(event, 7); }
doca_pcc_dev_roce_tx_cntrs_t doca_pcc_dev_get_roce_tx_cntrs(doca_pcc_dev_event_t *event) {
	union {
		uint32_t v;
		doca_pcc_dev_roce_tx_cntrs_t c;
	} u = {.v = ev_word(event, 8)};
	return u.c;
}
uint32_t doca_pcc_dev_get_flow_qpn(doca_pcc_dev_event_t *event) {
	union {
		uint32_t v;
		struct {
			uint32_t flow_qpn : 24;
			uint32_t reserved : 8;
		} x;
	} u = {.v = ev_word(event, 9)};
	return u.x.flow_qpn;
}
uint32_t doca_pcc_dev_get_roce_ack_first_sn(doca_pcc_dev_event_t *event) { return ev_word(event, 8); }
doca_pcc_dev_ack_nack_cnp_extra_t doca_pcc_dev_get_ack_nack_cnp_extra(doca_pcc_dev_event_t *event) {
	union {
		uint32_t v;
		doca_pcc_dev_ack_nack_cnp_extra_t x;
	} u = {.v = ev_word(event, 9)};
	return u.x;
}
uint32_t doca_pcc_dev_get_rtt_req_send_timestamp(doca_pcc_dev_event_t *event) { return ev_word(event, 7); }
uint32_t doca_pcc_dev_get_rtt_req_recv_timestamp(doca_pcc_dev_event_t *event) { return ev_word(event, 8); }
uint32_t doca_pcc_dev_get_rtt_resp_send_timestamp(doca_pcc_dev_event_t *event) { return ev_word(event, 9); }
unsigned char *doca_pcc_dev_get_rtt_raw_data(doca_pcc_dev_event_t *event) { return (unsigned char *)&event->word[7]; }

/* ---- The platform's arrays and declarations ------------------------------------------------ */

#define PORTS DOCA_PCC_DEV_MAX_NUM_PORTS
#define MAX_PARAMS DOCA_PCC_DEV_MAX_NUM_PARAMS_PER_ALGO
#define MAX_COUNTERS DOCA_PCC_DEV_MAX_NUM_COUNTERS_PER_ALGO

static uint32_t params[PORTS][SLOTS][MAX_PARAMS];
static uint32_t counters[PORTS][SLOTS][MAX_COUNTERS];
static uint32_t used[PORTS][SLOTS];
static doca_pcc_dev_algo_ctxt_t contexts[SLOTS][FLOWS];
/* Declared rows per algorithm index, and their defaults (copied into every port's array). */
static uint32_t declared_params[SLOTS], declared_counters[SLOTS], total_params[SLOTS], total_counters[SLOTS];
static uint32_t defaults[SLOTS][MAX_PARAMS];
static uint32_t slot_algo[PORTS][SLOTS], slot_en[PORTS][SLOTS], slot_set[PORTS][SLOTS];
static uint32_t broken; /* a declaration broke the platform's rules */

uint32_t *doca_pcc_dev_get_algo_params(uint32_t port_num, uint32_t algo_slot) {
	return port_num < PORTS && algo_slot < SLOTS ? params[port_num][algo_slot] : 0;
}
uint32_t *doca_pcc_dev_get_counters(uint32_t port_num, uint32_t algo_slot) {
	return port_num < PORTS && algo_slot < SLOTS ? counters[port_num][algo_slot] : 0;
}
uint32_t doca_pcc_dev_get_algo_index(uint32_t port_num, uint32_t algo_slot) {
	return port_num < PORTS && algo_slot < SLOTS ? slot_algo[port_num][algo_slot] : 0;
}

static doca_pcc_dev_error_t refuse(void) {
	broken = 1;
	return DOCA_PCC_DEV_STATUS_FAIL;
}

doca_pcc_dev_error_t doca_pcc_dev_algo_init_metadata(uint32_t algo_idx,
						     const struct doca_pcc_dev_algo_meta_data *algo_def,
						     uint32_t total_param_num, uint32_t total_counter_num) {
	if (algo_idx >= SLOTS || total_param_num > MAX_PARAMS || total_counter_num > MAX_COUNTERS ||
	    algo_def->algo_desc_size == 0)
		return refuse();
	total_params[algo_idx] = total_param_num;
	total_counters[algo_idx] = total_counter_num;
	return DOCA_PCC_DEV_STATUS_OK;
}

doca_pcc_dev_error_t doca_pcc_dev_algo_init_param(uint32_t algo_idx, uint32_t param_id, uint32_t default_value,
						  uint32_t max_value, uint32_t min_value, uint32_t permissions,
						  uint32_t param_desc_size, uint64_t param_desc_addr) {
	const char *name = (const char *)(uintptr_t)param_desc_addr;
	if (HARNESS_REFUSE && algo_idx == 1 && param_id == 3) return DOCA_PCC_DEV_STATUS_FAIL;
	/* Rows in id order, inside the declared total, default within [min, max], a named row. */
	if (algo_idx >= SLOTS || param_id != declared_params[algo_idx] || param_id >= total_params[algo_idx] ||
	    min_value > default_value || default_value > max_value || permissions == 0 || param_desc_size < 2 ||
	    name[param_desc_size - 1] != 0)
		return refuse();
	defaults[algo_idx][param_id] = default_value;
	declared_params[algo_idx]++;
	puts_("param ");
	putu(algo_idx), sp(), putu(param_id), sp(), puts_(name), sp();
	putu(default_value), sp(), putu(min_value), sp(), putu(max_value);
	putc_('\n');
	return DOCA_PCC_DEV_STATUS_OK;
}

doca_pcc_dev_error_t doca_pcc_dev_algo_init_counter(uint32_t algo_idx, uint32_t counter_id, uint32_t max_value,
						    uint32_t permissions, uint32_t counter_desc_size,
						    uint64_t counter_desc_addr) {
	const char *name = (const char *)(uintptr_t)counter_desc_addr;
	if (algo_idx >= SLOTS || counter_id != declared_counters[algo_idx] ||
	    counter_id >= total_counters[algo_idx] || max_value == 0 || permissions == 0 || counter_desc_size < 2 ||
	    name[counter_desc_size - 1] != 0)
		return refuse();
	declared_counters[algo_idx]++;
	puts_("counter ");
	putu(algo_idx), sp(), putu(counter_id), sp(), puts_(name);
	putc_('\n');
	return DOCA_PCC_DEV_STATUS_OK;
}

doca_pcc_dev_error_t doca_pcc_dev_init_algo_slot(uint32_t port_num, uint32_t algo_slot, uint32_t algo_idx,
						 uint32_t algo_en) {
	if (HARNESS_REFUSE && port_num == 3 && algo_slot == 0) return DOCA_PCC_DEV_STATUS_FAIL;
	if (port_num >= PORTS || algo_slot >= SLOTS || algo_idx >= SLOTS || algo_en > 1) return refuse();
	slot_algo[port_num][algo_slot] = algo_idx;
	slot_en[port_num][algo_slot] = algo_en;
	slot_set[port_num][algo_slot] = 1;
	for (uint32_t i = 0; i < MAX_PARAMS; i++) params[port_num][algo_slot][i] = defaults[algo_idx][i];
	return DOCA_PCC_DEV_STATUS_OK;
}

/* The built-in algorithm: a fixed answer, counted. An event of slot 0 or 1 reaching it fails the
 * run: the glue must answer those itself. */
static uint32_t builtin_calls, builtin_user_slot;
void doca_pcc_dev_default_internal_algo(doca_pcc_dev_algo_ctxt_t *algo_ctxt, doca_pcc_dev_event_t *event,
					const doca_pcc_dev_attr_t *attr, doca_pcc_dev_results_t *results) {
	(void)algo_ctxt, (void)event;
	builtin_calls++;
	if (attr->algo_slot < SLOTS) builtin_user_slot++;
	results->rate = BUILTIN_RATE;
	results->rtt_req = 0;
}

/* ---- The cross-check of the glue's event against the decoder ------------------------------- */

/* The union words as the adapter reads them for the event's type (CcPccEvent in cc_ffi.h):
 * TX's QPN 24 bits and ACK/NACK/CNP's number coalesced 16 bits; nothing for other types. */
static void reading(const CcPccEvent *e, uint32_t out[3]) {
	out[0] = out[1] = out[2] = 0;
	switch (e->type_code) {
	case DOCA_PCC_DEV_EVNT_ROCE_TX:
		out[0] = e->spec[0], out[1] = e->spec[1], out[2] = e->spec[2] & 0xFFFFFFu;
		break;
	case DOCA_PCC_DEV_EVNT_ROCE_ACK:
	case DOCA_PCC_DEV_EVNT_ROCE_NACK:
	case DOCA_PCC_DEV_EVNT_ROCE_CNP:
		out[0] = e->spec[0], out[1] = e->spec[1], out[2] = e->spec[2] & 0xFFFFu;
		break;
	case DOCA_PCC_DEV_EVNT_RTT:
		out[0] = e->spec[0], out[1] = e->spec[1], out[2] = e->spec[2];
		break;
	default:
		break;
	}
}

static void mismatch(uint32_t rec, const char *field, uint32_t decoded, uint32_t glue) {
	flush_fd(1);
	puts_("layout: record "), putu(rec), puts_(": "), puts_(field), puts_(": decoder "), putx(decoded);
	puts_(", glue (getters) "), putx(glue), putc_('\n');
	flush_fd(2);
	exit_(1);
}

static void cross_check(uint32_t rec, doca_pcc_dev_event_t *event) {
	CcPccEvent d, g;
	cc_pcc_event_decode((const uint8_t(*)[CC_PCC_EVENT_BYTES])(const void *)event, &d);
	pcc_glue_event(event, &g);
	if (d.type_code != g.type_code) mismatch(rec, "type", d.type_code, g.type_code);
	if (d.subtype != g.subtype) mismatch(rec, "subtype", d.subtype, g.subtype);
	if (d.port != g.port) mismatch(rec, "port", d.port, g.port);
	if (d.flags != g.flags) mismatch(rec, "flags", d.flags, g.flags);
	if (d.flow_tag != g.flow_tag) mismatch(rec, "flow tag", d.flow_tag, g.flow_tag);
	if (d.sn != g.sn) mismatch(rec, "sn", d.sn, g.sn);
	if (d.ts_ns != g.ts_ns) mismatch(rec, "timestamp", d.ts_ns, g.ts_ns);
	uint32_t rd[3], rg[3];
	reading(&d, rd), reading(&g, rg);
	static const char *const names[3] = {"union word 28", "union word 32", "union word 36"};
	for (int i = 0; i < 3; i++)
		if (rd[i] != rg[i]) mismatch(rec, names[i], rd[i], rg[i]);
	/* The raw data the glue hands HPCC is bytes 28..40 as delivered. */
	const uint8_t *raw = doca_pcc_dev_get_rtt_raw_data(event);
	const uint8_t *bytes = (const uint8_t *)event;
	for (int i = 0; i < 12; i++)
		if (raw[i] != bytes[28 + i]) mismatch(rec, "raw data", bytes[28 + i], raw[i]);
}

/* ---- The event loop ------------------------------------------------------------------------ */

static uint32_t le32(const uint8_t *p) {
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void print_glue(void) {
	puts_("glue");
	for (uint32_t i = 0; i < PCC_GLUE_COUNTER_NUM; i++) sp(), putu(pcc_glue_counters[i]);
	putc_('\n');
}

/* HARNESS_REFUSE: what user_init left after the platform refused HPCC's parameter row 3 and the
 * slot initialisation of (port 3, slot 0). */
static int refused_declarations(uint32_t disable_mask) {
	uint32_t ok = !broken && disable_mask == 0 && pcc_glue_counters[PCC_GLUE_DECL_FAILED_TIMELY] == 0 &&
		      pcc_glue_counters[PCC_GLUE_DECL_FAILED_HPCC] == 1 &&
		      pcc_glue_counters[PCC_GLUE_SLOT_INIT_FAILED] == 1 &&
		      pcc_glue_counters[PCC_GLUE_PORT_BEYOND_TABLE] == 0;
	for (uint32_t p = 0; p < PORTS; p++) {
		/* HPCC initialised disabled everywhere; TIMELY enabled where the platform took it. */
		if (!slot_set[p][1] || slot_en[p][1] != 0) ok = 0;
		if (p != 3 && (!slot_set[p][0] || slot_en[p][0] != 1)) ok = 0;
	}
	if (slot_set[3][0]) ok = 0;
	print_glue();
	if (!ok) {
		puts_("refused declarations: the glue did not disable HPCC's slot and count both refusals\n");
		flush_fd(1);
		return 1;
	}
	puts_("refused declarations: HPCC's slot disabled on every port, TIMELY's kept, both refusals counted\n");
	flush_fd(1);
	return 0;
}
int main(void) {
	uint32_t disable_mask = 0xFFFFFFFFu;
	doca_pcc_dev_user_init(&disable_mask);
	if (HARNESS_REFUSE) return refused_declarations(disable_mask);
	for (uint32_t a = 0; a < SLOTS; a++)
		if (declared_params[a] != total_params[a] || declared_counters[a] != total_counters[a] ||
		    total_params[a] == 0 || total_counters[a] == 0)
			broken = 1;
	for (uint32_t p = 0; p < PORTS; p++)
		for (uint32_t s = 0; s < SLOTS; s++)
			if (!slot_set[p][s] || !slot_en[p][s]) broken = 1;
	for (uint32_t i = 0; i < PCC_GLUE_COUNTER_NUM; i++)
		if (pcc_glue_counters[i]) broken = 1;
	if (broken || disable_mask != 0) die(1, 0, "doca_pcc_dev_user_init broke the platform's rules");

	static uint8_t rec[RECORD_BYTES];
	uint32_t n = 0;
	for (;; n++) {
		long got = read_full(rec, RECORD_BYTES);
		if (got == 0) break;
		if (got < 0) die(2, n, "truncated (a record is 64 bytes)");
		uint32_t op = le32(rec), slot = le32(rec + 4) & 0xFF, port = le32(rec + 4) >> 8;
		uint32_t arg = le32(rec + 8), num = le32(rec + 12);
		if (op == 1) {
			if (slot >= ALL_SLOTS) die(2, n, "slot out of range (< 16)");
			if (arg >= FLOWS) die(2, n, "flow out of range (< 16)");
			if (rec[16 + 13] != port) die(2, n, "the event's port byte differs from the record's port");
			static doca_pcc_dev_event_t event;
			uint8_t *bytes = (uint8_t *)&event;
			for (uint32_t i = 0; i < CC_PCC_EVENT_BYTES; i++) bytes[i] = rec[16 + i];
			cross_check(n, &event);
			static doca_pcc_dev_algo_ctxt_t scratch;
			doca_pcc_dev_algo_ctxt_t *ctx = slot < SLOTS ? &contexts[slot][arg] : &scratch;
			doca_pcc_dev_attr_t attr = {.algo_slot = slot};
			doca_pcc_dev_results_t res = {0};
			doca_pcc_dev_user_algo(ctx, &event, &attr, &res);
			if (slot < SLOTS && port < PORTS) used[port][slot] = 1;
			puts_("ev "), putu(n), sp(), putu(slot), sp(), putu(arg), sp(), putu(res.rate), sp(), putu(res.rtt_req);
			putc_('\n');
		} else if (op == 2) {
			if (slot >= SLOTS) die(2, n, "slot out of range (0 TIMELY, 1 HPCC)");
			if (port >= PORTS) die(2, n, "port out of range");
			if (num > 12) die(2, n, "more than 12 values in one parameter change");
			uint32_t vals[12];
			for (uint32_t i = 0; i < num; i++) vals[i] = le32(rec + 16 + 4 * i);
			/* The platform hands the array from the first changed parameter on (clamped so the
			 * pointer stays inside it even for a base the algorithm will refuse). */
			uint32_t at = arg < MAX_PARAMS ? arg : MAX_PARAMS - 1;
			doca_pcc_dev_error_t e =
				doca_pcc_dev_user_set_algo_params(port, slot, arg, num, vals, &params[port][slot][at]);
			puts_("set "), putu(n), sp(), putu(slot), sp(), putu(arg), sp(), putu(num), sp(), putu((uint32_t)e);
			putc_('\n');
		} else {
			die(2, n, "unknown op (1 event, 2 parameter change)");
		}
	}
	if (n == 0) die(2, 0, "no records (an empty sequence compares nothing)");
	if (builtin_user_slot) die(1, n, "an event of slot 0 or 1 went to the platform's built-in algorithm");
	for (uint32_t s = 0; s < SLOTS; s++)
		for (uint32_t p = 0; p < PORTS; p++) {
			if (!used[p][s]) continue;
			puts_("counters "), putu(s), sp(), putu(p);
			for (uint32_t i = 0; i < CC_PCC_COUNTER_NUM; i++) sp(), putu(counters[p][s][i]);
			putc_('\n');
		}
	puts_("params");
	for (uint32_t s = 0; s < SLOTS; s++)
		for (uint32_t i = 0; i < total_params[s]; i++) sp(), putu(params[0][s][i]);
	putc_('\n');
	print_glue();
	puts_("builtin "), putu(builtin_calls), putc_('\n');
	puts_("records "), putu(n), putc_('\n');
	flush_fd(1);
	return 0;
}
