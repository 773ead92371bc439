//! Closed-form timing: every expected value is computed by hand from the preset's
//! source table, term by term, so a regression in any phase shows up as a number.

use lamina_nand_model::{
    BlockId, ChannelId, Command, Device, DeviceOptions, DieId, Nanos, PageAddr, PageState, SimTime, SomlPart,
    preset,
};

fn dev(name: &str) -> Device {
    Device::new(preset(name).unwrap().validate().unwrap(), DeviceOptions { store_tags: true })
}

fn pa(channel: u32, chip: u32, die: u32, plane: u32, block: u32, page: u32) -> PageAddr {
    PageAddr { channel, chip, die, plane, block, page }
}

/// Program pages `0..n` of a block without timing.
fn fill(d: &mut Device, a: PageAddr, n: u32) {
    for p in 0..n {
        let ppa = d.geometry().ppa(PageAddr { page: p, ..a });
        d.program_untimed(ppa, ppa.0).unwrap();
    }
}

fn read<'a>(pages: &'a [PageAddr], len: u32) -> Command<'a> {
    Command::Read { pages, offset_bytes: 0, len_bytes: len }
}

// mbm-ftl Table I: CA = 7 × 10 ns, 10 ns per byte, tR = 78 µs, tPROG = 1300 µs, tBERS = 15 ms.
const CA: u64 = 70;
const XFER_8K: u64 = 8192 * 10;
const T_R: u64 = 78_000;
const T_PROG: u64 = 1_300_000;
const T_BERS: u64 = 15_000_000;

#[test]
fn mbm_page_read_is_ca_plus_tr_plus_transfer() {
    let mut d = dev("mbm");
    let a = pa(0, 0, 0, 0, 7, 0);
    fill(&mut d, a, 1);
    let t = d.issue(SimTime(1000), &read(&[a], 8192)).unwrap();
    assert_eq!(t.start, SimTime(1000));
    assert_eq!(t.bus_end, SimTime(1000 + CA));
    assert_eq!(t.array_start, SimTime(1000 + CA));
    assert_eq!(t.array_end, SimTime(1000 + CA + T_R));
    assert_eq!(t.data_out_start, SimTime(1000 + CA + T_R));
    assert_eq!(t.done, SimTime(1000 + 70 + 78_000 + 81_920));
    assert_eq!(t.suspended, None);
    assert_eq!(d.die_free_at(DieId(0)), t.done);
    assert_eq!(d.channel_busy(ChannelId(0)), Nanos(CA + XFER_8K));
    assert_eq!(d.die_busy(DieId(0)), Nanos(70 + 78_000 + 81_920));
}

#[test]
fn mbm_partial_read_transfers_only_the_requested_bytes() {
    let mut d = dev("mbm");
    let a = pa(0, 0, 0, 0, 7, 0);
    fill(&mut d, a, 1);
    let t = d.issue(SimTime(0), &Command::Read { pages: &[a], offset_bytes: 4096, len_bytes: 4096 }).unwrap();
    // Sensing is a whole page; only 4 KiB cross the bus.
    assert_eq!(t.done, SimTime(70 + 78_000 + 4096 * 10));
}

#[test]
fn mbm_page_program_is_ca_plus_transfer_plus_tprog() {
    let mut d = dev("mbm");
    let a = pa(1, 1, 1, 1, 9, 0);
    let t = d.issue(SimTime(0), &Command::Program { pages: &[a], tags: &[5] }).unwrap();
    assert_eq!(t.bus_end, SimTime(CA + XFER_8K));
    assert_eq!(t.array_start, t.bus_end);
    assert_eq!(t.done, SimTime(70 + 8192 * 10 + 1_300_000));
    assert_eq!(t.data_out_start, t.done);
    let ppa = d.geometry().ppa(a);
    assert_eq!(d.page_state(ppa), PageState::Programmed);
    assert_eq!(d.tag(ppa), Some(5));
    assert_eq!(d.write_pointer(d.geometry().block_of(ppa)), Some(1));
}

#[test]
fn two_reads_on_two_dies_of_one_channel_overlap_arrays_but_serialize_transfers() {
    let mut d = dev("mbm");
    let a = pa(0, 0, 0, 0, 1, 0); // channel 0, chip 0, die 0
    let b = pa(0, 0, 1, 0, 1, 0); // channel 0, chip 0, die 1 (shares the chip interface)
    let c = pa(0, 1, 0, 0, 1, 0); // channel 0, chip 1
    let e = pa(1, 0, 0, 0, 1, 0); // channel 1: independent
    for x in [a, b, c, e] {
        fill(&mut d, x, 1);
    }
    let r1 = d.issue(SimTime(0), &read(&[a], 8192)).unwrap();
    let r2 = d.issue(SimTime(0), &read(&[b], 8192)).unwrap();
    // r1: command [0, 70), array [70, 78070), data out [78070, 159990).
    assert_eq!((r1.start, r1.array_start, r1.array_end), (SimTime(0), SimTime(70), SimTime(78_070)));
    assert_eq!((r1.data_out_start, r1.done), (SimTime(78_070), SimTime(159_990)));
    // r2: its command waits for r1's command only: [70, 140); array [140, 78140) overlaps
    // r1's array; its data out waits for r1's data out: [159990, 241910).
    assert_eq!((r2.start, r2.array_start, r2.array_end), (SimTime(70), SimTime(140), SimTime(78_140)));
    assert!(r2.array_start < r1.array_end);
    assert_eq!((r2.data_out_start, r2.done), (SimTime(159_990), SimTime(159_990 + 81_920)));
    // The data waited in die 1's page register: the die stays busy until data out.
    assert_eq!(d.die_free_at(DieId(1)), SimTime(241_910));
    // A third read on another chip of the same channel: command in the gap [140, 210),
    // array [210, 78210), data out after r2's: [241910, 323830).
    let r3 = d.issue(SimTime(0), &read(&[c], 8192)).unwrap();
    assert_eq!((r3.start, r3.done), (SimTime(140), SimTime(241_910 + 81_920)));
    // Channel 1 is independent.
    let r4 = d.issue(SimTime(0), &read(&[e], 8192)).unwrap();
    assert_eq!(r4.done, SimTime(159_990));
    // Queries.
    assert!(!d.is_channel_idle(ChannelId(0), SimTime(100)));
    assert_eq!(d.channel_free_at(ChannelId(0), SimTime(100)), SimTime(210));
    assert!(d.is_channel_idle(ChannelId(0), SimTime(300)));
    assert!(!d.is_die_idle(DieId(0), SimTime(100_000)));
    assert!(d.is_die_idle(DieId(0), SimTime(159_990)));
}

#[test]
fn multi_plane_program_costs_one_tprog_and_two_transfers() {
    let mut d = dev("mbm");
    let p0 = pa(0, 0, 0, 0, 4, 0);
    let p1 = pa(0, 0, 0, 1, 4, 0);
    let t = d.issue(SimTime(0), &Command::Program { pages: &[p0, p1], tags: &[1, 2] }).unwrap();
    // mbm has no tDBSY: 2 × (70 + 81920) on the bus, then one tPROG.
    assert_eq!(t.bus_end, SimTime(2 * 70 + 2 * 81_920));
    assert_eq!(t.done, SimTime(2 * 70 + 2 * 81_920 + 1_300_000));
    // Versus two single-plane programs on one die: the second waits for the first.
    let mut d2 = dev("mbm");
    let a = d2.issue(SimTime(0), &Command::Program { pages: &[p0], tags: &[1] }).unwrap();
    let b = d2.issue(SimTime(0), &Command::Program { pages: &[p1], tags: &[2] }).unwrap();
    assert_eq!(a.done, SimTime(CA + XFER_8K + T_PROG));
    assert_eq!(b.start, a.done);
    assert_eq!(b.done, SimTime(2 * (CA + XFER_8K + T_PROG)));
}

#[test]
fn multi_plane_read_and_erase() {
    let mut d = dev("mbm");
    let p0 = pa(0, 0, 0, 0, 4, 0);
    let p1 = pa(0, 0, 0, 1, 4, 0);
    fill(&mut d, p0, 1);
    fill(&mut d, p1, 1);
    let t = d.issue(SimTime(0), &read(&[p0, p1], 8192)).unwrap();
    assert_eq!(t.array_start, SimTime(140));
    assert_eq!(t.done, SimTime(140 + 78_000 + 2 * 81_920));
    let e = d.issue(t.done, &Command::Erase { blocks: &[p0, p1] }).unwrap();
    assert_eq!(e.done, t.done + Nanos(140 + T_BERS));
    let b0 = d.geometry().block_id(p0);
    assert_eq!(d.block_erase_count(b0), 1);
    assert_eq!(d.page_state(d.geometry().ppa(p1)), PageState::Erased);
}

#[test]
fn mqsim_transfer_and_multi_plane_overheads() {
    let mut d = dev("mqsim-default");
    let p0 = pa(7, 3, 1, 0, 2047, 0);
    let p1 = pa(7, 3, 1, 1, 2047, 0);
    fill(&mut d, p0, 1);
    fill(&mut d, p1, 1);
    // 8192 B at 8 bit × 333 MT/s = 8192 × 8000 / 2664 = 24600.6… → 24601 ns (ceil of the
    // total; MQSim's truncated 3 ns per byte would give 24576).
    let r = d.issue(SimTime(0), &read(&[p0], 8192)).unwrap();
    assert_eq!(r.done, SimTime(290 + 75_000 + 24_601));
    // Multi-plane erase: 2 × 220 ns + one tDBSY of 500 ns, then 3.8 ms.
    let e = d.issue(r.done, &Command::Erase { blocks: &[p0, p1] }).unwrap();
    assert_eq!(e.done, r.done + Nanos(2 * 220 + 500 + 3_800_000));
    // Multi-plane program: 2 × 361 + 500 + transfer of 16384 B (⌈16384 × 8000 / 2664⌉ =
    // 49202), then 750 µs.
    let w = d.issue(e.done, &Command::Program { pages: &[p0, p1], tags: &[0, 0] }).unwrap();
    assert_eq!(w.done, e.done + Nanos(2 * 361 + 500 + 49_202 + 750_000));
}

#[test]
fn suspended_erase_finishes_later_by_the_read_plus_overheads() {
    let mut d = dev("mbm");
    let blk = pa(0, 0, 0, 0, 10, 0);
    let data = pa(0, 0, 0, 1, 3, 0);
    fill(&mut d, data, 1);
    let e = d.issue(SimTime(0), &Command::Erase { blocks: &[blk] }).unwrap();
    assert_eq!(e.done, SimTime(CA + T_BERS));
    // A read at 1 ms suspends it: 700 µs suspend (mbm preset, MQSim default), then the
    // read, then the erase resumes (no resume overhead) with 15,000,070 − 1,000,000 ns left.
    let r = d.issue(SimTime(1_000_000), &read(&[data], 8192)).unwrap();
    let suspend = 700_000;
    assert_eq!(r.start, SimTime(1_000_000 + suspend));
    assert_eq!(r.done, SimTime(1_000_000 + suspend + 70 + 78_000 + 81_920));
    let s = r.suspended.expect("the erase is suspended");
    assert_eq!(s.die, DieId(0));
    assert_eq!(s.suspended_at, SimTime(1_000_000));
    assert_eq!(s.resumed_at, r.done);
    assert_eq!(s.old_done, e.done);
    assert_eq!(s.new_done, r.done + Nanos(15_000_070 - 1_000_000));
    // Later by exactly: suspend overhead + the read's own time + resume overhead (0).
    assert_eq!(s.new_done - s.old_done, Nanos(suspend + (70 + 78_000 + 81_920)));
    assert_eq!(d.die_free_at(DieId(0)), s.new_done);
    assert_eq!(d.suspension_count(), 1);

    // A read arriving while the erase is still suspended joins the suspension (no
    // second suspend overhead): it starts right after the first read.
    let data2 = pa(0, 0, 0, 1, 3, 1);
    d.program_untimed(d.geometry().ppa(data2), 9).unwrap();
    let r2 = d.issue(SimTime(1_100_000), &read(&[data2], 8192)).unwrap();
    assert_eq!(r2.start, r.done);
    let s2 = r2.suspended.unwrap();
    assert_eq!(s2.old_done, s.new_done);
    assert_eq!(s2.new_done, s.new_done + Nanos(70 + 78_000 + 81_920));
    assert_eq!(d.suspension_count(), 1);

    // Once resumed (r2 ends at 2,019,980 ns), the cap (1 suspension per op) makes
    // further reads wait for the erase.
    assert_eq!(s2.resumed_at, SimTime(2_019_980));
    let r3 = d.issue(SimTime(3_000_000), &read(&[data], 8192)).unwrap();
    assert_eq!(r3.suspended, None);
    assert_eq!(r3.start, s2.new_done);
}

#[test]
fn suspended_program_and_reads_of_the_page_being_programmed() {
    let mut d = dev("mbm");
    let w = pa(0, 0, 0, 0, 2, 0);
    let other = pa(0, 0, 0, 1, 2, 0);
    fill(&mut d, other, 1);
    let p = d.issue(SimTime(0), &Command::Program { pages: &[w], tags: &[1] }).unwrap();
    // A read of the page being programmed must wait for the program (no suspension).
    let mut d2 = d.clone();
    let own = d2.issue(SimTime(100_000), &read(&[w], 8192)).unwrap();
    assert_eq!(own.suspended, None);
    assert_eq!(own.start, p.done);
    // A read of another page suspends it at the issue time (array phase running).
    let at = 500_000;
    let r = d.issue(SimTime(at), &read(&[other], 8192)).unwrap();
    let s = r.suspended.unwrap();
    assert_eq!(r.start, SimTime(at + 100_000));
    assert_eq!(s.new_done, p.done + Nanos(100_000 + 70 + 78_000 + 81_920));
}

#[test]
fn suspension_of_an_erase_whose_array_has_not_started_waits_for_its_start() {
    let mut d = dev("mbm");
    let data = pa(0, 0, 0, 1, 3, 0);
    fill(&mut d, data, 1);
    // Occupy channel 0 so the erase command goes out late: a read on chip 1 first.
    let c1 = pa(0, 1, 0, 0, 0, 0);
    fill(&mut d, c1, 1);
    let busy = d.issue(SimTime(0), &read(&[c1], 8192)).unwrap();
    let e = d.issue(SimTime(0), &Command::Erase { blocks: &[pa(0, 0, 0, 0, 1, 0)] }).unwrap();
    // The erase command fits in the gap after the first read's command: [70, 140).
    assert_eq!(e.start, SimTime(70));
    let r = d.issue(SimTime(100), &read(&[data], 8192)).unwrap();
    let s = r.suspended.unwrap();
    assert_eq!(s.suspended_at, SimTime(140));
    // Data out of this read queues behind the first read's data out.
    assert!(r.data_out_start >= busy.done);
    assert_eq!(s.new_done, s.resumed_at + Nanos(T_BERS));
}

#[test]
fn lacr_layer_speed_factor_applies_to_array_time() {
    let mut d = dev("lacr");
    let a = pa(0, 0, 0, 0, 0, 0);
    fill(&mut d, a, 64);
    // 16 KiB over 8 bit × 333 MT/s: ⌈16384 × 8000 / 2664⌉ = 49202 ns; command 7 × 25 ns.
    let bottom = d.issue(SimTime(0), &read(&[a], 16384)).unwrap();
    assert_eq!(bottom.done, SimTime(175 + 49_000 + 49_202));
    // Page 63 is on layer 15 (the top, slowest): tR × 2.
    let top = d.issue(bottom.done, &read(&[PageAddr { page: 63, ..a }], 16384)).unwrap();
    assert_eq!(top.done - bottom.done, Nanos(175 + 98_000 + 49_202));
    // Page 4 is on layer 1 (32 word-lines over 16 layers): tR × (1 + 1/15) = 52,267 ns.
    let l1 = d.issue(top.done, &read(&[PageAddr { page: 4, ..a }], 16384)).unwrap();
    assert_eq!(l1.array_end - l1.array_start, Nanos(52_267));
    // Programs scale too: page 63 programs in 1200 µs.
    let b = pa(0, 0, 0, 0, 1, 0);
    fill(&mut d, b, 63);
    let w = d.issue(l1.done, &Command::Program { pages: &[PageAddr { page: 63, ..b }], tags: &[0] }).unwrap();
    assert_eq!(w.array_end - w.array_start, Nanos(1_200_000));
}

#[test]
fn every_read_on_a_soml_chip_takes_table_1s_latency() {
    let mut d = dev("soml-tlc64");
    // Blocks 0, 1, 2, 3 (decoders 0..4 of 4); pages 0 (LSB), 1 (CSB), 2 (MSB), 0 — all
    // on layer 0; slots 0..4 of the page.
    let parts: Vec<SomlPart> = (0..4)
        .map(|i| {
            let a = pa(1, 1, 0, 1, i, i % 3);
            fill(&mut d, a, i % 3 + 1);
            SomlPart { page: a, offset_bytes: 4096 * i, len_bytes: 4096 }
        })
        .collect();
    let t = d.issue(SimTime(0), &Command::SomlRead { parts: &parts }).unwrap();
    // soml-read Table 1's SOML-enabled chip: a 4-part SOML read with an MSB part is
    // command 4 × 7 × 5 ns = 140 ns, array 185.5 µs (the slowest part), data out
    // 16 KiB × 5 ns = 81,920 ns: 267,560 ns.
    assert_eq!(t.bus_end, SimTime(140));
    assert_eq!(t.array_end, SimTime(140 + 185_500));
    assert_eq!(t.done, SimTime(267_560));
    assert_eq!(d.stats().soml_parts, 4);
    // A plain read on the same chip takes the same chip latency: 35 + 185.5 µs + 16 KiB
    // × 5 ns for the MSB page, 35 + 92.7 µs + 4 KiB × 5 ns for 4 KiB of an LSB page.
    let r = d.issue(t.done, &read(&[parts[2].page], 16384)).unwrap();
    assert_eq!(r.done - t.done, Nanos(35 + 185_500 + 16384 * 5));
    let r2 = d.issue(r.done, &read(&[parts[0].page], 4096)).unwrap();
    assert_eq!(r2.done - r.done, Nanos(35 + 92_700 + 4096 * 5));
}

/// A SOML-capable chip without explicit latencies reads `t_r × (layers + slots − 1) /
/// (layers − 1)` (soml-read §6.1, Eq. 1), for each partial-read granularity.
#[test]
fn the_default_soml_factor_follows_equation_1() {
    for (partial, slots) in [(8192u32, 2u64), (4096, 4), (2048, 8)] {
        let mut c = preset("soml-tlc64").unwrap();
        c.geometry.partial_read_bytes = Some(partial);
        let soml = c.soml.as_mut().unwrap();
        soml.t_r = None;
        soml.max_parts = 2;
        let spec = c.validate().unwrap();
        // 64 layers; MSB page 2: 180 µs × (63 + slots) / 63, rounded to the nearest ns.
        let want = (180_000 * (63 + slots) + 31) / 63;
        assert_eq!(spec.timing().read_array(2), Nanos(want), "{slots} slots");
    }
    // 4 slots: 180 µs × 67/63 = 191,428.6 → 191,429 ns (the paper rounds the factor to 1.063).
    assert_eq!((180_000 * 67 + 31) / 63, 191_429);
}

/// `timing.re_reads`: every read senses the page 1 + re_reads times, data out once.
#[test]
fn re_reads_repeat_the_sensing_of_every_read() {
    let mut c = preset("soml-tlc64").unwrap();
    c.timing.re_reads = 3;
    let mut d = Device::new(c.validate().unwrap(), DeviceOptions { store_tags: true });
    let a = pa(0, 0, 0, 0, 0, 0);
    fill(&mut d, a, 3);
    let r = d.issue(SimTime(0), &read(&[PageAddr { page: 2, ..a }], 16384)).unwrap();
    assert_eq!(r.done, SimTime(35 + 4 * 185_500 + 16384 * 5));
}

#[test]
fn pen_partial_erase_resets_only_its_pages_and_counts_per_page() {
    let mut d = dev("pen");
    let a = pa(0, 0, 0, 0, 5, 0);
    fill(&mut d, a, 576);
    let blk = d.geometry().block_id(a);
    assert_eq!(d.write_pointer(blk), None);
    // PB 5: level 2 (144 pages), second of its level → pages 144..288.
    assert_eq!(d.pb_range(5).unwrap(), (144, 144));
    let t = d.issue(SimTime(0), &Command::PartialErase { block: a, pb: 5 }).unwrap();
    assert_eq!(t.done, SimTime(35 + 9_500_000));
    let g = d.geometry().clone();
    let page = |p: u32| g.ppa(PageAddr { page: p, ..a });
    assert_eq!(d.page_state(page(143)), PageState::Programmed);
    assert_eq!(d.page_state(page(144)), PageState::Erased);
    assert_eq!(d.page_state(page(287)), PageState::Erased);
    assert_eq!(d.page_state(page(288)), PageState::Programmed);
    assert_eq!(d.write_pointer(blk), Some(144));
    assert_eq!(d.page_erase_count(page(200)), 1);
    assert_eq!(d.page_erase_count(page(0)), 0);
    assert_eq!(d.block_erase_count(blk), 0);
    assert_eq!(d.programmed_pages(blk), 576 - 144);
    // Smallest PB (level 6): 9 pages. PB 127 = last 9 pages.
    assert_eq!(d.pb_range(127).unwrap(), (567, 9));
    // PB 1 is the whole block at block-erase latency and counts as a block erase.
    let t1 = d.issue(t.done, &Command::PartialErase { block: a, pb: 1 }).unwrap();
    assert_eq!(t1.done, t.done + Nanos(35 + 10_000_000));
    assert_eq!(d.block_erase_count(blk), 1);
    assert_eq!(d.page_erase_count(page(200)), 2);
    assert_eq!(d.page_erase_count(page(0)), 1);
    assert_eq!(d.partially_erased_blocks(), 1);
}

#[test]
fn copyback_moves_data_without_bus_transfer() {
    let mut d = dev("mbm");
    let from = pa(0, 0, 0, 0, 1, 0);
    let to = pa(0, 0, 0, 0, 2, 0);
    d.program_untimed(d.geometry().ppa(from), 77).unwrap();
    let t = d.issue(SimTime(0), &Command::CopyBack { from: &[from], to: &[to] }).unwrap();
    // Read command, tR, program command, tPROG; no data transfer.
    assert_eq!(t.data_out_start, SimTime(70 + 78_000));
    assert_eq!(t.done, SimTime(70 + 78_000 + 70 + 1_300_000));
    assert_eq!(d.channel_busy(ChannelId(0)), Nanos(140));
    assert_eq!(d.tag(d.geometry().ppa(to)), Some(77));
}

#[test]
fn untimed_preconditioning_obeys_physics() {
    let mut d = dev("die-binding-4x2");
    let b = BlockId(3);
    let first = d.geometry().first_page(b);
    d.program_untimed(first, 1).unwrap();
    assert!(d.program_untimed(first, 1).is_err());
    d.erase_untimed(b).unwrap();
    assert_eq!(d.page_state(first), PageState::Erased);
    assert_eq!(d.tag(first), None);
    assert_eq!(d.block_erase_count(b), 1);
    assert!(d.partial_erase_untimed(b, 2).is_err(), "partial erase is not enabled here");
    let past = BlockId(d.geometry().total_blocks());
    assert_eq!(d.erase_untimed(past), Err(lamina_nand_model::NandError::BlockOutOfRange(past)));
}

// Remapping's reads joined in flight (docs/model.md, "Register read"): after a one-page
// read, the page register still holds the sensed page; a register read outputs bytes of
// it again for a read command's cycles and the transfer, with no array time.
#[test]
fn a_register_read_is_ca_plus_transfer_while_the_register_holds_the_page() {
    let mut d = dev("mbm");
    d.set_register_tracking(true);
    let a = pa(0, 0, 0, 0, 7, 0);
    fill(&mut d, a, 2);
    let r = d.issue(SimTime(0), &Command::Read { pages: &[a], offset_bytes: 0, len_bytes: 4096 }).unwrap();
    assert_eq!(r.done, SimTime(CA + T_R + 4096 * 10));
    let ppa = d.geometry().ppa(a);
    // The mbm chip senses whole pages: any byte range of the page is held.
    assert!(d.register_holds(ppa, 4096, 4096));
    let other = d.geometry().ppa(PageAddr { page: 1, ..a });
    assert!(!d.register_holds(other, 0, 4096));
    let at = r.done.0;
    let t = d.issue(r.done, &Command::RegisterRead { page: a, offset_bytes: 4096, len_bytes: 4096 }).unwrap();
    assert_eq!(t.start, SimTime(at));
    assert_eq!(t.array_start, t.array_end, "no sensing");
    assert_eq!(t.done, SimTime(at + CA + 4096 * 10));
    assert_eq!(d.stats().register_reads, 1);
    assert_eq!(d.stats().reads, 1, "not a flash read");
    // Still held: the register read does not change it. A program on the die does.
    assert!(d.register_holds(ppa, 0, 8192));
    d.issue(t.done, &Command::Program { pages: &[PageAddr { page: 2, ..a }], tags: &[1] }).unwrap();
    assert!(!d.register_holds(ppa, 0, 4096));
    assert!(matches!(
        d.issue(t.done, &Command::RegisterRead { page: a, offset_bytes: 0, len_bytes: 4096 }),
        Err(lamina_nand_model::NandError::RegisterMiss(x)) if x == a
    ));
}

#[test]
fn a_soml_chip_register_holds_only_the_sensed_partial_units() {
    let mut d = dev("soml-tlc64");
    d.set_register_tracking(true);
    let a = pa(0, 0, 0, 0, 3, 0);
    fill(&mut d, a, 1);
    let ppa = d.geometry().ppa(a);
    // A 2 KiB read at 5 KiB senses the 4 KiB unit [4, 8) KiB.
    d.read_page(SimTime(0), ppa, 5 * 1024, 2048).unwrap();
    assert!(d.register_holds(ppa, 4096, 4096));
    assert!(!d.register_holds(ppa, 0, 4096));
    assert!(!d.register_holds(ppa, 4096, 4097));
    // Another die's operations leave this die's register alone.
    let b = pa(0, 1, 0, 0, 3, 0);
    fill(&mut d, b, 1);
    d.issue(SimTime(1), &Command::Program { pages: &[PageAddr { page: 1, ..b }], tags: &[2] }).unwrap();
    assert!(d.register_holds(ppa, 4096, 4096));
    // An untimed erase of the block forgets it.
    d.erase_untimed(d.geometry().block_id(a)).unwrap();
    assert!(!d.register_holds(ppa, 4096, 4096));
}

/// Register tracking is opt-in: without it a read leaves nothing in the register, and a
/// register read is refused.
#[test]
fn without_register_tracking_no_register_holds_a_page() {
    let mut d = dev("mbm");
    let a = pa(0, 0, 0, 0, 7, 0);
    fill(&mut d, a, 1);
    let r = d.issue(SimTime(0), &Command::Read { pages: &[a], offset_bytes: 0, len_bytes: 4096 }).unwrap();
    let ppa = d.geometry().ppa(a);
    assert!(!d.register_holds(ppa, 0, 4096));
    assert!(matches!(
        d.issue(r.done, &Command::RegisterRead { page: a, offset_bytes: 0, len_bytes: 4096 }),
        Err(lamina_nand_model::NandError::RegisterMiss(_))
    ));
}
