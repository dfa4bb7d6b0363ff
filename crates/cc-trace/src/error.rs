//! The one error of every input: which file, which line and what is wrong.

use std::fmt;
use std::path::{Path, PathBuf};

/// A problem with an input: which file, which line (1-based; `None` for the whole file or the
/// command line) and what is wrong. Reported with exit code 2.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError {
    /// The file, or `--set` for a command-line parameter.
    pub file: PathBuf,
    /// 1-based line number, where one applies.
    pub line: Option<u64>,
    /// What is wrong, in words a user can act on.
    pub msg: String,
}

impl InputError {
    /// An error at `line` of `file`.
    pub fn at(file: &Path, line: u64, msg: impl Into<String>) -> Self {
        Self {
            file: file.to_path_buf(),
            line: Some(line),
            msg: msg.into(),
        }
    }
    /// An error about a whole file.
    pub fn file(file: &Path, msg: impl Into<String>) -> Self {
        Self {
            file: file.to_path_buf(),
            line: None,
            msg: msg.into(),
        }
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(l) => write!(f, "{}:{}: {}", self.file.display(), l, self.msg),
            None => write!(f, "{}: {}", self.file.display(), self.msg),
        }
    }
}

impl std::error::Error for InputError {}

/// In JSON reports an error is an object: `{"file": …, "line": … or null, "message": …}`.
impl serde::Serialize for InputError {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct as _;
        let mut st = s.serialize_struct("InputError", 3)?;
        st.serialize_field("file", &self.file.display().to_string())?;
        st.serialize_field("line", &self.line)?;
        st.serialize_field("message", &self.msg)?;
        st.end()
    }
}
