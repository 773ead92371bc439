//! GFTL: a block-level FTL whose GC (block cleaning) runs in bounded partial steps
//! interleaved with host writes (Choudhuri and Givargis, "Deterministic service
//! guarantees for NAND flash using partial block cleaning", CODES+ISSS 2008; the partial-GC
//! baseline of pen-partial-erase §6.2.1, Fig. 12c). Our reading of it is in
//! `docs/ftl.md`, "GFTL"; what we had to choose is listed there.
//!
//! * **Mapping.** As NFTL ([`crate::NftlFtl`]): logical block `lb` owns a data block on
//!   its plane (striped by `ftl.striping_order`) holding its offsets in place, in
//!   ascending order (`Flash::fits_in_place` in the `blocks` module). An update that cannot go in
//!   place goes to the plane's **write buffer** — a log of buffer blocks shared by every
//!   logical block of the plane, page-mapped in controller RAM (so a read needs no
//!   spare-area scan) — and queues its logical block for **cleaning** (FIFO, once).
//! * **Cleaning** (GFTL's partial block cleaning): copy the current copy of every offset,
//!   in offset order, into a fresh block, then erase the old data block; the fresh block
//!   becomes the data block. A buffer block whose pages are all stale is erased. The work
//!   is cut into **steps** of at most `ftl.gftl_step_copies` (λ) page copies, or one
//!   erase; GFTL chooses λ = ⌊t_erase / (t_read + t_prog)⌋ so that no step is longer than
//!   an erase, the time it reserves per request (`for_device` derives it from the device's
//!   timing when the key is 0).
//! * **Interleaving.** Each host page write owes `ftl.gftl_steps_per_write` steps while
//!   cleaning work is pending (GFTL: one per request); [`Ftl::needs_gc`] holds while steps
//!   are owed, and each GC job is one step, so the engine runs them between host writes
//!   instead of one long merge. Host writes to a plane are refused only while one of its
//!   steps runs or it has fewer than two free blocks.
//! * **Writes during a cleaning.** A write to the logical block being cleaned goes to the
//!   buffer; if its offset was already copied, the block is queued for cleaning again.
//! * **Out of buffer.** If the plane's free blocks fall below the GC threshold, the
//!   guarantee's assumption (the buffer absorbs the writes of a cleaning) has failed: GC
//!   runs regardless of owed steps, each job a whole cleaning or a buffer-block erase
//!   (counted in [`FtlStats::gftl_forced_jobs`]), and host writes wait below two free
//!   blocks, as in NFTL.
//! * **Reserve.** Every cleaning starts with a free block (host writes leave at least one)
//!   and returns one (its old data block); every stale buffer page belongs to a queued or
//!   running cleaning, so draining the queue leaves the buffer all stale and erasable.

use std::collections::VecDeque;

use lamina_nand_model::{BlockId, DeviceSpec, Geometry, PlaneId, Ppa};

use crate::api::{BlockInfo, Ftl, FtlError, FtlStats, GcJob, GcStep, Lpn, PageCounts, WriteConstraint};
use crate::blocks::{Core, NONE, block_ftl_common};
use crate::config::{FtlConfig, FtlConfigError, FtlKind, ValidatedFtlConfig};

/// The block cleaning in progress on a plane.
#[derive(Clone, Copy, Debug)]
struct Cleaning {
    lb: u32,
    /// The data block being replaced.
    old: u32,
    /// The fresh data block (taken at the first copy; `NONE` if nothing was valid).
    dest: u32,
    /// The next offset to copy.
    next: u32,
}

/// The GC job (one partial step, or a forced whole cleaning) in progress on a plane.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Job {
    /// Erase stale buffer block `b`; `erased` once the erase was returned.
    Reclaim { b: u32, erased: bool },
    /// Advance the plane's cleaning: at most `copies_left` more copies; `partial` jobs end
    /// after their copies (the old block's erase is a step of its own), forced ones run
    /// the cleaning to its end; `erased` once the old block's erase was returned.
    Clean { copies_left: u32, copied: bool, partial: bool, erased: bool },
}

#[derive(Clone, Debug)]
struct PlaneState {
    /// Logical blocks waiting for cleaning, oldest first.
    queue: VecDeque<u32>,
    cleaning: Option<Cleaning>,
    /// The buffer block host updates append to (`NONE` if none).
    open: u32,
    /// Full buffer blocks, oldest first.
    closed: Vec<u32>,
    /// Partial-GC steps owed by host writes.
    credit: u32,
    job: Option<Job>,
}

impl Default for PlaneState {
    fn default() -> PlaneState {
        PlaneState {
            queue: VecDeque::new(),
            cleaning: None,
            open: NONE,
            closed: Vec::new(),
            credit: 0,
            job: None,
        }
    }
}

/// Block-level GFTL with a write buffer and partial block cleaning. See the
/// [module docs](self).
#[derive(Clone, Debug)]
pub struct GftlFtl {
    core: Core,
    /// Data block of each logical block (`NONE` if none).
    data: Vec<u32>,
    /// Logical block `lb` waits in its plane's cleaning queue.
    queued: Vec<bool>,
    /// Plane of logical block `lb` = `lb_planes[lb % planes]`.
    lb_planes: Box<[PlaneId]>,
    planes: Vec<PlaneState>,
    /// λ: page copies per partial step.
    step_copies: u32,
    /// Partial steps each host page write owes while cleaning work is pending.
    steps_per_write: u32,
}

impl GftlFtl {
    /// Build the FTL for `geometry`. Without the device's timing, `ftl.gftl_step_copies =
    /// 0` (derive λ) means one copy per step; the engine builds with
    /// [`GftlFtl::for_device`].
    pub fn new(geometry: Geometry, config: &FtlConfig) -> Result<GftlFtl, FtlConfigError> {
        let copies = config.gftl_step_copies.max(1);
        GftlFtl::build(geometry, config, copies)
    }

    /// Build the FTL for the device `spec` describes; `ftl.gftl_step_copies = 0` takes
    /// GFTL's λ = ⌊t_erase / (t_read + t_prog)⌋ (means over the pages of a block), at
    /// least 1.
    pub fn for_device(spec: &DeviceSpec, config: &FtlConfig) -> Result<GftlFtl, FtlConfigError> {
        let copies = match config.gftl_step_copies {
            0 => step_copies_for(spec),
            n => n,
        };
        GftlFtl::build(spec.geometry().clone(), config, copies)
    }

    fn build(geometry: Geometry, config: &FtlConfig, step_copies: u32) -> Result<GftlFtl, FtlConfigError> {
        let cfg = FtlConfig { kind: FtlKind::Gftl, ..config.clone() }.validate(&geometry)?;
        let logical_blocks = (cfg.logical_pages() / geometry.pages_per_block() as u64) as usize;
        let lb_planes = (0..geometry.total_planes() as u64)
            .map(|i| config.striping_order.plane_of(&geometry, i))
            .collect();
        Ok(GftlFtl {
            data: vec![NONE; logical_blocks],
            queued: vec![false; logical_blocks],
            lb_planes,
            planes: vec![PlaneState::default(); geometry.total_planes() as usize],
            step_copies,
            steps_per_write: config.gftl_steps_per_write,
            core: Core::new(geometry, cfg),
        })
    }

    /// The validated configuration (its logical pages are this FTL's).
    pub fn config(&self) -> &ValidatedFtlConfig {
        &self.core.cfg
    }

    /// λ, the page copies of one partial step.
    pub fn step_copies(&self) -> u32 {
        self.step_copies
    }

    /// The data block of logical block `lb`, if any.
    pub fn data_block(&self, lb: u64) -> Option<BlockId> {
        let d = self.data[lb as usize];
        (d != NONE).then_some(BlockId(d))
    }

    /// Partial-GC steps plane `plane` owes (host writes since the last steps ran).
    pub fn owed_steps(&self, plane: PlaneId) -> u32 {
        self.planes[self.core.flash.check_plane(plane)].credit
    }

    fn ppb(&self) -> u32 {
        self.core.flash.ppb
    }

    /// The plane of `lpn`'s logical block.
    fn unit_plane(&self, lpn: u64) -> PlaneId {
        let lb = lpn / self.ppb() as u64;
        self.lb_planes[lb as usize % self.lb_planes.len()]
    }

    fn job_running(&self, pi: usize) -> bool {
        self.planes[pi].job.is_some()
    }

    /// The plane's free pool is below the GC threshold: GC runs whatever is owed.
    fn starved(&self, pi: usize) -> bool {
        self.core.flash.free_count(pi) < self.core.cfg.gc_threshold_blocks()
    }

    /// A buffer block of plane `pi` with no valid page left to erase: a full one, or,
    /// when the plane is starved, the partly written open one.
    fn reclaimable(&self, pi: usize) -> Option<u32> {
        let flash = &self.core.flash;
        let p = &self.planes[pi];
        let stale = |b: u32| flash.blocks[b as usize].valid == 0;
        let open = p.open != NONE
            && flash.programmed(p.open) > 0
            && stale(p.open)
            && (flash.full(p.open) || self.starved(pi));
        p.closed.iter().copied().find(|&b| stale(b)).or(open.then_some(p.open))
    }

    /// Cleaning work is pending on plane `pi`.
    fn pending(&self, pi: usize) -> bool {
        let p = &self.planes[pi];
        p.cleaning.is_some() || !p.queue.is_empty() || self.reclaimable(pi).is_some()
    }

    fn gc_due(&self, pi: usize) -> bool {
        self.pending(pi) && (self.planes[pi].credit > 0 || self.starved(pi))
    }

    /// Queue logical block `lb` (of plane `pi`) for cleaning unless it waits already.
    fn enqueue(&mut self, pi: usize, lb: u32) {
        if !self.queued[lb as usize] {
            self.queued[lb as usize] = true;
            self.planes[pi].queue.push_back(lb);
        }
    }

    /// A host write the gate let through: in place in the data block, or appended to the
    /// write buffer (queueing the block for cleaning); then the steps it owes.
    fn host_write(&mut self, lpn: u64, pi: usize) -> Ppa {
        let b = self.target(lpn, pi);
        let ppa = self.core.flash.host_program(b, lpn);
        let owed =
            if self.pending(pi) { self.planes[pi].credit.saturating_add(self.steps_per_write) } else { 0 };
        self.planes[pi].credit = owed;
        ppa
    }

    /// The block a host write of `lpn` programs.
    fn target(&mut self, lpn: u64, pi: usize) -> u32 {
        let ppb = self.ppb();
        let (lb, offset) = ((lpn / ppb as u64) as u32, (lpn % ppb as u64) as u32);
        match self.planes[pi].cleaning {
            // Already copied: the block needs cleaning again.
            Some(c) if c.lb == lb => {
                if offset < c.next {
                    self.enqueue(pi, lb);
                }
            }
            _ => {
                let d = self.data[lb as usize];
                if d == NONE {
                    let d = self.core.flash.take_free(pi);
                    self.data[lb as usize] = d;
                    return d;
                }
                if self.core.flash.fits_in_place(d, lpn) {
                    return d;
                }
                self.enqueue(pi, lb);
            }
        }
        let p = &mut self.planes[pi];
        if p.open == NONE || self.core.flash.full(p.open) {
            if p.open != NONE {
                p.closed.push(p.open);
            }
            p.open = self.core.flash.take_free(pi);
        }
        p.open
    }

    /// The next step of plane `pi`'s job.
    fn job_step(&mut self, pi: usize) -> GcStep {
        match self.planes[pi].job.expect("a GFTL job runs") {
            Job::Reclaim { b, erased: false } => {
                self.planes[pi].job = Some(Job::Reclaim { b, erased: true });
                self.core.flash.erase(b)
            }
            Job::Clean { erased: false, .. } => self.clean_step(pi),
            Job::Reclaim { erased: true, .. } | Job::Clean { erased: true, .. } => {
                self.planes[pi].job = None;
                GcStep::Done
            }
        }
    }

    /// A copy of the running cleaning, or its old block's erase (which ends it), or
    /// `Done` when the job's share is used.
    fn clean_step(&mut self, pi: usize) -> GcStep {
        let Some(Job::Clean { copies_left, copied, partial, .. }) = self.planes[pi].job else {
            unreachable!("clean_step without a cleaning job")
        };
        let mut c = self.planes[pi].cleaning.expect("a cleaning job has a cleaning");
        let base = c.lb as u64 * self.ppb() as u64;
        match self.core.flash.next_mapped(base, c.next) {
            Some(k) if copies_left > 0 => {
                if c.dest == NONE {
                    c.dest = self.core.flash.take_free(pi);
                }
                let step = self.core.flash.move_page(base + k as u64, c.dest);
                c.next = k + 1;
                self.planes[pi].cleaning = Some(c);
                self.planes[pi].job =
                    Some(Job::Clean { copies_left: copies_left - 1, copied: true, partial, erased: false });
                step
            }
            // The step's copies are made; the rest (or the erase) is a later step.
            Some(_) => self.end_job(pi),
            None if copied && partial => self.end_job(pi),
            None => {
                // Everything copied: erase the old block; the fresh one takes its place.
                self.data[c.lb as usize] = c.dest;
                self.planes[pi].cleaning = None;
                self.planes[pi].job = Some(Job::Clean { copies_left, copied, partial, erased: true });
                self.core.flash.erase(c.old)
            }
        }
    }

    fn end_job(&mut self, pi: usize) -> GcStep {
        self.planes[pi].job = None;
        GcStep::Done
    }
}

/// GFTL's λ for `spec`: ⌊t_erase / (t_read + t_prog)⌋, the copies that fit the time of
/// one erase (array times averaged over the pages of a block), at least 1.
pub fn step_copies_for(spec: &DeviceSpec) -> u32 {
    let t = spec.timing();
    let ppb = spec.geometry().pages_per_block();
    let copy_sum: u64 = (0..ppb).map(|p| t.read_array(p).0 + t.program_array(p).0).sum();
    let copy_ns = (copy_sum / ppb as u64).max(1);
    ((t.t_bers.0 / copy_ns).max(1)).min(u32::MAX as u64) as u32
}

impl Ftl for GftlFtl {
    block_ftl_common!(own_gc_trigger);

    /// Steps are owed and cleaning work is pending, or the plane is starved.
    fn needs_gc(&self, plane: PlaneId) -> bool {
        self.gc_due(self.core.flash.check_plane(plane))
    }

    /// One partial step (paid from the steps host writes owe), or, on a starved plane, a
    /// whole cleaning or a buffer-block erase.
    fn gc_begin(&mut self, plane: PlaneId) -> Option<GcJob> {
        let pi = self.core.flash.check_plane(plane);
        assert!(self.planes[pi].job.is_none(), "gc_begin on plane {} while a step is in progress", plane.0);
        if !self.gc_due(pi) {
            return None;
        }
        let partial = !self.starved(pi);
        let stats = &mut self.core.flash.stats;
        stats.gc_jobs += 1;
        if partial {
            self.planes[pi].credit -= 1;
            stats.gftl_steps += 1;
        } else {
            stats.gftl_forced_jobs += 1;
        }
        if let Some(b) = self.reclaimable(pi) {
            let p = &mut self.planes[pi];
            if p.open == b {
                p.open = NONE;
            } else {
                p.closed.retain(|&x| x != b);
            }
            p.job = Some(Job::Reclaim { b, erased: false });
            let invalid = self.core.flash.programmed(b);
            return Some(GcJob { victim: BlockId(b), valid_pages: 0, invalid_pages: invalid });
        }
        if self.planes[pi].cleaning.is_none() {
            let lb = self.planes[pi].queue.pop_front().expect("pending work is a cleaning");
            self.queued[lb as usize] = false;
            let old = self.data[lb as usize];
            assert!(old != NONE, "logical block {lb} queued for cleaning without a data block");
            self.planes[pi].cleaning = Some(Cleaning { lb, old, dest: NONE, next: 0 });
            self.core.flash.stats.gftl_cleanings += 1;
        }
        let copies_left = if partial { self.step_copies } else { u32::MAX };
        self.planes[pi].job = Some(Job::Clean { copies_left, copied: false, partial, erased: false });
        let c = self.planes[pi].cleaning.expect("a cleaning runs");
        let m = &self.core.flash.blocks[c.old as usize];
        Some(GcJob {
            victim: BlockId(c.old),
            valid_pages: m.valid,
            invalid_pages: self.core.flash.programmed(c.old) - m.valid,
        })
    }

    /// None: the buffer's page map is in controller RAM (GFTL).
    fn has_translation_reads(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::GcThreshold;

    /// One plane of 8 blocks × 4 pages; 6 logical blocks (24 LPNs), 2 spare blocks; λ = 2.
    fn small(steps_per_write: u32) -> GftlFtl {
        let g = crate::testing::slc_geometry(1, 1, 1, 1, 8, 4);
        let c = FtlConfig {
            kind: FtlKind::Gftl,
            overprovisioning: 0.25,
            gc_threshold: GcThreshold::FreeBlocks(2),
            gftl_step_copies: 2,
            gftl_steps_per_write: steps_per_write,
            ..FtlConfig::default()
        };
        GftlFtl::new(g, &c).unwrap()
    }

    /// Run one GC job of plane 0; its steps.
    fn job(ftl: &mut GftlFtl) -> Vec<GcStep> {
        crate::blocks::run_one_job(ftl, PlaneId(0))
    }

    fn moves(steps: &[GcStep]) -> Vec<(u64, u64)> {
        steps
            .iter()
            .filter_map(|s| match *s {
                GcStep::Move { lpn, to, .. } => Some((lpn.0, to.0)),
                _ => None,
            })
            .collect()
    }

    /// An update goes to the buffer and queues its block; each host write then owes one
    /// step; a step copies at most λ = 2 pages or erases; the cleaning interleaves with
    /// further host writes and ends with the old block erased and the fresh one in its
    /// place; the stale buffer block is then erased by a step of its own.
    #[test]
    fn a_cleaning_runs_in_bounded_steps_between_host_writes() {
        let mut ftl = small(1);
        let p = PlaneId(0);
        for l in 0..4 {
            assert_eq!(ftl.write(Lpn(l), p).unwrap(), Ppa(l)); // block 0 in place
        }
        assert!(!ftl.needs_gc(p), "nothing to clean");
        assert_eq!(ftl.write(Lpn(1), p).unwrap(), Ppa(4), "an update goes to the buffer (block 1)");
        assert_eq!(ftl.owed_steps(p), 1);
        assert!(ftl.needs_gc(p) && ftl.can_write(p));
        // Step 1: two copies (offsets 0 and 1) into the fresh block 2.
        assert_eq!(moves(&job(&mut ftl)), [(0, 8), (1, 9)]);
        assert!(!ftl.needs_gc(p), "the write's step is paid");
        // A host write of another block in between: in place, owes the next step.
        assert_eq!(ftl.write(Lpn(4), p).unwrap(), Ppa(12));
        assert_eq!(moves(&job(&mut ftl)), [(2, 10), (3, 11)]);
        ftl.write(Lpn(5), p).unwrap();
        // Step 3: the old data block's erase; block 2 is the data block now.
        assert_eq!(job(&mut ftl), [GcStep::Erase { block: BlockId(0), batch_with_next: false }]);
        assert_eq!(ftl.data_block(0), Some(BlockId(2)));
        // The buffer block is stale but open: erased only if the plane is starved.
        assert!(!ftl.needs_gc(p));
        assert_eq!(ftl.lookup(Lpn(1)), Some(Ppa(9)));
        let s = ftl.stats();
        assert_eq!(
            (s.gftl_cleanings, s.gftl_steps, s.gftl_forced_jobs, s.gc_moves, s.erases),
            (1, 3, 0, 4, 1)
        );
    }

    /// A write of the block being cleaned goes to the buffer; at an offset already copied
    /// it queues the block again, at one not yet copied the cleaning takes the new copy.
    #[test]
    fn writes_during_a_cleaning_are_not_lost() {
        let mut ftl = small(1);
        let p = PlaneId(0);
        for l in [0, 1, 2, 3, 0] {
            ftl.write(Lpn(l), p).unwrap(); // 0 updated: buffer page 4
        }
        assert_eq!(moves(&job(&mut ftl)), [(0, 8), (1, 9)]);
        assert_eq!(ftl.write(Lpn(3), p).unwrap(), Ppa(5), "not yet copied: to the buffer");
        assert_eq!(moves(&job(&mut ftl)), [(2, 10), (3, 11)], "the cleaning copies the new copy of 3");
        assert_eq!(ftl.write(Lpn(0), p).unwrap(), Ppa(6), "already copied: buffer, queued again");
        job(&mut ftl); // the erase of block 0
        assert_eq!(ftl.planes[0].queue, [0]);
        ftl.write(Lpn(9), p).unwrap();
        assert_eq!(moves(&job(&mut ftl)), [(0, 16), (1, 17)], "the second cleaning, into block 4");
        for l in 0..4 {
            assert!(ftl.lookup(Lpn(l)).is_some());
        }
    }

    /// With the buffer exhausted (fewer free blocks than the GC threshold) GC runs
    /// without owed steps, each job a whole cleaning, and the stale buffer blocks are
    /// erased, until host writes can go on.
    #[test]
    fn a_starved_plane_cleans_whole_blocks_until_writes_fit() {
        let mut ftl = small(0); // no steps owed: only starvation runs GC
        let p = PlaneId(0);
        for l in 0..24 {
            ftl.write(Lpn(l), p).unwrap(); // 6 data blocks, 2 free
        }
        let mut refused = 0;
        for i in 0..40u64 {
            let lpn = Lpn(i * 4 % 24);
            loop {
                match ftl.write(lpn, p) {
                    Ok(_) => break,
                    Err(FtlError::NoFreePage { .. }) => {
                        refused += 1;
                        assert!(ftl.needs_gc(p));
                        while ftl.needs_gc(p) {
                            job(&mut ftl);
                        }
                    }
                    Err(e) => panic!("{e}"),
                }
            }
        }
        let s = ftl.stats();
        assert!(refused > 0 && s.gftl_forced_jobs > 0 && s.gftl_steps == 0, "{s:?}");
        assert!(s.gftl_cleanings > 0 && s.erases > s.gftl_cleanings, "buffer blocks were erased too: {s:?}");
    }

    #[test]
    fn lambda_fits_one_erase_time() {
        let spec = lamina_nand_model::preset("pen").unwrap().validate().unwrap();
        let t = spec.timing();
        let lambda = step_copies_for(&spec) as u64;
        let ppb = spec.geometry().pages_per_block();
        let copy: u64 = (0..ppb).map(|p| t.read_array(p).0 + t.program_array(p).0).sum::<u64>() / ppb as u64;
        assert!(lambda * copy <= t.t_bers.0 && (lambda + 1) * copy > t.t_bers.0, "λ = {lambda}");
    }
}
