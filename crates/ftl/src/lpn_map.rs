//! Storage of the page FTL's forward map: a two-level table of 32-bit entries in
//! anonymous memory mappings while the written entries are sparse, one flat table once
//! they are dense.
//!
//! Two levels: entries (`ppa + 1`, zero = unmapped) live in *leaves* of [`LEAF`]
//! consecutive entries. A *directory* holds one `u32` per leaf position of the logical
//! space: 0 when no entry of that leaf was ever set, else the leaf's index in the *slab*,
//! a dense array of leaves handed out in first-touch order. Leaf 0 of the slab is never
//! handed out and stays all zero, so a lookup is two dependent loads and no branch:
//! `slab[dir[i / LEAF] * LEAF + i % LEAF]`. A write to a position without a leaf takes
//! the next one from the slab; nothing is moved or copied after construction, and
//! nothing is hashed. The slab is a list of 2 MiB chunks (`pool`): a helper thread
//! allocates and first-touches the next chunk ahead of need (`pretouch`), so the
//! kernel's zeroing of fresh memory happens off the simulation's thread.
//!
//! Why two levels: a trace that touches pages uniformly over a large footprint sets a
//! small fraction of the entries but dirties every 4 KiB (and 2 MiB) page of a flat
//! table. The MQSim comparison run (issue #14: 1 M requests over the first 200 GiB of a
//! 476 GiB logical space, 8 KiB pages) sets 3.36 M of the 26.2 M entries of its
//! footprint; a flat table made 100 MiB of it resident, the two-level one makes the
//! directory (12.5 MiB) and 1.09 M leaves (33.2 MiB) resident. Resident bytes by leaf
//! size for that trace (directory + leaves): 2 entries 66.1 MiB, 4: 47.2, **8: 45.7**,
//! 16: 57.1, 32: 76.4, 64: 93.7 MiB — 8 entries (32 bytes, half a cache line, never split
//! across lines) is the minimum.
//!
//! Why flat once dense: where (nearly) every entry is set, as in preconditioning, the
//! directory is pure overhead — an eighth more memory and a second dependent cache miss
//! per random access (preconditioning 256 GiB ran 19 % more CPU time with two levels).
//! So the two-level table counts the 4 KiB pages a flat table would have made resident
//! and, at 16 Ki leaves in use and at every doubling after, switches (once, copying the
//! leaves) to a flat table when that would be smaller: when the leaves (32 bytes each)
//! plus the directory's share of those pages (512 bytes each) exceed 4 KiB per page,
//! i.e. more than 112 of the 128 leaf positions of the average touched page have a leaf.
//! The layout never changes a result, only memory and speed. Measurements:
//! docs/performance.md.
//!
//! Why mappings and not `Vec`s: the operating system hands out their pages zeroed and
//! only when first written, so an empty map costs no memory and no `memset` (zero means
//! "no leaf" and "unmapped" here, hence the `ppa + 1` encoding); the directory is sized
//! for the whole logical space and only its touched pages become resident, the slab's
//! chunks are allocated as leaves are handed out (plus one made ahead). On Linux all
//! tables are advised for transparent huge pages: every access of the map is at a random
//! place and huge pages remove most of the TLB walks (preconditioning a 256 GiB device:
//! docs/performance.md). Where the system refuses a mapping, an ordinary zeroed
//! allocation takes its place (the allocator's large zeroed allocations are lazily
//! backed too).

mod pool;

use pool::LeafPool;
use std::fmt;

/// Bytes per entry.
const ENTRY: usize = 4;
/// log2 of the entries per leaf.
const LEAF_SHIFT: u32 = 3;
/// Entries per leaf (see the module docs for why 8).
pub(crate) const LEAF: u64 = 1 << LEAF_SHIFT;
/// Bytes of the memory pages counted by [`LpnMap::touched_bytes`].
const PAGE: usize = 4096;
/// Leaf positions per 4 KiB page of a flat table.
const FLAT_PAGE_POSITIONS: usize = PAGE / ENTRY / LEAF as usize;
/// Leaves in use at which the two-level table first asks whether a flat one would be
/// smaller (then at every doubling): 16 Ki leaves = 512 KiB of slab.
const FIRST_DENSITY_CHECK: u32 = 1 << 14;

/// A zero-initialised table of `len` 32-bit entries (see the module docs).
pub(crate) struct LpnMap {
    layout: Layout,
    len: u64,
}

/// The two layouts: two levels while the set entries are sparse, one flat table once
/// they are dense (the switch is one-way).
enum Layout {
    Tree(Tree),
    Flat(Table),
}

/// The two-level layout.
struct Tree {
    /// Slab index of each leaf position's leaf, 0 = none.
    dir: Table,
    /// The leaves, `LEAF` entries each; leaf 0 is the all-zero leaf of absent positions.
    slab: LeafPool,
    /// Leaves handed out, counting leaf 0 (the next leaf to hand out).
    leaves: u32,
    /// One bit per 4 KiB page a flat table would have (`FLAT_PAGE_POSITIONS` leaf
    /// positions each): set once one of its positions has a leaf.
    flat_page_seen: Vec<u64>,
    /// Bits set in `flat_page_seen`: the pages a flat table would have made resident.
    flat_pages: u64,
    /// Leaves in use at which the density is checked next.
    next_check: u32,
}

/// A zeroed array of `u32` in a mapping, or in an ordinary allocation where the system
/// refuses a mapping.
enum Table {
    /// The mapping and the table's length in bytes (the mapping may be longer: see
    /// [`Table::zeroed`]).
    Mapped(memmap2::MmapMut, usize),
    Heap(Vec<u8>),
}

/// Bytes of a transparent huge page (x86-64, and the usual size elsewhere).
const HUGE_PAGE: usize = 2 << 20;

impl Table {
    /// `n` zero entries, mapped exactly (entry accesses past `n` panic).
    fn zeroed(n: usize) -> Table {
        Table::mapped(n, false)
    }

    /// `n` zero entries for a table whose every access is range-checked by its owner
    /// (the directory): from a huge page on, mapped in whole huge pages.
    ///
    /// Linux starts an anonymous mapping on a huge-page boundary only when its length is
    /// a multiple of the huge-page size, and a table that starts elsewhere keeps its
    /// first and last partial 2 MiB in 4 KiB pages. There a lookup of an entry never written maps the
    /// kernel's shared zero page, and the first write to that page then copies it and
    /// flushes the TLB of every core running the process: an inter-processor interrupt
    /// that costs the writer about 25 µs on this project's VMs. The MQSim comparison
    /// run took about 250 of them in its directory's first 1 MiB (docs/performance.md,
    /// sixteenth session). The mapping's tail past the table is never touched (entry
    /// accesses there do not panic: hence the owner's range checks).
    fn zeroed_huge(n: usize) -> Table {
        Table::mapped(n, true)
    }

    /// [`Table::zeroed`], or with `whole_huge_pages` [`Table::zeroed_huge`].
    fn mapped(n: usize, whole_huge_pages: bool) -> Table {
        let bytes = n.checked_mul(ENTRY).expect("forward map size overflows usize");
        let mapped = if whole_huge_pages && bytes >= HUGE_PAGE {
            bytes.next_multiple_of(HUGE_PAGE)
        } else {
            bytes.max(1)
        };
        match memmap2::MmapMut::map_anon(mapped) {
            Ok(m) => {
                // Advice only: a kernel without transparent huge pages ignores or refuses
                // it, and the table works the same.
                #[cfg(target_os = "linux")]
                let _ = m.advise(memmap2::Advice::HugePage);
                Table::Mapped(m, bytes)
            }
            Err(_) => Table::Heap(vec![0; bytes]),
        }
    }

    /// `n` zero entries, every 4 KiB page of them written once, so that the kernel's
    /// first-touch zeroing has happened (on the calling thread).
    fn touched(n: usize) -> Table {
        let mut t = Table::zeroed(n);
        for page in t.bytes_mut().chunks_mut(PAGE) {
            // An opaque zero: the compiler may drop a store of a known zero into memory
            // it knows to be zeroed (a `calloc`ed fallback).
            page[0] = std::hint::black_box(0);
        }
        t
    }

    /// The table's bytes.
    #[inline]
    fn bytes(&self) -> &[u8] {
        match self {
            Table::Mapped(m, len) => &m[..*len],
            Table::Heap(v) => v,
        }
    }

    #[inline]
    fn bytes_mut(&mut self) -> &mut [u8] {
        match self {
            Table::Mapped(m, len) => &mut m[..*len],
            Table::Heap(v) => v,
        }
    }

    /// The table's bytes and, for a mapping in whole huge pages, its zero tail (see
    /// [`Table::zeroed_huge`]): what entry accesses index, to spare them the cut to the
    /// table's length. For an exact mapping the slice's bounds are the table's.
    #[inline(always)]
    fn all(&self) -> &[u8] {
        match self {
            Table::Mapped(m, _) => m,
            Table::Heap(v) => v,
        }
    }

    #[inline(always)]
    fn all_mut(&mut self) -> &mut [u8] {
        match self {
            Table::Mapped(m, _) => m,
            Table::Heap(v) => v,
        }
    }

    /// Entry `i`. Indexing whole 4-byte chunks costs one bounds check.
    #[inline]
    fn get(&self, i: usize) -> u32 {
        u32::from_ne_bytes(self.all().as_chunks::<ENTRY>().0[i])
    }

    #[inline]
    fn set(&mut self, i: usize, v: u32) {
        self.all_mut().as_chunks_mut::<ENTRY>().0[i] = v.to_ne_bytes();
    }

    /// Start loading entry `i`'s cache line (a hint; panics when `i` is out of range).
    #[inline]
    fn prefetch(&self, i: usize) {
        lamina_hint::prefetch(&self.all().as_chunks::<ENTRY>().0[i]);
    }

    /// Bytes in 4 KiB pages that hold a nonzero byte (a scan of the whole table).
    fn nonzero_page_bytes(&self) -> usize {
        self.bytes().chunks(PAGE).filter(|p| p.iter().any(|&b| b != 0)).count() * PAGE
    }

    /// A copy of `n` entries that writes (makes resident) only the 4 KiB pages holding a
    /// nonzero byte.
    fn copy_nonzero_pages(&self, n: usize) -> Table {
        let whole_huge_pages = matches!(self, Table::Mapped(m, len) if m.len() > (*len).max(1));
        let mut c = Table::mapped(n, whole_huge_pages);
        for (to, from) in c.bytes_mut().chunks_mut(PAGE).zip(self.bytes().chunks(PAGE)) {
            if from.iter().any(|&b| b != 0) {
                to.copy_from_slice(from);
            }
        }
        c
    }

    fn kind(&self) -> &'static str {
        match self {
            Table::Mapped(..) => "mapped",
            Table::Heap(_) => "heap",
        }
    }
}

impl Tree {
    fn new(len: u64, first_check: u32) -> Tree {
        let positions = len.div_ceil(LEAF);
        // Leaf indices are `u32`, and leaf 0 is the zero leaf.
        let slab_leaves = positions + 1;
        assert!(slab_leaves <= u32::MAX as u64, "forward map of {len} entries exceeds 2^32 leaves");
        let flat_pages = (positions as usize).div_ceil(FLAT_PAGE_POSITIONS);
        Tree {
            dir: Table::zeroed_huge(positions as usize),
            slab: LeafPool::new(slab_leaves),
            leaves: 1,
            flat_page_seen: vec![0; flat_pages.div_ceil(64)],
            flat_pages: 0,
            next_check: first_check,
        }
    }

    #[inline(always)]
    fn get(&self, i: u64) -> u32 {
        let leaf = self.dir.get((i >> LEAF_SHIFT) as usize) as usize;
        self.slab.get(leaf, (i & (LEAF - 1)) as usize)
    }

    /// Set entry `i` to `v`; true when the table has just become dense enough that a
    /// flat one would be smaller.
    #[inline(always)]
    fn set(&mut self, i: u64, v: u32) -> bool {
        let pos = (i >> LEAF_SHIFT) as usize;
        let mut leaf = self.dir.get(pos);
        let mut dense = false;
        if leaf == 0 {
            if v == 0 {
                // Already zero, and a zero needs no leaf.
                return false;
            }
            (leaf, dense) = self.new_leaf(pos);
        }
        self.slab.set(leaf as usize, (i & (LEAF - 1)) as usize, v);
        dense
    }

    /// Hand out the next leaf of the slab to leaf position `pos`; also answers whether
    /// the table is now dense (see `is_dense`).
    #[cold]
    #[inline(never)]
    fn new_leaf(&mut self, pos: usize) -> (u32, bool) {
        let leaf = self.leaves;
        // The slab has a leaf for every position, and each position takes one at most.
        self.leaves += 1;
        self.slab.reach(leaf);
        self.dir.set(pos, leaf);
        let page = pos / FLAT_PAGE_POSITIONS;
        let bit = 1u64 << (page % 64);
        if self.flat_page_seen[page / 64] & bit == 0 {
            self.flat_page_seen[page / 64] |= bit;
            self.flat_pages += 1;
        }
        let in_use = self.leaves - 1;
        if in_use < self.next_check {
            return (leaf, false);
        }
        self.next_check = self.next_check.saturating_mul(2);
        let dense = self.is_dense();
        if !dense {
            // Sparse at a check: this map will likely take many more leaves (a map that
            // turns flat, like preconditioning's, never starts a helper).
            self.slab.start_pretouch();
        }
        (leaf, dense)
    }

    /// Whether a flat table would hold these entries in fewer bytes: it makes resident
    /// 4 KiB per page holding a set entry (`flat_pages`), the two levels at least 32 bytes
    /// per leaf plus the directory's share of those pages (an eighth: 512 bytes each).
    /// That is: more than 112 of the 128 leaf positions of the average touched page
    /// have a leaf.
    fn is_dense(&self) -> bool {
        let leaf_bytes = (self.leaves as u64 - 1) * LEAF * ENTRY as u64;
        let flat_page = PAGE as u64;
        leaf_bytes + self.flat_pages * (flat_page / LEAF) > self.flat_pages * flat_page
    }

    /// The same entries in a flat table of `len` entries (it reads the whole directory
    /// and writes only the leaves' places).
    fn to_flat(&self, len: u64) -> Table {
        let mut flat = Table::zeroed(len as usize);
        let dir = self.dir.bytes().as_chunks::<ENTRY>().0;
        let out = flat.bytes_mut();
        let leaf_bytes = LEAF as usize * ENTRY;
        for (pos, d) in dir.iter().enumerate() {
            let leaf = u32::from_ne_bytes(*d) as usize;
            if leaf != 0 {
                let at = pos * leaf_bytes;
                // The last leaf may reach past `len`.
                let n = leaf_bytes.min(out.len() - at);
                out[at..at + n].copy_from_slice(&self.slab.leaf_bytes(leaf)[..n]);
            }
        }
        flat
    }

    /// Bytes of the 4 KiB pages of the slab's leaves handed out so far, the zero leaf
    /// included.
    fn used_slab_page_bytes(&self) -> usize {
        self.slab.used_page_bytes(self.leaves)
    }
}

impl Clone for Tree {
    /// A deep copy that makes resident no more than the original: the directory page by
    /// page, skipping pages without a leaf; the slab up to its last leaf.
    fn clone(&self) -> Tree {
        let positions = self.dir.bytes().len() / ENTRY;
        Tree {
            dir: self.dir.copy_nonzero_pages(positions),
            slab: self.slab.clone_used(self.leaves),
            leaves: self.leaves,
            flat_page_seen: self.flat_page_seen.clone(),
            flat_pages: self.flat_pages,
            next_check: self.next_check,
        }
    }
}

impl LpnMap {
    /// A table of `len` zero entries.
    pub(crate) fn zeroed(len: u64) -> LpnMap {
        LpnMap::with_first_check(len, FIRST_DENSITY_CHECK)
    }

    /// A table of `len` zero entries whose density is first checked at `first_check`
    /// leaves in use (tests use small values to reach the flat layout).
    fn with_first_check(len: u64, first_check: u32) -> LpnMap {
        LpnMap { layout: Layout::Tree(Tree::new(len, first_check)), len }
    }

    /// Entry `i` (panics when `i` is out of range).
    ///
    /// The flat layout's access is inlined, the two-level one's is a call: kept small,
    /// `get` and `set` inline into the GC's page loops (with both layouts inlined they
    /// did not, and preconditioning ran 7 % more instructions).
    #[inline(always)]
    pub(crate) fn get(&self, i: u64) -> u32 {
        match &self.layout {
            // A flat table has exactly `len` entries: its bounds check is the range check.
            Layout::Flat(f) => f.get(i as usize),
            Layout::Tree(t) => self.tree_get(t, i),
        }
    }

    /// Entries `idx[k]` into `out[k]` (as [`LpnMap::get`] each; panics when an index is out
    /// of range), the two-level layout level by level: every directory entry first, then
    /// every leaf entry, so the cache misses of one level are independent loads that
    /// overlap instead of pairs of dependent ones (a batch warming hint's access pattern).
    pub(crate) fn get_many(&self, idx: &[u64], out: &mut [u32]) {
        assert_eq!(idx.len(), out.len(), "get_many: index and output lengths differ");
        match &self.layout {
            Layout::Flat(f) => {
                for (o, &i) in out.iter_mut().zip(idx) {
                    *o = f.get(i as usize);
                }
            }
            Layout::Tree(t) => {
                for (o, &i) in out.iter_mut().zip(idx) {
                    if i >= self.len {
                        out_of_range(i, self.len);
                    }
                    *o = t.dir.get((i >> LEAF_SHIFT) as usize);
                }
                for (o, &i) in out.iter_mut().zip(idx) {
                    *o = t.slab.get(*o as usize, (i & (LEAF - 1)) as usize);
                }
            }
        }
    }

    /// Speed hint, the first of two stages: start loading the first level of entry
    /// `i`'s lookup (the directory entry; a flat table's entry itself) without waiting
    /// for it. Out-of-range indices are ignored.
    #[inline]
    pub(crate) fn prefetch_first(&self, i: u64) {
        if i >= self.len {
            return;
        }
        match &self.layout {
            Layout::Flat(f) => f.prefetch(i as usize),
            Layout::Tree(t) => t.dir.prefetch((i >> LEAF_SHIFT) as usize),
        }
    }

    /// Speed hint, the second stage: read entry `i`'s directory entry (loaded by
    /// [`LpnMap::prefetch_first`] a while before, so a hit) and start loading its leaf
    /// entry without waiting for it; nothing for a flat table. Out-of-range indices are
    /// ignored.
    #[inline]
    pub(crate) fn prefetch_second(&self, i: u64) {
        if i >= self.len {
            return;
        }
        if let Layout::Tree(t) = &self.layout {
            let leaf = t.dir.get((i >> LEAF_SHIFT) as usize) as usize;
            t.slab.prefetch(leaf, (i & (LEAF - 1)) as usize);
        }
    }

    #[inline(never)]
    fn tree_get(&self, t: &Tree, i: u64) -> u32 {
        if i >= self.len {
            out_of_range(i, self.len);
        }
        t.get(i)
    }

    /// Set entry `i` to `v` (panics when `i` is out of range).
    #[inline(always)]
    pub(crate) fn set(&mut self, i: u64, v: u32) {
        match &mut self.layout {
            Layout::Flat(f) => f.set(i as usize, v),
            Layout::Tree(_) => self.tree_set(i, v),
        }
    }

    #[inline(never)]
    fn tree_set(&mut self, i: u64, v: u32) {
        if i >= self.len {
            out_of_range(i, self.len);
        }
        if let Layout::Tree(t) = &mut self.layout
            && t.set(i, v)
        {
            self.flatten();
        }
    }

    /// Switch to the flat layout (the tree's mappings are returned to the system).
    #[cold]
    #[inline(never)]
    fn flatten(&mut self) {
        if let Layout::Tree(t) = &self.layout {
            self.layout = Layout::Flat(t.to_flat(self.len));
        }
    }

    /// Bytes of the table in 4 KiB pages that a write has touched — what a run has made
    /// resident, near enough. Two levels: the directory's pages that name a leaf plus the
    /// slab's used prefix; flat: the pages holding a nonzero entry. It scans the
    /// directory or the flat table: for memory reports, not hot paths.
    pub(crate) fn touched_bytes(&self) -> usize {
        match &self.layout {
            Layout::Tree(t) if t.leaves == 1 => 0,
            Layout::Tree(t) => t.dir.nonzero_page_bytes() + t.used_slab_page_bytes(),
            Layout::Flat(f) => f.nonzero_page_bytes(),
        }
    }

    /// Leaves handed out besides the zero leaf; `None` once flat.
    #[cfg(test)]
    fn leaves_in_use(&self) -> Option<u32> {
        match &self.layout {
            Layout::Tree(t) => Some(t.leaves - 1),
            Layout::Flat(_) => None,
        }
    }
}

/// The panic of an access past the end, out of line: it keeps `get` and `set` small
/// enough to inline.
#[cold]
#[inline(never)]
#[track_caller]
fn out_of_range(i: u64, len: u64) -> ! {
    panic!("forward map entry {i} out of range (length {len})")
}

impl Clone for LpnMap {
    /// A deep copy that makes resident no more than the original.
    fn clone(&self) -> LpnMap {
        let layout = match &self.layout {
            Layout::Tree(t) => Layout::Tree(t.clone()),
            Layout::Flat(f) => Layout::Flat(f.copy_nonzero_pages(self.len as usize)),
        };
        LpnMap { layout, len: self.len }
    }
}

impl fmt::Debug for LpnMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.layout {
            Layout::Tree(t) => {
                let kind = if t.dir.kind() == t.slab.kind() { t.dir.kind() } else { "mixed" };
                write!(f, "LpnMap({} entries, two levels, {} leaves, {kind})", self.len, t.leaves - 1)
            }
            Layout::Flat(t) => write!(f, "LpnMap({} entries, flat, {})", self.len, t.kind()),
        }
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
        assert_eq!(m.leaves_in_use(), Some(2));
        assert_eq!(m.touched_bytes(), 3 * 4096);
        assert_eq!(c.touched_bytes(), 3 * 4096);
    }

    #[test]
    fn leaf_boundaries_separate_neighbours() {
        let mut m = LpnMap::zeroed(4 * LEAF);
        // The last entry of leaf 0 and the first of leaf 1, in the opposite order.
        m.set(LEAF, 11);
        m.set(LEAF - 1, 10);
        assert_eq!(m.leaves_in_use(), Some(2));
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
        assert_eq!(m.leaves_in_use(), Some(2));
        assert_eq!((m.get(0), m.get(2 * LEAF - 1), m.get(2 * LEAF)), (1, 2, 0));
    }

    #[test]
    fn the_last_entry_of_a_partial_leaf_is_usable() {
        for len in [1, LEAF - 1, LEAF + 1, 5 * LEAF + 3] {
            let mut m = LpnMap::zeroed(len);
            m.set(len - 1, 42);
            assert_eq!(m.get(len - 1), 42, "len {len}");
            assert_eq!(m.leaves_in_use(), Some(1));
        }
    }

    #[test]
    fn writing_zero_where_nothing_was_written_takes_no_leaf() {
        let mut m = LpnMap::zeroed(100);
        m.set(50, 0);
        assert_eq!((m.leaves_in_use(), m.touched_bytes()), (Some(0), 0));
        m.set(50, 3);
        m.set(50, 0);
        assert_eq!((m.get(50), m.leaves_in_use()), (0, Some(1)));
    }

    #[test]
    fn every_entry_set_uses_every_leaf() {
        let len = 10 * LEAF + 5;
        let mut m = LpnMap::zeroed(len);
        for i in (0..len).rev() {
            m.set(i, i as u32 + 1);
        }
        assert_eq!(m.leaves_in_use(), Some(len.div_ceil(LEAF) as u32));
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
        assert_eq!((m.leaves_in_use(), c.leaves_in_use()), (Some(2), Some(2)));
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
    #[should_panic]
    fn out_of_range_panics_once_flat() {
        let mut m = LpnMap::with_first_check(LEAF * 200 + 3, 1);
        (0..m.len).for_each(|i| m.set(i, 1));
        assert_eq!(m.leaves_in_use(), None);
        m.get(m.len);
    }

    /// Tables of 2 MiB or more whose length is not a multiple of 2 MiB: the directory
    /// is mapped in whole huge pages (its tail past the table reads zero), so its range
    /// checks are the map's own; a flat table is mapped exactly, so its slice bounds are.
    #[test]
    fn large_maps_check_their_range() {
        let len = (HUGE_PAGE / ENTRY) as u64 * LEAF + 12_345;
        let m = LpnMap::zeroed(len);
        assert!(matches!(&m.layout, Layout::Tree(t) if t.dir.all().len() > t.dir.bytes().len()));
        let get = |m: &LpnMap, i: u64| std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| m.get(i)));
        assert!(get(&m, len).is_err() && get(&m, len + LEAF * 1000).is_err());
        let flat_len = (HUGE_PAGE / ENTRY) as u64 + 1_000;
        let mut f = LpnMap::with_first_check(flat_len, 1);
        (0..flat_len).for_each(|i| f.set(i, 1));
        assert!(matches!(&f.layout, Layout::Flat(t) if t.all().len() == t.bytes().len()));
        assert_eq!(f.get(flat_len - 1), 1);
        assert!(get(&f, flat_len).is_err());
        assert!(std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f.set(flat_len, 1))).is_err());
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
        assert_eq!(m.leaves_in_use(), Some(leaves_per_page as u32 - 1));
        assert_eq!(m.touched_bytes(), 3 * PAGE);
        m.set((leaves_per_page - 1) * LEAF, 1);
        assert_eq!(m.touched_bytes(), 4 * PAGE);
    }

    #[test]
    fn a_dense_map_turns_flat_and_keeps_its_entries() {
        // 64 flat pages' worth of entries, written in order: at the first check (1,024
        // leaves = 8 full flat pages) a flat table is smaller.
        let len = 64 * (PAGE / ENTRY) as u64;
        let mut m = LpnMap::with_first_check(len, 1024);
        for i in 0..len {
            m.set(i, i as u32 + 1);
            if i + 1 == 1023 * LEAF {
                assert_eq!(m.leaves_in_use(), Some(1023), "not yet checked");
            }
        }
        assert_eq!(m.leaves_in_use(), None);
        assert!((0..len).all(|i| m.get(i) == i as u32 + 1));
        assert_eq!(m.touched_bytes(), 64 * PAGE);
        // Flat: zeroes are stored, the clone is independent and as resident.
        let mut c = m.clone();
        c.set(7, 0);
        m.set(8, 5);
        assert_eq!((m.get(7), m.get(8), c.get(7), c.get(8)), (8, 5, 0, 9));
        assert_eq!(c.touched_bytes(), 64 * PAGE);
        assert!(format!("{c:?}").contains("flat"));
    }

    #[test]
    fn a_sparse_map_stays_two_level() {
        // One entry in every 64th leaf position: each set fills a new flat page's worth
        // sparsely, so the flat table would be far larger at every check.
        let len = 1 << 20;
        let mut m = LpnMap::with_first_check(len, 16);
        for k in 0..len / (64 * LEAF) {
            m.set(k * 64 * LEAF, 1);
        }
        assert_eq!(m.leaves_in_use(), Some((len / (64 * LEAF)) as u32));
        assert!(format!("{m:?}").contains("two levels"));
    }

    #[test]
    fn the_density_rule_is_the_resident_bytes_comparison() {
        // Leaves in the first `n` of the 128 leaf positions of one flat page, checked at
        // the `n`-th: 112 × 32 + 512 = 4,096 bytes is not more than the flat page, 113 is.
        for (n, flat) in [(112, false), (113, true)] {
            let mut m = LpnMap::with_first_check(128 * LEAF, n as u32);
            (0..n).for_each(|k| m.set(k * LEAF, 1));
            assert_eq!(m.leaves_in_use().is_none(), flat, "{n} leaves");
            assert!((0..128 * LEAF).all(|i| m.get(i) == (i % LEAF == 0 && i < n * LEAF) as u32));
        }
    }

    #[test]
    fn a_large_sparse_map_takes_chunks_ahead_and_keeps_its_entries() {
        // Half the leaf positions of a 4 Mi-entry map, one entry each, in a scrambled
        // order: 256 Ki leaves over four 2 MiB chunks, sparse enough to stay two-level,
        // so the helper thread starts at the first check and hands over chunks.
        let len = 4u64 << 20;
        let positions = len / LEAF;
        let mut m = LpnMap::zeroed(len);
        let at = |k: u64| (k * 2 * 40_503 % positions) * LEAF + k % LEAF;
        for k in 0..positions / 2 {
            m.set(at(k), k as u32 + 1);
        }
        assert_eq!(m.leaves_in_use(), Some((positions / 2) as u32));
        let c = m.clone();
        for k in 0..positions / 2 {
            assert_eq!((m.get(at(k)), c.get(at(k))), (k as u32 + 1, k as u32 + 1), "write {k}");
            assert_eq!(m.get(at(k) ^ 1), 0);
        }
        assert!(format!("{m:?}").contains("two levels"));
        // Directory: every page; slab: four full chunks (leaf 0 counted, the last leaf
        // is the first of a fifth chunk).
        assert_eq!(m.touched_bytes(), (positions as usize * ENTRY) + 4 * (2 << 20) + PAGE);
        assert_eq!(c.touched_bytes(), m.touched_bytes());
    }

    proptest! {
        /// Runs of writes and reads against a `Vec` model, with a clone taken midway that
        /// must keep the state of that moment. Some cases first fill part or all of the
        /// table in order with density checks from the first leaf on (`first_check` 1,
        /// lengths of whole flat pages), so that they turn flat before or during the runs.
        #[test]
        fn behaves_like_a_vec(
            len in prop_oneof![1u64..3000, (0u32..3).prop_map(|k| 1024u64 << k)],
            first_check in prop_oneof![Just(1u32), 1u32..200],
            fill_percent in prop_oneof![Just(100u64), 0u64..=100],
            ops in prop::collection::vec((any::<prop::sample::Index>(), 1u64..200, 0u32..4), 1..100),
            clone_at in any::<prop::sample::Index>(),
        ) {
            let mut m = LpnMap::with_first_check(len, first_check);
            let mut model = vec![0u32; len as usize];
            for i in 0..len * fill_percent / 100 {
                m.set(i, i as u32 + 1);
                model[i as usize] = i as u32 + 1;
            }
            let clone_at = clone_at.index(ops.len());
            let mut snapshot = None;
            for (k, (at, run, v)) in ops.iter().enumerate() {
                if k == clone_at {
                    snapshot = Some((m.clone(), model.clone()));
                }
                let from = at.index(len as usize) as u64;
                // Values 0..4 (3 = u32::MAX) plus the entry's parity: zeroes (unmapping)
                // are frequent, as are repeated writes.
                let v = if *v == 3 { u32::MAX } else { *v };
                for i in from..(from + run).min(len) {
                    let v = v.wrapping_add(i as u32 & 1);
                    m.set(i, v);
                    model[i as usize] = v;
                    prop_assert_eq!(m.get(i), v);
                }
            }
            for (i, &want) in model.iter().enumerate() {
                prop_assert_eq!(m.get(i as u64), want);
            }
            // The prefetch hints accept every index, in range or not, in either layout,
            // and change nothing.
            for i in (0..len + 3).chain([u64::MAX]) {
                m.prefetch_first(i);
                m.prefetch_second(i);
            }
            for (i, &want) in model.iter().enumerate() {
                prop_assert_eq!(m.get(i as u64), want);
            }
            // The batch read agrees, in any order and with repeats (both layouts).
            let idx: Vec<u64> = (0..len).rev().chain((0..len).step_by(7)).collect();
            let mut got = vec![u32::MAX - 7; idx.len()];
            m.get_many(&idx, &mut got);
            for (&i, &g) in idx.iter().zip(&got) {
                prop_assert_eq!(g, model[i as usize]);
            }
            let (c, cm) = snapshot.expect("clone_at < ops.len()");
            for (i, &want) in cm.iter().enumerate() {
                prop_assert_eq!(c.get(i as u64), want);
            }
            if let Some(leaves) = m.leaves_in_use() {
                // At most one leaf per position.
                prop_assert!(leaves as u64 <= len.div_ceil(LEAF));
            }
        }
    }
}
