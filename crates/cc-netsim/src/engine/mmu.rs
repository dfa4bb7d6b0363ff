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
