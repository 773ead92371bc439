//! Measures what the first touch of fresh anonymous memory costs per page on this
//! machine, by how the page is first touched: a store, or a load and then a store (what
//! `x += 1` on a zeroed table does), in 4 KiB pages and in transparent huge pages, with
//! the process's other core idle or running a second thread of the process (as the
//! simulator's helper threads do). A page first touched by a load maps the kernel's
//! shared zero page; the store then copies it and must flush the TLB of every core
//! running the process, an inter-processor interrupt (on a VM, a hypervisor exit). The
//! simulator's zeroed tables are written so that their pages' first touch is a store
//! (docs/performance.md, "Round of 2026-12-01 (sixteenth session)"). Not a test:
//! wall-clock numbers do not belong in assertions.
//!
//! ```text
//! cargo run -p lamina-ftl --release --example first_touch          # 64 MiB per row
//! cargo run -p lamina-ftl --release --example first_touch -- 256   # 256 MiB per row
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Bytes of a small page.
const PAGE: usize = 4096;

/// Microseconds per 4 KiB page to first-touch `mib` MiB of fresh mapping: a store per
/// page, after a load per page if `load_first`.
// The wall clock is banned in simulation code (clippy.toml); measuring it is this
// example's whole purpose.
#[allow(clippy::disallowed_methods)]
fn touch(mib: usize, huge: bool, load_first: bool) -> std::io::Result<f64> {
    let bytes = mib << 20;
    let mut m = memmap2::MmapMut::map_anon(bytes)?;
    #[cfg(target_os = "linux")]
    {
        let advice = if huge { memmap2::Advice::HugePage } else { memmap2::Advice::NoHugePage };
        let _ = m.advise(advice);
    }
    let start = std::time::Instant::now();
    if load_first {
        let mut sum = 0u8;
        for page in m.chunks(PAGE) {
            sum = sum.wrapping_add(std::hint::black_box(page[0]));
        }
        std::hint::black_box(sum);
    }
    for page in m.chunks_mut(PAGE) {
        page[0] = std::hint::black_box(1);
    }
    Ok(start.elapsed().as_secs_f64() * 1e6 / (bytes / PAGE) as f64)
}

fn main() -> std::io::Result<()> {
    let mib: usize = std::env::args().nth(1).map_or(64, |a| a.parse().expect("MiB to touch per row"));
    println!("first touch of {mib} MiB, µs per 4 KiB page");
    println!("{:<14} {:<12} {:>12} {:>16}", "other core", "pages", "store first", "load, then store");
    for busy in [false, true] {
        // A second thread of the process spinning on the other core, or none.
        let stop = Arc::new(AtomicBool::new(false));
        let spinner = busy.then(|| {
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            })
        });
        for huge in [false, true] {
            let store = touch(mib, huge, false)?;
            let load = touch(mib, huge, true)?;
            let (who, size) =
                (if busy { "process thread" } else { "idle" }, if huge { "2 MiB" } else { "4 KiB" });
            println!("{who:<14} {size:<12} {store:>12.2} {load:>16.2}");
        }
        stop.store(true, Ordering::Relaxed);
        if let Some(s) = spinner {
            s.join().expect("spinner thread");
        }
    }
    Ok(())
}
