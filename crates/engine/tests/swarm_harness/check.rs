//! Running one case and checking the engine's invariants from outside, through the
//! public API and the report only.
//!
//! Each [`Violation`] carries a stable id (`"counts.reads"`, `"waf.range"`, …) so that a
//! known engine bug can be matched to its regression test (see `super::KNOWN_BUGS`).

use std::panic::{AssertUnwindSafe, catch_unwind};

use lamina_engine::SimulationBuilder;
use lamina_engine::config::{BufferConfig, ConfigBuilder, HostMode, SimConfig, UnwrittenReads};
use lamina_engine::report::{Report, TraceInfo};
use lamina_engine::stats::LatencySummary;
use lamina_engine::trace::IoRequest;

use super::workload::TraceCounts;

/// A broken invariant.
#[derive(Clone, Debug, PartialEq)]
pub struct Violation {
    /// Stable id of the invariant.
    pub id: &'static str,
    /// What was seen.
    pub detail: String,
}

fn violation(id: &'static str, detail: String) -> Violation {
    Violation { id, detail }
}

/// Parse and validate a TOML config through the public builder.
pub fn build_config(toml: &str) -> Result<SimConfig, String> {
    ConfigBuilder::new().toml("swarm.toml", toml).and_then(|b| b.build()).map_err(|e| e.to_string())
}

/// Logical capacity in bytes of the device `cfg` describes.
pub fn capacity(cfg: &SimConfig) -> Result<u64, String> {
    SimulationBuilder::new(cfg.clone()).build().map(|s| s.logical_capacity_bytes()).map_err(|e| e.to_string())
}

/// Build, precondition, prefill (if configured) and replay `reqs`, as `run_trace` does
/// for a file, and return the report.
pub fn run(cfg: &SimConfig, reqs: &[IoRequest]) -> Result<Report, String> {
    run_with(cfg, reqs, true)
}

/// [`run`] with lazy completion on or off ([`SimulationBuilder::lazy_completion`]).
pub fn run_with(cfg: &SimConfig, reqs: &[IoRequest], lazy: bool) -> Result<Report, String> {
    let builder = SimulationBuilder::new(cfg.clone()).lazy_completion(lazy);
    let mut sim = builder.build().map_err(|e| format!("build: {e}"))?;
    sim.precondition().map_err(|e| format!("precondition: {e}"))?;
    if cfg.host.unwritten_reads == UnwrittenReads::Prefill {
        sim.prefill(reqs.iter().copied().map(Ok)).map_err(|e| format!("prefill: {e}"))?;
    }
    sim.run(reqs.iter().copied().map(Ok)).map_err(|e| format!("run: {e}"))?;
    let info = TraceInfo {
        name: "swarm".into(),
        format: "swarm".into(),
        digest: String::new(),
        requests: reqs.len() as u64,
        ..Default::default()
    };
    Ok(sim.report(info))
}

/// Run `reqs` twice (each under `catch_unwind`) and check every invariant plus
/// determinism, then once more with lazy completion off
/// ([`SimulationBuilder::lazy_completion`]), which must give the same report byte for
/// byte. A panic or a run error is itself a violation.
pub fn check(cfg: &SimConfig, reqs: &[IoRequest]) -> Vec<Violation> {
    let attempt = || run_caught(cfg, reqs, true);
    let first = match attempt() {
        Ok(r) => r,
        Err(v) => return vec![v],
    };
    let mut out = invariants(cfg, reqs, &first);
    match attempt() {
        Ok(second) if second.to_json() == first.to_json() => {}
        Ok(second) => {
            out.push(violation("determinism", first_difference(&first.to_json(), &second.to_json())))
        }
        Err(v) => out.push(violation("determinism", format!("second run failed: {} {}", v.id, v.detail))),
    }
    match run_caught(cfg, reqs, false) {
        Ok(eager) if eager.to_json() == first.to_json() => {}
        Ok(eager) => out.push(violation("lazy", first_difference(&first.to_json(), &eager.to_json()))),
        Err(v) => {
            out.push(violation("lazy", format!("run without lazy completion failed: {} {}", v.id, v.detail)))
        }
    }
    out
}

fn first_difference(a: &str, b: &str) -> String {
    let line = a.lines().zip(b.lines()).position(|(x, y)| x != y).unwrap_or(0);
    format!(
        "reports differ at JSON line {}: {:?} vs {:?}",
        line + 1,
        a.lines().nth(line).unwrap_or(""),
        b.lines().nth(line).unwrap_or("")
    )
}

/// Every invariant of one report.
pub fn invariants(cfg: &SimConfig, reqs: &[IoRequest], r: &Report) -> Vec<Violation> {
    let page = u64::from(cfg.nand.geometry.page_size_bytes);
    let c = TraceCounts::of(reqs, page);
    let mut out = Vec::new();
    completion(cfg, &c, r, &mut out);
    latency_shapes(r, &mut out);
    physical_bounds(cfg, &c, r, &mut out);
    counters(cfg, &c, r, &mut out);
    remap(cfg, &c, r, &mut out);
    out
}

macro_rules! ensure {
    ($out:expr, $id:literal, $cond:expr, $($fmt:tt)+) => {
        let holds: bool = $cond;
        if !holds {
            $out.push(violation($id, format!($($fmt)+)));
        }
    };
}

/// Every request completes exactly once, and time covers the trace.
fn completion(cfg: &SimConfig, c: &TraceCounts, r: &Report, out: &mut Vec<Violation>) {
    ensure!(out, "counts.reads", r.read.count == c.reads, "report {} reads, trace {}", r.read.count, c.reads);
    ensure!(
        out,
        "counts.writes",
        r.write.count == c.writes,
        "report {} writes, trace {}",
        r.write.count,
        c.writes
    );
    ensure!(
        out,
        "counts.all",
        r.all.count == r.read.count + r.write.count,
        "all.count {} != reads {} + writes {}",
        r.all.count,
        r.read.count,
        r.write.count
    );
    for (name, resp, wait) in
        [("read", &r.read, &r.read_wait), ("write", &r.write, &r.write_wait), ("all", &r.all, &r.all_wait)]
    {
        ensure!(
            out,
            "counts.wait",
            resp.count == wait.count,
            "{name}: {} responses but {} waits",
            resp.count,
            wait.count
        );
        // A request's wait (arrival to its last sub-request's start) is part of its response.
        ensure!(
            out,
            "wait.le_response",
            wait.max_ns <= resp.max_ns,
            "{name}: max wait {} > max response {}",
            wait.max_ns,
            resp.max_ns
        );
        ensure!(
            out,
            "wait.le_response",
            wait.mean_ns <= resp.mean_ns * (1.0 + 1e-9),
            "{name}: mean wait {} > mean response {}",
            wait.mean_ns,
            resp.mean_ns
        );
    }
    ensure!(
        out,
        "trace.requests",
        r.trace.requests == c.reads + c.writes + c.trims,
        "trace info {} requests",
        r.trace.requests
    );
    if cfg.host.mode == HostMode::Open && c.reads + c.writes > 0 {
        // Simulated span runs from the first arrival to the last completion.
        let arrivals = c.last_arrival - c.first_arrival;
        ensure!(
            out,
            "time.span",
            r.sim_time_ns >= arrivals,
            "sim time {} < arrival span {}",
            r.sim_time_ns,
            arrivals
        );
    }
    let served = (r.read.count + r.write.count) as f64;
    if r.sim_time_ns > 0 {
        let iops = served * 1e9 / r.sim_time_ns as f64;
        ensure!(
            out,
            "throughput.iops",
            close(r.iops, iops),
            "iops {} but {served} requests over {} ns",
            r.iops,
            r.sim_time_ns
        );
        let mib = (c.read_bytes + c.write_bytes) as f64 * 1e9 / r.sim_time_ns as f64 / (1024.0 * 1024.0);
        ensure!(
            out,
            "throughput.bandwidth",
            close(r.bandwidth_mib_s, mib),
            "bandwidth {} MiB/s, expected {mib}",
            r.bandwidth_mib_s
        );
    }
    let peak = u64::from(r.events.peak_outstanding);
    ensure!(out, "host.peak", peak <= c.reads + c.writes + c.trims, "peak outstanding {peak} > requests");
    match cfg.host.mode {
        HostMode::Open if cfg.host.queue_depth > 0 => {
            ensure!(
                out,
                "host.queue_depth",
                peak <= u64::from(cfg.host.queue_depth),
                "peak outstanding {peak} > queue depth {}",
                cfg.host.queue_depth
            );
        }
        HostMode::Closed => {
            ensure!(
                out,
                "host.closed_loop_depth",
                peak <= u64::from(cfg.host.closed_loop_depth),
                "peak outstanding {peak} > closed-loop depth {}",
                cfg.host.closed_loop_depth
            );
        }
        HostMode::Open => {}
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// Percentiles monotone, min ≤ mean ≤ max, an empty class all zero.
fn latency_shapes(r: &Report, out: &mut Vec<Violation>) {
    let all = [
        ("read", &r.read),
        ("write", &r.write),
        ("all", &r.all),
        ("read_wait", &r.read_wait),
        ("write_wait", &r.write_wait),
        ("all_wait", &r.all_wait),
    ];
    for (name, l) in all {
        shape(name, l, out);
    }
}

fn shape(name: &str, l: &LatencySummary, out: &mut Vec<Violation>) {
    let p: Vec<u64> = std::iter::once(l.min_ns)
        .chain(l.percentiles.iter().map(|v| v.ns))
        .chain(std::iter::once(l.max_ns))
        .collect();
    ensure!(
        out,
        "latency.monotone",
        p.windows(2).all(|w| w[0] <= w[1]),
        "{name}: min..max not monotone: {p:?}"
    );
    if l.count == 0 {
        ensure!(
            out,
            "latency.empty",
            p.iter().all(|&v| v == 0) && l.mean_ns == 0.0,
            "{name}: empty but {l:?}"
        );
        return;
    }
    ensure!(out, "latency.mean", l.mean_ns.is_finite() && l.mean_ns >= 0.0, "{name}: mean {}", l.mean_ns);
    ensure!(
        out,
        "latency.min_le_mean",
        l.min_ns as f64 <= l.mean_ns * (1.0 + 1e-9),
        "{name}: min {} > mean {}",
        l.min_ns,
        l.mean_ns
    );
    ensure!(
        out,
        "latency.mean_le_max",
        l.mean_ns <= l.max_ns as f64 * (1.0 + 1e-9),
        "{name}: mean {} > max {}",
        l.mean_ns,
        l.max_ns
    );
}

/// Lower bounds from the device's physics where every request of a class must touch
/// flash: a read that hits flash takes at least the smallest tR, a write that goes
/// straight to flash at least the smallest tPROG. The report's minimum is an HDR bucket
/// bound, within 0.1 % of the exact value, hence the slack.
fn physical_bounds(cfg: &SimConfig, c: &TraceCounts, r: &Report, out: &mut Vec<Violation>) {
    let Ok(spec) = cfg.nand.validate() else {
        out.push(violation("config", "the built config no longer validates".into()));
        return;
    };
    let t = spec.timing();
    let bits = cfg.nand.geometry.cell_type.bits() as usize;
    let min_ns = |v: &[lamina_nand_model::Nanos; 4]| {
        (0..bits)
            .map(|b| lamina_nand_model::PageType::of_bit(cfg.nand.geometry.cell_type, b as u32).index())
            .map(|i| v[i].0)
            .min()
            .unwrap_or(0)
    };
    let slack = |bound: u64| bound - bound / 500;
    let buffered = r.buffer.capacity_pages > 0;
    // Reads served from DRAM (a queued write's data) or found unwritten take no tR; nor
    // do reads of a remap page that joined a read in flight and take their bytes from the
    // die's page register (`remap.join_in_flight`): they wait out the rest of that read's
    // sensing, which can be less than a whole tR after they arrived (swarm seed 46522).
    let register_reads = r.remap.as_ref().map_or(0, |m| m.register_reads);
    if !buffered
        && c.reads > 0
        && r.flash.unwritten_reads == 0
        && r.flash.pending_write_reads == 0
        && register_reads == 0
    {
        let bound = slack(min_ns(&t.t_r));
        ensure!(
            out,
            "physics.read_min",
            r.read.min_ns >= bound,
            "read min {} ns < smallest tR {} ns (no buffer, no unwritten reads)",
            r.read.min_ns,
            min_ns(&t.t_r)
        );
    }
    if !buffered && c.writes > 0 {
        let bound = slack(min_ns(&t.t_prog));
        ensure!(
            out,
            "physics.write_min",
            r.write.min_ns >= bound,
            "write min {} ns < smallest tPROG {} ns (no buffer)",
            r.write.min_ns,
            min_ns(&t.t_prog)
        );
    }
    if cfg.nand.suspension.is_none() {
        ensure!(
            out,
            "physics.suspensions",
            r.suspensions == 0,
            "{} suspensions without [nand.suspension]",
            r.suspensions
        );
    }
    let u = &r.utilisation;
    for (name, v) in [
        ("channel_mean", u.channel_mean),
        ("channel_max", u.channel_max),
        ("die_mean", u.die_mean),
        ("die_max", u.die_max),
    ] {
        ensure!(out, "utilisation.range", (0.0..=1.0).contains(&v), "utilisation {name} = {v}");
    }
    ensure!(
        out,
        "utilisation.read_queue",
        u.read_queue_per_die.is_finite() && u.read_queue_per_die >= 0.0,
        "read_queue_per_die = {}",
        u.read_queue_per_die
    );
    ensure!(
        out,
        "utilisation.mean_le_max",
        u.channel_mean <= u.channel_max + 1e-12 && u.die_mean <= u.die_max + 1e-12,
        "{u:?}"
    );
}

/// Flash counters agree with the trace and with each other.
fn counters(cfg: &SimConfig, c: &TraceCounts, r: &Report, out: &mut Vec<Violation>) {
    let f = &r.flash;
    let buffered = buffer_pages(&cfg.buffer, cfg.nand.geometry.page_size_bytes) > 0;
    ensure!(
        out,
        "buffer.capacity",
        (r.buffer.capacity_pages > 0) == buffered,
        "capacity {} pages for {:?}",
        r.buffer.capacity_pages,
        cfg.buffer
    );
    // Remapping's copy programs are host programs to the FTL; a host read that joined a
    // queued read of its remap page is served without a flash read of its own, and so is
    // one that joined a read in flight, except the first of a batch that found the page
    // register overwritten (that one is a flash read).
    let (copy_programs, merged) =
        r.remap.as_ref().map_or((0, 0), |m| (m.copies, m.merged + m.joined_in_flight - m.register_misses));
    if buffered {
        // Overwrites coalesce in DRAM and dirty pages may stay there at the end.
        ensure!(
            out,
            "flash.host_programs",
            f.host_programs <= c.write_pages + copy_programs,
            "{} host programs > {} written pages",
            f.host_programs,
            c.write_pages
        );
        ensure!(
            out,
            "flash.host_reads",
            f.host_reads + merged + f.unwritten_reads + f.pending_write_reads <= c.read_pages,
            "{} flash + {merged} merged + {} unwritten + {} queued-write reads > {} read pages",
            f.host_reads,
            f.unwritten_reads,
            f.pending_write_reads,
            c.read_pages
        );
    } else {
        // Without a buffer every written page is programmed once per copy (two under
        // RAIN 1) and every read page is read from flash (one copy), found unwritten, or
        // served from its queued first write's data.
        let copies = if cfg.ftl.replication == lamina_ftl::Replication::Rain1 { 2 } else { 1 };
        ensure!(
            out,
            "flash.host_programs",
            f.host_programs == copies * c.write_pages + copy_programs,
            "{} host programs != {copies} × {} written pages + {copy_programs} remap copies (no buffer)",
            f.host_programs,
            c.write_pages
        );
        ensure!(
            out,
            "flash.host_reads",
            f.host_reads + merged + f.unwritten_reads + f.pending_write_reads == c.read_pages,
            "{} flash + {merged} merged + {} unwritten + {} queued-write reads != {} read pages (no buffer)",
            f.host_reads,
            f.unwritten_reads,
            f.pending_write_reads,
            c.read_pages
        );
        ensure!(
            out,
            "flash.rmw_reads",
            f.rmw_reads <= copies * c.partial_write_pages,
            "{} RMW reads > {copies} × {} partial write pages",
            f.rmw_reads,
            c.partial_write_pages
        );
    }
    if !cfg.host.read_modify_write {
        ensure!(
            out,
            "flash.rmw_reads",
            f.rmw_reads == 0,
            "{} RMW reads with read_modify_write = false",
            f.rmw_reads
        );
    }
    if f.host_programs > 0 {
        // A cached mapping's translation pages programmed count too.
        let translation =
            r.mapping.as_ref().map_or(0, |m| m.translation_page_writes + m.translation_gc_moves);
        let waf = (f.host_programs + f.gc_programs + translation) as f64 / f.host_programs as f64;
        let got = r.waf.unwrap_or(f64::NAN);
        ensure!(
            out,
            "waf.formula",
            close(got, waf),
            "waf {:?} != (host {} + gc {} + translation {}) / host",
            r.waf,
            f.host_programs,
            f.gc_programs,
            translation
        );
        ensure!(out, "waf.range", got >= 1.0, "waf {:?} < 1", r.waf);
    } else {
        ensure!(out, "waf.undefined", r.waf.is_none(), "waf {:?} without host programs", r.waf);
    }
    let gc = &r.gc;
    ensure!(
        out,
        "gc.moves",
        gc.pages_moved == f.gc_programs,
        "{} pages moved != {} GC programs",
        gc.pages_moved,
        f.gc_programs
    );
    // The cached mapping's write-backs (read-modify-write) and translation-page
    // relocations are GC-path moves without copyback, outside `pages_moved`.
    let mapping_reads = r
        .mapping
        .as_ref()
        .map_or(0, |m| m.translation_page_reads - r.flash.translation_reads + m.translation_gc_moves);
    if cfg.ftl.copyback && cfg.ftl.kind == lamina_ftl::FtlKind::Tbm {
        // TBM spreads moves over the planes: only those that stay in their plane copy back.
        ensure!(
            out,
            "gc.reads",
            gc.reads <= gc.pages_moved,
            "{} GC reads > {} moves",
            gc.reads,
            gc.pages_moved
        );
    } else if cfg.ftl.copyback {
        ensure!(
            out,
            "gc.reads",
            gc.reads == mapping_reads,
            "{} GC bus reads with copyback ({mapping_reads} of translation pages)",
            gc.reads
        );
    } else {
        ensure!(
            out,
            "gc.reads",
            gc.reads == gc.pages_moved + mapping_reads,
            "{} GC reads != {} moves (no copyback) + {mapping_reads} translation-page reads",
            gc.reads,
            gc.pages_moved
        );
    }
    let ppb = u64::from(cfg.nand.geometry.pages_per_block);
    let erased = r.erases.total + r.erases.partial;
    if matches!(cfg.ftl.kind, lamina_ftl::FtlKind::Page | lamina_ftl::FtlKind::Mbm) {
        // A victim holds at least one invalid page, and each job ends with its erase.
        ensure!(
            out,
            "gc.moves_per_job",
            gc.pages_moved <= gc.jobs * (ppb - 1),
            "{} moves in {} jobs of {ppb}-page blocks",
            gc.pages_moved,
            gc.jobs
        );
        ensure!(
            out,
            "gc.erases",
            erased == gc.jobs,
            "{} erases (+{} partial) for {} GC jobs",
            r.erases.total,
            r.erases.partial,
            gc.jobs
        );
    } else if cfg.ftl.kind == lamina_ftl::FtlKind::Gftl {
        // GFTL: a job is one partial step (or a forced whole cleaning); each cleaning
        // copies at most a block's offsets, and one per plane may be unfinished (or
        // begun before the replay).
        let g = r.gftl.as_ref().expect("a GFTL run reports its partial-GC counters");
        let planes = u64::from(
            cfg.nand.geometry.channels
                * cfg.nand.geometry.chips_per_channel
                * cfg.nand.geometry.dies_per_chip
                * cfg.nand.geometry.planes_per_die,
        );
        ensure!(
            out,
            "gc.moves_per_job",
            gc.pages_moved <= (g.cleanings + planes) * ppb,
            "{} moves but only {} cleanings of {ppb}-page blocks",
            gc.pages_moved,
            g.cleanings
        );
        ensure!(
            out,
            "gc.erases",
            g.steps + g.forced_jobs == gc.jobs,
            "{} partial steps + {} forced jobs for {} GC jobs",
            g.steps,
            g.forced_jobs,
            gc.jobs
        );
    } else {
        // Block-level and hybrid FTLs: a merge or compaction erases every block it
        // emptied (an NFTL merge its data and update block), at least one per job, and
        // moves only pages out of blocks it then erases.
        ensure!(
            out,
            "gc.moves_per_job",
            gc.pages_moved <= erased * ppb,
            "{} moves but only {erased} erased blocks of {ppb} pages",
            gc.pages_moved
        );
        ensure!(
            out,
            "gc.erases",
            erased >= gc.jobs,
            "{} erases (+{} partial) for {} GC jobs",
            r.erases.total,
            r.erases.partial,
            gc.jobs
        );
    }
    let g = &cfg.nand.geometry;
    let blocks =
        u64::from(g.channels * g.chips_per_channel * g.dies_per_chip * g.planes_per_die * g.blocks_per_plane);
    let lifetime = r.erases.per_block.mean * blocks as f64;
    ensure!(
        out,
        "erases.lifetime",
        lifetime + 1e-6 * blocks as f64 >= r.erases.total as f64,
        "per-block mean {} × {blocks} blocks < {} replay erases",
        r.erases.per_block.mean,
        r.erases.total
    );
}

/// Remapping's counters (`[remap]`, docs/policies.md "Remapping (Micropages)") are
/// consistent with each other, the config and the trace. That the copy read is the one
/// read and carries the latest data is checked inside the run by `host.verify`.
fn remap(cfg: &SimConfig, c: &TraceCounts, r: &Report, out: &mut Vec<Violation>) {
    ensure!(
        out,
        "remap.section",
        r.remap.is_some() == cfg.remap.enabled(),
        "remap section {} with remap.policy {:?}",
        if r.remap.is_some() { "present" } else { "absent" },
        cfg.remap.policy
    );
    let Some(m) = &r.remap else { return };
    let most = lamina_engine::remap::MAX_GROUP as u64;
    ensure!(
        out,
        "remap.hits",
        m.hits <= m.partial_reads,
        "{} hits > {} partial reads",
        m.hits,
        m.partial_reads
    );
    ensure!(
        out,
        "remap.merged",
        m.merged + m.joined_in_flight <= m.hits,
        "{} merged + {} joined in flight > {} hits",
        m.merged,
        m.joined_in_flight,
        m.hits
    );
    // Every register read serves at least one read joined in flight, and each wait for
    // the register ends in a register read or a miss; none without the option.
    ensure!(
        out,
        "remap.register_reads",
        m.register_reads + m.register_misses <= m.joined_in_flight
            && (cfg.remap.join_in_flight || m.joined_in_flight == 0),
        "{} register reads + {} misses > {} joined in flight (join_in_flight {})",
        m.register_reads,
        m.register_misses,
        m.joined_in_flight,
        cfg.remap.join_in_flight
    );
    ensure!(
        out,
        "remap.partial_reads",
        m.partial_reads <= c.read_pages,
        "{} partial flash reads > {} read pages",
        m.partial_reads,
        c.read_pages
    );
    ensure!(
        out,
        "remap.live_pages",
        m.live_pages <= cfg.remap.pages,
        "{} live remap pages > remap.pages {}",
        m.live_pages,
        cfg.remap.pages
    );
    // Each closed group is copied, refused for room, refused for overlap, or counted.
    ensure!(
        out,
        "remap.groups",
        m.copies + m.no_room + m.overlapping <= m.groups_seen,
        "{} copies + {} no room + {} overlapping > {} groups seen",
        m.copies,
        m.no_room,
        m.overlapping,
        m.groups_seen
    );
    // A copied page is freed at most once per copy, or still live at the end; an evicted
    // page has no reader, so it is freed at once.
    ensure!(
        out,
        "remap.pages",
        m.live_pages + m.freed <= m.copies && m.evicted <= m.freed,
        "{} live + {} freed pages > {} copies, or {} evicted > freed",
        m.live_pages,
        m.freed,
        m.copies,
        m.evicted
    );
    ensure!(
        out,
        "remap.copy_reads",
        m.copy_reads <= m.copies * most && m.invalidated <= m.copies * most,
        "{} copy reads or {} invalidated members > {most} × {} copies",
        m.copy_reads,
        m.invalidated,
        m.copies
    );
}

/// Buffer capacity in pages as the config describes it (0 = no buffer).
pub fn buffer_pages(b: &BufferConfig, page_size: u32) -> u64 {
    b.size_bytes / u64::from(page_size)
}

/// Shrink `reqs` to a smaller trace that still breaks invariant `id` under `cfg`
/// (delta debugging: drop chunks of halving size while the violation persists, then try
/// making each survivor a single page and moving it to time 0). Arrival order is kept.
pub fn shrink(cfg: &SimConfig, reqs: &[IoRequest], id: &str) -> Vec<IoRequest> {
    let fails = |r: &[IoRequest]| !r.is_empty() && check_once(cfg, r).iter().any(|v| v.id == id);
    let mut cur = reqs.to_vec();
    if !fails(&cur) {
        return cur;
    }
    let mut chunk = cur.len() / 2;
    while chunk >= 1 {
        let mut i = 0;
        while i < cur.len() {
            let mut trial = cur.clone();
            trial.drain(i..(i + chunk).min(trial.len()));
            if fails(&trial) {
                cur = trial;
            } else {
                i += chunk;
            }
        }
        chunk /= 2;
    }
    let page = u64::from(cfg.nand.geometry.page_size_bytes);
    for i in 0..cur.len() {
        let mut trial = cur.clone();
        let r = &mut trial[i];
        r.offset_bytes = r.offset_bytes / page * page;
        r.size_bytes = page;
        if fails(&trial) {
            cur = trial;
        }
    }
    cur
}

/// One run and its invariants (no determinism re-run): what shrinking needs.
fn check_once(cfg: &SimConfig, reqs: &[IoRequest]) -> Vec<Violation> {
    match run_caught(cfg, reqs, true) {
        Ok(r) => invariants(cfg, reqs, &r),
        Err(v) => vec![v],
    }
}

/// [`run`] under `catch_unwind`: a run error or a panic becomes a violation.
fn run_caught(cfg: &SimConfig, reqs: &[IoRequest], lazy: bool) -> Result<Report, Violation> {
    match catch_unwind(AssertUnwindSafe(|| run_with(cfg, reqs, lazy))) {
        Ok(Ok(r)) => Ok(r),
        Ok(Err(e)) => Err(violation("run.error", e)),
        Err(p) => Err(violation("run.panic", panic_message(p.as_ref()))),
    }
}

thread_local! {
    /// Where the last caught engine panic happened (set by the [`quiet_panics`] hook).
    static PANIC_AT: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    let msg = p
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "non-string panic payload".into());
    match PANIC_AT.with(|at| at.borrow_mut().take()) {
        Some(at) => format!("{msg} (at {at})"),
        None => msg,
    }
}

/// Silence the default panic output (message and backtrace) for panics the harness
/// catches and reports itself; call once per test process.
pub fn quiet_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            // Panics inside the engine are caught and reported as violations with their
            // message; keep the default output for panics of the test itself.
            let in_engine =
                info.location().is_some_and(|l| l.file().contains("crates/") && l.file().contains("/src/"));
            if in_engine {
                let at = info.location().map(|l| format!("{}:{}", l.file(), l.line()));
                PANIC_AT.with(|p| *p.borrow_mut() = at);
            } else {
                default(info);
            }
        }));
    });
}
