//! The one fixed-point kernel of the firmware crates (`timely-cc`, `hpcc-cc`, `cats-conductor`,
//! `cc-pacer`): the algorithm crates hold only their algorithm and take every building block
//! from here.
//!
//! * [`recip`]: a division-free reciprocal `1/x` for any `u32` (a 129-entry, 516-byte table of
//!   `1/m` for `m ∈ [1, 2]`, linear interpolation between entries), maximum relative error
//!   below 2^-15 — proven by an exhaustive host test over every 24-bit input — and the same
//!   refined by one Newton step to 2^-30 ([`RecipTable::recip_refined`], [`recip::newton`]).
//! * [`word`]: 32×32 → 64 word products (`mulhu`), 64×64 and 64×32 products in 32-bit words,
//!   a two-word shift.
//! * [`Scale`]: a constant `c ≈ mant/2^shift` precomputed at configuration time.
//! * [`Ratio`]: an exact `num/den` for configuration parameters.
//! * [`wrap`]: deltas of hardware counters that wrap at `2^BITS`.
//!
//! Everything here is `no_std`, allocation-free, float-free and panic-free; the table is built at
//! compile time by a `const fn` from the documented formula, never pasted.
#![no_std]
#![forbid(unsafe_code)]
#![deny(
    clippy::float_arithmetic,
    clippy::arithmetic_side_effects,
    clippy::indexing_slicing,
    clippy::panic,
    clippy::unwrap_used,
    clippy::cast_possible_truncation
)]

pub mod ratio;
pub mod recip;
pub mod scale;
pub mod word;
pub mod wrap;

pub use ratio::Ratio;
pub use recip::{RECIP, Recip, RecipTable};
pub use scale::Scale;

// The README (what crates.io shows) runs its example as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
