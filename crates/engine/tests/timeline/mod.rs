//! The device and helpers of the hand-computed timelines (`controller_timelines.rs`,
//! `host_interface.rs`).
//!
//! The device: one channel, one chip, two dies of two planes, 8 blocks × 4 pages of
//! 4 KiB SLC; t_cmd = 100 ns, t_dbsy = 500 ns, 1 ns/B (a page crosses the bus in
//! 4096 ns), tR = 50 µs, tPROG = 500 µs. Striping `PDCW` puts LPN 0 on die 0 plane 0,
//! LPN 1 on die 0 plane 1, LPN 2 on die 1 plane 0, LPN 3 on die 1 plane 1, and every
//! fourth LPN on the same plane.
#![allow(dead_code)]

use lamina_engine::config::{ConfigBuilder, SimConfig};
use lamina_engine::trace::{IoOp, IoRequest, TraceTime};
use lamina_engine::{Completion, Simulation, SimulationBuilder};

pub const DEVICE: &str = r#"
[nand.geometry]
channels = 1
chips_per_channel = 1
dies_per_chip = 2
planes_per_die = 2
blocks_per_plane = 8
pages_per_block = 4
page_size_bytes = 4096
partial_read_bytes = 1024
cell_type = "slc"

[nand.timing]
t_cmd = 100
t_dbsy = 500
t_r = 50000
t_prog = 500000
t_bers = 2000000
t_suspend_program = 10000
t_resume = 5000
bus = { ns_per_byte = 1 }

[ftl]
overprovisioning = 0.3
gc_threshold = { free_blocks = 2 }
striping_order = "PDCW"

[host]
verify = true
"#;

pub const T_CMD: u64 = 100;
pub const T_DBSY: u64 = 500;
pub const XFER_PAGE: u64 = 4096;
pub const T_R: u64 = 50_000;
pub const T_PROG: u64 = 500_000;
pub const PAGE: u64 = 4096;

pub fn config(extra: &str) -> SimConfig {
    ConfigBuilder::new().toml("device", DEVICE).unwrap().toml("extra", extra).unwrap().build().unwrap()
}

pub fn req(at: u64, op: IoOp, offset_bytes: u64, size_bytes: u64) -> IoRequest {
    IoRequest { arrival: TraceTime(at), device: 0, offset_bytes, size_bytes, op }
}

/// Prefill (untimed) the LPNs `prefill` (whole pages of the configured device), then
/// submit `reqs` and run to the end; the completions in submission order and the
/// simulation (for its report).
pub fn run_sim(cfg: SimConfig, prefill: &[u64], reqs: &[IoRequest]) -> (Vec<Completion>, Simulation) {
    let page = u64::from(cfg.nand.geometry.page_size_bytes);
    let mut sim = SimulationBuilder::new(cfg).build().expect("config builds");
    let done = replay(&mut sim, page, prefill, reqs);
    (done, sim)
}

/// Replay on a built simulation (pages of `page` bytes): prefill (untimed) the LPNs
/// `prefill`, submit `reqs` and run to the end; the completions in submission order.
pub fn replay(sim: &mut Simulation, page: u64, prefill: &[u64], reqs: &[IoRequest]) -> Vec<Completion> {
    let reads: Vec<_> = prefill.iter().map(|&l| Ok(req(0, IoOp::Read, l * page, page))).collect();
    sim.prefill(reads.into_iter()).expect("prefill");
    for r in reqs {
        sim.submit(*r).expect("submit");
    }
    sim.drain().expect("run");
    let mut done = Vec::new();
    sim.take_completions(&mut done);
    done.sort_by_key(|c| c.id);
    assert_eq!(done.len(), reqs.len(), "every request completes");
    done
}

/// [`run_sim`]'s completions alone.
pub fn run(cfg: SimConfig, prefill: &[u64], reqs: &[IoRequest]) -> Vec<Completion> {
    run_sim(cfg, prefill, reqs).0
}

/// The report of a finished simulation.
pub fn report_of(sim: &Simulation) -> lamina_engine::report::Report {
    sim.report(lamina_engine::report::TraceInfo { name: "t".into(), ..Default::default() })
}

pub fn response(c: &Completion) -> u64 {
    c.done.0 - c.arrival.0
}
