//! The transport: the receiver (in-order delivery, an ACK every k packets and at a flow's or
//! a segment's end, a NACK per gap), the sender's cumulative ACK, go-back-N and the
//! retransmission timer, and each ACK handed to the controller with its INT, ECN echo and RTT
//! sample.

use super::*;

impl Sim {
    pub(super) fn host_rx(&mut self, h: u32, pi: u32) {
        let p = self.pkts[pi as usize];
        match p.kind {
            KIND_DATA => {
                self.c.delivered += 1;
                if p.ecn {
                    self.maybe_cnp(h, p.flow);
                }
                self.data_rx(h, pi, p);
            }
            KIND_CNP => {
                self.release(pi);
                self.cnp_rx(p.flow);
            }
            KIND_PROBE => {
                // The responder stamps the request's arrival on its own clock and answers
                // after a turnaround of 300–700 ns (uniform; drawn from a hash of the arrival
                // time, so the workload's random stream is the same as without probes).
                self.pkts[pi as usize].hops[0] = u64::from(nic_clock(h, self.now));
                let turnaround = (300 + mix(self.now ^ 0x7A2A) % 401) * PS_PER_NS;
                self.push(self.now + turnaround, Ev::Respond { host: h, pkt: pi });
            }
            KIND_PROBE_RESP => {
                self.release(pi);
                self.probe_rx(p);
            }
            _ => {
                self.release(pi);
                self.ack_rx(p);
            }
        }
    }

    pub(super) fn data_rx(&mut self, h: u32, pi: u32, p: Pkt) {
        let seg = self.seg_bytes;
        let ack_every = self.ack_every;
        let now_ns = self.now / PS_PER_NS;
        let f = &mut self.flows[p.flow as usize];
        let reply = if p.seq == f.rcv_next {
            f.rcv_next += u64::from(p.payload);
            f.delivered = f.rcv_next;
            self.delivered_bytes += u64::from(p.payload);
            if let Some(w) = &mut f.web {
                w.on_deliver(f.rcv_next, now_ns);
            }
            f.rcv_count += 1;
            f.nack_for = None;
            let last = f.rcv_next >= f.size || seg.is_some_and(|s| f.rcv_next.is_multiple_of(s));
            if f.rcv_count >= ack_every || last {
                f.rcv_count = 0;
                Some(KIND_ACK)
            } else {
                None
            }
        } else if p.seq > f.rcv_next && f.nack_for != Some(f.rcv_next) {
            f.nack_for = Some(f.rcv_next);
            Some(KIND_NACK)
        } else {
            None
        };
        let rcv = f.rcv_next;
        match reply {
            Some(kind) => {
                // Reuse the data packet's slot for the ACK, echoing its INT.
                let int_len = self.int_wire_bytes(u32::from(p.nhop));
                let pk = &mut self.pkts[pi as usize];
                pk.kind = kind;
                pk.seq = rcv;
                pk.payload = 0;
                pk.wire = self.wire.ack + int_len;
                self.c.acks += 1;
                if kind == KIND_NACK {
                    self.c.nacks += 1;
                }
                let port = self.hosts[h as usize].port;
                self.ports[port as usize].q_ack.push_back(pi);
                self.start_tx(port);
            }
            None => self.release(pi),
        }
    }

    /// The receiver `h` got a CE-marked data packet of flow `fid`: when the algorithm reads
    /// CNPs and the flow's last CNP is at least the CNP interval old (or it has none), a CNP
    /// goes back to the sender in the ACK class (RoCEv2's notification point).
    pub(super) fn maybe_cnp(&mut self, h: u32, fid: u32) {
        let Some(interval) = self.cnp_interval_ps else {
            return;
        };
        let now = self.now;
        let f = &mut self.flows[fid as usize];
        if f.cnp_last_ps.is_some_and(|t| now < t + interval) {
            return;
        }
        f.cnp_last_ps = Some(now);
        self.c.cnps_sent += 1;
        let pi = self.alloc(Pkt {
            flow: fid,
            wire: CNP_BYTES,
            kind: KIND_CNP,
            t_sent_ps: now,
            ..Pkt::default()
        });
        let port = self.hosts[h as usize].port;
        self.ports[port as usize].q_ack.push_back(pi);
        self.start_tx(port);
    }

    /// A CNP reaches the sender of flow `fid`: its controller's `on_cnp`.
    pub(super) fn cnp_rx(&mut self, fid: u32) {
        self.c.cnps_received += 1;
        if self.run_cc(fid, |cc, cx| cc.on_cnp(cx)) {
            let src = self.flows[fid as usize].src;
            self.host_try_send(src);
        }
    }

    pub(super) fn int_bytes(&mut self, p: &Pkt) -> usize {
        if !self.int_on {
            return 0;
        }
        let hdr = (u16::from(p.nhop) << 12) | (p.path_id & 0x0FFF);
        self.int_buf[..2].copy_from_slice(&hdr.to_be_bytes());
        for i in 0..usize::from(p.nhop) {
            self.int_buf[2 + 8 * i..10 + 8 * i].copy_from_slice(&p.hops[i].to_be_bytes());
        }
        2 + 8 * usize::from(p.nhop)
    }

    pub(super) fn ack_rx(&mut self, p: Pkt) {
        let now = self.now;
        let now_ns = now / PS_PER_NS;
        if now >= self.stats_from_ps {
            self.stats.rtt.add((now - p.t_sent_ps) / PS_PER_NS);
        }
        let fid = p.flow;
        let n = self.int_bytes(&p);
        let int = self.int_buf;
        let f = &mut self.flows[fid as usize];
        if f.done_ps.is_some() {
            return;
        }
        if p.seq > f.snd_una {
            f.snd_una = p.seq;
            f.last_progress_ps = now;
        }
        let nack = p.kind == KIND_NACK;
        if nack && p.seq < f.snd_nxt {
            f.snd_nxt = p.seq.max(f.snd_una);
            if f.seg.is_some_and(|s| s.1 > f.snd_nxt) {
                f.seg = None;
            }
            f.cc.on_rewind(f.snd_nxt);
        }
        // The flow's application (CATS's conductor) learns what was acknowledged; then the
        // congestion controller gets the ACK.
        if let Some(w) = &mut f.web {
            w.on_ack(f.snd_una, now_ns, &mut self.rec, fid, f.record);
        }
        let ack = Ack {
            seq: p.seq,
            nack,
            snd_una: f.snd_una,
            snd_nxt: f.snd_nxt,
            int: &int[..n],
            ecn_echo: p.ecn,
            rtt_ps: now - p.t_sent_ps,
        };
        let mut cx = Cx {
            now_ps: now,
            flow: fid,
            src: f.src,
            rec: if f.record { Some(&mut self.rec) } else { None },
        };
        let reply = f.cc.on_ack(&mut cx, &ack);
        self.apply(fid, reply);
        let f = &mut self.flows[fid as usize];
        if f.all_acked() {
            self.finish_flow(fid);
        } else {
            // The pacer learns what left the network and what is to be sent (again).
            self.sync_window(fid);
            self.refill(fid);
        }
        let src = self.flows[fid as usize].src;
        self.host_try_send(src);
    }

    pub(super) fn rto(&mut self, fid: u32) {
        let now = self.now;
        let rto = self.rto_ps;
        let f = &mut self.flows[fid as usize];
        f.rto_armed = false;
        if f.done_ps.is_some() || f.snd_una >= f.snd_nxt {
            return;
        }
        if now >= f.last_progress_ps + rto {
            // Go back to the first unacknowledged byte.
            self.c.timeouts += 1;
            f.snd_nxt = f.snd_una;
            f.seg = None;
            f.cc.on_timeout();
            f.last_progress_ps = now;
            let src = f.src;
            f.rto_armed = true;
            self.push(now + rto, Ev::Rto { flow: fid });
            self.sync_window(fid);
            self.refill(fid);
            self.host_try_send(src);
        } else {
            f.rto_armed = true;
            let t = f.last_progress_ps + rto;
            self.push(t, Ev::Rto { flow: fid });
        }
    }

    pub(super) fn finish_flow(&mut self, fid: u32) {
        let now = self.now;
        let f = &mut self.flows[fid as usize];
        f.done_ps = Some(now);
        if !f.long && f.stopped_ps.is_none() {
            let fct = now - f.start_ps;
            self.stats.flow_done(
                f.size_bytes,
                fct as f64 / 1e3,
                f.ideal_ps as f64 / 1e3,
                f.slowdown_ideal_ps as f64 / 1e3,
            );
        }
        let src = self.flows[fid as usize].src;
        self.release_slot(fid);
        self.admit_waiting(src);
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{hpcc, incast, pkt, run_to, sim};
    use super::*;

    /// A star of 2 hosts with the top-level keys `head`; flow 0: `size` bytes from host 1 to
    /// host 0 starting at `start_ns`.
    fn pair(head: &str, size: u64, start_ns: u64) -> Sim {
        sim(&hpcc(
            head,
            "kind = \"star\"\nhosts = 2",
            &incast(&[1], 0, size, start_ns),
        ))
    }

    /// Hands data packet `seq` (1000 bytes) of flow 0 to its receiver, host 0: what it sent
    /// back (`(kind, ACK number)`), if anything.
    fn deliver(s: &mut Sim, seq: u64) -> Option<(u8, u64)> {
        let (acks, port) = (s.c.acks, s.hosts[0].port as usize);
        let p = pkt(s, KIND_DATA, 0, seq, 1_000, 1_064, 0);
        let before = s.ports[port].q_ack.len() + usize::from(s.ports[port].cur.is_some());
        s.data_rx(0, p, s.pkts[p as usize]);
        let after = s.ports[port].q_ack.len() + usize::from(s.ports[port].cur.is_some());
        assert_eq!(s.c.acks - acks, (after - before) as u64);
        (s.c.acks > acks).then(|| (s.pkts[p as usize].kind, s.pkts[p as usize].seq))
    }

    #[test]
    fn the_receiver_acks_every_kth_packet_and_the_flows_last() {
        let mut s = pair("ack_every = 3", 5_000, 90_000);
        let replies: Vec<_> = (0..5).map(|k| deliver(&mut s, k * 1_000)).collect();
        assert_eq!(
            replies,
            [
                None,
                None,
                Some((KIND_ACK, 3_000)),
                None,
                Some((KIND_ACK, 5_000))
            ]
        );
        assert_eq!(s.flows[0].delivered, 5_000);
    }

    #[test]
    fn a_gap_gets_one_nack_for_its_first_missing_byte_and_later_packets_are_discarded() {
        let mut s = pair("", 10_000, 90_000);
        assert_eq!(deliver(&mut s, 0), Some((KIND_ACK, 1_000)));
        // 1000 ..< 2000 lost: one NACK for 1000, then nothing while the gap stays.
        assert_eq!(deliver(&mut s, 2_000), Some((KIND_NACK, 1_000)));
        assert_eq!(deliver(&mut s, 3_000), None);
        assert_eq!(s.c.nacks, 1);
        // Go-back-N: the receiver kept nothing after the gap.
        assert_eq!(deliver(&mut s, 1_000), Some((KIND_ACK, 2_000)));
        assert_eq!(deliver(&mut s, 2_000), Some((KIND_ACK, 3_000)));
        // A duplicate is dropped without a reply.
        assert_eq!(deliver(&mut s, 1_000), None);
        assert_eq!(s.flows[0].delivered, 3_000);
    }

    /// Flow 0 (host 1 → host 0) after 1.5 µs of sending at line rate: no ACK is back yet (the
    /// round trip is over 4 µs).
    fn sending() -> Sim {
        let mut s = pair("", 1_000_000, 0);
        run_to(&mut s, 1_500);
        let f = &s.flows[0];
        assert_eq!(f.snd_una, 0);
        assert!(f.snd_nxt >= 10_000, "{}", f.snd_nxt);
        s
    }

    /// An ACK (`nack` false) or NACK of flow 0 for `seq` reaches its sender.
    fn ack(s: &mut Sim, nack: bool, seq: u64) {
        let kind = if nack { KIND_NACK } else { KIND_ACK };
        let p = Pkt {
            seq,
            kind,
            flow: 0,
            wire: 64,
            ..Pkt::default()
        };
        s.ack_rx(p);
    }

    /// The first bytes of the next `n` data packets host 1 puts on the wire from now (the loop
    /// run nanosecond by nanosecond, each transmission seen as it starts).
    fn next_sent(s: &mut Sim, n: usize) -> Vec<u64> {
        let port = s.hosts[1].port as usize;
        let mut tx = s.ports[port].tx_bytes;
        let mut seqs = Vec::new();
        // A transmission that started with the ACK just handled counts.
        if let Some(p) = s.ports[port].cur
            && s.pkts[p as usize].t_sent_ps == s.now
        {
            seqs.push(s.pkts[p as usize].seq);
        }
        while seqs.len() < n {
            run_to(s, s.now / PS_PER_NS + 1);
            if s.ports[port].tx_bytes != tx {
                tx = s.ports[port].tx_bytes;
                let p = s.ports[port].cur.expect("a transmission started");
                seqs.push(s.pkts[p as usize].seq);
            }
        }
        seqs
    }

    #[test]
    fn go_back_n_resends_from_the_first_unacked_byte_after_a_nack() {
        let mut s = sending();
        let sent = s.flows[0].snd_nxt;
        // An ACK moves snd_una only: sending goes on after what was sent.
        ack(&mut s, false, 2_000);
        assert_eq!(s.flows[0].snd_una, 2_000);
        assert!(s.flows[0].snd_nxt >= sent);
        assert!(next_sent(&mut s, 1)[0] >= sent);
        // A NACK for 5000 acknowledges what is before it, and the sender goes back to it.
        let sent = s.flows[0].snd_nxt;
        assert!(sent > 6_000);
        ack(&mut s, true, 5_000);
        assert_eq!(s.flows[0].snd_una, 5_000);
        assert_eq!(next_sent(&mut s, 3), [5_000, 6_000, 7_000]);
        // A late NACK below snd_una goes back to snd_una, not below.
        ack(&mut s, true, 3_000);
        assert_eq!(s.flows[0].snd_una, 5_000);
        assert_eq!(next_sent(&mut s, 2), [5_000, 6_000]);
        assert_eq!(s.c.timeouts, 0);
    }

    #[test]
    fn the_retransmission_timer_goes_back_to_the_first_unacked_byte_only_after_an_rto_without_progress()
     {
        let mut s = sending();
        // The NIC's port held busy: nothing more is sent while the test looks.
        s.ports[s.hosts[1].port as usize].cur.get_or_insert(0);
        ack(&mut s, false, 3_000);
        let (sent, progress, rto) = (s.flows[0].snd_nxt, s.flows[0].last_progress_ps, s.rto_ps);
        assert!(sent > 3_000);
        // One ps early: re-armed for the deadline, nothing resent.
        s.now = progress + rto - 1;
        drain_rto(&mut s);
        s.rto(0);
        assert_eq!((s.c.timeouts, s.flows[0].snd_nxt), (0, sent));
        assert_eq!(drain_rto(&mut s), [progress + rto]);
        // At the deadline: back to snd_una, and armed again one RTO later.
        s.now = progress + rto;
        s.rto(0);
        assert_eq!((s.c.timeouts, s.flows[0].snd_nxt), (1, 3_000));
        assert_eq!(drain_rto(&mut s), [progress + 2 * rto]);
    }

    /// The times of the pending RTO events of flow 0 (the queue is left empty).
    fn drain_rto(s: &mut Sim) -> Vec<u64> {
        super::super::testkit::drain(s)
            .into_iter()
            .filter_map(|(t, e)| matches!(e, Ev::Rto { flow: 0 }).then_some(t))
            .collect()
    }
}
