//! One regression test per engine bug the swarm (`tests/swarm.rs`) found, each shrunk
//! to a small configuration and trace and checked with the swarm's own invariant checker.
//!
//! A test is `#[ignore = "engine bug: …"]` while its bug is open, and the swarm matches
//! the bug's violations through `swarm_harness::KNOWN_BUGS`, which names the test. To
//! close a bug: fix the engine, remove the `#[ignore]` and the `KNOWN_BUGS` entry, and
//! run the swarm with `LAMINA_SWARM_STRICT=1`. Every bug below is fixed (the first five: issue #8).

mod swarm_harness;

use lamina_engine::config::{ConfigBuilder, SimConfig};
use lamina_engine::trace::{IoOp, IoRequest};
use swarm_harness::check;

/// The smallest device of these tests: one die, one plane, 8 blocks × 4 pages of 4 KiB
/// SLC, tR 50 us, tPROG 500 us, tBERS 2 ms, GC below 2 free blocks.
const TINY: &str = r#"
[nand.geometry]
channels = 1
chips_per_channel = 1
dies_per_chip = 1
planes_per_die = 1
blocks_per_plane = 8
pages_per_block = 4
page_size_bytes = 4096
cell_type = "slc"

[nand.timing]
t_cmd = 0
t_r = 50000
t_prog = 500000
t_bers = 2000000
bus = { ns_per_byte = 1 }

[ftl]
overprovisioning = 0.3
gc_threshold = { free_blocks = 2 }

[host]
verify = true
"#;

/// [`TINY`] with `extra` TOML merged over it.
fn config(extra: &str) -> SimConfig {
    ConfigBuilder::new().toml("tiny", TINY).unwrap().toml("extra", extra).unwrap().build().unwrap()
}

fn req(arrival_ns: u64, op: IoOp, offset_bytes: u64, size_bytes: u64) -> IoRequest {
    IoRequest {
        arrival: lamina_engine::trace::TraceTime(arrival_ns),
        device: 0,
        offset_bytes,
        size_bytes,
        op,
    }
}

/// Run the swarm checker; fail on violations of the invariants `ids` (other known bugs
/// may show up in the same run and are not this test's business).
fn assert_holds(ids: &[&str], cfg: &SimConfig, reqs: &[IoRequest]) {
    check::quiet_panics();
    let v: Vec<_> = check::check(cfg, reqs).into_iter().filter(|v| ids.contains(&v.id)).collect();
    assert!(v.is_empty(), "violations: {v:#?}");
}

// Swarm seeds 84, 1, 10, 25, 71, 91, 101, 132, 151, 160, 166, 195, 222, 267, 278 (15 of
// the first 300) panic with "N requests never completed" (sim.rs, end of `run`): the run
// ends with requests still waiting for write-buffer space. Every such seed has a buffer
// of only a few pages. Seed 84 (3-page buffer of 1 KiB pages, closed loop, write-order
// placement) shrank to two writes arriving together: 3 pages at LPN 59 and 7 pages at
// LPN 59. Shrunk further by hand: a 2-page buffer with `flush_watermark = 0.5` and two
// writes arriving together, 2 pages then 3 pages over the same LPNs 0..: the second
// write's third page waits for space forever (the run panics with "1 requests never
// completed"; with watermark 0, or with one write, it completes). The waiter is only
// retried when a flush completes, and here no flush is in flight when it starts to wait.
#[test]
fn overwrite_waiting_for_buffer_space_completes() {
    let cfg = config("[buffer]\nsize_bytes = 8192\nflush_watermark = 0.5\n");
    let reqs = [req(0, IoOp::Write, 0, 2 * 4096), req(0, IoOp::Write, 0, 3 * 4096)];
    assert_holds(&["run.panic", "run.error"], &cfg, &reqs);
}

// Swarm seeds 96, 153, 167, 206, 218, 226, 240, 264, 292 (9 of the first 300) abort with
// "FTL error at …: plane P has no free page for host writes; run GC or choose another
// plane": the engine issues a host write to a plane whose free pages are exhausted while
// a GC job for it is queued behind that write. Seed 226 (2 dies × 1 plane, 23 blocks,
// GC threshold 2 blocks, lacr, fcfs arbiter, preemptible GC, closed loop 42) shrank to
// 242 requests. Shrunk by hand: one plane, fcfs arbiter with preemptible GC (GC no
// longer precedes host writes that are older than the GC job), a burst of 40 one-page
// overwrites of 4 LPNs at time 0: the queued writes run ahead of GC and use up the
// plane. Whatever the arbiter decides, a host write must wait for free space (or GC
// must be forced ahead) instead of aborting the run.
#[test]
fn queued_writes_do_not_exhaust_a_plane_before_gc() {
    let cfg = config("[sched]\narbiter = \"fcfs\"\ngc = \"preemptible\"\n");
    let reqs: Vec<IoRequest> = (0..40).map(|i| req(0, IoOp::Write, (i % 4) * 4096, 4096)).collect();
    assert_holds(&["run.error", "run.panic"], &cfg, &reqs);
}

// Swarm seeds 5, 8, 21, 26, 28, 97, 98, 247 and about a third of the first 300 report a
// die (or channel) utilisation above 1 (up to 2.0): busy time is summed over the whole
// run but divided by the span from the first arrival to the last *request completion*;
// GC steps and buffer flushes that run after the last completion (or before the first
// arrival, for closed-loop runs) are busy time outside that span. Seed 247 shrank to 86
// requests; by hand: eight one-page writes at time 0 to a preconditioned (full) tiny
// device start GC jobs (page moves and 2 ms erases) that run after the last write
// completes, and die_max comes out at 1.15 — a die busy 115 % of the time. // Either the span must end when the device goes idle, or busy
// time must be clipped to the span — and docs/model.md must say which.
#[test]
fn utilisation_stays_within_one_when_gc_outlives_the_last_request() {
    let cfg = config("[precondition]\nfill_fraction = 1.0\nmax_overwrite_passes = 1.0\n");
    let reqs: Vec<IoRequest> = (0..8).map(|i| req(0, IoOp::Write, i * 4096, 4096)).collect();
    assert_holds(&["utilisation.range"], &cfg, &reqs);
}

// Swarm seeds 0, 26, 28, 99 and many more: a latency class whose samples are all (or
// nearly all) 0 ns reports `min_ns` = 1 above `mean_ns` = 0 — zero-latency samples are
// recorded in the HDR histogram as 1 ns (stats.rs) while the mean is exact, so the
// report contradicts itself (issue #8 item 6: "waits of 0 ns appear as 1 ns"). Shrunk:
// two reads of never-written pages with `unwritten_reads = "zero"` (they complete
// instantly, with zero wait).
#[test]
fn zero_latency_samples_keep_min_at_or_below_mean() {
    let cfg = config("[host]\nunwritten_reads = \"zero\"\n");
    assert_holds(
        &["latency.min_le_mean"],
        &cfg,
        &[req(0, IoOp::Read, 0, 4096), req(1000, IoOp::Read, 4096, 4096)],
    );
}

// Swarm seed 247 (2 ch × 2 chips × 2 dies × 3 planes, 30 blocks × 8 pages of 1 KiB, ocr
// placement, copyback, blocking GC, open loop queue depth 45, preconditioned to 85 %,
// no buffer): host page reads + unwritten reads exceed the pages the trace reads
// (15697 + 6058 = 21755 > 21752), i.e. some read sub-requests are counted twice. The
// trace shrank to three requests arriving at time 0: a 10-page read at byte 5120, a
// 39-page write at byte 6656 and a 39-page trim at byte 5632 — a read queued behind
// writes and trims of its pages is counted again when it is re-queued (redirected to
// another die or found trimmed).
#[test]
fn every_read_page_is_counted_once() {
    let cfg = ConfigBuilder::new().toml("seed247", SEED_247).unwrap().build().unwrap();
    let reqs =
        [req(0, IoOp::Read, 5120, 10240), req(0, IoOp::Write, 6656, 39936), req(0, IoOp::Trim, 5632, 39936)];
    assert_holds(&["flash.host_reads"], &cfg, &reqs);
}

/// Swarm seed 247's configuration as drawn.
const SEED_247: &str = r#"
seed = 2603608119434602455

[nand.geometry]
channels = 2
chips_per_channel = 2
dies_per_chip = 2
planes_per_die = 3
blocks_per_plane = 30
pages_per_block = 8
page_size_bytes = 1024
cell_type = "slc"
layers = 7
page_type_order = "grouped"

[nand.timing]
t_cmd = 232
t_r = [66000]
t_prog = 2301000
t_bers = 4334000
t_dbsy = 113
bus = { width_bits = 16, rate_mts = 950 }

[nand.timing.layer_speed]
ratio = 3.6
curve = "geometric"
slow_end = "top"

[ftl]
overprovisioning = 0.32
gc_threshold = { free_blocks = 4 }
striping_order = "CPDW"
victim_tie_break = "oldest"
copyback = true
wear_leveling = false

[sched]
placement = "ocr"
arbiter = "read-first"
gc = "blocking"

[buffer]
size_bytes = 0
flush_watermark = 0.48
idle_flush_after = 13853000
dram_latency = 1631

[host]
mode = "open"
queue_depth = 45
closed_loop_depth = 26
read_modify_write = true
unwritten_reads = "prefill"
verify = true

[precondition]
fill_fraction = 0.85
fill_order = "random"
max_overwrite_passes = 1.6
window_fraction = 0.01
waf_epsilon = 0.02
stable_windows = 3
"#;

/// The harness itself passes a healthy run apart from the known bugs (so an ignored test
/// above fails because of its bug, not because the checker rejects everything).
#[test]
fn checker_passes_a_plain_run() {
    let cfg = config("");
    let reqs: Vec<IoRequest> = (0..8)
        .map(|i| req(i * 1_000_000, if i % 2 == 0 { IoOp::Write } else { IoOp::Read }, (i / 2) * 4096, 4096))
        .collect();
    check::quiet_panics();
    let v: Vec<_> = check::check(&cfg, &reqs)
        .into_iter()
        .filter(|v| !swarm_harness::KNOWN_BUGS.iter().any(|b| (b.matches)(v, &cfg)))
        .collect();
    assert!(v.is_empty(), "violations: {v:#?}");
}

// Swarm seed 21235 (found 2026-12-02 running seeds 20000..23000) panicked with "a queued
// remap read is in its die's queue": under `remap.policy = "micropages"` a host read of
// a remap page joins the read of the same remap page that is still queued, widening its
// byte range in the die's read queue. Under a block-mapped FTL (`nftl`) a queued read
// first runs its translation step (spare-area reads of the log block), and for that time
// it is out of its queue; the joining read looked for it there and panicked. Shrunk from
// 868 requests to these 17 (delta debugging with the swarm checker) on the seed's device.
#[test]
fn a_read_joins_a_remap_read_in_its_translation_step() {
    let cfg = ConfigBuilder::new()
        .toml(
            "seed-21235",
            r#"
[nand.geometry]
channels = 3
chips_per_channel = 1
dies_per_chip = 2
planes_per_die = 1
blocks_per_plane = 24
pages_per_block = 10
page_size_bytes = 4096
partial_read_bytes = 2048
cell_type = "mlc"
layers = 5
page_type_order = "grouped"

[nand.timing]
t_cmd = 438
t_r = [173000, 72000]
t_prog = [2034000, 279000]
t_bers = 726000
t_dbsy = 118
t_suspend_program = 13562
t_suspend_erase = 10678
t_resume = 2257
bus = { ns_per_byte = 9 }

[nand.suspension]
program = false
erase = true
max_per_op = 2

[ftl]
kind = "nftl"
overprovisioning = 0.34
gc_threshold = { free_blocks = 2 }
striping_order = "PCWD"
copyback = true

[sched]
placement = "write-order"

[host]
queue_depth = 34
verify = true

[remap]
policy = "micropages"
window = 2146000
threshold = 3
pages = 59
table_groups = 11
"#,
        )
        .unwrap()
        .build()
        .unwrap();
    let (r, w) = (IoOp::Read, IoOp::Write);
    let reqs = [
        req(230491992, w, 23552, 3072),
        req(935366998, w, 14848, 3584),
        req(939967548, r, 18432, 2560),
        req(964361205, w, 6656, 4096),
        req(1009954784, r, 19968, 1536),
        req(1259263914, r, 10752, 2048),
        req(1401391346, r, 11776, 1536),
        req(1583696873, r, 11776, 2048),
        req(1593228231, r, 13824, 1024),
        req(1606764152, w, 14848, 4096),
        req(1611443495, r, 18944, 3072),
        req(1667923813, r, 6144, 4096),
        req(1988932379, r, 6656, 2048),
        req(2229945034, r, 6656, 3584),
        req(2246842127, w, 10240, 512),
        req(2268470339, r, 16896, 2560),
        req(2285687233, r, 19968, 1024),
    ];
    assert_holds(&["run.panic", "run.error"], &cfg, &reqs);
}

// Swarm seed 30818 (run.panic: "2 requests never completed"; remapping with
// `join_in_flight = false`, the sprinkler scheduler, dynamic placement). A completed
// read of a remap page finishes the reads that joined it in a loop; a request finished
// there admits the next one from the host queue at once, and that request's two pages
// of the same remap page queued a new read of it (the die busy with another read) and
// joined it. The loop then put its emptied list back over the page's joiners, dropping
// that join: the request's second page never completed. Built by hand from the
// debugging of the seed: lpns 1 and 2 written; 7 partial reads make the group {lpn 1
// unit 1, lpn 2 unit 0} reach the threshold, so it is copied to a remap page; then, 3
// requests at a time: X (lpn 3) is sensing, A's read of the remap page queues, B joins
// it, Z (lpn 4) and D (both units, two pages) wait; X's completion admits Z, queued
// behind A's read; A's read completes and finishes B, which admits D.
#[test]
fn a_request_admitted_while_joiners_finish_keeps_its_join() {
    let cfg = config(
        "[nand.geometry]\npartial_read_bytes = 2048\n[host]\nqueue_depth = 3\n\
         [remap]\npolicy = \"micropages\"\nwindow = 100000000\nthreshold = 3\njoin_in_flight = false\npages = 4\n",
    );
    let (r, w) = (IoOp::Read, IoOp::Write);
    let us = |t: u64| t * 1000;
    let mut reqs = vec![req(0, w, 4096, 4 * 4096)];
    for i in 0..3 {
        reqs.push(req(us(3000 + 400 * i), r, 6144, 2048));
        reqs.push(req(us(3200 + 400 * i), r, 8192, 2048));
    }
    reqs.push(req(us(4400), r, 6144, 2048));
    reqs.extend([
        req(us(6000), r, 12288, 4096),
        req(us(6001), r, 6144, 2048),
        req(us(6002), r, 8192, 2048),
        req(us(6003), r, 16384, 4096),
        req(us(6004), r, 6144, 4096),
    ]);
    assert_holds(&["run.panic", "run.error"], &cfg, &reqs);
    // The scenario is the one described: one copy, and both joins happened.
    let report = check::run(&cfg, &reqs).unwrap();
    let remap = report.remap.expect("remapping on");
    assert_eq!((remap.copies, remap.hits, remap.merged), (1, 4, 2), "{remap:?}");
}

// Cached-mapping swarm seeds 23480 and 28303: a GC job never ran (`gc.erases`: one more
// job than erases). A host read's translation evicted a dirty mapping entry and queued
// its translation page's write-back (flash work the engine runs as a GC job; a real GC
// job when the plane is also short of free blocks) on the page's home plane, on another
// die than the read's. That die was idle and nothing else arrived on it; only a die's own
// completions offered it its queued jobs, so the job waited until the run ended. Shrunk
// by hand: two dies, a one-entry CMT, a write of LPN 128 (translation page 1, whose home
// plane is on die 1; the data and the translation pages land on die 0), then a read of
// LPN 2 on die 0 whose miss evicts LPN 128's dirty entry. Before the fix the write-back
// of translation page 1 never ran (one translation-page write for two dirty evictions).
#[test]
fn write_back_queued_on_an_idle_die_runs() {
    let cfg = config(
        r#"
[nand.geometry]
dies_per_chip = 2
blocks_per_plane = 16
pages_per_block = 32
page_size_bytes = 512

[ftl]
mapping = "cached"
cmt_entries = 1
"#,
    );
    let page = 512;
    let reqs = [req(0, IoOp::Write, 128 * page, page), req(10_000_000, IoOp::Read, 2 * page, page)];
    let r = check::run(&cfg, &reqs).expect("run");
    let m = r.mapping.as_ref().expect("cached mapping report");
    assert_eq!(m.dirty_evictions, 2, "the scenario changed: {m:?}");
    assert_eq!(m.translation_page_writes, 2, "a write-back never ran: {m:?}");
    assert_holds(&["gc.erases", "run.panic", "run.error"], &cfg, &reqs);
}

// Swarm seed 46774 (found 2026-12-03 running seeds 44000..48000): `physics.read_min`, a
// host read of 1 KiB finished 8,969 ns after it was admitted, below the device's smallest
// tR (46 us). Under `remap.policy = "micropages"` with `join_in_flight = false`, a read of
// a remap page issued while an earlier read of the same page was still in flight was
// queued, and later reads joined that queued read — but every joiner of the page was kept
// in one list, which the earlier read's completion emptied: the joiners of the queued
// read finished with the read before it (traced: joined at 40,650,015 ns, finished at
// 40,658,984 ns when the earlier read completed; the read they had joined was issued
// then and completed at 40,766,740 ns). Joiners are now kept per read in flight
// (`RemapPage::flights`). Shrunk from 1458 requests to these 65 by the swarm's delta
// debugging on the seed's device; fails without the fix.
#[test]
fn joiners_of_a_queued_remap_read_finish_with_it() {
    let cfg = ConfigBuilder::new()
        .toml(
            "seed-46774",
            r#"
[nand.geometry]
channels = 1
chips_per_channel = 2
dies_per_chip = 2
planes_per_die = 2
blocks_per_plane = 6
pages_per_block = 6
page_size_bytes = 4096
partial_read_bytes = 2048
cell_type = "tlc"
layers = 1
page_type_order = "grouped"

[nand.timing]
t_cmd = 180
t_r = [46000, 113000, 106000]
t_prog = 1825000
t_bers = 4465000
t_dbsy = 107
bus = { width_bits = 8, rate_mts = 1300 }

[nand.timing.layer_speed]
ratio = 1.0
curve = "geometric"
slow_end = "top"

[ftl]
kind = "tbm"
overprovisioning = 0.7
gc_threshold = { free_blocks = 4 }
striping_order = "CDPW"
victim_tie_break = "oldest"
copyback = true
wear_leveling = true
allocation = "per-plane"

[sched]
scheduler = "fcfs"
multiplane_width = 2
window = 3
suspend_threshold = 1956000
placement = "static"
arbiter = "read-first"
gc = "preemptible"

[sched.lacr]
pending_write_layer = "mean"
read_scope = "die"
include_own_write = false

[buffer]
size_bytes = 0
flush_watermark = 0.93
dram_latency = 0

[host]
mode = "closed"
queue_depth = 35
closed_loop_depth = 20
read_modify_write = true
unwritten_reads = "prefill"
verify = true

[remap]
policy = "micropages"
window = 3196000
group_units = 0
threshold = 1
join_in_flight = false
pages = 23
table_groups = 65536
"#,
        )
        .unwrap()
        .build()
        .unwrap();
    let reqs = [
        req(20840673, IoOp::Read, 6144, 2560),
        req(20932358, IoOp::Read, 2048, 3072),
        req(20972567, IoOp::Read, 142848, 4096),
        req(21043324, IoOp::Read, 148480, 1024),
        req(21076471, IoOp::Read, 2048, 3584),
        req(21076660, IoOp::Read, 51712, 3072),
        req(21099242, IoOp::Read, 0, 4096),
        req(21105073, IoOp::Read, 4096, 2048),
        req(21153061, IoOp::Read, 167936, 4096),
        req(21182963, IoOp::Read, 167936, 4096),
        req(21195122, IoOp::Read, 6656, 3584),
        req(21223442, IoOp::Read, 5632, 3072),
        req(21260182, IoOp::Read, 3584, 4096),
        req(21306095, IoOp::Read, 110592, 4096),
        req(21315818, IoOp::Read, 114688, 4096),
        req(21470044, IoOp::Read, 101376, 3584),
        req(21512808, IoOp::Read, 98304, 4096),
        req(21535188, IoOp::Read, 2048, 4096),
        req(21544735, IoOp::Read, 4096, 4096),
        req(21547610, IoOp::Read, 6144, 2048),
        req(21589349, IoOp::Read, 8192, 4096),
        req(21611748, IoOp::Read, 12288, 1536),
        req(21630708, IoOp::Write, 4096, 4096),
        req(21652219, IoOp::Read, 75264, 512),
        req(21672556, IoOp::Read, 101888, 2560),
        req(21680658, IoOp::Read, 102400, 4096),
        req(21728739, IoOp::Read, 20480, 4096),
        req(21760868, IoOp::Read, 24576, 4096),
        req(21907471, IoOp::Read, 4608, 1024),
        req(21934179, IoOp::Read, 3072, 2048),
        req(21988671, IoOp::Read, 7680, 2048),
        req(21996517, IoOp::Read, 6144, 2560),
        req(22005522, IoOp::Read, 7168, 2048),
        req(22033507, IoOp::Read, 148480, 3584),
        req(22052989, IoOp::Read, 151552, 4096),
        req(22090288, IoOp::Read, 4608, 4096),
        req(22131519, IoOp::Read, 101376, 4096),
        req(22138405, IoOp::Read, 105472, 512),
        req(22170923, IoOp::Read, 105984, 2048),
        req(22226575, IoOp::Read, 108032, 3584),
        req(22524318, IoOp::Read, 167424, 4096),
        req(22529975, IoOp::Read, 3072, 2048),
        req(22600705, IoOp::Write, 4096, 4096),
        req(22628703, IoOp::Read, 6144, 2560),
        req(22658185, IoOp::Read, 4096, 4096),
        req(22678293, IoOp::Read, 2560, 1536),
        req(22697996, IoOp::Read, 92672, 3584),
        req(22964116, IoOp::Read, 4096, 4096),
        req(22982640, IoOp::Read, 5632, 2048),
        req(23021789, IoOp::Read, 77824, 4096),
        req(23096953, IoOp::Read, 3072, 3072),
        req(23127676, IoOp::Read, 6144, 3072),
        req(23169942, IoOp::Read, 4096, 4096),
        req(23192433, IoOp::Read, 8192, 4096),
        req(23208000, IoOp::Read, 0, 4096),
        req(23260463, IoOp::Read, 0, 4096),
        req(23301073, IoOp::Read, 0, 4096),
        req(23303594, IoOp::Read, 4096, 4096),
        req(23356454, IoOp::Read, 0, 4096),
        req(23411252, IoOp::Read, 4096, 4096),
        req(23435595, IoOp::Read, 7168, 1536),
        req(23451031, IoOp::Read, 8192, 4096),
        req(23479393, IoOp::Read, 12288, 4096),
        req(23517195, IoOp::Read, 77824, 4096),
        req(23551966, IoOp::Read, 8704, 1024),
    ];
    assert_holds(&["physics.read_min", "run.panic", "run.error"], &cfg, &reqs);
}
