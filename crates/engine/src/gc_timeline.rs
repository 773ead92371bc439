//! The GC timeline: a diagnostic of *why* host reads wait behind garbage collection,
//! per die ([`crate::SimulationBuilder::gc_timeline`], read back with
//! [`crate::Simulation::gc_timeline`]; `examples/gc_timeline.rs` prints it for a run).
//!
//! The report's latency attribution says how long reads were `gc_blocked`; it cannot
//! say how the GC work was laid out on the dies. The timeline records:
//!
//! - **GC periods** of each die: maximal intervals during which its GC queue holds a
//!   job. A job restarted at the instant the plane's previous job ended (the plane is
//!   still short of free blocks) continues the period. Under `sched.gc = "blocking"` a
//!   die serves no host I/O during a period. Each period is classed by the most jobs
//!   (planes) its queue held at once: *one plane at a time* or *several planes at
//!   once*; and whether it *began together* (its first instant started jobs on several
//!   planes, i.e. one dispatch took several planes below the GC threshold).
//! - **Job starts**: how many started while another job of the die was queued, and how
//!   many started while another plane of the die already needed GC (`Ftl::needs_gc`)
//!   but had no job (the engine starts a plane's job only after a command programs that
//!   plane, so such a sibling waits until one does).
//! - **Multi-program dispatches**: a dispatch that issued several single-plane programs
//!   of host writes at one instant (a write group the FTL did not allocate at one
//!   block and page: the report's `misaligned_groups`), with the span the die is busy
//!   with them.
//! - **GC reads that suspended a program or erase** (the device suspends a running
//!   program/erase for any read its rules allow). GC is only dispatched to a free die,
//!   so when a GC read stays on its job's die (every FTL's moves but cross-die ones),
//!   the operation it suspended was issued by the same GC dispatch: another picked
//!   job's erase or move. The GC driver issues a dispatch's reads before its programs
//!   and erases, so this counts 0 unless a cross-die move's read lands on a die that
//!   another dispatch left programming or erasing (the counter shows that the rule
//!   holds; docs/model.md, "GC steps").
//! - **Host read transactions** (each page of a host read served by a flash
//!   operation): their die-queue wait, split into the part the die spent on GC (the
//!   attribution's `gc_blocked`, classed by the widest GC period it overlapped) and the
//!   rest (classed by whether it overlapped a multi-program dispatch).
//!
//! Recording is off unless asked for, observational only (nothing feeds back into the
//! simulation: a run gives the same report with or without it), and keeps one entry per
//! GC period and per multi-program dispatch (not per read).

use std::fmt;

use lamina_nand_model::{DieId, SimTime};

/// A closed GC period of one die.
#[derive(Clone, Copy, Debug)]
struct Period {
    start: SimTime,
    end: SimTime,
    /// Most jobs queued at once.
    width: u32,
}

/// The open GC period of a die.
#[derive(Clone, Copy, Debug)]
struct Open {
    start: SimTime,
    width: u32,
    jobs: u32,
    /// Jobs started at `start`.
    at_start: u32,
}

/// One die's record.
#[derive(Clone, Debug, Default)]
struct Die {
    periods: Vec<Period>,
    open: Option<Open>,
    /// Busy spans of multi-program dispatches, in time order.
    multi: Vec<(SimTime, SimTime)>,
}

/// Totals of one class of GC periods.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PeriodClass {
    /// Periods.
    pub periods: u64,
    /// Their summed length (ns).
    pub total_ns: u64,
    /// GC jobs started in them.
    pub jobs: u64,
    /// Of the periods, those whose first instant started jobs on several planes.
    pub began_together: u64,
    /// Of those, the ones whose first instant was a multi-program dispatch of the die
    /// (the others began with one command: a multi-plane program).
    pub began_by_multi_program: u64,
}

/// Totals of one class of host read transactions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReadClass {
    /// Transactions.
    pub reads: u64,
    /// Their summed wait of the kind the class counts (ns).
    pub total_ns: u64,
}

impl ReadClass {
    fn add(&mut self, ns: u64) {
        self.reads += 1;
        self.total_ns += ns;
    }

    /// Mean wait in ms (0 without reads).
    pub fn mean_ms(&self) -> f64 {
        if self.reads == 0 { 0.0 } else { self.total_ns as f64 / self.reads as f64 / 1e6 }
    }
}

/// What the timeline counted over a run (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GcTimelineSummary {
    /// GC jobs started.
    pub jobs: u64,
    /// Jobs started while another job of their die was queued.
    pub jobs_beside_another: u64,
    /// Jobs started while another plane of their die needed GC and had no job.
    pub jobs_with_sibling_waiting: u64,
    /// GC periods whose queue held one job at a time (index 0) or several at once (1).
    pub periods: [PeriodClass; 2],
    /// Dispatches that issued several single-plane programs of host writes at once.
    pub multi_program_dispatches: u64,
    /// GC reads (move reads, spare-area reads) that suspended a program or erase.
    pub gc_read_suspensions: u64,
    /// Host read transactions completed.
    pub reads: u64,
    /// Reads with GC-blocked time, by the widest GC period they overlapped (index as
    /// [`GcTimelineSummary::periods`]); `total_ns` sums their GC-blocked time.
    pub blocked: [ReadClass; 2],
    /// Every read's die-queue wait outside GC, for reads whose wait overlapped no
    /// multi-program dispatch of their die (index 0) or one (1).
    pub outside_gc: [ReadClass; 2],
}

/// The recorder (see the module docs).
#[derive(Clone, Debug)]
pub struct GcTimeline {
    dies: Vec<Die>,
    sum: GcTimelineSummary,
}

impl GcTimeline {
    /// An empty timeline for `dies` dies.
    pub(crate) fn new(dies: usize) -> GcTimeline {
        GcTimeline { dies: vec![Die::default(); dies], sum: GcTimelineSummary::default() }
    }

    /// A job was queued on `die` at `now`; `queued_before` jobs were queued there
    /// already; `siblings_waiting` other planes of the die need GC and have no job.
    pub(crate) fn job_started(
        &mut self,
        now: SimTime,
        die: DieId,
        queued_before: usize,
        siblings_waiting: u32,
    ) {
        let s = &mut self.sum;
        s.jobs += 1;
        s.jobs_beside_another += u64::from(queued_before > 0);
        s.jobs_with_sibling_waiting += u64::from(siblings_waiting > 0);
        let width = queued_before as u32 + 1;
        let d = &mut self.dies[die.idx()];
        match &mut d.open {
            Some(o) => {
                o.jobs += 1;
                o.width = o.width.max(width);
                if o.start == now {
                    o.at_start += 1;
                }
            }
            None => d.open = Some(Open { start: now, width, jobs: 1, at_start: 1 }),
        }
    }

    /// The GC queue of `die` became empty at `now` (after any restart).
    pub(crate) fn queue_emptied(&mut self, now: SimTime, die: DieId) {
        let d = &mut self.dies[die.idx()];
        let o = d.open.take().expect("a GC period is open when the queue empties");
        let class = &mut self.sum.periods[usize::from(o.width > 1)];
        class.periods += 1;
        class.total_ns += now.saturating_since(o.start).0;
        class.jobs += u64::from(o.jobs);
        if o.at_start > 1 {
            class.began_together += 1;
            class.began_by_multi_program += u64::from(d.multi.last().is_some_and(|m| m.0 == o.start));
        }
        d.periods.push(Period { start: o.start, end: now, width: o.width });
    }

    /// A dispatch on `die` at `now` issued several single-plane host programs; the die
    /// is busy with them until `busy_until`.
    pub(crate) fn multi_program(&mut self, now: SimTime, die: DieId, busy_until: SimTime) {
        self.sum.multi_program_dispatches += 1;
        self.dies[die.idx()].multi.push((now, busy_until));
    }

    /// A GC read suspended a program or erase.
    pub(crate) fn gc_read_suspended(&mut self) {
        self.sum.gc_read_suspensions += 1;
    }

    /// A host read transaction of `die`, queued at `enq` and issued at `issued`,
    /// completed with `gc_blocked_ns` of its wait spent on the die's GC.
    pub(crate) fn read_done(&mut self, die: DieId, enq: SimTime, issued: SimTime, gc_blocked_ns: u64) {
        let d = &self.dies[die.idx()];
        let wait = issued.saturating_since(enq).0;
        self.sum.reads += 1;
        if gc_blocked_ns > 0 {
            let open = d.open.filter(|o| o.start < issued).map_or(0, |o| o.width);
            let closed = d
                .periods
                .iter()
                .rev()
                .take_while(|p| p.end > enq)
                .filter(|p| p.start < issued)
                .map(|p| p.width)
                .max()
                .unwrap_or(0);
            self.sum.blocked[usize::from(open.max(closed) > 1)].add(gc_blocked_ns);
        }
        let overlaps = d.multi.iter().rev().take_while(|m| m.1 > enq).any(|m| m.0 < issued);
        self.sum.outside_gc[usize::from(overlaps)].add(wait.saturating_sub(gc_blocked_ns));
    }

    /// The counts so far. A period still open (GC queued at the end of the run) is not
    /// counted.
    pub fn summary(&self) -> GcTimelineSummary {
        self.sum
    }
}

impl fmt::Display for GcTimeline {
    /// The summary as text, one finding per line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = &self.sum;
        let ms = |ns: u64, n: u64| if n == 0 { 0.0 } else { ns as f64 / n as f64 / 1e6 };
        writeln!(
            f,
            "GC jobs {}: started beside another job of the die {}, while a sibling plane needed GC without a job {}",
            s.jobs, s.jobs_beside_another, s.jobs_with_sibling_waiting
        )?;
        for (name, c) in ["one plane at a time", "several planes at once"].iter().zip(&s.periods) {
            writeln!(
                f,
                "GC periods, {name}: {} ({} jobs), mean {:.1} ms, total {:.2} s; began with several planes' jobs {} (by a multi-program dispatch {})",
                c.periods,
                c.jobs,
                ms(c.total_ns, c.periods),
                c.total_ns as f64 / 1e9,
                c.began_together,
                c.began_by_multi_program
            )?;
        }
        writeln!(
            f,
            "multi-program dispatches (several single-plane host programs at once) {}",
            s.multi_program_dispatches
        )?;
        writeln!(f, "GC reads that suspended a program or erase {}", s.gc_read_suspensions)?;
        writeln!(f, "host read transactions {}", s.reads)?;
        for (name, c) in ["one plane at a time", "several planes at once"].iter().zip(&s.blocked) {
            writeln!(f, "  GC-blocked in a period of {name}: {}, mean {:.1} ms", c.reads, c.mean_ms())?;
        }
        for (name, c) in ["overlapping no multi-program dispatch", "overlapping a multi-program dispatch"]
            .iter()
            .zip(&s.outside_gc)
        {
            writeln!(f, "  wait outside GC, {name}: {}, mean {:.3} ms", c.reads, c.mean_ms())?;
        }
        Ok(())
    }
}
