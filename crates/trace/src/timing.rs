//! Arrival-time checks on the released (sorted) request stream, in the trace's own
//! clock: absurd gaps (outliers) and the timestamp resolution.
//!
//! **Outlier rule.** A gap (arrival minus the previous kept arrival) is *absurd* when it
//! exceeds both 1 hour and 1000 × the 99.9th percentile of the gaps seen so far. The
//! percentile comes from a running histogram of gaps in power-of-two buckets (65
//! counters: bounded memory, streaming, deterministic), and is taken as the upper bound
//! of its bucket, so the rule errs towards *not* flagging. Absurd gaps do not enter the
//! histogram. With no history (the first gap) only the 1 hour bound applies.
//!
//! Because the reorder window sorts requests, a late bogus timestamp (40 years in an
//! 810 s trace) travels to the end of the stream, and an early bogus one (0 in an
//! epoch-stamped trace) to the start; the first request is therefore held until the
//! second is seen, so an absurd first gap blames the first request.
//!
//! Actions (`trace.outliers`): `warn` replays as is and reports the lines; `cut` drops
//! the request on the far side of the absurd gap (later gaps are measured from the last
//! kept request, so a run of bogus timestamps is dropped whole); `clamp` keeps every
//! request but replaces each absurd gap by the typical gap — the median gap so far,
//! rounded down to a power of two ns (0 with no history) — shifting every later arrival
//! earlier by the difference.

use crate::options::OutlierPolicy;

/// The absolute floor of an absurd gap: one hour.
pub(crate) const ABSURD_FLOOR_NS: u64 = 3_600 * 1_000_000_000;
/// An absurd gap is this many times the 99.9th-percentile gap.
pub(crate) const ABSURD_FACTOR: u64 = 1000;
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
pub(crate) enum Verdict {
    /// Keep it, at this (possibly clamped) trace-clock time.
    Keep(u64),
    /// Drop it (`cut`).
    Drop,
}

/// The outlier check over the sorted stream.
pub(crate) struct OutlierCheck {
    policy: OutlierPolicy,
    gaps: GapHistogram,
    /// Last kept arrival (after clamping).
    last: Option<u64>,
    /// Total shift subtracted by clamping so far.
    shift: u64,
    /// The next request was already judged with the first (its gap is not counted twice).
    pass_next: bool,
    /// Absurd gaps found.
    pub(crate) count: u64,
    /// (line, gap ns) of the first few: the line of the request the check blames (cut,
    /// clamped or warned about), the gap before it — or, for the first request (see
    /// `leading`), after it.
    pub(crate) first: Vec<(u64, u64)>,
    /// Whether the first entry of `first` is the first request, blamed for the gap
    /// that follows it.
    pub(crate) leading: bool,
}

impl OutlierCheck {
    pub(crate) fn new(policy: OutlierPolicy) -> OutlierCheck {
        OutlierCheck {
            policy,
            gaps: GapHistogram::default(),
            last: None,
            shift: 0,
            pass_next: false,
            count: 0,
            first: Vec::new(),
            leading: false,
        }
    }

    fn note(&mut self, line: u64, gap: u64) {
        self.count += 1;
        if self.first.len() < KEPT {
            self.first.push((line, gap));
        }
    }

    /// Judge the request at trace-clock `time` from `line` (times arrive sorted).
    pub(crate) fn judge(&mut self, time: u64, line: u64) -> Verdict {
        let time = time - self.shift.min(time);
        if std::mem::take(&mut self.pass_next) {
            self.last = Some(time);
            return Verdict::Keep(time);
        }
        let Some(last) = self.last else {
            self.last = Some(time);
            return Verdict::Keep(time);
        };
        let gap = time.saturating_sub(last);
        if !self.gaps.is_absurd(gap) {
            self.gaps.add(gap);
            self.last = Some(time);
            return Verdict::Keep(time);
        }
        self.note(line, gap);
        match self.policy {
            OutlierPolicy::Warn => {
                self.last = Some(time);
                Verdict::Keep(time)
            }
            OutlierPolicy::Cut => Verdict::Drop,
            OutlierPolicy::Clamp => {
                let t = last + self.gaps.typical();
                self.shift += time - t;
                self.last = Some(t);
                Verdict::Keep(t)
            }
        }
    }

    /// The first gap, between the held first request (at `first`, from `first_line`)
    /// and the request at `second`: if it is absurd, the first request is the outlier
    /// (and the one its line names). Returns the verdict for the first request; the
    /// second is then judged normally.
    pub(crate) fn judge_first_pair(&mut self, first: u64, second: u64, first_line: u64) -> Verdict {
        let gap = second - first;
        if !self.gaps.is_absurd(gap) {
            self.last = Some(first);
            return Verdict::Keep(first);
        }
        self.note(first_line, gap);
        self.leading = true;
        self.pass_next = self.policy != OutlierPolicy::Cut;
        match self.policy {
            OutlierPolicy::Warn => Verdict::Keep(first),
            OutlierPolicy::Cut => Verdict::Drop,
            // With no history the typical gap is 0: the first joins the second's instant.
            OutlierPolicy::Clamp => Verdict::Keep(second),
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

    fn run(policy: OutlierPolicy, times: &[u64]) -> (Vec<Option<u64>>, u64) {
        let mut c = OutlierCheck::new(policy);
        let v = times
            .iter()
            .enumerate()
            .map(|(i, &t)| match c.judge(t, i as u64 + 1) {
                Verdict::Keep(t) => Some(t),
                Verdict::Drop => None,
            })
            .collect();
        (v, c.count)
    }

    const S: u64 = 1_000_000_000;
    const YEARS_40: u64 = 40 * 365 * 86_400 * S;

    #[test]
    fn a_late_bogus_timestamp_is_found_and_cut_or_clamped() {
        let mut t: Vec<u64> = (0..1000).map(|i| i * S / 10).collect();
        t.push(YEARS_40);
        let (v, n) = run(OutlierPolicy::Warn, &t);
        assert_eq!(n, 1);
        assert_eq!(v[1000], Some(YEARS_40));
        let (v, _) = run(OutlierPolicy::Cut, &t);
        assert_eq!(v[1000], None);
        let (v, _) = run(OutlierPolicy::Clamp, &t);
        // Median gap 0.1 s rounded down to a power of two ns: 2^26 ns.
        assert_eq!(v[1000], Some(999 * S / 10 + (1 << 26)));
    }

    #[test]
    fn bursty_but_honest_traces_are_not_flagged() {
        // A 2-hour idle period in a trace whose gaps are up to 10 s: not absurd (< 1000 × p99.9).
        let mut t: Vec<u64> = (0..100).map(|i| i * 10 * S).collect();
        t.push(t[99] + 7_200 * S);
        assert_eq!(run(OutlierPolicy::Warn, &t).1, 0);
        // A 30-minute gap after microsecond gaps: under the 1 h floor.
        let mut t: Vec<u64> = (0..100).map(|i| i * 1000).collect();
        t.push(1_800 * S);
        assert_eq!(run(OutlierPolicy::Warn, &t).1, 0);
    }

    #[test]
    fn an_early_bogus_first_timestamp_blames_the_first_request() {
        for (policy, want) in [
            (OutlierPolicy::Warn, Some(0)),
            (OutlierPolicy::Cut, None),
            (OutlierPolicy::Clamp, Some(YEARS_40)),
        ] {
            let mut c = OutlierCheck::new(policy);
            let v = match c.judge_first_pair(0, YEARS_40, 1) {
                Verdict::Keep(t) => Some(t),
                Verdict::Drop => None,
            };
            assert_eq!(v, want, "{policy}");
            // The first request's line (not the second's: new-user trial finding 2).
            assert_eq!((c.first.as_slice(), c.leading), (&[(1, YEARS_40)][..], true), "{policy}");
            assert!(matches!(c.judge(YEARS_40, 2), Verdict::Keep(t) if t == YEARS_40));
            assert!(matches!(c.judge(YEARS_40 + S, 3), Verdict::Keep(_)));
            assert_eq!(c.count, 1, "{policy}");
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
