//! `[topology]`: the shape of each kind, the links, the switch model and PFC (its ECN is
//! [`crate::ecn::rules`]).

use crate::scenario::{BufferKind, Loaded, ScenarioError, SwitchModel, TopoKind};

/// The counts each kind needs, the keys it does not read, and at most 4096 hosts.
pub(super) fn shape(l: &Loaded) -> Result<(), ScenarioError> {
    let sc = &l.sc;
    let t = &sc.topology;
    let need = |key: &str, v: Option<u32>, min: u32| -> Result<u32, ScenarioError> {
        match v {
            Some(x) if x >= min => Ok(x),
            Some(x) => Err(l.err(
                &format!("topology.{key}"),
                format!("{x} is too small (at least {min})"),
            )),
            None => Err(l.err(
                &format!("topology.{key}"),
                format!("required for kind {:?}", t.kind),
            )),
        }
    };
    let forbid = |key: &str, set: bool| -> Result<(), ScenarioError> {
        if set {
            Err(l.err(
                &format!("topology.{key}"),
                format!("does not apply to kind {:?}", t.kind),
            ))
        } else {
            Ok(())
        }
    };
    if t.kind != TopoKind::FatTree {
        forbid("pods", t.pods.is_some())?;
        forbid("tors_per_pod", t.tors_per_pod.is_some())?;
        forbid("aggs_per_pod", t.aggs_per_pod.is_some())?;
        forbid("cores_per_agg", t.cores_per_agg.is_some())?;
        forbid("hosts_per_tor", t.hosts_per_tor.is_some())?;
    }
    match t.kind {
        TopoKind::Star => {
            need("hosts", t.hosts, 2)?;
            forbid("left_hosts", t.left_hosts.is_some())?;
            forbid("right_hosts", t.right_hosts.is_some())?;
            forbid("leaves", t.leaves.is_some())?;
            forbid("spines", t.spines.is_some())?;
            forbid("hosts_per_leaf", t.hosts_per_leaf.is_some())?;
            forbid("fabric_rate_bps", t.fabric_rate_bps.is_some())?;
            forbid("fabric_delay_ns", t.fabric_delay_ns.is_some())?;
        }
        TopoKind::Dumbbell => {
            need("left_hosts", t.left_hosts, 1)?;
            need("right_hosts", t.right_hosts, 1)?;
            forbid("hosts", t.hosts.is_some())?;
            forbid("leaves", t.leaves.is_some())?;
            forbid("spines", t.spines.is_some())?;
            forbid("hosts_per_leaf", t.hosts_per_leaf.is_some())?;
        }
        TopoKind::LeafSpine => {
            need("leaves", t.leaves, 2)?;
            need("spines", t.spines, 1)?;
            if t.spines.is_some_and(|s| s > 1024) {
                return Err(l.err("topology.spines", "at most 1024"));
            }
            need("hosts_per_leaf", t.hosts_per_leaf, 1)?;
            forbid("hosts", t.hosts.is_some())?;
            forbid("left_hosts", t.left_hosts.is_some())?;
            forbid("right_hosts", t.right_hosts.is_some())?;
        }
        TopoKind::FatTree => {
            forbid("hosts", t.hosts.is_some())?;
            forbid("left_hosts", t.left_hosts.is_some())?;
            forbid("right_hosts", t.right_hosts.is_some())?;
            forbid("leaves", t.leaves.is_some())?;
            forbid("spines", t.spines.is_some())?;
            forbid("hosts_per_leaf", t.hosts_per_leaf.is_some())?;
            // Two pods at least: one pod is a leaf-spine. At most 1024 of each (switch ports
            // and ids stay small; 4096 hosts bound the product below).
            for (key, v, min) in [
                ("pods", t.pods, 2),
                ("tors_per_pod", t.tors_per_pod, 1),
                ("aggs_per_pod", t.aggs_per_pod, 1),
                ("cores_per_agg", t.cores_per_agg, 1),
                ("hosts_per_tor", t.hosts_per_tor, 1),
            ] {
                if let Some(x) = v {
                    need(key, Some(x), min)?;
                    if x > 1024 {
                        return Err(l.err(&format!("topology.{key}"), format!("{x}: at most 1024")));
                    }
                }
            }
            let f = t.fat_tree();
            if f.aggs_per_pod * f.cores_per_agg > 1024 {
                return Err(l.err(
                    "topology.cores_per_agg",
                    format!(
                        "{} cores (aggs_per_pod × cores_per_agg): at most 1024",
                        f.cores()
                    ),
                ));
            }
        }
    }
    if l.hosts > 4096 {
        return Err(l.err("topology", format!("{} hosts: at most 4096", l.hosts)));
    }
    Ok(())
}

/// The link rates (a NIC pacer rate, an INT speed when INT is on), the delays, the buffer.
pub(super) fn links(l: &Loaded) -> Result<(), ScenarioError> {
    let sc = &l.sc;
    let t = &sc.topology;
    let int_on = t.int.unwrap_or(sc.algorithm.entry().int_default);
    let mut rates = vec![("topology.host_rate_bps", t.host_rate_bps)];
    if t.kind != TopoKind::Star {
        rates.push((
            "topology.fabric_rate_bps",
            t.fabric_rate_bps.unwrap_or(t.host_rate_bps),
        ));
    }
    for (k, r) in rates {
        if !(1_000_000..=1_600_000_000_000).contains(&r) {
            return Err(l.err(k, format!("{r} b/s is outside 1 Mb/s ..= 1.6 Tb/s")));
        }
        // The NIC's pacer runs its line at this rate, in units of 128 b/s.
        let pacer = cc_pacer::Rate::MIN.bps()..=cc_pacer::Rate::MAX.bps();
        if k == "topology.host_rate_bps" && !pacer.contains(&r) {
            return Err(l.err(
                k,
                format!(
                    "{r} b/s is outside the NIC pacer's line rates ({} ..= {} b/s)",
                    pacer.start(),
                    pacer.end()
                ),
            ));
        }
        if int_on && !hpcc_cc::int::SPEED_BPS.contains(&r) {
            return Err(l.err(
                k,
                format!("{r} b/s has no INT speed code (10/25/40/50/100/200/400/800/1600 Gb/s)"),
            ));
        }
    }
    if t.host_delay_ns > 1_000_000_000 {
        return Err(l.err("topology.host_delay_ns", "at most 1 s"));
    }
    if t.fabric_delay_ns.is_some_and(|d| d > 1_000_000_000) {
        return Err(l.err("topology.fabric_delay_ns", "at most 1 s"));
    }
    if t.buffer_bytes < 2 * u64::from(sc.mtu_bytes) + 1_000 {
        return Err(l.err("topology.buffer_bytes", "must hold at least two packets"));
    }
    Ok(())
}

/// `switch_model` and what applies to it: `int_multi`, the buffer, static PFC thresholds.
pub(super) fn switch_model(l: &Loaded) -> Result<(), ScenarioError> {
    let sc = &l.sc;
    let t = &sc.topology;
    match (t.switch_model, t.int_multi) {
        (SwitchModel::Default, Some(_)) => {
            return Err(l.err(
                "topology.int_multi",
                "ns-3's INT unit multiplier: needs switch_model = \"ns3\" (the default model stamps HPCC's 128 B and 80 B units)",
            ));
        }
        (SwitchModel::Ns3, Some(m)) if !(1..=64).contains(&m) => {
            return Err(l.err("topology.int_multi", "must be in 1 ..= 64"));
        }
        (SwitchModel::Ns3, Some(_)) if !t.int.unwrap_or(sc.algorithm.entry().int_default) => {
            return Err(l.err(
                "topology.int_multi",
                "sets the units of INT, and this run's switches stamp none (topology.int is off)",
            ));
        }
        _ => {}
    }
    if t.switch_model == SwitchModel::Ns3 {
        if t.buffer != BufferKind::Shared {
            return Err(l.err(
                "topology.buffer",
                "switch_model ns3 shares one buffer per switch: must be shared",
            ));
        }
        for (k, v) in [
            ("topology.pfc_xoff_bytes", t.pfc_xoff_bytes),
            ("topology.pfc_xon_bytes", t.pfc_xon_bytes),
        ] {
            if v.is_some() {
                return Err(l.err(
                    k,
                    "switch_model ns3 pauses at a dynamic threshold (ns-3's): a static one does not apply",
                ));
            }
        }
    }
    Ok(())
}

/// `pfc_xoff_bytes` and `pfc_xon_bytes`.
pub(super) fn pfc(l: &Loaded) -> Result<(), ScenarioError> {
    let sc = &l.sc;
    let t = &sc.topology;
    match (t.pfc_xoff_bytes, t.pfc_xon_bytes) {
        (None, Some(_)) => {
            return Err(l.err(
                "topology.pfc_xon_bytes",
                "needs pfc_xoff_bytes (PFC is off)",
            ));
        }
        (Some(x), _) if x < u64::from(sc.mtu_bytes) || x >= t.buffer_bytes => {
            return Err(l.err(
                "topology.pfc_xoff_bytes",
                format!("{x}: must be at least one packet and below buffer_bytes"),
            ));
        }
        (Some(x), Some(n)) if n >= x => {
            return Err(l.err(
                "topology.pfc_xon_bytes",
                format!("{n}: must be below pfc_xoff_bytes ({x})"),
            ));
        }
        _ => {}
    }
    Ok(())
}
