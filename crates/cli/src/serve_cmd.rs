//! `lamina serve`: the simulated SSD as an NBD network block device (crates/serve), with
//! the device options of `lamina run` and its report.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use clap::Args;

use lamina_engine::report::TraceInfo;
use lamina_engine::{LatencyLog, SimulationBuilder};
use lamina_serve::{Listen, Pacing, RecordTo, ServeOptions, Served, Server};
use lamina_trace::TraceFormat;

use crate::exit::{Failure, Kind};
use crate::out::OutputFile;
use crate::run_cmd::{DeviceArgs, ReportArgs, emit_report, finish_log};
use crate::trace_args::writable_format_parser;

/// The setting `lamina serve` starts from (config files and `--set` may not undo it): a
/// server cannot know which pages clients will read before writing them, so it cannot
/// prefill them as `lamina run` does; such reads complete at once, unwritten.
const SERVE_DEFAULTS: &[&str] = &["host.unwritten_reads=\"zero\""];

/// Arguments of `lamina serve`.
#[derive(Args, Debug)]
pub struct ServeArgs {
    #[command(flatten)]
    device: DeviceArgs,
    /// TCP address to listen on (port 0 picks a free port; the bound address is printed).
    #[arg(long, value_name = "IP:PORT", default_value = "127.0.0.1:10809", conflicts_with = "unix")]
    listen: SocketAddr,
    /// Listen on this Unix socket instead of TCP (the path must not exist).
    #[arg(long, value_name = "PATH")]
    unix: Option<PathBuf>,
    /// Paced mode: delay each reply until its simulated completion time in wall-clock
    /// time (default: virtual mode, reply as soon as the completion is simulated).
    #[arg(long)]
    pace: bool,
    /// Keep serving after the last client disconnects (stop with SIGINT / Ctrl-C).
    #[arg(long)]
    persist: bool,
    /// Keep the served data in this file (created, sized to the export) instead of memory.
    #[arg(long, value_name = "FILE")]
    backing: Option<PathBuf>,
    /// Record the served requests as a trace; `lamina run --config FILE.toml FILE` then
    /// reproduces the served latencies exactly (FILE.toml, the resolved config, is
    /// written beside it).
    #[arg(long, value_name = "FILE")]
    record: Option<PathBuf>,
    /// Format of --record: blkparse (default; has trims), ssdsim or mqsim (no trims: the
    /// export then does not offer TRIM). Default: from FILE's extension when it names one
    /// of these formats, else blkparse.
    #[arg(long, value_name = "FORMAT", value_parser = writable_format_parser(), requires = "record")]
    record_format: Option<TraceFormat>,
    #[command(flatten)]
    output: ReportArgs,
}

/// The record format: the flag, else the file's extension when it names a recordable
/// format, else blkparse.
fn record_format(args: &ServeArgs, path: &Path) -> TraceFormat {
    args.record_format.unwrap_or_else(|| {
        path.extension()
            .and_then(|e| e.to_str())
            .and_then(|e| e.parse::<TraceFormat>().ok())
            .filter(|f| lamina_serve::record_format_check(*f).is_ok())
            .unwrap_or(TraceFormat::Blkparse)
    })
}

/// Run `lamina serve`.
pub fn serve(args: ServeArgs) -> anyhow::Result<()> {
    // Every output path first: a bad one must not cost a session.
    let json_out = args.output.json.as_deref().map(OutputFile::create).transpose()?;
    let mut log_out = args.output.latency_log.as_deref().map(OutputFile::create).transpose()?;
    let mut record_out = args.record.as_deref().map(OutputFile::create).transpose()?;
    let config_out = args.record.as_deref().map(|p| OutputFile::create(&config_path(p))).transpose()?;
    let (cfg, sources) = args.device.config(SERVE_DEFAULTS, Vec::new())?;
    check_servable(&cfg)?;
    let mut builder = SimulationBuilder::new(cfg.clone());
    if let Some(f) = log_out.as_mut() {
        builder = builder.latency_log(LatencyLog::new(f.stream()?));
    }
    let mut sim = builder.build()?;
    sim.precondition().map_err(|e| anyhow::anyhow!("preconditioning: {e}"))?;
    let record = match (&args.record, record_out.as_mut()) {
        (Some(path), Some(f)) => Some(RecordTo { sink: f.stream()?, format: record_format(&args, path) }),
        _ => None,
    };
    let opts = ServeOptions {
        pacing: if args.pace { Pacing::Paced } else { Pacing::Virtual },
        persist: args.persist,
        backing: args.backing.clone(),
        record,
        sigint: true,
    };
    let listen = match &args.unix {
        Some(p) => Listen::Unix(p.clone()),
        None => Listen::Tcp(args.listen),
    };
    let server = Server::bind(sim, &listen, opts).map_err(|e| Failure::new(Kind::Usage, e.to_string()))?;
    eprintln!(
        "lamina serve: listening on {} (export \"\" or \"lamina\", {} bytes, {} mode); {}",
        server.local_addr(),
        server.export_bytes(),
        if args.pace { "paced" } else { "virtual" },
        if args.persist { "stop with Ctrl-C" } else { "stops when the last client disconnects or on Ctrl-C" }
    );
    let addr = server.local_addr().to_owned();
    let mut served = server.serve()?;
    eprintln!("{}", served_summary(&served));
    let mut report = served.sim.report(trace_info(&served, &addr, args.record.as_deref()));
    report.config_sources = sources;
    let logged = match (served.sim.take_latency_log(), log_out) {
        (Some(log), Some(f)) => finish_log(log, f),
        _ => Ok(()),
    };
    let recorded = finish_record(&served, record_out, config_out, &cfg);
    let printed = emit_report(&report, args.output.quiet, json_out)?;
    if let Some(e) = served.failure.take() {
        return Err(e.into());
    }
    logged?;
    recorded?;
    printed
}

/// The served I/O is the "trace" of the report.
fn trace_info(served: &Served, addr: &str, record: Option<&Path>) -> TraceInfo {
    let c = &served.counts;
    let mut warnings = Vec::new();
    if served.error_replies > 0 {
        warnings.push(format!(
            "{} invalid requests were answered with an error and not simulated",
            served.error_replies
        ));
    }
    TraceInfo {
        name: match record {
            Some(p) => format!("served over NBD at {addr} (recorded in {})", p.display()),
            None => format!("served over NBD at {addr}"),
        },
        format: "nbd".into(),
        digest: String::new(),
        requests: c.reads + c.writes + c.trims,
        warnings,
        ..TraceInfo::default()
    }
}

/// One line on what was served.
fn served_summary(s: &Served) -> String {
    let c = &s.counts;
    let mut line = format!(
        "lamina serve: {} connections; {} reads, {} writes, {} trims, {} flushes simulated; {} invalid requests answered with an error",
        s.connections, c.reads, c.writes, c.trims, c.flushes, s.error_replies
    );
    if let Some(l) = &s.lateness {
        line.push_str(&format!(
            "; paced replies late by p50 {} ns, p99 {} ns, max {} ns ({} replies)",
            l.p50_ns, l.p99_ns, l.max_ns, l.count
        ));
    }
    line
}

/// `FILE.toml` beside a record `FILE`: the resolved config its replay needs.
fn config_path(record: &Path) -> PathBuf {
    let mut s = record.as_os_str().to_owned();
    s.push(".toml");
    PathBuf::from(s)
}

/// Put the record and its config in place, and say how to replay it.
fn finish_record(
    served: &Served,
    record_out: Option<OutputFile>,
    config_out: Option<OutputFile>,
    cfg: &lamina_engine::config::SimConfig,
) -> anyhow::Result<()> {
    let (Some(rec), Some(mut conf)) = (record_out, config_out) else { return Ok(()) };
    if let Some(e) = &served.record_error {
        return Err(Failure::new(
            Kind::Runtime,
            format!("--record {}: {e} (the file was not written)", rec.shown()),
        )
        .into());
    }
    let shown = rec.shown().to_owned();
    let conf_shown = conf.shown().to_owned();
    conf.write_all(cfg.to_toml().as_bytes())?;
    conf.commit()?;
    rec.commit()?;
    eprintln!("lamina serve: recorded; replay with: lamina run --config {conf_shown} {shown}");
    Ok(())
}

/// A served device must be open-loop with untransformed requests: reject what would make
/// the recorded trace replay differently from what was served.
fn check_servable(cfg: &lamina_engine::config::SimConfig) -> anyhow::Result<()> {
    use lamina_engine::config::{HostMode, UnwrittenReads};
    let bad = |m: &str| Err(Failure::new(Kind::Usage, m.to_owned()).into());
    if cfg.host.mode == HostMode::Closed {
        return bad(
            "host.mode=closed: a server is driven by its clients (open loop); remove host.mode (clients set the queue depth)",
        );
    }
    if cfg.host.unwritten_reads == UnwrittenReads::Prefill {
        return bad(
            "host.unwritten_reads=prefill: a server cannot know which pages clients will read before writing them; \
             remove the setting (lamina serve uses \"zero\")",
        );
    }
    if cfg.trace != lamina_trace::TraceOptions::default() {
        return bad(
            "[trace] options transform trace files; served requests have none: remove the trace.* keys from \
             the config and --set flags",
        );
    }
    Ok(())
}
