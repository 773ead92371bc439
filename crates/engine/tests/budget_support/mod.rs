//! What the memory-budget tests share (`budget.rs`, `budget_cached.rs`): building a
//! config, reading the process's resident memory, and the full-footprint check. The two
//! resident-memory checks live in separate test binaries (processes): memory one of them
//! frees stays resident in the allocator and would be reused by the other, which then
//! measured too little growth depending on which ran first.
#![allow(dead_code)]

use lamina_engine::SimulationBuilder;
use lamina_engine::budget::{MemoryLimit, estimate};
use lamina_engine::config::{ConfigBuilder, SimConfig};

/// The tests here read the process's resident memory, which tests running in parallel
/// in the same process would disturb: each takes this lock first.
pub static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

pub fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

pub fn cfg(preset: &str, sets: &[&str]) -> SimConfig {
    let mut b = ConfigBuilder::new().preset(preset).unwrap();
    for s in sets {
        b = b.set(s).unwrap();
    }
    b.build().unwrap()
}

/// A `/proc/self/status` figure in bytes (`VmHWM` peak or `VmRSS` current resident
/// memory), where the system reports it.
pub fn status_bytes(field: &str) -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = text.lines().find(|l| l.starts_with(field))?;
    Some(line.split_whitespace().nth(1)?.parse::<u64>().ok()? * 1024)
}

pub const GIB: u64 = 1 << 30;

/// Build `die-binding-4x2` with `sets`, prefill and write every logical page, and check
/// the growth of resident memory against the full-footprint estimate.
pub fn footprint_matches(sets: &[&str]) {
    use lamina_engine::trace::{IoOp, IoRequest};
    let c = cfg("die-binding-4x2", sets);
    let g = c.nand.geometry.validate().unwrap();
    let lp = c.ftl.validate(&g).unwrap().logical_pages();
    let want = estimate(&c, &g, lp, true).full_bytes();
    let Some(before) = status_bytes("VmRSS:") else { return };
    let mut sim = SimulationBuilder::new(c).memory_limit(MemoryLimit::Bytes(GIB)).build().unwrap();
    const PAGES: u64 = 64;
    let writes = move || {
        (0..lp.div_ceil(PAGES)).map(move |i| {
            let first = i * PAGES;
            Ok(IoRequest {
                arrival: lamina_engine::trace::TraceTime(i * 20_000_000),
                device: 0,
                offset_bytes: first * 2048,
                size_bytes: (PAGES.min(lp - first)) * 2048,
                op: IoOp::Write,
            })
        })
    };
    sim.prefill(writes()).unwrap();
    sim.run(writes()).unwrap();
    let grown = status_bytes("VmRSS:").unwrap().saturating_sub(before);
    // Within 15 % (the trace touches ~93 % of the blocks: over-provisioned ones stay
    // free) plus 8 MiB for allocator and event-queue noise. Arrivals are spaced so that
    // requests never queue: per-request state is not part of the estimate.
    assert!(grown <= want + (8 << 20), "{sets:?}: resident memory grew {grown} B, estimate {want} B");
    assert!(
        grown + (8 << 20) >= want * 85 / 100,
        "{sets:?}: resident memory grew {grown} B, estimate {want} B"
    );
    drop(sim);
}
