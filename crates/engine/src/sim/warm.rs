//! Speed hints that warm what admission and issue will read, ahead of them: the host
//! queue of an open-loop host whose device queue (`host.queue_depth`) is full
//! ([`HostQueue`]), a die queue with a backlog ([`Simulation::warm_queue_ahead`]), the
//! host's queued-writes map ([`warm_queued_writes`]), and the pages of a request as the
//! hints see them ([`push_pages`]). Each reads state and changes none of it (plain loads
//! whose misses overlap in a batch, and for the replay's trace window prefetch
//! instructions in stages, [`Stages`]), so the results are those of a run without them
//! (docs/performance.md, "saturated traces" and "eleventh session").
//!
//! A request read from the trace has its forward-map entries warmed then (the replay's
//! `Lookahead`), which pays when it is admitted at once. When the device queue is full
//! it waits in the host queue instead, often for thousands of admissions, and by the time
//! it is admitted its entries are cold again: the misses are paid one request at a time
//! at admission. [`HostQueue`] therefore warms, whenever a request is taken for
//! admission, the pages of the requests [`HostQueue::DISTANCE`] positions further back
//! in one batch of [`HostQueue::BATCH`] requests ([`lamina_ftl::Ftl::warm_writes`], a
//! speed hint with no effect on state), so that their misses overlap and admission finds
//! them warm. The queue's contents, order and admission choices are those of a plain
//! `VecDeque`.

use std::collections::VecDeque;

use lamina_nand_model::{DieId, Lpn};

use super::{NIL, Simulation};
use crate::trace::{IoOp, IoRequest};

/// Pages warmed per request at most (the replay's trace window uses the same cap): a
/// bound on a hint's work for very long requests. 32 covers a 64 KiB request at 2 KiB
/// pages, SSDsim's geometry; the cap of 8 it replaced left 40 % of that run's pages
/// unwarmed (requests of 12.4 pages on average), and raising it made the run 7 % faster
/// (docs/performance.md, eleventh session).
pub(super) const PAGES_PER_REQUEST: u64 = 32;

/// Append the pages of `r` that a warming hint covers (at most [`PAGES_PER_REQUEST`],
/// wrapped into the logical space as the host wraps them) to `lpns`.
#[inline]
pub(super) fn push_pages(
    lpns: &mut Vec<Lpn>,
    r: &IoRequest,
    pages: super::pages::PageMath,
    logical_pages: u64,
) {
    if r.size_bytes > 0 && logical_pages > 0 {
        let (first, last) = pages.pages(r);
        for lpn in first..=last.min(first + PAGES_PER_REQUEST - 1) {
            lpns.push(Lpn(super::pages::wrap(lpn, logical_pages)));
        }
    }
}

/// The pages of a batch of requests that a warming hint covers ([`push_pages`]): those
/// of writes (and trims), warmed as writes ([`lamina_ftl::Ftl::warm_writes`]), and those
/// of reads, which need only their lookups warmed ([`lamina_ftl::Ftl::warm_lookups`]).
/// Reused from batch to batch.
#[derive(Default)]
pub(super) struct WarmPages {
    pub(super) writes: Vec<Lpn>,
    pub(super) reads: Vec<Lpn>,
}

impl WarmPages {
    pub(super) fn with_capacity(n: usize) -> Self {
        WarmPages { writes: Vec::with_capacity(n), reads: Vec::with_capacity(n) }
    }

    pub(super) fn clear(&mut self) {
        self.writes.clear();
        self.reads.clear();
    }

    /// Add the pages of `r` to its side.
    #[inline]
    pub(super) fn push(&mut self, r: &IoRequest, pages: super::pages::PageMath, logical_pages: u64) {
        let side = if r.op == IoOp::Read { &mut self.reads } else { &mut self.writes };
        push_pages(side, r, pages, logical_pages);
    }
}

/// The pages of three consecutive batches of requests as the replay's look-ahead hands
/// them over: each batch passes through three stages, one refill apart — the first level
/// of its forward-map lookups prefetched ([`lamina_ftl::Ftl::prefetch_map_first`]), then
/// the second ([`lamina_ftl::Ftl::prefetch_map_second`]), then warmed whole
/// ([`lamina_ftl::Ftl::warm_writes`], [`lamina_ftl::Ftl::warm_lookups`]) with the map's
/// entries cached by then. Prefetches retire without waiting for memory, so the first
/// two stages cost no stall; only the third's loads of what the entries point to do.
pub(super) struct Stages<'a> {
    /// The batch furthest ahead: first stage.
    pub(super) new: &'a WarmPages,
    /// The batch one refill nearer: second stage.
    pub(super) middle: &'a WarmPages,
    /// The batch taken next: warmed whole.
    pub(super) next: &'a WarmPages,
}

impl Stages<'_> {
    /// The two prefetch stages (the third is the caller's).
    #[inline]
    pub(super) fn prefetch(&self, ftl: &dyn lamina_ftl::Ftl) {
        ftl.prefetch_map_first(&self.new.writes);
        ftl.prefetch_map_first(&self.new.reads);
        ftl.prefetch_map_second(&self.middle.writes);
        ftl.prefetch_map_second(&self.middle.reads);
    }
}

/// [`Simulation::warm_queue_ahead`] warms a die queue's next batch once no more than
/// this many warmed entries are left behind its head.
pub(super) const QUEUE_AHEAD: usize = 0;
/// Entries of a die queue warmed per batch.
pub(super) const QUEUE_BATCH: usize = 8;
/// Die queues are warmed only when they hold more entries than this.
pub(super) const QUEUE_MIN_WARM: usize = 4;
/// ... and only when their head was queued more than this many transactions ago
/// (transaction sequence numbers, `Controller::next_seq`): a younger backlog's records,
/// queue entries and map entries are still in cache, and warming them only adds
/// instructions. Measured on the saturated trace of issue #14 (docs/performance.md,
/// "Round of 2026-11-29 (sixth session)"): with `host.queue_depth = 256` at most 256
/// requests (about 900 page transactions on that trace) are in the device at once, so a
/// head has typically waited while about that many were queued, and the warming cost
/// 4.8 % of the simulation's instructions and about 4 % of its wall time for nothing;
/// with an unbounded host queue every arrived request waits there (on average 174 reads
/// per die at 200 k requests) and the warming saves about 30 % of the wall time, with
/// this threshold as without it.
pub(super) const QUEUE_COLD_AGE: u64 = 8192;
/// The host's queued-writes map is warmed with the trace window's pages once it holds
/// this many entries (about 100 KiB: beyond it, inserting a waiting write missed).
pub(super) const QUEUED_WRITES_WARM_FROM: usize = 4096;

/// A waiting request and its submission index, in whole 8-byte words. An
/// `(u64, IoRequest)` moved out of the queue went through the stack in pieces of 16, 8,
/// 4 and 1 bytes and was read back across them: a load that spans several pending stores
/// waits until they and every store before them reach the cache, and on the saturated
/// trace that wait, behind the statistics' stores that missed the cache, was two thirds
/// of the samples of `complete_request` (docs/performance.md, "Round of 2026-11-30
/// (eighth session)"). Words are read in the widths they were written in.
#[derive(Clone, Copy, Default)]
struct Waiting {
    id: u64,
    arrival: u64,
    offset: u64,
    size: u64,
    /// `device << 8 | op` (0 read, 1 write, 2 trim).
    device_op: u64,
}

impl Waiting {
    #[inline]
    fn new(id: u64, r: &IoRequest) -> Waiting {
        let op = match r.op {
            IoOp::Read => 0,
            IoOp::Write => 1,
            IoOp::Trim => 2,
        };
        Waiting {
            id,
            arrival: r.arrival.0,
            offset: r.offset_bytes,
            size: r.size_bytes,
            device_op: u64::from(r.device) << 8 | op,
        }
    }

    #[inline]
    fn request(&self) -> IoRequest {
        IoRequest {
            arrival: crate::trace::TraceTime(self.arrival),
            device: (self.device_op >> 8) as u32,
            offset_bytes: self.offset,
            size_bytes: self.size,
            op: match self.device_op & 0xff {
                0 => IoOp::Read,
                1 => IoOp::Write,
                _ => IoOp::Trim,
            },
        }
    }
}

/// A first-in, first-out queue in chunks of `N` entries: it grows a chunk at a time,
/// never copying what it holds, and keeps one emptied chunk for reuse. Under a backlog
/// the host queue grows to hundreds of thousands of requests (the saturated trace of
/// issue #14: about 650,000 at its end), and a `VecDeque` doubling its buffer copied all
/// of them each time and touched up to twice their memory.
struct ChunkQueue<T: Copy + Default, const N: usize> {
    chunks: VecDeque<Box<[T]>>,
    /// Position of the first entry in the first chunk, and of the next push in the last
    /// (`N`: the last chunk is full).
    head: usize,
    tail: usize,
    len: usize,
    spare: Option<Box<[T]>>,
}

impl<T: Copy + Default, const N: usize> Default for ChunkQueue<T, N> {
    fn default() -> Self {
        ChunkQueue { chunks: VecDeque::new(), head: 0, tail: N, len: 0, spare: None }
    }
}

impl<T: Copy + Default, const N: usize> ChunkQueue<T, N> {
    #[inline]
    fn len(&self) -> usize {
        self.len
    }

    /// Entry `i` (0 = the oldest; `i < len`).
    #[inline]
    fn get(&self, i: usize) -> T {
        let p = self.head + i;
        self.chunks[p / N][p % N]
    }

    #[inline]
    fn set(&mut self, i: usize, v: T) {
        let p = self.head + i;
        self.chunks[p / N][p % N] = v;
    }

    #[inline]
    fn push_back(&mut self, v: T) {
        if self.tail == N {
            self.add_chunk();
        }
        if let Some(c) = self.chunks.back_mut() {
            c[self.tail] = v;
        }
        self.tail += 1;
        self.len += 1;
    }

    /// A new last chunk (the spare one, if kept).
    #[cold]
    #[inline(never)]
    fn add_chunk(&mut self) {
        let c = self.spare.take().unwrap_or_else(|| vec![T::default(); N].into_boxed_slice());
        self.chunks.push_back(c);
        self.tail = 0;
    }

    #[inline]
    fn pop_front(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        let v = self.chunks.front()?[self.head];
        self.len -= 1;
        self.head += 1;
        if self.len == 0 {
            // Empty: start over in the one chunk left.
            self.head = 0;
            self.tail = 0;
        } else if self.head == N {
            self.drop_first_chunk();
        }
        Some(v)
    }

    /// The first chunk is used up: keep it as the spare.
    #[cold]
    #[inline(never)]
    fn drop_first_chunk(&mut self) {
        self.spare = self.chunks.pop_front();
        self.head = 0;
    }

    /// Remove entry `i` (0 = the oldest), moving the `i` before it back one place.
    fn remove(&mut self, i: usize) -> Option<T> {
        if i >= self.len {
            return None;
        }
        let v = self.get(i);
        for k in (0..i).rev() {
            let x = self.get(k);
            self.set(k + 1, x);
        }
        self.pop_front();
        Some(v)
    }
}

/// Requests waiting for a device-queue slot, with their submission index, and how far
/// from the front their pages have been warmed.
#[derive(Default)]
pub(crate) struct HostQueue {
    /// Each request packed in whole words ([`Waiting`]), in chunks of 1,024 (40 KiB).
    queue: ChunkQueue<Waiting, 1024>,
    /// The first `warmed` entries had their pages warmed (entries taken from further
    /// back by a reordering admission leave it unchanged: it is a hint).
    warmed: usize,
    /// Pages of the batch being warmed.
    pages: WarmPages,
}

impl HostQueue {
    /// A new batch is warmed once no more than this many warmed requests are left ahead
    /// of the queue's unwarmed part.
    pub(crate) const DISTANCE: usize = 32;
    /// Requests warmed per batch.
    pub(crate) const BATCH: usize = 32;

    /// Requests waiting.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.queue.len()
    }

    /// True if none waits.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.queue.len() == 0
    }

    /// Request `id` waits, behind every request already waiting.
    #[inline]
    pub(crate) fn push_back(&mut self, id: u64, r: IoRequest) {
        self.queue.push_back(Waiting::new(id, &r));
    }

    /// The waiting requests, oldest first.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (u64, IoRequest)> + '_ {
        (0..self.queue.len()).map(|i| {
            let w = self.queue.get(i);
            (w.id, w.request())
        })
    }

    /// Take the request at position `i` (0 = the oldest) for admission. If the warmed
    /// part ahead has shrunk to [`HostQueue::DISTANCE`] requests, first hand the pages
    /// of the next [`HostQueue::BATCH`] unwarmed requests to `warm` in one batch.
    pub(crate) fn take(
        &mut self,
        i: usize,
        pages: super::pages::PageMath,
        logical_pages: u64,
        warm: impl FnOnce(&[Lpn], &[Lpn]),
    ) -> Option<(u64, IoRequest)> {
        // The oldest, unless the scheduler reorders admission (`remove(0)` costs more).
        let taken = if i == 0 { self.queue.pop_front() } else { self.queue.remove(i) }?;
        let taken = (taken.id, taken.request());
        if i < self.warmed {
            self.warmed -= 1;
        }
        if self.warmed <= Self::DISTANCE && self.warmed < self.queue.len() {
            let end = self.queue.len().min(self.warmed + Self::BATCH);
            self.pages.clear();
            for i in self.warmed..end {
                self.pages.push(&self.queue.get(i).request(), pages, logical_pages);
            }
            self.warmed = end;
            warm(&self.pages.writes, &self.pages.reads);
        }
        Some(taken)
    }
}

/// How far the front of each die's read and write queues has been warmed
/// ([`Simulation::warm_queue_ahead`]).
#[derive(Default)]
pub(crate) struct QueueWarmth {
    /// Per die: how many entries at the front of its read queue, and of its write queue,
    /// were warmed (an estimate: it is a hint).
    ahead: Vec<[u32; 2]>,
}

impl QueueWarmth {
    pub(crate) fn new(dies: usize) -> QueueWarmth {
        QueueWarmth { ahead: vec![[0; 2]; dies] }
    }
}

/// Speed hint: read the host's queued-writes map where `lpns` would be looked up or
/// inserted, once it has outgrown the caches.
pub(super) fn warm_queued_writes(map: &super::queued::QueuedWrites, lpns: &[Lpn]) {
    if map.len() < QUEUED_WRITES_WARM_FROM {
        return;
    }
    let mut acc = 0u64;
    for l in lpns {
        acc ^= map.warm(l.0);
    }
    std::hint::black_box(acc);
}

impl Simulation {
    /// Speed hint, no effect on state: the head of `die`'s read (or write) queue is
    /// being issued. If no more than [`QUEUE_AHEAD`] entries behind it have been warmed,
    /// read what issuing the next [`QUEUE_BATCH`] will load — their queue entries, their
    /// records, their requests' records and their forward-map entries (for writes also
    /// the bookkeeping of the pages they replace and the host's queued-writes map) —
    /// level by level, so that the misses of the batch overlap and the entries are in
    /// cache when they reach the head. Under a backlog (hundreds of transactions per
    /// die) a queue's records were written long before they are issued and are cold:
    /// one dependent chain of misses after another at each issue bounded the replay.
    /// Queues of at most [`QUEUE_MIN_WARM`] entries, or whose head is no older than
    /// [`QUEUE_COLD_AGE`] transactions, are not warmed.
    #[inline]
    pub(super) fn warm_queue_ahead(&mut self, die: DieId, writes: bool) {
        // Only an old backlog: a short queue's entries, or a long queue's queued not long
        // ago, are still in cache (warming them cost more instructions than it saved:
        // on the unsaturated comparison run, and with a bounded host queue). The common
        // case costs a comparison here, not a call.
        let q = &self.ctl.dies[die.idx()].queues;
        let q = if writes { &q.writes } else { &q.reads };
        if q.len() > QUEUE_MIN_WARM && q.front().is_some_and(|h| self.ctl.seq - h.seq > QUEUE_COLD_AGE) {
            self.warm_queue_batch(die, writes);
        } else {
            self.warmth.ahead[die.idx()][writes as usize] = 0;
        }
    }

    /// [`Simulation::warm_queue_ahead`] of a queue with a backlog.
    #[inline(never)]
    fn warm_queue_batch(&mut self, die: DieId, writes: bool) {
        let q = &self.ctl.dies[die.idx()].queues;
        let q = if writes { &q.writes } else { &q.reads };
        // Entries at the front warmed so far; the head among them.
        let slot = &mut self.warmth.ahead[die.idx()][writes as usize];
        let warmed = (*slot as usize).min(q.len());
        let (from, end) = (warmed, q.len().min(warmed + QUEUE_BATCH));
        // Something behind the head still cold (the head alone is loaded right after by
        // the issue itself).
        let due = warmed <= QUEUE_AHEAD + 1 && end > from.max(1);
        // The head leaves (or stays, if it is refused: a hint may be off by one).
        *slot = (if due { end } else { warmed }).saturating_sub(1) as u32;
        if !due {
            return;
        }
        let mut ids = [0u32; QUEUE_BATCH];
        let mut reqs = [NIL; QUEUE_BATCH];
        let mut lpns = [Lpn(0); QUEUE_BATCH];
        let n = end - from;
        for (i, e) in q.range(from..end).enumerate() {
            (ids[i], reqs[i], lpns[i]) = (e.id, e.req, e.lpn);
        }
        let mut acc = 0u64;
        for &id in &ids[..n] {
            acc ^= self.ctl.txns.try_get(id).map_or(0, |t| t.seq);
        }
        for &r in &reqs[..n] {
            if r != NIL {
                acc ^= self.host.reqs.try_get(r).map_or(0, |r| r.arrival.0);
            }
        }
        if writes {
            for l in &lpns[..n] {
                acc ^= self.host.queued_writes.warm(l.0);
            }
            self.ftl.warm_writes(&lpns[..n]);
        } else {
            let logical = self.ftl.logical_pages();
            for &l in lpns[..n].iter().filter(|l| l.0 < logical) {
                acc ^= self.ftl.lookup(l).map_or(0, |p| p.0);
            }
        }
        std::hint::black_box(acc);
    }
}

#[cfg(test)]
mod tests {
    use rand_core::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    use super::*;
    use crate::trace::TraceTime;

    /// Request `i`: a write or (every sixth) a trim when `i` is a multiple of 3, else a
    /// read; device ids over the whole `u32` range (the queue packs requests into words).
    fn req(i: u64, pages: u64) -> IoRequest {
        IoRequest {
            arrival: TraceTime(i * 1_000_003),
            device: (i as u32).wrapping_mul(2_654_435_761),
            offset_bytes: i * 4096 * 16,
            size_bytes: 4096 * pages,
            op: match i % 6 {
                0 => IoOp::Trim,
                3 => IoOp::Write,
                _ => IoOp::Read,
            },
        }
    }

    /// A chunked queue of 3-entry chunks behaves as a `VecDeque` through random pushes,
    /// pops from the front and removals near the front, across chunk boundaries, empty
    /// queues and long backlogs.
    #[test]
    fn a_chunked_queue_behaves_as_a_deque() {
        for seed in 0..20u64 {
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
            let (mut q, mut plain) = (ChunkQueue::<u64, 3>::default(), VecDeque::new());
            let push_in_10 = 2 + seed % 7;
            for n in 0..5000u64 {
                let r = rng.next_u64() % 10;
                if r < push_in_10 {
                    q.push_back(n);
                    plain.push_back(n);
                } else if r == 9 && !plain.is_empty() {
                    let i = (rng.next_u64() % plain.len().min(5) as u64) as usize;
                    assert_eq!(q.remove(i), plain.remove(i), "seed {seed}");
                } else {
                    assert_eq!(q.pop_front(), plain.pop_front(), "seed {seed}");
                }
                assert_eq!(q.len(), plain.len());
                assert!((0..q.len()).map(|i| q.get(i)).eq(plain.iter().copied()), "seed {seed}");
                assert!(q.chunks.len() <= plain.len() / 3 + 2, "seed {seed}: chunks kept beyond need");
            }
        }
    }

    /// Random interleavings of arrivals and admissions (the oldest, or any of the first
    /// few as a reordering admission picks): the queue hands out exactly the requests a
    /// plain `VecDeque` would, in the same order; every request is warmed at most once,
    /// only while it waits, and never in its own admission; the warmed requests are
    /// always a prefix of the queue, and after an admission that prefix holds at least
    /// `min(DISTANCE, BATCH)` requests (or the whole queue); writes' and reads' pages
    /// are warmed apart.
    #[test]
    fn passes_requests_through_like_a_deque_and_warms_ahead() {
        for seed in 0..40u64 {
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
            let reorder = seed % 4 == 0;
            let (mut q, mut plain) = (HostQueue::default(), VecDeque::new());
            let mut warmed: Vec<bool> = Vec::new();
            let mut admitted: Vec<bool> = Vec::new();
            let mut next = 0u64;
            // Arrivals in 3..7 of 10 steps: queues that grow, shrink and empty.
            let arrive_in_10 = 3 + rng.next_u64() % 5;
            for _ in 0..3000 {
                if rng.next_u64() % 10 < arrive_in_10 {
                    let r = req(next, 1 + rng.next_u64() % 11);
                    q.push_back(next, r);
                    plain.push_back((next, r));
                    warmed.push(false);
                    admitted.push(false);
                    next += 1;
                    continue;
                }
                let i = if reorder && !plain.is_empty() {
                    (rng.next_u64() % plain.len().min(5) as u64) as usize
                } else {
                    0
                };
                let mut batch = Vec::new();
                let got = q.take(i, super::super::pages::PageMath::new(4096), 1 << 40, |w, r| {
                    // Writes' pages and reads' pages come apart (request k is a write when
                    // k is a multiple of 3).
                    assert!(w.iter().all(|l| l.0 / 16 % 3 == 0), "seed {seed}: a read among the writes");
                    assert!(r.iter().all(|l| l.0 / 16 % 3 != 0), "seed {seed}: a write among the reads");
                    batch.extend_from_slice(w);
                    batch.extend_from_slice(r);
                });
                let want = plain.remove(i);
                assert_eq!(format!("{got:?}"), format!("{want:?}"), "seed {seed}");
                assert_eq!(q.len(), plain.len());
                assert!(q.iter().eq(plain.iter().copied()), "seed {seed}: the waiting requests differ");
                let Some((id, _)) = got else {
                    assert!(batch.is_empty(), "nothing to warm in an empty queue");
                    continue;
                };
                admitted[id as usize] = true;
                // Request k covers pages 16 k .. 16 k + pages - 1.
                for l in batch {
                    let k = (l.0 / 16) as usize;
                    assert!(l.0 % 16 < PAGES_PER_REQUEST, "beyond the cap: {l:?}");
                    assert!(!admitted[k], "seed {seed}: request {k} warmed at or after its admission");
                    if l.0 % 16 == 0 {
                        assert!(!warmed[k], "seed {seed}: request {k} warmed twice");
                        warmed[k] = true;
                    }
                }
                let prefix = q.iter().take_while(|x| warmed[x.0 as usize]).count();
                assert!(q.iter().skip(prefix).all(|x| !warmed[x.0 as usize]), "seed {seed}: not a prefix");
                let min = q.len().min(HostQueue::DISTANCE.min(HostQueue::BATCH));
                assert!(prefix >= min, "seed {seed}: {prefix} warmed ahead of {} waiting", q.len());
            }
        }
    }

    /// With a long queue and admissions from the front only, each batch covers the
    /// `BATCH` requests after the warmed part, warmed when `DISTANCE` warmed requests are
    /// left ahead, and a request is admitted between `DISTANCE` and
    /// `DISTANCE + BATCH` admissions after its pages were warmed.
    #[test]
    fn warms_batches_at_the_distance() {
        let mut q = HostQueue::default();
        let n = 10 * (HostQueue::DISTANCE + HostQueue::BATCH) as u64;
        for i in 0..n {
            q.push_back(i, req(i, 1));
        }
        let mut warmed_at = vec![None; n as usize];
        let mut batches = Vec::new();
        for k in 0..n {
            let mut batch = Vec::new();
            let (id, _) = q
                .take(0, super::super::pages::PageMath::new(4096), 1 << 40, |w, r| {
                    batch.extend([w, r].concat())
                })
                .expect("queued");
            assert_eq!(id, k, "FIFO");
            if !batch.is_empty() {
                batches.push(batch.len());
                for l in batch {
                    warmed_at[(l.0 / 16) as usize] = Some(k);
                }
            }
            if k > (HostQueue::DISTANCE + HostQueue::BATCH) as u64 {
                let at = warmed_at[id as usize].expect("warmed before admission");
                let ahead = (k - at) as usize;
                assert!(
                    (HostQueue::DISTANCE..=HostQueue::DISTANCE + HostQueue::BATCH).contains(&ahead),
                    "request {id} warmed {ahead} admissions ahead"
                );
            }
        }
        assert!(warmed_at.iter().skip(1).all(Option::is_some), "every request behind the first is warmed");
        // Whole batches while the queue is long, whatever is left at the end.
        let whole = batches.iter().filter(|&&b| b == HostQueue::BATCH).count();
        assert!(whole >= batches.len() - 2, "{batches:?}");
    }

    #[test]
    fn pages_are_capped_and_wrapped() {
        let mut lpns = Vec::new();
        let r = IoRequest {
            arrival: TraceTime(0),
            device: 0,
            offset_bytes: 10 * 4096 + 1,
            size_bytes: 4096,
            op: IoOp::Read,
        };
        push_pages(&mut lpns, &r, super::super::pages::PageMath::new(4096), 11);
        assert_eq!(lpns, vec![Lpn(10), Lpn(0)]);
        lpns.clear();
        push_pages(&mut lpns, &req(0, 40), super::super::pages::PageMath::new(4096), 1 << 40);
        assert_eq!(lpns, (0..PAGES_PER_REQUEST).map(Lpn).collect::<Vec<_>>());
        lpns.clear();
        push_pages(&mut lpns, &req(1, 1), super::super::pages::PageMath::new(4096), 0);
        assert!(lpns.is_empty(), "no logical space: nothing to warm");
    }
}
