//! `sim-host`: replays recorded RTT, INT and event traces through the fixed-point firmware crates
//! and independent f64 references written from the papers, side by side, and says per event and
//! in total whether they agree.
//!
//! Data flows one way: a trace reader yields events → the replay driver feeds each event to the
//! fixed-point crate (through its public API, exactly as firmware would) and to the f64
//! reference → per-event pairs are compared → the report (text, JSON, CSV, SVG).
//!
//! The crate's documentation is for its developers (`cargo doc --document-private-items`):
//! module pages link to the private items they describe.
#![allow(rustdoc::private_intra_doc_links)]

/// `print!` that never panics: a closed pipe (`sim-host … | head`) or a full disk ends the
/// output instead of aborting the process with "Broken pipe", and is remembered
/// ([`output::stdout_failed`]) so the command exits 2 instead of reporting success.
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let mut o = std::io::stdout().lock();
        if write!(o, $($arg)*).and_then(|()| o.flush()).is_err() {
            $crate::output::note_stdout_error();
        }
    }};
}

/// `println!` that never panics (see [`out!`]).
#[macro_export]
macro_rules! outln {
    () => { $crate::out!("\n") };
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let mut o = std::io::stdout().lock();
        if writeln!(o, $($arg)*).and_then(|()| o.flush()).is_err() {
            $crate::output::note_stdout_error();
        }
    }};
}

pub mod cats;
pub mod driver;
pub mod fixtures;
pub mod hpcc;
pub mod kind;
pub mod kinds;
pub mod opts;
pub mod output;
pub mod pacer;
pub mod pcc;
pub mod plot;
pub mod replay;
pub mod sim;
pub mod summary;
pub mod timely;
/// The trace reader, parameters and the registry of trace kinds live in `cc-trace` (fw-bench
/// uses them too); `crate::trace` names them here.
pub mod trace {
    pub use cc_trace::*;
}
