//! `--record DIR`: the TIMELY completions and HPCC ACKs of chosen flows, streamed as they
//! happen, in exactly the CSV formats `sim-host replay timely|hpcc` reads (with every
//! parameter as a `# set` line).

use super::ctrl::Setup;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// The writers of one run.
#[derive(Default)]
pub struct Recorder {
    dir: Option<PathBuf>,
    flows: Vec<u32>,
    prefix: String,
    about: Vec<String>,
    files: BTreeMap<u32, (PathBuf, BufWriter<File>)>,
    /// The first write error, if any.
    pub error: Option<String>,
}

impl Recorder {
    /// Nothing recorded.
    pub fn none() -> Recorder {
        Recorder::default()
    }

    /// Records `flows` into `dir` as `PREFIX_flowN.csv`, with `about` as comment lines.
    pub fn new(dir: &Path, flows: &[u32], prefix: &str, about: Vec<String>) -> Recorder {
        Recorder {
            dir: Some(dir.to_path_buf()),
            flows: flows.to_vec(),
            prefix: prefix.to_string(),
            about,
            ..Recorder::default()
        }
    }

    /// Whether flow `id` is recorded.
    pub fn wants(&self, id: u32) -> bool {
        self.dir.is_some() && self.flows.contains(&id)
    }

    /// Opens flow `id`'s file.
    pub fn open(&mut self, id: u32, setup: &Setup, src: u32, dst: u32) {
        let Some(dir) = &self.dir else { return };
        let p = dir.join(format!("{}_flow{id}.csv", self.prefix));
        let f = match File::create(&p) {
            Ok(f) => f,
            Err(e) => {
                self.error
                    .get_or_insert(format!("{}: cannot create: {e}", p.display()));
                return;
            }
        };
        let mut w = BufWriter::new(f);
        let mut head = String::new();
        for a in &self.about {
            head.push_str(&format!("# {a}\n"));
        }
        head.push_str(&format!("# flow {id}: host {src} -> host {dst}\n"));
        for s in setup.set_lines() {
            head.push_str(&format!("# set {s}\n"));
        }
        head.push_str(match setup {
            Setup::Timely { .. } => crate::timely::HEADER,
            Setup::Hpcc { .. } => crate::hpcc::HEADER,
        });
        head.push('\n');
        if let Err(e) = w.write_all(head.as_bytes()) {
            self.error.get_or_insert(format!("{}: {e}", p.display()));
        }
        self.files.insert(id, (p, w));
    }

    fn line(&mut self, id: u32, args: std::fmt::Arguments<'_>) {
        if let Some((p, w)) = self.files.get_mut(&id)
            && let Err(e) = w.write_fmt(args)
        {
            self.error.get_or_insert(format!("{}: {e}", p.display()));
        }
    }

    /// One TIMELY completion.
    pub fn timely_row(&mut self, id: u32, t_send_ns: u64, t_complete_ns: u64, bytes: u32) {
        self.line(id, format_args!("{t_send_ns},{t_complete_ns},{bytes}\n"));
    }

    /// One HPCC ACK as given to the controller.
    pub fn hpcc_row(&mut self, id: u32, t_ns: u64, ack_seq: u32, snd_nxt: u32, int: &[u8]) {
        let mut hex = String::with_capacity(2 * int.len());
        for b in int {
            hex.push_str(&format!("{b:02x}"));
        }
        self.line(id, format_args!("{t_ns},{ack_seq},{snd_nxt},{hex}\n"));
    }

    /// Flushes every file; returns the paths written, or the first error.
    pub fn finish(mut self) -> Result<Vec<PathBuf>, String> {
        let mut paths = Vec::new();
        for (_, (p, mut w)) in std::mem::take(&mut self.files) {
            if let Err(e) = w.flush() {
                self.error.get_or_insert(format!("{}: {e}", p.display()));
            }
            paths.push(p);
        }
        match self.error {
            Some(e) => Err(e),
            None => Ok(paths),
        }
    }
}
