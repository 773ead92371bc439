//! The registry of reproducible papers: one [`Paper`] entry each, naming its experiment
//! files, its figures (with the paper's figure numbers and captions) and its headline
//! claims with the paper's magnitudes. Adding a paper (PEN, MBM, SOML) is one entry in
//! [`PAPERS`]; nothing else changes.
//!
//! Filters name axes by their name in the experiment file (`@load`: whichever load axis
//! of [`LOAD_AXES`] it has). A filter whose axis the experiment lacks is ignored, and
//! one marked optional (`?` before the axis) is also ignored when the axis lacks the
//! value: the load axis (`trace.time_scale`) is pinned to the recorded rate (1) when the
//! experiment has one, as the papers replay traces at their recorded rate.

/// Axis names a load (arrival-rate scaling) axis may have in an experiment file.
pub const LOAD_AXES: [&str; 3] = ["trace.time_scale", "time_scale", "load"];

/// Stands for whichever of [`LOAD_AXES`] the experiment has, in a filter.
pub const LOAD: &str = "@load";

/// The optional "recorded rate" filter every paper figure and claim carries.
const AT_RECORDED_RATE: (&str, &str) = ("?@load", "1");

/// How PEN's synthetic traces are made (the full further experiments need them).
const PEN_SYNTH: &str = "`scripts/pen-synth-traces.sh target/pen-synth` (the experiment's `trace_root`)";
/// PEN's over-provisioning levels, when the experiment has an `op` axis.
const OP7: &[(&str, &str)] = &[("?op", "7%")];
const OP25: &[(&str, &str)] = &[("?op", "25%")];

/// One paper.
pub struct Paper {
    /// Command-line name (`lamina reproduce <id>`).
    pub id: &'static str,
    /// Title and authors.
    pub title: &'static str,
    /// Where the text is (the shared papers folder).
    pub source: &'static str,
    /// The full experiment, relative to the experiments folder.
    pub full: &'static str,
    /// The `--quick` experiment (CI-sized), relative to the experiments folder.
    pub quick: &'static str,
    /// The axis whose values are the policies compared.
    pub policy_axis: &'static str,
    /// Figures, in the index's order.
    pub figures: &'static [FigureSpec],
    /// Headline claims.
    pub claims: &'static [Claim],
    /// Further experiments, for figures and claims whose axes the main experiment
    /// lacks (mbm-ftl's Fig. 9 needs a chips-per-channel axis); each runs into its own
    /// sweep folder, `sweep-<name>/`, in the same command.
    pub extras: &'static [Extra],
}

/// A further experiment of a paper, run by the same `lamina reproduce` command.
pub struct Extra {
    /// Short name: the sweep folder `sweep-<name>/` and the scope prefix of its claims.
    pub name: &'static str,
    /// What it is for, in the index.
    pub about: &'static str,
    /// The full experiment, relative to the experiments folder.
    pub full: &'static str,
    /// The `--quick` experiment (CI-sized), relative to the experiments folder; None
    /// when it has none (its traces must be made first, [`Extra::needs`]): `--quick`
    /// then lists it in the index as not run.
    pub quick: Option<&'static str>,
    /// How the full experiment's traces are made, when they are not the shared ones
    /// (empty: nothing to make).
    pub needs: &'static str,
    /// The axis whose values are the policies compared.
    pub policy_axis: &'static str,
    /// Join the policy axis with this axis: the policies become `policy@value` and the
    /// axis goes, so a figure or a claim can divide by one policy at one value of it
    /// (Fig. 9: every system relative to TBM at 2 chips per channel).
    pub join: Option<&'static str>,
    /// Its figures.
    pub figures: &'static [FigureSpec],
    /// Its claims.
    pub claims: &'static [Claim],
}

/// A figure of a paper (or one of ours that the paper's question needs).
pub struct FigureSpec {
    /// File stem in `figures/`.
    pub file: &'static str,
    /// Title drawn above the figure.
    pub title: &'static str,
    /// The paper's figure number, or `none (ours)` for a figure of ours.
    pub paper_figure: &'static str,
    /// Caption in the index.
    pub caption: &'static str,
    /// What is drawn.
    pub kind: FigureKind,
}

/// How a figure is drawn from the sweep.
pub enum FigureKind {
    /// `metric` over the policy axis, normalised to `baseline`, grouped by the other axes.
    Bars { metric: &'static str, baseline: &'static str, filters: &'static [(&'static str, &'static str)] },
    /// `metric` relative to `baseline` against the first of `x` the experiment has, one
    /// line per policy, geometric mean over the rest; not drawn without such an axis.
    Line {
        metric: &'static str,
        baseline: &'static str,
        x: &'static [&'static str],
        filters: &'static [(&'static str, &'static str)],
    },
    /// Write response-time CDF of each policy, on the first value of every axis the
    /// filters leave free.
    WriteCdf { filters: &'static [(&'static str, &'static str)] },
    /// Tail latency of one request class (`read`, `write`) against the percentile, one
    /// line per policy, from the results' `<class>.p<q>_ns` columns, on one
    /// configuration: the filters' values, the first value of every other axis.
    Tail { class: &'static str, filters: &'static [(&'static str, &'static str)] },
    /// Write latency over arrival time (mean and maximum per window, `windows` windows on
    /// one arrival axis) of each policy, from the runs' per-request logs (the spec's
    /// `latency_logs`), on the first value of every axis the filters leave free.
    WriteTimeline { filters: &'static [(&'static str, &'static str)], windows: usize },
}

/// Which way a claim says the metric moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// The ratio is below 1 (less time: better).
    Lower,
    /// The ratio is above 1.
    Higher,
    /// The ratio is about the paper's (within [`ABOUT_TOLERANCE`] of it): a claim that
    /// two systems are "almost the same".
    About,
}

/// How far (as a relative change) ours may lie from the paper's change for an
/// [`Direction::About`] claim to count as reproduced: 10 %, above the largest
/// per-workload difference mbm-ftl calls "almost the same" (+7.9 % erases, §VI-C).
pub const ABOUT_TOLERANCE: f64 = 0.10;

impl Direction {
    /// `lower` / `higher`.
    pub fn name(self) -> &'static str {
        match self {
            Direction::Lower => "lower",
            Direction::Higher => "higher",
            Direction::About => "about equal",
        }
    }
}

/// One headline claim, checked as a geometric-mean ratio over the runs its filters keep.
pub struct Claim {
    /// Short id (a row key in claims.csv).
    pub id: &'static str,
    /// The claim in words, with where the paper makes it.
    pub statement: &'static str,
    /// The metric (a results column).
    pub metric: &'static str,
    /// The policy whose ratio is checked.
    pub policy: &'static str,
    /// The policy it is divided by.
    pub baseline: &'static str,
    /// Which way the paper says the ratio goes.
    pub direction: Direction,
    /// The paper's relative change (e.g. -0.20 for "20 % lower"); None when the paper
    /// states only the direction.
    pub paper_change: Option<f64>,
    /// Runs the claim covers.
    pub filters: &'static [(&'static str, &'static str)],
    /// A trend claim: the ratio at the second value of this axis against the first
    /// (the claim is about how the ratio moves), e.g. `("variation", "2", "4")`.
    pub trend: Option<(&'static str, &'static str, &'static str)>,
    /// A claim about the best configuration ("up to 66.8 %"): ours is the smallest
    /// ratio over the covered configurations (the largest for [`Direction::Higher`])
    /// instead of their geometric mean.
    pub best: bool,
}

const DB_4X2: &[(&str, &str)] = &[("preset", "die-binding-4x2"), AT_RECORDED_RATE];
const DB_4X4: &[(&str, &str)] = &[("preset", "die-binding-4x4"), AT_RECORDED_RATE];
const LACR_MAIN: &[(&str, &str)] = &[("variation", "2"), ("layers", "16"), AT_RECORDED_RATE];
/// The soml-read claims and figures: the loaded case (load 0.01), since the paper's
/// workloads keep its chips busy and the shared traces at their recorded rate do not.
const SOML_LOADED: &[(&str, &str)] = &[("?@load", "0.01")];
/// The CDFs' trace: financial1, the one the die-binding paper discusses by name (the
/// first trace of the experiment when it lacks it).
const FINANCIAL1: (&str, &str) = ("?trace", "ssdsim-ascii/financial1-head10k.ascii");

/// mbm-ftl's Fig. 12 configuration: the MSNFS analogue (full), the MSR hm_0 sample
/// (`--quick`, which has no MSNFS analogue).
const MSNFS_TAIL: &[(&str, &str)] = &[("?trace", "msnfs.trace"), ("?trace", "msr-csv/hm_0-window1k.csv")];
/// mbm-ftl's Fig. 13 configuration: the Financial analogue (full), the Financial1 head
/// (`--quick`).
const FINANCIAL_TAIL: &[(&str, &str)] = &[("?trace", "financial.trace"), FINANCIAL1];

/// A claim on the ratio `policy / baseline` of `metric` over the runs `filters` keep.
const fn claim(
    id: &'static str,
    statement: &'static str,
    metric: &'static str,
    (policy, baseline): (&'static str, &'static str),
    direction: Direction,
    paper_change: Option<f64>,
    filters: &'static [(&'static str, &'static str)],
) -> Claim {
    Claim {
        id,
        statement,
        metric,
        policy,
        baseline,
        direction,
        paper_change,
        filters,
        trend: None,
        best: false,
    }
}

/// `c` as a claim about the best configuration ("up to").
const fn best(c: Claim) -> Claim {
    Claim { best: true, ..c }
}

/// `c` as a trend claim: the ratio at `to` of `axis` against the ratio at `from`.
const fn trend(c: Claim, axis_from_to: (&'static str, &'static str, &'static str)) -> Claim {
    Claim { trend: Some(axis_from_to), ..c }
}

/// mbm-ftl's headline (the main experiment and the shared traces check it).
const MBM_MEAN_RESPONSE: Claim = claim(
    "mbm-mean-response",
    "MBM lowers the mean response time by 43.6 % on average against TBM (abstract, §VI-B, Fig. 8)",
    "all.mean_ns",
    ("mbm", "tbm"),
    Direction::Lower,
    Some(-0.436),
    &[],
);

/// Every paper `lamina reproduce` knows.
pub const PAPERS: &[Paper] = &[
    Paper {
        id: "die-binding",
        title: "State-based Die Binding for Enhancing SSD Internal Parallelism (S. Jin, I. Shin; UQ)",
        source: "shared/papers/state-based-die-binding.txt",
        full: "die-binding.toml",
        quick: "ci/die-binding-tiny.toml",
        policy_axis: "sched.placement",
        figures: &[
            FigureSpec {
                file: "fig3-ssd1-write-response",
                title: "Fig. 3, SSD1 (4 ch × 2 ways): write response time, static = 1",
                paper_figure: "Fig. 3",
                caption: "Average response time of write requests in SSD1 (4 channels × 2 ways), relative to static (address-based) binding.",
                kind: FigureKind::Bars { metric: "write.mean_ns", baseline: "static", filters: DB_4X2 },
            },
            FigureSpec {
                file: "fig4-ssd2-write-response",
                title: "Fig. 4, SSD2 (4 ch × 4 ways): write response time, static = 1",
                paper_figure: "Fig. 4",
                caption: "Average response time of write requests in SSD2 (4 channels × 4 ways), relative to static binding.",
                kind: FigureKind::Bars { metric: "write.mean_ns", baseline: "static", filters: DB_4X4 },
            },
            FigureSpec {
                file: "load-ssd1-write-response",
                title: "SSD1: write response time against load, static = 1",
                paper_figure: "none (ours)",
                caption: "Write response time relative to static against load (trace.time_scale: arrival gaps scaled; 1 = recorded rate), SSD1, geometric mean over the traces. The paper evaluates the recorded rate only.",
                kind: FigureKind::Line {
                    metric: "write.mean_ns",
                    baseline: "static",
                    x: &LOAD_AXES,
                    filters: &[("preset", "die-binding-4x2")],
                },
            },
            FigureSpec {
                file: "cdf-ssd1-write",
                title: "SSD1: write response-time CDF by policy",
                paper_figure: "none (ours)",
                caption: "Write response-time CDF of each policy on financial1, SSD1, recorded rate (from the runs' report histograms).",
                kind: FigureKind::WriteCdf {
                    filters: &[("preset", "die-binding-4x2"), AT_RECORDED_RATE, FINANCIAL1],
                },
            },
        ],
        claims: &[
            claim(
                "uq-ssd1",
                "UQ improves the average write response time by more than 20 % over static binding on SSD1 (abstract, §4, Fig. 3)",
                "write.mean_ns",
                ("uq", "static"),
                Direction::Lower,
                Some(-0.20),
                DB_4X2,
            ),
            claim(
                "uq-ssd2",
                "UQ improves the average write response time by more than 20 % over static binding on SSD2 (abstract, §4, Fig. 4)",
                "write.mean_ns",
                ("uq", "static"),
                Direction::Lower,
                Some(-0.20),
                DB_4X4,
            ),
            claim(
                "dynamic-ssd1",
                "SSDsim's dynamic binding performs about as well as UQ on SSD1, the similar best (§4, Fig. 3)",
                "write.mean_ns",
                ("dynamic", "static"),
                Direction::Lower,
                Some(-0.20),
                DB_4X2,
            ),
            claim(
                "queue-ssd1",
                "Queue-based binding is faster than static binding on SSD1 (§4, Fig. 3: every other policy is below 1)",
                "write.mean_ns",
                ("queue", "static"),
                Direction::Lower,
                None,
                DB_4X2,
            ),
            claim(
                "write-order-ssd1",
                "Write-order binding is faster than static binding on SSD1 (§4, Fig. 3)",
                "write.mean_ns",
                ("write-order", "static"),
                Direction::Lower,
                None,
                DB_4X2,
            ),
            claim(
                "uq-beats-dynamic-ssd2",
                "On SSD2 UQ beats the dynamic policy (§4, Fig. 4; by about 14 % on financial1, no average given)",
                "write.mean_ns",
                ("uq", "dynamic"),
                Direction::Lower,
                None,
                DB_4X4,
            ),
        ],
        extras: &[],
    },
    Paper {
        id: "lacr",
        title: "Layer-Aware Request Scheduling for 3D Flash-Based SSDs (Xu, Du, Ding; IEEE Access 2021; LaCR)",
        source: "shared/papers/layer-aware-chip-redirection.txt",
        full: "lacr.toml",
        quick: "ci/lacr-tiny.toml",
        policy_axis: "sched.placement",
        figures: &[
            FigureSpec {
                file: "fig5b-write-queue-time",
                title: "Fig. 5(b): write queue time, static = 1",
                paper_figure: "Fig. 5(b)",
                caption: "Write queue time of OCR and LaCR relative to the static baseline (variation 2, 16 layers).",
                kind: FigureKind::Bars {
                    metric: "write_wait.mean_ns",
                    baseline: "static",
                    filters: LACR_MAIN,
                },
            },
            FigureSpec {
                file: "fig6a-write-response",
                title: "Fig. 6(a): write response time, static = 1",
                paper_figure: "Fig. 6(a)",
                caption: "Write response time relative to static (variation 2, 16 layers).",
                kind: FigureKind::Bars { metric: "write.mean_ns", baseline: "static", filters: LACR_MAIN },
            },
            FigureSpec {
                file: "fig6b-overall-response",
                title: "Fig. 6(b): overall response time, static = 1",
                paper_figure: "Fig. 6(b)",
                caption: "Overall (read and write) response time relative to static (variation 2, 16 layers).",
                kind: FigureKind::Bars { metric: "all.mean_ns", baseline: "static", filters: LACR_MAIN },
            },
            FigureSpec {
                file: "fig7a-layers",
                title: "Fig. 7: write response time against layers (variation 4)",
                paper_figure: "Fig. 7",
                caption: "Sensitivity to the layer count at layer speed variation 4: write response time relative to static, geometric mean over the traces.",
                kind: FigureKind::Line {
                    metric: "write.mean_ns",
                    baseline: "static",
                    x: &["layers"],
                    filters: &[("variation", "4"), AT_RECORDED_RATE],
                },
            },
            FigureSpec {
                file: "fig7b-variation",
                title: "Fig. 7: write response time against variation (16 layers)",
                paper_figure: "Fig. 7",
                caption: "Sensitivity to the layer speed variation with 16 layers: write response time relative to static, geometric mean over the traces.",
                kind: FigureKind::Line {
                    metric: "write.mean_ns",
                    baseline: "static",
                    x: &["variation"],
                    filters: &[("layers", "16"), AT_RECORDED_RATE],
                },
            },
            FigureSpec {
                file: "load-write-response",
                title: "Write response time against load, static = 1",
                paper_figure: "none (ours)",
                caption: "Write response time relative to static against load (trace.time_scale; 1 = recorded rate), variation 2, 16 layers, geometric mean over the traces.",
                kind: FigureKind::Line {
                    metric: "write.mean_ns",
                    baseline: "static",
                    x: &LOAD_AXES,
                    filters: &[("variation", "2"), ("layers", "16")],
                },
            },
            FigureSpec {
                file: "cdf-write",
                title: "Write response-time CDF by policy",
                paper_figure: "none (ours)",
                caption: "Write response-time CDF of each policy on financial1 (variation 2, 16 layers, recorded rate).",
                kind: FigureKind::WriteCdf {
                    filters: &[("variation", "2"), ("layers", "16"), AT_RECORDED_RATE, FINANCIAL1],
                },
            },
        ],
        claims: &[
            claim(
                "ocr-overall",
                "OCR reduces the I/O (overall) response time by 3.8 % on average against static (§V-B, Fig. 6(b))",
                "all.mean_ns",
                ("ocr", "static"),
                Direction::Lower,
                Some(-0.038),
                LACR_MAIN,
            ),
            claim(
                "lacr-overall",
                "LaCR reduces the I/O (overall) response time by 6.5 % on average against static (§V-B, Fig. 6(b))",
                "all.mean_ns",
                ("lacr", "static"),
                Direction::Lower,
                Some(-0.065),
                LACR_MAIN,
            ),
            claim(
                "ocr-write",
                "OCR improves the write response time by 6.2 % on average (reading 1 of §V-B's \"improvements for write request\": response time, as §I says for LaCR's 8.3 %; Fig. 6(a))",
                "write.mean_ns",
                ("ocr", "static"),
                Direction::Lower,
                Some(-0.062),
                LACR_MAIN,
            ),
            claim(
                "lacr-write",
                "LaCR improves the write response time by 8.3 % on average (reading 1: §I, §V-B, Fig. 6(a))",
                "write.mean_ns",
                ("lacr", "static"),
                Direction::Lower,
                Some(-0.083),
                LACR_MAIN,
            ),
            claim(
                "lacr-beats-ocr",
                "LaCR performs best: its write response time is below OCR's (§V-B; 0.917 / 0.938 - 1 = -2.2 % from the two averages)",
                "write.mean_ns",
                ("lacr", "ocr"),
                Direction::Lower,
                Some(-0.022),
                LACR_MAIN,
            ),
            claim(
                "ocr-write-queue",
                "OCR improves the write queue time by 6.2 % on average (reading 2: §V-B cites Fig. 5(b), the write queue time, for the 6.2 % / 8.3 %)",
                "write_wait.mean_ns",
                ("ocr", "static"),
                Direction::Lower,
                Some(-0.062),
                LACR_MAIN,
            ),
            claim(
                "lacr-write-queue",
                "LaCR improves the write queue time by 8.3 % on average (reading 2: the abstract and §V-B, Fig. 5(b))",
                "write_wait.mean_ns",
                ("lacr", "static"),
                Direction::Lower,
                Some(-0.083),
                LACR_MAIN,
            ),
            trend(
                claim(
                    "ocr-worse-with-variation",
                    "With 16 layers OCR gets worse as the layer speed variation grows from 2 to 4 (§V-C, Fig. 7)",
                    "write.mean_ns",
                    ("ocr", "static"),
                    Direction::Higher,
                    None,
                    &[("layers", "16"), AT_RECORDED_RATE],
                ),
                ("variation", "2", "4"),
            ),
            trend(
                claim(
                    "lacr-better-with-variation",
                    "With 16 layers LaCR gets better as the layer speed variation grows from 2 to 4 (§V-C, Fig. 7)",
                    "write.mean_ns",
                    ("lacr", "static"),
                    Direction::Lower,
                    None,
                    &[("layers", "16"), AT_RECORDED_RATE],
                ),
                ("variation", "2", "4"),
            ),
            trend(
                claim(
                    "lacr-gain-shrinks-with-layers",
                    "At variation 4 LaCR's write improvement shrinks as the layer count grows from 16 to 64 (§V-C, Fig. 7)",
                    "write.mean_ns",
                    ("lacr", "static"),
                    Direction::Higher,
                    None,
                    &[("variation", "4"), AT_RECORDED_RATE],
                ),
                ("layers", "16", "64"),
            ),
        ],
        extras: &[],
    },
    Paper {
        id: "soml",
        title: "SOML Read: Rethinking the Read Operation Granularity of 3D NAND SSDs (Liu, Kotra, Jung, Kandemir, Das)",
        source: "shared/papers/soml-read.txt",
        full: "soml.toml",
        quick: "ci/soml-tiny.toml",
        policy_axis: "system",
        figures: &[
            FigureSpec {
                file: "fig9a-throughput",
                title: "Fig. 9a: throughput (IOPS), 8-chip baseline = 1, load 0.01",
                paper_figure: "Fig. 9a",
                caption: "Throughput of the 8-chip baseline, the 8-chip SOML system and the 16-chip baseline, relative to the 8-chip baseline, at load 0.01 (arrival gaps compressed 100-fold: the paper's workloads keep the chips busy; at the recorded rate these traces leave the dies at most 5 % busy).",
                kind: FigureKind::Bars { metric: "iops", baseline: "base8", filters: SOML_LOADED },
            },
            FigureSpec {
                file: "fig9b-write-latency",
                title: "Fig. 9b: mean write latency, 8-chip baseline = 1, load 0.01",
                paper_figure: "Fig. 9b",
                caption: "Mean write response time relative to the 8-chip baseline, load 0.01.",
                kind: FigureKind::Bars { metric: "write.mean_ns", baseline: "base8", filters: SOML_LOADED },
            },
            FigureSpec {
                file: "fig9c-read-latency",
                title: "Fig. 9c: mean read latency, 8-chip baseline = 1, load 0.01",
                paper_figure: "Fig. 9c",
                caption: "Mean read response time relative to the 8-chip baseline, load 0.01.",
                kind: FigureKind::Bars { metric: "read.mean_ns", baseline: "base8", filters: SOML_LOADED },
            },
            FigureSpec {
                file: "fig10a-queued-reads",
                title: "Fig. 10a: reads queued per chip, 8-chip baseline = 1, load 0.01",
                paper_figure: "Fig. 10a",
                caption: "Time-weighted mean number of page reads waiting in a chip's read queue (one die per chip on these presets), relative to the 8-chip baseline, load 0.01.",
                kind: FigureKind::Bars {
                    metric: "utilisation.read_queue_per_die",
                    baseline: "base8",
                    filters: SOML_LOADED,
                },
            },
            FigureSpec {
                file: "load-read-latency",
                title: "Mean read latency against load, 8-chip baseline = 1",
                paper_figure: "none (ours)",
                caption: "Mean read response time relative to the 8-chip baseline against load (trace.time_scale; 1 = recorded rate), geometric mean over the traces.",
                kind: FigureKind::Line {
                    metric: "read.mean_ns",
                    baseline: "base8",
                    x: &LOAD_AXES,
                    filters: &[],
                },
            },
        ],
        claims: &[
            claim(
                "soml8-throughput-vs-base8",
                "The 8-chip SOML system has about 2.8x the throughput of the 8-chip baseline (abstract, §6.2.1, Fig. 9a)",
                "iops",
                ("soml8", "base8"),
                Direction::Higher,
                Some(1.8),
                SOML_LOADED,
            ),
            claim(
                "soml8-throughput-vs-base16",
                "The 8-chip SOML system outperforms the 16-chip baseline in throughput (abstract, §6.2.1, Fig. 9a)",
                "iops",
                ("soml8", "base16"),
                Direction::Higher,
                None,
                SOML_LOADED,
            ),
            claim(
                "soml8-read-latency",
                "SOML reads lower the mean read latency against the 8-chip baseline (§6.2.1, Fig. 9c)",
                "read.mean_ns",
                ("soml8", "base8"),
                Direction::Lower,
                None,
                SOML_LOADED,
            ),
            claim(
                "soml8-write-latency",
                "SOML reads lower the mean write latency too (§6.2, Fig. 9b; the paper's larger drop for writes than for reads is compared in docs/results.md)",
                "write.mean_ns",
                ("soml8", "base8"),
                Direction::Lower,
                None,
                SOML_LOADED,
            ),
            claim(
                "soml8-queued-reads",
                "The SOML system queues fewer reads per chip than the 8-chip baseline (§6.2, Fig. 10a)",
                "utilisation.read_queue_per_die",
                ("soml8", "base8"),
                Direction::Lower,
                None,
                SOML_LOADED,
            ),
            claim(
                "soml8-vs-remap",
                "SOML reads beat remapping (Micropages-style co-location, the `remap` system) on read latency (§6.2.2, Fig. 13)",
                "read.mean_ns",
                ("soml8", "remap"),
                Direction::Lower,
                None,
                SOML_LOADED,
            ),
            claim(
                "soml8-vs-remap-writes",
                "SOML reads beat remapping on write latency too (§6.2.2, Fig. 13: remapping's copies are extra programs)",
                "write.mean_ns",
                ("soml8", "remap"),
                Direction::Lower,
                None,
                SOML_LOADED,
            ),
            claim(
                "soml8-vs-suspension",
                "SOML reads beat program/erase suspension on read latency (§6.2.2, Fig. 13)",
                "read.mean_ns",
                ("soml8", "base8-susp"),
                Direction::Lower,
                None,
                SOML_LOADED,
            ),
            claim(
                "base16-queued-reads",
                "The 16-chip baseline still queues fewer reads per chip than the SOML system (§6.2, Fig. 10a)",
                "utilisation.read_queue_per_die",
                ("base16", "soml8"),
                Direction::Lower,
                None,
                SOML_LOADED,
            ),
        ],
        extras: &[],
    },
    Paper {
        id: "pen",
        title: "PEN: Design and Evaluation of Partial-Erase for 3D NAND-Based High Density SSDs (Liu, Choi, Jung, Kandemir, Das; FAST 2018)",
        source: "shared/papers/pen-partial-erase.txt",
        full: "pen.toml",
        quick: "ci/pen-tiny.toml",
        policy_axis: "system",
        figures: &[
            FigureSpec {
                file: "fig12a-write-latency",
                title: "Fig. 12a: mean write latency, NFTL baseline = 1",
                paper_figure: "Fig. 12a",
                caption: "Mean write response time of NFTL and the Superblock FTL (4 + 1 and 4 + 4 blocks) with block erase only and with PEN, relative to NFTL with block erase, at the traces' recorded rate (the full experiment's synthetic traces: `scripts/pen-synth-traces.sh target/pen-synth`, the experiment's own trace root).",
                kind: FigureKind::Bars {
                    metric: "write.mean_ns",
                    baseline: "nftl",
                    filters: &[AT_RECORDED_RATE],
                },
            },
            FigureSpec {
                file: "fig12b-iops",
                title: "Fig. 12b: throughput (IOPS), NFTL baseline = 1",
                paper_figure: "Fig. 12b",
                caption: "Throughput relative to NFTL with block erase only, at the recorded rate.",
                kind: FigureKind::Bars { metric: "iops", baseline: "nftl", filters: &[AT_RECORDED_RATE] },
            },
            FigureSpec {
                file: "fig13a-waf",
                title: "Fig. 13a: write amplification, NFTL baseline = 1",
                paper_figure: "Fig. 13a",
                caption: "Write amplification (flash programs per host page program) relative to NFTL with block erase only.",
                kind: FigureKind::Bars { metric: "waf", baseline: "nftl", filters: &[AT_RECORDED_RATE] },
            },
            FigureSpec {
                file: "fig13b-aep",
                title: "Fig. 13b: erases per page (AEP), NFTL baseline = 1",
                paper_figure: "Fig. 13b",
                caption: "Mean erases per page over the replay alone (preconditioning excluded; a partial erase counts on the pages it erases), relative to NFTL with block erase only.",
                kind: FigureKind::Bars {
                    metric: "erases.per_page_replay.mean",
                    baseline: "nftl",
                    filters: &[AT_RECORDED_RATE],
                },
            },
            FigureSpec {
                file: "fig13c-vep",
                title: "Fig. 13c: variance of erases per page (VEP), NFTL baseline = 1",
                paper_figure: "Fig. 13c",
                caption: "Variance of the erases per page over the replay alone (preconditioning excluded), relative to NFTL with block erase only.",
                kind: FigureKind::Bars {
                    metric: "erases.per_page_replay.variance",
                    baseline: "nftl",
                    filters: &[AT_RECORDED_RATE],
                },
            },
            FigureSpec {
                file: "fig12c-gftl",
                title: "Fig. 12c: mean write latency, PEN (NFTL) = 1",
                paper_figure: "Fig. 12c",
                caption: "Mean write response time of every system relative to NFTL with PEN, at the recorded rate; Fig. 12c's bars are the baseline (`nftl`) and GFTL, with one partial-GC step per write (`gftl`) and with a whole cleaning reserved per write (`gftl-keepup`; docs/ftl.md, \"GFTL\").",
                kind: FigureKind::Bars {
                    metric: "write.mean_ns",
                    baseline: "nftl-pen",
                    filters: &[AT_RECORDED_RATE],
                },
            },
            FigureSpec {
                file: "fig16-superblock-write-latency",
                title: "Fig. 16: Superblock FTL mean write latency, 4 + 5 block erase = 1",
                paper_figure: "Fig. 16",
                caption: "Mean write response time of the Superblock FTL in the paper's two configurations (4 logical blocks with 5 physical blocks, `sb4+5`, and with 8, `sb4+8`), block erase only and with PEN, relative to `sb4+5` with block erase, at the recorded rate. Our copy of the paper breaks off after \"Figures 16a and 16b plot the normalized\", so which metrics Fig. 16 plots is not known; the abstract's −47.9 % is the Superblock write latency, checked per configuration in the claims.",
                kind: FigureKind::Bars {
                    metric: "write.mean_ns",
                    baseline: "sb4+5",
                    filters: &[AT_RECORDED_RATE],
                },
            },
        ],
        claims: &[
            claim(
                "nftl-pen-write-latency",
                "PEN lowers NFTL's mean write latency by 44.3 % (abstract, §6.2.1, Fig. 12a)",
                "write.mean_ns",
                ("nftl-pen", "nftl"),
                Direction::Lower,
                Some(-0.443),
                &[AT_RECORDED_RATE],
            ),
            claim(
                "nftl-pen-iops",
                "PEN raises NFTL's throughput 1.43x (§6.2.1, Fig. 12b)",
                "iops",
                ("nftl-pen", "nftl"),
                Direction::Higher,
                Some(0.43),
                &[AT_RECORDED_RATE],
            ),
            claim(
                "nftl-pen-waf",
                "PEN lowers NFTL's write amplification 2.67x (§6.2.1, Fig. 13a)",
                "waf",
                ("nftl-pen", "nftl"),
                Direction::Lower,
                Some(-0.6255),
                &[AT_RECORDED_RATE],
            ),
            claim(
                "nftl-pen-aep",
                "PEN lowers the average erases per page (§6.2.1, Fig. 13b; ours over the replay alone)",
                "erases.per_page_replay.mean",
                ("nftl-pen", "nftl"),
                Direction::Lower,
                None,
                &[AT_RECORDED_RATE],
            ),
            // Fig. 12c: GFTL (partial GC, block erase) against PEN. The paper gives no
            // number; both of our GFTL schedules are checked (docs/results.md).
            claim(
                "gftl-write-latency",
                "PEN's write latency is below GFTL's, whose partial GC must reserve a long time per request in the big block (§6.2.1, Fig. 12c); GFTL with one partial step per write",
                "write.mean_ns",
                ("nftl-pen", "gftl"),
                Direction::Lower,
                None,
                &[AT_RECORDED_RATE],
            ),
            claim(
                "gftl-keepup-write-latency",
                "PEN's write latency is below GFTL's (§6.2.1, Fig. 12c); GFTL reserving a whole block cleaning per write, so that its partial GC keeps up",
                "write.mean_ns",
                ("nftl-pen", "gftl-keepup"),
                Direction::Lower,
                None,
                &[AT_RECORDED_RATE],
            ),
            // The superblock baseline depends on over-provisioning (the paper gives
            // none): checked apart at 7 % and 25 %, so one cannot hide the other.
            claim(
                "superblock-pen-write-latency-op7",
                "PEN lowers the Superblock FTL's (4 + 1 blocks) mean write latency by 47.9 % (abstract, §6.2.2, Fig. 16a); 7 % over-provisioning",
                "write.mean_ns",
                ("sb4+5-pen", "sb4+5"),
                Direction::Lower,
                Some(-0.479),
                &[AT_RECORDED_RATE, ("?op", "7%")],
            ),
            claim(
                "superblock-pen-write-latency-op25",
                "PEN lowers the Superblock FTL's (4 + 1 blocks) mean write latency by 47.9 % (abstract, §6.2.2, Fig. 16a); 25 % over-provisioning",
                "write.mean_ns",
                ("sb4+5-pen", "sb4+5"),
                Direction::Lower,
                Some(-0.479),
                &[AT_RECORDED_RATE, ("?op", "25%")],
            ),
            // Fig. 16's second configuration (§6.2.2: 4 logical blocks with 8 physical).
            claim(
                "superblock48-pen-write-latency-op7",
                "PEN lowers the Superblock FTL's (4 logical blocks in 8 physical) mean write latency by 47.9 % (abstract, §6.2.2, Fig. 16; which panel is not in our copy); 7 % over-provisioning",
                "write.mean_ns",
                ("sb4+8-pen", "sb4+8"),
                Direction::Lower,
                Some(-0.479),
                &[AT_RECORDED_RATE, ("?op", "7%")],
            ),
            claim(
                "superblock48-pen-write-latency-op25",
                "PEN lowers the Superblock FTL's (4 logical blocks in 8 physical) mean write latency by 47.9 % (abstract, §6.2.2, Fig. 16; which panel is not in our copy); 25 % over-provisioning",
                "write.mean_ns",
                ("sb4+8-pen", "sb4+8"),
                Direction::Lower,
                Some(-0.479),
                &[AT_RECORDED_RATE, ("?op", "25%")],
            ),
        ],
        extras: &[
            Extra {
                name: "fig3-5-blocksize",
                about: "Fig. 3–5: the \"Big Block\" problem, NFTL with block erase at 72, 144, 288 and 576 pages per block and equal capacity (configurations (a)–(d)).",
                full: "pen-blocksize.toml",
                quick: Some("ci/pen-blocksize-tiny.toml"),
                needs: PEN_SYNTH,
                policy_axis: "config",
                join: None,
                figures: &[
                    FigureSpec {
                        file: "fig3-write-latency",
                        title: "Fig. 3: NFTL mean write latency by pages per block, (a) 72 pages = 1",
                        paper_figure: "Fig. 3a/b",
                        caption: "Mean write response time of NFTL (block erase only) with 72 (a), 144 (b), 288 (c) and 576 (d) pages per block at equal capacity, relative to (a). The paper breaks it down into GC spare-area reads, reads, writes and erases; the sweep's results carry the part spent behind GC and the merges' spare-area reads (`gc.time.spare_reads_ns`).",
                        kind: FigureKind::Bars { metric: "write.mean_ns", baseline: "a", filters: &[] },
                    },
                    FigureSpec {
                        file: "fig3-gc-blocked",
                        title: "Fig. 3: write latency spent behind GC, (a) = 1",
                        paper_figure: "Fig. 3a/b",
                        caption: "The mean time a write waits behind GC (`latency_attribution.write.gc_blocked`), relative to (a).",
                        kind: FigureKind::Bars {
                            metric: "latency_attribution.write.gc_blocked.mean_ns",
                            baseline: "a",
                            filters: &[],
                        },
                    },
                    FigureSpec {
                        file: "fig4-gc-count",
                        title: "Fig. 4: GC invocations (merges), (a) = 1",
                        paper_figure: "Fig. 4",
                        caption: "Merges run during the replay, relative to (a).",
                        kind: FigureKind::Bars { metric: "gc.jobs", baseline: "a", filters: &[] },
                    },
                    FigureSpec {
                        file: "fig5-waf",
                        title: "Fig. 5: write amplification, (a) = 1",
                        paper_figure: "Fig. 5",
                        caption: "Write amplification relative to (a).",
                        kind: FigureKind::Bars { metric: "waf", baseline: "a", filters: &[] },
                    },
                ],
                claims: &[
                    claim(
                        "blocksize-write-latency",
                        "NFTL's write latency grows with the pages per block, 72 → 576 (§2.3, Fig. 3)",
                        "write.mean_ns",
                        ("d", "a"),
                        Direction::Higher,
                        None,
                        &[],
                    ),
                    claim(
                        "blocksize-waf",
                        "NFTL's write amplification grows from 2.1 at 72 pages per block to 5.1 at 576 on the high write-intensive workloads (§2.3, Fig. 5)",
                        "waf",
                        ("d", "a"),
                        Direction::Higher,
                        Some(5.1 / 2.1 - 1.0),
                        &[],
                    ),
                    claim(
                        "blocksize-gc-count",
                        "GC invocations halve per doubling of the pages per block (1/8 from 72 to 576), except on the most write-intensive workloads, where they grow (§2.3, Fig. 4)",
                        "gc.jobs",
                        ("d", "a"),
                        Direction::Lower,
                        Some(-0.875),
                        &[],
                    ),
                ],
            },
            Extra {
                name: "fig14-sensitivity",
                about: "Fig. 14: NFTL with PEN under the partial-erase depth L (and subblock management's two PB sizes) and the wear-levelling parameter W.",
                full: "pen-sensitivity.toml",
                quick: Some("ci/pen-sensitivity-tiny.toml"),
                needs: PEN_SYNTH,
                policy_axis: "setting",
                join: None,
                figures: &[
                    FigureSpec {
                        file: "fig14a-pb-sizes",
                        title: "Fig. 14a: mean write latency by L (and subblock management), L = 1 = 1",
                        paper_figure: "Fig. 14a",
                        caption: "Mean write response time of NFTL with PEN at L = 1…6 (W = 16), subblock management (`SB3-W16`: three subblocks, two PB sizes) and W = 1, 4, 64 (L = 6), relative to L = 1.",
                        kind: FigureKind::Bars { metric: "write.mean_ns", baseline: "L1-W16", filters: &[] },
                    },
                    FigureSpec {
                        file: "fig14b-w-iops",
                        title: "Fig. 14b: throughput by W, W = 1 = 1",
                        paper_figure: "Fig. 14b",
                        caption: "Throughput of every setting relative to W = 1 (L = 6).",
                        kind: FigureKind::Bars { metric: "iops", baseline: "L6-W1", filters: &[] },
                    },
                    FigureSpec {
                        file: "fig14c-w-vep",
                        title: "Fig. 14c: variance of erases per page by W, W = 1 = 1",
                        paper_figure: "Fig. 14c",
                        caption: "Variance of the erases per page over the replay alone (VEP) relative to W = 1 (L = 6).",
                        kind: FigureKind::Bars {
                            metric: "erases.per_page_replay.variance",
                            baseline: "L6-W1",
                            filters: &[],
                        },
                    },
                ],
                claims: &[
                    claim(
                        "pen-l-more-pb-sizes-faster",
                        "More PB sizes (a larger L) lower the write latency: L = 6 against L = 1 (§6.2.1, Fig. 14a)",
                        "write.mean_ns",
                        ("L6-W16", "L1-W16"),
                        Direction::Lower,
                        None,
                        &[],
                    ),
                    claim(
                        "pen-subblock-gains-little",
                        "Subblock management (three subblocks, two PB sizes) cannot give PEN's gain: its write latency is above PEN's L = 6 tree (§7, Fig. 14a)",
                        "write.mean_ns",
                        ("SB3-W16", "L6-W16"),
                        Direction::Higher,
                        None,
                        &[],
                    ),
                    claim(
                        "pen-w-higher-faster",
                        "A higher W gives better performance: W = 64 against W = 1 (§6.2.1, Fig. 14b)",
                        "iops",
                        ("L6-W64", "L6-W1"),
                        Direction::Higher,
                        None,
                        &[],
                    ),
                    claim(
                        "pen-w-higher-skews-erases",
                        "A higher W skews the erases per page: VEP at W = 64 against W = 1 (§6.2.1, Fig. 14c)",
                        "erases.per_page_replay.variance",
                        ("L6-W64", "L6-W1"),
                        Direction::Higher,
                        None,
                        &[],
                    ),
                ],
            },
            Extra {
                name: "fig15ac-disturb-pbe",
                about: "Fig. 15a and 15c: PEN with and without boundary program disturbance, and PBE modelled as a reduced-capacity PEN without disturbance.",
                full: "pen-disturb.toml",
                quick: Some("ci/pen-disturb-tiny.toml"),
                needs: PEN_SYNTH,
                policy_axis: "system",
                join: None,
                figures: &[
                    FigureSpec {
                        file: "fig15a-disturbance",
                        title: "Fig. 15a: mean write latency with and without disturbance, PEN without = 1",
                        paper_figure: "Fig. 15a",
                        caption: "Mean write response time of NFTL with block erase (`baseline`), PEN aware of disturbance (tolerance 1), PEN ignoring it, and PBE, relative to PEN ignoring disturbance.",
                        kind: FigureKind::Bars {
                            metric: "write.mean_ns",
                            baseline: "pen-nodisturb",
                            filters: &[],
                        },
                    },
                    FigureSpec {
                        file: "fig15c-pbe-waf",
                        title: "Fig. 15c: write amplification, PEN = 1",
                        paper_figure: "Fig. 15c",
                        caption: "Write amplification relative to PEN; PBE has 16.5 % fewer blocks for the same logical capacity and no disturbance.",
                        kind: FigureKind::Bars { metric: "waf", baseline: "pen", filters: &[] },
                    },
                ],
                claims: &[
                    claim(
                        "pen-disturbance-costs-slightly",
                        "Disturbance-aware M-Merge (tolerance 1) increases the write latency against ignoring disturbance, \"slightly\" (§6.2.1, Fig. 15a; no number given: the verdict checks the direction only)",
                        "write.mean_ns",
                        ("pen", "pen-nodisturb"),
                        Direction::Higher,
                        None,
                        &[],
                    ),
                    claim(
                        "pen-with-disturbance-beats-merge",
                        "Disturbance-aware M-Merge still outperforms the baseline merge (§5.2, Fig. 15a)",
                        "write.mean_ns",
                        ("pen", "baseline"),
                        Direction::Lower,
                        None,
                        &[],
                    ),
                    claim(
                        "pbe-waf",
                        "PBE increases write amplification by 88 % compared to PEN (§6.2.1, Fig. 15c)",
                        "waf",
                        ("pbe", "pen"),
                        Direction::Higher,
                        Some(0.88),
                        &[],
                    ),
                ],
            },
            Extra {
                name: "fig15b-timeline",
                about: "Fig. 15b: write latency over time, NFTL with block erase and with PEN, from the per-request logs.",
                full: "pen-timeline.toml",
                quick: Some("ci/pen-timeline-tiny.toml"),
                needs: PEN_SYNTH,
                policy_axis: "system",
                join: None,
                figures: &[
                    FigureSpec {
                        file: "fig15b-write-timeline",
                        title: "Fig. 15b: write latency over time",
                        paper_figure: "Fig. 15b",
                        caption: "Mean and maximum write response time per window of arrival time (100 windows), NFTL with block erase (`nftl`) and with PEN (`nftl-pen`), at the recorded rate, on the experiment's first trace (the paper uses proj_1, which we do not have).",
                        kind: FigureKind::WriteTimeline { filters: &[AT_RECORDED_RATE], windows: 100 },
                    },
                    FigureSpec {
                        file: "fig15b-write-timeline-quarter-load",
                        title: "Fig. 15b: write latency over time, a quarter of the load",
                        paper_figure: "Fig. 15b",
                        caption: "As above, at a quarter of the recorded rate, where NFTL with PEN keeps up (drawn only when the experiment has that load).",
                        kind: FigureKind::WriteTimeline { filters: &[("@load", "0.25")], windows: 100 },
                    },
                ],
                claims: &[claim(
                    "pen-timeline-write-latency",
                    "PEN lowers the write latency through the run, not only on average: the mean over every trace and load (§6.2.1, Fig. 15b; the per-window counts are under the figures)",
                    "write.mean_ns",
                    ("nftl-pen", "nftl"),
                    Direction::Lower,
                    None,
                    &[],
                )],
            },
            Extra {
                name: "headline-msr12",
                about: "The headline numbers on synthetic analogues of the paper's 12 MSR workloads (docs/results.md, \"The headline on analogues of the paper's 12 MSR workloads\").",
                full: "pen-msr12.toml",
                quick: None,
                needs: "`scripts/pen-msr12-traces.sh target/pen-msr12` (the experiment's `trace_root`; CI runs `experiments/ci/pen-msr12-tiny.toml` through `lamina sweep`)",
                policy_axis: "system",
                join: None,
                figures: &[
                    FigureSpec {
                        file: "msr12-write-latency",
                        title: "Fig. 12a/16 on the 12 MSR analogues: mean write latency, NFTL = 1",
                        paper_figure: "Fig. 12a, Fig. 16",
                        caption: "Mean write response time of every system relative to NFTL with block erase, per analogue and over-provisioning level.",
                        kind: FigureKind::Bars { metric: "write.mean_ns", baseline: "nftl", filters: &[] },
                    },
                    FigureSpec {
                        file: "msr12-iops",
                        title: "Fig. 12b on the 12 MSR analogues: throughput, NFTL = 1",
                        paper_figure: "Fig. 12b",
                        caption: "Throughput relative to NFTL with block erase.",
                        kind: FigureKind::Bars { metric: "iops", baseline: "nftl", filters: &[] },
                    },
                    FigureSpec {
                        file: "msr12-waf",
                        title: "Fig. 13a on the 12 MSR analogues: write amplification, NFTL = 1",
                        paper_figure: "Fig. 13a",
                        caption: "Write amplification relative to NFTL with block erase.",
                        kind: FigureKind::Bars { metric: "waf", baseline: "nftl", filters: &[] },
                    },
                ],
                claims: &[
                    claim(
                        "msr12-nftl-write-latency-op7",
                        "PEN lowers NFTL's mean write latency by 44.3 % (abstract, Fig. 12a); 12 MSR analogues, 7 % over-provisioning",
                        "write.mean_ns",
                        ("nftl-pen", "nftl"),
                        Direction::Lower,
                        Some(-0.443),
                        OP7,
                    ),
                    claim(
                        "msr12-nftl-write-latency-op25",
                        "PEN lowers NFTL's mean write latency by 44.3 % (abstract, Fig. 12a); 12 MSR analogues, 25 % over-provisioning",
                        "write.mean_ns",
                        ("nftl-pen", "nftl"),
                        Direction::Lower,
                        Some(-0.443),
                        OP25,
                    ),
                    claim(
                        "msr12-nftl-iops-op7",
                        "PEN raises NFTL's throughput 1.43x (Fig. 12b); 12 MSR analogues, 7 % over-provisioning",
                        "iops",
                        ("nftl-pen", "nftl"),
                        Direction::Higher,
                        Some(0.43),
                        OP7,
                    ),
                    claim(
                        "msr12-nftl-iops-op25",
                        "PEN raises NFTL's throughput 1.43x (Fig. 12b); 12 MSR analogues, 25 % over-provisioning",
                        "iops",
                        ("nftl-pen", "nftl"),
                        Direction::Higher,
                        Some(0.43),
                        OP25,
                    ),
                    claim(
                        "msr12-nftl-waf-op7",
                        "PEN lowers NFTL's write amplification 2.67x (Fig. 13a); 12 MSR analogues, 7 % over-provisioning",
                        "waf",
                        ("nftl-pen", "nftl"),
                        Direction::Lower,
                        Some(-0.6255),
                        OP7,
                    ),
                    claim(
                        "msr12-nftl-waf-op25",
                        "PEN lowers NFTL's write amplification 2.67x (Fig. 13a); 12 MSR analogues, 25 % over-provisioning",
                        "waf",
                        ("nftl-pen", "nftl"),
                        Direction::Lower,
                        Some(-0.6255),
                        OP25,
                    ),
                    claim(
                        "msr12-superblock-write-latency-op7",
                        "PEN lowers the Superblock FTL's (4 + 1 blocks) mean write latency by 47.9 % (abstract, Fig. 16); 12 MSR analogues, 7 % over-provisioning",
                        "write.mean_ns",
                        ("sb4+5-pen", "sb4+5"),
                        Direction::Lower,
                        Some(-0.479),
                        OP7,
                    ),
                    claim(
                        "msr12-superblock-write-latency-op25",
                        "PEN lowers the Superblock FTL's (4 + 1 blocks) mean write latency by 47.9 % (abstract, Fig. 16); 12 MSR analogues, 25 % over-provisioning",
                        "write.mean_ns",
                        ("sb4+5-pen", "sb4+5"),
                        Direction::Lower,
                        Some(-0.479),
                        OP25,
                    ),
                ],
            },
            Extra {
                name: "shared",
                about: "The write-dominant shared traces (hadoop, msr-cut-rw20-80, the Financial1 head, the MSR hm_0 window): NFTL and the Superblock FTL (4 + 1 blocks) with block erase only and with PEN, preconditioned, at the recorded rate and ten times faster (`--quick`: their first 500 requests, ten times faster only, 24 blocks per plane).",
                full: "pen-shared.toml",
                quick: Some("ci/pen-shared-tiny.toml"),
                needs: "",
                policy_axis: "system",
                join: None,
                figures: &[
                    FigureSpec {
                        file: "shared-write-latency",
                        title: "Shared traces: mean write latency, NFTL = 1",
                        paper_figure: "Fig. 12a, Fig. 16 on our shared traces",
                        caption: "Mean write response time of NFTL and the Superblock FTL (4 + 1 blocks) with block erase only and with PEN, relative to NFTL with block erase, on every write-dominant shared trace and load. The paper's values: −44.3 % (NFTL) and −47.9 % (Superblock) with PEN.",
                        kind: FigureKind::Bars { metric: "write.mean_ns", baseline: "nftl", filters: &[] },
                    },
                    FigureSpec {
                        file: "shared-waf",
                        title: "Shared traces: write amplification, NFTL = 1",
                        paper_figure: "Fig. 13a on our shared traces",
                        caption: "Write amplification relative to NFTL with block erase. The paper's value: 2.67x lower with PEN (NFTL).",
                        kind: FigureKind::Bars { metric: "waf", baseline: "nftl", filters: &[] },
                    },
                ],
                claims: &[
                    claim(
                        "shared-nftl-write-latency",
                        "PEN lowers NFTL's mean write latency by 44.3 % (abstract, Fig. 12a); write-dominant shared traces, both loads",
                        "write.mean_ns",
                        ("nftl-pen", "nftl"),
                        Direction::Lower,
                        Some(-0.443),
                        &[],
                    ),
                    claim(
                        "shared-nftl-iops",
                        "PEN raises NFTL's throughput 1.43x (Fig. 12b); write-dominant shared traces, both loads",
                        "iops",
                        ("nftl-pen", "nftl"),
                        Direction::Higher,
                        Some(0.43),
                        &[],
                    ),
                    claim(
                        "shared-nftl-waf",
                        "PEN lowers NFTL's write amplification 2.67x (Fig. 13a); write-dominant shared traces, both loads",
                        "waf",
                        ("nftl-pen", "nftl"),
                        Direction::Lower,
                        Some(-0.6255),
                        &[],
                    ),
                    claim(
                        "shared-superblock-write-latency",
                        "PEN lowers the Superblock FTL's (4 + 1 blocks) mean write latency by 47.9 % (abstract, Fig. 16); write-dominant shared traces, both loads",
                        "write.mean_ns",
                        ("sb4+5-pen", "sb4+5"),
                        Direction::Lower,
                        Some(-0.479),
                        &[],
                    ),
                ],
            },
        ],
    },
    Paper {
        id: "mbm",
        title: "Maximizing Bandwidth Management FTL Based on Read and Write Asymmetry of Flash Memory (Li et al.; MBM)",
        source: "shared/papers/mbm-ftl.txt",
        full: "mbm.toml",
        quick: "ci/mbm-tiny.toml",
        policy_axis: "system",
        figures: &[
            FigureSpec {
                file: "fig8-mean-response",
                title: "Fig. 8: mean response time, TBM = 1",
                paper_figure: "Fig. 8",
                caption: "Mean response time (reads and writes) of TBM, Sprinkler and MBM relative to TBM, on the `mbm` preset (the full experiment's Table II analogues: `scripts/mbm-synth-traces.sh target/mbm-synth`, the experiment's `trace_root`), every GC mode and load of the experiment. The paper's values (§VI-A): MBM −43.6 % on average and up to −66.8 %; on src1-1vm2 MBM +7.5 % and Sprinkler 2.18× (the claims below check each).",
                kind: FigureKind::Bars { metric: "all.mean_ns", baseline: "tbm", filters: &[] },
            },
            FigureSpec {
                file: "fig10-bandwidth",
                title: "Fig. 10: bandwidth, TBM = 1",
                paper_figure: "Fig. 10",
                caption: "Host bandwidth (MiB/s, first arrival to last completion) relative to TBM. The paper's values (§VI-B): MBM 2.1× TBM on average, up to 3×.",
                kind: FigureKind::Bars { metric: "bandwidth_mib_s", baseline: "tbm", filters: &[] },
            },
            FigureSpec {
                file: "fig11-erases",
                title: "Fig. 11: erase count, TBM = 1",
                paper_figure: "Fig. 11",
                caption: "Blocks erased during the replay (preconditioning excluded) relative to TBM. The paper's values (§VI-C): MBM +3.5 % on average (at most +7.9 %) outside MSNFS; on MSNFS 46 / 15 / 247 GC operations for TBM / Sprinkler / MBM.",
                kind: FigureKind::Bars { metric: "erases.total", baseline: "tbm", filters: &[] },
            },
            FigureSpec {
                file: "fig12-read-p99",
                title: "Fig. 12: read p99 latency, TBM = 1",
                paper_figure: "Fig. 12",
                caption: "99th-percentile read response time relative to TBM, every configuration (the paper plots MSNFS and Financial only, from p95; see the tail figures below).",
                kind: FigureKind::Bars { metric: "read.p99_ns", baseline: "tbm", filters: &[] },
            },
            FigureSpec {
                file: "fig13-write-p99",
                title: "Fig. 13: write p99 latency, TBM = 1",
                paper_figure: "Fig. 13",
                caption: "99th-percentile write response time relative to TBM, every configuration.",
                kind: FigureKind::Bars { metric: "write.p99_ns", baseline: "tbm", filters: &[] },
            },
            FigureSpec {
                file: "fig12a-msnfs-read-tail",
                title: "Fig. 12a: MSNFS read tail latency",
                paper_figure: "Fig. 12a",
                caption: "Read response time at p95 … p99.5 (the paper's range) and p99.9 … p99.999 (ours) on the MSNFS analogue, one configuration (named under the x axis: blocking GC, half rate in the full experiment). `--quick` has no MSNFS analogue and draws the MSR hm_0 sample instead; the axis caption says which. The paper gives no numbers, only that MBM is lowest at high percentiles, with Sprinkler close on MSNFS.",
                kind: FigureKind::Tail { class: "read", filters: MSNFS_TAIL },
            },
            FigureSpec {
                file: "fig12b-msnfs-write-tail",
                title: "Fig. 12b: MSNFS write tail latency",
                paper_figure: "Fig. 12b",
                caption: "Write response time at p95 … p99.999 on the MSNFS analogue (in `--quick`: the MSR hm_0 sample), one configuration.",
                kind: FigureKind::Tail { class: "write", filters: MSNFS_TAIL },
            },
            FigureSpec {
                file: "fig13a-financial-read-tail",
                title: "Fig. 13a: Financial read tail latency",
                paper_figure: "Fig. 13a",
                caption: "Read response time at p95 … p99.999 on the Financial analogue (in `--quick`: the Financial1 head), one configuration. The paper: Sprinkler's read p98 above MBM's, TBM worst.",
                kind: FigureKind::Tail { class: "read", filters: FINANCIAL_TAIL },
            },
            FigureSpec {
                file: "fig13b-financial-write-tail",
                title: "Fig. 13b: Financial write tail latency",
                paper_figure: "Fig. 13b",
                caption: "Write response time at p95 … p99.999 on the Financial analogue (in `--quick`: the Financial1 head), one configuration.",
                kind: FigureKind::Tail { class: "write", filters: FINANCIAL_TAIL },
            },
            FigureSpec {
                file: "load-mean-response",
                title: "Mean response time against load, TBM = 1",
                paper_figure: "none (ours)",
                caption: "Mean response time relative to TBM against load (trace.time_scale: arrival gaps scaled), geometric mean over the traces and GC modes. The paper evaluates one rate per trace.",
                kind: FigureKind::Line {
                    metric: "all.mean_ns",
                    baseline: "tbm",
                    x: &LOAD_AXES,
                    filters: &[],
                },
            },
        ],
        claims: &[
            MBM_MEAN_RESPONSE,
            claim(
                "mbm-vs-sprinkler",
                "MBM's mean response time is below Sprinkler's (§VI-B, Fig. 8: MBM best on five of six workloads)",
                "all.mean_ns",
                ("mbm", "sprinkler"),
                Direction::Lower,
                None,
                &[],
            ),
            best(claim(
                "mbm-mean-response-best",
                "MBM lowers the mean response time by up to 66.8 % against TBM (abstract, §VI-A, Fig. 8; our best configuration)",
                "all.mean_ns",
                ("mbm", "tbm"),
                Direction::Lower,
                Some(-0.668),
                &[],
            )),
            claim(
                "mbm-src1-1vm2",
                "On src1-1vm2 TBM beats MBM: MBM's mean response +7.5 % (§VI-A, Fig. 8)",
                "all.mean_ns",
                ("mbm", "tbm"),
                Direction::Higher,
                Some(0.075),
                &[("trace", "src1-1vm2.trace")],
            ),
            claim(
                "sprinkler-src1-1vm2",
                "On src1-1vm2 Sprinkler's mean response is 2.18x TBM's (§VI-A, Fig. 8)",
                "all.mean_ns",
                ("sprinkler", "tbm"),
                Direction::Higher,
                Some(1.18),
                &[("trace", "src1-1vm2.trace")],
            ),
            claim(
                "mbm-bandwidth",
                "MBM raises the bandwidth 2.1x on average against TBM (abstract, §VI-C, Fig. 10)",
                "bandwidth_mib_s",
                ("mbm", "tbm"),
                Direction::Higher,
                Some(1.1),
                &[],
            ),
            best(claim(
                "mbm-bandwidth-best",
                "MBM raises the bandwidth up to 3x against TBM (abstract, §VI-C, Fig. 10; our best configuration)",
                "bandwidth_mib_s",
                ("mbm", "tbm"),
                Direction::Higher,
                Some(2.0),
                &[],
            )),
            claim(
                "mbm-erases",
                "MBM's erase count is almost TBM's, slightly higher (+3.5 % GC on average outside MSNFS; §VI-D, Fig. 11)",
                "erases.total",
                ("mbm", "tbm"),
                Direction::About,
                Some(0.035),
                &[],
            ),
            claim(
                "mbm-msnfs-gc",
                "On MSNFS MBM runs far more GC than TBM: 247 against 46 operations (§VI-D; checked as blocks erased, since a TBM GC job erases a twin of blocks and an MBM one a block)",
                "erases.total",
                ("mbm", "tbm"),
                Direction::Higher,
                Some(247.0 / 46.0 - 1.0),
                &[("trace", "msnfs.trace")],
            ),
            claim(
                "mbm-read-tail",
                "MBM lowers the read tail latency against TBM (§VI-E, Fig. 12; checked at p99)",
                "read.p99_ns",
                ("mbm", "tbm"),
                Direction::Lower,
                None,
                &[],
            ),
            claim(
                "mbm-write-tail",
                "MBM lowers the write tail latency against TBM (§VI-E, Fig. 13; checked at p99)",
                "write.p99_ns",
                ("mbm", "tbm"),
                Direction::Lower,
                None,
                &[],
            ),
        ],
        extras: &[
            Extra {
                name: "chips",
                about: "Fig. 9: TBM, Sprinkler and MBM with 2, 4 and 8 chips per channel, every run relative to TBM at 2 chips on the same trace (`system@chips`).",
                full: "mbm-chips.toml",
                quick: Some("ci/mbm-chips-tiny.toml"),
                needs: "",
                policy_axis: "system",
                join: Some("chips"),
                figures: &[FigureSpec {
                    file: "fig9-chips-mean-response",
                    title: "Fig. 9: mean response time over chips per channel, TBM at 2 chips = 1",
                    paper_figure: "Fig. 9",
                    caption: "Mean response time of each system at 2, 4 and 8 chips per channel (`system@chips`), relative to TBM at 2 chips on each trace. The paper's values (§VI-A): MBM −43.6 % against TBM at 2 chips and −31.6 % at 8, almost the same from 8 down to 2 chips (best at 4), TBM and Sprinkler slower with fewer chips.",
                    kind: FigureKind::Bars { metric: "all.mean_ns", baseline: "tbm@2", filters: &[] },
                }],
                claims: &[
                    claim(
                        "mbm-vs-tbm-2-chips",
                        "MBM lowers the mean response time by 43.6 % against TBM with two chips per channel (§VI-A, Fig. 9)",
                        "all.mean_ns",
                        ("mbm@2", "tbm@2"),
                        Direction::Lower,
                        Some(-0.436),
                        &[],
                    ),
                    claim(
                        "mbm-vs-tbm-8-chips",
                        "MBM lowers the mean response time by 31.6 % against TBM with eight chips per channel (§VI-A, Fig. 9)",
                        "all.mean_ns",
                        ("mbm@8", "tbm@8"),
                        Direction::Lower,
                        Some(-0.316),
                        &[],
                    ),
                    claim(
                        "mbm-flat-over-chips",
                        "MBM achieves almost the same mean response time with 2 chips per channel as with 8 (§VI-A, Fig. 9)",
                        "all.mean_ns",
                        ("mbm@2", "mbm@8"),
                        Direction::About,
                        None,
                        &[],
                    ),
                    claim(
                        "mbm-best-at-4-chips",
                        "MBM's best mean response time is at 4 chips per channel: below its 8-chip one (§VI-A, Fig. 9)",
                        "all.mean_ns",
                        ("mbm@4", "mbm@8"),
                        Direction::Lower,
                        None,
                        &[],
                    ),
                    claim(
                        "tbm-slower-with-fewer-chips",
                        "TBM's mean response time rises as the chips per channel fall from 8 to 2 (§VI-A, Fig. 9)",
                        "all.mean_ns",
                        ("tbm@2", "tbm@8"),
                        Direction::Higher,
                        None,
                        &[],
                    ),
                    claim(
                        "sprinkler-slower-with-fewer-chips",
                        "Sprinkler's mean response time rises as the chips per channel fall from 8 to 2 (§VI-A, Fig. 9)",
                        "all.mean_ns",
                        ("sprinkler@2", "sprinkler@8"),
                        Direction::Higher,
                        None,
                        &[],
                    ),
                ],
            },
            Extra {
                name: "ablation",
                about: "Ours (the paper has no ablation): MBM's parts one at a time against TBM — WS only (`ws`), RS's conditional read only (`rs`), MCS only (`mcs`), MCS with RS's read-intensive layout (`rs-layout`), all (`all`), all without the layout, P/E suspension alone (`susp`), all with RS reallocation (`all-realloc`); `--quick` adds `all-x0` (no suspension overhead).",
                full: "mbm-ablation.toml",
                quick: Some("ci/mbm-ablation-tiny.toml"),
                needs: "",
                policy_axis: "system",
                join: None,
                figures: &[FigureSpec {
                    file: "ablation-mean-response",
                    title: "Ablation: mean response time, TBM = 1",
                    paper_figure: "none (ours)",
                    caption: "Mean response time of each part of MBM alone and together, relative to TBM. The paper reports no ablation.",
                    kind: FigureKind::Bars { metric: "all.mean_ns", baseline: "tbm", filters: &[] },
                }],
                claims: &[],
            },
            Extra {
                name: "suspension",
                about: "Ours (the paper gives no suspend or resume latency): MBM with the P/E suspension overheads scaled ×0 … ×4 of the preset's (MQSim's 100 µs / 700 µs), TBM the baseline.",
                full: "mbm-suspension.toml",
                quick: Some("ci/mbm-suspension-tiny.toml"),
                needs: "",
                policy_axis: "setting",
                join: None,
                figures: &[FigureSpec {
                    file: "suspension-mean-response",
                    title: "Suspension overheads: mean response time, TBM = 1",
                    paper_figure: "none (ours)",
                    caption: "MBM's mean response time relative to TBM with the suspension overheads scaled (`mbm-x0` … `mbm-x4`).",
                    kind: FigureKind::Bars { metric: "all.mean_ns", baseline: "tbm", filters: &[] },
                }],
                claims: &[],
            },
            Extra {
                name: "erases",
                about: "Ours: why MBM erases more — MBM, MBM with greedy victims (`mbm-slack0`), without WS (`mbm-nows`), the page FTL under MBM's scheduling (`page-mcs`), MBM with static placement (`mbm-static`), relative to Sprinkler.",
                full: "mbm-erases.toml",
                quick: Some("ci/mbm-erases-tiny.toml"),
                needs: "",
                policy_axis: "system",
                join: None,
                figures: &[FigureSpec {
                    file: "erases-one-change-at-a-time",
                    title: "Erases, one change at a time, Sprinkler = 1",
                    paper_figure: "none (ours; Fig. 11's question)",
                    caption: "Blocks erased during the replay relative to Sprinkler (the page FTL), changing one part of MBM at a time.",
                    kind: FigureKind::Bars { metric: "erases.total", baseline: "sprinkler", filters: &[] },
                }],
                claims: &[],
            },
            Extra {
                name: "shared",
                about: "Every shared trace that fits, on the same device and systems as the main experiment (blocking GC), at the recorded rate and ten times faster (`--quick`: their first 2,000 requests, ten times faster only, 32 blocks per plane).",
                full: "mbm-shared.toml",
                quick: Some("ci/mbm-shared-tiny.toml"),
                needs: "",
                policy_axis: "system",
                join: None,
                figures: &[FigureSpec {
                    file: "shared-mean-response",
                    title: "Shared traces: mean response time, TBM = 1",
                    paper_figure: "Fig. 8 on our shared traces",
                    caption: "Mean response time relative to TBM on every shared trace and load. The paper's value: MBM −43.6 % on its six workloads.",
                    kind: FigureKind::Bars { metric: "all.mean_ns", baseline: "tbm", filters: &[] },
                }],
                claims: &[MBM_MEAN_RESPONSE],
            },
        ],
    },
];

/// The paper called `id`.
pub fn find(id: &str) -> Option<&'static Paper> {
    PAPERS.iter().find(|p| p.id == id)
}
