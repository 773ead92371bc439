//! The one place tests find the real trace samples in `../shared/traces` (beside the
//! repository) and the bundled fixtures in `traces/`.
//!
//! Included by path from every test crate that needs it (test crates of different
//! packages cannot share a module otherwise, and a dev-only crate for two functions
//! would be heavier than this file):
//!
//! ```ignore
//! #[path = "../../../tests/support/shared.rs"] // from crates/<crate>/tests/
//! mod shared;
//! ```
//!
//! The real samples are optional: a fresh clone has no `../shared`, and the test suite
//! must pass there. A test that is *about* the real samples asks [`shared_traces`], which
//! returns `None` (after printing `SKIP <test> (../shared/traces absent)` straight to
//! the terminal, past the test harness's capture) when they are absent — unless the
//! environment variable `LAMINA_REQUIRE_SHARED=1` is set, in which case their absence
//! fails the test, so a CI run that has `../shared` cannot skip them silently.
#![allow(dead_code)] // each including test crate uses part of it

use std::io::Write;
use std::path::PathBuf;

/// Set to `1` to make the absence of `../shared/traces` a test failure.
pub const REQUIRE_SHARED_ENV: &str = "LAMINA_REQUIRE_SHARED";

/// The repository root (every including crate lives at `crates/<name>`).
pub fn repo_root() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// A bundled trace: `traces/<rel>` in the repository (see `traces/MANIFEST.md`).
pub fn bundled(rel: &str) -> PathBuf {
    repo_root().join("traces").join(rel)
}

/// Where the real samples are expected, whether or not they exist.
pub fn shared_traces_dir() -> PathBuf {
    repo_root().join("../shared/traces")
}

/// The real samples' directory, or `None` (with a SKIP line naming `test`) when it is
/// absent. Panics when it is absent and `LAMINA_REQUIRE_SHARED=1`.
pub fn shared_traces(test: &str) -> Option<PathBuf> {
    let dir = shared_traces_dir();
    if dir.join("MANIFEST.md").is_file() {
        return Some(dir);
    }
    let required = std::env::var(REQUIRE_SHARED_ENV).is_ok_and(|v| v == "1");
    assert!(
        !required,
        "{test}: {} is absent but {REQUIRE_SHARED_ENV}=1 requires the real trace samples",
        dir.display()
    );
    // Straight to stderr, not through `eprintln!`, which the harness captures.
    let _ = writeln!(std::io::stderr(), "SKIP {test} (../shared/traces absent)");
    None
}
