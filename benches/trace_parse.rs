//! Trace parse throughput (lines/s): SSDsim ASCII through the synchronous parser on
//! one core (the target is ≥ 3 M lines/s), and through the threaded
//! `TraceReader` as the engine consumes it.

use std::hint::black_box;
use std::io::Cursor;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use lamina_trace::{
    Arrival, GenConfig, Generator, Pattern, SizeDist, TraceFormat, TraceOptions, TraceParser, TraceReader,
    write::TraceWriter,
};

const LINES: u64 = 1_000_000;

fn ssdsim_text() -> Vec<u8> {
    let cfg = GenConfig {
        requests: LINES,
        arrival: Arrival::poisson("20000").expect("rate"),
        read_ppm: 600_000,
        sizes: SizeDist::parse("4k-64k").expect("sizes"),
        write_sizes: None,
        pattern: Pattern::Uniform,
        footprint_bytes: 200 << 30,
        seed: 1,
        device: 0,
    };
    let mut w = TraceWriter::new(Vec::new(), TraceFormat::Ssdsim).expect("writer");
    for r in Generator::new(cfg).expect("generator") {
        w.write(&r).expect("write");
    }
    w.finish().expect("finish")
}

fn bench(c: &mut Criterion) {
    // Read in place by every iteration: a copy per iteration (28 MB of fresh memory,
    // zeroed by the kernel on first touch) cost as much as the parse and varied more.
    let text: &'static [u8] = Box::leak(ssdsim_text().into_boxed_slice());
    let opts = TraceOptions::default();
    let mut g = c.benchmark_group("trace_parse");
    g.sample_size(10);
    g.throughput(Throughput::Elements(LINES));
    g.bench_function("ssdsim_1M_lines_sync_one_core", |b| {
        b.iter(|| {
            let p =
                TraceParser::new("bench", Box::new(Cursor::new(text)), None, &opts, u64::MAX).expect("open");
            let mut n = 0u64;
            for r in p {
                n += black_box(r.expect("parse")).size_bytes;
            }
            n
        })
    });
    g.bench_function("ssdsim_1M_lines_threaded_reader", |b| {
        b.iter(|| {
            let p =
                TraceReader::from_reader("bench", Cursor::new(text), None, &opts, u64::MAX).expect("open");
            let mut n = 0u64;
            for r in p {
                n += black_box(r.expect("parse")).size_bytes;
            }
            n
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
