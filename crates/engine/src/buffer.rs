//! DRAM write buffer: write-back, LRU by page, read hits served from DRAM.
//!
//! Slots hold one logical page each. A slot is *free*, *clean* (data equals flash),
//! *dirty* (newer than flash) or *flushing* (a program of its data is in flight; it may
//! be re-dirtied meanwhile). A write that finds no free or clean slot evicts the least
//! recently used dirty page (a flash write) and waits until a flush completes: the write's
//! response time is the time to get buffer space (issue #3). An optional watermark flushes
//! ahead so that writes rarely wait.

use crate::table::LpnTable;

const NIL: u32 = u32::MAX;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum State {
    Free,
    Clean,
    Dirty,
}

#[derive(Clone, Copy)]
struct Slot {
    lpn: u64,
    state: State,
    /// A flash program of this slot's data is in flight.
    flushing: bool,
    /// Valid units (1/64 of a page each) held in DRAM.
    mask: u64,
    prev: u32,
    next: u32,
}

/// Outcome of trying to put a page into the buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Put {
    /// Stored; the host write of this page is complete.
    Stored,
    /// No space: the caller must wait for a flush to complete and try again.
    Full,
}

/// A page the buffer wants written to flash.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Flush {
    /// Logical page.
    pub lpn: u64,
    /// Units of the page present in DRAM (all ones = whole page).
    pub mask: u64,
}

/// The write buffer.
pub struct WriteBuffer {
    slots: Vec<Slot>,
    index: LpnTable<u32>,
    free: Vec<u32>,
    /// Most recently used end of the LRU list.
    head: u32,
    /// Least recently used end.
    tail: u32,
    dirty: u32,
    watermark: u32,
    /// Read lookups that hit.
    pub read_hits: u64,
    /// Read lookups.
    pub read_lookups: u64,
    /// Write lookups that hit.
    pub write_hits: u64,
    /// Write lookups.
    pub write_lookups: u64,
}

/// Full-page mask.
pub const FULL: u64 = u64::MAX;

impl WriteBuffer {
    /// A buffer of `capacity_pages` slots over `logical_pages` LPNs. `watermark` is the
    /// number of slots to keep free or clean by flushing ahead.
    pub fn new(capacity_pages: u32, logical_pages: u64, watermark: u32) -> Self {
        let slots = vec![
            Slot { lpn: 0, state: State::Free, flushing: false, mask: 0, prev: NIL, next: NIL };
            capacity_pages as usize
        ];
        WriteBuffer {
            slots,
            index: LpnTable::new(logical_pages, NIL),
            free: (0..capacity_pages).rev().collect(),
            head: NIL,
            tail: NIL,
            dirty: 0,
            watermark: watermark.min(capacity_pages),
            read_hits: 0,
            read_lookups: 0,
            write_hits: 0,
            write_lookups: 0,
        }
    }

    /// Capacity in pages.
    pub fn capacity(&self) -> u32 {
        self.slots.len() as u32
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

    fn push_front(&mut self, s: u32) {
        self.slots[s as usize].prev = NIL;
        self.slots[s as usize].next = self.head;
        if self.head != NIL {
            self.slots[self.head as usize].prev = s;
        } else {
            self.tail = s;
        }
        self.head = s;
    }

    /// True if the units `mask` of `lpn` are all in DRAM (a read hit); refreshes LRU.
    pub fn read(&mut self, lpn: u64, mask: u64) -> bool {
        self.read_lookups += 1;
        let s = self.index.get(lpn);
        if s != NIL && self.slots[s as usize].mask & mask == mask {
            self.read_hits += 1;
            self.unlink(s);
            self.push_front(s);
            true
        } else {
            false
        }
    }

    /// Store units `mask` of `lpn`. On `Full` nothing changed; the caller retries after
    /// a flush completion. `flushes` receives pages to write to flash (eviction and
    /// flush-ahead).
    pub fn write(&mut self, lpn: u64, mask: u64, flushes: &mut Vec<Flush>) -> Put {
        self.write_lookups += 1;
        let s = self.index.get(lpn);
        if s != NIL {
            self.write_hits += 1;
            let slot = &mut self.slots[s as usize];
            slot.mask |= mask;
            if slot.state != State::Dirty {
                slot.state = State::Dirty;
                self.dirty += 1;
            }
            self.unlink(s);
            self.push_front(s);
            self.flush_ahead(flushes);
            return Put::Stored;
        }
        let Some(s) = self.take_slot(flushes) else {
            self.write_lookups -= 1; // retried later; count once
            return Put::Full;
        };
        self.slots[s as usize] =
            Slot { lpn, state: State::Dirty, flushing: false, mask, prev: NIL, next: NIL };
        self.dirty += 1;
        self.index.set(lpn, s);
        self.push_front(s);
        self.flush_ahead(flushes);
        Put::Stored
    }

    /// A free slot, or a clean one reclaimed from the LRU end. If none, evicts the LRU
    /// dirty page that is not already flushing.
    fn take_slot(&mut self, flushes: &mut Vec<Flush>) -> Option<u32> {
        if let Some(s) = self.free.pop() {
            return Some(s);
        }
        let mut s = self.tail;
        let mut victim = NIL;
        while s != NIL {
            let slot = self.slots[s as usize];
            if slot.state == State::Clean && !slot.flushing {
                self.unlink(s);
                self.index.set(slot.lpn, NIL);
                return Some(s);
            }
            if victim == NIL && slot.state == State::Dirty && !slot.flushing {
                victim = s;
            }
            s = slot.prev;
        }
        if victim != NIL {
            self.start_flush(victim, flushes);
        }
        None
    }

    fn start_flush(&mut self, s: u32, flushes: &mut Vec<Flush>) {
        let slot = &mut self.slots[s as usize];
        debug_assert!(slot.state == State::Dirty && !slot.flushing);
        slot.flushing = true;
        slot.state = State::Clean;
        self.dirty -= 1;
        flushes.push(Flush { lpn: slot.lpn, mask: slot.mask });
    }

    /// Keep at least `watermark` slots free or clean by flushing LRU dirty pages.
    fn flush_ahead(&mut self, flushes: &mut Vec<Flush>) {
        if self.watermark == 0 {
            return;
        }
        let cap = self.capacity();
        let mut s = self.tail;
        // Slots being flushed count as clean-to-be: they free up without further action.
        while s != NIL && cap - self.dirty < self.watermark {
            let slot = self.slots[s as usize];
            let prev = slot.prev;
            if slot.state == State::Dirty && !slot.flushing {
                self.start_flush(s, flushes);
            }
            s = prev;
        }
    }

    /// Flush every dirty page that is not flushing (idle flush / end of trace).
    pub fn flush_all(&mut self, flushes: &mut Vec<Flush>) {
        let mut s = self.tail;
        while s != NIL {
            let slot = self.slots[s as usize];
            if slot.state == State::Dirty && !slot.flushing {
                self.start_flush(s, flushes);
            }
            s = slot.prev;
        }
    }

    /// A flash program of `lpn`'s buffered data completed. If the page was not re-dirtied
    /// meanwhile its slot is freed (returns true: a waiting write may retry).
    pub fn flush_done(&mut self, lpn: u64) -> bool {
        let s = self.index.get(lpn);
        assert!(s != NIL, "flush completion for lpn {lpn} not in the buffer");
        let slot = &mut self.slots[s as usize];
        assert!(slot.flushing, "flush completion for lpn {lpn} that is not flushing");
        slot.flushing = false;
        if slot.state == State::Clean {
            // Clean data stays readable until the slot is needed; it is reclaimable.
            true
        } else {
            false
        }
    }

    /// Dirty pages not yet flushing.
    pub fn dirty_pages(&self) -> u32 {
        self.dirty
    }

    /// True if `lpn` is buffered and dirty (newer than flash) or flushing.
    pub fn holds(&self, lpn: u64) -> bool {
        self.index.get(lpn) != NIL
    }

    /// Remove `lpn` (trim). Its slot is freed unless a flush is in flight.
    pub fn discard(&mut self, lpn: u64) {
        let s = self.index.get(lpn);
        if s == NIL {
            return;
        }
        let slot = self.slots[s as usize];
        if slot.flushing {
            // Let the flush finish; the data is stale but harmless, the FTL trim follows.
            if slot.state == State::Dirty {
                self.slots[s as usize].state = State::Clean;
                self.dirty -= 1;
            }
            return;
        }
        if slot.state == State::Dirty {
            self.dirty -= 1;
        }
        self.unlink(s);
        self.index.set(lpn, NIL);
        self.slots[s as usize].state = State::Free;
        self.free.push(s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lru_eviction_and_waiting() {
        let mut b = WriteBuffer::new(2, 100, 0);
        let mut f = Vec::new();
        assert_eq!(b.write(1, FULL, &mut f), Put::Stored);
        assert_eq!(b.write(2, FULL, &mut f), Put::Stored);
        assert!(b.read(1, FULL)); // 1 becomes MRU; 2 is LRU
        assert_eq!(b.write(3, FULL, &mut f), Put::Full);
        assert_eq!(f, [Flush { lpn: 2, mask: FULL }]);
        f.clear();
        // Still full while 2 is flushing; 1 is dirty and gets evicted next.
        assert_eq!(b.write(3, FULL, &mut f), Put::Full);
        assert_eq!(f, [Flush { lpn: 1, mask: FULL }]);
        assert!(b.flush_done(2));
        f.clear();
        assert_eq!(b.write(3, FULL, &mut f), Put::Stored);
        assert!(f.is_empty());
        assert!(!b.holds(2));
        assert!(b.read(3, FULL));
        assert_eq!(b.read_hits, 2);
    }

    #[test]
    fn rewrite_while_flushing_stays_dirty() {
        let mut b = WriteBuffer::new(1, 10, 0);
        let mut f = Vec::new();
        b.write(5, FULL, &mut f);
        b.flush_all(&mut f);
        assert_eq!(f.len(), 1);
        b.write(5, 1, &mut f);
        assert!(!b.flush_done(5));
        assert_eq!(b.dirty_pages(), 1);
    }

    #[test]
    fn watermark_flushes_ahead() {
        let mut b = WriteBuffer::new(4, 10, 2);
        let mut f = Vec::new();
        b.write(1, FULL, &mut f);
        b.write(2, FULL, &mut f);
        assert!(f.is_empty());
        b.write(3, FULL, &mut f);
        assert_eq!(f, [Flush { lpn: 1, mask: FULL }]);
    }
}
