//! Trace files of every kind, as `sim-host replay` and `fw-bench` read them: the one streaming CSV
//! reader ([`TraceReader`]: header row, `#` comments, `# set KEY=VALUE` parameter lines, errors
//! that name the file, the line and what is wrong), the one grammar of parameter values
//! ([`Param`]), and per kind its header row, row type and parameter rules (both sides'
//! configuration from the same text): [`timely`], [`hpcc`], [`cats`], [`pacer`], [`pcc`];
//! [`kinds`] lists them with every key's default, unit and limits.
//!
//! It also reads and writes RoCEv2 captures ([`capture`]: pcap and pcapng, the pairing of ACK
//! and data streams, PSN extension, and the writer of the shipped captures and `sim --record`).
//!
//! The crate knows nothing of plots or thread pools: a firmware bench that wants the
//! configurations `sim-host replay` runs needs only this.

mod error;
mod param;
mod plain;
mod reader;
mod split;

pub mod capture;
pub mod cats;
pub mod hpcc;
pub mod kinds;
pub mod pacer;
pub mod pcc;
pub mod timely;

pub use error::InputError;
pub use param::{Param, comment_param, merged_params, num_max, param_unset, parse_cli_set};
pub use reader::{TraceReader, sniff_header};

use std::path::Path;

/// A pcap or pcapng capture (by extension, in any case: `.pcap`, `.pcapng`, `.cap`).
pub fn is_capture(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| matches!(e.to_ascii_lowercase().as_str(), "pcap" | "pcapng" | "cap"))
}

/// A ratio as text, the same for equal ratios: an exact decimal when there is one (`7/8` and
/// `875/1000` are `0.875`, `4/5` is `0.8`), else the reduced fraction (`1/3`).
pub fn ratio_text(num: u64, den: u64) -> String {
    if den == 0 {
        return format!("{num}/0");
    }
    let (mut a, mut b) = (num, den);
    while b != 0 {
        (a, b) = (b, a % b);
    }
    let (num, den) = (num / a, den / a);
    // The fewest decimal places that make the ratio exact (10^k a multiple of den), if any.
    let mut scale: u128 = 1;
    for places in 0..=18usize {
        if scale.is_multiple_of(u128::from(den)) {
            let digits = u128::from(num) * (scale / u128::from(den));
            if places == 0 {
                return digits.to_string();
            }
            let s = format!("{digits:0>w$}", w = places + 1);
            let (i, f) = s.split_at(s.len() - places);
            return format!("{i}.{f}");
        }
        scale *= 10;
    }
    format!("{num}/{den}")
}

#[cfg(test)]
mod tests {
    use super::ratio_text;

    #[test]
    fn equal_ratios_read_the_same() {
        assert_eq!(ratio_text(7, 8), "0.875");
        assert_eq!(ratio_text(875, 1000), "0.875");
        assert_eq!(ratio_text(8, 10), "0.8");
        assert_eq!(ratio_text(19, 20), "0.95");
        assert_eq!(ratio_text(1, 1), "1");
        assert_eq!(ratio_text(1, 16), "0.0625");
        assert_eq!(ratio_text(1, 3), "1/3");
        assert_eq!(ratio_text(2, 6), "1/3");
    }
}
