//! The swarm (see `swarm.rs`) with the page FTL's cached mapping: every seed whose drawn
//! FTL is the per-plane page FTL without replication runs again with `ftl.mapping =
//! "cached"` and a small CMT (0–63 entries, drawn from the seed; 0 to 64 × k − 1 at
//! `LAMINA_SWARM_SCALE=k`; odd seeds with
//! `ftl.mapping_entry = "geometry"`), under `host.verify` and the swarm's invariants. `LAMINA_SWARM_SEEDS=n` runs more seeds,
//! `LAMINA_SWARM_START=k` starts at seed `k` (default 0).

mod swarm_harness;

use lamina_engine::config::SimConfig;
use lamina_engine::trace::IoRequest;
use swarm_harness::{Scenario, check};

/// Seed `seed`'s swarm scenario with the cached mapping, `None` if the seed draws another
/// FTL or no room for the translation pages.
fn cached_scenario(seed: u64) -> Option<(SimConfig, Vec<IoRequest>)> {
    let s = Scenario::from_seed(seed).ok()?;
    let mut cfg = s.config.clone();
    let f = &mut cfg.ftl;
    if f.kind != lamina_ftl::FtlKind::Page
        || f.allocation != lamina_ftl::Allocation::PerPlane
        || f.replication != lamina_ftl::Replication::None
    {
        return None;
    }
    f.mapping = lamina_ftl::Mapping::Cached;
    let h = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    f.cmt_entries = match swarm_harness::scale() {
        1 => h >> 58,
        // Larger devices hold more translation pages: a CMT of up to 64 × scale entries,
        // so a large cache (many cached translation pages, long LRU lists) is drawn too.
        k => (h >> 32) % (64 * u64::from(k)),
    };
    if seed % 2 == 1 {
        // MQSim's entry sizes: another translation-page size on every drawn device.
        f.mapping_entry = lamina_ftl::MappingEntry::Geometry;
    }
    let geometry = cfg.nand.validate().expect("drawn device is valid").geometry().clone();
    if f.validate(&geometry).is_err() {
        return None; // no room for the translation pages at the drawn over-provisioning
    }
    Some((cfg, s.requests))
}

/// Seeds that failed once, replayed in every run (each also has a hand-built test in
/// `swarm_regressions.rs` where one could be shrunk): 23480 and 28303 (a GC job queued
/// on an idle die never ran), 28268 (a GC move read a page the same dispatch was still to
/// program). docs/testing.md.
#[test]
fn cached_swarm_seeds_that_failed_once() {
    check::quiet_panics();
    for seed in [23480, 28303, 28268] {
        let (cfg, requests) = cached_scenario(seed).expect("the seed still draws a cached-mapping scenario");
        let violations = check::check(&cfg, &requests);
        assert!(violations.is_empty(), "seed {seed}: {violations:?}");
    }
}

#[test]
fn swarm_with_the_cached_mapping() {
    let env = |k: &str| std::env::var(k).ok().and_then(|v| v.parse::<u64>().ok());
    let n = env("LAMINA_SWARM_SEEDS").unwrap_or(300);
    let start = env("LAMINA_SWARM_START").unwrap_or(0);
    check::quiet_panics();
    let (mut ran, mut failures) = (0, Vec::new());
    for seed in start..start + n {
        let Some((cfg, requests)) = cached_scenario(seed) else { continue };
        ran += 1;
        let violations = check::check(&cfg, &requests);
        if !violations.is_empty() {
            eprintln!(
                "seed {seed} (cmt_entries {}, {:?}): {violations:?}",
                cfg.ftl.cmt_entries, cfg.ftl.mapping_entry
            );
            failures.push(seed);
        }
    }
    eprintln!("{ran} of {n} seeds ran with the cached mapping");
    assert!(ran >= n / 10, "only {ran} of {n} seeds drew a page FTL the cached mapping fits");
    assert!(failures.is_empty(), "cached-mapping swarm failures at seeds {failures:?}");
}
