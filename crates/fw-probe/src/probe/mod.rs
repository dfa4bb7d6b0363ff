//! The riscv32 and riscv64 body of the probe. `unsafe` is confined to the three items a bare-metal binary
//! needs: the unmangled entry symbol, the `ecall` that exits, and the call to the undefined symbol
//! that turns a surviving panic path into a link error.
#![allow(unsafe_code)]

mod cats;
mod hpcc;
mod pacer;
mod pcc;
mod serve;
mod timely;

use core::hint::black_box;

unsafe extern "C" {
    /// Deliberately undefined: referenced only from the panic handler.
    fn fw_probe_panic_path_survived() -> !;
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    // SAFETY: never runs; if this is reachable the link fails on the undefined symbol.
    unsafe { fw_probe_panic_path_survived() }
}

/// Exit through the Linux/semihosting-style `exit` system call (a7 = 93), which QEMU user mode and
/// the instruction-count harness both understand.
fn exit(code: u32) -> ! {
    loop {
        // SAFETY: `ecall` with a7 = 93 ends the program; it touches no memory.
        unsafe {
            core::arch::asm!("ecall", in("a0") code, in("a7") 93u32, options(nomem, nostack));
        }
    }
}

/// Entry point. The stack pointer is set up by the loader (QEMU user mode and the ISS do).
#[unsafe(no_mangle)]
pub extern "C" fn _start() -> ! {
    let mut acc = 0u32;
    acc = acc.wrapping_add(timely::run(black_box(0)));
    acc = acc.wrapping_add(hpcc::run(black_box(0)));
    acc = acc.wrapping_add(cats::run(black_box(0)));
    acc = acc.wrapping_add(pacer::run(black_box(0)));
    acc = acc.wrapping_add(pcc::run(black_box(0)));
    acc = acc.wrapping_add(math());
    serve::fw_probe_serve();
    // The results are observed (so the calls stay) and the exit code is 0.
    let _ = black_box(acc);
    exit(0)
}

/// cc-math's shared reciprocal, called with an opaque input.
#[unsafe(no_mangle)]
#[inline(never)]
pub extern "C" fn probe_cc_math_recip(x: u32, a: u32) -> u64 {
    match core::num::NonZeroU32::new(x) {
        Some(x) => cc_math::RECIP.recip(x).mul_scaled(a, 16),
        None => 0,
    }
}

fn math() -> u32 {
    let r = probe_cc_math_recip(black_box(12_345), black_box(1_000_000));
    black_box(r) as u32
}
