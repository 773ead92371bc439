//! The run configuration: one TOML document composed of each crate's config section,
//! with presets, `--set key=value` overrides and errors that name the key.
//!
//! ```toml
//! preset = "mbm"           # base NAND device; [nand] keys below override it
//! seed = 42
//! [nand.timing]
//! t_r = "60us"
//! [ftl]
//! overprovisioning = 0.1
//! [buffer]
//! size_bytes = 67108864
//! [host]
//! queue_depth = 32
//! [sched]
//! arbiter = "read-first"
//! [trace]
//! time_scale = 1.0
//! [stats]
//! percentiles = [50, 95, 99, 99.9, 99.99, 99.999]
//! ```

use serde::{Deserialize, Serialize};

use lamina_ftl::{FtlConfig, PreconditionConfig};
use lamina_nand_model::{NandConfig, Nanos};
use lamina_sched::{ArbiterKind, GcMode, LacrParams, McsParams, PlacementKind, SchedulerKind};

use crate::trace::TraceOptions;

/// Most transactions one flash command serves: the bound of `sched.multiplane_width`
/// and of the SOML parts the `soml` scheduler coalesces.
pub const MAX_COMMAND_TXNS: usize = 16;

/// The whole run configuration.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimConfig {
    /// Name of the NAND preset this config was based on (informational once resolved).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preset: Option<String>,
    /// Seed of every pseudo-random choice (preconditioning, tie-breaks).
    #[serde(default)]
    pub seed: u64,
    /// The NAND device.
    pub nand: NandConfig,
    /// The flash translation layer.
    #[serde(default)]
    pub ftl: FtlConfig,
    /// The DRAM write buffer.
    #[serde(default)]
    pub buffer: BufferConfig,
    /// The host interface.
    #[serde(default)]
    pub host: HostConfig,
    /// Placement and scheduling policies.
    #[serde(default)]
    pub sched: SchedConfig,
    /// Trace reading and transforms.
    #[serde(default)]
    pub trace: TraceOptions,
    /// What the report measures (omitted from the resolved config while it is the
    /// default, so run keys of existing sweeps stay the same).
    #[serde(default, skip_serializing_if = "StatsConfig::is_default")]
    pub stats: StatsConfig,
    /// Optional fast-forward preconditioning before the replay.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precondition: Option<PreconditionConfig>,
    /// Micropages-style remapping (omitted from the resolved config while it is the
    /// default, off). See docs/policies.md, "Remapping (Micropages)".
    #[serde(default, skip_serializing_if = "crate::remap::RemapConfig::is_default")]
    pub remap: crate::remap::RemapConfig,
}

/// DRAM write buffer (`[buffer]`). See docs/model.md, "Write buffer".
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BufferConfig {
    /// Capacity in bytes; 0 disables the buffer (writes go straight to flash).
    pub size_bytes: u64,
    /// Fraction of the buffer kept free, clean or being flushed by flushing least
    /// recently used dirty pages ahead of need (0 = flush only on demand, when a write
    /// finds no space; then one flush starts per waiting page, in parallel). Default
    /// 0.25: a burst of up to a quarter of the buffer is absorbed at DRAM speed while
    /// the other three quarters keep recently written data for read hits.
    pub flush_watermark: f64,
    /// Flush all dirty pages once the host has been idle this long (none = never).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_flush_after: Option<Nanos>,
    /// Fixed DRAM access latency of one buffer access (a buffered write, a read hit, a
    /// read served from a queued write's data). Default 26 ns = tRCD + tCL of MQSim's
    /// default DRAM (13 ns each).
    pub dram_latency: Nanos,
    /// DRAM data bandwidth in bytes per second; accesses share it one at a time, so
    /// an access of `n` bytes occupies the DRAM for `n / bandwidth` and completes
    /// `dram_latency` later. Default 3.2 GB/s = MQSim's default DRAM (800 MT/s × 4-byte
    /// bursts).
    pub dram_bandwidth_bytes_per_s: u64,
}

impl Default for BufferConfig {
    fn default() -> Self {
        BufferConfig {
            size_bytes: 0,
            flush_watermark: 0.25,
            idle_flush_after: None,
            dram_latency: Nanos(26),
            dram_bandwidth_bytes_per_s: 3_200_000_000,
        }
    }
}

/// How requests are presented to the device (`host.mode`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HostMode {
    /// Open loop: requests arrive at their (scaled) trace timestamps.
    #[default]
    Open,
    /// Closed loop: `closed_loop_depth` requests are always outstanding; timestamps are
    /// ignored and a new request is issued the moment one completes.
    Closed,
}

/// What a read of a never-written logical page does (`host.unwritten_reads`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum UnwrittenReads {
    /// Before the replay, write (untimed) every page the trace reads before writing it,
    /// so those reads hit flash (what SSDsim's pre-processing does).
    #[default]
    Prefill,
    /// Complete such reads immediately without touching flash (counted in the report).
    Zero,
}

/// Host interface (`[host]`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HostConfig {
    /// Open- or closed-loop replay.
    pub mode: HostMode,
    /// Device queue depth: requests admitted to the device at once (0 = unlimited).
    /// Requests beyond it wait in the host queue; response time counts from arrival.
    pub queue_depth: u32,
    /// Outstanding requests in closed-loop mode.
    pub closed_loop_depth: u32,
    /// Partial-page writes to a written page read the old page first (read-modify-write).
    pub read_modify_write: bool,
    /// Reads of never-written pages.
    pub unwritten_reads: UnwrittenReads,
    /// Check that every read returns the latest write (tags stored in the device).
    pub verify: bool,
    /// The host interface (`[host.interface]`: NVMe or SATA over PCIe; off by
    /// default, and then left out of a serialized config).
    #[serde(skip_serializing_if = "crate::hostif::InterfaceConfig::is_default")]
    pub interface: crate::hostif::InterfaceConfig,
}

impl Default for HostConfig {
    fn default() -> Self {
        HostConfig {
            mode: HostMode::Open,
            queue_depth: 0,
            closed_loop_depth: 32,
            read_modify_write: true,
            unwritten_reads: UnwrittenReads::Prefill,
            verify: false,
            interface: crate::hostif::InterfaceConfig::default(),
        }
    }
}

/// Policies (`[sched]`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SchedConfig {
    /// Write placement.
    #[serde(default)]
    pub placement: PlacementKind,
    /// Queue arbitration on a free die.
    #[serde(default)]
    pub arbiter: ArbiterKind,
    /// GC versus host I/O.
    #[serde(default)]
    pub gc: GcMode,
    /// Options of the `ocr` and `lacr` placement policies (`[sched.lacr]`).
    #[serde(default)]
    pub lacr: LacrParams,
    /// Options of the `mcs` placement policy (`[sched.mcs]`; omitted from the resolved
    /// config while every option has its default).
    #[serde(default, skip_serializing_if = "McsParams::is_default")]
    pub mcs: McsParams,
    /// The transaction scheduler: which queued transactions form a die's next flash
    /// command (`fcfs`, `multiplane`, `sprinkler`, `soml`, `mbm`; see `lamina policies`).
    #[serde(default)]
    pub scheduler: SchedulerKind,
    /// Most planes in one multi-plane command (1 ..= planes per die; absent = planes per
    /// die).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multiplane_width: Option<u32>,
    /// Queued transactions a scheduler looks at beyond a queue's head (Sprinkler's
    /// over-commitment depth; 0 = the head only). Default 32.
    #[serde(default = "default_window")]
    pub window: u32,
    /// A read suspends a running program/erase (where the device allows suspension)
    /// only if more than this much of it remains. Default 0 ns: whenever the device
    /// allows. MQSim's and Sprinkler's simulators use suspend setup + 10 µs + one page
    /// transfer (docs/policies.md).
    #[serde(default)]
    pub suspend_threshold: Nanos,
}

fn default_window() -> u32 {
    32
}

impl Default for SchedConfig {
    fn default() -> Self {
        SchedConfig {
            placement: PlacementKind::default(),
            arbiter: ArbiterKind::default(),
            gc: GcMode::default(),
            lacr: LacrParams::default(),
            mcs: McsParams::default(),
            scheduler: SchedulerKind::default(),
            multiplane_width: None,
            window: default_window(),
            suspend_threshold: Nanos(0),
        }
    }
}

/// Report statistics (`[stats]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StatsConfig {
    /// Percentiles of response time and queue wait in the report, each in (0, 100],
    /// strictly increasing, e.g. `[95, 97, 98, 99, 99.5, 99.9, 99.99, 99.999]` (MBM's
    /// tail plots). Each becomes a JSON field `p<P>_ns` (`.` written `_`: `p99_5_ns`)
    /// and a column of the text table. Default: p50, p90, p95, p99, p99.9, p99.99 and
    /// p99.999 ([`crate::stats::DEFAULT_PERCENTILES`]), of which the text table shows
    /// p50 and p99 … p99.999 (its columns before the list was configurable).
    pub percentiles: Vec<f64>,
}

impl Default for StatsConfig {
    fn default() -> Self {
        StatsConfig { percentiles: crate::stats::DEFAULT_PERCENTILES.to_vec() }
    }
}

impl StatsConfig {
    /// True if every key has its default value.
    pub fn is_default(&self) -> bool {
        *self == StatsConfig::default()
    }
}

/// A configuration error naming the key (or source) at fault.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// TOML syntax or type error, or an unknown key.
    #[error("{source_name}: {message}")]
    Parse {
        /// File or `--set` origin.
        source_name: String,
        /// The parser's message (names the key).
        message: String,
    },
    /// An unknown preset.
    #[error("unknown preset {0:?} (see `lamina presets`)")]
    UnknownPreset(String),
    /// A malformed `--set` argument.
    #[error("--set {0:?}: expected key=value with a dotted key, e.g. nand.timing.t_r=78us")]
    BadSet(String),
    /// A value that parses but is impossible.
    #[error("invalid config: {key}: {reason}")]
    Invalid {
        /// Dotted key.
        key: String,
        /// Why.
        reason: String,
    },
    /// An error about a key a config file or `--set` gave, with where it was given
    /// (`FILE:LINE` or `--set KEY=VALUE`).
    #[error("{origin}: {error}")]
    At {
        /// Where the key was given.
        origin: String,
        /// The error.
        error: Box<ConfigError>,
    },
}

/// Builds a [`SimConfig`] from a preset, TOML files and `key=value` overrides, in that
/// order of precedence (later wins).
#[derive(Default)]
pub struct ConfigBuilder {
    doc: toml::Table,
    /// Where each key was given (for errors naming file and line).
    origins: KeyOrigins,
}

/// Where the keys of a config were given: the sources a [`ConfigBuilder`] merged (a
/// config file with its text, a `--set`, a flag standing for a key) and the source that
/// last set each dotted leaf key. The builder names `FILE:LINE` or the flag in its own
/// errors with it; [`ConfigBuilder::build_checked_with_origins`] hands it on for errors
/// found after the config was built (the CLI's memory-limit refusals).
#[derive(Clone, Debug, Default)]
pub struct KeyOrigins {
    /// The sources merged so far: name and, for a TOML document, its text.
    sources: Vec<(String, Option<String>)>,
    /// The source that last set each dotted leaf key.
    origin: std::collections::BTreeMap<String, usize>,
}

impl KeyOrigins {
    /// Record source `name` (with its TOML `text`, if a document) as the origin of every
    /// leaf of `table` under the dotted `prefix`.
    fn record(&mut self, name: String, text: Option<&str>, prefix: &str, table: &toml::Table) {
        self.sources.push((name, text.map(str::to_owned)));
        let id = self.sources.len() - 1;
        fn walk(
            origin: &mut std::collections::BTreeMap<String, usize>,
            prefix: &str,
            t: &toml::Table,
            id: usize,
        ) {
            for (k, v) in t {
                let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                if let toml::Value::Table(sub) = v {
                    walk(origin, &key, sub, id);
                } else {
                    origin.insert(key, id);
                }
            }
        }
        walk(&mut self.origin, prefix, table, id);
    }

    /// The source that gave dotted `key` itself, or a leaf under it (a table key, e.g.
    /// an unknown field's parent).
    fn source_of(&self, key: &str) -> Option<usize> {
        if let Some(&id) = self.origin.get(key) {
            return Some(id);
        }
        let under = format!("{key}.");
        self.origin.range(under.clone()..).next().filter(|(o, _)| o.starts_with(&under)).map(|(_, &id)| id)
    }

    /// `FILE:LINE` of `key` in source `id` when it is a document that writes the key,
    /// else the source's name (`--set …`, a flag).
    fn place(&self, id: usize, key: &str) -> String {
        let (name, text) = &self.sources[id];
        match text.as_deref().and_then(|t| line_of(t, key)) {
            Some(line) => format!("{name}:{line}"),
            None => name.clone(),
        }
    }

    /// Where the value of dotted `key` was given: `FILE:LINE`, `--set …` or the flag;
    /// `None` when no source gave it or a key under it (the preset's or a default value).
    pub fn origin_of(&self, key: &str) -> Option<String> {
        self.source_of(key).map(|id| self.place(id, key))
    }

    /// [`Self::origin_of`] of `key`, or else of the nearest enclosing key given: where an
    /// error about `key` should point.
    fn nearest_origin_of(&self, key: &str) -> Option<String> {
        let mut k = key;
        loop {
            if let Some(id) = self.source_of(k) {
                return Some(self.place(id, k));
            }
            k = k.rsplit_once('.')?.0;
        }
    }
}

impl ConfigBuilder {
    /// An empty builder (a `[nand]` section or preset is then required).
    pub fn new() -> Self {
        Self::default()
    }

    /// Start from a named NAND preset.
    pub fn preset(mut self, name: &str) -> Result<Self, ConfigError> {
        self.doc.insert("preset".into(), toml::Value::String(name.to_owned()));
        Ok(self)
    }

    /// Merge a TOML document (e.g. a config file's contents).
    pub fn toml(mut self, source_name: &str, text: &str) -> Result<Self, ConfigError> {
        let table = Self::parse_toml(source_name, text)?;
        self.origins.record(source_name.into(), Some(text), "", &table);
        merge(&mut self.doc, table);
        Ok(self)
    }

    /// Parse TOML document `text` (named `source_name`, e.g. a config file's path). A
    /// syntax error is `SOURCE:LINE:COLUMN: TOML parse error: WHAT`, then the line with a
    /// caret under the column.
    pub fn parse_toml(source_name: &str, text: &str) -> Result<toml::Table, ConfigError> {
        text.parse().map_err(|e: toml::de::Error| {
            let at = e.span().map(|s| s.start.min(text.len())).filter(|&at| text.is_char_boundary(at));
            let Some(at) = at else {
                return ConfigError::Parse { source_name: source_name.into(), message: e.to_string() };
            };
            let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
            let line = text[..at].matches('\n').count() + 1;
            let before = &text[line_start..at];
            let column = before.chars().count() + 1;
            let shown = text[line_start..].lines().next().unwrap_or_default();
            // Tabs kept, so that the caret lines up under the column as the line shows.
            let pad: String = before.chars().map(|c| if c == '\t' { '\t' } else { ' ' }).collect();
            ConfigError::Parse {
                source_name: format!("{source_name}:{line}:{column}"),
                message: format!("TOML parse error: {}\n  {shown}\n  {pad}^", e.message().trim_end()),
            }
        })
    }

    /// `e`, with the file and line (or `--set`) of the key it names, when known.
    fn located(&self, e: ConfigError) -> ConfigError {
        let key = match &e {
            ConfigError::Invalid { key, .. } => Some(key.clone()),
            ConfigError::Parse { message, .. } => key_of_message(message),
            _ => None,
        };
        match (key.and_then(|k| self.origins.nearest_origin_of(&k)), e) {
            (Some(origin), ConfigError::Parse { message, .. }) => {
                ConfigError::Parse { source_name: origin, message }
            }
            (Some(origin), e) => ConfigError::At { origin, error: Box::new(e) },
            (None, e) => e,
        }
    }

    /// Apply one `dotted.key=value` override. The value is parsed as a TOML value; if that
    /// fails it is taken as a string (so `--set nand.timing.t_r=78us` works).
    pub fn set(self, assignment: &str) -> Result<Self, ConfigError> {
        let origin = format!("--set {}", assignment.trim());
        self.set_from(&origin, assignment)
    }

    /// [`Self::set`] for an assignment that stands for another option (`--seed 3` is
    /// `seed=3`): errors about its key name `origin` as where it was given.
    pub fn set_from(mut self, origin: &str, assignment: &str) -> Result<Self, ConfigError> {
        let (key, raw) = assignment.split_once('=').ok_or_else(|| ConfigError::BadSet(assignment.into()))?;
        let key = key.trim();
        if key.is_empty() || key.split('.').any(|p| p.is_empty()) {
            return Err(ConfigError::BadSet(assignment.into()));
        }
        let value = format!("v = {raw}")
            .parse::<toml::Table>()
            .ok()
            .and_then(|mut t| t.remove("v"))
            .unwrap_or_else(|| toml::Value::String(raw.trim().to_owned()));
        let mut table = &mut self.doc;
        let parts: Vec<&str> = key.split('.').collect();
        for p in &parts[..parts.len() - 1] {
            let entry = table.entry(p.to_string()).or_insert_with(|| toml::Value::Table(toml::Table::new()));
            table = match entry {
                toml::Value::Table(t) => t,
                _ => return Err(ConfigError::BadSet(format!("{assignment} ({p} is not a table)"))),
            };
        }
        let mut leaf = toml::Table::new();
        leaf.insert(parts[parts.len() - 1].to_owned(), value.clone());
        let parent = parts[..parts.len() - 1].join(".");
        table.insert(parts[parts.len() - 1].to_owned(), value);
        self.origins.record(origin.to_owned(), None, &parent, &leaf);
        Ok(self)
    }

    /// Resolve the preset, deserialize (unknown keys are errors) and validate each key
    /// ([`SimConfig::check`]). Whether the device takes the config (the FTL, the buffer,
    /// remapping against the geometry) is left to [`crate::SimulationBuilder::build`],
    /// for a caller that brings its own FTL or adjusts the config until the device takes
    /// it; [`Self::build_checked`] checks that too.
    pub fn build(mut self) -> Result<SimConfig, ConfigError> {
        self.resolve()
    }

    /// [`Self::build`], then [`SimConfig::check_against_device`]: what building a
    /// simulation with the built-in FTL checks about the config, with errors that say
    /// where the key was given like every other (`FILE:LINE` or `--set …`). The command
    /// line loads configs with this.
    pub fn build_checked(self) -> Result<SimConfig, ConfigError> {
        self.build_checked_with_origins().map(|(cfg, _)| cfg)
    }

    /// [`Self::build_checked`], with where each key was given, for errors found later
    /// (a memory-limit refusal when the simulation is built).
    pub fn build_checked_with_origins(mut self) -> Result<(SimConfig, KeyOrigins), ConfigError> {
        let cfg = self.resolve()?;
        cfg.check_against_device().map_err(|e| self.located(e))?;
        Ok((cfg, self.origins))
    }

    fn resolve(&mut self) -> Result<SimConfig, ConfigError> {
        let mut doc = std::mem::take(&mut self.doc);
        // The preset's own `[nand]`, kept for the examples of error messages.
        let mut preset_nand = None;
        if let Some(toml::Value::String(name)) = doc.get("preset").cloned() {
            let base = lamina_nand_model::preset(&name).ok_or(ConfigError::UnknownPreset(name.clone()))?;
            let mut base_nand = toml::Table::try_from(&base)
                .map_err(|e| ConfigError::Invalid { key: "nand".into(), reason: e.to_string() })?;
            preset_nand = Some(base_nand.clone());
            if let Some(toml::Value::Table(user)) = doc.remove("nand") {
                merge(&mut base_nand, user);
            }
            doc.insert("nand".into(), toml::Value::Table(base_nand));
        }
        if !doc.contains_key("nand") {
            return Err(ConfigError::Invalid {
                key: "nand".into(),
                reason: "no device: give a preset (--preset NAME) or a [nand] section".into(),
            });
        }
        let cfg: SimConfig = toml::Value::Table(doc.clone()).try_into().map_err(|e: toml::de::Error| {
            let message = e.to_string();
            let message = explain_non_name(&doc, &message)
                .or_else(|| explain_non_table(preset_nand.as_ref(), &message))
                .or_else(|| explain_missing_without_preset(preset_nand.is_some(), &message))
                .unwrap_or(message);
            self.located(ConfigError::Parse { source_name: "config".into(), message })
        })?;
        cfg.check().map_err(|e| self.located(e))?;
        Ok(cfg)
    }
}

/// The deserializer's message for a value that is not a string where a named choice is
/// expected (`invalid type: unit variant, expected string only`, also for a number)
/// names neither the value given nor the choices. Ask the deserializer for the choices
/// (the same document with a string no choice has at that key) and say both; for
/// choices that carry a value (`ftl.gc_threshold`), show the table form. `None` for any
/// other message.
fn explain_non_name(doc: &toml::Table, message: &str) -> Option<String> {
    if !message.contains("invalid type: unit variant") {
        return None;
    }
    let key = key_of_message(message)?;
    let parts: Vec<&str> = key.split('.').collect();
    let given = value_at(doc, &parts)?;
    // A string that is no choice: the deserializer then lists the choices.
    let probe = with_value(doc, &parts, "\u{1}")?;
    let listed = toml::Value::Table(probe).try_into::<SimConfig>().err()?.to_string();
    let expected = listed.split_once("unknown variant")?.1.split_once("expected ")?.1;
    let expected = expected.lines().next()?.trim();
    let first = expected.split('`').nth(1)?;
    // A choice that carries a value is written as a table naming it.
    let named = with_value(doc, &parts, first)?;
    let bare_ok = match toml::Value::Table(named).try_into::<SimConfig>() {
        Ok(_) => true,
        Err(e) => key_of_message(&e.to_string()).as_deref() != Some(key.as_str()),
    };
    let example =
        if bare_ok { format!("{key} = \"{first}\"") } else { format!("{key} = {{ {first} = … }}") };
    Some(format!(
        "`{given}` is not one of the choices of `{key}`: expected {expected} (e.g. `{example}`)\nin `{key}`"
    ))
}

/// The deserializer's message for a value where a table of settings is expected
/// (`invalid type: integer `5`, expected struct BusConfig`) names a Rust type. Say that
/// the key takes a table, and show the preset's own table there as an example when the
/// key is a preset's (`nand.…`). `None` for any other message.
fn explain_non_table(preset_nand: Option<&toml::Table>, message: &str) -> Option<String> {
    let (head, _) = message.split_once(", expected struct ")?;
    let given = head.strip_prefix("invalid type: ")?;
    let key = key_of_message(message)?;
    let example = key.strip_prefix("nand.").and_then(|rest| {
        let parts: Vec<&str> = rest.split('.').collect();
        match value_at(preset_nand?, &parts)? {
            t @ toml::Value::Table(_) => Some(format!(" (the preset's: `{key} = {t}`)")),
            _ => None,
        }
    });
    Some(format!(
        "{given} where `{key}` takes a table of settings (`[{key}]`, or `{key} = {{ … }}`){}\nin `{key}`",
        example.unwrap_or_default()
    ))
}

/// The deserializer's message for a `[nand]` key missing when no preset is given
/// (`missing field `channels``, after e.g. `--set nand.geometry.pages_per_block=64` alone)
/// does not say that without a preset `[nand]` must describe the whole device, nor how to
/// change only some keys of one. Say both. `None` for any other message (or with a preset).
fn explain_missing_without_preset(has_preset: bool, message: &str) -> Option<String> {
    let key = key_of_message(message)?;
    if has_preset || !(key == "nand" || key.starts_with("nand.")) {
        return None;
    }
    let head = message.lines().next()?.strip_prefix("missing field ")?;
    Some(format!(
        "missing field {head}: no preset is given, so [nand] must describe the whole device; to change \
         only some keys of a preset's device, name it (--preset NAME, or `preset = \"NAME\"` in a config \
         file; see `lamina presets`)\nin `{key}`"
    ))
}

/// The value at the dotted key `parts` of `doc` (`None` if it is not there).
fn value_at<'a>(doc: &'a toml::Table, parts: &[&str]) -> Option<&'a toml::Value> {
    let (first, rest) = parts.split_first()?;
    rest.iter().try_fold(doc.get(*first)?, |at, p| match at {
        toml::Value::Table(t) => t.get(*p),
        _ => None,
    })
}

/// A copy of `doc` with the string `v` at the dotted key `parts` (`None` if a part on
/// the way is not a table).
fn with_value(doc: &toml::Table, parts: &[&str], v: &str) -> Option<toml::Table> {
    let (leaf, path) = parts.split_last()?;
    let mut copy = doc.clone();
    let mut table = &mut copy;
    for p in path {
        table = match table.get_mut(*p)? {
            toml::Value::Table(t) => t,
            _ => return None,
        };
    }
    table.insert((*leaf).to_owned(), toml::Value::String(v.into()));
    Some(copy)
}

/// The dotted key a deserialization error is about: its `in `a.b`` path, joined with
/// the field of an "unknown field `x`" message.
fn key_of_message(message: &str) -> Option<String> {
    let path = message.rsplit_once("in `").and_then(|(_, rest)| rest.split_once('`')).map(|(p, _)| p);
    let field =
        message.split_once("unknown field `").and_then(|(_, rest)| rest.split_once('`')).map(|(f, _)| f);
    match (path, field) {
        (Some(p), Some(f)) if !p.is_empty() => Some(format!("{p}.{f}")),
        (Some(p), _) => Some(p.to_owned()),
        (None, Some(f)) => Some(f.to_owned()),
        (None, None) => None,
    }
}

/// The 1-based line of dotted `key` in TOML `text` (its value's line; a table's header
/// line), if the text writes the key: how [`KeyOrigins`] names `FILE:LINE`.
fn line_of(text: &str, key: &str) -> Option<usize> {
    let doc = toml::de::DeTable::parse(text).ok()?;
    let mut table = doc.get_ref();
    let parts: Vec<&str> = key.split('.').collect();
    for (i, part) in parts.iter().enumerate() {
        let (k, v) = table.iter().find(|(k, _)| k.get_ref().as_ref() == *part)?;
        if i + 1 == parts.len() {
            let start = if matches!(v.get_ref(), toml::de::DeValue::Table(_)) {
                k.span().start
            } else {
                v.span().start
            };
            return Some(text[..start.min(text.len())].matches('\n').count() + 1);
        }
        match v.get_ref() {
            toml::de::DeValue::Table(t) => table = t,
            _ => return None,
        }
    }
    None
}

fn merge(into: &mut toml::Table, from: toml::Table) {
    for (k, v) in from {
        match (into.get_mut(&k), v) {
            (Some(toml::Value::Table(a)), toml::Value::Table(b)) => merge(a, b),
            (_, v) => {
                into.insert(k, v);
            }
        }
    }
}

impl SimConfig {
    /// Engine-level checks (each crate validates its own section when built).
    pub fn check(&self) -> Result<(), ConfigError> {
        let bad =
            |key: &str, reason: &str| Err(ConfigError::Invalid { key: key.into(), reason: reason.into() });
        if !(0.0..1.0).contains(&self.buffer.flush_watermark) {
            return bad("buffer.flush_watermark", "must be in [0, 1)");
        }
        if self.buffer.dram_bandwidth_bytes_per_s == 0 {
            return bad(
                "buffer.dram_bandwidth_bytes_per_s",
                "must be positive (e.g. 3200000000 for 3.2 GB/s)",
            );
        }
        if let Err((key, reason)) = self.sched.mcs.validate() {
            return Err(ConfigError::Invalid { key: key.into(), reason });
        }
        if self.sched.mcs.reallocate && self.sched.placement != PlacementKind::Mcs {
            return bad(
                "sched.mcs.reallocate",
                "RS reallocation is part of MBM's placement: set sched.placement = \"mcs\" or reallocate = false",
            );
        }
        if self.sched.mcs.reallocate && self.remap.enabled() {
            return bad("sched.mcs.reallocate", "cannot be combined with [remap]: turn one of them off");
        }
        if let Some(Err(lamina_ftl::PreconditionError::Config { key, reason })) =
            self.precondition.as_ref().map(|p| p.validate())
        {
            return Err(ConfigError::Invalid { key: key.into(), reason });
        }
        if self.host.mode == HostMode::Closed && self.host.closed_loop_depth == 0 {
            return bad("host.closed_loop_depth", "must be at least 1 in closed-loop mode");
        }
        if let Err((key, reason)) = self.host.interface.resolve() {
            return Err(ConfigError::Invalid { key, reason });
        }
        let planes = self.nand.geometry.planes_per_die;
        if let Some(w) = self.sched.multiplane_width
            && (w == 0 || w > planes || w as usize > MAX_COMMAND_TXNS)
        {
            return Err(ConfigError::Invalid {
                key: "sched.multiplane_width".into(),
                reason: format!(
                    "{w} is not a width this device allows: it must be 1 ..= planes per die ({planes}){}; omit the key for all planes",
                    if planes as usize > MAX_COMMAND_TXNS {
                        format!(" and at most {MAX_COMMAND_TXNS}")
                    } else {
                        String::new()
                    }
                ),
            });
        }
        if self.sched.scheduler.needs_soml() {
            match &self.nand.soml {
                None => return bad("sched.scheduler", &self.soml_remedy()),
                Some(s) if s.max_parts as usize > MAX_COMMAND_TXNS => {
                    return Err(ConfigError::Invalid {
                        key: "nand.soml.max_parts".into(),
                        reason: format!(
                            "the soml scheduler issues at most {MAX_COMMAND_TXNS} parts per SOML read"
                        ),
                    });
                }
                Some(_) => {}
            }
        }
        if let Err(reason) = crate::stats::check_percentiles(&self.stats.percentiles) {
            return bad("stats.percentiles", &reason);
        }
        if self.ftl.replication != lamina_ftl::Replication::None {
            // The copies must stay on their chips: static placement puts each copy on
            // its static plane (the mirror's on the partner chip); a dynamic policy could
            // put both on one chip.
            if self.sched.placement != lamina_sched::PlacementKind::Static {
                return bad(
                    "ftl.replication",
                    "RAIN 1 places each copy statically (the mirror on the partner chip): set sched.placement = \"static\" or ftl.replication = \"none\"",
                );
            }
            if self.buffer.size_bytes > 0 {
                return bad(
                    "ftl.replication",
                    "RAIN 1 is not modelled with a write buffer (a flush would program two copies): set buffer.size_bytes = 0 or ftl.replication = \"none\"",
                );
            }
        }
        Ok(())
    }

    /// The checks that need the device: `[nand]` itself, then `[ftl]`, `[trace]`,
    /// `buffer.size_bytes` and `[remap]` against it, as building a
    /// simulation with the built-in FTL runs them ([`ConfigBuilder::build_checked`] runs
    /// them at load, so that their errors say where the key was given). Each rule lives
    /// in its section's validation; this only names the key in full.
    pub fn check_against_device(&self) -> Result<(), ConfigError> {
        let invalid = |key: String, reason: String| ConfigError::Invalid { key, reason };
        let spec = self.nand.validate().map_err(|e| invalid(format!("nand.{}", e.key), e.reason))?;
        let geometry = spec.geometry();
        let ftl = self.ftl.validate(geometry).map_err(|e| invalid(e.key.into(), e.reason))?;
        self.trace.validate().map_err(|e| match e {
            lamina_trace::TraceError::Options { key, message } => invalid(format!("trace.{key}"), message),
            e => invalid("trace".into(), e.to_string()),
        })?;
        crate::budget::check_buffer(self, geometry, ftl.logical_pages()).map_err(|reason| {
            invalid("buffer.size_bytes".into(), format!("{} is {reason}", self.buffer.size_bytes))
        })?;
        let units = geometry.page_size_bytes() / geometry.partial_read_bytes();
        let replicated = self.ftl.replication != lamina_ftl::Replication::None;
        self.remap.validate(units, ftl.host_pages(), replicated).map_err(|e| invalid(e.key.into(), e.msg))
    }

    /// Warnings a run's report carries about this configuration: values that take
    /// effect other than as written (a seed nothing draws from, a GC threshold raised to
    /// the least GC allows).
    pub fn warnings(&self) -> Vec<String> {
        let mut w = Vec::new();
        if self.seed != 0 && !self.seed_matters() {
            w.push(format!(
                "seed {} has no effect: nothing in this configuration draws random numbers (only [precondition] does); runs with other seeds are identical",
                self.seed
            ));
        }
        let ftl = self.nand.geometry.validate().ok().and_then(|g| self.ftl.validate(&g).ok());
        if let Some(raised) = ftl.as_ref().and_then(|f| f.gc_threshold_raised()) {
            w.push(raised.to_owned());
        }
        w
    }

    /// Why the `soml` scheduler cannot run on this device (it has no `[nand.soml]`), and
    /// the settings that would give it SOML reads. A `[nand.soml]` section alone is not
    /// enough on a device that reads whole pages only (`soml.max_parts` is bounded by the
    /// partial-read slots of a page), so the remedy names the partial-read size too.
    fn soml_remedy(&self) -> String {
        let page = self.nand.geometry.page_size_bytes;
        let partial = self.nand.geometry.partial_read_bytes.unwrap_or(page);
        let add = if partial < page {
            // Partial reads exist already: SOML needs only its section.
            format!("--set nand.soml.max_parts={}", (page / partial).min(4))
        } else if page % 2 == 0 {
            // The largest split into at most four equal parts.
            let parts = if page % 4 == 0 { 4 } else { 2 };
            format!(
                "--set nand.soml.max_parts={parts} --set nand.geometry.partial_read_bytes={} (SOML combines reads of part of a page)",
                page / parts
            )
        } else {
            return "the soml scheduler needs a device with SOML reads (partial reads of several blocks of a plane in one operation): use a preset that has them (soml-tlc64), or choose another scheduler (multiplane)".into();
        };
        format!(
            "the soml scheduler needs a device with SOML reads (partial reads of several blocks of a plane in one operation): use a preset that has them (soml-tlc64), add them to this device with {add}, or choose another scheduler (multiplane)"
        )
    }

    /// True if the seed can change the result: only preconditioning draws random
    /// numbers today (every policy is deterministic without a PRNG).
    pub fn seed_matters(&self) -> bool {
        self.precondition.is_some()
    }

    /// The resolved config as TOML (what the report records).
    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("config serializes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_origins_name_the_last_source_that_gave_a_key() {
        let text =
            "seed = 1\n[nand]\ngeometry = { channels = 2,\n  blocks_per_plane = 4 }\n[host]\nverify = true\n";
        let b = ConfigBuilder::new().toml("f.toml", text).unwrap();
        let o = &b.origins;
        assert_eq!(o.origin_of("nand.geometry.blocks_per_plane").as_deref(), Some("f.toml:4"));
        assert_eq!(o.origin_of("nand.geometry").as_deref(), Some("f.toml:3"));
        assert_eq!(o.origin_of("host.verify").as_deref(), Some("f.toml:6"));
        assert_eq!(o.origin_of("nand.geometry.pages_per_block"), None);
        let b = b.set("nand.geometry.channels=8").unwrap().set("host={ verify = false }").unwrap();
        let o = &b.origins;
        assert_eq!(o.origin_of("nand.geometry.channels").as_deref(), Some("--set nand.geometry.channels=8"));
        assert_eq!(o.origin_of("host.verify").as_deref(), Some("--set host={ verify = false }"));
        assert_eq!(o.origin_of("nand.geometry.channels_x"), None, "a key only shares the prefix");
        assert_eq!(o.origin_of("seed").as_deref(), Some("f.toml:1"));
    }
}
