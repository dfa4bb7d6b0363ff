//! hpcc: f64 reference, trace format, lockstep replay and fixture generators.
//! (Scaffold: filled in by the hpcc work.)

use crate::fixtures::FixtureFile;
use crate::replay::ReplayOpts;
use crate::summary::Summary;
use crate::trace::InputError;
use std::path::Path;

/// The trace's header row, exactly.
pub const HEADER: &str = "t_ns,ack_seq,snd_nxt,int";

/// Replays one trace; one summary per trace (per flow for captures).
pub fn replay(path: &Path, _opts: &ReplayOpts) -> Result<Vec<Summary>, InputError> {
    Err(InputError::file(path, "hpcc replay is not built yet"))
}

/// The shipped fixtures of this kind.
pub fn fixtures() -> Vec<FixtureFile> {
    Vec::new()
}

/// `sim-host int decode HEX`: a readable dump of one INT block.
pub fn int_decode(hex: &str) -> Result<String, String> {
    Err(format!(
        "INT decoding is not built yet ({} hex chars given)",
        hex.len()
    ))
}
