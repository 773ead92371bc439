//! Architecture invariant (TigerBeetle-style "tidy" check): the crate dependency graph
//! only points the allowed way, `cli → engine → {sched, ftl, trace}`,
//! `{engine, sched, ftl} → nand-model`, `cli → trace` directly, and `cli → serve →
//! {engine, trace, nand-model}` (the NBD server; tokio lives only there), and
//! `{engine, ftl, nand-model} → hint`. `trace` is a leaf: it depends on no other Lamina
//! crate (it needs only the logical capacity, a number). So is `hint`, the one crate
//! allowed `unsafe` code (one prefetch instruction per target); every other crate takes
//! the workspace's lints, which forbid it.
//!
//! Reads `cargo metadata` for the workspace and fails on any edge between Lamina
//! crates that is not in the allowed set, so a forbidden `use` cannot creep in.

use std::collections::BTreeSet;
use std::process::Command;

/// Allowed (from, to) edges between workspace crates, normal or dev/build dependencies.
const ALLOWED: &[(&str, &str)] = &[
    ("lamina-cli", "lamina-engine"),
    ("lamina-cli", "lamina-sched"),
    ("lamina-cli", "lamina-ftl"),
    ("lamina-cli", "lamina-nand-model"),
    ("lamina-cli", "lamina-trace"),
    ("lamina-cli", "lamina-serve"),
    ("lamina-serve", "lamina-engine"),
    ("lamina-serve", "lamina-trace"),
    ("lamina-serve", "lamina-nand-model"),
    ("lamina-engine", "lamina-sched"),
    ("lamina-engine", "lamina-ftl"),
    ("lamina-engine", "lamina-nand-model"),
    ("lamina-engine", "lamina-trace"),
    ("lamina-sched", "lamina-nand-model"),
    ("lamina-ftl", "lamina-nand-model"),
    // Cache hints (a prefetch behind a safe function), for the hot paths' tables.
    ("lamina-nand-model", "lamina-hint"),
    ("lamina-ftl", "lamina-hint"),
    ("lamina-engine", "lamina-hint"),
];

/// Crates that must not touch the terminal, clap or rayon (only `cli` does).
const CLI_ONLY_DEPS: &[&str] = &["clap", "rayon", "indicatif", "plotters"];

fn metadata() -> serde_json::Value {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../Cargo.toml");
    let out = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--no-deps", "--offline", "--manifest-path", root])
        .output()
        .expect("run cargo metadata");
    assert!(out.status.success(), "cargo metadata failed: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("cargo metadata JSON")
}

#[test]
fn dependency_direction_is_enforced() {
    let meta = metadata();
    let packages = meta["packages"].as_array().expect("packages");
    let names: BTreeSet<&str> = packages.iter().map(|p| p["name"].as_str().unwrap()).collect();
    for expected in
        ["lamina-nand-model", "lamina-ftl", "lamina-sched", "lamina-trace", "lamina-engine", "lamina-cli"]
    {
        assert!(names.contains(expected), "workspace lacks {expected}");
    }
    let allowed: BTreeSet<(&str, &str)> = ALLOWED.iter().copied().collect();
    let mut violations = Vec::new();
    for p in packages {
        let from = p["name"].as_str().unwrap();
        for d in p["dependencies"].as_array().unwrap() {
            let to = d["name"].as_str().unwrap();
            // A crate may name itself as a dev-dependency to enable its own features in tests.
            if names.contains(to) && from != to && !allowed.contains(&(from, to)) {
                violations.push(format!("{from} -> {to}"));
            }
            if from != "lamina-cli" && CLI_ONLY_DEPS.contains(&to) && d["kind"].is_null() {
                violations.push(format!("{from} -> {to} (only lamina-cli may depend on {to})"));
            }
        }
    }
    assert!(violations.is_empty(), "forbidden dependency edges: {violations:?}");
}

/// The trace crate is a leaf: no edge from it to any workspace crate, so trace parsing
/// can be built, tested and fuzzed without the simulator.
#[test]
fn trace_is_a_leaf() {
    let meta = metadata();
    let packages = meta["packages"].as_array().expect("packages");
    let trace = packages.iter().find(|p| p["name"] == "lamina-trace").expect("lamina-trace");
    let lamina: Vec<&str> = trace["dependencies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .filter(|n| n.starts_with("lamina-"))
        .collect();
    assert!(lamina.is_empty(), "lamina-trace must be a leaf but depends on {lamina:?}");
}

/// `unsafe` code lives in `lamina-hint` only: every other workspace crate takes the
/// workspace's lints (`unsafe_code = "forbid"`), and `lamina-hint` depends on nothing.
#[test]
fn unsafe_code_is_confined_to_the_hint_crate() {
    let meta = metadata();
    let packages = meta["packages"].as_array().expect("packages");
    let mut checked = 0;
    for p in packages {
        let name = p["name"].as_str().unwrap();
        if !name.starts_with("lamina-") {
            continue;
        }
        let path = p["manifest_path"].as_str().unwrap();
        let manifest = std::fs::read_to_string(path).expect("read a manifest");
        if name == "lamina-hint" {
            assert!(p["dependencies"].as_array().unwrap().is_empty(), "lamina-hint must depend on nothing");
            continue;
        }
        let lints = manifest.split("[lints]").nth(1).unwrap_or_default();
        assert!(
            lints.trim_start().starts_with("workspace = true"),
            "{name} ({path}) does not take the workspace's lints, which forbid unsafe code"
        );
        checked += 1;
    }
    assert!(checked >= 6, "only {checked} crates checked");
    let root = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../Cargo.toml")).unwrap();
    assert!(root.contains("unsafe_code = \"forbid\""), "the workspace's lints no longer forbid unsafe code");
}
