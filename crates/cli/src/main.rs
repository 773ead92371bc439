//! The `lamina` command: replay traces on a simulated 3D-NAND SSD.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod trace_cmd;

/// Lamina: a deterministic, fast trace-replay simulator for 3D-NAND SSDs.
#[derive(Parser, Debug)]
#[command(name = "lamina", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Inspect, generate and convert traces.
    #[command(subcommand)]
    Trace(trace_cmd::TraceCmd),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Trace(cmd) => trace_cmd::run(cmd),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
