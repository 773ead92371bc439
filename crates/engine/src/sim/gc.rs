//! The GC driver: which planes have a garbage-collection job, starting jobs, and issuing
//! their steps. A job is keyed by the plane the FTL reclaims (`gc_begin(plane)`) and
//! queued on that plane's die, where the scheduler sees it; each step's NAND operations
//! run on the die(s) its addresses touch (a move may read on one die and program on
//! another).

use lamina_ftl::GcStep;
use lamina_nand_model::{Command, DieId, Geometry, OpTiming, PageAddr, PlaneId, SimTime};
use lamina_sched::GcJobRef;

use super::controller::{PeKind, Phases, SPARE_READ_BYTES};
use super::{RunError, Simulation, pb_of_range};
use crate::stats::OpKind;

/// The GC driver's state.
pub(crate) struct GcDriver {
    /// Per plane: a job is queued or running.
    active: Vec<bool>,
    /// Die time of the GC commands issued, by kind.
    pub(crate) time: GcTime,
    /// The FTL's first internal logical page: a moved page at or above it is a cached
    /// mapping's translation page (`ftl::page::cached`).
    translation_base: u64,
}

impl GcDriver {
    pub(crate) fn new(geo: &Geometry, ftl_logical_pages: u64) -> GcDriver {
        GcDriver {
            active: vec![false; geo.total_planes() as usize],
            time: GcTime::default(),
            translation_base: ftl_logical_pages,
        }
    }
}

/// Die time of the GC commands issued, by kind (each command from the start of its
/// first bus phase to its completion; a multi-plane command counts once, a move across
/// dies its read and its program). The report's `gc.time`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct GcTime {
    /// Page copies (moves, copybacks, first programs of translation pages).
    pub copies_ns: u64,
    /// Whole-block erases.
    pub erases_ns: u64,
    /// Partial-block erases.
    pub partial_erases_ns: u64,
    /// Spare-area reads of merges ([`GcStep::SpareRead`]).
    pub spare_reads_ns: u64,
    /// Spare-area reads issued.
    pub spare_reads: u64,
    /// Cached mapping: die time of the commands that wrote translation pages — write-backs
    /// (read-modify-write moves, first programs) and GC relocations of translation pages.
    /// Also in `copies_ns`. A multi-plane move that carries data pages too is charged by
    /// its share of translation pages.
    pub translation_write_ns: u64,
}

/// Where a move without copy-back taken after `earlier` (this dispatch's steps) reads
/// page `from`: if an earlier move of the dispatch programs `from`, that move's own
/// source. The dispatch issues its reads before its programs, so `from` is still erased
/// when the read is issued; the earlier source holds the same data and is not erased
/// before the dispatch's reads (its block's erase, if in the dispatch, comes after
/// them). It happens with the cached mapping: GC relocates a translation page and, in
/// the same dispatch, another plane's write-back job reads it for its
/// read-modify-write (cached-mapping swarm seed 28268; docs/model.md, "GC steps").
fn source_of(earlier: &[Work], from: PageAddr) -> PageAddr {
    earlier
        .iter()
        .rev()
        .find_map(|w| match *w {
            Work::Move { from: src, to, .. } if to == from => Some(src),
            _ => None,
        })
        .unwrap_or(from)
}

/// One step taken from a job, waiting to be grouped into commands.
#[derive(Clone, Copy, Debug)]
enum Work {
    Move {
        from: PageAddr,
        to: PageAddr,
        copyback: bool,
        /// The page is a cached mapping's translation page.
        translation: bool,
    },
    /// A program without a source ([`GcStep::Program`]: a translation page's first
    /// write-back).
    Program {
        to: PageAddr,
    },
    Erase {
        block: PageAddr,
    },
    PartialErase {
        block: PageAddr,
        pb: u32,
    },
    SpareRead {
        page: PageAddr,
    },
}

impl Simulation {
    /// True if a GC job for `plane` is queued or running.
    #[inline]
    pub(super) fn gc_queued(&self, plane: PlaneId) -> bool {
        self.gc.active[plane.idx()]
    }

    /// True if `plane` has free blocks above the GC threshold, or a GC job (running, or
    /// started now) that will free some.
    pub(super) fn can_take_writes(&mut self, plane: PlaneId) -> bool {
        if !self.ftl.needs_gc(plane) {
            return true;
        }
        self.maybe_start_gc(plane);
        self.gc_queued(plane)
    }

    /// Start a GC job on `plane` if it needs one and has none.
    pub(super) fn maybe_start_gc(&mut self, plane: PlaneId) {
        if !self.ftl.needs_gc(plane) || self.gc_queued(plane) {
            return;
        }
        let die = self.geo.die_of_plane(plane);
        if self.ftl.gc_begin(plane).is_some() {
            let seq = self.ctl.next_seq();
            self.gc.active[plane.idx()] = true;
            let queued_before = self.ctl.dies[die.idx()].queues.gc.len();
            self.ctl.dies[die.idx()].queues.gc.push_back(GcJobRef { plane, seq });
            self.touch_lazy(die);
            self.wake_for_gc(die);
            if self.gc_timeline.is_some() {
                self.note_gc_job_started(die, plane, queued_before);
            }
        }
    }

    /// [`crate::gc_timeline::GcTimeline::job_started`] for a job of `plane` just queued on `die`.
    #[cold]
    fn note_gc_job_started(&mut self, die: DieId, plane: PlaneId, queued_before: usize) {
        let first = self.geo.plane_of_die(die, 0).0;
        let siblings_waiting = (first..first + self.geo.planes_per_die())
            .map(PlaneId)
            .filter(|&q| q != plane && !self.gc.active[q.idx()] && self.ftl.needs_gc(q))
            .count() as u32;
        if let Some(tl) = self.gc_timeline.as_deref_mut() {
            tl.job_started(self.now, die, queued_before, siblings_waiting);
        }
    }

    /// The job of `plane` on `die` ended.
    fn gc_job_done(&mut self, die: DieId, plane: PlaneId) {
        let q = &mut self.ctl.dies[die.idx()].queues.gc;
        let pos = q.iter().position(|j| j.plane == plane).expect("ended job is queued");
        q.remove(pos);
        self.gc.active[plane.idx()] = false;
        // The plane may still be short of free blocks.
        self.maybe_start_gc(plane);
        if self.ctl.dies[die.idx()].queues.gc.is_empty() {
            if let Some(tl) = self.gc_timeline.as_deref_mut() {
                tl.queue_emptied(self.now, die);
            }
            // No GC left to wait for: a stalled write retries (and fails with the FTL's
            // error if the device is truly out of space).
            self.ctl.dies[die.idx()].write_stalled = false;
        }
    }

    /// Take the next step of each picked GC job of `die` (positions in its GC queue) and
    /// issue them, steps of different planes that align as multi-plane commands.
    /// Returns false if every job ended without issuing anything. Out of line: its
    /// fixed arrays would otherwise enlarge the stack frame of `dispatch`, which runs for
    /// every command.
    #[inline(never)]
    pub(super) fn issue_gc(&mut self, die: DieId, picks: &[u32]) -> Result<bool, RunError> {
        let mut planes = [PlaneId(0); super::controller::MAX_OP_TXNS];
        let n = picks.len().min(planes.len());
        for (i, &p) in picks.iter().take(n).enumerate() {
            planes[i] = self.ctl.dies[die.idx()].queues.gc[p as usize].plane;
        }
        let mut work = [Work::Erase { block: PageAddr::default() }; super::controller::MAX_OP_TXNS];
        let mut w = 0;
        for &plane in &planes[..n] {
            // A step the FTL marks `batch_with_next` is taken with the job's next step
            // (an FTL's own multi-plane move or multi-block erase), while room remains.
            loop {
                let batch = match self.ftl.gc_step(plane) {
                    GcStep::Done => {
                        self.gc_job_done(die, plane);
                        false
                    }
                    GcStep::Move { lpn, from, to, copyback, batch_with_next } => {
                        let translation = lpn.0 >= self.gc.translation_base;
                        let mut from = self.geo.addr(from);
                        if !copyback {
                            from = source_of(&work[..w], from);
                        }
                        work[w] = Work::Move { from, to: self.geo.addr(to), copyback, translation };
                        w += 1;
                        batch_with_next
                    }
                    GcStep::Program { to, .. } => {
                        work[w] = Work::Program { to: self.geo.addr(to) };
                        w += 1;
                        false
                    }
                    GcStep::Erase { block, batch_with_next } => {
                        work[w] = Work::Erase { block: self.geo.addr(self.geo.first_page(block)) };
                        w += 1;
                        batch_with_next
                    }
                    GcStep::PartialErase { block, range } => {
                        let pb = pb_of_range(self.geo.pages_per_block(), range);
                        work[w] = Work::PartialErase { block: self.geo.addr(self.geo.first_page(block)), pb };
                        w += 1;
                        false
                    }
                    GcStep::SpareRead { ppa } => {
                        work[w] = Work::SpareRead { page: self.geo.addr(ppa) };
                        w += 1;
                        false
                    }
                };
                if !batch || w == work.len() {
                    break;
                }
            }
            if w == work.len() {
                break;
            }
        }
        if w == 0 {
            return Ok(false);
        }
        // Group: each remaining step anchors a command joined by the later steps that
        // align with it (same kind, distinct planes, same block index and page).
        const MAX: usize = super::controller::MAX_OP_TXNS;
        let mut grouped = [work[0]; MAX];
        let mut bounds = [(0usize, 0usize); MAX];
        let (mut filled, mut groups) = (0, 0);
        let mut used = [false; MAX];
        for i in 0..w {
            if used[i] {
                continue;
            }
            used[i] = true;
            let start = filled;
            grouped[filled] = work[i];
            filled += 1;
            let mut mask = 1u64 << plane_of(&work[i]);
            for j in i + 1..w {
                if !used[j] && mask >> plane_of(&work[j]) & 1 == 0 && aligned(&work[i], &work[j]) {
                    used[j] = true;
                    mask |= 1 << plane_of(&work[j]);
                    grouped[filled] = work[j];
                    filled += 1;
                }
            }
            bounds[groups] = (start, filled);
            groups += 1;
        }
        // Reads first: the device suspends whatever program or erase runs on a die when
        // a read arrives (if its rules allow), so a read issued behind a program or erase
        // of this same dispatch would suspend the controller's own work a moment after
        // issuing it. A controller issues the dispatch's reads, then its programs and
        // erases (docs/model.md, "GC steps").
        let mut reads = [None; MAX];
        let mut busy = DieBusy { die, end: self.now };
        for (g, &(s, e)) in bounds[..groups].iter().enumerate() {
            reads[g] = self.issue_gc_reads(&grouped[s..e], &mut busy)?;
        }
        for (g, &(s, e)) in bounds[..groups].iter().enumerate() {
            self.issue_gc_group(&grouped[s..e], reads[g], &mut busy)?;
        }
        Ok(true)
    }

    /// Account for GC read `t`'s suspension of a program/erase, if it caused one.
    fn note_gc_read(&mut self, t: &OpTiming) {
        if t.suspended.is_some()
            && let Some(tl) = self.gc_timeline.as_deref_mut()
        {
            tl.gc_read_suspended();
        }
        self.note_suspension(t);
    }

    /// Issue the read part of one group of aligned GC steps: the read of a move without
    /// copy-back (its timing, for [`Self::issue_gc_group`] to program after), or a spare
    /// read (whole; `None`). Nothing for the other kinds.
    fn issue_gc_reads(&mut self, group: &[Work], busy: &mut DieBusy) -> Result<Option<OpTiming>, RunError> {
        let n = group.len();
        match group[0] {
            Work::Move { copyback: false, .. } => {
                let mut a = [PageAddr::default(); super::controller::MAX_OP_TXNS];
                for (i, s) in group.iter().enumerate() {
                    let Work::Move { from, .. } = *s else { unreachable!("grouped by kind") };
                    a[i] = from;
                }
                let ps = self.page_size;
                let r = self
                    .device
                    .issue(self.now, &Command::Read { pages: &a[..n], offset_bytes: 0, len_bytes: ps })
                    .map_err(|e| self.nand(e))?;
                self.note_gc_read(&r);
                self.ctl.counters.gc_reads += n as u64;
                let die = self.geo.die_id(a[0]);
                self.note_command(die, OpKind::Read, n as u32, 0);
                busy.bump(die, r.done);
                Ok(Some(r))
            }
            Work::SpareRead { page } => {
                // As a host lookup's translation read: the page's spare-area bytes.
                let die = self.geo.die_id(page);
                let len = SPARE_READ_BYTES.min(self.page_size);
                let t = self
                    .device
                    .issue(self.now, &Command::Read { pages: &[page], offset_bytes: 0, len_bytes: len })
                    .map_err(|e| self.nand(e))?;
                self.note_gc_read(&t);
                self.note_command(die, OpKind::Read, 1, 0);
                self.gc.time.spare_reads_ns += t.done.saturating_since(t.start).0;
                self.gc.time.spare_reads += 1;
                self.note_gc_busy(die, t.start, t.done);
                self.new_op(die, t.done, &[], None, Phases::of(&t));
                busy.bump(die, t.done);
                Ok(None)
            }
            _ => Ok(None),
        }
    }

    /// Issue the rest of one group of aligned GC steps as one command: a move's program
    /// (after `read`, its read from [`Self::issue_gc_reads`]) or copy-back, a program,
    /// an erase.
    fn issue_gc_group(
        &mut self,
        group: &[Work],
        read: Option<OpTiming>,
        busy: &mut DieBusy,
    ) -> Result<(), RunError> {
        let n = group.len();
        let mut a = [PageAddr::default(); super::controller::MAX_OP_TXNS];
        let mut b = [PageAddr::default(); super::controller::MAX_OP_TXNS];
        let mut tags = [0u64; super::controller::MAX_OP_TXNS];
        match group[0] {
            Work::Move { copyback, .. } => {
                let mut translation = 0u64;
                for (i, s) in group.iter().enumerate() {
                    let Work::Move { from, to, translation: tp, .. } = *s else {
                        unreachable!("grouped by kind")
                    };
                    a[i] = from;
                    b[i] = to;
                    tags[i] = self.device.tag(self.geo.ppa(from)).unwrap_or(0);
                    translation += u64::from(tp);
                }
                let copies_before = self.gc.time.copies_ns;
                let (from_die, to_die) = (self.geo.die_id(a[0]), self.geo.die_id(b[0]));
                let (first, done) = if copyback {
                    let t = self
                        .device
                        .issue(self.now, &Command::CopyBack { from: &a[..n], to: &b[..n] })
                        .map_err(|e| self.nand(e))?;
                    self.note_command(from_die, OpKind::CopyBack, n as u32, 0);
                    self.gc.time.copies_ns += t.done.saturating_since(t.start).0;
                    (t, t.done)
                } else {
                    let r = read.expect("a move without copy-back has its read issued first");
                    let not_before = if to_die == from_die { self.now } else { r.done };
                    let p = self
                        .device
                        .issue_after(
                            self.now,
                            not_before,
                            &Command::Program { pages: &b[..n], tags: &tags[..n] },
                        )
                        .map_err(|e| self.nand(e))?;
                    self.note_command(to_die, OpKind::Program, n as u32, 0);
                    // Die time: the read, and the program from when the die was done with
                    // what this dispatch issued before it (the read alone, unless other
                    // groups' reads or programs ran in between: they count as theirs).
                    let program_from = if to_die == from_die { r.done.max(busy.end) } else { p.start };
                    self.gc.time.copies_ns +=
                        r.done.saturating_since(r.start).0 + p.done.saturating_since(program_from).0;
                    if to_die != from_die {
                        // The read occupies its own die until its data is out.
                        self.note_gc_busy(from_die, r.start, r.done);
                        self.new_op(from_die, r.done, &[], None, Phases::of(&r));
                        (p, p.done)
                    } else {
                        (r, p.done)
                    }
                };
                let ns = self.gc.time.copies_ns - copies_before;
                self.gc.time.translation_write_ns += ns * translation / n as u64;
                self.ctl.dies[to_die.idx()].writes_done += n as u64;
                self.note_gc_busy(to_die, first.start, done);
                self.new_op(to_die, done, &[], Some(PeKind::Program), Phases::of(&first));
                busy.bump(to_die, done);
            }
            Work::Program { .. } => {
                for (i, s) in group.iter().enumerate() {
                    let Work::Program { to } = *s else { unreachable!("grouped by kind") };
                    b[i] = to;
                }
                let die = self.geo.die_id(b[0]);
                let p = self
                    .device
                    .issue(self.now, &Command::Program { pages: &b[..n], tags: &tags[..n] })
                    .map_err(|e| self.nand(e))?;
                self.note_command(die, OpKind::Program, n as u32, 0);
                self.gc.time.copies_ns += p.done.saturating_since(p.start).0;
                // Only a translation page's first write-back programs without a source.
                self.gc.time.translation_write_ns += p.done.saturating_since(p.start).0;
                self.ctl.dies[die.idx()].writes_done += n as u64;
                self.note_gc_busy(die, p.start, p.done);
                self.new_op(die, p.done, &[], Some(PeKind::Program), Phases::of(&p));
                busy.bump(die, p.done);
            }
            Work::Erase { .. } => {
                for (i, s) in group.iter().enumerate() {
                    let Work::Erase { block } = *s else { unreachable!("grouped by kind") };
                    a[i] = block;
                }
                let die = self.geo.die_id(a[0]);
                let t = self
                    .device
                    .issue(self.now, &Command::Erase { blocks: &a[..n] })
                    .map_err(|e| self.nand(e))?;
                self.note_command(die, OpKind::Erase, n as u32, 0);
                self.gc.time.erases_ns += t.done.saturating_since(t.start).0;
                self.note_gc_busy(die, t.start, t.done);
                self.new_op(die, t.done, &[], Some(PeKind::Erase), Phases::of(&t));
                busy.bump(die, t.done);
            }
            Work::PartialErase { block, pb } => {
                let die = self.geo.die_id(block);
                let t = self
                    .device
                    .issue(self.now, &Command::PartialErase { block, pb })
                    .map_err(|e| self.nand(e))?;
                self.note_command(die, OpKind::PartialErase, 1, 0);
                self.gc.time.partial_erases_ns += t.done.saturating_since(t.start).0;
                self.note_gc_busy(die, t.start, t.done);
                self.new_op(die, t.done, &[], Some(PeKind::Erase), Phases::of(&t));
                busy.bump(die, t.done);
            }
            // Issued whole with the dispatch's reads.
            Work::SpareRead { .. } => {}
        }
        Ok(())
    }
}

/// When the dispatch's die is done with the GC commands issued on it so far in one
/// dispatch (for the die time of a move whose program waits behind other groups).
struct DieBusy {
    die: DieId,
    end: SimTime,
}

impl DieBusy {
    fn bump(&mut self, die: DieId, done: SimTime) {
        if die == self.die {
            self.end = self.end.max(done);
        }
    }
}

/// The plane index within its die of a step's (first) address.
fn plane_of(w: &Work) -> u32 {
    match *w {
        Work::Move { from, .. } => from.plane,
        Work::Program { to } => to.plane,
        Work::Erase { block } | Work::PartialErase { block, .. } => block.plane,
        Work::SpareRead { page } => page.plane,
    }
}

/// True if steps `x` and `y` (on distinct planes) can run as one multi-plane command.
fn aligned(x: &Work, y: &Work) -> bool {
    let same_die = |p: PageAddr, q: PageAddr| (p.channel, p.chip, p.die) == (q.channel, q.chip, q.die);
    match (*x, *y) {
        (
            Work::Move { from: f1, to: t1, copyback: c1, .. },
            Work::Move { from: f2, to: t2, copyback: c2, .. },
        ) => {
            c1 == c2
                && same_die(f1, f2)
                && same_die(t1, t2)
                && f1.block == f2.block
                && f1.page == f2.page
                && t1.block == t2.block
                && t1.page == t2.page
                && f1.plane == t1.plane
                && f2.plane == t2.plane
        }
        (Work::Erase { block: b1 }, Work::Erase { block: b2 }) => same_die(b1, b2) && b1.block == b2.block,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(plane: u32, block: u32, page: u32) -> PageAddr {
        PageAddr { plane, block, page, ..PageAddr::default() }
    }

    fn mv(from: PageAddr, to: PageAddr) -> Work {
        Work::Move { from, to, copyback: false, translation: true }
    }

    #[test]
    fn a_move_from_a_page_this_dispatch_programs_reads_that_moves_source() {
        let (a, b, c, d) = (page(1, 9, 7), page(1, 10, 0), page(0, 4, 1), page(0, 5, 2));
        // Untouched pages read where they are.
        assert_eq!(source_of(&[], b), b);
        assert_eq!(source_of(&[mv(a, b)], d), d);
        // B is programmed by the first move: read A.
        assert_eq!(source_of(&[mv(a, b)], b), a);
        // A chain (A→B, then B→C, read as A→C): C's reader reads A too.
        let chain = [mv(a, b), mv(source_of(&[mv(a, b)], b), c)];
        assert_eq!(source_of(&chain, c), a);
        // A first program has no source to read instead: not a move, not matched.
        assert_eq!(source_of(&[Work::Program { to: b }], b), b);
    }
}
