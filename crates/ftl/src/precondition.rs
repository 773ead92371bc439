//! Untimed preconditioning: bring an FTL (and, through [`FlashEffect`]s, the device) into
//! the state of a used drive before a timed run starts.
//!
//! Two phases, both deterministic from the seed:
//!
//! 1. **Fill**: write `fill_fraction` of the logical space once, sequentially (LPN 0, 1,
//!    …) or in a pseudo-random order (an affine permutation `i ↦ (a·i + c) mod L` with
//!    `gcd(a, L) = 1` drawn from the seed; the filled set is the first `⌊L·f⌋` images).
//! 2. **Random overwrites** of LPNs drawn uniformly from the filled set, in windows of
//!    `window_fraction × filled` writes, until **steady state**: `stable_windows`
//!    consecutive windows in which GC ran (erased at least one block) and whose write
//!    amplification differs from the previous window's by less than `waf_epsilon`
//!    (absolute, e.g. 0.01 = one percentage point, for the page FTL; relative to the WAF
//!    for the block-level FTLs — [`Ftl::steady_waf_tolerance_ppm`]). The phase also stops after
//!    `max_overwrite_passes × filled` overwrites, steady or not (the report says which).
//!
//! Writes use static allocation ([`Ftl::static_plane`]); GC runs to below its threshold
//! before each write to a plane that needs it, exactly like the engine's timed path, so
//! the final state is one the timed simulation could have reached. While no plane needs
//! GC, the fill writes runs of up to 256 pages with one [`Ftl::write_unmapped_run`] call
//! each: the same writes and effects as page by page (a unit test compares both, with
//! runs stopping before mapped pages and after a page that makes its plane need GC); the
//! first run that stops short hands the rest of the fill to the page-by-page path. WAF is
//! computed in integer parts per million, so results are identical on every platform.

use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};

use crate::api::{FlashEffect, Ftl, FtlError, FtlStats, Lpn, WriteConstraint};
use lamina_nand_model::{PlaneId, Ppa};

/// Order of the fill phase.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FillOrder {
    /// LPN 0, 1, 2, …
    #[default]
    Sequential,
    /// A seeded pseudo-random permutation of the logical space.
    Random,
}

/// Preconditioning parameters (`[precondition]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PreconditionConfig {
    /// Fraction of the logical space written in the fill phase, in [0, 1].
    pub fill_fraction: f64,
    /// Order of the fill phase.
    pub fill_order: FillOrder,
    /// Upper bound of the overwrite phase in passes over the filled pages (0 disables it).
    pub max_overwrite_passes: f64,
    /// Steady-state window, as a fraction of the filled pages, in (0, 1].
    pub window_fraction: f64,
    /// Largest WAF change between consecutive windows that counts as stable (≥ 0): absolute
    /// for the page FTL, a fraction of the WAF for the block-level FTLs
    /// ([`Ftl::steady_waf_tolerance_ppm`]).
    pub waf_epsilon: f64,
    /// Consecutive stable windows that mean steady state (≥ 1).
    pub stable_windows: u32,
}

impl Default for PreconditionConfig {
    fn default() -> Self {
        PreconditionConfig {
            fill_fraction: 1.0,
            fill_order: FillOrder::Sequential,
            max_overwrite_passes: 2.0,
            window_fraction: 1.0 / 16.0,
            waf_epsilon: 0.02,
            stable_windows: 2,
        }
    }
}

/// What preconditioning did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PreconditionReport {
    /// Pages written in the fill phase.
    pub filled_pages: u64,
    /// Random overwrites performed.
    pub overwrites: u64,
    /// Overwrite windows run.
    pub windows: u32,
    /// True if the stop was steady state, false if it was the pass bound.
    pub steady_state: bool,
    /// WAF of the last window, in parts per million (0 if no window ran).
    pub last_window_waf_ppm: u64,
    /// The FTL's counters at the end (cumulative, fill included).
    pub stats: FtlStats,
}

/// Preconditioning failed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum PreconditionError {
    /// A parameter is out of range.
    #[error("invalid precondition config: `{key}`: {reason}")]
    Config {
        /// The key, e.g. `precondition.fill_fraction`.
        key: &'static str,
        /// Why.
        reason: String,
    },
    /// A write was refused even after GC: the FTL cannot hold the requested data.
    #[error("preconditioning write of {lpn} failed after GC: {source}")]
    Write {
        /// The LPN being written.
        lpn: Lpn,
        /// The FTL's refusal.
        source: FtlError,
    },
}

fn cfg_err(key: &'static str, reason: String) -> PreconditionError {
    PreconditionError::Config { key, reason }
}

const PPM: u64 = 1_000_000;

/// Random overwrites drawn and warmed ahead of their writes (enough to overlap the
/// forward-map misses, few enough that the warmed lines are still cached when written).
const AHEAD: usize = 32;
/// Pages of the fill written per [`Ftl::write_unmapped_run`] call.
const FILL_RUN: usize = 256;

fn fraction_ppm(key: &'static str, v: f64, lo: f64, hi: f64) -> Result<u64, PreconditionError> {
    if !v.is_finite() || v < lo || v > hi {
        return Err(cfg_err(key, format!("{v} is not in [{lo}, {hi}]")));
    }
    Ok((v * PPM as f64).round() as u64)
}

impl PreconditionConfig {
    /// Check every parameter's range (what preconditioning checks before it starts):
    /// the error names the key. Config loading calls this, so a bad value is reported
    /// with where it was given.
    pub fn validate(&self) -> Result<(), PreconditionError> {
        self.check().map(|_| ())
    }

    fn check(&self) -> Result<(u64, u64, u64, u64), PreconditionError> {
        let fill = fraction_ppm("precondition.fill_fraction", self.fill_fraction, 0.0, 1.0)?;
        let passes =
            fraction_ppm("precondition.max_overwrite_passes", self.max_overwrite_passes, 0.0, 1000.0)?;
        let window = fraction_ppm("precondition.window_fraction", self.window_fraction, 0.0, 1.0)
            .ok()
            .filter(|&w| w > 0)
            .ok_or_else(|| {
                cfg_err(
                    "precondition.window_fraction",
                    format!(
                        "{} is not in (0, 1] (at least 1e-6: the fraction is kept in millionths)",
                        self.window_fraction
                    ),
                )
            })?;
        let eps = fraction_ppm("precondition.waf_epsilon", self.waf_epsilon, 0.0, 1000.0)?;
        if self.stable_windows == 0 {
            return Err(cfg_err("precondition.stable_windows", "must be at least 1".into()));
        }
        Ok((fill, passes, window, eps))
    }
}

/// Run every step of the plane's GC job in progress, reporting effects
/// ([`Ftl::gc_finish_untimed`]).
fn finish_job(ftl: &mut dyn Ftl, plane: PlaneId, sink: &mut dyn FnMut(FlashEffect)) {
    ftl.gc_finish_untimed(plane, sink);
}

/// Untimed GC on `plane`: finish the job in progress, then run whole jobs while
/// [`Ftl::needs_gc`] holds and there is something to reclaim. Effects go to `sink`.
pub fn collect_garbage(ftl: &mut dyn Ftl, plane: PlaneId, sink: &mut dyn FnMut(FlashEffect)) {
    if ftl.gc_in_progress(plane) {
        finish_job(ftl, plane, sink);
    }
    while ftl.needs_gc(plane) {
        if ftl.gc_begin(plane).is_none() {
            return;
        }
        finish_job(ftl, plane, sink);
    }
}

/// Untimed host write of `lpn` to its static plane (or the plane its
/// [`WriteConstraint::Plane`] names), running GC first when needed; a refused write is
/// parked and retried like the engine does — GC (or a merge job) on the plane the refusal
/// names, then the same write — up to `planes_per_die` times. Effects go to `sink`.
pub fn write_untimed(
    ftl: &mut dyn Ftl,
    lpn: Lpn,
    sink: &mut dyn FnMut(FlashEffect),
) -> Result<Ppa, FtlError> {
    write_untimed_then(ftl, lpn, sink, |ppa| ppa)
}

/// [`write_untimed`], returning `done(page written)`. Preconditioning passes a `done`
/// that drops the page: copying the whole `Result` the FTL returned costs a failed
/// store-to-load forward (a stall until earlier stores drain) on every write.
#[inline(always)]
fn write_untimed_then<T>(
    ftl: &mut dyn Ftl,
    lpn: Lpn,
    sink: &mut dyn FnMut(FlashEffect),
    done: impl Fn(Ppa) -> T,
) -> Result<T, FtlError> {
    let plane = match ftl.write_constraint(lpn) {
        WriteConstraint::Plane(p) => p,
        WriteConstraint::Any | WriteConstraint::Die => ftl.static_plane(lpn),
    };
    if ftl.needs_gc(plane) {
        collect_garbage(ftl, plane, sink);
    }
    match ftl.write(lpn, plane) {
        Ok(ppa) => {
            sink(FlashEffect::Program { ppa, lpn });
            Ok(done(ppa))
        }
        refused => retry_refused(ftl, lpn, plane, refused, sink).map(done),
    }
}

/// The rest of [`write_untimed`] after a refusal (out of line: rare, and it keeps the
/// common path short).
#[inline(never)]
fn retry_refused(
    ftl: &mut dyn Ftl,
    lpn: Lpn,
    plane: PlaneId,
    mut result: Result<Ppa, FtlError>,
    sink: &mut dyn FnMut(FlashEffect),
) -> Result<Ppa, FtlError> {
    for _ in 0..ftl.geometry().planes_per_die() {
        let Err(e) = result else { break };
        let q = e.plane();
        if matches!(e, FtlError::MergeNeeded { .. }) && !ftl.needs_gc(q) {
            if ftl.gc_in_progress(q) || ftl.gc_begin(q).is_some() {
                finish_job(ftl, q, sink);
            }
        } else {
            collect_garbage(ftl, q, sink);
        }
        result = ftl.write(lpn, plane);
    }
    let ppa = result?;
    sink(FlashEffect::Program { ppa, lpn });
    Ok(ppa)
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Uniform integer in `0..n` (Lemire's multiply-shift; the bias is below 2⁻³² for the
/// sizes used here and, more importantly, deterministic).
#[inline]
fn below(rng: &mut Xoshiro256PlusPlus, n: u64) -> u64 {
    ((rng.next_u64() as u128 * n as u128) >> 64) as u64
}

/// Precondition `ftl`: fill, then overwrite randomly until GC reaches steady state (see
/// the [module docs](self)). Every physical effect is reported to `sink` in order, so the
/// caller can mirror it into a device model. Deterministic from `seed`.
pub fn precondition(
    ftl: &mut dyn Ftl,
    cfg: &PreconditionConfig,
    seed: u64,
    sink: &mut dyn FnMut(FlashEffect),
) -> Result<PreconditionReport, PreconditionError> {
    precondition_in_runs(ftl, cfg, seed, sink, FILL_RUN)
}

/// [`precondition`] with fill runs of at most `fill_run` pages (1 to [`FILL_RUN`]; tests
/// use short runs so that every run boundary meets the cases a run stops for).
fn precondition_in_runs(
    ftl: &mut dyn Ftl,
    cfg: &PreconditionConfig,
    seed: u64,
    sink: &mut dyn FnMut(FlashEffect),
    fill_run: usize,
) -> Result<PreconditionReport, PreconditionError> {
    assert!((1..=FILL_RUN).contains(&fill_run), "fill run of {fill_run} pages");
    let (fill_ppm, passes_ppm, window_ppm, eps_ppm) = cfg.check()?;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let logical = ftl.logical_pages();
    let filled = (logical as u128 * fill_ppm as u128 / PPM as u128) as u64;
    let (a, c) = match cfg.fill_order {
        FillOrder::Sequential => (1, 0),
        FillOrder::Random => {
            let mut a = below(&mut rng, logical) | 1;
            while gcd(a, logical) != 1 {
                a = below(&mut rng, logical) | 1;
            }
            (a, below(&mut rng, logical))
        }
    };
    // The identity for the sequential order (every `i` drawn is below `logical`): no
    // 128-bit division per write.
    let perm = |i: u64| {
        if a == 1 && c == 0 {
            Lpn(i)
        } else {
            Lpn(((a as u128 * i as u128 + c as u128) % logical as u128) as u64)
        }
    };
    let write = |ftl: &mut dyn Ftl, lpn: Lpn, sink: &mut dyn FnMut(FlashEffect)| {
        write_untimed_then(ftl, lpn, sink, |_| ()).map_err(|source| PreconditionError::Write { lpn, source })
    };

    let mut i = 0;
    // Runs of the fill through [`Ftl::write_unmapped_run`], the same writes as one by one
    // while no plane needs GC (then `write_untimed` collects nothing before a write); the
    // rest, from the first run that stops short or leaves a plane needing GC, page by page.
    let planes = ftl.geometry().total_planes();
    let mut runs = (0..planes).all(|p| !ftl.needs_gc(PlaneId(p)));
    // On an FTL that holds no valid page, no page of the fill is mapped when its turn
    // comes (`perm` is a bijection: each is written once), so the runs need not look
    // their pages up ([`Ftl::write_fresh_run`]).
    let fresh = (0..planes).all(|p| ftl.page_counts(PlaneId(p)).valid == 0);
    let mut lpns = [Lpn(0); FILL_RUN];
    let mut pages = Vec::with_capacity(FILL_RUN);
    while runs && i < filled {
        let k = (filled - i).min(fill_run as u64) as usize;
        for (j, l) in lpns[..k].iter_mut().enumerate() {
            *l = perm(i + j as u64);
        }
        pages.clear();
        let run = if fresh {
            ftl.write_fresh_run(&lpns[..k], &mut pages)
        } else {
            ftl.write_unmapped_run(&lpns[..k], &mut pages)
        };
        let Some(n) = run else { break };
        for (&ppa, &lpn) in pages.iter().zip(&lpns) {
            sink(FlashEffect::Program { ppa, lpn });
        }
        i += n as u64;
        runs = n == k && !ftl.needs_gc(ftl.static_plane(lpns[k - 1]));
    }
    for i in i..filled {
        write(ftl, perm(i), sink)?;
    }

    let mut report = PreconditionReport {
        filled_pages: filled,
        overwrites: 0,
        windows: 0,
        steady_state: false,
        last_window_waf_ppm: 0,
        stats: ftl.stats(),
    };
    if filled == 0 {
        return Ok(report);
    }
    let max_overwrites = (filled as u128 * passes_ppm as u128 / PPM as u128) as u64;
    let window = ((filled as u128 * window_ppm as u128 / PPM as u128) as u64).max(1);
    let mut prev_waf: Option<u64> = None;
    let mut stable = 0;
    while report.overwrites < max_overwrites {
        let n = window.min(max_overwrites - report.overwrites);
        let before = ftl.stats();
        // Drawn a few at a time and warmed first ([`Ftl::warm_writes`]): the same draws in
        // the same order, with their cache misses overlapped.
        let mut left = n;
        while left > 0 {
            let k = left.min(AHEAD as u64) as usize;
            let mut lpns = [Lpn(0); AHEAD];
            for l in &mut lpns[..k] {
                *l = perm(below(&mut rng, filled));
            }
            ftl.warm_writes(&lpns[..k]);
            for &lpn in &lpns[..k] {
                write(ftl, lpn, sink)?;
            }
            left -= k as u64;
        }
        report.overwrites += n;
        report.windows += 1;
        let after = ftl.stats();
        let host = after.host_writes - before.host_writes;
        let moves = after.gc_moves - before.gc_moves;
        let waf = (host + moves) * PPM / host;
        report.last_window_waf_ppm = waf;
        if after.erases + after.partial_erases > before.erases + before.partial_erases {
            match prev_waf {
                Some(p) if p.abs_diff(waf) < ftl.steady_waf_tolerance_ppm(eps_ppm, waf).max(1) => stable += 1,
                _ => stable = 0,
            }
            prev_waf = Some(waf);
            if stable >= cfg.stable_windows {
                report.steady_state = true;
                break;
            }
        } else {
            prev_waf = None;
            stable = 0;
        }
    }
    report.stats = ftl.stats();
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{FtlConfig, GcThreshold, PageFtl};

    /// The page FTL without its run path (`write_unmapped_run` answers `None`), so that
    /// preconditioning fills it page by page.
    struct PageByPage(PageFtl);

    impl Ftl for PageByPage {
        crate::forward_ftl_required!();
        fn gc_finish_untimed(&mut self, plane: PlaneId, sink: &mut dyn FnMut(FlashEffect)) {
            self.0.gc_finish_untimed(plane, sink)
        }
    }

    /// The fill in runs (`write_unmapped_run`) is the fill page by page: the same effects
    /// in the same order, the same report and the same mapping — sequential and random,
    /// whole and partial fills, runs of 1, 7 and 256 pages; an FTL that already holds
    /// pages (a run stops before a mapped one) and has a plane needing GC when the fill
    /// starts (no runs at all); GC during the fill (a run ends after the page that makes
    /// its plane need it).
    #[test]
    fn the_fill_in_runs_is_the_fill_page_by_page() {
        let geometry = crate::testing::slc_geometry(2, 1, 2, 2, 32, 16);
        let (mut gc_in_fill, mut gc_due_at_start) = (0, 0);
        for fill_run in [1, 7, FILL_RUN] {
            for (order, fill_fraction, written_before) in [
                (FillOrder::Sequential, 1.0, 0),
                (FillOrder::Random, 1.0, 0),
                (FillOrder::Sequential, 0.6, 0),
                (FillOrder::Random, 0.3, 0),
                (FillOrder::Sequential, 1.0, 300),
                (FillOrder::Sequential, 0.6, 300),
                (FillOrder::Random, 0.8, 300),
                (FillOrder::Sequential, 0.6, 3000),
                (FillOrder::Random, 1.0, 3000),
            ] {
                let make = || {
                    let cfg = FtlConfig {
                        overprovisioning: 0.15,
                        gc_threshold: GcThreshold::FreeBlocks(4),
                        ..FtlConfig::default()
                    };
                    let mut f = PageFtl::new(geometry.clone(), &cfg).unwrap();
                    // 61 of the highest LPNs written over and over: mapped pages a fill
                    // of it all meets, stale pages GC can reclaim during a sequential
                    // fill of the rest, planes at their GC threshold.
                    let n = f.logical_pages();
                    let lpn = |l: u64| Lpn(n - 1 - (l % 61) * 3);
                    for l in 0..written_before {
                        write_untimed(&mut f, lpn(l), &mut |_| ()).unwrap();
                    }
                    // The most writes: then on, without GC, until a plane needs it.
                    for l in (written_before >= 3000).then_some(written_before..).into_iter().flatten() {
                        let plane = f.static_plane(lpn(l));
                        f.write(lpn(l), plane).unwrap();
                        if f.needs_gc(plane) {
                            break;
                        }
                    }
                    f
                };
                let cfg =
                    PreconditionConfig { fill_order: order, fill_fraction, ..PreconditionConfig::default() };
                let (mut runs, mut pages) = (make(), PageByPage(make()));
                let planes = geometry.total_planes();
                gc_due_at_start += (0..planes).any(|p| runs.needs_gc(PlaneId(p))) as u32;
                let (mut e_runs, mut e_pages) = (Vec::new(), Vec::new());
                let r_runs = precondition_in_runs(&mut runs, &cfg, 7, &mut |e| e_runs.push(e), fill_run);
                let r_pages = precondition(&mut pages, &cfg, 7, &mut |e| e_pages.push(e));
                let case = format!(
                    "runs of {fill_run}, {order:?} fill {fill_fraction}, {written_before} writes before"
                );
                assert_eq!(r_runs, r_pages, "{case}");
                assert_eq!(e_runs, e_pages, "{case}");
                for l in 0..runs.logical_pages() {
                    assert_eq!(runs.lookup(Lpn(l)), pages.lookup(Lpn(l)), "{case}: LPN {l}");
                }
                // An erase among the fill's first `filled` effects: GC ran during the fill.
                let filled = r_runs.as_ref().map_or(0, |r| r.filled_pages) as usize;
                gc_in_fill += e_runs[..filled].iter().any(|e| matches!(e, FlashEffect::Erase { .. })) as u32;
            }
        }
        assert!(gc_in_fill >= 3, "GC ran during {gc_in_fill} fills");
        assert!(gc_due_at_start >= 3, "a plane needed GC at the start of {gc_due_at_start} fills");
    }
}
