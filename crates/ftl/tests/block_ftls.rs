//! The conformance harness on every FTL kind, and on the block-level ones (NFTL, the
//! superblock FTL) in every configuration they accept: small geometries where a few
//! hundred writes force merges / GC on every plane many times, invariants checked after
//! every operation and every GC step.

use lamina_ftl::testing::{
    ConformanceConfig, Harness, Op, check_kind_conformance, fuzz_like_inputs, run_block_ftl_bytes,
    slc_geometry,
};
use lamina_ftl::{Ftl, FtlConfig, FtlKind, GcThreshold, NftlFtl, StripeOrder, SuperblockFtl, TieBreak};
use lamina_nand_model::{Geometry, PlaneId};
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

fn cfg(kind: FtlKind, op: f64) -> FtlConfig {
    FtlConfig { kind, overprovisioning: op, gc_threshold: GcThreshold::FreeBlocks(2), ..FtlConfig::default() }
}

fn superblock(n: u32, m: u32, op: f64) -> FtlConfig {
    FtlConfig { superblock_size: n, superblock_extra_blocks: m, ..cfg(FtlKind::Superblock, op) }
}

fn conform(g: &Geometry, cfg: &FtlConfig, conf: ConformanceConfig) {
    if let Err(f) = check_kind_conformance(g, cfg, &conf) {
        panic!("{:?} ({cfg:?}): {f}", cfg.kind);
    }
}

fn conf(cases: u32, ops: std::ops::Range<usize>) -> ConformanceConfig {
    ConformanceConfig { cases, ops, ..ConformanceConfig::default() }
}

/// Every kind `FtlKind::ALL` lists, through its own GC, static and dynamic operations.
#[test]
fn every_ftl_kind_conforms() {
    let g = slc_geometry(2, 1, 1, 2, 12, 4);
    for kind in FtlKind::ALL {
        let c = match kind {
            FtlKind::Superblock => superblock(2, 1, 0.34),
            _ => cfg(kind, 0.34),
        };
        conform(&g, &c, conf(48, 1..600));
        conform(&g, &c, ConformanceConfig { dynamic_placement: true, seed: 9, ..conf(24, 1..600) });
    }
}

#[test]
fn nftl_conforms_in_every_configuration() {
    let g = slc_geometry(1, 2, 1, 2, 8, 8);
    for wear_leveling in [false, true] {
        for copyback in [false, true] {
            let c = FtlConfig { wear_leveling, copyback, ..cfg(FtlKind::Nftl, 0.3) };
            conform(&g, &c, ConformanceConfig { seed: 7, hot_lpns: 40, ..conf(24, 200..700) });
        }
    }
}

/// GFTL through its partial steps: no steps owed (cleaning only when the buffer runs
/// out), one step of one or three copies per write, and enough steps to keep up, with
/// wear levelling and copyback on and off and dynamic placement.
#[test]
fn gftl_conforms_in_every_configuration() {
    let g = slc_geometry(1, 2, 1, 2, 8, 8);
    for (steps, copies) in [(0, 1), (1, 1), (1, 3), (4, 8)] {
        for (wear_leveling, copyback) in [(false, false), (true, true)] {
            let c = FtlConfig {
                wear_leveling,
                copyback,
                gftl_steps_per_write: steps,
                gftl_step_copies: copies,
                ..cfg(FtlKind::Gftl, 0.3)
            };
            conform(&g, &c, ConformanceConfig { seed: 5, hot_lpns: 40, ..conf(24, 200..700) });
        }
        let c =
            FtlConfig { gftl_steps_per_write: steps, gftl_step_copies: copies, ..cfg(FtlKind::Gftl, 0.3) };
        conform(&g, &c, ConformanceConfig { dynamic_placement: true, seed: 6, ..conf(12, 200..700) });
    }
}

/// GFTL built from a device (λ from its timing: the `pen` preset's chip, 48-page blocks),
/// every case mirrored on a real `Device` whose physics must accept every program and
/// erase of the partial steps.
#[test]
fn gftl_conforms_on_a_real_device() {
    let mut c = lamina_ftl::testing::one_die_preset("pen", 2, 10, 48);
    c.partial_erase = None;
    let spec = c.validate().unwrap();
    for steps in [1, 3] {
        let c = FtlConfig { gftl_steps_per_write: steps, ..cfg(FtlKind::Gftl, 0.3) };
        let conf = ConformanceConfig { seed: 8, hot_lpns: 60, ..conf(12, 300..1200) };
        if let Err(f) = lamina_ftl::testing::check_device_conformance(&spec, &c, &conf) {
            panic!("gftl on a device ({c:?}): {f}");
        }
    }
}

/// The paper's two superblock shapes (4 + 1, 4 + 4), a superblock of one logical block,
/// and an odd one, with every tie-break.
#[test]
fn superblock_ftl_conforms_in_every_configuration() {
    let g = slc_geometry(1, 1, 2, 2, 16, 4);
    for (n, m, op) in [(4, 1, 0.2), (4, 4, 0.2), (1, 1, 0.3), (2, 3, 0.3)] {
        for tie in [TieBreak::LowestId, TieBreak::Oldest, TieBreak::LeastWorn] {
            let c = FtlConfig {
                victim_tie_break: tie,
                copyback: tie == TieBreak::Oldest,
                ..superblock(n, m, op)
            };
            conform(&g, &c, ConformanceConfig { seed: 3, hot_lpns: 48, ..conf(16, 200..800) });
        }
    }
}

#[test]
fn block_ftls_conform_with_every_striping_order() {
    let g = slc_geometry(2, 2, 2, 2, 6, 2);
    for order in StripeOrder::all() {
        for c in [cfg(FtlKind::Nftl, 0.5), cfg(FtlKind::Gftl, 0.5), superblock(1, 1, 0.5)] {
            let c = FtlConfig { striping_order: order, ..c };
            conform(&g, &c, ConformanceConfig { hot_lpns: 40, ..conf(3, 200..400) });
        }
    }
}

// Big blocks (the 3D-NAND case the paper is about) and one-page blocks (every overwrite
// fills an update block).
#[test]
fn block_ftls_conform_with_128_and_with_1_page_per_block() {
    let big = slc_geometry(1, 1, 1, 2, 8, 128);
    for c in [cfg(FtlKind::Nftl, 0.3), cfg(FtlKind::Gftl, 0.3), superblock(2, 1, 0.3)] {
        conform(&big, &c, ConformanceConfig { hot_lpns: 300, ..conf(4, 2500..3000) });
    }
    let tiny = slc_geometry(1, 1, 1, 2, 12, 1);
    for c in [cfg(FtlKind::Nftl, 0.4), cfg(FtlKind::Gftl, 0.4), superblock(2, 2, 0.4)] {
        conform(&tiny, &c, ConformanceConfig { hot_lpns: 6, ..conf(48, 1..300) });
    }
}

// What a fuzzer would do: random bytes choose the kind, shape and configuration, then
// the operations.
#[test]
fn byte_chosen_block_ftls_conform() {
    let mut built = 0;
    for bytes in fuzz_like_inputs(21, 300) {
        let Some(result) = run_block_ftl_bytes(&bytes) else { continue };
        built += 1;
        if let Err(f) = result {
            panic!("config bytes {:?}: {f}", &bytes[..3]);
        }
    }
    assert!(built > 250, "{built}");
}

/// The property tests must really merge: on a fixed overwrite sequence the harness sees
/// hundreds of merges / GC jobs, moves and erases, every one checked.
#[test]
fn fixed_overwrites_reach_thousands_of_checked_merge_steps() {
    let g = slc_geometry(1, 1, 1, 2, 10, 8);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
    let ops: Vec<Op> = (0..3000).map(|_| Op::Write(rng.next_u64() % 200)).collect();
    let mut nftl = Harness::new(NftlFtl::new(g.clone(), &cfg(FtlKind::Nftl, 0.3)).unwrap());
    nftl.apply_all(&ops).unwrap_or_else(|(i, v)| panic!("NFTL, op #{i}: {v}"));
    let s = nftl.ftl().stats();
    assert!(s.gc_jobs > 300 && s.gc_moves > 1000 && s.erases == 2 * s.gc_jobs, "{s:?}");
    assert!(s.merge_spare_reads > 0);
    let mut sb = Harness::new(SuperblockFtl::new(g, &superblock(2, 1, 0.3)).unwrap());
    sb.apply_all(&ops).unwrap_or_else(|(i, v)| panic!("superblock, op #{i}: {v}"));
    let s = sb.ftl().stats();
    assert!(s.gc_jobs > 100 && s.gc_moves > 500 && s.erases >= s.gc_jobs, "{s:?}");
    // Interleave: start a merge in the background, then write to the same plane.
    let mut h =
        Harness::new(NftlFtl::new(slc_geometry(1, 1, 1, 1, 8, 4), &cfg(FtlKind::Nftl, 0.25)).unwrap());
    for l in [0, 1, 2, 3, 1, 2] {
        h.apply(Op::Write(l)).unwrap();
    }
    h.apply(Op::GcStep(0)).unwrap();
    assert!(h.ftl().gc_in_progress(PlaneId(0)));
    h.apply(Op::GcStep(0)).unwrap();
    h.apply(Op::Write(1)).unwrap(); // refused while the merge runs, parked, retried after it
    assert!(!h.ftl().gc_in_progress(PlaneId(0)));
    assert_eq!(h.ftl().stats().host_writes_refused, 1);
}
