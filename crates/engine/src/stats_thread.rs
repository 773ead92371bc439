//! Request statistics recorded on a second thread while a trace replays (issue #14).
//!
//! Recording a completed request (two HDR histograms, the eight attribution
//! components) costs the simulation's thread about 400 instructions, and the machine's
//! second core is mostly idle during a replay. So, inside [`crate::Simulation::run`],
//! once a run has completed [`AUTO_INLINE_FIRST`] requests (or from the start with
//! [`StatsThreadMode::On`]), the simulation only copies each completion's values
//! ([`Completed`], 104 bytes) into a batch of [`BATCH`]; full batches go to the thread
//! `lamina-stats` through a channel and come back empty for reuse. A new buffer is
//! allocated only when none has come back (the thread lags, e.g. is not scheduled), at
//! most [`MAX_BUFFERS`]; then the simulation waits. The thread polls the channel every
//! [`POLL`] instead of blocking on it, so that sending a batch never has to wake it.
//!
//! Determinism: the thread records into the very histograms the simulation would
//! have used (moved to it when it starts and moved back when it stops), in the same
//! order (one FIFO channel, one consumer), with the same code
//! ([`RequestStats::record`]), so every histogram, count and summary is identical to
//! inline recording — not merely equal after a merge.
//!
//! Invariant: the thread exists only inside `Simulation::run`, which joins it before
//! returning, with or without an error, so everything that reads the statistics
//! (`Simulation::report`, the stepping API, `lamina serve`) sees them whole; the
//! stepping API records inline. If `run` unwinds from a panic, dropping the simulation
//! joins the thread (and `report` refuses to read statistics the thread still holds).

use std::sync::mpsc::{Receiver, SyncSender, TryRecvError, channel, sync_channel};
use std::thread::JoinHandle;

use crate::stats::{Completed, RequestStats};

/// Whether [`crate::Simulation::run`] records request statistics on a second thread.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StatsThreadMode {
    /// After [`AUTO_INLINE_FIRST`] completions of one `run`, if the machine has more
    /// than one core (small runs never start a thread).
    #[default]
    Auto,
    /// Always inline (e.g. when many simulations run in parallel and every core is busy).
    Off,
    /// From the start of every `run`, whatever its size (tests).
    On,
}

/// Completions a run records inline before [`StatsThreadMode::Auto`] starts the thread:
/// starting it costs about 0.1 ms, what recording about 2,000 requests costs.
pub const AUTO_INLINE_FIRST: u64 = 16_384;

/// Completions per batch sent to the thread.
pub(crate) const BATCH: usize = 1024;

/// How long the thread sleeps when it finds no batch (at most 1,800 completions of the
/// comparison run arrive meanwhile: two batches).
const POLL: std::time::Duration = std::time::Duration::from_millis(1);

/// Most batches in circulation (one being filled, the rest queued, being recorded or
/// waiting to come back). More are allocated only while the thread lags behind.
pub(crate) const MAX_BUFFERS: usize = 64;

/// A completion the thread panics on (tests of the panic's propagation).
#[cfg(test)]
const POISON: u8 = 0x80;

/// `Sink::inline_left` when the thread is not to start.
const DISARMED: u64 = u64::MAX;

/// Where [`RequestStats`] records completions: inline, or through a [`StatsThread`].
pub(crate) struct Sink {
    pub(crate) mode: StatsThreadMode,
    /// Inline completions before the thread starts ([`DISARMED`]: it does not).
    inline_left: u64,
    /// Completions per batch.
    batch: usize,
    /// The running thread.
    pub(crate) thread: Option<StatsThread>,
}

impl Default for Sink {
    fn default() -> Self {
        Sink { mode: StatsThreadMode::Auto, inline_left: DISARMED, batch: BATCH, thread: None }
    }
}

impl Sink {
    /// One completion was recorded inline: true when the thread should start now.
    #[inline]
    pub(crate) fn wants_thread(&mut self) -> bool {
        if self.inline_left == DISARMED {
            return false;
        }
        self.inline_left -= 1;
        self.inline_left == 0
    }

    /// Completions per batch (tests use small ones).
    #[cfg(test)]
    pub(crate) fn set_batch(&mut self, batch: usize) {
        self.batch = batch.max(1);
    }
}

impl crate::Simulation {
    /// Whether [`crate::Simulation::run`] may record request statistics on a second
    /// thread ([`StatsThreadMode::Auto`] unless set; the results are the same).
    pub fn set_stats_thread(&mut self, mode: StatsThreadMode) {
        self.host.stats.sink.mode = mode;
    }
}

/// A replay begins (`Simulation::run`): arm the thread as the mode says.
pub(crate) fn arm(stats: &mut RequestStats) {
    stats.sink.inline_left = match stats.sink.mode {
        StatsThreadMode::Off => DISARMED,
        StatsThreadMode::Auto => AUTO_INLINE_FIRST,
        StatsThreadMode::On => {
            start(stats);
            DISARMED
        }
    };
}

/// Move the recorded statistics to a new thread. Stays inline if the mode is `Auto`
/// and the machine has one core, or if the thread cannot be started.
pub(crate) fn start(stats: &mut RequestStats) {
    stats.sink.inline_left = DISARMED;
    if stats.sink.thread.is_some() {
        return;
    }
    if stats.sink.mode == StatsThreadMode::Auto
        && std::thread::available_parallelism().map_or(1, |n| n.get()) < 2
    {
        return;
    }
    if let Some(t) = StatsThread::spawn(stats.sink.batch) {
        t.hand_over(stats.take_recorded());
        stats.sink.thread = Some(t);
    }
}

/// The replay ends (`Simulation::run`, also on error): stop the thread, if any, and take
/// the statistics back with every completion recorded.
pub(crate) fn finish(stats: &mut RequestStats) {
    stats.sink.inline_left = DISARMED;
    if let Some(t) = stats.sink.thread.take() {
        let recorded = t.finish();
        stats.put_recorded(recorded);
    }
}

/// The statistics thread, seen from the simulation's thread.
pub(crate) struct StatsThread {
    /// The batch being filled (capacity `batch`: never grows).
    buf: Vec<Completed>,
    /// Buffers allocated (at most [`MAX_BUFFERS`]).
    buffers: usize,
    batch: usize,
    /// The statistics to record into, sent once when the thread starts.
    init: Option<SyncSender<RequestStats>>,
    /// Full batches to the thread (`None` once closed).
    full: Option<SyncSender<Vec<Completed>>>,
    /// Empty batches back.
    empty: Receiver<Vec<Completed>>,
    handle: Option<JoinHandle<RequestStats>>,
}

impl StatsThread {
    /// Start the thread and [`MAX_BUFFERS`] batches of `batch`; `None` if the system refuses
    /// a thread (the caller stays inline).
    fn spawn(batch: usize) -> Option<StatsThread> {
        let (init_tx, init_rx) = sync_channel::<RequestStats>(1);
        let (full_tx, full_rx) = sync_channel::<Vec<Completed>>(MAX_BUFFERS);
        let (empty_tx, empty_rx) = channel::<Vec<Completed>>();
        let handle = std::thread::Builder::new()
            .name("lamina-stats".into())
            .spawn(move || {
                // No statistics: the simulation dropped us before handing them over.
                let Ok(mut stats) = init_rx.recv() else { return RequestStats::default() };
                // Polls rather than blocks: a blocked receiver would make every batch's
                // send wake it (a futex call and an inter-processor interrupt on the
                // simulation's thread); polling costs only this thread's timer wake-ups.
                // Ends when the simulation closes the channel (finish or drop), which
                // also unparks it.
                loop {
                    match full_rx.try_recv() {
                        Ok(mut buf) => {
                            for c in &buf {
                                #[cfg(test)]
                                assert!(c.flags != POISON, "poisoned completion");
                                stats.record(c);
                            }
                            buf.clear();
                            // The simulation may already have stopped taking buffers back.
                            let _ = empty_tx.send(buf);
                        }
                        Err(TryRecvError::Empty) => std::thread::park_timeout(POLL),
                        Err(TryRecvError::Disconnected) => return stats,
                    }
                }
            })
            .ok()?;
        Some(StatsThread {
            buf: Vec::with_capacity(batch),
            buffers: 1,
            batch,
            init: Some(init_tx),
            full: Some(full_tx),
            empty: empty_rx,
            handle: Some(handle),
        })
    }

    /// Give the thread the statistics to record into.
    fn hand_over(&self, stats: RequestStats) {
        let init = self.init.as_ref().expect("handed over once");
        // A thread that died before its first receive reports its panic at `finish`.
        let _ = init.send(stats);
    }

    /// Queue one completion (sent with its batch).
    #[inline]
    pub(crate) fn push(&mut self, c: Completed) {
        debug_assert!(self.buf.len() < self.batch);
        self.buf.push(c);
        if self.buf.len() == self.batch {
            self.ship();
        }
    }

    /// Send the full batch and take an empty one (waiting for the thread if all
    /// [`MAX_BUFFERS`] are in use).
    #[cold]
    fn ship(&mut self) {
        let full = std::mem::take(&mut self.buf);
        if self.full.as_ref().expect("open while running").send(full).is_err() {
            // The thread is gone: only a panic ends it early; report it here.
            self.join_and_propagate();
        }
        let next = match self.empty.try_recv() {
            Ok(next) => next,
            // The thread lags (e.g. not scheduled): another buffer rather than a wait.
            Err(TryRecvError::Empty) if self.buffers < MAX_BUFFERS => {
                self.buffers += 1;
                Vec::with_capacity(self.batch)
            }
            Err(TryRecvError::Empty) => match self.empty.recv() {
                Ok(next) => next,
                Err(_) => self.join_and_propagate(),
            },
            Err(TryRecvError::Disconnected) => self.join_and_propagate(),
        };
        debug_assert!(next.is_empty() && next.capacity() >= self.batch);
        self.buf = next;
    }

    /// Send what is left, close the channel and take the statistics back.
    fn finish(mut self) -> RequestStats {
        if !self.buf.is_empty() {
            let rest = std::mem::take(&mut self.buf);
            if self.full.as_ref().expect("open while running").send(rest).is_err() {
                self.join_and_propagate();
            }
        }
        let handle = self.close();
        match handle.join() {
            Ok(stats) => stats,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }

    /// Close the channels and wake the thread (it then records what is queued and
    /// ends); the handle to join.
    fn close(&mut self) -> JoinHandle<RequestStats> {
        self.init = None;
        self.full = None;
        let handle = self.handle.take().expect("closed once");
        handle.thread().unpark();
        handle
    }

    #[cold]
    fn join_and_propagate(&mut self) -> ! {
        match self.close().join() {
            Err(panic) => std::panic::resume_unwind(panic),
            Ok(_) => unreachable!("the statistics thread stopped while its channel was open"),
        }
    }
}

impl Drop for StatsThread {
    /// Dropped without [`StatsThread::finish`] (the simulation unwinding from a panic,
    /// or dropped mid-run): close the channels so the thread ends after at most
    /// [`MAX_BUFFERS`] batches, and wait for it (no thread outlives its simulation).
    fn drop(&mut self) {
        if self.handle.is_some() {
            let _ = self.close().join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::Attribution;
    use lamina_nand_model::{Nanos, SimTime};
    use proptest::prelude::*;

    /// One completion of a random stream: (read, bytes, arrival, response, wait,
    /// attribution components, attributed, host-interface time).
    type Event = (bool, u64, u64, u64, u64, [u64; 8], u8, Option<u64>);

    fn events() -> impl Strategy<Value = Vec<Event>> {
        // Values up to 2^44 ns (beyond the histograms' initial range: auto-resize) and
        // many zeros (the attribution's zero counts).
        let ns = prop_oneof![Just(0u64), 0u64..5_000, 0u64..50_000_000, 0u64..(1 << 44)];
        let event = (
            any::<bool>(),
            0u64..1 << 20,
            0u64..1 << 40,
            ns.clone(),
            ns.clone(),
            proptest::array::uniform8(ns.clone()),
            0u8..4,
            proptest::option::of(ns),
        );
        proptest::collection::vec(event, 0..3000)
    }

    fn feed(st: &mut RequestStats, events: &[Event]) {
        for &(read, bytes, arrival, response, wait, p, kind, hif) in events {
            let (arrival, done) = (SimTime(arrival), SimTime(arrival + response));
            let a = Attribution {
                queue_wait: Nanos(p[0]),
                device_wait: Nanos(p[1]),
                transfer: Nanos(p[2]),
                array: Nanos(p[3]),
                gc_blocked: Nanos(p[4]),
                suspension: Nanos(p[5]),
                dram: Nanos(p[6]),
                translation: Nanos(p[7]),
            };
            match kind {
                0 => st.complete(read, bytes, arrival, done, Nanos(wait)),
                1 => st.complete_attributed(read, bytes, arrival, done, Nanos(wait), &a, None),
                _ => st.complete_attributed(read, bytes, arrival, done, Nanos(wait), &a, hif.map(Nanos)),
            }
        }
    }

    /// Everything a report reads of the statistics, as text.
    fn observed(st: &RequestStats) -> String {
        format!(
            "{:?} {:?} {:?} {:?} {:?} {:?} {} {} {} {:?} {:?}\n{} {} {} {}",
            st.read.summary(),
            st.write.summary(),
            st.all().summary(),
            st.read_wait.summary(),
            st.write_wait.summary(),
            st.all_wait().summary(),
            st.read_bytes,
            st.write_bytes,
            st.trims,
            st.last_completion,
            st.attribution(),
            st.read.encoded(),
            st.write.encoded(),
            st.read_wait.encoded(),
            st.write_wait.encoded(),
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// The thread records exactly what inline recording does, whatever the batch
        /// size, and wherever in the stream the thread starts.
        #[test]
        fn threaded_statistics_equal_inline(events in events(), batch in 1usize..40, start_at in 0usize..3000) {
            let mut inline = RequestStats::default();
            inline.sink.mode = StatsThreadMode::Off;
            arm(&mut inline);
            feed(&mut inline, &events);
            finish(&mut inline);

            let mut threaded = RequestStats::default();
            threaded.sink.set_batch(batch);
            let start_at = start_at.min(events.len());
            feed(&mut threaded, &events[..start_at]);
            threaded.sink.mode = StatsThreadMode::On;
            arm(&mut threaded);
            prop_assert!(threaded.sink.thread.is_some());
            feed(&mut threaded, &events[start_at..]);
            finish(&mut threaded);
            prop_assert!(threaded.sink.thread.is_none());
            prop_assert_eq!(observed(&threaded), observed(&inline));
        }
    }

    #[test]
    fn auto_starts_after_the_inline_first_completions_and_finish_joins() {
        let mut st = RequestStats::default();
        arm(&mut st);
        let one = |st: &mut RequestStats, i: u64| {
            st.complete(i % 2 == 0, 4096, SimTime(i), SimTime(i + 100), Nanos(7))
        };
        for i in 0..AUTO_INLINE_FIRST - 1 {
            one(&mut st, i);
        }
        assert!(st.sink.thread.is_none());
        one(&mut st, AUTO_INLINE_FIRST);
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        assert_eq!(st.sink.thread.is_some(), cores > 1);
        for i in 0..10_000 {
            one(&mut st, i);
        }
        finish(&mut st);
        assert!(st.sink.thread.is_none());
        assert_eq!(st.read.count() + st.write.count(), AUTO_INLINE_FIRST + 10_000);
        assert_eq!(st.read_bytes + st.write_bytes, 4096 * (AUTO_INLINE_FIRST + 10_000));
        // Not armed again: a later completion stays inline.
        one(&mut st, 1);
        assert!(st.sink.thread.is_none());
    }

    /// Statistics with the thread running, batches of `batch`.
    fn threaded(batch: usize) -> RequestStats {
        let mut st = RequestStats::default();
        st.sink.set_batch(batch);
        st.sink.mode = StatsThreadMode::On;
        arm(&mut st);
        st
    }

    #[test]
    fn dropping_a_running_thread_does_not_hang() {
        let mut st = threaded(3);
        for i in 0..100 {
            st.complete(true, 1, SimTime(i), SimTime(i + 1), Nanos(0));
        }
        drop(st);
    }

    #[test]
    fn a_panic_on_the_statistics_thread_reaches_the_simulation() {
        let mut st = threaded(2);
        // A completion the thread refuses (test builds only): it panics mid-batch.
        let poison = Completed { flags: POISON, ..Completed::default() };
        st.sink.thread.as_mut().unwrap().push(poison);
        st.complete(true, 1, SimTime(0), SimTime(1), Nanos(0));
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            for i in 0..10 {
                st.complete(true, 1, SimTime(i), SimTime(i + 1), Nanos(0));
            }
            finish(&mut st);
        }));
        let msg = r.expect_err("the thread's panic is re-raised on the simulation's thread");
        assert_eq!(msg.downcast_ref::<&str>(), Some(&"poisoned completion"));
    }
}
