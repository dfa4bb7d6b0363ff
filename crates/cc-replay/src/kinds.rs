//! The trace kinds on the host: each [`Kind`] is a handle on its [`KindEntry`] — its `cc-trace`
//! description (name, header row, keys with defaults, units and limits, tolerances) plus what the
//! host does with it (replay, fixture generators) — and [`KINDS`] lists them in report order.
//! `replay`, its `--help`, `fixtures`, the reports and the tests iterate [`KINDS`]; adding a kind
//! is its own folder and one line here.

use crate::opts::ReplayOpts;
use crate::summary::Summary;
use cc_trace::kinds::KindInfo;
use cc_trace::{InputError, Param};
use std::path::Path;

/// One generated fixture file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FixtureFile {
    /// File name inside the kind's directory (`fixtures/<kind>/<name>`).
    pub name: String,
    /// Its exact contents.
    pub bytes: Vec<u8>,
}

/// What the host does with one trace kind.
pub struct KindEntry {
    /// The kind as `cc-trace` describes it.
    pub info: &'static KindInfo,
    /// Replays one trace (or capture) of the kind: one summary per trace, or per capture flow.
    pub replay: fn(&Path, &ReplayOpts) -> Result<Vec<Summary>, InputError>,
    /// The shipped fixtures of the kind (`fixtures/<name>/`), made by deterministic generators.
    #[cfg(feature = "generate")]
    pub fixtures: fn() -> Vec<FixtureFile>,
}

/// A trace kind: a handle on its registry entry.
#[derive(Clone, Copy)]
pub struct Kind(pub &'static KindEntry);

impl PartialEq for Kind {
    fn eq(&self, other: &Self) -> bool {
        self.name() == other.name()
    }
}
impl Eq for Kind {}

impl std::fmt::Debug for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Kind {
    /// The kind's description (keys, tolerances, header).
    pub fn info(self) -> &'static KindInfo {
        self.0.info
    }

    /// The kind's name, as on the command line.
    pub fn name(self) -> &'static str {
        self.0.info.name
    }

    /// The kind's name in titles (`TIMELY`, `HPCC`, `CATS`, `Pacer`).
    pub fn title(self) -> &'static str {
        self.0.info.title
    }

    /// The CSV header row that identifies the kind.
    pub fn header(self) -> &'static str {
        self.0.info.header
    }

    /// Whether `key` is one of the kind's parameters (`seg_bytes.<flow>` members included).
    pub fn has_key(self, key: &str) -> bool {
        self.0.info.has_key(key)
    }

    /// The shipped fixtures of the kind.
    #[cfg(feature = "generate")]
    pub fn fixtures(self) -> Vec<FixtureFile> {
        (self.0.fixtures)()
    }

    /// Replays one trace of the kind (whether anything meaningful was compared is checked by
    /// the driver before any output is written: [`crate::driver::Tally::finish`]).
    pub fn replay(self, path: &Path, opts: &ReplayOpts) -> Result<Vec<Summary>, InputError> {
        (self.0.replay)(path, opts)
    }
}

/// Every trace kind, in report order: one line per kind.
pub static KINDS: [&KindEntry; 5] = [
    &crate::timely::ENTRY,
    &crate::hpcc::ENTRY,
    &crate::cats::ENTRY,
    &crate::pacer::ENTRY,
    &crate::pcc::ENTRY,
];

impl Kind {
    /// Every kind, in report order.
    pub fn all() -> impl Iterator<Item = Kind> {
        KINDS.iter().map(|e| Kind(e))
    }

    /// The kind named `name` (as on the command line).
    pub fn named(name: &str) -> Option<Kind> {
        Self::all().find(|k| k.name() == name)
    }

    /// Whether the `--set` parameter `p` applies to this kind: its bare key is one of the kind's,
    /// or it is `KIND.KEY` with this kind's name and key.
    pub fn applies(self, p: &Param) -> bool {
        match p.key.split_once('.') {
            Some((k, key)) if Kind::named(k).is_some() => k == self.name() && self.has_key(key),
            _ => self.has_key(&p.key),
        }
    }
}

/// Parses a kind name for the command line (`--only`), listing the kinds on failure.
pub fn parse_kind(s: &str) -> Result<Kind, String> {
    Kind::named(s).ok_or_else(|| {
        let names: Vec<_> = Kind::all().map(Kind::name).collect();
        format!("{s:?} is not a trace kind ({})", names.join(", "))
    })
}
