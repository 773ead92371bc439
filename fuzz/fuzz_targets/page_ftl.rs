//! Fuzz the page-mapping FTL against the conformance harness's model.
//!
//! The first bytes choose the geometry and FTL configuration
//! (`lamina_ftl::testing::page_ftl_from_bytes`), the rest decode to host writes, dynamic
//! writes, reads, trims and background-GC steps (`lamina_ftl::testing::decode_ops`).
//! Every invariant is checked after every operation and GC step; a violation panics with
//! the operation sequence that led to it.
//!
//! To fuzz your own FTL, copy this file and replace the constructor.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lamina_ftl::testing::{page_ftl_from_bytes, run_bytes};

fuzz_target!(|data: &[u8]| {
    let Some((ftl, ops)) = page_ftl_from_bytes(data) else { return };
    if let Err(failure) = run_bytes(ftl, ops) {
        panic!("{failure}");
    }
});
