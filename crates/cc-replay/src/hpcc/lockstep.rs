//! Lockstep replay: the fixed-point crate and the f64 reference side by side, one [`Flow`] per
//! trace (or per capture flow).

use super::Row;
use super::params::Setup;
use super::reference::RefState;
use crate::driver::{SideBySide, Tally};
use crate::kinds::Kind;
use crate::opts::{Mode, ReplayOpts};
use crate::summary::{Counts, Summary, rel_err};
use cc_output::plot::{Envelope, Panel};
use cc_trace::kinds::{InForce, in_force};
use cc_trace::{InputError, Param};
use hpcc_cc::{RawParts, State, U24F8, U32F32};
use std::path::{Path, PathBuf};

/// The `--out` columns, exactly.
pub const OUT_HEADER: &str = "event,t_ns,u_ref,u_fixed,window_ref_bytes,window_fixed_bytes,rate_ref_bps,rate_fixed_bps,branch_ref,branch_fixed";

/// Quantises the reference state into the firmware's raw parts (forced mode).
pub fn quantise(r: &RefState) -> RawParts {
    let q = |x: f64, scale: f64| (x * scale).round().clamp(0.0, f64::from(u32::MAX)) as u32;
    // U in Q32.32; `as` saturates at u64::MAX (unreachable: U < 2^27, see hpcc-cc docs).
    let q64 = |x: f64| (x * hpcc_cc::U_ONE as f64).round().max(0.0) as u64;
    let mut hops = [0u64; 5];
    let header = r.prev.as_ref().map(|i| {
        for (d, h) in hops.iter_mut().zip(&i.hops) {
            *d = (u64::from(h.code) << 60)
                | (u64::from(h.ts) << 36)
                | (u64::from(h.tx) << 16)
                | u64::from(h.qlen);
        }
        (u16::from(i.nhop) << 12) | i.path_id
    });
    RawParts {
        w_bytes: U24F8::from_bits(q(r.w, 256.0)),
        wc_bytes: U24F8::from_bits(q(r.wc, 256.0)),
        u: U32F32::from_bits(q64(r.u)),
        // Sequence numbers are modulo 2^32 on both sides: keep the low 32 bits.
        last_update_seq: (r.last_update_seq & 0xFFFF_FFFF) as u32,
        inc_stage: r.inc_stage.min(255) as u8,
        int_header: header,
        hops,
    }
}

/// HPCC in the replay driver: both sides of one flow plus what the report adds (branch counts,
/// the largest U error).
pub struct Replay {
    setup: Setup,
    mode: Mode,
    fixed: State,
    reference: RefState,
    u_err_max: f64,
    u_ref_max: f64,
    branches: Counts,
    /// The current row's INT block, decoded (reused from row to row).
    int: Vec<u8>,
    /// ACKs of data not yet sent (`ack_seq` ahead of `snd_nxt`, wrap-aware).
    acks_ahead: u64,
}

impl Replay {
    /// One ACK (`line` of the trace, if it has lines) through both sides.
    pub fn ack(
        &mut self,
        tally: &mut Tally,
        line: Option<u64>,
        t_ns: u64,
        ack_seq: u32,
        snd_nxt: u32,
        int: &[u8],
    ) -> Result<(), InputError> {
        let at = tally.at(t_ns, line);
        if self.mode == Mode::Forced {
            self.fixed = State::from_raw_parts(quantise(&self.reference));
        }
        let up = self.fixed.on_ack(&self.setup.cfg, ack_seq, snd_nxt, int);
        let br = self
            .reference
            .on_ack(u64::from(ack_seq), u64::from(snd_nxt), int);
        let bf = up.branch.name();
        tally.agreement.add(br == bf, at);
        // `bad` (malformed INT) and `skip` (no hop advanced: a duplicate INT) leave the state as
        // it was on both sides; `init` and `resync` only store the INT. Only `ai` and `md` move
        // the window by HPCC Alg. 1.
        if (br == "bad" && bf == "bad") || (br == "skip" && bf == "skip") {
            tally.skipped += 1;
        }
        // An ACK of data not yet sent (ahead of snd_nxt on the 32-bit wrapping sequence space)
        // cannot come from a real flow: both sides still take it, as firmware would, but it is
        // counted apart and not as a meaningful step.
        let ahead = (ack_seq.wrapping_sub(snd_nxt) as i32) > 0;
        if ahead {
            self.acks_ahead += 1;
            tally.implausible("ACKs ahead of snd_nxt");
        } else if matches!(br, "ai" | "md") {
            tally.meaningful += 1;
        }
        self.branches.add(br);
        let w_ref = self.reference.w;
        let w_fix: f64 = up.window_bytes.to_num();
        let e = rel_err(w_fix, w_ref);
        tally.err.add(e, at);
        let u_ref = self.reference.u;
        let u_fix: f64 = self.fixed.u().to_num();
        self.u_err_max = self.u_err_max.max((u_fix - u_ref).abs());
        self.u_ref_max = self.u_ref_max.max(u_ref);
        if tally.writes_rows() {
            tally.row(format_args!(
                "{},{},{:.9},{:.9},{:.6},{:.6},{:.1},{},{},{}",
                at.event,
                t_ns,
                u_ref,
                u_fix,
                w_ref,
                w_fix,
                self.reference.rate_bps(),
                up.rate_bps,
                br,
                bf
            ))?;
        }
        tally.plot(at.event, t_ns, &[w_ref, w_fix, u_ref, u_fix, e], br != bf);
        tally.events += 1;
        Ok(())
    }
}

impl SideBySide for Replay {
    const KIND: Kind = super::KIND;
    const OUT_HEADER: &'static str = OUT_HEADER;
    // Window (ref, fixed), U (ref, fixed), window relative error.
    const PLOT_SERIES: usize = 5;
    type Setup = Setup;
    type Row = Row;

    fn setup(_trace: &Path, params: &[Param]) -> Result<Setup, InputError> {
        Setup::from_params(params)
    }

    fn new(setup: &Setup, mode: Mode) -> Self {
        Self {
            setup: *setup,
            mode,
            fixed: State::new(&setup.cfg),
            reference: RefState::new(setup.refp),
            u_err_max: 0.0,
            u_ref_max: 0.0,
            branches: Counts::default(),
            int: Vec::new(),
            acks_ahead: 0,
        }
    }

    fn step(
        &mut self,
        trace: &Path,
        line: u64,
        r: &Row,
        tally: &mut Tally,
    ) -> Result<(), InputError> {
        let mut int = std::mem::take(&mut self.int);
        let done = r
            .int_bytes_into(trace, line, &mut int)
            .and_then(|()| self.ack(tally, Some(line), r.t_ns, r.ack_seq, r.snd_nxt, &int));
        self.int = int;
        done
    }

    fn finish(self, _tally: &Tally, s: &mut Summary) {
        let counts: serde_json::Map<String, serde_json::Value> = self
            .branches
            .by_name()
            .iter()
            .map(|(k, v)| ((*k).to_string(), (*v).into()))
            .collect();
        s.detail("branches (ref)", counts);
        s.detail("U max abs. error", self.u_err_max);
        s.detail("U max (ref)", self.u_ref_max);
        if self.acks_ahead > 0 {
            s.detail("ACKs ahead of snd_nxt", self.acks_ahead);
        }
    }

    fn panels(env: &Envelope, div: f64) -> Vec<Panel> {
        vec![
            env.ref_vs_fixed(0, div, "window (bytes)"),
            env.ref_vs_fixed(2, div, "U (normalised inflight)"),
            env.rel_err_panel(4, div, "window rel. error"),
        ]
    }
}

/// One flow fed ACK by ACK (a capture's flows, tests): the [`Replay`] lockstep with its own
/// [`Tally`].
pub struct Flow {
    name: String,
    ls: Replay,
    tally: Tally,
    in_force: Vec<InForce>,
}

impl Flow {
    /// A new flow run with `setup`, built from the parameters `given` (listed with their origins
    /// in the report); `out`/`plot` are the files to write. A capture's flow is named
    /// `FILE#FLOW`; its `--out` says `# sim-host replay of FILE, flow FLOW`.
    pub fn new(
        name: String,
        setup: Setup,
        given: &[Param],
        mode: Mode,
        out: Option<PathBuf>,
        plot: Option<PathBuf>,
    ) -> Result<Flow, InputError> {
        let in_force = in_force(&setup, Some(&Setup::default()), given);
        let shown = match name.rsplit_once('#') {
            Some((file, flow)) => format!("{file}, flow {flow}"),
            None => name.clone(),
        };
        let tally = Tally::with_outputs(
            out,
            plot,
            Path::new(""),
            &shown,
            super::INFO.agreement,
            OUT_HEADER,
            Replay::PLOT_SERIES,
            &in_force,
        )?;
        Ok(Flow {
            name,
            ls: Replay::new(&setup, mode),
            tally,
            in_force,
        })
    }

    /// Replays one ACK through both sides.
    pub fn event(
        &mut self,
        line: Option<u64>,
        t_ns: u64,
        ack_seq: u32,
        snd_nxt: u32,
        int: &[u8],
    ) -> Result<(), InputError> {
        self.ls
            .ack(&mut self.tally, line, t_ns, ack_seq, snd_nxt, int)
    }

    /// Number of events so far.
    pub fn events(&self) -> u64 {
        self.tally.events
    }

    /// Finishes: judges the summary and writes `--out` and `--plot`; a flow with nothing
    /// meaningful compared carries the reason ([`Summary::nothing_to_compare`], its outputs
    /// not written), so that a capture names that flow and keeps the others' verdicts.
    pub fn finish(self, opts: &ReplayOpts) -> Result<Summary, InputError> {
        let short = self
            .name
            .rsplit('/')
            .next()
            .unwrap_or(&self.name)
            .to_string();
        self.tally.finish(
            self.ls,
            self.name,
            &format!("HPCC: {short}"),
            opts,
            self.in_force,
        )
    }
}

/// Replays an INT trace CSV (the one driver, [`crate::driver`]).
pub fn replay_csv(path: &Path, opts: &ReplayOpts) -> Result<Vec<Summary>, InputError> {
    crate::driver::replay_csv::<Replay>(path, opts)
}
