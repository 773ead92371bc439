//! The remapping room (`[remap]`, docs/policies.md "Remapping (Micropages)"): turns
//! [`RemapTable`]'s decisions into flash work. A copy is real flash work — one read per
//! member (partial, its units only) and, after the last, one program of the remap page
//! (an FTL-internal logical page above the host's space, so the FTL maps it and GC moves
//! it like any page). A host read of a remapped unit is queued on the remap page; later
//! reads of the same page join it while it is queued (one flash read serves them all),
//! and reads arriving once it is issued wait for it and take their bytes from the die's
//! page register (`remap.join_in_flight`: one sensing, then one more data output).

use lamina_nand_model::{DieId, Lpn, PlaneId};
use lamina_sched::TxnKind;

use super::controller::Txn;
use super::{NIL, RunError, Simulation, VerifyError};
use crate::remap::RemapTable;
use crate::stats::Attribution;

impl Simulation {
    /// A host partial read of `len` bytes at `offset` of `lpn` (mapped) goes
    /// to flash: feed the detector (a copy may start) and serve the read from its remap
    /// page if it has one. Returns false if the read is the caller's to queue as usual.
    #[inline(never)]
    pub(super) fn remap_read(&mut self, req: u32, lpn: u64, offset: u32, len: u32) -> Result<bool, RunError> {
        let r = self.remap.as_mut().expect("remap on");
        let copy = r.observe(self.now, lpn, offset, len);
        // A page evicted to make room is unmapped before it is programmed again.
        self.remap_trim_freed();
        if let Some(page) = copy {
            self.start_copy(page)?;
        }
        let r = self.remap.as_mut().expect("remap on");
        let Some(rd) = r.redirect(lpn, offset, len) else { return Ok(false) };
        if let Some(v) = self.verifier.version(lpn) {
            // The copy must hold the latest programmed version of the units it serves.
            let m = r.page(rd.page).members[rd.member as usize];
            if m.version != v {
                return Err(VerifyError {
                    lpn,
                    at: self.now,
                    arrival: self.arrival_of(req),
                    got: super::tag_of(lpn, m.version),
                    expected: super::tag_of(lpn, v),
                }
                .into());
            }
        }
        r.counters.hits += 1;
        let remap_lpn = r.lpn_of(rd.page);
        let queued = r.page(rd.page).queued_read;
        if queued != NIL {
            // Join the queued read of the same remap page: widen its byte range to cover
            // this read's too; this request's page completes with it.
            r.counters.merged += 1;
            r.page_mut(rd.page).joiners.push(req);
            let t = self.ctl.txns.get_mut(queued);
            let end = (t.offset + t.len).max(rd.offset + len);
            t.offset = t.offset.min(rd.offset);
            t.len = end - t.offset;
            let (die, offset, len, translating) = (t.die, t.offset, t.len, t.translating);
            // The scheduler sees the queue's copy (SOML checks bit-lines on it). A read in
            // its translation step (a block-mapped FTL's spare-area reads) is out of its
            // queue until they finish, and is queued again from its record, widened above
            // (swarm seed 21235: this looked for it in the queue and panicked).
            let q = &mut self.ctl.dies[die.idx()].queues.reads;
            match q.iter_mut().find(|e| e.id == queued) {
                Some(e) => {
                    e.offset = offset;
                    e.len = len;
                }
                None => debug_assert!(translating > 0, "a queued remap read is queued or translating"),
            }
            self.pend_refresh(queued);
            self.mark_start(req);
            return Ok(true);
        }
        if self.cfg.remap.join_in_flight && !r.page(rd.page).flights.is_empty() {
            // A read of the page is already sensing or sending: wait for it, then take
            // these bytes from the page register (`serve_late_reads`).
            r.counters.joined_in_flight += 1;
            let p = r.page_mut(rd.page);
            p.late.push(req);
            p.late_range = (p.late_range.0.min(rd.offset), p.late_range.1.max(rd.offset + len));
            return Ok(true);
        }
        r.pin(rd.page);
        let ppa = self.ftl.lookup(Lpn(remap_lpn)).expect("a live remap page is mapped");
        let plane = self.geo.plane_of_ppa(ppa);
        let die = self.geo.die_of_plane(plane);
        let mut t = Txn::new(TxnKind::Read, remap_lpn, req, die, plane, rd.offset, len);
        t.link = rd.page << 8;
        self.push_txn(&mut t)?;
        Ok(true)
    }

    /// Start the copy of remap page `page`: read each live member's units from where its
    /// logical page lives now.
    fn start_copy(&mut self, page: u32) -> Result<(), RunError> {
        let ub = self.geo.partial_read_bytes();
        let n = self.remap.as_ref().expect("remap on").page(page).n;
        for i in 0..n {
            let m = self.remap.as_ref().expect("remap on").page(page).members[i as usize];
            let Some(ppa) = self.ftl.lookup(Lpn(m.lpn)) else {
                // Trimmed since it was read: nothing to copy, and the (unwritten) page
                // must not be served from the copy.
                self.remap.as_mut().expect("remap on").invalidate(m.lpn);
                self.remap_copy_read_done(page)?;
                continue;
            };
            let plane = self.geo.plane_of_ppa(ppa);
            let die = self.geo.die_of_plane(plane);
            let mut t =
                Txn::new(TxnKind::Read, m.lpn, NIL, die, plane, m.u0 as u32 * ub, m.units as u32 * ub);
            t.link = (page << 8) | i as u32;
            self.push_txn(&mut t)?;
        }
        Ok(())
    }

    /// A copy read of member `link & 0xff` of remap page `link >> 8` is issued (verify
    /// mode): record the version it returns.
    pub(super) fn remap_copy_read_issued(&mut self, lpn: u64, link: u32) {
        let v = self.verifier.version(lpn).unwrap_or(0);
        let r = self.remap.as_mut().expect("remap on");
        r.page_mut(link >> 8).members[(link & 0xff) as usize].version = v;
    }

    /// A copy read of remap page `page` completed; after the last, program the page.
    pub(super) fn remap_copy_read_done(&mut self, page: u32) -> Result<(), RunError> {
        let r = self.remap.as_mut().expect("remap on");
        if !r.copy_read_done(page) {
            return Ok(());
        }
        let lpn = r.lpn_of(page);
        let mut t = Txn::new(TxnKind::Write, lpn, NIL, DieId(0), PlaneId(0), 0, self.page_size);
        t.link = page << 8;
        self.place_and_push(t)
    }

    /// The program of remap page `page` completed.
    pub(super) fn remap_programmed(&mut self, page: u32) {
        self.remap.as_mut().expect("remap on").programmed(page);
        self.remap_trim_freed();
    }

    /// A redirected read (or register read) of remap page `link >> 8`, transaction
    /// sequence number `seq`, completed with attribution `a`: the reads that joined it
    /// while queued complete too (its own entry of the page's `flights`, not the joiners
    /// of a later read of the page queued meanwhile); the reads that joined it in flight
    /// get their bytes now; the page is no longer pinned by it.
    pub(super) fn remap_read_done(&mut self, link: u32, seq: u64, a: &Attribution) -> Result<(), RunError> {
        let page = link >> 8;
        let r = self.remap.as_mut().expect("remap on");
        let p = r.page_mut(page);
        let pos = p
            .flights
            .iter()
            .position(|f| f.0 == seq)
            .unwrap_or_else(|| panic!("remap page {page}: a read completed that was not in flight"));
        // Taken out first: a completion below admits the next queued host request at
        // once, whose read of this page may queue, and be joined by, a new read (swarm
        // seed 30818).
        let (_, joiners) = p.flights.remove(pos);
        for &req in &joiners {
            self.finish_sub(req, 1, a)?;
        }
        let r = self.remap.as_mut().expect("remap on");
        let p = r.page_mut(page);
        if p.flights.is_empty() && !p.late.is_empty() {
            // Pins the page for the waiting reads before this read unpins it.
            self.serve_late_reads(page)?;
        }
        self.remap.as_mut().expect("remap on").unpin(page);
        self.remap_trim_freed();
        Ok(())
    }

    /// The read of remap page `page` that reads joined in flight completed: one
    /// transaction serves them all (the first request's; the others finish with it as
    /// joiners) — a register read of their byte range if the die's page register still
    /// holds the page, else a flash read of its own, queued as usual.
    fn serve_late_reads(&mut self, page: u32) -> Result<(), RunError> {
        let r = self.remap.as_mut().expect("remap on");
        let remap_lpn = r.lpn_of(page);
        let p = r.page_mut(page);
        debug_assert!(p.joiners.is_empty() && p.queued_read == NIL);
        let (lo, hi) = std::mem::replace(&mut p.late_range, (u32::MAX, 0));
        let first = p.late[0];
        let mut late = std::mem::take(&mut p.late);
        p.joiners.extend_from_slice(&late[1..]);
        late.clear();
        p.late = late;
        r.pin(page);
        for i in 0..r.page(page).joiners.len() {
            // Their service starts now, with the transaction they finish with.
            let req = self.remap.as_ref().expect("remap on").page(page).joiners[i];
            self.mark_start(req);
        }
        let ppa = self.ftl.lookup(Lpn(remap_lpn)).expect("a pinned remap page is mapped");
        let plane = self.geo.plane_of_ppa(ppa);
        let die = self.geo.die_of_plane(plane);
        let mut t = Txn::new(TxnKind::Read, remap_lpn, first, die, plane, lo, hi - lo);
        t.link = page << 8;
        if self.device.register_holds(ppa, lo, hi - lo) {
            let r = self.remap.as_mut().expect("remap on");
            r.counters.register_reads += 1;
            let seq = self.issue_register_read(t, ppa)?;
            // The late readers but the first finish with the register read.
            let p = self.remap.as_mut().expect("remap on").page_mut(page);
            let joiners = std::mem::take(&mut p.joiners);
            p.flights.push((seq, joiners));
            Ok(())
        } else {
            self.remap.as_mut().expect("remap on").counters.register_misses += 1;
            self.push_txn(&mut t)
        }
    }

    /// Host page `lpn` is programmed or trimmed: its copies are stale.
    #[inline]
    pub(super) fn remap_invalidate(&mut self, lpn: u64) {
        if let Some(r) = self.remap.as_mut()
            && lpn < r.base()
        {
            r.invalidate(lpn);
            self.remap_trim_freed();
        }
    }

    /// Unmap the remap pages the table freed.
    fn remap_trim_freed(&mut self) {
        let r: &mut RemapTable = self.remap.as_mut().expect("remap on");
        while let Some(page) = r.take_freed() {
            let lpn = r.lpn_of(page);
            self.ftl.trim(Lpn(lpn));
        }
    }
}
