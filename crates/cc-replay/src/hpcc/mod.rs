//! hpcc: f64 reference, INT trace and capture formats, lockstep replay and fixture generators.
//!
//! * [`reference`](mod@reference): the f64 reference of HPCC Alg. 1 (from the paper, with the
//!   conventions of docs/hpcc.md § 2).
//! * [`params`]: both sides' configuration from `# set` lines and `--set`.
//! * [`lockstep`]: HPCC in the one replay driver ([`lockstep::Replay`], and [`lockstep::Flow`]
//!   for a flow fed ACK by ACK).
//! * this module: the CSV INT trace's row ([`Row`]) and the INT block's text forms.
//! * [`capture`]: RoCEv2 captures replayed, flow by flow (`cc_trace::capture` reads and pairs them).
//! * `generate`: deterministic fixture generators.
//!
//! The same files as every algorithm folder (reference, params, lockstep, generate), plus the
//! capture reader.

pub mod capture;
#[cfg(feature = "generate")]
pub mod generate;
pub mod lockstep;
pub use cc_reference::hpcc as reference;
pub use cc_trace::hpcc::{HEADER, INFO, Row, hex_bytes, params};

pub use lockstep::{Flow, Replay, quantise};
pub use params::Setup;

use crate::opts::ReplayOpts;
use crate::summary::Summary;
use cc_trace::InputError;
use std::path::Path;

/// hpcc in the host's registry of trace kinds ([`crate::kinds`]).
pub static ENTRY: crate::kinds::KindEntry = crate::kinds::KindEntry {
    info: &INFO,
    replay,
    #[cfg(feature = "generate")]
    fixtures,
};

/// hpcc as a [`Kind`](crate::kinds::Kind).
pub const KIND: crate::kinds::Kind = crate::kinds::Kind(&ENTRY);

/// Replays one trace (CSV) or capture (pcap/pcapng); one summary per trace, or per flow for
/// captures.
pub fn replay(path: &Path, opts: &ReplayOpts) -> Result<Vec<Summary>, InputError> {
    if cc_trace::is_capture(path) {
        capture::replay_capture(path, opts)
    } else {
        crate::driver::replay_csv::<Replay>(path, opts)
    }
}

/// The shipped fixtures of this kind: six INT traces, one capture (pcap and pcapng), a capture
/// of RoCE conversations with each end's own QPN and a capture whose PSNs wrap (pcapng).
#[cfg(feature = "generate")]
pub fn fixtures() -> Vec<crate::kinds::FixtureFile> {
    let mut v: Vec<crate::kinds::FixtureFile> = generate::scenarios()
        .into_iter()
        .map(|(name, desc, sc)| crate::kinds::FixtureFile {
            name: name.to_string(),
            bytes: generate::to_csv(desc, &sc.params, &generate::simulate(&sc)),
        })
        .collect();
    let frames = generate::capture::capture_frames();
    v.push(crate::kinds::FixtureFile {
        name: "capture.pcap".into(),
        bytes: cc_trace::capture::write_pcap(&frames, 128),
    });
    v.push(crate::kinds::FixtureFile {
        name: "capture.pcapng".into(),
        bytes: cc_trace::capture::write_pcapng(&frames, 128),
    });
    v.push(crate::kinds::FixtureFile {
        name: "roce_pairs.pcapng".into(),
        bytes: cc_trace::capture::write_pcapng(&generate::capture::roce_pairs_frames(), 128),
    });
    v.push(crate::kinds::FixtureFile {
        name: "psn_wrap.pcapng".into(),
        bytes: cc_trace::capture::write_pcapng(&generate::capture::psn_wrap_frames(), 96),
    });
    v
}

/// `sim-host int decode HEX`: a readable dump of one INT block. Spaces, colons and a `0x` prefix
/// are ignored (`0X` too).
pub fn int_decode(hex: &str) -> Result<String, String> {
    let cleaned: String = hex
        .trim()
        .trim_start_matches("0x")
        .trim_start_matches("0X")
        .chars()
        .filter(|c| !c.is_whitespace() && *c != ':')
        .collect();
    let bytes = hex_bytes(&cleaned)?;
    pretty(&bytes)
}

/// A readable dump of one INT block (`sim-host int decode`).
pub fn pretty(bytes: &[u8]) -> Result<String, String> {
    use std::fmt::Write as _;
    let view = hpcc_cc::IntView::<15>::parse(bytes).map_err(|e| e.to_string())?;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "INT block, {} bytes: nhop {}, path_id 0x{:03x} ({})",
        bytes.len(),
        view.nhop(),
        view.path_id(),
        view.path_id()
    );
    if usize::from(view.nhop()) > hpcc_cc::DEFAULT_MAX_HOPS {
        let _ = writeln!(
            s,
            "  note: {} hops is above the firmware default maximum of {}; on_ack would reject it",
            view.nhop(),
            hpcc_cc::DEFAULT_MAX_HOPS
        );
    }
    for (i, h) in view.hops().enumerate() {
        let _ = writeln!(
            s,
            "  hop {i}: B {} ({} Gb/s)  ts {} ns (0x{:06x})  tx_bytes {} × 128 B = {} B (mod 2^27)  qlen {} × 80 B = {} B",
            h.speed.code(),
            h.speed.bps() / 1_000_000_000,
            h.ts_ns,
            h.ts_ns,
            h.tx_units,
            u64::from(h.tx_units) * 128,
            h.qlen_units,
            u64::from(h.qlen_units) * 80
        );
    }
    // Cross-check with the reference decoder when within its limits.
    if usize::from(view.nhop()) <= reference::MAX_HOPS {
        debug_assert!(reference::decode_int(bytes).is_ok());
    }
    Ok(s)
}
