//! Probe calls for the cats crate: one `probe_cats_*` function per per-event entry point.

use cats_conductor::{Conductor, Config, Decision, Descriptor, Prio};
use core::hint::black_box;

/// Per-connection capacity used by the probe (16 descriptors per priority).
type Conn = Conductor<16>;

// The documented sizes (docs/cats.md; the 64-bit one in docs/firmware.md): the queues index with
// `usize`, so a connection grows on a 64-bit core; the debt state and the configuration do not.
#[cfg(target_pointer_width = "32")]
const _: () = assert!(core::mem::size_of::<Conn>() == 784);
#[cfg(target_pointer_width = "64")]
const _: () = assert!(core::mem::size_of::<Conn>() == 848);
const _: () = assert!(core::mem::size_of::<cats_conductor::State>() == 20);
const _: () = assert!(core::mem::size_of::<Config>() == 80);
// A firmware build can refuse a configuration that relies on the L−1 clamp (Eq. 1) at compile time.
const _: () = assert!(Config::DEFAULT.eq1_holds());

/// `Conductor::enqueue`.
#[unsafe(no_mangle)]
#[inline(never)]
pub extern "C" fn probe_cats_enqueue(c: &mut Conn, prio: u32, handle: u32, len_bytes: u32) -> u32 {
    let Some(p) = Prio::from_index(prio as usize) else {
        return 2;
    };
    match c.enqueue(p, Descriptor { handle, len_bytes }) {
        Ok(()) => 0,
        Err(_) => 1,
    }
}

/// `Conductor::next_chunk`: one scheduling decision.
#[unsafe(no_mangle)]
#[inline(never)]
pub extern "C" fn probe_cats_next_chunk(c: &mut Conn, cfg: &Config, space_bytes: u32) -> u32 {
    match c.next_chunk(cfg, space_bytes) {
        Decision::Empty => 0,
        Decision::NoSpace { len_bytes, .. } => len_bytes | 1 << 31,
        Decision::Send { chunk, .. } => {
            chunk.len_bytes ^ chunk.offset_bytes ^ chunk.handle ^ (chunk.prio as u32) << 28
        }
    }
}

/// Builds the configuration (may divide) and then calls every per-event entry point.
pub fn run(seed: u32) -> u32 {
    let cfg = match Config::new(
        black_box(1460),
        black_box([60_000, 30_000, 15_000, 6_000]),
        black_box([30_000, 15_000, 7_500, 3_000]),
        black_box(Prio::ALL.map(|p| Config::DEFAULT.multiplier(p))),
    ) {
        Ok(c) => c,
        Err(_) => Config::DEFAULT,
    };
    let mut c: Conn = Conductor::new();
    let mut acc = seed;
    for i in 0..8u32 {
        acc = acc.wrapping_add(probe_cats_enqueue(
            black_box(&mut c),
            black_box(i % 5),
            black_box(i),
            black_box(3000 + i),
        ));
    }
    for _ in 0..64 {
        acc = acc.wrapping_add(probe_cats_next_chunk(
            black_box(&mut c),
            black_box(&cfg),
            black_box(100_000),
        ));
    }
    acc
}
