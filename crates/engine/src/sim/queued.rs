//! The host's queued writes per logical page ([`QueuedWrites`]): how many host writes of
//! a page wait for their program (issue #8, 0b: a read that finds its page unmapped but
//! here is served from the queued write's data).
//!
//! A write is counted when it starts to wait and uncounted when its program is issued,
//! so under a backlog every host page passes through the table once. It replaced an
//! `FxHashMap<u64, u32>` whose `entry` and `get_mut` + `remove` cost about 170
//! instructions per queued write (callgrind, saturated trace; docs/performance.md).
//! This table is the same map with less in the way: open addressing with linear
//! probing, a multiplicative (Fibonacci) hash, a load factor of at most one half, and
//! deletion by backward shift (no tombstones, so probes stay short however many pages
//! pass through). It is only ever looked up, never iterated, so its layout cannot reach
//! a result.

/// A slot's key when it holds no page (no logical page number is this large).
const EMPTY: u64 = u64::MAX;
/// Slots of a new table (16 KiB).
const INITIAL_SLOTS: usize = 1024;

/// One slot: a logical page and its queued writes (at least 1).
#[derive(Clone, Copy)]
struct Slot {
    lpn: u64,
    writes: u32,
}

const FREE: Slot = Slot { lpn: EMPTY, writes: 0 };

/// Queued host writes per logical page: a map from page to a positive count.
pub(crate) struct QueuedWrites {
    slots: Vec<Slot>,
    /// `64 - log2(slots.len())`: the hash keeps the top bits of the product.
    shift: u32,
    /// Pages in the table.
    len: usize,
}

impl Default for QueuedWrites {
    fn default() -> Self {
        QueuedWrites::with_slots(INITIAL_SLOTS)
    }
}

impl QueuedWrites {
    fn with_slots(n: usize) -> Self {
        debug_assert!(n.is_power_of_two() && n >= 2);
        QueuedWrites { slots: vec![FREE; n], shift: 64 - n.trailing_zeros(), len: 0 }
    }

    /// Pages with at least one queued write.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The slot where the probe for `lpn` starts.
    #[inline]
    fn home(&self, lpn: u64) -> usize {
        (lpn.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    #[inline]
    fn mask(&self) -> usize {
        self.slots.len() - 1
    }

    /// The slot holding `lpn`, or `Err` with the free slot that ends its probe.
    #[inline]
    fn find(&self, lpn: u64) -> Result<usize, usize> {
        let mask = self.mask();
        let mut i = self.home(lpn);
        loop {
            let k = self.slots[i].lpn;
            if k == lpn {
                return Ok(i);
            }
            if k == EMPTY {
                return Err(i);
            }
            i = (i + 1) & mask;
        }
    }

    /// Whether a host write of `lpn` is queued.
    #[inline]
    pub(crate) fn contains(&self, lpn: u64) -> bool {
        self.find(lpn).is_ok()
    }

    /// Queued writes of `lpn` (0 if none).
    #[cfg(test)]
    fn get(&self, lpn: u64) -> u32 {
        self.find(lpn).map_or(0, |i| self.slots[i].writes)
    }

    /// One more write of `lpn` waits.
    #[inline]
    pub(crate) fn add(&mut self, lpn: u64) {
        debug_assert_ne!(lpn, EMPTY);
        match self.find(lpn) {
            Ok(i) => self.slots[i].writes += 1,
            Err(mut i) => {
                if 2 * (self.len + 1) > self.slots.len() {
                    self.grow();
                    i = self.free_slot(lpn);
                }
                self.slots[i] = Slot { lpn, writes: 1 };
                self.len += 1;
            }
        }
    }

    /// A write of `lpn` was programmed: one fewer waits (nothing if none was counted,
    /// e.g. after [`Self::remove`]).
    #[inline]
    pub(crate) fn programmed(&mut self, lpn: u64) {
        if let Ok(i) = self.find(lpn) {
            let s = &mut self.slots[i];
            s.writes -= 1;
            if s.writes == 0 {
                self.delete(i);
            }
        }
    }

    /// Forget every queued write of `lpn` (a trim supersedes their data).
    #[inline]
    pub(crate) fn remove(&mut self, lpn: u64) {
        if let Ok(i) = self.find(lpn) {
            self.delete(i);
        }
    }

    /// Speed hint: load the slot where a lookup of `lpn` starts. No effect on state.
    #[inline]
    pub(crate) fn warm(&self, lpn: u64) -> u64 {
        self.slots[self.home(lpn)].lpn
    }

    /// Empty slot `i` and move back the entries after it whose probe passed over it,
    /// so that every entry stays reachable from its home without tombstones.
    fn delete(&mut self, mut i: usize) {
        let mask = self.mask();
        self.len -= 1;
        let mut j = i;
        loop {
            j = (j + 1) & mask;
            let s = self.slots[j];
            if s.lpn == EMPTY {
                break;
            }
            // `s` may move to the hole at `i` unless its home lies cyclically in (i, j].
            let home = self.home(s.lpn);
            let stays = if i <= j { i < home && home <= j } else { i < home || home <= j };
            if !stays {
                self.slots[i] = s;
                i = j;
            }
        }
        self.slots[i] = FREE;
    }

    /// Double the slots and re-insert every entry (out of line: rare).
    #[inline(never)]
    fn grow(&mut self) {
        let old = std::mem::replace(self, QueuedWrites::with_slots(self.slots.len() * 2));
        for s in old.slots.into_iter().filter(|s| s.lpn != EMPTY) {
            let i = self.free_slot(s.lpn);
            self.slots[i] = s;
        }
        self.len = old.len;
    }

    /// The free slot that ends the probe for `lpn`, which the table does not hold.
    fn free_slot(&self, lpn: u64) -> usize {
        let Err(i) = self.find(lpn) else { unreachable!("page {lpn} already in the table") };
        i
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::*;

    #[derive(Clone, Debug)]
    enum Op {
        Add(u64),
        Programmed(u64),
        Remove(u64),
    }

    fn op(keys: u64) -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => (0..keys).prop_map(Op::Add),
            2 => (0..keys).prop_map(Op::Programmed),
            1 => (0..keys).prop_map(Op::Remove),
        ]
    }

    /// Keys spread as logical pages are (small and dense, or sparse and large), several
    /// per home slot once the table is loaded.
    fn key(k: u64, sparse: bool) -> u64 {
        if sparse { k.wrapping_mul(0x1234_5678_9ABC_DEF1) >> 20 } else { k }
    }

    proptest! {
        /// Any sequence of adds, programs and removes leaves the table answering like a
        /// `BTreeMap` of positive counts after every step (through growth and backward-shift
        /// deletions), for dense and for sparse page numbers.
        #[test]
        fn behaves_like_a_map_of_counts(ops in proptest::collection::vec(op(3000), 1..4000), sparse: bool) {
            let mut t = QueuedWrites::with_slots(4);
            let mut m: BTreeMap<u64, u32> = BTreeMap::new();
            for o in &ops {
                match *o {
                    Op::Add(k) => {
                        let k = key(k, sparse);
                        t.add(k);
                        *m.entry(k).or_insert(0) += 1;
                    }
                    Op::Programmed(k) => {
                        let k = key(k, sparse);
                        t.programmed(k);
                        if let Some(n) = m.get_mut(&k) {
                            *n -= 1;
                            if *n == 0 {
                                m.remove(&k);
                            }
                        }
                    }
                    Op::Remove(k) => {
                        let k = key(k, sparse);
                        t.remove(k);
                        m.remove(&k);
                    }
                }
                prop_assert_eq!(t.len(), m.len());
                prop_assert!(2 * t.len() <= t.slots.len());
            }
            for k in 0..3000 {
                let k = key(k, sparse);
                prop_assert_eq!(t.get(k), m.get(&k).copied().unwrap_or(0));
                prop_assert_eq!(t.contains(k), m.contains_key(&k));
            }
        }
    }

    /// Every entry stays reachable from its home: no free slot between an entry's home and
    /// its slot (what backward-shift deletion must keep), checked after every round of a
    /// churn that grows the table and wraps probes around its end.
    #[test]
    fn probes_never_cross_a_free_slot() {
        let mut t = QueuedWrites::with_slots(64);
        for round in 0..200u64 {
            for k in 0..30 {
                t.add(round * 7 + k);
            }
            for k in (0..30).filter(|k| k % 3 != 0) {
                t.programmed(round * 7 + k);
            }
            let mask = t.mask();
            for (i, s) in t.slots.iter().enumerate() {
                if s.lpn == EMPTY {
                    continue;
                }
                let mut j = t.home(s.lpn);
                while j != i {
                    assert_ne!(t.slots[j].lpn, EMPTY, "slot {i} unreachable from its home");
                    j = (j + 1) & mask;
                }
            }
        }
        assert_eq!(t.len(), t.slots.iter().filter(|s| s.lpn != EMPTY).count());
        assert!(t.len() > 64, "the churn grew the table");
    }
}
