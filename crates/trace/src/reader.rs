//! [`TraceReader`]: the trace pipeline on a background thread, feeding batches of
//! requests through a bounded channel so parsing runs ahead of the simulation with
//! bounded memory.

use std::io::Read;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};

use super::parser::{TraceParser, TraceSummary};
use super::{IoRequest, TraceError, TraceFormat, TraceOptions};

/// Requests per batch sent from the reader thread (keeps per-request overhead low).
const BATCH: usize = 4096;
/// Batches in flight (bounded memory: `BATCH * DEPTH * 32 B` = 1 MiB).
const DEPTH: usize = 8;

enum Msg {
    Batch(Vec<IoRequest>),
    Error(TraceError),
    Done(TraceSummary),
}

/// Streams the requests of a trace, parsed on a background thread.
///
/// Implements `Iterator<Item = Result<IoRequest, TraceError>>`; an `Err` is final.
/// After the iterator returned `None`, [`TraceReader::summary`] is complete.
pub struct TraceReader {
    rx: Receiver<Msg>,
    batch: std::vec::IntoIter<IoRequest>,
    name: Arc<str>,
    format: TraceFormat,
    partial: TraceSummary,
    summary: Option<TraceSummary>,
    delivered: u64,
    finished: bool,
    cancel: Arc<AtomicBool>,
    declaration: Option<Arc<str>>,
    /// The error the stream stopped at, until taken ([`RequestSource::take_error`], or
    /// as the iterator's last item).
    error: Option<TraceError>,
}

impl TraceReader {
    /// Open a trace file for one pass (`-` is standard input; a pipe streams, read
    /// once — use [`crate::TraceInput`] to read one twice). `logical_capacity_bytes` is
    /// the simulated logical capacity for the `beyond_capacity` policy (`u64::MAX`:
    /// unbounded, no wrap or reject).
    pub fn open(
        path: &Path,
        opts: &TraceOptions,
        logical_capacity_bytes: u64,
    ) -> Result<TraceReader, TraceError> {
        let src = crate::input::open_once(path)?;
        TraceReader::from_reader(&crate::input::display_name(path), src, None, opts, logical_capacity_bytes)
    }

    /// Read a trace from any byte source (compressed or not). `format` overrides
    /// `opts.format`; with neither, the format is sniffed.
    pub fn from_reader<R: Read + Send + 'static>(
        name: &str,
        reader: R,
        format: Option<TraceFormat>,
        opts: &TraceOptions,
        logical_capacity_bytes: u64,
    ) -> Result<TraceReader, TraceError> {
        let parser = TraceParser::new(name, Box::new(reader), format, opts, logical_capacity_bytes)?;
        let format = parser.format();
        let partial = parser.summary();
        let declaration = parser.declaration().cloned();
        let (tx, rx) = sync_channel(DEPTH);
        let cancel = Arc::new(AtomicBool::new(false));
        let thread_cancel = cancel.clone();
        let name: Arc<str> = name.into();
        std::thread::Builder::new()
            .name("lamina-trace".into())
            .spawn(move || pump(parser, tx, &thread_cancel))
            .map_err(|e| TraceError::io(&name, e))?;
        Ok(TraceReader {
            rx,
            batch: Vec::new().into_iter(),
            name,
            format,
            partial,
            summary: None,
            delivered: 0,
            finished: false,
            cancel,
            declaration,
            error: None,
        })
    }

    /// The format being read (detected or forced).
    pub fn format(&self) -> TraceFormat {
        self.format
    }

    /// The trace's leading `lamina-trace-gen:` comment, verbatim (see
    /// [`TraceParser::declaration`]).
    pub fn declaration(&self) -> Option<&str> {
        self.declaration.as_deref()
    }

    /// What was read: complete after the iterator ended; before that a partial
    /// summary (`complete = false`) with the requests delivered so far.
    pub fn summary(&self) -> TraceSummary {
        match &self.summary {
            Some(s) => s.clone(),
            None => TraceSummary { requests: self.delivered, ..self.partial.clone() },
        }
    }
}

/// The reader thread: parse, batch, send; stop when the receiver is gone.
fn pump(mut parser: TraceParser, tx: SyncSender<Msg>, cancel: &AtomicBool) {
    let mut batch = Vec::with_capacity(BATCH);
    loop {
        match parser.next_cancellable(Some(cancel)) {
            Some(Ok(r)) => {
                batch.push(r);
                if batch.len() == BATCH {
                    let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH));
                    if tx.send(Msg::Batch(full)).is_err() {
                        return;
                    }
                }
            }
            Some(Err(e)) => {
                if !batch.is_empty() && tx.send(Msg::Batch(std::mem::take(&mut batch))).is_err() {
                    return;
                }
                let _ = tx.send(Msg::Error(e));
                return;
            }
            None => {
                if !batch.is_empty() && tx.send(Msg::Batch(std::mem::take(&mut batch))).is_err() {
                    return;
                }
                let _ = tx.send(Msg::Done(parser.summary()));
                return;
            }
        }
    }
}

impl Iterator for TraceReader {
    type Item = Result<IoRequest, TraceError>;

    /// [`RequestSource::next_request`], with the error it stops at as the last item.
    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        match self.next_request() {
            Some(r) => Some(Ok(r)),
            None => self.error.take().map(Err),
        }
    }
}

impl TraceReader {
    /// [`RequestSource::next_request`] once the batch at hand is used up: wait for the
    /// next one (and return its first request), or the end, or an error (kept in
    /// `error`).
    #[cold]
    #[inline(never)]
    fn next_batch(&mut self) -> Option<IoRequest> {
        loop {
            if let Some(r) = self.batch.next() {
                self.delivered += 1;
                return Some(r);
            }
            if self.finished {
                return None;
            }
            match self.rx.recv() {
                Ok(Msg::Batch(b)) => self.batch = b.into_iter(),
                Ok(Msg::Error(e)) => {
                    self.finished = true;
                    self.error = Some(e);
                    return None;
                }
                Ok(Msg::Done(s)) => {
                    self.finished = true;
                    self.summary = Some(s);
                    return None;
                }
                Err(_) => {
                    self.finished = true;
                    self.error = Some(TraceError::ReaderStopped { file: self.name.clone() });
                    return None;
                }
            }
        }
    }
}

/// A stream of requests that holds its error aside, for a consumer that moves every
/// request through its own buffers (the replay's look-ahead): its requests come as plain
/// [`IoRequest`]s, not as the `Result<IoRequest, TraceError>` of an iterator. Moving such
/// a 120-byte `Result` per request let the compiler copy it in pieces whose loads
/// straddled stores just made, which a store buffer cannot forward: a stall per request
/// that came and went with unrelated code changes (docs/performance.md, "Round of
/// 2026-12-03").
pub trait RequestSource {
    /// The next request; `None` at the end of the trace or at an error
    /// ([`RequestSource::take_error`] tells which). After `None` it stays `None`.
    fn next_request(&mut self) -> Option<IoRequest>;

    /// The error the stream stopped at (once; `None` after a clean end, or before the
    /// stream ended).
    fn take_error(&mut self) -> Option<TraceError>;
}

impl<S: RequestSource + ?Sized> RequestSource for &mut S {
    #[inline(always)]
    fn next_request(&mut self) -> Option<IoRequest> {
        (**self).next_request()
    }

    fn take_error(&mut self) -> Option<TraceError> {
        (**self).take_error()
    }
}

/// Any iterator of `Result<IoRequest, TraceError>` as a [`RequestSource`]: its requests
/// up to its first error (kept for [`RequestSource::take_error`]) or its end.
#[derive(Debug)]
pub struct Results<I> {
    inner: I,
    error: Option<TraceError>,
    done: bool,
}

impl<I> Results<I> {
    /// Wrap `inner`.
    pub fn new(inner: I) -> Results<I> {
        Results { inner, error: None, done: false }
    }
}

impl<I: Iterator<Item = Result<IoRequest, TraceError>>> RequestSource for Results<I> {
    #[inline]
    fn next_request(&mut self) -> Option<IoRequest> {
        if self.done {
            return None;
        }
        match self.inner.next() {
            Some(Ok(r)) => Some(r),
            Some(Err(e)) => {
                self.error = Some(e);
                self.done = true;
                None
            }
            None => {
                self.done = true;
                None
            }
        }
    }

    fn take_error(&mut self) -> Option<TraceError> {
        self.error.take()
    }
}

impl RequestSource for TraceReader {
    /// The request at hand inlined into the caller's loop (a call returned it through
    /// memory in pieces its caller read back whole: a store-forwarding stall on every
    /// request of the replay's look-ahead); the next batch, the end or an error out of
    /// line (`next_batch`).
    #[inline(always)]
    fn next_request(&mut self) -> Option<IoRequest> {
        if let Some(r) = self.batch.next() {
            self.delivered += 1;
            return Some(r);
        }
        self.next_batch()
    }

    fn take_error(&mut self) -> Option<TraceError> {
        self.error.take()
    }
}

impl Drop for TraceReader {
    fn drop(&mut self) {
        // Stops the thread's final digest pass; a blocked send fails once `rx` drops.
        self.cancel.store(true, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    #[test]
    fn reader_is_send_and_streams_many_batches() {
        fn assert_send<T: Send>() {}
        assert_send::<TraceReader>();
        let text: String = (0..10_000u64).map(|i| format!("{} 0 {} 8 {}\n", i * 10, i * 8, i % 2)).collect();
        let r = TraceReader::from_reader("m", Cursor::new(text), None, &TraceOptions::default(), u64::MAX)
            .unwrap();
        let mut n = 0;
        let mut reader = r;
        for x in reader.by_ref() {
            let x = x.unwrap();
            assert_eq!(x.arrival.as_ns(), n * 10);
            n += 1;
        }
        assert_eq!(n, 10_000);
        let s = reader.summary();
        assert!(s.complete);
        assert_eq!(s.requests, 10_000);
        assert_eq!(s.format, TraceFormat::Ssdsim);
    }

    /// The request source yields what the iterator yields, and keeps the error aside.
    #[test]
    fn request_source_matches_the_iterator() {
        let mut text: String =
            (0..5_000u64).map(|i| format!("{} 0 {} 8 {}\n", i * 10, i * 8, i % 2)).collect();
        text.push_str("50000 0 16 8 x\n");
        let open = |text: &str| {
            TraceReader::from_reader(
                "s",
                Cursor::new(text.to_owned()),
                None,
                &TraceOptions::default(),
                u64::MAX,
            )
            .unwrap()
        };
        let items: Vec<_> = open(&text).collect();
        let Some(Err(want)) = items.last() else { panic!("the trace ends with an error") };
        let want = want.to_string();
        let mut src = open(&text);
        for item in &items[..items.len() - 1] {
            assert!(src.take_error().is_none(), "no error before the stream stops");
            assert_eq!(src.next_request().as_ref(), item.as_ref().ok());
        }
        assert_eq!(src.next_request(), None);
        assert_eq!(src.take_error().map(|e| e.to_string()), Some(want.clone()));
        assert!(src.take_error().is_none(), "the error is taken once");
        assert_eq!(src.next_request(), None);
        assert_eq!(src.summary().requests, items.len() as u64 - 1);
        // Any iterator of results, through `Results`: the same.
        let mut wrapped = Results::new(open(&text));
        assert_eq!(std::iter::from_fn(|| wrapped.next_request()).count(), items.len() - 1);
        assert_eq!(wrapped.take_error().map(|e| e.to_string()), Some(want));
        assert_eq!(wrapped.next_request(), None);
        text.truncate(text.len() - "50000 0 16 8 x\n".len());
        let mut clean = open(&text);
        assert_eq!(std::iter::from_fn(|| clean.next_request()).count(), 5_000);
        assert!(clean.take_error().is_none());
        assert!(clean.summary().complete);
    }

    #[test]
    fn errors_are_final_and_early_drop_is_clean() {
        let text = "0 0 0 8 1\n1 0 0 8 x\n";
        let mut r =
            TraceReader::from_reader("e", Cursor::new(text), None, &TraceOptions::default(), u64::MAX)
                .unwrap();
        assert!(matches!(r.next(), Some(Err(TraceError::Field { field: "op", line: 2, .. }))));
        assert!(r.next().is_none());
        let big: String = (0..100_000u64).map(|i| format!("{i} 0 {i} 8 1\n")).collect();
        let mut r = TraceReader::from_reader("d", Cursor::new(big), None, &TraceOptions::default(), u64::MAX)
            .unwrap();
        assert!(r.next().unwrap().is_ok());
        drop(r);
    }
}
