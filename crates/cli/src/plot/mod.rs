//! `lamina plot`: figures from a run's report, a per-request latency log or a sweep's
//! results, as SVG (default) or PNG, each with its data as CSV beside it. No Python.
//!
//! - `cdf`: response-time CDFs (read / write / all) on a log-scale tail axis to
//!   p99.999, from a report's histograms (schema v4) or a latency log;
//! - `bars`: a metric normalised to a baseline, grouped by the other axes, with the
//!   geometric mean (the form the seed papers use);
//! - `line`: a metric against a sweep axis (load, layers, variation, ...);
//! - `timeline`: latency over time from a latency log, or several runs' on one axis.

pub mod chart;
pub mod data;

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};

use chart::{BarChart, Figure, Format};
use data::Normalised;

use crate::exit::usage;

/// Where the figure goes and in which format (shared by every `plot` subcommand).
#[derive(Args, Debug)]
pub struct OutArgs {
    /// The figure file; its data goes beside it as `.csv` [default: beside the input,
    /// `<input stem>.<kind>.svg`].
    #[arg(long, short, value_name = "FILE")]
    out: Option<PathBuf>,
    /// svg or png [default: the --out extension, else svg].
    #[arg(long, value_enum)]
    format: Option<Format>,
    /// The figure's title [default: made from the input].
    #[arg(long)]
    title: Option<String>,
}

/// `lamina plot` subcommands.
#[derive(Subcommand, Debug)]
pub enum PlotCmd {
    /// Response-time CDFs (read, write, all) from a run's JSON report or a latency log.
    Cdf {
        /// A JSON report (`lamina run --json FILE`, or a sweep's `runs/<key>.json`).
        #[arg(required_unless_present = "latency_log", conflicts_with = "latency_log")]
        report: Option<PathBuf>,
        /// A per-request log (`lamina run --latency-log FILE`) instead of a report.
        #[arg(long, value_name = "FILE")]
        latency_log: Option<PathBuf>,
        #[command(flatten)]
        out: OutArgs,
    },
    /// A metric normalised to a baseline (e.g. each policy over static), per group of
    /// the other axes, with the geometric mean.
    Bars {
        #[command(flatten)]
        sel: Selection,
        /// The axis whose values are the bars (e.g. sched.placement).
        #[arg(long, value_name = "AXIS")]
        series: String,
        /// The value of --series everything is divided by (e.g. static).
        #[arg(long, value_name = "LABEL")]
        baseline: String,
        #[command(flatten)]
        out: OutArgs,
    },
    /// A metric against a sweep axis, one line per value of --series, the geometric mean
    /// over the axes neither names nor --where fixes.
    Line {
        #[command(flatten)]
        sel: Selection,
        /// The axis along x (e.g. trace.time_scale, layers).
        #[arg(long, value_name = "AXIS")]
        x: String,
        /// One line per value of this axis.
        #[arg(long, value_name = "AXIS")]
        series: Option<String>,
        /// Normalise to this value of --series.
        #[arg(long, value_name = "LABEL", requires = "series")]
        baseline: Option<String>,
        #[command(flatten)]
        out: OutArgs,
    },
    /// Latency over time (mean and maximum per window of arrival time) from a latency
    /// log; given several logs (runs of one trace), one class of all of them on one
    /// axis, and how each compares with the first, window by window.
    Timeline {
        /// Per-request logs (`lamina run --latency-log FILE`, or a sweep's
        /// `runs/<key>.latency.csv` with `latency_logs = true`).
        #[arg(required = true, value_name = "LOG")]
        logs: Vec<PathBuf>,
        /// Windows the arrival span is cut into.
        #[arg(long, value_name = "N", default_value_t = 100)]
        windows: usize,
        /// With several logs: the class drawn and compared [default: write].
        #[arg(long, value_enum)]
        op: Option<TimelineOp>,
        /// With several logs: their names in the legend, comma-separated [default: the
        /// file stems].
        #[arg(long, value_delimiter = ',', value_name = "NAME,…")]
        names: Vec<String>,
        #[command(flatten)]
        out: OutArgs,
    },
}

/// The request class a multi-log timeline draws.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimelineOp {
    /// Reads.
    Read,
    /// Writes.
    Write,
}

/// The sweep results a `bars` or `line` figure is drawn from.
#[derive(Args, Debug)]
pub struct Selection {
    /// A sweep's `results.csv` (from `lamina sweep` or `lamina merge`).
    results: PathBuf,
    /// The metric column (e.g. write.mean_ns).
    #[arg(long, value_name = "NAME")]
    metric: String,
    /// Keep only rows with this axis value (repeatable), e.g. --where preset=die-binding-4x2.
    #[arg(long = "where", value_name = "AXIS=LABEL", value_parser = parse_filter)]
    filters: Vec<(String, String)>,
}

fn parse_filter(s: &str) -> Result<(String, String), String> {
    let (a, l) = s.split_once('=').ok_or_else(|| format!("{s:?}: expected AXIS=LABEL"))?;
    Ok((a.trim().to_owned(), l.trim().to_owned()))
}

/// The figure path for `input` and `kind` unless --out names one.
fn out_path(out: &OutArgs, input: &Path, kind: &str) -> anyhow::Result<(PathBuf, Format)> {
    let format = Format::choose(out.format, out.out.as_deref())?;
    let path = match &out.out {
        Some(p) => p.clone(),
        None => {
            let stem = input.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            input.with_file_name(format!("{stem}.{kind}.{}", format.ext()))
        }
    };
    Ok((path, format))
}

fn name_of(p: &Path) -> String {
    p.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
}

/// The bar figure of a normalisation: its groups and a last `geomean` group.
pub fn bars(n: &Normalised, title: &str, value_label: &str) -> BarChart {
    let mut groups = n.groups.clone();
    let mut values = n.ratios.clone();
    if n.n_geo > 0 && n.groups.len() > 1 {
        groups.push(format!("geomean ({} groups)", n.n_geo));
        values.push(n.geomean.clone());
    }
    BarChart {
        title: title.to_owned(),
        value_label: value_label.to_owned(),
        groups,
        series: n.series.clone(),
        values,
        reference: Some(1.0),
    }
}

/// Write `fig` (and its CSV) to `path`'s stem in `format`; print where.
fn emit(fig: &Figure, path: &Path, format: Format) -> anyhow::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
        && !dir.is_dir()
    {
        return Err(usage(format!("output {}: directory {} does not exist", path.display(), dir.display())));
    }
    if fig.is_empty() {
        return Err(usage(format!(
            "{}: nothing to draw — the input has no value for this figure (no completed request of the kind, or every metric value n/a)",
            path.display()
        )));
    }
    let written = fig.write(path, format)?;
    eprintln!("figure: {} (data: {})", written.display(), written.with_extension("csv").display());
    Ok(())
}

/// Run `lamina plot`.
pub fn run(cmd: PlotCmd) -> anyhow::Result<()> {
    match cmd {
        PlotCmd::Cdf { report, latency_log, out } => {
            let input = report.as_deref().or(latency_log.as_deref()).expect("clap requires one");
            let (path, format) = out_path(&out, input, "cdf")?;
            let title = out.title.clone().unwrap_or_else(|| format!("Response-time CDF: {}", name_of(input)));
            let chart = match (&report, &latency_log) {
                (Some(r), _) => match data::report_distributions(r)? {
                    (_, Some(d)) => d.cdf(&title),
                    (v, None) => {
                        // Reports before schema v4 carry no histograms; a later one without
                        // them was edited or written by another tool.
                        let why = match v["schema_version"].as_u64() {
                            Some(n) if n < 4 => format!("schema v{n}, before histograms were added in v4"),
                            _ => format!(
                                "schema v{}, but its `histograms` field is absent",
                                v["schema_version"]
                            ),
                        };
                        eprintln!(
                            "note: {} has no histograms ({why}): the CDF joins its percentile fields",
                            r.display()
                        );
                        data::cdf_from_percentiles(&v, &title)
                    }
                },
                (None, Some(l)) => data::log_distributions(&data::read_latency_log(l)?).cdf(&title),
                (None, None) => unreachable!("clap requires one"),
            };
            emit(&Figure::Lines(chart), &path, format)
        }
        PlotCmd::Bars { sel, series, baseline, out } => {
            let t = data::Table::read(&sel.results)?;
            let (m, s, f) = (t.metric(&sel.metric)?, t.axis(&series)?, t.filters(&sel.filters)?);
            let n = data::normalise(&t, m, s, &baseline, &f)?;
            let (path, format) = out_path(&out, &sel.results, &format!("{}.bars", sel.metric))?;
            let title = out.title.clone().unwrap_or_else(|| format!("{} relative to {baseline}", sel.metric));
            let label = format!("{} ({baseline} = 1)", sel.metric);
            emit(&Figure::Bars(bars(&n, &title, &label)), &path, format)
        }
        PlotCmd::Line { sel, x, series, baseline, out } => {
            let t = data::Table::read(&sel.results)?;
            let (m, xa, f) = (t.metric(&sel.metric)?, t.axis(&x)?, t.filters(&sel.filters)?);
            let sa = series.as_deref().map(|s| t.axis(s)).transpose()?;
            let (path, format) = out_path(&out, &sel.results, &format!("{}.line", sel.metric))?;
            let title = out.title.clone().unwrap_or_else(|| format!("{} against {x}", sel.metric));
            let chart = data::line_over_axis(&t, m, xa, sa, baseline.as_deref(), &f, &title)?;
            emit(&Figure::Lines(chart), &path, format)
        }
        PlotCmd::Timeline { logs, windows, op, names, out } => {
            if windows == 0 {
                return Err(usage("--windows must be at least 1"));
            }
            if logs.len() == 1 && (op.is_some() || !names.is_empty()) {
                return Err(usage("--op and --names compare several logs: give two or more"));
            }
            if !names.is_empty() && names.len() != logs.len() {
                return Err(usage(format!("--names has {} names for {} logs", names.len(), logs.len())));
            }
            let (path, format) = out_path(&out, &logs[0], "timeline")?;
            if let [log] = logs.as_slice() {
                let lines = data::read_latency_log(log)?;
                let title =
                    out.title.clone().unwrap_or_else(|| format!("Latency over time: {}", name_of(log)));
                return emit(&Figure::Lines(data::timeline(&lines, windows, &title)), &path, format);
            }
            let mut runs = Vec::with_capacity(logs.len());
            for (i, log) in logs.iter().enumerate() {
                let stem = || log.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
                runs.push((names.get(i).cloned().unwrap_or_else(stem), data::read_latency_log(log)?));
            }
            let read = op == Some(TimelineOp::Read);
            let class = if read { "read" } else { "write" };
            let title = out.title.clone().unwrap_or_else(|| format!("{class} latency over time"));
            let (chart, compared) = data::timeline_compare(&runs, windows, read, &title);
            emit(&Figure::Lines(chart), &path, format)?;
            for c in compared {
                let pct = |n: usize| if c.windows == 0 { 0.0 } else { 100.0 * n as f64 / c.windows as f64 };
                println!(
                    "{} against {}: {class} mean lower in {} of {} windows ({:.1} %), maximum lower in {} ({:.1} %)",
                    c.name,
                    runs[0].0,
                    c.mean_lower,
                    c.windows,
                    pct(c.mean_lower),
                    c.max_lower,
                    pct(c.max_lower)
                );
            }
            Ok(())
        }
    }
}
