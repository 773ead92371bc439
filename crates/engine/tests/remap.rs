//! Micropages-style remapping (`[remap]`, docs/policies.md "Remapping (Micropages)"):
//! a hand-counted run of one recurring co-read, `--verify` through GC on the real traces
//! (the remapped copy is the one read and holds the latest data), determinism, and the
//! configuration errors.

use lamina_engine::config::{ConfigBuilder, SimConfig};
use lamina_engine::report::{Report, TraceInfo};
use lamina_engine::trace::{IoOp, IoRequest, TraceTime};
use lamina_engine::{SimulationBuilder, run_trace};

#[path = "../../../tests/support/shared.rs"]
mod shared;

use shared::{bundled, shared_traces};

// One channel, one chip, two dies of two planes, 4 KiB SLC pages of four 1 KiB
// partial-read units; PDCW striping puts LPN 0 on die 0 and LPN 2 on die 1.
const DEVICE: &str = r#"
[nand.geometry]
channels = 1
chips_per_channel = 1
dies_per_chip = 2
planes_per_die = 2
blocks_per_plane = 16
pages_per_block = 8
page_size_bytes = 4096
partial_read_bytes = 1024
cell_type = "slc"

[nand.timing]
t_cmd = 100
t_dbsy = 500
t_r = 50000
t_prog = 500000
t_bers = 2000000
t_suspend_program = 10000
t_resume = 5000
bus = { ns_per_byte = 1 }

[ftl]
overprovisioning = 0.3
gc_threshold = { free_blocks = 2 }
striping_order = "PDCW"

[sched]
scheduler = "multiplane"

[host]
verify = true

[remap]
policy = "micropages"
pages = 4
"#;

fn config(extra: &str) -> SimConfig {
    ConfigBuilder::new().toml("device", DEVICE).unwrap().toml("extra", extra).unwrap().build().unwrap()
}

fn read(at: u64, lpn: u64, unit: u64) -> IoRequest {
    IoRequest {
        arrival: TraceTime(at),
        device: 0,
        offset_bytes: lpn * 4096 + unit * 1024,
        size_bytes: 1024,
        op: IoOp::Read,
    }
}

fn run(cfg: SimConfig, reqs: Vec<IoRequest>) -> Report {
    let mut sim = SimulationBuilder::new(cfg).build().expect("config builds");
    sim.prefill(reqs.clone().into_iter().map(Ok)).unwrap();
    sim.run(reqs.into_iter().map(Ok)).unwrap();
    sim.report(TraceInfo { name: "t".into(), format: "test".into(), ..Default::default() })
}

/// Five times, 10 ms apart, unit 0 of LPN 0 and unit 3 of LPN 2 are read at the same
/// instant (soml-read Fig. 11b's two half pages). The first two sightings are counted;
/// the third closes the second group (threshold 2), so the copy starts then: two copy
/// reads and one program, done long before the fourth. The fourth and fifth are served
/// by the remap page, one flash read each (the second read of the pair joins the
/// first's, queued at the same instant).
#[test]
fn a_recurring_co_read_is_copied_and_then_served_by_one_read() {
    let mut reqs = Vec::new();
    for i in 0..5u64 {
        reqs.push(read(i * 10_000_000, 0, 0));
        reqs.push(read(i * 10_000_000, 2, 3));
    }
    let r = run(config(""), reqs.clone());
    let m = r.remap.clone().expect("remap section");
    assert_eq!(m.copies, 1);
    assert_eq!(m.copy_reads, 2);
    assert_eq!(m.hits, 4);
    assert_eq!(m.merged, 2);
    assert_eq!(m.partial_reads, 10);
    assert_eq!(r.flash.host_reads, 3 * 2 + 2, "three sightings read two pages, two are one read each");
    assert_eq!(r.flash.host_programs, 1, "the copy is the only program");
    assert_eq!(r.read.count, 10);
    assert_eq!(m.live_pages, 1);

    // Without remapping every sighting reads two pages; the run is otherwise the same.
    let base = run(config("[remap]\npolicy = \"none\""), reqs);
    assert!(base.remap.is_none());
    assert_eq!(base.flash.host_reads, 10);
    assert_eq!(base.flash.host_programs, 0);
}

/// The same recurring pair, but the second read of each sighting arrives 1 µs after the
/// first: on the idle die the first redirected read is already issued (sensing) when
/// the second arrives, so the second cannot join it while queued. With
/// `remap.join_in_flight` (the default) it waits for that read and takes its bytes from
/// the page register: a register read of t_cmd + 1 KiB at 1 ns/B = 1,124 ns after the
/// first read's 100 + 50,000 + 1,024 = 51,124 ns, instead of a second flash read queued
/// behind the first (another 51,124 ns). Each of the two served sightings saves exactly
/// t_R = 50,000 ns on its second read: the mean over the ten reads falls by 10,000 ns.
#[test]
fn a_read_arriving_while_the_remap_read_is_in_flight_is_served_from_the_register() {
    let mut reqs = Vec::new();
    for i in 0..5u64 {
        reqs.push(read(i * 10_000_000, 0, 0));
        reqs.push(read(i * 10_000_000 + 1_000, 2, 3));
    }
    let on = run(config(""), reqs.clone());
    let m = on.remap.clone().expect("remap section");
    assert_eq!((m.copies, m.hits, m.merged), (1, 4, 0));
    assert_eq!((m.joined_in_flight, m.register_reads, m.register_misses), (2, 2, 0));
    assert_eq!(on.flash.host_reads, 3 * 2 + 2, "the joined reads are not flash reads");
    assert_eq!(on.read.count, 10);

    let off = run(
        config(
            "[remap]
join_in_flight = false",
        ),
        reqs,
    );
    let o = off.remap.clone().expect("remap section");
    assert_eq!((o.hits, o.merged, o.joined_in_flight, o.register_reads), (4, 0, 0, 0));
    assert_eq!(off.flash.host_reads, 3 * 2 + 2 * 2, "each served sighting is two flash reads");
    let saved_ns = (off.read.mean_ns - on.read.mean_ns) * 10.0;
    assert!((saved_ns - 2.0 * 50_000.0).abs() < 1e-6, "saved {saved_ns} ns");
}

/// A write of a remapped page makes its copy stale: the next read of it goes to its
/// home page (verify mode checks the data), and once both members are written the
/// remap page is freed (unmapped).
#[test]
fn a_write_invalidates_the_copy_and_frees_the_page() {
    let mut reqs = Vec::new();
    for i in 0..4u64 {
        reqs.push(read(i * 10_000_000, 0, 0));
        reqs.push(read(i * 10_000_000, 2, 3));
    }
    let w = |at: u64, lpn: u64| IoRequest {
        arrival: TraceTime(at),
        device: 0,
        offset_bytes: lpn * 4096,
        size_bytes: 4096,
        op: IoOp::Write,
    };
    reqs.push(w(45_000_000, 0));
    reqs.push(read(50_000_000, 0, 0));
    reqs.push(read(50_000_000, 2, 3));
    reqs.push(w(55_000_000, 2));
    let r = run(config(""), reqs);
    let m = r.remap.expect("remap section");
    assert_eq!(m.copies, 1);
    assert_eq!(m.invalidated, 2);
    assert_eq!(m.freed, 1);
    assert_eq!(m.live_pages, 0);
    // The fourth sighting hit both (one merged); after the write only LPN 2 hits.
    assert_eq!((m.hits, m.merged), (3, 1));
}

/// The bundled fixtures (no `../shared` needed) on a tiny device with 512 B units and a
/// small remap pool (evictions), threshold 1: verify passes, and the run repeats
/// byte for byte.
#[test]
fn verify_and_determinism_with_remapping_on_the_bundled_fixtures() {
    let c = ConfigBuilder::new()
        .preset("die-binding-4x2")
        .unwrap()
        .set("nand.geometry.blocks_per_plane=16")
        .unwrap()
        .set("ftl.overprovisioning=0.25")
        .unwrap()
        .set("nand.geometry.partial_read_bytes=512")
        .unwrap()
        .set("remap.policy=\"micropages\"")
        .unwrap()
        .set("remap.threshold=1")
        .unwrap()
        .set("remap.pages=32")
        .unwrap()
        .set("host.verify=true")
        .unwrap()
        .build()
        .unwrap();
    let mut copies = 0;
    for f in ["fixtures/msr.csv.zst", "fixtures/spc.csv.zst", "fixtures/tencent.csv.zst"] {
        let t = bundled(f);
        let a = run_trace(&c, &t).unwrap_or_else(|e| panic!("{f}: {e}"));
        copies += a.remap.as_ref().expect("remap section").copies;
        let b = run_trace(&c, &t).unwrap();
        assert_eq!(a.to_json(), b.to_json(), "{f}: not deterministic");
    }
    assert!(copies > 0, "the fixtures must make some copies");
}

/// `--verify` with remapping on the read-dominant shared traces (and the write-heavier
/// Tencent cut, whose writes invalidate copies), on a device small enough for GC to move
/// remap pages: every redirected read returns the latest data of the units it reads.
#[test]
fn verify_passes_with_remapping_on_the_read_dominant_shared_traces() {
    let Some(dir) = shared_traces("verify_passes_with_remapping_on_the_read_dominant_shared_traces") else {
        return;
    };
    let (mut gc, mut hits, mut invalidated, mut evicted) = (0, 0, 0, 0);
    for t in [
        "mqsim-ascii/websearch.trace",
        "ssdsim-ascii/dtrs.ascii",
        "flashnet/tencent-cut-size-thpt.profile",
        "flashnet/tencent-cut-rw60-40.profile",
    ] {
        let c = ConfigBuilder::new()
            .preset("soml-base8")
            .unwrap()
            .set("nand.geometry.blocks_per_plane=8")
            .unwrap()
            .set("ftl.overprovisioning=0.3")
            .unwrap()
            .set("sched.scheduler=\"multiplane\"")
            .unwrap()
            .set("remap.policy=\"micropages\"")
            .unwrap()
            .set("remap.threshold=1")
            .unwrap()
            .set("remap.pages=64")
            .unwrap()
            .set("host.verify=true")
            .unwrap()
            .build()
            .unwrap();
        let r = run_trace(&c, &dir.join(t)).unwrap_or_else(|e| panic!("{t}: {e}"));
        let m = r.remap.expect("remap section");
        gc += r.gc.jobs;
        hits += m.hits;
        invalidated += m.invalidated;
        evicted += m.evicted;
    }
    assert!(
        gc > 0 && hits > 0 && invalidated > 0 && evicted > 0,
        "gc {gc} hits {hits} inv {invalidated} ev {evicted}"
    );

    // With the SOML scheduler: a read that joins a queued remap read widens it, and the
    // SOML reads the scheduler forms with the widened read are accepted by the device.
    let c = ConfigBuilder::new()
        .preset("soml-tlc64")
        .unwrap()
        .set("sched.scheduler=\"soml\"")
        .unwrap()
        .set("remap.policy=\"micropages\"")
        .unwrap()
        .set("remap.threshold=1")
        .unwrap()
        .set("trace.time_scale=0.1")
        .unwrap()
        .set("host.verify=true")
        .unwrap()
        .build()
        .unwrap();
    let r = run_trace(&c, &dir.join("flashnet/tencent-cut-size-thpt.profile")).unwrap();
    let m = r.remap.expect("remap section");
    assert!(m.merged > 0 && r.flash_ops.expect("flash ops").soml_read.ops > 0);
}

#[test]
fn remap_errors_name_the_key() {
    let build = |extra: &str| {
        let c = config(extra);
        SimulationBuilder::new(c).build().err().map(|e| e.to_string()).unwrap_or_default()
    };
    let e = build("[nand.geometry]\npartial_read_bytes = 4096");
    assert!(e.contains("remap.policy") && e.contains("partial_read_bytes"), "{e}");
    let e = build("[remap]\ngroup_units = 9");
    assert!(e.contains("remap.group_units"), "{e}");
    let e = build("[remap]\nthreshold = 0");
    assert!(e.contains("remap.threshold"), "{e}");
    let e = build("[remap]\npages = 100000");
    assert!(e.contains("remap.pages"), "{e}");
    // Replication and remapping are separate alternatives in soml-read §6.2.2 (Fig. 12
    // and 13); the combination is refused, naming both keys.
    let e = build("[nand.geometry]\nchips_per_channel = 2\n[ftl]\nreplication = \"rain1\"");
    assert!(e.contains("remap.policy") && e.contains("ftl.replication"), "{e}");
    let e = ConfigBuilder::new()
        .toml("device", DEVICE)
        .unwrap()
        .set("remap.windw=\"1ms\"")
        .and_then(|b| b.build())
        .err()
        .map(|e| e.to_string());
    assert!(e.as_ref().is_some_and(|e| e.contains("windw")), "{e:?}");
}
