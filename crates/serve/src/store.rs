//! The served data: what clients wrote, so every read returns the last write. The
//! simulated device models timing and the FTL's bookkeeping, not bytes; the bytes live
//! here, either in memory (a sparse map of 4 KiB blocks, bounded by what clients write)
//! or in a backing file (`--backing FILE`, sized to the export, sparse where unwritten).

use std::collections::BTreeMap;
use std::fs::File;
use std::ops::Range;
use std::os::unix::fs::FileExt;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// The granularity of the in-memory store.
const BLOCK: u64 = 4096;

/// Where the data lives.
pub enum Store {
    /// Sparse in memory: only blocks that were written (a block trimmed whole is freed).
    Memory(BTreeMap<u64, Box<[u8; BLOCK as usize]>>),
    /// A file of the export's size.
    File(File),
}

impl Store {
    /// An empty in-memory store.
    pub fn memory() -> Store {
        Store::Memory(BTreeMap::new())
    }

    /// A store in `path`: [`Backing::open`] then [`Backing::into_store`] (the tests' way).
    #[cfg(test)]
    pub fn file(path: &Path, size: u64, page_bytes: u64) -> std::io::Result<(Store, Vec<Range<u64>>)> {
        let b = Backing::open(path, size, page_bytes)?;
        let held = b.held.clone();
        Ok((b.into_store()?, held))
    }

    /// Bytes `offset .. offset + len`; never-written bytes read as zero.
    pub fn read(&self, offset: u64, len: u32) -> std::io::Result<Vec<u8>> {
        let mut out = vec![0u8; len as usize];
        match self {
            Store::File(f) => f.read_exact_at(&mut out, offset)?,
            Store::Memory(m) => {
                for (block, range, at) in pieces(offset, len as u64) {
                    if let Some(b) = m.get(&block) {
                        out[at..at + range.len()].copy_from_slice(&b[range]);
                    }
                }
            }
        }
        Ok(out)
    }

    /// Store `data` at `offset`.
    pub fn write(&mut self, offset: u64, data: &[u8]) -> std::io::Result<()> {
        match self {
            Store::File(f) => f.write_all_at(data, offset),
            Store::Memory(m) => {
                for (block, range, at) in pieces(offset, data.len() as u64) {
                    let b = m.entry(block).or_insert_with(|| Box::new([0; BLOCK as usize]));
                    b[range.clone()].copy_from_slice(&data[at..at + range.len()]);
                }
                Ok(())
            }
        }
    }

    /// Discard `offset .. offset + len`: it reads as zeros afterwards (whole blocks are
    /// freed in memory; a file gets zeros written in 1 MiB pieces).
    pub fn trim(&mut self, offset: u64, len: u64) -> std::io::Result<()> {
        match self {
            Store::File(f) => {
                let zeros = vec![0u8; (1 << 20).min(len) as usize];
                let mut done = 0;
                while done < len {
                    let k = (len - done).min(zeros.len() as u64) as usize;
                    f.write_all_at(&zeros[..k], offset + done)?;
                    done += k as u64;
                }
                Ok(())
            }
            Store::Memory(m) => {
                let mut clear = |off: u64, n: u64| {
                    for (block, range, _) in pieces(off, n) {
                        if range.len() == BLOCK as usize {
                            m.remove(&block);
                        } else if let Some(b) = m.get_mut(&block) {
                            b[range].fill(0);
                        }
                    }
                };
                // Whole blocks by a range query over the blocks held (a trim of the whole
                // device, as mkfs sends, costs what is stored, not what is trimmed).
                let end = offset + len;
                let (lo, hi) = (offset.div_ceil(BLOCK), end / BLOCK);
                if lo >= hi {
                    clear(offset, len);
                } else {
                    clear(offset, lo * BLOCK - offset);
                    clear(hi * BLOCK, end - hi * BLOCK);
                    let held: Vec<u64> = m.range(lo..hi).map(|(&k, _)| k).collect();
                    for k in held {
                        m.remove(&k);
                    }
                }
                Ok(())
            }
        }
    }

    /// Make written data durable (a backing file's `fdatasync`; nothing in memory).
    pub fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Store::File(f) => f.sync_data(),
            Store::Memory(_) => Ok(()),
        }
    }

    /// Bytes held in memory (0 for a file).
    pub fn resident_bytes(&self) -> u64 {
        match self {
            Store::File(_) => 0,
            Store::Memory(m) => m.len() as u64 * BLOCK,
        }
    }
}

/// A backing file opened and scanned, not yet sized to the export (a server that refuses
/// to start leaves it as it was).
pub struct Backing {
    file: File,
    size: u64,
    /// The pages of `page_bytes` that already hold data ([`held_pages`]).
    pub held: Vec<Range<u64>>,
}

impl Backing {
    /// Open `path` (created if missing; existing contents are served as they are, so a
    /// backing file keeps a file system across runs) for an export of `size` bytes, and
    /// find the pages of `page_bytes` that already hold data. A file longer than `size`
    /// is refused, not truncated: the bytes beyond the export are someone's data.
    pub fn open(path: &Path, size: u64, page_bytes: u64) -> std::io::Result<Backing> {
        let file =
            std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(false).open(path)?;
        let meta = file.metadata()?;
        if !meta.is_file() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "not a regular file; give a file path (it is created if missing)",
            ));
        }
        let prior = meta.len();
        if prior > size {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!(
                    "the file is {prior} bytes, longer than the export ({size} bytes), and would be \
                     truncated; use a new file, or a device whose logical capacity holds it"
                ),
            ));
        }
        // Only the file's old length can hold data: the extension reads as zeros.
        let held = held_pages(&file, prior, page_bytes)?;
        Ok(Backing { file, size, held })
    }

    /// Extend the file to the export's size (sparse) and serve from it.
    pub fn into_store(self) -> std::io::Result<Store> {
        self.file.set_len(self.size)?;
        Ok(Store::File(self.file))
    }
}

/// Bytes read at once by [`held_pages`].
const SCAN_BYTES: u64 = 1 << 20;

/// The pages (of `page_bytes`, numbered from the file's start) among its first `len`
/// bytes that hold a non-zero byte, as ascending runs. An all-zero page reads the same
/// whether it was written or not, so it counts as unwritten; a trimmed range, which the
/// store fills with zeros, does too. Holes are skipped without reading them
/// (`SEEK_DATA`/`SEEK_HOLE`; a file system without them reports one data extent, and
/// the scan reads it all), so the cost is the data the file holds, not its length.
pub fn held_pages(f: &File, len: u64, page_bytes: u64) -> std::io::Result<Vec<Range<u64>>> {
    assert!(page_bytes > 0);
    let mut runs: Vec<Range<u64>> = Vec::new();
    if len == 0 || f.metadata()?.blocks() == 0 {
        return Ok(runs);
    }
    let chunk = SCAN_BYTES.div_ceil(page_bytes) * page_bytes;
    let mut buf = vec![0u8; chunk as usize];
    let mut at = 0;
    while at < len {
        let Some((data, hole)) = data_extent(f, at)? else { break };
        // Whole pages covering the extent (a page may straddle a hole's edge).
        let (mut pos, end) = (data / page_bytes * page_bytes, hole.min(len));
        while pos < end {
            let n = chunk.min(len - pos).min((end - pos).div_ceil(page_bytes) * page_bytes);
            let b = &mut buf[..n as usize];
            f.read_exact_at(b, pos)?;
            for (i, page) in b.chunks(page_bytes as usize).enumerate() {
                if page.chunks(64).any(|c| c.iter().fold(0, |a, &x| a | x) != 0) {
                    let lpn = pos / page_bytes + i as u64;
                    match runs.last_mut() {
                        Some(r) if r.end >= lpn => r.end = r.end.max(lpn + 1),
                        _ => runs.push(lpn..lpn + 1),
                    }
                }
            }
            pos += n;
        }
        at = end.max(at + 1).div_ceil(page_bytes) * page_bytes;
    }
    Ok(runs)
}

/// The next data extent at or after `at`: (its start, the hole after it); `None` when
/// only a hole remains.
fn data_extent(f: &File, at: u64) -> std::io::Result<Option<(u64, u64)>> {
    use rustix::fs::{SeekFrom, seek};
    let data = match seek(f, SeekFrom::Data(at)) {
        Ok(d) => d,
        Err(rustix::io::Errno::NXIO) => return Ok(None),
        // No SEEK_DATA on this file system: the rest is one extent.
        Err(rustix::io::Errno::INVAL | rustix::io::Errno::OPNOTSUPP) => return Ok(Some((at, u64::MAX))),
        Err(e) => return Err(e.into()),
    };
    let hole = seek(f, SeekFrom::Hole(data)).map_err(std::io::Error::from)?;
    Ok(Some((data, hole)))
}

/// The blocks `offset .. offset + len` touches: (block index, byte range inside the
/// block, position in the caller's buffer).
fn pieces(offset: u64, len: u64) -> impl Iterator<Item = (u64, std::ops::Range<usize>, usize)> {
    let end = offset + len;
    let first = offset / BLOCK;
    let last = if len == 0 { first } else { (end - 1) / BLOCK + 1 };
    (first..last).map(move |b| {
        let lo = (b * BLOCK).max(offset);
        let hi = ((b + 1) * BLOCK).min(end);
        (b, (lo - b * BLOCK) as usize..(hi - b * BLOCK) as usize, (lo - offset) as usize)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The in-memory store against a flat reference buffer, and the file store likewise.
    #[test]
    fn reads_return_the_last_write_and_trims_read_zero() {
        let dir = tempfile::tempdir().unwrap();
        let size = 64 * 1024;
        let mut stores = [Store::memory(), Store::file(&dir.path().join("b"), size, 4096).unwrap().0];
        for s in &mut stores {
            let mut reference = vec![0u8; size as usize];
            let ops: [(u64, u64, u8); 8] = [
                (0, 512, 1),
                (4000, 300, 2),
                (8192, 8192, 3),
                (1000, 20000, 4),
                (4096, 4096, 0),
                (1000, 10000, 0),
                (5000, 100, 0),
                (0, 65536, 5),
            ];
            for (i, &(off, len, v)) in ops.iter().enumerate() {
                if v == 0 {
                    s.trim(off, len).unwrap();
                    reference[off as usize..(off + len) as usize].fill(0);
                } else {
                    let data: Vec<u8> = (0..len).map(|k| v.wrapping_add(k as u8)).collect();
                    s.write(off, &data).unwrap();
                    reference[off as usize..(off + len) as usize].copy_from_slice(&data);
                }
                if i < 6 {
                    assert_eq!(s.read(0, size as u32).unwrap(), reference, "after op {i}");
                    assert_eq!(s.read(4001, 100).unwrap(), reference[4001..4101]);
                }
            }
            s.trim(0, size).unwrap();
            assert!(s.read(0, size as u32).unwrap().iter().all(|&b| b == 0));
            assert_eq!(s.resident_bytes(), 0);
        }
    }

    /// The pages a backing file already holds data in: non-zero bytes anywhere in a page
    /// (its first or last byte, across a hole's edge, in a partial last page) count; holes,
    /// zero-filled pages and the extension to the export's size do not.
    #[test]
    fn held_pages_are_the_pages_with_non_zero_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("b");
        let page = 8192u64;
        let f = std::fs::File::create(&path).unwrap();
        let at = |off: u64, data: &[u8]| f.write_all_at(data, off).unwrap();
        at(0, &[1]); // page 0, first byte
        at(3 * page - 1, &[2]); // page 2, last byte
        at(3 * page, &vec![0; page as usize]); // page 3: written zeros
        at(4 * page, &vec![3; page as usize]); // page 4
        at((8 << 20) + 5 * page + 100, &[4]); // far, after a hole
        at((64 << 20) + 3, &[5]); // a partial last page
        drop(f);
        let far = (8 << 20) / page + 5;
        let last = (64 << 20) / page;
        let (mut s, held) = Store::file(&path, 1 << 30, page).unwrap();
        assert_eq!(held, vec![0..1, 2..3, 4..5, far..far + 1, last..last + 1]);
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 1 << 30);
        // A trimmed page reads as zeros, so the next server sees it as unwritten.
        s.trim(4 * page, page).unwrap();
        drop(s);
        let (_, held) = Store::file(&path, 1 << 30, page).unwrap();
        assert_eq!(held, vec![0..1, 2..3, far..far + 1, last..last + 1]);
        // A new file holds nothing.
        let (_, held) = Store::file(&dir.path().join("new"), 1 << 30, page).unwrap();
        assert!(held.is_empty());
    }

    /// A file longer than the export is refused, not truncated.
    #[test]
    fn a_backing_file_longer_than_the_export_is_refused_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("b");
        std::fs::write(&path, vec![7u8; 3 * 4096]).unwrap();
        let e = Store::file(&path, 2 * 4096, 4096).err().expect("refused");
        assert!(e.to_string().contains("longer than the export"), "{e}");
        assert_eq!(std::fs::read(&path).unwrap(), vec![7u8; 3 * 4096]);
        let e = Store::file(dir.path(), 4096, 4096).err().expect("a directory is refused");
        assert!(
            e.to_string().contains("not a regular file") || e.kind() == std::io::ErrorKind::IsADirectory,
            "{e}"
        );
    }
}
