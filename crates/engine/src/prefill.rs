//! The prefill pass of `host.unwritten_reads = "prefill"`: write (untimed) every logical
//! page the trace reads before it writes it, so those reads hit flash (SSDsim's
//! pre-processing).
//!
//! The pass has two halves that share nothing but the order of the pages:
//!
//! * [`FirstReads`] finds the pages: it walks the trace's requests page by page and keeps
//!   one "seen" bit per logical page; a page whose first touch is a read is a
//!   *candidate*. It needs only the trace, so [`Simulation::prefill_streamed`] runs it,
//!   and the parsing of the trace, on a thread of its own and streams the candidates, in
//!   order, through a bounded channel.
//! * [`Simulation::write_candidates`] writes them on the simulation's thread, where the
//!   FTL lives: a candidate is written unless the FTL already maps it (preconditioning,
//!   or a replica written earlier in the pass), and its replica after it
//!   (`ftl.replication`).
//!
//! The pages written, and their order, are those of the single loop this replaced (a
//! property test replays that loop as the reference). The simulation's thread no longer
//! walks the trace; on an FTL that started empty it skips the lookups that cannot answer
//! "mapped" (see [`Candidates`]); and it loads the forward-map entries of the upcoming
//! windows of candidates before writing them, in stages of prefetches
//! ([`Simulation::warm_ahead`]), so that their cache misses overlap the writes. On the
//! 1 M-request MQSim comparison run this halved the pass's time on the simulation's
//! thread (docs/performance.md).

use std::sync::mpsc::{Receiver, sync_channel};

use lamina_ftl::Lpn;
use lamina_nand_model::PlaneId;

use crate::sim::Simulation;
use crate::sim::pages::{PageMath, wrap};
use crate::table::{LpnBits, LpnTable};
use crate::trace::{IoOp, IoRequest, TraceError};

/// Candidates per message from the finder thread (a request of many pages may split).
const FEED_BATCH: usize = 4096;
/// Messages in flight: bounded memory (`FEED_BATCH * FEED_DEPTH * 8 B` = 1 MiB). Deep
/// enough that the finder, the slower half, need not stop while the writing half works
/// through a slow stretch (the first touches of fresh memory come in bursts): with 4
/// messages it slept 21 times, 17 ms of a 95 ms pass, on a full channel while the
/// simulation's thread slept 52 ms on an empty one (`sched:sched_switch`,
/// docs/performance.md, twelfth session).
const FEED_DEPTH: usize = 32;
/// Requests parsed before their pages are marked (see [`find_candidates`]).
const GROUP: usize = 64;
/// Candidates whose forward-map entries are read ahead together before they are written.
const WARM_WINDOW: usize = 32;

/// Finds the prefill's candidates: the logical pages whose first touch in the trace is a
/// read, in the order of that touch (requests in trace order, pages in address order).
/// Addresses wrap at the simulation's logical pages, as the replay's do. Memory is one
/// bit per touched logical page.
struct FirstReads {
    seen: LpnBits,
    logical_pages: u64,
    /// Byte offsets to pages without a division (every preset's page size is a power
    /// of two): four 64-bit divisions per request were on this thread's critical path.
    math: PageMath,
}

impl FirstReads {
    /// A finder for a device of `logical_pages` pages of `page_bytes` bytes.
    fn new(logical_pages: u64, page_bytes: u64) -> Self {
        FirstReads { seen: LpnBits::new(logical_pages), logical_pages, math: PageMath::new(page_bytes) }
    }

    /// The first and last page `r` touches, before wrapping.
    #[inline]
    fn pages(&self, r: &IoRequest) -> (u64, u64) {
        self.math.pages(r)
    }

    /// Start loading the bit of each request's first page (a speed hint with no wait:
    /// the group's bits arrive while the next group is parsed, and the marking then
    /// hits).
    #[inline]
    fn prefetch(&self, group: &[IoRequest]) {
        for r in group {
            self.seen.prefetch(wrap(self.math.page_of(r.offset_bytes), self.logical_pages));
        }
    }

    /// Mark pages `first..=last` (before wrapping) seen; append those that are
    /// candidates (if `read`: those not seen before) to `out`, in page order. A range
    /// that does not wrap (the common case) is marked a word of 64 pages at a time: one
    /// load and one store per word, where page by page each page's update of the word
    /// waited for the previous page's store.
    #[inline]
    fn push(&mut self, first: u64, last: u64, read: bool, out: &mut Vec<u64>) {
        if last < self.logical_pages {
            let mut a = first;
            loop {
                let b = last.min(a | 63);
                let mut fresh = self.seen.insert_in_word(a, b);
                if read {
                    let base = a & !63;
                    while fresh != 0 {
                        out.push(base + u64::from(fresh.trailing_zeros()));
                        fresh &= fresh - 1;
                    }
                }
                if b == last {
                    return;
                }
                a = b + 1;
            }
        }
        self.push_wrapping(first, last, read, out);
    }

    /// [`FirstReads::push`] of a range that reaches past the logical pages, page by page
    /// (branch-free in the bit test, so the bit set's cache misses of consecutive pages
    /// overlap instead of each waiting behind a mispredicted branch).
    #[cold]
    fn push_wrapping(&mut self, first: u64, last: u64, read: bool, out: &mut Vec<u64>) {
        let start = out.len();
        out.resize(start + (last - first + 1) as usize, 0);
        let mut n = start;
        for lpn in first..=last {
            let lpn = wrap(lpn, self.logical_pages);
            out[n] = lpn;
            n += (self.seen.insert(lpn) & read) as usize;
        }
        out.truncate(n);
    }
}

/// What the finder thread sends.
enum Feed {
    Lpns(Vec<u64>),
    Error(TraceError),
}

/// The state of the writing half across batches.
struct Candidates {
    /// True while no candidate can be mapped when its turn comes, so its lookup is
    /// skipped: the FTL held no valid page when the pass began (nothing preconditioned),
    /// and every page the pass has written since is either a candidate (each is one
    /// only once) or a replica the trace cannot address (≥ the simulation's logical
    /// pages). Cleared for good by the first replica below that bound; from then on every
    /// candidate is looked up, as the loop this replaced always did.
    unmapped: bool,
    /// Untimed page writes so far (candidates and replicas).
    written: u64,
    versions: Option<LpnTable<u32>>,
    /// The FTL writes runs of unmapped pages ([`lamina_ftl::Ftl::write_unmapped_run`]);
    /// cleared for good at its first `None`.
    runs: bool,
    /// Scratch: the pages of a run.
    ppas: Vec<lamina_nand_model::Ppa>,
}

impl Simulation {
    /// SSDsim-style pre-processing: write (untimed) every logical page the trace reads
    /// before it writes it, so those reads hit flash. Streams the trace once on this
    /// thread; memory is one bit per touched logical page. Returns the pages written
    /// (replicas included). An `Err` from the trace ends the pass after the pages of
    /// the requests before it were written.
    pub fn prefill<I>(&mut self, trace: I) -> Result<u64, TraceError>
    where
        I: Iterator<Item = Result<IoRequest, TraceError>>,
    {
        let (lp, ps) = (self.logical_pages(), self.geo.page_size_bytes() as u64);
        let mut state = self.begin_candidates();
        let result = find_candidates(trace, lp, ps, |lpns| {
            self.write_candidates(lpns, &mut state);
            lpns.clear();
            true
        });
        self.end_candidates(state, result)
    }

    /// [`Simulation::prefill`] with the candidates found on a thread of their own (the
    /// trace walk and its "seen" bits run beside this thread's FTL writes); same pages,
    /// same order, same result. Memory stays bounded: the finder runs at most
    /// `FEED_DEPTH` batches ahead.
    pub fn prefill_streamed<I>(&mut self, trace: I) -> Result<u64, TraceError>
    where
        I: Iterator<Item = Result<IoRequest, TraceError>> + Send + 'static,
    {
        let (rx, finder) = spawn_finder(trace, self.logical_pages(), self.geo.page_size_bytes() as u64)?;
        let mut state = self.begin_candidates();
        let mut result = Ok(());
        // The channel closes when the finder is done (or gone: a panic is resumed below).
        for msg in rx.iter() {
            match msg {
                Feed::Lpns(lpns) => self.write_candidates(&lpns, &mut state),
                Feed::Error(e) => result = Err(e),
            }
        }
        if let Err(panic) = finder.join() {
            std::panic::resume_unwind(panic);
        }
        self.end_candidates(state, result)
    }

    fn begin_candidates(&mut self) -> Candidates {
        let empty = (0..self.geo.total_planes()).all(|p| self.ftl.page_counts(PlaneId(p)).valid == 0);
        Candidates {
            unmapped: empty,
            written: 0,
            versions: self.take_versions(),
            runs: true,
            ppas: Vec::with_capacity(WARM_WINDOW),
        }
    }

    fn end_candidates(
        &mut self,
        state: Candidates,
        result: Result<(), TraceError>,
    ) -> Result<u64, TraceError> {
        self.put_versions(state.versions);
        result.map(|()| state.written)
    }

    /// Write the candidates `lpns` (in order) that the FTL does not map yet, each with its
    /// replica, window by window ([`WARM_WINDOW`] candidates), the map entries of the
    /// next two windows loading meanwhile (the staged hints of [`Simulation::warm_ahead`]).
    fn write_candidates(&mut self, lpns: &[u64], state: &mut Candidates) {
        let lp = self.logical_pages();
        let windows = lpns.len().div_ceil(WARM_WINDOW);
        let mut run = [Lpn(0); WARM_WINDOW];
        self.ftl.prefetch_map_first(as_lpns(window_of(lpns, 0), &mut run));
        self.warm_ahead(lpns, 0, state.unmapped);
        for k in 0..windows {
            self.warm_ahead(lpns, k + 1, state.unmapped);
            let window = window_of(lpns, k);
            let mut i = 0;
            while i < window.len() {
                if state.runs && state.unmapped {
                    let n = self.write_run(&window[i..], &mut run, state);
                    if n > 0 {
                        i += n;
                        continue;
                    }
                }
                let lpn = window[i];
                i += 1;
                if !state.unmapped && self.ftl.lookup(Lpn(lpn)).is_some() {
                    continue;
                }
                self.untimed_write(lpn, &mut state.versions);
                state.written += 1;
                if let Some(m) = self.ftl.replica(Lpn(lpn)) {
                    state.unmapped &= m.0 >= lp;
                    self.untimed_write(m.0, &mut state.versions);
                    state.written += 1;
                }
            }
        }
    }

    /// Write a run of the unmapped candidates `lpns` with one
    /// [`lamina_ftl::Ftl::write_unmapped_run`] (what [`Simulation::untimed_write`] of each
    /// would do), program them on the device and collect where the last one leaves its
    /// plane needing it; returns the pages written (0: the first one takes the full path).
    /// Clears `state.runs` for good when the FTL has no such path.
    fn write_run(&mut self, lpns: &[u64], run: &mut [Lpn; WARM_WINDOW], state: &mut Candidates) -> usize {
        let run = as_lpns(lpns, run);
        state.ppas.clear();
        // Called only while `state.unmapped`: no candidate can be mapped, and each is
        // one once, which is what `write_fresh_run` asks of its caller.
        let Some(n) = self.ftl.write_fresh_run(run, &mut state.ppas) else {
            state.runs = false;
            return 0;
        };
        for (&lpn, &ppa) in lpns.iter().zip(&state.ppas) {
            let tag = state.versions.as_mut().map_or(0, |v| crate::sim::bump_version(v, lpn));
            self.device.program_untimed(ppa, tag).expect("untimed program violates flash physics");
        }
        if let Some(&last) = state.ppas.last() {
            // Every page before the last left its plane without need of GC.
            self.untimed_gc(self.geo.plane_of_ppa(last));
        }
        state.written += n as u64;
        n
    }

    /// Speed hints for the windows of `lpns` ahead of window `k - 1`, the one about to be
    /// written: start loading window `k + 1`'s map entries (first level,
    /// [`lamina_ftl::Ftl::prefetch_map_first`]) and window `k`'s second level, which then
    /// arrive while window `k - 1` is written. A window whose candidates may be mapped
    /// also has what the replaced pages' bookkeeping will load read in one batch when it
    /// is next ([`lamina_ftl::Ftl::warm_writes`]); while none can be (`unmapped`), a
    /// write replaces no page and the entries are all it loads.
    fn warm_ahead(&self, lpns: &[u64], k: usize, unmapped: bool) {
        let mut buf = [Lpn(0); WARM_WINDOW];
        self.ftl.prefetch_map_first(as_lpns(window_of(lpns, k + 1), &mut buf));
        self.ftl.prefetch_map_second(as_lpns(window_of(lpns, k), &mut buf));
        if !unmapped && k > 0 {
            self.ftl.warm_writes(as_lpns(window_of(lpns, k - 1), &mut buf));
        }
    }
}

/// Window `k` of `lpns` ([`WARM_WINDOW`] candidates each; empty past the end).
fn window_of(lpns: &[u64], k: usize) -> &[u64] {
    let start = (k * WARM_WINDOW).min(lpns.len());
    &lpns[start..(start + WARM_WINDOW).min(lpns.len())]
}

/// The first [`WARM_WINDOW`] pages of `lpns` as [`Lpn`]s, in `buf`.
fn as_lpns<'a>(lpns: &[u64], buf: &'a mut [Lpn; WARM_WINDOW]) -> &'a [Lpn] {
    let n = lpns.len().min(WARM_WINDOW);
    for (b, &lpn) in buf.iter_mut().zip(&lpns[..n]) {
        *b = Lpn(lpn);
    }
    &buf[..n]
}

/// Walk `trace` with [`FirstReads`], handing the candidates to `sink` in batches of
/// about [`FEED_BATCH`] (in order; the sink empties or replaces the batch). Ends at the
/// trace's end (after a last, possibly empty, batch), at its first error (after the
/// batch of the requests before it) or when `sink` returns false.
fn find_candidates<I>(
    trace: I,
    logical_pages: u64,
    page_bytes: u64,
    mut sink: impl FnMut(&mut Vec<u64>) -> bool,
) -> Result<(), TraceError>
where
    I: Iterator<Item = Result<IoRequest, TraceError>>,
{
    let mut finder = FirstReads::new(logical_pages, page_bytes);
    let mut lpns = Vec::with_capacity(FEED_BATCH);
    // Two groups in turn: the one being parsed and the one being marked.
    let mut group = Vec::with_capacity(GROUP);
    let mut marking: Vec<IoRequest> = Vec::with_capacity(GROUP);
    let mut trace = trace;
    let mut end = Ok(());
    // The trace ended or failed (a short group was parsed): parse no more.
    let mut parsed_all = false;
    loop {
        // Parse a group of requests and start loading their bits, then mark the pages of
        // the group parsed before: the bits' cache misses overlap each other and the
        // parsing instead of stalling the marking (`FirstReads::prefetch`).
        group.clear();
        if !parsed_all {
            for r in trace.by_ref() {
                match r {
                    Ok(r) => group.push(r),
                    Err(e) => {
                        end = Err(e);
                        break;
                    }
                }
                if group.len() == GROUP {
                    break;
                }
            }
            parsed_all = group.len() < GROUP;
        }
        finder.prefetch(&group);
        for r in &marking {
            // A long request is taken a piece at a time, so a batch stays near FEED_BATCH.
            let (mut first, last) = finder.pages(r);
            while first <= last {
                let piece_end = last.min(first.saturating_add(FEED_BATCH as u64 - 1));
                finder.push(first, piece_end, r.op == IoOp::Read, &mut lpns);
                if lpns.len() >= FEED_BATCH && !sink(&mut lpns) {
                    return Ok(());
                }
                first = match piece_end.checked_add(1) {
                    Some(next) if piece_end < last => next,
                    _ => break,
                };
            }
        }
        std::mem::swap(&mut group, &mut marking);
        if parsed_all && marking.is_empty() {
            break;
        }
    }
    sink(&mut lpns);
    end
}

/// Run [`find_candidates`] on a thread named `lamina-prefill`, sending the batches (a
/// trace error after them). The thread stops early when the receiver is dropped.
fn spawn_finder<I>(
    trace: I,
    logical_pages: u64,
    page_bytes: u64,
) -> Result<(Receiver<Feed>, std::thread::JoinHandle<()>), TraceError>
where
    I: Iterator<Item = Result<IoRequest, TraceError>> + Send + 'static,
{
    let (tx, rx) = sync_channel(FEED_DEPTH);
    let finder = move || {
        let send = |lpns: &mut Vec<u64>| {
            lpns.is_empty()
                || tx.send(Feed::Lpns(std::mem::replace(lpns, Vec::with_capacity(FEED_BATCH)))).is_ok()
        };
        if let Err(e) = find_candidates(trace, logical_pages, page_bytes, send) {
            let _ = tx.send(Feed::Error(e));
        }
    };
    let handle = std::thread::Builder::new()
        .name("lamina-prefill".into())
        .spawn(finder)
        .map_err(|e| TraceError::Io { file: "prefill thread".into(), source: std::sync::Arc::new(e) })?;
    Ok((rx, handle))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::config::{ConfigBuilder, SimConfig};
    use crate::setup::SimulationBuilder;
    use crate::trace::TraceTime;

    /// A small device (die-binding-4x2 with 32 blocks per plane), in verify
    /// mode so the untimed writes' version tags are compared too, with `sets` applied.
    fn config(sets: &[&str]) -> SimConfig {
        let mut b = ConfigBuilder::new().preset("die-binding-4x2").unwrap();
        for s in ["nand.geometry.blocks_per_plane=32", "host.verify=true"].iter().chain(sets) {
            b = b.set(s).unwrap();
        }
        b.build().unwrap()
    }

    /// A simulation of `cfg`, preconditioned when the config says so.
    fn sim(cfg: &SimConfig) -> Simulation {
        let mut s = SimulationBuilder::new(cfg.clone()).build().unwrap();
        s.precondition().unwrap();
        s
    }

    /// The single loop the prefill was before it was split in two (93dc6ec): the
    /// reference the split must reproduce page for page.
    fn reference(sim: &mut Simulation, trace: &[Result<IoRequest, TraceError>]) -> Result<u64, TraceError> {
        let mut seen = LpnBits::new(sim.logical_pages());
        let ps = sim.geo.page_size_bytes() as u64;
        let lp = sim.logical_pages();
        let mut versions = sim.take_versions();
        let mut written = 0;
        for r in trace {
            let r = match r {
                Ok(r) => r,
                Err(e) => {
                    sim.put_versions(versions);
                    return Err(e.clone());
                }
            };
            let first = r.offset_bytes / ps;
            let last = (r.offset_bytes + r.size_bytes - 1) / ps;
            for lpn in first..=last {
                let lpn = lpn % lp;
                if seen.get(lpn) {
                    continue;
                }
                seen.set(lpn, true);
                if r.op == IoOp::Read && sim.ftl.lookup(Lpn(lpn)).is_none() {
                    sim.untimed_write(lpn, &mut versions);
                    written += 1;
                    if let Some(m) = sim.ftl.replica(Lpn(lpn)) {
                        sim.untimed_write(m.0, &mut versions);
                        written += 1;
                    }
                }
            }
        }
        sim.put_versions(versions);
        Ok(written)
    }

    /// Everything the prefill can change: every logical page's mapping and version tag,
    /// the FTL's and the device's counters.
    fn state(
        sim: &Simulation,
    ) -> (Vec<Option<(u64, u64)>>, lamina_ftl::FtlStats, lamina_nand_model::DeviceStats) {
        let pages = (0..sim.ftl.logical_pages())
            .map(|l| sim.ftl.lookup(Lpn(l)).map(|p| (p.0, sim.device.tag(p).unwrap_or(0))))
            .collect();
        (pages, sim.ftl.stats(), *sim.device.stats())
    }

    /// Run the reference, [`Simulation::prefill`] and [`Simulation::prefill_streamed`]
    /// on three simulations of `cfg`; all three must return the same and end in the same
    /// state. Returns the reference's result.
    fn check(cfg: &SimConfig, trace: Vec<Result<IoRequest, TraceError>>) -> Result<u64, TraceError> {
        let (mut a, mut b, mut c) = (sim(cfg), sim(cfg), sim(cfg));
        let want = reference(&mut a, &trace);
        let inline = b.prefill(trace.iter().cloned());
        let streamed = c.prefill_streamed(trace.into_iter());
        assert_eq!(format!("{want:?}"), format!("{inline:?}"));
        assert_eq!(format!("{want:?}"), format!("{streamed:?}"));
        let s = state(&a);
        assert!(s == state(&b), "prefill differs from the reference loop");
        assert!(s == state(&c), "prefill_streamed differs from the reference loop");
        want
    }

    fn page(cfg: &SimConfig) -> u64 {
        u64::from(cfg.nand.geometry.page_size_bytes)
    }

    fn request((op, page, pages): (u8, u64, u64), page_bytes: u64) -> Result<IoRequest, TraceError> {
        let op = [IoOp::Read, IoOp::Read, IoOp::Write, IoOp::Trim][op as usize % 4];
        Ok(IoRequest {
            arrival: TraceTime::ZERO,
            device: 0,
            offset_bytes: page * page_bytes,
            size_bytes: pages * page_bytes,
            op,
        })
    }

    /// Random requests over twice the logical capacity (so addresses wrap), a quarter
    /// of them several pages long.
    fn requests(cfg: &SimConfig, n: usize) -> impl Strategy<Value = Vec<Result<IoRequest, TraceError>>> {
        let lp = SimulationBuilder::new(cfg.clone()).build().unwrap().logical_pages();
        let pb = page(cfg);
        proptest::collection::vec((any::<u8>(), 0..2 * lp, prop_oneof![3 => Just(1u64), 1 => 1..40u64]), 1..n)
            .prop_map(move |v| v.into_iter().map(|r| request(r, pb)).collect())
    }

    proptest! {
        /// The finder's marking, a word of pages at a time where a range does not wrap,
        /// finds the candidates, in order, and the "seen" bits of a page-by-page walk,
        /// for ranges of up to a few words, across word edges and the wrap.
        #[test]
        fn marking_by_words_matches_page_by_page(
            logical in 1u64..1000,
            ranges in proptest::collection::vec((0u64..2000, 1u64..200, any::<bool>()), 1..60),
        ) {
            let mut f = FirstReads::new(logical, 4096);
            let mut seen = vec![false; logical as usize];
            let (mut got, mut want) = (Vec::new(), Vec::new());
            for (first, len, read) in ranges {
                let last = first + len - 1;
                f.push(first, last, read, &mut got);
                for p in first..=last {
                    let p = p % logical;
                    if !std::mem::replace(&mut seen[p as usize], true) && read {
                        want.push(p);
                    }
                }
            }
            prop_assert_eq!(got, want);
            for (p, &s) in seen.iter().enumerate() {
                prop_assert_eq!(f.seen.get(p as u64), s, "page {}", p);
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

        #[test]
        fn split_prefill_writes_what_the_single_loop_wrote(trace in requests(&config(&[]), 3000)) {
            check(&config(&[]), trace).unwrap();
        }

        /// Replication: each candidate's replica is written after it (and is never a
        /// candidate itself: replicas sit above the host's pages).
        #[test]
        fn split_prefill_matches_under_replication(trace in requests(&config(&["ftl.replication=\"rain1\""]), 2000)) {
            check(&config(&["ftl.replication=\"rain1\""]), trace).unwrap();
        }

        /// Preconditioning maps pages before the pass: every candidate is then looked up.
        #[test]
        fn split_prefill_matches_after_preconditioning(trace in requests(&config(&["precondition.fill_fraction=0.5"]), 2000)) {
            check(&config(&["precondition.fill_fraction=0.5"]), trace).unwrap();
        }
    }

    /// Half the device preconditioned with overwrites (invalid pages in every plane),
    /// then every page read before it is written (twice over, with wrap-around): the
    /// untimed writes fill the device past its GC threshold, so GC runs inside the pass.
    #[test]
    fn read_first_over_a_preconditioned_device_runs_gc_and_matches() {
        let cfg = config(&["precondition.fill_fraction=0.5", "precondition.max_overwrite_passes=2.0"]);
        let lp = SimulationBuilder::new(cfg.clone()).build().unwrap().logical_pages();
        let trace: Vec<_> = (0..2 * lp).rev().map(|p| request((0, p, 1), page(&cfg))).collect();
        let written = check(&cfg, trace.clone()).unwrap();
        let mut s = sim(&cfg);
        let jobs = s.ftl.stats().gc_jobs;
        assert_eq!(s.prefill(trace.into_iter()).unwrap(), written);
        assert!(written > 0 && s.ftl.stats().gc_jobs > jobs, "no GC in the pass ({written} pages written)");
    }

    /// An empty device (so the pass writes runs, `Ftl::write_unmapped_run`) with a high
    /// GC threshold, read first in full (the validated configuration keeps the logical
    /// pages above the threshold, so it is reached only at the very end, if at all),
    /// then a trace that writes a third of its requests, so that candidates meet mapped
    /// pages and runs stop before them: both match the single loop page for page.
    #[test]
    fn runs_on_an_empty_device_match() {
        let cfg = config(&["ftl.overprovisioning=0.25", "ftl.gc_threshold={ free_fraction = 0.2 }"]);
        let lp = SimulationBuilder::new(cfg.clone()).build().unwrap().logical_pages();
        let pb = page(&cfg);
        let trace: Vec<_> = (0..lp).map(|p| request((0, p * 7 % lp, 1), pb)).collect();
        assert_eq!(check(&cfg, trace).unwrap(), lp);
        let mixed: Vec<_> = (0..lp).map(|p| request(((p % 3 == 0) as u8 * 2, p * 5 % lp, 2), pb)).collect();
        check(&cfg, mixed).unwrap();
    }

    /// A request longer than a batch (and than the device: it wraps) is marked a piece
    /// at a time; the pages and their order stay the reference's.
    #[test]
    fn a_request_longer_than_a_batch_matches() {
        let cfg = config(&[]);
        let lp = SimulationBuilder::new(cfg.clone()).build().unwrap().logical_pages();
        assert!(lp > FEED_BATCH as u64);
        let pb = page(&cfg);
        let trace = vec![request((2, 5, 3), pb), request((0, 1, 2 * lp + 7), pb), request((0, 0, 9), pb)];
        assert_eq!(check(&cfg, trace).unwrap(), lp - 3);
    }

    /// A trace error ends the pass after the pages of the requests before it, in every
    /// version, with the error passed on.
    #[test]
    fn a_trace_error_is_returned_after_the_earlier_pages() {
        let cfg = config(&[]);
        let err = TraceError::ReaderStopped { file: "t".into() };
        let mut trace: Vec<_> = (0..5000).map(|p| request((0, p * 7, 1), page(&cfg))).collect();
        trace.push(Err(err));
        trace.push(request((0, 3, 1), page(&cfg)));
        let r = check(&cfg, trace);
        assert!(matches!(r, Err(TraceError::ReaderStopped { .. })), "{r:?}");
    }

    /// The finder parses a group of requests while it marks the one before: traces that
    /// end, or fail, just before, at and after a group's end, and windows of candidates
    /// cut anywhere, write what the single loop wrote.
    #[test]
    fn traces_ending_at_group_and_window_edges_match() {
        let cfg = config(&[]);
        for n in [0, 1, GROUP - 1, GROUP, GROUP + 1, 2 * GROUP, 2 * GROUP + 1, 3 * WARM_WINDOW + 5] {
            let trace: Vec<_> = (0..n as u64).map(|p| request((0, p * 3, 1 + p % 3), page(&cfg))).collect();
            check(&cfg, trace.clone()).unwrap();
            let mut failing = trace;
            failing.push(Err(TraceError::ReaderStopped { file: "t".into() }));
            failing.push(request((0, 1, 1), page(&cfg)));
            assert!(matches!(check(&cfg, failing), Err(TraceError::ReaderStopped { .. })), "{n} requests");
        }
        // The window helpers: windows cover the candidates in order, empty past the end.
        let lpns: Vec<u64> = (0..(2 * WARM_WINDOW + 3) as u64).collect();
        let joined: Vec<u64> = (0..4).flat_map(|k| window_of(&lpns, k).to_vec()).collect();
        assert_eq!(joined, lpns);
        assert!(window_of(&lpns, 3).is_empty() && window_of(&[], 0).is_empty());
    }
}
