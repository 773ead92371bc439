//! The page FTL's side of the cached mapping (`ftl.mapping = "cached"`): where
//! translation pages live and how their flash operations are issued. The cache itself is
//! [`crate::cmt::Cmt`]; see docs/ftl.md, "Cached mapping", for the protocol.
//!
//! * Translation page `t` is the internal logical page `logical_pages + t`: its
//!   forward-map entry is its GTD entry, its reverse-map entry names it, so GC relocates
//!   it like data (into the plane's translation block, counted as
//!   [`FtlStats::translation_gc_moves`]).
//! * A dirty eviction queues a write-back of its translation page on a plane: the
//!   written plane for a host write (a write accepted with a margin ≥ 1 above the
//!   reserve leaves a margin ≥ −1 after it and its write-back, which still covers a GC
//!   job); for a host read, the static plane of LPN `t` (as MQSim places translation
//!   writes) if it has room above its reserve, else the plane with the most such room.
//!   Static striping spreads host writes, hence translation pages, over the planes. [`Ftl::needs_gc`] is true while write-backs are queued, and
//!   [`Ftl::gc_begin`] then starts a **write-back job** (unless the plane is short of
//!   free blocks and has a victim: reclaiming comes first), whose steps are
//!   [`GcStep::Move`] of the translation page to a new page of the plane's translation
//!   block (read the old version, program the merged one) or, for a page never written,
//!   [`GcStep::Program`].
//! * Reserve: a plane keeps two blocks' worth of free pages plus its pending work
//!   (GC moves and queued write-backs), one block more than under the ideal mapping,
//!   because the translation block is a second open block whose rest host and GC data
//!   cannot use; the GC threshold is at least 3 blocks for the same reason.

use lamina_nand_model::{BlockId, PlaneId, Ppa};

use super::{GcState, NONE, PageFtl, UNMAPPED};
use crate::api::{Ftl, FtlError, FtlStats, GcJob, GcStep, Lpn};
use crate::cmt::Cmt;

impl PageFtl {
    /// Test hook: the same FTL with `entries` mapping entries per translation page
    /// instead of `page_size / MAPPING_ENTRY_BYTES`, so that small test devices (pages of
    /// at least 512 bytes) have many translation pages. Only on a fresh FTL with
    /// `ftl.mapping = "cached"`; the capacity check of validation still assumes the
    /// geometry's count, so give the device room (over-provisioning) for the extra pages.
    pub fn with_translation_page_entries(mut self, entries: u64) -> PageFtl {
        assert!(self.stats == FtlStats::default(), "only on a fresh FTL");
        let planes = self.planes.len() as u32;
        let logical = self.cfg.logical_pages;
        let c = self.cmt.as_mut().expect("ftl.mapping = \"cached\"");
        **c = Cmt::new(self.cfg.config.cmt_capacity(&self.geometry), logical, entries, planes);
        self.map = crate::lpn_map::LpnMap::zeroed(logical + c.tpages());
        self
    }

    /// Free pages a plane keeps besides its pending work before it refuses host writes.
    #[inline]
    pub(super) fn reserve(&self) -> u64 {
        self.ppb as u64 * (1 + self.cmt.is_some() as u64)
    }

    /// Translation-page write-backs queued on `plane` (0 under the ideal mapping).
    #[inline]
    pub(super) fn queued_writebacks(&self, plane: usize) -> u64 {
        self.cmt.as_ref().map_or(0, |c| c.queued_on(plane))
    }

    /// A host write mapped `lpn` to `ppa` on `plane`: update the CMT and queue the
    /// write-back its eviction needs, if any, on that plane (the engine checks a written
    /// plane for GC after the program, so the job starts at once).
    #[inline]
    pub(super) fn cmt_write(&mut self, lpn: u64, ppa: u32, plane: usize) {
        if let Some(c) = self.cmt.as_mut()
            && let Some(t) = c.write(lpn, ppa)
        {
            c.queue(t, plane);
        }
    }

    /// GC or a trim changed `lpn`'s mapping to `ppa` (no host access to the CMT).
    #[inline]
    pub(super) fn cmt_relocate(&mut self, lpn: u64, ppa: u32) {
        if let Some(c) = self.cmt.as_mut() {
            c.relocate(lpn, ppa);
        }
    }

    /// The translation page a host read of `lpn` must read first: its GTD entry if the
    /// entry is not cached and the page is on flash (a page never written holds no
    /// mapping yet and needs no read, as in MQSim).
    pub(super) fn translation_page_to_read(&self, lpn: u64) -> Option<u32> {
        let c = self.cmt.as_ref()?;
        if c.contains(lpn) {
            return None;
        }
        let gtd = self.map_get(self.cfg.logical_pages + c.tpage_of(lpn));
        (gtd != UNMAPPED).then_some(gtd)
    }

    /// [`Ftl::translate_write`]: the translation page a host write of `lpn` reads before
    /// it updates its entry (a miss whose page is on flash), counted as a
    /// translation-page read. The CMT itself changes only at the write
    /// ([`PageFtl::cmt_write`]), which counts the hit or miss.
    pub(super) fn cmt_write_miss_read(&mut self, lpn: u64, out: &mut Vec<Ppa>) {
        if let Some(ppa) = self.translation_page_to_read(lpn) {
            out.push(Ppa(ppa as u64));
            self.stats.translation_page_reads += 1;
        }
    }

    /// [`Ftl::translate`]: list the translation read, then access the CMT.
    pub(super) fn cmt_read(&mut self, lpn: u64, out: &mut Vec<Ppa>) -> Option<PlaneId> {
        self.cmt.as_ref()?;
        assert!(lpn < self.cfg.logical_pages, "{} out of range", Lpn(lpn));
        let read = self.translation_page_to_read(lpn);
        if let Some(ppa) = read {
            out.push(Ppa(ppa as u64));
            self.stats.translation_page_reads += 1;
        }
        let t = self.cmt.as_mut()?.read(lpn)?;
        let plane = self.read_writeback_plane(t);
        self.cmt.as_mut().expect("checked").queue(t, plane);
        Some(PlaneId(plane as u32))
    }

    /// Where a read's eviction writes translation page `t` back: the static plane of
    /// LPN `t` (MQSim allocates a translation write's plane as a user write's, with the
    /// translation page number as its address) if it has room above its reserve and
    /// pending work, else the plane with the most such room (ties: the lowest index).
    fn read_writeback_plane(&self, t: u64) -> usize {
        let margin = |p: usize| self.room(p).saturating_sub(self.reserve() + self.pending(p));
        let home = self.static_plane(Lpn(t % self.cfg.logical_pages)).idx();
        if margin(home) > 0 {
            return home;
        }
        (0..self.planes.len()).rev().max_by_key(|&p| margin(p)).expect("a plane")
    }

    /// Start a write-back job on `plane` if write-backs are queued there and reclaiming
    /// space cannot come first (the plane has its free blocks, or no victim).
    pub(super) fn writeback_begin(&mut self, plane: usize) -> Option<GcJob> {
        let queued = self.queued_writebacks(plane);
        if queued == 0 || (self.short_of_blocks(plane) && self.gc_can_progress(plane)) {
            return None;
        }
        self.planes[plane].gc = Some(GcState { victim: NONE, next_page: 0, erased: true });
        let first = BlockId(plane as u32 * self.blocks_per_plane);
        Some(GcJob { victim: first, valid_pages: queued as u32, invalid_pages: 0 })
    }

    fn short_of_blocks(&self, plane: usize) -> bool {
        self.free_count(plane) < self.cfg.gc_threshold_blocks
    }

    /// The next step of `plane`'s write-back job. It ends early when the plane runs short
    /// of free blocks and has a victim, so that GC reclaims first.
    pub(super) fn writeback_step(&mut self, plane: usize) -> GcStep {
        let next = if self.short_of_blocks(plane) && self.gc_can_progress(plane) {
            None
        } else {
            self.cmt.as_mut().expect("write-back job without a CMT").pop_queued(plane)
        };
        let Some(t) = next else {
            self.planes[plane].gc = None;
            return GcStep::Done;
        };
        let lpn = self.cfg.logical_pages + t;
        let old = self.map_get(lpn);
        if old != UNMAPPED {
            self.invalidate(old);
        }
        let to = self.program_translation(plane, lpn);
        self.map_set(lpn, to);
        self.stats.translation_page_writes += 1;
        if old == UNMAPPED {
            return GcStep::Program { lpn: Lpn(lpn), to: Ppa(to as u64) };
        }
        self.stats.translation_page_reads += 1;
        GcStep::Move {
            lpn: Lpn(lpn),
            from: Ppa(old as u64),
            to: Ppa(to as u64),
            copyback: false,
            batch_with_next: false,
        }
    }

    /// GC of `job`'s victim found translation page `lpn` at `from` (page `off`, already
    /// invalidated): move it to the plane's translation block.
    pub(super) fn move_translation_page(
        &mut self,
        plane: usize,
        lpn: u64,
        from: u32,
        job: GcState,
        off: u32,
    ) -> GcStep {
        let to = self.program_translation(plane, lpn);
        self.map_set(lpn, to);
        self.planes[plane].gc = Some(GcState { next_page: off + 1, ..job });
        self.stats.translation_gc_moves += 1;
        GcStep::Move {
            lpn: Lpn(lpn),
            from: Ppa(from as u64),
            to: Ppa(to as u64),
            copyback: false,
            batch_with_next: false,
        }
    }

    /// Program the next page of `plane`'s translation block with `lpn`.
    fn program_translation(&mut self, plane: usize, lpn: u64) -> u32 {
        let p = &mut self.planes[plane];
        std::mem::swap(&mut p.active, &mut p.trans_active);
        let ppa = self.program(plane, lpn, false);
        let p = &mut self.planes[plane];
        std::mem::swap(&mut p.active, &mut p.trans_active);
        ppa
    }

    /// Cached mapping: refuse a write group up front unless every write fits (the CMT
    /// cannot be rolled back, so the group must not fail half-way). Counts the refusal.
    pub(super) fn cached_group_fits(&mut self, writes: &[(Lpn, PlaneId)]) -> Result<(), FtlError> {
        if self.cmt.is_none() {
            return Ok(());
        }
        for (i, &(_, plane)) in writes.iter().enumerate() {
            let before = writes[..i].iter().filter(|&&(_, p)| p == plane).count() as u64;
            if before >= self.write_room(plane) {
                self.stats =
                    FtlStats { host_writes_refused: self.stats.host_writes_refused + 1, ..self.stats };
                return Err(FtlError::NoFreePage { plane });
            }
        }
        Ok(())
    }
}
