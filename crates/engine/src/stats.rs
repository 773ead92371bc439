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

    /// Record `n` samples of `d`.
    pub fn record_n(&mut self, d: Nanos, n: u64) {
        if n == 0 {
            return;
        }
        self.hist.record_n(d.0, n).expect("auto-resizing histogram");
        self.sum_ns += d.0 as u128 * n as u128;
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

    /// Exact mean in ns (0 without samples).
    pub fn mean_ns(&self) -> f64 {
        let n = self.hist.len();
        if n == 0 { 0.0 } else { self.sum_ns as f64 / n as f64 }
    }

    /// The value at percentile `p` (in (0, 100]): the HDR bucket's highest equivalent
    /// value, clamped to the exact extremes (a percentile never exceeds the maximum nor
    /// falls below the minimum); 0 without samples.
    pub fn percentile(&self, p: f64) -> u64 {
        if self.hist.is_empty() {
            return 0;
        }
        self.hist.value_at_quantile(quantile_of(p)).clamp(self.min_ns, self.max_ns)
    }

    /// Summary of the distribution at the default percentiles ([`DEFAULT_PERCENTILES`]).
    pub fn summary(&self) -> LatencySummary {
        self.summary_at(&DEFAULT_PERCENTILES)
    }

    /// Summary of the distribution at `percentiles` (each in (0, 100], as
    /// [`check_percentiles`] accepts; the config key `stats.percentiles`).
    pub fn summary_at(&self, percentiles: &[f64]) -> LatencySummary {
        let n = self.hist.len();
        LatencySummary {
            count: n,
            mean_ns: self.mean_ns(),
            min_ns: if n == 0 { 0 } else { self.min_ns },
            percentiles: Percentiles(
                percentiles
                    .iter()
                    .map(|&p| PercentileValue { percentile: p, ns: self.percentile(p) })
                    .collect(),
            ),
            max_ns: self.max_ns,
        }
    }
}

/// How [`LatencyHist::encoded`] writes a distribution: hdrhistogram's V2 serialisation,
/// deflate-compressed (the "V2 compressed" form every HdrHistogram implementation reads),
/// then standard base64 with padding. The report's `histograms.encoding` names it.
pub const HISTOGRAM_ENCODING: &str = "hdrhistogram-v2-deflate-base64";

impl LatencyHist {
    /// The whole distribution in the compact form [`HISTOGRAM_ENCODING`] names, for the
    /// report (issue #10 item 1: CDFs drawn later without re-running). Deterministic:
    /// equal histograms give equal text (the deflate level is fixed).
    pub fn encoded(&self) -> String {
        use base64::Engine as _;
        use hdrhistogram::serialization::Serializer as _;
        let mut bytes = Vec::new();
        hdrhistogram::serialization::V2DeflateSerializer::new()
            .serialize(&self.hist, &mut bytes)
            .expect("a histogram serializes into memory");
        base64::engine::general_purpose::STANDARD.encode(bytes)
    }
}

/// Read a histogram that [`LatencyHist::encoded`] wrote; the error says what is wrong
/// with the text (not base64, not a V2 histogram).
pub fn decode_histogram(text: &str) -> Result<Histogram<u64>, String> {
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text.trim())
        .map_err(|e| format!("not base64 ({e})"))?;
    hdrhistogram::serialization::Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .map_err(|e| format!("not an HdrHistogram V2 serialisation ({e:?})"))
}

/// The percentiles a report gives unless `stats.percentiles` says otherwise: p50, p90,
/// p95, p99, p99.9, p99.99 and p99.999 (what every report gave before the list became
/// configurable, issue #9 item 6).
pub const DEFAULT_PERCENTILES: [f64; 7] = [50.0, 90.0, 95.0, 99.0, 99.9, 99.99, 99.999];

/// Check a percentile list (`stats.percentiles`): not empty, every value finite and in
/// (0, 100], strictly increasing (so no duplicates). The error says what is wrong.
pub fn check_percentiles(list: &[f64]) -> Result<(), String> {
    if list.is_empty() {
        return Err("the list is empty: give at least one percentile, e.g. [50, 99, 99.9]".into());
    }
    for (i, &p) in list.iter().enumerate() {
        if !(p.is_finite() && p > 0.0 && p <= 100.0) {
            return Err(format!("{p} is not a percentile: each value must be a number in (0, 100]"));
        }
        if i > 0 && p <= list[i - 1] {
            return Err(format!(
                "{p} follows {}: the list must be strictly increasing (no duplicates), e.g. [95, 99, 99.9]",
                list[i - 1]
            ));
        }
    }
    Ok(())
}

/// The quantile (0, 1] of percentile `p`, computed in decimal: `99.9` gives exactly the
/// `f64` nearest to 0.999, as the literal `0.999` does, where `99.9 / 100.0` would give
/// 0.9990000000000001 — and an HDR histogram rounds `quantile × count` up, so that last
/// bit can move a percentile to the next sample.
pub fn quantile_of(p: f64) -> f64 {
    // `Display` of an `f64` is its shortest round-trip decimal, never in exponent form.
    let text = p.to_string();
    let (int, frac) = text.split_once('.').unwrap_or((&text, ""));
    let int = format!("{int:0>3}");
    let (ones, hundredths) = int.split_at(int.len() - 2);
    format!("{ones}.{hundredths}{frac}").parse().expect("a decimal number")
}

/// The JSON field of percentile `p`: `p50_ns`, `p99_9_ns`, `p99_999_ns`.
pub fn percentile_key(p: f64) -> String {
    format!("p{}_ns", p.to_string().replace('.', "_"))
}

/// The percentile a JSON field names (the inverse of [`percentile_key`]): `p99_5_ns`
/// gives 99.5; `None` for a field of another form ([`PERCENTILE_KEY_PATTERN`]).
pub fn percentile_of_key(key: &str) -> Option<f64> {
    let body = key.strip_prefix('p')?.strip_suffix("_ns")?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let ok = match body.split_once('_') {
        Some((int, frac)) => digits(int) && digits(frac),
        None => digits(body),
    };
    if ok { body.replace('_', ".").parse().ok() } else { None }
}

/// The text-table label of percentile `p`: `p50`, `p99.9`.
pub fn percentile_label(p: f64) -> String {
    format!("p{p}")
}

/// One percentile of a distribution.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PercentileValue {
    /// The percentile, in (0, 100].
    pub percentile: f64,
    /// Its value in ns.
    pub ns: u64,
}

/// The percentiles of a [`LatencySummary`] in the configured order. In JSON they are
/// fields of the summary named by [`percentile_key`] (`p50_ns`, `p99_9_ns`, …), so the
/// default list gives the same fields as before it was configurable.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Percentiles(pub Vec<PercentileValue>);

impl Percentiles {
    /// The value at percentile `p`, if `p` is in the list.
    pub fn get(&self, p: f64) -> Option<u64> {
        self.0.iter().find(|v| v.percentile == p).map(|v| v.ns)
    }

    /// The percentiles, in order.
    pub fn iter(&self) -> impl Iterator<Item = &PercentileValue> {
        self.0.iter()
    }
}

impl Serialize for Percentiles {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for v in &self.0 {
            m.serialize_entry(&percentile_key(v.percentile), &v.ns)?;
        }
        m.end()
    }
}

/// The JSON pattern of a percentile field ([`percentile_key`]).
pub const PERCENTILE_KEY_PATTERN: &str = "^p[0-9]+(_[0-9]+)?_ns$";

impl schemars::JsonSchema for Percentiles {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Percentiles".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "Percentiles in ns, one field per value of `stats.percentiles`: `p<P>_ns` with the \
                            percentile's decimal point written `_` (p50_ns, p99_9_ns, p99_999_ns). HDR-histogram \
                            values (3 significant digits: at most 0.1 % above the true sample), clamped to \
                            [min_ns, max_ns].",
            "type": "object",
            "patternProperties": {
                PERCENTILE_KEY_PATTERN: { "type": "integer", "format": "uint64", "minimum": 0 }
            }
        })
    }

    fn inline_schema() -> bool {
        true
    }
}

/// Summary of a latency distribution (values in ns; count, mean, min and max are exact;
/// the percentiles are those of `stats.percentiles`, one field `p<P>_ns` each with the
/// decimal point written `_` (`p50_ns`, `p99_9_ns`), HDR-histogram values with 3
/// significant digits: at most 1/1024 above the sample, clamped to [min, max]).
#[derive(Clone, Debug, Serialize, PartialEq, schemars::JsonSchema)]
pub struct LatencySummary {
    /// Number of requests.
    pub count: u64,
    /// Exact mean in ns.
    pub mean_ns: f64,
    /// Minimum.
    pub min_ns: u64,
    /// The configured percentiles (`p50_ns` … `p99_999_ns` by default).
    #[serde(flatten)]
    pub percentiles: Percentiles,
    /// Maximum.
    pub max_ns: u64,
}

impl LatencySummary {
    /// The value at percentile `p`, if the summary has it.
    pub fn percentile(&self, p: f64) -> Option<u64> {
        self.percentiles.get(p)
    }
}

/// Request-level statistics collected during a run.
///
/// The per-request part (histograms, bytes, attribution) may be recorded on a second
/// thread while [`crate::Simulation::run`] replays a trace ([`crate::StatsThreadMode`],
/// `stats_thread.rs`); it is back here, complete, whenever the simulation can be read.
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
    /// Latency attribution of reads and writes (allocated by the first
    /// [`RequestStats::complete_attributed`]; `None` while no request was attributed).
    attribution: Option<Box<[AttributionHists; 2]>>,
    /// Where completions are recorded: here, or on the statistics thread.
    pub(crate) sink: crate::stats_thread::Sink,
}

/// What recording one completed read or write needs ([`RequestStats::record`]): the
/// simulation copies it into a batch for the statistics thread instead of recording it
/// (`stats_thread.rs`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Completed {
    /// Response time.
    pub(crate) response: Nanos,
    /// Queue wait.
    pub(crate) wait: Nanos,
    /// Bytes transferred.
    pub(crate) bytes: u64,
    /// Where the response time went (if [`Completed::ATTRIBUTED`]).
    pub(crate) attr: Attribution,
    /// Host-interface time (if [`Completed::HIF`]).
    pub(crate) hif: Nanos,
    /// [`Completed::READ`], [`Completed::ATTRIBUTED`], [`Completed::HIF`].
    pub(crate) flags: u8,
}

impl Completed {
    /// A read (else a write).
    pub(crate) const READ: u8 = 1;
    /// Its latency is attributed (`attr`).
    pub(crate) const ATTRIBUTED: u8 = 2;
    /// It went through the host interface (`hif`).
    pub(crate) const HIF: u8 = 4;
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

    /// Record a completed request whose latency is not attributed to its causes (the
    /// report's `latency_attribution` counts only [`RequestStats::complete_attributed`]).
    #[inline]
    pub fn complete(&mut self, is_read: bool, bytes: u64, arrival: SimTime, done: SimTime, wait: Nanos) {
        let flags = if is_read { Completed::READ } else { 0 };
        let c = Completed { response: done.since(arrival), wait, bytes, flags, ..Completed::default() };
        self.completed(done, c);
    }

    /// Record a completed request ([`RequestStats::complete`]) and where its response
    /// time went ([`Attribution`]). For a request that went through the host interface
    /// (`host_interface` is `Some`), its response time counts from its host arrival, `a`
    /// is the device's attribution (plus its wait for a queue entry in `queue_wait`) and
    /// `host_interface` its time on the link, in the SATA HBA and waiting for a fetch
    /// slot.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn complete_attributed(
        &mut self,
        is_read: bool,
        bytes: u64,
        arrival: SimTime,
        done: SimTime,
        wait: Nanos,
        a: &Attribution,
        host_interface: Option<Nanos>,
    ) {
        let mut flags = Completed::ATTRIBUTED | if is_read { Completed::READ } else { 0 };
        if host_interface.is_some() {
            flags |= Completed::HIF;
        }
        let hif = host_interface.unwrap_or_default();
        let c = Completed { response: done.since(arrival), wait, bytes, attr: *a, hif, flags };
        self.completed(done, c);
    }

    /// A request completed at `done`: note the time here, record the rest here or send
    /// it to the statistics thread.
    #[inline]
    fn completed(&mut self, done: SimTime, c: Completed) {
        if done > self.last_completion {
            self.last_completion = done;
        }
        if let Some(t) = self.sink.thread.as_mut() {
            t.push(c);
            return;
        }
        self.record(&c);
        if self.sink.wants_thread() {
            crate::stats_thread::start(self);
        }
    }

    /// Record one completion into the histograms, byte counts and attribution (the
    /// same code inline and on the statistics thread, in the same order). Always
    /// inlined: the inline path then builds no record in memory.
    #[inline(always)]
    pub(crate) fn record(&mut self, c: &Completed) {
        if c.flags & Completed::READ != 0 {
            self.read.record(c.response);
            self.read_wait.record(c.wait);
            self.read_bytes += c.bytes;
        } else {
            self.write.record(c.response);
            self.write_wait.record(c.wait);
            self.write_bytes += c.bytes;
        }
        if c.flags & Completed::ATTRIBUTED != 0 {
            let class = &mut self.attribution.get_or_insert_with(Default::default)
                [usize::from(c.flags & Completed::READ == 0)];
            if c.flags & Completed::HIF == 0 {
                class.record(c.response, &c.attr);
            } else {
                class.record_hif(c.response, &c.attr, c.hif);
            }
        }
    }

    /// Move the recorded part (histograms, byte counts, attribution) out, leaving it
    /// empty here (for the statistics thread).
    pub(crate) fn take_recorded(&mut self) -> RequestStats {
        RequestStats {
            read: std::mem::take(&mut self.read),
            write: std::mem::take(&mut self.write),
            read_wait: std::mem::take(&mut self.read_wait),
            write_wait: std::mem::take(&mut self.write_wait),
            read_bytes: std::mem::take(&mut self.read_bytes),
            write_bytes: std::mem::take(&mut self.write_bytes),
            trims: 0,
            first_arrival: None,
            last_completion: SimTime::ZERO,
            attribution: self.attribution.take(),
            sink: crate::stats_thread::Sink::default(),
        }
    }

    /// Put back what [`RequestStats::take_recorded`] took (and the thread recorded).
    pub(crate) fn put_recorded(&mut self, r: RequestStats) {
        self.read = r.read;
        self.write = r.write;
        self.read_wait = r.read_wait;
        self.write_wait = r.write_wait;
        self.read_bytes = r.read_bytes;
        self.write_bytes = r.write_bytes;
        self.attribution = r.attribution;
    }

    /// Latency attribution of the run, or `None` if no request was attributed.
    pub fn attribution(&self) -> Option<LatencyAttribution> {
        self.attribution.as_ref().map(|c| LatencyAttribution { read: c[0].summary(), write: c[1].summary() })
    }
}

/// Where one request's response time went, as the controller saw its critical
/// sub-request (the one that completed last). All durations; the components other
/// than `gc_blocked` add up to at most the response time, and the report shows the
/// rest as `unattributed`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Attribution {
    /// From the request's arrival to the issue of its critical sub-request's flash
    /// command: host queue, die queue and scheduler wait together.
    pub queue_wait: Nanos,
    /// From the issue of the command until the device started it: the channel bus or
    /// the die was still busy with other work.
    pub device_wait: Nanos,
    /// Channel time of the command: its command, address and data cycles on the bus.
    pub transfer: Nanos,
    /// Array time of the command (tR, tPROG or tBERS of the page it touched).
    pub array: Nanos,
    /// The part of `queue_wait` during which the die of the critical sub-request was
    /// executing GC work (GC reads, programs, copybacks or erases). Not added to the
    /// other components: it is contained in `queue_wait`.
    pub gc_blocked: Nanos,
    /// Time added to this request's program by reads that suspended it.
    pub suspension: Nanos,
    /// Controller DRAM time (buffered writes, buffer read hits, reads served from a
    /// queued write's data).
    pub dram: Nanos,
    /// The FTL's translation step before the command: a cached mapping's
    /// translation-page read on a miss (reads and writes), NFTL's spare-area reads —
    /// from their issue to the last one's completion. Not in `queue_wait`.
    pub translation: Nanos,
}

impl Attribution {
    /// The attributed part of the response time: every component but `gc_blocked`
    /// (which is part of `queue_wait`).
    pub fn attributed(&self) -> Nanos {
        Nanos(
            self.queue_wait.0
                + self.device_wait.0
                + self.transfer.0
                + self.array.0
                + self.suspension.0
                + self.dram.0
                + self.translation.0,
        )
    }
}

/// A high-dynamic-range (log-linear) histogram of one attribution component: exact count, sum and maximum;
/// percentiles to within 1/1024 of the value, about the 3 significant digits of the
/// HDR histograms (buckets of width 1 ns below 2048 ns, then 1024 per power of two). Recording is a shift and an add — every request records
/// up to eight components, so an HDR histogram per component would cost more than the
/// rest of the statistics together.
#[derive(Default)]
struct ComponentHist {
    /// Samples per bucket ([`ComponentHist::bucket`]), grown on demand.
    counts: Vec<u64>,
    n: u64,
    sum: u128,
    max: u64,
}

/// Mantissa bits of a [`ComponentHist`] bucket.
const COMPONENT_SUB_BITS: u32 = 10;

impl ComponentHist {
    #[inline]
    fn bucket(v: u64) -> usize {
        let sub = 1u64 << COMPONENT_SUB_BITS;
        if v < sub {
            return v as usize;
        }
        let shift = 63 - v.leading_zeros() - COMPONENT_SUB_BITS;
        ((u64::from(shift + 1) << COMPONENT_SUB_BITS) | ((v >> shift) & (sub - 1))) as usize
    }

    /// The largest value of bucket `b`.
    fn highest(b: usize) -> u64 {
        let sub = 1u64 << COMPONENT_SUB_BITS;
        let (hi, m) = ((b as u64) >> COMPONENT_SUB_BITS, b as u64 & (sub - 1));
        if hi == 0 {
            return m;
        }
        let shift = hi - 1;
        ((sub | m) << shift) + ((1u64 << shift) - 1)
    }

    #[inline]
    fn record(&mut self, v: u64) {
        let b = Self::bucket(v);
        if b >= self.counts.len() {
            self.counts.resize(b + 1, 0);
        }
        self.counts[b] += 1;
        self.n += 1;
        self.sum += u128::from(v);
        self.max = self.max.max(v);
    }

    /// Mean, 99th percentile and maximum, counting `zeros` more samples of 0.
    fn summary(&self, zeros: u64) -> ComponentSummary {
        let total = self.n + zeros;
        if total == 0 {
            return ComponentSummary::default();
        }
        let rank = ((0.99 * total as f64).ceil() as u64).max(1);
        let p99 = if rank <= zeros {
            0
        } else {
            let mut left = rank - zeros;
            let mut v = self.max;
            for (b, &c) in self.counts.iter().enumerate() {
                if c >= left {
                    v = Self::highest(b);
                    break;
                }
                left -= c;
            }
            v.min(self.max)
        };
        ComponentSummary { mean_ns: self.sum as f64 / total as f64, p99_ns: p99, max_ns: self.max }
    }
}

/// The components of [`Attribution`] in report order, then `unattributed`.
const COMPONENTS: usize = 8;

/// Histograms of one request class's [`Attribution`] components.
#[derive(Default)]
struct AttributionHists {
    /// queue_wait, gc_blocked, device_wait, transfer, array, suspension, dram,
    /// unattributed.
    parts: [ComponentHist; COMPONENTS],
    /// Zero samples of each part, not in its histogram: most components of most
    /// requests are 0 (no GC, no suspension, no DRAM).
    zeros: [u64; COMPONENTS],
    /// Requests whose components add up to more than their response time.
    over_attributed: u64,
    /// Host-interface time (recorded only with the interface on; `hif_zeros` counts
    /// its zero samples).
    host_interface: ComponentHist,
    hif_zeros: u64,
    /// Translation time (its zero samples in `translation_zeros`).
    translation: ComponentHist,
    translation_zeros: u64,
}

impl AttributionHists {
    #[inline]
    fn record(&mut self, response: Nanos, a: &Attribution) {
        self.record_parts(response, a, Nanos(0));
    }

    /// [`AttributionHists::record`] for a request with `hif` of host-interface time.
    fn record_hif(&mut self, response: Nanos, a: &Attribution, hif: Nanos) {
        if hif.0 == 0 {
            self.hif_zeros += 1;
        } else {
            self.host_interface.record(hif.0);
        }
        self.record_parts(response, a, hif);
    }

    #[inline]
    fn record_parts(&mut self, response: Nanos, a: &Attribution, hif: Nanos) {
        if a.translation.0 == 0 {
            self.translation_zeros += 1;
        } else {
            self.translation.record(a.translation.0);
        }
        let attributed = a.attributed() + hif;
        self.over_attributed += u64::from(attributed > response);
        let rest = Nanos(response.0.saturating_sub(attributed.0));
        let parts =
            [a.queue_wait, a.gc_blocked, a.device_wait, a.transfer, a.array, a.suspension, a.dram, rest];
        for ((h, z), d) in self.parts.iter_mut().zip(&mut self.zeros).zip(parts) {
            if d.0 == 0 {
                *z += 1;
            } else {
                h.record(d.0);
            }
        }
    }

    fn summary(&self) -> AttributionSummary {
        let c = |i: usize| self.parts[i].summary(self.zeros[i]);
        AttributionSummary {
            count: self.parts[0].n + self.zeros[0],
            queue_wait: c(0),
            gc_blocked: c(1),
            device_wait: c(2),
            transfer: c(3),
            array: c(4),
            suspension: c(5),
            dram: c(6),
            unattributed: c(7),
            over_attributed: self.over_attributed,
            host_interface: (self.host_interface.n + self.hif_zeros > 0)
                .then(|| self.host_interface.summary(self.hif_zeros)),
            translation: (self.translation.n > 0).then(|| self.translation.summary(self.translation_zeros)),
        }
    }
}

/// Mean, 99th percentile and maximum of one latency component, in ns.
#[derive(Clone, Debug, Default, Serialize, PartialEq, schemars::JsonSchema)]
pub struct ComponentSummary {
    /// Exact mean.
    pub mean_ns: f64,
    /// 99th percentile (HDR histogram, 3 significant digits).
    pub p99_ns: u64,
    /// Exact maximum.
    pub max_ns: u64,
}

/// Where the response time of one request class went (see [`Attribution`] for each
/// component's definition).
#[derive(Clone, Debug, Default, Serialize, PartialEq, schemars::JsonSchema)]
pub struct AttributionSummary {
    /// Requests attributed.
    pub count: u64,
    /// Arrival to the issue of the critical sub-request's flash command.
    pub queue_wait: ComponentSummary,
    /// The part of `queue_wait` during which the die was executing GC work.
    pub gc_blocked: ComponentSummary,
    /// Issue to the start of the command (bus or die busy).
    pub device_wait: ComponentSummary,
    /// Channel transfer time of the command.
    pub transfer: ComponentSummary,
    /// Array time of the command.
    pub array: ComponentSummary,
    /// Time added to the request's program by reads suspending it.
    pub suspension: ComponentSummary,
    /// Controller DRAM time.
    pub dram: ComponentSummary,
    /// Response time not covered by the components above (0 when they account for all
    /// of it).
    pub unattributed: ComponentSummary,
    /// Requests whose components added up to more than their response time (their
    /// `unattributed` is recorded as 0); nonzero means the engine double-counts.
    pub over_attributed: u64,
    /// Host-interface time (`[host.interface]`): link transfers of the command, data
    /// and completion, waits for the link and for a fetch slot, SATA HBA processing.
    /// Null when the interface is off.
    pub host_interface: Option<ComponentSummary>,
    /// The FTL's translation reads before the command (a cached mapping's miss, NFTL's
    /// spare-area reads): issue to completion, not part of `queue_wait`. Null when no
    /// request had one.
    pub translation: Option<ComponentSummary>,
}

/// Per-request latency attribution of reads and writes.
#[derive(Clone, Debug, Default, Serialize, PartialEq, schemars::JsonSchema)]
pub struct LatencyAttribution {
    /// Reads.
    pub read: AttributionSummary,
    /// Writes.
    pub write: AttributionSummary,
}

/// The kind of a flash command, for [`OpMix`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpKind {
    /// Page read.
    Read,
    /// Single-operation multi-location read: several partial reads of one plane in one
    /// array access.
    SomlRead,
    /// Page program.
    Program,
    /// Block erase.
    Erase,
    /// Partial-block erase.
    PartialErase,
    /// Copyback (internal page move: read to the page register, program elsewhere).
    CopyBack,
}

impl OpKind {
    /// Every kind, in report order.
    pub const ALL: [OpKind; 6] = [
        OpKind::Read,
        OpKind::SomlRead,
        OpKind::Program,
        OpKind::Erase,
        OpKind::PartialErase,
        OpKind::CopyBack,
    ];

    /// Its name in the report (`soml_read`).
    pub fn name(self) -> &'static str {
        match self {
            OpKind::Read => "read",
            OpKind::SomlRead => "soml_read",
            OpKind::Program => "program",
            OpKind::Erase => "erase",
            OpKind::PartialErase => "partial_erase",
            OpKind::CopyBack => "copy_back",
        }
    }
}

/// The widest multi-plane command [`OpMix`] counts (planes on one die).
pub const MAX_PLANES_PER_OP: usize = 16;

/// Counters of one [`OpKind`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct KindCounts {
    /// Commands by planes touched on one die (index = planes; 0 unused).
    by_planes: [u64; MAX_PLANES_PER_OP + 1],
    /// Commands spanning more than one die.
    multi_die: u64,
    /// Transactions served.
    txns: u64,
}

/// Flash commands by kind and width: what the controller issued. The engine calls
/// [`OpMix::record`] once per command it issues.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OpMix {
    kinds: [KindCounts; OpKind::ALL.len()],
}

impl OpMix {
    /// Count one issued command of `kind` touching `planes` planes on each die
    /// (1 = single-plane; 2, 4 = multi-plane ×2, ×4; at most [`MAX_PLANES_PER_OP`]) on
    /// `dies` dies (more than 1 = a multi-die interleaved batch), serving `txns` host or
    /// GC transactions (for a SOML read: its parts).
    #[inline]
    pub fn record(&mut self, kind: OpKind, planes: u32, dies: u32, txns: u32) {
        assert!(
            (1..=MAX_PLANES_PER_OP as u32).contains(&planes),
            "a {} command on {planes} planes (1..={MAX_PLANES_PER_OP})",
            kind.name()
        );
        assert!(dies >= 1, "a {} command on no die", kind.name());
        let k = &mut self.kinds[kind as usize];
        k.by_planes[planes as usize] += 1;
        k.multi_die += u64::from(dies > 1);
        k.txns += u64::from(txns);
    }

    /// Commands of `kind` issued.
    pub fn ops(&self, kind: OpKind) -> u64 {
        self.kinds[kind as usize].by_planes.iter().sum()
    }

    /// The report section.
    pub fn report(&self) -> FlashOps {
        let of = |k: &KindCounts| OpKindSummary::of(k);
        let mut all = KindCounts::default();
        for k in &self.kinds {
            for (a, b) in all.by_planes.iter_mut().zip(&k.by_planes) {
                *a += b;
            }
            all.multi_die += k.multi_die;
            all.txns += k.txns;
        }
        let k = |kind: OpKind| of(&self.kinds[kind as usize]);
        FlashOps {
            read: k(OpKind::Read),
            soml_read: k(OpKind::SomlRead),
            program: k(OpKind::Program),
            erase: k(OpKind::Erase),
            partial_erase: k(OpKind::PartialErase),
            copy_back: k(OpKind::CopyBack),
            all: of(&all),
        }
    }
}

/// Flash commands of one kind.
#[derive(Clone, Debug, Default, Serialize, PartialEq, schemars::JsonSchema)]
pub struct OpKindSummary {
    /// Commands issued.
    pub ops: u64,
    /// Commands on one plane of a die.
    pub single_plane: u64,
    /// Commands on several planes of a die (multi-plane).
    pub multi_plane: u64,
    /// Commands by planes touched per die: element `n` counts commands on `n` planes
    /// (element 0 is always 0, element 1 = `single_plane`, elements 2.. add up to
    /// `multi_plane`).
    pub ops_by_planes: [u64; MAX_PLANES_PER_OP + 1],
    /// Commands spanning several dies (multi-die interleaved batches).
    pub multi_die: u64,
    /// Transactions the commands served (for `soml_read`: the partial reads combined).
    pub transactions: u64,
    /// Mean transactions per command (0 without commands).
    pub txns_per_op: f64,
}

impl OpKindSummary {
    fn of(k: &KindCounts) -> OpKindSummary {
        let ops: u64 = k.by_planes.iter().sum();
        OpKindSummary {
            ops,
            single_plane: k.by_planes[1],
            multi_plane: ops - k.by_planes[1],
            ops_by_planes: k.by_planes,
            multi_die: k.multi_die,
            transactions: k.txns,
            txns_per_op: if ops == 0 { 0.0 } else { k.txns as f64 / ops as f64 },
        }
    }
}

/// Flash commands the controller issued, by kind and width.
#[derive(Clone, Debug, Default, Serialize, PartialEq, schemars::JsonSchema)]
pub struct FlashOps {
    /// Page reads.
    pub read: OpKindSummary,
    /// SOML reads (their `transactions` are the partial reads they combined).
    pub soml_read: OpKindSummary,
    /// Page programs.
    pub program: OpKindSummary,
    /// Block erases.
    pub erase: OpKindSummary,
    /// Partial-block erases.
    pub partial_erase: OpKindSummary,
    /// Copybacks.
    pub copy_back: OpKindSummary,
    /// All kinds together.
    pub all: OpKindSummary,
}

impl FlashOps {
    /// The kinds with their names, in report order (without `all`).
    pub fn kinds(&self) -> [(&'static str, &OpKindSummary); 6] {
        [
            ("read", &self.read),
            ("soml read", &self.soml_read),
            ("program", &self.program),
            ("erase", &self.erase),
            ("partial erase", &self.partial_erase),
            ("copyback", &self.copy_back),
        ]
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

    /// The report's compact histograms decode to the very distribution recorded
    /// (issue #10 item 1), and equal histograms encode to equal text.
    #[test]
    fn encoded_histograms_round_trip() {
        let mut h = LatencyHist::default();
        for (ns, n) in [(0, 3), (1_234, 10), (78_000, 500), (1_300_000, 7), (9_000_000_000_000, 1)] {
            h.record_n(Nanos(ns), n);
        }
        let text = h.encoded();
        assert!(text.len() < 400, "compact: {} bytes", text.len());
        let back = decode_histogram(&text).unwrap();
        assert_eq!(back.len(), 521);
        for p in [1.0, 50.0, 99.0, 99.9, 100.0] {
            assert_eq!(back.value_at_quantile(p / 100.0), h.hist.value_at_quantile(p / 100.0), "p{p}");
        }
        assert_eq!(back.max(), h.hist.max());
        let mut again = LatencyHist::default();
        for (ns, n) in [(0, 3), (1_234, 10), (78_000, 500), (1_300_000, 7), (9_000_000_000_000, 1)] {
            again.record_n(Nanos(ns), n);
        }
        assert_eq!(again.encoded(), text);
        assert!(decode_histogram("not base64!").unwrap_err().contains("not base64"));
        assert!(decode_histogram("aGVsbG8=").unwrap_err().contains("not an HdrHistogram"));
    }

    #[test]
    fn component_buckets_cover_every_value_once() {
        // Each bucket's highest value is the last value mapping to it, and the next
        // value starts the next bucket: no gaps, no overlaps, width ≤ value/1024.
        let mut probes: Vec<u64> = (0..8192).collect();
        for e in 13..64 {
            let p = 1u64 << e;
            probes.extend([p - 1, p, p + 1, p + p / 3]);
        }
        probes.push(u64::MAX);
        for v in probes {
            let b = ComponentHist::bucket(v);
            let hi = ComponentHist::highest(b);
            assert!(hi >= v, "v {v} above its bucket's highest {hi}");
            assert_eq!(ComponentHist::bucket(hi), b, "highest of bucket {b} maps elsewhere");
            if hi < u64::MAX {
                assert_eq!(ComponentHist::bucket(hi + 1), b + 1, "gap after bucket {b}");
            }
            assert!(hi - v <= v / 1024, "bucket of {v} too wide: highest {hi}");
        }
    }

    proptest::proptest! {
        #[test]
        fn component_p99_is_within_one_1024th(samples in proptest::collection::vec(0u64..50_000_000, 1..400), zeros in 0u64..50) {
            let mut h = ComponentHist::default();
            for &v in samples.iter().filter(|&&v| v > 0) {
                h.record(v);
            }
            let zeros = zeros + samples.iter().filter(|&&v| v == 0).count() as u64;
            let mut all: Vec<u64> = samples.iter().copied().filter(|&v| v > 0).collect();
            all.extend(std::iter::repeat_n(0, zeros as usize));
            all.sort_unstable();
            let s = h.summary(zeros);
            let rank = ((0.99 * all.len() as f64).ceil() as usize).max(1);
            let exact = all[rank - 1];
            proptest::prop_assert!(s.p99_ns >= exact && s.p99_ns - exact <= exact / 1024, "p99 {} vs exact {exact}", s.p99_ns);
            proptest::prop_assert_eq!(s.max_ns, *all.last().unwrap());
            let mean = all.iter().map(|&v| v as f64).sum::<f64>() / all.len() as f64;
            proptest::prop_assert!((s.mean_ns - mean).abs() <= mean * 1e-12 + 1e-9);
        }
    }

    #[test]
    fn summary_of_known_samples() {
        let mut h = LatencyHist::default();
        for v in 1..=1000u64 {
            h.record(Nanos(v * 1000));
        }
        let s = h.summary();
        assert_eq!(s.count, 1000);
        assert_eq!(s.mean_ns, 500_500.0);
        let p = |q: f64| s.percentile(q).unwrap() as i64;
        assert!((p(50.0) - 500_000).abs() <= 500, "{}", p(50.0));
        assert!((p(99.0) - 990_000).abs() <= 1000, "{}", p(99.0));
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
        assert!(s.percentile(50.0).unwrap() >= s.min_ns && s.percentile(99.999).unwrap() <= s.max_ns);
        let mut z = LatencyHist::default();
        z.record(Nanos(0));
        z.record(Nanos(0));
        let s = z.summary();
        assert_eq!(
            (s.min_ns, s.percentile(50.0), s.percentile(99.0), s.max_ns, s.mean_ns),
            (0, Some(0), Some(0), 0, 0.0)
        );
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

    #[test]
    fn percentile_lists_are_checked() {
        assert!(check_percentiles(&DEFAULT_PERCENTILES).is_ok());
        assert!(check_percentiles(&[95.0, 97.0, 98.0, 99.0, 99.5, 99.9, 99.99, 99.999, 100.0]).is_ok());
        for (bad, says) in [
            (vec![], "empty"),
            (vec![0.0], "(0, 100]"),
            (vec![-1.0], "(0, 100]"),
            (vec![100.5], "(0, 100]"),
            (vec![f64::NAN], "(0, 100]"),
            (vec![f64::INFINITY], "(0, 100]"),
            (vec![99.0, 95.0], "strictly increasing"),
            (vec![99.0, 99.0], "strictly increasing"),
        ] {
            let e = check_percentiles(&bad).unwrap_err();
            assert!(e.contains(says), "{bad:?}: {e}");
        }
    }

    #[test]
    fn quantiles_are_exact_decimals_and_keys_name_the_percentile() {
        // The literals the report used before the list was configurable: the same
        // quantiles give the same (golden) percentiles.
        for (p, q) in [(50.0, 0.5), (90.0, 0.9), (95.0, 0.95), (99.0, 0.99), (99.9, 0.999), (99.99, 0.9999)] {
            assert_eq!(quantile_of(p), q, "{p}");
        }
        assert_eq!(quantile_of(99.999), 0.99999);
        assert_eq!(quantile_of(100.0), 1.0);
        assert_eq!(quantile_of(0.001), 0.00001);
        assert_ne!(99.9 / 100.0, 0.999, "the naive division is off by one bit");
        assert_eq!(
            [50.0, 99.5, 99.999, 100.0, 0.5].map(percentile_key),
            ["p50_ns", "p99_5_ns", "p99_999_ns", "p100_ns", "p0_5_ns"]
        );
        assert_eq!(percentile_label(99.99), "p99.99");
        for p in [50.0, 99.5, 99.999, 100.0, 0.5] {
            assert_eq!(percentile_of_key(&percentile_key(p)), Some(p));
        }
        for not in ["p_ns", "p99_ns_", "p99__5_ns", "p9a_ns", "mean_ns", "p99_5_6_ns", "p99.5_ns"] {
            assert_eq!(percentile_of_key(not), None, "{not}");
        }
    }

    #[test]
    fn configured_percentiles_of_a_hand_built_histogram() {
        // 1 .. 1000 ns: HDR buckets are exact below 2048, so every percentile is exact.
        let mut h = LatencyHist::default();
        for v in 1..=1000u64 {
            h.record(Nanos(v));
        }
        let list = [95.0, 97.0, 98.0, 99.0, 99.5, 99.9, 99.99, 99.999, 100.0];
        let s = h.summary_at(&list);
        let got: Vec<u64> = s.percentiles.iter().map(|v| v.ns).collect();
        // ceil(q × 1000)-th sample.
        assert_eq!(got, [950, 970, 980, 990, 995, 999, 1000, 1000, 1000]);
        let json = serde_json::to_string(&s).unwrap();
        assert_eq!(
            json,
            "{\"count\":1000,\"mean_ns\":500.5,\"min_ns\":1,\"p95_ns\":950,\"p97_ns\":970,\"p98_ns\":980,\
             \"p99_ns\":990,\"p99_5_ns\":995,\"p99_9_ns\":999,\"p99_99_ns\":1000,\"p99_999_ns\":1000,\
             \"p100_ns\":1000,\"max_ns\":1000}"
        );
        // The default list gives exactly the fields of schema v2, in its order.
        let json = serde_json::to_string(&h.summary()).unwrap();
        let keys: Vec<&str> = json.split('"').skip(1).step_by(2).collect();
        assert_eq!(
            keys,
            [
                "count",
                "mean_ns",
                "min_ns",
                "p50_ns",
                "p90_ns",
                "p95_ns",
                "p99_ns",
                "p99_9_ns",
                "p99_99_ns",
                "p99_999_ns",
                "max_ns"
            ]
        );
        // Above 2048 ns a value lands in a bucket at most 1/1024 of it wide: p99.999 of
        // 100 ns .. 10 ms is within 0.1 % of the 99,999th sample.
        let mut big = LatencyHist::default();
        for v in 1..=100_000u64 {
            big.record(Nanos(v * 100));
        }
        let p = big.percentile(99.999);
        assert!((9_999_900..=9_999_900 + 9_999_900 / 1024).contains(&p), "{p}");
        // With 10^5 samples p99.999 is the second-largest sample, not the maximum.
        let mut tail = LatencyHist::default();
        for _ in 0..99_999 {
            tail.record(Nanos(1_000_000));
        }
        tail.record(Nanos(100_000_000));
        let p = tail.percentile(99.999);
        assert!((1_000_000..=1_000_000 + 1_000_000 / 1024).contains(&p), "{p}");
        assert_eq!(tail.percentile(100.0), 100_000_000);
    }

    #[test]
    fn op_mix_counts_by_kind_width_and_dies() {
        let mut m = OpMix::default();
        m.record(OpKind::Read, 1, 1, 1);
        m.record(OpKind::Read, 2, 1, 2);
        m.record(OpKind::Read, 2, 2, 4);
        m.record(OpKind::Program, 4, 1, 4);
        m.record(OpKind::Program, 16, 1, 16);
        m.record(OpKind::SomlRead, 1, 1, 4);
        m.record(OpKind::Erase, 1, 1, 0);
        let r = m.report();
        assert_eq!((r.read.ops, r.read.single_plane, r.read.multi_plane, r.read.multi_die), (3, 1, 2, 1));
        assert_eq!(r.read.ops_by_planes[..3], [0, 1, 2]);
        assert_eq!((r.read.transactions, r.read.txns_per_op), (7, 7.0 / 3.0));
        assert_eq!((r.program.ops, r.program.single_plane, r.program.multi_plane), (2, 0, 2));
        assert_eq!((r.program.ops_by_planes[4], r.program.ops_by_planes[16]), (1, 1));
        assert_eq!((r.soml_read.ops, r.soml_read.transactions, r.soml_read.txns_per_op), (1, 4, 4.0));
        assert_eq!((r.erase.ops, r.erase.txns_per_op), (1, 0.0));
        assert_eq!((r.copy_back.ops, r.copy_back.txns_per_op, r.partial_erase.ops), (0, 0.0, 0));
        assert_eq!((r.all.ops, r.all.single_plane, r.all.multi_plane, r.all.multi_die), (7, 3, 4, 1));
        assert_eq!((r.all.transactions, r.all.txns_per_op), (31, 31.0 / 7.0));
        assert_eq!(m.ops(OpKind::Program), 2);
        // The JSON names every kind.
        let v = serde_json::to_value(&r).unwrap();
        for k in OpKind::ALL {
            assert!(v[k.name()].is_object(), "{}", k.name());
        }
    }

    #[test]
    #[should_panic(expected = "17 planes")]
    fn op_mix_refuses_a_width_beyond_sixteen_planes() {
        OpMix::default().record(OpKind::Program, 17, 1, 17);
    }

    #[test]
    fn attribution_means_p99_and_the_unattributed_rest() {
        let mut st = RequestStats::default();
        st.complete(true, 4096, SimTime(0), SimTime(10), Nanos(0));
        assert!(st.attribution().is_none(), "plain completions are not attributed");
        let us = |v: u64| Nanos(v * 1000);
        // 100 reads of 100 us: 10 queue (4 of it behind GC), 5 device wait, 20 transfer,
        // 60 array, 5 unattributed; one of them also 50 us of suspension (150 us).
        for i in 0..100u64 {
            let a = Attribution {
                queue_wait: us(10),
                gc_blocked: us(4),
                device_wait: us(5),
                transfer: us(20),
                array: us(60),
                suspension: if i == 99 { us(50) } else { Nanos(0) },
                dram: Nanos(0),
                translation: Nanos(0),
            };
            let rt = if i == 99 { 150_000 } else { 100_000 };
            st.complete_attributed(true, 4096, SimTime(i * 1000), SimTime(i * 1000 + rt), us(10), &a, None);
        }
        // A write over-attributed: 30 us of components in a 20 us response.
        let w = Attribution { dram: us(30), ..Attribution::default() };
        st.complete_attributed(false, 4096, SimTime(0), SimTime(20_000), Nanos(0), &w, None);
        let a = st.attribution().unwrap();
        assert_eq!((a.read.count, a.write.count), (100, 1));
        assert_eq!(st.read.count(), 101, "the response times count every read");
        assert_eq!(a.read.queue_wait.mean_ns, 10_000.0);
        assert_eq!(a.read.gc_blocked.mean_ns, 4_000.0);
        assert_eq!(a.read.array.p99_ns, 60_000);
        assert_eq!(a.read.unattributed.mean_ns, 5_000.0);
        assert_eq!(
            (a.read.suspension.mean_ns, a.read.suspension.p99_ns, a.read.suspension.max_ns),
            (500.0, 0, 50_000)
        );
        assert_eq!(a.read.over_attributed, 0);
        assert_eq!(
            (a.write.dram.mean_ns, a.write.unattributed.max_ns, a.write.over_attributed),
            (30_000.0, 0, 1)
        );
    }
}
