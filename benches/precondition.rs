//! Preconditioning throughput of the page FTL on a small device (131 072 pages): fill the
//! logical space, then random overwrites to steady state. The 256 GiB case is timed by
//! `cargo run -p lamina-ftl --release --example precondition_256g`.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use lamina_ftl::{FtlConfig, PageFtl, PreconditionConfig, precondition};
use lamina_nand_model::{CellType, GeometryConfig, PageTypeOrder};

fn bench(c: &mut Criterion) {
    let geometry = GeometryConfig {
        channels: 2,
        chips_per_channel: 2,
        dies_per_chip: 1,
        planes_per_die: 2,
        blocks_per_plane: 256,
        pages_per_block: 64,
        page_size_bytes: 16384,
        partial_read_bytes: None,
        cell_type: CellType::Mlc,
        layers: 16,
        page_type_order: PageTypeOrder::Interleaved,
    }
    .validate()
    .unwrap();
    let ftl_cfg = FtlConfig::default();
    let pre = PreconditionConfig::default();
    // Count the host writes of one run to report throughput in written pages.
    let mut probe = PageFtl::new(geometry.clone(), &ftl_cfg).unwrap();
    let report = precondition(&mut probe, &pre, 1, &mut |_| {}).unwrap();
    let pages = report.stats.host_writes + report.stats.gc_moves;

    let mut group = c.benchmark_group("precondition");
    group.sample_size(10);
    group.throughput(Throughput::Elements(pages));
    group.bench_function("page_ftl_131k_pages", |b| {
        b.iter(|| {
            let mut ftl = PageFtl::new(geometry.clone(), &ftl_cfg).unwrap();
            let mut programs = 0u64;
            let r = precondition(&mut ftl, &pre, 1, &mut |_| programs += 1).unwrap();
            black_box((r, programs))
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
