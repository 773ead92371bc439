//! The swarm harness shared by `tests/swarm.rs`, `tests/swarm_regressions.rs` and the
//! cargo-fuzz target `fuzz/fuzz_targets/engine.rs` (which includes this directory with
//! `#[path]`): TigerBeetle-VOPR-style whole-engine testing.
//!
//! A [`Scenario`] is a configuration ([`knobs::Knobs`] → TOML → the public
//! `ConfigBuilder`, so validation runs) plus a trace. The swarm draws both from one u64
//! seed with Xoshiro256** ([`Scenario::from_seed`]); the fuzzer gets the same knobs and an
//! operation list from `arbitrary` ([`Scenario::from_fuzz`]). Either way
//! [`Scenario::check`] runs the engine twice with `host.verify = true` under
//! `catch_unwind` and checks every invariant in [`check`] plus byte-identical reports.
//!
//! Known engine bugs: a violation listed in [`KNOWN_BUGS`] is reported loudly but does
//! not fail the swarm; each entry names the `#[ignore]`d regression test in
//! `tests/swarm_regressions.rs` that reproduces it. When the bug is fixed, delete the
//! entry and the `#[ignore]`. `LAMINA_SWARM_STRICT=1` fails on known bugs too.
#![allow(dead_code)] // each including crate uses a different part

pub mod check;
pub mod knobs;
pub mod workload;

use std::fmt::Write as _;

use arbitrary::{Arbitrary, Unstructured};
use lamina_engine::config::SimConfig;
use lamina_engine::trace::IoRequest;
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256StarStar;

use check::Violation;
use knobs::Knobs;
use workload::{OpKnob, TraceCounts, TraceOp, Workload};

/// A configuration and a trace, with where they came from.
pub struct Scenario {
    /// How to reproduce it (a swarm seed or "fuzz input").
    pub origin: String,
    /// The knobs the config was built from.
    pub knobs: Knobs,
    /// The config as TOML (what `ConfigBuilder` parsed).
    pub toml: String,
    /// The validated config.
    pub config: SimConfig,
    /// The swarm's workload model (`None` for fuzz input).
    pub workload: Option<Workload>,
    /// The trace.
    pub requests: Vec<IoRequest>,
}

/// A known engine bug: violations it explains, and the regression test that reproduces it.
pub struct KnownBug {
    /// `tests/swarm_regressions.rs` test that reproduces it.
    pub test: &'static str,
    /// True if this violation (of a run with this config) is that bug.
    pub matches: fn(&Violation, &SimConfig) -> bool,
}

/// Bugs found by the swarm and not yet fixed (see the module docs). Each matcher is as
/// narrow as the bug: the invariant id plus the shape of the detail.
pub const KNOWN_BUGS: &[KnownBug] = &[
    // Empty: the five bugs the swarm found first (buffer waiter never retried, host writes
    // exhausting a plane ahead of GC, utilisation above 1, zero latencies as 1 ns, a
    // trimmed read-modify-write read counted as a host read) are fixed; their regression
    // tests in `tests/swarm_regressions.rs` run in every test pass.
];

fn numbers(s: &str) -> Vec<f64> {
    s.split(|c: char| !(c.is_ascii_digit() || c == '.')).filter_map(|w| w.parse().ok()).collect()
}

fn last_number(s: &str) -> Option<f64> {
    numbers(s).last().copied()
}

/// The swarm's scale (`LAMINA_SWARM_SCALE`, default 1): the largest device and the
/// longest trace it draws are this many times those of the default swarm (8 k pages,
/// 1,500 requests), and blocks per plane are drawn in steps of this size. The same seed
/// draws the same knobs at every scale. At scale 1 no device holds enough logical pages
/// for the forward map to switch to its flat table, and no run needs more than one batch of
/// anything; a larger scale reaches those paths (docs/testing.md).
pub fn scale() -> u32 {
    static SCALE: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *SCALE.get_or_init(|| match std::env::var("LAMINA_SWARM_SCALE") {
        Err(_) => 1,
        Ok(v) => match v.trim().parse::<u32>() {
            Ok(k) if (1..=256).contains(&k) => k,
            _ => panic!("LAMINA_SWARM_SCALE={v:?}: expected an integer from 1 to 256"),
        },
    })
}

/// Bytes of PRNG output the knobs are drawn from (`arbitrary` needs far fewer).
const KNOB_BYTES: usize = 512;

impl Scenario {
    /// The swarm scenario of `seed`.
    pub fn from_seed(seed: u64) -> Result<Scenario, String> {
        let mut rng = Xoshiro256StarStar::seed_from_u64(seed);
        let mut bytes = [0u8; KNOB_BYTES];
        for chunk in bytes.chunks_mut(8) {
            chunk.copy_from_slice(&rng.next_u64().to_le_bytes());
        }
        let knobs = Knobs::arbitrary(&mut Unstructured::new(&bytes)).map_err(|e| e.to_string())?;
        let (toml, config, capacity) = configure(&knobs)?;
        let page = u64::from(config.nand.geometry.page_size_bytes);
        let workload = Workload::draw(&mut rng, capacity, page);
        let ops = workload.ops(&mut rng, page);
        let requests = workload::requests(&ops, capacity);
        let origin = format!("swarm seed {seed}");
        Ok(Scenario { origin, knobs, toml, config, workload: Some(workload), requests })
    }

    /// The fuzz scenario of `knobs` and `ops`; `None` if the trace is empty.
    pub fn from_fuzz(knobs: Knobs, ops: &[OpKnob]) -> Result<Option<Scenario>, String> {
        if ops.is_empty() {
            return Ok(None);
        }
        let (toml, config, capacity) = configure(&knobs)?;
        let ops: Vec<TraceOp> = ops.iter().map(OpKnob::decode).collect();
        let requests = workload::requests(&ops, capacity);
        Ok(Some(Scenario { origin: "fuzz input".into(), knobs, toml, config, workload: None, requests }))
    }

    /// Run and check; violations not explained by [`KNOWN_BUGS`] come first in the
    /// returned pair, known ones (with their regression test) second.
    pub fn check(&self) -> (Vec<Violation>, Vec<(Violation, &'static str)>) {
        let mut unknown = Vec::new();
        let mut known = Vec::new();
        for v in check::check(&self.config, &self.requests) {
            match KNOWN_BUGS.iter().find(|b| (b.matches)(&v, &self.config)) {
                Some(b) => known.push((v, b.test)),
                None => unknown.push(v),
            }
        }
        (unknown, known)
    }

    /// Everything needed to reproduce and understand a failure.
    pub fn describe(&self, violations: &[Violation], replay: &str) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "\n==== lamina swarm failure: {} ====", self.origin);
        let _ = writeln!(s, "replay: {replay}");
        for v in violations {
            let _ = writeln!(s, "  violated {}: {}", v.id, v.detail);
        }
        let _ = writeln!(s, "---- config (TOML) ----\n{}", self.toml);
        let page = u64::from(self.config.nand.geometry.page_size_bytes);
        let c = TraceCounts::of(&self.requests, page);
        let _ = writeln!(s, "---- trace ----\n{} requests: {c:?}", self.requests.len());
        if let Some(w) = &self.workload {
            let _ = writeln!(s, "workload: {w:?}");
        }
        for r in self.requests.iter().take(8) {
            let _ = writeln!(s, "  {r:?}");
        }
        if self.requests.len() > 8 {
            let _ = writeln!(s, "  … ({} more)", self.requests.len() - 8);
        }
        s
    }
}

/// Knobs → TOML → validated config → logical capacity. A legal drawing that the
/// builder rejects is itself a failure (the knob mapping only produces legal values).
fn configure(knobs: &Knobs) -> Result<(String, SimConfig, u64), String> {
    // The buffer may hold at most the logical capacity, and remapping may reserve less
    // than half the host pages: learn both without a buffer (and without remapping) first.
    let mut bare = knobs.clone();
    bare.buffer.size = knobs::BufferSize::Off;
    bare.remap = None;
    let bare_cfg = check::build_config(&bare.to_toml()).map_err(|e| format!("config rejected: {e}"))?;
    let page = u64::from(bare_cfg.nand.geometry.page_size_bytes);
    let mut max_buffer = check::capacity(&bare_cfg).unwrap_or(u64::MAX);
    let max_remap = (max_buffer / page / 2).saturating_sub(1);
    if knobs.remap.is_some() {
        bare.remap = knobs.remap.clone();
        let toml = bare.to_toml_within(u64::MAX, max_remap);
        let cfg = check::build_config(&toml).map_err(|e| format!("config rejected: {e}\n{toml}"))?;
        max_buffer = check::capacity(&cfg).map_err(|e| format!("simulation not built: {e}\n{toml}"))?;
    }
    let toml = knobs.to_toml_within(max_buffer, max_remap);
    let config = check::build_config(&toml).map_err(|e| format!("config rejected: {e}\n{toml}"))?;
    let capacity = check::capacity(&config).map_err(|e| format!("simulation not built: {e}\n{toml}"))?;
    Ok((toml, config, capacity))
}

/// The one command that replays swarm seed `seed`.
pub fn replay_command(seed: u64) -> String {
    let scale = match scale() {
        1 => String::new(),
        k => format!("LAMINA_SWARM_SCALE={k} "),
    };
    format!(
        "{scale}LAMINA_SWARM_SEED={seed} cargo test --release -p lamina-engine --test swarm -- --nocapture"
    )
}
