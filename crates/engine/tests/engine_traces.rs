//! Whole-trace runs: golden summaries, determinism, and verify mode ("nothing lost")
//! through GC — on the bundled fixtures in `traces/` (always) and on the real traces in
//! `../shared/traces` (when present; see `tests/support/shared.rs`).
//!
//! Golden files live in `tests/golden/` at the repository root. After an intended change
//! of behaviour, regenerate them with `LAMINA_BLESS=1 cargo test -p lamina-engine --test
//! engine_traces` and review the diff.

use std::path::{Path, PathBuf};

use lamina_engine::config::{ConfigBuilder, SimConfig};
use lamina_engine::trace::{IoOp, IoRequest};
use lamina_engine::{RunError, SimulationBuilder, run_trace};
use lamina_ftl::{BlockInfo, Ftl, FtlError, FtlStats, GcJob, GcStep, Lpn, PageCounts};
use lamina_nand_model::{BlockId, PlaneId, Ppa};

#[path = "../../../tests/support/shared.rs"]
mod shared;

use shared::{bundled, repo_root as root, shared_traces};

fn cfg(preset: &str, sets: &[&str]) -> SimConfig {
    let mut b = ConfigBuilder::new().preset(preset).unwrap();
    for s in sets {
        b = b.set(s).unwrap();
    }
    b.build().unwrap()
}

fn golden(name: &str, trace: &Path, c: &SimConfig) {
    let report = run_trace(c, trace).unwrap();
    let text = report.to_text().replace(lamina_engine::VERSION, "<version>");
    let path = root().join("tests/golden").join(name);
    if std::env::var_os("LAMINA_BLESS").is_some() {
        std::fs::write(&path, &text).unwrap();
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (bless with LAMINA_BLESS=1)", path.display()));
    assert_eq!(text, want, "golden summary {name} changed; if intended, re-bless and review the diff");
}

#[test]
fn golden_financial1_on_mbm() {
    let Some(dir) = shared_traces("golden_financial1_on_mbm") else { return };
    golden("financial1-mbm.txt", &dir.join("ssdsim-ascii/financial1-head10k.ascii"), &cfg("mbm", &[]));
}

#[test]
fn golden_websearch_on_mqsim_default_with_buffer() {
    let Some(dir) = shared_traces("golden_websearch_on_mqsim_default_with_buffer") else { return };
    golden(
        "websearch-mqsim-default.txt",
        &dir.join("mqsim-ascii/websearch.trace"),
        &cfg("mqsim-default", &["buffer.size_bytes=16777216", "host.queue_depth=64"]),
    );
}

/// The bundled counterpart of the golden runs above: runs from a fresh clone.
#[test]
fn golden_bundled_msr_fixture_on_lacr() {
    golden("fixture-msr-lacr.txt", &bundled("fixtures/msr.csv.zst"), &cfg("lacr", &["host.queue_depth=32"]));
}

#[test]
fn same_run_twice_gives_identical_json() {
    let c = cfg("mbm", &["buffer.size_bytes=4194304", "seed=7"]);
    let t = bundled("fixtures/spc.csv.zst");
    let a = run_trace(&c, &t).unwrap().to_json();
    let b = run_trace(&c, &t).unwrap().to_json();
    assert_eq!(a, b);
    // And from another thread (no thread-local or global state leaks into results).
    let c2 = c.clone();
    let t2 = t.clone();
    let d = std::thread::spawn(move || run_trace(&c2, &t2).unwrap().to_json()).join().unwrap();
    assert_eq!(a, d);
}

/// A device small enough that every trace forces GC: die-binding-4x2 with 32 blocks of
/// 64 × 2 KiB pages per plane (8 MiB raw per plane... 64 MiB total).
fn tiny(extra: &[&str]) -> SimConfig {
    let mut sets = vec!["nand.geometry.blocks_per_plane=32", "host.verify=true"];
    sets.extend_from_slice(extra);
    cfg("die-binding-4x2", &sets)
}

/// Replays `traces` on the tiny device with and without a write buffer, in verify mode;
/// returns whether any run garbage-collected.
fn verify_through_gc(traces: &[(PathBuf, &[&str])]) -> bool {
    let mut gc_seen = false;
    for (t, sets) in traces {
        for extra in [&[][..], &["buffer.size_bytes=262144"][..]] {
            let all: Vec<&str> = sets.iter().chain(extra).copied().collect();
            let r = run_trace(&tiny(&all), t).unwrap_or_else(|e| panic!("{} {all:?}: {e}", t.display()));
            // Every read and write of the trace completed (trims are not timed requests).
            assert!(
                r.all.count > 0 && r.all.count <= r.trace.requests,
                "{}: {} of {}",
                t.display(),
                r.all.count,
                r.trace.requests
            );
            gc_seen |= r.gc.jobs > 0;
        }
    }
    gc_seen
}

/// Every real sample in ../shared/traces.
const SHARED_TRACES: [&str; 12] = [
    "ssdsim-ascii/financial1-head10k.ascii",
    "ssdsim-ascii/dtrs.ascii",
    "mqsim-ascii/websearch.trace",
    "mqsim-ascii/tpcc.trace",
    "msr-csv/hm_0-window1k.csv",
    "flashnet/msr-cut-most-thpt.trace",
    "flashnet/msr-cut-rw20-80.trace",
    "flashnet/tencent-cut-rand-iops.profile",
    "flashnet/tencent-cut-size-thpt.profile",
    "flashnet/tencent-cut-rw60-40.profile",
    "systor17/vdi-sample.csv.gz",
    "blkparse/hadoop.blkparse",
];

#[test]
fn verify_passes_on_every_shared_trace_through_gc() {
    let Some(dir) = shared_traces("verify_passes_on_every_shared_trace_through_gc") else { return };
    let traces = SHARED_TRACES;
    let traces: Vec<(PathBuf, &[&str])> = traces.iter().map(|t| (dir.join(t), &[][..])).collect();
    assert!(verify_through_gc(&traces), "the tiny device must force GC on some trace");
}

/// The MBM FTL (MBM's write strategy, and its per-plane ablation `ftl.mbm_ws = false`)
/// and the TBM FTL (twin blocks, twin GC, multi-plane erase chains) keep the latest data
/// of every page through GC on every shared trace, under the multiplane scheduler.
#[test]
fn verify_passes_with_mbm_and_tbm_on_every_shared_trace_through_gc() {
    let Some(dir) = shared_traces("verify_passes_with_mbm_and_tbm_on_every_shared_trace_through_gc") else {
        return;
    };
    let kinds: [&[&str]; 3] = [
        &["ftl.kind=\"mbm\"", "sched.scheduler=\"multiplane\""],
        &["ftl.kind=\"mbm\"", "ftl.mbm_ws=false", "sched.scheduler=\"multiplane\""],
        &["ftl.kind=\"tbm\"", "sched.scheduler=\"multiplane\""],
    ];
    for sets in kinds {
        let traces: Vec<(PathBuf, &[&str])> = SHARED_TRACES.iter().map(|t| (dir.join(t), sets)).collect();
        assert!(verify_through_gc(&traces), "{sets:?}: the tiny device must force GC on some trace");
    }
}

/// The brief's run: financial1 on the mbm preset, 64 blocks per plane, preconditioned to
/// 90 % full, multiplane scheduler, verify on. MBM and TBM form multi-plane programs, more
/// than the page FTL with per-plane allocation (which forms none: its planes' write
/// pointers are independent); TBM's GC erases whole twins as multi-plane erases.
#[test]
fn mbm_and_tbm_form_multi_plane_programs_on_the_mbm_preset() {
    let Some(dir) = shared_traces("mbm_and_tbm_form_multi_plane_programs_on_the_mbm_preset") else { return };
    let t = dir.join("ssdsim-ascii/financial1-head10k.ascii");
    let run = |kind: &str| {
        let k = format!("ftl.kind=\"{kind}\"");
        let sets = [
            k.as_str(),
            "sched.scheduler=\"multiplane\"",
            "nand.geometry.blocks_per_plane=64",
            "precondition.fill_fraction=0.9",
            "host.verify=true",
        ];
        let r = run_trace(&cfg("mbm", &sets), &t).unwrap_or_else(|e| panic!("{kind}: {e}"));
        assert!(r.gc.jobs > 0, "{kind}: no GC");
        r.flash_ops.expect("flash ops are reported")
    };
    let (page, mbm, tbm) = (run("page"), run("mbm"), run("tbm"));
    assert_eq!(page.program.multi_plane, 0);
    assert!(mbm.program.multi_plane > page.program.multi_plane, "mbm {}", mbm.program.multi_plane);
    assert!(tbm.program.multi_plane > mbm.program.multi_plane, "tbm {}", tbm.program.multi_plane);
    assert!(tbm.erase.multi_plane > 0 && tbm.erase.single_plane == 0, "tbm erases {:?}", tbm.erase);
}

/// RAIN 1 (`ftl.replication = "rain1"`): both copies of every page carry its latest
/// data — reads are served from either copy, whichever die has less work, and each is
/// checked against the latest write of the copy it reads (`host.verify`) — through GC on
/// every shared trace; the mirror copy really serves reads.
#[test]
fn verify_passes_with_rain1_replication_on_every_shared_trace() {
    let Some(dir) = shared_traces("verify_passes_with_rain1_replication_on_every_shared_trace") else {
        return;
    };
    let (mut gc, mut mirror_reads, mut reads) = (0, 0, 0);
    for e in SHARED_TRACES {
        let t = dir.join(e);
        let c = tiny(&["ftl.replication=\"rain1\""]);
        let r = run_trace(&c, &t).unwrap_or_else(|e| panic!("{}: {e}", t.display()));
        gc += r.gc.jobs;
        mirror_reads += r.flash.mirror_reads;
        reads += r.flash.host_reads;
        assert!(r.flash.mirror_reads <= r.flash.host_reads, "{}", t.display());
    }
    assert!(gc > 0, "the tiny device must force GC on some trace");
    assert!(mirror_reads > 0 && mirror_reads < reads, "mirror reads {mirror_reads} of {reads}");
}

/// One row of the fixture table in `traces/MANIFEST.md`.
struct FixtureRow {
    file: String,
    format: String,
    requests: u64,
}

fn fixture_rows() -> Vec<FixtureRow> {
    let text = std::fs::read_to_string(bundled("MANIFEST.md")).unwrap();
    let rows: Vec<FixtureRow> = text
        .lines()
        .filter(|l| l.starts_with("| fixtures/"))
        .map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            FixtureRow { file: cells[1].into(), format: cells[2].into(), requests: cells[3].parse().unwrap() }
        })
        .collect();
    assert_eq!(rows.len(), 10, "one fixture per readable format except generic");
    rows
}

/// Settings for the fixtures on [`tiny`]: half its blocks and a quarter of them hidden,
/// so that the fixtures' 48 MiB footprint (wrapped onto 24 MiB) forces GC; and MQSim's
/// layout is SSDsim's, so detection says ssdsim unless told.
fn fixture_sets(format: &str) -> &'static [&'static str] {
    const SMALL: [&str; 2] = ["nand.geometry.blocks_per_plane=16", "ftl.overprovisioning=0.25"];
    if format == "mqsim" { &[SMALL[0], SMALL[1], "trace.format=\"mqsim\""] } else { &SMALL }
}

/// Issue #8 item 18: the suite needs no `../shared`. Every bundled fixture is what
/// `traces/MANIFEST.md` says (format, request count) and replays in verify mode, with
/// and without a buffer, and the tiny device garbage-collects on them.
#[test]
fn every_bundled_fixture_matches_the_manifest_and_verifies_through_gc() {
    let rows = fixture_rows();
    for row in &rows {
        let r = run_trace(&tiny(fixture_sets(&row.format)), &bundled(&row.file)).unwrap();
        assert_eq!(r.trace.format, row.format, "{}", row.file);
        assert_eq!(r.trace.requests, row.requests, "{}", row.file);
    }
    let traces: Vec<(PathBuf, &[&str])> =
        rows.iter().map(|r| (bundled(&r.file), fixture_sets(&r.format))).collect();
    assert!(verify_through_gc(&traces), "the tiny device must force GC on the fixtures");
}

/// An FTL that forgets remaps: `lookup` keeps answering with the first physical page
/// it ever mapped an LPN to (a classic stale-mapping bug). Verify mode must catch it.
struct StaleFtl {
    inner: Box<dyn Ftl>,
    first: std::sync::Mutex<std::collections::BTreeMap<u64, Ppa>>,
}

impl Ftl for StaleFtl {
    fn geometry(&self) -> &lamina_nand_model::Geometry {
        self.inner.geometry()
    }
    fn logical_pages(&self) -> u64 {
        self.inner.logical_pages()
    }
    fn lookup(&self, lpn: Lpn) -> Option<Ppa> {
        let now = self.inner.lookup(lpn)?;
        Some(*self.first.lock().unwrap().entry(lpn.0).or_insert(now))
    }
    fn static_plane(&self, lpn: Lpn) -> PlaneId {
        self.inner.static_plane(lpn)
    }
    fn write(&mut self, lpn: Lpn, plane: PlaneId) -> Result<Ppa, FtlError> {
        let p = self.inner.write(lpn, plane)?;
        self.first.lock().unwrap().entry(lpn.0).or_insert(p);
        Ok(p)
    }
    fn trim(&mut self, lpn: Lpn) -> Option<Ppa> {
        self.inner.trim(lpn)
    }
    fn needs_gc(&self, plane: PlaneId) -> bool {
        self.inner.needs_gc(plane)
    }
    fn gc_in_progress(&self, plane: PlaneId) -> bool {
        self.inner.gc_in_progress(plane)
    }
    fn gc_begin(&mut self, plane: PlaneId) -> Option<GcJob> {
        self.inner.gc_begin(plane)
    }
    fn gc_step(&mut self, plane: PlaneId) -> GcStep {
        self.inner.gc_step(plane)
    }
    fn free_blocks(&self, plane: PlaneId) -> u32 {
        self.inner.free_blocks(plane)
    }
    fn page_counts(&self, plane: PlaneId) -> PageCounts {
        self.inner.page_counts(plane)
    }
    fn page_lpn(&self, ppa: Ppa) -> Option<Lpn> {
        self.inner.page_lpn(ppa)
    }
    fn block_info(&self, block: BlockId) -> BlockInfo {
        self.inner.block_info(block)
    }
    fn stats(&self) -> FtlStats {
        self.inner.stats()
    }
}

#[test]
fn verify_catches_a_stale_mapping() {
    let c = cfg("mbm", &["host.verify=true"]);
    let spec = c.nand.validate().unwrap();
    let inner = lamina_ftl::build(&c.ftl, spec.geometry()).unwrap();
    let ftl = StaleFtl { inner, first: Default::default() };
    let mut sim = SimulationBuilder::new(c).ftl(Box::new(ftl)).build().unwrap();
    // Write LPN 3 twice, then read it: the stale FTL points the read at version 1.
    let w = |t: u64| IoRequest {
        arrival: lamina_engine::trace::TraceTime(t),
        device: 0,
        offset_bytes: 3 * 8192,
        size_bytes: 8192,
        op: IoOp::Write,
    };
    let r = IoRequest { op: IoOp::Read, ..w(20_000_000) };
    let err = sim.run(vec![w(0), w(5_000_000), r].into_iter().map(Ok)).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, RunError::Verify(_)), "{msg}");
    assert!(msg.contains("LPN 3"), "{msg}");
}

/// mbm-ftl end to end (issue #12): the `mbm` scheduler (RS) and the `mcs` placement on
/// the `mbm` device, verified ("nothing lost"), without and with a write buffer. Every
/// sub-write (host write or flush) is one MCS decision of an announced request; every
/// multi-plane read the flash-command table counts (no GC runs here) is one RS formed
/// (a read whose page moved meanwhile may leave one single-plane).
#[test]
fn mbm_scheduler_and_mcs_placement_run_end_to_end() {
    for buffer in ["buffer.size_bytes=0", "buffer.size_bytes=1048576"] {
        let c =
            cfg("mbm", &["sched.scheduler=\"mbm\"", "sched.placement=\"mcs\"", "host.verify=true", buffer]);
        let r = run_trace(&c, &bundled("demo.trace")).unwrap();
        let m = r.placement.mcs.as_ref().expect("mcs counts");
        assert_eq!(m.decisions, r.flash.host_programs, "{buffer}: one decision per sub-write");
        assert!(m.requests > 0 && m.best_fit > 0, "{buffer}: {m:?}");
        let rs = r.rs.as_ref().expect("rs counts");
        let ops = r.flash_ops.as_ref().expect("flash ops");
        let wide_reads: u64 = ops.read.ops_by_planes.iter().skip(2).sum();
        assert!(wide_reads <= rs.multi_plane && r.gc.jobs == 0, "{buffer}: {wide_reads} {rs:?}");
        assert!(r.placement.redirect.is_none());
    }
    // Other policies keep no such counters.
    let r = run_trace(&cfg("mbm", &[]), &bundled("demo.trace")).unwrap();
    assert!(r.rs.is_none() && r.placement.mcs.is_none());
}
