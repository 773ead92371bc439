//! Replays a trace with the GC timeline diagnostic on ([`lamina_engine::gc_timeline`])
//! and prints the report's read figures and the timeline: how GC work was laid out on
//! the dies and what host reads waited for.
//!
//! Usage: `cargo run --release -p lamina-engine --example gc_timeline -- TRACE PRESET
//! [KEY=VALUE ...]`, each `KEY=VALUE` as `lamina run --set` takes it (the trace limit is
//! `trace.limit=N`). Example (docs/results.md, "Under GC pressure"):
//!
//! ```text
//! cargo run --release -p lamina-engine --example gc_timeline -- /tmp/wh.trace \
//!     mqsim-default trace.limit=30000 ftl.allocation=die-aligned \
//!     nand.geometry.blocks_per_plane=64 precondition.fill_fraction=0.9 \
//!     sched.scheduler=multiplane
//! ```

use std::path::Path;

use lamina_engine::SimulationBuilder;
use lamina_engine::config::ConfigBuilder;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [trace, preset, sets @ ..] = args.as_slice() else {
        return Err("usage: gc_timeline TRACE PRESET [KEY=VALUE ...]".into());
    };
    let mut cfg = ConfigBuilder::new().preset(preset)?;
    for s in sets {
        cfg = cfg.set(s)?;
    }
    let builder = SimulationBuilder::new(cfg.build()?).gc_timeline();
    let (report, sim) = lamina_engine::run_built(builder, Path::new(trace), &mut |_| {})?;
    let ms = |ns: f64| ns / 1e6;
    let read_gc = report.latency_attribution.as_ref().map_or(f64::NAN, |a| a.read.gc_blocked.mean_ns);
    println!(
        "IOPS {:.1}   read mean {:.2} ms (GC-blocked {:.2} ms)   WAF {:.3}",
        report.iops,
        ms(report.read.mean_ns),
        ms(read_gc),
        report.waf.unwrap_or(f64::NAN)
    );
    print!("{}", sim.gc_timeline().expect("the builder turned the timeline on"));
    Ok(())
}
