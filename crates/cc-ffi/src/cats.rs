//! The CATS conductor through the C ABI (`cc_cats_*`).
//!
//! One [`CcCatsConfig`] (validated parameters, shared by every connection) and one
//! [`CcCatsConn`] per connection (five descriptor queues of [`CC_CATS_QUEUE_CAPACITY`] entries,
//! the cached head of each and the 20-byte debt state). Per event: [`cc_cats_enqueue`] when the
//! application hands over a message, [`cc_cats_next_chunk`] for each scheduling decision (call it
//! after every enqueue, and in a loop while it returns `CC_CATS_SEND` when send-buffer space
//! frees up).
//! Semantics: `docs/cats.md`.

use cats_conductor::{ChunkRecord, Conductor, Config, Descriptor, EnqueueError, Multiplier, Prio};

pub use cats_conductor::DecisionCode;

use crate::{CcStatus, block};

/// Descriptors per priority queue of one connection (the conductor's const-generic `N`).
pub const CC_CATS_QUEUE_CAPACITY: usize = 16;

type Conn = Conductor<CC_CATS_QUEUE_CAPACITY>;

/// Bytes of a [`CcCatsConn`] block: `size_of` the Rust `Conductor<16>` on ilp32 (riscv32)
/// targets (5 `heapless::Deque`s of 16 descriptors with `usize` indices, the cached head of each
/// queue, the 20-byte debt state and the non-empty mask).
#[cfg(not(target_pointer_width = "64"))]
pub const CC_CATS_CONN_BYTES: usize = 784;
/// Bytes of a [`CcCatsConn`] block on LP64 hosts (the queues' `usize` indices are 8 bytes).
#[cfg(target_pointer_width = "64")]
pub const CC_CATS_CONN_BYTES: usize = 848;

/// Bytes of a [`CcCatsConfig`] block (`size_of` the Rust `Config`: 80).
pub const CC_CATS_CONFIG_BYTES: usize = 80;

/// Opaque per-connection conductor state. Allocate one per connection (any storage, aligned to
/// 8), initialise it with [`cc_cats_conn_init`]; never copy it while a call uses it.
#[repr(C, align(8))]
pub struct CcCatsConn {
    _opaque: [u8; CC_CATS_CONN_BYTES],
}
block::fits!(CcCatsConn, Conn);

/// Opaque validated configuration, written by [`cc_cats_config_init`]; read-only afterwards and
/// shared by every connection.
#[repr(C, align(8))]
pub struct CcCatsConfig {
    _opaque: [u8; CC_CATS_CONFIG_BYTES],
}
block::fits!(CcCatsConfig, Config);

/// Plain-integer CATS parameters. [`cc_cats_params_default`] fills in the paper's.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CcCatsParams {
    /// Largest chunk, bytes: `1 ..= 65 535`.
    pub mss_bytes: u32,
    /// High watermarks `H_0..H_3`, bytes (`L_p < H_p ≤ 16 MiB`).
    pub high_bytes: [u32; 4],
    /// Low watermarks `L_0..L_3`, bytes (`0 < L_p < H_p`).
    pub low_bytes: [u32; 4],
    /// Payback multipliers `M_0..M_4` in unsigned Q16.16 (`M = bits / 65 536`, `≤ 64.0`; the
    /// paper's 0.25 is 16 384); their sum must be positive.
    pub mult_q16: [u32; 5],
}

/// The hysteresis state of one connection as raw integers (for saving, restoring, or forcing it).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CcCatsState {
    /// Debts `D_0..D_3`, bytes.
    pub debt_bytes: [u32; 4],
    /// Bit `p` set when queue `p` (0..3) is In-Debt; bits 4..31 are ignored on input, 0 on output.
    pub in_debt_mask: u32,
}

/// Result of [`cc_cats_enqueue`].
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CcCatsEnqueue {
    /// Queued. Make a scheduling decision next ([`cc_cats_next_chunk`]).
    Ok = 0,
    /// Refused: a zero-length message would never produce a chunk. Nothing changed.
    ZeroLength = 1,
    /// Refused: this priority's queue holds [`CC_CATS_QUEUE_CAPACITY`] messages. Nothing changed.
    QueueFull = 2,
    /// Refused: `prio` is not 0..4. Nothing changed.
    InvalidPrio = 3,
}

/// One decision's chunk, as C reads it: cats-conductor's own record (`ChunkRecord`, which
/// cbindgen writes into the header as `CcCatsChunk`), written by `cc_cats_next_chunk`.
pub use cats_conductor::ChunkRecord as CcCatsChunk;

/// Fills `*out` with the paper's parameters (MSS 1 460; `H` = 60/30/15/6 kB; `L` = `H`/2;
/// `M` = 0.25/0.5/1.0/1.5/2.0).
///
/// # Safety
/// `out` is non-null, aligned and valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_cats_params_default(out: *mut CcCatsParams) {
    let d = Config::DEFAULT;
    let params = CcCatsParams {
        mss_bytes: d.mss_bytes(),
        high_bytes: [Prio::P0, Prio::P1, Prio::P2, Prio::P3].map(|p| d.high_bytes(p).unwrap_or(0)),
        low_bytes: [Prio::P0, Prio::P1, Prio::P2, Prio::P3].map(|p| d.low_bytes(p).unwrap_or(0)),
        mult_q16: Prio::ALL.map(|p| d.multiplier(p).to_bits()),
    };
    // SAFETY: caller contract on `out`.
    unsafe { block::out(out, params) }
}

/// Validates `*params` and writes the configuration into `*cfg` (precomputing every ratio; this
/// is the only CATS call that divides). Returns `CC_STATUS_INVALID_CONFIG` (block untouched) if a
/// parameter is out of range.
///
/// # Safety
/// `cfg` is a [`CcCatsConfig`] block, `params` a readable [`CcCatsParams`] (module contract).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_cats_config_init(
    cfg: *mut CcCatsConfig,
    params: *const CcCatsParams,
) -> CcStatus {
    // SAFETY: caller contract.
    let p: &CcCatsParams = unsafe { block::param(params) };
    match Config::new(
        p.mss_bytes,
        p.high_bytes,
        p.low_bytes,
        p.mult_q16.map(Multiplier::from_bits),
    ) {
        Ok(c) => {
            // SAFETY: caller contract.
            unsafe { block::init(cfg, c) };
            CcStatus::Ok
        }
        Err(_) => CcStatus::InvalidConfig,
    }
}

/// Bit `p` set when CATS Eq. 1 (`M_p/M_total < L_p/(H_p + MSS)`) fails for queue `p`: such a
/// configuration relies on Eq. 2's `L−1` clamp for liveness (it still works; see docs/cats.md).
///
/// # Safety
/// `cfg` was initialised by [`cc_cats_config_init`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_cats_config_eq1_violations(cfg: *const CcCatsConfig) -> u32 {
    // SAFETY: caller contract.
    let c = unsafe { block::get(cfg) };
    u32::from(c.eq1_violations())
}

/// Initialises a connection: empty queues, zero debts, every queue Eligible.
///
/// # Safety
/// `conn` is a writable [`CcCatsConn`] block (need not be initialised).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_cats_conn_init(conn: *mut CcCatsConn) {
    // SAFETY: caller contract.
    unsafe { block::init(conn, Conn::new()) }
}

/// Appends a message (opaque `handle`, `len_bytes > 0`) to queue `prio` (0 = highest ..= 4).
/// Makes no scheduling decision: call [`cc_cats_next_chunk`] afterwards.
///
/// # Safety
/// `conn` was initialised by [`cc_cats_conn_init`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_cats_enqueue(
    conn: *mut CcCatsConn,
    prio: u32,
    handle: u32,
    len_bytes: u32,
) -> CcCatsEnqueue {
    let Some(prio) = usize::try_from(prio).ok().and_then(Prio::from_index) else {
        return CcCatsEnqueue::InvalidPrio;
    };
    // SAFETY: caller contract.
    let c = unsafe { block::get_mut(conn) };
    match c.enqueue(prio, Descriptor { handle, len_bytes }) {
        Ok(()) => CcCatsEnqueue::Ok,
        Err(EnqueueError::ZeroLength(_)) => CcCatsEnqueue::ZeroLength,
        Err(EnqueueError::QueueFull(_)) => CcCatsEnqueue::QueueFull,
    }
}

/// One scheduling decision with `space_bytes` of free send-buffer space: picks the
/// highest-priority non-empty Eligible queue (resolving a deadlock by Eq. 2 if none is), and
/// names one chunk of its head message in `*out`. See `CcCatsDecision` for what is written.
///
/// # Safety
/// `conn` and `cfg` were initialised; `out` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_cats_next_chunk(
    conn: *mut CcCatsConn,
    cfg: *const CcCatsConfig,
    space_bytes: u32,
    out: *mut ChunkRecord,
) -> DecisionCode {
    // SAFETY: caller contract; `next_chunk_into` only writes `*rec` (it may be uninitialised C
    // memory).
    let (c, cfg, rec) = unsafe {
        (
            block::get_mut(conn),
            block::get(cfg),
            block::out_record::<_, ChunkRecord>(out),
        )
    };
    // The crate's code (`CcCatsDecision` in C) as it is; its deadlock rule is a tail call.
    c.next_chunk_into(cfg, space_bytes, rec)
}

/// Reads the connection's debt state (debts and In-Debt flags) into `*out`.
///
/// # Safety
/// `conn` was initialised; `out` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_cats_conn_get_state(conn: *const CcCatsConn, out: *mut CcCatsState) {
    // SAFETY: caller contract.
    let c = unsafe { block::get(conn) };
    let s = c.state();
    let raw = CcCatsState {
        debt_bytes: s.debt_bytes(),
        in_debt_mask: u32::from(s.in_debt_mask()),
    };
    // SAFETY: caller contract.
    unsafe { block::out(out, raw) }
}

/// Replaces the connection's debt state (restoring a saved connection); queues are untouched.
///
/// # Safety
/// `conn` was initialised; `state` is readable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_cats_conn_set_state(conn: *mut CcCatsConn, state: *const CcCatsState) {
    // SAFETY: caller contract.
    let (c, s) = unsafe { (block::get_mut(conn), block::param(state)) };
    #[allow(clippy::cast_possible_truncation)] // only bits 0..3 are used; the mask drops the rest
    let mask = (s.in_debt_mask & 0x0F) as u8;
    c.set_state(cats_conductor::State::from_raw_parts(s.debt_bytes, mask));
}

/// Messages waiting in queue `prio` (including a partly sent head); 0 for `prio > 4`.
///
/// # Safety
/// `conn` was initialised.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cc_cats_queued(conn: *const CcCatsConn, prio: u32) -> u32 {
    let Some(p) = usize::try_from(prio).ok().and_then(Prio::from_index) else {
        return 0;
    };
    // SAFETY: caller contract.
    let c = unsafe { block::get(conn) };
    u32::try_from(c.queued_messages(p)).unwrap_or(u32::MAX)
}

#[cfg(test)]
#[allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::cast_possible_truncation,
    clippy::panic
)]
mod tests {
    use super::*;
    use cats_conductor::Decision;
    use core::mem::MaybeUninit;

    fn config() -> CcCatsConfig {
        let mut p = MaybeUninit::<CcCatsParams>::uninit();
        let mut cfg = MaybeUninit::<CcCatsConfig>::uninit();
        // SAFETY: live locals.
        unsafe {
            cc_cats_params_default(p.as_mut_ptr());
            assert_eq!(
                cc_cats_config_init(cfg.as_mut_ptr(), p.as_ptr()),
                CcStatus::Ok
            );
            cfg.assume_init()
        }
    }

    #[test]
    fn default_params_are_the_papers() {
        let mut p = MaybeUninit::<CcCatsParams>::uninit();
        // SAFETY: live local.
        let p = unsafe {
            cc_cats_params_default(p.as_mut_ptr());
            p.assume_init()
        };
        assert_eq!(p.mss_bytes, 1460);
        assert_eq!(p.high_bytes, [60_000, 30_000, 15_000, 6_000]);
        assert_eq!(p.low_bytes, [30_000, 15_000, 7_500, 3_000]);
        assert_eq!(p.mult_q16, [16_384, 32_768, 65_536, 98_304, 131_072]);
        assert_eq!(core::mem::size_of::<Config>(), CC_CATS_CONFIG_BYTES);
        assert_eq!(core::mem::size_of::<Conn>(), CC_CATS_CONN_BYTES);
    }

    #[test]
    fn invalid_config_is_a_return_code() {
        let mut p = MaybeUninit::<CcCatsParams>::uninit();
        let mut cfg = MaybeUninit::<CcCatsConfig>::uninit();
        // SAFETY: live locals.
        unsafe {
            cc_cats_params_default(p.as_mut_ptr());
            (*p.as_mut_ptr()).low_bytes[1] = 30_000; // L1 = H1
            assert_eq!(
                cc_cats_config_init(cfg.as_mut_ptr(), p.as_ptr()),
                CcStatus::InvalidConfig
            );
        }
    }

    #[test]
    fn enqueue_and_chunks_match_the_crate() {
        let cfg = config();
        let mut conn = MaybeUninit::<CcCatsConn>::uninit();
        let mut rust = Conn::new();
        let mut out = CcCatsChunk {
            prio: 9,
            handle: 9,
            offset_bytes: 9,
            len_bytes: 9,
            last: 9,
            deadlock_resolved: 9,
        };
        // SAFETY: live locals; `conn` initialised first.
        unsafe {
            cc_cats_conn_init(conn.as_mut_ptr());
            let c = conn.as_mut_ptr();
            assert_eq!(cc_cats_enqueue(c, 5, 1, 10), CcCatsEnqueue::InvalidPrio);
            assert_eq!(cc_cats_enqueue(c, 1, 1, 0), CcCatsEnqueue::ZeroLength);
            assert_eq!(
                cc_cats_next_chunk(c, &cfg, 10_000, &mut out),
                DecisionCode::Empty
            );
            assert_eq!(out.prio, 9, "EMPTY leaves *out untouched");
            for (i, (p, len)) in [(4u32, 5000u32), (1, 3000), (0, 700)].iter().enumerate() {
                assert_eq!(cc_cats_enqueue(c, *p, i as u32, *len), CcCatsEnqueue::Ok);
                rust.enqueue(
                    Prio::from_index(*p as usize).unwrap(),
                    Descriptor {
                        handle: i as u32,
                        len_bytes: *len,
                    },
                )
                .unwrap();
            }
            assert_eq!(cc_cats_queued(c, 1), 1);
            assert_eq!(
                cc_cats_next_chunk(c, &cfg, 100, &mut out),
                DecisionCode::NoSpace
            );
            assert_eq!((out.prio, out.len_bytes), (0, 700));
            let rcfg = Config::DEFAULT;
            for _ in 0..8 {
                let want = rust.next_chunk(&rcfg, 2000);
                let got = cc_cats_next_chunk(c, &cfg, 2000, &mut out);
                match want {
                    Decision::Send { chunk, .. } => {
                        assert_eq!(got, DecisionCode::Send);
                        assert_eq!(
                            (
                                out.prio,
                                out.handle,
                                out.offset_bytes,
                                out.len_bytes,
                                out.last
                            ),
                            (
                                chunk.prio as u32,
                                chunk.handle,
                                chunk.offset_bytes,
                                chunk.len_bytes,
                                u8::from(chunk.last)
                            )
                        );
                    }
                    Decision::Empty => assert_eq!(got, DecisionCode::Empty),
                    Decision::NoSpace { .. } => panic!("2000 B always fits one MSS"),
                }
            }
            let mut st = MaybeUninit::<CcCatsState>::uninit();
            cc_cats_conn_get_state(c, st.as_mut_ptr());
            let st = st.assume_init();
            assert_eq!(st.debt_bytes, rust.state().debt_bytes());
            let forced = CcCatsState {
                debt_bytes: [1, 2, 3, 4],
                in_debt_mask: 0xF5,
            };
            cc_cats_conn_set_state(c, &forced);
            let mut back = MaybeUninit::<CcCatsState>::uninit();
            cc_cats_conn_get_state(c, back.as_mut_ptr());
            assert_eq!(back.assume_init().in_debt_mask, 0x5);
        }
    }
}
