//! The JSON report has a versioned schema (issue #8, item 20): the schema generated
//! from the report types must equal the checked-in `docs/report-schema/v<N>.json` for
//! the current [`SCHEMA_VERSION`], and a real report must have exactly the fields the
//! schema lists, at every level. Changing the report without bumping the version and
//! checking in the new schema fails here.
//!
//! After an intended change: bump `SCHEMA_VERSION`, then
//! `LAMINA_BLESS=1 cargo test -p lamina-engine --test report_schema` writes the new file.

use std::path::PathBuf;

use lamina_engine::config::ConfigBuilder;
use lamina_engine::report::{Report, SCHEMA_VERSION};
use serde_json::Value;

fn schema_path() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/report-schema"))
        .join(format!("v{SCHEMA_VERSION}.json"))
}

fn generated() -> Value {
    serde_json::to_value(schemars::schema_for!(Report)).unwrap()
}

#[test]
fn schema_matches_the_checked_in_version() {
    let text = serde_json::to_string_pretty(&generated()).unwrap() + "\n";
    let path = schema_path();
    if std::env::var_os("LAMINA_BLESS").is_some() {
        assert!(
            !path.exists() || std::fs::read_to_string(&path).unwrap() == text,
            "{} exists with other content: a released schema never changes; bump SCHEMA_VERSION",
            path.display()
        );
        std::fs::write(&path, &text).unwrap();
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}: bump SCHEMA_VERSION and bless (see header)", path.display()));
    assert_eq!(text, want, "the report schema changed: bump SCHEMA_VERSION and bless a new file");
}

/// Resolve `{"$ref": "#/$defs/X"}` against the root schema.
fn resolve<'a>(root: &'a Value, s: &'a Value) -> &'a Value {
    match s.get("$ref").and_then(Value::as_str) {
        Some(r) => {
            let name = r.strip_prefix("#/$defs/").expect("local ref");
            &root["$defs"][name]
        }
        None => s,
    }
}

/// True if `key` matches a `patternProperties` pattern of a schema object. The only
/// pattern the report uses is the percentile field's, matched by `percentile_of_key`.
fn pattern_matches(schema: &Value, key: &str) -> bool {
    let Some(patterns) = schema.get("patternProperties").and_then(Value::as_object) else { return false };
    patterns.keys().any(|p| {
        assert_eq!(p, lamina_engine::stats::PERCENTILE_KEY_PATTERN, "a pattern this test cannot match");
        lamina_engine::stats::percentile_of_key(key).is_some()
    })
}

/// Every object in `v` has exactly the properties its schema declares (or matches one
/// of its property patterns).
fn check(root: &Value, schema: &Value, v: &Value, path: &str) {
    let schema = resolve(root, schema);
    if let Some(any) = schema.get("anyOf").and_then(Value::as_array) {
        // Option<T>: null or T.
        if v.is_null() {
            return;
        }
        let inner = any.iter().find(|s| s.get("type") != Some(&Value::from("null"))).unwrap();
        return check(root, inner, v, path);
    }
    if let (Some(props), Value::Object(obj)) = (schema.get("properties").and_then(Value::as_object), v) {
        let mut want: Vec<&String> = props.keys().collect();
        let mut got: Vec<&String> = obj.keys().filter(|k| !pattern_matches(schema, k)).collect();
        want.sort();
        got.sort();
        assert_eq!(got, want, "fields of {path}");
        for (k, sub) in props {
            check(root, sub, &obj[k], &format!("{path}.{k}"));
        }
    }
}

/// Version 3 only added fields: every field of v2 is a field (or matches a field
/// pattern) of the same object in the current schema.
#[test]
fn the_current_schema_keeps_every_v2_field() {
    let v2: Value = serde_json::from_str(
        &std::fs::read_to_string(schema_path().with_file_name("v2.json"))
            .expect("docs/report-schema/v2.json"),
    )
    .unwrap();
    let now = generated();
    let objects = |s: &Value| -> Vec<(String, Value)> {
        let mut v = vec![("report".to_owned(), s.clone())];
        v.extend(s["$defs"].as_object().unwrap().iter().map(|(k, d)| (k.clone(), d.clone())));
        v
    };
    let current = objects(&now);
    for (name, old) in objects(&v2) {
        let new = &current.iter().find(|(n, _)| *n == name).unwrap_or_else(|| panic!("{name} was removed")).1;
        for key in old["properties"].as_object().into_iter().flat_map(|p| p.keys()) {
            let kept = new["properties"].get(key).is_some() || pattern_matches(new, key);
            assert!(kept, "{name}.{key} of v2 is missing from v{SCHEMA_VERSION}");
        }
    }
}

/// The report of the demo trace on `mbm` with `sets` applied.
fn demo_report(sets: &[&str]) -> Report {
    let mut b = ConfigBuilder::new().preset("mbm").unwrap();
    for s in sets {
        b = b.set(s).unwrap();
    }
    let demo = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../traces/demo.trace"));
    lamina_engine::run_trace(&b.build().unwrap(), &demo).unwrap()
}

/// A configured percentile list gives exactly its fields, in every latency summary.
#[test]
fn a_configured_percentile_list_gives_its_fields() {
    let report = demo_report(&["stats.percentiles=[95, 97, 98, 99, 99.5, 99.9, 99.99, 99.999]"]);
    let json = report.to_json();
    let v: Value = serde_json::from_str(&json).unwrap();
    let want = ["p95_ns", "p97_ns", "p98_ns", "p99_ns", "p99_5_ns", "p99_9_ns", "p99_99_ns", "p99_999_ns"];
    for class in ["read", "write", "all", "read_wait", "write_wait", "all_wait"] {
        let obj = v[class].as_object().unwrap();
        let pct: Vec<&str> = obj
            .keys()
            .map(String::as_str)
            .filter(|k| pattern_matches(&generated()["$defs"]["LatencySummary"], k))
            .collect();
        let mut sorted = want.to_vec();
        sorted.sort();
        assert_eq!(pct, sorted, "{class}");
    }
    // In the list's order in the JSON text, between min_ns and max_ns.
    let read = &json[json.find("\"read\": {").unwrap()..];
    let read = &read[..read.find('}').unwrap()];
    let at = |k: &str| read.find(&format!("\"{k}\"")).unwrap_or_else(|| panic!("{k} in {read}"));
    let order: Vec<usize> = ["min_ns"].iter().chain(&want).chain(&["max_ns"]).map(|k| at(k)).collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{read}");
    let root = generated();
    check(&root, &root, &v, "report");
    // The text table shows every configured percentile.
    let text = report.to_text();
    let header = text.lines().find(|l| l.starts_with("response time (us)")).unwrap();
    assert!(header.contains("p97") && header.contains("p99.5") && !header.contains("p50"), "{header}");
}

#[test]
fn a_real_report_has_exactly_the_schemas_fields() {
    let report = demo_report(&[
        "buffer.size_bytes=1048576",
        "nand.geometry.blocks_per_plane=64",
        "precondition.fill_fraction=0.5",
    ]);
    let v: Value = serde_json::from_str(&report.to_json()).unwrap();
    assert_eq!(v["schema_version"], SCHEMA_VERSION);
    assert!(v["precondition"].is_object());
    let root = generated();
    check(&root, &root, &v, "report");
}
