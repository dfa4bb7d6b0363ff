//! The fast CSV line splitter under [`TraceReader`](crate::TraceReader): every line split at
//! commas (never quoted), checked to be UTF-8 and every field trimmed, into reused buffers, with
//! its line number counted from the bytes. Every line, and the message for one that cannot be
//! read, is the one the `csv` crate's trimming reader gives.

use crate::InputError;
use std::io::Read;
use std::path::Path;

/// The lines of one input, split into fields.
pub(crate) struct Lines {
    rdr: csv::Reader<LineEnds<Box<dyn Read + Send>>>,
    /// A spare line buffer (the line before's), for the next line.
    raw: Option<csv::ByteRecord>,
}

impl Lines {
    /// An input before its first line.
    pub(crate) fn new(inner: Box<dyn Read + Send>) -> Self {
        let rdr = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .quoting(false)
            .from_reader(LineEnds::new(inner));
        Self { rdr, raw: None }
    }

    /// Reads the next line into `record`: split at commas (never quoted), checked to be UTF-8
    /// and every field trimmed of whitespace; returns its line number (`path` names the input in
    /// errors). No allocation per line: the line is split into the buffer of the line before;
    /// when no field has anything to trim (the usual case) that buffer becomes `record` as it
    /// is, and otherwise the trimmed fields are copied into `record`.
    pub(crate) fn read(
        &mut self,
        path: &Path,
        record: &mut csv::StringRecord,
    ) -> Result<Option<u64>, InputError> {
        let mut raw = self.raw.take().unwrap_or_default();
        match self.rdr.read_byte_record(&mut raw) {
            Ok(true) => {}
            Ok(false) => {
                self.raw = Some(raw);
                record.clear();
                return Ok(None);
            }
            Err(e) => {
                self.raw = Some(raw);
                record.clear();
                let line = e.position().map_or(0, csv::Position::line);
                return Err(InputError::at(path, line, format!("cannot read: {e}")));
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
                    self.raw = Some(std::mem::replace(record, rec).into_byte_record());
                    return Ok(Some(line));
                }
                Err(e) => raw = e.into_byte_record(),
            }
        }
        record.clear();
        let done = trimmed_fields(path, record, &raw, &pos);
        self.raw = Some(raw);
        done?;
        record.set_position(Some(pos));
        Ok(Some(line))
    }
}

/// The fields of `raw` (a line at `pos` of `path`), trimmed, into `record` (empty before); an
/// error naming the field when one is not UTF-8, as csv words it.
fn trimmed_fields(
    path: &Path,
    record: &mut csv::StringRecord,
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
            record.push_field(trim(f));
            at += field.len();
        }
        if record.len() == raw.len() {
            return Ok(());
        }
        record.clear();
    }
    for (i, field) in raw.iter().enumerate() {
        match std::str::from_utf8(field) {
            Ok(f) => record.push_field(trim(f)),
            Err(e) => {
                record.clear();
                // Counted from the field's first byte after leading ASCII whitespace.
                let lead = field.len() - field.trim_ascii_start().len();
                return Err(InputError::at(
                    path,
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

/// The reader under the CSV splitter: it notes where every line ends (a `\n`, a `\r\n`, or a
/// lone `\r`, as csv splits them), so that a record's line number is counted from the bytes.
/// Only the line ends not yet passed are kept: memory does not grow with the file.
struct LineEnds<R> {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every line of `bytes` as the splitter gives it (line number and fields, or the error), up
    /// to the first error.
    fn lines_of(bytes: &[u8]) -> Vec<Result<(u64, Vec<String>), String>> {
        let mut r = Lines::new(Box::new(std::io::Cursor::new(bytes.to_vec())));
        let mut record = csv::StringRecord::new();
        let mut v = Vec::new();
        loop {
            match r.read(Path::new("t.csv"), &mut record) {
                Ok(Some(line)) => v.push(Ok((line, record.iter().map(String::from).collect()))),
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
    }

    /// The reader splits and trims lines into reused buffers; every line and error message
    /// (invalid UTF-8 included) is the one the `csv` crate's trimming reader gives, and every
    /// line number is the line's in the bytes:
    /// every input of up to 3 pieces from an alphabet of separators, line ends, ASCII and
    /// Unicode whitespace, a byte-order mark, multi-byte and invalid UTF-8, then 10 000 longer
    /// ones from a fixed pseudo-random sequence.
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
}
