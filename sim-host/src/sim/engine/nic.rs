//! The host NIC: its scheduler (earliest-due eligible flow first, within the window), pacing
//! at the controller's rate (per packet, or per TSO segment), the controller's send events
//! and the DOCA PCC RTT probes.

use super::*;

/// Host `h`'s NIC clock at `t_ps`, ns on 32 bits (wrapping every 4.29 s), with an
/// offset of its own (a hash of the host id: clocks of different hosts differ, and some wrap
/// during a run).
pub(crate) fn nic_clock(h: u32, t_ps: u64) -> u32 {
    (t_ps / PS_PER_NS).wrapping_add(mix(0xD0CA_0000 ^ u64::from(h))) as u32
}

impl Sim {
    /// The NIC scheduler: when the host port is idle, send one packet of the eligible flow
    /// that is due first, or wake up when one is due.
    pub(super) fn host_try_send(&mut self, h: u32) {
        let port = self.hosts[h as usize].port;
        if self.ports[port as usize].cur.is_some() {
            return;
        }
        if !self.ports[port as usize].q_ack.is_empty() {
            self.start_tx(port);
            return;
        }
        if self.ports[port as usize].paused {
            // PFC: the NIC sends no data until the switch resumes it.
            return;
        }
        let mut best: Option<(u64, u32)> = None;
        let mut i = 0;
        while i < self.hosts[h as usize].active.len() {
            let fid = self.hosts[h as usize].active[i];
            let f = &self.flows[fid as usize];
            if f.done_ps.is_some() {
                self.hosts[h as usize].active.swap_remove(i);
                continue;
            }
            i += 1;
            if f.snd_nxt >= f.send_limit() {
                continue;
            }
            if let Some(w) = f.window
                && (f.snd_nxt - f.snd_una) as f64 >= w
            {
                continue;
            }
            if best.is_none_or(|(t, b)| (f.next_send_ps, fid) < (t, b)) {
                best = Some((f.next_send_ps, fid));
            }
        }
        let Some((t, fid)) = best else {
            return;
        };
        if t > self.now {
            let host = &mut self.hosts[h as usize];
            if host.wake_at > t || host.wake_at < self.now {
                host.wake_at = t;
                self.push(t, Ev::Wake { host: h });
            }
            return;
        }
        self.send_data(fid, port);
    }

    pub(super) fn send_data(&mut self, fid: u32, port: u32) {
        let now = self.now;
        let mtu = u64::from(self.mtu);
        let int_hdr = self.int_wire_bytes(0);
        let f = &mut self.flows[fid as usize];
        let mut payload = mtu.min(f.send_limit() - f.snd_nxt);
        let mut segment = None;
        if let Some(seg) = self.seg_bytes {
            let boundary = (f.snd_nxt / seg + 1) * seg;
            payload = payload.min(boundary - f.snd_nxt);
            if f.seg.is_none_or(|s| s.1 <= f.snd_nxt) {
                let end = boundary.min(f.size);
                f.seg = Some((f.snd_nxt, end));
                f.seg_t_send_ps = now;
                segment = f.seg;
            }
        }
        let pk = Pkt {
            flow: fid,
            seq: f.snd_nxt,
            payload: payload as u32,
            wire: payload as u32 + HDR_BYTES + int_hdr,
            kind: KIND_DATA,
            t_sent_ps: now,
            ..Pkt::default()
        };
        f.snd_nxt += payload;
        let sent = Sent {
            seq: pk.seq,
            payload: pk.payload,
            wire: pk.wire,
            segment,
        };
        let mut cx = Cx {
            now_ps: now,
            flow: fid,
            src: f.src,
            rec: if f.record { Some(&mut self.rec) } else { None },
        };
        if let Some(reply) = f.cc.on_send(&mut cx, &sent) {
            self.apply(fid, reply);
        }
        let f = &mut self.flows[fid as usize];
        // Pacing.
        let rate = f.rate_bps.max(1.0);
        if let Some((s0, s1)) = f.seg {
            if f.snd_nxt >= s1 {
                let gap = ((s1 - s0) as f64 * 8e12 / rate) as u64;
                f.next_send_ps = (f.seg_t_send_ps + gap).max(now);
            } else {
                f.next_send_ps = now;
            }
        } else {
            let gap = (f64::from(pk.wire) * 8e12 / rate) as u64;
            f.next_send_ps = now + gap;
        }
        if self.jitter_ps > 0 && f.next_send_ps > now {
            f.next_send_ps += self.rng.next_u64() % (self.jitter_ps + 1);
        }
        let arm = !f.rto_armed;
        if arm {
            f.rto_armed = true;
            f.last_progress_ps = f.last_progress_ps.max(now);
        }
        self.c.sent += 1;
        let pi = self.alloc(pk);
        self.transmit(port, pi);
        if arm {
            self.push(now + self.rto_ps, Ev::Rto { flow: fid });
        }
    }

    /// After a controller ran on an event of flow `fid`: its new rate and window, and an RTT
    /// probe when it asks for one.
    pub(super) fn apply(&mut self, fid: u32, reply: Reply) {
        let f = &mut self.flows[fid as usize];
        f.rate_bps = f.cc.rate_bps();
        f.window = f.cc.window_bytes();
        if reply.probe {
            let src = f.src;
            let pk = Pkt {
                flow: fid,
                wire: PROBE_BYTES,
                kind: KIND_PROBE,
                ..Pkt::default()
            };
            self.c.probes_sent += 1;
            let pi = self.alloc(pk);
            let port = self.hosts[src as usize].port;
            // It goes when the port is next free (every caller ends with a transmission or
            // `host_try_send`, which sends the port's control packets first).
            self.ports[port as usize].q_ack.push_back(pi);
        }
    }

    /// DOCA PCC: the receiver `h` sends the response to probe `pi` (its send time is stamped
    /// when it goes on the wire).
    pub(super) fn respond(&mut self, h: u32, pi: u32) {
        let pk = &mut self.pkts[pi as usize];
        pk.kind = KIND_PROBE_RESP;
        pk.wire = PROBE_BYTES;
        let port = self.hosts[h as usize].port;
        self.ports[port as usize].q_ack.push_back(pi);
        self.start_tx(port);
    }

    /// DOCA PCC: a probe response reaches its sender: an RTT event with the request's send
    /// time (sender's clock), its receive time and the response's send time (responder's
    /// clock) and the switch-telemetry record.
    pub(super) fn probe_rx(&mut self, p: Pkt) {
        self.c.probe_responses += 1;
        let f = &self.flows[p.flow as usize];
        if f.done_ps.is_some() {
            return;
        }
        let cells = (p.hops[3] & 0xFFFF_FFFF_FFFF) / u64::from(cc_pcc::Telemetry::CELL_BYTES);
        let tel = cc_pcc::Telemetry {
            qlen_256b_cells: cells.min(u64::from(u16::MAX)) as u16,
            index: (p.hops[3] >> 48) as u8,
            flags: 0,
            tx_bytes: p.hops[2] as u32,
            tx_ts_ns: (p.hops[2] >> 32) as u32,
        }
        .encode();
        let r = ProbeResponse {
            req_send_ns: nic_clock(f.src, p.t_sent_ps),
            req_recv_ns: p.hops[0] as u32,
            resp_send_ns: p.hops[1] as u32,
            telemetry: tel,
        };
        let f = &mut self.flows[p.flow as usize];
        let mut cx = Cx {
            now_ps: self.now,
            flow: p.flow,
            src: f.src,
            rec: if f.record { Some(&mut self.rec) } else { None },
        };
        let reply = f.cc.on_probe_response(&mut cx, &r);
        self.apply(p.flow, reply);
        let src = self.flows[p.flow as usize].src;
        self.host_try_send(src);
    }
}
