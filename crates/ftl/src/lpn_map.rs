//! Storage of the page FTL's forward map: one flat table of 32-bit entries in an
//! anonymous memory mapping.
//!
//! Why a mapping and not a `Vec`: the operating system hands out its pages zeroed and
//! only when first touched, so an empty map costs no memory and no `memset` (zero means
//! "unmapped" here, hence the `ppa + 1` encoding), and on Linux the mapping is advised
//! for transparent huge pages. The forward map is the one table every host write, GC
//! move and read touches at a random place; with 4 KiB pages each such access also
//! misses the TLB, and huge pages remove most of those walks (preconditioning a
//! 256 GiB device: docs/performance.md).
//!
//! Memory stays what it was with lazily allocated chunks: only the parts of the table a
//! run touches become resident (in 2 MiB steps where huge pages are granted).

use std::fmt;

/// Bytes per entry.
const ENTRY: usize = 4;

/// A zero-initialised table of `len` 32-bit entries (see the module docs).
pub(crate) struct LpnMap {
    mem: Backing,
    len: u64,
}

/// The mapping, or an ordinary zeroed allocation where the system refuses one.
enum Backing {
    Mapped(memmap2::MmapMut),
    Heap(Vec<u8>),
}

impl LpnMap {
    /// A table of `len` zero entries.
    pub(crate) fn zeroed(len: u64) -> LpnMap {
        let bytes = (len as usize).checked_mul(ENTRY).expect("forward map size overflows usize");
        let mem = match memmap2::MmapMut::map_anon(bytes.max(1)) {
            Ok(m) => {
                // Advice only: a kernel without transparent huge pages ignores or refuses
                // it, and the table works the same.
                #[cfg(target_os = "linux")]
                let _ = m.advise(memmap2::Advice::HugePage);
                Backing::Mapped(m)
            }
            Err(_) => Backing::Heap(vec![0; bytes]),
        };
        LpnMap { mem, len }
    }

    #[inline]
    fn bytes(&self) -> &[u8] {
        match &self.mem {
            Backing::Mapped(m) => m,
            Backing::Heap(v) => v,
        }
    }

    #[inline]
    fn bytes_mut(&mut self) -> &mut [u8] {
        match &mut self.mem {
            Backing::Mapped(m) => m,
            Backing::Heap(v) => v,
        }
    }

    /// Entry `i` (panics when `i` is out of range).
    #[inline]
    pub(crate) fn get(&self, i: u64) -> u32 {
        let at = i as usize * ENTRY;
        let b: [u8; ENTRY] = self.bytes()[at..at + ENTRY].try_into().expect("four bytes");
        u32::from_ne_bytes(b)
    }

    /// Set entry `i` to `v` (panics when `i` is out of range).
    #[inline]
    pub(crate) fn set(&mut self, i: u64, v: u32) {
        let at = i as usize * ENTRY;
        self.bytes_mut()[at..at + ENTRY].copy_from_slice(&v.to_ne_bytes());
    }

    /// Bytes of the table in 4 KiB pages that hold a nonzero entry — what a run has made
    /// resident, near enough (it scans the whole table: for memory reports, not hot paths).
    pub(crate) fn touched_bytes(&self) -> usize {
        const PAGE: usize = 4096;
        self.bytes().chunks(PAGE).filter(|p| p.iter().any(|&b| b != 0)).map(<[u8]>::len).sum()
    }
}

impl Clone for LpnMap {
    fn clone(&self) -> LpnMap {
        let mut c = LpnMap::zeroed(self.len);
        let n = self.len as usize * ENTRY;
        c.bytes_mut()[..n].copy_from_slice(&self.bytes()[..n]);
        c
    }
}

impl fmt::Debug for LpnMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.mem {
            Backing::Mapped(_) => "mapped",
            Backing::Heap(_) => "heap",
        };
        write!(f, "LpnMap({} entries, {kind})", self.len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starts_zeroed_keeps_writes_and_clones_deeply() {
        let mut m = LpnMap::zeroed(3 << 20);
        assert_eq!((m.get(0), m.get((3 << 20) - 1)), (0, 0));
        assert_eq!(m.touched_bytes(), 0);
        m.set(5, 7);
        m.set((3 << 20) - 1, u32::MAX);
        let c = m.clone();
        m.set(5, 9);
        assert_eq!((c.get(5), c.get((3 << 20) - 1), c.get(6)), (7, u32::MAX, 0));
        assert_eq!(m.get(5), 9);
        assert_eq!(m.touched_bytes(), 2 * 4096);
    }

    #[test]
    #[should_panic]
    fn out_of_range_panics() {
        LpnMap::zeroed(4).get(4);
    }

    #[test]
    fn an_empty_map_is_fine() {
        let m = LpnMap::zeroed(0);
        assert_eq!((m.len, m.touched_bytes()), (0, 0));
    }
}
