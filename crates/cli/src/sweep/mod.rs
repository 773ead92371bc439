//! `lamina sweep` and `lamina merge`: many runs from one spec, on all cores or as a
//! Slurm job array, with resumable, content-keyed results.
//!
//! Layout of an output directory: `plan.json` (the sweep's runs, axes, metrics and
//! baseline; no absolute paths), `runs/<key>.json` (one report per finished run, written
//! to a temporary name and renamed, so a file that exists is complete), and, once every
//! run is there, `results.csv`, `results.compare.csv` and `results.compare.md`.

pub mod metrics;
pub mod slurm;
pub mod spec;
mod table;

use std::collections::BTreeMap;
use std::io::IsTerminal as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::exit::{Failure, Kind, kind_of, usage};
use crate::out::{self, OutputFile, write_atomic};
use std::time::Instant;

use anyhow::{Context, bail};
use clap::Args;

use spec::{Plan, PlanInfo};

/// A `K/N` shard: runs whose index `i` has `i mod N == K - 1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// 1-based shard number.
    pub k: usize,
    /// Shard count.
    pub n: usize,
}

impl std::str::FromStr for Shard {
    type Err = String;
    fn from_str(s: &str) -> Result<Shard, String> {
        let bad = || format!("{s:?}: expected K/N with 1 <= K <= N, e.g. 2/8");
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let k: usize = k.trim().parse().map_err(|_| bad())?;
        let n: usize = n.trim().parse().map_err(|_| bad())?;
        if n == 0 || k == 0 || k > n {
            return Err(bad());
        }
        Ok(Shard { k, n })
    }
}

impl Shard {
    fn owns(self, index: usize) -> bool {
        index % self.n == self.k - 1
    }
}

/// Arguments of `lamina sweep`.
#[derive(Args, Debug)]
pub struct SweepArgs {
    /// The sweep spec (see docs/sweeps.md).
    #[arg(required_unless_present = "list_metrics")]
    spec: Option<PathBuf>,
    /// Print every metric name a spec's `metrics` may list (the values of the JSON
    /// report) and exit.
    #[arg(long)]
    list_metrics: bool,
    /// Output directory (default: `sweeps/<spec name>`).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    #[command(flatten)]
    exec: ExecArgs,
    /// Print the planned runs (index, shard, key, axis values) and exit.
    #[arg(long)]
    list: bool,
    #[command(flatten)]
    slurm: SlurmArgs,
}

/// How a sweep's runs execute (flags of `lamina sweep` and `lamina reproduce`).
#[derive(Args, Debug)]
pub struct ExecArgs {
    /// Worker threads (default: all cores). Results do not depend on it.
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// Run only the K-th of N deterministic slices (run i belongs to shard i mod N + 1).
    #[arg(long, value_name = "K/N")]
    pub shard: Option<Shard>,
    /// Directory the spec's trace paths are relative to (overrides $LAMINA_TRACE_ROOT and
    /// the spec's `trace_root`).
    #[arg(long, value_name = "DIR")]
    pub trace_root: Option<PathBuf>,
    /// Memory for traces parsed once and shared by the runs that replay them (MiB; 0:
    /// every run parses its trace). Results do not depend on it.
    #[arg(long, value_name = "MIB", default_value_t = DEFAULT_TRACE_CACHE_MIB)]
    pub trace_cache_mib: u64,
}

/// Default of `--trace-cache-mib`: 6.7 M parsed requests of 40 bytes.
pub const DEFAULT_TRACE_CACHE_MIB: u64 = 256;

/// The `--emit-slurm` flags (of `lamina sweep` and `lamina reproduce`).
#[derive(Args, Debug)]
pub struct SlurmArgs {
    /// Print an sbatch job-array script (plus the dependent merge job) and exit.
    #[arg(long)]
    pub emit_slurm: bool,
    /// Array tasks in the emitted Slurm script.
    #[arg(long, value_name = "N", default_value_t = 8)]
    slurm_shards: usize,
    /// CPUs per array task in the emitted Slurm script (each task uses them as --threads).
    #[arg(long, value_name = "N", default_value_t = 1)]
    slurm_cpus: usize,
    /// Time limit per array task in the emitted Slurm script (sbatch --time).
    #[arg(long, value_name = "TIME")]
    slurm_time: Option<String>,
    /// Partition for the emitted Slurm script (sbatch --partition).
    #[arg(long, value_name = "NAME")]
    slurm_partition: Option<String>,
}

impl SlurmArgs {
    /// The submit script for the sweep of `spec_path` into `out`.
    pub fn script(
        &self,
        spec_path: &Path,
        out: &Path,
        trace_root: Option<&Path>,
        info: &PlanInfo,
    ) -> anyhow::Result<String> {
        let opts = slurm::SlurmOptions {
            shards: self.slurm_shards,
            cpus: self.slurm_cpus,
            time: self.slurm_time.clone(),
            partition: self.slurm_partition.clone(),
        };
        let root = match trace_root {
            Some(r) => Some(r.to_path_buf()),
            None => std::env::var_os(spec::TRACE_ROOT_ENV).filter(|v| !v.is_empty()).map(PathBuf::from),
        };
        slurm::script(spec_path, out, root.as_deref(), info, &opts)
    }
}

/// Arguments of `lamina merge`.
#[derive(Args, Debug)]
pub struct MergeArgs {
    /// Output directories of `lamina sweep` (e.g. one per shard).
    #[arg(required = true)]
    dirs: Vec<PathBuf>,
    /// The per-run CSV to write; the comparison goes beside it (`<stem>.compare.csv/.md`).
    #[arg(long, value_name = "FILE.csv")]
    out: PathBuf,
    /// Check against this spec (re-planned from the traces) instead of the dirs' plan.json.
    #[arg(long, value_name = "SPEC.toml")]
    spec: Option<PathBuf>,
    /// Trace root for `--spec` (as for `lamina sweep`).
    #[arg(long, value_name = "DIR")]
    trace_root: Option<PathBuf>,
}

const PLAN_FILE: &str = "plan.json";
const RUNS_DIR: &str = "runs";

/// Where a run's report lies in a sweep directory.
pub fn run_path(dir: &Path, key: &str) -> PathBuf {
    dir.join(RUNS_DIR).join(format!("{key}.json"))
}

/// Where a run's latency log lies in a sweep directory (spec key `latency_logs`).
pub fn log_path(dir: &Path, key: &str) -> PathBuf {
    dir.join(RUNS_DIR).join(format!("{key}.latency.csv"))
}

/// Replay one run, with its latency log written to `log` (put in place before the
/// report, whose presence marks the run done) when given.
/// `stats` says whether the run may record its statistics on a thread of its own.
fn replay_run(
    exec: &spec::RunExec,
    log: Option<&Path>,
    stats: lamina_engine::StatsThreadMode,
    cache: &lamina_engine::TraceCache,
) -> anyhow::Result<lamina_engine::report::Report> {
    let builder = lamina_engine::SimulationBuilder::new(exec.cfg.clone()).stats_thread(stats);
    let run = |builder| lamina_engine::run_built_cached(builder, &exec.trace, Some(cache), &mut |_| {});
    let Some(log) = log else {
        return Ok(run(builder)?.0);
    };
    let mut file = OutputFile::create(log)?;
    let builder = builder.latency_log(lamina_engine::LatencyLog::new(file.stream()?));
    let (report, mut sim) = run(builder)?;
    let log = sim.take_latency_log().expect("the run was given a latency log");
    crate::run_cmd::finish_log(log, file)?;
    Ok(report)
}

/// A finished run's report, if `path` holds one for this run.
fn load_report(path: &Path, digest: &str) -> Option<serde_json::Value> {
    let bytes = std::fs::read(path).ok()?;
    let v: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    (v["trace"]["digest"] == digest).then_some(v)
}

/// Whether `dir` holds run `r` finished: a valid report (see [`load_report`]) and, when
/// the plan writes latency logs, its log (a run finished before `latency_logs` was
/// switched on has none, and runs again to write it).
fn is_done(info: &PlanInfo, dir: &Path, r: &spec::RunInfo) -> bool {
    load_report(&run_path(dir, &r.key), &r.trace_digest).is_some()
        && (!info.latency_logs || log_path(dir, &r.key).is_file())
}

/// The prefix of the shard directories the `--emit-slurm` script's array tasks write
/// into (`OUT/shard-K`).
pub const SHARD_DIR_PREFIX: &str = "shard-";

/// The shard directories `out` holds (`out/shard-K`, as the `--emit-slurm` script's
/// array tasks write them), in name order.
fn shard_dirs(out: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let Ok(entries) = std::fs::read_dir(out) else { return Ok(Vec::new()) };
    let mut dirs = Vec::new();
    for e in entries {
        let e = e.with_context(|| format!("listing {}", out.display()))?;
        let name = e.file_name().to_string_lossy().into_owned();
        let numbered = name
            .strip_prefix(SHARD_DIR_PREFIX)
            .is_some_and(|k| !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()));
        if numbered && e.path().is_dir() {
            dirs.push(e.path());
        }
    }
    dirs.sort();
    Ok(dirs)
}

/// Copy `from` to `to` atomically (written beside `to`, then renamed).
fn copy_atomic(from: &Path, to: &Path) -> anyhow::Result<()> {
    let mut src = std::fs::File::open(from).with_context(|| format!("reading {}", from.display()))?;
    let mut f = OutputFile::create(to)?;
    std::io::copy(&mut src, f.writer())
        .with_context(|| format!("copying {} to {}", from.display(), to.display()))?;
    f.commit()
}

/// Gather into `out/runs` the finished runs of this plan that the array tasks of the
/// `--emit-slurm` script left in `out/shard-K/runs` and `out` lacks, each checked as a
/// resumed run is (its report valid for the run's trace, and its latency log there when
/// the plan writes logs); the log is put in place before the report, whose presence
/// marks the run done. Returns how many were gathered, so the sweep (or `lamina
/// reproduce`) run after the array reruns nothing the shards finished.
fn gather_shard_runs(info: &PlanInfo, out: &Path) -> anyhow::Result<usize> {
    let shards = shard_dirs(out)?;
    if shards.is_empty() {
        return Ok(0);
    }
    let mut gathered = 0;
    for r in info.runs.iter().filter(|r| !is_done(info, out, r)) {
        let Some(shard) = shards.iter().find(|d| is_done(info, d, r)) else { continue };
        if info.latency_logs {
            copy_atomic(&log_path(shard, &r.key), &log_path(out, &r.key))?;
        }
        copy_atomic(&run_path(shard, &r.key), &run_path(out, &r.key))?;
        gathered += 1;
    }
    Ok(gathered)
}

/// Plan the sweep of a spec file (warnings on standard error).
pub fn plan_for(spec_path: &Path, trace_root_flag: Option<&Path>) -> anyhow::Result<Plan> {
    let spec = spec::read_spec(spec_path)?;
    let root = spec::trace_root(spec_path, &spec, trace_root_flag);
    let plan = Plan::from_spec(spec_path, &spec, &root)?;
    for w in &plan.warnings {
        eprintln!("warning: {w}");
    }
    Ok(plan)
}

/// Where the comparison files of `results` go.
fn sibling(results: &Path, suffix: &str) -> PathBuf {
    let stem =
        results.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "results".into());
    results.with_file_name(format!("{stem}{suffix}"))
}

/// The table files of a sweep or merge, prepared (checked writable) before any work.
struct TableFiles {
    results: (PathBuf, OutputFile),
    /// The comparison CSV and markdown, when the plan has a baseline.
    compare: Option<[(PathBuf, OutputFile); 2]>,
}

impl TableFiles {
    fn prepare(plan: &PlanInfo, results: &Path) -> anyhow::Result<TableFiles> {
        let file = |p: PathBuf| -> anyhow::Result<(PathBuf, OutputFile)> {
            let f = OutputFile::create(&p)?;
            Ok((p, f))
        };
        let compare = match plan.baseline {
            Some(_) => {
                Some([file(sibling(results, ".compare.csv"))?, file(sibling(results, ".compare.md"))?])
            }
            None => None,
        };
        Ok(TableFiles { results: file(results.to_path_buf())?, compare })
    }

    /// Write the tables, print the comparison on standard output and the file names on
    /// standard error.
    fn write(self, plan: &PlanInfo, reports: &[serde_json::Value], print: bool) -> anyhow::Result<()> {
        let t = table::build(plan, reports)?;
        let mut written = Vec::new();
        let mut put = |(path, mut f): (PathBuf, OutputFile), text: &str| -> anyhow::Result<()> {
            f.write_all(text.as_bytes())?;
            f.commit()?;
            written.push(path.display().to_string());
            Ok(())
        };
        put(self.results, &t.results_csv)?;
        if let Some([csv, md]) = self.compare {
            put(csv, &t.compare_csv)?;
            put(md, &t.compare_md)?;
        }
        eprintln!("tables: {}", written.join(", "));
        if print && plan.baseline.is_some() {
            out::print(&t.compare_md)?;
        }
        Ok(())
    }
}

/// Progress reporting: a bar on a terminal, one line per finished run otherwise.
struct Progress {
    bar: Option<indicatif::ProgressBar>,
    done: AtomicUsize,
    total: usize,
}

impl Progress {
    fn new(total: usize) -> Progress {
        let bar = std::io::stderr().is_terminal().then(|| {
            let b = indicatif::ProgressBar::new(total as u64);
            b.set_style(
                indicatif::ProgressStyle::with_template(
                    "{elapsed_precise} [{bar:40}] {pos}/{len} runs, eta {eta} {msg}",
                )
                .expect("template is valid")
                .progress_chars("=> "),
            );
            b
        });
        Progress { bar, done: AtomicUsize::new(0), total }
    }

    fn finished(&self, line: String) {
        let n = self.done.fetch_add(1, Ordering::Relaxed) + 1;
        match &self.bar {
            Some(b) => {
                b.set_message(line);
                b.inc(1);
            }
            None => eprintln!("[{n}/{}] {line}", self.total),
        }
    }

    fn end(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

/// Run `lamina sweep`.
pub fn sweep(args: SweepArgs) -> anyhow::Result<()> {
    if args.list_metrics {
        let mut text = metrics::MetricNames::of_report().list().join("\n");
        text.push_str(
            "\n# <P>: each percentile of the runs' stats.percentiles, `_` for the point (p99_9_ns);\n\
             # <key>: a dotted path into the resolved config (config.nand.geometry.layers)\n",
        );
        return out::print(&text);
    }
    let spec_path = args.spec.clone().expect("clap requires the spec without --list-metrics");
    let plan = plan_for(&spec_path, args.exec.trace_root.as_deref())?;
    let info = &plan.info;
    let out = args.out.clone().unwrap_or_else(|| PathBuf::from("sweeps").join(&info.name));
    if args.list {
        use std::io::Write as _;
        let mut stdout = std::io::stdout().lock();
        for r in &info.runs {
            let shard =
                args.exec.shard.map_or(String::new(), |s| format!(" shard {}/{}", r.index % s.n + 1, s.n));
            let axes: Vec<String> =
                info.axes.iter().zip(&r.labels).map(|(a, l)| format!("{a}={l}")).collect();
            // A closed pipe (`| head`) ends the listing quietly.
            if writeln!(stdout, "{:>5}{shard} {} {}", r.index, r.key, axes.join(" ")).is_err() {
                break;
            }
        }
        return Ok(());
    }
    if args.slurm.emit_slurm {
        return out::print(&args.slurm.script(&spec_path, &out, args.exec.trace_root.as_deref(), info)?);
    }
    if execute(&plan, &out, &args.exec)? {
        write_tables(info, &out, true)?;
    }
    Ok(())
}

/// Every run's report when all are in `out`, in plan order.
pub fn complete_reports(info: &PlanInfo, out: &Path) -> Option<Vec<serde_json::Value>> {
    info.runs.iter().map(|r| load_report(&run_path(out, &r.key), &r.trace_digest)).collect()
}

/// Write the result tables of a complete sweep in `out`; `print`: the comparison on
/// standard output too.
pub fn write_tables(info: &PlanInfo, out: &Path, print: bool) -> anyhow::Result<()> {
    let reports = complete_reports(info, out).context("every run of the sweep is there")?;
    TableFiles::prepare(info, &out.join("results.csv"))?.write(info, &reports, print)
}

/// Run the plan's runs that `exec.shard` owns and `out` does not hold yet (resumable), on
/// `exec.threads` workers; true when every run of the sweep is then in `out`.
pub fn execute(plan: &Plan, out: &Path, exec: &ExecArgs) -> anyhow::Result<bool> {
    let (threads, shard) = (exec.threads, exec.shard);
    let info = &plan.info;
    std::fs::create_dir_all(out.join(RUNS_DIR))
        .map_err(|e| usage(format!("output directory {}: {e}", out.display())))?;
    write_atomic(&out.join(PLAN_FILE), info.to_json().as_bytes())?;
    // The table files are checked writable before any run.
    drop(TableFiles::prepare(info, &out.join("results.csv"))?);

    // The runs the array tasks of an `--emit-slurm` script finished into `out/shard-K`.
    let gathered = gather_shard_runs(info, out)?;
    if gathered > 0 {
        eprintln!(
            "sweep {}: gathered {gathered} finished run(s) from the shard directories {}/{SHARD_DIR_PREFIX}*",
            info.name,
            out.display()
        );
    }
    let mine: Vec<usize> = (0..info.runs.len()).filter(|&i| shard.is_none_or(|s| s.owns(i))).collect();
    // A run whose report is there but whose latency log is not (done before the spec
    // asked for logs) runs again: said here, never left without its log.
    let unlogged = mine
        .iter()
        .filter(|&&i| {
            let r = &info.runs[i];
            info.latency_logs
                && load_report(&run_path(out, &r.key), &r.trace_digest).is_some()
                && !log_path(out, &r.key).is_file()
        })
        .count();
    if unlogged > 0 {
        eprintln!(
            "note: {unlogged} run(s) done earlier have no latency log (the spec's `latency_logs` was off \
             then); running them again to write it (their reports do not change)"
        );
    }
    let pending: Vec<usize> = mine.iter().copied().filter(|&i| !is_done(info, out, &info.runs[i])).collect();
    let earlier = mine.len() - pending.len();
    let scope = match shard {
        Some(s) => format!("shard {}/{}: {} of {} runs", s.k, s.n, mine.len(), info.runs.len()),
        None => format!("{} runs", info.runs.len()),
    };
    eprintln!(
        "sweep {}: {scope}, {earlier} done earlier, {} to run, in {}",
        info.name,
        pending.len(),
        out.display()
    );

    // A run that cannot be built here (over this machine's memory limit) is refused
    // before any run starts, not after the runs before it in the plan have spent their time.
    let mut unbuildable: Vec<anyhow::Error> = Vec::new();
    let mut needs: Vec<u64> = Vec::with_capacity(pending.len());
    for &i in &pending {
        match lamina_engine::SimulationBuilder::new(plan.runs[i].cfg.clone()).check() {
            Ok(budget) => needs.push(budget.full_bytes()),
            Err(e) => {
                let r = &info.runs[i];
                let axes: Vec<String> =
                    info.axes.iter().zip(&r.labels).map(|(a, l)| format!("{a}={l}")).collect();
                unbuildable.push(anyhow::Error::new(e).context(format!(
                    "run {} ({})",
                    r.index,
                    axes.join(", ")
                )));
            }
        }
    }
    let runs: Vec<String> = unbuildable.iter().map(|e| e.to_string()).collect();
    if let Some(first) = unbuildable.into_iter().next() {
        return Err(match runs.len() {
            1 => first.context("none of the runs was started"),
            n => first.context(format!(
                "none of the runs was started: {n} cannot be built here ({}); the first of them",
                runs.join(", ")
            )),
        });
    }
    let threads = threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    if threads == 0 {
        return Err(usage("--threads must be at least 1"));
    }
    // Each run fits the limit alone; `threads` of them run at once.
    needs.sort_unstable_by(|a, b| b.cmp(a));
    let together: u64 = needs.iter().take(threads).sum();
    if let Ok(Some(limit)) = lamina_engine::budget::MemoryLimit::Host.bytes()
        && threads > 1
        && together > limit
    {
        eprintln!(
            "note: the {} largest runs need up to {} together when their traces touch every logical page, more \
             than the memory limit of {} (LAMINA_MAX_MEMORY, else this machine's memory), and --threads {threads} \
             may run them at once; give fewer --threads if the traces write most of their devices",
            needs.len().min(threads),
            lamina_engine::budget::human_bytes(together),
            lamina_engine::budget::human_bytes(limit)
        );
    }
    let pool =
        rayon::ThreadPoolBuilder::new().num_threads(threads).build().context("starting worker threads")?;
    // With several runs in parallel the cores are busy: a statistics thread per run would
    // only compete with them (the results are the same either way).
    let stats =
        if threads > 1 { lamina_engine::StatsThreadMode::Off } else { lamina_engine::StatsThreadMode::Auto };
    // Runs of one trace (same file, `[trace]` options and capacity) share one parse.
    let cache = lamina_engine::TraceCache::new(exec.trace_cache_mib.saturating_mul(1 << 20));
    let progress = Progress::new(pending.len());
    let started = Instant::now();
    // Largest trace first (a run's cost grows with its trace), each worker pulling the
    // next run when it finishes one: rayon's halving of the plan put runs that are
    // adjacent in it — often the expensive ones — on one thread.
    let order = largest_trace_first(&pending, |i| &plan.runs[i].trace);
    let done: Vec<anyhow::Result<()>> = pull_each(&pool, &order, |i| {
        let r = &info.runs[i];
        let exec = &plan.runs[i];
        let t0 = Instant::now();
        let what = || {
            let axes: Vec<String> =
                info.axes.iter().zip(&r.labels).map(|(a, l)| format!("{a}={l}")).collect();
            format!("run {} ({})", r.index, axes.join(", "))
        };
        let log = info.latency_logs.then(|| log_path(out, &r.key));
        let report = replay_run(exec, log.as_deref(), stats, &cache).with_context(what)?;
        if report.trace.digest != r.trace_digest {
            bail!("{}: the trace changed while the sweep ran (digest {})", what(), report.trace.digest);
        }
        write_atomic(&run_path(out, &r.key), report.to_json().as_bytes())?;
        progress.finished(format!("{} in {:.1} s", what(), t0.elapsed().as_secs_f64()));
        Ok(())
    });
    // Failures are reported in plan order.
    let mut results: Vec<(usize, anyhow::Result<()>)> = order.into_iter().zip(done).collect();
    results.sort_by_key(|&(i, _)| i);
    progress.end();
    let failed: Vec<anyhow::Error> = results.into_iter().filter_map(|(_, r)| r.err()).collect();
    eprintln!(
        "sweep {}: {scope}; executed {}, skipped {earlier} (done earlier), failed {} in {:.1} s",
        info.name,
        pending.len() - failed.len(),
        failed.len(),
        started.elapsed().as_secs_f64()
    );
    if !pending.is_empty() {
        let c = cache.stats();
        eprintln!(
            "sweep {}: traces parsed {} times, replayed from memory {} times, streamed {} times \
             (--trace-cache-mib {})",
            info.name, c.parsed, c.reused, c.streamed, exec.trace_cache_mib
        );
    }
    if !failed.is_empty() {
        for f in &failed {
            eprintln!("error: {f:#}");
        }
        // The exit code of the most serious failure (verification beats bad input beats I/O).
        let kind = failed.iter().map(kind_of).max().unwrap_or(Kind::Runtime);
        return Err(Failure::new(
            kind,
            format!(
                "{} of {} runs failed (finished runs are kept; re-run to retry)",
                failed.len(),
                pending.len()
            ),
        )
        .into());
    }
    // Complete when every run of the sweep is in this directory (always so unsharded).
    if complete_reports(info, out).is_some() {
        return Ok(true);
    }
    let s = shard.expect("an unsharded sweep has every run");
    eprintln!("shard {}/{} done; gather the shards with `lamina merge DIR... --out results.csv`", s.k, s.n);
    Ok(false)
}

/// `items` reordered so the runs of the largest trace files come first (stable: plan
/// order among equals; a trace whose size cannot be read counts as empty).
fn largest_trace_first<'a>(items: &[usize], trace: impl Fn(usize) -> &'a Path) -> Vec<usize> {
    let mut sized: Vec<(u64, usize)> =
        items.iter().map(|&i| (std::fs::metadata(trace(i)).map_or(0, |m| m.len()), i)).collect();
    sized.sort_by_key(|&(bytes, _)| std::cmp::Reverse(bytes));
    sized.into_iter().map(|(_, i)| i).collect()
}

/// `f` of every item on the pool's threads, each thread taking the next item in `items`'
/// order as soon as it is free (a shared counter, no up-front split); the results in
/// `items`' order.
fn pull_each<T: Send>(pool: &rayon::ThreadPool, items: &[usize], f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let next = AtomicUsize::new(0);
    let slots: Vec<std::sync::Mutex<Option<T>>> = items.iter().map(|_| std::sync::Mutex::new(None)).collect();
    pool.scope(|s| {
        for _ in 0..pool.current_num_threads() {
            s.spawn(|_| {
                loop {
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&i) = items.get(k) else { break };
                    let v = f(i);
                    *slots[k].lock().unwrap_or_else(|e| e.into_inner()) = Some(v);
                }
            });
        }
    });
    slots
        .into_iter()
        .map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner()).expect("every item is taken once"))
        .collect()
}

/// Run `lamina merge`.
pub fn merge(args: MergeArgs) -> anyhow::Result<()> {
    // Each directory once, however it was spelled.
    let mut dirs: Vec<PathBuf> = Vec::new();
    for d in &args.dirs {
        let c = d.canonicalize().map_err(|e| usage(format!("{}: no such directory ({e})", d.display())))?;
        if !dirs.contains(&c) {
            dirs.push(c);
        }
    }
    let plan: PlanInfo = match &args.spec {
        Some(s) => plan_for(s, args.trace_root.as_deref())?.info,
        None => {
            let mut found: Option<(PathBuf, PlanInfo)> = None;
            for d in &dirs {
                let p = d.join(PLAN_FILE);
                let Ok(text) = std::fs::read_to_string(&p) else { continue };
                let plan: PlanInfo = serde_json::from_str(&text).map_err(|e| {
                    usage(format!(
                        "{}: not a sweep plan ({e}); it is written by `lamina sweep`: re-run the sweep into \
                         {} to rewrite it, or pass --spec SPEC.toml to re-plan from the spec",
                        p.display(),
                        d.display()
                    ))
                })?;
                match &found {
                    Some((q, other)) if other != &plan => {
                        return Err(usage(format!(
                            "{} and {} hold different sweep plans; merge one sweep at a time (or pass --spec)",
                            q.display(),
                            p.display()
                        )));
                    }
                    Some(_) => {}
                    None => found = Some((p, plan)),
                }
            }
            found
                .map(|(_, p)| p)
                .ok_or_else(|| usage(format!("none of the directories holds a {PLAN_FILE}; pass --spec")))?
        }
    };
    // The output files before reading any report; a failed merge leaves no directory it
    // created behind (the table files are temporary until written).
    let created = match args.out.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(parent) => create_dirs(parent)?,
        None => Vec::new(),
    };
    let merged = merge_into(&args, &dirs, &plan);
    if merged.is_err() {
        for d in created.iter().rev() {
            // Only an empty directory goes (another process may have put files there).
            let _ = std::fs::remove_dir(d);
        }
    }
    merged
}

/// `dir` and its missing ancestors created; the ones this call created, outermost first.
fn create_dirs(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let missing: Vec<PathBuf> = dir
        .ancestors()
        .take_while(|a| !a.as_os_str().is_empty() && !a.exists())
        .map(Path::to_path_buf)
        .collect();
    std::fs::create_dir_all(dir).map_err(|e| usage(format!("output directory {}: {e}", dir.display())))?;
    Ok(missing.into_iter().rev().collect())
}

/// The body of `lamina merge` once the plan is known and the output directory exists.
fn merge_into(args: &MergeArgs, dirs: &[PathBuf], plan: &PlanInfo) -> anyhow::Result<()> {
    let tables = TableFiles::prepare(plan, &args.out)?;
    // Every run file in every directory, by key.
    let mut where_: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    for d in dirs {
        let runs = d.join(RUNS_DIR);
        let Ok(entries) = std::fs::read_dir(&runs) else { continue };
        for e in entries {
            let e = e.with_context(|| format!("listing {}", runs.display()))?;
            let name = e.file_name().to_string_lossy().into_owned();
            if let Some(key) = name.strip_suffix(".json")
                && !name.starts_with('.')
            {
                where_.entry(key.to_owned()).or_default().push(e.path());
            }
        }
    }
    let mut missing = Vec::new();
    let mut duplicate = Vec::new();
    let mut reports = Vec::with_capacity(plan.runs.len());
    for r in &plan.runs {
        match where_.get(&r.key).map(Vec::as_slice) {
            None | Some([]) => missing.push(r.index),
            Some([one]) => match load_report(one, &r.trace_digest) {
                Some(v) => reports.push(v),
                None => {
                    return Err(usage(format!(
                        "{}: not a complete report of run {} (trace {})",
                        one.display(),
                        r.index,
                        r.trace_digest
                    )));
                }
            },
            Some(many) => duplicate.push((r.index, many)),
        }
    }
    let planned: std::collections::BTreeSet<&str> = plan.runs.iter().map(|r| r.key.as_str()).collect();
    let foreign = where_.keys().filter(|k| !planned.contains(k.as_str())).count();
    if foreign > 0 {
        eprintln!("note: {foreign} report(s) in these directories are not runs of this sweep; ignored");
    }
    let mut problems = Vec::new();
    if !missing.is_empty() {
        let shown: Vec<String> = missing.iter().take(20).map(|i| i.to_string()).collect();
        problems.push(format!(
            "{} of {} runs missing (indices {}{}): name every directory that holds runs, or finish the \
             shards that lack them (`lamina sweep SPEC --shard K/N --out DIR` resumes one)",
            missing.len(),
            plan.runs.len(),
            shown.join(", "),
            if missing.len() > 20 { ", …" } else { "" }
        ));
    }
    if !duplicate.is_empty() {
        problems.push(duplicates_text(&duplicate));
    }
    if !problems.is_empty() {
        return Err(usage(format!("merge of sweep {}: {}", plan.name, problems.join("; "))));
    }
    eprintln!(
        "merge {}: {} runs from {} director{}",
        plan.name,
        plan.runs.len(),
        dirs.len(),
        if dirs.len() == 1 { "y" } else { "ies" }
    );
    tables.write(plan, &reports, true)
}

/// Duplicate runs shown in an error: the first few with their files, then a count
/// (a whole sweep merged with a copy of itself would otherwise make a 25 KB line).
fn duplicates_text(duplicate: &[(usize, &[PathBuf])]) -> String {
    const SHOWN: usize = 3;
    let shown: Vec<String> = duplicate
        .iter()
        .take(SHOWN)
        .map(|(index, files)| {
            let files: Vec<String> = files.iter().map(|p| p.display().to_string()).collect();
            format!("run {index} in {}", files.join(" and "))
        })
        .collect();
    let more = match duplicate.len().saturating_sub(SHOWN) {
        0 => String::new(),
        n => format!("; … and {n} more"),
    };
    format!(
        "{} duplicate run(s) (a run's report in more than one directory; remove the extra copies): {}{more}",
        duplicate.len(),
        shown.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workers_pull_every_run_once_and_results_keep_the_given_order() {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
        let items: Vec<usize> = (0..50).rev().collect();
        let taken = std::sync::Mutex::new(Vec::new());
        let out = pull_each(&pool, &items, |i| {
            taken.lock().unwrap().push(i);
            // One slow item must not hold up the others (no up-front split).
            if i == 49 {
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            i * 10
        });
        assert_eq!(out, items.iter().map(|i| i * 10).collect::<Vec<_>>());
        let mut t = taken.into_inner().unwrap();
        t.sort_unstable();
        assert_eq!(t, (0..50).collect::<Vec<_>>());
    }

    #[test]
    fn the_largest_trace_goes_first_and_ties_keep_plan_order() {
        let dir = tempfile::tempdir().unwrap();
        let paths: Vec<PathBuf> = [3usize, 10, 3, 0]
            .iter()
            .enumerate()
            .map(|(k, &n)| {
                let p = dir.path().join(format!("t{k}"));
                std::fs::write(&p, vec![b'x'; n]).unwrap();
                p
            })
            .collect();
        let missing = dir.path().join("missing");
        let trace = |i: usize| if i < 4 { paths[i].as_path() } else { missing.as_path() };
        assert_eq!(largest_trace_first(&[4, 0, 1, 2, 3], trace), vec![1, 0, 2, 4, 3]);
    }

    #[test]
    fn shards_parse_and_partition_the_runs() {
        assert_eq!("2/8".parse::<Shard>(), Ok(Shard { k: 2, n: 8 }));
        for bad in ["0/3", "4/3", "1/0", "1", "a/b", "1/2/3", ""] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
        // Every run in exactly one shard, round-robin.
        let n = 5;
        for i in 0..37 {
            let owners: Vec<usize> = (1..=n).filter(|&k| Shard { k, n }.owns(i)).collect();
            assert_eq!(owners, [i % n + 1]);
        }
    }

    #[test]
    fn comparison_files_sit_beside_the_results() {
        let p = Path::new("out/x.csv");
        assert_eq!(sibling(p, ".compare.md"), Path::new("out/x.compare.md"));
    }

    #[test]
    fn duplicate_runs_are_summarised() {
        let files = [PathBuf::from("a/runs/k.json"), PathBuf::from("b/runs/k.json")];
        let dups: Vec<(usize, &[PathBuf])> = (0..500).map(|i| (i, &files[..])).collect();
        let text = duplicates_text(&dups);
        assert!(text.starts_with("500 duplicate run(s)"), "{text}");
        assert!(text.contains("run 2 in a/runs/k.json and b/runs/k.json; … and 497 more"), "{text}");
        assert!(text.len() < 400, "{text}");
        assert!(!duplicates_text(&dups[..1]).contains("… and"));
    }
}
