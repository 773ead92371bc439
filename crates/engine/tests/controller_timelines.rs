//! Hand-computed timelines of the flash controller through the whole engine (issue #9):
//! a two-plane program, a two-plane read, a two-die interleave on one channel, a 4-part
//! SOML read, a program suspended by a read with and without
//! `sched.suspend_threshold`, the per-op cap on suspensions, and the bound on how long
//! one suspension serves a read stream. Each response time is compared with its closed
//! form.
//!
//! The device: one channel, one chip, two dies of two planes, 8 blocks × 4 pages of
//! 4 KiB SLC; t_cmd = 100 ns, t_dbsy = 500 ns, 1 ns/B (a page crosses the bus in
//! 4096 ns), tR = 50 µs, tPROG = 500 µs. Striping `PDCW` puts LPN 0 on die 0 plane 0,
//! LPN 1 on die 0 plane 1, LPN 2 on die 1 plane 0, LPN 3 on die 1 plane 1, and every
//! fourth LPN on the same plane.

mod timeline;

use lamina_engine::SimulationBuilder;
use lamina_engine::trace::IoOp;
use timeline::*;

#[test]
fn two_plane_program() {
    // LPNs 0 and 1: die 0, planes 0 and 1, both at block 0 page 0.
    let write = [req(0, IoOp::Write, 0, 2 * PAGE)];
    // One command: 2 command cycles, one tDBSY between the planes, both pages' data.
    let multi = 2 * T_CMD + T_DBSY + 2 * XFER_PAGE + T_PROG;
    let done = run(config("[sched]\nscheduler = \"multiplane\"\n"), &[], &write);
    assert_eq!(response(&done[0]), multi);
    // fcfs: two programs one after the other on the die.
    let single = T_CMD + XFER_PAGE + T_PROG;
    let done = run(config(""), &[], &write);
    assert_eq!(response(&done[0]), 2 * single);
}

#[test]
fn die_aligned_allocation_makes_a_two_plane_program_of_one_planes_writes() {
    // LPNs 0 and 4 both stripe to die 0 plane 0; die-aligned allocation puts them on the
    // die's two planes at one block and page, so they program together.
    let writes = [req(0, IoOp::Write, 0, PAGE), req(0, IoOp::Write, 4 * PAGE, PAGE)];
    let cfg = config("[sched]\nscheduler = \"multiplane\"\n[ftl]\nallocation = \"die-aligned\"\n");
    let done = run(cfg, &[], &writes);
    let multi = 2 * T_CMD + T_DBSY + 2 * XFER_PAGE + T_PROG;
    assert_eq!(response(&done[0]), multi);
    assert_eq!(response(&done[1]), multi);
}

#[test]
fn two_plane_read() {
    let read = [req(0, IoOp::Read, 0, 2 * PAGE)];
    // Prefilled at block 0 page 0 of planes 0 and 1 of die 0.
    let multi = 2 * T_CMD + T_DBSY + T_R + 2 * XFER_PAGE;
    let done = run(config("[sched]\nscheduler = \"multiplane\"\n"), &[0, 1], &read);
    assert_eq!(response(&done[0]), multi);
    let single = T_CMD + T_R + XFER_PAGE;
    let done = run(config(""), &[0, 1], &read);
    assert_eq!(response(&done[0]), 2 * single);
}

#[test]
fn two_die_interleave_on_one_channel() {
    // LPN 0 on die 0, LPN 2 on die 1: the command cycles go out back to back, the array
    // reads overlap, and the second die's data waits for the first's on the shared bus.
    let reads = [req(0, IoOp::Read, 0, PAGE), req(0, IoOp::Read, 2 * PAGE, PAGE)];
    for sched in ["fcfs", "multiplane", "sprinkler"] {
        let done = run(config(&format!("[sched]\nscheduler = \"{sched}\"\n")), &[0, 2], &reads);
        assert_eq!(response(&done[0]), T_CMD + T_R + XFER_PAGE, "{sched}: die 0");
        assert_eq!(response(&done[1]), T_CMD + T_R + 2 * XFER_PAGE, "{sched}: die 1");
    }
}

#[test]
fn four_part_soml_read() {
    // Plane 0 of die 0 holds every fourth LPN: prefilling 0, 4, …, 60 fills its blocks
    // 0–3, so LPNs 0, 16, 32, 48 sit at page 0 of four different blocks (four decoders).
    let prefill: Vec<u64> = (0..16).map(|i| i * 4).collect();
    let part = 1024;
    let reads: Vec<_> = (0..4u64).map(|i| req(0, IoOp::Read, (16 * i) * PAGE + i * part, part)).collect();
    let soml = "[nand.soml]\nmax_parts = 4\ndecoders = 4\nfactor = 1.25\n";
    let cfg = config(&format!("{soml}[sched]\nscheduler = \"soml\"\n"));
    let done = run(cfg, &prefill, &reads);
    // One SOML read: 4 command cycles, tR × 1.25, the four 1 KiB parts out together.
    let t = 4 * T_CMD + T_R * 5 / 4 + 4 * part;
    for c in &done {
        assert_eq!(response(c), t);
    }
    // Without SOML the four partial reads run one after the other, each at the SOML
    // chip's read latency (the factor applies to every read on the chip).
    let done = run(config(&format!("{soml}[sched]\nscheduler = \"multiplane\"\n")), &prefill, &reads);
    let one = T_CMD + T_R * 5 / 4 + part;
    let mut got: Vec<u64> = done.iter().map(response).collect();
    got.sort_unstable();
    assert_eq!(got, vec![one, 2 * one, 3 * one, 4 * one]);
}

#[test]
fn suspended_program_with_and_without_threshold() {
    const SUSPEND: &str = "[nand.suspension]\nprogram = true\nmax_per_op = 1\n";
    // LPN 4 prefilled on die 0 plane 0; the write of LPN 0 programs the same plane; the
    // read of LPN 4 arrives 100 µs in, with 404 196 ns of the program left.
    let reqs = [req(0, IoOp::Write, 0, PAGE), req(100_000, IoOp::Read, 4 * PAGE, PAGE)];
    let prog_end = T_CMD + XFER_PAGE + T_PROG; // 504 196
    let remaining = prog_end - 100_000;
    const T_SUSPEND: u64 = 10_000;
    const T_RESUME: u64 = 5_000;

    // No threshold: the read suspends the program at once.
    let done = run(config(SUSPEND), &[4], &reqs);
    let read_end = 100_000 + T_SUSPEND + T_CMD + T_R + XFER_PAGE;
    assert_eq!(done[1].done.0, read_end);
    assert_eq!(done[0].done.0, read_end + T_RESUME + remaining);

    // A 450 µs threshold: 404 µs left is not worth suspending; the read waits.
    let done = run(config(&format!("{SUSPEND}[sched]\nsuspend_threshold = \"450us\"\n")), &[4], &reqs);
    assert_eq!(done[0].done.0, prog_end);
    assert_eq!(done[1].done.0, prog_end + T_CMD + T_R + XFER_PAGE);

    // A 400 µs threshold: 404 µs left is worth it.
    let done = run(config(&format!("{SUSPEND}[sched]\nsuspend_threshold = \"400us\"\n")), &[4], &reqs);
    assert_eq!(done[1].done.0, read_end);
}

#[test]
fn suspension_cap_per_program() {
    // The per-op cap (`nand.suspension.max_per_op`): the write of LPN 0 programs die 0
    // plane 0 from 0 to 504 196 ns; reads of LPNs 4 and 8 (prefilled on the same plane)
    // arrive at 100 µs and 200 µs. The first suspends the program (as in
    // `suspended_program_with_and_without_threshold`): it ends at 164 196 ns, and the
    // program resumes with 404 196 ns left, now ending at 164 196 + 5 000 + 404 196.
    let reqs = [
        req(0, IoOp::Write, 0, PAGE),
        req(100_000, IoOp::Read, 4 * PAGE, PAGE),
        req(200_000, IoOp::Read, 8 * PAGE, PAGE),
    ];
    const T_SUSPEND: u64 = 10_000;
    const T_RESUME: u64 = 5_000;
    let read = T_CMD + T_R + XFER_PAGE;
    let prog_end = T_CMD + XFER_PAGE + T_PROG;
    let read1_end = 100_000 + T_SUSPEND + read;
    let resumed_end = read1_end + T_RESUME + (prog_end - 100_000);
    let cap = |n: u32| config(&format!("[nand.suspension]\nprogram = true\nmax_per_op = {n}\n"));

    // Cap 1: the second read may not suspend the program again; it waits for its end.
    let done = run(cap(1), &[4, 8], &reqs);
    assert_eq!(done[1].done.0, read1_end);
    assert_eq!(done[0].done.0, resumed_end);
    assert_eq!(done[2].done.0, resumed_end + read);

    // Cap 2: it suspends the program a second time at 200 µs, which then resumes with
    // what was left at that instant.
    let done = run(cap(2), &[4, 8], &reqs);
    let read2_end = 200_000 + T_SUSPEND + read;
    assert_eq!(done[1].done.0, read1_end);
    assert_eq!(done[2].done.0, read2_end);
    assert_eq!(done[0].done.0, read2_end + T_RESUME + (resumed_end - 200_000));
}

#[test]
fn stepping_api_matches_run() {
    // Feeding requests one by one gives the same report as replaying them.
    let reqs: Vec<_> = (0..200u64)
        .map(|i| req(i * 7_000, if i % 3 == 0 { IoOp::Read } else { IoOp::Write }, (i * 5 % 40) * PAGE, PAGE))
        .collect();
    for sched in ["fcfs", "multiplane", "sprinkler"] {
        let cfg = config(&format!("[sched]\nscheduler = \"{sched}\"\n"));
        let mut a = SimulationBuilder::new(cfg.clone()).build().unwrap();
        a.run(reqs.iter().map(|r| Ok(*r))).unwrap();
        let mut b = SimulationBuilder::new(cfg).build().unwrap();
        let mut seen = Vec::new();
        for r in &reqs {
            b.submit(*r).unwrap();
            b.take_completions(&mut seen);
            assert!(seen.iter().all(|c| c.done <= b.now()), "completions are in the past");
        }
        b.drain().unwrap();
        b.take_completions(&mut seen);
        assert_eq!(seen.len(), reqs.len());
        assert!(b.next_event_time().is_none());
        let info = lamina_engine::report::TraceInfo::default();
        let (ra, rb) = (a.report(info.clone()), b.report(info));
        assert_eq!(
            serde_json::to_string(&ra.all).unwrap(),
            serde_json::to_string(&rb.all).unwrap(),
            "{sched}"
        );
        // Out-of-order submission is refused with an error, not a panic.
        assert!(b.submit(req(0, IoOp::Read, 0, PAGE)).is_err());
    }
}

/// A page FTL whose translation step reads the spare area of the page it maps to
/// (NFTL-style: the mapping is known only after the spare area is read).
struct SpareAreaFtl {
    inner: lamina_ftl::PageFtl,
}

impl lamina_ftl::Ftl for SpareAreaFtl {
    fn geometry(&self) -> &lamina_nand_model::Geometry {
        self.inner.geometry()
    }
    fn logical_pages(&self) -> u64 {
        self.inner.logical_pages()
    }
    fn lookup(&self, lpn: lamina_ftl::Lpn) -> Option<lamina_nand_model::Ppa> {
        self.inner.lookup(lpn)
    }
    fn translation_reads(&self, lpn: lamina_ftl::Lpn, out: &mut Vec<lamina_nand_model::Ppa>) {
        out.extend(self.inner.lookup(lpn));
    }
    fn static_plane(&self, lpn: lamina_ftl::Lpn) -> lamina_nand_model::PlaneId {
        self.inner.static_plane(lpn)
    }
    fn write(
        &mut self,
        lpn: lamina_ftl::Lpn,
        plane: lamina_nand_model::PlaneId,
    ) -> Result<lamina_nand_model::Ppa, lamina_ftl::FtlError> {
        self.inner.write(lpn, plane)
    }
    fn trim(&mut self, lpn: lamina_ftl::Lpn) -> Option<lamina_nand_model::Ppa> {
        self.inner.trim(lpn)
    }
    fn needs_gc(&self, plane: lamina_nand_model::PlaneId) -> bool {
        self.inner.needs_gc(plane)
    }
    fn gc_in_progress(&self, plane: lamina_nand_model::PlaneId) -> bool {
        self.inner.gc_in_progress(plane)
    }
    fn gc_begin(&mut self, plane: lamina_nand_model::PlaneId) -> Option<lamina_ftl::GcJob> {
        self.inner.gc_begin(plane)
    }
    fn gc_step(&mut self, plane: lamina_nand_model::PlaneId) -> lamina_ftl::GcStep {
        self.inner.gc_step(plane)
    }
    fn free_blocks(&self, plane: lamina_nand_model::PlaneId) -> u32 {
        self.inner.free_blocks(plane)
    }
    fn page_counts(&self, plane: lamina_nand_model::PlaneId) -> lamina_ftl::PageCounts {
        self.inner.page_counts(plane)
    }
    fn page_lpn(&self, ppa: lamina_nand_model::Ppa) -> Option<lamina_ftl::Lpn> {
        self.inner.page_lpn(ppa)
    }
    fn block_info(&self, block: lamina_nand_model::BlockId) -> lamina_ftl::BlockInfo {
        self.inner.block_info(block)
    }
    fn stats(&self) -> lamina_ftl::FtlStats {
        self.inner.stats()
    }
    fn can_write(&self, plane: lamina_nand_model::PlaneId) -> bool {
        self.inner.can_write(plane)
    }
}

#[test]
fn translation_reads_cost_flash_time_before_the_data_read() {
    // The read of LPN 0 first reads the spare area of its page (64 B out), then the data.
    let cfg = config("");
    let geo = cfg.nand.validate().unwrap().geometry().clone();
    let inner = lamina_ftl::PageFtl::new(geo, &cfg.ftl).unwrap();
    let mut sim = SimulationBuilder::new(cfg).ftl(Box::new(SpareAreaFtl { inner })).build().unwrap();
    sim.prefill(std::iter::once(Ok(req(0, IoOp::Read, 0, PAGE)))).unwrap();
    sim.submit(req(0, IoOp::Read, 0, PAGE)).unwrap();
    sim.drain().unwrap();
    let mut done = Vec::new();
    sim.take_completions(&mut done);
    let spare = T_CMD + T_R + 64;
    assert_eq!(response(&done[0]), spare + T_CMD + T_R + XFER_PAGE);
}

/// The report's mean read-queue length per die (soml-read Fig. 10a), in closed form: a
/// two-page read of one die under `fcfs` serves its first page at once (never queued)
/// while the second waits `single` in the die's read queue; the span is `2 · single`
/// and the device has two dies, so the mean is `single / (2 · single) / 2 = 0.25`.
/// `multiplane` takes both pages in one command: nothing waits.
#[test]
fn read_queue_length_is_time_weighted_per_die() {
    let read = [req(0, IoOp::Read, 0, 2 * PAGE)];
    for (sched, want) in [("fcfs", 0.25), ("multiplane", 0.0)] {
        let mut sim = SimulationBuilder::new(config(&format!("[sched]\nscheduler = \"{sched}\"\n")))
            .build()
            .expect("config builds");
        let prefill: Vec<_> = [0u64, 1].iter().map(|&l| Ok(req(0, IoOp::Read, l * PAGE, PAGE))).collect();
        sim.prefill(prefill.into_iter()).expect("prefill");
        sim.run(read.iter().copied().map(Ok)).expect("run");
        let r = sim.report(lamina_engine::report::TraceInfo { name: "t".into(), ..Default::default() });
        let single = T_CMD + T_R + XFER_PAGE;
        assert_eq!(
            r.utilisation.span_ns,
            if want > 0.0 { 2 * single } else { 2 * T_CMD + T_DBSY + T_R + 2 * XFER_PAGE }
        );
        assert_eq!(r.utilisation.read_queue_per_die, want, "{sched}");
    }
}

/// The cached mapping (`ftl.mapping = "cached"`, a 1-entry CMT; the device's 4 KiB
/// pages hold 1024 four-byte entries, so translation page 0 maps every LPN). Requests
/// are 2 ms apart, so each runs alone (write-backs included):
///
/// 1. write LPN 0 (die 0): a miss, cached dirty — the ideal write time;
/// 2. read LPN 0: a **hit** — the ideal read `T_CMD + T_R + XFER_PAGE`;
/// 3. write LPN 2 (die 1): a miss evicting 0 (dirty); its write-back programs
///    translation page 0 on die 1 after the write (never written: no read);
/// 4. read LPN 2: a hit;
/// 5. read LPN 0: a **dirty-eviction miss**. Its translation read of page 0 (die 1:
///    `T_CMD + T_R` and 64 B out, the spare-area-sized transfer of the engine's
///    translation step) goes out at once; the eviction of 2 (dirty) queues the
///    read-modify-write of translation page 0 on the static plane of LPN 0 (die 0
///    plane 0), as a GC move that starts at once too: its read waits on die 1 behind the translation
///    read (`read` more), its program then holds die 0 (`write`), and the data read on
///    die 0 comes after it: `translation + read + write + read`;
/// 6. read LPN 2: a **clean miss** (0 was made clean, so nothing is written back):
///    translation read, then data read.
#[test]
fn cached_mapping_hit_clean_miss_and_dirty_eviction_miss() {
    let cfg = config("[ftl]\noverprovisioning = 0.5\nmapping = \"cached\"\ncmt_entries = 1\n");
    const MS: u64 = 1_000_000;
    let reqs = [
        req(0, IoOp::Write, 0, PAGE),
        req(2 * MS, IoOp::Read, 0, PAGE),
        req(4 * MS, IoOp::Write, 2 * PAGE, PAGE),
        req(6 * MS, IoOp::Read, 2 * PAGE, PAGE),
        req(8 * MS, IoOp::Read, 0, PAGE),
        req(10 * MS, IoOp::Read, 2 * PAGE, PAGE),
    ];
    let (done, sim) = run_sim(cfg, &[], &reqs);
    let write = T_CMD + XFER_PAGE + T_PROG;
    let read = T_CMD + T_R + XFER_PAGE;
    let translation = T_CMD + T_R + 64;
    let got: Vec<u64> = done.iter().map(response).collect();
    let dirty_miss = translation + read + write + read;
    assert_eq!(got, [write, read, write, read, dirty_miss, translation + read]);
    let r = report_of(&sim);
    let m = r.mapping.expect("the cached mapping reports its counters");
    let counts = (m.read_hits, m.read_misses, m.write_hits, m.write_misses, m.dirty_evictions);
    assert_eq!(counts, (2, 2, 0, 2, 2));
    // Reads: the two misses' and the read-modify-write's; writes: the program and the RMW.
    assert_eq!((m.translation_page_reads, m.translation_page_writes), (3, 2));
    assert_eq!(r.flash.translation_reads, 2, "the engine timed the misses' reads");
    // Both misses' translation reads show as translation time (the clean miss's alone).
    let a = r.latency_attribution.expect("attributed").read;
    assert_eq!(a.translation.expect("misses had translation reads").max_ns, translation);
    // Flash time: the two misses' reads; the first write-back's program (3) and the
    // read-modify-write across dies (5: its read on die 1, its program on die 0). Out
    // of all die time: 4 programs (2 host, 2 translation), 5 page reads (the host reads
    // 2, 4, 5, 6 and the RMW's), 2 translation reads.
    assert_eq!((m.translation_read_ns, m.translation_write_ns), (2 * translation, write + read + write));
    let all = 4 * write + 5 * read + 2 * translation;
    let share = (2 * translation + read + 2 * write) as f64 / all as f64;
    assert_eq!(m.translation_flash_share, Some(share));
}

/// A write miss waits for its translation read (issue #16, as MQSim's write misses do)
/// — 1-entry CMT, requests 2 ms apart:
///
/// 1. write LPN 0 (die 0): a miss, nothing on flash to read — the ideal write;
/// 2. write LPN 2 (die 1): a miss, nothing to read; evicts 0 (dirty), whose write-back
///    programs translation page 0 on die 1 after the write;
/// 3. write LPN 0: a miss whose translation page is now on flash: the translation read
///    on die 1 (`T_CMD + T_R + 64`), then the program on die 0. Evicting 2 (dirty)
///    queues translation page 0's read-modify-write after the program: it does not
///    delay the write.
#[test]
fn cached_mapping_write_miss_waits_for_its_translation_read() {
    let cfg = config("[ftl]\noverprovisioning = 0.5\nmapping = \"cached\"\ncmt_entries = 1\n");
    const MS: u64 = 1_000_000;
    let reqs = [
        req(0, IoOp::Write, 0, PAGE),
        req(2 * MS, IoOp::Write, 2 * PAGE, PAGE),
        req(4 * MS, IoOp::Write, 0, PAGE),
    ];
    let (done, sim) = run_sim(cfg, &[], &reqs);
    let write = T_CMD + XFER_PAGE + T_PROG;
    let translation = T_CMD + T_R + 64;
    let got: Vec<u64> = done.iter().map(response).collect();
    assert_eq!(got, [write, write, translation + write]);
    let r = report_of(&sim);
    let m = r.mapping.expect("cached mapping counters");
    assert_eq!((m.write_hits, m.write_misses, m.dirty_evictions), (0, 3, 2));
    // The third write's read and the second write-back's read-modify-write read.
    assert_eq!((m.translation_page_reads, m.translation_page_writes), (2, 2));
    assert_eq!(r.flash.translation_reads, 1, "the engine timed the write miss's read");
    // The attribution shows the read as translation time, not as queueing.
    let a = r.latency_attribution.expect("attributed").write;
    let t = a.translation.expect("a write had a translation read");
    assert_eq!((t.max_ns, a.queue_wait.max_ns), (translation, 0));
}

/// Issue #16's sweep of the CMT size ends at the ideal mapping: a CMT that holds every
/// logical page answers every access from DRAM, so each request takes exactly the ideal
/// mapping's time (docs/model.md, "Cached mapping": the curve flattens to the ideal
/// case), while with no CMT every read pays its translation read first. Pages 8–15 are
/// prefilled, pages 0–7 written, then all 16 read, 2 ms apart (an idle device).
#[test]
fn a_cmt_holding_every_page_gives_the_ideal_mappings_times() {
    const MS: u64 = 1_000_000;
    let prefill: Vec<u64> = (8..16).collect();
    let mut reqs: Vec<_> = (0..8).map(|i| req(2 * MS * i, IoOp::Write, i * PAGE, PAGE)).collect();
    reqs.extend((0..16).map(|i| req(2 * MS * (8 + i), IoOp::Read, i * PAGE, PAGE)));
    let times = |ftl: &str| -> (Vec<u64>, lamina_engine::report::Report) {
        let (done, sim) = run_sim(config(&format!("[ftl]\noverprovisioning = 0.5\n{ftl}")), &prefill, &reqs);
        (done.iter().map(response).collect(), report_of(&sim))
    };
    let (ideal, _) = times("");
    let read = T_CMD + T_R + XFER_PAGE;
    assert_eq!(ideal[8..], [read; 16], "the ideal mapping reads at the closed form");
    // 1024 entries: more than the device's logical pages.
    let (full, r) = times("mapping = \"cached\"\ncmt_entries = 1024\n");
    assert_eq!(full, ideal, "a CMT of every page is the ideal mapping");
    let m = r.mapping.expect("the cached mapping reports its counters");
    assert_eq!((m.read_hits, m.read_misses, m.translation_page_reads), (16, 0, 0));
    // No CMT: every read misses and reads its translation page (written back by the
    // writes' evictions) before the data.
    let (none, r) = times("mapping = \"cached\"\ncmt_entries = 0\n");
    let translation = T_CMD + T_R + 64;
    assert_eq!(none[8..], [translation + read; 16], "each read pays one translation read");
    assert_eq!(r.mapping.expect("counters").read_misses, 16);
}

#[test]
fn suspension_window_bounds_a_read_stream() {
    // A read stream at one die during a program (`nand.suspension.max_window`): the
    // write of LPN 0 programs die 0 plane 0, array from 4 196 ns for 500 µs; reads of
    // twelve pages prefilled on the same plane arrive one read time apart from 100 µs,
    // each exactly when the one before it would end were it not for the suspend
    // overhead, so every read finds the suspension still open.
    const T_SUSPEND: u64 = 10_000;
    const T_RESUME: u64 = 5_000;
    let read = T_CMD + T_R + XFER_PAGE; // 54 196
    let prefill: Vec<u64> = (1..=12).map(|k| 4 * k).collect();
    let mut reqs = vec![req(0, IoOp::Write, 0, PAGE)];
    reqs.extend((0..12).map(|k| req(100_000 + k * read, IoOp::Read, 4 * (k + 1) * PAGE, PAGE)));
    let left = T_CMD + XFER_PAGE + T_PROG - 100_000; // 404 196 of the program left
    let susp = |window: &str| config(&format!("[nand.suspension]\nprogram = true\nmax_per_op = 1\n{window}"));
    // Read k (1-based) of the suspension starts at 110 000 + (k − 1) × read.
    let start = |k: u64| 100_000 + T_SUSPEND + (k - 1) * read;

    // A window longer than the stream: every read joins, and the program resumes only
    // after the last one (the unbounded behaviour before the window existed).
    let done = run(susp("max_window = \"10ms\"\n"), &prefill, &reqs);
    for k in 1..=12u64 {
        assert_eq!(done[k as usize].done.0, start(k) + read, "read {k}");
    }
    assert_eq!(done[0].done.0, start(12) + read + T_RESUME + left);

    // The default window, the program's own array time (500 µs from the suspend point
    // at 100 µs): reads 1–10 start before 600 µs and join; read 11 would start at
    // 651 960 ns, so the program resumes at 656 960 ns and reads 11 and 12 wait for it
    // in the die's read queue.
    assert!(start(10) < 600_000 && start(11) >= 600_000);
    let bounded = start(10) + read + T_RESUME + left;
    let done = run(susp(""), &prefill, &reqs);
    for k in 1..=10u64 {
        assert_eq!(done[k as usize].done.0, start(k) + read, "read {k}");
    }
    assert_eq!(done[0].done.0, bounded);
    assert_eq!(done[11].done.0, bounded + read);
    assert_eq!(done[12].done.0, bounded + 2 * read);
    let explicit = run(susp("max_window = \"500us\"\n"), &prefill, &reqs);
    assert_eq!(
        explicit.iter().map(|c| c.done).collect::<Vec<_>>(),
        done.iter().map(|c| c.done).collect::<Vec<_>>()
    );

    // A zero window: one read per suspension; with the cap at 1 the rest wait for the
    // program and then run back to back.
    let done = run(susp("max_window = 0\n"), &prefill, &reqs);
    let prog = start(1) + read + T_RESUME + left;
    assert_eq!(done[1].done.0, start(1) + read);
    assert_eq!(done[0].done.0, prog);
    for k in 2..=12u64 {
        assert_eq!(done[k as usize].done.0, prog + (k - 1) * read, "read {k}");
    }
}
