//! What the `more_ftls` cargo-fuzz target does, on stable: fuzzer-like bytes choose MBM,
//! TBM, GFTL, or NFTL / the superblock FTL with PEN on a real device, their shape and
//! configuration (`lamina_ftl::testing::run_more_ftl_bytes`), then the operations; every
//! invariant is checked after every operation and GC step.

use lamina_ftl::testing::{MORE_FTL_CONFIG_BYTES, MoreFtl, fuzz_like_inputs, run_more_ftl_bytes};

#[test]
fn byte_chosen_mbm_tbm_gftl_and_pen_ftls_conform() {
    let mut built = [0u32; MoreFtl::ALL.len()];
    for bytes in fuzz_like_inputs(41, 500) {
        let Some(result) = run_more_ftl_bytes(&bytes) else { continue };
        let family = MoreFtl::of(&bytes);
        built[MoreFtl::ALL.iter().position(|&f| f == family).unwrap()] += 1;
        if let Err(f) = result {
            panic!("{family:?}, config bytes {:?}: {f}", &bytes[..MORE_FTL_CONFIG_BYTES]);
        }
    }
    eprintln!("built per family (mbm, tbm, gftl, nftl+pen, superblock+pen): {built:?}");
    // Every family is built for most of its inputs (about 100 each).
    assert!(built.iter().all(|&n| n > 60), "{built:?}");
}
