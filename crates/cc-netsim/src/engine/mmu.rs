//! The ns-3-compatible switch (`topology.switch_model = "ns3"`): the memory management unit of
//! the HPCC authors' ns-3 simulator (github alibaba-edu/High-Precision-Congestion-Control at
//! 9f4be2a: `simulation/src/point-to-point/model/switch-mmu.cc`, `switch-node.cc`, and the
//! per-port configuration in `simulation/scratch/third.cc`), with its one lossless class:
//! data, ACKs, NACKs and probe responses share it, pause frames travel in the control class.
//!
//! * Every ingress port owns a reserve (4 KiB) and a headroom (3 × the port's link rate ×
//!   its propagation delay); above the reserve an ingress port's bytes come from the switch's
//!   shared pool, whose free part shifted right by the port's α shift (3, one less per
//!   doubling of the port rate over the NIC rate) is the port's dynamic threshold:
//!   `(buffer − Σ headroom − Σ reserve − shared used) >> shift`.
//! * A packet is admitted unless it fits neither the port's headroom nor the threshold (then
//!   it is dropped, as ns-3 drops it); bytes beyond the threshold go to the headroom.
//! * After a packet is admitted the ingress port pauses its upstream when it holds headroom
//!   bytes or its shared bytes reach the threshold; after a packet leaves, it resumes the
//!   upstream when its headroom is empty and its shared bytes are zero or 3 KiB below the
//!   threshold.
//! * Pause and resume are 43-byte frames ([`NS3_PFC_BYTES`]), queued in the control class of the ingress port
//!   (before any data) and serialised on the link; the upstream port stops sending its data
//!   class when the pause arrives and starts again when the resume does.

use super::*;

/// Bytes of each ingress port that do not count against the shared pool (`reserve`).
pub(super) const NS3_RESERVE_BYTES: u64 = 4 * 1024;
/// A paused ingress port resumes its upstream once its shared bytes are this far below the
/// threshold (`resume_offset`).
pub(super) const NS3_RESUME_OFFSET_BYTES: u64 = 3 * 1024;
/// Bytes of a PFC pause or resume frame on the wire: "PPP" 14 + IPv4 20 + `PauseHeader` 9
/// (`QbbNetDevice::SendPfc`, `pause-header.cc`; the authors' `PppHeader` is 14 bytes).
pub const NS3_PFC_BYTES: u32 = 43;

impl Sim {
    /// ns-3's per-port headroom and α shift, and each switch's reserve and headroom totals
    /// (third.cc's switch loop: `headroom = rate · delay / 8 / 10^9 · 3` with the delay in ns;
    /// `pfc_a_shift` from 3, one less while the rate halved is above the NIC's).
    pub(super) fn ns3_mmu_setup(&mut self) {
        let nic = self.host_rate_bps;
        for sw in 0..self.switches.len() {
            let (mut hdrm, mut rsrv) = (0, 0);
            for i in 0..self.switches[sw].ports.len() {
                let pt = &mut self.ports[self.switches[sw].ports[i] as usize];
                pt.headroom_bytes = pt.rate_bps * (pt.delay_ps / PS_PER_NS) / 8 / 1_000_000_000 * 3;
                let (mut shift, mut r) = (3, pt.rate_bps);
                while r > nic && shift > 0 {
                    shift -= 1;
                    r /= 2;
                }
                pt.pfc_shift = shift;
                hdrm += pt.headroom_bytes;
                rsrv += NS3_RESERVE_BYTES;
            }
            let s = &mut self.switches[sw];
            s.total_headroom_bytes = hdrm;
            s.total_reserve_bytes = rsrv;
        }
    }

    /// Refuses a buffer that the reserves and headrooms of a switch's ports fill: its PFC
    /// threshold would be 0 from the start (ns-3's unsigned arithmetic wraps it instead).
    pub fn ns3_buffer_check(&self) -> Result<(), String> {
        if !self.ns3_switch {
            return Ok(());
        }
        for (i, s) in self.switches.iter().enumerate() {
            let fixed = s.total_headroom_bytes + s.total_reserve_bytes;
            if fixed >= self.buffer_bytes {
                return Err(format!(
                    "{} B: switch {i}'s {} ports reserve {} B and hold {} B of headroom (3 × rate × delay each), \
                     so nothing is left to share (switch_model ns3)",
                    self.buffer_bytes,
                    s.ports.len(),
                    s.total_reserve_bytes,
                    s.total_headroom_bytes
                ));
            }
        }
        Ok(())
    }

    /// The dynamic PFC threshold of ingress port `ing` of switch `sw`, bytes (0 when the
    /// reserves and headrooms alone exceed the buffer).
    fn ns3_threshold(&self, sw: usize, ing: u32) -> u64 {
        let s = &self.switches[sw];
        self.buffer_bytes
            .saturating_sub(s.total_headroom_bytes + s.total_reserve_bytes + s.shared_used_bytes)
            >> self.ports[ing as usize].pfc_shift
    }

    /// The shared-pool bytes of ingress port `ing`.
    fn ns3_shared(&self, ing: u32) -> u64 {
        self.ports[ing as usize]
            .ingress_bytes
            .saturating_sub(NS3_RESERVE_BYTES)
    }

    /// A packet reaches switch `sw`: admission to the lossless class through its ingress port,
    /// the egress queue of its route (ACKs are hashed apart from their flow's data; ECN is
    /// marked at dequeue, as for the default model), and a pause frame upstream when the
    /// ingress port crosses its threshold.
    pub(super) fn ns3_switch_rx(&mut self, sw: u32, pi: u32) {
        let p = self.pkts[pi as usize];
        let (port, forward) = self.egress_of(sw, &p);
        let (s, ing, w) = (sw as usize, p.in_port, u64::from(p.wire));
        let thresh = self.ns3_threshold(s, ing);
        let ip = &self.ports[ing as usize];
        if w + ip.hdrm_bytes > ip.headroom_bytes && self.ns3_shared(ing) + w > thresh {
            match p.kind {
                KIND_DATA => self.c.dropped += 1,
                KIND_PROBE => self.c.probes_dropped += 1,
                _ => self.c.acks_dropped += 1,
            }
            self.release(pi);
            return;
        }
        let ip = &mut self.ports[ing as usize];
        let new_bytes = ip.ingress_bytes + w;
        if new_bytes <= NS3_RESERVE_BYTES {
            ip.ingress_bytes += w;
        } else if new_bytes - NS3_RESERVE_BYTES > thresh {
            ip.hdrm_bytes += w;
        } else {
            ip.ingress_bytes += w;
            self.switches[s].shared_used_bytes += w.min(new_bytes - NS3_RESERVE_BYTES);
        }
        self.enqueue_data(sw, port, pi, w, forward);
        let thresh = self.ns3_threshold(s, ing);
        let ip = &self.ports[ing as usize];
        if !ip.pause_sent && (ip.hdrm_bytes > 0 || self.ns3_shared(ing) >= thresh) {
            self.ports[ing as usize].pause_sent = true;
            self.c.pfc_pauses += 1;
            self.send_pfc(ing, true);
        }
        self.start_tx(port);
    }

    /// A packet that arrived through `ing` leaves switch `sw`'s buffer: its bytes come off the
    /// headroom first, then the shared pool, then the reserve; the upstream resumes when the
    /// port is back under its threshold.
    pub(super) fn ns3_dequeued(&mut self, sw: u32, ing: u32, w: u64) {
        let ip = &mut self.ports[ing as usize];
        let from_hdrm = ip.hdrm_bytes.min(w);
        let from_shared = (w - from_hdrm).min(ip.ingress_bytes.saturating_sub(NS3_RESERVE_BYTES));
        ip.hdrm_bytes -= from_hdrm;
        ip.ingress_bytes -= w - from_hdrm;
        self.switches[sw as usize].shared_used_bytes -= from_shared;
        let ip = &self.ports[ing as usize];
        if ip.pause_sent && ip.hdrm_bytes == 0 {
            let shared = self.ns3_shared(ing);
            if shared == 0
                || shared + NS3_RESUME_OFFSET_BYTES <= self.ns3_threshold(sw as usize, ing)
            {
                self.ports[ing as usize].pause_sent = false;
                self.send_pfc(ing, false);
            }
        }
    }

    /// Queues a pause (`on`) or resume frame in the control class of `port`, towards the node
    /// at its other end.
    fn send_pfc(&mut self, port: u32, on: bool) {
        let pk = Pkt {
            seq: u64::from(on),
            wire: NS3_PFC_BYTES,
            kind: KIND_PFC,
            ..Pkt::default()
        };
        let pi = self.alloc(pk);
        self.ports[port as usize].q_ack.push_back(pi);
        self.start_tx(port);
    }

    /// A pause or resume frame arrives at the node behind port `in_port` (the port facing the
    /// switch that sent it): that port's data class stops or starts.
    pub(super) fn pfc_rx(&mut self, pi: u32) {
        let p = self.pkts[pi as usize];
        self.release(pi);
        self.pfc_frame(p.in_port, p.seq != 0);
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{hpcc, incast, next_tx, pkt, port_to, sim};
    use super::*;

    #[test]
    fn ns3_headroom_is_three_rate_delay_products_and_the_alpha_shift_drops_per_doubling_of_rate() {
        // Dumbbell, 100 Gb/s hosts and a 400 Gb/s fabric link, 1 µs everywhere: a host port's
        // headroom is 3 × 100 Gb/s × 1 µs = 37 500 B with shift 3; the fabric port's
        // 3 × 400 Gb/s × 1 µs = 150 000 B, with shift 1 (400 → 200 → 100 Gb/s: two halvings).
        let topo = "kind = \"dumbbell\"\nleft_hosts = 2\nright_hosts = 1\nswitch_model = \"ns3\"\n\
                    fabric_rate_bps = 400_000_000_000";
        let s = sim(&hpcc("", topo, &incast(&[0], 2, 1_000, 0)));
        let shape = |p: u32| {
            let p = &s.ports[p as usize];
            (p.headroom_bytes, p.pfc_shift)
        };
        assert_eq!(shape(port_to(&s, 0, 0)), (37_500, 3));
        assert_eq!(shape(port_to(&s, 0, 1)), (37_500, 3));
        assert_eq!(shape(port_to(&s, 0, s.n_hosts + 1)), (150_000, 1));
        let sw = &s.switches[0];
        assert_eq!(sw.total_headroom_bytes, 2 * 37_500 + 150_000);
        assert_eq!(sw.total_reserve_bytes, 3 * 4_096);
    }

    #[test]
    fn ns3_pause_is_sent_when_shared_bytes_reach_the_dynamic_threshold_and_resumed_3k_below() {
        // Star of 3 at 100 Gb/s, 1 µs: 3 × 37 500 B of headroom and 3 × 4096 B of reserve
        // leave 75 212 B of a 200 000 B buffer to share; shift 3.
        let topo = "kind = \"star\"\nhosts = 3\nswitch_model = \"ns3\"\nbuffer_bytes = 200_000";
        let mut s = sim(&hpcc("", topo, &incast(&[0], 2, 1_000_000, 90_000)));
        let (ing, out) = (port_to(&s, 0, 0), port_to(&s, 0, 2));
        // 1000-byte packets from host 0: the first leaves at once. After the k-th the port
        // holds 1000·(k − 1) B, 4096 of them reserved: k = 13 shares 7904 B, below its
        // threshold (75 212 − 7904) >> 3 = 8413; the 14th would share 8904 B, beyond it, so it
        // goes to the headroom, and the port pauses host 0.
        let mut paused = Vec::new();
        for k in 0..14u64 {
            let p = pkt(&mut s, KIND_DATA, 0, k * 1_000, 1_000, 1_000, ing);
            s.ns3_switch_rx(0, p);
            paused.push(s.ports[ing as usize].pause_sent);
        }
        assert_eq!(paused.iter().filter(|&&p| p).count(), 1);
        assert!(paused[13]);
        assert_eq!((s.c.pfc_pauses, s.c.dropped), (1, 0));
        assert_eq!(s.switches[0].shared_used_bytes, 7_904);
        assert_eq!(s.ports[ing as usize].hdrm_bytes, 1_000);
        // The pause frame goes back to host 0 as a packet, ahead of anything else.
        let frame = s.pkts[s.ports[ing as usize].cur.unwrap() as usize];
        assert_eq!(
            (frame.kind, frame.seq, frame.wire),
            (KIND_PFC, 1, NS3_PFC_BYTES)
        );
        // Dequeued one by one: the headroom empties first; then shared 7904, 6904, 5904 are not
        // 3072 below their thresholds (8413, 8538, 8663); 4904 + 3072 ≤ (75 212 − 4904) >> 3 =
        // 8788 resumes.
        let mut resumed = Vec::new();
        for _ in 0..4 {
            next_tx(&mut s, out);
            resumed.push(!s.ports[ing as usize].pause_sent);
        }
        assert_eq!(resumed, [false, false, false, true]);
        let frame = s.pkts[*s.ports[ing as usize].q_ack.back().unwrap() as usize];
        assert_eq!((frame.kind, frame.seq), (KIND_PFC, 0));
    }
}
