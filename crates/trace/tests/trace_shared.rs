//! Every real trace sample in `../shared/traces` parses with format auto-detection,
//! and its statistics reproduce the MANIFEST table: request count exactly; read %
//! and mean read/write sizes to the precision the table prints; span within the
//! table's rounding. These tests are about the real samples: they SKIP when
//! `../shared` is absent (a fresh clone) unless `LAMINA_REQUIRE_SHARED=1`.

use std::path::Path;

use lamina_trace::{TraceFormat, TraceOptions, TraceReader, stats::StatsAccumulator};

#[path = "../../../tests/support/shared.rs"]
mod shared;

struct Row {
    file: String,
    requests: u64,
    read_pct: String,
    avg: (String, String),
    span_s: f64,
    span_decimals: i32,
}

/// Parse the MANIFEST's markdown table.
fn manifest(dir: &Path) -> Vec<Row> {
    let text = std::fs::read_to_string(dir.join("MANIFEST.md")).expect("MANIFEST.md beside the repo");
    let mut rows = Vec::new();
    for line in text.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if cells.len() < 8 || !cells[1].contains('/') {
            continue;
        }
        let digits: String =
            cells[4].chars().take_while(|c| c.is_ascii_digit() || *c == ',').filter(|c| *c != ',').collect();
        let (r, w) = cells[6].split_once('/').expect("avg read / write");
        let span: String = cells[7].trim_end_matches(" s").chars().filter(|c| *c != ',').collect();
        rows.push(Row {
            file: cells[1].to_owned(),
            requests: digits.parse().expect("request count"),
            read_pct: cells[5].to_owned(),
            avg: (r.trim().to_owned(), w.trim().to_owned()),
            span_s: span.parse().expect("span"),
            span_decimals: span.split_once('.').map_or(0, |(_, d)| d.len() as i32),
        });
    }
    rows
}

/// Format `v` with as many decimals as `like` has.
fn same_precision(v: f64, like: &str) -> String {
    let decimals = like.split_once('.').map_or(0, |(_, d)| d.len());
    format!("{v:.decimals$}")
}

fn expected_format(file: &str) -> TraceFormat {
    match file.split('/').next().unwrap() {
        "ssdsim-ascii" | "mqsim-ascii" => TraceFormat::Ssdsim,
        "msr-csv" => TraceFormat::Msr,
        "systor17" => TraceFormat::Systor17,
        "blkparse" => TraceFormat::Blkparse,
        "flashnet" if file.ends_with(".profile") => TraceFormat::FlashnetProfile,
        "flashnet" => TraceFormat::Flashnet,
        other => panic!("unexpected directory {other}"),
    }
}

#[test]
fn every_shared_sample_parses_and_matches_the_manifest() {
    let Some(dir) = shared::shared_traces("every_shared_sample_parses_and_matches_the_manifest") else {
        return;
    };
    let rows = manifest(&dir);
    assert!(rows.len() >= 12, "MANIFEST table has {} rows", rows.len());
    for row in rows {
        let path = dir.join(&row.file);
        let mut reader = TraceReader::open(&path, &TraceOptions::default(), u64::MAX)
            .unwrap_or_else(|e| panic!("{}: {e}", row.file));
        assert_eq!(reader.format(), expected_format(&row.file), "{}", row.file);
        let mut acc = StatsAccumulator::new();
        for r in reader.by_ref() {
            acc.add(&r.unwrap_or_else(|e| panic!("{}: {e}", row.file)));
        }
        let summary = reader.summary();
        assert!(summary.complete);
        assert_eq!(summary.errors_skipped, 0);
        let s = acc.finish();
        assert_eq!(s.requests, row.requests, "{}: request count", row.file);
        assert_eq!(same_precision(s.read_percent, &row.read_pct), row.read_pct, "{}: read %", row.file);
        assert_eq!(same_precision(s.avg_read_kib, &row.avg.0), row.avg.0, "{}: avg read KiB", row.file);
        assert_eq!(same_precision(s.avg_write_kib, &row.avg.1), row.avg.1, "{}: avg write KiB", row.file);
        let span = s.span_ns as f64 / 1e9;
        // The table rounds the span to the digits it prints.
        let tolerance = 0.5 * 10f64.powi(-row.span_decimals) + 1e-9;
        assert!((span - row.span_s).abs() <= tolerance, "{}: span {span} s vs {}", row.file, row.span_s);
        assert!(summary.digest.starts_with("xxh3-64:") && summary.digest.len() == 24);
    }
}

#[test]
fn systor_gzip_is_reordered_within_the_window_and_fails_without_it() {
    let Some(dir) = shared::shared_traces("systor_gzip_is_reordered_within_the_window_and_fails_without_it")
    else {
        return;
    };
    let path = dir.join("systor17/vdi-sample.csv.gz");
    let reader = TraceReader::open(&path, &TraceOptions::default(), u64::MAX).unwrap();
    let v: Vec<_> = reader.map(Result::unwrap).collect();
    assert!(v.windows(2).all(|w| w[0].arrival <= w[1].arrival));
    let opts = TraceOptions { reorder_window: 0, ..TraceOptions::default() };
    let err = TraceReader::open(&path, &opts, u64::MAX).unwrap().find_map(Result::err).expect("disorder");
    assert_eq!(err.kind(), "out-of-order");
    assert!(err.to_string().contains("vdi-sample.csv.gz:"), "{err}");
}

#[test]
fn the_digest_is_stable_and_independent_of_limit() {
    // Not about the real samples: a bundled fixture (compressed, so `bytes` counts the
    // decompressed stream).
    let path = shared::bundled("fixtures/ssdsim.trace.zst");
    let full = {
        let mut r = TraceReader::open(&path, &TraceOptions::default(), u64::MAX).unwrap();
        r.by_ref().for_each(drop);
        r.summary()
    };
    let limited = {
        let opts = TraceOptions { limit: Some(10), ..TraceOptions::default() };
        let mut r = TraceReader::open(&path, &opts, u64::MAX).unwrap();
        assert_eq!(r.by_ref().count(), 10);
        r.summary()
    };
    assert_eq!(full.digest, limited.digest);
    assert!(full.bytes > std::fs::metadata(&path).unwrap().len(), "decompressed bytes");
    assert_eq!(limited.requests, 10);
}
