//! `[output]`: the sampling interval, the fairness and statistics windows, the size buckets
//! (its flow ids: [`super::check_flow_ids`]).

use crate::scenario::{Loaded, ScenarioError};

/// `sample_ns`: positive, and at most 5·10^7 samples over the run.
pub(super) fn sampling(l: &Loaded) -> Result<(), ScenarioError> {
    let sc = &l.sc;
    if sc.output.sample_ns == 0 {
        return Err(l.err("output.sample_ns", "must be > 0"));
    }
    if sc.duration_ns / sc.output.sample_ns > 50_000_000 {
        return Err(l.err(
            "output.sample_ns",
            "too small for the duration (over 5·10^7 samples)",
        ));
    }
    Ok(())
}

/// `jain_from_ns`, `jain_to_ns` and `stats_from_ns` within the run.
pub(super) fn windows(l: &Loaded) -> Result<(), ScenarioError> {
    let sc = &l.sc;
    let end = sc.duration_ns;
    let o = &sc.output;
    let from = o.jain_from_ns.unwrap_or(end / 2);
    if from >= end {
        return Err(l.err(
            "output.jain_from_ns",
            format!("{from} is not before the end ({end} ns)"),
        ));
    }
    if let Some(to) = o.jain_to_ns
        && (to <= from || to > end)
    {
        return Err(l.err(
            "output.jain_to_ns",
            format!("{to} must be after jain_from_ns ({from}) and at most duration_ns ({end})"),
        ));
    }
    if o.stats_from_ns >= end {
        return Err(l.err(
            "output.stats_from_ns",
            format!(
                "{} is not before the end ({end} ns): no sample would be taken",
                o.stats_from_ns
            ),
        ));
    }
    Ok(())
}

/// `size_buckets_bytes`: increasing.
pub(super) fn buckets(l: &Loaded) -> Result<(), ScenarioError> {
    let sc = &l.sc;
    if sc
        .output
        .size_buckets_bytes
        .windows(2)
        .any(|w| w[0] >= w[1])
    {
        return Err(l.err("output.size_buckets_bytes", "must be increasing"));
    }
    Ok(())
}
