//! The [`Ftl`] trait and the vocabulary it speaks: logical page numbers, GC steps,
//! flash effects, statistics and errors.
//!
//! # Contract in one paragraph
//!
//! An FTL owns the logical→physical mapping and the block bookkeeping, nothing else: it
//! knows no time, no events and no device state beyond what it decided itself. Every
//! state change it makes corresponds to one physical effect (a page program, a page
//! move, an erase) that it reports to its caller — the engine — which issues the matching
//! timed NAND operations **in the same order**. The device model then enforces physics
//! (erase before program, pages of a block programmed in order), so an FTL bug that
//! would break the medium is caught by the device, and a mapping bug is caught by the
//! conformance harness ([`crate::testing`], feature `testing`).

pub use lamina_nand_model::Lpn;
use lamina_nand_model::{BlockId, Geometry, PlaneId, Ppa};
use serde::{Deserialize, Serialize};

/// A contiguous range of pages inside one block that can be erased on its own
/// (partial-block erase, PEN's M-Merge). For PEN the range is a node of the binary tree
/// over the block's pages: `page_count` a power of two and `first_page` a multiple of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct PageRange {
    /// First page (within the block) of the range.
    pub first_page: u32,
    /// Number of pages in the range (≥ 1).
    pub page_count: u32,
}

impl PageRange {
    /// True if page `page` (within the block) lies in the range.
    #[inline]
    pub fn contains(&self, page: u32) -> bool {
        page >= self.first_page && page - self.first_page < self.page_count
    }
}

/// Summary of a garbage-collection job, returned by [`Ftl::gc_begin`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GcJob {
    /// The block being reclaimed (for merges: the block whose reclamation started the job).
    pub victim: BlockId,
    /// Valid pages the job expects to move (may shrink if the host overwrites or trims
    /// them meanwhile).
    pub valid_pages: u32,
    /// Invalid pages the job will reclaim.
    pub invalid_pages: u32,
}

/// One step of a GC job. The FTL has already updated its state when it returns a step;
/// the engine must issue the matching NAND operation(s) now, before any later step or
/// host write to the same plane, so operations reach the device in FTL order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GcStep {
    /// Copy the valid page `from` (holding `lpn`) to the erased page `to`; the mapping of
    /// `lpn` already points to `to`. The old page stays physically readable until its block
    /// is erased, so the engine may serve reads of `lpn` from `from` until the program of
    /// `to` completes.
    Move {
        /// The logical page being moved.
        lpn: Lpn,
        /// Source page.
        from: Ppa,
        /// Destination page (erased; next in program order of its block).
        to: Ppa,
        /// Use the chip's copyback (read into the page register and program back without
        /// crossing the channel). Only ever set when `from` and `to` are in the same plane.
        /// Copyback still costs array time (a read and a program): the engine times it.
        copyback: bool,
        /// This move may be issued together with the next step, which is also a `Move`,
        /// as one multi-plane / multi-page operation (e.g. planes of a die at the same page
        /// offset). `false` for the page-mapping FTL.
        batch_with_next: bool,
    },
    /// Erase a whole block; it holds no valid page any more.
    Erase {
        /// The block to erase.
        block: BlockId,
    },
    /// Erase part of a block (partial-block erase); the range holds no valid page.
    PartialErase {
        /// The block.
        block: BlockId,
        /// The pages erased.
        range: PageRange,
    },
    /// The job is over (or none was in progress). The next call to
    /// [`Ftl::gc_begin`] may start a new one.
    Done,
}

/// A physical effect of an untimed operation (preconditioning), reported so the engine
/// can mirror it into the device model's state without timing it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlashEffect {
    /// Page `ppa` was programmed with the data of `lpn` (a host write or a GC move).
    Program {
        /// The programmed page.
        ppa: Ppa,
        /// The logical page it holds.
        lpn: Lpn,
    },
    /// Block `block` was erased.
    Erase {
        /// The erased block.
        block: BlockId,
    },
    /// A page range of `block` was erased.
    PartialErase {
        /// The block.
        block: BlockId,
        /// The pages erased.
        range: PageRange,
    },
}

/// Page accounting of one plane. Invariant: `free + valid + invalid` = pages per plane.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PageCounts {
    /// Erased pages not yet programmed (in free blocks and open blocks).
    pub free: u64,
    /// Programmed pages holding the current copy of some LPN.
    pub valid: u64,
    /// Programmed pages holding stale data.
    pub invalid: u64,
}

/// Bookkeeping of one block as the FTL sees it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BlockInfo {
    /// Pages programmed since the block's last (full or partial) erase.
    pub programmed: u32,
    /// Programmed pages that hold the current copy of an LPN.
    pub valid: u32,
    /// Full-block erases so far (partial erases are not counted here).
    pub erase_count: u32,
}

/// Cumulative counters of an FTL. All counts are in pages or blocks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct FtlStats {
    /// Host page writes accepted.
    pub host_writes: u64,
    /// Host page writes refused with [`FtlError::NoFreePage`].
    pub host_writes_refused: u64,
    /// Trims that unmapped a page.
    pub trims: u64,
    /// Pages moved by GC (copyback ones included).
    pub gc_moves: u64,
    /// Of `gc_moves`, those flagged as copyback.
    pub gc_copybacks: u64,
    /// GC jobs started.
    pub gc_jobs: u64,
    /// Full-block erases.
    pub erases: u64,
    /// Partial-block erases.
    pub partial_erases: u64,
}

impl FtlStats {
    /// Write amplification `(host_writes + gc_moves) / host_writes` in parts per million
    /// (1_000_000 = no amplification); 0 if nothing was written. Integer so that reports
    /// are byte-identical across platforms.
    pub fn waf_ppm(&self) -> u64 {
        if self.host_writes == 0 {
            return 0;
        }
        ((self.host_writes as u128 + self.gc_moves as u128) * 1_000_000 / self.host_writes as u128) as u64
    }
}

/// An operation the FTL cannot perform right now. Not a bug: the caller reacts (runs GC,
/// picks another plane) and retries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FtlError {
    /// The plane has no free page available to host writes (the last free pages are
    /// reserved so that GC can always finish). Run GC on the plane — if
    /// [`Ftl::needs_gc`] is true a job will free space — or write to another plane.
    #[error("plane {} has no free page for host writes; run GC or choose another plane", plane.0)]
    NoFreePage {
        /// The full plane.
        plane: PlaneId,
    },
}

/// A flash translation layer: the mapping from logical pages to physical pages plus the
/// block bookkeeping (allocation, garbage collection, wear levelling).
///
/// Implemented by [`crate::PageFtl`] (page-level mapping) and meant to fit block-level
/// (NFTL D-/U-block pairs with merges), hybrid and superblock FTLs: their GC is a
/// sequence of [`GcStep`]s that may move pages, erase whole blocks or erase parts of a
/// block, and their allocation is free to keep several open blocks per plane (MBM's host
/// and GC blocks) or to place pages of several planes at the same offset.
///
/// # Driving an FTL (what the engine and the conformance harness do)
///
/// * **Host write** of `lpn`: pick a plane — [`Ftl::static_plane`] for static allocation,
///   anything else for dynamic allocation — and, while [`Ftl::needs_gc`] holds for it,
///   run GC there first. Then call [`Ftl::write`] and program the returned page.
///   `write` invalidates the previous copy of `lpn` itself.
/// * **GC**: `gc_begin(plane)` starts a job (or returns `None` when there is nothing worth
///   reclaiming); then call `gc_step(plane)` repeatedly, issuing each returned step's NAND
///   operations immediately, until it returns [`GcStep::Done`]. Host writes to the same
///   plane may be interleaved between steps; the FTL keeps enough free pages aside that
///   the job can always finish.
/// * **Read** of `lpn`: [`Ftl::lookup`]; `None` means unmapped (never written or trimmed).
/// * **Trim**: [`Ftl::trim`].
///
/// # Obligations of an implementation
///
/// * Every page returned by `write` or as a `Move` destination is erased and the next
///   page in program order of its block.
/// * A `Move` copies the current copy of an LPN, and the mapping points to the
///   destination from the moment the step is returned.
/// * An erased block (or range) holds no valid page.
/// * GC always finishes: a started job never needs more free pages than the plane has
///   left, however host writes interleave. When `write` fails with `NoFreePage` on a plane
///   whose LPNs fit it, `needs_gc` is true for that plane.
/// * The introspection methods (`page_lpn`, `block_info`, `page_counts`, `free_blocks`)
///   describe the state exactly; the conformance harness cross-checks them against its
///   own shadow of the flash after every operation and GC step.
/// * Deterministic: the same call sequence gives the same results.
///
/// Calls with out-of-range arguments (an LPN ≥ `logical_pages()`, a plane or block not in
/// the geometry, `gc_begin` while a job is in progress) are caller bugs and may panic.
pub trait Ftl: Send {
    /// The device geometry the FTL manages.
    fn geometry(&self) -> &Geometry;

    /// Number of logical pages exported to the host (the user capacity in pages).
    fn logical_pages(&self) -> u64;

    /// The physical page holding the current copy of `lpn`, or `None` if unmapped.
    fn lookup(&self, lpn: Lpn) -> Option<Ppa>;

    /// The plane static allocation assigns `lpn` to (the configured striping order).
    fn static_plane(&self, lpn: Lpn) -> PlaneId;

    /// Write `lpn` into `plane`: allocate the next free page there, map `lpn` to it and
    /// invalidate the previous copy. Fails without changing anything if the plane has no
    /// free page available to host writes.
    fn write(&mut self, lpn: Lpn, plane: PlaneId) -> Result<Ppa, FtlError>;

    /// Unmap `lpn` (the host discarded it); returns the page that was invalidated, if any.
    fn trim(&mut self, lpn: Lpn) -> Option<Ppa>;

    /// True if the plane is short of free blocks and GC should run before more host writes
    /// go there.
    fn needs_gc(&self, plane: PlaneId) -> bool;

    /// True while a GC job started on `plane` has not returned [`GcStep::Done`].
    fn gc_in_progress(&self, plane: PlaneId) -> bool;

    /// Start a GC job on `plane`; `None` if there is nothing to reclaim (no block holds an
    /// invalid page). May be called when `needs_gc` is false (background GC). Must not be
    /// called while a job is in progress on the plane.
    fn gc_begin(&mut self, plane: PlaneId) -> Option<GcJob>;

    /// Perform the next step of the plane's GC job; [`GcStep::Done`] ends the job (and is
    /// also returned when no job is in progress).
    fn gc_step(&mut self, plane: PlaneId) -> GcStep;

    /// Free (erased, unallocated) blocks in the plane.
    fn free_blocks(&self, plane: PlaneId) -> u32;

    /// Free / valid / invalid page counts of the plane.
    fn page_counts(&self, plane: PlaneId) -> PageCounts;

    /// The LPN whose current copy is stored in `ppa` (the reverse map), or `None` if the
    /// page is erased or holds stale data.
    fn page_lpn(&self, ppa: Ppa) -> Option<Lpn>;

    /// Bookkeeping of one block.
    fn block_info(&self, block: BlockId) -> BlockInfo;

    /// Cumulative counters.
    fn stats(&self) -> FtlStats;

    /// The page index (within its block) the plane's next host write will get, if known
    /// (the active block's write pointer). Placement policies use it to estimate the
    /// layer, hence the program time, of a write not yet allocated (LaCR). `None` if the
    /// FTL cannot tell (e.g. no active block is open; the next one starts at page 0).
    fn next_write_page(&self, plane: PlaneId) -> Option<u32> {
        let _ = plane;
        None
    }
}
