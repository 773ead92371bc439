//! Fuzz the whole engine: structured input (`#[derive(Arbitrary)]` configuration knobs
//! and an operation list) becomes a validated configuration and a trace, which run twice
//! with `host.verify = true` under the swarm's invariant checker
//! (`crates/engine/tests/swarm_harness`, shared with `cargo test --test swarm`).
//!
//! A violation that is not a known engine bug (`swarm_harness::KNOWN_BUGS`) panics with
//! the configuration as TOML and a summary of the trace; `cargo fuzz run engine
//! <artifact>` replays it. See docs/testing.md.
#![no_main]

#[path = "../../crates/engine/tests/swarm_harness/mod.rs"]
mod swarm_harness;

use libfuzzer_sys::fuzz_target;
use swarm_harness::{Scenario, knobs::Knobs, workload::OpKnob};

/// The fuzzer's input: configuration knobs, then up to 256 operations.
#[derive(arbitrary::Arbitrary, Debug)]
struct Input {
    knobs: Knobs,
    ops: Vec<OpKnob>,
}

fuzz_target!(|input: Input| {
    swarm_harness::check::quiet_panics();
    let mut ops = input.ops;
    ops.truncate(256);
    let scenario = match Scenario::from_fuzz(input.knobs, &ops) {
        Ok(Some(s)) => s,
        Ok(None) => return,
        Err(e) => panic!("a legal configuration was rejected: {e}"),
    };
    let (unknown, _known) = scenario.check();
    if !unknown.is_empty() {
        panic!("{}", scenario.describe(&unknown, "cargo fuzz run engine <this artifact>"));
    }
});
