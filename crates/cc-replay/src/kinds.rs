//! The registry of trace kinds on the host: every [`Kind`] in report order. `replay`, its
//! `--help`, `fixtures`, the reports and the tests iterate [`KINDS`]; adding a kind is its own
//! folder and one line here.

use crate::kind::{Entry, Kind};
use cc_trace::Param;

/// Every trace kind, in report order: one line per kind.
pub static KINDS: [&Entry; 5] = [
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
