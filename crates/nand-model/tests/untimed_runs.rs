//! `Device::program_run_untimed` is `program_untimed(first + i, 0)` page by page: the
//! same results and the same state after every operation, on random sequences of runs,
//! erases and partial erases (runs from the write pointer, off it, across a block's
//! end, into partially erased blocks), with and without stored tags.

use lamina_nand_model::{BlockId, Device, DeviceOptions, Nanos, PartialEraseConfig, Ppa, preset};
use proptest::prelude::*;

const BLOCKS: u64 = 8;
const PPB: u64 = 8;

fn device(store_tags: bool) -> Device {
    let mut cfg = preset("mqsim-default").expect("preset");
    let g = &mut cfg.geometry;
    (g.channels, g.chips_per_channel, g.dies_per_chip, g.planes_per_die) = (1, 1, 1, 2);
    (g.blocks_per_plane, g.pages_per_block) = ((BLOCKS / 2) as u32, PPB as u32);
    cfg.partial_erase = Some(PartialEraseConfig { levels: 2 });
    cfg.timing.t_pbers = Some(Nanos(900_000));
    Device::new(cfg.validate().unwrap(), DeviceOptions { store_tags })
}

/// (kind, block, page, length): kind 0–5 a run (mostly from the write pointer), 6 an
/// erase, 7 a partial erase of PB `page % 7 + 1`.
fn op() -> impl Strategy<Value = (u8, u64, u64, u32)> {
    (0u8..8, 0..BLOCKS, 0..PPB, 1u32..=PPB as u32 + 2)
}

fn assert_same(a: &Device, b: &Device) {
    for blk in 0..BLOCKS {
        let id = BlockId(blk as u32);
        assert_eq!(a.write_pointer(id), b.write_pointer(id), "write pointer of block {blk}");
        assert_eq!(a.programmed_pages(id), b.programmed_pages(id), "programmed pages of block {blk}");
    }
    for p in 0..BLOCKS * PPB {
        assert_eq!(a.page_state(Ppa(p)), b.page_state(Ppa(p)), "state of page {p}");
        assert_eq!(a.tag(Ppa(p)), b.tag(Ppa(p)), "tag of page {p}");
    }
}

proptest! {
    #[test]
    fn a_run_is_its_pages_in_order(tags in any::<bool>(), ops in proptest::collection::vec(op(), 1..60)) {
        let (mut run, mut pages) = (device(tags), device(tags));
        for (kind, blk, page, n) in ops {
            let id = BlockId(blk as u32);
            match kind {
                0..=5 => {
                    // Two runs in three start at the write pointer (the common case).
                    let at = match (kind % 3, run.write_pointer(id)) {
                        (0 | 1, Some(wp)) => wp as u64,
                        _ => page,
                    };
                    let first = Ppa(blk * PPB + at);
                    // Never past the device's last page (that is an assertion, not an error).
                    let n = n.min((BLOCKS * PPB - first.0) as u32);
                    let want = (0..n as u64).try_for_each(|i| pages.program_untimed(Ppa(first.0 + i), 0));
                    prop_assert_eq!(run.program_run_untimed(first, n), want);
                }
                6 => {
                    prop_assert_eq!(run.erase_untimed(id), pages.erase_untimed(id));
                }
                _ => {
                    let pb = (page % 7 + 1) as u32;
                    prop_assert_eq!(run.partial_erase_untimed(id, pb), pages.partial_erase_untimed(id, pb));
                }
            }
            assert_same(&run, &pages);
        }
    }
}
