//! The `lamina` command: replay traces on a simulated 3D-NAND SSD.

// The doc comments of the argument structs are clap's help text, written for a terminal
// (`[default: …]`, `<paper>`, `[nand]`), not rustdoc markup.
#![allow(rustdoc::broken_intra_doc_links, rustdoc::invalid_html_tags)]

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod exit;
mod out;
mod plot;
mod progress;
mod reproduce;
mod run_cmd;
mod serve_cmd;
mod sweep;
mod trace_args;
mod trace_cmd;

/// Lamina: a deterministic, fast trace-replay simulator for 3D-NAND SSDs.
#[derive(Parser, Debug)]
#[command(name = "lamina", version, after_help = exit::EXIT_CODES_HELP)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Replay a trace on a simulated SSD and print the report.
    #[command(after_help = exit::EXIT_CODES_HELP)]
    Run(run_cmd::RunArgs),
    /// Serve the simulated SSD as an NBD network block device to real clients
    /// (qemu-io, nbd-client, fio); print the report when the last client disconnects.
    #[command(after_help = exit::EXIT_CODES_HELP)]
    Serve(serve_cmd::ServeArgs),
    /// List the built-in device presets and their sources.
    Presets,
    /// List every FTL, placement policy, arbiter and GC mode with its source.
    #[command(visible_alias = "list")]
    Policies,
    /// Inspect, generate and convert traces.
    #[command(subcommand)]
    Trace(trace_cmd::TraceCmd),
    /// Run every combination a sweep spec declares (resumable, shardable) and tabulate.
    #[command(after_help = exit::EXIT_CODES_HELP)]
    Sweep(sweep::SweepArgs),
    /// Gather the output directories of a sharded sweep into one set of tables.
    #[command(after_help = exit::EXIT_CODES_HELP)]
    Merge(sweep::MergeArgs),
    /// Draw figures (SVG or PNG, data as CSV beside): CDFs, normalised bars, a metric
    /// against a sweep axis, latency over time.
    #[command(subcommand, after_help = exit::EXIT_CODES_HELP)]
    Plot(plot::PlotCmd),
    /// Run a paper's experiment and write its figures, tables and a claims check
    /// (paper vs ours) into one folder.
    #[command(after_help = exit::EXIT_CODES_HELP)]
    Reproduce(reproduce::ReproduceArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    exit::finish(match cli.command {
        Command::Run(args) => run_cmd::run(args),
        Command::Serve(args) => serve_cmd::serve(args),
        Command::Presets => run_cmd::presets(),
        Command::Policies => run_cmd::policies(),
        Command::Trace(cmd) => trace_cmd::run(cmd),
        Command::Sweep(args) => sweep::sweep(args),
        Command::Merge(args) => sweep::merge(args),
        Command::Plot(cmd) => plot::run(cmd),
        Command::Reproduce(args) => reproduce::run(args),
    })
}
