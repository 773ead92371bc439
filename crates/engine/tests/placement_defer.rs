//! Deferring placement policies (`uq`, `dynamic`) and the undecided queue: hand-computed
//! timelines on a two-die `mbm` device (70 ns command, 10 ns/B, tR 78 µs, tPROG 1.3 ms),
//! and the report's `placement` counters.

use lamina_engine::config::ConfigBuilder;
use lamina_engine::trace::{IoOp, IoRequest, TraceTime};
use lamina_engine::{Completion, Simulation, SimulationBuilder};

const PAGE: u64 = 8192;
/// One 8 KiB page read: command + tR + transfer out.
const READ_NS: u64 = 70 + 78_000 + 8192 * 10;
/// One 8 KiB page program: command + transfer in + tPROG.
const PROG_NS: u64 = 70 + 8192 * 10 + 1_300_000;

/// Two channels, one single-plane die each, so "die idle and channel idle" is easy to
/// follow; no suspension.
fn sim(placement: &str) -> Simulation {
    let mut b = ConfigBuilder::new().preset("mbm").unwrap();
    for s in [
        "nand.suspension.program=false",
        "nand.suspension.erase=false",
        "nand.geometry.channels=2",
        "nand.geometry.chips_per_channel=1",
        "nand.geometry.dies_per_chip=1",
        "nand.geometry.planes_per_die=1",
        &format!("sched.placement=\"{placement}\""),
    ] {
        b = b.set(s).unwrap();
    }
    SimulationBuilder::new(b.build().unwrap()).build().unwrap()
}

fn write(t: u64, lpn: u64, bytes: u64) -> IoRequest {
    IoRequest {
        arrival: TraceTime(t),
        device: 0,
        offset_bytes: lpn * PAGE,
        size_bytes: bytes,
        op: IoOp::Write,
    }
}

/// Submit `reqs` in order, drain, and return every completion by submission id.
fn replay(s: &mut Simulation, reqs: &[IoRequest]) -> Vec<Completion> {
    for r in reqs {
        s.submit(*r).unwrap();
    }
    s.drain().unwrap();
    let mut done = Vec::new();
    s.take_completions(&mut done);
    done.sort_by_key(|c| c.id);
    done
}

/// Regression (issue #10 item 3). Under load UQ and dynamic fell behind static binding
/// with dies sitting idle. Cause: a partial-page write was *placed* first and its
/// read-modify-write read issued afterwards; the write was parked on the chosen die
/// until the read — queued behind whatever ran on the old page's die — finished, and a
/// die with a parked write is not idle to UQ, so that die took no other write all that
/// time. Now a deferring policy's write reads its old page first and is placed when its
/// data is complete.
///
/// Timeline: LPN 0 on die 0, LPN 1 on die 1 (UQ: fewest writes, ties to die 0), LPN 2
/// on die 0 at 20 ms (busy until 20 ms + PROG). At 20 ms + 1 µs a 4 KiB write of LPN 0
/// needs the old page, which is on the busy die 0. At 20 ms + 2 µs a full write of
/// LPN 3 arrives with die 1 idle on its idle channel: it must start at once.
/// Before the fix die 1 held the parked partial write, and LPN 3 waited until die 0's
/// program and the read-modify-write read were over (≈ 1.54 ms more).
#[test]
fn uq_write_is_not_held_behind_another_writes_read_modify_write() {
    for policy in ["uq", "dynamic"] {
        let mut s = sim(policy);
        let ms = 1_000_000;
        let done = replay(
            &mut s,
            &[
                write(0, 0, PAGE),
                write(10 * ms, 1, PAGE),
                write(20 * ms, 2, PAGE),
                write(20 * ms + 1_000, 0, 4096),
                write(20 * ms + 2_000, 3, PAGE),
            ],
        );
        let response = |i: usize| done[i].done.0 - done[i].arrival.0;
        assert_eq!(response(4), PROG_NS, "{policy}: the full write starts on the idle die at once");
        // The partial write: its read waits for die 0's program (ends 20 ms + PROG),
        // reads, and then programs on die 0 (die 1 is busy with LPN 3 until 20 ms + 2 µs
        // + PROG, later than the read ends).
        assert_eq!(response(3), PROG_NS + READ_NS + PROG_NS - 1_000, "{policy}");
        let r = s.report(Default::default());
        assert_eq!(r.flash.rmw_reads, 1);
        let p = &r.placement;
        assert_eq!(p.deferred, 1, "{policy}: only the partial write waited undecided");
        assert_eq!(
            p.undecided_wait_mean_ns,
            PROG_NS - 1_000 + READ_NS,
            "{policy}: from arrival to its read's end"
        );
    }
}

/// A write of a page whose older write still waits for its read-modify-write read must
/// not overtake it (the older data would end up mapped).
#[test]
fn writes_of_one_page_keep_their_order_across_pre_reads() {
    let mut s = sim("uq");
    let ms = 1_000_000;
    let done = replay(
        &mut s,
        &[
            write(0, 0, PAGE),
            write(20 * ms, 2, PAGE),
            write(20 * ms + 1_000, 0, 4096),
            write(20 * ms + 2_000, 0, PAGE),
        ],
    );
    // LPN 2 went to die 1 (fewest writes), so LPN 0's old page on die 0 is read at once.
    // The full rewrite of LPN 0 waits for the partial one: it is placed after the read.
    let end_partial = done[2].done.0;
    let end_full = done[3].done.0;
    assert!(end_full > 20 * ms + 1_000 + READ_NS, "the full write waited for the read: {end_full}");
    assert!(done[3].done.0 - done[3].arrival.0 > PROG_NS, "it did not start at once");
    assert!(end_full > end_partial, "programmed after the older write: {end_full} ≤ {end_partial}");
    let r = s.report(Default::default());
    assert_eq!(r.placement.deferred, 2, "both writes of LPN 0 waited undecided");
}

/// Static binding never defers: the undecided-queue counters stay zero while every
/// sub-write is one decision.
#[test]
fn static_binding_counts_decisions_only() {
    let mut s = sim("static");
    replay(&mut s, &[write(0, 0, 4 * PAGE), write(1_000, 8, PAGE)]);
    let p = s.report(Default::default()).placement;
    assert_eq!(p.decisions, 5);
    assert_eq!((p.deferred, p.rechecks, p.rechecks_empty), (0, 0, 0));
    assert!(p.redirect.is_none());
}

/// Regression (found while fixing the test above, on the MSR rw20-80 cut, 4x4, UQ, load
/// 0.003): read-modify-write reads issued before placement first carried their write's
/// request. Pre-reads of one page are interchangeable (each readies the oldest waiting
/// write of the page), so a read could ready another write than its own; that write
/// completed, its request was freed, and the late read then touched the freed request
/// ("slab: get of a free handle"; reads of one page end out of order when they wait on
/// different dies — which move of the page put them there in this run we did not
/// trace). They now belong to no request. The whole trace runs with verify on, every
/// request completes.
#[test]
fn pre_reads_finishing_out_of_order_touch_no_finished_request() {
    #[path = "../../../tests/support/shared.rs"]
    mod shared;
    let Some(dir) = shared::shared_traces("pre_reads_finishing_out_of_order_touch_no_finished_request")
    else {
        return;
    };
    for policy in ["uq", "dynamic"] {
        let mut b = ConfigBuilder::new().preset("die-binding-4x4").unwrap();
        for s in [&format!("sched.placement=\"{policy}\""), "trace.time_scale=0.003", "host.verify=true"] {
            b = b.set(s).unwrap();
        }
        let cfg = b.build().unwrap();
        let r = lamina_engine::run_trace(&cfg, &dir.join("flashnet/msr-cut-rw20-80.trace")).unwrap();
        assert_eq!(r.read.count + r.write.count, r.trace.requests, "{policy}");
        assert!(r.flash.rmw_reads > 0 && r.placement.deferred > 0, "{policy}: the path is exercised");
    }
}
