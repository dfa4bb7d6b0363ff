//! The riscv32 body. `unsafe` is confined to the items a bare-metal binary needs: the unmangled
//! symbols and the `ecall` that exits.
#![allow(unsafe_code)]

use cc_reference::{hpcc, timely};
use core::hint::black_box;

#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    exit(101)
}

/// Exit through the `exit` system call (a7 = 93), which QEMU user mode and rvsim understand.
fn exit(code: u32) -> ! {
    loop {
        // SAFETY: `ecall` with a7 = 93 ends the program; it touches no memory.
        unsafe {
            core::arch::asm!("ecall", in("a0") code, in("a7") 93u32, options(nomem, nostack));
        }
    }
}

/// TIMELY: the reference's parameters and one flow.
pub struct TimelyCtx {
    p: timely::RefParams,
    s: timely::RefState,
}

/// Parameters of [`ref_timely_init`], in this order (`f64` each): line rate (b/s), min rate,
/// max rate, initial rate, T_low (ns), T_high (ns), minRTT (ns), α, β, δ (b/s), HAI N,
/// HAI after (completions), application-limited fraction (≤ 0: off), per-completion scaling
/// (0 or 1).
pub const TIMELY_PARAMS: usize = 14;

/// Sets up `ctx` (zeroed memory) from `p`.
#[unsafe(no_mangle)]
#[inline(never)]
#[allow(improper_ctypes_definitions)] // called by fw-bench with a pointer to zeroed memory
pub extern "C" fn ref_timely_init(ctx: &mut TimelyCtx, p: &[f64; TIMELY_PARAMS]) {
    let [
        line,
        min,
        max,
        init,
        t_low,
        t_high,
        min_rtt,
        alpha,
        beta,
        delta,
        hai_n,
        hai_after,
        al,
        pcs,
    ] = *p;
    let rp = timely::RefParams {
        line_rate_bps: line as u64,
        min_rate_bps: min,
        max_rate_bps: max,
        init_rate_bps: init,
        t_low_ns: t_low,
        t_high_ns: t_high,
        min_rtt_ns: min_rtt,
        alpha,
        beta,
        delta_bps: delta,
        hai_n,
        hai_after: hai_after as u64,
        app_limited: if al > 0.0 { Some(al) } else { None },
        per_completion_scaling: pcs != 0.0,
    };
    *ctx = TimelyCtx {
        p: rp,
        s: timely::RefState::new(&rp),
    };
}

/// One completion through the reference (RTT engine and Algorithm 1); returns the rate's bits.
#[unsafe(no_mangle)]
#[inline(never)]
#[allow(improper_ctypes_definitions)] // called by fw-bench
pub extern "C" fn ref_timely_on_completion(
    ctx: &mut TimelyCtx,
    t_send_ns: u64,
    t_complete_ns: u64,
    bytes: u32,
) -> u64 {
    let TimelyCtx { p, s } = ctx;
    s.on_completion(p, t_send_ns, t_complete_ns, bytes, None);
    s.rate_bps.to_bits()
}

/// Parameters of [`ref_hpcc_init`], in this order (`f64` each): NIC rate (b/s), base RTT T
/// (ns), η numerator, η denominator, maxStage, W_AI (bytes), min rate (b/s).
pub const HPCC_PARAMS: usize = 7;

/// Sets up `r` (zeroed memory) from `p`.
#[unsafe(no_mangle)]
#[inline(never)]
#[allow(improper_ctypes_definitions)] // called by fw-bench with a pointer to zeroed memory
pub extern "C" fn ref_hpcc_init(r: &mut hpcc::RefState, p: &[f64; HPCC_PARAMS]) {
    let [nic, t, eta_num, eta_den, max_stage, w_ai, min_rate] = *p;
    *r = hpcc::RefState::new(hpcc::RefParams {
        nic_rate_bps: nic,
        base_rtt_ns: t,
        eta_num: eta_num as u64,
        eta_den: eta_den as u64,
        max_stage: max_stage as u32,
        w_ai_bytes: w_ai,
        min_rate_bps: min_rate,
    });
}

/// Longest INT block: the header and 5 hops.
pub const INT_MAX_BYTES: usize = 2 + 8 * hpcc::MAX_HOPS;

/// One ACK (`int_len` bytes of `int`) through the reference Algorithm 1; returns the window's
/// bits.
#[unsafe(no_mangle)]
#[inline(never)]
#[allow(improper_ctypes_definitions)] // called by fw-bench
pub extern "C" fn ref_hpcc_on_ack(
    r: &mut hpcc::RefState,
    ack_seq: u32,
    snd_nxt: u32,
    int: &[u8; INT_MAX_BYTES],
    int_len: u32,
) -> u64 {
    let n = (int_len as usize).min(INT_MAX_BYTES);
    r.on_ack(u64::from(ack_seq), u64::from(snd_nxt), &int[..n]);
    r.w.to_bits()
}

/// Entry point: calls each export once with opaque inputs, so the link keeps them.
#[unsafe(no_mangle)]
pub extern "C" fn _start() -> ! {
    let mut t = TimelyCtx {
        p: timely::RefParams::default(),
        s: timely::RefState::new(&timely::RefParams::default()),
    };
    let tp = black_box([
        10e9, 10e6, 10e9, 1e9, 50e3, 500e3, 20e3, 0.875, 0.8, 10e6, 5.0, 5.0, 0.0, 0.0,
    ]);
    ref_timely_init(&mut t, &tp);
    let a = ref_timely_on_completion(&mut t, black_box(0), black_box(60_000), black_box(64_000));
    let mut h = hpcc::RefState::new(hpcc::RefParams::default());
    ref_hpcc_init(
        &mut h,
        &black_box([100e9, 13e3, 95.0, 100.0, 5.0, 80.0, 1e8]),
    );
    let b = ref_hpcc_on_ack(
        &mut h,
        black_box(0),
        black_box(0),
        &black_box([0; INT_MAX_BYTES]),
        0,
    );
    // Exit 0 whatever the results (they only keep the calls alive).
    exit(u32::from(black_box(a ^ b) == u64::MAX && black_box(false)))
}
