//! Arrival-time checks on the released (sorted) request stream, in the trace's own
//! clock: absurd gaps (outliers) and the timestamp resolution.
//!
//! **Absurd gap.** A gap (arrival minus the previous arrival of its group, below) is
//! *absurd* when it exceeds both 1 hour and 1000 × the 99.9th percentile of the gaps
//! seen so far in that group. The percentile comes from a running histogram of gaps in
//! power-of-two buckets (65 counters: bounded memory, streaming, deterministic), and is
//! taken as the upper bound of its bucket, so the rule errs towards *not* flagging.
//! Absurd gaps do not enter a histogram. With no history only the 1 hour bound applies.
//!
//! **Which side is bogus.** Absurd gaps cut the sorted stream into *groups* (maximal
//! runs with no absurd gap inside, each judged with its own histogram). Because the
//! reorder window sorts requests, a late bogus timestamp (40 years in an 810 s trace)
//! travels to the end of the stream and early bogus ones (0 in an epoch-stamped trace)
//! to the start, so a bogus group is the first or the last; but a run of them is a group
//! of several requests, and only the sizes say which side of a gap is the trace. At an
//! absurd gap the check compares the requests kept before it (`K`, all since the start
//! that were not blamed) with the group after it (`N`), looking ahead at most
//! [`LOOKAHEAD`] requests:
//!
//! - `K ≥ LOOKAHEAD` and `N ≥ LOOKAHEAD`: neither side is a bogus group (two long runs:
//!   a real pause, or traces joined); the gap is reported (`Jump`), nothing is dropped.
//! - otherwise the smaller side is blamed, on a tie the one before the gap: the group
//!   after it (`After`: late bogus timestamps), or every request kept so far (`Before`:
//!   early ones), the group after then being the trace.
//!
//! So the first requests are held until `LOOKAHEAD` are kept (they may yet be blamed),
//! and a group after an absurd gap until it ends or reaches `LOOKAHEAD` requests: memory
//! is bounded by `2 × LOOKAHEAD` requests, and the outcome depends on the stream only.
//!
//! Actions (`trace.outliers`): `warn` replays as is and reports the lines; `cut` drops
//! the blamed requests (a `Jump` is kept); `clamp` keeps every request but closes the
//! gap: a blamed group after it, or a `Jump`, moves earlier so that the gap becomes the
//! typical gap — the median gap of the trace so far, rounded down to a power of two ns
//! (0 with no history) — shifting every later arrival by the same; a blamed group
//! before it joins the first instant of the group after.

use std::collections::VecDeque;

use crate::options::OutlierPolicy;

/// The absolute floor of an absurd gap: one hour.
pub(crate) const ABSURD_FLOOR_NS: u64 = 3_600 * 1_000_000_000;
/// An absurd gap is this many times the 99.9th-percentile gap.
pub(crate) const ABSURD_FACTOR: u64 = 1000;
/// The bound of the look-ahead: requests held to decide which side of an absurd gap is
/// bogus. A side of at least so many requests is never blamed.
pub(crate) const LOOKAHEAD: u64 = 1024;
/// Outlier lines kept verbatim for the report.
const KEPT: usize = 10;

/// Running histogram of arrival gaps in power-of-two buckets (bucket `b` holds gaps
/// in `[2^(b-1), 2^b)`; bucket 0 holds 0).
#[derive(Clone, Debug)]
pub(crate) struct GapHistogram {
    buckets: [u64; 65],
    count: u64,
}

impl Default for GapHistogram {
    fn default() -> GapHistogram {
        GapHistogram { buckets: [0; 65], count: 0 }
    }
}

impl GapHistogram {
    fn bucket(gap: u64) -> usize {
        (64 - gap.leading_zeros()) as usize
    }

    pub(crate) fn add(&mut self, gap: u64) {
        self.buckets[Self::bucket(gap)] += 1;
        self.count += 1;
    }

    /// Add every gap of `other`.
    fn merge(&mut self, other: &GapHistogram) {
        for (b, n) in self.buckets.iter_mut().zip(other.buckets) {
            *b += n;
        }
        self.count += other.count;
    }

    /// The bucket holding the `ppm`-th quantile (parts per million), if any gap was seen.
    fn quantile_bucket(&self, ppm: u64) -> Option<usize> {
        if self.count == 0 {
            return None;
        }
        let rank = (self.count as u128 * ppm as u128).div_ceil(1_000_000).max(1) as u64;
        let mut seen = 0;
        for (b, &n) in self.buckets.iter().enumerate() {
            seen += n;
            if seen >= rank {
                return Some(b);
            }
        }
        unreachable!("rank ≤ count")
    }

    /// Upper bound of the 99.9th-percentile gap (0 with no history).
    pub(crate) fn p999_upper(&self) -> u64 {
        match self.quantile_bucket(999_000) {
            None | Some(0) => 0,
            Some(64) => u64::MAX,
            Some(b) => (1u64 << b) - 1,
        }
    }

    /// The median gap rounded down to a power of two (0 with no history).
    pub(crate) fn typical(&self) -> u64 {
        match self.quantile_bucket(500_000) {
            None | Some(0) => 0,
            Some(b) => 1u64 << (b - 1),
        }
    }

    /// Whether `gap` is absurd for the gaps seen so far.
    pub(crate) fn is_absurd(&self, gap: u64) -> bool {
        gap > ABSURD_FLOOR_NS && gap > self.p999_upper().saturating_mul(ABSURD_FACTOR)
    }
}

/// What the outlier check decided for one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Keep it, at this (possibly clamped) trace-clock time.
    Keep(u64),
    /// Drop it (`cut`).
    Drop,
}

/// Why a request was named in the outlier report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OutlierKind {
    /// Early: in a group blamed before an absurd gap; the gap is from it to the first
    /// request of the group after.
    Before,
    /// Late: in a group blamed after an absurd gap; the gap is from the last request
    /// kept before to it.
    After,
    /// The first request after an absurd gap with long runs on both sides: reported,
    /// not blamed (`cut` keeps it); the gap is the absurd one.
    Jump,
}

/// One request named in the outlier report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Note {
    pub(crate) line: u64,
    pub(crate) gap: u64,
    pub(crate) kind: OutlierKind,
}

/// A request of the stream the check has not handed back yet.
struct Entry<T> {
    item: T,
    /// Its trace-clock time as read.
    time: u64,
    line: u64,
    /// Decided, or still held (with the time it keeps unless it is blamed).
    verdict: Option<Verdict>,
    held_at: u64,
    /// Already noted (a blamed late group merged into the kept run by `warn`/`clamp`).
    noted: bool,
}

/// The group after an absurd gap, being looked ahead at: the last `len` entries.
struct Next {
    gaps: GapHistogram,
    len: u64,
    /// The absurd gap before it (from the last kept request, in the output clock).
    gap: u64,
    /// Its first and last trace-clock times.
    first: u64,
    last: u64,
}

/// The outlier check over the sorted stream (see the module docs): requests go in with
/// [`OutlierCheck::push`] (or [`OutlierCheck::keep_at_once`]) and come out, in order,
/// with their verdicts from [`OutlierCheck::pop`].
pub(crate) struct OutlierCheck<T> {
    policy: OutlierPolicy,
    /// The kept run's gaps.
    gaps: GapHistogram,
    /// Last kept arrival (output clock).
    last: Option<u64>,
    /// Requests kept and not blamed so far (`K`).
    kept: u64,
    /// Whether the kept run is final: `K` reached [`LOOKAHEAD`], or so many requests
    /// wait before the group looked ahead at (a run of blamed late groups kept by
    /// `warn` or `clamp`), which bounds the queue. A final run is never blamed.
    settled: bool,
    /// Total shift subtracted by clamping so far.
    shift: u64,
    queue: VecDeque<Entry<T>>,
    next: Option<Next>,
    /// Requests named (blamed, or after a reported jump).
    pub(crate) count: u64,
    /// The first few of them.
    pub(crate) first: Vec<Note>,
}

impl<T: Copy> OutlierCheck<T> {
    pub(crate) fn new(policy: OutlierPolicy) -> OutlierCheck<T> {
        OutlierCheck {
            policy,
            gaps: GapHistogram::default(),
            last: None,
            kept: 0,
            settled: false,
            shift: 0,
            queue: VecDeque::new(),
            next: None,
            count: 0,
            first: Vec::new(),
        }
    }

    fn note(&mut self, line: u64, gap: u64, kind: OutlierKind) {
        self.count += 1;
        if self.first.len() < KEPT {
            self.first.push(Note { line, gap, kind });
        }
    }

    /// The steady state's path: nothing held, the kept run established, and `time`'s
    /// gap not absurd: the request is kept at once, at the returned time. Otherwise
    /// `None`, and it must be [`OutlierCheck::push`]ed.
    #[inline]
    pub(crate) fn keep_at_once(&mut self, time: u64) -> Option<u64> {
        let last = self.last?;
        if !self.queue.is_empty() || !self.settled {
            return None;
        }
        let time = time - self.shift.min(time);
        let gap = time.saturating_sub(last);
        if self.gaps.is_absurd(gap) {
            return None;
        }
        self.gaps.add(gap);
        self.last = Some(time);
        self.kept += 1;
        Some(time)
    }

    /// The next request whose verdict is known, in stream order.
    #[inline]
    pub(crate) fn pop(&mut self) -> Option<(T, Verdict)> {
        let verdict = self.queue.front()?.verdict?;
        let e = self.queue.pop_front().expect("front exists");
        Some((e.item, verdict))
    }

    /// A request (sorted by `time`) from file line `line`.
    pub(crate) fn push(&mut self, item: T, time: u64, line: u64) {
        loop {
            let held_at = time - self.shift.min(time);
            let entry = Entry { item, time, line, verdict: None, held_at, noted: false };
            match &mut self.next {
                None => {
                    let gap = self.last.map(|last| held_at.saturating_sub(last));
                    match gap {
                        Some(gap) if self.gaps.is_absurd(gap) => {
                            self.next = Some(Next {
                                gaps: GapHistogram::default(),
                                len: 1,
                                gap,
                                first: time,
                                last: time,
                            });
                        }
                        _ => {
                            if let Some(g) = gap {
                                self.gaps.add(g);
                            }
                            self.last = Some(held_at);
                            self.kept += 1;
                        }
                    }
                    self.queue.push_back(entry);
                    self.settle();
                    return;
                }
                Some(next) => {
                    let gap = time - next.last;
                    if !next.gaps.is_absurd(gap) {
                        next.gaps.add(gap);
                        next.last = time;
                        next.len += 1;
                        let full = next.len >= LOOKAHEAD;
                        self.queue.push_back(entry);
                        if full {
                            self.decide();
                        }
                        return;
                    }
                }
            }
            // The group looked ahead at ends here: decide, then this request starts afresh.
            self.decide();
        }
    }

    /// The stream ended: decide everything still held.
    pub(crate) fn end(&mut self) {
        if self.next.is_some() {
            self.decide();
        }
        self.settled = true;
        self.settle();
    }

    /// Once the kept run is final (see `settled`), its held requests are kept.
    fn settle(&mut self) {
        let waiting = self.queue.len() - self.next.as_ref().map_or(0, |n| n.len as usize);
        self.settled |= self.kept >= LOOKAHEAD || waiting as u64 >= LOOKAHEAD;
        if !self.settled {
            return;
        }
        // The undecided requests before the group looked ahead at are the last ones.
        for e in self.queue.range_mut(..waiting).rev() {
            if e.verdict.is_some() {
                break;
            }
            e.verdict = Some(Verdict::Keep(e.held_at));
        }
    }

    /// Decide the absurd gap before the group looked ahead at (see the module docs).
    fn decide(&mut self) {
        let next = self.next.take().expect("a group to decide");
        let split = self.queue.len() - next.len as usize;
        let (k, n) = (self.kept, next.len);
        if n < k && !(k >= LOOKAHEAD && n >= LOOKAHEAD) {
            self.blame_after(split, &next);
        } else if !self.settled && n >= k {
            self.blame_before(split, &next);
        } else {
            // Both sides long (or the run before final): not a bogus group.
            let line = self.queue[split].line;
            self.note(line, next.gap, OutlierKind::Jump);
            self.join(split, &next, true);
        }
        self.settle();
    }

    /// The group after the gap is bogus (late timestamps).
    fn blame_after(&mut self, split: usize, next: &Next) {
        let last = self.last.expect("a kept request before the gap");
        for i in split..self.queue.len() {
            let (line, held_at) = (self.queue[i].line, self.queue[i].held_at);
            self.note(line, held_at.saturating_sub(last), OutlierKind::After);
            self.queue[i].noted = true;
        }
        if self.policy == OutlierPolicy::Cut {
            // Never handed back: dropped requests take no room.
            self.queue.truncate(split);
        } else {
            self.join(split, next, false);
        }
    }

    /// Every request kept before the gap is bogus (early timestamps): the group after
    /// it becomes the kept run.
    fn blame_before(&mut self, split: usize, next: &Next) {
        let to = next.first - self.shift.min(next.first);
        let mut noted = Vec::new();
        for e in self.queue.range_mut(..split).filter(|e| e.verdict.is_none()) {
            if !e.noted {
                noted.push((e.line, next.first - e.time));
            }
            e.verdict = Some(match self.policy {
                OutlierPolicy::Warn => Verdict::Keep(e.held_at),
                OutlierPolicy::Cut => Verdict::Drop,
                OutlierPolicy::Clamp => Verdict::Keep(to),
            });
        }
        for (line, gap) in noted {
            self.note(line, gap, OutlierKind::Before);
        }
        self.gaps = next.gaps.clone();
        self.last = Some(next.last - self.shift.min(next.last));
        self.kept = next.len;
    }

    /// Continue the kept run with the group after the gap (its requests held like the
    /// run's): `clamp` closes the gap first. `counts`: whether its requests count as
    /// kept (not when blamed) and its gaps join the run's.
    fn join(&mut self, split: usize, next: &Next, counts: bool) {
        if self.policy == OutlierPolicy::Clamp {
            let close = next.gap - self.gaps.typical().min(next.gap);
            self.shift += close;
            for e in self.queue.range_mut(split..) {
                e.held_at -= close;
            }
        }
        self.last = Some(next.last - self.shift.min(next.last));
        if counts {
            self.gaps.merge(&next.gaps);
            self.kept += next.len;
        }
    }
}

/// Timestamp resolution of the replayed arrivals.
#[derive(Clone, Debug, Default)]
pub(crate) struct Resolution {
    first: Option<u64>,
    /// gcd of (arrival − first arrival); 0 while all are equal.
    pub(crate) gcd: u64,
    prev: Option<u64>,
    run: u64,
    /// Longest run of requests sharing one arrival instant.
    pub(crate) max_same: u64,
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl Resolution {
    #[inline]
    pub(crate) fn add(&mut self, t: u64) {
        let first = *self.first.get_or_insert(t);
        let d = t - first;
        // One division per request unless the resolution shrinks.
        if self.gcd != 1 && d != 0 && (self.gcd == 0 || d % self.gcd != 0) {
            self.gcd = gcd(self.gcd, d);
        }
        if self.prev == Some(t) {
            self.run += 1;
        } else {
            self.run = 1;
            self.prev = Some(t);
        }
        self.max_same = self.max_same.max(self.run);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every request's verdict (its index as the item; `None` if dropped — `cut` need
    /// not hand back what it drops): requests come back in order, once.
    fn run(policy: OutlierPolicy, times: &[u64]) -> (Vec<Option<u64>>, OutlierCheck<usize>) {
        let mut c = OutlierCheck::new(policy);
        let mut out = vec![None; times.len()];
        let mut after = 0;
        let mut got = |i: usize, v: Verdict, out: &mut Vec<Option<u64>>| {
            assert!(i >= after, "in order, once");
            after = i + 1;
            if let Verdict::Keep(t) = v {
                out[i] = Some(t);
            }
        };
        for (i, &t) in times.iter().enumerate() {
            match c.keep_at_once(t) {
                Some(t) => got(i, Verdict::Keep(t), &mut out),
                None => c.push(i, t, i as u64 + 1),
            }
            while let Some((i, v)) = c.pop() {
                got(i, v, &mut out);
            }
            assert!(c.queue.len() as u64 <= 2 * LOOKAHEAD, "bounded");
        }
        c.end();
        while let Some((i, v)) = c.pop() {
            got(i, v, &mut out);
        }
        assert!(c.queue.is_empty(), "every request decided");
        assert!(out.iter().flatten().is_sorted(), "arrivals stay sorted: {out:?}");
        (out, c)
    }

    const S: u64 = 1_000_000_000;
    const YEARS_40: u64 = 40 * 365 * 86_400 * S;

    #[test]
    fn a_late_bogus_timestamp_is_found_and_cut_or_clamped() {
        let mut t: Vec<u64> = (0..1000).map(|i| i * S / 10).collect();
        t.push(YEARS_40);
        let (v, c) = run(OutlierPolicy::Warn, &t);
        assert_eq!(c.count, 1);
        assert_eq!(v[1000], Some(YEARS_40));
        let (v, _) = run(OutlierPolicy::Cut, &t);
        assert_eq!(v[1000], None);
        assert!(v[..1000].iter().all(Option::is_some));
        let (v, _) = run(OutlierPolicy::Clamp, &t);
        // Median gap 0.1 s rounded down to a power of two ns: 2^26 ns.
        assert_eq!(v[1000], Some(999 * S / 10 + (1 << 26)));
    }

    #[test]
    fn bursty_but_honest_traces_are_not_flagged() {
        // A 2-hour idle period in a trace whose gaps are up to 10 s: not absurd (< 1000 × p99.9).
        let mut t: Vec<u64> = (0..100).map(|i| i * 10 * S).collect();
        t.push(t[99] + 7_200 * S);
        assert_eq!(run(OutlierPolicy::Warn, &t).1.count, 0);
        // A 30-minute gap after microsecond gaps: under the 1 h floor.
        let mut t: Vec<u64> = (0..100).map(|i| i * 1000).collect();
        t.push(1_800 * S);
        assert_eq!(run(OutlierPolicy::Warn, &t).1.count, 0);
    }

    #[test]
    fn an_early_bogus_first_timestamp_blames_the_first_request() {
        for (policy, want) in [
            (OutlierPolicy::Warn, Some(0)),
            (OutlierPolicy::Cut, None),
            (OutlierPolicy::Clamp, Some(YEARS_40)),
        ] {
            let (v, c) = run(policy, &[0, YEARS_40, YEARS_40 + S]);
            assert_eq!(v[0], want, "{policy}");
            assert_eq!(&v[1..], &[Some(YEARS_40), Some(YEARS_40 + S)], "{policy}");
            // The first request's line (not the second's: new-user trial finding 2).
            assert_eq!(c.first, [Note { line: 1, gap: YEARS_40, kind: OutlierKind::Before }], "{policy}");
        }
    }

    /// Regression (new-user trial): with two or more bogus early timestamps, `cut` kept
    /// them and dropped the whole real trace after them (each of its gaps measured from
    /// the last bogus one was absurd). The sizes of the two sides decide: the early
    /// group of 2 or 3 is blamed, under every policy, and the trace is kept whole.
    #[test]
    fn a_group_of_early_bogus_timestamps_is_the_one_blamed() {
        const EPOCH: u64 = 1_500_000_000 * S;
        for bogus in [2u64, 3, 50] {
            let mut t: Vec<u64> = (0..bogus).map(|i| i * 1000).collect();
            t.extend((0..200).map(|i| EPOCH + i * S / 1000));
            for policy in [OutlierPolicy::Warn, OutlierPolicy::Cut, OutlierPolicy::Clamp] {
                let (v, c) = run(policy, &t);
                let b = bogus as usize;
                assert!(v[b..].iter().zip(&t[b..]).all(|(v, &t)| *v == Some(t)), "{bogus} {policy}");
                let want_early: Vec<Option<u64>> = match policy {
                    OutlierPolicy::Warn => t[..b].iter().map(|&t| Some(t)).collect(),
                    OutlierPolicy::Cut => vec![None; b],
                    OutlierPolicy::Clamp => vec![Some(EPOCH); b],
                };
                assert_eq!(v[..b], want_early, "{bogus} {policy}");
                assert_eq!(c.count, bogus, "{bogus} {policy}");
                let lines: Vec<u64> = c.first.iter().map(|n| n.line).collect();
                assert_eq!(lines, (1..=bogus.min(10)).collect::<Vec<_>>(), "{bogus} {policy}");
                assert!(c.first.iter().all(|n| n.kind == OutlierKind::Before));
                assert_eq!(c.first[0].gap, EPOCH, "{bogus} {policy}");
            }
        }
    }

    /// The bound: a side of `LOOKAHEAD` requests or more is never blamed. Long runs on
    /// both sides of an absurd gap (a real pause, or two traces joined): reported as a
    /// jump, `cut` keeps both, `clamp` closes the gap. A late group shorter than the
    /// run before it is blamed whole, and the equal sizes blame the earlier side.
    #[test]
    fn the_look_ahead_is_bounded_and_sizes_decide() {
        let l = LOOKAHEAD;
        let mut t: Vec<u64> = (0..l).map(|i| i * 1000).collect();
        t.extend((0..l).map(|i| YEARS_40 + i * 1000));
        let (v, c) = run(OutlierPolicy::Cut, &t);
        assert!(v.iter().zip(&t).all(|(v, &t)| *v == Some(t)));
        assert_eq!(c.first, [Note { line: l + 1, gap: YEARS_40 - (l - 1) * 1000, kind: OutlierKind::Jump }]);
        let (v, _) = run(OutlierPolicy::Clamp, &t);
        // Typical gap 1000 ns rounded down to 512: the second run follows 512 ns on.
        assert_eq!(v[l as usize], Some((l - 1) * 1000 + 512));
        assert_eq!(v[t.len() - 1], Some((l - 1) * 1000 + 512 + (l - 1) * 1000));
        // One request fewer after the gap: that group is blamed.
        t.pop();
        let (v, c) = run(OutlierPolicy::Cut, &t);
        assert_eq!(v.iter().filter(|v| v.is_none()).count() as u64, l - 1);
        assert!(v[..l as usize].iter().all(Option::is_some));
        assert_eq!((c.count, c.first[0].kind), (l - 1, OutlierKind::After));
        // A late group of 3 ending the trace, and a tie of 5 and 5: the earlier side.
        let mut t: Vec<u64> = (0..20).map(|i| i * 1000).collect();
        t.extend([YEARS_40, YEARS_40 + 1, YEARS_40 + 2]);
        let (v, c) = run(OutlierPolicy::Cut, &t);
        assert_eq!((v[..20].iter().flatten().count(), v[20..].iter().flatten().count(), c.count), (20, 0, 3));
        let t: Vec<u64> = (0..5).map(|i| i * 10).chain((0..5).map(|i| YEARS_40 + i * 10)).collect();
        let (v, _) = run(OutlierPolicy::Cut, &t);
        assert_eq!(v.iter().map(Option::is_some).collect::<Vec<_>>(), [[false; 5], [true; 5]].concat());
    }

    /// Memory stays bounded (`run` asserts at most 2 × LOOKAHEAD requests held) when
    /// late groups shorter than the run before them follow one another: `cut` drops
    /// each, `warn` and `clamp` keep them behind the run, which is final once so many
    /// wait.
    #[test]
    fn a_series_of_late_groups_is_held_in_bounded_memory() {
        let mut t: Vec<u64> = (0..500).map(|i| i * 1000).collect();
        for g in 1..=10 {
            t.extend((0..499).map(|i| g * YEARS_40 + i * 1000));
        }
        for policy in [OutlierPolicy::Warn, OutlierPolicy::Cut, OutlierPolicy::Clamp] {
            let (v, c) = run(policy, &t);
            let kept = v.iter().flatten().count();
            assert_eq!(kept, if policy == OutlierPolicy::Cut { 500 } else { t.len() }, "{policy}");
            assert!(c.count >= 499, "{policy}");
        }
    }

    #[test]
    fn histogram_quantiles() {
        let mut h = GapHistogram::default();
        assert_eq!((h.p999_upper(), h.typical()), (0, 0));
        for g in [0, 1, 2, 3, 1000] {
            h.add(g);
        }
        assert_eq!(h.typical(), 2);
        assert_eq!(h.p999_upper(), 1023);
    }

    #[test]
    fn resolution_and_same_instant() {
        let mut r = Resolution::default();
        for t in [5 * S, 5 * S, 5 * S, 6 * S, 8 * S, 8 * S] {
            r.add(t);
        }
        assert_eq!((r.gcd, r.max_same), (S, 3));
    }
}
