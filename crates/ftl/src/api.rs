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
use lamina_nand_model::{BlockId, DieId, Geometry, PlaneId, Ppa};
use serde::{Deserialize, Serialize};

/// The logical pages whose [`Ftl::lookup`] answer may have changed since it was last
/// emptied: what an FTL keeps after [`Ftl::log_moves`] and hands out through
/// [`Ftl::take_moves`], so that a caller holding answers for a few pages (the engine's
/// queued reads under `sched.lacr.read_page = "current"`) can look again only at those.
///
/// Bounded: beyond [`MoveLog::CAPACITY`] pages it stops recording and remembers that it
/// overflowed, and the caller must then treat every page as moved. Repeats are kept (a
/// page written twice is logged twice); order is the order of the changes.
#[derive(Clone, Debug, Default)]
pub struct MoveLog {
    lpns: Vec<Lpn>,
    overflowed: bool,
    /// [`MoveLog::enable`] was called: [`MoveLog::record`] records.
    on: bool,
}

impl MoveLog {
    /// Pages recorded before the log overflows (512 KiB of entries).
    pub const CAPACITY: usize = 1 << 16;

    /// Start recording through [`MoveLog::record`] (an FTL's [`Ftl::log_moves`]).
    pub fn enable(&mut self) {
        self.on = true;
    }

    /// Record that `lpn`'s mapping changed if the log is enabled: where an FTL changes
    /// its map. A disabled log costs the test; the push is out of line.
    #[inline]
    pub fn record(&mut self, lpn: Lpn) {
        if self.on {
            self.push_cold(lpn);
        }
    }

    #[cold]
    #[inline(never)]
    fn push_cold(&mut self, lpn: Lpn) {
        self.push(lpn);
    }

    /// [`MoveLog::take`] if the log is enabled, else false (an FTL's
    /// [`Ftl::take_moves`]).
    pub fn take_if_enabled(&mut self, out: &mut Vec<Lpn>) -> bool {
        self.on && self.take(out)
    }

    /// Record that `lpn`'s mapping changed.
    #[inline]
    pub fn push(&mut self, lpn: Lpn) {
        if self.lpns.len() < Self::CAPACITY {
            self.lpns.push(lpn);
        } else {
            self.overflowed = true;
        }
    }

    /// Append the recorded pages to `out` and empty the log. Returns false if it had
    /// overflowed: then `out` misses some changes and every page must count as moved.
    pub fn take(&mut self, out: &mut Vec<Lpn>) -> bool {
        let complete = !self.overflowed;
        if complete {
            out.extend_from_slice(&self.lpns);
        }
        self.lpns.clear();
        self.overflowed = false;
        complete
    }
}

/// A contiguous range of pages inside one block that can be erased on its own
/// (partial-block erase, PEN's M-Merge). For PEN the range is a node of the binary tree
/// over the block's pages: `page_count = pages_per_block / 2^level` and `first_page` a
/// multiple of it.
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
        /// Multi-block erase: this erase may be issued together with the next step, which
        /// is then also an `Erase`, as one multi-plane erase — the two blocks have the same
        /// block index on distinct planes of one die (a chain of flagged erases forms one
        /// command of up to `planes_per_die` blocks). The FTL's state is the same either
        /// way; the flag only allows the engine to save array time. `false` for the
        /// page-mapping FTL.
        batch_with_next: bool,
    },
    /// Program the erased page `to` with an FTL-internal page `lpn` (≥
    /// [`Ftl::logical_pages`]) that has no earlier copy to read: the first write-back of a
    /// translation page (page FTL, `ftl.mapping = "cached"`). A later write-back of it is
    /// a [`GcStep::Move`] (read the old version, program the merged one): a
    /// read-modify-write. Only the cached mapping returns it.
    Program {
        /// The internal page written.
        lpn: Lpn,
        /// Destination page (erased; next in program order of its block).
        to: Ppa,
    },
    /// Read the spare area (out-of-band bytes: the logical address and sequence number)
    /// of the programmed page `ppa`, to learn which copy is the newest before moving
    /// pages (NFTL: a merge scans its update block). No state changes; the engine times
    /// it as a host translation read is timed (docs/model.md, "The FTL's timed
    /// translation step"). Only block-level merges return it.
    SpareRead {
        /// The page whose spare area is read.
        ppa: Ppa,
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

impl GcStep {
    /// The change this step makes to the flash array, as an untimed operation reports it
    /// (`None` for [`GcStep::SpareRead`], which only reads, and [`GcStep::Done`]).
    pub fn effect(&self) -> Option<FlashEffect> {
        match *self {
            GcStep::Move { lpn, to, .. } | GcStep::Program { lpn, to } => {
                Some(FlashEffect::Program { ppa: to, lpn })
            }
            GcStep::Erase { block, .. } => Some(FlashEffect::Erase { block }),
            GcStep::PartialErase { block, range } => Some(FlashEffect::PartialErase { block, range }),
            GcStep::SpareRead { .. } | GcStep::Done => None,
        }
    }
}

/// Call `ftl.gc_step(plane)` until [`GcStep::Done`], reporting each step's effect to
/// `sink` (the default [`Ftl::gc_finish_untimed`]).
pub(crate) fn gc_steps_untimed<F: Ftl + ?Sized>(
    ftl: &mut F,
    plane: PlaneId,
    sink: &mut dyn FnMut(FlashEffect),
) {
    loop {
        let step = ftl.gc_step(plane);
        if step == GcStep::Done {
            return;
        }
        if let Some(e) = step.effect() {
            sink(e);
        }
    }
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

/// Cumulative counters of an FTL. All counts are in pages or blocks, except the `*_rows`
/// counters, which count host write rows (see [`crate::Allocation::DieAligned`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct FtlStats {
    /// Host page writes accepted.
    pub host_writes: u64,
    /// Host page writes refused ([`FtlError::NoFreePage`] or [`FtlError::MergeNeeded`]);
    /// a refused [`Ftl::write_group`] counts once. A write retried after GC and refused
    /// again counts again.
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
    /// Spare-area (out-of-band) reads that block-level merges perform to find the valid
    /// pages of their victims (NFTL: every written page of the update block), each a
    /// [`GcStep::SpareRead`] the engine times. Reads of a host lookup are listed by
    /// [`Ftl::translation_reads`] and counted by the engine.
    pub merge_spare_reads: u64,
    /// Die-aligned allocation: host rows opened at one block index on every plane of the
    /// die — the rows whose pages can be programmed by multi-plane commands. 0 under
    /// per-plane allocation.
    pub aligned_rows: u64,
    /// Die-aligned allocation: host rows opened on every plane of the die, but at
    /// different block indices, because no block index was free on all of them (their
    /// pages share the page offset, not the block offset, so they cannot be programmed
    /// together).
    pub misaligned_rows: u64,
    /// Die-aligned allocation: host rows opened on only some planes of the die, because
    /// the others had no block to spare above their GC reserve and no GC work that
    /// could free one (the alternative would be to stall the die). Their blocks share an
    /// index when one is free on all of them.
    pub partial_rows: u64,
    /// PEN (`ftl.pen`): M-Merges run (Algorithm 2 / 3 chose M-Merge).
    pub pen_m_merges: u64,
    /// PEN: baseline merges run while PEN was on, for every reason (the three below and
    /// "not cheaper").
    pub pen_classic_merges: u64,
    /// PEN: of `pen_classic_merges`, those the wear gate W forced.
    pub pen_wear_merges: u64,
    /// PEN: of `pen_classic_merges`, those whose stage-1 copies found no room.
    pub pen_no_space_merges: u64,
    /// PEN: of `pen_classic_merges`, those on a block not in in-place layout, or whose
    /// restore would have left a page of a restored PB unfilled (docs/ftl.md, "PEN").
    pub pen_layout_merges: u64,
    /// PEN: partial erases by PB level (index 0 = PB 1, the whole block by the
    /// partial-erase command; index L = a leaf PB). Sums to `partial_erases`.
    pub pen_partial_erases_by_level: [u64; 17],
    /// PEN: valid-page copies M-Merges made (stage 1 out of the block, stage 3 back in,
    /// and, superblock FTL, the U-blkset's pages).
    pub pen_restore_copies: u64,
    /// PEN: copies the baseline merges that M-Merges replaced would have made (so
    /// `pen_merge_copies_replaced − pen_restore_copies` copies were saved).
    pub pen_merge_copies_replaced: u64,
    /// PEN: leaves (smallest PBs) an M-Merge restored although they held nothing to
    /// reclaim, because they had taken as many boundary disturbances as they tolerate.
    pub pen_disturb_restores: u64,
    /// GFTL (`ftl.kind = "gftl"`): partial-GC steps run, paid from the steps host writes
    /// owe (`ftl.gftl_steps_per_write` each).
    pub gftl_steps: u64,
    /// GFTL: GC jobs run because the plane's free blocks fell below the GC threshold (the
    /// write buffer ran out): each a whole block cleaning or a buffer-block erase, with
    /// host writes to the plane waiting below two free blocks.
    pub gftl_forced_jobs: u64,
    /// GFTL: block cleanings started (a data block copied to a fresh one and erased).
    pub gftl_cleanings: u64,
    /// Cached mapping (`ftl.mapping = "cached"`): host reads whose mapping entry was in
    /// the cached mapping table (CMT).
    pub cmt_read_hits: u64,
    /// Cached mapping: host reads whose entry was not cached (loaded from its
    /// translation page: a translation-page read if that page is on flash).
    pub cmt_read_misses: u64,
    /// Cached mapping: host writes whose entry was cached.
    pub cmt_write_hits: u64,
    /// Cached mapping: host writes whose entry was not cached (inserted without a read).
    pub cmt_write_misses: u64,
    /// Cached mapping: dirty entries evicted from the CMT (each merges every dirty entry
    /// of its translation page into a write-back, unless one is already queued).
    pub cmt_dirty_evictions: u64,
    /// Cached mapping: translation pages read from flash — reads of host read misses
    /// (listed by [`Ftl::translation_reads`], timed by the engine) plus the reads of
    /// read-modify-write write-backs ([`GcStep::Move`] of a translation page).
    pub translation_page_reads: u64,
    /// Cached mapping: translation pages programmed by write-backs ([`GcStep::Program`]
    /// or [`GcStep::Move`]).
    pub translation_page_writes: u64,
    /// Cached mapping: translation pages GC relocated (not in `gc_moves`).
    pub translation_gc_moves: u64,
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

/// An operation the FTL cannot perform right now. Not a bug: the caller reacts and
/// retries (**park-and-retry**): it keeps the write queued ("parked"), runs or advances
/// the GC/merge job of the plane the error names, and tries the same write again once
/// that job has made progress. Nothing changed in the FTL when an error is returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FtlError {
    /// The plane has no free page available to host writes (the last free pages are
    /// reserved so that GC can always finish). Park the write and run GC on `plane` —
    /// if [`Ftl::needs_gc`] is true a job will free space — then retry; or, for a write
    /// with [`WriteConstraint::Any`], write to another plane. The plane named may differ
    /// from the one passed to `write` (under [`WriteConstraint::Die`] it is the plane of
    /// the die that lacks room).
    #[error("plane {} has no free page for host writes; run GC or choose another plane", plane.0)]
    NoFreePage {
        /// The plane whose GC must run.
        plane: PlaneId,
    },
    /// A block-level or hybrid FTL must merge before it can accept the write (NFTL: the
    /// LPN's replacement block is full). Park the write, start the plane's GC/merge job
    /// ([`Ftl::gc_begin`] on `plane`, which then names the merge) and retry after the
    /// job has advanced.
    #[error("plane {} must merge blocks before it accepts this write; run its GC/merge job", plane.0)]
    MergeNeeded {
        /// The plane whose merge must run.
        plane: PlaneId,
    },
}

impl FtlError {
    /// The plane whose GC/merge job the caller must run before retrying.
    pub fn plane(&self) -> PlaneId {
        match *self {
            FtlError::NoFreePage { plane } | FtlError::MergeNeeded { plane } => plane,
        }
    }
}

/// Where a host write of an LPN may go, as the FTL states it
/// ([`Ftl::write_constraint`]). The caller (engine, write-allocation policy) must honour
/// it when it chooses the plane passed to [`Ftl::write`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteConstraint {
    /// Any plane: the caller picks it (static striping via [`Ftl::static_plane`], or a
    /// dynamic allocator); the page returned is on that plane.
    Any,
    /// Only this plane (block-level FTLs whose page offsets are fixed, e.g. NFTL's
    /// in-place offsets): the caller must queue the write for this plane.
    Plane(PlaneId),
    /// The caller picks the die (through any plane of it); the FTL picks the plane inside
    /// the die at write time, so the page returned may be on another plane of that die
    /// than the one passed. Die-aligned allocation keeps consecutive writes to a die at
    /// the same (block index, page) on its planes this way.
    Die,
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
/// * **Host write** of `lpn`: ask [`Ftl::write_constraint`]. Under
///   [`WriteConstraint::Any`] pick a plane — [`Ftl::static_plane`] for static
///   allocation, anything else for dynamic allocation; under `Plane(p)` use `p`; under
///   `Die` pick the die (any plane of it). While [`Ftl::needs_gc`] holds for the plane,
///   run GC there first. Then call [`Ftl::write`] and program the returned page (under
///   `Die` it may be on a sibling plane). `write` invalidates the previous copy of `lpn`
///   itself.
/// * **Refusal — park and retry**: `write` may return [`FtlError::NoFreePage`] or
///   [`FtlError::MergeNeeded`] naming a plane. The caller parks the write (keeps it
///   queued, changes nothing), runs or advances that plane's GC/merge job, and retries
///   the same write afterwards. [`Ftl::can_write`] answers the same question without the
///   attempt.
/// * **Write groups**: [`Ftl::write_group`] performs several writes all or nothing — what
///   a multi-plane program needs (all its pages allocated, or none). [`Ftl::next_write_addr`]
///   predicts the page a write will get, so a scheduler can tell in advance whether the
///   writes queued on sibling planes will land at the same (block index, page) and form
///   a legal multi-plane program; the engine checks the pages it actually gets.
/// * **GC** is a **job per plane**: `gc_begin(plane)` starts a job (or returns `None`
///   when there is nothing worth reclaiming) — the plane *names* the job — then call
///   `gc_step(plane)` repeatedly, issuing each returned step's NAND operations
///   immediately, until it returns [`GcStep::Done`]. The NAND operations of a step are
///   charged to the die(s) its **addresses** touch, not to the die of the job's plane: a
///   [`GcStep::Move`] may cross planes and dies (a superblock or block-level FTL
///   consolidating data), and the engine reads `from` on its die and programs `to` on
///   its die. Host writes to the same plane may be interleaved between steps; the FTL
///   keeps enough free pages aside that the job can always finish. Consecutive steps
///   flagged `batch_with_next` may be issued as one multi-plane command.
/// * **Read** of `lpn`: first the **translation reads** — [`Ftl::translation_reads`]
///   lists pages whose spare area (OOB) must be read from flash before the mapping is
///   known (NFTL scans its replacement block); the engine issues them as timed reads —
///   then [`Ftl::lookup`]; `None` means unmapped (never written or trimmed).
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
///   left, however host writes interleave. When `write` fails with `NoFreePage` while the
///   LPNs fit the device, `needs_gc` is true for the plane the error names, and running
///   GC there makes progress (so park-and-retry cannot livelock).
/// * `can_write`, `next_write_addr` and `write_room` never change state and agree with
///   `write`; `write_group` changes nothing when it refuses.
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

    /// A counter that changes whenever an answer of [`Ftl::lookup`] may change, or `None`
    /// if the FTL keeps none. While it reads the same, every page looked up since it
    /// was read still maps where it did, so a caller may reuse those answers instead of
    /// looking up again (the engine reuses admission's lookup of a read when it issues
    /// the read at once). Default: `None`.
    fn lookup_epoch(&self) -> Option<u64> {
        None
    }

    /// Start keeping a [`MoveLog`] of the pages whose [`Ftl::lookup`] answer changes
    /// (host writes, trims, GC moves, merges, anything). Returns true if this FTL keeps
    /// one, so that from now on [`Ftl::take_moves`] reports every change; false if it
    /// cannot, and the caller must look its pages up again instead. The conformance
    /// harness checks the log of every FTL that keeps one after every operation.
    /// Default: false.
    fn log_moves(&mut self) -> bool {
        false
    }

    /// Move the pages logged since the last call (or since [`Ftl::log_moves`]) into
    /// `out` ([`MoveLog::take`]). Returns false if some change went unrecorded (the log
    /// overflowed, or none is kept): then every page must count as moved. Default:
    /// false.
    fn take_moves(&mut self, out: &mut Vec<Lpn>) -> bool {
        let _ = out;
        false
    }

    /// Speed hint, no effect on state: read what a write of `lpn` will touch (its
    /// forward-map entry and the bookkeeping of the page it replaces), so that a caller
    /// about to write many scattered pages (preconditioning's random overwrites) can read
    /// a window of them first and overlap their cache misses. Default: nothing.
    fn warm_write(&self, lpn: Lpn) {
        let _ = lpn;
    }

    /// [`Ftl::warm_write`] of every page of `lpns` (a speed hint, no effect on state). An
    /// FTL may read level by level — every forward-map entry, then every replaced page's
    /// bookkeeping — so that the loads of each level are independent and overlap, where
    /// one page after another keeps only a few chains of dependent misses in flight.
    /// Default: `warm_write` of each in order.
    fn warm_writes(&self, lpns: &[Lpn]) {
        for &lpn in lpns {
            self.warm_write(lpn);
        }
    }

    /// Speed hint, no effect on state: read what [`Ftl::lookup`] of each page of `lpns`
    /// will read (pages about to be read, not written: none of the replaced-page
    /// bookkeeping [`Ftl::warm_writes`] reads). Default: [`Ftl::warm_writes`].
    fn warm_lookups(&self, lpns: &[Lpn]) {
        self.warm_writes(lpns);
    }

    /// Speed hint, no effect on state and no wait: start loading the first level of the
    /// forward-map lookup of each page of `lpns` (prefetch instructions, which retire
    /// without waiting for memory, where [`Ftl::warm_writes`]' plain loads hold the
    /// processor until their data arrives). The first of three stages a caller spaces
    /// apart in time: this one, [`Ftl::prefetch_map_second`] of the same pages a while
    /// later, then [`Ftl::warm_writes`] or [`Ftl::warm_lookups`], whose map loads then
    /// hit the cache. Out-of-range pages are ignored. Default: nothing.
    fn prefetch_map_first(&self, lpns: &[Lpn]) {
        let _ = lpns;
    }

    /// The second stage of [`Ftl::prefetch_map_first`]: read the level it loaded and
    /// start loading the next (a two-level map's leaf entries). Default: nothing.
    fn prefetch_map_second(&self, lpns: &[Lpn]) {
        let _ = lpns;
    }

    /// Logical pages the host addresses: [`Ftl::logical_pages`] unless the FTL keeps
    /// several copies of each (`ftl.replication`), then fewer. Default: all of them.
    fn host_pages(&self) -> u64 {
        self.logical_pages()
    }

    /// The other copy of host page `lpn` (< [`Ftl::host_pages`]) under replication: a
    /// logical page of its own, placed statically on another chip, which the host writes
    /// together with `lpn` and may read instead of it. Default: `None` (one copy).
    fn replica(&self, lpn: Lpn) -> Option<Lpn> {
        let _ = lpn;
        None
    }

    /// The plane static allocation assigns `lpn` to (the configured striping order).
    fn static_plane(&self, lpn: Lpn) -> PlaneId;

    /// Write `lpn` into `plane`: allocate the next free page there, map `lpn` to it and
    /// invalidate the previous copy. Fails without changing anything if the plane has no
    /// free page available to host writes.
    fn write(&mut self, lpn: Lpn, plane: PlaneId) -> Result<Ppa, FtlError>;

    /// Write a run of never-mapped pages, each to its static plane: for each page of
    /// `lpns` in order, exactly what `write(lpn, static_plane(lpn))` does when the page is
    /// unmapped and the plane takes the write, with its page appended to `out`. The
    /// untimed prefill's fast path, where one call replaces a write, a plane query and a
    /// GC check per page.
    ///
    /// Stops *before* a page the plain write would not take this way (mapped, a plane
    /// that refuses it, a write constraint other than [`WriteConstraint::Any`]) and
    /// *after* a page that leaves its plane needing GC ([`Ftl::needs_gc`]), so that the
    /// caller collects there before the next write. Returns the pages written, or `None`
    /// when this FTL has no such path (then the caller writes page by page; an FTL with
    /// replicas ([`Ftl::replica`]) must answer `None`). The caller programs the pages on
    /// the device. Default: `None`.
    fn write_unmapped_run(&mut self, lpns: &[Lpn], out: &mut Vec<Ppa>) -> Option<usize> {
        let _ = (lpns, out);
        None
    }

    /// [`Ftl::write_unmapped_run`] of pages the caller knows to be unmapped: every page of
    /// `lpns` has not been mapped since the FTL last held no valid page, and appears in
    /// at most one such run, once. The FTL may then skip looking each page up (one
    /// forward-map read per page; the untimed prefill and the preconditioning fill write
    /// millions). Same effects, pages and return value as `write_unmapped_run` on such
    /// pages. A mapped page among them is the caller's bug: debug builds panic on it.
    /// Default: [`Ftl::write_unmapped_run`].
    fn write_fresh_run(&mut self, lpns: &[Lpn], out: &mut Vec<Ppa>) -> Option<usize> {
        self.write_unmapped_run(lpns, out)
    }

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

    /// Untimed GC (preconditioning): run the plane's job in progress to its end, reporting
    /// the physical effect of every step to `sink` in order ([`GcStep::effect`]). The
    /// default calls [`Ftl::gc_step`] until [`GcStep::Done`]; an FTL may override it with
    /// a faster loop that leaves the same state and reports the same effects (the page
    /// FTL does: a test compares both on random devices). Nothing happens without a job.
    fn gc_finish_untimed(&mut self, plane: PlaneId, sink: &mut dyn FnMut(FlashEffect)) {
        gc_steps_untimed(self, plane, sink);
    }

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
    /// FTL cannot tell. The default derives it from [`Ftl::next_write_addr`].
    fn next_write_page(&self, plane: PlaneId) -> Option<u32> {
        self.next_write_addr(plane).map(|(_, page)| page)
    }

    /// Where a host write of `lpn` may go (see [`WriteConstraint`]). Default:
    /// [`WriteConstraint::Any`].
    fn write_constraint(&self, lpn: Lpn) -> WriteConstraint {
        let _ = lpn;
        WriteConstraint::Any
    }

    /// The exact block and page (within the block) the next host write passed `plane`
    /// will get if nothing else happens first — including which free block it would open
    /// and, under [`WriteConstraint::Die`], which plane of the die it lands on (then any
    /// plane of the die gives the same answer). `None` if the FTL cannot tell, or if that
    /// write would be refused. A `Some` answer is a promise (the conformance harness
    /// checks it); schedulers use it to predict multi-plane alignment. Default: `None`.
    fn next_write_addr(&self, plane: PlaneId) -> Option<(BlockId, u32)> {
        let _ = plane;
        None
    }

    /// True iff [`Ftl::write`] passed `plane` would succeed now (the same check, no state
    /// change). The default answers `true`, which is exact only for an FTL whose `write`
    /// never refuses; every FTL that can refuse a write must implement it.
    fn can_write(&self, plane: PlaneId) -> bool {
        let _ = plane;
        true
    }

    /// A lower bound on the number of consecutive host writes passed `plane` that
    /// `write` would accept now if nothing else happened in between, where every write
    /// sharing `plane`'s allocation frontier counts (under [`WriteConstraint::Die`]:
    /// writes passed any plane of the die). A bound, not exact, because an overwrite can
    /// free room (e.g. an LPN whose copy a GC job was about to move). The default,
    /// `can_write(plane)` as 0 or 1, is correct for every FTL but makes the default
    /// [`Ftl::write_group`] refuse groups with several writes to one plane.
    fn write_room(&self, plane: PlaneId) -> u64 {
        u64::from(self.can_write(plane))
    }

    /// Perform the host writes `writes` (`(lpn, plane)` pairs, in order) all or nothing:
    /// if every write can be accepted, perform them in order, push their pages to `out`
    /// (one per write, in order) and return `Ok`; otherwise change nothing (an
    /// implementation may count one refused write in [`FtlStats::host_writes_refused`])
    /// and return the refusal. The caller parks the group and
    /// retries after GC, or splits it into single writes. This is how a multi-plane
    /// program is allocated: all of its pages, or none.
    ///
    /// The default checks each write against [`Ftl::write_room`], counting the writes
    /// that share a frontier — the same plane, or under [`WriteConstraint::Die`] the same
    /// die — so several writes to one plane are only accepted if the room covers all of
    /// them; it then performs them with [`Ftl::write`].
    fn write_group(&mut self, writes: &[(Lpn, PlaneId)], out: &mut Vec<Ppa>) -> Result<(), FtlError> {
        let geometry = self.geometry();
        let key = |ftl: &Self, lpn: Lpn, plane: PlaneId| match ftl.write_constraint(lpn) {
            WriteConstraint::Die => FrontierKey::Die(geometry.die_of_plane(plane)),
            WriteConstraint::Plane(p) => FrontierKey::Plane(p),
            WriteConstraint::Any => FrontierKey::Plane(plane),
        };
        for (i, &(lpn, plane)) in writes.iter().enumerate() {
            let k = key(self, lpn, plane);
            let before = writes[..i].iter().filter(|&&(l, p)| key(self, l, p) == k).count() as u64;
            if before >= self.write_room(plane) {
                return Err(FtlError::NoFreePage { plane });
            }
        }
        for &(lpn, plane) in writes {
            let ppa = self.write(lpn, plane);
            out.push(ppa.expect("Ftl::write_room promised room for every write of the group"));
        }
        Ok(())
    }

    /// Preconditioning's steady-state test ([`crate::precondition()`]): the largest change
    /// of write amplification between consecutive overwrite windows, in parts per
    /// million, that counts as stable, given the configured `precondition.waf_epsilon`
    /// (`epsilon_ppm`) and the last window's WAF (`waf_ppm`). Default: `epsilon_ppm`, an
    /// absolute change (page-mapping FTLs, WAF of a few units). Block-level FTLs, whose
    /// WAF under uniform random overwrites is in the hundreds and whose windows vary by
    /// far more than any absolute epsilon, read it relative to the WAF.
    fn steady_waf_tolerance_ppm(&self, epsilon_ppm: u64, waf_ppm: u64) -> u64 {
        let _ = waf_ppm;
        epsilon_ppm
    }

    /// False only if [`Ftl::translation_reads`] never yields a page (the engine then
    /// skips asking, once per read). Default true, the safe answer for any FTL.
    fn has_translation_reads(&self) -> bool {
        true
    }

    /// Pages whose spare area (out-of-band bytes) must be read from flash before the
    /// answer of [`Ftl::lookup`]`(lpn)` is known — e.g. NFTL scans the spare areas of the
    /// LPN's replacement block to find its newest copy. Appended to `out` in the order
    /// they must be read; the engine issues them as timed reads before the data read.
    /// Default: none (page-mapping FTLs keep the whole map in DRAM).
    fn translation_reads(&self, lpn: Lpn, out: &mut Vec<Ppa>) {
        let _ = (lpn, out);
    }

    /// Perform the translation of a host read of `lpn` that the caller is about to serve:
    /// append the pages to read first, exactly as [`Ftl::translation_reads`] lists them
    /// just before, and update the FTL's mapping cache (a cached mapping counts the hit
    /// or miss and loads the entry; an eviction may queue a translation-page write-back).
    /// Returns the plane on which it queued flash work, if any: the caller then checks
    /// that plane's [`Ftl::needs_gc`] and runs its job, as after a write. Call it once per
    /// host read the flash serves. Default: [`Ftl::translation_reads`], no state change.
    fn translate(&mut self, lpn: Lpn, out: &mut Vec<Ppa>) -> Option<PlaneId> {
        self.translation_reads(lpn, out);
        None
    }

    /// False only if [`Ftl::translate_write`] never yields a page (asked once; the
    /// engine then skips the step for every write). Default false.
    fn has_write_translation_reads(&self) -> bool {
        false
    }

    /// The translation step of a host write of `lpn` the caller is about to program:
    /// append the pages it must read before the write may update its mapping — a cached
    /// mapping's translation page when the entry misses and the page is on flash, as in
    /// MQSim, whose write misses wait for that read — and count them. The write's own
    /// mapping update happens in [`Ftl::write`]. Call it at most once per host write
    /// page. Default: nothing to read.
    fn translate_write(&mut self, lpn: Lpn, out: &mut Vec<Ppa>) {
        let _ = (lpn, out);
    }
}

/// What the default [`Ftl::write_group`] counts writes against: one allocation frontier.
#[derive(Clone, Copy, PartialEq, Eq)]
enum FrontierKey {
    Plane(PlaneId),
    Die(DieId),
}
