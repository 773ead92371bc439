//! `lamina run`, `lamina presets` and `lamina policies`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use clap::Args;

use lamina_engine::config::{ConfigBuilder, KeyOrigins};
use lamina_engine::{LatencyLog, SimulationBuilder};

use crate::out::{self, OutputFile};
use crate::progress::RunProgress;
use crate::trace_args::TraceArgs;

/// The device `lamina run` simulates when neither a preset nor a `[nand]` section is
/// given: MQSim's default SSD (the field's reference simulator; 512 GiB, so most real
/// traces fit without wrapping).
pub const DEFAULT_PRESET: &str = "mqsim-default";

/// The device options `lamina run` and `lamina serve` share: preset, config files,
/// `--set` overrides, seed and verify mode.
#[derive(Args, Debug)]
pub struct DeviceArgs {
    /// Base device preset (see `lamina presets`; default: mqsim-default when no config
    /// gives a preset or a [nand] section).
    #[arg(long)]
    preset: Option<String>,
    /// TOML config file(s), applied in order over the preset.
    #[arg(long = "config", value_name = "FILE.toml")]
    configs: Vec<PathBuf>,
    /// Override one config key, e.g. `--set nand.timing.t_r=78us` (repeatable; applied last).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    sets: Vec<String>,
    /// Seed of all pseudo-random choices (`seed`; 0 to 2^63 - 1, the range a config
    /// file's TOML integer can hold).
    #[arg(long, value_parser = clap::value_parser!(u64).range(..=i64::MAX as u64))]
    seed: Option<u64>,
    /// Check that every read returns the latest write (`host.verify`; stores a tag per page).
    #[arg(long)]
    verify: bool,
}

/// Where the report goes, for `lamina run` and `lamina serve`.
#[derive(Args, Debug)]
pub struct ReportArgs {
    /// Write the JSON report to this file (checked before the run starts).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Do not print the text summary (its warnings still go to standard error, one
    /// `warning:` line each).
    #[arg(long, short)]
    pub quiet: bool,
    /// Stream one CSV line per completed request to this file:
    /// `arrival_ns,op,bytes,lpn,response_ns,wait_ns` (checked before the run starts;
    /// the file appears when the run succeeds).
    #[arg(long, value_name = "FILE")]
    pub latency_log: Option<PathBuf>,
}

/// Arguments of `lamina run`.
#[derive(Args, Debug)]
pub struct RunArgs {
    #[command(flatten)]
    device: DeviceArgs,
    #[command(flatten)]
    output: ReportArgs,
    /// The trace file (plain, gzip, bzip2, zstd, xz/lzma or tar); `-` reads standard input
    /// (pipes are spooled to a temporary file, since a run reads its trace twice).
    trace: PathBuf,
    #[command(flatten)]
    trace_opts: TraceArgs,
}

/// True if any config source names a device: `--preset`, a `preset` or `[nand]` in a
/// config file (`tables`, the files parsed), or a `--set preset=…`/`--set nand.…`.
fn names_a_device(args: &DeviceArgs, tables: &[toml::Table]) -> bool {
    let device_key = |k: &str| k == "preset" || k == "nand";
    args.preset.is_some()
        || tables.iter().any(|t| t.keys().any(|k| device_key(k)))
        || args.sets.iter().any(|s| {
            let key = s.split_once('=').map_or(s.as_str(), |(k, _)| k).trim();
            device_key(key.split('.').next().unwrap_or(key))
        })
}

impl DeviceArgs {
    /// Resolve the config: the preset (or the default device), then `defaults` (the
    /// command's own settings, which config files and `--set` may override), the config
    /// files, `--seed`, `--verify`, `late` (settings from other flags), and `--set` last.
    /// Returns the config, where it came from (lowest precedence first) and where each
    /// source set its keys (for errors found after the config was built:
    /// [`locate_memory_refusal`]).
    pub fn config_with_origins(
        &self,
        defaults: &[&str],
        late: Vec<String>,
    ) -> anyhow::Result<(lamina_engine::config::SimConfig, Vec<String>, KeyOrigins)> {
        let mut files = Vec::with_capacity(self.configs.len());
        let mut tables = Vec::with_capacity(self.configs.len());
        for path in &self.configs {
            let text = std::fs::read_to_string(path)
                .map_err(|e| crate::exit::usage(format!("reading config {}: {e}", path.display())))?;
            let name = path.display().to_string();
            // Parsed before any note about what the files say: a syntax error is the
            // only thing to show then.
            tables.push(ConfigBuilder::parse_toml(&name, &text)?);
            files.push((name, text));
        }
        let mut b = ConfigBuilder::new();
        // Where the config comes from, lowest precedence first (issue #8 item 16).
        let mut sources = Vec::new();
        if let Some(p) = &self.preset {
            b = b.preset(p)?;
            sources.push(format!("preset {p}"));
            // A file's `preset` applies over --preset (files come later): say so, since
            // the flag looks like the stronger choice.
            for ((name, _), table) in files.iter().zip(&tables) {
                let theirs = table.get("preset").and_then(|v| v.as_str());
                if let Some(theirs) = theirs.filter(|t| t != p) {
                    eprintln!(
                        "note: {name} sets preset = \"{theirs}\", which replaces --preset {p} (config files apply over \
                         --preset); the device simulated is {theirs}'s unless a later source changes it — drop one of them"
                    );
                }
            }
        } else if !names_a_device(self, &tables) {
            eprintln!(
                "note: no preset or [nand] section given; simulating the default device {DEFAULT_PRESET} \
                 (MQSim's default SSD; choose another with --preset, see `lamina presets`)"
            );
            b = b.preset(DEFAULT_PRESET)?;
            sources.push(format!("default preset {DEFAULT_PRESET}"));
        }
        for s in defaults {
            b = b.set(s)?;
            sources.push(format!("default {s}"));
        }
        for (name, text) in &files {
            b = b.toml(name, text)?;
            sources.push(format!("file {name}"));
        }
        // Each flag named as itself in errors about its key, as in the sources.
        let mut flag = |b: ConfigBuilder, origin: String, assignment: &str| {
            let b = b.set_from(&origin, assignment);
            sources.push(origin);
            b
        };
        if let Some(seed) = self.seed {
            b = flag(b, format!("--seed {seed}"), &format!("seed={seed}"))?;
        }
        if self.verify {
            b = flag(b, "--verify".into(), "host.verify=true")?;
        }
        for s in late {
            b = flag(b, format!("trace flag {s}"), &s)?;
        }
        for s in &self.sets {
            b = b.set(s)?;
            sources.push(format!("--set {s}"));
        }
        let (cfg, origins) = b.build_checked_with_origins()?;
        Ok((cfg, sources, origins))
    }
}

/// `e`, if it is a memory-limit refusal (a replay's
/// [`lamina_engine::RunTraceError::Build`] or a [`lamina_engine::BuildError`] of its own), led by where the keys that drove its estimate
/// were given (`FILE:LINE`, `--set …`, `--verify`; several joined by commas), or by the
/// preset when none was: the engine's message names the keys, their values and the
/// limit, but the simulation it comes from no longer knows where they were given.
pub fn locate_memory_refusal(origins: &KeyOrigins, e: anyhow::Error, preset: Option<&str>) -> anyhow::Error {
    use lamina_engine::budget::BudgetError;
    use lamina_engine::{BuildError, RunTraceError};
    // A replay's build fails inside its run; `lamina serve` builds its simulation itself.
    let built = match e.downcast_ref::<RunTraceError>() {
        Some(RunTraceError::Build(b)) => Some(b),
        _ => e.downcast_ref::<BuildError>(),
    };
    let Some(BuildError::Budget(BudgetError::Memory { drivers, .. })) = built else {
        return e;
    };
    let mut at: Vec<String> = Vec::new();
    for o in drivers.iter().filter_map(|k| origins.origin_of(k)) {
        if !at.contains(&o) {
            at.push(o);
        }
    }
    match (at.is_empty(), preset) {
        (false, _) => e.context(at.join(", ")),
        (true, Some(p)) => e.context(format!("preset {p} (its own values)")),
        (true, None) => e,
    }
}

/// Print the report's text summary (unless `quiet`) and write its JSON to `json_out`:
/// the summary first, so a failed JSON write does not hide the results (and a closed
/// standard output does not lose the JSON). Returns the print's result.
///
/// `quiet` drops the summary from standard output, not the report's warnings: they go
/// to standard error instead, one `warning: …` line each (the run's, then the trace's,
/// in the summary's order), since a number read without its warning can mislead.
pub fn emit_report(
    report: &lamina_engine::report::Report,
    quiet: bool,
    json_out: Option<OutputFile>,
) -> anyhow::Result<anyhow::Result<()>> {
    let printed = if quiet {
        for w in report.warnings.iter().chain(&report.trace.warnings) {
            eprintln!("warning: {w}");
        }
        Ok(())
    } else {
        out::print(&report.to_text())
    };
    if let Some(mut f) = json_out {
        f.write_all(report.to_json().as_bytes())?;
        f.commit()?;
    }
    Ok(printed)
}

/// Run `lamina run`.
pub fn run(args: RunArgs) -> anyhow::Result<()> {
    // Every output path first: a bad one must not cost a simulation.
    let mut outputs = Vec::new();
    outputs.extend(args.output.json.as_deref().map(|p| ("--json", p)));
    outputs.extend(args.output.latency_log.as_deref().map(|p| ("--latency-log", p)));
    let mut inputs = vec![("trace", args.trace.as_path())];
    inputs.extend(args.device.configs.iter().map(|p| ("--config", p.as_path())));
    out::check_distinct(&outputs, &inputs)?;
    let json_out = args.output.json.as_deref().map(OutputFile::create).transpose()?;
    let mut log_out = args.output.latency_log.as_deref().map(OutputFile::create).transpose()?;
    let (cfg, sources, origins) = args.device.config_with_origins(&[], args.trace_opts.config_sets()?)?;
    let log = log_out.as_mut().map(|f| f.stream().map(LatencyLog::new)).transpose()?;
    let (mut report, log) = replay(&cfg, &args.trace, log)
        .map_err(|e| locate_memory_refusal(&origins, e, cfg.preset.as_deref()))?;
    report.config_sources = sources;
    // The log is finished before the summary, but its failure reported after it (the
    // results stand; only the log is lost).
    let logged = match (log, log_out) {
        (Some(log), Some(f)) => finish_log(log, f),
        _ => Ok(()),
    };
    let printed = emit_report(&report, args.output.quiet, json_out)?;
    logged?;
    printed
}

/// Flush the latency log and put its file in place; a write error (disk full) names
/// the file and how far the log got, and leaves no partial file behind.
pub fn finish_log(log: LatencyLog, file: OutputFile) -> anyhow::Result<()> {
    let written = log.lines();
    match log.finish() {
        Ok(_) => file.commit(),
        Err(e) => Err(crate::exit::Failure::new(
            crate::exit::Kind::Runtime,
            format!(
                "writing latency log {}: {e} (after {written} of the run's requests; the file was not written)",
                file.shown()
            ),
        )
        .into()),
    }
}

/// Replay with a progress bar on a terminal, logging every request to `log` if given
/// (returned after the run).
fn replay(
    cfg: &lamina_engine::config::SimConfig,
    trace: &Path,
    log: Option<LatencyLog>,
) -> anyhow::Result<(lamina_engine::report::Report, Option<LatencyLog>)> {
    let bar = RunProgress::new();
    let mut builder = SimulationBuilder::new(cfg.clone());
    if let Some(log) = log {
        builder = builder.latency_log(log);
    }
    let run = lamina_engine::run_built(builder, trace, &mut |p| bar.update(p));
    bar.finish();
    let (report, mut sim) = run?;
    Ok((report, sim.take_latency_log()))
}

/// Run `lamina presets`.
pub fn presets() -> anyhow::Result<()> {
    let mut o = String::new();
    for p in lamina_nand_model::presets() {
        let _ = writeln!(o, "{:<18} {}", p.name, p.description);
        let _ = writeln!(o, "{:<18} source: {}", "", p.source);
    }
    out::print(&o)
}

/// The `lamina policies` listing: every FTL, placement policy, arbiter and GC mode with
/// its config key, a one-line description and its source.
pub fn policies_text() -> String {
    use lamina_ftl::FtlKind;
    use lamina_sched::{ArbiterKind, GcMode, PlacementKind, SchedulerKind};
    let mut o = String::new();
    let mut group = |title: &str, key: &str, rows: Vec<(&str, &str, &str)>| {
        let _ = writeln!(o, "{title} ({key})");
        for (name, what, source) in rows {
            let _ = writeln!(o, "  {name:<13} {what}");
            let _ = writeln!(o, "  {:<13} source: {source}", "");
        }
        o.push('\n');
    };
    group("FTLs", "ftl.kind", FtlKind::ALL.iter().map(|k| (k.name(), k.describe(), k.source())).collect());
    group(
        "Write placement policies",
        "sched.placement",
        PlacementKind::ALL.iter().map(|k| (k.name(), k.describe(), k.source())).collect(),
    );
    group(
        "Transaction schedulers: which queued transactions form a die's next flash command",
        "sched.scheduler",
        SchedulerKind::ALL.iter().map(|k| (k.name(), k.describe(), k.source())).collect(),
    );
    group(
        "Schedulers: die queue arbiters",
        "sched.arbiter",
        ArbiterKind::ALL.iter().map(|k| (k.name(), k.describe(), k.source())).collect(),
    );
    group(
        "GC modes: GC versus host I/O",
        "sched.gc",
        GcMode::ALL.iter().map(|k| (k.name(), k.describe(), k.source())).collect(),
    );
    o.push_str(
        "Details: docs/policies.md (placement, transaction schedulers), docs/ftl.md (FTL), docs/model.md \
         (arbitration, GC).\n",
    );
    o
}

/// Run `lamina policies`.
pub fn policies() -> anyhow::Result<()> {
    out::print(&policies_text())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_device_is_a_preset() {
        assert!(lamina_nand_model::preset(DEFAULT_PRESET).is_some());
    }

    #[test]
    fn a_device_is_named_by_any_config_source() {
        use clap::Parser;
        #[derive(Parser)]
        struct P {
            #[command(flatten)]
            r: RunArgs,
        }
        let args = |a: &[&str]| P::parse_from([&["x"], a, &["t"]].concat()).r.device;
        let file = |text: &str| [text.parse::<toml::Table>().unwrap()];
        assert!(!names_a_device(&args(&[]), &[]));
        assert!(!names_a_device(&args(&["--set", "host.queue_depth=4"]), &file("seed = 1")));
        assert!(names_a_device(&args(&["--preset", "mbm"]), &[]));
        assert!(names_a_device(&args(&["--set", "nand.geometry.channels=2"]), &[]));
        assert!(names_a_device(&args(&[]), &file("[nand.timing]\nt_r = 1")));
        assert!(names_a_device(&args(&[]), &file("preset = \"pen\"")));
    }
}
