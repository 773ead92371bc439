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

/// Every object in `v` has exactly the properties its schema declares.
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
        let mut got: Vec<&String> = obj.keys().collect();
        want.sort();
        got.sort();
        assert_eq!(got, want, "fields of {path}");
        for (k, sub) in props {
            check(root, sub, &obj[k], &format!("{path}.{k}"));
        }
    }
}

#[test]
fn a_real_report_has_exactly_the_schemas_fields() {
    let cfg = ConfigBuilder::new()
        .preset("mbm")
        .unwrap()
        .set("buffer.size_bytes=1048576")
        .unwrap()
        .set("nand.geometry.blocks_per_plane=64")
        .unwrap()
        .set("precondition.fill_fraction=0.5")
        .unwrap()
        .build()
        .unwrap();
    let demo = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../traces/demo.trace"));
    let report = lamina_engine::run_trace(&cfg, &demo).unwrap();
    let v: Value = serde_json::from_str(&report.to_json()).unwrap();
    assert_eq!(v["schema_version"], SCHEMA_VERSION);
    assert!(v["precondition"].is_object());
    let root = generated();
    check(&root, &root, &v, "report");
}
