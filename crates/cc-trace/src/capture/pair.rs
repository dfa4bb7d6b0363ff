//! One-way streams of a capture and the pairing of each ACK stream with the data stream it acknowledges.

use super::*;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A fast hasher for the stream map (FxHash's multiply-rotate; the keys are not adversarial
/// in a way that matters: a capture crafted to collide only slows its own replay).
#[derive(Default, Clone, Copy)]
struct FxHasher(u64);

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        for c in bytes.chunks(8) {
            let mut w = [0u8; 8];
            w[..c.len()].copy_from_slice(c);
            self.write_u64(u64::from_le_bytes(w));
        }
    }
    fn write_u8(&mut self, i: u8) {
        self.write_u64(u64::from(i));
    }
    fn write_u32(&mut self, i: u32) {
        self.write_u64(u64::from(i));
    }
    fn write_u64(&mut self, i: u64) {
        self.0 = (self.0.rotate_left(5) ^ i).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

/// The streams of a capture in order of their first packet, with a map from key to index and
/// a cache of the last few streams seen (a flow's data and ACKs alternate, a few flows at a
/// time are busy).
#[derive(Default)]
pub struct Streams {
    /// Every stream, in order of its first packet.
    pub list: Vec<StreamInfo>,
    index: FastMap<StreamKey, usize>,
    recent: [Option<(StreamKey, usize)>; 4],
    next: usize,
}

/// What pass 1 learns about one stream.
#[derive(Debug, Clone)]
pub struct StreamInfo {
    /// Its key.
    pub key: StreamKey,
    /// Its UDP source port, `None` when its packets use several.
    pub sport: Option<u16>,
    /// Packets in it.
    pub packets: u64,
}

impl Streams {
    /// The index of stream `k`, if it was seen.
    pub fn find(&mut self, k: StreamKey) -> Option<usize> {
        for (rk, i) in self.recent.iter().flatten() {
            if *rk == k {
                return Some(*i);
            }
        }
        let i = *self.index.get(&k)?;
        self.remember(k, i);
        Some(i)
    }

    fn remember(&mut self, k: StreamKey, i: usize) {
        self.recent[self.next] = Some((k, i));
        self.next = (self.next + 1) % self.recent.len();
    }

    /// The same streams in the same order (so their indices still hold), with no packet
    /// counted: a second pass over the capture starts from it.
    pub fn emptied(&self) -> Streams {
        let mut fresh = Streams::default();
        for s in &self.list {
            fresh.list.push(StreamInfo {
                packets: 0,
                ..s.clone()
            });
            fresh.index.insert(s.key, fresh.list.len() - 1);
        }
        fresh
    }

    /// Counts packet `p` in its stream (a new stream when it is the first of its key).
    pub fn add(&mut self, p: &RocePacket<'_>) {
        let k = p.stream();
        let i = match self.find(k) {
            Some(i) => i,
            None => {
                self.list.push(StreamInfo {
                    key: k,
                    sport: Some(p.sport),
                    packets: 0,
                });
                let i = self.list.len() - 1;
                self.index.insert(k, i);
                self.remember(k, i);
                i
            }
        };
        let s = &mut self.list[i];
        s.packets += 1;
        if s.sport != Some(p.sport) {
            s.sport = None;
        }
    }
}

/// The pairing of one ACK stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pairing {
    /// The index of the data stream it acknowledges.
    Data(usize),
    /// No data stream can be paired with it: why.
    Unpaired(String),
}

/// Pairs every ACK stream B→A with the data stream A→B it acknowledges: within one host pair,
/// a single ACK stream and a single data stream pair; otherwise an ACK stream pairs with the
/// only data stream of the same UDP source port, when that port is also unique among the ACK
/// streams. Returns, per ACK stream (by index, in stream order), its pairing.
pub fn pair_streams(streams: &[StreamInfo]) -> Vec<(usize, Pairing)> {
    // Host pair (data source A, data destination B) → (data streams, ACK streams).
    let mut by_pair: BTreeMap<(IpAddr, IpAddr), (Vec<usize>, Vec<usize>)> = BTreeMap::new();
    for (i, s) in streams.iter().enumerate() {
        let k = s.key;
        if k.ack {
            by_pair.entry((k.dst, k.src)).or_default().1.push(i);
        } else {
            by_pair.entry((k.src, k.dst)).or_default().0.push(i);
        }
    }
    let mut out = Vec::new();
    for (data, acks) in by_pair.values() {
        for &k in acks {
            out.push((k, pair_in(streams, data, acks, k)));
        }
    }
    out.sort_by_key(|(k, _)| *k);
    out
}

/// [`pair_streams`] for ACK stream `k` alone.
pub fn pair_now(streams: &[StreamInfo], k: usize) -> Pairing {
    let key = streams[k].key;
    let (mut data, mut acks) = (Vec::new(), Vec::new());
    for (i, s) in streams.iter().enumerate() {
        if s.key.ack && s.key.src == key.src && s.key.dst == key.dst {
            acks.push(i);
        } else if !s.key.ack && s.key.src == key.dst && s.key.dst == key.src {
            data.push(i);
        }
    }
    pair_in(streams, &data, &acks, k)
}

/// The pairing of ACK stream `k` among the data and ACK streams of its host pair.
fn pair_in(streams: &[StreamInfo], data: &[usize], acks: &[usize], k: usize) -> Pairing {
    let (a, b) = (streams[k].key.dst, streams[k].key.src);
    if data.is_empty() {
        Pairing::Unpaired(format!(
            "no data packets from {a} to {b} in the capture: the sender's snd_nxt is unknown \
             (was only one direction captured?)"
        ))
    } else if data.len() == 1 && acks.len() == 1 {
        Pairing::Data(data[0])
    } else {
        let port = streams[k].sport;
        let same = |v: &[usize]| {
            v.iter()
                .copied()
                .filter(|&i| port.is_some() && streams[i].sport == port)
                .collect::<Vec<_>>()
        };
        match (same(data).as_slice(), same(acks).len()) {
            ([d], 1) => Pairing::Data(*d),
            _ => Pairing::Unpaired(format!(
                "cannot tell which of the {} data streams from {a} to {b} (QPs {}) these ACKs \
                 acknowledge: {}",
                data.len(),
                data.iter()
                    .map(|&i| streams[i].key.qp.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                match port {
                    Some(p) => format!("none or several share their UDP source port {p}"),
                    None => "their UDP source port varies".to_string(),
                }
            )),
        }
    }
}
