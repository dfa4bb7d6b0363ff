//! CATS: one sender whose transport is fed by the CATS conductor (or in application order,
//! the FIFO baseline) and paced at a fixed rate with a fixed window. The conductor is the
//! flow's application ([`crate::sim::web::WebFlow`], fixed-point or reference by the
//! controller kind); the transport's controller here only holds the pacing rate and the
//! window, the same on both sides.

use super::{Ack, Algo, Cx, Entry, FlowCc, Reply};
use crate::sim::record::Format;
use crate::sim::scenario::{ControllerKind, Loaded, Scheduler, TopoKind};
use crate::sim::web::WebFlow;
use crate::trace::Param;

/// The registry line.
pub const ENTRY: Entry = Entry {
    name: "cats",
    setup: "the `replay cats --set` keys over the page's `# set` lines",
    topo_keys: &[],
    refuses,
    scenario_keys: &["web"],
    int_default: false,
    needs_int: false,
    build,
};

fn build(l: &Loaded, extra: &[Param]) -> Result<Box<dyn Algo>, String> {
    Ok(Box::new(WebSetup::build(l, extra)?))
}

/// A CATS scenario's sender.
#[derive(Debug, Clone)]
pub struct WebSetup {
    /// Both conductors' parameters, exactly as `replay cats` builds them.
    pub su: crate::cats::Setup,
    /// What feeds the transport.
    pub scheduler: Scheduler,
    /// Messages `(priority, bytes)` in application order.
    pub messages: Vec<(u8, u32)>,
    /// Pacing rate on the wire, b/s.
    pub pacing_rate_bps: u64,
    /// Bytes in flight at most.
    pub window_bytes: u64,
}

impl WebSetup {
    fn build(l: &Loaded, extra: &[Param]) -> Result<WebSetup, String> {
        let (Some(w), Some(page)) = (&l.sc.web, &l.page) else {
            return Err(format!("{}: key `web`: required", l.file.display()));
        };
        let mut params = page.params.clone();
        params.extend(l.params.iter().cloned());
        params.extend(extra.iter().cloned());
        let su = crate::cats::setup(&l.file, &params).map_err(|e| e.to_string())?;
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
            if n > crate::cats::QUEUE_CAPACITY {
                return Err(format!(
                    "{}: key `web.page`: {n} P{p} messages; a conductor queue holds {}",
                    l.file.display(),
                    crate::cats::QUEUE_CAPACITY
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
        Ok(WebSetup {
            su,
            scheduler: w.scheduler,
            messages: page.messages.clone(),
            pacing_rate_bps: pacing,
            window_bytes: window,
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
        use crate::trace::kinds::Values as _;
        self.su.values()
    }

    /// The controller kind picks the conductor ([`Algo::new_app`]), not the transport.
    fn new_flow(&self, _kind: ControllerKind) -> Box<dyn FlowCc> {
        Box::new(Paced {
            rate_bps: self.pacing_rate_bps as f64,
            window: self.window_bytes as f64,
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

/// A fixed pacing rate (b/s) and window (bytes): the CATS sender's transport.
struct Paced {
    rate_bps: f64,
    window: f64,
}

impl FlowCc for Paced {
    fn name(&self) -> &'static str {
        "cats paced"
    }

    /// The rate and window do not move; the conductor gets the ACK as the application.
    fn on_ack(&mut self, _cx: &mut Cx<'_>, _a: &Ack<'_>) -> Reply {
        Reply::default()
    }

    fn rate_bps(&self) -> f64 {
        self.rate_bps
    }

    fn window_bytes(&self) -> Option<f64> {
        Some(self.window)
    }
}
