//! The run report: a readable text summary and a versioned JSON schema.
//!
//! JSON schema version [`SCHEMA_VERSION`] (fields are only ever added; a change bumps
//! the version and checks in `docs/report-schema/v<N>.json`, which a test compares with
//! the schema generated from these types): `schema_version`, `lamina_version`, `seed`,
//! `warnings`, `config` (the resolved configuration), `device` (what was simulated, in
//! words), `trace`, `precondition` (or null), `read` / `write` / `all` {`count`,
//! `mean_ns`, `min_ns`, `p50_ns` … `p99_999_ns`, `max_ns`} of response time,
//! `read_wait` / `write_wait` / `all_wait` likewise for queue wait (the percentile
//! fields are those of `stats.percentiles`: `p<P>_ns`, default p50 … p99.999),
//! `latency_attribution` (or null), `iops`, `bandwidth_mib_s`, `read_bandwidth_mib_s`,
//! `write_bandwidth_mib_s`, `sim_time_ns`, `waf` (null when no host page was
//! programmed), `flash`, `flash_ops` (or null), `placement`, `gc`, `erases`,
//! `pen` (or null), `utilisation`, `suspensions`, `buffer`, `events`, `histograms`.
//! Nothing in it depends on the wall clock, so equal inputs give equal bytes.
//!
//! Version 3 (issue #9 item 6) added the configurable percentile fields,
//! `latency_attribution` and `flash_ops`. Version 4 (issue #10) added `histograms` (item
//! 1: the whole response-time and queue-wait distributions, compact, so `lamina plot cdf`
//! draws a run's CDFs from its report without re-running it) and `placement` (item 3:
//! write placement decisions and the undecided queue). Version 6 added
//! `flash.mirror_reads`; version 7 `pen` (PEN's M-Merge counters, null unless `ftl.pen`).
//! Version 10 (all null or absent unless their feature is on): `gftl`, `gc.time`,
//! `erases.per_block_replay`/`per_page_replay`, `host_interface`, the attribution's
//! `host_interface` and `translation` components, `remap`, `rows`, and
//! `placement.mcs` counters of RS's read-intensive area and reallocation.

use std::fmt::Write as _;

use lamina_sched::{McsCounters, RsCounters};
use schemars::JsonSchema;
use serde::Serialize;

use crate::stats::{
    DEFAULT_PERCENTILES, FlashOps, LatencyAttribution, LatencySummary, MeanVar, OpKindSummary,
    percentile_label,
};

/// Fewest replayed requests over which the text summary's `coarse timestamps` line
/// judges arrivals that never share an instant. Fewer say nothing: one gap is its own
/// gcd (two requests 1 s apart are "multiples of 1 s"), and the gcd of a few gaps is as
/// likely a factor they happen to share as the clock's resolution; 15 distances from the
/// first arrival are enough. Requests that share an instant show a coarse clock
/// themselves, however few.
const COARSE_MIN_REQUESTS: u64 = 16;

/// Trace identity in the report, and every transform that changed the workload.
#[derive(Clone, Debug, Default, Serialize, PartialEq, JsonSchema)]
pub struct TraceInfo {
    /// File name (or a caller-chosen label).
    pub name: String,
    /// Format name.
    pub format: String,
    /// Content digest of the decompressed trace.
    pub digest: String,
    /// Requests replayed.
    pub requests: u64,
    /// Malformed lines skipped (`on_error = "skip"`).
    pub skipped: u64,
    /// Requests whose addresses were wrapped into the logical capacity.
    pub wrapped: u64,
    /// Transforms that changed the workload (folded devices, reordering, timestamp
    /// resolution, absurd gaps), as the trace reader counted them.
    #[serde(flatten)]
    pub changes: lamina_trace::WorkloadChanges,
    /// Warnings about the trace or how it was replayed (absurd gaps, a truncated tar
    /// member, a closed-loop trace replayed open-loop).
    pub warnings: Vec<String>,
}

impl TraceInfo {
    /// The trace section's extra lines: each transform that changed the workload, with
    /// its count and meaning, then the warnings.
    fn write_transforms(&self, s: &mut String) {
        let t = &self.changes;
        if self.skipped > 0 {
            let _ = writeln!(s, "  skipped malformed lines: {} (on_error = \"skip\")", self.skipped);
        }
        if self.wrapped > 0 {
            let _ = writeln!(
                s,
                "  wrapped: {} of {} requests addressed beyond the logical capacity and were wrapped modulo it",
                self.wrapped, self.requests
            );
        }
        if t.folded_devices > 1 {
            let how = if t.folded_overlaid {
                "overlaid at the same addresses (fold_stride_bytes = 0): their blocks collide"
            } else {
                "laid side by side (fold_stride_bytes)"
            };
            let _ = writeln!(
                s,
                "  folded devices: {} devices/volumes merged into one address space, {how}",
                t.folded_devices
            );
        }
        if t.reordered > 0 {
            let _ = writeln!(
                s,
                "  reordered: {} requests arrived out of timestamp order and were moved within the reorder window",
                t.reordered
            );
        }
        let judged = self.requests >= COARSE_MIN_REQUESTS || t.max_same_instant > 1;
        let coarse = t.time_resolution_ns >= lamina_trace::COARSE_RESOLUTION_NS;
        if judged && (coarse || t.max_same_instant >= lamina_trace::CROWDED_INSTANT) {
            let res = if t.time_resolution_ns == 0 {
                "every request arrives at one instant".to_owned()
            } else {
                format!("timestamps are multiples of {}", duration(t.time_resolution_ns))
            };
            let crowd = if t.max_same_instant > 1 {
                format!("up to {} requests arrive at the same instant", t.max_same_instant)
            } else {
                "no two requests arrive at the same instant".to_owned()
            };
            let _ = writeln!(s, "  coarse timestamps: {res}; {crowd}");
        }
        if t.outliers > 0 {
            let _ =
                writeln!(s, "  outliers: {} requests beyond absurd arrival gaps (see warnings)", t.outliers);
        }
        for w in &self.warnings {
            let _ = writeln!(s, "  warning: {w}");
        }
    }
}

/// `1 s`, `250 ms`, `4 us`, `7 ns` (exact when the value is a whole number of the unit).
fn duration(ns: u64) -> String {
    for (unit, name) in [(1_000_000_000, "s"), (1_000_000, "ms"), (1_000, "us")] {
        if ns >= unit && ns % unit == 0 {
            return format!("{} {name}", ns / unit);
        }
    }
    format!("{ns} ns")
}

/// Garbage-collection counters.
#[derive(Clone, Debug, Serialize, PartialEq, JsonSchema)]
pub struct GcReport {
    /// GC jobs (victim blocks collected).
    pub jobs: u64,
    /// Valid pages moved.
    pub pages_moved: u64,
    /// GC page reads (copyback moves do not read over the bus). With the cached mapping
    /// they include the translation-page reads of write-backs and of translation-page
    /// relocations (`mapping.translation_page_reads` less the misses' reads, plus
    /// `mapping.translation_gc_moves`), which are not in `pages_moved`.
    pub reads: u64,
    /// Die time of GC commands by kind over the replay: the GC time breakdown of
    /// pen-partial-erase (copies, erases, partial erases, spare reads). Null unless the
    /// device has partial-block erase (`[nand.partial_erase]`, the PEN experiments).
    pub time: Option<GcTimeReport>,
}

/// Die time of GC commands by kind (`gc.time`): each command from the start of its first
/// bus phase to its completion (a multi-plane command counts once; a move across dies,
/// its read and its program).
#[derive(Clone, Debug, Serialize, PartialEq, JsonSchema)]
pub struct GcTimeReport {
    /// Valid-page copies (moves, copybacks).
    pub copies_ns: u64,
    /// Whole-block erases.
    pub erases_ns: u64,
    /// Partial-block erases.
    pub partial_erases_ns: u64,
    /// Spare-area (OOB) reads of merges (NFTL's update-block scan), each a read of
    /// 64 B of the page's spare area: `t_cmd + tR + 64 B`, as a host lookup's
    /// translation read.
    pub spare_reads_ns: u64,
    /// Spare-area reads of merges.
    pub spare_reads: u64,
}

/// Erase and wear counters.
#[derive(Clone, Debug, Serialize, PartialEq, JsonSchema)]
pub struct EraseReport {
    /// Block erases during the replay.
    pub total: u64,
    /// Partial-block erases during the replay.
    pub partial: u64,
    /// Erase count per block over the device's life (including preconditioning).
    pub per_block: MeanVar,
    /// Erase count per page (differs from per-block only with partial erases): AEP and VEP.
    pub per_page: MeanVar,
    /// Erase count per block over the replay alone (preconditioning excluded). Null
    /// unless the device has partial-block erase (`[nand.partial_erase]`).
    pub per_block_replay: Option<MeanVar>,
    /// Erase count per page over the replay alone: pen-partial-erase's AEP and VEP of
    /// the workload (Fig. 13b/c). Null unless the device has partial-block erase.
    pub per_page_replay: Option<MeanVar>,
}

/// PEN's M-Merge counters over the replay (`pen` in the JSON; `ftl.pen = true` only;
/// docs/ftl.md, "PEN"). Merges count the FTL's merge jobs (NFTL: one per D-/U-block
/// pair merged).
#[derive(Clone, Debug, Serialize, PartialEq, JsonSchema)]
pub struct PenReport {
    /// Merges run as M-Merges.
    pub m_merges: u64,
    /// Merges run the baseline way, for every reason.
    pub classic_merges: u64,
    /// Of `classic_merges`: forced by the wear gate W (`ftl.pen_wear_limit`).
    pub wear_merges: u64,
    /// Of `classic_merges`: M-Merge's stage-1 copies had no room.
    pub no_space_merges: u64,
    /// Of `classic_merges`: the block was not in in-place layout (or a restored PB
    /// would have been left with an unfilled page).
    pub layout_merges: u64,
    /// Partial erases by PB level, index 0 (PB 1, the whole block) to L (a leaf).
    pub partial_erases_by_level: Vec<u64>,
    /// Valid-page copies M-Merges made.
    pub restore_copies: u64,
    /// Copies the baseline merges replaced by M-Merges would have made.
    pub merge_copies_replaced: u64,
    /// `merge_copies_replaced − restore_copies`.
    pub copies_saved: i64,
    /// Leaves restored only because they had taken their tolerated disturbances.
    pub disturb_restores: u64,
}

impl PenReport {
    /// The counters of `now` less those of `start`, partial erases by level cut to
    /// levels 0 ..= `levels`.
    pub fn between(start: &lamina_ftl::FtlStats, now: &lamina_ftl::FtlStats, levels: u32) -> PenReport {
        let by_level = (0..=levels.min(16) as usize)
            .map(|l| now.pen_partial_erases_by_level[l] - start.pen_partial_erases_by_level[l])
            .collect();
        let restore_copies = now.pen_restore_copies - start.pen_restore_copies;
        let replaced = now.pen_merge_copies_replaced - start.pen_merge_copies_replaced;
        PenReport {
            m_merges: now.pen_m_merges - start.pen_m_merges,
            classic_merges: now.pen_classic_merges - start.pen_classic_merges,
            wear_merges: now.pen_wear_merges - start.pen_wear_merges,
            no_space_merges: now.pen_no_space_merges - start.pen_no_space_merges,
            layout_merges: now.pen_layout_merges - start.pen_layout_merges,
            partial_erases_by_level: by_level,
            restore_copies,
            merge_copies_replaced: replaced,
            copies_saved: replaced as i64 - restore_copies as i64,
            disturb_restores: now.pen_disturb_restores - start.pen_disturb_restores,
        }
    }
}

/// GFTL's partial-GC counters over the replay (`gftl` in the JSON; `ftl.kind = "gftl"`
/// only; docs/ftl.md, "GFTL").
#[derive(Clone, Debug, Serialize, PartialEq, JsonSchema)]
pub struct GftlReport {
    /// λ: page copies per partial step (resolved from the device when
    /// `ftl.gftl_step_copies = 0`).
    pub step_copies: u32,
    /// Partial steps each host page write owes (`ftl.gftl_steps_per_write`).
    pub steps_per_write: u32,
    /// Block cleanings started.
    pub cleanings: u64,
    /// Partial steps run, paid from the steps host writes owed.
    pub steps: u64,
    /// GC jobs run because the write buffer ran out (free blocks below the GC threshold):
    /// whole cleanings or buffer-block erases, not bounded.
    pub forced_jobs: u64,
}

impl GftlReport {
    /// The counters of `now` less those of `start` (preconditioning excluded).
    pub fn between(
        start: &lamina_ftl::FtlStats,
        now: &lamina_ftl::FtlStats,
        cfg: &lamina_ftl::FtlConfig,
        spec: &lamina_nand_model::DeviceSpec,
    ) -> GftlReport {
        GftlReport {
            step_copies: match cfg.gftl_step_copies {
                0 => lamina_ftl::gftl::step_copies_for(spec),
                n => n,
            },
            steps_per_write: cfg.gftl_steps_per_write,
            cleanings: now.gftl_cleanings - start.gftl_cleanings,
            steps: now.gftl_steps - start.gftl_steps,
            forced_jobs: now.gftl_forced_jobs - start.gftl_forced_jobs,
        }
    }
}

/// Host rows the die-aligned allocation opened over the replay (`rows` in the JSON;
/// `ftl.kind = "mbm"` with `ftl.mbm_ws` and `ftl.allocation = "die-aligned"` only;
/// docs/ftl.md, "Die-aligned allocation"). Only the pages of an aligned row can be
/// programmed by multi-plane commands.
#[derive(Clone, Debug, Serialize, PartialEq, JsonSchema)]
pub struct RowsReport {
    /// Rows opened at one block index on every plane of the die.
    pub aligned: u64,
    /// Rows opened on every plane at different block indices (no index was free on all
    /// planes; the pages share only the page offset).
    pub misaligned: u64,
    /// Rows opened on only some planes of the die (the others had no block to spare).
    pub partial: u64,
}

impl RowsReport {
    /// The counters of `now` less those of `start` (preconditioning excluded).
    pub fn between(start: &lamina_ftl::FtlStats, now: &lamina_ftl::FtlStats) -> RowsReport {
        RowsReport {
            aligned: now.aligned_rows - start.aligned_rows,
            misaligned: now.misaligned_rows - start.misaligned_rows,
            partial: now.partial_rows - start.partial_rows,
        }
    }
}

/// What the host interface did (`host_interface` in the JSON; `[host.interface]` on
/// only, else null; docs/model.md, "Host interface").
#[derive(Clone, Debug, Serialize, PartialEq, JsonSchema)]
pub struct HostInterfaceReport {
    /// `nvme` or `sata`.
    pub kind: String,
    /// Queue pairs.
    pub queues: u32,
    /// Entries per submission queue (NCQ depth for SATA).
    pub queue_depth: u32,
    /// Requests per queue the device holds at once.
    pub fetch_size: u32,
    /// Link lanes.
    pub lanes: u64,
    /// Bytes per second of one lane.
    pub lane_bandwidth_bytes_per_s: u64,
    /// Messages host → device (doorbells, submission entries, write data).
    pub messages_to_device: u64,
    /// Messages device → host (read requests, read data, completion entries).
    pub messages_to_host: u64,
    /// Bytes on the wire host → device, framing included.
    pub wire_bytes_to_device: u64,
    /// Bytes on the wire device → host, framing included.
    pub wire_bytes_to_host: u64,
    /// Busy fraction of the host → device direction over the request span.
    pub utilisation_to_device: f64,
    /// Busy fraction of the device → host direction over the request span.
    pub utilisation_to_host: f64,
    /// Requests that waited in the host for a submission-queue entry.
    pub host_waits: u64,
    /// Requests whose entry waited for a fetch slot.
    pub fetch_waits: u64,
    /// Most entries in one submission queue at once.
    pub peak_queue: u32,
}

/// Counters of the page FTL's cached mapping over the replay (`mapping` in the JSON;
/// `ftl.mapping = "cached"` only; docs/model.md, "Cached mapping"). Hits and misses
/// count host page accesses that reached the FTL (write-buffer hits do not).
#[derive(Clone, Debug, Serialize, PartialEq, JsonSchema)]
pub struct MappingReport {
    /// CMT capacity in entries (`ftl.cmt_entries`, or `ftl.cmt_bytes` over the CMT entry
    /// size of `ftl.mapping_entry`).
    pub cmt_entries: u64,
    /// Entries per translation page (page size / the flash entry size of
    /// `ftl.mapping_entry`: 4 bytes by default).
    pub entries_per_translation_page: u64,
    /// Host page reads whose entry was cached.
    pub read_hits: u64,
    /// Host page reads whose entry was not (a translation-page read if the page is on
    /// flash; flash-timed, also in `flash.translation_reads`).
    pub read_misses: u64,
    /// `read_hits / (read_hits + read_misses)`; null without reads.
    pub read_hit_ratio: Option<f64>,
    /// Host page writes whose entry was cached.
    pub write_hits: u64,
    /// Host page writes whose entry was not (each reads its translation page first if
    /// the page is on flash; flash-timed, also in `flash.translation_reads`).
    pub write_misses: u64,
    /// Dirty entries evicted (each queues its translation page's write-back unless one
    /// is queued already).
    pub dirty_evictions: u64,
    /// Translation pages read: read and write misses' reads plus write-backs'
    /// read-modify-write reads.
    pub translation_page_reads: u64,
    /// Translation pages programmed by write-backs.
    pub translation_page_writes: u64,
    /// Translation pages relocated by GC (not in `gc.pages_moved`).
    pub translation_gc_moves: u64,
    /// Die time of the misses' translation-page reads over the replay (each command from
    /// its first bus phase to its completion; also in `flash.translation_reads`' time).
    pub translation_read_ns: u64,
    /// Die time of the commands that wrote translation pages: write-backs (the
    /// read-modify-write's read and program, or a first program) and GC relocations of
    /// translation pages.
    pub translation_write_ns: u64,
    /// `(translation_read_ns + translation_write_ns)` over the die time of every flash
    /// command in the replay, summed over dies: the mapping's share of flash time. Null
    /// when no command ran.
    pub translation_flash_share: Option<f64>,
}

impl MappingReport {
    /// The counters of `now` less those of `start` (preconditioning excluded).
    pub fn between(
        start: &lamina_ftl::FtlStats,
        now: &lamina_ftl::FtlStats,
        cfg: &lamina_ftl::FtlConfig,
        geometry: &lamina_nand_model::Geometry,
    ) -> MappingReport {
        let read_hits = now.cmt_read_hits - start.cmt_read_hits;
        let read_misses = now.cmt_read_misses - start.cmt_read_misses;
        let reads = read_hits + read_misses;
        MappingReport {
            cmt_entries: cfg.cmt_capacity(geometry),
            entries_per_translation_page: cfg.translation_entries_per_page(geometry),
            read_hits,
            read_misses,
            read_hit_ratio: (reads > 0).then(|| read_hits as f64 / reads as f64),
            write_hits: now.cmt_write_hits - start.cmt_write_hits,
            write_misses: now.cmt_write_misses - start.cmt_write_misses,
            dirty_evictions: now.cmt_dirty_evictions - start.cmt_dirty_evictions,
            translation_page_reads: now.translation_page_reads - start.translation_page_reads,
            translation_page_writes: now.translation_page_writes - start.translation_page_writes,
            translation_gc_moves: now.translation_gc_moves - start.translation_gc_moves,
            translation_read_ns: 0,
            translation_write_ns: 0,
            translation_flash_share: None,
        }
    }

    /// Fill in the flash-time fields: `read_ns` and `write_ns` of translation-page
    /// commands out of `die_ns` of die time in the replay.
    pub fn with_flash_time(self, read_ns: u64, write_ns: u64, die_ns: u64) -> MappingReport {
        MappingReport {
            translation_read_ns: read_ns,
            translation_write_ns: write_ns,
            translation_flash_share: (die_ns > 0).then(|| (read_ns + write_ns) as f64 / die_ns as f64),
            ..self
        }
    }
}

/// Flash page-operation counters.
#[derive(Clone, Debug, Serialize, PartialEq, JsonSchema)]
pub struct FlashReport {
    /// Host pages programmed.
    pub host_programs: u64,
    /// GC pages programmed.
    pub gc_programs: u64,
    /// Host page reads.
    pub host_reads: u64,
    /// Read-modify-write page reads.
    pub rmw_reads: u64,
    /// Reads of unwritten or trimmed pages (no flash access).
    pub unwritten_reads: u64,
    /// Reads that overtook their page's first write while it was still queued: served
    /// from that write's data in controller DRAM.
    pub pending_write_reads: u64,
    /// Host writes moved off a plane whose pages all hold valid data (nothing for GC to
    /// reclaim; a dynamic placement piled logical pages onto it) to the next plane with
    /// free blocks.
    pub full_plane_redirects: u64,
    /// Reads re-queued on another die because GC or a write moved their page while they
    /// were queued.
    pub read_redirects: u64,
    /// Host writes the FTL refused (no free page, merge needed) that waited for GC on
    /// their plane and were retried (park-and-retry).
    pub write_retries: u64,
    /// Multi-plane programs the scheduler planned that the FTL's allocation broke into
    /// several commands (pages not at one block and page offset).
    pub misaligned_groups: u64,
    /// Spare-area reads issued for the FTL's translation step before data reads.
    pub translation_reads: u64,
    /// Host page reads served by the mirror copy, whose die had less work than the
    /// primary's (RAIN 1, `ftl.replication = "rain1"`; 0 otherwise). Host page reads
    /// count both copies' reads; host programs count both copies. Schema v6.
    pub mirror_reads: u64,
}

/// Write placement decisions (`placement` in the JSON; docs/policies.md, "Decision
/// counters"). The undecided-queue fields are zero for policies that never defer.
#[derive(Clone, Debug, Default, Serialize, PartialEq, JsonSchema)]
pub struct PlacementReport {
    /// Calls to the placement policy.
    pub decisions: u64,
    /// Sub-writes the policy deferred into the undecided FCFS queue.
    pub deferred: u64,
    /// Mean time a deferred sub-write waited there before being bound, in ns.
    pub undecided_wait_mean_ns: u64,
    /// Longest such wait, in ns.
    pub undecided_wait_max_ns: u64,
    /// Retries of the undecided queue (operation completions, channel releases) while
    /// writes waited.
    pub rechecks: u64,
    /// Rechecks that bound nothing.
    pub rechecks_empty: u64,
    /// Rechecks that bound nothing although at least one die was idle.
    pub rechecks_empty_idle_die: u64,
    /// Summed over the rechecks that bound nothing: idle dies whose channel was busy.
    pub idle_dies_channel_busy: u64,
    /// Summed over the rechecks that bound nothing: idle dies whose channel was idle too.
    pub idle_dies_channel_idle: u64,
    /// Mean number of idle dies while writes were undecided (die·ns of idle dies,
    /// sampled at every recheck, over the time writes were undecided).
    pub idle_dies_while_undecided: f64,
    /// Of the idle-die time while writes were undecided, the share whose die's channel
    /// was busy (0..1).
    pub idle_channel_busy_share: f64,
    /// OCR / LaCR: how the layer-aware and layer-blind estimates compare at each
    /// decision (null for other policies).
    pub redirect: Option<RedirectReport>,
    /// MCS: how its chip choices went (null for other policies; schema v7).
    pub mcs: Option<McsCounters>,
}

/// OCR and LaCR decisions, each compared with the other flavour's choice.
#[derive(Clone, Debug, Default, Serialize, PartialEq, JsonSchema)]
pub struct RedirectReport {
    /// Writes placed.
    pub decisions: u64,
    /// Decisions where the other flavour (LaCR for OCR, OCR for LaCR) would have chosen
    /// another chip.
    pub choice_differs: u64,
    /// Decisions where several chips tied at the least estimate (the token chose).
    pub ties: u64,
    /// Decisions whose least estimate was 0 (an idle chip with nothing queued).
    pub zero_estimate: u64,
    /// Mean least estimate (the chosen chip's T_queue), in ns.
    pub estimate_mean_ns: u64,
    /// Mean |LaCR's − OCR's estimate| of the chosen chip, in ns.
    pub estimate_gap_mean_ns: u64,
    /// Over decisions where the choices differ: mean of LaCR's estimate of OCR's chip
    /// minus LaCR's estimate of LaCR's chip, in ns (what layer awareness expects to save).
    pub differing_gain_mean_ns: u64,
}

/// Resource utilisation: busy time over the simulated span.
#[derive(Clone, Debug, Serialize, PartialEq, JsonSchema)]
pub struct Utilisation {
    /// The span busy time is divided by: first arrival to the later of the last request
    /// completion and the last flash operation's end (GC and flushes may outlast the
    /// requests), in ns.
    pub span_ns: u64,
    /// Mean channel-bus utilisation (0..1).
    pub channel_mean: f64,
    /// Busiest channel.
    pub channel_max: f64,
    /// Mean die utilisation (array + register hold).
    pub die_mean: f64,
    /// Busiest die.
    pub die_max: f64,
    /// Mean number of read transactions (page reads) waiting in a die's read queue,
    /// time-weighted over `span_ns` and averaged over dies (soml-read Fig. 10a's "read
    /// requests queued per chip", per die; reads being served are not queued). Schema v5.
    pub read_queue_per_die: f64,
}

/// Write-buffer counters (all zero without a buffer).
#[derive(Clone, Debug, Default, Serialize, PartialEq, JsonSchema)]
pub struct BufferReport {
    /// Capacity in pages (0 = no buffer).
    pub capacity_pages: u64,
    /// Flush-ahead watermark in pages (`buffer.flush_watermark` × capacity).
    pub watermark_pages: u64,
    /// Read hit ratio (hits / page lookups).
    pub read_hit_ratio: f64,
    /// Write hit ratio (overwrites of buffered pages / page writes).
    pub write_hit_ratio: f64,
    /// Host-write pages that found the buffer full, evicted a page and waited for its
    /// program.
    pub evictions: u64,
    /// Evictions that started a new flush (the rest took over a flush in flight).
    pub eviction_flushes: u64,
    /// Flushes started by the flush-ahead watermark.
    pub ahead_flushes: u64,
    /// Flushes started by idle flush.
    pub idle_flushes: u64,
    /// Flushes of re-dirtied staged pages pushed out to stay within the capacity.
    pub overflow_flushes: u64,
}

/// Simulation-effort counters.
#[derive(Clone, Debug, Serialize, PartialEq, JsonSchema)]
pub struct EventReport {
    /// Events processed.
    pub processed: u64,
    /// Peak requests admitted to the device at once.
    pub peak_outstanding: u32,
}

/// Version of the JSON report schema (see the module docs).
pub const SCHEMA_VERSION: u32 = 13;

/// The simulated device and policies, in words (issue #8, item 16).
#[derive(Clone, Debug, Serialize, PartialEq, JsonSchema)]
pub struct DeviceSummary {
    /// The NAND preset the device is based on (none: a `[nand]` section of its own).
    pub preset: Option<String>,
    /// `channels × chips × dies × planes × blocks × pages × page size` and cell type.
    pub geometry: String,
    /// Raw flash capacity in bytes.
    pub raw_bytes: u64,
    /// Logical capacity the host can address, in bytes.
    pub logical_bytes: u64,
    /// FTL kind and its main options.
    pub ftl: String,
    /// Write placement policy.
    pub placement: String,
    /// Queue arbiter and GC mode.
    pub scheduler: String,
    /// Host interface: mode and queue depth.
    pub host: String,
    /// Write buffer: size and watermark, or "none".
    pub buffer: String,
}

/// Outcome of preconditioning (issue #8, item 6b).
#[derive(Clone, Debug, Serialize, PartialEq, JsonSchema)]
pub struct PreconditionSummary {
    /// Pages written in the sequential fill phase.
    pub filled_pages: u64,
    /// Random overwrites performed after the fill.
    pub overwrites: u64,
    /// Overwrite windows run.
    pub windows: u32,
    /// True if the WAF of consecutive windows settled (steady state); false if the
    /// pass bound stopped it first.
    pub steady_state: bool,
    /// WAF of the last overwrite window (null if no window ran).
    pub last_window_waf: Option<f64>,
    /// WAF over the whole preconditioning (fill and overwrites).
    pub waf: Option<f64>,
    /// Pages programmed in all (host writes and GC moves): the untimed work done.
    pub pages_programmed: u64,
    /// Block erases.
    pub erases: u64,
}

impl PreconditionSummary {
    /// The text summary's preconditioning line. Steady state is only sought by
    /// overwrites: with no page filled (`precondition.fill_fraction` 0, or too small for
    /// one page) preconditioning was skipped, and with no overwrite window
    /// (`precondition.max_overwrite_passes` 0) there was no attempt; neither is a
    /// failure to reach it.
    fn write_line(&self, s: &mut String) {
        if self.filled_pages == 0 {
            let _ = writeln!(
                s,
                "preconditioning skipped: precondition.fill_fraction fills no page of this device, so \
                 nothing was written or overwritten towards steady state"
            );
            return;
        }
        let overwrites = if self.windows == 0 {
            "no overwrites (precondition.max_overwrite_passes allows none), steady state not sought"
                .to_owned()
        } else {
            format!(
                "{} overwrites in {} windows, {} (last window WAF {})",
                self.overwrites,
                self.windows,
                if self.steady_state {
                    "steady state reached"
                } else {
                    "steady state NOT reached (pass bound)"
                },
                fmt_waf(self.last_window_waf)
            )
        };
        let _ = writeln!(
            s,
            "preconditioned: {} pages filled, {overwrites}, WAF {}, {} pages programmed, {} erases",
            self.filled_pages,
            fmt_waf(self.waf),
            self.pages_programmed,
            self.erases
        );
    }
}

/// Everything a run measured.
#[derive(Clone, Debug, Serialize, PartialEq, JsonSchema)]
pub struct Report {
    /// JSON schema version ([`SCHEMA_VERSION`]).
    pub schema_version: u32,
    /// Lamina version that produced the report.
    pub lamina_version: String,
    /// Seed of the run.
    pub seed: u64,
    /// Things the reader must know to interpret the numbers (also in the text summary).
    pub warnings: Vec<String>,
    /// The resolved configuration.
    pub config: serde_json::Value,
    /// Where the configuration came from, in precedence order (lowest first), e.g.
    /// `preset mbm`, `file my.toml`, `--set buffer.size_bytes=…`; filled by the caller
    /// that assembled it (`lamina run` does), empty otherwise.
    pub config_sources: Vec<String>,
    /// The simulated device, in words.
    pub device: DeviceSummary,
    /// The trace.
    pub trace: TraceInfo,
    /// Preconditioning outcome (null without `[precondition]`).
    pub precondition: Option<PreconditionSummary>,
    /// Read response times.
    pub read: LatencySummary,
    /// Write response times.
    pub write: LatencySummary,
    /// All response times.
    pub all: LatencySummary,
    /// Read queue waits.
    pub read_wait: LatencySummary,
    /// Write queue waits.
    pub write_wait: LatencySummary,
    /// All queue waits.
    pub all_wait: LatencySummary,
    /// Where read and write response times went: queue wait, GC blocking, device wait,
    /// transfer, array, suspension, DRAM (null when the engine attributed no request).
    pub latency_attribution: Option<LatencyAttribution>,
    /// Completed requests per simulated second (first arrival to last completion).
    pub iops: f64,
    /// Host bytes per simulated second, MiB/s.
    pub bandwidth_mib_s: f64,
    /// Host read bandwidth, MiB/s.
    pub read_bandwidth_mib_s: f64,
    /// Host write bandwidth, MiB/s.
    pub write_bandwidth_mib_s: f64,
    /// Simulated span in ns (first arrival to last completion).
    pub sim_time_ns: u64,
    /// Write amplification: flash pages programmed (host + GC) / host pages programmed;
    /// null (undefined) when no host page was programmed, e.g. a read-only trace.
    pub waf: Option<f64>,
    /// Flash page operations.
    pub flash: FlashReport,
    /// Flash commands the controller issued, by kind and width: single-plane,
    /// multi-plane, multi-die, SOML (null when the engine did not record them).
    pub flash_ops: Option<FlashOps>,
    /// Write placement decisions and the undecided queue.
    pub placement: PlacementReport,
    /// The `mbm` scheduler's read decisions (null for other schedulers; schema v7).
    pub rs: Option<RsCounters>,
    /// Garbage collection.
    pub gc: GcReport,
    /// Erases and wear.
    pub erases: EraseReport,
    /// PEN's merge counters (`ftl.pen = true`), else null (schema v8).
    pub pen: Option<PenReport>,
    /// The cached mapping's counters (`ftl.mapping = "cached"`), else null (schema v9).
    pub mapping: Option<MappingReport>,
    /// GFTL's partial-GC counters (`ftl.kind = "gftl"`), else null.
    pub gftl: Option<GftlReport>,
    /// The host interface's counters (`[host.interface]` on), else null.
    pub host_interface: Option<HostInterfaceReport>,
    /// Remapping's counters (`remap.policy = "micropages"`), else null.
    pub remap: Option<crate::remap::RemapReport>,
    /// Host rows of die-aligned allocation (MBM's write strategy or
    /// `ftl.allocation = "die-aligned"`), else null.
    pub rows: Option<RowsReport>,
    /// Utilisation.
    pub utilisation: Utilisation,
    /// Program/erase suspensions.
    pub suspensions: u64,
    /// Write buffer.
    pub buffer: BufferReport,
    /// Simulation effort.
    pub events: EventReport,
    /// The full distributions behind `read`, `write`, `read_wait` and `write_wait`
    /// (the `all` ones are their unions), for CDFs.
    pub histograms: Histograms,
}

/// A run's latency distributions, each encoded as [`Histograms::encoding`] says (the
/// HDR histograms the summaries come from: 3 significant digits, values in ns).
#[derive(Clone, Debug, Serialize, PartialEq, JsonSchema)]
pub struct Histograms {
    /// How each field is encoded: [`crate::stats::HISTOGRAM_ENCODING`]
    /// (`hdrhistogram-v2-deflate-base64`).
    pub encoding: String,
    /// Read response times.
    pub read: String,
    /// Write response times.
    pub write: String,
    /// Read queue waits.
    pub read_wait: String,
    /// Write queue waits.
    pub write_wait: String,
}

impl Histograms {
    /// Encode the request statistics' four distributions.
    pub fn of(stats: &crate::stats::RequestStats) -> Histograms {
        Histograms {
            encoding: crate::stats::HISTOGRAM_ENCODING.to_owned(),
            read: stats.read.encoded(),
            write: stats.write.encoded(),
            read_wait: stats.read_wait.encoded(),
            write_wait: stats.write_wait.encoded(),
        }
    }
}

impl Report {
    /// Pretty JSON (stable field order, deterministic bytes).
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("report serializes");
        s.push('\n');
        s
    }

    /// Human-readable summary.
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "Lamina {} — trace {} ({}, {} requests, digest {})",
            self.lamina_version, self.trace.name, self.trace.format, self.trace.requests, self.trace.digest
        );
        self.trace.write_transforms(&mut s);
        let d = &self.device;
        let _ = writeln!(
            s,
            "device {}: {}, {:.1} GiB logical of {:.1} GiB raw",
            d.preset.as_deref().unwrap_or("(custom [nand])"),
            d.geometry,
            d.logical_bytes as f64 / (1u64 << 30) as f64,
            d.raw_bytes as f64 / (1u64 << 30) as f64
        );
        let _ = writeln!(
            s,
            "  ftl {}; placement {}; {}; host {}; buffer {}",
            d.ftl, d.placement, d.scheduler, d.host, d.buffer
        );
        if !self.config_sources.is_empty() {
            let _ = writeln!(s, "  config: {}", self.config_sources.join(" < "));
        }
        if let Some(p) = &self.precondition {
            p.write_line(&mut s);
        }
        for w in &self.warnings {
            let _ = writeln!(s, "warning: {w}");
        }
        let _ = writeln!(
            s,
            "simulated time {:.6} s, {} events",
            self.sim_time_ns as f64 / 1e9,
            self.events.processed
        );
        let _ = writeln!(s);
        let cols = self.text_percentiles();
        let mut header = String::from("response time (us)");
        for name in
            ["count", "mean"].into_iter().map(String::from).chain(cols.iter().map(|&p| percentile_label(p)))
        {
            let _ = write!(header, " {name:>w$}", w = col_width(&name));
        }
        let _ = writeln!(s, "{header} {:>10}", "max");
        for (name, l) in [("read", &self.read), ("write", &self.write), ("all", &self.all)] {
            line(&mut s, name, l, &cols);
        }
        let _ = writeln!(s, "queue wait (us)");
        for (name, l) in [("read", &self.read_wait), ("write", &self.write_wait), ("all", &self.all_wait)] {
            line(&mut s, name, l, &cols);
        }
        if let Some(a) = &self.latency_attribution {
            write_attribution(&mut s, a);
        }
        let _ = writeln!(s);
        let _ = writeln!(
            s,
            "IOPS {:.1}   bandwidth {:.2} MiB/s (read {:.2}, write {:.2})",
            self.iops, self.bandwidth_mib_s, self.read_bandwidth_mib_s, self.write_bandwidth_mib_s
        );
        let _ = writeln!(
            s,
            "WAF {}   host programs {}   GC programs {}   host reads {}   RMW reads {}   unwritten reads {}",
            fmt_waf(self.waf),
            self.flash.host_programs,
            self.flash.gc_programs,
            self.flash.host_reads,
            self.flash.rmw_reads,
            self.flash.unwritten_reads
        );
        if self.flash.pending_write_reads > 0 {
            let _ = writeln!(
                s,
                "reads served from a queued first write's data: {}",
                self.flash.pending_write_reads
            );
        }
        let f = &self.flash;
        if f.read_redirects
            + f.write_retries
            + f.misaligned_groups
            + f.translation_reads
            + f.full_plane_redirects
            > 0
        {
            let _ = writeln!(
                s,
                "controller: read redirects {}   write retries {}   full-plane redirects {}   misaligned write groups {}   translation reads {}",
                f.read_redirects,
                f.write_retries,
                f.full_plane_redirects,
                f.misaligned_groups,
                f.translation_reads
            );
        }
        if f.mirror_reads > 0 {
            let _ = writeln!(
                s,
                "RAIN 1: {} of {} host page reads served by the mirror copy",
                f.mirror_reads, f.host_reads
            );
        }
        if let Some(r) = &self.remap {
            let _ = writeln!(
                s,
                "remap: {} groups seen, {} copied ({} copy reads), {} of {} partial reads hit a remap page ({} merged into another's read, {} joined one in flight: {} register reads, {} misses), {} invalidated, {} evicted, {} no room",
                r.groups_seen,
                r.copies,
                r.copy_reads,
                r.hits,
                r.partial_reads,
                r.merged,
                r.joined_in_flight,
                r.register_reads,
                r.register_misses,
                r.invalidated,
                r.evicted,
                r.no_room
            );
        }
        if let Some(ops) = &self.flash_ops {
            write_flash_ops(&mut s, ops);
        }
        write_placement(&mut s, &self.placement);
        if let Some(r) = &self.rs {
            let _ = writeln!(
                s,
                "RS (mbm): {} read decisions, {} multi-plane reads of one request, {} refused other requests' reads ({} reads left out)",
                r.decisions, r.multi_plane, r.refused, r.refused_reads
            );
        }
        let _ = writeln!(
            s,
            "GC jobs {}   pages moved {}   erases {} (partial {})   suspensions {}",
            self.gc.jobs, self.gc.pages_moved, self.erases.total, self.erases.partial, self.suspensions
        );
        if let Some(t) = &self.gc.time {
            let _ = writeln!(
                s,
                "GC time: copies {:.3} s   erases {:.3} s   partial erases {:.3} s   spare reads {:.3} s ({})",
                t.copies_ns as f64 / 1e9,
                t.erases_ns as f64 / 1e9,
                t.partial_erases_ns as f64 / 1e9,
                t.spare_reads_ns as f64 / 1e9,
                t.spare_reads
            );
        }
        if let Some(p) = &self.pen {
            let _ = writeln!(
                s,
                "PEN: M-Merges {}   baseline merges {} (wear gate {}, no room {}, layout {})   \
                 partial erases by level {:?}   restore copies {}   copies saved {}   disturbance restores {}",
                p.m_merges,
                p.classic_merges,
                p.wear_merges,
                p.no_space_merges,
                p.layout_merges,
                p.partial_erases_by_level,
                p.restore_copies,
                p.copies_saved,
                p.disturb_restores
            );
        }
        if let Some(g) = &self.gftl {
            let _ = writeln!(
                s,
                "GFTL: cleanings {}   partial steps {} (lambda {} copies, {} per write)   forced jobs {}",
                g.cleanings, g.steps, g.step_copies, g.steps_per_write, g.forced_jobs
            );
        }
        if let Some(h) = &self.host_interface {
            let _ = writeln!(
                s,
                "host interface {} ({} queue(s) x {} entries, fetch {}, {} lane(s) x {:.2} GB/s): \
                 link busy {:.1} % to device, {:.1} % to host   waits: {} for an entry, {} for a fetch slot   peak queue {}",
                h.kind,
                h.queues,
                h.queue_depth,
                h.fetch_size,
                h.lanes,
                h.lane_bandwidth_bytes_per_s as f64 / 1e9,
                h.utilisation_to_device * 100.0,
                h.utilisation_to_host * 100.0,
                h.host_waits,
                h.fetch_waits,
                h.peak_queue
            );
        }
        if let Some(m) = &self.mapping {
            let _ = writeln!(
                s,
                "cached mapping ({} entries): reads {} hits / {} misses   writes {} hits / {} misses   \
                 dirty evictions {}   translation pages read {} written {} moved by GC {}   \
                 flash time {:.1} ms read {:.1} ms written ({:.1} % of die time)",
                m.cmt_entries,
                m.read_hits,
                m.read_misses,
                m.write_hits,
                m.write_misses,
                m.dirty_evictions,
                m.translation_page_reads,
                m.translation_page_writes,
                m.translation_gc_moves,
                m.translation_read_ns as f64 / 1e6,
                m.translation_write_ns as f64 / 1e6,
                m.translation_flash_share.unwrap_or(0.0) * 100.0
            );
        }
        let _ = writeln!(
            s,
            "erase count per block: mean {:.4} var {:.4} max {}   per page: mean {:.4} var {:.4}",
            self.erases.per_block.mean,
            self.erases.per_block.variance,
            self.erases.per_block.max,
            self.erases.per_page.mean,
            self.erases.per_page.variance
        );
        if let (Some(b), Some(p)) = (&self.erases.per_block_replay, &self.erases.per_page_replay) {
            let _ = writeln!(
                s,
                "erase count over the replay: per block mean {:.4} var {:.4} max {}   per page (AEP/VEP): mean {:.4} var {:.4} max {}",
                b.mean, b.variance, b.max, p.mean, p.variance, p.max
            );
        }
        let _ = writeln!(
            s,
            "utilisation: channel mean {:.1}% max {:.1}%   die mean {:.1}% max {:.1}%   reads queued per die {:.3}",
            100.0 * self.utilisation.channel_mean,
            100.0 * self.utilisation.channel_max,
            100.0 * self.utilisation.die_mean,
            100.0 * self.utilisation.die_max,
            self.utilisation.read_queue_per_die
        );
        if self.buffer.capacity_pages > 0 {
            let b = &self.buffer;
            let _ = writeln!(
                s,
                "buffer: {} pages (watermark {}), read hit ratio {:.4}, write hit ratio {:.4}, evictions {} ({} new flushes), flushes ahead {}, idle {}",
                b.capacity_pages,
                b.watermark_pages,
                b.read_hit_ratio,
                b.write_hit_ratio,
                b.evictions,
                b.eviction_flushes,
                b.ahead_flushes,
                b.idle_flushes
            );
        }
        s
    }
}

/// A WAF for the text summary: four decimals, or why it is undefined.
fn fmt_waf(w: Option<f64>) -> String {
    match w {
        Some(w) => format!("{w:.4}"),
        None => "n/a (no host page programmed)".into(),
    }
}

impl Report {
    /// The percentiles the text tables show: every configured one, except that the
    /// default list shows p50 and p99 … p99.999 (the table's columns before the list
    /// was configurable; p90 and p95 are in the JSON).
    fn text_percentiles(&self) -> Vec<f64> {
        let list: Vec<f64> = self.read.percentiles.iter().map(|v| v.percentile).collect();
        if list == DEFAULT_PERCENTILES {
            list.into_iter().filter(|&p| p == 50.0 || p >= 99.0).collect()
        } else {
            list
        }
    }
}

/// Width of a text-table column headed `name` (10, or wider for a long percentile).
fn col_width(name: &str) -> usize {
    name.len().max(10)
}

fn line(s: &mut String, name: &str, l: &LatencySummary, cols: &[f64]) {
    let us = |v: u64| v as f64 / 1000.0;
    let _ = write!(s, "  {name:<6} {:>14} {:>10.1}", l.count, l.mean_ns / 1000.0);
    for &p in cols {
        let w = col_width(&percentile_label(p));
        let _ =
            write!(s, " {:>w$.1}", us(l.percentile(p).expect("the summary has every configured percentile")));
    }
    let _ = writeln!(s, " {:>10.1}", us(l.max_ns));
}

/// The flash-command table: one row per kind issued, then all kinds.
/// The placement lines: the undecided queue (when a policy deferred) and OCR/LaCR's
/// comparison of the two flavours (when one of them placed).
fn write_placement(s: &mut String, p: &PlacementReport) {
    if p.deferred > 0 {
        let _ = writeln!(
            s,
            "undecided writes: {} deferred, wait mean {} max {}   rechecks {} ({} bound nothing, {} of them with a die idle)   idle dies while undecided {:.2} ({:.0} % on a busy channel)",
            p.deferred,
            duration_us(p.undecided_wait_mean_ns),
            duration_us(p.undecided_wait_max_ns),
            p.rechecks,
            p.rechecks_empty,
            p.rechecks_empty_idle_die,
            p.idle_dies_while_undecided,
            p.idle_channel_busy_share * 100.0
        );
    }
    if let Some(r) = &p.redirect {
        let _ = writeln!(
            s,
            "chip redirection: {} decisions, {} differ between OCR and LaCR, {} ties, {} at estimate 0   estimate mean {} (LaCR−OCR gap {}, gain where they differ {})",
            r.decisions,
            r.choice_differs,
            r.ties,
            r.zero_estimate,
            duration_us(r.estimate_mean_ns),
            duration_us(r.estimate_gap_mean_ns),
            duration_us(r.differing_gain_mean_ns)
        );
    }
    if let Some(m) = &p.mcs {
        let _ = writeln!(
            s,
            "MCS: {} sub-writes of {} requests, {} joined their request's chip, chip choices {} best fit / {} overflow, {} requests beyond their channel shares, {} on the static plane (no idle chip), {} into {} read-intensive areas by the striping",
            m.decisions,
            m.requests,
            m.continued,
            m.best_fit,
            m.overflow,
            m.quota_relaxed,
            m.fallback_static,
            m.read_intensive_writes,
            m.read_intensive_areas
        );
    }
}

/// `12.3 us` (ns shown in µs with one decimal).
fn duration_us(ns: u64) -> String {
    format!("{:.1} us", ns as f64 / 1000.0)
}

fn write_flash_ops(s: &mut String, ops: &FlashOps) {
    let _ = writeln!(
        s,
        "{:<18} {:>12} {:>10} {:>10} {:>10}  multi-plane by planes",
        "flash commands", "ops", "1-plane", "multi-die", "txns/op"
    );
    let row = |s: &mut String, name: &str, k: &OpKindSummary| {
        let widths: Vec<String> = (2..k.ops_by_planes.len())
            .filter(|&n| k.ops_by_planes[n] > 0)
            .map(|n| format!("×{n} {}", k.ops_by_planes[n]))
            .collect();
        let widths = if widths.is_empty() { "-".to_owned() } else { widths.join(", ") };
        let _ = writeln!(
            s,
            "  {name:<16} {:>12} {:>10} {:>10} {:>10.3}  {widths}",
            k.ops, k.single_plane, k.multi_die, k.txns_per_op
        );
    };
    for (name, k) in ops.kinds() {
        if k.ops > 0 {
            row(s, name, k);
        }
    }
    row(s, "all", &ops.all);
}

/// The latency-attribution table: mean and p99 of each component, reads and writes.
fn write_attribution(s: &mut String, a: &LatencyAttribution) {
    const NAMES: [&str; 8] = [
        "queue wait",
        "gc blocked",
        "device wait",
        "transfer",
        "array",
        "suspension",
        "dram",
        "unattributed",
    ];
    // The host-interface column appears only when the interface is on (the table of a
    // run without it is unchanged).
    let hif = a.read.host_interface.is_some() || a.write.host_interface.is_some();
    // Likewise the translation column: only when some request had a translation read.
    let tr = a.read.translation.is_some() || a.write.translation.is_some();
    let mut header = String::from("latency attribution (us)");
    for n in NAMES {
        let _ = write!(header, " {n:>12}");
    }
    if tr {
        let _ = write!(header, " {:>12}", "translation");
    }
    if hif {
        let _ = write!(header, " {:>12}", "host if");
    }
    let _ = writeln!(s, "{header}");
    for (class, c) in [("read", &a.read), ("write", &a.write)] {
        if c.count == 0 {
            continue;
        }
        let none = crate::stats::ComponentSummary::default();
        let host_if = c.host_interface.as_ref().unwrap_or(&none);
        let translation = c.translation.as_ref().unwrap_or(&none);
        let mut parts = vec![
            &c.queue_wait,
            &c.gc_blocked,
            &c.device_wait,
            &c.transfer,
            &c.array,
            &c.suspension,
            &c.dram,
            &c.unattributed,
        ];
        if tr {
            parts.push(translation);
        }
        if hif {
            parts.push(host_if);
        }
        for (what, pick) in [("mean", 0), ("p99", 1)] {
            let _ = write!(s, "  {:<22}", format!("{class} {what}"));
            for p in &parts {
                let ns = if pick == 0 { p.mean_ns } else { p.p99_ns as f64 };
                let _ = write!(s, " {:>12.1}", ns / 1000.0);
            }
            let _ = writeln!(s);
        }
    }
    for (class, c) in [("reads", &a.read), ("writes", &a.write)] {
        if c.over_attributed > 0 {
            let _ = writeln!(
                s,
                "  warning: {} {class} were attributed more time than their response time (an engine bug)",
                c.over_attributed
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::{Attribution, OpKind, OpMix, RequestStats};
    use lamina_nand_model::{Nanos, SimTime};

    #[test]
    fn flash_commands_table_lists_issued_kinds_and_nonzero_widths() {
        let mut m = OpMix::default();
        m.record(OpKind::Read, 1, 1, 1);
        m.record(OpKind::Program, 2, 1, 2);
        m.record(OpKind::Program, 4, 2, 8);
        m.record(OpKind::SomlRead, 1, 1, 4);
        let mut s = String::new();
        write_flash_ops(&mut s, &m.report());
        assert_eq!(
            s,
            "flash commands              ops    1-plane  multi-die    txns/op  multi-plane by planes\n\
             \x20 read                        1          1          0      1.000  -\n\
             \x20 soml read                   1          1          0      4.000  -\n\
             \x20 program                     2          0          1      5.000  ×2 1, ×4 1\n\
             \x20 all                         4          2          1      3.750  ×2 1, ×4 1\n"
        );
    }

    #[test]
    fn attribution_table_gives_mean_and_p99_per_class() {
        let mut st = RequestStats::default();
        let a = Attribution {
            queue_wait: Nanos(10_000),
            gc_blocked: Nanos(2_000),
            array: Nanos(78_000),
            dram: Nanos(500),
            ..Attribution::default()
        };
        st.complete_attributed(true, 4096, SimTime(0), SimTime(90_000), Nanos(10_000), &a, None);
        let mut s = String::new();
        write_attribution(&mut s, &st.attribution().unwrap());
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines.len(), 3, "header, read mean, read p99 (no writes): {s}");
        assert!(lines[0].starts_with("latency attribution (us)   queue wait   gc blocked"), "{s}");
        let mean: Vec<&str> = lines[1].split_whitespace().collect();
        assert_eq!(mean, ["read", "mean", "10.0", "2.0", "0.0", "0.0", "78.0", "0.0", "0.5", "1.5"]);
        assert!(lines[2].starts_with("  read p99"), "{s}");
        // Over-attribution is flagged.
        st.complete_attributed(false, 4096, SimTime(0), SimTime(1), Nanos(0), &a, None);
        let mut s = String::new();
        write_attribution(&mut s, &st.attribution().unwrap());
        assert!(s.contains("warning: 1 writes were attributed more time"), "{s}");
    }
}
