//! The DOCA PCC fixtures recorded from the closed loop: `sim-host sim --record` of the two
//! `fixtures/scenarios/fixture_pcc_*.toml` scenarios with the fixed-point adapter in every NIC,
//! flow 0's event stream exactly as the adapter got it (fixtures/pcc/README.md). The scenario
//! text is compiled in and parsed under its repository path, so the stream is the same from any
//! working directory; the run is deterministic (seeded, no clock).

use cc_netsim::scenario::{self, ControllerKind};
use cc_replay::kinds::FixtureFile;
use std::path::Path;

/// `(scenario path in the repository, its text, fixture name)`.
const RECORDED: [(&str, &str, &str); 2] = [
    (
        "fixtures/scenarios/fixture_pcc_timely.toml",
        include_str!("../../../fixtures/scenarios/fixture_pcc_timely.toml"),
        "sim_timely.csv",
    ),
    (
        "fixtures/scenarios/fixture_pcc_hpcc.toml",
        include_str!("../../../fixtures/scenarios/fixture_pcc_hpcc.toml"),
        "sim_hpcc.csv",
    ),
];

/// Runs the recording scenarios; their flow-0 streams as fixtures.
///
/// # Panics
/// When a compiled-in scenario does not run or record (a defect of this repository, caught by
/// `fixtures --check` and the fixture test).
pub fn all() -> Vec<FixtureFile> {
    RECORDED
        .iter()
        .map(|&(path, text, name)| {
            let l =
                scenario::parse(Path::new(path), text).unwrap_or_else(|e| panic!("{path}: {e}"));
            let dir = tempfile::tempdir().expect("a temporary directory");
            let opts = cc_netsim::SimOpts {
                record: Some(dir.path().to_path_buf()),
                controller: Some(ControllerKind::Fixed),
                ..cc_netsim::SimOpts::default()
            };
            crate::sim::run_loaded(&l, &opts).unwrap_or_else(|e| panic!("{path}: {e}"));
            let file = dir.path().join(format!("{}_flow0.csv", l.sc.name));
            let bytes = std::fs::read(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            FixtureFile {
                name: name.to_string(),
                bytes,
            }
        })
        .collect()
}
