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
    /// TCP address to listen on [default: 127.0.0.1:10809] (port 0 picks a free port; the
    /// bound address is printed). Not with --unix.
    #[arg(long, value_name = "IP:PORT")]
    listen: Option<SocketAddr>,
    /// Listen on this Unix socket instead of TCP (the path must not exist). Not with
    /// --listen.
    #[arg(long, value_name = "PATH")]
    unix: Option<PathBuf>,
    /// Paced mode: delay each reply until its simulated completion time in wall-clock
    /// time (default: virtual mode, reply as soon as the completion is simulated).
    #[arg(long)]
    pace: bool,
    /// Keep serving after the last client disconnects (stop with SIGINT / Ctrl-C).
    #[arg(long)]
    persist: bool,
    /// Keep the served data in this file instead of memory (created if missing, extended
    /// to the export; a longer file is refused). Data it already holds is served and
    /// counts as written: its pages are mapped before serving, so reads of it cost flash
    /// reads (not with --record).
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

/// Where `lamina serve` listens without --listen or --unix.
const DEFAULT_LISTEN: &str = "127.0.0.1:10809";

/// Where to listen: --unix, --listen, or the default; both flags is bad input. (Checked
/// here rather than by clap's `conflicts_with`, whose message does not say the two
/// flags are alternatives, nor which to keep.)
fn listen(args: &ServeArgs) -> anyhow::Result<Listen> {
    match (&args.unix, args.listen) {
        (Some(p), Some(a)) => Err(Failure::new(
            Kind::Usage,
            format!(
                "--unix {} and --listen {a} are mutually exclusive: a server listens on a Unix socket \
                 or on a TCP address, not both; keep one of them",
                p.display()
            ),
        )
        .into()),
        (Some(p), None) => Ok(Listen::Unix(p.clone())),
        (None, a) => Ok(Listen::Tcp(a.unwrap_or_else(|| DEFAULT_LISTEN.parse().expect("a valid address")))),
    }
}

/// Run `lamina serve`.
pub fn serve(args: ServeArgs) -> anyhow::Result<()> {
    let listen = listen(&args)?;
    // Every output path first: a bad one must not cost a session.
    let json_out = args.output.json.as_deref().map(OutputFile::create).transpose()?;
    let mut log_out = args.output.latency_log.as_deref().map(OutputFile::create).transpose()?;
    let mut record_out = args.record.as_deref().map(OutputFile::create).transpose()?;
    let config_out = args.record.as_deref().map(|p| OutputFile::create(&config_path(p))).transpose()?;
    let (cfg, sources, origins) = args.device.config_with_origins(SERVE_DEFAULTS, Vec::new())?;
    check_servable(&cfg)?;
    let mut builder = SimulationBuilder::new(cfg.clone());
    if let Some(f) = log_out.as_mut() {
        builder = builder.latency_log(LatencyLog::new(f.stream()?));
    }
    let mut sim = builder
        .build()
        .map_err(|e| crate::run_cmd::locate_memory_refusal(&origins, e.into(), cfg.preset.as_deref()))?;
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
        log: Some(|m| eprintln!("lamina serve: {m}")),
    };
    let server = Server::bind(sim, &listen, opts).map_err(|e| Failure::new(Kind::Usage, e.to_string()))?;
    if let Some(b) = &args.backing
        && server.held_pages() > 0
    {
        eprintln!(
            "lamina serve: --backing {}: {} logical pages already hold data; they are mapped as written \
             before serving, so reads of them cost flash reads",
            b.display(),
            server.held_pages()
        );
    }
    eprintln!(
        "lamina serve: listening on {} (export \"\" or \"lamina\", {} bytes, {} mode); {}",
        server.local_addr(),
        server.export_bytes(),
        if args.pace { "paced" } else { "virtual" },
        if args.persist {
            "stop with Ctrl-C"
        } else {
            "stops when the last client disconnects (after at least one completed the NBD handshake) or on Ctrl-C"
        }
    );
    let addr = server.local_addr().to_owned();
    let mut served = server.serve()?;
    eprintln!("{}", served_summary(&served));
    let mut report = served.sim.report(trace_info(&served, &addr, &args));
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
fn trace_info(served: &Served, addr: &str, args: &ServeArgs) -> TraceInfo {
    let c = &served.counts;
    let record = args.record.as_deref();
    let mut warnings = Vec::new();
    if let Some(b) = &args.backing
        && served.held_pages > 0
    {
        warnings.push(format!(
            "--backing {} held data in {} logical pages before serving; they were mapped as written \
             (untimed) first, so reads of them hit flash",
            b.display(),
            served.held_pages
        ));
    }
    if served.error_replies > 0 {
        warnings.push(format!(
            "{} invalid requests were answered with an error and not simulated",
            served.error_replies
        ));
    }
    let requests = c.reads + c.writes + c.trims;
    if requests == 0 {
        warnings.push(format!("no requests were served ({}): every figure below is empty", sessions(served)));
    }
    TraceInfo {
        name: match record {
            Some(p) => format!("served over NBD at {addr} (recorded in {})", p.display()),
            None => format!("served over NBD at {addr}"),
        },
        format: "nbd".into(),
        // Served requests come from no file, so there is nothing to digest; the record,
        // when there is one, is the trace whose replay gets a digest.
        digest: "none (served, not read from a file)".into(),
        requests,
        warnings,
        ..TraceInfo::default()
    }
}

/// Client sessions and connections, in words.
fn sessions(s: &Served) -> String {
    let probes = s.connections - s.sessions;
    let mut words = format!("{} client sessions", s.sessions);
    if probes > 0 {
        words.push_str(&format!(
            "; {probes} of {} connections ended before completing the NBD handshake",
            s.connections
        ));
    }
    words
}

/// One line on what was served.
fn served_summary(s: &Served) -> String {
    let c = &s.counts;
    if c.reads + c.writes + c.trims + c.flushes + s.error_replies == 0 {
        return format!("lamina serve: no requests were served ({})", sessions(s));
    }
    let mut line = format!(
        "lamina serve: {}; {} reads, {} writes, {} trims, {} flushes simulated; {} invalid requests answered with an error",
        sessions(s),
        c.reads,
        c.writes,
        c.trims,
        c.flushes,
        s.error_replies
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
