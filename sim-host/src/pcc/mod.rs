//! pcc: DOCA PCC event traces replayed through the `cc-pcc` adapter (TIMELY on probe RTTs)
//! beside the f64 reference of the same conventions (`cc_reference::pcc`), and the fixture
//! generators ([`generate`]).
//!
//! Each row is one platform event, encoded into the 44 bytes the platform delivers and decoded
//! by the adapter (`Event::encode` / `Event::decode`), then handed to `timely_on_event` with the
//! flow's 48-byte context; the reference gets the same fields. A `param` row is the platform's
//! `set_algo_params`: applied to both sides, or refused (exit 2) when the adapter refuses it.
//!
//! Compared per event: the rate (Q20 of line rate: the adapter's integer against the
//! reference's `fraction·2^20`) and the branch — `probe`, `timeout` (a probe given up and a new
//! one requested) or `tx` for a TX event; Algorithm 1's branch, `late` or `invalid` for a probe
//! response; `counted` for ACK, NACK, CNP and undocumented types. The adapter does not return
//! Algorithm 1's branch: the fixed side's is the branch of `timely_cc::State::on_rtt` that
//! turns the flow's stored state before the event into the stored state after it on the
//! reference's RTT, and `?` when no such step reproduces it (a different RTT or rule).

pub mod generate;

pub use cc_reference::pcc as reference;
pub use cc_trace::pcc::{HEADER, INFO, Row, params};

use crate::kind::{FixtureFile, Kind};
use crate::opts::{Mode, ReplayOpts};
use crate::plot::{self, Envelope, Panel};
use crate::summary::{At, Summary, rel_err};
use crate::trace::InputError;
use cc_pcc::{COUNTER_NAMES, Counter, Counters, Event, FlowContext, TimelyFlow, timely_on_event};
use reference::{RefPccFlow, RefPccStep};
use std::collections::BTreeMap;
use std::path::Path;
use timely_cc::{RTT_SAT_Q4, U28F4};

/// The columns of `--out`, exactly.
pub const OUT_HEADER: &str =
    "event,line,ts_ns,flow,type,rtt_ns,rate_ref_q20,rate_fixed_q20,branch_ref,branch_fixed";

/// `1.0` of line rate in Q20.
const Q20: f64 = (1u32 << 20) as f64;

/// pcc in the host's registry of trace kinds ([`crate::kinds`]).
pub static ENTRY: crate::kind::Entry = crate::kind::Entry {
    info: &INFO,
    replay,
    fixtures,
};

/// pcc as a [`Kind`].
pub const KIND: Kind = Kind(&ENTRY);

/// Replays one trace; one summary per trace (the one driver, [`crate::driver`]).
pub fn replay(path: &Path, opts: &ReplayOpts) -> Result<Vec<Summary>, InputError> {
    crate::driver::replay_csv::<Replay>(path, opts)
}

/// The shipped fixtures of this kind.
pub fn fixtures() -> Vec<FixtureFile> {
    generate::all()
}

/// A row's event type: a documented name, a type code, or a parameter change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowType {
    /// A platform event with this type code.
    Event(u8),
    /// `set_algo_params` with one value.
    Param,
}

/// Parses the `type` field.
pub fn row_type(s: &str) -> Option<RowType> {
    Some(match s {
        "cnp" => RowType::Event(2),
        "tx" => RowType::Event(3),
        "ack" => RowType::Event(4),
        "nack" => RowType::Event(5),
        "rtt" => RowType::Event(6),
        "param" => RowType::Param,
        _ => RowType::Event(s.parse().ok()?),
    })
}

/// The name of a type code as the report writes it.
fn type_name(code: u8) -> &'static str {
    match code {
        2 => "cnp",
        3 => "tx",
        4 => "ack",
        5 => "nack",
        6 => "rtt",
        _ => "other",
    }
}

/// One flow on both sides.
struct Flow {
    ctx: FlowContext,
    reference: RefPccFlow,
}

/// DOCA PCC (TIMELY) in the replay driver.
pub struct Replay {
    both: params::Both,
    flows: BTreeMap<u32, Flow>,
    counters: Counters,
    br_ref: BTreeMap<&'static str, u64>,
    br_fixed: BTreeMap<&'static str, u64>,
    ref_probes: [u64; 4],
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
        rec: &mut crate::driver::Recorder,
    ) -> Result<(), InputError> {
        let err = |m: String| InputError::at(trace, line, m);
        let (Some(id), Some(value)) = (r.a, r.b) else {
            return Err(err(
                "a param row needs a (parameter id) and b (value)".into()
            ));
        };
        if r.c.is_some() || r.subtype.is_some() || !r.telemetry.is_empty() {
            return Err(err(
                "a param row has only a (parameter id) and b (value): subtype, c and telemetry \
                 must be empty"
                    .into(),
            ));
        }
        self.both
            .set(id, value)
            .map_err(|e| err(format!("param row refused by the adapter: {e}")))?;
        self.param_changes += 1;
        // In `--out` where it happens, so the rows after it read against the new values.
        let key = cc_trace::pcc::TIMELY_KEYS
            .get(id as usize)
            .copied()
            .unwrap_or("?");
        rec.row(format_args!(
            "# param {key}={value} (set_algo_params at {}:{line})",
            trace.display()
        ))
    }

    /// The event the platform would deliver for `r` (type `code`).
    fn event(trace: &Path, line: u64, r: &Row, code: u8) -> Result<Event, InputError> {
        let err = |m: String| InputError::at(trace, line, m);
        if !r.telemetry.is_empty() {
            return Err(err(
                "field telemetry: a switch-telemetry record is read only with algorithm=hpcc \
                 (this trace replays TIMELY): leave it empty"
                    .into(),
            ));
        }
        let documented = (2..=6).contains(&code);
        let field = |v: Option<u32>, name: &str| match v {
            Some(x) => Ok(x),
            None if !documented => Ok(0),
            None => Err(err(format!(
                "field {name}: empty, but a {} event carries it",
                type_name(code)
            ))),
        };
        let (a, b, c) = (field(r.a, "a")?, field(r.b, "b")?, field(r.c, "c")?);
        let spec = if code == 3 {
            // TX: the second word holds sent 32-byte units (high half) and packets (low half).
            for (v, name) in [(b, "b (sent 32-byte units)"), (c, "c (packets)")] {
                if v > 0xffff {
                    return Err(err(format!(
                        "field {name}: {v} does not fit the event's 16 bits (≤ 65535)"
                    )));
                }
            }
            [a, (b << 16) | c, 0, 0]
        } else {
            [a, b, c, 0]
        };
        let ev = Event {
            type_code: code,
            subtype: r.subtype.unwrap_or(0),
            port: 0,
            flags: 0,
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

impl crate::driver::Lockstep for Replay {
    const KIND: Kind = KIND;
    const OUT_HEADER: &'static str = OUT_HEADER;
    const PLOT_SERIES: usize = 4;
    type Setup = params::Both;
    type Row = Row;

    fn setup(trace: &Path, params: &[crate::trace::Param]) -> Result<params::Both, InputError> {
        params::build(trace, params)
    }

    fn new(both: &params::Both, _mode: Mode) -> Self {
        Self {
            both: both.clone(),
            flows: BTreeMap::new(),
            counters: Counters::default(),
            br_ref: BTreeMap::new(),
            br_fixed: BTreeMap::new(),
            ref_probes: [0; 4],
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
        rec: &mut crate::driver::Recorder,
    ) -> Result<(), InputError> {
        let code = match row_type(r.kind.trim()) {
            Some(RowType::Param) => return self.param_row(trace, line, r, rec),
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
        let ev = Self::event(trace, line, r, code)?;
        let t = self.unwrap_ts(r.ts_ns);
        let (cfg, rp) = (self.both.cfg, self.both.reference);
        let flow = self.flows.entry(r.flow).or_insert_with(|| Flow {
            ctx: [0; 12],
            reference: RefPccFlow::new(&rp),
        });

        // Reference.
        let step = match code {
            3 => flow.reference.on_tx(&rp, ev.ts_ns),
            6 => {
                let x = ev.rtt();
                flow.reference.on_response(
                    &rp,
                    ev.ts_ns,
                    x.req_send_ts_ns,
                    x.req_recv_ts_ns,
                    x.resp_send_ts_ns,
                )
            }
            _ => RefPccStep::Other,
        };
        let mut rtt_ns = None;
        let branch_ref = match step {
            RefPccStep::Tx { probe, timed_out } => {
                self.ref_probes[0] += u64::from(probe);
                self.ref_probes[2] += u64::from(timed_out);
                match (probe, timed_out) {
                    (true, true) => "timeout",
                    (true, false) => "probe",
                    _ => "tx",
                }
            }
            RefPccStep::Sample(s) => {
                self.ref_probes[1] += 1;
                rtt_ns = s.rtt_ns;
                s.branch
            }
            RefPccStep::Late => {
                self.ref_probes[3] += 1;
                "late"
            }
            RefPccStep::Invalid => {
                self.ref_probes[1] += 1;
                "invalid"
            }
            RefPccStep::Other => "counted",
        };
        let rate_ref = flow.reference.rate_fraction(&rp) * Q20;

        // Fixed: the adapter as the platform calls it.
        let before_ctx = flow.ctx;
        let before = self.counters;
        let res = timely_on_event(&cfg, &mut flow.ctx, &ev, &mut self.counters);
        let c = &self.counters;
        let branch_fixed: &'static str = match code {
            3 if delta(c, &before, Counter::ProbesTimedOut) != 0 => "timeout",
            3 if res.rtt_req => "probe",
            3 => "tx",
            6 if delta(c, &before, Counter::ProbesLate) != 0 => "late",
            6 if delta(c, &before, Counter::RttInvalid) != 0 => "invalid",
            6 => {
                // Algorithm 1's branch: the step that reproduces the stored state.
                let pre = TimelyFlow::load(&before_ctx).unwrap_or_else(|| TimelyFlow::new(&cfg));
                let post = TimelyFlow::load(&flow.ctx);
                match (rtt_ns, post) {
                    (Some(rtt), Some(post)) => {
                        let q4 = (rtt * 16.0).min(f64::from(RTT_SAT_Q4)) as u32;
                        let mut shadow = pre.timely;
                        let u = shadow.on_rtt(cfg.timely(), U28F4::from_bits(q4), 0, None);
                        if shadow == post.timely {
                            u.branch.name()
                        } else {
                            "?"
                        }
                    }
                    _ => "?",
                }
            }
            _ => "counted",
        };
        let rate_fixed = f64::from(res.rate_q20);

        rec.events += 1;
        let at = rec.at(t, Some(line));
        let meaningful = match step {
            RefPccStep::Tx { .. } => true,
            RefPccStep::Sample(s) => s.branch != "init",
            _ => false,
        };
        if rtt_ns == Some(0.0) {
            rec.implausible("zero RTTs");
        } else if meaningful {
            rec.meaningful += 1;
        }
        *self.br_ref.entry(branch_ref).or_default() += 1;
        *self.br_fixed.entry(branch_fixed).or_default() += 1;
        rec.agreement.add(branch_ref == branch_fixed, at);
        let e = rel_err(rate_fixed, rate_ref);
        rec.err.add(e, at);
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
        if rec.writes_rows() {
            let rtt = rtt_ns.map(|x| x.to_string()).unwrap_or_default();
            rec.row(format_args!(
                "{},{line},{},{},{},{rtt},{rate_ref},{rate_fixed},{branch_ref},{branch_fixed}",
                at.event,
                r.ts_ns,
                r.flow,
                type_name(code)
            ))?;
        }
        rec.plot(
            at.event,
            t,
            &[rate_ref, rate_fixed, rtt_ns.unwrap_or(f64::NAN), e],
            branch_ref != branch_fixed,
        );
        Ok(())
    }

    fn finish(self, _rec: &crate::driver::Recorder, s: &mut Summary) {
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
        let [sent, answered, timed_out, late] = self.ref_probes;
        s.detail(
            "reference probes",
            serde_json::json!({"sent": sent, "answered": answered, "timed_out": timed_out, "late": late}),
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
            Panel {
                log_y: true,
                marks: Some(("branches differ".into(), env.marks_in(div))),
                ..Panel::new(
                    "rate rel. error",
                    vec![env.line(3, div, "|fixed − ref| / ref", plot::FIXED)],
                )
            },
        ]
    }
}
