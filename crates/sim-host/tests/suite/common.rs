//! What the test modules share: the repository's root, the binary run with arguments, its
//! output as text, scenario text loaded as if it were a file in fixtures/scenarios, and the
//! binary run on scenario text written to a temporary file.

use cc_netsim::scenario;
use cc_replay::hpcc::generate::{HopSpec, Load, PathSpec, Scenario, simulate};
use cc_replay::hpcc::reference::RefParams;
use cc_trace::hpcc::AckRow;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository's root (the workspace).
pub(crate) fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .to_path_buf()
}

/// `sim-host ARGS`, run from the repository's root.
pub(crate) fn sim_host(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sim-host"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("run sim-host")
}

/// `acks` HPCC ACK rows of one flow over one 100 G hop at half load (the generator's), its
/// timestamps and path id apart per `seed`: material for captures.
pub(crate) fn ack_rows(seed: u64, acks: usize) -> Vec<AckRow> {
    simulate(&Scenario {
        seed,
        acks,
        params: RefParams::default(),
        pkt_bytes: 1000.0,
        paths: vec![(
            0,
            PathSpec {
                id: 0x100 + seed as u16,
                hops: vec![HopSpec {
                    code: 5,
                    load: Load::constant(0.5),
                    copies: 1.0,
                }],
            },
        )],
        ts0: 1_000_000 * seed,
        tx0: 0.0,
        dup_every: 0,
        bad_every: 0,
        seq0: 0,
        ties: None,
        queue_noise_bytes: 2_000.0,
    })
}

/// fixtures/scenarios, where the shipped scenarios and their workload CDFs are.
pub(crate) fn scenarios_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/scenarios")
}

/// A scenario from `text`, as if it were the file `name` in fixtures/scenarios (relative
/// paths in it, such as a workload CDF, resolve there).
pub(crate) fn load(name: &str, text: &str) -> scenario::Loaded {
    scenario::parse(&scenarios_dir().join(name), text).unwrap_or_else(|e| panic!("{e}"))
}

/// `sim-host sim FILE ARGS...` with `text` as FILE: the exit code, the standard error and
/// FILE's path (for the messages that must name it; the file is gone once this returns).
pub(crate) fn sim_exit(text: &str, args: &[&str]) -> (Option<i32>, String, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("scenario.toml");
    std::fs::write(&p, text).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_sim-host"))
        .arg("sim")
        .arg(&p)
        .args(args)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    (o.status.code(), err, p)
}

/// A command's standard output, as text.
pub(crate) fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A command's standard error, as text.
pub(crate) fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A command's standard output and standard error, as text.
pub(crate) fn text(o: &Output) -> (String, String) {
    (out(o), err(o))
}
