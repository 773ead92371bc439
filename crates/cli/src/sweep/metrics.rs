//! The metric names a sweep spec may list: every value of the JSON report, read off the
//! report's checked-in schema (`docs/report-schema/v<N>.json`), so a spec naming a
//! metric the reports will not have is refused before any run, with the closest names.

use std::collections::BTreeSet;

use serde_json::Value;

use lamina_engine::stats::percentile_of_key;

/// The schema version [`SCHEMA`] is; a unit test keeps it equal to the engine's
/// `report::SCHEMA_VERSION` (fields are only ever added, so an older file would refuse
/// new metrics).
const SCHEMA_VERSION: u32 = 13;

/// The report's JSON schema, as checked in (the engine's `report_schema` test keeps the
/// file equal to the schema generated from the report types).
const SCHEMA: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/report-schema/v13.json"));

/// Where the metric names are listed, for error messages.
pub fn schema_file() -> String {
    format!("docs/report-schema/v{SCHEMA_VERSION}.json")
}

/// How the percentile fields of a summary are written in the list of names.
const PERCENTILE_FIELDS: &str = "p<P>_ns";

/// What a dotted path of the report names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Node {
    /// A number, string or bool (or null): a metric.
    Value,
    /// An object with named fields.
    Section,
    /// An array.
    List,
    /// An object whose fields the schema does not list (the resolved `config`).
    Open,
    /// The percentile fields (`p<P>_ns`) of the section this entry's path ends in
    /// (recorded as `<section>.p<P>_ns`).
    Percentiles,
}

/// Every path of the report with what it names, in schema order.
#[derive(Debug)]
pub struct MetricNames {
    paths: Vec<(String, Node)>,
}

/// `{"$ref": "#/$defs/X"}` resolved against the root.
fn resolve<'a>(root: &'a Value, s: &'a Value) -> &'a Value {
    match s.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix("#/$defs/")) {
        Some(name) => &root["$defs"][name],
        None => s,
    }
}

/// `schema` with an `Option`'s `anyOf [T, null]` (and any `$ref`) resolved to T.
fn unwrap_option<'a>(root: &'a Value, schema: &'a Value) -> &'a Value {
    let s = resolve(root, schema);
    match s.get("anyOf").and_then(Value::as_array) {
        Some(any) => {
            let inner = any.iter().find(|x| x.get("type") != Some(&Value::from("null")));
            inner.map_or(s, |i| resolve(root, i))
        }
        None => s,
    }
}

fn walk(root: &Value, schema: &Value, path: &str, out: &mut Vec<(String, Node)>, depth: usize) {
    let s = unwrap_option(root, schema);
    let types: Vec<&str> = match s.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let props = s.get("properties").and_then(Value::as_object);
    let patterns = s.get("patternProperties").is_some();
    let node = if props.is_some() || patterns {
        if depth < 16 {
            for (k, v) in props.into_iter().flatten() {
                let child = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
                walk(root, v, &child, out, depth + 1);
            }
        }
        if patterns {
            // The only pattern the report uses: the percentile fields of a summary.
            out.push((format!("{path}.{PERCENTILE_FIELDS}"), Node::Percentiles));
        }
        Node::Section
    } else if types.contains(&"array") {
        Node::List
    } else if types.contains(&"object") || types.is_empty() {
        Node::Open
    } else {
        Node::Value
    };
    if !path.is_empty() {
        out.push((path.to_owned(), node));
    }
}

/// Levenshtein distance (for "did you mean").
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let here = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(row[j + 1] + 1);
            prev = here;
        }
    }
    row[b.len()]
}

impl MetricNames {
    /// The names of the current report schema.
    pub fn of_report() -> MetricNames {
        let root: Value = serde_json::from_str(SCHEMA).expect("the checked-in report schema is JSON");
        let mut paths = Vec::new();
        walk(&root, &root, "", &mut paths, 0);
        MetricNames { paths }
    }

    fn node(&self, path: &str) -> Option<Node> {
        self.paths.iter().find(|(p, _)| p == path).map(|&(_, n)| n)
    }

    /// Every metric name (a value of the report), percentile fields written
    /// `<class>.p<P>_ns`, in schema order.
    pub fn list(&self) -> Vec<String> {
        self.paths
            .iter()
            .filter_map(|(p, n)| match n {
                Node::Value | Node::Percentiles => Some(p.clone()),
                Node::Open => Some(format!("{p}.<key>")),
                _ => None,
            })
            .collect()
    }

    /// Up to `n` metric names closest to `name`.
    fn closest(&self, name: &str, n: usize) -> Vec<String> {
        let mut scored: Vec<(usize, String)> = self
            .paths
            .iter()
            .filter(|(_, k)| matches!(k, Node::Value | Node::Percentiles))
            .map(|(p, _)| (distance(name, p), p.clone()))
            .collect();
        scored.sort();
        scored.into_iter().take(n).map(|(_, p)| p).collect()
    }

    /// Why `metric` is not a value of the report (None: it is one). `config` is the
    /// resolved configuration of a run (its JSON), for metrics under `config.`; a
    /// percentile field is accepted here (its presence follows the run's
    /// `stats.percentiles`, checked apart).
    pub fn problem(&self, metric: &str, config: &Value) -> Option<String> {
        let parts: Vec<&str> = metric.split('.').collect();
        // The longest prefix of the path the schema knows.
        for cut in (1..=parts.len()).rev() {
            let prefix = parts[..cut].join(".");
            let Some(node) = self.node(&prefix) else { continue };
            let rest = &parts[cut..];
            return match (node, rest) {
                (Node::Value, []) => None,
                (Node::Value, _) => Some(format!("{prefix} is a value, with no field {:?}", rest[0])),
                (Node::Section, [field])
                    if percentile_of_key(field).is_some()
                        && self.node(&format!("{prefix}.{PERCENTILE_FIELDS}")) == Some(Node::Percentiles) =>
                {
                    None
                }
                (Node::Percentiles, _) => Some(format!(
                    "write the percentile for <P>, e.g. {metric:?} as {:?}",
                    metric.replace("<P>", "99")
                )),
                (Node::Section, []) => {
                    let fields: Vec<&str> = self
                        .paths
                        .iter()
                        .filter_map(|(p, _)| p.strip_prefix(&format!("{prefix}.")))
                        .filter(|f| !f.contains('.'))
                        .collect();
                    Some(format!("{prefix} is a section, not a value; its fields: {}", fields.join(", ")))
                }
                (Node::List, []) => Some(format!("{prefix} is a list, not a single value")),
                (Node::Open, _) if prefix == "config" => config_problem(config, rest),
                (Node::Open, _) => None,
                (Node::Section | Node::List, _) => unknown(self, metric),
            };
        }
        unknown(self, metric)
    }
}

fn unknown(names: &MetricNames, metric: &str) -> Option<String> {
    Some(format!("the report has no value {metric:?} (closest: {})", names.closest(metric, 3).join(", ")))
}

/// Why `config.<rest>` is not a value of the resolved configuration `cfg` (None: it is,
/// or a section on its way is null, which tabulates as n/a).
fn config_problem(cfg: &Value, rest: &[&str]) -> Option<String> {
    let mut v = cfg;
    for (i, part) in rest.iter().enumerate() {
        if v.is_null() {
            return None;
        }
        match v.get(part) {
            Some(x) => v = x,
            None => {
                let here: Vec<&str> =
                    v.as_object().map(|o| o.keys().map(String::as_str).collect()).unwrap_or_default();
                return Some(format!(
                    "config.{} has no field {part:?} (fields there: {})",
                    rest[..i].join("."),
                    here.join(", ")
                ));
            }
        }
    }
    match v {
        Value::Object(_) | Value::Array(_) => {
            Some(format!("config.{} is a section or list, not a single value", rest.join(".")))
        }
        _ => None,
    }
}

/// The repeated names of `metrics`, each once, in first-repeat order.
pub fn duplicates(metrics: &[String]) -> Vec<&str> {
    let mut seen = BTreeSet::new();
    let mut dup = Vec::new();
    for m in metrics {
        if !seen.insert(m.as_str()) && !dup.contains(&m.as_str()) {
            dup.push(m.as_str());
        }
    }
    dup
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_included_schema_is_the_engines_current_one() {
        assert_eq!(
            SCHEMA_VERSION,
            lamina_engine::report::SCHEMA_VERSION,
            "the report schema changed: include docs/report-schema/v{}.json in sweep/metrics.rs",
            lamina_engine::report::SCHEMA_VERSION
        );
    }

    #[test]
    fn metrics_are_checked_against_the_report() {
        let names = MetricNames::of_report();
        let cfg = serde_json::json!({ "seed": 1, "nand": { "geometry": { "layers": 64 } }, "rs": null });
        for good in [
            "write.mean_ns",
            "all.p99_ns",
            "read.p99_999_ns",
            "waf",
            "trace.digest",
            "erases.total",
            "flash_ops.program.multi_plane",
            "config.seed",
            "config.nand.geometry.layers",
            "config.rs.k",
        ] {
            assert_eq!(names.problem(good, &cfg), None, "{good}");
        }
        let p = names.problem("write.mean_nsx", &cfg).unwrap();
        assert!(p.contains("closest: write.mean_ns"), "{p}");
        let p = names.problem("wafx", &cfg).unwrap();
        assert!(p.contains("closest: waf"), "{p}");
        let p = names.problem("write", &cfg).unwrap();
        assert!(p.contains("section") && p.contains("mean_ns"), "{p}");
        assert!(names.problem("trace.warnings", &cfg).unwrap().contains("list"));
        assert!(names.problem("waf.x", &cfg).unwrap().contains("no field \"x\""));
        assert!(names.problem("write.p99", &cfg).is_some());
        assert!(names.problem("write.p<P>_ns", &cfg).unwrap().contains("write.p99_ns"));
        assert!(names.problem("erases.p99_ns", &cfg).is_some(), "no percentiles there");
        assert!(names.problem("config.nand.geometry.layerz", &cfg).unwrap().contains("layers"));
        assert!(names.problem("config.nand", &cfg).unwrap().contains("section"));
        let list = names.list();
        assert!(list.contains(&"write.mean_ns".to_owned()) && list.contains(&"read.p<P>_ns".to_owned()));
        assert!(!list.contains(&"write".to_owned()));
    }

    #[test]
    fn duplicates_are_found_once_each() {
        let m: Vec<String> = ["a", "b", "a", "c", "a", "b"].map(String::from).to_vec();
        assert_eq!(duplicates(&m), ["a", "b"]);
        assert!(duplicates(&m[..2]).is_empty());
    }

    #[test]
    fn distance_counts_edits() {
        assert_eq!(distance("waf", "wafx"), 1);
        assert_eq!(distance("kitten", "sitting"), 3);
        assert_eq!(distance("", "abc"), 3);
    }
}
