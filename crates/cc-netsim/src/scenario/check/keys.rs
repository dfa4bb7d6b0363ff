//! The keys a file gives that this run would not read (the structural half of "applied or
//! refused").

use crate::scenario::{Loaded, ScenarioError, SwitchModel, readers};

/// Every key the file gives is read by this run (the structural half of "applied or refused";
/// `check` refuses impossible values): a top-level key that only other algorithms read
/// ([`Entry::scenario_keys`](super::cc::Entry)), the NIC pacer's keys under `switch_model =
/// "ns3"` (ns-3's NIC has no pacer), and in each `[[flows]]` group a key its kind does not read
/// ([`GroupKind::reads`]) are refused, naming the file, the table and the key.
pub(in crate::scenario) fn given(l: &Loaded, raw: &toml::Table) -> Result<(), ScenarioError> {
    let sc = &l.sc;
    for k in raw.keys() {
        let others = readers(k);
        if !others.is_empty() && !sc.algorithm.reads(k) {
            return Err(l.err(
                k,
                format!(
                    "read by algorithm {others} only; this scenario's algorithm {} does not read it",
                    sc.algorithm.name()
                ),
            ));
        }
        if sc.topology.switch_model == SwitchModel::Ns3
            && matches!(k.as_str(), "pacer" | "pacer_flows" | "send_jitter_ns")
        {
            return Err(l.err(
                k,
                "switch_model = \"ns3\" runs ns-3's NIC (queue pairs round robin, each paced by its next-available time): it has no pacer and no send jitter",
            ));
        }
    }
    let groups = raw.get("flows").and_then(toml::Value::as_array);
    for (i, (g, v)) in sc
        .flows
        .iter()
        .zip(groups.into_iter().flatten())
        .enumerate()
    {
        let reads = g.kind.reads();
        if let Some(k) = v
            .as_table()
            .and_then(|t| t.keys().find(|k| !reads.contains(&k.as_str())))
        {
            return Err(l.err(
                &format!("flows[{i}].{k}"),
                format!(
                    "a {} group does not read it (it reads {})",
                    g.kind.name(),
                    reads.join(", ")
                ),
            ));
        }
    }
    Ok(())
}
