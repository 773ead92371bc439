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

/// Which page of a queued read gives its array time in the estimate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReadPage {
    /// The page the read's logical page was mapped to when the read was queued: the
    /// engine keeps running sums of the queues ([`DeviceView::pending_sums`]), so an
    /// estimate costs O(dies + chips × planes per die) whatever the queue length.
    #[default]
    Queued,
    /// The page it is mapped to at the decision: what Lamina did until 2026-12-03.
    /// Differs from `queued` only for reads whose page a write or GC relocated while they
    /// waited. With an FTL that logs the pages whose mapping changes (every FTL of
    /// Lamina's) the engine keeps the sums and, before each decision, refreshes the
    /// entries of the queued reads of those pages ([`Placement::pending_reads_current`]);
    /// with an FTL that keeps no log (a user's own) each estimate scans the die's queue
    /// and looks every queued read up again, quadratic in the queue length on a
    /// saturated trace.
    Current,
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
    /// Page of a queued read ([`ReadPage`]).
    pub read_page: ReadPage,
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

/// What one pending transaction adds to its die's [`PendingSums`]. The engine keeps
/// each transaction's entry while it is queued and takes the same entry off when it
/// leaves, so the sums stay exact.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PendingEntry {
    read: bool,
    unmapped: bool,
    plane_in_die: u8,
    /// Reads: command plus transfer time; writes: transfer time, ns.
    fixed_ns: u64,
    /// Reads: array time of the page, [base (OCR), per-layer (LaCR)], ns (0 if unmapped).
    array_ns: [u64; 2],
}

impl PendingEntry {
    /// A read of `bytes` bytes of page `page` within its block (`None`: not mapped; the
    /// estimate then takes the mean read time). Eq. 5 without the array time's flavour.
    pub fn read(geo: &Geometry, t: &Timing, bytes: u32, page: Option<u32>) -> PendingEntry {
        PendingEntry {
            read: true,
            unmapped: page.is_none(),
            plane_in_die: 0,
            fixed_ns: t.t_cmd_read.as_ns() + t.transfer(u64::from(bytes)).as_ns(),
            array_ns: page
                .map_or([0; 2], |p| [t.t_r[geo.page_type_of(p).index()].as_ns(), t.read_array(p).as_ns()]),
        }
    }

    /// A program of `bytes` bytes bound for the die's plane of index `plane_in_die`
    /// (< 64, as validation guarantees).
    pub fn write(t: &Timing, bytes: u32, plane_in_die: u32) -> PendingEntry {
        debug_assert!(plane_in_die < 64);
        PendingEntry {
            plane_in_die: plane_in_die as u8,
            fixed_ns: t.transfer(u64::from(bytes)).as_ns(),
            ..PendingEntry::default()
        }
    }

    /// The entry of `op` (what a scan of the die's queue sees; the engine keeps the same
    /// entry for each queued transaction).
    pub fn of(geo: &Geometry, t: &Timing, op: &PendingOp) -> PendingEntry {
        if op.is_read {
            PendingEntry::read(geo, t, op.bytes, op.page)
        } else {
            PendingEntry::write(t, op.bytes, geo.plane_index_in_die(op.plane))
        }
    }
}

/// Sums over a die's pending transactions: what OCR's and LaCR's queue-time estimate
/// (Eq. 1–9) and MCS's parallelism degree need of them ([`DeviceView::pending_sums`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PendingSums {
    /// Reads pending.
    pub reads: u64,
    /// Reads whose page was not mapped when queued.
    pub reads_unmapped: u64,
    /// Σ command and transfer time of the reads, ns.
    pub read_fixed_ns: u64,
    /// Σ array time of the mapped reads, [base, per-layer], ns.
    pub read_array_ns: [u64; 2],
    /// Σ transfer time of the programs, ns.
    pub write_transfer_ns: u64,
    /// Programs pending per plane of the die (by plane index within the die).
    pub writes: [u32; 64],
}

impl Default for PendingSums {
    fn default() -> PendingSums {
        PendingSums {
            reads: 0,
            reads_unmapped: 0,
            read_fixed_ns: 0,
            read_array_ns: [0; 2],
            write_transfer_ns: 0,
            writes: [0; 64],
        }
    }
}

impl PendingSums {
    /// Add a transaction's entry.
    #[inline]
    pub fn add(&mut self, e: &PendingEntry) {
        if e.read {
            self.reads += 1;
            self.reads_unmapped += u64::from(e.unmapped);
            self.read_fixed_ns += e.fixed_ns;
            self.read_array_ns =
                [self.read_array_ns[0] + e.array_ns[0], self.read_array_ns[1] + e.array_ns[1]];
        } else {
            self.write_transfer_ns += e.fixed_ns;
            self.writes[usize::from(e.plane_in_die)] += 1;
        }
    }

    /// Take off an entry added before (panics in debug builds if it was not).
    #[inline]
    pub fn remove(&mut self, e: &PendingEntry) {
        if e.read {
            self.reads -= 1;
            self.reads_unmapped -= u64::from(e.unmapped);
            self.read_fixed_ns -= e.fixed_ns;
            self.read_array_ns =
                [self.read_array_ns[0] - e.array_ns[0], self.read_array_ns[1] - e.array_ns[1]];
        } else {
            self.write_transfer_ns -= e.fixed_ns;
            self.writes[usize::from(e.plane_in_die)] -= 1;
        }
    }

    /// Σ read time (Eq. 5) of the reads for both flavours, the unmapped ones at the mean
    /// array read time `mean_read` ([base, per-layer]).
    fn read_time(&self, mean_read: [u64; 2]) -> [u64; 2] {
        let f = |i: usize| self.read_fixed_ns + self.read_array_ns[i] + self.reads_unmapped * mean_read[i];
        [f(0), f(1)]
    }
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
    /// Per flavour: `prog_prefix[f][i]` = Σ array program time of a block's pages
    /// `0..i` (with `means`): a plane's queued writes in O(1).
    prog_prefix: [Vec<u64>; 2],
    /// A die's sums, scanned (scratch, for views that keep none).
    scratch: PendingSums,
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
            prog_prefix: [Vec::new(), Vec::new()],
            scratch: PendingSums::default(),
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
            self.prog_prefix = [vec![0], vec![0]];
            for p in 0..ppb {
                let ty = geo.page_type_of(p).index();
                r[0] += t.t_r[ty].as_ns();
                w[0] += t.t_prog[ty].as_ns();
                r[1] += t.read_array(p).as_ns();
                w[1] += t.program_array(p).as_ns();
                self.prog_prefix[0].push(w[0]);
                self.prog_prefix[1].push(w[1]);
            }
            let n = ppb as u64;
            self.means = Some([(r[0] / n, w[0] / n), (r[1] / n, w[1] / n)]);
        }
        let nc = geo.channels() as usize;
        self.channel_reads.clear();
        self.channel_reads.resize(nc, [0; 2]);
        self.channel_gc.clear();
        self.channel_gc.resize(nc, false);
        let mean_read = self.mean_read();
        for d in 0..geo.total_dies() {
            let die = DieId(d);
            let ch = geo.channel_of_die(die).idx();
            if view.die_gc_active(die) {
                self.channel_gc[ch] = true;
            }
            if self.params.read_scope == ReadScope::Channel {
                scan_unless_kept(view, die, &mut self.scratch);
                let sum = view.pending_sums(die).unwrap_or(&self.scratch).read_time(mean_read);
                let c = &mut self.channel_reads[ch];
                *c = [c[0] + sum[0], c[1] + sum[1]];
            }
        }
    }

    /// Mean array read time, [base, per-layer] (after [`Self::prepare`]).
    fn mean_read(&self) -> [u64; 2] {
        let m = self.means.expect("prepared");
        [m[0].0, m[1].0]
    }

    /// Σ array program time, per flavour, of `n` writes to consecutive pages from page
    /// `first` of a block, wrapping to page 0 of a new block (after [`Self::prepare`]).
    fn program_run(&self, first: u32, n: u64) -> [u64; 2] {
        let ppb = (self.prog_prefix[0].len() - 1) as u64;
        let first = u64::from(first) % ppb;
        let (cycles, rest) = (n / ppb, n % ppb);
        let run = |pre: &[u64]| {
            let at = |i: u64| pre[i as usize];
            let partial = if first + rest <= ppb {
                at(first + rest) - at(first)
            } else {
                (at(ppb) - at(first)) + at(first + rest - ppb)
            };
            cycles * at(ppb) + partial
        };
        [run(&self.prog_prefix[0]), run(&self.prog_prefix[1])]
    }

    /// Eq. 1 for `die` (after [`Self::prepare`]), for both flavours (OCR, LaCR); the new
    /// write would go to its plane `plane_in_die`.
    fn die_estimate(&mut self, view: &dyn DeviceView, die: DieId, plane_in_die: u32) -> [u64; 2] {
        let geo = view.geometry();
        let t = view.timing();
        let first_plane = die.0 * geo.planes_per_die();
        let tracked = self.params.pending_write_layer == PendingWriteLayer::Tracked;
        let mean_read = self.mean_read();
        let mean_prog = self.means.map(|m| [m[0].1, m[1].1]).expect("prepared");
        let read_scope = self.params.read_scope;
        scan_unless_kept(view, die, &mut self.scratch);
        let s = view.pending_sums(die).unwrap_or(&self.scratch);
        let mut reads = if read_scope == ReadScope::Die { s.read_time(mean_read) } else { [0; 2] };
        if read_scope == ReadScope::Channel {
            reads = self.channel_reads[geo.channel_of_die(die).idx()];
        }
        // Eq. 9 for the writes queued ahead: W × speed(layer) + size × T_c. A plane's
        // k-th queued write gets its write pointer's page + k (`PendingWriteLayer`).
        let mut writes = [s.write_transfer_ns; 2];
        for (i, &n) in s.writes.iter().enumerate().take(geo.planes_per_die() as usize) {
            if n == 0 {
                continue;
            }
            let page = if tracked { view.next_write_page(PlaneId(first_plane + i as u32)) } else { None };
            let array = match page {
                Some(p) => self.program_run(p, u64::from(n)),
                None => mean_prog.map(|m| m * u64::from(n)),
            };
            writes = [writes[0] + array[0], writes[1] + array[1]];
        }
        if self.params.include_own_write {
            let plane = PlaneId(first_plane + plane_in_die);
            let k = u64::from(s.writes[plane_in_die as usize]);
            let ppb = geo.pages_per_block() as u64;
            let page = if tracked { view.next_write_page(plane) } else { None };
            let xfer = t.transfer(geo.page_size_bytes() as u64).as_ns();
            let array = match page {
                Some(p) => self.program_run(((u64::from(p) + k) % ppb) as u32, 1),
                None => mean_prog,
            };
            writes = [writes[0] + array[0] + xfer, writes[1] + array[1] + xfer];
        }
        let gc = if view.die_gc_active(die) { t.t_bers.as_ns() } else { 0 };
        let remain = view.die_free_at(die).saturating_since(view.now()).as_ns();
        [reads[0] + writes[0] + gc + remain, reads[1] + writes[1] + gc + remain]
    }
}

/// Make `die`'s pending sums available to `view.pending_sums(die).unwrap_or(scratch)`:
/// the view's, or else a scan of the die's queue into `scratch`. In debug builds the
/// view's are checked against a scan (all but the reads' array times, which the view
/// takes at queueing and a scan from the mapping now).
pub(crate) fn scan_unless_kept(view: &dyn DeviceView, die: DieId, scratch: &mut PendingSums) {
    let kept = view.pending_sums(die);
    if kept.is_none() || cfg!(debug_assertions) {
        let (geo, t) = (view.geometry(), view.timing());
        *scratch = PendingSums::default();
        view.for_each_pending(die, &mut |op| scratch.add(&PendingEntry::of(geo, t, &op)));
    }
    if let Some(k) = kept {
        let s = &*scratch;
        debug_assert!(
            (k.reads, k.read_fixed_ns, k.write_transfer_ns, &k.writes)
                == (s.reads, s.read_fixed_ns, s.write_transfer_ns, &s.writes),
            "pending sums of die {} out of step with its queues: kept {k:?}, scanned {s:?}",
            die.0
        );
    }
}

impl Placement for ChipRedirect {
    fn uses_pending_sums(&self) -> bool {
        true
    }

    fn pending_reads_current(&self) -> bool {
        self.params.read_page == ReadPage::Current
    }

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
