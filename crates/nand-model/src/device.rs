//! The timed NAND device: resources (channel buses, dies), flash physics, and the
//! single [`Device::issue`] entry point that reserves resources for one operation and
//! returns its exact phase times.
//!
//! See `docs/model.md` ("NAND model") for the equations and rules implemented here.

use crate::addr::{BlockId, ChannelId, DieId, PageAddr, Ppa};
use crate::calendar::BusCalendar;
use crate::config::{DeviceSpec, SuspensionRules};
use crate::geometry::Geometry;
use crate::state::{Blocks, ProgramCheck};
use crate::time::{Nanos, SimTime};

/// Options that do not change timing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeviceOptions {
    /// Keep the caller-supplied 64-bit tag of every programmed page (8 bytes per page
    /// of every block ever programmed, allocated per block on first use). Off by
    /// default so that large devices stay cheap.
    pub store_tags: bool,
}

/// One partial read of a SOML read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SomlPart {
    /// The page (all parts of one SOML read share channel, chip, die and plane).
    pub page: PageAddr,
    /// First byte within the page.
    pub offset_bytes: u32,
    /// Bytes to read (≥ 1).
    pub len_bytes: u32,
}

/// An operation for [`Device::issue`]. Slices with more than one entry make a
/// multi-plane operation: entries must lie on distinct planes of one die, at the same
/// block index and page offset (mbm-ftl §II-A).
#[derive(Clone, Copy, Debug)]
pub enum Command<'a> {
    /// Page read, or multi-plane read, of bytes `[offset_bytes, offset_bytes + len_bytes)`
    /// of each page. Only the requested bytes cross the bus.
    Read {
        /// Pages to read.
        pages: &'a [PageAddr],
        /// First byte within each page.
        offset_bytes: u32,
        /// Bytes per page (≥ 1).
        len_bytes: u32,
    },
    /// Page program, or multi-plane program, each page carrying a tag.
    Program {
        /// Pages to program.
        pages: &'a [PageAddr],
        /// One tag per page (kept only with [`DeviceOptions::store_tags`]).
        tags: &'a [u64],
    },
    /// Block erase, or multi-plane erase; the `page` field is ignored.
    Erase {
        /// Blocks to erase.
        blocks: &'a [PageAddr],
    },
    /// Partial-block erase of PB `pb` (1 = whole block; `2k`, `2k+1` halve PB `k`).
    PartialErase {
        /// The block (its `page` field is ignored).
        block: PageAddr,
        /// PB index, 1 ..= 2^(L+1) − 1.
        pb: u32,
    },
    /// SOML read: up to `max_parts` partial reads on one plane, each from a different
    /// block, with disjoint bit-line slots and distinct block decoders.
    SomlRead {
        /// The partial reads.
        parts: &'a [SomlPart],
    },
    /// Copy-back: read `from[i]` into its plane's page register and program it into
    /// `to[i]` on the same plane, without moving data over the bus. Several pairs make
    /// a multi-plane copy-back (both sides follow the multi-plane rules).
    CopyBack {
        /// Source pages.
        from: &'a [PageAddr],
        /// Destination pages (same planes as `from`).
        to: &'a [PageAddr],
    },
    /// Random data output from the page register (ONFI "Change Read Column", 05h–E0h):
    /// bytes `[offset_bytes, offset_bytes + len_bytes)` of `page`, which the die's page
    /// register still holds because the die's last operation was a one-page
    /// [`Command::Read`] of it that suspended nothing ([`Device::register_holds`]). Bus
    /// time only — a read command's cycles and the transfer — no array time. On a SOML
    /// chip a read senses only the partial-read units it covers, so only those bytes
    /// can be output again; on other chips the whole page was sensed.
    RegisterRead {
        /// The page the register holds.
        page: PageAddr,
        /// First byte within the page.
        offset_bytes: u32,
        /// Bytes to transfer (≥ 1).
        len_bytes: u32,
    },
}

/// A program or erase suspended by a read (mbm-ftl §IV-C).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Suspension {
    /// The die whose program/erase was suspended.
    pub die: DieId,
    /// When the suspended operation stopped executing (for a read that joins an
    /// existing suspension: the instant it would have resumed).
    pub suspended_at: SimTime,
    /// When it resumes executing (after the read and the resume overhead).
    pub resumed_at: SimTime,
    /// Its completion time before this read.
    pub old_done: SimTime,
    /// Its completion time now; the engine must reschedule it.
    pub new_done: SimTime,
}

/// Phase times of one issued operation.
///
/// For reads: `start..bus_end` is the command/address transfer, `array_start..array_end`
/// the sensing, `data_out_start..data_out_end` the transfer of the data out of the page
/// register. For programs: `start..bus_end` is command + data in, then the array phase;
/// `data_out_*` equal `array_end`. For erases: command, then array. For copy-back:
/// `start..bus_end` is the read command, `array_start..array_end` spans the read and the
/// program, and `data_out_*` is the program command sent in between (no data moves).
/// `done` is when the operation's result is available (reads: data out; others: array end).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpTiming {
    /// Start of the first bus phase.
    pub start: SimTime,
    /// End of the first bus phase.
    pub bus_end: SimTime,
    /// Start of the array operation.
    pub array_start: SimTime,
    /// End of the array operation.
    pub array_end: SimTime,
    /// Start of the second bus phase (read data out).
    pub data_out_start: SimTime,
    /// End of the second bus phase.
    pub data_out_end: SimTime,
    /// Completion.
    pub done: SimTime,
    /// A program/erase this read suspended, if any.
    pub suspended: Option<Suspension>,
}

/// State of a flash page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageState {
    /// Erased (or never written): may be programmed in order, may not be read.
    Erased,
    /// Programmed: may be read, may not be programmed until erased.
    Programmed,
}

/// An operation the device refuses: an addressing or flash-physics violation. A
/// correct FTL never causes one; the device state is unchanged when it is returned.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NandError {
    /// The command addresses nothing.
    #[error("empty command")]
    Empty,
    /// An address component is out of range.
    #[error("address out of range: {0:?}")]
    OutOfRange(PageAddr),
    /// A block id beyond the device (untimed operations).
    #[error("block {0:?} out of range")]
    BlockOutOfRange(BlockId),
    /// A multi-plane command breaks the multi-plane rules.
    #[error("invalid multi-plane operation: {0}")]
    MultiPlane(&'static str),
    /// More planes than the die has, or tags/pages count mismatch.
    #[error("{what}: expected {expected}, got {got}")]
    CountMismatch {
        /// What was counted.
        what: &'static str,
        /// Expected count.
        expected: usize,
        /// Given count.
        got: usize,
    },
    /// A byte range outside the page, or empty.
    #[error("byte range {offset}+{len} is empty or exceeds the {page_size}-byte page")]
    BadRange {
        /// First byte.
        offset: u32,
        /// Length.
        len: u32,
        /// Page size.
        page_size: u32,
    },
    /// Program of a page that is not erased.
    #[error("program of a page that is not erased: {0:?}")]
    NotErased(PageAddr),
    /// Program that skips erased pages of its block (or partial block).
    #[error("out-of-order program of {addr:?}: page {expected} of the block must be programmed first")]
    OutOfOrder {
        /// The page the command tried to program.
        addr: PageAddr,
        /// The page that must be programmed next.
        expected: u32,
    },
    /// Read of a page that is erased or was never programmed.
    #[error("read of an erased page: {0:?}")]
    ReadErased(PageAddr),
    /// A feature the device configuration does not enable.
    #[error("{0} is not enabled in this device configuration")]
    NotEnabled(&'static str),
    /// Partial-block index out of range.
    #[error("partial block {pb} out of range 1..={max}")]
    BadPartialBlock {
        /// Given PB index.
        pb: u32,
        /// Largest valid index.
        max: u32,
    },
    /// A SOML read breaks the SOML constraints (soml-read §5.1).
    #[error("invalid SOML read: {0}")]
    Soml(&'static str),
    /// A [`Command::RegisterRead`] of bytes the die's page register does not hold.
    #[error(
        "register read of {0:?}: the page register does not hold those bytes (the die's last operation was not a one-page read of them)"
    )]
    RegisterMiss(PageAddr),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PeKind {
    Program,
    Erase,
    /// Copy-back: never suspended.
    CopyBack,
}

/// The last program/erase reserved on a die.
#[derive(Clone, Copy, Debug)]
struct PeOp {
    kind: PeKind,
    /// When its array work (re)starts executing.
    run_from: u64,
    /// When it completes.
    end: u64,
    /// Suspensions so far.
    suspensions: u32,
    /// While suspended and serving reads: when the last of those reads releases the
    /// die (the resume overhead starts then).
    window_end: Option<u64>,
    /// Its array time as reserved (the default bound on how long one suspension of it
    /// may keep serving reads, `[suspension] max_window`).
    array_ns: u64,
    /// While suspended: the latest instant at which a further read may still start
    /// inside the open suspension (suspend point + the window bound); later reads do
    /// not join it.
    join_until: u64,
    /// For programs: planes written (bit mask), block index in plane and page, so that a
    /// read of the very page being programmed waits for it instead of suspending it.
    planes: u64,
    block_in_plane: u32,
    page: u32,
}

#[derive(Clone, Copy, Debug, Default)]
struct DieState {
    /// When the die can accept a new operation (all reserved work done).
    ready_at: u64,
    /// The last reserved program/erase, if it is the die's last reservation.
    pe: Option<PeOp>,
    busy_ns: u64,
    /// What the page register holds after the die's last reservation: set by a one-page
    /// read that suspended nothing, cleared by every other operation on the die.
    register: Option<Register>,
}

/// Sensed data left in a die's page register ([`Command::RegisterRead`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Register {
    ppa: u64,
    /// Sensed byte range `[lo, hi)`.
    lo: u32,
    hi: u32,
}

#[derive(Clone, Debug, Default)]
struct ChannelState {
    cal: BusCalendar,
    busy_ns: u64,
}

/// Operation counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeviceStats {
    /// Read commands (plain and multi-plane).
    pub reads: u64,
    /// Pages read by them.
    pub pages_read: u64,
    /// Program commands.
    pub programs: u64,
    /// Pages programmed by them.
    pub pages_programmed: u64,
    /// Erase commands.
    pub erases: u64,
    /// Blocks erased by them.
    pub blocks_erased: u64,
    /// Partial-block erases.
    pub partial_erases: u64,
    /// SOML reads.
    pub soml_reads: u64,
    /// Partial reads inside them.
    pub soml_parts: u64,
    /// Copy-back commands.
    pub copybacks: u64,
    /// Register reads ([`Command::RegisterRead`]): data output without sensing.
    pub register_reads: u64,
    /// Program/erase suspensions (reads joining an existing suspension not counted).
    pub suspensions: u64,
}

/// A timed NAND device. See the crate docs for an example.
#[derive(Clone, Debug)]
pub struct Device {
    spec: DeviceSpec,
    channels: Vec<ChannelState>,
    dies: Vec<DieState>,
    blocks: Blocks,
    tags: Option<Vec<Option<Box<[u64]>>>>,
    last_at: u64,
    stats: DeviceStats,
    /// Whether reads record what each die's page register holds
    /// ([`Device::set_register_tracking`]).
    track_register: bool,
    /// Bus time of one whole page (`Timing::transfer` of the page size, a division
    /// under a transfer rate): what most one-page commands move.
    page_transfer_ns: u64,
}

/// What an op does to the die, derived from the validated command.
struct Check {
    die: DieId,
    channel: ChannelId,
    n: u64,
}

/// A page's place, for the one-page commands ([`Device::read_page`]).
struct PageOf {
    check: Check,
    /// Global block index and page within it.
    block: u32,
    page: u32,
    /// The plane's index within its die and the block's within its plane (what the
    /// multi-plane rules and [`PeOp`] compare).
    plane_in_die: u32,
    block_in_plane: u32,
}

impl Device {
    /// A fresh device: every page erased, every resource idle at time 0.
    pub fn new(spec: DeviceSpec, options: DeviceOptions) -> Device {
        let g = spec.geometry();
        Device {
            channels: vec![ChannelState::default(); g.channels() as usize],
            dies: vec![DieState::default(); g.total_dies() as usize],
            blocks: Blocks::with_planes(g.blocks_per_plane(), g.total_planes(), g.pages_per_block()),
            tags: options.store_tags.then(|| vec![None; g.total_blocks() as usize]),
            last_at: 0,
            stats: DeviceStats::default(),
            track_register: false,
            page_transfer_ns: spec.timing().transfer(g.page_size_bytes() as u64).0,
            spec,
        }
    }

    /// `Timing::transfer` of `bytes` (cached for a whole page).
    #[inline]
    fn transfer_ns(&self, bytes: u64) -> u64 {
        if bytes == self.geometry().page_size_bytes() as u64 {
            self.page_transfer_ns
        } else {
            self.spec.timing().transfer(bytes).0
        }
    }

    /// The device description.
    pub fn spec(&self) -> &DeviceSpec {
        &self.spec
    }

    /// The geometry.
    #[inline]
    pub fn geometry(&self) -> &Geometry {
        self.spec.geometry()
    }

    /// Operation counters.
    pub fn stats(&self) -> &DeviceStats {
        &self.stats
    }

    // ----------------------------------------------------------------- queries

    /// When die `die` can accept a new operation (all reserved work finished,
    /// including a suspended program/erase).
    #[inline]
    pub fn die_free_at(&self, die: DieId) -> SimTime {
        SimTime(self.dies[die.idx()].ready_at)
    }

    /// Is die `die` free of reserved work at `at`?
    #[inline]
    pub fn is_die_idle(&self, die: DieId, at: SimTime) -> bool {
        self.dies[die.idx()].ready_at <= at.0
    }

    /// Earliest instant ≥ `at` at which channel `ch`'s bus is not reserved. Exact for
    /// `at` ≥ the last issue time (earlier reservations are pruned).
    #[inline]
    pub fn channel_free_at(&self, ch: ChannelId, at: SimTime) -> SimTime {
        SimTime(self.channels[ch.idx()].cal.free_at(at.0))
    }

    /// Is channel `ch`'s bus free at `at`?
    #[inline]
    pub fn is_channel_idle(&self, ch: ChannelId, at: SimTime) -> bool {
        self.channels[ch.idx()].cal.free_at(at.0) == at.0
    }

    /// Next page of `block` that may be programmed (the lowest, if partial erases left
    /// several regions open), or `None` if the block is full.
    #[inline]
    pub fn write_pointer(&self, block: BlockId) -> Option<u32> {
        self.blocks.next_programmable(block.0)
    }

    /// Number of programmed pages in `block`.
    #[inline]
    pub fn programmed_pages(&self, block: BlockId) -> u32 {
        self.blocks.programmed_pages(block.0)
    }

    /// State of page `ppa`.
    #[inline]
    pub fn page_state(&self, ppa: Ppa) -> PageState {
        let (b, p) = self.split(ppa);
        if self.blocks.is_programmed(b, p) { PageState::Programmed } else { PageState::Erased }
    }

    /// Tag of page `ppa`: `Some` iff tags are stored and the page is programmed.
    #[inline]
    pub fn tag(&self, ppa: Ppa) -> Option<u64> {
        let (b, p) = self.split(ppa);
        if !self.blocks.is_programmed(b, p) {
            return None;
        }
        self.tags.as_ref()?[b as usize].as_ref().map(|t| t[p as usize])
    }

    /// Whole-block erases of `block` (erase commands and erases of PB 1).
    #[inline]
    pub fn block_erase_count(&self, block: BlockId) -> u32 {
        self.blocks.erase_count(block.0)
    }

    /// Erases that reset page `ppa`: its block's whole-block erases plus the partial
    /// erases that covered it (equal to the block count without partial erase).
    #[inline]
    pub fn page_erase_count(&self, ppa: Ppa) -> u32 {
        let (b, p) = self.split(ppa);
        self.blocks.page_erase_count(b, p)
    }

    /// Nanoseconds channel `ch`'s bus has been reserved.
    pub fn channel_busy(&self, ch: ChannelId) -> Nanos {
        Nanos(self.channels[ch.idx()].busy_ns)
    }

    /// Nanoseconds die `die` has been occupied (from the start of an operation's first
    /// bus phase to its completion; suspended time is charged to the suspending read).
    pub fn die_busy(&self, die: DieId) -> Nanos {
        Nanos(self.dies[die.idx()].busy_ns)
    }

    /// Program/erase suspensions so far.
    pub fn suspension_count(&self) -> u64 {
        self.stats.suspensions
    }

    /// Blocks that carry extended partial-erase state (memory diagnostics).
    pub fn partially_erased_blocks(&self) -> usize {
        self.blocks.extended_blocks()
    }

    #[inline]
    fn split(&self, ppa: Ppa) -> (u32, u32) {
        let ppb = self.geometry().pages_per_block() as u64;
        assert!(ppa.0 < self.geometry().total_pages(), "ppa {} out of range", ppa.0);
        ((ppa.0 / ppb) as u32, (ppa.0 % ppb) as u32)
    }

    // ------------------------------------------------------ untimed state ops

    /// Block and page of `ppa`: `split` without its division where the geometry has
    /// shifts (`Geometry::block_of`).
    #[inline]
    fn split_untimed(&self, ppa: Ppa) -> (u32, u32) {
        let g = self.geometry();
        assert!(ppa.0 < g.total_pages(), "ppa {} out of range", ppa.0);
        let b = g.block_of(ppa);
        (b.0, (ppa.0 - g.first_page(b).0) as u32)
    }

    /// Program `ppa` with `tag` without timing (preconditioning); physics still apply.
    #[inline]
    pub fn program_untimed(&mut self, ppa: Ppa, tag: u64) -> Result<(), NandError> {
        let (b, p) = self.split_untimed(ppa);
        // The common case of preconditioning (no tags, a never partially erased block at
        // its write pointer) in one lookup; everything else checks and programs in full.
        if self.tags.is_none() && self.blocks.program_at_wp(b, p) {
            return Ok(());
        }
        self.program_untimed_checked(b, p, tag)
    }

    /// Program pages `first .. first + n` with tag 0 without timing: the same state and
    /// the same first error as [`Self::program_untimed`]`(first + i, 0)` for each `i` in
    /// order, with one check for the whole run in the common case (no tags; the run in one
    /// never partially erased block, from its write pointer). Preconditioning programs
    /// runs of a block in order (GC moves, the fill); this is its fast path.
    #[inline]
    pub fn program_run_untimed(&mut self, first: Ppa, n: u32) -> Result<(), NandError> {
        let (b, p) = self.split_untimed(first);
        if self.tags.is_none() && self.blocks.program_run_at_wp(b, p, n) {
            return Ok(());
        }
        self.program_run_untimed_paged(first, n)
    }

    /// [`Self::program_run_untimed`] page by page (tags stored, a partially erased block,
    /// a run off the write pointer or past the block, errors): out of line, so the common
    /// case inlines small.
    #[inline(never)]
    fn program_run_untimed_paged(&mut self, first: Ppa, n: u32) -> Result<(), NandError> {
        (0..n as u64).try_for_each(|i| self.program_untimed(Ppa(first.0 + i), 0))
    }

    /// [`Self::program_untimed`] with every check (tags stored, partially erased blocks,
    /// errors): out of line, so the common case inlines small.
    #[inline(never)]
    fn program_untimed_checked(&mut self, b: u32, p: u32, tag: u64) -> Result<(), NandError> {
        if p == 0 {
            self.blocks.prepare(b);
        }
        self.check_program_page(b, p)?;
        self.do_program(b, p, tag);
        Ok(())
    }

    /// Erase `block` without timing.
    pub fn erase_untimed(&mut self, block: BlockId) -> Result<(), NandError> {
        if block.0 >= self.geometry().total_blocks() {
            return Err(NandError::BlockOutOfRange(block));
        }
        self.blocks.erase(block.0);
        self.forget_register(block);
        Ok(())
    }

    /// Erase partial block `pb` of `block` without timing.
    pub fn partial_erase_untimed(&mut self, block: BlockId, pb: u32) -> Result<(), NandError> {
        if block.0 >= self.geometry().total_blocks() {
            return Err(NandError::BlockOutOfRange(block));
        }
        let (first, len) = self.pb_range(pb)?;
        self.blocks.erase_range(block.0, first, len);
        self.forget_register(block);
        Ok(())
    }

    /// Pages `[first, first + len)` covered by PB `pb`.
    pub fn pb_range(&self, pb: u32) -> Result<(u32, u32), NandError> {
        let levels = self.spec.partial_erase_levels().ok_or(NandError::NotEnabled("partial-block erase"))?;
        let max = (1u32 << (levels + 1)) - 1;
        if pb == 0 || pb > max {
            return Err(NandError::BadPartialBlock { pb, max });
        }
        let level = 31 - pb.leading_zeros();
        let len = self.geometry().pages_per_block() >> level;
        Ok(((pb - (1 << level)) * len, len))
    }

    // ------------------------------------------------------------- validation

    #[inline]
    fn check_program_page(&self, b: u32, p: u32) -> Result<(), NandError> {
        match self.blocks.check_program(b, p) {
            ProgramCheck::Ok => Ok(()),
            bad => Err(self.program_error(b, p, bad)),
        }
    }

    /// The error of a refused program (out of line: a correct FTL never causes one).
    #[cold]
    #[inline(never)]
    fn program_error(&self, b: u32, p: u32, check: ProgramCheck) -> NandError {
        match check {
            ProgramCheck::Ok => unreachable!("program_error of an accepted program"),
            ProgramCheck::NotErased => NandError::NotErased(self.addr_of(b, p)),
            ProgramCheck::OutOfOrder { expected } => {
                NandError::OutOfOrder { addr: self.addr_of(b, p), expected }
            }
        }
    }

    fn addr_of(&self, b: u32, p: u32) -> PageAddr {
        self.geometry().addr(Ppa(b as u64 * self.geometry().pages_per_block() as u64 + p as u64))
    }

    /// Validate addresses and the multi-plane rules; `with_page` false ignores pages.
    fn check_multi(&self, addrs: &[PageAddr], with_page: bool) -> Result<Check, NandError> {
        let g = self.geometry();
        let first = *addrs.first().ok_or(NandError::Empty)?;
        let norm = |a: PageAddr| if with_page { a } else { PageAddr { page: 0, ..a } };
        if addrs.len() == 1 {
            // The common single-plane case: only the range check applies.
            if !g.contains(norm(first)) {
                return Err(NandError::OutOfRange(first));
            }
            return Ok(Check { die: g.die_id(first), channel: ChannelId(first.channel), n: 1 });
        }
        if addrs.len() > g.planes_per_die() as usize {
            return Err(NandError::CountMismatch {
                what: "planes in a multi-plane operation (at most planes per die)",
                expected: g.planes_per_die() as usize,
                got: addrs.len(),
            });
        }
        let mut planes = 0u64;
        for &a in addrs {
            if !g.contains(norm(a)) {
                return Err(NandError::OutOfRange(a));
            }
            if (a.channel, a.chip, a.die) != (first.channel, first.chip, first.die) {
                return Err(NandError::MultiPlane("all planes must belong to one die"));
            }
            if a.block != first.block {
                return Err(NandError::MultiPlane("all planes must use the same block offset"));
            }
            if with_page && a.page != first.page {
                return Err(NandError::MultiPlane("all planes must use the same page offset"));
            }
            if planes >> a.plane & 1 == 1 {
                return Err(NandError::MultiPlane("each plane may appear once"));
            }
            planes |= 1 << a.plane;
        }
        Ok(Check { die: g.die_id(first), channel: ChannelId(first.channel), n: addrs.len() as u64 })
    }

    /// `Blocks::prepare` for the blocks of `pages` programmed at their page 0, before
    /// the checks load their records. `pages` were range-checked.
    fn prepare_first_pages(&mut self, pages: &[PageAddr]) {
        for &a in pages {
            if a.page == 0 {
                let b = self.geometry().block_id(a).0;
                self.blocks.prepare(b);
            }
        }
    }

    fn check_range(&self, offset: u32, len: u32) -> Result<(), NandError> {
        let page_size = self.geometry().page_size_bytes();
        if len == 0 || offset as u64 + len as u64 > page_size as u64 {
            return Err(NandError::BadRange { offset, len, page_size });
        }
        Ok(())
    }

    fn check_readable(&self, a: PageAddr) -> Result<(), NandError> {
        let g = self.geometry();
        let b = g.block_id(a).0;
        if self.blocks.is_programmed(b, a.page) { Ok(()) } else { Err(NandError::ReadErased(a)) }
    }

    #[inline]
    fn do_program(&mut self, b: u32, p: u32, tag: u64) {
        self.blocks.program(b, p);
        if self.tags.is_some() {
            self.store_tag(b, p, tag);
        }
    }

    /// Keep page `p` of block `b`'s data tag (`--verify`; out of line).
    #[inline(never)]
    fn store_tag(&mut self, b: u32, p: u32, tag: u64) {
        let ppb = self.spec.geometry().pages_per_block() as usize;
        if let Some(tags) = &mut self.tags {
            tags[b as usize].get_or_insert_with(|| vec![0; ppb].into_boxed_slice())[p as usize] = tag;
        }
    }

    // ------------------------------------------------------------------ issue

    /// Issue `cmd` at `at`: validate it, apply its flash-state change, reserve bus and
    /// die time greedily after everything issued before, and return its phase times.
    ///
    /// Issue times must not decrease (a bug otherwise). On error nothing changes.
    pub fn issue(&mut self, at: SimTime, cmd: &Command<'_>) -> Result<OpTiming, NandError> {
        self.issue_after(at, at, cmd)
    }

    /// Like [`Device::issue`], but the operation does not start before `not_before`
    /// (≥ `at`): a GC move whose source and destination are on different dies programs
    /// the destination only once the source's data has been read out. The flash state
    /// changes at `at`, so later operations see the page as programmed, and issue order
    /// (what the FTL's program order relies on) is kept.
    pub fn issue_after(
        &mut self,
        at: SimTime,
        not_before: SimTime,
        cmd: &Command<'_>,
    ) -> Result<OpTiming, NandError> {
        assert!(at.0 >= self.last_at, "issue time went backwards: {} < {}", at.0, self.last_at);
        let floor = at.max(not_before).0;
        match *cmd {
            Command::Read { pages, offset_bytes, len_bytes } => {
                let c = self.check_multi(pages, true)?;
                self.check_range(offset_bytes, len_bytes)?;
                for &a in pages {
                    self.check_readable(a)?;
                }
                let t = self.spec.timing();
                let array = pages.iter().map(|a| t.read_array(a.page).0).max().unwrap_or(0);
                let cmd_ns = c.n * t.t_cmd_read.0 + (c.n - 1) * t.t_dbsy.0;
                let out_ns = t.transfer(c.n * len_bytes as u64).0;
                let own = self.own_program_conflict(c.die, pages);
                self.begin(at);
                self.stats.reads += 1;
                self.stats.pages_read += c.n;
                if !self.track_register {
                    // No register is ever held (`set_register_tracking`): the timing is
                    // built in place.
                    return Ok(self.timed_read(floor, &c, cmd_ns, array, out_ns, own));
                }
                let t = self.timed_read(floor, &c, cmd_ns, array, out_ns, own);
                let sensed = (c.n == 1 && t.suspended.is_none()).then(|| {
                    let ppa = self.geometry().ppa(pages[0]).0;
                    self.sensed(ppa, offset_bytes, len_bytes)
                });
                self.dies[c.die.idx()].register = sensed;
                Ok(t)
            }
            Command::RegisterRead { page, offset_bytes, len_bytes } => {
                let c = self.check_multi(std::slice::from_ref(&page), true)?;
                self.check_range(offset_bytes, len_bytes)?;
                let ppa = self.geometry().ppa(page);
                if !self.register_holds(ppa, offset_bytes, len_bytes) {
                    return Err(NandError::RegisterMiss(page));
                }
                let t = self.spec.timing();
                let (cmd_ns, out_ns) = (t.t_cmd_read.0, t.transfer(len_bytes as u64).0);
                self.begin(at);
                self.stats.register_reads += 1;
                // The register stays as it is: the same bytes may be output again.
                Ok(self.timed_read(floor, &c, cmd_ns, 0, out_ns, false))
            }
            Command::SomlRead { parts } => {
                let rules = self.spec.soml().ok_or(NandError::NotEnabled("SOML read"))?;
                let first = parts.first().ok_or(NandError::Empty)?.page;
                if parts.len() > rules.max_parts as usize {
                    return Err(NandError::CountMismatch {
                        what: "partial reads in a SOML read (at most soml.max_parts)",
                        expected: rules.max_parts as usize,
                        got: parts.len(),
                    });
                }
                let g = self.geometry();
                let gran = g.partial_read_bytes();
                let mut slots = 0u64;
                let mut bytes = 0u64;
                let mut array = 0u64;
                for (i, part) in parts.iter().enumerate() {
                    let a = part.page;
                    if !g.contains(a) {
                        return Err(NandError::OutOfRange(a));
                    }
                    if (a.channel, a.chip, a.die, a.plane)
                        != (first.channel, first.chip, first.die, first.plane)
                    {
                        return Err(NandError::Soml("all partial reads must be on one plane"));
                    }
                    self.check_range(part.offset_bytes, part.len_bytes)?;
                    for other in &parts[..i] {
                        if other.page.block == a.block {
                            return Err(NandError::Soml("two partial reads from one block"));
                        }
                        if other.page.block % rules.decoders == a.block % rules.decoders {
                            return Err(NandError::Soml("two partial reads share a block decoder"));
                        }
                    }
                    let lo = part.offset_bytes / gran;
                    let hi = (part.offset_bytes + part.len_bytes).div_ceil(gran);
                    // Slots ≤ 64 is guaranteed: max_parts ≤ slots, but slots per page may
                    // exceed 64 for tiny granularities; use a saturating mask there.
                    let mask = slot_mask(lo, hi);
                    if slots & mask != 0 {
                        return Err(NandError::Soml("two partial reads share bit-lines (overlapping slots)"));
                    }
                    slots |= mask;
                    self.check_readable(a)?;
                    bytes += part.len_bytes as u64;
                    array = array.max(self.spec.timing().read_array(a.page).0);
                }
                let t = self.spec.timing();
                let c = self.check_multi(std::slice::from_ref(&first), true)?;
                let n = parts.len() as u64;
                let cmd_ns = n * t.t_cmd_read.0;
                let out_ns = t.transfer(bytes).0;
                let own =
                    parts.iter().any(|p| self.own_program_conflict(c.die, std::slice::from_ref(&p.page)));
                self.begin(at);
                self.stats.soml_reads += 1;
                self.stats.soml_parts += n;
                self.dies[c.die.idx()].register = None;
                Ok(self.timed_read(floor, &c, cmd_ns, array, out_ns, own))
            }
            Command::Program { pages, tags } => {
                let c = self.check_multi(pages, true)?;
                if tags.len() != pages.len() {
                    return Err(NandError::CountMismatch {
                        what: "tags (one per programmed page)",
                        expected: pages.len(),
                        got: tags.len(),
                    });
                }
                self.prepare_first_pages(pages);
                let g = self.geometry();
                for &a in pages {
                    self.check_program_page(g.block_id(a).0, a.page)?;
                }
                let t = self.spec.timing();
                let array = pages.iter().map(|a| t.program_array(a.page).0).max().unwrap_or(0);
                let page_bytes = g.page_size_bytes() as u64;
                let bus_ns =
                    c.n * t.t_cmd_program.0 + (c.n - 1) * t.t_dbsy.0 + t.transfer(c.n * page_bytes).0;
                for (&a, &tag) in pages.iter().zip(tags) {
                    let b = self.geometry().block_id(a).0;
                    self.do_program(b, a.page, tag);
                }
                let mut planes = 0u64;
                for a in pages {
                    planes |= 1 << a.plane;
                }
                self.begin(at);
                self.stats.programs += 1;
                self.stats.pages_programmed += c.n;
                self.dies[c.die.idx()].register = None;
                let first = pages[0];
                Ok(self.timed_pe(
                    floor,
                    &c,
                    PeKind::Program,
                    bus_ns,
                    array,
                    (planes, first.block, first.page),
                ))
            }
            Command::Erase { blocks } => {
                let c = self.check_multi(blocks, false)?;
                let t = self.spec.timing();
                let bus_ns = c.n * t.t_cmd_erase.0 + (c.n - 1) * t.t_dbsy.0;
                let array = t.t_bers.0;
                for &a in blocks {
                    let b = self.geometry().block_id(PageAddr { page: 0, ..a }).0;
                    self.blocks.erase(b);
                }
                self.begin(at);
                self.stats.erases += 1;
                self.stats.blocks_erased += c.n;
                self.dies[c.die.idx()].register = None;
                Ok(self.timed_pe(floor, &c, PeKind::Erase, bus_ns, array, (0, 0, 0)))
            }
            Command::PartialErase { block, pb } => {
                let a = PageAddr { page: 0, ..block };
                let c = self.check_multi(std::slice::from_ref(&a), false)?;
                let (first, len) = self.pb_range(pb)?;
                let t = self.spec.timing();
                let array =
                    if pb == 1 { t.t_bers.0 } else { t.t_pbers.expect("validated with partial erase").0 };
                let bus_ns = t.t_cmd_erase.0;
                let b = self.geometry().block_id(a).0;
                self.blocks.erase_range(b, first, len);
                self.begin(at);
                self.stats.partial_erases += 1;
                self.dies[c.die.idx()].register = None;
                Ok(self.timed_pe(floor, &c, PeKind::Erase, bus_ns, array, (0, 0, 0)))
            }
            Command::CopyBack { from, to } => {
                let c = self.check_multi(from, true)?;
                let c_to = self.check_multi(to, true)?;
                if from.len() != to.len() {
                    return Err(NandError::CountMismatch {
                        what: "copy-back destinations (one per source)",
                        expected: from.len(),
                        got: to.len(),
                    });
                }
                if c_to.die != c.die || from.iter().zip(to).any(|(f, t)| f.plane != t.plane) {
                    return Err(NandError::MultiPlane("copy-back must stay within each source's plane"));
                }
                for &a in from {
                    self.check_readable(a)?;
                }
                self.prepare_first_pages(to);
                let g = self.geometry();
                for &a in to {
                    self.check_program_page(g.block_id(a).0, a.page)?;
                }
                let t = self.spec.timing();
                let read = from.iter().map(|a| t.read_array(a.page).0).max().unwrap_or(0);
                let prog = to.iter().map(|a| t.program_array(a.page).0).max().unwrap_or(0);
                let cmd1 = c.n * t.t_cmd_read.0 + (c.n - 1) * t.t_dbsy.0;
                let cmd2 = c.n * t.t_cmd_program.0 + (c.n - 1) * t.t_dbsy.0;
                for (&f, &d) in from.iter().zip(to) {
                    let tag = self.tag(self.geometry().ppa(f)).unwrap_or(0);
                    let b = self.geometry().block_id(d).0;
                    self.do_program(b, d.page, tag);
                }
                self.begin(at);
                self.stats.copybacks += 1;
                self.dies[c.die.idx()].register = None;
                Ok(self.timed_copyback(floor, &c, cmd1, read, cmd2, prog))
            }
        }
    }

    /// [`Device::issue`] of a one-page [`Command::Read`] of bytes
    /// `[offset_bytes, offset_bytes + len_bytes)` of `ppa`: the command a controller
    /// issues most, without building it or decoding the address into its components
    /// (the die, channel and block follow from `ppa` by the geometry's divisions). Same
    /// checks, state change, timing and errors as the general path (a test compares
    /// them). Panics if `ppa` is beyond the device, as [`Geometry::addr`] does.
    pub fn read_page(
        &mut self,
        at: SimTime,
        ppa: Ppa,
        offset_bytes: u32,
        len_bytes: u32,
    ) -> Result<OpTiming, NandError> {
        assert!(at.0 >= self.last_at, "issue time went backwards: {} < {}", at.0, self.last_at);
        let o = self.page_of(ppa);
        self.check_range(offset_bytes, len_bytes)?;
        if !self.blocks.is_programmed(o.block, o.page) {
            return Err(NandError::ReadErased(self.geometry().addr(ppa)));
        }
        let t = self.spec.timing();
        let array = t.read_array(o.page).0;
        let cmd_ns = t.t_cmd_read.0;
        let out_ns = self.transfer_ns(len_bytes as u64);
        let own = self.dies[o.check.die.idx()].pe.is_some_and(|pe| {
            pe.kind == PeKind::Program
                && pe.planes >> o.plane_in_die & 1 == 1
                && o.block_in_plane == pe.block_in_plane
                && o.page == pe.page
        });
        self.begin(at);
        self.stats.reads += 1;
        self.stats.pages_read += 1;
        if !self.track_register {
            return Ok(self.timed_read(at.0, &o.check, cmd_ns, array, out_ns, own));
        }
        let t = self.timed_read(at.0, &o.check, cmd_ns, array, out_ns, own);
        let sensed = t.suspended.is_none().then(|| self.sensed(ppa.0, offset_bytes, len_bytes));
        self.dies[o.check.die.idx()].register = sensed;
        Ok(t)
    }

    /// [`Device::issue`] of a one-page [`Command::Program`] of `ppa` with `tag` (see
    /// [`Device::read_page`]: the same outcome as the general path, without the command).
    pub fn program_page(&mut self, at: SimTime, ppa: Ppa, tag: u64) -> Result<OpTiming, NandError> {
        assert!(at.0 >= self.last_at, "issue time went backwards: {} < {}", at.0, self.last_at);
        let o = self.page_of(ppa);
        if o.page == 0 {
            // Before the check loads the block's record (`Blocks::prepare`).
            self.blocks.prepare(o.block);
        }
        self.check_program_page(o.block, o.page)?;
        let t = self.spec.timing();
        let array = t.program_array(o.page).0;
        let bus_ns = t.t_cmd_program.0 + self.page_transfer_ns;
        self.do_program(o.block, o.page, tag);
        self.begin(at);
        self.stats.programs += 1;
        self.stats.pages_programmed += 1;
        self.dies[o.check.die.idx()].register = None;
        Ok(self.timed_pe(
            at.0,
            &o.check,
            PeKind::Program,
            bus_ns,
            array,
            (1 << o.plane_in_die, o.block_in_plane, o.page),
        ))
    }

    /// Where page `ppa` is: what a one-page command needs of its address.
    #[inline(always)]
    fn page_of(&self, ppa: Ppa) -> PageOf {
        let g = self.geometry();
        assert!(ppa.0 < g.total_pages(), "ppa {} out of range", ppa.0);
        let block = g.block_of(ppa);
        let plane = g.plane_of_ppa(ppa);
        let die = g.die_of_ppa(ppa);
        PageOf {
            check: Check { die, channel: g.channel_of_die(die), n: 1 },
            block: block.0,
            page: (ppa.0 - g.first_page(block).0) as u32,
            plane_in_die: plane.0 - die.0 * g.planes_per_die(),
            block_in_plane: block.0 - plane.0 * g.blocks_per_plane(),
        }
    }

    /// Load the state record of the block holding `ppa`, which a read of it checks (a
    /// speed hint: the value is meaningless). Called for the pages of a request before
    /// the first of them is issued, so that their records' cache misses overlap instead
    /// of each waiting behind the previous page's issue. Out of range: nothing.
    #[inline]
    pub fn warm_block(&self, ppa: Ppa) -> u32 {
        if ppa.0 >= self.geometry().total_pages() {
            return 0;
        }
        self.blocks.warm(self.geometry().block_of(ppa).0)
    }

    /// Start loading the state record of the block holding `ppa` without waiting for it
    /// (a prefetch instruction: a speed hint with no effect). The replay's look-ahead
    /// calls it for the pages of reads about to be admitted, so that
    /// [`Device::warm_block`] and the read's physics check find the record cached. Out
    /// of range: nothing.
    #[inline]
    pub fn prefetch_block(&self, ppa: Ppa) {
        if ppa.0 < self.geometry().total_pages() {
            self.blocks.prefetch(self.geometry().block_of(ppa).0);
        }
    }

    /// Record, on every one-page read, what the die's page register holds, so that
    /// [`Command::RegisterRead`] can serve it again ([`Device::register_holds`]). Off by
    /// default: the bookkeeping costs every read, and only remapping's reads joined in
    /// flight use it; while off, no register holds anything and a register read fails
    /// with [`NandError::RegisterMiss`].
    pub fn set_register_tracking(&mut self, on: bool) {
        self.track_register = on;
        if !on {
            for d in &mut self.dies {
                d.register = None;
            }
        }
    }

    /// Does the page register of `ppa`'s die still hold bytes `[offset, offset + len)` of
    /// `ppa`, so that a [`Command::RegisterRead`] of them would be accepted? True only
    /// when the die's last reserved operation was a one-page [`Command::Read`] of `ppa`
    /// that suspended no program or erase, and (on a SOML chip) sensed those bytes.
    pub fn register_holds(&self, ppa: Ppa, offset: u32, len: u32) -> bool {
        let g = self.geometry();
        if ppa.0 >= g.total_pages() {
            return false;
        }
        let die = g.die_of_ppa(ppa);
        self.dies[die.idx()]
            .register
            .is_some_and(|r| r.ppa == ppa.0 && offset >= r.lo && offset as u64 + len as u64 <= r.hi as u64)
    }

    /// What a one-page read of bytes `[offset, offset + len)` of `ppa` leaves in the page
    /// register: the whole page, or on a SOML chip (partial-page sensing, soml-read §4)
    /// the partial-read units the range covers.
    fn sensed(&self, ppa: u64, offset: u32, len: u32) -> Register {
        let g = self.geometry();
        if self.spec.soml().is_none() {
            return Register { ppa, lo: 0, hi: g.page_size_bytes() };
        }
        let unit = g.partial_read_bytes();
        Register {
            ppa,
            lo: offset / unit * unit,
            hi: ((offset + len).div_ceil(unit) * unit).min(g.page_size_bytes()),
        }
    }

    /// An untimed erase in `block`: its die's page register no longer matches the flash.
    fn forget_register(&mut self, block: BlockId) {
        let g = self.geometry();
        let die = g.die_of_plane(g.plane_of_block(block));
        self.dies[die.idx()].register = None;
    }

    /// Bookkeeping common to every accepted operation.
    #[inline]
    fn begin(&mut self, at: SimTime) {
        self.last_at = at.0;
    }

    /// Does a read of `pages` target a page of the program in flight on `die`?
    fn own_program_conflict(&self, die: DieId, pages: &[PageAddr]) -> bool {
        let Some(pe) = self.dies[die.idx()].pe else { return false };
        pe.kind == PeKind::Program
            && pages
                .iter()
                .any(|a| pe.planes >> a.plane & 1 == 1 && a.block == pe.block_in_plane && a.page == pe.page)
    }

    #[inline]
    fn reserve_bus(&mut self, ch: ChannelId, earliest: u64, dur: u64) -> u64 {
        let c = &mut self.channels[ch.idx()];
        // Reservations ending before the current issue time can never matter again.
        let s = c.cal.book(self.last_at, earliest, dur);
        c.busy_ns += dur;
        s
    }

    /// Reserve a program or erase: bus phase once the die is ready, then the array.
    #[inline]
    fn timed_pe(
        &mut self,
        at: u64,
        c: &Check,
        kind: PeKind,
        bus_ns: u64,
        array_ns: u64,
        target: (u64, u32, u32),
    ) -> OpTiming {
        let die = &self.dies[c.die.idx()];
        let earliest = at.max(die.ready_at);
        let s = self.reserve_bus(c.channel, earliest, bus_ns);
        let bus_end = s + bus_ns;
        let end = bus_end + array_ns;
        let d = &mut self.dies[c.die.idx()];
        d.ready_at = end;
        d.busy_ns += end - s;
        d.pe = Some(PeOp {
            kind,
            run_from: bus_end,
            end,
            suspensions: 0,
            window_end: None,
            array_ns,
            join_until: 0,
            planes: target.0,
            block_in_plane: target.1,
            page: target.2,
        });
        OpTiming {
            start: SimTime(s),
            bus_end: SimTime(bus_end),
            array_start: SimTime(bus_end),
            array_end: SimTime(end),
            data_out_start: SimTime(end),
            data_out_end: SimTime(end),
            done: SimTime(end),
            suspended: None,
        }
    }

    fn timed_copyback(&mut self, at: u64, c: &Check, cmd1: u64, read: u64, cmd2: u64, prog: u64) -> OpTiming {
        let earliest = at.max(self.dies[c.die.idx()].ready_at);
        let s = self.reserve_bus(c.channel, earliest, cmd1);
        let read_end = s + cmd1 + read;
        let s2 = self.reserve_bus(c.channel, read_end, cmd2);
        let array_start = s2 + cmd2;
        let end = array_start + prog;
        let d = &mut self.dies[c.die.idx()];
        d.ready_at = end;
        d.busy_ns += end - s;
        d.pe = Some(PeOp {
            kind: PeKind::CopyBack,
            run_from: array_start,
            end,
            suspensions: 0,
            window_end: None,
            array_ns: end - array_start,
            join_until: 0,
            planes: 0,
            block_in_plane: 0,
            page: 0,
        });
        OpTiming {
            start: SimTime(s),
            bus_end: SimTime(s + cmd1),
            array_start: SimTime(s + cmd1),
            array_end: SimTime(end),
            data_out_start: SimTime(s2),
            data_out_end: SimTime(s2 + cmd2),
            done: SimTime(end),
            suspended: None,
        }
    }

    /// Would a read issued on `die` at `at` preempt the die's program or erase — suspend
    /// it, or join the suspension still open — under the device's `[suspension]` rules?
    /// `false` means the read would wait for the operation to complete (no suspendable
    /// operation, the per-operation cap reached and the open suspension's window
    /// closed, or suspension off). A read of the very page being programmed waits even
    /// when this says `true` (the device checks that when the read is issued).
    #[inline]
    pub fn read_would_preempt(&self, die: DieId, at: SimTime) -> bool {
        self.preempt_plan(at.0, die, false, self.spec.suspension()).is_some()
    }

    /// How a read issued at `at` on `die` preempts its program/erase, if it does:
    /// (suspend point, earliest read start, remaining P/E work, joins the open
    /// suspension).
    #[inline]
    fn preempt_plan(
        &self,
        at: u64,
        die: DieId,
        own: bool,
        rules: Option<SuspensionRules>,
    ) -> Option<(u64, u64, u64, bool)> {
        let d = &self.dies[die.idx()];
        let (Some(rules), Some(pe)) = (rules, d.pe) else { return None };
        let allowed = match pe.kind {
            PeKind::Program => rules.program,
            PeKind::Erase => rules.erase,
            PeKind::CopyBack => false,
        };
        // Only the die's last reservation can be moved, and only before it ends.
        if !allowed || own || pe.end != d.ready_at || at >= pe.end {
            return None;
        }
        match pe.window_end {
            Some(w) if at < pe.run_from && at.max(w) < pe.join_until => {
                // Suspended, not yet resumed, and the suspension's window still open:
                // join the suspension.
                Some((pe.run_from, at.max(w), pe.end - pe.run_from, true))
            }
            _ if pe.suspensions < rules.max_per_op => {
                let t = self.spec.timing();
                let s = at.max(pe.run_from);
                let ts = if pe.kind == PeKind::Program { t.t_suspend_program.0 } else { t.t_suspend_erase.0 };
                Some((s, s + ts, pe.end - s, false))
            }
            _ => None,
        }
    }

    /// Reserve a read (plain, multi-plane or SOML), suspending an in-flight program or
    /// erase on its die when the rules allow.
    #[inline]
    fn timed_read(
        &mut self,
        at: u64,
        c: &Check,
        cmd_ns: u64,
        array_ns: u64,
        out_ns: u64,
        own: bool,
    ) -> OpTiming {
        let t_resume = self.spec.timing().t_resume.0;
        let rules = self.spec.suspension();

        let plan = self.preempt_plan(at, c.die, own, rules);
        let earliest = match plan {
            Some((_, start, _, _)) => start,
            None => at.max(self.dies[c.die.idx()].ready_at),
        };
        let s = self.reserve_bus(c.channel, earliest, cmd_ns);
        let array_start = s + cmd_ns;
        let array_end = array_start + array_ns;
        let out_s = self.reserve_bus(c.channel, array_end, out_ns);
        let r_end = out_s + out_ns;

        let d = &mut self.dies[c.die.idx()];
        let suspended = match plan {
            None => {
                d.busy_ns += r_end - s;
                d.ready_at = r_end;
                d.pe = None;
                None
            }
            Some((susp_at, start, remaining, joined)) => {
                let mut pe = d.pe.expect("planned suspension needs a P/E");
                let old_done = pe.end;
                let resumed_at = r_end + t_resume;
                pe.run_from = resumed_at;
                pe.end = resumed_at + remaining;
                pe.window_end = Some(r_end);
                if joined {
                    d.busy_ns += r_end - start;
                } else {
                    pe.join_until = susp_at + rules.and_then(|r| r.max_window).map_or(pe.array_ns, |w| w.0);
                    pe.suspensions += 1;
                    self.stats.suspensions += 1;
                    d.busy_ns += r_end - susp_at + t_resume;
                }
                d.ready_at = pe.end;
                d.pe = Some(pe);
                Some(Suspension {
                    die: c.die,
                    suspended_at: SimTime(susp_at),
                    resumed_at: SimTime(resumed_at),
                    old_done: SimTime(old_done),
                    new_done: SimTime(pe.end),
                })
            }
        };
        OpTiming {
            start: SimTime(s),
            bus_end: SimTime(array_start),
            array_start: SimTime(array_start),
            array_end: SimTime(array_end),
            data_out_start: SimTime(out_s),
            data_out_end: SimTime(r_end),
            done: SimTime(r_end),
            suspended,
        }
    }
}

/// Bit mask of partial-read slots `lo..hi` (slots ≥ 64 fold onto bit 63, which can
/// only make the overlap check stricter for absurdly fine granularities).
#[inline]
fn slot_mask(lo: u32, hi: u32) -> u64 {
    let lo = lo.min(63);
    let hi = hi.min(64);
    if hi <= lo {
        return 1 << lo;
    }
    let width = hi - lo;
    let ones = if width >= 64 { u64::MAX } else { (1u64 << width) - 1 };
    ones << lo
}
