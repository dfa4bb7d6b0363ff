//! `check`: a parsed scenario's values, section by section of the file, in the order the
//! file's errors are reported (the first impossible value is the one named).

mod algorithm;
mod flows;
pub(super) mod keys;
mod output;
mod run;
mod topology;
mod web;

pub use flows::check_flow_ids;

use super::{Loaded, ScenarioError};

/// Every check of a scenario's values; the first that fails is the error.
pub(super) fn check(l: &mut Loaded) -> Result<(), ScenarioError> {
    run::name(l)?;
    topology::shape(l)?;
    topology::links(l)?;
    topology::switch_model(l)?;
    topology::pfc(l)?;
    crate::ecn::rules(l)?;
    run::keys(l)?;
    web::check(l)?;
    algorithm::keys(l)?;
    output::sampling(l)?;
    algorithm::int(l)?;
    output::windows(l)?;
    let cdfs = flows::groups(l)?;
    output::buckets(l)?;
    l.cdfs = cdfs;
    flows::ids_if_all_known(l)
}
