//! The cached mapping table (CMT) of the page FTL's `ftl.mapping = "cached"` mode: a
//! DFTL-style demand-paged map, as MQSim models it by default.
//!
//! The whole forward map lives on flash in **translation pages** of
//! [`Cmt::entries_per_tpage`] entries each (translation page `t` holds the entries of
//! LPNs `t·E .. (t+1)·E`); a global translation directory (GTD) in DRAM says where each
//! translation page is (the page FTL keeps it as the forward-map entries of internal
//! logical pages `logical_pages + t`, so GC relocates translation pages like data and the
//! GTD follows). The CMT caches up to `ftl.cmt_entries` entries with LRU replacement and a
//! dirty bit each.
//!
//! This module owns the cache and the *content* of the translation pages as last written
//! (`image`, what a translation read would return); the page FTL owns where they are and
//! issues their flash operations. Entry size: `ftl.mapping_entry` (4 bytes by default, a
//! 32-bit PPA, the width of the FTL's tables, so `E = page_size / 4`; or derived from the
//! geometry as MQSim does, [`crate::MappingEntry`]).
//!
//! Determinism: the index is a `BTreeMap`, the LRU order an intrusive doubly linked list
//! over a slab (`Vec`), so no hash order reaches any result.
//!
//! Invariant (checked by the conformance harness through [`crate::Ftl::lookup`]): for
//! every LPN, the CMT's entry if it has one, else the image's, equals the true mapping.

use std::collections::{BTreeMap, VecDeque};

use crate::lpn_map::LpnMap;

/// Bytes per mapping entry on flash and in the CMT with `ftl.mapping_entry = "ppa32"`
/// (the default; a 32-bit PPA).
pub const MAPPING_ENTRY_BYTES: u32 = 4;

/// "No slot" in the LRU links.
const NIL: u32 = u32::MAX;

/// One cached entry: a slab slot linked into the LRU list.
#[derive(Clone, Copy, Debug)]
struct Slot {
    lpn: u64,
    ppa: u32,
    dirty: bool,
    /// Towards the most recently used end.
    prev: u32,
    /// Towards the least recently used end.
    next: u32,
}

/// Counters of the CMT (copied into [`crate::FtlStats`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct CmtCounters {
    pub(crate) read_hits: u64,
    pub(crate) read_misses: u64,
    pub(crate) write_hits: u64,
    pub(crate) write_misses: u64,
    pub(crate) dirty_evictions: u64,
}

/// The cached mapping table. See the [module docs](self).
#[derive(Clone, Debug)]
pub(crate) struct Cmt {
    capacity: usize,
    entries_per_tpage: u64,
    slots: Vec<Slot>,
    free: Vec<u32>,
    index: BTreeMap<u64, u32>,
    /// Most recently used slot.
    head: u32,
    /// Least recently used slot (the next victim).
    tail: u32,
    /// Content of the translation pages as last written back: `ppa + 1`, 0 unmapped.
    image: LpnMap,
    /// Translation pages whose write-back is queued, per plane, in eviction order.
    queued: Vec<VecDeque<u64>>,
    /// Translation page `t` has a queued write-back.
    is_queued: Vec<bool>,
    pub(crate) counters: CmtCounters,
}

impl Cmt {
    /// A CMT of `capacity` entries over `logical_pages` LPNs, with `entries_per_tpage`
    /// entries per translation page, on a device of `planes` planes.
    pub(crate) fn new(capacity: u64, logical_pages: u64, entries_per_tpage: u64, planes: u32) -> Cmt {
        assert!(entries_per_tpage > 0, "translation pages hold at least one entry");
        let tpages = logical_pages.div_ceil(entries_per_tpage);
        Cmt {
            capacity: usize::try_from(capacity).expect("CMT capacity fits usize"),
            entries_per_tpage,
            slots: Vec::new(),
            free: Vec::new(),
            index: BTreeMap::new(),
            head: NIL,
            tail: NIL,
            image: LpnMap::zeroed(logical_pages),
            queued: vec![VecDeque::new(); planes as usize],
            is_queued: vec![false; tpages as usize],
            counters: CmtCounters::default(),
        }
    }

    /// Mapping entries per translation page.
    #[cfg(test)]
    pub(crate) fn entries_per_tpage(&self) -> u64 {
        self.entries_per_tpage
    }

    /// Translation pages of the map.
    pub(crate) fn tpages(&self) -> u64 {
        self.is_queued.len() as u64
    }

    /// The translation page holding `lpn`'s entry.
    #[inline]
    pub(crate) fn tpage_of(&self, lpn: u64) -> u64 {
        lpn / self.entries_per_tpage
    }

    /// `lpn`'s entry is cached.
    #[inline]
    pub(crate) fn contains(&self, lpn: u64) -> bool {
        self.index.contains_key(&lpn)
    }

    /// The mapping of `lpn` as the FTL knows it: the cached entry, else the translation
    /// page's content.
    pub(crate) fn get(&self, lpn: u64) -> u32 {
        match self.index.get(&lpn) {
            Some(&s) => self.slots[s as usize].ppa,
            None => self.image.get(lpn).wrapping_sub(1),
        }
    }

    /// Write-backs queued on `plane`.
    #[inline]
    pub(crate) fn queued_on(&self, plane: usize) -> u64 {
        self.queued[plane].len() as u64
    }

    /// Take the next queued write-back of `plane`.
    pub(crate) fn pop_queued(&mut self, plane: usize) -> Option<u64> {
        let t = self.queued[plane].pop_front()?;
        self.is_queued[t as usize] = false;
        Some(t)
    }

    /// A host read of `lpn`: a hit refreshes its recency; a miss loads the entry from its
    /// translation page (the caller times that read) and may evict. Returns the
    /// translation page a dirty eviction must write back, if any (queue it with
    /// [`Self::queue`]).
    pub(crate) fn read(&mut self, lpn: u64) -> Option<u64> {
        if let Some(&s) = self.index.get(&lpn) {
            self.counters.read_hits += 1;
            self.touch(s);
            return None;
        }
        self.counters.read_misses += 1;
        let ppa = self.image.get(lpn).wrapping_sub(1);
        self.insert(lpn, ppa, false)
    }

    /// A host write (or trim, `ppa` unmapped) of `lpn`: the entry becomes `ppa`, dirty. A
    /// miss does not load the translation page (the new entry replaces the old; the page
    /// is merged at write-back). Returns the translation page to write back, if any.
    pub(crate) fn write(&mut self, lpn: u64, ppa: u32) -> Option<u64> {
        if let Some(&s) = self.index.get(&lpn) {
            self.counters.write_hits += 1;
            self.touch(s);
            let slot = &mut self.slots[s as usize];
            slot.ppa = ppa;
            slot.dirty = true;
            return None;
        }
        self.counters.write_misses += 1;
        self.insert(lpn, ppa, true)
    }

    /// A GC move changed `lpn`'s mapping to `ppa`: the cached entry is updated (dirty,
    /// recency unchanged), or else the translation page's content (untimed, see
    /// docs/model.md). Not a host access: no hit or miss is counted.
    pub(crate) fn relocate(&mut self, lpn: u64, ppa: u32) {
        match self.index.get(&lpn) {
            Some(&s) => {
                let slot = &mut self.slots[s as usize];
                slot.ppa = ppa;
                slot.dirty = true;
            }
            None => self.image.set(lpn, ppa.wrapping_add(1)),
        }
    }

    /// Queue the write-back of translation page `t` on `plane` unless it is queued.
    pub(crate) fn queue(&mut self, t: u64, plane: usize) {
        if !self.is_queued[t as usize] {
            self.is_queued[t as usize] = true;
            self.queued[plane].push_back(t);
        }
    }

    /// Insert `lpn` as most recently used, evicting the least recently used entry first
    /// if the CMT is full (as MQSim: the new entry is not part of the eviction's
    /// write-back). With capacity 0 the new entry is evicted at once (every access
    /// misses; a write goes straight to its translation page).
    fn insert(&mut self, lpn: u64, ppa: u32, dirty: bool) -> Option<u64> {
        let evicted =
            if self.index.len() >= self.capacity && self.capacity > 0 { self.evict() } else { None };
        let slot = Slot { lpn, ppa, dirty, prev: NIL, next: self.head };
        let s = match self.free.pop() {
            Some(s) => {
                self.slots[s as usize] = slot;
                s
            }
            None => {
                self.slots.push(slot);
                (self.slots.len() - 1) as u32
            }
        };
        self.link_front(s);
        self.index.insert(lpn, s);
        if self.capacity == 0 { self.evict() } else { evicted }
    }

    /// Evict the least recently used entry. A dirty one is merged into its translation
    /// page's content now, together with every other dirty cached entry of that page
    /// (which become clean), as MQSim does; the page's flash write is returned.
    fn evict(&mut self) -> Option<u64> {
        let s = self.tail;
        assert!(s != NIL, "evicting from an empty CMT");
        let Slot { lpn, dirty, .. } = self.slots[s as usize];
        self.unlink(s);
        self.index.remove(&lpn);
        self.free.push(s);
        if !dirty {
            return None;
        }
        self.counters.dirty_evictions += 1;
        let ppa = self.slots[s as usize].ppa;
        self.image.set(lpn, ppa.wrapping_add(1));
        let t = self.tpage_of(lpn);
        let range = t * self.entries_per_tpage..(t + 1) * self.entries_per_tpage;
        for (&l, &o) in self.index.range(range) {
            let slot = &mut self.slots[o as usize];
            if slot.dirty {
                slot.dirty = false;
                self.image.set(l, slot.ppa.wrapping_add(1));
            }
        }
        Some(t)
    }

    fn touch(&mut self, s: u32) {
        if self.head != s {
            self.unlink(s);
            self.link_front(s);
        }
    }

    fn link_front(&mut self, s: u32) {
        let old = self.head;
        let slot = &mut self.slots[s as usize];
        slot.prev = NIL;
        slot.next = old;
        if old != NIL {
            self.slots[old as usize].prev = s;
        } else {
            self.tail = s;
        }
        self.head = s;
    }

    fn unlink(&mut self, s: u32) {
        let Slot { prev, next, .. } = self.slots[s as usize];
        if prev != NIL {
            self.slots[prev as usize].next = next;
        } else {
            self.head = next;
        }
        if next != NIL {
            self.slots[next as usize].prev = prev;
        } else {
            self.tail = prev;
        }
    }

    /// Entries cached now.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.index.len()
    }

    /// Approximate heap bytes (for memory reports).
    pub(crate) fn memory_bytes(&self) -> usize {
        self.image.touched_bytes()
            + self.slots.capacity() * std::mem::size_of::<Slot>()
            + self.index.len() * 32
            + self.is_queued.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lru_evicts_the_least_recently_used_and_writes_back_dirty_pages_whole() {
        // 2 entries, 4 entries per translation page (16-byte pages).
        let mut c = Cmt::new(2, 16, 4, 1);
        assert_eq!(c.entries_per_tpage(), 4);
        assert_eq!(c.tpages(), 4);
        assert_eq!(c.write(0, 10), None); // miss, dirty
        assert_eq!(c.read(1), None); // miss, clean (unmapped)
        assert_eq!(c.read(0), None); // hit: 1 is now LRU
        assert_eq!(c.write(1, 11), None); // hit, dirty: 0 is LRU
        assert_eq!(c.read(5), Some(0)); // evicts 0 (dirty): page 0 written with 0 and 1
        assert_eq!(c.get(0), 10);
        assert!(!c.slots[c.index[&1] as usize].dirty, "1 was written back with 0");
        assert_eq!(c.read(6), None); // evicts 1, clean now
        assert_eq!((c.get(1), c.get(2)), (11, u32::MAX));
        assert_eq!(c.len(), 2);
        assert_eq!(
            c.counters,
            CmtCounters { read_hits: 1, read_misses: 3, write_hits: 1, write_misses: 1, dirty_evictions: 1 }
        );
    }

    #[test]
    fn capacity_zero_misses_always_and_writes_through() {
        let mut c = Cmt::new(0, 8, 4, 2);
        assert_eq!(c.write(3, 7), Some(0));
        c.queue(0, 1);
        c.queue(0, 0); // already queued
        assert_eq!((c.queued_on(0), c.queued_on(1)), (0, 1));
        assert_eq!(c.read(3), None);
        assert_eq!(c.get(3), 7);
        assert_eq!(c.len(), 0);
        assert_eq!(c.pop_queued(1), Some(0));
        assert_eq!(c.pop_queued(1), None);
    }

    /// One operation of the reference comparison.
    #[derive(Clone, Copy, Debug)]
    enum CmtOp {
        Read(u64),
        Write(u64, u32),
        Relocate(u64, u32),
    }

    fn cmt_op(lpns: u64) -> impl proptest::strategy::Strategy<Value = CmtOp> {
        use proptest::prelude::*;
        prop_oneof![
            (0..lpns).prop_map(CmtOp::Read),
            (0..lpns, 0..1000u32).prop_map(|(l, p)| CmtOp::Write(l, p)),
            (0..lpns, 0..1000u32).prop_map(|(l, p)| CmtOp::Relocate(l, p)),
        ]
    }

    proptest::proptest! {
        /// The CMT against a reference: the true map (a `BTreeMap`), an LRU list (a `Vec`,
        /// most recent first) of `(lpn, dirty)`, and the translation pages' content. After
        /// every operation: every LPN reads its true mapping through `get`, the cache
        /// holds exactly the reference's entries, and an eviction returns the page
        /// exactly when the reference evicted a dirty entry.
        #[test]
        fn cmt_always_agrees_with_the_reference(
            capacity in 0usize..6,
            ops in proptest::collection::vec(cmt_op(24), 1..300),
        ) {
            use std::collections::BTreeMap;
            let (lpns, per_page) = (24u64, 4u64);
            let mut c = Cmt::new(capacity as u64, lpns, per_page, 1);
            let mut truth: BTreeMap<u64, u32> = BTreeMap::new();
            let mut lru: Vec<(u64, bool)> = Vec::new();
            let mut flash: BTreeMap<u64, u32> = BTreeMap::new();
            for op in ops {
                let (lpn, written) = match op {
                    CmtOp::Read(l) => (l, None),
                    CmtOp::Write(l, p) | CmtOp::Relocate(l, p) => (l, Some(p)),
                };
                if let Some(p) = written {
                    truth.insert(lpn, p);
                }
                let got = match op {
                    CmtOp::Relocate(l, p) => {
                        match lru.iter_mut().find(|e| e.0 == l) {
                            Some(e) => e.1 = true,
                            None => { flash.insert(l, p); }
                        }
                        c.relocate(l, p);
                        None
                    }
                    CmtOp::Read(l) | CmtOp::Write(l, _) => {
                        let dirty = written.is_some();
                        let want = match lru.iter().position(|e| e.0 == l) {
                            Some(i) => {
                                let (_, d) = lru.remove(i);
                                lru.insert(0, (l, d || dirty));
                                None
                            }
                            None => {
                                // A dirty eviction writes its page: every dirty entry of it
                                // still cached (the new entry is inserted after).
                                let write_back = |lru: &mut Vec<(u64, bool)>, flash: &mut BTreeMap<u64, u32>| {
                                    let (e, d) = lru.pop()?;
                                    if !d {
                                        return None;
                                    }
                                    let t = e / per_page;
                                    flash.insert(e, truth[&e]);
                                    for x in lru.iter_mut().filter(|x| x.0 / per_page == t && x.1) {
                                        x.1 = false;
                                        flash.insert(x.0, truth[&x.0]);
                                    }
                                    Some(t)
                                };
                                let mut evicted = None;
                                if capacity > 0 && lru.len() == capacity {
                                    evicted = write_back(&mut lru, &mut flash);
                                }
                                lru.insert(0, (l, dirty));
                                if capacity == 0 {
                                    evicted = write_back(&mut lru, &mut flash);
                                }
                                evicted
                            }
                        };
                        let got = match op {
                            CmtOp::Write(l, p) => c.write(l, p),
                            _ => c.read(l),
                        };
                        proptest::prop_assert_eq!(got, want, "{:?}", op);
                        got
                    }
                };
                let _ = got;
                for l in 0..lpns {
                    let want = truth.get(&l).copied().unwrap_or(u32::MAX);
                    proptest::prop_assert_eq!(c.get(l), want, "LPN {} after {:?}", l, op);
                    let cached = lru.iter().any(|e| e.0 == l);
                    proptest::prop_assert_eq!(c.contains(l), cached, "LPN {} after {:?}", l, op);
                    if !cached {
                        let on_flash = flash.get(&l).copied().unwrap_or(u32::MAX);
                        proptest::prop_assert_eq!(on_flash, want, "translation page of {}", l);
                    }
                }
            }
        }
    }

    #[test]
    fn relocation_updates_the_cache_or_the_translation_page() {
        let mut c = Cmt::new(1, 8, 4, 1);
        c.read(2);
        c.relocate(2, 4);
        c.relocate(6, 9);
        assert_eq!((c.get(2), c.get(6)), (4, 9));
        assert_eq!(c.read(3), Some(0), "the relocated cached entry is dirty");
        assert_eq!(c.get(2), 4);
    }
}
