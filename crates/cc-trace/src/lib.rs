//! Trace files of every kind, as `sim-host replay` and `fw-bench` read them: the one streaming CSV
//! reader ([`TraceReader`]: header row, `#` comments, `# set KEY=VALUE` parameter lines, errors
//! that name the file, the line and what is wrong), the one grammar of parameter values
//! ([`Param`]), and per kind its header row, row type and parameter rules (both sides'
//! configuration from the same text): [`timely`], [`hpcc`], [`cats`], [`pacer`]; [`kinds`] lists
//! them with every key's default, unit and limits.
//!
//! The crate knows nothing of plots, captures or thread pools: a firmware bench that wants the
//! configurations `sim-host replay` runs needs only this.

mod reader;

pub mod cats;
pub mod hpcc;
pub mod kinds;
pub mod pacer;
pub mod timely;

pub use reader::*;

/// A ratio as text: a decimal when the denominator is a power of ten (`0.875`), else `a/b`.
pub fn ratio_text(num: u64, den: u64) -> String {
    let mut d = den;
    let mut places = 0usize;
    while d > 1 && d.is_multiple_of(10) {
        d /= 10;
        places += 1;
    }
    if d == 1 && den > 0 {
        if places == 0 {
            return num.to_string();
        }
        let s = format!("{:0>w$}", num, w = places + 1);
        let (i, f) = s.split_at(s.len() - places);
        let f = f.trim_end_matches('0');
        if f.is_empty() {
            i.to_string()
        } else {
            format!("{i}.{f}")
        }
    } else {
        format!("{num}/{den}")
    }
}
