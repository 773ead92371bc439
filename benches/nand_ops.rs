//! Throughput of `Device::issue` (operations issued per second of wall time) on the
//! `mqsim-default` device (8 ch × 4 chips × 2 dies × 2 planes, 67 M pages), for read,
//! program, mixed and multi-plane workloads. Addresses follow fixed strides (no PRNG
//! needed); each op is issued when its die is free, as a scheduler would, so the bus
//! calendars stay short like in a real replay.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use lamina_nand_model::{BlockId, Command, Device, DeviceOptions, PageAddr, SimTime, preset};

const BATCH: u64 = 10_000;
/// Pages preconditioned (programmed untimed) in block 0 of every plane, for reads.
const READ_PAGES: u32 = 64;

struct Workload {
    dev: Device,
    at: u64,
    i: u64,
    /// Per plane: block currently being programmed (blocks ≥ 1; block 0 holds read data).
    open: Vec<u32>,
}

impl Workload {
    fn new() -> Workload {
        let spec = preset("mqsim-default").unwrap().validate().unwrap();
        let mut dev = Device::new(spec, DeviceOptions::default());
        let g = dev.geometry().clone();
        for plane in 0..g.total_planes() {
            let first = g.first_page(BlockId(plane * g.blocks_per_plane()));
            for p in 0..READ_PAGES as u64 {
                dev.program_untimed(lamina_nand_model::Ppa(first.0 + p), p).unwrap();
            }
        }
        Workload { dev, at: 0, i: 0, open: vec![1; g.total_planes() as usize] }
    }

    /// Address of `plane_global`'s block `block`, page `page`.
    fn addr(&self, plane_global: u32, block: u32, page: u32) -> PageAddr {
        let g = self.dev.geometry();
        let b = BlockId(plane_global * g.blocks_per_plane() + block);
        PageAddr { page, ..g.addr(g.first_page(b)) }
    }

    fn die_of(&self, a: PageAddr) -> lamina_nand_model::DieId {
        self.dev.geometry().die_id(a)
    }

    /// Advance the issue clock to when `a`'s die is free (never backwards).
    fn clock_for(&mut self, a: PageAddr) -> SimTime {
        self.at = (self.at + 50).max(self.dev.die_free_at(self.die_of(a)).0);
        SimTime(self.at)
    }

    fn read(&mut self) {
        let planes = self.dev.geometry().total_planes() as u64;
        let plane = (self.i * 7919 % planes) as u32;
        let a = self.addr(plane, 0, (self.i * 13 % READ_PAGES as u64) as u32);
        let at = self.clock_for(a);
        let t = self.dev.issue(at, &Command::Read { pages: &[a], offset_bytes: 0, len_bytes: 4096 }).unwrap();
        black_box(t);
    }

    fn program(&mut self) {
        let g = self.dev.geometry().clone();
        let plane = (self.i * 7919 % g.total_planes() as u64) as u32;
        let blk = self.open[plane as usize];
        let a = self.addr(plane, blk, 0);
        let at = self.clock_for(a);
        match self.dev.write_pointer(g.block_id(a)) {
            Some(page) => {
                let p = PageAddr { page, ..a };
                black_box(self.dev.issue(at, &Command::Program { pages: &[p], tags: &[self.i] }).unwrap());
            }
            None => {
                // Block full: move on to the next block (wrapping over blocks ≥ 1) and erase it.
                let next = 1 + blk % (g.blocks_per_plane() - 1);
                self.open[plane as usize] = next;
                let e = self.addr(plane, next, 0);
                black_box(self.dev.issue(at, &Command::Erase { blocks: &[e] }).unwrap());
            }
        }
    }

    fn multi_plane_program(&mut self) {
        let g = self.dev.geometry().clone();
        let dies = g.total_dies() as u64;
        let die = (self.i * 31 % dies) as u32;
        let (p0, p1) = (die * 2, die * 2 + 1);
        let blk = self.open[p0 as usize];
        let (a, b) = (self.addr(p0, blk, 0), self.addr(p1, blk, 0));
        let at = self.clock_for(a);
        match self.dev.write_pointer(g.block_id(a)) {
            Some(page) => {
                let pages = [PageAddr { page, ..a }, PageAddr { page, ..b }];
                black_box(self.dev.issue(at, &Command::Program { pages: &pages, tags: &[1, 2] }).unwrap());
            }
            None => {
                let next = 1 + blk % (g.blocks_per_plane() - 1);
                self.open[p0 as usize] = next;
                self.open[p1 as usize] = next;
                let blocks = [self.addr(p0, next, 0), self.addr(p1, next, 0)];
                black_box(self.dev.issue(at, &Command::Erase { blocks: &blocks }).unwrap());
            }
        }
    }

    fn run(&mut self, mix: Mix) {
        for _ in 0..BATCH {
            self.i += 1;
            match mix {
                Mix::Read => self.read(),
                Mix::Program => self.program(),
                Mix::Mixed => {
                    if self.i % 10 < 7 {
                        self.read()
                    } else {
                        self.program()
                    }
                }
                Mix::MultiPlane => self.multi_plane_program(),
            }
        }
    }
}

#[derive(Clone, Copy)]
enum Mix {
    Read,
    Program,
    Mixed,
    MultiPlane,
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("nand_issue");
    group.throughput(Throughput::Elements(BATCH));
    for (name, mix) in [
        ("read_4k", Mix::Read),
        ("program_erase", Mix::Program),
        ("mixed_70r_30w", Mix::Mixed),
        ("multi_plane_program", Mix::MultiPlane),
    ] {
        let mut w = Workload::new();
        group.bench_function(name, |b| b.iter(|| w.run(mix)));
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
