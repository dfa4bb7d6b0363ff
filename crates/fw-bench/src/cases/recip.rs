//! Pilot: cc-math's reciprocal, through the probe (`probe_cc_math_recip`) and through the C ABI
//! (`cc_recip_q16`). Inputs: `x` swept over every bit length 1..=32 (random mantissas), `a`
//! random, plus `x = 0`; every simulated result is checked against the host build of cc-math,
//! so a calling-convention slip in the harness cannot produce plausible-looking counts.

use std::num::NonZeroU32;

use anyhow::{Result, ensure};

use super::{Ctx, Lcg};
use crate::machine::Machine;
use crate::table::Sample;

fn inputs(limit: usize) -> Vec<(u32, u32)> {
    let mut rng = Lcg::new(5);
    let mut v = vec![(0, rng.next_u32())];
    let per_len = (limit.saturating_sub(1) / 32).max(1);
    for bits in 1..=32u32 {
        for _ in 0..per_len {
            let top = 1u32 << (bits - 1);
            let x = top | (rng.next_u32() & (top - 1));
            v.push((x, rng.next_u32()));
        }
    }
    v.truncate(limit.max(2));
    v
}

fn run(m: &mut Machine, ctx: &Ctx, symbol: &str, zero: u64) -> Result<Vec<Sample>> {
    let mut out = Vec::new();
    for (x, a) in inputs(ctx.limit) {
        let r = m.call(symbol, &[x, a])?;
        let want = NonZeroU32::new(x).map_or(zero, |x| cc_math::RECIP.recip(x).mul_scaled(a, 16));
        ensure!(
            r.ret_u64() == want,
            "{symbol}({x}, {a}) = {} in the simulator, {want} on the host",
            r.ret_u64()
        );
        out.push(Sample::of_call(if x == 0 { "x = 0" } else { "x ≠ 0" }, &r));
    }
    Ok(out)
}

/// `probe_cc_math_recip(x, a) -> u64` (0 for `x = 0`).
pub(super) fn run_probe(m: &mut Machine, ctx: &Ctx) -> Result<Vec<Sample>> {
    run(m, ctx, "probe_cc_math_recip", 0)
}

/// `cc_recip_q16(x, a) -> uint64_t` (`UINT64_MAX` for `x = 0`).
pub(super) fn run_ffi(m: &mut Machine, ctx: &Ctx) -> Result<Vec<Sample>> {
    run(m, ctx, "cc_recip_q16", u64::MAX)
}
