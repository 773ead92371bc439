//! Typed identifiers of device units and physical pages.
//!
//! Global ids (`ChannelId`, `ChipId`, `DieId`, `PlaneId`, `BlockId`, `Ppa`) are flat
//! indices over the whole device in channel-major order; [`PageAddr`] is the
//! hierarchical form. [`crate::Geometry`] converts between them.

use serde::{Deserialize, Serialize};

macro_rules! id_type {
    ($(#[$m:meta])* $name:ident($inner:ty)) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub $inner);

        impl $name {
            /// The index as `usize`, for indexing per-unit arrays.
            #[inline]
            pub const fn idx(self) -> usize {
                self.0 as usize
            }
        }
    };
}

id_type!(
    /// A channel (0 .. channels).
    ChannelId(u32)
);
id_type!(
    /// A chip, global over the device (channel-major).
    ChipId(u32)
);
id_type!(
    /// A die, global over the device.
    DieId(u32)
);
id_type!(
    /// A plane, global over the device.
    PlaneId(u32)
);
id_type!(
    /// A block, global over the device.
    BlockId(u32)
);
id_type!(
    /// A physical page number, global over the device:
    /// `block_id × pages_per_block + page`.
    Ppa(u64)
);

/// Hierarchical physical page address. Components are local to their parent
/// (`chip` within the channel, `die` within the chip, …).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct PageAddr {
    /// Channel.
    pub channel: u32,
    /// Chip within the channel.
    pub chip: u32,
    /// Die within the chip.
    pub die: u32,
    /// Plane within the die.
    pub plane: u32,
    /// Block within the plane.
    pub block: u32,
    /// Page within the block.
    pub page: u32,
}

/// A logical page number: the host address space in units of one flash page
/// (`byte offset / page_size_bytes`). Valid LPNs are `0 .. logical pages` of the FTL in use.
///
/// It lives here, in the crate every other crate depends on, so that the FTL, the
/// schedulers and the engine speak of logical pages with one type.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Lpn(pub u64);

impl std::fmt::Display for Lpn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "lpn {}", self.0)
    }
}
