//! Output files that never destroy or garble data.
//!
//! * An output path that names an input (compared as canonical paths, so `./t.csv`, `t.csv` and
//!   a link to it are the same file) is refused before anything is written.
//! * Every output is written to a temporary file in the same folder and renamed over the
//!   target only when it is complete: a replay that stops at a bad row leaves no partial file
//!   (and any earlier file of that name untouched).
//! * Writes to standard output that fail (a full disk, a closed pipe) are remembered, so the
//!   command can exit 2 instead of reporting success ([`stdout_failed`]).

use cc_trace::InputError;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

static STDOUT_FAILED: AtomicBool = AtomicBool::new(false);
static TMP_SEQ: AtomicU64 = AtomicU64::new(0);

/// Records that a write to standard output failed (called by [`crate::out!`]).
pub fn note_stdout_error() {
    STDOUT_FAILED.store(true, Ordering::Relaxed);
}

/// Whether any write to standard output failed so far.
pub fn stdout_failed() -> bool {
    STDOUT_FAILED.load(Ordering::Relaxed)
}

/// `p` as a canonical path, also when it does not exist yet (its folder, canonical, joined with
/// its file name); `None` when not even its folder exists.
fn canonical(p: &Path) -> Option<PathBuf> {
    if let Ok(c) = p.canonicalize() {
        return Some(c);
    }
    let name = p.file_name()?;
    let dir = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    dir.canonicalize().ok().map(|d| d.join(name))
}

/// Whether two output paths name the same file (canonical paths; the same text when neither
/// folder exists yet).
pub fn same_file(a: &Path, b: &Path) -> bool {
    match (canonical(a), canonical(b)) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

/// Refuses an output path that is one of the inputs (canonical paths).
pub fn refuse_inputs(out: &Path, inputs: &[&Path]) -> Result<(), InputError> {
    let Some(o) = canonical(out) else {
        return Ok(()); // its folder does not exist: creating it will say so
    };
    for i in inputs {
        if canonical(i).is_some_and(|c| c == o) {
            return Err(InputError::file(
                out,
                format!(
                    "refusing to write an output over the input trace {}",
                    i.display()
                ),
            ));
        }
    }
    Ok(())
}

/// A temporary path beside `target` (same folder, so the final rename is atomic).
pub fn temp_beside(target: &Path) -> PathBuf {
    let name = target
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("output");
    let seq = TMP_SEQ.fetch_add(1, Ordering::Relaxed);
    target.with_file_name(format!(".{name}.{}-{seq}.tmp", std::process::id()))
}

/// Moves a finished temporary file over `target`.
pub fn commit_temp(tmp: &Path, target: &Path) -> Result<(), InputError> {
    std::fs::rename(tmp, target).map_err(|e| {
        let _ = std::fs::remove_file(tmp);
        InputError::file(target, format!("cannot write: {e}"))
    })
}

/// A file written through a temporary beside it and renamed into place by
/// [`commit`](Self::commit); dropped without a commit, it leaves nothing behind.
pub struct Output {
    target: PathBuf,
    tmp: PathBuf,
    w: Option<BufWriter<File>>,
}

impl Output {
    /// Starts `target`, refusing it if it names one of `inputs`.
    pub fn create(target: &Path, inputs: &[&Path]) -> Result<Self, InputError> {
        refuse_inputs(target, inputs)?;
        let tmp = temp_beside(target);
        let f = File::create(&tmp)
            .map_err(|e| InputError::file(target, format!("cannot create: {e}")))?;
        Ok(Self {
            target: target.to_path_buf(),
            tmp,
            w: Some(BufWriter::new(f)),
        })
    }

    /// The final path.
    pub fn path(&self) -> &Path {
        &self.target
    }

    /// Writes one line.
    pub fn line(&mut self, text: std::fmt::Arguments<'_>) -> Result<(), InputError> {
        let r = match self.w.as_mut() {
            Some(w) => w.write_fmt(text).and_then(|()| w.write_all(b"\n")),
            None => Ok(()),
        };
        r.map_err(|e| InputError::file(&self.target, format!("cannot write: {e}")))
    }

    /// Flushes and renames the file into place.
    pub fn commit(mut self) -> Result<(), InputError> {
        if let Some(w) = self.w.take() {
            let f = w
                .into_inner()
                .map_err(|e| InputError::file(&self.target, format!("cannot write: {e}")))?;
            f.sync_all()
                .map_err(|e| InputError::file(&self.target, format!("cannot write: {e}")))?;
        }
        commit_temp(&self.tmp, &self.target)
    }
}

impl Drop for Output {
    fn drop(&mut self) {
        if self.w.take().is_some() {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}
