//! The trace flags shared by `lamina run`, `lamina trace stats` and `lamina trace convert`:
//! one clap definition, mapped onto the `[trace]` keys of the run config, so a flag and
//! its key can never drift apart (and an error's remedy names both).

use std::ffi::OsStr;
use std::marker::PhantomData;
use std::str::FromStr;

use anyhow::Context as _;
use clap::Args;
use clap::builder::{PossibleValue, TypedValueParser};

use lamina_engine::trace::{
    BlkparseEvent, CapacityPolicy, GenericMapping, OnError, OutlierPolicy, TimeScale, TraceFormat,
    TraceOptions, parse_bytes,
};

/// A value parser for a type with `FromStr` whose accepted names are listed in
/// `--help` (aliases the type accepts still parse).
#[derive(Clone)]
pub struct Named<T> {
    names: Vec<&'static str>,
    _t: PhantomData<fn() -> T>,
}

impl<T> Named<T> {
    fn new(names: impl IntoIterator<Item = &'static str>) -> Named<T> {
        Named { names: names.into_iter().collect(), _t: PhantomData }
    }
}

impl<T> TypedValueParser for Named<T>
where
    T: FromStr<Err = String> + Clone + Send + Sync + 'static,
{
    type Value = T;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<T, clap::Error> {
        let text = value.to_string_lossy();
        text.parse().map_err(|e: String| {
            let flag = arg.map_or_else(|| "value".to_owned(), |a| a.to_string());
            clap::Error::raw(clap::error::ErrorKind::InvalidValue, format!("invalid value for {flag}: {e}\n"))
                .with_cmd(cmd)
        })
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(self.names.iter().map(|n| PossibleValue::new(*n))))
    }
}

/// `--format`, `--to`: every trace format, names from [`TraceFormat::ALL`].
fn format_parser() -> Named<TraceFormat> {
    Named::new(TraceFormat::ALL.iter().map(|f| f.name()))
}

/// `trace gen --format`, `trace convert --to`: the formats with a writer (all but
/// `generic`, whose layout is the user's).
pub fn writable_format_parser() -> Named<TraceFormat> {
    Named::new(TraceFormat::ALL.iter().filter(|f| **f != TraceFormat::Generic).map(|f| f.name()))
}

fn capacity_parser() -> Named<CapacityPolicy> {
    Named::new(["wrap", "reject"])
}

fn on_error_parser() -> Named<OnError> {
    Named::new(["fail", "skip"])
}

fn blkparse_parser() -> Named<BlkparseEvent> {
    Named::new(["auto", "q", "d"])
}

fn outliers_parser() -> Named<OutlierPolicy> {
    Named::new(["warn", "cut", "clamp"])
}

/// Byte counts: `4096`, `4k`, `64GiB`.
pub fn byte_arg(s: &str) -> Result<u64, String> {
    parse_bytes(s)
}

/// How a trace is read: the `[trace]` table as flags.
#[derive(Args, Debug, Default, Clone)]
#[command(next_help_heading = "Trace options (the [trace] config keys)")]
pub struct TraceArgs {
    /// Trace format (`trace.format`; default: sniff the first lines).
    #[arg(long, value_parser = format_parser())]
    pub format: Option<TraceFormat>,
    /// Column mapping for --format generic (`trace.generic`), e.g.
    /// "delim=comma skip=1 time=1:s op=3:R/W offset=5:byte size=6:byte device=4".
    #[arg(long, value_name = "SPEC")]
    pub generic: Option<GenericMapping>,
    /// Keep the trace's own timestamps (`trace.rebase = false`; default: rebase to the
    /// first request).
    #[arg(long)]
    pub no_rebase: bool,
    /// Multiply timestamps by this exact factor (`trace.time_scale`; 0.5, 1/2 or 5e-1 = twice as fast).
    #[arg(long, value_name = "X")]
    pub time_scale: Option<TimeScale>,
    /// Keep only this device (`trace.devices`; repeatable).
    #[arg(long = "device", value_name = "ID")]
    pub devices: Vec<u32>,
    /// Fold all devices into device 0 (`trace.fold_devices`).
    #[arg(long)]
    pub fold_devices: bool,
    /// With --fold-devices: address stride between devices (`trace.fold_stride_bytes`,
    /// e.g. 64GiB; default 0 = overlay).
    #[arg(long, value_name = "BYTES", value_parser = byte_arg)]
    pub fold_stride: Option<u64>,
    /// Requests beyond the logical capacity: wrap (modulo, as SSDsim) or reject
    /// (`trace.beyond_capacity`).
    #[arg(long, value_name = "POLICY", value_parser = capacity_parser())]
    pub beyond_capacity: Option<CapacityPolicy>,
    /// Drop this many requests first (`trace.skip`).
    #[arg(long, value_name = "N")]
    pub skip: Option<u64>,
    /// Read at most this many requests (`trace.limit`).
    #[arg(long, value_name = "N")]
    pub limit: Option<u64>,
    /// Align requests outward to this many bytes (`trace.align_bytes`; 512 = sectors).
    #[arg(long, value_name = "BYTES", value_parser = byte_arg)]
    pub align: Option<u64>,
    /// Requests held to re-order a not-strictly-sorted trace (`trace.reorder_window`;
    /// default 4096, at most 1048576).
    #[arg(long, value_name = "N")]
    pub reorder_window: Option<u32>,
    /// Bad lines: fail (default) or skip, counted and reported (`trace.on_error`).
    #[arg(long, value_name = "MODE", value_parser = on_error_parser())]
    pub on_error: Option<OnError>,
    /// With --on-error skip: fail after this many bad lines (`trace.max_errors`; default 1000).
    #[arg(long, value_name = "N")]
    pub max_errors: Option<u64>,
    /// blkparse: the event that marks a request (`trace.blkparse_event`).
    #[arg(long, value_name = "EVENT", value_parser = blkparse_parser())]
    pub blkparse_event: Option<BlkparseEvent>,
    /// Absurd arrival gaps (> 1 h and > 1000 × the 99.9th-percentile gap): warn (default),
    /// cut (drop the requests blamed: the smaller side of the gap, looking ahead up to 1024
    /// requests) or clamp (close the gap to the typical gap) (`trace.outliers`;
    /// docs/traces.md).
    #[arg(long, value_name = "MODE", value_parser = outliers_parser())]
    pub outliers: Option<OutlierPolicy>,
    /// Accept a trace that yields no request (`trace.allow_empty`; default: an error
    /// saying why).
    #[arg(long)]
    pub allow_empty: bool,
}

fn value<T: serde::Serialize>(flag: &str, v: &T) -> anyhow::Result<toml::Value> {
    toml::Value::try_from(v).with_context(|| format!("{flag}: value out of range"))
}

impl TraceArgs {
    /// The `[trace]` keys these flags set, with their values (flags not given set nothing).
    pub fn assignments(&self) -> anyhow::Result<Vec<(&'static str, toml::Value)>> {
        let mut a = Vec::new();
        if let Some(f) = self.format {
            a.push(("format", toml::Value::String(f.name().to_owned())));
        }
        if let Some(g) = &self.generic {
            a.push(("generic", value("--generic", g)?));
        }
        if self.no_rebase {
            a.push(("rebase", toml::Value::Boolean(false)));
        }
        if let Some(t) = &self.time_scale {
            a.push(("time_scale", value("--time-scale", t)?));
        }
        if !self.devices.is_empty() {
            a.push(("devices", value("--device", &self.devices)?));
        }
        if self.fold_devices {
            a.push(("fold_devices", toml::Value::Boolean(true)));
        }
        // A config value is a TOML integer (at most 2^63 - 1) and some keys are narrower:
        // a flag's value beyond its key's range is bad input naming the flag, caught here
        // rather than as a type error blamed on the `--set` the flag turns into.
        let mut num = |key: &'static str, flag: &str, v: Option<u64>, max: u64| -> anyhow::Result<()> {
            if let Some(v) = v {
                if v > max {
                    return Err(crate::exit::usage(format!("{flag} {v}: out of range (at most {max})")));
                }
                a.push((key, value(flag, &v)?));
            }
            Ok(())
        };
        let toml_max = i64::MAX as u64;
        num("fold_stride_bytes", "--fold-stride", self.fold_stride, toml_max)?;
        num("skip", "--skip", self.skip, toml_max)?;
        num("limit", "--limit", self.limit, toml_max)?;
        num("align_bytes", "--align", self.align, u64::from(u32::MAX))?;
        num("reorder_window", "--reorder-window", self.reorder_window.map(u64::from), toml_max)?;
        num("max_errors", "--max-errors", self.max_errors, toml_max)?;
        if let Some(p) = &self.beyond_capacity {
            a.push(("beyond_capacity", value("--beyond-capacity", p)?));
        }
        if let Some(e) = &self.on_error {
            a.push(("on_error", value("--on-error", e)?));
        }
        if let Some(e) = &self.blkparse_event {
            a.push(("blkparse_event", value("--blkparse-event", e)?));
        }
        if let Some(o) = &self.outliers {
            a.push(("outliers", value("--outliers", o)?));
        }
        if self.allow_empty {
            a.push(("allow_empty", toml::Value::Boolean(true)));
        }
        Ok(a)
    }

    /// The `--set trace.KEY=VALUE` assignments these flags stand for (what `lamina run`
    /// applies over the config files).
    pub fn config_sets(&self) -> anyhow::Result<Vec<String>> {
        Ok(self.assignments()?.into_iter().map(|(k, v)| format!("trace.{k}={v}")).collect())
    }

    /// The trace options these flags describe over the defaults, validated.
    pub fn options(&self) -> anyhow::Result<TraceOptions> {
        let table: toml::Table = self.assignments()?.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
        let o: TraceOptions = toml::Value::Table(table)
            .try_into()
            .map_err(|e: toml::de::Error| crate::exit::usage(e.to_string()))?;
        o.validate()?;
        Ok(o)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct T {
        #[command(flatten)]
        t: TraceArgs,
    }

    /// Every flag lands on its `[trace]` key: the options `trace stats` builds and the
    /// config `lamina run` builds from the same flags are equal.
    #[test]
    fn flags_map_onto_the_trace_keys_the_same_way_for_stats_and_run() {
        let t = T::parse_from([
            "x",
            "--format",
            "generic",
            "--generic",
            "delim=comma time=1:ms op=2:R/W offset=3 size=4 device=5",
            "--no-rebase",
            "--time-scale",
            "1/2",
            "--device",
            "3",
            "--device",
            "4",
            "--fold-devices",
            "--fold-stride",
            "1GiB",
            "--beyond-capacity",
            "reject",
            "--skip",
            "2",
            "--limit",
            "10",
            "--align",
            "512",
            "--reorder-window",
            "99",
            "--on-error",
            "skip",
            "--max-errors",
            "7",
            "--blkparse-event",
            "d",
        ])
        .t;
        let o = t.options().unwrap();
        assert_eq!(o.format, Some(TraceFormat::Generic));
        assert!(!o.rebase);
        assert_eq!((o.time_scale.num, o.time_scale.den), (1, 2));
        assert_eq!(o.devices, vec![3, 4]);
        assert!(o.fold_devices);
        assert_eq!(o.fold_stride_bytes, 1 << 30);
        assert_eq!(o.beyond_capacity, CapacityPolicy::Reject);
        assert_eq!((o.skip, o.limit, o.align_bytes, o.reorder_window), (2, Some(10), 512, 99));
        assert_eq!((o.on_error, o.max_errors, o.blkparse_event), (OnError::Skip, 7, BlkparseEvent::D));
        let mut b = lamina_engine::config::ConfigBuilder::new().preset("mbm").unwrap();
        for s in t.config_sets().unwrap() {
            b = b.set(&s).unwrap();
        }
        assert_eq!(b.build().unwrap().trace, o);
        assert_eq!(T::parse_from(["x"]).t.options().unwrap(), TraceOptions::default());
    }

    #[test]
    fn bad_combinations_are_errors() {
        let t = TraceArgs { format: Some(TraceFormat::Generic), ..TraceArgs::default() };
        assert!(t.options().is_err());
        let t = TraceArgs { fold_stride: Some(4096), ..TraceArgs::default() };
        assert!(t.options().is_err());
        assert!(T::try_parse_from(["x", "--format", "nope"]).is_err());
        // Aliases still parse though only canonical names are listed.
        assert_eq!(T::parse_from(["x", "--format", "msr-csv"]).t.format, Some(TraceFormat::Msr));
    }
}
