//! Lamina's deterministic discrete-event replay engine.
//!
//! The engine composes the NAND model ([`lamina_nand_model`]), an FTL ([`lamina_ftl`])
//! and placement/scheduling policies ([`lamina_sched`]) into a simulated SSD, replays a
//! trace on it and reports response-time percentiles, throughput, write amplification,
//! wear and utilisation. It owns the only clock and the only event queue.
//!
//! Many simulations can run in one process: there are no globals, and a [`Simulation`]
//! is `Send`, so independent runs can be spread over threads (e.g. with rayon).
//!
//! ```
//! use lamina_engine::{config::ConfigBuilder, run_trace};
//!
//! let cfg = ConfigBuilder::new()
//!     .preset("mbm")?
//!     .set("buffer.size_bytes=1048576")?
//!     .build()?;
//! // (doc tests run in crates/engine; the demo trace is at the repository root)
//! let report = run_trace(&cfg, std::path::Path::new("../../traces/demo.trace"))?;
//! assert_eq!(report.all.count, 5000);
//! println!("p99 read = {:?} ns, WAF = {:?}", report.read.percentile(99.0), report.waf);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod budget;
pub mod buffer;
pub mod config;
pub mod gc_timeline;
pub mod hostif;
pub mod latency_log;
mod prefill;
pub mod queue;
pub mod remap;
pub mod report;
mod setup;
mod sim;
pub mod slab;
pub mod stats;
mod stats_thread;
pub mod table;
pub mod trace_cache;
mod wear;
/// Trace ingestion lives in its own crate, [`lamina_trace`]; re-exported here so
/// `lamina_engine::trace::…` paths keep working.
pub use lamina_trace as trace;

pub use gc_timeline::{GcTimeline, GcTimelineSummary};
pub use latency_log::LatencyLog;
pub use setup::{
    BuildError, Progress, RunTraceError, SimulationBuilder, run_built, run_built_cached, run_trace,
    run_trace_with_progress,
};
pub use sim::{Completion, FlashCounters, RunError, Simulation, VerifyError};
pub use stats_thread::{AUTO_INLINE_FIRST, StatsThreadMode};
pub use trace_cache::{ParsedCursor, ParsedTrace, TraceCache, TraceCacheStats};

/// The Lamina version recorded in every report.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
