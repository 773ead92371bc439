//! `lamina run` and `lamina presets`.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;

use lamina_engine::config::ConfigBuilder;

/// Arguments of `lamina run`.
#[derive(Args, Debug)]
pub struct RunArgs {
    /// Base device preset (see `lamina presets`).
    #[arg(long)]
    preset: Option<String>,
    /// TOML config file(s), applied in order over the preset.
    #[arg(long = "config", value_name = "FILE.toml")]
    configs: Vec<PathBuf>,
    /// Override one config key, e.g. `--set nand.timing.t_r=78us` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    sets: Vec<String>,
    /// Seed of all pseudo-random choices.
    #[arg(long)]
    seed: Option<u64>,
    /// Check that every read returns the latest write (stores a tag per page).
    #[arg(long)]
    verify: bool,
    /// Trace format (default: auto-detect).
    #[arg(long)]
    format: Option<String>,
    /// Write the JSON report to this file.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Do not print the text summary.
    #[arg(long, short)]
    quiet: bool,
    /// The trace file (plain, gzip, bzip2, zstd, xz/lzma or tar); `-` reads standard input
    /// (pipes are spooled to a temporary file, since a run reads its trace twice).
    trace: PathBuf,
}

/// Run `lamina run`.
pub fn run(args: RunArgs) -> anyhow::Result<()> {
    let mut b = ConfigBuilder::new();
    if let Some(p) = &args.preset {
        b = b.preset(p)?;
    }
    for path in &args.configs {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading config {}", path.display()))?;
        b = b.toml(&path.display().to_string(), &text)?;
    }
    if let Some(seed) = args.seed {
        b = b.set(&format!("seed={seed}"))?;
    }
    if args.verify {
        b = b.set("host.verify=true")?;
    }
    if let Some(f) = &args.format {
        b = b.set(&format!("trace.format=\"{f}\""))?;
    }
    for s in &args.sets {
        b = b.set(s)?;
    }
    let cfg = b.build()?;
    let report = lamina_engine::run_trace(&cfg, &args.trace)?;
    if let Some(path) = &args.json {
        let tmp = path.with_extension("json.tmp");
        std::fs::write(&tmp, report.to_json()).with_context(|| format!("writing {}", tmp.display()))?;
        std::fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))?;
    }
    if !args.quiet {
        print!("{}", report.to_text());
    }
    Ok(())
}

/// Run `lamina presets`.
pub fn presets() -> anyhow::Result<()> {
    for p in lamina_nand_model::presets() {
        println!("{:<18} {}", p.name, p.description);
        println!("{:<18} source: {}", "", p.source);
    }
    Ok(())
}
