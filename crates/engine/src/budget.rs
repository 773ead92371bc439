//! The memory budget: what a configuration will allocate, computed from the config alone
//! before anything is built, and the checks that refuse a configuration that cannot fit
//! in memory or in the engine's index widths.
//!
//! [`SimulationBuilder::build`] calls `check` first, so a 1 TiB write buffer, a
//! device of 2^33 pages or a page-FTL table that cannot be indexed with 32 bits is
//! refused in microseconds, naming the config key, the estimate and the limit, instead
//! of allocating gigabytes (or aborting on an allocation failure) first.
//!
//! # What is counted
//!
//! Every allocation whose size follows from the configuration, with the per-item sizes
//! of today's data structures (each constant below names the structure it mirrors; the
//! `budget` integration test measures real allocations with a counting allocator and
//! fails when an estimate drifts from them):
//!
//! - **up front**, at build: per-block device and FTL state, free lists, GC buckets,
//!   per-page-in-block timing tables, write-buffer slots, the chunk directories of the
//!   lazily allocated per-page tables;
//! - **at full footprint**, when the trace has touched every logical page: the FTL's
//!   forward and reverse maps, the cached mapping's translation-page content and CMT
//!   (`ftl.mapping = "cached"`), verify tags and versions, the buffer's LPN index, the
//!   prefill bitmap and partial-erase records.
//!
//! The limit applies to the full-footprint total: the trace is streamed, so its
//! footprint is unknown at build, and a run that exhausts memory after an hour is worse
//! than a refusal with a remedy. Not counted: state that grows with the trace's
//! concurrency (outstanding requests, queued events, the host queue, the trace reader's
//! reorder window), which a configuration cannot bound.
//!
//! # The limit
//!
//! [`MemoryLimit::Host`] (the default) is, in order: the environment variable
//! `LAMINA_MAX_MEMORY` (a whole number of bytes), else physical memory (`MemTotal` in
//! `/proc/meminfo`), else no limit (other systems). Host state is read once, when the
//! builder builds, and only decides whether a run is refused: it never reaches a
//! simulated number. Programs that run many simulations (or tests) pass an explicit
//! [`MemoryLimit::Bytes`] with [`SimulationBuilder::memory_limit`].
//!
//! A refusal names where the limit came from (with `LAMINA_MAX_MEMORY`'s value), what
//! the estimate follows (the device's size and the keys that make it, never the
//! trace's length), the largest parts, remedies that exist (a key to change, a limit
//! that passes) and, in [`BudgetError::Memory`]'s `drivers`, the keys a caller can
//! locate in its config files (`lamina run` does).

use std::fmt;

use lamina_ftl::Mapping;
use lamina_nand_model::Geometry;

use crate::config::{SimConfig, UnwrittenReads};
use crate::setup::{BuildError, SimulationBuilder};

/// Environment variable that overrides the host's memory as the limit (bytes).
pub const MAX_MEMORY_ENV: &str = "LAMINA_MAX_MEMORY";

/// Entries per chunk of [`crate::table::LpnTable`].
const CHUNK: u64 = 4096;

// Per-item sizes in bytes, each mirroring one data structure.
/// `nand-model` `state::BlockState` (write pointer, erase count, extension index).
const DEVICE_BLOCK: u64 = 12;
/// `nand-model` `Device::tags`: one `Option<Box<[u64]>>` per block (verify mode).
const DEVICE_TAG_SLOT: u64 = 16;
/// A verify tag per physical page (allocated per block on its first program).
const DEVICE_TAG: u64 = 8;
/// `nand-model` `device::DieState` (ready time, last program/erase, busy time).
const DEVICE_DIE: u64 = 72;
/// `nand-model` `device::ChannelState` (bus calendar header and busy time).
const DEVICE_CHANNEL: u64 = 32;
/// `nand-model` `Timing`: array read and program time per page-in-block.
const TIMING_PER_PAGE_IN_BLOCK: u64 = 16;
/// `nand-model` `state::BlockExt` header plus its slot in the extension vector
/// (three `Vec` headers and the slot), for a partially erased block.
const DEVICE_EXT_BLOCK: u64 = 3 * 24 + 72;
/// `ftl` `page::BlockMeta`.
const FTL_BLOCK: u64 = 32;
/// `ftl` `PageFtl::rev`: one `Option<Box<[u32]>>` per block.
const FTL_REV_SLOT: u64 = 16;
/// `ftl` free-block heap entry (`Reverse<u64>`, wear levelling on).
const FTL_FREE_HEAP: u64 = 8;
/// `ftl` free-block FIFO entry (`u32`, wear levelling off).
const FTL_FREE_FIFO: u64 = 4;
/// `ftl` `page::PlaneState` plus its static-plane table entry.
const FTL_PLANE: u64 = 80 + 4;
/// Engine `sim::DieState` (queues' headers, counters).
const ENGINE_DIE: u64 = 120;
/// Placement tokens per channel, chip and die (`sched` dynamic placement).
const SCHED_UNIT: u64 = 4;
/// `LpnTable` chunk directory entry (`Option<Box<[T; CHUNK]>>`).
const TABLE_SLOT: u64 = 8;
/// `ftl` `cmt::Slot`: one cached mapping entry in the CMT's slab (LPN, PPA, dirty bit,
/// LRU links).
const CMT_SLOT: u64 = 24;
/// The CMT's index (`BTreeMap<u64, u32>`) per entry: B-tree nodes of 11 keys and values
/// hold 5 to 11 entries each; measured with a counting allocator at 21-26 bytes per entry
/// under random and sequential insertion with LRU eviction.
const CMT_INDEX: u64 = 24;
/// Write-buffer slot (`buffer::Slot`) plus its free-list entry.
const BUFFER_SLOT: u64 = crate::buffer::SLOT_BYTES as u64 + 4;

/// One part of the budget.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BudgetItem {
    /// The config key whose value drives this part (what to change to shrink it).
    pub key: &'static str,
    /// What the memory holds.
    pub what: &'static str,
    /// How to make it smaller (a real key and value).
    pub remedy: &'static str,
    /// Bytes allocated when the simulation is built.
    pub upfront_bytes: u64,
    /// Bytes when the trace has touched every logical page (includes `upfront_bytes`).
    pub full_bytes: u64,
}

/// The memory a configuration needs, by part. Compute with [`estimate`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryBudget {
    /// The parts, in a fixed order.
    pub items: Vec<BudgetItem>,
}

impl MemoryBudget {
    /// Bytes allocated when the simulation is built.
    pub fn upfront_bytes(&self) -> u64 {
        self.items.iter().map(|i| i.upfront_bytes).fold(0, u64::saturating_add)
    }

    /// Bytes when the trace has touched every logical page: what the limit is checked
    /// against.
    pub fn full_bytes(&self) -> u64 {
        self.items.iter().map(|i| i.full_bytes).fold(0, u64::saturating_add)
    }

    /// The largest part at full footprint.
    pub fn largest(&self) -> Option<&BudgetItem> {
        self.items.iter().max_by_key(|i| i.full_bytes)
    }
}

/// What a built simulation is checked against.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MemoryLimit {
    /// `LAMINA_MAX_MEMORY` if set, else physical memory from `/proc/meminfo`, else none.
    #[default]
    Host,
    /// At most this many bytes.
    Bytes(u64),
    /// No memory limit (index widths are still checked).
    Unlimited,
}

/// Where a resolved limit came from (for the error message).
#[derive(Clone, Debug, PartialEq, Eq)]
enum LimitSource {
    /// `LAMINA_MAX_MEMORY`, as it was written.
    Env(String),
    MemTotal,
    Builder,
}

impl fmt::Display for LimitSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LimitSource::Env(v) => write!(f, "set by the environment variable {MAX_MEMORY_ENV}={v}"),
            LimitSource::MemTotal => write!(
                f,
                "this machine's physical memory, MemTotal in /proc/meminfo, since {MAX_MEMORY_ENV} is not set"
            ),
            LimitSource::Builder => write!(
                f,
                "set by the program with SimulationBuilder::memory_limit, which {MAX_MEMORY_ENV} does not change"
            ),
        }
    }
}

impl LimitSource {
    /// How to let a configuration that needs `needed` bytes run under this kind of
    /// limit (a value that passes: `needed` rounded up to a whole MiB).
    fn raise(&self, needed: u64) -> String {
        let enough = needed.div_ceil(1 << 20).saturating_mul(1 << 20);
        match self {
            LimitSource::Env(v) => format!(
                "raise {MAX_MEMORY_ENV} from {v} to {enough} ({}) if the machine has the memory",
                human_bytes(enough)
            ),
            LimitSource::MemTotal => format!(
                "run with {MAX_MEMORY_ENV}={enough} ({}) if the machine can really spare that much (swap)",
                human_bytes(enough)
            ),
            LimitSource::Builder => "raise the limit given to SimulationBuilder::memory_limit".into(),
        }
    }
}

impl MemoryLimit {
    /// The limit in bytes this resolves to now (`None`: no limit), read as
    /// [`crate::SimulationBuilder::build`] reads it (`LAMINA_MAX_MEMORY`, else `MemTotal`).
    pub fn bytes(self) -> Result<Option<u64>, BudgetError> {
        Ok(self.resolve()?.map(|(bytes, _)| bytes))
    }

    fn resolve(self) -> Result<Option<(u64, LimitSource)>, BudgetError> {
        match self {
            MemoryLimit::Bytes(b) => Ok(Some((b, LimitSource::Builder))),
            MemoryLimit::Unlimited => Ok(None),
            MemoryLimit::Host => {
                if let Some(v) = std::env::var_os(MAX_MEMORY_ENV) {
                    let text = v.to_string_lossy().into_owned();
                    let bytes =
                        lamina_trace::parse_bytes(&text).map_err(|_| BudgetError::BadLimit(text.clone()))?;
                    return Ok(Some((bytes, LimitSource::Env(text.trim().to_owned()))));
                }
                Ok(mem_total().map(|b| (b, LimitSource::MemTotal)))
            }
        }
    }
}

/// Physical memory in bytes (`MemTotal` of `/proc/meminfo`), if the system has one.
fn mem_total() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// A configuration refused before anything was allocated.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BudgetError {
    /// The write buffer cannot be what `buffer.size_bytes` asks for.
    #[error("buffer.size_bytes = {size}: {reason}")]
    Buffer {
        /// The configured size.
        size: u64,
        /// Why, with the remedy.
        reason: String,
    },
    /// The configuration needs more memory than the limit.
    #[error(
        "{key}: this configuration needs about {} of memory when the workload touches every logical page, \
         more than the limit of {} {detail}",
        human_bytes(*.needed_bytes),
        human_bytes(*.limit_bytes)
    )]
    Memory {
        /// The key of the largest part.
        key: &'static str,
        /// The full-footprint estimate.
        needed_bytes: u64,
        /// The limit.
        limit_bytes: u64,
        /// The config keys whose values drove the estimate: the geometry's counts and
        /// `ftl.overprovisioning` (the device's size), then the keys of the largest
        /// parts. A caller that knows where each key was given (a file's line, a
        /// `--set`) can say so: the engine does not (the config's record of origins is
        /// gone by the time a simulation is built).
        drivers: Box<[&'static str]>,
        /// Where the limit comes from, what the estimate follows, the largest parts and
        /// the remedies.
        detail: String,
    },
    /// `LAMINA_MAX_MEMORY` is not a number of bytes.
    #[error(
        "LAMINA_MAX_MEMORY={0:?}: expected a whole number of bytes with an optional unit, e.g. 17179869184, 16GiB \
         or 16G (KiB, MiB, GiB, TiB and bare k, M, G, T are powers of 1024; kB, MB, GB, TB powers of 1000)"
    )]
    BadLimit(String),
}

/// Bytes as a short human figure (`1.5 GiB`).
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 { format!("{bytes} B") } else { format!("{v:.1} {}", UNITS[u]) }
}

/// Memory estimate of `cfg` on `geometry` with `logical_pages` host-visible pages.
/// `builtin_ftl` is false when the caller supplies its own FTL (whose memory is then
/// the caller's and not counted).
pub fn estimate(cfg: &SimConfig, geometry: &Geometry, logical_pages: u64, builtin_ftl: bool) -> MemoryBudget {
    let g = geometry;
    let blocks = g.total_blocks() as u64;
    let pages = g.total_pages();
    let ppb = g.pages_per_block() as u64;
    let planes = g.total_planes() as u64;
    let dies = g.total_dies() as u64;
    let lp_chunks = logical_pages.div_ceil(CHUNK);
    let table = |entry: u64| (lp_chunks * TABLE_SLOT, lp_chunks * TABLE_SLOT + lp_chunks * CHUNK * entry);
    let mut items = Vec::new();
    let mut push = |key, what, (upfront_bytes, full_bytes): (u64, u64)| {
        let remedy = match key {
            "host.verify" => "set host.verify = false",
            "buffer.size_bytes" => "give a smaller buffer.size_bytes",
            "nand.partial_erase" => "drop [nand.partial_erase]",
            "host.unwritten_reads" => "set host.unwritten_reads = \"zero\"",
            "ftl.mapping" => "set ftl.mapping = \"ideal\"",
            "ftl.cmt_entries" => "give a smaller ftl.cmt_entries (or ftl.cmt_bytes)",
            _ => "give fewer nand.geometry.blocks_per_plane",
        };
        items.push(BudgetItem { key, what, remedy, upfront_bytes, full_bytes });
    };
    let device = blocks * DEVICE_BLOCK
        + dies * (DEVICE_DIE + ENGINE_DIE + SCHED_UNIT * 2)
        + g.channels() as u64 * (DEVICE_CHANNEL + SCHED_UNIT)
        + ppb * TIMING_PER_PAGE_IN_BLOCK
        + g.layers() as u64 * 8;
    push("nand.geometry.blocks_per_plane", "device block, die and channel state", (device, device));
    if builtin_ftl {
        let free = if cfg.ftl.wear_leveling { FTL_FREE_HEAP } else { FTL_FREE_FIFO };
        let per_block = blocks * (FTL_BLOCK + FTL_REV_SLOT + free) + planes * (FTL_PLANE + (ppb + 1) * 4);
        push("nand.geometry.blocks_per_plane", "FTL block metadata and GC buckets", (per_block, per_block));
        // Forward map (4 B per logical page, one mapping made resident as it is touched) and
        // reverse map (4 B per physical page).
        let maps = logical_pages * 4 + pages * 4;
        push("nand.geometry.blocks_per_plane", "FTL forward and reverse maps", (0, maps));
        if cfg.ftl.mapping == Mapping::Cached {
            cached_mapping(cfg, g, logical_pages, &mut push);
        }
    }
    if cfg.host.verify {
        let tags = (blocks * DEVICE_TAG_SLOT, blocks * DEVICE_TAG_SLOT + pages * DEVICE_TAG);
        push("host.verify", "verify tags on flash pages", tags);
        push("host.verify", "verify versions per logical page", table(4));
    }
    if cfg.nand.partial_erase.is_some() {
        let ext = blocks * (DEVICE_EXT_BLOCK + ppb.div_ceil(64) * 16 + ppb * 4);
        push("nand.partial_erase", "partial-erase page records", (0, ext));
    }
    let page = g.page_size_bytes() as u64;
    let slots = cfg.buffer.size_bytes / page;
    if slots > 0 {
        let (dir, index) = table(4);
        push(
            "buffer.size_bytes",
            "write-buffer slots and LPN index",
            (dir + slots * BUFFER_SLOT, index + slots * BUFFER_SLOT),
        );
    }
    if cfg.host.unwritten_reads == UnwrittenReads::Prefill {
        // One bit per logical page (`LpnBits`: resident only where the trace reaches, at
        // most its whole mapping).
        push(
            "host.unwritten_reads",
            "prefill bitmap",
            (0, crate::table::LpnBits::mapped_bytes(logical_pages)),
        );
    }
    MemoryBudget { items }
}

/// The cached mapping's own memory (`ftl.mapping = "cached"`, `ftl::cmt`), besides the
/// forward and reverse maps: the translation pages' content as last written (4 bytes per
/// logical page, what a translation read returns), the GTD (the forward map's entries
/// for the translation pages), a write-back flag per translation page, and the CMT
/// itself — at full footprint it holds `min(capacity, logical pages)` entries.
fn cached_mapping(
    cfg: &SimConfig,
    g: &Geometry,
    logical_pages: u64,
    push: &mut impl FnMut(&'static str, &'static str, (u64, u64)),
) {
    let tpages = logical_pages.div_ceil(cfg.ftl.translation_entries_per_page(g));
    let images = logical_pages * 4 + tpages * 4 + tpages;
    push("ftl.mapping", "cached mapping: translation-page content and directory", (tpages, images));
    let entries = cfg.ftl.cmt_capacity(g).min(logical_pages);
    push("ftl.cmt_entries", "cached mapping table (CMT)", (0, entries * (CMT_SLOT + CMT_INDEX)));
}

/// The checks [`SimulationBuilder::build`] runs before it allocates anything: geometry
/// and FTL validity (cheap, allocation-free), index widths, the write buffer's size, and
/// the memory estimate against the builder's [`MemoryLimit`].
pub(crate) fn check(b: &SimulationBuilder) -> Result<MemoryBudget, BuildError> {
    let cfg = &b.cfg;
    let geometry = cfg.nand.geometry.validate().map_err(lamina_nand_model::NandConfigError::from)?;
    let logical_pages = match &b.ftl {
        Some(f) => f.logical_pages(),
        None => cfg.ftl.validate(&geometry)?.logical_pages(),
    };
    if cfg.host.verify && logical_pages > u32::MAX as u64 {
        return Err(BuildError::VerifyTooLarge(logical_pages));
    }
    check_buffer(cfg, &geometry, logical_pages)
        .map_err(|reason| BudgetError::Buffer { size: cfg.buffer.size_bytes, reason })?;
    let budget = estimate(cfg, &geometry, logical_pages, b.ftl.is_none());
    if let Some((limit, source)) = b.memory_limit.resolve()? {
        if budget.full_bytes() > limit {
            return Err(
                over_limit(cfg, &geometry, logical_pages, b.ftl.is_none(), &budget, limit, &source).into()
            );
        }
    }
    Ok(budget)
}

/// The geometry keys whose product is the device's size, which most parts follow.
const GEOMETRY_KEYS: [&str; 6] = [
    "nand.geometry.channels",
    "nand.geometry.chips_per_channel",
    "nand.geometry.dies_per_chip",
    "nand.geometry.planes_per_die",
    "nand.geometry.blocks_per_plane",
    "nand.geometry.pages_per_block",
];

/// The refusal of `budget` (over `limit`, from `source`): the limit and where it came
/// from, what the estimate follows (the device's size, with the keys and values that
/// make it; not the workload, which is streamed), the three largest parts with their keys,
/// and remedies that exist: a key to change, or the limit to raise.
fn over_limit(
    cfg: &SimConfig,
    g: &Geometry,
    logical_pages: u64,
    builtin_ftl: bool,
    budget: &MemoryBudget,
    limit: u64,
    source: &LimitSource,
) -> BudgetError {
    let needed = budget.full_bytes();
    let mut parts: Vec<&BudgetItem> = budget.items.iter().collect();
    parts.sort_by_key(|i| std::cmp::Reverse(i.full_bytes));
    parts.truncate(3);
    let mut remedies: Vec<String> = Vec::new();
    let mut drivers: Vec<&'static str> = GEOMETRY_KEYS.to_vec();
    if builtin_ftl {
        drivers.push("ftl.overprovisioning");
    }
    for i in &parts {
        let remedy = match i.key {
            "nand.geometry.blocks_per_plane" => {
                format!("{} (now {})", i.remedy, cfg.nand.geometry.blocks_per_plane)
            }
            _ => i.remedy.to_owned(),
        };
        if !remedies.contains(&remedy) {
            remedies.push(remedy);
        }
        if !drivers.contains(&i.key) {
            drivers.push(i.key);
        }
    }
    remedies.push(source.raise(needed));
    let shown = parts
        .iter()
        .map(|i| format!("{} {} ({})", i.what, human_bytes(i.full_bytes), i.key))
        .collect::<Vec<_>>()
        .join(", ");
    BudgetError::Memory {
        key: budget.largest().map_or("nand.geometry", |i| i.key),
        needed_bytes: needed,
        limit_bytes: limit,
        drivers: drivers.into_boxed_slice(),
        detail: format!(
            "({source}). The estimate follows the device's size, {}; not the workload: a trace (or a served \
             client's requests) is streamed, its footprint unknown until its end, so a few requests are refused alike. Largest parts: {shown}. \
             To fit, {}",
            device_size(cfg, g, logical_pages, builtin_ftl),
            remedies.join(", or ")
        ),
    }
}

/// The device's size in words, with the values of the keys that make it.
fn device_size(cfg: &SimConfig, g: &Geometry, logical_pages: u64, builtin_ftl: bool) -> String {
    let n = &cfg.nand.geometry;
    let less_op = if builtin_ftl {
        format!(" less ftl.overprovisioning = {}", cfg.ftl.overprovisioning)
    } else {
        " (as the program's FTL counts them)".to_owned()
    };
    format!(
        "{logical_pages} logical pages of {} bytes ({}), from {} physical pages: nand.geometry {} channels × {} \
         chips_per_channel × {} dies_per_chip × {} planes_per_die × {} blocks_per_plane × {} pages_per_block,{less_op}",
        g.page_size_bytes(),
        human_bytes(logical_pages.saturating_mul(g.page_size_bytes() as u64)),
        g.total_pages(),
        n.channels,
        n.chips_per_channel,
        n.dies_per_chip,
        n.planes_per_die,
        n.blocks_per_plane,
        n.pages_per_block,
    )
}

/// `buffer.size_bytes`: zero, or between one page and the logical capacity, with a slot
/// count that fits the buffer's 32-bit slot index. The error is why not, with the
/// remedy, worded to follow the size (`100 is smaller than …`).
pub(crate) fn check_buffer(cfg: &SimConfig, geometry: &Geometry, logical_pages: u64) -> Result<(), String> {
    let size = cfg.buffer.size_bytes;
    if size == 0 {
        return Ok(());
    }
    let page = geometry.page_size_bytes() as u64;
    let capacity = logical_pages.saturating_mul(page);
    if size < page {
        return Err(format!(
            "smaller than one {page}-byte page, so no page would fit; give 0 to disable the buffer or at \
             least {page}"
        ));
    }
    if size > capacity {
        return Err(format!(
            "larger than the device's logical capacity of {capacity} bytes ({}); a buffer that holds the \
             whole device never flushes under pressure. Give at most {capacity} (a real SSD's DRAM cache \
             is well under 1 % of its capacity), or 0 to disable the buffer",
            human_bytes(capacity)
        ));
    }
    if size / page >= u32::MAX as u64 {
        return Err(format!(
            "too large for the buffer's 32-bit slot index ({} pages); give less than {} bytes",
            size / page,
            (u32::MAX as u64) * page
        ));
    }
    Ok(())
}

impl SimulationBuilder {
    /// The memory limit [`SimulationBuilder::build`] checks the configuration's estimate
    /// against (default [`MemoryLimit::Host`]; see the [module docs](crate::budget)).
    pub fn memory_limit(mut self, limit: MemoryLimit) -> Self {
        self.memory_limit = limit;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_bytes_picks_the_unit() {
        assert_eq!(human_bytes(512), "512 B");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(3 << 30), "3.0 GiB");
        assert_eq!(human_bytes(u64::MAX), "16777216.0 TiB");
    }

    /// New-user trial: a refusal said "(set by LAMINA_MAX_MEMORY)" without the value,
    /// nothing of what the estimate follows, and offered `LAMINA_MAX_MEMORY=<bytes>` even
    /// under a builder's limit, which the variable does not change. Now it names the
    /// limit's source with its value, the keys and values of the device's size (and says
    /// the trace's length does not matter), the keys a caller can locate, and a raise
    /// that passes.
    #[test]
    fn a_refusal_names_the_limit_source_what_drove_the_estimate_and_remedies_that_exist() {
        let cfg = crate::config::ConfigBuilder::new()
            .preset("mbm")
            .unwrap()
            .set("host.verify=true")
            .unwrap()
            .build()
            .unwrap();
        let g = cfg.nand.geometry.validate().unwrap();
        let lp = cfg.ftl.validate(&g).unwrap().logical_pages();
        let budget = estimate(&cfg, &g, lp, true);
        let needed = budget.full_bytes();
        let refuse = |source: LimitSource| over_limit(&cfg, &g, lp, true, &budget, 1_000_000, &source);
        let e = refuse(LimitSource::Env("1000000".into()));
        let BudgetError::Memory { drivers, .. } = &e else { panic!("{e}") };
        assert_eq!(drivers[..6], GEOMETRY_KEYS);
        assert!(drivers.contains(&"ftl.overprovisioning") && drivers.contains(&"host.verify"), "{drivers:?}");
        let msg = e.to_string();
        let enough = needed.div_ceil(1 << 20) * (1 << 20);
        for want in [
            "set by the environment variable LAMINA_MAX_MEMORY=1000000",
            &format!("{lp} logical pages of 8192 bytes"),
            "nand.geometry 4 channels × 2 chips_per_channel × 2 dies_per_chip × 2 planes_per_die × 2048 \
             blocks_per_plane × 1024 pages_per_block, less ftl.overprovisioning = ",
            "not the workload",
            "set host.verify = false",
            "give fewer nand.geometry.blocks_per_plane (now 2048)",
            &format!("raise LAMINA_MAX_MEMORY from 1000000 to {enough} "),
        ] {
            assert!(msg.contains(want), "want {want:?} in: {msg}");
        }
        assert!(enough >= needed);
        let msg = refuse(LimitSource::MemTotal).to_string();
        for want in [
            "physical memory, MemTotal",
            "LAMINA_MAX_MEMORY is not set",
            &format!("LAMINA_MAX_MEMORY={enough} "),
        ] {
            assert!(msg.contains(want), "want {want:?} in: {msg}");
        }
        let msg = refuse(LimitSource::Builder).to_string();
        assert!(msg.contains("raise the limit given to SimulationBuilder::memory_limit"), "{msg}");
        assert!(!msg.contains("LAMINA_MAX_MEMORY="), "the variable does not change a builder's limit: {msg}");
    }

    #[test]
    fn mem_total_reads_proc_meminfo_where_there_is_one() {
        if std::path::Path::new("/proc/meminfo").is_file() {
            assert!(mem_total().unwrap() > 1 << 20);
        }
    }
}
