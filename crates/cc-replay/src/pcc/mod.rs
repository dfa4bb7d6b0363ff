//! pcc: DOCA PCC event traces replayed through the `cc-pcc` adapter (TIMELY on probe RTTs or
//! HPCC on switch telemetry, one per trace) beside the f64 reference of the same conventions
//! (`cc_reference::pcc`), and the fixture generators (`generate`).
//!
//! Each row is one platform event, encoded into the 44 bytes the platform delivers and decoded
//! by the adapter (`Event::encode` / `Event::decode`), then handed to `timely_on_event` (or
//! `HpccFlow`'s load, `on_event` with the row's telemetry record, store) with the flow's 48-byte
//! context; the reference gets the same fields. A `param` row is the platform's
//! `set_algo_params`: applied to both sides, or refused (exit 2) when the adapter refuses it.
//!
//! Compared per event: the rate (Q20 of line rate: the adapter's integer against the
//! reference's `fraction·2^20`) and the branch — `probe`, `timeout` (a probe given up and a new
//! one requested) or `tx` for a TX event; the branch of TIMELY or HPCC Alg. 1, `late`,
//! `unsolicited`, `duplicate` (HPCC) or `invalid` (TIMELY) for a probe response; `counted` for
//! ACK, NACK, CNP and the types the adapter ignores. HPCC: the branch is the one
//! `HpccFlow::on_event` returns. TIMELY: the adapter does not return the TIMELY Alg. 1 branch, so
//! the fixed side's is the branch of `timely_cc::State::on_rtt` that turns the flow's stored
//! state before the event into the stored state after it on the reference's RTT, and `?` when
//! no such step reproduces it (a different RTT or rule).

#[cfg(feature = "generate")]
pub mod generate;

pub use cc_reference::pcc as reference;
pub use cc_trace::pcc::{HEADER, INFO, Row, RowType, params, row_name, row_type};

use crate::kinds::Kind;
use crate::opts::{Mode, ReplayOpts};
use crate::summary::{At, Summary, rel_err};
use cc_output::plot::{self, Envelope, Panel};
use cc_pcc::{
    Ack, COUNTER_NAMES, Counter, Counters, Event, FlowContext, HpccFlow, TELEMETRY_BYTES,
    TimelyFlow, Tx, timely_on_event, tx_flag,
};
use cc_trace::InputError;
use params::Setup;
use reference::{RefHpccFlow, RefHpccStep, RefTelemetry, RefTimelyFlow, RefTimelyStep};
use std::collections::BTreeMap;
use std::path::Path;
use timely_cc::{RTT_SAT_Q4, U28F4};

/// The columns of `--out`, exactly.
pub const OUT_HEADER: &str =
    "event,line,ts_ns,flow,type,rtt_ns,rate_ref_q20,rate_fixed_q20,branch_ref,branch_fixed";

/// `1.0` of line rate in Q20.
const Q20: f64 = (1u32 << 20) as f64;

/// pcc in the host's registry of trace kinds ([`crate::kinds`]).
pub static ENTRY: crate::kinds::KindEntry = crate::kinds::KindEntry {
    info: &INFO,
    replay,
    #[cfg(feature = "generate")]
    fixtures,
};

/// pcc as a [`Kind`].
pub const KIND: Kind = Kind(&ENTRY);

/// Replays one trace; one summary per trace (the one driver, [`crate::driver`]).
pub fn replay(path: &Path, opts: &ReplayOpts) -> Result<Vec<Summary>, InputError> {
    crate::driver::replay_csv::<Replay>(path, opts)
}

/// The shipped fixtures of this kind.
#[cfg(feature = "generate")]
pub fn fixtures() -> Vec<crate::kinds::FixtureFile> {
    generate::all()
}

/// The name of a type code as the report writes it (`other` for an undocumented one).
fn type_name(code: u8) -> &'static str {
    row_name(code).unwrap_or("other")
}

/// One flow's reference, by algorithm.
enum RefFlow {
    Timely(RefTimelyFlow),
    Hpcc(RefHpccFlow),
}

/// One flow on both sides.
struct Flow {
    ctx: FlowContext,
    reference: RefFlow,
}

/// What one event did on one side, for the comparison.
struct Outcome {
    branch: &'static str,
    rate_q20: f64,
    rtt_ns: Option<f64>,
    meaningful: bool,
}

/// DOCA PCC (TIMELY) in the replay driver.
pub struct Replay {
    setup: Setup,
    flows: BTreeMap<u32, Flow>,
    counters: Counters,
    br_ref: BTreeMap<&'static str, u64>,
    br_fixed: BTreeMap<&'static str, u64>,
    ref_probes: [u64; 6],
    param_changes: u64,
    /// The 32-bit clock unwrapped (serial order) for the report's time axis.
    clock: Option<(u32, u64)>,
    worst: Option<(f64, At, String)>,
}

impl Replay {
    fn unwrap_ts(&mut self, ts: u32) -> u64 {
        let t = match self.clock {
            None => u64::from(ts),
            Some((last, t)) => {
                // Serial order on the 32-bit clock: forwards less than 2^31 ns.
                let d = ts.wrapping_sub(last);
                if d < 1 << 31 {
                    t + u64::from(d)
                } else {
                    t.saturating_sub(u64::from(last.wrapping_sub(ts)))
                }
            }
        };
        self.clock = Some((ts, t));
        t
    }

    fn param_row(
        &mut self,
        trace: &Path,
        line: u64,
        r: &Row,
        tally: &mut crate::driver::Tally,
    ) -> Result<(), InputError> {
        let err = |m: String| InputError::at(trace, line, m);
        let (Some(id), Some(value)) = (r.a, r.b) else {
            return Err(err(
                "a param row needs a (parameter id) and b (value)".into()
            ));
        };
        if r.c.is_some() || r.subtype.is_some() || r.flags.is_some() || !r.telemetry.is_empty() {
            return Err(err(
                "a param row has only a (parameter id) and b (value): subtype, flags, c and \
                 telemetry must be empty"
                    .into(),
            ));
        }
        self.setup
            .set(id, value)
            .map_err(|e| err(format!("param row refused by the adapter: {e}")))?;
        self.param_changes += 1;
        // In `--out` where it happens, so the rows after it read against the new values.
        let key = self.setup.key(id);
        tally.row(format_args!(
            "# param {key}={value} (set_algo_params at {}:{line})",
            trace.display()
        ))
    }

    /// The event the platform would deliver for `r` (type `code`); an HPCC probe response
    /// carries the row's telemetry record as its raw data.
    fn event(trace: &Path, line: u64, r: &Row, code: u8, hpcc: bool) -> Result<Event, InputError> {
        let err = |m: String| InputError::at(trace, line, m);
        let tel = match (hpcc && code == 6, r.telemetry.is_empty()) {
            (false, true) => None,
            (false, false) => {
                return Err(err(format!(
                    "field telemetry: a switch-telemetry record is read only on an rtt row with \
                     algorithm=hpcc (this is {} under algorithm={}): leave it empty",
                    type_name(code),
                    if hpcc { "hpcc" } else { "timely" }
                )));
            }
            (true, true) => {
                return Err(err(
                    "field telemetry: an rtt row with algorithm=hpcc carries the 12-byte \
                     switch-telemetry record (24 hex digits)"
                        .into(),
                ));
            }
            (true, false) => {
                let b = cc_trace::hpcc::hex_bytes(&r.telemetry)
                    .map_err(|e| err(format!("field telemetry: {e}")))?;
                let n = b.len();
                Some(b.try_into().map_err(|_| {
                    err(format!(
                        "field telemetry: {n} bytes, the record is {TELEMETRY_BYTES}"
                    ))
                })?)
            }
        };
        let documented = (2..=6).contains(&code);
        let field = |v: Option<u32>, name: &str| match v {
            Some(x) => Ok(x),
            None if !documented => Ok(0),
            None => Err(err(format!(
                "field {name}: empty, but a {} event carries it",
                type_name(code)
            ))),
        };
        let spec = match (code, &tel) {
            // An HPCC response: the raw data (the telemetry) is the union's first 12 bytes, so
            // the timestamps do not exist.
            (6, Some(raw)) => {
                if r.a.is_some() || r.b.is_some() || r.c.is_some() {
                    return Err(err(
                        "fields a,b,c: an rtt row with algorithm=hpcc carries the telemetry \
                         record, which takes the bytes of the three timestamps: leave a,b,c empty"
                            .into(),
                    ));
                }
                Event::raw_data_spec(raw)
            }
            (3, _) => {
                let (a, b, c) = (field(r.a, "a")?, field(r.b, "b")?, field(r.c, "c")?);
                // TX: the counters word holds sent packets (high half) and 32-byte units (low).
                let half = |v: u32, name: &str| {
                    u16::try_from(v).map_err(|_| {
                        err(format!(
                            "field {name}: {v} does not fit the event's 16 bits (≤ 65535)"
                        ))
                    })
                };
                Event::tx_spec(&Tx {
                    first_ts_ns: a,
                    sent_32b_units: half(b, "b (sent 32-byte units)")?,
                    packets: half(c, "c (packets)")?,
                    qpn: 0,
                })
            }
            (2 | 4 | 5, _) => {
                let (a, b, c) = (field(r.a, "a")?, field(r.b, "b")?, field(r.c, "c")?);
                Event::ack_spec(&Ack {
                    first_ts_ns: a,
                    first_sn: b,
                    coalesced: u16::try_from(c).map_err(|_| {
                        err(format!(
                            "field c (number coalesced): {c} does not fit the event's 16 bits \
                             (≤ 65535)"
                        ))
                    })?,
                })
            }
            _ => [field(r.a, "a")?, field(r.b, "b")?, field(r.c, "c")?],
        };
        let ev = Event {
            type_code: code,
            subtype: r.subtype.unwrap_or(0),
            port: 0,
            flags: r.flags.unwrap_or(0),
            flow_tag: r.flow,
            sn: 0,
            ts_ns: r.ts_ns,
            spec,
        };
        // Through the 44 bytes as delivered.
        Ok(Event::decode(&ev.encode()))
    }
}

/// The counters the fixed side's branch is read from.
fn delta(after: &Counters, before: &Counters, c: Counter) -> u32 {
    after.get(c).wrapping_sub(before.get(c))
}

/// One TIMELY event on both sides: the reference's outcome and the adapter's (its branch for a
/// probe answer read from the stored state, see the module doc).
fn timely_step(
    b: &params::Both,
    rf: &mut RefTimelyFlow,
    ctx: &mut FlowContext,
    ev: &Event,
    counters: &mut Counters,
) -> (Outcome, Outcome) {
    let (cfg, rp) = (&b.cfg, &b.reference);
    let step = match ev.type_code {
        3 => rf.on_tx(rp, ev.ts_ns),
        6 => {
            let x = ev.rtt();
            rf.on_response(
                rp,
                ev.ts_ns,
                x.req_send_ts_ns,
                x.req_recv_ts_ns,
                x.resp_send_ts_ns,
            )
        }
        _ => RefTimelyStep::Other,
    };
    // Meaningful: a probe answer that steps TIMELY Alg. 1 (not `init`), the only event TIMELY
    // acts on; a TX event is the probe policy's, compared but not a step of the algorithm (a
    // stream whose probes are never answered never moves the rate).
    let (branch, rtt_ns, meaningful) = match step {
        RefTimelyStep::Tx { probe, timed_out } => (
            match (probe, timed_out) {
                (true, true) => "timeout",
                (true, false) => "probe",
                _ => "tx",
            },
            None,
            false,
        ),
        RefTimelyStep::Sample(s) => (s.branch, s.rtt_ns, s.branch != "init"),
        RefTimelyStep::Late => ("late", None, false),
        RefTimelyStep::Unsolicited => ("unsolicited", None, false),
        RefTimelyStep::Invalid => ("invalid", None, false),
        RefTimelyStep::Other => ("counted", None, false),
    };
    let o_ref = Outcome {
        branch,
        rate_q20: rf.rate_fraction(rp) * Q20,
        rtt_ns,
        meaningful,
    };
    let before_ctx = *ctx;
    let res = timely_on_event(cfg, ctx, ev, counters);
    let branch_fixed = match (ev.type_code, rtt_ns) {
        (6, Some(rtt)) => {
            // The TIMELY Alg. 1 branch: the step that reproduces the stored state.
            let pre = TimelyFlow::load(&before_ctx).unwrap_or_else(|| TimelyFlow::new(cfg));
            match TimelyFlow::load(ctx) {
                Some(post) => {
                    let q4 = (rtt * 16.0).min(f64::from(RTT_SAT_Q4)) as u32;
                    let mut shadow = pre.timely;
                    let u = shadow.on_rtt(cfg.timely(), U28F4::from_bits(q4), 0, None);
                    if shadow == post.timely {
                        u.branch.name()
                    } else {
                        "?"
                    }
                }
                None => "?",
            }
        }
        (6, None) => "?",
        _ => "counted",
    };
    let o_fixed = Outcome {
        branch: branch_fixed,
        rate_q20: f64::from(res.rate_q20),
        rtt_ns: None,
        meaningful: false,
    };
    (o_ref, o_fixed)
}

/// One HPCC event on both sides (the adapter through `HpccFlow`'s public load, event and
/// store, which is what `hpcc_on_event` does, keeping the branch it returns).
fn hpcc_step(
    b: &params::HpccBoth,
    rf: &mut RefHpccFlow,
    ctx: &mut FlowContext,
    ev: &Event,
    counters: &mut Counters,
) -> (Outcome, Outcome) {
    let (cfg, rp) = (&b.cfg, &b.reference);
    // The response's raw data, as the platform's getter gives it (read for RTT events only).
    let tel = ev.rtt_raw_data();
    let step = match ev.type_code {
        3 => rf.on_tx(rp, ev.ts_ns, ev.flags & tx_flag::RTT_REQ_SENT != 0),
        6 => rf.on_response(rp, ev.ts_ns, &RefTelemetry::decode(&tel)),
        _ => RefHpccStep::Other,
    };
    // Meaningful: a probe answer whose telemetry steps HPCC Alg. 1 (`ai`, `md`); a TX event is
    // the probe policy's, compared but not a step of the algorithm.
    let (branch, meaningful) = match step {
        RefHpccStep::Tx { probe, timed_out } => (
            match (probe, timed_out) {
                (true, true) => "timeout",
                (true, false) => "probe",
                _ => "tx",
            },
            false,
        ),
        RefHpccStep::Sample { branch, .. } => (branch, matches!(branch, "ai" | "md")),
        RefHpccStep::Late => ("late", false),
        RefHpccStep::Unsolicited => ("unsolicited", false),
        RefHpccStep::Duplicate => ("duplicate", false),
        RefHpccStep::Other => ("counted", false),
    };
    let o_ref = Outcome {
        branch,
        rate_q20: rf.rate_fraction(rp) * Q20,
        rtt_ns: None,
        meaningful,
    };
    let mut flow = HpccFlow::load(ctx).unwrap_or_else(|| {
        counters.inc(Counter::NewFlows);
        HpccFlow::new(cfg)
    });
    let (res, br) = flow.on_event(cfg, ev, &tel, counters);
    flow.store(ctx);
    let o_fixed = Outcome {
        branch: match (ev.type_code, br) {
            (6, Some(b)) => b.name(),
            (6, None) => "?",
            _ => "counted",
        },
        rate_q20: f64::from(res.rate_q20),
        rtt_ns: None,
        meaningful: false,
    };
    (o_ref, o_fixed)
}

impl crate::driver::SideBySide for Replay {
    const KIND: Kind = KIND;
    const OUT_HEADER: &'static str = OUT_HEADER;
    const PLOT_SERIES: usize = 4;
    const INPUTS: Option<&'static str> = Some("probe answers");
    type Setup = Setup;
    type Row = Row;

    fn setup(trace: &Path, params: &[cc_trace::Param]) -> Result<Setup, InputError> {
        params::build(trace, params)
    }

    fn defaults(trace: &Path, params: &[cc_trace::Param]) -> Option<Setup> {
        // The defaults of the table the trace's `algorithm` picks.
        let algorithm: Vec<_> = params
            .iter()
            .filter(|p| p.key == "algorithm")
            .cloned()
            .collect();
        params::build(trace, &algorithm).ok()
    }

    fn new(setup: &Setup, _mode: Mode) -> Self {
        Self {
            setup: setup.clone(),
            flows: BTreeMap::new(),
            counters: Counters::default(),
            br_ref: BTreeMap::new(),
            br_fixed: BTreeMap::new(),
            ref_probes: [0; 6],
            param_changes: 0,
            clock: None,
            worst: None,
        }
    }

    fn step(
        &mut self,
        trace: &Path,
        line: u64,
        r: &Row,
        tally: &mut crate::driver::Tally,
    ) -> Result<(), InputError> {
        let code = match row_type(r.kind.trim()) {
            Some(RowType::Param) => return self.param_row(trace, line, r, tally),
            Some(RowType::Event(code)) => code,
            None => {
                return Err(InputError::at(
                    trace,
                    line,
                    format!(
                        "field type: {:?} is not an event type (tx, ack, nack, cnp, rtt, a type \
                         code 0–255, or param)",
                        r.kind
                    ),
                ));
            }
        };
        let hpcc = matches!(self.setup, Setup::Hpcc(_));
        let ev = Self::event(trace, line, r, code, hpcc)?;
        let t = self.unwrap_ts(r.ts_ns);
        let setup = &self.setup;
        let flow = self.flows.entry(r.flow).or_insert_with(|| Flow {
            ctx: [0; 12],
            reference: match setup {
                Setup::Timely(b) => RefFlow::Timely(RefTimelyFlow::new(&b.reference)),
                Setup::Hpcc(b) => RefFlow::Hpcc(RefHpccFlow::new(&b.reference)),
            },
        });
        let before = self.counters;
        let (o_ref, o_fixed) = match (&self.setup, &mut flow.reference) {
            (Setup::Timely(b), RefFlow::Timely(rf)) => {
                timely_step(b, rf, &mut flow.ctx, &ev, &mut self.counters)
            }
            (Setup::Hpcc(b), RefFlow::Hpcc(rf)) => {
                hpcc_step(b, rf, &mut flow.ctx, &ev, &mut self.counters)
            }
            _ => unreachable!("a trace has one algorithm"),
        };
        // Probe outcomes on the reference side, for the report.
        match o_ref.branch {
            "probe" => self.ref_probes[0] += 1,
            "timeout" => {
                self.ref_probes[0] += 1;
                self.ref_probes[2] += 1;
            }
            "late" => self.ref_probes[3] += 1,
            "unsolicited" => self.ref_probes[4] += 1,
            "duplicate" => self.ref_probes[5] += 1,
            "tx" | "counted" => {}
            _ => self.ref_probes[1] += 1,
        }
        // The probe-policy outcome of the fixed side, from its counters.
        let c = &self.counters;
        let branch_fixed = match code {
            3 if delta(c, &before, Counter::ProbesTimedOut) != 0 => "timeout",
            3 if delta(c, &before, Counter::ProbesSent) != 0 => "probe",
            3 => "tx",
            6 if delta(c, &before, Counter::ProbesLate) != 0 => "late",
            6 if delta(c, &before, Counter::ProbesUnsolicited) != 0 => "unsolicited",
            6 if delta(c, &before, Counter::ProbesDuplicate) != 0 => "duplicate",
            6 if delta(c, &before, Counter::RttInvalid) != 0 => "invalid",
            _ => o_fixed.branch,
        };
        let (branch_ref, rate_ref, rate_fixed, rtt_ns) =
            (o_ref.branch, o_ref.rate_q20, o_fixed.rate_q20, o_ref.rtt_ns);

        tally.events += 1;
        if code == 6 {
            // A probe answer: the one event the algorithm can act on.
            tally.inputs += 1;
        }
        let at = tally.at(t, Some(line));
        if rtt_ns == Some(0.0) {
            tally.implausible("zero RTTs");
        } else if o_ref.meaningful {
            tally.meaningful += 1;
        }
        *self.br_ref.entry(branch_ref).or_default() += 1;
        *self.br_fixed.entry(branch_fixed).or_default() += 1;
        tally.agreement.add(branch_ref == branch_fixed, at);
        let e = rel_err(rate_fixed, rate_ref);
        tally.err.add(e, at);
        if self.worst.as_ref().is_none_or(|w| e > w.0) {
            self.worst = Some((
                e,
                at,
                format!(
                    "flow {} {}: rate ref {rate_ref:.3} vs fixed {rate_fixed} (Q20), branch {branch_ref} / {branch_fixed}",
                    r.flow,
                    type_name(code)
                ),
            ));
        }
        if tally.writes_rows() {
            let rtt = rtt_ns.map(|x| x.to_string()).unwrap_or_default();
            tally.row(format_args!(
                "{},{line},{},{},{},{rtt},{rate_ref},{rate_fixed},{branch_ref},{branch_fixed}",
                at.event,
                r.ts_ns,
                r.flow,
                type_name(code)
            ))?;
        }
        tally.plot(
            at.event,
            t,
            &[rate_ref, rate_fixed, rtt_ns.unwrap_or(f64::NAN), e],
            branch_ref != branch_fixed,
        );
        Ok(())
    }

    fn finish(self, _tally: &crate::driver::Tally, s: &mut Summary) {
        let counts = |m: &BTreeMap<&'static str, u64>| {
            serde_json::Value::Object(
                m.iter()
                    .map(|(k, v)| (k.to_string(), (*v).into()))
                    .collect(),
            )
        };
        s.detail("branches ref", counts(&self.br_ref));
        s.detail("branches fixed", counts(&self.br_fixed));
        s.detail("flows", self.flows.len() as u64);
        s.detail("parameter changes", self.param_changes);
        s.detail(
            "adapter counters",
            serde_json::Value::Object(
                COUNTER_NAMES
                    .iter()
                    .zip(self.counters.0)
                    .filter(|(_, v)| *v != 0)
                    .map(|(k, v)| (k.to_string(), v.into()))
                    .collect(),
            ),
        );
        let [sent, answered, timed_out, late, unsolicited, duplicate] = self.ref_probes;
        s.detail(
            "reference probes",
            serde_json::json!({"sent": sent, "answered": answered, "timed_out": timed_out,
                "late": late, "unsolicited": unsolicited, "duplicate": duplicate}),
        );
        if let Some((e, at, what)) = self.worst.filter(|w| w.0 > 0.0) {
            s.detail(
                "worst event",
                format!(
                    "event {} (line {}): {what} (rel. {e:.2e})",
                    at.event,
                    at.line.unwrap_or(0)
                ),
            );
        }
    }

    fn panels(env: &Envelope, div: f64) -> Vec<Panel> {
        vec![
            env.ref_vs_fixed(0, div, "rate (Q20 of line rate)"),
            Panel::new(
                "probe RTT (ns)",
                vec![env.line(2, div, "RTT (turnaround removed)", plot::OTHER)],
            ),
            env.rel_err_panel(3, div, "rate rel. error"),
        ]
    }
}
