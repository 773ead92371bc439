//! Prints replay throughput (requests/s, events/s), start-up time and peak RSS for the
//! replay benchmark workload (see `benches/replay.rs`), streaming the generated trace
//! (never materialised). Usage: `cargo run --release -p lamina-engine --example
//! replay_throughput [REQUESTS] [SCHEDULER]` (scheduler `fcfs` by default, as in the
//! criterion bench).
//!
//! This program measures the simulator, so it reads the wall clock; the simulation
//! itself never does.
#![allow(clippy::disallowed_methods)]

use std::time::Instant;

use lamina_engine::SimulationBuilder;
use lamina_engine::config::ConfigBuilder;
use lamina_engine::report::TraceInfo;
use lamina_engine::trace::generator::{GenConfig, Generator};

fn gen_cfg(n: u64) -> GenConfig {
    GenConfig::replay_benchmark(n)
}

fn peak_rss_kib() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    s.lines().find(|l| l.starts_with("VmHWM:"))?.split_whitespace().nth(1)?.parse().ok()
}

fn main() {
    let n: u64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(1_000_000);
    let t0 = Instant::now();
    let scheduler = std::env::args().nth(2).unwrap_or_else(|| "fcfs".into());
    let cfg = ConfigBuilder::new()
        .preset("mqsim-default")
        .unwrap()
        .set(&format!("sched.scheduler=\"{scheduler}\""))
        .unwrap()
        .build()
        .unwrap();
    let mut sim = SimulationBuilder::new(cfg).build().unwrap();
    let startup = t0.elapsed();
    let t1 = Instant::now();
    let prefilled = sim.prefill(Generator::new(gen_cfg(n)).unwrap().map(Ok)).unwrap();
    let prefill = t1.elapsed();
    let t2 = Instant::now();
    sim.run(Generator::new(gen_cfg(n)).unwrap().map(Ok)).unwrap();
    let replay = t2.elapsed().as_secs_f64();
    let r = sim.report(TraceInfo {
        name: "generated".into(),
        format: "generator".into(),
        digest: String::new(),
        requests: n,
        skipped: 0,
        wrapped: 0,
        ..Default::default()
    });
    println!("requests            {n} ({scheduler})");
    println!("start-up            {:.4} s", startup.as_secs_f64());
    println!("prefill             {:.3} s ({prefilled} pages)", prefill.as_secs_f64());
    println!("replay              {replay:.3} s");
    println!("requests/s          {:.0}", n as f64 / replay);
    println!("events/s            {:.0}", r.events.processed as f64 / replay);
    println!("peak RSS            {} MiB", peak_rss_kib().unwrap_or(0) / 1024);
    println!(
        "read p50/p99/p99.99 {} / {} / {} us",
        r.read.percentile(50.0).unwrap_or(0) / 1000,
        r.read.percentile(99.0).unwrap_or(0) / 1000,
        r.read.percentile(99.99).unwrap_or(0) / 1000
    );
    println!(
        "write p50/p99       {} / {} us",
        r.write.percentile(50.0).unwrap_or(0) / 1000,
        r.write.percentile(99.0).unwrap_or(0) / 1000
    );
}
