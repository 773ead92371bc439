//! The server over loopback, driven by the crate's Rust client: the handshake and every
//! command, the negative cases (each answered as the protocol says, with the server still
//! serving afterwards), several clients at once, and the record-then-replay exactness.
//! Every socket has a read timeout, so a server bug fails a test instead of hanging it.

use std::io::Write;
use std::time::Duration;

use lamina_engine::config::{ConfigBuilder, SimConfig};
use lamina_engine::{LatencyLog, SimulationBuilder};
use lamina_serve::client::Client;
use lamina_serve::proto::*;
use lamina_serve::{Listen, Pacing, RecordTo, ServeOptions, Served, Server, Stopper};

/// A small device (8 GiB raw): mbm with fewer blocks.
fn config() -> SimConfig {
    ConfigBuilder::new()
        .preset("mbm")
        .unwrap()
        .set("nand.geometry.blocks_per_plane=64")
        .unwrap()
        .set("host.unwritten_reads=\"zero\"")
        .unwrap()
        .set("host.verify=true")
        .unwrap()
        .build()
        .unwrap()
}

/// A shared in-memory file for the latency log.
#[derive(Clone, Default)]
struct Shared(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

struct Running {
    addr: String,
    stopper: Stopper,
    thread: std::thread::JoinHandle<Served>,
}

fn start(opts: ServeOptions, log: Option<Shared>) -> Running {
    let mut b = SimulationBuilder::new(config());
    if let Some(l) = log {
        b = b.latency_log(LatencyLog::new(Box::new(l)));
    }
    let server =
        Server::bind(b.build().unwrap(), &Listen::Tcp("127.0.0.1:0".parse().unwrap()), opts).unwrap();
    let addr = server.local_addr().to_owned();
    let stopper = server.stopper();
    let thread = std::thread::spawn(move || server.serve().unwrap());
    Running { addr, stopper, thread }
}

fn persist() -> ServeOptions {
    ServeOptions { persist: true, ..ServeOptions::default() }
}

fn open(addr: &str) -> Client {
    let c = Client::open(addr).unwrap();
    c.stream.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    c
}

fn pattern(seed: u8, len: usize) -> Vec<u8> {
    (0..len).map(|i| seed.wrapping_mul(31).wrapping_add(i as u8)).collect()
}

#[test]
fn handshake_options_and_every_command() {
    let s = start(persist(), None);
    let (mut c, hs_flags) = Client::connect(&s.addr).unwrap();
    assert_eq!(hs_flags, FLAG_FIXED_NEWSTYLE | FLAG_NO_ZEROES);
    c.send_flags(CLIENT_FIXED_NEWSTYLE | CLIENT_NO_ZEROES).unwrap();
    // LIST names the one export.
    c.send_option(OPT_LIST, &[]).unwrap();
    let r = c.option_reply().unwrap();
    assert_eq!((r.option, r.kind), (OPT_LIST, REP_SERVER));
    assert_eq!(&r.data[4..], EXPORT_NAME.as_bytes());
    assert_eq!(c.option_reply().unwrap().kind, REP_ACK);
    // An unknown option: ERR_UNSUP, and negotiation goes on.
    c.send_option(42, b"xyz").unwrap();
    assert_eq!(c.option_reply().unwrap().kind, REP_ERR_UNSUP);
    // INFO on an unknown export, then on ours: size, flags and block sizes.
    assert_eq!(c.info("nope", false).unwrap().last().unwrap().kind, REP_ERR_UNKNOWN);
    let info = c.info(EXPORT_NAME, false).unwrap();
    assert_eq!(info.last().unwrap().kind, REP_ACK);
    let sizes = info.iter().find(|r| r.data[..2] == INFO_BLOCK_SIZE.to_be_bytes()).expect("block sizes");
    assert_eq!(&sizes.data[2..6], &MIN_BLOCK_BYTES.to_be_bytes());
    assert_eq!(&sizes.data[10..14], &MAX_PAYLOAD_BYTES.to_be_bytes());
    let export = 4 * 2 * 2 * 2 * 64 * 1024 * 8192u64 * 93 / 100; // at least the logical share
    assert!(c.size_bytes > export / 2 && c.size_bytes <= 4 * 2 * 2 * 2 * 64 * 1024 * 8192u64);
    for f in [TFLAG_HAS_FLAGS, TFLAG_SEND_FLUSH, TFLAG_SEND_TRIM, TFLAG_SEND_FUA] {
        assert!(c.flags & f != 0, "flag {f:#x} not advertised: {:#x}", c.flags);
    }
    c.go("").unwrap();
    c.stream.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    // WRITE then READ returns it; unaligned-within-page pieces too.
    let a = pattern(1, 64 << 10);
    assert_eq!(c.write(4096, &a).unwrap(), 0);
    assert_eq!(c.read(4096, 64 << 10).unwrap().unwrap(), a);
    assert_eq!(c.write(4096 + 512, &pattern(2, 1024)).unwrap(), 0);
    let mut expect = a.clone();
    expect[512..1536].copy_from_slice(&pattern(2, 1024));
    assert_eq!(c.read(4096, 64 << 10).unwrap().unwrap(), expect);
    // Never-written space reads as zeros.
    assert!(c.read(1 << 30, 8192).unwrap().unwrap().iter().all(|&b| b == 0));
    // FLUSH, TRIM (reads zero afterwards), then DISC.
    assert_eq!(c.command(CMD_FLUSH, 0, 0).unwrap(), 0);
    assert_eq!(c.command(CMD_TRIM, 4096, 8192).unwrap(), 0);
    let after = c.read(4096, 64 << 10).unwrap().unwrap();
    assert!(after[..8192].iter().all(|&b| b == 0));
    assert_eq!(after[8192..], expect[8192..]);
    // EXPORT_NAME on a second connection (the oldest way in).
    let (mut d, _) = Client::connect(&s.addr).unwrap();
    d.send_flags(CLIENT_FIXED_NEWSTYLE | CLIENT_NO_ZEROES).unwrap();
    d.send_option(OPT_EXPORT_NAME, b"").unwrap();
    let size = u64::from_be_bytes(d.data(8).unwrap().try_into().unwrap());
    assert_eq!(size, c.size_bytes);
    let _flags = d.data(2).unwrap();
    d.stream.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    assert_eq!(d.read(4096 + 8192, 4096).unwrap().unwrap(), expect[8192..12288]);
    c.disconnect().unwrap();
    d.disconnect().unwrap();
    s.stopper.stop();
    let served = s.thread.join().unwrap();
    assert!(served.failure.is_none(), "verify mode holds over the network: {:?}", served.failure);
    assert_eq!((served.counts.writes, served.counts.trims, served.counts.flushes), (2, 1, 1));
    assert_eq!(served.counts.reads, 5);
    assert_eq!((served.connections, served.sessions), (2, 2));
}

#[test]
fn bad_requests_get_their_error_and_the_server_keeps_serving() {
    let s = start(persist(), None);
    let mut c = open(&s.addr);
    let size = c.size_bytes;
    // Beyond the export: EINVAL for a read and a trim, ENOSPC for a write.
    assert_eq!(c.read(size - 512, 1024).unwrap(), Err(EINVAL));
    assert_eq!(c.write(size, &[7; 512]).unwrap(), ENOSPC);
    assert_eq!(c.command(CMD_TRIM, size - 512, 4096).unwrap(), EINVAL);
    // Length 0, or over 32 MiB: EINVAL (an oversize write's payload is consumed).
    assert_eq!(c.read(0, 0).unwrap(), Err(EINVAL));
    assert_eq!(c.read(0, MAX_PAYLOAD_BYTES + 512).unwrap(), Err(EINVAL));
    let big = vec![9u8; (MAX_PAYLOAD_BYTES + 512) as usize];
    assert_eq!(c.write(0, &big).unwrap(), EINVAL);
    // Unaligned, unknown command.
    assert_eq!(c.read(100, 512).unwrap(), Err(EINVAL));
    assert_eq!(c.command(77, 0, 512).unwrap(), EINVAL);
    // The connection still works.
    assert_eq!(c.write(0, &[5; 4096]).unwrap(), 0);
    assert_eq!(c.read(0, 4096).unwrap().unwrap(), vec![5; 4096]);

    // Bad magic in the handshake: that connection is closed, others are served.
    let (mut bad, _) = Client::connect(&s.addr).unwrap();
    bad.send_flags(CLIENT_FIXED_NEWSTYLE).unwrap();
    bad.stream.write_all(&[0xde; 16]).unwrap();
    bad.stream.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    assert!(bad.option_reply().is_err(), "closed after a bad option magic");
    // Bad request magic: closed.
    let mut bad = open(&s.addr);
    bad.stream.write_all(&[0xab; 28]).unwrap();
    assert!(bad.reply().is_err(), "closed after a bad request magic");
    // A client vanishing mid-request (half a write payload), and one mid-handshake.
    let mut gone = open(&s.addr);
    let mut h = REQUEST_MAGIC.to_be_bytes().to_vec();
    h.extend_from_slice(&[0, 0, 0, CMD_WRITE as u8]);
    h.extend_from_slice(&[0; 16]);
    h.extend_from_slice(&(1u32 << 20).to_be_bytes());
    gone.stream.write_all(&h).unwrap();
    gone.stream.write_all(&[1; 1000]).unwrap();
    drop(gone);
    drop(Client::connect(&s.addr).unwrap());
    // A client vanishing with reads in flight (its replies have nowhere to go).
    let mut gone = open(&s.addr);
    for i in 0..32 {
        gone.send(CMD_READ, i, 0, 1 << 20, &[]).unwrap();
    }
    drop(gone);
    // Still serving, with the data intact.
    let mut d = open(&s.addr);
    assert_eq!(d.read(0, 4096).unwrap().unwrap(), vec![5; 4096]);
    assert_eq!(c.read(0, 4096).unwrap().unwrap(), vec![5; 4096]);
    d.disconnect().unwrap();
    c.disconnect().unwrap();
    s.stopper.stop();
    let served = s.thread.join().unwrap();
    assert!(served.failure.is_none());
    assert_eq!(served.error_replies, 8);
    assert_eq!(served.counts.writes, 1, "the half-sent write never reached the device");
}

/// Several clients at once, pipelining; the served I/O is recorded, and `lamina run`'s
/// replay of the record (the engine's own trace path) gives the very same per-request
/// latencies and the same report.
#[test]
fn several_clients_and_the_record_replays_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("served.blk");
    let log = Shared::default();
    let opts = ServeOptions {
        record: Some(RecordTo {
            sink: Box::new(std::fs::File::create(&rec).unwrap()),
            format: lamina_trace::TraceFormat::Blkparse,
        }),
        ..ServeOptions::default()
    };
    let s = start(opts, Some(log.clone()));
    let threads: Vec<_> = (0..4u64)
        .map(|t| {
            let addr = s.addr.clone();
            std::thread::spawn(move || {
                let mut c = open(&addr);
                let base = t << 24;
                for round in 0..40u64 {
                    // Eight pipelined requests: writes, then reads of what was written.
                    for i in 0..8u64 {
                        let off = base + ((round * 8 + i) % 64) * 8192;
                        let data = pattern((t * 8 + i) as u8, 8192);
                        if round % 2 == 0 {
                            c.send(CMD_WRITE, i, off, 8192, &data).unwrap();
                        } else {
                            c.send(CMD_READ, i, off, 8192, &[]).unwrap();
                        }
                    }
                    for _ in 0..8 {
                        let r = c.reply().unwrap();
                        assert_eq!(r.error, 0);
                        if round % 2 == 1 {
                            c.data(8192).unwrap();
                        }
                    }
                    if round % 10 == 9 {
                        assert_eq!(c.command(CMD_TRIM, base, 16384).unwrap(), 0);
                    }
                }
                c.disconnect().unwrap();
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let mut served = s.thread.join().unwrap();
    assert!(served.failure.is_none());
    assert_eq!(served.counts.writes + served.counts.reads, 4 * 40 * 8);
    assert_eq!(served.counts.trims, 4 * 4);
    served.sim.take_latency_log().unwrap().finish().unwrap();
    let served_report = served.sim.report(Default::default());
    let served_log = log.0.lock().unwrap().clone();

    let replay_log = Shared::default();
    let builder = SimulationBuilder::new(config()).latency_log(LatencyLog::new(Box::new(replay_log.clone())));
    let (replay_report, mut sim) = lamina_engine::run_built(builder, &rec, &mut |_| {}).unwrap();
    sim.take_latency_log().unwrap().finish().unwrap();
    assert_eq!(replay_report.trace.requests, 4 * 40 * 8 + 16);
    let replay_log = replay_log.0.lock().unwrap().clone();
    assert_eq!(String::from_utf8(served_log).unwrap(), String::from_utf8(replay_log).unwrap());
    let strip = |r: &lamina_engine::report::Report| {
        let mut v: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
        v.as_object_mut().unwrap().remove("trace");
        v
    };
    assert_eq!(strip(&served_report), strip(&replay_report));
}

/// Paced mode: a reply never leaves before its simulated completion; how late it leaves
/// (the wall-clock jitter docs/serve.md quotes) is measured and printed.
#[test]
fn paced_replies_wait_for_their_simulated_completion() {
    let log = Shared::default();
    let s = start(ServeOptions { pacing: Pacing::Paced, ..ServeOptions::default() }, Some(log.clone()));
    let mut c = open(&s.addr);
    let mut observed = Vec::new();
    for i in 0..60u64 {
        let t0 = lamina_serve::clock::wall_now();
        if i % 2 == 0 {
            assert_eq!(c.write(i * 8192, &pattern(i as u8, 8192)).unwrap(), 0);
        } else {
            c.read((i - 1) * 8192, 8192).unwrap().unwrap();
        }
        observed.push(t0.elapsed().as_nanos() as u64);
    }
    c.disconnect().unwrap();
    let mut served = s.thread.join().unwrap();
    served.sim.take_latency_log().unwrap().finish().unwrap();
    let text = String::from_utf8(log.0.lock().unwrap().clone()).unwrap();
    let simulated: Vec<u64> =
        text.lines().skip(1).map(|l| l.split(',').nth(4).unwrap().parse().unwrap()).collect();
    assert_eq!(simulated.len(), observed.len());
    let mut late: Vec<u64> = Vec::new();
    for (o, s) in observed.iter().zip(&simulated) {
        assert!(o >= s, "a paced reply came {} ns before its simulated completion", s - o);
        late.push(o - s);
    }
    late.sort_unstable();
    let l = served.lateness.unwrap();
    eprintln!(
        "paced: client-observed minus simulated latency p50 {} ns, max {} ns; server-side lateness p50 {} ns, p99 {} ns, max {} ns",
        late[late.len() / 2],
        late[late.len() - 1],
        l.p50_ns,
        l.p99_ns,
        l.max_ns
    );
    assert_eq!(l.count, 60);
}

/// `--backing FILE`: the data outlives the server, and a second server serves it.
#[test]
fn a_backing_file_keeps_the_data_across_servers() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("ssd.img");
    let backed = || ServeOptions { backing: Some(file.clone()), ..ServeOptions::default() };
    let s = start(backed(), None);
    let mut c = open(&s.addr);
    assert_eq!(c.write(1 << 20, &pattern(7, 65536)).unwrap(), 0);
    assert_eq!(c.command(CMD_FLUSH, 0, 0).unwrap(), 0);
    c.disconnect().unwrap();
    let served = s.thread.join().unwrap();
    assert_eq!(served.resident_bytes, 0, "nothing held in memory");
    assert_eq!(std::fs::metadata(&file).unwrap().len(), c_size());
    let s = start(backed(), None);
    let mut c = open(&s.addr);
    assert_eq!(c.read(1 << 20, 65536).unwrap().unwrap(), pattern(7, 65536));
    c.disconnect().unwrap();
    let served = s.thread.join().unwrap();
    // Regression (a new user's trial): the data the file held was served as never
    // written, so these reads completed in 0 ns without touching flash. Now its pages
    // are mapped before serving and the reads cost flash reads.
    assert_eq!(served.held_pages, 65536 / 8192);
    let report = served.sim.report(Default::default());
    assert_eq!(report.flash.unwritten_reads, 0);
    assert_eq!(report.flash.host_reads, 65536 / 8192);
    assert!(report.read.min_ns > 0, "a read of held data took {} ns", report.read.min_ns);
    assert!(served.failure.is_none(), "verify mode agrees: {:?}", served.failure);
}

/// A backing file that holds data cannot be recorded: the record could not carry the
/// data, so its replay would start from an empty device. Refused before serving, the
/// file untouched.
#[test]
fn recording_over_a_backing_file_with_data_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("ssd.img");
    std::fs::write(&file, pattern(3, 4096)).unwrap();
    let opts = ServeOptions {
        backing: Some(file.clone()),
        record: Some(RecordTo {
            sink: Box::new(std::io::sink()),
            format: lamina_trace::TraceFormat::Blkparse,
        }),
        ..ServeOptions::default()
    };
    let sim = SimulationBuilder::new(config()).build().unwrap();
    let e = Server::bind(sim, &Listen::Tcp("127.0.0.1:0".parse().unwrap()), opts).err().expect("refused");
    let e = e.to_string();
    assert!(e.contains("--backing") && e.contains("--record") && e.contains("1 logical pages"), "{e}");
    assert_eq!(std::fs::read(&file).unwrap(), pattern(3, 4096), "the file is as it was");
}

/// What the server logged ([`ServeOptions::log`] takes a plain `fn`, hence a static);
/// only [`a_port_probe_is_not_the_client_session`] logs.
static LOGGED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
static LOGGED_CHANGED: std::sync::Condvar = std::sync::Condvar::new();

/// Regression (a new user's trial): a port probe (connect, then close without the
/// handshake, as `nc -z` or a health check does) was taken for the client session and
/// ended a server without `--persist` before any client came, with an empty report.
/// Now the probe is logged, and the server serves the client that follows.
#[test]
fn a_port_probe_is_not_the_client_session() {
    let opts = ServeOptions {
        log: Some(|m| {
            LOGGED.lock().unwrap().push(m.to_owned());
            LOGGED_CHANGED.notify_all();
        }),
        ..ServeOptions::default()
    };
    let s = start(opts, None);
    drop(std::net::TcpStream::connect(&s.addr).unwrap());
    // Wait until the server has seen the probe end: a server that stopped there would
    // refuse the client below.
    let logged = LOGGED_CHANGED
        .wait_timeout_while(LOGGED.lock().unwrap(), Duration::from_secs(20), |l| l.is_empty())
        .unwrap()
        .0
        .clone();
    assert_eq!(logged.len(), 1, "{logged:?}");
    assert!(logged[0].contains("ended before completing the NBD handshake"), "{logged:?}");
    assert!(logged[0].contains("still serving"), "{logged:?}");
    let mut c = open(&s.addr);
    assert_eq!(c.write(0, &pattern(1, 4096)).unwrap(), 0);
    assert_eq!(c.read(0, 4096).unwrap().unwrap(), pattern(1, 4096));
    c.disconnect().unwrap();
    // The session's end ends the server (no --persist).
    let served = s.thread.join().unwrap();
    assert_eq!((served.connections, served.sessions), (2, 1));
    assert_eq!((served.counts.reads, served.counts.writes), (1, 1));
}

/// The export size of [`config`]'s device.
fn c_size() -> u64 {
    SimulationBuilder::new(config()).build().unwrap().logical_capacity_bytes()
}
