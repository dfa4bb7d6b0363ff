//! The one replay driver. Every algorithm is a [`SideBySide`]: both sides set up from the same
//! parameters, one step per trace event (feeding the fixed-point crate through its public API
//! and the f64 reference), and a finish that adds the algorithm's own details. The driver owns
//! everything else, once: reading the trace, the `# set` and `--set` parameters, the
//! [`Tally`] (agreement counts, relative-error statistics, the `--out` CSV written whole or
//! not at all, the `--plot` envelope and figure), the verdict.
//!
//! A replay passes only if something meaningful was compared (see [`Tally::meaningful`] and
//! [`MIN_MEANINGFUL_SHARE`]); otherwise its summary carries the reason
//! ([`Summary::nothing_to_compare`]: no verdict, exit 2) and no output is written.

use crate::kinds::Kind;
use crate::opts::{Mode, ReplayOpts};
use crate::summary::{Agreement, At, ErrStats, ParamReport, Summary};
use cc_output::output::Output;
use cc_output::plot::{self, Envelope, Panel};
use cc_trace::kinds::{InForce, in_force};
use cc_trace::{InputError, Param, TraceReader, merged_params};
use serde::de::DeserializeOwned;
use std::path::{Path, PathBuf};

/// The share of a trace's events that must move the reference's state for a verdict, unless
/// `--min-meaningful` says otherwise: a trace that is mostly skipped rows, duplicate INT or zero
/// RTTs says little about the algorithm, however well the two sides agree on it.
pub const MIN_MEANINGFUL_SHARE: f64 = 0.5;

/// One algorithm's side-by-side replay.
pub trait SideBySide: Sized {
    /// The kind: its registry entry gives the header row, what the agreement counts, whether a
    /// relative error is reported, the tolerances and the report's names.
    const KIND: Kind;
    /// The `--out` CSV header row.
    const OUT_HEADER: &'static str;
    /// Series kept for `--plot` (values per [`Tally::plot`] call).
    const PLOT_SERIES: usize;
    /// Both sides' parameters (listed in every report as the parameters in force).
    type Setup: cc_trace::kinds::Values;
    /// One trace row as written.
    type Row: DeserializeOwned;

    /// Both sides' parameters from `# set` lines then `--set` (later wins).
    fn setup(trace: &Path, params: &[Param]) -> Result<Self::Setup, InputError>;
    /// The setup a trace with these parameters is compared against to tell which values
    /// differ from the defaults: none given (a kind whose parameters pick the table of
    /// defaults, as `pcc`'s `algorithm`, keeps that choice).
    fn defaults(trace: &Path, _params: &[Param]) -> Option<Self::Setup> {
        Self::setup(trace, &[]).ok()
    }
    /// Both sides at their initial state.
    fn new(setup: &Self::Setup, mode: Mode) -> Self;
    /// One trace row (at `line` of `trace`) through both sides, recorded in `tally`.
    fn step(
        &mut self,
        trace: &Path,
        line: u64,
        row: &Self::Row,
        tally: &mut Tally,
    ) -> Result<(), InputError>;
    /// After the last event, before the summary: comparisons only the end can make (the
    /// pacer's unmatched segments). Nothing by default.
    fn end(&mut self, _tally: &mut Tally) -> Result<(), InputError> {
        Ok(())
    }
    /// The algorithm's own details and bounds, after the last event.
    fn finish(self, tally: &Tally, s: &mut Summary);
    /// The `--plot` panels from the tally's envelope, x divided by `div`.
    fn panels(env: &Envelope, div: f64) -> Vec<Panel>;
    /// The `--plot` x axis: time since the first event (the default), or another axis.
    fn x_axis(env: &Envelope) -> (f64, String) {
        let (div, label) = env.time_axis();
        (div, label.to_string())
    }
    /// When not every event is one the algorithm can act on, what those are called (DOCA PCC:
    /// `probe answers`; the step counts them in [`Tally::inputs`]): the share of meaningful
    /// events is then taken over them. `None` (the default): every event is one.
    const INPUTS: Option<&'static str> = None;
}

/// What a replay tallies (agreement, errors, event counts) and the outputs it writes (`--out`,
/// `--plot`), whatever the algorithm.
pub struct Tally {
    /// Decision agreement.
    pub agreement: Agreement,
    /// Relative error of the main output (rate, window), if the kind has one.
    pub err: ErrStats,
    /// Events read.
    pub events: u64,
    /// Events both sides rejected.
    pub skipped: u64,
    /// Events in which the reference's state moved by the algorithm's rule (TIMELY: a rate
    /// branch on a non-zero RTT; HPCC: `ai`/`md`; DOCA PCC: a probe answer that steps TIMELY or
    /// HPCC Alg. 1); for kinds that compare decisions, the events that led to a decision
    /// compared (a CATS chunk, a pacer segment), counted by the driver. Never more than
    /// `events`.
    pub meaningful: u64,
    /// The events the algorithm could act on, for a kind where not every event is one
    /// ([`SideBySide::INPUTS`]: DOCA PCC's probe answers), counted by its step.
    pub inputs: u64,
    /// Whether the last event led to a decision compared (kinds that compare decisions).
    last_decided: bool,
    /// Events both sides took but that are not meaningful because their input is implausible,
    /// by reason (`zero RTTs`, `ACKs ahead of snd_nxt`): named when a replay is refused.
    pub implausible: Vec<(&'static str, u64)>,
    out: Option<Output>,
    plot: Option<(PathBuf, Envelope, Option<u64>)>,
}

impl Tally {
    /// A tally for `what` (`branch`/`order`) writing `--out` (with `header`) and keeping
    /// `series` values per plotted event for `--plot`. An output that is `input` is refused;
    /// `--out` names the input as [`ReplayOpts::shown`] does.
    pub fn new(
        opts: &ReplayOpts,
        input: &Path,
        what: &str,
        header: &str,
        series: usize,
        params: &[InForce],
    ) -> Result<Self, InputError> {
        Self::with_outputs(
            opts.out.clone(),
            opts.plot.clone(),
            input,
            &opts.shown(input).display().to_string(),
            what,
            header,
            series,
            params,
        )
    }

    /// As [`new`](Self::new) with the output paths given (a capture's flows each have their
    /// own) and what was replayed named as `--out` gives it (`# sim-host replay of NAME`: a
    /// trace, or a capture and its flow).
    /// `--out` starts with one comment line per parameter in force (`# param KEY=VALUE
    /// (ORIGIN)`), then the header row. `--out` and `--plot` naming the same file is refused.
    #[allow(clippy::too_many_arguments)] // each output, the input and its name, the format
    pub fn with_outputs(
        out: Option<PathBuf>,
        plot: Option<PathBuf>,
        input: &Path,
        name: &str,
        what: &str,
        header: &str,
        series: usize,
        params: &[InForce],
    ) -> Result<Self, InputError> {
        if let (Some(o), Some(p)) = (&out, &plot)
            && cc_output::output::same_file(o, p)
        {
            return Err(InputError::file(
                o,
                "--out and --plot name the same file: give each its own",
            ));
        }
        let out = match out {
            Some(p) => {
                let mut o = Output::create(&p, &[input])?;
                o.line(format_args!("# sim-host replay of {name}"))?;
                for f in params {
                    o.line(format_args!(
                        "# param {}={} ({})",
                        f.key,
                        f.value,
                        f.origin.describe()
                    ))?;
                }
                o.line(format_args!("{header}"))?;
                Some(o)
            }
            None => None,
        };
        Ok(Self {
            agreement: Agreement::new(what),
            err: ErrStats::default(),
            events: 0,
            skipped: 0,
            meaningful: 0,
            inputs: 0,
            last_decided: false,
            implausible: Vec::new(),
            out,
            plot: plot.map(|p| (p, Envelope::new(series, plot::COLUMNS), None)),
        })
    }

    /// Counts one event both sides took that is not meaningful because its input is
    /// implausible (`what`: `zero RTTs`, `ACKs ahead of snd_nxt`).
    pub fn implausible(&mut self, what: &'static str) {
        match self.implausible.iter_mut().find(|(w, _)| *w == what) {
            Some((_, n)) => *n += 1,
            None => self.implausible.push((what, 1)),
        }
    }

    /// Whether `--out` is being written (so a step can skip formatting its row).
    pub fn writes_rows(&self) -> bool {
        self.out.is_some()
    }

    /// One `--out` row.
    pub fn row(&mut self, text: std::fmt::Arguments<'_>) -> Result<(), InputError> {
        match &mut self.out {
            Some(o) => o.line(text),
            None => Ok(()),
        }
    }

    /// Whether `--plot` is being drawn.
    pub fn plots(&self) -> bool {
        self.plot.is_some()
    }

    /// One plotted event: `x` is the trace time in ns (made relative to the first event) or,
    /// with `absolute`, an x of the kind's own (e.g. a chunk number); `mark` flags a
    /// disagreement.
    pub fn plot(&mut self, i: u64, x_ns: u64, ys: &[f64], mark: bool) {
        if let Some((_, env, t0)) = &mut self.plot {
            let t0 = *t0.get_or_insert(x_ns);
            env.offer(i, x_ns.saturating_sub(t0) as f64, ys, mark);
        }
    }

    /// Refuses a replay in which nothing meaningful was compared: no meaningful event (a
    /// trace whose INT never moves the window, whose RTTs are all 0, every row skipped, no probe
    /// answered, no CATS chunk or pacer segment compared); and, for kinds whose events are steps
    /// of the algorithm (`per_event`: TIMELY, HPCC, DOCA PCC), fewer than `min_share` of the
    /// events meaningful (999 of 1 000 rows skipped) — of the events it could act on when not
    /// every event is one (`inputs`: DOCA PCC's probe answers, counted in
    /// [`inputs`](Self::inputs)). The reason names the counts.
    pub fn check_meaningful(
        &self,
        trace: &str,
        per_event: bool,
        inputs: Option<&str>,
        min_share: f64,
    ) -> Result<(), String> {
        let mut aside: String = self
            .implausible
            .iter()
            .map(|(what, n)| format!(", {n} {what}"))
            .collect();
        let (of, what) = match inputs {
            Some(w) => {
                aside.push_str(&format!(", {} {w}", self.inputs));
                (self.inputs, w)
            }
            None => (self.events, "events"),
        };
        let share = if of == 0 {
            0.0
        } else {
            self.meaningful as f64 / of as f64
        };
        if self.meaningful == 0 {
            let kind = if per_event {
                "a step of the algorithm on plausible input"
            } else {
                "an event that led to a decision both sides could be compared on"
            };
            let none = match self.events {
                0 => "it has no event".to_string(),
                1 => format!("its one event is not {kind}"),
                n => format!("none of its {n} events is {kind}"),
            };
            return Err(format!(
                "nothing meaningful to compare in {trace}: {none} ({} skipped by both \
                 sides{aside})",
                self.skipped
            ));
        }
        if per_event && share < min_share {
            return Err(format!(
                "too little to compare in {trace}: {} of {of} {what} are steps of the algorithm \
                 on plausible input ({} events, {} skipped by both sides{aside}); a verdict needs \
                 at least {} % of them (--min-meaningful)",
                self.meaningful,
                self.events,
                self.skipped,
                min_share * 100.0
            ));
        }
        Ok(())
    }

    /// After one event's step, for a kind that compares decisions: the event is meaningful
    /// when it led to a decision compared (the agreement grew from `before`).
    fn decided_since(&mut self, before: u64) {
        self.last_decided = self.agreement.total > before;
        if self.last_decided {
            self.meaningful += 1;
        }
    }

    /// Checks that something meaningful was compared, then writes `--out` and `--plot` and
    /// builds the judged summary. A replay with nothing meaningful compared writes neither and
    /// is returned with the reason in [`Summary::nothing_to_compare`] (no verdict; its run exits
    /// 2, a CSV trace and a capture flow alike), so that a directory lists it in its table and a
    /// capture keeps its other flows' verdicts.
    pub fn finish<L: SideBySide>(
        mut self,
        mut ls: L,
        trace: String,
        title: &str,
        opts: &ReplayOpts,
        params: Vec<InForce>,
    ) -> Result<Summary, InputError> {
        let before_end = self.agreement.total;
        ls.end(&mut self)?;
        if L::KIND.info().rel_err_of.is_none()
            && self.agreement.total > before_end
            && !self.last_decided
            && self.meaningful < self.events
        {
            // Decisions compared only once the trace ended (the pacer's unmatched segments)
            // belong to its last event.
            self.meaningful += 1;
        }
        let refused = self
            .check_meaningful(
                &trace,
                L::KIND.info().rel_err_of.is_some(),
                L::INPUTS,
                opts.min_meaningful(),
            )
            .err();
        if refused.is_none() {
            // Both outputs or neither: the plot first (an unusable plot path then fails before
            // `--out` exists; the staged `--out` is removed when dropped), and the plot removed
            // again if `--out` cannot be committed.
            if let Some((p, env, _)) = &self.plot {
                let (div, label) = L::x_axis(env);
                plot::draw(p, title, &label, &L::panels(env, div))
                    .map_err(|e| InputError::file(p, e))?;
            }
            if let Some(o) = self.out.take()
                && let Err(e) = o.commit()
            {
                if let Some((p, ..)) = &self.plot {
                    let _ = std::fs::remove_file(p);
                }
                return Err(e);
            }
        }
        let mut s = Summary::new(L::KIND.info(), trace, opts.mode, self.agreement.clone());
        s.events = self.events;
        s.skipped = self.skipped;
        s.meaningful = self.meaningful;
        s.params = params.iter().map(ParamReport::from).collect();
        if let Some(quantity) = L::KIND.info().rel_err_of {
            s.rel_err = Some(self.err.summary(quantity));
        }
        ls.finish(&self, &mut s);
        if let Some(why) = refused {
            s.nothing_compared(why);
        }
        s.judge(opts.tolerances(L::KIND.info()));
        Ok(s)
    }

    /// Where an event is, for the statistics.
    pub fn at(&self, t_ns: u64, line: Option<u64>) -> At {
        At {
            event: self.events,
            t_ns,
            line,
        }
    }
}

/// The one driver for CSV traces: open, check the header, set both sides up from the trace's
/// `# set` lines and `--set`, step every row, finish. One summary.
///
/// The trace is named [`ReplayOpts::shown`] everywhere: in the summary, messages, the origins
/// of its `# set` lines and `--out` (standard input is `-`, not the temporary copy it is read
/// from).
pub fn replay_csv<L: SideBySide>(
    path: &Path,
    opts: &ReplayOpts,
) -> Result<Vec<Summary>, InputError> {
    let shown = opts.shown(path);
    let file = std::fs::File::open(path)
        .map_err(|e| InputError::file(shown, format!("cannot open: {e}")))?;
    let mut rdr = TraceReader::from_reader(
        shown,
        Box::new(std::io::BufReader::with_capacity(1 << 16, file)),
    )?;
    rdr.expect_header(L::KIND.header())?;
    let params = merged_params(rdr.params(), &opts.params);
    let setup = L::setup(shown, &params)?;
    let in_force = in_force(&setup, L::defaults(shown, &params).as_ref(), &params);
    let mut ls = L::new(&setup, opts.mode);
    let mut tally = Tally::new(
        opts,
        path,
        L::KIND.info().agreement,
        L::OUT_HEADER,
        L::PLOT_SERIES,
        &in_force,
    )?;
    let decisions = L::KIND.info().rel_err_of.is_none();
    while let Some(row) = rdr.next_row::<L::Row>() {
        let (line, row) = row?;
        let before = tally.agreement.total;
        ls.step(shown, line, &row, &mut tally)?;
        if decisions {
            tally.decided_since(before);
        }
    }
    let short = shown.file_name().and_then(|n| n.to_str()).unwrap_or("-");
    let title = format!("{}: {short} ({} mode)", L::KIND.title(), opts.mode.name());
    Ok(vec![tally.finish(
        ls,
        shown.display().to_string(),
        &title,
        opts,
        in_force,
    )?])
}
