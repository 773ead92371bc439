//! [`PerBlock`]: one record per block of a device, each plane's records a cache line
//! apart from the next plane's.
//!
//! Blocks are numbered plane by plane (`plane × blocks_per_plane + index`), and a table
//! indexed by that number puts the records of two planes' `k`-th blocks
//! `blocks_per_plane` records apart: for 2,048 blocks per plane and 32-byte records, 64 KiB,
//! a power of two. Caches pick a line's set from the low bits of its address, so records
//! a power-of-two stride apart share a set. Under a uniform workload every plane opens its
//! blocks in the same order (each plane's free list starts at its block 0), so the write
//! frontiers of all planes sit at the same index `k`, and their records — read and
//! written on every page program — fall into one set of an 8-way first-level cache and
//! into two sets of a 1 MiB 8-way second-level one: the 128 frontier records of MQSim's
//! default device evicted each other and were fetched from the third level on almost
//! every program (callgrind's cache model; docs/performance.md, "Round of 2026-11-30
//! (ninth session)").
//!
//! So each plane's records start [`PerBlock::pad`] records (at least one cache line)
//! after the previous plane's end, when the blocks per plane are a power of two: plane
//! `p`'s `k`-th record moves `p` lines further than the flat table has it, and the
//! frontiers of consecutive planes land in consecutive sets. Finding a record is one
//! shift, one multiply-add by a constant and the vector's bounds check (an out-of-range
//! block maps past the end). Without a power of two the stride is not a power of two
//! either, and nothing is padded. The padding is invisible: records are reached only
//! through their block number, and [`PerBlock::iter`] skips it.

use std::ops::{Index, IndexMut};

use crate::Geometry;

/// One `T` per block of a geometry, indexed by flat block number (as
/// [`crate::BlockId`]'s `.0`), each plane's records padded apart (see the module docs).
#[derive(Clone, Debug)]
pub struct PerBlock<T> {
    /// The records, plane by plane, each plane followed by `pad` unused ones.
    items: Vec<T>,
    /// `log2` of blocks per plane when a power of two, else 63 (no padding).
    shift: u32,
    /// Records of a plane plus its padding.
    stride: usize,
    /// Records of a plane without its padding.
    blocks_per_plane: usize,
    /// Blocks (records in use).
    blocks: usize,
}

impl<T> PerBlock<T> {
    /// Records per plane of padding: the fewest that make a cache line (64 bytes).
    pub const fn pad() -> usize {
        let size = std::mem::size_of::<T>();
        if size == 0 { 0 } else { 64_usize.div_ceil(size) }
    }

    /// One record per block of `geo`, each made by `make` (padding too).
    pub fn new(geo: &Geometry, make: impl FnMut() -> T) -> PerBlock<T> {
        PerBlock::with_shape(geo.blocks_per_plane() as usize, geo.total_planes() as usize, make)
    }

    /// `planes` planes of `blocks_per_plane` blocks each.
    pub fn with_shape(blocks_per_plane: usize, planes: usize, make: impl FnMut() -> T) -> PerBlock<T> {
        PerBlock::shaped(blocks_per_plane, planes, |n| {
            let mut items = Vec::with_capacity(n);
            items.resize_with(n, make);
            items
        })
    }

    /// One all-zero record per block of `geo` (padding too), in a zeroed allocation:
    /// nothing is written, so the operating system backs each page of records only when
    /// a record on it is first touched. A device's records are 10–20 MB, of which a
    /// replay reaches a few percent; writing them whole cost the simulation's thread
    /// ~8 ms of page faults before the first request (docs/performance.md, "Round of
    /// 2026-11-30 (twelfth session)").
    pub fn zeroed(geo: &Geometry) -> PerBlock<T>
    where
        T: zerocopy::FromZeros,
    {
        PerBlock::zeroed_with_shape(geo.blocks_per_plane() as usize, geo.total_planes() as usize)
    }

    /// [`PerBlock::zeroed`] for `planes` planes of `blocks_per_plane` blocks each.
    pub fn zeroed_with_shape(blocks_per_plane: usize, planes: usize) -> PerBlock<T>
    where
        T: zerocopy::FromZeros,
    {
        PerBlock::shaped(blocks_per_plane, planes, |n| {
            // Out of memory ends the process as a `Vec`'s allocation does.
            T::new_vec_zeroed(n).unwrap_or_else(|_| {
                std::alloc::handle_alloc_error(
                    std::alloc::Layout::array::<T>(n).unwrap_or(std::alloc::Layout::new::<T>()),
                )
            })
        })
    }

    /// The table around `alloc(n)`, `n` the records needed (padding included).
    fn shaped(blocks_per_plane: usize, planes: usize, alloc: impl FnOnce(usize) -> Vec<T>) -> PerBlock<T> {
        let padded = blocks_per_plane.is_power_of_two();
        let stride = if padded { blocks_per_plane + Self::pad() } else { blocks_per_plane };
        let items = alloc(stride * planes);
        PerBlock {
            items,
            shift: if padded { blocks_per_plane.trailing_zeros() } else { 63 },
            stride,
            blocks_per_plane,
            blocks: blocks_per_plane * planes,
        }
    }

    /// Where block `b`'s record is stored: past the end for a block out of range.
    #[inline(always)]
    fn slot(&self, b: usize) -> usize {
        b + (b >> self.shift) * Self::pad()
    }

    /// The record of block `b`, or `None` when there is no such block.
    #[inline]
    pub fn get(&self, b: usize) -> Option<&T> {
        if b < self.blocks { self.items.get(self.slot(b)) } else { None }
    }

    /// Number of blocks.
    #[inline]
    pub fn len(&self) -> usize {
        self.blocks
    }

    /// True when the geometry has no blocks.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.blocks == 0
    }

    /// The memory pages of `page_bytes` bytes (a power of two) that block `b`'s record
    /// lies on: the first and the last, counted from the page holding the storage's
    /// start (panics when there is no such block).
    #[inline]
    pub fn page_span(&self, b: usize, page_bytes: usize) -> (usize, usize) {
        assert!(b < self.blocks, "block {b} of {}", self.blocks);
        let shift = page_bytes.trailing_zeros();
        let base = self.items.as_ptr() as usize >> shift;
        let first = &self.items[self.slot(b)] as *const T as usize;
        let last = first + std::mem::size_of::<T>().max(1) - 1;
        ((first >> shift) - base, (last >> shift) - base)
    }

    /// How many memory pages of `page_bytes` bytes (a power of two) the storage spans.
    pub fn pages(&self, page_bytes: usize) -> usize {
        let shift = page_bytes.trailing_zeros();
        let start = self.items.as_ptr() as usize;
        let end = start + (self.items.len() * std::mem::size_of::<T>()).max(1) - 1;
        (end >> shift) - (start >> shift) + 1
    }

    /// Bytes of the records' storage, padding included (for memory reports).
    pub fn heap_bytes(&self) -> usize {
        self.items.capacity() * std::mem::size_of::<T>()
    }

    /// Every record, in block order.
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.items.chunks(self.stride.max(1)).flat_map(|plane| &plane[..self.blocks_per_plane])
    }
}

impl<T> Index<usize> for PerBlock<T> {
    type Output = T;

    /// The record of block `b` (panics when there is no such block).
    #[inline(always)]
    fn index(&self, b: usize) -> &T {
        &self.items[self.slot(b)]
    }
}

impl<T> IndexMut<usize> for PerBlock<T> {
    /// The record of block `b` (panics when there is no such block).
    #[inline(always)]
    fn index_mut(&mut self, b: usize) -> &mut T {
        let s = self.slot(b);
        &mut self.items[s]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHAPES: [(usize, usize); 7] = [(4, 2), (2048, 128), (3, 5), (8, 3), (1, 1), (5, 4), (64, 1)];

    /// Every block has its own slot, inside the table; the next number past the last
    /// block is outside it (so indexing it panics).
    #[test]
    fn slots_are_distinct_and_blocks_past_the_end_are_out_of_range() {
        for (bpp, planes) in SHAPES {
            let t = PerBlock::with_shape(bpp, planes, || 0u32);
            let mut seen = vec![false; t.items.len()];
            for b in 0..bpp * planes {
                let s = t.slot(b);
                assert!(!seen[s], "slot {s} twice ({bpp} x {planes})");
                seen[s] = true;
            }
            assert!(t.slot(bpp * planes) >= t.items.len(), "{bpp} x {planes}");
            assert_eq!(t.get(bpp * planes), None);
            assert!(std::panic::catch_unwind(|| t[bpp * planes]).is_err());
        }
    }

    /// Records are kept per block through writes and reads, and iterate in block order.
    #[test]
    fn records_follow_their_block() {
        for (bpp, planes) in SHAPES {
            let mut t = PerBlock::with_shape(bpp, planes, || 0usize);
            for b in 0..bpp * planes {
                t[b] = b * 10 + 1;
            }
            for b in 0..bpp * planes {
                assert_eq!(t[b], b * 10 + 1);
                assert_eq!(t.get(b), Some(&(b * 10 + 1)));
            }
            let all: Vec<usize> = t.iter().copied().collect();
            assert_eq!(all, (0..bpp * planes).map(|b| b * 10 + 1).collect::<Vec<_>>(), "{bpp} x {planes}");
            assert_eq!(t.len(), bpp * planes);
            assert!(t.heap_bytes() >= bpp * planes * std::mem::size_of::<usize>());
        }
    }

    /// A zeroed table has the layout of a built one, every record zero.
    #[test]
    fn zeroed_tables_match_built_ones() {
        for (bpp, planes) in SHAPES {
            let z = PerBlock::<u64>::zeroed_with_shape(bpp, planes);
            let built = PerBlock::with_shape(bpp, planes, || 0u64);
            assert_eq!(
                (z.items.len(), z.stride, z.shift, z.len()),
                (built.items.len(), built.stride, built.shift, built.len())
            );
            assert!(z.items.iter().all(|&r| r == 0), "{bpp} x {planes}");
            assert_eq!(z.iter().count(), bpp * planes);
        }
        let geo = crate::GeometryConfig {
            channels: 2,
            chips_per_channel: 2,
            dies_per_chip: 2,
            planes_per_die: 2,
            blocks_per_plane: 64,
            pages_per_block: 12,
            page_size_bytes: 4096,
            partial_read_bytes: None,
            cell_type: crate::CellType::Tlc,
            layers: 4,
            page_type_order: crate::PageTypeOrder::Interleaved,
        }
        .validate()
        .expect("a valid geometry");
        let z = PerBlock::<[u32; 3]>::zeroed(&geo);
        assert_eq!(z.len(), geo.total_blocks() as usize);
        assert_eq!(z[z.len() - 1], [0; 3]);
    }

    /// With a power of two blocks per plane, the `k`-th blocks of consecutive planes are
    /// one stride plus a line apart, so they fall into different cache sets.
    #[test]
    fn same_index_blocks_of_planes_are_in_different_sets() {
        #[derive(Clone, Copy)]
        #[allow(dead_code)]
        struct Rec([u8; 32]);
        let t = PerBlock::with_shape(2048, 128, || Rec([0; 32]));
        let base = t.items.as_ptr() as usize;
        let sets: std::collections::BTreeSet<usize> =
            (0..128).map(|p| (&t[p * 2048 + 7] as *const Rec as usize - base) / 64 % 64).collect();
        assert_eq!(sets.len(), 64, "128 frontier records spread over every set of a 64-set cache");
    }
}
