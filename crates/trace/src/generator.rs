//! Deterministic synthetic trace generator (`lamina trace gen`).
//!
//! Everything is driven by one `Xoshiro256PlusPlus` seeded with `seed`, and every
//! draw is integer arithmetic, so a given configuration yields the same requests on
//! every platform:
//!
//! * **Poisson arrivals**: inter-arrival `Δ = round(mean_ns · E)`, with
//!   `E = −ln(u)` and `u = x / 2^64` for a 64-bit draw `x` (0 → 1). `−ln(u)` is
//!   computed in Q32 fixed point as `(64 − log2 x) · ln 2`: `log2 x` takes the
//!   integer part from the leading-zero count and 32 fraction bits by repeated
//!   squaring of the mantissa (u128 arithmetic); `ln 2 = 2977044472 / 2^32`. The mean
//!   `10^9 / rate` is kept in Q32 too, so fractional means are not truncated.
//! * **Closed loop**: every arrival is 0; the engine's queue depth paces replay.
//! * **Uniform draws** in `[0, n)` use Lemire's multiply-shift `(x · n) >> 64`.
//! * **Zipf(θ)** over the footprint's blocks: ranks 1‥1024 get exact weights
//!   `r^−θ`, larger ranks geometric buckets (ratio 1.01) weighted by the integral of
//!   `x^−θ`; the cumulative weights are quantised once to integers (the only `f64`
//!   in the generator, at construction), then ranks are drawn by binary search and a
//!   uniform draw inside the bucket. Rank `r` maps to block `(r−1)·P mod N` with `P`
//!   coprime to `N`, scattering hot blocks over the footprint.

use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::Serialize;

use crate::TraceTime;

use super::num::parse_bytes;
use super::{IoOp, IoRequest};

/// Arrival process.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum Arrival {
    /// Poisson arrivals at `num/den` requests per second.
    Poisson {
        /// Rate numerator.
        num: u64,
        /// Rate denominator.
        den: u64,
    },
    /// All arrivals at time 0 (closed loop: the replay's queue depth paces it).
    ClosedLoop,
}

/// The highest Poisson rate, in IOPS: a mean gap of 1 ns. Above it most integer-ns
/// gaps round to 0, and the trace is a burst at time 0 rather than the rate asked for.
pub const MAX_RATE_IOPS: u64 = 1_000_000_000;

impl Arrival {
    /// Poisson arrivals at a decimal rate in IOPS (`"5000"`, `"2500.5"`, `"1e4"`,
    /// `"2.5e-3"`), kept exact as a fraction. Whether the rate suits a trace's length
    /// is [`Arrival::check`]'s question.
    pub fn poisson(rate: &str) -> Result<Arrival, String> {
        let bad = || format!("{rate:?} is not a positive number of IOPS (e.g. 5000, 2500.5 or 1e4)");
        match crate::options::exact_ratio(rate) {
            Ok((num, den)) => Ok(Arrival::Poisson { num, den }),
            Err(crate::options::RatioError::NotPositive) => Err(bad()),
            Err(_) => Err(format!("{rate:?} IOPS is outside {}", rate_range_text(None))),
        }
    }

    /// Check that the arrivals of `requests` requests are meaningful integer-ns times:
    /// a Poisson rate of at most [`MAX_RATE_IOPS`] (a mean gap of at least 1 ns), and
    /// low enough a rate that no draw can carry the last arrival past the 64-bit ns
    /// clock (one gap is at most `64 ln 2` ≈ 44.4 mean gaps, so
    /// `(requests − 1) × 44.4 × mean gap` must fit). The error names the rate, the
    /// limit broken and the valid range for `requests`.
    pub fn check(&self, requests: u64) -> Result<(), String> {
        let Arrival::Poisson { num, den } = *self else { return Ok(()) };
        let shown = rate_text(num, den);
        if num == 0 || den == 0 {
            return Err(format!(
                "{shown} IOPS: the rate must be positive; valid: {}",
                rate_range_text(Some(requests))
            ));
        }
        if num as u128 > MAX_RATE_IOPS as u128 * den as u128 {
            return Err(format!(
                "{shown} IOPS is above {MAX_RATE_IOPS} IOPS, a mean gap of 1 ns: integer-nanosecond arrivals \
                 would mostly round to the same instant; valid: {}",
                rate_range_text(Some(requests))
            ));
        }
        if max_gap_ns(mean_q32(num, den)).and_then(|g| g.checked_mul(requests.saturating_sub(1))).is_none() {
            return Err(format!(
                "{shown} IOPS is too low for {requests} requests: their arrivals could run past the 64-bit \
                 nanosecond clock (about 584 years; one gap can be 44 × the mean); valid: {}",
                rate_range_text(Some(requests))
            ));
        }
        Ok(())
    }
}

/// A rate `num/den` as written back to the user: an integer, or a decimal.
fn rate_text(num: u64, den: u64) -> String {
    if den == 1 { num.to_string() } else { format!("{}", num as f64 / den as f64) }
}

/// The mean gap `10^9 · den / num` ns in Q32 (`num > 0`).
fn mean_q32(num: u64, den: u64) -> u128 {
    ((1_000_000_000u128 * den as u128) << 32) / num as u128
}

/// The longest gap a draw can give at this mean (the smallest draw's `−ln`, 64 ln 2),
/// in ns, as the iterator rounds it; `None` if it does not fit 64 bits.
fn max_gap_ns(mean_q32: u128) -> Option<u64> {
    let dt = mean_q32.checked_mul(neg_ln_q32(1))?.checked_add(1 << 63)? >> 64;
    u64::try_from(dt).ok()
}

/// "1e-9 to 1e9 IOPS" style text of the valid rates (for `requests` requests, or the
/// parse limits when unknown).
fn rate_range_text(requests: Option<u64>) -> String {
    match requests {
        Some(n) if n > 1 => {
            // The lowest rate whose longest possible span fits: mean ≤ u64::MAX / (44.4 (n − 1)).
            let min = (n - 1) as f64 * neg_ln_q32(1) as f64 / 4_294_967_296.0 * 1e9 / u64::MAX as f64;
            format!("a rate from {min:.3e} to {MAX_RATE_IOPS} IOPS for {n} requests")
        }
        _ => format!("a positive rate up to {MAX_RATE_IOPS} IOPS"),
    }
}

/// The comment line (without `# `) a closed-loop generated trace starts with, so that
/// `lamina run` can tell it is meant for closed-loop replay at `depth`.
pub fn closed_loop_comment(depth: u32) -> String {
    format!("{} host.mode=closed host.closed_loop_depth={depth}", crate::GEN_COMMENT)
}

/// Request size distribution (bytes).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum SizeDist {
    /// One size.
    Fixed(u64),
    /// Uniform over `min, min+step, …, max`.
    Range {
        /// Smallest size.
        min: u64,
        /// Largest size.
        max: u64,
        /// Step.
        step: u64,
    },
    /// Uniform over a set of sizes.
    Set(Vec<u64>),
    /// Sizes with integer weights (an empirical histogram).
    Empirical(Vec<(u64, u64)>),
}

impl SizeDist {
    /// Parse `4k`, `4k-64k` (step = gcd(min, max, 4 KiB)) or `4k,8k,16k`.
    /// (`empirical:FILE` is read by the CLI with [`SizeDist::from_histogram`].)
    pub fn parse(spec: &str) -> Result<SizeDist, String> {
        let d = if let Some((a, b)) = spec.split_once('-') {
            let (min, max) = (parse_bytes(a)?, parse_bytes(b)?);
            let step = gcd(gcd(min, max), 4096);
            SizeDist::Range { min, max, step }
        } else if spec.contains(',') {
            SizeDist::Set(spec.split(',').map(parse_bytes).collect::<Result<_, _>>()?)
        } else {
            SizeDist::Fixed(parse_bytes(spec)?)
        };
        d.validate()?;
        Ok(d)
    }

    /// Parse a histogram: one `SIZE WEIGHT` pair per line (`#` comments), e.g. `4k 70`.
    pub fn from_histogram(text: &str) -> Result<SizeDist, String> {
        let mut v = Vec::new();
        for (i, l) in text.lines().enumerate() {
            let l = l.split('#').next().unwrap_or("").trim();
            if l.is_empty() {
                continue;
            }
            let mut it = l.split_whitespace();
            let (Some(s), Some(w), None) = (it.next(), it.next(), it.next()) else {
                return Err(format!("histogram line {}: expected `SIZE WEIGHT`, got {l:?}", i + 1));
            };
            let size = parse_bytes(s).map_err(|e| format!("histogram line {}: {e}", i + 1))?;
            let weight: u64 =
                w.parse().map_err(|_| format!("histogram line {}: weight {w:?} is not an integer", i + 1))?;
            v.push((size, weight));
        }
        let d = SizeDist::Empirical(v);
        d.validate()?;
        Ok(d)
    }

    fn sizes(&self) -> Vec<u64> {
        match self {
            SizeDist::Fixed(s) => vec![*s],
            SizeDist::Range { min, max, .. } => vec![*min, *max],
            SizeDist::Set(v) => v.clone(),
            SizeDist::Empirical(v) => v.iter().map(|x| x.0).collect(),
        }
    }

    /// Check the distribution: every size positive and a multiple of 512 bytes, a range's
    /// minimum at most its maximum, a histogram with some weight ([`Generator::new`] runs
    /// the same check; call it first to tell which flag or key gave the sizes).
    pub fn validate(&self) -> Result<(), String> {
        let sizes = self.sizes();
        if sizes.is_empty() || sizes.contains(&0) {
            return Err("sizes must be positive (and at least one given)".into());
        }
        if sizes.iter().any(|s| s % 512 != 0) {
            return Err("sizes must be multiples of 512 bytes (sectors)".into());
        }
        match self {
            SizeDist::Range { min, max, step } if min > max || *step == 0 => {
                Err("size range min > max".into())
            }
            SizeDist::Empirical(v) if v.iter().map(|x| x.1).sum::<u64>() == 0 => {
                Err("histogram weights are all 0".into())
            }
            _ => Ok(()),
        }
    }
}

/// Address pattern.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum Pattern {
    /// Uniform over the footprint.
    Uniform,
    /// `streams` interleaved sequential streams (each request picks a stream uniformly).
    Sequential {
        /// Number of streams.
        streams: u32,
    },
    /// Zipf-distributed block popularity with exponent `theta` (hot/cold).
    Zipf {
        /// Exponent (e.g. 0.99).
        theta: f64,
    },
    /// A mix of sequential runs and random requests: each request continues one of
    /// `streams` sequential streams (as [`Pattern::Sequential`]) with probability
    /// `seq_ppm / 10^6`, and is otherwise placed uniformly (`theta = None`) or by
    /// Zipf(`theta`) over the footprint (as [`Pattern::Uniform`] / [`Pattern::Zipf`]).
    Mixed {
        /// Share of requests that continue a sequential stream, parts per million.
        seq_ppm: u32,
        /// Number of sequential streams.
        streams: u32,
        /// Zipf exponent of the random requests, `None` for uniform.
        theta: Option<f64>,
    },
}

impl std::str::FromStr for Pattern {
    type Err = String;
    /// `uniform`, `seq` / `seq:K`, `zipf:THETA`, `mix:F:K:uniform` / `mix:F:K:zipf:THETA`.
    fn from_str(s: &str) -> Result<Pattern, String> {
        if let Some(rest) = s.strip_prefix("mix:") {
            return parse_mixed(rest);
        }
        match s.split_once(':') {
            None if s == "uniform" => Ok(Pattern::Uniform),
            None if s == "seq" => Ok(Pattern::Sequential { streams: 1 }),
            Some(("seq", k)) => match k.parse::<u32>() {
                Ok(k) if k > 0 => Ok(Pattern::Sequential { streams: k }),
                _ => Err(format!("seq:{k}: the stream count must be a positive integer")),
            },
            Some(("zipf", t)) => match t.parse::<f64>() {
                Ok(theta) if theta.is_finite() && theta > 0.0 && theta <= 10.0 => Ok(Pattern::Zipf { theta }),
                _ => Err(format!("zipf:{t}: theta must be a number in (0, 10]")),
            },
            _ => Err(format!(
                "pattern {s:?}: expected uniform, seq:K, zipf:THETA or mix:F:K:uniform|zipf:THETA"
            )),
        }
    }
}

/// The part of `mix:F:K:REST` after `mix:`: `F` the sequential share (`0.2` or `20%`),
/// `K` the stream count, `REST` `uniform` or `zipf:THETA`.
fn parse_mixed(rest: &str) -> Result<Pattern, String> {
    let usage =
        "expected mix:F:K:uniform or mix:F:K:zipf:THETA (F the sequential share, e.g. 0.2 or 20%; K streams)";
    let mut parts = rest.splitn(3, ':');
    let (Some(f), Some(k), Some(random)) = (parts.next(), parts.next(), parts.next()) else {
        return Err(format!("pattern mix:{rest}: {usage}"));
    };
    let (digits, scale) = match f.strip_suffix('%') {
        Some(p) => (p, 4),
        None => (f, 6),
    };
    let seq_ppm = match super::num::parse_decimal(digits.trim().as_bytes(), scale) {
        Ok(v) if v <= 1_000_000 => v as u32,
        _ => {
            return Err(format!("pattern mix:{rest}: the sequential share {f:?} must be in [0, 1]; {usage}"));
        }
    };
    let streams = match k.parse::<u32>() {
        Ok(k) if k > 0 => k,
        _ => return Err(format!("pattern mix:{rest}: the stream count {k:?} must be a positive integer")),
    };
    let theta = match random.parse::<Pattern>() {
        Ok(Pattern::Uniform) => None,
        Ok(Pattern::Zipf { theta }) => Some(theta),
        Ok(_) => return Err(format!("pattern mix:{rest}: the random part must be uniform or zipf:THETA")),
        Err(e) => return Err(format!("pattern mix:{rest}: {e}")),
    };
    Ok(Pattern::Mixed { seq_ppm, streams, theta })
}

/// Generator configuration.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GenConfig {
    /// Requests to generate.
    pub requests: u64,
    /// Arrival process.
    pub arrival: Arrival,
    /// Fraction of reads in parts per million.
    pub read_ppm: u32,
    /// Size distribution (of every request, or of reads when `write_sizes` is set).
    pub sizes: SizeDist,
    /// Size distribution of writes, if they differ from reads (`None`: `sizes` for
    /// both, and the trace is exactly what it was before this option existed).
    pub write_sizes: Option<SizeDist>,
    /// Address pattern.
    pub pattern: Pattern,
    /// Bytes of address space used (from offset 0).
    pub footprint_bytes: u64,
    /// PRNG seed.
    pub seed: u64,
    /// Device id of every request.
    pub device: u32,
}

impl GenConfig {
    /// The replay benchmark's workload (`benches/replay.rs`, issue #3): `requests`
    /// requests of 4–64 KiB (uniform in 4 KiB steps), 50 % reads, Poisson arrivals at
    /// 10 k IOPS, uniform 4 KiB-aligned addresses over 200 GiB, seed 1.
    pub fn replay_benchmark(requests: u64) -> GenConfig {
        GenConfig {
            requests,
            arrival: Arrival::poisson("10000").expect("valid rate"),
            read_ppm: 500_000,
            sizes: SizeDist::parse("4k-64k").expect("valid sizes"),
            write_sizes: None,
            pattern: Pattern::Uniform,
            footprint_bytes: 200 << 30,
            seed: 1,
            device: 0,
        }
    }

    /// Parse a read ratio `0.7` or `70%` into parts per million (exact decimal).
    pub fn parse_read_ratio(s: &str) -> Result<u32, String> {
        let (v, scale) = match s.strip_suffix('%') {
            Some(p) => (p, 4),
            None => (s, 6),
        };
        let ppm = super::num::parse_decimal(v.trim().as_bytes(), scale)
            .map_err(|_| format!("read ratio {s:?}: expected a number in [0, 1] or a percentage"))?;
        if ppm > 1_000_000 {
            return Err(format!("read ratio {s:?} is above 1"));
        }
        Ok(ppm as u32)
    }
}

/// Iterator of generated requests.
pub struct Generator {
    cfg: GenConfig,
    rng: Xoshiro256PlusPlus,
    emitted: u64,
    now: u64,
    mean_q32: u128,
    unit: u64,
    cursors: Vec<u64>,
    zipf: Option<ZipfTable>,
    /// Total weight of the empirical size distribution of reads (or all) and of writes.
    empirical_total: [u64; 2],
}

const LN2_Q32: u128 = 2_977_044_472;

/// `−ln(x / 2^64)` in Q32 fixed point (x ≥ 1), integer arithmetic only.
fn neg_ln_q32(x: u64) -> u128 {
    let x = x.max(1);
    let lz = x.leading_zeros();
    let int = 63 - lz as u64;
    let mut m: u128 = (x as u128) << lz; // [2^63, 2^64) ≙ [1, 2)
    let mut frac: u64 = 0;
    for _ in 0..32 {
        m = (m * m) >> 63;
        frac <<= 1;
        if m >= 1 << 64 {
            m >>= 1;
            frac |= 1;
        }
    }
    let log2_q32 = ((int as u128) << 32) | frac as u128;
    let neg_log2_q32 = (64u128 << 32) - log2_q32;
    (neg_log2_q32 * LN2_Q32) >> 32
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

#[inline]
fn below(rng: &mut Xoshiro256PlusPlus, n: u64) -> u64 {
    ((rng.next_u64() as u128 * n as u128) >> 64) as u64
}

struct ZipfTable {
    /// First rank of each bucket (1-based).
    start: Vec<u64>,
    /// Cumulative weight at the end of each bucket; the last is 2^63.
    cum: Vec<u64>,
    n: u64,
    mult: u64,
}

impl ZipfTable {
    fn new(n: u64, theta: f64) -> ZipfTable {
        let mut start = Vec::new();
        let mut w = Vec::new();
        let f =
            |x: f64| if (theta - 1.0).abs() < 1e-12 { x.ln() } else { x.powf(1.0 - theta) / (1.0 - theta) };
        let mut r = 1u64;
        while r <= n {
            let end = if r <= 1024 { r } else { ((r as f64 * 1.01) as u64).max(r + 1).min(n) };
            let weight =
                if r == end { (r as f64).powf(-theta) } else { f(end as f64 + 0.5) - f(r as f64 - 0.5) };
            start.push(r);
            w.push(weight);
            r = end + 1;
        }
        let total: f64 = w.iter().sum();
        let scale = (1u64 << 63) as f64;
        let mut acc = 0.0;
        let mut cum: Vec<u64> = w
            .iter()
            .map(|x| {
                acc += x;
                ((acc / total) * scale) as u64
            })
            .collect();
        *cum.last_mut().expect("n >= 1") = 1 << 63;
        // Scatter ranks: multiplier coprime with n.
        let mut mult = (0x9E37_79B9_7F4A_7C15u64 % n).max(1);
        while gcd(mult, n) != 1 {
            mult += 1;
        }
        ZipfTable { start, cum, n, mult }
    }

    fn block(&self, rng: &mut Xoshiro256PlusPlus) -> u64 {
        let u = rng.next_u64() >> 1;
        let i = self.cum.partition_point(|&c| c <= u).min(self.cum.len() - 1);
        let first = self.start[i];
        let last = self.start.get(i + 1).map_or(self.n, |s| s - 1);
        let rank = first + below(rng, last - first + 1);
        ((rank - 1) as u128 * self.mult as u128 % self.n as u128) as u64
    }
}

/// Why [`Generator::new`] refused a configuration: which setting, and what is wrong
/// with it (its text names the setting as [`GenConfig`] calls it).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GenError {
    /// `sizes` is invalid ([`SizeDist::validate`]).
    #[error("sizes: {0}")]
    Sizes(String),
    /// `write_sizes` is invalid.
    #[error("write sizes: {0}")]
    WriteSizes(String),
    /// `read_ppm` is above 1,000,000.
    #[error("read ratio above 1")]
    ReadRatio,
    /// `footprint_bytes` cannot hold the largest request (or the sizes' common unit).
    #[error("footprint {footprint} B is smaller than the largest request ({largest} B)")]
    Footprint {
        /// The configured footprint in bytes.
        footprint: u64,
        /// The largest request size the size distributions can give, in bytes.
        largest: u64,
    },
    /// The arrival rate cannot give `requests` arrivals in the time representable.
    #[error("rate {0}")]
    Rate(String),
}

impl Generator {
    /// A generator; checks the configuration.
    pub fn new(cfg: GenConfig) -> Result<Generator, GenError> {
        cfg.sizes.validate().map_err(GenError::Sizes)?;
        if let Some(w) = &cfg.write_sizes {
            w.validate().map_err(GenError::WriteSizes)?;
        }
        if cfg.read_ppm > 1_000_000 {
            return Err(GenError::ReadRatio);
        }
        let dists = std::iter::once(&cfg.sizes).chain(cfg.write_sizes.as_ref());
        let sizes: Vec<u64> = dists.clone().flat_map(SizeDist::sizes).collect();
        let max_size = sizes.iter().copied().max().unwrap_or(0);
        let step = dists
            .map(|d| match d {
                SizeDist::Range { step, .. } => *step,
                _ => 4096,
            })
            .fold(4096, gcd);
        let unit = sizes.iter().fold(gcd(step, 4096), |g, &s| gcd(g, s));
        if cfg.footprint_bytes < max_size || cfg.footprint_bytes < unit {
            return Err(GenError::Footprint { footprint: cfg.footprint_bytes, largest: max_size });
        }
        let blocks = cfg.footprint_bytes / unit;
        cfg.arrival.check(cfg.requests).map_err(GenError::Rate)?;
        let mean_q32 = match cfg.arrival {
            Arrival::Poisson { num, den } => mean_q32(num, den),
            Arrival::ClosedLoop => 0,
        };
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(cfg.seed);
        let cursors = match cfg.pattern {
            Pattern::Sequential { streams } | Pattern::Mixed { streams, .. } => {
                (0..streams).map(|_| below(&mut rng, blocks) * unit).collect()
            }
            _ => Vec::new(),
        };
        let zipf = match cfg.pattern {
            Pattern::Zipf { theta } | Pattern::Mixed { theta: Some(theta), .. } => {
                Some(ZipfTable::new(blocks, theta))
            }
            _ => None,
        };
        let total = |d: &SizeDist| match d {
            SizeDist::Empirical(v) => v.iter().map(|x| x.1).sum(),
            _ => 0,
        };
        let empirical_total = [total(&cfg.sizes), cfg.write_sizes.as_ref().map_or(0, total)];
        Ok(Generator { cfg, rng, emitted: 0, now: 0, mean_q32, unit, cursors, zipf, empirical_total })
    }

    fn size(&mut self, op: IoOp) -> u64 {
        let (dist, total) = match (&self.cfg.write_sizes, op) {
            (Some(w), IoOp::Write) => (w, self.empirical_total[1]),
            _ => (&self.cfg.sizes, self.empirical_total[0]),
        };
        match dist {
            SizeDist::Fixed(s) => *s,
            SizeDist::Range { min, max, step } => min + below(&mut self.rng, (max - min) / step + 1) * step,
            SizeDist::Set(v) => v[below(&mut self.rng, v.len() as u64) as usize],
            SizeDist::Empirical(v) => {
                let mut u = below(&mut self.rng, total);
                for &(s, w) in v {
                    if u < w {
                        return s;
                    }
                    u -= w;
                }
                unreachable!("u < total weight")
            }
        }
    }

    fn offset(&mut self, size: u64) -> u64 {
        let fp = self.cfg.footprint_bytes;
        let last_start = (fp - size) / self.unit * self.unit;
        match self.cfg.pattern {
            Pattern::Uniform => self.uniform_offset(last_start),
            Pattern::Sequential { streams } => self.sequential_offset(streams, size),
            Pattern::Zipf { .. } => self.zipf_offset(last_start),
            Pattern::Mixed { seq_ppm, streams, theta } => {
                if below(&mut self.rng, 1_000_000) < seq_ppm as u64 {
                    self.sequential_offset(streams, size)
                } else if theta.is_some() {
                    self.zipf_offset(last_start)
                } else {
                    self.uniform_offset(last_start)
                }
            }
        }
    }

    fn uniform_offset(&mut self, last_start: u64) -> u64 {
        below(&mut self.rng, last_start / self.unit + 1) * self.unit
    }

    /// The next offset of one of `streams` sequential streams (wrapping at the footprint).
    fn sequential_offset(&mut self, streams: u32, size: u64) -> u64 {
        let s = below(&mut self.rng, streams as u64) as usize;
        let mut off = self.cursors[s];
        if off + size > self.cfg.footprint_bytes {
            off = 0;
        }
        self.cursors[s] = (off + size).next_multiple_of(self.unit);
        off
    }

    fn zipf_offset(&mut self, last_start: u64) -> u64 {
        let b = self.zipf.as_ref().expect("zipf table").block(&mut self.rng);
        (b * self.unit).min(last_start)
    }
}

impl Iterator for Generator {
    type Item = IoRequest;

    fn next(&mut self) -> Option<IoRequest> {
        if self.emitted >= self.cfg.requests {
            return None;
        }
        if self.emitted > 0 && self.mean_q32 > 0 {
            let e = neg_ln_q32(self.rng.next_u64());
            // No overflow: `Arrival::check` bounded the mean so that even the longest
            // gaps sum to below 2^64 ns.
            let dt = (self.mean_q32 * e + (1 << 63)) >> 64;
            self.now = self.now.saturating_add(u64::try_from(dt).unwrap_or(u64::MAX));
        }
        self.emitted += 1;
        let op =
            if below(&mut self.rng, 1_000_000) < self.cfg.read_ppm as u64 { IoOp::Read } else { IoOp::Write };
        let size = self.size(op);
        let offset = self.offset(size);
        Some(IoRequest {
            arrival: TraceTime(self.now),
            device: self.cfg.device,
            offset_bytes: offset,
            size_bytes: size,
            op,
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = usize::try_from(self.cfg.requests - self.emitted).unwrap_or(usize::MAX);
        (left, Some(left))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> GenConfig {
        GenConfig {
            requests: 100_000,
            arrival: Arrival::poisson("10000").unwrap(),
            read_ppm: 700_000,
            sizes: SizeDist::parse("4k-64k").unwrap(),
            write_sizes: None,
            pattern: Pattern::Uniform,
            footprint_bytes: 1 << 30,
            seed: 7,
            device: 0,
        }
    }

    #[test]
    fn write_sizes_apply_to_writes_only() {
        let c = GenConfig {
            sizes: SizeDist::parse("40k").unwrap(),
            write_sizes: Some(SizeDist::parse("8k,12k").unwrap()),
            ..cfg()
        };
        let reqs: Vec<IoRequest> = Generator::new(c).unwrap().collect();
        let (reads, writes): (Vec<&IoRequest>, Vec<&IoRequest>) =
            reqs.iter().partition(|r| r.op == IoOp::Read);
        assert!(reads.iter().all(|r| r.size_bytes == 40 << 10));
        assert!(writes.iter().all(|r| r.size_bytes == 8 << 10 || r.size_bytes == 12 << 10));
        assert!(writes.iter().any(|r| r.size_bytes == 12 << 10) && !reads.is_empty());
        // Offsets are aligned to the unit of both distributions (4 KiB) and fit.
        assert!(reqs.iter().all(|r| r.offset_bytes % 4096 == 0 && r.offset_bytes + r.size_bytes <= 1 << 30));
        // Without write sizes the trace is the one the option did not exist for.
        let same: Vec<IoRequest> = Generator::new(cfg()).unwrap().collect();
        let again: Vec<IoRequest> =
            Generator::new(GenConfig { write_sizes: None, ..cfg() }).unwrap().collect();
        assert_eq!(same, again);
        let bad = GenConfig { write_sizes: Some(SizeDist::Set(vec![])), ..cfg() };
        assert!(matches!(Generator::new(bad), Err(GenError::WriteSizes(_))));
    }

    /// Regression (new-user trial finding 3): `--rate 1e12` put every arrival at 0 and
    /// a tiny rate overflowed the Q32 product into arrivals at 0 too, with exit 0. Rates
    /// parse in scientific notation exactly; out-of-range ones are refused with the
    /// valid range; the extremes that pass give distinct, increasing arrivals.
    #[test]
    fn rates_are_checked_against_meaningful_ns_arrivals() {
        assert_eq!(Arrival::poisson("1e4").unwrap(), Arrival::Poisson { num: 10_000, den: 1 });
        assert_eq!(Arrival::poisson("2.5E-3").unwrap(), Arrival::Poisson { num: 1, den: 400 });
        assert_eq!(Arrival::poisson("1e+2").unwrap(), Arrival::Poisson { num: 100, den: 1 });
        for bad in ["x", "-5", "1e", "e3", "0", "1e-99", "1e99"] {
            assert!(Arrival::poisson(bad).is_err(), "{bad}");
        }
        let e = Arrival::poisson("1e12").unwrap().check(10).unwrap_err();
        assert!(
            e.contains("1000000000000 IOPS is above 1000000000 IOPS") && e.contains("for 10 requests"),
            "{e}"
        );
        let e = Arrival::poisson("1e-18").unwrap().check(5).unwrap_err();
        assert!(
            e.contains("too low for 5 requests") && e.contains("from 9.619e-9 to 1000000000 IOPS"),
            "{e}"
        );
        assert!(Arrival::ClosedLoop.check(u64::MAX).is_ok());
        // The limits themselves work: 1 ns mean gaps, and the lowest rate for 5 requests.
        let at = |rate: &str, requests| {
            let c = GenConfig { requests, arrival: Arrival::poisson(rate).unwrap(), ..cfg() };
            Generator::new(c)
                .map(|g| g.map(|r| r.arrival.as_ns()).collect::<Vec<u64>>())
                .map_err(|e| e.to_string())
        };
        let fast = at("1e9", 10_000).unwrap();
        let span = *fast.last().unwrap() as f64;
        assert!((span / 10_000.0 - 1.0).abs() < 0.05, "{span}");
        assert!(at("9.62e-9", 5).is_ok() && at("9.61e-9", 5).is_err());
        let slow = at("1e-8", 5).unwrap();
        assert!(slow.windows(2).all(|w| w[0] < w[1]) && slow[4] > 1 << 50, "{slow:?}");
        assert!(at("1e-8", 50).err().unwrap().starts_with("rate 0.00000001 IOPS is too low"));
    }

    #[test]
    fn neg_ln_matches_known_values() {
        // u = 1/2 → ln 2; u = 1/e^k approximately.
        let half = neg_ln_q32(1 << 63) as f64 / 4294967296.0;
        assert!((half - std::f64::consts::LN_2).abs() < 1e-8, "{half}");
        let tiny = neg_ln_q32(1) as f64 / 4294967296.0;
        assert!((tiny - 64.0 * std::f64::consts::LN_2).abs() < 1e-6);
        let x = (0.25 * 2f64.powi(64)) as u64;
        assert!((neg_ln_q32(x) as f64 / 4294967296.0 - 4f64.ln()).abs() < 1e-8);
        assert_eq!(neg_ln_q32(u64::MAX), 0);
    }

    #[test]
    fn deterministic_and_statistically_sane() {
        let a: Vec<IoRequest> = Generator::new(cfg()).unwrap().collect();
        let b: Vec<IoRequest> = Generator::new(cfg()).unwrap().collect();
        assert_eq!(a, b);
        let c: Vec<IoRequest> = Generator::new(GenConfig { seed: 8, ..cfg() }).unwrap().collect();
        assert_ne!(a, c);
        let n = a.len() as f64;
        let span = a.last().unwrap().arrival.as_ns() as f64;
        let mean_gap = span / (n - 1.0);
        assert!((mean_gap / 100_000.0 - 1.0).abs() < 0.02, "mean gap {mean_gap}");
        let reads = a.iter().filter(|r| r.op == IoOp::Read).count() as f64 / n;
        assert!((reads - 0.7).abs() < 0.01, "{reads}");
        assert!(a.iter().all(|r| r.size_bytes % 4096 == 0 && (4096..=65536).contains(&r.size_bytes)));
        assert!(a.iter().all(|r| r.offset_bytes % 4096 == 0 && r.offset_bytes + r.size_bytes <= 1 << 30));
        assert!(a.windows(2).all(|w| w[0].arrival <= w[1].arrival));
    }

    #[test]
    fn zipf_is_skewed_and_sequential_is_sequential() {
        let z: Vec<IoRequest> = Generator::new(GenConfig {
            pattern: Pattern::Zipf { theta: 0.99 },
            sizes: SizeDist::Fixed(4096),
            ..cfg()
        })
        .unwrap()
        .collect();
        let mut counts = std::collections::BTreeMap::new();
        for r in &z {
            *counts.entry(r.offset_bytes).or_insert(0u32) += 1;
        }
        let mut v: Vec<u32> = counts.into_values().collect();
        v.sort_unstable_by(|a, b| b.cmp(a));
        let top100: u32 = v.iter().take(100).sum();
        assert!(top100 as f64 / z.len() as f64 > 0.2, "zipf hot set too cold: {top100}");
        let s: Vec<IoRequest> = Generator::new(GenConfig {
            pattern: Pattern::Sequential { streams: 1 },
            sizes: SizeDist::Fixed(8192),
            requests: 100,
            ..cfg()
        })
        .unwrap()
        .collect();
        assert!(
            s.windows(2).all(|w| w[1].offset_bytes == w[0].offset_bytes + 8192 || w[1].offset_bytes == 0)
        );
    }

    /// `mix:F:K:…`: about `F` of the requests continue a stream (each starts where the
    /// stream's previous request ended), the others follow the random part; the share
    /// 0 and 1 give the random pattern's and `seq:K`'s offsets respectively.
    #[test]
    fn mixed_pattern_mixes_sequential_runs_and_random() {
        let mixed = |seq_ppm, theta| GenConfig {
            pattern: Pattern::Mixed { seq_ppm, streams: 1, theta },
            sizes: SizeDist::Fixed(8192),
            ..cfg()
        };
        let z: Vec<IoRequest> = Generator::new(mixed(300_000, Some(0.9))).unwrap().collect();
        assert_eq!(z, Generator::new(mixed(300_000, Some(0.9))).unwrap().collect::<Vec<_>>());
        assert!(z.iter().all(|r| r.offset_bytes % 4096 == 0 && r.offset_bytes + r.size_bytes <= 1 << 30));
        // Continuations of the stream: a request at the end of one of the last 64 (the
        // stream's previous request is among them but for a 0.7^64 chance; a uniform
        // request lands there by chance with probability about 64 / 131,072).
        let m: Vec<IoRequest> = Generator::new(mixed(300_000, None)).unwrap().collect();
        let mut ends = std::collections::VecDeque::new();
        let mut continued = 0usize;
        for r in &m {
            if ends.contains(&r.offset_bytes) {
                continued += 1;
            }
            ends.push_back(r.offset_bytes + r.size_bytes);
            if ends.len() > 64 {
                ends.pop_front();
            }
        }
        let share = continued as f64 / m.len() as f64;
        assert!((0.29..0.31).contains(&share), "sequential share {share}");
        // Share 1: every request continues the stream, as seq:1 does.
        let all: Vec<u64> =
            Generator::new(mixed(1_000_000, None)).unwrap().take(1000).map(|r| r.offset_bytes).collect();
        assert!(all.windows(2).all(|w| w[1] == w[0] + 8192 || w[1] == 0));
        // Share 0 with uniform: no request continues its predecessor (1 GiB footprint).
        let none: Vec<u64> =
            Generator::new(mixed(0, None)).unwrap().take(1000).map(|r| r.offset_bytes).collect();
        assert!(none.windows(2).filter(|w| w[1] == w[0] + 8192).count() < 3);
    }

    #[test]
    fn parsing() {
        assert_eq!(SizeDist::parse("4k").unwrap(), SizeDist::Fixed(4096));
        assert_eq!(SizeDist::parse("512-4k").unwrap(), SizeDist::Range { min: 512, max: 4096, step: 512 });
        assert_eq!(SizeDist::parse("4k,16k").unwrap(), SizeDist::Set(vec![4096, 16384]));
        assert!(SizeDist::parse("100").is_err());
        assert_eq!(
            SizeDist::from_histogram("# h\n4k 3\n8k 1\n").unwrap(),
            SizeDist::Empirical(vec![(4096, 3), (8192, 1)])
        );
        assert_eq!("zipf:0.99".parse::<Pattern>().unwrap(), Pattern::Zipf { theta: 0.99 });
        assert_eq!("seq:4".parse::<Pattern>().unwrap(), Pattern::Sequential { streams: 4 });
        assert_eq!(
            "mix:0.2:4:zipf:0.9".parse::<Pattern>().unwrap(),
            Pattern::Mixed { seq_ppm: 200_000, streams: 4, theta: Some(0.9) }
        );
        assert_eq!(
            "mix:35%:1:uniform".parse::<Pattern>().unwrap(),
            Pattern::Mixed { seq_ppm: 350_000, streams: 1, theta: None }
        );
        for bad in
            ["mix:1.5:4:uniform", "mix:0.2:0:uniform", "mix:0.2:4:seq:2", "mix:0.2:4", "mix:x:4:uniform"]
        {
            let e = bad.parse::<Pattern>().unwrap_err();
            assert!(e.starts_with("pattern mix:"), "{bad}: {e}");
        }
        assert_eq!(GenConfig::parse_read_ratio("0.7").unwrap(), 700_000);
        assert_eq!(GenConfig::parse_read_ratio("65%").unwrap(), 650_000);
        assert!(GenConfig::parse_read_ratio("1.5").is_err());
        let closed: Vec<IoRequest> =
            Generator::new(GenConfig { arrival: Arrival::ClosedLoop, requests: 10, ..cfg() })
                .unwrap()
                .collect();
        assert!(closed.iter().all(|r| r.arrival.as_ns() == 0));
    }
}
