//! The rules of the HPCC authors' ns-3 simulator that `switch_model = "ns3"` follows exactly
//! where ns-3 is deterministic (github `alibaba-edu/High-Precision-Congestion-Control` at
//! 9f4be2a, folder `simulation/`; docs/sim.md lists each with its source):
//!
//! * packet sizes: a data packet's headers, an ACK's ([`NS3_HDR_BYTES`], [`NS3_ACK_BYTES`]);
//!   the authors' "PPP" header is 14 bytes;
//! * time: ns-3 keeps time in whole nanoseconds and converts a duration in seconds (a
//!   `double`) by truncation ([`ns3_seconds_ns`]), so a transmission takes [`ns3_tx_ns`];
//! * ECMP: a switch picks a next hop by a hash of the packet's addresses and ports seeded with
//!   its node id ([`ns3_ecmp_hash`]);
//! * INT: bytes and queue lengths in units of 128 and 80 bytes times `INT_MULTI`
//!   ([`ns3_int_hop`]).

use super::*;

/// ns-3's ECMP on the engine's topology: each host's address, each switch's seed (its ns-3
/// node id) and its uplinks in ns-3's next-hop order.
///
/// ns-3 lists a switch's next hops towards a host in the order its breadth-first search from
/// that host reached them (`CalculateRoute` in third.cc), which visits a node's neighbours in
/// the order of a `std::map` keyed by `Ptr<Node>`, i.e. of the nodes' addresses in memory. A
/// `SwitchNode` holds a 2.1 MB array (`m_bytes[257][257][8]`, `switch-node.h`), which glibc's
/// `malloc` takes from `mmap` (its threshold is 128 KiB), and Linux places each new mapping
/// below the last: third.cc creates the nodes in id order, so a later switch lies at a lower
/// address, and a switch's next hops come in descending order of node id. (Found in ns-3's
/// packet trace: on leafspine32 with next hops ordered by ascending id, a flow from host 20 to
/// host 9 took the other spine than ns-3's.) Here a switch's uplinks are ordered so, by the
/// ns-3 id of the switch each leads to.
pub(super) struct Ns3Ecmp {
    /// ns-3's address of each host.
    ip: Vec<u32>,
    /// Each switch's ECMP seed: its ns-3 node id.
    seed: Vec<u32>,
    /// Each switch's ECMP digits ([`Sim::route_by`]) in ns-3's next-hop order (empty: no
    /// choice to make).
    up: Vec<Vec<u16>>,
}

impl Ns3Ecmp {
    /// The tables of `sim`'s topology, `ns3_id` naming each node's ns-3 id (empty: the
    /// identity, as `--ns3-out` writes the network).
    pub(super) fn new(sim: &Sim, ns3_id: &[u32]) -> Ns3Ecmp {
        let id = |node: u32| ns3_id.get(node as usize).copied().unwrap_or(node);
        let n = sim.n_hosts;
        let sws = sim.switches.len() as u32;
        let f = &sim.fat;
        let up = (0..sws)
            .map(|s| {
                let sw = &sim.switches[s as usize];
                let mut d: Vec<(u32, u16)> = match (sim.topo, sw.tier) {
                    (TopoKind::LeafSpine, TIER_EDGE) => {
                        let leaves = sws - sim.spines;
                        (0..sim.spines)
                            .map(|k| (id(n + leaves + k), k as u16))
                            .collect()
                    }
                    (TopoKind::FatTree, TIER_EDGE) => (0..f.aggs_per_pod)
                        .map(|k| (id(n + f.tors() + sw.pod * f.aggs_per_pod + k), k as u16))
                        .collect(),
                    (TopoKind::FatTree, TIER_AGG) => {
                        let plane = (s - f.tors()) % f.aggs_per_pod;
                        (0..f.cores_per_agg)
                            .map(|j| {
                                let core = f.tors() + f.aggs() + plane * f.cores_per_agg + j;
                                (id(n + core), j as u16)
                            })
                            .collect()
                    }
                    _ => Vec::new(),
                };
                d.sort_unstable_by(|a, b| b.cmp(a));
                d.into_iter().map(|x| x.1).collect()
            })
            .collect();
        Ns3Ecmp {
            ip: (0..n).map(|h| crate::ns3::node_ip(id(h))).collect(),
            seed: (0..sws).map(|s| id(n + s)).collect(),
            up,
        }
    }

    /// The ECMP digits ([`Sim::route_by`]) of a packet from host `src` to host `dst` with
    /// these ports: each switch on the way that has a choice hashes the packet's key with its
    /// seed (`SwitchNode::GetOutDev`).
    pub(super) fn digits(&self, sim: &Sim, src: u32, dst: u32, sport: u16, dport: u16) -> [u16; 2] {
        let (sip, dip) = (self.ip[src as usize], self.ip[dst as usize]);
        let pick = |sw: u32| {
            let c = &self.up[sw as usize];
            match c.len() {
                0 => 0,
                n => {
                    c[(ns3_ecmp_hash(sip, dip, sport, dport, self.seed[sw as usize]) % n as u32)
                        as usize]
                }
            }
        };
        let edge = sim.loc[src as usize].edge;
        match sim.topo {
            TopoKind::LeafSpine => [pick(edge), 0],
            TopoKind::FatTree => {
                let f = &sim.fat;
                let d0 = pick(edge);
                let agg = f.tors() + f.pod_of(src) * f.aggs_per_pod + u32::from(d0);
                [d0, pick(agg)]
            }
            TopoKind::Star | TopoKind::Dumbbell => [0, 0],
        }
    }
}

/// ns-3's data packet headers without INT: "PPP" 14 (the authors' `PppHeader` is 14 bytes, an
/// Ethernet header's size: `PppHeader::GetStaticSize` in
/// `src/point-to-point/model/ppp-header.cc`) + IPv4 20 + UDP 8 + `SeqTsHeader` 6 (its sequence
/// number and priority group) (`RdmaHw::GetNxtPacket` in `rdma-hw.cc`,
/// `SeqTsHeader::GetHeaderSize` in `src/internet/model/seq-ts-header.cc`). With HPCC's INT
/// (42 B) and 1000 B of payload: 1090 B, 87 ns at 100 Gb/s; ns-3's own packet trace shows 91 B
/// for a 1-byte flow. It is also the header its "standalone" FCT counts per packet (`qp_finish`
/// in third.cc: `CustomHeader::GetStaticWholeHeaderSize() − IntHeader::GetStaticSize()`, 14 +
/// 20 + 8 + 6).
pub const NS3_HDR_BYTES: u32 = 48;

/// ns-3's ACK or NACK without INT: "PPP" 14 + IPv4 20 + `qbbHeader` 12 (ports, flags,
/// priority group, sequence number) and no payload (`RdmaHw::ReceiveUdp`: `max(60 − 14 − 20 −
/// header, 0)` bytes of padding, 0 with INT; `qbbHeader::GetBaseSize` in `qbb-header.cc`). With
/// INT: 88 B (as ns-3's packet trace shows).
pub const NS3_ACK_BYTES: u32 = 46;

/// ns-3's `Seconds(double)` in whole nanoseconds: the `double` converted to ns-3's 64.64
/// fixed point (its fraction truncated to 64 bits: `int64x64_t(double)` in
/// `src/core/model/int64x64-128.h`), multiplied by 10^9 exactly, and truncated to an integer
/// (`Time::From`, `Time(int64x64_t)` → `GetHigh` in `src/core/model/nstime.h`). So 8.624e-8 s
/// is 86 ns, 8e-8 s (1000 B at 100 Gb/s) 79 ns (the truncated fraction is 79.99999999996 ns),
/// and a start time of `2.000000962` s that the `double` holds as 2.00000096199… s is
/// 2 000 000 961 ns. `s` must be finite, in `[0, 2^63)` ns.
pub fn ns3_seconds_ns(s: f64) -> u64 {
    debug_assert!(s.is_finite() && s >= 0.0);
    let hi = s.floor();
    // Exact: `s − hi` is a `double` in [0, 1) and the product a power-of-two scaling.
    let lo = ((s - hi) * 18_446_744_073_709_551_616.0) as u128;
    let fixed = ((hi as u128) << 64) + lo;
    ((fixed * 1_000_000_000) >> 64) as u64
}

/// The time ns-3 takes to put `bytes` on a link of `rate_bps`, ns: `DataRate::CalculateTxTime`
/// (`bytes · 8 / rate` in `double`, `src/network/utils/data-rate.cc`) through
/// [`ns3_seconds_ns`], as `QbbNetDevice::TransmitStart` and `RdmaHw::UpdateNextAvail`
/// compute it: 86 ns for 1078 B at 100 Gb/s (86.24), 21 ns at 400 Gb/s (21.56).
pub fn ns3_tx_ns(bytes: u32, rate_bps: u64) -> u64 {
    ns3_seconds_ns(f64::from(bytes) * 8.0 / rate_bps as f64)
}

/// ns-3's ECMP hash (`SwitchNode::EcmpHash` in `switch-node.cc`: MurmurHash3's 32-bit body
/// and finaliser) of the 12-byte key `sip, dip, sport | dport << 16` as a little-endian machine
/// lays it out (`SwitchNode::GetOutDev`), seeded with the switch's node id (`m_ecmpSeed =
/// m_id` in its constructor; third.cc never sets another). The switch takes next hop
/// `hash % n` of its `n` next hops towards the destination.
pub(super) fn ns3_ecmp_hash(sip: u32, dip: u32, sport: u16, dport: u16, seed: u32) -> u32 {
    let mut h = seed;
    for k in [sip, dip, u32::from(sport) | (u32::from(dport) << 16)] {
        let k = k
            .wrapping_mul(0xcc9e_2d51)
            .rotate_left(15)
            .wrapping_mul(0x1b87_3593);
        h ^= k;
        h = h.rotate_left(13);
        h = h.wrapping_add(h << 2).wrapping_add(0xe654_6b64);
    }
    h ^= 12;
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

/// One hop's INT counters as ns-3 stamps them with `INT_MULTI` = `multi`, expressed in the
/// units of the HPCC Fig. 7 hop that the `hpcc-cc` crate reads (128 B, 80 B): ns-3 keeps the
/// transmitted bytes as `tx / (128 · multi)` in 20 bits and the queue as `qlen / (80 · multi)`
/// in 17 bits (`IntHop::Set` in `src/network/utils/int-header.h`), so the values it delivers
/// move in steps of `128 · multi` and `80 · multi` bytes; here they are multiplied back by
/// `multi` into the crate's units. Returns `(tx_units mod 2^20, qlen_units)`, the queue
/// saturated at the crate's 16 bits (5.2 MB; ns-3's 17 bits wrap at 41.9 MB with `multi` 4).
/// A difference of two tx counters is ns-3's as long as fewer than 2^20 · 128 bytes (134 MB)
/// left the port between them, i.e. between two ACKs of a flow.
pub(super) fn ns3_int_hop(tx_bytes: u64, qlen_bytes: u64, multi: u32) -> (u32, u16) {
    let m = u64::from(multi);
    let tx = ((tx_bytes / (128 * m)) * m) & 0xF_FFFF;
    let q = ((qlen_bytes / (80 * m)) & 0x1_FFFF) * m;
    (tx as u32, q.min(u64::from(u16::MAX)) as u16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ns3_truncates_transmission_times_to_the_nanosecond() {
        // Whole nanoseconds, truncated (docs/sim.md, "The ns-3-compatible switch model", row
        // "time"): 1078 B at 100 G is 86.24 ns, at 400 G 21.56 ns.
        assert_eq!(ns3_tx_ns(1078, 100_000_000_000), 86);
        assert_eq!(ns3_tx_ns(1078, 400_000_000_000), 21);
        assert_eq!(ns3_tx_ns(88, 100_000_000_000), 7);
        // ns-3's packet trace: a 1-byte flow's 91-byte packet takes 7 ns on a 100 G link.
        assert_eq!(ns3_tx_ns(91, 100_000_000_000), 7);
        assert_eq!(ns3_tx_ns(1090, 100_000_000_000), 87);
        // 1000 B at 100 G: the double 8e-8 is just above 80 ns, but its fraction truncated to
        // 64 bits (1475739525896 / 2^64 s) is 79.99999999996 ns: ns-3 takes 79 ns.
        assert_eq!(ns3_tx_ns(1000, 100_000_000_000), 79);
    }

    #[test]
    fn ns3_truncates_start_times_read_as_seconds() {
        // ns-3's own fct.txt (../shared/ns3-ref/A_hp) starts the flow of `0.070000962` at
        // 70000961 ns: the double is 0.0700009619999999…
        assert_eq!(ns3_seconds_ns("0.070000962".parse().unwrap()), 70_000_961);
        assert_eq!(ns3_seconds_ns(2.0), 2_000_000_000);
        assert_eq!(ns3_seconds_ns(0.0), 0);
    }

    #[test]
    fn ns3_ecmp_hash_is_murmur3_of_the_twelve_byte_key() {
        // MurmurHash3_x86_32 of the little-endian bytes of (sip, dip, ports), computed
        // byte-wise here, independently of the word loop above.
        fn murmur3(data: &[u8], seed: u32) -> u32 {
            let mut h = seed;
            for c in data.chunks(4) {
                let mut k = 0u32;
                for (i, b) in c.iter().enumerate() {
                    k |= u32::from(*b) << (8 * i);
                }
                k = k.wrapping_mul(0xcc9e2d51);
                k = k.rotate_left(15);
                k = k.wrapping_mul(0x1b873593);
                h ^= k;
                h = h.rotate_left(13);
                h = h.wrapping_mul(5).wrapping_add(0xe6546b64);
            }
            h ^= data.len() as u32;
            h ^= h >> 16;
            h = h.wrapping_mul(0x85ebca6b);
            h ^= h >> 13;
            h = h.wrapping_mul(0xc2b2ae35);
            h ^ (h >> 16)
        }
        for (sip, dip, sp, dp, seed) in [
            (0x0b00_0d01, 0x0b00_0e01, 10000, 100, 32),
            (0x0b00_0001, 0x0b00_1f01, 10003, 100, 0),
            (0x0b00_1f01, 0x0b00_0001, 100, 10003, 39),
        ] {
            let mut key = Vec::new();
            key.extend_from_slice(&u32::to_le_bytes(sip));
            key.extend_from_slice(&u32::to_le_bytes(dip));
            key.extend_from_slice(&u16::to_le_bytes(sp));
            key.extend_from_slice(&u16::to_le_bytes(dp));
            assert_eq!(ns3_ecmp_hash(sip, dip, sp, dp, seed), murmur3(&key, seed));
        }
    }

    #[test]
    fn ns3_int_units_step_by_int_multi() {
        // INT_MULTI 4: bytes in 512 B steps, the queue in 320 B steps, in 128/80 B units.
        assert_eq!(ns3_int_hop(1023, 319, 4), (4, 0));
        assert_eq!(ns3_int_hop(1024, 320, 4), (8, 4));
        assert_eq!(ns3_int_hop(1024, 320, 1), (8, 4));
        assert_eq!(ns3_int_hop(1151, 399, 1), (8, 4));
        // The counter wraps at 2^20 units of 128 B.
        assert_eq!(ns3_int_hop(128 << 20, 0, 1).0, 0);
        assert_eq!(ns3_int_hop(0, 80 * 70_000, 1).1, u16::MAX);
    }
}
