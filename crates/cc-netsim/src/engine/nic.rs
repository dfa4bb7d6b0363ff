//! The host NIC: what its pacer ([`super::pacer`]) hands out goes on the wire when the port is
//! free (per packet, or a TSO segment's packets back to back); the controller's rate and window
//! go to the pacer, and the flow's data as it becomes available; a flow takes a pacer slot when
//! it starts (or waits for one) and gives it back when it finishes. Also the controller's send
//! events and the DOCA PCC RTT probes.

use super::*;

/// Host `h`'s NIC clock at `t_ps`, ns on 32 bits (wrapping every 4.29 s), with an
/// offset of its own (a hash of the host id: clocks of different hosts differ, and some wrap
/// during a run).
pub(crate) fn nic_clock(h: u32, t_ps: u64) -> u32 {
    (t_ps / PS_PER_NS).wrapping_add(mix(0xD0CA_0000 ^ u64::from(h))) as u32
}

impl Sim {
    /// The NIC scheduler: when the host port is idle (and no ACK or probe waits, and PFC has
    /// not paused it), send the next packet of the segment being sent, or take the next
    /// segment from the NIC's pacer; when nothing may leave yet, wake up when the pacer says.
    pub(super) fn host_try_send(&mut self, h: u32) {
        if self.ns3_switch {
            self.ns3_dequeue(h);
            return;
        }
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
        let now = self.now;
        if self.hosts[h as usize].hold_until > now {
            let t = self.hosts[h as usize].hold_until;
            self.wake(h, t);
            return;
        }
        let u = pacer::units_of(now);
        let mut calls = 0u32;
        loop {
            if let Some(fid) = self.hosts[h as usize].cur {
                if self.send_granted(fid, port) {
                    return;
                }
                self.hosts[h as usize].cur = None;
            }
            let host = &mut self.hosts[h as usize];
            let Some(seg) = host.pacer.next(u) else {
                match host.pacer.earliest(u) {
                    // Flows filed ahead are being moved into the wheel: ask again now.
                    Some(t) if t <= u && calls < 1 << 16 => {
                        calls += 1;
                        continue;
                    }
                    Some(t) => {
                        let t = pacer::ps_of(t).max(now + 1);
                        self.wake(h, t);
                    }
                    None => {
                        if host.tick_at <= now && !host.slot_flow.is_empty() {
                            host.tick_at = now + PACER_TICK_PS;
                            self.push(now + PACER_TICK_PS, Ev::Wake { host: h });
                        }
                    }
                }
                if !self.hosts[h as usize].waiting.is_empty() {
                    self.admit_waiting(h);
                }
                return;
            };
            let fid = host
                .slot_flow
                .get(usize::from(seg.slot))
                .copied()
                .unwrap_or(NO_FLOW);
            if seg.slot == LINE_SLOT {
                // The line flow: line time already taken by the port.
                continue;
            }
            self.c.pacer_segments += 1;
            if fid == NO_FLOW {
                // A finished flow's slot handing out what was still queued.
                self.c.pacer_unused_bytes += u64::from(seg.bytes);
                continue;
            }
            self.check_pace(fid, seg);
            let f = &mut self.flows[fid as usize];
            f.grant += u64::from(seg.bytes);
            if f.window.is_some() {
                f.p_inflight += u64::from(seg.bytes);
            }
            if self.pace_seg.is_some() {
                self.hosts[h as usize].cur = Some(fid);
            }
            if self.jitter_ps > 0 {
                let t = now + self.rng.next_u64() % (self.jitter_ps + 1);
                if t > now {
                    self.hosts[h as usize].hold_until = t;
                    let rate = self.host_rate_bps;
                    self.line_taken(
                        h,
                        (u128::from(t - now) * u128::from(rate) / 8_000_000_000_000) as u64,
                    );
                    if self.pace_seg.is_none() {
                        // The packet waits with its grant; `cur` sends it when the hold ends.
                        self.hosts[h as usize].cur = Some(fid);
                    }
                    self.wake(h, t);
                    return;
                }
            }
            // Per packet, the packet goes now; a partial grant (the window had less room than
            // the packet) waits for the rest.
            if self.pace_seg.is_none() && self.send_granted(fid, port) {
                return;
            }
        }
    }

    /// Checks a segment of flow `fid` against its previous one (independently of the pacer,
    /// with the documented roundings): it may not leave before the previous one's time plus
    /// that one's gap at the rate it left with; a pair exactly one gap apart at an unchanged
    /// rate measures the pacing error against the controller's rate.
    fn check_pace(&mut self, fid: u32, seg: pacer::Seg) {
        let f = &mut self.flows[fid as usize];
        let gap = u64::from(cc_pacer::gap(seg.bytes, f.p_tpb));
        if let Some(p) = f.last_seg {
            if seg.t_send < p.t_send + p.gap {
                self.c.pacer_early += 1;
            } else if seg.t_send == p.t_send + p.gap && p.rate == f.p_rate && p.req_bps > 0.0 {
                // The gap asked for: 8·bytes / rate, in 1/16 ns.
                let want = f64::from(p.bytes) * 8.0 / p.req_bps * 16e9;
                let err = p.gap as f64 / want - 1.0;
                let c = &mut self.c;
                if c.pacer_paced_pairs == 0 {
                    c.pacer_gap_err_min = err;
                }
                c.pacer_paced_pairs += 1;
                c.pacer_gap_err_sum += err;
                c.pacer_gap_err_min = c.pacer_gap_err_min.min(err);
                c.pacer_gap_excess_max_ns =
                    c.pacer_gap_excess_max_ns.max((p.gap as f64 - want) / 16.0);
            }
        }
        f.last_seg = Some(LastSeg {
            t_send: seg.t_send,
            gap,
            rate: f.p_rate,
            req_bps: f.rate_bps,
            bytes: seg.bytes,
        });
    }

    /// Host `h`'s port spent line time on something its pacer does not hand out (an ACK, a
    /// NACK, a probe or its response, a PFC pause, a send-jitter hold): `bytes` of line time go
    /// to the pacer's line flow, so that the pacer's line keeps up with the port. Without it
    /// the pacer's line falls behind the port, its flows' due times with it, and a flow
    /// scheduled at `now` waits behind every flow whose due time lies in that past.
    pub(super) fn line_taken(&mut self, h: u32, bytes: u64) {
        if bytes == 0 {
            return;
        }
        let u = pacer::units_of(self.now);
        self.c.pacer_line_bytes += bytes;
        let host = &mut self.hosts[h as usize];
        // At most 2^31 bytes at once (a 1.3 s pause at 1.6 Tb/s); the backlog stays in u32.
        host.pacer.enqueue(LINE_SLOT, bytes.min(1 << 31) as u32, u);
    }

    /// Arms host `h`'s wake-up at `t` (ps) unless one at or before it is armed.
    fn wake(&mut self, h: u32, t: u64) {
        let host = &mut self.hosts[h as usize];
        if host.wake_at > t || host.wake_at < self.now {
            host.wake_at = t;
            self.push(t, Ev::Wake { host: h });
        }
    }

    /// Sends one packet of flow `fid` within what its pacer handed out, if it may: true when a
    /// packet went on the wire. TSO: the segment's next packet (false when the grant is used
    /// up); per packet: the packet once its whole wire bytes are granted. A grant with nothing
    /// left to send is dropped and counted.
    fn send_granted(&mut self, fid: u32, port: u32) -> bool {
        let mtu = u64::from(self.mtu);
        let f = &mut self.flows[fid as usize];
        let left = f.send_limit().saturating_sub(f.snd_nxt);
        let payload = if let Some(seg) = self.pace_seg {
            let boundary = (f.snd_nxt / seg + 1) * seg;
            mtu.min(left).min(boundary - f.snd_nxt).min(f.grant)
        } else if f.grant < u64::from(f.pq) || f.grant == 0 {
            self.hosts[f.src as usize].cur = None;
            return false;
        } else {
            mtu.min(left)
        };
        if payload == 0 || f.done_ps.is_some() {
            // The grant is used up (TSO), or there is nothing left to send with it.
            self.c.pacer_unused_bytes += f.grant;
            f.avail -= f.grant;
            f.grant = 0;
            f.pq = 0;
            self.hosts[f.src as usize].cur = None;
            self.refill(fid);
            self.sync_window(fid);
            return false;
        }
        if self.pace_seg.is_some() {
            f.grant -= payload;
            f.avail -= payload;
        } else {
            // The packet takes its grant whole.
            f.avail -= f.grant;
            f.grant = 0;
            f.pq = 0;
            self.hosts[f.src as usize].cur = None;
        }
        self.send_data(fid, port, payload);
        self.refill(fid);
        self.sync_window(fid);
        true
    }

    pub(super) fn send_data(&mut self, fid: u32, port: u32, payload: u64) {
        let now = self.now;
        let int_hdr = self.int_wire_bytes(0);
        let f = &mut self.flows[fid as usize];
        let mut segment = None;
        if let Some(seg) = self.seg_bytes {
            let boundary = (f.snd_nxt / seg + 1) * seg;
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
            wire: payload as u32 + self.wire.data_hdr + int_hdr,
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

    /// Wire bytes of a data packet beside its payload.
    fn overhead(&self) -> u64 {
        u64::from(self.wire.data_hdr + self.int_wire_bytes(0))
    }

    /// Per-packet pacing: the wire bytes of the packets that carry stream bytes `a .. b`
    /// (packets start at multiples of the MTU; `a`, `b` at packet starts or the flow's end).
    fn wire_of(&self, a: u64, b: u64) -> u64 {
        let m = u64::from(self.mtu);
        (b - a) + self.overhead() * (b.div_ceil(m) - a.div_ceil(m))
    }

    /// The controller's window in the pacer's bytes: TSO payload bytes (rounded up); per
    /// packet, whole packets (`⌈W / MTU⌉`, as the engine's "send while in flight < W") of full
    /// wire size. Saturates at `u32::MAX`.
    fn pacer_window(&self, w: f64) -> u32 {
        let b = if self.pace_seg.is_some() {
            w.max(0.0).ceil() as u64
        } else {
            let m = f64::from(self.mtu);
            ((w.max(0.0) / m).ceil() as u64).saturating_mul(u64::from(self.mtu) + self.overhead())
        };
        b.min(u64::from(u32::MAX)) as u32
    }

    /// Gives the pacer what flow `fid` may send next: TSO, its bytes as they become available,
    /// at most two segments ahead (topped up as segments leave, so its backlog never runs dry
    /// while it has data); per packet, its next packet's wire bytes.
    pub(super) fn refill(&mut self, fid: u32) {
        let f = &self.flows[fid as usize];
        if f.slot == NO_SLOT || f.done_ps.is_some() {
            return;
        }
        let need = f.send_limit().saturating_sub(f.snd_nxt);
        let add = if let Some(seg) = self.pace_seg {
            let chunk = PACER_AHEAD * seg;
            let want = need.min(chunk);
            if f.avail < want && (need <= chunk || f.avail * 2 <= want) {
                want - f.avail
            } else {
                0
            }
        } else if f.pq == 0 && f.avail == 0 && need > 0 {
            need.min(u64::from(self.mtu)) + self.overhead()
        } else {
            0
        };
        if add == 0 {
            return;
        }
        let (src, slot) = (f.src, f.slot);
        let u = pacer::units_of(self.now);
        let f = &mut self.flows[fid as usize];
        f.avail += add;
        if self.pace_seg.is_none() {
            f.pq = add as u32;
        }
        self.hosts[src as usize].pacer.enqueue(slot, add as u32, u);
    }

    /// Window flows: brings what the pacer counts in flight down to the bytes really in
    /// flight plus those handed out and not yet sent (after ACKs, a go-back-N, a send).
    pub(super) fn sync_window(&mut self, fid: u32) {
        let f = &self.flows[fid as usize];
        if f.slot == NO_SLOT || f.window.is_none() {
            return;
        }
        let truth = if self.pace_seg.is_some() {
            f.snd_nxt - f.snd_una.min(f.snd_nxt)
        } else {
            self.wire_of(f.snd_una.min(f.snd_nxt), f.snd_nxt)
        } + f.grant;
        if f.p_inflight > truth {
            let d = (f.p_inflight - truth).min(u64::from(u32::MAX));
            let (src, slot) = (f.src, f.slot);
            let u = pacer::units_of(self.now);
            self.flows[fid as usize].p_inflight -= d;
            self.hosts[src as usize].pacer.on_ack(slot, d as u32, u);
        }
    }

    /// Flow `fid` starts sending: it takes a pacer slot, or waits for one (counted).
    pub(super) fn admit(&mut self, fid: u32) {
        if self.ns3_switch {
            self.ns3_new_qp(fid);
            return;
        }
        let h = self.flows[fid as usize].src;
        self.hosts[h as usize].waiting.push_back(fid);
        self.admit_waiting(h);
        if self.flows[fid as usize].slot == NO_SLOT {
            self.c.pacer_waits += 1;
            self.flows[fid as usize].wait_since = Some(self.now);
        }
    }

    /// Gives the waiting flows of host `h` the slots there are: free ones, finished flows'
    /// slots that have left the wheel, or new ones up to the pacer's capacity.
    pub(super) fn admit_waiting(&mut self, h: u32) {
        let now = self.now;
        let u = pacer::units_of(now);
        while let Some(&fid) = self.hosts[h as usize].waiting.front() {
            if self.flows[fid as usize].done_ps.is_some() {
                self.hosts[h as usize].waiting.pop_front();
                continue;
            }
            let (rate, window) = {
                let f = &self.flows[fid as usize];
                (
                    pacer::rate_units(f.rate_bps),
                    f.window.map(|w| self.pacer_window(w)),
                )
            };
            let seg = match self.pace_seg {
                Some(s) => s as u32,
                None => (self.mtu + self.overhead() as u32).next_multiple_of(256),
            };
            let host = &mut self.hosts[h as usize];
            if host.free.is_empty() {
                let pacer = &host.pacer;
                host.draining.retain(|&s| {
                    if pacer.idle_backlog(s).is_some() {
                        host.free.push(s);
                        false
                    } else {
                        true
                    }
                });
            }
            let (slot, leftover) = if let Some(s) = host.free.pop() {
                let left = host.pacer.idle_backlog(s).unwrap_or(0);
                host.pacer.set_rate(s, rate);
                if let Some(w) = window {
                    host.pacer.on_ack(s, u32::MAX, u);
                    host.pacer.set_window(s, w, u);
                }
                (s, left)
            } else if host.pacer.len() < self.pacer_cap + 1 {
                match host.pacer.add(seg, rate, window) {
                    Some(s) => {
                        host.slot_flow.push(NO_FLOW);
                        self.c.pacer_max_flows =
                            self.c.pacer_max_flows.max(host.pacer.len() as u64 - 1);
                        (s, 0)
                    }
                    None => {
                        self.c.pacer_refused += 1;
                        return;
                    }
                }
            } else {
                return;
            };
            host.waiting.pop_front();
            host.slot_flow[usize::from(slot)] = fid;
            if rate < cc_pacer::Rate::MIN.units() {
                self.c.pacer_rate_floor += 1;
            }
            let f = &mut self.flows[fid as usize];
            f.slot = slot;
            f.avail = u64::from(leftover);
            f.grant = 0;
            f.pq = if self.pace_seg.is_none() { leftover } else { 0 };
            f.p_inflight = 0;
            f.p_rate = rate;
            f.p_tpb = cc_pacer::time_per_byte(cc_pacer::Rate::from_units(rate));
            f.p_window = window.unwrap_or(0);
            if let Some(t) = f.wait_since.take() {
                self.c.pacer_wait_ns += (now - t) / PS_PER_NS;
            }
            self.refill(fid);
        }
    }

    /// A finished flow gives its slot back: reusable once the pacer has let it go.
    pub(super) fn release_slot(&mut self, fid: u32) {
        let f = &mut self.flows[fid as usize];
        let (h, slot) = (f.src, f.slot);
        if slot == NO_SLOT {
            return;
        }
        f.slot = NO_SLOT;
        self.c.pacer_unused_bytes += f.grant;
        f.grant = 0;
        let host = &mut self.hosts[h as usize];
        host.slot_flow[usize::from(slot)] = NO_FLOW;
        host.draining.push(slot);
        if host.cur == Some(fid) {
            host.cur = None;
        }
    }

    /// After a controller ran on an event of flow `fid`: its new rate and window, and an RTT
    /// probe when it asks for one.
    pub(super) fn apply(&mut self, fid: u32, reply: Reply) {
        let f = &mut self.flows[fid as usize];
        f.rate_bps = f.cc.rate_bps();
        f.window = f.cc.window_bytes();
        if self.ns3_switch {
            self.ns3_change_rate(fid, reply.rate_set);
        } else if f.slot != NO_SLOT {
            let rate = pacer::rate_units(f.rate_bps);
            let window = f.window.map(|w| self.pacer_window(w));
            let u = pacer::units_of(self.now);
            let f = &mut self.flows[fid as usize];
            let (h, slot) = (f.src, f.slot);
            if rate != f.p_rate {
                f.p_rate = rate;
                f.p_tpb = cc_pacer::time_per_byte(cc_pacer::Rate::from_units(rate));
                if rate < cc_pacer::Rate::MIN.units() {
                    self.c.pacer_rate_floor += 1;
                }
                self.hosts[h as usize].pacer.set_rate(slot, rate);
            }
            let f = &mut self.flows[fid as usize];
            if let Some(w) = window
                && w != f.p_window
            {
                f.p_window = w;
                self.hosts[h as usize].pacer.set_window(slot, w, u);
            }
        }
        let f = &mut self.flows[fid as usize];
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

    /// Runs one hook of flow `fid`'s controller now and applies its reply, unless the flow is
    /// done; whether it ran.
    pub(super) fn run_cc(
        &mut self,
        fid: u32,
        hook: impl FnOnce(&mut dyn FlowCc, &mut Cx<'_>) -> Reply,
    ) -> bool {
        let f = &mut self.flows[fid as usize];
        if f.done_ps.is_some() {
            return false;
        }
        let mut cx = Cx {
            now_ps: self.now,
            flow: fid,
            src: f.src,
            rec: if f.record { Some(&mut self.rec) } else { None },
        };
        let reply = hook(f.cc.as_mut(), &mut cx);
        self.apply(fid, reply);
        true
    }

    /// DOCA PCC: a probe flow `fid` asked for went on the wire: the platform reports the
    /// departure on a TX event (`RTT_REQ_SENT`), which the controller gets now.
    pub(super) fn probe_departed(&mut self, fid: u32) {
        self.run_cc(fid, |cc, cx| cc.on_probe_sent(cx));
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

#[cfg(test)]
mod tests {
    use super::super::testkit::{hpcc, incast, next_tx, pkt, run_to, sim};
    use super::*;

    #[test]
    fn nic_clocks_count_nanoseconds_from_an_offset_of_each_host() {
        for h in 0..8 {
            for t in [0, 123_456_789, 4_000_000_000_000] {
                let k = 1_000_003;
                let d = nic_clock(h, t + k * PS_PER_NS).wrapping_sub(nic_clock(h, t));
                assert_eq!(u64::from(d), k);
                // Within a nanosecond the clock does not move.
                assert_eq!(
                    nic_clock(h, t + PS_PER_NS - 1 - t % PS_PER_NS),
                    nic_clock(h, t)
                );
            }
        }
        let at0: std::collections::BTreeSet<u32> = (0..64).map(|h| nic_clock(h, 0)).collect();
        assert_eq!(at0.len(), 64);
    }

    /// Host 0 sends 20 KB to host 1 and 20 KB to host 2, both from time 0, through a pacer of
    /// `pacer_flows` flows.
    fn two_flows_from_one_host(pacer_flows: u32) -> Sim {
        let head = format!("pacer_flows = {pacer_flows}");
        let flows = incast(&[0], 1, 20_000, 0) + &incast(&[0], 2, 20_000, 0);
        sim(&hpcc(&head, "kind = \"star\"\nhosts = 3", &flows))
    }

    #[test]
    fn a_new_flow_waits_for_a_pacer_slot_while_the_nics_pacer_is_full() {
        let mut s = two_flows_from_one_host(1);
        run_to(&mut s, 1_000);
        assert!(s.flows[0].snd_nxt > 0);
        assert_eq!((s.flows[1].snd_nxt, s.flows[1].slot), (0, NO_SLOT));
        assert_eq!(s.c.pacer_waits, 1);
        run_to(&mut s, 100_000);
        let (d0, d1) = (s.flows[0].done_ps.unwrap(), s.flows[1].done_ps.unwrap());
        assert!(d1 > d0, "{d0} {d1}");
        assert!(s.c.pacer_wait_ns > 0);
        // With room for both, both send from the start.
        let mut s = two_flows_from_one_host(2);
        run_to(&mut s, 1_000);
        assert!(s.flows[0].snd_nxt > 0 && s.flows[1].snd_nxt > 0);
        assert_eq!(s.c.pacer_waits, 0);
    }

    #[test]
    fn a_paused_nic_sends_no_data_until_resumed_and_counts_the_pause() {
        let mut s = sim(&hpcc(
            "",
            "kind = \"star\"\nhosts = 2",
            &incast(&[1], 0, 20_000, 0),
        ));
        let port = s.hosts[1].port;
        s.pfc_frame(port, true);
        run_to(&mut s, 10_000);
        assert_eq!(
            (s.flows[0].snd_nxt, s.ports[port as usize].tx_bytes),
            (0, 0)
        );
        s.pfc_frame(port, false);
        assert_eq!(s.c.pfc_paused_ns, 10_000);
        run_to(&mut s, 11_000);
        assert!(s.flows[0].snd_nxt > 0);
    }

    #[test]
    fn the_nic_sends_a_queued_ack_before_its_next_data_packet() {
        let mut s = sim(&hpcc(
            "",
            "kind = \"star\"\nhosts = 2",
            &incast(&[1], 0, 100_000, 0),
        ));
        run_to(&mut s, 1_000);
        let port = s.hosts[1].port;
        let busy = s.ports[port as usize].cur.expect("sending at line rate");
        assert_eq!(s.pkts[busy as usize].kind, KIND_DATA);
        let a = pkt(&mut s, KIND_ACK, 0, 0, 0, 64, 0);
        s.ports[port as usize].q_ack.push_back(a);
        next_tx(&mut s, port);
        assert_eq!(s.ports[port as usize].cur, Some(a));
        next_tx(&mut s, port);
        let next = s.ports[port as usize].cur.map(|p| s.pkts[p as usize].kind);
        assert_eq!(next, Some(KIND_DATA));
    }
}
