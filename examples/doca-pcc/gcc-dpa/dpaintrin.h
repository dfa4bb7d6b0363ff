/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Stand-in for <dpaintrin.h>, which NVIDIA's DPA compiler (dpacc) provides and the DOCA SDK's
 * device headers include (doca_pcc_dev_utils.h). Written by this project, only so that GCC can
 * compile against those headers (`make sdk-check`, `make dpa-obj DOCA_INC=...`): it declares what
 * the SDK headers name and nothing else — the thread timer, the thread fence and its constants,
 * and the fixed-point reciprocal, power of two and logarithm. The constants' values and the
 * argument types are ours; nothing in this project calls these (the SDK's utility macros that
 * use them are not expanded by doca_pcc_algo.c), and a DPA build uses dpacc's own header. */
#ifndef PCC_GCC_DPAINTRIN_H
#define PCC_GCC_DPAINTRIN_H

#include <stdint.h>

/* Fence spaces and orderings. */
enum { __DPA_MEMORY = 1, __DPA_MMIO = 2, __DPA_SYSTEM = 3 };
enum { __DPA_R = 1, __DPA_W = 2, __DPA_RW = 3 };

void __dpa_thread_fence(int space, int pred, int succ);
uint64_t __dpa_thread_time(void);
uint32_t __dpa_fxp_rcp(uint32_t a);
uint32_t __dpa_fxp_pow2(uint32_t a);
uint32_t __dpa_fxp_log2(uint32_t a);

#endif /* PCC_GCC_DPAINTRIN_H */
