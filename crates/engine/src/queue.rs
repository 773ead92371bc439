//! The event queue: a binary heap ordered by `(time, insertion sequence)`, so events at
//! equal times run in the order they were scheduled (first-in, first-out ties).
//!
//! Each entry is one `u128`: the time in the high 64 bits, then a 32-bit insertion
//! sequence, then 32 bits of event. The heap moves and compares 16 bytes per entry (an
//! entry holding the event beside a `(time, seq)` key took 32 with padding). Events that
//! do not fit in 31 bits ([`Compact::to_inline`] says `None`) are kept in a side slab and
//! the entry holds their slot. The event bits sit below the sequence, which is unique
//! among pending entries, so they never decide the order.
//!
//! The sequence restarts when 2³² events have been scheduled: the pending entries are
//! renumbered `0, 1, …` in their order (a stable renumbering), so the order of the
//! events in the queue — and of those scheduled later, which get larger numbers — is
//! exactly that of an unbounded sequence.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use lamina_nand_model::SimTime;

use crate::slab::Slab;

/// An event that may be stored in 31 bits inside its queue entry (the common events of
/// the replay); others are stored beside the heap.
pub trait Compact: Copy {
    /// The event as a number below 2³¹, if it has one.
    fn to_inline(self) -> Option<u32>;
    /// The event [`Compact::to_inline`] made `code` from.
    fn from_inline(code: u32) -> Self;
}

/// Set in an entry's event bits when they hold a slot of the side slab.
const SPILLED: u32 = 1 << 31;

/// Sequence numbers per epoch (2³²).
const SEQ_LIMIT: u64 = 1 << 32;

/// A deterministic priority queue of events.
pub struct EventQueue<E> {
    /// `Reverse((time << 64) | (seq << 32) | event bits)`: `BinaryHeap` is a max-heap.
    heap: BinaryHeap<Reverse<u128>>,
    /// Events that do not fit in an entry.
    spilled: Slab<E>,
    /// The next entry's sequence number (below `seq_limit`).
    next_seq: u64,
    /// When the sequence restarts ([`SEQ_LIMIT`]; smaller in tests).
    seq_limit: u64,
    /// Events ever scheduled.
    scheduled: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue {
            heap: BinaryHeap::with_capacity(1024),
            spilled: Slab::default(),
            next_seq: 0,
            seq_limit: SEQ_LIMIT,
            scheduled: 0,
        }
    }
}

impl<E: Compact> EventQueue<E> {
    /// Schedule `event` at `time`.
    #[inline]
    pub fn push(&mut self, time: SimTime, event: E) {
        if self.next_seq == self.seq_limit {
            self.renumber();
        }
        let bits = match event.to_inline() {
            Some(code) => {
                debug_assert!(code < SPILLED, "inline event code {code} uses the spill bit");
                code
            }
            None => {
                let slot = self.spilled.insert(event);
                assert!(slot < SPILLED, "more than 2^31 spilled events pending");
                SPILLED | slot
            }
        };
        let key = (u128::from(time.0) << 64) | (u128::from(self.next_seq) << 32) | u128::from(bits);
        self.next_seq += 1;
        self.scheduled += 1;
        self.heap.push(Reverse(key));
    }

    /// Time of the earliest event, if any.
    #[inline]
    pub fn peek_time(&self) -> Option<SimTime> {
        self.heap.peek().map(|&Reverse(k)| SimTime((k >> 64) as u64))
    }

    /// Remove and return the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        let Reverse(key) = self.heap.pop()?;
        let bits = key as u32;
        let event = if bits & SPILLED == 0 { E::from_inline(bits) } else { self.spilled.remove(bits & !SPILLED) };
        Some((SimTime((key >> 64) as u64), event))
    }

    /// Restart the sequence: number the pending entries `0, 1, …` in their order.
    #[cold]
    fn renumber(&mut self) {
        let mut keys: Vec<u128> = std::mem::take(&mut self.heap).into_iter().map(|Reverse(k)| k).collect();
        keys.sort_unstable();
        let low = u128::from(u32::MAX);
        let renumbered = keys
            .iter()
            .zip(0u128..)
            .map(|(&k, seq)| Reverse((k & !(low << 32 | low)) | (seq << 32) | (k & low)))
            .collect::<Vec<_>>();
        self.next_seq = renumbered.len() as u64;
        self.heap = BinaryHeap::from(renumbered);
    }
}

impl<E> EventQueue<E> {
    /// Number of pending events.
    #[inline]
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// True if no event is pending.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Total events ever scheduled.
    #[inline]
    pub fn scheduled(&self) -> u64 {
        self.scheduled
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A test event: small values are stored inline, large ones spill.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    struct Ev(u64);

    impl Compact for Ev {
        fn to_inline(self) -> Option<u32> {
            u32::try_from(self.0).ok().filter(|&c| c < SPILLED)
        }
        fn from_inline(code: u32) -> Self {
            Ev(u64::from(code))
        }
    }

    /// The queue this one replaced: a binary heap of `(time, unbounded seq)` keys beside
    /// the event, the reference for the differential test.
    #[derive(Default)]
    struct Reference {
        heap: BinaryHeap<Reverse<(u128, u64)>>,
        next_seq: u64,
    }

    impl Reference {
        fn push(&mut self, time: SimTime, ev: Ev) {
            self.heap.push(Reverse(((u128::from(time.0) << 64) | u128::from(self.next_seq), ev.0)));
            self.next_seq += 1;
        }
        fn pop(&mut self) -> Option<(SimTime, Ev)> {
            self.heap.pop().map(|Reverse((k, e))| (SimTime((k >> 64) as u64), Ev(e)))
        }
        fn peek_time(&self) -> Option<SimTime> {
            self.heap.peek().map(|Reverse((k, _))| SimTime((k >> 64) as u64))
        }
    }

    #[test]
    fn equal_times_pop_in_insertion_order() {
        let mut q = EventQueue::default();
        q.push(SimTime(5), Ev(1));
        q.push(SimTime(1), Ev(2));
        q.push(SimTime(5), Ev(u64::MAX));
        q.push(SimTime(1), Ev(4));
        let order: Vec<u64> = std::iter::from_fn(|| q.pop().map(|(_, e)| e.0)).collect();
        assert_eq!(order, [2, 4, 1, u64::MAX]);
        assert_eq!(q.scheduled(), 4);
    }

    proptest! {
        /// Random interleavings of pushes (times from a small range, so many ties, as
        /// offsets from the last popped time like the simulation's; inline and spilled
        /// events) and pops, with the sequence restarting every few events: the same
        /// events in the same order as the reference heap.
        #[test]
        fn pops_as_the_reference_heap(
            ops in prop::collection::vec((0u8..3, 0u64..8, any::<bool>(), any::<u64>()), 1..400),
            seq_limit in 1u64..40,
        ) {
            let mut q = EventQueue { seq_limit, ..EventQueue::default() };
            let mut r = Reference::default();
            let mut now = 0;
            for (op, dt, spill, v) in ops {
                if op == 0 {
                    let got = q.pop();
                    prop_assert_eq!(got, r.pop());
                    if let Some((t, _)) = got {
                        now = t.0;
                    }
                } else {
                    let ev = if spill { Ev(v | 1 << 40) } else { Ev(v % u64::from(SPILLED)) };
                    q.push(SimTime(now + dt), ev);
                    r.push(SimTime(now + dt), ev);
                }
                prop_assert_eq!(q.peek_time(), r.peek_time());
                prop_assert_eq!(q.len(), r.heap.len());
            }
            while let Some(e) = r.pop() {
                prop_assert_eq!(q.pop(), Some(e));
            }
            prop_assert!(q.is_empty());
        }
    }
}
