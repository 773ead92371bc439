//! The conformance harness on the MBM and TBM FTLs in every configuration they accept
//! (MBM's write strategy on and off, every tie-break, wear levelling and copyback on and
//! off, 1–4 planes per die, several dies, static and dynamic placement), through GC; and
//! the layout properties the two exist for: host writes of a die at one (block index,
//! page) on its planes, GC keeping that alignment, TBM's twin erases.

use lamina_ftl::testing::{ConformanceConfig, check_kind_conformance, slc_geometry};
use lamina_ftl::{Ftl, FtlConfig, FtlKind, GcStep, GcThreshold, Lpn, PageFtl, TbmFtl, TieBreak};
use lamina_nand_model::{Geometry, PlaneId, Ppa};

fn cfg(kind: FtlKind, op: f64) -> FtlConfig {
    FtlConfig { kind, overprovisioning: op, gc_threshold: GcThreshold::FreeBlocks(2), ..FtlConfig::default() }
}

fn conform(g: &Geometry, c: &FtlConfig, conf: ConformanceConfig) {
    if let Err(f) = check_kind_conformance(g, c, &conf) {
        panic!("{:?} ({c:?}): {f}", c.kind);
    }
}

#[test]
fn mbm_and_tbm_conform_in_every_configuration() {
    let shapes =
        [(1, 1, 1, 2, 8, 4), (1, 2, 1, 4, 8, 2), (2, 1, 2, 2, 10, 3), (1, 1, 1, 1, 8, 4), (1, 1, 2, 3, 9, 2)];
    let mut seed = 0;
    for (ch, w, d, p, b, pg) in shapes {
        let g = slc_geometry(ch, w, d, p, b, pg);
        for kind in [FtlKind::Mbm, FtlKind::Tbm] {
            for tie in [TieBreak::LowestId, TieBreak::Oldest, TieBreak::LeastWorn] {
                for (wear_leveling, copyback, mbm_ws) in
                    [(true, false, true), (false, true, false), (true, true, true)]
                {
                    let c = FtlConfig {
                        victim_tie_break: tie,
                        wear_leveling,
                        copyback,
                        mbm_ws: mbm_ws || kind != FtlKind::Mbm,
                        ..cfg(kind, 0.35)
                    };
                    seed += 1;
                    let conf = ConformanceConfig {
                        cases: 12,
                        ops: 100..700,
                        seed,
                        hot_lpns: 32,
                        dynamic_placement: seed % 3 == 0,
                        ..ConformanceConfig::default()
                    };
                    conform(&g, &c, conf);
                }
            }
        }
    }
}

/// Run GC jobs to completion on every plane that needs one, collecting their steps.
fn gc_all(ftl: &mut dyn Ftl, steps: &mut Vec<GcStep>) {
    for q in 0..ftl.geometry().total_planes() {
        let q = PlaneId(q);
        while ftl.needs_gc(q) && ftl.gc_begin(q).is_some() {
            loop {
                match ftl.gc_step(q) {
                    GcStep::Done => break,
                    s => steps.push(s),
                }
            }
        }
    }
}

/// Drive an FTL with a sequential fill then uniform random overwrites at the static
/// planes, running GC first wherever it is needed; returns every GC step.
fn drive(ftl: &mut dyn Ftl, writes: u64) -> Vec<GcStep> {
    let mut steps = Vec::new();
    let n = ftl.logical_pages();
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for i in 0..writes {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let lpn = Lpn(if i < n { i } else { x % n });
        gc_all(ftl, &mut steps);
        ftl.write(lpn, ftl.static_plane(lpn)).unwrap_or_else(|e| panic!("write {i}: {e}"));
    }
    steps
}

/// Of all pairs of consecutive pages: those on successive planes at one page offset,
/// and of those the ones also at one block index (a legal multi-plane program).
fn aligned_pairs(g: &Geometry, pages: &[Ppa]) -> (usize, usize, usize) {
    let (mut offset, mut block) = (0, 0);
    for w in pages.windows(2) {
        let (a, b) = (g.addr(w[0]), g.addr(w[1]));
        if a.page == b.page && b.plane == a.plane + 1 {
            offset += 1;
            block += (a.block == b.block) as usize;
        }
    }
    (offset, block, pages.len() - 1)
}

#[test]
fn host_writes_stay_aligned_through_gc_and_tbm_erases_twins() {
    let g = slc_geometry(1, 1, 1, 4, 16, 8);
    let c = |kind| cfg(kind, 0.25);
    let mut mbm = lamina_ftl::mbm::build(g.clone(), &c(FtlKind::Mbm)).unwrap();
    let mut tbm = TbmFtl::new(g.clone(), &c(FtlKind::Tbm)).unwrap();
    for ftl in [&mut mbm as &mut dyn Ftl, &mut tbm] {
        drive(ftl, 4000);
        assert!(ftl.stats().gc_jobs > 10);
        // After all that GC, 64 more host writes still fill the planes at one offset.
        let mut pages = Vec::new();
        for l in 0..64 {
            gc_all(ftl, &mut Vec::new());
            pages.push(ftl.write(Lpn(l), PlaneId(0)).unwrap_or_else(|e| panic!("{e}")));
        }
        let (offset, block, of) = aligned_pairs(&g, &pages);
        // Each row of 4 planes gives 3 pairs at one offset; row changes give none.
        assert!(offset * 4 >= of * 3 - 8, "{offset} of {of}");
        if ftl.write_constraint(Lpn(0)) == lamina_ftl::WriteConstraint::Die
            && ftl.stats().misaligned_rows == 0
        {
            // TBM's twins are one block index by construction.
            assert_eq!(block, offset);
        }
    }
    // MBM's per-plane GC frees block indices plane by plane: under uniform random
    // overwrites on this small device its rows lose their common block index (the page
    // offset stays common); TBM's never do.
    assert!(mbm.stats().misaligned_rows > 0);
    assert_eq!(tbm.stats().misaligned_rows, 0);
    // TBM: every erase is part of a twin chain (4 flagged-linked erases of one index).
    let mut tbm = TbmFtl::new(g.clone(), &c(FtlKind::Tbm)).unwrap();
    let steps = drive(&mut tbm, 4000);
    let erases: Vec<(u32, bool)> = steps
        .iter()
        .filter_map(|s| match *s {
            GcStep::Erase { block, batch_with_next } => Some((block.0, batch_with_next)),
            _ => None,
        })
        .collect();
    assert!(!erases.is_empty() && erases.len() % 4 == 0);
    for chain in erases.chunks(4) {
        let index = chain[0].0 % 16;
        assert!(
            chain.iter().enumerate().all(|(i, &(b, flag))| b == i as u32 * 16 + index && flag == (i < 3))
        );
    }
    // Its moves spread over the planes equally, and pairs at one destination page are flagged.
    let mut per_plane = [0u64; 4];
    let mut flagged = 0;
    for s in &steps {
        if let GcStep::Move { to, batch_with_next, .. } = *s {
            per_plane[g.addr(to).plane as usize] += 1;
            flagged += batch_with_next as u64;
        }
    }
    let (lo, hi) = (per_plane.iter().min().unwrap(), per_plane.iter().max().unwrap());
    assert!(hi - lo <= 1 + hi / 50, "{per_plane:?}");
    assert!(flagged > 0);
}

#[test]
fn mbm_write_strategy_and_page_ftl_die_aligned_allocation_agree() {
    // MBM's WS is the page FTL's die-aligned allocation: same calls, same pages.
    let g = slc_geometry(1, 1, 2, 2, 12, 4);
    let mut mbm = lamina_ftl::mbm::build(g.clone(), &cfg(FtlKind::Mbm, 0.3)).unwrap();
    let page_cfg = FtlConfig { allocation: lamina_ftl::Allocation::DieAligned, ..cfg(FtlKind::Page, 0.3) };
    let mut page = PageFtl::new(g, &page_cfg).unwrap();
    assert_eq!(drive(&mut mbm, 3000), drive(&mut page, 3000));
    assert_eq!(mbm.stats(), page.stats());
}
