//! Deltas of counters that wrap at `2^BITS` (INT timestamps wrap at 2^24 ns, INT byte counters at
//! 2^20 units of 128 B, NIC clocks at 2^32 or 2^64).

/// `(new − old) mod 2^BITS`, for counters that are `BITS` wide (1 ≤ BITS ≤ 32).
///
/// The difference is taken modulo the counter width, so a single wrap between two readings gives
/// the small true delta, not a huge one. Two or more wraps between readings are undetectable by
/// construction (the caller must sample often enough). Values wider than `BITS` are masked first.
#[inline]
#[must_use]
pub const fn wrapping_delta<const BITS: u32>(new: u32, old: u32) -> u32 {
    // Wrapping: counter arithmetic is modular by definition.
    new.wrapping_sub(old) & mask::<BITS>()
}

/// The mask `2^BITS − 1` (all ones for `BITS ≥ 32`).
#[inline]
#[must_use]
pub const fn mask<const BITS: u32>() -> u32 {
    if BITS >= 32 {
        u32::MAX
    } else {
        (1u32 << BITS).wrapping_sub(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delta_without_wrap() {
        assert_eq!(wrapping_delta::<24>(1_000, 400), 600);
    }

    #[test]
    fn delta_across_the_24_bit_wrap_is_small() {
        // ts_prev = 2^24 − 100 ns, ts = 50 ns after the wrap: 150 ns elapsed.
        assert_eq!(wrapping_delta::<24>(50, (1 << 24) - 100), 150);
    }

    #[test]
    fn delta_across_the_20_bit_wrap_is_small() {
        assert_eq!(wrapping_delta::<20>(3, (1 << 20) - 2), 5);
    }

    #[test]
    fn full_width_counter() {
        assert_eq!(wrapping_delta::<32>(1, u32::MAX), 2);
        assert_eq!(mask::<32>(), u32::MAX);
    }
}
