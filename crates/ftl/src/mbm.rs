//! MBM's parallelism-enhanced write strategy (WS) as an FTL (`ftl.kind = "mbm"`).
//!
//! Li et al., "Maximizing Bandwidth Management FTL Based on Read and Write Asymmetry of
//! Flash Memory", §IV-A and Fig. 5: every plane keeps **two** active blocks, one for host
//! writes and one for GC moves. Host pages are assigned round-robin over the planes of a
//! die, so the last written page of the host active blocks stays the same on every plane
//! and queued writes of a die can always be programmed as one multi-plane command; GC is
//! triggered per plane by its own free space and migrates valid pages into the plane's
//! GC active block "instead of the block being written", so it never shifts the host
//! frontier. The space cost is the same as migrating into the host block.
//!
//! That is exactly the page FTL's die-aligned allocation ([`crate::Allocation::DieAligned`],
//! see [`crate::page`]): one host row per die at one (block index, page) across its
//! planes, [`WriteConstraint::Die`] so that the FTL picks the plane, a separate GC block
//! per plane. [`MbmFtl`] is therefore a [`PageFtl`] built with that allocation; with
//! `ftl.mbm_ws = false` (the ablation) it is the page FTL's per-plane allocation, one
//! active block per plane shared by host writes and GC moves.
//!
//! What is not here: MBM's read strategy (RS: conditional multi-plane reads, a
//! read-intensive-area layout and remapping), `Channel_Max_Subs` (how many sub-requests a
//! transaction takes) and MCS (chip choice) are scheduling and placement decisions that
//! belong to the scheduler and placement crates, not to the mapping.
//!
//! GC moves: a GC job belongs to one plane and moves pages into that plane's GC block, so
//! two consecutive moves of one job are never on sibling planes and are not flagged
//! `batch_with_next`; the engine still issues the aligned moves of several jobs of a die
//! (sibling planes, same source and destination offsets) as one multi-plane command.

use lamina_nand_model::{BlockId, Geometry, PlaneId, Ppa};

use crate::api::{BlockInfo, Ftl, FtlError, FtlStats, GcJob, GcStep, Lpn, PageCounts, WriteConstraint};
use crate::config::{Allocation, FtlConfig, FtlConfigError, FtlKind};
use crate::page::PageFtl;

/// The MBM FTL: a [`PageFtl`] with MBM's write strategy. See the [module docs](self).
#[derive(Clone, Debug)]
pub struct MbmFtl {
    inner: PageFtl,
}

impl MbmFtl {
    /// Build the FTL for `geometry`, validating `config` (as `ftl.kind = "mbm"`) against
    /// it. `ftl.allocation` is not an MBM option: `ftl.mbm_ws` chooses the allocation.
    pub fn new(geometry: Geometry, config: &FtlConfig) -> Result<MbmFtl, FtlConfigError> {
        let cfg = FtlConfig { kind: FtlKind::Mbm, ..config.clone() };
        cfg.validate(&geometry)?;
        let allocation = if cfg.mbm_ws { Allocation::DieAligned } else { Allocation::PerPlane };
        let page = FtlConfig { kind: FtlKind::Page, allocation, mbm_ws: true, ..cfg };
        Ok(MbmFtl { inner: PageFtl::new(geometry, &page)? })
    }

    /// True if MBM's write strategy is on (`ftl.mbm_ws`).
    pub fn write_strategy(&self) -> bool {
        self.inner.config().config().allocation == Allocation::DieAligned
    }

    /// The page FTL underneath.
    pub fn page_ftl(&self) -> &PageFtl {
        &self.inner
    }
}

impl Ftl for MbmFtl {
    fn geometry(&self) -> &Geometry {
        self.inner.geometry()
    }

    fn logical_pages(&self) -> u64 {
        self.inner.logical_pages()
    }

    fn lookup(&self, lpn: Lpn) -> Option<Ppa> {
        self.inner.lookup(lpn)
    }

    fn static_plane(&self, lpn: Lpn) -> PlaneId {
        self.inner.static_plane(lpn)
    }

    fn write(&mut self, lpn: Lpn, plane: PlaneId) -> Result<Ppa, FtlError> {
        self.inner.write(lpn, plane)
    }

    fn trim(&mut self, lpn: Lpn) -> Option<Ppa> {
        self.inner.trim(lpn)
    }

    fn needs_gc(&self, plane: PlaneId) -> bool {
        self.inner.needs_gc(plane)
    }

    fn gc_in_progress(&self, plane: PlaneId) -> bool {
        self.inner.gc_in_progress(plane)
    }

    fn gc_begin(&mut self, plane: PlaneId) -> Option<GcJob> {
        self.inner.gc_begin(plane)
    }

    fn gc_step(&mut self, plane: PlaneId) -> GcStep {
        self.inner.gc_step(plane)
    }

    fn free_blocks(&self, plane: PlaneId) -> u32 {
        self.inner.free_blocks(plane)
    }

    fn page_counts(&self, plane: PlaneId) -> PageCounts {
        self.inner.page_counts(plane)
    }

    fn page_lpn(&self, ppa: Ppa) -> Option<Lpn> {
        self.inner.page_lpn(ppa)
    }

    fn block_info(&self, block: BlockId) -> BlockInfo {
        self.inner.block_info(block)
    }

    fn stats(&self) -> FtlStats {
        self.inner.stats()
    }

    fn next_write_page(&self, plane: PlaneId) -> Option<u32> {
        self.inner.next_write_page(plane)
    }

    fn write_constraint(&self, lpn: Lpn) -> WriteConstraint {
        self.inner.write_constraint(lpn)
    }

    fn next_write_addr(&self, plane: PlaneId) -> Option<(BlockId, u32)> {
        self.inner.next_write_addr(plane)
    }

    fn can_write(&self, plane: PlaneId) -> bool {
        self.inner.can_write(plane)
    }

    fn write_room(&self, plane: PlaneId) -> u64 {
        self.inner.write_room(plane)
    }

    fn write_group(&mut self, writes: &[(Lpn, PlaneId)], out: &mut Vec<Ppa>) -> Result<(), FtlError> {
        self.inner.write_group(writes, out)
    }

    fn has_translation_reads(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::GcThreshold;

    fn cfg(ws: bool) -> FtlConfig {
        FtlConfig {
            kind: FtlKind::Mbm,
            overprovisioning: 0.3,
            gc_threshold: GcThreshold::FreeBlocks(2),
            mbm_ws: ws,
            ..FtlConfig::default()
        }
    }

    #[test]
    fn host_writes_of_a_die_fill_its_planes_at_one_offset() {
        let g = crate::testing::slc_geometry(1, 1, 1, 4, 8, 4);
        let mut ftl = MbmFtl::new(g.clone(), &cfg(true)).unwrap();
        assert!(ftl.write_strategy());
        assert_eq!(ftl.write_constraint(Lpn(0)), WriteConstraint::Die);
        let pages: Vec<Ppa> = (0..8).map(|l| ftl.write(Lpn(l), PlaneId(0)).unwrap()).collect();
        for (i, p) in pages.iter().enumerate() {
            let a = g.addr(*p);
            assert_eq!((a.plane, a.page), (i as u32 % 4, i as u32 / 4), "write {i}");
            assert_eq!(a.block, g.addr(pages[0]).block);
        }
    }

    #[test]
    fn the_ablation_is_per_plane_allocation_and_the_option_belongs_to_mbm() {
        let g = crate::testing::slc_geometry(1, 1, 1, 2, 8, 4);
        let ftl = MbmFtl::new(g.clone(), &cfg(false)).unwrap();
        assert!(!ftl.write_strategy());
        assert_eq!(ftl.write_constraint(Lpn(0)), WriteConstraint::Any);
        let e = FtlConfig { kind: FtlKind::Page, ..cfg(false) }.validate(&g).unwrap_err();
        assert_eq!(e.key, "ftl.mbm_ws");
        assert!(e.reason.contains("only of mbm"), "{e}");
        let e = MbmFtl::new(g, &FtlConfig { allocation: Allocation::DieAligned, ..cfg(true) }).unwrap_err();
        assert_eq!(e.key, "ftl.allocation");
    }
}
