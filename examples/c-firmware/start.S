/* Freestanding start-up for the example firmware (no libc, no crt0).
 * Sets gp and sp, calls main(), and exits through ecall a7 = 93 with main's return value, which
 * QEMU user mode and `fw-bench run` both treat as the process exit code. A real NIC core would
 * instead report the status and park; the rest of the example is the same. */
    .section .text.start, "ax"
    .globl _start
    .type _start, @function
_start:
    .option push
    .option norelax
    la      gp, __global_pointer$
    .option pop
    la      sp, stack_top
    call    main
    li      a7, 93
    ecall
1:  j       1b
    .size _start, . - _start

    .section .bss.stack, "aw", @nobits
    .balign 16
stack_bottom:
    .space  8192
stack_top:
