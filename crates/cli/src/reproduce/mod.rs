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
//!   `results.compare.csv`, `results.compare.md`).
//!
//! Everything written is a function of the experiment, the traces and the engine, so a
//! rerun (or a resumed run) gives the same bytes.

pub mod claims;
pub mod papers;
pub mod parts;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Args;

use crate::exit::usage;
use crate::out::write_atomic;
use crate::plot::chart::{Figure, Format, LineChart, Series};
use crate::plot::data::{self, Table};
use crate::sweep::{self, ExecArgs, SlurmArgs};
use papers::{FigureKind, Paper};

/// Arguments of `lamina reproduce`.
#[derive(Args, Debug)]
pub struct ReproduceArgs {
    /// The paper (one entry of the registry in reproduce/papers.rs).
    #[arg(value_parser = clap::builder::PossibleValuesParser::new(papers::PAPERS.iter().map(|p| p.id)))]
    paper: String,
    /// The CI-sized experiment (experiments/ci/: seconds on 2 cores) instead of the full one.
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
    /// (their folder names, listed in the index) [default: all of them].
    #[arg(long, value_name = "NAME")]
    part: Option<String>,
}

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

/// One experiment of a paper to run: the main one (`part` None) or one of its parts.
struct Unit {
    /// The paper as this experiment sees it (its figures, claims and policy axis).
    paper: Paper,
    part: Option<&'static parts::Part>,
    /// The experiment file, relative to the experiments folder.
    rel_spec: &'static str,
    /// Its output folder.
    out: PathBuf,
    plan: sweep::spec::Plan,
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
    let all_parts: Vec<&parts::Part> = parts::of(paper.id).collect();
    if let Some(p) = &args.part
        && p != MAIN_PART
        && !all_parts.iter().any(|x| x.dir == *p)
    {
        let names: Vec<&str> = std::iter::once(MAIN_PART).chain(all_parts.iter().map(|x| x.dir)).collect();
        return Err(usage(format!("--part {p}: {} has the parts {}", paper.id, names.join(", "))));
    }
    let wanted = |name: &str| args.part.as_deref().is_none_or(|p| p == name);
    // Plan every experiment first, so a missing trace stops the command before any run.
    let mut units = Vec::new();
    let mut skipped = Vec::new();
    if wanted(MAIN_PART) {
        let rel_spec = if args.quick { paper.quick } else { paper.full };
        let plan = sweep::plan_for(&experiment_path(&args, rel_spec)?, args.exec.trace_root.as_deref())?;
        units.push(Unit { paper: *paper, part: None, rel_spec, out: out.clone(), plan });
    }
    for part in all_parts.iter().filter(|p| wanted(p.dir)) {
        let rel_spec = match (args.quick, part.quick) {
            (false, _) => part.full,
            (true, Some(q)) => q,
            (true, None) => {
                skipped.push(*part);
                continue;
            }
        };
        let plan = sweep::plan_for(&experiment_path(&args, rel_spec)?, args.exec.trace_root.as_deref())?;
        let out = out.join(part.dir);
        units.push(Unit { paper: part.as_paper(paper), part: Some(part), rel_spec, out, plan });
    }
    let again = |u: &Unit| {
        let part = match (&args.part, u.part) {
            (None, _) => String::new(),
            (Some(_), None) => format!(" --part {MAIN_PART}"),
            (Some(_), Some(p)) => format!(" --part {}", p.dir),
        };
        format!(
            "lamina reproduce {}{}{part} --out {}",
            paper.id,
            if args.quick { " --quick" } else { "" },
            out.display()
        )
    };
    if args.slurm.emit_slurm {
        if units.len() > 1 {
            return Err(usage(format!(
                "--emit-slurm: {} has {} experiments; emit one at a time with --part ({})",
                paper.id,
                units.len(),
                units.iter().map(|u| u.part.map_or(MAIN_PART, |p| p.dir)).collect::<Vec<_>>().join(", ")
            )));
        }
        let u = &units[0];
        let spec = experiment_path(&args, u.rel_spec)?;
        let sweep_dir = u.out.join("sweep");
        let script = args.slurm.script(&spec, &sweep_dir, args.exec.trace_root.as_deref(), &u.plan.info)?;
        crate::out::print(&script)?;
        return crate::out::print(&format!(
            "# When the array is done: {} (draws the figures and checks the claims)\n",
            again(u)
        ));
    }
    let mut all_rows = Vec::new();
    let mut done = Vec::new();
    let mut unfinished = false;
    for u in &units {
        eprintln!("reproduce {}: experiment {} into {}", paper.id, u.rel_spec, u.out.display());
        match run_unit(&args, u)? {
            Some(rows) => {
                all_rows.extend(rows.iter().map(|r| match u.part {
                    Some(p) => claims::ClaimRow { id: format!("{}/{}", p.dir, r.id), ..r.clone() },
                    None => r.clone(),
                }));
                done.push((u, rows));
            }
            None => {
                eprintln!(
                    "reproduce {}: once every shard is done, run `{}` to draw the figures",
                    paper.id,
                    again(u)
                );
                unfinished = true;
            }
        }
    }
    if unfinished {
        return Ok(());
    }
    // The top-level index and claims: the main experiment's (written by run_unit) with
    // the parts', when the paper has parts and every experiment was asked for.
    if args.part.is_none() && (units.iter().any(|u| u.part.is_some()) || !skipped.is_empty()) {
        let main = done.iter().find(|(u, _)| u.part.is_none());
        let mut index = match main {
            Some((u, _)) => std::fs::read_to_string(u.out.join("README.md"))
                .with_context(|| format!("reading {}", u.out.join("README.md").display()))?,
            None => format!("# Reproducing: {}\n\n", paper.title),
        };
        index.push_str(&parts_index(&done, &skipped, &out));
        write_atomic(&out.join("claims.csv"), claims::to_csv(&all_rows).as_bytes())?;
        write_atomic(&out.join("claims.json"), claims::to_json(&all_rows).as_bytes())?;
        write_atomic(&out.join("README.md"), index.as_bytes())?;
    }
    let index = match (&args.part, units.as_slice()) {
        (Some(_), [u]) => u.out.join("README.md"),
        _ => out.join("README.md"),
    };
    eprintln!("reproduce {}: index {}", paper.id, index.display());
    crate::out::print(&claims::to_markdown(&all_rows))
}

/// The `--part` name of a paper's main experiment.
const MAIN_PART: &str = "main";

/// Run one experiment and write its folder (figures, claims, index); None while shards
/// are still to run.
fn run_unit(args: &ReproduceArgs, u: &Unit) -> anyhow::Result<Option<Vec<claims::ClaimRow>>> {
    let sweep_dir = u.out.join("sweep");
    if !sweep::execute(&u.plan, &sweep_dir, args.exec.threads, args.exec.shard)? {
        return Ok(None);
    }
    sweep::write_tables(&u.plan.info, &sweep_dir, false)?;
    let table = Table::read(&sweep_dir.join("results.csv"))?;
    let figures_dir = u.out.join("figures");
    std::fs::create_dir_all(&figures_dir)
        .map_err(|e| usage(format!("output directory {}: {e}", figures_dir.display())))?;
    let mut drawn = Vec::new();
    for f in u.paper.figures {
        let fig = match figure(&u.paper, f, &table, &u.plan.info, &sweep_dir)? {
            Ok((f, _)) if f.is_empty() => Err("not drawn: the runs have no value for it".to_owned()),
            other => other,
        };
        let path = match &fig {
            Ok((fig, note)) => Ok((
                fig.write(&figures_dir.join(format!("{}.{}", f.file, args.format.ext())), args.format)?,
                note.clone(),
            )),
            Err(why) => Err(why.clone()),
        };
        drawn.push((f, path));
    }
    let rows = claims::check(&u.paper, &table)?;
    write_atomic(&u.out.join("claims.csv"), claims::to_csv(&rows).as_bytes())?;
    write_atomic(&u.out.join("claims.json"), claims::to_json(&rows).as_bytes())?;
    let index = index(&u.paper, u.part, u.rel_spec, args.quick, &u.out, &drawn, &rows);
    write_atomic(&u.out.join("README.md"), index.as_bytes())?;
    Ok(Some(rows))
}

/// The top-level index's section on the paper's further experiments.
fn parts_index(done: &[(&Unit, Vec<claims::ClaimRow>)], skipped: &[&parts::Part], out: &Path) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "## Further experiments of this paper\n");
    let _ = writeln!(
        s,
        "Each ran into a folder of its own with its figures, tables and claims; every claim is also in \
         this folder's `claims.csv` and `claims.json`, its id prefixed by the folder.\n"
    );
    for (u, rows) in done {
        let Some(p) = u.part else { continue };
        let rel = u.out.strip_prefix(out).unwrap_or(&u.out).display().to_string();
        let _ = writeln!(s, "### {}\n", p.what);
        let _ = writeln!(
            s,
            "Experiment `experiments/{}`; figures and tables: [{rel}/README.md]({rel}/README.md).\n",
            u.rel_spec
        );
        let _ = writeln!(s, "{}", claims::to_markdown(rows));
    }
    for p in skipped {
        let _ = writeln!(s, "### {}\n", p.what);
        let _ = writeln!(
            s,
            "*Not run in --quick mode: it has no CI-sized experiment. The full one, `experiments/{}`, needs {}.*\n",
            p.full, p.needs
        );
    }
    s
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
    paper: &Paper,
    f: &papers::FigureSpec,
    t: &Table,
    plan: &sweep::spec::PlanInfo,
    sweep_dir: &Path,
) -> anyhow::Result<Result<(Figure, Option<String>), String>> {
    let title = format!("{}: {}", paper.id, f.title);
    let policy = t.axis(paper.policy_axis)?;
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
        FigureKind::WriteCdf { filters } => {
            Ok((Figure::Lines(write_cdf(paper, filters, t, plan, sweep_dir, &title)?), None))
        }
        FigureKind::WriteTimeline { filters, windows } => {
            if !plan.latency_logs {
                Err("not drawn: the experiment writes no per-request logs (`latency_logs`)".to_owned())
            } else {
                match write_timeline(paper, filters, *windows, t, plan, sweep_dir, &title)? {
                    Some((chart, note)) => Ok((Figure::Lines(chart), Some(note))),
                    None => Err("not drawn: no runs at these axis values".to_owned()),
                }
            }
        }
    })
}

/// The write CDF of each policy: the runs matching the filters, every other axis at its
/// first value.
fn write_cdf(
    paper: &Paper,
    filters: &[(&str, &str)],
    t: &Table,
    plan: &sweep::spec::PlanInfo,
    sweep_dir: &Path,
    title: &str,
) -> anyhow::Result<LineChart> {
    let PolicyRuns { policy, want, runs } = one_per_policy(paper, filters, t, plan)?;
    let mut series = Vec::new();
    for r in runs {
        let path = sweep::run_path(sweep_dir, &r.key);
        let (_, d) = data::report_distributions(&path)?;
        let d =
            d.with_context(|| format!("{}: no histograms (a report older than schema v4)", path.display()))?;
        if let Some((_, h)) = d.hists.iter().find(|(c, _)| *c == "write") {
            series.push(Series { name: r.labels[policy].clone(), points: data::cdf_points(h) });
        }
    }
    Ok(data::cdf_chart(
        title,
        &format!("write response time (µs, log scale); {}", fixed_axes(plan, &want)),
        series,
    ))
}

/// The runs of a figure drawn one series per policy.
struct PolicyRuns<'p> {
    /// The policy axis's position.
    policy: usize,
    /// The wanted label of every other axis (the filter's value, else the first run's
    /// label); None at the policy axis.
    want: Vec<Option<String>>,
    /// The runs at those labels, in plan order.
    runs: Vec<&'p sweep::spec::RunInfo>,
}

/// The runs of a figure drawn one series per policy, under `filters`.
fn one_per_policy<'p>(
    paper: &Paper,
    filters: &[(&str, &str)],
    t: &Table,
    plan: &'p sweep::spec::PlanInfo,
) -> anyhow::Result<PolicyRuns<'p>> {
    let fl = resolve_filters(t, filters);
    let policy = plan.axes.iter().position(|a| a == paper.policy_axis).context("policy axis in the plan")?;
    let want: Vec<Option<String>> = plan
        .axes
        .iter()
        .enumerate()
        .map(|(i, a)| {
            (i != policy).then(|| {
                fl.iter()
                    .find(|(fa, _)| fa == a)
                    .map_or_else(|| plan.runs[0].labels[i].clone(), |(_, l)| l.clone())
            })
        })
        .collect();
    let runs = plan
        .runs
        .iter()
        .filter(|r| want.iter().zip(&r.labels).all(|(w, l)| w.as_ref().is_none_or(|w| w == l)))
        .collect();
    Ok(PolicyRuns { policy, want, runs })
}

/// `axis=label` of every axis a figure fixes.
fn fixed_axes(plan: &sweep::spec::PlanInfo, want: &[Option<String>]) -> String {
    plan.axes
        .iter()
        .zip(want)
        .filter_map(|(a, w)| w.as_ref().map(|w| format!("{a}={}", data::short_label(a, w))))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The write latency over time of each policy (the first policy is the one the others
/// are compared with, window by window), and the comparison in words; None when no run
/// has the wanted labels.
fn write_timeline(
    paper: &Paper,
    filters: &[(&str, &str)],
    windows: usize,
    t: &Table,
    plan: &sweep::spec::PlanInfo,
    sweep_dir: &Path,
    title: &str,
) -> anyhow::Result<Option<(LineChart, String)>> {
    let PolicyRuns { policy, want, runs } = one_per_policy(paper, filters, t, plan)?;
    let mut logs = Vec::with_capacity(runs.len());
    for r in runs {
        let lines = data::read_latency_log(&sweep::log_path(sweep_dir, &r.key))?;
        if lines.iter().any(|l| !l.is_read) {
            logs.push((r.labels[policy].clone(), lines));
        }
    }
    if logs.len() < 2 {
        return Ok(None);
    }
    let title = format!("{title} ({})", fixed_axes(plan, &want));
    let (chart, compared) = data::timeline_compare(&logs, windows, false, &title);
    let mut note = String::new();
    for c in compared {
        let _ = write!(
            note,
            "{} against {} ({}): write mean lower in {} of {} windows, maximum lower in {}. ",
            c.name,
            logs[0].0,
            fixed_axes(plan, &want),
            c.mean_lower,
            c.windows,
            c.max_lower
        );
    }
    Ok(Some((chart, note.trim_end().to_owned())))
}

/// A figure as written (its file and the index's note) or why it was not drawn.
type Drawn = Result<(PathBuf, Option<String>), String>;

/// The folder's README.md.
fn index(
    paper: &Paper,
    part: Option<&parts::Part>,
    rel_spec: &str,
    quick: bool,
    out: &Path,
    drawn: &[(&papers::FigureSpec, Drawn)],
    rows: &[claims::ClaimRow],
) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# Reproducing: {}\n", paper.title);
    if let Some(p) = part {
        let _ = writeln!(s, "{}.\n", p.what);
    }
    let _ = writeln!(
        s,
        "Paper: `{}`. Experiment: `experiments/{rel_spec}` ({} mode). Made by\n`lamina reproduce {}{}`; \
         every file here is a function of the experiment, the traces and the engine (a rerun gives the same bytes).\n",
        paper.source,
        if quick { "quick, CI-sized" } else { "full" },
        paper.id,
        if quick { " --quick" } else { "" },
    );
    let _ = writeln!(s, "## Figures\n");
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
    let _ = writeln!(s, "## Tables\n");
    let _ = writeln!(
        s,
        "- [sweep/results.csv](sweep/results.csv): one row per run\n\
         - [sweep/results.compare.md](sweep/results.compare.md) ([csv](sweep/results.compare.csv)): every metric relative to the baseline\n"
    );
    let _ = writeln!(s, "## Claims\n");
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
        let rows = claims::check(paper, &t).unwrap();
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
}
