//! The top-level keys of the run: `name`, `duration_ns`, the packet and segment sizes, the
//! NIC pacer, the send jitter, `ack_every`.

use crate::scenario::{ControllerKind, Loaded, ScenarioError};

/// Why `name` cannot be the start of an output file's name (`None`: it can): empty, a path
/// separator, `.` or `..`, a control character.
fn file_name_problem(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("empty: it names the run's output files".into());
    }
    if name == "." || name == ".." || name.contains(['/', '\\']) {
        return Some(format!(
            "{name:?} is not a plain file name (no `/`, `\\`, `.` or `..`): it names the run's \
             output files, which must stay in the directory given"
        ));
    }
    if name.chars().any(char::is_control) {
        return Some(format!(
            "{name:?} has a control character: it names the run's output files"
        ));
    }
    None
}

/// `name`: one plain file-name component.
pub(super) fn name(l: &Loaded) -> Result<(), ScenarioError> {
    let sc = &l.sc;
    // The name starts every output file's name (`NAME_flows.csv`, `NAME_flow0.csv`, sweep
    // results): one plain file-name component, so outputs stay in the directory named.
    if let Some(why) = file_name_problem(&sc.name) {
        return Err(l.err("name", why));
    }
    Ok(())
}

/// `duration_ns`, `mtu_bytes`, `segment_bytes`, `pacer_flows`, `pacer`, `send_jitter_ns`,
/// `ack_every`.
pub(super) fn keys(l: &Loaded) -> Result<(), ScenarioError> {
    let sc = &l.sc;
    if sc.duration_ns == 0 || sc.duration_ns > 10_000_000_000 {
        return Err(l.err("duration_ns", "must be in 1 ..= 10^10 ns (10 s)"));
    }
    if !(64..=9_000).contains(&sc.mtu_bytes) {
        return Err(l.err("mtu_bytes", "must be in 64 ..= 9000"));
    }
    if sc.segment_bytes < sc.mtu_bytes
        || sc.segment_bytes > 1 << 16
        || !sc.segment_bytes.is_multiple_of(256)
    {
        return Err(l.err(
            "segment_bytes",
            "must be a multiple of 256 in mtu_bytes ..= 65536 (the NIC pacer's segment sizes)",
        ));
    }
    if sc.pacer_flows == 0 || sc.pacer_flows as usize > crate::engine::pacer::PACER_FLOWS {
        return Err(l.err(
            "pacer_flows",
            format!(
                "must be in 1 ..= {} (the NIC pacer's flow table)",
                crate::engine::pacer::PACER_FLOWS
            ),
        ));
    }
    if sc.pacer == Some(ControllerKind::Ns3) {
        return Err(l.err(
            "pacer",
            "ns3 names a controller (HPCC with ns-3's arithmetic), not a pacer: fixed or reference",
        ));
    }
    if sc.send_jitter_ns > 1_000_000 {
        return Err(l.err("send_jitter_ns", "at most 1 ms"));
    }
    if sc.ack_every == 0 || sc.ack_every > 1024 {
        return Err(l.err("ack_every", "must be in 1 ..= 1024"));
    }
    Ok(())
}
