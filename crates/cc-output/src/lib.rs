//! `cc-output`: what every host tool of the workspace writes, in one place.
//!
//! * [`output`]: files written to a temporary beside them and renamed into place only when
//!   complete, outputs refused when they name an input, and standard output that never panics
//!   ([`out!`], [`outln!`]) and remembers a failed write so a command can exit 2.
//! * [`plot`]: the SVG plots (plotters' SVG backend) with a shared time axis, min/max envelopes
//!   and legends above the data.
//!
//! The replay verifier (`cc-replay`), the simulator (`cc-netsim`) and the `sim-host` binary use
//! it; the firmware crates know nothing of it.

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

pub mod output;
pub mod plot;
