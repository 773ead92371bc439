//! Times preconditioning of a 256 GiB raw device (issue #3's target: a few seconds in
//! release). Not a test: wall-clock numbers do not belong in assertions.
//!
//! ```text
//! cargo run -p lamina-ftl --release --example precondition_256g            # 8 KiB pages
//! cargo run -p lamina-ftl --release --example precondition_256g -- 16k     # 16 KiB pages
//! cargo run -p lamina-ftl --release --example precondition_256g -- 8k 0.5  # fill half
//! ```
//!
//! Geometry: 4 channels × 4 chips × 2 dies × 2 planes, 256 pages per block, and 2048
//! blocks per plane of 8 KiB pages (33.5 M pages) or 1024 blocks of 16 KiB pages (16.8 M
//! pages). FTL: default config (7 % over-provisioning, GC below 2 % free blocks, CWDP).
//! Preconditioning: default config (sequential fill of the whole logical space, random
//! overwrites to steady state, at most 2 passes).

use lamina_ftl::{FlashEffect, FtlConfig, PageFtl, PreconditionConfig, precondition};
use lamina_nand_model::{CellType, GeometryConfig, PageTypeOrder};

fn peak_rss_mib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024)
}

// The wall clock is banned in simulation code (clippy.toml); measuring it is this
// example's whole purpose.
#[allow(clippy::disallowed_methods)]
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let big_pages = args.first().is_some_and(|a| a == "16k");
    let fill: f64 = args.get(1).map(|s| s.parse()).transpose()?.unwrap_or(1.0);
    let (page_size_bytes, blocks_per_plane) = if big_pages { (16384, 1024) } else { (8192, 2048) };
    let geometry = GeometryConfig {
        channels: 4,
        chips_per_channel: 4,
        dies_per_chip: 2,
        planes_per_die: 2,
        blocks_per_plane,
        pages_per_block: 256,
        page_size_bytes,
        partial_read_bytes: None,
        cell_type: CellType::Mlc,
        layers: 64,
        page_type_order: PageTypeOrder::Interleaved,
    }
    .validate()?;
    println!(
        "device: {} GiB raw, {} pages of {} KiB",
        geometry.capacity_bytes() >> 30,
        geometry.total_pages(),
        page_size_bytes / 1024
    );
    let t0 = std::time::Instant::now();
    let mut ftl = PageFtl::new(geometry, &FtlConfig::default())?;
    let cfg = PreconditionConfig { fill_fraction: fill, ..PreconditionConfig::default() };
    let (mut programs, mut erases) = (0u64, 0u64);
    let report = precondition(&mut ftl, &cfg, 42, &mut |e| match e {
        FlashEffect::Program { .. } => programs += 1,
        _ => erases += 1,
    })?;
    let elapsed = t0.elapsed();
    println!("{report:#?}");
    println!("effects: {programs} programs, {erases} erases");
    println!("final WAF: {:.3}", report.stats.waf_ppm() as f64 / 1e6);
    println!("erase counts (min, max): {:?}", ftl.erase_count_range());
    println!("preconditioning took {:.2} s", elapsed.as_secs_f64());
    if let Some(mib) = peak_rss_mib() {
        println!("peak RSS: {mib} MiB");
    }
    Ok(())
}
