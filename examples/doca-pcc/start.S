/* Freestanding start-up for the QEMU test build (no libc, no crt0): sets gp and sp, calls
 * main(), and exits through ecall a7 = 93 with main's return value, which QEMU user mode
 * treats as the process exit code. The DPA build has no _start: the platform calls the
 * callbacks. */
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
    .space  16384
stack_top:
