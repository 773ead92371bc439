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
}
