//! NIC time: `u32` in units of 1/16 ns, wrapping every 2^32 units (≈ 268.4 ms).

/// A point on the NIC clock, in units of 1/16 ns, modulo 2^32 (≈ 268.4 ms).
///
/// Two instants are compared by their wrapping difference, which is meaningful while they are
/// less than 2^31 units (≈ 134.2 ms) apart. The pacer keeps every time it stores within that
/// distance of the caller's `now` as long as it is called (any method taking `now`) at least once
/// every 2^30 units (≈ 67.1 ms): see the crate documentation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[repr(transparent)]
pub struct Instant(u32);

impl Instant {
    /// Time units per nanosecond.
    pub const UNITS_PER_NS: u32 = 16;

    /// The instant `ns` nanoseconds into the NIC clock (the low 28 bits of `ns`, times 16).
    #[must_use]
    #[allow(clippy::cast_possible_truncation)] // the clock wraps: keeping the low bits is the format
    pub const fn from_ns(ns: u64) -> Self {
        Self((ns as u32).wrapping_shl(4))
    }

    /// From the raw count of 1/16 ns.
    #[must_use]
    pub const fn from_raw(units: u32) -> Self {
        Self(units)
    }

    /// The raw count of 1/16 ns (modulo 2^32).
    #[must_use]
    pub const fn raw(self) -> u32 {
        self.0
    }

    /// `self + units` on the wrapping clock.
    #[must_use]
    pub const fn wrapping_add(self, units: u32) -> Self {
        Self(self.0.wrapping_add(units))
    }

    /// `self − earlier` in units, as a signed wrapping difference (valid within ±2^31 units).
    #[must_use]
    #[allow(clippy::cast_possible_wrap)] // the signed reading of a modular difference is the point
    pub const fn since(self, earlier: Instant) -> i32 {
        self.0.wrapping_sub(earlier.0) as i32
    }

    /// `self` is strictly later than `other` (wrap-aware).
    #[must_use]
    pub const fn is_after(self, other: Instant) -> bool {
        self.since(other) > 0
    }

    /// The later of the two (wrap-aware).
    #[must_use]
    pub const fn max(self, other: Instant) -> Instant {
        if other.is_after(self) { other } else { self }
    }
}

/// `a` is strictly later than `b` on the wrapping clock (raw words).
#[inline(always)]
#[allow(clippy::cast_possible_wrap)]
pub(crate) const fn after(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}
