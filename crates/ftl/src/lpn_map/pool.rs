//! The two-level forward map's leaves: a pool of fixed-size chunks, each its own
//! zeroed table, the next ones allocated and touched ahead of need on a helper thread.
//!
//! Leaf `l` is slot `l % CHUNK_LEAVES` of chunk `l / CHUNK_LEAVES`; leaves are handed out
//! in order, so chunks are taken in order too and the memory needed next is known ahead.
//! A chunk is 2 MiB (64 Ki leaves of 32 bytes): one transparent huge page, so a lookup
//! takes no more TLB entries than with one table, and a chunk is what the kernel zeroes
//! on first touch anyway. A [`Pretoucher`] thread makes each next chunk and writes every
//! 4 KiB page of it, so the kernel's zeroing (`clear_page_erms`, 0.1–5 ms per chunk on
//! this project's VMs) happens on the second core.
//!
//! The map starts the helper at its first density check (16 Ki leaves, a quarter of the
//! first chunk) if it stays two-level: a run that writes little never gets there, and
//! preconditioning turns the map flat at that check and never starts one. A chunk is
//! all zeroes however it was made, and the simulation's thread makes its own when none
//! is ready: results cannot depend on the helper.
//!
//! The cost: a lookup indexes the chunk list (in cache) between its two loads, nine
//! more instructions than one table (docs/performance.md).

use super::{ENTRY, LEAF, LEAF_SHIFT, PAGE, Table};
use crate::pretouch::Pretoucher;

/// log2 of the leaves per chunk.
const CHUNK_SHIFT: u32 = 16;
/// Leaves per chunk: 64 Ki × 32 bytes = 2 MiB, one huge page.
const CHUNK_LEAVES: u64 = 1 << CHUNK_SHIFT;
/// Entries per (full) chunk.
const CHUNK_ENTRIES: usize = (CHUNK_LEAVES << LEAF_SHIFT) as usize;

/// The leaf pool: chunks in leaf order, the last one possibly in use only in part.
pub(super) struct LeafPool {
    /// The chunks allocated so far, each of `chunk_entries` entries.
    chunks: Vec<Table>,
    /// Entries per chunk: a full chunk, or the whole pool where that is smaller.
    chunk_entries: usize,
    /// Leaves the pool can hold at most.
    capacity: u64,
    /// The helper making the next chunks, once started.
    pretoucher: Option<Pretoucher<Table>>,
    /// Whether a helper may still be started (false once tried, and in clones).
    may_pretouch: bool,
}

impl LeafPool {
    /// A pool of `capacity` leaves (at least 1), all zero; only the first chunk exists.
    pub(super) fn new(capacity: u64) -> LeafPool {
        let chunk_entries = CHUNK_ENTRIES.min((capacity.max(1) << LEAF_SHIFT) as usize);
        LeafPool {
            chunks: vec![Table::zeroed(chunk_entries)],
            chunk_entries,
            capacity,
            pretoucher: None,
            may_pretouch: capacity > 2 * CHUNK_LEAVES,
        }
    }

    /// Entry `off` of leaf `leaf`.
    #[inline(always)]
    pub(super) fn get(&self, leaf: usize, off: usize) -> u32 {
        self.chunks[leaf >> CHUNK_SHIFT].get((leaf & (CHUNK_LEAVES as usize - 1)) << LEAF_SHIFT | off)
    }

    /// Start loading entry `off` of leaf `leaf`'s cache line (a hint).
    #[inline(always)]
    pub(super) fn prefetch(&self, leaf: usize, off: usize) {
        self.chunks[leaf >> CHUNK_SHIFT].prefetch((leaf & (CHUNK_LEAVES as usize - 1)) << LEAF_SHIFT | off);
    }

    /// Set entry `off` of leaf `leaf` (a leaf handed out by [`LeafPool::reach`]).
    #[inline(always)]
    pub(super) fn set(&mut self, leaf: usize, off: usize, v: u32) {
        self.chunks[leaf >> CHUNK_SHIFT].set((leaf & (CHUNK_LEAVES as usize - 1)) << LEAF_SHIFT | off, v);
    }

    /// Make leaf `leaf` usable (the pool hands leaves out in order, so a new leaf is at
    /// most the first of a new chunk).
    #[inline]
    pub(super) fn reach(&mut self, leaf: u32) {
        if (leaf >> CHUNK_SHIFT) as usize == self.chunks.len() {
            self.add_chunk();
        }
    }

    /// Append the next chunk: the helper's if one is ready, else a fresh one.
    #[cold]
    #[inline(never)]
    fn add_chunk(&mut self) {
        let ready = self.pretoucher.as_ref().and_then(Pretoucher::take);
        let chunk = ready.unwrap_or_else(|| Table::zeroed(self.chunk_entries));
        self.chunks.push(chunk);
    }

    /// Start the helper for the chunks still to come, the first time this is called on
    /// a pool of more than two chunks with at least two still to come.
    #[cold]
    #[inline(never)]
    pub(super) fn start_pretouch(&mut self) {
        if !self.may_pretouch {
            return;
        }
        self.may_pretouch = false;
        let total = self.capacity.div_ceil(CHUNK_LEAVES) as usize;
        let to_come = total - self.chunks.len();
        if to_come < 2 {
            return;
        }
        let entries = self.chunk_entries;
        self.pretoucher = Pretoucher::spawn(to_come, move || Table::touched(entries));
    }

    /// The bytes of leaf `leaf`.
    pub(super) fn leaf_bytes(&self, leaf: usize) -> &[u8] {
        let leaf_bytes = LEAF as usize * ENTRY;
        let at = (leaf & (CHUNK_LEAVES as usize - 1)) * leaf_bytes;
        &self.chunks[leaf >> CHUNK_SHIFT].bytes()[at..at + leaf_bytes]
    }

    /// Bytes of 4 KiB pages holding the first `leaves` leaves (the used prefix).
    pub(super) fn used_page_bytes(&self, leaves: u32) -> usize {
        let leaf_bytes = LEAF as usize * ENTRY;
        let chunk_bytes = self.chunk_entries * ENTRY;
        let used = leaves as usize * leaf_bytes;
        let (full, part) = (used / chunk_bytes, used % chunk_bytes);
        full * chunk_bytes.div_ceil(PAGE) * PAGE + part.div_ceil(PAGE) * PAGE
    }

    /// A deep copy of the first `leaves` leaves, making resident no more than they use;
    /// the copy has no helper.
    pub(super) fn clone_used(&self, leaves: u32) -> LeafPool {
        let mut used = leaves as usize * LEAF as usize * ENTRY;
        let mut chunks = Vec::with_capacity(self.chunks.len());
        for c in &self.chunks {
            let mut copy = Table::zeroed(self.chunk_entries);
            let n = used.min(c.bytes().len());
            copy.bytes_mut()[..n].copy_from_slice(&c.bytes()[..n]);
            used -= n;
            chunks.push(copy);
        }
        LeafPool {
            chunks,
            chunk_entries: self.chunk_entries,
            capacity: self.capacity,
            pretoucher: None,
            may_pretouch: false,
        }
    }

    /// "mapped", "heap" or "mixed": how the chunks are backed.
    pub(super) fn kind(&self) -> &'static str {
        let first = self.chunks[0].kind();
        if self.chunks.iter().all(|c| c.kind() == first) { first } else { "mixed" }
    }

    /// Chunks allocated.
    #[cfg(test)]
    pub(super) fn chunks(&self) -> usize {
        self.chunks.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A pool large enough to start a helper, used across three chunks.
    #[test]
    fn chunks_are_taken_in_order_and_keep_their_leaves() {
        let capacity = 5 * CHUNK_LEAVES;
        let mut p = LeafPool::new(capacity);
        let mut model = vec![0u32; (3 * CHUNK_LEAVES as usize) << LEAF_SHIFT];
        for leaf in 1..3 * CHUNK_LEAVES as u32 {
            p.reach(leaf);
            if leaf == 1000 {
                p.start_pretouch();
            }
            let off = (leaf % LEAF as u32) as usize;
            p.set(leaf as usize, off, leaf);
            model[(leaf as usize) << LEAF_SHIFT | off] = leaf;
        }
        assert_eq!(p.chunks(), 3);
        for (i, &want) in model.iter().enumerate() {
            assert_eq!(p.get(i >> LEAF_SHIFT, i & (LEAF as usize - 1)), want, "entry {i}");
        }
        // Full chunks: two are resident in full, the third up to its last leaf.
        assert_eq!(p.used_page_bytes(3 * CHUNK_LEAVES as u32), 3 * CHUNK_ENTRIES * ENTRY);
        // A clone of all but the last leaf: the leaves it covers, and nothing beyond.
        let last = 3 * CHUNK_LEAVES as usize - 1;
        let c = p.clone_used(last as u32);
        assert!((1..last).all(|l| c.get(l, l % LEAF as usize) == p.get(l, l % LEAF as usize)));
        assert_eq!((c.get(last, last % LEAF as usize), p.get(last, last % LEAF as usize)), (0, last as u32));
        assert_eq!(c.kind(), p.kind());
    }

    #[test]
    fn a_small_pool_is_one_chunk_of_its_size_and_starts_no_helper() {
        let mut p = LeafPool::new(100);
        assert_eq!(p.chunk_entries, 100 << LEAF_SHIFT);
        for leaf in 1..100 {
            p.reach(leaf);
        }
        p.start_pretouch();
        assert!(p.pretoucher.is_none() && !p.may_pretouch);
        assert_eq!(p.used_page_bytes(100), (100 * 32usize).div_ceil(PAGE) * PAGE);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Leaves handed out in order and written at random against a `Vec` model, on
        /// pools of one to four chunks (the larger ones start a helper midway).
        #[test]
        fn behaves_like_a_vec(
            capacity in prop_oneof![1u64..300, (CHUNK_LEAVES - 2)..(4 * CHUNK_LEAVES)],
            ops in prop::collection::vec((any::<prop::sample::Index>(), 0usize..LEAF as usize, any::<u32>()), 1..200),
            grow in prop::collection::vec(0u64..(CHUNK_LEAVES / 2), 1..200),
        ) {
            let mut p = LeafPool::new(capacity);
            let mut model: Vec<u32> = vec![0; LEAF as usize];
            let mut leaves = 1u64;
            for (k, (at, off, v)) in ops.iter().enumerate() {
                // Hand out a run of new leaves, then write one entry of a used leaf.
                let to = (leaves + grow[k % grow.len()]).min(capacity);
                while leaves < to {
                    p.reach(leaves as u32);
                    if leaves == CHUNK_LEAVES / 4 {
                        p.start_pretouch();
                    }
                    leaves += 1;
                    model.extend_from_slice(&[0; LEAF as usize]);
                }
                let leaf = at.index(leaves as usize);
                p.set(leaf, *off, *v);
                model[leaf << LEAF_SHIFT | off] = *v;
                prop_assert_eq!(p.get(leaf, *off), *v);
            }
            for (i, &want) in model.iter().enumerate() {
                prop_assert_eq!(p.get(i >> LEAF_SHIFT, i & (LEAF as usize - 1)), want);
            }
            prop_assert_eq!(p.chunks() as u64, leaves.div_ceil(CHUNK_LEAVES));
            let c = p.clone_used(leaves as u32);
            for (i, &want) in model.iter().enumerate() {
                prop_assert_eq!(c.get(i >> LEAF_SHIFT, i & (LEAF as usize - 1)), want);
            }
        }
    }
}
