//! `lamina trace …`: trace statistics, generation and conversion.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::{Args, Subcommand};

use lamina_engine::trace::stats::{StatsAccumulator, TraceStats};
use lamina_engine::trace::write::TraceWriter;
use lamina_engine::trace::{
    Arrival, BlkparseEvent, CapacityPolicy, GenConfig, Generator, GenericMapping, OnError, OutlierPolicy,
    Pattern, SizeDist, TraceFormat, TraceOptions, TraceReader, TraceSummary, closed_loop_comment,
    parse_bytes,
};

/// Trace subcommands.
#[derive(Subcommand, Debug)]
pub enum TraceCmd {
    /// Print statistics of a trace: requests, read %, mean sizes, span, footprint,
    /// devices, sequential share.
    Stats(StatsArgs),
    /// Generate a deterministic synthetic trace.
    Gen(GenArgs),
    /// Convert a trace to another format (transforms applied).
    Convert(ConvertArgs),
}

/// Options shared by every command that reads a trace (the `[trace]` table).
#[derive(Args, Debug, Default)]
pub struct TraceArgs {
    /// Trace format (default: sniff the first lines): ssdsim, mqsim, msr, spc, flashnet,
    /// flashnet-profile, systor17, tencent, fiu, blkparse, generic.
    #[arg(long)]
    format: Option<TraceFormat>,
    /// Column mapping for --format generic, e.g.
    /// "delim=comma skip=1 time=1:s op=3:R/W offset=5:byte size=6:byte device=4".
    #[arg(long, value_name = "SPEC")]
    generic: Option<GenericMapping>,
    /// Keep the trace's own timestamps (default: rebase to the first request).
    #[arg(long)]
    no_rebase: bool,
    /// Multiply timestamps by this exact factor (0.5 or 1/2 = twice as fast).
    #[arg(long, value_name = "X")]
    time_scale: Option<lamina_engine::trace::TimeScale>,
    /// Keep only this device (repeatable).
    #[arg(long = "device", value_name = "ID")]
    devices: Vec<u32>,
    /// Fold all devices into device 0.
    #[arg(long)]
    fold_devices: bool,
    /// With --fold-devices: address stride between devices (e.g. 64GiB; default 0 = overlay).
    /// Sizes: GiB = 2^30, GB = 10^9, a bare G = GiB (likewise k/K, M, T).
    #[arg(long, value_name = "BYTES", value_parser = byte_arg)]
    fold_stride: Option<u64>,
    /// Logical capacity for --beyond-capacity (default: unbounded); GB = 10^9, GiB = 2^30.
    #[arg(long, value_name = "BYTES", value_parser = byte_arg)]
    capacity: Option<u64>,
    /// Requests beyond the capacity: wrap (modulo, as SSDsim) or reject.
    #[arg(long, value_name = "POLICY")]
    beyond_capacity: Option<CapacityPolicy>,
    /// Drop this many requests first.
    #[arg(long, value_name = "N")]
    skip: Option<u64>,
    /// Read at most this many requests.
    #[arg(long, value_name = "N")]
    limit: Option<u64>,
    /// Align requests outward to this many bytes (512 = sectors).
    #[arg(long, value_name = "BYTES", value_parser = byte_arg)]
    align: Option<u64>,
    /// Requests held to re-order a not-strictly-sorted trace (default 4096).
    #[arg(long, value_name = "N")]
    reorder_window: Option<u32>,
    /// Bad lines: fail (default) or skip (counted and reported).
    #[arg(long, value_name = "MODE")]
    on_error: Option<OnError>,
    /// With --on-error skip: fail after this many bad lines (default 1000).
    #[arg(long, value_name = "N")]
    max_errors: Option<u64>,
    /// blkparse: request event auto, q or d.
    #[arg(long, value_name = "EVENT")]
    blkparse_event: Option<BlkparseEvent>,
    /// Absurd arrival gaps (> 1 h and > 1000 × the 99.9th-percentile gap): warn (default),
    /// cut (drop the request) or clamp (replace the gap by the typical gap).
    #[arg(long, value_name = "MODE")]
    outliers: Option<OutlierPolicy>,
    /// Accept a trace that yields no request (default: an error saying why).
    #[arg(long)]
    allow_empty: bool,
}

fn byte_arg(s: &str) -> Result<u64, String> {
    parse_bytes(s)
}

impl TraceArgs {
    /// The options and the logical capacity these flags describe.
    fn options(&self) -> anyhow::Result<(TraceOptions, u64)> {
        let d = TraceOptions::default();
        let o = TraceOptions {
            format: self.format,
            generic: self.generic.clone(),
            rebase: !self.no_rebase,
            time_scale: self.time_scale.unwrap_or(d.time_scale),
            devices: self.devices.clone(),
            fold_devices: self.fold_devices,
            fold_stride_bytes: self.fold_stride.unwrap_or(0),
            beyond_capacity: self.beyond_capacity.unwrap_or(d.beyond_capacity),
            skip: self.skip.unwrap_or(0),
            limit: self.limit,
            align_bytes: u32::try_from(self.align.unwrap_or(0)).context("--align is at most 4 GiB")?,
            reorder_window: self.reorder_window.unwrap_or(d.reorder_window),
            on_error: self.on_error.unwrap_or(d.on_error),
            max_errors: self.max_errors.unwrap_or(d.max_errors),
            blkparse_event: self.blkparse_event.unwrap_or(d.blkparse_event),
            outliers: self.outliers.unwrap_or(d.outliers),
            allow_empty: self.allow_empty,
        };
        if self.beyond_capacity.is_some() && self.capacity.is_none() {
            bail!("--beyond-capacity needs --capacity");
        }
        o.validate()?;
        Ok((o, self.capacity.unwrap_or(u64::MAX)))
    }
}

/// Arguments of `lamina trace stats`.
#[derive(Args, Debug)]
pub struct StatsArgs {
    /// The trace file (plain, gzip, bzip2, zstd, xz/lzma or tar; `-` = standard input).
    trace: PathBuf,
    /// Print JSON (summary, statistics and the options used).
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    opts: TraceArgs,
}

/// Arguments of `lamina trace gen`.
#[derive(Args, Debug)]
pub struct GenArgs {
    /// Number of requests.
    #[arg(long, value_name = "N")]
    requests: u64,
    /// Poisson arrivals at this rate (IOPS, may be fractional).
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
    /// Address pattern: uniform, seq:K (K sequential streams), zipf:THETA.
    #[arg(long, value_name = "PATTERN", default_value = "uniform")]
    pattern: Pattern,
    /// Address space used, from offset 0 (GiB = 2^30, GB = 10^9, a bare G = GiB).
    #[arg(long, value_name = "BYTES", value_parser = byte_arg, default_value = "16GiB")]
    footprint: u64,
    /// PRNG seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Device id of every request.
    #[arg(long, default_value_t = 0)]
    device: u32,
    /// Output format (any writable format; ssdsim and mqsim are the usual).
    #[arg(long, default_value = "ssdsim")]
    format: TraceFormat,
    /// Output file.
    #[arg(short, long, value_name = "FILE")]
    output: PathBuf,
}

/// Arguments of `lamina trace convert`.
#[derive(Args, Debug)]
pub struct ConvertArgs {
    /// Input trace (`-` = standard input).
    input: PathBuf,
    /// Output format.
    #[arg(long, default_value = "ssdsim")]
    to: TraceFormat,
    /// Output file.
    #[arg(short, long, value_name = "FILE")]
    output: PathBuf,
    #[command(flatten)]
    opts: TraceArgs,
}

/// Run a trace subcommand.
pub fn run(cmd: TraceCmd) -> anyhow::Result<()> {
    match cmd {
        TraceCmd::Stats(a) => {
            let out = stats(&a)?;
            print!("{out}");
            Ok(())
        }
        TraceCmd::Gen(a) => gen_trace(&a),
        TraceCmd::Convert(a) => convert(&a),
    }
}

fn stats(a: &StatsArgs) -> anyhow::Result<String> {
    let (opts, cap) = a.opts.options()?;
    let mut reader = TraceReader::open(&a.trace, &opts, cap)?;
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

fn gen_trace(a: &GenArgs) -> anyhow::Result<()> {
    let sizes = match a.sizes.strip_prefix("empirical:") {
        Some(path) => {
            let text =
                std::fs::read_to_string(path).with_context(|| format!("reading size histogram {path}"))?;
            SizeDist::from_histogram(&text).map_err(anyhow::Error::msg)?
        }
        None => SizeDist::parse(&a.sizes).map_err(anyhow::Error::msg)?,
    };
    let arrival = match (&a.rate, a.closed_loop) {
        (Some(r), false) => Arrival::poisson(r).map_err(anyhow::Error::msg)?,
        (None, true) => Arrival::ClosedLoop,
        _ => bail!("give exactly one of --rate IOPS and --closed-loop"),
    };
    let cfg = GenConfig {
        requests: a.requests,
        arrival,
        read_ppm: GenConfig::parse_read_ratio(&a.read_ratio).map_err(anyhow::Error::msg)?,
        sizes,
        pattern: a.pattern.clone(),
        footprint_bytes: a.footprint,
        seed: a.seed,
        device: a.device,
    };
    let generator = Generator::new(cfg).map_err(anyhow::Error::msg)?;
    let file = File::create(&a.output).with_context(|| format!("creating {}", a.output.display()))?;
    let comment = a.closed_loop.then(|| closed_loop_comment(a.closed_loop_depth));
    if comment.is_some() && !a.format.comments() {
        eprintln!(
            "warning: {} has no comment lines, so the trace cannot say it is meant for closed-loop replay; \
             replay it with --set host.mode=closed --set host.closed_loop_depth={}",
            a.format, a.closed_loop_depth
        );
    }
    let comment = comment.filter(|_| a.format.comments());
    let mut w = TraceWriter::with_comment(BufWriter::new(file), a.format, comment.as_deref())?;
    for r in generator {
        w.write(&r)?;
    }
    w.finish()?.flush()?;
    Ok(())
}

fn convert(a: &ConvertArgs) -> anyhow::Result<()> {
    let (opts, cap) = a.opts.options()?;
    let reader = TraceReader::open(&a.input, &opts, cap)?;
    let file = File::create(&a.output).with_context(|| format!("creating {}", a.output.display()))?;
    let mut w = TraceWriter::new(BufWriter::new(file), a.to)?;
    for r in reader {
        w.write(&r?)?;
    }
    w.finish()?.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gen_args(output: PathBuf, seed: u64) -> GenArgs {
        GenArgs {
            requests: 3000,
            rate: Some("5000".into()),
            closed_loop: false,
            closed_loop_depth: 32,
            read_ratio: "0.6".into(),
            sizes: "4k-64k".into(),
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
        let json = stats(&StatsArgs { trace: a.clone(), json: true, opts: TraceArgs::default() }).unwrap();
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(v["stats"]["requests"], 3000);
        let read = v["stats"]["read_percent"].as_f64().unwrap();
        assert!((read - 60.0).abs() < 3.0, "{read}");
        assert_eq!(v["options"]["rebase"], true);
        let text = stats(&StatsArgs { trace: a, json: false, opts: TraceArgs::default() }).unwrap();
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
    fn bad_flags_are_errors() {
        let args = TraceArgs { beyond_capacity: Some(CapacityPolicy::Reject), ..TraceArgs::default() };
        assert!(args.options().is_err());
        let args = TraceArgs { format: Some(TraceFormat::Generic), ..TraceArgs::default() };
        assert!(args.options().is_err());
    }
}
