//! `PageFtl::gc_finish_untimed` (a GC job's moves in one loop) against the trait's default
//! (`gc_step` until `Done`): the same effects in the same order and the same state, on
//! random small devices and configurations, jobs finished from their start or midway
//! (and `warm_writes` and the map prefetches, read-only hints, run before every write).

use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use super::*;
use crate::api::gc_steps_untimed;
use crate::config::GcThreshold;

fn below(rng: &mut Xoshiro256PlusPlus, n: u64) -> u64 {
    rng.next_u64() % n
}

/// Everything the FTL holds: its fields (`Debug`) and every forward-map entry.
fn assert_same_state(a: &PageFtl, b: &PageFtl) {
    assert_eq!(format!("{a:?}"), format!("{b:?}"));
    let len = a.cfg.logical_pages + a.cmt.as_ref().map_or(0, |c| c.tpages());
    for l in 0..len {
        assert_eq!(a.map_get(l), b.map_get(l), "map entry {l}");
    }
}

/// Run the job `gc_begin` just started on `plane` to its end both ways (after the same
/// random number of single steps) and check that they agree; `ftl` keeps the result.
fn finish_both_ways(ftl: &mut PageFtl, plane: PlaneId, rng: &mut Xoshiro256PlusPlus) {
    let mut other = ftl.clone();
    for _ in 0..below(rng, 4) {
        let step = ftl.gc_step(plane);
        assert_eq!(step, other.gc_step(plane));
        if step == GcStep::Done {
            return;
        }
    }
    let (mut fast, mut slow) = (Vec::new(), Vec::new());
    ftl.gc_finish_untimed(plane, &mut |e| fast.push(e));
    gc_steps_untimed(&mut other, plane, &mut |e| slow.push(e));
    assert_eq!(fast, slow);
    assert!(!ftl.gc_in_progress(plane));
    assert_same_state(ftl, &other);
}

fn random_config(rng: &mut Xoshiro256PlusPlus) -> FtlConfig {
    let ties = [TieBreak::LowestId, TieBreak::Oldest, TieBreak::LeastWorn];
    let aligned = below(rng, 3) == 0;
    let cached = !aligned && below(rng, 4) == 0;
    let mut c = FtlConfig {
        overprovisioning: [0.3, 0.4, 0.5][below(rng, 3) as usize],
        gc_threshold: GcThreshold::FreeBlocks(2 + below(rng, 2) as u32),
        victim_tie_break: ties[below(rng, 3) as usize],
        wear_leveling: below(rng, 2) == 0,
        copyback: below(rng, 2) == 0,
        allocation: if aligned { Allocation::DieAligned } else { Allocation::PerPlane },
        ..FtlConfig::default()
    };
    if cached {
        c.mapping = Mapping::Cached;
        c.cmt_entries = 16;
    }
    c
}

#[test]
fn one_loop_gc_equals_the_step_by_step_gc_on_random_devices() {
    let (mut jobs, mut devices) = (0, 0);
    for seed in 0..48u64 {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let planes = 1 + below(&mut rng, 2) as u32;
        let dies = 1 + below(&mut rng, 2) as u32;
        let blocks = 10 + below(&mut rng, 12) as u32;
        let pages = [4, 8, 16][below(&mut rng, 3) as usize];
        let g = crate::testing::slc_geometry(1 + below(&mut rng, 2) as u32, 1, dies, planes, blocks, pages);
        // A small device with a high GC threshold can be refused (too little room).
        let Ok(mut ftl) = PageFtl::new(g, &random_config(&mut rng)) else { continue };
        devices += 1;
        let logical = ftl.logical_pages();
        let hot = 1 + below(&mut rng, logical); // skewed overwrites on some devices
        for _ in 0..logical * 6 {
            let lpn =
                Lpn(if below(&mut rng, 2) == 0 { below(&mut rng, hot) } else { below(&mut rng, logical) });
            let plane = ftl.static_plane(lpn);
            // Hints (`&self`), in range or not: must not panic.
            ftl.warm_writes(&[lpn, Lpn(logical), Lpn(0)]);
            ftl.prefetch_map_first(&[lpn, Lpn(logical), Lpn(u64::MAX)]);
            ftl.prefetch_map_second(&[lpn, Lpn(logical), Lpn(u64::MAX)]);
            let mut result = Err(FtlError::NoFreePage { plane });
            for _ in 0..3 {
                let q = match result {
                    Err(e) => e.plane(),
                    Ok(_) => break,
                };
                while ftl.needs_gc(q) || ftl.gc_in_progress(q) {
                    if !ftl.gc_in_progress(q) && ftl.gc_begin(q).is_none() {
                        break;
                    }
                    finish_both_ways(&mut ftl, q, &mut rng);
                    jobs += 1;
                }
                result = ftl.write(lpn, plane);
            }
        }
    }
    assert!(devices >= 40 && jobs > 1000, "only {jobs} GC jobs on {devices} devices compared");
}
