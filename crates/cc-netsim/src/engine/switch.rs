//! Ports and switches: the egress queues (ACKs before data), the shared or per-port
//! buffer, ECN marking at dequeue ([`crate::ecn`]), PFC pause and resume, INT stamped at
//! dequeue, serialisation on the link.

use super::*;

/// DOCA PCC: switch `sw`'s clock at `t_ps`, ns on 32 bits, with an offset of its own.
fn switch_clock(sw: u32, t_ps: u64) -> u32 {
    (t_ps / PS_PER_NS).wrapping_add(mix(0x5717_0000 ^ u64::from(sw))) as u32
}

impl Sim {
    pub(super) fn switch_rx(&mut self, sw: u32, pi: u32) {
        if self.ns3_switch {
            self.ns3_switch_rx(sw, pi);
            return;
        }
        let p = self.pkts[pi as usize];
        let (port, forward) = self.egress_of(sw, &p);
        if !forward {
            self.ports[port as usize].q_ack.push_back(pi);
        } else {
            let w = u64::from(p.wire);
            let s = &mut self.switches[sw as usize];
            let pt = &mut self.ports[port as usize];
            let fits = match self.buffer {
                BufferKind::Shared => s.used_bytes + w <= self.buffer_bytes,
                BufferKind::PerPort => pt.q_bytes + w <= self.buffer_bytes,
            };
            if !fits {
                if p.kind == KIND_PROBE {
                    self.c.probes_dropped += 1;
                } else {
                    self.c.dropped += 1;
                }
                self.release(pi);
                return;
            }
            self.enqueue_data(sw, port, pi, w, forward);
            if let Some((xoff, _)) = self.pfc {
                let ing = &mut self.ports[p.in_port as usize];
                ing.ingress_bytes += w;
                if ing.ingress_bytes > xoff && !ing.pause_sent {
                    ing.pause_sent = true;
                    self.c.pfc_pauses += 1;
                    let (up, delay) = (ing.rev, ing.delay_ps);
                    self.push(self.now + delay, Ev::Pfc { port: up, on: 1 });
                }
            }
        }
        self.start_tx(port);
    }

    /// The egress port of packet `p` at switch `sw`, and whether it goes forward: data and
    /// probes towards their receiver, ACKs, NACKs, CNPs and probe responses back to the sender.
    /// Under `switch_model = "ns3"` the reverse packets are hashed apart from their flow's data
    /// (ns-3 hashes an ACK's own addresses and ports).
    pub(super) fn egress_of(&self, sw: u32, p: &Pkt) -> (u32, bool) {
        let forward = matches!(p.kind, KIND_DATA | KIND_PROBE);
        let e = self.ends[p.flow as usize];
        let (dst, d) = if forward {
            (e.dst, e.fwd)
        } else {
            (e.src, e.rev)
        };
        (self.route_by(sw, dst, d), forward)
    }

    /// Queues packet `pi` (`w` bytes on the wire) in the data class of `port` of switch `sw`:
    /// the switch's and the port's bytes and their peaks, and for a forward packet the queue it
    /// found (the statistics' "queue found by arriving data packets").
    pub(super) fn enqueue_data(&mut self, sw: u32, port: u32, pi: u32, w: u64, forward: bool) {
        let pt = &mut self.ports[port as usize];
        if forward && self.now >= self.stats_from_ps {
            self.stats.queue_seen.add(pt.q_bytes);
        }
        let s = &mut self.switches[sw as usize];
        s.used_bytes += w;
        s.max_used_bytes = s.max_used_bytes.max(s.used_bytes);
        pt.q_bytes += w;
        pt.max_q_bytes = pt.max_q_bytes.max(pt.q_bytes);
        pt.q_data.push_back(pi);
    }

    /// Starts the next transmission on an idle port (switch queues, or a host's ACKs; a host
    /// port with no ACK pulls data from the NIC scheduler).
    pub(super) fn start_tx(&mut self, port: u32) {
        let pt = &mut self.ports[port as usize];
        if pt.cur.is_some() {
            return;
        }
        // The control class goes first; under `switch_model = "ns3"` a host's ACKs are in the
        // data class and wait with its data while the port is paused.
        let ctrl = if self.ns3_switch && pt.paused && !pt.is_switch {
            None
        } else {
            pt.q_ack.pop_front()
        };
        let mut probe_of = None;
        let pi = if let Some(a) = ctrl {
            if !pt.is_switch {
                // The NIC stamps a probe's request send time and a response's send time as
                // they go on the wire.
                let h = pt.node;
                let pk = &mut self.pkts[a as usize];
                match pk.kind {
                    KIND_PROBE => {
                        pk.t_sent_ps = self.now;
                        probe_of = Some(pk.flow);
                    }
                    KIND_PROBE_RESP => pk.hops[1] = u64::from(nic_clock(h, self.now)),
                    _ => {}
                }
                let wire = pk.wire;
                self.line_taken(h, u64::from(wire));
            }
            a
        } else if pt.paused {
            return;
        } else if let Some(d) = pt.q_data.pop_front() {
            let behind = pt.q_data.front().copied();
            let w = u64::from(self.pkts[d as usize].wire);
            let in_port = self.pkts[d as usize].in_port;
            let (is_switch, node) = (pt.is_switch, pt.node);
            // The packet queued behind this one leaves when this one's transmission ends:
            // prefetch it now (it may have waited long enough to leave the cache).
            if let Some(n) = behind {
                self.prefetch_pkt(n);
            }
            if is_switch && self.ns3_switch {
                self.ns3_dequeued(node - self.n_hosts, in_port, w);
            } else if let (true, Some((_, xon))) = (is_switch, self.pfc) {
                self.pfc_dequeued(in_port, w, xon);
            }
            // The INT bytes a hop adds on the wire (none under ns-3's fixed header).
            let nhop = u32::from(self.pkts[d as usize].nhop);
            let int_grow = self.int_wire_bytes(nhop + 1) - self.int_wire_bytes(nhop);
            let pt = &mut self.ports[port as usize];
            pt.q_bytes -= w;
            // Queue samples are taken on ports that carry data (not on ports that carry only
            // ACKs, which share the data class under `switch_model = "ns3"`).
            pt.carried_data |= matches!(self.pkts[d as usize].kind, KIND_DATA | KIND_PROBE);
            if pt.is_switch {
                let sw = (pt.node - self.n_hosts) as usize;
                self.switches[sw].used_bytes -= w;
                // ECN at egress (ns-3's `ShouldSendCN` at dequeue): the queue left behind the
                // packet decides; data packets only.
                if let Some(rule) = self.ecn.iter().find(|r| r.rate_bps == pt.rate_bps)
                    && self.pkts[d as usize].kind == KIND_DATA
                {
                    let rng = &mut self.ecn_rng;
                    if rule.marks(pt.q_bytes, || uniform(rng)) {
                        self.pkts[d as usize].ecn = true;
                        self.c.ecn_marked += 1;
                    }
                }
                if self.pkts[d as usize].kind == KIND_PROBE {
                    // The switch-telemetry record of the port the probe leaves through; the
                    // last switch's (the receiver's edge port) is the one delivered.
                    let tx = pt.tx_bytes + u64::from(self.pkts[d as usize].wire);
                    let clock = switch_clock(sw as u32, self.now);
                    let q = pt.q_bytes;
                    let pk = &mut self.pkts[d as usize];
                    pk.hops[2] = (tx & 0xFFFF_FFFF) | (u64::from(clock) << 32);
                    pk.hops[3] = q | ((sw as u64 & 0xFF) << 48);
                } else if self.int_on && self.pkts[d as usize].kind == KIND_DATA {
                    let id = self.switches[sw].id;
                    let pk = &mut self.pkts[d as usize];
                    if usize::from(pk.nhop) < MAX_HOPS {
                        pk.wire += int_grow;
                        let (tx_units, qlen_units) = match self.ns3_int_multi {
                            // ns-3 stamps the bytes sent before this packet
                            // (`SwitchNotifyDequeue`), in its units.
                            Some(m) => ns3model::ns3_int_hop(pt.tx_bytes, pt.q_bytes, m),
                            None => {
                                let tx = pt.tx_bytes + u64::from(pk.wire);
                                (
                                    ((tx / 128) & 0xF_FFFF) as u32,
                                    (pt.q_bytes / 80).min(u64::from(u16::MAX)) as u16,
                                )
                            }
                        };
                        let hop = hpcc_cc::Hop {
                            speed: hpcc_cc::Speed::from_code(pt.speed_code)
                                .unwrap_or(hpcc_cc::Speed::G100),
                            ts_ns: ((self.now / PS_PER_NS) & 0xFF_FFFF) as u32,
                            tx_units,
                            qlen_units,
                        };
                        pk.hops[usize::from(pk.nhop)] = hop.to_word();
                        pk.nhop += 1;
                        pk.path_id ^= id;
                    }
                }
            }
            d
        } else {
            if !pt.is_switch {
                let h = pt.node;
                self.host_try_send(h);
            }
            return;
        };
        self.transmit(port, pi);
        if let Some(fid) = probe_of {
            self.probe_departed(fid);
        }
    }

    pub(super) fn transmit(&mut self, port: u32, pi: u32) {
        let wire = self.pkts[pi as usize].wire;
        let pt = &mut self.ports[port as usize];
        if self.now < pt.free_at_ps {
            pt.overlaps += 1;
        }
        let d = pt.ser_ps(wire);
        pt.free_at_ps = self.now + d;
        pt.tx_bytes += u64::from(wire);
        pt.cur = Some(pi);
        self.push(self.now + d, Ev::TxDone { port });
        if self.ns3_switch {
            // ns-3 schedules the arrival as the transmission starts, after its end.
            self.seq = (self.seq + 1) & SEQ_MASK;
            self.ports[port as usize].arrive_seq = self.seq;
        }
    }

    /// PFC: a data packet that arrived through `in_port` left this switch's buffer; resume the
    /// upstream sender once the port's buffered bytes are down to XON.
    pub(super) fn pfc_dequeued(&mut self, in_port: u32, w: u64, xon: u64) {
        let ing = &mut self.ports[in_port as usize];
        ing.ingress_bytes -= w;
        if ing.pause_sent && ing.ingress_bytes <= xon {
            ing.pause_sent = false;
            let (up, delay) = (ing.rev, ing.delay_ps);
            self.push(self.now + delay, Ev::Pfc { port: up, on: 0 });
        }
    }

    /// PFC: a pause or resume frame arrives at the sender side of `port` (after the link's
    /// propagation delay; the frame itself is not serialised). The packet being sent finishes;
    /// data waits while paused, ACKs do not (they travel in another priority class).
    pub(super) fn pfc_frame(&mut self, port: u32, on: bool) {
        self.ns3_pfc(port, on);
        let now = self.now;
        let pt = &mut self.ports[port as usize];
        if on == pt.paused {
            return;
        }
        pt.paused = on;
        if on {
            pt.paused_since_ps = now;
        } else {
            let paused = now - pt.paused_since_ps;
            self.c.pfc_paused_ns += paused / PS_PER_NS;
            if !pt.is_switch {
                // The NIC's pacer learns the line time the pause took.
                let (h, rate) = (pt.node, pt.rate_bps);
                self.line_taken(
                    h,
                    (u128::from(paused) * u128::from(rate) / 8_000_000_000_000) as u64,
                );
            }
            self.start_tx(port);
        }
    }

    pub(super) fn tx_done(&mut self, port: u32) {
        let pt = &mut self.ports[port as usize];
        let Some(pi) = pt.cur.take() else {
            return;
        };
        let (peer, delay, rev, lane, seq) = (pt.peer, pt.delay_ps, pt.rev, pt.lane, pt.arrive_seq);
        self.pkts[pi as usize].in_port = rev;
        self.push_lane(
            lane,
            self.now + delay,
            Ev::Arrive {
                node: peer,
                pkt: pi,
            },
            seq,
        );
        self.start_tx(port);
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{drain, hpcc, incast, next_tx, pkt, port_to, sim};
    use super::*;

    /// A star of 3 hosts (switch node 3) with the `topology` keys added, flow 0 from host 0 to
    /// host 2 (not started: the tests move its packets by hand).
    fn star(topology: &str) -> Sim {
        let topo = format!("kind = \"star\"\nhosts = 3\n{topology}");
        sim(&hpcc("", &topo, &incast(&[0], 2, 1_000_000, 90_000)))
    }

    /// `n` data packets of flow 0, 1064 bytes on the wire, arriving at the switch from host 0
    /// (through `switch_rx`, as their arrival event delivers them).
    fn arrive(s: &mut Sim, n: usize) -> Vec<u32> {
        let ing = port_to(s, 0, 0);
        (0..n as u64)
            .map(|k| {
                let p = pkt(s, KIND_DATA, 0, k * 1_000, 1_000, 1_064, ing);
                s.switch_rx(0, p);
                p
            })
            .collect()
    }

    #[test]
    fn a_switch_port_marks_ecn_when_the_queue_behind_the_packet_exceeds_the_threshold_only() {
        // Kmin = Kmax = 3192 B: a data packet is marked when the egress queue it leaves behind
        // holds more than 3192 B (three packets: not marked).
        let mut s = star("ecn_threshold_bytes = 3_192");
        let out = port_to(&s, 0, 2);
        let ps = arrive(&mut s, 6);
        // The first left at once (an empty queue behind it); the other five queued.
        assert_eq!(s.ports[out as usize].q_bytes, 5 * 1_064);
        for _ in 0..5 {
            next_tx(&mut s, out);
        }
        let marked: Vec<bool> = ps.iter().map(|&p| s.pkts[p as usize].ecn).collect();
        // Behind each: 5320 (the first: 0), then 4256, 3192, 2128, 1064, 0 bytes.
        assert_eq!(marked, [false, true, false, false, false, false]);
        assert_eq!(s.c.ecn_marked, 1);
    }

    #[test]
    fn a_full_shared_buffer_drops_data_and_still_queues_acks() {
        // 3192 bytes hold exactly three 1064-byte packets (the first is on the wire, out of
        // the buffer): the fifth is dropped.
        let mut s = star("buffer_bytes = 3_192");
        let out = port_to(&s, 0, 2);
        arrive(&mut s, 5);
        assert_eq!(s.c.dropped, 1);
        assert_eq!(s.ports[out as usize].q_data.len(), 3);
        assert_eq!(s.switches[0].used_bytes, 3 * 1_064);
        // An ACK of the flow from host 2 goes back to host 0 through the control class.
        let back = port_to(&s, 0, 0);
        let a = pkt(&mut s, KIND_ACK, 0, 1_000, 0, 64, out);
        s.switch_rx(0, a);
        assert_eq!((s.c.dropped, s.c.acks_dropped), (1, 0));
        assert_eq!(s.ports[back as usize].cur, Some(a));
        assert_eq!(s.switches[0].used_bytes, 3 * 1_064);
    }

    #[test]
    fn pfc_pause_is_sent_when_ingress_exceeds_xoff_and_resume_when_it_falls_to_xon() {
        let mut s = star("pfc_xoff_bytes = 4_000\npfc_xon_bytes = 1_064");
        let (ing, out) = (port_to(&s, 0, 0), port_to(&s, 0, 2));
        let host0 = s.ports[ing as usize].rev;
        drain(&mut s);
        // The first leaves at once; the next four hold 1064, 2128, 3192, then 4256 B > 4000.
        let mut paused = Vec::new();
        for k in 0..5u64 {
            let p = pkt(&mut s, KIND_DATA, 0, k * 1_000, 1_000, 1_064, ing);
            s.switch_rx(0, p);
            paused.push(s.ports[ing as usize].pause_sent);
        }
        assert_eq!(paused, [false, false, false, false, true]);
        assert_eq!(s.c.pfc_pauses, 1);
        let pfc = |s: &mut Sim| -> Vec<(u64, u32, u32)> {
            drain(s)
                .into_iter()
                .filter_map(|(t, e)| match e {
                    Ev::Pfc { port, on } => Some((t, port, on)),
                    _ => None,
                })
                .collect()
        };
        // The pause reaches host 0's port one link delay (1 µs) later.
        assert_eq!(pfc(&mut s), [(1_000_000, host0, 1)]);
        // Dequeued: 3192 and 2128 B are above XON; 1064 B is at XON, and resumes host 0.
        let mut resumed = Vec::new();
        for _ in 0..3 {
            next_tx(&mut s, out);
            resumed.push(!s.ports[ing as usize].pause_sent);
        }
        assert_eq!(resumed, [false, false, true]);
        let t = s.now;
        assert_eq!(pfc(&mut s), [(t + 1_000_000, host0, 0)]);
    }

    #[test]
    fn a_paused_port_holds_its_data_but_sends_its_control_class() {
        let mut s = star("");
        let out = port_to(&s, 0, 2);
        s.pfc_frame(out, true);
        arrive(&mut s, 2);
        assert_eq!(s.ports[out as usize].cur, None);
        assert_eq!(s.ports[out as usize].q_data.len(), 2);
        // A control packet (a CNP on its way to host 2) goes at once.
        let ing = port_to(&s, 0, 0);
        let c = pkt(&mut s, KIND_CNP, 0, 0, 0, 64, ing);
        s.ports[out as usize].q_ack.push_back(c);
        s.start_tx(out);
        assert_eq!(s.ports[out as usize].cur, Some(c));
        // Resumed 2 µs later: the data goes once the CNP's transmission ends.
        s.now += 2_000_000;
        s.pfc_frame(out, false);
        assert_eq!(s.c.pfc_paused_ns, 2_000);
        next_tx(&mut s, out);
        assert_eq!(s.ports[out as usize].q_data.len(), 1);
        assert!(
            s.ports[out as usize]
                .cur
                .is_some_and(|p| s.pkts[p as usize].kind == KIND_DATA)
        );
    }
}
