//! Whole-replay throughput: 1,000,000 generated requests (4–64 KiB uniform sizes in 4 KiB
//! steps, 50 % reads, Poisson arrivals at 10 k IOPS, uniform 4 KiB-aligned addresses over
//! 200 GiB) on the `mqsim-default` device (8 ch × 4 chips × 2 dies × 2 planes × 2048
//! blocks × 256 pages × 8 KiB). Reports requests/s (criterion throughput). The untimed
//! prefill of read-before-write pages runs in the (untimed) setup of each sample.
//!
//! Two schedulers: `fcfs` (the default) and `multiplane` (issue #9: within 20 % of fcfs).
//!
//! `LAMINA_BENCH_REQUESTS` overrides the request count (e.g. for a quick smoke run).

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use lamina_engine::config::ConfigBuilder;
use lamina_engine::trace::IoRequest;
use lamina_engine::trace::generator::{GenConfig, Generator};
use lamina_engine::{Simulation, SimulationBuilder};

fn requests() -> u64 {
    std::env::var("LAMINA_BENCH_REQUESTS").ok().and_then(|s| s.parse().ok()).unwrap_or(1_000_000)
}

fn workload(n: u64) -> Vec<IoRequest> {
    Generator::new(GenConfig::replay_benchmark(n)).unwrap().collect()
}

fn prepared(reqs: &[IoRequest], scheduler: &str) -> Simulation {
    let cfg = ConfigBuilder::new()
        .preset("mqsim-default")
        .unwrap()
        .set(&format!("sched.scheduler=\"{scheduler}\""))
        .unwrap()
        .build()
        .unwrap();
    let mut sim = SimulationBuilder::new(cfg).build().unwrap();
    sim.prefill(reqs.iter().copied().map(Ok)).unwrap();
    sim
}

fn bench(c: &mut Criterion) {
    let n = requests();
    let reqs = workload(n);
    let mut g = c.benchmark_group("replay");
    g.sample_size(10);
    g.throughput(Throughput::Elements(n));
    // `fcfs` keeps its historical name so criterion's baselines carry over.
    for (name, scheduler) in
        [("mqsim-default/1M-uniform-50r", "fcfs"), ("mqsim-default/1M-uniform-50r/multiplane", "multiplane")]
    {
        g.bench_function(name, |b| {
            b.iter_batched(
                || prepared(&reqs, scheduler),
                |mut sim| {
                    sim.run(reqs.iter().copied().map(Ok)).unwrap();
                    sim
                },
                BatchSize::PerIteration,
            )
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
