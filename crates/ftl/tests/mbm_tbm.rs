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
                        // The victim slack, greedy to widest (mbm only).
                        mbm_align_slack_percent: if kind == FtlKind::Mbm {
                            [25, 0, 100][(seed % 3) as usize]
                        } else {
                            25
                        },
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

/// Fuzzer-like byte inputs: the first three bytes choose the kind (mbm with or without
/// its write strategy, tbm), the shape (1–2 channels and dies, 1–4 planes per die, 6–13
/// blocks, 1–128 pages), tie-break, wear levelling, copyback and striping order; the rest
/// are operations (`testing::decode_ops`), many of them GC steps interleaved with writes.
#[test]
fn byte_chosen_mbm_and_tbm_conform() {
    use lamina_ftl::StripeOrder;
    use lamina_ftl::testing::{fuzz_like_inputs, run_bytes};
    let mut built = [0u32; 3];
    for bytes in fuzz_like_inputs(33, 300) {
        let (c, rest) = bytes.split_at(3.min(bytes.len()));
        if c.len() < 3 {
            continue;
        }
        // Bits of the first two bytes: channels, dies, planes per die, blocks, pages.
        let bit = |byte: u8, shift: u8, mask: u8| u32::from(byte >> shift & mask);
        let pages = [1, 2, 4, 8, 16, 128, 3, 5][bit(c[1], 3, 7) as usize];
        let (channels, dies, planes) = (1 + bit(c[0], 2, 1), 1 + bit(c[0], 3, 1), 1 + bit(c[0], 4, 3));
        let g = slc_geometry(channels, 1, dies, planes, 6 + bit(c[1], 0, 7), pages);
        let which = (c[0] & 3) as usize % 3;
        let base = FtlConfig {
            kind: if which == 2 { FtlKind::Tbm } else { FtlKind::Mbm },
            mbm_ws: which != 1,
            gc_threshold: GcThreshold::FreeBlocks(2 + (c[1] >> 6 & 1) as u32),
            victim_tie_break: [TieBreak::LowestId, TieBreak::Oldest, TieBreak::LeastWorn]
                [(c[2] % 3) as usize],
            wear_leveling: c[2] & 4 != 0,
            copyback: c[2] & 8 != 0,
            striping_order: StripeOrder::all()[(c[2] >> 4) as usize % 24],
            ..FtlConfig::default()
        };
        let Some(cfg) = [0.1, 0.2, 0.3, 0.45, 0.6, 0.75, 0.85]
            .iter()
            .map(|&op| FtlConfig { overprovisioning: op, ..base.clone() })
            .find(|cfg| cfg.validate(&g).is_ok())
        else {
            continue;
        };
        built[which] += 1;
        let result = match which {
            2 => run_bytes(TbmFtl::new(g, &cfg).unwrap(), rest),
            _ => run_bytes(lamina_ftl::mbm::build(g, &cfg).unwrap(), rest),
        };
        if let Err(f) = result {
            panic!("config bytes {c:?} ({cfg:?}): {f}");
        }
    }
    assert!(built.iter().all(|&n| n > 60), "{built:?}");
}

/// Kind options: `ftl.mbm_ws` belongs to mbm, `ftl.allocation` and `ftl.replication` to
/// the page FTL; each is refused under the other kinds with an error naming its key.
#[test]
fn kind_options_are_refused_under_other_kinds_naming_the_key() {
    let g = slc_geometry(2, 1, 1, 2, 16, 4);
    let no_ws = FtlConfig { mbm_ws: false, ..cfg(FtlKind::Tbm, 0.3) };
    for kind in [FtlKind::Page, FtlKind::Nftl, FtlKind::Superblock, FtlKind::Tbm] {
        let e = kind.build(g.clone(), &no_ws).err().expect("refused");
        assert_eq!(e.key, "ftl.mbm_ws", "{kind:?}");
        assert!(e.to_string().contains("only of mbm"), "{e}");
    }
    let aligned = FtlConfig { allocation: lamina_ftl::Allocation::DieAligned, ..cfg(FtlKind::Page, 0.3) };
    let rain1 = FtlConfig { replication: lamina_ftl::Replication::Rain1, ..cfg(FtlKind::Page, 0.3) };
    for kind in [FtlKind::Mbm, FtlKind::Tbm] {
        assert_eq!(kind.build(g.clone(), &aligned).err().expect("refused").key, "ftl.allocation");
        assert_eq!(kind.build(g.clone(), &rain1).err().expect("refused").key, "ftl.replication");
        let oldest = FtlConfig { victim_tie_break: TieBreak::Oldest, ..cfg(kind, 0.3) };
        assert!(kind.build(g.clone(), &oldest).is_ok());
    }
    assert!(FtlKind::Mbm.build(g, &no_ws).is_ok());
}

/// The `mbm` preset's device shrunk to one chip of 2 dies × `planes` planes × 8 blocks ×
/// 4 pages: the harness mirrors every program and erase on a real `Device`, whose physics
/// (erase before program, pages in order) must accept them and whose stored tags must be
/// the versions the moves copy.
#[test]
fn mbm_and_tbm_conform_on_a_real_device() {
    use lamina_ftl::testing::check_device_conformance;
    for planes in [2, 4] {
        let mut c = lamina_nand_model::preset("mbm").unwrap();
        c.geometry.channels = 1;
        c.geometry.chips_per_channel = 1;
        c.geometry.dies_per_chip = 2;
        c.geometry.planes_per_die = planes;
        c.geometry.blocks_per_plane = 8;
        c.geometry.pages_per_block = 4;
        let spec = c.validate().unwrap();
        for (kind, mbm_ws) in [(FtlKind::Mbm, true), (FtlKind::Mbm, false), (FtlKind::Tbm, true)] {
            let cfg = FtlConfig { mbm_ws, copyback: planes == 4, ..cfg(kind, 0.35) };
            let conf =
                ConformanceConfig { cases: 16, ops: 100..600, seed: 5, hot_lpns: 24, ..Default::default() };
            if let Err(f) = check_device_conformance(&spec, &cfg, &conf) {
                panic!("{kind:?} mbm_ws {mbm_ws} on {planes} planes: {f}");
            }
        }
    }
}

/// `ftl.mbm_align_slack_percent` is the rule that re-creates a block index free on every
/// plane after per-plane GC: under uniform random overwrites (2 dies of 2 planes, 64
/// blocks of 16 pages) more slack opens more rows aligned, at the price of more GC moves;
/// 0 is plain greedy GC. Measured: aligned / misaligned rows 142 / 109 at 0 %, 174 / 77
/// at 25 % (the default), 214 / 37 at 50 %.
#[test]
fn victim_slack_recreates_aligned_rows() {
    let g = slc_geometry(1, 1, 2, 2, 64, 16);
    let run = |slack| {
        let c = FtlConfig { mbm_align_slack_percent: slack, ..cfg(FtlKind::Mbm, 0.25) };
        let mut mbm = lamina_ftl::mbm::build(g.clone(), &c).unwrap();
        drive(&mut mbm, 8000);
        let s = mbm.stats();
        (s.aligned_rows, s.misaligned_rows, s.gc_moves)
    };
    let (greedy, default, wide) = (run(0), run(25), run(50));
    assert!(greedy.0 < default.0 && default.0 < wide.0, "{greedy:?} {default:?} {wide:?}");
    assert!(greedy.1 > default.1 && default.1 > wide.1, "{greedy:?} {default:?} {wide:?}");
    assert!(greedy.2 <= default.2 && default.2 <= wide.2, "{greedy:?} {default:?} {wide:?}");
    let e = FtlConfig { mbm_align_slack_percent: 101, ..cfg(FtlKind::Mbm, 0.25) }.validate(&g).unwrap_err();
    assert_eq!(e.key, "ftl.mbm_align_slack_percent");
    let e = FtlConfig { mbm_align_slack_percent: 10, ..cfg(FtlKind::Tbm, 0.25) }.validate(&g).unwrap_err();
    assert_eq!(e.key, "ftl.mbm_align_slack_percent");
}
