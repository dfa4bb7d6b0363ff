/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* The subset of the DOCA PCC device API that doca_pcc_algo.c uses, declared by this project for
 * the QEMU test build (harness.c implements every function here). Written by us from the facts
 * README.md lists with their sources: names, types, values and the event layout. Nothing here is
 * NVIDIA's text; a DPA build uses the SDK's own headers instead (PCC_WITH_DOCA_SDK), and
 * `make sdk-check` compares the two readings of the event on random bytes.
 *
 * The event is the 44 bytes as delivered; every SDK getter loads one 32-bit word, byte-swaps it
 * (the words are big-endian) and reads a little-endian bit field of the result:
 *
 *   bytes  0..12  reserved
 *         12..16  attribute word: type bits 0-7 (byte 15), subtype 8-15 (byte 14),
 *                 port 16-23 (byte 13), flags 24-31 (byte 12)
 *         16..20  flow tag          20..24  sequence number        24..28  timestamp, ns
 *         28..44  by type: TX            first timestamp | packets (bits 16-31), sent 32-byte
 *                                        units (0-15) | QPN (bits 0-23) | reserved
 *                          ACK/NACK/CNP  first timestamp | first sequence number | number
 *                                        coalesced (bits 0-15) | reserved
 *                          RTT           request send | request receive | response send
 *                                        timestamps | reserved
 *                 the RTT raw data (doca_pcc_dev_get_rtt_raw_data) is bytes 28..40, not
 *                 swapped: the same bytes as the three RTT timestamps.
 *
 * This is the BlueField-3 layout (DOCA_PCC_DEV_MAX_NUM_PORTS 4). */
#ifndef DOCA_PCC_DECL_H
#define DOCA_PCC_DECL_H

#include <stdint.h>

/* Ports the configuration tables are sized for (BlueField-3). */
#define DOCA_PCC_DEV_MAX_NUM_PORTS 4
/* The platform's limits per algorithm. */
#define DOCA_PCC_DEV_MAX_NUM_PARAMS_PER_ALGO 38
#define DOCA_PCC_DEV_MAX_NUM_COUNTERS_PER_ALGO 63
/* Rate 1.0 = line rate, Q20. */
#define DOCA_PCC_DEV_MAX_RATE (1u << 20)
/* The slot the platform's built-in algorithm is meant for. */
#define DOCA_PCC_DEV_ALGO_SLOT_INTERNAL 0xF

/* Event types (the attribute word's type field). */
enum {
	DOCA_PCC_DEV_EVNT_NULL = 0,
	DOCA_PCC_DEV_EVNT_FW = 1,
	DOCA_PCC_DEV_EVNT_ROCE_CNP = 2,
	DOCA_PCC_DEV_EVNT_ROCE_TX = 3,
	DOCA_PCC_DEV_EVNT_ROCE_ACK = 4,
	DOCA_PCC_DEV_EVNT_ROCE_NACK = 5,
	DOCA_PCC_DEV_EVNT_RTT = 6,
	DOCA_PCC_DEV_EVNT_ROCE_TX_FOR_ACK_NACK = 31,
};

/* NACK subtypes. */
enum {
	DOCA_PCC_DEV_NACK_EVNT_RNR = 1,
	DOCA_PCC_DEV_NACK_EVNT_OOS = 2,
	DOCA_PCC_DEV_NACK_EVNT_DUP_READ = 3,
};

/* TX event flags. */
#define DOCA_PCC_DEV_TX_FLAG_ACK_EXPECTED (1u << 0)
#define DOCA_PCC_DEV_TX_FLAG_OVERLOADED (1u << 1)
#define DOCA_PCC_DEV_TX_FLAG_RTT_REQ_SENT (1u << 2)

typedef enum {
	DOCA_PCC_DEV_STATUS_OK = 0,
	DOCA_PCC_DEV_STATUS_FAIL = 1,
} doca_pcc_dev_error_t;

/* The per-flow context: 48 bytes, zeroed for a new flow, restored for every event of the flow. */
typedef struct {
	uint32_t data[12];
} doca_pcc_dev_algo_ctxt_t;

/* One event: word i is bytes 4i..4i+3 as delivered (big-endian; read it through the getters). */
typedef struct {
	uint32_t word[11];
} doca_pcc_dev_event_t;

/* The attribute word after the byte swap, as bit fields (least significant first). */
typedef struct {
	uint32_t ev_type : 8;
	uint32_t ev_subtype : 8;
	uint32_t port_num : 8;
	uint32_t flags : 8;
} doca_pcc_dev_event_general_attr_t;

/* TX: the counters word after the byte swap. */
typedef struct {
	uint32_t sent_32bytes : 16;
	uint32_t sent_pkts : 16;
} doca_pcc_dev_roce_tx_cntrs_t;

/* ACK, NACK, CNP: the third union word after the byte swap. */
typedef struct {
	uint32_t num_coalesced : 16;
	uint32_t reserved : 16;
} doca_pcc_dev_ack_nack_cnp_extra_t;

/* Per-call attributes: the flow's algorithm slot (0-15). */
typedef struct {
	uint32_t algo_slot : 4;
	uint32_t overload : 1;
	uint32_t reserved : 27;
} doca_pcc_dev_attr_t;

/* What the algorithm returns for the event. */
typedef struct {
	uint32_t rate; /* Q20 fraction of line rate, 1 ..= 1 << 20 */
	union {
		uint32_t rtt_req; /* 1: send an RTT probe */
		uint32_t probe_req;
	};
	uint32_t probe_type_slot;
	uint32_t credits;
	uint32_t reload_credits;
} doca_pcc_dev_results_t;

/* An algorithm's description (doca_pcc_dev_algo_init_metadata). */
struct doca_pcc_dev_algo_meta_data {
	uint32_t algo_id;
	uint32_t algo_major_version;
	uint32_t algo_minor_version;
	uint32_t algo_desc_size;
	uint64_t algo_desc_addr;
};

/* Event getters (the SDK defines them inline; harness.c implements them). */
doca_pcc_dev_event_general_attr_t doca_pcc_dev_get_ev_attr(doca_pcc_dev_event_t *event);
uint32_t doca_pcc_dev_get_flowtag(doca_pcc_dev_event_t *event);
uint32_t doca_pcc_dev_get_sn(doca_pcc_dev_event_t *event);
uint32_t doca_pcc_dev_get_timestamp(doca_pcc_dev_event_t *event);
uint32_t doca_pcc_dev_get_roce_first_timestamp(doca_pcc_dev_event_t *event);
doca_pcc_dev_roce_tx_cntrs_t doca_pcc_dev_get_roce_tx_cntrs(doca_pcc_dev_event_t *event);
uint32_t doca_pcc_dev_get_flow_qpn(doca_pcc_dev_event_t *event);
uint32_t doca_pcc_dev_get_roce_ack_first_sn(doca_pcc_dev_event_t *event);
doca_pcc_dev_ack_nack_cnp_extra_t doca_pcc_dev_get_ack_nack_cnp_extra(doca_pcc_dev_event_t *event);
uint32_t doca_pcc_dev_get_rtt_req_send_timestamp(doca_pcc_dev_event_t *event);
uint32_t doca_pcc_dev_get_rtt_req_recv_timestamp(doca_pcc_dev_event_t *event);
uint32_t doca_pcc_dev_get_rtt_resp_send_timestamp(doca_pcc_dev_event_t *event);
unsigned char *doca_pcc_dev_get_rtt_raw_data(doca_pcc_dev_event_t *event);

/* Parameter and counter arrays of (port, algorithm slot), as the platform holds them. */
uint32_t *doca_pcc_dev_get_algo_params(uint32_t port_num, uint32_t algo_slot);
uint32_t *doca_pcc_dev_get_counters(uint32_t port_num, uint32_t algo_slot);
uint32_t doca_pcc_dev_get_algo_index(uint32_t port_num, uint32_t algo_slot);

/* Declarations at initialisation (doca_pcc_dev_user_init); each returns OK or FAIL. */
doca_pcc_dev_error_t doca_pcc_dev_algo_init_metadata(uint32_t algo_idx,
						     const struct doca_pcc_dev_algo_meta_data *algo_def,
						     uint32_t total_param_num, uint32_t total_counter_num);
doca_pcc_dev_error_t doca_pcc_dev_algo_init_param(uint32_t algo_idx, uint32_t param_id, uint32_t default_value,
						  uint32_t max_value, uint32_t min_value, uint32_t permissions,
						  uint32_t param_desc_size, uint64_t param_desc_addr);
doca_pcc_dev_error_t doca_pcc_dev_algo_init_counter(uint32_t algo_idx, uint32_t counter_id, uint32_t max_value,
						    uint32_t permissions, uint32_t counter_desc_size,
						    uint64_t counter_desc_addr);
doca_pcc_dev_error_t doca_pcc_dev_init_algo_slot(uint32_t port_num, uint32_t algo_slot, uint32_t algo_idx,
						 uint32_t algo_en);

/* The platform's built-in algorithm. */
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
