//! Configuration knobs: raw, structure-free values (`#[derive(Arbitrary)]`, so the fuzzer
//! can produce them) that [`Knobs::to_toml`] maps onto a *legal* run configuration.
//!
//! Every field is a small integer or enum; the mapping folds it into the legal range of
//! its key (e.g. `channels = 1 + raw % 4`). Where legality depends on several keys at
//! once (over-provisioning against the GC threshold and the block count), the mapping asks
//! the real validator ([`FtlConfig::validate`]) rather than re-deriving its rule, so the
//! swarm keeps working when a rule changes. Devices are kept small (≤ ~8 k pages) so that
//! garbage collection starts within a few thousand requests.

use std::fmt::Write as _;

use arbitrary::Arbitrary;
use lamina_ftl::{Allocation, FtlConfig, FtlKind, GcThreshold, Replication, StripeOrder};
use lamina_nand_model::GeometryConfig;
use lamina_sched::{PlacementKind, SchedulerKind};

/// Everything the swarm and the fuzzer vary about a run's configuration.
#[derive(Arbitrary, Clone, Debug)]
pub struct Knobs {
    /// `seed` of the run (preconditioning order, tie-breaks).
    pub sim_seed: u64,
    /// `[nand.geometry]`.
    pub geometry: GeometryKnobs,
    /// `[nand.timing]` and `[nand.suspension]`.
    pub timing: TimingKnobs,
    /// `[ftl]`.
    pub ftl: FtlKnobs,
    /// `[sched]`.
    pub sched: SchedKnobs,
    /// `[buffer]`.
    pub buffer: BufferKnobs,
    /// `[host]`.
    pub host: HostKnobs,
    /// `[precondition]` (absent = none).
    pub precondition: Option<PreconditionKnobs>,
    /// `[remap]` (absent = none; written only where its rules allow: two or more
    /// partial-read units per page, no `ftl.replication`). Last, so adding it left
    /// every other knob's draw unchanged.
    pub remap: Option<RemapKnobs>,
}

/// Raw remapping choices (`remap.policy = "micropages"`).
#[derive(Arbitrary, Clone, Debug)]
pub struct RemapKnobs {
    window_us: u16,
    group_units: Option<u8>,
    threshold: u8,
    pages: u8,
    table_groups: Option<u8>,
}

/// Raw geometry choices.
#[derive(Arbitrary, Clone, Debug)]
pub struct GeometryKnobs {
    channels: u8,
    chips: u8,
    dies: u8,
    planes: u8,
    blocks: u8,
    word_lines: u8,
    page_size: u8,
    partial_read: Option<u8>,
    cell: Cell,
    layers: u8,
    grouped: bool,
}

/// Cell type (bits per cell).
#[derive(Arbitrary, Clone, Copy, Debug)]
pub enum Cell {
    /// 1 bit.
    Slc,
    /// 2 bits.
    Mlc,
    /// 3 bits.
    Tlc,
    /// 4 bits.
    Qlc,
}

impl Cell {
    fn name(self) -> &'static str {
        match self {
            Cell::Slc => "slc",
            Cell::Mlc => "mlc",
            Cell::Tlc => "tlc",
            Cell::Qlc => "qlc",
        }
    }
    fn bits(self) -> u32 {
        match self {
            Cell::Slc => 1,
            Cell::Mlc => 2,
            Cell::Tlc => 3,
            Cell::Qlc => 4,
        }
    }
}

/// Raw timing choices (all legal after mapping: latencies positive, ratios ≥ 1).
#[derive(Arbitrary, Clone, Debug)]
pub struct TimingKnobs {
    t_cmd: u8,
    t_r_us: [u8; 4],
    per_type_read: bool,
    t_prog_us: [u16; 4],
    per_type_prog: bool,
    t_bers_us: u16,
    bus: Bus,
    t_dbsy: u8,
    suspension: Option<Suspension>,
    layer_speed: Option<(u8, bool, bool)>,
    /// `[nand.soml]`: max parts, decoders, factor (only with partial reads).
    soml: Option<(u8, u8, u8)>,
}

/// Channel bus speed, in one of the two accepted forms.
#[derive(Arbitrary, Clone, Debug)]
pub enum Bus {
    /// `ns_per_byte`.
    PerByte(u8),
    /// `width_bits` × `rate_mts`.
    Rate(bool, u16),
}

/// Program/erase suspension.
#[derive(Arbitrary, Clone, Debug)]
pub struct Suspension {
    program: bool,
    erase: bool,
    max_per_op: u8,
    t_suspend_program: u16,
    t_suspend_erase: u16,
    t_resume: u16,
}

/// Raw FTL choices.
#[derive(Arbitrary, Clone, Debug)]
pub struct FtlKnobs {
    op_percent: u8,
    threshold: Threshold,
    stripe: u8,
    tie_break: u8,
    copyback: bool,
    wear_leveling: bool,
    /// `ftl.allocation = "die-aligned"` (page FTL only).
    die_aligned: bool,
    /// `ftl.kind`: 0–3 page, 4 nftl (gftl when `kind / 8` is odd), 5 superblock, 6 mbm, 7
    /// tbm (`kind % 8`).
    kind: u8,
    /// Superblock FTL: `superblock_size` 1–4 and `superblock_extra_blocks` 1–3.
    superblock: (u8, u8),
}

/// GC trigger.
#[derive(Arbitrary, Clone, Debug)]
pub enum Threshold {
    /// `{ free_blocks = 2 + n % 4 }`.
    Blocks(u8),
    /// `{ free_fraction = (n % 30) / 100 }`.
    Fraction(u8),
}

/// Raw policy choices.
#[derive(Arbitrary, Clone, Debug)]
pub struct SchedKnobs {
    placement: u8,
    fcfs: bool,
    preemptible: bool,
    mean_layer: bool,
    die_scope: bool,
    include_own_write: bool,
    /// `sched.scheduler` (soml only where the device has SOML reads).
    scheduler: u8,
    /// `sched.multiplane_width` (absent = planes per die).
    width: Option<u8>,
    /// `sched.window`.
    window: u8,
    /// `sched.suspend_threshold` in µs.
    suspend_threshold_us: Option<u16>,
}

/// Raw write-buffer choices.
#[derive(Arbitrary, Clone, Debug)]
pub struct BufferKnobs {
    pub size: BufferSize,
    watermark_percent: u8,
    idle_flush_us: Option<u16>,
    dram_latency: Option<u16>,
}

/// Buffer capacity class.
#[derive(Arbitrary, Clone, Debug)]
pub enum BufferSize {
    /// No buffer.
    Off,
    /// 1–4 pages plus stray bytes (a buffer smaller than a page is a config error).
    Tiny(u8, u16),
    /// 8–263 pages.
    Large(u8),
}

/// Raw host-interface choices.
#[derive(Arbitrary, Clone, Debug)]
pub struct HostKnobs {
    closed: bool,
    queue_depth: Option<u8>,
    closed_loop_depth: u8,
    read_modify_write: bool,
    zero_unwritten: bool,
}

/// Raw preconditioning choices.
#[derive(Arbitrary, Clone, Debug)]
pub struct PreconditionKnobs {
    fill_percent: u8,
    random_order: bool,
    passes_tenths: u8,
    window_percent: u8,
    epsilon_percent: u8,
    stable_windows: u8,
}

/// Largest device the swarm draws at scale 1, in pages: small enough for GC to start
/// early. [`crate::swarm_harness::scale`] multiplies it.
const MAX_DEVICE_PAGES: u32 = 8192;

impl GeometryKnobs {
    /// The legal geometry these knobs describe.
    pub fn config(&self) -> GeometryConfig {
        let bits = self.cell.bits();
        let word_lines = 2 + u32::from(self.word_lines) % 15;
        let pages_per_block = word_lines * bits;
        let page_size_bytes = 512u32 << (self.page_size % 6); // 512 B ..= 16 KiB
        let planes_per_die = 1 + u32::from(self.planes) % 3;
        let channels = 1 + u32::from(self.channels) % 4;
        let chips_per_channel = 1 + u32::from(self.chips) % 2;
        let dies_per_chip = 1 + u32::from(self.dies) % 2;
        let planes = channels * chips_per_channel * dies_per_chip * planes_per_die;
        // 6 blocks is the least that leaves room above any threshold we draw (≤ 5 + 1).
        let scale = super::scale();
        let cap = (MAX_DEVICE_PAGES * scale / (planes * pages_per_block)).max(6);
        let blocks_per_plane = (6 + u32::from(self.blocks) % 27 * scale).min(cap);
        let partial_read_bytes = self.partial_read.map(|p| page_size_bytes >> (p % 3));
        GeometryConfig {
            channels,
            chips_per_channel,
            dies_per_chip,
            planes_per_die,
            blocks_per_plane,
            pages_per_block,
            page_size_bytes,
            partial_read_bytes,
            cell_type: serde_plain(self.cell.name()),
            layers: 1 + u32::from(self.layers) % word_lines,
            page_type_order: serde_plain(if self.grouped { "grouped" } else { "interleaved" }),
        }
    }
}

/// A unit enum from its config name (the crates expose no other constructor by name).
fn serde_plain<T: serde::de::DeserializeOwned>(name: &str) -> T {
    T::deserialize(toml::Value::String(name.to_owned())).expect("known enum name")
}

impl Knobs {
    /// The resolved run configuration as a TOML document (what `ConfigBuilder::toml`
    /// takes, and what a failure prints).
    pub fn to_toml(&self) -> String {
        self.to_toml_within(u64::MAX, 0)
    }

    /// [`Knobs::to_toml`] with the buffer cut to at most `max_buffer_bytes` (whole
    /// pages): a buffer larger than the logical capacity is a config error; and
    /// `remap.pages` cut to at most `max_remap_pages` (0 = no remapping: it must stay
    /// below half the host pages).
    pub fn to_toml_within(&self, max_buffer_bytes: u64, max_remap_pages: u64) -> String {
        let geo = self.geometry.config();
        let mut s = String::new();
        // TOML integers are i64: seeds above i64::MAX cannot be written in a config file.
        let _ = writeln!(s, "seed = {}", self.sim_seed & i64::MAX as u64);
        s.push_str("\n[nand.geometry]\n");
        s.push_str(&toml::to_string(&geo).expect("geometry serializes"));
        let slots = geo.partial_read_bytes.map_or(0, |p| geo.page_size_bytes / p);
        self.timing.write(&mut s, geo.cell_type.bits(), geo.layers, slots);
        // RAIN 1 needs static placement, no buffer and two chips (config errors otherwise).
        let rain1_allowed = matches!(self.buffer.size, BufferSize::Off)
            && self.sched.placement_kind() == PlacementKind::Static
            && geo.channels * geo.chips_per_channel >= 2;
        let replication = self.ftl.write(&mut s, &geo, rain1_allowed);
        self.sched.write(&mut s, &geo, self.timing.soml.is_some() && geo.partial_read_bytes.is_some());
        self.buffer.write(&mut s, geo.page_size_bytes, max_buffer_bytes);
        self.host.write(&mut s);
        if let Some(p) = &self.precondition {
            p.write(&mut s);
        }
        if let Some(r) = &self.remap
            && slots >= 2
            && replication == Replication::None
            && max_remap_pages > 0
        {
            r.write(&mut s, slots, max_remap_pages);
        }
        s
    }
}

impl RemapKnobs {
    /// The `[remap]` section for pages of `slots` partial-read units.
    fn write(&self, s: &mut String, slots: u32, max_pages: u64) {
        s.push_str("\n[remap]\npolicy = \"micropages\"\n");
        // 1 us – 4 ms: from "only back-to-back reads group" to "most of a burst does".
        let _ = writeln!(s, "window = {}", (1 + u64::from(self.window_us % 4_000)) * 1_000);
        let max_units = slots.min(lamina_engine::remap::MAX_GROUP as u32);
        let units = self.group_units.map_or(0, |g| 2 + u32::from(g) % (max_units - 1));
        let _ = writeln!(s, "group_units = {units}");
        let _ = writeln!(s, "threshold = {}", 1 + self.threshold % 3);
        // Reads that arrive while their remap page's read is in flight: half of the runs
        // serve them from the page register, half queue a read of their own.
        let _ = writeln!(s, "join_in_flight = {}", self.threshold / 3 % 2 == 0);
        // A small pool so that eviction and `no_room` happen too.
        let _ = writeln!(s, "pages = {}", 1 + u64::from(self.pages) % max_pages.min(64));
        let _ = writeln!(s, "table_groups = {}", self.table_groups.map_or(65_536, |t| 1 + u32::from(t % 16)));
    }
}

fn list(values: impl Iterator<Item = u64>) -> String {
    let v: Vec<String> = values.map(|x| x.to_string()).collect();
    format!("[{}]", v.join(", "))
}

impl TimingKnobs {
    fn write(&self, s: &mut String, bits: u32, layers: u32, partial_slots: u32) {
        s.push_str("\n[nand.timing]\n");
        let _ = writeln!(s, "t_cmd = {}", u64::from(self.t_cmd) * 2);
        // tR 5–260 us and tPROG 50 us – 3.3 ms: the spread of SLC to QLC parts.
        let t_r = |i: usize| 5_000 + u64::from(self.t_r_us[i]) * 1_000;
        let t_prog = |i: usize| 50_000 + u64::from(self.t_prog_us[i] % 3_250) * 1_000;
        let n = bits as usize;
        if self.per_type_read {
            let _ = writeln!(s, "t_r = {}", list((0..n).map(t_r)));
        } else {
            let _ = writeln!(s, "t_r = {}", t_r(0));
        }
        if self.per_type_prog {
            let _ = writeln!(s, "t_prog = {}", list((0..n).map(t_prog)));
        } else {
            let _ = writeln!(s, "t_prog = {}", t_prog(0));
        }
        let _ = writeln!(s, "t_bers = {}", 300_000 + u64::from(self.t_bers_us % 5_000) * 1_000);
        let _ = writeln!(s, "t_dbsy = {}", self.t_dbsy);
        if let Some(sp) = &self.suspension {
            let _ = writeln!(s, "t_suspend_program = {}", sp.t_suspend_program % 20_000);
            let _ = writeln!(s, "t_suspend_erase = {}", sp.t_suspend_erase % 20_000);
            let _ = writeln!(s, "t_resume = {}", sp.t_resume % 20_000);
        }
        match self.bus {
            Bus::PerByte(ns) => {
                let _ = writeln!(s, "bus = {{ ns_per_byte = {} }}", 1 + ns % 25);
            }
            Bus::Rate(wide, rate) => {
                let width = if wide { 16 } else { 8 };
                let _ = writeln!(s, "bus = {{ width_bits = {width}, rate_mts = {} }}", 50 + rate % 1_600);
            }
        }
        if let Some((ratio, geometric, bottom)) = self.layer_speed {
            // A ratio other than 1 needs two layers or more.
            let ratio = if layers < 2 { 1.0 } else { 1.0 + f64::from(ratio % 31) / 10.0 };
            s.push_str("\n[nand.timing.layer_speed]\n");
            let _ = writeln!(s, "ratio = {ratio:?}");
            let _ = writeln!(s, "curve = \"{}\"", if geometric { "geometric" } else { "linear" });
            let _ = writeln!(s, "slow_end = \"{}\"", if bottom { "bottom" } else { "top" });
        }
        if let (Some((parts, decoders, factor)), true) = (self.soml, partial_slots > 0) {
            s.push_str("\n[nand.soml]\n");
            let _ = writeln!(s, "max_parts = {}", 1 + u32::from(parts) % partial_slots);
            let _ = writeln!(s, "decoders = {}", 1 + decoders % 4);
            let _ = writeln!(s, "factor = {:?}", 1.0 + f64::from(factor % 50) / 100.0);
        }
        if let Some(sp) = &self.suspension {
            s.push_str("\n[nand.suspension]\n");
            let _ = writeln!(s, "program = {}", sp.program);
            let _ = writeln!(s, "erase = {}", sp.erase);
            let _ = writeln!(s, "max_per_op = {}", 1 + sp.max_per_op % 3);
        }
    }
}

impl FtlKnobs {
    /// The FTL section; over-provisioning is raised from the drawn value until the real
    /// validator accepts it against the geometry. Returns the replication written.
    fn write(&self, s: &mut String, geo: &GeometryConfig, rain1_allowed: bool) -> Replication {
        let geometry = geo.validate().expect("drawn geometry is legal");
        let gc_threshold = match self.threshold {
            Threshold::Blocks(n) => GcThreshold::FreeBlocks(2 + u32::from(n) % 4),
            Threshold::Fraction(n) => GcThreshold::FreeFraction(f64::from(n % 30) / 100.0),
        };
        let kind = match self.kind % 8 {
            4 if self.kind / 8 % 2 == 1 => FtlKind::Gftl,
            4 => FtlKind::Nftl,
            5 => FtlKind::Superblock,
            6 => FtlKind::Mbm,
            7 => FtlKind::Tbm,
            _ => FtlKind::Page,
        };
        // Options only some kinds accept are written only for them.
        let tie_break = match kind {
            FtlKind::Nftl | FtlKind::Gftl => "lowest-id",
            _ => ["lowest-id", "oldest", "least-worn"][usize::from(self.tie_break) % 3],
        };
        let die_aligned = self.die_aligned && kind == FtlKind::Page;
        let (sb_size, sb_extra) =
            (1 + u32::from(self.superblock.0) % 4, 1 + u32::from(self.superblock.1) % 3);
        let mut cfg = FtlConfig {
            kind,
            overprovisioning: f64::from(self.op_percent % 40) / 100.0,
            gc_threshold,
            striping_order: StripeOrder::all()[usize::from(self.stripe) % 24],
            victim_tie_break: serde_plain(tie_break),
            copyback: self.copyback,
            wear_leveling: self.wear_leveling,
            allocation: if die_aligned { Allocation::DieAligned } else { Allocation::PerPlane },
            ..FtlConfig::default()
        };
        if kind == FtlKind::Superblock {
            cfg.superblock_size = sb_size;
            cfg.superblock_extra_blocks = sb_extra;
        }
        // MBM: its write strategy, or the per-plane ablation.
        cfg.mbm_ws = kind != FtlKind::Mbm || self.die_aligned;
        // One of the page FTL's four kind values keeps two copies (RAIN 1) where allowed.
        if rain1_allowed && self.kind % 8 == 3 {
            cfg.replication = Replication::Rain1;
            if cfg.validate(&geometry).is_err_and(|e| e.key == "ftl.replication") {
                cfg.replication = Replication::None;
            }
        }
        let mut wrapped = 0;
        while cfg.validate(&geometry).is_err() {
            // A threshold too large for the plane: fall back to the least legal one.
            if cfg.overprovisioning >= 0.85 {
                cfg.gc_threshold = GcThreshold::FreeBlocks(2);
                cfg.overprovisioning = 0.0;
                wrapped += 1;
                if wrapped == 2 {
                    // No over-provisioning fits a block-level FTL on this geometry (too
                    // few blocks per plane for its logical blocks plus spares): the page
                    // FTL instead, which always fits.
                    cfg = FtlConfig { kind: FtlKind::Page, mbm_ws: true, ..cfg };
                    cfg.superblock_size = FtlConfig::default().superblock_size;
                    cfg.superblock_extra_blocks = FtlConfig::default().superblock_extra_blocks;
                }
            }
            cfg.overprovisioning = ((cfg.overprovisioning * 100.0).round() + 1.0) / 100.0;
        }
        let kind = cfg.kind;
        s.push_str("\n[ftl]\n");
        let _ = writeln!(s, "kind = \"{}\"", kind.name());
        let _ = writeln!(s, "overprovisioning = {:?}", cfg.overprovisioning);
        let _ = match cfg.gc_threshold {
            GcThreshold::FreeBlocks(n) => writeln!(s, "gc_threshold = {{ free_blocks = {n} }}"),
            GcThreshold::FreeFraction(f) => writeln!(s, "gc_threshold = {{ free_fraction = {f:?} }}"),
        };
        let _ = writeln!(s, "striping_order = \"{}\"", cfg.striping_order);
        if !matches!(kind, FtlKind::Nftl | FtlKind::Gftl) {
            let _ = writeln!(s, "victim_tie_break = \"{tie_break}\"");
        }
        if kind == FtlKind::Superblock {
            let _ = writeln!(s, "superblock_size = {sb_size}");
            let _ = writeln!(s, "superblock_extra_blocks = {sb_extra}");
        }
        let _ = writeln!(s, "copyback = {}", cfg.copyback);
        let _ = writeln!(s, "wear_leveling = {}", cfg.wear_leveling);
        let _ = writeln!(s, "allocation = \"{}\"", if die_aligned { "die-aligned" } else { "per-plane" });
        if cfg.replication == Replication::Rain1 {
            let _ = writeln!(s, "replication = \"rain1\"");
        }
        if kind == FtlKind::Mbm {
            let _ = writeln!(s, "mbm_ws = {}", cfg.mbm_ws);
        }
        cfg.replication
    }
}

impl SchedKnobs {
    fn placement_kind(&self) -> PlacementKind {
        PlacementKind::ALL[usize::from(self.placement) % PlacementKind::ALL.len()]
    }

    fn write(&self, s: &mut String, geo: &GeometryConfig, soml: bool) {
        let placement = self.placement_kind();
        s.push_str("\n[sched]\n");
        // Every scheduler the device supports (`soml` needs SOML reads).
        let kinds: Vec<SchedulerKind> =
            SchedulerKind::ALL.into_iter().filter(|k| soml || !k.needs_soml()).collect();
        let kind = kinds[usize::from(self.scheduler) % kinds.len()];
        let _ = writeln!(s, "scheduler = \"{}\"", kind.name());
        if let Some(w) = self.width {
            let _ = writeln!(s, "multiplane_width = {}", 1 + u32::from(w) % geo.planes_per_die);
        }
        let _ = writeln!(s, "window = {}", self.window % 40);
        if let Some(us) = self.suspend_threshold_us {
            let _ = writeln!(s, "suspend_threshold = {}", u64::from(us % 2_000) * 1_000);
        }
        let _ = writeln!(s, "placement = \"{}\"", placement.name());
        let _ = writeln!(s, "arbiter = \"{}\"", if self.fcfs { "fcfs" } else { "read-first" });
        let _ = writeln!(s, "gc = \"{}\"", if self.preemptible { "preemptible" } else { "blocking" });
        s.push_str("\n[sched.lacr]\n");
        let _ = writeln!(s, "pending_write_layer = \"{}\"", if self.mean_layer { "mean" } else { "tracked" });
        let _ = writeln!(s, "read_scope = \"{}\"", if self.die_scope { "die" } else { "channel" });
        let _ = writeln!(s, "include_own_write = {}", self.include_own_write);
        // From `window`'s bits above its `% 40`, so that no other knob's draw moved when
        // this option came. At every scale: every FTL logs the pages it moves, which keeps
        // `current` linear (docs/policies.md "Cost of an estimate").
        let current = self.window / 40 % 2 == 1;
        let _ = writeln!(s, "read_page = \"{}\"", if current { "current" } else { "queued" });
    }
}

impl BufferKnobs {
    fn write(&self, s: &mut String, page_size: u32, max_bytes: u64) {
        let page = u64::from(page_size);
        let size = match self.size {
            BufferSize::Off => 0,
            BufferSize::Tiny(n, stray) => (1 + u64::from(n % 4)) * page + u64::from(stray) % page,
            BufferSize::Large(n) => (8 + u64::from(n)) * page,
        };
        let size = if size > max_bytes { max_bytes / page * page } else { size };
        s.push_str("\n[buffer]\n");
        let _ = writeln!(s, "size_bytes = {size}");
        let _ = writeln!(s, "flush_watermark = {:?}", f64::from(self.watermark_percent % 95) / 100.0);
        if let Some(us) = self.idle_flush_us {
            let _ = writeln!(s, "idle_flush_after = {}", (1 + u64::from(us % 20_000)) * 1_000);
        }
        let _ = writeln!(s, "dram_latency = {}", self.dram_latency.map_or(0, |n| 1 + u64::from(n % 5_000)));
    }
}

impl HostKnobs {
    fn write(&self, s: &mut String) {
        s.push_str("\n[host]\n");
        let _ = writeln!(s, "mode = \"{}\"", if self.closed { "closed" } else { "open" });
        let _ = writeln!(s, "queue_depth = {}", self.queue_depth.map_or(0, |d| 1 + u32::from(d % 64)));
        let _ = writeln!(s, "closed_loop_depth = {}", 1 + self.closed_loop_depth % 64);
        let _ = writeln!(s, "read_modify_write = {}", self.read_modify_write);
        let _ = writeln!(s, "unwritten_reads = \"{}\"", if self.zero_unwritten { "zero" } else { "prefill" });
        s.push_str("verify = true\n");
    }
}

impl PreconditionKnobs {
    fn write(&self, s: &mut String) {
        s.push_str("\n[precondition]\n");
        let _ = writeln!(s, "fill_fraction = {:?}", f64::from(self.fill_percent % 101) / 100.0);
        let _ = writeln!(s, "fill_order = \"{}\"", if self.random_order { "random" } else { "sequential" });
        let _ = writeln!(s, "max_overwrite_passes = {:?}", f64::from(self.passes_tenths % 21) / 10.0);
        let _ = writeln!(s, "window_fraction = {:?}", f64::from(1 + self.window_percent % 50) / 100.0);
        let _ = writeln!(s, "waf_epsilon = {:?}", f64::from(self.epsilon_percent % 10) / 100.0);
        let _ = writeln!(s, "stable_windows = {}", 1 + self.stable_windows % 3);
    }
}
