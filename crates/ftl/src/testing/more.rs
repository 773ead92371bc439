//! Byte-driven construction of the FTL kinds [`super::page_ftl_from_bytes`] and
//! [`super::run_block_ftl_bytes`] leave out — MBM, TBM, GFTL, and NFTL / the superblock
//! FTL with PEN on a real device — for the `more_ftls` cargo-fuzz target and its stable
//! test. A separate decoder, so that the older targets' corpora keep their meaning.

use lamina_nand_model::{Device, DeviceOptions, DeviceSpec, PartialEraseConfig};

use super::{ConformanceFailure, Harness, Op, decode_ops, one_die_preset, slc_geometry};
use crate::config::{FtlConfig, FtlKind, GcThreshold, StripeOrder, TieBreak};
use crate::pen::Partition;
use crate::{Ftl, FtlStats};

/// Bytes a fuzzer spends on choosing the FTL in [`run_more_ftl_bytes`].
pub const MORE_FTL_CONFIG_BYTES: usize = 3;

/// The FTL families [`run_more_ftl_bytes`] chooses among (`first byte % 5`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MoreFtl {
    /// [`FtlKind::Mbm`], with or without its write strategy, any alignment slack.
    Mbm,
    /// [`FtlKind::Tbm`].
    Tbm,
    /// [`FtlKind::Gftl`], any steps per write and copies per step.
    Gftl,
    /// [`FtlKind::Nftl`] with `ftl.pen` on a device with partial-block erase.
    NftlPen,
    /// [`FtlKind::Superblock`] with `ftl.pen` on a device with partial-block erase.
    SuperblockPen,
}

impl MoreFtl {
    /// Every family, in the order the first byte selects them.
    pub const ALL: [MoreFtl; 5] =
        [MoreFtl::Mbm, MoreFtl::Tbm, MoreFtl::Gftl, MoreFtl::NftlPen, MoreFtl::SuperblockPen];

    /// The family the configuration bytes `c` (at least one byte) choose.
    pub fn of(c: &[u8]) -> MoreFtl {
        MoreFtl::ALL[c[0] as usize % MoreFtl::ALL.len()]
    }
}

/// Over-provisioning candidates, least first.
const OPS: [f64; 7] = [0.1, 0.2, 0.3, 0.45, 0.6, 0.75, 0.85];

/// Build the FTL the first [`MORE_FTL_CONFIG_BYTES`] bytes choose ([`MoreFtl::of`]) and run
/// the operations the remaining bytes decode to ([`decode_ops`]) through the conformance
/// harness, every invariant checked after every operation and GC step.
///
/// * MBM / TBM / GFTL: 1–2 channels and dies, 1–2 planes per die, 6–13 blocks of 1–128
///   pages; MBM with `mbm_ws` on or off and `mbm_align_slack_percent` 0, 10, 25, 50 or
///   100; GFTL with 0–3 steps per write of 1, 2, 3 or 8 copies; tie-break, wear
///   levelling, copyback and striping order from the bytes. MBM and TBM must announce
///   every write's page ([`Harness::with_exact_write_addr`]).
/// * NFTL / superblock with PEN: the `pen` preset's chip cut to one die of 1–2 planes of
///   10–17 blocks, 24-page blocks split 1–3 levels deep or 48-page blocks 4 deep; a tree
///   or `subblock3` partition (where the tree has ≥ 2 levels), disturbance tracking on or
///   off, W of 0, 2, 4 or 16; superblocks of 1–4 logical blocks with 1–4 extra blocks;
///   optionally (`third byte & 1`) every logical page written once in order before the
///   decoded operations, so that D-blocks are full and M-Merges can happen.
///   Every program, erase and partial erase is mirrored on a real
///   [`lamina_nand_model::Device`] whose physics must accept it.
///
/// The least over-provisioning the shape accepts is used. Returns the FTL's counters
/// after the last operation (so that tests can check the mechanisms really ran); `None`
/// if `data` is too short or nothing builds.
pub fn run_more_ftl_bytes(data: &[u8]) -> Option<Result<FtlStats, ConformanceFailure>> {
    if data.len() < MORE_FTL_CONFIG_BYTES {
        return None;
    }
    let (c, rest) = data.split_at(MORE_FTL_CONFIG_BYTES);
    let family = MoreFtl::of(c);
    let bits = |byte: u8, shift: u8, mask: u8| u32::from(byte >> shift & mask);
    let tie = [TieBreak::LowestId, TieBreak::Oldest, TieBreak::LeastWorn][(c[2] % 3) as usize];
    let base = FtlConfig {
        gc_threshold: GcThreshold::FreeBlocks(2 + bits(c[1], 7, 1)),
        wear_leveling: c[2] & 4 != 0,
        copyback: c[2] & 8 != 0,
        ..FtlConfig::default()
    };
    match family {
        MoreFtl::Mbm | MoreFtl::Tbm | MoreFtl::Gftl => {
            let geometry = slc_geometry(
                1 + bits(c[0], 3, 1),
                1,
                1 + bits(c[0], 4, 1),
                1 + bits(c[0], 5, 1),
                6 + bits(c[1], 0, 7),
                [1, 2, 4, 8, 16, 128, 3, 5][bits(c[1], 3, 7) as usize],
            );
            let base =
                FtlConfig { striping_order: StripeOrder::all()[bits(c[2], 4, 15) as usize % 24], ..base };
            let base = match family {
                MoreFtl::Mbm => FtlConfig {
                    kind: FtlKind::Mbm,
                    victim_tie_break: tie,
                    mbm_ws: c[1] & 64 == 0,
                    mbm_align_slack_percent: [0, 10, 25, 50, 100]
                        [bits(c[0], 6, 3) as usize + (c[2] & 1) as usize],
                    ..base
                },
                MoreFtl::Tbm => FtlConfig { kind: FtlKind::Tbm, victim_tie_break: tie, ..base },
                _ => FtlConfig {
                    kind: FtlKind::Gftl,
                    gftl_steps_per_write: bits(c[0], 6, 3),
                    gftl_step_copies: [1, 2, 3, 8][bits(c[1], 6, 1) as usize * 2 + (c[2] & 1) as usize],
                    ..base
                },
            };
            let cfg = OPS
                .iter()
                .map(|&op| FtlConfig { overprovisioning: op, ..base.clone() })
                .find(|cfg| cfg.validate(&geometry).is_ok())?;
            Some(match family {
                MoreFtl::Mbm => {
                    run_on(Harness::new(crate::mbm::build(geometry, &cfg).ok()?), true, None, false, rest)
                }
                MoreFtl::Tbm => {
                    run_on(Harness::new(crate::TbmFtl::new(geometry, &cfg).ok()?), true, None, false, rest)
                }
                _ => {
                    run_on(Harness::new(crate::GftlFtl::new(geometry, &cfg).ok()?), false, None, false, rest)
                }
            })
        }
        MoreFtl::NftlPen | MoreFtl::SuperblockPen => {
            let (pages, levels) = [(24, 1), (24, 2), (24, 3), (48, 4)][bits(c[0], 3, 3) as usize];
            let mut nand = one_die_preset("pen", 1 + bits(c[0], 5, 1), 10 + bits(c[1], 0, 7), pages);
            nand.partial_erase = Some(PartialEraseConfig { levels });
            let spec = nand.validate().ok()?;
            let partition = if c[1] & 8 != 0 && levels >= 2 { Partition::Subblock3 } else { Partition::Tree };
            let base = FtlConfig {
                pen: true,
                pen_disturb: c[1] & 16 == 0,
                pen_wear_limit: [16, 4, 2, 0][bits(c[1], 5, 3) as usize],
                pen_partition: partition,
                ..base
            };
            let base = match family {
                MoreFtl::NftlPen => FtlConfig { kind: FtlKind::Nftl, ..base },
                _ => FtlConfig {
                    kind: FtlKind::Superblock,
                    victim_tie_break: tie,
                    superblock_size: 1 + bits(c[2], 4, 3),
                    superblock_extra_blocks: 1 + bits(c[2], 6, 3),
                    ..base
                },
            };
            // Writing the whole logical space first puts every D-block in in-place layout
            // (full), which M-Merge needs: sparse operations alone only ever merge the
            // baseline way.
            let fill = c[2] & 1 != 0;
            let configs = OPS.iter().map(|&op| FtlConfig { overprovisioning: op, ..base.clone() });
            Some(match family {
                MoreFtl::NftlPen => {
                    let ftl = configs.clone().find_map(|cfg| crate::NftlFtl::for_device(&spec, &cfg).ok())?;
                    run_on(Harness::new(ftl), false, Some(&spec), fill, rest)
                }
                _ => {
                    let ftl =
                        configs.clone().find_map(|cfg| crate::SuperblockFtl::for_device(&spec, &cfg).ok())?;
                    run_on(Harness::new(ftl), false, Some(&spec), fill, rest)
                }
            })
        }
    }
}

/// Run the operations `data` decodes to on `harness` (mirrored on a fresh device of
/// `spec` when given), after writing every logical page once in order if `fill`; the
/// FTL's counters at the end.
pub(super) fn run_on<F: Ftl>(
    harness: Harness<F>,
    exact_write_addr: bool,
    spec: Option<&DeviceSpec>,
    fill: bool,
    data: &[u8],
) -> Result<FtlStats, ConformanceFailure> {
    let mut h = harness.with_exact_write_addr(exact_write_addr);
    if let Some(spec) = spec {
        h = h.with_device(Device::new(spec.clone(), DeviceOptions { store_tags: true }));
    }
    let fill_ops = if fill { h.ftl().logical_pages() } else { 0 };
    let ops: Vec<Op> = (0..fill_ops).map(Op::Write).chain(decode_ops(data)).collect();
    h.apply_all(&ops).map_err(|(i, v)| ConformanceFailure { ops: ops[..=i].to_vec(), message: v.0 })?;
    Ok(h.ftl().stats())
}
