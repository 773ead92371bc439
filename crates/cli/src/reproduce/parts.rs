//! A paper's further experiments: figures whose runs do not fit its main experiment
//! (another device, another axis, other traces) each have an experiment file of their
//! own. `lamina reproduce <paper>` runs the main experiment and then every part of the
//! paper listed here, each into a folder of its own under the output folder, and puts
//! every claim into one table. Adding a part is one entry in [`PARTS`].

use super::papers::{Claim, Direction, FigureKind, FigureSpec, Paper, claim};

/// One further experiment of a paper.
pub struct Part {
    /// The paper's id ([`Paper::id`]).
    pub paper: &'static str,
    /// Its folder under the output folder, and `--part` name.
    pub dir: &'static str,
    /// What it reproduces, one line (the paper's figures).
    pub what: &'static str,
    /// The full experiment, relative to the experiments folder.
    pub full: &'static str,
    /// The `--quick` experiment; None when the part has none (its traces must be made
    /// first, [`Part::needs`]): `--quick` then lists it as not run.
    pub quick: Option<&'static str>,
    /// How the full experiment's traces are made.
    pub needs: &'static str,
    /// The axis whose values are the policies compared.
    pub policy_axis: &'static str,
    /// Figures, in the index's order.
    pub figures: &'static [FigureSpec],
    /// Claims.
    pub claims: &'static [Claim],
}

impl Part {
    /// The part as a [`Paper`] (the paper's id, title and source; the part's experiment,
    /// figures and claims), for the code that draws and checks a paper.
    pub fn as_paper(&self, paper: &Paper) -> Paper {
        Paper {
            id: paper.id,
            title: paper.title,
            source: paper.source,
            full: self.full,
            quick: self.quick.unwrap_or(self.full),
            policy_axis: self.policy_axis,
            figures: self.figures,
            claims: self.claims,
        }
    }
}

/// The parts of the paper `id`, in the order they run.
pub fn of(id: &str) -> impl Iterator<Item = &'static Part> + '_ {
    PARTS.iter().filter(move |p| p.paper == id)
}

const PEN_SYNTH: &str = "`scripts/pen-synth-traces.sh target/pen-synth` (the experiment's `trace_root`)";
/// The load axis pinned to the recorded rate, when the experiment has one.
const AT_RECORDED_RATE: (&str, &str) = ("?@load", "1");
const OP7: &[(&str, &str)] = &[("?op", "7%")];
const OP25: &[(&str, &str)] = &[("?op", "25%")];

/// Every part of every paper.
pub const PARTS: &[Part] = &[
    Part {
        paper: "pen",
        dir: "fig3-5-blocksize",
        what: "Fig. 3–5: the \"Big Block\" problem, NFTL with block erase at 72, 144, 288 and 576 pages per block and equal capacity (configurations (a)–(d))",
        full: "pen-blocksize.toml",
        quick: Some("ci/pen-blocksize-tiny.toml"),
        needs: PEN_SYNTH,
        policy_axis: "config",
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
    Part {
        paper: "pen",
        dir: "fig14-sensitivity",
        what: "Fig. 14: NFTL with PEN under the partial-erase depth L (and subblock management's two PB sizes) and the wear-levelling parameter W",
        full: "pen-sensitivity.toml",
        quick: Some("ci/pen-sensitivity-tiny.toml"),
        needs: PEN_SYNTH,
        policy_axis: "setting",
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
    Part {
        paper: "pen",
        dir: "fig15ac-disturb-pbe",
        what: "Fig. 15a and 15c: PEN with and without boundary program disturbance, and PBE modelled as a reduced-capacity PEN without disturbance",
        full: "pen-disturb.toml",
        quick: Some("ci/pen-disturb-tiny.toml"),
        needs: PEN_SYNTH,
        policy_axis: "system",
        figures: &[
            FigureSpec {
                file: "fig15a-disturbance",
                title: "Fig. 15a: mean write latency with and without disturbance, PEN without = 1",
                paper_figure: "Fig. 15a",
                caption: "Mean write response time of NFTL with block erase (`baseline`), PEN aware of disturbance (tolerance 1), PEN ignoring it, and PBE, relative to PEN ignoring disturbance.",
                kind: FigureKind::Bars { metric: "write.mean_ns", baseline: "pen-nodisturb", filters: &[] },
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
    Part {
        paper: "pen",
        dir: "fig15b-timeline",
        what: "Fig. 15b: write latency over time, NFTL with block erase and with PEN, from the per-request logs",
        full: "pen-timeline.toml",
        quick: Some("ci/pen-timeline-tiny.toml"),
        needs: PEN_SYNTH,
        policy_axis: "system",
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
    Part {
        paper: "pen",
        dir: "headline-msr12",
        what: "The headline numbers on synthetic analogues of the paper's 12 MSR workloads (docs/results.md, \"The headline on analogues of the paper's 12 MSR workloads\")",
        full: "pen-msr12.toml",
        quick: None,
        needs: "`scripts/pen-msr12-traces.sh target/pen-msr12` (the experiment's `trace_root`; CI runs `experiments/ci/pen-msr12-tiny.toml` through `lamina sweep`)",
        policy_axis: "system",
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
];
