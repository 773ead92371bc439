//! Chip redirection by estimated queue time (layer-aware-chip-redirection, Xu, Du and
//! Ding, IEEE Access 2021): OCR (queue-time estimate without layer awareness) and LaCR
//! (with it).
//!
//! For every chip the policy estimates (Eq. 1) `T_queue = T_response + T_GC + T_remain`:
//! - `T_response = T_RD + T_WR` (Eq. 2–4): reads are served before writes, so a new
//!   write waits for every queued read of its *channel* (Eq. 3 sums over the chips of
//!   the channel) plus the writes queued ahead of it on its own chip (§III: "other write
//!   sub-requests in their individual queues");
//! - a read costs `cmd + R × speed(layer) + size × T_c` (Eq. 5, 6, 8), a write
//!   `W × speed(layer) + size × T_c` (Eq. 9); `R × speed(layer)` and `W × speed(layer)`
//!   are the device's per-page array times ([`Timing::read_array`],
//!   [`Timing::program_array`]) for LaCR and the base (fastest-layer) times for OCR;
//! - `T_GC` is a fixed large value (tBERS) on a chip with garbage collection under way,
//!   0 otherwise; chips of a channel doing GC are skipped altogether (§IV-C) unless
//!   every channel is doing GC;
//! - `T_remain = die_free_at − now`, the rest of the operation in flight.
//!
//! The write goes to the chip with the least estimate; ties rotate with a token
//! (Algorithm 1). Die and plane inside the chip come from the static striping: the die
//! with the static plane's die index within its chip, the plane with its plane index
//! within its die. A chip's estimate is that die's (our dies run independently, so the
//! die the write will join is the one whose queue it waits for).
//!
//! Open point resolved here (the paper leaves it open, §IV-B): under dynamic mapping a
//! queued write's page, hence its layer, is unknown until the FTL allocates it when the
//! die takes the write. [`PendingWriteLayer::Tracked`] (default) predicts it exactly as
//! the FTL will allocate it — the plane's active-block write pointer advanced by the
//! writes queued ahead on that plane — and [`PendingWriteLayer::Mean`] uses the mean
//! array time over a block's pages instead.

use lamina_nand_model::{ChannelId, DieId, Geometry, Lpn, PlaneId, Timing};
use serde::{Deserialize, Serialize};

use crate::{DeviceView, PendingOp, Placement};

/// How the layer of a queued write (page not yet allocated) is estimated.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PendingWriteLayer {
    /// Page = the plane's next write page (FTL write pointer) + writes queued ahead on
    /// the same plane, modulo pages per block (a new active block starts at page 0).
    /// Falls back to [`PendingWriteLayer::Mean`] if the FTL does not expose the pointer.
    #[default]
    Tracked,
    /// The mean array time over the pages of a block.
    Mean,
}

/// Whose queued reads delay a new write.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReadScope {
    /// All reads queued on the chip's channel (Eq. 3: Σ over the chips of the channel).
    #[default]
    Channel,
    /// Only the reads queued on the target die (what a per-die read-first arbiter does).
    Die,
}

/// Parameters of OCR and LaCR (a `[sched.lacr]` table when the engine exposes one).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LacrParams {
    /// Layer of queued writes.
    pub pending_write_layer: PendingWriteLayer,
    /// Reads counted in `T_RD`.
    pub read_scope: ReadScope,
    /// Add the new write's own service time on each candidate (`W × speed(layer)` of the
    /// page it would get there, + transfer), not only the queue time ahead of it. Off by
    /// default: Eq. 1 and Algorithm 1 compare queue times only.
    pub include_own_write: bool,
}

/// OCR / LaCR chip redirection (see the module docs).
#[derive(Clone, Debug)]
pub struct ChipRedirect {
    layer_aware: bool,
    params: LacrParams,
    /// Algorithm 1's token, incremented on every call.
    token: u64,
    /// Chips tied at the least estimate (scratch).
    ties: Vec<u32>,
    /// Per channel: estimated time of its queued reads (scratch).
    channel_reads: Vec<u64>,
    /// Per channel: some die of it is doing GC (scratch).
    channel_gc: Vec<bool>,
    /// Mean array (read, program) time per page for this flavour, computed on first use.
    means: Option<(u64, u64)>,
}

impl ChipRedirect {
    /// OCR: the estimate with base (fastest-layer) array times.
    pub fn ocr(params: LacrParams) -> Self {
        Self::new(false, params)
    }

    /// LaCR: the estimate with per-layer array times.
    pub fn lacr(params: LacrParams) -> Self {
        Self::new(true, params)
    }

    fn new(layer_aware: bool, params: LacrParams) -> Self {
        ChipRedirect {
            layer_aware,
            params,
            token: 0,
            ties: Vec::new(),
            channel_reads: Vec::new(),
            channel_gc: Vec::new(),
            means: None,
        }
    }

    /// True for LaCR.
    pub fn is_layer_aware(&self) -> bool {
        self.layer_aware
    }

    /// Estimated queue time (Eq. 1) a write joining `die` would see, in ns, as the policy
    /// computes it when placing the next write (for tests and diagnostics).
    /// With [`LacrParams::include_own_write`], the new write is assumed to go to the
    /// die's plane with index `plane_in_die`.
    pub fn estimate(&mut self, view: &dyn DeviceView, die: DieId, plane_in_die: u32) -> u64 {
        self.prepare(view);
        self.die_estimate(view, die, plane_in_die)
    }

    /// Array read time of `page` (or the mean) for this flavour.
    fn read_array(&self, geo: &Geometry, t: &Timing, page: Option<u32>) -> u64 {
        match page {
            Some(p) if self.layer_aware => t.read_array(p).as_ns(),
            Some(p) => t.t_r[geo.page_type_of(p).index()].as_ns(),
            None => self.means.expect("prepared").0,
        }
    }

    /// Array program time of `page` (or the mean) for this flavour.
    fn program_array(&self, geo: &Geometry, t: &Timing, page: Option<u32>) -> u64 {
        match page {
            Some(p) if self.layer_aware => t.program_array(p).as_ns(),
            Some(p) => t.t_prog[geo.page_type_of(p).index()].as_ns(),
            None => self.means.expect("prepared").1,
        }
    }

    /// Eq. 5: command + array + transfer.
    fn read_time(&self, geo: &Geometry, t: &Timing, op: &PendingOp) -> u64 {
        t.t_cmd_read.as_ns() + self.read_array(geo, t, op.page) + t.transfer(op.bytes as u64).as_ns()
    }

    /// Per-call scratch: channel read sums and GC flags; the means on first use.
    fn prepare(&mut self, view: &dyn DeviceView) {
        let geo = view.geometry();
        let t = view.timing();
        if self.means.is_none() {
            let ppb = geo.pages_per_block();
            let (mut r, mut w) = (0u64, 0u64);
            for p in 0..ppb {
                if self.layer_aware {
                    r += t.read_array(p).as_ns();
                    w += t.program_array(p).as_ns();
                } else {
                    let ty = geo.page_type_of(p).index();
                    r += t.t_r[ty].as_ns();
                    w += t.t_prog[ty].as_ns();
                }
            }
            self.means = Some((r / ppb as u64, w / ppb as u64));
        }
        let nc = geo.channels() as usize;
        self.channel_reads.clear();
        self.channel_reads.resize(nc, 0);
        self.channel_gc.clear();
        self.channel_gc.resize(nc, false);
        for d in 0..geo.total_dies() {
            let die = DieId(d);
            let ch = geo.channel_of_die(die).idx();
            if view.die_gc_active(die) {
                self.channel_gc[ch] = true;
            }
            if self.params.read_scope == ReadScope::Channel {
                let mut sum = 0u64;
                view.for_each_pending(die, &mut |op| {
                    if op.is_read {
                        sum += self.read_time(geo, t, &op);
                    }
                });
                self.channel_reads[ch] += sum;
            }
        }
    }

    /// Eq. 1 for `die` (after [`Self::prepare`]); the new write would go to its plane
    /// `plane_in_die`.
    fn die_estimate(&self, view: &dyn DeviceView, die: DieId, plane_in_die: u32) -> u64 {
        let geo = view.geometry();
        let t = view.timing();
        let ppb = geo.pages_per_block();
        let first_plane = die.0 * geo.planes_per_die();
        let tracked = self.params.pending_write_layer == PendingWriteLayer::Tracked;
        // Writes queued ahead per plane of the die (planes_per_die ≤ 64 by validation).
        let mut ahead = [0u32; 64];
        let mut reads = 0u64;
        let mut writes = 0u64;
        view.for_each_pending(die, &mut |op| {
            if op.is_read {
                if self.params.read_scope == ReadScope::Die {
                    reads += self.read_time(geo, t, &op);
                }
                return;
            }
            let page = if tracked {
                let i = (op.plane.0 - first_plane) as usize;
                let k = ahead[i];
                ahead[i] += 1;
                view.next_write_page(op.plane).map(|p| ((p as u64 + k as u64) % ppb as u64) as u32)
            } else {
                None
            };
            // Eq. 9: W × speed(layer) + size × T_c.
            writes += self.program_array(geo, t, page) + t.transfer(op.bytes as u64).as_ns();
        });
        if self.params.read_scope == ReadScope::Channel {
            reads = self.channel_reads[geo.channel_of_die(die).idx()];
        }
        if self.params.include_own_write {
            let plane = PlaneId(first_plane + plane_in_die);
            let k = ahead[plane_in_die as usize] as u64;
            let page = view.next_write_page(plane).map(|p| ((p as u64 + k) % ppb as u64) as u32);
            writes += self.program_array(geo, t, page) + t.transfer(geo.page_size_bytes() as u64).as_ns();
        }
        let gc = if view.die_gc_active(die) { t.t_bers.as_ns() } else { 0 };
        let remain = view.die_free_at(die).saturating_since(view.now()).as_ns();
        reads + writes + gc + remain
    }
}

impl Placement for ChipRedirect {
    fn place_write(&mut self, _lpn: Lpn, static_plane: PlaneId, view: &dyn DeviceView) -> Option<PlaneId> {
        self.prepare(view);
        let geo = view.geometry();
        let dpc = geo.dies_per_chip();
        let cpc = geo.chips_per_channel();
        let die_in_chip = geo.die_of_plane(static_plane).0 % dpc;
        let plane_idx = geo.plane_index_in_die(static_plane);
        let all_gc = self.channel_gc.iter().all(|&g| g);
        // Algorithm 1 (with its evident `else` restored: a new minimum starts the tie list
        // with that chip once, not twice).
        self.token = self.token.wrapping_add(1);
        let mut shortest = u64::MAX;
        let mut ties = std::mem::take(&mut self.ties);
        ties.clear();
        for chip in 0..geo.total_chips() {
            let ch = ChannelId(chip / cpc);
            if self.channel_gc[ch.idx()] && !all_gc {
                continue;
            }
            let q = self.die_estimate(view, DieId(chip * dpc + die_in_chip), plane_idx);
            if q < shortest {
                shortest = q;
                ties.clear();
                ties.push(chip);
            } else if q == shortest {
                ties.push(chip);
            }
        }
        let chip = ties[(self.token % ties.len() as u64) as usize];
        self.ties = ties;
        let die = DieId(chip * dpc + die_in_chip);
        Some(geo.plane_of_die(die, plane_idx))
    }
}
