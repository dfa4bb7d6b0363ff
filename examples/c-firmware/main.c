/* Example firmware: calls the cc-ffi C ABI the way NIC firmware would.
 *
 * - state is allocated statically (no heap);
 * - every call's result is checked against plain C arithmetic (division is fine here: this is
 *   a self-test, not the per-event path);
 * - the exit code is 0 on success, else the number of the first failed check.
 *
 * Exit codes: 1-9 ABI/reciprocal, 10-39 CATS, 40-59 TIMELY.
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
    if (after.rate_u128bps != before.rate_u128bps || after.rtt_diff_q4 != before.rtt_diff_q4 || after.residual != before.residual) return 54;
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
