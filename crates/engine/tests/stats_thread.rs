//! Request statistics recorded on the statistics thread give the same report as inline
//! recording (issue #14): every completion recorded, in the same histograms, whether the
//! run ends normally or with a trace error, and the stepping API after a threaded run
//! still records (inline).

use lamina_engine::config::{ConfigBuilder, SimConfig};
use lamina_engine::report::TraceInfo;
use lamina_engine::trace::{IoOp, IoRequest, TraceError, TraceTime};
use lamina_engine::{AUTO_INLINE_FIRST, Simulation, SimulationBuilder, StatsThreadMode};

fn config(sets: &[&str]) -> SimConfig {
    let mut b = ConfigBuilder::new().preset("mqsim-default").unwrap();
    for s in sets {
        b = b.set(s).unwrap();
    }
    b.build().unwrap()
}

/// `n` requests (reads, writes and trims of 4–64 KiB over 64 MiB), a few
/// microseconds apart (queues form), from a fixed xorshift stream.
fn trace(n: u64) -> Vec<IoRequest> {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut t = 0;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            t += x % 9_000;
            let op = match x % 10 {
                0 => IoOp::Trim,
                1..=5 => IoOp::Read,
                _ => IoOp::Write,
            };
            let pages = 1 + (x >> 20) % 16;
            IoRequest {
                arrival: TraceTime(t),
                device: 0,
                offset_bytes: ((x >> 32) % (16 * 1024)) * 4096,
                size_bytes: pages * 4096,
                op,
            }
        })
        .collect()
}

fn sim(cfg: &SimConfig, mode: StatsThreadMode) -> Simulation {
    let mut s = SimulationBuilder::new(cfg.clone()).stats_thread(mode).build().unwrap();
    s.prefill(trace(6000).into_iter().map(Ok)).unwrap();
    s
}

fn json(s: &Simulation) -> String {
    s.report(TraceInfo { name: "t".into(), ..Default::default() }).to_json()
}

#[test]
fn threaded_and_inline_reports_are_identical() {
    for sets in
        [&[][..], &["host.interface.kind=nvme"][..], &["host.mode=closed", "host.closed_loop_depth=8"][..]]
    {
        let cfg = config(sets);
        let reqs = trace(6000);
        let mut reports = Vec::new();
        for mode in [StatsThreadMode::Off, StatsThreadMode::On, StatsThreadMode::Auto] {
            let mut s = sim(&cfg, mode);
            s.run(reqs.iter().copied().map(Ok)).unwrap();
            reports.push(json(&s));
        }
        let v: serde_json::Value = serde_json::from_str(&reports[0]).unwrap();
        let n = v["all"]["count"].as_u64().unwrap();
        assert!(n > 4 * 1024, "{sets:?}: {n} reads and writes, several batches");
        assert_eq!(reports[1], reports[0], "{sets:?}: thread from the start");
        assert_eq!(reports[2], reports[0], "{sets:?}: thread after {AUTO_INLINE_FIRST} (not reached)");
    }
}

#[test]
fn auto_mode_past_its_threshold_gives_the_inline_report() {
    let cfg = config(&[]);
    let n = AUTO_INLINE_FIRST + 5000;
    let reqs = trace(n);
    let run = |mode| {
        let mut s = SimulationBuilder::new(cfg.clone()).stats_thread(mode).build().unwrap();
        s.run(reqs.iter().copied().map(Ok)).unwrap();
        json(&s)
    };
    assert_eq!(run(StatsThreadMode::Auto), run(StatsThreadMode::Off));
}

#[test]
fn a_trace_error_mid_run_returns_with_every_completion_recorded() {
    let cfg = config(&[]);
    let mut items: Vec<Result<IoRequest, TraceError>> = trace(6000).into_iter().map(Ok).collect();
    items[4000] =
        Err(TraceError::Io { file: "t".into(), source: std::sync::Arc::new(std::io::Error::other("boom")) });
    let mut reports = Vec::new();
    for mode in [StatsThreadMode::Off, StatsThreadMode::On] {
        let mut s = sim(&cfg, mode);
        let e = s.run(items.iter().cloned()).unwrap_err();
        assert!(e.to_string().contains("boom"), "{e}");
        // The requests in flight at the error finish; the report reads every completion.
        s.drain().unwrap();
        reports.push(json(&s));
    }
    assert_eq!(reports[1], reports[0]);
}

#[test]
fn stepping_after_a_threaded_run_records_inline() {
    let cfg = config(&[]);
    let reqs = trace(3000);
    let mut reports = Vec::new();
    for mode in [StatsThreadMode::Off, StatsThreadMode::On] {
        let mut s = sim(&cfg, mode);
        s.run(reqs[..2000].iter().copied().map(Ok)).unwrap();
        // `run` drained the device: the stepped requests come after its clock.
        let after = s.now().0;
        for r in &reqs[2000..] {
            s.submit(IoRequest { arrival: TraceTime(after + r.arrival.as_ns()), ..*r }).unwrap();
        }
        s.drain().unwrap();
        reports.push(json(&s));
    }
    assert_eq!(reports[1], reports[0]);
}

#[test]
fn dropping_a_simulation_mid_run_does_not_hang() {
    // A panic inside `run` unwinds with the thread running: the thread is joined.
    let cfg = config(&[]);
    let mut s = sim(&cfg, StatsThreadMode::On);
    let reqs = trace(3000);
    let mut n = 0;
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = s.run(reqs.iter().copied().map(|r| {
            n += 1;
            assert!(n < 2500, "the trace source fails");
            Ok(r)
        }));
    }));
    assert!(r.is_err());
    drop(s);
}
