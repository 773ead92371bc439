//! End-to-end tests of `lamina run` and `lamina presets` through the real binary.

use std::path::PathBuf;
use std::process::Command;

#[path = "support/shared.rs"]
mod shared;

fn lamina() -> Command {
    Command::new(env!("CARGO_BIN_EXE_lamina"))
}

fn root() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

#[test]
fn run_demo_trace_prints_report_and_writes_identical_json_twice() {
    let dir = tempfile::tempdir().unwrap();
    let demo = root().join("traces/demo.trace");
    let mut outs = Vec::new();
    for i in 0..2 {
        let json = dir.path().join(format!("r{i}.json"));
        let out = lamina()
            .args(["run", "--preset", "mbm", "--seed", "3", "--json"])
            .arg(&json)
            .arg(&demo)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains("p99.999") && text.contains("WAF"), "{text}");
        outs.push(std::fs::read_to_string(&json).unwrap());
    }
    assert_eq!(outs[0], outs[1], "same config + trace + seed must give identical JSON");
    let v: serde_json::Value = serde_json::from_str(&outs[0]).unwrap();
    for k in ["read", "write", "all"] {
        for f in ["count", "mean_ns", "p50_ns", "p99_ns", "p99_9_ns", "p99_99_ns", "p99_999_ns", "max_ns"] {
            assert!(v[k][f].is_number(), "{k}.{f} missing");
        }
    }
    for k in ["iops", "bandwidth_mib_s", "waf", "seed"] {
        assert!(v[k].is_number(), "{k} missing");
    }
    assert!(v["gc"].is_object() && v["erases"].is_object() && v["config"].is_object());
    assert_eq!(v["seed"], 3);
    assert!(v["lamina_version"].is_string());
    assert!(v["trace"]["digest"].as_str().unwrap().starts_with("xxh3-64:"));
    assert_eq!(v["config"]["nand"]["geometry"]["channels"], 4);
}

#[test]
fn unknown_config_key_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("bad.toml");
    std::fs::write(&cfg, "preset = \"mbm\"\n[host]\nqueue_dpeth = 4\n").unwrap();
    let out =
        lamina().arg("run").arg("--config").arg(&cfg).arg(root().join("traces/demo.trace")).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("queue_dpeth"), "{err}");
    let out = lamina()
        .args(["run", "--preset", "mbm", "--set", "nand.geometry.pages_per_block=0"])
        .arg(root().join("traces/demo.trace"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("pages_per_block"), "{err}");
}

#[test]
fn malformed_trace_line_is_an_error_naming_file_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("bad.ascii");
    std::fs::write(&t, "0 0 100 8 1\n1000 0 200 eight 0\n").unwrap();
    let out = lamina().args(["run", "--preset", "mbm", "--format", "ssdsim"]).arg(&t).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.ascii:2") && err.contains("eight"), "{err}");
}

#[test]
fn presets_lists_every_preset_with_its_source() {
    let out = lamina().arg("presets").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for p in ["mbm", "lacr", "soml-tlc64", "die-binding-4x2", "die-binding-4x4", "pen", "mqsim-default"] {
        assert!(text.contains(p), "{p} missing");
    }
    assert!(text.contains("Table I") && text.contains("source:"));
}

#[test]
fn verify_and_preconditioning_run_end_to_end() {
    let out = lamina()
        .args([
            "run",
            "--preset",
            "die-binding-4x2",
            "--verify",
            "--set",
            "nand.geometry.blocks_per_plane=32",
            "--set",
            "precondition.fill_fraction=0.9",
        ])
        .arg(root().join("traces/demo.trace"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(!text.contains("GC jobs 0 "), "preconditioned tiny device must GC: {text}");
}

/// A trace of 5000 requests in time order, then one at time 0: out of order by more than
/// the default reorder window of 4096.
fn disordered_trace(dir: &std::path::Path) -> PathBuf {
    let mut text: String =
        (0..5000u64).map(|i| format!("{} 0 {} 8 {}\n", 1000 * (i + 1), i * 8, i % 2)).collect();
    text.push_str("0 0 0 8 0\n");
    let t = dir.join("disordered.trace");
    std::fs::write(&t, text).unwrap();
    t
}

/// Item 9: the reorder-window error's remedy used to name a key `run` had no flag for.
/// Follow the advice exactly as printed — the flag, then the key — and the run succeeds.
#[test]
fn reorder_window_error_advice_can_be_followed() {
    let dir = tempfile::tempdir().unwrap();
    let t = disordered_trace(dir.path());
    let out = lamina().args(["run", "--preset", "mbm"]).arg(&t).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "bad trace content is bad input");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("disordered.trace:5001") && err.contains("reorder window of 4096"), "{err}");
    let flag = err.split_whitespace().find(|w| w.starts_with("--")).expect("the error names a flag");
    assert_eq!(flag, "--reorder-window");
    // The first back-quoted word is the timestamp field's name; the key comes after it.
    let key =
        err.split('`').skip(1).step_by(2).find(|w| w.starts_with("trace.")).expect("the error names a key");
    assert_eq!(key, "trace.reorder_window");
    let out = lamina().args(["run", "--preset", "mbm", flag, "8192"]).arg(&t).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("5001 requests"));
    let out = lamina()
        .args(["run", "--preset", "mbm", "-q", "--set"])
        .arg(format!("{key}=8192"))
        .arg(&t)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// The trace flags of `lamina run --help` under its "Trace options" heading.
fn trace_flags(args: &[&str]) -> Vec<String> {
    let out = lamina().args(args).arg("--help").output().unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    let section = help.split("Trace options").nth(1).unwrap_or_else(|| panic!("no trace options: {help}"));
    let section = section.split("\n\n").next().unwrap();
    section
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("--"))
        .map(|l| l.split([' ', '<']).next().unwrap().to_owned())
        .collect()
}

/// Item 9: `run` has every trace flag `trace stats` has (one shared definition).
#[test]
fn run_has_the_trace_flags_of_trace_stats() {
    let stats = trace_flags(&["trace", "stats"]);
    let run = trace_flags(&["run"]);
    for f in [
        "format",
        "generic",
        "reorder-window",
        "device",
        "fold-devices",
        "beyond-capacity",
        "skip",
        "limit",
        "align",
        "on-error",
        "time-scale",
    ] {
        assert!(stats.contains(&f.to_owned()), "stats lacks --{f}: {stats:?}");
    }
    assert_eq!(run, stats);
    // Item 20: the enum-valued flags list their values.
    let help = String::from_utf8(lamina().args(["run", "--help"]).output().unwrap().stdout).unwrap();
    assert!(help.contains("[possible values: ssdsim, mqsim, msr, spc, flashnet, flashnet-profile, systor17, tencent, fiu, blkparse, generic]"), "{help}");
    assert!(help.contains("[possible values: wrap, reject]"), "{help}");
}

/// Item 9: a generic column mapping reaches `run` by flag, by `--set trace.generic="…"`
/// (rejected before: the key only took a table) and by a config file's compact string.
#[test]
fn generic_mapping_by_flag_set_or_config() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("g.csv");
    let rows: String = (0..300u64)
        .map(|i| {
            format!("{}.{:03},{},{},4096\n", i / 1000, i % 1000, if i % 3 == 0 { "W" } else { "R" }, i * 4096)
        })
        .collect();
    std::fs::write(&t, format!("t,op,off,len\n{rows}")).unwrap();
    let spec = "delim=comma skip=1 time=1:s op=2:R/W offset=3 size=4";
    let cfg = dir.path().join("g.toml");
    std::fs::write(&cfg, format!("preset = \"mbm\"\n[trace]\nformat = \"generic\"\ngeneric = \"{spec}\"\n"))
        .unwrap();
    let ways: [Vec<String>; 3] = [
        vec![
            "--preset".into(),
            "mbm".into(),
            "--format".into(),
            "generic".into(),
            "--generic".into(),
            spec.into(),
        ],
        vec![
            "--preset".into(),
            "mbm".into(),
            "--set".into(),
            "trace.format=generic".into(),
            "--set".into(),
            format!("trace.generic=\"{spec}\""),
        ],
        vec!["--config".into(), cfg.display().to_string()],
    ];
    let mut jsons = Vec::new();
    for (i, w) in ways.iter().enumerate() {
        let json = dir.path().join(format!("{i}.json"));
        let out = lamina().arg("run").args(w).arg("-q").arg("--json").arg(&json).arg(&t).output().unwrap();
        assert!(out.status.success(), "{w:?}: {}", String::from_utf8_lossy(&out.stderr));
        let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        assert_eq!(v["trace"]["requests"], 300);
        jsons.push(v["config"]["trace"].clone());
    }
    assert_eq!(jsons[0], jsons[1]);
    assert_eq!(jsons[0], jsons[2]);
}

/// Item 8: the JSON path is checked before the trace is even opened (here the trace is
/// bad too: the output error must come first), with the bad-input exit code.
#[test]
fn json_path_is_checked_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let t = disordered_trace(dir.path());
    let json = dir.path().join("no/such/dir/r.json");
    let out = lamina().args(["run", "--preset", "mbm", "--json"]).arg(&json).arg(&t).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no/such/dir") && err.contains("does not exist") && !err.contains("reorder"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
    // A directory in place of the file, likewise.
    let out = lamina().args(["run", "--preset", "mbm", "--json"]).arg(dir.path()).arg(&t).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is a directory"));
}

/// Item 8: a JSON write that fails after the run (a full disk: /dev/full) still prints the
/// text summary, then the error, and exits 1 (a run-time I/O failure).
#[cfg(target_os = "linux")]
#[test]
fn failed_json_write_does_not_hide_the_summary() {
    let out = lamina()
        .args(["run", "--preset", "mbm", "--json", "/dev/full"])
        .arg(root().join("traces/demo.trace"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("p99.999") && text.contains("WAF"), "{text}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("/dev/full") && err.contains("No space left"), "{err}");
}

/// Item 14: no preset and no [nand] section runs on the documented default device, and
/// says so on stderr and in the report's config.
#[test]
fn the_summary_names_where_the_config_came_from() {
    // Issue #8 item 16: the summary names the device and its config source.
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("my.toml");
    std::fs::write(&cfg, "[host]\nqueue_depth = 8\n").unwrap();
    let out = lamina()
        .args(["run", "--preset", "mbm", "--config"])
        .arg(&cfg)
        .args(["--seed", "3", "--set", "buffer.size_bytes=1048576", "--reorder-window", "64"])
        .arg(root().join("traces/demo.trace"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let want = format!(
        "  config: preset mbm < file {} < --seed 3 < trace flag trace.reorder_window=64 < --set buffer.size_bytes=1048576",
        cfg.display()
    );
    assert!(text.lines().any(|l| l == want), "{text}");
    assert!(
        text.contains("device mbm: 4 ch × 2 chips") && text.contains("host open loop, queue depth 8"),
        "{text}"
    );
}

#[test]
fn no_device_runs_on_the_default_device() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let out = lamina()
        .args(["run", "-q", "--json"])
        .arg(&json)
        .arg(root().join("traces/demo.trace"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("default device mqsim-default"), "{err}");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["config"]["preset"], "mqsim-default");
    assert_eq!(v["config"]["nand"]["geometry"]["channels"], 8);
    assert_eq!(v["config_sources"], serde_json::json!(["default preset mqsim-default"]));
    // A config that names the device gets no default and no note.
    let cfg = dir.path().join("c.toml");
    std::fs::write(&cfg, "preset = \"mbm\"\n").unwrap();
    let out = lamina()
        .args(["run", "-q", "--config"])
        .arg(&cfg)
        .arg(root().join("traces/demo.trace"))
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// Item 13: piped stderr gets no progress output (and a terminal gets a bar, below).
#[test]
fn no_progress_output_when_stderr_is_piped() {
    let dir = tempfile::tempdir().unwrap();
    let t = disordered_trace(dir.path());
    let out =
        lamina().args(["run", "--preset", "mbm", "-q", "--reorder-window", "8192"]).arg(&t).output().unwrap();
    assert!(out.status.success());
    assert!(out.stderr.is_empty(), "{:?}", String::from_utf8_lossy(&out.stderr));
}

/// Item 13: on a terminal (a pseudo-terminal from util-linux `script`), `run` draws a
/// progress bar with requests replayed and simulated time on stderr.
#[cfg(target_os = "linux")]
#[test]
fn progress_bar_on_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    // Long enough (~0.5 s) for the bar to be drawn between its rate-limited frames.
    let t = dir.path().join("long.trace");
    let text: String = (0..300_000u64)
        .map(|i| format!("{} 0 {} 8 {}\n", 20_000 * i, (i * 7919 % 1_000_000) * 8, i % 2))
        .collect();
    std::fs::write(&t, text).unwrap();
    let cmd = format!("{} run --preset mbm -q {}", env!("CARGO_BIN_EXE_lamina"), t.display());
    let out = Command::new("script").args(["-qec", &cmd, "/dev/null"]).output().expect("util-linux script");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    let screen = String::from_utf8_lossy(&out.stdout);
    assert!(screen.contains(" requests, sim time ") && screen.contains("eta"), "{screen}");
}

/// Item 21: verification failures, bad input and run-time failures have distinct exit
/// codes, listed in `--help`.
#[test]
fn exit_codes_are_distinct_and_documented() {
    let out =
        lamina().args(["run", "--preset", "nope"]).arg(root().join("traces/demo.trace")).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "unknown preset");
    let out = lamina().args(["run", "--preset", "mbm", "/no/such/trace"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "missing trace");
    let out = lamina().args(["run", "--bogus-flag"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "clap usage error");
    for cmd in [&["--help"][..], &["run", "--help"][..], &["sweep", "--help"][..]] {
        let help = String::from_utf8(lamina().args(cmd).output().unwrap().stdout).unwrap();
        assert!(help.contains("Exit codes:") && help.contains("3  verification failure"), "{cmd:?}: {help}");
    }
}

/// A tiny trace on one die of `mbm` (mbm-ftl Table I: 70 ns command, 10 ns/B, tR 78 µs,
/// tPROG 1.3 ms), in the generic format: three page writes at 0, a read at 10 ms, a
/// trim at 20 ms.
fn tiny_log_run(dir: &std::path::Path, log: &std::path::Path) -> std::process::Output {
    let trace = dir.join("tiny.txt");
    std::fs::write(
        &trace,
        "0 W 8192 8192\n0 W 16384 8192\n0 W 24576 8192\n10000000 R 40960 8192\n20000000 D 0 8192\n",
    )
    .unwrap();
    lamina()
        .args(["run", "--preset", "mbm", "--quiet", "--format", "generic"])
        .args(["--generic", "time=1:ns op=2:R/W/D offset=3:byte size=4:byte"])
        .args(["--set", "nand.geometry.channels=1", "--set", "nand.geometry.chips_per_channel=1"])
        .args(["--set", "nand.geometry.dies_per_chip=1", "--set", "nand.geometry.planes_per_die=1"])
        .args(["--set", "nand.suspension.program=false", "--set", "nand.suspension.erase=false"])
        .arg("--latency-log")
        .arg(log)
        .arg(&trace)
        .output()
        .unwrap()
}

/// Issue #9 item 6: `--latency-log` writes one CSV line per request, in completion
/// order, with values equal to the closed form.
#[test]
fn latency_log_has_one_hand_computed_line_per_request() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("lat.csv");
    let out = tiny_log_run(dir.path(), &log);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // One page program: command + transfer in + tPROG; the die runs one at a time, so
    // the writes complete at 1, 2 and 3 programs and wait 0, 1 and 2. The read (of a
    // prefilled page) finds the die idle: command + tR + transfer out. A trim is instant.
    const PROG: u64 = 70 + 8192 * 10 + 1_300_000;
    const READ: u64 = 70 + 78_000 + 8192 * 10;
    let want = format!(
        "arrival_ns,op,bytes,lpn,response_ns,wait_ns\n\
         0,write,8192,1,{},0\n\
         0,write,8192,2,{},{}\n\
         0,write,8192,3,{},{}\n\
         10000000,read,8192,5,{READ},0\n\
         20000000,trim,8192,0,0,0\n",
        PROG,
        2 * PROG,
        PROG,
        3 * PROG,
        2 * PROG
    );
    assert_eq!(std::fs::read_to_string(&log).unwrap(), want);
    // Nothing else in the directory: the log was written through a temporary file.
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names.len(), 2, "{names:?}");
}

#[test]
fn latency_log_path_errors_are_clear() {
    let dir = tempfile::tempdir().unwrap();
    // An unusable path is refused before the run, as bad input.
    let out = tiny_log_run(dir.path(), &dir.path().join("no/such/dir/lat.csv"));
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no/such/dir/lat.csv") && err.contains("does not exist"), "{err}");
    // A write error during the run (a full disk) ends it with an error naming the file.
    let out = tiny_log_run(dir.path(), std::path::Path::new("/dev/full"));
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("latency log /dev/full") && err.contains("No space left"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// `stats.percentiles` reaches the text and JSON reports; bad lists are config errors
/// naming the key.
#[test]
fn percentile_list_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let out = lamina()
        .args(["run", "--preset", "mbm", "--set", "stats.percentiles=[95, 99.5, 99.999]", "--json"])
        .arg(&json)
        .arg(root().join("traces/demo.trace"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let header = text.lines().find(|l| l.starts_with("response time")).unwrap();
    assert!(header.contains(" p95 ") && header.contains("p99.5") && !header.contains("p50"), "{header}");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(v["read"]["p99_5_ns"].is_u64() && v["read"]["p50_ns"].is_null());
    for bad in ["[]", "[0]", "[101]", "[99, 95]", "[99, 99]", "nan"] {
        let out = lamina()
            .args(["run", "--preset", "mbm", "--set", &format!("stats.percentiles={bad}")])
            .arg(root().join("traces/demo.trace"))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("stats.percentiles"), "{bad}: {err}");
    }
}

/// The bundled demo trace and, when the shared samples are present, `shared` (paths
/// under them); `test` names the caller in the SKIP line.
fn demo_and_shared(test: &str, shared: &[&str]) -> Vec<PathBuf> {
    let mut traces = vec![root().join("traces/demo.trace")];
    if let Some(dir) = shared::shared_traces(test) {
        traces.extend(shared.iter().map(|p| dir.join(p)));
    }
    traces
}

/// GFTL end to end on the `pen` preset cut to 32 blocks per plane, filled: the demo
/// trace and the shared samples replay with `--verify` (every read returns the data last
/// written) through thousands of partial-GC steps and cleanings, every step accepted by
/// the device model, with GFTL's one step per write and with a reservation of a whole
/// cleaning per write.
#[test]
fn gftl_runs_verify_clean_through_partial_steps() {
    let traces = demo_and_shared(
        "gftl_runs_verify_clean_through_partial_steps",
        &["mqsim-ascii/tpcc.trace", "msr-csv/hm_0-window1k.csv"],
    );
    let dir = tempfile::tempdir().unwrap();
    for (trace, steps) in traces.iter().flat_map(|t| [(t, 1), (t, 65)]) {
        let json = dir.path().join("gftl.json");
        let out = lamina()
            .args(["run", "--preset", "pen", "--verify", "--json"])
            .arg(&json)
            .args(["--set", "ftl.kind=\"gftl\"", "--set", &format!("ftl.gftl_steps_per_write={steps}")])
            .args(["--set", "nand.geometry.blocks_per_plane=32", "--set", "precondition.fill_fraction=1.0"])
            .arg(trace)
            .output()
            .unwrap();
        let name = format!("{} (steps {steps})", trace.display());
        assert!(out.status.success(), "{name}: {}", String::from_utf8_lossy(&out.stderr));
        assert!(String::from_utf8(out.stdout).unwrap().contains("GFTL: cleanings"), "{name}");
        let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let g = &v["gftl"];
        let n = |k: &str| g[k].as_u64().unwrap_or_else(|| panic!("{name}: gftl.{k} missing: {g}"));
        assert_eq!(n("step_copies"), 9, "{name}: the pen chip's floor(t_erase / (t_read + t_prog))");
        assert!(n("cleanings") > 100 && n("steps") > 0, "{name}: {g}");
        assert_eq!(v["gc"]["jobs"].as_u64().unwrap(), n("steps") + n("forced_jobs"), "{name}");
        assert!(v["pen"].is_null(), "{name}");
    }
}

/// PEN end to end: NFTL and the superblock FTL with `ftl.pen = true` on the `pen` preset
/// cut to 32 blocks per plane, filled, replay the bundled demo trace and the shared `tpcc` sample with
/// `--verify` (every read returns the data last written) through thousands of merges,
/// most of them M-Merges with partial erases, every step accepted by the device model.
#[test]
fn pen_nftl_runs_verify_clean_with_thousands_of_merges() {
    let dir = tempfile::tempdir().unwrap();
    let traces =
        demo_and_shared("pen_nftl_runs_verify_clean_with_thousands_of_merges", &["mqsim-ascii/tpcc.trace"]);
    for (trace, kind) in traces.iter().flat_map(|t| [(t, "nftl"), (t, "superblock")]) {
        let json = dir.path().join("pen.json");
        let out = lamina()
            .args(["run", "--preset", "pen", "--verify", "--json"])
            .arg(&json)
            .args(["--set", &format!("ftl.kind=\"{kind}\""), "--set", "ftl.pen=true"])
            .args(["--set", "nand.geometry.blocks_per_plane=32", "--set", "precondition.fill_fraction=1.0"])
            .arg(trace)
            .output()
            .unwrap();
        let name = format!("{} ({kind})", trace.display());
        assert!(out.status.success(), "{name}: {}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains("PEN: M-Merges"), "{name}: {text}");
        let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let pen = &v["pen"];
        let n = |k: &str| pen[k].as_u64().unwrap_or_else(|| panic!("{name}: pen.{k} missing: {pen}"));
        assert!(n("m_merges") + n("classic_merges") > 1000, "{name}: {pen}");
        assert!(n("m_merges") > n("classic_merges") && n("wear_merges") > 0, "{name}: {pen}");
        let by_level: u64 =
            pen["partial_erases_by_level"].as_array().unwrap().iter().map(|x| x.as_u64().unwrap()).sum();
        assert_eq!(by_level, v["erases"]["partial"].as_u64().unwrap(), "{name}");
        assert!(by_level >= n("m_merges") && n("disturb_restores") > 0, "{name}: {pen}");
        assert!(pen["copies_saved"].as_i64().unwrap() > 0, "{name}: {pen}");
        assert_eq!(v["gc"]["jobs"].as_u64().unwrap(), n("m_merges") + n("classic_merges"), "{name}");
        // Partial erases wear the pages they cover, not whole blocks.
        assert_ne!(v["erases"]["per_page"], v["erases"]["per_block"], "{name}");
    }
    // Without PEN the report's `pen` is null and the text has no PEN line.
    let out = lamina()
        .args(["run", "--preset", "pen", "--json"])
        .arg(dir.path().join("plain.json"))
        .args(["--set", "ftl.kind=\"nftl\"", "--set", "nand.geometry.blocks_per_plane=32"])
        .arg(root().join("traces/demo.trace"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!String::from_utf8(out.stdout).unwrap().contains("PEN"));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("plain.json")).unwrap()).unwrap();
    assert!(v["pen"].is_null() && v["config"]["ftl"].get("pen").is_none(), "{}", v["config"]["ftl"]);
    // PEN on a device without partial erase, or under the page FTL: errors naming the key.
    for (preset, kind) in [("mbm", "nftl"), ("pen", "page")] {
        let out = lamina()
            .args([
                "run",
                "--preset",
                preset,
                "--set",
                &format!("ftl.kind=\"{kind}\""),
                "--set",
                "ftl.pen=true",
            ])
            .arg(root().join("traces/demo.trace"))
            .output()
            .unwrap();
        assert!(!out.status.success(), "{preset}/{kind}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("ftl.pen"), "{preset}/{kind}: {err}");
    }
}

/// New-user trial: `run -q` dropped the report's warnings with the summary, so a quiet
/// run (`-q --json r.json`, or a script reading stdout) never saw that a figure needs
/// care; they were only in the JSON. Now each goes to stderr as one `warning: …` line —
/// the run's (a seed nothing draws from), then the trace's (a closed-loop trace replayed
/// open-loop) — while stdout stays what `-q` makes it: empty, or the JSON alone.
#[test]
fn quiet_run_prints_every_report_warning_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("closed.trace");
    std::fs::write(
        &t,
        "# lamina-trace-gen: host.mode=closed host.closed_loop_depth=8\n0 0 8 8 1\n0 0 16 8 0\n",
    )
    .unwrap();
    let quiet = |extra: &[&str]| {
        let out = lamina()
            .args(["run", "-q", "--preset", "mbm", "--seed", "5", "--format", "ssdsim"])
            .args(extra)
            .arg(&t)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        (String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap())
    };
    let (stdout, stderr) = quiet(&[]);
    assert_eq!(stdout, "", "-q prints nothing on stdout");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 2, "one line per warning:\n{stderr}");
    assert!(lines[0].starts_with("warning: seed 5 has no effect"), "{stderr}");
    assert!(
        lines[1].starts_with("warning: ")
            && lines[1].contains("closed.trace: the trace was generated for closed-loop replay"),
        "{stderr}"
    );
    assert!(lines[1].contains("--set host.mode=closed"), "{stderr}");
    // With the JSON on stdout, stdout is the JSON alone and stderr the same warnings,
    // which are the JSON's.
    let (stdout, stderr_json) = quiet(&["--json", "-"]);
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let mut warnings: Vec<String> = Vec::new();
    for w in v["warnings"].as_array().unwrap().iter().chain(v["trace"]["warnings"].as_array().unwrap()) {
        warnings.push(format!("warning: {}", w.as_str().unwrap()));
    }
    assert_eq!(stderr_json.lines().collect::<Vec<_>>(), warnings);
    assert_eq!(stderr_json, stderr);
    // Without -q the warnings are in the summary on stdout, not repeated on stderr.
    let out = lamina()
        .args(["run", "--preset", "mbm", "--seed", "5", "--format", "ssdsim"])
        .arg(&t)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8(out.stdout).unwrap().contains("warning: seed 5 has no effect"));
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
}
