//! The event queue: a binary heap ordered by `(time, insertion sequence)`, so events at
//! equal times run in the order they were scheduled (first-in, first-out ties).
//!
//! Runs: events scheduled one after another at the same time with [`EventQueue::push_run`]
//! (the completions of a request's pages issued together on idle channels end at the
//! same instant) share one heap entry. Nothing can sort between them (their sequence
//! numbers are consecutive), so they pop one by one in the order a plain heap would give;
//! they just cost one heap push and pop for the whole run.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use lamina_nand_model::SimTime;

/// One heap entry's events: one, or a run stored in `EventQueue::runs`.
#[derive(Clone, Copy)]
enum Payload<E> {
    One(E),
    Run(u32),
}

struct Entry<E> {
    /// `(time << 64) | seq`: one integer comparison orders entries.
    key: u128,
    payload: Payload<E>,
}

#[inline]
fn key_time(key: u128) -> SimTime {
    SimTime((key >> 64) as u64)
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    fn cmp(&self, other: &Self) -> Ordering {
        // Reversed: BinaryHeap is a max-heap and we pop the earliest (time, seq).
        other.key.cmp(&self.key)
    }
}

/// A deterministic priority queue of events.
pub struct EventQueue<E: Copy> {
    heap: BinaryHeap<Entry<E>>,
    next_seq: u64,
    /// Events pending (in the heap, the stage and the run being drained).
    pending: usize,
    /// The run being formed by [`EventQueue::push_run`]: its first event's key and its
    /// events (not in the heap yet; empty when no run is open).
    stage_key: u128,
    stage: Vec<E>,
    /// Runs in the heap, by index, and the free indices (their vectors keep capacity).
    runs: Vec<Vec<E>>,
    free_runs: Vec<u32>,
    /// The run whose first event was popped: its first event's key, index and next
    /// position (the run's events have consecutive keys).
    draining: Option<(u128, u32, u32)>,
    /// The key of the event popped last ([`EventQueue::popped_key`]).
    popped: u128,
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue {
            heap: BinaryHeap::with_capacity(1024),
            next_seq: 0,
            pending: 0,
            stage_key: 0,
            stage: Vec::with_capacity(16),
            runs: Vec::new(),
            free_runs: Vec::new(),
            draining: None,
            popped: 0,
        }
    }
}

impl<E: Copy> EventQueue<E> {
    #[inline]
    fn next_key(&mut self, time: SimTime) -> u128 {
        let seq = self.next_seq;
        self.next_seq += 1;
        (u128::from(time.0) << 64) | u128::from(seq)
    }

    /// Reserve the place of an event at `time` without scheduling one: the key the
    /// event would have had, in the order of every other event scheduled. The event may
    /// be scheduled later with [`EventQueue::push_reserved`] (a reservation that is never
    /// scheduled takes no room). A run being formed ends here.
    #[inline]
    pub fn reserve(&mut self, time: SimTime) -> u128 {
        self.close_run();
        self.next_key(time)
    }

    /// Schedule `event` at the key `reserve` gave, which must not have been popped past
    /// (the caller's invariant: the key is after [`EventQueue::popped_key`]).
    #[inline]
    pub fn push_reserved(&mut self, key: u128, event: E) {
        // Keys are unique, so `>=` only admits the key 0 before the first pop.
        debug_assert!(key >= self.popped, "reserved event scheduled in the past");
        self.pending += 1;
        self.heap.push(Entry { key, payload: Payload::One(event) });
    }

    /// The key of the last event popped: `(time << 64) | sequence number`, the order
    /// in which events run (0 before the first pop).
    #[inline]
    pub fn popped_key(&self) -> u128 {
        self.popped
    }

    /// Schedule `event` at `time`.
    #[inline]
    pub fn push(&mut self, time: SimTime, event: E) {
        self.close_run();
        let key = self.next_key(time);
        self.pending += 1;
        self.heap.push(Entry { key, payload: Payload::One(event) });
    }

    /// Schedule `event` at `time`, in one heap entry with the events scheduled right
    /// before it by this method if they are at the same time (nothing was scheduled,
    /// popped or peeked at in between). The order of events is exactly
    /// [`EventQueue::push`]'s.
    #[inline]
    pub fn push_run(&mut self, time: SimTime, event: E) {
        if !self.stage.is_empty() && key_time(self.stage_key) == time {
            // Its sequence number follows the run's last: nothing else can have it.
            self.next_seq += 1;
        } else {
            self.close_run();
            self.stage_key = self.next_key(time);
        }
        self.pending += 1;
        self.stage.push(event);
    }

    /// Put the run being formed into the heap (one entry).
    #[inline]
    fn close_run(&mut self) {
        match self.stage.len() {
            0 => {}
            1 => {
                let e = self.stage[0];
                self.stage.clear();
                self.heap.push(Entry { key: self.stage_key, payload: Payload::One(e) });
            }
            _ => self.close_long_run(),
        }
    }

    #[inline(never)]
    fn close_long_run(&mut self) {
        let i = match self.free_runs.pop() {
            Some(i) => i,
            None => {
                self.runs.push(Vec::with_capacity(16));
                (self.runs.len() - 1) as u32
            }
        };
        std::mem::swap(&mut self.stage, &mut self.runs[i as usize]);
        self.heap.push(Entry { key: self.stage_key, payload: Payload::Run(i) });
    }

    /// Time of the earliest event, if any.
    #[inline]
    pub fn peek_time(&self) -> Option<SimTime> {
        if let Some((k, _, _)) = self.draining {
            // The rest of a run comes before every other event (see the module doc).
            return Some(key_time(k));
        }
        let top = self.heap.peek().map(|e| e.key);
        let key = match (top, self.stage.is_empty()) {
            (Some(k), false) => k.min(self.stage_key),
            (Some(k), true) => k,
            (None, false) => self.stage_key,
            (None, true) => return None,
        };
        Some(key_time(key))
    }

    /// Remove and return the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        if let Some((k, i, pos)) = self.draining {
            return Some((key_time(k), self.next_of_run(k, i, pos)));
        }
        self.close_run();
        let e = self.heap.pop()?;
        let t = key_time(e.key);
        match e.payload {
            Payload::One(ev) => {
                self.pending -= 1;
                self.popped = e.key;
                Some((t, ev))
            }
            Payload::Run(i) => Some((t, self.next_of_run(e.key, i, 0))),
        }
    }

    /// Event `pos` of run `i` (whose first event's key is `key`); the run is handed
    /// back after its last event.
    #[inline]
    fn next_of_run(&mut self, key: u128, i: u32, pos: u32) -> E {
        let run = &mut self.runs[i as usize];
        let ev = run[pos as usize];
        self.pending -= 1;
        self.popped = key + u128::from(pos);
        if pos as usize + 1 == run.len() {
            run.clear();
            self.free_runs.push(i);
            self.draining = None;
        } else {
            self.draining = Some((key, i, pos + 1));
        }
        ev
    }

    /// Number of pending events.
    #[inline]
    pub fn len(&self) -> usize {
        self.pending
    }

    /// True if no event is pending.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.pending == 0
    }

    /// Total events ever scheduled.
    #[inline]
    pub fn scheduled(&self) -> u64 {
        self.next_seq
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn equal_times_pop_in_insertion_order() {
        let mut q = EventQueue::default();
        q.push(SimTime(5), 'a');
        q.push(SimTime(1), 'b');
        q.push(SimTime(5), 'c');
        q.push(SimTime(1), 'd');
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, ['b', 'd', 'a', 'c']);
    }

    #[test]
    fn a_run_pops_in_order_and_before_later_pushes_at_its_time() {
        let mut q = EventQueue::default();
        q.push_run(SimTime(7), 1);
        q.push_run(SimTime(7), 2);
        q.push_run(SimTime(7), 3);
        q.push(SimTime(3), 0);
        assert_eq!(q.len(), 4);
        assert_eq!(q.pop(), Some((SimTime(3), 0)));
        assert_eq!(q.pop(), Some((SimTime(7), 1)));
        // Scheduled while the run drains, at its time: after the run.
        q.push(SimTime(7), 4);
        q.push_run(SimTime(7), 5);
        assert_eq!(q.peek_time(), Some(SimTime(7)));
        let rest: Vec<i32> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(rest, [2, 3, 4, 5]);
        assert!(q.is_empty());
    }

    /// A plain `(time, seq)` ordered list: what the queue must give.
    #[derive(Default)]
    struct Reference {
        items: Vec<(u64, u64, u32)>,
        seq: u64,
    }

    impl Reference {
        fn push(&mut self, t: u64, e: u32) {
            self.items.push((t, self.seq, e));
            self.seq += 1;
        }
        /// The sequence number an event at `t` takes now, without the event.
        fn reserve(&mut self) -> u64 {
            self.seq += 1;
            self.seq - 1
        }
        fn push_reserved(&mut self, t: u64, seq: u64, e: u32) {
            self.items.push((t, seq, e));
        }
        fn pop(&mut self) -> Option<(SimTime, u32)> {
            let i = (0..self.items.len()).min_by_key(|&i| (self.items[i].0, self.items[i].1))?;
            let (t, _, e) = self.items.remove(i);
            Some((SimTime(t), e))
        }
        fn peek_time(&self) -> Option<SimTime> {
            self.items.iter().map(|&(t, s, _)| (t, s)).min().map(|(t, _)| SimTime(t))
        }
    }

    proptest! {
        /// Any mix of pushes, run pushes, peeks and pops (times never before the last
        /// popped event's, as in the simulation) gives the events in exactly the order
        /// and at the times of a plain `(time, seq)` queue.
        #[test]
        fn runs_keep_the_order_of_a_plain_queue(
            ops in proptest::collection::vec((0u8..4, 0u64..4), 1..300),
        ) {
            let mut q = EventQueue::default();
            let mut r = Reference::default();
            let mut now = 0u64;
            let mut n = 0u32;
            for (op, dt) in ops {
                match op {
                    0 => { q.push(SimTime(now + dt), n); r.push(now + dt, n); n += 1; }
                    1 | 2 => { q.push_run(SimTime(now + dt), n); r.push(now + dt, n); n += 1; }
                    _ => {
                        prop_assert_eq!(q.peek_time(), r.peek_time());
                        let got = q.pop();
                        prop_assert_eq!(got, r.pop());
                        if let Some((t, _)) = got { now = t.0; }
                    }
                }
                prop_assert_eq!(q.len(), r.items.len());
            }
            while let Some(x) = r.pop() {
                prop_assert_eq!(q.peek_time(), Some(x.0));
                prop_assert_eq!(q.pop(), Some(x));
            }
            prop_assert!(q.pop().is_none() && q.is_empty());
        }

        /// Reserved places ([`EventQueue::reserve`]) scheduled later, at any point before
        /// they are due, or never, run exactly where a plain queue that had pushed them
        /// when reserved would run them; `popped_key` names each event's place.
        #[test]
        fn reserved_events_run_in_their_reserved_place(
            ops in proptest::collection::vec((0u8..6, 0u64..4), 1..300),
        ) {
            let mut q = EventQueue::default();
            let mut r = Reference::default();
            // Reservations not yet scheduled: (key, time, seq, event).
            let mut held: Vec<(u128, u64, u64, u32)> = Vec::new();
            let mut now = 0u64;
            let mut last_key: Option<u128> = None;
            let mut n = 0u32;
            for (op, dt) in ops {
                match op {
                    0 => { q.push(SimTime(now + dt), n); r.push(now + dt, n); n += 1; }
                    1 => { q.push_run(SimTime(now + dt), n); r.push(now + dt, n); n += 1; }
                    2 => {
                        let key = q.reserve(SimTime(now + dt));
                        let seq = r.reserve();
                        prop_assert_eq!(key, (u128::from(now + dt) << 64) | u128::from(seq));
                        held.push((key, now + dt, seq, n));
                        n += 1;
                    }
                    3 => {
                        // Schedule the oldest reservation still ahead (a past one is
                        // dropped: its place went by unused).
                        held.retain(|h| last_key.is_none_or(|k| h.0 > k));
                        if !held.is_empty() {
                            let (key, t, seq, e) = held.remove(0);
                            q.push_reserved(key, e);
                            r.push_reserved(t, seq, e);
                        }
                    }
                    _ => {
                        prop_assert_eq!(q.peek_time(), r.peek_time());
                        let want = r.items.iter().map(|&(t, s, _)| (t, s)).min();
                        let got = q.pop();
                        prop_assert_eq!(got, r.pop());
                        if let Some((t, _)) = got {
                            let (wt, ws) = want.expect("the reference has it");
                            prop_assert_eq!(q.popped_key(), (u128::from(wt) << 64) | u128::from(ws));
                            prop_assert!(last_key.is_none_or(|k| q.popped_key() > k));
                            last_key = Some(q.popped_key());
                            now = t.0;
                        }
                    }
                }
                prop_assert_eq!(q.len(), r.items.len());
            }
            while let Some(x) = r.pop() {
                prop_assert_eq!(q.pop(), Some(x));
            }
            prop_assert!(q.pop().is_none() && q.is_empty());
        }
    }
}
