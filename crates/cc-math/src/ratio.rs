//! Exact ratios of two integers, so configurations carry no floats (`η`, TIMELY's `α`, `β`, …).

/// A ratio `num / den` of two integers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Ratio {
    /// Numerator.
    pub num: u32,
    /// Denominator (must be non-zero; each `Config` that takes a ratio checks it).
    pub den: u32,
}

impl Ratio {
    /// `num / den`.
    #[must_use]
    pub const fn new(num: u32, den: u32) -> Self {
        Self { num, den }
    }
}
