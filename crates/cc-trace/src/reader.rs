//! Reading trace files: CSV with a header row, `#` comment lines and `# set KEY=VALUE` parameter
//! lines. Every error names the file, the line and what is wrong.
//!
//! The reader streams: it holds one record at a time, so a trace of any size replays in bounded
//! memory.

use serde::de::DeserializeOwned;
use std::fmt;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
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

/// One `KEY=VALUE` parameter and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Param {
    /// Parameter name (a `Config` field name).
    pub key: String,
    /// Its value, as written.
    pub value: String,
    /// The trace file, or `--set` when it came from the command line.
    pub source: PathBuf,
    /// Line in `source` (`None` for the command line).
    pub line: Option<u64>,
}

impl Param {
    /// An error about this parameter, pointing at where it was set.
    pub fn error(&self, msg: impl Into<String>) -> InputError {
        InputError {
            file: self.source.clone(),
            line: self.line,
            msg: msg.into(),
        }
    }

    /// Parses the value as a number (or anything `FromStr`), naming the key on failure.
    pub fn parse<T: std::str::FromStr>(&self) -> Result<T, InputError> {
        self.value.trim().parse::<T>().map_err(|_| {
            self.error(format!(
                "parameter {}: cannot read {:?} as a {}",
                self.key,
                self.value,
                short_type_name::<T>()
            ))
        })
    }
}

/// The one set of rules for parameter values, used by every kind:
/// * whole numbers: decimal digits, `_` between digits allowed (`10_000_000`), or an exact
///   scientific form (`10e9`, `2.5e6`); no sign, no fraction, no `0x`;
/// * ratios: a decimal with at most 9 decimals (`0.875`, kept exact as 875/1000) or a fraction
///   of whole numbers (`7/8`);
/// * decimals (CATS multipliers): any finite number ≥ 0;
/// * booleans: `true`/`false`, `on`/`off`, `yes`/`no`, `1`/`0`.
impl Param {
    /// A whole number ≥ 0 (see the rules above).
    pub fn uint(&self) -> Result<u64, InputError> {
        let v = self.value.trim();
        let bad = || {
            self.error(format!(
                "parameter {}: {v:?} is not a whole number ≥ 0 (write 10000000, 10_000_000 or 10e6)",
                self.key
            ))
        };
        let digits = v.replace('_', "");
        if v.starts_with('_') || v.ends_with('_') || v.contains("__") {
            return Err(bad());
        }
        if !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit()) {
            return digits.parse::<u64>().map_err(|_| bad());
        }
        // Scientific notation, exact only: `10e9`, `2.5e6`.
        let lower = digits.to_ascii_lowercase();
        let Some((mant, exp)) = lower.split_once('e') else {
            return Err(bad());
        };
        let exp: u32 = exp.parse().map_err(|_| bad())?;
        let (int, frac) = mant.split_once('.').unwrap_or((mant, ""));
        if int.is_empty() || !int.chars().chain(frac.chars()).all(|c| c.is_ascii_digit()) {
            return Err(bad());
        }
        let frac = frac.trim_end_matches('0');
        let shift = exp.checked_sub(frac.len() as u32).ok_or_else(bad)?;
        let m: u64 = format!("{int}{frac}").parse().map_err(|_| bad())?;
        10u64
            .checked_pow(shift)
            .and_then(|p| m.checked_mul(p))
            .ok_or_else(bad)
    }

    /// A whole number that fits `T` (e.g. `u32`), naming its limit otherwise.
    pub fn uint_as<T: TryFrom<u64> + fmt::Display + num_max::Max>(&self) -> Result<T, InputError> {
        let x = self.uint()?;
        T::try_from(x).map_err(|_| {
            self.error(format!(
                "parameter {}: {x} is too large (at most {})",
                self.key,
                T::MAX_VALUE
            ))
        })
    }

    /// A ratio `num/den`, exact (see the rules above).
    pub fn ratio(&self) -> Result<(u32, u32), InputError> {
        let v = self.value.trim();
        let bad = || {
            self.error(format!(
                "parameter {}: {v:?} is not a ratio (write a decimal like 0.875 with at most 9 \
                 decimals, or a fraction like 7/8)",
                self.key
            ))
        };
        if let Some((a, b)) = v.split_once('/') {
            let num = a.trim().parse::<u32>().map_err(|_| bad())?;
            let den = b.trim().parse::<u32>().map_err(|_| bad())?;
            return Ok((num, den));
        }
        let (int, frac) = v.split_once('.').unwrap_or((v, ""));
        if frac.len() > 9
            || (int.is_empty() && frac.is_empty())
            || !int.chars().chain(frac.chars()).all(|c| c.is_ascii_digit())
        {
            return Err(bad());
        }
        let den = 10u64.pow(frac.len() as u32);
        let i: u64 = if int.is_empty() {
            0
        } else {
            int.parse().map_err(|_| bad())?
        };
        let f: u64 = if frac.is_empty() {
            0
        } else {
            frac.parse().map_err(|_| bad())?
        };
        let num = i
            .checked_mul(den)
            .and_then(|x| x.checked_add(f))
            .ok_or_else(bad)?;
        Ok((
            u32::try_from(num).map_err(|_| bad())?,
            u32::try_from(den).map_err(|_| bad())?,
        ))
    }

    /// A finite decimal ≥ 0.
    pub fn decimal(&self) -> Result<f64, InputError> {
        match self.value.trim().parse::<f64>() {
            Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
            _ => Err(self.error(format!(
                "parameter {}: {:?} is not a finite number ≥ 0",
                self.key, self.value
            ))),
        }
    }

    /// A boolean (see the rules above).
    pub fn boolean(&self) -> Result<bool, InputError> {
        match self.value.trim().to_ascii_lowercase().as_str() {
            "true" | "1" | "on" | "yes" => Ok(true),
            "false" | "0" | "off" | "no" => Ok(false),
            _ => Err(self.error(format!(
                "parameter {}: {:?} is not a boolean (true/false)",
                self.key, self.value
            ))),
        }
    }
}

/// The largest value of an integer type, for messages.
pub mod num_max {
    /// `MAX` of an integer type.
    pub trait Max {
        /// The largest value.
        const MAX_VALUE: u64;
    }
    impl Max for u8 {
        const MAX_VALUE: u64 = u8::MAX as u64;
    }
    impl Max for u16 {
        const MAX_VALUE: u64 = u16::MAX as u64;
    }
    impl Max for u32 {
        const MAX_VALUE: u64 = u32::MAX as u64;
    }
    impl Max for u64 {
        const MAX_VALUE: u64 = u64::MAX;
    }
}

fn short_type_name<T>() -> &'static str {
    let n = std::any::type_name::<T>();
    n.rsplit("::").next().unwrap_or(n)
}

/// Parses `KEY=VALUE` from the command line's `--set`.
pub fn parse_cli_set(s: &str) -> Result<Param, String> {
    let (k, v) = s
        .split_once('=')
        .ok_or_else(|| format!("--set {s:?}: expected KEY=VALUE"))?;
    if k.trim().is_empty() {
        return Err(format!("--set {s:?}: empty key"));
    }
    Ok(Param {
        key: k.trim().to_string(),
        value: v.trim().to_string(),
        source: PathBuf::from("--set"),
        line: None,
    })
}

/// The one rule that makes a comment a parameter, for every input that carries parameters as
/// comments (a trace's `# set` lines, a pcapng section header's `set` comments): `set`, in
/// lowercase, then a space or a tab, then `KEY=VALUE`. `body` is the comment's text after its
/// marker (`# ` in a trace, nothing in a pcapng), which errors quote with `marker` before it.
///
/// `Ok(None)`: a descriptive comment. `Ok(Some((key, value)))`, both trimmed: a parameter.
/// Refused, because each would leave a default in force silently: a comment that looks like a
/// mistyped parameter line (`SET k=v`, `Set k=v`, `set: k=v`, `set:k=v`), and a `set` without
/// `KEY=VALUE` or with an empty key.
pub fn comment_param<'a>(
    body: &'a str,
    marker: &str,
) -> Result<Option<(&'a str, &'a str)>, String> {
    let body = body.trim();
    let Some(rest) = body
        .strip_prefix("set ")
        .or_else(|| body.strip_prefix("set\t"))
    else {
        let lower = body.to_ascii_lowercase();
        if lower.starts_with("set ") || lower.starts_with("set\t") || lower.starts_with("set:") {
            return Err(format!(
                "{:?} looks like a parameter line but is not one: write `{marker}set KEY=VALUE` \
                 (lowercase `set`, a space, no colon)",
                format!("{marker}{body}").trim()
            ));
        }
        return Ok(None);
    };
    match rest.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok(Some((k.trim(), v.trim()))),
        _ => Err(format!(
            "`{marker}set` line needs KEY=VALUE, found {:?}",
            rest.trim()
        )),
    }
}

/// Refuses a key that `params` (one input's parameters so far) already sets: an input gives each
/// parameter one value, so a second one is a mistake, not an override (`--set` is the override).
pub fn param_unset(params: &[Param], key: &str, marker: &str) -> Result<(), String> {
    match params.iter().find(|p| p.key == key) {
        None => Ok(()),
        Some(first) => Err(format!(
            "`{marker}set {key}` again (first set {}): one value per parameter",
            first.line.map_or_else(
                || "in an earlier comment".to_string(),
                |l| format!("at line {l}")
            )
        )),
    }
}

/// A streaming CSV trace reader.
pub struct TraceReader {
    path: PathBuf,
    rdr: csv::Reader<LineEnds<Box<dyn Read + Send>>>,
    header: csv::StringRecord,
    header_line: u64,
    params: Vec<Param>,
    /// A spare line buffer (the line before's), for the next line.
    raw: Option<csv::ByteRecord>,
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

/// The reader under the CSV splitter: it notes where every line ends (a `\n`, a `\r\n`, or a
/// lone `\r`, as csv splits them), so that a record's line number is counted from the bytes.
/// Only the line ends not yet passed are kept: memory does not grow with the file.
pub(crate) struct LineEnds<R> {
    inner: R,
    /// Bytes read so far.
    offset: u64,
    /// Offsets of the line ends read but not yet passed by a record.
    ends: std::collections::VecDeque<u64>,
    /// Line ends passed.
    passed: u64,
    /// Where the last `\r` was: a `\n` right after it moves that line end onto itself.
    last_cr: Option<u64>,
}

impl<R> LineEnds<R> {
    fn new(inner: R) -> Self {
        Self {
            inner,
            offset: 0,
            ends: std::collections::VecDeque::new(),
            passed: 0,
            last_cr: None,
        }
    }

    /// The 1-based line of the record that ends at byte `end` (the splitter's position after
    /// it): one more than the line ends before its last byte.
    fn line_of(&mut self, end: u64) -> u64 {
        while let Some(&e) = self.ends.front() {
            if e.saturating_add(1) >= end {
                break;
            }
            self.ends.pop_front();
            self.passed += 1;
        }
        self.passed + 1
    }
}

impl<R: Read> Read for LineEnds<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        let got = buf.get(..n).unwrap_or_default();
        for i in memchr::memchr2_iter(b'\n', b'\r', got) {
            let at = self.offset + i as u64;
            if got.get(i) == Some(&b'\r') {
                self.ends.push_back(at);
                self.last_cr = Some(at);
            } else {
                // `\r\n` is one line end, at the `\n`.
                if at > 0 && self.last_cr == Some(at - 1) && self.ends.back() == Some(&(at - 1)) {
                    self.ends.pop_back();
                }
                self.ends.push_back(at);
            }
        }
        self.offset += n as u64;
        Ok(n)
    }
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
        let rdr = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .quoting(false)
            .from_reader(LineEnds::new(inner));
        Self {
            path: path.to_path_buf(),
            rdr,
            header: csv::StringRecord::new(),
            header_line: 0,
            params: Vec::new(),
            raw: None,
            record: csv::StringRecord::new(),
            data_seen: false,
            in_order: plain::InOrder::default(),
            pending: None,
        }
    }

    /// Reads the next line into `record`: split at commas (never quoted), checked to be UTF-8
    /// and every field trimmed of whitespace; returns its line number. No allocation per line:
    /// the line is split into the buffer of the line before; when no field has anything to
    /// trim (the usual case) that buffer becomes `record` as it is, and otherwise the trimmed
    /// fields are copied into `record`.
    fn read_raw(&mut self) -> Result<Option<u64>, InputError> {
        let mut raw = self.raw.take().unwrap_or_default();
        match self.rdr.read_byte_record(&mut raw) {
            Ok(true) => {}
            Ok(false) => {
                self.raw = Some(raw);
                self.record.clear();
                return Ok(None);
            }
            Err(e) => {
                self.raw = Some(raw);
                self.record.clear();
                let line = e.position().map_or(0, csv::Position::line);
                return Err(InputError::at(
                    &self.path,
                    line,
                    format!("cannot read: {e}"),
                ));
            }
        }
        let mut pos = raw.position().cloned().unwrap_or_else(csv::Position::new);
        // csv's own line number is taken before it skips blank lines and counts a CRLF twice:
        // count from the bytes instead.
        let end = self.rdr.position().byte();
        let line = self.rdr.get_mut().line_of(end);
        pos.set_line(line);
        if raw.iter().all(needs_no_trim) {
            // UTF-8 checked field by field, as csv checks it.
            match csv::StringRecord::from_byte_record(raw) {
                Ok(rec) => {
                    self.raw = Some(std::mem::replace(&mut self.record, rec).into_byte_record());
                    return Ok(Some(line));
                }
                Err(e) => raw = e.into_byte_record(),
            }
        }
        self.record.clear();
        let done = self.trimmed_fields(&raw, &pos);
        self.raw = Some(raw);
        done?;
        self.record.set_position(Some(pos));
        Ok(Some(line))
    }

    /// The fields of `raw` (a line at `pos`), trimmed, into `record` (empty before); an error
    /// naming the field when one is not UTF-8, as csv words it.
    fn trimmed_fields(
        &mut self,
        raw: &csv::ByteRecord,
        pos: &csv::Position,
    ) -> Result<(), InputError> {
        // The whole line at once when it is UTF-8 and no character straddles a comma.
        if let Ok(all) = std::str::from_utf8(raw.as_slice()) {
            let mut at = 0;
            for field in raw {
                let Some(f) = all.get(at..at + field.len()) else {
                    break;
                };
                self.record.push_field(trim(f));
                at += field.len();
            }
            if self.record.len() == raw.len() {
                return Ok(());
            }
            self.record.clear();
        }
        for (i, field) in raw.iter().enumerate() {
            match std::str::from_utf8(field) {
                Ok(f) => self.record.push_field(trim(f)),
                Err(e) => {
                    self.record.clear();
                    // Counted from the field's first byte after leading ASCII whitespace.
                    let lead = field.len() - field.trim_ascii_start().len();
                    return Err(InputError::at(
                        &self.path,
                        pos.line(),
                        format!(
                            "cannot read: CSV parse error: record {} (line {}, field: {i}, \
                             byte: {}): invalid utf-8: invalid UTF-8 in field {i} near byte \
                             index {}",
                            pos.record(),
                            pos.line(),
                            pos.byte(),
                            e.valid_up_to() - lead
                        ),
                    ));
                }
            }
        }
        Ok(())
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

/// Whether a field is certainly left as it is by trimming: empty, or its first and last bytes are
/// ASCII that is not whitespace (to `trim_ascii` or to `str::trim`, which also trims vertical
/// tab).
fn needs_no_trim(field: &[u8]) -> bool {
    let keep = |b: &u8| b.is_ascii() && !b.is_ascii_whitespace() && *b != 0x0b;
    field.first().is_none_or(keep) && field.last().is_none_or(keep)
}

/// `str::trim` (Unicode whitespace), by the ASCII trim when the rest starts and ends with ASCII
/// that is not whitespace (vertical tab is whitespace to `str::trim` but not to `trim_ascii`).
fn trim(f: &str) -> &str {
    let t = f.trim_ascii();
    let plain = |b: &u8| b.is_ascii() && *b != 0x0b;
    match (t.as_bytes().first(), t.as_bytes().last()) {
        (Some(a), Some(z)) if !plain(a) || !plain(z) => t.trim(),
        _ => t,
    }
}

/// The fast way through a row's fields, checked against the `csv` crate's deserializer.
mod plain {
    use serde::de::value::BorrowedBytesDeserializer;
    use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
    use std::fmt;

    /// A row read field by field, the header's names as keys (as the `csv` crate reads a row
    /// with headers), for the plain case only: whole numbers of digits alone, text, and empty
    /// optional fields. Anything else (a sign, an empty number, a float, an enum, a missing
    /// field…) gives up, and the row is read again by `csv`'s deserializer, whose value or
    /// message is the rule; where this succeeds, `csv` gives the same value
    /// (`plain_rows_read_as_the_csv_crate_reads_them`). It saves `csv`'s per-field error
    /// bookkeeping and `str::parse`'s sign and overflow checks on every row.
    pub(super) struct Plain<'a> {
        header_row: &'a csv::StringRecord,
        header: csv::StringRecordIter<'a>,
        fields: std::iter::Peekable<csv::StringRecordIter<'a>>,
        in_order: &'a InOrder,
    }

    /// Whether the header row names a struct's fields in their order, for the last struct
    /// asked about (its field list's address and length: the same address and length are the
    /// same names). Then its fields are read in order instead of by name, with the same result.
    pub(super) type InOrder = std::cell::Cell<Option<(usize, usize, bool)>>;

    impl<'a> Plain<'a> {
        pub(super) fn new(
            header: &'a csv::StringRecord,
            record: &'a csv::StringRecord,
            in_order: &'a InOrder,
        ) -> Self {
            Self {
                header_row: header,
                header: header.iter(),
                fields: record.iter().peekable(),
                in_order,
            }
        }

        fn in_order(&self, names: &'static [&'static str]) -> bool {
            let key = (names.as_ptr() as usize, names.len());
            match self.in_order.get() {
                Some((p, n, yes)) if (p, n) == key => yes,
                _ => {
                    let yes = self.header_row.iter().eq(names.iter().copied());
                    self.in_order.set(Some((key.0, key.1, yes)));
                    yes
                }
            }
        }

        fn field(&mut self) -> Result<&'a str, GiveUp> {
            self.fields.next().ok_or(GiveUp)
        }

        /// Digits only, at most 19 (below 2^64, so the sum cannot overflow), fitting `T`.
        fn number<T: TryFrom<u64>>(&mut self) -> Result<T, GiveUp> {
            let f = self.field()?;
            if f.is_empty() || f.len() > 19 {
                return Err(GiveUp);
            }
            let mut v = 0u64;
            for b in f.bytes() {
                let d = b.wrapping_sub(b'0');
                if d > 9 {
                    return Err(GiveUp);
                }
                v = v * 10 + u64::from(d);
            }
            T::try_from(v).map_err(|_| GiveUp)
        }
    }

    /// Not the plain case: read the row with `csv`'s deserializer instead.
    #[derive(Debug)]
    pub(super) struct GiveUp;

    impl fmt::Display for GiveUp {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("not a plain row")
        }
    }

    impl std::error::Error for GiveUp {}

    impl de::Error for GiveUp {
        fn custom<T: fmt::Display>(_: T) -> Self {
            GiveUp
        }
    }

    impl<'de> de::Deserializer<'de> for &mut Plain<'de> {
        type Error = GiveUp;

        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, GiveUp> {
            Err(GiveUp)
        }

        fn deserialize_u8<V: Visitor<'de>>(self, v: V) -> Result<V::Value, GiveUp> {
            v.visit_u8(self.number()?)
        }

        fn deserialize_u16<V: Visitor<'de>>(self, v: V) -> Result<V::Value, GiveUp> {
            v.visit_u16(self.number()?)
        }

        fn deserialize_u32<V: Visitor<'de>>(self, v: V) -> Result<V::Value, GiveUp> {
            v.visit_u32(self.number()?)
        }

        fn deserialize_u64<V: Visitor<'de>>(self, v: V) -> Result<V::Value, GiveUp> {
            v.visit_u64(self.number()?)
        }

        fn deserialize_str<V: Visitor<'de>>(self, v: V) -> Result<V::Value, GiveUp> {
            v.visit_borrowed_str(self.field()?)
        }

        fn deserialize_string<V: Visitor<'de>>(self, v: V) -> Result<V::Value, GiveUp> {
            v.visit_str(self.field()?)
        }

        /// As `csv`: no field left or an empty one is `None`.
        fn deserialize_option<V: Visitor<'de>>(self, v: V) -> Result<V::Value, GiveUp> {
            match self.fields.peek() {
                None => v.visit_none(),
                Some(&"") => {
                    self.fields.next();
                    v.visit_none()
                }
                Some(_) => v.visit_some(self),
            }
        }

        /// As `csv` with a header row: a map from the header's names to the fields; read in
        /// order when the header names the fields in order.
        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            names: &'static [&'static str],
            v: V,
        ) -> Result<V::Value, GiveUp> {
            if self.in_order(names) {
                v.visit_seq(self)
            } else {
                v.visit_map(self)
            }
        }

        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u128 f32 f64 char bytes byte_buf unit unit_struct
            newtype_struct seq tuple tuple_struct map enum identifier ignored_any
        }
    }

    impl<'de> SeqAccess<'de> for &mut Plain<'de> {
        type Error = GiveUp;

        fn next_element_seed<T: DeserializeSeed<'de>>(
            &mut self,
            seed: T,
        ) -> Result<Option<T::Value>, GiveUp> {
            if self.fields.peek().is_none() {
                return Ok(None);
            }
            seed.deserialize(&mut **self).map(Some)
        }
    }

    impl<'de> MapAccess<'de> for &mut Plain<'de> {
        type Error = GiveUp;

        fn next_key_seed<K: DeserializeSeed<'de>>(
            &mut self,
            seed: K,
        ) -> Result<Option<K::Value>, GiveUp> {
            match self.header.next() {
                None => Ok(None),
                Some(h) => seed
                    .deserialize(BorrowedBytesDeserializer::new(h.as_bytes()))
                    .map(Some),
            }
        }

        fn next_value_seed<V: DeserializeSeed<'de>>(
            &mut self,
            seed: V,
        ) -> Result<V::Value, GiveUp> {
            seed.deserialize(&mut **self)
        }
    }
}

/// The parameters that apply to one replay: the trace's `# set` lines, then `--set` (which wins).
pub fn merged_params(trace: &[Param], cli: &[Param]) -> Vec<Param> {
    trace.iter().chain(cli.iter()).cloned().collect()
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

    /// Every line of `bytes` as the reader sees it (line number and fields, or the error), up
    /// to the first error.
    #[test]
    fn a_comment_is_a_parameter_only_as_lowercase_set_and_key_value() {
        assert_eq!(comment_param("set eta=0.9", "# "), Ok(Some(("eta", "0.9"))));
        assert_eq!(
            comment_param(" set\t eta = 0.9 ", ""),
            Ok(Some(("eta", "0.9")))
        );
        assert_eq!(comment_param("settings as recorded", ""), Ok(None));
        assert_eq!(comment_param("recorded by sim", ""), Ok(None));
        for mistyped in ["SET eta=0.9", "Set eta=0.9", "set:eta=0.9", "set: eta=0.9"] {
            let e = comment_param(mistyped, "# ").unwrap_err();
            assert!(e.contains("looks like a parameter line"), "{mistyped}: {e}");
        }
        for bare in ["set eta", "set =0.9"] {
            let e = comment_param(bare, "").unwrap_err();
            assert!(e.contains("needs KEY=VALUE"), "{bare}: {e}");
        }
    }

    #[test]
    fn a_key_set_twice_is_refused_naming_where_it_was_first_set() {
        let p = |line| Param {
            key: "eta".into(),
            value: "0.9".into(),
            source: "t.csv".into(),
            line,
        };
        assert_eq!(param_unset(&[p(Some(3))], "beta", "# "), Ok(()));
        let e = param_unset(&[p(Some(3))], "eta", "# ").unwrap_err();
        assert!(e.contains("`# set eta` again (first set at line 3)"), "{e}");
        let e = param_unset(&[p(None)], "eta", "").unwrap_err();
        assert!(e.contains("first set in an earlier comment"), "{e}");
    }

    fn lines_of(bytes: &[u8]) -> Vec<Result<(u64, Vec<String>), String>> {
        let mut r = TraceReader::lines(
            Path::new("t.csv"),
            Box::new(std::io::Cursor::new(bytes.to_vec())),
        );
        let mut v = Vec::new();
        loop {
            match r.read_raw() {
                Ok(Some(line)) => v.push(Ok((line, r.record.iter().map(String::from).collect()))),
                Ok(None) => return v,
                Err(e) => {
                    v.push(Err(e.to_string()));
                    return v;
                }
            }
        }
    }

    /// The 1-based numbers of the lines of `bytes` that are not empty (a line ends at `\n`,
    /// `\r\n` or a lone `\r`; a leading byte-order mark is no content): the lines the splitter
    /// yields records for, in order.
    fn nonempty_lines(bytes: &[u8]) -> Vec<u64> {
        // The splitter drops a UTF-8 byte-order mark at the start.
        let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
        let (mut v, mut line, mut empty, mut i) = (Vec::new(), 1u64, true, 0);
        while i < bytes.len() {
            match bytes[i] {
                b'\r' | b'\n' => {
                    if bytes[i] == b'\r' && bytes.get(i + 1) == Some(&b'\n') {
                        i += 1;
                    }
                    if !empty {
                        v.push(line);
                    }
                    line += 1;
                    empty = true;
                }
                _ => empty = false,
            }
            i += 1;
        }
        if !empty {
            v.push(line);
        }
        v
    }

    /// The same lines as the `csv` crate's own trimming reader (`Trim::All` over
    /// `StringRecord`s) splits, trims and refuses them, numbered by the lines of the bytes (the
    /// crate's own numbers lag behind blank lines and CRLF line ends).
    fn csv_lines_of(bytes: &[u8]) -> Vec<Result<(u64, Vec<String>), String>> {
        let mut r = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .quoting(false)
            .trim(csv::Trim::All)
            .from_reader(bytes);
        let lines = nonempty_lines(bytes);
        let mut rec = csv::StringRecord::new();
        let mut v = Vec::new();
        loop {
            let line = lines.get(v.len()).copied().unwrap_or(0);
            match r.read_record(&mut rec) {
                Ok(true) => v.push(Ok((line, rec.iter().map(String::from).collect()))),
                Ok(false) => return v,
                Err(e) => {
                    let theirs = e.position().map_or(0, csv::Position::line);
                    let msg = format!("cannot read: {e}")
                        .replace(&format!("(line {theirs},"), &format!("(line {line},"));
                    v.push(Err(
                        InputError::at(Path::new("t.csv"), line, msg).to_string()
                    ));
                    return v;
                }
            }
        }
    }

    /// The reader splits and trims lines into reused buffers; every line and error message
    /// (invalid UTF-8 included) is the one the `csv` crate's trimming reader gives, and every
    /// line number is the line's in the bytes:
    /// every input of up to 3 pieces from an alphabet of separators, line ends, ASCII and
    /// Unicode whitespace, a byte-order mark, multi-byte and invalid UTF-8, then 10 000 longer
    /// ones from a fixed pseudo-random sequence.
    #[test]
    fn line_numbers_count_blank_lines_and_crlf_line_ends() {
        let num = |text: &[u8]| -> Vec<u64> {
            lines_of(text)
                .into_iter()
                .map(|r| r.map(|(l, _)| l).unwrap_or(0))
                .collect()
        };
        assert_eq!(num(b"h\n1,2,3\n\n\nx,2,3\n"), vec![1, 2, 5]);
        assert_eq!(num(b"h\r\n1\r\n\r\nx\r\n"), vec![1, 2, 4]);
        assert_eq!(num(b"h\r1\r\rx"), vec![1, 2, 4]);
        assert_eq!(num(b"h\n\n\nlast"), vec![1, 4]);
        // An error names the line it is on.
        let mut r = reader("a,b\n1,2\n\n\n1,x\n").unwrap();
        assert!(r.next_row::<Row>().unwrap().is_ok());
        let e = r.next_row::<Row>().unwrap().unwrap_err();
        assert_eq!(e.line, Some(5), "{e}");
    }

    #[test]
    fn lines_are_split_trimmed_and_refused_as_the_csv_crate_does() {
        const PIECES: [&[u8]; 14] = [
            b",",
            b" ",
            b"\t",
            b"\r",
            b"\n",
            b"#",
            b"1",
            b"ab",
            b"\x0b",
            "\u{a0}".as_bytes(),
            "\u{feff}".as_bytes(),
            "\u{e9}".as_bytes(),
            b"\xff",
            b"\xc3",
        ];
        let check = |bytes: &[u8]| {
            assert_eq!(lines_of(bytes), csv_lines_of(bytes), "input {bytes:?}");
        };
        let mut idx = Vec::new();
        for len in 0..=3u32 {
            for n in 0..PIECES.len().pow(len) {
                idx.clear();
                let mut k = n;
                for _ in 0..len {
                    idx.push(k % PIECES.len());
                    k /= PIECES.len();
                }
                check(
                    &idx.iter()
                        .flat_map(|&i| PIECES[i].iter().copied())
                        .collect::<Vec<_>>(),
                );
            }
        }
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..10_000 {
            let mut bytes = Vec::new();
            let len = x % 40;
            for _ in 0..len {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                bytes.extend_from_slice(PIECES[(x % PIECES.len() as u64) as usize]);
            }
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            check(&bytes);
        }
    }

    /// Rows with the fields of every kind and of the tests here (text, optional numbers, signed).
    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Mixed {
        n8: u8,
        s: String,
        o32: Option<u32>,
        i: i64,
    }

    /// Where the plain reading of a row succeeds, the `csv` crate's deserializer gives the same
    /// value (where it gives up, `csv`'s result is used as it is): every combination of field
    /// values (digits, overflow at each width, signs, floats, text, empty, non-ASCII digits) for
    /// every kind's row, a row of mixed fields, a header in another order, with an extra column
    /// and with a missing one.
    #[test]
    fn plain_rows_read_as_the_csv_crate_reads_them() {
        const VALUES: [&str; 16] = [
            "",
            "0",
            "0007",
            "255",
            "256",
            "4294967296",
            "9999999999999999999",
            "18446744073709551615",
            "18446744073709551616",
            "+5",
            "-5",
            "5.0",
            "1e3",
            "enqueue",
            "\u{663}",
            "ab",
        ];
        fn check<T: serde::de::DeserializeOwned + fmt::Debug>(header: &str) -> usize {
            let header = csv::StringRecord::from(header.split(',').collect::<Vec<_>>());
            let n = header.len();
            let mut plain_ok = 0;
            for k in 0..VALUES.len().pow(n as u32) {
                let mut rest = k;
                let rec = csv::StringRecord::from(
                    (0..n)
                        .map(|_| {
                            let v = VALUES[rest % VALUES.len()];
                            rest /= VALUES.len();
                            v
                        })
                        .collect::<Vec<_>>(),
                );
                let in_order = plain::InOrder::default();
                if let Ok(v) = T::deserialize(&mut plain::Plain::new(&header, &rec, &in_order)) {
                    plain_ok += 1;
                    let by_csv = rec.deserialize::<T>(Some(&header));
                    assert_eq!(
                        format!("{:?}", by_csv.as_ref().ok()),
                        format!("{:?}", Some(&v)),
                        "{header:?} {rec:?}"
                    );
                }
            }
            plain_ok
        }
        assert!(check::<crate::timely::Row>(crate::timely::HEADER) > 0);
        assert!(check::<crate::hpcc::Row>(crate::hpcc::HEADER) > 0);
        assert!(check::<crate::cats::Row>(crate::cats::HEADER) > 0);
        assert!(check::<crate::pacer::Row>(crate::pacer::HEADER) > 0);
        assert!(check::<Mixed>("n8,s,o32,i") == 0); // i64 is never plain
        assert!(check::<Row>("b,a") == 0);
        assert!(check::<crate::timely::Row>("bytes,t_complete_ns,t_send_ns") > 0);
        assert!(check::<crate::timely::Row>("t_send_ns,t_complete_ns,bytes,x") == 0);
        assert!(check::<crate::cats::Row>("t_ns,event,prio") > 0);
        check::<crate::timely::Row>("t_send_ns,t_complete_ns");
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

    #[test]
    fn cli_set_parses() {
        let p = parse_cli_set("beta = 0.5").unwrap();
        assert_eq!((p.key.as_str(), p.value.as_str()), ("beta", "0.5"));
        assert!(parse_cli_set("novalue").is_err());
        assert_eq!(p.parse::<f64>().unwrap(), 0.5);
        assert!(p.error("x").to_string().starts_with("--set: "));
    }

    fn param(v: &str) -> Param {
        Param {
            key: "k".into(),
            value: v.into(),
            source: PathBuf::from("--set"),
            line: None,
        }
    }

    /// One rule set for every kind (the three kinds used to parse `_`, `e` and ratios
    /// differently).
    #[test]
    fn one_parameter_rule_set() {
        for (v, want) in [
            ("10000000", Some(10_000_000)),
            ("10_000_000", Some(10_000_000)),
            ("10e6", Some(10_000_000)),
            ("2.5e6", Some(2_500_000)),
            ("25E9", Some(25_000_000_000)),
            ("2.55e1", None),
            ("-1", None),
            ("1.5", None),
            ("0x10", None),
            ("_1", None),
            ("1__0", None),
            ("", None),
            ("1e30", None),
        ] {
            assert_eq!(param(v).uint().ok(), want, "{v:?}");
        }
        assert_eq!(param("0.875").ratio().unwrap(), (875, 1000));
        assert_eq!(param("7/8").ratio().unwrap(), (7, 8));
        assert!(param("0.1234567891").ratio().is_err());
        assert!(param("-0.5").ratio().is_err());
        assert_eq!(
            param("300").uint_as::<u8>().unwrap_err().msg,
            "parameter k: 300 is too large (at most 255)"
        );
        assert!(param("on").boolean().unwrap() && !param("No").boolean().unwrap());
        assert!(param("maybe").boolean().is_err());
        assert!(param("inf").decimal().is_err() && param("-1").decimal().is_err());
    }
}
