//! The page FTL with `ftl.mapping = "cached"` (a DFTL-style cached mapping table over
//! translation pages on flash) under the conformance harness: every lookup — served by
//! the CMT or by a translation page's content — must agree with the harness's reference
//! after every operation and GC step, translation pages must be programmed, moved and
//! erased like data (the harness shadows them as FTL-internal pages), and a real device
//! must accept every operation.

use lamina_ftl::testing::{ConformanceConfig, Harness, Op, run_conformance, slc_geometry};
use lamina_ftl::{Ftl, FtlConfig, GcThreshold, Lpn, Mapping, PageFtl, TieBreak};
use lamina_nand_model::{Geometry, PlaneId};

/// A small SLC geometry (4 KiB pages; the FTLs below are given few entries per
/// translation page, so that a small logical space needs many of them).
fn geo(planes: u32, blocks: u32, pages: u32) -> Geometry {
    slc_geometry(1, 1, 1, planes, blocks, pages)
}

fn cached(cmt_entries: u64) -> FtlConfig {
    FtlConfig {
        overprovisioning: 0.4,
        gc_threshold: GcThreshold::FreeBlocks(2),
        mapping: Mapping::Cached,
        cmt_entries,
        ..FtlConfig::default()
    }
}

fn conf(seed: u64, dynamic: bool) -> ConformanceConfig {
    ConformanceConfig {
        cases: 48,
        ops: 1..600,
        dynamic_placement: dynamic,
        seed,
        exact_write_addr: true,
        ..ConformanceConfig::default()
    }
}

// 2 planes × 16 blocks × 8 pages, 16 entries per translation page: 153 logical pages in
// 10 translation pages; a few hundred writes run GC many times, over
// data and translation blocks alike.
#[test]
fn cached_mapping_conforms_with_cmts_of_0_1_and_a_few_entries() {
    let g = geo(2, 16, 8);
    for (i, cmt) in [0u64, 1, 3, 8, 64].into_iter().enumerate() {
        for dynamic in [false, true] {
            let g = g.clone();
            run_conformance(
                move || PageFtl::new(g.clone(), &cached(cmt)).unwrap().with_translation_page_entries(16),
                &conf(i as u64, dynamic),
            );
        }
    }
}

#[test]
fn cached_mapping_conforms_with_every_tie_break_and_copyback() {
    let g = geo(2, 12, 4);
    for tie in [TieBreak::LowestId, TieBreak::Oldest, TieBreak::LeastWorn] {
        for (wear_leveling, copyback) in [(false, false), (true, true)] {
            let cfg = FtlConfig { victim_tie_break: tie, wear_leveling, copyback, ..cached(2) };
            let g = g.clone();
            run_conformance(
                move || PageFtl::new(g.clone(), &cfg).unwrap().with_translation_page_entries(8),
                &conf(11, false),
            );
        }
    }
}

/// Hand-checked sequence on one plane with a 1-entry CMT and 4 entries per translation
/// page (page 0 holds LPNs 0–3, page 1 LPNs 4–7): a write miss is inserted dirty; the
/// next write's eviction queues a write-back, a program since the page was never
/// written; a read miss lists its translation page, and its eviction of a dirty entry
/// whose page is on flash costs a read-modify-write (a move).
#[test]
fn write_backs_are_programs_then_moves_and_read_misses_list_the_translation_page() {
    let g = geo(1, 16, 4);
    let mut h = Harness::new(PageFtl::new(g, &cached(1)).unwrap().with_translation_page_entries(4))
        .with_exact_write_addr(true);
    let drain = |h: &mut Harness<PageFtl>| {
        for _ in 0..8 {
            if !h.ftl().needs_gc(PlaneId(0)) && !h.ftl().gc_in_progress(PlaneId(0)) {
                return;
            }
            h.apply(Op::GcStep(0)).unwrap();
        }
        panic!("write-backs did not drain");
    };
    h.apply(Op::Write(0)).unwrap(); // miss, cached dirty
    h.apply(Op::Write(4)).unwrap(); // miss, evicts 0 (dirty): page 0 queued
    assert!(h.ftl().needs_gc(PlaneId(0)), "a queued write-back asks for a job");
    drain(&mut h); // program page 0
    h.apply(Op::Write(1)).unwrap(); // miss, evicts 4 (dirty): page 1 queued
    drain(&mut h); // program page 1
    let s = h.ftl().stats();
    assert_eq!((s.cmt_write_misses, s.cmt_dirty_evictions, s.translation_page_writes), (3, 2, 2));
    assert_eq!(s.translation_page_reads, 0, "first write-backs program without a read");
    let mut pages = Vec::new();
    h.ftl().translation_reads(Lpn(0), &mut pages);
    assert_eq!(pages.len(), 1, "0 is not cached and its translation page is on flash");
    h.apply(Op::Read(0)).unwrap(); // miss: reads page 0; evicts 1 (dirty): RMW of page 0
    let s = h.ftl().stats();
    assert_eq!((s.cmt_read_misses, s.cmt_dirty_evictions, s.translation_page_writes), (1, 3, 3));
    assert_eq!(s.translation_page_reads, 2, "the miss's read and the write-back's read");
    h.apply(Op::Read(0)).unwrap();
    assert_eq!(h.ftl().stats().cmt_read_hits, 1);
    assert!(!h.ftl().needs_gc(PlaneId(0)));
}

#[test]
fn cmt_size_is_rejected_under_the_ideal_mapping_and_cached_needs_per_plane_allocation() {
    let g = geo(2, 16, 8);
    let e = PageFtl::new(g.clone(), &FtlConfig { cmt_entries: 5, ..FtlConfig::default() }).unwrap_err();
    assert_eq!(e.key, "ftl.cmt_entries");
    let cfg = FtlConfig { allocation: lamina_ftl::Allocation::DieAligned, ..cached(4) };
    assert_eq!(PageFtl::new(g.clone(), &cfg).unwrap_err().key, "ftl.mapping");
    let cfg = FtlConfig { kind: lamina_ftl::FtlKind::Nftl, ..cached(4) };
    assert_eq!(lamina_ftl::build(&cfg, &g).err().map(|e| e.key), Some("ftl.mapping"));
}

/// `ftl.mapping_entry = "geometry"` sizes entries as MQSim does: on its default device
/// (2^26 pages of 8 KiB = 16 sectors) ⌈(26 + 16) / 8⌉ = 6 bytes per translation-page
/// entry (1365 per page) and ⌈(52 + 16) / 8⌉ = 9 per CMT entry, so its default 2 MiB
/// `CMT_Capacity` is 233016 entries. The default stays 4 and 4 (2048 per page).
#[test]
fn entry_sizes_follow_the_geometry_as_mqsim_derives_them() {
    use lamina_ftl::{MappingEntry, MappingEntrySizes};
    let mq = lamina_nand_model::preset("mqsim-default").unwrap().validate().unwrap();
    let g = mq.geometry();
    let geometry = FtlConfig { mapping_entry: MappingEntry::Geometry, cmt_bytes: Some(2 << 20), ..cached(0) };
    let geometry = FtlConfig { cmt_entries: lamina_ftl::DEFAULT_CMT_ENTRIES, ..geometry };
    assert_eq!(geometry.mapping_entry_sizes(g), MappingEntrySizes { flash_bytes: 6, cmt_bytes: 9 });
    assert_eq!(geometry.translation_entries_per_page(g), 1365);
    assert_eq!(geometry.cmt_capacity(g), 233_016);
    geometry.validate(g).unwrap();
    let ppa32 = cached(1000);
    assert_eq!(ppa32.mapping_entry_sizes(g), MappingEntrySizes { flash_bytes: 4, cmt_bytes: 4 });
    assert_eq!(ppa32.translation_entries_per_page(g), 2048);
    assert_eq!(ppa32.cmt_capacity(g), 1000);
    assert_eq!(
        FtlConfig { cmt_bytes: Some(4000), ..cached(lamina_ftl::DEFAULT_CMT_ENTRIES) }.cmt_capacity(g),
        1000
    );
    // A page count that is not a power of two: 3·2^20 pages of 4 KiB (8 sectors),
    // log2 P = 21.58: ⌈(21.58 + 8) / 8⌉ = 4 and ⌈(43.17 + 8) / 8⌉ = 7.
    let odd = slc_geometry(3, 1, 1, 1, 1 << 12, 256);
    assert_eq!(odd.total_pages(), 3 << 20);
    let sizes = FtlConfig { mapping_entry: MappingEntry::Geometry, ..cached(0) }.mapping_entry_sizes(&odd);
    assert_eq!(sizes, MappingEntrySizes { flash_bytes: 4, cmt_bytes: 7 });
    // A translation page holds fewer entries, so there are more of them on flash: the
    // FTL builds and reports the new count.
    let small = geo(2, 16, 8);
    let f = PageFtl::new(small, &FtlConfig { mapping_entry: MappingEntry::Geometry, ..cached(4) }).unwrap();
    assert_eq!(f.stats(), lamina_ftl::FtlStats::default());
}

#[test]
fn cmt_bytes_and_the_entry_size_are_checked() {
    use lamina_ftl::MappingEntry;
    let g = geo(2, 16, 8);
    let key = |c: FtlConfig| PageFtl::new(g.clone(), &c).err().map(|e| e.key);
    assert_eq!(key(FtlConfig { cmt_bytes: Some(64), ..FtlConfig::default() }), Some("ftl.cmt_bytes"));
    assert_eq!(
        key(FtlConfig { mapping_entry: MappingEntry::Geometry, ..FtlConfig::default() }),
        Some("ftl.mapping_entry")
    );
    // Both sizes given: refused, naming the bytes key.
    assert_eq!(key(FtlConfig { cmt_bytes: Some(64), ..cached(4) }), Some("ftl.cmt_bytes"));
    let ok = FtlConfig { cmt_bytes: Some(64), ..cached(lamina_ftl::DEFAULT_CMT_ENTRIES) };
    assert!(key(ok).is_none());
}

/// A long random run with a 2-entry CMT: translation pages are written back (programs
/// and read-modify-writes), and GC relocates some of them, all under the harness.
#[test]
fn gc_relocates_translation_pages_under_the_harness() {
    use rand_core::{Rng, SeedableRng};
    let g = geo(2, 16, 8);
    let ftl = PageFtl::new(g, &cached(2)).unwrap().with_translation_page_entries(16);
    let l = ftl.logical_pages();
    let mut h = Harness::new(ftl).with_exact_write_addr(true);
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(5);
    for _ in 0..6000 {
        let x = rng.next_u64() % l;
        let op = if rng.next_u64() % 3 == 0 { Op::Read(x) } else { Op::Write(x) };
        h.apply(op).unwrap();
    }
    let s = h.ftl().stats();
    assert!(s.erases > 0 && s.translation_gc_moves > 0, "{s:?}");
    assert!(s.translation_page_writes > s.translation_gc_moves && s.translation_page_reads > 0, "{s:?}");
    assert!(s.cmt_read_misses > s.cmt_read_hits, "{s:?}");
}

/// Every case mirrored on a real device (`mqsim-default`'s chip shrunk): its physics must
/// accept every program of a translation page (first write-backs), every read-modify-write
/// move and every erase of a block that held translation pages.
#[test]
fn cached_mapping_conforms_on_a_real_device() {
    let mut c = lamina_nand_model::preset("mqsim-default").unwrap();
    c.geometry.channels = 1;
    c.geometry.chips_per_channel = 1;
    c.geometry.dies_per_chip = 1;
    c.geometry.planes_per_die = 2;
    c.geometry.blocks_per_plane = 16;
    c.geometry.pages_per_block = 8;
    c.geometry.page_size_bytes = 512;
    let spec = c.validate().unwrap();
    for cmt in [0u64, 1, 4] {
        let g = spec.geometry().clone();
        let make = move || PageFtl::new(g.clone(), &cached(cmt)).unwrap().with_translation_page_entries(16);
        if let Err(f) = lamina_ftl::testing::check_conformance_on(make, &conf(cmt, false), Some(&spec)) {
            panic!("cmt_entries = {cmt}: {f}");
        }
    }
}

/// Preconditioning through the cached mapping: its evictions write translation pages
/// back (programs and moves reported as effects, on internal pages), GC relocates some,
/// and afterwards every mapped LPN still resolves, through the CMT or its translation
/// page, to a page whose reverse map names it; every translation page on flash is
/// programmed exactly where the effects put it last.
#[test]
fn preconditioning_fills_translation_pages_and_keeps_the_map_exact() {
    use lamina_ftl::{FlashEffect, PreconditionConfig, precondition};
    use std::collections::BTreeMap;
    let g = geo(2, 16, 8);
    let mut ftl = PageFtl::new(g, &cached(4)).unwrap().with_translation_page_entries(16);
    let l = ftl.logical_pages();
    let cfg =
        PreconditionConfig { fill_fraction: 0.9, max_overwrite_passes: 3.0, ..PreconditionConfig::default() };
    let mut last: BTreeMap<u64, u64> = BTreeMap::new(); // internal LPN -> last page programmed
    precondition(&mut ftl, &cfg, 7, &mut |e| {
        if let FlashEffect::Program { ppa, lpn } = e
            && lpn.0 >= l
        {
            last.insert(lpn.0, ppa.0);
        }
    })
    .unwrap();
    let s = ftl.stats();
    assert!(s.translation_page_writes > 0 && s.translation_gc_moves > 0 && s.erases > 0, "{s:?}");
    assert!(!last.is_empty());
    for (&lpn, &ppa) in &last {
        assert_eq!(ftl.page_lpn(lamina_nand_model::Ppa(ppa)), Some(Lpn(lpn)), "translation page {lpn}");
    }
    let mut mapped = 0;
    for x in 0..l {
        if let Some(ppa) = ftl.lookup(Lpn(x)) {
            assert_eq!(ftl.page_lpn(ppa), Some(Lpn(x)), "LPN {x}");
            mapped += 1;
        }
    }
    assert!(mapped >= l * 9 / 10, "{mapped} of {l} mapped");
}
