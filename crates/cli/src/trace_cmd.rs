//! `lamina trace …`: trace statistics, generation and conversion.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};

use lamina_engine::trace::stats::{StatsAccumulator, TraceStats};
use lamina_engine::trace::write::{TraceWriter, WriteError};
use lamina_engine::trace::{
    Arrival, GenConfig, Generator, IoRequest, Pattern, SizeDist, TraceError, TraceFormat, TraceOptions,
    TraceParser, TraceReader, TraceSummary, closed_loop_comment,
};

use crate::exit::usage;
use crate::out::{self, OutputFile};
use crate::trace_args::{TraceArgs, byte_arg, writable_format_parser};

/// Trace subcommands.
#[derive(Subcommand, Debug)]
pub enum TraceCmd {
    /// Print statistics of a trace: requests, read %, mean sizes, span, footprint,
    /// devices, sequential share.
    #[command(after_help = crate::exit::EXIT_CODES_HELP)]
    Stats(StatsArgs),
    /// Generate a deterministic synthetic trace.
    #[command(after_help = crate::exit::EXIT_CODES_HELP)]
    Gen(GenArgs),
    /// Convert a trace to another format (transforms applied).
    #[command(after_help = crate::exit::EXIT_CODES_HELP)]
    Convert(ConvertArgs),
}

/// The logical capacity `--beyond-capacity` wraps at or rejects beyond (`lamina run`
/// uses the simulated device's instead).
#[derive(Args, Debug, Default)]
pub struct CapacityArg {
    /// Logical capacity for --beyond-capacity (default: unbounded).
    #[arg(long, value_name = "BYTES", value_parser = byte_arg)]
    capacity: Option<u64>,
}

impl CapacityArg {
    /// The options `opts` describe and the logical capacity.
    fn resolve(&self, opts: &TraceArgs) -> anyhow::Result<(TraceOptions, u64)> {
        if opts.beyond_capacity.is_some() && self.capacity.is_none() {
            return Err(usage("--beyond-capacity needs --capacity"));
        }
        Ok((opts.options()?, self.capacity.unwrap_or(u64::MAX)))
    }
}

/// Arguments of `lamina trace stats`.
#[derive(Args, Debug)]
pub struct StatsArgs {
    /// The trace file (plain, gzip, bzip2, zstd or tar).
    trace: PathBuf,
    /// Print JSON (summary, statistics and the options used).
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    capacity: CapacityArg,
    #[command(flatten)]
    opts: TraceArgs,
}

/// Arguments of `lamina trace gen`.
#[derive(Args, Debug)]
pub struct GenArgs {
    /// Number of requests.
    #[arg(long, value_name = "N")]
    requests: u64,
    /// Poisson arrivals at this rate (IOPS, may be fractional or like 1e4): at most 1e9
    /// (a mean gap of 1 ns), and at least what keeps N requests' arrivals within the
    /// 64-bit nanosecond clock (the error names the range).
    #[arg(
        long,
        value_name = "IOPS",
        conflicts_with = "closed_loop",
        required_unless_present = "closed_loop"
    )]
    rate: Option<String>,
    /// Closed loop: every arrival at time 0 (the replay's queue depth paces it). The
    /// file starts with `# lamina-trace-gen: host.mode=closed host.closed_loop_depth=N`,
    /// and `lamina run` warns when it replays such a trace open-loop.
    #[arg(long)]
    closed_loop: bool,
    /// With --closed-loop: the queue depth the trace is meant to be replayed at.
    #[arg(long, value_name = "N", default_value_t = 32, requires = "closed_loop")]
    closed_loop_depth: u32,
    /// Fraction of reads: 0.7 or 70%.
    #[arg(long, value_name = "R", default_value = "0.5")]
    read_ratio: String,
    /// Sizes: 4k (fixed), 4k-64k (uniform range, step gcd(min,max,4k)), 4k,8k,16k (uniform set),
    /// or empirical:FILE (lines `SIZE WEIGHT`).
    #[arg(long, value_name = "SPEC", default_value = "4k")]
    sizes: String,
    /// Sizes of writes, when they differ from reads (same syntax as --sizes, which then
    /// gives the reads' sizes), e.g. `--sizes 40k --write-sizes 8k-12k`.
    #[arg(long, value_name = "SPEC")]
    write_sizes: Option<String>,
    /// Address pattern: uniform, seq:K (K sequential streams), zipf:THETA, or mix:F:K:uniform / mix:F:K:zipf:THETA (a share F of the requests continue K sequential streams, the rest random)
    #[arg(long, value_name = "PATTERN", default_value = "uniform")]
    pattern: Pattern,
    /// Address space used, from offset 0.
    #[arg(long, value_name = "BYTES", value_parser = byte_arg, default_value = "16GiB")]
    footprint: u64,
    /// PRNG seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Device id of every request.
    #[arg(long, default_value_t = 0)]
    device: u32,
    /// Output format (any writable format; ssdsim and mqsim are the usual).
    #[arg(long, default_value = "ssdsim", value_parser = writable_format_parser())]
    format: TraceFormat,
    /// Output file (`-` = standard output).
    #[arg(short, long, value_name = "FILE")]
    output: PathBuf,
}

/// Arguments of `lamina trace convert`.
#[derive(Args, Debug)]
pub struct ConvertArgs {
    /// Input trace.
    input: PathBuf,
    /// Output format.
    #[arg(long, default_value = "ssdsim", value_parser = writable_format_parser())]
    to: TraceFormat,
    /// Output file (`-` = standard output).
    #[arg(short, long, value_name = "FILE")]
    output: PathBuf,
    #[command(flatten)]
    capacity: CapacityArg,
    #[command(flatten)]
    opts: TraceArgs,
}

/// Run a trace subcommand.
pub fn run(cmd: TraceCmd) -> anyhow::Result<()> {
    match cmd {
        TraceCmd::Stats(a) => out::print(&stats(&a)?),
        TraceCmd::Gen(a) => gen_trace(&a),
        TraceCmd::Convert(a) => convert(&a),
    }
}

/// Open a trace, telling standard error at once what the reader already wants a human
/// to know (a format detection that was a guess between formats), so it is seen even
/// if reading fails later.
fn open_trace(path: &Path, opts: &TraceOptions, cap: u64) -> anyhow::Result<TraceReader> {
    let reader = TraceReader::open(path, opts, cap)?;
    for w in &reader.summary().warnings {
        eprintln!("warning: {w}");
    }
    Ok(reader)
}

fn stats(a: &StatsArgs) -> anyhow::Result<String> {
    let (opts, cap) = a.capacity.resolve(&a.opts)?;
    let mut reader = open_trace(&a.trace, &opts, cap)?;
    let mut acc = StatsAccumulator::new();
    for r in reader.by_ref() {
        acc.add(&r?);
    }
    let summary = reader.summary();
    let st = acc.finish();
    if a.json {
        let v = serde_json::json!({ "summary": summary, "stats": st, "options": opts });
        return Ok(serde_json::to_string_pretty(&v)? + "\n");
    }
    Ok(render(&summary, &st))
}

fn render(s: &TraceSummary, st: &TraceStats) -> String {
    let mut o = String::new();
    let mut line = |k: &str, v: String| o.push_str(&format!("{k:<12}{v}\n"));
    line("trace", s.file.clone());
    line(
        "format",
        format!(
            "{} ({}), compression {}{}",
            s.format,
            if s.format_detected { "detected" } else { "given" },
            s.compression,
            if s.tar { ", tar" } else { "" }
        ),
    );
    line("lines", format!("{} ({} ignored, {} bytes)", s.lines, s.ignored_lines, s.bytes));
    line("requests", st.requests.to_string());
    line("reads", format!("{} ({:.2} %), average {:.1} KiB", st.reads, st.read_percent, st.avg_read_kib));
    let write_pct = if st.requests == 0 { 0.0 } else { 100.0 * st.writes as f64 / st.requests as f64 };
    line("writes", format!("{} ({:.2} %), average {:.1} KiB", st.writes, write_pct, st.avg_write_kib));
    if st.trims > 0 {
        line("trims", format!("{} ({} bytes)", st.trims, st.trim_bytes));
    }
    line("span", format!("{:.6} s", st.span_ns as f64 / 1e9));
    line(
        "footprint",
        format!(
            "{} blocks of 4 KiB ({:.3} GiB)",
            st.footprint_blocks,
            st.footprint_bytes as f64 / (1u64 << 30) as f64
        ),
    );
    let ids: Vec<String> = st.devices.iter().take(16).map(u32::to_string).collect();
    let more = if st.devices.len() > 16 { ", …" } else { "" };
    line("devices", format!("{} ({}{more})", st.devices.len(), ids.join(", ")));
    line("sequential", format!("{:.2} %", st.sequential_percent));
    if s.filtered_device + s.skipped_by_option + s.wrapped > 0 {
        line(
            "transforms",
            format!(
                "{} filtered by device, {} skipped, {} wrapped",
                s.filtered_device, s.skipped_by_option, s.wrapped
            ),
        );
    }
    if s.errors_skipped > 0 {
        let reasons: Vec<String> = s.skipped_reasons.iter().map(|(k, v)| format!("{k} {v}")).collect();
        line("bad lines", format!("{} skipped ({})", s.errors_skipped, reasons.join(", ")));
        for e in &s.first_errors {
            line("", e.clone());
        }
    }
    for w in &s.warnings {
        line("warning", w.clone());
    }
    line("digest", s.digest.clone());
    o
}

/// A `--sizes` / `--write-sizes` value (`flag` names which): a distribution, or
/// `empirical:FILE`, checked here so that its errors name the flag and the value.
fn size_dist(flag: &str, spec: &str) -> anyhow::Result<SizeDist> {
    let dist = match spec.strip_prefix("empirical:") {
        Some(path) => {
            // A missing or unreadable histogram is bad input (exit 2), like a missing trace.
            let text = std::fs::read_to_string(path).map_err(|e| {
                usage(format!(
                    "{flag} {spec}: cannot read the size histogram {path}: {e} (give an existing file of                      `SIZE WEIGHT` lines, or a size spec such as 4k-64k)"
                ))
            })?;
            // Its errors name the line, not the file (new-user trial: "histogram line 4: …").
            SizeDist::from_histogram(&text).map_err(|e| usage(format!("{flag} {spec}: {path}: {e}")))?
        }
        None => SizeDist::parse(spec).map_err(|e| usage(format!("{flag} {spec}: {e}")))?,
    };
    dist.validate()
        .map_err(|e| usage(format!("{flag} {spec}: {e} (e.g. 4k, 4k-64k, 4k,8k,16k or empirical:FILE)")))?;
    Ok(dist)
}

fn gen_trace(a: &GenArgs) -> anyhow::Result<()> {
    let sizes = size_dist("--sizes", &a.sizes)?;
    let write_sizes = a.write_sizes.as_deref().map(|w| size_dist("--write-sizes", w)).transpose()?;
    if a.requests == 0 {
        return Err(usage("--requests 0: a trace needs at least one request (valid: 1 or more)"));
    }
    let arrival = match (&a.rate, a.closed_loop) {
        (Some(r), false) => {
            let arrival = Arrival::poisson(r).map_err(|e| usage(format!("--rate {r}: {e}")))?;
            arrival.check(a.requests).map_err(|e| usage(format!("--rate {r}: {e}")))?;
            arrival
        }
        (None, true) if a.closed_loop_depth == 0 => {
            return Err(usage(
                "--closed-loop-depth 0: a closed loop needs at least one request outstanding (valid: 1 to 4294967295)",
            ));
        }
        (None, true) => Arrival::ClosedLoop,
        _ => return Err(usage("give exactly one of --rate IOPS and --closed-loop")),
    };
    let cfg = GenConfig {
        requests: a.requests,
        arrival,
        read_ppm: GenConfig::parse_read_ratio(&a.read_ratio)
            .map_err(|e| usage(format!("--read-ratio {}: {e} (e.g. 0.7 or 70%)", a.read_ratio)))?,
        sizes,
        write_sizes,
        pattern: a.pattern.clone(),
        footprint_bytes: a.footprint,
        seed: a.seed,
        device: a.device,
    };
    let generator = Generator::new(cfg).map_err(|e| match e {
        // The sizes and the read ratio were checked above; what is left is the footprint
        // against the sizes (and the rate, whose message names it).
        lamina_trace::GenError::Footprint { .. } => usage(format!(
            "--footprint: {e}; give a --footprint of at least the largest request, or smaller --sizes"
        )),
        e => usage(e.to_string()),
    })?;
    let out = OutputFile::create(&a.output)?;
    let comment = a.closed_loop.then(|| closed_loop_comment(a.closed_loop_depth));
    if comment.is_some() && !a.format.comments() {
        eprintln!(
            "warning: {} has no comment lines, so the trace cannot say it is meant for closed-loop replay; \
             replay it with --set host.mode=closed --set host.closed_loop_depth={}",
            a.format, a.closed_loop_depth
        );
    }
    let comment = comment.filter(|_| a.format.comments());
    write_trace(out, &a.output, a.format, comment.as_deref(), generator.map(Ok), &|_| None)
}

/// Write `requests` in `format` to `out` (prepared before the first request is read;
/// put in place only when all were written). `place_of(i)` says where request `i`
/// (0-based) came from in an input trace, for the error of a request the format cannot
/// represent.
fn write_trace<I>(
    mut out: OutputFile,
    path: &Path,
    format: TraceFormat,
    comment: Option<&str>,
    requests: I,
    place_of: &dyn Fn(u64) -> Option<String>,
) -> anyhow::Result<()>
where
    I: Iterator<Item = Result<IoRequest, TraceError>>,
{
    let fail = |e| write_failure(e, path, place_of);
    let mut w = TraceWriter::with_comment(BufWriter::new(out.writer()), format, comment).map_err(fail)?;
    for r in requests {
        w.write(&r?).map_err(fail)?;
    }
    w.finish().map_err(fail)?.flush().map_err(|e| fail(WriteError::Io(e)))?;
    out.commit()
}

/// A failed trace write: an unrepresentable request is bad input (with the input line it
/// came from, when `place_of` knows it); a closed standard output ends the command
/// quietly.
fn write_failure(e: WriteError, path: &Path, place_of: &dyn Fn(u64) -> Option<String>) -> anyhow::Error {
    match e {
        WriteError::Io(e) if path.as_os_str() == "-" => out::stdout_error(e),
        WriteError::Io(e) => anyhow::Error::new(e).context(format!("writing {}", path.display())),
        WriteError::Unrepresentable { index, .. } => match place_of(index) {
            Some(place) => usage(format!("{e}; it comes from {place}")),
            None => usage(e.to_string()),
        },
        other => usage(other.to_string()),
    }
}

/// Where request `index` (0-based, after the transforms) of `input` comes from: the
/// trace parsed again on this thread up to that request (only on an error's path, so
/// the conversion itself keeps its parsing thread). `None` for a pipe, which cannot be
/// read twice, or if the second pass fails.
fn input_place(input: &Path, opts: &TraceOptions, cap: u64, index: u64) -> Option<String> {
    if lamina_engine::trace::is_stream(input).unwrap_or(true) {
        return None;
    }
    let mut p = TraceParser::open(input, opts, cap).ok()?;
    for _ in 0..=index {
        p.next()?.ok()?;
    }
    p.last_request_place()
}

/// Convert a trace. A generated trace's `# lamina-trace-gen:` declaration (closed-loop
/// replay at a depth) is carried over verbatim, or, if the target format cannot hold it
/// or it came after the first request, a warning names the `--set`s to replay with:
/// dropping it silently made a converted closed-loop trace replay open-loop.
fn convert(a: &ConvertArgs) -> anyhow::Result<()> {
    let (opts, cap) = a.capacity.resolve(&a.opts)?;
    let out = OutputFile::create(&a.output)?;
    let mut reader = open_trace(&a.input, &opts, cap)?;
    let declaration = reader.declaration().map(str::to_owned);
    if declaration.is_some() && !a.to.comments() {
        eprintln!(
            "warning: {}: {} has no comment lines, so the converted trace cannot carry its `# {}` line; {}",
            a.input.display(),
            a.to,
            lamina_engine::trace::GEN_COMMENT,
            replay_with(&reader.summary())
        );
    }
    let comment = declaration.filter(|_| a.to.comments());
    let carried = comment.is_some();
    let place_of = |i| input_place(&a.input, &opts, cap, i);
    write_trace(out, &a.output, a.to, comment.as_deref(), reader.by_ref(), &place_of)?;
    let summary = reader.summary();
    if !carried && summary.generated_with.is_some() && a.to.comments() {
        eprintln!(
            "warning: {}: its `# {}` line comes after its first request and was not carried over; {}",
            a.input.display(),
            lamina_engine::trace::GEN_COMMENT,
            replay_with(&summary)
        );
    }
    Ok(())
}

/// "replay it with --set K=V …": the `host.` settings a trace's `lamina-trace-gen:` line
/// declares (what `lamina run` would suggest).
fn replay_with(summary: &TraceSummary) -> String {
    let sets: Vec<String> = summary
        .generated_with
        .iter()
        .flatten()
        .filter(|(k, _)| k.starts_with("host."))
        .map(|(k, v)| format!("--set {k}={v}"))
        .collect();
    format!("replay it with {}", sets.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use lamina_engine::trace::CapacityPolicy;

    fn gen_args(output: PathBuf, seed: u64) -> GenArgs {
        GenArgs {
            requests: 3000,
            rate: Some("5000".into()),
            closed_loop: false,
            closed_loop_depth: 32,
            read_ratio: "0.6".into(),
            sizes: "4k-64k".into(),
            write_sizes: None,
            pattern: "zipf:0.9".parse().unwrap(),
            footprint: 1 << 30,
            seed,
            device: 0,
            format: TraceFormat::Mqsim,
            output,
        }
    }

    #[test]
    fn gen_is_deterministic_and_stats_read_it_back() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.trace");
        let b = dir.path().join("b.trace");
        gen_trace(&gen_args(a.clone(), 3)).unwrap();
        gen_trace(&gen_args(b.clone(), 3)).unwrap();
        assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
        let json = stats(&StatsArgs {
            trace: a.clone(),
            json: true,
            capacity: CapacityArg::default(),
            opts: TraceArgs::default(),
        })
        .unwrap();
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(v["stats"]["requests"], 3000);
        let read = v["stats"]["read_percent"].as_f64().unwrap();
        assert!((read - 60.0).abs() < 3.0, "{read}");
        assert_eq!(v["options"]["rebase"], true);
        let text = stats(&StatsArgs {
            trace: a,
            json: false,
            capacity: CapacityArg::default(),
            opts: TraceArgs::default(),
        })
        .unwrap();
        assert!(text.contains("requests    3000\n"), "{text}");
    }

    #[test]
    fn convert_preserves_requests() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("src.trace");
        gen_trace(&gen_args(src.clone(), 9)).unwrap();
        let mut last = src.clone();
        for to in [TraceFormat::Blkparse, TraceFormat::Systor17, TraceFormat::Ssdsim] {
            let out = dir.path().join(format!("out.{to}"));
            convert(&ConvertArgs {
                input: last.clone(),
                to,
                output: out.clone(),
                capacity: CapacityArg::default(),
                opts: TraceArgs::default(),
            })
            .unwrap();
            last = out;
        }
        let orig: Vec<_> = TraceReader::open(&src, &TraceOptions::default(), u64::MAX)
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let back: Vec<_> = TraceReader::open(&last, &TraceOptions::default(), u64::MAX)
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(orig, back);
    }

    #[test]
    fn beyond_capacity_needs_a_capacity() {
        let opts = TraceArgs { beyond_capacity: Some(CapacityPolicy::Reject), ..TraceArgs::default() };
        assert!(CapacityArg::default().resolve(&opts).is_err());
        assert!(CapacityArg { capacity: Some(1 << 20) }.resolve(&opts).is_ok());
    }
}
