//! A channel bus calendar: the reserved future intervals of one channel.
//!
//! Operations are reserved greedily in issue order, and a die's array phase leaves
//! gaps on its channel's bus that later-issued operations of other dies can use (the
//! command of a second read while the first read senses its page). The calendar holds
//! the sorted, disjoint busy intervals; intervals that end before the current issue
//! time are pruned, so it only ever holds the (few) reservations that lie in the future.

/// Sorted, disjoint, non-adjacent half-open busy intervals `[start, end)` in ns.
#[derive(Clone, Debug, Default)]
pub(crate) struct BusCalendar {
    iv: Vec<(u64, u64)>,
}

impl BusCalendar {
    /// Drop intervals that end at or before `now` (they can never matter again because
    /// issue times never decrease).
    #[inline]
    pub(crate) fn prune(&mut self, now: u64) {
        if self.iv.last().is_some_and(|iv| iv.1 <= now) {
            // All of it is past (the common case at light load).
            self.iv.clear();
            return;
        }
        let k = self.iv.iter().take_while(|iv| iv.1 <= now).count();
        if k > 0 {
            self.iv.drain(..k);
        }
    }

    /// Earliest `t ≥ earliest` such that `[t, t + dur)` is free.
    /// Prune what ended by `now`, then reserve the first gap of `dur` at or after
    /// `earliest` and return its start ([`BusCalendar::find_gap`] then
    /// [`BusCalendar::reserve`], without the search when nothing is reserved past
    /// `earliest` — the common case).
    #[inline]
    pub(crate) fn book(&mut self, now: u64, earliest: u64, dur: u64) -> u64 {
        if self.iv.first().is_some_and(|iv| iv.1 <= now) {
            self.prune(now);
        }
        match self.iv.last_mut() {
            None => {}
            Some(last) if last.1 <= earliest => {
                if dur > 0 {
                    if last.1 == earliest {
                        last.1 = earliest + dur;
                    } else {
                        self.iv.push((earliest, earliest + dur));
                    }
                }
                return earliest;
            }
            Some(_) => {
                let s = self.find_gap(earliest, dur);
                self.reserve(s, s + dur);
                return s;
            }
        }
        if dur > 0 {
            self.iv.push((earliest, earliest + dur));
        }
        earliest
    }

    #[inline]
    pub(crate) fn find_gap(&self, earliest: u64, dur: u64) -> u64 {
        let mut t = earliest;
        for &(s, e) in &self.iv {
            if e <= t {
                continue;
            }
            if s >= t + dur {
                break;
            }
            t = e;
        }
        t
    }

    /// Earliest instant `t ≥ at` at which the bus is not busy.
    #[inline]
    pub(crate) fn free_at(&self, at: u64) -> u64 {
        let mut t = at;
        for &(s, e) in &self.iv {
            if e <= t {
                continue;
            }
            if s > t {
                break;
            }
            t = e;
        }
        t
    }

    /// Reserve `[s, e)`, which must be free (a bug otherwise).
    pub(crate) fn reserve(&mut self, s: u64, e: u64) {
        assert!(s <= e, "bus interval ends before it starts: [{s}, {e})");
        if s == e {
            return;
        }
        // The common case: at or after the last reservation (append, or extend it).
        match self.iv.last_mut() {
            None => return self.iv.push((s, e)),
            Some(last) if last.1 == s => {
                last.1 = e;
                return;
            }
            Some(last) if last.1 < s => return self.iv.push((s, e)),
            Some(_) => {}
        }
        let i = self.iv.partition_point(|iv| iv.0 < s);
        if i > 0 {
            assert!(self.iv[i - 1].1 <= s, "bus double-booked: [{s}, {e}) overlaps {:?}", self.iv[i - 1]);
        }
        if i < self.iv.len() {
            assert!(e <= self.iv[i].0, "bus double-booked: [{s}, {e}) overlaps {:?}", self.iv[i]);
        }
        let merge_prev = i > 0 && self.iv[i - 1].1 == s;
        let merge_next = i < self.iv.len() && self.iv[i].0 == e;
        match (merge_prev, merge_next) {
            (true, true) => {
                self.iv[i - 1].1 = self.iv[i].1;
                self.iv.remove(i);
            }
            (true, false) => self.iv[i - 1].1 = e,
            (false, true) => self.iv[i].0 = s,
            (false, false) => self.iv.insert(i, (s, e)),
        }
    }

    /// Number of stored intervals (for tests of boundedness).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.iv.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaps_merges_and_pruning() {
        let mut c = BusCalendar::default();
        c.reserve(10, 20);
        c.reserve(30, 40);
        assert_eq!(c.find_gap(0, 10), 0);
        assert_eq!(c.find_gap(0, 11), 40);
        assert_eq!(c.find_gap(15, 5), 20);
        assert_eq!(c.find_gap(15, 11), 40);
        assert_eq!(c.free_at(12), 20);
        assert_eq!(c.free_at(25), 25);
        c.reserve(20, 30);
        assert_eq!(c.len(), 1);
        assert_eq!(c.free_at(10), 40);
        c.reserve(0, 10);
        assert_eq!(c.len(), 1);
        c.reserve(50, 60);
        c.prune(40);
        assert_eq!(c.len(), 1);
        c.prune(60);
        assert_eq!(c.len(), 0);
    }

    proptest::proptest! {
        /// `book` is `prune`, `find_gap` and `reserve` in one (its fast path included).
        #[test]
        fn book_is_prune_find_gap_reserve(ops in proptest::collection::vec((0u64..50, 0u64..40, 0u64..30), 1..60)) {
            let (mut a, mut b) = (BusCalendar::default(), BusCalendar::default());
            let mut now = 0;
            for (step, after, dur) in ops {
                now += step;
                let earliest = now + after;
                let s = a.book(now, earliest, dur);
                b.prune(now);
                let t = b.find_gap(earliest, dur);
                b.reserve(t, t + dur);
                proptest::prop_assert_eq!(s, t);
                proptest::prop_assert_eq!(&a.iv, &b.iv);
            }
        }
    }

    #[test]
    #[should_panic(expected = "double-booked")]
    fn overlap_is_a_bug() {
        let mut c = BusCalendar::default();
        c.reserve(10, 20);
        c.reserve(15, 25);
    }
}
