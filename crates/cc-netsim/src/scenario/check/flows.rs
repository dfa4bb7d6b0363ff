//! `[[flows]]`: each group by its kind, its start and stagger within the run, and the flow ids
//! `[output]` names.

use crate::scenario::{Cdf, FlowGroup, GroupKind, Loaded, ScenarioError, count_ids};
use std::path::Path;

/// At least one group; each group's keys by its kind (a Poisson group's CDF is read here: the
/// CDFs, one per group, `None` for the other kinds), its start and its last flow's before the
/// end.
pub(super) fn groups(l: &Loaded) -> Result<Vec<Option<Cdf>>, ScenarioError> {
    let sc = &l.sc;
    let hosts = l.hosts;
    if sc.flows.is_empty() {
        return Err(l.err(
            "flows",
            "no [[flows]] group: the run would carry no traffic and measure nothing",
        ));
    }
    let dir = l.file.parent().map(Path::to_path_buf).unwrap_or_default();
    let mut cdfs = Vec::new();
    for (i, g) in sc.flows.iter().enumerate() {
        let key = |k: &str| format!("flows[{i}].{k}");
        match g.kind {
            GroupKind::Long | GroupKind::Incast => {
                if g.src.is_empty() {
                    return Err(l.err(&key("src"), "at least one source host"));
                }
                let dst = g.dst.ok_or_else(|| l.err(&key("dst"), "required"))?;
                if dst >= hosts {
                    return Err(l.err(
                        &key("dst"),
                        format!("host {dst} does not exist ({})", count_ids(hosts, "host")),
                    ));
                }
                for &s in &g.src {
                    if s >= hosts {
                        return Err(l.err(
                            &key("src"),
                            format!("host {s} does not exist ({})", count_ids(hosts, "host")),
                        ));
                    }
                    if s == dst {
                        return Err(l.err(&key("src"), format!("host {s} is also the destination")));
                    }
                }
                if g.kind == GroupKind::Incast
                    && g.size_bytes.is_none()
                    && !sc.algorithm.reads("web")
                {
                    return Err(l.err(&key("size_bytes"), "required for incast"));
                }
                if g.size_bytes == Some(0) {
                    return Err(l.err(&key("size_bytes"), "must be > 0"));
                }
                if g.load.is_some() {
                    return Err(l.err(&key("load"), "applies to poisson and poisson_incast only"));
                }
                if g.cdf.is_some() {
                    return Err(l.err(&key("cdf"), "applies to poisson only"));
                }
                if g.fan_in.is_some() {
                    return Err(l.err(&key("fan_in"), "applies to poisson_incast only"));
                }
                cdfs.push(None);
            }
            GroupKind::Poisson => {
                let load = g.load.ok_or_else(|| l.err(&key("load"), "required"))?;
                if !(load > 0.0 && load < 1.0) {
                    return Err(l.err(&key("load"), format!("{load}: must be in (0, 1)")));
                }
                let c = g
                    .cdf
                    .as_ref()
                    .ok_or_else(|| l.err(&key("cdf"), "required"))?;
                let cdf =
                    Cdf::load(&dir.join(c)).map_err(|e| l.err(&key("cdf"), format!("{c}: {e}")))?;
                if !g.src.is_empty() || g.dst.is_some() || g.size_bytes.is_some() {
                    return Err(l.err(
                        &key("src"),
                        "poisson uses every host: no src, dst or size_bytes",
                    ));
                }
                if g.fan_in.is_some() {
                    return Err(l.err(&key("fan_in"), "applies to poisson_incast only"));
                }
                cdfs.push(Some(cdf));
            }
            GroupKind::PoissonIncast => {
                poisson_incast(l, i, g)?;
                cdfs.push(None);
            }
        }
        if let Some(s) = g.stop_ns
            && s <= g.start_ns
        {
            return Err(l.err(&key("stop_ns"), "must be after start_ns"));
        }
        // The last flow of the group starts at start + (sources − 1)·stagger.
        let last = g
            .start_ns
            .saturating_add((g.src.len().max(1) as u64 - 1).saturating_mul(g.stagger_ns));
        if g.start_ns >= sc.duration_ns {
            return Err(l.err(
                &key("start_ns"),
                format!(
                    "{}: the group starts at or after the end ({} ns)",
                    g.start_ns, sc.duration_ns
                ),
            ));
        }
        if last >= sc.duration_ns {
            return Err(l.err(
                &key("stagger_ns"),
                format!(
                    "its last flow starts at {last} ns, at or after the end ({} ns)",
                    sc.duration_ns
                ),
            ));
        }
    }
    Ok(cdfs)
}

/// `kind = "poisson_incast"`: `load` in (0, 1), `fan_in` in 1 ..= hosts − 1, `size_bytes` > 0;
/// the keys of the other kinds (`src`, `dst`, `stagger_ns`, `cdf`) are refused.
fn poisson_incast(l: &Loaded, i: usize, g: &FlowGroup) -> Result<(), ScenarioError> {
    let key = |k: &str| format!("flows[{i}].{k}");
    let load = g.load.ok_or_else(|| {
        l.err(
            &key("load"),
            "required: the incasts' share of the network's capacity (every host link's rate summed)",
        )
    })?;
    if !(load > 0.0 && load < 1.0) {
        return Err(l.err(&key("load"), format!("{load}: must be in (0, 1)")));
    }
    let hosts = l.hosts;
    let fan_in = g
        .fan_in
        .ok_or_else(|| l.err(&key("fan_in"), "required: senders per incast event"))?;
    if fan_in == 0 || fan_in >= hosts {
        return Err(l.err(
            &key("fan_in"),
            format!(
                "{fan_in}: must be in 1 ..= {} (distinct senders other than the receiver, of {hosts} hosts)",
                hosts.saturating_sub(1)
            ),
        ));
    }
    match g.size_bytes {
        None => {
            return Err(l.err(
                &key("size_bytes"),
                "required for poisson_incast: the bytes each sender sends",
            ));
        }
        Some(0) => return Err(l.err(&key("size_bytes"), "must be > 0")),
        Some(_) => {}
    }
    let refused = [
        ("src", !g.src.is_empty()),
        ("dst", g.dst.is_some()),
        ("stagger_ns", g.stagger_ns != 0),
        ("cdf", g.cdf.is_some()),
    ];
    if let Some((k, _)) = refused.iter().find(|(_, given)| *given) {
        return Err(l.err(
            &key(k),
            "does not apply to poisson_incast: every event picks its receiver and senders at random, each sends size_bytes",
        ));
    }
    Ok(())
}

/// Without Poisson groups every flow exists from the start: its ids are checked now (else
/// after the run, against the flows that arrived).
pub(super) fn ids_if_all_known(l: &Loaded) -> Result<(), ScenarioError> {
    if l.sc.flows.iter().all(|g| !g.kind.arrives()) {
        let n: usize = l.sc.flows.iter().map(|g| g.src.len()).sum();
        check_flow_ids(l, n)?;
    }
    Ok(())
}

/// Refuses `output.record_flows` / `output.track_flows` ids that name no flow of a run with
/// `flows` flows (flow ids are 0..flows, in order of creation).
pub fn check_flow_ids(l: &Loaded, flows: usize) -> Result<(), ScenarioError> {
    let o = &l.sc.output;
    for (key, ids) in [
        ("output.record_flows", o.record_flows.as_deref()),
        ("output.track_flows", o.track_flows.as_deref()),
    ] {
        if let Some(&id) = ids.unwrap_or(&[]).iter().find(|&&i| i as usize >= flows) {
            return Err(l.err(
                key,
                format!(
                    "flow {id} does not exist (the run has {})",
                    count_ids(flows as u32, "flow")
                ),
            ));
        }
    }
    Ok(())
}
