//! The DCQCN reaction point (sender), f64, written from DCQCN §3.1 and Fig. 5 (Zhu et al.,
//! SIGCOMM 2015) and, where it chooses, from the HPCC authors' ns-3 simulator's
//! "Mellanox version" (`cc_mode 1`, `RdmaHw::*Mlx` in
//! `simulation/src/point-to-point/model/rdma-hw.cc`, commit `9f4be2a`):
//!
//! * **CNP**: marks the α slot and the decrease slot as having seen a CNP. The first CNP of a
//!   flow sets α = 1, starts the α timer and the decrease check, and sets
//!   `Rt = Rc = rate_on_first_cnp · Rc`.
//! * **α timer** (every `alpha_interval`): `α ← (1 − g)·α + g` when a CNP arrived in the slot,
//!   `α ← (1 − g)·α` when none did.
//! * **Decrease check** (every `decrease_interval`, 1 ns after the α timer's phase): when a
//!   CNP arrived since the last check, `Rt ← Rc` (unless the flow had not increased since its
//!   last cut and `clamp_target_rate` is off, ns-3's `ClampTargetRate`), `Rc ← max(min_rate,
//!   Rc·(1 − α/2))`, the increase counters go to 0 and the increase timer restarts.
//! * **Rate increase** on every expiry of the increase timer (`rp_timer`, after the first
//!   cut) and of the byte counter (every `byte_counter_bytes` sent, when non-zero): with T
//!   and BC the expiries counted since the last cut (before this one), fast recovery when
//!   both are below F (`fast_recovery_times`): `Rc ← (Rt + Rc)/2`; hyper increase when both
//!   are above F: `Rt ← Rt + R_HAI`, then `Rc ← (Rt + Rc)/2`; additive increase otherwise:
//!   `Rt ← Rt + R_AI`, then `Rc ← (Rt + Rc)/2`; `Rt` at most the line rate. Without a byte
//!   counter BC counts as T, which is ns-3's rule (T < F fast recovery, T = F additive, T > F
//!   hyper). ns-3's hyper increase adds a constant R_HAI (the paper's adds i·R_HAI); this
//!   follows ns-3.
//!
//! Timers are ns-3's events; here they run when the flow next hears of anything (a send, an
//! ACK, a CNP): every expiry due by then runs in time order first. ns-3 applies a new rate to
//! the next packet's pacing only (`m_rate` is read when a packet is sent), so the rates the
//! NIC paces at are the same.

/// The parameters, as the scenario's `[params]` give them (ns-3's names in the docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Params {
    /// The NIC's line rate, b/s: the start rate and the cap of `Rt`.
    pub line_rate_bps: f64,
    /// The least rate, b/s (`MIN_RATE`).
    pub min_rate_bps: f64,
    /// Additive increase step, b/s (`RATE_AI`).
    pub rate_ai_bps: f64,
    /// Hyper increase step, b/s (`RATE_HAI`).
    pub rate_hai_bps: f64,
    /// α's EWMA gain g (`EWMA_GAIN`).
    pub g: f64,
    /// α update interval, ps (`ALPHA_RESUME_INTERVAL`).
    pub alpha_interval_ps: u64,
    /// Rate decrease check interval, ps (`RATE_DECREASE_INTERVAL`).
    pub decrease_interval_ps: u64,
    /// Rate increase timer, ps (`RP_TIMER`).
    pub rp_timer_ps: u64,
    /// F: increase events in fast recovery (`FAST_RECOVERY_TIMES`).
    pub fast_recovery_times: u32,
    /// Byte counter, bytes (0: none, as ns-3's Mellanox version).
    pub byte_counter_bytes: u64,
    /// Set `Rt ← Rc` on every cut (`CLAMP_TARGET_RATE`).
    pub clamp_target_rate: bool,
    /// The fraction of the rate kept on the first CNP (`RateOnFirstCnp`).
    pub rate_on_first_cnp: f64,
}

/// One flow's reaction point.
#[derive(Debug, Clone, PartialEq)]
pub struct State {
    /// Current rate Rc, b/s.
    pub rc: f64,
    /// Target rate Rt, b/s.
    pub rt: f64,
    /// α.
    pub alpha: f64,
    /// A CNP arrived in the current α slot.
    pub alpha_cnp: bool,
    /// A CNP arrived since the last decrease check.
    pub decrease_cnp: bool,
    /// The flow has had a CNP (its α timer and decrease check run).
    pub seen_cnp: bool,
    /// Next α update, ps.
    pub next_alpha_ps: u64,
    /// Next decrease check, ps.
    pub next_decrease_ps: u64,
    /// Next increase timer expiry, ps (`None` before the first cut).
    pub next_increase_ps: Option<u64>,
    /// T: increase timer expiries since the last cut.
    pub t_count: u32,
    /// BC: byte counter expiries since the last cut.
    pub bc_count: u32,
    /// Bytes sent towards the next byte counter expiry.
    pub bytes: u64,
    /// Cuts so far.
    pub cuts: u64,
}

/// Branch names, as reported.
pub mod branch {
    /// The first CNP of a flow.
    pub const FIRST_CNP: &str = "first_cnp";
    /// A later CNP.
    pub const CNP: &str = "cnp";
    /// α update.
    pub const ALPHA: &str = "alpha";
    /// A rate cut.
    pub const CUT: &str = "cut";
    /// Fast recovery.
    pub const FAST_RECOVERY: &str = "fast_recovery";
    /// Additive increase.
    pub const ADDITIVE: &str = "additive_increase";
    /// Hyper increase.
    pub const HYPER: &str = "hyper_increase";
}

impl State {
    /// A new flow at line rate, α = 1, no timer running.
    pub fn new(p: &Params) -> State {
        State {
            rc: p.line_rate_bps,
            rt: p.line_rate_bps,
            alpha: 1.0,
            alpha_cnp: false,
            decrease_cnp: false,
            seen_cnp: false,
            next_alpha_ps: u64::MAX,
            next_decrease_ps: u64::MAX,
            next_increase_ps: None,
            t_count: 0,
            bc_count: 0,
            bytes: 0,
            cuts: 0,
        }
    }

    /// Runs every timer expiry due at or before `now_ps`, in time order (a decrease check
    /// before an increase expiry at the same time); the last branch run, if any.
    pub fn advance(&mut self, p: &Params, now_ps: u64) -> Option<&'static str> {
        let mut last = None;
        loop {
            let inc = self.next_increase_ps.unwrap_or(u64::MAX);
            let t = self.next_alpha_ps.min(self.next_decrease_ps).min(inc);
            if t > now_ps {
                return last;
            }
            if t == self.next_alpha_ps {
                if self.alpha_cnp {
                    // DCQCN: α ← (1 − g)·α + g
                    self.alpha = (1.0 - p.g) * self.alpha + p.g;
                    self.alpha_cnp = false;
                    self.next_alpha_ps += p.alpha_interval_ps;
                } else {
                    // α ← (1 − g)·α per slot without a CNP: n slots at once, up to the next
                    // event that reads α (a decrease check with a CNP pending) or now.
                    let until = if self.decrease_cnp {
                        now_ps.min(self.next_decrease_ps)
                    } else {
                        now_ps
                    };
                    let n = (until - t) / p.alpha_interval_ps + 1;
                    self.alpha *= (1.0 - p.g).powi(n.min(i32::MAX as u64) as i32);
                    self.next_alpha_ps += n * p.alpha_interval_ps;
                }
                last = Some(branch::ALPHA);
            } else if t == self.next_decrease_ps {
                if self.decrease_cnp {
                    self.cut(p, t);
                    self.next_decrease_ps += p.decrease_interval_ps;
                    last = Some(branch::CUT);
                } else {
                    // Checks with no CNP pending change nothing: skip to the first after now.
                    let n = (now_ps - t) / p.decrease_interval_ps + 1;
                    self.next_decrease_ps += n * p.decrease_interval_ps;
                }
            } else {
                self.next_increase_ps = Some(t + p.rp_timer_ps);
                last = Some(self.increase(p));
                self.t_count += 1;
            }
        }
    }

    /// ns-3 `CheckRateDecreaseMlx` with a CNP pending.
    fn cut(&mut self, p: &Params, t: u64) {
        if p.clamp_target_rate || self.t_count != 0 {
            self.rt = self.rc;
        }
        // DCQCN: Rc ← Rc·(1 − α/2), at least the minimum rate.
        self.rc = (self.rc * (1.0 - self.alpha / 2.0)).max(p.min_rate_bps);
        self.t_count = 0;
        self.bc_count = 0;
        self.bytes = 0;
        self.decrease_cnp = false;
        self.next_increase_ps = Some(t + p.rp_timer_ps);
        self.cuts += 1;
    }

    /// One increase event, by the stage the counters give.
    fn increase(&mut self, p: &Params) -> &'static str {
        let f = p.fast_recovery_times;
        let t = self.t_count;
        let bc = if p.byte_counter_bytes == 0 {
            t
        } else {
            self.bc_count
        };
        let b = if t < f && bc < f {
            branch::FAST_RECOVERY
        } else if t > f && bc > f {
            self.rt = (self.rt + p.rate_hai_bps).min(p.line_rate_bps);
            branch::HYPER
        } else {
            self.rt = (self.rt + p.rate_ai_bps).min(p.line_rate_bps);
            branch::ADDITIVE
        };
        // Rc ← (Rt + Rc)/2
        self.rc = (self.rc + self.rt) / 2.0;
        b
    }

    /// A CNP arrives at `now_ps` (timers due before it run first).
    pub fn on_cnp(&mut self, p: &Params, now_ps: u64) -> &'static str {
        self.advance(p, now_ps);
        self.alpha_cnp = true;
        self.decrease_cnp = true;
        if self.seen_cnp {
            return branch::CNP;
        }
        self.seen_cnp = true;
        self.alpha = 1.0;
        self.alpha_cnp = false;
        self.next_alpha_ps = now_ps + p.alpha_interval_ps;
        // ns-3: 1 ns after the α timer's phase, so a cut reads the α updated at its time.
        self.next_decrease_ps = now_ps + p.decrease_interval_ps + 1_000;
        self.rc *= p.rate_on_first_cnp;
        self.rt = self.rc;
        branch::FIRST_CNP
    }

    /// `bytes` were sent at `now_ps`: timers due run first, then the byte counter counts them
    /// (after the first cut, when it is on); the last branch run, if any.
    pub fn on_sent(&mut self, p: &Params, now_ps: u64, bytes: u64) -> Option<&'static str> {
        let mut last = self.advance(p, now_ps);
        if p.byte_counter_bytes == 0 || self.next_increase_ps.is_none() {
            return last;
        }
        self.bytes += bytes;
        while self.bytes >= p.byte_counter_bytes {
            self.bytes -= p.byte_counter_bytes;
            last = Some(self.increase(p));
            self.bc_count += 1;
        }
        last
    }
}
