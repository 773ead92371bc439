//! Findings of a new-user trial, through the real `lamina` binary, one test each:
//!
//! 1. Errors of keys checked against the device (`ftl.overprovisioning`,
//!    `nand.geometry.pages_per_block`, `buffer.size_bytes`, the rest of `[nand]`, `[ftl]`,
//!    `[trace]` and `[remap]`) did not say where the value was given, while other keys'
//!    errors did (`--set KEY=VALUE: …` or `FILE:LINE: …`): they were checked only when
//!    the simulation was built, after the config's origins were gone.
//! 2. `ftl.gc_threshold.free_fraction = 0` ran with a threshold of 2 blocks, silently.
//! 3. A TOML syntax error in a `--config` file came after an unrelated "no preset" note.
//! 4. `precondition.fill_fraction = 0` reported "steady state NOT reached".
//! 5. A 2-request trace got a "coarse timestamps" note.
//! 6. `nand.suspension.max_per_op = 0` with suspension on was accepted, and then no
//!    read ever suspended anything, silently; it is refused like the keys of item 1.
//! 7. A memory-limit refusal did not say where the limit came from, what drove the
//!    estimate, nor where the keys that drove it were given.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn lamina() -> Command {
    Command::new(env!("CARGO_BIN_EXE_lamina"))
}

fn demo() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../traces/demo.trace"))
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `lamina run` on `trace` with `args`, which must succeed; its standard output.
fn run_ok(trace: &Path, args: &[&str]) -> String {
    let o = lamina().arg("run").args(args).arg(trace).output().unwrap();
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    String::from_utf8(o.stdout).unwrap()
}

/// `lamina run` on the demo trace with `args`, which must fail with a bad-input exit
/// code; the first line of its standard error.
fn first_error_line(args: &[&str]) -> String {
    let o = lamina().arg("run").args(args).arg(demo()).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
    let err = stderr(&o);
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    err.lines().next().unwrap_or_default().to_owned()
}

/// (`--set` assignment, line of the error in a config file, substrings of the error
/// after its location). Each key is valid on its own and refused only against the device
/// (its FTL, geometry or buffer). In a config file ([`toml_setting`]) the key is on line
/// 3, its table's header on line 2, which an error about the whole table names
/// (`nand.geometry: …`, `ftl.gc_threshold: …`).
const DEVICE_CHECKED: &[(&str, usize, &[&str])] = &[
    ("ftl.overprovisioning=1.5", 3, &["ftl.overprovisioning: 1.5 is not in [0, 0.9)"]),
    ("ftl.overprovisioning=-0.1", 3, &["ftl.overprovisioning: -0.1 is not in [0, 0.9)"]),
    ("nand.geometry.pages_per_block=0", 3, &["nand.geometry.pages_per_block: must be at least 1"]),
    ("nand.geometry.pages_per_block=3", 3, &["nand.geometry.pages_per_block: 3 is not a multiple of 2"]),
    (
        "buffer.size_bytes=100",
        3,
        &["buffer.size_bytes: 100 is smaller than one 8192-byte page", "give 0 to disable the buffer"],
    ),
    (
        "buffer.size_bytes=1099511627776",
        3,
        &["buffer.size_bytes: 1099511627776 is larger", "logical capacity"],
    ),
    ("nand.timing.t_bers=0", 3, &["nand.timing.t_bers: must be positive"]),
    ("nand.geometry.blocks_per_plane=4194304", 2, &["nand.geometry: ", "32 bits", "blocks_per_plane"]),
    ("ftl.gc_threshold.free_blocks=2047", 2, &["ftl.gc_threshold: 2047 free blocks leaves no room"]),
    ("ftl.cmt_entries=5", 3, &["ftl.cmt_entries: only means something with ftl.mapping = \"cached\""]),
    ("trace.limit=0", 3, &["trace.limit: a limit of 0 requests replays nothing"]),
    ("remap.policy=\"micropages\"", 3, &["remap.policy: ", "nand.geometry.partial_read_bytes"]),
    // mbm suspends programs and erases; a cap of 0 suspensions would suspend nothing
    // (finding 6).
    (
        "nand.suspension.max_per_op=0",
        3,
        &[
            "nand.suspension.max_per_op: 0 suspensions per operation",
            "max_per_op = 1 or more",
            "program = false and erase = false",
        ],
    ),
];

/// The TOML text that sets dotted `key` to `value` on its third line (after a preset).
fn toml_setting(key: &str, value: &str) -> String {
    let (table, leaf) = key.rsplit_once('.').unwrap();
    format!("preset = \"mbm\"\n[{table}]\n{leaf} = {value}\n")
}

#[test]
fn errors_of_keys_checked_against_the_device_say_where_the_key_was_given() {
    let dir = tempfile::tempdir().unwrap();
    for (set, file_line, wants) in DEVICE_CHECKED {
        let line = first_error_line(&["--preset", "mbm", "--set", set]);
        let at = format!("error: --set {set}: invalid config: ");
        assert!(line.starts_with(&at), "want {at:?} first in: {line}");
        for want in *wants {
            assert!(line.contains(want), "{set}: want {want:?} in: {line}");
        }
        let (key, value) = set.split_once('=').unwrap();
        let file = dir.path().join("c.toml");
        std::fs::write(&file, toml_setting(key, value)).unwrap();
        let line = first_error_line(&["--config", file.to_str().unwrap()]);
        let at = format!("error: {}:{file_line}: invalid config: ", file.display());
        assert!(line.starts_with(&at), "want {at:?} first in: {line}");
        for want in *wants {
            assert!(line.contains(want), "{set} in a file: want {want:?} in: {line}");
        }
    }
}

/// A trace flag stands for a `[trace]` key; an error about the key names the flag's
/// assignment as the sources line does, not a `--set` the user never wrote.
#[test]
fn an_error_about_a_key_a_trace_flag_set_names_the_flag() {
    let line = first_error_line(&["--preset", "mbm", "--reorder-window", "99999999"]);
    let want =
        "error: trace flag trace.reorder_window=99999999: invalid config: trace.reorder_window: at most";
    assert!(line.starts_with(want), "want {want:?} first in: {line}");
}

/// A `[nand]` key given without a preset makes the whole device the user's: the error
/// for what is then missing names the way to change only some keys of a preset.
#[test]
fn a_device_key_without_a_preset_names_the_remedy() {
    let line = first_error_line(&["--set", "nand.geometry.pages_per_block=64"]);
    for want in ["--set nand.geometry.pages_per_block=64: missing field `channels`", "--preset NAME"] {
        assert!(line.contains(want), "want {want:?} in: {line}");
    }
}

/// The raise to the least threshold GC allows is kept (a fraction must work on every
/// plane size, as the default 0.02 on a small test device), and the report says so, in
/// the text and the JSON; a fraction that needs no raise gets no warning.
#[test]
fn a_gc_threshold_raised_to_the_least_allowed_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let want = "ftl.gc_threshold: free_fraction = 0 of a plane's 2048 blocks is 0 blocks (rounded up), \
                fewer than GC allows; GC starts below 2 free blocks instead";
    let text = run_ok(
        &demo(),
        &["--preset", "mbm", "--set", "ftl.gc_threshold.free_fraction=0", "--json", json.to_str().unwrap()],
    );
    assert!(text.contains(&format!("warning: {want}")), "{text}");
    assert!(text.contains("ftl.gc_threshold = { free_blocks = 2 }"), "{text}");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(v["warnings"][0].as_str().unwrap().starts_with(want), "{}", v["warnings"]);
    let text = run_ok(&demo(), &["--preset", "mbm", "--set", "ftl.gc_threshold.free_fraction=0.001"]);
    assert!(!text.contains("warning:"), "0.001 × 2048 rounds up to 3 blocks: {text}");
}

#[test]
fn a_syntax_error_in_a_config_file_is_shown_alone_with_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.toml");
    std::fs::write(&file, "seed = 1\n[ftl\noverprovisioning = 0.1\n").unwrap();
    // No preset anywhere: the note about the default device used to come first.
    let o = lamina().arg("run").arg("--config").arg(&file).arg(demo()).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    let first = format!("error: {}:2:5: TOML parse error: ", file.display());
    assert!(err.starts_with(&first), "want {first:?} first in:\n{err}");
    assert!(!err.contains("note:"), "{err}");
    assert!(err.contains("\n  [ftl\n      ^"), "the line, with a caret under the column:\n{err}");
}

/// A small device (65,536 pages), so that a fill takes no time.
const SMALL: &[&str] = &["--preset", "die-binding-4x2", "--set", "nand.geometry.blocks_per_plane=64"];

#[test]
fn no_fill_or_no_overwrite_is_not_reported_as_a_missed_steady_state() {
    let with = |sets: &[&str]| {
        let args: Vec<&str> = SMALL.iter().copied().chain(sets.iter().flat_map(|s| ["--set", s])).collect();
        run_ok(&demo(), &args)
    };
    let none = with(&["precondition.fill_fraction=0"]);
    assert!(none.contains("preconditioning skipped: precondition.fill_fraction fills no page"), "{none}");
    assert!(!none.contains("NOT reached") && !none.contains("preconditioned:"), "{none}");
    let fill_only = with(&["precondition.fill_fraction=0.5", "precondition.max_overwrite_passes=0"]);
    assert!(fill_only.contains("preconditioned: 30474 pages filled, no overwrites"), "{fill_only}");
    assert!(fill_only.contains("steady state not sought"), "{fill_only}");
    assert!(!fill_only.contains("NOT reached"), "{fill_only}");
    let full = with(&["precondition.fill_fraction=1"]);
    assert!(full.contains("overwrites in") && full.contains("windows, steady state"), "{full}");
}

#[test]
fn timestamps_are_judged_coarse_only_over_enough_requests() {
    let dir = tempfile::tempdir().unwrap();
    // SSDsim lines (ns, device, sector, sectors, 1 = read), one second apart.
    let trace = |n: u64| {
        let path = dir.path().join(format!("t{n}.trace"));
        let text: String = (0..n).map(|i| format!("{} 0 {} 8 1\n", i * 1_000_000_000, i * 8)).collect();
        std::fs::write(&path, text).unwrap();
        path
    };
    let two = run_ok(&trace(2), &["--preset", "mbm"]);
    assert!(!two.contains("coarse timestamps"), "one gap is no resolution:\n{two}");
    let fifteen = run_ok(&trace(15), &["--preset", "mbm"]);
    assert!(!fifteen.contains("coarse timestamps"), "{fifteen}");
    let sixteen = run_ok(&trace(16), &["--preset", "mbm"]);
    let want =
        "coarse timestamps: timestamps are multiples of 1 s; no two requests arrive at the same instant";
    assert!(sixteen.contains(want), "{sixteen}");
    // Requests sharing an instant show the coarse clock, however few.
    let shared = dir.path().join("shared.trace");
    std::fs::write(&shared, "0 0 0 8 1\n0 0 8 8 1\n1000000000 0 16 8 1\n").unwrap();
    let shared = run_ok(&shared, &["--preset", "mbm"]);
    let want =
        "coarse timestamps: timestamps are multiples of 1 s; up to 2 requests arrive at the same instant";
    assert!(shared.contains(want), "{shared}");
}

/// Item 7: a memory-limit refusal is found when the simulation is built, after the
/// config's origins are gone. It leads with where the keys that drove the estimate were
/// given (or the preset, when none was), names the limit's source with its value, what
/// the estimate follows, and a raise of the limit that, followed, lets the run go.
#[test]
fn a_memory_limit_refusal_names_its_source_its_drivers_and_where_they_were_given() {
    let refused = |limit: &str, args: &[&str]| {
        let o = lamina().env("LAMINA_MAX_MEMORY", limit).arg("run").args(args).arg(demo()).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        stderr(&o).lines().next().unwrap_or_default().to_owned()
    };
    let line = refused("1000000", &["-q", "--preset", "mbm"]);
    let at =
        "error: preset mbm (its own values): nand.geometry.blocks_per_plane: this configuration needs about ";
    assert!(line.starts_with(at), "want {at:?} first in: {line}");
    for want in [
        "set by the environment variable LAMINA_MAX_MEMORY=1000000",
        "nand.geometry 4 channels × 2 chips_per_channel × 2 dies_per_chip × 2 planes_per_die × 2048 blocks_per_plane",
        "less ftl.overprovisioning = ",
        "not the workload",
        "give fewer nand.geometry.blocks_per_plane (now 2048)",
        "raise LAMINA_MAX_MEMORY from 1000000 to ",
    ] {
        assert!(line.contains(want), "want {want:?} in: {line}");
    }
    // The raise it names is enough.
    let enough = line.split("from 1000000 to ").nth(1).unwrap().split(' ').next().unwrap();
    let o =
        lamina().env("LAMINA_MAX_MEMORY", enough).args(["run", "-q", "--preset", "mbm"]).arg(demo()).output();
    assert!(o.unwrap().status.success(), "LAMINA_MAX_MEMORY={enough}");
    // Keys given in a file (at its line), by --set and by --verify lead the message.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("c.toml");
    std::fs::write(&file, toml_setting("nand.geometry.blocks_per_plane", "4096")).unwrap();
    let f = file.to_str().unwrap();
    let line = refused("1000000", &["--config", f, "--set", "nand.geometry.pages_per_block=512", "--verify"]);
    let at = format!("error: {f}:3, --set nand.geometry.pages_per_block=512, --verify: ");
    assert!(line.starts_with(&at), "want {at:?} first in: {line}");
    assert!(
        line.contains("× 4096 blocks_per_plane × 512 pages_per_block") && line.contains("(host.verify)"),
        "{line}"
    );
}

/// Item 8: `lamina serve` led its memory-limit refusal with nothing (only `run` said
/// where the keys were given), and `LAMINA_MAX_MEMORY` took only a bare byte count.
#[test]
fn serve_locates_its_memory_refusal_and_the_limit_takes_units() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("c.toml");
    std::fs::write(&file, toml_setting("nand.geometry.blocks_per_plane", "4096")).unwrap();
    let f = file.to_str().unwrap();
    let o = lamina()
        .env("LAMINA_MAX_MEMORY", "1MiB")
        .args(["serve", "--config", f, "--listen", "127.0.0.1:0"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let line = stderr(&o).lines().next().unwrap_or_default().to_owned();
    let at = format!("error: {f}:3: nand.geometry.blocks_per_plane: this configuration needs about ");
    assert!(line.starts_with(&at), "want {at:?} first in: {line}");
    for want in ["limit of 1.0 MiB", "LAMINA_MAX_MEMORY=1MiB", "raise LAMINA_MAX_MEMORY from 1MiB to "] {
        assert!(line.contains(want), "want {want:?} in: {line}");
    }
    // Units: IEC and bare letters are powers of 1024, SI units of 1000.
    for (limit, shown) in
        [("2G", "limit of 2.0 GiB"), ("3 GiB", "limit of 3.0 GiB"), ("1000kB", "limit of 976.6 KiB")]
    {
        let o = lamina()
            .env("LAMINA_MAX_MEMORY", limit)
            .args(["run", "-q", "--preset", "mbm", "--set", "nand.geometry.blocks_per_plane=100000"])
            .arg(demo())
            .output()
            .unwrap();
        let err = stderr(&o);
        assert!(err.contains(shown), "LAMINA_MAX_MEMORY={limit}: want {shown:?} in: {err}");
    }
}
