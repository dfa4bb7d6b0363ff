//! Tiny networks for the engine's unit tests: a scenario's text, loaded, checked and built as
//! a run builds it, and ways to drive its parts by hand.

use super::*;

/// The network and workload of scenario `text` (checked as a file is), controller as the
/// scenario says, seed 1.
pub(super) fn sim(text: &str) -> Sim {
    let l = crate::scenario::parse(std::path::Path::new("unit.toml"), text)
        .unwrap_or_else(|e| panic!("{e}"));
    let setup = crate::ctrl::Setup::build(&l, &[]).unwrap_or_else(|e| panic!("{e}"));
    Sim::new(&l, setup, l.sc.controller, 1, Recorder::none())
}

/// An HPCC scenario of 100 µs at 100 Gb/s with 1 µs host links: the top-level keys `head`,
/// `[topology]` with the keys `topology`, then the tables `rest` (e.g. [`incast`]'s group).
pub(super) fn hpcc(head: &str, topology: &str, rest: &str) -> String {
    format!(
        "name = \"unit\"\nalgorithm = \"hpcc\"\nduration_ns = 100_000\n{head}\n[topology]\n\
         {topology}\nhost_rate_bps = 100_000_000_000\n{rest}\n"
    )
}

/// One flow group: `size` bytes from each of `src` to `dst`, starting at `start_ns`.
pub(super) fn incast(src: &[u32], dst: u32, size: u64, start_ns: u64) -> String {
    format!(
        "[[flows]]\nkind = \"incast\"\nsrc = {src:?}\ndst = {dst}\nsize_bytes = {size}\n\
         start_ns = {start_ns}\n"
    )
}

/// Runs the event loop up to `t_ns` (the events after it stay queued).
pub(super) fn run_to(s: &mut Sim, t_ns: u64) {
    s.end_ps = t_ns * PS_PER_NS;
    s.run(|_| {});
}

/// A new packet of `kind` in the slab: flow `flow`, first byte (or ACK number) `seq`,
/// `payload` bytes, `wire` bytes on the wire, arrived through port `in_port`.
pub(super) fn pkt(
    s: &mut Sim,
    kind: u8,
    flow: u32,
    seq: u64,
    payload: u32,
    wire: u32,
    in_port: u32,
) -> u32 {
    s.alloc(Pkt {
        seq,
        flow,
        payload,
        wire,
        kind,
        in_port,
        ..Pkt::default()
    })
}

/// The port of switch `sw` whose link goes to node `node`.
pub(super) fn port_to(s: &Sim, sw: u32, node: u32) -> u32 {
    s.switches[sw as usize]
        .ports
        .iter()
        .copied()
        .find(|&p| s.ports[p as usize].peer == node)
        .expect("a link to that node")
}

/// Ends the transmission on `port` at its end time and starts the next one (as its `TxDone`
/// event does): what the port dequeues next.
pub(super) fn next_tx(s: &mut Sim, port: u32) {
    s.now = s.now.max(s.ports[port as usize].free_at_ps);
    s.tx_done(port);
}

/// Every pending event, in the order the loop would take them, with its time (ps); the queue
/// is left empty.
pub(super) fn drain(s: &mut Sim) -> Vec<(u64, Ev)> {
    std::iter::from_fn(|| s.queue.pop())
        .map(|k| ((k >> 84) as u64, unpack(k)))
        .collect()
}
