//! End-to-end tests of `lamina run` and `lamina presets` through the real binary.

use std::path::PathBuf;
use std::process::Command;

fn lamina() -> Command {
    Command::new(env!("CARGO_BIN_EXE_lamina"))
}

fn root() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

#[test]
fn run_demo_trace_prints_report_and_writes_identical_json_twice() {
    let dir = tempfile::tempdir().unwrap();
    let demo = root().join("traces/demo.trace");
    let mut outs = Vec::new();
    for i in 0..2 {
        let json = dir.path().join(format!("r{i}.json"));
        let out = lamina()
            .args(["run", "--preset", "mbm", "--seed", "3", "--json"])
            .arg(&json)
            .arg(&demo)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains("p99.999") && text.contains("WAF"), "{text}");
        outs.push(std::fs::read_to_string(&json).unwrap());
    }
    assert_eq!(outs[0], outs[1], "same config + trace + seed must give identical JSON");
    let v: serde_json::Value = serde_json::from_str(&outs[0]).unwrap();
    for k in ["read", "write", "all"] {
        for f in ["count", "mean_ns", "p50_ns", "p99_ns", "p99_9_ns", "p99_99_ns", "p99_999_ns", "max_ns"] {
            assert!(v[k][f].is_number(), "{k}.{f} missing");
        }
    }
    for k in ["iops", "bandwidth_mib_s", "waf", "seed"] {
        assert!(v[k].is_number(), "{k} missing");
    }
    assert!(v["gc"].is_object() && v["erases"].is_object() && v["config"].is_object());
    assert_eq!(v["seed"], 3);
    assert!(v["lamina_version"].is_string());
    assert!(v["trace"]["digest"].as_str().unwrap().starts_with("xxh3-64:"));
    assert_eq!(v["config"]["nand"]["geometry"]["channels"], 4);
}

#[test]
fn unknown_config_key_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("bad.toml");
    std::fs::write(&cfg, "preset = \"mbm\"\n[host]\nqueue_dpeth = 4\n").unwrap();
    let out =
        lamina().arg("run").arg("--config").arg(&cfg).arg(root().join("traces/demo.trace")).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("queue_dpeth"), "{err}");
    let out = lamina()
        .args(["run", "--preset", "mbm", "--set", "nand.geometry.pages_per_block=0"])
        .arg(root().join("traces/demo.trace"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("pages_per_block"), "{err}");
}

#[test]
fn malformed_trace_line_is_an_error_naming_file_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("bad.ascii");
    std::fs::write(&t, "0 0 100 8 1\n1000 0 200 eight 0\n").unwrap();
    let out = lamina().args(["run", "--preset", "mbm", "--format", "ssdsim"]).arg(&t).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.ascii:2") && err.contains("eight"), "{err}");
}

#[test]
fn presets_lists_every_preset_with_its_source() {
    let out = lamina().arg("presets").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for p in ["mbm", "lacr", "soml-tlc64", "die-binding-4x2", "die-binding-4x4", "pen", "mqsim-default"] {
        assert!(text.contains(p), "{p} missing");
    }
    assert!(text.contains("Table I") && text.contains("source:"));
}

#[test]
fn verify_and_preconditioning_run_end_to_end() {
    let out = lamina()
        .args([
            "run",
            "--preset",
            "die-binding-4x2",
            "--verify",
            "--set",
            "nand.geometry.blocks_per_plane=32",
            "--set",
            "precondition.fill_fraction=0.9",
        ])
        .arg(root().join("traces/demo.trace"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(!text.contains("GC jobs 0 "), "preconditioned tiny device must GC: {text}");
}
