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

/// What OCR or LaCR counted about its decisions ([`Placement::redirect_counters`]).
///
/// Every decision computes the estimate of both flavours for every candidate chip (the
/// policy's own, and the other's in the shadow: LaCR's per-layer array times against
/// OCR's base times, the same token for ties), so a run of either policy tells how
/// often layer awareness changes the choice and by how much the estimates differ.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RedirectCounters {
    /// Writes placed.
    pub decisions: u64,
    /// Decisions where the other flavour would have chosen another chip.
    pub choice_differs: u64,
    /// Decisions where several chips shared the least estimate (the token chose).
    pub ties: u64,
    /// Decisions whose least estimate was 0 (an idle chip with nothing queued: no
    /// array time enters the comparison, so layer awareness cannot change it).
    pub zero_estimate: u64,
    /// Σ over decisions of the chosen chip's estimate under the policy's own flavour, ns.
    pub estimate_ns: u64,
    /// Σ over decisions of |LaCR's − OCR's estimate| of the chosen chip, ns.
    pub estimate_gap_ns: u64,
    /// Σ over decisions where the choices differ of LaCR's estimate of OCR's choice
    /// minus LaCR's estimate of LaCR's choice, ns: what layer awareness expects to save.
    pub differing_gain_ns: u64,
}

/// OCR / LaCR chip redirection (see the module docs).
#[derive(Clone, Debug)]
pub struct ChipRedirect {
    layer_aware: bool,
    params: LacrParams,
    /// Algorithm 1's token, incremented on every call.
    token: u64,
    /// Chips tied at the least estimate, per flavour (index 0 OCR, 1 LaCR; scratch).
    ties: [Vec<u32>; 2],
    /// Per channel and flavour: estimated time of its queued reads (scratch).
    channel_reads: Vec<[u64; 2]>,
    /// Per channel: some die of it is doing GC (scratch).
    channel_gc: Vec<bool>,
    /// Per chip: both flavours' estimates at this decision (scratch; `u64::MAX` for a
    /// skipped chip).
    chip_est: Vec<[u64; 2]>,
    /// Mean array (read, program) time per page, per flavour, computed on first use.
    means: Option<[(u64, u64); 2]>,
    counters: RedirectCounters,
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
            ties: [Vec::new(), Vec::new()],
            channel_reads: Vec::new(),
            channel_gc: Vec::new(),
            chip_est: Vec::new(),
            means: None,
            counters: RedirectCounters::default(),
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
        self.die_estimate(view, die, plane_in_die)[usize::from(self.layer_aware)]
    }

    /// Array read time of `page` (or the mean) for the flavour `aware`.
    fn read_array(&self, geo: &Geometry, t: &Timing, page: Option<u32>, aware: bool) -> u64 {
        match page {
            Some(p) if aware => t.read_array(p).as_ns(),
            Some(p) => t.t_r[geo.page_type_of(p).index()].as_ns(),
            None => self.means.expect("prepared")[usize::from(aware)].0,
        }
    }

    /// Array program time of `page` (or the mean) for the flavour `aware`.
    fn program_array(&self, geo: &Geometry, t: &Timing, page: Option<u32>, aware: bool) -> u64 {
        match page {
            Some(p) if aware => t.program_array(p).as_ns(),
            Some(p) => t.t_prog[geo.page_type_of(p).index()].as_ns(),
            None => self.means.expect("prepared")[usize::from(aware)].1,
        }
    }

    /// Eq. 5: command + array + transfer, for both flavours (OCR, LaCR).
    fn read_time(&self, geo: &Geometry, t: &Timing, op: &PendingOp) -> [u64; 2] {
        let fixed = t.t_cmd_read.as_ns() + t.transfer(op.bytes as u64).as_ns();
        [false, true].map(|aware| fixed + self.read_array(geo, t, op.page, aware))
    }

    /// The counters of the decisions so far.
    pub fn counters(&self) -> RedirectCounters {
        self.counters
    }

    /// Per-call scratch: channel read sums and GC flags; the means on first use.
    fn prepare(&mut self, view: &dyn DeviceView) {
        let geo = view.geometry();
        let t = view.timing();
        if self.means.is_none() {
            let ppb = geo.pages_per_block();
            let (mut r, mut w) = ([0u64; 2], [0u64; 2]);
            for p in 0..ppb {
                let ty = geo.page_type_of(p).index();
                r[0] += t.t_r[ty].as_ns();
                w[0] += t.t_prog[ty].as_ns();
                r[1] += t.read_array(p).as_ns();
                w[1] += t.program_array(p).as_ns();
            }
            let n = ppb as u64;
            self.means = Some([(r[0] / n, w[0] / n), (r[1] / n, w[1] / n)]);
        }
        let nc = geo.channels() as usize;
        self.channel_reads.clear();
        self.channel_reads.resize(nc, [0; 2]);
        self.channel_gc.clear();
        self.channel_gc.resize(nc, false);
        for d in 0..geo.total_dies() {
            let die = DieId(d);
            let ch = geo.channel_of_die(die).idx();
            if view.die_gc_active(die) {
                self.channel_gc[ch] = true;
            }
            if self.params.read_scope == ReadScope::Channel {
                let mut sum = [0u64; 2];
                view.for_each_pending(die, &mut |op| {
                    if op.is_read {
                        let r = self.read_time(geo, t, &op);
                        sum = [sum[0] + r[0], sum[1] + r[1]];
                    }
                });
                let c = &mut self.channel_reads[ch];
                *c = [c[0] + sum[0], c[1] + sum[1]];
            }
        }
    }

    /// Eq. 1 for `die` (after [`Self::prepare`]), for both flavours (OCR, LaCR); the new
    /// write would go to its plane `plane_in_die`.
    fn die_estimate(&self, view: &dyn DeviceView, die: DieId, plane_in_die: u32) -> [u64; 2] {
        let geo = view.geometry();
        let t = view.timing();
        let ppb = geo.pages_per_block();
        let first_plane = die.0 * geo.planes_per_die();
        let tracked = self.params.pending_write_layer == PendingWriteLayer::Tracked;
        // Writes queued ahead per plane of the die (planes_per_die ≤ 64 by validation).
        let mut ahead = [0u32; 64];
        let mut reads = [0u64; 2];
        let mut writes = [0u64; 2];
        view.for_each_pending(die, &mut |op| {
            if op.is_read {
                if self.params.read_scope == ReadScope::Die {
                    let r = self.read_time(geo, t, &op);
                    reads = [reads[0] + r[0], reads[1] + r[1]];
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
            let xfer = t.transfer(op.bytes as u64).as_ns();
            for aware in [false, true] {
                writes[usize::from(aware)] += self.program_array(geo, t, page, aware) + xfer;
            }
        });
        if self.params.read_scope == ReadScope::Channel {
            reads = self.channel_reads[geo.channel_of_die(die).idx()];
        }
        if self.params.include_own_write {
            let plane = PlaneId(first_plane + plane_in_die);
            let k = ahead[plane_in_die as usize] as u64;
            let page = view.next_write_page(plane).map(|p| ((p as u64 + k) % ppb as u64) as u32);
            let xfer = t.transfer(geo.page_size_bytes() as u64).as_ns();
            for aware in [false, true] {
                writes[usize::from(aware)] += self.program_array(geo, t, page, aware) + xfer;
            }
        }
        let gc = if view.die_gc_active(die) { t.t_bers.as_ns() } else { 0 };
        let remain = view.die_free_at(die).saturating_since(view.now()).as_ns();
        [0, 1].map(|f| reads[f] + writes[f] + gc + remain)
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
        // Both flavours are evaluated (index 0 OCR, 1 LaCR) so the counters can tell how
        // often layer awareness changes the choice; the policy follows its own.
        self.token = self.token.wrapping_add(1);
        let mut shortest = [u64::MAX; 2];
        let mut ties = std::mem::take(&mut self.ties);
        ties[0].clear();
        ties[1].clear();
        let mut est = std::mem::take(&mut self.chip_est);
        est.clear();
        est.resize(geo.total_chips() as usize, [u64::MAX; 2]);
        for chip in 0..geo.total_chips() {
            let ch = ChannelId(chip / cpc);
            if self.channel_gc[ch.idx()] && !all_gc {
                continue;
            }
            let q = self.die_estimate(view, DieId(chip * dpc + die_in_chip), plane_idx);
            est[chip as usize] = q;
            for f in 0..2 {
                if q[f] < shortest[f] {
                    shortest[f] = q[f];
                    ties[f].clear();
                    ties[f].push(chip);
                } else if q[f] == shortest[f] {
                    ties[f].push(chip);
                }
            }
        }
        let pick = [0, 1].map(|f| ties[f][(self.token % ties[f].len() as u64) as usize]);
        let own = usize::from(self.layer_aware);
        self.count(&est, &pick, ties[own].len());
        self.ties = ties;
        self.chip_est = est;
        let die = DieId(pick[own] * dpc + die_in_chip);
        Some(geo.plane_of_die(die, plane_idx))
    }

    fn redirect_counters(&self) -> Option<RedirectCounters> {
        Some(self.counters)
    }
}

impl ChipRedirect {
    /// Count one decision: `est` = both flavours' estimates per chip, `pick` = the chip
    /// each flavour (OCR, LaCR) chose, `ties` the chips tied at the policy's own least.
    fn count(&mut self, est: &[[u64; 2]], pick: &[u32; 2], ties: usize) {
        let own = usize::from(self.layer_aware);
        let chosen = est[pick[own] as usize];
        let least = chosen[own];
        let differs = pick[0] != pick[1];
        let gain =
            if differs { est[pick[0] as usize][1].saturating_sub(est[pick[1] as usize][1]) } else { 0 };
        let c = &mut self.counters;
        c.decisions += 1;
        c.choice_differs += u64::from(differs);
        c.ties += u64::from(ties > 1);
        c.zero_estimate += u64::from(least == 0);
        c.estimate_ns += least;
        c.estimate_gap_ns += chosen[0].abs_diff(chosen[1]);
        c.differing_gain_ns += gain;
    }
}
