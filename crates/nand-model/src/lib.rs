//! Timing-accurate 3D-NAND flash model.
#![forbid(unsafe_code)]

pub mod addr;
pub mod geometry;
pub mod time;

pub use addr::{BlockId, ChannelId, ChipId, DieId, PageAddr, PlaneId, Ppa};
pub use geometry::{CellType, Geometry, GeometryConfig, GeometryError, PageType, PageTypeOrder};
pub use time::{DurationParseError, Nanos, SimTime};
