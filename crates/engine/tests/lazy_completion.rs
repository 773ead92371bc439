//! Lazy completion (`SimulationBuilder::lazy_completion`, docs/performance.md, "Round of
//! 2026-11-30") changes no result: runs with it on and off give byte-identical reports
//! where its bookkeeping is most strained — reads that suspend GC erases, so that a die
//! may hold an erase and reads at once, with GC running throughout.
//! And under a backlog, where almost every page is issued with work queued behind it
//! on its die, so that its lazy completion is scheduled as it is issued.
//! (The swarm compares the two on every random case; this pins the cases it meets
//! rarely or briefly.)

use lamina_engine::SimulationBuilder;
use lamina_engine::config::ConfigBuilder;
use lamina_engine::report::{Report, TraceInfo};
use lamina_engine::trace::{IoOp, IoRequest, TraceTime};

const PAGE: u64 = 8192;

/// MQSim's default timing (erase suspension on, program suspension off) on four dies
/// (two channels) of two planes with few blocks, so that GC erases run most of the time.
fn config(sets: &[&str]) -> lamina_engine::config::SimConfig {
    let mut b = ConfigBuilder::new().preset("mqsim-default").unwrap();
    for s in [
        "nand.geometry.channels=2",
        "nand.geometry.chips_per_channel=1",
        "nand.geometry.dies_per_chip=2",
        "nand.geometry.planes_per_die=2",
        "nand.geometry.blocks_per_plane=32",
        "nand.geometry.pages_per_block=64",
        "ftl.overprovisioning=0.25",
        "host.unwritten_reads=zero",
    ]
    .iter()
    .chain(sets)
    {
        b = b.set(s).unwrap();
    }
    b.build().unwrap()
}

/// A deterministic xorshift stream from `seed` (not 0).
fn xorshift(mut x: u64) -> impl FnMut() -> u64 {
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }
}

/// A deterministic mix over a small logical space: writes that keep GC busy, and bursts
/// of single-page reads a few microseconds apart (several arrive within one read's
/// time, while an erase may be suspended).
fn workload(logical_pages: u64) -> Vec<IoRequest> {
    let mut next = xorshift(0x9E37_79B9_7F4A_7C15);
    let mut t = 0u64;
    let mut out = Vec::new();
    for i in 0..20_000u64 {
        let r = next();
        let burst = i % 50 >= 40;
        t += if burst { 2_000 + r % 3_000 } else { 1_000_000 + r % 2_000_000 };
        let lpn = next() % logical_pages;
        let op = if burst || r % 3 == 0 { IoOp::Read } else { IoOp::Write };
        let pages = if op == IoOp::Write { 1 + r % 3 } else { 1 };
        let lpn = lpn.min(logical_pages - pages);
        out.push(IoRequest {
            arrival: TraceTime(t),
            device: 0,
            offset_bytes: lpn * PAGE,
            size_bytes: pages * PAGE,
            op,
        });
    }
    out
}

fn run(cfg: &lamina_engine::config::SimConfig, lazy: bool) -> Report {
    let mut sim = SimulationBuilder::new(cfg.clone()).lazy_completion(lazy).build().unwrap();
    let reqs = workload(sim.logical_pages());
    sim.run(reqs.into_iter().map(Ok)).unwrap();
    sim.report(TraceInfo { name: "lazy".into(), format: "test".into(), ..Default::default() })
}

#[test]
fn reads_suspending_gc_erases_give_the_same_report_with_and_without_lazy_completion() {
    for sets in [&[][..], &["sched.arbiter=fcfs"][..]] {
        let cfg = config(sets);
        let lazy = run(&cfg, true);
        let eager = run(&cfg, false);
        // The case is the one meant: GC erases ran and reads suspended some of them.
        assert!(lazy.erases.total > 0, "{sets:?}: no GC erase");
        assert!(lazy.suspensions > 0, "{sets:?}: no read suspended an erase");
        assert_eq!(lazy.to_json(), eager.to_json(), "{sets:?}: lazy completion changed the report");
    }
}

/// Requests offered far faster than four dies serve them, through a bounded host queue:
/// the dies' queues never empty, so almost every page is issued with work queued behind
/// it (its lazy completion is an event from the start, `new_inline_op`).
fn backlog(logical_pages: u64) -> Vec<IoRequest> {
    let mut next = xorshift(0x2545_F491_4F6C_DD1D);
    (0..6_000u64)
        .map(|i| {
            let r = next();
            let op = if r % 2 == 0 { IoOp::Read } else { IoOp::Write };
            let pages = 1 + r % 4;
            let lpn = (next() % logical_pages).min(logical_pages - pages);
            IoRequest {
                arrival: TraceTime(i * 5_000),
                device: 0,
                offset_bytes: lpn * PAGE,
                size_bytes: pages * PAGE,
                op,
            }
        })
        .collect()
}

#[test]
fn a_backlog_on_every_die_gives_the_same_report_with_and_without_lazy_completion() {
    let cfg = config(&["host.queue_depth=64"]);
    let report = |lazy: bool| {
        let mut sim = SimulationBuilder::new(cfg.clone()).lazy_completion(lazy).build().unwrap();
        let reqs = backlog(sim.logical_pages());
        sim.run(reqs.into_iter().map(Ok)).unwrap();
        sim.report(TraceInfo { name: "backlog".into(), format: "test".into(), ..Default::default() })
    };
    let (lazy, eager) = (report(true), report(false));
    // The case is the one meant: the dies were busy almost all the time and requests
    // waited far longer than a program takes (0.75 ms): 64 requests in the device keep
    // a queue on every die.
    assert!(lazy.utilisation.die_mean > 0.9, "dies idle: {}", lazy.utilisation.die_mean);
    assert!(lazy.write_wait.mean_ns > 1e8, "no backlog: {}", lazy.write_wait.mean_ns);
    assert_eq!(lazy.to_json(), eager.to_json(), "lazy completion changed the report under a backlog");
}
