//! Where figures get their numbers: a run's JSON report (its histograms), a per-request
//! latency log (`lamina run --latency-log`), and a sweep's results table
//! (`results.csv` of `lamina sweep` / `lamina merge`).

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Context;
use hdrhistogram::Histogram;

use super::chart::{LineChart, Series, XAxis, YAxis, tail_y};
use crate::exit::usage;

/// The three CDF classes, in legend order.
pub const CLASSES: [&str; 3] = ["read", "write", "all"];

/// Response-time distributions by class (read, write, all).
pub struct Distributions {
    /// `(class, histogram)`, empty classes left out.
    pub hists: Vec<(&'static str, Histogram<u64>)>,
}

fn hist() -> Histogram<u64> {
    let mut h = Histogram::new_with_bounds(1, 3_600_000_000_000, 3).expect("valid histogram bounds");
    h.auto(true);
    h
}

impl Distributions {
    fn of(read: Histogram<u64>, write: Histogram<u64>) -> Distributions {
        let mut all = read.clone();
        all.add(&write).expect("auto-resizing histogram");
        let hists = [("read", read), ("write", write), ("all", all)]
            .into_iter()
            .filter(|(_, h)| !h.is_empty())
            .collect();
        Distributions { hists }
    }

    /// The CDF figure: response time (µs, log scale) against the tail axis.
    pub fn cdf(&self, title: &str) -> LineChart {
        let series = self
            .hists
            .iter()
            .map(|(name, h)| Series { name: format!("{name} (n = {})", h.len()), points: cdf_points(h) })
            .filter(|s| !s.points.is_empty())
            .collect();
        cdf_chart(title, "response time (µs, log scale)", series)
    }
}

/// A CDF figure: latency on a log-scale x axis, the tail axis up to p99.999.
pub fn cdf_chart(title: &str, x_label: &str, series: Vec<Series>) -> LineChart {
    LineChart {
        title: title.to_owned(),
        x_label: x_label.to_owned(),
        y_label: "percentile".into(),
        x_axis: XAxis::Log,
        y_axis: YAxis::Tail,
        series,
        markers: false,
        reference: None,
    }
}

/// `(µs, tail y)` at every recorded bucket, up to the first that reaches p99.999; a
/// zero value (first bucket) adds its mass but no point, as the x axis is logarithmic.
pub fn cdf_points(h: &Histogram<u64>) -> Vec<(f64, f64)> {
    let mut points = Vec::new();
    for v in h.iter_recorded() {
        let x = v.value_iterated_to();
        if x == 0 {
            continue;
        }
        let y = tail_y(v.quantile_iterated_to());
        points.push((x as f64 / 1000.0, y));
        if y >= super::chart::TAIL_MAX {
            break;
        }
    }
    points
}

/// The distributions of a run's JSON report; `None` for a report older than schema v4
/// (no `histograms`), whose CDF is drawn from its percentile fields instead.
pub fn report_distributions(path: &Path) -> anyhow::Result<(serde_json::Value, Option<Distributions>)> {
    let text = std::fs::read_to_string(path).map_err(|e| usage(format!("{}: {e}", path.display())))?;
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        // New-user trial: a latency log given where a report goes was "not a JSON report"
        // with no word of the flag that takes it.
        let hint = if text.starts_with(lamina_engine::latency_log::HEADER.trim_end()) {
            format!("; it is a latency log: give it as --latency-log {}", path.display())
        } else {
            String::new()
        };
        usage(format!("{}: not a JSON report ({e}){hint}", path.display()))
    })?;
    if v.get("schema_version").is_none() {
        return Err(usage(format!("{}: not a lamina report (no schema_version)", path.display())));
    }
    let Some(h) = v.get("histograms").filter(|h| h.is_object()) else { return Ok((v, None)) };
    let field = |name: &str| -> anyhow::Result<Histogram<u64>> {
        let text = h[name].as_str().ok_or_else(|| {
            usage(format!("{}: histograms.{name} is missing or not a string", path.display()))
        })?;
        lamina_engine::stats::decode_histogram(text)
            .map_err(|e| usage(format!("{}: histograms.{name}: {e}", path.display())))
    };
    let enc = h["encoding"].as_str().unwrap_or_default();
    if enc != lamina_engine::stats::HISTOGRAM_ENCODING {
        return Err(usage(format!(
            "{}: histograms.encoding {enc:?} is not {:?}, the one this lamina reads",
            path.display(),
            lamina_engine::stats::HISTOGRAM_ENCODING
        )));
    }
    let d = Distributions::of(field("read")?, field("write")?);
    Ok((v, Some(d)))
}

/// The CDF of a pre-v4 report, from its percentile fields (`p<P>_ns`): a coarse curve,
/// one point per reported percentile plus the maximum.
pub fn cdf_from_percentiles(report: &serde_json::Value, title: &str) -> LineChart {
    let mut series = Vec::new();
    for class in CLASSES {
        let Some(obj) = report[class].as_object() else { continue };
        let n = obj.get("count").and_then(|c| c.as_u64()).unwrap_or(0);
        if n == 0 {
            continue;
        }
        let mut points: Vec<(f64, f64)> = obj
            .iter()
            .filter_map(|(k, v)| {
                let p = lamina_engine::stats::percentile_of_key(k)?;
                Some((v.as_f64()? / 1000.0, tail_y(p / 100.0)))
            })
            .filter(|p| p.0 > 0.0)
            .collect();
        points.sort_by(|a, b| a.1.total_cmp(&b.1));
        series.push(Series { name: format!("{class} (n = {n}, percentiles only)"), points });
    }
    cdf_chart(title, "response time (µs, log scale)", series)
}

/// One line of a latency log.
#[derive(Clone, Copy)]
pub struct LogLine {
    /// Arrival, ns.
    pub arrival_ns: u64,
    /// True for a read, false for a write (trims are skipped).
    pub is_read: bool,
    /// Response time, ns.
    pub response_ns: u64,
}

/// Read a latency log; errors name the file, line and field.
pub fn read_latency_log(path: &Path) -> anyhow::Result<Vec<LogLine>> {
    let text = std::fs::read_to_string(path).map_err(|e| usage(format!("{}: {e}", path.display())))?;
    let mut lines = text.lines();
    let header = lines.next().unwrap_or_default();
    if format!("{header}\n") != lamina_engine::latency_log::HEADER {
        return Err(usage(format!(
            "{}:1: not a latency log: the header must be {:?} (written by `lamina run --latency-log FILE`)",
            path.display(),
            lamina_engine::latency_log::HEADER.trim_end()
        )));
    }
    let mut out = Vec::new();
    for (i, line) in lines.enumerate() {
        let at = || format!("{}:{}", path.display(), i + 2);
        let f: Vec<&str> = line.split(',').collect();
        if f.len() != 6 {
            return Err(usage(format!("{}: expected 6 comma-separated fields, found {}", at(), f.len())));
        }
        let int = |k: usize, name: &str| -> anyhow::Result<u64> {
            f[k].parse()
                .map_err(|_| usage(format!("{}: field {name}: {:?} is not a whole number", at(), f[k])))
        };
        let is_read = match f[1] {
            "read" => true,
            "write" => false,
            "trim" => continue,
            other => {
                return Err(usage(format!("{}: field op: {other:?} is not read, write or trim", at())));
            }
        };
        out.push(LogLine { arrival_ns: int(0, "arrival_ns")?, is_read, response_ns: int(4, "response_ns")? });
    }
    if out.is_empty() {
        return Err(usage(format!("{}: the log has no read or write request", path.display())));
    }
    Ok(out)
}

/// The read / write / all distributions of a latency log.
pub fn log_distributions(lines: &[LogLine]) -> Distributions {
    let (mut read, mut write) = (hist(), hist());
    for l in lines {
        let h = if l.is_read { &mut read } else { &mut write };
        h.record(l.response_ns).expect("auto-resizing histogram");
    }
    Distributions::of(read, write)
}

/// Per window of arrival time and class (0 = read, 1 = write): requests, sum and
/// maximum of their response times (ns).
type WindowAcc = [Vec<(u64, u128, u64)>; 2];

/// `lines` cut into `windows` spans of `width` ns from `first`.
fn window_stats(lines: &[LogLine], first: u64, width: u64, windows: usize) -> WindowAcc {
    let mut acc = [vec![(0u64, 0u128, 0u64); windows], vec![(0u64, 0u128, 0u64); windows]];
    for l in lines {
        let w = ((l.arrival_ns.saturating_sub(first) / width) as usize).min(windows - 1);
        let a = &mut acc[usize::from(!l.is_read)][w];
        a.0 += 1;
        a.1 += l.response_ns as u128;
        a.2 = a.2.max(l.response_ns);
    }
    acc
}

/// The arrival span of `logs` cut into `windows`: `(first, width, unit, ns per unit)`,
/// seconds once the span passes 10 s, milliseconds below.
fn window_span<'a>(
    logs: impl Iterator<Item = &'a [LogLine]> + Clone,
    windows: usize,
) -> (u64, u64, &'static str, f64) {
    let first = logs.clone().flat_map(|l| l.iter().map(|l| l.arrival_ns)).min().expect("not empty");
    let last = logs.flat_map(|l| l.iter().map(|l| l.arrival_ns)).max().expect("not empty");
    let width = ((last - first) / windows as u64).max(1);
    let (unit, per) = if last - first > 10_000_000_000 { ("s", 1e9) } else { ("ms", 1e6) };
    (first, width, unit, per)
}

/// The mean and the maximum (µs) of class `c` per non-empty window, as two series.
fn window_series(acc: &WindowAcc, c: usize, at: impl Fn(usize) -> f64, name: &str) -> Option<[Series; 2]> {
    let used: Vec<usize> = (0..acc[c].len()).filter(|&w| acc[c][w].0 > 0).collect();
    if used.is_empty() {
        return None;
    }
    let (a, at) = (&acc[c], &at);
    let mean = used.iter().map(|&w| (at(w), a[w].1 as f64 / a[w].0 as f64 / 1000.0)).collect();
    let max = used.iter().map(|&w| (at(w), a[w].2 as f64 / 1000.0)).collect();
    Some([
        Series { name: format!("{name} mean"), points: mean },
        Series { name: format!("{name} max"), points: max },
    ])
}

fn timeline_chart(
    title: &str,
    windows: usize,
    width: u64,
    unit: &str,
    per: f64,
    series: Vec<Series>,
) -> LineChart {
    LineChart {
        title: title.to_owned(),
        x_label: format!(
            "arrival time ({unit}; {windows} windows of {} {unit})",
            super::chart::num(width as f64 / per)
        ),
        y_label: "response time (µs)".into(),
        x_axis: XAxis::Linear,
        y_axis: YAxis::Linear,
        series,
        markers: false,
        reference: None,
    }
}

/// Latency over time: the log cut into `windows` equal spans of arrival time; per span
/// and class, the mean and the maximum response time (µs).
pub fn timeline(lines: &[LogLine], windows: usize, title: &str) -> LineChart {
    assert!(windows > 0 && !lines.is_empty());
    let (first, width, unit, per) = window_span(std::iter::once(lines), windows);
    let acc = window_stats(lines, first, width, windows);
    let at = |w: usize| (first + w as u64 * width) as f64 / per;
    let series =
        ["read", "write"].into_iter().enumerate().filter_map(|(c, class)| window_series(&acc, c, at, class));
    timeline_chart(title, windows, width, unit, per, series.flatten().collect())
}

/// How one log's windows compare with the first log's ([`timeline_compare`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WindowComparison {
    /// The log's name.
    pub name: String,
    /// Windows where both logs have requests of the class.
    pub windows: usize,
    /// Of those, windows where this log's mean response time is lower.
    pub mean_lower: usize,
    /// Of those, windows where this log's maximum response time is lower.
    pub max_lower: usize,
}

/// Latency over time of several runs (`logs`: name and lines) on one arrival axis: the
/// common arrival span cut into `windows`; per run, the mean and the maximum response
/// time of class `read` (false: writes) per window. With the figure, how each run after
/// the first compares with the first, window by window.
pub fn timeline_compare(
    logs: &[(String, Vec<LogLine>)],
    windows: usize,
    read: bool,
    title: &str,
) -> (LineChart, Vec<WindowComparison>) {
    assert!(windows > 0 && logs.iter().all(|(_, l)| !l.is_empty()));
    let (first, width, unit, per) = window_span(logs.iter().map(|(_, l)| l.as_slice()), windows);
    let at = |w: usize| (first + w as u64 * width) as f64 / per;
    let c = usize::from(!read);
    let class = if read { "read" } else { "write" };
    let accs: Vec<WindowAcc> = logs.iter().map(|(_, l)| window_stats(l, first, width, windows)).collect();
    let series = logs
        .iter()
        .zip(&accs)
        .filter_map(|((name, _), acc)| window_series(acc, c, at, &format!("{name} {class}")));
    let chart = timeline_chart(title, windows, width, unit, per, series.flatten().collect());
    let base = &accs[0][c];
    let compared = logs
        .iter()
        .zip(&accs)
        .skip(1)
        .map(|((name, _), acc)| {
            let both: Vec<usize> = (0..windows).filter(|&w| base[w].0 > 0 && acc[c][w].0 > 0).collect();
            let mean = |a: (u64, u128, u64)| a.1 as f64 / a.0 as f64;
            WindowComparison {
                name: name.clone(),
                windows: both.len(),
                mean_lower: both.iter().filter(|&&w| mean(acc[c][w]) < mean(base[w])).count(),
                max_lower: both.iter().filter(|&&w| acc[c][w].2 < base[w].2).count(),
            }
        })
        .collect();
    (chart, compared)
}

/// A sweep's results: one row per run, its axis labels and metric values.
#[derive(Clone, Debug)]
pub struct Table {
    /// Axis names, in the plan's order.
    pub axes: Vec<String>,
    /// Metric names.
    pub metrics: Vec<String>,
    /// One entry per run: axis labels and metric values (None: `n/a`).
    pub rows: Vec<(Vec<String>, Vec<Option<f64>>)>,
}

impl Table {
    /// Read a `results.csv`. The columns are `run`, the axes, `seed` (unless seed is an
    /// axis), the metrics, `key`; when a `plan.json` lies beside the file (a sweep's own
    /// directory), its axis list decides which columns are axes, otherwise every column
    /// up to and including `seed` is one.
    pub fn read(path: &Path) -> anyhow::Result<Table> {
        let plan_axes: Option<Vec<String>> = path
            .parent()
            .map(|d| d.join("plan.json"))
            .and_then(|p| std::fs::read_to_string(p).ok())
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .and_then(|v| serde_json::from_value(v["axes"].clone()).ok());
        let mut r = csv::Reader::from_path(path).map_err(|e| usage(format!("{}: {e}", path.display())))?;
        let header: Vec<String> = r
            .headers()
            .with_context(|| format!("reading {}", path.display()))?
            .iter()
            .map(str::to_owned)
            .collect();
        if header.first().map(String::as_str) != Some("run")
            || header.last().map(String::as_str) != Some("key")
        {
            return Err(usage(format!(
                "{}:1: not a sweep results table: the columns must run from `run` to `key` (the results.csv of `lamina sweep` or `lamina merge`)",
                path.display()
            )));
        }
        let is_axis: Vec<bool> = match &plan_axes {
            Some(axes) => header.iter().map(|h| axes.contains(h)).collect(),
            None => {
                let seed = header.iter().position(|h| h == "seed").ok_or_else(|| {
                    usage(format!("{}:1: no `seed` column and no plan.json beside it", path.display()))
                })?;
                (0..header.len()).map(|i| i >= 1 && i <= seed).collect()
            }
        };
        let last = header.len() - 1;
        let axes: Vec<String> =
            header.iter().zip(&is_axis).filter(|(_, a)| **a).map(|(h, _)| h.clone()).collect();
        let metric_cols: Vec<usize> = (1..last).filter(|&i| !is_axis[i] && header[i] != "seed").collect();
        let metrics = metric_cols.iter().map(|&i| header[i].clone()).collect();
        let mut rows = Vec::new();
        for (n, rec) in r.records().enumerate() {
            let rec = rec.map_err(|e| usage(format!("{}:{}: {e}", path.display(), n + 2)))?;
            let labels = (0..header.len()).filter(|&i| is_axis[i]).map(|i| rec[i].to_owned()).collect();
            let mut values = Vec::new();
            for &i in &metric_cols {
                values.push(match &rec[i] {
                    "n/a" => None,
                    t => Some(t.parse::<f64>().map_err(|_| {
                        usage(format!(
                            "{}:{}: field {}: {t:?} is not a number",
                            path.display(),
                            n + 2,
                            header[i]
                        ))
                    })?),
                });
            }
            rows.push((labels, values));
        }
        Ok(Table { axes, metrics, rows })
    }

    /// Position of an axis; the error lists the axes there are.
    pub fn axis(&self, name: &str) -> anyhow::Result<usize> {
        self.axes
            .iter()
            .position(|a| a == name)
            .ok_or_else(|| usage(format!("no axis {name:?} in the results (axes: {})", self.axes.join(", "))))
    }

    /// Position of a metric; the error lists the metrics there are.
    pub fn metric(&self, name: &str) -> anyhow::Result<usize> {
        self.metrics.iter().position(|a| a == name).ok_or_else(|| {
            usage(format!("no metric {name:?} in the results (metrics: {})", self.metrics.join(", ")))
        })
    }

    /// The labels of an axis in first-appearance order.
    pub fn labels(&self, axis: usize) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for (l, _) in &self.rows {
            if !out.contains(&l[axis]) {
                out.push(l[axis].clone());
            }
        }
        out
    }

    /// Parse `AXIS=LABEL` filters into positions, checking the label exists.
    pub fn filters(&self, filters: &[(String, String)]) -> anyhow::Result<Vec<(usize, String)>> {
        filters
            .iter()
            .map(|(a, l)| {
                let i = self.axis(a)?;
                let labels = self.labels(i);
                if !labels.contains(l) {
                    return Err(usage(format!(
                        "axis {a} has no value {l:?} (values: {})",
                        labels.join(", ")
                    )));
                }
                Ok((i, l.clone()))
            })
            .collect()
    }
}

/// A metric normalised to a baseline value of one axis, per combination of the other
/// axes (the groups), with the geometric mean over the groups where every series has a
/// positive ratio.
#[derive(Clone, Debug, PartialEq)]
pub struct Normalised {
    /// Group labels: the other axes' labels (constant ones left out) joined by ` · `.
    pub groups: Vec<String>,
    /// The series axis's labels.
    pub series: Vec<String>,
    /// `ratios[g][s]` = value / baseline value in group g.
    pub ratios: Vec<Vec<Option<f64>>>,
    /// Geometric mean of each series over the complete groups.
    pub geomean: Vec<Option<f64>>,
    /// How many groups the geometric mean covers.
    pub n_geo: usize,
}

/// A trace label shortened for a figure: its file name without extension(s).
pub fn short_label(axis: &str, label: &str) -> String {
    if axis != "trace" {
        return label.to_owned();
    }
    let name = label.rsplit('/').next().unwrap_or(label);
    // A compression suffix first (as the trace reader accepts), then the format's.
    let name =
        [".gz", ".zst", ".bz2", ".xz", ".lzma"].iter().find_map(|c| name.strip_suffix(c)).unwrap_or(name);
    match name.rsplit_once('.') {
        Some((stem, _)) if !stem.is_empty() => stem.to_owned(),
        _ => name.to_owned(),
    }
}

/// Normalise metric `m` along `series_axis` to its value `baseline`, on the rows that
/// pass `filters`.
pub fn normalise(
    t: &Table,
    m: usize,
    series_axis: usize,
    baseline: &str,
    filters: &[(usize, String)],
) -> anyhow::Result<Normalised> {
    let series = t.labels(series_axis);
    let base = series.iter().position(|s| s == baseline).ok_or_else(|| {
        usage(format!(
            "baseline {baseline:?} is not a value of axis {} (values: {})",
            t.axes[series_axis],
            series.join(", ")
        ))
    })?;
    let rows: Vec<&(Vec<String>, Vec<Option<f64>>)> =
        t.rows.iter().filter(|(l, _)| filters.iter().all(|(a, v)| &l[*a] == v)).collect();
    // Axes that name a group: not the series axis, not filtered, more than one value.
    let varying: Vec<usize> = (0..t.axes.len())
        .filter(|&a| a != series_axis && !filters.iter().any(|(f, _)| *f == a))
        .filter(|&a| rows.iter().any(|(l, _)| l[a] != rows[0].0[a]))
        .collect();
    let mut index: BTreeMap<Vec<&str>, usize> = BTreeMap::new();
    let mut groups: Vec<String> = Vec::new();
    let mut values: Vec<Vec<Option<f64>>> = Vec::new();
    for (labels, vals) in &rows {
        let key: Vec<&str> = varying.iter().map(|&a| labels[a].as_str()).collect();
        let g = *index.entry(key).or_insert_with(|| {
            let name: Vec<String> = varying
                .iter()
                .map(|&a| match t.axes[a].as_str() {
                    "trace" => short_label("trace", &labels[a]),
                    axis => format!("{} {}", axis.rsplit('.').next().unwrap_or(axis), labels[a]),
                })
                .collect();
            // A single configuration is named by its trace (or "all" without a trace axis).
            let single = || match t.axes.iter().position(|a| a == "trace") {
                Some(a) => short_label("trace", &labels[a]),
                None => "all".into(),
            };
            groups.push(if name.is_empty() { single() } else { name.join(" · ") });
            values.push(vec![None; series.len()]);
            groups.len() - 1
        });
        let s = series.iter().position(|x| x == &labels[series_axis]).expect("label listed");
        values[g][s] = vals[m];
    }
    let ratios: Vec<Vec<Option<f64>>> = values
        .iter()
        .map(|row| {
            row.iter()
                .map(|v| match (v, row[base]) {
                    (Some(v), Some(b)) if (v / b).is_finite() => Some(v / b),
                    _ => None,
                })
                .collect()
        })
        .collect();
    let complete: Vec<&Vec<Option<f64>>> =
        ratios.iter().filter(|r| r.iter().all(|x| x.is_some_and(|x| x > 0.0))).collect();
    let n_geo = complete.len();
    let geomean = (0..series.len())
        .map(|s| {
            (n_geo > 0).then(|| {
                (complete.iter().map(|r| r[s].expect("complete").ln()).sum::<f64>() / n_geo as f64).exp()
            })
        })
        .collect();
    Ok(Normalised { groups, series, ratios, geomean, n_geo })
}

/// A metric against an axis: one series per value of `series_axis` (or one line when
/// none), normalised to `baseline` of the series axis when given, the geometric mean
/// over every other axis not fixed by `filters`.
pub fn line_over_axis(
    t: &Table,
    m: usize,
    x_axis: usize,
    series_axis: Option<usize>,
    baseline: Option<&str>,
    filters: &[(usize, String)],
    title: &str,
) -> anyhow::Result<LineChart> {
    let xs = t.labels(x_axis);
    let mut series_names = series_axis.map_or_else(|| vec![t.metrics[m].clone()], |s| t.labels(s));
    // [series][x] = values to average (ratios when normalised)
    let mut cells: Vec<Vec<Vec<f64>>> = vec![vec![Vec::new(); xs.len()]; series_names.len()];
    for (xi, x) in xs.iter().enumerate() {
        let mut f = filters.to_vec();
        f.push((x_axis, x.clone()));
        match (series_axis, baseline) {
            (Some(s), Some(b)) => {
                let n = normalise(t, m, s, b, &f)?;
                for row in &n.ratios {
                    for (si, r) in row.iter().enumerate() {
                        let idx = series_names.iter().position(|x| x == &n.series[si]).expect("same axis");
                        if let Some(r) = r.filter(|r| *r > 0.0) {
                            cells[idx][xi].push(r);
                        }
                    }
                }
            }
            _ => {
                for (labels, vals) in &t.rows {
                    if labels[x_axis] != *x || !f.iter().all(|(a, v)| &labels[*a] == v) {
                        continue;
                    }
                    let idx = series_axis.map_or(0, |s| {
                        series_names.iter().position(|n| n == &labels[s]).expect("label listed")
                    });
                    if let Some(v) = vals[m].filter(|v| *v > 0.0) {
                        cells[idx][xi].push(v);
                    }
                }
            }
        }
    }
    let numeric: Option<Vec<f64>> =
        xs.iter().map(|x| x.parse::<f64>().ok().filter(|v| v.is_finite())).collect();
    let x_axis_kind = match &numeric {
        Some(v)
            if v.iter().all(|&x| x > 0.0)
                && v.iter().cloned().fold(0.0, f64::max)
                    / v.iter().cloned().fold(f64::INFINITY, f64::min)
                    >= 20.0 =>
        {
            XAxis::Log
        }
        Some(_) => XAxis::Linear,
        None => XAxis::Categories(xs.iter().map(|x| short_label(&t.axes[x_axis], x)).collect()),
    };
    let xpos = |i: usize| numeric.as_ref().map_or(i as f64, |v| v[i]);
    let mut series: Vec<Series> = Vec::new();
    for (si, name) in series_names.drain(..).enumerate() {
        let mut points: Vec<(f64, f64)> = (0..xs.len())
            .filter(|&xi| !cells[si][xi].is_empty())
            .map(|xi| {
                let c = &cells[si][xi];
                (xpos(xi), (c.iter().map(|v| v.ln()).sum::<f64>() / c.len() as f64).exp())
            })
            .collect();
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        if !points.is_empty() {
            series.push(Series { name, points });
        }
    }
    let metric = &t.metrics[m];
    let y_label = match baseline {
        Some(b) => format!("{metric} relative to {b} (geomean)"),
        None => format!("{metric} (geomean)"),
    };
    Ok(LineChart {
        title: title.to_owned(),
        x_label: match t.axes[x_axis].as_str() {
            a if a.ends_with("time_scale") => format!("{a} (arrival gaps × this: smaller = heavier load)"),
            a => a.to_owned(),
        },
        y_label,
        x_axis: x_axis_kind,
        y_axis: YAxis::Linear,
        series,
        markers: true,
        reference: baseline.map(|_| 1.0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> Table {
        let row = |t: &str, x: &str, p: &str, v: f64| {
            (vec![t.to_owned(), x.to_owned(), p.to_owned()], vec![Some(v)])
        };
        Table {
            axes: vec!["trace".into(), "trace.time_scale".into(), "sched.placement".into()],
            metrics: vec!["m".into()],
            rows: vec![
                row("dir/a.csv.gz", "1", "static", 10.0),
                row("dir/a.csv.gz", "1", "uq", 5.0),
                row("b.trace", "1", "static", 10.0),
                row("b.trace", "1", "uq", 20.0),
                row("dir/a.csv.gz", "0.01", "static", 10.0),
                row("dir/a.csv.gz", "0.01", "uq", 4.0),
                row("b.trace", "0.01", "static", 10.0),
                row("b.trace", "0.01", "uq", 9.0),
            ],
        }
    }

    /// Ratios per group, groups named by the varying axes (traces shortened), the
    /// geometric mean over the complete groups.
    #[test]
    fn normalisation_by_hand() {
        let t = table();
        let n = normalise(&t, 0, 2, "static", &[(1, "1".into())]).unwrap();
        assert_eq!(n.groups, ["a", "b"]);
        assert_eq!(n.series, ["static", "uq"]);
        assert_eq!(n.ratios, [[Some(1.0), Some(0.5)], [Some(1.0), Some(2.0)]]);
        assert_eq!((n.geomean[1], n.n_geo), (Some(1.0), 2));
        let all = normalise(&t, 0, 2, "static", &[]).unwrap();
        assert_eq!(
            all.groups,
            ["a · time_scale 1", "b · time_scale 1", "a · time_scale 0.01", "b · time_scale 0.01"]
        );
        let e = normalise(&t, 0, 2, "fcfs", &[]).unwrap_err().to_string();
        assert!(
            e.contains("baseline \"fcfs\" is not a value of axis sched.placement (values: static, uq)"),
            "{e}"
        );
    }

    /// A line over a numeric axis spanning 100× is drawn on a log x axis, sorted by x,
    /// each point the geometric mean over the traces of the normalised values.
    #[test]
    fn line_over_a_load_axis() {
        let t = table();
        let c = line_over_axis(&t, 0, 1, Some(2), Some("static"), &[], "t").unwrap();
        assert_eq!(c.x_axis, XAxis::Log);
        assert_eq!(c.reference, Some(1.0));
        let uq = &c.series[1];
        assert_eq!(uq.name, "uq");
        assert_eq!(uq.points.len(), 2);
        assert_eq!(uq.points[0].0, 0.01);
        assert!((uq.points[0].1 - (0.4f64 * 0.9).sqrt()).abs() < 1e-12);
        assert!((uq.points[1].1 - 1.0).abs() < 1e-12);
        // Categories when the labels are not numbers.
        let c = line_over_axis(&t, 0, 0, Some(2), None, &[], "t").unwrap();
        assert_eq!(c.x_axis, XAxis::Categories(vec!["a".into(), "b".into()]));
    }

    #[test]
    fn trace_labels_are_shortened_to_their_stem() {
        assert_eq!(short_label("trace", "msr-csv/hm_0-window1k.csv"), "hm_0-window1k");
        assert_eq!(short_label("trace", "systor17/vdi-sample.csv.gz"), "vdi-sample");
        assert_eq!(short_label("trace", "traces/fixtures/msr.csv.zst"), "msr");
        assert_eq!(short_label("layers", "16.5"), "16.5");
    }

    /// Two runs on one arrival axis: 4 windows of 10 ns over arrivals 0 … 40; run `b`'s
    /// writes are faster in windows 0 and 1 (mean and maximum), slower in 2 and 3.
    #[test]
    fn timeline_compare_counts_windows_where_a_run_is_lower() {
        let w = |arrival_ns, response_ns| LogLine { arrival_ns, is_read: false, response_ns };
        let r = |arrival_ns, response_ns| LogLine { arrival_ns, is_read: true, response_ns };
        let a = vec![w(0, 100), w(5, 300), w(10, 200), w(20, 100), w(30, 50), w(40, 50), r(1, 9)];
        let b = vec![w(0, 50), w(5, 100), w(12, 100), w(21, 300), w(31, 50), w(40, 60)];
        let logs = vec![("a".to_owned(), a), ("b".to_owned(), b)];
        let (chart, cmp) = timeline_compare(&logs, 4, false, "t");
        let names: Vec<&str> = chart.series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["a write mean", "a write max", "b write mean", "b write max"]);
        // Window 3 takes arrivals 30 … 40 (the last window is closed).
        assert_eq!(chart.series[0].points, [(0.0, 0.2), (0.00001, 0.2), (0.00002, 0.1), (0.00003, 0.05)]);
        assert_eq!(cmp, [WindowComparison { name: "b".into(), windows: 4, mean_lower: 2, max_lower: 2 }]);
        // Reads: only `a` has one, so no window to compare.
        let (chart, cmp) = timeline_compare(&logs, 4, true, "t");
        assert_eq!(chart.series.len(), 2);
        assert_eq!(cmp[0].windows, 0);
    }
}
