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
