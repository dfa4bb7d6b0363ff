//! The run's controller setup: the registry entry of the scenario's algorithm, built from its
//! `[params]` and `--set`, and the parameters in force with where each came from. The
//! controllers themselves are in [`super::cc`], one folder per algorithm.

use super::cc::{self, Algo};
use super::scenario::Loaded;
use cc_trace::Param;

/// The `[params]` / `--set` key naming a set of parameter values (HPCC: `authors` or
/// `paper`; TIMELY: `paper` or `ns3`): read by the sim, never passed to the replay parameter
/// rules.
pub const PRESET_KEY: &str = "preset";

/// Both sides' configuration of the scenario's algorithm, from the same `key=value`
/// parameters as `replay --set`; every flow's controller is made from it.
pub struct Setup {
    entry: &'static cc::Entry,
    algo: Box<dyn Algo>,
}

impl Setup {
    /// Both sides from the scenario's `[params]` then `extra` (`--set`), by the registry entry
    /// of the scenario's algorithm; a NIC rate key (`line_rate_bps` / `nic_rate_bps` /
    /// `line_rate_mbps`) defaults to the host link rate and must equal it.
    pub fn build(l: &Loaded, extra: &[Param]) -> Result<Setup, String> {
        let entry = l.sc.algorithm.entry();
        Ok(Setup {
            entry,
            algo: (entry.build)(l, extra)?,
        })
    }

    /// The registry entry.
    pub fn entry(&self) -> &'static cc::Entry {
        self.entry
    }

    /// The algorithm's setup.
    pub fn algo(&self) -> &dyn Algo {
        &*self.algo
    }

    /// The `# set` lines of a recorded trace: every key with the value in force. A `preset`
    /// (the sim's named parameter sets) is not a replay key: the lines carry the values it
    /// gave; nor is TIMELY's `segment_bytes`, listed under its `ns3` preset.
    pub fn set_lines(&self) -> Vec<String> {
        self.values()
            .into_iter()
            .filter(|(k, _, _)| k != PRESET_KEY && k != super::cc::timely::SEGMENT_KEY)
            .map(|(k, v, _)| format!("{k}={v}"))
            .collect()
    }

    /// The parameters the controllers run with, `(key, value, what a default follows)`, as
    /// `replay` lists them (`cc_trace::kinds::Values` of the same setups).
    pub fn values(&self) -> Vec<(String, String, Option<&'static str>)> {
        self.algo.values()
    }
}

/// One algorithm parameter in force in a run, and where its value came from.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ParamInForce {
    /// The key (a `replay --set` key).
    pub key: String,
    /// The value the controllers run with.
    pub value: String,
    /// `default` (TIMELY's `max_rate_bps` and `init_rate_bps`: `default: line_rate_bps`,
    /// `default: max_rate_bps`; HPCC's `max_stage` and `eta`: `default: preset authors`),
    /// `scenario FILE [params]`, `scenario FILE topology.host_rate_bps` (the NIC rate),
    /// `topology: the longest base RTT of its paths` (HPCC's `base_rtt_ns`), `topology: the
    /// largest bandwidth-delay product of its paths` (DCTCP's `win_bytes`), `page FILE line
    /// N` (a CATS page's `# set` line) or `--set`.
    pub origin: String,
}

/// Where `p` came from, for [`ParamInForce::origin`].
fn origin(l: &Loaded, p: &Param) -> String {
    if p.source == std::path::Path::new("--set") {
        "--set".into()
    } else if p.source == super::paths::topology_source(&l.file) {
        "topology: the longest base RTT of its paths".into()
    } else if p.source == super::paths::topology_bdp_source(&l.file) {
        "topology: the largest bandwidth-delay product of its paths".into()
    } else if p.source == l.file {
        format!("scenario {} [params]", l.file.display())
    } else {
        match p.line {
            Some(n) => format!("page {} line {n}", p.source.display()),
            None => format!("page {}", p.source.display()),
        }
    }
}

/// Every parameter in force for `setup` (built from `l` and `extra` by [`Setup::build`]): its
/// value and its origin (the last setting of the key wins, as in the build). A FIFO sender's
/// list leaves out the conductor's keys, which it does not apply.
pub fn in_force(l: &Loaded, extra: &[Param], setup: &Setup) -> Vec<ParamInForce> {
    // Keys whose default the topology gives (the NIC rate; the telemetry port's speed code).
    let topo_keys = setup.entry.topo_keys;
    let page: &[Param] = l.page.as_ref().map_or(&[], |p| &p.params);
    // The topology's defaults (`base_rtt_ns`) come first: anything given wins over them.
    let topo = super::paths::topology_params(l, &["base_rtt_ns", "win_bytes"]);
    let given: Vec<(&Param, String)> = topo
        .iter()
        .chain(page)
        .chain(&l.params)
        .chain(extra)
        .map(|p| (p, origin(l, p)))
        .collect();
    setup
        .values()
        .into_iter()
        .filter(|(key, _, _)| (setup.entry.refuses)(l, key).is_none())
        .map(|(key, value, follows)| {
            let origin = match given.iter().rev().find(|(p, _)| p.key == key) {
                Some((_, o)) => o.clone(),
                None if topo_keys.contains(&key.as_str()) => {
                    format!("scenario {} topology.host_rate_bps", l.file.display())
                }
                // A default tied to another key (TIMELY's max and init rates).
                None => match follows {
                    Some(k) => format!("default: {k}"),
                    None => "default".into(),
                },
            };
            ParamInForce { key, value, origin }
        })
        .collect()
}

/// Refuses a parameter that the run would not apply: a `--set` key given twice (only the last
/// would apply), and the conductor's keys in `[params]` or `--set` of a `scheduler = "fifo"`
/// scenario (no conductor runs), and a key only the `ns3` controller reads
/// ([`Entry::ns3_keys`](super::cc::Entry)) when one of `controllers` (those the run or sweep
/// runs the scenario with) is another. A parameter given is applied or refused, never dropped.
/// (A page's `# set` lines describe the page and are not refused.)
pub fn check_applied(
    l: &Loaded,
    extra: &[Param],
    controllers: &[super::scenario::ControllerKind],
) -> Result<(), String> {
    refuse_repeated(extra)?;
    let entry = l.sc.algorithm.entry();
    let not_ns3 = controllers
        .iter()
        .find(|&&c| c != super::scenario::ControllerKind::Ns3);
    for p in l.params.iter().chain(extra) {
        let why = (entry.refuses)(l, &p.key).map(str::to_string).or_else(|| {
            not_ns3
                .filter(|_| entry.ns3_keys.contains(&p.key.as_str()))
                .map(|c| {
                    format!(
                        "read by --controller ns3 only (ns-3's arithmetic), and this run's controller is {}",
                        c.name()
                    )
                })
        });
        if let Some(why) = why {
            let at = if p.source == std::path::Path::new("--set") {
                format!("--set {}", p.key)
            } else {
                format!("{}: key `params.{}`", l.file.display(), p.key)
            };
            return Err(format!("{at}: {why}"));
        }
    }
    Ok(())
}

/// Refuses a `--set` key given twice: only the last would apply.
fn refuse_repeated(extra: &[Param]) -> Result<(), String> {
    for (i, p) in extra.iter().enumerate() {
        if let Some(q) = extra[i + 1..].iter().find(|q| q.key == p.key) {
            return Err(format!(
                "--set {}: given twice ({} and {}); only one value can apply",
                p.key, p.value, q.value
            ));
        }
    }
    Ok(())
}
