//! The synchronous trace pipeline: lines → requests → transforms → reorder window.
//! [`super::TraceReader`] runs it on a background thread; tests, fuzzers and the
//! parse benchmark drive it directly.

use std::collections::{BTreeMap, VecDeque};
use std::io::Read;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use lamina_nand_model::SimTime;
use serde::Serialize;

use super::detect::{blkparse_has_q, detect};
use super::error::{Problem, TraceError, excerpt};
use super::formats::{FieldErr, LineParser, Parsed, RawRequest, trim};
use super::options::{BlkparseEvent, CapacityPolicy, OnError, TraceOptions};
use super::source::{Compression, LineError, LineReader, MAX_LINE, open_stream};
use super::{IoRequest, TraceFormat};

/// Bytes of text sniffed for format detection (and the blkparse `Q` look-ahead).
const SNIFF_BYTES: usize = 256 * 1024;
/// Error messages kept verbatim in the summary.
const KEPT_ERRORS: usize = 10;

/// What reading a trace did; recorded in run reports.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TraceSummary {
    /// File name as given.
    pub file: String,
    /// The format read (detected or forced).
    pub format: TraceFormat,
    /// Whether the format was detected (false: forced by option).
    pub format_detected: bool,
    /// Compression of the file.
    pub compression: Compression,
    /// Whether the text came out of a tar archive.
    pub tar: bool,
    /// Lines read (1-based numbering ends here).
    pub lines: u64,
    /// Decompressed bytes read (the whole stream, also when `limit` stopped parsing early).
    pub bytes: u64,
    /// Content digest of the decompressed bytes: `xxh3-64:` + 16 hex digits (XXH3-64, seed 0).
    pub digest: String,
    /// Requests delivered.
    pub requests: u64,
    /// Blank lines, headers, and lines that are not requests (other blkparse events, footers).
    pub ignored_lines: u64,
    /// Requests dropped because their device was not selected.
    pub filtered_device: u64,
    /// Requests dropped by the `skip` option.
    pub skipped_by_option: u64,
    /// Requests whose offset was wrapped modulo the capacity.
    pub wrapped: u64,
    /// Bad lines skipped under `on_error = "skip"`.
    pub errors_skipped: u64,
    /// Bad lines skipped, by reason (`not-a-number`, `zero-size`, `out-of-order`, …).
    pub skipped_reasons: BTreeMap<String, u64>,
    /// The first few skipped errors, verbatim.
    pub first_errors: Vec<String>,
    /// True once the whole trace was read (false for a partial summary).
    pub complete: bool,
}

/// A request waiting in the reorder window (time still in the trace's clock).
#[derive(Clone, Copy)]
struct Pending {
    time: u64,
    line: u64,
    device: u32,
    offset: u64,
    size: u64,
    op: super::IoOp,
}

/// Synchronous trace parser: an iterator of requests after every transform.
///
/// Errors are terminal: after an `Err` the iterator returns `None`. With
/// `on_error = "skip"` bad lines are counted instead, and only exceeding
/// `max_errors` (or an I/O error) yields an `Err`.
pub struct TraceParser {
    name: Arc<str>,
    lines: LineReader,
    parser: LineParser,
    opts: TraceOptions,
    capacity: u64,
    window: VecDeque<Pending>,
    released: Option<u64>,
    t0: Option<u64>,
    to_skip: u64,
    header_checked: bool,
    generic_skip: u64,
    input_done: bool,
    done: bool,
    summary: TraceSummary,
}

impl TraceParser {
    /// Open `reader` (any compression, tar), detect the format unless `format` or
    /// `opts.format` names it, and prepare to parse. `logical_capacity_bytes` is the
    /// simulated logical capacity (`u64::MAX`: no capacity transform).
    pub fn new(
        name: &str,
        reader: Box<dyn Read + Send>,
        format: Option<TraceFormat>,
        opts: &TraceOptions,
        logical_capacity_bytes: u64,
    ) -> Result<TraceParser, TraceError> {
        opts.validate()?;
        if logical_capacity_bytes == 0 {
            return Err(TraceError::Options {
                key: "capacity",
                message: "the logical capacity is 0 bytes".into(),
            });
        }
        let name: Arc<str> = name.into();
        let (text, compression, tar) = open_stream(&name, reader)?;
        let mut lines = LineReader::new(text);
        lines.prefill(SNIFF_BYTES).map_err(|e| TraceError::io(&name, e))?;
        let complete = lines.at_eof();
        let prefix = lines.buffered();
        let prefix = lines_prefix(prefix, complete);
        let forced = format.or(opts.format);
        let fmt = match forced {
            Some(f) => f,
            None => detect(prefix, complete)
                .map_err(|reason| TraceError::Detect { file: name.clone(), reason })?,
        };
        if fmt == TraceFormat::Generic && opts.generic.is_none() {
            return Err(TraceError::Options {
                key: "generic",
                message: "format \"generic\" needs a column mapping".into(),
            });
        }
        let blk = match opts.blkparse_event {
            BlkparseEvent::Auto if !blkparse_has_q(prefix) => BlkparseEvent::D,
            e => e,
        };
        let parser = LineParser::new(fmt, opts.generic.as_ref(), blk);
        let summary = TraceSummary {
            file: name.to_string(),
            format: fmt,
            format_detected: forced.is_none(),
            compression,
            tar,
            lines: 0,
            bytes: 0,
            digest: String::new(),
            requests: 0,
            ignored_lines: 0,
            filtered_device: 0,
            skipped_by_option: 0,
            wrapped: 0,
            errors_skipped: 0,
            skipped_reasons: BTreeMap::new(),
            first_errors: Vec::new(),
            complete: false,
        };
        Ok(TraceParser {
            name,
            lines,
            parser,
            opts: opts.clone(),
            capacity: logical_capacity_bytes,
            window: VecDeque::with_capacity(opts.reorder_window.min(1 << 16) as usize + 1),
            released: None,
            t0: None,
            to_skip: opts.skip,
            header_checked: false,
            generic_skip: opts.generic.as_ref().map_or(0, |g| g.skip_lines),
            input_done: false,
            done: false,
            summary,
        })
    }

    /// The format being read.
    pub fn format(&self) -> TraceFormat {
        self.summary.format
    }

    /// The summary so far (complete once the iterator returned `None`).
    pub fn summary(&self) -> TraceSummary {
        let mut s = self.summary.clone();
        s.lines = self.lines.lines();
        s.bytes = self.lines.bytes();
        s.digest = format!("xxh3-64:{:016x}", self.lines.digest());
        s
    }

    /// Read the rest of the input (digesting it) after parsing stopped early.
    fn finish(&mut self, cancel: Option<&AtomicBool>) -> Option<TraceError> {
        self.done = true;
        if let Err(e) = self.lines.drain(cancel) {
            return Some(TraceError::io(&self.name, e));
        }
        self.summary.complete = true;
        None
    }

    /// Like `next`, but the final drain of unparsed input stops when `cancel` is set.
    pub(crate) fn next_cancellable(
        &mut self,
        cancel: Option<&AtomicBool>,
    ) -> Option<Result<IoRequest, TraceError>> {
        if self.done {
            return None;
        }
        loop {
            if self.opts.limit.is_some_and(|l| self.summary.requests >= l) {
                self.window.clear();
                return self.finish(cancel).map(Err);
            }
            if self.window.len() > self.opts.reorder_window as usize
                || (self.input_done && !self.window.is_empty())
            {
                let p = self.window.pop_front().expect("window is not empty");
                self.released = Some(p.time);
                if self.to_skip > 0 {
                    self.to_skip -= 1;
                    self.summary.skipped_by_option += 1;
                    continue;
                }
                match self.release(p) {
                    Ok(r) => return Some(Ok(r)),
                    Err(e) => match self.on_line_error(e) {
                        Some(e) => return Some(Err(e)),
                        None => continue,
                    },
                }
            }
            if self.input_done {
                return self.finish(cancel).map(Err);
            }
            let step = match self.lines.next_line() {
                Err(LineError::Io(e)) => Err(TraceError::io(&self.name, e)),
                Err(LineError::TooLong(line)) => {
                    Err(TraceError::LineTooLong { file: self.name.clone(), line, max_bytes: MAX_LINE })
                }
                Ok(None) => {
                    self.input_done = true;
                    continue;
                }
                Ok(Some((line_no, line))) => Self::line(
                    &self.name,
                    &mut self.parser,
                    &self.opts,
                    self.capacity,
                    &mut self.summary,
                    &mut self.header_checked,
                    &mut self.generic_skip,
                    line_no,
                    line,
                ),
            };
            match step {
                Ok(Some(p)) => {
                    if let Err(e) = self.insert(p) {
                        if let Some(e) = self.on_line_error(e) {
                            return Some(Err(e));
                        }
                    }
                }
                Ok(None) => {}
                Err(e) => {
                    if let Some(e) = self.on_line_error(e) {
                        return Some(Err(e));
                    }
                }
            }
        }
    }

    /// Count a skippable error, or end the iteration with it.
    fn on_line_error(&mut self, e: TraceError) -> Option<TraceError> {
        if self.opts.on_error == OnError::Skip && e.is_line_error() {
            self.summary.errors_skipped += 1;
            *self.summary.skipped_reasons.entry(e.kind().to_owned()).or_insert(0) += 1;
            if self.summary.first_errors.len() < KEPT_ERRORS {
                self.summary.first_errors.push(e.to_string());
            }
            if self.summary.errors_skipped > self.opts.max_errors {
                self.done = true;
                return Some(TraceError::TooManyErrors {
                    file: self.name.clone(),
                    count: self.summary.errors_skipped,
                    max: self.opts.max_errors,
                    last: Box::new(e),
                });
            }
            return None;
        }
        self.done = true;
        Some(e)
    }

    /// One line → at most one pending request (before reordering).
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn line(
        name: &Arc<str>,
        parser: &mut LineParser,
        opts: &TraceOptions,
        capacity: u64,
        summary: &mut TraceSummary,
        header_checked: &mut bool,
        generic_skip: &mut u64,
        line_no: u64,
        line: &[u8],
    ) -> Result<Option<Pending>, TraceError> {
        if *generic_skip > 0 {
            *generic_skip -= 1;
            summary.ignored_lines += 1;
            return Ok(None);
        }
        let t = trim(line);
        if t.is_empty() {
            summary.ignored_lines += 1;
            return Ok(None);
        }
        if !*header_checked {
            *header_checked = true;
            if parser.allows_header() && looks_like_header(t) {
                summary.ignored_lines += 1;
                return Ok(None);
            }
        }
        let field_err = |e: FieldErr<'_>| TraceError::Field {
            file: name.clone(),
            line: line_no,
            field: e.field,
            text: excerpt(e.text),
            problem: e.problem,
            detail: e.detail.to_owned(),
        };
        let raw = match parser.parse(t) {
            Ok(Parsed::Request(r)) => r,
            Ok(Parsed::Ignore) => {
                summary.ignored_lines += 1;
                return Ok(None);
            }
            Err(e) => return Err(field_err(e)),
        };
        let RawRequest { time_ns, mut device, mut offset, mut size, op } = raw;
        if !opts.devices.is_empty() && !opts.devices.contains(&device) {
            summary.filtered_device += 1;
            return Ok(None);
        }
        let bad = |field: &'static str, value: u64, problem: Problem, detail: String| TraceError::Field {
            file: name.clone(),
            line: line_no,
            field,
            text: value.to_string(),
            problem,
            detail,
        };
        if opts.fold_devices {
            offset = (device as u64)
                .checked_mul(opts.fold_stride_bytes)
                .and_then(|d| d.checked_add(offset))
                .ok_or_else(|| bad("offset", offset, Problem::Overflow, "after folding devices".into()))?;
            device = 0;
        }
        if offset.checked_add(size).is_none() {
            return Err(bad(
                "offset",
                offset,
                Problem::Overflow,
                format!("offset + size ({size}) overflows"),
            ));
        }
        if opts.align_bytes > 1 {
            let a = opts.align_bytes as u64;
            let start = offset / a * a;
            let end = (offset + size)
                .checked_next_multiple_of(a)
                .ok_or_else(|| bad("offset", offset, Problem::Overflow, "after alignment".into()))?;
            offset = start;
            size = end - start;
        }
        if capacity != u64::MAX && offset + size > capacity {
            if size > capacity {
                return Err(bad(
                    "size",
                    size,
                    Problem::BeyondCapacity,
                    format!("larger than the capacity of {capacity} bytes"),
                ));
            }
            match opts.beyond_capacity {
                CapacityPolicy::Reject => {
                    return Err(bad(
                        "offset",
                        offset,
                        Problem::BeyondCapacity,
                        format!("+ {size} bytes exceeds {capacity} bytes; beyond_capacity = \"reject\""),
                    ));
                }
                CapacityPolicy::Wrap => {
                    offset %= capacity;
                    if offset + size > capacity {
                        offset = capacity - size;
                    }
                    summary.wrapped += 1;
                }
            }
        }
        Ok(Some(Pending { time: time_ns, line: line_no, device, offset, size, op }))
    }

    /// Insert into the reorder window, stable for equal times.
    #[inline]
    fn insert(&mut self, p: Pending) -> Result<(), TraceError> {
        if let Some(r) = self.released
            && p.time < r
        {
            return Err(TraceError::Disorder {
                file: self.name.clone(),
                line: p.line,
                time_ns: p.time,
                released_ns: r,
                window: self.opts.reorder_window,
            });
        }
        match self.window.back() {
            Some(b) if b.time > p.time => {
                let i = self.window.partition_point(|x| x.time <= p.time);
                self.window.insert(i, p);
            }
            _ => self.window.push_back(p),
        }
        Ok(())
    }

    /// Rebase and scale a request leaving the window.
    #[inline]
    fn release(&mut self, p: Pending) -> Result<IoRequest, TraceError> {
        let t0 = *self.t0.get_or_insert(p.time);
        let rel = if self.opts.rebase {
            assert!(p.time >= t0, "reorder window released time out of order");
            p.time - t0
        } else {
            p.time
        };
        let arrival = self.opts.time_scale.apply(rel).ok_or_else(|| TraceError::Field {
            file: self.name.clone(),
            line: p.line,
            field: "time",
            text: rel.to_string(),
            problem: Problem::Overflow,
            detail: format!("× time_scale {}", self.opts.time_scale),
        })?;
        self.summary.requests += 1;
        Ok(IoRequest {
            arrival: SimTime(arrival),
            device: p.device,
            offset_bytes: p.offset,
            size_bytes: p.size,
            op: p.op,
        })
    }
}

impl Iterator for TraceParser {
    type Item = Result<IoRequest, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_cancellable(None)
    }
}

/// A first line is a header if every field starts with a letter (`Timestamp,Response,…`).
fn looks_like_header(line: &[u8]) -> bool {
    let sep = if memchr::memchr(b',', line).is_some() { b',' } else { b' ' };
    line.split(|&b| b == sep || b == b'\t')
        .map(trim)
        .filter(|f| !f.is_empty())
        .all(|f| f[0].is_ascii_alphabetic() || f[0] == b'_' || f[0] == b'#' || f[0] == b'"')
}

/// The prefix, cut at its last complete line unless it is the whole stream.
fn lines_prefix(prefix: &[u8], complete: bool) -> &[u8] {
    if complete {
        return prefix;
    }
    match memchr::memrchr(b'\n', prefix) {
        Some(i) => &prefix[..=i],
        None => prefix,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn run(text: &str, opts: &TraceOptions, cap: u64) -> (Vec<IoRequest>, Option<TraceError>, TraceSummary) {
        let mut p = TraceParser::new("t", Box::new(Cursor::new(text.to_owned())), None, opts, cap).unwrap();
        let mut out = Vec::new();
        let mut err = None;
        for r in p.by_ref() {
            match r {
                Ok(r) => out.push(r),
                Err(e) => err = Some(e),
            }
        }
        let s = p.summary();
        (out, err, s)
    }

    #[test]
    fn reorders_within_the_window_and_rejects_beyond() {
        let text = "10 0 0 1 1\n30 0 1 1 1\n20 0 2 1 1\n40 0 3 1 1\n";
        let (v, e, _) = run(text, &TraceOptions::default(), u64::MAX);
        assert!(e.is_none());
        assert_eq!(v.iter().map(|r| r.arrival.as_ns()).collect::<Vec<_>>(), vec![0, 10, 20, 30]);
        let opts = TraceOptions { reorder_window: 0, ..TraceOptions::default() };
        let (v, e, _) = run(text, &opts, u64::MAX);
        assert_eq!(v.len(), 2);
        let e = e.unwrap();
        assert!(matches!(e, TraceError::Disorder { line: 3, .. }), "{e}");
        assert!(e.to_string().starts_with("t:3: "), "{e}");
    }

    #[test]
    fn skip_limit_rebase_scale() {
        let text = "100 0 0 1 1\n200 0 1 1 0\n300 0 2 1 1\n400 0 3 1 0\n";
        let opts = TraceOptions {
            skip: 1,
            limit: Some(2),
            time_scale: "1/2".parse().unwrap(),
            ..TraceOptions::default()
        };
        let (v, e, s) = run(text, &opts, u64::MAX);
        assert!(e.is_none());
        assert_eq!(
            v.iter().map(|r| (r.arrival.as_ns(), r.offset_bytes)).collect::<Vec<_>>(),
            vec![(0, 512), (50, 1024)]
        );
        assert_eq!((s.requests, s.skipped_by_option, s.lines), (2, 1, 4));
        assert!(s.complete);
        let opts = TraceOptions { rebase: false, ..TraceOptions::default() };
        let (v, _, _) = run(text, &opts, u64::MAX);
        assert_eq!(v[0].arrival.as_ns(), 100);
    }

    #[test]
    fn capacity_wrap_and_reject() {
        let text = "0 0 10 4 1\n1 0 3 2 1\n";
        let (v, e, s) = run(text, &TraceOptions::default(), 8 * 512);
        assert!(e.is_none());
        // 10 mod 8 = 2 → [2, 6) sectors; the second request fits as is.
        assert_eq!(v.iter().map(|r| r.offset_bytes / 512).collect::<Vec<_>>(), vec![2, 3]);
        assert_eq!(s.wrapped, 1);
        let (v, _, _) = run("0 0 7 4 1\n", &TraceOptions::default(), 8 * 512);
        assert_eq!(v[0].offset_bytes, 4 * 512, "moved back to end at the capacity");
        let opts = TraceOptions { beyond_capacity: CapacityPolicy::Reject, ..TraceOptions::default() };
        let (_, e, _) = run(text, &opts, 8 * 512);
        assert!(matches!(e, Some(TraceError::Field { problem: Problem::BeyondCapacity, line: 1, .. })));
        let (_, e, _) = run("0 0 0 9 1\n", &TraceOptions::default(), 8 * 512);
        assert!(matches!(e, Some(TraceError::Field { field: "size", problem: Problem::BeyondCapacity, .. })));
    }

    #[test]
    fn devices_fold_align() {
        let text = "0 0 1 1 1\n1 1 1 1 1\n2 2 1 1 1\n";
        let opts = TraceOptions { devices: vec![1, 2], ..TraceOptions::default() };
        let (v, _, s) = run(text, &opts, u64::MAX);
        assert_eq!(v.iter().map(|r| r.device).collect::<Vec<_>>(), vec![1, 2]);
        assert_eq!(s.filtered_device, 1);
        let opts = TraceOptions {
            fold_devices: true,
            fold_stride_bytes: 1 << 20,
            align_bytes: 4096,
            ..TraceOptions::default()
        };
        let (v, _, _) = run(text, &opts, u64::MAX);
        assert!(v.iter().all(|r| r.device == 0 && r.size_bytes == 4096));
        assert_eq!(v.iter().map(|r| r.offset_bytes).collect::<Vec<_>>(), vec![0, 1 << 20, 2 << 20]);
    }

    #[test]
    fn on_error_skip_counts_and_caps() {
        let text = "0 0 1 1 1\n0 0 x 1 1\n1 0 1 0 1\n2 0 1 1 1\n";
        let opts = TraceOptions { on_error: OnError::Skip, ..TraceOptions::default() };
        let (v, e, s) = run(text, &opts, u64::MAX);
        assert!(e.is_none());
        assert_eq!(v.len(), 2);
        assert_eq!(s.errors_skipped, 2);
        assert_eq!(s.skipped_reasons.get("not-a-number"), Some(&1));
        assert_eq!(s.skipped_reasons.get("zero-size"), Some(&1));
        assert!(
            s.first_errors[0].contains("t:2: field `lsn`: \"x\" is not a number"),
            "{:?}",
            s.first_errors
        );
        let opts = TraceOptions { on_error: OnError::Skip, max_errors: 1, ..TraceOptions::default() };
        let (_, e, _) = run(text, &opts, u64::MAX);
        assert!(matches!(e, Some(TraceError::TooManyErrors { count: 2, max: 1, .. })));
        let (v, e, _) = run(text, &TraceOptions::default(), u64::MAX);
        assert_eq!(v.len(), 0, "the bad line stops the run before the window releases");
        assert_eq!(e.unwrap().to_string(), "t:2: field `lsn`: \"x\" is not a number");
    }

    #[test]
    fn headers_blank_lines_and_crlf() {
        let text = "time dev lsn size op\r\n0 0 1 1 1\r\n\r\n  \r\n5 0 2 1 0";
        let (v, e, s) = run(text, &TraceOptions::default(), u64::MAX);
        assert!(e.is_none(), "{e:?}");
        assert_eq!(v.len(), 2);
        assert_eq!(s.ignored_lines, 3);
    }
}
