/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* What doca_pcc_algo.c exports besides the DOCA PCC callbacks: its own counters (events and
 * failures that have no per-port counter array to go to) and the event reading the callbacks
 * use, for the test programs (harness.c, sdk_getters_check.c) to check. Include it after the
 * DOCA PCC declarations (the SDK's headers or doca_pcc_decl.h) and cc_ffi.h. */
#ifndef DOCA_PCC_GLUE_H
#define DOCA_PCC_GLUE_H

#include <stdint.h>

/* Indices of pcc_glue_counters. */
enum {
	/* TIMELY's declaration was refused (an init call returned FAIL, or the library's tables
	 * could not be read): algorithm slot 0 is initialised disabled on every port. */
	PCC_GLUE_DECL_FAILED_TIMELY = 0,
	/* The same for HPCC (slot 1). */
	PCC_GLUE_DECL_FAILED_HPCC = 1,
	/* doca_pcc_dev_init_algo_slot returned FAIL (one per port and slot). */
	PCC_GLUE_SLOT_INIT_FAILED = 2,
	/* Events in slot 0 or 1 on a port at or beyond DOCA_PCC_DEV_MAX_NUM_PORTS (outside the
	 * configuration tables): answered with the flow's stored rate and no probe, nothing
	 * changed. */
	PCC_GLUE_PORT_BEYOND_TABLE = 3,
	PCC_GLUE_COUNTER_NUM = 4
};

/* The glue's counters, in the DPA program's memory (each wraps modulo 2^32; events are added
 * atomically, DPA threads run the callbacks concurrently). */
extern volatile uint32_t pcc_glue_counters[PCC_GLUE_COUNTER_NUM];

/* The event as doca_pcc_dev_user_algo hands it to the adapter: every field from the platform's
 * getters (the union by type: TX first timestamp, `sent_pkts << 16 | sent_32bytes`, QPN;
 * ACK/NACK/CNP first timestamp, first sequence number, number coalesced; RTT the three
 * timestamps; other types none, 0). */
void pcc_glue_event(doca_pcc_dev_event_t *event, CcPccEvent *ev);

#endif /* DOCA_PCC_GLUE_H */
