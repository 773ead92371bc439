//! Typed trace errors: every bad input names the file, the line, the field and the
//! offending text. Nothing in `trace` panics on input.

use std::fmt;
use std::io;
use std::sync::Arc;

/// What is wrong with a field of a trace line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Problem {
    /// The line has too few fields to contain this one.
    Missing,
    /// The field is not a (non-negative decimal) number.
    NotANumber,
    /// The field is a negative number.
    Negative,
    /// The number does not fit (64-bit overflow after unit conversion).
    Overflow,
    /// A request of zero bytes.
    ZeroSize,
    /// The operation code is not one the format defines.
    UnknownOp,
    /// The request lies (partly) beyond the simulated logical capacity and the
    /// capacity policy is `reject` (or the request is larger than the capacity).
    BeyondCapacity,
    /// The field does not have the shape the format requires (e.g. blkparse `maj,min`).
    Malformed,
}

impl Problem {
    /// A short stable name, used as the key of skipped-line counts in reports.
    pub fn name(self) -> &'static str {
        match self {
            Problem::Missing => "missing-field",
            Problem::NotANumber => "not-a-number",
            Problem::Negative => "negative",
            Problem::Overflow => "overflow",
            Problem::ZeroSize => "zero-size",
            Problem::UnknownOp => "unknown-op",
            Problem::BeyondCapacity => "beyond-capacity",
            Problem::Malformed => "malformed",
        }
    }

    fn phrase(self) -> &'static str {
        match self {
            Problem::Missing => "is missing",
            Problem::NotANumber => "is not a number",
            Problem::Negative => "is negative",
            Problem::Overflow => "is too large",
            Problem::ZeroSize => "is zero (a zero-length request)",
            Problem::UnknownOp => "is not an operation this format defines",
            Problem::BeyondCapacity => "lies beyond the simulated logical capacity",
            Problem::Malformed => "is malformed",
        }
    }
}

/// An error while opening, detecting or reading a trace.
#[derive(Clone, Debug)]
pub enum TraceError {
    /// A field of a line is bad. `Display`: ``file:line: field `size`: "abc" is not a number``.
    ///
    /// In a tar archive, `file` is `archive.tar:member` and `line` counts from the
    /// member's first line (so for every per-line error).
    Field {
        /// Trace file name.
        file: Arc<str>,
        /// 1-based line number in the decompressed text (of the tar member).
        line: u64,
        /// Field name as the format's specification calls it.
        field: &'static str,
        /// The offending text (the whole line for a missing field), truncated to 120 bytes.
        text: String,
        /// What is wrong with it.
        problem: Problem,
        /// Optional detail (e.g. the capacity, the accepted op codes).
        detail: String,
    },
    /// A request is earlier than one already released by the reorder window.
    /// `Display`: ``file:3: field `time`: "1000" is earlier than "6000000" on line 2, …``.
    Disorder {
        /// Trace file name.
        file: Arc<str>,
        /// 1-based line number of the late request.
        line: u64,
        /// The timestamp field's name in the format's specification.
        field: &'static str,
        /// The late request's timestamp as its line writes it (boxed strings keep the
        /// error, and every `Result` carrying it, small).
        text: Box<str>,
        /// The line of the request already released (the latest released so far).
        earlier_line: u64,
        /// The tar member holding `earlier_line`, when not the late request's.
        earlier_in: Option<Arc<str>>,
        /// Its timestamp in the same unit and with as many fraction digits as `text`
        /// (its line was read and dropped long before: the value, not its bytes).
        earlier_text: Box<str>,
        /// The reorder window, in requests.
        window: u32,
    },
    /// A request's arrival times `time_scale` does not fit the 64-bit nanosecond clock.
    /// Not a [`TraceError::Field`]: the arrival is computed (converted to ns, rebased,
    /// scaled), not text the line holds, so the error does not quote it as a field.
    ScaledTime {
        /// Trace file name.
        file: Arc<str>,
        /// 1-based line number of the request.
        line: u64,
        /// Its arrival before scaling: ns since the first replayed request (rebased) or
        /// on the trace's own clock.
        arrival_ns: u64,
        /// Whether `arrival_ns` is rebased to the first replayed request.
        rebased: bool,
        /// The time scale, as `Display`ed.
        scale: String,
    },
    /// A line longer than the reader's bound (memory stays bounded).
    LineTooLong {
        /// Trace file name.
        file: Arc<str>,
        /// 1-based line number.
        line: u64,
        /// The bound in bytes.
        max_bytes: usize,
    },
    /// An I/O or decompression error.
    Io {
        /// Trace file name.
        file: Arc<str>,
        /// The underlying error.
        source: Arc<io::Error>,
    },
    /// The format could not be recognised from the first lines.
    Detect {
        /// Trace file name.
        file: Arc<str>,
        /// Why.
        reason: String,
    },
    /// An invalid trace option.
    Options {
        /// The option key (as in the `[trace]` table).
        key: &'static str,
        /// What is wrong.
        message: String,
    },
    /// `on_error = "skip"` skipped more bad lines than `max_errors`.
    TooManyErrors {
        /// Trace file name.
        file: Arc<str>,
        /// Bad lines seen.
        count: u64,
        /// The configured maximum.
        max: u64,
        /// The last error.
        last: Box<TraceError>,
    },
    /// The trace yielded no request and `allow_empty` is off.
    Empty {
        /// Trace file name.
        file: Arc<str>,
        /// Why (empty file, header only, every line skipped or filtered, …).
        why: String,
    },
    /// The file is an archive, an unsupported compression or binary data, not a text trace.
    NotText {
        /// Trace file name.
        file: Arc<str>,
        /// What it is and what to do (`is a zip archive; unpack it first (unzip)`).
        what: String,
    },
    /// The background reader thread ended without a result (a bug).
    ReaderStopped {
        /// Trace file name.
        file: Arc<str>,
    },
}

impl TraceError {
    /// A short stable name of the error class (the key used for skipped-line counts).
    pub fn kind(&self) -> &'static str {
        match self {
            TraceError::Field { problem, .. } => problem.name(),
            TraceError::Disorder { .. } => "out-of-order",
            TraceError::ScaledTime { .. } => "overflow",
            TraceError::LineTooLong { .. } => "line-too-long",
            TraceError::Io { .. } => "io",
            TraceError::Detect { .. } => "detect",
            TraceError::Options { .. } => "options",
            TraceError::TooManyErrors { .. } => "too-many-errors",
            TraceError::Empty { .. } => "empty",
            TraceError::NotText { .. } => "not-text",
            TraceError::ReaderStopped { .. } => "reader-stopped",
        }
    }

    /// True for per-line errors that `on_error = "skip"` may skip.
    pub fn is_line_error(&self) -> bool {
        matches!(self, TraceError::Field { .. } | TraceError::Disorder { .. } | TraceError::ScaledTime { .. })
    }

    /// The 1-based line number, for per-line errors.
    pub fn line(&self) -> Option<u64> {
        match self {
            TraceError::Field { line, .. }
            | TraceError::Disorder { line, .. }
            | TraceError::ScaledTime { line, .. }
            | TraceError::LineTooLong { line, .. } => Some(*line),
            _ => None,
        }
    }

    pub(crate) fn io(file: &Arc<str>, e: io::Error) -> TraceError {
        TraceError::Io { file: file.clone(), source: Arc::new(e) }
    }
}

/// Lossy, bounded copy of offending bytes for an error message.
pub(crate) fn excerpt(bytes: &[u8]) -> String {
    const MAX: usize = 120;
    let cut = &bytes[..bytes.len().min(MAX)];
    let mut s = String::from_utf8_lossy(cut).into_owned();
    if bytes.len() > MAX {
        s.push('…');
    }
    s
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TraceError::Field { file, line, field, text, problem: Problem::Missing, detail } => {
                write!(f, "{file}:{line}: field `{field}` is missing in {text:?}")?;
                if !detail.is_empty() {
                    write!(f, " ({detail})")?;
                }
                Ok(())
            }
            TraceError::Field { file, line, field, text, problem, detail } => {
                write!(f, "{file}:{line}: field `{field}`: {text:?} {}", problem.phrase())?;
                if !detail.is_empty() {
                    write!(f, " ({detail})")?;
                }
                Ok(())
            }
            TraceError::Disorder {
                file,
                line,
                field,
                text,
                earlier_line,
                earlier_in,
                earlier_text,
                window,
            } => {
                let of = earlier_in.as_ref().map(|m| format!(" of {m}")).unwrap_or_default();
                write!(
                    f,
                    "{file}:{line}: field `{field}`: {text:?} is earlier than {earlier_text:?} on line \
                     {earlier_line}{of}, a request already released: the trace is out of order by more than \
                     the reorder window of {window} requests (raise it: --reorder-window N, or \
                     `trace.reorder_window`; at most {max})",
                    max = super::MAX_REORDER_WINDOW
                )
            }
            TraceError::ScaledTime { file, line, arrival_ns, rebased, scale } => {
                let (from, remedy) = if *rebased {
                    ("after the first replayed request", "")
                } else {
                    (
                        "on the trace's own clock",
                        ", or let it be rebased to the first request (drop --no-rebase; `trace.rebase = true`)",
                    )
                };
                write!(
                    f,
                    "{file}:{line}: the request's arrival, {arrival_ns} ns {from}, × time_scale {scale} exceeds \
                     the 64-bit nanosecond clock (about 584 years); use a smaller --time-scale \
                     (`trace.time_scale`){remedy}"
                )
            }
            TraceError::LineTooLong { file, line, max_bytes } => {
                write!(f, "{file}:{line}: line longer than {max_bytes} bytes (is this a trace?)")
            }
            TraceError::Io { file, source } => write!(f, "{file}: {source}"),
            TraceError::Detect { file, reason } => {
                write!(
                    f,
                    "{file}: cannot tell the trace format: {reason}; name it with --format / `trace.format`"
                )
            }
            TraceError::Options { key, message } => write!(f, "trace option `{key}`: {message}"),
            TraceError::TooManyErrors { file, count, max, last } => write!(
                f,
                "{file}: {count} bad lines exceed max_errors = {max} (on_error = \"skip\"; raise it: --max-errors N, \
                 or `trace.max_errors`); last: {last}"
            ),
            TraceError::Empty { file, why } => write!(
                f,
                "{file}: {why}; a trace must yield at least one request (set `trace.allow_empty = true` to accept it)"
            ),
            TraceError::NotText { file, what } => write!(f, "{file}: {what}"),
            TraceError::ReaderStopped { file } => {
                write!(f, "{file}: the trace reader thread stopped unexpectedly (a bug)")
            }
        }
    }
}

/// No `source()`: every variant's `Display` already includes its cause's text, and
/// reporting it again as a source made `{:#}` chains print it twice
/// (`t.gz: corrupt deflate stream: corrupt deflate stream`, issue #8 item 12).
impl std::error::Error for TraceError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_error_display_matches_the_documented_shape() {
        let e = TraceError::Field {
            file: "t.ascii".into(),
            line: 7,
            field: "size",
            text: "abc".into(),
            problem: Problem::NotANumber,
            detail: String::new(),
        };
        assert_eq!(e.to_string(), "t.ascii:7: field `size`: \"abc\" is not a number");
        assert_eq!(e.kind(), "not-a-number");
        assert_eq!(e.line(), Some(7));
    }

    /// Regression (issue #8 item 12): an I/O or decompression error printed as a chain
    /// (`anyhow`'s `{:#}`, the CLI's format) must not repeat its cause.
    #[test]
    fn io_errors_are_not_doubled_in_a_chain() {
        use std::error::Error;
        let e = TraceError::io(
            &"t.gz".into(),
            io::Error::new(io::ErrorKind::InvalidData, "corrupt deflate stream"),
        );
        let mut chain = e.to_string();
        let mut src = e.source();
        while let Some(s) = src {
            chain = format!("{chain}: {s}");
            src = s.source();
        }
        assert_eq!(chain, "t.gz: corrupt deflate stream");
        let many = TraceError::TooManyErrors { file: "t".into(), count: 3, max: 2, last: Box::new(e) };
        assert!(many.source().is_none());
    }

    #[test]
    fn excerpt_is_bounded() {
        let long = vec![b'x'; 1000];
        assert!(excerpt(&long).len() < 130);
        assert_eq!(excerpt(b"\xff1"), "\u{fffd}1");
    }
}
