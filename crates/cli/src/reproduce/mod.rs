//! `lamina reproduce <paper>`: run a paper's experiment the way `lamina sweep` does
//! (resumable, `--threads`, `--shard`, `--emit-slurm`), then write its tables, figures,
//! an index and a claims check into one folder.
//!
//! Layout of the output folder:
//!
//! - `README.md`: the index — every figure with its caption and the paper's figure
//!   number, the tables, the claims table and how verdicts are decided;
//! - `claims.csv`, `claims.json`: one row per headline claim (also printed at the end);
//! - `figures/<name>.<svg|png>` with `figures/<name>.csv` (the figure's data);
//! - `sweep/`: the sweep's directory (`plan.json`, `runs/`, `results.csv`,
//!   `results.compare.csv`, `results.compare.md`);
//! - `sweep-<name>/`: the same for each further experiment of the paper
//!   ([`papers::Extra`]), whose figures, index sections and claims join the above.
//!
//! `--part NAME` runs one experiment (`main` or an extra's name) and writes its index
//! and claims to `README-<NAME>.md` and `claims-<NAME>.{csv,json}`.
//!
//! Everything written is a function of the experiment, the traces and the engine, so a
//! rerun (or a resumed run) gives the same bytes.

pub mod claims;
pub mod papers;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Args;

use crate::exit::usage;
use crate::out::write_atomic;
use crate::plot::chart::{Figure, Format, LineChart, Series};
use crate::plot::data::{self, Table};
use crate::sweep::{self, ExecArgs, SlurmArgs};
use papers::{Extra, FigureKind, FigureSpec, Paper};

/// Arguments of `lamina reproduce`.
#[derive(Args, Debug)]
pub struct ReproduceArgs {
    /// The paper (one entry of the registry in reproduce/papers.rs).
    #[arg(value_parser = clap::builder::PossibleValuesParser::new(papers::PAPERS.iter().map(|p| p.id)))]
    paper: String,
    /// The CI-sized experiment (experiments/ci/: under a minute on 2 cores) instead of the
    /// full one.
    #[arg(long)]
    quick: bool,
    /// Output folder [default: reproduce/<paper>, or reproduce/<paper>-quick].
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Threads, shard (once every shard is done, rerun without --shard, same --out, to
    /// draw the figures) and trace root, as for `lamina sweep`.
    #[command(flatten)]
    exec: ExecArgs,
    /// Directory of the experiment files [default: ./experiments if it has them, else the
    /// repository this lamina was built from].
    #[arg(long, value_name = "DIR")]
    experiments: Option<PathBuf>,
    /// Figure format.
    #[arg(long, value_enum, default_value_t = Format::Svg)]
    format: Format,
    #[command(flatten)]
    slurm: SlurmArgs,
    /// Only this experiment of the paper: `main`, or one of its further experiments
    /// (the names after `sweep-` in the output folder, listed in the index) [default:
    /// every one]. Its index and claims go to `README-<NAME>.md` and
    /// `claims-<NAME>.{csv,json}`; a later run without `--part` reuses its runs.
    #[arg(long, value_name = "NAME")]
    part: Option<String>,
}

/// The `--part` name of a paper's main experiment.
const MAIN_PART: &str = "main";

/// The experiment file `rel` (relative to the experiments folder).
fn experiment_path(args: &ReproduceArgs, rel: &str) -> anyhow::Result<PathBuf> {
    let dirs: Vec<PathBuf> = match &args.experiments {
        Some(d) => vec![d.clone()],
        None => vec![
            PathBuf::from("experiments"),
            PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../experiments")),
        ],
    };
    dirs.iter().map(|d| d.join(rel)).find(|p| p.is_file()).ok_or_else(|| {
        usage(format!(
            "experiment {rel} not found in {}; run from the repository root or pass --experiments DIR",
            dirs.iter().map(|d| d.display().to_string()).collect::<Vec<_>>().join(" or ")
        ))
    })
}

/// One experiment of a paper's command: the main one (`name` None, into `sweep/`) or
/// an extra (into `sweep-<name>/`).
struct Job {
    name: Option<&'static str>,
    about: &'static str,
    rel: &'static str,
    needs: &'static str,
    policy_axis: &'static str,
    join: Option<&'static str>,
    figures: &'static [FigureSpec],
    claims: &'static [papers::Claim],
    spec: PathBuf,
    sweep_dir: PathBuf,
    plan: sweep::spec::Plan,
}

/// A figure as written (its file, and a note for the index on what it measured beyond
/// the drawing) or why it was not drawn.
type Drawn = Result<(PathBuf, Option<String>), String>;

/// What one experiment produced: its figures (or why not drawn) and its claims.
struct Done<'a> {
    job: &'a Job,
    drawn: Vec<(&'static FigureSpec, Drawn)>,
}

/// Plan the main experiment and every extra of `paper` in this mode (only the one
/// `--part` names, when given), every one before any runs, so a missing trace stops
/// the command first. With them, the extras `--quick` cannot run (no CI-sized
/// experiment).
fn plan_jobs(
    args: &ReproduceArgs,
    paper: &'static Paper,
    out: &Path,
) -> anyhow::Result<(Vec<Job>, Vec<&'static Extra>)> {
    let names: Vec<&str> = std::iter::once(MAIN_PART).chain(paper.extras.iter().map(|e| e.name)).collect();
    if let Some(p) = &args.part
        && !names.contains(&p.as_str())
    {
        return Err(usage(format!("--part {p}: {} has the experiments {}", paper.id, names.join(", "))));
    }
    let wanted = |name: &str| args.part.as_deref().is_none_or(|p| p == name);
    let main = (None, "", if args.quick { paper.quick } else { paper.full }, "", paper.policy_axis, None);
    let main = wanted(MAIN_PART).then_some((main, paper.figures, paper.claims));
    let mut skipped = Vec::new();
    let mut extras = Vec::new();
    for e in paper.extras.iter().filter(|e| wanted(e.name)) {
        let rel = match (args.quick, e.quick) {
            (false, _) => e.full,
            (true, Some(q)) => q,
            (true, None) => {
                skipped.push(e);
                continue;
            }
        };
        extras.push(((Some(e.name), e.about, rel, e.needs, e.policy_axis, e.join), e.figures, e.claims));
    }
    if let ([e], Some(p)) = (skipped.as_slice(), &args.part) {
        return Err(usage(format!(
            "--part {p}: it has no --quick experiment; the full one, experiments/{}, needs {}",
            e.full, e.needs
        )));
    }
    let jobs = main
        .into_iter()
        .chain(extras)
        .map(|((name, about, rel, needs, policy_axis, join), figures, claims)| {
            let spec = experiment_path(args, rel)?;
            let plan = sweep::plan_for(&spec, args.exec.trace_root.as_deref())?;
            let sweep_dir = out.join(name.map_or_else(|| "sweep".to_owned(), |n| format!("sweep-{n}")));
            Ok(Job { name, about, rel, needs, policy_axis, join, figures, claims, spec, sweep_dir, plan })
        })
        .collect::<anyhow::Result<_>>()?;
    Ok((jobs, skipped))
}

/// Run `lamina reproduce`.
pub fn run(args: ReproduceArgs) -> anyhow::Result<()> {
    let paper = papers::find(&args.paper).expect("clap checked the name");
    let out = args.out.clone().unwrap_or_else(|| {
        PathBuf::from("reproduce").join(if args.quick {
            format!("{}-quick", paper.id)
        } else {
            paper.id.into()
        })
    });
    let (jobs, skipped) = plan_jobs(&args, paper, &out)?;
    let part = args.part.as_deref().map(|p| format!(" --part {p}")).unwrap_or_default();
    let again_at = |dir: &Path| {
        format!(
            "lamina reproduce {}{}{part} --out {}",
            paper.id,
            if args.quick { " --quick" } else { "" },
            dir.display()
        )
    };
    let again = again_at(&out);
    if args.slurm.emit_slurm {
        // One array job per experiment, one after another in the script.
        for j in &jobs {
            let script =
                args.slurm.script(&j.spec, &j.sweep_dir, args.exec.trace_root.as_deref(), &j.plan.info)?;
            crate::out::print(&script)?;
        }
        let arrays = if jobs.len() == 1 { "the array is" } else { "the arrays are" };
        // The follow-up gathers the array tasks' runs from each experiment's
        // `shard-K` directories (and runs nothing they finished); like the script's own
        // paths, its folder is absolute, so it can be run from anywhere.
        let again = again_at(&std::path::absolute(&out).unwrap_or_else(|_| out.clone()));
        return crate::out::print(&format!(
            "# When {arrays} done: {again} (gathers the shards' runs, draws the figures and checks the claims)\n"
        ));
    }
    let mut complete = true;
    for j in &jobs {
        eprintln!("reproduce {}: experiment {} into {}", paper.id, j.spec.display(), j.sweep_dir.display());
        complete &= sweep::execute(&j.plan, &j.sweep_dir, &args.exec)?;
    }
    if !complete {
        eprintln!("reproduce {}: once every shard is done, run `{again}` to draw the figures", paper.id);
        return Ok(());
    }
    let figures_dir = out.join("figures");
    std::fs::create_dir_all(&figures_dir)
        .map_err(|e| usage(format!("output directory {}: {e}", figures_dir.display())))?;
    let mut done = Vec::new();
    let mut rows = Vec::new();
    for j in &jobs {
        sweep::write_tables(&j.plan.info, &j.sweep_dir, false)?;
        let mut table = Table::read(&j.sweep_dir.join("results.csv"))?;
        if let Some(axis) = j.join {
            table = join_policy(&table, j.policy_axis, axis)?;
        }
        let mut drawn = Vec::new();
        for f in j.figures {
            let fig = match figure(paper.id, j, f, &table)? {
                Ok((f, _)) if f.is_empty() => Err("not drawn: the runs have no value for it".to_owned()),
                other => other,
            };
            let path = match fig {
                Ok((fig, note)) => Ok((
                    fig.write(&figures_dir.join(format!("{}.{}", f.file, args.format.ext())), args.format)?,
                    note,
                )),
                Err(why) => Err(why),
            };
            drawn.push((f, path));
        }
        let mut checked = claims::check_claims(j.claims, j.policy_axis, &table)?;
        if let Some(name) = j.name {
            for r in &mut checked {
                r.claim = format!("{} [experiment {name}]", r.claim);
                r.scope = format!("experiment {name} ({}) · {}", j.rel, r.scope.trim_start_matches(" · "));
            }
        }
        rows.extend(checked);
        done.push(Done { job: j, drawn });
    }
    // One experiment (`--part`) writes its own index and claims beside the whole paper's.
    let suffix = args.part.as_deref().map(|p| format!("-{p}")).unwrap_or_default();
    write_atomic(&out.join(format!("claims{suffix}.csv")), claims::to_csv(&rows).as_bytes())?;
    write_atomic(&out.join(format!("claims{suffix}.json")), claims::to_json(&rows).as_bytes())?;
    let index = index(paper, args.quick, &out, &done, &skipped, &rows);
    let index_path = out.join(format!("README{suffix}.md"));
    write_atomic(&index_path, index.as_bytes())?;
    eprintln!("reproduce {}: index {}", paper.id, index_path.display());
    crate::out::print(&claims::to_markdown(&rows))
}

/// `t` with its policy axis joined with `axis`: the policies become `policy@value`
/// (every value of `axis` in first-appearance order) and `axis` goes, so a policy at one
/// value of the axis can be the baseline of every other (mbm-ftl Fig. 9: TBM at 2
/// chips per channel).
pub fn join_policy(t: &Table, policy_axis: &str, axis: &str) -> anyhow::Result<Table> {
    let (p, a) = (t.axis(policy_axis)?, t.axis(axis)?);
    let axes = t.axes.iter().enumerate().filter(|(i, _)| *i != a).map(|(_, n)| n.clone()).collect();
    let rows = t
        .rows
        .iter()
        .map(|(labels, values)| {
            let joined = labels
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != a)
                .map(|(i, l)| if i == p { format!("{l}@{}", labels[a]) } else { l.clone() })
                .collect();
            (joined, values.clone())
        })
        .collect();
    Ok(Table { axes, metrics: t.metrics.clone(), rows })
}

/// Resolve registry filters against the table: a filter on an absent axis is dropped,
/// and an optional one (`?axis`) also when the axis lacks the value (matched as a
/// number when both are numbers).
pub fn resolve_filters(t: &Table, filters: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for &(axis, value) in filters {
        let (optional, axis) = match axis.strip_prefix('?') {
            Some(a) => (true, a),
            None => (false, axis),
        };
        let axis = match axis {
            papers::LOAD => match papers::LOAD_AXES.iter().find(|a| t.axis(a).is_ok()) {
                Some(a) => a,
                None => continue,
            },
            a => a,
        };
        let Ok(i) = t.axis(axis) else { continue };
        let labels = t.labels(i);
        let same = |l: &String| match (l.parse::<f64>(), value.parse::<f64>()) {
            (Ok(a), Ok(b)) => a == b,
            _ => l == value,
        };
        match labels.iter().find(|l| same(l)) {
            Some(l) => out.push((axis.to_owned(), l.clone())),
            None if optional => {}
            None => out.push((axis.to_owned(), value.to_owned())),
        }
    }
    out
}

/// A figure of the paper with a note for the index (what it measured beyond the
/// drawing), or why it is not drawn (an axis the experiment lacks).
fn figure(
    paper_id: &str,
    job: &Job,
    f: &FigureSpec,
    t: &Table,
) -> anyhow::Result<Result<(Figure, Option<String>), String>> {
    let title = format!("{paper_id}: {}", f.title);
    let policy = t.axis(job.policy_axis)?;
    Ok(match &f.kind {
        FigureKind::Bars { metric, baseline, filters } => {
            let fl = t.filters(&resolve_filters(t, filters))?;
            let n = data::normalise(t, t.metric(metric)?, policy, baseline, &fl)?;
            Ok((Figure::Bars(crate::plot::bars(&n, &title, &format!("{metric} ({baseline} = 1)"))), None))
        }
        FigureKind::Line { metric, baseline, x, filters } => match x.iter().find(|a| t.axis(a).is_ok()) {
            None => Err(format!("not drawn: the experiment has no {} axis", x.join(" / "))),
            Some(x) => {
                let fl = t.filters(&resolve_filters(t, filters))?;
                let chart = data::line_over_axis(
                    t,
                    t.metric(metric)?,
                    t.axis(x)?,
                    Some(policy),
                    Some(baseline),
                    &fl,
                    &title,
                )?;
                Ok((Figure::Lines(chart), None))
            }
        },
        FigureKind::WriteCdf { filters } => Ok((Figure::Lines(write_cdf(job, filters, t, &title)?), None)),
        FigureKind::Tail { class, filters } => {
            tail(job.policy_axis, class, filters, t, &title)?.map(|f| (f, None))
        }
        FigureKind::WriteTimeline { filters, windows } => {
            if !job.plan.info.latency_logs {
                Err("not drawn: the experiment writes no per-request logs (`latency_logs`)".to_owned())
            } else {
                match write_timeline(job, filters, *windows, t, &title)? {
                    Some((chart, note)) => Ok((Figure::Lines(chart), Some(note))),
                    None => Err("not drawn: no runs at these axis values".to_owned()),
                }
            }
        }
    })
}

/// For every axis but the policy's: the filter's value, else the first row's label
/// (None at the policy axis). The figures of one configuration use it.
fn one_configuration(t: &Table, policy: usize, filters: &[(&str, &str)]) -> Vec<Option<String>> {
    let fl = resolve_filters(t, filters);
    t.axes
        .iter()
        .enumerate()
        .map(|(i, a)| {
            (i != policy).then(|| {
                fl.iter().find(|(fa, _)| fa == a).map_or_else(|| t.rows[0].0[i].clone(), |(_, l)| l.clone())
            })
        })
        .collect()
}

/// `axis=value, …` of a configuration, for an axis caption (the reader sees which runs
/// a figure of one configuration shows).
fn fixed_caption(t: &Table, want: &[Option<String>]) -> String {
    let fixed: Vec<String> = t
        .axes
        .iter()
        .zip(want)
        .filter_map(|(a, w)| w.as_ref().map(|w| format!("{a}={}", data::short_label(a, w))))
        .collect();
    fixed.join(", ")
}

/// The runs of a figure drawn one series per policy: the runs matching the filters,
/// every other axis at its first value.
struct PolicyRuns<'p> {
    /// The policy axis's position in the plan's labels.
    policy: usize,
    /// `axis=value, …` of the configuration, for the axis caption.
    fixed: String,
    /// The runs, in plan order.
    runs: Vec<&'p sweep::spec::RunInfo>,
}

/// The runs of `job` a figure of one configuration (under `filters`) draws.
fn one_per_policy<'p>(job: &'p Job, filters: &[(&str, &str)], t: &Table) -> anyhow::Result<PolicyRuns<'p>> {
    let plan = &job.plan.info;
    let want = one_configuration(t, t.axis(job.policy_axis)?, filters);
    // The plan's runs label their axes in the plan's order.
    let want_in_plan: Vec<Option<String>> =
        plan.axes.iter().map(|a| t.axis(a).map(|i| want[i].clone())).collect::<anyhow::Result<_>>()?;
    let policy = plan.axes.iter().position(|a| a == job.policy_axis).context("policy axis in the plan")?;
    let runs = plan
        .runs
        .iter()
        .filter(|r| want_in_plan.iter().zip(&r.labels).all(|(w, l)| w.as_ref().is_none_or(|w| w == l)))
        .collect();
    Ok(PolicyRuns { policy, fixed: fixed_caption(t, &want), runs })
}

/// The write CDF of each policy: the runs matching the filters, every other axis at its
/// first value.
fn write_cdf(job: &Job, filters: &[(&str, &str)], t: &Table, title: &str) -> anyhow::Result<LineChart> {
    let PolicyRuns { policy, fixed, runs } = one_per_policy(job, filters, t)?;
    let mut series = Vec::new();
    for r in runs {
        let path = sweep::run_path(&job.sweep_dir, &r.key);
        let (_, d) = data::report_distributions(&path)?;
        let d =
            d.with_context(|| format!("{}: no histograms (a report older than schema v4)", path.display()))?;
        if let Some((_, h)) = d.hists.iter().find(|(c, _)| *c == "write") {
            series.push(Series { name: r.labels[policy].clone(), points: data::cdf_points(h) });
        }
    }
    let x_label = format!("write response time (µs, log scale); {fixed}");
    Ok(data::cdf_chart(title, &x_label, series))
}

/// The write latency over time of each policy (from the runs' per-request logs; the
/// first policy is the one the others are compared with, window by window), and the
/// comparison in words; None when fewer than two runs have writes.
fn write_timeline(
    job: &Job,
    filters: &[(&str, &str)],
    windows: usize,
    t: &Table,
    title: &str,
) -> anyhow::Result<Option<(LineChart, String)>> {
    let PolicyRuns { policy, fixed, runs } = one_per_policy(job, filters, t)?;
    let mut logs = Vec::with_capacity(runs.len());
    for r in runs {
        let lines = data::read_latency_log(&sweep::log_path(&job.sweep_dir, &r.key))?;
        if lines.iter().any(|l| !l.is_read) {
            logs.push((r.labels[policy].clone(), lines));
        }
    }
    if logs.len() < 2 {
        return Ok(None);
    }
    let (chart, compared) = data::timeline_compare(&logs, windows, false, &format!("{title} ({fixed})"));
    let note: Vec<String> = compared
        .iter()
        .map(|c| {
            format!(
                "{} against {} ({fixed}): write mean lower in {} of {} windows, maximum lower in {}.",
                c.name, logs[0].0, c.mean_lower, c.windows, c.max_lower
            )
        })
        .collect();
    Ok(Some((chart, note.join(" "))))
}

/// The percentiles of `class` the results tabulate (`read.p99_5_ns` → 99.5), ascending,
/// with their metric positions.
fn tail_columns(t: &Table, class: &str) -> Vec<(f64, usize)> {
    let prefix = format!("{class}.p");
    let mut cols: Vec<(f64, usize)> = t
        .metrics
        .iter()
        .enumerate()
        .filter_map(|(i, m)| {
            let q = m.strip_prefix(&prefix)?.strip_suffix("_ns")?.replace('_', ".");
            q.parse::<f64>().ok().filter(|q| (0.0..=100.0).contains(q)).map(|q| (q, i))
        })
        .collect();
    cols.sort_by(|a, b| a.0.total_cmp(&b.0));
    cols
}

/// Tail latency (ms) of `class` against the percentile, one line per policy, on one
/// configuration (the filters' values, the first value of every other axis).
fn tail(
    policy_axis: &str,
    class: &str,
    filters: &[(&str, &str)],
    t: &Table,
    title: &str,
) -> anyhow::Result<Result<Figure, String>> {
    let cols = tail_columns(t, class);
    if cols.len() < 2 {
        return Ok(Err(format!("not drawn: the results tabulate fewer than two {class} percentiles")));
    }
    let policy = t.axis(policy_axis)?;
    let want = one_configuration(t, policy, filters);
    let mut series = Vec::new();
    for (labels, values) in &t.rows {
        if !want.iter().zip(labels).all(|(w, l)| w.as_ref().is_none_or(|w| w == l)) {
            continue;
        }
        let points: Vec<(f64, f64)> = cols
            .iter()
            .enumerate()
            .filter_map(|(x, &(_, m))| values[m].map(|v| (x as f64, v / 1e6)))
            .collect();
        if !points.is_empty() {
            series.push(Series { name: labels[policy].clone(), points });
        }
    }
    let names = cols.iter().map(|(q, _)| format!("p{q}")).collect();
    Ok(Ok(Figure::Lines(LineChart {
        title: title.to_owned(),
        x_label: format!("percentile; {}", fixed_caption(t, &want)),
        y_label: format!("{class} response time (ms)"),
        x_axis: crate::plot::chart::XAxis::Categories(names),
        y_axis: crate::plot::chart::YAxis::Linear,
        series,
        markers: true,
        reference: None,
    })))
}

/// The index lines of one experiment's figures.
fn index_figures(s: &mut String, out: &Path, drawn: &[(&FigureSpec, Drawn)]) {
    for (f, path) in drawn {
        let _ = writeln!(s, "### {}\n", f.title);
        let _ = writeln!(s, "Paper: {}. {}\n", f.paper_figure, f.caption);
        match path {
            Ok((p, note)) => {
                let rel = p.strip_prefix(out).unwrap_or(p).display().to_string();
                let csv = p.with_extension("csv");
                let csv = csv.strip_prefix(out).unwrap_or(&csv).display().to_string();
                let _ = writeln!(s, "![{}]({rel})\n\nData: [{csv}]({csv})\n", f.caption);
                if let Some(n) = note {
                    let _ = writeln!(s, "{n}\n");
                }
            }
            Err(why) => {
                let _ = writeln!(s, "*{why}.*\n");
            }
        }
    }
}

/// The folder's README.md.
fn index(
    paper: &Paper,
    quick: bool,
    out: &Path,
    done: &[Done],
    skipped: &[&Extra],
    rows: &[claims::ClaimRow],
) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# Reproducing: {}\n", paper.title);
    let specs: Vec<String> = done.iter().map(|d| format!("`experiments/{}`", d.job.rel)).collect();
    let _ = writeln!(
        s,
        "Paper: `{}`. {}: {} ({} mode). Made by\n`lamina reproduce {}{}`; \
         every file here is a function of the experiment, the traces and the engine (a rerun gives the same bytes).\n",
        paper.source,
        if specs.len() == 1 { "Experiment" } else { "Experiments" },
        specs.join(", "),
        if quick { "quick, CI-sized" } else { "full" },
        paper.id,
        if quick { " --quick" } else { "" },
    );
    let _ = writeln!(s, "## Figures\n");
    for d in done {
        if let Some(name) = d.job.name {
            let _ = writeln!(s, "## Experiment {name}: `experiments/{}`\n\n{}\n", d.job.rel, d.job.about);
            if !quick && !d.job.needs.is_empty() {
                let _ = writeln!(s, "Its traces: {}.\n", d.job.needs);
            }
        }
        index_figures(&mut s, out, &d.drawn);
    }
    for e in skipped {
        let _ = writeln!(s, "## Experiment {}: not run\n\n{}\n", e.name, e.about);
        let _ = writeln!(
            s,
            "*Not run in --quick mode: it has no CI-sized experiment. The full one, `experiments/{}`, needs {}.*\n",
            e.full, e.needs
        );
    }
    let _ = writeln!(s, "## Tables\n");
    for d in done {
        let dir = d.job.sweep_dir.strip_prefix(out).unwrap_or(&d.job.sweep_dir).display().to_string();
        let _ = writeln!(
            s,
            "- [{dir}/results.csv]({dir}/results.csv): one row per run\n\
             - [{dir}/results.compare.md]({dir}/results.compare.md) ([csv]({dir}/results.compare.csv)): every metric relative to the baseline"
        );
    }
    let _ = writeln!(s, "\n## Claims\n");
    let _ = writeln!(s, "{}", claims::to_markdown(rows));
    let _ = writeln!(s, "{}", claims::RULES);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(axes: &[&str], rows: &[(&[&str], f64)]) -> Table {
        Table {
            axes: axes.iter().map(|a| a.to_string()).collect(),
            metrics: vec!["write.mean_ns".into()],
            rows: rows
                .iter()
                .map(|(l, v)| (l.iter().map(|x| x.to_string()).collect(), vec![Some(*v)]))
                .collect(),
        }
    }

    /// A load axis, under any of its names, is pinned to the recorded rate (matched as a
    /// number: "1.0" is 1); an experiment without one, or without the value, is not
    /// filtered; a required filter on a present axis stays even when the value is absent
    /// (and then fails with the axis's values listed).
    #[test]
    fn filters_resolve_against_the_experiments_axes() {
        let rows: &[(&[&str], f64)] = &[(&["a", "0.1", "static"], 1.0), (&["a", "1.0", "static"], 2.0)];
        for name in papers::LOAD_AXES {
            let t = table(&["trace", name, "sched.placement"], rows);
            assert_eq!(resolve_filters(&t, &[("?@load", "1")]), [(name.to_owned(), "1.0".to_owned())]);
        }
        let t = table(&["trace", "sched.placement"], &[(&["a", "static"], 1.0)]);
        assert!(resolve_filters(&t, &[("?@load", "1"), ("preset", "x")]).is_empty());
        let t = table(&["trace", "trace.time_scale", "sched.placement"], &[(&["a", "0.5", "static"], 1.0)]);
        assert!(resolve_filters(&t, &[("?@load", "1")]).is_empty());
        let f = resolve_filters(&t, &[("trace", "b")]);
        assert_eq!(f, [("trace".to_owned(), "b".to_owned())]);
        assert!(t.filters(&f).unwrap_err().to_string().contains("axis trace has no value \"b\" (values: a)"));
    }

    /// Claims on a hand-made table: a ratio claim is the geomean of policy / baseline
    /// over the configurations, a trend claim the ratio of two such geomeans.
    #[test]
    fn claims_are_geomeans_of_ratios() {
        let t = table(
            &["trace", "variation", "sched.placement"],
            &[
                (&["a", "2", "static"], 100.0),
                (&["a", "2", "lacr"], 80.0),
                (&["b", "2", "static"], 100.0),
                (&["b", "2", "lacr"], 45.0),
                (&["a", "4", "static"], 100.0),
                (&["a", "4", "lacr"], 50.0),
                (&["b", "4", "static"], 100.0),
                (&["b", "4", "lacr"], 40.0),
            ],
        );
        let paper = papers::find("lacr").unwrap();
        let rows = claims::check_claims(paper.claims, paper.policy_axis, &t).unwrap();
        let row = |id: &str| rows.iter().find(|r| r.id == id).unwrap();
        // lacr / static at variation 2 (layers absent: not filtered): sqrt(0.8 * 0.45) = 0.6.
        let w = row("lacr-write");
        assert!((w.our_change.unwrap() - (0.6 - 1.0)).abs() < 1e-12, "{w:?}");
        assert_eq!(w.verdict, "reproduced");
        assert!(w.scope.contains("variation=2") && w.scope.contains("geomean of 2 configurations"), "{w:?}");
        // Trend over variation: sqrt(0.5 * 0.4) / 0.6 - 1.
        let tr = row("lacr-better-with-variation");
        assert!((tr.our_change.unwrap() - ((0.2f64).sqrt() / 0.6 - 1.0)).abs() < 1e-12, "{tr:?}");
        assert_eq!(tr.verdict, "reproduced");
        // No OCR runs, no all.mean_ns column: not evaluated; no layers axis: the layer
        // trend neither.
        assert_eq!(row("ocr-write").verdict, "not evaluated");
        assert_eq!(row("lacr-overall").verdict, "not evaluated");
        assert_eq!(row("lacr-gain-shrinks-with-layers").verdict, "not evaluated");
    }

    /// mbm-ftl's Fig. 9 by hand: joining the policy axis with the chips axis makes
    /// `tbm@2` a series, so every system at every chip count divides by TBM at 2 chips
    /// on the same trace; the claims over the joined table compare a system with itself
    /// at another chip count ("flat from 8 down to 2": about equal, within 10 %).
    #[test]
    fn a_joined_policy_axis_normalises_to_one_chip_count() {
        let mut rows: Vec<(&[&str], f64)> = Vec::new();
        let cells: [(&[&str], f64); 12] = [
            (&["a", "2", "tbm"], 100.0),
            (&["a", "2", "mbm"], 50.0),
            (&["a", "4", "tbm"], 80.0),
            (&["a", "4", "mbm"], 40.0),
            (&["a", "8", "tbm"], 40.0),
            (&["a", "8", "mbm"], 48.0),
            (&["b", "2", "tbm"], 10.0),
            (&["b", "2", "mbm"], 8.0),
            (&["b", "4", "tbm"], 9.0),
            (&["b", "4", "mbm"], 6.0),
            (&["b", "8", "tbm"], 5.0),
            (&["b", "8", "mbm"], 5.0),
        ];
        rows.extend(cells);
        let mut t = table(&["trace", "chips", "system"], &rows);
        t.metrics = vec!["all.mean_ns".into()];
        let j = join_policy(&t, "system", "chips").unwrap();
        assert_eq!(j.axes, ["trace", "system"]);
        assert_eq!(j.labels(1), ["tbm@2", "mbm@2", "tbm@4", "mbm@4", "tbm@8", "mbm@8"]);
        let n = data::normalise(&j, 0, 1, "tbm@2", &[]).unwrap();
        assert_eq!(n.groups, ["a", "b"]);
        assert_eq!(n.ratios[0], [1.0, 0.5, 0.8, 0.4, 0.4, 0.48].map(Some));
        assert_eq!(n.ratios[1], [1.0, 0.8, 0.9, 0.6, 0.5, 0.5].map(Some));
        let e = join_policy(&t, "system", "dies").unwrap_err().to_string();
        assert!(e.contains("no axis \"dies\""), "{e}");

        let paper = papers::find("mbm").unwrap();
        let chips = paper.extras.iter().find(|e| e.name == "chips").unwrap();
        let rows = claims::check_claims(chips.claims, chips.policy_axis, &j).unwrap();
        let row = |id: &str| rows.iter().find(|r| r.id == id).unwrap();
        // mbm@2 / tbm@2: sqrt(0.5 * 0.8) - 1 = -36.8 %, beyond 3/4 of the paper's -43.6 %;
        // mbm@8 / tbm@8: sqrt(1.2 * 1.0) - 1 = +9.5 %, the other way.
        let two = row("mbm-vs-tbm-2-chips");
        assert!((two.our_change.unwrap() - ((0.4f64).sqrt() - 1.0)).abs() < 1e-12, "{two:?}");
        assert_eq!(two.verdict, "reproduced");
        assert_eq!(row("mbm-vs-tbm-8-chips").verdict, "not reproduced");
        // mbm@2 / mbm@8: sqrt(50/48 * 8/5) - 1 = +29 %: not "about equal".
        let flat = row("mbm-flat-over-chips");
        assert!((flat.our_change.unwrap() - ((50.0 / 48.0 * 1.6f64).sqrt() - 1.0)).abs() < 1e-12);
        assert_eq!((flat.direction.as_str(), flat.verdict.as_str()), ("about equal", "not reproduced"));
        assert_eq!(row("tbm-slower-with-fewer-chips").verdict, "reproduced");
        // Sprinkler did not run: not evaluated.
        assert_eq!(row("sprinkler-slower-with-fewer-chips").verdict, "not evaluated");
    }

    /// The mbm claims on a hand-made table: "up to" takes the best configuration, a
    /// claim about one trace is not evaluated where the trace is missing, and +49 % more
    /// erases is not "almost the same" (+3.5 %).
    #[test]
    fn mbm_claims_best_one_trace_and_about_equal() {
        let t = Table {
            axes: vec!["trace".into(), "system".into()],
            metrics: vec!["all.mean_ns".into(), "erases.total".into()],
            rows: vec![
                (vec!["usr1vm0.trace".into(), "tbm".into()], vec![Some(100.0), Some(100.0)]),
                (vec!["usr1vm0.trace".into(), "mbm".into()], vec![Some(30.0), Some(149.0)]),
                (vec!["src1-1vm2.trace".into(), "tbm".into()], vec![Some(100.0), Some(100.0)]),
                (vec!["src1-1vm2.trace".into(), "mbm".into()], vec![Some(120.0), Some(149.0)]),
            ],
        };
        let paper = papers::find("mbm").unwrap();
        let rows = claims::check_claims(paper.claims, paper.policy_axis, &t).unwrap();
        let row = |id: &str| rows.iter().find(|r| r.id == id).unwrap();
        let best = row("mbm-mean-response-best");
        assert!((best.our_change.unwrap() + 0.7).abs() < 1e-12, "{best:?}");
        assert_eq!(best.verdict, "reproduced");
        assert!(best.scope.contains("best of 2 configurations"), "{best:?}");
        let src1 = row("mbm-src1-1vm2");
        assert!((src1.our_change.unwrap() - 0.2).abs() < 1e-12, "{src1:?}");
        assert_eq!(src1.verdict, "reproduced");
        assert!(src1.scope.contains("trace=src1-1vm2.trace · geomean of 1 "), "{src1:?}");
        assert_eq!(row("mbm-msnfs-gc").verdict, "not evaluated");
        assert_eq!(row("sprinkler-src1-1vm2").verdict, "not evaluated");
        let erases = row("mbm-erases");
        assert!((erases.our_change.unwrap() - 0.49).abs() < 1e-9, "{erases:?}");
        assert_eq!(erases.verdict, "not reproduced");
        assert!(claims::to_markdown(&rows).contains("| ≈ +3.5 % | +49.0 % | **not reproduced** |"));
    }

    /// Regression (new-user trial, finding 4): in `reproduce mbm --quick` TBM erases no
    /// block, and the erase claim read as if runs were missing. It is still not evaluated
    /// (no ratio to 0 is defined), but says so with the counts, in every output.
    #[test]
    fn a_zero_baseline_is_reported_as_an_undefined_ratio_not_missing_runs() {
        let t = Table {
            axes: vec!["trace".into(), "system".into()],
            metrics: vec!["all.mean_ns".into(), "erases.total".into()],
            rows: vec![
                (vec!["a.trace".into(), "tbm".into()], vec![Some(100.0), Some(0.0)]),
                (vec!["a.trace".into(), "mbm".into()], vec![Some(90.0), Some(0.0)]),
                (vec!["b.trace".into(), "tbm".into()], vec![Some(100.0), Some(0.0)]),
                (vec!["b.trace".into(), "mbm".into()], vec![Some(90.0), Some(3.0)]),
            ],
        };
        let paper = papers::find("mbm").unwrap();
        let rows = claims::check_claims(paper.claims, paper.policy_axis, &t).unwrap();
        let row = |id: &str| rows.iter().find(|r| r.id == id).unwrap();
        let erases = row("mbm-erases");
        assert_eq!((erases.verdict.as_str(), erases.our_change), ("not evaluated", None));
        let note = erases.note.as_deref().unwrap();
        assert!(note.contains("tbm has erases.total = 0 in all 2 configurations (mbm: 0, 3)"), "{note}");
        assert!(erases.scope.contains("ratio undefined"), "{erases:?}");
        assert!(claims::to_markdown(&rows).contains("**not evaluated** (ratio undefined: tbm has"));
        assert!(claims::to_json(&rows).contains("\"note\": \"ratio undefined"));
        // A claim whose runs are missing (no src1-1vm2 trace) has no note.
        assert_eq!(row("mbm-src1-1vm2").note, None);
        assert!(row("mbm-mean-response-best").note.is_none());
    }

    /// The tail figure's columns: every `<class>.p<q>_ns` metric, by percentile.
    #[test]
    fn tail_columns_are_the_tabulated_percentiles_in_order() {
        let t = Table {
            axes: vec!["system".into()],
            metrics: ["read.p99_5_ns", "write.p95_ns", "read.p95_ns", "read.p99_999_ns", "read.mean_ns"]
                .map(String::from)
                .to_vec(),
            rows: vec![],
        };
        assert_eq!(tail_columns(&t, "read"), [(95.0, 2), (99.5, 0), (99.999, 3)]);
        assert_eq!(tail_columns(&t, "write"), [(95.0, 1)]);
    }
}
