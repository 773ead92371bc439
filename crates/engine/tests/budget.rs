//! Issue #8 item 7: a configuration that cannot fit (in memory or in the engine's index
//! widths) is refused by `SimulationBuilder::build` before anything is allocated, fast,
//! naming the config key, the estimate and the limit.
//!
//! Before this, a 1 TiB `buffer.size_bytes` was accepted (4.7 GB RSS), 10^15 aborted on
//! an allocation failure, `pages_per_block = 2^31` grew to 16 GB RSS before any check,
//! the page FTL's 32-bit limit was an `assert!` reached after allocating, and
//! `page_size_bytes = 1` ran for more than 300 s without output.

use std::time::{Duration, Instant};

use lamina_engine::budget::{MemoryLimit, estimate};
use lamina_engine::{BuildError, SimulationBuilder};

mod budget_support;
use budget_support::{GIB, cfg, footprint_matches, serial, status_bytes};

/// (preset, overrides, memory limit, substrings the error must contain).
type Case = (&'static str, &'static [&'static str], u64, &'static [&'static str]);

const REFUSED: &[Case] = &[
    // The buffer: larger than the device, absurdly large, smaller than a page.
    (
        "mbm",
        &["buffer.size_bytes=1099511627776"],
        16 * GIB,
        &["buffer.size_bytes", "logical capacity", "or 0"],
    ),
    ("mbm", &["buffer.size_bytes=1000000000000000"], 16 * GIB, &["buffer.size_bytes", "logical capacity"]),
    ("die-binding-4x2", &["buffer.size_bytes=4294967296"], 16 * GIB, &["buffer.size_bytes", "at most"]),
    ("mbm", &["buffer.size_bytes=100"], 16 * GIB, &["buffer.size_bytes", "smaller than one 8192-byte page"]),
    // Geometries the code cannot index or that make no sense.
    ("mbm", &["nand.geometry.pages_per_block=2147483648"], 16 * GIB, &["geometry.pages_per_block", "65536"]),
    ("mbm", &["nand.geometry.page_size_bytes=1"], 16 * GIB, &["geometry.page_size_bytes", "multiple of 512"]),
    ("mbm", &["nand.geometry.page_size_bytes=4000"], 16 * GIB, &["geometry.page_size_bytes", "512"]),
    (
        "mbm",
        &["nand.geometry.blocks_per_plane=4194304"],
        16 * GIB,
        &["nand.geometry", "32 bits", "blocks_per_plane"],
    ),
    ("mbm", &["nand.geometry.blocks_per_plane=4294967295"], 16 * GIB, &["geometry.blocks_per_plane"]),
    // Fits the index widths but not the memory limit: named key, estimate and limit.
    (
        "mqsim-default",
        &["host.verify=true"],
        GIB,
        &[
            "nand.geometry.blocks_per_plane",
            "needs about",
            "limit of 1.0 GiB",
            "host.verify",
            "LAMINA_MAX_MEMORY",
        ],
    ),
    // A CMT as large as the map (48 B per entry in DRAM: slab slot and index) on
    // MQSim's 62 Mi logical pages: about 3 GiB, named by its key.
    (
        "mqsim-default",
        &["ftl.mapping=\"cached\"", "ftl.cmt_entries=100000000"],
        2 * GIB,
        &[
            "ftl.cmt_entries",
            "cached mapping table (CMT)",
            "give a smaller ftl.cmt_entries",
            "limit of 2.0 GiB",
        ],
    ),
    (
        "die-binding-4x2",
        &["nand.geometry.blocks_per_plane=131072", "nand.geometry.pages_per_block=1024"],
        8 * GIB,
        &["nand.geometry.blocks_per_plane", "FTL forward and reverse maps", "limit of 8.0 GiB"],
    ),
];

#[test]
#[allow(clippy::disallowed_methods)] // the test's own wall-clock limit, not simulated time
fn impossible_configurations_are_refused_before_allocating() {
    let _serial = serial();
    for (preset, sets, limit, wants) in REFUSED {
        let c = cfg(preset, sets);
        let start = Instant::now();
        let result = SimulationBuilder::new(c).memory_limit(MemoryLimit::Bytes(*limit)).build();
        let took = start.elapsed();
        let Err(e) = result else { panic!("{preset} {sets:?}: accepted") };
        let msg = e.to_string();
        for want in *wants {
            assert!(msg.contains(want), "{preset} {sets:?}: want {want:?} in: {msg}");
        }
        assert!(took < Duration::from_secs(1), "{preset} {sets:?}: took {took:?}");
    }
    // Nothing was allocated for them: the whole test process stayed small (each case
    // used to take gigabytes, or hours).
    if let Some(peak) = status_bytes("VmHWM:") {
        assert!(peak < 512 << 20, "peak RSS {} MiB", peak >> 20);
    }
}

#[test]
fn every_preset_fits_a_modest_machine_and_the_buffer_may_equal_the_device() {
    let _serial = serial();
    for p in lamina_nand_model::presets() {
        let c = cfg(p.name, &["host.verify=true"]);
        let g = c.nand.geometry.validate().unwrap();
        let lp = c.ftl.validate(&g).unwrap().logical_pages();
        let b = estimate(&c, &g, lp, true);
        assert!(b.full_bytes() < 2 * GIB, "{}: {} bytes", p.name, b.full_bytes());
        assert!(b.upfront_bytes() < b.full_bytes(), "{}", p.name);
    }
    // A buffer exactly as large as the logical capacity is legal (the largest legal one).
    let c = cfg("die-binding-4x2", &["nand.geometry.blocks_per_plane=64"]);
    let g = c.nand.geometry.validate().unwrap();
    let cap = c.ftl.validate(&g).unwrap().logical_pages() * 2048;
    let ok =
        cfg("die-binding-4x2", &["nand.geometry.blocks_per_plane=64", &format!("buffer.size_bytes={cap}")]);
    SimulationBuilder::new(ok).memory_limit(MemoryLimit::Bytes(GIB)).build().unwrap();
    let over = cfg(
        "die-binding-4x2",
        &["nand.geometry.blocks_per_plane=64", &format!("buffer.size_bytes={}", cap + 2048)],
    );
    let e = SimulationBuilder::new(over).build().err().unwrap();
    assert!(matches!(e, BuildError::Budget(_)), "{e}");
}

#[test]
fn the_estimate_grows_with_what_drives_it() {
    let _serial = serial();
    let full = |sets: &[&str]| {
        let c = cfg("die-binding-4x2", sets);
        let g = c.nand.geometry.validate().unwrap();
        let lp = c.ftl.validate(&g).unwrap().logical_pages();
        estimate(&c, &g, lp, true).full_bytes()
    };
    let base = full(&["nand.geometry.blocks_per_plane=1024"]);
    let double = full(&["nand.geometry.blocks_per_plane=2048"]);
    assert!(double > base * 19 / 10 && double < base * 21 / 10, "{base} → {double}");
    // Verify adds an 8 B tag per physical page (1 Mi) and a 4 B version per logical
    // page (0.93 Mi): ≥ 11.7 MiB.
    let verify = full(&["nand.geometry.blocks_per_plane=1024", "host.verify=true"]);
    assert!(verify - base >= 8 * (1 << 20) + 4 * 975_175, "{base} → {verify}");
    // A 1 MiB buffer of 2 KiB pages: 512 slots plus its 4 B-per-page index.
    let buffered = full(&["nand.geometry.blocks_per_plane=1024", "buffer.size_bytes=1048576"]);
    assert!(buffered - base >= 4 * 975_175 + 512 * 32, "{base} → {buffered}");
}

/// The estimate is the real thing: build a device, write every logical page with verify
/// on (so every per-page table is fully populated: the buffer's LPN index is the same
/// `LpnTable` as the verify versions, so it is covered too), and compare
/// the growth of resident memory with the full-footprint estimate. Fails when a data
/// structure grows (or shrinks) without `budget.rs` following.
#[test]
fn the_full_footprint_estimate_matches_resident_memory() {
    let _serial = serial();
    footprint_matches(&["nand.geometry.blocks_per_plane=4096", "host.verify=true"]);
}
