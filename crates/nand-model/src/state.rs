//! Flash physics state of blocks and pages, stored sparsely.
//!
//! A block that has only ever been erased whole is fully described by its write
//! pointer (pages are programmed strictly in order, so page `p` is programmed iff
//! `p < wp`) and its erase count: 8 bytes plus an index. Only after its first
//! partial-block erase does a block get an extended record with two page bitmaps
//! (programmed, region starts) and per-page partial-erase counts. Tags live in a
//! separate, lazily allocated per-block array, only when the device stores tags.

use crate::PerBlock;

/// "No extended record": extended records are numbered from 1, so that an all-zero
/// `BlockState` is a fresh block and the records can be allocated zeroed
/// ([`PerBlock::zeroed`]).
const NO_EXT: u32 = 0;

/// Compact per-block state (all zero: no page programmed, no erase counted, no extended
/// record).
#[derive(Clone, Copy, Debug, zerocopy::FromZeros)]
pub(crate) struct BlockState {
    /// Simple blocks: pages `0..wp` are programmed. Unused for extended blocks.
    wp: u32,
    /// Whole-block erases (block erase commands and erases of PB 1).
    erase_count: u32,
    /// 1 + index into the extended records, or `NO_EXT`.
    ext: u32,
}

/// Extended state of a block that has seen a partial erase.
#[derive(Clone, Debug)]
struct BlockExt {
    /// Bit p set: page p programmed.
    programmed: Vec<u64>,
    /// Bit p set: page p starts an erase region (the first page of the last PB erase
    /// that covered it). Within a region pages are programmed in order.
    starts: Vec<u64>,
    /// Partial erases that covered each page (whole-block erases are counted on the block).
    partial_erases: Vec<u32>,
}

#[inline]
fn bit(v: &[u64], p: u32) -> bool {
    v[(p / 64) as usize] >> (p % 64) & 1 == 1
}

#[inline]
fn set_bit(v: &mut [u64], p: u32, on: bool) {
    let w = &mut v[(p / 64) as usize];
    if on {
        *w |= 1 << (p % 64);
    } else {
        *w &= !(1 << (p % 64));
    }
}

/// Why a page cannot be programmed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ProgramCheck {
    /// The page may be programmed now.
    Ok,
    /// The page is already programmed.
    NotErased,
    /// An earlier page of its region is still erased; `expected` is the page that must
    /// be programmed first.
    OutOfOrder { expected: u32 },
}

/// All blocks of a device.
pub(crate) struct Blocks {
    ppb: u32,
    words: usize,
    blocks: PerBlock<BlockState>,
    ext: Vec<BlockExt>,
    /// One bit per 4 KiB page of `blocks`' storage: set once a record on it may have been
    /// written ([`Blocks::prepare`]). A clear bit means every record on the page is still
    /// all zero.
    written_pages: Vec<u64>,
}

/// Bytes of the memory pages `Blocks::written_pages` counts.
const MEM_PAGE: usize = 4096;

impl std::fmt::Debug for Blocks {
    /// The flash state (not `written_pages`, a note on memory).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Blocks")
            .field("ppb", &self.ppb)
            .field("words", &self.words)
            .field("blocks", &self.blocks)
            .field("ext", &self.ext)
            .finish_non_exhaustive()
    }
}

impl Clone for Blocks {
    /// A copy whose records were all written (copied) into fresh memory: every page of
    /// it counts as written (the original's page numbering need not match its own).
    fn clone(&self) -> Blocks {
        let blocks = self.blocks.clone();
        let pages = blocks.pages(MEM_PAGE);
        Blocks {
            ppb: self.ppb,
            words: self.words,
            blocks,
            ext: self.ext.clone(),
            written_pages: vec![u64::MAX; pages.div_ceil(64)],
        }
    }
}

impl Blocks {
    /// `blocks` blocks of `pages_per_block` pages, as one plane (tests).
    #[cfg(test)]
    pub(crate) fn new(blocks: u32, pages_per_block: u32) -> Blocks {
        Blocks::with_planes(blocks, 1, pages_per_block)
    }

    /// `planes` planes of `blocks_per_plane` blocks of `pages_per_block` pages; each
    /// plane's records padded a cache line apart ([`PerBlock`]: the blocks every plane
    /// writes at once share no cache set).
    pub(crate) fn with_planes(blocks_per_plane: u32, planes: u32, pages_per_block: u32) -> Blocks {
        let blocks = PerBlock::<BlockState>::zeroed_with_shape(blocks_per_plane as usize, planes as usize);
        let pages = blocks.pages(MEM_PAGE);
        Blocks {
            ppb: pages_per_block,
            words: pages_per_block.div_ceil(64) as usize,
            blocks,
            ext: Vec::new(),
            written_pages: vec![0; pages.div_ceil(64)],
        }
    }

    /// Make block `b`'s record ready to be written: if a memory page it lies on was
    /// never written, store the record's value (all zero) before anything loads it.
    ///
    /// The records are a zeroed allocation that the system backs page by page on first
    /// touch. A page first touched by a load maps the kernel's shared zero page, and the
    /// first store to it then copies that page and flushes the TLB of every core running
    /// the process: an inter-processor interrupt that costs the storing thread about
    /// 25 µs on this project's VMs (docs/performance.md, sixteenth session). Programs of
    /// a block's page 0 and erases — the only first writes of a record — call this
    /// before their checks load the record, so its page's first touch is a store. Every
    /// write of a record comes after one of them, which keeps a clear bit meaning "all
    /// zero" (what makes the store harmless). No effect on any answer.
    #[inline]
    pub(crate) fn prepare(&mut self, b: u32) {
        let (p, q) = self.blocks.page_span(b as usize, MEM_PAGE);
        let written = |w: &[u64], i: usize| w[i / 64] >> (i % 64) & 1 == 1;
        if !written(&self.written_pages, p) || !written(&self.written_pages, q) {
            self.first_write(b, p, q);
        }
    }

    /// [`Blocks::prepare`] of a record on a page never written: the record is zero.
    #[cold]
    #[inline(never)]
    fn first_write(&mut self, b: u32, p: usize, q: usize) {
        self.blocks[b as usize] = BlockState { wp: 0, erase_count: 0, ext: NO_EXT };
        for i in [p, q] {
            self.written_pages[i / 64] |= 1 << (i % 64);
        }
    }

    #[inline(always)]
    fn ext_of(&self, b: u32) -> Option<&BlockExt> {
        let e = self.blocks[b as usize].ext;
        (e != NO_EXT).then(|| &self.ext[e as usize - 1])
    }

    /// Block `b`'s record, read for its cache line (`Device::warm_block`).
    #[inline(always)]
    pub(crate) fn warm(&self, b: u32) -> u32 {
        let r = &self.blocks[b as usize];
        r.wp ^ r.ext
    }

    /// Start loading block `b`'s record (`Device::prefetch_block`).
    #[inline(always)]
    pub(crate) fn prefetch(&self, b: u32) {
        lamina_hint::prefetch(&self.blocks[b as usize]);
    }

    /// Is page `p` of block `b` programmed?
    #[inline(always)]
    pub(crate) fn is_programmed(&self, b: u32, p: u32) -> bool {
        match self.ext_of(b) {
            None => p < self.blocks[b as usize].wp,
            Some(x) => bit(&x.programmed, p),
        }
    }

    /// May page `p` of block `b` be programmed now?
    #[inline(always)]
    pub(crate) fn check_program(&self, b: u32, p: u32) -> ProgramCheck {
        match self.ext_of(b) {
            None => {
                let wp = self.blocks[b as usize].wp;
                if p < wp {
                    ProgramCheck::NotErased
                } else if p > wp {
                    ProgramCheck::OutOfOrder { expected: wp }
                } else {
                    ProgramCheck::Ok
                }
            }
            Some(x) => {
                if bit(&x.programmed, p) {
                    ProgramCheck::NotErased
                } else if bit(&x.starts, p) || (p > 0 && bit(&x.programmed, p - 1)) {
                    ProgramCheck::Ok
                } else {
                    // The region containing p starts at the last start bit ≤ p; its
                    // next programmable page is the first erased page after the
                    // programmed prefix of the region.
                    let mut r = p;
                    while !bit(&x.starts, r) {
                        r -= 1; // start bit 0 is always set after any erase
                    }
                    let mut q = r;
                    while bit(&x.programmed, q) {
                        q += 1;
                    }
                    ProgramCheck::OutOfOrder { expected: q }
                }
            }
        }
    }

    /// Mark page `p` of block `b` programmed (caller checked it).
    #[inline(always)]
    pub(crate) fn program(&mut self, b: u32, p: u32) {
        debug_assert_eq!(self.check_program(b, p), ProgramCheck::Ok);
        if p == 0 {
            self.prepare(b);
        }
        let st = &mut self.blocks[b as usize];
        if st.ext == NO_EXT {
            st.wp += 1;
        } else {
            set_bit(&mut self.ext[st.ext as usize - 1].programmed, p, true);
        }
    }

    /// Program page `p` of block `b` if the block was never partially erased and `p` is
    /// its write pointer (the page [`Self::check_program`] allows); false, and nothing
    /// changed, otherwise.
    #[inline(always)]
    pub(crate) fn program_at_wp(&mut self, b: u32, p: u32) -> bool {
        self.program_run_at_wp(b, p, 1)
    }

    /// Program pages `p .. p + n` of block `b` if the block was never partially erased,
    /// `p` is its write pointer and the pages are in the block ([`Self::program_at_wp`]
    /// `n` times in one check); false, and nothing changed, otherwise.
    #[inline(always)]
    pub(crate) fn program_run_at_wp(&mut self, b: u32, p: u32, n: u32) -> bool {
        if p == 0 {
            self.prepare(b);
        }
        let st = &mut self.blocks[b as usize];
        // The write pointer never passes the block's end, so `ppb - wp` cannot wrap.
        let ok = st.ext == NO_EXT && st.wp == p && n <= self.ppb - st.wp;
        if ok {
            st.wp += n;
        }
        ok
    }

    /// Whole-block erase.
    pub(crate) fn erase(&mut self, b: u32) {
        self.prepare(b);
        let st = &mut self.blocks[b as usize];
        st.erase_count += 1;
        st.wp = 0;
        if st.ext != NO_EXT {
            let x = &mut self.ext[st.ext as usize - 1];
            x.programmed.fill(0);
            x.starts.fill(0);
            set_bit(&mut x.starts, 0, true);
        }
    }

    /// Erase pages `[first, first + len)` of block `b` (a partial block).
    pub(crate) fn erase_range(&mut self, b: u32, first: u32, len: u32) {
        if first == 0 && len == self.ppb {
            self.erase(b);
            return;
        }
        self.prepare(b);
        let words = self.words;
        let st = &mut self.blocks[b as usize];
        if st.ext == NO_EXT {
            let mut x = BlockExt {
                programmed: vec![0; words],
                starts: vec![0; words],
                partial_erases: vec![0; self.ppb as usize],
            };
            for p in 0..st.wp {
                set_bit(&mut x.programmed, p, true);
            }
            set_bit(&mut x.starts, 0, true);
            self.ext.push(x);
            st.ext = u32::try_from(self.ext.len()).expect("too many partially erased blocks");
        }
        let x = &mut self.ext[st.ext as usize - 1];
        for p in first..first + len {
            set_bit(&mut x.programmed, p, false);
            set_bit(&mut x.starts, p, false);
            x.partial_erases[p as usize] += 1;
        }
        set_bit(&mut x.starts, first, true);
    }

    /// Whole-block erase count.
    #[inline]
    pub(crate) fn erase_count(&self, b: u32) -> u32 {
        self.blocks[b as usize].erase_count
    }

    /// Erases that reset page `p` of block `b` (whole-block plus covering partial ones).
    #[inline]
    pub(crate) fn page_erase_count(&self, b: u32, p: u32) -> u32 {
        self.blocks[b as usize].erase_count + self.ext_of(b).map_or(0, |x| x.partial_erases[p as usize])
    }

    /// Lowest page of block `b` that may be programmed now, if any.
    pub(crate) fn next_programmable(&self, b: u32) -> Option<u32> {
        match self.ext_of(b) {
            None => {
                let wp = self.blocks[b as usize].wp;
                (wp < self.ppb).then_some(wp)
            }
            Some(x) => {
                let mut carry = 0u64; // programmed bit of the previous page
                for (i, (&prog, &start)) in x.programmed.iter().zip(&x.starts).enumerate() {
                    let prev = (prog << 1) | carry;
                    let cand = !prog & (start | prev);
                    let base = i as u32 * 64;
                    if cand != 0 {
                        let p = base + cand.trailing_zeros();
                        if p < self.ppb {
                            return Some(p);
                        }
                    }
                    carry = prog >> 63;
                }
                None
            }
        }
    }

    /// Pages of block `b` currently programmed.
    pub(crate) fn programmed_pages(&self, b: u32) -> u32 {
        match self.ext_of(b) {
            None => self.blocks[b as usize].wp,
            Some(x) => x.programmed.iter().map(|w| w.count_ones()).sum(),
        }
    }

    /// Blocks that carry an extended (partial-erase) record.
    pub(crate) fn extended_blocks(&self) -> usize {
        self.ext.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simple_block_in_order() {
        let mut b = Blocks::new(2, 8);
        assert_eq!(b.check_program(0, 0), ProgramCheck::Ok);
        assert_eq!(b.check_program(0, 1), ProgramCheck::OutOfOrder { expected: 0 });
        b.program(0, 0);
        assert!(b.is_programmed(0, 0));
        assert_eq!(b.check_program(0, 0), ProgramCheck::NotErased);
        assert_eq!(b.next_programmable(0), Some(1));
        for p in 1..8 {
            b.program(0, p);
        }
        assert_eq!(b.next_programmable(0), None);
        b.erase(0);
        assert_eq!(b.erase_count(0), 1);
        assert_eq!(b.next_programmable(0), Some(0));
        assert_eq!(b.programmed_pages(1), 0);
    }

    #[test]
    fn partial_erase_regions() {
        let mut b = Blocks::new(1, 128);
        for p in 0..100 {
            b.program(0, p);
        }
        // Erase pages 64..96: a region starting at 64.
        b.erase_range(0, 64, 32);
        assert_eq!(b.programmed_pages(0), 100 - 32);
        assert!(!b.is_programmed(0, 64));
        assert!(b.is_programmed(0, 96));
        assert_eq!(b.check_program(0, 64), ProgramCheck::Ok);
        assert_eq!(b.check_program(0, 65), ProgramCheck::OutOfOrder { expected: 64 });
        // The original region continues after page 99.
        assert_eq!(b.check_program(0, 100), ProgramCheck::Ok);
        assert_eq!(b.next_programmable(0), Some(64));
        assert_eq!(b.page_erase_count(0, 64), 1);
        assert_eq!(b.page_erase_count(0, 10), 0);
        b.program(0, 64);
        assert_eq!(b.check_program(0, 65), ProgramCheck::Ok);
        b.erase(0);
        assert_eq!(b.page_erase_count(0, 64), 2);
        assert_eq!(b.page_erase_count(0, 10), 1);
        assert_eq!(b.next_programmable(0), Some(0));
        assert_eq!(b.check_program(0, 1), ProgramCheck::OutOfOrder { expected: 0 });
        assert_eq!(b.extended_blocks(), 1);
    }

    #[test]
    fn prepare_never_changes_a_record() {
        // Records of 12 bytes over many 4 KiB pages, some straddling two: programs
        // (single and runs), whole and partial erases on random blocks, and `prepare` —
        // of random blocks before an operation, of the block just changed after it — on
        // one copy only. The copies agree on every page of every block throughout, so
        // `prepare`'s stores only ever write a record's own (zero) value. Sparse
        // operations keep most pages untouched for long, so a write that did not mark
        // its page would soon be undone by a `prepare` of its block.
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: u32| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % n as u64) as u32
        };
        let (blocks, ppb) = (40_000, 8);
        let mut b = Blocks::new(blocks, ppb);
        let mut reference = Blocks::new(blocks, ppb);
        let same = |b: &Blocks, r: &Blocks, blk: u32| {
            (0..ppb).all(|p| b.is_programmed(blk, p) == r.is_programmed(blk, p))
                && (0..ppb).all(|p| b.page_erase_count(blk, p) == r.page_erase_count(blk, p))
                && b.next_programmable(blk) == r.next_programmable(blk)
        };
        let mut touched = Vec::new();
        for step in 0..20_000 {
            if next(2) == 0 {
                b.prepare(next(blocks));
            }
            // A block touched before, or a fresh one.
            let blk = if next(3) == 0 || touched.is_empty() {
                next(blocks)
            } else {
                touched[next(touched.len() as u32) as usize]
            };
            touched.push(blk);
            let page = b.next_programmable(blk).unwrap_or(0);
            match next(6) {
                0 => {
                    b.erase(blk);
                    reference.erase(blk);
                }
                1 => {
                    let first = [0, 2, 4, 6][next(4) as usize];
                    b.erase_range(blk, first, 2);
                    reference.erase_range(blk, first, 2);
                }
                2 => {
                    let n = 1 + next(3);
                    assert_eq!(b.program_run_at_wp(blk, page, n), reference.program_run_at_wp(blk, page, n));
                }
                _ => {
                    if b.check_program(blk, page) == ProgramCheck::Ok {
                        b.program(blk, page);
                        reference.program(blk, page);
                    }
                }
            }
            b.prepare(blk);
            assert!(same(&b, &reference, blk), "block {blk} differs at step {step}");
        }
        assert!((0..blocks).all(|blk| same(&b, &reference, blk)));
        let marked: u32 = b.written_pages.iter().map(|w| w.count_ones()).sum();
        assert!(marked > 50, "the test reached many pages ({marked})");
        // A copy (fresh memory) prepares nothing away either.
        let mut c = b.clone();
        for blk in 0..blocks {
            c.prepare(blk);
        }
        assert!((0..blocks).all(|blk| same(&c, &b, blk)));
    }

    #[test]
    fn program_at_wp_agrees_with_check_then_program() {
        // Random programs, whole and partial erases on a few blocks: the one-lookup path
        // programs exactly when the block is simple and the check says Ok, and then leaves
        // the state `check_program` + `program` leave; otherwise it changes nothing.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |n: u32| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % n as u64) as u32
        };
        let mut b = Blocks::new(4, 16);
        let mut fast = 0;
        for _ in 0..20_000 {
            let blk = next(4);
            // Mostly the next programmable page; blocks 2 and 3 also get partial erases.
            let page = if next(2) == 0 { b.next_programmable(blk).unwrap_or(0) } else { next(16) };
            match next(20) {
                0 => b.erase(blk),
                1 if blk >= 2 => b.erase_range(blk, [0, 4, 8, 12][next(4) as usize], 4),
                _ => {
                    let simple = b.ext_of(blk).is_none();
                    let ok = b.check_program(blk, page) == ProgramCheck::Ok;
                    let mut reference = b.clone();
                    if ok {
                        reference.program(blk, page);
                    }
                    let programmed = b.program_at_wp(blk, page);
                    assert_eq!(programmed, simple && ok);
                    if !programmed && ok {
                        b.program(blk, page); // what `program_untimed` falls back to
                    }
                    assert_eq!(format!("{b:?}"), format!("{reference:?}"));
                    fast += programmed as u32;
                }
            }
        }
        assert!(fast > 1000, "the fast path ran {fast} times");
    }
}
