//! Closed-form timing of single requests and hand-computed queueing of bursts, on the
//! `mbm` preset (mbm-ftl Table I: 70 ns command, 10 ns/B, tR 78 µs, tPROG 1.3 ms).

use lamina_engine::config::ConfigBuilder;
use lamina_engine::trace::TraceTime;
use lamina_engine::trace::{IoOp, IoRequest};
use lamina_engine::{Simulation, SimulationBuilder};

const PAGE: u64 = 8192;
/// One 8 KiB page read: command + tR + transfer out.
const READ_NS: u64 = 70 + 78_000 + 8192 * 10;
/// One 8 KiB page program: command + transfer in + tPROG.
const PROG_NS: u64 = 70 + 8192 * 10 + 1_300_000;

fn sim(sets: &[&str]) -> Simulation {
    let mut b = ConfigBuilder::new().preset("mbm").unwrap();
    // No suspension so bursts queue plainly; no RMW noise.
    for s in ["nand.suspension.program=false", "nand.suspension.erase=false"].iter().chain(sets) {
        b = b.set(s).unwrap();
    }
    SimulationBuilder::new(b.build().unwrap()).build().unwrap()
}

fn req(t: u64, op: IoOp, lpn: u64, pages: u64) -> IoRequest {
    IoRequest { arrival: TraceTime(t), device: 0, offset_bytes: lpn * PAGE, size_bytes: pages * PAGE, op }
}

fn run(sim: &mut Simulation, reqs: Vec<IoRequest>) -> lamina_engine::report::Report {
    sim.prefill(reqs.clone().into_iter().map(Ok)).unwrap();
    sim.run(reqs.into_iter().map(Ok)).unwrap();
    sim.report(lamina_engine::report::TraceInfo {
        name: "t".into(),
        format: "test".into(),
        digest: String::new(),
        requests: 0,
        skipped: 0,
        wrapped: 0,
        ..Default::default()
    })
}

#[test]
fn single_read_on_idle_device_has_closed_form_latency() {
    let mut s = sim(&[]);
    let r = run(&mut s, vec![req(1_000, IoOp::Read, 5, 1)]);
    assert_eq!(r.read.count, 1);
    assert_eq!(r.read.mean_ns, READ_NS as f64);
    assert!(r.read.max_ns.abs_diff(READ_NS) * 1000 <= READ_NS, "HDR max within 0.1 %");
    assert_eq!(r.sim_time_ns, READ_NS);
}

#[test]
fn single_write_without_buffer_has_closed_form_latency() {
    let mut s = sim(&[]);
    let r = run(&mut s, vec![req(0, IoOp::Write, 7, 1)]);
    assert_eq!(r.write.mean_ns, PROG_NS as f64);
    assert_eq!(r.waf, Some(1.0));
}

#[test]
fn burst_of_writes_on_one_die_queues_by_hand() {
    // One channel, one chip, one die, one plane: every page lands on the same die.
    let mut s = sim(&[
        "nand.geometry.channels=1",
        "nand.geometry.chips_per_channel=1",
        "nand.geometry.dies_per_chip=1",
        "nand.geometry.planes_per_die=1",
    ]);
    let r =
        run(&mut s, vec![req(0, IoOp::Write, 1, 1), req(0, IoOp::Write, 2, 1), req(0, IoOp::Write, 3, 1)]);
    // The die runs one program at a time: completions at 1, 2 and 3 × PROG_NS.
    assert_eq!(r.write.count, 3);
    assert_eq!(r.write.mean_ns, (PROG_NS + 2 * PROG_NS + 3 * PROG_NS) as f64 / 3.0);
    // Waits: the second starts after the first program, the third after two.
    assert_eq!(r.write_wait.mean_ns, (PROG_NS + 2 * PROG_NS) as f64 / 3.0);
}

#[test]
fn reads_on_two_dies_overlap_array_time_but_share_the_bus() {
    // One channel, one chip, two dies, one plane each. Static striping puts LPN 0 and 1
    // on different dies.
    let mut s = sim(&[
        "nand.geometry.channels=1",
        "nand.geometry.chips_per_channel=1",
        "nand.geometry.dies_per_chip=2",
        "nand.geometry.planes_per_die=1",
    ]);
    let r = run(&mut s, vec![req(0, IoOp::Read, 0, 1), req(0, IoOp::Read, 1, 1)]);
    // Read A: cmd [0,70], array [70, 78070], out [78070, 160000 - 10] = READ_NS.
    // Read B: cmd [70,140], array [140, 78140], out waits for the bus: [READ_NS, READ_NS + 81920].
    let b = READ_NS + 8192 * 10;
    assert_eq!(r.read.mean_ns, (READ_NS + b) as f64 / 2.0);
}

#[test]
fn buffered_write_completes_at_dram_latency_and_reads_hit() {
    let mut s = sim(&[
        "buffer.size_bytes=1048576",
        "buffer.dram_latency=\"2us\"",
        "buffer.dram_bandwidth_bytes_per_s=1000000000",
    ]);
    let r = run(&mut s, vec![req(0, IoOp::Write, 3, 2), req(100_000, IoOp::Read, 3, 2)]);
    // 2 µs latency + 16 KiB at 1 GB/s (16,384 ns), for the write and the read hit.
    assert_eq!(r.write.mean_ns, 18_384.0);
    assert_eq!(r.read.mean_ns, 18_384.0);
    assert_eq!(r.buffer.read_hit_ratio, 1.0);
    assert_eq!(r.flash.host_programs, 0, "nothing flushed yet");
}

#[test]
fn host_queue_depth_one_serialises_requests() {
    let mut s = sim(&["host.queue_depth=1"]);
    // Two reads on different channels would overlap; depth 1 serialises them, and the
    // second's response counts from its arrival.
    let r = run(&mut s, vec![req(0, IoOp::Read, 0, 1), req(0, IoOp::Read, 1, 1)]);
    assert_eq!(r.read.mean_ns, (READ_NS + 2 * READ_NS) as f64 / 2.0);
    assert_eq!(r.events.peak_outstanding, 1);
}

#[test]
fn closed_loop_keeps_depth_outstanding_and_ignores_timestamps() {
    let mut s = sim(&["host.mode=\"closed\"", "host.closed_loop_depth=2"]);
    let reqs: Vec<_> = (0..20).map(|i| req(i * 1_000_000_000, IoOp::Read, i, 1)).collect();
    let r = run(&mut s, reqs);
    assert_eq!(r.read.count, 20);
    assert_eq!(r.events.peak_outstanding, 2);
    // Timestamps 1 s apart are ignored: the whole run takes microseconds per request.
    assert!(r.sim_time_ns < 20 * 2 * READ_NS, "{}", r.sim_time_ns);
}

#[test]
fn read_modify_write_reads_the_old_page_first() {
    let mut s = sim(&[]);
    // Write a full page, then a 4 KiB write into it: the second reads the page first.
    let small = IoRequest {
        arrival: TraceTime(10_000_000),
        device: 0,
        offset_bytes: 9 * PAGE,
        size_bytes: 4096,
        op: IoOp::Write,
    };
    let r = run(&mut s, vec![req(0, IoOp::Write, 9, 1), small]);
    assert_eq!(r.flash.rmw_reads, 1);
    // Second write: read (cmd + tR + 8 KiB out) then program.
    assert!(r.write.max_ns.abs_diff(READ_NS + PROG_NS) * 1000 <= READ_NS + PROG_NS);
    let mut s = sim(&["host.read_modify_write=false"]);
    let small = IoRequest {
        arrival: TraceTime(10_000_000),
        device: 0,
        offset_bytes: 9 * PAGE,
        size_bytes: 4096,
        op: IoOp::Write,
    };
    let r = run(&mut s, vec![req(0, IoOp::Write, 9, 1), small]);
    assert_eq!(r.flash.rmw_reads, 0);
}

#[test]
fn config_errors_name_the_key() {
    let e =
        ConfigBuilder::new().preset("mbm").unwrap().set("host.quue_depth=3").unwrap().build().unwrap_err();
    assert!(e.to_string().contains("quue_depth"), "{e}");
    let e = ConfigBuilder::new().preset("nope").unwrap().build().unwrap_err();
    assert!(e.to_string().contains("nope"), "{e}");
    let e = ConfigBuilder::new()
        .preset("mbm")
        .unwrap()
        .set("nand.timing.t_r=12 parsecs")
        .unwrap()
        .build()
        .unwrap_err();
    assert!(e.to_string().contains("t_r") || e.to_string().contains("parsecs"), "{e}");
    assert!(ConfigBuilder::new().set("novalue").is_err());
    let e = ConfigBuilder::new().build().unwrap_err();
    assert!(e.to_string().contains("nand"), "{e}");
}

#[test]
fn read_only_trace_runs_and_reports_no_waf() {
    // SSDsim crashed on read-only traces; here every read hits prefilled flash.
    let mut s = sim(&[]);
    let reqs: Vec<_> = (0..50).map(|i| req(i * 1_000_000, IoOp::Read, i * 3, 2)).collect();
    let r = run(&mut s, reqs);
    assert_eq!(r.read.count, 50);
    assert_eq!(r.write.count, 0);
    assert_eq!(r.waf, None, "WAF is undefined without host programs");
    assert_eq!(r.flash.host_programs, 0);
    assert_eq!(r.flash.host_reads, 100);
}
