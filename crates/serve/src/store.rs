//! The served data: what clients wrote, so every read returns the last write. The
//! simulated device models timing and the FTL's bookkeeping, not bytes; the bytes live
//! here, either in memory (a sparse map of 4 KiB blocks, bounded by what clients write)
//! or in a backing file (`--backing FILE`, sized to the export, sparse where unwritten).

use std::collections::BTreeMap;
use std::fs::File;
use std::os::unix::fs::FileExt;
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

    /// A store in `path` (created if missing; existing contents are served as they are,
    /// so a backing file keeps a file system across runs). Its length is set to `size`.
    pub fn file(path: &Path, size: u64) -> std::io::Result<Store> {
        let f = std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(false).open(path)?;
        f.set_len(size)?;
        Ok(Store::File(f))
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
        let mut stores = [Store::memory(), Store::file(&dir.path().join("b"), size).unwrap()];
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
}
