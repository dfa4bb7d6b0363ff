/* Start-up and the measured call of the RTL harness (crates/fw-bench/src/rtl.rs drives it).
 *
 * Reset vectors: CV32E40P, PicoRV32 and VexRiscv start at their boot address (0 here); Ibex at
 * boot address + 0x80 (its mtvec is vectored from the boot address): both jump to _start. */
    .section .text.start, "ax"
    .globl _start
    .option push
    .option norvc
    .option norelax
_reset:
    j       _start
    .balign 128
    j       _start                      /* Ibex: boot_addr + 0x80 */
_start:
    la      gp, __global_pointer$
    la      sp, harness_stack_top
    call    harness_main
1:  j       1b
    .option pop

    .section .bss.harness_stack, "aw", @nobits
    .balign 16
    .space  4096
    .globl  harness_stack_top
harness_stack_top:

/* The counter CSRs read around a call: machine mode (mcycle 0xB00, minstret 0xB02) or user mode
 * (cycle 0xC00, instret 0xC02: PicoRV32 has only these). */
#define CYC_M 0xB00
#define INS_M 0xB02
#define CYC_U 0xC00
#define INS_U 0xC02

/* rtl_call_{m,u}(CallBlock *b): b->args[0..8] at 0..31, b->fn at 32; writes b->a0 (36), b->a1 (40),
 * b->cycles (44), b->instret (48): the counter deltas across
 *     csrr cycle; csrr instret; jalr fn; csrr instret; csrr cycle
 * with sp at 0x8000_0000 (fw-bench's STACK_TOP) for the callee. rtl_empty_{m,u} measures the
 * same sequence with nothing in the middle (the empty sequence the host subtracts). */
.macro MEASURED name, cyc, ins, call
    .section .text.\name, "ax"
    .globl \name
    .type \name, @function
    .balign 4
\name:
    addi    sp, sp, -64
    sw      ra, 60(sp)
    sw      s0, 56(sp)
    sw      s1, 52(sp)
    sw      s2, 48(sp)
    sw      s3, 44(sp)
    sw      s4, 40(sp)
    mv      s0, a0
    la      t0, harness_saved_sp
    sw      sp, 0(t0)
    lw      t6, 32(s0)
    lw      a1, 4(s0)
    lw      a2, 8(s0)
    lw      a3, 12(s0)
    lw      a4, 16(s0)
    lw      a5, 20(s0)
    lw      a6, 24(s0)
    lw      a7, 28(s0)
    lw      a0, 0(s0)
    li      sp, 0x80000000
    .balign 4
    csrr    s1, \cyc
    csrr    s2, \ins
.if \call
    jalr    ra, 0(t6)
.endif
    csrr    s3, \ins
    csrr    s4, \cyc
    la      t0, harness_saved_sp
    lw      sp, 0(t0)
    sw      a0, 36(s0)
    sw      a1, 40(s0)
    sub     s4, s4, s1
    sw      s4, 44(s0)
    sub     s3, s3, s2
    sw      s3, 48(s0)
    lw      ra, 60(sp)
    lw      s0, 56(sp)
    lw      s1, 52(sp)
    lw      s2, 48(sp)
    lw      s3, 44(sp)
    lw      s4, 40(sp)
    addi    sp, sp, 64
    ret
    .size \name, . - \name
.endm
    .option push
    .option norvc
    MEASURED rtl_call_m, CYC_M, INS_M, 1
    MEASURED rtl_empty_m, CYC_M, INS_M, 0
    MEASURED rtl_call_u, CYC_U, INS_U, 1
    MEASURED rtl_empty_u, CYC_U, INS_U, 0
    .option pop

/* Traps: report the cause and the pc to the testbench through the mailbox and stop. */
    .section .text.trap, "ax"
    .balign 256
    .globl rtl_trap
rtl_trap:
    li      t0, 0xf0000000
    csrr    t1, mcause
    sw      t1, 68(t0)
    csrr    t1, mepc
    sw      t1, 72(t0)
    li      t1, 0xbad
    sw      t1, 64(t0)
    sw      t1, 0x7fc(t0)
1:  j       1b

    .section .bss.harness_saved_sp, "aw", @nobits
    .balign 4
    .globl harness_saved_sp
harness_saved_sp:
    .space 4
