//! `--record DIR`: the TIMELY completions, HPCC ACKs, CATS conductor events and DOCA PCC events of chosen flows,
//! streamed as they happen, in exactly the CSV formats `sim-host replay timely|hpcc|cats|pcc` reads (with every
//! parameter as a `# set` line); HPCC flows also as a RoCEv2 capture (pcapng: the data packets
//! and the ACKs with their INT, PSNs counting packets, the CSV's comment lines and `set`
//! parameters as the section header's comments), written at the end.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// The writers of one run.
/// The replay format a controller's events are recorded in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `replay timely`: one row per completed segment.
    Timely,
    /// `replay hpcc`: one row per ACK the controller got, and a RoCEv2 pcapng.
    Hpcc,
    /// `replay cats`: the conductor's events.
    Cats,
    /// `replay pcc`: the platform's events; `telemetry`: the RTT rows carry the
    /// switch-telemetry record (HPCC on the adapter).
    Pcc {
        /// The RTT rows carry the telemetry record.
        telemetry: bool,
    },
}

/// What one HPCC flow's pcapng is made from.
struct HpccCapture {
    src: u32,
    dst: u32,
    comments: Vec<String>,
    rows: Vec<cc_trace::hpcc::AckRow>,
}

/// `--record`: the recorded flows' events in the replay trace formats (CSV, and a pcapng per
/// HPCC flow), written when the run finishes ([`Recorder::finish`]); or a counting pass that
/// only finds the flow with the most events.
#[derive(Default)]
pub struct Recorder {
    dir: Option<PathBuf>,
    flows: Vec<u32>,
    prefix: String,
    about: Vec<String>,
    files: BTreeMap<u32, (PathBuf, BufWriter<File>)>,
    /// HPCC flows: endpoints, the section header's comments (the CSV's comment lines, `set`
    /// ones as parameters) and ACK rows (true byte counts) for the pcapng.
    acks: BTreeMap<u32, HpccCapture>,
    mtu_bytes: u64,
    /// DOCA PCC under HPCC: RTT rows carry the telemetry record.
    pcc_telemetry: bool,
    /// Rows recorded per flow.
    rows: BTreeMap<u32, u64>,
    /// Counting only ([`Recorder::counting`]): every flow, nothing written.
    count_only: bool,
    /// The first write error, if any.
    pub error: Option<String>,
}

impl Recorder {
    /// Nothing recorded.
    pub fn none() -> Recorder {
        Recorder::default()
    }

    /// Records `flows` into `dir` as `PREFIX_flowN.csv`, with `about` as comment lines.
    /// `mtu_bytes` is the payload per data packet (one PSN each in the capture).
    pub fn new(
        dir: &Path,
        flows: &[u32],
        prefix: &str,
        about: Vec<String>,
        mtu_bytes: u32,
    ) -> Recorder {
        Recorder {
            dir: Some(dir.to_path_buf()),
            flows: flows.to_vec(),
            prefix: prefix.to_string(),
            about,
            mtu_bytes: u64::from(mtu_bytes),
            ..Recorder::default()
        }
    }

    /// Counts the rows every flow would record, writing nothing: the pass that picks the flow
    /// to record when `output.record_flows` is not given ([`Recorder::busiest`]).
    pub fn counting() -> Recorder {
        Recorder {
            count_only: true,
            ..Recorder::default()
        }
    }

    /// Whether flow `id` is recorded.
    pub fn wants(&self, id: u32) -> bool {
        self.count_only || (self.dir.is_some() && self.flows.contains(&id))
    }

    /// Rows recorded per flow (flows that recorded none are left out).
    pub fn rows(&self) -> &BTreeMap<u32, u64> {
        &self.rows
    }

    /// The flow that recorded the most rows (the lowest id on a tie) and its rows.
    pub fn busiest(&self) -> Option<(u32, u64)> {
        self.rows
            .iter()
            .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
            .map(|(&id, &n)| (id, n))
    }

    /// Opens flow `id`'s file: its `# set` lines (`set_lines`) and the header of `format`.
    pub fn open(&mut self, id: u32, format: Format, set_lines: &[String], src: u32, dst: u32) {
        if self.count_only {
            self.pcc_telemetry = matches!(format, Format::Pcc { telemetry: true });
        }
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
        let mut comments = self.about.clone();
        comments.push(format!("flow {id}: host {src} -> host {dst}"));
        comments.extend(set_lines.iter().map(|s| format!("set {s}")));
        let mut head = String::new();
        for c in &comments {
            head.push_str(&format!("# {c}\n"));
        }
        head.push_str(match format {
            Format::Timely => cc_trace::timely::HEADER,
            Format::Hpcc => {
                self.acks.insert(
                    id,
                    HpccCapture {
                        src,
                        dst,
                        comments,
                        rows: Vec::new(),
                    },
                );
                cc_trace::hpcc::HEADER
            }
            Format::Cats => cc_trace::cats::HEADER,
            Format::Pcc { telemetry } => {
                self.pcc_telemetry = telemetry;
                cc_trace::pcc::HEADER
            }
        });
        head.push('\n');
        if let Err(e) = w.write_all(head.as_bytes()) {
            self.error.get_or_insert(format!("{}: {e}", p.display()));
        }
        self.files.insert(id, (p, w));
    }

    fn line(&mut self, id: u32, args: std::fmt::Arguments<'_>) {
        *self.rows.entry(id).or_insert(0) += 1;
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

    /// One HPCC ACK for the capture: the true byte counts (`ack_seq`, the sender's `snd_nxt`).
    pub fn hpcc_capture_row(&mut self, id: u32, t_ns: u64, ack_seq: u64, snd_nxt: u64, int: &[u8]) {
        if let Some(cap) = self.acks.get_mut(&id) {
            cap.rows.push(cc_trace::hpcc::AckRow {
                t_ns,
                ack_seq,
                snd_nxt,
                int: int.to_vec(),
            });
        }
    }

    /// One HPCC ACK as given to the controller.
    pub fn hpcc_row(&mut self, id: u32, t_ns: u64, ack_seq: u32, snd_nxt: u32, int: &[u8]) {
        let mut hex = String::with_capacity(2 * int.len());
        for b in int {
            hex.push_str(&format!("{b:02x}"));
        }
        self.line(id, format_args!("{t_ns},{ack_seq},{snd_nxt},{hex}\n"));
    }

    /// One DOCA PCC event as the adapter got it (`replay pcc`'s row: the type by name, the
    /// union's three fields, under HPCC an RTT response's raw data — the telemetry record — in
    /// hex).
    pub fn pcc_row(&mut self, id: u32, ev: &cc_pcc::Event) {
        use cc_pcc::EventType;
        // A documented type by its row name, any other by its code (as `replay pcc` reads it).
        let ty = cc_trace::pcc::row_name(ev.type_code)
            .map_or_else(|| ev.type_code.to_string(), str::to_string);
        // The row's three union fields by type (TX: first timestamp, 32-byte units, packets;
        // ACK/NACK/CNP: first timestamp, first sequence number, number coalesced); an RTT row
        // under algorithm=hpcc carries the telemetry record (the raw data) and no timestamps.
        let field = |v: u32| v.to_string();
        let (a, b, c) = match ev.event_type() {
            Some(EventType::Tx) => {
                let t = ev.tx();
                (
                    field(t.first_ts_ns),
                    field(u32::from(t.sent_32b_units)),
                    field(u32::from(t.packets)),
                )
            }
            Some(EventType::Ack | EventType::Nack | EventType::Cnp) => {
                let k = ev.ack();
                (
                    field(k.first_ts_ns),
                    field(k.first_sn),
                    field(u32::from(k.coalesced)),
                )
            }
            Some(EventType::Rtt) if self.pcc_telemetry => Default::default(),
            _ => (field(ev.spec[0]), field(ev.spec[1]), field(ev.spec[2])),
        };
        let hex: String = match ev.event_type() {
            Some(EventType::Rtt) if self.pcc_telemetry => ev
                .rtt_raw_data()
                .iter()
                .map(|x| format!("{x:02x}"))
                .collect(),
            _ => String::new(),
        };
        let byte = |v: u8| if v == 0 { String::new() } else { v.to_string() };
        let (sub, flags) = (byte(ev.subtype), byte(ev.flags));
        self.line(
            id,
            format_args!(
                "{ty},{sub},{flags},{},{},{a},{b},{c},{hex}\n",
                ev.flow_tag, ev.ts_ns
            ),
        );
    }

    /// One CATS conductor event (`enqueue` with its priority and bytes, `ack` with the
    /// send-buffer bytes it frees, `feed`).
    pub fn cats_row(&mut self, id: u32, t_ns: u64, event: &str, prio: Option<u8>, bytes: u64) {
        match (event, prio) {
            ("feed", _) => self.line(id, format_args!("{t_ns},feed,,\n")),
            (_, Some(p)) => self.line(id, format_args!("{t_ns},{event},{p},{bytes}\n")),
            (_, None) => self.line(id, format_args!("{t_ns},{event},,{bytes}\n")),
        }
    }

    /// Flushes every file; returns the paths written, or the first error.
    pub fn finish(mut self) -> Result<Vec<PathBuf>, String> {
        let mut paths = Vec::new();
        if let Some(dir) = &self.dir {
            for (id, cap) in std::mem::take(&mut self.acks) {
                // Host h is 10.0.x.y with x.y = h + 1 (no .0 address).
                let ip = |h: u32| [10, 0, ((h + 1) >> 8) as u8, (h + 1) as u8];
                let flow = cc_trace::capture::CaptureFlow {
                    src: ip(cap.src),
                    dst: ip(cap.dst),
                    // Each end its own QPN, as NICs write them: the sender's (carried by
                    // the ACKs) and the receiver's (carried by the data).
                    data_qp: 0x40_0000 + id + 1,
                    ack_qp: id + 1,
                    sport: 0xC000 | (id & 0x3FFF) as u16,
                    psn0: 0,
                    pkt_bytes: self.mtu_bytes.max(1),
                    seq0: 0,
                    rows: cap.rows,
                };
                let frames = cc_trace::capture::frames_of(&[flow]);
                // The CSV's comment lines go into the section header, `set` ones as the
                // parameters a replay of the capture applies.
                let bytes = cc_trace::capture::write_pcapng_with(&frames, 128, 9, 0, &cap.comments);
                let p = dir.join(format!("{}_flow{id}.pcapng", self.prefix));
                let tmp = cc_output::output::temp_beside(&p);
                let written = std::fs::write(&tmp, bytes)
                    .map_err(|e| format!("{}: {e}", tmp.display()))
                    .and_then(|()| {
                        cc_output::output::commit_temp(&tmp, &p).map_err(|e| e.to_string())
                    });
                match written {
                    Ok(()) => paths.push(p),
                    Err(e) => {
                        let _ = std::fs::remove_file(&tmp);
                        self.error.get_or_insert(e);
                    }
                }
            }
        }
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
