//! The workload: the `[[flows]]` groups (long, incast, Poisson arrivals over a flow-size
//! CDF, Poisson arrivals of incast events), each flow's start and stop, and a new flow's controller and application.

use super::*;

impl Sim {
    pub(super) fn add_flow(
        &mut self,
        src: u32,
        dst: u32,
        size: Option<u64>,
        start_ps: u64,
        group: u32,
    ) -> u32 {
        let id = self.flows.len() as u32;
        let cc = self.setup.algo().new_flow(self.controller);
        let web = self.setup.algo().new_app(self.controller);
        let size = size.or(web.as_ref().map(|w| w.total_bytes()));
        let rate = cc.rate_bps();
        let window = cc.window_bytes();
        let size_v = size.unwrap_or(u64::MAX);
        let ideal = size.map_or(0, |s| self.ideal_fct_ps(src, dst, s));
        let slowdown_ideal = match size {
            Some(s) if self.ideal_ns3 => self.ns3_standalone_fct_ns(src, dst, s) * PS_PER_NS,
            _ => ideal,
        };
        let record = self.rec.wants(id);
        let rev_key = if self.ns3_switch { id | 1 << 31 } else { id };
        self.ends.push(Ends {
            src,
            dst,
            fwd: self.ecmp(id),
            rev: self.ecmp(rev_key),
        });
        self.flows.push(Flow {
            src,
            dst,
            size: size_v,
            size_bytes: size_v,
            group,
            long: size.is_none(),
            start_ps,
            done_ps: None,
            ideal_ps: ideal,
            slowdown_ideal_ps: slowdown_ideal,
            delivered: 0,
            delivered_mark: None,
            delivered_end: None,
            stopped_ps: None,
            snd_nxt: 0,
            snd_una: 0,
            slot: NO_SLOT,
            avail: 0,
            grant: 0,
            pq: 0,
            p_inflight: 0,
            p_rate: 0,
            p_tpb: 0,
            p_window: 0,
            wait_since: None,
            last_seg: None,
            cc,
            rate_bps: rate,
            window,
            seg: None,
            seg_t_send_ps: 0,
            rcv_next: 0,
            rcv_count: 0,
            nack_for: None,
            last_progress_ps: start_ps,
            rto_armed: false,
            cnp_last_ps: None,
            record,
            web,
            sport: 0,
            ns3_next_avail_ps: 0,
            ns3_rate_bps: 0,
            ns3_last_pkt: 0,
            dport: self.group_dport.get(group as usize).copied().unwrap_or(100),
        });
        if record {
            let lines = self.setup.set_lines();
            self.rec
                .open(id, self.setup.algo().record_format(), &lines, src, dst);
        }
        id
    }

    pub(super) fn poisson_gap(&mut self, g: usize) -> u64 {
        let load = self.groups[g].load.unwrap_or(0.5);
        if self.groups[g].kind == GroupKind::PoissonIncast {
            return self.incast_gap(g, load);
        }
        let mean = self.cdfs[g].as_ref().map_or(1.0, |c| c.mean());
        // Flows per second per host so that the offered load is `load` of the host link.
        let lambda = load * self.host_rate_bps as f64 / (8.0 * mean);
        let u = uniform(&mut self.rng);
        (-u.ln() / lambda * 1e12) as u64
    }

    /// poisson_incast: the gap to the next incast event, ps. Events per second so that their
    /// bytes are `load` of the network's capacity: λ = load·hosts·host_rate / (fan_in·size·8).
    fn incast_gap(&mut self, g: usize, load: f64) -> u64 {
        let grp = &self.groups[g];
        let event_bits =
            f64::from(grp.fan_in.unwrap_or(1)) * grp.size_bytes.unwrap_or(1) as f64 * 8.0;
        let capacity_bps = f64::from(self.n_hosts) * self.host_rate_bps as f64;
        let lambda = load * capacity_bps / event_bits;
        let u = uniform(&mut self.rng);
        (-u.ln() / lambda * 1e12) as u64
    }

    /// One poisson_incast event: one receiver, uniform over the hosts, and `fan_in` distinct
    /// senders, uniform over the other hosts (a partial Fisher–Yates shuffle), each starting a
    /// flow of `size_bytes` now; then the next event.
    fn incast_event(&mut self, group: u32) {
        let g = group as usize;
        let n = self.n_hosts;
        let fan_in = self.groups[g].fan_in.unwrap_or(1).min(n - 1) as usize;
        let size = self.groups[g].size_bytes.unwrap_or(1);
        let dst = (self.rng.next_u64() % u64::from(n)) as u32;
        let mut others: Vec<u32> = (0..n).filter(|&h| h != dst).collect();
        for k in 0..fan_in {
            let j = k + (self.rng.next_u64() % (others.len() - k) as u64) as usize;
            others.swap(k, j);
        }
        for &src in &others[..fan_in] {
            let f = self.add_flow(src, dst, Some(size), self.now, group);
            self.admit(f);
            self.host_try_send(src);
        }
        let dt = self.poisson_gap(g);
        self.push(
            self.now.saturating_add(dt.max(1)),
            Ev::Poisson { group, host: 0 },
        );
    }

    pub(super) fn poisson(&mut self, group: u32, host: u32) {
        let g = group as usize;
        let stop = self.groups[g]
            .stop_ns
            .map_or(self.end_ps, |s| s * PS_PER_NS);
        if self.now >= stop {
            return;
        }
        if self.groups[g].kind == GroupKind::PoissonIncast {
            self.incast_event(group);
            return;
        }
        let u = uniform(&mut self.rng);
        let size = self.cdfs[g].as_ref().map_or(1, |c| c.sample(u));
        let mut dst = (self.rng.next_u64() % u64::from(self.n_hosts - 1)) as u32;
        if dst >= host {
            dst += 1;
        }
        let f = self.add_flow(host, dst, Some(size), self.now, group);
        self.admit(f);
        self.host_try_send(host);
        let dt = self.poisson_gap(g);
        self.push(self.now + dt.max(1), Ev::Poisson { group, host });
    }

    /// Schedules every `[[flows]]` group: the long and incast flows' starts (and stops), and
    /// each host's first Poisson arrival, each poisson_incast group's first event.
    pub(super) fn schedule_groups(&mut self) {
        let n_hosts = self.n_hosts;
        let groups = self.groups.clone();
        for (gi, g) in groups.iter().enumerate() {
            match g.kind {
                GroupKind::Long | GroupKind::Incast => {
                    for (k, &src) in g.src.iter().enumerate() {
                        let start = (g.start_ns + k as u64 * g.stagger_ns) * PS_PER_NS;
                        let f =
                            self.add_flow(src, g.dst.unwrap_or(0), g.size_bytes, start, gi as u32);
                        self.push(start, Ev::Start { flow: f });
                        if let Some(stop) = g.stop_ns {
                            self.push(stop * PS_PER_NS, Ev::Stop { flow: f });
                        }
                    }
                }
                GroupKind::PoissonIncast => {
                    let dt = self.poisson_gap(gi);
                    self.push(
                        (g.start_ns * PS_PER_NS).saturating_add(dt),
                        Ev::Poisson {
                            group: gi as u32,
                            host: 0,
                        },
                    );
                }
                GroupKind::Poisson => {
                    for h in 0..n_hosts {
                        let dt = self.poisson_gap(gi);
                        self.push(
                            g.start_ns * PS_PER_NS + dt,
                            Ev::Poisson {
                                group: gi as u32,
                                host: h,
                            },
                        );
                    }
                }
            }
        }
    }

    /// A long or incast flow starts: its application (if any) starts and the NIC has one more
    /// flow to serve.
    pub(super) fn start_flow(&mut self, flow: u32) {
        // ns-3's ports: each host pair's flows take source ports from 10000 in order of start
        // (third.cc's `portNumder`); under `switch_model = "ns3"` they pick the flow's paths.
        let (src, dst) = (self.flows[flow as usize].src, self.flows[flow as usize].dst);
        let p = self
            .next_sport
            .entry((src, dst))
            .or_insert(super::super::ns3::FIRST_SPORT);
        self.flows[flow as usize].sport = *p;
        *p = p.wrapping_add(1);
        if let Some(e) = &self.ns3_ecmp {
            let f = &self.flows[flow as usize];
            let fwd = e.digits(self, src, dst, f.sport, f.dport);
            let rev = e.digits(self, dst, src, f.dport, f.sport);
            let ends = &mut self.ends[flow as usize];
            (ends.fwd, ends.rev) = (fwd, rev);
        }
        let f = &mut self.flows[flow as usize];
        if let Some(w) = &mut f.web {
            w.start(self.now / PS_PER_NS, &mut self.rec, flow, f.record);
        }
        let src = self.flows[flow as usize].src;
        self.admit(flow);
        self.host_try_send(src);
    }

    /// Its group's `stop_ns`: a flow that has not sent every byte sends no new data.
    pub(super) fn stop_flow(&mut self, flow: u32) {
        let f = &mut self.flows[flow as usize];
        let sent = f.snd_nxt.max(f.snd_una);
        // A flow that has sent every byte is not stopped: it finishes as usual.
        if f.done_ps.is_none() && sent < f.size {
            f.size = sent;
            f.stopped_ps = Some(self.now);
            if f.all_acked() {
                self.finish_flow(flow);
            }
        }
    }
}
