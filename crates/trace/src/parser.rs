//! The synchronous trace pipeline: lines → requests → transforms → reorder window →
//! outlier check → skip/limit → rebase/scale. [`super::TraceReader`] runs it on a
//! background thread; tests, fuzzers and the parse benchmark drive it directly.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::io::Read;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use serde::Serialize;

use super::detect::{ambiguity_warning, detect};
use super::error::{Problem, TraceError, excerpt};
use super::formats::{FastLine, FieldErr, LineParser, Parsed, ParserSetup, RawRequest, Written, trim};
use super::options::{CapacityPolicy, OnError, OutlierPolicy, TraceOptions};
use super::source::{Compression, LineError, LineReader, MAX_LINE, SourceNotes, UTF8_BOM, open_stream};
use super::timing::{
    ABSURD_FACTOR, ABSURD_FLOOR_NS, LOOKAHEAD, Note, OutlierCheck, OutlierKind, Resolution, Verdict,
};
use super::{IoRequest, TraceFormat, TraceTime};

/// Bytes of text sniffed for format detection (and the blkparse `Q` look-ahead).
const SNIFF_BYTES: usize = 256 * 1024;
/// Error messages kept verbatim in the summary.
const KEPT_ERRORS: usize = 10;
/// The comment that carries a generated trace's intended replay settings.
pub const GEN_COMMENT: &str = "lamina-trace-gen:";
/// A timestamp resolution at least this coarse (1 ms) is reported.
pub const COARSE_RESOLUTION_NS: u64 = 1_000_000;
/// So many requests sharing one arrival instant are reported.
pub const CROWDED_INSTANT: u64 = 16;

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
    /// Blank lines, headers, comments, and lines that are not requests (other blkparse
    /// events, footers).
    pub ignored_lines: u64,
    /// Requests dropped because their device was not selected.
    pub filtered_device: u64,
    /// Requests dropped by the `skip` option.
    pub skipped_by_option: u64,
    /// Requests whose offset was wrapped modulo the capacity.
    pub wrapped: u64,
    /// Transforms and properties that change the replayed workload.
    #[serde(flatten)]
    pub changes: WorkloadChanges,
    /// What was done with absurd arrival gaps.
    pub outlier_action: OutlierPolicy,
    /// `(line, gap_ns)` of the first few requests beyond absurd gaps (docs/traces.md):
    /// the line in the joined text (of a tar archive's members), and the gap that
    /// blamed it.
    pub outlier_lines: Vec<(u64, u64)>,
    /// Settings a generated trace declares in its `# lamina-trace-gen:` comment
    /// (`host.mode`, `host.closed_loop_depth`, …), if it has one.
    pub generated_with: Option<BTreeMap<String, String>>,
    /// Bad lines skipped under `on_error = "skip"`.
    pub errors_skipped: u64,
    /// Bad lines skipped, by reason (`not-a-number`, `zero-size`, `out-of-order`, …).
    pub skipped_reasons: BTreeMap<String, u64>,
    /// The first few skipped errors, verbatim.
    pub first_errors: Vec<String>,
    /// Things the reader wants a human to know: a format detection that was a
    /// tie-break (known from the start, so also in a partial summary), absurd gaps, a
    /// truncated tar member.
    pub warnings: Vec<String>,
    /// True once the whole trace was read (false for a partial summary).
    pub complete: bool,
}

/// Counts of what changed the workload between the file and the replay, shared by the
/// reader's summary and the run report's trace section.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct WorkloadChanges {
    /// Distinct devices (volumes, LUNs, disks) folded into one address space by
    /// `fold_devices` (0 when not folding).
    pub folded_devices: u64,
    /// Whether folded devices overlay each other (`fold_stride_bytes = 0`): their
    /// addresses collide, so different volumes' blocks become the same logical pages.
    pub folded_overlaid: bool,
    /// Requests the reorder window moved ahead of a request read before them.
    pub reordered: u64,
    /// The timestamp resolution of the replayed arrivals in ns: the gcd of every
    /// arrival's distance from the first (0 when all arrive at one instant).
    pub time_resolution_ns: u64,
    /// The largest number of consecutive requests sharing one arrival instant.
    pub max_same_instant: u64,
    /// Requests blamed for absurd arrival gaps, plus the first request of each long run
    /// after a gap reported but not blamed (see `trace.outliers`, docs/traces.md).
    pub outliers: u64,
}

/// A request waiting in the reorder window (time still in the trace's clock).
///
/// In declaration order (`repr(C)`), `offset` and `size` apart: [`IoRequest`] holds them
/// side by side, and a `Pending` whose fields were just stored one by one (the outlier
/// check rewrites `time`) was read back for them in one 16-byte load, which waited for
/// the two 8-byte stores to reach the cache (the store buffer cannot forward it): half
/// of `release`'s samples.
#[derive(Clone, Copy)]
#[repr(C)]
struct Pending {
    time: u64,
    offset: u64,
    line: u64,
    size: u64,
    device: u32,
    op: super::IoOp,
}

/// The per-line stage: comments, headers, parsing and the address transforms.
struct LineStage {
    name: Arc<str>,
    parser: Box<dyn LineParser>,
    opts: TraceOptions,
    capacity: u64,
    comments: bool,
    allows_header: bool,
    header_checked: bool,
    /// The format's whole-line fast path, once the header check is done (before it,
    /// and in tests of the general way, `None`).
    fast: Option<FastLine>,
    /// The fast path to take up after the header check.
    fast_after_header: Option<FastLine>,
    generic_skip: u64,
    /// Distinct devices replayed so far (after the `devices` filter): folded into one
    /// with `fold_devices`; without it the engine ignores the device number, so more
    /// than one means their addresses overlay silently (warned).
    devices_seen: BTreeSet<u32>,
    last_device: Option<u32>,
}

/// Synchronous trace parser: an iterator of requests after every transform.
///
/// Errors are terminal: after an `Err` the iterator returns `None`. With
/// `on_error = "skip"` bad lines are counted instead, and only exceeding
/// `max_errors` (or an I/O error) yields an `Err`.
pub struct TraceParser {
    name: Arc<str>,
    lines: LineReader,
    stage: LineStage,
    opts: TraceOptions,
    notes: Arc<SourceNotes>,
    window: VecDeque<Pending>,
    /// The latest request released by the reorder window: (time, line).
    released: Option<(u64, u64)>,
    /// The line of the latest request delivered (0: none yet).
    last_line: u64,
    /// The outlier check, holding requests while it looks ahead.
    outliers: OutlierCheck<Pending>,
    /// Whether the outlier check was told the stream ended.
    outliers_ended: bool,
    /// Where each request of `outliers.first` is (`line 4`, `line 2 of b.trace`), found
    /// when it was noted (a tar member is remembered only so long).
    outlier_places: Vec<String>,
    resolution: Resolution,
    t0: Option<u64>,
    to_skip: u64,
    input_done: bool,
    done: bool,
    summary: TraceSummary,
    /// The `lamina-trace-gen:` comment among the leading comment lines, verbatim.
    declaration: Option<Arc<str>>,
}

impl TraceParser {
    /// Open a trace file for one synchronous pass (`-` is standard input): what
    /// [`crate::TraceReader::open`] parses on a background thread, parsed here on the
    /// caller's, so that [`TraceParser::last_request_place`] follows the requests taken.
    pub fn open(
        path: &Path,
        opts: &TraceOptions,
        logical_capacity_bytes: u64,
    ) -> Result<TraceParser, TraceError> {
        let src = crate::input::open_once(path)?;
        TraceParser::new(&crate::input::display_name(path), src, None, opts, logical_capacity_bytes)
    }

    /// Where the request last returned came from: `line N of FILE` (`line N of
    /// FILE:MEMBER` inside a tar archive, while the archive's member list still covers the
    /// line); `None` before the first request. A request the reorder window or the
    /// outlier check held is placed at its own line, not at the line read last.
    pub fn last_request_place(&self) -> Option<String> {
        if self.last_line == 0 {
            return None;
        }
        let member = self.summary.tar.then(|| self.notes.locate(self.last_line)).flatten();
        Some(match member {
            Some((m, l)) => format!("line {l} of {}:{m}", self.name),
            None => format!("line {} of {}", self.last_line, self.name),
        })
    }

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
        let (text, source) = open_stream(&name, reader)?;
        let mut lines = LineReader::new(text);
        lines.prefill(SNIFF_BYTES).map_err(|e| TraceError::io(&name, e))?;
        if let Some((what, from)) = super::source::wide_text(lines.buffered()) {
            let remedy = match source.compression {
                Compression::None => format!("iconv -f {from} -t UTF-8 {name} > {name}.utf8"),
                c => format!("decompress it ({c}), then iconv -f {from} -t UTF-8 IN > OUT"),
            };
            return Err(TraceError::NotText {
                file: name.clone(),
                what: format!("is {what}; Lamina reads ASCII/UTF-8 traces: convert it first: {remedy}"),
            });
        }
        if lines.buffered().starts_with(UTF8_BOM) {
            lines.skip_buffered(UTF8_BOM.len());
        }
        let complete = lines.at_eof();
        let prefix = lines_prefix(lines.buffered(), complete);
        if let Some(what) = super::source::binary_text(prefix) {
            return Err(TraceError::NotText { file: name.clone(), what });
        }
        let forced = format.or(opts.format);
        let blank = prefix.iter().all(|b| b.is_ascii_whitespace());
        let mut warnings = Vec::new();
        let fmt = match forced {
            Some(f) => f,
            None if blank && complete && opts.allow_empty => TraceFormat::Ssdsim,
            None if blank && complete => {
                return Err(TraceError::Empty { file: name.clone(), why: empty_file_why(prefix) });
            }
            None => {
                let d = detect(prefix, complete)
                    .map_err(|reason| TraceError::Detect { file: name.clone(), reason })?;
                warnings.extend(ambiguity_warning(&name, &d));
                d.format
            }
        };
        if fmt == TraceFormat::Generic && opts.generic.is_none() {
            return Err(TraceError::Options {
                key: "generic",
                message: "format \"generic\" needs a column mapping".into(),
            });
        }
        let setup =
            ParserSetup { generic: opts.generic.as_ref(), blkparse_event: opts.blkparse_event, prefix };
        let stage = LineStage {
            name: name.clone(),
            parser: fmt.imp().parser(&setup),
            opts: opts.clone(),
            capacity: logical_capacity_bytes,
            comments: fmt.imp().comments(),
            allows_header: fmt.imp().allows_header(),
            header_checked: false,
            fast: None,
            fast_after_header: fmt.imp().fast_line(),
            generic_skip: opts.generic.as_ref().map_or(0, |g| g.skip_lines),
            devices_seen: BTreeSet::new(),
            last_device: None,
        };
        let declaration: Option<Arc<str>> = leading_declaration(prefix)
            .filter(|_| fmt.imp().comments())
            .map(|d| String::from_utf8_lossy(d).into());
        let summary = TraceSummary {
            file: name.to_string(),
            format: fmt,
            format_detected: forced.is_none(),
            compression: source.compression,
            tar: source.tar,
            lines: 0,
            bytes: 0,
            digest: String::new(),
            requests: 0,
            ignored_lines: 0,
            filtered_device: 0,
            skipped_by_option: 0,
            wrapped: 0,
            changes: WorkloadChanges {
                folded_overlaid: opts.fold_devices && opts.fold_stride_bytes == 0,
                ..WorkloadChanges::default()
            },
            outlier_action: opts.outliers,
            outlier_lines: Vec::new(),
            generated_with: None,
            errors_skipped: 0,
            skipped_reasons: BTreeMap::new(),
            first_errors: Vec::new(),
            warnings,
            complete: false,
        };
        let mut parser = TraceParser {
            name,
            lines,
            stage,
            opts: opts.clone(),
            notes: source.notes,
            window: VecDeque::with_capacity(opts.reorder_window.min(1 << 16) as usize + 1),
            released: None,
            last_line: 0,
            outliers: OutlierCheck::new(opts.outliers),
            outliers_ended: false,
            outlier_places: Vec::new(),
            resolution: Resolution::default(),
            t0: None,
            to_skip: opts.skip,
            input_done: false,
            done: false,
            summary,
            declaration: declaration.clone(),
        };
        // Known from the start (not only once its line is parsed), so a partial summary
        // and `lamina trace convert`, which writes it before the first request, see it.
        if let Some(d) = &declaration {
            comment(&mut parser.summary, d.as_bytes());
        }
        Ok(parser)
    }

    /// The trace's `lamina-trace-gen:` comment (without the `# `), if one is among the
    /// comment lines before its first request: the declaration of a generated trace's
    /// intended replay settings, which `lamina trace convert` carries over.
    pub fn declaration(&self) -> Option<&Arc<str>> {
        self.declaration.as_ref()
    }

    /// Parse every line the general way (the reference the fast path is tested against).
    #[cfg(test)]
    fn general_only(mut self) -> TraceParser {
        self.stage.fast_after_header = None;
        self.stage.fast = None;
        self
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
        let seen = &self.stage.devices_seen;
        let folding = self.stage.opts.fold_devices;
        s.changes.folded_devices = if folding { seen.len() as u64 } else { 0 };
        s.changes.time_resolution_ns = self.resolution.gcd;
        s.changes.max_same_instant = self.resolution.max_same;
        s.changes.outliers = self.outliers.count;
        s.outlier_lines = self.outliers.first.iter().map(|n| (n.line, n.gap)).collect();
        if s.changes.outliers > 0 {
            s.warnings.push(outlier_warning(&s, &self.outliers.first, &self.outlier_places));
        }
        if let Some(w) = self.notes.warning() {
            s.warnings.push(w);
        }
        if !folding && seen.len() > 1 {
            let list: Vec<String> = seen.iter().take(8).map(u32::to_string).collect();
            let more = if seen.len() > 8 { ", …" } else { "" };
            s.warnings.push(format!(
                "{} devices ({}{more}) replayed into one address space, overlaid: their addresses collide \
                 (a write of one overwrites another's page); replay one with --device N \
                 (`trace.devices`), or give each its own range with --fold-devices --fold-stride BYTES",
                seen.len(),
                list.join(", ")
            ));
        }
        s
    }

    /// Read the rest of the input (digesting it) after parsing stopped early, and
    /// refuse a trace that yielded nothing.
    fn finish(&mut self, cancel: Option<&AtomicBool>) -> Option<TraceError> {
        self.done = true;
        if let Err(e) = self.lines.drain(cancel) {
            return Some(TraceError::io(&self.name, e));
        }
        if self.summary.requests == 0 && !self.opts.allow_empty {
            return Some(TraceError::Empty { file: self.name.clone(), why: empty_why(&self.summary()) });
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
            if let Some((p, verdict)) = self.outliers.pop() {
                let Verdict::Keep(time) = verdict else { continue };
                match self.deliver(Pending { time, ..p }) {
                    Some(Ok(r)) => return Some(Ok(r)),
                    Some(Err(e)) => match self.on_line_error(e) {
                        Some(e) => return Some(Err(e)),
                        None => continue,
                    },
                    None => continue,
                }
            }
            let window_full = self.window.len() > self.opts.reorder_window as usize;
            if window_full || (self.input_done && !self.window.is_empty()) {
                let p = self.window.pop_front().expect("window is not empty");
                self.released = Some((p.time, p.line));
                match self.after_window(p) {
                    Some(Ok(r)) => return Some(Ok(r)),
                    Some(Err(e)) => match self.on_line_error(e) {
                        Some(e) => return Some(Err(e)),
                        None => continue,
                    },
                    None => continue,
                }
            }
            if self.input_done {
                if !self.outliers_ended {
                    self.outliers_ended = true;
                    self.outliers.end();
                    self.place_outliers();
                    continue;
                }
                return self.finish(cancel).map(Err);
            }
            // The common line in one pass when the format has a fast path; any
            // other line (and any error) the general way, as before.
            let fast = self.stage.fast.and_then(|f| self.lines.next_parsed(|b| f.parse(b)));
            let step = match fast {
                Some((line_no, raw, line)) => self.stage.transform(&mut self.summary, line_no, line, raw),
                None => match self.lines.next_line() {
                    Err(LineError::Io(e)) => Err(TraceError::io(&self.name, e)),
                    Err(LineError::TooLong(line)) => {
                        Err(TraceError::LineTooLong { file: self.name.clone(), line, max_bytes: MAX_LINE })
                    }
                    Ok(None) => {
                        self.input_done = true;
                        continue;
                    }
                    Ok(Some((line_no, line))) => self.stage.line(&mut self.summary, line_no, line),
                },
            };
            let step = step.and_then(|p| match p {
                Some(p) => self.insert(p),
                None => Ok(()),
            });
            if let Err(e) = step {
                if let Some(e) = self.on_line_error(e) {
                    return Some(Err(e));
                }
            }
        }
    }

    /// A request leaving the reorder window: kept at once in the steady state, else
    /// held by the outlier check (which hands it back, decided, through `pop`).
    #[inline]
    fn after_window(&mut self, p: Pending) -> Option<Result<IoRequest, TraceError>> {
        if let Some(time) = self.outliers.keep_at_once(p.time) {
            return self.deliver(Pending { time, ..p });
        }
        self.outliers.push(p, p.time, p.line);
        self.place_outliers();
        None
    }

    /// Find where the requests the outlier check just noted are: their line, in its
    /// tar member (which is remembered only for a while).
    fn place_outliers(&mut self) {
        for note in &self.outliers.first[self.outlier_places.len()..] {
            let place = match self.summary.tar.then(|| self.notes.locate(note.line)).flatten() {
                Some((member, line)) => format!("line {line} of {member}"),
                None => format!("line {}", note.line),
            };
            self.outlier_places.push(place);
        }
    }

    /// Skip, then rebase and scale a kept request.
    #[inline]
    fn deliver(&mut self, p: Pending) -> Option<Result<IoRequest, TraceError>> {
        if self.to_skip > 0 {
            self.to_skip -= 1;
            self.summary.skipped_by_option += 1;
            return None;
        }
        Some(self.release(p))
    }

    /// Count a skippable error, or end the iteration with it.
    #[cold]
    fn on_line_error(&mut self, e: TraceError) -> Option<TraceError> {
        let cut_last_line = self.is_cut_last_line(&e);
        let e = self.locate(e);
        if cut_last_line {
            // The line the archive's end cut in two is not a request the trace holds;
            // the truncation warning says the data ends early, this one what was lost.
            self.summary
                .warnings
                .push(format!("{e}: the last line, cut off where the tar archive ends, was dropped"));
            return None;
        }
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

    /// `e` with its lines counted within their tar member, which it names
    /// (`archive.tar:member:line`), as `tar xf` would give them: the reader joins the
    /// members into one text, and numbered lines across them (new-user trial).
    #[cold]
    fn locate(&self, mut e: TraceError) -> TraceError {
        if !self.summary.tar {
            return e;
        }
        let at = |line: u64| self.notes.locate(line);
        let in_member =
            |line: u64| at(line).map(|(m, l)| (Arc::<str>::from(format!("{}:{m}", self.name)), m, l));
        match &mut e {
            TraceError::Field { file, line, .. }
            | TraceError::ScaledTime { file, line, .. }
            | TraceError::LineTooLong { file, line, .. } => {
                if let Some((named, _, l)) = in_member(*line) {
                    (*file, *line) = (named, l);
                }
            }
            TraceError::Disorder { file, line, earlier_line, earlier_in, .. } => {
                let late = in_member(*line);
                match at(*earlier_line) {
                    Some((m, l)) => {
                        *earlier_in = late.as_ref().is_none_or(|(_, lm, _)| *lm != m).then_some(m);
                        *earlier_line = l;
                    }
                    None => *earlier_in = Some("the archive's joined members".into()),
                }
                if let Some((named, _, l)) = late {
                    (*file, *line) = (named, l);
                }
            }
            _ => {}
        }
        e
    }

    /// Whether `e` is a field error on the last line of a tar member cut short (its
    /// data ended mid-line, as `head -c` leaves an archive).
    #[cold]
    fn is_cut_last_line(&mut self, e: &TraceError) -> bool {
        let TraceError::Field { line, .. } = e else { return false };
        if *line != self.lines.lines() || self.notes.warning().is_none() {
            return false;
        }
        self.lines.prefill(1).is_ok() && self.lines.at_eof() && self.lines.buffered().is_empty()
    }

    /// Insert into the reorder window, stable for equal times.
    #[inline]
    fn insert(&mut self, p: Pending) -> Result<(), TraceError> {
        if let Some(released) = self.released
            && p.time < released.0
        {
            return Err(self.disorder(p, released));
        }
        match self.window.back() {
            Some(b) if b.time > p.time => {
                let i = self.window.partition_point(|x| x.time <= p.time);
                self.window.insert(i, p);
                self.summary.changes.reordered += 1;
            }
            _ => self.window.push_back(p),
        }
        Ok(())
    }

    /// The error for `p`, just parsed, earlier than the request `released` (time, line):
    /// both timestamps as the trace writes them (new-user trial: they were printed in
    /// ns, and the earlier request's line was not named).
    #[cold]
    #[inline(never)]
    fn disorder(&self, p: Pending, (earlier_ns, earlier_line): (u64, u64)) -> TraceError {
        let line = trim(self.lines.last_line());
        // The parser accepted the line, so it locates the field; the ns are a fallback.
        let written = self.stage.parser.time(line).unwrap_or(Written { field: "time", text: b"", unit: 1 });
        let text = if written.text.is_empty() { p.time.to_string() } else { excerpt(written.text) };
        TraceError::Disorder {
            file: self.name.clone(),
            line: p.line,
            field: written.field,
            earlier_text: time_like(earlier_ns, written.unit, text.as_bytes()).into(),
            text: text.into(),
            earlier_line,
            earlier_in: None,
            window: self.opts.reorder_window,
        }
    }

    /// Rebase and scale a request leaving the pipeline.
    #[inline]
    fn release(&mut self, p: Pending) -> Result<IoRequest, TraceError> {
        let t0 = *self.t0.get_or_insert(p.time);
        let rel = if self.opts.rebase {
            assert!(p.time >= t0, "reorder window released time out of order");
            p.time - t0
        } else {
            p.time
        };
        let arrival = self.opts.time_scale.apply(rel).ok_or_else(|| TraceError::ScaledTime {
            file: self.name.clone(),
            line: p.line,
            arrival_ns: rel,
            rebased: self.opts.rebase,
            scale: self.opts.time_scale.to_string(),
        })?;
        self.summary.requests += 1;
        self.last_line = p.line;
        self.resolution.add(arrival);
        Ok(IoRequest {
            arrival: TraceTime(arrival),
            device: p.device,
            offset_bytes: p.offset,
            size_bytes: p.size,
            op: p.op,
        })
    }
}

impl LineStage {
    /// One line → at most one pending request (before reordering).
    #[inline]
    fn line(
        &mut self,
        summary: &mut TraceSummary,
        line_no: u64,
        line: &[u8],
    ) -> Result<Option<Pending>, TraceError> {
        if self.generic_skip > 0 {
            self.generic_skip -= 1;
            summary.ignored_lines += 1;
            return Ok(None);
        }
        let t = trim(line);
        if t.is_empty() {
            summary.ignored_lines += 1;
            return Ok(None);
        }
        if self.comments && t[0] == b'#' {
            summary.ignored_lines += 1;
            comment(summary, &t[1..]);
            return Ok(None);
        }
        if !self.header_checked {
            self.header_checked = true;
            if self.generic_skip == 0 {
                self.fast = self.fast_after_header;
            }
            if self.allows_header && looks_like_header(t) {
                summary.ignored_lines += 1;
                return Ok(None);
            }
        }
        let name = &self.name;
        let field_err = |e: FieldErr<'_>| TraceError::Field {
            file: name.clone(),
            line: line_no,
            field: e.field,
            text: excerpt(e.text),
            problem: e.problem,
            detail: e.detail.to_owned(),
        };
        let raw = match self.parser.parse(t) {
            Ok(Parsed::Request(r)) => r,
            Ok(Parsed::Ignore) => {
                summary.ignored_lines += 1;
                return Ok(None);
            }
            Err(e) => return Err(field_err(e)),
        };
        self.transform(summary, line_no, t, raw)
    }

    /// Device selection, folding, alignment and the capacity policy. `line` is the
    /// line `raw` was parsed from, which an error quotes (see [`Blame::error`]).
    #[inline(always)]
    fn transform(
        &mut self,
        summary: &mut TraceSummary,
        line_no: u64,
        line: &[u8],
        raw: RawRequest,
    ) -> Result<Option<Pending>, TraceError> {
        let RawRequest { time_ns, mut device, mut offset, mut size, op } = raw;
        let opts = &self.opts;
        let blame = Blame { file: &self.name, parser: &*self.parser, line_no, line, raw: &raw };
        let bad = |at, moved, problem, detail| blame.error(at, moved, problem, detail);
        if !opts.devices.is_empty() && !opts.devices.contains(&device) {
            summary.filtered_device += 1;
            return Ok(None);
        }
        if self.last_device != Some(device) {
            self.last_device = Some(device);
            self.devices_seen.insert(device);
        }
        if opts.fold_devices {
            offset = (device as u64)
                .checked_mul(opts.fold_stride_bytes)
                .and_then(|d| d.checked_add(offset))
                .ok_or_else(|| {
                    let stride = opts.fold_stride_bytes;
                    let detail = format!(
                        "+ device {device} × fold stride {stride} bytes exceeds 2^64 bytes; \
                         use a smaller --fold-stride (`trace.fold_stride_bytes`)"
                    );
                    bad(At::Offset, None, Problem::Overflow, detail)
                })?;
            device = 0;
        }
        let folded = moved(raw.offset, offset, "folding devices");
        if offset.checked_add(size).is_none() {
            let detail = format!("+ the request's {size} bytes ends beyond 2^64 bytes");
            return Err(bad(At::Offset, folded, Problem::Overflow, detail));
        }
        if opts.align_bytes > 1 {
            let a = opts.align_bytes as u64;
            let start = offset / a * a;
            let end = (offset + size).checked_next_multiple_of(a).ok_or_else(|| {
                let detail = format!(
                    "+ the request's {size} bytes, rounded up to a multiple of --align {a} bytes, exceeds 2^64 bytes"
                );
                bad(At::Offset, folded, Problem::Overflow, detail)
            })?;
            offset = start;
            size = end - start;
        }
        let by = match (opts.fold_devices, opts.align_bytes > 1) {
            (true, true) => "folding devices and alignment",
            (true, false) => "folding devices",
            (false, _) => "alignment",
        };
        let transformed = moved(raw.offset, offset, by);
        let capacity = self.capacity;
        if capacity != u64::MAX && offset + size > capacity {
            if size > capacity {
                let aligned = moved(raw.size, size, "alignment");
                let detail = format!(
                    "larger than the whole capacity of {capacity} bytes; simulate a larger device, \
                     or drop such lines with --on-error skip"
                );
                return Err(bad(At::Size, aligned, Problem::BeyondCapacity, detail));
            }
            match opts.beyond_capacity {
                CapacityPolicy::Reject => {
                    let detail = format!(
                        "+ the request's {size} bytes ends beyond the capacity of {capacity} bytes; \
                         beyond_capacity = \"reject\" (--beyond-capacity wrap wraps it modulo the capacity)"
                    );
                    return Err(bad(At::Offset, transformed, Problem::BeyondCapacity, detail));
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
}

/// What an error about a parsed request's offset or size needs to name its source.
struct Blame<'a> {
    file: &'a Arc<str>,
    parser: &'a dyn LineParser,
    line_no: u64,
    /// The line the request was parsed from.
    line: &'a [u8],
    raw: &'a RawRequest,
}

impl Blame<'_> {
    /// The error: it names the field and quotes its text as the line writes it (a
    /// sector count, not the bytes computed from it, which follow as context:
    /// ``field `lsn`: "1000" … (= 512000 bytes; …)``), so the user finds what it
    /// refers to.
    #[cold]
    #[inline(never)]
    fn error(&self, at: At, moved: Option<Moved>, problem: Problem, detail: String) -> TraceError {
        let (bytes, name) = match at {
            At::Offset => (self.raw.offset, "offset"),
            At::Size => (self.raw.size, "size"),
        };
        let written = self.parser.address(trim(self.line)).map(|a| match at {
            At::Offset => a.offset,
            At::Size => a.size,
        });
        // Every parser locates the fields of a line it accepted; the computed bytes
        // under the generic name are a fallback that cannot mislead.
        let (field, text, unit) = match written {
            Some(w) => (w.field, excerpt(w.text), w.unit),
            None => (name, bytes.to_string(), 1),
        };
        let mut context = Vec::new();
        if unit != 1 {
            context.push(format!("= {bytes} bytes"));
        }
        if let Some(Moved { bytes, by }) = moved {
            context.push(format!("{bytes} bytes after {by}"));
        }
        context.push(detail);
        let detail = context.join("; ");
        TraceError::Field { file: self.file.clone(), line: self.line_no, field, text, problem, detail }
    }
}

/// Which address field an error is about.
#[derive(Clone, Copy)]
enum At {
    Offset,
    Size,
}

/// What a transform made of the field an error is about, and which transform.
#[derive(Clone, Copy)]
struct Moved {
    bytes: u64,
    by: &'static str,
}

/// The field's bytes after a transform, if it changed them.
#[inline(always)]
fn moved(was: u64, now: u64, by: &'static str) -> Option<Moved> {
    (now != was).then_some(Moved { bytes: now, by })
}

impl Iterator for TraceParser {
    type Item = Result<IoRequest, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_cancellable(None)
    }
}

/// A `# …` comment: record a `lamina-trace-gen:` declaration (`key=value` words).
fn comment(summary: &mut TraceSummary, text: &[u8]) {
    let text = String::from_utf8_lossy(text);
    let Some(rest) = text.trim().strip_prefix(GEN_COMMENT) else { return };
    let settings = rest
        .split_whitespace()
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    summary.generated_with = Some(settings);
}

/// The outlier warning of a summary with outliers: where the first requests noted are
/// (`places`, beside `notes`) and their gaps — early ones, late ones, long runs kept.
fn outlier_warning(s: &TraceSummary, notes: &[Note], places: &[String]) -> String {
    let of = |kind| notes.iter().zip(places).filter(move |(n, _)| n.kind == kind);
    let mut parts = Vec::new();
    let early: Vec<(&Note, &String)> = of(OutlierKind::Before).collect();
    match early.as_slice() {
        [] => {}
        [(n, place)] => {
            parts.push(format!("the first request, {place}, {} before the next", human_duration(n.gap)))
        }
        many => {
            let places: Vec<&str> = many.iter().map(|(_, p)| p.as_str()).collect();
            let gap = many.iter().map(|(n, _)| n.gap).max().unwrap_or(0);
            parts.push(format!(
                "the first requests, {}, up to {} before the rest",
                places.join(", "),
                human_duration(gap)
            ));
        }
    }
    let late: Vec<String> =
        of(OutlierKind::After).map(|(n, place)| format!("{place} (+{})", human_duration(n.gap))).collect();
    if !late.is_empty() {
        parts.push(format!("before {}", late.join(", ")));
    }
    for (n, place) in of(OutlierKind::Jump) {
        parts.push(format!(
            "before {place} (+{}; kept: {LOOKAHEAD} or more requests on each side, not a bogus group)",
            human_duration(n.gap)
        ));
    }
    let more = if s.changes.outliers > notes.len() as u64 { ", …" } else { "" };
    let action = match s.outlier_action {
        OutlierPolicy::Warn => "replayed as is (set trace.outliers = \"cut\" or \"clamp\")",
        OutlierPolicy::Cut => "the requests blamed were dropped (trace.outliers = \"cut\")",
        OutlierPolicy::Clamp => "each gap was replaced by the typical gap (trace.outliers = \"clamp\")",
    };
    format!(
        "{}: {} request(s) beyond absurd arrival gaps (over {} and {ABSURD_FACTOR} × the 99.9th-percentile \
         gap): {}{more}; {action}",
        s.file,
        s.changes.outliers,
        human_duration(ABSURD_FLOOR_NS),
        parts.join("; ")
    )
}

/// `ns` in a time field's unit (`unit` ns, a power of ten), written with as many
/// fraction digits as `like` — a timestamp of the same field — has, or more where the
/// value needs them: `time_like(1_500_000, 1_000_000, b"2.000")` is `"1.500"`.
fn time_like(ns: u64, unit: u64, like: &[u8]) -> String {
    let digits = unit.ilog10() as usize;
    let mut frac = if digits == 0 { String::new() } else { format!("{:0digits$}", ns % unit) };
    let want = like.iter().position(|&b| b == b'.').map_or(0, |i| like.len() - i - 1);
    while frac.len() > want && frac.ends_with('0') {
        frac.pop();
    }
    while frac.len() < want {
        frac.push('0');
    }
    let int = ns / unit;
    if frac.is_empty() { int.to_string() } else { format!("{int}.{frac}") }
}

/// `1.5 s`, `2.0 h`, `40.0 years`.
pub(crate) fn human_duration(ns: u64) -> String {
    let s = ns as f64 / 1e9;
    if s < 1.0 {
        format!("{:.3} ms", s * 1e3)
    } else if s < 3600.0 {
        format!("{s:.1} s")
    } else if s < 86_400.0 * 2.0 {
        format!("{:.1} h", s / 3600.0)
    } else if s < 86_400.0 * 365.0 {
        format!("{:.1} days", s / 86_400.0)
    } else {
        format!("{:.1} years", s / (86_400.0 * 365.25))
    }
}

/// Why an all-blank file yields nothing.
fn empty_file_why(prefix: &[u8]) -> String {
    if prefix.is_empty() { "the file is empty".into() } else { "the file holds only blank lines".into() }
}

/// Why a trace yielded no request, from its summary.
fn empty_why(s: &TraceSummary) -> String {
    if s.bytes == 0 {
        return "the file is empty".into();
    }
    let mut parts = Vec::new();
    if s.ignored_lines > 0 {
        parts.push(format!("{} ignored (blank, header, comment or not a request)", s.ignored_lines));
    }
    if s.errors_skipped > 0 {
        let reasons: Vec<String> = s.skipped_reasons.iter().map(|(k, v)| format!("{k} {v}")).collect();
        parts.push(format!("{} malformed and skipped ({})", s.errors_skipped, reasons.join(", ")));
    }
    if s.filtered_device > 0 {
        parts.push(format!("{} requests on devices not selected by `devices`", s.filtered_device));
    }
    if s.skipped_by_option > 0 {
        parts.push(format!("{} requests dropped by `skip`", s.skipped_by_option));
    }
    if s.changes.outliers > 0 && s.outlier_action == OutlierPolicy::Cut {
        parts.push(format!("{} requests cut as outliers", s.changes.outliers));
    }
    let header_only = s.lines == 1 && s.ignored_lines == 1;
    let what = if header_only {
        "it holds only a header line".to_owned()
    } else {
        format!("of its {} lines: {}", s.lines, parts.join("; "))
    };
    format!("no request to replay: {what}")
}

/// A first line is a header if every field starts with a letter (`Timestamp,Response,…`).
fn looks_like_header(line: &[u8]) -> bool {
    let sep = if memchr::memchr(b',', line).is_some() { b',' } else { b' ' };
    line.split(|&b| b == sep || b == b'\t')
        .map(trim)
        .filter(|f| !f.is_empty())
        .all(|f| f[0].is_ascii_alphabetic() || f[0] == b'_' || f[0] == b'#' || f[0] == b'"')
}

/// The text of a `# lamina-trace-gen:` comment (after `#`, trimmed) among the comment
/// and blank lines that open `prefix`, if any.
fn leading_declaration(prefix: &[u8]) -> Option<&[u8]> {
    for l in prefix.split(|&b| b == b'\n') {
        let t = trim(l.strip_suffix(b"\r").unwrap_or(l));
        if t.is_empty() {
            continue;
        }
        let text = trim(t.strip_prefix(b"#")?);
        if text.starts_with(GEN_COMMENT.as_bytes()) {
            return Some(text);
        }
    }
    None
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

    /// Each request is placed at its own line: after comment and blank lines, and when
    /// the reorder window releases it after a later line (`trace convert` names it).
    #[test]
    fn the_last_request_is_placed_at_its_own_line() {
        let text = "# header\n10 0 0 1 1\n\n30 0 1 1 1\n20 0 2 1 1\n40 0 3 1 1\n";
        let mut p = TraceParser::new(
            "t.trace",
            Box::new(Cursor::new(text.to_owned())),
            None,
            &TraceOptions::default(),
            u64::MAX,
        )
        .unwrap();
        assert_eq!(p.last_request_place(), None);
        let mut got = Vec::new();
        while let Some(r) = p.next() {
            got.push((r.unwrap().offset_bytes / 512, p.last_request_place().unwrap()));
        }
        let want = [
            (0, "line 2 of t.trace"),
            (2, "line 5 of t.trace"),
            (1, "line 4 of t.trace"),
            (3, "line 6 of t.trace"),
        ];
        assert_eq!(got, want.map(|(o, l)| (o, l.to_owned())));
    }

    #[test]
    fn reorders_within_the_window_and_rejects_beyond() {
        let text = "10 0 0 1 1\n30 0 1 1 1\n20 0 2 1 1\n40 0 3 1 1\n";
        let (v, e, _) = run(text, &TraceOptions::default(), u64::MAX);
        assert!(e.is_none());
        assert_eq!(v.iter().map(|r| r.arrival.as_ns()).collect::<Vec<_>>(), vec![0, 10, 20, 30]);
        let opts = TraceOptions { reorder_window: 0, ..TraceOptions::default() };
        let (v, e, _) = run(text, &opts, u64::MAX);
        // The requests before it are still held by the outlier check's look-ahead.
        assert_eq!(v.len(), 0);
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
        // Two devices kept, not folded: the engine overlays them, which is warned about
        // (new-user trial: silent before). One device, or folding, is not.
        assert!(
            s.warnings.iter().any(|w| w.starts_with("2 devices (1, 2) replayed into one address space")),
            "{:?}",
            s.warnings
        );
        let (_, _, s) = run(text, &TraceOptions { devices: vec![2], ..TraceOptions::default() }, u64::MAX);
        assert!(s.warnings.is_empty(), "{:?}", s.warnings);
        let opts = TraceOptions {
            fold_devices: true,
            fold_stride_bytes: 1 << 20,
            align_bytes: 4096,
            ..TraceOptions::default()
        };
        let (v, _, s) = run(text, &opts, u64::MAX);
        assert!(s.warnings.is_empty(), "{:?}", s.warnings);
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

    /// Issue #8 item 4: the summary counts every transform that changed the workload.
    #[test]
    fn transform_counts_are_in_the_summary() {
        let text = "2000000000 3 0 8 1\n1000000000 4 0 8 1\n3000000000 5 0 8 1\n3000000000 3 0 8 1\n";
        let opts = TraceOptions { fold_devices: true, ..TraceOptions::default() };
        let (v, e, s) = run(text, &opts, u64::MAX);
        assert!(e.is_none(), "{e:?}");
        assert_eq!(v.len(), 4);
        let c = &s.changes;
        assert_eq!((c.folded_devices, c.folded_overlaid, c.reordered), (3, true, 1));
        assert_eq!((c.time_resolution_ns, c.max_same_instant), (1_000_000_000, 2));
    }

    /// Issue #8 item 2: a bogus late timestamp is found with its line; cut drops it.
    #[test]
    fn outliers_are_reported_with_their_line() {
        let mut text: String = (0..500u64).map(|i| format!("{} 0 {i} 8 1\n", i * 1_000_000)).collect();
        text.insert_str(0, "1261440000000000000 0 9 8 1\n"); // 40 years, first line
        let (v, e, s) = run(&text, &TraceOptions::default(), u64::MAX);
        assert!(e.is_none());
        assert_eq!(
            (v.len(), s.changes.outliers, s.outlier_lines.clone()),
            (501, 1, vec![(1, 1_261_439_999_501_000_000)])
        );
        assert!(s.warnings[0].contains("before line 1 (+40.0 years)"), "{}", s.warnings[0]);
        let opts = TraceOptions { outliers: OutlierPolicy::Cut, ..TraceOptions::default() };
        let (v, _, s) = run(&text, &opts, u64::MAX);
        assert_eq!((v.len(), s.changes.outliers), (500, 1));
        assert_eq!(v.last().unwrap().arrival.as_ns(), 499_000_000);
        // An early bogus first request (0 in an epoch-stamped trace) is the one cut.
        let text: String = std::iter::once("0 0 9 8 1\n".to_owned())
            .chain((0..100u64).map(|i| format!("{} 0 {i} 8 1\n", 1_500_000_000_000_000_000 + i * 1000)))
            .collect();
        let (v, _, s) = run(&text, &opts, u64::MAX);
        assert_eq!((v.len(), s.changes.outliers), (100, 1));
        assert_eq!(v[99].arrival.as_ns(), 99_000);
    }

    /// Regression (new-user trial finding 2): with an early bogus first timestamp,
    /// the request blamed — cut, clamped or warned about — is the first, but the
    /// warning named the line of the second (the gap was noted with the line of the
    /// request after it). Comment, blank and header lines before the data keep file
    /// lines and request numbers apart: the first request is on line 4, the request
    /// after it on line 5, the late bogus one on line 106 (after a comment).
    #[test]
    fn an_outlier_names_the_file_line_of_the_request_it_blames() {
        let mut text = String::from("# a comment\n\ntime dev lsn size op\n0 0 9 8 1\n");
        for i in 0..100u64 {
            text += &format!("{} 0 {i} 8 1\n", 1_500_000_000_000_000_000 + i * 1000);
        }
        text += "# the end\n1600000000000000000 0 7 8 1\n";
        for policy in [OutlierPolicy::Warn, OutlierPolicy::Cut, OutlierPolicy::Clamp] {
            let opts = TraceOptions { outliers: policy, ..TraceOptions::default() };
            let (v, e, s) = run(&text, &opts, u64::MAX);
            assert!(e.is_none(), "{e:?}");
            assert_eq!(s.outlier_lines.iter().map(|l| l.0).collect::<Vec<_>>(), vec![4, 106], "{policy}");
            assert!(
                s.warnings[0].contains(
                    "gap): the first request, line 4, 47.5 years before the next; before line 106 (+3.2 years); "
                ) && s.warnings[0].starts_with("t: 2 request(s) beyond absurd arrival gaps (over 1.0 h and 1000 × "),
                "{policy}: {}",
                s.warnings[0]
            );
            let kept: Vec<u64> = v.iter().map(|r| r.offset_bytes / 512).collect();
            match policy {
                OutlierPolicy::Cut => assert_eq!((kept.len(), kept[0], kept[99]), (100, 0, 99)),
                _ => assert_eq!((kept.len(), kept[0], kept[101]), (102, 9, 7)),
            }
        }
    }

    /// Regression (new-user trial): `--outliers cut` with two or more bogus early
    /// timestamps (0 and 1000 in an epoch-stamped trace) kept them and cut the real
    /// trace after them, 200 requests, with a warning naming all 200. Looking ahead, the
    /// early group is the smaller side of the gap: it is the one cut, named by its file
    /// lines, whatever comment lines come between.
    #[test]
    fn several_early_bogus_timestamps_are_cut_not_the_trace() {
        for bogus in [2u64, 3] {
            let mut text = String::from("# epoch-stamped\n");
            for i in 0..bogus {
                text += &format!("{} 0 {i} 8 1\n", i * 1000);
            }
            text += "# real trace\n";
            for i in 0..200u64 {
                text += &format!("{} 0 {i} 8 1\n", 1_500_000_000_000_000_000 + i * 1_000_000);
            }
            let opts = TraceOptions { outliers: OutlierPolicy::Cut, ..TraceOptions::default() };
            let (v, e, s) = run(&text, &opts, u64::MAX);
            assert!(e.is_none(), "{e:?}");
            assert_eq!((v.len(), s.changes.outliers), (200, bogus), "{bogus}");
            assert_eq!(v[199].arrival.as_ns(), 199_000_000, "{bogus}");
            let lines: Vec<u64> = s.outlier_lines.iter().map(|l| l.0).collect();
            assert_eq!(lines, (2..2 + bogus).collect::<Vec<_>>(), "{bogus}");
            let places = if bogus == 2 { "line 2, line 3" } else { "line 2, line 3, line 4" };
            let w = &s.warnings[0];
            assert!(
                w.contains(&format!("the first requests, {places}, up to 47.5 years before the rest;")),
                "{w}"
            );
        }
    }

    /// Every request, error and summary of `text` under `opts`, with the fast path or
    /// only the general way.
    fn both_ways(text: &str, opts: &TraceOptions) -> [(Vec<IoRequest>, Option<String>, TraceSummary); 2] {
        [false, true].map(|general| {
            let p =
                TraceParser::new("t", Box::new(Cursor::new(text.to_owned())), None, opts, 1 << 40).unwrap();
            let mut p = if general { p.general_only() } else { p };
            let mut out = Vec::new();
            let mut err = None;
            for r in p.by_ref() {
                match r {
                    Ok(r) => out.push(r),
                    Err(e) => err = Some(e.to_string()),
                }
            }
            (out, err, p.summary())
        })
    }

    /// The whole-line fast path changes nothing: over 600 KiB (lines across the line
    /// reader's 256 KiB buffer refills) of common lines with awkward ones between them,
    /// the same requests, errors (file, line, field, remedy) and summary as the general
    /// way, stopping at the first error or skipping bad lines.
    #[test]
    fn the_fast_path_gives_what_the_general_way_gives() {
        let awkward = [
            "",
            "# a comment",
            "  T 0 8 8 1  ",
            "\tT 0 8 8 0\r",
            "T 0 8 8 1 \r",
            "T 0 +8 8 1",
            "T 0 8 0 1",
            "T 0 8 8 2",
            "T 0 x 8 1",
            "T 4294967296 8 8 1",
            "T 0 36028797018963968 8 1",
            "T 0 18446744073709551615 8 1",
            "T 0 8 8",
            "T 0 8 8 1 9",
            "T 0 1234567890123456789 8 1",
            "T 0 8 8 1\r\r",
            "T 0 8 8 01",
            "T\t0\t8\t8\t1",
            "T 0 0000000000000000008 8 1",
        ];
        let mut text = String::from("time device lsn size op\n");
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for i in 0..30_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if x % 97 == 0 {
                let t = (1_000_000 + i * 977).to_string();
                text.push_str(&awkward[(x / 97 % awkward.len() as u64) as usize].replace('T', &t));
                text.push('\n');
            }
            let digits = 1 + (x >> 20) % 12;
            let lsn = (x >> 8) % 10u64.pow(digits as u32);
            text.push_str(&format!(
                "{} {} {lsn} {} {}\n",
                1_000_000 + i * 977,
                x % 3,
                1 + (x >> 40) % 300,
                x & 1
            ));
        }
        text.push_str("99999999 0 8 8 1");
        assert!(text.len() > 600 << 10);
        for opts in [
            TraceOptions { on_error: OnError::Skip, max_errors: u64::MAX, ..TraceOptions::default() },
            TraceOptions { reorder_window: 0, ..TraceOptions::default() },
            TraceOptions {
                devices: vec![1],
                align_bytes: 4096,
                on_error: OnError::Skip,
                ..TraceOptions::default()
            },
            // Address errors quote the line's fields (found again from the line the
            // fast path parsed): lsn up to 10^12 sectors passes the 1 TiB capacity.
            TraceOptions {
                beyond_capacity: CapacityPolicy::Reject,
                fold_devices: true,
                fold_stride_bytes: 1 << 39,
                on_error: OnError::Skip,
                max_errors: u64::MAX,
                ..TraceOptions::default()
            },
        ] {
            let [fast, general] = both_ways(&text, &opts);
            assert_eq!(fast.0, general.0);
            assert_eq!(fast.1, general.1);
            assert_eq!(fast.2, general.2);
        }
        let opts = TraceOptions { on_error: OnError::Skip, max_errors: u64::MAX, ..TraceOptions::default() };
        let [fast, _] = both_ways(&text, &opts);
        assert!(fast.0.len() > 25_000 && fast.2.errors_skipped > 50, "{:?}", fast.2);
        let opts = TraceOptions { beyond_capacity: CapacityPolicy::Reject, ..opts };
        let [fast, _] = both_ways(&text, &opts);
        let beyond = fast.2.first_errors.iter().find(|e| e.contains("beyond the simulated")).unwrap();
        assert!(
            beyond.contains(": field `lsn`: \"") && beyond.contains(" bytes; + the request's "),
            "{beyond}"
        );
    }

    /// Issue #8 item 15: a generator comment is read into the summary, in any format
    /// that has comments, and does not count as a header.
    #[test]
    fn a_generator_comment_is_recorded() {
        let text = "# lamina-trace-gen: host.mode=closed host.closed_loop_depth=8\n0 0 1 8 1\n0 0 2 8 0\n";
        let (v, e, s) = run(text, &TraceOptions::default(), u64::MAX);
        assert!(e.is_none(), "{e:?}");
        assert_eq!(v.len(), 2);
        let g = s.generated_with.unwrap();
        assert_eq!((g["host.mode"].as_str(), g["host.closed_loop_depth"].as_str()), ("closed", "8"));
    }

    /// Regression (new-user trial finding 4): a UTF-8 byte-order mark glued to the
    /// first field failed the first line (`"\u{feff}0" is not a number`); it is
    /// skipped (still digested). UTF-16 is refused with the `iconv` remedy.
    #[test]
    fn a_utf8_bom_is_skipped_and_utf16_is_named() {
        let plain = "0 0 8 8 1\n5 0 16 8 0\n";
        let (want, e, s) = run(plain, &TraceOptions::default(), u64::MAX);
        assert!(e.is_none() && s.warnings.is_empty(), "{e:?}");
        for text in [format!("\u{feff}{plain}"), format!("\u{feff}# c\n{plain}")] {
            let (got, e, s) = run(&text, &TraceOptions::default(), u64::MAX);
            assert!(e.is_none(), "{e:?}");
            assert_eq!((got.as_slice(), s.format), (want.as_slice(), TraceFormat::Ssdsim));
            assert_eq!(s.digest, format!("xxh3-64:{:016x}", xxhash_rust::xxh3::xxh3_64(text.as_bytes())));
        }
        let wide: Vec<u8> = [0xff, 0xfe].into_iter().chain(plain.bytes().flat_map(|b| [b, 0])).collect();
        let r: Box<dyn Read + Send> = Box::new(Cursor::new(wide));
        let e = TraceParser::new("w.trace", r, Some(TraceFormat::Ssdsim), &TraceOptions::default(), u64::MAX)
            .err()
            .unwrap()
            .to_string();
        assert!(e.starts_with("w.trace: is UTF-16 text (little-endian, byte-order mark FF FE)"), "{e}");
        assert!(e.ends_with("iconv -f UTF-16 -t UTF-8 w.trace > w.trace.utf8"), "{e}");
    }

    /// New-user trial finding 2: `lamina trace convert` writes the declaration before
    /// the first request, so the parser knows it from the start, verbatim, when it is
    /// among the leading comment lines (and not when a request comes first).
    #[test]
    fn a_leading_declaration_is_known_before_parsing() {
        let open = |text: &str| {
            let r: Box<dyn Read + Send> = Box::new(Cursor::new(text.as_bytes().to_vec()));
            TraceParser::new("t", r, None, &TraceOptions::default(), u64::MAX).unwrap()
        };
        let text =
            "\n# other\r\n#  lamina-trace-gen: host.mode=closed host.closed_loop_depth=8 \n0 0 1 8 1\n";
        let p = open(text);
        assert_eq!(
            p.declaration().map(|d| &**d),
            Some("lamina-trace-gen: host.mode=closed host.closed_loop_depth=8")
        );
        assert_eq!(p.summary().generated_with.unwrap()["host.closed_loop_depth"], "8");
        let late = open("0 0 1 8 1\n# lamina-trace-gen: host.mode=closed\n");
        assert!(late.declaration().is_none() && late.summary().generated_with.is_none());
        assert!(open("# just a comment\n0 0 1 8 1\n").declaration().is_none());
    }
}
