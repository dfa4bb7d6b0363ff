/* Example firmware: calls the cc-ffi C ABI the way NIC firmware would.
 *
 * - state is allocated statically (no heap);
 * - every call's result is checked against plain C arithmetic (division is fine here: this is
 *   a self-test, not the per-event path);
 * - the exit code is 0 on success, else the number of the first failed check.
 *
 * Exit codes: 1-9 ABI/reciprocal, 10-39 CATS, 40-59 TIMELY, 60-79 HPCC, 80-99 pacer.
 */
#include <stdint.h>
#include "cc_ffi.h"

static void put(const char *s) {
    uint32_t n = 0;
    while (s[n]) n++;
    register uintptr_t a0 __asm__("a0") = 1;            /* fd: stdout */
    register uintptr_t a1 __asm__("a1") = (uintptr_t)s;
    register uintptr_t a2 __asm__("a2") = n;
    register uintptr_t a7 __asm__("a7") = 64;           /* write */
    __asm__ volatile("ecall" : "+r"(a0) : "r"(a1), "r"(a2), "r"(a7) : "memory");
}

/* Statically allocated results: one reciprocal per divisor, reused for many dividends. */
static const uint32_t divisors[] = {1, 3, 600, 12345, 1000000, 0x80000001u, 0xffffffffu};
#define N_DIV (sizeof divisors / sizeof divisors[0])
static CcRecip recips[N_DIV];

/* |got - want| <= want * 2^-14 + 1 : the documented accuracy of the reciprocal table. */
static int close_enough(uint64_t got, uint64_t want) {
    uint64_t d = got > want ? got - want : want - got;
    return d <= (want >> 14) + 1;
}

/* ---- CATS conductor ----------------------------------------------------------------------- */

/* One shared configuration, a small table of connections: all static. */
static CcCatsConfig cats_cfg;
static CcCatsConn   cats_conns[2];

/* The paper's worst-case web page (docs/cats.md): P4..P0 queued in reverse priority order with
 * MSS 1000; fed with 4000 bytes of space per round. P0 must finish first, then P1; every byte
 * comes out exactly once, in order within each message. Returns 0 or a failed check's number. */
static int cats_web_page(void) {
    CcCatsParams p;
    cc_cats_params_default(&p);
    if (p.mss_bytes != 1460 || p.mult_q16[0] != 16384 || p.low_bytes[3] != 3000) return 10;
    p.mss_bytes = 1000;
    if (cc_cats_config_init(&cats_cfg, &p) != CC_STATUS_OK) return 11;
    if (cc_cats_config_eq1_violations(&cats_cfg) != 0) return 12;

    CcCatsConn *c = &cats_conns[0];
    cc_cats_conn_init(c);
    static const uint32_t len[5] = {8000, 25000, 40000, 60000, 150000};
    uint32_t sent[5] = {0}, last_chunk[5] = {0}, chunks = 0;
    for (int q = 4; q >= 0; q--)
        if (cc_cats_enqueue(c, (uint32_t)q, 100u + (uint32_t)q, len[q]) != CC_CATS_ENQUEUE_OK) return 13;
    for (;;) {
        uint32_t space = 4000;
        CcCatsChunk ch;
        CcCatsDecision d;
        while ((d = cc_cats_next_chunk(c, &cats_cfg, space, &ch)) == CC_CATS_DECISION_SEND) {
            if (ch.prio > 4 || ch.handle != 100u + ch.prio) return 14;
            if (ch.offset_bytes != sent[ch.prio]) return 15;          /* contiguous, no gaps */
            if (ch.len_bytes == 0 || ch.len_bytes > 1000) return 16;  /* ≤ MSS */
            sent[ch.prio] += ch.len_bytes;
            if (ch.last != (sent[ch.prio] == len[ch.prio])) return 17;
            if (ch.last) last_chunk[ch.prio] = chunks;
            space -= ch.len_bytes;
            chunks++;
        }
        if (d == CC_CATS_DECISION_EMPTY) break;
        if (d != CC_CATS_DECISION_NO_SPACE || ch.len_bytes <= space) return 18;
    }
    for (int q = 0; q < 5; q++) {
        if (sent[q] != len[q]) return 19;
        if (cc_cats_queued(c, (uint32_t)q) != 0) return 20;
    }
    /* The paper's result: HTML/CSS (P0) then CSS (P1) complete before everything else. */
    if (!(last_chunk[0] < last_chunk[1] && last_chunk[1] < last_chunk[2] &&
          last_chunk[1] < last_chunk[3] && last_chunk[1] < last_chunk[4])) return 21;
    if (chunks != 283) return 22;
    return 0;
}

/* Refusals, the deadlock rule, and state save/restore, on a second connection. */
static int cats_edges(void) {
    CcCatsParams p;
    cc_cats_params_default(&p);
    CcCatsConfig bad;
    p.low_bytes[2] = p.high_bytes[2];                   /* L2 = H2: invalid */
    if (cc_cats_config_init(&bad, &p) != CC_STATUS_INVALID_CONFIG) return 23;
    cc_cats_params_default(&p);
    if (cc_cats_config_init(&cats_cfg, &p) != CC_STATUS_OK) return 24;

    CcCatsConn *c = &cats_conns[1];
    cc_cats_conn_init(c);
    if (cc_cats_enqueue(c, 5, 1, 100) != CC_CATS_ENQUEUE_INVALID_PRIO) return 25;
    if (cc_cats_enqueue(c, 0, 1, 0) != CC_CATS_ENQUEUE_ZERO_LENGTH) return 26;
    for (uint32_t i = 0; i < CC_CATS_QUEUE_CAPACITY; i++)
        if (cc_cats_enqueue(c, 0, i, 10000) != CC_CATS_ENQUEUE_OK) return 27;
    if (cc_cats_enqueue(c, 0, 99, 10000) != CC_CATS_ENQUEUE_QUEUE_FULL) return 28;

    /* Only P0 has data: it sends until D0 >= H0 = 60 000 (In-Debt); with P4 empty the next
     * decision is a deadlock, resolved by Eq. 2: D0 = min(trunc(D0 * 0.25 / 5.25), L0 - 1). */
    CcCatsChunk ch;
    uint32_t n = 0, resolved = 0;
    CcCatsState st;
    while (cc_cats_next_chunk(c, &cats_cfg, 1u << 20, &ch) == CC_CATS_DECISION_SEND) {
        n++;
        if (ch.deadlock_resolved) {
            resolved++;
            cc_cats_conn_get_state(c, &st);
            /* Six 10 000-byte messages (42 chunks: 6 x 1460 + 1240 each) make D0 = 60 000 = H0;
             * Eq. 2: trunc(60 000 * 0.25 / 5.25) = trunc(2 857.1) = 2 857, then + the 1 460 sent. */
            if (st.debt_bytes[0] != 2857u + 1460u || (st.in_debt_mask & 1u)) return 29;
            break;
        }
        if (n > 200) return 30;
    }
    if (resolved != 1 || n != 43) return 31;

    /* Save, disturb, restore. */
    CcCatsState saved = st, forced = {{59999u, 0, 0, 0}, 1u};
    cc_cats_conn_set_state(c, &forced);
    cc_cats_conn_get_state(c, &st);
    if (st.debt_bytes[0] != 59999u || st.in_debt_mask != 1u) return 32;
    cc_cats_conn_set_state(c, &saved);
    cc_cats_conn_get_state(c, &st);
    if (st.debt_bytes[0] != saved.debt_bytes[0] || st.in_debt_mask != saved.in_debt_mask) return 33;
    return 0;
}

/* ---- TIMELY ----------------------------------------------------------------------------------- */

#define TIMELY_BRANCH(r) ((CcTimelyBranch)((r) & CC_TIMELY_RESULT_BRANCH_MASK))
#define TIMELY_RATE_U(r) ((uint32_t)((r) >> CC_TIMELY_RESULT_RATE_SHIFT))

static CcTimelyConfig timely_cfg;
static CcTimelyFlow   timely_flows[8];

/* Worked numbers with the paper's parameters (T_low 50 us, T_high 500 us, beta 0.8, delta 10 Mb/s,
 * 10 Gb/s max); bytes = 0 so the RTT is t_complete - t_send exactly. */
static int timely(void) {
    CcTimelyParams p;
    cc_timely_params_default(&p);
    if (p.t_low_ns != 50000 || p.beta_num * 5u != p.beta_den * 4u) return 40;
    CcTimelyParams bad = p;
    bad.t_low_ns = p.t_high_ns + 1;
    if (cc_timely_config_init(&timely_cfg, &bad) != CC_STATUS_INVALID_CONFIG) return 41;
    if (cc_timely_config_init(&timely_cfg, &p) != CC_STATUS_OK) return 42;

    CcTimelyFlow *f = &timely_flows[3];
    cc_timely_flow_init(f, &timely_cfg);
    uint64_t r0, r1, r2, r3, r4;
    /* First sample: remembered, rate stays at init = 10 Gb/s. */
    if (cc_timely_on_completion(&timely_cfg, f, 0, 30000, 0, &r0) != CC_TIMELY_BRANCH_INIT) return 43;
    if (r0 != 10000000000ull) return 44;
    /* rtt 600 us > T_high: 1 - 0.8 * (1 - 500/600) = 0.8667 -> 8.667 Gb/s. */
    if (cc_timely_on_completion(&timely_cfg, f, 100000, 700000, 0, &r1) != CC_TIMELY_BRANCH_HIGH) return 45;
    if (r1 < 8666000000ull || r1 > 8667400000ull || r1 % 128u) return 46;
    /* rtt 30 us < T_low: + delta = + 10 Mb/s (rates are multiples of 128 b/s). */
    if (cc_timely_on_completion(&timely_cfg, f, 800000, 830000, 0, &r2) != CC_TIMELY_BRANCH_LOW) return 47;
    if (r2 - r1 < 10000000ull - 128u || r2 - r1 > 10000000ull + 128u) return 48;
    /* A completion before its send (clock glitch) is skipped: nothing changes. */
    CcTimelyState before, after;
    cc_timely_flow_get_state(f, &before);
    if (cc_timely_on_completion(&timely_cfg, f, 900000, 899999, 0, &r3) != CC_TIMELY_BRANCH_SKIP) return 49;
    cc_timely_flow_get_state(f, &after);
    if (r3 != r2 || before.rate_u128bps != after.rate_u128bps || before.prev_rtt_q4 != after.prev_rtt_q4) return 50;
    /* rtt 100 us after 30 us: the EWMA of differences turns positive -> gradient decrease. */
    if (cc_timely_on_completion(&timely_cfg, f, 1000000, 1100000, 0, &r4) != CC_TIMELY_BRANCH_DEC) return 51;
    if (!(r4 < r2 && r4 > r2 / 2)) return 52;
    /* The _ex call: same semantics, full result; RTT in Q.4 ns. */
    CcTimelyCompletion ev = {2000000, 2040000, 0, 0};
    CcTimelyUpdate u;
    CcTimelyBranch b = cc_timely_on_completion_ex(&timely_cfg, f, &ev, &u);
    if (b != CC_TIMELY_BRANCH_LOW || u.rtt_q4 != 40000u * 16u || u.app_limited) return 53;
    /* Restore a saved state: the flow continues from it. */
    cc_timely_flow_set_state(f, &before);
    cc_timely_flow_get_state(f, &after);
    if (after.rate_u128bps != before.rate_u128bps || after.rtt_diff_q4 != before.rtt_diff_q4 || after.rtt_diff_frac_hi != before.rtt_diff_frac_hi || after.rtt_diff_frac_lo != before.rtt_diff_frac_lo || after.residual != before.residual) return 54;
    /* The by-value calls (result in registers; rate in units of 128 b/s): the same events on a
     * second flow give the same branches and rates. */
    CcTimelyFlow *g = &timely_flows[4];
    cc_timely_flow_init(g, &timely_cfg);
    CcTimelyResult v = cc_timely_on_completion_rv(&timely_cfg, g, 0, 30000, 0);
    /* CcTimelyResult is one 64-bit word: the branch in the low byte, the rate (units of 128 b/s)
     * in the high word. */
    if (TIMELY_BRANCH(v) != CC_TIMELY_BRANCH_INIT || (uint64_t)TIMELY_RATE_U(v) * 128u != r0) return 55;
    /* cc_timely_on_rtt: the caller measured the RTT (Q.4 ns, serialisation removed): 600 us. */
    v = cc_timely_on_rtt(&timely_cfg, g, 600000ull * 16u, 0);
    if (TIMELY_BRANCH(v) != CC_TIMELY_BRANCH_HIGH || (uint64_t)TIMELY_RATE_U(v) * 128u != r1) return 56;
    v = cc_timely_on_completion_rv(&timely_cfg, g, 800000, 830000, 0);
    if (TIMELY_BRANCH(v) != CC_TIMELY_BRANCH_LOW || (uint64_t)TIMELY_RATE_U(v) * 128u != r2) return 57;
    v = cc_timely_on_completion_rv(&timely_cfg, g, 900000, 899999, 0);
    if (TIMELY_BRANCH(v) != CC_TIMELY_BRANCH_SKIP || (uint64_t)TIMELY_RATE_U(v) * 128u != r2) return 58;
    v = cc_timely_on_rtt(&timely_cfg, g, 100000ull * 16u, 0);
    if (TIMELY_BRANCH(v) != CC_TIMELY_BRANCH_DEC || (uint64_t)TIMELY_RATE_U(v) * 128u != r4) return 59;
    return 0;
}

/* ---- HPCC --------------------------------------------------------------------------------- */

static CcHpccConfig hpcc_cfg;
static CcHpccFlow   hpcc_flows[4];

/* One INT hop as on the wire (paper Fig. 7): B (4 bits) | ts (24) | tx_bytes/128 (20) | qlen/80 (16),
 * big-endian. */
static void int_hop(uint8_t *p, uint32_t code, uint32_t ts, uint32_t tx, uint32_t qlen) {
    uint64_t w = ((uint64_t)code << 60) | ((uint64_t)(ts & 0xffffffu) << 36) |
                 ((uint64_t)(tx & 0xfffffu) << 16) | (qlen & 0xffffu);
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(w >> (56 - 8 * i));
}
static void int_header(uint8_t *p, uint32_t nhop, uint32_t path_id) {
    p[0] = (uint8_t)((nhop << 4) | ((path_id >> 8) & 0xfu));
    p[1] = (uint8_t)path_id;
}

/* The worked example of docs/hpcc.md (paper config, one 100G hop, T = 13 us):
 * (ts 1000, tx 0, qlen 100) then (ts 2000, tx 100, qlen 200): u' = 1.073231, U = 1.005633,
 * W = 162500 * 0.95 / 1.005633 + 80 = 153590.27 B. Then bad blocks, a path change to 3 hops,
 * and an AI step. */
static int hpcc(void) {
    CcHpccParams p;
    cc_hpcc_params_default(&p);
    if (p.nic_rate_bps != 100000000000ull || p.base_rtt_ns != 13000 || p.eta_num * 100u != p.eta_den * 95u ||
        p.max_stage != 5 || p.w_ai_bytes != 80) return 60;
    CcHpccParams bad = p;
    bad.min_rate_bps = 9000000;                 /* W_min = 14.6 B < 16 B: rejected */
    if (cc_hpcc_config_init(&hpcc_cfg, &bad) != CC_STATUS_INVALID_CONFIG) return 61;
    if (cc_hpcc_config_init(&hpcc_cfg, &p) != CC_STATUS_OK) return 62;

    CcHpccFlow *f = &hpcc_flows[1];
    cc_hpcc_flow_init(f, &hpcc_cfg);
    CcHpccState st;
    cc_hpcc_flow_get_state(f, &st);
    if (st.w_q8 != 162500u * 256u || st.u_q32 != (1ull << 32) || st.has_int) return 63;

    uint8_t b[2 + 8 * CC_HPCC_MAX_HOPS];
    uint32_t w = 0;
    int_header(b, 1, 0x123);
    int_hop(b + 2, 5, 1000, 0, 100);
    if (cc_hpcc_on_ack(&hpcc_cfg, f, 0, 1000, b, 10, &w) != CC_HPCC_BRANCH_INIT) return 64;
    if (w != 162500u * 256u) return 65;
    int_hop(b + 2, 5, 2000, 100, 200);
    if (cc_hpcc_on_ack(&hpcc_cfg, f, 1001, 2000, b, 10, &w) != CC_HPCC_BRANCH_MD) return 66;
    if (w < 153590u * 256u || w > 153590u * 256u + 128u) return 67;   /* 153590.27 B: within [.0, .5] */

    /* Malformed: a cut block, a reserved speed code, nhop above 5: BAD, nothing changes. */
    uint32_t w2 = 0;
    cc_hpcc_flow_get_state(f, &st);
    if (cc_hpcc_on_ack(&hpcc_cfg, f, 2000, 3000, b, 9, &w2) != CC_HPCC_BRANCH_BAD || w2 != w) return 68;
    int_hop(b + 2, 0, 3000, 200, 0);
    if (cc_hpcc_on_ack(&hpcc_cfg, f, 2000, 3000, b, 10, &w2) != CC_HPCC_BRANCH_BAD) return 69;
    int_header(b, 6, 0x123);
    if (cc_hpcc_on_ack(&hpcc_cfg, f, 2000, 3000, b, 50, &w2) != CC_HPCC_BRANCH_BAD) return 70;
    if (cc_hpcc_on_ack(&hpcc_cfg, f, 2000, 3000, 0, 0, &w2) != CC_HPCC_BRANCH_BAD) return 71;
    CcHpccState st2;
    cc_hpcc_flow_get_state(f, &st2);
    if (st2.w_q8 != st.w_q8 || st2.u_q32 != st.u_q32 || st2.hops[0] != st.hops[0]) return 72;

    /* Path change to 3 hops (10G, 25G, 100G): RESYNC, window unchanged. */
    int_header(b, 3, 0x456);
    int_hop(b + 2, 1, 5000, 0, 0);
    int_hop(b + 10, 2, 5000, 0, 0);
    int_hop(b + 18, 5, 5000, 0, 0);
    if (cc_hpcc_on_ack(&hpcc_cfg, f, 3000, 4000, b, 26, &w2) != CC_HPCC_BRANCH_RESYNC || w2 != w) return 73;
    /* 1 us later, every hop lightly loaded: 4 units = 512 B in 1000 ns; on the 10G hop
     * (1.25 B/ns) u' = 0.41, the busiest. U = (1 - 1/13) * 1.0056 + (1/13) * 0.41 = 0.96 is still
     * above eta, so this is MD; a second such ACK brings U to 0.92 < eta: AI, W = Wc + 80 B. */
    int_hop(b + 2, 1, 6000, 4, 0);
    int_hop(b + 10, 2, 6000, 4, 0);
    int_hop(b + 18, 5, 6000, 4, 0);
    CcHpccUpdate u;
    if (cc_hpcc_on_ack_ex(&hpcc_cfg, f, 4000, 5000, b, 26, &u) != CC_HPCC_BRANCH_MD) return 74;
    int_hop(b + 2, 1, 7000, 8, 0);
    int_hop(b + 10, 2, 7000, 8, 0);
    int_hop(b + 18, 5, 7000, 8, 0);
    cc_hpcc_flow_get_state(f, &st);
    uint32_t wc_before = st.wc_q8;
    if (cc_hpcc_on_ack_ex(&hpcc_cfg, f, 5000, 6000, b, 26, &u) != CC_HPCC_BRANCH_AI) return 74;
    if (u.window_q8_bytes != wc_before + 80u * 256u) return 75;
    /* R = W/T: W bytes * 8 / 13 us. */
    uint64_t want = (uint64_t)u.window_q8_bytes * 8000000000ull / (256ull * 13000ull);
    if (!close_enough(u.rate_bps, want) || cc_hpcc_rate_bps(&hpcc_cfg, u.window_q8_bytes) != u.rate_bps) return 76;
    /* State round trip. */
    cc_hpcc_flow_get_state(f, &st);
    cc_hpcc_flow_set_state(&hpcc_flows[2], &st);
    cc_hpcc_flow_get_state(&hpcc_flows[2], &st2);
    if (st2.w_q8 != st.w_q8 || st2.u_q32 != st.u_q32 || st2.inc_stage != 1 || st2.int_header != st.int_header) return 77;
    return 0;
}

/* ---- Segment pacer ------------------------------------------------------------------------ */

/* One scheduler for up to CC_PACER_CAPACITY flows, in .bss (cc_pacer_init empties it in place). */
static CcPacer pacer;

/* A 10 Gb/s paced flow (40 000 B: three segments, each 13 107.25 ns = 209 716/16 ns after the
 * previous) and a window flow capped at 20 000 B in flight, on a 100 Gb/s line, polled every
 * microsecond for 100 us; then an ACK reopens the window. */
static int pacer_check(void) {
    CcPacerParams p;
    cc_pacer_params_default(&p);
    if (p.line_rate_u128bps != 781250000u || p.hybrid_rate_u128bps != 0) return 80;
    if (cc_pacer_init(&pacer, &p) != CC_STATUS_OK) return 81;
    CcPacerFlowSpec s = {16384, 78125000u, CC_PACER_MODE_PACED, 0};
    uint32_t a = 99, b = 99;
    if (cc_pacer_add_flow(&pacer, &s, &a) != CC_PACER_ADD_OK || a != 0) return 82;
    s.mode = CC_PACER_MODE_WINDOW;
    s.window_bytes = 20000;
    s.seg_bytes = 4096;
    if (cc_pacer_add_flow(&pacer, &s, &b) != CC_PACER_ADD_OK || b != 1) return 83;
    if (cc_pacer_enqueue(&pacer, a, 40000, 0) != CC_PACER_ENQUEUE_SCHEDULED) return 84;
    if (cc_pacer_enqueue(&pacer, b, 100000, 0) != CC_PACER_ENQUEUE_SCHEDULED) return 85;
    uint32_t last_a = 0, n_a = 0, sent_b = 0;
    for (uint32_t us = 0; us <= 100; us++) {
        uint32_t now = cc_pacer_time_from_ns((uint64_t)us * 1000u);
        CcPacerSegment seg;
        while (cc_pacer_next(&pacer, now, &seg) == CC_PACER_NEXT_SEND) {
            if (seg.t_send_q4 > now) return 86;
            if (seg.flow == a) {
                if (n_a && seg.t_send_q4 - last_a < 209716u) return 87;
                last_a = seg.t_send_q4;
                n_a++;
            } else {
                sent_b += seg.bytes;
                if (sent_b > 20000u) return 88;
            }
        }
    }
    if (n_a != 3 || sent_b != 20000u || cc_pacer_backlog(&pacer, b) != 80000u) return 89;
    uint32_t now = cc_pacer_time_from_ns(101000);
    if (cc_pacer_on_ack(&pacer, b, 8000, now) != CC_PACER_WINDOW_REOPENED) return 90;
    uint32_t t = 0;
    if (!cc_pacer_earliest(&pacer, &t) || t != now) return 91;
    if (cc_pacer_set_rate(&pacer, a, 39062500u) != CC_PACER_RATE_DECREASE) return 92;
    if (cc_pacer_on_ack(&pacer, a, 1, now) != CC_PACER_WINDOW_NOT_WINDOW) return 93;
    return 0;
}

/* The header this file was compiled with must describe the library it is linked with. */
static int layouts(void) {
    CcLayout l;
    if (cc_ffi_layout(0, &l) != CC_STATUS_OK || l.block_bytes != sizeof(CcTimelyFlow) ||
        l.state_bytes > l.block_bytes || l.align != _Alignof(CcTimelyFlow)) return 38;
    if (cc_ffi_layout(1, &l) != CC_STATUS_OK || l.block_bytes != sizeof(CcTimelyConfig) ||
        l.state_bytes > l.block_bytes) return 39;
    if (cc_ffi_layout(2, &l) != CC_STATUS_OK || l.block_bytes != sizeof(CcCatsState)) return 34;
    if (cc_ffi_layout(3, &l) != CC_STATUS_OK || l.block_bytes != sizeof(CcCatsConn) ||
        l.state_bytes > l.block_bytes || l.align != _Alignof(CcCatsConn)) return 35;
    if (cc_ffi_layout(4, &l) != CC_STATUS_OK || l.block_bytes != sizeof(CcCatsConfig) ||
        l.state_bytes > l.block_bytes) return 36;
    if (cc_ffi_layout(5, &l) != CC_STATUS_OK || l.block_bytes != sizeof(CcHpccFlow) ||
        l.state_bytes > 64 || l.align != _Alignof(CcHpccFlow)) return 78;
    if (cc_ffi_layout(6, &l) != CC_STATUS_OK || l.block_bytes != sizeof(CcHpccConfig) ||
        l.state_bytes > l.block_bytes) return 79;
    if (cc_ffi_layout(7, &l) != CC_STATUS_OK || l.block_bytes != sizeof(CcPacer) ||
        l.state_bytes > l.block_bytes || l.align != _Alignof(CcPacer)) return 94;
    if (cc_ffi_layout(1000, &l) != CC_STATUS_INVALID_INPUT) return 37;
    return 0;
}

int main(void) {
    if (cc_ffi_abi_version() != CC_FFI_ABI_VERSION) return 1;
    int r;
    if ((r = layouts()) != 0) return r;
    if ((r = cats_web_page()) != 0) return r;
    if ((r = cats_edges()) != 0) return r;
    if ((r = timely()) != 0) return r;
    if ((r = hpcc()) != 0) return r;
    if ((r = pacer_check()) != 0) return r;

    for (uint32_t i = 0; i < N_DIV; i++) {
        uint32_t x = divisors[i];
        if (cc_recip(x, &recips[i]) != CC_STATUS_OK) return 2;
        for (uint32_t a = 1; a < 4000000000u; a = a * 7u + 12345u) {
            uint64_t want = (((uint64_t)a << 16) + x / 2) / x;     /* round(a * 2^16 / x) */
            uint64_t one_shot = cc_recip_q16(x, a);
            if (!close_enough(one_shot, want)) return 3;
            if (cc_recip_mul_scaled(recips[i], a, 16) != one_shot) return 4;
        }
    }
    CcRecip untouched = {7, 7};
    if (cc_recip(0, &untouched) != CC_STATUS_ZERO_DIVISOR) return 5;
    if (untouched.mant_q31 != 7 || untouched.shift != 7) return 6;
    if (cc_recip_q16(0, 5) != UINT64_MAX) return 7;

    put("c-firmware: all checks passed\n");
    return 0;
}
