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
use lamina_engine::config::{ConfigBuilder, SimConfig};
use lamina_engine::{BuildError, SimulationBuilder};

/// The tests here read the process's resident memory, which tests running in parallel
/// in the same process would disturb: each takes this lock first.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn cfg(preset: &str, sets: &[&str]) -> SimConfig {
    let mut b = ConfigBuilder::new().preset(preset).unwrap();
    for s in sets {
        b = b.set(s).unwrap();
    }
    b.build().unwrap()
}

/// A `/proc/self/status` figure in bytes (`VmHWM` peak or `VmRSS` current resident
/// memory), where the system reports it.
fn status_bytes(field: &str) -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = text.lines().find(|l| l.starts_with(field))?;
    Some(line.split_whitespace().nth(1)?.parse::<u64>().ok()? * 1024)
}

const GIB: u64 = 1 << 30;

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
        &["ftl.kind", "32 bits", "blocks_per_plane"],
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

/// The same for the cached mapping (issue #16): before the estimate counted them, its
/// translation-page content (4 B per logical page) and a CMT holding every page (48 B
/// per entry, ≈ 45 MiB here) were missing from it: resident memory grew 62.6 MB against
/// an estimate of 9.3 MB, so a configuration 6× over the limit passed the memory check. The CMT holds every logical page (`cmt_entries` ≥
/// them), so both the CMT and the content are fully populated after prefill and replay.
#[test]
fn the_cached_mappings_estimate_matches_resident_memory() {
    let _serial = serial();
    let sets = ["nand.geometry.blocks_per_plane=1024", "ftl.mapping=\"cached\"", "ftl.cmt_entries=1048576"];
    let c = cfg("die-binding-4x2", &sets);
    let g = c.nand.geometry.validate().unwrap();
    let lp = c.ftl.validate(&g).unwrap().logical_pages();
    let b = estimate(&c, &g, lp, true);
    let part = |key: &str| b.items.iter().filter(|i| i.key == key).map(|i| i.full_bytes).sum::<u64>();
    // 975,175 logical pages, 512 entries per 2 KiB translation page: 1905 pages.
    assert_eq!(part("ftl.mapping"), 975_175 * 4 + 1905 * 5);
    assert_eq!(part("ftl.cmt_entries"), 975_175 * 48);
    footprint_matches(&sets);
}

/// Build `die-binding-4x2` with `sets`, prefill and write every logical page, and check
/// the growth of resident memory against the full-footprint estimate.
fn footprint_matches(sets: &[&str]) {
    use lamina_engine::trace::{IoOp, IoRequest};
    let c = cfg("die-binding-4x2", sets);
    let g = c.nand.geometry.validate().unwrap();
    let lp = c.ftl.validate(&g).unwrap().logical_pages();
    let want = estimate(&c, &g, lp, true).full_bytes();
    let Some(before) = status_bytes("VmRSS:") else { return };
    let mut sim = SimulationBuilder::new(c).memory_limit(MemoryLimit::Bytes(GIB)).build().unwrap();
    const PAGES: u64 = 64;
    let writes = move || {
        (0..lp.div_ceil(PAGES)).map(move |i| {
            let first = i * PAGES;
            Ok(IoRequest {
                arrival: lamina_engine::trace::TraceTime(i * 20_000_000),
                device: 0,
                offset_bytes: first * 2048,
                size_bytes: (PAGES.min(lp - first)) * 2048,
                op: IoOp::Write,
            })
        })
    };
    sim.prefill(writes()).unwrap();
    sim.run(writes()).unwrap();
    let grown = status_bytes("VmRSS:").unwrap().saturating_sub(before);
    // Within 15 % (the trace touches ~93 % of the blocks: over-provisioned ones stay
    // free) plus 8 MiB for allocator and event-queue noise. Arrivals are spaced so that
    // requests never queue: per-request state is not part of the estimate.
    assert!(grown <= want + (8 << 20), "{sets:?}: resident memory grew {grown} B, estimate {want} B");
    assert!(
        grown + (8 << 20) >= want * 85 / 100,
        "{sets:?}: resident memory grew {grown} B, estimate {want} B"
    );
    drop(sim);
}
