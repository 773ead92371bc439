//! [`TraceCache`]: traces parsed once into memory and replayed from there by many runs.
//!
//! A sweep replays each trace under many configurations (`experiments/die-binding.toml`:
//! 60 runs per trace), and a run reads its trace twice (the prefill pass, then the
//! replay). Without the cache every run parses, and for a compressed trace decompresses,
//! the same file twice: on the sweep's 720 runs that was 7.6 % of all CPU time
//! (docs/performance.md). Runs with the same parsing inputs — the file, the `[trace]`
//! options and the simulated logical capacity — get the same requests, so the cache
//! parses each such triple once and hands every run a cursor over the stored requests.
//!
//! Nothing observable depends on the cache: a run replays the same requests in the same
//! order and reports the same trace summary (the one the streaming reader would give at
//! the same point), so its report is byte-identical (`tests/trace_cache.rs`).
//! What the cache does not take, it leaves to the streaming path
//! ([`crate::run_built`]): standard input and pipes (read once), traces with an error
//! (the streaming run reports it where it occurs, as before), and traces whose requests
//! would not fit the cache's memory budget.
//!
//! Memory: the stored requests take at most the budget (entries used least recently go
//! first); beyond that, each parse in progress holds up to the budget until it finishes
//! or gives up, and a run holds the trace it replays until it ends.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use crate::trace::{IoRequest, TraceError, TraceInput, TraceOptions, TraceParser, TraceSummary};

/// A trace's requests, parsed whole, with what its reader reports about them.
#[derive(Debug)]
pub struct ParsedTrace {
    requests: Vec<IoRequest>,
    /// What the streaming reader reports before its end: the parser's summary right
    /// after it opened the file (the requests delivered are counted on top).
    partial: TraceSummary,
    /// What it reports after its end.
    summary: TraceSummary,
    /// The file's size in bytes (as read; compressed for a compressed file).
    file_bytes: u64,
}

impl ParsedTrace {
    /// Parse the trace file `path` whole with `opts` for a device of
    /// `logical_capacity_bytes`; `None` when it is not a regular file, cannot be read or
    /// has an error (the streaming run then reports the error where it occurs), or has
    /// more than `max_requests` requests.
    pub fn parse(
        path: &Path,
        opts: &TraceOptions,
        logical_capacity_bytes: u64,
        max_requests: u64,
    ) -> Option<ParsedTrace> {
        // Standard input and pipes can be read once only: they stream.
        if crate::trace::is_stdin(path) {
            return None;
        }
        let meta = std::fs::metadata(path).ok().filter(|m| m.is_file())?;
        let input = TraceInput::open(path).ok()?;
        let mut parser =
            TraceParser::new(input.name(), Box::new(input.file().ok()?), None, opts, logical_capacity_bytes)
                .ok()?;
        let partial = parser.summary();
        let mut requests = Vec::new();
        for r in parser.by_ref() {
            if requests.len() as u64 >= max_requests {
                return None;
            }
            requests.push(r.ok()?);
        }
        requests.shrink_to_fit();
        Some(ParsedTrace { requests, partial, summary: parser.summary(), file_bytes: meta.len() })
    }

    /// The requests, in trace order.
    pub fn requests(&self) -> &[IoRequest] {
        &self.requests
    }

    /// What the reader reports after the trace's end.
    pub fn summary(&self) -> &TraceSummary {
        &self.summary
    }

    /// The file's size in bytes.
    pub fn file_bytes(&self) -> u64 {
        self.file_bytes
    }

    /// Memory the requests take.
    pub fn heap_bytes(&self) -> u64 {
        (self.requests.capacity() * std::mem::size_of::<IoRequest>()) as u64
    }

    /// A cursor over the requests from the start, as a streaming reader of the file
    /// delivers them.
    pub fn cursor(self: &Arc<Self>) -> ParsedCursor {
        ParsedCursor { trace: self.clone(), next: 0, finished: false }
    }
}

/// The requests of a [`ParsedTrace`] in order, as [`crate::trace::TraceReader`] yields
/// them (never an error: a trace with one is not parsed into memory).
#[derive(Debug)]
pub struct ParsedCursor {
    trace: Arc<ParsedTrace>,
    next: usize,
    finished: bool,
}

impl ParsedCursor {
    /// What the streaming reader would report at this point: the whole summary once the
    /// cursor returned `None`, before that the partial one with the requests delivered.
    pub fn summary(&self) -> TraceSummary {
        if self.finished {
            self.trace.summary.clone()
        } else {
            TraceSummary { requests: self.next as u64, ..self.trace.partial.clone() }
        }
    }
}

impl crate::trace::RequestSource for ParsedCursor {
    #[inline]
    fn next_request(&mut self) -> Option<IoRequest> {
        match self.trace.requests.get(self.next) {
            Some(&r) => {
                self.next += 1;
                Some(r)
            }
            None => {
                self.finished = true;
                None
            }
        }
    }

    /// Never an error (see the type).
    fn take_error(&mut self) -> Option<TraceError> {
        None
    }
}

impl Iterator for ParsedCursor {
    type Item = Result<IoRequest, TraceError>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        crate::trace::RequestSource::next_request(self).map(Ok)
    }
}

/// Parsed traces shared by the runs of one process (e.g. a sweep's workers), within a
/// memory budget. Thread-safe; two runs asking for the same trace at once parse it once
/// (the second waits for the first).
#[derive(Debug)]
pub struct TraceCache {
    budget_bytes: u64,
    inner: Mutex<Entries>,
    parsed: AtomicU64,
    reused: AtomicU64,
    streamed: AtomicU64,
}

/// What a [`TraceCache`] did so far: each [`TraceCache::get`] counts once.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TraceCacheStats {
    /// Runs whose trace the cache parsed (the first of its runs).
    pub parsed: u64,
    /// Runs that replayed a trace parsed before.
    pub reused: u64,
    /// Runs left to stream their trace (not taken: see [`TraceCache`]).
    pub streamed: u64,
}

#[derive(Debug, Default)]
struct Entries {
    list: Vec<Entry>,
    /// Counts uses, to find the entry used least recently.
    clock: u64,
}

/// One parsing input and its parse (`None` inside: not cacheable, stream it).
#[derive(Debug)]
struct Entry {
    path: PathBuf,
    opts: TraceOptions,
    capacity: u64,
    slot: Arc<OnceLock<Option<Arc<ParsedTrace>>>>,
    last_use: u64,
}

impl Entry {
    fn bytes(&self) -> u64 {
        self.slot.get().and_then(Option::as_ref).map_or(0, |t| t.heap_bytes())
    }
}

/// Entries kept for traces the cache does not take (remembered so that they are not
/// parsed again), at most.
const MAX_ENTRIES: usize = 256;

impl TraceCache {
    /// A cache holding at most `budget_bytes` of parsed requests (0: it takes nothing).
    pub fn new(budget_bytes: u64) -> TraceCache {
        TraceCache {
            budget_bytes,
            inner: Mutex::new(Entries::default()),
            parsed: AtomicU64::new(0),
            reused: AtomicU64::new(0),
            streamed: AtomicU64::new(0),
        }
    }

    /// The memory budget in bytes.
    pub fn budget_bytes(&self) -> u64 {
        self.budget_bytes
    }

    /// The requests of trace file `path` parsed with `opts` for a device of
    /// `logical_capacity_bytes`, parsed now if no run did before; `None` when the
    /// cache does not take this trace (see the module docs): stream it.
    pub fn get(
        &self,
        path: &Path,
        opts: &TraceOptions,
        logical_capacity_bytes: u64,
    ) -> Option<Arc<ParsedTrace>> {
        let max_requests = self.budget_bytes / std::mem::size_of::<IoRequest>() as u64;
        if max_requests == 0 {
            self.streamed.fetch_add(1, Ordering::Relaxed);
            return None;
        }
        let slot = {
            let mut e = self.inner.lock().unwrap_or_else(|p| p.into_inner());
            e.clock += 1;
            let now = e.clock;
            let found = e
                .list
                .iter_mut()
                .find(|x| x.capacity == logical_capacity_bytes && x.path == path && x.opts == *opts);
            match found {
                Some(x) => {
                    x.last_use = now;
                    x.slot.clone()
                }
                None => {
                    let slot = Arc::new(OnceLock::new());
                    e.list.push(Entry {
                        path: path.to_owned(),
                        opts: opts.clone(),
                        capacity: logical_capacity_bytes,
                        slot: slot.clone(),
                        last_use: now,
                    });
                    slot
                }
            }
        };
        let mut parsed_here = false;
        let parsed = slot
            .get_or_init(|| {
                parsed_here = true;
                ParsedTrace::parse(path, opts, logical_capacity_bytes, max_requests).map(Arc::new)
            })
            .clone();
        let counter = match (&parsed, parsed_here) {
            (None, _) => &self.streamed,
            (Some(_), true) => &self.parsed,
            (Some(_), false) => &self.reused,
        };
        counter.fetch_add(1, Ordering::Relaxed);
        self.evict();
        parsed
    }

    /// Drop the entries used least recently until the parsed requests fit the budget
    /// and the entry count its bound. The trace of a run in progress stays alive (the
    /// run holds it) but leaves the budget's count.
    fn evict(&self) {
        let mut e = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            let used: u64 = e.list.iter().map(Entry::bytes).sum();
            if used <= self.budget_bytes && e.list.len() <= MAX_ENTRIES {
                return;
            }
            // Among finished parses only (one in progress is not counted yet); over the
            // budget, among those holding requests.
            let over_budget = used > self.budget_bytes;
            let oldest = e
                .list
                .iter()
                .enumerate()
                .filter(|(_, x)| x.slot.get().is_some() && (!over_budget || x.bytes() > 0))
                .min_by_key(|(_, x)| x.last_use)
                .map(|(i, _)| i);
            match oldest {
                Some(i) => {
                    e.list.remove(i);
                }
                None => return,
            }
        }
    }

    /// What the cache did so far.
    pub fn stats(&self) -> TraceCacheStats {
        TraceCacheStats {
            parsed: self.parsed.load(Ordering::Relaxed),
            reused: self.reused.load(Ordering::Relaxed),
            streamed: self.streamed.load(Ordering::Relaxed),
        }
    }

    /// The parsed requests held now, in bytes (at most the budget).
    pub fn held_bytes(&self) -> u64 {
        self.inner.lock().unwrap_or_else(|p| p.into_inner()).list.iter().map(Entry::bytes).sum()
    }
}
