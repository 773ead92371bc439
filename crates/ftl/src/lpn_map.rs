//! Storage of the page FTL's forward map: a two-level table of 32-bit entries in
//! anonymous memory mappings.
//!
//! Entries (`ppa + 1`, zero = unmapped) live in *leaves* of [`LEAF`] consecutive
//! entries. A *directory* holds one `u32` per leaf position of the logical space: 0 when
//! no entry of that leaf was ever set, else the leaf's index in the *slab*, a dense array
//! of leaves handed out in first-touch order. Leaf 0 of the slab is never handed out and
//! stays all zero, so a lookup is two dependent loads and no branch:
//! `slab[dir[i / LEAF] * LEAF + i % LEAF]`. A write to a position without a leaf takes
//! the next one from the slab; nothing is ever allocated, moved or copied after
//! construction, and nothing is hashed.
//!
//! Why two levels: a trace that touches pages uniformly over a large footprint sets a
//! small fraction of the entries but dirties every 4 KiB (and 2 MiB) page of a flat
//! table. The MQSim comparison run (issue #14: 1 M requests over the first 200 GiB of a
//! 476 GiB logical space, 8 KiB pages) sets 3.36 M of the 26.2 M entries of its footprint;
//! a flat table made 100 MiB of it resident, the two-level one makes the directory
//! (12.5 MiB) and 1.09 M leaves (33.2 MiB) resident. Resident bytes by leaf size for that
//! trace (directory + leaves): 2 entries 66.1 MiB, 4: 47.2, **8: 45.7**, 16: 57.1,
//! 32: 76.4, 64: 93.7 MiB — 8 entries (32 bytes, half a cache line, never split across
//! lines) is the minimum. Where every entry is set (preconditioning), the directory costs
//! an eighth more memory than a flat table. Measurements: docs/performance.md.
//!
//! Why mappings and not `Vec`s: the operating system hands out their pages zeroed and
//! only when first written, so an empty map costs no memory and no `memset` (zero means
//! "no leaf" and "unmapped" here, hence the `ppa + 1` encoding); the slab is sized for the
//! worst case (every leaf set) and only its used prefix becomes resident. On Linux both
//! are advised for transparent huge pages: every access of the map is at a random place
//! and huge pages remove most of the TLB walks (preconditioning a 256 GiB device:
//! docs/performance.md). Where the system refuses a mapping, an ordinary zeroed
//! allocation takes its place (the allocator's large zeroed allocations are lazily
//! backed too).

use std::fmt;

/// Bytes per entry.
const ENTRY: usize = 4;
/// log2 of the entries per leaf.
const LEAF_SHIFT: u32 = 3;
/// Entries per leaf (see the module docs for why 8).
pub(crate) const LEAF: u64 = 1 << LEAF_SHIFT;
/// Bytes of the memory pages counted by [`LpnMap::touched_bytes`].
const PAGE: usize = 4096;

/// A zero-initialised table of `len` 32-bit entries (see the module docs).
pub(crate) struct LpnMap {
    /// Slab index of each leaf position's leaf, 0 = none.
    dir: Table,
    /// The leaves, `LEAF` entries each; leaf 0 is the all-zero leaf of absent positions.
    slab: Table,
    /// Leaves handed out, counting leaf 0 (the next leaf to hand out).
    leaves: u32,
    len: u64,
}

/// A zeroed array of `u32` in a mapping, or in an ordinary allocation where the system
/// refuses a mapping.
enum Table {
    Mapped(memmap2::MmapMut),
    Heap(Vec<u8>),
}

impl Table {
    /// `n` zero entries.
    fn zeroed(n: usize) -> Table {
        let bytes = n.checked_mul(ENTRY).expect("forward map size overflows usize");
        match memmap2::MmapMut::map_anon(bytes.max(1)) {
            Ok(m) => {
                // Advice only: a kernel without transparent huge pages ignores or refuses
                // it, and the table works the same.
                #[cfg(target_os = "linux")]
                let _ = m.advise(memmap2::Advice::HugePage);
                Table::Mapped(m)
            }
            Err(_) => Table::Heap(vec![0; bytes]),
        }
    }

    #[inline]
    fn bytes(&self) -> &[u8] {
        match self {
            Table::Mapped(m) => m,
            Table::Heap(v) => v,
        }
    }

    #[inline]
    fn bytes_mut(&mut self) -> &mut [u8] {
        match self {
            Table::Mapped(m) => m,
            Table::Heap(v) => v,
        }
    }

    #[inline]
    fn get(&self, i: usize) -> u32 {
        let at = i * ENTRY;
        let b: [u8; ENTRY] = self.bytes()[at..at + ENTRY].try_into().expect("four bytes");
        u32::from_ne_bytes(b)
    }

    #[inline]
    fn set(&mut self, i: usize, v: u32) {
        let at = i * ENTRY;
        self.bytes_mut()[at..at + ENTRY].copy_from_slice(&v.to_ne_bytes());
    }

    fn is_mapped(&self) -> bool {
        matches!(self, Table::Mapped(_))
    }
}

impl LpnMap {
    /// A table of `len` zero entries.
    pub(crate) fn zeroed(len: u64) -> LpnMap {
        let positions = len.div_ceil(LEAF);
        // Leaf indices are `u32`, and leaf 0 is the zero leaf.
        let slab_leaves = positions + 1;
        assert!(slab_leaves <= u32::MAX as u64, "forward map of {len} entries exceeds 2^32 leaves");
        LpnMap {
            dir: Table::zeroed(positions as usize),
            slab: Table::zeroed((slab_leaves * LEAF) as usize),
            leaves: 1,
            len,
        }
    }

    /// Entry `i` (panics when `i` is out of range).
    #[inline]
    pub(crate) fn get(&self, i: u64) -> u32 {
        assert!(i < self.len, "forward map entry {i} of {}", self.len);
        let leaf = self.dir.get((i >> LEAF_SHIFT) as usize) as usize;
        self.slab.get(leaf << LEAF_SHIFT | (i & (LEAF - 1)) as usize)
    }

    /// Set entry `i` to `v` (panics when `i` is out of range).
    #[inline]
    pub(crate) fn set(&mut self, i: u64, v: u32) {
        assert!(i < self.len, "forward map entry {i} of {}", self.len);
        let pos = (i >> LEAF_SHIFT) as usize;
        let mut leaf = self.dir.get(pos);
        if leaf == 0 {
            if v == 0 {
                // Already zero, and a zero needs no leaf.
                return;
            }
            leaf = self.new_leaf(pos);
        }
        self.slab.set((leaf as usize) << LEAF_SHIFT | (i & (LEAF - 1)) as usize, v);
    }

    /// Hand out the next leaf of the slab to leaf position `pos`.
    #[cold]
    fn new_leaf(&mut self, pos: usize) -> u32 {
        let leaf = self.leaves;
        // The slab has a leaf for every position, and each position takes one at most.
        self.leaves += 1;
        self.dir.set(pos, leaf);
        leaf
    }

    /// Bytes of the table in 4 KiB pages that a write has touched — what a run has made
    /// resident, near enough: the directory's pages that name a leaf plus the slab's
    /// used prefix (it scans the directory, an eighth of a flat table: for memory reports,
    /// not hot paths).
    pub(crate) fn touched_bytes(&self) -> usize {
        if self.leaves == 1 {
            return 0;
        }
        let dir = self.dir.bytes();
        let dir_pages = dir.chunks(PAGE).filter(|p| p.iter().any(|&b| b != 0)).count();
        let slab = self.used_slab_bytes();
        dir_pages * PAGE + slab.div_ceil(PAGE) * PAGE
    }

    /// Bytes of the slab's leaves handed out so far, the zero leaf included.
    fn used_slab_bytes(&self) -> usize {
        self.leaves as usize * LEAF as usize * ENTRY
    }

    /// Leaves handed out, besides the zero leaf (for tests and reports).
    #[cfg(test)]
    fn leaves_in_use(&self) -> u32 {
        self.leaves - 1
    }
}

impl Clone for LpnMap {
    /// A deep copy that makes resident no more than the original: the directory is
    /// copied page by page, skipping pages without a leaf; the slab up to its last leaf.
    fn clone(&self) -> LpnMap {
        let mut c = LpnMap::zeroed(self.len);
        let to = c.dir.bytes_mut().chunks_mut(PAGE);
        for (to, from) in to.zip(self.dir.bytes().chunks(PAGE)) {
            if from.iter().any(|&b| b != 0) {
                to.copy_from_slice(from);
            }
        }
        let n = self.used_slab_bytes();
        c.slab.bytes_mut()[..n].copy_from_slice(&self.slab.bytes()[..n]);
        c.leaves = self.leaves;
        c
    }
}

impl fmt::Debug for LpnMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = if self.dir.is_mapped() && self.slab.is_mapped() { "mapped" } else { "heap" };
        write!(f, "LpnMap({} entries, {} leaves, {kind})", self.len, self.leaves - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn starts_zeroed_keeps_writes_and_clones_deeply() {
        let mut m = LpnMap::zeroed(3 << 20);
        assert_eq!((m.get(0), m.get((3 << 20) - 1)), (0, 0));
        assert_eq!(m.touched_bytes(), 0);
        m.set(5, 7);
        m.set((3 << 20) - 1, u32::MAX);
        let c = m.clone();
        m.set(5, 9);
        assert_eq!((c.get(5), c.get((3 << 20) - 1), c.get(6)), (7, u32::MAX, 0));
        assert_eq!(m.get(5), 9);
        // Two leaves: the directory's first and last pages, one slab page.
        assert_eq!(m.leaves_in_use(), 2);
        assert_eq!(m.touched_bytes(), 3 * 4096);
        assert_eq!(c.touched_bytes(), 3 * 4096);
    }

    #[test]
    fn leaf_boundaries_separate_neighbours() {
        let mut m = LpnMap::zeroed(4 * LEAF);
        // The last entry of leaf 0 and the first of leaf 1, in the opposite order.
        m.set(LEAF, 11);
        m.set(LEAF - 1, 10);
        assert_eq!(m.leaves_in_use(), 2);
        for i in 0..4 * LEAF {
            let want = match i {
                i if i == LEAF - 1 => 10,
                i if i == LEAF => 11,
                _ => 0,
            };
            assert_eq!(m.get(i), want, "entry {i}");
        }
        // Writes within a leaf take no new one.
        m.set(0, 1);
        m.set(2 * LEAF - 1, 2);
        assert_eq!(m.leaves_in_use(), 2);
        assert_eq!((m.get(0), m.get(2 * LEAF - 1), m.get(2 * LEAF)), (1, 2, 0));
    }

    #[test]
    fn the_last_entry_of_a_partial_leaf_is_usable() {
        for len in [1, LEAF - 1, LEAF + 1, 5 * LEAF + 3] {
            let mut m = LpnMap::zeroed(len);
            m.set(len - 1, 42);
            assert_eq!(m.get(len - 1), 42, "len {len}");
            assert_eq!(m.leaves_in_use(), 1);
        }
    }

    #[test]
    fn writing_zero_where_nothing_was_written_takes_no_leaf() {
        let mut m = LpnMap::zeroed(100);
        m.set(50, 0);
        assert_eq!((m.leaves_in_use(), m.touched_bytes()), (0, 0));
        m.set(50, 3);
        m.set(50, 0);
        assert_eq!((m.get(50), m.leaves_in_use()), (0, 1));
    }

    #[test]
    fn every_entry_set_uses_every_leaf() {
        let len = 10 * LEAF + 5;
        let mut m = LpnMap::zeroed(len);
        for i in (0..len).rev() {
            m.set(i, i as u32 + 1);
        }
        assert_eq!(m.leaves_in_use() as u64, len.div_ceil(LEAF));
        assert!((0..len).all(|i| m.get(i) == i as u32 + 1));
    }

    #[test]
    fn a_clone_is_independent_of_its_original() {
        let mut m = LpnMap::zeroed(1000);
        m.set(3, 30);
        let mut c = m.clone();
        // Both hand out their next leaf independently, and writes stay apart.
        m.set(500, 1);
        c.set(700, 2);
        c.set(3, 31);
        assert_eq!((m.get(3), m.get(500), m.get(700)), (30, 1, 0));
        assert_eq!((c.get(3), c.get(500), c.get(700)), (31, 0, 2));
        assert_eq!((m.leaves_in_use(), c.leaves_in_use()), (2, 2));
    }

    #[test]
    #[should_panic]
    fn out_of_range_panics() {
        LpnMap::zeroed(4).get(4);
    }

    #[test]
    #[should_panic]
    fn out_of_range_set_panics() {
        LpnMap::zeroed(4).set(4, 1);
    }

    #[test]
    fn an_empty_map_is_fine() {
        let m = LpnMap::zeroed(0);
        assert_eq!((m.len, m.touched_bytes()), (0, 0));
        assert_eq!(m.clone().len, 0);
    }

    #[test]
    fn touched_bytes_counts_directory_and_slab_pages() {
        // 2 directory pages' worth of positions; one leaf in each directory page.
        let per_dir_page = (PAGE / ENTRY) as u64 * LEAF;
        let mut m = LpnMap::zeroed(2 * per_dir_page);
        m.set(0, 1);
        assert_eq!(m.touched_bytes(), 2 * PAGE);
        m.set(per_dir_page, 1);
        assert_eq!(m.touched_bytes(), 3 * PAGE);
        // A slab page holds 128 leaves, the zero leaf among them: leaves 1..=127 fill the
        // first slab page, the 128th is on the second.
        let leaves_per_page = (PAGE / ENTRY) as u64 / LEAF;
        for k in 2..leaves_per_page - 1 {
            m.set(k * LEAF, 1);
        }
        assert_eq!(m.leaves_in_use() as u64, leaves_per_page - 1);
        assert_eq!(m.touched_bytes(), 3 * PAGE);
        m.set((leaves_per_page - 1) * LEAF, 1);
        assert_eq!(m.touched_bytes(), 4 * PAGE);
    }

    proptest! {
        /// Random writes and reads against a `Vec` model, with a clone taken midway that
        /// must keep the state of that moment.
        #[test]
        fn behaves_like_a_vec(
            len in 1u64..300,
            ops in prop::collection::vec((any::<prop::sample::Index>(), 0u32..4), 1..400),
            clone_at in any::<prop::sample::Index>(),
        ) {
            let mut m = LpnMap::zeroed(len);
            let mut model = vec![0u32; len as usize];
            let clone_at = clone_at.index(ops.len());
            let mut snapshot = None;
            for (k, (at, v)) in ops.iter().enumerate() {
                if k == clone_at {
                    snapshot = Some((m.clone(), model.clone()));
                }
                let i = at.index(len as usize);
                // Values 0..4: zeroes (unmapping) are frequent, as are repeated writes.
                let v = if *v == 3 { u32::MAX } else { *v };
                m.set(i as u64, v);
                model[i] = v;
                prop_assert_eq!(m.get(i as u64), v);
            }
            for (i, &want) in model.iter().enumerate() {
                prop_assert_eq!(m.get(i as u64), want);
            }
            let (c, cm) = snapshot.expect("clone_at < ops.len()");
            for (i, &want) in cm.iter().enumerate() {
                prop_assert_eq!(c.get(i as u64), want);
            }
            // At most one leaf per position.
            prop_assert!(m.leaves_in_use() as u64 <= len.div_ceil(LEAF));
        }
    }
}
