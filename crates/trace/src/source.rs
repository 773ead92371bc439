//! Byte sources: decompression by magic bytes (gzip, bzip2, zstd, xz, lzma), archive
//! and binary recognition, tar unwrapping, and a line reader that reuses one buffer (no
//! allocation per line) and digests every byte it reads.

use std::collections::VecDeque;
use std::io::{self, Cursor, Read};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use serde::Serialize;
use xxhash_rust::xxh3::Xxh3;

use super::error::TraceError;

/// Compression detected from the first bytes of a trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Compression {
    /// Plain text.
    None,
    /// gzip (`1f 8b`), multi-member streams included.
    Gzip,
    /// bzip2 (`BZh`), multi-stream included.
    Bzip2,
    /// Zstandard (`28 b5 2f fd`), multi-frame included.
    Zstd,
    /// xz (`fd 37 7a 58 5a 00`), multi-stream included.
    Xz,
    /// Legacy `.lzma` (LZMA-alone: properties byte `5d`, then dictionary size and
    /// uncompressed size).
    Lzma,
}

impl std::fmt::Display for Compression {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Compression::None => "none",
            Compression::Gzip => "gzip",
            Compression::Bzip2 => "bzip2",
            Compression::Zstd => "zstd",
            Compression::Xz => "xz",
            Compression::Lzma => "lzma",
        })
    }
}

/// A boxed byte source that can move to the reader thread.
pub(crate) type Source = Box<dyn Read + Send>;

/// Read up to `n` bytes (fewer only at EOF).
fn peek_n(r: &mut dyn Read, n: usize) -> io::Result<Vec<u8>> {
    let mut buf = vec![0u8; n];
    let mut got = 0;
    while got < n {
        match r.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(k) => got += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    buf.truncate(got);
    Ok(buf)
}

/// What the byte source turned out to be.
pub(crate) struct SourceInfo {
    /// Its compression.
    pub compression: Compression,
    /// Whether the text came out of a tar archive.
    pub tar: bool,
    /// Warnings raised while reading (a truncated tar member).
    pub notes: Arc<SourceNotes>,
}

/// Warnings a byte source raises while it is read on the reader thread, and where
/// each tar member's text begins.
#[derive(Default, Debug)]
pub(crate) struct SourceNotes {
    truncated: Mutex<Option<String>>,
    members: Mutex<MemberStarts>,
}

/// Tar members kept for naming a line's member: the last so many. A line in an
/// older member (an error about a request held since, in an archive of more members)
/// is named by its line in the joined text. Memory stays bounded whatever the archive.
pub(crate) const MEMBERS_KEPT: usize = 4096;

/// The first line (in the joined text) and the name of each recent regular tar member.
#[derive(Default, Debug)]
struct MemberStarts {
    starts: VecDeque<(u64, Arc<str>)>,
}

impl SourceNotes {
    /// The warning to report, if any.
    pub(crate) fn warning(&self) -> Option<String> {
        self.truncated.lock().expect("notes lock").clone()
    }

    /// Line `line` of the joined text of a tar archive's members as (member, line
    /// within it); `None` outside a tar archive, or for a member no longer kept.
    pub(crate) fn locate(&self, line: u64) -> Option<(Arc<str>, u64)> {
        let members = self.members.lock().expect("notes lock");
        let starts = &members.starts;
        // The last member starting at or before the line (an empty member shares its
        // start with the next, which holds the line); none for a line before the
        // oldest member kept.
        let i = starts.partition_point(|&(first, _)| first <= line).checked_sub(1)?;
        let (first, name) = &starts[i];
        Some((name.clone(), line - first + 1))
    }

    fn member_starts(&self, first_line: u64, name: &str) {
        let mut members = self.members.lock().expect("notes lock");
        if members.starts.len() == MEMBERS_KEPT {
            members.starts.pop_front();
        }
        members.starts.push_back((first_line, name.into()));
    }
}

/// Containers and binaries recognised by their first bytes that are not traces.
const NOT_TRACES: &[(&[u8], &str)] = &[
    (&[0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c], "is a 7z archive; unpack it first (7z x)"),
    (b"PK\x03\x04", "is a zip archive; unpack it first (unzip)"),
    (b"PK\x05\x06", "is an empty zip archive"),
    (b"Rar!\x1a\x07", "is a rar archive; unpack it first"),
    (
        &[0x04, 0x22, 0x4d, 0x18],
        "is lz4-compressed, which Lamina does not read; decompress it first (lz4 -d)",
    ),
    (
        &[0x89, b'L', b'Z', b'O'],
        "is lzop-compressed, which Lamina does not read; decompress it first (lzop -d)",
    ),
    (&[0x1f, 0x9d], "is compress(1)-compressed (.Z), which Lamina does not read; decompress it first"),
    (b"\x7fELF", "is an ELF executable, not a trace"),
    (b"%PDF", "is a PDF document, not a trace"),
    (&[0x89, b'P', b'N', b'G'], "is a PNG image, not a trace"),
    (b"SQLite format 3\0", "is an SQLite database, not a trace"),
];

/// Records whether reading the file itself failed (as opposed to decoding it).
struct NoteFailure {
    inner: Source,
    failed: Arc<std::sync::atomic::AtomicBool>,
}

impl Read for NoteFailure {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.inner.read(buf).inspect_err(|_| self.failed.store(true, std::sync::atomic::Ordering::Relaxed))
    }
}

/// A decoder's error that did not come from reading the file is corrupt compressed
/// data: reported as `InvalidData` ("corrupt gzip data: …"), so callers can tell bad
/// trace content from a failing disk (the CLI's exit code 2 versus 1).
struct CorruptData {
    inner: Source,
    raw_failed: Arc<std::sync::atomic::AtomicBool>,
    compression: Compression,
}

impl Read for CorruptData {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.inner.read(buf).map_err(|e| {
            if self.raw_failed.load(std::sync::atomic::Ordering::Relaxed) {
                e
            } else {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("corrupt {} data: {e}", format!("{:?}", self.compression).to_lowercase()),
                )
            }
        })
    }
}

/// Detect compression by magic bytes and a tar container by its header; return the
/// decompressed, unwrapped text stream. Archives and binaries that are not traces are
/// named as such.
pub(crate) fn open_stream(name: &Arc<str>, mut raw: Source) -> Result<(Source, SourceInfo), TraceError> {
    let magic = peek_n(&mut *raw, 16).map_err(|e| TraceError::io(name, e))?;
    if let Some((_, what)) = NOT_TRACES.iter().find(|(m, _)| magic.starts_with(m)) {
        return Err(TraceError::NotText { file: name.clone(), what: (*what).to_owned() });
    }
    let raw_failed = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let raw: Source = Box::new(NoteFailure { inner: raw, failed: raw_failed.clone() });
    let chained: Source = Box::new(Cursor::new(magic.clone()).chain(raw));
    let (text, compression): (Source, Compression) = if magic.starts_with(&[0x1f, 0x8b]) {
        (Box::new(flate2::read::MultiGzDecoder::new(chained)), Compression::Gzip)
    } else if magic.starts_with(b"BZh") {
        (Box::new(bzip2::read::MultiBzDecoder::new(chained)), Compression::Bzip2)
    } else if magic.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        let d = zstd::stream::read::Decoder::new(chained).map_err(|e| TraceError::io(name, e))?;
        (Box::new(d), Compression::Zstd)
    } else if magic.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0x00]) {
        (Box::new(liblzma::read::XzDecoder::new_multi_decoder(chained)), Compression::Xz)
    } else if is_lzma_alone(&magic) {
        let stream = liblzma::stream::Stream::new_lzma_decoder(u64::MAX)
            .map_err(|e| TraceError::io(name, io::Error::other(e)))?;
        (Box::new(liblzma::read::XzDecoder::new_stream(chained, stream)), Compression::Lzma)
    } else {
        (chained, Compression::None)
    };
    let mut text: Source = if compression == Compression::None {
        text
    } else {
        Box::new(CorruptData { inner: text, raw_failed, compression })
    };
    let head = peek_n(&mut *text, 512).map_err(|e| TraceError::io(name, e))?;
    let is_tar = head.len() == 512 && is_tar_header(&head);
    if head.len() < 512 && head.get(257..262) == Some(b"ustar") {
        return Err(TraceError::NotText {
            file: name.clone(),
            what: format!(
                "is a tar archive cut short inside its first header ({} of 512 bytes): truncated or corrupt; \
                 download or create it again",
                head.len()
            ),
        });
    }
    let rest: Source = Box::new(Cursor::new(head).chain(text));
    let notes = Arc::new(SourceNotes::default());
    let info = SourceInfo { compression, tar: is_tar, notes: notes.clone() };
    if is_tar { Ok((Box::new(TarUnwrap::new(rest, name.clone(), notes)), info)) } else { Ok((rest, info)) }
}

/// An LZMA-alone header: properties `5d` (lc=3, lp=0, pb=2, what `xz --format=lzma` and
/// `lzma` write), a power-of-two-ish dictionary size, and an uncompressed size that is
/// either unknown (all ones) or below 2^48.
fn is_lzma_alone(m: &[u8]) -> bool {
    if m.len() < 13 || m[0] != 0x5d {
        return false;
    }
    let dict = u32::from_le_bytes([m[1], m[2], m[3], m[4]]);
    let size = u64::from_le_bytes(m[5..13].try_into().expect("8 bytes"));
    dict >= 1 << 12 && (size == u64::MAX || size < 1 << 48)
}

/// Does this text prefix look binary rather than a text trace? More than 10 % (30 % in
/// a sample under 512 bytes) of the
/// first 4 KiB being control bytes (other than tab, CR, LF and NUL, the padding of tar
/// members) or invalid UTF-8 means binary. Returns what to tell the user.
pub(crate) fn binary_text(prefix: &[u8]) -> Option<String> {
    let sample = &prefix[..prefix.len().min(4096)];
    if sample.is_empty() {
        return None;
    }
    let control =
        sample.iter().filter(|&&b| b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r' | 0) || b == 0x7f).count();
    let invalid = String::from_utf8_lossy(sample).matches('\u{fffd}').count();
    // NULs are not counted: tar headers and padding glued to FIU text are mostly NULs.
    let bad = control + invalid;
    // A short sample needs a clearer majority: a few corrupt bytes in a small text
    // file are better reported as a field error naming the line.
    let percent = if sample.len() >= 512 { 10 } else { 30 };
    (bad * 100 > sample.len() * percent).then(|| {
        format!("looks binary, not a text trace ({bad} of its first {} bytes are not text)", sample.len())
    })
}

/// The UTF-8 byte-order mark some editors (Notepad, Excel's CSV export) put first; it is
/// not part of the first field.
pub(crate) const UTF8_BOM: &[u8] = b"\xef\xbb\xbf";

/// Is this text UTF-16 or UTF-32 (by its byte-order mark, or, for UTF-16 without one,
/// by ASCII characters alternating with NULs in its first bytes)? Returns what it is
/// and the `iconv` encoding name to convert it from.
pub(crate) fn wide_text(head: &[u8]) -> Option<(&'static str, &'static str)> {
    const BOMS: [(&[u8], &str, &str); 4] = [
        (b"\xff\xfe\0\0", "UTF-32 text (little-endian, byte-order mark FF FE 00 00)", "UTF-32"),
        (b"\0\0\xfe\xff", "UTF-32 text (big-endian, byte-order mark 00 00 FE FF)", "UTF-32"),
        (b"\xff\xfe", "UTF-16 text (little-endian, byte-order mark FF FE)", "UTF-16"),
        (b"\xfe\xff", "UTF-16 text (big-endian, byte-order mark FE FF)", "UTF-16"),
    ];
    if let Some((_, what, from)) = BOMS.iter().find(|(bom, ..)| head.starts_with(bom)) {
        return Some((what, from));
    }
    let sample = &head[..head.len().min(64) & !1];
    let ascii = |b: u8| b.is_ascii_graphic() || matches!(b, b' ' | b'\t' | b'\r' | b'\n');
    let pairs = || sample.chunks_exact(2);
    if sample.len() < 8 {
        None
    } else if pairs().all(|p| ascii(p[0]) && p[1] == 0) {
        Some(("UTF-16 text (little-endian, no byte-order mark)", "UTF-16LE"))
    } else if pairs().all(|p| p[0] == 0 && ascii(p[1])) {
        Some(("UTF-16 text (big-endian, no byte-order mark)", "UTF-16BE"))
    } else {
        None
    }
}

/// A POSIX/GNU tar header: `ustar` magic at 257 and a valid checksum.
fn is_tar_header(h: &[u8]) -> bool {
    if h.len() < 512 || &h[257..262] != b"ustar" {
        return false;
    }
    let Some(stored) = octal(&h[148..156]) else { return false };
    let sum: u64 =
        h[..512].iter().enumerate().map(|(i, &b)| if (148..156).contains(&i) { 32 } else { b as u64 }).sum();
    sum == stored
}

fn octal(f: &[u8]) -> Option<u64> {
    let mut v: u64 = 0;
    let mut any = false;
    for &b in f {
        match b {
            b'0'..=b'7' => {
                v = v.checked_mul(8)?.checked_add((b - b'0') as u64)?;
                any = true;
            }
            b' ' | 0 if any => break,
            b' ' | 0 => {}
            _ => return None,
        }
    }
    Some(v)
}

/// Streams the contents of every regular file of a tar archive, in archive order,
/// with a newline between files that lack a final one. (FIU traces ship as tar files;
/// a naive reader sees the 512-byte header as junk before the first record.)
struct TarUnwrap {
    inner: Source,
    name: Arc<str>,
    notes: Arc<SourceNotes>,
    /// The current member's name and claimed size.
    member: (String, u64),
    /// Bytes left in the current member's data.
    left: u64,
    /// Padding after the current member.
    pad: u64,
    /// Whether the current member is a regular file (its data is passed through).
    regular: bool,
    /// Bytes of the archive read so far (where a truncation or corruption is).
    pos: u64,
    last_byte: u8,
    pending_newline: bool,
    /// Newlines passed on so far: the next member's text starts on the line after.
    newlines: u64,
    done: bool,
}

impl TarUnwrap {
    fn new(inner: Source, name: Arc<str>, notes: Arc<SourceNotes>) -> TarUnwrap {
        TarUnwrap {
            inner,
            name,
            notes,
            member: (String::new(), 0),
            left: 0,
            pad: 0,
            regular: false,
            pos: 0,
            last_byte: b'\n',
            pending_newline: false,
            newlines: 0,
            done: false,
        }
    }

    /// Skip `n` bytes: the rest of the current member (`left`, a member that is not a
    /// regular file) and its padding.
    fn skip(&mut self, mut n: u64) -> io::Result<()> {
        let mut scratch = [0u8; 4096];
        let data_end = self.pos + self.left;
        while n > 0 {
            let k = n.min(scratch.len() as u64) as usize;
            let got = peek_into(&mut *self.inner, &mut scratch[..k])?;
            self.pos += got as u64;
            if got < k {
                let (member, _) = &self.member;
                let place = if self.pos < data_end { "inside member" } else { "in the padding after member" };
                return Err(self.broken(format!("it ends {place} {member:?}, at byte {}", self.pos)));
            }
            n -= k as u64;
        }
        Ok(())
    }

    /// A tar archive that cannot be unwrapped: what is wrong, and what to do. Invalid
    /// data (bad input, the CLI's exit code 2), not the bare `failed to fill whole
    /// buffer` of a short read.
    fn broken(&self, what: String) -> io::Error {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "the tar archive is truncated or corrupt: {what}; check it with `tar tvf {name}` and \
                 download or create it again (or extract the member you need and read that file)",
                name = self.name
            ),
        )
    }

    /// Advance to the next regular member; false at the end of the archive.
    fn next_member(&mut self) -> io::Result<bool> {
        loop {
            self.skip(self.left + self.pad)?;
            self.left = 0;
            self.pad = 0;
            let mut h = [0u8; 512];
            let at = self.pos;
            let got = peek_into(&mut *self.inner, &mut h)?;
            self.pos += got as u64;
            if got == 0 || h.iter().all(|&b| b == 0) {
                return Ok(false);
            }
            let after = match self.member.0.as_str() {
                "" => String::new(),
                m => format!(" after member {m:?}"),
            };
            if got < 512 {
                return Err(self.broken(format!("it ends inside the header at byte {at}{after}")));
            }
            if !is_tar_header(&h) {
                return Err(self.broken(format!("the header at byte {at}{after} is not a valid tar header")));
            }
            let size = if h[124] & 0x80 != 0 {
                // GNU base-256 size.
                h[125..136].iter().fold(0u64, |a, &b| a.wrapping_shl(8) | b as u64)
            } else {
                octal(&h[124..136]).ok_or_else(|| {
                    self.broken(format!("the header at byte {at}{after} has a corrupt size field"))
                })?
            };
            self.left = size;
            self.pad = (512 - size % 512) % 512;
            let end = h[..100].iter().position(|&b| b == 0).unwrap_or(100);
            self.member = (String::from_utf8_lossy(&h[..end]).into_owned(), size);
            self.regular = matches!(h[156], b'0' | 0 | b'7');
            if self.regular {
                self.notes.member_starts(self.newlines + 1, &self.member.0);
                return Ok(true);
            }
        }
    }
}

fn peek_into(r: &mut dyn Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(k) => got += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

impl Read for TarUnwrap {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if out.is_empty() {
            return Ok(0);
        }
        loop {
            if self.pending_newline {
                self.pending_newline = false;
                out[0] = b'\n';
                self.last_byte = b'\n';
                self.newlines += 1;
                return Ok(1);
            }
            if self.done {
                return Ok(0);
            }
            if self.regular && self.left > 0 {
                let k = (out.len() as u64).min(self.left) as usize;
                let n = self.inner.read(&mut out[..k])?;
                self.pos += n as u64;
                if n == 0 {
                    // A cut-off archive (e.g. the head of a huge trace): read what is
                    // there, and say so.
                    let (member, claimed) = &self.member;
                    let got = claimed - self.left;
                    *self.notes.truncated.lock().expect("notes lock") = Some(format!(
                        "{}: tar member {member:?} is truncated: its header claims {claimed} bytes but the \
                         archive ends after {got}; read up to the end",
                        self.name
                    ));
                    self.left = 0;
                    self.done = true;
                    continue;
                }
                self.left -= n as u64;
                self.last_byte = out[n - 1];
                self.newlines += memchr::memchr_iter(b'\n', &out[..n]).count() as u64;
                return Ok(n);
            }
            if self.last_byte != b'\n' {
                self.pending_newline = true;
                continue;
            }
            if !self.next_member()? {
                self.done = true;
            }
        }
    }
}

/// Reads lines into one reusable buffer; strips `\n` and a preceding `\r`.
pub(crate) struct LineReader {
    src: Source,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// Where the newline search resumes (bytes before it hold no `\n`).
    scan: usize,
    eof: bool,
    line_no: u64,
    /// Where the last line read lies in `buf` (without its terminator), until the next read.
    last: (usize, usize),
    bytes: u64,
    hasher: Xxh3,
    max_line: usize,
}

const CHUNK: usize = 256 * 1024;
/// Longest accepted line; keeps memory bounded on binary garbage.
pub(crate) const MAX_LINE: usize = 1 << 20;

impl LineReader {
    pub(crate) fn new(src: Source) -> LineReader {
        LineReader {
            src,
            buf: vec![0; CHUNK],
            start: 0,
            end: 0,
            scan: 0,
            eof: false,
            line_no: 0,
            last: (0, 0),
            bytes: 0,
            hasher: Xxh3::new(),
            max_line: MAX_LINE,
        }
    }

    /// Read one chunk into the buffer; false at EOF.
    fn fill(&mut self) -> io::Result<bool> {
        if self.start > 0 {
            self.last = (0, 0);
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.scan -= self.start;
            self.start = 0;
        }
        if self.end == self.buf.len() {
            let grown = (self.buf.len() * 2).min(self.max_line + 2);
            if grown <= self.buf.len() {
                return Ok(true); // caller reports the over-long line
            }
            self.buf.resize(grown, 0);
        }
        loop {
            match self.src.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(false);
                }
                Ok(n) => {
                    self.hasher.update(&self.buf[self.end..self.end + n]);
                    self.bytes += n as u64;
                    self.end += n;
                    return Ok(true);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Buffer at least `want` bytes (or all of a shorter stream) without consuming them.
    pub(crate) fn prefill(&mut self, want: usize) -> io::Result<()> {
        while !self.eof && self.end - self.start < want.min(self.max_line) {
            self.fill()?;
        }
        Ok(())
    }

    /// Consume the first `n` buffered bytes (a byte-order mark): they stay digested and
    /// counted, but belong to no line.
    pub(crate) fn skip_buffered(&mut self, n: usize) {
        assert!(n <= self.end - self.start, "skip within the buffer");
        self.start += n;
        self.scan = self.scan.max(self.start);
    }

    /// The buffered, not yet consumed bytes.
    pub(crate) fn buffered(&self) -> &[u8] {
        &self.buf[self.start..self.end]
    }

    /// Whether [`LineReader::prefill`] saw the whole stream.
    pub(crate) fn at_eof(&self) -> bool {
        self.eof
    }

    /// The next line (without terminator) and its 1-based number, or `None` at EOF.
    #[inline]
    pub(crate) fn next_line(&mut self) -> Result<Option<(u64, &[u8])>, LineError> {
        loop {
            if let Some(i) = memchr::memchr(b'\n', &self.buf[self.scan..self.end]) {
                let nl = self.scan + i;
                let s = self.start;
                self.start = nl + 1;
                self.scan = self.start;
                self.line_no += 1;
                if nl - s > self.max_line {
                    return Err(LineError::TooLong(self.line_no));
                }
                self.last = (s, s + strip_cr(&self.buf[s..nl]).len());
                return Ok(Some((self.line_no, self.last_line())));
            }
            self.scan = self.end;
            if self.end - self.start > self.max_line {
                return Err(LineError::TooLong(self.line_no + 1));
            }
            if self.eof {
                if self.start < self.end {
                    let s = self.start;
                    self.start = self.end;
                    self.scan = self.end;
                    self.line_no += 1;
                    self.last = (s, s + strip_cr(&self.buf[s..self.end]).len());
                    return Ok(Some((self.line_no, self.last_line())));
                }
                return Ok(None);
            }
            self.fill().map_err(LineError::Io)?;
        }
    }

    /// The next line through a format's fast path, if the line is whole in the buffer
    /// and `parse` accepts it (see [`crate::formats::FastLine`]): its 1-based number,
    /// what `parse` made of it, and the line (without terminator, as
    /// [`LineReader::next_line`] gives it). `None` consumes nothing;
    /// [`LineReader::next_line`] then reads the line. `parse` finds the line's end
    /// itself (no newline search).
    #[inline]
    pub(crate) fn next_parsed<T>(
        &mut self,
        parse: impl FnOnce(&[u8]) -> Option<(T, usize)>,
    ) -> Option<(u64, T, &[u8])> {
        let (value, len) = parse(&self.buf[self.start..self.end])?;
        // `parse` vouches for a `\n` at `start + len - 1`, before `end`; the line
        // without it may not be over-long (an error the general way reports).
        if len > self.max_line {
            return None;
        }
        let s = self.start;
        self.start += len;
        self.scan = self.start;
        self.line_no += 1;
        self.last = (s, s + strip_cr(&self.buf[s..s + len - 1]).len());
        Some((self.line_no, value, self.last_line()))
    }

    /// The last line [`LineReader::next_line`] or [`LineReader::next_parsed`] gave
    /// (without terminator), again: an error found after the line was parsed quotes it.
    pub(crate) fn last_line(&self) -> &[u8] {
        &self.buf[self.last.0..self.last.1]
    }

    /// Read (and digest) the rest of the stream without parsing it.
    pub(crate) fn drain(&mut self, cancel: Option<&AtomicBool>) -> io::Result<()> {
        self.last = (0, 0);
        self.start = 0;
        self.end = 0;
        self.scan = 0;
        while !self.eof {
            if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
                return Ok(());
            }
            self.fill()?;
            self.start = 0;
            self.end = 0;
            self.scan = 0;
        }
        Ok(())
    }

    /// Lines read so far.
    pub(crate) fn lines(&self) -> u64 {
        self.line_no
    }

    /// Decompressed bytes read so far.
    pub(crate) fn bytes(&self) -> u64 {
        self.bytes
    }

    /// XXH3-64 of the decompressed bytes read so far.
    pub(crate) fn digest(&self) -> u64 {
        self.hasher.digest()
    }
}

#[inline]
fn strip_cr(l: &[u8]) -> &[u8] {
    match l.last() {
        Some(b'\r') => &l[..l.len() - 1],
        _ => l,
    }
}

/// A line-level failure.
pub(crate) enum LineError {
    Io(io::Error),
    TooLong(u64),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines_of(data: &[u8]) -> Vec<(u64, Vec<u8>)> {
        let mut r = LineReader::new(Box::new(Cursor::new(data.to_vec())));
        let mut out = Vec::new();
        while let Ok(Some((n, l))) = r.next_line() {
            out.push((n, l.to_vec()));
        }
        out
    }

    #[test]
    fn crlf_and_missing_final_newline() {
        let v = lines_of(b"a b\r\nc\n\nd");
        assert_eq!(v, vec![(1, b"a b".to_vec()), (2, b"c".to_vec()), (3, vec![]), (4, b"d".to_vec())]);
        assert!(lines_of(b"").is_empty());
    }

    #[test]
    fn long_lines_across_chunks() {
        let mut data = vec![b'x'; CHUNK * 3];
        data.push(b'\n');
        data.extend_from_slice(b"tail");
        let v = lines_of(&data);
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].1.len(), CHUNK * 3);
        assert_eq!(v[1].1, b"tail");
    }

    #[test]
    fn over_long_line_is_an_error() {
        let data = vec![b'x'; MAX_LINE + 10];
        let mut r = LineReader::new(Box::new(Cursor::new(data)));
        assert!(matches!(r.next_line(), Err(LineError::TooLong(1))));
    }

    #[test]
    fn digest_is_independent_of_chunking_and_drain() {
        let data: Vec<u8> = (0..1_000_000u32).flat_map(|i| format!("{i}\n").into_bytes()).collect();
        let mut a = LineReader::new(Box::new(Cursor::new(data.clone())));
        while let Ok(Some(_)) = a.next_line() {}
        let mut b = LineReader::new(Box::new(Cursor::new(data.clone())));
        b.next_line().ok();
        b.drain(None).unwrap();
        assert_eq!(a.digest(), b.digest());
        assert_eq!(a.digest(), xxhash_rust::xxh3::xxh3_64(&data));
    }

    fn tar_member(name: &str, body: &[u8]) -> Vec<u8> {
        tar_entry(name, body, b'0')
    }

    fn tar_entry(name: &str, body: &[u8], kind: u8) -> Vec<u8> {
        let mut h = [0u8; 512];
        h[..name.len()].copy_from_slice(name.as_bytes());
        h[100..107].copy_from_slice(b"0000644");
        let size = format!("{:011o}", body.len());
        h[124..135].copy_from_slice(size.as_bytes());
        h[136..147].copy_from_slice(b"00000000000");
        h[156] = kind;
        h[257..263].copy_from_slice(b"ustar\0");
        h[263..265].copy_from_slice(b"00");
        h[148..156].copy_from_slice(b"        ");
        let sum: u32 = h.iter().map(|&b| b as u32).sum();
        h[148..155].copy_from_slice(format!("{sum:06o}\0").as_bytes());
        let mut out = h.to_vec();
        out.extend_from_slice(body);
        out.resize(out.len().div_ceil(512) * 512, 0);
        out
    }

    /// Regression (new-user trial): errors numbered lines across the joined members of
    /// a tar archive. Each regular member's first line is recorded as the text passes,
    /// so a line of the joined text is found in its member: after a member without a
    /// final newline (one is inserted), past an empty member and a directory.
    #[test]
    fn a_line_of_the_joined_text_is_found_in_its_member() {
        let mut tar = tar_member("a.txt", b"one\ntwo");
        tar.extend(tar_member("e.txt", b""));
        tar.extend(tar_entry("d/", b"", b'5'));
        tar.extend(tar_member("b.txt", b"three\n\nfive\n"));
        tar.extend(tar_member("c.txt", b"six\n"));
        tar.extend([0u8; 1024]);
        let name: Arc<str> = "t.tar".into();
        let (s, info) = open_stream(&name, Box::new(Cursor::new(tar))).unwrap();
        let mut r = LineReader::new(s);
        let mut got = Vec::new();
        while let Ok(Some((n, line))) = r.next_line() {
            let (member, l) = info.notes.locate(n).unwrap();
            got.push(format!("{member}:{l}:{}", String::from_utf8_lossy(line)));
        }
        assert_eq!(
            got,
            ["a.txt:1:one", "a.txt:2:two", "b.txt:1:three", "b.txt:2:", "b.txt:3:five", "c.txt:1:six"]
        );
        // Only the last MEMBERS_KEPT members are kept: older lines are not found.
        let notes = SourceNotes::default();
        assert_eq!(notes.locate(1), None);
        let n = MEMBERS_KEPT as u64 + 10;
        for i in 0..n {
            notes.member_starts(2 * i + 1, &format!("m{i}"));
        }
        assert_eq!(notes.locate(20), None);
        assert_eq!(notes.locate(22), Some(("m10".into(), 2)));
        assert_eq!(notes.locate(2 * n + 5), Some((format!("m{}", n - 1).into(), 7)));
    }

    #[test]
    fn tar_members_are_unwrapped_and_joined() {
        let mut tar = tar_member("a.txt", b"one\ntwo");
        tar.extend(tar_member("b.txt", b"three\n"));
        tar.extend([0u8; 1024]);
        let name: Arc<str> = "t.tar".into();
        let (mut s, info) = open_stream(&name, Box::new(Cursor::new(tar))).unwrap();
        assert_eq!(info.compression, Compression::None);
        assert!(info.tar);
        let mut text = String::new();
        s.read_to_string(&mut text).unwrap();
        assert_eq!(text, "one\ntwo\nthree\n");
    }

    /// Regression (issue #8 item 11): the FIU cheetah sample is the head of a tar whose
    /// member claims 1.8 GB; it used to be rejected as "tar member truncated".
    #[test]
    fn a_truncated_tar_member_is_read_to_its_end_with_a_warning() {
        let body: Vec<u8> = (0..100).flat_map(|i| format!("{i} 1 p 8 8 R 8 0 x\n").into_bytes()).collect();
        let mut tar = tar_member("cheetah.txt", &body);
        // Claim 1.8 GB, keep the first 100 lines.
        let claimed = format!("{:011o}", 1_800_000_000u64);
        tar[124..135].copy_from_slice(claimed.as_bytes());
        tar[148..156].copy_from_slice(b"        ");
        let sum: u32 = tar[..512].iter().map(|&b| b as u32).sum();
        tar[148..155].copy_from_slice(format!("{sum:06o}\0").as_bytes());
        tar.truncate(512 + body.len());
        let name: Arc<str> = "cheetah.tar".into();
        let (mut s, info) = open_stream(&name, Box::new(Cursor::new(tar))).unwrap();
        let mut text = String::new();
        s.read_to_string(&mut text).unwrap();
        assert_eq!(text.as_bytes(), &body[..]);
        let w = info.notes.warning().expect("a warning");
        assert!(w.contains("\"cheetah.txt\" is truncated") && w.contains("1800000000"), "{w}");
    }

    /// Regression (new-user trial finding 5): a tar cut short after a member's data
    /// failed with the bare "failed to fill whole buffer". Every way an archive can be
    /// cut or corrupt (outside a member's data, which is read with a warning) is now an
    /// invalid-data error saying so, where, and what to do.
    #[test]
    fn a_truncated_or_corrupt_tar_is_named_as_such() {
        let mut tar = tar_member("a.txt", b"one\ntwo\n");
        tar.extend(tar_member("b.txt", b"three\n"));
        tar.extend([0u8; 1024]);
        let read = |bytes: &[u8]| {
            let name: Arc<str> = "t.tar".into();
            let (mut s, _) = open_stream(&name, Box::new(Cursor::new(bytes.to_vec())))?;
            let mut text = String::new();
            s.read_to_string(&mut text).map_err(|e| TraceError::io(&name, e))?;
            Ok::<String, TraceError>(text)
        };
        assert_eq!(read(&tar).unwrap(), "one\ntwo\nthree\n");
        let cases: [(usize, &str); 3] = [
            (530, "it ends in the padding after member \"a.txt\", at byte 530"),
            (1300, "it ends inside the header at byte 1024 after member \"a.txt\""),
            (300, "is a tar archive cut short inside its first header (300 of 512 bytes)"),
        ];
        for (cut, says) in cases {
            let e = read(&tar[..cut]).unwrap_err();
            let text = e.to_string();
            assert!(text.starts_with("t.tar: ") && text.contains(says), "{cut}: {text}");
            assert!(text.contains("truncated or corrupt"), "{text}");
            if let TraceError::Io { source, .. } = &e {
                assert_eq!(source.kind(), io::ErrorKind::InvalidData);
                assert!(text.contains("tar tvf t.tar"), "{text}");
            }
        }
        let mut corrupt = tar.clone();
        corrupt[1024 + 200] ^= 0x55; // the second header's checksum no longer matches
        let e = read(&corrupt).unwrap_err().to_string();
        assert!(
            e.contains("the header at byte 1024 after member \"a.txt\" is not a valid tar header"),
            "{e}"
        );
    }

    #[test]
    fn wide_text_is_recognised() {
        let utf16le: Vec<u8> = "0 0 8 8 1\n".bytes().flat_map(|b| [b, 0]).collect();
        let utf16be: Vec<u8> = "0 0 8 8 1\n".bytes().flat_map(|b| [0, b]).collect();
        assert_eq!(wide_text(&[&[0xff, 0xfe][..], &utf16le].concat()).unwrap().1, "UTF-16");
        assert_eq!(wide_text(&[&[0xfe, 0xff][..], &utf16be].concat()).unwrap().1, "UTF-16");
        assert_eq!(wide_text(b"\xff\xfe\0\x000\0\0\0").unwrap().1, "UTF-32");
        assert_eq!(wide_text(&utf16le).unwrap().1, "UTF-16LE");
        assert_eq!(wide_text(&utf16be).unwrap().1, "UTF-16BE");
        assert!(wide_text(b"0 0 8 8 1\n5 0 16 8 0\n").is_none());
        assert!(wide_text(b"\xef\xbb\xbf0 0 8 8 1\n").is_none());
        assert!(wide_text(b"a\0b\0").is_none(), "too short to judge");
        assert!(wide_text(b"a.trace\0\0\0\0\0\0\0\0\0\0\0").is_none(), "tar junk is not UTF-16");
    }

    #[test]
    fn archives_and_binaries_are_named() {
        let name: Arc<str> = "x".into();
        let zip = b"PK\x03\x04\x14\x00\x00\x00".to_vec();
        let e = open_stream(&name, Box::new(Cursor::new(zip))).err().unwrap();
        assert_eq!(e.to_string(), "x: is a zip archive; unpack it first (unzip)");
        let mut rng = 0x1234_5678_9abc_def0u64;
        let random: Vec<u8> = (0..4096)
            .map(|_| {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                rng as u8
            })
            .collect();
        assert!(binary_text(&random).unwrap().starts_with("looks binary"));
        assert!(binary_text(b"0 0 1 8 1\n\0\0\0ustar 5 1 p 8 8 R 8 0 x\n").is_none());
    }

    #[test]
    fn xz_and_lzma_streams_decompress() {
        use std::io::Write;
        let text = b"0 0 1 8 1\n5 0 9 8 0\n";
        let mut xz = liblzma::write::XzEncoder::new(Vec::new(), 6);
        xz.write_all(text).unwrap();
        let xz = xz.finish().unwrap();
        let opts = liblzma::stream::LzmaOptions::new_preset(6).unwrap();
        let stream = liblzma::stream::Stream::new_lzma_encoder(&opts).unwrap();
        let mut lz = liblzma::write::XzEncoder::new_stream(Vec::new(), stream);
        lz.write_all(text).unwrap();
        let lz = lz.finish().unwrap();
        for (bytes, c) in [(xz, Compression::Xz), (lz, Compression::Lzma)] {
            let name: Arc<str> = "t".into();
            let (mut s, info) = open_stream(&name, Box::new(Cursor::new(bytes))).unwrap();
            assert_eq!(info.compression, c);
            let mut out = Vec::new();
            s.read_to_end(&mut out).unwrap();
            assert_eq!(out, text);
        }
    }
}
