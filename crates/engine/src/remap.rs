//! Micropages-style remapping (`[remap]`, soml-read §6.2.2, Fig. 11b and 13): partial
//! reads of different logical pages that arrive together are copied into one physical
//! page, so the next read of that group is one flash read. The baseline SOML read is
//! compared against (docs/policies.md, "Remapping").
//!
//! This module holds the configuration, the report section and [`RemapTable`], the pure
//! bookkeeping (co-read detection, the remap-page pool, the sub-page map from a logical
//! page's partial-read units to their copies) — no clock, no device, so it is tested
//! against a reference model on its own. The engine (`sim/remap.rs`) turns its decisions
//! into timed flash operations: the copy's reads and program, the redirected reads.

use std::collections::BTreeMap;

use lamina_nand_model::{Nanos, SimTime};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Most member reads one remap group holds (and most partial-read units it copies).
pub const MAX_GROUP: usize = 8;

/// Most partial-read units a page may have for remapping (unit ids pack the unit in 6 bits).
pub const MAX_UNITS_PER_PAGE: u32 = 64;

/// Which remapping scheme runs (`remap.policy`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RemapPolicy {
    /// No remapping (the default).
    #[default]
    None,
    /// Micropages-style co-location of co-read partial pages (docs/policies.md).
    Micropages,
}

/// Remapping (`[remap]`). See docs/policies.md, "Remapping (Micropages)".
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RemapConfig {
    /// `none` or `micropages`.
    pub policy: RemapPolicy,
    /// Partial flash reads arriving within this time of a group's first read join it
    /// (default 1 ms).
    pub window: Nanos,
    /// Most partial-read units (`nand.geometry.partial_read_bytes` each) one group
    /// copies: at most the units of a page and at most 8. 0 (default) = the units of a page.
    pub group_units: u32,
    /// A group is copied the `threshold`-th time the same set of partial reads is seen
    /// together (default 2: seen once, copied when it recurs).
    pub threshold: u32,
    /// Logical pages reserved at the top of the logical space for the copies (the host
    /// addresses that many fewer pages). Default 4096.
    pub pages: u64,
    /// Distinct groups the detector remembers; when full it forgets all of them (an
    /// epoch ends, as Micropages' counters reset). Default 65,536.
    pub table_groups: u32,
    /// A redirected read that arrives while a read of its remap page is already issued
    /// waits for that read and is served from the die's page register by a data output
    /// of its bytes (no second sensing), if the register still holds the page then
    /// (default true). False: it is queued as a flash read of its own.
    pub join_in_flight: bool,
}

impl Default for RemapConfig {
    fn default() -> Self {
        RemapConfig {
            policy: RemapPolicy::None,
            window: Nanos(1_000_000),
            group_units: 0,
            threshold: 2,
            pages: 4096,
            table_groups: 65_536,
            join_in_flight: true,
        }
    }
}

impl RemapConfig {
    /// True when remapping is off with every parameter at its default (the resolved
    /// config then leaves the section out, so run keys of existing sweeps stay the same).
    pub fn is_default(&self) -> bool {
        *self == RemapConfig::default()
    }

    /// True when remapping runs.
    pub fn enabled(&self) -> bool {
        self.policy != RemapPolicy::None
    }

    /// Check the section against the device: `units_per_page` partial-read units per
    /// page, `logical_pages` host-addressable pages before the reservation, `replicated`
    /// if the FTL keeps a second copy of every page (`ftl.replication`).
    pub fn validate(
        &self,
        units_per_page: u32,
        logical_pages: u64,
        replicated: bool,
    ) -> Result<(), RemapConfigError> {
        if !self.enabled() {
            return Ok(());
        }
        let bad = |key: &'static str, msg: String| Err(RemapConfigError { key, msg });
        if replicated {
            return bad(
                "remap.policy",
                "remapping and ftl.replication cannot be combined; set one of them to \"none\"".into(),
            );
        }
        if !(2..=MAX_UNITS_PER_PAGE).contains(&units_per_page) {
            return bad(
                "remap.policy",
                format!(
                    "remapping co-locates partial-read units; the page has {units_per_page} (need 2..={MAX_UNITS_PER_PAGE}: set nand.geometry.partial_read_bytes to a fraction of the page)"
                ),
            );
        }
        let max = units_per_page.min(MAX_GROUP as u32);
        if self.group_units == 1 || self.group_units > max {
            return bad(
                "remap.group_units",
                format!("{} is outside 2..={max} (0 = {max})", self.group_units),
            );
        }
        if self.threshold == 0 {
            return bad("remap.threshold", "must be at least 1".into());
        }
        if self.window.0 == 0 {
            return bad("remap.window", "must be positive (e.g. \"1ms\")".into());
        }
        if self.pages == 0 || self.pages >= logical_pages / 2 || self.pages > (u32::MAX >> 8) as u64 {
            return bad(
                "remap.pages",
                format!(
                    "{} must be between 1 and half the logical pages ({}) and below 2^24",
                    self.pages,
                    logical_pages / 2
                ),
            );
        }
        if self.table_groups == 0 {
            return bad("remap.table_groups", "must be at least 1".into());
        }
        Ok(())
    }
}

/// An invalid `[remap]` key.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{key}: {msg}")]
pub struct RemapConfigError {
    /// The key.
    pub key: &'static str,
    /// What is wrong and how to fix it.
    pub msg: String,
}

/// Remapping counters over the replay (`remap` in the JSON; null unless
/// `remap.policy` is set). Copy programs are also host programs to the FTL
/// (`flash.host_programs` includes `copies`); copy reads are not host reads.
#[derive(Clone, Debug, Default, Serialize, PartialEq, JsonSchema)]
pub struct RemapReport {
    /// Groups of ≥ 2 partial reads of distinct pages the detector closed.
    pub groups_seen: u64,
    /// Groups copied into a remap page (one page program each).
    pub copies: u64,
    /// Flash reads issued to fetch the members of copied groups.
    pub copy_reads: u64,
    /// Groups that reached the threshold but found no free remap page (and the oldest
    /// programmed one had a read queued, so it could not be evicted).
    pub no_room: u64,
    /// Remap pages whose copies were dropped to make room for a new group (oldest
    /// programmed first).
    pub evicted: u64,
    /// Groups not copied because a member was already remapped (or being copied).
    pub overlapping: u64,
    /// Host page reads served by a remap page (flash reads of their own).
    pub hits: u64,
    /// Host page reads that joined a queued read of the same remap page: served by
    /// that one flash read (the point of remapping).
    pub merged: u64,
    /// Host page reads that arrived while a read of their remap page was in flight
    /// and waited for it (`remap.join_in_flight`): served by a register read, or by a
    /// new flash read when the register no longer held the page.
    pub joined_in_flight: u64,
    /// Register reads (data output from the page register, no sensing) that served
    /// reads joined in flight.
    pub register_reads: u64,
    /// Times the reads joined in flight found the page register overwritten (or the
    /// page moved) when the read they waited for completed, and were queued as a
    /// flash read instead.
    pub register_misses: u64,
    /// Host partial page reads that went to flash (remap hits included): the hit
    /// rate's denominator.
    pub partial_reads: u64,
    /// Copied members invalidated by a program or trim of their logical page.
    pub invalidated: u64,
    /// Remap pages freed (trimmed) after their last member was invalidated.
    pub freed: u64,
    /// Remap pages holding live copies at the end.
    pub live_pages: u64,
    /// Detector epochs ended because the group table was full.
    pub epochs: u64,
}

/// One member of a remap group: a partial read of `units` units of `lpn` from unit `u0`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Member {
    /// The logical page.
    pub lpn: u64,
    /// First partial-read unit.
    pub u0: u8,
    /// Units.
    pub units: u8,
    /// First unit of its copy in the remap page.
    pub slot: u8,
    /// Still the latest data of those units.
    pub live: bool,
    /// Verify mode: the version of `lpn` its copy read returned.
    pub version: u32,
}

impl Member {
    fn key(&self) -> u64 {
        (self.lpn << 12) | ((self.u0 as u64) << 6) | self.units as u64
    }
}

/// State of one remap page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageState {
    /// Holds nothing; its logical page is unmapped (or never written).
    Free,
    /// Its members are being read (`reads` left) or its program is in flight.
    Copying {
        /// Copy reads not yet completed.
        reads: u32,
    },
    /// Programmed: reads of its live members are redirected to it.
    Live,
}

/// One remap page's bookkeeping.
#[derive(Clone, Debug)]
pub struct RemapPage {
    /// State.
    pub state: PageState,
    /// Members (`n` of them).
    pub members: [Member; MAX_GROUP],
    /// Members in use.
    pub n: u8,
    /// Members still live.
    pub live: u8,
    /// Redirected host reads queued or in flight on this page: it is not freed before
    /// they complete.
    pub readers: u32,
    /// A redirected read queued but not yet issued (engine transaction id), which later
    /// reads of the page join; `u32::MAX` = none.
    pub queued_read: u32,
    /// Host requests whose page read joined `queued_read` (finished with it). When that
    /// read is issued they move to `flights`.
    pub joiners: Vec<u32>,
    /// The redirected reads of this page in flight (issued, not completed): each one's
    /// transaction sequence number and the host requests that joined it while it was
    /// queued (or, for a register read, that joined the read before it in flight), which
    /// finish with it. Kept per read: with `join_in_flight = false` a second read of the
    /// page can be queued — and joined — while the first is in flight, and those joiners
    /// must not finish when the first completes (swarm seed 46774). Empty when no read
    /// of the page is in flight.
    pub flights: Vec<(u64, Vec<u32>)>,
    /// Host requests whose page read joined a read in flight: served when it completes.
    pub late: Vec<u32>,
    /// Byte range `[lo, hi)` of the page the `late` reads need.
    pub late_range: (u32, u32),
    /// Programs of this page so far (tells its eviction-queue entries apart).
    pub generation: u32,
}

/// Where a host read of a remapped partial page goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Redirect {
    /// Remap page index (its logical page is the table's base + this).
    pub page: u32,
    /// Member index in that page.
    pub member: u8,
    /// Byte offset of the read within the remap page.
    pub offset: u32,
}

/// The open group of the detector.
#[derive(Clone, Copy, Debug, Default)]
struct OpenGroup {
    start: SimTime,
    members: [Member; MAX_GROUP],
    n: u8,
    units: u32,
}

/// Remapping's bookkeeping: co-read detection, the remap-page pool and the sub-page map.
/// Deterministic: the only hash map is looked up, never iterated; groups are counted in
/// a `BTreeMap`; free pages are handed out lowest index first.
pub struct RemapTable {
    window: Nanos,
    group_units: u32,
    threshold: u32,
    table_groups: usize,
    units_per_page: u32,
    unit_bytes: u32,
    /// First remap logical page.
    base: u64,
    /// Unit id (`lpn × 64 + unit`) → `page << 8 | member`.
    map: rustc_hash::FxHashMap<u64, u32>,
    pages: Vec<RemapPage>,
    /// Free page indices, highest first (popped lowest first).
    free: Vec<u32>,
    /// Programmed pages, oldest first (may hold pages freed since): the eviction order
    /// when no page is free.
    fifo: std::collections::VecDeque<(u32, u32)>,
    open: OpenGroup,
    seen: BTreeMap<[u64; MAX_GROUP], u32>,
    /// Pages freed by the last call that the engine must trim.
    to_free: Vec<u32>,
    /// Counters.
    pub counters: RemapReport,
}

impl RemapTable {
    /// A table for `cfg` (validated) with pages of `units_per_page` units of
    /// `unit_bytes`, whose remap pages are the logical pages `base ..`.
    pub fn new(cfg: &RemapConfig, units_per_page: u32, unit_bytes: u32, base: u64) -> RemapTable {
        let group_units =
            if cfg.group_units == 0 { units_per_page.min(MAX_GROUP as u32) } else { cfg.group_units };
        let n = cfg.pages as u32;
        RemapTable {
            window: cfg.window,
            group_units,
            threshold: cfg.threshold,
            table_groups: cfg.table_groups as usize,
            units_per_page,
            unit_bytes,
            base,
            map: rustc_hash::FxHashMap::default(),
            pages: Vec::new(),
            free: (0..n).rev().collect(),
            fifo: std::collections::VecDeque::new(),
            open: OpenGroup::default(),
            seen: BTreeMap::new(),
            to_free: Vec::new(),
            counters: RemapReport::default(),
        }
    }

    /// The first remap logical page.
    pub fn base(&self) -> u64 {
        self.base
    }

    /// The logical page of remap page `page`.
    pub fn lpn_of(&self, page: u32) -> u64 {
        self.base + page as u64
    }

    /// Remap page `page`.
    pub fn page(&self, page: u32) -> &RemapPage {
        &self.pages[page as usize]
    }

    /// Remap page `page`, mutably.
    pub fn page_mut(&mut self, page: u32) -> &mut RemapPage {
        &mut self.pages[page as usize]
    }

    #[inline]
    fn unit_id(lpn: u64, unit: u32) -> u64 {
        lpn * MAX_UNITS_PER_PAGE as u64 + unit as u64
    }

    /// The units `[u0, u0 + n)` a read of `len` bytes at `offset` covers.
    pub fn units_of(&self, offset: u32, len: u32) -> (u32, u32) {
        let u0 = offset / self.unit_bytes;
        let u1 = (offset + len).div_ceil(self.unit_bytes);
        (u0, u1 - u0)
    }

    /// A partial flash read of `len` bytes at `offset` of host page `lpn` arrives at
    /// `now`. Feeds the detector; returns a remap page whose copy must start now (its
    /// members listed in [`RemapTable::page`]) when a group reached the threshold.
    pub fn observe(&mut self, now: SimTime, lpn: u64, offset: u32, len: u32) -> Option<u32> {
        self.counters.partial_reads += 1;
        let (u0, n) = self.units_of(offset, len);
        let o = &self.open;
        let mut copy = None;
        if o.n > 0
            && (now.saturating_since(o.start) > self.window
                || o.units + n > self.group_units
                || o.n as usize == MAX_GROUP
                || o.members[..o.n as usize].iter().any(|m| m.lpn == lpn))
        {
            copy = self.close();
        }
        if n < self.units_per_page && n <= self.group_units {
            let o = &mut self.open;
            if o.n == 0 {
                o.start = now;
            }
            o.members[o.n as usize] =
                Member { lpn, u0: u0 as u8, units: n as u8, slot: 0, live: true, version: 0 };
            o.n += 1;
            o.units += n;
        }
        copy
    }

    /// Close the open group: count it, and start its copy if it reached the threshold.
    fn close(&mut self) -> Option<u32> {
        let g = std::mem::take(&mut self.open);
        if g.n < 2 {
            return None;
        }
        self.counters.groups_seen += 1;
        let members = &g.members[..g.n as usize];
        let remapped = members.iter().any(|m| {
            (m.u0 as u32..(m.u0 + m.units) as u32).any(|u| self.map.contains_key(&Self::unit_id(m.lpn, u)))
        });
        if remapped {
            self.counters.overlapping += 1;
            return None;
        }
        let mut key = [u64::MAX; MAX_GROUP];
        for (k, m) in key.iter_mut().zip(members) {
            *k = m.key();
        }
        key.sort_unstable();
        if !self.seen.contains_key(&key) && self.seen.len() >= self.table_groups {
            self.seen.clear();
            self.counters.epochs += 1;
        }
        let count = self.seen.entry(key).or_insert(0);
        *count += 1;
        if *count < self.threshold {
            return None;
        }
        if self.free.is_empty() {
            self.evict_oldest();
        }
        let Some(page) = self.free.pop() else {
            self.counters.no_room += 1;
            return None;
        };
        self.seen.remove(&key);
        if page as usize >= self.pages.len() {
            self.pages.resize(
                page as usize + 1,
                RemapPage {
                    state: PageState::Free,
                    members: [Member::default(); MAX_GROUP],
                    n: 0,
                    live: 0,
                    readers: 0,
                    queued_read: u32::MAX,
                    joiners: Vec::new(),
                    flights: Vec::new(),
                    late: Vec::new(),
                    late_range: (u32::MAX, 0),
                    generation: 0,
                },
            );
        }
        let p = &mut self.pages[page as usize];
        debug_assert_eq!(p.state, PageState::Free);
        let mut slot = 0u8;
        for (i, m) in members.iter().enumerate() {
            p.members[i] = Member { slot, ..*m };
            for u in 0..m.units as u32 {
                self.map.insert(Self::unit_id(m.lpn, m.u0 as u32 + u), (page << 8) | i as u32);
            }
            slot += m.units;
        }
        p.n = g.n;
        p.live = g.n;
        p.state = PageState::Copying { reads: g.n as u32 };
        self.counters.copies += 1;
        Some(page)
    }

    /// No page is free: drop the copies of the oldest programmed page, unless a read is
    /// still queued on it (then nothing is evicted this time).
    fn evict_oldest(&mut self) {
        while let Some(&(page, generation)) = self.fifo.front() {
            let p = &self.pages[page as usize];
            if p.state != PageState::Live || p.generation != generation {
                // Freed since (and perhaps being copied again): not this entry's page.
                self.fifo.pop_front();
                continue;
            }
            if p.readers > 0 {
                return;
            }
            self.fifo.pop_front();
            self.counters.evicted += 1;
            let members = p.members;
            for m in &members[..p.n as usize] {
                if !m.live {
                    continue;
                }
                for u in 0..m.units as u32 {
                    self.map.remove(&Self::unit_id(m.lpn, m.u0 as u32 + u));
                }
            }
            let p = &mut self.pages[page as usize];
            for m in &mut p.members[..p.n as usize] {
                m.live = false;
            }
            p.live = 0;
            self.maybe_free(page);
            return;
        }
    }

    /// Where a host read of `len` bytes at `offset` of `lpn` goes: its remap page, if
    /// every unit it covers belongs to one live member of a programmed remap page.
    #[inline]
    pub fn redirect(&self, lpn: u64, offset: u32, len: u32) -> Option<Redirect> {
        if self.map.is_empty() {
            return None;
        }
        let (u0, n) = self.units_of(offset, len);
        let e = *self.map.get(&Self::unit_id(lpn, u0))?;
        let (page, member) = (e >> 8, (e & 0xff) as u8);
        let p = &self.pages[page as usize];
        let m = &p.members[member as usize];
        if p.state != PageState::Live || !m.live || u0 + n > (m.u0 + m.units) as u32 {
            return None;
        }
        let offset = (m.slot as u32 + (u0 - m.u0 as u32)) * self.unit_bytes + offset % self.unit_bytes;
        Some(Redirect { page, member, offset })
    }

    /// One copy read of `page` completed; true when it was the last (program it now).
    pub fn copy_read_done(&mut self, page: u32) -> bool {
        let p = &mut self.pages[page as usize];
        let PageState::Copying { reads } = &mut p.state else {
            panic!("copy read of remap page {page} not copying")
        };
        *reads -= 1;
        *reads == 0
    }

    /// The program of `page` completed: its live members are served from it now. A page
    /// whose members were all invalidated meanwhile is freed at once.
    pub fn programmed(&mut self, page: u32) {
        let p = &mut self.pages[page as usize];
        assert_eq!(p.state, PageState::Copying { reads: 0 }, "remap page {page} programmed out of order");
        p.state = PageState::Live;
        p.generation = p.generation.wrapping_add(1);
        self.fifo.push_back((page, p.generation));
        self.maybe_free(page);
    }

    /// Host page `lpn` was programmed or trimmed: its copies are stale.
    pub fn invalidate(&mut self, lpn: u64) {
        if self.map.is_empty() {
            return;
        }
        for u in 0..self.units_per_page {
            let Some(e) = self.map.remove(&Self::unit_id(lpn, u)) else { continue };
            let (page, member) = (e >> 8, (e & 0xff) as usize);
            let p = &mut self.pages[page as usize];
            if p.members[member].live {
                p.members[member].live = false;
                p.live -= 1;
                self.counters.invalidated += 1;
                self.maybe_free(page);
            }
        }
    }

    /// A redirected read of `page` is queued (it pins the page).
    pub fn pin(&mut self, page: u32) {
        self.pages[page as usize].readers += 1;
    }

    /// A redirected read of `page` completed.
    pub fn unpin(&mut self, page: u32) {
        let p = &mut self.pages[page as usize];
        p.readers -= 1;
        self.maybe_free(page);
    }

    fn maybe_free(&mut self, page: u32) {
        let p = &mut self.pages[page as usize];
        if p.state == PageState::Live && p.live == 0 && p.readers == 0 {
            p.state = PageState::Free;
            p.n = 0;
            p.queued_read = u32::MAX;
            debug_assert!(p.joiners.is_empty() && p.flights.is_empty() && p.late.is_empty());
            self.counters.freed += 1;
            self.to_free.push(page);
            // Keep handing out the lowest free index (deterministic, compact).
            let at = self.free.partition_point(|&f| f > page);
            self.free.insert(at, page);
        }
    }

    /// Pages freed since the last call (their logical pages must be trimmed).
    pub fn take_freed(&mut self) -> Option<u32> {
        self.to_free.pop()
    }

    /// Remap pages holding live copies now.
    pub fn live_pages(&self) -> u64 {
        self.pages.iter().filter(|p| p.state == PageState::Live).count() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(threshold: u32) -> RemapTable {
        let cfg =
            RemapConfig { policy: RemapPolicy::Micropages, threshold, pages: 2, ..RemapConfig::default() };
        RemapTable::new(&cfg, 4, 4096, 1000)
    }

    fn t(ns: u64) -> SimTime {
        SimTime(ns)
    }

    #[test]
    fn a_recurring_pair_is_copied_the_second_time() {
        let mut r = table(2);
        assert_eq!(r.observe(t(0), 7, 0, 4096), None);
        assert_eq!(r.observe(t(10), 9, 8192, 4096), None);
        // Window over: the pair closes (seen once); a new group starts.
        assert_eq!(r.observe(t(5_000_000), 7, 0, 4096), None);
        assert_eq!(r.observe(t(5_000_010), 9, 8192, 4096), None);
        let page = r.observe(t(20_000_000), 1, 0, 4096).expect("second sighting copies");
        assert_eq!(page, 0);
        let p = r.page(0);
        assert_eq!((p.n, p.live, p.state), (2, 2, PageState::Copying { reads: 2 }));
        // Not redirected before the program completes.
        assert_eq!(r.redirect(9, 8192, 4096), None);
        assert!(!r.copy_read_done(0));
        assert!(r.copy_read_done(0));
        r.programmed(0);
        assert_eq!(r.redirect(7, 0, 4096), Some(Redirect { page: 0, member: 0, offset: 0 }));
        assert_eq!(
            r.redirect(9, 8192 + 512, 1024),
            Some(Redirect { page: 0, member: 1, offset: 4096 + 512 })
        );
        // A read of other units of the page is not remapped.
        assert_eq!(r.redirect(9, 0, 4096), None);
        assert_eq!(r.counters.copies, 1);
    }

    #[test]
    fn invalidation_frees_the_page_after_its_readers() {
        let mut r = table(1);
        r.observe(t(0), 7, 0, 4096);
        r.observe(t(1), 9, 0, 8192);
        let page = r.observe(t(10_000_000), 3, 0, 4096).expect("threshold 1");
        r.copy_read_done(page);
        r.copy_read_done(page);
        r.programmed(page);
        assert_eq!(r.redirect(9, 4096, 4096).map(|x| x.offset), Some(8192));
        r.pin(page);
        r.invalidate(7);
        assert_eq!(r.redirect(7, 0, 4096), None);
        r.invalidate(9);
        assert_eq!(r.take_freed(), None, "pinned by a reader");
        r.unpin(page);
        assert_eq!(r.take_freed(), Some(page));
        assert_eq!(r.counters.invalidated, 2);
        assert_eq!(r.live_pages(), 0);
    }

    #[test]
    fn overlapping_groups_and_a_full_pool_are_counted() {
        let mut r = table(1);
        for (i, base) in [(0u64, 10u64), (1, 20), (2, 30)] {
            r.observe(t(i * 10_000_000), base, 0, 4096);
            r.observe(t(i * 10_000_000 + 1), base + 1, 0, 4096);
        }
        r.observe(t(100_000_000), 10, 0, 4096);
        r.observe(t(100_000_001), 99, 0, 4096);
        r.observe(t(200_000_000), 5, 0, 4096);
        // The third pair found no free page, and both pages are still being copied
        // (not programmed), so nothing could be evicted.
        assert_eq!(r.counters.copies, 2);
        assert_eq!(r.counters.no_room, 1);
        assert_eq!(r.counters.overlapping, 1);
    }

    #[test]
    fn the_oldest_unpinned_page_is_evicted_when_the_pool_is_full() {
        let mut r = table(1);
        let copy = |r: &mut RemapTable, page: Option<u32>| {
            if let Some(page) = page {
                r.copy_read_done(page);
                r.copy_read_done(page);
                r.programmed(page);
            }
            page
        };
        for (i, base) in [(0u64, 10u64), (1, 20), (2, 30)] {
            let p = r.observe(t(i * 10_000_000), base, 0, 4096);
            copy(&mut r, p);
            let p = r.observe(t(i * 10_000_000 + 1), base + 1, 0, 4096);
            copy(&mut r, p);
        }
        let p = r.observe(t(100_000_000), 1, 0, 4096);
        assert_eq!(copy(&mut r, p), Some(0), "(30, 31) evicts (10, 11)");
        assert_eq!(r.counters.evicted, 1);
        assert_eq!(r.take_freed(), Some(0));
        assert_eq!(r.redirect(10, 0, 4096), None);
        assert_eq!(r.redirect(20, 0, 4096).map(|x| x.page), Some(1));
    }
}
