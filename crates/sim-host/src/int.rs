//! `sim-host int`: in-band network telemetry (HPCC) helpers.

use clap::Subcommand;

/// `sim-host int`'s subcommands.
#[derive(Subcommand)]
pub enum IntCmd {
    /// Pretty-print one INT block given as hex (as on the wire, after the UDP header).
    Decode {
        /// The INT block, hex (spaces, colons and a 0x prefix are ignored).
        hex: String,
    },
}

/// `sim-host int decode HEX`: the block's fields as text, or exit 2 naming what is wrong.
pub fn cmd(c: IntCmd) -> i32 {
    let IntCmd::Decode { hex } = c;
    match cc_replay::hpcc::int_decode(&hex) {
        Ok(text) => {
            cc_output::out!("{text}");
            0
        }
        Err(e) => {
            eprintln!("error: {e}");
            crate::replay::EXIT_INPUT
        }
    }
}
