//! PEN's M-Merge in the block-level FTLs (`ftl.pen = true`): the conformance harness on
//! small devices with partial-block erase, every case mirrored on a real
//! `lamina_nand_model::Device` (whose physics must accept every program, erase and
//! partial erase), and fixed workloads that must really M-Merge, partially erase and
//! restore disturbed leaves.

use lamina_ftl::testing::{ConformanceConfig, Harness, Op, check_device_conformance};
use lamina_ftl::{Ftl, FtlConfig, FtlKind, GcThreshold, NftlFtl, SuperblockFtl};
use lamina_nand_model::{Device, DeviceOptions, DeviceSpec, PartialEraseConfig};
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// The `pen` preset's chip shrunk to `planes` planes of `blocks` blocks of `pages`
/// pages, split `levels` deep.
fn pen_spec(planes: u32, blocks: u32, pages: u32, levels: u32) -> DeviceSpec {
    let mut c = lamina_ftl::testing::one_die_preset("pen", planes, blocks, pages);
    c.partial_erase = Some(PartialEraseConfig { levels });
    c.validate().unwrap()
}

fn pen_cfg(kind: FtlKind, op: f64) -> FtlConfig {
    FtlConfig {
        kind,
        overprovisioning: op,
        gc_threshold: GcThreshold::FreeBlocks(2),
        pen: true,
        ..FtlConfig::default()
    }
}

fn conform(spec: &DeviceSpec, cfg: &FtlConfig, conf: ConformanceConfig) {
    if let Err(f) = check_device_conformance(spec, cfg, &conf) {
        panic!("{:?} ({cfg:?}): {f}", cfg.kind);
    }
}

fn conf(cases: u32, ops: std::ops::Range<usize>, hot: u64) -> ConformanceConfig {
    ConformanceConfig { cases, ops, hot_lpns: hot, ..ConformanceConfig::default() }
}

/// NFTL + PEN: model-based property test, invariants after every operation and step,
/// on two shapes (3-page leaves of 24- and of 48-page blocks, two planes and one), with and without
/// disturbance, W small enough to force baseline merges, and dynamic placement.
#[test]
fn nftl_with_pen_conforms() {
    for (spec, op) in [(pen_spec(2, 10, 24, 3), 0.3), (pen_spec(1, 10, 48, 4), 0.3)] {
        for (disturb, w) in [(true, 16), (false, 16), (true, 2)] {
            let c = FtlConfig { pen_disturb: disturb, pen_wear_limit: w, ..pen_cfg(FtlKind::Nftl, op) };
            conform(&spec, &c, ConformanceConfig { seed: 11, ..conf(24, 200..900, 24) });
        }
        let c = pen_cfg(FtlKind::Nftl, op);
        conform(&spec, &c, ConformanceConfig { dynamic_placement: true, seed: 4, ..conf(12, 200..900, 24) });
    }
}

/// Superblock + PEN (Algorithm 3): the paper's shapes 4 + 1 and 4 + 4, and 2 + 1, with
/// and without disturbance, a small W, dynamic placement.
#[test]
fn superblock_with_pen_conforms() {
    let spec = pen_spec(2, 16, 24, 3);
    for (n, m, op) in [(4, 1, 0.2), (4, 4, 0.2), (2, 1, 0.3)] {
        for (disturb, w) in [(true, 16), (false, 16), (true, 2)] {
            let c = FtlConfig {
                superblock_size: n,
                superblock_extra_blocks: m,
                pen_disturb: disturb,
                pen_wear_limit: w,
                ..pen_cfg(FtlKind::Superblock, op)
            };
            conform(&spec, &c, ConformanceConfig { seed: 5, ..conf(12, 200..1200, 96) });
        }
    }
    let c = FtlConfig { superblock_size: 2, ..pen_cfg(FtlKind::Superblock, 0.3) };
    conform(&spec, &c, ConformanceConfig { dynamic_placement: true, seed: 6, ..conf(12, 200..900, 48) });
}

/// A full logical space, then overwrites concentrated on a few pages of a few logical
/// blocks: the plan restores small PBs, again and again around the same leaves.
fn hot_workload(logical_pages: u64, ppb: u64, seed: u64, n: usize) -> Vec<Op> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut ops: Vec<Op> = (0..logical_pages).map(Op::Write).collect();
    for _ in 0..n {
        let lb = rng.next_u64() % 4;
        let off = (rng.next_u64() % 5) * 3 + rng.next_u64() % 2;
        ops.push(Op::Write((lb * ppb + off) % logical_pages));
        if rng.next_u64() % 50 == 0 {
            ops.push(Op::Read(rng.next_u64() % logical_pages));
        }
    }
    ops
}

fn run_hot(spec: &DeviceSpec, cfg: &FtlConfig) -> lamina_ftl::FtlStats {
    run_hot_on(NftlFtl::for_device(spec, cfg).unwrap(), spec)
}

fn run_hot_on<F: Ftl>(ftl: F, spec: &DeviceSpec) -> lamina_ftl::FtlStats {
    let ops = hot_workload(ftl.logical_pages(), spec.geometry().pages_per_block() as u64, 3, 4000);
    let dev = Device::new(spec.clone(), DeviceOptions { store_tags: true });
    let mut h = Harness::new(ftl).with_device(dev);
    h.apply_all(&ops).unwrap_or_else(|(i, v)| panic!("op #{i} ({}): {v}", ops[i]));
    h.ftl().stats()
}

/// Not vacuous: on a fixed workload every mechanism runs, on a real device, checked
/// after every step — M-Merges, partial erases at several levels, stage-1/3 copies,
/// disturbance-forced restores, and baseline merges the wear gate forced.
#[test]
fn nftl_pen_really_m_merges_partially_erases_and_restores_disturbed_leaves() {
    let spec = pen_spec(1, 12, 24, 3);
    let s = run_hot(&spec, &FtlConfig { pen_wear_limit: 4, ..pen_cfg(FtlKind::Nftl, 0.3) });
    eprintln!("{s:?}");
    assert!(s.pen_m_merges > 200, "{s:?}");
    assert!(s.partial_erases >= s.pen_m_merges, "{s:?}");
    assert_eq!(s.pen_partial_erases_by_level.iter().sum::<u64>(), s.partial_erases);
    assert!(s.pen_partial_erases_by_level.iter().filter(|&&n| n > 0).count() >= 2, "{s:?}");
    assert!(s.pen_restore_copies > 0 && s.pen_merge_copies_replaced > s.pen_restore_copies, "{s:?}");
    assert!(s.pen_disturb_restores > 0, "{s:?}");
    assert!(s.pen_wear_merges > 0 && s.pen_classic_merges >= s.pen_wear_merges, "{s:?}");
    assert_eq!(s.gc_jobs, s.pen_m_merges + s.pen_classic_merges);
    // One erase per M-Merge (the U-block), two per baseline merge.
    assert_eq!(s.erases, s.pen_m_merges + 2 * s.pen_classic_merges);
    // Without disturbance tracking nothing is forced; with W = 0 nothing is M-Merged.
    let s = run_hot(&spec, &FtlConfig { pen_disturb: false, ..pen_cfg(FtlKind::Nftl, 0.3) });
    assert!(s.pen_m_merges > 200 && s.pen_disturb_restores == 0, "{s:?}");
    let s = run_hot(&spec, &FtlConfig { pen_wear_limit: 0, ..pen_cfg(FtlKind::Nftl, 0.3) });
    assert!(s.pen_m_merges == 0 && s.partial_erases == 0 && s.pen_wear_merges == s.gc_jobs, "{s:?}");
}

/// Not vacuous for the superblock FTL either: Algorithm 3 M-Merges, partial erases,
/// baseline merges the wear gate forced, disturbance restores. (W = 2: since Algorithm 3
/// prices the staging blocks, M-Merge is chosen for one GC in eight to eleven here — 25
/// of 279 (2 + 1), 10 of 81 (4 + 4) — and no superblock reached W = 4 M-Merges in a
/// row.)
#[test]
fn superblock_pen_really_m_merges() {
    let spec = pen_spec(1, 16, 24, 3);
    for (n, m) in [(2, 1), (4, 4)] {
        let c = FtlConfig {
            superblock_size: n,
            superblock_extra_blocks: m,
            pen_wear_limit: 2,
            ..pen_cfg(FtlKind::Superblock, 0.25)
        };
        let s = run_hot_on(SuperblockFtl::for_device(&spec, &c).unwrap(), &spec);
        eprintln!("{n} + {m}: {s:?}");
        assert!(s.pen_m_merges >= 8 && s.partial_erases >= s.pen_m_merges, "{s:?}");
        assert_eq!(s.pen_partial_erases_by_level.iter().sum::<u64>(), s.partial_erases);
        assert!(s.pen_wear_merges > 0 && s.pen_disturb_restores > 0, "{s:?}");
        assert_eq!(s.gc_jobs, s.pen_m_merges + s.pen_classic_merges);
    }
}

/// Config errors name the key and say what to do.
#[test]
fn pen_config_errors_name_the_key() {
    let spec = pen_spec(1, 12, 24, 3);
    let page = FtlConfig { kind: FtlKind::Page, pen: true, overprovisioning: 0.3, ..FtlConfig::default() };
    let e = FtlKind::Page.build_for_device(&spec, &page).err().unwrap();
    assert_eq!(e.key, "ftl.pen");
    assert!(e.reason.contains("nftl, superblock"), "{e}");
    // A device without partial erase.
    let mut plain = lamina_nand_model::preset("pen").unwrap();
    plain.partial_erase = None;
    plain.timing.t_pbers = None;
    plain.geometry.blocks_per_plane = 16;
    let e = NftlFtl::for_device(&plain.validate().unwrap(), &pen_cfg(FtlKind::Nftl, 0.3)).unwrap_err();
    assert_eq!(e.key, "ftl.pen");
    assert!(e.reason.contains("partial-block erase") && e.reason.contains("ftl.pen = false"), "{e}");
    // From a bare geometry: PEN needs the device's parameters.
    let e = NftlFtl::new(spec.geometry().clone(), &pen_cfg(FtlKind::Nftl, 0.3)).unwrap_err();
    assert_eq!(e.key, "ftl.pen");
    // pen_* without pen, and a zero tolerance.
    let nftl = FtlConfig { kind: FtlKind::Nftl, overprovisioning: 0.3, ..FtlConfig::default() };
    for (c, key) in [
        (FtlConfig { pen_wear_limit: 3, ..nftl.clone() }, "ftl.pen_wear_limit"),
        (FtlConfig { pen_disturb: false, ..nftl.clone() }, "ftl.pen_disturb"),
        (FtlConfig { pen_disturb_tolerance: 2, ..nftl.clone() }, "ftl.pen_disturb_tolerance"),
        (FtlConfig { pen_disturb_tolerance: 0, ..pen_cfg(FtlKind::Nftl, 0.3) }, "ftl.pen_disturb_tolerance"),
    ] {
        let e = NftlFtl::for_device(&spec, &c).unwrap_err();
        assert_eq!(e.key, key, "{e}");
    }
    // Parsed from TOML; the defaults are left out when serialized.
    let c: FtlConfig = toml::from_str("kind = \"nftl\"\npen = true\npen_wear_limit = 8").unwrap();
    assert!(c.pen && c.pen_wear_limit == 8 && c.pen_disturb && c.pen_disturb_tolerance == 1);
    let json = serde_json::to_string(&FtlConfig::default()).unwrap();
    assert!(!json.contains("pen"), "{json}");
}

/// Subblock management (`ftl.pen_partition = "subblock3"`) in both FTLs: the harness
/// through M-Merges that may only partially erase PB 2, 6 or 7, mirrored on a real device;
/// the key is refused without PEN and on a one-level tree, naming it.
#[test]
fn subblock3_partition_conforms_and_is_validated() {
    use lamina_ftl::pen::Partition;
    let spec = pen_spec(2, 10, 24, 3);
    for kind in [FtlKind::Nftl, FtlKind::Superblock] {
        let c = FtlConfig { pen_partition: Partition::Subblock3, ..pen_cfg(kind, 0.3) };
        conform(&spec, &c, ConformanceConfig { seed: 12, ..conf(16, 200..900, 24) });
    }
    let sb3 = FtlConfig { pen_partition: Partition::Subblock3, ..pen_cfg(FtlKind::Nftl, 0.3) };
    let s = run_hot_on(NftlFtl::for_device(&spec, &sb3).unwrap(), &spec);
    assert!(s.pen_m_merges > 0, "{s:?}");
    // Only PB 2 (level 1) and PBs 6, 7 (level 2) are partially erased, in the D-block
    // and in the U-block; the tree's own run erases smaller PBs.
    let levels = s.pen_partial_erases_by_level;
    assert!(levels[1] + levels[2] > 0 && levels[3..].iter().all(|&n| n == 0), "{levels:?}");
    let tree = run_hot(&spec, &pen_cfg(FtlKind::Nftl, 0.3));
    assert!(tree.pen_partial_erases_by_level[3] > 0, "{:?}", tree.pen_partial_erases_by_level);
    let nftl = FtlConfig { kind: FtlKind::Nftl, overprovisioning: 0.3, ..FtlConfig::default() };
    let e =
        NftlFtl::for_device(&spec, &FtlConfig { pen_partition: Partition::Subblock3, ..nftl }).unwrap_err();
    assert_eq!(e.key, "ftl.pen_partition");
    let shallow = pen_spec(2, 10, 24, 1);
    let c = FtlConfig { pen_partition: Partition::Subblock3, ..pen_cfg(FtlKind::Nftl, 0.3) };
    let e = NftlFtl::for_device(&shallow, &c).unwrap_err();
    assert_eq!(e.key, "ftl.pen_partition");
    assert!(e.reason.contains("at least 2 levels"), "{e}");
}

/// `ftl.pen_superblock_rule = "per-freed-page"`: the superblock FTL conforms through the
/// M-Merges the rule chooses (mirrored on a real device). At 7 % over-provisioning the
/// GCs are compactions and the rule M-Merges as the default does (2,793 M-Merges on
/// this workload); at 30 % they are intra-superblock GCs of one block, which free their
/// invalid pages more cheaply than any M-Merge here (0 M-Merges, against the default's
/// 73, priced against a compaction the baseline does not run). Every GC is an M-Merge
/// or a counted baseline merge, and the key is refused without PEN and on NFTL, naming it.
#[test]
fn per_freed_page_rule_conforms_and_is_validated() {
    use lamina_ftl::pen::SuperblockRule;
    let spec = pen_spec(2, 10, 24, 3);
    let rule = |c: FtlConfig| FtlConfig { pen_superblock_rule: SuperblockRule::PerFreedPage, ..c };
    let stats = |c: &FtlConfig| run_hot_on(SuperblockFtl::for_device(&spec, c).unwrap(), &spec);
    let tight = rule(pen_cfg(FtlKind::Superblock, 0.07));
    conform(&spec, &tight, ConformanceConfig { seed: 13, ..conf(16, 200..900, 24) });
    let (s, default) = (stats(&tight), stats(&pen_cfg(FtlKind::Superblock, 0.07)));
    assert!(s.pen_m_merges > 0 && s.pen_m_merges == default.pen_m_merges, "{s:?}\n{default:?}");
    assert_eq!(s.gc_jobs, s.pen_m_merges + s.pen_classic_merges, "{s:?}");
    let (s, default) =
        (stats(&rule(pen_cfg(FtlKind::Superblock, 0.3))), stats(&pen_cfg(FtlKind::Superblock, 0.3)));
    assert!(s.pen_m_merges < default.pen_m_merges, "{s:?}\n{default:?}");
    assert_eq!(s.gc_jobs, s.pen_m_merges + s.pen_classic_merges, "{s:?}");
    let plain = FtlConfig { kind: FtlKind::Superblock, overprovisioning: 0.3, ..FtlConfig::default() };
    let e = SuperblockFtl::for_device(&spec, &rule(plain)).unwrap_err();
    assert_eq!(e.key, "ftl.pen_superblock_rule");
    let e = NftlFtl::for_device(&spec, &rule(pen_cfg(FtlKind::Nftl, 0.3))).unwrap_err();
    assert_eq!(e.key, "ftl.pen_superblock_rule");
    assert!(e.reason.contains("superblock"), "{e}");
}
