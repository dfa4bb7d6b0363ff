//! cats: f64 reference, trace format, lockstep replay and fixture generators.
//! (Scaffold: filled in by the cats work.)

use crate::fixtures::FixtureFile;
use crate::replay::ReplayOpts;
use crate::summary::Summary;
use crate::trace::InputError;
use std::path::Path;

/// The trace's header row, exactly.
pub const HEADER: &str = "t_ns,event,prio,bytes";

/// Replays one trace; one summary per trace (per flow for captures).
pub fn replay(path: &Path, _opts: &ReplayOpts) -> Result<Vec<Summary>, InputError> {
    Err(InputError::file(path, "cats replay is not built yet"))
}

/// The shipped fixtures of this kind.
pub fn fixtures() -> Vec<FixtureFile> {
    Vec::new()
}
