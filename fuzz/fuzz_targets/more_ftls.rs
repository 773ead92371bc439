//! Fuzz the FTL kinds the other targets leave out — MBM (write strategy on or off, any
//! alignment slack), TBM, GFTL (steps per write, copies per step), and NFTL and the
//! superblock FTL with PEN on a device with partial-block erase (tree or `subblock3`
//! partition, disturbance on or off, any W) — against the conformance harness's model.
//!
//! The first bytes choose the family, shape and configuration
//! (`lamina_ftl::testing::run_more_ftl_bytes`), the rest decode to operations
//! (`lamina_ftl::testing::decode_ops`). Every invariant is checked after every operation
//! and every GC / merge step, PEN's programs and (partial) erases also by a real device;
//! a violation panics with the operation sequence.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lamina_ftl::testing::run_more_ftl_bytes;

fuzz_target!(|data: &[u8]| {
    if let Some(Err(failure)) = run_more_ftl_bytes(data) {
        panic!("{failure}");
    }
});
