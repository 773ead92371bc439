//! Run statistics: HDR histograms of response time and queue wait per read / write /
//! all, throughput over simulated time, write amplification, GC, wear and utilisation.

use hdrhistogram::Histogram;
use serde::Serialize;

use lamina_nand_model::{Nanos, SimTime};

/// Response-time (or wait-time) distribution of one request class.
///
/// Percentiles come from an HDR histogram (3 significant digits); the count, sum,
/// minimum and maximum are kept exactly (issue #8: the histogram's bucket bounds were
/// reported as min/max, and zero waits as 1 ns).
pub struct LatencyHist {
    hist: Histogram<u64>,
    sum_ns: u128,
    min_ns: u64,
    max_ns: u64,
}

impl Default for LatencyHist {
    fn default() -> Self {
        // 3 significant digits over 1 ns .. ~1 hour; auto-resize past that.
        let mut hist = Histogram::new_with_bounds(1, 3_600_000_000_000, 3).expect("valid histogram bounds");
        hist.auto(true);
        LatencyHist { hist, sum_ns: 0, min_ns: u64::MAX, max_ns: 0 }
    }
}

impl LatencyHist {
    /// Record one sample.
    #[inline]
    pub fn record(&mut self, d: Nanos) {
        // HDR histograms record 0 in their first bucket exactly.
        self.hist.record(d.0).expect("auto-resizing histogram");
        self.sum_ns += d.0 as u128;
        self.min_ns = self.min_ns.min(d.0);
        self.max_ns = self.max_ns.max(d.0);
    }

    /// The union of two distributions (exact: same bucket layout, sums added).
    pub fn merged(a: &LatencyHist, b: &LatencyHist) -> LatencyHist {
        let mut hist = a.hist.clone();
        hist.add(&b.hist).expect("auto-resizing histogram");
        LatencyHist {
            hist,
            sum_ns: a.sum_ns + b.sum_ns,
            min_ns: a.min_ns.min(b.min_ns),
            max_ns: a.max_ns.max(b.max_ns),
        }
    }

    /// Number of samples.
    pub fn count(&self) -> u64 {
        self.hist.len()
    }

    /// Summary of the distribution.
    pub fn summary(&self) -> LatencySummary {
        let n = self.hist.len();
        // Bucket values clamped to the exact extremes (a percentile never exceeds the
        // maximum nor falls below the minimum).
        let q =
            |p: f64| if n == 0 { 0 } else { self.hist.value_at_quantile(p).clamp(self.min_ns, self.max_ns) };
        LatencySummary {
            count: n,
            mean_ns: if n == 0 { 0.0 } else { self.sum_ns as f64 / n as f64 },
            min_ns: if n == 0 { 0 } else { self.min_ns },
            p50_ns: q(0.5),
            p90_ns: q(0.9),
            p95_ns: q(0.95),
            p99_ns: q(0.99),
            p99_9_ns: q(0.999),
            p99_99_ns: q(0.9999),
            p99_999_ns: q(0.99999),
            max_ns: self.max_ns,
        }
    }
}

/// Percentile summary of a latency distribution (values in ns; count, mean, min and
/// max are exact; percentiles are HDR-histogram values with 3 significant digits).
#[derive(Clone, Debug, Serialize, PartialEq, schemars::JsonSchema)]
pub struct LatencySummary {
    /// Number of requests.
    pub count: u64,
    /// Exact mean in ns.
    pub mean_ns: f64,
    /// Minimum.
    pub min_ns: u64,
    /// Median.
    pub p50_ns: u64,
    /// 90th percentile.
    pub p90_ns: u64,
    /// 95th percentile.
    pub p95_ns: u64,
    /// 99th percentile.
    pub p99_ns: u64,
    /// 99.9th percentile.
    pub p99_9_ns: u64,
    /// 99.99th percentile.
    pub p99_99_ns: u64,
    /// 99.999th percentile.
    pub p99_999_ns: u64,
    /// Maximum.
    pub max_ns: u64,
}

/// Request-level statistics collected during a run.
#[derive(Default)]
pub struct RequestStats {
    /// Response times of reads.
    pub read: LatencyHist,
    /// Response times of writes.
    pub write: LatencyHist,
    /// Queue waits of reads.
    pub read_wait: LatencyHist,
    /// Queue waits of writes.
    pub write_wait: LatencyHist,
    /// Bytes read by the host.
    pub read_bytes: u64,
    /// Bytes written by the host.
    pub write_bytes: u64,
    /// Trims completed.
    pub trims: u64,
    /// Arrival of the first request.
    pub first_arrival: Option<SimTime>,
    /// Completion of the last request.
    pub last_completion: SimTime,
}

impl RequestStats {
    /// Response times of all requests: the read and write histograms merged (recording
    /// each request once per class instead of twice keeps the hot path lean).
    pub fn all(&self) -> LatencyHist {
        LatencyHist::merged(&self.read, &self.write)
    }

    /// Queue waits of all requests (merged like [`RequestStats::all`]).
    pub fn all_wait(&self) -> LatencyHist {
        LatencyHist::merged(&self.read_wait, &self.write_wait)
    }

    /// Record a completed request.
    #[inline]
    pub fn complete(&mut self, is_read: bool, bytes: u64, arrival: SimTime, done: SimTime, wait: Nanos) {
        let rt = done.since(arrival);
        if is_read {
            self.read.record(rt);
            self.read_wait.record(wait);
            self.read_bytes += bytes;
        } else {
            self.write.record(rt);
            self.write_wait.record(wait);
            self.write_bytes += bytes;
        }
        if done > self.last_completion {
            self.last_completion = done;
        }
    }
}

/// Mean and population variance of a set of counters.
#[derive(Clone, Debug, Default, Serialize, PartialEq, schemars::JsonSchema)]
pub struct MeanVar {
    /// Mean.
    pub mean: f64,
    /// Population variance.
    pub variance: f64,
    /// Maximum.
    pub max: u64,
}

impl MeanVar {
    /// Compute from integer samples (exact sums in u128).
    pub fn of(values: impl Iterator<Item = u64>) -> MeanVar {
        let (mut n, mut s, mut s2, mut max) = (0u128, 0u128, 0u128, 0u64);
        for v in values {
            n += 1;
            s += v as u128;
            s2 += v as u128 * v as u128;
            max = max.max(v);
        }
        if n == 0 {
            return MeanVar::default();
        }
        let mean = s as f64 / n as f64;
        // Var = (n·Σx² − (Σx)²) / n², computed in integers to avoid cancellation.
        let num = n * s2 - s * s;
        MeanVar { mean, variance: num as f64 / (n * n) as f64, max }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_of_known_samples() {
        let mut h = LatencyHist::default();
        for v in 1..=1000u64 {
            h.record(Nanos(v * 1000));
        }
        let s = h.summary();
        assert_eq!(s.count, 1000);
        assert_eq!(s.mean_ns, 500_500.0);
        assert!((s.p50_ns as i64 - 500_000).abs() <= 500, "{}", s.p50_ns);
        assert!((s.p99_ns as i64 - 990_000).abs() <= 1000, "{}", s.p99_ns);
        assert!((s.max_ns as i64 - 1_000_000).abs() <= 1000);
    }

    #[test]
    fn min_max_are_exact_and_zero_stays_zero() {
        // Story: a read of 87,591 ns was reported as min 87,552 (a bucket bound), and
        // waits of 0 ns as 1 ns.
        let mut h = LatencyHist::default();
        h.record(Nanos(87_591));
        h.record(Nanos(1_234_567));
        let s = h.summary();
        assert_eq!((s.min_ns, s.max_ns), (87_591, 1_234_567));
        assert!(s.p50_ns >= s.min_ns && s.p99_999_ns <= s.max_ns);
        let mut z = LatencyHist::default();
        z.record(Nanos(0));
        z.record(Nanos(0));
        let s = z.summary();
        assert_eq!((s.min_ns, s.p50_ns, s.p99_ns, s.max_ns, s.mean_ns), (0, 0, 0, 0, 0.0));
        let m = LatencyHist::merged(&h, &z).summary();
        assert_eq!((m.min_ns, m.max_ns, m.count), (0, 1_234_567, 4));
    }

    #[test]
    fn merged_equals_recording_both() {
        let (mut a, mut b, mut both) =
            (LatencyHist::default(), LatencyHist::default(), LatencyHist::default());
        for v in 0..5000u64 {
            let d = Nanos(v * v % 100_003 + 1);
            if v % 3 == 0 {
                a.record(d)
            } else {
                b.record(d)
            }
            both.record(d);
        }
        assert_eq!(LatencyHist::merged(&a, &b).summary(), both.summary());
    }

    #[test]
    fn mean_var_exact() {
        let mv = MeanVar::of([2u64, 4, 4, 4, 5, 5, 7, 9].into_iter());
        assert_eq!(mv.mean, 5.0);
        assert_eq!(mv.variance, 4.0);
        assert_eq!(mv.max, 9);
    }
}
