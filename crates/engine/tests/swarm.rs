//! Swarm test of the whole engine (TigerBeetle VOPR style): every seed draws a device,
//! FTL, placement, arbiter, GC mode, buffer, host mode, queue depths, preconditioning and
//! a trace, runs it twice with `host.verify = true`, and checks the invariants in
//! `swarm_harness/check.rs`. See `docs/testing.md`.
//!
//! - `cargo test --release -p lamina-engine --test swarm` runs seeds `0..DEFAULT_SEEDS`
//!   (what CI runs);
//! - `LAMINA_SWARM_SEEDS=n LAMINA_SWARM_START=k` runs seeds `k..k+n`;
//! - `LAMINA_SWARM_SEED=s` runs the one seed `s` and prints its scenario;
//! - `LAMINA_SWARM_STRICT=1` also fails on known bugs (`swarm_harness::KNOWN_BUGS`);
//! - `LAMINA_SWARM_SCALE=k` draws devices and traces up to k times larger
//!   (`swarm_harness::scale`);
//! - `LAMINA_SWARM_PROGRESS=1` prints each seed and its wall time as it runs.
//!
//! A failure prints the seed, the one command that replays it, the config as TOML and a
//! summary of the trace.

mod swarm_harness;

use std::collections::BTreeMap;

use lamina_engine::config::HostMode;
use swarm_harness::{KNOWN_BUGS, Scenario, check, replay_command};

/// Seeds the default run covers: sized to about two minutes in release on one core
/// (see docs/testing.md for the measurement).
const DEFAULT_SEEDS: u64 = 1000;

fn env_u64(name: &str) -> Option<u64> {
    let v = std::env::var(name).ok()?;
    Some(v.trim().parse().unwrap_or_else(|_| panic!("{name}={v:?}: expected an unsigned integer")))
}

/// What the seeds exercised, so a generator change that silently stops covering a
/// region (no GC, no buffer, one placement) fails the run.
#[derive(Default)]
struct Coverage {
    features: BTreeMap<String, u64>,
}

impl Coverage {
    fn note(&mut self, feature: impl Into<String>, on: bool) {
        if on {
            *self.features.entry(feature.into()).or_default() += 1;
        }
    }

    fn record(&mut self, s: &Scenario) {
        let c = &s.config;
        self.note(format!("placement={}", c.sched.placement.name()), true);
        self.note(format!("arbiter={:?}", c.sched.arbiter), true);
        self.note(format!("gc={:?}", c.sched.gc), true);
        self.note(format!("scheduler={}", c.sched.scheduler.name()), true);
        self.note("ftl.allocation=die-aligned", c.ftl.allocation != Default::default());
        self.note("ftl.replication=rain1", c.ftl.replication != Default::default());
        self.note(format!("ftl.kind={}", c.ftl.kind.name()), true);
        self.note("suspend_threshold", c.sched.suspend_threshold.0 > 0);
        self.note(format!("cell={:?}", c.nand.geometry.cell_type), true);
        self.note("host=closed", c.host.mode == HostMode::Closed);
        self.note("host=open", c.host.mode == HostMode::Open);
        self.note("queue_depth>0", c.host.queue_depth > 0);
        self.note("buffer", check::buffer_pages(&c.buffer, c.nand.geometry.page_size_bytes) > 0);
        self.note("buffer.idle_flush", c.buffer.idle_flush_after.is_some());
        self.note("suspension", c.nand.suspension.is_some());
        self.note("layer_speed", c.nand.timing.layer_speed.is_some());
        self.note("precondition", c.precondition.is_some());
        self.note("copyback", c.ftl.copyback);
        self.note("read_modify_write=false", !c.host.read_modify_write);
        self.note("remap", c.remap.enabled());
        let trims = s.requests.iter().any(|r| r.op == lamina_engine::trace::IoOp::Trim);
        self.note("trims", trims);
    }

    fn record_report(&mut self, r: &lamina_engine::report::Report) {
        self.note("ran:gc", r.gc.jobs > 0);
        self.note("ran:suspended", r.suspensions > 0);
        self.note("ran:rmw", r.flash.rmw_reads > 0);
        self.note("ran:mirror_reads", r.flash.mirror_reads > 0);
        self.note("ran:unwritten_reads", r.flash.unwritten_reads > 0);
        if let Some(m) = &r.remap {
            self.note("ran:remap_copies", m.copies > 0);
            self.note("ran:remap_hits", m.hits > 0);
            self.note("ran:remap_merged", m.merged > 0);
            self.note("ran:remap_evicted", m.evicted > 0);
            self.note("ran:remap_joined_in_flight", m.joined_in_flight > 0);
            self.note("ran:remap_register_reads", m.register_reads > 0);
        }
    }

    fn count(&self, f: &str) -> u64 {
        self.features.get(f).copied().unwrap_or(0)
    }
}

#[test]
#[allow(clippy::disallowed_methods)] // wall time of the test run, printed only, never in a result
fn swarm() {
    let strict = std::env::var("LAMINA_SWARM_STRICT").is_ok_and(|v| v == "1");
    let (start, n, single) = match env_u64("LAMINA_SWARM_SEED") {
        Some(s) => (s, 1, true),
        None => (
            env_u64("LAMINA_SWARM_START").unwrap_or(0),
            env_u64("LAMINA_SWARM_SEEDS").unwrap_or(DEFAULT_SEEDS),
            false,
        ),
    };
    check::quiet_panics();
    let shrink = std::env::var("LAMINA_SWARM_SHRINK").is_ok_and(|v| v == "1");
    // Each seed's number before it runs and its wall time after (to find a slow seed).
    let progress = std::env::var("LAMINA_SWARM_PROGRESS").is_ok_and(|v| v == "1");
    let began = std::time::Instant::now(); // wall time of the test only, never in results
    let mut failures = Vec::new();
    let mut known: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
    let mut coverage = Coverage::default();
    let mut slowest = (0.0f64, start);
    for seed in start..start.saturating_add(n) {
        let seed_began = std::time::Instant::now();
        if progress {
            eprint!("seed {seed} ... ");
        }
        let scenario = match Scenario::from_seed(seed) {
            Ok(s) => s,
            Err(e) => {
                eprintln!(
                    "\n==== lamina swarm failure: seed {seed} ====\nreplay: {}\n{e}",
                    replay_command(seed)
                );
                failures.push(seed);
                continue;
            }
        };
        coverage.record(&scenario);
        if single {
            // Before the run, so a seed that runs long can be read while it runs.
            eprintln!("{}", scenario.describe(&[], &replay_command(seed)));
        }
        let (unknown, known_here) = scenario.check();
        for (v, test) in &known_here {
            let seeds = known.entry(test).or_default();
            if seeds.last() != Some(&seed) {
                seeds.push(seed);
            }
            if single {
                eprintln!("seed {seed}: known bug ({test}): {} {}", v.id, v.detail);
            }
        }
        if unknown.is_empty() && known_here.is_empty() {
            // Coverage of what actually ran (a third run only for clean seeds, cheap).
            if let Ok(r) = check::run(&scenario.config, &scenario.requests) {
                coverage.record_report(&r);
            }
        }
        if !unknown.is_empty() || (strict && !known_here.is_empty()) {
            let mut all = unknown.clone();
            all.extend(known_here.iter().map(|(v, _)| v.clone()));
            eprintln!("{}", scenario.describe(&all, &replay_command(seed)));
            if shrink {
                print_shrunk(&scenario, &all);
            }
            failures.push(seed);
        }
        let took = seed_began.elapsed().as_secs_f64();
        if progress {
            eprintln!("{took:.2} s");
        }
        if took > slowest.0 {
            slowest = (took, seed);
        }
    }
    let secs = began.elapsed().as_secs_f64();
    eprintln!(
        "swarm: seeds {start}..{} ({n} seeds) in {secs:.1} s; slowest seed {} took {:.2} s",
        start.saturating_add(n),
        slowest.1,
        slowest.0
    );
    for (test, seeds) in &known {
        eprintln!(
            "swarm: {} seeds hit the known bug of swarm_regressions::{test} (first: {:?}); not a failure unless LAMINA_SWARM_STRICT=1",
            seeds.len(),
            &seeds[..seeds.len().min(10)]
        );
    }
    eprintln!("swarm coverage: {:?}", coverage.features);
    assert!(
        failures.is_empty(),
        "swarm: {} failing seeds {:?}; replay one with: {}",
        failures.len(),
        &failures[..failures.len().min(20)],
        replay_command(failures[0])
    );
    if n >= DEFAULT_SEEDS && !single {
        assert_covered(&coverage, n);
    }
}

/// `LAMINA_SWARM_SHRINK=1`: the smallest trace found for each violated invariant.
fn print_shrunk(s: &Scenario, violations: &[check::Violation]) {
    let mut ids: Vec<&str> = violations.iter().map(|v| v.id).collect();
    ids.dedup();
    for id in ids {
        let small = check::shrink(&s.config, &s.requests, id);
        eprintln!("---- {} shrunk to {} requests still violating {id}:", s.origin, small.len());
        for r in &small {
            eprintln!("  {r:?}");
        }
    }
}

/// A swarm that stops exercising a region is a broken swarm: every FTL kind, placement, arbiter,
/// GC mode, both host modes, buffer, suspension, preconditioning and trims must occur, and
/// GC must actually run in a fair share of seeds.
fn assert_covered(c: &Coverage, n: u64) {
    let mut must: Vec<String> =
        lamina_sched::PlacementKind::ALL.iter().map(|p| format!("placement={}", p.name())).collect();
    must.extend(lamina_sched::SchedulerKind::ALL.iter().map(|s| format!("scheduler={}", s.name())));
    must.extend(lamina_ftl::FtlKind::ALL.iter().map(|k| format!("ftl.kind={}", k.name())));
    for f in [
        "ftl.allocation=die-aligned",
        "ftl.replication=rain1",
        "ran:mirror_reads",
        "suspend_threshold",
        "arbiter=ReadFirst",
        "arbiter=Fcfs",
        "gc=Blocking",
        "gc=Preemptible",
        "host=closed",
        "host=open",
        "queue_depth>0",
        "buffer",
        "buffer.idle_flush",
        "suspension",
        "layer_speed",
        "precondition",
        "copyback",
        "read_modify_write=false",
        "remap",
        "ran:remap_copies",
        "ran:remap_hits",
        "trims",
        "ran:gc",
        "ran:suspended",
        "ran:rmw",
        "cell=Slc",
        "cell=Mlc",
        "cell=Tlc",
        "cell=Qlc",
    ] {
        must.push(f.into());
    }
    for f in &must {
        assert!(c.count(f) > 0, "swarm coverage: no seed exercised {f}");
    }
    assert!(c.count("ran:gc") * 5 >= n, "swarm coverage: GC ran in only {} of {n} seeds", c.count("ran:gc"));
}

/// The checker is not vacuous: a report with one request too many, a WAF below 1 or
/// out-of-order percentiles is caught.
#[test]
fn checker_catches_tampered_reports() {
    let s = (0..50)
        .filter_map(|seed| Scenario::from_seed(seed).ok())
        .find(|s| {
            s.config.host.mode == HostMode::Open
                && s.requests.iter().any(|r| r.op == lamina_engine::trace::IoOp::Read)
        })
        .expect("some seed has reads");
    let report = check::run(&s.config, &s.requests).expect("seed runs");
    let ids = |r: &lamina_engine::report::Report| -> Vec<&'static str> {
        check::invariants(&s.config, &s.requests, r).into_iter().map(|v| v.id).collect()
    };
    let mut r = report.clone();
    r.read.count += 1;
    assert!(ids(&r).contains(&"counts.reads"));
    let mut r = report.clone();
    r.flash.host_programs += 1;
    r.waf = Some(0.5);
    assert!(ids(&r).contains(&"waf.range"));
    let mut r = report.clone();
    r.all.percentiles.0[0].ns = r.all.max_ns + 1;
    assert!(ids(&r).contains(&"latency.monotone"));
    let mut r = report.clone();
    r.gc.pages_moved += 1;
    assert!(ids(&r).contains(&"gc.moves"));
    let mut r = report;
    r.utilisation.die_max = 1.5;
    assert!(ids(&r).contains(&"utilisation.range"));
}

/// The generator is a pure function of the seed (replay depends on it).
#[test]
fn scenarios_are_deterministic() {
    for seed in [0, 1, 2, u64::MAX] {
        let (a, b) = (Scenario::from_seed(seed).unwrap(), Scenario::from_seed(seed).unwrap());
        assert_eq!(a.toml, b.toml);
        assert_eq!(a.requests, b.requests);
    }
    assert!(KNOWN_BUGS.iter().all(|b| !b.test.is_empty()));
}
