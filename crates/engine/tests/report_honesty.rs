//! The report says what it measured and what it could not (issue #8, items 5, 6, 6b,
//! 16): an undefined WAF is null and "n/a", a seed that cannot matter is flagged,
//! preconditioning's outcome is reported, and the device is named.

use lamina_engine::SimulationBuilder;
use lamina_engine::config::ConfigBuilder;
use lamina_engine::report::{Report, TraceInfo};
use lamina_engine::trace::TraceTime;
use lamina_engine::trace::{IoOp, IoRequest};

fn run(sets: &[&str], reqs: &[IoRequest]) -> Report {
    let mut b = ConfigBuilder::new().preset("mbm").unwrap().set("nand.geometry.blocks_per_plane=64").unwrap();
    for s in sets {
        b = b.set(s).unwrap();
    }
    let mut sim = SimulationBuilder::new(b.build().unwrap()).build().unwrap();
    sim.precondition().unwrap();
    sim.prefill(reqs.iter().copied().map(Ok)).unwrap();
    sim.run(reqs.iter().copied().map(Ok)).unwrap();
    sim.report(TraceInfo {
        name: "t".into(),
        format: "test".into(),
        digest: String::new(),
        requests: reqs.len() as u64,
        ..Default::default()
    })
}

fn req(t: u64, op: IoOp, page: u64) -> IoRequest {
    IoRequest { arrival: TraceTime(t), device: 0, offset_bytes: page * 8192, size_bytes: 8192, op }
}

#[test]
fn read_only_trace_has_no_waf() {
    // Story: WAF was printed as 0.0 for read-only traces.
    let r = run(&[], &[req(0, IoOp::Read, 1), req(10, IoOp::Read, 2)]);
    assert_eq!(r.waf, None);
    let v: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
    assert!(v["waf"].is_null());
    assert!(r.to_text().contains("WAF n/a (no host page programmed)"), "{}", r.to_text());
    let w = run(&[], &[req(0, IoOp::Write, 1)]);
    assert_eq!(w.waf, Some(1.0));
}

#[test]
fn a_seed_that_cannot_change_the_result_is_flagged() {
    let reqs = [req(0, IoOp::Write, 1), req(10, IoOp::Read, 1)];
    let r = run(&["seed=7"], &reqs);
    assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
    assert!(r.warnings[0].contains("seed 7 has no effect"));
    assert!(r.to_text().contains("warning: seed 7 has no effect"));
    assert!(run(&[], &reqs).warnings.is_empty(), "the default seed is not flagged");
    let p = run(&["seed=7", "precondition.fill_fraction=0.5"], &reqs);
    assert!(p.warnings.is_empty(), "preconditioning draws from the seed: {:?}", p.warnings);
}

#[test]
fn preconditioning_outcome_is_reported() {
    // Story: setup.rs threw the preconditioning report away.
    let reqs = [req(0, IoOp::Write, 1)];
    assert!(run(&[], &reqs).precondition.is_none());
    let r = run(&["precondition.fill_fraction=0.5"], &reqs);
    let p = r.precondition.clone().expect("preconditioned");
    // 64 blocks × 1024 pages × 32 planes × 0.93 logical × 0.5.
    assert!(p.filled_pages > 900_000 && p.filled_pages < 1_000_000, "{}", p.filled_pages);
    assert!(p.overwrites > 0 && p.windows > 0);
    assert!(p.waf.unwrap() >= 1.0 && p.last_window_waf.unwrap() >= 1.0);
    assert!(p.pages_programmed >= p.filled_pages + p.overwrites);
    assert!(r.to_text().contains("preconditioned: "), "{}", r.to_text());
}

#[test]
fn the_summary_names_the_device() {
    let r = run(&["buffer.size_bytes=1048576", "host.queue_depth=32"], &[req(0, IoOp::Write, 1)]);
    let d = &r.device;
    assert_eq!(d.preset.as_deref(), Some("mbm"));
    assert_eq!(d.raw_bytes, 4 * 2 * 2 * 2 * 64 * 1024 * 8192);
    assert!(d.geometry.starts_with("4 ch × 2 chips × 2 dies × 2 planes × 64 blocks × 1024 pages × 8192 B"));
    assert_eq!(d.placement, "static");
    assert!(d.host.contains("queue depth 32"), "{}", d.host);
    assert!(d.buffer.starts_with("1024 KiB (128 pages"), "{}", d.buffer);
    let text = r.to_text();
    assert!(text.contains("device mbm: 4 ch × 2 chips") && text.contains("ftl page"), "{text}");
}

#[test]
fn waf_counts_a_cached_mappings_translation_page_programs() {
    // Story (new-user trial, 2026-12): with `ftl.mapping = "cached"` the WAF left out
    // the translation pages written back on dirty evictions — flash programs the host
    // never asked for. Writes spread over many translation pages with a one-entry CMT:
    // every write dirties an entry and evicts the previous one.
    let reqs: Vec<IoRequest> = (0..200).map(|i| req(i * 2_000_000, IoOp::Write, i * 4096)).collect();
    let r = run(&["ftl.mapping=\"cached\"", "ftl.cmt_entries=1"], &reqs);
    let m = r.mapping.as_ref().expect("mapping report");
    assert!(m.translation_page_writes > 100, "{m:?}");
    let host = r.flash.host_programs;
    let all = host + r.flash.gc_programs + m.translation_page_writes + m.translation_gc_moves;
    assert_eq!(r.waf, Some(all as f64 / host as f64));
    assert!(r.waf.unwrap() > 1.5);
}
