//! hpcc: f64 reference, INT trace and capture formats, lockstep replay and fixture generators.
//!
//! * [`reference`]: the f64 reference of Algorithm 1 (from the paper and the conventions).
//! * [`replay`]: HPCC in the one replay driver ([`replay::Replay`], and [`replay::Flow`] for a
//!   flow fed ACK by ACK) and the CSV INT trace reader.
//! * [`capture`]: pcap/pcapng RoCEv2 captures (reader, and the writer of the shipped capture).
//! * [`generate`]: deterministic fixture generators.

pub mod capture;
pub mod generate;
pub mod reference;
pub mod replay;

pub use replay::Setup;

use crate::fixtures::FixtureFile;
use crate::replay::ReplayOpts;
use crate::summary::Summary;
use crate::trace::InputError;
use std::path::Path;

/// The trace's header row, exactly.
pub const HEADER: &str = "t_ns,ack_seq,snd_nxt,int";

/// Every key `replay hpcc` accepts (`# set` lines and `--set`).
pub const KEYS: [&str; 6] = [
    "nic_rate_bps",
    "base_rtt_ns",
    "eta",
    "max_stage",
    "w_ai_bytes",
    "min_rate_bps",
];

/// Replays one trace (CSV) or capture (pcap/pcapng); one summary per trace, or per flow for
/// captures.
pub fn replay(path: &Path, opts: &ReplayOpts) -> Result<Vec<Summary>, InputError> {
    if crate::replay::is_capture(path) {
        capture::replay_capture(path, opts)
    } else {
        replay::replay_csv(path, opts)
    }
}

/// The shipped fixtures of this kind: six INT traces, one capture (pcap and pcapng) and a
/// capture whose PSNs wrap (pcapng).
pub fn fixtures() -> Vec<FixtureFile> {
    let mut v: Vec<FixtureFile> = generate::scenarios()
        .into_iter()
        .map(|(name, desc, sc)| FixtureFile {
            name: name.to_string(),
            bytes: generate::to_csv(desc, &sc.params, &generate::simulate(&sc)),
        })
        .collect();
    let frames = capture::capture_frames();
    v.push(FixtureFile {
        name: "capture.pcap".into(),
        bytes: capture::write_pcap(&frames, 128),
    });
    v.push(FixtureFile {
        name: "capture.pcapng".into(),
        bytes: capture::write_pcapng(&frames, 128),
    });
    v.push(FixtureFile {
        name: "psn_wrap.pcapng".into(),
        bytes: capture::write_pcapng(&capture::psn_wrap_frames(), 96),
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
    let bytes = replay::hex_bytes(&cleaned)?;
    replay::pretty(&bytes)
}
