//! The keys only some algorithms read (`pcc_inflight_cap`, `reaction`), and the INT an
//! algorithm needs.

use crate::scenario::{Loaded, Reaction, ScenarioError, readers};

/// `pcc_inflight_cap` and `reaction` only where the algorithm reads them.
pub(super) fn keys(l: &Loaded) -> Result<(), ScenarioError> {
    let sc = &l.sc;
    if sc.pcc_inflight_cap && !sc.algorithm.reads("pcc_inflight_cap") {
        let by = readers("pcc_inflight_cap");
        return Err(l.err(
            "pcc_inflight_cap",
            format!("applies to algorithm {by} only"),
        ));
    }
    if sc.reaction != Reaction::Hpcc && !sc.algorithm.reads("reaction") {
        let by = readers("reaction");
        return Err(l.err("reaction", format!("applies to algorithm {by} only")));
    }
    Ok(())
}

/// `topology.int` is not off for an algorithm that reads INT from every ACK.
pub(super) fn int(l: &Loaded) -> Result<(), ScenarioError> {
    let sc = &l.sc;
    if sc.algorithm.entry().needs_int && sc.topology.int == Some(false) {
        return Err(l.err(
            "topology.int",
            format!(
                "algorithm {} needs INT (its controller reads it from every ACK)",
                sc.algorithm.name()
            ),
        ));
    }
    Ok(())
}
