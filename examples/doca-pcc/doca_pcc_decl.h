/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* The subset of the DOCA PCC device API that doca_pcc_algo.c uses, declared by this project from
 * NVIDIA's public documentation and from how the BSD-3 samples call it (README.md cites where
 * each name comes from). Nothing here is taken from NVIDIA's SDK headers, which are under
 * NVIDIA's licence: with the SDK, build with DOCA_DIR set and these declarations are not used.
 *
 * What is ours and may differ from the SDK (doca_pcc_algo.c checks it against the SDK's getters
 * when built with PCC_CHECK_LAYOUT):
 *   - doca_pcc_dev_event_t is the 44 bytes of the BlueField-3 event as delivered, big-endian;
 *   - the RTT response's raw data (doca_pcc_dev_get_rtt_raw_data) is the 12 bytes after the
 *     request send timestamp, bytes 32..43 of the event;
 *   - doca_pcc_dev_results_t has the rate and the probe request only (no credit fields).
 * The functions are implemented by the platform's device library on the DPA and by harness.c
 * in the QEMU test build. */
#ifndef DOCA_PCC_DECL_H
#define DOCA_PCC_DECL_H

#include <stdint.h>

/* Ports the configuration tables are sized for. */
#define DOCA_PCC_DEV_MAX_NUM_PORTS 4
/* The platform's limits per algorithm. */
#define DOCA_PCC_DEV_MAX_NUM_PARAMS 38
#define DOCA_PCC_DEV_MAX_NUM_COUNTERS 63
/* Rate 1.0 = line rate, Q20. */
#define DOCA_PCC_DEV_MAX_RATE (1u << 20)

/* Event types (the attribute word's first byte). */
enum {
	DOCA_PCC_DEV_EVNT_ROCE_CNP = 2,
	DOCA_PCC_DEV_EVNT_ROCE_TX = 3,
	DOCA_PCC_DEV_EVNT_ROCE_ACK = 4,
	DOCA_PCC_DEV_EVNT_ROCE_NACK = 5,
	DOCA_PCC_DEV_EVNT_RTT = 6,
};

typedef enum {
	DOCA_PCC_DEV_STATUS_OK = 0,
	DOCA_PCC_DEV_STATUS_FAIL = 1,
} doca_pcc_dev_error_t;

/* The per-flow context: 48 bytes, zeroed for a new flow, restored for every event of the flow. */
typedef struct {
	uint32_t data[12];
} doca_pcc_dev_algo_ctxt_t;

/* One event, the 44 bytes as delivered (big-endian fields; layout in docs/pcc.md). */
typedef struct {
	uint8_t bytes[44];
} doca_pcc_dev_event_t;

/* The attribute word, decoded. */
typedef struct {
	uint8_t ev_type;
	uint8_t ev_subtype;
	uint8_t port_num;
	uint8_t flags;
} doca_pcc_dev_event_general_attr_t;

/* Per-call attributes: which algorithm slot the flow uses. */
typedef struct {
	uint32_t algo_slot;
} doca_pcc_dev_attr_t;

/* What the algorithm returns for the event. */
typedef struct {
	uint32_t rate;    /* Q20 fraction of line rate, 1 ..= 1 << 20 */
	uint32_t rtt_req; /* 1: send an RTT probe */
} doca_pcc_dev_results_t;

/* An algorithm's description (doca_pcc_dev_algo_init_metadata). */
struct doca_pcc_dev_algo_meta_data {
	uint32_t algo_id;
	uint32_t algo_major_version;
	uint32_t algo_minor_version;
	uint32_t algo_desc_size;
	uint64_t algo_desc_addr;
};

/* Event accessors. */
doca_pcc_dev_event_general_attr_t doca_pcc_dev_get_ev_attr(doca_pcc_dev_event_t *event);
uint32_t doca_pcc_dev_get_timestamp(doca_pcc_dev_event_t *event);
uint32_t doca_pcc_dev_get_rtt_req_send_timestamp(doca_pcc_dev_event_t *event);
uint32_t doca_pcc_dev_get_rtt_req_recv_timestamp(doca_pcc_dev_event_t *event);
unsigned char *doca_pcc_dev_get_rtt_raw_data(doca_pcc_dev_event_t *event);

/* Parameter and counter arrays of (port, algorithm slot), as the platform holds them. */
uint32_t *doca_pcc_dev_get_algo_params(uint32_t port_num, uint32_t algo_slot);
uint32_t *doca_pcc_dev_get_counters(uint32_t port_num, uint32_t algo_slot);
uint32_t doca_pcc_dev_get_algo_index(uint32_t port_num, uint32_t algo_slot);

/* Declarations at initialisation (doca_pcc_dev_user_init). */
void doca_pcc_dev_algo_init_metadata(uint32_t algo_idx, const struct doca_pcc_dev_algo_meta_data *algo_def,
				     uint32_t total_param_num, uint32_t total_counter_num);
void doca_pcc_dev_algo_init_param(uint32_t algo_idx, uint32_t param_id, uint32_t default_value, uint32_t max_value,
				  uint32_t min_value, uint32_t permissions, uint32_t param_desc_size,
				  uint64_t param_desc_addr);
void doca_pcc_dev_algo_init_counter(uint32_t algo_idx, uint32_t counter_id, uint32_t max_value, uint32_t permissions,
				    uint32_t counter_desc_size, uint64_t counter_desc_addr);
void doca_pcc_dev_init_algo_slot(uint32_t port_num, uint32_t algo_slot, uint32_t algo_idx, uint32_t algo_en);

/* The platform's built-in algorithm, for slots this program does not implement. */
void doca_pcc_dev_default_internal_algo(doca_pcc_dev_algo_ctxt_t *algo_ctxt, doca_pcc_dev_event_t *event,
					const doca_pcc_dev_attr_t *attr, doca_pcc_dev_results_t *results);

/* The callbacks a user algorithm implements (doca_pcc_algo.c). */
void doca_pcc_dev_user_init(uint32_t *disable_event_bitmask);
void doca_pcc_dev_user_algo(doca_pcc_dev_algo_ctxt_t *algo_ctxt, doca_pcc_dev_event_t *event,
			    const doca_pcc_dev_attr_t *attr, doca_pcc_dev_results_t *results);
doca_pcc_dev_error_t doca_pcc_dev_user_set_algo_params(uint32_t port_num, uint32_t algo_slot, uint32_t param_id_base,
						       uint32_t param_num, const uint32_t *new_param_values,
						       uint32_t *params);

#endif /* DOCA_PCC_DECL_H */
