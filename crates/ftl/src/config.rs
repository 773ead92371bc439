//! FTL configuration (`[ftl]` in a Lamina config file) and its validation.
//!
//! ```toml
//! [ftl]
//! kind = "page"
//! overprovisioning = 0.07          # fraction of raw pages hidden from the host
//! gc_threshold = { free_blocks = 4 } # or { free_fraction = 0.02 }
//! striping_order = "CWDP"          # fastest-varying level first
//! victim_tie_break = "lowest-id"   # or "oldest", "least-worn"
//! copyback = false
//! wear_leveling = true
//! allocation = "per-plane"         # or "die-aligned" (page FTL only)
//! superblock_size = 4              # superblock FTL only: logical blocks per superblock
//! superblock_extra_blocks = 1      # superblock FTL only: physical blocks beyond them
//! pen = false                      # nftl / superblock only: PEN's M-Merge (partial erase)
//! pen_wear_limit = 16              # with pen: W, M-Merges of a block between baseline merges
//! pen_disturb = true               # with pen: track boundary disturbance (false: ignore it)
//! pen_disturb_tolerance = 1        # with pen: disturbances a leaf PB tolerates
//! pen_partition = "tree"           # with pen: or "subblock3" (a half and two quarters)
//! pen_superblock_rule = "compaction" # with pen, superblock: or "per-freed-page"
//! gftl_steps_per_write = 1         # gftl only: partial-GC steps each host page write owes
//! gftl_step_copies = 0             # gftl only: page copies per step (0: from the device)
//! replication = "none"             # or "rain1" (page FTL only): every page on two chips
//! mbm_ws = true                    # mbm only: MBM's write strategy (false: per-plane allocation)
//! mbm_align_slack_percent = 25     # mbm only: GC victim slack that keeps a block index free on all planes
//! ```
//!
//! The `pen*` keys (PEN, Liu et al., FAST 2018; [`crate::pen`], `docs/ftl.md` "PEN"):
//!
//! * `pen` — merge by M-Merge where Algorithm 2 (NFTL) or 3 (superblock) finds it
//!   cheaper than the baseline merge: partially erase and restore only the partial
//!   blocks (PBs) of a block that hold invalid pages. Only for `kind = "nftl"` and
//!   `"superblock"`, and only on a device with partial-block erase (`[nand.partial_erase]`,
//!   e.g. the `pen` preset); the FTL must then be built from the device spec
//!   ([`FtlKind::build_for_device`]), which supplies the PB tree depth and the latencies
//!   the planner prices plans with.
//! * `pen_wear_limit` — W (§5.2): a block is M-Merged at most W times before a baseline
//!   merge (default [`crate::pen::WearGate::PAPER_W`] = 16; 0 disables M-Merge).
//! * `pen_disturb` — `true` (default): a partial erase disturbs the leaf PBs on its
//!   boundaries, and a leaf past its tolerance is restored by the next M-Merge that would
//!   disturb it again; `false`: disturbance is ignored (Fig. 15a's "without" variant).
//! * `pen_disturb_tolerance` — disturbances a leaf tolerates (≥ 1; default 1, the
//!   paper's most severe case).
//!
//! * `pen_partition` — which PBs may be partially erased: `"tree"` (default, every PB of
//!   the device's tree) or `"subblock3"`, subblock management's three subblocks of two
//!   sizes (the first half and the two quarters of the second half; pen-partial-erase's
//!   ref. \[14\], Fig. 14a), which needs `nand.partial_erase.levels ≥ 2`.
//! * `pen_superblock_rule` — what Algorithm 3 (superblock FTL) prices M-Merge against:
//!   `"compaction"` (default: its cost against the superblock's compaction) or
//!   `"per-freed-page"` (its cost per page it frees against that of the GC the baseline
//!   would run: the intra-superblock GC of the fewest-valid block when the superblock is
//!   full, the compaction otherwise); see [`crate::pen::SuperblockRule`]. An error on
//!   other kinds.
//!
//! Each `pen_*` key is an error unless `pen = true`.
//!
//! `kind` selects the FTL; [`FtlKind::build`] is the one place that maps a kind to its
//! implementation. Options that only some kinds understand are listed in one table
//! (`KIND_OPTIONS`) and rejected, naming the key, when set under another kind.

use std::fmt;

use lamina_nand_model::{Geometry, PageAddr, PlaneId};
use serde::{Deserialize, Serialize};

use crate::api::Ftl;

/// Which FTL to build (`ftl.kind`). An unknown name is a parse error that lists the
/// known ones. A new FTL adds one variant here and one arm in [`FtlKind::build`] (and in
/// the name/description tables below); see `docs/ftl.md`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FtlKind {
    /// Page-level mapping ([`crate::PageFtl`]).
    #[default]
    Page,
    /// Block-level NFTL with data/update block pairs and merges ([`crate::NftlFtl`]).
    Nftl,
    /// GFTL: block-level mapping with a shared write buffer and block cleaning in
    /// bounded partial steps between host writes ([`crate::GftlFtl`]).
    Gftl,
    /// Kang et al.'s Superblock FTL: hybrid mapping, page-level inside superblocks of
    /// adjacent logical blocks ([`crate::SuperblockFtl`]).
    Superblock,
    /// Li et al.'s MBM write strategy: page-level mapping, a host block and a GC block
    /// per plane, host writes of a die round-robin over its planes at one (block index,
    /// page) ([`crate::mbm`]).
    Mbm,
    /// Tavakkol et al.'s twin-block management: page-level mapping whose blocks are
    /// allocated, collected and erased as twins, one block index on every plane of a die
    /// ([`crate::TbmFtl`]).
    Tbm,
}

impl FtlKind {
    /// Every FTL, in documentation order.
    pub const ALL: [FtlKind; 6] =
        [FtlKind::Page, FtlKind::Nftl, FtlKind::Gftl, FtlKind::Superblock, FtlKind::Mbm, FtlKind::Tbm];

    /// The config name (`ftl.kind`).
    pub fn name(self) -> &'static str {
        match self {
            FtlKind::Page => "page",
            FtlKind::Nftl => "nftl",
            FtlKind::Gftl => "gftl",
            FtlKind::Superblock => "superblock",
            FtlKind::Mbm => "mbm",
            FtlKind::Tbm => "tbm",
        }
    }

    /// One line on what the FTL does (for `lamina policies`).
    pub fn describe(self) -> &'static str {
        match self {
            FtlKind::Page => "page-level mapping, greedy per-plane GC, dynamic wear levelling",
            FtlKind::Nftl => {
                "block-level mapping: in-place data block + update-block log per logical block, \
                 merges when the update block fills, spare-area scans on reads"
            }
            FtlKind::Gftl => {
                "block-level mapping with a shared write buffer: block cleaning cut into steps of \
                 ftl.gftl_step_copies copies or one erase, ftl.gftl_steps_per_write of them after each write"
            }
            FtlKind::Superblock => {
                "hybrid mapping: superblocks of ftl.superblock_size logical blocks share up to \
                 superblock_size + superblock_extra_blocks physical blocks, page-mapped inside"
            }
            FtlKind::Mbm => {
                "page-level mapping with MBM's write strategy: a host and a GC active block per plane, \
                 host writes of a die round-robin over its planes at one offset (ftl.mbm_ws)"
            }
            FtlKind::Tbm => {
                "page-level mapping over twin blocks (one block index on every plane of a die): \
                 twin allocation, twin GC spreading valid pages over the planes, multi-plane erases"
            }
        }
    }

    /// Where the FTL comes from.
    pub fn source(self) -> &'static str {
        match self {
            FtlKind::Page => "the page-mapping baseline of SSDsim and MQSim (docs/ftl.md)",
            FtlKind::Nftl => "Ban's M-Systems NFTL as pen-partial-erase (FAST '18) §2.2 describes it",
            FtlKind::Gftl => {
                "Choudhuri and Givargis, CODES+ISSS '08 (pen-partial-erase's ref. [9], Fig. 12c); docs/ftl.md"
            }
            FtlKind::Superblock => "Kang et al., EMSOFT '06, as pen-partial-erase (FAST '18) §5.3 uses it",
            FtlKind::Mbm => {
                "Li et al., MBM FTL §IV-A (WS, Fig. 5); RS and MCS are not FTL parts (docs/ftl.md)"
            }
            FtlKind::Tbm => {
                "Tavakkol et al., TBM, IEEE CAL 15(2) 2016, as MBM FTL §V describes it (docs/ftl.md)"
            }
        }
    }

    /// Build this kind of FTL for the device `spec` describes: as [`FtlKind::build`],
    /// and with `ftl.pen = true` the block-level FTLs run PEN with the device's PB tree
    /// and latencies (an error naming `ftl.pen` if the device has no partial erase).
    pub fn build_for_device(
        self,
        spec: &lamina_nand_model::DeviceSpec,
        cfg: &FtlConfig,
    ) -> Result<Box<dyn Ftl>, FtlConfigError> {
        let cfg = FtlConfig { kind: self, ..cfg.clone() };
        match self {
            FtlKind::Page => Ok(Box::new(crate::PageFtl::new(spec.geometry().clone(), &cfg)?)),
            FtlKind::Nftl => Ok(Box::new(crate::NftlFtl::for_device(spec, &cfg)?)),
            FtlKind::Gftl => Ok(Box::new(crate::GftlFtl::for_device(spec, &cfg)?)),
            FtlKind::Superblock => Ok(Box::new(crate::SuperblockFtl::for_device(spec, &cfg)?)),
            FtlKind::Mbm => Ok(Box::new(crate::mbm::build(spec.geometry().clone(), &cfg)?)),
            FtlKind::Tbm => Ok(Box::new(crate::TbmFtl::new(spec.geometry().clone(), &cfg)?)),
        }
    }

    /// Build this kind of FTL for `geometry` with the options of `cfg` (validated against
    /// the geometry and against this kind: an option another kind owns is an error naming
    /// its key). The single dispatch point from `ftl.kind` to an implementation.
    pub fn build(self, geometry: Geometry, cfg: &FtlConfig) -> Result<Box<dyn Ftl>, FtlConfigError> {
        let cfg = FtlConfig { kind: self, ..cfg.clone() };
        match self {
            FtlKind::Page => Ok(Box::new(crate::PageFtl::new(geometry, &cfg)?)),
            FtlKind::Nftl => Ok(Box::new(crate::NftlFtl::new(geometry, &cfg)?)),
            FtlKind::Gftl => Ok(Box::new(crate::GftlFtl::new(geometry, &cfg)?)),
            FtlKind::Superblock => Ok(Box::new(crate::SuperblockFtl::new(geometry, &cfg)?)),
            FtlKind::Mbm => Ok(Box::new(crate::mbm::build(geometry, &cfg)?)),
            FtlKind::Tbm => Ok(Box::new(crate::TbmFtl::new(geometry, &cfg)?)),
        }
    }
}

/// Where host writes go inside a die (`ftl.allocation`, page FTL only).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Allocation {
    /// One open block per plane, shared by host writes and GC; the caller's plane is the
    /// plane written. The classic baseline (and the default: results are unchanged).
    #[default]
    PerPlane,
    /// One host write frontier per die: consecutive host writes to a die fill planes
    /// 0, 1, …, P−1 at the same (block index, page), then the next page, so that a
    /// multi-plane program can take them together. A new row of blocks opens at a block
    /// index free on every plane of the die; GC moves go to a separate GC block per plane
    /// so that they never shift the host frontier. See `docs/ftl.md` and
    /// [`crate::page`].
    DieAligned,
}

/// Data replication across chips (`ftl.replication`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Replication {
    /// One copy of every logical page.
    #[default]
    None,
    /// RAIN 1 (soml-read §6.2.2, Fig. 11a): every host page is kept on two chips. The
    /// host sees half the logical pages (rounded down to a whole stripe); host page `l`
    /// is FTL page `l` (the primary) and FTL page `l + host_pages` (the mirror), whose
    /// static plane is the primary's on the chip half the device away (chip index
    /// `+ chips / 2`, same die and plane within the chip). The engine writes both copies
    /// and reads the copy on the less-loaded die.
    Rain1,
}

/// An option that only some FTL kinds understand: `set` tells whether a config sets it
/// to anything but its default, `kinds` which kinds accept it.
pub(crate) struct KindOption {
    pub(crate) key: &'static str,
    pub(crate) set: fn(&FtlConfig) -> bool,
    pub(crate) kinds: &'static [FtlKind],
}

/// Every kind-specific option. A new kind-specific option adds a row; a new kind adds
/// itself to the rows it supports.
pub(crate) const KIND_OPTIONS: &[KindOption] = &[
    KindOption {
        key: "ftl.allocation",
        set: |c| c.allocation != Allocation::PerPlane,
        kinds: &[FtlKind::Page],
    },
    // NFTL's merge victim is the cheapest, then least recently updated, pair: no tie to
    // break (docs/ftl.md).
    KindOption {
        key: "ftl.victim_tie_break",
        set: |c| c.victim_tie_break != TieBreak::LowestId,
        kinds: &[FtlKind::Page, FtlKind::Superblock, FtlKind::Mbm, FtlKind::Tbm],
    },
    KindOption {
        key: "ftl.gftl_steps_per_write",
        set: |c| c.gftl_steps_per_write != DEFAULT_GFTL_STEPS_PER_WRITE,
        kinds: &[FtlKind::Gftl],
    },
    KindOption { key: "ftl.gftl_step_copies", set: |c| c.gftl_step_copies != 0, kinds: &[FtlKind::Gftl] },
    KindOption {
        key: "ftl.replication",
        set: |c| c.replication != Replication::None,
        kinds: &[FtlKind::Page],
    },
    KindOption {
        key: "ftl.superblock_size",
        set: |c| c.superblock_size != DEFAULT_SUPERBLOCK_SIZE,
        kinds: &[FtlKind::Superblock],
    },
    KindOption {
        key: "ftl.superblock_extra_blocks",
        set: |c| c.superblock_extra_blocks != DEFAULT_SUPERBLOCK_EXTRA_BLOCKS,
        kinds: &[FtlKind::Superblock],
    },
    KindOption { key: "ftl.pen", set: |c| c.pen, kinds: &[FtlKind::Nftl, FtlKind::Superblock] },
    KindOption { key: "ftl.mapping", set: |c| c.mapping != Mapping::Ideal, kinds: &[FtlKind::Page] },
    KindOption { key: "ftl.mbm_ws", set: |c| !c.mbm_ws, kinds: &[FtlKind::Mbm] },
    KindOption {
        key: "ftl.mbm_align_slack_percent",
        set: |c| c.mbm_align_slack_percent != DEFAULT_ALIGN_SLACK_PERCENT,
        kinds: &[FtlKind::Mbm],
    },
];

/// Whether a config sets an option to anything but its default.
type IsSet = fn(&FtlConfig) -> bool;

/// The options that only mean something with `ftl.pen = true`: `(key, set)`.
const PEN_OPTIONS: &[(&str, IsSet)] = &[
    ("ftl.pen_wear_limit", |c| c.pen_wear_limit != crate::pen::WearGate::PAPER_W),
    ("ftl.pen_disturb", |c| !c.pen_disturb),
    ("ftl.pen_disturb_tolerance", |c| c.pen_disturb_tolerance != crate::pen::DisturbState::PAPER_TOLERANCE),
    ("ftl.pen_partition", |c| c.pen_partition != crate::pen::Partition::Tree),
    ("ftl.pen_superblock_rule", |c| c.pen_superblock_rule != crate::pen::SuperblockRule::Compaction),
];

/// The error of an FTL built for `ftl.pen = true` from a bare geometry.
pub(crate) fn pen_needs_device() -> FtlConfigError {
    err(
        "ftl.pen",
        "PEN needs the device's partial-erase levels and latencies: build the FTL from the device \
         spec (FtlKind::build_for_device, as the engine does), or set ftl.pen = false",
    )
}

/// Reject `pen_*` options set without `ftl.pen = true`, a tolerance of 0, and
/// `pen_superblock_rule` on an FTL other than the superblock FTL.
fn check_pen_options(cfg: &FtlConfig) -> Result<(), FtlConfigError> {
    if !cfg.pen {
        if let Some((key, _)) = PEN_OPTIONS.iter().find(|(_, set)| set(cfg)) {
            return Err(err(key, "only applies with ftl.pen = true: set ftl.pen = true or remove it"));
        }
    }
    if cfg.pen_superblock_rule != crate::pen::SuperblockRule::Compaction && cfg.kind != FtlKind::Superblock {
        return Err(err(
            "ftl.pen_superblock_rule",
            "only applies to the superblock FTL's Algorithm 3: set ftl.kind = \"superblock\" or remove it",
        ));
    }
    if cfg.pen_disturb_tolerance == 0 {
        return Err(err(
            "ftl.pen_disturb_tolerance",
            "0 would forbid every partial erase: use 1 (the paper's most severe case) or more, \
             or ftl.pen_disturb = false to ignore disturbance",
        ));
    }
    Ok(())
}

/// Default `ftl.gftl_steps_per_write`: one partial-GC step per host write, GFTL's
/// schedule (one step per request).
pub const DEFAULT_GFTL_STEPS_PER_WRITE: u32 = 1;

/// Default `ftl.superblock_size`: 4 logical blocks per superblock, both configurations
/// pen-partial-erase evaluates (§6.2.2: 4 logical blocks with 5, and with 8, physical
/// blocks).
pub const DEFAULT_SUPERBLOCK_SIZE: u32 = 4;
/// Default `ftl.superblock_extra_blocks`: 1, pen-partial-erase's first configuration
/// (4 logical blocks sharing 5 physical blocks); its second is 4.
pub const DEFAULT_SUPERBLOCK_EXTRA_BLOCKS: u32 = 1;

/// Reject the options of `table` that `cfg` sets although `cfg.kind` does not accept them.
pub(crate) fn check_kind_options(cfg: &FtlConfig, table: &[KindOption]) -> Result<(), FtlConfigError> {
    for o in table {
        if (o.set)(cfg) && !o.kinds.contains(&cfg.kind) {
            let accepted: Vec<&str> = o.kinds.iter().map(|k| k.name()).collect();
            return Err(err(
                o.key,
                format!(
                    "is not an option of ftl.kind = \"{}\"; only of {}: remove it or change ftl.kind",
                    cfg.kind.name(),
                    accepted.join(", ")
                ),
            ));
        }
    }
    Ok(())
}

/// One level of the device hierarchy that static allocation stripes over.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// Channel (`C`).
    Channel,
    /// Chip on a channel, a "way" (`W`).
    Way,
    /// Die of a chip (`D`).
    Die,
    /// Plane of a die (`P`).
    Plane,
}

impl Level {
    fn letter(self) -> char {
        match self {
            Level::Channel => 'C',
            Level::Way => 'W',
            Level::Die => 'D',
            Level::Plane => 'P',
        }
    }
    fn from_letter(c: char) -> Option<Level> {
        match c.to_ascii_uppercase() {
            'C' => Some(Level::Channel),
            'W' => Some(Level::Way),
            'D' => Some(Level::Die),
            'P' => Some(Level::Plane),
            _ => None,
        }
    }
}

/// Static-allocation striping order: a permutation of the four levels, **fastest-varying
/// first**, written as four letters (`"CWDP"`, `"PDWC"`, …; MQSim's plane-allocation
/// scheme names). With `CWDP`, consecutive LPNs go to consecutive channels; after every
/// channel got one, the chip index advances, then the die, then the plane:
/// `channel = lpn % C`, `chip = lpn / C % W`, `die = lpn / (C·W) % D`,
/// `plane = lpn / (C·W·D) % P`. All 24 permutations are accepted, which covers MQSim's
/// schemes and SSDsim's static-allocation modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct StripeOrder([Level; 4]);

impl Default for StripeOrder {
    fn default() -> Self {
        StripeOrder::CWDP
    }
}

impl StripeOrder {
    /// Channel first, then way, die, plane (MQSim's default).
    pub const CWDP: StripeOrder = StripeOrder([Level::Channel, Level::Way, Level::Die, Level::Plane]);

    /// The levels, fastest-varying first.
    pub fn levels(&self) -> [Level; 4] {
        self.0
    }

    /// Parse four distinct letters from `C`, `W`, `D`, `P` (case-insensitive).
    pub fn parse(s: &str) -> Option<StripeOrder> {
        let mut out = [Level::Channel; 4];
        let mut n = 0;
        for c in s.chars() {
            if n == 4 {
                return None;
            }
            let l = Level::from_letter(c)?;
            if out[..n].contains(&l) {
                return None;
            }
            out[n] = l;
            n += 1;
        }
        (n == 4).then_some(StripeOrder(out))
    }

    /// All 24 orders, in lexicographic order of their names.
    pub fn all() -> Vec<StripeOrder> {
        let mut v = Vec::with_capacity(24);
        for a in "CDPW".chars() {
            for b in "CDPW".chars() {
                for c in "CDPW".chars() {
                    for d in "CDPW".chars() {
                        if let Some(o) = StripeOrder::parse(&[a, b, c, d].iter().collect::<String>()) {
                            v.push(o);
                        }
                    }
                }
            }
        }
        v
    }

    /// The plane static allocation gives `lpn`.
    pub fn plane_of(&self, geometry: &Geometry, lpn: u64) -> PlaneId {
        let mut rest = lpn;
        let mut a = PageAddr::default();
        for level in self.0 {
            let (count, slot) = match level {
                Level::Channel => (geometry.channels(), &mut a.channel),
                Level::Way => (geometry.chips_per_channel(), &mut a.chip),
                Level::Die => (geometry.dies_per_chip(), &mut a.die),
                Level::Plane => (geometry.planes_per_die(), &mut a.plane),
            };
            *slot = (rest % count as u64) as u32;
            rest /= count as u64;
        }
        geometry.plane_id(a)
    }
}

impl fmt::Display for StripeOrder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for l in self.0 {
            write!(f, "{}", l.letter())?;
        }
        Ok(())
    }
}

impl TryFrom<String> for StripeOrder {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        StripeOrder::parse(&s).ok_or_else(|| {
            format!("`{s}` is not a striping order: four distinct letters of C, W, D, P such as \"CWDP\"")
        })
    }
}

impl From<StripeOrder> for String {
    fn from(o: StripeOrder) -> String {
        o.to_string()
    }
}

/// When GC starts on a plane: fewer free blocks than this. Resolved to a block count by
/// [`FtlConfig::validate`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum GcThreshold {
    /// An absolute count of free blocks per plane (at least 2).
    FreeBlocks(u32),
    /// A fraction of the blocks of a plane, rounded up, and raised to 2 if smaller
    /// (two free blocks are the least that keeps GC safe; see `docs/ftl.md`); a raise is
    /// reported ([`ValidatedFtlConfig::gc_threshold_raised`]).
    FreeFraction(f64),
}

impl Default for GcThreshold {
    fn default() -> Self {
        GcThreshold::FreeFraction(0.02)
    }
}

/// How GC chooses among blocks with the same (greatest) number of invalid pages.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TieBreak {
    /// The lowest block id (what a linear scan keeping the first maximum picks, as SSDsim).
    #[default]
    LowestId,
    /// The block that was filled the longest ago (FIFO among equals).
    Oldest,
    /// The least-erased block, then the lowest id.
    LeastWorn,
}

/// FTL configuration as written by users (`[ftl]`). Check it with
/// [`FtlConfig::validate`] against the device geometry.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FtlConfig {
    /// Which FTL.
    pub kind: FtlKind,
    /// Over-provisioning: the fraction of raw pages not exported to the host, in [0, 1).
    /// Logical pages = ⌊total pages × (1 − OP)⌋, computed in integer parts per million:
    /// `total × (1_000_000 − round(OP × 1e6)) / 1_000_000`, rounded down.
    pub overprovisioning: f64,
    /// GC trigger.
    pub gc_threshold: GcThreshold,
    /// Static-allocation striping order.
    pub striping_order: StripeOrder,
    /// GC victim tie-break.
    pub victim_tie_break: TieBreak,
    /// Mark GC moves as copyback operations (they always stay within a plane).
    pub copyback: bool,
    /// Dynamic wear levelling: allocate the least-erased free block of a plane (ties:
    /// lowest id). Off: free blocks are reused first-in first-out (per-plane allocation)
    /// or lowest index first (die-aligned allocation).
    pub wear_leveling: bool,
    /// Where host writes go inside a die (page FTL only).
    pub allocation: Allocation,
    /// Superblock FTL: logical blocks per superblock (N ≥ 1, adjacent logical blocks).
    pub superblock_size: u32,
    /// Superblock FTL: physical blocks a superblock may hold beyond its
    /// `superblock_size` (M ≥ 1): its update blocks. A superblock uses at most N + M
    /// blocks; reaching that with no free page triggers its intra-superblock GC.
    pub superblock_extra_blocks: u32,
    /// Copies of every logical page on distinct chips (page FTL only). Left out of a
    /// serialized config at its default, as the other kind-specific keys added later,
    /// so that runs keyed by their resolved config keep their keys.
    #[serde(skip_serializing_if = "is_no_replication")]
    pub replication: Replication,
    /// PEN's M-Merge (NFTL and superblock FTL, on a device with partial-block erase).
    /// See the [module docs](self).
    #[serde(skip_serializing_if = "is_false")]
    pub pen: bool,
    /// PEN: W, M-Merges of a block between two baseline merges.
    #[serde(skip_serializing_if = "is_paper_w")]
    pub pen_wear_limit: u32,
    /// PEN: track boundary disturbance (`false`: ignore it).
    #[serde(skip_serializing_if = "is_true")]
    pub pen_disturb: bool,
    /// PEN: disturbances a leaf PB tolerates (≥ 1).
    #[serde(skip_serializing_if = "is_paper_tolerance")]
    pub pen_disturb_tolerance: u32,
    /// PEN: which PBs may be partially erased (`"tree"`: all; `"subblock3"`: a half and
    /// two quarters).
    #[serde(skip_serializing_if = "is_tree_partition")]
    pub pen_partition: crate::pen::Partition,
    /// PEN, superblock FTL: what Algorithm 3 prices M-Merge against (`"compaction"`, the
    /// default, or `"per-freed-page"`).
    #[serde(skip_serializing_if = "is_compaction_rule")]
    pub pen_superblock_rule: crate::pen::SuperblockRule,
    /// Where the page FTL keeps its map (page FTL only): all in DRAM, or a cached
    /// mapping table over translation pages on flash (`crate::cmt`, docs/model.md).
    #[serde(skip_serializing_if = "is_ideal")]
    pub mapping: Mapping,
    /// `ftl.mapping = "cached"`: capacity of the cached mapping table in entries; 0 caches
    /// nothing (every access misses). [`FtlConfig::cmt_capacity`] is the capacity in
    /// effect (this key, or `ftl.cmt_bytes` when that is given).
    #[serde(skip_serializing_if = "is_default_cmt")]
    pub cmt_entries: u64,
    /// `ftl.mapping = "cached"`: capacity of the cached mapping table in bytes instead of
    /// entries (MQSim's `CMT_Capacity`): ⌊`cmt_bytes` / CMT entry bytes⌋ entries, the
    /// entry size of `ftl.mapping_entry`. Give this or `ftl.cmt_entries`, not both.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cmt_bytes: Option<u64>,
    /// `ftl.mapping = "cached"`: the size of a mapping entry in the translation pages and
    /// in the CMT (`"ppa32"`, the default: 4 bytes each; `"geometry"`: derived from the
    /// device as MQSim does). See [`MappingEntry`].
    #[serde(skip_serializing_if = "is_ppa32")]
    pub mapping_entry: MappingEntry,
    /// GFTL only: partial-GC steps each host page write owes while cleaning work is
    /// pending (0: clean only when the write buffer runs out).
    #[serde(skip_serializing_if = "is_default_gftl_steps")]
    pub gftl_steps_per_write: u32,
    /// GFTL only: page copies per partial step (λ); 0 derives GFTL's ⌊t_erase / (t_read +
    /// t_prog)⌋ from the device.
    #[serde(skip_serializing_if = "is_zero")]
    pub gftl_step_copies: u32,
    /// MBM FTL only: MBM's write strategy (true, the default) or, for the ablation, the
    /// page FTL's per-plane allocation (false). Left out of a serialized config at its
    /// default, as the PEN keys.
    #[serde(skip_serializing_if = "is_true")]
    pub mbm_ws: bool,
    /// MBM FTL only, with `ftl.mbm_ws`: a plane's GC may pick a victim with up to this
    /// percentage of the greediest victim's invalid pages fewer, if its block index is
    /// free (or being reclaimed) on more planes of the die — the rule that re-creates a
    /// block index free on every plane after per-plane GC, so that host rows open
    /// aligned (docs/ftl.md, "MBM"). 0 is plain greedy GC (the ablation); at most 100.
    /// Left out of a serialized config at its default.
    #[serde(skip_serializing_if = "is_default_align_slack")]
    pub mbm_align_slack_percent: u32,
}

/// Default `ftl.mbm_align_slack_percent` (the die-aligned page FTL's fixed slack).
pub const DEFAULT_ALIGN_SLACK_PERCENT: u32 = 25;

fn is_default_align_slack(p: &u32) -> bool {
    *p == DEFAULT_ALIGN_SLACK_PERCENT
}

/// Where the page FTL keeps its logical→physical map (`ftl.mapping`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mapping {
    /// The whole map in DRAM: a lookup costs nothing.
    #[default]
    Ideal,
    /// DFTL-style: translation pages on flash, a cached mapping table (CMT) of
    /// `ftl.cmt_entries` entries in DRAM; a miss reads a translation page, a dirty
    /// eviction writes one back.
    Cached,
}

/// Default `ftl.cmt_entries`: 256 Ki entries, 1 MiB of 4-byte entries.
pub const DEFAULT_CMT_ENTRIES: u64 = 1 << 18;

/// The size of a cached-mapping entry (`ftl.mapping_entry`), which decides how many
/// entries a translation page holds and, with `ftl.cmt_bytes`, how many the CMT holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MappingEntry {
    /// 4 bytes on flash and in the CMT ([`crate::MAPPING_ENTRY_BYTES`]): a 32-bit
    /// physical page address, the width of Lamina's FTL tables (the default; every
    /// cached-mapping result before `ftl.mapping_entry` existed used it).
    #[default]
    Ppa32,
    /// Derived from the geometry as MQSim derives it (`Address_Mapping_Unit_Page_Level`):
    /// with `P` physical pages on the device and `S` 512-byte sectors per page, a
    /// translation-page entry holds a physical page address and a sector bitmap,
    /// ⌈(log2 P + S) / 8⌉ bytes; a CMT entry also holds its logical page number,
    /// ⌈(2·log2 P + S) / 8⌉ bytes. On MQSim's default device (2^26 pages of 16 sectors)
    /// 6 and 9 bytes: 1365 entries per 8 KiB translation page.
    Geometry,
}

/// The entry sizes in effect for one device ([`FtlConfig::mapping_entry_sizes`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MappingEntrySizes {
    /// Bytes of one entry in a translation page on flash.
    pub flash_bytes: u64,
    /// Bytes of one entry in the CMT (what `ftl.cmt_bytes` is divided by).
    pub cmt_bytes: u64,
}

/// ⌈log2 n⌉ for n ≥ 1.
fn ceil_log2(n: u128) -> u64 {
    u64::from(128 - n.saturating_sub(1).leading_zeros())
}

// The PEN keys are left out of a serialized config at their defaults, so that configs
// (and reports) of runs without PEN read as they did before the keys existed.
fn is_false(b: &bool) -> bool {
    !*b
}
fn is_true(b: &bool) -> bool {
    *b
}
fn is_paper_w(w: &u32) -> bool {
    *w == crate::pen::WearGate::PAPER_W
}
fn is_paper_tolerance(t: &u32) -> bool {
    *t == crate::pen::DisturbState::PAPER_TOLERANCE
}
fn is_no_replication(r: &Replication) -> bool {
    *r == Replication::None
}

fn is_default_gftl_steps(n: &u32) -> bool {
    *n == DEFAULT_GFTL_STEPS_PER_WRITE
}
fn is_tree_partition(p: &crate::pen::Partition) -> bool {
    *p == crate::pen::Partition::Tree
}
fn is_compaction_rule(r: &crate::pen::SuperblockRule) -> bool {
    *r == crate::pen::SuperblockRule::Compaction
}
fn is_zero(n: &u32) -> bool {
    *n == 0
}

fn is_ideal(m: &Mapping) -> bool {
    *m == Mapping::Ideal
}
fn is_default_cmt(n: &u64) -> bool {
    *n == DEFAULT_CMT_ENTRIES
}
fn is_ppa32(e: &MappingEntry) -> bool {
    *e == MappingEntry::Ppa32
}

impl Default for FtlConfig {
    fn default() -> Self {
        FtlConfig {
            kind: FtlKind::Page,
            overprovisioning: 0.07,
            gc_threshold: GcThreshold::default(),
            striping_order: StripeOrder::CWDP,
            victim_tie_break: TieBreak::LowestId,
            copyback: false,
            wear_leveling: true,
            allocation: Allocation::PerPlane,
            superblock_size: DEFAULT_SUPERBLOCK_SIZE,
            superblock_extra_blocks: DEFAULT_SUPERBLOCK_EXTRA_BLOCKS,
            pen: false,
            pen_wear_limit: crate::pen::WearGate::PAPER_W,
            pen_disturb: true,
            pen_disturb_tolerance: crate::pen::DisturbState::PAPER_TOLERANCE,
            replication: Replication::None,
            mapping: Mapping::Ideal,
            cmt_entries: DEFAULT_CMT_ENTRIES,
            cmt_bytes: None,
            mapping_entry: MappingEntry::Ppa32,
            mbm_ws: true,
            gftl_steps_per_write: DEFAULT_GFTL_STEPS_PER_WRITE,
            gftl_step_copies: 0,
            pen_partition: crate::pen::Partition::Tree,
            pen_superblock_rule: crate::pen::SuperblockRule::Compaction,
            mbm_align_slack_percent: DEFAULT_ALIGN_SLACK_PERCENT,
        }
    }
}

/// An FTL configuration that does not fit the device, with the offending key named.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid FTL config: `{key}`: {reason}")]
pub struct FtlConfigError {
    /// The config key at fault, e.g. `ftl.overprovisioning`.
    pub key: &'static str,
    /// Why.
    pub reason: String,
}

fn err(key: &'static str, reason: impl Into<String>) -> FtlConfigError {
    FtlConfigError { key, reason: reason.into() }
}

/// A configuration checked against a geometry, with derived quantities. Only
/// [`FtlConfig::validate`] makes one, so holding one means the checks passed.
#[derive(Clone, Debug, PartialEq)]
pub struct ValidatedFtlConfig {
    pub(crate) config: FtlConfig,
    pub(crate) logical_pages: u64,
    pub(crate) host_pages: u64,
    pub(crate) gc_threshold_blocks: u32,
    pub(crate) gc_threshold_raised: Option<String>,
}

impl ValidatedFtlConfig {
    /// The config as given.
    pub fn config(&self) -> &FtlConfig {
        &self.config
    }
    /// Logical pages exported to the host.
    pub fn logical_pages(&self) -> u64 {
        self.logical_pages
    }
    /// Logical pages the host addresses: [`Self::logical_pages`], or with
    /// `ftl.replication = "rain1"` half of them rounded down to whole stripes (one page per
    /// plane), each kept twice.
    pub fn host_pages(&self) -> u64 {
        self.host_pages
    }
    /// GC starts on a plane when its free blocks drop below this (≥ 2).
    pub fn gc_threshold_blocks(&self) -> u32 {
        self.gc_threshold_blocks
    }
    /// Why [`Self::gc_threshold_blocks`] is more than `ftl.gc_threshold` asks for on
    /// this device, naming the key (`None` if it is not): a fraction of a small plane
    /// rounds below the least GC allows. Run reports carry it as a warning.
    pub fn gc_threshold_raised(&self) -> Option<&str> {
        self.gc_threshold_raised.as_deref()
    }
}

/// Over-provisioning is capped so that tiny logical spaces remain meaningful.
const MAX_OP: f64 = 0.9;

impl FtlConfig {
    /// Check the config against `geometry` and derive the logical capacity and the GC
    /// threshold in blocks.
    ///
    /// Besides ranges, it checks that static allocation cannot overfill a plane: the
    /// largest number of LPNs striped onto one plane, ⌈logical / planes⌉, must stay below
    /// `(blocks_per_plane − gc_threshold) × pages_per_block`, so that whenever GC is
    /// needed some full block holds an invalid page and GC makes progress.
    pub fn validate(&self, geometry: &Geometry) -> Result<ValidatedFtlConfig, FtlConfigError> {
        check_kind_options(self, KIND_OPTIONS)?;
        check_pen_options(self)?;
        self.check_mapping()?;
        if self.mbm_align_slack_percent > 100 {
            return Err(err(
                "ftl.mbm_align_slack_percent",
                format!(
                    "{} is not in [0, 100] (a percentage of the greediest victim's invalid pages)",
                    self.mbm_align_slack_percent
                ),
            ));
        }
        let op = self.overprovisioning;
        if !op.is_finite() || !(0.0..MAX_OP).contains(&op) {
            return Err(err("ftl.overprovisioning", format!("{op} is not in [0, {MAX_OP})")));
        }
        let total = geometry.total_pages();
        if total >= u32::MAX as u64 {
            // Every FTL kind has this limit: the key at fault is the device's size.
            return Err(err(
                "nand.geometry",
                format!(
                    "Lamina's FTLs index physical pages with 32 bits and the device has {total} pages; \
                     make the geometry smaller (nand.geometry.blocks_per_plane or another count) so that \
                     it has fewer than {} pages",
                    u32::MAX
                ),
            ));
        }
        let op_ppm = (op * 1e6).round() as u64;
        let logical_pages = (total as u128 * (1_000_000 - op_ppm) as u128 / 1_000_000) as u64;
        if logical_pages == 0 {
            return Err(err("ftl.overprovisioning", "leaves no logical page"));
        }
        let blocks = geometry.blocks_per_plane();
        let (gc_threshold_blocks, gc_threshold_raised) = self.resolve_gc_threshold(blocks)?;
        let logical_pages = match self.kind {
            FtlKind::Page | FtlKind::Mbm | FtlKind::Tbm => {
                let planes = geometry.total_planes() as u64;
                let share = logical_pages.div_ceil(planes);
                let usable = (blocks - gc_threshold_blocks) as u64 * geometry.pages_per_block() as u64;
                let share = share + self.translation_pages(geometry, logical_pages);
                if share >= usable {
                    return Err(err(
                        "ftl.overprovisioning",
                        format!(
                            "{op} is too small: a plane would hold {share} logical pages but only {usable} \
                             pages stay usable above the GC threshold of {gc_threshold_blocks} blocks"
                        ),
                    ));
                }
                logical_pages
            }
            FtlKind::Nftl | FtlKind::Gftl => self.unit_logical_pages(geometry, 1, gc_threshold_blocks)?,
            FtlKind::Superblock => {
                self.check_superblock_shape(blocks)?;
                self.unit_logical_pages(geometry, self.superblock_size, gc_threshold_blocks)?
            }
        };
        let host_pages = match self.replication {
            Replication::None => logical_pages,
            Replication::Rain1 => {
                if geometry.total_chips() < 2 {
                    return Err(err(
                        "ftl.replication",
                        "\"rain1\" keeps every page on two chips and the device has one: add chips \
                         (nand.geometry.channels or chips_per_channel) or set ftl.replication = \"none\"",
                    ));
                }
                let stripe = geometry.total_planes() as u64;
                let h = logical_pages / 2 / stripe * stripe;
                if h == 0 {
                    return Err(err(
                        "ftl.replication",
                        format!(
                            "\"rain1\" leaves no host page: {logical_pages} logical pages hold less than two stripes of {stripe}"
                        ),
                    ));
                }
                h
            }
        };
        Ok(ValidatedFtlConfig {
            config: self.clone(),
            logical_pages,
            host_pages,
            gc_threshold_blocks,
            gc_threshold_raised,
        })
    }

    /// `ftl.gc_threshold` in blocks of a plane of `blocks`, and why it is more than the
    /// key asks for (`None` if it is not). A fraction rounds up and is raised to 2 (GC
    /// keeps one block in reserve), so a fraction stays meaningful on every plane size; the
    /// cached mapping keeps a second open block per plane (translation pages), one more
    /// block of GC reserve (docs/ftl.md, "Cached mapping"). The threshold must leave room
    /// for data in the plane.
    fn resolve_gc_threshold(&self, blocks: u32) -> Result<(u32, Option<String>), FtlConfigError> {
        let (asked, given) = match self.gc_threshold {
            GcThreshold::FreeBlocks(n) => {
                if n < 2 {
                    return Err(err(
                        "ftl.gc_threshold",
                        format!("free_blocks = {n}: at least 2 (GC keeps one block in reserve)"),
                    ));
                }
                (n, format!("free_blocks = {n}"))
            }
            GcThreshold::FreeFraction(f) => {
                if !f.is_finite() || !(0.0..1.0).contains(&f) {
                    return Err(err("ftl.gc_threshold", format!("free_fraction = {f} is not in [0, 1)")));
                }
                let n = (f * blocks as f64).ceil() as u32;
                (n, format!("free_fraction = {f} of a plane's {blocks} blocks is {n} blocks (rounded up)"))
            }
        };
        let (least, why) = match self.mapping {
            Mapping::Ideal => (2, "GC keeps one block in reserve"),
            Mapping::Cached => (
                3,
                "GC keeps one block in reserve and the cached mapping a second open block for translation pages",
            ),
        };
        let threshold = asked.max(least);
        if threshold + 1 >= blocks {
            return Err(err(
                "ftl.gc_threshold",
                format!("{threshold} free blocks leaves no room in a plane of {blocks} blocks"),
            ));
        }
        let raised = (threshold > asked).then(|| {
            format!(
                "ftl.gc_threshold: {given}, fewer than GC allows; GC starts below {threshold} free blocks \
                 instead (the least: {why}); give `ftl.gc_threshold = {{ free_blocks = {threshold} }}` or \
                 more to say so"
            )
        });
        Ok((threshold, raised))
    }

    /// `ftl.mapping` and `ftl.cmt_entries` fit together: a CMT size only with the cached
    /// mapping, the cached mapping only with per-plane allocation and no replication
    /// (what its GC reserve is proven for).
    fn check_mapping(&self) -> Result<(), FtlConfigError> {
        if self.mapping == Mapping::Ideal {
            if self.cmt_entries != DEFAULT_CMT_ENTRIES {
                return Err(err("ftl.cmt_entries", "only means something with ftl.mapping = \"cached\""));
            }
            if self.cmt_bytes.is_some() {
                return Err(err("ftl.cmt_bytes", "only means something with ftl.mapping = \"cached\""));
            }
            if self.mapping_entry != MappingEntry::Ppa32 {
                return Err(err("ftl.mapping_entry", "only means something with ftl.mapping = \"cached\""));
            }
            return Ok(());
        }
        if self.cmt_bytes.is_some() && self.cmt_entries != DEFAULT_CMT_ENTRIES {
            return Err(err(
                "ftl.cmt_bytes",
                "give the CMT's size once: ftl.cmt_bytes or ftl.cmt_entries, not both (remove one)",
            ));
        }
        if self.allocation != Allocation::PerPlane || self.replication != Replication::None {
            return Err(err(
                "ftl.mapping",
                "\"cached\" works with ftl.allocation = \"per-plane\" and ftl.replication = \"none\" only",
            ));
        }
        Ok(())
    }

    /// A plane's share of the translation pages the cached mapping stores for
    /// `logical_pages` (0 under the ideal mapping): one page per `page_size /
    /// MAPPING_ENTRY_BYTES` entries, spread over the planes (write-backs go to the written
    /// plane, which static striping spreads, or for reads to the roomiest plane;
    /// docs/ftl.md, "Cached mapping").
    fn translation_pages(&self, geometry: &Geometry, logical_pages: u64) -> u64 {
        match self.mapping {
            Mapping::Ideal => 0,
            Mapping::Cached => logical_pages
                .div_ceil(self.translation_entries_per_page(geometry))
                .div_ceil(geometry.total_planes() as u64),
        }
    }

    /// The mapping entry's size on flash and in the CMT on `geometry` (`ftl.mapping_entry`;
    /// see [`MappingEntry`]).
    pub fn mapping_entry_sizes(&self, geometry: &Geometry) -> MappingEntrySizes {
        match self.mapping_entry {
            MappingEntry::Ppa32 => {
                let b = u64::from(crate::MAPPING_ENTRY_BYTES);
                MappingEntrySizes { flash_bytes: b, cmt_bytes: b }
            }
            MappingEntry::Geometry => {
                let pages = u128::from(geometry.total_pages());
                let sectors = u64::from(geometry.page_size_bytes() / 512).max(1);
                // ⌈(x + S) / 8⌉ = ⌈(⌈x⌉ + S) / 8⌉ for integer S, so integer ceilings of
                // log2 P and of 2·log2 P = log2 P² give MQSim's real-valued sizes exactly.
                MappingEntrySizes {
                    flash_bytes: (ceil_log2(pages) + sectors).div_ceil(8),
                    cmt_bytes: (ceil_log2(pages * pages) + sectors).div_ceil(8),
                }
            }
        }
    }

    /// Mapping entries per translation page on `geometry`: the page size over the flash
    /// entry size, at least 1.
    pub fn translation_entries_per_page(&self, geometry: &Geometry) -> u64 {
        (u64::from(geometry.page_size_bytes()) / self.mapping_entry_sizes(geometry).flash_bytes).max(1)
    }

    /// The CMT's capacity in entries on `geometry`: `ftl.cmt_entries`, or ⌊`ftl.cmt_bytes`
    /// / CMT entry bytes⌋ when that is given.
    pub fn cmt_capacity(&self, geometry: &Geometry) -> u64 {
        match self.cmt_bytes {
            Some(b) => b / self.mapping_entry_sizes(geometry).cmt_bytes,
            None => self.cmt_entries,
        }
    }

    /// `ftl.superblock_size` (N) and `ftl.superblock_extra_blocks` (M) fit a plane of
    /// `blocks` blocks: N ≥ 1, M ≥ 1 (a superblock needs a block to take its updates),
    /// N + M < blocks.
    fn check_superblock_shape(&self, blocks: u32) -> Result<(), FtlConfigError> {
        let (n, m) = (self.superblock_size, self.superblock_extra_blocks);
        if n == 0 || n >= blocks {
            return Err(err(
                "ftl.superblock_size",
                format!("{n} is not in 1 ..< blocks_per_plane ({blocks})"),
            ));
        }
        if m == 0 || n + m >= blocks {
            return Err(err(
                "ftl.superblock_extra_blocks",
                format!(
                    "{m}: must be at least 1 (a superblock needs a block to write updates to) and keep \
                     ftl.superblock_size + it below blocks_per_plane ({blocks})"
                ),
            ));
        }
        Ok(())
    }

    /// Capacity of an FTL that maps units of `unit_blocks` logical blocks, each unit on
    /// one plane (NFTL: 1, the superblock FTL: N): `⌊⌊blocks_per_plane × (1 − OP)⌋ /
    /// unit_blocks⌋` units per plane (integer parts per million), each `unit_blocks ×
    /// pages_per_block` logical pages. The plane's other blocks are its spare pool
    /// (update blocks, merge destinations); it must cover the GC threshold, which
    /// guarantees that whenever the pool runs low some unit holds more blocks than its
    /// data needs, so GC can always give a block back.
    fn unit_logical_pages(
        &self,
        geometry: &Geometry,
        unit_blocks: u32,
        threshold: u32,
    ) -> Result<u64, FtlConfigError> {
        let bpp = geometry.blocks_per_plane() as u64;
        let op_ppm = (self.overprovisioning * 1e6).round() as u64;
        let logical_blocks = bpp * (1_000_000 - op_ppm) / 1_000_000;
        let units = logical_blocks / unit_blocks as u64;
        let spare = bpp - units * unit_blocks as u64;
        let op = self.overprovisioning;
        if units == 0 {
            return Err(err(
                "ftl.overprovisioning",
                format!(
                    "{op} leaves {logical_blocks} logical blocks per plane, fewer than one unit of \
                     {unit_blocks}; lower it or raise nand.geometry.blocks_per_plane"
                ),
            ));
        }
        if spare < threshold as u64 {
            return Err(err(
                "ftl.overprovisioning",
                format!(
                    "{op} leaves {spare} spare blocks per plane for update blocks and merges, fewer than \
                     the GC threshold of {threshold} blocks; raise it or lower ftl.gc_threshold"
                ),
            ));
        }
        Ok(units * unit_blocks as u64 * geometry.pages_per_block() as u64 * geometry.total_planes() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `lamina policies` prints `name()`: it must be the name `ftl.kind` accepts.
    #[test]
    fn listed_ftl_names_are_the_config_names() {
        for k in FtlKind::ALL {
            assert_eq!(serde_json::to_value(k).unwrap(), k.name());
        }
    }

    fn geo(ch: u32, w: u32, d: u32, p: u32, blocks: u32, pages: u32) -> Geometry {
        crate::testing::slc_geometry(ch, w, d, p, blocks, pages)
    }

    #[test]
    fn all_24_orders_round_trip_through_serde() {
        let all = StripeOrder::all();
        assert_eq!(all.len(), 24);
        for o in &all {
            let s = serde_json::to_string(o).unwrap();
            assert_eq!(serde_json::from_str::<StripeOrder>(&s).unwrap(), *o);
        }
        assert!(StripeOrder::parse("CWD").is_none());
        assert!(StripeOrder::parse("CWDD").is_none());
        assert!(StripeOrder::parse("CWDPX").is_none());
        assert_eq!(StripeOrder::parse("pdwc").unwrap().to_string(), "PDWC");
    }

    #[test]
    fn cwdp_matches_the_hand_computed_formula() {
        // 2 channels, 3 chips, 2 dies, 2 planes.
        let g = geo(2, 3, 2, 2, 8, 4);
        let o = StripeOrder::CWDP;
        for lpn in 0..100u64 {
            let a = PageAddr {
                channel: (lpn % 2) as u32,
                chip: (lpn / 2 % 3) as u32,
                die: (lpn / 6 % 2) as u32,
                plane: (lpn / 12 % 2) as u32,
                block: 0,
                page: 0,
            };
            assert_eq!(o.plane_of(&g, lpn), g.plane_id(a), "lpn {lpn}");
        }
        // PDWC: plane fastest, channel slowest.
        let o = StripeOrder::parse("PDWC").unwrap();
        assert_eq!(o.plane_of(&g, 1), g.plane_id(PageAddr { plane: 1, ..Default::default() }));
        assert_eq!(o.plane_of(&g, 2), g.plane_id(PageAddr { die: 1, ..Default::default() }));
        assert_eq!(o.plane_of(&g, 4), g.plane_id(PageAddr { chip: 1, ..Default::default() }));
        assert_eq!(o.plane_of(&g, 12), g.plane_id(PageAddr { channel: 1, ..Default::default() }));
    }

    #[test]
    fn every_order_spreads_consecutive_lpns_over_all_planes() {
        let g = geo(2, 2, 2, 2, 8, 4);
        for o in StripeOrder::all() {
            let mut seen: Vec<u32> = (0..16).map(|l| o.plane_of(&g, l).0).collect();
            seen.sort_unstable();
            assert_eq!(seen, (0..16).collect::<Vec<_>>(), "{o}");
        }
    }

    #[test]
    fn logical_pages_round_down() {
        let g = geo(1, 1, 1, 1, 100, 10); // 1000 pages
        let c = FtlConfig {
            overprovisioning: 0.0725,
            gc_threshold: GcThreshold::FreeBlocks(2),
            ..Default::default()
        };
        let v = c.validate(&g).unwrap();
        assert_eq!(v.logical_pages, 927); // 1000 × 0.9275 = 927.5 → 927
        assert_eq!(v.gc_threshold_blocks, 2);
        let c = FtlConfig { gc_threshold: GcThreshold::FreeFraction(0.05), ..c };
        assert_eq!(c.validate(&g).unwrap().gc_threshold_blocks, 5);
        let c = FtlConfig { gc_threshold: GcThreshold::FreeFraction(0.001), ..c };
        assert_eq!(c.validate(&g).unwrap().gc_threshold_blocks, 2);
    }

    /// Story (new-user trial): `free_fraction = 0` ran with a threshold of 2 blocks and
    /// nothing said so. The raise is kept (a fraction must work on every plane size) and
    /// explained, naming the key, the value, the count used and how to choose one.
    #[test]
    fn a_threshold_raised_to_the_least_allowed_says_why() {
        let g = geo(1, 1, 1, 1, 100, 10);
        let with = |t, mapping| FtlConfig { gc_threshold: t, mapping, ..Default::default() };
        let v = with(GcThreshold::FreeFraction(0.0), Mapping::Ideal).validate(&g).unwrap();
        assert_eq!(v.gc_threshold_blocks(), 2);
        let why = v.gc_threshold_raised().expect("raised");
        for want in [
            "ftl.gc_threshold",
            "free_fraction = 0 of a plane's 100 blocks is 0",
            "below 2",
            "free_blocks = 2",
        ] {
            assert!(why.contains(want), "want {want:?} in {why}");
        }
        // 0.015 × 100 = 1.5, rounded up to 2: not raised.
        let v = with(GcThreshold::FreeFraction(0.015), Mapping::Ideal).validate(&g).unwrap();
        assert_eq!((v.gc_threshold_blocks(), v.gc_threshold_raised()), (2, None));
        assert_eq!(
            with(GcThreshold::FreeBlocks(4), Mapping::Ideal).validate(&g).unwrap().gc_threshold_raised(),
            None
        );
        // The cached mapping's floor of 3.
        let v = with(GcThreshold::FreeBlocks(2), Mapping::Cached).validate(&g).unwrap();
        assert_eq!(v.gc_threshold_blocks(), 3);
        assert!(
            v.gc_threshold_raised()
                .unwrap()
                .contains("free_blocks = 2, fewer than GC allows; GC starts below 3"),
            "{v:?}"
        );
    }

    #[test]
    fn errors_name_the_key() {
        let g = geo(1, 1, 1, 2, 16, 8);
        let bad = |c: FtlConfig| c.validate(&g).unwrap_err();
        let base = FtlConfig {
            overprovisioning: 0.25,
            gc_threshold: GcThreshold::FreeBlocks(2),
            ..Default::default()
        };
        assert!(base.validate(&g).is_ok());
        assert_eq!(bad(FtlConfig { overprovisioning: -0.1, ..base.clone() }).key, "ftl.overprovisioning");
        assert_eq!(bad(FtlConfig { overprovisioning: f64::NAN, ..base.clone() }).key, "ftl.overprovisioning");
        // 16 blocks, threshold 2 → 14 × 8 = 112 usable pages per plane; 1% OP → 127 per plane.
        let e = bad(FtlConfig { overprovisioning: 0.01, ..base.clone() });
        assert_eq!(e.key, "ftl.overprovisioning");
        assert!(e.to_string().contains("`ftl.overprovisioning`"), "{e}");
        assert_eq!(
            bad(FtlConfig { gc_threshold: GcThreshold::FreeBlocks(1), ..base.clone() }).key,
            "ftl.gc_threshold"
        );
        assert_eq!(
            bad(FtlConfig { gc_threshold: GcThreshold::FreeBlocks(15), ..base.clone() }).key,
            "ftl.gc_threshold"
        );
        assert_eq!(
            bad(FtlConfig { gc_threshold: GcThreshold::FreeFraction(1.5), ..base.clone() }).key,
            "ftl.gc_threshold"
        );
    }

    /// Issue #8 item 7: the 32-bit page limit is a validation error with a remedy (it
    /// used to be an `assert!` reached only after the device's tables were allocated).
    #[test]
    fn a_device_beyond_32_bit_page_numbers_is_refused_with_a_remedy() {
        let g = geo(1, 1, 1, 1, 1 << 20, 4096); // 2^32 pages
        let e = FtlConfig::default().validate(&g).unwrap_err();
        // The device's size, not the FTL kind (every kind has the limit), so that a config
        // error says where the geometry was given.
        assert_eq!(e.key, "nand.geometry");
        assert!(e.reason.contains("4294967296 pages") && e.reason.contains("blocks_per_plane"), "{e}");
    }

    /// `ftl.kind` is a tag: an unknown name is a parse error that lists the known kinds.
    #[test]
    fn an_unknown_kind_lists_the_known_ones() {
        let e = toml::from_str::<FtlConfig>("kind = \"sprinkler\"").unwrap_err().to_string();
        assert!(e.contains("unknown variant `sprinkler`"), "{e}");
        for k in FtlKind::ALL {
            assert!(e.contains(&format!("`{}`", k.name())), "{e}");
        }
    }

    #[test]
    fn allocation_parses_in_kebab_case_and_defaults_to_per_plane() {
        assert_eq!(FtlConfig::default().allocation, Allocation::PerPlane);
        let c: FtlConfig = toml::from_str("allocation = \"die-aligned\"").unwrap();
        assert_eq!(c.allocation, Allocation::DieAligned);
        let e = toml::from_str::<FtlConfig>("allocation = \"aligned\"").unwrap_err().to_string();
        assert!(e.contains("per-plane") && e.contains("die-aligned"), "{e}");
    }

    /// An option a kind does not understand is rejected naming its key, by
    /// `validate()` and so by every kind's constructor.
    #[test]
    fn a_kind_specific_option_is_rejected_under_other_kinds() {
        let g = geo(1, 1, 1, 2, 16, 8);
        let c =
            FtlConfig { allocation: Allocation::DieAligned, overprovisioning: 0.25, ..FtlConfig::default() };
        assert!(c.validate(&g).is_ok());
        let e = FtlConfig { kind: FtlKind::Nftl, ..c.clone() }.validate(&g).unwrap_err();
        assert_eq!(e.key, "ftl.allocation");
        assert!(e.to_string().contains("ftl.kind = \"nftl\"; only of page"), "{e}");
        let sb = FtlConfig { superblock_size: 2, overprovisioning: 0.25, ..FtlConfig::default() };
        for kind in [FtlKind::Page, FtlKind::Nftl] {
            let e = kind.build(g.clone(), &sb).err().unwrap();
            assert_eq!(e.key, "ftl.superblock_size", "{kind:?}");
            assert!(e.reason.contains("only of superblock"), "{e}");
        }
        let m = FtlConfig { superblock_extra_blocks: 4, ..FtlConfig::default() };
        assert_eq!(FtlKind::Nftl.build(g.clone(), &m).err().unwrap().key, "ftl.superblock_extra_blocks");
        assert!(
            FtlKind::Superblock.build(g.clone(), &FtlConfig { superblock_extra_blocks: 4, ..sb }).is_ok()
        );
        let oldest =
            FtlConfig { victim_tie_break: TieBreak::Oldest, overprovisioning: 0.25, ..FtlConfig::default() };
        assert_eq!(FtlKind::Nftl.build(g.clone(), &oldest).err().unwrap().key, "ftl.victim_tie_break");
        assert!(FtlKind::Superblock.build(g.clone(), &oldest).is_ok());
        // Left at its default, an option is not "set".
        assert!(
            check_kind_options(&FtlConfig { kind: FtlKind::Nftl, ..FtlConfig::default() }, KIND_OPTIONS)
                .is_ok()
        );
    }

    /// GFTL's keys: only under `kind = "gftl"`, left out of a serialized config at
    /// their defaults; GFTL has no tie to break.
    #[test]
    fn gftl_options_belong_to_gftl() {
        let g = geo(1, 1, 1, 2, 16, 8);
        let base = FtlConfig { overprovisioning: 0.25, ..FtlConfig::default() };
        for (c, key) in [
            (FtlConfig { gftl_steps_per_write: 3, ..base.clone() }, "ftl.gftl_steps_per_write"),
            (FtlConfig { gftl_step_copies: 4, ..base.clone() }, "ftl.gftl_step_copies"),
        ] {
            for kind in [FtlKind::Page, FtlKind::Nftl, FtlKind::Superblock] {
                let e = kind.build(g.clone(), &c).err().unwrap();
                assert_eq!(e.key, key, "{kind:?}");
                assert!(e.reason.contains("only of gftl"), "{e}");
            }
            assert!(FtlKind::Gftl.build(g.clone(), &c).is_ok());
        }
        let oldest = FtlConfig { victim_tie_break: TieBreak::Oldest, ..base.clone() };
        assert_eq!(FtlKind::Gftl.build(g.clone(), &oldest).err().unwrap().key, "ftl.victim_tie_break");
        let c: FtlConfig = toml::from_str("kind = \"gftl\"\ngftl_steps_per_write = 65").unwrap();
        assert_eq!((c.kind, c.gftl_steps_per_write, c.gftl_step_copies), (FtlKind::Gftl, 65, 0));
        let json = serde_json::to_string(&FtlConfig::default()).unwrap();
        assert!(!json.contains("gftl") && !json.contains("partition"), "{json}");
    }

    #[test]
    fn ftl_kind_builds_the_ftl_it_names() {
        let g = geo(1, 1, 2, 2, 16, 8);
        let c =
            FtlConfig { allocation: Allocation::DieAligned, overprovisioning: 0.25, ..FtlConfig::default() };
        let ftl = FtlKind::Page.build(g.clone(), &c).unwrap();
        assert_eq!(ftl.write_constraint(crate::Lpn(0)), crate::WriteConstraint::Die);
        assert_eq!(ftl.logical_pages(), c.validate(&g).unwrap().logical_pages());
        let bad = FtlConfig { overprovisioning: 2.0, ..c };
        assert_eq!(FtlKind::Page.build(g.clone(), &bad).err().unwrap().key, "ftl.overprovisioning");
        let plain = FtlConfig { overprovisioning: 0.25, ..FtlConfig::default() };
        let nftl = FtlKind::Nftl.build(g.clone(), &plain).unwrap();
        assert!(matches!(nftl.write_constraint(crate::Lpn(0)), crate::WriteConstraint::Plane(_)));
        assert!(nftl.has_translation_reads());
        let sb = FtlKind::Superblock.build(g, &plain).unwrap();
        assert!(matches!(sb.write_constraint(crate::Lpn(0)), crate::WriteConstraint::Plane(_)));
        assert!(!sb.has_translation_reads());
    }

    #[test]
    fn parses_from_toml_and_rejects_unknown_keys() {
        let c: FtlConfig = toml::from_str(
            r#"
            kind = "page"
            overprovisioning = 0.1
            gc_threshold = { free_blocks = 4 }
            striping_order = "PDWC"
            victim_tie_break = "least-worn"
            copyback = true
            wear_leveling = false
            "#,
        )
        .unwrap();
        assert_eq!(c.gc_threshold, GcThreshold::FreeBlocks(4));
        assert_eq!(c.striping_order.to_string(), "PDWC");
        assert_eq!(c.victim_tie_break, TieBreak::LeastWorn);
        let c: FtlConfig = toml::from_str("gc_threshold = { free_fraction = 0.05 }").unwrap();
        assert_eq!(c.gc_threshold, GcThreshold::FreeFraction(0.05));
        assert!(toml::from_str::<FtlConfig>("overprovisioningg = 0.1").is_err());
        let e = toml::from_str::<FtlConfig>("striping_order = \"CWDX\"").unwrap_err();
        assert!(e.to_string().contains("striping order"), "{e}");
    }
}
