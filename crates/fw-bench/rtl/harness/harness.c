/* The RTL harness: runs fw-bench's recorded calls on a soft core under Verilator.
 *
 * The testbench (crates/fw-bench/rtl/tb) owns a mailbox at 0xf000_0000, uncached on every core
 * (VexRiscv's LiteX configuration treats 0x8000_0000..0xffff_ffff as I/O). The harness stores to
 * DONE; while that store is on the bus the testbench reads the previous command's results and
 * writes the next command, which the harness then executes:
 *   WRITE  copy len bytes from the mailbox's data area to addr (through the core's own stores,
 *          so a data cache stays coherent)
 *   READ   copy len bytes from addr to the data area
 *   CALL   the measured call of rtl_call_{m,u} (start.S) on the call block
 *   EMPTY  the same sequence without the call
 * The library under test is libcc_ffi.a; nothing here runs between the counter reads. */
#include <stdint.h>

#define MB          ((volatile uint32_t *)0xf0000000u)
#define MB_CMD      (0x00 / 4)
#define MB_ADDR     (0x04 / 4)
#define MB_LEN      (0x08 / 4)
#define MB_CONFIG   (0x0c / 4)
#define MB_STATUS   (0x40 / 4)
#define MB_DONE     (0x7fc / 4)
#define MB_BLOCK    ((uint32_t *)0xf0000080u)
#define MB_DATA     ((volatile uint8_t *)0xf0001000u)

enum { CMD_WRITE = 1, CMD_READ = 2, CMD_CALL = 3, CMD_EMPTY = 4, CMD_EXIT = 5 };
/* MB_CONFIG bits, set by the testbench per core. */
enum { CFG_MACHINE_COUNTERS = 1, CFG_MACHINE_CSRS = 2, CFG_MCOUNTINHIBIT = 4 };

void rtl_call_m(uint32_t *block);
void rtl_empty_m(uint32_t *block);
void rtl_call_u(uint32_t *block);
void rtl_empty_u(uint32_t *block);
void rtl_trap(void);

void harness_main(void) {
    uint32_t cfg = MB[MB_CONFIG];
    if (cfg & CFG_MACHINE_CSRS) {
        /* Traps report to the testbench. */
        __asm__ volatile("csrw mtvec, %0" ::"r"((uint32_t)(uintptr_t)rtl_trap | 1u));
    }
    if (cfg & CFG_MCOUNTINHIBIT) {
        /* CV32E40P resets with its counters inhibited (mcountinhibit = 0xd; its manual,
         * "Control and Status Registers"): enable them all. VexRiscv has no mcountinhibit. */
        __asm__ volatile("csrw 0x320, zero");
    }
    void (*call)(uint32_t *) = (cfg & CFG_MACHINE_COUNTERS) ? rtl_call_m : rtl_call_u;
    void (*empty)(uint32_t *) = (cfg & CFG_MACHINE_COUNTERS) ? rtl_empty_m : rtl_empty_u;
    MB[MB_STATUS] = 0;
    for (;;) {
        MB[MB_DONE] = 1;
        uint32_t cmd = MB[MB_CMD];
        volatile uint8_t *p = (volatile uint8_t *)(uintptr_t)MB[MB_ADDR];
        uint32_t n = MB[MB_LEN];
        switch (cmd) {
        case CMD_WRITE:
            for (uint32_t i = 0; i < n; i++) p[i] = MB_DATA[i];
            break;
        case CMD_READ:
            for (uint32_t i = 0; i < n; i++) MB_DATA[i] = p[i];
            break;
        case CMD_CALL:
            call(MB_BLOCK);
            break;
        case CMD_EMPTY:
            empty(MB_BLOCK);
            break;
        default:
            MB[MB_STATUS] = 0xe0u | cmd;
            MB[MB_DONE] = 1;
            for (;;) {
            }
        }
    }
}
