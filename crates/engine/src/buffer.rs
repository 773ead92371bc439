//! DRAM write buffer: write-back, LRU by page, read hits served from DRAM.
//!
//! A slot holds one logical page. *Resident* slots make up the buffer's capacity:
//!
//! - *dirty*: newer than flash, on the dirty LRU list;
//! - *clean*: equal to flash, on the clean LRU list; readable, reclaimable at once;
//! - *flushing ahead*: a flash program of its data is in flight (started by the
//!   watermark or an idle flush); it turns clean when the program completes.
//!
//! A *staged* slot is a page evicted to make room: its program is in flight, it no
//! longer counts against the capacity (it sits in the controller's flash staging area,
//! as an evicted page does in SSDsim and MQSim), it is still readable, and the host
//! write page that evicted it completes only when that program completes. So:
//!
//! - a write that finds a free or clean slot completes at DRAM speed;
//! - a write into a full buffer evicts (the oldest flush already in flight, else the
//!   least recently used dirty page) and pays for that one program, and every waiting
//!   write has its own eviction in flight, so the flushes spread over every die and
//!   plane in parallel: a buffer is never a concurrency limit below what the device
//!   would see without a buffer (issue #8);
//! - the watermark `w` (slots) keeps at least `w` slots free, clean or flushing ahead,
//!   so bursts shorter than `w` pages never wait for flash.
//!
//! A page written again while its program is in flight is *re-dirtied*: it flushes
//! again after the program completes (never two programs of one page at once, so the
//! FTL sees a page's programs in write order). Every operation is O(1); nothing scans.

use lamina_nand_model::SimTime;

use crate::table::LpnTable;

const NIL: u32 = u32::MAX;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum State {
    Free,
    /// Resident, on the dirty list.
    Dirty,
    /// Resident, on the clean list.
    Clean,
    /// Resident, program in flight (flush-ahead or idle flush), on the ahead list.
    Ahead,
    /// Evicted, program in flight; outside the capacity, on no list.
    Staged,
}

impl State {
    /// Counts against the capacity.
    fn resident(self) -> bool {
        matches!(self, State::Dirty | State::Clean | State::Ahead)
    }

    /// A program of the slot's data is in flight.
    fn flushing(self) -> bool {
        matches!(self, State::Ahead | State::Staged)
    }
}

/// The list a slot is on.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum ListId {
    Dirty,
    Clean,
    /// Resident flushing slots, oldest flush first (eviction candidates).
    Ahead,
}

#[derive(Clone, Copy)]
struct Slot {
    lpn: u64,
    state: State,
    /// Flushing only: a host write re-dirtied the page; it becomes dirty when done.
    redirty: bool,
    /// Flushing only: the page was trimmed; the engine unmaps it again when done.
    trimmed: bool,
    /// Valid units (1/64 of a page each) held in DRAM.
    mask: u64,
    /// Staged only: the host request whose write page waits for this program.
    waiter: u32,
    /// When that write page's own DRAM transfer completes.
    ready: SimTime,
    prev: u32,
    next: u32,
}

/// Bytes of one slot (for the memory budget).
pub(crate) const SLOT_BYTES: usize = std::mem::size_of::<Slot>();

/// Outcome of putting a page into the buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Put {
    /// Stored; the host write of this page completes after its DRAM transfer.
    Stored,
    /// Stored by evicting the page of slot `victim` (staged, its program in flight or
    /// just started): the host write of this page completes when that program does.
    /// Bind the waiting request with [`WriteBuffer::set_waiter`].
    Evicted {
        /// The staged slot.
        victim: u32,
    },
}

/// A page the buffer wants written to flash.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Flush {
    /// Logical page.
    pub lpn: u64,
    /// Units of the page present in DRAM (all ones = whole page).
    pub mask: u64,
    /// The slot being flushed (hand it back to [`WriteBuffer::flush_done`]).
    pub slot: u32,
}

/// What a completed flush means for the engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlushDone {
    /// The page was trimmed while its program was in flight: the program just mapped
    /// data the host discarded, so the caller must unmap it again.
    pub trimmed: bool,
    /// The request whose write page waited for this program (an eviction), if any,
    /// and when that page's own DRAM transfer completes: the page is done at the later
    /// of the two.
    pub waiter: Option<(u32, SimTime)>,
}

/// A doubly linked list threaded through the slots (head = most recent).
#[derive(Clone, Copy)]
struct List {
    head: u32,
    tail: u32,
    len: u32,
}

impl List {
    const EMPTY: List = List { head: NIL, tail: NIL, len: 0 };
}

/// Counters of buffer activity.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BufferCounters {
    /// Read lookups that hit.
    pub read_hits: u64,
    /// Read lookups.
    pub read_lookups: u64,
    /// Write lookups that hit (overwrites of a buffered page).
    pub write_hits: u64,
    /// Write lookups.
    pub write_lookups: u64,
    /// Host-write pages that evicted a page and waited for its program.
    pub evictions: u64,
    /// Of those, evictions that started a new flush (the others took over a flush
    /// already in flight).
    pub eviction_flushes: u64,
    /// Flushes started by the watermark.
    pub ahead_flushes: u64,
    /// Flushes started by an idle flush.
    pub idle_flushes: u64,
    /// Flushes of re-dirtied pages pushed out to keep the resident set within the
    /// capacity.
    pub overflow_flushes: u64,
}

/// The write buffer.
pub struct WriteBuffer {
    slots: Vec<Slot>,
    index: LpnTable<u32>,
    /// Unused slot ids (resident or not).
    free: Vec<u32>,
    capacity: u32,
    resident: u32,
    dirty: List,
    clean: List,
    ahead: List,
    /// Slots on the ahead list that were re-dirtied (they will not free).
    ahead_redirty: u32,
    watermark: u32,
    /// Activity counters.
    pub counters: BufferCounters,
}

/// Full-page mask.
pub const FULL: u64 = u64::MAX;

impl WriteBuffer {
    /// A buffer of `capacity_pages` resident slots over `logical_pages` LPNs.
    /// `watermark` is the number of slots to keep free, clean or flushing ahead.
    pub fn new(capacity_pages: u32, logical_pages: u64, watermark: u32) -> Self {
        assert!(capacity_pages > 0 && capacity_pages < NIL / 2, "buffer capacity {capacity_pages} pages");
        WriteBuffer {
            slots: Vec::with_capacity(capacity_pages as usize),
            index: LpnTable::new(logical_pages, NIL),
            free: Vec::new(),
            capacity: capacity_pages,
            resident: 0,
            dirty: List::EMPTY,
            clean: List::EMPTY,
            ahead: List::EMPTY,
            ahead_redirty: 0,
            watermark: watermark.min(capacity_pages),
            counters: BufferCounters::default(),
        }
    }

    /// Capacity in pages.
    pub fn capacity(&self) -> u32 {
        self.capacity
    }

    /// The flush-ahead watermark in slots.
    pub fn watermark(&self) -> u32 {
        self.watermark
    }

    fn list(&mut self, id: ListId) -> &mut List {
        match id {
            ListId::Dirty => &mut self.dirty,
            ListId::Clean => &mut self.clean,
            ListId::Ahead => &mut self.ahead,
        }
    }

    fn unlink(&mut self, s: u32, id: ListId) {
        let Slot { prev, next, .. } = self.slots[s as usize];
        if prev != NIL {
            self.slots[prev as usize].next = next;
        }
        if next != NIL {
            self.slots[next as usize].prev = prev;
        }
        let l = self.list(id);
        if prev == NIL {
            l.head = next;
        }
        if next == NIL {
            l.tail = prev;
        }
        l.len -= 1;
    }

    fn push_front(&mut self, s: u32, id: ListId) {
        let head = self.list(id).head;
        self.slots[s as usize].prev = NIL;
        self.slots[s as usize].next = head;
        if head != NIL {
            self.slots[head as usize].prev = s;
        }
        let l = self.list(id);
        if l.tail == NIL {
            l.tail = s;
        }
        l.head = s;
        l.len += 1;
    }

    /// The list a slot in `state` is on, if any.
    fn list_of(&self, s: u32) -> Option<ListId> {
        match self.slots[s as usize].state {
            State::Dirty => Some(ListId::Dirty),
            State::Clean => Some(ListId::Clean),
            State::Ahead => Some(ListId::Ahead),
            State::Staged | State::Free => None,
        }
    }

    /// True if the units `mask` of `lpn` are all in DRAM (a read hit); refreshes LRU.
    pub fn read(&mut self, lpn: u64, mask: u64) -> bool {
        self.counters.read_lookups += 1;
        let s = self.index.get(lpn);
        if s == NIL || self.slots[s as usize].mask & mask != mask {
            return false;
        }
        self.counters.read_hits += 1;
        if let Some(id @ (ListId::Dirty | ListId::Clean)) = self.list_of(s) {
            self.unlink(s, id);
            self.push_front(s, id);
        }
        true
    }

    /// Store units `mask` of `lpn`. `flushes` receives pages to write to flash (an
    /// eviction and flush-ahead), in the order they should be issued.
    pub fn write(&mut self, lpn: u64, mask: u64, flushes: &mut Vec<Flush>) -> Put {
        self.counters.write_lookups += 1;
        let s = self.index.get(lpn);
        if s != NIL {
            self.counters.write_hits += 1;
            self.rewrite(s, mask);
            self.flush_ahead(flushes);
            return Put::Stored;
        }
        let mut put = Put::Stored;
        if self.resident == self.capacity {
            if self.clean.tail != NIL {
                let c = self.clean.tail;
                self.unlink(c, ListId::Clean);
                self.release(c);
            } else {
                let victim = self.evict(flushes);
                put = Put::Evicted { victim };
            }
        }
        let s = self.alloc();
        self.slots[s as usize] = Slot { lpn, state: State::Dirty, mask, ..Self::FREE_SLOT };
        self.resident += 1;
        self.index.set(lpn, s);
        self.push_front(s, ListId::Dirty);
        self.flush_ahead(flushes);
        put
    }

    const FREE_SLOT: Slot = Slot {
        lpn: 0,
        state: State::Free,
        redirty: false,
        trimmed: false,
        mask: 0,
        waiter: NIL,
        ready: SimTime::ZERO,
        prev: NIL,
        next: NIL,
    };

    fn alloc(&mut self) -> u32 {
        match self.free.pop() {
            Some(s) => s,
            None => {
                self.slots.push(Self::FREE_SLOT);
                (self.slots.len() - 1) as u32
            }
        }
    }

    /// Free slot `s` (already off every list) and forget its page.
    fn release(&mut self, s: u32) {
        let slot = self.slots[s as usize];
        if slot.state.resident() {
            self.resident -= 1;
        }
        self.index.set(slot.lpn, NIL);
        self.slots[s as usize] = Self::FREE_SLOT;
        self.free.push(s);
    }

    /// A host write to the buffered page of slot `s`.
    fn rewrite(&mut self, s: u32, mask: u64) {
        match self.list_of(s) {
            Some(id @ (ListId::Dirty | ListId::Clean)) => {
                self.unlink(s, id);
                let slot = &mut self.slots[s as usize];
                slot.mask |= mask;
                slot.state = State::Dirty;
                self.push_front(s, ListId::Dirty);
            }
            Some(ListId::Ahead) | None => {
                let slot = &mut self.slots[s as usize];
                assert!(slot.state.flushing(), "indexed slot {s} is free");
                // After a trim only the new units are valid.
                slot.mask = if slot.trimmed && !slot.redirty { mask } else { slot.mask | mask };
                if !slot.redirty && slot.state == State::Ahead {
                    self.ahead_redirty += 1;
                }
                slot.redirty = true;
            }
        }
    }

    /// Start the program of the least recently used dirty page; it becomes `to` (`Ahead`,
    /// on the ahead list, or `Staged`, out of the capacity). `None` if nothing is dirty.
    fn flush_lru_dirty(&mut self, to: State, flushes: &mut Vec<Flush>) -> Option<u32> {
        let s = self.dirty.tail;
        if s == NIL {
            return None;
        }
        self.unlink(s, ListId::Dirty);
        let slot = &mut self.slots[s as usize];
        slot.state = to;
        slot.redirty = false;
        flushes.push(Flush { lpn: slot.lpn, mask: slot.mask, slot: s });
        match to {
            State::Ahead => self.push_front(s, ListId::Ahead),
            State::Staged => self.resident -= 1,
            _ => unreachable!("a flush makes a slot Ahead or Staged, not {to:?}"),
        }
        Some(s)
    }

    /// Make room for one page: stage the oldest flush in flight, else start flushing
    /// the least recently used dirty page and stage it. Returns the staged slot.
    fn evict(&mut self, flushes: &mut Vec<Flush>) -> u32 {
        self.counters.evictions += 1;
        let s = self.ahead.tail;
        if s == NIL {
            // Every resident slot is dirty, clean or flushing ahead; clean ones were
            // taken first and a full buffer has no free slot.
            let s = self.flush_lru_dirty(State::Staged, flushes);
            self.counters.eviction_flushes += 1;
            return s.expect("a full buffer with nothing dirty or flushing ahead");
        }
        self.unlink(s, ListId::Ahead);
        if self.slots[s as usize].redirty {
            self.ahead_redirty -= 1;
        }
        self.slots[s as usize].state = State::Staged;
        self.resident -= 1;
        s
    }

    /// Bind the request whose write page waits for staged slot `victim`; `ready` is
    /// when that page's DRAM transfer completes.
    pub fn set_waiter(&mut self, victim: u32, req: u32, ready: SimTime) {
        let slot = &mut self.slots[victim as usize];
        assert!(slot.state == State::Staged && slot.waiter == NIL, "bad victim {victim}");
        slot.waiter = req;
        slot.ready = ready;
    }

    /// Resident slots reclaimable now or when their in-flight flush completes.
    fn reclaimable(&self) -> u32 {
        (self.capacity - self.resident) + self.clean.len + self.ahead.len - self.ahead_redirty
    }

    /// Keep at least `watermark` slots free, clean or flushing ahead.
    fn flush_ahead(&mut self, flushes: &mut Vec<Flush>) {
        while self.reclaimable() < self.watermark && self.flush_lru_dirty(State::Ahead, flushes).is_some() {
            self.counters.ahead_flushes += 1;
        }
    }

    /// Flush every dirty page (idle flush).
    pub fn flush_all(&mut self, flushes: &mut Vec<Flush>) {
        while self.flush_lru_dirty(State::Ahead, flushes).is_some() {
            self.counters.idle_flushes += 1;
        }
    }

    /// The flash program of `lpn` from `slot` (a [`Flush`]'s fields) completed.
    /// `flushes` receives pages to flush now (a re-dirtied page that no longer fits).
    pub fn flush_done(&mut self, slot: u32, lpn: u64, flushes: &mut Vec<Flush>) -> FlushDone {
        let s = slot;
        let sl = self.slots[s as usize];
        assert!(sl.state.flushing() && sl.lpn == lpn, "flush completion for a slot not flushing");
        if sl.state == State::Ahead {
            self.unlink(s, ListId::Ahead);
            if sl.redirty {
                self.ahead_redirty -= 1;
            }
        }
        let done =
            FlushDone { trimmed: sl.trimmed, waiter: (sl.waiter != NIL).then_some((sl.waiter, sl.ready)) };
        let m = &mut self.slots[s as usize];
        m.trimmed = false;
        m.waiter = NIL;
        if sl.redirty {
            m.redirty = false;
            m.state = State::Dirty;
            if sl.state == State::Staged {
                self.resident += 1;
            }
            self.push_front(s, ListId::Dirty);
            // A staged page re-dirtied came back: keep the resident set within capacity.
            while self.resident > self.capacity {
                self.flush_lru_dirty(State::Staged, flushes).expect("the page that came back is dirty");
                self.counters.overflow_flushes += 1;
            }
        } else if sl.trimmed || sl.state == State::Staged {
            self.release(s);
        } else {
            m.state = State::Clean;
            self.push_front(s, ListId::Clean);
        }
        done
    }

    /// Dirty pages not yet flushing.
    pub fn dirty_pages(&self) -> u32 {
        self.dirty.len
    }

    /// Pages occupying the capacity.
    pub fn resident_pages(&self) -> u32 {
        self.resident
    }

    /// True if `lpn` is in the buffer (dirty, clean, flushing or staged).
    pub fn holds(&self, lpn: u64) -> bool {
        self.index.get(lpn) != NIL
    }

    /// Remove `lpn` (trim). A slot with a program in flight stays until the program
    /// completes ([`FlushDone::trimmed`]); its data is no longer readable.
    pub fn discard(&mut self, lpn: u64) {
        let s = self.index.get(lpn);
        if s == NIL {
            return;
        }
        match self.list_of(s) {
            Some(id @ (ListId::Dirty | ListId::Clean)) => {
                self.unlink(s, id);
                self.release(s);
            }
            Some(ListId::Ahead) | None => {
                let m = &mut self.slots[s as usize];
                if m.redirty && m.state == State::Ahead {
                    self.ahead_redirty -= 1;
                }
                m.trimmed = true;
                m.redirty = false;
                m.mask = 0;
            }
        }
    }

    /// Check the buffer's internal invariants (tests and swarm runs).
    pub fn check_invariants(&self) {
        let live: Vec<(usize, &Slot)> =
            self.slots.iter().enumerate().filter(|(_, s)| s.state != State::Free).collect();
        assert_eq!(live.len() + self.free.len(), self.slots.len(), "free list");
        let resident = live.iter().filter(|(_, s)| s.state.resident()).count() as u32;
        assert_eq!(resident, self.resident, "resident count");
        assert!(self.resident <= self.capacity, "resident {} > capacity {}", self.resident, self.capacity);
        let n = |st: State| live.iter().filter(|(_, s)| s.state == st).count() as u32;
        assert_eq!(n(State::Dirty), self.dirty.len, "dirty list");
        assert_eq!(n(State::Clean), self.clean.len, "clean list");
        assert_eq!(n(State::Ahead), self.ahead.len, "ahead list");
        let redirty = live.iter().filter(|(_, s)| s.state == State::Ahead && s.redirty).count() as u32;
        assert_eq!(redirty, self.ahead_redirty, "re-dirtied slots on the ahead list");
        for &(i, s) in &live {
            assert_eq!(self.index.get(s.lpn), i as u32, "slot {i} of lpn {} not indexed", s.lpn);
            assert!(s.state == State::Staged || s.waiter == NIL, "slot {i} waited on but not staged");
            assert!(s.state.flushing() || !(s.redirty || s.trimmed), "slot {i} flags without a flush");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lpns(f: &[Flush]) -> Vec<u64> {
        f.iter().map(|f| f.lpn).collect()
    }

    #[test]
    fn eviction_stages_the_lru_page_and_the_writer_waits_for_it() {
        let mut b = WriteBuffer::new(2, 100, 0);
        let mut f = Vec::new();
        assert_eq!(b.write(1, FULL, &mut f), Put::Stored);
        assert_eq!(b.write(2, FULL, &mut f), Put::Stored);
        assert!(b.read(1, FULL)); // 1 becomes MRU; 2 is LRU
        let Put::Evicted { victim } = b.write(3, FULL, &mut f) else { panic!("full") };
        assert_eq!(lpns(&f), [2]);
        b.set_waiter(victim, 77, SimTime(5));
        assert!(b.read(2, FULL), "a staged page stays readable");
        assert_eq!(b.resident_pages(), 2);
        b.check_invariants();
        let done = b.flush_done(f[0].slot, 2, &mut f);
        assert_eq!(done, FlushDone { trimmed: false, waiter: Some((77, SimTime(5))) });
        assert!(!b.holds(2) && b.holds(3));
        b.check_invariants();
    }

    #[test]
    fn every_waiting_page_has_its_own_flush_in_flight() {
        let mut b = WriteBuffer::new(8, 100, 0);
        let mut f = Vec::new();
        for l in 0..8 {
            assert_eq!(b.write(l, FULL, &mut f), Put::Stored);
        }
        for l in 50..55 {
            assert!(matches!(b.write(l, FULL, &mut f), Put::Evicted { .. }));
        }
        assert_eq!(lpns(&f), [0, 1, 2, 3, 4], "five evictions at once, oldest first");
        assert_eq!(b.counters.eviction_flushes, 5);
        assert_eq!(b.resident_pages(), 8);
        b.check_invariants();
    }

    #[test]
    fn eviction_prefers_a_flush_already_in_flight() {
        let mut b = WriteBuffer::new(4, 100, 1);
        let mut f = Vec::new();
        for l in 0..4 {
            b.write(l, FULL, &mut f);
        }
        assert_eq!(lpns(&f), [0], "watermark 1 flushes the LRU page ahead");
        f.clear();
        let Put::Evicted { victim } = b.write(9, FULL, &mut f) else { panic!() };
        assert_eq!(b.slots[victim as usize].lpn, 0, "took over the flush of page 0");
        assert_eq!(b.counters.eviction_flushes, 0);
        assert_eq!(lpns(&f), [1], "and the watermark flushes the next LRU page ahead");
        b.check_invariants();
    }

    #[test]
    fn rewrite_while_flushing_redirties() {
        let mut b = WriteBuffer::new(1, 10, 0);
        let mut f = Vec::new();
        b.write(5, FULL, &mut f);
        b.flush_all(&mut f);
        assert_eq!(f.len(), 1);
        b.write(5, 1, &mut f);
        let fl = f[0];
        assert_eq!(b.flush_done(fl.slot, fl.lpn, &mut f), FlushDone { trimmed: false, waiter: None });
        assert_eq!(b.dirty_pages(), 1);
        b.check_invariants();
    }

    #[test]
    fn staged_page_rewritten_comes_back_and_pushes_out_the_lru() {
        let mut b = WriteBuffer::new(2, 10, 0);
        let mut f = Vec::new();
        b.write(1, FULL, &mut f);
        b.write(2, FULL, &mut f);
        let Put::Evicted { victim } = b.write(3, FULL, &mut f) else { panic!() };
        b.set_waiter(victim, 0, SimTime::ZERO);
        b.write(1, FULL, &mut f); // re-dirties the staged page 1
        let fl = f[0];
        f.clear();
        let d = b.flush_done(fl.slot, fl.lpn, &mut f);
        assert_eq!(d.waiter, Some((0, SimTime::ZERO)));
        assert_eq!(lpns(&f), [2], "page 1 is back; the LRU page 2 is flushed out");
        assert_eq!(b.counters.overflow_flushes, 1);
        b.check_invariants();
    }

    #[test]
    fn watermark_flushes_ahead_and_flushed_pages_turn_clean() {
        let mut b = WriteBuffer::new(4, 10, 2);
        let mut f = Vec::new();
        b.write(1, FULL, &mut f);
        b.write(2, FULL, &mut f);
        assert!(f.is_empty());
        b.write(3, FULL, &mut f);
        assert_eq!(lpns(&f), [1]);
        assert_eq!(b.counters.ahead_flushes, 1);
        b.flush_done(f[0].slot, 1, &mut Vec::new());
        assert!(b.read(1, FULL), "clean pages stay readable");
        b.check_invariants();
    }

    #[test]
    fn trim_while_flushing_unmaps_after_the_program() {
        let mut b = WriteBuffer::new(2, 10, 0);
        let mut f = Vec::new();
        b.write(4, FULL, &mut f);
        b.flush_all(&mut f);
        b.discard(4);
        assert!(!b.read(4, FULL), "trimmed data is not readable");
        let d = b.flush_done(f[0].slot, f[0].lpn, &mut Vec::new());
        assert!(d.trimmed);
        assert!(!b.holds(4));
        b.check_invariants();
        // Trim, then rewrite, while flushing: the new data stays, dirty.
        f.clear();
        b.write(6, FULL, &mut f);
        b.flush_all(&mut f);
        b.discard(6);
        b.write(6, 1, &mut f);
        assert!(b.read(6, 1) && !b.read(6, FULL));
        let d = b.flush_done(f[0].slot, f[0].lpn, &mut Vec::new());
        assert!(d.trimmed);
        assert_eq!(b.dirty_pages(), 1);
        b.check_invariants();
    }

    #[test]
    fn a_buffer_full_of_redirtied_flushes_still_evicts() {
        // Story: a shared trace with a 32-page buffer rewrote every resident page while
        // its flush was in flight; the eviction found nothing to take and panicked.
        let mut b = WriteBuffer::new(2, 10, 0);
        let mut f = Vec::new();
        b.write(1, FULL, &mut f);
        b.write(2, FULL, &mut f);
        b.flush_all(&mut f);
        b.write(1, FULL, &mut f);
        b.write(2, FULL, &mut f);
        f.clear();
        let Put::Evicted { victim } = b.write(3, FULL, &mut f) else { panic!() };
        assert!(f.is_empty(), "took over page 1's flush in flight");
        b.set_waiter(victim, 9, SimTime::ZERO);
        b.check_invariants();
        let d = b.flush_done(victim, 1, &mut f);
        assert_eq!(d.waiter, Some((9, SimTime::ZERO)));
        assert_eq!(lpns(&f), [3], "page 1 came back dirty and pushed the LRU dirty page out");
        b.check_invariants();
    }

    #[test]
    fn clean_pages_are_reclaimed_lru_first() {
        let mut b = WriteBuffer::new(3, 10, 0);
        let mut f = Vec::new();
        for l in 0..3 {
            b.write(l, FULL, &mut f);
        }
        b.flush_all(&mut f);
        for x in f.clone() {
            b.flush_done(x.slot, x.lpn, &mut Vec::new());
        }
        assert!(b.read(0, FULL)); // 0 is now the most recent clean page
        f.clear();
        assert_eq!(b.write(7, FULL, &mut f), Put::Stored);
        assert!(!b.holds(1) && b.holds(0) && b.holds(2));
        b.check_invariants();
    }
}
