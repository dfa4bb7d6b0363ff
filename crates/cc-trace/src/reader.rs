//! The streaming trace reader: CSV with a header row, `#` comment lines and `# set KEY=VALUE`
//! parameter lines (their grammar is `param.rs`'s). Every error names the file, the line and
//! what is wrong.
//!
//! The reader streams: it holds one record at a time, so a trace of any size replays in bounded
//! memory. Lines come from the fast splitter (`split.rs`) and rows are read by the fast
//! deserializer (`plain.rs`) where they are plain, by the `csv` crate's otherwise.

use crate::param::{comment_param, param_unset};
use crate::plain;
use crate::split::Lines;
use crate::{InputError, Param};
use serde::de::DeserializeOwned;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

/// A streaming CSV trace reader.
pub struct TraceReader {
    path: PathBuf,
    /// The input's lines, split into fields.
    lines: Lines,
    header: csv::StringRecord,
    header_line: u64,
    params: Vec<Param>,
    /// The line as the rules below see it: UTF-8, every field trimmed (reused too).
    record: csv::StringRecord,
    /// A data row has been read: `# set` lines are no longer accepted.
    data_seen: bool,
    /// Whether the header names the row type's fields in order (see `plain`).
    in_order: plain::InOrder,
    /// The first data row, read ahead by [`open`](TraceReader::open) (its line), so that every
    /// `# set` line before it is known when the parameters are taken.
    pending: Option<u64>,
}

/// Reads the first non-comment line of a file (the header row), for recognising a trace's kind.
pub fn sniff_header(path: &Path) -> Result<(u64, String), InputError> {
    let f = File::open(path).map_err(|e| InputError::file(path, format!("cannot open: {e}")))?;
    let mut r = BufReader::new(f);
    let mut line = String::new();
    let mut n = 0u64;
    loop {
        line.clear();
        n += 1;
        let got = r
            .read_line(&mut line)
            .map_err(|e| InputError::at(path, n, format!("cannot read: {e}")))?;
        if got == 0 {
            return Err(InputError::file(
                path,
                "no header row (the file is empty or all comments)",
            ));
        }
        let t = line.trim().trim_start_matches('\u{feff}').trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        return Ok((n, t.replace(' ', "")));
    }
}

impl TraceReader {
    /// Opens a trace, reads its leading comments and `# set` lines, and its header row.
    /// Every `# set` line before the first data row is read here (the first data row is held
    /// back for [`next_row`](Self::next_row)), so [`params`](Self::params) is complete.
    pub fn open(path: &Path) -> Result<Self, InputError> {
        let f =
            File::open(path).map_err(|e| InputError::file(path, format!("cannot open: {e}")))?;
        Self::from_reader(path, Box::new(BufReader::with_capacity(1 << 16, f)))
    }

    /// Same as [`open`](Self::open) over any reader; `path` is only used in messages.
    pub fn from_reader(path: &Path, inner: Box<dyn Read + Send>) -> Result<Self, InputError> {
        let mut me = Self::lines(path, inner);
        loop {
            let Some(line) = me.read_raw()? else {
                return Err(InputError::file(
                    path,
                    "no header row (the file is empty or all comments)",
                ));
            };
            if line == 1 {
                me.strip_bom();
            }
            if me.is_blank() {
                continue;
            }
            if me.is_comment() {
                me.take_comment(line)?;
                continue;
            }
            me.header = me.record.clone();
            me.header_line = line;
            break;
        }
        // `# set` lines may stand between the header row and the first data row: read up to that
        // row now, so that [`params`](Self::params) is complete before any row is replayed.
        while let Some(line) = me.read_raw()? {
            if me.is_blank() {
                continue;
            }
            if me.is_comment() {
                me.take_comment(line)?;
                continue;
            }
            me.pending = Some(line);
            break;
        }
        Ok(me)
    }

    /// A reader before its first line.
    fn lines(path: &Path, inner: Box<dyn Read + Send>) -> Self {
        Self {
            path: path.to_path_buf(),
            lines: Lines::new(inner),
            header: csv::StringRecord::new(),
            header_line: 0,
            params: Vec::new(),
            record: csv::StringRecord::new(),
            data_seen: false,
            in_order: plain::InOrder::default(),
            pending: None,
        }
    }

    /// Reads the next line into `record` ([`Lines::read`]); returns its line number.
    fn read_raw(&mut self) -> Result<Option<u64>, InputError> {
        self.lines.read(&self.path, &mut self.record)
    }

    fn is_comment(&self) -> bool {
        self.record.get(0).is_some_and(|f| f.starts_with('#'))
    }

    /// A blank line (one empty field). A row of empty fields (`,,`) is not blank: it is an
    /// error at its line.
    fn is_blank(&self) -> bool {
        self.record.len() <= 1 && self.record.iter().all(str::is_empty)
    }

    /// A UTF-8 byte-order mark before the first field (spreadsheets write one) is dropped.
    fn strip_bom(&mut self) {
        if let Some(f) = self.record.get(0)
            && let Some(rest) = f.strip_prefix('\u{feff}')
        {
            let mut r = csv::StringRecord::new();
            r.push_field(rest.trim());
            for x in self.record.iter().skip(1) {
                r.push_field(x);
            }
            let pos = self.record.position().cloned();
            r.set_position(pos);
            self.record = r;
        }
    }

    /// The comment's text; `# set KEY=VALUE` lines become parameters ([`comment_param`]).
    /// Refused in this order: a malformed or mistyped `set` line, a `set` after the first data
    /// row, a key set twice.
    fn take_comment(&mut self, line: u64) -> Result<(), InputError> {
        let text = self.record.iter().collect::<Vec<_>>().join(",");
        let body = text.trim_start_matches('#').trim();
        let err = |msg| InputError::at(&self.path, line, msg);
        let Some((k, v)) = comment_param(body, "# ").map_err(err)? else {
            return Ok(());
        };
        if self.data_seen {
            return Err(err(format!(
                "`# set {k}` after the first data row: parameters must come before the data"
            )));
        }
        param_unset(&self.params, k, "# ").map_err(err)?;
        self.params.push(Param {
            key: k.to_string(),
            value: v.to_string(),
            source: self.path.clone(),
            line: Some(line),
        });
        Ok(())
    }

    /// The trace file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The `# set` parameters, in file order: every one before the first data row (a `# set`
    /// line after it is an error at [`next_row`](Self::next_row)).
    pub fn params(&self) -> &[Param] {
        &self.params
    }

    /// The header row as written (fields joined by `,`).
    pub fn header(&self) -> String {
        self.header.iter().collect::<Vec<_>>().join(",")
    }

    /// Fails unless the header row is exactly `expected`.
    pub fn expect_header(&self, expected: &str) -> Result<(), InputError> {
        let got = self.header();
        if got == expected {
            Ok(())
        } else {
            Err(InputError::at(
                &self.path,
                self.header_line,
                format!("header row is {got:?}, expected {expected:?}"),
            ))
        }
    }

    /// The next data row, deserialised by the header's field names, with its line number.
    /// Comment lines are skipped; a `# set` line here is an error.
    pub fn next_row<T: DeserializeOwned>(&mut self) -> Option<Result<(u64, T), InputError>> {
        loop {
            let line = match self.pending.take() {
                Some(l) => l,
                None => match self.read_raw() {
                    Ok(Some(l)) => l,
                    Ok(None) => return None,
                    Err(e) => return Some(Err(e)),
                },
            };
            if self.is_blank() {
                continue;
            }
            if self.is_comment() {
                if let Err(e) = self.take_comment(line) {
                    return Some(Err(e));
                }
                continue;
            }
            self.data_seen = true;
            if self.record.iter().all(str::is_empty) {
                return Some(Err(InputError::at(
                    &self.path,
                    line,
                    "empty row (only commas)",
                )));
            }
            // The csv crate reads `0x100` as 256 for an integer field: traces are decimal, so a
            // `0x` prefix is a mistake (the HPCC INT column is bare hex).
            if let Some((i, f)) = self
                .record
                .iter()
                .enumerate()
                .find(|(_, f)| f.starts_with("0x") || f.starts_with("0X"))
            {
                return Some(Err(InputError::at(
                    &self.path,
                    line,
                    format!(
                        "field {}: {f:?} has a 0x prefix (numbers are decimal; the INT block is bare hex)",
                        self.header.get(i).unwrap_or("?")
                    ),
                )));
            }
            if self.record.len() != self.header.len() {
                return Some(Err(InputError::at(
                    &self.path,
                    line,
                    format!(
                        "{} fields, the header has {}",
                        self.record.len(),
                        self.header.len()
                    ),
                )));
            }
            if let Ok(v) = T::deserialize(&mut plain::Plain::new(
                &self.header,
                &self.record,
                &self.in_order,
            )) {
                return Some(Ok((line, v)));
            }
            return Some(
                self.record
                    .deserialize::<T>(Some(&self.header))
                    .map(|v| (line, v))
                    .map_err(|e| {
                        let what = match e.kind() {
                            csv::ErrorKind::Deserialize { err, .. } => {
                                let field = err
                                    .field()
                                    .and_then(|i| self.header.get(i as usize))
                                    .unwrap_or("?");
                                let val = err
                                    .field()
                                    .and_then(|i| self.record.get(i as usize))
                                    .unwrap_or("");
                                format!("field {field}: cannot read {val:?} ({})", err.kind())
                            }
                            _ => e.to_string(),
                        };
                        InputError::at(&self.path, line, what)
                    }),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize, PartialEq)]
    struct Row {
        a: u64,
        b: i64,
    }

    fn reader(text: &str) -> Result<TraceReader, InputError> {
        TraceReader::from_reader(
            Path::new("t.csv"),
            Box::new(std::io::Cursor::new(text.to_string().into_bytes())),
        )
    }

    #[test]
    fn reads_params_header_and_rows() {
        let mut r = reader(
            "# made by hand, with a comma\n# set alpha=0.5\n\na,b\n1,2\n# mid comment\n3,-4\n",
        )
        .unwrap();
        assert_eq!(r.header(), "a,b");
        assert_eq!(r.params().len(), 1);
        assert_eq!(
            (r.params()[0].key.as_str(), r.params()[0].value.as_str()),
            ("alpha", "0.5")
        );
        assert_eq!(r.params()[0].line, Some(2));
        let rows: Vec<_> = std::iter::from_fn(|| r.next_row::<Row>())
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(
            rows,
            vec![(5, Row { a: 1, b: 2 }), (7, Row { a: 3, b: -4 })]
        );
    }

    #[test]
    fn bad_field_names_line_and_field() {
        let mut r = reader("a,b\n1,2\n1,x\n").unwrap();
        assert!(r.next_row::<Row>().unwrap().is_ok());
        let e = r.next_row::<Row>().unwrap().unwrap_err();
        assert_eq!(e.line, Some(3));
        assert!(e.msg.contains("field b"), "{e}");
        assert!(e.to_string().starts_with("t.csv:3: "), "{e}");
    }

    #[test]
    fn an_error_names_the_line_it_is_on() {
        let mut r = reader("a,b\n1,2\n\n\n1,x\n").unwrap();
        assert!(r.next_row::<Row>().unwrap().is_ok());
        let e = r.next_row::<Row>().unwrap().unwrap_err();
        assert_eq!(e.line, Some(5), "{e}");
    }

    #[test]
    fn wrong_field_count_is_reported() {
        let mut r = reader("a,b\n1,2,3\n").unwrap();
        let e = r.next_row::<Row>().unwrap().unwrap_err();
        assert_eq!(e.line, Some(2));
        assert!(e.msg.contains("3 fields"), "{e}");
    }

    #[test]
    fn set_lines_between_header_and_first_row_are_known_at_open() {
        let mut r = reader("a,b\n# set alpha=0.5\n# note\n# set beta=1\n1,2\n3,4\n").unwrap();
        let keys: Vec<_> = r
            .params()
            .iter()
            .map(|p| (p.key.as_str(), p.line))
            .collect();
        assert_eq!(keys, vec![("alpha", Some(2)), ("beta", Some(4))]);
        let rows: Vec<_> = std::iter::from_fn(|| r.next_row::<Row>())
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(rows, vec![(5, Row { a: 1, b: 2 }), (6, Row { a: 3, b: 4 })]);
    }

    #[test]
    fn set_after_data_is_rejected() {
        let mut r = reader("a,b\n1,2\n# set x=1\n").unwrap();
        assert!(r.next_row::<Row>().unwrap().is_ok());
        let e = r.next_row::<Row>().unwrap().unwrap_err();
        assert_eq!(e.line, Some(3));
    }

    #[test]
    fn empty_file_has_no_header() {
        assert!(reader("# only a comment\n").is_err());
        assert!(reader("").is_err());
    }

    #[test]
    fn header_mismatch_names_both() {
        let r = reader("x,y\n").unwrap();
        let e = r.expect_header("a,b").unwrap_err();
        assert!(
            e.msg.contains("\"x,y\"") && e.msg.contains("\"a,b\""),
            "{e}"
        );
    }
}
