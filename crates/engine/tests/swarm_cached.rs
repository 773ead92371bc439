//! The swarm (see `swarm.rs`) with the page FTL's cached mapping: every seed whose drawn
//! FTL is the per-plane page FTL without replication runs again with `ftl.mapping =
//! "cached"` and a small CMT (0–63 entries, drawn from the seed; odd seeds with
//! `ftl.mapping_entry = "geometry"`), under `host.verify` and the swarm's invariants. `LAMINA_SWARM_SEEDS=n` runs more seeds,
//! `LAMINA_SWARM_START=k` starts at seed `k` (default 0).

mod swarm_harness;

use swarm_harness::{Scenario, check};

#[test]
fn swarm_with_the_cached_mapping() {
    let env = |k: &str| std::env::var(k).ok().and_then(|v| v.parse::<u64>().ok());
    let n = env("LAMINA_SWARM_SEEDS").unwrap_or(300);
    let start = env("LAMINA_SWARM_START").unwrap_or(0);
    check::quiet_panics();
    let (mut ran, mut failures) = (0, Vec::new());
    for seed in start..start + n {
        let Ok(s) = Scenario::from_seed(seed) else { continue };
        let mut cfg = s.config.clone();
        let f = &mut cfg.ftl;
        if f.kind != lamina_ftl::FtlKind::Page
            || f.allocation != lamina_ftl::Allocation::PerPlane
            || f.replication != lamina_ftl::Replication::None
        {
            continue;
        }
        f.mapping = lamina_ftl::Mapping::Cached;
        f.cmt_entries = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58;
        if seed % 2 == 1 {
            // MQSim's entry sizes: another translation-page size on every drawn device.
            f.mapping_entry = lamina_ftl::MappingEntry::Geometry;
        }
        let geometry = cfg.nand.validate().expect("drawn device is valid").geometry().clone();
        if f.validate(&geometry).is_err() {
            continue; // no room for the translation pages at the drawn over-provisioning
        }
        ran += 1;
        let violations = check::check(&cfg, &s.requests);
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
