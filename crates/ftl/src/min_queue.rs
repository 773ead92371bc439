//! The free-block pools' min-queue under wear levelling: the least key first, like a
//! `BinaryHeap<Reverse<u64>>`, but a pool that starts with every block of a plane free
//! takes them from a sorted run instead of the heap.
//!
//! Why: a plane's free pool starts with all its blocks (2,048 on `mqsim-default`),
//! erase count 0, in block order. A binary heap of that size spans 16 KiB per plane,
//! and a plane opens its next block only every few ten thousand programs of the whole
//! device, so by then the heap's lines are out of cache and `pop`'s sift-down is a chain
//! of a dozen dependent misses. On the 1 M `mqsim` run `perf` put 2.5 % of the
//! simulation thread's samples in those pops (523 of 21,071), which callgrind counts at
//! under 0.1 % of its instructions (200 k requests: 2,850 blocks opened, 1.0 M of 1,211 M
//! instructions; docs/performance.md, tenth session). Taking the initial blocks from the
//! front of a sorted run touches one line per eight blocks, in order. Keys pushed later
//! (blocks coming back after an erase) go to a heap, which stays small: steady state
//! keeps few blocks free.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// A min-queue of distinct `u64` keys: an ascending run taken from its front, and a
/// binary heap for the keys pushed since. [`MinQueue::pop`] returns the least key of
/// both, so the order is a binary heap's whatever the keys.
#[derive(Clone, Debug, Default)]
pub(crate) struct MinQueue {
    /// Keys in ascending order (the initial contents).
    run: VecDeque<u64>,
    /// Keys pushed after construction.
    heap: BinaryHeap<Reverse<u64>>,
}

impl MinQueue {
    /// A queue of `keys`, which must be ascending and distinct.
    pub(crate) fn from_ascending(keys: impl IntoIterator<Item = u64>) -> MinQueue {
        let run: VecDeque<u64> = keys.into_iter().collect();
        assert!(run.iter().zip(run.iter().skip(1)).all(|(a, b)| a < b), "keys not ascending");
        MinQueue { run, heap: BinaryHeap::new() }
    }

    /// Add `key` (not already queued).
    #[inline]
    pub(crate) fn push(&mut self, key: u64) {
        self.heap.push(Reverse(key));
    }

    /// Whether the least key is the heap's rather than the run's (false when both are
    /// empty: the run's empty front then answers `None`).
    #[inline]
    fn heap_first(&self) -> bool {
        match (self.run.front(), self.heap.peek()) {
            (Some(&a), Some(&Reverse(b))) => b < a,
            (Some(_), None) => false,
            (None, h) => h.is_some(),
        }
    }

    /// The least key, if any.
    #[inline]
    pub(crate) fn peek(&self) -> Option<u64> {
        if self.heap_first() { self.heap.peek().map(|r| r.0) } else { self.run.front().copied() }
    }

    /// Remove and return the least key, if any.
    #[inline]
    pub(crate) fn pop(&mut self) -> Option<u64> {
        if self.heap_first() { self.heap.pop().map(|r| r.0) } else { self.run.pop_front() }
    }

    /// Keys queued.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.run.len() + self.heap.len()
    }

    /// Remove every key.
    #[cfg(test)]
    pub(crate) fn clear(&mut self) {
        self.run.clear();
        self.heap.clear();
    }

    /// Bytes allocated for the keys.
    pub(crate) fn heap_bytes(&self) -> usize {
        (self.run.capacity() + self.heap.capacity()) * std::mem::size_of::<u64>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Any mix of pushes and pops returns what a `BinaryHeap<Reverse<u64>>` holding
        /// the same keys returns, in the same order, and agrees on `peek` and `len`.
        #[test]
        fn pops_what_a_binary_heap_pops(
            initial in proptest::collection::btree_set(0u64..1_000, 0..60),
            ops in proptest::collection::vec(proptest::option::of(0u64..2_000), 0..200),
        ) {
            let mut q = MinQueue::from_ascending(initial.iter().copied());
            let mut reference: BinaryHeap<Reverse<u64>> = initial.iter().map(|&k| Reverse(k)).collect();
            let mut present: std::collections::BTreeSet<u64> = initial.clone();
            for op in ops {
                match op {
                    // Keys are distinct: push one only if it is not queued.
                    Some(k) if present.insert(k) => {
                        q.push(k);
                        reference.push(Reverse(k));
                    }
                    Some(_) => {}
                    None => {
                        let got = q.pop();
                        prop_assert_eq!(got, reference.pop().map(|r| r.0));
                        if let Some(k) = got {
                            present.remove(&k);
                        }
                    }
                }
                prop_assert_eq!(q.peek(), reference.peek().map(|r| r.0));
                prop_assert_eq!(q.len(), reference.len());
            }
        }
    }

    #[test]
    fn a_pushed_key_below_the_run_comes_first() {
        let mut q = MinQueue::from_ascending([5, 6, 7]);
        q.push(1);
        q.push(9);
        let order: Vec<u64> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(order, [1, 5, 6, 7, 9]);
        assert_eq!((q.len(), q.peek()), (0, None));
    }

    #[test]
    #[should_panic(expected = "keys not ascending")]
    fn an_unsorted_run_is_refused() {
        MinQueue::from_ascending([3, 2]);
    }
}
