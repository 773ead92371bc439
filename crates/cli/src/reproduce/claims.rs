//! The claims check: each headline claim of a paper as a machine-readable row — the
//! metric, the direction, the paper's magnitude, ours, and a verdict.

use std::fmt::Write as _;

use serde::Serialize;

use super::papers::{Claim, Direction};
use crate::plot::data::{self, Table};

/// How verdicts are decided (also in the index).
pub const RULES: &str = "Verdicts: *ours* is the geometric mean, over the runs the claim covers, of the \
policy's metric divided by the baseline's in the same configuration, minus 1 (for a trend claim: that \
ratio at the second axis value over the ratio at the first, minus 1; for an *up to* claim: the \
best configuration's ratio instead of the geometric mean). **reproduced**: ours moves in \
the paper's direction and by at least three quarters of the paper's magnitude (at least 1 % when the paper \
gives only a direction); **direction only**: the right direction, but less than three quarters of the \
paper's magnitude or under 1 %; a reproduced change at least twice the paper's says so beside the \
verdict (*N× the paper's change*: the direction holds, the number does not); \
**not reproduced**: no change or the other direction; for a claim that two systems are *about equal* \
(direction *about equal*): **reproduced** when ours lies within 10 percentage points of the paper's change, \
else **not reproduced**; **not evaluated**: the experiment lacks the runs (a policy, a metric, or the \
one trace or axis value the claim is about), or the baseline's value is 0 in every configuration the claim \
covers, so no ratio is defined (the row then gives both systems' values: a measurement, not missing runs).";

/// One checked claim.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClaimRow {
    /// Claim id.
    pub id: String,
    /// The claim in words.
    pub claim: String,
    /// The metric.
    pub metric: String,
    /// `policy / baseline`.
    pub comparison: String,
    /// `lower` or `higher`.
    pub direction: String,
    /// The paper's relative change (None: direction only).
    pub paper_change: Option<f64>,
    /// Ours (None: not evaluated).
    pub our_change: Option<f64>,
    /// reproduced / direction only / not reproduced / not evaluated.
    pub verdict: String,
    /// What the geometric mean covers.
    pub scope: String,
    /// Why a claim whose runs exist is not evaluated (the baseline's value is 0
    /// everywhere, so the ratio is undefined), with the values; shown beside the verdict.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The share of the paper's magnitude ours must reach to count as reproduced.
pub const REPRODUCED_FRACTION: f64 = 0.75;

/// A change smaller than this (1 %) is too small to confirm a claim on its own: at
/// best "direction only".
pub const NOISE_FLOOR: f64 = 0.01;

/// The verdict for a change `ours` against the paper's direction and magnitude.
pub fn verdict(direction: Direction, paper: Option<f64>, ours: f64) -> &'static str {
    let signed = match direction {
        Direction::Lower => -ours,
        Direction::Higher => ours,
        Direction::About => {
            let off = (ours - paper.unwrap_or(0.0)).abs();
            return if off <= super::papers::ABOUT_TOLERANCE { "reproduced" } else { "not reproduced" };
        }
    };
    if signed <= 0.0 {
        return "not reproduced";
    }
    if signed < NOISE_FLOOR {
        return "direction only";
    }
    match paper {
        Some(p) if signed < REPRODUCED_FRACTION * p.abs() => "direction only",
        _ => "reproduced",
    }
}

/// The geometric-mean ratio of `claim.policy` over `claim.baseline` under `filters`, and
/// the number of configurations it covers.
fn ratio(
    t: &Table,
    claim: &Claim,
    filters: &[(String, String)],
    policy_axis: usize,
) -> anyhow::Result<Option<(f64, usize)>> {
    // A policy the experiment does not run, or a metric it does not tabulate, leaves
    // the claim not evaluated.
    let labels = t.labels(policy_axis);
    if !labels.iter().any(|l| l == claim.baseline)
        || !labels.iter().any(|l| l == claim.policy)
        || t.metric(claim.metric).is_err()
    {
        return Ok(None);
    }
    // A claim about one trace (or one value of another axis) the experiment does not
    // run is not evaluated either (the `--quick` experiments run other traces).
    if filters.iter().any(|(a, v)| t.axis(a).is_ok_and(|i| !t.labels(i).contains(v))) {
        return Ok(None);
    }
    let fl = t.filters(filters)?;
    let n = data::normalise(t, t.metric(claim.metric)?, policy_axis, claim.baseline, &fl)?;
    let Some(s) = n.series.iter().position(|x| x == claim.policy) else { return Ok(None) };
    if claim.best {
        // The best configuration where both ran (a ratio > 0), as the paper's "up to".
        let ratios: Vec<f64> = n.ratios.iter().filter_map(|r| r[s]).filter(|r| *r > 0.0).collect();
        let pick = |a: f64, b: f64| if claim.direction == Direction::Higher { a.max(b) } else { a.min(b) };
        return Ok(ratios.iter().copied().reduce(pick).map(|r| (r, ratios.len())));
    }
    Ok(n.geomean[s].map(|g| (g, n.n_geo)))
}

/// When `claim` has runs under `filters` but its baseline's value is 0 in every one of
/// them (MBM's erase count in `--quick`, where TBM reaches no GC), the values in words:
/// the ratio is undefined, which is not the same as missing runs.
fn zero_baseline(
    t: &Table,
    claim: &Claim,
    filters: &[(String, String)],
    policy_axis: usize,
) -> anyhow::Result<Option<String>> {
    let Ok(m) = t.metric(claim.metric) else { return Ok(None) };
    if filters.iter().any(|(a, v)| t.axis(a).is_ok_and(|i| !t.labels(i).contains(v))) {
        return Ok(None);
    }
    let fl = t.filters(filters)?;
    let of = |label: &str| -> Vec<Option<f64>> {
        t.rows
            .iter()
            .filter(|(l, _)| l[policy_axis] == label && fl.iter().all(|(a, v)| &l[*a] == v))
            .map(|(_, v)| v[m])
            .collect()
    };
    let (base, policy) = (of(claim.baseline), of(claim.policy));
    if base.is_empty() || policy.is_empty() || base.iter().any(|b| b != &Some(0.0)) {
        return Ok(None);
    }
    let shown: Vec<String> =
        policy.iter().map(|v| v.map_or_else(|| "n/a".into(), |v| v.to_string())).collect();
    Ok(Some(format!(
        "ratio undefined: {} has {} = 0 in all {} configurations ({}: {}), so the runs do not show the claim \
         at this size",
        claim.baseline,
        claim.metric,
        base.len(),
        claim.policy,
        shown.join(", ")
    )))
}

/// Check `claims` against the results `t`, whose policies are the values of `policy_axis`.
pub fn check_claims(claims: &[Claim], policy_axis: &str, t: &Table) -> anyhow::Result<Vec<ClaimRow>> {
    let policy_axis = t.axis(policy_axis)?;
    let mut rows = Vec::new();
    for c in claims {
        let filters = super::resolve_filters(t, c.filters);
        let fixed: Vec<String> = filters.iter().map(|(a, l)| format!("{a}={l}")).collect();
        let (ours, scope) = match c.trend {
            None => match ratio(t, c, &filters, policy_axis)? {
                Some((r, n)) => {
                    let of = if c.best { "best" } else { "geomean" };
                    (Some(r - 1.0), format!("{} · {of} of {n} configurations", fixed.join(", ")))
                }
                None => (None, fixed.join(", ")),
            },
            Some((axis, from, to)) => {
                let at = |v: &str| -> anyhow::Result<Option<(f64, usize)>> {
                    let mut f = filters.clone();
                    f.extend(super::resolve_filters(t, &[(axis, v)]));
                    if !f.iter().any(|(a, _)| a == axis) {
                        return Ok(None);
                    }
                    ratio(t, c, &f, policy_axis)
                };
                match (at(from)?, at(to)?) {
                    (Some((a, n)), Some((b, _))) => (
                        Some(b / a - 1.0),
                        format!(
                            "{} · {axis} {from} → {to} · geomean of {n} configurations each",
                            fixed.join(", ")
                        ),
                    ),
                    _ => (None, format!("{} · {axis} {from} → {to}", fixed.join(", "))),
                }
            }
        };
        let verdict = match ours {
            Some(o) => verdict(c.direction, c.paper_change, o),
            None => "not evaluated",
        };
        let note = match (ours, c.trend) {
            (None, None) => zero_baseline(t, c, &filters, policy_axis)?,
            _ => None,
        };
        let scope = match &note {
            Some(n) => format!("{scope} · {n}"),
            None => scope,
        };
        rows.push(ClaimRow {
            id: c.id.into(),
            claim: c.statement.into(),
            metric: c.metric.into(),
            comparison: format!("{} / {}", c.policy, c.baseline),
            direction: c.direction.name().into(),
            paper_change: c.paper_change,
            our_change: ours,
            verdict: verdict.into(),
            scope,
            note,
        });
    }
    Ok(rows)
}

fn pct(v: Option<f64>) -> String {
    v.map_or_else(|| "n/a".into(), |v| format!("{:+.1} %", v * 100.0))
}

fn csv_num(v: Option<f64>) -> String {
    v.map_or_else(|| "n/a".into(), |v| format!("{v:.4}"))
}

/// claims.csv (changes as fractions, 4 decimals).
pub fn to_csv(rows: &[ClaimRow]) -> String {
    let mut w = csv::WriterBuilder::new().terminator(csv::Terminator::Any(b'\n')).from_writer(Vec::new());
    let header = [
        "id",
        "claim",
        "metric",
        "comparison",
        "direction",
        "paper_change",
        "our_change",
        "verdict",
        "scope",
    ];
    w.write_record(header).expect("in memory");
    for r in rows {
        w.write_record([
            &r.id,
            &r.claim,
            &r.metric,
            &r.comparison,
            &r.direction,
            &csv_num(r.paper_change),
            &csv_num(r.our_change),
            &r.verdict,
            &r.scope,
        ])
        .expect("in memory");
    }
    String::from_utf8(w.into_inner().expect("in memory")).expect("UTF-8")
}

/// claims.json (changes rounded to 4 decimals, like the CSV, so reruns compare equal).
pub fn to_json(rows: &[ClaimRow]) -> String {
    let round = |v: Option<f64>| v.map(|v| (v * 1e4).round() / 1e4);
    let rows: Vec<ClaimRow> = rows
        .iter()
        .map(|r| ClaimRow {
            paper_change: round(r.paper_change),
            our_change: round(r.our_change),
            ..r.clone()
        })
        .collect();
    serde_json::to_string_pretty(&rows).expect("claims serialize") + "\n"
}

/// How many times the paper's change a reproduced change is, when at least twice it
/// (a claim reproduced in direction whose number is far from the paper's).
fn oversized(r: &ClaimRow) -> Option<f64> {
    let (Some(paper), Some(ours)) = (r.paper_change, r.our_change) else {
        return None;
    };
    let times = ours / paper;
    (r.verdict == "reproduced" && r.direction != Direction::About.name() && times >= 2.0).then_some(times)
}

/// The claims as a markdown table (printed at the end and in the index).
pub fn to_markdown(rows: &[ClaimRow]) -> String {
    let mut s = String::from(
        "| claim | metric | comparison | paper | ours | verdict |\n|---|---|---|---:|---:|---|\n",
    );
    for r in rows {
        let paper = match r.paper_change {
            Some(_) if r.direction == Direction::About.name() => format!("≈ {}", pct(r.paper_change)),
            Some(_) => pct(r.paper_change),
            None => format!("{} (no number)", r.direction),
        };
        let note = match (&r.note, oversized(r)) {
            (Some(n), _) => format!(" ({n})"),
            (None, Some(times)) => format!(" ({times:.1}× the paper's change)"),
            (None, None) => String::new(),
        };
        let _ = writeln!(
            s,
            "| {} | {} | {} | {paper} | {} | **{}**{} |",
            r.claim.replace('|', "\\|"),
            r.metric,
            r.comparison,
            pct(r.our_change),
            r.verdict,
            note.replace('|', "\\|")
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reproduced_change_far_beyond_the_papers_says_so() {
        let row = |paper: f64, ours: f64, direction: Direction| {
            let verdict = verdict(direction, Some(paper), ours);
            ClaimRow {
                id: "c".into(),
                claim: "c".into(),
                metric: "write_wait.mean_ns".into(),
                comparison: "ocr / static".into(),
                direction: direction.name().into(),
                paper_change: Some(paper),
                our_change: Some(ours),
                verdict: verdict.into(),
                scope: String::new(),
                note: None,
            }
        };
        let md = to_markdown(&[
            row(-0.062, -0.239, Direction::Lower),
            row(-0.038, -0.054, Direction::Lower),
            row(0.10, 0.25, Direction::Higher),
            row(0.035, 0.13, Direction::About),
        ]);
        let lines: Vec<&str> = md.lines().skip(2).collect();
        assert!(lines[0].ends_with("| -23.9 % | **reproduced** (3.9× the paper's change) |"), "{md}");
        assert!(lines[1].ends_with("| -5.4 % | **reproduced** |"), "{md}");
        assert!(lines[2].ends_with("| +25.0 % | **reproduced** (2.5× the paper's change) |"), "{md}");
        assert!(lines[3].ends_with("| +13.0 % | **reproduced** |"), "{md}");
    }

    #[test]
    fn verdicts_follow_the_rules() {
        // The paper: 20 % lower.
        assert_eq!(verdict(Direction::Lower, Some(-0.20), -0.25), "reproduced");
        assert_eq!(verdict(Direction::Lower, Some(-0.20), -0.151), "reproduced");
        assert_eq!(verdict(Direction::Lower, Some(-0.20), -0.149), "direction only");
        assert_eq!(verdict(Direction::Lower, Some(-0.20), 0.0), "not reproduced");
        assert_eq!(verdict(Direction::Lower, Some(-0.20), 0.05), "not reproduced");
        // Direction only in the paper: any amount the right way.
        assert_eq!(verdict(Direction::Higher, None, 0.011), "reproduced");
        assert_eq!(verdict(Direction::Higher, None, 0.009), "direction only");
        assert_eq!(verdict(Direction::Higher, None, -0.001), "not reproduced");
        // About equal (the paper: +3.5 %): within 10 points either way.
        assert_eq!(verdict(Direction::About, Some(0.035), 0.13), "reproduced");
        assert_eq!(verdict(Direction::About, Some(0.035), -0.06), "reproduced");
        assert_eq!(verdict(Direction::About, Some(0.035), 0.49), "not reproduced");
        assert_eq!(verdict(Direction::About, Some(0.035), -0.07), "not reproduced");
        assert_eq!(verdict(Direction::About, None, 0.0), "reproduced");
        assert_eq!(verdict(Direction::About, None, 5.0), "not reproduced");
    }
}
