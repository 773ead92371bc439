//! `lamina serve` as a process: it prints its bound address, serves a client, stops when
//! the last client disconnects, prints the report and writes its JSON, and records a
//! trace that `lamina run --config REC.toml REC` replays to the same latencies. Bad flags
//! fail up front, naming the flag.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use assert_cmd::prelude::*;
use lamina_serve::client::Client;
use lamina_serve::proto::{CMD_FLUSH, CMD_TRIM};

fn lamina() -> Command {
    Command::cargo_bin("lamina").unwrap()
}

const DEVICE: &[&str] = &["--preset", "mbm", "--set", "nand.geometry.blocks_per_plane=64"];

#[test]
fn serve_a_client_then_report_record_and_replay_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let (json, rec, log) = (dir.path().join("r.json"), dir.path().join("rec.blk"), dir.path().join("s.csv"));
    let mut child = lamina()
        .arg("serve")
        .args(DEVICE)
        .args(["--listen", "127.0.0.1:0", "--verify", "-q", "--json"])
        .arg(&json)
        .arg("--record")
        .arg(&rec)
        .arg("--latency-log")
        .arg(&log)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut first = String::new();
    err.read_line(&mut first).unwrap();
    let addr =
        first.split("listening on ").nth(1).and_then(|s| s.split(' ').next()).expect(&first).to_owned();
    let mut c = Client::open(&addr).unwrap();
    c.stream.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    for i in 0..50u64 {
        assert_eq!(c.write(i * 16384, &vec![i as u8; 16384]).unwrap(), 0);
    }
    for i in 0..50u64 {
        assert_eq!(c.read(i * 16384, 16384).unwrap().unwrap(), vec![i as u8; 16384]);
    }
    assert_eq!(c.command(CMD_TRIM, 0, 16384).unwrap(), 0);
    assert_eq!(c.command(CMD_FLUSH, 0, 0).unwrap(), 0);
    c.disconnect().unwrap();
    let status = child.wait().unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut err, &mut rest).unwrap();
    assert!(status.success(), "{rest}");
    assert!(rest.contains("50 reads, 50 writes, 1 trims, 1 flushes"), "{rest}");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!((v["read"]["count"].as_u64(), v["write"]["count"].as_u64()), (Some(50), Some(50)));
    // The replay `lamina serve` printed reproduces every request's latency.
    let conf = dir.path().join("rec.blk.toml");
    assert!(rest.contains(&format!("lamina run --config {} {}", conf.display(), rec.display())), "{rest}");
    let replay_log = dir.path().join("r.csv");
    lamina()
        .args(["run", "-q", "--latency-log"])
        .arg(&replay_log)
        .arg("--config")
        .arg(&conf)
        .arg(&rec)
        .assert()
        .success();
    assert_eq!(std::fs::read_to_string(&log).unwrap(), std::fs::read_to_string(&replay_log).unwrap());
}

/// A running `lamina serve` child and its bound address.
struct Child {
    child: std::process::Child,
    err: BufReader<std::process::ChildStderr>,
    addr: String,
    /// Standard error up to and including the `listening on` line.
    head: String,
}

/// Start `lamina serve` with `args` on a free port; read stderr up to its address.
fn serve(args: &[&str]) -> Child {
    let mut child = lamina()
        .arg("serve")
        .args(DEVICE)
        .args(["--listen", "127.0.0.1:0"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut head = String::new();
    while !head.contains("listening on ") {
        assert!(err.read_line(&mut head).unwrap() > 0, "serve ended before listening: {head}");
    }
    let addr = head.split("listening on ").nth(1).and_then(|s| s.split(' ').next()).expect(&head).to_owned();
    Child { child, err, addr, head }
}

impl Child {
    /// Wait for the exit; its status, standard error and standard output (both short).
    fn finish(mut self) -> (std::process::ExitStatus, String, String) {
        let mut out = String::new();
        std::io::Read::read_to_string(&mut self.child.stdout.take().unwrap(), &mut out).unwrap();
        let mut rest = String::new();
        std::io::Read::read_to_string(&mut self.err, &mut rest).unwrap();
        let status = self.child.wait().unwrap();
        (status, self.head + &rest, out)
    }
}

fn open(addr: &str) -> Client {
    let c = Client::open(addr).unwrap();
    c.stream.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    c
}

/// Regression (a new user's trial): `--backing FILE` with data already in FILE served
/// that data as never written, so its reads were reported at 0 ns with no flash read.
/// Now the pages holding data are mapped as written before serving, and said so.
#[test]
fn reads_of_data_already_in_the_backing_file_cost_flash_reads() {
    let dir = tempfile::tempdir().unwrap();
    let (img, json) = (dir.path().join("ssd.img"), dir.path().join("r.json"));
    std::fs::write(&img, vec![0xabu8; 1 << 20]).unwrap();
    let s = serve(&["-q", "--backing", img.to_str().unwrap(), "--json", json.to_str().unwrap()]);
    assert!(s.head.contains("128 logical pages already hold data"), "{}", s.head);
    let mut c = open(&s.addr);
    for i in 0..16u64 {
        assert_eq!(c.read(i * 65536, 65536).unwrap().unwrap(), vec![0xab; 65536]);
    }
    c.disconnect().unwrap();
    let (status, err, _) = s.finish();
    assert!(status.success(), "{err}");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["read"]["count"].as_u64(), Some(16));
    assert!(v["read"]["min_ns"].as_u64().unwrap() > 0, "{}", v["read"]);
    assert_eq!(v["flash"]["unwritten_reads"].as_u64(), Some(0));
    assert_eq!(v["flash"]["host_reads"].as_u64(), Some(128));
    let warnings = v["trace"]["warnings"].to_string();
    assert!(warnings.contains("held data in 128 logical pages"), "{warnings}");
}

/// A backing file the server would have to truncate, or whose data a record could not
/// carry, is refused up front (exit 2) and left as it was.
#[test]
fn unusable_backing_files_are_refused_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("ssd.img");
    std::fs::write(&img, [1u8; 4096]).unwrap();
    let out = lamina()
        .arg("serve")
        .args(DEVICE)
        .args(["--listen", "127.0.0.1:0", "--backing"])
        .arg(&img)
        .arg("--record")
        .arg(dir.path().join("rec.blk"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("--backing") && e.contains("--record") && e.contains("without --record"), "{e}");
    assert_eq!(std::fs::metadata(&img).unwrap().len(), 4096);
    assert!(!dir.path().join("rec.blk").exists());
    // Longer than the export (sparse, so the test costs nothing).
    let big = std::fs::File::create(dir.path().join("big.img")).unwrap();
    big.set_len(1 << 40).unwrap();
    let out = lamina()
        .arg("serve")
        .args(DEVICE)
        .args(["--listen", "127.0.0.1:0", "--backing"])
        .arg(dir.path().join("big.img"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("--backing") && e.contains("longer than the export"), "{e}");
    assert_eq!(big.metadata().unwrap().len(), 1 << 40);
}

/// Regression (a new user's trial): a port probe (a TCP connect and close, as `nc -z`
/// does) ended a server without `--persist` with an empty report. Now it is logged and
/// the server waits for a real client session.
#[test]
fn a_port_probe_does_not_end_the_server() {
    let mut s = serve(&["-q"]);
    drop(std::net::TcpStream::connect(&s.addr).unwrap());
    // The server's word that it saw the probe end (and goes on serving).
    let mut line = String::new();
    while !line.contains("NBD handshake") {
        line.clear();
        assert!(s.err.read_line(&mut line).unwrap() > 0, "serve ended after a probe");
    }
    assert!(line.contains("still serving"), "{line}");
    let mut c = open(&s.addr);
    assert_eq!(c.write(0, &[7; 4096]).unwrap(), 0);
    assert_eq!(c.read(0, 4096).unwrap().unwrap(), vec![7; 4096]);
    c.disconnect().unwrap();
    let (status, err, _) = s.finish();
    assert!(status.success(), "{err}");
    assert!(
        err.contains("1 client sessions; 1 of 2 connections ended before completing the NBD handshake; 1 reads, 1 writes"),
        "{err}"
    );
}

/// A session without I/O: the summary and the report say no requests were served,
/// instead of a report of zeros with an empty digest.
#[test]
fn a_session_without_requests_says_none_were_served() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let s = serve(&["--json", json.to_str().unwrap()]);
    let c = open(&s.addr);
    c.disconnect().unwrap();
    let (status, err, out) = s.finish();
    assert!(status.success(), "{err}");
    assert!(err.contains("lamina serve: no requests were served (1 client sessions)"), "{err}");
    assert!(out.contains("warning: no requests were served"), "{out}");
    assert!(!out.contains("digest )"), "{out}");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["trace"]["requests"].as_u64(), Some(0));
    assert!(v["trace"]["warnings"][0].as_str().unwrap().starts_with("no requests were served"), "{v}");
    assert!(!v["trace"]["digest"].as_str().unwrap().is_empty());
}

#[test]
fn bad_serve_flags_fail_up_front_naming_the_flag() {
    let out = lamina().args(["serve", "--preset", "mbm", "--set", "host.mode=\"closed\""]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("host.mode=closed"));
    let out = lamina()
        .args([
            "serve",
            "--preset",
            "mbm",
            "--set",
            "host.unwritten_reads=\"prefill\"",
            "--listen",
            "127.0.0.1:0",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("host.unwritten_reads=prefill"));
    let dir = tempfile::tempdir().unwrap();
    let out = lamina()
        .args(["serve", "--preset", "mbm", "--listen", "127.0.0.1:0", "--record-format", "msr", "--record"])
        .arg(dir.path().join("x.csv"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("--record-format msr") && e.contains("blkparse"), "{e}");
    // A port in use names the flag.
    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let out = lamina()
        .args(["serve", "--preset", "mbm", "--listen", &busy.local_addr().unwrap().to_string()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--listen"));
    // --unix and --listen: both named, and said to be alternatives (either order).
    for args in
        [["--unix", "s.sock", "--listen", "127.0.0.1:0"], ["--listen", "127.0.0.1:0", "--unix", "s.sock"]]
    {
        let out =
            lamina().args(["serve", "--preset", "mbm"]).args(args).current_dir(dir.path()).output().unwrap();
        assert_eq!(out.status.code(), Some(2));
        let e = String::from_utf8_lossy(&out.stderr);
        assert!(e.contains("--unix s.sock and --listen 127.0.0.1:0 are mutually exclusive"), "{e}");
        assert!(!dir.path().join("s.sock").exists());
    }
}
