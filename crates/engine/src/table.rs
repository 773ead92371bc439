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

/// One bit per logical page, in one zeroed allocation (`calloc`: a large one is an
/// anonymous mapping the system backs only where a bit is set, so memory follows the
/// trace's footprint in 4 KiB steps, and returns to the system when the set is dropped,
/// whichever thread allocated it).
pub struct LpnBits {
    words: Vec<u64>,
}

impl LpnBits {
    /// A bit set over `len` logical pages, all clear.
    pub fn new(len: u64) -> Self {
        let n = usize::try_from(len.div_ceil(64)).expect("bit set size overflows usize");
        LpnBits { words: vec![0; n] }
    }

    /// The bit of `lpn`.
    #[inline]
    pub fn get(&self, lpn: u64) -> bool {
        self.words[(lpn >> 6) as usize] >> (lpn & 63) & 1 == 1
    }

    /// Start loading the cache line of `lpn`'s bit (a hint, no wait; out of range:
    /// nothing).
    #[inline]
    pub fn prefetch(&self, lpn: u64) {
        if let Some(w) = self.words.get((lpn >> 6) as usize) {
            lamina_hint::prefetch(w);
        }
    }

    /// Set (or clear) the bit of `lpn`.
    #[inline]
    pub fn set(&mut self, lpn: u64, on: bool) {
        let w = &mut self.words[(lpn >> 6) as usize];
        if on {
            *w |= 1 << (lpn & 63);
        } else {
            *w &= !(1 << (lpn & 63));
        }
    }

    /// Set the bits of `first..=last`, which must lie in one 64-bit word
    /// (`first / 64 == last / 64`, `first <= last`); returns those that were clear, as a
    /// mask of that word (bit `p % 64` for page `p`). One load and one store for up to 64
    /// pages.
    #[inline]
    pub fn insert_in_word(&mut self, first: u64, last: u64) -> u64 {
        debug_assert!(first <= last && first >> 6 == last >> 6, "{first}..={last} spans words");
        let mask = (u64::MAX >> (63 - (last - first))) << (first & 63);
        let w = &mut self.words[(first >> 6) as usize];
        let old = *w;
        *w = old | mask;
        mask & !old
    }

    /// Set the bit of `lpn`; true if it was clear (`get` and `set` in one access).
    #[inline]
    pub fn insert(&mut self, lpn: u64) -> bool {
        let w = &mut self.words[(lpn >> 6) as usize];
        let old = *w;
        *w = old | 1 << (lpn & 63);
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
