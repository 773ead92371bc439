//! Model-based conformance harness for [`Ftl`] implementations (cargo feature `testing`).
//!
//! The harness drives an FTL the way the engine does — host writes (static or dynamic
//! placement), reads, trims, GC jobs run to completion whenever [`Ftl::needs_gc`] holds
//! and single background-GC steps interleaved with host writes — and keeps its own
//! [`Model`]: a `BTreeMap<Lpn, Version>` reference of what the host wrote, plus a shadow
//! of the flash built **only from the pages the FTL reported** (write results and GC
//! steps). After every operation and every GC step it checks ([`check_invariants`]):
//!
//! * every LPN the host wrote (and did not trim) is mapped, to the page the model saw it
//!   last written or moved to, which holds its latest version; unmapped LPNs are unmapped;
//! * no physical page is mapped twice, and the reverse map ([`Ftl::page_lpn`]) says
//!   exactly which LPN each valid page holds;
//! * per block: programmed and valid page counts and erase counts match the shadow;
//! * per plane: free + valid + invalid = pages per plane, each matching the shadow, and
//!   [`Ftl::free_blocks`] does not exceed the fully erased blocks;
//! * pages are programmed only when erased, in order within their block; GC moves copy
//!   the current copy of an LPN; erases never destroy a current copy; copyback stays in
//!   its plane; counters ([`Ftl::stats`]) match what was observed;
//! * with static placement and nothing placed dynamically, a write is never refused after
//!   GC ran, and a refusal always comes with `needs_gc` on the plane it names;
//! * the write protocol: writes honour [`Ftl::write_constraint`] (the page returned lies
//!   on the plane passed, or under [`WriteConstraint::Die`] on its die); [`Ftl::can_write`]
//!   agrees with every `write`; a `Some` from [`Ftl::next_write_addr`] is exactly the page
//!   the write gets (and, with [`ConformanceConfig::exact_write_addr`], it is `Some`
//!   whenever the write succeeds); a refused write is **parked and retried** after GC on
//!   the plane the error names, as the engine does; [`Ftl::write_group`] is all or
//!   nothing (a refused group leaves the FTL exactly as the model has it); steps flagged
//!   `batch_with_next` are followed by a next step of their job they can be batched with
//!   (an erase by an erase of the same block index on another plane of the die) unless a
//!   host write or trim came between; translation reads name
//!   programmed pages of the device.
//! * under replication ([`Ftl::replica`]) the harness writes and trims each host page's
//!   copy with it, as the engine does; every copy is a distinct page beyond
//!   [`Ftl::host_pages`], statically placed on another chip than its host page, and
//!   (with nothing placed dynamically) mapped on another chip after every operation and
//!   GC step.
//!
//! Entry points: [`run_conformance`] / [`check_conformance`] (proptest, shrinking to a
//! minimal operation sequence), [`run_bytes`] and [`run_more_ftl_bytes`] (for cargo-fuzz), [`Harness`] (step by step).
//! `docs/ftl.md` explains how to point them at a new FTL.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use lamina_nand_model::{BlockId, PlaneId, Ppa};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner};

use crate::api::{Ftl, FtlError, FtlStats, GcStep, Lpn, PageRange, WriteConstraint};

mod more;
pub use more::{MORE_FTL_CONFIG_BYTES, MoreFtl, run_more_ftl_bytes};

/// Inside `impl Ftl for W` where `W.0` is an [`Ftl`]: forward the trait's required
/// methods and the write protocol's queries to `self.0`, leaving every other provided
/// method at its default. Tests use such wrappers to compare an FTL's own fast path with
/// the default behaviour (a page-by-page fill, the default `write_group`).
#[macro_export]
macro_rules! forward_ftl_required {
    () => {
        $crate::forward_ftl_required! { @ref
            geometry(&self) -> &lamina_nand_model::Geometry;
            logical_pages(&self) -> u64;
            lookup(&self, lpn: $crate::Lpn) -> Option<lamina_nand_model::Ppa>;
            static_plane(&self, lpn: $crate::Lpn) -> lamina_nand_model::PlaneId;
            needs_gc(&self, plane: lamina_nand_model::PlaneId) -> bool;
            gc_in_progress(&self, plane: lamina_nand_model::PlaneId) -> bool;
            free_blocks(&self, plane: lamina_nand_model::PlaneId) -> u32;
            page_counts(&self, plane: lamina_nand_model::PlaneId) -> $crate::PageCounts;
            page_lpn(&self, ppa: lamina_nand_model::Ppa) -> Option<$crate::Lpn>;
            block_info(&self, block: lamina_nand_model::BlockId) -> $crate::BlockInfo;
            stats(&self) -> $crate::FtlStats;
            write_constraint(&self, lpn: $crate::Lpn) -> $crate::WriteConstraint;
            next_write_addr(&self, plane: lamina_nand_model::PlaneId) -> Option<(lamina_nand_model::BlockId, u32)>;
            can_write(&self, plane: lamina_nand_model::PlaneId) -> bool;
            write_room(&self, plane: lamina_nand_model::PlaneId) -> u64;
        }
        fn write(
            &mut self,
            lpn: $crate::Lpn,
            plane: lamina_nand_model::PlaneId,
        ) -> Result<lamina_nand_model::Ppa, $crate::FtlError> {
            self.0.write(lpn, plane)
        }
        fn trim(&mut self, lpn: $crate::Lpn) -> Option<lamina_nand_model::Ppa> {
            self.0.trim(lpn)
        }
        fn gc_begin(&mut self, plane: lamina_nand_model::PlaneId) -> Option<$crate::GcJob> {
            self.0.gc_begin(plane)
        }
        fn gc_step(&mut self, plane: lamina_nand_model::PlaneId) -> $crate::GcStep {
            self.0.gc_step(plane)
        }
    };
    (@ref $($name:ident(&self $(, $a:ident: $t:ty)*) -> $r:ty;)*) => {
        $(fn $name(&self $(, $a: $t)*) -> $r { self.0.$name($($a),*) })*
    };
}

/// Version of an LPN's data: the harness numbers every accepted host write.
pub type Version = u64;

/// One harness operation. LPN and plane operands are reduced modulo the FTL's logical
/// pages and planes, so any value is valid (convenient for fuzzers and shrinking).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Host write of an LPN to its static plane.
    Write(u64),
    /// Host write of an LPN to a chosen plane (dynamic allocation).
    WriteTo(u64, u32),
    /// Host read: the LPN must resolve to its latest version.
    Read(u64),
    /// Host trim.
    Trim(u64),
    /// One background-GC step on a plane: the next step of the job in progress, or start
    /// a job if the FTL has something to reclaim.
    GcStep(u32),
    /// A write group ([`Ftl::write_group`]) of `count` LPNs from `lpn` on, each to its
    /// static plane: consecutive LPNs, or with `same_plane` LPNs one plane count apart
    /// (so that, under static striping, all of them target one plane).
    WriteGroup {
        /// First LPN.
        lpn: u64,
        /// Writes in the group.
        count: u8,
        /// Stride of one plane count instead of 1.
        same_plane: bool,
    },
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Op::Write(l) => write!(f, "Write({l})"),
            Op::WriteTo(l, p) => write!(f, "WriteTo({l}, plane {p})"),
            Op::Read(l) => write!(f, "Read({l})"),
            Op::Trim(l) => write!(f, "Trim({l})"),
            Op::GcStep(p) => write!(f, "GcStep(plane {p})"),
            Op::WriteGroup { lpn, count, same_plane } => {
                write!(f, "WriteGroup({lpn}, count {count}{})", if *same_plane { ", same plane" } else { "" })
            }
        }
    }
}

/// A broken conformance rule, described for humans.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Violation(pub String);

macro_rules! ensure {
    ($cond:expr, $($fmt:tt)+) => {
        if !$cond {
            return Err(Violation(format!($($fmt)+)));
        }
    };
}

/// A failing operation sequence (minimal after shrinking) and what went wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConformanceFailure {
    /// The operations, applied in order to a fresh FTL.
    pub ops: Vec<Op>,
    /// The violation (or panic message) the last operation caused.
    pub message: String,
}

impl fmt::Display for ConformanceFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "FTL conformance failure after {} operations: {}", self.ops.len(), self.message)?;
        writeln!(f, "operation sequence (apply to a fresh FTL):")?;
        for (i, op) in self.ops.iter().enumerate() {
            writeln!(f, "  #{i}: {op}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ConformanceFailure {}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shadow {
    Erased,
    Programmed { lpn: Lpn, version: Version },
}

/// The harness's reference: what the host wrote, and a shadow of the flash built from the
/// pages the FTL reported.
#[derive(Clone, Debug)]
pub struct Model {
    logical_pages: u64,
    ppb: u32,
    blocks_per_plane: u32,
    planes: u32,
    planes_per_die: u32,
    /// Latest version of every LPN the host wrote and did not trim.
    reference: BTreeMap<Lpn, Version>,
    /// Where the current copy of each LPN is, as reported by the FTL.
    location: Vec<Option<Ppa>>,
    /// FTL-internal pages (LPN ≥ logical pages: translation pages of the cached
    /// mapping), written by [`GcStep::Program`] and moved by [`GcStep::Move`]: where each
    /// one's current copy is, and its version.
    internal: BTreeMap<Lpn, (Ppa, Version)>,
    pages: Vec<Shadow>,
    erase_counts: Vec<u32>,
    /// `(block, page)`: first pages of partially erased ranges (programmable in order).
    range_starts: BTreeSet<(u32, u32)>,
    next_version: Version,
    /// What the FTL's counters should say.
    expected: FtlStats,
    /// A real device mirroring every program and erase ([`Harness::with_device`]): its
    /// physics (erase before program, in-order programming inside erased ranges, partial
    /// erase of tree PBs only) must accept each one, and a move must read the version the
    /// model expects (stored as the page's tag).
    device: Option<lamina_nand_model::Device>,
}

/// Largest device the harness shadows (it checks every page after every step).
pub const MAX_HARNESS_PAGES: u64 = 1 << 22;

impl Model {
    /// An empty model (all pages erased, nothing written) for `ftl`'s geometry.
    pub fn new(ftl: &dyn Ftl) -> Model {
        let g = ftl.geometry();
        let total = g.total_pages();
        assert!(
            total <= MAX_HARNESS_PAGES,
            "the conformance harness is for small geometries ({total} pages)"
        );
        let logical = ftl.logical_pages();
        assert!(logical <= total, "more logical than physical pages");
        Model {
            logical_pages: logical,
            ppb: g.pages_per_block(),
            blocks_per_plane: g.blocks_per_plane(),
            planes: g.total_planes(),
            planes_per_die: g.planes_per_die(),
            reference: BTreeMap::new(),
            location: vec![None; logical as usize],
            internal: BTreeMap::new(),
            pages: vec![Shadow::Erased; total as usize],
            erase_counts: vec![0; g.total_blocks() as usize],
            range_starts: BTreeSet::new(),
            next_version: 0,
            expected: FtlStats::default(),
            device: None,
        }
    }

    /// The reference map: latest version of every mapped LPN.
    pub fn reference(&self) -> &BTreeMap<Lpn, Version> {
        &self.reference
    }

    /// Where the model expects the current copy of `lpn`.
    pub fn location(&self, lpn: Lpn) -> Option<Ppa> {
        self.location[lpn.0 as usize]
    }

    fn block_of(&self, ppa: Ppa) -> u32 {
        (ppa.0 / self.ppb as u64) as u32
    }

    fn plane_of(&self, ppa: Ppa) -> u32 {
        self.block_of(ppa) / self.blocks_per_plane
    }

    /// Whether `next` may be issued in one command with `prev`, which was flagged
    /// `batch_with_next`.
    fn batchable(&self, prev: GcStep, next: GcStep) -> Result<(), Violation> {
        match (prev, next) {
            (GcStep::Move { .. }, GcStep::Move { .. }) => Ok(()),
            (GcStep::Erase { block: a, .. }, GcStep::Erase { block: b, .. }) => {
                let (pa, pb) = (a.0 / self.blocks_per_plane, b.0 / self.blocks_per_plane);
                ensure!(
                    pa != pb
                        && pa / self.planes_per_die == pb / self.planes_per_die
                        && a.0 % self.blocks_per_plane == b.0 % self.blocks_per_plane,
                    "erases of blocks {} and {} are batched but are not the same block index on \
                     two planes of one die",
                    a.0,
                    b.0
                );
                Ok(())
            }
            _ => Err(Violation(format!("step {prev:?} is batched with the next step, but that is {next:?}"))),
        }
    }

    /// Record a program of `ppa` with `(lpn, version)`, checking erase-before-program and
    /// in-order programming.
    fn program(&mut self, ppa: Ppa, lpn: Lpn, version: Version, what: &str) -> Result<(), Violation> {
        ensure!(ppa.0 < self.pages.len() as u64, "{what}: page {} is outside the device", ppa.0);
        let i = ppa.0 as usize;
        ensure!(
            self.pages[i] == Shadow::Erased,
            "{what}: page {} is programmed twice without an erase",
            ppa.0
        );
        let block = self.block_of(ppa);
        let off = (ppa.0 % self.ppb as u64) as u32;
        let in_order = off == 0
            || matches!(self.pages[i - 1], Shadow::Programmed { .. })
            || self.range_starts.contains(&(block, off));
        ensure!(in_order, "{what}: page {off} of block {block} programmed before page {}", off - 1);
        if let Some(dev) = self.device.as_mut() {
            dev.program_untimed(ppa, version).map_err(|e| {
                Violation(format!("{what}: the device refuses the program of page {}: {e}", ppa.0))
            })?;
        }
        self.pages[i] = Shadow::Programmed { lpn, version };
        if lpn.0 < self.logical_pages {
            self.location[lpn.0 as usize] = Some(ppa);
        } else {
            self.internal.insert(lpn, (ppa, version));
        }
        Ok(())
    }

    /// Mirror an erase of `block` on the device, if there is one: a partial erase of
    /// `range`, or a whole-block erase.
    fn device_erase(&mut self, block: u32, range: Option<PageRange>, what: &str) -> Result<(), Violation> {
        let Some(dev) = self.device.as_mut() else { return Ok(()) };
        let result = if let Some(range) = range {
            // The PB index of the range: level = log2(ppb / len), PB = 2^level + first / len.
            let len = range.page_count;
            let parts = self.ppb / len.max(1);
            let level = parts.trailing_zeros();
            ensure!(
                len > 0 && parts.is_power_of_two() && self.ppb == len * parts && range.first_page % len == 0,
                "{what}: the range is not a partial block of the device's tree"
            );
            dev.partial_erase_untimed(BlockId(block), (1 << level) + range.first_page / len)
        } else {
            dev.erase_untimed(BlockId(block))
        };
        result.map_err(|e| Violation(format!("{what}: the device refuses: {e}")))
    }

    fn erase_pages(&mut self, block: u32, range: PageRange, what: &str) -> Result<(), Violation> {
        for off in range.first_page..range.first_page + range.page_count {
            let ppa = Ppa(block as u64 * self.ppb as u64 + off as u64);
            if let Shadow::Programmed { lpn, .. } = self.pages[ppa.0 as usize] {
                let current = match self.internal.get(&lpn) {
                    Some(&(at, _)) => Some(at),
                    None => self.location[lpn.0 as usize],
                };
                ensure!(
                    current != Some(ppa),
                    "{what}: erases page {off} of block {block}, the current copy of {lpn}"
                );
            }
            self.pages[ppa.0 as usize] = Shadow::Erased;
        }
        Ok(())
    }

    /// Apply one GC step reported by the FTL.
    fn apply_step(&mut self, step: GcStep) -> Result<(), Violation> {
        match step {
            GcStep::Move { lpn, from, to, .. } if lpn.0 >= self.logical_pages => {
                let what = format!("move of internal page {lpn} from page {} to {}", from.0, to.0);
                let Some(&(at, version)) = self.internal.get(&lpn) else {
                    return Err(Violation(format!("{what}: the page was never written")));
                };
                ensure!(at == from, "{what}: its current copy is at {}, not at the source", at.0);
                self.program(to, lpn, version, &what)?;
            }
            GcStep::Program { lpn, to } => {
                let what = format!("program of internal page {lpn} to page {}", to.0);
                ensure!(lpn.0 >= self.logical_pages, "{what}: a host LPN (host data is written or moved)");
                ensure!(!self.internal.contains_key(&lpn), "{what}: it has a copy to read (must be a move)");
                let version = self.next_version;
                self.next_version += 1;
                self.program(to, lpn, version, &what)?;
            }
            GcStep::Move { lpn, from, to, copyback, .. } => {
                let what = format!("GC move of {lpn} from page {} to {}", from.0, to.0);
                ensure!(lpn.0 < self.logical_pages, "{what}: LPN out of range");
                let Some(&version) = self.reference.get(&lpn) else {
                    return Err(Violation(format!(
                        "{what}: the LPN is not mapped (never written or trimmed)"
                    )));
                };
                ensure!(
                    self.location[lpn.0 as usize] == Some(from),
                    "{what}: the current copy is at {:?}, not at the source",
                    self.location[lpn.0 as usize]
                );
                ensure!(
                    !copyback || self.plane_of(from) == self.plane_of(to),
                    "{what}: copyback across planes {} → {}",
                    self.plane_of(from),
                    self.plane_of(to)
                );
                if let Some(dev) = self.device.as_ref() {
                    let tag = dev.tag(from);
                    ensure!(
                        tag == Some(version),
                        "{what}: the device's page holds {tag:?}, not version {version}"
                    );
                }
                self.program(to, lpn, version, &what)?;
                self.expected.gc_moves += 1;
                self.expected.gc_copybacks += copyback as u64;
            }
            GcStep::Erase { block, .. } => {
                let what = format!("GC erase of block {}", block.0);
                ensure!((block.0 as usize) < self.erase_counts.len(), "{what}: block out of range");
                let whole = PageRange { first_page: 0, page_count: self.ppb };
                self.erase_pages(block.0, whole, &what)?;
                self.device_erase(block.0, None, &what)?;
                self.range_starts.retain(|&(b, _)| b != block.0);
                self.erase_counts[block.idx()] += 1;
                self.expected.erases += 1;
            }
            GcStep::PartialErase { block, range } => {
                let what = format!("GC partial erase of block {} pages {:?}", block.0, range);
                ensure!((block.0 as usize) < self.erase_counts.len(), "{what}: block out of range");
                ensure!(
                    range.page_count >= 1
                        && range.first_page as u64 + range.page_count as u64 <= self.ppb as u64,
                    "{what}: range outside the block"
                );
                self.erase_pages(block.0, range, &what)?;
                self.device_erase(block.0, Some(range), &what)?;
                self.range_starts.insert((block.0, range.first_page));
                self.expected.partial_erases += 1;
            }
            GcStep::SpareRead { ppa } => {
                ensure!(
                    (ppa.0 as usize) < self.pages.len()
                        && matches!(self.pages[ppa.0 as usize], Shadow::Programmed { .. }),
                    "GC spare-area read of page {}: the page is not programmed",
                    ppa.0
                );
            }
            GcStep::Done => {}
        }
        Ok(())
    }
}

/// Record that page `ppa` holds the current copy (`version`) of `lpn`, checking that the
/// shadow agrees and that no other LPN claimed the page.
fn claim(
    model: &Model,
    mapped: &mut [Option<Lpn>],
    lpn: Lpn,
    version: Version,
    ppa: Ppa,
) -> Result<(), Violation> {
    ensure!(
        model.pages[ppa.0 as usize] == Shadow::Programmed { lpn, version },
        "{lpn} resolves to page {} which does not hold version {version} (harness bug)",
        ppa.0
    );
    let slot = &mut mapped[ppa.0 as usize];
    ensure!(slot.is_none(), "page {} is mapped by both {} and {lpn}", ppa.0, slot.unwrap());
    *slot = Some(lpn);
    Ok(())
}

/// Replication (`ftl.replication`, [`Ftl::replica`]): every host page's copy is a logical
/// page of its own beyond [`Ftl::host_pages`], distinct per host page; the static
/// placements of the two lie on different chips; and wherever both are mapped (GC moved
/// them or not) they lie on different chips, so one chip's loss or load never takes both
/// (`locations`: only while nothing was placed dynamically, which replication excludes).
fn check_replicas(ftl: &dyn Ftl, model: &Model, locations: bool) -> Result<(), Violation> {
    let host = ftl.host_pages();
    if ftl.replica(Lpn(0)).is_none() {
        return Ok(());
    }
    let mut taken = vec![false; model.logical_pages as usize];
    let g = ftl.geometry();
    let chip_of_plane = |p: PlaneId| g.chip_of_die(g.die_of_plane(p));
    let chip_of = |ppa: Ppa| chip_of_plane(g.plane_of_block(g.block_of(ppa)));
    for l in 0..host {
        let lpn = Lpn(l);
        let r =
            ftl.replica(lpn).ok_or_else(|| Violation(format!("{lpn} < host pages {host} has no replica")))?;
        ensure!(
            r.0 >= host && r.0 < model.logical_pages && ftl.replica(r).is_none(),
            "replica of {lpn} is {r}, not a page of the replica space {host}..{}",
            model.logical_pages
        );
        ensure!(!std::mem::replace(&mut taken[r.0 as usize], true), "{r} is the replica of two host pages");
        let (a, b) = (ftl.static_plane(lpn), ftl.static_plane(r));
        ensure!(chip_of_plane(a) != chip_of_plane(b), "{lpn} and its replica {r} are placed on one chip");
        if !locations {
            continue;
        }
        if let (Some(x), Some(y)) = (model.location[l as usize], model.location[r.0 as usize]) {
            ensure!(chip_of(x) != chip_of(y), "{lpn} at {x:?} and its replica {r} at {y:?} lie on one chip");
        }
    }
    Ok(())
}

/// Check every invariant of `ftl` against `model` (see the [module docs](self)).
pub fn check_invariants(ftl: &dyn Ftl, model: &Model) -> Result<(), Violation> {
    let g = ftl.geometry();
    ensure!(g.total_pages() == model.pages.len() as u64, "geometry changed");
    ensure!(ftl.logical_pages() == model.logical_pages, "logical capacity changed");
    let mut mapped = vec![None::<Lpn>; model.pages.len()];
    for l in 0..model.logical_pages {
        let lpn = Lpn(l);
        let got = ftl.lookup(lpn);
        let want = model.location[l as usize];
        match model.reference.get(&lpn) {
            None => ensure!(got.is_none(), "{lpn} was never written or was trimmed but maps to {got:?}"),
            Some(&version) => {
                ensure!(
                    got == want,
                    "{lpn} maps to {got:?}; its latest version {version} was written to {want:?}"
                );
                let ppa = want.expect("model maps every written LPN");
                claim(model, &mut mapped, lpn, version, ppa)?;
            }
        }
    }
    // FTL-internal pages (translation pages) hold their current copy like host LPNs.
    for (&lpn, &(ppa, version)) in &model.internal {
        claim(model, &mut mapped, lpn, version, ppa)?;
    }
    let ppb = model.ppb as usize;
    let mut erased_blocks = vec![0u32; model.planes as usize];
    let mut plane_counts = vec![(0u64, 0u64, 0u64); model.planes as usize];
    for b in 0..model.erase_counts.len() {
        let (mut programmed, mut valid) = (0u32, 0u32);
        for off in 0..ppb {
            let i = b * ppb + off;
            let ppa = Ppa(i as u64);
            let owner = ftl.page_lpn(ppa);
            ensure!(
                owner == mapped[i],
                "reverse map of page {i} (block {b}) says {owner:?}, but the current copy there is {:?}",
                mapped[i]
            );
            if matches!(model.pages[i], Shadow::Programmed { .. }) {
                programmed += 1;
            }
            valid += mapped[i].is_some() as u32;
        }
        let info = ftl.block_info(BlockId(b as u32));
        ensure!(
            info.programmed == programmed,
            "block {b}: FTL counts {} programmed pages, {programmed} were programmed",
            info.programmed
        );
        ensure!(
            info.valid == valid,
            "block {b}: FTL counts {} valid pages, {valid} hold current data",
            info.valid
        );
        ensure!(
            info.erase_count == model.erase_counts[b],
            "block {b}: FTL counts {} erases, {} were issued",
            info.erase_count,
            model.erase_counts[b]
        );
        let plane = b / model.blocks_per_plane as usize;
        erased_blocks[plane] += (programmed == 0) as u32;
        let c = &mut plane_counts[plane];
        c.0 += (ppb as u32 - programmed) as u64;
        c.1 += valid as u64;
        c.2 += (programmed - valid) as u64;
    }
    let plane_pages = model.blocks_per_plane as u64 * model.ppb as u64;
    for p in 0..model.planes {
        let counts = ftl.page_counts(PlaneId(p));
        let (free, valid, invalid) = plane_counts[p as usize];
        ensure!(
            counts.free + counts.valid + counts.invalid == plane_pages,
            "plane {p}: free + valid + invalid = {} + {} + {} ≠ {plane_pages} pages",
            counts.free,
            counts.valid,
            counts.invalid
        );
        ensure!(
            (counts.free, counts.valid, counts.invalid) == (free, valid, invalid),
            "plane {p}: FTL counts free/valid/invalid {}/{}/{}, the flash holds {free}/{valid}/{invalid}",
            counts.free,
            counts.valid,
            counts.invalid
        );
        let fb = ftl.free_blocks(PlaneId(p));
        ensure!(
            fb <= erased_blocks[p as usize],
            "plane {p}: FTL reports {fb} free blocks but only {} are fully erased",
            erased_blocks[p as usize]
        );
    }
    let s = ftl.stats();
    let e = &model.expected;
    ensure!(
        (s.host_writes, s.trims, s.gc_moves, s.gc_copybacks, s.erases, s.partial_erases)
            == (e.host_writes, e.trims, e.gc_moves, e.gc_copybacks, e.erases, e.partial_erases),
        "counters {s:?} disagree with the observed operations {e:?}"
    );
    Ok(())
}

/// Drives one FTL through [`Op`]s, checking invariants after every operation and GC step.
pub struct Harness<F: Ftl> {
    ftl: F,
    model: Model,
    /// A dynamic write was accepted: a plane may now hold more than its static share, so
    /// refusals after GC are no longer violations.
    dynamic_used: bool,
    /// Require `next_write_addr` to be `Some` whenever a write succeeds.
    exact_write_addr: bool,
    /// The last GC step and its job's plane, if the step was flagged `batch_with_next`
    /// and nothing but steps of other jobs happened since.
    batched: Option<(PlaneId, GcStep)>,
    /// Scratch for translation reads.
    scratch: Vec<Ppa>,
    /// If the FTL keeps a move log ([`Ftl::log_moves`]): every logical page's lookup as
    /// of the last check, to catch a change the log did not report.
    seen: Option<Vec<Option<Ppa>>>,
    /// Scratch for [`Ftl::take_moves`].
    moved: Vec<Lpn>,
}

impl<F: Ftl> Harness<F> {
    /// Wrap a fresh FTL (nothing written yet). If the FTL can keep a move log
    /// ([`Ftl::log_moves`]), the harness turns it on and checks after every operation
    /// that it named every page whose lookup changed.
    pub fn new(mut ftl: F) -> Harness<F> {
        let model = Model::new(&ftl);
        let seen = ftl.log_moves().then(|| model.location.clone());
        Harness {
            ftl,
            model,
            dynamic_used: false,
            exact_write_addr: false,
            batched: None,
            scratch: Vec::new(),
            seen,
            moved: Vec::new(),
        }
    }

    /// Also require [`Ftl::next_write_addr`] to answer `Some` before every write that
    /// succeeds (FTLs that always know, like [`crate::PageFtl`]).
    pub fn with_exact_write_addr(mut self, exact: bool) -> Harness<F> {
        self.exact_write_addr = exact;
        self
    }

    /// Mirror every program and erase on `device` (fresh, tags stored, the FTL's
    /// geometry), whose physics must accept each one ([`Model`]).
    pub fn with_device(mut self, device: lamina_nand_model::Device) -> Harness<F> {
        assert_eq!(device.geometry(), self.ftl.geometry(), "the device's geometry is not the FTL's");
        self.model.device = Some(device);
        self
    }

    /// The FTL under test.
    pub fn ftl(&self) -> &F {
        &self.ftl
    }

    /// The model.
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// With a move log: every page whose lookup changed since the last call must be in
    /// what [`Ftl::take_moves`] hands out (unless it reports an overflow). Run after
    /// [`Harness::check`], which holds every lookup equal to the model's location, so
    /// the model's locations stand for the lookups.
    fn check_moves(&mut self) -> Result<(), Violation> {
        let Some(seen) = self.seen.as_mut() else { return Ok(()) };
        self.moved.clear();
        let complete = self.ftl.take_moves(&mut self.moved);
        self.moved.sort_unstable();
        for (l, (before, &now)) in seen.iter_mut().zip(&self.model.location).enumerate() {
            let lpn = Lpn(l as u64);
            if now != *before {
                ensure!(
                    !complete || self.moved.binary_search(&lpn).is_ok(),
                    "lookup({lpn}) changed from {before:?} to {now:?}, but the move log did not name it"
                );
                *before = now;
            }
        }
        Ok(())
    }

    /// Check all invariants now.
    pub fn check(&self) -> Result<(), Violation> {
        check_invariants(&self.ftl, &self.model)?;
        check_replicas(&self.ftl, &self.model, !self.dynamic_used)
    }

    fn planes(&self) -> u32 {
        self.model.planes
    }

    /// One GC step on `plane`, applied to the model and checked.
    fn step(&mut self, plane: PlaneId) -> Result<bool, Violation> {
        let step = self.ftl.gc_step(plane);
        // A flag promises the job's own next step (what the engine takes with it).
        if let Some((p, prev)) = self.batched.filter(|&(p, _)| p == plane) {
            self.batched = None;
            self.model.batchable(prev, step).map_err(|v| Violation(format!("plane {}: {}", p.0, v.0)))?;
        }
        if let GcStep::Move { batch_with_next: true, .. } | GcStep::Erase { batch_with_next: true, .. } = step
        {
            self.batched = Some((plane, step));
        }
        self.model
            .apply_step(step)
            .map_err(|v| Violation(format!("GC step {step:?} on plane {}: {}", plane.0, v.0)))?;
        self.check()
            .map_err(|v| Violation(format!("after GC step {step:?} on plane {}: {}", plane.0, v.0)))?;
        if step == GcStep::Done {
            ensure!(!self.ftl.gc_in_progress(plane), "plane {}: GC still in progress after Done", plane.0);
        }
        Ok(step != GcStep::Done)
    }

    fn finish_job(&mut self, plane: PlaneId) -> Result<(), Violation> {
        let limit = 2 * self.model.ppb as u64 * self.model.blocks_per_plane as u64 + 16;
        for _ in 0..limit {
            if !self.step(plane)? {
                return Ok(());
            }
        }
        Err(Violation(format!("plane {}: a GC job did not finish within {limit} steps", plane.0)))
    }

    fn begin(&mut self, plane: PlaneId) -> Result<bool, Violation> {
        let started = self.ftl.gc_begin(plane).is_some();
        ensure!(
            started == self.ftl.gc_in_progress(plane),
            "plane {}: gc_begin returned {started} but gc_in_progress says {}",
            plane.0,
            !started
        );
        self.check().map_err(|v| Violation(format!("after gc_begin on plane {}: {}", plane.0, v.0)))?;
        Ok(started)
    }

    /// What the engine does before writing to a plane that needs GC: finish the job in
    /// progress, then run jobs while `needs_gc` and there is something to reclaim.
    fn collect(&mut self, plane: PlaneId) -> Result<(), Violation> {
        if self.ftl.gc_in_progress(plane) {
            self.finish_job(plane)?;
        }
        let limit = self.model.ppb as u64 * self.model.blocks_per_plane as u64 + 8;
        for _ in 0..limit {
            if !self.ftl.needs_gc(plane) || !self.begin(plane)? {
                return Ok(());
            }
            self.finish_job(plane)?;
        }
        Err(Violation(format!("plane {}: still needs GC after {limit} GC jobs (livelock)", plane.0)))
    }

    /// The plane a write of `lpn` is passed: `plane`, unless the FTL constrains the LPN to
    /// one plane.
    fn target(&self, lpn: Lpn, plane: PlaneId) -> Result<PlaneId, Violation> {
        match self.ftl.write_constraint(lpn) {
            WriteConstraint::Plane(p) => {
                ensure!(p.0 < self.planes(), "write_constraint({lpn}) names plane {}, not a plane", p.0);
                Ok(p)
            }
            WriteConstraint::Any | WriteConstraint::Die => Ok(plane),
        }
    }

    /// The page a write of `lpn` passed `plane` got must lie on that plane, or under
    /// [`WriteConstraint::Die`] on its die.
    fn check_page(&self, lpn: Lpn, plane: PlaneId, ppa: Ppa) -> Result<(), Violation> {
        ensure!(
            ppa.0 < self.model.pages.len() as u64,
            "write of {lpn}: page {} is outside the device",
            ppa.0
        );
        let got = self.model.plane_of(ppa);
        let ok = match self.ftl.write_constraint(lpn) {
            WriteConstraint::Die => got / self.model.planes_per_die == plane.0 / self.model.planes_per_die,
            _ => got == plane.0,
        };
        ensure!(ok, "write of {lpn} passed plane {} got page {} on plane {got}", plane.0, ppa.0);
        Ok(())
    }

    /// A refusal naming `e.plane()` for a write passed `plane`: check it, then do what the
    /// engine does with a parked write — run the named plane's GC (or merge) job.
    fn park(&mut self, lpn: Lpn, plane: PlaneId, e: FtlError) -> Result<(), Violation> {
        let q = e.plane();
        ensure!(q.0 < self.planes(), "write of {lpn} refused naming plane {}, not a plane", q.0);
        let same_die = q.0 / self.model.planes_per_die == plane.0 / self.model.planes_per_die;
        let ok = match self.ftl.write_constraint(lpn) {
            WriteConstraint::Die => same_die,
            _ => q == plane || matches!(e, FtlError::MergeNeeded { .. }),
        };
        ensure!(ok, "write of {lpn} to plane {} refused naming plane {}", plane.0, q.0);
        match e {
            FtlError::NoFreePage { .. } => {
                ensure!(
                    self.ftl.needs_gc(q),
                    "write of {lpn} refused for plane {} while its needs_gc is false (the engine would stall)",
                    q.0
                );
                self.collect(q)
            }
            FtlError::MergeNeeded { .. } => {
                if self.ftl.needs_gc(q) {
                    self.collect(q)
                } else if self.ftl.gc_in_progress(q) || self.begin(q)? {
                    self.finish_job(q)
                } else {
                    Err(Violation(format!("write of {lpn} needs a merge on plane {} but none starts", q.0)))
                }
            }
        }
    }

    /// Refusals of one write (or group) the harness parks and retries before giving up.
    fn retries(&self) -> u32 {
        self.model.planes_per_die + 1
    }

    /// Record an accepted host write of `lpn` to `ppa` in the model.
    fn record_write(&mut self, lpn: Lpn, plane: PlaneId, ppa: Ppa) -> Result<(), Violation> {
        self.check_page(lpn, plane, ppa)?;
        let what = format!("write of {lpn} to plane {}", plane.0);
        let version = self.model.next_version;
        self.model.next_version += 1;
        self.model.program(ppa, lpn, version, &what)?;
        self.model.reference.insert(lpn, version);
        self.model.expected.host_writes += 1;
        Ok(())
    }

    /// One `write`, checked against `can_write` and `next_write_addr`.
    fn write_once(&mut self, lpn: Lpn, plane: PlaneId) -> Result<Result<Ppa, FtlError>, Violation> {
        let can = self.ftl.can_write(plane);
        let predicted = self.ftl.next_write_addr(plane);
        let result = self.ftl.write(lpn, plane);
        ensure!(
            can == result.is_ok(),
            "can_write(plane {}) said {can}, but the write of {lpn} gave {result:?}",
            plane.0
        );
        match (predicted, result) {
            (Some((b, page)), Ok(ppa)) => {
                let want = b.0 as u64 * self.model.ppb as u64 + page as u64;
                ensure!(
                    ppa.0 == want,
                    "next_write_addr(plane {}) predicted block {} page {page}, the write of {lpn} got page {}",
                    plane.0,
                    b.0,
                    ppa.0
                );
            }
            (Some((b, page)), Err(e)) => {
                return Err(Violation(format!(
                    "next_write_addr(plane {}) predicted block {} page {page}, but the write of {lpn} was refused: {e}",
                    plane.0, b.0
                )));
            }
            (None, Ok(ppa)) => ensure!(
                !self.exact_write_addr,
                "next_write_addr(plane {}) was None, but the write of {lpn} got page {}",
                plane.0,
                ppa.0
            ),
            (None, Err(_)) => {}
        }
        Ok(result)
    }

    fn write(&mut self, lpn: Lpn, plane: PlaneId, dynamic: bool) -> Result<(), Violation> {
        let plane = self.target(lpn, plane)?;
        if self.ftl.needs_gc(plane) {
            self.collect(plane)?;
        }
        let mut result = self.write_once(lpn, plane)?;
        for _ in 0..self.retries() {
            let Err(e) = result else { break };
            self.park(lpn, plane, e)?;
            result = self.write_once(lpn, plane)?;
        }
        match result {
            Ok(ppa) => {
                self.record_write(lpn, plane, ppa)?;
                self.dynamic_used |= dynamic;
            }
            Err(e) => {
                ensure!(
                    self.dynamic_used || dynamic,
                    "write of {lpn} to its static plane {} refused after GC: {e}",
                    plane.0
                );
            }
        }
        Ok(())
    }

    /// A write group, parked and retried like a write; split into single writes (what the
    /// engine does) if it is still refused.
    fn write_group(&mut self, writes: &[(Lpn, PlaneId)]) -> Result<(), Violation> {
        for &(_, plane) in writes {
            if self.ftl.needs_gc(plane) {
                self.collect(plane)?;
            }
        }
        let mut out = vec![Ppa(u64::MAX)];
        for attempt in 0..=self.retries() {
            match self.ftl.write_group(writes, &mut out) {
                Ok(()) => {
                    ensure!(
                        out.len() == writes.len() + 1 && out[0] == Ppa(u64::MAX),
                        "write_group of {} writes returned {} pages (or overwrote the caller's)",
                        writes.len(),
                        out.len() - 1
                    );
                    for (&(lpn, plane), &ppa) in writes.iter().zip(&out[1..]) {
                        self.record_write(lpn, plane, ppa)?;
                    }
                    return Ok(());
                }
                Err(e) => {
                    ensure!(out.len() == 1, "a refused write_group pushed pages");
                    self.check().map_err(|v| {
                        Violation(format!("write_group refused ({e}) but changed the FTL: {}", v.0))
                    })?;
                    let ppd = self.model.planes_per_die;
                    let blamed = writes.iter().find(|&&(_, p)| p == e.plane()).or_else(|| {
                        writes.iter().find(|&&(l, p)| {
                            self.ftl.write_constraint(l) == WriteConstraint::Die
                                && p.0 / ppd == e.plane().0 / ppd
                        })
                    });
                    ensure!(
                        blamed.is_some(),
                        "write_group refused naming plane {}, which no write targets",
                        e.plane().0
                    );
                    // A group may be refused for want of room for all of its writes
                    // although GC is not needed: then the engine splits it.
                    let gc_helps = matches!(e, FtlError::MergeNeeded { .. }) || self.ftl.needs_gc(e.plane());
                    if attempt == self.retries() || !gc_helps {
                        break;
                    }
                    let &(lpn, plane) = blamed.expect("checked");
                    self.park(lpn, plane, e)?;
                }
            }
        }
        for &(lpn, plane) in writes {
            self.write(lpn, plane, false)?;
        }
        Ok(())
    }

    fn trim(&mut self, lpn: Lpn) -> Result<(), Violation> {
        let got = self.ftl.trim(lpn);
        let want = if self.model.reference.remove(&lpn).is_some() {
            self.model.location[lpn.0 as usize].take()
        } else {
            None
        };
        ensure!(got == want, "trim of {lpn} invalidated {got:?}, expected {want:?}");
        self.model.expected.trims += want.is_some() as u64;
        Ok(())
    }

    /// Apply one operation (running GC as the engine would) and check all invariants.
    pub fn apply(&mut self, op: Op) -> Result<(), Violation> {
        let l = self.model.logical_pages;
        let planes = self.planes();
        if !matches!(op, Op::GcStep(_) | Op::Read(_)) {
            // The engine issues a flagged step's successor right away; a host write or
            // trim in between may invalidate the page a flagged move meant to move next,
            // so only uninterrupted pairs are checked.
            self.batched = None;
        }
        match op {
            Op::Write(x) => {
                let lpn = Lpn(x % l);
                let plane = self.ftl.static_plane(lpn);
                ensure!(plane.0 < planes, "static_plane({lpn}) = {} is not a plane", plane.0);
                self.write(lpn, plane, false)?;
                if let Some(r) = self.ftl.replica(lpn) {
                    // Under replication the engine writes the copy with its host page.
                    let plane = self.ftl.static_plane(r);
                    ensure!(plane.0 < planes, "static_plane({r}) = {} is not a plane", plane.0);
                    self.write(r, plane, false)?;
                }
            }
            Op::WriteTo(x, p) => self.write(Lpn(x % l), PlaneId(p % planes), true)?,
            Op::Read(x) => {
                let lpn = Lpn(x % l);
                self.scratch.clear();
                self.ftl.translation_reads(lpn, &mut self.scratch);
                let listed = self.scratch.clone();
                self.scratch.clear();
                let queued = self.ftl.translate(lpn, &mut self.scratch);
                ensure!(
                    self.scratch == listed,
                    "translate({lpn}) reads {:?}, translation_reads listed {listed:?}",
                    self.scratch
                );
                let pages = self.model.pages.len() as u64;
                if let Some(p) = self.scratch.iter().find(|p| p.0 >= pages) {
                    return Err(Violation(format!(
                        "translation read of {lpn} names page {}, outside the device",
                        p.0
                    )));
                }
                // A spare area worth reading belongs to a programmed page.
                if let Some(p) =
                    self.scratch.iter().find(|p| self.model.pages[p.0 as usize] == Shadow::Erased)
                {
                    return Err(Violation(format!(
                        "translation read of {lpn} names page {}, which holds no data",
                        p.0
                    )));
                }
                let got = self.ftl.lookup(lpn);
                let want = self.model.location(lpn);
                ensure!(got == want, "read of {lpn} resolves to {got:?}, expected {want:?}");
                if let Some(plane) = queued {
                    // As the engine: the read queued flash work (a write-back) there.
                    ensure!(plane.0 < planes, "translate({lpn}) names plane {}, not a plane", plane.0);
                    self.collect(plane)?;
                }
            }
            Op::Trim(x) => {
                let lpn = Lpn(x % l);
                self.trim(lpn)?;
                if let Some(r) = self.ftl.replica(lpn) {
                    // And trims it with its host page.
                    self.trim(r)?;
                }
            }
            Op::GcStep(p) => {
                let plane = PlaneId(p % planes);
                if self.ftl.gc_in_progress(plane) {
                    self.step(plane)?;
                } else {
                    self.begin(plane)?;
                }
            }
            Op::WriteGroup { lpn, count, same_plane } => {
                let stride = if same_plane { planes as u64 } else { 1 };
                let mut writes = Vec::with_capacity(count as usize);
                for k in 0..count as u64 {
                    let lpn = Lpn((lpn + k * stride) % l);
                    let plane = self.ftl.static_plane(lpn);
                    ensure!(plane.0 < planes, "static_plane({lpn}) = {} is not a plane", plane.0);
                    writes.push((lpn, self.target(lpn, plane)?));
                }
                self.write_group(&writes)?;
            }
        }
        self.check()?;
        self.check_moves()
    }

    /// Apply `ops` in order; on failure, the index of the failing operation and why.
    pub fn apply_all(&mut self, ops: &[Op]) -> Result<(), (usize, Violation)> {
        for (i, &op) in ops.iter().enumerate() {
            self.apply(op).map_err(|v| (i, v))?;
        }
        Ok(())
    }
}

/// Settings of a conformance run.
#[derive(Clone, Debug)]
pub struct ConformanceConfig {
    /// Random operation sequences to try.
    pub cases: u32,
    /// Length range of each sequence.
    pub ops: std::ops::Range<usize>,
    /// Also generate dynamic-placement writes ([`Op::WriteTo`]).
    pub dynamic_placement: bool,
    /// Of the LPNs written, how many form the "hot" set that most writes hit (to create
    /// invalid pages quickly). Capped to the logical space.
    pub hot_lpns: u64,
    /// Seed of the case generator (runs are deterministic).
    pub seed: u64,
    /// Require [`Ftl::next_write_addr`] to be `Some` before every successful write
    /// ([`Harness::with_exact_write_addr`]).
    pub exact_write_addr: bool,
    /// The engine's remapping (`[remap]`, docs/policies.md) keeps its copies in the top
    /// `remap_lpns` logical pages, each written (a copy), read (redirected host reads)
    /// and trimmed (freed) over and over: with this > 0, a third of the operations
    /// follow that life cycle on those pages. 0 (default) = none.
    pub remap_lpns: u64,
}

impl Default for ConformanceConfig {
    fn default() -> Self {
        ConformanceConfig {
            cases: 64,
            ops: 1..400,
            dynamic_placement: false,
            hot_lpns: 24,
            seed: 0,
            exact_write_addr: false,
            remap_lpns: 0,
        }
    }
}

/// Strategy for one [`Op`] over an FTL with `logical_pages` LPNs and `planes` planes.
pub fn op_strategy(
    logical_pages: u64,
    planes: u32,
    hot_lpns: u64,
    dynamic_placement: bool,
) -> impl Strategy<Value = Op> {
    let hot = hot_lpns.clamp(1, logical_pages);
    let dyn_weight = if dynamic_placement { 3 } else { 0 };
    prop_oneof![
        8 => (0..hot).prop_map(Op::Write),
        4 => (0..logical_pages).prop_map(Op::Write),
        dyn_weight => (0..logical_pages, 0..planes).prop_map(|(l, p)| Op::WriteTo(l, p)),
        2 => (0..logical_pages).prop_map(Op::Read),
        1 => (0..hot).prop_map(Op::Trim),
        2 => (0..planes).prop_map(Op::GcStep),
        2 => (0..hot, 1..=2 * planes.min(8) as u8, any::<bool>())
            .prop_map(|(lpn, count, same_plane)| Op::WriteGroup { lpn, count, same_plane }),
    ]
}

/// Strategy for operation sequences; shrinks by dropping operations and lowering operands.
pub fn ops_strategy(
    logical_pages: u64,
    planes: u32,
    cfg: &ConformanceConfig,
) -> impl Strategy<Value = Vec<Op>> + use<> {
    let base = op_strategy(logical_pages, planes, cfg.hot_lpns, cfg.dynamic_placement);
    let remap = cfg.remap_lpns.min(logical_pages);
    // Without remap pages, exactly the sequences generated before the option existed.
    let op = if remap == 0 {
        base.boxed()
    } else {
        let top = logical_pages - remap..logical_pages;
        let remap_op = prop_oneof![
            3 => top.clone().prop_map(Op::Write),
            3 => top.clone().prop_map(Op::Read),
            2 => top.prop_map(Op::Trim),
        ];
        prop_oneof![2 => base, 1 => remap_op].boxed()
    };
    proptest::collection::vec(op, cfg.ops.clone())
}

/// Run the model-based property test against FTLs built by `make` (each case gets a fresh
/// one). On failure, returns the minimal operation sequence proptest shrank to.
pub fn check_conformance<F: Ftl>(
    make: impl Fn() -> F,
    cfg: &ConformanceConfig,
) -> Result<(), ConformanceFailure> {
    check_conformance_on(make, cfg, None)
}

/// [`check_conformance`], every case also mirrored on a fresh [`lamina_nand_model::Device`]
/// of `device` ([`Harness::with_device`]) when given.
pub fn check_conformance_on<F: Ftl>(
    make: impl Fn() -> F,
    cfg: &ConformanceConfig,
    device: Option<&lamina_nand_model::DeviceSpec>,
) -> Result<(), ConformanceFailure> {
    let probe = make();
    let strategy = ops_strategy(probe.logical_pages(), probe.geometry().total_planes(), cfg);
    drop(probe);
    let mut seed = [0u8; 32];
    seed[..8].copy_from_slice(&cfg.seed.to_le_bytes());
    let config =
        Config { cases: cfg.cases, failure_persistence: None, max_shrink_iters: 50_000, ..Config::default() };
    let mut runner = TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &seed));
    let exact = cfg.exact_write_addr;
    let harness = || {
        let h = Harness::new(make()).with_exact_write_addr(exact);
        match device {
            Some(spec) => h.with_device(lamina_nand_model::Device::new(
                spec.clone(),
                lamina_nand_model::DeviceOptions { store_tags: true },
            )),
            None => h,
        }
    };
    let result = runner.run(&strategy, |ops| {
        let mut h = harness();
        h.apply_all(&ops)
            .map_err(|(i, v)| TestCaseError::fail(format!("operation #{i} ({}): {}", ops[i], v.0)))
    });
    match result {
        Ok(()) => Ok(()),
        Err(TestError::Fail(reason, mut ops)) => {
            // Drop the operations after the one that failed (proptest shrinks by removing
            // elements, but the tail after the failure never matters).
            let mut h = harness();
            let failed_at = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| h.apply_all(&ops)));
            if let Ok(Err((i, _))) = failed_at {
                ops.truncate(i + 1);
            }
            Err(ConformanceFailure { ops, message: reason.message().to_owned() })
        }
        Err(TestError::Abort(reason)) => {
            Err(ConformanceFailure { ops: Vec::new(), message: format!("aborted: {}", reason.message()) })
        }
    }
}

/// [`check_conformance`], panicking with the minimal failing sequence (for `#[test]`s).
pub fn run_conformance<F: Ftl>(make: impl Fn() -> F, cfg: &ConformanceConfig) {
    if let Err(failure) = check_conformance(make, cfg) {
        panic!("{failure}");
    }
}

/// Decode arbitrary bytes into operations (for fuzzers). Each operation takes a tag byte
/// and up to two operand bytes (missing bytes read as 0): tags `0..=2 mod 8` write, `3` is
/// a write group of `1 + tag / 8 % 8` LPNs (one plane count apart if `tag ≥ 128`), `4`
/// writes to plane `tag / 8`, `5` reads, `6` trims, `7` runs a GC step on plane `tag / 8`.
pub fn decode_ops(data: &[u8]) -> Vec<Op> {
    let mut ops = Vec::with_capacity(data.len() / 2);
    let mut i = 0;
    let next = |i: &mut usize| {
        let b = data.get(*i).copied().unwrap_or(0);
        *i += 1;
        b
    };
    while i < data.len() {
        let tag = next(&mut i);
        let op = match tag % 8 {
            7 => Op::GcStep((tag / 8) as u32),
            kind => {
                let lpn = u16::from_le_bytes([next(&mut i), next(&mut i)]) as u64;
                match kind {
                    0..=2 => Op::Write(lpn),
                    3 => Op::WriteGroup { lpn, count: 1 + tag / 8 % 8, same_plane: tag >= 128 },
                    4 => Op::WriteTo(lpn, (tag / 8) as u32),
                    5 => Op::Read(lpn),
                    _ => Op::Trim(lpn),
                }
            }
        };
        ops.push(op);
    }
    ops
}

/// Run the operations decoded from `data` ([`decode_ops`]) against `ftl`, checking all
/// invariants after every step. Returns the prefix of operations up to the failing one.
pub fn run_bytes<F: Ftl>(ftl: F, data: &[u8]) -> Result<(), ConformanceFailure> {
    more::run_on(Harness::new(ftl), false, None, false, data).map(|_| ())
}

/// Bytes a fuzzer spends on choosing the page FTL's geometry and configuration in
/// [`page_ftl_from_bytes`].
pub const PAGE_FTL_CONFIG_BYTES: usize = 3;

/// The config of the NAND preset `name` cut to one die of `planes` planes of `blocks`
/// blocks of `pages` pages (the shape device-mirrored tests want). Panics on an unknown
/// preset (a test bug); the caller adjusts the rest and validates.
pub fn one_die_preset(name: &str, planes: u32, blocks: u32, pages: u32) -> lamina_nand_model::NandConfig {
    let mut c = lamina_nand_model::preset(name).unwrap_or_else(|| panic!("no preset {name}"));
    c.geometry.channels = 1;
    c.geometry.chips_per_channel = 1;
    c.geometry.dies_per_chip = 1;
    c.geometry.planes_per_die = planes;
    c.geometry.blocks_per_plane = blocks;
    c.geometry.pages_per_block = pages;
    c
}

/// A small SLC test geometry with 4 KiB pages (the shape most FTL tests want):
/// `channels × ways × dies × planes × blocks × pages`. Panics if invalid (a test bug).
pub fn slc_geometry(
    channels: u32,
    ways: u32,
    dies: u32,
    planes: u32,
    blocks: u32,
    pages: u32,
) -> lamina_nand_model::Geometry {
    use lamina_nand_model::{CellType, GeometryConfig, PageTypeOrder};
    GeometryConfig {
        channels,
        chips_per_channel: ways,
        dies_per_chip: dies,
        planes_per_die: planes,
        blocks_per_plane: blocks,
        pages_per_block: pages,
        page_size_bytes: 4096,
        partial_read_bytes: None,
        cell_type: CellType::Slc,
        layers: 1,
        page_type_order: PageTypeOrder::Interleaved,
    }
    .validate()
    .expect("test geometry is valid")
}

/// Build a small [`crate::PageFtl`] whose geometry and configuration are chosen by the
/// first [`PAGE_FTL_CONFIG_BYTES`] bytes (1–2 channels, 1–2 dies, 1–2 planes per die, 4–11
/// blocks per plane, 1–128 pages per block, every tie-break, wear levelling and copyback
/// on or off, per-plane or die-aligned allocation, striping order, RAIN 1 replication on two channels), returning it with the remaining bytes — the operations for
/// [`run_bytes`]. `None` if `data` is too short.
pub fn page_ftl_from_bytes(data: &[u8]) -> Option<(crate::PageFtl, &[u8])> {
    use crate::config::{Allocation, FtlConfig, GcThreshold, Replication, StripeOrder, TieBreak};
    if data.len() < PAGE_FTL_CONFIG_BYTES {
        return None;
    }
    let (c, rest) = data.split_at(PAGE_FTL_CONFIG_BYTES);
    let geometry = slc_geometry(
        1 + (c[0] & 1) as u32,
        1,
        1 + (c[0] >> 1 & 1) as u32,
        1 + (c[0] >> 2 & 1) as u32,
        4 + (c[1] & 7) as u32,
        [1, 2, 4, 8, 16, 128, 3, 5][(c[1] >> 3 & 7) as usize],
    );
    let orders = StripeOrder::all();
    let base = FtlConfig {
        gc_threshold: GcThreshold::FreeBlocks(2 + (c[2] >> 7) as u32),
        victim_tie_break: [TieBreak::LowestId, TieBreak::Oldest, TieBreak::LeastWorn][(c[2] % 3) as usize],
        wear_leveling: c[2] & 4 != 0,
        copyback: c[2] & 8 != 0,
        allocation: if c[2] & 16 != 0 { Allocation::DieAligned } else { Allocation::PerPlane },
        striping_order: orders[(c[0] >> 3) as usize % orders.len()],
        // RAIN 1 (mirrors statically on the other channel's chip) where there are two.
        replication: if c[2] & 32 != 0 && c[0] & 1 != 0 { Replication::Rain1 } else { Replication::None },
        ..FtlConfig::default()
    };
    // The least over-provisioning this geometry accepts, from a few candidates.
    let ftl = [0.1, 0.2, 0.3, 0.45, 0.6, 0.75, 0.85].iter().find_map(|&op| {
        crate::PageFtl::new(geometry.clone(), &FtlConfig { overprovisioning: op, ..base.clone() }).ok()
    })?;
    Some((ftl, rest))
}

/// Run the conformance check ([`check_conformance`]) on the FTL `cfg.kind` names, built
/// for `geometry` — the one place the harness dispatches over [`crate::FtlKind`], so that
/// a new kind cannot be added without being checked (the match is exhaustive).
/// [`ConformanceConfig::exact_write_addr`] is forced on for the kinds that always know
/// the next write's page (the page, MBM and TBM FTLs) and off for the others. Panics if `cfg` does not
/// build (a test bug).
pub fn check_kind_conformance(
    geometry: &lamina_nand_model::Geometry,
    cfg: &crate::FtlConfig,
    conf: &ConformanceConfig,
) -> Result<(), ConformanceFailure> {
    kind_conformance(geometry, None, cfg, conf)
}

/// [`check_kind_conformance`] for the device `spec` describes: the FTL is built from the
/// spec ([`crate::FtlKind::build_for_device`], so `ftl.pen` works) and every case is
/// mirrored on a real [`lamina_nand_model::Device`] of it, whose physics must accept
/// every program, erase and partial erase.
pub fn check_device_conformance(
    spec: &lamina_nand_model::DeviceSpec,
    cfg: &crate::FtlConfig,
    conf: &ConformanceConfig,
) -> Result<(), ConformanceFailure> {
    kind_conformance(spec.geometry(), Some(spec), cfg, conf)
}

fn kind_conformance(
    geometry: &lamina_nand_model::Geometry,
    spec: Option<&lamina_nand_model::DeviceSpec>,
    cfg: &crate::FtlConfig,
    conf: &ConformanceConfig,
) -> Result<(), ConformanceFailure> {
    use crate::FtlKind;
    let g = geometry.clone();
    let block_conf = ConformanceConfig { exact_write_addr: false, ..conf.clone() };
    match cfg.kind {
        FtlKind::Page => check_conformance_on(
            || built(cfg, crate::PageFtl::new(g.clone(), cfg)),
            &ConformanceConfig { exact_write_addr: true, ..conf.clone() },
            spec,
        ),
        FtlKind::Nftl => check_conformance_on(
            || {
                built(
                    cfg,
                    spec.map_or_else(
                        || crate::NftlFtl::new(g.clone(), cfg),
                        |s| crate::NftlFtl::for_device(s, cfg),
                    ),
                )
            },
            &block_conf,
            spec,
        ),
        FtlKind::Gftl => check_conformance_on(
            || {
                let ftl = spec.map_or_else(
                    || crate::GftlFtl::new(g.clone(), cfg),
                    |s| crate::GftlFtl::for_device(s, cfg),
                );
                built(cfg, ftl)
            },
            &block_conf,
            spec,
        ),
        FtlKind::Superblock => check_conformance_on(
            || {
                let ftl = spec.map_or_else(
                    || crate::SuperblockFtl::new(g.clone(), cfg),
                    |s| crate::SuperblockFtl::for_device(s, cfg),
                );
                built(cfg, ftl)
            },
            &block_conf,
            spec,
        ),
        FtlKind::Mbm => check_conformance_on(
            || built(cfg, crate::mbm::build(g.clone(), cfg)),
            &ConformanceConfig { exact_write_addr: true, ..conf.clone() },
            spec,
        ),
        FtlKind::Tbm => check_conformance_on(
            || built(cfg, crate::TbmFtl::new(g.clone(), cfg)),
            &ConformanceConfig { exact_write_addr: true, ..conf.clone() },
            spec,
        ),
    }
}

/// The FTL `cfg` built, or a panic naming its kind (a test bug).
fn built<F>(cfg: &crate::FtlConfig, ftl: Result<F, crate::FtlConfigError>) -> F {
    ftl.unwrap_or_else(|e| panic!("{:?} does not build: {e}", cfg.kind))
}

/// Bytes a fuzzer spends on choosing a block-level FTL in [`run_block_ftl_bytes`].
pub const BLOCK_FTL_CONFIG_BYTES: usize = 3;

/// Build a small NFTL or superblock FTL chosen by the first [`BLOCK_FTL_CONFIG_BYTES`]
/// bytes (kind, 1–2 channels, dies and planes per die, 6–13 blocks per plane, 1–128 pages
/// per block, superblocks of 1–4 logical blocks with 1–4 extra blocks, every tie-break
/// (superblock FTL),
/// wear levelling and copyback on or off, striping order, the least over-provisioning
/// the shape accepts) and run the operations the remaining bytes decode to
/// ([`run_bytes`]). `None` if `data` is too short or no over-provisioning fits.
pub fn run_block_ftl_bytes(data: &[u8]) -> Option<Result<(), ConformanceFailure>> {
    use crate::config::{FtlConfig, FtlKind, GcThreshold, StripeOrder, TieBreak};
    if data.len() < BLOCK_FTL_CONFIG_BYTES {
        return None;
    }
    let (c, rest) = data.split_at(BLOCK_FTL_CONFIG_BYTES);
    let geometry = slc_geometry(
        1 + (c[0] >> 1 & 1) as u32,
        1,
        1 + (c[0] >> 2 & 1) as u32,
        1 + (c[0] >> 3 & 1) as u32,
        6 + (c[1] & 7) as u32,
        [1, 2, 4, 8, 16, 128, 3, 5][(c[1] >> 3 & 7) as usize],
    );
    let orders = StripeOrder::all();
    let kind = if c[0] & 1 == 0 { FtlKind::Nftl } else { FtlKind::Superblock };
    let base = FtlConfig {
        kind,
        gc_threshold: GcThreshold::FreeBlocks(2 + (c[1] >> 6 & 1) as u32),
        victim_tie_break: match kind {
            FtlKind::Superblock => {
                [TieBreak::LowestId, TieBreak::Oldest, TieBreak::LeastWorn][(c[2] % 3) as usize]
            }
            _ => TieBreak::LowestId, // NFTL has no tie to break
        },
        wear_leveling: c[2] & 4 != 0,
        copyback: c[2] & 8 != 0,
        superblock_size: if kind == FtlKind::Superblock { 1 + (c[2] >> 4 & 3) as u32 } else { 4 },
        superblock_extra_blocks: if kind == FtlKind::Superblock { 1 + (c[2] >> 6) as u32 } else { 1 },
        striping_order: orders[(c[0] >> 4) as usize % orders.len()],
        ..FtlConfig::default()
    };
    let cfg = [0.1, 0.2, 0.3, 0.45, 0.6, 0.75, 0.85]
        .iter()
        .map(|&op| FtlConfig { overprovisioning: op, ..base.clone() })
        .find(|cfg| cfg.validate(&geometry).is_ok())?;
    Some(match kind {
        FtlKind::Superblock => run_bytes(crate::SuperblockFtl::new(geometry, &cfg).ok()?, rest),
        _ => run_bytes(crate::NftlFtl::new(geometry, &cfg).ok()?, rest),
    })
}

/// `count` pseudo-random fuzzer-like inputs from `seed`, each up to 2000 bytes: the first
/// three bytes (a configuration) and every tag byte uniform, the operand bytes small
/// (0–2) so that LPNs repeat and GC runs. What the byte-driven tests feed
/// [`page_ftl_from_bytes`], [`run_block_ftl_bytes`] and [`run_more_ftl_bytes`].
pub fn fuzz_like_inputs(seed: u64, count: usize) -> Vec<Vec<u8>> {
    use rand_core::{Rng, SeedableRng};
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
    (0..count)
        .map(|_| {
            let len = (rng.next_u64() % 2000) as usize;
            (0..len)
                .map(|i| if i % 3 == 0 || i < 3 { rng.next_u64() as u8 } else { (rng.next_u64() % 3) as u8 })
                .collect()
        })
        .collect()
}
