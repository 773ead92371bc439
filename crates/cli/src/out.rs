//! Everything the CLI writes: standard output (a closed pipe ends the command quietly)
//! and output files (checked before any work, written atomically).
//!
//! An output path is *prepared* when the command starts ([`OutputFile::create`]): a
//! temporary file is created beside it, which proves the directory exists and is
//! writable before a long simulation runs. The content goes to the temporary file and
//! [`OutputFile::commit`] renames it over the path, so a reader sees the old file or the
//! whole new one, never a torn one. `-` is standard output; an existing non-regular file
//! (`/dev/stdout`, a FIFO) is opened and written in place.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::Context as _;

use crate::exit::{Failure, Kind};

/// Standard output was closed by its reader (`lamina presets | head -1`): the command
/// stops writing and exits successfully and silently.
#[derive(Debug, thiserror::Error)]
#[error("standard output closed")]
pub struct ClosedStdout;

/// Map a write error on standard output: a closed pipe becomes [`ClosedStdout`].
pub fn stdout_error(e: io::Error) -> anyhow::Error {
    if e.kind() == io::ErrorKind::BrokenPipe {
        ClosedStdout.into()
    } else {
        anyhow::Error::new(e).context("writing to standard output")
    }
}

/// Print `text` to standard output (no newline added) and flush.
pub fn print(text: &str) -> anyhow::Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes()).and_then(|()| out.flush()).map_err(stdout_error)
}

/// An output file prepared before the work that fills it.
pub struct OutputFile {
    target: Target,
    /// The path as the user gave it (for messages).
    shown: String,
}

enum Target {
    Stdout(io::Stdout),
    /// An existing non-regular file, written in place.
    Direct(File),
    /// A temporary file beside the final path, renamed over it by `commit`.
    Atomic(tempfile::NamedTempFile, PathBuf),
}

impl OutputFile {
    /// Prepare `path` for writing (`-` = standard output). Fails — as bad input, exit
    /// code 2 — if the directory does not exist, is not writable, or `path` is a directory.
    pub fn create(path: &Path) -> anyhow::Result<OutputFile> {
        let shown = path.display().to_string();
        let bad = |what: String| Failure::new(Kind::Usage, format!("output {shown}: {what}"));
        if path.as_os_str() == "-" {
            return Ok(OutputFile { target: Target::Stdout(io::stdout()), shown: "standard output".into() });
        }
        if let Ok(meta) = std::fs::metadata(path) {
            if meta.is_dir() {
                return Err(bad("is a directory".into()).into());
            }
            if !meta.is_file() {
                let f = std::fs::OpenOptions::new()
                    .write(true)
                    .open(path)
                    .map_err(|e| bad(format!("cannot open for writing: {e}")))?;
                return Ok(OutputFile { target: Target::Direct(f), shown });
            }
        }
        let name = path.file_name().ok_or_else(|| bad("not a file name".into()))?;
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        if !dir.is_dir() {
            return Err(bad(format!("directory {} does not exist", dir.display())).into());
        }
        let prefix = format!(".{}.", name.to_string_lossy());
        let mut builder = tempfile::Builder::new();
        builder.prefix(&prefix).suffix(".tmp");
        // An ordinary file's mode (0666 less the umask), not a temporary file's 0600.
        #[cfg(unix)]
        builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
        let tmp = builder
            .tempfile_in(&dir)
            .map_err(|e| bad(format!("cannot create a file in {}: {e}", dir.display())))?;
        Ok(OutputFile { target: Target::Atomic(tmp, path.to_path_buf()), shown })
    }

    /// Where the content goes until [`OutputFile::commit`].
    pub fn writer(&mut self) -> &mut dyn Write {
        match &mut self.target {
            Target::Stdout(s) => s,
            Target::Direct(f) => f,
            Target::Atomic(t, _) => t.as_file_mut(),
        }
    }

    /// A second handle on the content's destination, for a writer that must own it
    /// (the engine's latency log streams into it). What goes through it is committed
    /// (or discarded) with this file.
    pub fn stream(&mut self) -> anyhow::Result<Box<dyn Write + Send>> {
        let shown = self.shown.clone();
        let file = match &self.target {
            Target::Stdout(_) => return Ok(Box::new(io::stdout())),
            Target::Direct(f) => f.try_clone(),
            Target::Atomic(t, _) => t.as_file().try_clone(),
        };
        Ok(Box::new(file.with_context(|| format!("opening {shown}"))?))
    }

    /// The path as the user gave it (`standard output` for `-`), for messages.
    pub fn shown(&self) -> &str {
        &self.shown
    }

    /// Write all of `bytes`.
    pub fn write_all(&mut self, bytes: &[u8]) -> anyhow::Result<()> {
        let shown = self.shown.clone();
        let is_stdout = matches!(self.target, Target::Stdout(_));
        self.writer().write_all(bytes).map_err(|e| write_error(e, is_stdout, &shown))
    }

    /// Flush and put the file in place (for a regular file: rename over the path).
    pub fn commit(mut self) -> anyhow::Result<()> {
        let shown = self.shown.clone();
        let is_stdout = matches!(self.target, Target::Stdout(_));
        self.writer().flush().map_err(|e| write_error(e, is_stdout, &shown))?;
        match self.target {
            Target::Stdout(_) => Ok(()),
            Target::Direct(_) => Ok(()),
            Target::Atomic(t, path) => {
                t.persist(&path).map_err(|e| e.error).with_context(|| format!("writing {shown}"))?;
                Ok(())
            }
        }
    }
}

fn write_error(e: io::Error, is_stdout: bool, shown: &str) -> anyhow::Error {
    if is_stdout { stdout_error(e) } else { anyhow::Error::new(e).context(format!("writing {shown}")) }
}

/// Write `bytes` to `path` atomically (see the module docs): the one atomic-write helper.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let mut f = OutputFile::create(path)?;
    f.write_all(bytes)?;
    f.commit()
}

/// What a path names, for telling whether two paths are the same file: the canonical
/// path if it exists, else its canonical directory joined with its file name (an output
/// that does not exist yet). `None` for `-` and for a path whose directory does not exist
/// (preparing such an output fails anyway).
fn identity(path: &Path) -> Option<PathBuf> {
    if path.as_os_str() == "-" {
        return None;
    }
    if let Ok(p) = std::fs::canonicalize(path) {
        return Some(p);
    }
    let name = path.file_name()?;
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    Some(std::fs::canonicalize(dir).ok()?.join(name))
}

/// Refuse — as bad input, before any work — output paths that would destroy an input or
/// each other: an output that is one of the command's input files (the atomic rename
/// would replace the trace or config after the run read it), two outputs that are the
/// same file (one would silently replace the other), or two outputs both on standard
/// output (`-`; their contents would run together). `outputs` and `inputs` are
/// `(flag or role, path)` pairs; the error names both flags and the path.
pub fn check_distinct(outputs: &[(&str, &Path)], inputs: &[(&str, &Path)]) -> anyhow::Result<()> {
    let bad = |m: String| -> anyhow::Result<()> { Err(Failure::new(Kind::Usage, m).into()) };
    for (i, (flag, path)) in outputs.iter().enumerate() {
        let id = identity(path);
        for (in_flag, in_path) in inputs {
            if id.is_some() && id == identity(in_path) {
                return bad(format!(
                    "{flag} {} is the same file as the {in_flag} {}: writing it would replace that input; choose another output path",
                    path.display(),
                    in_path.display()
                ));
            }
        }
        for (other_flag, other) in &outputs[..i] {
            let both_stdout = path.as_os_str() == "-" && other.as_os_str() == "-";
            if both_stdout || (id.is_some() && id == identity(other)) {
                let what =
                    if both_stdout { "standard output".to_string() } else { path.display().to_string() };
                return bad(format!(
                    "{other_flag} and {flag} both write to {what}: one would replace or run into the other; give each its own path"
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_writes_replace_whole_files_and_leave_no_temporaries() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.json");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_prepared_file_appears_only_on_commit_and_bad_paths_fail_up_front() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.json");
        let mut f = OutputFile::create(&p).unwrap();
        f.write_all(b"{}").unwrap();
        assert!(!p.exists(), "nothing at the path before commit");
        f.commit().unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"{}");
        let missing = dir.path().join("no/such/dir/r.json");
        let e = OutputFile::create(&missing).err().unwrap().to_string();
        assert!(e.contains("does not exist"), "{e}");
        let e = OutputFile::create(dir.path()).err().unwrap().to_string();
        assert!(e.contains("is a directory"), "{e}");
        // A dropped, uncommitted file leaves nothing behind.
        drop(OutputFile::create(&dir.path().join("gone.json")).unwrap());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn outputs_that_would_replace_an_input_or_each_other_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let trace = dir.path().join("t.csv");
        std::fs::write(&trace, "x").unwrap();
        let json = dir.path().join("r.json");
        let log = dir.path().join("sub/../r.json");
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        let inputs = [("trace", trace.as_path())];
        assert!(check_distinct(&[("--json", json.as_path())], &inputs).is_ok());
        let e = check_distinct(&[("--json", trace.as_path())], &inputs).unwrap_err().to_string();
        assert!(e.contains("--json") && e.contains("same file as the trace"), "{e}");
        // The same file spelled two ways, not yet existing.
        let e = check_distinct(&[("--json", json.as_path()), ("--latency-log", log.as_path())], &inputs)
            .unwrap_err()
            .to_string();
        assert!(e.contains("--json and --latency-log both write to"), "{e}");
        let dash = Path::new("-");
        let e = check_distinct(&[("--json", dash), ("--latency-log", dash)], &[]).unwrap_err().to_string();
        assert!(e.contains("standard output"), "{e}");
        assert!(check_distinct(&[("--json", dash)], &[("trace", dash)]).is_ok());
        assert!(trace.exists());
    }
}
