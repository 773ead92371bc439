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
//! planes, [`WriteConstraint::Die`](crate::WriteConstraint::Die) so that the FTL picks the plane, a separate GC block
//! per plane. The MBM FTL is therefore a [`PageFtl`] built with that allocation ([`build`]); with
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

use lamina_nand_model::Geometry;

use crate::config::{Allocation, FtlConfig, FtlConfigError, FtlKind};
use crate::page::PageFtl;

/// Build the MBM FTL for `geometry`: validate `config` as `ftl.kind = "mbm"` (so that
/// `ftl.allocation`, not an MBM option, is refused naming the key), then build the
/// [`PageFtl`] it is — die-aligned allocation with `ftl.mbm_ws = true`, per-plane
/// allocation with `false`. See the [module docs](self).
pub fn build(geometry: Geometry, config: &FtlConfig) -> Result<PageFtl, FtlConfigError> {
    let cfg = FtlConfig { kind: FtlKind::Mbm, ..config.clone() };
    cfg.validate(&geometry)?;
    let allocation = if cfg.mbm_ws { Allocation::DieAligned } else { Allocation::PerPlane };
    let slack = cfg.mbm_align_slack_percent;
    let page = FtlConfig {
        kind: FtlKind::Page,
        allocation,
        mbm_ws: true,
        mbm_align_slack_percent: crate::config::DEFAULT_ALIGN_SLACK_PERCENT,
        ..cfg
    };
    let mut ftl = PageFtl::new(geometry, &page)?;
    ftl.set_align_slack_percent(slack);
    Ok(ftl)
}

/// True if `ftl` runs MBM's write strategy (die-aligned allocation).
pub fn write_strategy(ftl: &PageFtl) -> bool {
    ftl.config().config().allocation == Allocation::DieAligned
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::Lpn;
    use crate::api::{Ftl, WriteConstraint};
    use crate::config::GcThreshold;
    use lamina_nand_model::{PlaneId, Ppa};

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
        let mut ftl = build(g.clone(), &cfg(true)).unwrap();
        assert!(write_strategy(&ftl));
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
        let ftl = build(g.clone(), &cfg(false)).unwrap();
        assert!(!write_strategy(&ftl));
        assert_eq!(ftl.write_constraint(Lpn(0)), WriteConstraint::Any);
        let e = FtlConfig { kind: FtlKind::Page, ..cfg(false) }.validate(&g).unwrap_err();
        assert_eq!(e.key, "ftl.mbm_ws");
        assert!(e.reason.contains("only of mbm"), "{e}");
        let e = build(g, &FtlConfig { allocation: Allocation::DieAligned, ..cfg(true) }).unwrap_err();
        assert_eq!(e.key, "ftl.allocation");
    }
}
