//! The network: hosts, switches and links of the scenario's topology, routes (ECMP by a hash
//! of the flow id on the leaf-spine and the fat tree) and the ideal FCT of a path.

use super::*;

impl Sim {
    pub(super) fn link(&mut self, a: u32, b: u32, rate_bps: u64, delay_ps: u64) {
        let code = hpcc_cc::int::SPEED_BPS
            .iter()
            .position(|&r| r == rate_bps)
            .unwrap_or(0) as u8;
        for (x, y) in [(a, b), (b, a)] {
            let id = self.ports.len() as u32;
            let is_switch = x >= self.n_hosts;
            self.ports.push(Port {
                node: x,
                peer: y,
                rate_bps,
                // ns-3's times are computed per packet ([`ns3_tx_ns`]).
                ps_per_byte: if self.ns3_switch {
                    0
                } else {
                    ps_per_byte(rate_bps)
                },
                delay_ps,
                lane: NO_LANE,
                speed_code: code,
                is_switch,
                q_ack: VecDeque::new(),
                q_data: VecDeque::new(),
                q_bytes: 0,
                cur: None,
                tx_bytes: 0,
                free_at_ps: 0,
                overlaps: 0,
                max_q_bytes: 0,
                carried_data: false,
                // The two ports of a link are created together, each facing the other.
                rev: if x == a { id + 1 } else { id - 1 },
                ingress_bytes: 0,
                pause_sent: false,
                paused: false,
                paused_since_ps: 0,
                hdrm_bytes: 0,
                headroom_bytes: 0,
                pfc_shift: 0,
                ns3_time: self.ns3_switch,
                arrive_seq: 0,
            });
            if is_switch {
                self.switches[(x - self.n_hosts) as usize].ports.push(id);
            } else {
                self.hosts[x as usize].port = id;
            }
        }
    }

    /// Switches on the path from `src` to `dst` (for the base RTT and the INT hop count) and
    /// the links: `(fabric links, switch hops)`.
    pub(super) fn path_shape(&self, src: u32, dst: u32) -> (u64, u64) {
        match self.topo {
            TopoKind::Star => (0, 1),
            TopoKind::Dumbbell => {
                let same = (src < self.left_hosts) == (dst < self.left_hosts);
                if same { (0, 1) } else { (1, 2) }
            }
            TopoKind::LeafSpine => {
                if src / self.hosts_per_leaf == dst / self.hosts_per_leaf {
                    (0, 1)
                } else {
                    (2, 3)
                }
            }
            TopoKind::FatTree => {
                let f = &self.fat;
                if f.tor_of(src) == f.tor_of(dst) {
                    (0, 1)
                } else if f.pod_of(src) == f.pod_of(dst) {
                    (2, 3)
                } else {
                    (4, 5)
                }
            }
        }
    }

    /// The nodes a packet of `flow` from host `src` to host `dst` passes through, hop by hop
    /// as the switches route it, ending at the node it reaches after at most 16 switches
    /// (`dst` when the routes are right).
    pub fn walk(&self, src: u32, dst: u32, flow: u32) -> Vec<u32> {
        let mut node = self.ports[self.hosts[src as usize].port as usize].peer;
        let mut nodes = vec![node];
        while node >= self.n_hosts && nodes.len() <= 16 {
            let port = self.route(node - self.n_hosts, dst, flow);
            node = self.ports[port as usize].peer;
            nodes.push(node);
        }
        nodes
    }

    /// The switches and fabric links on the path from `src` to `dst`, as the base RTT and the
    /// ideal FCT count them: `(fabric links, switches)`.
    pub fn shape_of(&self, src: u32, dst: u32) -> (u64, u64) {
        self.path_shape(src, dst)
    }

    pub(super) fn route(&self, sw: u32, dst: u32, flow: u32) -> u32 {
        self.route_by(sw, dst, self.ecmp(flow))
    }

    /// The ECMP choices of the hash key `key` (a flow id, or one marked as a reverse key):
    /// the spine of a leaf-spine (first digit); the fat tree's plane, i.e. the ToR's uplink
    /// (first digit), and the core within the plane, i.e. the aggregation switch's uplink
    /// (second digit), as two digits of one hash. Computed once per flow and direction
    /// ([`Ends`]), so that a switch routes without dividing.
    pub(super) fn ecmp(&self, key: u32) -> [u16; 2] {
        let h = mix(u64::from(key));
        match self.topo {
            TopoKind::Star | TopoKind::Dumbbell => [0, 0],
            TopoKind::LeafSpine => [(h % u64::from(self.spines)) as u16, 0],
            TopoKind::FatTree => {
                let (a, c) = (
                    u64::from(self.fat.aggs_per_pod),
                    u64::from(self.fat.cores_per_agg),
                );
                [(h % a) as u16, ((h / a) % c) as u16]
            }
        }
    }

    /// [`route`](Self::route) with the ECMP digits of the packet's key ([`Sim::ecmp`]) and the
    /// destination's place in the tree read from tables ([`HostLoc`], `Switch::pod`).
    #[inline]
    pub(super) fn route_by(&self, sw: u32, dst: u32, d: [u16; 2]) -> u32 {
        let s = &self.switches[sw as usize];
        let i = match self.topo {
            TopoKind::Star => dst,
            TopoKind::Dumbbell => {
                let lh = self.left_hosts;
                let right = self.n_hosts - lh;
                match (sw, dst < lh) {
                    (0, true) => dst,
                    (0, false) => lh,
                    (_, false) => dst - lh,
                    (_, true) => right,
                }
            }
            // A leaf's hosts then the spines; a spine's leaves.
            TopoKind::LeafSpine => {
                let l = self.loc[dst as usize];
                if s.tier == TIER_EDGE {
                    if l.edge == sw {
                        l.edge_port
                    } else {
                        self.hosts_per_leaf + u32::from(d[0])
                    }
                } else {
                    l.edge
                }
            }
            // Ports as `build_topology` makes them: a ToR's hosts then its pod's aggregation
            // switches; an aggregation switch's ToRs then its plane's cores; a core's
            // aggregation switches, one per pod. The ToR picks the plane and the aggregation
            // switch the core by two digits of one hash of the flow id.
            TopoKind::FatTree => {
                let f = &self.fat;
                let l = self.loc[dst as usize];
                match s.tier {
                    TIER_EDGE if l.edge == sw => l.edge_port,
                    TIER_EDGE => f.hosts_per_tor + u32::from(d[0]),
                    TIER_AGG if l.pod == s.pod => l.pod_port,
                    TIER_AGG => f.tors_per_pod + u32::from(d[1]),
                    _ => l.pod,
                }
            }
        };
        s.ports[i as usize]
    }

    /// Builds the network: hosts first (node ids `0..n_hosts`), each with its one port, then
    /// the switches and the links of the topology.
    pub(super) fn build_topology(&mut self, t: &Topology) {
        let n_hosts = self.n_hosts;
        let host_delay = t.host_delay_ns * PS_PER_NS;
        let fab_rate = t.fabric_rate_bps.unwrap_or(t.host_rate_bps);
        let fab_delay = t.fabric_delay_ns.unwrap_or(t.host_delay_ns) * PS_PER_NS;
        let n_sw = match t.kind {
            TopoKind::Star => 1,
            TopoKind::Dumbbell => 2,
            TopoKind::LeafSpine => t.leaves.unwrap_or(0) + t.spines.unwrap_or(0),
            TopoKind::FatTree => self.fat.tors() + self.fat.aggs() + self.fat.cores(),
        };
        for s in 0..n_sw {
            let (tier, pod) = match t.kind {
                TopoKind::LeafSpine if s < t.leaves.unwrap_or(0) => (TIER_EDGE, 0),
                TopoKind::FatTree if s < self.fat.tors() => (TIER_EDGE, s / self.fat.tors_per_pod),
                TopoKind::FatTree if s < self.fat.tors() + self.fat.aggs() => {
                    (TIER_AGG, (s - self.fat.tors()) / self.fat.aggs_per_pod)
                }
                TopoKind::Star | TopoKind::Dumbbell => (TIER_EDGE, 0),
                _ => (TIER_CORE, 0),
            };
            self.switches.push(Switch {
                ports: Vec::new(),
                tier,
                pod,
                used_bytes: 0,
                max_used_bytes: 0,
                id: ((s + 1) & 0xFFF) as u16,
                shared_used_bytes: 0,
                total_headroom_bytes: 0,
                total_reserve_bytes: 0,
            });
        }
        // Where each host sits: its edge switch (leaf or ToR), its port there, its pod and its
        // ToR's place among the pod's ToRs.
        self.loc = (0..n_hosts)
            .map(|h| match t.kind {
                TopoKind::LeafSpine => HostLoc {
                    edge: h / self.hosts_per_leaf,
                    edge_port: h % self.hosts_per_leaf,
                    pod: 0,
                    pod_port: 0,
                },
                TopoKind::FatTree => {
                    let f = &self.fat;
                    HostLoc {
                        edge: f.tor_of(h),
                        edge_port: h % f.hosts_per_tor,
                        pod: f.pod_of(h),
                        pod_port: f.tor_of(h) % f.tors_per_pod,
                    }
                }
                TopoKind::Star | TopoKind::Dumbbell => HostLoc::default(),
            })
            .collect();
        for _ in 0..n_hosts {
            self.hosts.push(Host {
                port: 0,
                wake_at: u64::MAX,
                pacer: pacer::NicPacer::new(self.pacer_fixed, t.host_rate_bps),
                slot_flow: vec![NO_FLOW],
                free: Vec::new(),
                draining: Vec::new(),
                waiting: VecDeque::new(),
                cur: None,
                hold_until: 0,
                tick_at: 0,
                ns3_qps: Vec::new(),
                ns3_rrlast: 0,
                ns3_next_send: None,
            });
        }
        let sw_node = |s: u32| n_hosts + s;
        match t.kind {
            TopoKind::Star => {
                for h in 0..n_hosts {
                    self.link(h, sw_node(0), t.host_rate_bps, host_delay);
                }
            }
            TopoKind::Dumbbell => {
                let lh = self.left_hosts;
                for h in 0..n_hosts {
                    let s = if h < lh { 0 } else { 1 };
                    self.link(h, sw_node(s), t.host_rate_bps, host_delay);
                }
                self.link(sw_node(0), sw_node(1), fab_rate, fab_delay);
            }
            TopoKind::LeafSpine => {
                let leaves = t.leaves.unwrap_or(0);
                for h in 0..n_hosts {
                    self.link(
                        h,
                        sw_node(h / self.hosts_per_leaf),
                        t.host_rate_bps,
                        host_delay,
                    );
                }
                for l in 0..leaves {
                    for s in 0..self.spines {
                        self.link(sw_node(l), sw_node(leaves + s), fab_rate, fab_delay);
                    }
                }
            }
            // The links in `mix/fat.txt`'s order: hosts to their ToR, every ToR to each
            // aggregation switch of its pod, every aggregation switch to each core of its plane.
            TopoKind::FatTree => {
                let f = self.fat;
                let (tors, aggs) = (f.tors(), f.aggs());
                for h in 0..n_hosts {
                    self.link(h, sw_node(f.tor_of(h)), t.host_rate_bps, host_delay);
                }
                for tor in 0..tors {
                    let pod = tor / f.tors_per_pod;
                    for i in 0..f.aggs_per_pod {
                        let agg = tors + pod * f.aggs_per_pod + i;
                        self.link(sw_node(tor), sw_node(agg), fab_rate, fab_delay);
                    }
                }
                for a in 0..aggs {
                    let plane = a % f.aggs_per_pod;
                    for j in 0..f.cores_per_agg {
                        let core = tors + aggs + plane * f.cores_per_agg + j;
                        self.link(sw_node(tors + a), sw_node(core), fab_rate, fab_delay);
                    }
                }
            }
        }
    }

    /// The ideal FCT of `size_v` bytes from `src` to `dst`, ps: every packet's bytes at the
    /// host's line rate plus the base RTT of the path (propagation both ways, an ACK's
    /// serialisation per link back, and a header-only packet's serialisation on every link
    /// after the first); when a fabric link on the path is slower, every packet's bytes at that
    /// rate plus propagation and the ACK's serialisation, if that is longer.
    pub(super) fn ideal_fct_ps(&self, src: u32, dst: u32, size_v: u64) -> u64 {
        let (fab_links, sw_hops) = self.path_shape(src, dst);
        let hp = &self.ports[self.hosts[src as usize].port as usize];
        let host_rate = hp.rate_bps;
        let host_delay = hp.delay_ps;
        // Fabric rate/delay: any switch-to-switch port.
        let (fab_rate, fab_delay) = self
            .ports
            .iter()
            .find(|p| p.is_switch && p.peer >= self.n_hosts)
            .map_or((host_rate, host_delay), |p| (p.rate_bps, p.delay_ps));
        let int_bytes = |hops: u64| self.int_wire_bytes(hops as u32);
        // Base RTT: propagation both ways, an ACK's serialisation per link back, and a
        // header-only packet's serialisation on every link after the first.
        let links = 2 + fab_links;
        let prop = 2 * (2 * host_delay + fab_links * fab_delay);
        // Under `switch_model = "ns3"` transmissions take ns-3's truncated times.
        let ns3 = self.ns3_switch;
        let ser = |bytes: u32, rate: u64| {
            if ns3 {
                ns3_tx_ns(bytes, rate) * PS_PER_NS
            } else {
                ser_ps(bytes, rate)
            }
        };
        let ack_wire = self.wire.ack + int_bytes(sw_hops);
        let ack_ser = 2 * ser(ack_wire, host_rate) + fab_links * ser(ack_wire, fab_rate);
        let hdr = self.wire.data_hdr;
        let hdr_ser = ser(hdr, host_rate) + (links - 2) * ser(hdr, fab_rate);
        let base_rtt = prop + ack_ser + hdr_ser;
        // Every packet's bytes at the host's line rate plus the base RTT; when a fabric link
        // on the path is slower (the CATS dumbbell's 2 Mb/s bottleneck behind 100 Mb/s host
        // links), every packet's bytes at that rate plus propagation and the ACK's
        // serialisation, if that is longer. Both are lower bounds of the FCT.
        let pk = size_v.div_ceil(u64::from(self.mtu));
        let wire = u128::from(size_v + pk * u64::from(hdr + int_bytes(0)));
        let at = |rate: u64| {
            if ns3 {
                // Packet by packet, each truncated: the full ones and the last.
                let (mtu, over) = (u64::from(self.mtu), hdr + int_bytes(0));
                let full = pk.saturating_sub(1);
                let last = size_v - full * mtu;
                full * ser(self.mtu + over, rate) + ser(last as u32 + over, rate)
            } else {
                (wire * 8_000_000_000_000).div_ceil(u128::from(rate)) as u64
            }
        };
        let first_link = at(host_rate) + base_rtt;
        if fab_links > 0 && fab_rate < host_rate {
            first_link.max(at(fab_rate) + prop + ack_ser)
        } else {
            first_link
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{hpcc, incast, sim};
    use super::*;

    const STAR: &str = "kind = \"star\"\nhosts = 4";
    const DUMBBELL: &str = "kind = \"dumbbell\"\nleft_hosts = 2\nright_hosts = 3";
    const LEAF_SPINE: &str = "kind = \"leaf_spine\"\nleaves = 3\nspines = 4\nhosts_per_leaf = 2";
    const FAT_TREE: &str = "kind = \"fat_tree\"\npods = 2\ntors_per_pod = 2\naggs_per_pod = 2\n\
                            cores_per_agg = 2\nhosts_per_tor = 2";

    #[test]
    fn the_two_ports_of_every_link_face_each_other_with_one_rate_and_delay() {
        for topo in [STAR, DUMBBELL, LEAF_SPINE, FAT_TREE] {
            let s = sim(&hpcc("", topo, &incast(&[1], 0, 1_000, 0)));
            for (i, p) in s.ports.iter().enumerate() {
                let r = &s.ports[p.rev as usize];
                assert_eq!(r.rev as usize, i, "{topo}: port {i}");
                assert_eq!((r.node, r.peer), (p.peer, p.node), "{topo}: port {i}");
                assert_eq!((r.rate_bps, r.delay_ps), (p.rate_bps, p.delay_ps));
                assert_eq!(p.is_switch, p.node >= s.n_hosts);
            }
            // One port per host, and it is the host's.
            for h in 0..s.n_hosts {
                let mine: Vec<usize> = (0..s.ports.len())
                    .filter(|&i| s.ports[i].node == h)
                    .collect();
                assert_eq!(
                    mine,
                    [s.hosts[h as usize].port as usize],
                    "{topo}: host {h}"
                );
            }
        }
    }

    #[test]
    fn every_route_reaches_its_destination_through_as_many_switches_as_the_path_shape_counts() {
        for topo in [STAR, DUMBBELL, LEAF_SPINE, FAT_TREE] {
            let s = sim(&hpcc("", topo, &incast(&[1], 0, 1_000, 0)));
            for src in 0..s.n_hosts {
                for dst in (0..s.n_hosts).filter(|&d| d != src) {
                    for flow in 0..8 {
                        let w = s.walk(src, dst, flow);
                        assert_eq!(w.last(), Some(&dst), "{topo}: {src} → {dst}, flow {flow}");
                        let switches = w.iter().filter(|&&n| n >= s.n_hosts).count() as u64;
                        assert_eq!(switches, s.path_shape(src, dst).1, "{topo}: {src} → {dst}");
                    }
                }
            }
        }
    }

    #[test]
    fn ecmp_picks_the_same_next_hop_for_every_packet_of_a_flow_and_spreads_flows_over_the_spines() {
        // Hosts 0 and 1 on leaf 0, 2 and 3 on leaf 1: two flows 0 → 2 and one 1 → 2.
        let text = hpcc(
            "",
            LEAF_SPINE,
            &(incast(&[0, 1], 2, 50_000, 0) + &incast(&[0], 2, 50_000, 0)),
        );
        let mut s = sim(&text);
        let leaf0 = 0;
        for flow in 0..3 {
            // Data packets of one flow, whatever their bytes, and its ACKs leave by one port.
            let mut up = Vec::new();
            let mut back = Vec::new();
            for k in 0..20u64 {
                let d =
                    super::super::testkit::pkt(&mut s, KIND_DATA, flow, k * 1_000, 1_000, 1_064, 0);
                up.push(s.egress_of(leaf0, &s.pkts[d as usize]));
                let a = super::super::testkit::pkt(&mut s, KIND_ACK, flow, k * 1_000, 0, 64, 0);
                back.push(s.egress_of(1, &s.pkts[a as usize]));
            }
            assert!(up.iter().all(|&e| e == up[0]), "flow {flow}: {up:?}");
            assert!(back.iter().all(|&e| e == back[0]), "flow {flow}: {back:?}");
            // Forward: up to a spine; back at leaf 1: up to a spine too (the ACK goes to host
            // 0 or 1 on leaf 0).
            assert!(up[0].1 && !back[0].1);
            assert!(s.ports[up[0].0 as usize].peer >= s.n_hosts + 3);
        }
        // Over many flows the leaf's uplinks are all used.
        let spines: std::collections::BTreeSet<u32> =
            (0..256).map(|f| s.walk(0, 2, f)[1]).collect();
        assert_eq!(spines.len(), 4, "{spines:?}");
    }

    #[test]
    fn the_ideal_fct_is_the_bytes_at_line_rate_plus_the_base_rtt() {
        // TIMELY reads no INT: a star at 100 Gb/s (80 ps a byte), 1 µs links, 1000-byte
        // packets with 64 bytes of headers, 64-byte ACKs. 10 000 bytes: 10 packets, 10 640
        // bytes on the first link = 851 200 ps; the base RTT is 4 × 1 µs of propagation, an
        // ACK on each of the two links back (2 × 5 120 ps) and a header-only packet on the
        // second link (5 120 ps).
        let text = "name = \"unit\"\nalgorithm = \"timely\"\nduration_ns = 100_000\n\
                    [topology]\nkind = \"star\"\nhosts = 2\nhost_rate_bps = 100_000_000_000\n";
        let s = sim(&(text.to_string() + &incast(&[1], 0, 1_000, 0)));
        assert_eq!(
            s.ideal_fct_ps(1, 0, 10_000),
            851_200 + 4_000_000 + 2 * 5_120 + 5_120
        );
        // One byte more is one more packet: its byte and a header.
        assert_eq!(
            s.ideal_fct_ps(1, 0, 10_001) - s.ideal_fct_ps(1, 0, 10_000),
            65 * 80
        );
    }
}
