//! `lamina trace …`: trace statistics, generation and conversion.

use clap::Subcommand;

/// Trace subcommands.
#[derive(Subcommand, Debug)]
pub enum TraceCmd {}

/// Run a trace subcommand.
pub fn run(cmd: TraceCmd) -> anyhow::Result<()> {
    match cmd {}
}
