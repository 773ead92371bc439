//! The progress bar of `lamina run`: on standard error, only when it is a terminal
//! (nothing at all when it is piped or redirected, so logs and scripts stay clean).

use std::io::IsTerminal as _;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use lamina_engine::Progress;

/// `1234567` → `"1,234,567"`.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Simulated time in the largest unit that keeps it readable: `"812.345 ms"`, `"1.500 s"`.
fn sim_time(ns: u64) -> String {
    match ns {
        0..1_000 => format!("{ns} ns"),
        1_000..1_000_000 => format!("{:.3} us", ns as f64 / 1e3),
        1_000_000..1_000_000_000 => format!("{:.3} ms", ns as f64 / 1e6),
        _ => format!("{:.3} s", ns as f64 / 1e9),
    }
}

/// The bar's message: requests replayed and the simulated time reached.
pub fn message(p: &Progress) -> String {
    format!("{} requests, sim time {}", grouped(p.requests), sim_time(p.latest_arrival.0))
}

/// Drives a bar from the engine's progress callbacks.
pub struct RunProgress {
    bar: ProgressBar,
}

impl RunProgress {
    /// A bar on standard error if it is a terminal; otherwise a hidden one that draws nothing.
    pub fn new() -> RunProgress {
        if !std::io::stderr().is_terminal() {
            return RunProgress { bar: ProgressBar::hidden() };
        }
        // Until the replay reports: a spinner over building, prefill and preconditioning.
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{elapsed_precise} {spinner} {msg}").expect("template is valid"),
        );
        bar.set_message("building the device, prefill, preconditioning…");
        bar.enable_steady_tick(std::time::Duration::from_millis(200));
        RunProgress { bar }
    }

    /// Show `p`: a bar over the trace file's bytes with an ETA when its size is known,
    /// a spinner otherwise (a pipe).
    pub fn update(&self, p: &Progress) {
        if self.bar.is_hidden() {
            return;
        }
        if let (None, Some(total)) = (self.bar.length(), p.total_bytes) {
            // The replay has started on a file of known size: a bar with an ETA.
            let style =
                ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {percent:>3}% {msg}, eta {eta}");
            self.bar.set_style(style.expect("template is valid").progress_chars("=> "));
            self.bar.set_length(total);
        }
        self.bar.set_position(p.bytes_read);
        self.bar.set_message(message(p));
    }

    /// Remove the bar (before the report is printed).
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lamina_nand_model::SimTime;

    #[test]
    fn message_shows_requests_and_simulated_time() {
        let p = Progress {
            requests: 1_234_567,
            latest_arrival: SimTime(812_345_678),
            bytes_read: 10,
            total_bytes: Some(100),
            done: false,
        };
        assert_eq!(message(&p), "1,234,567 requests, sim time 812.346 ms");
        let p = Progress { requests: 999, latest_arrival: SimTime(1_500_000_000), ..p };
        assert_eq!(message(&p), "999 requests, sim time 1.500 s");
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(1000), "1,000");
        assert_eq!(sim_time(999), "999 ns");
        assert_eq!(sim_time(4_096), "4.096 us");
    }

    /// The engine's hook: a call every 4096 requests and a final one, counts that match
    /// the report, and the same report as without a callback.
    #[test]
    fn the_engine_reports_progress_without_changing_the_result() {
        let cfg = lamina_engine::config::ConfigBuilder::new().preset("mbm").unwrap().build().unwrap();
        let trace = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../traces/demo.trace"));
        let mut seen = Vec::new();
        let with = lamina_engine::run_trace_with_progress(&cfg, trace, &mut |p| seen.push(*p)).unwrap();
        let without = lamina_engine::run_trace(&cfg, trace).unwrap();
        assert_eq!(with.to_json(), without.to_json());
        let size = std::fs::metadata(trace).unwrap().len();
        assert_eq!(
            seen.iter().map(|p| (p.requests, p.done)).collect::<Vec<_>>(),
            [(4096, false), (5000, true)]
        );
        let last = seen.last().unwrap();
        assert_eq!((last.bytes_read, last.total_bytes), (size, Some(size)));
        assert!(seen[0].latest_arrival <= last.latest_arrival && last.latest_arrival.0 > 0);
    }

    #[test]
    fn a_hidden_bar_ignores_updates() {
        let bar = RunProgress { bar: ProgressBar::hidden() };
        bar.update(&Progress::default());
        assert_eq!(bar.bar.length(), None);
        bar.finish();
    }
}
