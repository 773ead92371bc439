//! A hand-built device state implementing [`DeviceView`], for testing and exploring
//! policies without the engine.
//!
//! ```
//! use lamina_nand_model::{preset, Lpn, PlaneId};
//! use lamina_sched::{mock::MockView, PlacementKind};
//!
//! let spec = preset("die-binding-4x2").unwrap().validate().unwrap();
//! let mut view = MockView::new(&spec);
//! let mut uq = PlacementKind::Uq.build();
//! // Everything idle: UQ takes die 0 (fewest writes, lowest index).
//! let p = uq.place_write(Lpn(0), PlaneId(5), &view).unwrap();
//! assert_eq!(p, PlaneId(1));
//! // Every channel busy: UQ defers.
//! view.channel_idle.iter_mut().for_each(|c| *c = false);
//! assert_eq!(uq.place_write(Lpn(1), PlaneId(0), &view), None);
//! ```

use std::collections::BTreeMap;

use lamina_nand_model::{
    BlockId, ChannelId, DeviceSpec, DieId, Geometry, Lpn, Nanos, PlaneId, Ppa, SimTime, Timing,
};

use crate::{DeviceView, PendingOp};

/// A device state given field by field (every field public; index = global id).
#[derive(Clone, Debug)]
pub struct MockView {
    geo: Geometry,
    timing: Timing,
    /// Current time.
    pub now: SimTime,
    /// Per die: idle.
    pub die_idle: Vec<bool>,
    /// Per channel: idle.
    pub channel_idle: Vec<bool>,
    /// Per die: when its current reservations end (values before `now` read as `now`).
    pub die_free_at: Vec<SimTime>,
    /// Per die: waiting transactions, reads then writes in FCFS order.
    pub pending: Vec<Vec<PendingOp>>,
    /// Per die: GC job queued or running.
    pub gc: Vec<bool>,
    /// Per die: pages programmed so far.
    pub writes: Vec<u64>,
    /// Per plane: the FTL's next write page, if known.
    pub next_page: Vec<Option<u32>>,
    /// Per plane: the block the FTL's next host write goes to (with `next_page`, the
    /// address [`DeviceView::next_write_addr`] reports); `None` = unknown.
    pub next_block: Vec<Option<BlockId>>,
    /// The FTL's mapping, for [`DeviceView::lookup`] (unmapped if absent).
    pub mapping: BTreeMap<Lpn, Ppa>,
    /// Per die: the FTL picks the plane inside the die (die-aligned allocation), and how
    /// many writes the die's frontier row still takes.
    pub aligned_rows: Vec<Option<u32>>,
}

impl MockView {
    /// An idle, empty device at time zero with every plane's write pointer at page 0.
    pub fn new(spec: &DeviceSpec) -> Self {
        let geo = spec.geometry().clone();
        let dies = geo.total_dies() as usize;
        MockView {
            timing: spec.timing().clone(),
            now: SimTime::ZERO,
            die_idle: vec![true; dies],
            channel_idle: vec![true; geo.channels() as usize],
            die_free_at: vec![SimTime::ZERO; dies],
            pending: vec![Vec::new(); dies],
            gc: vec![false; dies],
            writes: vec![0; dies],
            next_page: vec![Some(0); geo.total_planes() as usize],
            next_block: (0..geo.total_planes()).map(|p| Some(BlockId(p * geo.blocks_per_plane()))).collect(),
            mapping: BTreeMap::new(),
            aligned_rows: vec![None; dies],
            geo,
        }
    }

    /// What the engine does when it starts a write on `plane` at `now`: the die is busy
    /// until `now + die_busy`, its channel busy (data transfer), one more write counted.
    pub fn start_write(&mut self, plane: PlaneId, die_busy: Nanos) {
        let die = self.geo.die_of_plane(plane);
        self.die_idle[die.idx()] = false;
        self.die_free_at[die.idx()] = self.now + die_busy;
        self.channel_idle[self.geo.channel_of_die(die).idx()] = false;
        self.writes[die.idx()] += 1;
        if let Some(p) = self.next_page[plane.idx()].as_mut() {
            *p = (*p + 1) % self.geo.pages_per_block();
        }
    }

    /// Map `lpn` to page `page` of block `block` (index within the plane) of `plane`, as
    /// [`DeviceView::lookup`] reports it; returns that physical page.
    pub fn map_lpn(&mut self, lpn: Lpn, plane: PlaneId, block: u32, page: u32) -> Ppa {
        let ppa = self.page_addr(plane, block, page);
        self.mapping.insert(lpn, ppa);
        ppa
    }

    /// Set the block (index within the plane) and page `plane`'s next host write gets,
    /// as [`DeviceView::next_write_addr`] reports it.
    pub fn set_next_write(&mut self, plane: PlaneId, block: u32, page: u32) {
        self.next_block[plane.idx()] = Some(BlockId(plane.0 * self.geo.blocks_per_plane() + block));
        self.next_page[plane.idx()] = Some(page);
    }

    /// The physical page `page` of block `block` (index within the plane) of `plane`.
    pub fn page_addr(&self, plane: PlaneId, block: u32, page: u32) -> Ppa {
        assert!(
            block < self.geo.blocks_per_plane() && page < self.geo.pages_per_block(),
            "address out of range"
        );
        let b = BlockId(plane.0 * self.geo.blocks_per_plane() + block);
        Ppa(self.geo.first_page(b).0 + page as u64)
    }

    /// Queue a write on `plane` (not started).
    pub fn queue_write(&mut self, plane: PlaneId) {
        let die = self.geo.die_of_plane(plane);
        let bytes = self.geo.page_size_bytes();
        self.pending[die.idx()].push(PendingOp { is_read: false, bytes, page: None, plane });
    }

    /// Queue a read of `page` on `plane`, placed before the queued writes (as the
    /// engine's view lists reads first).
    pub fn queue_read(&mut self, plane: PlaneId, page: u32, bytes: u32) {
        let die = self.geo.die_of_plane(plane);
        let q = &mut self.pending[die.idx()];
        let at = q.iter().position(|op| !op.is_read).unwrap_or(q.len());
        q.insert(at, PendingOp { is_read: true, bytes, page: Some(page), plane });
    }
}

impl DeviceView for MockView {
    fn geometry(&self) -> &Geometry {
        &self.geo
    }
    fn timing(&self) -> &Timing {
        &self.timing
    }
    fn now(&self) -> SimTime {
        self.now
    }
    fn die_idle(&self, die: DieId) -> bool {
        self.die_idle[die.idx()]
    }
    fn channel_idle(&self, channel: ChannelId) -> bool {
        self.channel_idle[channel.idx()]
    }
    fn die_free_at(&self, die: DieId) -> SimTime {
        self.die_free_at[die.idx()].max(self.now)
    }
    fn die_queue_len(&self, die: DieId) -> u32 {
        self.pending[die.idx()].len() as u32
    }
    fn for_each_pending(&self, die: DieId, f: &mut dyn FnMut(PendingOp)) {
        for &op in &self.pending[die.idx()] {
            f(op);
        }
    }
    fn die_gc_active(&self, die: DieId) -> bool {
        self.gc[die.idx()]
    }
    fn die_writes(&self, die: DieId) -> u64 {
        self.writes[die.idx()]
    }
    fn next_write_page(&self, plane: PlaneId) -> Option<u32> {
        self.next_page[plane.idx()]
    }
    fn lookup(&self, lpn: Lpn) -> Option<Ppa> {
        self.mapping.get(&lpn).copied()
    }
    fn next_write_addr(&self, plane: PlaneId) -> Option<(BlockId, u32)> {
        Some((self.next_block[plane.idx()]?, self.next_page[plane.idx()]?))
    }
    fn ftl_picks_plane(&self, die: DieId) -> bool {
        self.aligned_rows[die.idx()].is_some()
    }
    fn die_row_room(&self, die: DieId) -> u32 {
        self.aligned_rows[die.idx()].unwrap_or(1)
    }
}
