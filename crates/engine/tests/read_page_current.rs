//! `sched.lacr.read_page = "current"` kept incrementally: with a page-mapping FTL the
//! engine keeps the OCR/LaCR pending sums and refreshes the queued reads whose page the
//! FTL's move log names; with an FTL that keeps no log it scans every queue at every
//! decision and looks every queued read up again. The two must give the same report,
//! byte for byte, on a saturated workload where writes and GC move the pages that
//! queued reads wait for, and so must a log that overflows at every decision (every
//! queued read refreshed). `"queued"`, which keeps each read's page at queueing, must
//! not: otherwise the workload moved no queued read and the test proves nothing.

use lamina_engine::SimulationBuilder;
use lamina_engine::config::{ConfigBuilder, SimConfig};
use lamina_engine::report::TraceInfo;
use lamina_engine::trace::{IoOp, IoRequest, TraceTime};
use lamina_ftl::{Ftl, Lpn};
use lamina_nand_model::{PlaneId, Ppa};
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

const PAGE: u64 = 16_384;

/// The `lacr` device cut to 16 blocks per plane (16,384 pages, a quarter of them spare)
/// so that GC runs throughout; the FCFS arbiter, so that reads wait behind programs and
/// GC while their pages move.
fn cfg(placement: &str, read_page: &str, extra: &[&str]) -> SimConfig {
    let mut b = ConfigBuilder::new().preset("lacr").unwrap();
    let sets = [
        "nand.geometry.blocks_per_plane=16".to_string(),
        "ftl.overprovisioning=0.25".to_string(),
        format!("sched.placement=\"{placement}\""),
        format!("sched.lacr.read_page=\"{read_page}\""),
        "sched.arbiter=\"fcfs\"".to_string(),
    ];
    for s in sets.iter().map(String::as_str).chain(extra.iter().copied()) {
        b = b.set(s).unwrap();
    }
    b.build().unwrap()
}

/// 6,000 requests of one to four pages, four fifths writes, three quarters of them to a
/// hot set of 2,000 logical pages and the rest over 10,000, arriving every 20 µs: far
/// more than the 16 dies sustain, so reads queue while writes overwrite and GC moves
/// their pages (a temporary counter found 128–255 refreshed entries that changed over
/// the four kept runs).
fn workload(seed: u64) -> Vec<IoRequest> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    (0..6_000u64)
        .map(|i| {
            let r = rng.next_u64();
            let write = (r >> 40) % 5 < 4;
            let span = if r % 4 != 0 { 2_000 } else { 10_000 };
            let pages = 1 + (r >> 8) % 4;
            let lpn = (r >> 16) % (span - pages);
            IoRequest {
                arrival: TraceTime(i * 20_000),
                device: 0,
                offset_bytes: lpn * PAGE,
                size_bytes: pages * PAGE,
                op: if write { IoOp::Write } else { IoOp::Read },
            }
        })
        .collect()
}

/// The FTL a run uses.
#[derive(Clone, Copy, PartialEq)]
enum Via {
    /// The configured FTL itself (its move log keeps the sums).
    Own,
    /// [`Wrapped`] without a log: the sums are not kept, every estimate scans.
    NoLog,
    /// [`Wrapped`] with a log that always reports an overflow: the engine refreshes every
    /// queued read at every decision.
    Overflowing,
}

/// The run's report as text.
fn report(c: SimConfig, via: Via, reqs: &[IoRequest]) -> String {
    let mut b = SimulationBuilder::new(c.clone());
    if via != Via::Own {
        let spec = c.nand.validate().unwrap();
        let inner = lamina_ftl::build(&c.ftl, spec.geometry()).unwrap();
        b = b.ftl(Box::new(Wrapped(inner, via == Via::Overflowing)));
    }
    let mut sim = b.build().unwrap();
    sim.run(reqs.iter().copied().map(Ok)).unwrap();
    sim.report(TraceInfo { name: "generated".into(), ..Default::default() }).to_text()
}

#[test]
fn kept_current_sums_equal_the_scan_and_differ_from_queued() {
    let reqs = workload(7);
    for placement in ["lacr", "ocr"] {
        for extra in [&[][..], &["ftl.mapping=\"cached\"", "ftl.cmt_entries=512"][..]] {
            let kept = report(cfg(placement, "current", extra), Via::Own, &reqs);
            let scanned = report(cfg(placement, "current", extra), Via::NoLog, &reqs);
            assert!(kept == scanned, "{placement} {extra:?}: the kept sums' report differs from the scan's");
            if extra.is_empty() {
                let all = report(cfg(placement, "current", extra), Via::Overflowing, &reqs);
                assert!(all == scanned, "{placement}: refreshing every read differs from the scan");
            }
            if placement == "lacr" && extra.is_empty() {
                let queued = report(cfg(placement, "queued", extra), Via::Own, &reqs);
                assert!(kept != queued, "no queued read's page moved: the workload tests nothing");
            }
        }
    }
}

/// An FTL forwarding every method but the move log's: with `.1` false it keeps none (the
/// trait's default), with `.1` true every hand-out reports an overflow.
struct Wrapped(Box<dyn Ftl>, bool);

impl Ftl for Wrapped {
    lamina_ftl::forward_ftl_required!();

    fn log_moves(&mut self) -> bool {
        self.1 && self.0.log_moves()
    }
    fn take_moves(&mut self, out: &mut Vec<Lpn>) -> bool {
        self.0.take_moves(out);
        out.clear();
        false
    }

    fn next_write_page(&self, plane: PlaneId) -> Option<u32> {
        self.0.next_write_page(plane)
    }
    fn has_translation_reads(&self) -> bool {
        self.0.has_translation_reads()
    }
    fn translation_reads(&self, lpn: Lpn, out: &mut Vec<Ppa>) {
        self.0.translation_reads(lpn, out)
    }
    fn translate(&mut self, lpn: Lpn, out: &mut Vec<Ppa>) -> Option<PlaneId> {
        self.0.translate(lpn, out)
    }
    fn has_write_translation_reads(&self) -> bool {
        self.0.has_write_translation_reads()
    }
    fn translate_write(&mut self, lpn: Lpn, out: &mut Vec<Ppa>) {
        self.0.translate_write(lpn, out)
    }
    fn lookup_epoch(&self) -> Option<u64> {
        self.0.lookup_epoch()
    }
    fn warm_write(&self, lpn: Lpn) {
        self.0.warm_write(lpn)
    }
    fn warm_writes(&self, lpns: &[Lpn]) {
        self.0.warm_writes(lpns)
    }
    fn warm_lookups(&self, lpns: &[Lpn]) {
        self.0.warm_lookups(lpns)
    }
    fn prefetch_map_first(&self, lpns: &[Lpn]) {
        self.0.prefetch_map_first(lpns)
    }
    fn prefetch_map_second(&self, lpns: &[Lpn]) {
        self.0.prefetch_map_second(lpns)
    }
    fn host_pages(&self) -> u64 {
        self.0.host_pages()
    }
    fn replica(&self, lpn: Lpn) -> Option<Lpn> {
        self.0.replica(lpn)
    }
    fn write_unmapped_run(&mut self, lpns: &[Lpn], out: &mut Vec<Ppa>) -> Option<usize> {
        self.0.write_unmapped_run(lpns, out)
    }
    fn write_fresh_run(&mut self, lpns: &[Lpn], out: &mut Vec<Ppa>) -> Option<usize> {
        self.0.write_fresh_run(lpns, out)
    }
    fn gc_finish_untimed(&mut self, plane: PlaneId, sink: &mut dyn FnMut(lamina_ftl::FlashEffect)) {
        self.0.gc_finish_untimed(plane, sink)
    }
    fn write_group(
        &mut self,
        writes: &[(Lpn, PlaneId)],
        out: &mut Vec<Ppa>,
    ) -> Result<(), lamina_ftl::FtlError> {
        self.0.write_group(writes, out)
    }
    fn steady_waf_tolerance_ppm(&self, epsilon_ppm: u64, waf_ppm: u64) -> u64 {
        self.0.steady_waf_tolerance_ppm(epsilon_ppm, waf_ppm)
    }
}
