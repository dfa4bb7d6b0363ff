//! The NIC of `switch_model = "ns3"`: the HPCC authors' ns-3 NIC (github
//! `alibaba-edu/High-Precision-Congestion-Control` at 9f4be2a, `simulation/src/point-to-point/
//! model/qbb-net-device.cc` and `rdma-hw.cc`) in place of the pacer ([`super::pacer`]).
//!
//! * Queue pairs are served round robin (`RdmaEgressQueue::GetNextQindex`): when the port is
//!   free and no ACK waits, the scan starts after the queue pair served last and takes the
//!   first with bytes left, not bound by its window, whose next-available time has come.
//!   Finished queue pairs met in the scan are removed from the list (the list closes up; the
//!   index of the one served last is kept as it was).
//! * A packet is the flow's next `mtu_bytes` (`RdmaHw::GetNxtPacket`); after it, the flow is
//!   next available one packet time at its rate later (`RdmaHw::UpdateNextAvail`), in whole ns
//!   ([`ns3_tx_ns`]).
//! * A rate change moves the next-available time by the difference of the last packet's times
//!   at the two rates (`RdmaHw::ChangeRate`), and brings a pending wake-up forward
//!   (`QbbNetDevice::UpdateNextAvail`).
//! * When nothing may go, the NIC wakes at the earliest next-available time of a queue pair
//!   with bytes left, if that is later than now and no wake-up is pending
//!   (`QbbNetDevice::DequeueAndTransmit`); otherwise an ACK, a new flow or the end of a
//!   transmission calls it again.
//! * The window: bytes sent and not acknowledged may not reach the controller's window
//!   (`RdmaQueuePair::IsWinBound`).

use super::*;

impl Sim {
    /// Flow `fid` starts: its queue pair joins the end of its NIC's list, available now
    /// (`QbbNetDevice::NewQp`).
    pub(super) fn ns3_new_qp(&mut self, fid: u32) {
        let f = &mut self.flows[fid as usize];
        f.ns3_next_avail_ps = self.now;
        f.ns3_rate_bps = f.rate_bps as u64;
        let h = f.src;
        self.hosts[h as usize].ns3_qps.push(fid);
    }

    /// `QbbNetDevice::DequeueAndTransmit` on host `h`.
    pub(super) fn ns3_dequeue(&mut self, h: u32) {
        let port = self.hosts[h as usize].port;
        let pt = &self.ports[port as usize];
        if pt.cur.is_some() {
            return;
        }
        if !pt.q_ack.is_empty() {
            // ACKs first (`GetNextQindex` returns the high-priority queue), unless paused.
            if !pt.paused {
                self.start_tx(port);
            }
            return;
        }
        if pt.paused {
            return;
        }
        let now = self.now;
        let (res, finished) = self.ns3_scan(h);
        let served = res.map(|r| self.hosts[h as usize].ns3_qps[r]);
        if let Some(from) = finished {
            self.ns3_close_up(h, from);
        }
        let Some(fid) = served else {
            // Wake at the earliest next-available time of a queue pair with bytes left.
            let t = self.hosts[h as usize]
                .ns3_qps
                .iter()
                .map(|&q| &self.flows[q as usize])
                .filter(|f| f.send_limit() > f.snd_nxt)
                .map(|f| f.ns3_next_avail_ps)
                .min();
            if let Some(t) = t
                && t > now
                && self.hosts[h as usize].ns3_next_send.is_none()
            {
                self.ns3_schedule_wake(h, t);
            }
            return;
        };
        // Its index after the list closed up (ns-3's `res = nxt`).
        let idx = match (finished, res) {
            (Some(_), _) => self.hosts[h as usize]
                .ns3_qps
                .iter()
                .position(|&q| q == fid)
                .unwrap_or(0),
            (None, r) => r.unwrap_or(0),
        };
        self.hosts[h as usize].ns3_rrlast = idx as u32;
        let f = &self.flows[fid as usize];
        let payload = u64::from(self.mtu).min(f.send_limit() - f.snd_nxt);
        self.send_data(fid, port, payload);
        let wire = self.ports[port as usize]
            .cur
            .map_or(0, |pi| self.pkts[pi as usize].wire);
        let f = &mut self.flows[fid as usize];
        f.ns3_last_pkt = wire;
        f.ns3_next_avail_ps = now + ns3_tx_ns(wire, f.ns3_rate_bps.max(1)) * PS_PER_NS;
    }

    /// The round-robin scan of `GetNextQindex`: the index of the queue pair to serve, and the
    /// smallest index of a finished queue pair met before it.
    fn ns3_scan(&self, h: u32) -> (Option<usize>, Option<usize>) {
        let host = &self.hosts[h as usize];
        let n = host.ns3_qps.len();
        let mut finished: Option<usize> = None;
        for i in 1..=n {
            let idx = (i + host.ns3_rrlast as usize) % n;
            let f = &self.flows[host.ns3_qps[idx] as usize];
            let left = f.send_limit() > f.snd_nxt;
            let win_bound = f
                .window
                .is_some_and(|w| (f.snd_nxt - f.snd_una.min(f.snd_nxt)) as f64 >= w.max(1.0));
            if left && !win_bound {
                if f.ns3_next_avail_ps > self.now {
                    continue;
                }
                return (Some(idx), finished);
            } else if f.all_acked() {
                finished = Some(finished.map_or(idx, |m| m.min(idx)));
            }
        }
        (None, finished)
    }

    /// Removes the finished queue pairs from index `from` on, as `GetNextQindex` does (the
    /// others keep their order).
    fn ns3_close_up(&mut self, h: u32, from: usize) {
        let flows = &self.flows;
        let qps = &mut self.hosts[h as usize].ns3_qps;
        let mut nxt = from;
        for i in from + 1..qps.len() {
            let q = qps[i];
            if !flows[q as usize].all_acked() {
                qps[nxt] = q;
                nxt += 1;
            }
        }
        qps.truncate(nxt);
    }

    /// Schedules host `h`'s NIC wake-up at `t` (ns-3's `m_nextSend`), replacing any pending
    /// one: the pending one is named by its event's sequence number, so that a replaced event
    /// at the same time does not run in its place (ns-3 cancels it).
    fn ns3_schedule_wake(&mut self, h: u32, t: u64) {
        self.push(t, Ev::Wake { host: h });
        self.hosts[h as usize].ns3_next_send = Some((t, self.seq));
    }

    /// A wake-up of host `h`'s NIC, the event of sequence number `seq`: only the pending one
    /// runs (ns-3 cancels the others).
    pub(super) fn ns3_wake(&mut self, h: u32, seq: u64) {
        if self.hosts[h as usize].ns3_next_send == Some((self.now, seq)) {
            self.hosts[h as usize].ns3_next_send = None;
            self.ns3_dequeue(h);
        }
    }

    /// Flow `fid`'s controller set its rate (`RdmaHw::ChangeRate`; `set`: it set it even if
    /// unchanged, else only a changed rate counts): its next-available time moves by the
    /// difference of its last packet's times at the old and the new rate, and a pending
    /// wake-up of its NIC later than that comes forward — even when the rate did not change.
    pub(super) fn ns3_change_rate(&mut self, fid: u32, set: bool) {
        let f = &mut self.flows[fid as usize];
        let new = f.rate_bps as u64;
        let old = f.ns3_rate_bps;
        if (new == old && !set) || new == 0 || old == 0 {
            return;
        }
        let (t_old, t_new) = (
            ns3_tx_ns(f.ns3_last_pkt, old.max(1)) * PS_PER_NS,
            ns3_tx_ns(f.ns3_last_pkt, new) * PS_PER_NS,
        );
        f.ns3_next_avail_ps = (f.ns3_next_avail_ps + t_new).saturating_sub(t_old);
        f.ns3_rate_bps = new;
        let (t, h) = (f.ns3_next_avail_ps, f.src);
        if let Some((pending, _)) = self.hosts[h as usize].ns3_next_send
            && t < pending
        {
            self.ns3_schedule_wake(h, t.max(self.now));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{hpcc, incast, run_to, sim};
    use super::*;

    /// `switch_model = "ns3"`: host 0 sends 100 KB to host 1 and 100 KB to host 2 from 0.
    fn two_queue_pairs() -> Sim {
        let topo = "kind = \"star\"\nhosts = 3\nswitch_model = \"ns3\"";
        let flows = incast(&[0], 1, 100_000, 0) + &incast(&[0], 2, 100_000, 0);
        sim(&hpcc("", topo, &flows))
    }

    #[test]
    fn the_ns3_nic_serves_its_queue_pairs_round_robin() {
        let mut s = two_queue_pairs();
        let port = s.hosts[0].port as usize;
        let (mut tx, mut flows) = (0, Vec::new());
        while flows.len() < 8 {
            let t = s.now / PS_PER_NS + 1;
            run_to(&mut s, t);
            if s.ports[port].tx_bytes != tx {
                tx = s.ports[port].tx_bytes;
                let p = s.pkts[s.ports[port].cur.unwrap() as usize];
                flows.push((p.flow, p.seq));
            }
        }
        assert_eq!(
            flows,
            [
                (0, 0),
                (1, 0),
                (0, 1_000),
                (1, 1_000),
                (0, 2_000),
                (1, 2_000),
                (0, 3_000),
                (1, 3_000)
            ]
        );
    }

    #[test]
    fn an_ns3_rate_change_moves_the_next_available_time_by_the_last_packets_time_difference() {
        let mut s = two_queue_pairs();
        let f = &mut s.flows[0];
        // A 1000-byte packet: 80 ns at 100 Gb/s, 160 ns at 50 Gb/s, 320 ns at 25 Gb/s.
        (f.ns3_last_pkt, f.ns3_rate_bps, f.ns3_next_avail_ps) = (1_000, 100_000_000_000, 500_000);
        f.rate_bps = 50e9;
        s.ns3_change_rate(0, false);
        assert_eq!(s.flows[0].ns3_next_avail_ps, 500_000 + 80_000);
        assert_eq!(s.flows[0].ns3_rate_bps, 50_000_000_000);
        s.flows[0].rate_bps = 100e9;
        s.ns3_change_rate(0, false);
        assert_eq!(s.flows[0].ns3_next_avail_ps, 500_000);
        // Unchanged and not set: nothing moves, no wake-up; set: a later pending wake-up of
        // the NIC comes forward to the flow's time.
        s.hosts[0].ns3_next_send = Some((900_000, 7));
        s.ns3_change_rate(0, false);
        assert_eq!(s.hosts[0].ns3_next_send, Some((900_000, 7)));
        s.ns3_change_rate(0, true);
        assert_eq!(s.hosts[0].ns3_next_send.map(|w| w.0), Some(500_000));
    }
}
