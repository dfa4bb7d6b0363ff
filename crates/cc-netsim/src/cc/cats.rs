//! CATS: one sender whose transport is fed by the CATS conductor (or in application order,
//! the FIFO baseline) and paced at a fixed rate with a fixed window. The conductor is the
//! flow's application ([`crate::web::WebFlow`], fixed-point or reference by the
//! controller kind); the transport's controller here only holds the pacing rate and the
//! window, the same on both sides.

use super::{Ack, Algo, Cx, Entry, FlowCc, Reply};
use crate::record::Format;
use crate::scenario::{ControllerKind, Loaded, Scheduler, TopoKind};
use crate::web::WebFlow;
use cc_trace::Param;

/// The registry line.
pub const ENTRY: Entry = Entry {
    name: "cats",
    setup: "the `replay cats --set` keys over the page's `# set` lines",
    topo_keys: &[],
    refuses,
    scenario_keys: &["web"],
    int_default: false,
    needs_int: false,
    ns3_int_bytes: 0,
    ns3_keys: &[],
    build,
};

fn build(l: &Loaded, extra: &[Param]) -> Result<Box<dyn Algo>, String> {
    Ok(Box::new(WebSetup::build(l, extra)?))
}

/// A CATS scenario's sender.
#[derive(Debug, Clone)]
pub struct WebSetup {
    /// Both conductors' parameters, exactly as `replay cats` builds them.
    pub su: cc_trace::cats::Setup,
    /// What feeds the transport.
    pub scheduler: Scheduler,
    /// Messages `(priority, bytes)` in application order.
    pub messages: Vec<(u8, u32)>,
    /// Pacing rate on the wire, b/s.
    pub pacing_rate_bps: u64,
    /// Bytes in flight at most.
    pub window_bytes: u64,
    /// Slow start's first window, bytes (`[web] initial_window_packets` × MSS, at most
    /// `window_bytes`); `None`: the window is `window_bytes` from the first packet.
    pub initial_window_bytes: Option<u64>,
    /// Where the pacing rate and the window came from (`[web]` key or default), for the report.
    pub transport_origin: [&'static str; 2],
}

impl WebSetup {
    fn build(l: &Loaded, extra: &[Param]) -> Result<WebSetup, String> {
        let (Some(w), Some(page)) = (&l.sc.web, &l.page) else {
            return Err(format!("{}: key `web`: required", l.file.display()));
        };
        let mut params = page.params.clone();
        params.extend(l.params.iter().cloned());
        params.extend(extra.iter().cloned());
        let su = cc_trace::cats::setup(&l.file, &params).map_err(|e| e.to_string())?;
        let mss = su.cfg.mss_bytes();
        if mss != l.sc.mtu_bytes {
            return Err(format!(
                "{}: key `mtu_bytes`: {} differs from the conductor's mss_bytes {mss} (one chunk per packet)",
                l.file.display(),
                l.sc.mtu_bytes
            ));
        }
        for p in 0..5u8 {
            let n = page.messages.iter().filter(|m| m.0 == p).count();
            if n > cc_trace::cats::QUEUE_CAPACITY {
                return Err(format!(
                    "{}: key `web.page`: {n} P{p} messages; a conductor queue holds {}",
                    l.file.display(),
                    cc_trace::cats::QUEUE_CAPACITY
                ));
            }
        }
        let t = &l.sc.topology;
        let bottleneck = match t.kind {
            TopoKind::Star => t.host_rate_bps,
            _ => t
                .host_rate_bps
                .min(t.fabric_rate_bps.unwrap_or(t.host_rate_bps)),
        };
        let fabric_delay = t.fabric_delay_ns.unwrap_or(t.host_delay_ns);
        let one_way_ns = match t.kind {
            TopoKind::Star => 2 * t.host_delay_ns,
            TopoKind::Dumbbell => 2 * t.host_delay_ns + fabric_delay,
            TopoKind::LeafSpine => 2 * t.host_delay_ns + 2 * fabric_delay,
            TopoKind::FatTree => 2 * t.host_delay_ns + 4 * fabric_delay,
        };
        let pacing = w.pacing_rate_bps.unwrap_or(bottleneck);
        // Twice the bandwidth-delay product (BBR's cwnd gain), at least two packets.
        let bdp = u128::from(bottleneck) * u128::from(2 * one_way_ns) / 8_000_000_000;
        let window = w
            .window_bytes
            .unwrap_or((2 * bdp as u64).max(2 * u64::from(mss)));
        let initial = w
            .initial_window_packets
            .map(|n| (u64::from(n) * u64::from(mss)).min(window));
        Ok(WebSetup {
            su,
            scheduler: w.scheduler,
            messages: page.messages.clone(),
            pacing_rate_bps: pacing,
            window_bytes: window,
            initial_window_bytes: initial,
            transport_origin: [
                if w.pacing_rate_bps.is_some() {
                    "web.pacing_rate_bps"
                } else {
                    "default: the slowest link"
                },
                if w.window_bytes.is_some() {
                    "web.window_bytes"
                } else {
                    "default: 2 × the bottleneck's BDP"
                },
            ],
        })
    }
}

/// The CATS conductor's own keys (`h0`…`h3`, `l0`…`l3`, `m0`…`m4`): a FIFO sender has no
/// conductor and applies only `mss_bytes` and `snd_buf_bytes`.
fn conductor_key(k: &str) -> bool {
    let b = k.as_bytes();
    b.len() == 2 && matches!(b[0], b'h' | b'l' | b'm') && b[1].is_ascii_digit()
}

/// Every key applies, except the conductor's under `scheduler = "fifo"`.
fn refuses(l: &Loaded, key: &str) -> Option<&'static str> {
    let fifo =
        l.sc.web
            .as_ref()
            .is_some_and(|w| w.scheduler == Scheduler::Fifo);
    (fifo && conductor_key(key))
        .then_some("scheduler fifo has no conductor: only mss_bytes and snd_buf_bytes apply")
}

impl Algo for WebSetup {
    fn values(&self) -> Vec<(String, String, Option<&'static str>)> {
        use cc_trace::kinds::Values as _;
        self.su.values()
    }

    /// The controller kind picks the conductor ([`Algo::new_app`]), not the transport.
    fn new_flow(&self, _kind: ControllerKind) -> Box<dyn FlowCc> {
        let cap = self.window_bytes as f64;
        let initial = self.initial_window_bytes.map_or(cap, |b| b as f64);
        Box::new(Paced {
            rate_bps: self.pacing_rate_bps as f64,
            window: initial,
            initial,
            cap,
            snd_una: 0,
        })
    }

    fn new_app(&self, kind: ControllerKind) -> Option<Box<WebFlow>> {
        Some(WebFlow::new(self, kind))
    }

    /// The wide-area TCP's RFC 6298 (and ns-3) floor of 1 s.
    fn min_rto_ps(&self) -> u64 {
        1_000_000_000_000
    }

    /// 10 µs: wide-area paths (2^20 buckets: up to 10.5 s).
    fn rtt_bucket_ns(&self) -> u64 {
        10_000
    }

    fn record_format(&self) -> Format {
        Format::Cats
    }
}

/// A fixed pacing rate (b/s) and a window (bytes): the CATS sender's transport. With slow
/// start the window opens from `initial` by the bytes each ACK newly acknowledges, up to `cap`
/// (RFC 5681 §3.1: cwnd += min(N, SMSS) per ACK, N the bytes it acknowledges; the receiver
/// here ACKs every packet, so N is at most one MSS); without it `initial == cap`.
struct Paced {
    rate_bps: f64,
    window: f64,
    initial: f64,
    cap: f64,
    /// The cumulative ACK seen last.
    snd_una: u64,
}

impl FlowCc for Paced {
    fn name(&self) -> &'static str {
        "cats paced"
    }

    /// The rate does not move; the window opens by the bytes newly acknowledged until it
    /// reaches its cap. The conductor gets the ACK as the application.
    fn on_ack(&mut self, _cx: &mut Cx<'_>, a: &Ack<'_>) -> Reply {
        if a.snd_una > self.snd_una {
            self.window = (self.window + (a.snd_una - self.snd_una) as f64).min(self.cap);
            self.snd_una = a.snd_una;
        }
        Reply::default()
    }

    /// A retransmission timeout starts slow start again from the first window (RFC 5681 §3.1
    /// would take one segment; the first window keeps the model's one parameter).
    fn on_timeout(&mut self) {
        self.window = self.initial;
    }

    fn rate_bps(&self) -> f64 {
        self.rate_bps
    }

    fn window_bytes(&self) -> Option<f64> {
        Some(self.window)
    }
}
