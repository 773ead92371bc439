//! Write placement policies: which plane a host write sub-request (one logical page)
//! goes to. See `docs/policies.md` for each rule, its source and every choice the papers
//! leave open.
//!
//! Die-binding policies (state-based-die-binding §2–3): [`StaticPlacement`],
//! [`WriteOrderPlacement`], [`QueuePlacement`], [`StatePlacement`], [`DynamicPlacement`]
//! (SSDsim's dynamic allocation) and [`UqPlacement`] (the paper's proposal). Chip
//! redirection (layer-aware-chip-redirection): [`crate::ChipRedirect`] in OCR and LaCR
//! flavours.
//!
//! Common conventions:
//! - Dies are ordered *channel-first* where a policy walks them in order (the k-th die is
//!   on channel `k % channels`), as static striping does, so round-robin spreads over
//!   channels before ways.
//! - Unless a policy says otherwise, the plane inside the chosen die is the static
//!   plane's index within its die (`static_plane % planes_per_die`): the die is the
//!   policy's decision, the plane keeps the FTL's striping (the "static modulo").
//! - Every tie is broken by die index or by a rotating pointer, never by hashing, so a
//!   run is a pure function of its inputs.

use lamina_nand_model::{ChannelId, ChipId, DieId, Geometry, Lpn, PlaneId};
use serde::{Deserialize, Serialize};

use crate::lacr::{ChipRedirect, LacrParams};
use crate::mbm::{McsParams, McsPlacement};
use crate::{DeviceView, Placement};

/// Same die, keep the static plane index.
#[inline]
fn static_plane_on(geo: &Geometry, die: DieId, static_plane: PlaneId) -> PlaneId {
    geo.plane_of_die(die, geo.plane_index_in_die(static_plane))
}

/// Static placement: the FTL's striping order decides (SSDsim "static allocation";
/// state-based-die-binding's "address based binding").
#[derive(Clone, Copy, Debug, Default)]
pub struct StaticPlacement;

impl Placement for StaticPlacement {
    #[inline]
    fn place_write(&mut self, _lpn: Lpn, static_plane: PlaneId, _view: &dyn DeviceView) -> Option<PlaneId> {
        Some(static_plane)
    }

    fn is_static(&self) -> bool {
        true
    }
}

/// Write-order binding (state-based-die-binding §2, ref. \[9\]): the n-th write goes to
/// die `n mod dies`, dies in channel-first order, whatever their state.
#[derive(Clone, Copy, Debug, Default)]
pub struct WriteOrderPlacement {
    next: u64,
}

impl Placement for WriteOrderPlacement {
    fn place_write(&mut self, _lpn: Lpn, static_plane: PlaneId, view: &dyn DeviceView) -> Option<PlaneId> {
        let geo = view.geometry();
        let k = (self.next % geo.total_dies() as u64) as u32;
        self.next += 1;
        Some(static_plane_on(geo, geo.die_channel_first(k), static_plane))
    }
}

/// Queue-based binding (state-based-die-binding §2, ref. \[4\]): the die with the shortest
/// queue, counting the operation in flight (`die_queue_len + busy`). Ties go to the
/// first such die at or after a rotating pointer (channel-first order), which advances
/// past each choice, so equal queues are filled round-robin.
#[derive(Clone, Copy, Debug, Default)]
pub struct QueuePlacement {
    next: u32,
}

impl Placement for QueuePlacement {
    fn place_write(&mut self, _lpn: Lpn, static_plane: PlaneId, view: &dyn DeviceView) -> Option<PlaneId> {
        let geo = view.geometry();
        let n = geo.total_dies();
        let start = self.next % n;
        let mut best: Option<(u32, u32)> = None; // (load, k)
        for i in 0..n {
            let k = (start + i) % n;
            let die = geo.die_channel_first(k);
            let load = view.die_queue_len(die).saturating_add(u32::from(!view.die_idle(die)));
            if best.is_none_or(|(l, _)| load < l) {
                best = Some((load, k));
            }
        }
        let (_, k) = best.expect("at least one die");
        self.next = (k + 1) % n;
        Some(static_plane_on(geo, geo.die_channel_first(k), static_plane))
    }
}

/// State-based binding (Winata, Kim and Shin, Electronics Letters 2015; ref. \[5\] of
/// state-based-die-binding): idle dies first; among them the one with the fewest
/// cumulative writes. Channel state is ignored (the paper assumes a dedicated channel
/// per die). With no idle die the write still goes somewhere (the original has no
/// undecided queue): the busy die with the least assigned work, `die_writes +
/// die_queue_len`. Ties by die index.
#[derive(Clone, Copy, Debug, Default)]
pub struct StatePlacement;

impl Placement for StatePlacement {
    fn place_write(&mut self, _lpn: Lpn, static_plane: PlaneId, view: &dyn DeviceView) -> Option<PlaneId> {
        let geo = view.geometry();
        let mut best: Option<((bool, u64), DieId)> = None;
        for d in 0..geo.total_dies() {
            let die = DieId(d);
            let idle = view.die_idle(die);
            let load = if idle {
                view.die_writes(die)
            } else {
                view.die_writes(die).saturating_add(view.die_queue_len(die) as u64)
            };
            let key = (!idle, load);
            if best.is_none_or(|(k, _)| key < k) {
                best = Some((key, die));
            }
        }
        let (_, die) = best.expect("at least one die");
        Some(static_plane_on(geo, die, static_plane))
    }
}

/// UQ, the proposal of state-based-die-binding §3: a sub-write goes only to a die whose
/// die *and* channel are both idle, the one with the fewest cumulative writes (ties by
/// die index); if there is none it is deferred (`None`), and the engine keeps it in the
/// undecided FCFS queue and retries, oldest first, whenever a die or channel becomes
/// idle.
///
/// The engine asks once per sub-write and queues (and starts) each choice before asking
/// for the next, so a chosen die's channel is busy with its data transfer when the next
/// sub-write of the same request is placed: "as many sub-writes as qualifying dies"
/// becomes at most one new write per idle channel per instant, which is what the
/// hardware can start anyway.
#[derive(Clone, Copy, Debug, Default)]
pub struct UqPlacement;

impl Placement for UqPlacement {
    fn place_write(&mut self, _lpn: Lpn, static_plane: PlaneId, view: &dyn DeviceView) -> Option<PlaneId> {
        let geo = view.geometry();
        let mut best: Option<(u64, DieId)> = None;
        for ch in 0..geo.channels() {
            if !view.channel_idle(ChannelId(ch)) {
                continue;
            }
            let per_channel = geo.chips_per_channel() * geo.dies_per_chip();
            for d in ch * per_channel..(ch + 1) * per_channel {
                let die = DieId(d);
                if !view.die_idle(die) {
                    continue;
                }
                let w = view.die_writes(die);
                if best.is_none_or(|(bw, _)| w < bw) {
                    best = Some((w, die));
                }
            }
        }
        best.map(|(_, die)| static_plane_on(geo, die, static_plane))
    }
}

/// SSDsim 2.x dynamic allocation (`allocation_scheme = 0`, `dynamic_allocation = 0`, no
/// advanced commands; `services_2_write` and `process` in SSDsim's `flash.c`): writes
/// wait in one device-wide FCFS queue; an idle channel takes the oldest write and gives
/// it to its token chip if that chip is idle, else tries the next chip of the channel
/// (the channel's chip token advances either way); die and plane inside the chip come
/// from round-robin tokens. Channels are visited from a rotating start.
///
/// Here: channels are scanned from a start that advances by one after every placement
/// (SSDsim starts at `program_count % channels`); a channel qualifies if it is idle; in
/// it, chips are tried from the channel's chip token; a chip qualifies if one of its
/// dies is idle, the first idle die from the chip's die token is taken; the plane is the
/// die's plane token. Tokens advance past each choice. No qualifying pair ⇒ `None`
/// (the write waits in the engine's undecided FCFS queue, as in SSDsim's `subs_w` list).
#[derive(Clone, Debug, Default)]
pub struct DynamicPlacement {
    channel_start: u32,
    /// Per channel: next chip (within the channel) to try.
    chip_token: Vec<u32>,
    /// Per chip: next die (within the chip).
    die_token: Vec<u32>,
    /// Per die: next plane (within the die).
    plane_token: Vec<u32>,
}

impl Placement for DynamicPlacement {
    fn place_write(&mut self, _lpn: Lpn, _static_plane: PlaneId, view: &dyn DeviceView) -> Option<PlaneId> {
        let geo = view.geometry();
        if self.chip_token.len() != geo.channels() as usize {
            self.chip_token = vec![0; geo.channels() as usize];
            self.die_token = vec![0; geo.total_chips() as usize];
            self.plane_token = vec![0; geo.total_dies() as usize];
        }
        let (nc, cpc, dpc) = (geo.channels(), geo.chips_per_channel(), geo.dies_per_chip());
        for i in 0..nc {
            let ch = (self.channel_start + i) % nc;
            if !view.channel_idle(ChannelId(ch)) {
                continue;
            }
            for _ in 0..cpc {
                let chip_in_ch = self.chip_token[ch as usize];
                self.chip_token[ch as usize] = (chip_in_ch + 1) % cpc;
                let chip = ChipId(ch * cpc + chip_in_ch);
                let dt = self.die_token[chip.idx()];
                for j in 0..dpc {
                    let die_in_chip = (dt + j) % dpc;
                    let die = DieId(chip.0 * dpc + die_in_chip);
                    if !view.die_idle(die) {
                        continue;
                    }
                    self.die_token[chip.idx()] = (die_in_chip + 1) % dpc;
                    let p = self.plane_token[die.idx()];
                    self.plane_token[die.idx()] = (p + 1) % geo.planes_per_die();
                    self.channel_start = (ch + 1) % nc;
                    return Some(geo.plane_of_die(die, p));
                }
            }
        }
        None
    }
}

/// Placement policy names accepted in config (`sched.placement`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PlacementKind {
    /// [`StaticPlacement`].
    #[default]
    Static,
    /// [`WriteOrderPlacement`].
    WriteOrder,
    /// [`QueuePlacement`].
    Queue,
    /// [`StatePlacement`].
    State,
    /// [`DynamicPlacement`] (SSDsim dynamic allocation).
    Dynamic,
    /// [`UqPlacement`] (state-based-die-binding's proposal).
    Uq,
    /// [`ChipRedirect`] without layer awareness (layer-aware-chip-redirection's OCR).
    Ocr,
    /// [`ChipRedirect`] with layer awareness (LaCR).
    Lacr,
    /// [`McsPlacement`] (mbm-ftl's Minimizing Chip consumption Strategy with
    /// Channel_Max_Subs).
    Mcs,
}

impl PlacementKind {
    /// Every policy, in documentation order.
    pub const ALL: [PlacementKind; 9] = [
        PlacementKind::Static,
        PlacementKind::WriteOrder,
        PlacementKind::Queue,
        PlacementKind::State,
        PlacementKind::Dynamic,
        PlacementKind::Uq,
        PlacementKind::Ocr,
        PlacementKind::Lacr,
        PlacementKind::Mcs,
    ];

    /// The config name (`"write-order"`, …).
    pub fn name(self) -> &'static str {
        match self {
            PlacementKind::Static => "static",
            PlacementKind::WriteOrder => "write-order",
            PlacementKind::Queue => "queue",
            PlacementKind::State => "state",
            PlacementKind::Dynamic => "dynamic",
            PlacementKind::Uq => "uq",
            PlacementKind::Ocr => "ocr",
            PlacementKind::Lacr => "lacr",
            PlacementKind::Mcs => "mcs",
        }
    }

    /// One line on what the policy does (for `lamina policies`; details in docs/policies.md).
    pub fn describe(self) -> &'static str {
        match self {
            PlacementKind::Static => "the FTL's static striping by LPN (the baseline)",
            PlacementKind::WriteOrder => "round robin over dies, one sub-write per die in turn",
            PlacementKind::Queue => "the die with the shortest queue (ties: rotating pointer)",
            PlacementKind::State => "an idle die with the fewest cumulative writes",
            PlacementKind::Dynamic => "SSDsim 2.x dynamic allocation: channel, chip, die, plane tokens",
            PlacementKind::Uq => "an idle die on an idle channel, else wait in the undecided queue",
            PlacementKind::Ocr => "chip redirection by estimated queue time, without layer awareness",
            PlacementKind::Lacr => "layer-aware chip redirection by estimated queue time",
            PlacementKind::Mcs => {
                "a request's sub-writes spread over channels by Channel_Max_Subs, each share on the idle chip of least parallelism degree that takes it whole"
            }
        }
    }

    /// Where the policy comes from (paper and section; see docs/policies.md).
    pub fn source(self) -> &'static str {
        match self {
            PlacementKind::Static => "SSDsim static allocation; Jin and Shin 2017, address-based binding",
            PlacementKind::WriteOrder => "Jin and Shin 2017, §2 (its ref. [9])",
            PlacementKind::Queue => "Jin and Shin 2017, §2 (Park et al. 2010)",
            PlacementKind::State => "Jin and Shin 2017, §2 (Winata, Kim and Shin 2015)",
            PlacementKind::Dynamic => "SSDsim 2.x dynamic allocation (Jin and Shin 2017, §4)",
            PlacementKind::Uq => "Jin and Shin 2017, §3 (the proposal)",
            PlacementKind::Ocr => "Xu, Du and Ding, IEEE Access 2021, §V-A",
            PlacementKind::Lacr => "Xu, Du and Ding, IEEE Access 2021, §III–IV (the proposal)",
            PlacementKind::Mcs => {
                "Li et al., mbm-ftl §IV-C Fig. 7 (MCS) and §IV-A Algorithm 1 (Channel_Max_Subs, reconstructed)"
            }
        }
    }

    /// True if the policy may defer a write (return `None`).
    pub fn may_defer(self) -> bool {
        matches!(self, PlacementKind::Dynamic | PlacementKind::Uq)
    }

    /// Build the policy with default parameters.
    pub fn build(self) -> Box<dyn Placement> {
        self.build_with(LacrParams::default(), McsParams::default())
    }

    /// Build the policy; `lacr` parameterises OCR and LaCR, `mcs` MCS (each ignored by
    /// the others).
    pub fn build_with(self, lacr: LacrParams, mcs: McsParams) -> Box<dyn Placement> {
        match self {
            PlacementKind::Static => Box::new(StaticPlacement),
            PlacementKind::WriteOrder => Box::new(WriteOrderPlacement::default()),
            PlacementKind::Queue => Box::new(QueuePlacement::default()),
            PlacementKind::State => Box::new(StatePlacement),
            PlacementKind::Dynamic => Box::new(DynamicPlacement::default()),
            PlacementKind::Uq => Box::new(UqPlacement),
            PlacementKind::Ocr => Box::new(ChipRedirect::ocr(lacr)),
            PlacementKind::Lacr => Box::new(ChipRedirect::lacr(lacr)),
            PlacementKind::Mcs => Box::new(McsPlacement::new(mcs)),
        }
    }
}
