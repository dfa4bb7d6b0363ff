/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Standard input and output through Linux system calls, for the freestanding test programs that
 * run under QEMU user mode (harness.c, sdk_getters_check.c; start.S calls their main). Never part
 * of the DPA build. */
#ifndef QEMU_IO_H
#define QEMU_IO_H

#include <stdint.h>

static inline long sys3(long n, long a, long b, long c) {
	register long a0 __asm__("a0") = a;
	register long a1 __asm__("a1") = b;
	register long a2 __asm__("a2") = c;
	register long a7 __asm__("a7") = n;
	__asm__ volatile("ecall" : "+r"(a0) : "r"(a1), "r"(a2), "r"(a7) : "memory");
	return a0;
}

static char obuf[4096];
static uint32_t olen;

static inline void flush_fd(long fd) {
	uint32_t off = 0;
	while (off < olen) {
		long n = sys3(64, fd, (long)(uintptr_t)(obuf + off), (long)(olen - off));
		if (n <= 0) break;
		off += (uint32_t)n;
	}
	olen = 0;
}
static inline void putc_(char c) {
	if (olen == sizeof obuf) flush_fd(1);
	obuf[olen++] = c;
}
static inline void puts_(const char *s) {
	while (*s) putc_(*s++);
}
static inline void putu(uint32_t v) {
	char d[10];
	int n = 0;
	do {
		d[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n) putc_(d[--n]);
}
static inline void putx(uint32_t v) {
	puts_("0x");
	for (int i = 28; i >= 0; i -= 4) putc_("0123456789abcdef"[(v >> i) & 0xF]);
}
static inline void sp(void) { putc_(' '); }

/* Reads exactly n bytes; returns n, 0 at a clean end of input, or -1 in the middle of a record. */
static inline long read_full(uint8_t *p, long n) {
	long got = 0;
	while (got < n) {
		long r = sys3(63, 0, (long)(uintptr_t)(p + got), n - got);
		if (r <= 0) return got == 0 ? 0 : -1;
		got += r;
	}
	return got;
}

static inline _Noreturn void exit_(uint32_t code) {
	sys3(93, code, 0, 0);
	for (;;) {
	}
}

#endif /* QEMU_IO_H */
