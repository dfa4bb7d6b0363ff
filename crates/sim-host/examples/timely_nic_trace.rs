//! Writes a NIC-like TIMELY trace of any length to stdout (the generator of the shipped
//! `fixtures/timely/nic_*.csv`, `cc_replay::timely::generate::NicTrace`), streaming, so a
//! 10-million-event trace needs no memory:
//!
//! ```sh
//! cargo run --release -p sim-host --example timely_nic_trace -- 10000000 100000000000 7 > nic10m.csv
//! cargo run --release -p sim-host -- replay timely nic10m.csv
//! ```
//!
//! Arguments: events, line rate in b/s, seed (all optional: 10 000 000, 100 Gb/s, 1).

use cc_replay::timely::generate::{NicKnobs, NicTrace};
use std::io::{BufWriter, Write};

fn main() -> std::io::Result<()> {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .map(|a| match a.replace('_', "").parse::<f64>() {
            Ok(x) if x >= 1.0 && x.fract() == 0.0 => x as u64,
            _ => {
                eprintln!("usage: timely_nic_trace [EVENTS [LINE_RATE_BPS [SEED]]]: {a:?} is not a positive integer");
                std::process::exit(2);
            }
        })
        .collect();
    let events = args.first().copied().unwrap_or(10_000_000);
    let line = args.get(1).copied().unwrap_or(100_000_000_000);
    let seed = args.get(2).copied().unwrap_or(1);
    let k = NicKnobs::mixed(line);
    let mut w = BufWriter::new(std::io::stdout().lock());
    let about = format!(
        "NIC-like TIMELY trace: {events} completions at {line} b/s, seed {seed} (NicKnobs::mixed)"
    );
    w.write_all(NicTrace::preamble(&k, &[&about]).as_bytes())?;
    for (s, c, b) in NicTrace::new(k, u128::from(seed)).take(events as usize) {
        writeln!(w, "{s},{c},{b}")?;
    }
    w.flush()
}
