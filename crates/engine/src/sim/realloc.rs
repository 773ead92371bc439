//! RS reallocation (`sched.mcs.reallocate`, docs/policies.md "RS reallocation"): after a
//! host read completes, the pages it found on a channel beyond the balanced share are
//! migrated to the channels holding fewest of its pages. A migration is real flash
//! work in the background: a read of the page (no request waits for it) and, when it is
//! done, a program of the same logical page on a die of the target channel, through the
//! FTL's write path (the old copy becomes invalid; GC reclaims it). A migration whose
//! page was rewritten, trimmed or moved while its copy was read is dropped.

use lamina_ftl::WriteConstraint;
use lamina_nand_model::{DieId, Lpn, Ppa};
use lamina_sched::{McsParams, TxnKind};

use super::controller::Txn;
use super::{NIL, RunError, Simulation, VerifyError};

/// One migration in flight.
#[derive(Clone, Copy, Debug)]
struct Migration {
    lpn: u64,
    /// The die of the target channel it is rewritten on.
    die: DieId,
    /// Where the page was when its read was issued (`None` before).
    src: Option<Ppa>,
    /// The programmed version the read returned (verify mode).
    version: u32,
}

/// Reallocation's bookkeeping.
#[derive(Debug)]
pub(crate) struct Realloc {
    /// Migrations in flight; `None` slots are free.
    slots: Vec<Option<Migration>>,
    free: Vec<u32>,
    /// Scratch: the request's pages per channel.
    per_channel: Vec<u32>,
    /// Scratch: the request's (page, channel), in page order.
    pages: Vec<(u64, u32)>,
    /// Host reads that started migrations.
    pub(crate) requests: u64,
    /// Pages migrated (programmed on the target channel).
    pub(crate) moved: u64,
    /// Excess pages not migrated (the sum of the three below).
    pub(crate) skipped: u64,
    /// Of `skipped`: no migration slot free (the `reallocate_queue` cap reached).
    pub(crate) skipped_queue_full: u64,
    /// Of `skipped`: no channel below its balanced share, or the page is bound to its
    /// plane (`WriteConstraint::Plane`).
    pub(crate) skipped_no_target: u64,
    /// Of `skipped`: the page was rewritten, trimmed or moved by GC (or a host write of
    /// it was queued) after the migration started; the migration was dropped.
    pub(crate) skipped_stale: u64,
}

impl Realloc {
    /// Reallocation with `params`' queue cap.
    pub(crate) fn new(params: &McsParams) -> Self {
        let cap = params.reallocate_queue;
        Realloc {
            slots: vec![None; cap as usize],
            free: (0..cap).rev().collect(),
            per_channel: Vec::new(),
            pages: Vec::new(),
            requests: 0,
            moved: 0,
            skipped: 0,
            skipped_queue_full: 0,
            skipped_no_target: 0,
            skipped_stale: 0,
        }
    }

    fn slot(&mut self, s: u32) -> &mut Migration {
        self.slots[s as usize].as_mut().expect("a live migration")
    }

    fn release(&mut self, s: u32) {
        self.slots[s as usize] = None;
        self.free.push(s);
    }
}

/// The balanced share of `pages` pages over `channels` channels (Channel_Max_Subs'
/// target when every channel is free): `ceil(pages / channels)`.
pub(crate) fn balanced_share(pages: u32, channels: u32) -> u32 {
    pages.div_ceil(channels.max(1))
}

impl Simulation {
    /// Host read of `pages` pages from `first` (wrapping) completed: migrate the pages
    /// beyond a channel's balanced share to the channels with fewest of them.
    pub(super) fn realloc_after_read(&mut self, first: u64, pages: u32) -> Result<(), RunError> {
        let channels = self.geo.channels();
        if pages < 2 || channels < 2 {
            return Ok(());
        }
        let mut r = self.realloc.take().expect("reallocation on");
        r.per_channel.clear();
        r.per_channel.resize(channels as usize, 0);
        r.pages.clear();
        for i in 0..u64::from(pages) {
            let lpn = (first + i) % self.logical_pages;
            if let Some(ppa) = self.ftl.lookup(Lpn(lpn)) {
                let die = self.geo.die_of_ppa(ppa);
                let c = self.geo.channel_of_die(die).0;
                r.per_channel[c as usize] += 1;
                r.pages.push((lpn, c));
            }
        }
        let share = balanced_share(r.pages.len() as u32, channels);
        let mut started = false;
        // The excess of a channel: its last pages in logical order beyond the share.
        for k in (0..r.pages.len()).rev() {
            let (lpn, c) = r.pages[k];
            if r.per_channel[c as usize] <= share {
                continue;
            }
            // The target: the channel with fewest of the request's pages (lowest first).
            let (to, &n) = r.per_channel.iter().enumerate().min_by_key(|&(i, &n)| (n, i)).expect("channels");
            if n + 1 > share || matches!(self.ftl.write_constraint(Lpn(lpn)), WriteConstraint::Plane(_)) {
                r.skipped += 1;
                r.skipped_no_target += 1;
                continue;
            }
            let Some(s) = r.free.pop() else {
                r.skipped += 1;
                r.skipped_queue_full += 1;
                continue;
            };
            let die = self.realloc_die(to as u32);
            r.per_channel[c as usize] -= 1;
            r.per_channel[to] += 1;
            r.slots[s as usize] = Some(Migration { lpn, die, src: None, version: 0 });
            started = true;
            let ppa = self.ftl.lookup(Lpn(lpn)).expect("mapped above");
            let plane = self.geo.plane_of_ppa(ppa);
            let mut t =
                Txn::new(TxnKind::Read, lpn, NIL, self.geo.die_of_plane(plane), plane, 0, self.page_size);
            t.link = s;
            self.realloc = Some(r);
            self.push_txn(&mut t)?;
            r = self.realloc.take().expect("reallocation on");
        }
        if started {
            r.requests += 1;
        }
        self.realloc = Some(r);
        Ok(())
    }

    /// The die of `channel` with the shortest queue (lowest first).
    fn realloc_die(&self, channel: u32) -> DieId {
        (0..self.geo.total_dies())
            .map(DieId)
            .filter(|&d| self.geo.channel_of_die(d).0 == channel)
            .min_by_key(|&d| {
                let q = &self.ctl.dies[d.idx()];
                (q.queues.reads.len() + q.queues.writes.len() + q.parked.len(), d.0)
            })
            .expect("every channel has a die")
    }

    /// The read of migration `s` is issued: note where the page is and its version.
    pub(super) fn realloc_read_issued(&mut self, s: u32, lpn: u64) {
        let src = self.ftl.lookup(Lpn(lpn));
        let version = self.verifier.version(lpn).unwrap_or(0);
        let m = self.realloc.as_mut().expect("reallocation on").slot(s);
        m.src = src;
        m.version = version;
    }

    /// The read of migration `s` was dropped (its page was trimmed while queued).
    pub(super) fn realloc_dropped(&mut self, s: u32) {
        let r = self.realloc.as_mut().expect("reallocation on");
        r.release(s);
        r.skipped += 1;
        r.skipped_stale += 1;
    }

    /// The read of migration `s` is done: queue the rewrite on its target die, unless
    /// the page changed since.
    pub(super) fn realloc_read_done(&mut self, s: u32) -> Result<(), RunError> {
        if self.realloc_stale(s) {
            self.realloc_dropped(s);
            return Ok(());
        }
        let m = *self.realloc.as_mut().expect("reallocation on").slot(s);
        let plane = self.geo.plane_of_die(m.die, 0);
        let mut t = Txn::new(TxnKind::Write, m.lpn, NIL, m.die, plane, 0, self.page_size);
        t.link = s;
        self.push_txn(&mut t)
    }

    /// Migration `s`'s page is no longer where its read found it (rewritten, trimmed
    /// or moved by GC), or a host write of it is still to be programmed.
    pub(super) fn realloc_stale(&mut self, s: u32) -> bool {
        let m = *self.realloc.as_mut().expect("reallocation on").slot(s);
        m.src.is_none() || self.ftl.lookup(Lpn(m.lpn)) != m.src || self.host.queued_writes.contains(m.lpn)
    }

    /// Migration `s`'s rewrite is about to be programmed (not stale): in verify mode
    /// its data must be the latest programmed version.
    pub(super) fn realloc_check(&mut self, s: u32) -> Result<(), RunError> {
        let m = *self.realloc.as_mut().expect("reallocation on").slot(s);
        if let Some(v) = self.verifier.version(m.lpn)
            && v != m.version
        {
            return Err(VerifyError {
                lpn: m.lpn,
                at: self.now,
                arrival: self.now,
                got: super::tag_of(m.lpn, m.version),
                expected: super::tag_of(m.lpn, v),
            }
            .into());
        }
        Ok(())
    }

    /// Reallocation write `tx` at position `pos` of `die`'s write queue is about to be
    /// issued: if its page changed since its read, take it off the queue and drop it
    /// (true); otherwise check (verify mode) that it carries the latest version.
    pub(super) fn realloc_write_dropped(&mut self, die: DieId, pos: u32, tx: &Txn) -> Result<bool, RunError> {
        if !self.realloc_stale(tx.link) {
            self.realloc_check(tx.link)?;
            return Ok(false);
        }
        let id = self.ctl.dies[die.idx()].queues.writes.remove(pos as usize).expect("queued write").id;
        self.pend_remove(id);
        self.ctl.txns.remove(id);
        self.realloc_dropped(tx.link);
        Ok(true)
    }

    /// Migration `s`'s rewrite is programmed.
    pub(super) fn realloc_programmed(&mut self, s: u32) {
        let r = self.realloc.as_mut().expect("reallocation on");
        r.release(s);
        r.moved += 1;
    }
}
