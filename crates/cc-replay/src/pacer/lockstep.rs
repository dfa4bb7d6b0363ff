//! Both sides (the firmware pacer and the f64 reference) driven in lockstep by trace events.

use super::params::Setup;
use super::reference::{RefMode, RefPacer, RefSegment};
use super::{CAPACITY, Event, Fixed};
use cc_pacer::{FlowId, FlowMode, FlowSpec, Instant, Pacer, Rate};
use cc_trace::InputError;
use std::collections::HashMap;
use std::path::Path;

/// Both sides, driven in lockstep by trace events.
pub struct Lockstep {
    /// The firmware crate.
    pub fixed: Box<Fixed>,
    /// The f64 reference.
    pub reference: RefPacer,
    setup: Setup,
    /// Trace flow number → index on both sides.
    ids: HashMap<u32, usize>,
    /// The trace's flow number of each index.
    pub names: Vec<u32>,
    now_ns: u64,
}

/// A segment from the fixed side with its send time unwrapped to ns on the trace's clock.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FixedSegment {
    /// Flow index.
    pub flow: usize,
    /// Bytes.
    pub bytes: u64,
    /// When, ns.
    pub t_send: f64,
}

impl Lockstep {
    /// Both sides for `setup`.
    pub fn new(setup: Setup) -> Self {
        Self {
            fixed: Box::new(Pacer::new(&setup.cfg)),
            reference: RefPacer::new(setup.line_units, setup.hybrid),
            setup,
            ids: HashMap::new(),
            names: Vec::new(),
            now_ns: 0,
        }
    }

    /// Every segment that leaves at or before `t_ns`, from each side.
    pub fn drain(
        &mut self,
        t_ns: u64,
        fixed: &mut Vec<FixedSegment>,
        reference: &mut Vec<RefSegment>,
    ) {
        self.now_ns = t_ns;
        let now = Instant::from_ns(t_ns);
        while let Some(s) = self.fixed.next(now) {
            // t_send ≤ now, within half a wrap: unwrap against the trace's clock.
            let back = now.since(s.t_send);
            let units = (u128::from(t_ns) * 16) as f64 - f64::from(back);
            fixed.push(FixedSegment {
                flow: s.flow.index(),
                bytes: u64::from(s.bytes),
                t_send: units / 16.0,
            });
        }
        let now_f = t_ns as f64;
        while let Some(s) = self.reference.next(now_f) {
            reference.push(s);
        }
    }

    fn flow(
        &mut self,
        name: u32,
        first: Event,
        path: &Path,
        line: u64,
    ) -> Result<usize, InputError> {
        if let Some(&i) = self.ids.get(&name) {
            return Ok(i);
        }
        let seg = self
            .setup
            .seg_of
            .get(&name)
            .copied()
            .unwrap_or(self.setup.seg_bytes);
        let rate = match first {
            Event::Rate(_, bps) => bps,
            _ => self.setup.init_rate_bps,
        };
        let r = Rate::from_bps(rate);
        let (mode, rmode, window) = match first {
            Event::Window(_, w) => (FlowMode::Window { window_bytes: w }, RefMode::Window, w),
            _ if self.setup.hybrid.is_some() => (FlowMode::Hybrid, RefMode::Hybrid, 0),
            _ => (FlowMode::Paced, RefMode::Paced, 0),
        };
        let id = self
            .fixed
            .add_flow(FlowSpec {
                seg_bytes: seg,
                rate: r,
                mode,
            })
            .map_err(|e| {
                InputError::at(
                    path,
                    line,
                    format!("flow {name}: cannot add it ({e:?}; at most {CAPACITY} flows)"),
                )
            })?;
        let j = self.reference.add_flow(
            u64::from(seg),
            u64::from(r.units()),
            rmode,
            u64::from(window),
        );
        debug_assert_eq!(id.index(), j);
        self.ids.insert(name, j);
        self.names.push(name);
        Ok(j)
    }

    /// Applies one event to both sides (after [`drain`](Self::drain) at its time).
    pub fn apply(&mut self, ev: Event, path: &Path, line: u64) -> Result<(), InputError> {
        let Some(name) = ev.flow() else {
            return Ok(());
        };
        let i = self.flow(name, ev, path, line)?;
        let id = FlowId::from_index(i as u16);
        let now = Instant::from_ns(self.now_ns);
        let now_f = self.now_ns as f64;
        let bad =
            |e: cc_pacer::PacerError| InputError::at(path, line, format!("flow {name}: {e:?}"));
        match ev {
            Event::Rate(_, bps) => {
                let r = Rate::from_bps(bps);
                self.fixed.set_rate(id, r).map_err(bad)?;
                self.reference.set_rate(i, u64::from(r.units()));
            }
            Event::Window(_, w) => {
                self.fixed.set_window(id, w, now).map_err(|e| {
                    InputError::at(
                        path,
                        line,
                        format!("flow {name}: {e:?} (a window flow's first row must be `window`)"),
                    )
                })?;
                self.reference.set_window(i, u64::from(w), now_f);
            }
            Event::Enqueue(_, b) => {
                self.fixed.enqueue(id, b, now).map_err(bad)?;
                self.reference.enqueue(i, u64::from(b), now_f);
            }
            Event::Ack(_, b) => {
                self.fixed.on_ack(id, b, now).map_err(|e| {
                    InputError::at(
                        path,
                        line,
                        format!("flow {name}: {e:?} (ack is for window flows)"),
                    )
                })?;
                self.reference.on_ack(i, u64::from(b), now_f);
            }
            Event::Tick => {}
        }
        Ok(())
    }
}
