//! Measures what one random memory access costs on this machine: a chain of dependent
//! loads (each load's value is the next address) through a table of a given size, one
//! link per 64-byte line in a random cyclic order, in 4 KiB pages and in transparent huge
//! pages. The simulator's hot tables are read in exactly this pattern: the forward map,
//! the FTL's block records and the device's per-block records, each at a random index.
//! So this shows which table sizes stay cheap on a host (docs/performance.md, "Round of
//! 2026-11-28"). Not a test: wall-clock numbers do not belong in assertions.
//!
//! ```text
//! cargo run -p lamina-ftl --release --example mem_latency            # 32 KiB .. 128 MiB
//! cargo run -p lamina-ftl --release --example mem_latency -- 3 12    # 3 MiB and 12 MiB only
//! ```

use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Bytes per link: one cache line.
const LINE: usize = 64;
/// Dependent loads timed per table.
const STEPS: u32 = 20_000_000;

/// An anonymous mapping of `bytes` zeroed bytes, with or without huge-page advice.
fn table(bytes: usize, huge: bool) -> std::io::Result<memmap2::MmapMut> {
    let m = memmap2::MmapMut::map_anon(bytes)?;
    #[cfg(target_os = "linux")]
    {
        // Advice only: without transparent huge pages both rows measure 4 KiB pages.
        let advice = if huge { memmap2::Advice::HugePage } else { memmap2::Advice::NoHugePage };
        let _ = m.advise(advice);
    }
    Ok(m)
}

/// Nanoseconds per dependent load through a random cycle over `bytes` of table.
// The wall clock is banned in simulation code (clippy.toml); measuring it is this
// example's whole purpose.
#[allow(clippy::disallowed_methods)]
fn chase(bytes: usize, huge: bool, rng: &mut Xoshiro256PlusPlus) -> std::io::Result<f64> {
    let n = bytes / LINE;
    let mut m = table(n * LINE, huge)?;
    // Sattolo's algorithm: a uniformly random permutation that is one single cycle.
    let mut order: Vec<u32> = (0..n as u32).collect();
    for i in (1..n).rev() {
        let j = (rng.next_u64() % i as u64) as usize;
        order.swap(i, j);
    }
    for i in 0..n {
        let from = order[i] as usize * LINE;
        let to = order[(i + 1) % n];
        m[from..from + 4].copy_from_slice(&to.to_ne_bytes());
    }
    let mut at = order[0] as usize;
    let start = std::time::Instant::now();
    for _ in 0..STEPS {
        let o = at * LINE;
        at = u32::from_ne_bytes([m[o], m[o + 1], m[o + 2], m[o + 3]]) as usize;
    }
    let ns = start.elapsed().as_nanos() as f64 / STEPS as f64;
    std::hint::black_box(at);
    Ok(ns)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let sizes: Vec<usize> = {
        let args: Vec<String> = std::env::args().skip(1).collect();
        if args.is_empty() {
            vec![32 << 10, 256 << 10, 1 << 20, 2 << 20, 4 << 20, 8 << 20, 32 << 20, 128 << 20]
        } else {
            args.iter()
                .map(|a| match a.parse::<f64>() {
                    Ok(mib) if mib > 0.0 => (mib * (1 << 20) as f64) as usize,
                    _ => {
                        eprintln!("mem_latency: `{a}` is not a size in MiB (e.g. 3 or 0.5)");
                        std::process::exit(2);
                    }
                })
                .collect()
        }
    };
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
    println!("| table | 4 KiB pages | huge pages (advised) |");
    println!("|---|---|---|");
    for &bytes in &sizes {
        let bytes = bytes.max(2 * LINE);
        let mapping = |e: std::io::Error| format!("mem_latency: cannot map {bytes} bytes of memory: {e}");
        let small = chase(bytes, false, &mut rng).map_err(mapping)?;
        let huge = chase(bytes, true, &mut rng).map_err(mapping)?;
        println!("| {:.2} MiB | {small:.1} ns | {huge:.1} ns |", bytes as f64 / (1 << 20) as f64);
    }
    Ok(())
}
