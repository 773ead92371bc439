//! A run that takes its trace from a [`TraceCache`] reports exactly what a run streaming
//! the file reports: on compressed and plain traces, with and without the prefill pass,
//! with a request limit, when the trace was parsed by an earlier run, when the cache
//! declines the trace (an error in it, over the budget) and after an eviction.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Barrier};

use lamina_engine::config::{ConfigBuilder, SimConfig};
use lamina_engine::trace::{TraceOptions, TraceReader};
use lamina_engine::{
    ParsedTrace, SimulationBuilder, TraceCache, TraceCacheStats, run_built, run_built_cached,
};

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(rel)
}

fn config(preset: &str, sets: &[&str]) -> SimConfig {
    let mut b = ConfigBuilder::new().preset(preset).unwrap();
    for s in sets {
        b = b.set(s).unwrap();
    }
    b.build().unwrap()
}

/// The report's JSON and the latency-relevant part of the run, streamed.
fn streamed(cfg: &SimConfig, path: &Path) -> Result<String, String> {
    run_built(SimulationBuilder::new(cfg.clone()), path, &mut |_| {})
        .map(|(r, _)| r.to_json())
        .map_err(|e| e.to_string())
}

fn cached(cfg: &SimConfig, path: &Path, cache: &TraceCache) -> Result<String, String> {
    run_built_cached(SimulationBuilder::new(cfg.clone()), path, Some(cache), &mut |_| {})
        .map(|(r, _)| r.to_json())
        .map_err(|e| e.to_string())
}

fn stats(parsed: u64, reused: u64, streamed: u64) -> TraceCacheStats {
    TraceCacheStats { parsed, reused, streamed }
}

#[test]
fn cached_runs_report_the_same_bytes_as_streamed_runs() {
    let traces = ["traces/demo.trace", "traces/fixtures/msr.csv.zst", "traces/fixtures/blkparse.txt.zst"];
    let configs = [
        config("mqsim-default", &[]),
        config("mqsim-default", &["host.unwritten_reads=zero"]),
        config("die-binding-4x2", &["trace.limit=300", "sched.placement=state"]),
    ];
    for t in traces {
        let path = repo(t);
        for cfg in &configs {
            let cache = TraceCache::new(64 << 20);
            let want = streamed(cfg, &path).unwrap();
            assert_eq!(cached(cfg, &path, &cache).unwrap(), want, "{t}: first (parsing) run");
            assert_eq!(cached(cfg, &path, &cache).unwrap(), want, "{t}: second run, from memory");
            assert_eq!(cache.stats(), stats(1, 1, 0), "{t}");
        }
    }
}

#[test]
fn a_trace_with_an_error_streams_and_fails_where_it_did() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.trace");
    let mut text: String = (0..200u64).map(|i| format!("{} 0 {} 8 {}\n", i * 1000, i * 64, i % 2)).collect();
    text.push_str("200000 0 64 8 x\n");
    std::fs::write(&path, text).unwrap();
    let cfg = config("mqsim-default", &[]);
    let cache = TraceCache::new(64 << 20);
    let want = streamed(&cfg, &path).unwrap_err();
    assert!(want.contains("bad.trace:201"), "{want}");
    assert_eq!(cached(&cfg, &path, &cache).unwrap_err(), want);
    assert_eq!(cached(&cfg, &path, &cache).unwrap_err(), want);
    // Declined once and remembered (not parsed again).
    assert_eq!(cache.stats(), stats(0, 0, 2));
    assert_eq!(cache.held_bytes(), 0);
}

#[test]
fn a_missing_file_fails_as_when_streamed() {
    let cfg = config("mqsim-default", &[]);
    let path = repo("traces/no-such-trace.trace");
    let cache = TraceCache::new(64 << 20);
    assert_eq!(cached(&cfg, &path, &cache).unwrap_err(), streamed(&cfg, &path).unwrap_err());
    assert_eq!(cache.stats(), stats(0, 0, 1));
}

#[test]
fn a_trace_over_the_budget_or_a_zero_budget_streams() {
    let cfg = config("mqsim-default", &[]);
    let path = repo("traces/demo.trace");
    let want = streamed(&cfg, &path).unwrap();
    let requests =
        serde_json::from_str::<serde_json::Value>(&want).unwrap()["trace"]["requests"].as_u64().unwrap();
    assert!(requests > 10);
    let small = TraceCache::new(40 * 10);
    assert_eq!(cached(&cfg, &path, &small).unwrap(), want);
    assert_eq!(small.stats(), stats(0, 0, 1));
    let off = TraceCache::new(0);
    assert_eq!(cached(&cfg, &path, &off).unwrap(), want);
    assert_eq!(off.stats(), stats(0, 0, 1));
}

#[test]
fn the_least_recently_used_trace_goes_when_the_budget_is_full() {
    let opts = TraceOptions::default();
    let (a, b) = (repo("traces/fixtures/msr.csv.zst"), repo("traces/fixtures/blkparse.txt.zst"));
    let size = |p: &Path| ParsedTrace::parse(p, &opts, u64::MAX, u64::MAX).unwrap().heap_bytes();
    let (sa, sb) = (size(&a), size(&b));
    assert!(sa > 0 && sb > 0);
    // Room for either trace, not both.
    let cache = TraceCache::new(sa.max(sb) + sa.min(sb) / 2);
    let first = cache.get(&a, &opts, u64::MAX).unwrap();
    assert_eq!(cache.held_bytes(), sa);
    assert!(cache.get(&b, &opts, u64::MAX).is_some());
    assert_eq!(cache.held_bytes(), sb, "the first trace was evicted");
    // A run still replaying the evicted trace keeps it.
    assert!(!first.requests().is_empty());
    // Parsed again when asked again; other options or another capacity are other traces.
    let again = cache.get(&a, &opts, u64::MAX).unwrap();
    assert!(!Arc::ptr_eq(&first, &again));
    assert!(Arc::ptr_eq(&again, &cache.get(&a, &opts, u64::MAX).unwrap()));
    let limited = TraceOptions { limit: Some(5), ..TraceOptions::default() };
    assert_eq!(cache.get(&a, &limited, u64::MAX).unwrap().requests().len(), 5);
    assert_eq!(cache.stats(), stats(4, 1, 0));
    assert!(cache.held_bytes() <= cache.budget_bytes());
}

#[test]
fn runs_asking_at_once_share_one_parse() {
    let opts = TraceOptions::default();
    let path = repo("traces/fixtures/msr.csv.zst");
    let cache = TraceCache::new(64 << 20);
    let barrier = Barrier::new(4);
    let got: Vec<Arc<ParsedTrace>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|_| {
                s.spawn(|| {
                    barrier.wait();
                    cache.get(&path, &opts, u64::MAX).unwrap()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(got.iter().all(|t| Arc::ptr_eq(t, &got[0])));
    assert_eq!(cache.stats(), stats(1, 3, 0));
}

#[test]
fn the_cursor_reports_what_the_streaming_reader_reports() {
    let opts = TraceOptions::default();
    let path = repo("traces/fixtures/blkparse.txt.zst");
    let parsed = Arc::new(ParsedTrace::parse(&path, &opts, u64::MAX, u64::MAX).unwrap());
    let n = parsed.requests().len();
    assert!(n > 3);
    for stop in [0, 3, n] {
        let mut reader = TraceReader::open(&path, &opts, u64::MAX).unwrap();
        let mut cursor = parsed.cursor();
        for _ in 0..stop {
            assert_eq!(reader.next().unwrap().unwrap(), cursor.next().unwrap().unwrap());
        }
        // Before the end is seen, the partial summary; after it, the whole one.
        assert_eq!(cursor.summary(), reader.summary(), "after {stop} requests");
        if stop == n {
            assert!(reader.next().is_none() && cursor.next().is_none());
            assert_eq!(cursor.summary(), reader.summary());
            assert!(cursor.summary().complete);
        }
    }
}
