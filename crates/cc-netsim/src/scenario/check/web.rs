//! `[web]` (algorithm cats): the table, the page, and the one flow it needs.

use crate::scenario::{GroupKind, Loaded, ScenarioError, read_page, readers};
use std::path::Path;

/// The `[web]` table and the page (algorithm cats), and the one flow it needs.
pub(super) fn check(l: &mut Loaded) -> Result<(), ScenarioError> {
    let sc = &l.sc;
    let cats = sc.algorithm.reads("web");
    let Some(w) = &sc.web else {
        if cats {
            let msg = format!("required for algorithm {}", sc.algorithm.name());
            return Err(l.err("web", msg));
        }
        return Ok(());
    };
    if !cats {
        let msg = format!("applies to algorithm {} only", readers("web"));
        return Err(l.err("web", msg));
    }
    let one =
        sc.flows.len() == 1 && sc.flows[0].kind == GroupKind::Incast && sc.flows[0].src.len() == 1;
    if !one {
        return Err(l.err(
            "flows",
            "algorithm cats sends one page: exactly one [[flows]] group, kind incast, one src",
        ));
    }
    if sc.flows[0].size_bytes.is_some() {
        return Err(l.err(
            "flows[0].size_bytes",
            "algorithm cats: the size is the page's (`[web] page`)",
        ));
    }
    if w.pacing_rate_bps
        .is_some_and(|r| !(1_000..=1_600_000_000_000).contains(&r))
    {
        return Err(l.err("web.pacing_rate_bps", "must be in 1 kb/s ..= 1.6 Tb/s"));
    }
    if w.window_bytes.is_some_and(|b| b < u64::from(sc.mtu_bytes)) {
        return Err(l.err("web.window_bytes", "must hold at least one packet"));
    }
    if w.initial_window_packets == Some(0) {
        return Err(l.err("web.initial_window_packets", "must be at least 1"));
    }
    let dir = l.file.parent().map(Path::to_path_buf).unwrap_or_default();
    let path = dir.join(&w.page);
    let page = read_page(&path).map_err(|e| l.err("web.page", e.to_string()))?;
    l.page = Some(page);
    Ok(())
}
