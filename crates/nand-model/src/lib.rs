//! Timing-accurate 3D-NAND flash model: geometry, timing, shared resources and flash
//! physics, with no events, files or policies (the engine owns the clock).
//!
//! A [`NandConfig`] (usually a [`preset`]) is validated into a [`DeviceSpec`]; a
//! [`Device`] built from it accepts borrowed [`Command`]s through one entry point,
//! [`Device::issue`], which checks the flash rules (program only erased pages, in order;
//! never read erased pages; multi-plane and SOML constraints), reserves the channel bus
//! and the die greedily after everything issued before, and returns the exact phase
//! times of the operation ([`OpTiming`]). Reads may suspend an in-flight program or
//! erase; the result then reports the suspended operation's new completion time.
//!
//! ```
//! use lamina_nand_model::{preset, Command, Device, DeviceOptions, Nanos, PageAddr, SimTime};
//!
//! // mbm-ftl Table I: 70 ns command/address, 10 ns per byte, tPROG 1.3 ms, tR 78 µs.
//! let spec = preset("mbm").unwrap().validate().unwrap();
//! let mut dev = Device::new(spec, DeviceOptions { store_tags: true });
//! let page = PageAddr { channel: 0, chip: 0, die: 0, plane: 0, block: 3, page: 0 };
//!
//! let w = dev.issue(SimTime(0), &Command::Program { pages: &[page], tags: &[42] }).unwrap();
//! assert_eq!(w.done, SimTime(70 + 8192 * 10 + 1_300_000));
//!
//! let r = dev
//!     .issue(w.done, &Command::Read { pages: &[page], offset_bytes: 0, len_bytes: 8192 })
//!     .unwrap();
//! assert_eq!(r.done - w.done, Nanos(70 + 78_000 + 8192 * 10));
//! assert_eq!(dev.tag(dev.geometry().ppa(page)), Some(42));
//!
//! // Physics: the page cannot be programmed twice.
//! assert!(dev.issue(r.done, &Command::Program { pages: &[page], tags: &[43] }).is_err());
//! ```
#![forbid(unsafe_code)]

pub mod addr;
mod calendar;
pub mod config;
pub mod device;
pub mod geometry;
mod per_block;
pub mod presets;
mod state;
pub mod time;

pub use addr::{BlockId, ChannelId, ChipId, DieId, Lpn, PageAddr, PlaneId, Ppa};
pub use config::{
    BusConfig, BusTiming, DeviceSpec, LayerCurve, LayerSpeedConfig, NandConfig, NandConfigError,
    PartialEraseConfig, PerPageType, SlowEnd, SomlConfig, SomlRules, SuspensionConfig, SuspensionRules,
    Timing, TimingConfig,
};
pub use device::{
    Command, Device, DeviceOptions, DeviceStats, NandError, OpTiming, PageState, SomlPart, Suspension,
};
pub use geometry::{
    CellType, Geometry, GeometryConfig, GeometryError, MAX_PAGES_PER_BLOCK, PageType, PageTypeOrder,
    SECTOR_BYTES,
};
pub use per_block::PerBlock;
pub use presets::{PresetInfo, preset, presets};
pub use time::{DURATION_EXPECTED, DurationParseError, Nanos, SimTime};
