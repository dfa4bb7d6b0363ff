//! The INT block on the wire (HPCC §4.1, Figure 7): a zero-copy view over `&[u8]` and an encoder.
//!
//! Layout (network byte order, most significant bit first), right after the UDP header and before
//! the InfiniBand BTH:
//!
//! ```text
//!  0               1               2 ...
//! +-------+-----------------------+
//! | nhop  |        path_id        |   2 bytes: nhop (4 bits) | path_id (12 bits)
//! +-------+-----------------------+---------------------------------------------+
//! |  B    |   ts (ns mod 2^24)    |  tx_bytes (128 B units mod 2^20) |  qlen (80 B units) |
//! | 4 b   |        24 b           |             20 b                 |       16 b         |
//! +-------+-----------------------+---------------------------------------------+
//!   ... nhop hops of 8 bytes each
//! ```
//!
//! Speed codes `B`: 1 = 10G, 2 = 25G, 3 = 40G, 4 = 50G, 5 = 100G, 6 = 200G, 7 = 400G, 8 = 800G,
//! 9 = 1.6T; 0 and 10–15 are reserved and rejected.
//!
//! Nothing here panics or reads out of bounds: every access goes through `get`/`chunks_exact`.

/// The default compile-time maximum number of hops (data-centre paths are ≤ 5 hops, paper §4.1).
pub const DEFAULT_MAX_HOPS: usize = 5;

/// Bytes of the INT header (`nhop | path_id`).
pub const HEADER_BYTES: usize = 2;
/// Bytes per hop.
pub const HOP_BYTES: usize = 8;

/// `ts` is 24 bits of nanoseconds.
pub const TS_BITS: u32 = 24;
/// `tx_bytes` is 20 bits of 128-byte units.
pub const TX_BITS: u32 = 20;
/// One `tx_bytes` unit, bytes.
pub const TX_UNIT_BYTES: u32 = 128;
/// One `qlen` unit, bytes.
pub const QLEN_UNIT_BYTES: u32 = 80;

/// A link speed as carried in the 4-bit `B` field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[repr(u8)]
pub enum Speed {
    /// 10 Gb/s (code 1).
    G10 = 1,
    /// 25 Gb/s (code 2).
    G25 = 2,
    /// 40 Gb/s (code 3).
    G40 = 3,
    /// 50 Gb/s (code 4).
    G50 = 4,
    /// 100 Gb/s (code 5).
    G100 = 5,
    /// 200 Gb/s (code 6).
    G200 = 6,
    /// 400 Gb/s (code 7).
    G400 = 7,
    /// 800 Gb/s (code 8).
    G800 = 8,
    /// 1.6 Tb/s (code 9).
    T1_6 = 9,
}

/// Link rate in bit/s per speed code (index = code; 0 is reserved).
pub const SPEED_BPS: [u64; 10] = [
    0,
    10_000_000_000,
    25_000_000_000,
    40_000_000_000,
    50_000_000_000,
    100_000_000_000,
    200_000_000_000,
    400_000_000_000,
    800_000_000_000,
    1_600_000_000_000,
];

impl Speed {
    /// Every speed, in code order.
    pub const ALL: [Speed; 9] = [
        Speed::G10,
        Speed::G25,
        Speed::G40,
        Speed::G50,
        Speed::G100,
        Speed::G200,
        Speed::G400,
        Speed::G800,
        Speed::T1_6,
    ];

    /// The speed for a 4-bit code; `None` for the reserved codes 0 and 10–15.
    #[must_use]
    pub const fn from_code(code: u8) -> Option<Speed> {
        Some(match code {
            1 => Speed::G10,
            2 => Speed::G25,
            3 => Speed::G40,
            4 => Speed::G50,
            5 => Speed::G100,
            6 => Speed::G200,
            7 => Speed::G400,
            8 => Speed::G800,
            9 => Speed::T1_6,
            _ => return None,
        })
    }

    /// The 4-bit code.
    #[must_use]
    pub const fn code(self) -> u8 {
        self as u8
    }

    /// Link rate, bit/s.
    #[must_use]
    pub const fn bps(self) -> u64 {
        match self {
            Speed::G10 => 10_000_000_000,
            Speed::G25 => 25_000_000_000,
            Speed::G40 => 40_000_000_000,
            Speed::G50 => 50_000_000_000,
            Speed::G100 => 100_000_000_000,
            Speed::G200 => 200_000_000_000,
            Speed::G400 => 400_000_000_000,
            Speed::G800 => 800_000_000_000,
            Speed::T1_6 => 1_600_000_000_000,
        }
    }
}

/// Why an INT block was rejected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum IntError {
    /// Shorter than the 2-byte header.
    TooShort {
        /// Bytes given.
        len: usize,
    },
    /// `nhop` is above the compile-time maximum.
    TooManyHops {
        /// `nhop` in the header.
        nhop: u8,
        /// The maximum this view accepts.
        max: usize,
    },
    /// The length is not `2 + 8·nhop`.
    LengthMismatch {
        /// Bytes given.
        len: usize,
        /// `2 + 8·nhop`.
        expected: usize,
    },
    /// A hop carries a reserved speed code (0 or 10–15).
    ReservedSpeed {
        /// 0-based hop index.
        hop: u8,
        /// The code.
        code: u8,
    },
}

impl core::fmt::Display for IntError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            IntError::TooShort { len } => {
                write!(f, "INT block too short: {len} bytes, the header alone is 2")
            }
            IntError::TooManyHops { nhop, max } => {
                write!(f, "INT block has nhop = {nhop}, above the maximum of {max}")
            }
            IntError::LengthMismatch { len, expected } => write!(
                f,
                "INT block is {len} bytes, but 2 + 8·nhop = {expected} (nhop from the header)"
            ),
            IntError::ReservedSpeed { hop, code } => write!(
                f,
                "INT hop {hop} has reserved speed code {code} (valid: 1..=9 = 10G..1.6T)"
            ),
        }
    }
}

/// One hop's telemetry, decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Hop {
    /// Egress link speed.
    pub speed: Speed,
    /// Egress timestamp, ns modulo 2^24 (only the low 24 bits are meaningful).
    pub ts_ns: u32,
    /// Cumulative transmitted bytes in 128-byte units, modulo 2^20.
    pub tx_units: u32,
    /// Queue length in 80-byte units.
    pub qlen_units: u16,
}

impl Hop {
    /// The hop as the 64-bit word it is on the wire (big-endian decoded): `B << 60 | ts << 36 |
    /// tx << 16 | qlen`. `ts` and `tx` are masked to their widths.
    #[must_use]
    pub const fn to_word(self) -> u64 {
        ((self.speed.code() as u64) << 60)
            | (((self.ts_ns & 0xFF_FFFF) as u64) << 36)
            | (((self.tx_units & 0xF_FFFF) as u64) << 16)
            | self.qlen_units as u64
    }

    /// Decodes a hop word; `None` for a reserved speed code.
    #[must_use]
    pub const fn from_word(w: u64) -> Option<Hop> {
        match Speed::from_code(word_code(w)) {
            Some(speed) => Some(Hop {
                speed,
                ts_ns: word_ts(w),
                tx_units: word_tx(w),
                qlen_units: word_qlen(w),
            }),
            None => None,
        }
    }
}

/// Speed code of a hop word (top 4 bits).
#[inline]
#[must_use]
#[allow(clippy::cast_possible_truncation)] // 4 bits
pub const fn word_code(w: u64) -> u8 {
    (w >> 60) as u8
}
/// `ts` of a hop word (24 bits).
#[inline]
#[must_use]
#[allow(clippy::cast_possible_truncation)] // masked to 24 bits
pub const fn word_ts(w: u64) -> u32 {
    ((w >> 36) & 0xFF_FFFF) as u32
}
/// `tx_bytes` of a hop word (20 bits, 128-byte units).
#[inline]
#[must_use]
#[allow(clippy::cast_possible_truncation)] // masked to 20 bits
pub const fn word_tx(w: u64) -> u32 {
    ((w >> 16) & 0xF_FFFF) as u32
}
/// `qlen` of a hop word (16 bits, 80-byte units).
#[inline]
#[must_use]
#[allow(clippy::cast_possible_truncation)] // masked to 16 bits
pub const fn word_qlen(w: u64) -> u16 {
    (w & 0xFFFF) as u16
}

/// Bit `c` set for every valid speed code `c` (1 ..= 9).
const VALID_CODES: u32 = 0x3FE;

/// Whether `bytes` is one valid INT block of at most `MAX_HOPS` hops: the header is present,
/// `nhop ≤ MAX_HOPS`, the length is `2 + 8·nhop` and every hop's speed code is in `1 ..= 9`.
/// The one acceptance rule: [`IntView::parse`] and [`crate::State::on_ack`] both use it (the
/// per-ACK path without error details; `parse` works out which check failed only on a refusal,
/// out of line).
#[inline(always)]
#[must_use]
pub fn accepts<const MAX_HOPS: usize>(bytes: &[u8]) -> bool {
    match bytes {
        [b0, _, body @ ..] => {
            let nhop = usize::from(b0 >> 4);
            nhop <= MAX_HOPS
                && body.len() == nhop.wrapping_mul(HOP_BYTES)
                // Bit 0 survives only if every code's bit is set (no early exit: a shorter
                // loop; the length check above bounds it to MAX_HOPS hops).
                && body
                    .iter()
                    .step_by(HOP_BYTES)
                    .fold(1, |ok, &b| ok & (VALID_CODES >> (b >> 4)))
                    != 0
        }
        _ => false,
    }
}

/// Why [`accepts`] refused `bytes`: the first failing check in the order too short for the
/// header, `nhop > MAX_HOPS`, length not `2 + 8·nhop`, a reserved speed code (the first such
/// hop).
#[cold]
#[inline(never)]
fn rejection<const MAX_HOPS: usize>(bytes: &[u8]) -> IntError {
    let Some(&b0) = bytes.first().filter(|_| bytes.len() >= HEADER_BYTES) else {
        return IntError::TooShort { len: bytes.len() };
    };
    let nhop = b0 >> 4;
    if usize::from(nhop) > MAX_HOPS {
        return IntError::TooManyHops {
            nhop,
            max: MAX_HOPS,
        };
    }
    // nhop ≤ 15, so this is at most 122.
    let expected = HEADER_BYTES.saturating_add(HOP_BYTES.saturating_mul(usize::from(nhop)));
    if bytes.len() != expected {
        return IntError::LengthMismatch {
            len: bytes.len(),
            expected,
        };
    }
    let body = bytes.get(HEADER_BYTES..).unwrap_or(&[]);
    let mut hop = 0u8;
    for chunk in body.chunks_exact(HOP_BYTES) {
        let code = chunk.first().copied().unwrap_or(0) >> 4;
        if Speed::from_code(code).is_none() {
            return IntError::ReservedSpeed { hop, code };
        }
        hop = hop.wrapping_add(1); // ≤ 15 hops
    }
    // Unreachable when `accepts` refused; a valid block has no error to name.
    IntError::TooShort { len: bytes.len() }
}

/// A validated INT block borrowed from a packet: at most `MAX_HOPS` hops, length exactly
/// `2 + 8·nhop`, every speed code valid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IntView<'a, const MAX_HOPS: usize = DEFAULT_MAX_HOPS> {
    bytes: &'a [u8],
}

impl<'a, const MAX_HOPS: usize> IntView<'a, MAX_HOPS> {
    /// Validates `bytes` (exactly one INT block) and borrows it.
    ///
    /// # Errors
    /// [`IntError`] in this order of checks: too short for the header, `nhop > MAX_HOPS`, length
    /// not `2 + 8·nhop`, a reserved speed code (the first such hop).
    pub fn parse(bytes: &'a [u8]) -> Result<Self, IntError> {
        if accepts::<MAX_HOPS>(bytes) {
            Ok(Self { bytes })
        } else {
            Err(rejection::<MAX_HOPS>(bytes))
        }
    }

    /// The 16-bit header `nhop << 12 | path_id`.
    #[inline]
    #[must_use]
    pub fn header(&self) -> u16 {
        match (self.bytes.first(), self.bytes.get(1)) {
            (Some(&a), Some(&b)) => u16::from_be_bytes([a, b]),
            _ => 0,
        }
    }

    /// Number of hops.
    #[inline]
    #[must_use]
    #[allow(clippy::cast_possible_truncation)] // 4 bits
    pub fn nhop(&self) -> u8 {
        (self.header() >> 12) as u8
    }

    /// The path id (XOR of the switch ids on the path, paper §4.1), 12 bits.
    #[inline]
    #[must_use]
    pub fn path_id(&self) -> u16 {
        self.header() & 0x0FFF
    }

    /// The hop words (big-endian decoded 64-bit words), in path order.
    pub fn hop_words(&self) -> impl Iterator<Item = u64> + 'a {
        self.bytes
            .get(HEADER_BYTES..)
            .unwrap_or(&[])
            .chunks_exact(HOP_BYTES)
            .map(|c| {
                let mut b = [0u8; 8];
                b.copy_from_slice(c.get(..8).unwrap_or(&[0; 8]));
                u64::from_be_bytes(b)
            })
    }

    /// The decoded hops, in path order.
    pub fn hops(&self) -> impl Iterator<Item = Hop> + 'a {
        self.hop_words().filter_map(Hop::from_word)
    }

    /// Hop `i` (0-based), if present.
    #[must_use]
    pub fn hop(&self, i: usize) -> Option<Hop> {
        self.hops().nth(i)
    }

    /// The bytes of the block.
    #[must_use]
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }
}

/// Why an INT block could not be encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum EncodeError {
    /// `path_id` does not fit 12 bits.
    PathIdTooWide {
        /// The value given.
        path_id: u16,
    },
    /// More hops than the 4-bit `nhop` (15) or the caller's maximum.
    TooManyHops {
        /// Hops given.
        hops: usize,
        /// The maximum.
        max: usize,
    },
    /// A field does not fit its width (`ts` 24 bits, `tx_units` 20 bits).
    FieldTooWide {
        /// 0-based hop.
        hop: usize,
    },
    /// The output buffer is shorter than `2 + 8·hops`.
    BufferTooShort {
        /// Bytes needed.
        needed: usize,
        /// Bytes available.
        len: usize,
    },
}

/// Encodes `hops` with `path_id` into `out` (at most `MAX_HOPS` hops); returns the bytes written
/// (`2 + 8·hops`).
///
/// # Errors
/// [`EncodeError`] if a field does not fit its width or `out` is too short.
pub fn encode<const MAX_HOPS: usize>(
    path_id: u16,
    hops: &[Hop],
    out: &mut [u8],
) -> Result<usize, EncodeError> {
    if path_id > 0x0FFF {
        return Err(EncodeError::PathIdTooWide { path_id });
    }
    let max = if MAX_HOPS < 15 { MAX_HOPS } else { 15 };
    if hops.len() > max {
        return Err(EncodeError::TooManyHops {
            hops: hops.len(),
            max,
        });
    }
    let needed = HEADER_BYTES.saturating_add(HOP_BYTES.saturating_mul(hops.len()));
    let Some(dst) = out.get_mut(..needed) else {
        return Err(EncodeError::BufferTooShort {
            needed,
            len: out.len(),
        });
    };
    #[allow(clippy::cast_possible_truncation)] // hops.len() ≤ 15
    let header = ((hops.len() as u16) << 12) | path_id;
    let (head, body) = dst.split_at_mut(HEADER_BYTES);
    head.copy_from_slice(&header.to_be_bytes());
    for (i, (h, chunk)) in hops
        .iter()
        .zip(body.chunks_exact_mut(HOP_BYTES))
        .enumerate()
    {
        if h.ts_ns > 0xFF_FFFF || h.tx_units > 0xF_FFFF {
            return Err(EncodeError::FieldTooWide { hop: i });
        }
        chunk.copy_from_slice(&h.to_word().to_be_bytes());
    }
    Ok(needed)
}

#[cfg(test)]
#[allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]
mod tests {
    use super::*;

    fn hop(code: Speed, ts: u32, tx: u32, q: u16) -> Hop {
        Hop {
            speed: code,
            ts_ns: ts,
            tx_units: tx,
            qlen_units: q,
        }
    }

    #[test]
    fn round_trip_and_bit_layout() {
        let hops = [
            hop(Speed::G100, 0xABCDEF, 0x12345, 0x6789),
            hop(Speed::T1_6, 1, 0xFFFFF, 0),
        ];
        let mut buf = [0u8; 18];
        assert_eq!(encode::<5>(0x0ABC, &hops, &mut buf), Ok(18));
        // nhop 2 | path 0xABC ; hop 0: 5 | ABCDEF | 12345 | 6789
        assert_eq!(
            &buf[..10],
            &[0x2A, 0xBC, 0x5A, 0xBC, 0xDE, 0xF1, 0x23, 0x45, 0x67, 0x89]
        );
        let v = IntView::<5>::parse(&buf).unwrap();
        assert_eq!((v.nhop(), v.path_id()), (2, 0xABC));
        let got: [Hop; 2] = [v.hop(0).unwrap(), v.hop(1).unwrap()];
        assert_eq!(got, hops);
        assert_eq!(v.hop(2), None);
    }

    #[test]
    fn too_short() {
        assert_eq!(IntView::<5>::parse(&[]), Err(IntError::TooShort { len: 0 }));
        assert_eq!(
            IntView::<5>::parse(&[0x10]),
            Err(IntError::TooShort { len: 1 })
        );
    }

    #[test]
    fn length_not_2_plus_8_nhop() {
        // nhop 1 but no hop bytes; and one byte too many.
        assert_eq!(
            IntView::<5>::parse(&[0x10, 0]),
            Err(IntError::LengthMismatch {
                len: 2,
                expected: 10
            })
        );
        let mut b = [0x50u8; 11];
        b[0] = 0x10;
        assert_eq!(
            IntView::<5>::parse(&b),
            Err(IntError::LengthMismatch {
                len: 11,
                expected: 10
            })
        );
        // nhop 0 with trailing bytes.
        assert_eq!(
            IntView::<5>::parse(&[0x00, 0x01, 0x00]),
            Err(IntError::LengthMismatch {
                len: 3,
                expected: 2
            })
        );
    }

    #[test]
    fn too_many_hops_for_the_const_generic() {
        let mut b = [0x50u8; 2 + 8 * 6];
        b[0] = 0x60;
        assert_eq!(
            IntView::<5>::parse(&b),
            Err(IntError::TooManyHops { nhop: 6, max: 5 })
        );
        assert!(IntView::<6>::parse(&b).is_ok());
        let b15 = [0xF0u8; 2 + 8 * 15];
        assert!(matches!(
            IntView::<5>::parse(&b15),
            Err(IntError::TooManyHops { nhop: 15, .. })
        ));
    }

    #[test]
    fn reserved_speed_codes() {
        for code in [0u8, 10, 11, 12, 13, 14, 15] {
            let mut b = [0u8; 18];
            b[0] = 0x20;
            b[2] = 0x50; // hop 0 valid
            b[10] = code << 4;
            assert_eq!(
                IntView::<5>::parse(&b),
                Err(IntError::ReservedSpeed { hop: 1, code }),
                "code {code}"
            );
        }
        for s in Speed::ALL {
            assert_eq!(Speed::from_code(s.code()), Some(s));
            assert_eq!(SPEED_BPS[usize::from(s.code())], s.bps());
        }
    }

    #[test]
    fn encoder_errors() {
        let h = hop(Speed::G10, 0, 0, 0);
        let mut buf = [0u8; 64];
        assert_eq!(
            encode::<5>(0x1000, &[h], &mut buf),
            Err(EncodeError::PathIdTooWide { path_id: 0x1000 })
        );
        assert_eq!(
            encode::<5>(0, &[h; 6], &mut buf),
            Err(EncodeError::TooManyHops { hops: 6, max: 5 })
        );
        assert_eq!(
            encode::<5>(0, &[hop(Speed::G10, 1 << 24, 0, 0)], &mut buf),
            Err(EncodeError::FieldTooWide { hop: 0 })
        );
        assert_eq!(
            encode::<5>(0, &[hop(Speed::G10, 0, 1 << 20, 0)], &mut buf),
            Err(EncodeError::FieldTooWide { hop: 0 })
        );
        assert_eq!(
            encode::<5>(0, &[h, h], &mut buf[..10]),
            Err(EncodeError::BufferTooShort {
                needed: 18,
                len: 10
            })
        );
        assert_eq!(encode::<5>(7, &[], &mut buf), Ok(2));
    }

    proptest::proptest! {
        #[test]
        fn parse_never_panics(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..130)) {
            if let Ok(v) = IntView::<5>::parse(&bytes) {
                proptest::prop_assert_eq!(v.hops().count(), usize::from(v.nhop()));
                proptest::prop_assert_eq!(bytes.len(), 2 + 8 * usize::from(v.nhop()));
            }
        }
    }
}
