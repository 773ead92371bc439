//! Fresh reverse maps for the blocks the page FTL opens, made ahead on a helper thread.
//!
//! Every block the FTL opens gets a reverse map (the logical page of each of its pages,
//! [`UNMAPPED`] where none); a block's map is recycled when the block is erased, so a
//! fresh one is allocated only while the device fills up. A replay that writes millions
//! of pages opens thousands of blocks, and preconditioning opens every block once: 128
//! MiB of maps for a 256 GiB device with 8 KiB pages and 256 pages per block. Their
//! first write makes the kernel zero fresh memory on the simulation's thread, which on
//! this project's VMs is slow (`crate::pretouch`). So once [`RevSupply::HELPER_AFTER`]
//! maps have been allocated, a helper thread ([`Pretoucher`]) allocates and fills the
//! next ones in batches, one batch ahead of need.
//!
//! Nothing observable depends on it: a map from the helper holds exactly what a map
//! allocated here holds (every entry `UNMAPPED`), a block's map is filled again when it
//! is opened, [`RevSupply::fresh`] never waits for the helper, and which maps exist is
//! never read by anything but memory statistics.

use crate::pretouch::Pretoucher;

use super::UNMAPPED;

/// Where [`super::PageFtl::open_block`] gets a reverse map when its pool of recycled
/// maps is empty.
pub(super) struct RevSupply {
    /// Pages per block: the length of every map.
    ppb: usize,
    /// Maps this FTL may still need fresh at most (one per block it never opened).
    left: usize,
    /// Maps allocated fresh on the caller's thread so far.
    made_here: usize,
    /// The helper, once started.
    helper: Option<Pretoucher<Vec<Box<[u32]>>>>,
    /// Whether the helper may still be started (false once tried, and in clones).
    may_start: bool,
}

impl RevSupply {
    /// Fresh maps allocated here before the helper starts: small runs and tests never
    /// start a thread (for 256 pages per block, 512 KiB of maps).
    pub(super) const HELPER_AFTER: usize = 512;
    /// Bytes of maps per batch the helper hands over (at least one map).
    const BATCH_BYTES: usize = 256 * 1024;

    /// The supply of an FTL with `blocks` blocks of `ppb` pages.
    pub(super) fn new(ppb: u32, blocks: usize) -> RevSupply {
        RevSupply { ppb: ppb as usize, left: blocks, made_here: 0, helper: None, may_start: true }
    }

    /// Maps per batch.
    fn batch(&self) -> usize {
        (Self::BATCH_BYTES / (self.ppb * 4).max(1)).max(1)
    }

    /// A fresh map, every entry [`UNMAPPED`]. If the helper has a batch ready, the first
    /// map comes from it and the rest go to `pool`; otherwise it is allocated here.
    #[cold]
    #[inline(never)]
    pub(super) fn fresh(&mut self, pool: &mut Vec<Box<[u32]>>) -> Box<[u32]> {
        if let Some(mut batch) = self.helper.as_ref().and_then(Pretoucher::take)
            && let Some(first) = batch.pop()
        {
            self.left = self.left.saturating_sub(batch.len() + 1);
            pool.append(&mut batch);
            return first;
        }
        self.left = self.left.saturating_sub(1);
        self.made_here += 1;
        if self.made_here == Self::HELPER_AFTER {
            self.start();
        }
        vec![UNMAPPED; self.ppb].into_boxed_slice()
    }

    /// Start the helper for the maps still to come (at most one per block not yet
    /// given a map), the first time it is called with at least two batches to come.
    fn start(&mut self) {
        if !self.may_start {
            return;
        }
        self.may_start = false;
        let (ppb, batch) = (self.ppb, self.batch());
        let batches = self.left / batch;
        if batches < 2 {
            return;
        }
        self.helper = Pretoucher::spawn(batches, move || {
            (0..batch).map(|_| vec![UNMAPPED; ppb].into_boxed_slice()).collect()
        });
    }
}

impl Clone for RevSupply {
    /// A clone has no helper and never starts one (snapshots are copies of a run's
    /// state, not runs).
    fn clone(&self) -> Self {
        RevSupply { helper: None, may_start: false, ..*self }
    }
}

impl std::fmt::Debug for RevSupply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RevSupply")
            .field("ppb", &self.ppb)
            .field("left", &self.left)
            .field("made_here", &self.made_here)
            .field("helper", &self.helper.is_some())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Takes maps as an FTL would, waiting (in the test only) for the helper now and then.
    #[test]
    fn every_map_is_fresh_and_the_helper_hands_over_batches() {
        let ppb = 64;
        let blocks = RevSupply::HELPER_AFTER + 40 * (RevSupply::BATCH_BYTES / (ppb * 4));
        let mut s = RevSupply::new(ppb as u32, blocks);
        let mut pool = Vec::new();
        let mut maps = 0;
        let mut from_pool = 0;
        while maps < blocks {
            let m = match pool.pop() {
                Some(m) => {
                    from_pool += 1;
                    m
                }
                None => {
                    if maps >= RevSupply::HELPER_AFTER && maps % 7 == 0 {
                        std::thread::sleep(std::time::Duration::from_millis(2));
                    }
                    s.fresh(&mut pool)
                }
            };
            assert_eq!(m.len(), ppb);
            assert!(m.iter().all(|&e| e == UNMAPPED));
            maps += 1;
        }
        assert!(s.made_here >= RevSupply::HELPER_AFTER);
        // With a helper (the process may already run as many as it has cores, in which
        // case every map was made here), some maps came from its batches.
        if s.helper.is_some() {
            assert!(from_pool > 0, "the helper's batches were never used");
        }
        assert!(s.clone().helper.is_none());
    }

    #[test]
    fn a_small_device_never_starts_the_helper() {
        let mut s = RevSupply::new(256, RevSupply::HELPER_AFTER + 10);
        let mut pool = Vec::new();
        for _ in 0..RevSupply::HELPER_AFTER + 10 {
            s.fresh(&mut pool);
        }
        assert!(s.helper.is_none() && pool.is_empty());
    }
}
