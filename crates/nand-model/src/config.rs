//! NAND configuration: what users write ([`NandConfig`] with its `[geometry]`, `[timing]`,
//! `[suspension]`, `[soml]` and `[partial_erase]` sections) and the validated
//! [`DeviceSpec`] the [`crate::Device`] is built from.
//!
//! Validation happens once, at load; every error names the offending key
//! (`timing.t_r`, `partial_erase.levels`, …). After validation all latencies are
//! integer nanoseconds and every per-page array time (page type × layer speed factor)
//! is precomputed, so issuing an operation does no floating-point arithmetic and no
//! division beyond the exact bus-transfer formula.

use serde::{Deserialize, Serialize};

use crate::geometry::{CellType, Geometry, GeometryConfig, GeometryError, PageType};
use crate::time::{Nanos, NanosVisitor};

/// Parts per million: the fixed-point unit of every latency factor (1.0 = 1 000 000).
pub const PPM: u64 = 1_000_000;

/// Largest supported planes per die (multi-plane state is kept in a 64-bit mask).
pub const MAX_PLANES_PER_DIE: u32 = 64;

/// A latency given either once for every page type or once per page type, in
/// LSB, CSB, MSB, TSB order restricted to the cell's page types (`[lsb, msb]` for MLC,
/// `[lsb, csb, msb]` for TLC).
///
/// A malformed value is reported as a bad duration ("expected a non-negative duration like
/// 78us"), not as a failed match of one of the two forms.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum PerPageType {
    /// The same latency for every page type.
    One(Nanos),
    /// One latency per page type of the cell, in bit order.
    PerType(Vec<Nanos>),
}

impl<'de> Deserialize<'de> for PerPageType {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<PerPageType, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = PerPageType;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(
                    "a non-negative duration like 78us, or one per page type like [\"60us\", \"90us\"]",
                )
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<PerPageType, E> {
                NanosVisitor.visit_u64(v).map(PerPageType::One)
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<PerPageType, E> {
                NanosVisitor.visit_i64(v).map(PerPageType::One)
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<PerPageType, E> {
                NanosVisitor.visit_f64(v).map(PerPageType::One)
            }
            fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<PerPageType, E> {
                NanosVisitor.visit_bool(v).map(PerPageType::One)
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<PerPageType, E> {
                NanosVisitor.visit_str(v).map(PerPageType::One)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<PerPageType, A::Error> {
                let mut list = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4));
                while let Some(n) = seq.next_element::<Nanos>()? {
                    list.push(n);
                }
                Ok(PerPageType::PerType(list))
            }
        }
        d.deserialize_any(V)
    }
}

/// How long the channel bus takes to move data. Give exactly one form.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BusConfig {
    /// Fixed time per byte (SSDsim's `t_RC`/`t_WC` style, e.g. mbm-ftl's "10ns/8bit").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ns_per_byte: Option<Nanos>,
    /// Bus width in bits (with `rate_mts`), e.g. 8 for a 1-byte ONFI channel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub width_bits: Option<u32>,
    /// Transfer rate in mega-transfers per second (with `width_bits`), e.g. 333 for
    /// ONFI 3.1 / NV-DDR2 at 333 MT/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_mts: Option<u32>,
}

/// Which end of the 3D stack holds the slowest layer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SlowEnd {
    /// The top layer (highest index) is slowest; layer 0 (bottom) is fastest. The
    /// default: layer-aware-chip-redirection §II-A, "access speed on lower layers is
    /// faster than that on upper layers".
    #[default]
    Top,
    /// The bottom layer (layer 0) is slowest.
    Bottom,
}

/// How the speed factor grows from the fastest to the slowest layer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LayerCurve {
    /// Equal increments between neighbouring layers (layer-aware-chip-redirection
    /// Eq. 7, `Speed_layer = k × Cur_layer` with a fixed `k`). The default.
    #[default]
    Linear,
    /// Equal ratios between neighbouring layers.
    Geometric,
}

/// Per-layer speed variation (layer-aware-chip-redirection §III, §V-A): array read and
/// program times are multiplied by a factor that is 1 on the fastest layer and
/// `ratio` on the slowest, progressing over the layers in between.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LayerSpeedConfig {
    /// Slowest-layer latency over fastest-layer latency (≥ 1; lacr uses 2, and 4 in its
    /// sensitivity study). Converted once to parts per million.
    pub ratio: f64,
    /// Shape of the progression.
    #[serde(default)]
    pub curve: LayerCurve,
    /// Which end of the stack is slow.
    #[serde(default)]
    pub slow_end: SlowEnd,
}

/// Timing parameters (`[timing]`). All durations are integer ns or strings like `"78us"`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimingConfig {
    /// Command + address cycles on the bus per addressed page of a read (mbm-ftl
    /// Table I: 7 × 10 ns).
    pub t_cmd: Nanos,
    /// Command + address time per addressed page of a program; defaults to `t_cmd`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub t_cmd_program: Option<Nanos>,
    /// Command + address time per addressed block of an erase; defaults to `t_cmd`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub t_cmd_erase: Option<Nanos>,
    /// Data transfer rate of the channel bus.
    pub bus: BusConfig,
    /// Array read time (tR) per page type, on the fastest layer.
    pub t_r: PerPageType,
    /// Array program time (tPROG) per page type, on the fastest layer.
    pub t_prog: PerPageType,
    /// Block erase time (tBERS).
    pub t_bers: Nanos,
    /// Partial-block erase time; required when `[partial_erase]` is present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub t_pbers: Option<Nanos>,
    /// Multi-plane overhead (tDBSY): bus time between the per-plane sub-commands of a
    /// multi-plane operation, charged `planes − 1` times.
    #[serde(default)]
    pub t_dbsy: Nanos,
    /// Time for a die to suspend an in-flight program.
    #[serde(default)]
    pub t_suspend_program: Nanos,
    /// Time for a die to suspend an in-flight erase.
    #[serde(default)]
    pub t_suspend_erase: Nanos,
    /// Time for a die to resume a suspended program or erase.
    #[serde(default)]
    pub t_resume: Nanos,
    /// Per-layer speed variation; absent = every layer runs at the base speed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layer_speed: Option<LayerSpeedConfig>,
    /// Re-read (read-retry) sensings added to every read: the page is sensed
    /// `1 + re_reads` times before its data moves out once, so every read's array time is
    /// `(1 + re_reads) × tR` (soml-read §2.1 and Table 1 "#Re-read operations 3"; an
    /// option, default 0: see docs/model.md).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub re_reads: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// Program/erase suspension (`[suspension]`, mbm-ftl §IV-C): a read to a die whose
/// program or erase array phase is in flight suspends it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SuspensionConfig {
    /// Reads may suspend programs.
    #[serde(default)]
    pub program: bool,
    /// Reads may suspend erases (block and partial-block).
    #[serde(default)]
    pub erase: bool,
    /// Most suspensions one program/erase may suffer; later reads wait for it. Reads
    /// that arrive while the operation is already suspended join that suspension and
    /// do not count, while the suspension's window (`max_window`) is open. Default 1;
    /// at least 1 when `program` or `erase` is on (0 would suspend nothing: turn both
    /// off instead).
    #[serde(default = "one")]
    pub max_per_op: u32,
    /// How long one suspension may keep serving reads: a read may join an open
    /// suspension only if it can start within this time of the suspend point; later
    /// reads let the operation resume (and suspend it again only while `max_per_op`
    /// allows). Absent = the suspended operation's own array time (tPROG of the page
    /// being programmed, tBERS/tPBERS), so a steady read stream at most about doubles a
    /// program or erase instead of starving it. `0` = one read per suspension.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_window: Option<Nanos>,
}

/// Single-Operation-Multiple-Location reads (`[soml]`, soml-read §4–5).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SomlConfig {
    /// Most partial reads in one SOML operation (soml-read Table 1: 4).
    pub max_parts: u32,
    /// Block decoders per plane: two partial reads clash when their block indices are
    /// equal modulo this count (soml-read §5.1). Defaults to `max_parts`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decoders: Option<u32>,
    /// Read-latency factor of the SOML-capable chip over the baseline chip: the SOML
    /// transistors lengthen every string, so **every** read on the chip (plain,
    /// multi-plane, SOML, GC) takes `timing.t_r × factor`. Default: soml-read §6.1's
    /// Eq. 1 estimate `(layers + slots − 1) / (layers − 1)`, `slots` = partial reads per
    /// page (64 layers, 4 slots: 67/63 ≈ 1.063). Ignored when `t_r` is given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub factor: Option<f64>,
    /// The SOML-capable chip's read latency per page type, used for every read instead
    /// of `timing.t_r × factor` (soml-read Table 1: (92.7, 123.7, 185.5) µs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub t_r: Option<PerPageType>,
}

/// Partial-block erase (`[partial_erase]`, pen-partial-erase §4).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartialEraseConfig {
    /// Maximum split depth L: PB indices run 1 ..= 2^(L+1) − 1 and the smallest PB has
    /// `pages_per_block / 2^L` pages. `pages_per_block` must be divisible by 2^L.
    pub levels: u32,
}

fn one() -> u32 {
    1
}

/// A whole NAND device description as written in a config file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NandConfig {
    /// Device geometry.
    pub geometry: GeometryConfig,
    /// Latencies and bus.
    pub timing: TimingConfig,
    /// Program/erase suspension; absent = reads never suspend.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suspension: Option<SuspensionConfig>,
    /// SOML reads; absent = `SomlRead` commands are rejected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub soml: Option<SomlConfig>,
    /// Partial-block erase; absent = `PartialErase` commands are rejected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partial_erase: Option<PartialEraseConfig>,
}

/// An invalid NAND configuration, naming the key at fault.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid NAND config: `{key}`: {reason}")]
pub struct NandConfigError {
    /// Dotted config key, e.g. `timing.t_r` or `geometry.pages_per_block`.
    pub key: String,
    /// Why it is invalid.
    pub reason: String,
}

impl From<GeometryError> for NandConfigError {
    fn from(e: GeometryError) -> Self {
        NandConfigError { key: format!("geometry.{}", e.field), reason: e.reason }
    }
}

fn cfg_err(key: &str, reason: impl Into<String>) -> NandConfigError {
    NandConfigError { key: key.to_owned(), reason: reason.into() }
}

/// Validated bus timing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum BusTiming {
    /// Fixed ns per byte.
    NsPerByte(u64),
    /// Width × rate: a transfer of `b` bytes takes ⌈b × 8 × 1000 / (width_bits × rate_mts)⌉ ns.
    Rate {
        /// Bus width in bits.
        width_bits: u32,
        /// Mega-transfers per second.
        rate_mts: u32,
    },
}

impl BusTiming {
    /// Time to move `bytes` bytes over the bus, computed on the total (never per byte
    /// rounded), rounded up to a whole ns.
    #[inline]
    pub fn transfer(self, bytes: u64) -> Nanos {
        match self {
            BusTiming::NsPerByte(ns) => Nanos(ns * bytes),
            BusTiming::Rate { width_bits, rate_mts } => {
                let den = u64::from(width_bits) * u64::from(rate_mts);
                match bytes.checked_mul(8_000) {
                    // A 64-bit division: the 128-bit one is a slow library call, and
                    // every command computes a transfer time.
                    Some(num) => Nanos(num.div_ceil(den)),
                    None => Nanos((bytes as u128 * 8_000).div_ceil(den as u128) as u64),
                }
            }
        }
    }
}

/// Validated suspension rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct SuspensionRules {
    /// Programs are suspendable.
    pub program: bool,
    /// Erases are suspendable.
    pub erase: bool,
    /// Cap on suspensions per operation.
    pub max_per_op: u32,
    /// Bound on one suspension's read-serving window; `None` = the suspended
    /// operation's own array time.
    pub max_window: Option<Nanos>,
}

/// Validated SOML rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct SomlRules {
    /// Most partial reads per operation.
    pub max_parts: u32,
    /// Block decoders per plane.
    pub decoders: u32,
}

/// Validated timing: base latencies plus the precomputed per-page array times.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Timing {
    /// Command/address time per page of a read.
    pub t_cmd_read: Nanos,
    /// Command/address time per page of a program.
    pub t_cmd_program: Nanos,
    /// Command/address time per block of an erase.
    pub t_cmd_erase: Nanos,
    /// Bus data rate.
    pub bus: BusTiming,
    /// tR per page type index (LSB, CSB, MSB, TSB), fastest layer: the chip's read
    /// latency (`timing.t_r`, or a SOML-capable chip's `soml.t_r` / `t_r × soml.factor`)
    /// times `1 + timing.re_reads`.
    pub t_r: [Nanos; 4],
    /// tPROG per page type index, fastest layer.
    pub t_prog: [Nanos; 4],
    /// Block erase time.
    pub t_bers: Nanos,
    /// Partial-block erase time (when partial erase is enabled).
    pub t_pbers: Option<Nanos>,
    /// Multi-plane overhead per extra plane.
    pub t_dbsy: Nanos,
    /// Program suspend overhead.
    pub t_suspend_program: Nanos,
    /// Erase suspend overhead.
    pub t_suspend_erase: Nanos,
    /// Resume overhead.
    pub t_resume: Nanos,
    /// Speed factor per layer in ppm (index = layer, 0 = bottom).
    pub layer_ppm: Vec<u64>,
    /// Array read time per page-in-block (type × layer factor), ns.
    read_ns: Vec<u64>,
    /// Array program time per page-in-block, ns.
    prog_ns: Vec<u64>,
}

impl Timing {
    /// Array read time of page `page` of any block (tR of its type × its layer factor).
    #[inline]
    pub fn read_array(&self, page: u32) -> Nanos {
        Nanos(self.read_ns[page as usize])
    }

    /// Array program time of page `page` of any block.
    #[inline]
    pub fn program_array(&self, page: u32) -> Nanos {
        Nanos(self.prog_ns[page as usize])
    }

    /// Bus time to move `bytes` bytes.
    #[inline]
    pub fn transfer(&self, bytes: u64) -> Nanos {
        self.bus.transfer(bytes)
    }
}

/// A validated device description: geometry, timing and enabled features.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DeviceSpec {
    config: NandConfig,
    geometry: Geometry,
    timing: Timing,
    suspension: Option<SuspensionRules>,
    soml: Option<SomlRules>,
    partial_erase_levels: Option<u32>,
}

impl DeviceSpec {
    /// The configuration this spec was validated from.
    pub fn config(&self) -> &NandConfig {
        &self.config
    }
    /// Validated geometry.
    pub fn geometry(&self) -> &Geometry {
        &self.geometry
    }
    /// Validated timing.
    pub fn timing(&self) -> &Timing {
        &self.timing
    }
    /// Suspension rules, if enabled.
    pub fn suspension(&self) -> Option<SuspensionRules> {
        self.suspension
    }
    /// SOML rules, if enabled.
    pub fn soml(&self) -> Option<SomlRules> {
        self.soml
    }
    /// Partial-erase depth L, if enabled.
    pub fn partial_erase_levels(&self) -> Option<u32> {
        self.partial_erase_levels
    }
}

fn per_type(key: &str, v: &PerPageType, cell: CellType) -> Result<[Nanos; 4], NandConfigError> {
    let bits = cell.bits() as usize;
    let mut out = [Nanos::ZERO; 4];
    match v {
        PerPageType::One(n) => {
            for bit in 0..bits {
                out[PageType::of_bit(cell, bit as u32).index()] = *n;
            }
        }
        PerPageType::PerType(list) => {
            if list.len() != bits {
                return Err(cfg_err(
                    key,
                    format!(
                        "{} values given but a {:?} cell has {bits} page types (give one value or {bits})",
                        list.len(),
                        cell
                    ),
                ));
            }
            for (bit, n) in list.iter().enumerate() {
                out[PageType::of_bit(cell, bit as u32).index()] = *n;
            }
        }
    }
    for bit in 0..bits {
        if out[PageType::of_bit(cell, bit as u32).index()] == Nanos::ZERO {
            return Err(cfg_err(key, "latencies must be positive"));
        }
    }
    Ok(out)
}

/// Convert a ratio ≥ 1 to ppm (the only place floats are used, once at load).
/// tR per page type of a SOML-capable chip ([`SomlConfig::t_r`], else `t_r` × the
/// factor, rounded to the nearest ns).
fn soml_chip_t_r(
    s: &SomlConfig,
    t_r: &[Nanos; 4],
    cell: CellType,
    geometry: &Geometry,
) -> Result<[Nanos; 4], NandConfigError> {
    if let Some(explicit) = &s.t_r {
        if s.factor.is_some() {
            return Err(cfg_err("soml.factor", "give either soml.factor or soml.t_r, not both"));
        }
        return per_type("soml.t_r", explicit, cell);
    }
    // The factor as an exact ratio num/den: (layers + slots − 1)/(layers − 1) by
    // default, else the configured value in ppm.
    let (num, den) = match s.factor {
        Some(f) => (ratio_ppm("soml.factor", f, 10.0)?, PPM),
        None => {
            let layers = u64::from(geometry.layers());
            if layers < 2 {
                return Err(cfg_err(
                    "soml.factor",
                    "cannot be derived from a 1-layer chip ((layers + slots − 1)/(layers − 1)); \
                     set soml.factor or soml.t_r",
                ));
            }
            (layers + u64::from(geometry.partial_slots()) - 1, layers - 1)
        }
    };
    Ok(t_r.map(|t| Nanos((t.0 * num + den / 2) / den)))
}

fn ratio_ppm(key: &str, ratio: f64, max: f64) -> Result<u64, NandConfigError> {
    if !ratio.is_finite() || !(1.0..=max).contains(&ratio) {
        return Err(cfg_err(key, format!("{ratio} must be a number in [1, {max}]")));
    }
    Ok((ratio * PPM as f64).round() as u64)
}

fn layer_factors(cfg: Option<&LayerSpeedConfig>, layers: u32) -> Result<Vec<u64>, NandConfigError> {
    let Some(ls) = cfg else { return Ok(vec![PPM; layers as usize]) };
    let ratio = ratio_ppm("timing.layer_speed.ratio", ls.ratio, 100.0)?;
    if layers == 1 {
        if ratio != PPM {
            return Err(cfg_err(
                "timing.layer_speed.ratio",
                "a speed ratio other than 1 needs at least 2 layers",
            ));
        }
        return Ok(vec![PPM]);
    }
    let span = (layers - 1) as u64;
    let factors = (0..layers as u64)
        .map(|layer| {
            // Distance from the fast end, 0 ..= span.
            let d = match ls.slow_end {
                SlowEnd::Top => layer,
                SlowEnd::Bottom => span - layer,
            };
            match ls.curve {
                LayerCurve::Linear => PPM + ((ratio - PPM) * d + span / 2) / span,
                LayerCurve::Geometric => (ls.ratio.powf(d as f64 / span as f64) * PPM as f64).round() as u64,
            }
        })
        .collect();
    Ok(factors)
}

/// The rules of a `[suspension]` section. `max_per_op = 0` would let no read suspend
/// anything, so with `program` or `erase` on it contradicts the section and is refused
/// (with both off the section is off, as the experiments' "no suspension" rows write it,
/// and any cap is moot). `max_window = 0` has a meaning of its own (one read per
/// suspension) and is taken as given.
fn suspension_rules(s: &SuspensionConfig) -> Result<SuspensionRules, NandConfigError> {
    if s.max_per_op == 0 && (s.program || s.erase) {
        let on = match (s.program, s.erase) {
            (true, true) => "program = true and erase = true",
            (true, false) => "program = true",
            _ => "erase = true",
        };
        return Err(cfg_err(
            "suspension.max_per_op",
            format!(
                "0 suspensions per operation would let no read suspend anything, which contradicts {on}; give \
                 max_per_op = 1 or more (the default is 1), or turn suspension off with program = false and \
                 erase = false (or no [suspension] section)"
            ),
        ));
    }
    Ok(SuspensionRules {
        program: s.program,
        erase: s.erase,
        max_per_op: s.max_per_op,
        max_window: s.max_window,
    })
}

impl NandConfig {
    /// Check the configuration and derive the [`DeviceSpec`].
    pub fn validate(&self) -> Result<DeviceSpec, NandConfigError> {
        let geometry = self.geometry.validate()?;
        if geometry.planes_per_die() > MAX_PLANES_PER_DIE {
            return Err(cfg_err(
                "geometry.planes_per_die",
                format!("at most {MAX_PLANES_PER_DIE} planes per die are supported"),
            ));
        }
        let t = &self.timing;
        let cell = geometry.cell_type();
        let bus = match (t.bus.ns_per_byte, t.bus.width_bits, t.bus.rate_mts) {
            (Some(ns), None, None) => {
                if ns == Nanos::ZERO {
                    return Err(cfg_err("timing.bus.ns_per_byte", "must be positive"));
                }
                BusTiming::NsPerByte(ns.as_ns())
            }
            (None, Some(w), Some(r)) => {
                if w == 0 {
                    return Err(cfg_err("timing.bus.width_bits", "must be positive"));
                }
                if r == 0 {
                    return Err(cfg_err("timing.bus.rate_mts", "must be positive"));
                }
                BusTiming::Rate { width_bits: w, rate_mts: r }
            }
            _ => {
                return Err(cfg_err(
                    "timing.bus",
                    "give either `ns_per_byte` or both `width_bits` and `rate_mts`",
                ));
            }
        };
        let mut t_r = per_type("timing.t_r", &t.t_r, cell)?;
        let t_prog = per_type("timing.t_prog", &t.t_prog, cell)?;
        if t.t_bers == Nanos::ZERO {
            return Err(cfg_err("timing.t_bers", "must be positive"));
        }
        let layer_ppm = layer_factors(t.layer_speed.as_ref(), geometry.layers())?;

        let partial_erase_levels = match &self.partial_erase {
            None => None,
            Some(pe) => {
                if pe.levels == 0 || pe.levels > 16 {
                    return Err(cfg_err("partial_erase.levels", "must be in 1 ..= 16"));
                }
                let ppb = geometry.pages_per_block();
                if ppb % (1u32 << pe.levels) != 0 {
                    return Err(cfg_err(
                        "partial_erase.levels",
                        format!("pages_per_block {ppb} is not divisible by 2^{}", pe.levels),
                    ));
                }
                match t.t_pbers {
                    None => {
                        return Err(cfg_err("timing.t_pbers", "required when [partial_erase] is enabled"));
                    }
                    Some(n) if n == Nanos::ZERO => {
                        return Err(cfg_err("timing.t_pbers", "must be positive"));
                    }
                    Some(_) => {}
                }
                Some(pe.levels)
            }
        };
        let soml = match &self.soml {
            None => None,
            Some(s) => {
                if s.max_parts == 0 || s.max_parts > geometry.partial_slots().max(1) {
                    return Err(cfg_err(
                        "soml.max_parts",
                        format!(
                            "must be in 1 ..= {} (partial-read slots per page; partial reads of one SOML \
                             operation may not share bit-lines)",
                            geometry.partial_slots()
                        ),
                    ));
                }
                let decoders = s.decoders.unwrap_or(s.max_parts);
                if decoders == 0 {
                    return Err(cfg_err("soml.decoders", "must be positive"));
                }
                t_r = soml_chip_t_r(s, &t_r, cell, &geometry)?;
                Some(SomlRules { max_parts: s.max_parts, decoders })
            }
        };
        let suspension = self.suspension.as_ref().map(suspension_rules).transpose()?;

        // Every read senses the page 1 + re_reads times (`timing.re_reads`).
        let t_r = t_r.map(|n| Nanos(n.0 * (1 + u64::from(t.re_reads))));
        let ppb = geometry.pages_per_block();
        let mut read_ns = Vec::with_capacity(ppb as usize);
        let mut prog_ns = Vec::with_capacity(ppb as usize);
        for page in 0..ppb {
            let ty = geometry.page_type_of(page).index();
            let f = layer_ppm[geometry.layer_of(page) as usize];
            read_ns.push(t_r[ty].scale_ppm(f).as_ns());
            prog_ns.push(t_prog[ty].scale_ppm(f).as_ns());
        }
        let timing = Timing {
            t_cmd_read: t.t_cmd,
            t_cmd_program: t.t_cmd_program.unwrap_or(t.t_cmd),
            t_cmd_erase: t.t_cmd_erase.unwrap_or(t.t_cmd),
            bus,
            t_r,
            t_prog,
            t_bers: t.t_bers,
            t_pbers: if partial_erase_levels.is_some() { t.t_pbers } else { None },
            t_dbsy: t.t_dbsy,
            t_suspend_program: t.t_suspend_program,
            t_suspend_erase: t.t_suspend_erase,
            t_resume: t.t_resume,
            layer_ppm,
            read_ns,
            prog_ns,
        };
        Ok(DeviceSpec { config: self.clone(), geometry, timing, suspension, soml, partial_erase_levels })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::PageTypeOrder;

    fn base() -> NandConfig {
        NandConfig {
            geometry: GeometryConfig {
                channels: 1,
                chips_per_channel: 1,
                dies_per_chip: 1,
                planes_per_die: 2,
                blocks_per_plane: 8,
                pages_per_block: 48,
                page_size_bytes: 16384,
                partial_read_bytes: Some(4096),
                cell_type: CellType::Tlc,
                layers: 16,
                page_type_order: PageTypeOrder::Interleaved,
            },
            timing: TimingConfig {
                t_cmd: Nanos(70),
                t_cmd_program: None,
                t_cmd_erase: None,
                bus: BusConfig { ns_per_byte: None, width_bits: Some(8), rate_mts: Some(333) },
                t_r: PerPageType::PerType(vec![Nanos::from_us(90), Nanos::from_us(120), Nanos::from_us(180)]),
                t_prog: PerPageType::One(Nanos::from_us(900)),
                t_bers: Nanos::from_ms(10),
                t_pbers: None,
                t_dbsy: Nanos::ZERO,
                t_suspend_program: Nanos::ZERO,
                t_suspend_erase: Nanos::ZERO,
                t_resume: Nanos::ZERO,
                layer_speed: Some(LayerSpeedConfig {
                    ratio: 2.0,
                    curve: LayerCurve::Linear,
                    slow_end: SlowEnd::Top,
                }),
                re_reads: 0,
            },
            suspension: None,
            soml: None,
            partial_erase: None,
        }
    }

    #[test]
    fn rate_transfer_is_exact_on_the_total() {
        // 16 KiB at 8 bit × 333 MT/s: 16384 × 8000 / 2664 = 49201.2… → 49202 ns (ceil).
        // Per-byte truncation (3 ns/B) would give 49152 ns; per-byte ceil 65536 ns.
        let b = BusTiming::Rate { width_bits: 8, rate_mts: 333 };
        assert_eq!(b.transfer(16384), Nanos(49_202));
        assert_eq!(b.transfer(0), Nanos(0));
        assert_eq!(b.transfer(333), Nanos(1_000));
        assert_eq!(BusTiming::NsPerByte(10).transfer(8192), Nanos(81_920));
    }

    #[test]
    fn linear_layer_factor_spans_one_to_ratio() {
        let spec = base().validate().unwrap();
        let f = &spec.timing().layer_ppm;
        assert_eq!(f.len(), 16);
        assert_eq!(f[0], PPM);
        assert_eq!(f[15], 2 * PPM);
        // Equal increments of 1/15.
        assert_eq!(f[1], PPM + 66_667);
        assert_eq!(f[3], PPM + 200_000);
        // Page 0 is an LSB page on layer 0: 90 µs. The last page (MSB, layer 15): 360 µs.
        assert_eq!(spec.timing().read_array(0), Nanos::from_us(90));
        assert_eq!(spec.timing().read_array(47), Nanos::from_us(360));
        // Page 4 is CSB on layer 1 (3 word-lines per layer): 120 µs × (1 + 1/15) = 128 µs.
        assert_eq!(spec.timing().read_array(4), Nanos(128_000));
        assert_eq!(spec.timing().program_array(47), Nanos::from_us(1800));
    }

    #[test]
    fn geometric_and_bottom_slow() {
        let mut c = base();
        c.timing.layer_speed =
            Some(LayerSpeedConfig { ratio: 4.0, curve: LayerCurve::Geometric, slow_end: SlowEnd::Bottom });
        c.geometry.layers = 3;
        let spec = c.validate().unwrap();
        assert_eq!(spec.timing().layer_ppm, vec![4 * PPM, 2 * PPM, PPM]);
    }

    #[test]
    fn errors_name_the_key() {
        let mut c = base();
        c.timing.t_r = PerPageType::PerType(vec![Nanos(1), Nanos(2)]);
        assert_eq!(c.validate().unwrap_err().key, "timing.t_r");
        let mut c = base();
        c.timing.bus = BusConfig { ns_per_byte: Some(Nanos(10)), width_bits: Some(8), rate_mts: None };
        assert_eq!(c.validate().unwrap_err().key, "timing.bus");
        let mut c = base();
        c.timing.layer_speed.as_mut().unwrap().ratio = 0.5;
        assert_eq!(c.validate().unwrap_err().key, "timing.layer_speed.ratio");
        let mut c = base();
        c.partial_erase = Some(PartialEraseConfig { levels: 6 });
        c.timing.t_pbers = Some(Nanos::from_ms(9));
        // 48 pages are not divisible by 64.
        assert_eq!(c.validate().unwrap_err().key, "partial_erase.levels");
        let mut c = base();
        c.partial_erase = Some(PartialEraseConfig { levels: 2 });
        assert_eq!(c.validate().unwrap_err().key, "timing.t_pbers");
        let mut c = base();
        c.soml = Some(SomlConfig { max_parts: 5, decoders: None, factor: Some(1.063), t_r: None });
        assert_eq!(c.validate().unwrap_err().key, "soml.max_parts");
        // Both a factor and explicit latencies; no factor on a chip whose layer count
        // cannot give Eq. 1's default.
        let mut c = base();
        let us = PerPageType::PerType(vec![Nanos(1), Nanos(2), Nanos(3)]);
        c.soml = Some(SomlConfig { max_parts: 1, decoders: None, factor: Some(1.1), t_r: Some(us) });
        assert_eq!(c.validate().unwrap_err().key, "soml.factor");
        let mut c = base();
        c.geometry.layers = 1;
        c.timing.layer_speed = None;
        c.soml = Some(SomlConfig { max_parts: 1, decoders: None, factor: None, t_r: None });
        let e = c.validate().unwrap_err();
        assert_eq!(e.key, "soml.factor");
        assert!(e.to_string().contains("soml.t_r"), "{e}");
        let mut c = base();
        c.geometry.pages_per_block = 47;
        let e = c.validate().unwrap_err();
        assert_eq!(e.key, "geometry.pages_per_block");
        assert!(e.to_string().contains("`geometry.pages_per_block`"));
    }

    /// New-user trial: `max_per_op = 0` with suspension on was accepted, and no read
    /// ever suspended anything (`device.rs` compares the count with the cap), silently.
    /// With both kinds off the section is off and the cap moot; `max_window = 0` keeps
    /// its meaning (one read per suspension).
    #[test]
    fn zero_suspensions_per_op_with_suspension_on_is_refused() {
        let with = |program, erase, max_per_op, max_window| {
            let mut c = base();
            c.suspension = Some(SuspensionConfig { program, erase, max_per_op, max_window });
            c.validate()
        };
        for (program, erase, on) in [
            (true, true, "program = true and erase = true"),
            (true, false, "program = true"),
            (false, true, "erase = true"),
        ] {
            let e = with(program, erase, 0, None).unwrap_err();
            assert_eq!(e.key, "suspension.max_per_op");
            let msg = e.to_string();
            for want in [on, "max_per_op = 1 or more", "program = false and erase = false"] {
                assert!(msg.contains(want), "want {want:?} in: {msg}");
            }
        }
        let off = with(false, false, 0, None).unwrap().suspension().unwrap();
        assert!(!off.program && !off.erase);
        let one_read = with(true, true, 1, Some(Nanos::ZERO)).unwrap().suspension().unwrap();
        assert_eq!((one_read.max_per_op, one_read.max_window), (1, Some(Nanos::ZERO)));
    }

    #[test]
    fn toml_round_trip_accepts_both_latency_forms() {
        let text = r#"
            [geometry]
            channels = 1
            chips_per_channel = 1
            dies_per_chip = 1
            planes_per_die = 1
            blocks_per_plane = 4
            pages_per_block = 6
            page_size_bytes = 4096
            cell_type = "tlc"
            [timing]
            t_cmd = "70ns"
            bus = { ns_per_byte = 10 }
            t_r = ["90us", "120us", 180000]
            t_prog = "900us"
            t_bers = "10ms"
            [soml]
            max_parts = 1
            factor = 1.1
        "#;
        let c: NandConfig = toml::from_str(text).unwrap();
        let spec = c.validate().unwrap();
        // A SOML-capable chip reads slower everywhere: 1.1 × 180 µs.
        assert_eq!(spec.timing().read_array(2), Nanos::from_us(198));
        let back: NandConfig = toml::from_str(&toml::to_string(&c).unwrap()).unwrap();
        assert_eq!(back, c);
        let bad = text.replace("t_bers", "t_berz");
        assert!(toml::from_str::<NandConfig>(&bad).is_err());
    }

    /// Issue #8 item 12: a malformed latency said "data did not match any variant of
    /// untagged enum PerPageType". Every form of bad duration, in a scalar key and in the
    /// per-page-type key, now says what a duration looks like.
    #[test]
    fn bad_durations_say_what_a_duration_is() {
        let text = |key: &str, value: &str| {
            "[geometry]\nchannels = 1\nchips_per_channel = 1\ndies_per_chip = 1\nplanes_per_die = 1\n\
             blocks_per_plane = 4\npages_per_block = 6\npage_size_bytes = 4096\ncell_type = \"tlc\"\n\
             [timing]\nt_cmd = 70\nbus = { ns_per_byte = 10 }\nt_r = \"90us\"\nt_prog = \"900us\"\n\
             t_bers = \"10ms\"\n"
                .replace(&format!("{key} = "), &format!("{key} = {value} #"))
        };
        assert!(toml::from_str::<NandConfig>(&text("t_r", "\"90us\"")).is_ok());
        for key in ["t_r", "t_bers", "t_prog"] {
            for value in ["\"-5us\"", "\"abc\"", "-5", "1.5", "true", "\"5 parsecs\"", "[\"1us\", \"x\"]"] {
                if key == "t_bers" && value.starts_with('[') {
                    continue;
                }
                let e = toml::from_str::<NandConfig>(&text(key, value)).unwrap_err().to_string();
                assert!(e.contains("expected a non-negative duration like 78us"), "{key} = {value}: {e}");
                assert!(!e.contains("untagged"), "{key} = {value}: {e}");
                assert!(e.contains(key), "{key} = {value}: the key is named: {e}");
            }
        }
        // Both forms still parse, and a list may mix integers and strings.
        let c: NandConfig = toml::from_str(&text("t_r", "[90000, \"120us\", \"0.18ms\"]")).unwrap();
        assert_eq!(c.timing.t_r, PerPageType::PerType(vec![Nanos(90_000), Nanos(120_000), Nanos(180_000)]));
    }
}
