//! A RoCEv2 capture replayed: each ACK stream paired with its data stream as the capture is read
//! (`cc_trace::capture` reads, classifies and pairs), one lockstep per flow, one summary per
//! flow, and a summary that says what the capture held when there is nothing to compare.
//!
//! The capture is read once, pairing each ACK stream when it appears, and a second time only
//! when the pairing of the whole capture differs from that or `--out`/`--plot` need the flows
//! named first ([`replay_capture`]).

use super::{Flow, Setup};
use crate::opts::ReplayOpts;
use crate::summary::{Agreement, Summary};
use cc_trace::capture::{
    Ignored, OPCODE_RC_ACK, Pairing, PsnExtender, RocePacket, StreamInfo, StreamKey, Streams,
    capture_params, opcode_name, pair_now, pair_streams, read_capture,
};
use cc_trace::{InputError, Param, merged_params};
use std::net::IpAddr;
use std::path::{Path, PathBuf};

/// `[v6]` for IPv6, plain for IPv4.
fn host(ip: &IpAddr) -> String {
    match ip {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => format!("[{v6}]"),
    }
}

/// A flow's name after `#`: the sender, its QPN (carried by the ACKs), the receiver and its
/// QPN (carried by the data; `?` when no data stream is paired).
fn flow_tag(ack: &StreamKey, data_qp: Option<u32>) -> String {
    let dq = data_qp.map_or("?".to_string(), |q| q.to_string());
    format!("qp{}@{}->qp{dq}@{}", ack.qp, host(&ack.dst), host(&ack.src))
}

/// The `--out`/`--plot` file of one flow of a multi-flow capture: the flow's QPs and endpoints
/// (`out.csv` → `out-qp5@10.0.0.1-qp9@10.0.0.2.csv`), so flows never share a file.
fn suffixed(p: &Path, tag: &str) -> PathBuf {
    let stem = p.file_stem().and_then(|s| s.to_str()).unwrap_or("out");
    let ext = p.extension().and_then(|s| s.to_str()).unwrap_or("");
    let tag = tag.replace("->", "-").replace([':', '[', ']'], "_");
    p.with_file_name(format!("{stem}-{tag}.{ext}"))
}

/// A flow being replayed: its name, its ACK stream and the data stream paired with it, the
/// lockstep (none when no data stream pairs with it), its ACK-side PSN state and ACK count.
struct FlowRun {
    name: String,
    ack_stream: usize,
    data_stream: Option<usize>,
    flow: Option<Flow>,
    last_ack: PsnExtender,
    acks: u64,
}

/// The per-stream state of a replay: data streams track the largest PSN sent
/// ([`PsnExtender::on_data`]); ACK streams point at their flow.
#[derive(Clone, Copy)]
enum StreamState {
    Data(PsnExtender),
    Ack(usize),
}

/// One replay over the file: every data stream's PSNs are tracked, every ACK of a paired flow
/// is replayed through its flow's lockstep; the streams, their state and the flows (started
/// by [`Pass::start_flow`], before the pass or when an ACK stream first appears).
struct Pass {
    streams: Streams,
    state: Vec<StreamState>,
    runs: Vec<FlowRun>,
    orphans: u64,
}

impl Pass {
    fn new(streams: Streams) -> Pass {
        let state = streams
            .list
            .iter()
            .map(|s| {
                if s.key.ack {
                    StreamState::Ack(usize::MAX)
                } else {
                    StreamState::Data(PsnExtender::default())
                }
            })
            .collect();
        Pass {
            streams,
            state,
            runs: Vec::new(),
            orphans: 0,
        }
    }

    /// The stream of `p`, registered (with its state) if new: `(index, new)`.
    fn stream_of(&mut self, p: &RocePacket<'_>) -> (usize, bool) {
        if let Some(i) = self.streams.find(p.stream()) {
            self.streams.list[i].packets += 1;
            if self.streams.list[i].sport != Some(p.sport) {
                self.streams.list[i].sport = None;
            }
            return (i, false);
        }
        self.streams.add(p);
        let i = self.streams.list.len() - 1;
        self.state.push(if p.is_ack() {
            StreamState::Ack(usize::MAX)
        } else {
            StreamState::Data(PsnExtender::default())
        });
        (i, true)
    }

    /// Starts the flow of ACK stream `k`.
    fn start_flow(
        &mut self,
        k: usize,
        pairing: Option<usize>,
        make_flow: &mut impl FnMut(&str, &str) -> Result<Flow, InputError>,
        file: &str,
    ) -> Result<(), InputError> {
        let ack = self.streams.list[k].key;
        let data_qp = pairing.map(|d| self.streams.list[d].key.qp);
        let tag = flow_tag(&ack, data_qp);
        let name = format!("{file}#{tag}");
        let flow = match pairing {
            Some(_) => Some(make_flow(&name, &tag)?),
            None => None,
        };
        self.state[k] = StreamState::Ack(self.runs.len());
        self.runs.push(FlowRun {
            name,
            ack_stream: k,
            data_stream: pairing,
            flow,
            last_ack: PsnExtender::default(),
            acks: 0,
        });
        Ok(())
    }

    /// One packet of stream `i`.
    fn packet(&mut self, i: usize, p: &RocePacket<'_>) -> Result<(), InputError> {
        match self.state[i] {
            StreamState::Data(ref mut ext) => ext.on_data(p.psn),
            StreamState::Ack(f) => {
                let Some(run) = self.runs.get_mut(f) else {
                    return Ok(());
                };
                run.acks += 1;
                if let (Some(flow), Some(d)) = (&mut run.flow, run.data_stream)
                    && let StreamState::Data(data) = self.state[d]
                {
                    // The data stream's largest PSN sent, this ACK stream's last ACK.
                    let mut ext = PsnExtender {
                        max_sent: data.max_sent,
                        last_ack: run.last_ack.last_ack,
                    };
                    let (ack_seq, snd_nxt) = ext.on_ack(p.psn);
                    run.last_ack.last_ack = ext.last_ack;
                    flow.event(None, p.t_ns, ack_seq, snd_nxt, p.int)?;
                }
            }
        }
        Ok(())
    }

    /// Data packets of streams no flow pairs with.
    fn count_orphans(&mut self) {
        let paired: std::collections::HashSet<usize> =
            self.runs.iter().filter_map(|r| r.data_stream).collect();
        self.orphans = self
            .streams
            .list
            .iter()
            .enumerate()
            .filter(|(i, s)| !s.key.ack && !paired.contains(i))
            .map(|(_, s)| s.packets)
            .sum();
    }
}

/// Why a capture compares nothing at all, if it does not: no RoCEv2 packet, no ACK carrying
/// an INT block (what was seen instead), or no data packet to give the ACKs a `snd_nxt`.
fn nothing_in(streams: &[StreamInfo], scan: &Ignored) -> Option<String> {
    let mut why = if scan.roce() == 0 {
        "no RoCEv2 packets (UDP destination port 4791)".to_string()
    } else if !streams.iter().any(|s| s.key.ack) {
        let (acks, _) = scan.opcode(OPCODE_RC_ACK);
        if acks > 0 {
            format!(
                "no RoCEv2 ACK carries an HPCC INT block (RC ACK {acks}, 0 with INT: the INT \
                 block sits right after the UDP header, before the BTH, docs/hpcc.md §7)"
            )
        } else {
            "no RoCEv2 RC ACKs (BTH opcode 0x11): without ACKs there is nothing for HPCC to \
             compare"
                .to_string()
        }
    } else if !streams.iter().any(|s| !s.key.ack) {
        "no RoCEv2 data packets carrying an INT header (UDP port 4791, an RC opcode other than \
         0x11 after an INT block of no hop): the sender's snd_nxt is unknown for every ACK, \
         nothing can be compared"
            .to_string()
    } else {
        return None;
    };
    why.push_str(&format!("; seen: {}", scan.seen()));
    if let Some(cut) = &scan.cut {
        why.push_str(&format!(" ({cut})"));
    }
    Some(why)
}

/// The one result of a capture that compares nothing at all, with what it holds and why.
fn nothing_summary(
    file: &str,
    why: String,
    scan: &Ignored,
    setup: Setup,
    params: &[Param],
    opts: &ReplayOpts,
) -> Vec<Summary> {
    let mut s = Summary::new(
        &super::INFO,
        file.to_string(),
        opts.mode,
        Agreement::new("branch"),
    );
    s.params = cc_trace::kinds::in_force(&setup, Some(&Setup::default()), params)
        .iter()
        .map(crate::summary::ParamReport::from)
        .collect();
    details(scan, &mut s);
    if let Some(cut) = &scan.cut {
        s.detail("warning", cut.clone());
    }
    s.nothing_compared(format!("nothing to compare in {file}: {why}"));
    s.judge(opts.tolerances(&super::INFO));
    vec![s]
}

/// Replays every flow of a capture; one summary per flow (flows in order of their ACK
/// stream's first packet). A flow none of whose ACKs could be compared (no data stream paired
/// with it, or every INT block invalid) fails, named, with the reason; the other flows keep
/// their verdicts.
///
/// Without `--out`/`--plot` the capture is read once: each ACK stream is paired when its first
/// packet is seen, from the streams seen so far; when the pairing of the whole capture turns
/// out different for any ACK stream, the flows are replayed again in a second pass with it.
/// With `--out`/`--plot` (whose names depend on the number of flows), a first pass finds and
/// pairs the streams and a second replays.
pub fn replay_capture(path: &Path, opts: &ReplayOpts) -> Result<Vec<Summary>, InputError> {
    let shown = opts.shown(path);
    let mut from_capture = capture_params(path)?;
    if shown != path {
        // Named as reports name the capture (`-` for standard input).
        for p in &mut from_capture {
            p.source = format!("{} (section header)", shown.display()).into();
        }
    }
    let params = merged_params(&from_capture, &opts.params);
    let setup = Setup::from_params(&params)?;
    let file = shown.display().to_string();
    let mut no_outputs =
        |name: &str, _: &str| Flow::new(name.into(), setup, &params, opts.mode, None, None);
    let streams = if opts.out.is_none() && opts.plot.is_none() {
        // One pass, pairing as streams appear.
        let mut pass = Pass::new(Streams::default());
        let ignored = read_capture(path, |p| {
            let (i, new) = pass.stream_of(&p);
            if new && p.is_ack() {
                let pairing = match pair_now(&pass.streams.list, i) {
                    Pairing::Data(d) => Some(d),
                    Pairing::Unpaired(_) => None,
                };
                pass.start_flow(i, pairing, &mut no_outputs, &file)?;
            }
            pass.packet(i, &p)
        })?;
        if let Some(why) = nothing_in(&pass.streams.list, &ignored) {
            return Ok(nothing_summary(&file, why, &ignored, setup, &params, opts));
        }
        let final_pairs = pair_streams(&pass.streams.list);
        let same = final_pairs.iter().zip(&pass.runs).all(|((k, p), run)| {
            *k == run.ack_stream
                && match p {
                    Pairing::Data(d) => run.data_stream == Some(*d),
                    Pairing::Unpaired(_) => run.data_stream.is_none(),
                }
        }) && final_pairs.len() == pass.runs.len();
        if same {
            pass.count_orphans();
            return summaries(pass, &final_pairs, &ignored, opts);
        }
        pass.streams
    } else {
        let mut streams = Streams::default();
        let scan = read_capture(path, |p| {
            streams.add(&p);
            Ok(())
        })?;
        if let Some(why) = nothing_in(&streams.list, &scan) {
            return Ok(nothing_summary(&file, why, &scan, setup, &params, opts));
        }
        streams
    };
    // The pairing of the whole capture, then one replay with it.
    let pairs = pair_streams(&streams.list);
    let single = pairs.len() == 1;
    let mut with_outputs = |name: &str, tag: &str| {
        let name_out = |o: &Option<PathBuf>| {
            o.as_ref()
                .map(|p| if single { p.clone() } else { suffixed(p, tag) })
        };
        Flow::new(
            name.into(),
            setup,
            &params,
            opts.mode,
            name_out(&opts.out),
            name_out(&opts.plot),
        )
    };
    let mut pass = Pass::new(streams.emptied());
    for (k, p) in &pairs {
        let d = match p {
            Pairing::Data(d) => Some(*d),
            Pairing::Unpaired(_) => None,
        };
        pass.start_flow(*k, d, &mut with_outputs, &file)?;
    }
    let ignored = read_capture(path, |p| {
        let Some(i) = pass.streams.find(p.stream()) else {
            // The first pass saw every stream; the file changed between the passes.
            return Err(InputError::file(
                path,
                "the capture changed while it was read (a stream the first pass did not see)",
            ));
        };
        pass.streams.list[i].packets += 1;
        pass.packet(i, &p)
    })?;
    pass.count_orphans();
    summaries(pass, &pairs, &ignored, opts)
}

/// The judged summary of every flow of a finished pass; `pairs` is the capture's pairing (the
/// reasons of the unpaired flows).
fn summaries(
    pass: Pass,
    pairs: &[(usize, Pairing)],
    ignored: &Ignored,
    opts: &ReplayOpts,
) -> Result<Vec<Summary>, InputError> {
    let plain = ignored.roce() - ignored.opcodes.iter().map(|c| c[1]).sum::<u64>();
    let ignored_line = format!(
        "{} not RoCEv2, {} truncated, {} with no valid BTH, {} without a timestamp, {} RoCEv2 \
         without INT, {} data packets of flows without ACKs",
        ignored.not_roce,
        ignored.truncated,
        ignored.bad_bth,
        ignored.no_timestamp,
        plain,
        pass.orphans
    );
    let mut out = Vec::new();
    for (run, (_, pairing)) in pass.runs.into_iter().zip(pairs) {
        let mut s = match run.flow {
            Some(flow) => flow.finish(opts)?,
            None => {
                let mut s =
                    Summary::new(&super::INFO, run.name, opts.mode, Agreement::new("branch"));
                s.detail("ACKs not replayed", run.acks);
                s
            }
        };
        s.detail("ignored packets", ignored_line.clone());
        details(ignored, &mut s);
        if let Some(cut) = &ignored.cut {
            s.detail("warning", cut.clone());
        }
        if let Pairing::Unpaired(why) = pairing {
            s.nothing_compared(why.clone());
        }
        s.judge(opts.tolerances(&super::INFO));
        out.push(s);
    }
    Ok(out)
}

/// The RoCEv2 packets by opcode as JSON (`"0x11 RC ACK": 175`) and those with INT.
fn opcodes_json(ig: &Ignored, with_int: bool) -> serde_json::Value {
    serde_json::Value::Object(
        (0..=255u8)
            .filter_map(|op| {
                let (all, int) = ig.opcode(op);
                let n = if with_int { int } else { all };
                let show = if with_int {
                    all > 0 && (int > 0 || op == OPCODE_RC_ACK)
                } else {
                    all > 0
                };
                show.then(|| (format!("0x{op:02x} {}", opcode_name(op)), n.into()))
            })
            .collect(),
    )
}

/// The frames that are not RoCEv2, by reason, as JSON.
fn not_roce_json(ig: &Ignored) -> serde_json::Value {
    serde_json::Value::Object(
        ig.not_roce_by
            .iter()
            .map(|(why, n)| (why.to_string(), (*n).into()))
            .collect(),
    )
}

/// The details every summary of the capture carries: what it holds.
fn details(ig: &Ignored, s: &mut Summary) {
    s.detail("capture frames", ig.packets);
    s.detail("RoCEv2 packets", opcodes_json(ig, false));
    s.detail("with INT", opcodes_json(ig, true));
    s.detail("not RoCEv2", not_roce_json(ig));
}
