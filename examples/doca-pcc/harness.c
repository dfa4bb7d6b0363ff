/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Test harness for doca_pcc_algo.c under QEMU user mode (never part of the DPA build): plays the
 * platform's part — the parameter and counter arrays, the per-flow contexts, the declarations —
 * and feeds an event sequence read from standard input, printing one line per record. The host
 * program (cargo example doca_pcc_events in crates/cc-ffi) writes the same sequence and the lines
 * the adapter gives on the host; `make check` compares the two.
 *
 * Input: records of 64 bytes. Words 0..3 (little-endian): op, slot | port << 8, flow or base,
 * num; then 48 payload bytes.
 *   op 1: one event of flow `flow` (< 16) in slot `slot`: payload bytes 0..43 are the event as
 *         delivered (big-endian fields; an RTT response's 12 raw bytes are bytes 32..43).
 *   op 2: doca_pcc_dev_user_set_algo_params(port, slot, base, num, payload words 0..num-1).
 * Output lines:
 *   param ALGO ID NAME DEFAULT MIN MAX     one per declared parameter (at init)
 *   counter ALGO ID NAME                  one per declared counter
 *   ev N SLOT FLOW RATE_Q20 RTT_REQ       record N, an event
 *   set N SLOT BASE NUM STATUS            record N, a parameter change (0 ok, 1 refused)
 *   counters SLOT PORT C0 .. C19          at the end, for every (slot, port) that had an event
 *   records N
 * Exit codes: 0 done; 2 bad input (no records, a truncated record, an unknown op, a flow, slot or
 * port out of range, an event whose port byte differs from the record's, a parameter change of
 * more than 12 values), after a line `error: standard input: record N: ...` on standard error;
 * 1 the declarations broke the platform's rules, or an event reached the platform's built-in
 * algorithm. */
#include <stdint.h>

#include "doca_pcc_decl.h"
#include "cc_ffi.h"

#define SLOTS 2
#define FLOWS 16
#define RECORD_BYTES 64

/* ---- I/O through Linux system calls (QEMU user mode) ------------------------------------ */

static long sys3(long n, long a, long b, long c) {
	register long a0 __asm__("a0") = a;
	register long a1 __asm__("a1") = b;
	register long a2 __asm__("a2") = c;
	register long a7 __asm__("a7") = n;
	__asm__ volatile("ecall" : "+r"(a0) : "r"(a1), "r"(a2), "r"(a7) : "memory");
	return a0;
}

static char obuf[4096];
static uint32_t olen;

static void flush_fd(long fd) {
	uint32_t off = 0;
	while (off < olen) {
		long n = sys3(64, fd, (long)(uintptr_t)(obuf + off), (long)(olen - off));
		if (n <= 0) break;
		off += (uint32_t)n;
	}
	olen = 0;
}
static void putc_(char c) {
	if (olen == sizeof obuf) flush_fd(1);
	obuf[olen++] = c;
}
static void puts_(const char *s) {
	while (*s) putc_(*s++);
}
static void putu(uint32_t v) {
	char d[10];
	int n = 0;
	do {
		d[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n) putc_(d[--n]);
}
static void sp(void) { putc_(' '); }

/* Reads exactly n bytes; returns n, 0 at a clean end of input, or -1 in the middle of a record. */
static long read_full(uint8_t *p, long n) {
	long got = 0;
	while (got < n) {
		long r = sys3(63, 0, (long)(uintptr_t)(p + got), n - got);
		if (r <= 0) return got == 0 ? 0 : -1;
		got += r;
	}
	return got;
}

static _Noreturn void die(uint32_t code, uint32_t rec, const char *what) {
	flush_fd(1);
	puts_("error: standard input: record ");
	putu(rec);
	puts_(": ");
	puts_(what);
	putc_('\n');
	flush_fd(2);
	sys3(93, code, 0, 0);
	for (;;) {
	}
}

/* ---- The platform's side ------------------------------------------------------------------ */

static uint32_t params[DOCA_PCC_DEV_MAX_NUM_PORTS][SLOTS][DOCA_PCC_DEV_MAX_NUM_PARAMS];
static uint32_t counters[DOCA_PCC_DEV_MAX_NUM_PORTS][SLOTS][DOCA_PCC_DEV_MAX_NUM_COUNTERS];
static uint32_t used[DOCA_PCC_DEV_MAX_NUM_PORTS][SLOTS];
static doca_pcc_dev_algo_ctxt_t contexts[DOCA_PCC_DEV_MAX_NUM_PORTS][SLOTS][FLOWS];
/* Declared rows per algorithm index, and their defaults (copied into every port's array). */
static uint32_t declared_params[SLOTS], declared_counters[SLOTS], total_params[SLOTS], total_counters[SLOTS];
static uint32_t defaults[SLOTS][DOCA_PCC_DEV_MAX_NUM_PARAMS];
static uint32_t slot_algo[DOCA_PCC_DEV_MAX_NUM_PORTS][SLOTS], slot_en[DOCA_PCC_DEV_MAX_NUM_PORTS][SLOTS];
static uint32_t broken; /* a declaration broke the platform's rules */

static uint32_t be32(const uint8_t *p) {
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

doca_pcc_dev_event_general_attr_t doca_pcc_dev_get_ev_attr(doca_pcc_dev_event_t *event) {
	doca_pcc_dev_event_general_attr_t a = {event->bytes[12], event->bytes[13], event->bytes[14], event->bytes[15]};
	return a;
}
uint32_t doca_pcc_dev_get_timestamp(doca_pcc_dev_event_t *event) { return be32(event->bytes + 24); }
uint32_t doca_pcc_dev_get_rtt_req_send_timestamp(doca_pcc_dev_event_t *event) { return be32(event->bytes + 28); }
uint32_t doca_pcc_dev_get_rtt_req_recv_timestamp(doca_pcc_dev_event_t *event) { return be32(event->bytes + 32); }
unsigned char *doca_pcc_dev_get_rtt_raw_data(doca_pcc_dev_event_t *event) { return event->bytes + 32; }

uint32_t *doca_pcc_dev_get_algo_params(uint32_t port_num, uint32_t algo_slot) {
	return port_num < DOCA_PCC_DEV_MAX_NUM_PORTS && algo_slot < SLOTS ? params[port_num][algo_slot] : 0;
}
uint32_t *doca_pcc_dev_get_counters(uint32_t port_num, uint32_t algo_slot) {
	return port_num < DOCA_PCC_DEV_MAX_NUM_PORTS && algo_slot < SLOTS ? counters[port_num][algo_slot] : 0;
}
uint32_t doca_pcc_dev_get_algo_index(uint32_t port_num, uint32_t algo_slot) {
	return port_num < DOCA_PCC_DEV_MAX_NUM_PORTS && algo_slot < SLOTS ? slot_algo[port_num][algo_slot] : 0;
}

void doca_pcc_dev_algo_init_metadata(uint32_t algo_idx, const struct doca_pcc_dev_algo_meta_data *algo_def,
				     uint32_t total_param_num, uint32_t total_counter_num) {
	if (algo_idx >= SLOTS || total_param_num > DOCA_PCC_DEV_MAX_NUM_PARAMS ||
	    total_counter_num > DOCA_PCC_DEV_MAX_NUM_COUNTERS || algo_def->algo_desc_size == 0) {
		broken = 1;
		return;
	}
	total_params[algo_idx] = total_param_num;
	total_counters[algo_idx] = total_counter_num;
}

void doca_pcc_dev_algo_init_param(uint32_t algo_idx, uint32_t param_id, uint32_t default_value, uint32_t max_value,
				  uint32_t min_value, uint32_t permissions, uint32_t param_desc_size,
				  uint64_t param_desc_addr) {
	const char *name = (const char *)(uintptr_t)param_desc_addr;
	/* Rows in id order, inside the declared total, default within [min, max], a named row. */
	if (algo_idx >= SLOTS || param_id != declared_params[algo_idx] || param_id >= total_params[algo_idx] ||
	    min_value > default_value || default_value > max_value || permissions == 0 || param_desc_size < 2 ||
	    name[param_desc_size - 1] != 0) {
		broken = 1;
		return;
	}
	defaults[algo_idx][param_id] = default_value;
	declared_params[algo_idx]++;
	puts_("param ");
	putu(algo_idx), sp(), putu(param_id), sp(), puts_(name), sp();
	putu(default_value), sp(), putu(min_value), sp(), putu(max_value);
	putc_('\n');
}

void doca_pcc_dev_algo_init_counter(uint32_t algo_idx, uint32_t counter_id, uint32_t max_value, uint32_t permissions,
				    uint32_t counter_desc_size, uint64_t counter_desc_addr) {
	const char *name = (const char *)(uintptr_t)counter_desc_addr;
	if (algo_idx >= SLOTS || counter_id != declared_counters[algo_idx] ||
	    counter_id >= total_counters[algo_idx] || max_value == 0 || permissions == 0 || counter_desc_size < 2 ||
	    name[counter_desc_size - 1] != 0) {
		broken = 1;
		return;
	}
	declared_counters[algo_idx]++;
	puts_("counter ");
	putu(algo_idx), sp(), putu(counter_id), sp(), puts_(name);
	putc_('\n');
}

void doca_pcc_dev_init_algo_slot(uint32_t port_num, uint32_t algo_slot, uint32_t algo_idx, uint32_t algo_en) {
	if (port_num >= DOCA_PCC_DEV_MAX_NUM_PORTS || algo_slot >= SLOTS || algo_idx >= SLOTS) {
		broken = 1;
		return;
	}
	slot_algo[port_num][algo_slot] = algo_idx;
	slot_en[port_num][algo_slot] = algo_en;
	for (uint32_t i = 0; i < DOCA_PCC_DEV_MAX_NUM_PARAMS; i++) params[port_num][algo_slot][i] = defaults[algo_idx][i];
}

/* The harness has no built-in algorithm: reaching it means the glue refused an event it should
 * have handled. */
static uint32_t default_algo_calls;
void doca_pcc_dev_default_internal_algo(doca_pcc_dev_algo_ctxt_t *algo_ctxt, doca_pcc_dev_event_t *event,
					const doca_pcc_dev_attr_t *attr, doca_pcc_dev_results_t *results) {
	(void)algo_ctxt, (void)event, (void)attr;
	default_algo_calls++;
	results->rate = 0;
	results->rtt_req = 0;
}

/* ---- The event loop ------------------------------------------------------------------------ */

static uint32_t le32(const uint8_t *p) {
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int main(void) {
	uint32_t disable_mask = 0xFFFFFFFFu;
	doca_pcc_dev_user_init(&disable_mask);
	for (uint32_t a = 0; a < SLOTS; a++)
		if (declared_params[a] != total_params[a] || declared_counters[a] != total_counters[a] ||
		    total_params[a] == 0 || total_counters[a] == 0)
			broken = 1;
	for (uint32_t p = 0; p < DOCA_PCC_DEV_MAX_NUM_PORTS; p++)
		for (uint32_t s = 0; s < SLOTS; s++)
			if (!slot_en[p][s]) broken = 1;
	if (broken || disable_mask != 0) die(1, 0, "doca_pcc_dev_user_init broke the platform's rules");

	static uint8_t rec[RECORD_BYTES];
	uint32_t n = 0;
	for (;; n++) {
		long got = read_full(rec, RECORD_BYTES);
		if (got == 0) break;
		if (got < 0) die(2, n, "truncated (a record is 64 bytes)");
		uint32_t op = le32(rec), slot = le32(rec + 4) & 0xFF, port = le32(rec + 4) >> 8;
		uint32_t arg = le32(rec + 8), num = le32(rec + 12);
		if (slot >= SLOTS) die(2, n, "slot out of range (0 TIMELY, 1 HPCC)");
		if (port >= DOCA_PCC_DEV_MAX_NUM_PORTS) die(2, n, "port out of range");
		if (op == 1) {
			if (arg >= FLOWS) die(2, n, "flow out of range (< 16)");
			if (rec[16 + 14] != port) die(2, n, "the event's port differs from the record's");
			static doca_pcc_dev_event_t event;
			for (uint32_t i = 0; i < sizeof event.bytes; i++) event.bytes[i] = rec[16 + i];
			doca_pcc_dev_attr_t attr = {slot};
			doca_pcc_dev_results_t res = {0, 0};
			doca_pcc_dev_user_algo(&contexts[port][slot][arg], &event, &attr, &res);
			used[port][slot] = 1;
			puts_("ev "), putu(n), sp(), putu(slot), sp(), putu(arg), sp(), putu(res.rate), sp(), putu(res.rtt_req);
			putc_('\n');
		} else if (op == 2) {
			if (num > 12) die(2, n, "more than 12 values in one parameter change");
			uint32_t vals[12];
			for (uint32_t i = 0; i < num; i++) vals[i] = le32(rec + 16 + 4 * i);
			/* The platform hands the array from the first changed parameter on (clamped so the
			 * pointer stays inside it even for a base the algorithm will refuse). */
			uint32_t at = arg < DOCA_PCC_DEV_MAX_NUM_PARAMS ? arg : DOCA_PCC_DEV_MAX_NUM_PARAMS - 1;
			doca_pcc_dev_error_t e =
				doca_pcc_dev_user_set_algo_params(port, slot, arg, num, vals, &params[port][slot][at]);
			puts_("set "), putu(n), sp(), putu(slot), sp(), putu(arg), sp(), putu(num), sp(), putu((uint32_t)e);
			putc_('\n');
		} else {
			die(2, n, "unknown op (1 event, 2 parameter change)");
		}
	}
	if (n == 0) die(2, 0, "no records (an empty sequence compares nothing)");
	if (default_algo_calls) die(1, n, "an event went to the platform's built-in algorithm");
	for (uint32_t s = 0; s < SLOTS; s++)
		for (uint32_t p = 0; p < DOCA_PCC_DEV_MAX_NUM_PORTS; p++) {
			if (!used[p][s]) continue;
			puts_("counters "), putu(s), sp(), putu(p);
			for (uint32_t i = 0; i < CC_PCC_COUNTER_NUM; i++) sp(), putu(counters[p][s][i]);
			putc_('\n');
		}
	puts_("params");
	for (uint32_t s = 0; s < SLOTS; s++)
		for (uint32_t i = 0; i < total_params[s]; i++) sp(), putu(params[0][s][i]);
	putc_('\n');
	puts_("records "), putu(n), putc_('\n');
	flush_fd(1);
	return 0;
}
