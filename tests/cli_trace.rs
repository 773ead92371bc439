//! End-to-end tests of trace ingestion through the real `lamina` binary (issue #8
//! items 1, 2, 3, 4, 10, 12, 15): pipes and `-`, absurd timestamps, empty traces,
//! visible transforms, xz and non-trace files, single error texts, and the closed-loop
//! declaration of generated traces.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn lamina() -> Command {
    Command::new(env!("CARGO_BIN_EXE_lamina"))
}

fn root() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// `lamina run --preset mbm --json J ARGS…` with `stdin` piped in; returns (output, JSON).
fn run_with_stdin(args: &[&str], stdin: &[u8]) -> (Output, Option<serde_json::Value>) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let mut child = lamina()
        .args(["run", "--preset", "mbm", "--json"])
        .arg(&json)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let bytes = stdin.to_vec();
    let feeder = std::thread::spawn(move || {
        let _ = input.write_all(&bytes); // the child may stop reading early on an error
    });
    let out = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    let v = std::fs::read_to_string(&json).ok().map(|t| serde_json::from_str(&t).unwrap());
    (out, v)
}

fn run(args: &[&str], trace: &Path) -> (Output, Option<serde_json::Value>) {
    let mut all: Vec<&str> = args.to_vec();
    all.push(trace.to_str().unwrap());
    run_with_stdin(&all, b"")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

/// Item 1: `zcat t.gz | lamina run -` and `/dev/stdin` replay every request (the
/// prefill pass used to consume the pipe, leaving a 0-request report), with and
/// without `--format`.
#[test]
fn piped_traces_replay_every_request() {
    let demo = std::fs::read(root().join("traces/demo.trace")).unwrap();
    let lines = demo.iter().filter(|&&b| b == b'\n').count() as u64;
    for args in
        [&["-"][..], &["--format", "ssdsim", "-"], &["--format", "ssdsim", "/dev/stdin"], &["/dev/stdin"]]
    {
        if args.contains(&"/dev/stdin") && !Path::new("/dev/stdin").exists() {
            continue;
        }
        let (out, v) = run_with_stdin(args, &gzip(&demo));
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        let v = v.unwrap();
        assert_eq!(v["trace"]["requests"], lines, "{args:?}");
        assert_eq!(v["read"]["count"].as_u64().unwrap() + v["write"]["count"].as_u64().unwrap(), lines);
    }
}

/// Item 1: `trace stats -` reads standard input too.
#[test]
fn trace_stats_reads_standard_input() {
    let demo = std::fs::read(root().join("traces/demo.trace")).unwrap();
    let mut child = lamina()
        .args(["trace", "stats", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&demo).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("requests    5000\n"), "{}", stdout(&out));
}

/// Item 2: one bogus timestamp 40 years out used to give a 40-year simulation, IOPS 0
/// and no warning.
#[test]
fn an_absurd_timestamp_is_warned_about_and_can_be_cut_or_clamped() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::new();
    for i in 0..2000u64 {
        let t = if i == 1500 { 1_262_304_000 } else { i * 405 / 1000 }; // ≤ 810 s, one at 40 years
        text += &format!(
            "  8,0 0 {} {t}.000000000 1 Q {} {} + 8 [fio]\n",
            i + 1,
            if i % 2 == 0 { "R" } else { "W" },
            i * 8
        );
    }
    let path = dir.path().join("blk.txt");
    std::fs::write(&path, text).unwrap();
    let (out, v) = run(&[], &path);
    assert!(out.status.success(), "{}", stderr(&out));
    let v = v.unwrap();
    assert_eq!(v["trace"]["outliers"], 1);
    let w = v["trace"]["warnings"][0].as_str().unwrap();
    assert!(w.contains("line 1501") && w.contains("years"), "{w}");
    assert!(stdout(&out).contains("warning: ") && stdout(&out).contains("line 1501"), "{}", stdout(&out));
    for (mode, requests) in [("cut", 1999), ("clamp", 2000)] {
        let (out, v) = run(&["--set", &format!("trace.outliers=\"{mode}\"")], &path);
        assert!(out.status.success(), "{}", stderr(&out));
        let v = v.unwrap();
        assert_eq!(v["trace"]["requests"], requests, "{mode}");
        let sim_s = v["sim_time_ns"].as_u64().unwrap() as f64 / 1e9;
        assert!(sim_s < 900.0, "{mode}: sim time {sim_s} s");
        assert!(v["iops"].as_f64().unwrap() > 1.0, "{mode}");
    }
}

/// Item 3: a header-only or all-skipped trace is an error unless asked for.
#[test]
fn a_trace_without_requests_is_an_error_unless_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let header = dir.path().join("header.csv");
    std::fs::write(&header, "Timestamp,Response,IOType,LUN,Offset,Size\n").unwrap();
    let (out, _) = run(&[], &header);
    assert!(!out.status.success());
    let e = stderr(&out);
    assert!(e.contains("header.csv: no request to replay: it holds only a header line"), "{e}");
    assert!(e.contains("trace.allow_empty = true"), "{e}");
    let (out, v) = run(&["--set", "trace.allow_empty=true"], &header);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(v.unwrap()["trace"]["requests"], 0);

    let bad = dir.path().join("bad.trace");
    std::fs::write(&bad, "0 0 x 8 1\n1 0 y 8 1\n").unwrap();
    let (out, _) = run(&["--format", "ssdsim", "--set", "trace.on_error=\"skip\""], &bad);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("2 malformed and skipped (not-a-number 2)"), "{}", stderr(&out));

    let empty = dir.path().join("empty.trace");
    std::fs::write(&empty, "").unwrap();
    let (out, _) = run(&[], &empty);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("empty.trace: the file is empty"), "{}", stderr(&out));
}

/// Item 4: transforms that change the workload are printed with their counts.
#[test]
fn workload_transforms_are_visible_in_text_and_json() {
    let dir = tempfile::tempdir().unwrap();
    // Tencent: whole-second timestamps, three volumes, one out of order, one far address.
    let text = "1538323200,1024,8,1,1063\n1538323200,2048,8,0,1064\n1538323201,8,8,1,1065\n\
                1538323200,16,8,1,1063\n1538323202,99999999999,8,1,1063\n";
    let path = dir.path().join("cbs.csv");
    std::fs::write(&path, text).unwrap();
    let (out, v) = run(&["--set", "trace.fold_devices=true"], &path);
    assert!(out.status.success(), "{}", stderr(&out));
    let t = &v.unwrap()["trace"];
    assert_eq!((t["folded_devices"].as_u64(), t["reordered"].as_u64()), (Some(3), Some(1)));
    assert_eq!((t["wrapped"].as_u64(), t["time_resolution_ns"].as_u64()), (Some(1), Some(1_000_000_000)));
    let s = stdout(&out);
    assert!(s.contains("wrapped: 1 of 5 requests"), "{s}");
    assert!(s.contains("folded devices: 3 devices/volumes merged into one address space, overlaid"), "{s}");
    assert!(s.contains("reordered: 1 requests"), "{s}");
    assert!(s.contains("coarse timestamps: timestamps are multiples of 1 s; up to 3 requests"), "{s}");
}

/// Item 10: xz traces run; archives and binaries are named, not quoted.
#[test]
fn xz_traces_run_and_non_traces_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let demo = std::fs::read(root().join("traces/demo.trace")).unwrap();
    let mut xz = liblzma::write::XzEncoder::new(Vec::new(), 3);
    xz.write_all(&demo).unwrap();
    let path = dir.path().join("demo.trace.xz");
    std::fs::write(&path, xz.finish().unwrap()).unwrap();
    let (out, v) = run(&[], &path);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(v.unwrap()["trace"]["requests"], 5000);

    let zip = dir.path().join("t.zip");
    std::fs::write(&zip, b"PK\x03\x04\x14\x00\x00\x00\x08\x00garbage").unwrap();
    let (out, _) = run(&[], &zip);
    assert!(stderr(&out).contains("t.zip: is a zip archive; unpack it first"), "{}", stderr(&out));
    let bin = dir.path().join("t.bin");
    std::fs::write(
        &bin,
        (0..4096u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect::<Vec<u8>>(),
    )
    .unwrap();
    let (out, _) = run(&["--format", "ssdsim"], &bin);
    assert!(stderr(&out).contains("t.bin: looks binary, not a text trace"), "{}", stderr(&out));
}

/// Item 12: an I/O or decompression error is printed once, not as `X: X`.
#[test]
fn decompression_errors_are_not_doubled() {
    let dir = tempfile::tempdir().unwrap();
    let mut gz = gzip(&std::fs::read(root().join("traces/demo.trace")).unwrap());
    let n = gz.len();
    gz[n / 2..n - 8].iter_mut().for_each(|b| *b = 0xff);
    let path = dir.path().join("bad.gz");
    std::fs::write(&path, gz).unwrap();
    for args in [&["run", "--preset", "mbm"][..], &["trace", "stats"]] {
        let out = lamina().args(args).arg(&path).output().unwrap();
        assert!(!out.status.success());
        let e = stderr(&out);
        let first = e.lines().next().unwrap_or("");
        let parts: Vec<&str> = first.split(": ").collect();
        let mut dedup = parts.clone();
        dedup.dedup();
        assert_eq!(parts, dedup, "doubled error text: {first}");
        assert!(first.contains("bad.gz"), "{first}");
    }
    let out = lamina().args(["trace", "stats"]).arg(dir.path().join("missing.trace")).output().unwrap();
    let first = stderr(&out).lines().next().unwrap_or("").to_owned();
    assert_eq!(first.matches("No such file").count(), 1, "{first}");
}

/// Item 15: a closed-loop generated trace says so; an open-loop run of it warns and
/// names the `--set`s, a closed-loop run does not.
#[test]
fn closed_loop_generated_traces_warn_when_replayed_open_loop() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("closed.trace");
    let out = lamina()
        .args(["trace", "gen", "--requests", "2000", "--closed-loop", "--closed-loop-depth", "16", "-o"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.starts_with("# lamina-trace-gen: host.mode=closed host.closed_loop_depth=16\n"),
        "{text:.80}"
    );
    let (out, v) = run(&[], &path);
    assert!(out.status.success(), "{}", stderr(&out));
    let v = v.unwrap();
    assert_eq!(v["trace"]["requests"], 2000);
    let w = v["trace"]["warnings"].as_array().unwrap();
    assert_eq!(w.len(), 1, "{w:?}");
    let w = w[0].as_str().unwrap();
    assert!(w.contains("--set host.closed_loop_depth=16 --set host.mode=closed"), "{w}");
    assert!(stdout(&out).contains("generated for closed-loop replay"), "{}", stdout(&out));
    let (out, v) = run(&["--set", "host.mode=\"closed\"", "--set", "host.closed_loop_depth=16"], &path);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(v.unwrap()["trace"]["warnings"].as_array().unwrap().is_empty());
}

/// New-user trial finding 1: an SSDsim trace whose offsets and sizes are all multiples
/// of 512 was read as FlashNet (bytes, not sectors) without a word. The guess now
/// warns on standard error, naming the file, both formats and `--format`; naming the
/// format silences it.
#[test]
fn an_ambiguous_format_detection_warns_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ss.trace");
    std::fs::write(&path, "0 0 1024 512 1\n100 0 2048 1024 0\n").unwrap();
    let out = lamina().args(["trace", "stats"]).arg(&path).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let e = stderr(&out);
    assert!(e.starts_with("warning: ") && e.contains("ss.trace: format detected as flashnet"), "{e}");
    assert!(e.contains("fit ssdsim just as well") && e.contains("--format ssdsim"), "{e}");
    let out = lamina().args(["trace", "stats", "--format", "ssdsim"]).arg(&path).output().unwrap();
    assert!(out.status.success() && stderr(&out).is_empty(), "{}", stderr(&out));
    assert!(stdout(&out).contains("average 256.0 KiB"), "{}", stdout(&out));
    let converted = dir.path().join("out.trace");
    let out = lamina().args(["trace", "convert"]).arg(&path).arg("-o").arg(&converted).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("format detected as flashnet"), "{}", stderr(&out));
    // A run reports it among its warnings.
    let (out, v) = run(&[], &path);
    assert!(out.status.success(), "{}", stderr(&out));
    let w = v.unwrap()["trace"]["warnings"].to_string();
    assert!(w.contains("format detected as flashnet"), "{w}");
}

/// New-user trial finding 2: `trace convert` dropped the `# lamina-trace-gen:` line of
/// a generated closed-loop trace, so the converted trace replayed open-loop without a
/// word. The line is carried over verbatim (a same-format conversion is byte-identical)
/// and a run of the converted trace still warns.
#[test]
fn convert_keeps_the_closed_loop_declaration() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("closed.trace");
    let out = lamina()
        .args(["trace", "gen", "--requests", "200", "--closed-loop", "--closed-loop-depth", "8", "-o"])
        .arg(&src)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let marker = "# lamina-trace-gen: host.mode=closed host.closed_loop_depth=8\n";
    for to in ["ssdsim", "mqsim", "systor17", "blkparse"] {
        let dst = dir.path().join(format!("out.{to}"));
        let out =
            lamina().args(["trace", "convert", "--to", to]).arg(&src).arg("-o").arg(&dst).output().unwrap();
        assert!(out.status.success(), "{to}: {}", stderr(&out));
        assert!(stderr(&out).is_empty(), "{to}: {}", stderr(&out));
        let text = std::fs::read_to_string(&dst).unwrap();
        assert!(text.starts_with(marker), "{to}: {text:.100}");
        if to == "ssdsim" {
            assert_eq!(text, std::fs::read_to_string(&src).unwrap(), "ssdsim → ssdsim is byte-identical");
        }
    }
    let (out, v) = run(&[], &dir.path().join("out.systor17"));
    assert!(out.status.success(), "{}", stderr(&out));
    let w = v.unwrap()["trace"]["warnings"].to_string();
    assert!(w.contains("--set host.closed_loop_depth=8 --set host.mode=closed"), "{w}");
    // A declaration after the first request cannot be carried over: say so.
    let late = dir.path().join("late.trace");
    std::fs::write(&late, format!("0 0 8 8 1\n{marker}0 0 16 8 0\n")).unwrap();
    let dst = dir.path().join("late.out");
    let out = lamina().args(["trace", "convert"]).arg(&late).arg("-o").arg(&dst).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let e = stderr(&out);
    assert!(e.contains("was not carried over") && e.contains("--set host.mode=closed"), "{e}");
}

/// New-user trial finding 3: `trace gen --rate` extremes wrote every arrival at t = 0
/// (or overflowed) with exit 0. Out-of-range numeric flags are now bad input (exit 2)
/// naming the flag, the value and the valid range, and write no file.
#[test]
fn gen_refuses_rates_and_counts_without_meaningful_arrivals() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("g.trace");
    for (args, says) in [
        (&["--rate", "1e12"][..], "--rate 1e12: 1000000000000 IOPS is above 1000000000 IOPS"),
        (&["--rate", "0.000000000000000001"], "is too low for 5 requests"),
        (&["--rate", "1e-18"], "valid: a rate from 9.619e-9 to 1000000000 IOPS for 5 requests"),
        (&["--rate", "fast"], "--rate fast: \"fast\" is not a positive number of IOPS"),
        (&["--closed-loop", "--closed-loop-depth", "0"], "--closed-loop-depth 0: "),
    ] {
        let out = lamina()
            .args(["trace", "gen", "--requests", "5"])
            .args(args)
            .arg("-o")
            .arg(&path)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(says), "{args:?}: {}", stderr(&out));
        assert!(!path.exists(), "{args:?}");
    }
    let out =
        lamina().args(["trace", "gen", "--requests", "0", "--rate", "10", "-o"]).arg(&path).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--requests 0: a trace needs at least one request"), "{}", stderr(&out));
    // The top of the range gives arrivals spread over time, not a burst at 0.
    let out = lamina()
        .args(["trace", "gen", "--requests", "1000", "--rate", "1e9", "-o"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let last: u64 = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .last()
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!((800..1200).contains(&last), "{last}");
}

/// New-user trial finding 4: a UTF-8 byte-order mark failed the first line; UTF-16
/// input (as Windows tools write it) was "no known layout" with a garbled quote. The
/// mark is skipped; UTF-16 is named, with the `iconv` command that converts it.
#[test]
fn a_utf8_bom_is_read_and_utf16_is_named_with_a_remedy() {
    let dir = tempfile::tempdir().unwrap();
    let bom = dir.path().join("bom.trace");
    std::fs::write(&bom, b"\xef\xbb\xbf0 0 8 8 1\n5 0 16 8 0\n").unwrap();
    let out = lamina().args(["trace", "stats"]).arg(&bom).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("requests    2\n") && stdout(&out).contains("ssdsim (detected)"),
        "{}",
        stdout(&out)
    );
    let text: Vec<u8> = "0 0 8 8 1\n5 0 16 8 0\n".bytes().flat_map(|b| [b, 0]).collect();
    for (name, bytes) in [("u16.trace", [&[0xff, 0xfe][..], &text].concat()), ("nobom.trace", text.clone())] {
        let path = dir.path().join(name);
        std::fs::write(&path, &bytes).unwrap();
        let out = lamina().args(["trace", "stats"]).arg(&path).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        let e = stderr(&out);
        assert!(e.contains(&format!("{name}: is UTF-16 text")), "{e}");
        assert!(e.contains("iconv -f UTF-16") && e.contains("-t UTF-8"), "{e}");
    }
}

/// A ustar member (header, data, padding to 512 bytes).
fn tar_member(name: &str, body: &[u8]) -> Vec<u8> {
    let mut h = [0u8; 512];
    h[..name.len()].copy_from_slice(name.as_bytes());
    h[100..107].copy_from_slice(b"0000644");
    h[124..135].copy_from_slice(format!("{:011o}", body.len()).as_bytes());
    h[136..147].copy_from_slice(b"00000000000");
    h[156] = b'0';
    h[257..263].copy_from_slice(b"ustar\0");
    h[263..265].copy_from_slice(b"00");
    h[148..156].copy_from_slice(b"        ");
    let sum: u32 = h.iter().map(|&b| b as u32).sum();
    h[148..155].copy_from_slice(format!("{sum:06o}\0").as_bytes());
    let mut out = h.to_vec();
    out.extend_from_slice(body);
    out.resize(out.len().div_ceil(512) * 512, 0);
    out
}

/// New-user trial finding 5: a tar archive cut short (`head -c N t.tar`) failed with
/// "failed to fill whole buffer". Cut outside a member's data it is bad input (exit 2)
/// saying the archive is truncated or corrupt, where, and what to do; cut inside the
/// data it is read up to the cut, and the line the cut split is dropped with a warning
/// instead of failing as a malformed line.
#[test]
fn a_truncated_tar_is_named_and_its_cut_line_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let body: String = (0..100).map(|i| format!("{} 0 {} 8 1\n", i * 1000, i * 8)).collect();
    let mut tar = tar_member("a.trace", body.as_bytes());
    tar.extend(tar_member("b.trace", body.as_bytes()));
    let path = dir.path().join("cut.tar");
    let data_end = 512 + body.len();
    for (cut, says) in [
        (data_end + 10, "in the padding after member \"a.trace\""),
        (tar.len() / 2 + 100, "inside the header at byte"),
    ] {
        std::fs::write(&path, &tar[..cut]).unwrap();
        let out = lamina().args(["trace", "stats"]).arg(&path).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{cut}: {}", stderr(&out));
        let e = stderr(&out);
        assert!(
            e.contains("cut.tar: the tar archive is truncated or corrupt: it ends") && e.contains(says),
            "{e}"
        );
        assert!(e.contains("tar tvf") && !e.contains("failed to fill"), "{e}");
    }
    // Cut inside line 51 of the first member: 50 requests and two warnings.
    let line_51 = body.lines().take(50).map(|l| l.len() + 1).sum::<usize>();
    std::fs::write(&path, &tar[..512 + line_51 + 6]).unwrap();
    let out = lamina().args(["trace", "stats", "--json"]).arg(&path).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["stats"]["requests"], 50);
    let w = v["summary"]["warnings"].to_string();
    assert!(
        w.contains("cut.tar:a.trace:51: field") && w.contains("cut off where the tar archive ends"),
        "{w}"
    );
    assert!(w.contains("tar member \\\"a.trace\\\" is truncated"), "{w}");
}

/// Regression (new-user trial): in an archive of several trace files, errors numbered
/// lines across the joined members (`t.tar:5:` for line 2 of the second file). They
/// name the member and count its own lines, as `tar xf` would give the file: a bad
/// field, a line skipped under `--on-error skip`, an outlier, and an out-of-order
/// request whose earlier request is in the member before (named too).
#[test]
fn errors_in_a_tar_archive_name_the_member_and_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let a = b"0 0 1 8 1\n10 0 2 8 1\n20 0 3 8 1"; // no final newline
    let archive = |b: &[u8]| {
        let mut tar = tar_member("a.trace", a);
        tar.extend(tar_member("b.trace", b));
        tar.extend([0u8; 1024]);
        let path = dir.path().join("t.tar");
        std::fs::write(&path, tar).unwrap();
        path
    };
    let path = archive(b"30 0 1 8 1\n# a comment\n40 0 x 8 1\n");
    let out = lamina().args(["trace", "stats"]).arg(&path).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("t.tar:b.trace:3: field `lsn`: \"x\" is not a number"), "{}", stderr(&out));
    let out = lamina().args(["trace", "stats", "--on-error", "skip", "--json"]).arg(&path).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let first = v["summary"]["first_errors"][0].as_str().unwrap();
    assert!(first.ends_with("/t.tar:b.trace:3: field `lsn`: \"x\" is not a number"), "{first}");
    // An outlier warning names the member too.
    let path = archive(b"30 0 1 8 1\n1600000000000000000 0 2 8 1\n");
    let out = lamina().args(["trace", "stats"]).arg(&path).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("before line 2 of b.trace (+50.7 years)"), "{}", stdout(&out));
    let path = archive(b"5 0 1 8 1\n");
    let out = lamina().args(["trace", "stats", "--reorder-window", "0"]).arg(&path).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out)
            .contains("t.tar:b.trace:1: field `time`: \"5\" is earlier than \"20\" on line 3 of a.trace,"),
        "{}",
        stderr(&out)
    );
}

/// `lamina trace stats ARGS… FILE` on `text` written to FILE (named `name`); the output.
fn trace_stats(args: &[&str], name: &str, text: &str) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    lamina().current_dir(dir.path()).args(["trace", "stats"]).args(args).arg(name).output().unwrap()
}

/// New-user trial finding 2: `--outliers cut` named the line of the request after the
/// one it cut when the bogus timestamp was the first (an early 0 in an epoch-stamped
/// trace). Here a comment, a blank line and a header come first, so the file line (4)
/// differs from the request's number (1) and from the next request's line (5).
#[test]
fn outliers_cut_names_the_file_line_of_the_request_it_cuts() {
    let mut text =
        String::from("# epoch-stamped, one bogus first timestamp\n\ntime dev lsn size op\n0 0 9 8 1\n");
    for i in 0..100u64 {
        text += &format!("{} 0 {i} 8 1\n", 1_500_000_000_000_000_000 + i * 1000);
    }
    let out = trace_stats(&["--outliers", "cut", "--json"], "early.ascii", &text);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["stats"]["requests"], 100);
    assert_eq!(v["summary"]["outlier_lines"][0][0], 4, "{}", v["summary"]);
    let w = v["summary"]["warnings"][0].as_str().unwrap();
    assert!(
        w.contains("the first request, line 4, 47.5 years before the next; the requests blamed were dropped"),
        "{w}"
    );
    // A late bogus timestamp, after a comment: its own line (106), not the count of
    // requests before it (101).
    text += "# the end\n1600000000000000000 0 7 8 1\n";
    let out = trace_stats(&["--outliers", "cut"], "both.ascii", &text);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("line 4, 47.5 years before the next; before line 106 (+3.2 years);"),
        "{}",
        stdout(&out)
    );
}

/// Regression (new-user trial): `--outliers cut` with two or three bogus early
/// timestamps (0, 1000, 2000 ns before an epoch-stamped trace) kept those and cut the
/// whole real trace, with only a warning. Looking ahead past the jump, the group before
/// it is the smaller side: it is cut, and the run replays the trace, 300 requests in
/// 0.3 s. A late bogus timestamp at the end is still the one cut, and 1024 requests on
/// each side of a jump are both kept (the look-ahead's bound): `cut` drops nothing.
#[test]
fn outliers_cut_drops_a_group_of_early_bogus_timestamps_not_the_trace() {
    const EPOCH: u64 = 1_500_000_000_000_000_000;
    let dir = tempfile::tempdir().unwrap();
    let write_temp = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    let real = |n: u64, from: u64| -> String {
        (0..n).map(|i| format!("{} 0 {i} 8 1\n", from + i * 1_000_000)).collect()
    };
    for bogus in [2u64, 3] {
        let early: String = (0..bogus).map(|i| format!("{} 0 9 8 1\n", i * 1000)).collect();
        let text = early + &real(300, EPOCH);
        let (out, v) = run(&["--outliers", "cut"], &write_temp("early.ascii", &text));
        assert!(out.status.success(), "{}", stderr(&out));
        let v = v.unwrap();
        assert_eq!(
            (v["trace"]["requests"].as_u64(), v["trace"]["outliers"].as_u64()),
            (Some(300), Some(bogus))
        );
        assert!(v["sim_time_ns"].as_u64().unwrap() < 1_000_000_000, "{}", v["sim_time_ns"]);
        let w = v["trace"]["warnings"][0].as_str().unwrap();
        assert!(w.contains("the first requests, line 1, line 2") && w.contains("before the rest"), "{w}");
    }
    let late = real(300, 0) + "1600000000000000000 0 9 8 1\n";
    let (out, v) = run(&["--outliers", "cut"], &write_temp("late.ascii", &late));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(v.unwrap()["trace"]["requests"], 300);
    let joined = real(1024, 0) + &real(1024, EPOCH);
    let out = trace_stats(&["--outliers", "cut", "--json"], "joined.ascii", &joined);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["stats"]["requests"], 2048);
    let w = v["summary"]["warnings"][0].as_str().unwrap();
    assert!(
        w.contains("before line 1025 (+") && w.contains("kept: 1024 or more requests on each side"),
        "{w}"
    );
}

/// New-user trial finding 1: in sector formats an error about an offset or size
/// quoted the computed bytes (`field `offset`: "512000"`) instead of the field as the
/// file writes it, so the user could not find it.
#[test]
fn sector_address_errors_quote_the_field_as_written() {
    let out = trace_stats(
        &["--capacity", "100KiB", "--beyond-capacity", "reject"],
        "t.ascii",
        "0 0 100 8 1\n10 0 1000 8 1\n",
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "error: t.ascii:2: field `lsn`: \"1000\" lies beyond the simulated logical capacity (= 512000 bytes; \
             + the request's 4096 bytes ends beyond the capacity of 102400 bytes; beyond_capacity = \"reject\" \
             (--beyond-capacity wrap wraps it modulo the capacity))"
        ),
        "{}",
        stderr(&out)
    );
    let blk = "8,0 0 1 0.1 1 Q R 1 + 8 [a]\n8,0 0 2 0.2 1 Q W 36028797018963967 + 1 [a]\n";
    let out = trace_stats(&["--align", "4096"], "t.blk", blk);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "t.blk:2: field `sector`: \"36028797018963967\" is too large (= 18446744073709551104 bytes; \
             + the request's 512 bytes ends beyond 2^64 bytes)"
        ),
        "{}",
        stderr(&out)
    );
}

/// An empirical size histogram's errors named the line but not the file.
#[test]
fn a_bad_size_histogram_names_its_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("h.txt"), "# sizes\n\n4k 70\n8k x\n").unwrap();
    let out = lamina()
        .current_dir(dir.path())
        .args([
            "trace",
            "gen",
            "--requests",
            "10",
            "--rate",
            "100",
            "--sizes",
            "empirical:h.txt",
            "-o",
            "g.trace",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("h.txt: histogram line 4: weight \"x\" is not an integer"),
        "{}",
        stderr(&out)
    );
}
