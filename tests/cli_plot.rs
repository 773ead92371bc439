//! End-to-end tests of `lamina plot` and `lamina reproduce` through the real binary
//! (issue #10 items 1–2): the SVGs are parsed for their structure (series, axis labels,
//! point and bar counts, checked against the CSV beside each figure), a PNG is decoded
//! far enough to prove it is one (signature, IHDR size), and `reproduce --quick` of
//! both papers writes figures, an index and a claims table, byte-identical on rerun.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

#[path = "support/shared.rs"]
mod shared;
#[path = "support/tree.rs"]
mod tree;
use tree::tree;

fn lamina() -> Command {
    Command::new(env!("CARGO_BIN_EXE_lamina"))
}

fn root() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

fn ok(out: Output) -> (String, String) {
    assert!(
        out.status.success(),
        "lamina failed:\nstdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap())
}

fn failed(out: Output) -> String {
    assert_eq!(out.status.code(), Some(2), "expected bad input:\n{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stderr).unwrap()
}

/// The series colours, in order (chart.rs's palette, as SVG writes them).
const COLOURS: [&str; 6] = ["#1F77B4", "#FF7F0E", "#2CA02C", "#D62728", "#9467BD", "#8C564B"];

/// A parsed SVG: every element as (tag, attributes), and the text of every `<text>`.
struct Svg {
    elements: Vec<(String, BTreeMap<String, String>)>,
    texts: Vec<String>,
}

fn parse_svg(path: &Path) -> Svg {
    let s = std::fs::read_to_string(path).unwrap();
    assert!(s.starts_with("<svg") || s.starts_with("<?xml"), "{}: not an SVG", path.display());
    let mut elements = Vec::new();
    let mut texts = Vec::new();
    let mut rest = s.as_str();
    while let Some(open) = rest.find('<') {
        let close = rest[open..].find('>').unwrap() + open;
        let tag_text = &rest[open + 1..close];
        if !tag_text.starts_with('/') {
            let name: String = tag_text.chars().take_while(|c| c.is_ascii_alphanumeric()).collect();
            let mut attrs = BTreeMap::new();
            for part in tag_text.split("\" ").map(str::trim) {
                if let Some((k, v)) = part.split_once("=\"") {
                    let k = k.rsplit(' ').next().unwrap().to_owned();
                    attrs.insert(k, v.trim_end_matches(['"', '/']).trim_end_matches('"').to_owned());
                }
            }
            if name == "text" {
                let end = rest[close..].find("</text>").unwrap() + close;
                texts.push(rest[close + 1..end].trim().to_owned());
            }
            elements.push((name, attrs));
        }
        rest = &rest[close + 1..];
    }
    Svg { elements, texts }
}

impl Svg {
    fn has_text(&self, t: &str) -> bool {
        self.texts.iter().any(|x| x == t)
    }

    /// Point counts of the polylines stroked in `colour`, largest first.
    fn lines(&self, colour: &str) -> Vec<usize> {
        let mut v: Vec<usize> = self
            .elements
            .iter()
            .filter(|(n, a)| n == "polyline" && a.get("stroke").map(String::as_str) == Some(colour))
            .map(|(_, a)| a["points"].split_whitespace().count())
            .collect();
        v.sort_unstable_by(|a, b| b.cmp(a));
        v
    }

    fn count(&self, tag: &str, fill: &str) -> usize {
        self.elements
            .iter()
            .filter(|(n, a)| n == tag && a.get("fill").map(String::as_str) == Some(fill))
            .count()
    }
}

/// Rows of a figure's CSV per first column, in order of appearance.
fn csv_rows(path: &Path) -> Vec<(String, usize)> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut out: Vec<(String, usize)> = Vec::new();
    for l in text.lines().skip(1) {
        let key = l.split(',').next().unwrap().to_owned();
        match out.last_mut() {
            Some((k, n)) if *k == key => *n += 1,
            _ => out.push((key, 1)),
        }
    }
    out
}

/// (width, height) of a PNG from its IHDR chunk, after checking the signature.
fn png_size(path: &Path) -> (u32, u32) {
    let b = std::fs::read(path).unwrap();
    assert_eq!(&b[..8], b"\x89PNG\r\n\x1a\n", "{}: not a PNG", path.display());
    assert_eq!(&b[12..16], b"IHDR");
    let be = |i: usize| u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
    (be(16), be(20))
}

/// Write a sweep spec over the bundled traces: `name`, the repository as trace root,
/// then `body` (traces, metrics, baseline, axes).
fn write_spec(path: &Path, name: &str, body: &str) {
    let root = root().display().to_string();
    std::fs::write(path, format!("name = {name:?}\ntrace_root = {root:?}\n{body}")).unwrap();
}

/// A run of the bundled demo trace with its JSON report and latency log.
fn demo_run(dir: &Path) -> (PathBuf, PathBuf) {
    let (json, log) = (dir.join("run.json"), dir.join("lat.csv"));
    ok(lamina()
        .args(["run", "-q", "--preset", "die-binding-4x2", "--json"])
        .arg(&json)
        .arg("--latency-log")
        .arg(&log)
        .arg(root().join("traces/demo.trace"))
        .output()
        .unwrap());
    (json, log)
}

/// A CDF from a report's histograms: three series (read, write, all) with their counts,
/// the log-scale and tail axis labels, one polyline point per CSV row; the same CDF from
/// the latency log of the same run has the very same data (both histograms hold the
/// same samples), and an old (v3) report without histograms still plots.
#[test]
fn cdfs_from_a_report_and_from_its_latency_log() {
    let dir = tempfile::tempdir().unwrap();
    let (json, log) = demo_run(dir.path());
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let (r, w) = (report["read"]["count"].as_u64().unwrap(), report["write"]["count"].as_u64().unwrap());
    assert!(r > 0 && w > 0);
    let svg = dir.path().join("cdf.svg");
    ok(lamina().args(["plot", "cdf"]).arg(&json).arg("--out").arg(&svg).output().unwrap());
    let s = parse_svg(&svg);
    for want in [format!("read (n = {r})"), format!("write (n = {w})"), format!("all (n = {})", r + w)] {
        assert!(s.has_text(&want), "{want} in {:?}", s.texts);
    }
    for want in ["response time (µs, log scale)", "percentile", "90", "99", "99.9", "99.99", "99.999"] {
        assert!(s.has_text(want), "{want} in {:?}", s.texts);
    }
    let rows = csv_rows(&dir.path().join("cdf.csv"));
    assert_eq!(rows.len(), 3, "{rows:?}");
    for (i, (name, n)) in rows.iter().enumerate() {
        assert!(*n > 10, "{name}: {n} points");
        assert_eq!(s.lines(COLOURS[i])[0], *n, "series {name}");
    }
    // The curve ends at the tail axis's top (p99.999 or the maximum).
    let csv = std::fs::read_to_string(dir.path().join("cdf.csv")).unwrap();
    // The log x axis labels every 1, 2 and 5 times a power of ten inside the data.
    let xs: Vec<f64> = csv.lines().skip(1).map(|l| l.split(',').nth(1).unwrap().parse().unwrap()).collect();
    let (lo, hi) = xs.iter().fold((f64::MAX, 0f64), |(a, b), &x| (a.min(x), b.max(x)));
    let mut ticks = 0;
    for e in 0..9 {
        for m in [1.0, 2.0, 5.0] {
            let t = m * 10f64.powi(e);
            if t > lo * 1.05 && t < hi * 0.95 {
                ticks += 1;
                assert!(
                    s.has_text(&format!("{t}")),
                    "x tick {t} (data {lo}..{hi}) not labelled: {:?}",
                    s.texts
                );
            }
        }
    }
    assert!(ticks >= 3, "data {lo}..{hi} spans too few ticks for the check");
    let last_all = csv.lines().rfind(|l| l.starts_with("all ")).unwrap();
    assert!(last_all.ends_with(",5"), "{last_all}");

    let from_log = dir.path().join("log-cdf.svg");
    ok(lamina()
        .args(["plot", "cdf", "--latency-log"])
        .arg(&log)
        .arg("--out")
        .arg(&from_log)
        .output()
        .unwrap());
    assert_eq!(std::fs::read_to_string(dir.path().join("log-cdf.csv")).unwrap(), csv);

    // Schema v3: no histograms; the CDF joins the percentile fields, with a note.
    let mut old = report.clone();
    old.as_object_mut().unwrap().remove("histograms");
    old["schema_version"] = 3.into();
    let old_path = dir.path().join("old.json");
    std::fs::write(&old_path, old.to_string()).unwrap();
    let (_, err) = ok(lamina().args(["plot", "cdf"]).arg(&old_path).output().unwrap());
    assert!(err.contains("no histograms (schema v3, before histograms were added in v4)"), "{err}");
    let rows = csv_rows(&dir.path().join("old.cdf.csv"));
    assert_eq!(rows.iter().map(|r| r.1).collect::<Vec<_>>(), [7, 7, 7], "{rows:?}");
}

/// Latency over time, rendered as PNG (by `--format` and by the extension): a real PNG
/// of the figure's size, and its data beside it (mean and max of reads and writes).
#[test]
fn a_timeline_renders_to_a_png_that_opens() {
    let dir = tempfile::tempdir().unwrap();
    let (_, log) = demo_run(dir.path());
    let png = dir.path().join("tl.png");
    ok(lamina()
        .args(["plot", "timeline", "--windows", "50"])
        .arg(&log)
        .arg("--out")
        .arg(&png)
        .output()
        .unwrap());
    assert_eq!(png_size(&png), (960, 600));
    let rows = csv_rows(&dir.path().join("tl.csv"));
    let names: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(names, ["read mean", "read max", "write mean", "write max"]);
    assert!(rows.iter().all(|r| r.1 > 0 && r.1 <= 50), "{rows:?}");
    // --format png without an --out: beside the input.
    ok(lamina().args(["plot", "timeline", "--format", "png"]).arg(&log).output().unwrap());
    assert_eq!(png_size(&dir.path().join("lat.timeline.png")), (960, 600));
    let svg = dir.path().join("tl.svg");
    ok(lamina().args(["plot", "timeline"]).arg(&log).arg("--out").arg(&svg).output().unwrap());
    let s = parse_svg(&svg);
    assert!(s.texts.iter().any(|t| t.starts_with("arrival time (")), "{:?}", s.texts);
    assert!(s.has_text("response time (µs)"));
}

/// A sweep with a placement axis (the bars) and a numeric axis (the line): bars count
/// groups × policies plus the geomean group; the line has one marker per point.
#[test]
fn bars_and_lines_from_a_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("s.toml");
    write_spec(
        &spec,
        "s",
        r#"traces = ["traces/demo.trace", "traces/fixtures/msr.csv.zst"]
preset = "die-binding-4x2"
set = ["trace.limit=400"]
metrics = ["write.mean_ns", "all.mean_ns"]
baseline = { "sched.placement" = "static" }

[[axis]]
key = "host.queue_depth"
values = [1, 4, 16]

[[axis]]
key = "sched.placement"
values = ["static", "queue", "uq"]
"#,
    );
    let out = dir.path().join("sw");
    ok(lamina().arg("sweep").arg(&spec).arg("--out").arg(&out).args(["--threads", "2"]).output().unwrap());
    let results = out.join("results.csv");
    let bars = dir.path().join("bars.svg");
    ok(lamina()
        .args(["plot", "bars"])
        .arg(&results)
        .args(["--metric", "write.mean_ns", "--series", "sched.placement", "--baseline", "static"])
        .args(["--where", "host.queue_depth=4", "--out"])
        .arg(&bars)
        .output()
        .unwrap());
    let s = parse_svg(&bars);
    for want in ["demo", "msr", "geomean (2 groups)", "static", "queue", "uq", "write.mean_ns (static = 1)"] {
        assert!(s.has_text(want), "{want} in {:?}", s.texts);
    }
    // 3 groups (2 traces + geomean) bars per policy, plus its legend swatch.
    for c in &COLOURS[..3] {
        assert_eq!(s.count("rect", c), 3 + 1, "{c}");
    }
    let csv = std::fs::read_to_string(dir.path().join("bars.csv")).unwrap();
    assert!(csv.starts_with("group,series,value\ndemo,static,1\ndemo,queue,"), "{csv}");
    assert_eq!(csv.lines().count(), 1 + 3 * 3);

    let line = dir.path().join("line.svg");
    ok(lamina()
        .args(["plot", "line"])
        .arg(&results)
        .args(["--metric", "all.mean_ns", "--x", "host.queue_depth", "--series", "sched.placement"])
        .arg("--out")
        .arg(&line)
        .output()
        .unwrap());
    let s = parse_svg(&line);
    assert!(s.has_text("host.queue_depth") && s.has_text("all.mean_ns (geomean)"), "{:?}", s.texts);
    for (i, (name, n)) in csv_rows(&dir.path().join("line.csv")).iter().enumerate() {
        assert_eq!(*n, 3, "{name}");
        assert_eq!(s.count("circle", COLOURS[i]), 3, "{name}");
        assert_eq!(s.lines(COLOURS[i])[0], 3, "{name}");
    }
}

/// Bad input names the file, line and field, or the flag, and exits 2.
#[test]
fn bad_plot_input_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("bad.csv");
    std::fs::write(
        &log,
        "arrival_ns,op,bytes,lpn,response_ns,wait_ns\n0,write,8192,1,100,0\n5,read,8192,1,x,0\n",
    )
    .unwrap();
    let e = failed(lamina().args(["plot", "timeline"]).arg(&log).output().unwrap());
    assert!(e.contains("bad.csv:3: field response_ns: \"x\" is not a whole number"), "{e}");
    let e = failed(
        lamina().args(["plot", "cdf", "--latency-log"]).arg(&log).args(["--out", "x.jpg"]).output().unwrap(),
    );
    assert!(e.contains("unknown figure extension .jpg; use .svg or .png"), "{e}");
    // A --format that contradicts the extension would write PNG bytes into a .svg file.
    let svg = dir.path().join("x.svg");
    let e = failed(
        lamina()
            .args(["plot", "cdf", "--latency-log"])
            .arg(&log)
            .args(["--format", "png", "--out"])
            .arg(&svg)
            .output()
            .unwrap(),
    );
    assert!(e.contains("--format png contradicts its extension .svg"), "{e}");
    assert!(!svg.exists());
    std::fs::write(&log, "time,op\n").unwrap();
    let e = failed(lamina().args(["plot", "cdf", "--latency-log"]).arg(&log).output().unwrap());
    assert!(e.contains("bad.csv:1: not a latency log") && e.contains("--latency-log FILE"), "{e}");
    let e = failed(lamina().args(["plot", "cdf"]).arg(&log).output().unwrap());
    assert!(e.contains("not a JSON report") && !e.contains("it is a latency log"), "{e}");
    // A real latency log where the report goes: the error names the flag that takes it.
    std::fs::write(&log, "arrival_ns,op,bytes,lpn,response_ns,wait_ns\n0,write,8192,1,100,0\n").unwrap();
    let e = failed(lamina().args(["plot", "cdf"]).arg(&log).output().unwrap());
    assert!(
        e.contains("not a JSON report") && e.contains("it is a latency log: give it as --latency-log"),
        "{e}"
    );
    // Only trims: nothing to plot is bad input too, not a drawing failure.
    std::fs::write(&log, "arrival_ns,op,bytes,lpn,response_ns,wait_ns\n0,trim,8192,1,0,0\n").unwrap();
    let e = failed(lamina().args(["plot", "timeline"]).arg(&log).output().unwrap());
    assert!(e.contains("bad.csv: the log has no read or write request"), "{e}");
    // A report whose requests were all trims (or none): no CDF to draw.
    let (json, _) = demo_run(dir.path());
    let mut v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    v.as_object_mut().unwrap().remove("histograms");
    for class in ["read", "write", "all"] {
        v[class]["count"] = 0.into();
    }
    std::fs::write(&json, v.to_string()).unwrap();
    let out = lamina().args(["plot", "cdf"]).arg(&json).output().unwrap();
    let note = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(note.contains("but its `histograms` field is absent") && !note.contains("< 4"), "{note}");
    let e = failed(out);
    assert!(e.contains("nothing to draw"), "{e}");
}

fn reproduce(paper: &str, out: &Path, extra: &[&str]) -> (String, String) {
    ok(lamina()
        .args(["reproduce", paper, "--quick", "--out"])
        .arg(out)
        .arg("--experiments")
        .arg(root().join("experiments"))
        .args(extra)
        .output()
        .unwrap())
}

/// Issue #10's "must show": `lamina reproduce <paper> --quick` writes figures, an index
/// and a claims table in one command; a second run elsewhere (other thread count) and a
/// rerun in place (every run resumed) give byte-identical folders.
#[test]
fn reproduce_quick_writes_figures_and_claims_identically_on_rerun() {
    if shared::shared_traces("reproduce_quick_writes_figures_and_claims_identically_on_rerun").is_none() {
        return;
    }
    let verdicts = ["reproduced", "direction only", "not reproduced", "not evaluated"];
    for (paper, figures, claims, format) in [
        ("die-binding", 3, 6, "svg"),
        ("lacr", 6, 10, "png"),
        ("soml", 5, 9, "svg"),
        // PEN: 7 figures and 10 claims of the main experiment, 13 figures and 15 claims
        // of the five extras with a CI-sized experiment (Fig. 3-5, 14, 15a-c, 15b, the
        // write-dominant shared traces).
        ("pen", 20, 25, "svg"),
        // Fig. 11 (erases) is not drawn: no GC for tbm in 2,000 requests. 9 figures of
        // the main experiment and 5 of the extras (Fig. 9, ablation, suspension, erases,
        // shared traces); 11 + 6 (Fig. 9) + 1 (shared traces) claims.
        ("mbm", 14, 18, "svg"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        let (stdout, _) = reproduce(paper, &a, &["--threads", "2", "--format", format]);
        assert!(stdout.starts_with("| claim | metric | comparison | paper | ours | verdict |"), "{stdout}");
        let first = tree(&a);
        let drawn: Vec<&String> = first
            .keys()
            .filter(|k| k.starts_with("figures/") && k.ends_with(&format!(".{format}")))
            .collect();
        assert!(drawn.len() >= figures, "{paper}: {drawn:?}");
        for f in &drawn {
            assert!(first.contains_key(&f.replace(&format!(".{format}"), ".csv")), "{f} without data");
            if format == "png" {
                assert_eq!(png_size(&a.join(f)), (960, 600));
            }
        }
        let index = String::from_utf8(first["README.md"].clone()).unwrap();
        for f in &drawn {
            assert!(index.contains(&format!("]({f})")), "{f} not in the index:\n{index}");
        }
        assert!(index.contains("### Fig. "), "{index}");
        let csv = String::from_utf8(first["claims.csv"].clone()).unwrap();
        assert_eq!(csv.lines().count(), 1 + claims, "{csv}");
        for l in csv.lines().skip(1) {
            assert!(verdicts.iter().any(|v| l.contains(&format!(",{v},"))), "{l}");
        }
        let json: serde_json::Value = serde_json::from_slice(&first["claims.json"]).unwrap();
        assert_eq!(json.as_array().unwrap().len(), claims);
        for key in ["metric", "direction", "paper_change", "our_change", "verdict"] {
            assert!(json[0].get(key).is_some(), "claims.json rows have {key}");
        }
        assert!(first.contains_key("sweep/results.compare.md"));
        if paper == "mbm" {
            // The extras run in the same command, each into its own sweep folder, with a
            // section in the index and their claims named by experiment.
            for x in ["chips", "ablation", "suspension", "erases", "shared"] {
                assert!(first.contains_key(&format!("sweep-{x}/results.compare.md")), "{x}");
                let section = format!("## Experiment {x}: `experiments/ci/mbm-{x}-tiny.toml`");
                assert!(index.contains(&section), "{section}");
            }
            assert!(csv.contains("[experiment chips]") && csv.contains("[experiment shared]"), "{csv}");
            // Fig. 9: every system at every chip count over TBM at 2 chips.
            let fig9 = String::from_utf8(first["figures/fig9-chips-mean-response.csv"].clone()).unwrap();
            assert!(fig9.contains(",mbm@8,") && fig9.contains(",sprinkler@4,"), "{fig9}");
            for l in fig9.lines().filter(|l| l.contains(",tbm@2,")) {
                assert!(l.ends_with(",1"), "{l}");
            }
            // The tail figures say which configuration they show (no MSNFS in --quick).
            let tail = String::from_utf8(first["figures/fig12a-msnfs-read-tail.svg"].clone()).unwrap();
            assert!(tail.contains("percentile; trace=hm_0-window1k, load=1"), "no configuration caption");
            let tail = String::from_utf8(first["figures/fig13b-financial-write-tail.csv"].clone()).unwrap();
            assert!(tail.contains("mbm,p99.999,") && tail.contains("tbm,p95,"), "{tail}");
        }

        reproduce(paper, &b, &["--threads", "1", "--format", format]);
        assert!(tree(&b) == first, "{paper}: another folder, one thread: other bytes");
        let (_, err) = reproduce(paper, &a, &["--format", format]);
        assert!(err.contains("to run") && err.contains(", 0 to run"), "{err}");
        assert!(tree(&a) == first, "{paper}: the rerun changed bytes");
    }
    // The bars of the die-binding Fig. 3: one per policy per group, six policies.
    let dir = tempfile::tempdir().unwrap();
    reproduce("die-binding", dir.path(), &[]);
    let s = parse_svg(&dir.path().join("figures/fig3-ssd1-write-response.svg"));
    let groups = csv_rows(&dir.path().join("figures/fig3-ssd1-write-response.csv")).len();
    for c in COLOURS {
        assert_eq!(s.count("rect", c), groups + 1, "{c}");
    }
    for p in ["static", "write-order", "queue", "state", "dynamic", "uq"] {
        assert!(s.has_text(p), "{p}");
    }
}

/// A paper's further experiments (PEN's extras) one at a time: `--part NAME` runs one
/// and writes its own index and claims (`README-NAME.md`, `claims-NAME.csv`) beside the
/// whole paper's; a later run without `--part` reuses its runs and lists every
/// experiment. An unknown name is a usage error naming them all (`main` first); the
/// extra without a CI-sized experiment (the MSR analogues) is listed as not run in
/// `--quick`, and asked for alone is a usage error saying what it needs; `--emit-slurm
/// --part NAME` emits that one experiment's array.
#[test]
fn reproduce_part_runs_one_experiment_of_a_paper() {
    if shared::shared_traces("reproduce_part_runs_one_experiment_of_a_paper").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        lamina()
            .args(["reproduce", "pen", "--quick"])
            .args(args)
            .arg("--experiments")
            .arg(root().join("experiments"))
            .output()
            .unwrap()
    };
    let e = failed(run(&["--part", "fig99"]));
    assert!(e.contains("--part fig99") && e.contains("main, fig3-5-blocksize"), "{e}");
    let e = failed(run(&["--part", "headline-msr12"]));
    assert!(e.contains("no --quick experiment") && e.contains("pen-msr12-traces.sh"), "{e}");
    let (script, _) = ok(run(&["--emit-slurm", "--part", "fig15b-timeline"]));
    assert_eq!(script.matches("--array=").count(), 1, "{script}");
    assert!(script.contains("sweep-fig15b-timeline") && !script.contains("pen-blocksize-tiny"), "{script}");
    assert!(script.contains("# When the array is done: lamina reproduce pen --quick --part fig15b-timeline"));
    let (script, _) = ok(run(&["--emit-slurm"]));
    assert_eq!(script.matches("--array=").count(), 6, "main and five extras: {script}");

    let (stdout, _) = reproduce("pen", dir.path(), &["--part", "fig15b-timeline"]);
    assert_eq!(stdout.lines().count(), 2 + 1, "one claim: {stdout}");
    assert!(!dir.path().join("claims.csv").exists() && !dir.path().join("README.md").exists());
    assert!(!dir.path().join("sweep").exists());
    let index = std::fs::read_to_string(dir.path().join("README-fig15b-timeline.md")).unwrap();
    // Both timelines drawn from the per-request logs, each with its window counts.
    for f in ["fig15b-write-timeline", "fig15b-write-timeline-quarter-load"] {
        assert!(index.contains(&format!("](figures/{f}.svg)")), "{f}:\n{index}");
        assert!(dir.path().join(format!("figures/{f}.csv")).is_file());
    }
    assert_eq!(index.matches("nftl-pen against nftl (").count(), 2, "{index}");
    let csv = std::fs::read_to_string(dir.path().join("claims-fig15b-timeline.csv")).unwrap();
    assert!(csv.lines().nth(1).unwrap().starts_with("pen-timeline-write-latency,"), "{csv}");

    // The whole paper: the part's finished runs are reused, the index has them all.
    let (_, err) = reproduce("pen", dir.path(), &[]);
    assert!(err.contains("sweep pen-timeline-tiny: 8 runs; executed 0, skipped 8"), "{err}");
    let top = std::fs::read_to_string(dir.path().join("README.md")).unwrap();
    for (x, spec) in [
        ("fig3-5-blocksize", "blocksize"),
        ("fig14-sensitivity", "sensitivity"),
        ("fig15ac-disturb-pbe", "disturb"),
        ("fig15b-timeline", "timeline"),
        ("shared", "shared"),
    ] {
        let section = format!("## Experiment {x}: `experiments/ci/pen-{spec}-tiny.toml`");
        assert!(top.contains(&section), "{section}:\n{top}");
        assert!(dir.path().join(format!("sweep-{x}/results.compare.md")).is_file(), "{x}");
    }
    assert!(top.contains("## Experiment headline-msr12: not run"), "{top}");
    assert!(top.contains("*Not run in --quick mode") && top.contains("pen-msr12-traces.sh"), "{top}");
    let csv = std::fs::read_to_string(dir.path().join("claims.csv")).unwrap();
    assert!(csv.contains("\npbe-waf,") && csv.contains("[experiment fig15ac-disturb-pbe]"), "{csv}");
    assert!(csv.contains("\nnftl-pen-write-latency,"), "{csv}");
}

/// Sharding and Slurm go through the sweep's own code: a shard runs its slice and says
/// how to finish; --emit-slurm prints the array job and the final reproduce step.
#[test]
fn reproduce_shards_and_emits_slurm_like_sweep() {
    if shared::shared_traces("reproduce_shards_and_emits_slurm_like_sweep").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (stdout, err) = reproduce("lacr", dir.path(), &["--shard", "1/4"]);
    assert!(stdout.is_empty() && err.contains("once every shard is done"), "{err}");
    assert!(!dir.path().join("claims.csv").exists());
    let (script, _) = reproduce("lacr", dir.path(), &["--emit-slurm", "--slurm-shards", "3"]);
    assert!(script.contains("--array=") && script.contains("--shard"), "{script}");
    assert!(script.contains("# When the array is done: lamina reproduce lacr --quick --out"), "{script}");
}

/// An experiment with a load axis (`trace.time_scale`, issue #10 item 3): the load
/// figure is drawn over it (one line per policy, a point per load), and the paper's
/// figures and claims are pinned to the recorded rate 1. Policies the experiment does
/// not run leave their claims "not evaluated". Bundled traces only: runs without
/// `../shared`.
#[test]
fn reproduce_draws_the_load_axis_and_pins_claims_to_the_recorded_rate() {
    let dir = tempfile::tempdir().unwrap();
    let exp = dir.path().join("experiments");
    std::fs::create_dir_all(exp.join("ci")).unwrap();
    write_spec(
        &exp.join("ci/die-binding-tiny.toml"),
        "db-load",
        r#"traces = ["traces/demo.trace"]
set = ["trace.limit=600"]
metrics = ["write.mean_ns", "all.mean_ns"]
baseline = { "sched.placement" = "static" }

[[axis]]
key = "preset"
values = ["die-binding-4x2", "die-binding-4x4"]

[[axis]]
key = "trace.time_scale"
values = [1.0, 0.1, 0.01]

[[axis]]
key = "sched.placement"
values = ["static", "queue", "uq"]
"#,
    );
    let out = dir.path().join("out");
    let (stdout, _) = ok(lamina()
        .args(["reproduce", "die-binding", "--quick", "--out"])
        .arg(&out)
        .arg("--experiments")
        .arg(&exp)
        .output()
        .unwrap());
    let load = out.join("figures/load-ssd1-write-response.svg");
    let s = parse_svg(&load);
    assert!(s.has_text("trace.time_scale (arrival gaps × this: smaller = heavier load)"), "{:?}", s.texts);
    let rows = csv_rows(&load.with_extension("csv"));
    assert_eq!(rows, [("static".to_owned(), 3), ("queue".to_owned(), 3), ("uq".to_owned(), 3)]);
    let claims = std::fs::read_to_string(out.join("claims.csv")).unwrap();
    let uq = claims.lines().find(|l| l.starts_with("uq-ssd1,")).unwrap();
    assert!(
        uq.contains("preset=die-binding-4x2, trace.time_scale=1") && uq.contains("geomean of 1 "),
        "{uq}"
    );
    let dynamic = claims.lines().find(|l| l.starts_with("dynamic-ssd1,")).unwrap();
    assert!(dynamic.contains(",n/a,not evaluated,"), "{dynamic}");
    assert!(stdout.contains("**not evaluated**"), "{stdout}");
    // Fig. 3 covers the recorded rate only: one group (the trace), no geomean row.
    let fig3 = csv_rows(&out.join("figures/fig3-ssd1-write-response.csv"));
    assert_eq!(fig3, [("demo".to_owned(), 3)]);
    let index = std::fs::read_to_string(out.join("README.md")).unwrap();
    assert!(index.contains("](figures/load-ssd1-write-response.svg)"), "{index}");
}
