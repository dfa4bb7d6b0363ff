//! What `--ns3-out` needs from a run: the links and ports as built, the PFC frames as they
//! arrive, the switch ports' queue-length histograms, and ns-3's ideal ("standalone") FCT of a
//! path. Nothing here runs unless [`Sim::log_ns3`] was called.

use super::*;

/// A switch port's queue-length histogram in 1 KB bins: `(port, counts)`.
pub type QlenHist = (u32, Vec<u32>);

/// The ns-3 log of a run.
#[derive(Debug, Clone, Default)]
pub struct Ns3Log {
    /// PFC frames as they arrive at the paused side: `(time ns, port, 1 pause / 0 resume)`.
    pub pfc: Vec<(u64, u32, u8)>,
    /// Every switch port's histogram since the statistics started (`output.stats_from_ns`).
    pub hist: Vec<QlenHist>,
    /// Copies of `hist` at each multiple of ns-3's dump interval.
    pub dumps: Vec<(u64, Vec<QlenHist>)>,
}

/// The network and the log, as the writers of the ns-3 files need them.
#[derive(Debug, Clone)]
pub struct Ns3Net {
    /// Hosts (node ids `0..n_hosts`).
    pub n_hosts: u32,
    /// Switches (node ids `n_hosts..n_hosts + n_switches`).
    pub n_switches: u32,
    /// Links in the order the engine built them: `(a, b, rate b/s, delay ns)`.
    pub links: Vec<(u32, u32, u64, u64)>,
    /// Each port's `(node, peer)`.
    pub port_ends: Vec<(u32, u32)>,
    /// PFC frames, as in [`Ns3Log::pfc`].
    pub pfc: Vec<(u64, u32, u8)>,
    /// The queue-length dumps, the last one at the end of the run.
    pub qlen_dumps: Vec<(u64, Vec<QlenHist>)>,
}

impl Sim {
    /// Keeps the ns-3 log during the run (PFC frames and queue histograms).
    pub fn log_ns3(&mut self) {
        let hist = (0..self.ports.len() as u32)
            .filter(|&p| self.ports[p as usize].is_switch)
            .map(|p| (p, Vec::new()))
            .collect();
        self.ns3_log = Some(Box::new(Ns3Log {
            hist,
            ..Ns3Log::default()
        }));
    }

    /// A PFC frame arrives at `port`'s sender side.
    pub(super) fn ns3_pfc(&mut self, port: u32, on: bool) {
        if let Some(log) = &mut self.ns3_log {
            log.pfc.push((self.now / PS_PER_NS, port, u8::from(on)));
        }
    }

    /// A statistics sample: every switch port's queue into its histogram (ns-3 samples every
    /// 100 ns; the engine at `output.sample_ns`), and a dump at each multiple of ns-3's dump
    /// interval.
    pub(super) fn ns3_sample(&mut self, keep: bool) {
        let Some(log) = &mut self.ns3_log else {
            return;
        };
        if !keep {
            return;
        }
        for (port, h) in &mut log.hist {
            let kb = (self.ports[*port as usize].q_bytes / 1000) as usize;
            if h.len() <= kb {
                h.resize(kb + 1, 0);
            }
            h[kb] += 1;
        }
        let now_ns = self.now / PS_PER_NS;
        if self.now.is_multiple_of(PS_PER_NS)
            && now_ns.is_multiple_of(crate::ns3::QLEN_DUMP_INTERVAL_NS)
        {
            log.dumps.push((now_ns, log.hist.clone()));
        }
    }

    /// The flow group `g`'s kind.
    pub fn group_kind(&self, g: usize) -> Option<GroupKind> {
        self.groups.get(g).map(|x| x.kind)
    }

    /// The network as built and the ns-3 log (empty without [`Sim::log_ns3`]); the queue
    /// dumps end with one at the end of the run.
    pub fn ns3_net(&self) -> Ns3Net {
        let links = self
            .ports
            .chunks(2)
            .map(|p| {
                (
                    p[0].node,
                    p[0].peer,
                    p[0].rate_bps,
                    p[0].delay_ps / PS_PER_NS,
                )
            })
            .collect();
        let (pfc, mut qlen_dumps) = match &self.ns3_log {
            Some(l) => {
                let mut d = l.dumps.clone();
                let end = self.end_ps / PS_PER_NS;
                if d.last().is_none_or(|x| x.0 != end) {
                    d.push((end, l.hist.clone()));
                }
                (l.pfc.clone(), d)
            }
            None => (Vec::new(), Vec::new()),
        };
        qlen_dumps.shrink_to_fit();
        Ns3Net {
            n_hosts: self.n_hosts,
            n_switches: self.switches.len() as u32,
            links,
            port_ends: self.ports.iter().map(|p| (p.node, p.peer)).collect(),
            pfc,
            qlen_dumps,
        }
    }

    /// ns-3's ideal FCT of `size` bytes from `src` to `dst`, ns (`qp_finish` in third.cc): the
    /// path's base RTT — its propagation delay both ways plus one full packet's serialisation
    /// on every link, each rounded down to the ns — plus every byte with its packets' headers
    /// (not INT) at the path's slowest link, rounded down. The engine's MTU is the payload and
    /// its data header the header (under `switch_model = "ns3"` ns-3's, [`NS3_HDR_BYTES`],
    /// which is the one ns-3's formula counts).
    pub fn ns3_standalone_fct_ns(&self, src: u32, dst: u32, size: u64) -> u64 {
        let (fab_links, _) = self.path_shape(src, dst);
        let hp = &self.ports[self.hosts[src as usize].port as usize];
        let (host_rate, host_delay) = (hp.rate_bps, hp.delay_ps / PS_PER_NS);
        let (fab_rate, fab_delay) = self
            .ports
            .iter()
            .find(|p| p.is_switch && p.peer >= self.n_hosts)
            .map_or((host_rate, host_delay), |p| {
                (p.rate_bps, p.delay_ps / PS_PER_NS)
            });
        let mtu = u64::from(self.mtu);
        let tx = |rate: u64| (u128::from(mtu) * 8_000_000_000 / u128::from(rate)) as u64;
        let one_way = 2 * host_delay + fab_links * fab_delay;
        let base_rtt = 2 * one_way + 2 * tx(host_rate) + fab_links * tx(fab_rate);
        let bw = if fab_links > 0 {
            host_rate.min(fab_rate)
        } else {
            host_rate
        };
        let total = size + size.div_ceil(mtu) * u64::from(self.wire.data_hdr);
        base_rtt + (u128::from(total) * 8_000_000_000 / u128::from(bw)) as u64
    }
}
