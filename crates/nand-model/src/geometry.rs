//! Device geometry: channel → chip → die → plane → block → page, cell type, 3D layers,
//! and the mapping of a page-in-block to its (layer, page type).
//!
//! A [`GeometryConfig`] is what users write; [`GeometryConfig::validate`] turns it into a
//! [`Geometry`] whose invariants (all counts non-zero, products fit their id types, page
//! size a multiple of the partial-read granularity, …) later code relies on.

use serde::{Deserialize, Serialize};

use crate::addr::{BlockId, ChannelId, ChipId, DieId, PageAddr, PlaneId, Ppa};

/// Flash cell type: how many bits one cell stores, hence how many page types share a
/// word-line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CellType {
    /// One bit per cell; every page is an LSB page.
    Slc,
    /// Two bits per cell: LSB and MSB pages.
    Mlc,
    /// Three bits per cell: LSB, CSB and MSB pages.
    Tlc,
    /// Four bits per cell: LSB, CSB, MSB and TSB pages.
    Qlc,
}

impl CellType {
    /// Bits per cell = page types per word-line.
    #[inline]
    pub const fn bits(self) -> u32 {
        match self {
            CellType::Slc => 1,
            CellType::Mlc => 2,
            CellType::Tlc => 3,
            CellType::Qlc => 4,
        }
    }
}

/// Which bit of a multi-level cell a page stores. Read and program latencies are
/// given per page type (soml-read Table 1 gives TLC LSB/CSB/MSB read latencies).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PageType {
    /// Least significant bit (the only type of SLC).
    Lsb,
    /// Central significant bit (TLC, QLC).
    Csb,
    /// Most significant bit (MLC's second page, TLC's third).
    Msb,
    /// Top significant bit (QLC's fourth page).
    Tsb,
}

impl PageType {
    /// Index 0..4 in LSB, CSB, MSB, TSB order, for per-type latency tables.
    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The page type stored at bit position `bit` (0 = first page of a word-line) of a
    /// cell of type `cell`. MLC skips CSB: its pages are LSB then MSB.
    #[inline]
    pub const fn of_bit(cell: CellType, bit: u32) -> PageType {
        match (cell, bit) {
            (_, 0) => PageType::Lsb,
            (CellType::Mlc, 1) => PageType::Msb,
            (_, 1) => PageType::Csb,
            (_, 2) => PageType::Msb,
            _ => PageType::Tsb,
        }
    }
}

/// How the pages of a block are laid out over word-lines (hence page types).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PageTypeOrder {
    /// Consecutive pages share a word-line: page `p` is bit `p % bits` of word-line
    /// `p / bits` (LSB, CSB, MSB, LSB, …). The usual one-shot-programming layout.
    #[default]
    Interleaved,
    /// The block's first `pages/bits` pages are all LSB, the next CSB, and so on
    /// (the legacy 2D "LSB half then MSB half" layout).
    Grouped,
}

/// Geometry as written in a config file (`[geometry]`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GeometryConfig {
    /// Independent channels (each with its own bus).
    pub channels: u32,
    /// Chips (packages, "ways") sharing one channel.
    pub chips_per_channel: u32,
    /// Dies per chip; dies execute array operations independently.
    pub dies_per_chip: u32,
    /// Planes per die.
    pub planes_per_die: u32,
    /// Blocks per plane.
    pub blocks_per_plane: u32,
    /// Pages per block.
    pub pages_per_block: u32,
    /// Page size in bytes (user data).
    pub page_size_bytes: u32,
    /// Smallest partial read in bytes (e.g. 4096 of a 16384-byte page); equal to
    /// `page_size_bytes` when partial reads are not supported. Defaults to the page size.
    #[serde(default)]
    pub partial_read_bytes: Option<u32>,
    /// Cell type.
    pub cell_type: CellType,
    /// Layers per block (3D stack height). 1 for planar NAND.
    #[serde(default = "one")]
    pub layers: u32,
    /// Page-type layout inside a block.
    #[serde(default)]
    pub page_type_order: PageTypeOrder,
}

fn one() -> u32 {
    1
}

/// The unit pages are made of: `page_size_bytes` must be a positive multiple of it.
///
/// Why: every trace format addresses storage in 512-byte sectors (or bytes), and a page
/// smaller than a sector turns one sector into many flash operations (a 4 KiB request
/// on 1-byte pages is 4096 programs), which no device does. Non-power-of-two page sizes
/// (e.g. 12 KiB) are legal: nothing in Lamina shifts by the page size (the write
/// buffer's sub-page units are `⌈page / 64⌉` bytes, computed by division).
pub const SECTOR_BYTES: u32 = 512;

/// Largest `pages_per_block`: 2^16.
///
/// Why: validation precomputes an array time per page-in-block (16 bytes each) and the
/// page FTL keeps `planes × (pages_per_block + 1)` GC bucket heads, so this dimension
/// must stay small; real 3D-NAND blocks hold a few thousand pages, and the deepest
/// partial-erase split (`partial_erase.levels = 16`) needs exactly 2^16.
pub const MAX_PAGES_PER_BLOCK: u32 = 1 << 16;

/// A geometry that cannot exist, with the offending field named.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid geometry: field `geometry.{field}`: {reason}")]
pub struct GeometryError {
    /// The config field at fault (e.g. `pages_per_block`).
    pub field: &'static str,
    /// Why it is invalid.
    pub reason: String,
}

fn err(field: &'static str, reason: impl Into<String>) -> GeometryError {
    GeometryError { field, reason: reason.into() }
}

/// A validated geometry. Construct with [`GeometryConfig::validate`].
///
/// Invariants: every count is ≥ 1; the total number of pages fits in a `u64` and of
/// blocks, planes, dies and chips in a `u32`; `page_size_bytes` is a multiple of
/// [`SECTOR_BYTES`] and of `partial_read_bytes`; `pages_per_block ≤`
/// [`MAX_PAGES_PER_BLOCK`]; `pages_per_block` is a multiple of the cell's bits and
/// `layers ≤ pages_per_block / bits` (each layer holds at least one word-line).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Geometry {
    config: GeometryConfig,
    partial_read_bytes: u32,
    chips: u32,
    dies: u32,
    planes: u32,
    blocks: u32,
    pages: u64,
    /// log2 of (pages per block, blocks per plane, planes, dies, chips) when every one is
    /// a power of two, so address decoding is shifts instead of five divisions.
    #[serde(skip)]
    shifts: Option<[u32; 5]>,
}

impl GeometryConfig {
    /// Check the geometry and derive its totals.
    pub fn validate(&self) -> Result<Geometry, GeometryError> {
        let nonzero = [
            ("channels", self.channels),
            ("chips_per_channel", self.chips_per_channel),
            ("dies_per_chip", self.dies_per_chip),
            ("planes_per_die", self.planes_per_die),
            ("blocks_per_plane", self.blocks_per_plane),
            ("pages_per_block", self.pages_per_block),
            ("page_size_bytes", self.page_size_bytes),
            ("layers", self.layers),
        ];
        for (field, v) in nonzero {
            if v == 0 {
                return Err(err(field, "must be at least 1"));
            }
        }
        if self.page_size_bytes % SECTOR_BYTES != 0 {
            return Err(err(
                "page_size_bytes",
                format!(
                    "{} is not a multiple of {SECTOR_BYTES}: a page holds whole 512-byte sectors (traces \
                     address in sectors); real pages are 2048, 4096, 8192 or 16384 bytes",
                    self.page_size_bytes
                ),
            ));
        }
        if self.pages_per_block > MAX_PAGES_PER_BLOCK {
            return Err(err(
                "pages_per_block",
                format!(
                    "{} exceeds {MAX_PAGES_PER_BLOCK}: per-page-in-block tables are built for every block \
                     size (real 3D-NAND blocks hold a few thousand pages); use more blocks_per_plane instead",
                    self.pages_per_block
                ),
            ));
        }
        if self.channels > u16::MAX as u32 {
            return Err(err("channels", format!("{} exceeds {}", self.channels, u16::MAX)));
        }
        let partial = self.partial_read_bytes.unwrap_or(self.page_size_bytes);
        if partial == 0 || partial > self.page_size_bytes || self.page_size_bytes % partial != 0 {
            return Err(err(
                "partial_read_bytes",
                format!("{partial} must divide the page size {} (and be at least 1)", self.page_size_bytes),
            ));
        }
        let bits = self.cell_type.bits();
        if self.pages_per_block % bits != 0 {
            return Err(err(
                "pages_per_block",
                format!(
                    "{} is not a multiple of {} pages per word-line ({:?})",
                    self.pages_per_block, bits, self.cell_type
                ),
            ));
        }
        let word_lines = self.pages_per_block / bits;
        if self.layers > word_lines {
            return Err(err(
                "layers",
                format!("{} layers but only {word_lines} word-lines per block", self.layers),
            ));
        }
        let too_big = |field: &'static str| {
            err(
                field,
                format!(
                    "the device would have more than {} chips, dies, planes or blocks in total, which \
                     32-bit ids cannot number; make {field} (or another count) smaller",
                    u32::MAX
                ),
            )
        };
        let chips =
            self.channels.checked_mul(self.chips_per_channel).ok_or_else(|| too_big("chips_per_channel"))?;
        let dies = chips.checked_mul(self.dies_per_chip).ok_or_else(|| too_big("dies_per_chip"))?;
        let planes = dies.checked_mul(self.planes_per_die).ok_or_else(|| too_big("planes_per_die"))?;
        let blocks = planes.checked_mul(self.blocks_per_plane).ok_or_else(|| too_big("blocks_per_plane"))?;
        let pages = (blocks as u64)
            .checked_mul(self.pages_per_block as u64)
            .ok_or_else(|| too_big("pages_per_block"))?;
        let dims = [
            self.pages_per_block,
            self.blocks_per_plane,
            self.planes_per_die,
            self.dies_per_chip,
            self.chips_per_channel,
        ];
        let shifts = dims.iter().all(|d| d.is_power_of_two()).then(|| dims.map(|d| d.trailing_zeros()));
        Ok(Geometry {
            config: self.clone(),
            partial_read_bytes: partial,
            chips,
            dies,
            planes,
            blocks,
            pages,
            shifts,
        })
    }
}

impl Geometry {
    /// The config this geometry was validated from.
    #[inline]
    pub fn config(&self) -> &GeometryConfig {
        &self.config
    }
    /// Number of channels.
    #[inline]
    pub fn channels(&self) -> u32 {
        self.config.channels
    }
    /// Chips per channel.
    #[inline]
    pub fn chips_per_channel(&self) -> u32 {
        self.config.chips_per_channel
    }
    /// Dies per chip.
    #[inline]
    pub fn dies_per_chip(&self) -> u32 {
        self.config.dies_per_chip
    }
    /// Planes per die.
    #[inline]
    pub fn planes_per_die(&self) -> u32 {
        self.config.planes_per_die
    }
    /// Blocks per plane.
    #[inline]
    pub fn blocks_per_plane(&self) -> u32 {
        self.config.blocks_per_plane
    }
    /// Pages per block.
    #[inline]
    pub fn pages_per_block(&self) -> u32 {
        self.config.pages_per_block
    }
    /// Page size in bytes.
    #[inline]
    pub fn page_size_bytes(&self) -> u32 {
        self.config.page_size_bytes
    }
    /// Partial-read granularity in bytes (= page size when unsupported).
    #[inline]
    pub fn partial_read_bytes(&self) -> u32 {
        self.partial_read_bytes
    }
    /// Partial-read slots per page (page size / partial-read granularity).
    #[inline]
    pub fn partial_slots(&self) -> u32 {
        self.config.page_size_bytes / self.partial_read_bytes
    }
    /// Cell type.
    #[inline]
    pub fn cell_type(&self) -> CellType {
        self.config.cell_type
    }
    /// Layers per block.
    #[inline]
    pub fn layers(&self) -> u32 {
        self.config.layers
    }
    /// Total chips.
    #[inline]
    pub fn total_chips(&self) -> u32 {
        self.chips
    }
    /// Total dies.
    #[inline]
    pub fn total_dies(&self) -> u32 {
        self.dies
    }
    /// Total planes.
    #[inline]
    pub fn total_planes(&self) -> u32 {
        self.planes
    }
    /// Total blocks.
    #[inline]
    pub fn total_blocks(&self) -> u32 {
        self.blocks
    }
    /// Total pages.
    #[inline]
    pub fn total_pages(&self) -> u64 {
        self.pages
    }
    /// Raw capacity in bytes.
    #[inline]
    pub fn capacity_bytes(&self) -> u64 {
        self.pages * self.config.page_size_bytes as u64
    }

    /// The layer (0 = first programmed, at the bottom of the stack) holding page
    /// `page` of a block: word-lines are spread evenly over the layers, in order.
    #[inline]
    pub fn layer_of(&self, page: u32) -> u32 {
        let bits = self.config.cell_type.bits();
        let word_lines = self.config.pages_per_block / bits;
        let wl = match self.config.page_type_order {
            PageTypeOrder::Interleaved => page / bits,
            PageTypeOrder::Grouped => page % word_lines,
        };
        (wl as u64 * self.config.layers as u64 / word_lines as u64) as u32
    }

    /// The page type of page `page` of a block.
    #[inline]
    pub fn page_type_of(&self, page: u32) -> PageType {
        let bits = self.config.cell_type.bits();
        let bit = match self.config.page_type_order {
            PageTypeOrder::Interleaved => page % bits,
            PageTypeOrder::Grouped => page / (self.config.pages_per_block / bits),
        };
        PageType::of_bit(self.config.cell_type, bit)
    }

    /// Flat physical page address of a hierarchical address. Panics (a bug, not an
    /// input error) if any component is out of range.
    #[inline]
    pub fn ppa(&self, a: PageAddr) -> Ppa {
        assert!(self.contains(a), "address out of range: {a:?}");
        let block = self.block_id(a);
        Ppa(block.0 as u64 * self.config.pages_per_block as u64 + a.page as u64)
    }

    /// Hierarchical address of a flat page address. Panics if out of range.
    #[inline]
    pub fn addr(&self, ppa: Ppa) -> PageAddr {
        assert!(ppa.0 < self.pages, "ppa {} out of range", ppa.0);
        if let Some([sp, sb, spl, sd, sc]) = self.shifts {
            let mask = |v: u64, s: u32| (v & ((1u64 << s) - 1)) as u32;
            let p = ppa.0;
            let page = mask(p, sp);
            let r = p >> sp;
            let block = mask(r, sb);
            let r = r >> sb;
            let plane = mask(r, spl);
            let r = r >> spl;
            let die = mask(r, sd);
            let r = r >> sd;
            let chip = mask(r, sc);
            let channel = (r >> sc) as u32;
            return PageAddr { channel, chip, die, plane, block, page };
        }
        let c = &self.config;
        let page = (ppa.0 % c.pages_per_block as u64) as u32;
        let mut rest = (ppa.0 / c.pages_per_block as u64) as u32;
        let block = rest % c.blocks_per_plane;
        rest /= c.blocks_per_plane;
        let plane = rest % c.planes_per_die;
        rest /= c.planes_per_die;
        let die = rest % c.dies_per_chip;
        rest /= c.dies_per_chip;
        let chip = rest % c.chips_per_channel;
        let channel = rest / c.chips_per_channel;
        PageAddr { channel, chip, die, plane, block, page }
    }

    /// True if every component of `a` is in range.
    #[inline]
    pub fn contains(&self, a: PageAddr) -> bool {
        let c = &self.config;
        a.channel < c.channels
            && a.chip < c.chips_per_channel
            && a.die < c.dies_per_chip
            && a.plane < c.planes_per_die
            && a.block < c.blocks_per_plane
            && a.page < c.pages_per_block
    }

    /// Global chip index of an address.
    #[inline]
    pub fn chip_id(&self, a: PageAddr) -> ChipId {
        ChipId(a.channel * self.config.chips_per_channel + a.chip)
    }
    /// Global die index of an address.
    #[inline]
    pub fn die_id(&self, a: PageAddr) -> DieId {
        DieId(self.chip_id(a).0 * self.config.dies_per_chip + a.die)
    }
    /// Global plane index of an address.
    #[inline]
    pub fn plane_id(&self, a: PageAddr) -> PlaneId {
        PlaneId(self.die_id(a).0 * self.config.planes_per_die + a.plane)
    }
    /// Global block index of an address.
    #[inline]
    pub fn block_id(&self, a: PageAddr) -> BlockId {
        BlockId(self.plane_id(a).0 * self.config.blocks_per_plane + a.block)
    }
    /// `v / divisor`, where `divisor` is dimension `dim` of `shifts` (a shift when every
    /// dimension is a power of two: divisions dominate address arithmetic otherwise).
    #[inline]
    fn div(&self, v: u64, dim: usize, divisor: u32) -> u64 {
        match self.shifts {
            Some(s) => v >> s[dim],
            None => v / divisor as u64,
        }
    }

    /// Global block index of a flat page address.
    #[inline]
    pub fn block_of(&self, ppa: Ppa) -> BlockId {
        BlockId(self.div(ppa.0, 0, self.config.pages_per_block) as u32)
    }
    /// First page of a block.
    #[inline]
    pub fn first_page(&self, block: BlockId) -> Ppa {
        Ppa(block.0 as u64 * self.config.pages_per_block as u64)
    }
    /// Plane holding a flat page address (`plane_of_block(block_of(ppa))`, one shift
    /// when every dimension is a power of two).
    #[inline]
    pub fn plane_of_ppa(&self, ppa: Ppa) -> PlaneId {
        match self.shifts {
            Some([sp, sb, ..]) => PlaneId((ppa.0 >> (sp + sb)) as u32),
            None => self.plane_of_block(self.block_of(ppa)),
        }
    }
    /// Die holding a flat page address (`die_of_plane(plane_of_ppa(ppa))`, one shift when
    /// every dimension is a power of two).
    #[inline]
    pub fn die_of_ppa(&self, ppa: Ppa) -> DieId {
        match self.shifts {
            Some([sp, sb, spl, ..]) => DieId((ppa.0 >> (sp + sb + spl)) as u32),
            None => self.die_of_plane(self.plane_of_block(self.block_of(ppa))),
        }
    }
    /// Plane holding a block.
    #[inline]
    pub fn plane_of_block(&self, block: BlockId) -> PlaneId {
        PlaneId(self.div(block.0 as u64, 1, self.config.blocks_per_plane) as u32)
    }
    /// Die holding a plane.
    #[inline]
    pub fn die_of_plane(&self, plane: PlaneId) -> DieId {
        DieId(self.div(plane.0 as u64, 2, self.config.planes_per_die) as u32)
    }
    /// Chip holding a die.
    #[inline]
    pub fn chip_of_die(&self, die: DieId) -> ChipId {
        ChipId(self.div(die.0 as u64, 3, self.config.dies_per_chip) as u32)
    }
    /// Channel of a chip.
    #[inline]
    pub fn channel_of_chip(&self, chip: ChipId) -> ChannelId {
        ChannelId(self.div(chip.0 as u64, 4, self.config.chips_per_channel) as u32)
    }
    /// Channel of a die.
    #[inline]
    pub fn channel_of_die(&self, die: DieId) -> ChannelId {
        self.channel_of_chip(self.chip_of_die(die))
    }
    /// The `index`-th plane of `die` (`index < planes_per_die`).
    #[inline]
    pub fn plane_of_die(&self, die: DieId, index: u32) -> PlaneId {
        debug_assert!(index < self.config.planes_per_die);
        PlaneId(die.0 * self.config.planes_per_die + index)
    }
    /// A plane's index within its die (`0 .. planes_per_die`).
    #[inline]
    pub fn plane_index_in_die(&self, plane: PlaneId) -> u32 {
        plane.0 % self.config.planes_per_die
    }
    /// A block's index within its plane (`0 .. blocks_per_plane`): the block offset the
    /// multi-plane rules compare.
    #[inline]
    pub fn block_index_in_plane(&self, block: BlockId) -> u32 {
        block.0 % self.config.blocks_per_plane
    }
    /// The `k`-th die in channel-first order (`k < total_dies`): channel `k % channels`,
    /// then the `k / channels`-th die of that channel.
    #[inline]
    pub fn die_channel_first(&self, k: u32) -> DieId {
        let c = self.config.channels;
        let per_channel = self.config.chips_per_channel * self.config.dies_per_chip;
        DieId((k % c) * per_channel + k / c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> GeometryConfig {
        GeometryConfig {
            channels: 2,
            chips_per_channel: 2,
            dies_per_chip: 2,
            planes_per_die: 2,
            blocks_per_plane: 8,
            pages_per_block: 12,
            page_size_bytes: 16384,
            partial_read_bytes: Some(4096),
            cell_type: CellType::Tlc,
            layers: 4,
            page_type_order: PageTypeOrder::Interleaved,
        }
    }

    #[test]
    fn ppa_round_trips() {
        let g = cfg().validate().unwrap();
        assert!(g.shifts.is_none(), "12 pages per block is not a power of two");
        for p in 0..g.total_pages() {
            let a = g.addr(Ppa(p));
            assert_eq!(g.ppa(a), Ppa(p));
            assert_eq!(g.plane_of_ppa(Ppa(p)), g.plane_id(a));
            assert_eq!(g.die_of_ppa(Ppa(p)), g.die_id(a));
        }
        // The shift fast path agrees with the division path.
        let mut pow2 = cfg();
        pow2.cell_type = CellType::Slc;
        pow2.pages_per_block = 16;
        let fast = pow2.validate().unwrap();
        assert!(fast.shifts.is_some());
        let mut slow = fast.clone();
        slow.shifts = None;
        for p in 0..fast.total_pages() {
            assert_eq!(fast.addr(Ppa(p)), slow.addr(Ppa(p)));
            let b = fast.block_of(Ppa(p));
            assert_eq!(b, slow.block_of(Ppa(p)));
            let pl = fast.plane_of_block(b);
            assert_eq!(pl, slow.plane_of_block(b));
            let d = fast.die_of_plane(pl);
            assert_eq!(d, slow.die_of_plane(pl));
            assert_eq!((fast.plane_of_ppa(Ppa(p)), fast.die_of_ppa(Ppa(p))), (pl, d));
            assert_eq!((slow.plane_of_ppa(Ppa(p)), slow.die_of_ppa(Ppa(p))), (pl, d));
            assert_eq!(fast.chip_of_die(d), slow.chip_of_die(d));
            assert_eq!(fast.channel_of_die(d), slow.channel_of_die(d));
            assert_eq!(fast.ppa(fast.addr(Ppa(p))), Ppa(p));
        }
        assert_eq!(g.total_pages(), 2 * 2 * 2 * 2 * 8 * 12);
        assert_eq!(g.partial_slots(), 4);
    }

    #[test]
    fn page_types_and_layers() {
        let g = cfg().validate().unwrap();
        let types: Vec<_> = (0..6).map(|p| g.page_type_of(p)).collect();
        assert_eq!(
            types,
            [PageType::Lsb, PageType::Csb, PageType::Msb, PageType::Lsb, PageType::Csb, PageType::Msb]
        );
        // 4 word-lines over 4 layers: one word-line (3 pages) per layer.
        let layers: Vec<_> = (0..12).map(|p| g.layer_of(p)).collect();
        assert_eq!(layers, [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3]);
        let mut grouped = cfg();
        grouped.page_type_order = PageTypeOrder::Grouped;
        let g = grouped.validate().unwrap();
        assert_eq!(g.page_type_of(0), PageType::Lsb);
        assert_eq!(g.page_type_of(4), PageType::Csb);
        assert_eq!(g.page_type_of(11), PageType::Msb);
        assert_eq!(g.layer_of(4), 0);
        let mut mlc = cfg();
        mlc.cell_type = CellType::Mlc;
        assert_eq!(mlc.validate().unwrap().page_type_of(1), PageType::Msb);
    }

    #[test]
    fn rejects_bad_geometry_naming_the_field() {
        let mut c = cfg();
        c.dies_per_chip = 0;
        assert_eq!(c.validate().unwrap_err().field, "dies_per_chip");
        let mut c = cfg();
        c.partial_read_bytes = Some(5000);
        assert_eq!(c.validate().unwrap_err().field, "partial_read_bytes");
        let mut c = cfg();
        c.pages_per_block = 10;
        assert_eq!(c.validate().unwrap_err().field, "pages_per_block");
        let mut c = cfg();
        c.layers = 5;
        assert_eq!(c.validate().unwrap_err().field, "layers");
        let mut c = cfg();
        c.blocks_per_plane = u32::MAX;
        let e = c.validate().unwrap_err();
        assert_eq!(e.field, "blocks_per_plane");
        assert!(e.to_string().contains("geometry.blocks_per_plane"));
    }

    /// Issue #8 item 7: `page_size_bytes = 1` was accepted and a 4 KiB request became 4096
    /// flash programs (a run of > 300 s with no output); `pages_per_block = 2^31` was
    /// accepted and validation then built 32 GiB of per-page-in-block timing tables.
    #[test]
    fn rejects_sub_sector_pages_and_huge_blocks() {
        for bad in [1, 511, 513, 4095, 4100] {
            let mut c = cfg();
            c.page_size_bytes = bad;
            c.partial_read_bytes = None;
            let e = c.validate().unwrap_err();
            assert_eq!(e.field, "page_size_bytes", "{bad}");
            assert!(e.reason.contains("multiple of 512"), "{e}");
        }
        // Non-power-of-two pages made of whole sectors are legal (12 KiB).
        for good in [512, 2048, 12288, 16384] {
            let mut c = cfg();
            c.page_size_bytes = good;
            c.partial_read_bytes = None;
            assert_eq!(c.validate().unwrap().page_size_bytes(), good);
        }
        let mut c = cfg();
        c.cell_type = CellType::Slc;
        c.layers = 1;
        c.pages_per_block = 1 << 31;
        let e = c.validate().unwrap_err();
        assert_eq!(e.field, "pages_per_block");
        assert!(e.reason.contains("65536"), "{e}");
        c.pages_per_block = MAX_PAGES_PER_BLOCK;
        c.blocks_per_plane = 1;
        assert!(c.validate().is_ok());
    }
}
