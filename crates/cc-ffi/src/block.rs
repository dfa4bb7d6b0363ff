//! Caller-allocated opaque blocks: the only place this crate turns a C pointer into a Rust
//! reference.
//!
//! A block type `B` (`#[repr(C, align(8))] struct CcXxx { _opaque: [u8; N] }`) holds one Rust
//! type, named once by [`fits!`]: it implements [`Opaque`] for the block (`B::Rust = S`) and
//! proves at compile time that `S` fits `B` in size and alignment. The helpers below take the
//! Rust type from the block, so call sites carry no type annotation and cannot pair a block with
//! another type. Plain `#[repr(C)]` parameter structs are read with [`param`].
//!
//! Caller contract for every pointer passed here (documented in the header as undefined
//! behaviour when broken): non-null; aligned to `align_of::<B>()`; valid for reads (and writes
//! for `*mut`) of `size_of::<B>()` bytes; not accessed by anything else during the call; for
//! [`get`]/[`get_mut`], previously initialised by [`init`] with the same `S`.

use core::marker::PhantomData;
use core::mem::{align_of, size_of};

/// An opaque C block and the one Rust type it holds (implemented by [`fits!`]).
pub trait Opaque {
    /// The Rust value the block holds.
    type Rust;
}

/// Ties the opaque block `$block` to `$state` ([`Opaque`]) and proves at compile time that
/// `$state` fits it.
#[macro_export]
macro_rules! fits {
    ($block:ty, $state:ty) => {
        const _: () = assert!(
            ::core::mem::size_of::<$state>() <= ::core::mem::size_of::<$block>()
                && ::core::mem::align_of::<$state>() <= ::core::mem::align_of::<$block>(),
            "the Rust state does not fit its opaque C block: raise the block size"
        );
        impl $crate::block::Opaque for $block {
            type Rust = $state;
        }
    };
}
pub use fits;

struct Fits<B, S>(PhantomData<(B, S)>);
impl<B, S> Fits<B, S> {
    const OK: () = assert!(size_of::<S>() <= size_of::<B>() && align_of::<S>() <= align_of::<B>());
}

/// Writes `value` into the (possibly uninitialised) block at `p`.
///
/// # Safety
/// `p` satisfies the module's caller contract (initialisation not required).
#[inline(always)]
pub unsafe fn init<B: Opaque>(p: *mut B, value: B::Rust) {
    let () = Fits::<B, B::Rust>::OK;
    debug_assert!(
        !p.is_null() && p.is_aligned(),
        "null or misaligned block pointer"
    );
    // SAFETY: `S` fits `B` in size and alignment (checked above at compile time) and `p` is
    // valid for writes of `size_of::<B>()` bytes (caller contract). `write` does not read or
    // drop the old contents, so an uninitialised block is fine.
    unsafe { p.cast::<B::Rust>().write(value) }
}

/// The value in an initialised block, shared.
///
/// # Safety
/// `p` satisfies the module's caller contract and holds an `S` written by [`init`]; the returned
/// reference must not outlive the call.
#[inline(always)]
pub unsafe fn get<'a, B: Opaque>(p: *const B) -> &'a B::Rust {
    let () = Fits::<B, B::Rust>::OK;
    debug_assert!(
        !p.is_null() && p.is_aligned(),
        "null or misaligned block pointer"
    );
    // SAFETY: fits (compile time), valid and initialised with an `S` (caller contract).
    unsafe { &*p.cast::<B::Rust>() }
}

/// The value in an initialised block, exclusive.
///
/// # Safety
/// As [`get`], and nothing else accesses the block during the call.
#[inline(always)]
pub unsafe fn get_mut<'a, B: Opaque>(p: *mut B) -> &'a mut B::Rust {
    let () = Fits::<B, B::Rust>::OK;
    debug_assert!(
        !p.is_null() && p.is_aligned(),
        "null or misaligned block pointer"
    );
    // SAFETY: fits (compile time), valid, initialised and unaliased (caller contract).
    unsafe { &mut *p.cast::<B::Rust>() }
}

/// A plain `#[repr(C)]` struct passed by pointer (parameters), shared.
///
/// # Safety
/// `p` is non-null, aligned for `T`, valid for reads and holds a `T`; the returned reference
/// must not outlive the call.
#[inline(always)]
pub unsafe fn param<'a, T>(p: *const T) -> &'a T {
    debug_assert!(
        !p.is_null() && p.is_aligned(),
        "null or misaligned parameter pointer"
    );
    // SAFETY: caller contract.
    unsafe { &*p }
}

/// Writes a result through an out-pointer.
///
/// # Safety
/// `p` is non-null, aligned for `T` and valid for writes.
#[inline(always)]
pub unsafe fn out<T>(p: *mut T, value: T) {
    debug_assert!(
        !p.is_null() && p.is_aligned(),
        "null or misaligned out-pointer"
    );
    // SAFETY: caller contract.
    unsafe { p.write(value) }
}

/// An out-pointer as a reference the callee only writes through (a result record handed down
/// to an algorithm crate in the same layout, e.g. `CcPacerSegment` as `cc_pacer::Segment`).
///
/// # Safety
/// `p` is non-null, aligned for `U` and valid for writes of `size_of::<U>()` bytes; `T` and `U`
/// have the same size and field layout of plain integers (asserted at compile time where it
/// is used); the callee never reads through the reference before writing it (the record may
/// be uninitialised C memory).
#[inline(always)]
pub unsafe fn out_record<'a, T, U>(p: *mut T) -> &'a mut U {
    debug_assert!(
        !p.is_null() && p.is_aligned(),
        "null or misaligned out-pointer"
    );
    // SAFETY: caller contract.
    unsafe { &mut *p.cast::<U>() }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    /// A stand-in for an algorithm state (the real ones are wired in with the algorithm crates).
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    struct State {
        rate_bps: u64,
        prev_rtt_ns: u32,
        branch: u8,
    }

    #[repr(C, align(8))]
    struct Block {
        _opaque: [u8; 16],
    }
    fits!(Block, State);

    #[test]
    fn init_then_update_through_the_block() {
        let mut blk = core::mem::MaybeUninit::<Block>::uninit();
        let p = blk.as_mut_ptr();
        let s = State {
            rate_bps: 10_000_000_000,
            prev_rtt_ns: 12_000,
            branch: 1,
        };
        // SAFETY: `p` points to a live, aligned, exclusively owned block.
        unsafe { init(p, s) };
        // SAFETY: as above, and initialised.
        let st: &mut State = unsafe { get_mut(p) };
        st.rate_bps /= 2;
        // SAFETY: as above.
        let st: &State = unsafe { get(p) };
        assert_eq!(st.rate_bps, 5_000_000_000);
        assert_eq!(st.prev_rtt_ns, 12_000);
        assert_eq!(size_of::<Block>(), 16);
        assert_eq!(align_of::<Block>(), 8);
    }

    #[test]
    #[should_panic(expected = "null or misaligned")]
    #[cfg(debug_assertions)]
    fn null_block_is_caught_in_debug_builds() {
        // SAFETY: deliberately broken contract; the debug check fires before any access.
        unsafe {
            init::<Block>(
                core::ptr::null_mut(),
                State {
                    rate_bps: 0,
                    prev_rtt_ns: 0,
                    branch: 0,
                },
            )
        };
    }
}
