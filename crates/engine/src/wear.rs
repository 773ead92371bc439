//! Erase counts over the replay alone: a snapshot of every block's and page's erase
//! count when the timed run starts, subtracted from the counts at its end. The lifetime
//! counts (`erases.per_block`, `erases.per_page`) include preconditioning, which on a
//! filled drive dominates them; pen-partial-erase's AEP and VEP (Fig. 13b/c) are over
//! the workload.
//!
//! Memory: one count per block, and one per page only for the blocks whose pages
//! differ from their block's count at the snapshot (those partial erases touched).

use lamina_nand_model::{BlockId, Device, Ppa};

use crate::stats::MeanVar;

/// The device's erase counts when the timed run started.
#[derive(Clone, Debug)]
pub(crate) struct EraseSnapshot {
    /// Whole-block erases per block.
    blocks: Vec<u32>,
    /// `(block, erases per page)` for the blocks whose pages differ from the block's
    /// count, in block order.
    pages: Vec<(u32, Box<[u32]>)>,
}

impl EraseSnapshot {
    /// The counts of `dev` now.
    pub(crate) fn take(dev: &Device) -> EraseSnapshot {
        let geo = dev.geometry();
        let ppb = geo.pages_per_block() as u64;
        let mut blocks = Vec::with_capacity(geo.total_blocks() as usize);
        let mut pages = Vec::new();
        for b in 0..geo.total_blocks() {
            let count = dev.block_erase_count(BlockId(b));
            blocks.push(count);
            let first = b as u64 * ppb;
            if (0..ppb).any(|p| dev.page_erase_count(Ppa(first + p)) != count) {
                pages.push((b, (0..ppb).map(|p| dev.page_erase_count(Ppa(first + p))).collect()));
            }
        }
        EraseSnapshot { blocks, pages }
    }

    /// Mean, variance and maximum of the whole-block erases per block since the snapshot.
    pub(crate) fn per_block_since(&self, dev: &Device) -> MeanVar {
        MeanVar::of(
            self.blocks
                .iter()
                .enumerate()
                .map(|(b, &c)| (dev.block_erase_count(BlockId(b as u32)) - c) as u64),
        )
    }

    /// Mean (AEP), variance (VEP) and maximum of the erases per page since the snapshot
    /// (block erases plus the partial erases that covered the page).
    pub(crate) fn per_page_since(&self, dev: &Device) -> MeanVar {
        let ppb = dev.geometry().pages_per_block() as u64;
        let mut extra = self.pages.iter().peekable();
        MeanVar::of(self.blocks.iter().enumerate().flat_map(move |(b, &c)| {
            let at_start = extra.next_if(|(x, _)| *x as usize == b).map(|(_, p)| p);
            let first = b as u64 * ppb;
            (0..ppb).map(move |p| {
                let start = at_start.map_or(c, |v| v[p as usize]);
                (dev.page_erase_count(Ppa(first + p)) - start) as u64
            })
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lamina_nand_model::{Command, DeviceOptions, PageAddr, PartialEraseConfig, SimTime};

    /// The `pen` chip cut to one plane of 4 blocks × 12 pages, L = 1 (two 6-page
    /// halves). Before the snapshot: block 0 erased twice, block 1's upper half (PB 2)
    /// partially erased once. After: block 0 erased once more, block 1's lower half (PB
    /// 3) once. Since the snapshot: block 0 1 on 12 pages, block 1 1 on its lower 6,
    /// blocks 2 and 3 0 — 18 of 48 pages.
    #[test]
    fn replay_counts_subtract_the_snapshot_per_page() {
        let mut c = lamina_nand_model::preset("pen").unwrap();
        c.geometry.channels = 1;
        c.geometry.chips_per_channel = 1;
        c.geometry.dies_per_chip = 1;
        c.geometry.planes_per_die = 1;
        c.geometry.blocks_per_plane = 4;
        c.geometry.pages_per_block = 12;
        c.partial_erase = Some(PartialEraseConfig { levels: 1 });
        let mut dev = Device::new(c.validate().unwrap(), DeviceOptions::default());
        let block = |b: u32| PageAddr { block: b, ..PageAddr::default() };
        let mut t = SimTime::ZERO;
        let mut run = |dev: &mut Device, cmd: Command<'_>| {
            t = dev.issue(t, &cmd).unwrap().done;
        };
        for _ in 0..2 {
            run(&mut dev, Command::Erase { blocks: &[block(0)] });
        }
        run(&mut dev, Command::PartialErase { block: block(1), pb: 2 });
        let snap = EraseSnapshot::take(&dev);
        assert_eq!(snap.pages.len(), 1, "only block 1 has per-page counts");
        run(&mut dev, Command::Erase { blocks: &[block(0)] });
        run(&mut dev, Command::PartialErase { block: block(1), pb: 3 });
        let page = snap.per_page_since(&dev);
        let q = 18.0 / 48.0;
        assert_eq!((page.mean, page.max), (q, 1));
        assert!((page.variance - (q - q * q)).abs() < 1e-12);
        let blocks = snap.per_block_since(&dev);
        assert_eq!((blocks.mean, blocks.max), (0.25, 1));
        // The lifetime count of block 0's pages is 3, of block 1's upper half 1.
        assert_eq!(dev.page_erase_count(Ppa(0)), 3);
        assert_eq!(dev.page_erase_count(Ppa(12)), 1);
    }
}
