//! The GC timeline diagnostic (`SimulationBuilder::gc_timeline`) on the hand-timeline
//! device (`timeline/mod.rs`: two dies of two planes, 8 blocks × 4 pages, GC below 2
//! free blocks a plane) with die-aligned allocation, and the mechanism it was built to
//! show (docs/results.md, "Under GC pressure: grouping costs reads").
//!
//! The workload overwrites die 0's logical pages (LPN ≡ 0, 1 mod 4 under `PDCW`) with
//! two-page requests, one every 1.2 ms, and reads one of them every fourth request.
//! Die-aligned allocation opens a host row by taking a free block on *both* planes of
//! the die at once, so one row opening puts both planes below the GC threshold; the
//! engine starts a plane's GC job after a command programs that plane.
//! - `fcfs` issues the request's two writes as two commands: the first opens the row and
//!   starts GC on its plane only; GC (blocking) keeps the second write off the die, so
//!   the sibling plane's job starts only after the first job ends. Every GC period
//!   holds one plane's job, and at each first job the sibling already needs GC.
//! - `multiplane` issues both writes in one dispatch, programming both planes: both
//!   jobs start at that instant and run in one period, which every blocked read waits
//!   out whole.

mod timeline;

use lamina_engine::trace::{IoOp, IoRequest};
use lamina_engine::{Completion, GcTimelineSummary, SimulationBuilder};
use timeline::*;

/// The workload described in the module docs.
fn workload() -> (Vec<u64>, Vec<IoRequest>) {
    let die0: Vec<u64> = (0..80).filter(|l| l % 4 < 2).collect();
    let mut reqs = Vec::new();
    let mut t = 0;
    for _ in 0..6 {
        for k in (0..80u64).step_by(4) {
            reqs.push(req(t, IoOp::Write, k * PAGE, 2 * PAGE));
            t += 1_200_000;
            if k % 16 == 0 {
                reqs.push(req(t, IoOp::Read, (k + 1) * PAGE, PAGE));
            }
        }
    }
    (die0, reqs)
}

/// Run the workload under `scheduler` with die-aligned allocation, with or without the
/// timeline: its summary, the report as JSON, the completions in submission order.
fn run_with(scheduler: &str, timeline: bool) -> (Option<GcTimelineSummary>, String, Vec<Completion>) {
    let cfg = config(&format!("[sched]\nscheduler = \"{scheduler}\"\n[ftl]\nallocation = \"die-aligned\"\n"));
    let (prefill, reqs) = workload();
    let builder = SimulationBuilder::new(cfg);
    let builder = if timeline { builder.gc_timeline() } else { builder };
    let mut sim = builder.build().expect("config builds");
    let done = replay(&mut sim, PAGE, &prefill, &reqs);
    let report = serde_json::to_string(&report_of(&sim)).expect("report serialises");
    (sim.gc_timeline().map(|t| t.summary()), report, done)
}

fn mean_read_response(done: &[Completion]) -> f64 {
    let reads: Vec<u64> = done.iter().filter(|c| c.op == IoOp::Read).map(response).collect();
    reads.iter().sum::<u64>() as f64 / reads.len() as f64
}

#[test]
fn the_timeline_is_observational() {
    for scheduler in ["fcfs", "multiplane"] {
        let (on, with, _) = run_with(scheduler, true);
        let (off, without, _) = run_with(scheduler, false);
        assert!(on.is_some() && off.is_none(), "{scheduler}: recorded only when asked for");
        assert_eq!(with, without, "{scheduler}: the report does not depend on the timeline");
    }
}

#[test]
fn fcfs_runs_one_planes_gc_at_a_time_and_multiplane_both_planes_at_once() {
    let (fcfs, fcfs_report, fcfs_done) = run_with("fcfs", true);
    let (mp, _, mp_done) = run_with("multiplane", true);
    let (fcfs, mp) = (fcfs.expect("on"), mp.expect("on"));
    let jobs = |report: &str| {
        let v: serde_json::Value = serde_json::from_str(report).expect("json");
        v["gc"]["jobs"].as_u64().expect("gc.jobs")
    };
    assert_eq!(fcfs.jobs, jobs(&fcfs_report), "the timeline sees every GC job");
    assert!(fcfs.jobs >= 20 && mp.jobs == fcfs.jobs, "GC runs, as often under both: {fcfs:?} {mp:?}");

    // fcfs: never two jobs of a die at once; every row opening leaves the sibling
    // plane needing GC without a job (half of the jobs start so).
    assert_eq!(fcfs.jobs_beside_another, 0);
    assert_eq!(fcfs.periods[1].periods, 0);
    assert_eq!(fcfs.periods[0].jobs, fcfs.jobs);
    assert_eq!(2 * fcfs.jobs_with_sibling_waiting, fcfs.jobs);
    assert_eq!(fcfs.blocked[1].reads, 0);

    // multiplane: every period begins with both planes' jobs at the one dispatch that
    // programmed both planes (here one two-plane program: no misaligned row).
    assert_eq!(mp.periods[0].periods, 0);
    assert_eq!(mp.periods[1].periods, mp.jobs / 2);
    assert_eq!(mp.periods[1].began_together, mp.periods[1].periods);
    assert_eq!(mp.multi_program_dispatches, 0);
    assert_eq!(mp.jobs_beside_another, mp.jobs / 2);
    assert_eq!(mp.blocked[0].reads, 0);
    assert!(mp.blocked[1].reads > 0);

    // Each blocked read under multiplane waits out both planes' GC together.
    assert!(
        mean_read_response(&mp_done) > mean_read_response(&fcfs_done),
        "reads wait longer: {} vs {} ns",
        mean_read_response(&mp_done),
        mean_read_response(&fcfs_done)
    );
}

/// With program and erase suspension on and no host reads, every suspension would be a
/// GC read's, and the timeline counts each one. A GC dispatch under a grouping scheduler
/// takes a step of each queued job of the die and issues the steps that do not align as
/// separate commands; one job's move read issued after another job's program or erase
/// would suspend the controller's own command an instant after issuing it. The driver
/// issues a dispatch's reads first, so no GC read suspends anything here, under any
/// scheduler (before that fix, `multiplane` counted suspensions on this workload).
#[test]
fn no_gc_read_suspends_a_command_of_its_own_dispatch() {
    let mut counts = Vec::new();
    for scheduler in ["fcfs", "multiplane", "sprinkler", "mbm"] {
        let cfg = config(&format!(
            "[sched]\nscheduler = \"{scheduler}\"\n[ftl]\nallocation = \"die-aligned\"\n\
             [nand.suspension]\nprogram = true\nerase = true\n"
        ));
        // One-page overwrites of every fourth LPN (die 0, plane 0 under PDCW; die-aligned
        // allocation spreads them over the die's two planes), 1.2 ms apart, 10 rounds.
        let mut reqs = Vec::new();
        for round in 0..10u64 {
            for (i, k) in (0..80u64).step_by(4).enumerate() {
                reqs.push(req((round * 20 + i as u64) * 1_200_000, IoOp::Write, k * PAGE, PAGE));
            }
        }
        let mut sim = SimulationBuilder::new(cfg).gc_timeline().build().expect("config builds");
        let die0: Vec<u64> = (0..80u64).filter(|l| l % 4 < 2).collect();
        replay(&mut sim, PAGE, &die0, &reqs);
        let s = sim.gc_timeline().expect("on").summary();
        let report = report_of(&sim);
        assert!(s.jobs > 20, "{scheduler}: GC runs ({} jobs)", s.jobs);
        assert_eq!(s.reads, 0, "{scheduler}: no host reads");
        assert_eq!(s.gc_read_suspensions, report.suspensions, "{scheduler}: every suspension is a GC read's");
        counts.push((scheduler, s.jobs, s.gc_read_suspensions));
    }
    assert!(
        counts.iter().all(|c| c.2 == 0),
        "no GC read suspends (scheduler, jobs, suspensions): {counts:?}"
    );
}
