//! Building a simulation from a config, the untimed phases (prefill of reads-before-
//! writes, preconditioning), and the report.

use std::path::Path;

use lamina_ftl::{Ftl, GcStep, Lpn};
use lamina_nand_model::{Device, DeviceOptions, PlaneId};

use crate::config::{HostMode, SimConfig, UnwrittenReads};
use crate::report::{
    BufferReport, DeviceSummary, EraseReport, EventReport, FlashReport, GcReport, GcTimeReport,
    PreconditionSummary, Report, TraceInfo, Utilisation,
};
use crate::sim::{RunError, Simulation};
use crate::stats::MeanVar;
use crate::table::LpnTable;
use crate::trace::{
    IoRequest, RequestSource, TraceError, TraceInput, TraceParser, TraceReader, TraceSummary,
};

/// A config that cannot be turned into a simulation.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The NAND section is invalid.
    #[error(transparent)]
    Nand(#[from] lamina_nand_model::NandConfigError),
    /// The FTL section is invalid.
    #[error(transparent)]
    Ftl(#[from] lamina_ftl::FtlConfigError),
    /// Verify mode needs LPNs below 2^32 (they share a 64-bit tag with the version).
    #[error("host.verify: the device has {0} logical pages; verify mode supports at most 2^32")]
    VerifyTooLarge(u64),
    /// The configuration cannot fit in memory or in the engine's index widths.
    #[error(transparent)]
    Budget(#[from] crate::budget::BudgetError),
    /// The `[remap]` section is invalid.
    #[error(transparent)]
    Remap(#[from] crate::remap::RemapConfigError),
}

/// Builds a [`Simulation`] from a validated [`SimConfig`].
pub struct SimulationBuilder {
    pub(crate) cfg: SimConfig,
    pub(crate) ftl: Option<Box<dyn Ftl>>,
    pub(crate) memory_limit: crate::budget::MemoryLimit,
    latency_log: Option<crate::latency_log::LatencyLog>,
    stats_thread: crate::StatsThreadMode,
    gc_timeline: bool,
    lazy_completion: bool,
}

impl SimulationBuilder {
    /// Start from a config.
    pub fn new(cfg: SimConfig) -> Self {
        SimulationBuilder {
            cfg,
            ftl: None,
            memory_limit: Default::default(),
            latency_log: None,
            stats_thread: Default::default(),
            gc_timeline: false,
            lazy_completion: true,
        }
    }

    /// Whether a host page served alone on an idle die may complete without an event
    /// when nothing needs one at its instant (on by default; docs/performance.md, "Lazy
    /// completion"): the die counts as busy until the place its completion event would
    /// have had in the order of events, the page's operation has no record, and the
    /// event is scheduled only if work is queued on the die (at the page's issue or
    /// meanwhile) or the page completes its request. Only the speed
    /// differs: reports are byte-identical either way (the swarm test compares them on
    /// every case). Off processes every completion as an event, the reference.
    pub fn lazy_completion(mut self, on: bool) -> Self {
        self.lazy_completion = on;
        self
    }

    /// Whether the replay may record request statistics on a second thread
    /// ([`Simulation::set_stats_thread`]).
    pub fn stats_thread(mut self, mode: crate::StatsThreadMode) -> Self {
        self.stats_thread = mode;
        self
    }

    /// Log every completed request to `log` (take it back after the run with
    /// [`Simulation::take_latency_log`] and [`crate::LatencyLog::finish`] it).
    pub fn latency_log(mut self, log: crate::latency_log::LatencyLog) -> Self {
        self.latency_log = Some(log);
        self
    }

    /// Record the GC timeline diagnostic ([`crate::gc_timeline`]): per die, the GC
    /// periods, the GC job starts, the dispatches of several host programs, and what
    /// host reads waited for. Read it after the run with [`Simulation::gc_timeline`].
    /// Observational only: the report is the same with or without it.
    pub fn gc_timeline(mut self) -> Self {
        self.gc_timeline = true;
        self
    }

    /// Use this FTL instead of the one `[ftl]` configures (e.g. your own implementation
    /// of [`Ftl`]). Its geometry must equal the configured device's.
    pub fn ftl(mut self, ftl: Box<dyn Ftl>) -> Self {
        self.ftl = Some(ftl);
        self
    }

    /// The checks [`Self::build`] runs before it allocates anything — geometry and FTL
    /// validity, index widths, the write buffer's size, and the memory estimate against
    /// the limit ([`crate::budget`]) — without building: a caller about to build many
    /// simulations (a sweep) can refuse one that would fail before it builds any.
    /// Returns the memory estimate. Reads the host's limit as `build` does.
    pub fn check(&self) -> Result<crate::budget::MemoryBudget, BuildError> {
        crate::budget::check(self)
    }

    /// Validate every section and assemble the device, FTL and policies. Nothing is
    /// allocated before the memory budget passes ([`crate::budget`]).
    pub fn build(self) -> Result<Simulation, BuildError> {
        crate::budget::check(&self)?;
        let cfg = self.cfg;
        let spec = cfg.nand.validate()?;
        let mut device = Device::new(spec, DeviceOptions { store_tags: cfg.host.verify });
        // Only remapping's reads joined in flight read a page register again.
        device.set_register_tracking(cfg.remap.enabled() && cfg.remap.join_in_flight);
        let ftl: Box<dyn Ftl> = match self.ftl {
            Some(f) => {
                assert_eq!(f.geometry(), device.geometry(), "custom FTL geometry differs from the device's");
                f
            }
            None => lamina_ftl::build_for_device(&cfg.ftl, device.spec())?,
        };
        if cfg.host.verify && ftl.logical_pages() > u32::MAX as u64 {
            return Err(BuildError::VerifyTooLarge(ftl.logical_pages()));
        }
        let geo = device.geometry();
        let replicated = ftl.replica(lamina_nand_model::Lpn(0)).is_some();
        cfg.remap.validate(geo.page_size_bytes() / geo.partial_read_bytes(), ftl.host_pages(), replicated)?;
        let placement = cfg.sched.placement.build_with(cfg.sched.lacr, cfg.sched.mcs);
        let planes = device.geometry().planes_per_die();
        let scheduler = cfg.sched.scheduler.build(lamina_sched::SchedulerParams {
            arbiter: cfg.sched.arbiter,
            gc: cfg.sched.gc,
            width: cfg
                .sched
                .multiplane_width
                .unwrap_or(planes)
                .min(planes)
                .min(crate::config::MAX_COMMAND_TXNS as u32),
            window: cfg.sched.window,
            soml: device.spec().soml(),
        });
        let mut sim = Simulation::new(cfg, device, ftl, placement, scheduler);
        sim.latency_log = self.latency_log;
        sim.lazy_allowed = self.lazy_completion;
        if self.gc_timeline {
            sim.gc_timeline =
                Some(Box::new(crate::gc_timeline::GcTimeline::new(sim.geo.total_dies() as usize)));
        }
        sim.set_stats_thread(self.stats_thread);
        Ok(sim)
    }
}

impl Simulation {
    /// Logical capacity in bytes (what the trace may address).
    pub fn logical_capacity_bytes(&self) -> u64 {
        self.logical_pages() * self.geo.page_size_bytes() as u64
    }

    /// Untimed write of one logical page (FTL + device physics, GC run to completion).
    pub(crate) fn untimed_write(&mut self, lpn: u64, versions: &mut Option<LpnTable<u32>>) {
        let plane = match self.ftl.write_constraint(Lpn(lpn)) {
            lamina_ftl::WriteConstraint::Plane(p) => p,
            _ => self.ftl.static_plane(Lpn(lpn)),
        };
        let mut result = self.ftl.write(Lpn(lpn), plane);
        // A refusal names the plane that must be reclaimed first (under die-aligned
        // allocation, possibly a sibling of `plane`): park, collect there, retry — as
        // the timed run and preconditioning do. Logical pages always fit the device.
        for _ in 0..self.geo.planes_per_die() {
            let Err(e) = result else { break };
            self.untimed_gc(e.plane());
            result = self.ftl.write(Lpn(lpn), plane);
        }
        let ppa = result.expect("untimed write: the FTL refused a logical page after GC");
        let plane = self.geo.plane_of_ppa(ppa);
        let tag = versions.as_mut().map_or(0, |v| crate::sim::bump_version(v, lpn));
        self.device.program_untimed(ppa, tag).expect("untimed program violates flash physics");
        self.untimed_gc(plane);
    }

    pub(crate) fn untimed_gc(&mut self, plane: PlaneId) {
        while self.ftl.needs_gc(plane) {
            if self.ftl.gc_begin(plane).is_none() {
                break;
            }
            loop {
                match self.ftl.gc_step(plane) {
                    GcStep::Done => break,
                    GcStep::SpareRead { .. } => {}
                    GcStep::Move { from, to, .. } => {
                        let tag = self.device.tag(from).unwrap_or(0);
                        self.device.program_untimed(to, tag).expect("untimed GC program");
                    }
                    GcStep::Program { to, .. } => {
                        self.device.program_untimed(to, 0).expect("untimed GC program")
                    }
                    GcStep::Erase { block, .. } => self.device.erase_untimed(block).expect("untimed erase"),
                    GcStep::PartialErase { block, range } => {
                        let pb = crate::sim::pb_of_range(self.geo.pages_per_block(), range);
                        self.device.partial_erase_untimed(block, pb).expect("untimed partial erase")
                    }
                }
            }
        }
    }

    /// Fast-forward preconditioning per the config's `[precondition]` section (none if the
    /// section is absent).
    pub fn precondition(
        &mut self,
    ) -> Result<Option<lamina_ftl::PreconditionReport>, lamina_ftl::PreconditionError> {
        let Some(pc) = self.cfg.precondition.clone() else { return Ok(None) };
        let mut versions = self.take_versions();
        let seed = self.cfg.seed;
        let ppb = self.geo.pages_per_block();
        // FTL-internal pages (translation pages of the cached mapping) carry no version.
        let logical = self.ftl.logical_pages();
        let device = &mut self.device;
        // Programs of consecutive pages of one block (a GC job's moves) reach the device as
        // one run: one check per run instead of per page. Without versions every tag is 0,
        // so a run is exactly its pages one by one (`Device::program_run_untimed`); with
        // them each page keeps its own call.
        let mut run = ProgramRun::default();
        let mut sink = |e: lamina_ftl::FlashEffect| match e {
            lamina_ftl::FlashEffect::Program { ppa, lpn } => match versions.as_mut() {
                None => run.push(device, ppa.0, ppb),
                Some(v) => {
                    let tag = if lpn.0 < logical { crate::sim::bump_version(v, lpn.0) } else { 0 };
                    device.program_untimed(ppa, tag).expect("precondition program");
                }
            },
            lamina_ftl::FlashEffect::Erase { block } => {
                run.flush(device);
                device.erase_untimed(block).expect("precondition erase")
            }
            lamina_ftl::FlashEffect::PartialErase { block, range } => {
                run.flush(device);
                let pb = crate::sim::pb_of_range(ppb, range);
                device.partial_erase_untimed(block, pb).expect("precondition partial erase")
            }
        };
        let report = lamina_ftl::precondition(self.ftl.as_mut(), &pc, seed, &mut sink);
        run.flush(device);
        self.put_versions(versions);
        let report = report?;
        let st = &report.stats;
        let programmed = st.host_writes + st.gc_moves;
        self.preconditioned = Some(PreconditionSummary {
            filled_pages: report.filled_pages,
            overwrites: report.overwrites,
            windows: report.windows,
            steady_state: report.steady_state,
            last_window_waf: (report.windows > 0).then(|| report.last_window_waf_ppm as f64 / 1e6),
            waf: (st.host_writes > 0).then(|| programmed as f64 / st.host_writes as f64),
            pages_programmed: programmed,
            erases: st.erases + st.partial_erases,
        });
        Ok(Some(report))
    }

    /// The simulated device and policies in words.
    fn device_summary(&self) -> DeviceSummary {
        let g = &self.geo;
        let c = &self.cfg;
        let buffer = match self.buffer() {
            Some(b) => format!(
                "{} KiB ({} pages, flush-ahead watermark {} pages)",
                c.buffer.size_bytes >> 10,
                b.capacity(),
                b.watermark()
            ),
            None => "none".into(),
        };
        let depth = |d: u32| if d == 0 { "unlimited".to_string() } else { d.to_string() };
        DeviceSummary {
            preset: c.preset.clone(),
            geometry: format!(
                "{} ch × {} chips × {} dies × {} planes × {} blocks × {} pages × {} B, {}, {} layers",
                g.channels(),
                g.chips_per_channel(),
                g.dies_per_chip(),
                g.planes_per_die(),
                g.blocks_per_plane(),
                g.pages_per_block(),
                g.page_size_bytes(),
                name(&g.cell_type()),
                g.layers()
            ),
            raw_bytes: g.total_pages() * g.page_size_bytes() as u64,
            logical_bytes: self.logical_capacity_bytes(),
            ftl: format!(
                "{} (overprovisioning {}, stripe {})",
                name(&c.ftl.kind),
                c.ftl.overprovisioning,
                name(&c.ftl.striping_order)
            ),
            placement: name(&c.sched.placement),
            scheduler: format!("arbiter {}, gc {}", name(&c.sched.arbiter), name(&c.sched.gc)),
            host: match c.host.mode {
                HostMode::Open => format!("open loop, queue depth {}", depth(c.host.queue_depth)),
                HostMode::Closed => format!("closed loop, {} outstanding", c.host.closed_loop_depth),
            },
            buffer,
        }
    }

    /// Warnings about how to read this run's numbers.
    fn warnings(&self) -> Vec<String> {
        self.cfg.warnings()
    }

    /// Build the report of a finished run.
    pub fn report(&self, trace: TraceInfo) -> Report {
        let st = &self.host.stats;
        assert!(st.sink.thread.is_none(), "statistics read while their thread runs");
        let pct = &self.cfg.stats.percentiles;
        let first = st.first_arrival.unwrap_or_default();
        let span = st.last_completion.saturating_since(first).0;
        let per_s = |x: f64| if span == 0 { 0.0 } else { x * 1e9 / span as f64 };
        let mib = 1024.0 * 1024.0;
        // Each layer's counters over the timed run: the FTL's (host writes, GC moves,
        // jobs, erases) and the device's, less their values when the run started.
        let (ftl0, dev0) = self.baseline.unwrap_or_default();
        let f = self.ftl.stats();
        let ds = self.device.stats();
        let host = f.host_writes - ftl0.host_writes;
        let gc_moves = f.gc_moves - ftl0.gc_moves;
        // A cached mapping's translation pages programmed (write-backs and GC
        // relocations; 0 under other mappings): flash programs the host did not ask for.
        let translation_programs = (f.translation_page_writes - ftl0.translation_page_writes)
            + (f.translation_gc_moves - ftl0.translation_gc_moves);
        let c = self.ctl.counters;
        let geo = &self.geo;
        let dev = &self.device;
        let per_block = MeanVar::of(
            (0..geo.total_blocks()).map(|b| dev.block_erase_count(lamina_nand_model::BlockId(b)) as u64),
        );
        let per_page = if dev.partially_erased_blocks() > 0 {
            MeanVar::of(
                (0..geo.total_pages()).map(|p| dev.page_erase_count(lamina_nand_model::Ppa(p)) as u64),
            )
        } else {
            per_block.clone()
        };
        // Busy time runs until the device is idle: GC and flushes may outlast the last
        // request (swarm seed 247: a die "busy 115 %" of the request span).
        let busy_span = st.last_completion.max(self.last_op_done).saturating_since(first).0;
        let util = |busy: &mut dyn Iterator<Item = u64>| -> (f64, f64) {
            let (mut n, mut sum, mut max) = (0u64, 0u128, 0u64);
            for b in busy {
                n += 1;
                sum += b as u128;
                max = max.max(b);
            }
            if busy_span == 0 || n == 0 {
                return (0.0, 0.0);
            }
            (sum as f64 / n as f64 / busy_span as f64, max as f64 / busy_span as f64)
        };
        let (channel_mean, channel_max) =
            util(&mut (0..geo.channels()).map(|c| dev.channel_busy(lamina_nand_model::ChannelId(c)).0));
        let (die_mean, die_max) =
            util(&mut (0..geo.total_dies()).map(|d| dev.die_busy(lamina_nand_model::DieId(d)).0));
        let read_queue_per_die = if busy_span == 0 {
            0.0
        } else {
            let end = lamina_nand_model::SimTime(first.0 + busy_span);
            self.ctl.read_queue.area_until(end) as f64 / busy_span as f64 / geo.total_dies() as f64
        };
        let buffer = match self.buffer() {
            Some(b) => {
                let c = b.counters;
                BufferReport {
                    capacity_pages: b.capacity() as u64,
                    watermark_pages: b.watermark() as u64,
                    read_hit_ratio: ratio(c.read_hits, c.read_lookups),
                    write_hit_ratio: ratio(c.write_hits, c.write_lookups),
                    evictions: c.evictions,
                    eviction_flushes: c.eviction_flushes,
                    ahead_flushes: c.ahead_flushes,
                    idle_flushes: c.idle_flushes,
                    overflow_flushes: c.overflow_flushes,
                }
            }
            None => BufferReport::default(),
        };
        Report {
            schema_version: crate::report::SCHEMA_VERSION,
            lamina_version: crate::VERSION.to_owned(),
            seed: self.cfg.seed,
            warnings: self.warnings(),
            config: serde_json::to_value(&self.cfg).expect("config serializes"),
            config_sources: Vec::new(),
            device: self.device_summary(),
            trace,
            precondition: self.preconditioned.clone(),
            read: st.read.summary_at(pct),
            write: st.write.summary_at(pct),
            all: st.all().summary_at(pct),
            read_wait: st.read_wait.summary_at(pct),
            write_wait: st.write_wait.summary_at(pct),
            all_wait: st.all_wait().summary_at(pct),
            latency_attribution: st.attribution(),
            iops: per_s((st.read.count() + st.write.count()) as f64),
            bandwidth_mib_s: per_s((st.read_bytes + st.write_bytes) as f64) / mib,
            read_bandwidth_mib_s: per_s(st.read_bytes as f64) / mib,
            write_bandwidth_mib_s: per_s(st.write_bytes as f64) / mib,
            sim_time_ns: span,
            waf: (host > 0).then(|| (host + gc_moves + translation_programs) as f64 / host as f64),
            flash: FlashReport {
                host_programs: host,
                gc_programs: gc_moves,
                host_reads: c.host_reads,
                rmw_reads: c.rmw_reads,
                unwritten_reads: self.host.unwritten_reads,
                pending_write_reads: self.host.pending_write_reads,
                full_plane_redirects: c.full_plane_redirects,
                read_redirects: c.read_redirects,
                write_retries: c.write_retries,
                misaligned_groups: c.misaligned_groups,
                translation_reads: c.translation_reads,
                mirror_reads: c.mirror_reads,
            },
            flash_ops: Some(self.ctl.op_mix.report()),
            placement: self.placement_report(),
            rs: self.rs_report(),
            gc: GcReport {
                jobs: f.gc_jobs - ftl0.gc_jobs,
                pages_moved: gc_moves,
                reads: c.gc_reads,
                time: self.erase_snapshot.is_some().then(|| {
                    let t = self.gc.time;
                    GcTimeReport {
                        copies_ns: t.copies_ns,
                        erases_ns: t.erases_ns,
                        partial_erases_ns: t.partial_erases_ns,
                        spare_reads_ns: t.spare_reads_ns,
                        spare_reads: t.spare_reads,
                    }
                }),
            },
            erases: EraseReport {
                total: ds.blocks_erased - dev0.blocks_erased,
                partial: ds.partial_erases - dev0.partial_erases,
                per_block,
                per_page,
                per_block_replay: self.erase_snapshot.as_ref().map(|s| s.per_block_since(dev)),
                per_page_replay: self.erase_snapshot.as_ref().map(|s| s.per_page_since(dev)),
            },
            pen: self.cfg.ftl.pen.then(|| {
                let levels = self.device.spec().partial_erase_levels().unwrap_or(0);
                crate::report::PenReport::between(&ftl0, &f, levels)
            }),
            gftl: (self.cfg.ftl.kind == lamina_ftl::FtlKind::Gftl)
                .then(|| crate::report::GftlReport::between(&ftl0, &f, &self.cfg.ftl, self.device.spec())),
            remap: self
                .remap
                .as_ref()
                .map(|r| crate::remap::RemapReport { live_pages: r.live_pages(), ..r.counters.clone() }),
            mapping: (self.cfg.ftl.mapping == lamina_ftl::Mapping::Cached).then(|| {
                let die_ns = (0..geo.total_dies()).map(|d| dev.die_busy(lamina_nand_model::DieId(d)).0).sum();
                crate::report::MappingReport::between(&ftl0, &f, &self.cfg.ftl, &self.geo).with_flash_time(
                    c.translation_read_ns,
                    self.gc.time.translation_write_ns,
                    die_ns,
                )
            }),
            host_interface: self.hif.as_deref().map(|h| {
                let (m, c) = (&h.model, &h.counters);
                let util = |d: usize| if span == 0 { 0.0 } else { c.busy_ns[d] as f64 / span as f64 };
                crate::report::HostInterfaceReport {
                    kind: if m.sata { "sata" } else { "nvme" }.into(),
                    queues: m.queues,
                    queue_depth: m.queue_depth,
                    fetch_size: m.fetch_size,
                    lanes: m.link.lanes,
                    lane_bandwidth_bytes_per_s: m.link.lane_bytes_per_s,
                    messages_to_device: c.messages[0],
                    messages_to_host: c.messages[1],
                    wire_bytes_to_device: c.wire_bytes[0],
                    wire_bytes_to_host: c.wire_bytes[1],
                    utilisation_to_device: util(0),
                    utilisation_to_host: util(1),
                    host_waits: c.host_waits,
                    fetch_waits: c.fetch_waits,
                    peak_queue: c.peak_queue,
                }
            }),
            rows: self.die_aligned_rows().then(|| crate::report::RowsReport::between(&ftl0, &f)),
            utilisation: Utilisation {
                span_ns: busy_span,
                channel_mean,
                channel_max,
                die_mean,
                die_max,
                read_queue_per_die,
            },
            suspensions: dev.suspension_count(),
            buffer,
            events: EventReport {
                processed: self.events_processed,
                peak_outstanding: self.host.peak_outstanding,
            },
            histograms: crate::report::Histograms::of(st),
        }
    }
}

/// The config name of a policy or option (its serde form).
fn name<T: serde::Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(v) => v.to_string(),
        Err(_) => "?".into(),
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 { 0.0 } else { a as f64 / b as f64 }
}

/// Why [`run_trace`] failed.
#[derive(Debug, thiserror::Error)]
pub enum RunTraceError {
    /// Building the simulation failed.
    #[error(transparent)]
    Build(#[from] BuildError),
    /// The trace could not be read.
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// The run aborted.
    #[error(transparent)]
    Run(#[from] RunError),
    /// Preconditioning failed. (Not the error's `source`: its text is already in this
    /// message, and a chain would print it twice.)
    #[error("preconditioning: {0}")]
    Precondition(lamina_ftl::PreconditionError),
}

impl From<lamina_ftl::PreconditionError> for RunTraceError {
    fn from(e: lamina_ftl::PreconditionError) -> Self {
        RunTraceError::Precondition(e)
    }
}

/// Build a simulation from `cfg`, prefill (if configured), precondition (if
/// configured), replay the trace file and return the report. `path` may be `-`
/// (standard input) or a pipe: it is then spooled once to a temporary file, because
/// the prefill pass and the replay each read the trace from its start.
pub fn run_trace(cfg: &SimConfig, path: &Path) -> Result<Report, RunTraceError> {
    run_trace_with_progress(cfg, path, &mut |_| {})
}

/// How far a replay has got: what [`run_trace_with_progress`] reports. Observational
/// only — nothing in it feeds back into the simulation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    /// Requests taken from the trace by the replay so far.
    pub requests: u64,
    /// Arrival time of the latest of them (simulated time reached, to within the queue).
    pub latest_arrival: lamina_nand_model::SimTime,
    /// Bytes of the trace file read so far (compressed bytes for a compressed file;
    /// the reader runs ahead of the replay by a bounded number of batches).
    pub bytes_read: u64,
    /// The trace file's size in bytes, when known (a regular file; not a pipe).
    pub total_bytes: Option<u64>,
    /// True on the last call, after the trace's end.
    pub done: bool,
}

/// Requests between two progress callbacks (a callback per request would cost more
/// than the request).
const PROGRESS_EVERY: u64 = 4096;

/// Counts the bytes the trace reader pulls from the file (for [`Progress::bytes_read`]).
struct CountingRead<R> {
    inner: R,
    count: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl<R: std::io::Read> std::io::Read for CountingRead<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.fetch_add(n as u64, std::sync::atomic::Ordering::Relaxed);
        Ok(n)
    }
}

/// Passes requests through unchanged, calling `progress` every [`PROGRESS_EVERY`]
/// requests and once at the end.
struct ProgressIter<'a, S> {
    inner: S,
    state: Progress,
    bytes: std::sync::Arc<std::sync::atomic::AtomicU64>,
    progress: &'a mut dyn FnMut(&Progress),
}

impl<S: RequestSource> RequestSource for ProgressIter<'_, S> {
    /// Inlined into the replay's look-ahead, as the reader's own `next_request` (a
    /// request returned through memory by a call was a store-forwarding stall per
    /// request); the progress calls are out of line.
    #[inline(always)]
    fn next_request(&mut self) -> Option<IoRequest> {
        let item = self.inner.next_request();
        match &item {
            Some(r) => {
                self.state.requests += 1;
                self.state.latest_arrival =
                    self.state.latest_arrival.max(lamina_nand_model::SimTime(r.arrival.as_ns()));
                if self.state.requests % PROGRESS_EVERY == 0 {
                    self.report();
                }
            }
            None if !self.state.done => {
                self.state.done = true;
                self.report();
            }
            None => {}
        }
        item
    }

    fn take_error(&mut self) -> Option<TraceError> {
        self.inner.take_error()
    }
}

impl<I> ProgressIter<'_, I> {
    /// Call `progress` with the bytes read so far.
    #[cold]
    #[inline(never)]
    fn report(&mut self) {
        self.state.bytes_read = self.bytes.load(std::sync::atomic::Ordering::Relaxed);
        (self.progress)(&self.state);
    }
}

/// [`run_trace`], calling `progress` during the replay (every few thousand requests and
/// once at the end) — e.g. to drive a progress bar. The result is identical to
/// [`run_trace`]'s.
pub fn run_trace_with_progress(
    cfg: &SimConfig,
    path: &Path,
    progress: &mut dyn FnMut(&Progress),
) -> Result<Report, RunTraceError> {
    run_built(SimulationBuilder::new(cfg.clone()), path, progress).map(|(report, _)| report)
}

/// [`run_trace_with_progress`] with a simulation from `builder` (e.g. one with a
/// [`crate::LatencyLog`]); returns the finished simulation beside the report.
pub fn run_built(
    builder: SimulationBuilder,
    path: &Path,
    progress: &mut dyn FnMut(&Progress),
) -> Result<(Report, Simulation), RunTraceError> {
    run_built_cached(builder, path, None, progress)
}

/// [`run_built`], taking the trace's requests from `cache` when it holds them or can
/// parse them (runs that replay the same trace share one parse; see
/// [`crate::TraceCache`]), else streaming the file as [`run_built`] does. The result is
/// identical either way.
pub fn run_built_cached(
    builder: SimulationBuilder,
    path: &Path,
    cache: Option<&crate::TraceCache>,
    progress: &mut dyn FnMut(&Progress),
) -> Result<(Report, Simulation), RunTraceError> {
    let cfg = &builder.cfg.clone();
    let mut sim = builder.build()?;
    let cap = sim.logical_capacity_bytes();
    if let Some(parsed) = cache.and_then(|c| c.get(path, &cfg.trace, cap)) {
        sim.precondition()?;
        if cfg.host.unwritten_reads == UnwrittenReads::Prefill {
            sim.prefill_streamed(parsed.cursor())?;
        }
        let mut cursor = parsed.cursor();
        let file_bytes = parsed.file_bytes();
        let bytes = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(file_bytes));
        let state = Progress { total_bytes: Some(file_bytes), ..Progress::default() };
        sim.run_source(ProgressIter { inner: &mut cursor, state, bytes, progress })?;
        // Only regular files are cached.
        return Ok(finish(cfg, sim, file_name(path), &cursor.summary()));
    }
    let input = TraceInput::open(path)?;
    sim.precondition()?;
    if cfg.host.unwritten_reads == UnwrittenReads::Prefill {
        // Parsed on the prefill's own thread, beside the FTL writes (`prefill.rs`).
        let parser = TraceParser::new(input.name(), Box::new(input.file()?), None, &cfg.trace, cap)?;
        sim.prefill_streamed(parser)?;
    }
    let file = input.file()?;
    let total_bytes = file.metadata().ok().filter(|m| m.is_file()).map(|m| m.len());
    let bytes = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let counted = CountingRead { inner: file, count: bytes.clone() };
    let mut reader = TraceReader::from_reader(input.name(), counted, None, &cfg.trace, cap)?;
    let state = Progress { total_bytes, ..Progress::default() };
    sim.run_source(ProgressIter { inner: &mut reader, state, bytes, progress })?;
    // A pipe's file name (`63` of `/dev/fd/63`) says nothing: name it whole (`stdin` for `-`).
    let name = if input.is_spooled() { input.name().to_owned() } else { file_name(path) };
    Ok(finish(cfg, sim, name, &reader.summary()))
}

/// How a report names the trace file at `path`: its file name.
fn file_name(path: &Path) -> String {
    path.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
}

/// The report of a finished replay of the trace `name`, read as `summary` says.
fn finish(cfg: &SimConfig, sim: Simulation, name: String, summary: &TraceSummary) -> (Report, Simulation) {
    let mut warnings = summary.warnings.clone();
    warnings.extend(mode_warning(cfg, summary));
    let info = TraceInfo {
        name,
        format: summary.format.to_string(),
        digest: summary.digest.clone(),
        requests: summary.requests,
        skipped: summary.errors_skipped,
        wrapped: summary.wrapped,
        changes: summary.changes.clone(),
        warnings,
    };
    (sim.report(info), sim)
}

/// A generated trace declares the host mode it was made for (`# lamina-trace-gen:
/// host.mode=closed host.closed_loop_depth=32`): replaying a closed-loop trace (every
/// arrival at 0) open-loop queues all of it at once, so say so and how to fix it.
fn mode_warning(cfg: &SimConfig, summary: &TraceSummary) -> Option<String> {
    let declared = summary.generated_with.as_ref()?;
    if declared.get("host.mode").map(String::as_str) != Some("closed") || cfg.host.mode == HostMode::Closed {
        return None;
    }
    let sets: Vec<String> = declared
        .iter()
        .filter(|(k, _)| k.starts_with("host."))
        .map(|(k, v)| format!("--set {k}={v}"))
        .collect();
    Some(format!(
        "{}: the trace was generated for closed-loop replay (its `# {}` line) but this run is open-loop, so every \
         request arrives at time 0 and waits in one queue; replay it with {}",
        summary.file,
        lamina_trace::GEN_COMMENT,
        sets.join(" ")
    ))
}

/// Untimed programs of consecutive pages of one block not yet given to the device
/// (preconditioning's sink): pages `first .. next`, all below `end`, the block's end.
#[derive(Default)]
struct ProgramRun {
    first: u64,
    next: u64,
    end: u64,
}

impl ProgramRun {
    /// Program page `ppa`: it extends the run when it is the run's next page in the same
    /// block; otherwise the run goes to the device and a new one starts.
    #[inline]
    fn push(&mut self, device: &mut lamina_nand_model::Device, ppa: u64, pages_per_block: u32) {
        if ppa == self.next && ppa < self.end {
            self.next += 1;
            return;
        }
        self.flush(device);
        let ppb = pages_per_block as u64;
        *self = ProgramRun { first: ppa, next: ppa + 1, end: (ppa / ppb + 1) * ppb };
    }

    /// Give the pending run to the device.
    fn flush(&mut self, device: &mut lamina_nand_model::Device) {
        if self.next > self.first {
            let n = (self.next - self.first) as u32;
            device.program_run_untimed(lamina_nand_model::Ppa(self.first), n).expect("precondition program");
            self.first = self.next;
        }
    }
}
