//! End-to-end tests of `lamina sweep` and `lamina merge` through the real binary:
//! thread-count independence, sharding + merge, resume without repetition, merge's
//! missing/duplicate detection, spec errors, the Slurm script, and the CI-sized versions
//! of the checked-in experiments.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn lamina() -> Command {
    Command::new(env!("CARGO_BIN_EXE_lamina"))
}

fn root() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

#[path = "support/shared.rs"]
mod shared;
#[path = "support/tree.rs"]
mod tree;
use tree::tree;

fn ok(out: Output) -> String {
    assert!(
        out.status.success(),
        "lamina failed:\nstdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn failed(out: Output) -> String {
    assert!(!out.status.success(), "expected failure, got:\n{}", String::from_utf8_lossy(&out.stdout));
    String::from_utf8(out.stderr).unwrap()
}

/// A small spec over two bundled traces: 2 traces × 2 presets × 2 queue depths
/// × 2 buffer sizes = 16 short runs, baseline on the buffer axis.
fn small_spec(dir: &Path) -> PathBuf {
    let spec = dir.join("small.toml");
    let text = format!(
        r#"name = "small"
trace_root = {root:?}
traces = ["traces/demo.trace", "traces/fixtures/msr.csv.zst"]
set = ["trace.limit=400"]
metrics = ["write.mean_ns", "all.p99_ns", "read.mean_ns", "waf", "trace.digest"]
baseline = {{ "buffer.size_bytes" = 0 }}

[[axis]]
key = "preset"
values = ["die-binding-4x2", "mbm"]

[[axis]]
key = "host.queue_depth"
values = [0, 4]

[[axis]]
key = "buffer.size_bytes"
values = [0, 1048576]
"#,
        root = root().display().to_string()
    );
    std::fs::write(&spec, text).unwrap();
    spec
}

/// A finished sweep's standard output (the comparison table only) and standard error
/// (status lines).
struct Ran {
    stdout: String,
    stderr: String,
}

impl std::fmt::Display for Ran {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "stdout:\n{}\nstderr:\n{}", self.stdout, self.stderr)
    }
}

fn sweep(spec: &Path, out: &Path, extra: &[&str]) -> Ran {
    let o = lamina().arg("sweep").arg(spec).arg("--out").arg(out).args(extra).output().unwrap();
    let stderr = String::from_utf8(o.stderr.clone()).unwrap();
    Ran { stdout: ok(o), stderr }
}

/// "executed N, skipped M" from the summary line, which is a status line: on stderr,
/// never mixed into the tables on stdout.
fn counts(ran: &Ran) -> (usize, usize) {
    assert!(!ran.stdout.contains("executed") && !ran.stdout.contains("tables: "), "status on stdout: {ran}");
    let line = ran.stderr.lines().find(|l| l.contains("executed")).expect("summary line");
    let num = |word: &str| -> usize {
        let at = line.find(word).unwrap() + word.len();
        line[at..].trim_start().split(|c: char| !c.is_ascii_digit()).next().unwrap().parse().unwrap()
    };
    (num("executed"), num("skipped"))
}

/// Two output directories' files (from [`tree`]) have the same names and bytes.
fn assert_same_files(a: &BTreeMap<String, Vec<u8>>, b: &BTreeMap<String, Vec<u8>>, between: &str) {
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
    for (k, v) in a {
        assert!(v == &b[k], "{k} differs between {between}");
    }
}

#[test]
fn threads_do_not_change_a_byte() {
    let dir = tempfile::tempdir().unwrap();
    let spec = small_spec(dir.path());
    let a = dir.path().join("t1");
    let b = dir.path().join("t2");
    let out1 = sweep(&spec, &a, &["--threads", "1"]);
    let out2 = sweep(&spec, &b, &["--threads", "2"]);
    assert_eq!(counts(&out1), (16, 0));
    assert_eq!(counts(&out2), (16, 0));
    let (ta, tb) = (tree(&a), tree(&b));
    assert_same_files(&ta, &tb, "--threads 1 and --threads 2");
    // 16 reports + plan + 3 tables.
    assert_eq!(ta.keys().filter(|k| k.starts_with("runs/")).count(), 16);
    let csv = String::from_utf8(ta["results.csv"].clone()).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines[0],
        "run,trace,preset,host.queue_depth,buffer.size_bytes,seed,write.mean_ns,all.p99_ns,read.mean_ns,waf,trace.digest,key"
    );
    assert_eq!(lines.len(), 17);
    // Cartesian-product order: the last axis varies fastest.
    assert!(lines[1].starts_with("0,traces/demo.trace,die-binding-4x2,0,0,0,"), "{}", lines[1]);
    assert!(lines[2].starts_with("1,traces/demo.trace,die-binding-4x2,0,1048576,0,"), "{}", lines[2]);
    assert!(lines[16].starts_with("15,traces/fixtures/msr.csv.zst,mbm,4,1048576,0,"), "{}", lines[16]);
    // Each row's metrics are its report's.
    for line in &lines[1..] {
        let f: Vec<&str> = line.split(',').collect();
        let report: serde_json::Value = serde_json::from_slice(&ta[&format!("runs/{}.json", f[11])]).unwrap();
        assert_eq!(report["write"]["mean_ns"].to_string(), f[6]);
        assert_eq!(report["all"]["p99_ns"].to_string(), f[7]);
        assert_eq!(report["trace"]["digest"].as_str().unwrap(), f[10]);
        assert_eq!(report["config"]["nand"]["geometry"]["channels"], 4);
        assert_eq!(report["config"]["buffer"]["size_bytes"].to_string(), f[4]);
    }
    // The comparison: one row per (trace, preset, queue depth), baseline column all 1.
    let md = String::from_utf8(ta["results.compare.md"].clone()).unwrap();
    assert!(md.contains("## write.mean_ns (relative, 0 = 1)"), "{md}");
    assert!(md.contains("| trace | preset | host.queue_depth | 0 | 1048576 |"), "{md}");
    let compare = String::from_utf8(ta["results.compare.csv"].clone()).unwrap();
    assert_eq!(compare.lines().count(), 1 + 8 * 5);
    for l in compare.lines().skip(1).filter(|l| !l.contains("trace.digest")) {
        let cells: Vec<&str> = l.split(',').collect();
        assert!(cells[4] == "1.0000" || cells[4] == "n/a", "{l}");
    }
    // Standard output is exactly the comparison (the markdown file); status went to stderr.
    assert_eq!(out1.stdout, md);
    assert!(out1.stderr.contains("tables: "), "{out1}");
}

#[test]
fn the_trace_cache_does_not_change_a_byte() {
    let dir = tempfile::tempdir().unwrap();
    let spec = small_spec(dir.path());
    let (a, b) = (dir.path().join("cached"), dir.path().join("streamed"));
    let cached = sweep(&spec, &a, &["--threads", "2"]);
    let streamed = sweep(&spec, &b, &["--threads", "2", "--trace-cache-mib", "0"]);
    // 2 traces × 2 presets (two capacities): 4 parses for 16 runs; none without a cache.
    assert!(
        cached.stderr.contains("traces parsed 4 times, replayed from memory 12 times, streamed 0 times"),
        "{cached}"
    );
    assert!(
        streamed.stderr.contains("traces parsed 0 times, replayed from memory 0 times, streamed 16 times"),
        "{streamed}"
    );
    assert_same_files(&tree(&a), &tree(&b), "a cached and a streamed sweep");
}

#[test]
fn shards_merge_to_the_unsharded_sweep_and_merge_checks_completeness() {
    let dir = tempfile::tempdir().unwrap();
    let spec = small_spec(dir.path());
    let whole = dir.path().join("whole");
    sweep(&spec, &whole, &["--threads", "2"]);
    let shard = |k: usize| dir.path().join(format!("shard-{k}"));
    for k in 1..=3 {
        let out = sweep(&spec, &shard(k), &["--shard", &format!("{k}/3"), "--threads", "1"]);
        // Runs i with i mod 3 = k - 1: 6, 5, 5 of 16.
        assert_eq!(counts(&out).0, [6, 5, 5][k - 1], "{out}");
        assert!(!shard(k).join("results.csv").exists(), "a shard alone is not a complete sweep");
        let n = std::fs::read_dir(shard(k).join("runs")).unwrap().count();
        assert_eq!(n, [6, 5, 5][k - 1]);
    }
    let merged = dir.path().join("merged/results.csv");
    let merge = |dirs: &[PathBuf], spec: Option<&Path>| {
        let mut c = lamina();
        c.arg("merge").args(dirs).arg("--out").arg(&merged);
        if let Some(s) = spec {
            c.arg("--spec").arg(s);
        }
        c.output().unwrap()
    };
    let all = [shard(1), shard(2), shard(3)];
    ok(merge(&all, None));
    for f in ["results.csv", "results.compare.csv", "results.compare.md"] {
        let a = std::fs::read(whole.join(f)).unwrap();
        let b = std::fs::read(dir.path().join("merged").join(f)).unwrap();
        assert!(a == b, "merged {f} differs from the unsharded sweep's");
    }
    // Idempotent: again, in another order, with a directory named twice, and against the spec.
    let first = std::fs::read(&merged).unwrap();
    ok(merge(&[shard(3), shard(1), shard(2), shard(1)], None));
    assert_eq!(std::fs::read(&merged).unwrap(), first);
    ok(merge(&all, Some(&spec)));
    assert_eq!(std::fs::read(&merged).unwrap(), first);

    // A missing shard: named with the count and the run indices (shard 2 = 1, 4, 7, …).
    let err = failed(merge(&[shard(1), shard(3)], None));
    assert!(err.contains("5 of 16 runs missing (indices 1, 4, 7, 10, 13)"), "{err}");
    let err = failed(merge(&[shard(1), shard(3)], Some(&spec)));
    assert!(err.contains("5 of 16 runs missing"), "{err}");
    // A duplicate: one of shard 1's runs also in shard 2.
    let one = std::fs::read_dir(shard(1).join("runs")).unwrap().next().unwrap().unwrap();
    std::fs::copy(one.path(), shard(2).join("runs").join(one.file_name())).unwrap();
    let err = failed(merge(&all, None));
    assert!(err.contains("1 duplicate run(s) ("), "{err}");
    assert!(err.contains("shard-1") && err.contains("shard-2"), "{err}");
    // A whole sweep merged with a copy of itself: a few pairs and a count, not every pair.
    let copy = dir.path().join("whole-copy");
    std::fs::create_dir_all(copy.join("runs")).unwrap();
    for e in std::fs::read_dir(whole.join("runs")).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), copy.join("runs").join(e.file_name())).unwrap();
    }
    let out = merge(&[whole.clone(), copy], None);
    assert_eq!(out.status.code(), Some(2), "a duplicate is bad input");
    let err = failed(out);
    assert!(err.contains("16 duplicate run(s)") && err.contains("… and 13 more"), "{err}");
    assert!(err.len() < 1200, "{} bytes: {err}", err.len());
    // The output path is checked before any report is read: a directory is refused.
    // (`all` still holds the duplicate: the path error must come first.)
    let out = lamina().arg("merge").args(&all).arg("--out").arg(dir.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = failed(out);
    assert!(err.contains("is a directory") && !err.contains("duplicate"), "{err}");
    // A different sweep's directory is refused rather than mixed in.
    let other = dir.path().join("other.toml");
    std::fs::write(&other, std::fs::read_to_string(&spec).unwrap().replace("[0, 4]", "[0, 8]")).unwrap();
    let odir = dir.path().join("other");
    sweep(&other, &odir, &["--shard", "1/4"]);
    let err = failed(merge(&[shard(1), odir], None));
    assert!(err.contains("different sweep plans"), "{err}");
}

#[test]
fn an_interrupted_sweep_resumes_without_repeating_finished_runs() {
    let dir = tempfile::tempdir().unwrap();
    let spec = small_spec(dir.path());
    let out = dir.path().join("out");
    // "Interrupted" sweep: only half of the runs finished (shard 1 of 2 is exactly that
    // state), plus the debris a killed writer leaves: a temporary file and a torn report
    // (as a non-atomic writer would leave it).
    let first = sweep(&spec, &out, &["--shard", "1/2"]);
    assert_eq!(counts(&first), (8, 0));
    let runs = out.join("runs");
    let mut done: Vec<PathBuf> = std::fs::read_dir(&runs).unwrap().map(|e| e.unwrap().path()).collect();
    done.sort();
    assert_eq!(done.len(), 8);
    // Mark every finished report: a re-run would rewrite the file and lose the marker.
    for p in &done {
        let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap();
        v["resume_marker"] = serde_json::Value::Bool(true);
        std::fs::write(p, serde_json::to_string_pretty(&v).unwrap() + "\n").unwrap();
    }
    let torn = &done[0];
    let bytes = std::fs::read(torn).unwrap();
    std::fs::write(torn, &bytes[..bytes.len() / 2]).unwrap();
    std::fs::write(runs.join(".deadbeef.json.tmp.99999.0"), b"{ partial").unwrap();

    let second = sweep(&spec, &out, &["--threads", "2"]);
    // 8 of the other shard + the torn one; 7 intact ones kept.
    assert_eq!(counts(&second), (9, 7), "{second}");
    for p in &done {
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap();
        assert_eq!(v.get("resume_marker").is_some(), p != torn, "{}", p.display());
    }
    // A third time runs nothing, and the tables equal a fresh sweep's.
    let third = sweep(&spec, &out, &[]);
    assert_eq!(counts(&third), (0, 16));
    let fresh = dir.path().join("fresh");
    sweep(&spec, &fresh, &[]);
    for f in ["results.csv", "results.compare.csv", "results.compare.md"] {
        assert_eq!(std::fs::read(out.join(f)).unwrap(), std::fs::read(fresh.join(f)).unwrap(), "{f}");
    }
}

#[test]
fn a_seed_axis_that_cannot_change_results_is_flagged() {
    // Issue #8 item 5: a sweep over seeds of configurations that draw no random numbers
    // silently repeated identical runs.
    let dir = tempfile::tempdir().unwrap();
    let spec = small_spec(dir.path());
    let base = std::fs::read_to_string(&spec).unwrap();
    let stderr_of = |text: String| {
        let s = dir.path().join("seeds.toml");
        std::fs::write(&s, text).unwrap();
        let out = lamina().arg("sweep").arg(&s).arg("--list").output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stderr).unwrap()
    };
    let err = stderr_of(format!("seeds = [1, 2]\n{base}"));
    assert!(
        err.contains("warning: the seed axis has 2 values, but 32 of 32 runs draw no random numbers"),
        "{err}"
    );
    assert!(!stderr_of(base.clone()).contains("seed axis"), "no seed axis, no warning");
}

#[test]
fn runs_are_keyed_by_what_determines_them() {
    let dir = tempfile::tempdir().unwrap();
    let spec = small_spec(dir.path());
    let list = |extra: &str| -> Vec<String> {
        let text = format!("{extra}{}", std::fs::read_to_string(&spec).unwrap());
        let s = dir.path().join("k.toml");
        std::fs::write(&s, text).unwrap();
        let out = ok(lamina().arg("sweep").arg(&s).arg("--list").output().unwrap());
        out.lines().map(|l| l.split_whitespace().nth(1).unwrap().to_owned()).collect()
    };
    let a = list("");
    assert_eq!(a.len(), 16);
    assert_eq!(a, list(""), "keys are stable");
    let mut sorted = a.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), 16, "keys are distinct");
    // A seed axis changes every key and multiplies the runs.
    let seeded = list("seeds = [1, 2]\n");
    assert_eq!(seeded.len(), 32);
    assert!(seeded.iter().all(|k| !a.contains(k)));
    // The same resolved config reached two ways is refused (its runs would share a key).
    let s = dir.path().join("dup.toml");
    std::fs::write(
        &s,
        std::fs::read_to_string(&spec)
            .unwrap()
            .replace("values = [0, 4]", "values = [4, 4]\nlabels = [\"four\", \"4\"]"),
    )
    .unwrap();
    let err = failed(lamina().arg("sweep").arg(&s).arg("--list").output().unwrap());
    assert!(err.contains("resolve to the same configuration"), "{err}");
}

#[test]
fn spec_errors_name_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::read_to_string(small_spec(dir.path())).unwrap();
    let check = |text: String, want: &str| {
        let s = dir.path().join("bad.toml");
        std::fs::write(&s, text).unwrap();
        let err =
            failed(lamina().arg("sweep").arg(&s).arg("--out").arg(dir.path().join("o")).output().unwrap());
        assert!(err.contains(want), "want {want:?} in:\n{err}");
    };
    check(base.replace("host.queue_depth", "host.queue_dpeth"), "queue_dpeth");
    check(base.replace("\"mbm\"", "\"nosuch\""), "nosuch");
    check(base.replace("msr.csv.zst", "nope.csv"), "nope.csv");
    check(
        base.replace("baseline = { \"buffer.size_bytes\" = 0 }", "baseline = { \"buffer.size\" = 0 }"),
        "buffer.size",
    );
    check(
        base.replace("baseline = { \"buffer.size_bytes\" = 0 }", "baseline = { \"buffer.size_bytes\" = 7 }"),
        "\"7\"",
    );
    check(base.replace("name = \"small\"", "name = \"small\"\nsurprise = 1"), "surprise");
    check(base.replace("\"waf\"", "\"wafx\""), "wafx");
    check(base.replace("[0, 4]", "[]"), "`values` is empty");
    // A percentile metric the runs' stats.percentiles lacks is refused before any run,
    // with the list to set; setting it makes the plan valid.
    let p995 = base.replace("\"all.p99_ns\"", "\"all.p99_5_ns\"");
    check(p995.clone(), "stats.percentiles=[50, 90, 95, 99, 99.5, 99.9, 99.99, 99.999]");
    let s = dir.path().join("p995.toml");
    std::fs::write(
        &s,
        p995.replace(
            "set = [\"trace.limit=400\"]",
            "set = [\"trace.limit=400\", \"stats.percentiles=[99, 99.5]\"]",
        ),
    )
    .unwrap();
    ok(lamina().arg("sweep").arg(&s).arg("--list").output().unwrap());
    // Trace root from the environment when the flag is absent; the flag wins over it.
    let s = dir.path().join("rooted.toml");
    std::fs::write(&s, base.replace(&format!("trace_root = {:?}\n", root().display().to_string()), ""))
        .unwrap();
    let err = failed(lamina().arg("sweep").arg(&s).arg("--list").output().unwrap());
    assert!(err.contains("--trace-root"), "{err}");
    ok(lamina().arg("sweep").arg(&s).arg("--list").env("LAMINA_TRACE_ROOT", root()).output().unwrap());
    let err = failed(
        lamina()
            .arg("sweep")
            .arg(&s)
            .args(["--list", "--trace-root", "/nonexistent"])
            .env("LAMINA_TRACE_ROOT", root())
            .output()
            .unwrap(),
    );
    assert!(err.contains("/nonexistent"), "{err}");
}

#[test]
fn emit_slurm_prints_an_array_job_and_a_dependent_merge() {
    let dir = tempfile::tempdir().unwrap();
    let spec = small_spec(dir.path());
    let out = dir.path().join("cluster out");
    let script = ok(lamina()
        .arg("sweep")
        .arg(&spec)
        .arg("--emit-slurm")
        .args(["--slurm-shards", "4", "--slurm-cpus", "2", "--slurm-time", "00:10:00"])
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap());
    for want in [
        "#!/usr/bin/env bash",
        "--array=1-4 --cpus-per-task=2 --time='00:10:00'",
        "--shard \"$k/$SLURM_ARRAY_TASK_COUNT\"",
        "k=$((SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN + 1))",
        "--dependency=afterok:\"$array_job\"",
        "merge '",
        "/cluster out'/shard-* --out '",
        "/cluster out'/results.csv",
        "16 runs as a Slurm job array of 4 tasks",
    ] {
        assert!(script.contains(want), "missing {want:?} in:\n{script}");
    }
    assert!(!out.exists(), "--emit-slurm runs nothing");
    let syntax = Command::new("bash").arg("-n").arg("-c").arg(&script).output().unwrap();
    assert!(syntax.status.success(), "{}", String::from_utf8_lossy(&syntax.stderr));
}

/// The CI-sized experiments: every policy runs, and the comparison has a column per policy
/// with the baseline at 1. They replay real traces from `../shared/traces`.
#[test]
fn tiny_experiments_run() {
    if shared::shared_traces("tiny_experiments_run").is_none() {
        return;
    }
    for (spec, policies, runs) in [
        ("die-binding-tiny", &["static", "write-order", "queue", "state", "dynamic", "uq"][..], 48),
        ("lacr-tiny", &["static", "ocr", "lacr"][..], 72),
        ("soml-tiny", &["base8", "soml8", "base16", "base8-susp", "remap"][..], 10),
        ("soml-sens-tiny", &["base8", "base8-dram64", "base8-4k", "soml8-dram64", "base8-rain1"][..], 5),
        (
            "pen-tiny",
            &["nftl", "nftl-pen", "sb4+5", "sb4+5-pen", "sb4+8", "sb4+8-pen", "gftl", "gftl-keepup"][..],
            16,
        ),
        ("soml-remap-tiny", &["base8", "remap", "remap-t1", "base8-susp", "soml8"][..], 5),
        ("soml-isodie-tiny", &["base8", "soml8", "base8x32", "soml8x32"][..], 4),
        ("soml-granularity-tiny", &["4", "2", "8"][..], 3),
        ("mbm-tiny", &["tbm", "sprinkler", "mbm"][..], 12),
        ("mbm-chips-tiny", &["tbm", "sprinkler", "mbm"][..], 18),
        ("mbm-suspension-tiny", &["tbm", "mbm-x0", "mbm-x0.5", "mbm-x1", "mbm-x2", "mbm-x4"][..], 12),
        (
            "mbm-erases-tiny",
            &["mbm", "mbm-slack0", "mbm-nows", "page-mcs", "mbm-static", "sprinkler"][..],
            12,
        ),
        ("mbm-shared-tiny", &["tbm", "sprinkler", "mbm"][..], 36),
        ("pen-shared-tiny", &["nftl", "nftl-pen", "sb4+5", "sb4+5-pen"][..], 16),
        (
            "mbm-ablation-tiny",
            &["tbm", "ws", "rs", "mcs", "rs-layout", "all", "all-no-layout", "susp", "all-realloc", "all-x0"]
                [..],
            20,
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let out = sweep(&root().join("experiments/ci").join(format!("{spec}.toml")), dir.path(), &[]);
        assert_eq!(counts(&out), (runs, 0), "{out}");
        let md = std::fs::read_to_string(dir.path().join("results.compare.md")).unwrap();
        let header = md.lines().find(|l| l.starts_with("| trace |")).unwrap();
        assert!(header.ends_with(&format!("| {} |", policies.join(" | "))), "{header}");
        let csv = std::fs::read_to_string(dir.path().join("results.compare.csv")).unwrap();
        // The baseline's column: the first policy, but mbm-erases-tiny's is its last
        // (sprinkler, as in ../mbm-erases.toml).
        let base_at = if spec == "mbm-erases-tiny" { policies.len() - 1 } else { 0 };
        for l in csv.lines().skip(1) {
            let base = l.split(',').nth_back(policies.len() - 1 - base_at).unwrap();
            assert!(base == "1.0000" || base == "n/a", "{l}");
        }
        // The runs really differ by policy (the placement reached the engine).
        let results = std::fs::read_to_string(dir.path().join("results.csv")).unwrap();
        let distinct: std::collections::BTreeSet<&str> =
            results.lines().skip(1).map(|l| l.split(',').nth_back(1).unwrap()).collect();
        if spec == "pen-tiny" || spec == "pen-shared-tiny" {
            // PEN M-Merges, partially erases and copies fewer pages than block erase alone.
            for l in results.lines().skip(1) {
                let f: Vec<&str> = l.split(',').collect();
                let (system, moved, partial, m_merges) = (f[2], f[7], f[8], f[9]);
                if system.ends_with("-pen") {
                    assert!(
                        m_merges.parse::<u64>().unwrap() > 0 && partial.parse::<u64>().unwrap() > 0,
                        "{l}"
                    );
                    let base = system.trim_end_matches("-pen");
                    let b = results
                        .lines()
                        .find(|b| b.split(',').nth(1) == Some(f[1]) && b.split(',').nth(2) == Some(base))
                        .unwrap();
                    let base_moved: u64 = b.split(',').nth(7).unwrap().parse().unwrap();
                    assert!(moved.parse::<u64>().unwrap() < base_moved, "{l} vs {b}");
                } else {
                    assert_eq!((partial, m_merges), ("0", "n/a"), "{l}");
                }
            }
        } else if spec == "soml-sens-tiny" {
            // The buffer hides writes, 4 KiB pages split reads, SOML combines them.
            let col = |system: &str, i: usize| -> f64 {
                let l = results.lines().find(|l| l.split(',').nth(2) == Some(system)).unwrap();
                l.split(',').nth(4 + i).unwrap().parse().unwrap()
            };
            assert!(col("base8-dram64", 2) < col("base8", 2) / 10.0, "{results}");
            assert!(col("base8-4k", 3) > col("base8", 3), "{results}");
            assert!(col("soml8-dram64", 4) > 0.0 && col("base8", 4) == 0.0, "{results}");
            // RAIN 1 serves some reads from the mirror copy.
            assert!(col("base8-rain1", 5) > 0.0 && col("base8", 5) == 0.0, "{results}");
        } else if spec == "soml-remap-tiny" {
            // Only the remapping systems copy, and their copies serve reads (the Tencent
            // cut's co-reads recur); with fewer flash reads than the baseline.
            for l in results.lines().skip(1) {
                let f: Vec<&str> = l.split(',').collect();
                let (system, host_reads, copies, hits) = (f[2], f[7], f[8], f[9]);
                if system.starts_with("remap") {
                    assert!(copies.parse::<u64>().unwrap() > 0 && hits.parse::<u64>().unwrap() > 0, "{l}");
                    let base: u64 =
                        results.lines().nth(1).unwrap().split(',').nth(7).unwrap().parse().unwrap();
                    assert!(host_reads.parse::<u64>().unwrap() < base, "{l}");
                } else {
                    assert_eq!((copies, hits), ("n/a", "n/a"), "{l}");
                }
            }
        } else if spec == "mbm-erases-tiny" {
            // Without WS (`ftl.mbm_ws = false`) the MBM FTL allocates as the page FTL:
            // the same GC under the same scheduling (docs/results.md, the erase table).
            // Only the die-aligned FTL reports rows.
            let row = |trace: &str, system: &str| -> Vec<&str> {
                let l = results.lines().find(|l| l.contains(trace) && l.split(',').nth(2) == Some(system));
                l.unwrap().split(',').collect()
            };
            for trace in ["financial1", "hm_0"] {
                let (nows, page) = (row(trace, "mbm-nows"), row(trace, "page-mcs"));
                assert_eq!(nows[4..9], page[4..9], "{results}");
                assert!(page[4].parse::<u64>().unwrap() > 0, "the page FTL reaches GC: {results}");
                assert_eq!(page[6..8], ["n/a", "n/a"], "{results}");
                assert!(row(trace, "mbm")[6] != "n/a", "{results}");
            }
        } else if spec == "mbm-suspension-tiny" {
            // A larger suspension overhead never makes MBM's writes faster here, and
            // only MBM suspends.
            let col = |trace: &str, setting: &str, i: usize| -> f64 {
                let l = results.lines().find(|l| l.contains(trace) && l.split(',').nth(2) == Some(setting));
                l.unwrap().split(',').nth(4 + i).unwrap().parse().unwrap()
            };
            for trace in ["financial1", "hm_0"] {
                assert!(col(trace, "mbm-x4", 1) > col(trace, "mbm-x0", 1), "{results}");
                assert_eq!(col(trace, "tbm", 2), 0.0, "{results}");
                assert!(col(trace, "mbm-x1", 2) > 0.0, "{results}");
            }
            assert!(distinct.len() > runs / policies.len(), "{results}");
        } else if spec == "soml-isodie-tiny" || spec == "soml-granularity-tiny" {
            // Fig. 10c / 14b: SOML reads form exactly on the SOML systems (every
            // granularity), and on both densities SOML lowers the read mean.
            let header: Vec<&str> = results.lines().next().unwrap().split(',').collect();
            let at = |name: &str| header.iter().position(|h| *h == name).unwrap();
            // Columns: run, trace, the system label, …
            let (label, read_mean, soml_ops) = (2, at("read.mean_ns"), at("flash_ops.soml_read.ops"));
            let row = |system: &str| -> Vec<String> {
                let l = results.lines().find(|l| l.split(',').nth(label) == Some(system)).unwrap();
                l.split(',').map(str::to_string).collect()
            };
            for &system in policies {
                let r = row(system);
                let soml = system.starts_with("soml") || spec == "soml-granularity-tiny";
                assert_eq!(r[soml_ops] != "0" && r[soml_ops] != "n/a", soml, "{results}");
            }
            if spec == "soml-isodie-tiny" {
                let mean = |system: &str| -> f64 { row(system)[read_mean].parse().unwrap() };
                assert!(mean("soml8") < mean("base8") && mean("soml8x32") < mean("base8x32"), "{results}");
            }
        } else if spec != "soml-tiny" {
            assert!(distinct.len() > runs / policies.len(), "{results}");
        } else {
            // SOML reads form only on the SOML system (the last metric column), and at
            // the compressed load (queued reads to combine).
            for l in results.lines().skip(1) {
                let f: Vec<&str> = l.split(',').collect();
                let soml_reads: u64 = f[f.len() - 2].parse().unwrap();
                let (load, system) = (f[2], f[3]);
                assert_eq!(soml_reads > 0, system == "soml8" && load == "0.01", "{l}");
            }
        }
    }
}

/// Generate tiny traces (600 requests each) with `script`, sweep `experiments/ci/<spec>.toml`
/// over them, check that all `runs` ran, and return `results.csv`.
fn sweep_generated(script: &str, spec: &str, runs: usize) -> String {
    let traces = tempfile::tempdir().unwrap();
    let generated = Command::new("bash")
        .arg(root().join(script))
        .arg(traces.path())
        .args(["--requests", "600", "--bin", env!("CARGO_BIN_EXE_lamina")])
        .output()
        .unwrap();
    ok(generated);
    let dir = tempfile::tempdir().unwrap();
    let trace_root = traces.path().to_str().unwrap();
    let toml = root().join("experiments/ci").join(format!("{spec}.toml"));
    let out = sweep(&toml, dir.path(), &["--trace-root", trace_root]);
    assert_eq!(counts(&out), (runs, 0), "{out}");
    std::fs::read_to_string(dir.path().join("results.csv")).unwrap()
}

/// The CI-sized soml-read Fig. 9 on the ten Table 2 analogues: the script generates them
/// (tiny), both systems run on every trace, and SOML reads form on the SOML system only,
/// on every workload.
#[test]
fn soml_table2_tiny_runs_on_generated_analogues() {
    let results = sweep_generated("scripts/soml-table2-traces.sh", "soml-table2-tiny", 20);
    let header: Vec<&str> = results.lines().next().unwrap().split(',').collect();
    let col =
        |name: &str| header.iter().position(|h| *h == name).unwrap_or_else(|| panic!("{name}: {header:?}"));
    let (system, soml) = (col("system"), col("flash_ops.soml_read.ops"));
    for l in results.lines().skip(1) {
        let r: Vec<&str> = l.split(',').collect();
        assert_eq!(r[soml].parse::<u64>().unwrap() > 0, r[system] == "soml8", "{l}");
    }
}

/// The CI-sized versions of the SOML experiments on the synthetic traces (Fig. 9 and 10a,
/// Fig. 12, Fig. 14a, Fig. 15): the script generates the traces (tiny), every run ends, and
/// each experiment's own mechanism shows: SOML reads form on the SOML systems only, RAIN 1
/// reads from the mirror, the 64 MB buffer absorbs the host programs, smaller pages split
/// reads into more flash reads.
#[test]
fn soml_synth_tiny_specs_run_on_generated_traces() {
    let rows = |spec: &str, runs: usize| -> (Vec<String>, Vec<Vec<String>>) {
        let results = sweep_generated("scripts/soml-synth-traces.sh", spec, runs);
        let mut lines = results.lines().map(|l| l.split(',').map(str::to_owned).collect::<Vec<String>>());
        let header = lines.next().unwrap();
        (header, lines.collect())
    };
    let col = |header: &[String], name: &str| {
        header.iter().position(|h| h == name).unwrap_or_else(|| panic!("{name}: {header:?}"))
    };
    let num = |r: &[String], i: usize| -> f64 { r[i].parse().unwrap_or_else(|_| panic!("{r:?}")) };
    for (spec, runs) in [("soml-synth-tiny", 4), ("soml-replication-tiny", 3), ("soml-dram-tiny", 4)] {
        let (header, rows) = rows(spec, runs);
        let (system, soml) = (col(&header, "system"), col(&header, "flash_ops.soml_read.ops"));
        for r in &rows {
            assert_eq!(num(r, soml) > 0.0, r[system].starts_with("soml"), "{spec}: {r:?}");
        }
        if spec == "soml-replication-tiny" {
            let mirror = col(&header, "flash.mirror_reads");
            for r in &rows {
                assert_eq!(num(r, mirror) > 0.0, r[system] == "rain1", "{r:?}");
            }
        }
        if spec == "soml-dram-tiny" {
            let (dram, programs) = (col(&header, "dram"), col(&header, "flash.host_programs"));
            for r in &rows {
                assert_eq!(num(r, programs) == 0.0, r[dram] == "64MB", "{r:?}");
            }
        }
    }
    let (header, rows) = rows("soml-pages-tiny", 4);
    let (system, reads) = (col(&header, "system"), col(&header, "flash.host_reads"));
    let reads_of = |s: &str| num(rows.iter().find(|r| r[system] == s).unwrap(), reads);
    assert!(reads_of("base16k") < reads_of("base8k") && reads_of("base8k") < reads_of("base4k"), "{rows:?}");
}

/// The CI-sized PEN headline on the 12 MSR-volume analogues: the script generates them
/// (tiny), every system runs on every trace, and PEN M-Merges, partially erases and
/// copies fewer pages than block erase alone on NFTL wherever the baseline merges.
#[test]
fn pen_msr12_tiny_runs_on_generated_analogues() {
    let results = sweep_generated("scripts/pen-msr12-traces.sh", "pen-msr12-tiny", 48);
    let header: Vec<&str> = results.lines().next().unwrap().split(',').collect();
    let col =
        |name: &str| header.iter().position(|h| *h == name).unwrap_or_else(|| panic!("{name}: {header:?}"));
    let (system, moved, partial, m_merges) =
        (col("system"), col("gc.pages_moved"), col("erases.partial"), col("pen.m_merges"));
    let rows: Vec<Vec<&str>> = results.lines().skip(1).map(|l| l.split(',').collect()).collect();
    for r in &rows {
        let trace = r[1];
        if r[system] == "nftl-pen" {
            let base = rows.iter().find(|b| b[1] == trace && b[system] == "nftl").unwrap();
            let base_moved: u64 = base[moved].parse().unwrap();
            assert!(base_moved > 0, "the preconditioned baseline merges: {base:?}");
            assert!(
                r[m_merges].parse::<u64>().unwrap() > 0 && r[partial].parse::<u64>().unwrap() > 0,
                "{r:?}"
            );
            assert!(r[moved].parse::<u64>().unwrap() < base_moved, "{r:?} vs {base:?}");
        } else if !r[system].ends_with("-pen") {
            assert_eq!((r[partial], r[m_merges]), ("0", "n/a"), "{r:?}");
        }
    }
}

/// Every experiment spec in the repository plans: its axes resolve to valid configs for
/// every run (`--list` validates each run's config), so a renamed key or a bad value in a
/// spec that CI does not run in full fails here. Specs over the generated synthetic
/// traces get a root of tiny stand-ins; specs over the shared samples need ../shared.
#[test]
fn every_experiment_spec_plans() {
    // Stand-ins for the generated traces (scripts/*-synth-traces.sh), with distinct
    // contents: runs are keyed by digest.
    let synth = tempfile::tempdir().unwrap();
    let names = [
        "small-r10000",
        "small-r20000",
        "small-r40000",
        "seq",
        "hot",
        "rand",
        "small",
        "usr1vm0",
        "stg-1vm0",
        "web-1vm0",
        "src1-1vm2",
        "financial",
        "msnfs",
        "light-4k",
        "prn_1",
        "proj_0",
        "proj_1",
        "prxy_0",
        "usr_1",
        "hm_0",
        "prn_0",
        "rsrch_0",
        "src2_0",
        "ts_0",
        "wdev_0",
        "web_0",
        // scripts/soml-table2-traces.sh (prn_1 above too)
        "24HRS8",
        "BS78",
        "CFS13",
        "DDR20",
        "hm_1",
        "LMBE2",
        "mds_0",
        "stg_1",
        "web_1",
    ];
    for (i, name) in names.iter().enumerate() {
        std::fs::write(synth.path().join(format!("{name}.trace")), format!("0 0 {i} 8 1\n1000 0 64 8 0\n"))
            .unwrap();
    }
    let shared_root = shared::shared_traces("every_experiment_spec_plans");
    let mut specs: Vec<PathBuf> = Vec::new();
    for dir in ["experiments", "experiments/ci"] {
        for e in std::fs::read_dir(root().join(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "toml") {
                specs.push(p);
            }
        }
    }
    specs.sort();
    let mut planned = 0;
    for spec in &specs {
        let text = std::fs::read_to_string(spec).unwrap();
        let mut cmd = lamina();
        cmd.arg("sweep").arg(spec).arg("--list");
        if [
            "target/soml-synth",
            "target/pen-synth",
            "target/mbm-synth",
            "target/mapping-synth",
            "target/pen-msr12",
            "target/soml-table2",
        ]
        .iter()
        .any(|t| text.contains(t))
        {
            cmd.arg("--trace-root").arg(synth.path());
        } else if shared_root.is_none() {
            continue;
        }
        let listed = ok(cmd.output().unwrap());
        assert!(listed.lines().count() > 0, "{}: no runs planned", spec.display());
        planned += 1;
    }
    assert!(planned >= 5, "only {planned} of {} specs planned", specs.len());
}

/// A stand-in for Slurm's `sbatch`: runs the job script it reads on standard input at
/// once, an array job (`--array=LO-HI`) once per task with `SLURM_ARRAY_TASK_ID`,
/// `SLURM_ARRAY_TASK_MIN` and `SLURM_ARRAY_TASK_COUNT` set as Slurm sets them, and
/// prints a job id as `--parsable` does. Returns the directory to put first on `PATH`.
fn fake_sbatch(dir: &Path) -> PathBuf {
    let bin = dir.join("fake-slurm-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let sbatch = bin.join("sbatch");
    std::fs::write(
        &sbatch,
        r#"#!/usr/bin/env bash
set -euo pipefail
array=""
for a in "$@"; do
  case "$a" in --array=*) array="${a#--array=}" ;; esac
done
script=$(mktemp)
cat >"$script"
if [ -n "$array" ]; then
  lo=${array%-*}; hi=${array#*-}
  for ((t = lo; t <= hi; t++)); do
    SLURM_ARRAY_TASK_ID=$t SLURM_ARRAY_TASK_MIN=$lo SLURM_ARRAY_TASK_COUNT=$((hi - lo + 1)) \
      SLURM_CPUS_PER_TASK=1 bash "$script" >&2
  done
else
  bash "$script" >&2
fi
rm -f "$script"
echo 4242
"#,
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&sbatch, std::fs::Permissions::from_mode(0o755)).unwrap();
    bin
}

/// Run an emitted Slurm script with the fake `sbatch` first on `PATH`.
fn submit(script: &str, bin: &Path) {
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let out = Command::new("bash").arg("-c").arg(script).env("PATH", path).output().unwrap();
    assert!(
        out.status.success(),
        "the script failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Regression (new-user trial, finding 1): after the `--emit-slurm` array finished, the
/// follow-up `lamina sweep SPEC --out DIR` looked for runs only in `DIR/runs` and ran
/// every run again, although the shards had put them in `DIR/shard-K/runs`. It now
/// gathers them (checked as resumed runs are) and runs nothing; the tables equal a
/// direct sweep's.
#[test]
fn the_sweep_after_an_emitted_slurm_array_reuses_the_shards_runs() {
    let dir = tempfile::tempdir().unwrap();
    let spec = small_spec(dir.path());
    let out = dir.path().join("cluster");
    let script = ok(lamina()
        .arg("sweep")
        .arg(&spec)
        .args(["--emit-slurm", "--slurm-shards", "3", "--out"])
        .arg(&out)
        .output()
        .unwrap());
    submit(&script, &fake_sbatch(dir.path()));
    for k in 1..=3 {
        assert!(out.join(format!("shard-{k}/runs")).is_dir(), "shard {k} ran");
    }
    assert!(!out.join("runs").exists(), "the shards write only their own directories");
    // A torn report in one shard is not taken: that run runs again.
    let shard1 = out.join("shard-1/runs");
    let torn = std::fs::read_dir(&shard1).unwrap().next().unwrap().unwrap().path();
    let bytes = std::fs::read(&torn).unwrap();
    std::fs::write(&torn, &bytes[..bytes.len() / 2]).unwrap();
    let after = sweep(&spec, &out, &[]);
    assert!(after.stderr.contains("gathered 15 finished run(s) from the shard directories"), "{after}");
    assert!(after.stderr.contains("15 done earlier, 1 to run"), "{after}");
    assert_eq!(counts(&after), (1, 15), "{after}");
    let again = sweep(&spec, &out, &[]);
    assert_eq!(counts(&again), (0, 16), "{again}");
    let direct = dir.path().join("direct");
    sweep(&spec, &direct, &[]);
    for f in ["results.csv", "results.compare.csv", "results.compare.md"] {
        assert_eq!(std::fs::read(out.join(f)).unwrap(), std::fs::read(direct.join(f)).unwrap(), "{f}");
    }
}

/// Regression (new-user trial, finding 1): `lamina reproduce <paper> --emit-slurm --out
/// DIR`, the script submitted, then the follow-up `lamina reproduce <paper> --out DIR` the
/// script names reran every run ("0 done earlier, 12 to run"). It now runs none, and
/// writes the same claims, index, figures and tables as a direct run.
#[test]
fn reproduce_after_an_emitted_slurm_array_runs_nothing_the_shards_finished() {
    if shared::shared_traces("reproduce_after_an_emitted_slurm_array_runs_nothing_the_shards_finished")
        .is_none()
    {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (cluster, direct) = (dir.path().join("cluster"), dir.path().join("direct"));
    let reproduce = |out: &Path, extra: &[&str]| {
        let o = lamina()
            .args(["reproduce", "mbm", "--quick", "--part", "main", "--out"])
            .arg(out)
            .arg("--experiments")
            .arg(root().join("experiments"))
            .args(extra)
            .output()
            .unwrap();
        let stderr = String::from_utf8(o.stderr.clone()).unwrap();
        Ran { stdout: ok(o), stderr }
    };
    let script = reproduce(&cluster, &["--emit-slurm", "--slurm-shards", "3"]).stdout;
    let follow_up = format!("lamina reproduce mbm --quick --part main --out {}", cluster.display());
    assert!(script.contains(&format!("# When the array is done: {follow_up}")), "{script}");
    submit(&script, &fake_sbatch(dir.path()));
    let after = reproduce(&cluster, &[]);
    assert!(after.stderr.contains("gathered 12 finished run(s)"), "{after}");
    assert!(after.stderr.contains("12 done earlier, 0 to run"), "{after}");
    let first = reproduce(&direct, &[]);
    assert!(first.stderr.contains("0 done earlier, 12 to run"), "{first}");
    assert_eq!(after.stdout, first.stdout, "the claims table");
    let (a, b) = (tree(&cluster), tree(&direct));
    // The cluster's folder also holds the shards' directories and the Slurm logs.
    let a: BTreeMap<String, Vec<u8>> = a
        .into_iter()
        .filter(|(k, _)| !k.starts_with("sweep/shard-") && !k.starts_with("sweep/logs"))
        .collect();
    assert!(a.contains_key("claims-main.csv") && a.contains_key("sweep/results.csv"), "{:?}", a.keys());
    assert_same_files(&a, &b, "the follow-up of the Slurm array and a direct run");
}

/// Regression (new-user trial, findings 2 and 3): bad specs, a missing config file,
/// `--slurm-shards 0` and a malformed plan.json exited 1 (run-time failure); they are bad
/// input, exit 2, naming the file and key. A metric the report lacks was reported only
/// after every run; it is refused before any (nothing written), naming the spec, the
/// `metrics` key and the closest names. A metric listed twice was tabulated twice; it is
/// refused. A failed merge leaves no directory it created.
#[test]
fn bad_input_to_sweep_and_merge_exits_2_before_any_run() {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::read_to_string(small_spec(dir.path())).unwrap();
    let out = dir.path().join("never");
    let check = |text: String, extra: &[&str], want: &[&str]| {
        let s = dir.path().join("bad.toml");
        std::fs::write(&s, text).unwrap();
        let o = lamina().arg("sweep").arg(&s).arg("--out").arg(&out).args(extra).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
        let err = failed(o);
        for w in want {
            assert!(err.contains(w), "want {w:?} in:\n{err}");
        }
        assert!(!out.exists(), "nothing ran: {err}");
    };
    check(base.replace("[0, 4]", "[]"), &[], &["bad.toml", "`values` is empty"]);
    check(base.replace("values = [0, 4]", "values = [0, 4]\nlabels = [\"a\"]"), &[], &["1 labels for 2"]);
    check(base.replace("name = \"small\"", "name = \"small\"\nsurprise = 1"), &[], &["bad.toml", "surprise"]);
    check(
        base.replace("baseline = { \"buffer.size_bytes\" = 0 }", "baseline = { \"buffer.size_bytes\" = 7 }"),
        &[],
        &["bad.toml", "(values: \"0\", \"1048576\")"],
    );
    check(
        base.replace("set = [", "configs = [\"gone.toml\"]\nset = ["),
        &[],
        &["bad.toml", "`configs`", "gone.toml"],
    );
    check(base.replace("msr.csv.zst", "nope.csv"), &[], &["bad.toml", "nope.csv", "--trace-root"]);
    check(
        base.replace("\"waf\"", "\"wafx\""),
        &[],
        &["bad.toml: `metrics` entry \"wafx\"", "closest: waf", "lamina sweep --list-metrics"],
    );
    check(base.replace("\"waf\"", "\"gc\""), &[], &["`metrics` entry \"gc\"", "section", "pages_moved"]);
    check(
        base.replace("\"waf\"", "\"waf\", \"write.mean_ns\""),
        &[],
        &["bad.toml: `metrics` lists \"write.mean_ns\" more than once"],
    );
    check(base.clone(), &["--emit-slurm", "--slurm-shards", "0"], &["--slurm-shards 0"]);
    // The names --list-metrics gives are the ones the check accepts.
    let names = ok(lamina().args(["sweep", "--list-metrics"]).output().unwrap());
    for m in ["write.mean_ns", "waf", "all.p<P>_ns", "erases.total", "trace.digest"] {
        assert!(names.lines().any(|l| l == m), "{m} in:\n{names}");
    }

    // merge: a malformed plan.json names the file and the way out; a failed merge leaves
    // no directory behind.
    let spec = small_spec(dir.path());
    let half = dir.path().join("half");
    sweep(&spec, &half, &["--shard", "1/2"]);
    let merged = dir.path().join("new/deeper/results.csv");
    let o = lamina().arg("merge").arg(&half).arg("--out").arg(&merged).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(failed(o).contains("8 of 16 runs missing"));
    assert!(!dir.path().join("new").exists(), "a failed merge created its output directory");
    std::fs::write(half.join("plan.json"), "{ \"lamina_sweep_plan\": 1,\n").unwrap();
    let o = lamina().arg("merge").arg(&half).arg("--out").arg(&merged).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = failed(o);
    assert!(
        err.contains("plan.json: not a sweep plan") && err.contains("line 2") && err.contains("--spec"),
        "{err}"
    );
    assert!(!dir.path().join("new").exists());
}

/// A run over the memory limit was refused only when its turn came, after the runs
/// before it in the plan had spent their time; now every pending run is checked first.
/// Runs that fit alone but not together get a note about `--threads`.
#[test]
fn a_run_over_the_memory_limit_is_refused_before_any_run_starts() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("mem.toml");
    let text = |values: &str| {
        format!(
            "name = \"mem\"\ntrace_root = {:?}\ntraces = [\"traces/demo.trace\"]\npreset = \"mbm\"\n\
             metrics = [\"all.mean_ns\"]\n\n[[axis]]\nkey = \"nand.geometry.blocks_per_plane\"\nvalues = {values}\n",
            root().display().to_string()
        )
    };
    std::fs::write(&spec, text("[2048, 60000, 80000]")).unwrap();
    let out = dir.path().join("out");
    let sweep_with = |limit: &str, threads: &str| {
        lamina()
            .env("LAMINA_MAX_MEMORY", limit)
            .arg("sweep")
            .arg(&spec)
            .arg("--out")
            .arg(&out)
            .args(["--threads", threads])
            .output()
            .unwrap()
    };
    let o = sweep_with("12GiB", "1");
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
    let err = failed(o);
    for want in [
        "none of the runs was started: 2 cannot be built here (run 1 (trace=traces/demo.trace, \
         nand.geometry.blocks_per_plane=60000), run 2 (trace=traces/demo.trace, nand.geometry.blocks_per_plane=80000)); \
         the first of them: run 1 (",
        "more than the limit of 12.0 GiB",
    ] {
        assert!(err.contains(want), "want {want:?} in:\n{err}");
    }
    let runs = out.join("runs");
    let finished = std::fs::read_dir(&runs).map_or(0, |d| d.count());
    assert_eq!(finished, 0, "no run may have finished: {err}");
    // Each fits alone under 16 GiB (9.6 and 14.5 GiB at full footprint), the two
    // largest not together.
    std::fs::write(&spec, text("[2048, 40000, 60000]")).unwrap();
    let o = sweep_with("16GiB", "2");
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("note: the 2 largest runs need up to ") && err.contains("give fewer --threads"),
        "{err}"
    );
    let o = sweep_with("16GiB", "1");
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success() && !err.contains("give fewer --threads"), "{err}");
}
