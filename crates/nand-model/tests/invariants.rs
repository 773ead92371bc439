//! Model-based property test: random legal operation sequences (every command kind,
//! multi-plane, SOML, partial erase, copy-back, suspension) on a small device with every
//! feature enabled. After the run:
//!
//! - per operation, phases are ordered and never start before the issue time;
//! - no two bus reservations overlap on a channel, and the channel busy counter equals
//!   the sum of reservations;
//! - a die never runs two array operations (or holds read data) at once, with each
//!   suspension splitting its program/erase into segments whose total length is the
//!   original array time;
//! - flash state and tags agree with a `BTreeMap<Ppa, tag>` reference.

use std::collections::BTreeMap;

use lamina_nand_model::{
    BusConfig, CellType, ChannelId, Command, Device, DeviceOptions, GeometryConfig, LayerCurve,
    LayerSpeedConfig, NandConfig, Nanos, OpTiming, PageAddr, PageState, PageTypeOrder, PartialEraseConfig,
    PerPageType, Ppa, SimTime, SlowEnd, SomlConfig, SomlPart, SuspensionConfig, TimingConfig,
};
use proptest::prelude::*;

fn config() -> NandConfig {
    NandConfig {
        geometry: GeometryConfig {
            channels: 2,
            chips_per_channel: 2,
            dies_per_chip: 2,
            planes_per_die: 2,
            blocks_per_plane: 4,
            pages_per_block: 8,
            page_size_bytes: 4096,
            partial_read_bytes: Some(1024),
            cell_type: CellType::Mlc,
            layers: 2,
            page_type_order: PageTypeOrder::Interleaved,
        },
        timing: TimingConfig {
            t_cmd: Nanos(100),
            t_cmd_program: Some(Nanos(120)),
            t_cmd_erase: Some(Nanos(90)),
            bus: BusConfig { ns_per_byte: None, width_bits: Some(8), rate_mts: Some(200) },
            t_r: PerPageType::PerType(vec![Nanos::from_us(50), Nanos::from_us(70)]),
            t_prog: PerPageType::PerType(vec![Nanos::from_us(300), Nanos::from_us(500)]),
            t_bers: Nanos::from_ms(1),
            t_pbers: Some(Nanos(900_000)),
            t_dbsy: Nanos(30),
            t_suspend_program: Nanos(1_000),
            t_suspend_erase: Nanos(2_000),
            t_resume: Nanos(500),
            layer_speed: Some(LayerSpeedConfig {
                ratio: 2.0,
                curve: LayerCurve::Linear,
                slow_end: SlowEnd::Top,
            }),
            re_reads: 0,
        },
        suspension: Some(SuspensionConfig { program: true, erase: true, max_per_op: 2, max_window: None }),
        soml: Some(SomlConfig { max_parts: 4, decoders: Some(2), factor: Some(1.063), t_r: None }),
        partial_erase: Some(PartialEraseConfig { levels: 2 }),
    }
}

/// Reference model and observed timings.
struct Harness {
    dev: Device,
    reference: BTreeMap<Ppa, u64>,
    next_tag: u64,
    /// Bus reservations per channel.
    bus: Vec<Vec<(u64, u64)>>,
    /// Die occupation segments per die: (start, end, op index).
    die_segs: Vec<Vec<(u64, u64, usize)>>,
    /// Per op: original array length for program/erase ops.
    pe_len: BTreeMap<usize, u64>,
    /// Per die: index of the last program/erase op issued on it.
    last_pe: Vec<Option<usize>>,
    ops: usize,
    /// Operations also issued through the one-page entry points.
    fast_ops: usize,
}

impl Harness {
    fn new() -> Harness {
        let mut dev = Device::new(config().validate().unwrap(), DeviceOptions { store_tags: true });
        dev.set_register_tracking(true);
        let g = dev.geometry().clone();
        Harness {
            dev,
            reference: BTreeMap::new(),
            next_tag: 1,
            bus: vec![Vec::new(); g.channels() as usize],
            die_segs: vec![Vec::new(); g.total_dies() as usize],
            pe_len: BTreeMap::new(),
            last_pe: vec![None; g.total_dies() as usize],
            ops: 0,
            fast_ops: 0,
        }
    }

    fn die_addr(&self, die: u32, plane: u32, block: u32, page: u32) -> PageAddr {
        let g = self.dev.geometry();
        let chip = die / g.dies_per_chip();
        PageAddr {
            channel: chip / g.chips_per_channel(),
            chip: chip % g.chips_per_channel(),
            die: die % g.dies_per_chip(),
            plane,
            block,
            page,
        }
    }

    fn programmed_page(&self, a: PageAddr, from: u32) -> Option<PageAddr> {
        let ppb = self.dev.geometry().pages_per_block();
        (0..ppb)
            .map(|i| (from + i) % ppb)
            .map(|page| PageAddr { page, ..a })
            .find(|&x| self.dev.page_state(self.dev.geometry().ppa(x)) == PageState::Programmed)
    }

    fn issue(&mut self, at: u64, cmd: &Command<'_>, kind: &'static str) -> OpTiming {
        // One-page reads and programs also go through the one-page entry points on a
        // copy of the device: same timing, same counters, and the copy carries on (so
        // any state it left differently shows in later operations and in `finish`).
        let fast = match *cmd {
            Command::Read { pages: [a], offset_bytes, len_bytes } => {
                let mut d = self.dev.clone();
                let ppa = d.geometry().ppa(*a);
                Some((d.read_page(SimTime(at), ppa, offset_bytes, len_bytes), d))
            }
            Command::Program { pages: [a], tags: [tag] } => {
                let mut d = self.dev.clone();
                let ppa = d.geometry().ppa(*a);
                Some((d.program_page(SimTime(at), ppa, *tag), d))
            }
            _ => None,
        };
        let t = self.dev.issue(SimTime(at), cmd).unwrap_or_else(|e| panic!("legal {kind} rejected: {e}"));
        if let Some((r, d)) = fast {
            assert_eq!(r, Ok(t), "one-page {kind} differs from the general path");
            assert_eq!(d.stats(), self.dev.stats());
            self.dev = d;
            self.fast_ops += 1;
        }
        self.check(at, cmd, &t);
        t
    }

    fn check(&mut self, at: u64, cmd: &Command<'_>, t: &OpTiming) {
        let op = self.ops;
        self.ops += 1;
        let g = self.dev.geometry().clone();
        let first = match *cmd {
            Command::Read { pages, .. } | Command::Program { pages, .. } => pages[0],
            Command::Erase { blocks } => blocks[0],
            Command::PartialErase { block, .. } => block,
            Command::SomlRead { parts } => parts[0].page,
            Command::CopyBack { from, .. } => from[0],
            Command::RegisterRead { page, .. } => page,
        };
        let die = g.die_id(PageAddr { page: 0, ..first });
        let ch = g.channel_of_die(die).idx();
        let (s, be, a0, a1, d0, d1, done) = (
            t.start.0,
            t.bus_end.0,
            t.array_start.0,
            t.array_end.0,
            t.data_out_start.0,
            t.data_out_end.0,
            t.done.0,
        );
        assert!(at <= s && s <= be && be <= a0 && a0 <= a1, "{t:?} issued at {at}");
        self.bus[ch].push((s, be));
        match cmd {
            Command::CopyBack { .. } => {
                assert!(a0 <= d0 && d0 <= d1 && d1 <= a1 && done == a1, "{t:?}");
                self.bus[ch].push((d0, d1));
            }
            Command::RegisterRead { .. } => {
                assert!(a0 == a1 && a1 <= d0 && d0 <= d1 && d1 == done && t.suspended.is_none(), "{t:?}");
                self.bus[ch].push((d0, d1));
            }
            Command::Read { .. } | Command::SomlRead { .. } => {
                assert!(a1 <= d0 && d0 <= d1 && d1 == done, "{t:?}");
                self.bus[ch].push((d0, d1));
            }
            _ => assert!(a1 == d0 && d0 == d1 && d1 == done, "{t:?}"),
        }
        match cmd {
            Command::RegisterRead { .. } => self.die_segs[die.idx()].push((a0, d1, op)),
            Command::Read { .. } | Command::SomlRead { .. } => {
                // The read holds the die from sensing until its data left the register.
                self.die_segs[die.idx()].push((a0, d1, op));
                if let Some(sp) = t.suspended {
                    assert_eq!(sp.die, die);
                    let pe = self.last_pe[die.idx()].expect("suspension without a program/erase");
                    let segs = &mut self.die_segs[die.idx()];
                    let old_end = segs.iter().filter(|x| x.2 == pe).map(|x| x.1).max().unwrap();
                    assert_eq!(old_end, sp.old_done.0);
                    // The read ends before the program/erase resumes (that it starts after
                    // the program/erase stopped is checked by the die overlap check).
                    assert!(d1 <= sp.resumed_at.0 && sp.resumed_at <= sp.new_done, "{t:?}");
                    assert!(sp.new_done > sp.old_done, "{t:?}");
                    // Cut the program/erase at the suspension point; it continues later.
                    let cut = sp.suspended_at.0;
                    segs.retain(|x| x.2 != pe || x.0 < cut);
                    for x in segs.iter_mut().filter(|x| x.2 == pe) {
                        x.1 = x.1.min(cut);
                    }
                    segs.push((sp.resumed_at.0, sp.new_done.0, pe));
                    let total: u64 = segs.iter().filter(|x| x.2 == pe).map(|x| x.1 - x.0).sum();
                    assert_eq!(total, self.pe_len[&pe], "suspension lost or gained array work");
                    assert_eq!(self.dev.die_free_at(die), sp.new_done);
                }
            }
            _ => {
                self.die_segs[die.idx()].push((a0, a1, op));
                self.pe_len.insert(op, a1 - a0);
                self.last_pe[die.idx()] = Some(op);
                assert!(t.suspended.is_none());
            }
        }
        assert!(self.dev.die_free_at(die).0 >= done);
    }

    fn finish(&self) {
        // Bus: no two reservations overlap; busy counter matches.
        for (ch, iv) in self.bus.iter().enumerate() {
            let mut iv: Vec<_> = iv.iter().copied().filter(|x| x.0 < x.1).collect();
            iv.sort();
            for w in iv.windows(2) {
                assert!(w[0].1 <= w[1].0, "channel {ch}: bus overlap {:?} / {:?}", w[0], w[1]);
            }
            let sum: u64 = iv.iter().map(|x| x.1 - x.0).sum();
            assert_eq!(self.dev.channel_busy(ChannelId(ch as u32)), Nanos(sum));
        }
        // Dies: never two array operations (or held read data) at once.
        for (die, segs) in self.die_segs.iter().enumerate() {
            let mut segs: Vec<_> = segs.iter().copied().filter(|x| x.0 < x.1).collect();
            segs.sort();
            for w in segs.windows(2) {
                assert!(w[0].1 <= w[1].0, "die {die}: overlap {:?} / {:?}", w[0], w[1]);
            }
        }
        // Flash state and tags against the reference.
        let g = self.dev.geometry();
        for p in 0..g.total_pages() {
            let ppa = Ppa(p);
            match self.reference.get(&ppa) {
                Some(&tag) => {
                    assert_eq!(self.dev.page_state(ppa), PageState::Programmed, "{ppa:?}");
                    assert_eq!(self.dev.tag(ppa), Some(tag), "{ppa:?}");
                }
                None => {
                    assert_eq!(self.dev.page_state(ppa), PageState::Erased, "{ppa:?}");
                    assert_eq!(self.dev.tag(ppa), None);
                }
            }
        }
    }

    fn forget_block(&mut self, a: PageAddr, first: u32, len: u32) {
        for page in first..first + len {
            self.reference.remove(&self.dev.geometry().ppa(PageAddr { page, ..a }));
        }
    }

    fn step(&mut self, at: u64, kind: u8, die: u32, plane: u32, block: u32, x: u32) {
        let g = self.dev.geometry().clone();
        let die = die % g.total_dies();
        let plane = plane % g.planes_per_die();
        let block = block % g.blocks_per_plane();
        let ppb = g.pages_per_block();
        let a = self.die_addr(die, plane, block, 0);
        match kind % 10 {
            // Single-plane program of the next page, or erase a full block.
            0 | 1 => match self.dev.write_pointer(g.block_id(a)) {
                Some(page) => {
                    let p = PageAddr { page, ..a };
                    let tag = self.next_tag;
                    self.next_tag += 1;
                    self.issue(at, &Command::Program { pages: &[p], tags: &[tag] }, "program");
                    self.reference.insert(g.ppa(p), tag);
                }
                None => {
                    self.issue(at, &Command::Erase { blocks: &[a] }, "erase");
                    self.forget_block(a, 0, ppb);
                }
            },
            // Multi-plane program when both planes' blocks are at the same page, else
            // multi-plane erase.
            2 => {
                let b = self.die_addr(die, 1 - plane.min(1), block, 0);
                let (wa, wb) = (self.dev.write_pointer(g.block_id(a)), self.dev.write_pointer(g.block_id(b)));
                if let Some(page) = wa.filter(|_| wa == wb) {
                    let pages = [PageAddr { page, ..a }, PageAddr { page, ..b }];
                    let tags = [self.next_tag, self.next_tag + 1];
                    self.next_tag += 2;
                    self.issue(at, &Command::Program { pages: &pages, tags: &tags }, "multi-plane program");
                    self.reference.insert(g.ppa(pages[0]), tags[0]);
                    self.reference.insert(g.ppa(pages[1]), tags[1]);
                } else {
                    self.issue(at, &Command::Erase { blocks: &[a, b] }, "multi-plane erase");
                    self.forget_block(a, 0, ppb);
                    self.forget_block(b, 0, ppb);
                }
            }
            // Single-plane read (whole or partial).
            3 | 4 => {
                if let Some(p) = self.programmed_page(a, x) {
                    let offset = (x % 4) * 1024;
                    let len = 1 + x % (4096 - offset);
                    let t = self.issue(
                        at,
                        &Command::Read { pages: &[p], offset_bytes: offset, len_bytes: len },
                        "read",
                    );
                    // Sometimes the same bytes again from the page register: it holds them
                    // unless the read suspended a program or erase.
                    if x % 3 == 0 {
                        let held = self.dev.register_holds(g.ppa(p), offset, len);
                        let cmd = Command::RegisterRead { page: p, offset_bytes: offset, len_bytes: len };
                        if held {
                            self.issue(at, &cmd, "register read");
                        } else {
                            assert!(self.dev.clone().issue(SimTime(at), &cmd).is_err());
                            assert!(t.suspended.is_some(), "a plain read left nothing in the register");
                        }
                    }
                }
            }
            // Multi-plane read of the same page offset in both planes.
            5 => {
                let b = self.die_addr(die, 1 - plane.min(1), block, 0);
                let both = (0..ppb).map(|i| (x + i) % ppb).find(|&page| {
                    self.dev.page_state(g.ppa(PageAddr { page, ..a })) == PageState::Programmed
                        && self.dev.page_state(g.ppa(PageAddr { page, ..b })) == PageState::Programmed
                });
                if let Some(page) = both {
                    let pages = [PageAddr { page, ..a }, PageAddr { page, ..b }];
                    self.issue(
                        at,
                        &Command::Read { pages: &pages, offset_bytes: 0, len_bytes: 4096 },
                        "mp read",
                    );
                }
            }
            // SOML read: two blocks on different decoders (2 decoders), disjoint slots.
            6 => {
                let b = self.die_addr(die, plane, (block + 1) % g.blocks_per_plane(), 0);
                if let (Some(p), Some(q)) = (self.programmed_page(a, x), self.programmed_page(b, x / 3)) {
                    let parts = [
                        SomlPart { page: p, offset_bytes: 0, len_bytes: 2048 },
                        SomlPart { page: q, offset_bytes: 2048 + (x % 2) * 1024, len_bytes: 1024 },
                    ];
                    self.issue(at, &Command::SomlRead { parts: &parts }, "SOML read");
                }
            }
            // Partial-block erase of PB 1..=7.
            7 => {
                let pb = 1 + x % 7;
                let (first, len) = self.dev.pb_range(pb).unwrap();
                self.issue(at, &Command::PartialErase { block: a, pb }, "partial erase");
                self.forget_block(a, first, len);
            }
            // Copy-back into another block of the same plane.
            8 => {
                let to_blk = self.die_addr(die, plane, (block + 1 + x % 3) % g.blocks_per_plane(), 0);
                if let (Some(from), Some(page)) =
                    (self.programmed_page(a, x), self.dev.write_pointer(g.block_id(to_blk)))
                {
                    let to = PageAddr { page, ..to_blk };
                    let tag = self.reference[&g.ppa(from)];
                    self.issue(at, &Command::CopyBack { from: &[from], to: &[to] }, "copy-back");
                    self.reference.insert(g.ppa(to), tag);
                }
            }
            _ => {
                self.issue(at, &Command::Erase { blocks: &[a] }, "erase");
                self.forget_block(a, 0, ppb);
            }
        }
    }
}

fn step_strategy() -> impl Strategy<Value = (u8, u32, u32, u32, u32, u32)> {
    // Time deltas: often 0 (bursts), else up to 1.2 ms (longer than a program).
    let dt = prop_oneof![Just(0u32), 0u32..1_200_000];
    (any::<u8>(), 0u32..16, 0u32..2, 0u32..4, any::<u32>(), dt)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 192, ..ProptestConfig::default() })]

    #[test]
    fn random_legal_sequences_keep_invariants(
        steps in proptest::collection::vec(step_strategy(), 1..160),
        focus in 0u32..3,
    ) {
        let mut h = Harness::new();
        let mut at = 0u64;
        for (kind, die, plane, block, x, dt) in steps {
            at += dt as u64;
            // `focus` concentrates traffic on few dies so suspensions and bus contention happen.
            let die = if focus == 0 { die } else { die % (focus * 2) };
            h.step(at, kind, die, plane, block, x);
        }
        h.finish();
    }
}

#[test]
fn suspensions_happen_in_the_random_workload() {
    // Guard against a vacuous property: a fixed dense sequence must suspend.
    let mut h = Harness::new();
    let mut at = 0;
    for i in 0..400u32 {
        h.step(at, (i % 5) as u8, 0, i % 2, i % 4, i);
        at += 37_000;
    }
    h.finish();
    assert!(h.dev.suspension_count() > 0);
    // And a fixed sequence over every command kind exercises each of them.
    let mut h = Harness::new();
    let mut at = 0;
    for i in 0..600u32 {
        h.step(at, (i % 10) as u8, i % 3, i / 10 % 2, i / 20 % 4, i);
        at += 23_000;
    }
    h.finish();
    let s = h.dev.stats();
    assert!(
        s.soml_reads > 0 && s.copybacks > 0 && s.partial_erases > 0 && s.reads > 0 && s.register_reads > 0,
        "{s:?}"
    );
    assert!(s.pages_programmed > s.programs, "multi-plane programs happened: {s:?}");
    assert!(h.fast_ops > 100, "one-page commands compared: {}", h.fast_ops);
}
