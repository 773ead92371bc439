//! Fuzz the block-level FTLs (NFTL and the superblock FTL) against the conformance
//! harness's model.
//!
//! The first bytes choose the kind, geometry and configuration
//! (`lamina_ftl::testing::run_block_ftl_bytes`), the rest decode to operations
//! (`lamina_ftl::testing::decode_ops`). Every invariant is checked after every operation
//! and every merge / GC step; a violation panics with the operation sequence.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lamina_ftl::testing::run_block_ftl_bytes;

fuzz_target!(|data: &[u8]| {
    if let Some(Err(failure)) = run_block_ftl_bytes(data) {
        panic!("{failure}");
    }
});
