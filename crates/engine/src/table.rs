//! [`LpnTable`]: a dense per-logical-page array allocated lazily in chunks, so memory
//! follows the trace's footprint rather than the device's logical capacity, with
//! O(1) lookups and no hashing.

const CHUNK_BITS: u32 = 12;
const CHUNK: usize = 1 << CHUNK_BITS;

/// A lazily chunked array indexed by logical page number.
pub struct LpnTable<T: Copy> {
    chunks: Vec<Option<Box<[T; CHUNK]>>>,
    default: T,
}

impl<T: Copy> LpnTable<T> {
    /// A table for `len` logical pages whose untouched entries read as `default`.
    pub fn new(len: u64, default: T) -> Self {
        let n = len.div_ceil(CHUNK as u64) as usize;
        let mut chunks = Vec::with_capacity(n);
        chunks.resize_with(n, || None);
        LpnTable { chunks, default }
    }

    /// The entry of `lpn` (the default if never set). Panics if out of range.
    #[inline]
    pub fn get(&self, lpn: u64) -> T {
        match &self.chunks[(lpn >> CHUNK_BITS) as usize] {
            Some(c) => c[lpn as usize & (CHUNK - 1)],
            None => self.default,
        }
    }

    /// Mutable access to the entry of `lpn`, allocating its chunk on first use.
    #[inline]
    pub fn get_mut(&mut self, lpn: u64) -> &mut T {
        let d = self.default;
        let c = self.chunks[(lpn >> CHUNK_BITS) as usize].get_or_insert_with(|| Box::new([d; CHUNK]));
        &mut c[lpn as usize & (CHUNK - 1)]
    }

    /// Set the entry of `lpn`.
    #[inline]
    pub fn set(&mut self, lpn: u64, v: T) {
        *self.get_mut(lpn) = v;
    }

    /// Bytes allocated for chunks (for memory accounting).
    pub fn allocated_bytes(&self) -> usize {
        self.chunks.iter().filter(|c| c.is_some()).count() * CHUNK * std::mem::size_of::<T>()
    }
}

/// One bit per logical page, in one zeroed anonymous mapping that the system backs only
/// where a bit is set (memory follows the trace's footprint), returned to the system when
/// the set is dropped, whichever thread allocated it.
///
/// The mapping is advised for transparent huge pages and, from 256 KiB, spans whole ones
/// (Linux starts a mapping on a huge-page boundary only when its length is a multiple of
/// the size).
/// Bits are read before they are written (`insert`), and in 4 KiB pages that read maps
/// the kernel's shared zero page, which the first write then copies and flushes from
/// the TLB: the prefill's finder took ~400 such faults in the MQSim comparison run, on
/// the thread that bounds the prefill. With huge pages it is one fault per 2 MiB
/// (docs/performance.md, sixteenth session). Where the system refuses a mapping, a
/// zeroed allocation takes its place.
pub struct LpnBits {
    words: Words,
}

/// The words of an [`LpnBits`], as bytes: a mapping (possibly longer than the set), or
/// an ordinary zeroed allocation.
enum Words {
    /// The mapping and the set's length in bytes.
    Mapped(memmap2::MmapMut, usize),
    Heap(Vec<u8>),
}

/// Bytes of a transparent huge page.
const HUGE_PAGE: usize = 2 << 20;

impl LpnBits {
    /// Bytes of the mapping of a set over `len` logical pages: the set's words, rounded
    /// up to whole huge pages from 256 KiB (smaller sets — tests, small devices — keep
    /// 4 KiB granularity). The most a set can make resident (the memory budget's bound).
    pub fn mapped_bytes(len: u64) -> u64 {
        let bytes = len.div_ceil(64) * 8;
        if bytes >= (HUGE_PAGE / 8) as u64 { bytes.next_multiple_of(HUGE_PAGE as u64) } else { bytes }
    }

    /// A bit set over `len` logical pages, all clear.
    pub fn new(len: u64) -> Self {
        let n = usize::try_from(len.div_ceil(64)).expect("bit set size overflows usize");
        let bytes = n.checked_mul(8).expect("bit set size overflows usize");
        let mapped = usize::try_from(LpnBits::mapped_bytes(len)).expect("bit set size overflows usize");
        let words = match memmap2::MmapMut::map_anon(mapped.max(1)) {
            Ok(m) => {
                // Advice only: without transparent huge pages the set works the same.
                #[cfg(target_os = "linux")]
                let _ = m.advise(memmap2::Advice::HugePage);
                Words::Mapped(m, bytes)
            }
            Err(_) => Words::Heap(vec![0; bytes]),
        };
        LpnBits { words }
    }

    /// The words (an index past the set panics, as it always did).
    #[inline(always)]
    fn words(&self) -> &[[u8; 8]] {
        let b: &[u8] = match &self.words {
            Words::Mapped(m, len) => &m[..*len],
            Words::Heap(v) => v,
        };
        b.as_chunks::<8>().0
    }

    #[inline(always)]
    fn words_mut(&mut self) -> &mut [[u8; 8]] {
        let b: &mut [u8] = match &mut self.words {
            Words::Mapped(m, len) => &mut m[..*len],
            Words::Heap(v) => v,
        };
        b.as_chunks_mut::<8>().0
    }

    /// Word `i`.
    #[inline(always)]
    fn word(&self, i: usize) -> u64 {
        u64::from_ne_bytes(self.words()[i])
    }

    /// The bit of `lpn`.
    #[inline]
    pub fn get(&self, lpn: u64) -> bool {
        self.word((lpn >> 6) as usize) >> (lpn & 63) & 1 == 1
    }

    /// Start loading the cache line of `lpn`'s bit (a hint, no wait; out of range:
    /// nothing).
    #[inline]
    pub fn prefetch(&self, lpn: u64) {
        if let Some(w) = self.words().get((lpn >> 6) as usize) {
            lamina_hint::prefetch(w);
        }
    }

    /// Set (or clear) the bit of `lpn`.
    #[inline]
    pub fn set(&mut self, lpn: u64, on: bool) {
        let w = &mut self.words_mut()[(lpn >> 6) as usize];
        let old = u64::from_ne_bytes(*w);
        let new = if on { old | 1 << (lpn & 63) } else { old & !(1 << (lpn & 63)) };
        *w = new.to_ne_bytes();
    }

    /// Set the bits of `first..=last`, which must lie in one 64-bit word
    /// (`first / 64 == last / 64`, `first <= last`); returns those that were clear, as a
    /// mask of that word (bit `p % 64` for page `p`). One load and one store for up to 64
    /// pages.
    #[inline]
    pub fn insert_in_word(&mut self, first: u64, last: u64) -> u64 {
        debug_assert!(first <= last && first >> 6 == last >> 6, "{first}..={last} spans words");
        let mask = (u64::MAX >> (63 - (last - first))) << (first & 63);
        let w = &mut self.words_mut()[(first >> 6) as usize];
        let old = u64::from_ne_bytes(*w);
        *w = (old | mask).to_ne_bytes();
        mask & !old
    }

    /// Set the bit of `lpn`; true if it was clear (`get` and `set` in one access).
    #[inline]
    pub fn insert(&mut self, lpn: u64) -> bool {
        let w = &mut self.words_mut()[(lpn >> 6) as usize];
        let old = u64::from_ne_bytes(*w);
        *w = (old | 1 << (lpn & 63)).to_ne_bytes();
        old >> (lpn & 63) & 1 == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lazily_allocates() {
        let mut t = LpnTable::new(1 << 30, u32::MAX);
        assert_eq!(t.get(123_456_789), u32::MAX);
        assert_eq!(t.allocated_bytes(), 0);
        t.set(123_456_789, 7);
        assert_eq!(t.get(123_456_789), 7);
        assert_eq!(t.get(123_456_788), u32::MAX);
        assert_eq!(t.allocated_bytes(), CHUNK * 4);
    }

    #[test]
    fn bits_set_clear_and_stay_independent() {
        let mut b = LpnBits::new(1 << 33);
        assert!(!b.get(5));
        b.set(5, true);
        b.set(6, true);
        b.set((1 << 33) - 1, true);
        assert!(b.get(5) && b.get(6) && !b.get(4) && b.get((1 << 33) - 1));
        b.set(5, false);
        assert!(!b.get(5) && b.get(6));
        assert!(b.insert(5) && b.get(5) && !b.insert(5) && !b.insert(6) && b.get(6));
    }
}
