//! What a replay reads: a file's kind (by its header row, or as a capture), the traces below a
//! directory, and one file replayed as its kind with the options it is given.

use crate::kinds::Kind;
use crate::opts::ReplayOpts;
use crate::summary::Summary;
use cc_trace::{InputError, is_capture, sniff_header};
use std::path::{Path, PathBuf};

impl Kind {
    /// Recognises a file's kind: captures are HPCC; CSV files by their header row.
    pub fn detect(path: &Path) -> Result<Kind, InputError> {
        if is_capture(path)
            && let Some(k) = Kind::all().find(|k| k.info().reads_captures)
        {
            return Ok(k);
        }
        let (line, header) = sniff_header(path)?;
        Kind::all().find(|k| k.header() == header).ok_or_else(|| {
            let known: Vec<String> = Kind::all()
                .map(|k| format!("{}: {}", k.name(), k.header()))
                .collect();
            InputError::at(
                path,
                line,
                format!(
                    "header row {header:?} is not a known trace kind ({})",
                    known.join("; ")
                ),
            )
        })
    }
}

/// A CSV trace (by extension, in any case).
fn is_csv(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("csv"))
}

/// Replays one file: its kind detected (and checked against `kind` when given), the options
/// checked against that kind, outputs that would overwrite it refused; errors name `shown` (the
/// path as the user gave it) rather than `path` when they differ.
pub fn replay_file(
    kind: Option<Kind>,
    path: &Path,
    shown: &Path,
    opts: &ReplayOpts,
) -> Result<Vec<Summary>, InputError> {
    let rename = |mut e: InputError| {
        if e.file == path {
            e.file = shown.to_path_buf();
        }
        e
    };
    for out in [&opts.out, &opts.plot].into_iter().flatten() {
        cc_output::output::refuse_inputs(out, &[path])?;
    }
    let detected = Kind::detect(path).map_err(rename)?;
    if kind.is_some_and(|k| k != detected) {
        return Err(InputError::file(
            shown,
            format!(
                "this is a {} trace (header {:?}), not a {} one",
                detected.name(),
                detected.header(),
                kind.map_or("all", Kind::name)
            ),
        ));
    }
    opts.check_used(&[detected])?;
    let mut o = opts.for_kind(detected);
    if shown != path {
        o.shown_as = Some(shown.to_path_buf());
    }
    detected.replay(path, &o).map_err(rename)
}

/// Every trace file below `dir` (sorted): `.csv`, `.pcap`, `.pcapng`, `.cap` in any case.
/// Symbolic links are followed while they stay inside `dir` (one leading out of it, such as `up
/// -> ..`, is passed over with a warning), and every folder and every file is visited once (by
/// canonical path): a link to itself (`self -> .`) adds nothing.
pub fn find_traces(dir: &Path) -> Result<Vec<PathBuf>, InputError> {
    Ok(find_traces_inside(dir)?.0)
}

/// An entry of a replayed directory that was not read, and why.
pub type Skipped = (PathBuf, &'static str);

/// [`find_traces`], plus what was passed over and why: links that lead out of `dir` (a link to
/// a file or folder outside the replayed tree, such as `up -> ..`, would replay traces the user
/// did not name) and trace-named entries that are not regular files (a named pipe would block
/// the run forever; a socket or a device is no trace).
pub fn find_traces_inside(dir: &Path) -> Result<(Vec<PathBuf>, Vec<Skipped>), InputError> {
    let canon = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let root = canon(dir);
    let mut skipped = Vec::new();
    let mut out = Vec::new();
    let mut seen_dirs = std::collections::HashSet::new();
    let mut seen_files = std::collections::HashSet::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        if !seen_dirs.insert(canon(&d)) {
            continue;
        }
        let rd = std::fs::read_dir(&d)
            .map_err(|e| InputError::file(&d, format!("cannot list directory: {e}")))?;
        for entry in rd {
            let entry =
                entry.map_err(|e| InputError::file(&d, format!("cannot list directory: {e}")))?;
            let p = entry.path();
            if p.is_symlink() && !canon(&p).starts_with(&root) {
                skipped.push((p, "a link that leads out of the directory: not followed"));
                continue;
            }
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            if !(is_capture(&p) || is_csv(&p)) {
                continue;
            }
            // Only regular files are read: the file type after following links, without
            // opening the file (opening a named pipe blocks until a writer comes).
            match std::fs::metadata(&p).map(|m| m.file_type()) {
                Ok(t) if t.is_file() => {
                    if seen_files.insert(canon(&p)) {
                        out.push(p);
                    }
                }
                Ok(t) => skipped.push((p, special_file_kind(t))),
                Err(_) => skipped.push((p, "a broken link or an unreadable entry: not read")),
            }
        }
    }
    out.sort();
    skipped.sort();
    Ok((out, skipped))
}

/// Why a non-regular file is not read, by its type.
fn special_file_kind(t: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        if t.is_fifo() {
            return "a named pipe (FIFO): not read";
        }
        if t.is_socket() {
            return "a socket: not read";
        }
        if t.is_block_device() || t.is_char_device() {
            return "a device: not read";
        }
    }
    let _ = t;
    "not a regular file: not read"
}

/// The per-trace output file inside a directory given to `--out`/`--plot`: the trace's path
/// relative to the replayed directory, with its own extension kept and `suffix` appended
/// (`timely/incast.csv` → `OUT/timely/incast.csv.out.csv`), so two traces never share an
/// output, whatever their folders or extensions.
pub fn output_in(out_dir: &Path, root: &Path, trace: &Path, suffix: &str) -> PathBuf {
    let rel = trace.strip_prefix(root).unwrap_or(trace);
    let mut name = rel.as_os_str().to_os_string();
    name.push(suffix);
    out_dir.join(name)
}
