//! Result tables: one CSV row per run, and the comparison normalized to a baseline
//! (CSV and markdown). Pure functions of the plan and the reports' bytes, so every way of
//! producing the same runs (threads, shards, resume, merge) gives the same files.

use std::fmt::Write as _;

use anyhow::{Context, bail};

use super::spec::PlanInfo;

/// The tables of a complete sweep.
pub struct Tables {
    /// One row per run: `run`, the axes, `seed`, the metrics, `key`.
    pub results_csv: String,
    /// Comparison (empty when the plan has no baseline).
    pub compare_csv: String,
    /// Comparison as markdown (also printed).
    pub compare_md: String,
}

/// A metric value as read from a report.
#[derive(Clone)]
enum Cell {
    Num(f64, String),
    Text(String),
}

impl Cell {
    fn text(&self) -> &str {
        match self {
            Cell::Num(_, t) | Cell::Text(t) => t,
        }
    }
}

/// Look `path` (dotted) up in a report.
fn metric(report: &serde_json::Value, path: &str, key: &str) -> anyhow::Result<Cell> {
    let mut v = report;
    for part in path.split('.') {
        if v.is_null() {
            // A section this run does not have (`pen` without PEN, `placement.mcs` under
            // another policy): the metric is undefined here, as WAF is without writes.
            return Ok(Cell::Text("n/a".into()));
        }
        v = match v.get(part) {
            Some(x) => x,
            None => {
                let here: Vec<&str> =
                    v.as_object().map(|o| o.keys().map(String::as_str).collect()).unwrap_or_default();
                let hint = if lamina_engine::stats::percentile_of_key(part).is_some() {
                    "; percentile fields follow the run's stats.percentiles"
                } else {
                    ""
                };
                bail!(
                    "metric {path:?}: the report of run {key} has no {part:?} (keys there: {}{hint})",
                    here.join(", ")
                );
            }
        };
    }
    Ok(match v {
        serde_json::Value::Number(n) => Cell::Num(n.as_f64().unwrap_or(f64::NAN), n.to_string()),
        serde_json::Value::String(s) => Cell::Text(s.clone()),
        serde_json::Value::Bool(b) => Cell::Text(b.to_string()),
        // An undefined metric (e.g. WAF of a read-only trace).
        serde_json::Value::Null => Cell::Text("n/a".into()),
        _ => bail!("metric {path:?} of run {key} is not a number, string or bool"),
    })
}

/// A CSV table being built (RFC 4180 quoting by the `csv` crate, `\n` line ends).
struct Csv(csv::Writer<Vec<u8>>);

impl Csv {
    fn new() -> Csv {
        Csv(csv::WriterBuilder::new().terminator(csv::Terminator::Any(b'\n')).from_writer(Vec::new()))
    }

    fn row(&mut self, fields: &[String]) -> anyhow::Result<()> {
        self.0.write_record(fields).context("formatting a CSV row")
    }

    fn finish(self) -> anyhow::Result<String> {
        let bytes = self.0.into_inner().map_err(|e| anyhow::anyhow!("formatting CSV: {}", e.error()))?;
        String::from_utf8(bytes).context("CSV is UTF-8")
    }
}

fn md_cell(s: &str) -> String {
    s.replace('|', "\\|")
}

fn ratio_text(v: f64, base: f64) -> String {
    let r = v / base;
    if r.is_finite() { format!("{r:.4}") } else { "n/a".into() }
}

/// Build the tables from the plan and each run's report (in plan order).
pub fn build(plan: &PlanInfo, reports: &[serde_json::Value]) -> anyhow::Result<Tables> {
    assert_eq!(plan.runs.len(), reports.len(), "one report per planned run");
    let mut cells: Vec<Vec<Cell>> = Vec::with_capacity(reports.len());
    for (run, rep) in plan.runs.iter().zip(reports) {
        let row: anyhow::Result<Vec<Cell>> = plan.metrics.iter().map(|m| metric(rep, m, &run.key)).collect();
        cells.push(row?);
    }
    let seed_is_axis = plan.axes.iter().any(|a| a == "seed");

    let mut results_csv = Csv::new();
    let mut header = vec!["run".to_owned()];
    header.extend(plan.axes.iter().cloned());
    if !seed_is_axis {
        header.push("seed".into());
    }
    header.extend(plan.metrics.iter().cloned());
    header.push("key".into());
    results_csv.row(&header)?;
    for (run, row) in plan.runs.iter().zip(&cells) {
        let mut f = vec![run.index.to_string()];
        f.extend(run.labels.iter().cloned());
        if !seed_is_axis {
            f.push(run.seed.to_string());
        }
        f.extend(row.iter().map(|c| c.text().to_owned()));
        f.push(run.key.clone());
        results_csv.row(&f)?;
    }

    let (compare_csv, compare_md) = match &plan.baseline {
        None => (String::new(), String::new()),
        Some(b) => compare(plan, &cells, &b.axis, &b.label)?,
    };
    Ok(Tables { results_csv: results_csv.finish()?, compare_csv, compare_md })
}

/// Rows: combinations of the other axes, in plan order; columns: the baseline axis's
/// values in axis order; cells: metric / baseline metric.
fn compare(
    plan: &PlanInfo,
    cells: &[Vec<Cell>],
    axis: &str,
    base_label: &str,
) -> anyhow::Result<(String, String)> {
    let ax = plan.axes.iter().position(|a| a == axis).context("baseline axis is an axis")?;
    // Baseline-axis values in first-appearance order (= axis order in the product).
    let mut columns: Vec<String> = Vec::new();
    // Row keys (other labels) in first-appearance order, each with run index per column.
    let mut rows: Vec<(Vec<String>, Vec<Option<usize>>)> = Vec::new();
    for run in &plan.runs {
        if !columns.contains(&run.labels[ax]) {
            columns.push(run.labels[ax].clone());
        }
    }
    let base_col = columns.iter().position(|c| c == base_label).context("baseline value present")?;
    for (i, run) in plan.runs.iter().enumerate() {
        let other: Vec<String> =
            run.labels.iter().enumerate().filter(|&(k, _)| k != ax).map(|(_, l)| l.clone()).collect();
        let col = columns.iter().position(|c| c == &run.labels[ax]).expect("column exists");
        let r = match rows.iter().position(|(k, _)| k == &other) {
            Some(r) => r,
            None => {
                rows.push((other, vec![None; columns.len()]));
                rows.len() - 1
            }
        };
        rows[r].1[col] = Some(i);
    }
    let other_axes: Vec<String> =
        plan.axes.iter().enumerate().filter(|&(k, _)| k != ax).map(|(_, a)| a.clone()).collect();

    let mut csv = Csv::new();
    let mut header = other_axes.clone();
    header.push("metric".into());
    header.extend(columns.iter().cloned());
    csv.row(&header)?;

    let mut md = String::new();
    let _ = writeln!(md, "# {}: relative to {axis} = {base_label}\n", plan.name);
    for (m, metric) in plan.metrics.iter().enumerate() {
        let _ = writeln!(md, "## {metric} (relative, {base_label} = 1)\n");
        let mut h: Vec<String> = other_axes.iter().map(|a| md_cell(a)).collect();
        h.extend(columns.iter().map(|c| md_cell(c)));
        let _ = writeln!(md, "| {} |", h.join(" | "));
        let align: Vec<&str> =
            other_axes.iter().map(|_| "---").chain(columns.iter().map(|_| "---:")).collect();
        let _ = writeln!(md, "|{}|", align.join("|"));
        // Geometric mean of each column's ratios over the rows where all are defined.
        let mut log_sums = vec![0.0f64; columns.len()];
        let mut n_geo = 0usize;
        for (other, idx) in &rows {
            let value = |c: usize| -> Option<f64> {
                idx[c].and_then(|i| match &cells[i][m] {
                    Cell::Num(v, _) => Some(*v),
                    Cell::Text(_) => None,
                })
            };
            let base = value(base_col);
            let ratios: Vec<Option<f64>> = (0..columns.len())
                .map(|c| match (value(c), base) {
                    (Some(v), Some(b)) if (v / b).is_finite() => Some(v / b),
                    _ => None,
                })
                .collect();
            let texts: Vec<String> = (0..columns.len())
                .map(|c| match (value(c), base) {
                    (Some(v), Some(b)) => ratio_text(v, b),
                    _ => "n/a".into(),
                })
                .collect();
            let mut f = other.clone();
            f.push(metric.clone());
            f.extend(texts.iter().cloned());
            csv.row(&f)?;
            let mut mdrow: Vec<String> = other.iter().map(|o| md_cell(o)).collect();
            mdrow.extend(texts);
            let _ = writeln!(md, "| {} |", mdrow.join(" | "));
            if ratios.iter().all(|r| r.is_some_and(|x| x > 0.0)) {
                n_geo += 1;
                for (s, r) in log_sums.iter_mut().zip(&ratios) {
                    *s += r.expect("checked").ln();
                }
            }
        }
        if n_geo > 0 && rows.len() > 1 {
            let mut mdrow: Vec<String> = vec![String::new(); other_axes.len()];
            if let Some(first) = mdrow.first_mut() {
                *first = format!("geomean ({n_geo} rows)");
            }
            mdrow.extend(log_sums.iter().map(|s| format!("{:.4}", (s / n_geo as f64).exp())));
            let _ = writeln!(md, "| {} |", mdrow.join(" | "));
        }
        let _ = writeln!(md);
    }
    Ok((csv.finish()?, md))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::spec::{Baseline, RunInfo};

    #[test]
    fn csv_fields_are_quoted_only_when_needed() {
        let mut c = Csv::new();
        c.row(&["plain".into(), "a,b".into(), "say \"hi\"".into(), "two\nlines".into()]).unwrap();
        assert_eq!(c.finish().unwrap(), "plain,\"a,b\",\"say \"\"hi\"\"\",\"two\nlines\"\n");
    }

    #[test]
    fn an_undefined_metric_is_na_not_an_error() {
        // The WAF of a read-only trace is null in the report (issue #8 item 6).
        let r = serde_json::json!({ "waf": null, "read": { "p99_ns": 5 } });
        assert_eq!(metric(&r, "waf", "k").unwrap().text(), "n/a");
        assert_eq!(metric(&r, "read.p99_ns", "k").unwrap().text(), "5");
        // So is a field of a section the run does not have (PEN counters without PEN).
        let r = serde_json::json!({ "pen": null, "gc": { "jobs": 3 } });
        assert_eq!(metric(&r, "pen.m_merges", "k").unwrap().text(), "n/a");
        assert!(metric(&r, "gc.nothing", "k").is_err(), "a missing key is still an error");
    }

    /// Two policies × two traces: ratios by hand, baseline column 1, geometric mean row.
    #[test]
    fn comparison_divides_by_the_baseline_per_row() {
        let run = |index: usize, trace: &str, policy: &str| RunInfo {
            index,
            key: format!("k{index}"),
            labels: vec![trace.into(), policy.into()],
            seed: 0,
            trace_digest: "xxh3-64:0".into(),
        };
        let plan = PlanInfo {
            lamina_sweep_plan: 1,
            name: "t".into(),
            axes: vec!["trace".into(), "sched.placement".into()],
            metrics: vec!["write.mean_ns".into()],
            latency_logs: false,
            baseline: Some(Baseline { axis: "sched.placement".into(), label: "static".into() }),
            runs: vec![run(0, "a", "static"), run(1, "a", "uq"), run(2, "b", "static"), run(3, "b", "uq")],
        };
        let rep = |v: f64| serde_json::json!({ "write": { "mean_ns": v } });
        let t = build(&plan, &[rep(100.0), rep(50.0), rep(200.0), rep(400.0)]).unwrap();
        assert_eq!(
            t.results_csv,
            "run,trace,sched.placement,seed,write.mean_ns,key\n0,a,static,0,100.0,k0\n1,a,uq,0,50.0,k1\n\
             2,b,static,0,200.0,k2\n3,b,uq,0,400.0,k3\n"
        );
        assert_eq!(
            t.compare_csv,
            "trace,metric,static,uq\na,write.mean_ns,1.0000,0.5000\nb,write.mean_ns,1.0000,2.0000\n"
        );
        assert!(t.compare_md.contains("| geomean (2 rows) | 1.0000 | 1.0000 |"), "{}", t.compare_md);
        // A metric the report lacks is an error naming it.
        let bad = PlanInfo { metrics: vec!["write.p42_ns".into()], ..plan };
        let e = build(&bad, &[rep(1.0), rep(1.0), rep(1.0), rep(1.0)]).err().unwrap().to_string();
        assert!(
            e.contains("write.p42_ns") && e.contains("mean_ns") && e.contains("stats.percentiles"),
            "{e}"
        );
    }
}
