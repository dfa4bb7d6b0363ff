//! sim-host's integration tests, one binary: each module is one concern (a trace kind's replay,
//! the simulator's scenarios, the command line, the robustness rules, …); `common` holds what
//! they share. `cargo test -p sim-host --test suite MODULE::` runs one module.

mod baselines;
mod capture;
mod cats;
mod cats_props;
mod cli;
mod common;
mod hpcc;
mod hpcc_props;
mod hpcc_regressions;
mod incast;
mod merge;
mod nothing_silent;
mod ns3;
mod ns3_ref;
mod ns3_switch;
mod pacer;
mod pacer_props;
mod pcc;
mod replay_all_parallel;
mod robustness;
mod scenario_keys;
mod sim;
mod sim_pacer;
mod slowdown;
mod timely;
mod timely_props;
mod timely_regressions;
mod topo;
mod truthful_reports;
