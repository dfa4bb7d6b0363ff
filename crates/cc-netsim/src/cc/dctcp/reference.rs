//! DCTCP's sender, f64, as the HPCC authors' ns-3 simulator runs it (`cc_mode 8`,
//! `RdmaHw::HandleAckDctcp` in `simulation/src/point-to-point/model/rdma-hw.cc`, commit
//! `9f4be2a`): the estimator and cut of DCTCP §3.1 (Alizadeh et al., SIGCOMM 2010) on a
//! *rate*, not a window.
//!
//! * Per window of data (an ACK past the `snd_nxt` of the previous window's end): F = the ACKs
//!   with ECN echo over the packets of the window (at most 1), `α ← (1 − g)·α + g·F`
//!   (DCTCP eq. 1); the next window ends at the current `snd_nxt` and holds
//!   `(snd_nxt − ack)/mtu + 1` packets. The first ACK opens the first window
//!   (`snd_nxt/mtu + 1` packets) without an update. α starts at 1.
//! * An ACK with ECN echo outside CWR cuts the rate once: `R ← max(min_rate, R·(1 − α/2))`
//!   (DCTCP eq. 2 on the rate), and CWR lasts until an ACK passes the `snd_nxt` of the cut.
//! * Outside CWR, the first ACK of each window adds `rate_ai` (at most the line rate): the
//!   additive increase once per window, as TCP's per RTT.

/// The parameters (ns-3's names in the docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Params {
    /// Line rate, b/s: the start rate and the cap.
    pub line_rate_bps: f64,
    /// The least rate, b/s (`MIN_RATE`).
    pub min_rate_bps: f64,
    /// Additive increase per window, b/s (`DCTCP_RATE_AI`).
    pub rate_ai_bps: f64,
    /// α's gain g (`EWMA_GAIN`).
    pub g: f64,
    /// Payload bytes per packet (the window's packet count; `PACKET_PAYLOAD_SIZE`).
    pub mtu_bytes: u64,
}

/// One flow's sender state.
#[derive(Debug, Clone, PartialEq)]
pub struct State {
    /// The rate, b/s.
    pub rate_bps: f64,
    /// α.
    pub alpha: f64,
    /// ACKs with ECN echo in the current window.
    pub ecn_acks: u64,
    /// The current window's packets.
    pub window_pkts: u64,
    /// The current window ends when an ACK passes this (`None`: no ACK yet).
    pub window_end: Option<u64>,
    /// In CWR until an ACK passes `cwr_end`.
    pub cwr: bool,
    /// The `snd_nxt` of the last cut.
    pub cwr_end: u64,
    /// Cuts so far.
    pub cuts: u64,
}

/// Branch names, as reported.
pub mod branch {
    /// A cut.
    pub const CUT: &str = "cut";
    /// The additive increase of a new window.
    pub const INCREASE: &str = "increase";
    /// A new window in CWR (α updated, no increase).
    pub const WINDOW: &str = "window";
    /// Nothing but counting.
    pub const COUNT: &str = "count";
}

impl State {
    /// A new flow at line rate, α = 1.
    pub fn new(p: &Params) -> State {
        State {
            rate_bps: p.line_rate_bps,
            alpha: 1.0,
            ecn_acks: 0,
            window_pkts: 0,
            window_end: None,
            cwr: false,
            cwr_end: 0,
            cuts: 0,
        }
    }

    /// One ACK: the receiver's next expected byte `ack`, the sender's `snd_nxt`, the ECN echo.
    pub fn on_ack(&mut self, p: &Params, ack: u64, snd_nxt: u64, ecn: bool) -> &'static str {
        self.ecn_acks += u64::from(ecn);
        let new_window = match self.window_end {
            None => {
                self.window_end = Some(snd_nxt);
                self.window_pkts = snd_nxt / p.mtu_bytes + 1;
                true
            }
            Some(end) if ack > end => {
                // DCTCP eq. 1: α ← (1 − g)·α + g·F
                let f = (self.ecn_acks as f64 / self.window_pkts as f64).min(1.0);
                self.alpha = (1.0 - p.g) * self.alpha + p.g * f;
                self.window_end = Some(snd_nxt);
                self.ecn_acks = 0;
                self.window_pkts = (snd_nxt - ack) / p.mtu_bytes + 1;
                true
            }
            Some(_) => false,
        };
        if self.cwr && ack > self.cwr_end {
            self.cwr = false;
        }
        if ecn && !self.cwr {
            // DCTCP eq. 2 on the rate: R ← R·(1 − α/2)
            self.rate_bps = (self.rate_bps * (1.0 - self.alpha / 2.0)).max(p.min_rate_bps);
            self.cwr = true;
            self.cwr_end = snd_nxt;
            self.cuts += 1;
            return branch::CUT;
        }
        if new_window && !self.cwr {
            self.rate_bps = (self.rate_bps + p.rate_ai_bps).min(p.line_rate_bps);
            return branch::INCREASE;
        }
        if new_window {
            branch::WINDOW
        } else {
            branch::COUNT
        }
    }
}
