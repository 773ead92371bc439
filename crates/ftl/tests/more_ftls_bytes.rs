//! What the `more_ftls` cargo-fuzz target does, on stable: fuzzer-like bytes choose MBM,
//! TBM, GFTL, or NFTL / the superblock FTL with PEN on a real device, their shape and
//! configuration (`lamina_ftl::testing::run_more_ftl_bytes`), then the operations; every
//! invariant is checked after every operation and GC step.

use lamina_ftl::FtlStats;
use lamina_ftl::testing::{MORE_FTL_CONFIG_BYTES, MoreFtl, fuzz_like_inputs, run_more_ftl_bytes};

#[test]
fn byte_chosen_mbm_tbm_gftl_and_pen_ftls_conform() {
    let n = MoreFtl::ALL.len();
    let mut built = vec![0u32; n];
    let mut totals = vec![FtlStats::default(); n];
    for bytes in fuzz_like_inputs(41, 300) {
        let Some(result) = run_more_ftl_bytes(&bytes) else { continue };
        let family = MoreFtl::of(&bytes);
        let i = MoreFtl::ALL.iter().position(|&f| f == family).unwrap();
        built[i] += 1;
        match result {
            Ok(s) => {
                let t = &mut totals[i];
                t.gc_jobs += s.gc_jobs;
                t.gc_moves += s.gc_moves;
                t.erases += s.erases;
                t.partial_erases += s.partial_erases;
                t.pen_m_merges += s.pen_m_merges;
                t.pen_disturb_restores += s.pen_disturb_restores;
            }
            Err(f) => panic!("{family:?}, config bytes {:?}: {f}", &bytes[..MORE_FTL_CONFIG_BYTES]),
        }
    }
    eprintln!("built per family (mbm, tbm, gftl, nftl+pen, superblock+pen): {built:?}");
    // Every family is built for most of its inputs (about 60 each)...
    assert!(built.iter().all(|&n| n > 40), "{built:?}");
    // ...and the inputs really reclaim: GC moves and erases everywhere, PEN's M-Merges and
    // partial erases and disturbance restores in both PEN families (checked against the
    // real device).
    for (family, t) in MoreFtl::ALL.iter().zip(&totals) {
        eprintln!(
            "{family:?}: gc_jobs {} gc_moves {} erases {} partial_erases {} m_merges {} disturb_restores {}",
            t.gc_jobs, t.gc_moves, t.erases, t.partial_erases, t.pen_m_merges, t.pen_disturb_restores
        );
        assert!(t.gc_jobs > 100 && t.gc_moves > 100 && t.erases > 100, "{family:?}: {t:?}");
    }
    for t in &totals[3..] {
        assert!(
            t.pen_m_merges > 20 && t.partial_erases >= t.pen_m_merges && t.pen_disturb_restores > 0,
            "{t:?}"
        );
    }
}
