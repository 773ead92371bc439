//! Placement policies on hand-built device states ([`MockView`]): each policy's choice
//! checked against the rule in `docs/policies.md`, UQ's undecided queue draining in FCFS
//! order, LaCR's tie token, OCR versus LaCR, MCS's chip choice (best fit, Fig. 7,
//! Channel_Max_Subs shares), and a property test that every policy only returns legal
//! targets.

use lamina_nand_model::{ChipId, DieId, Lpn, Nanos, PlaneId, SimTime, preset};
use lamina_sched::mbm::parallelism_degree;
use lamina_sched::mock::MockView;
use lamina_sched::{
    ChipRedirect, DeviceView, LacrParams, McsCounters, McsOverflow, McsParams, McsPlacement, PendingEntry,
    PendingSums, PendingWriteLayer, Placement, PlacementKind, ReadScope, RedirectCounters,
};
use proptest::prelude::*;
use std::collections::VecDeque;
use std::ops::Not;

fn view(name: &str) -> MockView {
    MockView::new(&preset(name).expect("preset").validate().expect("valid"))
}

fn die_of(v: &MockView, p: PlaneId) -> u32 {
    v.geometry().die_of_plane(p).0
}

#[test]
fn names_round_trip_through_serde() {
    use serde::Deserialize;
    use serde::de::IntoDeserializer;
    use serde::de::value::{Error, StrDeserializer};
    for k in PlacementKind::ALL {
        let de: StrDeserializer<'_, Error> = k.name().into_deserializer();
        assert_eq!(PlacementKind::deserialize(de).expect("known name"), k);
    }
    let de: StrDeserializer<'_, Error> = "fifo".into_deserializer();
    assert!(PlacementKind::deserialize(de).is_err());
}

#[test]
fn static_keeps_the_static_plane() {
    let v = view("die-binding-4x2");
    let mut p = PlacementKind::Static.build();
    for sp in 0..16 {
        assert_eq!(p.place_write(Lpn(sp as u64), PlaneId(sp), &v), Some(PlaneId(sp)));
    }
}

/// Only the static policy says it is static: the engine then takes the static plane
/// without asking, so a policy that decides anything must not.
#[test]
fn only_static_placement_is_static() {
    for kind in PlacementKind::ALL {
        assert_eq!(kind.build().is_static(), kind == PlacementKind::Static, "{kind:?}");
    }
}

#[test]
fn write_order_is_round_robin_channel_first() {
    // 4 channels × 2 single-die chips: dies 0,1 on channel 0, 2,3 on channel 1, …
    let mut v = view("die-binding-4x2");
    v.die_idle.iter_mut().for_each(|d| *d = false); // state is ignored
    let mut p = PlacementKind::WriteOrder.build();
    let dies: Vec<u32> =
        (0..10).map(|i| die_of(&v, p.place_write(Lpn(i), PlaneId(1), &v).unwrap())).collect();
    assert_eq!(dies, [0, 2, 4, 6, 1, 3, 5, 7, 0, 2]);
    // The plane keeps the static plane's index within its die.
    assert_eq!(p.place_write(Lpn(0), PlaneId(1), &v), Some(PlaneId(9)));
}

#[test]
fn queue_picks_the_shortest_queue_counting_the_op_in_flight() {
    let mut v = view("die-binding-4x2");
    for d in 0..8 {
        for _ in 0..3 {
            v.queue_write(PlaneId(d * 2));
        }
    }
    v.pending[5].clear(); // die 5: empty queue but busy → load 1
    v.die_idle[5] = false;
    v.pending[3].truncate(1); // die 3: one queued, idle → load 1
    v.pending[6].truncate(2); // die 6: load 2
    let mut p = PlacementKind::Queue.build();
    // Ties (dies 3 and 5, load 1) go to the first at or after the rotating pointer, in
    // channel-first order 0,2,4,6,1,3,5,7: pointer 0 → die 3 first.
    assert_eq!(die_of(&v, p.place_write(Lpn(0), PlaneId(0), &v).unwrap()), 3);
    // Pointer now after die 3 → die 5.
    assert_eq!(die_of(&v, p.place_write(Lpn(0), PlaneId(0), &v).unwrap()), 5);
    // An idle empty die beats both.
    v.pending[4].clear();
    assert_eq!(die_of(&v, p.place_write(Lpn(0), PlaneId(0), &v).unwrap()), 4);
}

#[test]
fn state_prefers_idle_then_fewest_writes_and_ignores_channels() {
    let mut v = view("die-binding-4x2");
    v.writes = vec![5, 1, 7, 0, 3, 3, 9, 2];
    v.die_idle = vec![true, true, true, false, true, true, true, true];
    v.channel_idle.iter_mut().for_each(|c| *c = false);
    let mut p = PlacementKind::State.build();
    // Die 3 has fewest writes but is busy; idle die 1 (1 write) wins despite its busy channel.
    assert_eq!(die_of(&v, p.place_write(Lpn(0), PlaneId(0), &v).unwrap()), 1);
    v.die_idle[1] = false;
    assert_eq!(die_of(&v, p.place_write(Lpn(0), PlaneId(0), &v).unwrap()), 7);
    // Equal writes: lower index.
    v.writes[7] = 3;
    assert_eq!(die_of(&v, p.place_write(Lpn(0), PlaneId(0), &v).unwrap()), 4);
    // Nothing idle: the busy die with the least writes + queue.
    v.die_idle.iter_mut().for_each(|d| *d = false);
    v.queue_write(PlaneId(6)); // die 3: 0 writes + 1 queued
    v.writes[1] = 0; // die 1: 0 + 0
    assert_eq!(die_of(&v, p.place_write(Lpn(0), PlaneId(0), &v).unwrap()), 1);
}

#[test]
fn uq_needs_idle_die_and_idle_channel_and_prefers_fewest_writes() {
    let mut v = view("die-binding-4x2");
    v.writes = vec![0, 4, 2, 1, 6, 6, 3, 8];
    let mut p = PlacementKind::Uq.build();
    // All idle: die 0 (0 writes).
    assert_eq!(p.place_write(Lpn(0), PlaneId(3), &v), Some(PlaneId(1)));
    // Channel 0 busy: die 3 (1 write, channel 1).
    v.channel_idle[0] = false;
    assert_eq!(die_of(&v, p.place_write(Lpn(0), PlaneId(0), &v).unwrap()), 3);
    // Die 3 busy: die 2 (2 writes) on the same, idle, channel.
    v.die_idle[3] = false;
    assert_eq!(die_of(&v, p.place_write(Lpn(0), PlaneId(0), &v).unwrap()), 2);
    // Idle dies only on busy channels, busy dies only on idle channels: defer.
    let mut v = view("die-binding-4x2");
    v.channel_idle = vec![false, true, false, true];
    v.die_idle = vec![true, true, false, false, true, true, false, false];
    assert_eq!(p.place_write(Lpn(0), PlaneId(0), &v), None);
}

/// Bind undecided writes oldest first while the policy accepts them, starting each
/// bound write on the mock device (what the engine's `retry_undecided` does).
fn drain(
    p: &mut dyn Placement,
    v: &mut MockView,
    undecided: &mut VecDeque<u64>,
    bound: &mut Vec<(u64, u32)>,
) {
    while let Some(&lpn) = undecided.front() {
        let Some(plane) = p.place_write(Lpn(lpn), PlaneId(0), v) else { break };
        undecided.pop_front();
        let die = v.geometry().die_of_plane(plane);
        assert!(v.die_idle[die.idx()], "bound to a busy die");
        bound.push((lpn, die.0));
        v.start_write(plane, Nanos::from_us(200));
    }
}

/// The state-based-die-binding §3 scenario: a 3-page request arrives when only two
/// (die, channel) pairs are idle; two sub-writes go out at once (fewest cumulative
/// writes first), the third waits in the undecided queue; a later request queues behind
/// it and everything is bound oldest first as pairs become idle.
#[test]
fn uq_undecided_queue_drains_in_fcfs_order() {
    let mut v = view("die-binding-4x2");
    // Only dies 1 (channel 0, 5 writes) and 6 (channel 3, 2 writes) are idle.
    v.die_idle = vec![false, true, false, false, false, false, true, false];
    v.writes = vec![0, 5, 0, 0, 0, 0, 2, 0];
    let mut p = PlacementKind::Uq.build();
    let mut undecided = VecDeque::new();
    let mut bound = Vec::new();
    // Request A: LPNs 10, 11, 12 (the engine appends, then drains).
    for lpn in [10, 11, 12] {
        undecided.push_back(lpn);
        drain(&mut *p, &mut v, &mut undecided, &mut bound);
    }
    assert_eq!(bound, [(10, 6), (11, 1)]);
    assert_eq!(undecided, [12]);
    // Request B: LPNs 20, 21 queue behind 12; channels 0 and 3 are busy transferring.
    undecided.extend([20, 21]);
    drain(&mut *p, &mut v, &mut undecided, &mut bound);
    assert_eq!(bound.len(), 2);
    // Channel 0 frees but its dies are busy: still nothing.
    v.channel_idle[0] = true;
    drain(&mut *p, &mut v, &mut undecided, &mut bound);
    assert_eq!(bound.len(), 2);
    // Die 4 (channel 2) finishes: the oldest undecided write, 12, takes it.
    v.die_idle[4] = true;
    drain(&mut *p, &mut v, &mut undecided, &mut bound);
    assert_eq!(bound[2..], [(12, 4)]);
    // Dies 2 (channel 1) and 0 (channel 0) finish together: 20 then 21; both have 0
    // writes, so 20 gets the lower index.
    v.die_idle[2] = true;
    v.die_idle[0] = true;
    drain(&mut *p, &mut v, &mut undecided, &mut bound);
    assert_eq!(bound[3..], [(20, 0), (21, 2)]);
    assert!(undecided.is_empty());
}

#[test]
fn uq_first_binding_prefers_fewer_writes() {
    let mut v = view("die-binding-4x2");
    v.die_idle = vec![false, true, false, false, false, false, true, false];
    v.writes = vec![0, 5, 0, 0, 0, 0, 2, 0];
    let mut p = PlacementKind::Uq.build();
    let a = p.place_write(Lpn(10), PlaneId(0), &v).unwrap();
    assert_eq!(die_of(&v, a), 6);
    v.start_write(a, Nanos::from_us(200));
    let b = p.place_write(Lpn(11), PlaneId(0), &v).unwrap();
    assert_eq!(die_of(&v, b), 1);
    v.start_write(b, Nanos::from_us(200));
    assert_eq!(p.place_write(Lpn(12), PlaneId(0), &v), None);
}

#[test]
fn dynamic_rotates_channels_chips_and_planes_over_idle_pairs() {
    // 4 channels × 4 single-die chips: chip c of channel ch is die ch*4 + c.
    let mut v = view("die-binding-4x4");
    let mut p = PlacementKind::Dynamic.build();
    let mut got = Vec::new();
    for i in 0..5 {
        let plane = p.place_write(Lpn(i), PlaneId(0), &v).unwrap();
        got.push((die_of(&v, plane), plane.0 % 2));
    }
    // Channel start rotates 0,1,2,3,0; each channel's chip token starts at 0 and has
    // advanced past chip 0 when channel 0 comes round again; plane tokens start at 0.
    assert_eq!(got, [(0, 0), (4, 0), (8, 0), (12, 0), (1, 0)]);
    // Channel 1's token chip (1) is busy: it moves on to chip 2.
    v.die_idle[5] = false;
    assert_eq!(die_of(&v, p.place_write(Lpn(0), PlaneId(0), &v).unwrap()), 6);
    // Busy channel skipped: channel 2 busy → channel 3.
    v.channel_idle[2] = false;
    assert_eq!(die_of(&v, p.place_write(Lpn(0), PlaneId(0), &v).unwrap()), 13);
    // Back to die 0 later: its plane token has advanced to 1.
    let mut v = view("die-binding-4x4");
    let mut p = PlacementKind::Dynamic.build();
    v.channel_idle = vec![true, false, false, false];
    v.die_idle = vec![
        true, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true,
    ];
    assert_eq!(p.place_write(Lpn(0), PlaneId(0), &v), Some(PlaneId(0)));
    assert_eq!(p.place_write(Lpn(0), PlaneId(0), &v), Some(PlaneId(1)));
    // Nothing qualifies: defer.
    v.die_idle[0] = false;
    assert_eq!(p.place_write(Lpn(0), PlaneId(0), &v), None);
}

/// lacr preset: 2 channels × 2 chips × 2 dies × 2 planes; chip c holds dies 2c, 2c+1.
fn lacr_view() -> MockView {
    view("lacr")
}

#[test]
fn lacr_ties_rotate_with_the_token() {
    let v = lacr_view();
    let mut p = PlacementKind::Lacr.build();
    // All four chips idle and empty: equal estimates; token 1, 2, 3, 4 → chips 1, 2, 3, 0.
    // Static plane 3 = die 1 (die 1 of chip 0), plane 1: same die/plane index in the chip.
    let chips: Vec<u32> = (0..5)
        .map(|i| {
            let plane = p.place_write(Lpn(i), PlaneId(3), &v).unwrap();
            assert_eq!(plane.0 % 2, 1);
            let die = die_of(&v, plane);
            assert_eq!(die % 2, 1);
            die / 2
        })
        .collect();
    assert_eq!(chips, [1, 2, 3, 0, 1]);
    // Chips 0 and 1 busy (their die 0, which static plane 1 selects): the token picks
    // among the two tied chips only.
    let mut v = lacr_view();
    for d in [0, 2] {
        v.die_free_at[d] = SimTime::ZERO + Nanos::from_us(100);
    }
    let picks: Vec<u32> =
        (0..4).map(|i| die_of(&v, p.place_write(Lpn(i), PlaneId(1), &v).unwrap()) / 2).collect();
    // token 6,7,8,9 over ties [2, 3] → 2, 3, 2, 3.
    assert_eq!(picks, [2, 3, 2, 3]);
}

/// Chip 0 (die 0): one write queued on plane 0, next page on the top (slowest) layer;
/// chip 1 (die 2) busy for another 700 µs, nothing queued; chips 2, 3 busy for 2 ms.
fn disagreement_view() -> MockView {
    let mut v = lacr_view();
    v.queue_write(PlaneId(0));
    v.next_page[0] = Some(63);
    v.die_free_at[2] = SimTime::ZERO + Nanos::from_us(700);
    v.die_free_at[4] = SimTime::ZERO + Nanos::from_ms(2);
    v.die_free_at[6] = SimTime::ZERO + Nanos::from_ms(2);
    v
}

#[test]
fn ocr_and_lacr_disagree_when_queued_writes_sit_on_slow_layers() {
    // Chip 0 (die 0): one write queued on plane 0, whose next page is on the top layer
    // (slowest, factor 2): LaCR 1200 µs + transfer, OCR 600 µs + transfer.
    // Chip 1 (die 2): busy for another 700 µs, nothing queued.
    // Chips 2, 3 (dies 4, 6): busy for 2 ms.
    let mut v = disagreement_view();
    let t = v.timing().clone();
    let xfer = t.transfer(16384).as_ns();
    assert_eq!(t.program_array(63).as_ns(), 1_200_000);
    let mut ocr = ChipRedirect::ocr(LacrParams::default());
    let mut lacr = ChipRedirect::lacr(LacrParams::default());
    assert_eq!(ocr.estimate(&v, DieId(0), 0), 600_000 + xfer);
    assert_eq!(lacr.estimate(&v, DieId(0), 0), 1_200_000 + xfer);
    assert_eq!(lacr.estimate(&v, DieId(2), 0), 700_000);
    assert_eq!(die_of(&v, ocr.place_write(Lpn(0), PlaneId(0), &v).unwrap()), 0);
    assert_eq!(die_of(&v, lacr.place_write(Lpn(0), PlaneId(0), &v).unwrap()), 2);
    // With the mean layer instead of the tracked write pointer, LaCR sees the mean
    // program time (1.5 × 600 µs for 16 linear layers from 1 to 2) and still avoids chip 0.
    let mut mean =
        ChipRedirect::lacr(LacrParams { pending_write_layer: PendingWriteLayer::Mean, ..Default::default() });
    let m = mean.estimate(&v, DieId(0), 0) - xfer;
    assert!((890_000..=910_000).contains(&m), "mean program time {m}");
    // Counting the new write's own program time: on chip 0 it would follow the queued
    // write onto page 0 of a new block (bottom layer, 600 µs); chip 1's plane 0 pointer
    // at page 40 (layer 10, factor 1 + 10/15).
    let own = LacrParams { include_own_write: true, ..Default::default() };
    v.next_page[4] = Some(40);
    let mut lacr_own = ChipRedirect::lacr(own);
    assert_eq!(lacr_own.estimate(&v, DieId(0), 0), 1_200_000 + 600_000 + 2 * xfer);
    assert_eq!(lacr_own.estimate(&v, DieId(2), 0), 700_000 + 600_000 + 400_000 + xfer);
}

/// Issue #10 item 4: each decision evaluates both flavours, so either policy counts how
/// often the other would choose another chip and by how much their estimates differ.
#[test]
fn redirect_counters_compare_ocr_and_lacr_per_decision() {
    // The disagreement above: OCR picks chip 0 (600 µs + transfer), LaCR chip 1 (700 µs;
    // LaCR's estimate of chip 0 is 1200 µs + transfer).
    let v = disagreement_view();
    let xfer = v.timing().transfer(16384).as_ns();
    for mut p in [ChipRedirect::ocr(LacrParams::default()), ChipRedirect::lacr(LacrParams::default())] {
        assert_eq!(Placement::redirect_counters(&p), Some(RedirectCounters::default()));
        p.place_write(Lpn(0), PlaneId(0), &v).unwrap();
        let c = p.counters();
        assert_eq!((c.decisions, c.choice_differs, c.ties, c.zero_estimate), (1, 1, 0, 0));
        // LaCR's estimate of OCR's chip minus LaCR's estimate of its own.
        assert_eq!(c.differing_gain_ns, 1_200_000 + xfer - 700_000);
        if p.is_layer_aware() {
            assert_eq!(c.estimate_ns, 700_000);
            assert_eq!(c.estimate_gap_ns, 0, "chip 1 has nothing queued: no layer term");
        } else {
            assert_eq!(c.estimate_ns, 600_000 + xfer);
            assert_eq!(c.estimate_gap_ns, 600_000, "the queued write on the slow top layer");
        }
    }
    // Everything idle and empty: every chip at estimate 0, the token decides, both agree.
    let v = lacr_view();
    let mut p = ChipRedirect::lacr(LacrParams::default());
    for i in 0..4 {
        p.place_write(Lpn(i), PlaneId(0), &v).unwrap();
    }
    let c = p.counters();
    assert_eq!((c.decisions, c.choice_differs, c.ties, c.zero_estimate), (4, 0, 4, 4));
    // Policies that keep no such counters report none.
    assert_eq!(PlacementKind::Uq.build().redirect_counters(), None);
}

#[test]
fn estimate_matches_eq_1_to_9_by_hand() {
    let mut v = lacr_view();
    v.now = SimTime::ZERO + Nanos::from_us(10);
    // Die 0 (chip 0, channel 0): a 4 KiB read of page 0 (bottom layer) and two writes on
    // plane 1 whose pointer is at page 62 → pages 62 and 63 (layer 15, factor 2).
    v.queue_read(PlaneId(1), 0, 4096);
    v.queue_write(PlaneId(1));
    v.queue_write(PlaneId(1));
    v.next_page[1] = Some(62);
    // Die 3 (chip 1, same channel): a full-page read of page 32 (layer 8).
    v.queue_read(PlaneId(6), 32, 16384);
    // Die 0 busy until 60 µs: T_remain = 50 µs.
    v.die_free_at[0] = SimTime::ZERO + Nanos::from_us(60);
    let t = v.timing().clone();
    let read =
        |page: u32, bytes: u64| t.t_cmd_read.as_ns() + t.read_array(page).as_ns() + t.transfer(bytes).as_ns();
    let write = |page: u32| t.program_array(page).as_ns() + t.transfer(16384).as_ns();
    let expected = read(0, 4096) + read(32, 16384) + write(62) + write(63) + 50_000;
    let mut lacr = ChipRedirect::lacr(LacrParams::default());
    assert_eq!(lacr.estimate(&v, DieId(0), 0), expected);
    // Per-die read scope drops die 3's read.
    let mut die_scope = ChipRedirect::lacr(LacrParams { read_scope: ReadScope::Die, ..Default::default() });
    assert_eq!(die_scope.estimate(&v, DieId(0), 0), expected - read(32, 16384));
    // Layer factors: page 32 is on layer 8 of 16 → 1 + 8/15.
    assert_eq!(t.read_array(32).as_ns(), 49_000 + 49_000 * 8 / 15);
}

#[test]
fn lacr_skips_channels_doing_gc() {
    let mut v = lacr_view();
    // Channel 0 (chips 0, 1) idle but die 1 runs GC; channel 1's chips busy for 1 ms.
    v.gc[1] = true;
    for d in 4..8 {
        v.die_free_at[d] = SimTime::ZERO + Nanos::from_ms(1);
    }
    let mut p = PlacementKind::Lacr.build();
    for i in 0..4 {
        let die = die_of(&v, p.place_write(Lpn(i), PlaneId(0), &v).unwrap());
        assert!(die >= 4, "picked die {die} on a GC channel");
    }
    // Every channel doing GC: all chips considered, T_GC added where GC runs.
    v.gc[5] = true;
    let die = die_of(&v, p.place_write(Lpn(0), PlaneId(0), &v).unwrap());
    assert_eq!(die / 2, 1, "chip 1 (die 2): no GC on the die itself and idle");
}

fn arb_state(name: &'static str) -> impl Strategy<Value = MockView> {
    let base = view(name);
    let dies = base.die_idle.len();
    let channels = base.channel_idle.len();
    let planes = base.next_page.len();
    let ppb = base.geometry().pages_per_block();
    let ppd = base.geometry().planes_per_die();
    (
        proptest::collection::vec(any::<bool>(), dies),
        proptest::collection::vec(any::<bool>(), channels),
        proptest::collection::vec(0u64..3_000_000, dies),
        proptest::collection::vec(proptest::collection::vec((any::<bool>(), 0..ppd, 0..ppb), 0..6), dies),
        proptest::collection::vec(prop::bool::weighted(0.15), dies),
        proptest::collection::vec(0u64..20, dies),
        proptest::collection::vec(proptest::option::weighted(0.9, 0..ppb), planes),
        0u64..1_000_000,
    )
        .prop_map(move |(idle, ch, free, pend, gc, writes, next, now)| {
            let mut v = base.clone();
            v.now = SimTime::ZERO + Nanos(now);
            v.die_idle = idle;
            v.channel_idle = ch;
            v.die_free_at = free.into_iter().map(|f| SimTime::ZERO + Nanos(f)).collect();
            v.gc = gc;
            v.writes = writes;
            v.next_page = next;
            for (d, ops) in pend.into_iter().enumerate() {
                for (is_read, p, page) in ops {
                    let plane = PlaneId(d as u32 * ppd + p);
                    if is_read {
                        v.queue_read(plane, page, 4096);
                    } else {
                        v.queue_write(plane);
                    }
                }
            }
            v
        })
}

fn check_legal(v: &MockView, static_planes: &[u32]) {
    let geo = v.geometry().clone();
    let any_pair = (0..geo.total_dies())
        .any(|d| v.die_idle[d as usize] && v.channel_idle[geo.channel_of_die(DieId(d)).idx()]);
    let all_gc_channels = (0..geo.channels())
        .all(|c| (0..geo.total_dies()).any(|d| v.gc[d as usize] && geo.channel_of_die(DieId(d)).0 == c));
    for kind in PlacementKind::ALL {
        let mut p = kind.build();
        let mut again = kind.build();
        for &sp in static_planes {
            let sp = PlaneId(sp % geo.total_planes());
            let got = p.place_write(Lpn(sp.0 as u64), sp, v);
            assert_eq!(got, again.place_write(Lpn(sp.0 as u64), sp, v), "{} not deterministic", kind.name());
            if kind.may_defer() {
                assert_eq!(
                    got.is_some(),
                    any_pair,
                    "{}: defers iff no idle die on an idle channel",
                    kind.name()
                );
            } else {
                assert!(got.is_some(), "{} deferred", kind.name());
            }
            let Some(plane) = got else { continue };
            assert!(plane.0 < geo.total_planes(), "{} returned plane {}", kind.name(), plane.0);
            let die = geo.die_of_plane(plane);
            let ch = geo.channel_of_die(die);
            if kind.may_defer() {
                assert!(
                    v.die_idle[die.idx()] && v.channel_idle[ch.idx()],
                    "{} chose a busy pair",
                    kind.name()
                );
            }
            if kind == PlacementKind::Mcs {
                // An idle die of free parallelism, or the static plane when there is none.
                let free = (0..geo.total_chips()).any(|c| parallelism_degree(v, ChipId(c)) > 0);
                assert!(
                    if free { v.die_idle[die.idx()] && v.gc[die.idx()].not() } else { plane == sp },
                    "mcs chose plane {} (free chips: {free})",
                    plane.0
                );
            }
            if matches!(kind, PlacementKind::Ocr | PlacementKind::Lacr) {
                let ch_gc =
                    (0..geo.total_dies()).any(|d| v.gc[d as usize] && geo.channel_of_die(DieId(d)) == ch);
                assert!(!ch_gc || all_gc_channels, "{} chose a channel doing GC", kind.name());
                // Die and plane indices inside the chip come from the static plane.
                assert_eq!(plane.0 % geo.planes_per_die(), sp.0 % geo.planes_per_die());
                assert_eq!(die.0 % geo.dies_per_chip(), geo.die_of_plane(sp).0 % geo.dies_per_chip());
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn every_policy_returns_legal_targets_4x2(v in arb_state("die-binding-4x2"), sps in proptest::collection::vec(any::<u32>(), 1..6)) {
        check_legal(&v, &sps);
    }

    #[test]
    fn every_policy_returns_legal_targets_4x4(v in arb_state("die-binding-4x4"), sps in proptest::collection::vec(any::<u32>(), 1..6)) {
        check_legal(&v, &sps);
    }

    #[test]
    fn every_policy_returns_legal_targets_lacr(v in arb_state("lacr"), sps in proptest::collection::vec(any::<u32>(), 1..6)) {
        check_legal(&v, &sps);
    }
}

// -------------------------------------------------------------------------- mcs

/// Place a request of `n` sub-writes with `p`, queueing each write on the mock device as
/// the engine does (so the next call sees the plane claimed); the planes chosen.
fn place_request(p: &mut dyn Placement, v: &mut MockView, n: u32) -> Vec<u32> {
    p.begin_request(n);
    (0..n)
        .map(|i| {
            let plane = p.place_write(Lpn(u64::from(i)), PlaneId(0), v).expect("mcs never defers");
            v.queue_write(plane);
            plane.0
        })
        .collect()
}

/// The `mbm` device (4 channels × 2 chips × 2 dies × 2 planes, every plane's next write
/// at block 0, page 0) with chip 0 of degree 4; chip 1 of degree 3 (die 3's planes at
/// different pages); chip 2 of degree 2 (die 4 busy); chip 3 of degree 1 (die 6 busy,
/// die 7's planes misaligned); chips 4–7 busy.
fn mcs_view() -> MockView {
    let mut v = view("mbm");
    v.set_next_write(PlaneId(7), 0, 1);
    v.set_next_write(PlaneId(15), 0, 1);
    for d in [4, 6].into_iter().chain(8..16) {
        v.die_idle[d] = false;
    }
    v
}

fn mcs(channel_max_subs: bool, overflow: McsOverflow) -> McsPlacement {
    McsPlacement::new(McsParams { channel_max_subs, overflow, ..McsParams::default() })
}

/// The paper's example of a chip's parallelism (§IV): two dies of two planes, die 1's
/// planes not at one offset: 2 + 1 = 3 pages in one program latency. A busy die, a die
/// with a queued read (served first) and planes claimed by queued writes do not count.
#[test]
fn mcs_parallelism_degree_is_the_papers() {
    let mut v = mcs_view();
    let chip = |c| parallelism_degree(&v, ChipId(c));
    assert_eq!([chip(0), chip(1), chip(2), chip(3), chip(4)], [4, 3, 2, 1, 0]);
    v.die_idle[0] = false;
    assert_eq!(parallelism_degree(&v, ChipId(0)), 2);
    v.queue_read(PlaneId(2), 0, 8192);
    assert_eq!(parallelism_degree(&v, ChipId(0)), 0);
    v.die_idle[0] = true;
    v.queue_write(PlaneId(0));
    assert_eq!(parallelism_degree(&v, ChipId(0)), 1, "die 0: plane 1 left; die 1: a read waits");
    // FTL-picked planes: the row's room less the queued writes.
    v.aligned_rows[0] = Some(2);
    assert_eq!(parallelism_degree(&v, ChipId(0)), 1);
}

/// Best fit (channel shares off): the idle chip of least degree that takes the whole
/// request; a request no chip takes whole goes first to the least chip
/// (`overflow = least`) or the greatest (`most`), the rest placed again.
#[test]
fn mcs_places_a_request_on_the_least_chip_that_takes_it() {
    let expect: [(u32, McsOverflow, &[u32]); 6] = [
        (2, McsOverflow::Least, &[10, 11]),         // chip 2 (degree 2): die 5
        (3, McsOverflow::Least, &[4, 5, 6]),        // chip 1 (3): die 2 both planes, die 3
        (1, McsOverflow::Least, &[14]),             // chip 3 (1): die 7
        (4, McsOverflow::Least, &[0, 2, 1, 3]),     // chip 0 (4): dies alternate, widest first
        (5, McsOverflow::Least, &[14, 0, 2, 1, 3]), // chip 3 takes 1, chip 0 fits 4
        (5, McsOverflow::Most, &[0, 2, 1, 3, 14]),  // chip 0 takes 4, chip 3 fits 1
    ];
    for (n, overflow, planes) in expect {
        let mut v = mcs_view();
        let mut p = mcs(false, overflow);
        assert_eq!(place_request(&mut p, &mut v, n), planes, "{n} sub-writes, {overflow:?}");
    }
    let mut v = mcs_view();
    let mut p = mcs(false, McsOverflow::Least);
    place_request(&mut p, &mut v, 5);
    let c = p.mcs_counters().expect("mcs counts");
    assert_eq!(
        c,
        McsCounters {
            decisions: 5,
            requests: 1,
            continued: 3,
            best_fit: 1,
            overflow: 1,
            quota_relaxed: 0,
            fallback_static: 0,
            read_intensive_areas: 0,
            read_intensive_writes: 0,
            ..McsCounters::default()
        }
    );
}

/// mbm-ftl Fig. 7 on one channel of four chips: chip 03, of least degree, is chosen
/// first, chip 00, of maximal degree, second; chips 01 and 02 keep their full
/// parallelism for the next requests.
#[test]
fn mcs_reproduces_fig_7() {
    let mut c = preset("mbm").expect("preset");
    (c.geometry.channels, c.geometry.chips_per_channel) = (1, 4);
    let mut v = MockView::new(&c.validate().expect("valid"));
    v.die_idle[6] = false; // chip 03: degree 2
    let mut p = PlacementKind::Mcs.build();
    assert_eq!(place_request(p.as_mut(), &mut v, 6), [14, 15, 0, 2, 1, 3]);
    let degrees: Vec<u32> = (0..4).map(|c| parallelism_degree(&v, ChipId(c))).collect();
    assert_eq!(degrees, [0, 4, 4, 0]);
}

/// Channel_Max_Subs spreads a request over channels: channel 1 has two busy dies (load
/// 2), the others none; 8 sub-writes level the channels at ⌈…⌉ 3 (Algorithm 1:
/// 0, 0, 0 → 2 costs 6, the last 2 over four channels), the shares one below the level
/// (2, 0, 2, 2) plus the 2 left to the least-loaded channels by index (channels 0
/// and 2): 3, 0, 3, 2. Without the shares, best fit piles all 8 on channel 0.
#[test]
fn mcs_spreads_a_request_by_channel_max_subs() {
    let per_channel = |planes: &[u32]| {
        let mut n = [0u32; 4];
        for &p in planes {
            n[(p / 8) as usize] += 1;
        }
        n
    };
    let base = || {
        let mut v = view("mbm");
        v.die_idle[4] = false;
        v.die_idle[5] = false;
        v
    };
    let mut v = base();
    let planes = place_request(PlacementKind::Mcs.build().as_mut(), &mut v, 8);
    assert_eq!(per_channel(&planes), [3, 0, 3, 2], "{planes:?}");
    assert_eq!(planes, [0, 2, 1, 16, 18, 17, 24, 26]);
    let mut v = base();
    let planes = place_request(&mut mcs(false, McsOverflow::Least), &mut v, 8);
    assert_eq!(per_channel(&planes), [8, 0, 0, 0], "{planes:?}");
}

/// No idle chip anywhere: the static plane (MCS never defers). A sub-write the engine did
/// not announce is a request of one.
#[test]
fn mcs_falls_back_to_the_static_plane_and_takes_unannounced_writes() {
    let mut v = view("mbm");
    let mut p = mcs(true, McsOverflow::Least);
    assert_eq!(p.place_write(Lpn(0), PlaneId(9), &v), Some(PlaneId(0)), "least chip: all 4, lowest index");
    v.die_idle.iter_mut().for_each(|i| *i = false);
    assert_eq!(p.place_write(Lpn(1), PlaneId(9), &v), Some(PlaneId(9)));
    let c = p.mcs_counters().expect("counts");
    assert_eq!((c.decisions, c.requests, c.fallback_static), (2, 0, 1));
}

/// RS's read-intensive area (mbm-ftl §IV-B): a read longer than
/// `read_intensive_pages` marks the areas of `area_pages` it touches; writes into them
/// then go to their static planes (the striping over all dies) instead of MCS's chip,
/// writes elsewhere still by MCS; a read of exactly the threshold marks nothing; 0 turns
/// the layout off.
#[test]
fn rs_read_intensive_areas_take_the_static_layout() {
    let params = McsParams { read_intensive_pages: 4, area_pages: 16, ..McsParams::default() };
    let mut p = McsPlacement::new(params);
    let v = view("mbm");
    // MCS would put the first sub-write on chip 0 (plane 0), whatever the static plane.
    assert_eq!(p.place_write(Lpn(20), PlaneId(9), &v), Some(PlaneId(0)));
    p.note_read(Lpn(0), 4); // not longer than the threshold
    p.note_read(Lpn(30), 5); // pages 30..=34: areas 1 (16..32) and 2 (32..48)
    let c = p.mcs_counters().unwrap();
    assert_eq!((c.read_intensive_areas, c.read_intensive_writes), (2, 0));
    p.note_read(Lpn(40), 6); // area 2 again: counted once
    assert_eq!(p.mcs_counters().unwrap().read_intensive_areas, 2);
    for (lpn, stat) in [(16, 9), (31, 21), (47, 3)] {
        assert_eq!(p.place_write(Lpn(lpn), PlaneId(stat), &v), Some(PlaneId(stat)), "lpn {lpn}");
    }
    // Area 0 (pages 0..16) and area 3 (48..64) are not read-intensive: MCS decides.
    assert_eq!(p.place_write(Lpn(15), PlaneId(9), &v), Some(PlaneId(0)));
    assert_eq!(p.place_write(Lpn(48), PlaneId(9), &v), Some(PlaneId(0)));
    assert_eq!(p.mcs_counters().unwrap().read_intensive_writes, 3);
    // Off: nothing is marked, MCS places everything.
    let mut off = McsPlacement::new(McsParams { read_intensive_pages: 0, ..params });
    off.note_read(Lpn(30), 50);
    assert_eq!(off.place_write(Lpn(31), PlaneId(21), &v), Some(PlaneId(0)));
    assert_eq!(off.mcs_counters().unwrap().read_intensive_areas, 0);
    assert!(McsParams { area_pages: 0, ..params }.validate().is_err());
}

/// A [`MockView`] that also answers [`DeviceView::pending_sums`], with sums built from
/// its queues the way the engine keeps them (one entry added per queued transaction).
struct Summed<'a> {
    v: &'a MockView,
    sums: Vec<PendingSums>,
}

impl<'a> Summed<'a> {
    fn new(v: &'a MockView) -> Self {
        let (g, t) = (v.geometry(), v.timing());
        let sums = (0..g.total_dies())
            .map(|d| {
                let mut s = PendingSums::default();
                v.for_each_pending(DieId(d), &mut |op| {
                    let e = if op.is_read {
                        PendingEntry::read(g, t, op.bytes, op.page)
                    } else {
                        PendingEntry::write(t, op.bytes, g.plane_index_in_die(op.plane))
                    };
                    s.add(&e);
                    // Taking an entry off undoes adding it.
                    let before = s.clone();
                    s.add(&e);
                    s.remove(&e);
                    assert_eq!(s, before);
                });
                s
            })
            .collect();
        Summed { v, sums }
    }
}

impl DeviceView for Summed<'_> {
    fn geometry(&self) -> &lamina_nand_model::Geometry {
        self.v.geometry()
    }
    fn timing(&self) -> &lamina_nand_model::Timing {
        self.v.timing()
    }
    fn now(&self) -> SimTime {
        self.v.now()
    }
    fn die_idle(&self, die: DieId) -> bool {
        self.v.die_idle(die)
    }
    fn channel_idle(&self, channel: lamina_nand_model::ChannelId) -> bool {
        self.v.channel_idle(channel)
    }
    fn die_free_at(&self, die: DieId) -> SimTime {
        self.v.die_free_at(die)
    }
    fn die_queue_len(&self, die: DieId) -> u32 {
        self.v.die_queue_len(die)
    }
    fn for_each_pending(&self, die: DieId, f: &mut dyn FnMut(lamina_sched::PendingOp)) {
        self.v.for_each_pending(die, f)
    }
    fn pending_sums(&self, die: DieId) -> Option<&PendingSums> {
        Some(&self.sums[die.idx()])
    }
    fn die_gc_active(&self, die: DieId) -> bool {
        self.v.die_gc_active(die)
    }
    fn die_writes(&self, die: DieId) -> u64 {
        self.v.die_writes(die)
    }
    fn next_write_page(&self, plane: PlaneId) -> Option<u32> {
        self.v.next_write_page(plane)
    }
    fn lookup(&self, lpn: Lpn) -> Option<lamina_nand_model::Ppa> {
        self.v.lookup(lpn)
    }
    fn next_write_addr(&self, plane: PlaneId) -> Option<(lamina_nand_model::BlockId, u32)> {
        self.v.next_write_addr(plane)
    }
    fn ftl_picks_plane(&self, die: DieId) -> bool {
        self.v.ftl_picks_plane(die)
    }
    fn die_row_room(&self, die: DieId) -> u32 {
        self.v.die_row_room(die)
    }
}

/// Eq. 1 for `die` summed one queued transaction at a time (the test's oracle): each
/// read's command, transfer and array time (the mean if unmapped), each write's transfer
/// and array time with the page its plane's write pointer gives it (the pointer plus the
/// writes ahead on that plane, wrapping into a new block), GC and the remaining time.
fn eq1_per_transaction(v: &MockView, die: DieId, plane_in_die: u32, p: LacrParams, aware: bool) -> u64 {
    let (g, t) = (v.geometry(), v.timing());
    let ppb = g.pages_per_block();
    let mean = |f: &dyn Fn(u32) -> u64| (0..ppb).map(f).sum::<u64>() / u64::from(ppb);
    let read_array = |page: u32| {
        if aware { t.read_array(page).as_ns() } else { t.t_r[g.page_type_of(page).index()].as_ns() }
    };
    let prog_array = |page: u32| {
        if aware { t.program_array(page).as_ns() } else { t.t_prog[g.page_type_of(page).index()].as_ns() }
    };
    let (mean_read, mean_prog) = (mean(&read_array), mean(&prog_array));
    let read_time = |op: &lamina_sched::PendingOp| {
        t.t_cmd_read.as_ns() + t.transfer(u64::from(op.bytes)).as_ns() + op.page.map_or(mean_read, read_array)
    };
    let tracked = p.pending_write_layer == PendingWriteLayer::Tracked;
    let first_plane = die.0 * g.planes_per_die();
    let page_of = |plane: PlaneId, ahead: u32| {
        if tracked { v.next_write_page(plane).map(|n| (n + ahead) % ppb) } else { None }
    };
    let mut ahead = [0u32; 64];
    let (mut reads, mut writes) = (0u64, 0u64);
    v.for_each_pending(die, &mut |op| {
        if op.is_read {
            reads += if p.read_scope == ReadScope::Die { read_time(&op) } else { 0 };
            return;
        }
        let i = (op.plane.0 - first_plane) as usize;
        writes += page_of(op.plane, ahead[i]).map_or(mean_prog, prog_array)
            + t.transfer(u64::from(op.bytes)).as_ns();
        ahead[i] += 1;
    });
    if p.read_scope == ReadScope::Channel {
        let ch = g.channel_of_die(die);
        for d in (0..g.total_dies()).filter(|&d| g.channel_of_die(DieId(d)) == ch) {
            v.for_each_pending(DieId(d), &mut |op| {
                if op.is_read {
                    reads += read_time(&op);
                }
            });
        }
    }
    if p.include_own_write {
        let plane = PlaneId(first_plane + plane_in_die);
        let page = page_of(plane, ahead[plane_in_die as usize]);
        writes += page.map_or(mean_prog, prog_array) + t.transfer(u64::from(g.page_size_bytes())).as_ns();
    }
    let gc = if v.die_gc_active(die) { t.t_bers.as_ns() } else { 0 };
    reads + writes + gc + v.die_free_at(die).saturating_since(v.now()).as_ns()
}

proptest! {
    /// OCR's and LaCR's estimate, from a scan of the queues or from kept sums (O(planes)
    /// per die: a plane's queued writes summed from prefix sums over a block's pages,
    /// wrapping into new blocks), equals Eq. 1 summed one transaction at a time, for
    /// every option, both flavours, and queues long enough to wrap a block more than
    /// once; and the decisions and their counters are the same either way.
    #[test]
    fn estimates_from_kept_sums_and_scans_follow_eq1(
        ops in proptest::collection::vec((0u8..3, 0u32..16, 0u32..64, 1u32..=16384), 0..1200),
        next in proptest::collection::vec(proptest::option::of(0u32..64), 16),
        busy in proptest::collection::vec(0u64..3_000_000, 8),
        gc in proptest::collection::vec(any::<bool>(), 8),
        params in (any::<bool>(), any::<bool>(), any::<bool>()),
    ) {
        let mut v = lacr_view();
        let planes = v.geometry().total_planes();
        for (kind, plane, page, bytes) in ops {
            // Half the writes on two planes: queues that wrap a block more than once.
            let plane = PlaneId(if kind == 0 && page % 2 == 0 { plane % 2 } else { plane % planes });
            let die = v.geometry().die_of_plane(plane).idx();
            match kind {
                0 => v.queue_write(plane),
                1 => v.queue_read(plane, page, bytes),
                _ => v.pending[die].push(lamina_sched::PendingOp { is_read: true, bytes, page: None, plane }),
            }
        }
        for (p, n) in next.iter().enumerate().take(planes as usize) {
            v.next_page[p] = *n;
        }
        for (d, b) in busy.iter().enumerate() {
            v.die_free_at[d] = SimTime::ZERO + Nanos(*b);
            v.gc[d] = gc[d] && d % 3 == 0;
        }
        let params = LacrParams {
            pending_write_layer: if params.0 { PendingWriteLayer::Tracked } else { PendingWriteLayer::Mean },
            read_scope: if params.1 { ReadScope::Channel } else { ReadScope::Die },
            include_own_write: params.2,
            ..LacrParams::default()
        };
        let s = Summed::new(&v);
        for aware in [false, true] {
            let make = || if aware { ChipRedirect::lacr(params) } else { ChipRedirect::ocr(params) };
            let (mut scan, mut kept) = (make(), make());
            for d in 0..v.geometry().total_dies() {
                for plane_in_die in 0..v.geometry().planes_per_die() {
                    let want = eq1_per_transaction(&v, DieId(d), plane_in_die, params, aware);
                    prop_assert_eq!(scan.estimate(&v, DieId(d), plane_in_die), want, "scan, die {} plane {}", d, plane_in_die);
                    prop_assert_eq!(kept.estimate(&s, DieId(d), plane_in_die), want, "kept, die {} plane {}", d, plane_in_die);
                }
            }
            for i in 0..8 {
                let p = PlaneId(i % planes);
                prop_assert_eq!(scan.place_write(Lpn(i.into()), p, &v), kept.place_write(Lpn(i.into()), p, &s));
            }
            prop_assert_eq!(scan.counters(), kept.counters());
        }
    }
}
