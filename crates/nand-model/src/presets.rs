//! Named device presets, each citing the table it comes from. Parameters a source does
//! not give are filled from SSDsim 2.x's default `page.parameters` (the simulator all
//! five papers evaluate with) or MQSim's defaults, and every such choice is listed in
//! `docs/model.md` ("Presets and assumptions").

use crate::config::{
    BusConfig, LayerCurve, LayerSpeedConfig, NandConfig, PartialEraseConfig, PerPageType, SlowEnd,
    SomlConfig, SuspensionConfig, TimingConfig,
};
use crate::geometry::{CellType, GeometryConfig, PageTypeOrder};
use crate::time::Nanos;

/// A preset's name, citation and summary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PresetInfo {
    /// Name accepted by [`preset`].
    pub name: &'static str,
    /// Where the numbers come from.
    pub source: &'static str,
    /// One-line description.
    pub description: &'static str,
}

const PRESETS: &[PresetInfo] = &[
    PresetInfo {
        name: "mbm",
        source: "mbm-ftl Table I (flash parameters); blocks/plane from SSDsim defaults; suspend times from MQSim defaults",
        description: "4 ch × 2 chips × 2 dies × 2 planes, 1024 × 8 KiB pages/block, tR 78 us, tPROG 1.3 ms, tBERS 15 ms, 10 ns/B, P/E suspension",
    },
    PresetInfo {
        name: "lacr",
        source: "layer-aware-chip-redirection Table 1 and §V-A (16 layers, speed variation 2); dies/planes from SSDsim defaults",
        description: "16 GB, 2 ch × 2 chips, 64 × 16 KiB pages/block, tR 49 us, tPROG 600 us, tBERS 4 ms, 333 MT/s × 8 bit, layer speed ratio 2",
    },
    PresetInfo {
        name: "soml-tlc64",
        source: "soml-read Table 1 (64-layer TLC chip, SOML parameters, 5 ns/B) and §2.2 (4 channels), SOML factor §6.1",
        description: "8 chips on 4 ch, (1 die, 2 planes, 1437 blocks, 768 pages), 16 KiB TLC, tR 90/120/180 us, 4 KiB partial reads, SOML ≤ 4",
    },
    PresetInfo {
        name: "soml-base8",
        source: "soml-read Table 1 (the baseline 64-layer chip, no SOML) and §6.2 Fig. 9 (the 8-chip baseline)",
        description: "soml-tlc64 without SOML: 8 chips on 4 ch, 16 KiB TLC, tR 90/120/180 us on every read",
    },
    PresetInfo {
        name: "soml-base16",
        source: "soml-read Table 1 (32 GB chip: 1 die, 2 planes, 1888 blocks, 576 pages) and §6.2 Fig. 9 (the 16-chip baseline)",
        description: "16 × 32 GB chips on 4 ch, (1, 2, 1888, 576), 16 KiB TLC, tR 90/120/180 us, no SOML",
    },
    PresetInfo {
        name: "soml-32gb8",
        source: "soml-read §6.2 Fig. 10c (iso-die-count: 8 low-density 32 GB chips); chip from Table 1",
        description: "8 × 32 GB chips on 4 ch, (1, 2, 1888, 576), 16 KiB TLC, tR 90/120/180 us, no SOML",
    },
    PresetInfo {
        name: "soml-32gb8-soml",
        source: "soml-read §6.2 Fig. 10c (SOML on 8 low-density 32 GB chips); SOML parameters and SOML-chip latencies of Table 1",
        description: "soml-32gb8 with SOML: 4 KiB partial reads, SOML ≤ 4 parts, 4 decoders, tR 92.7/123.7/185.5 us on every read",
    },
    PresetInfo {
        name: "die-binding-4x2",
        source: "state-based-die-binding §4 (4 channels × 2 ways, multi-plane and interleave off); all else SSDsim 2.x defaults",
        description: "4 ch × 2 single-die chips, 2 planes, 2048 blocks × 64 × 2 KiB pages, tR 20 us, tPROG 200 us, tBERS 1.5 ms, 25 ns/B",
    },
    PresetInfo {
        name: "die-binding-4x4",
        source: "state-based-die-binding §4 (4 channels × 4 ways, multi-plane and interleave off); all else SSDsim 2.x defaults",
        description: "4 ch × 4 single-die chips, 2 planes, 2048 blocks × 64 × 2 KiB pages, tR 20 us, tPROG 200 us, tBERS 1.5 ms, 25 ns/B",
    },
    PresetInfo {
        name: "pen",
        source: "pen-partial-erase §3 config (d) and §4 (576 pages, L = 6); chip and latencies from soml-read Table 1 (32 GB chip, same authors)",
        description: "8 chips on 4 ch, (1 die, 2 planes, 1888 blocks, 576 pages), 16 KiB TLC, partial erase down to 9-page PBs",
    },
    PresetInfo {
        name: "mqsim-default",
        source: "MQSim ssdconfig.xml (CMU-SAFARI/MQSim, default device) and ONFI_Channel_NVDDR2 default timings",
        description: "8 ch × 4 chips × 2 dies × 2 planes × 2048 blocks × 256 × 8 KiB MLC (512 GiB), tR 75 us, tPROG 750 us, tBERS 3.8 ms, 333 MT/s",
    },
];

/// All presets, in a stable order.
pub fn presets() -> &'static [PresetInfo] {
    PRESETS
}

#[allow(clippy::too_many_arguments)]
fn geometry(
    channels: u32,
    chips_per_channel: u32,
    dies_per_chip: u32,
    planes_per_die: u32,
    blocks_per_plane: u32,
    pages_per_block: u32,
    page_size_bytes: u32,
    cell_type: CellType,
    layers: u32,
) -> GeometryConfig {
    GeometryConfig {
        channels,
        chips_per_channel,
        dies_per_chip,
        planes_per_die,
        blocks_per_plane,
        pages_per_block,
        page_size_bytes,
        partial_read_bytes: None,
        cell_type,
        layers,
        page_type_order: PageTypeOrder::Interleaved,
    }
}

fn timing(
    t_cmd: Nanos,
    bus: BusConfig,
    t_r: PerPageType,
    t_prog: PerPageType,
    t_bers: Nanos,
) -> TimingConfig {
    TimingConfig {
        t_cmd,
        t_cmd_program: None,
        t_cmd_erase: None,
        bus,
        t_r,
        t_prog,
        t_bers,
        t_pbers: None,
        t_dbsy: Nanos::ZERO,
        t_suspend_program: Nanos::ZERO,
        t_suspend_erase: Nanos::ZERO,
        t_resume: Nanos::ZERO,
        layer_speed: None,
        re_reads: 0,
    }
}

fn per_byte(ns: u64) -> BusConfig {
    BusConfig { ns_per_byte: Some(Nanos(ns)), width_bits: None, rate_mts: None }
}

fn onfi(width_bits: u32, rate_mts: u32) -> BusConfig {
    BusConfig { ns_per_byte: None, width_bits: Some(width_bits), rate_mts: Some(rate_mts) }
}

fn us(v: u64) -> Nanos {
    Nanos::from_us(v)
}

/// SSDsim 2.x `page.parameters` defaults: t_WC = t_RC = 25 ns, t_DBSY = 50 ns, and a
/// command + 5 address cycles = 7 × t_WC (the same "7 × cycle" that mbm-ftl Table I
/// lists as 7 × 10 ns).
const SSDSIM_T_WC: u64 = 25;
const SSDSIM_T_DBSY: Nanos = Nanos(50);
const SSDSIM_BLOCKS_PER_PLANE: u32 = 2048;

/// The soml-read Table 1 TLC chip latencies (also used for `pen`).
fn soml_tlc_timing() -> TimingConfig {
    let mut t = timing(
        // 7 command/address cycles at the 5 ns/B transfer cycle of Table 1.
        Nanos(7 * 5),
        // Table 1: "Transfer time per byte 5ns".
        per_byte(5),
        // Table 1: TLC read latency (LSB, CSB, MSB) = (90 µs, 120 µs, 180 µs).
        PerPageType::PerType(vec![us(90), us(120), us(180)]),
        // Table 1: (Program, Erase) = (900 µs, 10 ms).
        PerPageType::One(us(900)),
        Nanos::from_ms(10),
    );
    t.t_dbsy = SSDSIM_T_DBSY;
    t
}

fn die_binding(ways: u32) -> NandConfig {
    // "four channels and two (four) dies share a single channel"; interleaving off, so
    // each way is modelled as a chip with one die. SSDsim defaults otherwise: 2 planes,
    // 2048 blocks, 64 pages of 2 KiB, t_R 20 µs, t_PROG 200 µs, t_BERS 1.5 ms, 25 ns/B.
    let mut t = timing(
        Nanos(7 * SSDSIM_T_WC),
        per_byte(SSDSIM_T_WC),
        PerPageType::One(us(20)),
        PerPageType::One(us(200)),
        Nanos(1_500_000),
    );
    t.t_dbsy = SSDSIM_T_DBSY;
    NandConfig {
        geometry: geometry(4, ways, 1, 2, SSDSIM_BLOCKS_PER_PLANE, 64, 2048, CellType::Slc, 1),
        timing: t,
        suspension: None,
        soml: None,
        partial_erase: None,
    }
}

/// The preset called `name`, or `None`.
pub fn preset(name: &str) -> Option<NandConfig> {
    let cfg = match name {
        // mbm-ftl Table I: 8 KB page, 1024 pages/block, 4 channels, 2 chips/channel,
        // 2 dies/chip, 2 planes/die, 10 ns per byte ("10ns/8bit"), erase 15 ms,
        // program 1,300,000 ns, read 78,000 ns, command & address 7 × 10 ns.
        // Not given: blocks/plane (SSDsim default 2048), cell type (MLC: 1024 pages per
        // block form 512 two-page word-lines; one latency for both page types), layers
        // (1: no layer variation is modelled), tDBSY (0, so a 2-plane program is exactly
        // one tPROG plus two transfers), suspend overheads (MQSim defaults: 100 µs for a
        // program, 700 µs for an erase; §IV-C enables both suspensions).
        "mbm" => {
            let mut t = timing(
                Nanos(7 * 10),
                per_byte(10),
                PerPageType::One(Nanos(78_000)),
                PerPageType::One(Nanos(1_300_000)),
                Nanos::from_ms(15),
            );
            t.t_suspend_program = us(100);
            t.t_suspend_erase = us(700);
            NandConfig {
                geometry: geometry(4, 2, 2, 2, SSDSIM_BLOCKS_PER_PLANE, 1024, 8192, CellType::Mlc, 1),
                timing: t,
                suspension: Some(SuspensionConfig {
                    program: true,
                    erase: true,
                    max_per_op: 1,
                    max_window: None,
                }),
                soml: None,
                partial_erase: None,
            }
        }
        // layer-aware-chip-redirection Table 1: 16 GB, 64 pages/block, 16 KB page,
        // 2×2 chips, 1-byte channel, 333 MT/s (ONFI 3.1), erase 4 ms, program 600 µs,
        // read 49 µs. §V-A: 16 layers, speed variation 2 (bottom vs top), progressing
        // at the same rate through the middle layers. Not given: dies/planes (SSDsim
        // defaults 2/2), hence 16 GiB / (16 planes × 1 MiB blocks) = 1024 blocks/plane;
        // cell type (MLC: 64 pages = 32 word-lines, 2 per layer); command cycles (SSDsim
        // 7 × t_WC = 175 ns); tDBSY (SSDsim 50 ns).
        "lacr" => {
            let mut t = timing(
                Nanos(7 * SSDSIM_T_WC),
                onfi(8, 333),
                PerPageType::One(us(49)),
                PerPageType::One(us(600)),
                Nanos::from_ms(4),
            );
            t.t_dbsy = SSDSIM_T_DBSY;
            t.layer_speed =
                Some(LayerSpeedConfig { ratio: 2.0, curve: LayerCurve::Linear, slow_end: SlowEnd::Top });
            NandConfig {
                geometry: geometry(2, 2, 2, 2, 1024, 64, 16384, CellType::Mlc, 16),
                timing: t,
                suspension: None,
                soml: None,
                partial_erase: None,
            }
        }
        // soml-read Table 1 baseline 64-layer chip: (die, plane, block, page) =
        // (1, 2, 1437, 768), 16 KB TLC pages, smallest partial read 4 KB, 8 chips, 5 ns
        // per byte, max SOML read = 4 partial reads; §2.2: 4 channels. Table 1's
        // SOML-enabled chip reads (92.7, 123.7, 185.5) µs on every read (≈ 1.03 × the
        // baseline chip; §6.1's Eq. 1 estimate for 4 slots is 67/63 ≈ 1.063, the default
        // of `soml.factor` when `soml.t_r` is not given); see docs/model.md.
        "soml-tlc64" => {
            let mut g = geometry(4, 2, 1, 2, 1437, 768, 16384, CellType::Tlc, 64);
            g.partial_read_bytes = Some(4096);
            NandConfig {
                geometry: g,
                timing: soml_tlc_timing(),
                suspension: None,
                // Table 1's SOML-enabled chip: every read, plain or SOML, takes these.
                soml: Some(SomlConfig {
                    max_parts: 4,
                    decoders: Some(4),
                    factor: None,
                    t_r: Some(PerPageType::PerType(vec![Nanos(92_700), Nanos(123_700), Nanos(185_500)])),
                }),
                partial_erase: None,
            }
        }
        // The soml-read baselines (§6.2). Table 1's baseline chip reads in 90/120/180 µs;
        // the paper uses "the same read/write latency" for chips of every density (§2.2),
        // so the 32 GB chips differ only in geometry (Table 1's, taken literally: a
        // "32 GB" chip then holds about what a baseline chip does; docs/model.md). SOML can be added back to any of
        // them with `[nand.soml]` (docs/model.md, *SOML reads*).
        "soml-base8" => NandConfig { soml: None, ..preset("soml-tlc64")? },
        "soml-base16" | "soml-32gb8" => {
            let chips = if name == "soml-base16" { 4 } else { 2 };
            let mut g = geometry(4, chips, 1, 2, 1888, 576, 16384, CellType::Tlc, 64);
            g.partial_read_bytes = Some(4096);
            NandConfig {
                geometry: g,
                timing: soml_tlc_timing(),
                suspension: None,
                soml: None,
                partial_erase: None,
            }
        }
        // Fig. 10c's SOML bars on the low-density chips: Table 1 gives SOML parameters
        // and latencies for one SOML-enabled chip only; we apply them to the 32 GB chip.
        "soml-32gb8-soml" => NandConfig { soml: preset("soml-tlc64")?.soml, ..preset("soml-32gb8")? },
        "die-binding-4x2" => die_binding(2),
        "die-binding-4x4" => die_binding(4),
        // pen-partial-erase §3: configuration (d) = 1888 blocks/plane × 576 pages/block;
        // §4: L = 6, PB sizes 576 … 9 pages. Its Table 1 latencies are missing from our
        // copy; the chip is soml-read Table 1's 32 GB chip (1 die, 2 planes, 1888 blocks,
        // 576 pages; same authors, same SSDsim setup), so latencies and the 8-chip,
        // 4-channel SSD come from soml-read Table 1. Partial erase is "only slightly
        // better than block erase" (§6): assumed 9.5 ms vs 10 ms.
        "pen" => {
            let mut t = soml_tlc_timing();
            t.t_pbers = Some(Nanos(9_500_000));
            NandConfig {
                geometry: geometry(4, 2, 1, 2, 1888, 576, 16384, CellType::Tlc, 1),
                timing: t,
                suspension: None,
                soml: None,
                partial_erase: Some(PartialEraseConfig { levels: 6 }),
            }
        }
        // MQSim ssdconfig.xml (default device): 8 channels, 1-byte channel at 333 MT/s
        // (NVDDR2), 4 chips/channel, MLC, 2 dies/chip, 2 planes/die, 2048 blocks/plane,
        // 256 pages/block, 8192-byte pages, read 75 µs, program 750 µs, erase 3.8 ms,
        // CMD_Suspension_Support = ERASE, Suspend_Erase_Time 700 µs, Suspend_Program_Time
        // 100 µs. Command times from ONFI_Channel_NVDDR2 defaults (t_CS 20, t_WC 25,
        // t_WB 100, t_RR 20, t_ADL 70, t_WPST 6, t_WPSTH 15, t_DBSY 500 ns): read
        // t_CS + 6 t_WC + t_WB + t_RR = 290 ns, program t_CS + 6 t_WC + t_ADL + t_WPST +
        // t_WPSTH + t_WB = 361 ns, erase t_CS + 4 t_WC + t_WB = 220 ns; a suspend costs
        // the suspend command t_CS + 3 t_WC = 95 ns plus the suspend time. Not charged:
        // the 20 ns ready/busy delay MQSim's Flash_Chip adds to every read's tR (with
        // its byte time truncated to 3 ns, MQSim's unloaded 4 KiB read is 7 ns longer
        // than this preset's; docs/model.md, "MQSim on the same trace").
        "mqsim-default" => {
            let mut t = timing(
                Nanos(290),
                onfi(8, 333),
                PerPageType::One(us(75)),
                PerPageType::One(us(750)),
                Nanos(3_800_000),
            );
            t.t_cmd_program = Some(Nanos(361));
            t.t_cmd_erase = Some(Nanos(220));
            t.t_dbsy = Nanos(500);
            t.t_suspend_program = Nanos(100_000 + 95);
            t.t_suspend_erase = Nanos(700_000 + 95);
            NandConfig {
                geometry: geometry(8, 4, 2, 2, 2048, 256, 8192, CellType::Mlc, 1),
                timing: t,
                suspension: Some(SuspensionConfig {
                    program: false,
                    erase: true,
                    max_per_op: 1,
                    max_window: None,
                }),
                soml: None,
                partial_erase: None,
            }
        }
        _ => return None,
    };
    Some(cfg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_validates_and_is_listed() {
        for info in presets() {
            let cfg = preset(info.name).unwrap_or_else(|| panic!("preset {} missing", info.name));
            cfg.validate().unwrap_or_else(|e| panic!("preset {}: {e}", info.name));
            // Presets survive a TOML round trip (so `lamina` can print and reload them).
            let text = toml::to_string(&cfg).unwrap();
            let back: NandConfig = toml::from_str(&text).unwrap();
            assert_eq!(back, cfg, "{}", info.name);
        }
        assert!(preset("nope").is_none());
    }

    #[test]
    fn preset_capacities() {
        let cap = |n: &str| preset(n).unwrap().validate().unwrap().geometry().capacity_bytes();
        // MQSim default: 67,108,864 pages of 8 KiB = 512 GiB.
        let mq = preset("mqsim-default").unwrap().validate().unwrap();
        assert_eq!(mq.geometry().total_pages(), 67_108_864);
        assert_eq!(cap("mqsim-default"), 512 << 30);
        // lacr: 16 GiB.
        assert_eq!(cap("lacr"), 16 << 30);
        // die-binding: 4 × 2 chips × 2 planes × 2048 × 64 × 2 KiB = 4 GiB.
        assert_eq!(cap("die-binding-4x2"), 4 << 30);
        assert_eq!(cap("die-binding-4x4"), 8 << 30);
        // Table 1's geometries taken literally: its "32 GB" chip (1888 × 2 × 576 × 16 KiB
        // = 35.6 GB) holds about what its baseline chip does (1437 × 2 × 768 × 16 KiB =
        // 36.2 GB), so 16 of them hold twice what 8 baseline chips do, not the same as
        // §6.2 says (docs/model.md). soml-base8 is soml-tlc64's geometry without SOML.
        assert_eq!(cap("soml-base16"), 16 * 1888 * 2 * 576 * 16384);
        assert_eq!(cap("soml-32gb8") * 2, cap("soml-base16"));
        assert_eq!(cap("soml-base8"), cap("soml-tlc64"));
        assert!(preset("soml-base8").unwrap().validate().unwrap().soml().is_none());
        assert_eq!(cap("soml-32gb8-soml"), cap("soml-32gb8"));
        assert!(preset("soml-32gb8-soml").unwrap().validate().unwrap().soml().is_some());
        // pen: smallest PB = 576 / 2^6 = 9 pages.
        let pen = preset("pen").unwrap().validate().unwrap();
        assert_eq!(pen.partial_erase_levels(), Some(6));
    }
}
