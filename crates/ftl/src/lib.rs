//! Flash translation layers for Lamina.
//!
//! * [`Ftl`] — the trait every FTL implements: mapping, allocation and GC decisions, no
//!   time. The engine turns its decisions into timed NAND operations in the same order.
//!   The write protocol: [`WriteConstraint`]s, park-and-retry on [`FtlError`], predicted
//!   pages ([`Ftl::next_write_addr`]), all-or-nothing [`Ftl::write_group`]s, timed
//!   [`Ftl::translation_reads`], GC jobs per plane whose steps are timed on the dies they
//!   touch.
//! * [`FtlKind::build`] — the one place `ftl.kind` selects an implementation.
//! * [`PageFtl`] — the page-mapping baseline: static striping over channel/way/die/plane
//!   in any of the 24 orders, one active block per plane (or die-aligned rows,
//!   [`Allocation::DieAligned`]), greedy per-plane GC, dynamic wear levelling, lazily
//!   allocated tables.
//! * [`NftlFtl`] — block-level NFTL: a data block at in-place offsets plus an update-block
//!   log per logical block, the classic merge, timed spare-area scans on reads.
//! * [`GftlFtl`] — GFTL (Choudhuri and Givargis): block-level mapping with a shared
//!   write buffer, block cleaning cut into bounded partial steps interleaved with host
//!   writes.
//! * [`SuperblockFtl`] — Kang et al.'s hybrid Superblock FTL: superblocks of adjacent
//!   logical blocks sharing up to N + M physical blocks, page-mapped inside, intra- and
//!   inter-superblock GC.
//! * [`mbm`] — MBM's write strategy (a [`PageFtl`] with die-aligned allocation) (Li et al.): a host and a GC active block per
//!   plane, host writes of a die round-robin over its planes at one offset.
//! * [`TbmFtl`] — twin-block management (Tavakkol et al.): blocks allocated, collected
//!   and erased as twins (one block index on every plane of a die).
//! * [`pen`] — PEN's M-Merge planning (partial erase, FAST 2018): the PB tree, Algorithm 1's
//!   minimum-cost restore sequence, boundary disturbance, the wear gate W, and the merge
//!   vs M-Merge decisions of Algorithms 2 (NFTL) and 3 (Superblock). Pure functions.
//! * [`precondition()`] — untimed fill + random overwrites to GC steady state.
//! * `testing` (cargo feature `testing`) — the model-based conformance harness: run it
//!   against your own FTL, from proptest or from a fuzzer.
//!
//! Design notes, invariants and a guide to fuzzing a new FTL: `docs/ftl.md`.
//!
//! # Example
//!
//! ```
//! use lamina_ftl::{Ftl, FtlConfig, GcStep, GcThreshold, Lpn, PageFtl};
//! use lamina_nand_model::{CellType, GeometryConfig, PageTypeOrder};
//!
//! let geometry = GeometryConfig {
//!     channels: 2, chips_per_channel: 1, dies_per_chip: 1, planes_per_die: 2,
//!     blocks_per_plane: 16, pages_per_block: 8, page_size_bytes: 4096,
//!     partial_read_bytes: None, cell_type: CellType::Slc, layers: 1,
//!     page_type_order: PageTypeOrder::Interleaved,
//! }
//! .validate()?;
//! let config = FtlConfig {
//!     overprovisioning: 0.25,
//!     gc_threshold: GcThreshold::FreeBlocks(2),
//!     ..FtlConfig::default()
//! };
//! let mut ftl = PageFtl::new(geometry, &config)?;
//!
//! // Overwrite a small range many times: GC has to run.
//! for i in 0..2_000u64 {
//!     let lpn = Lpn(i % 100);
//!     let plane = ftl.static_plane(lpn);
//!     if ftl.needs_gc(plane) && !ftl.gc_in_progress(plane) && ftl.gc_begin(plane).is_some() {
//!         loop {
//!             match ftl.gc_step(plane) {
//!                 GcStep::Done => break,
//!                 _step => { /* the engine issues the NAND operation here */ }
//!             }
//!         }
//!     }
//!     let ppa = ftl.write(lpn, plane)?;
//!     assert_eq!(ftl.lookup(lpn), Some(ppa));
//! }
//! assert!(ftl.stats().erases > 0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![forbid(unsafe_code)]

mod api;
mod blocks;
mod cmt;
pub mod config;
pub mod gftl;
mod lpn_map;
pub mod mbm;
mod min_queue;
pub mod nftl;
pub mod page;
pub mod pen;
pub mod precondition;
mod pretouch;
pub mod superblock;
pub mod tbm;
#[cfg(feature = "testing")]
pub mod testing;

pub use api::{
    BlockInfo, FlashEffect, Ftl, FtlError, FtlStats, GcJob, GcStep, Lpn, MoveLog, PageCounts, PageRange,
    WriteConstraint,
};
pub use cmt::MAPPING_ENTRY_BYTES;
pub use config::{
    Allocation, FtlConfig, FtlConfigError, FtlKind, GcThreshold, Level, Replication, StripeOrder, TieBreak,
    ValidatedFtlConfig,
};
pub use config::{DEFAULT_CMT_ENTRIES, Mapping, MappingEntry, MappingEntrySizes};
pub use gftl::GftlFtl;
pub use nftl::NftlFtl;
pub use page::PageFtl;
pub use precondition::{FillOrder, PreconditionConfig, PreconditionError, PreconditionReport, precondition};
pub use superblock::SuperblockFtl;
pub use tbm::TbmFtl;

use lamina_nand_model::Geometry;

/// Build the FTL `config.kind` names for `geometry`, validating the config (the same as
/// [`FtlKind::build`], which is the dispatch point).
pub fn build(config: &FtlConfig, geometry: &Geometry) -> Result<Box<dyn Ftl>, FtlConfigError> {
    config.kind.build(geometry.clone(), config)
}

/// Build the FTL `config.kind` names for the device `spec` describes (the same as
/// [`FtlKind::build_for_device`]): what `ftl.pen = true` needs.
pub fn build_for_device(
    config: &FtlConfig,
    spec: &lamina_nand_model::DeviceSpec,
) -> Result<Box<dyn Ftl>, FtlConfigError> {
    config.kind.build_for_device(spec, config)
}
