//! Trace inputs named on a command line: a file, `-` (standard input), or a pipe
//! (`/dev/stdin`, `<(xzcat t.xz)`, a FIFO, a character device).
//!
//! A run reads its trace twice (the prefill pass of `host.unwritten_reads = "prefill"`,
//! then the replay), which a pipe cannot do: the first pass used to consume the stream
//! and the replay saw nothing. [`TraceInput::open`] therefore spools a non-seekable
//! input once, as is (still compressed), to an unnamed-on-exit temporary file
//! (`tempfile`, removed when the `TraceInput` drops), and every
//! [`TraceInput::reader`] reads that file from its start. Memory stays bounded; the
//! disk holds one copy of the (compressed) input.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tempfile::NamedTempFile;

use crate::{TraceError, TraceOptions, TraceReader};

/// The name standing for standard input wherever a trace path is accepted.
pub const STDIN_PATH: &str = "-";
/// How standard input is named in reports and errors.
pub const STDIN_NAME: &str = "stdin";

/// Whether `path` means standard input (`-`).
pub fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == STDIN_PATH
}

/// Whether `path` is `-` or a non-seekable file (FIFO, character device, socket):
/// something that can be read only once.
pub fn is_stream(path: &Path) -> io::Result<bool> {
    if is_stdin(path) {
        return Ok(true);
    }
    let ty = std::fs::metadata(path)?.file_type();
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        Ok(ty.is_fifo() || ty.is_char_device() || ty.is_socket())
    }
    #[cfg(not(unix))]
    {
        Ok(!ty.is_file())
    }
}

/// The display name of a trace path (`stdin` for `-`).
pub fn display_name(path: &Path) -> String {
    if is_stdin(path) { STDIN_NAME.to_owned() } else { path.display().to_string() }
}

/// Open `path` for one pass: `-` is standard input.
pub(crate) fn open_once(path: &Path) -> Result<Box<dyn Read + Send>, TraceError> {
    if is_stdin(path) {
        return Ok(Box::new(io::stdin()));
    }
    let file = File::open(path).map_err(|e| TraceError::io(&Arc::from(display_name(path)), e))?;
    Ok(Box::new(file))
}

/// A trace that can be read any number of times (pipes spooled once).
#[derive(Debug)]
pub struct TraceInput {
    name: String,
    path: PathBuf,
    spool: Option<NamedTempFile>,
}

impl TraceInput {
    /// Open `path`; a pipe or `-` is copied to a temporary file first.
    pub fn open(path: &Path) -> Result<TraceInput, TraceError> {
        let name = display_name(path);
        let io_err = |e: io::Error| TraceError::io(&Arc::from(name.as_str()), e);
        if !is_stream(path).map_err(io_err)? {
            return Ok(TraceInput { name, path: path.to_owned(), spool: None });
        }
        let mut src = open_once(path)?;
        let mut spool = tempfile::Builder::new().prefix("lamina-trace-").tempfile().map_err(|e| {
            io_err(io::Error::new(e.kind(), format!("cannot create a temporary file to spool the pipe: {e}")))
        })?;
        io::copy(&mut src, spool.as_file_mut()).map_err(io_err)?;
        Ok(TraceInput { name, path: spool.path().to_owned(), spool: Some(spool) })
    }

    /// The name used in reports and errors (`stdin` for `-`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether the input was a pipe, spooled to a temporary file.
    pub fn is_spooled(&self) -> bool {
        self.spool.is_some()
    }

    /// The trace's file (the spool for a pipe), opened at its start.
    pub fn file(&self) -> Result<File, TraceError> {
        File::open(&self.path).map_err(|e| TraceError::io(&Arc::from(self.name.as_str()), e))
    }

    /// A fresh reader from the start of the trace.
    pub fn reader(
        &self,
        opts: &TraceOptions,
        logical_capacity_bytes: u64,
    ) -> Result<TraceReader, TraceError> {
        TraceReader::from_reader(&self.name, self.file()?, None, opts, logical_capacity_bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regular_files_are_not_spooled_and_dash_is_stdin() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.trace");
        std::fs::write(&p, "0 0 1 8 1\n").unwrap();
        let input = TraceInput::open(&p).unwrap();
        assert!(!input.is_spooled());
        for _ in 0..2 {
            let n = input.reader(&TraceOptions::default(), u64::MAX).unwrap().count();
            assert_eq!(n, 1);
        }
        assert!(is_stdin(Path::new("-")));
        assert_eq!(display_name(Path::new("-")), "stdin");
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_spooled_once_and_read_twice() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        let ok =
            std::process::Command::new("mkfifo").arg(&fifo).status().map(|s| s.success()).unwrap_or(false);
        if !ok {
            return; // no mkfifo on this system
        }
        let writer = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::write(fifo, "0 0 1 8 1\n5 0 9 8 0\n").unwrap())
        };
        assert!(is_stream(&fifo).unwrap());
        let input = TraceInput::open(&fifo).unwrap();
        writer.join().unwrap();
        assert!(input.is_spooled());
        for _ in 0..2 {
            assert_eq!(input.reader(&TraceOptions::default(), u64::MAX).unwrap().count(), 2);
        }
    }
}
