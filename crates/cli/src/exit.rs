//! Exit codes: what kind of failure ended a command, read off the error's type.
//!
//! | code | meaning |
//! |---|---|
//! | 0 | success (also when standard output was closed early, as by `| head`) |
//! | 1 | run-time failure: an I/O error while running (disk full, a read error), an FTL or device error |
//! | 2 | bad input: command-line usage (clap), config, trace content, a missing input file, an unusable output path |
//! | 3 | verification failure: `--verify` found a read that did not return the latest write |

use std::process::ExitCode;

use lamina_engine::trace::TraceError;
use lamina_engine::{BuildError, RunError, RunTraceError, config::ConfigError};

use crate::out::ClosedStdout;

/// The `--help` text on exit codes (kept beside the code that decides them).
pub const EXIT_CODES_HELP: &str = "\
Exit codes:
  0  success (also when standard output is closed early, e.g. by `| head`)
  1  run-time failure: I/O error while running (e.g. disk full), FTL or device error
  2  bad input: usage, config, trace content, missing input file, unusable output path
  3  verification failure: --verify found a read that did not return the latest write";

/// What kind of failure an error is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// Exit code 1.
    Runtime,
    /// Exit code 2.
    Usage,
    /// Exit code 3.
    Verify,
}

impl Kind {
    /// The process exit code.
    pub fn code(self) -> u8 {
        match self {
            Kind::Runtime => 1,
            Kind::Usage => 2,
            Kind::Verify => 3,
        }
    }
}

/// A CLI-level failure of a known kind (a bad flag combination, an unusable output path,
/// a sweep whose runs failed).
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct Failure {
    /// Its kind.
    pub kind: Kind,
    message: String,
}

impl Failure {
    /// A failure of `kind` saying `message`.
    pub fn new(kind: Kind, message: impl Into<String>) -> Failure {
        Failure { kind, message: message.into() }
    }
}

/// A bad-input failure (exit code 2) saying `message`.
pub fn usage(message: impl Into<String>) -> anyhow::Error {
    Failure::new(Kind::Usage, message).into()
}

fn trace_kind(e: &TraceError) -> Kind {
    match e {
        TraceError::Io { source, .. } => match source.kind() {
            std::io::ErrorKind::NotFound
            | std::io::ErrorKind::PermissionDenied
            | std::io::ErrorKind::IsADirectory
            // Corrupt or truncated compressed data: the trace's content is bad.
            | std::io::ErrorKind::InvalidData
            | std::io::ErrorKind::UnexpectedEof => Kind::Usage,
            _ => Kind::Runtime,
        },
        TraceError::ReaderStopped { .. } => Kind::Runtime,
        _ => Kind::Usage,
    }
}

fn run_kind(e: &RunError) -> Kind {
    match e {
        RunError::Trace(t) => trace_kind(t),
        RunError::Verify(_) => Kind::Verify,
        _ => Kind::Runtime,
    }
}

/// The kind of `e`: the first error in its chain whose type says.
pub fn kind_of(e: &anyhow::Error) -> Kind {
    for cause in e.chain() {
        if let Some(f) = cause.downcast_ref::<Failure>() {
            return f.kind;
        }
        if let Some(r) = cause.downcast_ref::<RunTraceError>() {
            return match r {
                RunTraceError::Build(_) => Kind::Usage,
                RunTraceError::Trace(t) => trace_kind(t),
                RunTraceError::Run(r) => run_kind(r),
                RunTraceError::Precondition(_) => Kind::Usage,
            };
        }
        if let Some(r) = cause.downcast_ref::<RunError>() {
            return run_kind(r);
        }
        if let Some(t) = cause.downcast_ref::<TraceError>() {
            return trace_kind(t);
        }
        if cause.is::<ConfigError>() || cause.is::<BuildError>() {
            return Kind::Usage;
        }
    }
    Kind::Runtime
}

/// Report `result` on standard error and turn it into the process exit code.
pub fn finish(result: anyhow::Result<()>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.chain().any(|c| c.is::<ClosedStdout>()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(kind_of(&e).code())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use anyhow::Context as _;
    use lamina_engine::VerifyError;
    use lamina_nand_model::SimTime;

    /// A verification failure cannot be provoked through the binary without a broken FTL,
    /// so its code is checked here, wrapped as `lamina run` and `lamina sweep` see it.
    #[test]
    fn verification_failures_have_their_own_code() {
        let v = VerifyError { lpn: 1, at: SimTime(5), arrival: SimTime(1), got: 0, expected: 1 };
        let e = anyhow::Error::new(RunTraceError::Run(RunError::Verify(v))).context("run 3 (preset=mbm)");
        assert_eq!(kind_of(&e), Kind::Verify);
        assert_eq!(Kind::Verify.code(), 3);
    }

    #[test]
    fn input_errors_are_usage_and_io_errors_are_runtime() {
        let cfg = lamina_engine::config::ConfigBuilder::new().build().unwrap_err();
        assert_eq!(kind_of(&anyhow::Error::new(cfg)), Kind::Usage);
        let missing = TraceError::Io {
            file: "t".into(),
            source: std::sync::Arc::new(std::io::Error::from(std::io::ErrorKind::NotFound)),
        };
        assert_eq!(kind_of(&anyhow::Error::new(missing)), Kind::Usage);
        let full = TraceError::Io {
            file: "t".into(),
            source: std::sync::Arc::new(std::io::Error::from(std::io::ErrorKind::StorageFull)),
        };
        assert_eq!(kind_of(&anyhow::Error::new(full).context("reading")), Kind::Runtime);
        let io: anyhow::Result<()> = Err(std::io::Error::other("x")).context("writing r.json");
        assert_eq!(kind_of(&io.unwrap_err()), Kind::Runtime);
        assert_eq!(kind_of(&usage("--beyond-capacity needs --capacity")), Kind::Usage);
    }
}
