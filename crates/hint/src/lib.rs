//! Cache hints: [`prefetch`] asks the processor to start loading the cache line that
//! holds a value, without waiting for it.
//!
//! Why a crate of its own: the simulator's remaining stalls are cache misses on tables
//! indexed by workload addresses (the forward map, block records), and its warming hints
//! read those entries ahead of use with plain loads (`Ftl::warm_writes`). A plain load
//! that misses holds its place in the processor's reorder window until the data
//! arrives, so a batch of them still stalls the thread for about one memory latency per
//! dependent level. A prefetch instruction retires at once and the line arrives in the
//! background. Rust's prefetch (`core::arch::x86_64::_mm_prefetch`) is an `unsafe fn`
//! (it takes a raw pointer; `std::hint::prefetch_read` is not stable), and every other
//! crate of the workspace forbids `unsafe` code, so the one `unsafe` block per target
//! lives here, behind a function that takes a reference.
//!
//! Soundness: a prefetch instruction (x86-64 `PREFETCHT0`, AArch64 `PRFM PLDL1KEEP`)
//! has no architectural effect: it reads no register and no memory that a program can
//! observe, and never faults, whatever the address. The address given here is that of
//! a live reference besides. On other targets [`prefetch`] does nothing.
//!
//! A hint changes speed only, never a result: nothing reads what it loads.
#![deny(unsafe_code)]
#![cfg_attr(not(test), no_std)]

/// Start loading the cache line holding `*value` into the first-level data cache (a
/// hint: the processor may drop it; nothing waits for it).
#[inline(always)]
pub fn prefetch<T>(value: &T) {
    let p = value as *const T;
    #[cfg(target_arch = "x86_64")]
    #[allow(unsafe_code)]
    // SAFETY: PREFETCHT0 has no architectural effect and never faults (see the crate
    // docs); `p` comes from a live reference.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(p.cast());
    }
    #[cfg(target_arch = "aarch64")]
    #[allow(unsafe_code)]
    // SAFETY: PRFM has no architectural effect and never faults (see the crate docs);
    // `p` comes from a live reference. The block reads and writes no memory, no stack
    // and no flags.
    unsafe {
        core::arch::asm!("prfm pldl1keep, [{p}]", p = in(reg) p, options(nostack, readonly, preserves_flags));
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    let _ = p;
}

#[cfg(test)]
mod tests {
    use super::prefetch;

    /// A prefetch reads nothing a program can see and changes nothing: values are
    /// unchanged after it, whatever their type, size or alignment.
    #[test]
    fn prefetch_changes_nothing() {
        let a = [1u8, 2, 3];
        let b = 0x0123_4567_89ab_cdefu64;
        let c = [[7u32; 33]; 3];
        prefetch(&a[2]);
        prefetch(&b);
        prefetch(&c);
        prefetch(&c[2][32]);
        prefetch(&());
        assert_eq!(a, [1, 2, 3]);
        assert_eq!(b, 0x0123_4567_89ab_cdef);
        assert_eq!(c[2][32], 7);
    }
}
