//! A minimal slab: stable `u32` handles into a `Vec`, with a free list, so in-flight
//! requests and transactions are stored without per-item allocation.

/// Slab of `T` indexed by `u32`.
pub struct Slab<T> {
    items: Vec<Option<T>>,
    free: Vec<u32>,
    live: usize,
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Slab { items: Vec::new(), free: Vec::new(), live: 0 }
    }
}

impl<T> Slab<T> {
    /// Insert, returning the handle.
    #[inline]
    pub fn insert(&mut self, v: T) -> u32 {
        self.live += 1;
        if let Some(i) = self.free.pop() {
            self.items[i as usize] = Some(v);
            i
        } else {
            self.items.push(Some(v));
            (self.items.len() - 1) as u32
        }
    }

    /// Remove and return the item.
    #[inline]
    pub fn remove(&mut self, i: u32) -> T {
        let v = self.items[i as usize].take().expect("slab: remove of a free handle");
        self.free.push(i);
        self.live -= 1;
        v
    }

    /// Remove the item without moving it out.
    #[inline]
    pub fn free(&mut self, i: u32) {
        let slot = &mut self.items[i as usize];
        assert!(slot.is_some(), "slab: free of a free handle");
        *slot = None;
        self.free.push(i);
        self.live -= 1;
    }

    /// The item.
    #[inline]
    pub fn get(&self, i: u32) -> &T {
        self.items[i as usize].as_ref().expect("slab: get of a free handle")
    }

    /// The item, if `i` is in use (for speed hints that must not fail).
    #[inline]
    pub fn try_get(&self, i: u32) -> Option<&T> {
        self.items.get(i as usize)?.as_ref()
    }

    /// The item, mutably.
    #[inline]
    pub fn get_mut(&mut self, i: u32) -> &mut T {
        self.items[i as usize].as_mut().expect("slab: get of a free handle")
    }

    /// Items in use.
    #[inline]
    pub fn len(&self) -> usize {
        self.live
    }

    /// True if empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// Slots ever allocated (high-water mark).
    pub fn capacity(&self) -> usize {
        self.items.len()
    }
}
