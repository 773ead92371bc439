//! MBM (Li et al., "Maximizing Bandwidth Management FTL Based on Read and Write
//! Asymmetry of Flash Memory", `papers/mbm-ftl.txt`): the write strategy's
//! Channel_Max_Subs (§IV-A, Algorithm 1, reconstructed: [`channel_max_subs`]) and the
//! Minimizing Chip consumption Strategy (§IV-C, Fig. 7: [`McsPlacement`], config
//! `sched.placement = "mcs"`). The read strategy's conditional parallel read (RS, §IV-B)
//! is the `mbm` transaction scheduler ([`crate::SchedulerKind::Mbm`]).
//!
//! **Parallelism degree** (§IV, "the parallelism of a flash chip: the number of flash
//! pages that can be simultaneously written in this chip with one program latency"):
//! per die, the largest number of its planes one multi-plane program can write now —
//! planes whose next host-write addresses ([`DeviceView::next_write_addr`]) share block
//! index and page, or, when the FTL picks the plane inside the die, the room left in the
//! die's aligned row ([`DeviceView::die_row_room`]) — counting only planes no queued
//! write has claimed; a chip's degree is the sum over its dies. A die that is busy,
//! collecting garbage or holding queued reads (the read goes first and makes it busy)
//! contributes 0: MCS selects among *idle* chips. The paper's example (two dies of two
//! planes, die 1's planes at different offsets) has degree 2 + 1 = 3.
//!
//! Rules, the defects of the printed Algorithm 1 and every open point: `docs/policies.md`
//! ("mcs", "Channel_Max_Subs").

use lamina_nand_model::{ChipId, DieId, Lpn, PlaneId};
use serde::{Deserialize, Serialize};

use crate::{DeviceView, PendingSums, Placement};

/// Channel_Max_Subs (mbm-ftl Algorithm 1, reconstructed): the level to which a channel's
/// sub-requests may rise when `writes` new write sub-requests are spread over channels
/// whose current sub-requests (queued reads plus writes under way) are `loads`.
///
/// Water filling: the least-loaded channels are raised first, all to the same level,
/// until the new writes are used up; each channel may then take `level − load` of them
/// (none if its load is at or above the level), so no channel gets more than its even
/// share. The level is rounded up, so the channels' shares cover `writes` (they exceed
/// it by less than the number of channels raised). `loads` is sorted in place (it is the
/// caller's scratch). With no channels the answer is 0.
///
/// ```
/// use lamina_sched::mbm::channel_max_subs;
/// // Loads 3, 1, 4, 1 and 5 new writes: both channels at 1 rise to 3 (4 writes), then
/// // the three channels at 3 share the last one: the level is 3 + ⌈1 / 3⌉ = 4.
/// assert_eq!(channel_max_subs(&mut [3, 1, 4, 1], 5), 4);
/// ```
pub fn channel_max_subs(loads: &mut [u32], writes: u32) -> u32 {
    loads.sort_unstable();
    let Some(&highest) = loads.last() else { return 0 };
    let mut w = u64::from(writes);
    for i in 1..loads.len() {
        // Raising the i lowest channels from loads[i − 1] to loads[i] takes this many.
        let step = u64::from(loads[i] - loads[i - 1]) * i as u64;
        if w <= step {
            return level(loads[i - 1], w, i as u64);
        }
        w -= step;
    }
    level(highest, w, loads.len() as u64)
}

/// `base + ⌈w / n⌉`, saturating.
#[inline]
fn level(base: u32, w: u64, n: u64) -> u32 {
    u32::try_from(u64::from(base) + w.div_ceil(n)).unwrap_or(u32::MAX)
}

/// What MCS does when no idle chip can take all of the sub-writes its channel's share
/// still asks for (the request needs "at least two write operations", §IV-C).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum McsOverflow {
    /// The idle chip with the least parallelism degree takes what it can, and the rest
    /// is placed again by the same rule ("MCS first selects an idle chip with the least
    /// parallelism degree"; the remainder then goes to the chip that fits it, Fig. 7's
    /// second choice, the chip of maximal degree when only it fits).
    #[default]
    Least,
    /// The idle chip with the greatest degree takes what it can first (fewest chips per
    /// request; the paper's second choice made first).
    Most,
}

/// Options of the `mcs` placement (`[sched.mcs]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct McsParams {
    /// Cap each channel's share of a request's sub-writes by Channel_Max_Subs (WS,
    /// §IV-A): a chip takes at most `min(degree, channel's share left)`. Default true.
    pub channel_max_subs: bool,
    /// The rule when no idle chip can take the whole share.
    pub overflow: McsOverflow,
    /// RS's read-intensive area (§IV-B): a host read of **more** than this many pages
    /// marks the logical areas it touches read-intensive, and MCS then places writes to
    /// those areas by the static striping over all dies instead of packing them onto one
    /// chip. The paper gives no value; default 4 (32 KiB of 8 KiB pages). 0 turns the
    /// layout off (the ablation).
    pub read_intensive_pages: u32,
    /// RS's read-intensive area: the size of a logical area in pages (aligned groups of
    /// LPNs, at least 1). The paper gives none; default 64 (512 KiB of 8 KiB pages).
    pub area_pages: u32,
    /// RS's reallocation (§IV-B): after a host read completes, the pages it found on a
    /// channel beyond the balanced share (`ceil(pages / channels)`, Channel_Max_Subs'
    /// target for the request's size) are migrated in the background — a flash read and
    /// a rewrite of the same logical page on a die of the channel that holds fewest of
    /// the request's pages. Default false (off).
    pub reallocate: bool,
    /// Reallocation: at most this many page migrations in flight; a request whose
    /// excess does not fit is skipped (counted). At least 1; default 32.
    pub reallocate_queue: u32,
}

/// Default `sched.mcs.reallocate_queue`.
pub const DEFAULT_REALLOCATE_QUEUE: u32 = 32;

/// Default `sched.mcs.read_intensive_pages`.
pub const DEFAULT_READ_INTENSIVE_PAGES: u32 = 4;
/// Default `sched.mcs.area_pages`.
pub const DEFAULT_AREA_PAGES: u32 = 64;

impl Default for McsParams {
    fn default() -> Self {
        McsParams {
            channel_max_subs: true,
            overflow: McsOverflow::Least,
            read_intensive_pages: DEFAULT_READ_INTENSIVE_PAGES,
            area_pages: DEFAULT_AREA_PAGES,
            reallocate: false,
            reallocate_queue: DEFAULT_REALLOCATE_QUEUE,
        }
    }
}

impl McsParams {
    /// True if every option has its default value (the config omits the section then).
    pub fn is_default(&self) -> bool {
        *self == McsParams::default()
    }

    /// Check the options; the error names the key and the remedy.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if self.area_pages == 0 {
            return Err(("sched.mcs.area_pages", "0: an area holds at least 1 page (default 64)".into()));
        }
        if self.reallocate_queue == 0 {
            return Err((
                "sched.mcs.reallocate_queue",
                "0: at least 1 migration must fit (default 32); turn reallocation off with reallocate = false"
                    .into(),
            ));
        }
        Ok(())
    }
}

/// What MCS counted about its decisions ([`Placement::mcs_counters`]); the report's
/// `placement.mcs` section (schema v7).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct McsCounters {
    /// Sub-writes placed.
    pub decisions: u64,
    /// Requests (or flush batches) announced ([`Placement::begin_request`]).
    pub requests: u64,
    /// Sub-writes that went to the chip already chosen for their request.
    pub continued: u64,
    /// Chip choices where an idle chip could take the whole share: the least such degree
    /// won (best fit).
    pub best_fit: u64,
    /// Chip choices where none could ([`McsOverflow`]).
    pub overflow: u64,
    /// Requests whose channel shares were all used up or sat on busy channels, so MCS
    /// chose among all idle chips for the rest of the request.
    pub quota_relaxed: u64,
    /// Sub-writes with no idle chip of free degree anywhere: placed on the static plane.
    pub fallback_static: u64,
    /// RS: logical areas marked read-intensive (each counted once, when a long read first
    /// touches it).
    pub read_intensive_areas: u64,
    /// RS: sub-writes to a read-intensive area, placed by the static striping over all
    /// dies rather than by the chip choice.
    pub read_intensive_writes: u64,
    /// RS reallocation: host reads whose pages exceeded a channel's balanced share and
    /// started migrations (the engine fills these in).
    #[serde(skip_serializing_if = "is_zero")]
    #[schemars(default)]
    pub realloc_requests: u64,
    /// RS reallocation: pages migrated (read and rewritten on another channel).
    #[serde(skip_serializing_if = "is_zero")]
    #[schemars(default)]
    pub realloc_pages: u64,
    /// RS reallocation: excess pages not migrated (queue full, no die on the target
    /// channel, or the page was written, trimmed or moved while its copy was read).
    #[serde(skip_serializing_if = "is_zero")]
    #[schemars(default)]
    pub realloc_skipped: u64,
    /// RS reallocation: of `realloc_skipped`, excess pages refused because every
    /// migration slot was taken (`sched.mcs.reallocate_queue`; schema v12).
    #[serde(skip_serializing_if = "is_zero")]
    #[schemars(default)]
    pub realloc_skipped_queue_full: u64,
    /// RS reallocation: of `realloc_skipped`, excess pages with no channel below its
    /// balanced share to go to, or bound to their plane (schema v12).
    #[serde(skip_serializing_if = "is_zero")]
    #[schemars(default)]
    pub realloc_skipped_no_target: u64,
    /// RS reallocation: of `realloc_skipped`, migrations started and then dropped because
    /// their page was rewritten, trimmed or moved by GC (or a host write of it queued)
    /// before the rewrite (schema v12).
    #[serde(skip_serializing_if = "is_zero")]
    #[schemars(default)]
    pub realloc_skipped_stale: u64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// MCS, Minimizing Chip consumption Strategy (mbm-ftl §IV-C, Fig. 7), with WS's
/// Channel_Max_Subs (§IV-A) spreading each request over channels.
///
/// Per request of `n` sub-writes ([`Placement::begin_request`]): every channel gets a
/// share `Channel_Max_Subs − load` ([`channel_max_subs`]; loads = queued transactions +
/// busy dies of the channel), the rounding trimmed so the shares sum to `n`. Each sub-write then goes to the chip already chosen for
/// the request while that chip has degree and share left; otherwise a chip is chosen:
/// among idle chips with free degree on channels with share left, the one with the
/// least degree that still takes the whole share its channel asks for,
/// `min(remaining sub-writes, channel share)` (best fit: chips of high parallelism stay
/// free for later requests), ties to the lowest chip index; if none can,
/// [`McsOverflow`]. Inside the chip, the die of greatest degree (lowest index on a tie)
/// and the first plane of its widest free group, so a request's sub-writes on a die
/// form a multi-plane program. No idle chip anywhere: the static plane.
#[derive(Clone, Debug, Default)]
pub struct McsPlacement {
    params: McsParams,
    /// Sub-writes of the current request not placed yet.
    remaining: u32,
    /// The current request's channel shares have been computed.
    shares_set: bool,
    /// Per channel: sub-writes of the current request it may still take.
    share: Vec<u32>,
    /// The chip chosen for the current request and how many more sub-writes it takes.
    chip: Option<(ChipId, u32)>,
    /// Per die: (degree, plane the next sub-write takes there) (scratch).
    die_deg: Vec<(u32, PlaneId)>,
    /// Per chip: degree (scratch).
    chip_deg: Vec<u32>,
    /// Per channel: load, and a copy sorted by [`channel_max_subs`] (scratch).
    loads: Vec<u32>,
    sorted: Vec<u32>,
    /// RS: one bit per logical area, set once the area is read-intensive.
    hot_areas: Vec<u64>,
    counters: McsCounters,
}

impl McsPlacement {
    /// MCS with `params`.
    pub fn new(params: McsParams) -> Self {
        McsPlacement { params, ..Default::default() }
    }

    /// RS: logical page `lpn` lies in a read-intensive area.
    fn read_intensive(&self, lpn: Lpn) -> bool {
        if self.params.read_intensive_pages == 0 {
            return false;
        }
        let area = lpn.0 / u64::from(self.params.area_pages);
        self.hot_areas.get((area / 64) as usize).is_some_and(|w| w >> (area % 64) & 1 == 1)
    }

    /// Fill the per-die and per-chip degrees from the view.
    fn scan(&mut self, view: &dyn DeviceView, static_plane: PlaneId) {
        let g = view.geometry();
        self.die_deg.resize(g.total_dies() as usize, (0, PlaneId(0)));
        self.chip_deg.clear();
        self.chip_deg.resize(g.total_chips() as usize, 0);
        let static_idx = g.plane_index_in_die(static_plane);
        for d in 0..g.total_dies() {
            let die = DieId(d);
            let deg = die_degree(view, die, static_idx);
            self.die_deg[die.idx()] = deg;
            self.chip_deg[g.chip_of_die(die).idx()] += deg.0;
        }
    }

    /// The current request's channel shares (Channel_Max_Subs), or no cap.
    fn set_shares(&mut self, view: &dyn DeviceView) {
        let g = view.geometry();
        let channels = g.channels() as usize;
        self.share.clear();
        if !self.params.channel_max_subs {
            self.share.resize(channels, u32::MAX);
            return;
        }
        self.loads.clear();
        self.loads.resize(channels, 0);
        for d in 0..g.total_dies() {
            let die = DieId(d);
            let load = view.die_queue_len(die).saturating_add(u32::from(!view.die_idle(die)));
            let l = &mut self.loads[g.channel_of_die(die).idx()];
            *l = l.saturating_add(load);
        }
        self.sorted.clear();
        self.sorted.extend_from_slice(&self.loads);
        let level = channel_max_subs(&mut self.sorted, self.remaining);
        // Every channel below the level rises to one below it; the writes left (fewer
        // than the channels below the level: the level is the least that covers them)
        // go one each to those channels, least loaded first, ties by index. The shares
        // then sum to exactly the request's sub-writes.
        self.share.extend(self.loads.iter().map(|&l| level.saturating_sub(1).saturating_sub(l)));
        let mut left = self.remaining.saturating_sub(self.share.iter().sum::<u32>());
        let mut prev = None;
        for &lv in &self.sorted {
            if left == 0 || lv >= level {
                break;
            }
            if prev == Some(lv) {
                continue;
            }
            prev = Some(lv);
            for (sh, _) in self.share.iter_mut().zip(&self.loads).filter(|&(_, &l)| l == lv) {
                if left > 0 {
                    *sh += 1;
                    left -= 1;
                }
            }
        }
    }

    /// Choose a chip for the rest of the current request's share (see the type docs);
    /// `None` if no idle chip has free degree on a channel with share left.
    fn choose(&mut self, view: &dyn DeviceView) -> Option<(ChipId, u32)> {
        let cpc = view.geometry().chips_per_channel();
        // (degree, chip, share it takes)
        let mut fit: Option<(u32, u32, u32)> = None;
        let mut over: Option<(u32, u32, u32)> = None;
        for (c, &deg) in self.chip_deg.iter().enumerate() {
            let need = self.remaining.min(self.share[c / cpc as usize]);
            if deg == 0 || need == 0 {
                continue;
            }
            let c = c as u32;
            if deg >= need && fit.is_none_or(|(d, _, _)| deg < d) {
                fit = Some((deg, c, need));
            }
            let better = match self.params.overflow {
                McsOverflow::Least => over.is_none_or(|(d, _, _)| deg < d),
                McsOverflow::Most => over.is_none_or(|(d, _, _)| deg > d),
            };
            if better {
                over = Some((deg, c, need));
            }
        }
        let (deg, c, need) = match (fit, over) {
            (Some(f), _) => {
                self.counters.best_fit += 1;
                f
            }
            (None, Some(o)) => {
                self.counters.overflow += 1;
                o
            }
            (None, None) => return None,
        };
        Some((ChipId(c), deg.min(need)))
    }

    /// Start a request of `pages` sub-writes.
    fn start(&mut self, pages: u32) {
        self.remaining = pages;
        self.shares_set = false;
        self.chip = None;
    }

    /// The die of `chip` with the greatest degree (lowest index on a tie) and its plane.
    fn plane_on(&self, view: &dyn DeviceView, chip: ChipId) -> Option<PlaneId> {
        let dpc = view.geometry().dies_per_chip();
        let mut best: Option<(u32, PlaneId)> = None;
        for d in chip.0 * dpc..(chip.0 + 1) * dpc {
            let (deg, plane) = self.die_deg[d as usize];
            if deg > 0 && best.is_none_or(|(b, _)| deg > b) {
                best = Some((deg, plane));
            }
        }
        best.map(|(_, p)| p)
    }
}

/// The parallelism degree of `chip` now, as MCS reads it (see the module docs): over
/// its dies that are idle with no queued reads and no GC, the widest group of planes
/// one multi-plane program can write, less the planes queued writes have claimed.
pub fn parallelism_degree(view: &dyn DeviceView, chip: ChipId) -> u32 {
    let dpc = view.geometry().dies_per_chip();
    (chip.0 * dpc..(chip.0 + 1) * dpc).map(|d| die_degree(view, DieId(d), 0).0).sum()
}

/// A die's parallelism degree now and the plane its next sub-write takes (see the module
/// docs); `static_idx` is the plane index used when the FTL picks the plane.
fn die_degree(view: &dyn DeviceView, die: DieId, static_idx: u32) -> (u32, PlaneId) {
    let g = view.geometry();
    let none = (0, g.plane_of_die(die, 0));
    if !view.die_idle(die) || view.die_gc_active(die) {
        return none;
    }
    // From the view's running sums of the queue (a scan per placed write made a request
    // burst at one instant quadratic: thousands queued on idle dies).
    let mut scanned = PendingSums::default();
    crate::lacr::scan_unless_kept(view, die, &mut scanned);
    let s = view.pending_sums(die).unwrap_or(&scanned);
    let writes: u32 = s.writes.iter().sum();
    let claimed = s.writes.iter().enumerate().filter(|&(_, &n)| n > 0).fold(0u64, |m, (i, _)| m | 1 << i);
    let reads = s.reads;
    if reads > 0 {
        return none;
    }
    if view.ftl_picks_plane(die) {
        return (view.die_row_room(die).saturating_sub(writes), g.plane_of_die(die, static_idx));
    }
    let ppd = g.planes_per_die();
    let key =
        |i: u32| view.next_write_addr(g.plane_of_die(die, i)).map(|(b, p)| (g.block_index_in_plane(b), p));
    let free = |i: u32| claimed & (1u64 << (i % 64)) == 0;
    let mut best = none;
    for i in (0..ppd).filter(|&i| free(i)) {
        // The first free plane of a group counts the whole group (later members fewer),
        // so the strict comparison keeps the group of lowest index on a tie.
        let k = key(i);
        let size =
            1 + if k.is_some() { (i + 1..ppd).filter(|&j| free(j) && key(j) == k).count() as u32 } else { 0 };
        if size > best.0 {
            best = (size, g.plane_of_die(die, i));
        }
    }
    best
}

impl Placement for McsPlacement {
    fn uses_pending_sums(&self) -> bool {
        true
    }

    fn begin_request(&mut self, pages: u32) {
        self.start(pages);
        self.counters.requests += 1;
    }

    fn place_write(&mut self, lpn: Lpn, static_plane: PlaneId, view: &dyn DeviceView) -> Option<PlaneId> {
        if self.remaining == 0 {
            // Not announced (or more sub-writes than announced): a request of one.
            self.start(1);
        }
        self.counters.decisions += 1;
        if self.read_intensive(lpn) {
            // RS's strict layout (§IV-B): the area's pages striped over all dies, so a
            // later long read of it finds them on different dies and channels.
            self.remaining -= 1;
            self.chip = None;
            self.counters.read_intensive_writes += 1;
            return Some(static_plane);
        }
        self.scan(view, static_plane);
        if !self.shares_set {
            self.set_shares(view);
            self.shares_set = true;
        }
        let cpc = view.geometry().chips_per_channel();
        let current = self.chip.filter(|&(c, left)| left > 0 && self.chip_deg[c.idx()] > 0);
        let chosen = match current {
            Some(c) => {
                self.counters.continued += 1;
                Some(c)
            }
            None => self.choose(view).or_else(|| {
                if self.share.iter().all(|&s| s == u32::MAX) {
                    return None;
                }
                // Every channel with share left is busy: spread over any idle chip.
                self.counters.quota_relaxed += 1;
                self.share.iter_mut().for_each(|s| *s = u32::MAX);
                self.choose(view)
            }),
        };
        self.remaining -= 1;
        let Some((chip, left)) = chosen else {
            self.chip = None;
            self.counters.fallback_static += 1;
            return Some(static_plane);
        };
        self.chip = Some((chip, left - 1));
        let s = &mut self.share[chip.idx() / cpc as usize];
        *s = s.saturating_sub(1);
        let plane = self.plane_on(view, chip).expect("a chip of free degree has a die of free degree");
        Some(plane)
    }

    fn mcs_counters(&self) -> Option<McsCounters> {
        Some(self.counters)
    }

    fn note_read(&mut self, first: Lpn, pages: u32) {
        if self.params.read_intensive_pages == 0 || pages <= self.params.read_intensive_pages {
            return;
        }
        let per = u64::from(self.params.area_pages);
        let (lo, hi) = (first.0 / per, (first.0 + u64::from(pages) - 1) / per);
        for area in lo..=hi {
            let (word, bit) = ((area / 64) as usize, area % 64);
            if word >= self.hot_areas.len() {
                self.hot_areas.resize(word + 1, 0);
            }
            if self.hot_areas[word] >> bit & 1 == 0 {
                self.hot_areas[word] |= 1 << bit;
                self.counters.read_intensive_areas += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hand-computed levels: each case states the water filling step by step.
    #[test]
    fn channel_max_subs_by_hand() {
        // No new writes: the level is the least load (nobody takes anything).
        assert_eq!(channel_max_subs(&mut [2, 5, 3, 2], 0), 2);
        // Equal loads 0: 8 writes over 4 channels, 2 each.
        assert_eq!(channel_max_subs(&mut [0, 0, 0, 0], 8), 2);
        // Equal loads, 9 writes: ⌈9 / 4⌉ = 3.
        assert_eq!(channel_max_subs(&mut [1, 1, 1, 1], 9), 1 + 3);
        // Loads 0, 4: the idle channel takes all 3 (fits below 4).
        assert_eq!(channel_max_subs(&mut [4, 0], 3), 3);
        // Loads 0, 4: exactly 4 raises it to 4; 6 raises both: 4 + ⌈2 / 2⌉ = 5.
        assert_eq!(channel_max_subs(&mut [4, 0], 4), 4);
        assert_eq!(channel_max_subs(&mut [4, 0], 6), 5);
        // Loads 3, 1, 4, 1 (sorted 1, 1, 3, 4), 5 writes: 1 → 3 costs 2 × 2 = 4, then 1
        // left for three channels at 3: level 3 + 1 = 4 (shares 1, 3, 0, 3).
        assert_eq!(channel_max_subs(&mut [3, 1, 4, 1], 5), 4);
        // The same with 10 writes: 4 to level 3, 3 to level 4, 3 left over four: 4 + 1.
        assert_eq!(channel_max_subs(&mut [3, 1, 4, 1], 10), 5);
        // One channel: its load plus all writes. No channel: 0.
        assert_eq!(channel_max_subs(&mut [7], 2), 9);
        assert_eq!(channel_max_subs(&mut [], 2), 0);
    }

    /// The shares `level − load` never leave a write without a channel, and exceed the
    /// writes by less than the number of channels.
    #[test]
    fn channel_max_subs_shares_cover_the_writes() {
        let cases: [&[u32]; 5] = [&[0, 0, 0, 0], &[3, 1, 4, 1], &[9, 0, 2], &[5], &[1, 2, 3, 4, 5, 6, 7, 8]];
        for loads in cases {
            for w in 0..40u32 {
                let level = channel_max_subs(&mut loads.to_vec(), w);
                let total: u32 = loads.iter().map(|&l| level.saturating_sub(l)).sum();
                assert!(total >= w && total < w + loads.len() as u32 || w == 0, "{loads:?} {w}: {total}");
                // Minimal: one level lower would not cover them.
                let lower: u32 = loads.iter().map(|&l| (level.saturating_sub(1)).saturating_sub(l)).sum();
                assert!(w == 0 || lower < w, "{loads:?} {w}: level {level} not minimal");
            }
        }
    }
}
