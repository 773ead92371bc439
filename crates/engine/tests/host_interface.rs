//! Hand-computed timelines through the host interface (`[host.interface]`, issue #16).
//!
//! MQSim's default link (4 lanes at 1 GB/s, 28 framing bytes per ≤128-byte packet) moves
//! a doorbell (2 B) or a read request in 8 ns, a submission entry (72 B) in 25 ns, a
//! completion entry (16 B) in 11 ns, 4 KiB in 1248 ns and 8 KiB in 2496 ns
//! (`hostif::tests`). Unloaded, a 4 KiB read pays 8 + 8 + 25 + 1248 + 11 = 1300 ns and
//! an 8 KiB write 8 + 8 + 25 + 8 + 2496 + 11 = 2556 ns: the "1.3 µs" and
//! "2.6 µs" on MQSim's default device.

mod timeline;

use lamina_engine::SimulationBuilder;
use lamina_engine::config::{ConfigBuilder, SimConfig};
use lamina_engine::trace::IoOp;
use timeline::{config as small, report_of, req, response, run_sim};

/// [`run_sim`] with the report.
fn run(
    cfg: SimConfig,
    prefill: &[u64],
    reqs: &[lamina_engine::trace::IoRequest],
) -> (Vec<lamina_engine::Completion>, lamina_engine::report::Report) {
    let (done, sim) = run_sim(cfg, prefill, reqs);
    (done, report_of(&sim))
}

fn mqsim(sets: &[&str]) -> SimConfig {
    let mut b = ConfigBuilder::new().preset("mqsim-default").unwrap();
    for s in sets {
        b = b.set(s).unwrap();
    }
    b.build().unwrap()
}

#[test]
fn mqsim_default_adds_1_3_us_to_a_4k_read_and_2_6_us_to_an_8k_write() {
    let read = [req(0, IoOp::Read, 0, 4096)];
    let write = [req(0, IoOp::Write, 0, 8192)];
    let (off_r, rep_off) = run(mqsim(&[]), &[0], &read);
    let (on_r, rep_on) = run(mqsim(&["host.interface.kind=nvme"]), &[0], &read);
    assert_eq!(response(&on_r[0]) - response(&off_r[0]), 1300);
    let (off_w, _) = run(mqsim(&[]), &[], &write);
    let (on_w, rep_w) = run(mqsim(&["host.interface.kind=nvme"]), &[], &write);
    assert_eq!(response(&on_w[0]) - response(&off_w[0]), 2556);
    // The attribution has a host-interface column only with the interface on, and it
    // holds exactly the interface's time.
    let (text_on, text_off) = (rep_on.to_text(), rep_off.to_text());
    assert!(text_on.contains("host if"), "the text table shows the column");
    assert!(!text_off.contains("host if"));
    let a_off = rep_off.latency_attribution.unwrap();
    assert!(a_off.read.host_interface.is_none() && rep_off.host_interface.is_none());
    let a_on = rep_on.latency_attribution.unwrap();
    assert_eq!(a_on.read.host_interface.unwrap().max_ns, 1300);
    assert_eq!(a_on.read.unattributed, a_off.read.unattributed, "the device part is unchanged");
    assert_eq!(rep_w.latency_attribution.unwrap().write.host_interface.unwrap().max_ns, 2556);
    let h = rep_on.host_interface.expect("the interface reports its counters");
    // Doorbell, entry, CQ head doorbell; fetch request, data, completion.
    assert_eq!((h.messages_to_device, h.messages_to_host), (3, 3));
    assert_eq!((h.wire_bytes_to_device, h.wire_bytes_to_host), (30 + 100 + 30, 32 + 4992 + 44));
}

/// The device of `timeline` (`controller_timelines.rs`): a 4 KiB page read takes
/// t_cmd + tR + 4096 ns = 54196 ns. LPN 0 is on die 0, LPN 2 on die 1.
const READ: u64 = timeline::T_CMD + timeline::T_R + timeline::XFER_PAGE;

/// Two reads at t = 0 on different dies, fetch size 1: B's doorbell reaches the device
/// at 16 ns (behind A's) but its entry is fetched only when A completes.
/// A: doorbell 0–8, fetch request 8–16, entry 16–41, device 41 + READ = 54237, data
/// 54237–55485, then B's fetch request 55485–55493, A's completion 55493–55504.
/// B: entry 55493–55518, device to 109714, data to 110962, completion to 110973.
#[test]
fn fetch_size_bounds_requests_in_the_device() {
    let reqs = [req(0, IoOp::Read, 0, 4096), req(0, IoOp::Read, 2 * 4096, 4096)];
    let (done, rep) = run(small("[host.interface]\nkind = \"nvme\"\nfetch_size = 1\n"), &[0, 2], &reqs);
    assert_eq!(41 + READ, 54_237);
    assert_eq!([response(&done[0]), response(&done[1])], [55_504, 110_973]);
    let h = rep.host_interface.unwrap();
    assert_eq!((h.fetch_waits, h.host_waits, h.peak_queue), (1, 0, 2));
}

/// Queue depth 1: A completes unloaded at READ + 1300 = 55496 ns. B waits in the host
/// until then, rings its doorbell 55496–55504 (before the host's CQ head doorbell
/// 55504–55512); fetch request 55504–55512, entry 55512–55537, device to 109733, data
/// to 110981, completion to 110992. Its host wait counts as queueing in the
/// attribution; its interface time is the unloaded 1300 ns.
#[test]
fn queue_depth_makes_requests_wait_in_the_host() {
    let reqs = [req(0, IoOp::Read, 0, 4096), req(0, IoOp::Read, 2 * 4096, 4096)];
    let (done, rep) = run(small("[host.interface]\nkind = \"nvme\"\nqueue_depth = 1\n"), &[0, 2], &reqs);
    assert_eq!([response(&done[0]), response(&done[1])], [55_496, 110_992]);
    let h = rep.host_interface.unwrap();
    assert_eq!((h.fetch_waits, h.host_waits, h.peak_queue), (0, 1, 1));
    let a = rep.latency_attribution.unwrap().read;
    assert_eq!(a.queue_wait.max_ns, 55_496, "B's wait for an entry is queueing");
    assert_eq!(a.host_interface.unwrap().max_ns, 1300);
}

/// SATA on one 600 MB/s lane with a 1 µs HBA: doorbell 30 B → 50 ns, read request
/// 32 B → 54 ns, entry 100 B → 167 ns, data 4992 B → 8320 ns, completion 44 B → 74 ns
/// (rounded up), plus the HBA's 1 µs on submission and on completion.
#[test]
fn sata_read_pays_the_slower_link_and_the_hba() {
    let reqs = [req(0, IoOp::Read, 0, 4096)];
    let cfg = small("[host.interface]\nkind = \"sata\"\nsata_processing_delay = \"1us\"\n");
    let (done, rep) = run(cfg, &[0], &reqs);
    assert_eq!(response(&done[0]), 1000 + 50 + 54 + 167 + READ + 8320 + 74 + 1000);
    assert_eq!(rep.host_interface.unwrap().queue_depth, 32);
}

/// MQSim's own SATA settings (its default ssdconfig.xml: the PCIe link of 4 lanes at
/// 1 GB/s kept for SATA, `SATA_Processing_Delay` 400 µs) are reachable with keys; they
/// are not Lamina's SATA defaults (docs/model.md, "SATA"). A 4 KiB read then pays the
/// NVMe figures' 1300 ns of link time plus the HBA's 400 µs each way.
#[test]
fn sata_with_mqsims_sample_settings() {
    let reqs = [req(0, IoOp::Read, 0, 4096)];
    let cfg = small(
        "[host.interface]\nkind = \"sata\"\nlanes = 4\nlane_bandwidth_bytes_per_s = 1000000000\n\
         sata_processing_delay = \"400us\"\n",
    );
    let (done, rep) = run(cfg, &[0], &reqs);
    assert_eq!(response(&done[0]), 400_000 + 8 + 8 + 25 + READ + 1248 + 11 + 400_000);
    assert_eq!(rep.latency_attribution.unwrap().read.host_interface.unwrap().max_ns, 801_300);
}

/// Closed loop counts requests in the interface as outstanding: with depth 1 the
/// requests run one at a time. The second enters when the first completes (its
/// completion reached the host), and its doorbell waits 8 ns behind the host's CQ head
/// doorbell for the first.
#[test]
fn closed_loop_counts_requests_in_the_interface() {
    let reqs = [req(0, IoOp::Read, 0, 4096), req(0, IoOp::Read, 2 * 4096, 4096)];
    let cfg = small("[host]\nmode = \"closed\"\nclosed_loop_depth = 1\n[host.interface]\nkind = \"nvme\"\n");
    let mut sim = SimulationBuilder::new(cfg).build().unwrap();
    let reads: Vec<_> = [0u64, 2].iter().map(|&l| Ok(req(0, IoOp::Read, l * 4096, 4096))).collect();
    sim.prefill(reads.into_iter()).unwrap();
    sim.run(reqs.iter().map(|r| Ok(*r))).unwrap();
    let rep = report_of(&sim);
    assert_eq!(rep.events.peak_outstanding, 1);
    assert_eq!((rep.read.min_ns, rep.read.max_ns), (READ + 1300, READ + 1308));
}

#[test]
fn interface_keys_are_checked() {
    let err = ConfigBuilder::new()
        .preset("mqsim-default")
        .unwrap()
        .set("host.interface.kind=sata")
        .unwrap()
        .set("host.interface.queue_depth=64")
        .unwrap()
        .build()
        .unwrap_err()
        .to_string();
    assert!(err.contains("host.interface.queue_depth") && err.contains("1 ..= 32"), "{err}");
    let err = ConfigBuilder::new()
        .preset("mqsim-default")
        .unwrap()
        .set("host.interface.kind=pcie")
        .unwrap()
        .build()
        .unwrap_err()
        .to_string();
    assert!(err.contains("host.interface.kind"), "{err}");
}
