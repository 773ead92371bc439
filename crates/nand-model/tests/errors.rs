//! Every rejected operation has a test asserting its error, and a rejected operation
//! leaves the device unchanged (a buggy FTL hits these errors in tests).

use lamina_nand_model::{
    Command, Device, DeviceOptions, NandConfigError, NandError, PageAddr, PageState, SimTime, SomlPart,
    preset,
};

fn dev(name: &str) -> Device {
    Device::new(preset(name).unwrap().validate().unwrap(), DeviceOptions { store_tags: true })
}

fn pa(channel: u32, chip: u32, die: u32, plane: u32, block: u32, page: u32) -> PageAddr {
    PageAddr { channel, chip, die, plane, block, page }
}

fn prog(d: &mut Device, a: PageAddr) {
    let ppa = d.geometry().ppa(a);
    d.program_untimed(ppa, 0).unwrap();
}

fn program<'a>(pages: &'a [PageAddr], tags: &'a [u64]) -> Command<'a> {
    Command::Program { pages, tags }
}

#[test]
fn multi_plane_wrong_page_offset() {
    let mut d = dev("mbm");
    prog(&mut d, pa(0, 0, 0, 1, 4, 0));
    let e =
        d.issue(SimTime(0), &program(&[pa(0, 0, 0, 0, 4, 0), pa(0, 0, 0, 1, 4, 1)], &[0, 0])).unwrap_err();
    assert_eq!(e, NandError::MultiPlane("all planes must use the same page offset"));
    // Nothing was programmed, no time was reserved.
    assert_eq!(d.page_state(d.geometry().ppa(pa(0, 0, 0, 0, 4, 0))), PageState::Erased);
    assert_eq!(d.stats().programs, 0);
}

#[test]
fn multi_plane_wrong_block_offset() {
    let mut d = dev("mbm");
    let e =
        d.issue(SimTime(0), &program(&[pa(0, 0, 0, 0, 4, 0), pa(0, 0, 0, 1, 5, 0)], &[0, 0])).unwrap_err();
    assert_eq!(e, NandError::MultiPlane("all planes must use the same block offset"));
    let e = d.issue(SimTime(0), &Command::Erase { blocks: &[pa(0, 0, 0, 0, 4, 0), pa(0, 0, 0, 1, 5, 0)] });
    assert_eq!(e.unwrap_err(), NandError::MultiPlane("all planes must use the same block offset"));
}

#[test]
fn multi_plane_across_dies_or_repeated_plane() {
    let mut d = dev("mbm");
    let e =
        d.issue(SimTime(0), &program(&[pa(0, 0, 0, 0, 4, 0), pa(0, 0, 1, 1, 4, 0)], &[0, 0])).unwrap_err();
    assert_eq!(e, NandError::MultiPlane("all planes must belong to one die"));
    let e =
        d.issue(SimTime(0), &program(&[pa(0, 0, 0, 0, 4, 0), pa(0, 0, 0, 0, 4, 0)], &[0, 0])).unwrap_err();
    assert_eq!(e, NandError::MultiPlane("each plane may appear once"));
    let three = [pa(0, 0, 0, 0, 4, 0), pa(0, 0, 0, 1, 4, 0), pa(0, 0, 0, 1, 4, 0)];
    assert!(matches!(
        d.issue(SimTime(0), &program(&three, &[0, 0, 0])).unwrap_err(),
        NandError::CountMismatch { expected: 2, got: 3, .. }
    ));
}

#[test]
fn multi_plane_read_wrong_offsets() {
    let mut d = dev("mbm");
    prog(&mut d, pa(0, 0, 0, 0, 4, 0));
    prog(&mut d, pa(0, 0, 0, 1, 5, 0));
    let pages = [pa(0, 0, 0, 0, 4, 0), pa(0, 0, 0, 1, 5, 0)];
    let e =
        d.issue(SimTime(0), &Command::Read { pages: &pages, offset_bytes: 0, len_bytes: 8192 }).unwrap_err();
    assert_eq!(e, NandError::MultiPlane("all planes must use the same block offset"));
}

#[test]
fn program_of_a_written_page() {
    let mut d = dev("mbm");
    let a = pa(1, 0, 1, 0, 8, 0);
    d.issue(SimTime(0), &program(&[a], &[1])).unwrap();
    let e = d.issue(SimTime(0), &program(&[a], &[2])).unwrap_err();
    assert_eq!(e, NandError::NotErased(a));
    assert_eq!(d.tag(d.geometry().ppa(a)), Some(1), "the failed program must not overwrite the tag");
}

#[test]
fn out_of_order_program() {
    let mut d = dev("mbm");
    let a = pa(1, 0, 1, 0, 8, 2);
    let e = d.issue(SimTime(0), &program(&[a], &[1])).unwrap_err();
    assert_eq!(e, NandError::OutOfOrder { addr: a, expected: 0 });
    assert!(e.to_string().contains("page 0 of the block must be programmed first"));
    // Also inside a partial block after a partial erase (pen: PB 3 = pages 288..576).
    let mut p = dev("pen");
    let b = pa(0, 0, 0, 0, 1, 0);
    for page in 0..576 {
        prog(&mut p, PageAddr { page, ..b });
    }
    p.issue(SimTime(0), &Command::PartialErase { block: b, pb: 3 }).unwrap();
    let e = p.issue(SimTime(0), &program(&[PageAddr { page: 300, ..b }], &[0])).unwrap_err();
    assert_eq!(e, NandError::OutOfOrder { addr: PageAddr { page: 300, ..b }, expected: 288 });
    let e = p.issue(SimTime(0), &program(&[PageAddr { page: 10, ..b }], &[0])).unwrap_err();
    assert_eq!(e, NandError::NotErased(PageAddr { page: 10, ..b }));
    p.issue(SimTime(0), &program(&[PageAddr { page: 288, ..b }], &[0])).unwrap();
}

#[test]
fn read_of_an_erased_or_never_programmed_page() {
    let mut d = dev("mbm");
    let a = pa(0, 1, 0, 1, 2, 0);
    let read = Command::Read { pages: &[a], offset_bytes: 0, len_bytes: 8192 };
    assert_eq!(d.issue(SimTime(0), &read).unwrap_err(), NandError::ReadErased(a));
    prog(&mut d, a);
    d.issue(SimTime(0), &read).unwrap();
    d.issue(SimTime(0), &Command::Erase { blocks: &[a] }).unwrap();
    assert_eq!(d.issue(SimTime(0), &read).unwrap_err(), NandError::ReadErased(a));
    // Copy-back from an erased page is a read of an erased page too.
    let to = pa(0, 1, 0, 1, 3, 0);
    assert_eq!(
        d.issue(SimTime(0), &Command::CopyBack { from: &[a], to: &[to] }).unwrap_err(),
        NandError::ReadErased(a)
    );
}

#[test]
fn bad_ranges_counts_and_addresses() {
    let mut d = dev("mbm");
    let a = pa(0, 0, 0, 0, 0, 0);
    prog(&mut d, a);
    for (offset, len) in [(0, 0), (8000, 200), (0, 8193)] {
        let e = d.issue(SimTime(0), &Command::Read { pages: &[a], offset_bytes: offset, len_bytes: len });
        assert_eq!(e.unwrap_err(), NandError::BadRange { offset, len, page_size: 8192 });
    }
    let b = pa(0, 0, 0, 0, 1, 0);
    assert!(matches!(
        d.issue(SimTime(0), &program(&[b], &[])).unwrap_err(),
        NandError::CountMismatch { expected: 1, got: 0, .. }
    ));
    assert_eq!(d.issue(SimTime(0), &program(&[], &[])).unwrap_err(), NandError::Empty);
    let out = pa(4, 0, 0, 0, 0, 0);
    assert_eq!(d.issue(SimTime(0), &program(&[out], &[0])).unwrap_err(), NandError::OutOfRange(out));
    let out = pa(0, 0, 0, 0, 0, 1024);
    assert_eq!(d.issue(SimTime(0), &program(&[out], &[0])).unwrap_err(), NandError::OutOfRange(out));
}

#[test]
fn copyback_must_stay_in_plane() {
    let mut d = dev("mbm");
    let from = pa(0, 0, 0, 0, 1, 0);
    prog(&mut d, from);
    let to = pa(0, 0, 0, 1, 1, 0);
    assert_eq!(
        d.issue(SimTime(0), &Command::CopyBack { from: &[from], to: &[to] }).unwrap_err(),
        NandError::MultiPlane("copy-back must stay within each source's plane")
    );
}

#[test]
fn disabled_features_are_rejected() {
    let mut d = dev("mbm");
    let a = pa(0, 0, 0, 0, 0, 0);
    prog(&mut d, a);
    let parts = [SomlPart { page: a, offset_bytes: 0, len_bytes: 4096 }];
    assert_eq!(
        d.issue(SimTime(0), &Command::SomlRead { parts: &parts }).unwrap_err(),
        NandError::NotEnabled("SOML read")
    );
    assert_eq!(
        d.issue(SimTime(0), &Command::PartialErase { block: a, pb: 2 }).unwrap_err(),
        NandError::NotEnabled("partial-block erase")
    );
}

#[test]
fn partial_block_index_out_of_range() {
    let mut d = dev("pen");
    let a = pa(0, 0, 0, 0, 0, 0);
    for pb in [0, 128] {
        assert_eq!(
            d.issue(SimTime(0), &Command::PartialErase { block: a, pb }).unwrap_err(),
            NandError::BadPartialBlock { pb, max: 127 }
        );
    }
}

fn soml_dev() -> (Device, Vec<PageAddr>) {
    let mut d = dev("soml-tlc64");
    // Blocks 0..6 of plane 0, page 0 programmed in each.
    let pages: Vec<_> = (0..6).map(|b| pa(0, 0, 0, 0, b, 0)).collect();
    for &p in &pages {
        prog(&mut d, p);
    }
    (d, pages)
}

fn part(page: PageAddr, slot: u32) -> SomlPart {
    SomlPart { page, offset_bytes: slot * 4096, len_bytes: 4096 }
}

#[test]
fn soml_decoder_clash() {
    let (mut d, p) = soml_dev();
    // Blocks 0 and 4 share block decoder 0 (4 decoders).
    let parts = [part(p[0], 0), part(p[4], 1)];
    assert_eq!(
        d.issue(SimTime(0), &Command::SomlRead { parts: &parts }).unwrap_err(),
        NandError::Soml("two partial reads share a block decoder")
    );
    // Blocks 0 and 5 do not.
    d.issue(SimTime(0), &Command::SomlRead { parts: &[part(p[0], 0), part(p[5], 1)] }).unwrap();
}

#[test]
fn soml_bit_line_clash() {
    let (mut d, p) = soml_dev();
    // Slots 0..2 (8 KiB) and slot 1 overlap.
    let wide = SomlPart { page: p[0], offset_bytes: 0, len_bytes: 8192 };
    assert_eq!(
        d.issue(SimTime(0), &Command::SomlRead { parts: &[wide, part(p[1], 1)] }).unwrap_err(),
        NandError::Soml("two partial reads share bit-lines (overlapping slots)")
    );
    // An unaligned 1-byte read in slot 1 still occupies slot 1's bit-lines.
    let byte = SomlPart { page: p[2], offset_bytes: 4097, len_bytes: 1 };
    assert_eq!(
        d.issue(SimTime(0), &Command::SomlRead { parts: &[part(p[1], 1), byte] }).unwrap_err(),
        NandError::Soml("two partial reads share bit-lines (overlapping slots)")
    );
}

#[test]
fn soml_same_block_other_plane_too_many_erased() {
    let (mut d, p) = soml_dev();
    let same_block = SomlPart { page: PageAddr { page: 1, ..p[0] }, offset_bytes: 4096, len_bytes: 4096 };
    prog(&mut d, PageAddr { page: 1, ..p[0] });
    assert_eq!(
        d.issue(SimTime(0), &Command::SomlRead { parts: &[part(p[0], 0), same_block] }).unwrap_err(),
        NandError::Soml("two partial reads from one block")
    );
    let other_plane = pa(0, 0, 0, 1, 1, 0);
    prog(&mut d, other_plane);
    assert_eq!(
        d.issue(SimTime(0), &Command::SomlRead { parts: &[part(p[0], 0), part(other_plane, 1)] })
            .unwrap_err(),
        NandError::Soml("all partial reads must be on one plane")
    );
    let five: Vec<_> = (0..5).map(|i| part(p[i], i as u32 % 4)).collect();
    assert!(matches!(
        d.issue(SimTime(0), &Command::SomlRead { parts: &five }).unwrap_err(),
        NandError::CountMismatch { expected: 4, got: 5, .. }
    ));
    let erased = pa(0, 0, 0, 0, 7, 0);
    assert_eq!(
        d.issue(SimTime(0), &Command::SomlRead { parts: &[part(p[0], 0), part(erased, 1)] }).unwrap_err(),
        NandError::ReadErased(erased)
    );
    assert_eq!(d.stats().soml_reads, 0);
}

#[test]
fn bad_geometry_and_timing_name_the_key() {
    let check = |f: &dyn Fn(&mut lamina_nand_model::NandConfig), key: &str| {
        let mut c = preset("mbm").unwrap();
        f(&mut c);
        let e: NandConfigError = c.validate().unwrap_err();
        assert_eq!(e.key, key, "{e}");
    };
    check(&|c| c.geometry.channels = 0, "geometry.channels");
    check(&|c| c.geometry.pages_per_block = 1023, "geometry.pages_per_block");
    check(&|c| c.geometry.partial_read_bytes = Some(3000), "geometry.partial_read_bytes");
    check(&|c| c.geometry.layers = 1000, "geometry.layers");
    check(&|c| c.geometry.planes_per_die = 65, "geometry.planes_per_die");
    check(&|c| c.timing.bus = Default::default(), "timing.bus");
    check(&|c| c.timing.t_bers = lamina_nand_model::Nanos::ZERO, "timing.t_bers");
    check(
        &|c| {
            c.timing.t_r = lamina_nand_model::PerPageType::PerType(vec![lamina_nand_model::Nanos(1); 3]);
        },
        "timing.t_r",
    );
}

#[test]
fn config_files_reject_unknown_keys() {
    let text = toml::to_string(&preset("lacr").unwrap()).unwrap();
    let bad = text.replace("t_bers", "t_bers_typo");
    let e = toml::from_str::<lamina_nand_model::NandConfig>(&bad).unwrap_err();
    assert!(e.to_string().contains("t_bers_typo"), "{e}");
}

#[test]
fn one_page_entry_points_refuse_what_the_general_path_refuses() {
    // `read_page` and `program_page` return the general path's error, and change nothing.
    let mut d = dev("mbm");
    let g = d.geometry().clone();
    let a = pa(0, 1, 0, 1, 3, 0);
    let erased = g.ppa(a);
    let cmd = Command::Read { pages: &[a], offset_bytes: 0, len_bytes: 512 };
    assert_eq!(d.read_page(SimTime(0), erased, 0, 512), Err(d.clone().issue(SimTime(0), &cmd).unwrap_err()));
    let bad = Command::Read { pages: &[a], offset_bytes: 0, len_bytes: 0 };
    assert_eq!(d.read_page(SimTime(0), erased, 0, 0), Err(d.clone().issue(SimTime(0), &bad).unwrap_err()));
    let skip = pa(0, 1, 0, 1, 3, 2);
    let (pages, tags) = ([skip], [7]);
    let cmd = program(&pages, &tags);
    assert_eq!(
        d.program_page(SimTime(0), g.ppa(skip), 7),
        Err(d.clone().issue(SimTime(0), &cmd).unwrap_err())
    );
    prog(&mut d, a);
    let pages = [a];
    let cmd = program(&pages, &tags);
    assert_eq!(d.program_page(SimTime(0), erased, 7), Err(d.clone().issue(SimTime(0), &cmd).unwrap_err()));
    assert_eq!(d.stats().reads + d.stats().programs, 0);
    assert_eq!(d.page_state(g.ppa(skip)), PageState::Erased);
}

#[test]
fn warming_a_block_changes_nothing_and_ignores_pages_beyond_the_device() {
    // `warm_block` is a speed hint: any page, in range or not, and the device's answers
    // and counters after it are those of an unwarmed copy.
    let mut d = dev("mbm");
    let g = d.geometry().clone();
    let a = pa(0, 1, 0, 1, 3, 0);
    prog(&mut d, a);
    let cold = d.clone();
    for ppa in [g.ppa(a), lamina_nand_model::Ppa(0), lamina_nand_model::Ppa(g.total_pages() - 1)] {
        d.warm_block(ppa);
    }
    assert_eq!(d.warm_block(lamina_nand_model::Ppa(g.total_pages())), 0);
    assert_eq!(d.warm_block(lamina_nand_model::Ppa(u64::MAX)), 0);
    let mut c = cold;
    assert_eq!(d.read_page(SimTime(0), g.ppa(a), 0, 512), c.read_page(SimTime(0), g.ppa(a), 0, 512));
    assert_eq!(d.stats().reads, c.stats().reads);
}
