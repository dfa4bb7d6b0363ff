/* Example firmware: calls the cc-ffi C ABI the way NIC firmware would.
 *
 * - state is allocated statically (no heap);
 * - every call's result is checked against plain C arithmetic (division is fine here: this is
 *   a self-test, not the per-event path);
 * - the exit code is 0 on success, else the number of the first failed check.
 *
 * Per-algorithm blocks go here as they are exported, e.g.
 *     static CcTimelyConfig timely_cfg;
 *     static CcTimelyFlow   timely_flows[64];
 *     cc_timely_config_init(&timely_cfg, &params);  cc_timely_flow_init(&timely_flows[i], &timely_cfg);
 *     cc_timely_on_completion(&timely_cfg, &timely_flows[i], rtt_ns, &rate_bps);
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

int main(void) {
    if (cc_ffi_abi_version() != CC_FFI_ABI_VERSION) return 1;

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
