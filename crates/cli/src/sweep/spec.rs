//! The sweep spec file (`SPEC.toml`) and its expansion into an ordered list of runs.
//!
//! A spec names a base configuration, the traces, the axes to vary and the metrics to
//! tabulate; [`Plan::from_spec`] resolves every run's full [`SimConfig`] up front (so a
//! bad key or value fails before anything runs), computes each trace's content digest
//! once, and keys every run by a hash of what determines its result. See `docs/sweeps.md`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::{Deserialize, Serialize};

use lamina_engine::config::{ConfigBuilder, SimConfig};
use lamina_engine::trace::TraceReader;

/// Return a bad-input error (exit code 2) with a `format!` message.
macro_rules! bad {
    ($($t:tt)*) => {
        return Err(crate::exit::usage(format!($($t)*)))
    };
}

/// Environment variable that overrides the spec's `trace_root`.
pub const TRACE_ROOT_ENV: &str = "LAMINA_TRACE_ROOT";

/// Version tag of the run-key derivation; bump it if the hashed material changes.
const KEY_DERIVATION: &str = "lamina-sweep-run-key v1";

/// The spec file as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpecFile {
    /// Sweep name (defaults to the spec file's stem).
    pub name: Option<String>,
    /// Free text, copied nowhere; for the reader of the spec.
    #[allow(dead_code)]
    pub description: Option<String>,
    /// Base device preset.
    pub preset: Option<String>,
    /// Config files (relative to the spec's directory), applied in order after the preset.
    #[serde(default)]
    pub configs: Vec<String>,
    /// Inline config table, same schema as a config file, applied after `configs`.
    pub base: Option<toml::Table>,
    /// `dotted.key=value` overrides applied after `base` (like `lamina run --set`).
    #[serde(default)]
    pub set: Vec<String>,
    /// Directory the trace paths are relative to (itself relative to the spec's directory).
    pub trace_root: Option<String>,
    /// Trace files: the outermost axis, called `trace`.
    pub traces: Vec<String>,
    /// Seeds: the innermost axis, called `seed` (absent: the base config's seed).
    #[serde(default)]
    pub seeds: Vec<u64>,
    /// Axes in order, outer to inner (`[[axis]]` tables).
    #[serde(default, rename = "axis")]
    pub axes: Vec<AxisSpec>,
    /// Dotted paths into the JSON report to tabulate, e.g. `write.mean_ns`.
    pub metrics: Vec<String>,
    /// `{ axis = value }`: the comparison table divides every metric by this value's.
    pub baseline: Option<toml::Table>,
    /// Write each run's per-request latency log beside its report
    /// (`runs/<key>.latency.csv`, the format of `lamina run --latency-log`).
    #[serde(default)]
    pub latency_logs: bool,
}

/// One `[[axis]]` table.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AxisSpec {
    /// The config key this axis sets (e.g. `sched.placement`, `preset`).
    pub key: Option<String>,
    /// Several keys set together; each value is then an array with one entry per key.
    pub keys: Option<Vec<String>>,
    /// Column name (defaults to `key`; required with `keys`).
    pub name: Option<String>,
    /// The values, in order.
    pub values: Vec<toml::Value>,
    /// Labels shown in tables (default: the value as text).
    pub labels: Option<Vec<String>>,
}

/// An axis after checking.
#[derive(Clone, Debug)]
pub struct Axis {
    /// Column name.
    pub name: String,
    /// The values: a label and the config assignments it makes.
    pub values: Vec<AxisValue>,
}

/// One value of an axis.
#[derive(Clone, Debug)]
pub struct AxisValue {
    /// Text in tables.
    pub label: String,
    /// `(dotted key, value)` assignments applied to the run's config.
    pub sets: Vec<(String, toml::Value)>,
}

/// The resolved sweep: axes and every run, in the cartesian-product order of the spec
/// (first axis outermost).
pub struct Plan {
    /// The serializable part, identical on every machine (no absolute paths).
    pub info: PlanInfo,
    /// Per-run execution details, parallel to `info.runs`.
    pub runs: Vec<RunExec>,
    /// What the user should know before running it (printed on stderr).
    pub warnings: Vec<String>,
}

/// What `plan.json` records: enough to tabulate and to check completeness without the
/// spec or the traces.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlanInfo {
    /// Format marker.
    pub lamina_sweep_plan: u32,
    /// Sweep name.
    pub name: String,
    /// Axis (column) names, outer to inner.
    pub axes: Vec<String>,
    /// Metrics to tabulate.
    pub metrics: Vec<String>,
    /// Baseline for the comparison table.
    pub baseline: Option<Baseline>,
    /// Every run, in order.
    pub runs: Vec<RunInfo>,
    /// Each run also writes `runs/<key>.latency.csv` (the spec's `latency_logs`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub latency_logs: bool,
}

/// The comparison baseline: a value of one axis.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Baseline {
    /// Axis name.
    pub axis: String,
    /// Label of the baseline value.
    pub label: String,
}

/// One run in `plan.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunInfo {
    /// Position in the product order (0-based).
    pub index: usize,
    /// Hash of version + resolved config + trace digest + seed; the report's file stem.
    pub key: String,
    /// One label per axis.
    pub labels: Vec<String>,
    /// The resolved seed.
    pub seed: u64,
    /// Content digest of the trace.
    pub trace_digest: String,
}

/// What is needed to execute a run.
pub struct RunExec {
    /// The resolved configuration.
    pub cfg: SimConfig,
    /// The trace file.
    pub trace: PathBuf,
}

/// Where the traces are: `--trace-root`, else `$LAMINA_TRACE_ROOT`, else the spec's
/// `trace_root` relative to the spec's directory, else the spec's directory.
pub fn trace_root(spec_path: &Path, spec: &SpecFile, flag: Option<&Path>) -> PathBuf {
    if let Some(f) = flag {
        return f.to_path_buf();
    }
    if let Some(env) = std::env::var_os(TRACE_ROOT_ENV).filter(|v| !v.is_empty()) {
        return PathBuf::from(env);
    }
    let dir = spec_dir(spec_path);
    match &spec.trace_root {
        Some(r) => dir.join(r),
        None => dir,
    }
}

fn spec_dir(spec_path: &Path) -> PathBuf {
    match spec_path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Read and parse a spec file.
pub fn read_spec(path: &Path) -> anyhow::Result<SpecFile> {
    // A missing or malformed spec is bad input (exit code 2).
    let text = std::fs::read_to_string(path)
        .map_err(|e| crate::exit::usage(format!("reading spec {}: {e}", path.display())))?;
    toml::from_str(&text).map_err(|e| crate::exit::usage(format!("{}: {e}", path.display())))
}

/// The text of a value in a table: strings bare, everything else as TOML.
fn label_of(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn check_axes(spec_path: &Path, spec: &SpecFile) -> anyhow::Result<Vec<Axis>> {
    let at = spec_path.display();
    let mut axes = Vec::new();
    if spec.traces.is_empty() {
        bad!("{at}: `traces` is empty: a sweep needs at least one trace, e.g. traces = [\"x.trace\"]");
    }
    axes.push(Axis {
        name: "trace".into(),
        values: spec.traces.iter().map(|t| AxisValue { label: t.clone(), sets: Vec::new() }).collect(),
    });
    for (i, a) in spec.axes.iter().enumerate() {
        let keys: Vec<String> = match (&a.key, &a.keys) {
            (Some(k), None) => vec![k.clone()],
            (None, Some(ks)) if !ks.is_empty() => ks.clone(),
            _ => bad!("{at}: axis {}: give exactly one of `key` or a non-empty `keys`", i + 1),
        };
        let name = match (&a.name, &a.key) {
            (Some(n), _) => n.clone(),
            (None, Some(k)) => k.clone(),
            (None, None) => bad!("{at}: axis {}: an axis with `keys` needs a `name`", i + 1),
        };
        if a.values.is_empty() {
            bad!("{at}: axis {name}: `values` is empty: give at least one value");
        }
        if let Some(l) = &a.labels
            && l.len() != a.values.len()
        {
            bad!(
                "{at}: axis {name}: {} labels for {} values: give one label per value",
                l.len(),
                a.values.len()
            );
        }
        let mut values = Vec::new();
        for (j, v) in a.values.iter().enumerate() {
            let parts: Vec<toml::Value> = if keys.len() == 1 {
                vec![v.clone()]
            } else {
                match v {
                    toml::Value::Array(xs) if xs.len() == keys.len() => xs.clone(),
                    _ => bad!(
                        "{at}: axis {name}: value {} must be an array of {} entries (one per key)",
                        j + 1,
                        keys.len()
                    ),
                }
            };
            let label = match &a.labels {
                Some(l) => l[j].clone(),
                None => parts.iter().map(label_of).collect::<Vec<_>>().join("/"),
            };
            values.push(AxisValue { label, sets: keys.iter().cloned().zip(parts).collect() });
        }
        let mut seen = BTreeSet::new();
        for v in &values {
            if !seen.insert(v.label.as_str()) {
                bad!(
                    "{at}: axis {name}: label {:?} appears twice: give each value a distinct label (`labels`)",
                    v.label
                );
            }
        }
        axes.push(Axis { name, values });
    }
    if !spec.seeds.is_empty() {
        axes.push(Axis {
            name: "seed".into(),
            values: spec
                .seeds
                .iter()
                .map(|s| AxisValue {
                    label: s.to_string(),
                    sets: vec![("seed".into(), toml::Value::Integer(*s as i64))],
                })
                .collect(),
        });
    }
    let mut names = BTreeSet::new();
    for a in &axes {
        if !names.insert(a.name.as_str()) {
            bad!("{at}: two axes are named {:?}: rename one with `name`", a.name);
        }
    }
    Ok(axes)
}

fn check_baseline(spec_path: &Path, spec: &SpecFile, axes: &[Axis]) -> anyhow::Result<Option<Baseline>> {
    let Some(b) = &spec.baseline else { return Ok(None) };
    let at = spec_path.display();
    if b.len() != 1 {
        bad!(
            "{at}: `baseline` must name exactly one axis, e.g. baseline = {{ \"sched.placement\" = \"static\" }}"
        );
    }
    let (axis, value) = b.iter().next().expect("one entry");
    let Some(a) = axes.iter().find(|a| &a.name == axis) else {
        let names: Vec<&str> = axes.iter().map(|a| a.name.as_str()).collect();
        bad!("{at}: baseline axis {axis:?} is not an axis (axes: {})", names.join(", "));
    };
    let label = label_of(value);
    if !a.values.iter().any(|v| v.label == label) {
        let labels: Vec<String> = a.values.iter().map(|v| format!("{:?}", v.label)).collect();
        bad!(
            "{at}: baseline {axis} = {label:?} is not one of the axis's values (values: {})",
            labels.join(", ")
        );
    }
    Ok(Some(Baseline { axis: axis.clone(), label }))
}

/// The content digest of a trace (the one its report records), reading it once.
fn trace_digest(path: &Path, cfg: &SimConfig) -> anyhow::Result<String> {
    // Parsing stops after one request; the reader then digests the rest of the input.
    let mut opts = cfg.trace.clone();
    opts.skip = 0;
    opts.limit = Some(1);
    let mut reader =
        TraceReader::open(path, &opts, u64::MAX).with_context(|| format!("trace {}", path.display()))?;
    for r in reader.by_ref() {
        r.with_context(|| format!("trace {}", path.display()))?;
    }
    let s = reader.summary();
    if !s.complete || s.digest.is_empty() {
        bad!("trace {}: could not read it to the end", path.display());
    }
    Ok(s.digest)
}

/// The run key: XXH3-128 of the key-derivation tag, the Lamina version, the resolved
/// config's canonical JSON, the trace digest and the seed, as 32 hex digits.
pub fn run_key(cfg: &SimConfig, trace_digest: &str) -> String {
    let canonical = serde_json::to_string(cfg).expect("config serializes");
    let material = format!(
        "{KEY_DERIVATION}\nlamina {}\nconfig {canonical}\ntrace {trace_digest}\nseed {}\n",
        lamina_engine::VERSION,
        cfg.seed
    );
    format!("{:032x}", xxhash_rust::xxh3::xxh3_128(material.as_bytes()))
}

impl Plan {
    /// Expand `spec` (read from `spec_path`) into every run, resolving configs and trace
    /// digests. `root` is where trace paths are relative to.
    pub fn from_spec(spec_path: &Path, spec: &SpecFile, root: &Path) -> anyhow::Result<Plan> {
        let at = spec_path.display();
        let axes = check_axes(spec_path, spec)?;
        let baseline = check_baseline(spec_path, spec, &axes)?;
        if spec.metrics.is_empty() {
            bad!("{at}: `metrics` is empty: name at least one, e.g. metrics = [\"write.mean_ns\"]");
        }
        // A metric listed twice would be tabulated twice: refused, not silently merged.
        if let [first, ..] = super::metrics::duplicates(&spec.metrics)[..] {
            bad!("{at}: `metrics` lists {first:?} more than once: remove the repeats");
        }
        let metric_names = super::metrics::MetricNames::of_report();
        let dir = spec_dir(spec_path);
        let mut base_configs = Vec::new();
        for c in &spec.configs {
            let p = dir.join(c);
            let text = match std::fs::read_to_string(&p) {
                Ok(t) => t,
                Err(e) => bad!(
                    "{at}: `configs` entry {c:?}: cannot read {} ({e}); config paths are relative to the \
                     spec's directory",
                    p.display()
                ),
            };
            base_configs.push((p.display().to_string(), text));
        }
        let base_inline = match &spec.base {
            Some(t) => Some(toml::to_string(t).context("serializing [base]")?),
            None => None,
        };
        let total: usize = axes.iter().map(|a| a.values.len()).product();
        let mut digests: BTreeMap<usize, String> = BTreeMap::new();
        let mut info_runs = Vec::with_capacity(total);
        let mut execs = Vec::with_capacity(total);
        let mut by_key: BTreeMap<String, usize> = BTreeMap::new();
        for index in 0..total {
            // Mixed-radix decomposition: the last axis varies fastest.
            let mut rest = index;
            let mut picks = vec![0; axes.len()];
            for (k, a) in axes.iter().enumerate().rev() {
                picks[k] = rest % a.values.len();
                rest /= a.values.len();
            }
            let labels: Vec<String> =
                axes.iter().zip(&picks).map(|(a, &p)| a.values[p].label.clone()).collect();
            let what = || {
                let parts: Vec<String> =
                    axes.iter().zip(&labels).map(|(a, l)| format!("{}={l}", a.name)).collect();
                format!("{at}: run {index} ({})", parts.join(", "))
            };
            let mut b = ConfigBuilder::new();
            if let Some(p) = &spec.preset {
                b = b.preset(p).with_context(what)?;
            }
            for (name, text) in &base_configs {
                b = b.toml(name, text).with_context(what)?;
            }
            if let Some(text) = &base_inline {
                b = b.toml(&format!("{at} [base]"), text).with_context(what)?;
            }
            for s in &spec.set {
                b = b.set(s).with_context(what)?;
            }
            for (a, &p) in axes.iter().zip(&picks) {
                for (key, value) in &a.values[p].sets {
                    b = b.set(&format!("{key}={value}")).with_context(what)?;
                }
            }
            // Checked against the device too (the FTL, the buffer, remapping), so that a run
            // that cannot be built is refused before any run, saying where its key was set.
            let cfg = b.build_checked().with_context(what)?;
            // Every metric names a value the reports will have, checked before any run
            // (the `config.` ones against each run's resolved config).
            if index == 0 || spec.metrics.iter().any(|m| m.starts_with("config.")) {
                let cfg_json = serde_json::to_value(&cfg).expect("config serializes");
                for m in &spec.metrics {
                    if let Some(why) = metric_names.problem(m, &cfg_json) {
                        bad!(
                            "{at}: `metrics` entry {m:?}: {why}; `lamina sweep --list-metrics` lists every \
                             metric (the report's values, also in {})",
                            super::metrics::schema_file()
                        );
                    }
                }
            }
            check_percentile_metrics(&spec.metrics, &cfg).with_context(what)?;
            let trace_pick = picks[0];
            let trace = root.join(&spec.traces[trace_pick]);
            if !trace.is_file() {
                bad!(
                    "{at}: trace {} not found at {} (set the root with --trace-root or ${TRACE_ROOT_ENV})",
                    spec.traces[trace_pick],
                    trace.display()
                );
            }
            let digest = match digests.get(&trace_pick) {
                Some(d) => d.clone(),
                None => {
                    let d = trace_digest(&trace, &cfg)?;
                    digests.insert(trace_pick, d.clone());
                    d
                }
            };
            let key = run_key(&cfg, &digest);
            if let Some(other) = by_key.insert(key.clone(), index) {
                bad!(
                    "{at}: runs {other} and {index} resolve to the same configuration, trace and seed \
                     (two axis values that mean the same thing?)"
                );
            }
            info_runs.push(RunInfo { index, key, labels, seed: cfg.seed, trace_digest: digest });
            execs.push(RunExec { cfg, trace });
        }
        let name = spec.name.clone().unwrap_or_else(|| {
            spec_path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "sweep".into())
        });
        let info = PlanInfo {
            lamina_sweep_plan: 1,
            name,
            axes: axes.iter().map(|a| a.name.clone()).collect(),
            metrics: spec.metrics.clone(),
            latency_logs: spec.latency_logs,
            baseline,
            runs: info_runs,
        };
        let mut warnings = Vec::new();
        let blind = execs.iter().filter(|r| !r.cfg.seed_matters()).count();
        if spec.seeds.len() > 1 && blind > 0 {
            // Issue #8 item 5: a seed axis over configurations that draw no random
            // numbers repeats identical runs.
            warnings.push(format!(
                "the seed axis has {} values, but {blind} of {} runs draw no random numbers (only [precondition] does), \
                 so their seeds give identical results: add a [precondition] section or drop the seed axis",
                spec.seeds.len(),
                execs.len()
            ));
        }
        Ok(Plan { info, runs: execs, warnings })
    }
}

/// A metric naming a percentile field (`read.p99_5_ns`) that the run's report will not
/// have, because its `stats.percentiles` lacks that percentile: refused before any run.
fn check_percentile_metrics(metrics: &[String], cfg: &SimConfig) -> anyhow::Result<()> {
    use lamina_engine::stats::percentile_of_key;
    const SUMMARIES: [&str; 6] = ["read", "write", "all", "read_wait", "write_wait", "all_wait"];
    for m in metrics {
        let Some((class, field)) = m.split_once('.') else { continue };
        let Some(p) = percentile_of_key(field).filter(|_| SUMMARIES.contains(&class)) else { continue };
        let list = &cfg.stats.percentiles;
        if !list.contains(&p) {
            let shown: Vec<String> = list.iter().map(f64::to_string).collect();
            bad!(
                "`metrics` entry {m:?}: the report gives the percentiles of stats.percentiles ({}), which lacks {p}: \
                 add it, e.g. `set = [\"stats.percentiles=[{}]\"]` in the spec",
                shown.join(", "),
                with_percentile(list, p)
            );
        }
    }
    Ok(())
}

/// `list` with `p` inserted in order, as TOML array items.
fn with_percentile(list: &[f64], p: f64) -> String {
    let mut v = list.to_vec();
    v.push(p);
    v.sort_by(f64::total_cmp);
    v.iter().map(f64::to_string).collect::<Vec<_>>().join(", ")
}

impl PlanInfo {
    /// `plan.json` bytes (deterministic).
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("plan serializes");
        s.push('\n');
        s
    }
}
