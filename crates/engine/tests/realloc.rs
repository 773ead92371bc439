//! RS reallocation (`sched.mcs.reallocate`, docs/policies.md "RS reallocation"): a
//! hand-built run where a request's pages all sit on one channel and reallocation
//! spreads them so the next read of the same pages takes one flash-read round instead
//! of four; off, nothing changes; the configuration errors.

use lamina_engine::SimulationBuilder;
use lamina_engine::config::{ConfigBuilder, SimConfig};
use lamina_engine::report::{Report, TraceInfo};
use lamina_engine::trace::{IoOp, IoRequest, TraceTime};

// Four channels of one single-plane die each, 4 KiB SLC pages; t_R = 50 us.
const DEVICE: &str = r#"
[nand.geometry]
channels = 4
chips_per_channel = 1
dies_per_chip = 1
planes_per_die = 1
blocks_per_plane = 16
pages_per_block = 8
page_size_bytes = 4096
cell_type = "slc"

[nand.timing]
t_cmd = 100
t_dbsy = 500
t_r = 50000
t_prog = 500000
t_bers = 2000000
bus = { ns_per_byte = 1 }

[ftl]
overprovisioning = 0.3
gc_threshold = { free_blocks = 2 }

[sched]
scheduler = "mbm"
placement = "mcs"

[sched.mcs]
read_intensive_pages = 0

[host]
verify = true
"#;

fn config(extra: &str) -> SimConfig {
    ConfigBuilder::new().toml("device", DEVICE).unwrap().toml("extra", extra).unwrap().build().unwrap()
}

fn req(at_ms: u64, lpn: u64, pages: u64, op: IoOp) -> IoRequest {
    IoRequest {
        arrival: TraceTime(at_ms * 1_000_000),
        device: 0,
        offset_bytes: lpn * 4096,
        size_bytes: pages * 4096,
        op,
    }
}

fn run(cfg: SimConfig, reqs: Vec<IoRequest>) -> Report {
    let mut sim = SimulationBuilder::new(cfg).build().expect("config builds");
    sim.run(reqs.into_iter().map(Ok)).unwrap();
    sim.report(TraceInfo { name: "t".into(), format: "test".into(), ..Default::default() })
}

/// LPNs 0-3 written one page at a time on an idle device (MCS puts each on the same,
/// first, idle chip: channel 0), then read as one request twice, 10 ms apart. Off,
/// both reads take four flash-read rounds on channel 0's die. On, the first read's
/// three pages beyond the balanced share (ceil(4 / 4) = 1) move to channels 1-3, and
/// the second read takes one round: its response is about a quarter.
#[test]
fn reallocation_spreads_a_request_over_channels() {
    let reqs = || {
        let mut v: Vec<IoRequest> = (0..4).map(|i| req(i * 10, i, 1, IoOp::Write)).collect();
        v.push(req(50, 0, 4, IoOp::Read));
        v.push(req(60, 0, 4, IoOp::Read));
        v.push(req(70, 0, 4, IoOp::Read));
        v
    };
    let off = run(config(""), reqs());
    let on = run(config("sched.mcs.reallocate = true"), reqs());
    let m = on.placement.mcs.as_ref().expect("mcs counts");
    assert_eq!((m.realloc_requests, m.realloc_pages, m.realloc_skipped), (1, 3, 0));
    let m = off.placement.mcs.as_ref().expect("mcs counts");
    assert_eq!((m.realloc_requests, m.realloc_pages, m.realloc_skipped), (0, 0, 0));
    // Off: every read takes four rounds of t_R (~54 us each with the transfer).
    let (off_mean, on_mean) = (off.read.mean_ns, on.read.mean_ns);
    eprintln!("read mean: off {off_mean} ns, on {on_mean} ns (max {} ns)", on.read.max_ns);
    assert!(off_mean > 4.0 * 50_000.0, "off: {off_mean}");
    // On: the first read four rounds, the next two one round each: (4 + 1 + 1) / 3.
    assert!(on_mean < 0.6 * off_mean, "on {on_mean} vs off {off_mean}");
    assert!(on.read.max_ns > 4 * 50_000, "the first read still takes four rounds");
    // Three more programs: the migrations' rewrites.
    let programs = |r: &Report| r.flash_ops.as_ref().expect("flash ops").program.transactions;
    assert_eq!(programs(&on), programs(&off) + 3);
    // Deterministic.
    let again = run(config("sched.mcs.reallocate = true"), reqs());
    assert_eq!(serde_json::to_string(&on).unwrap(), serde_json::to_string(&again).unwrap());
}

#[test]
fn reallocation_config_errors_name_the_key() {
    let e = ConfigBuilder::new()
        .toml("device", DEVICE)
        .unwrap()
        .toml("extra", "sched.mcs.reallocate = true\nsched.mcs.reallocate_queue = 0")
        .unwrap()
        .build()
        .unwrap_err()
        .to_string();
    assert!(e.contains("sched.mcs.reallocate_queue"), "{e}");
    let e = ConfigBuilder::new()
        .toml("device", DEVICE)
        .unwrap()
        .toml("extra", "sched.placement = \"static\"\nsched.mcs.reallocate = true")
        .unwrap()
        .build()
        .unwrap_err()
        .to_string();
    assert!(e.contains("sched.mcs.reallocate") && e.contains("mcs"), "{e}");
}
