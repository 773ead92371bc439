//! The cached mapping's memory estimate against resident memory (issue #16), in a test
//! binary of its own: see `budget_support`.

use lamina_engine::budget::estimate;

mod budget_support;
use budget_support::{cfg, footprint_matches, serial};

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
