//! What the fuzz targets share: a byte reader that never fails (missing bytes read as 0), a
//! per-process scratch file for the readers that take a path, and the option byte of the reader
//! targets.
//!
//! Input formats are plain little-endian records, not `arbitrary`, so that `fuzz/seeds.py` can
//! write seed inputs from the shipped fixtures; each target's header comment gives its format.

use cc_replay::opts::{Mode, ReplayOpts};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Reads little-endian integers off the front of a slice; past its end every read is 0.
pub struct Bytes<'a> {
    b: &'a [u8],
}

impl<'a> Bytes<'a> {
    /// A reader over `b`.
    pub fn new(b: &'a [u8]) -> Self {
        Self { b }
    }
    /// No bytes left.
    pub fn is_empty(&self) -> bool {
        self.b.is_empty()
    }
    /// Bytes left.
    pub fn len(&self) -> usize {
        self.b.len()
    }
    /// The next `n` bytes (fewer at the end).
    pub fn take(&mut self, n: usize) -> &'a [u8] {
        let (h, t) = self.b.split_at(n.min(self.b.len()));
        self.b = t;
        h
    }
    fn le<const N: usize>(&mut self) -> [u8; N] {
        let mut a = [0u8; N];
        let h = self.take(N);
        a[..h.len()].copy_from_slice(h);
        a
    }
    /// One byte.
    pub fn u8(&mut self) -> u8 {
        self.le::<1>()[0]
    }
    /// A little-endian `u16`.
    pub fn u16(&mut self) -> u16 {
        u16::from_le_bytes(self.le())
    }
    /// A little-endian `u32`.
    pub fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.le())
    }
    /// A little-endian `u64`.
    pub fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.le())
    }
}

/// This process's scratch directory (`$TMPDIR/dc-cc-fuzz-<pid>`), created once.
pub fn scratch_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("dc-cc-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(&d).expect("create the fuzz scratch directory");
        d
    })
}

/// Writes `bytes` to `name` in the scratch directory (overwriting it) and returns its path.
pub fn scratch_file(name: &str, bytes: &[u8]) -> PathBuf {
    let p = scratch_dir().join(name);
    std::fs::write(&p, bytes).expect("write the fuzz scratch file");
    p
}

/// The reader targets' option byte: bit 0 forced mode (else free), bit 1 `--out`, bit 2
/// `--plot` (both into the scratch directory).
pub fn replay_opts(opt: u8) -> ReplayOpts {
    ReplayOpts {
        mode: if opt & 1 != 0 {
            Mode::Forced
        } else {
            Mode::Free
        },
        out: (opt & 2 != 0).then(|| scratch_dir().join("out.csv")),
        plot: (opt & 4 != 0).then(|| scratch_dir().join("plot.svg")),
        ..ReplayOpts::default()
    }
}

/// An error from a reader must say where: its file is the trace or an output file, and a line,
/// when given, is 1-based and inside the file (at most one past its last line). Lines end where
/// the reader ends them: at `\n`, `\r\n` or a lone `\r`.
pub fn check_input_error(e: &cc_trace::InputError, trace: &Path, text: &[u8]) {
    let lone_cr = text
        .iter()
        .enumerate()
        .filter(|&(i, &c)| c == b'\r' && text.get(i + 1) != Some(&b'\n'))
        .count();
    let lines = (text.iter().filter(|&&c| c == b'\n').count() + lone_cr) as u64 + 1;
    assert!(!e.msg.is_empty(), "empty error message: {e:?}");
    if e.file == trace {
        if let Some(l) = e.line {
            assert!((1..=lines).contains(&l), "line {l} of {lines}: {e}");
        }
    } else {
        assert!(
            e.file.starts_with(scratch_dir()) || e.file == Path::new("--set"),
            "error names an unexpected file: {e}"
        );
    }
}

/// A kind's replay entry point (`cc_replay::timely::replay`, …).
pub type Replay =
    fn(&Path, &ReplayOpts) -> Result<Vec<cc_replay::summary::Summary>, cc_trace::InputError>;

/// The CSV reader targets' body: the option byte, then `text` written to a scratch trace,
/// recognised (header row only) and replayed by `replay`, which must return a summary or an
/// error naming the file and a line inside it.
pub fn replay_csv_input(opt: u8, text: &[u8], replay: Replay) {
    let path = scratch_file("trace.csv", text);
    let _ = cc_replay::kinds::Kind::detect(&path);
    match replay(&path, &replay_opts(opt)) {
        Ok(sums) => assert!(!sums.is_empty()),
        Err(e) => check_input_error(&e, &path, text),
    }
}
