//! The per-request latency log (`lamina run --latency-log FILE`): one CSV line per
//! completed request, streamed as requests complete, for CDFs and custom analysis.
//!
//! ```text
//! arrival_ns,op,bytes,lpn,response_ns,wait_ns
//! 0,write,8192,1,1381990,0
//! 0,write,8192,2,2763980,1381990
//! 10000000,read,8192,5,159990,0
//! 20000000,trim,8192,0,0,0
//! ```
//!
//! (Two page writes at 0, a read and a trim on one die of `mbm`: a program is 70 ns
//! command + 8192 B × 10 ns/B + 1.3 ms, a read 70 ns + 78 µs + 81,920 ns; the test
//! `latency_log_has_one_hand_computed_line_per_request` in `tests/cli_run.rs`.)
//!
//! `arrival_ns` is the request's arrival in simulated ns (its trace timestamp, scaled;
//! in closed-loop mode the instant it was issued), `op` is `read`, `write` or `trim`,
//! `bytes` its size, `lpn` its first logical page (wrapped into the logical capacity),
//! `response_ns` completion minus arrival, `wait_ns` its queue wait (the `*_wait`
//! distributions of the report). Lines are in completion order (equal completions in
//! the engine's event order), so the file is deterministic.
//!
//! Memory is bounded: lines go through a [`BufWriter`] and nothing is collected. The
//! first write error is kept, writing stops, and [`LatencyLog::finish`] returns it: the
//! hot path never returns a `Result` and never panics on I/O.

use std::fmt::Write as _;
use std::io::{self, BufWriter, Write};

use lamina_nand_model::{Nanos, SimTime};

use crate::Simulation;
use crate::trace::IoOp;

/// The CSV header line.
pub const HEADER: &str = "arrival_ns,op,bytes,lpn,response_ns,wait_ns\n";

/// A streaming per-request CSV log (see the module docs).
pub struct LatencyLog {
    out: BufWriter<Box<dyn Write + Send>>,
    /// The line being formatted (reused: no allocation per request).
    line: String,
    /// Data lines handed to the writer.
    lines: u64,
    /// The first write error; nothing is written after it.
    error: Option<io::Error>,
}

impl LatencyLog {
    /// A log writing to `w` (buffered here; pass the file itself). The header is the
    /// first line.
    pub fn new(w: Box<dyn Write + Send>) -> LatencyLog {
        let mut log = LatencyLog {
            out: BufWriter::with_capacity(1 << 16, w),
            line: String::with_capacity(96),
            lines: 0,
            error: None,
        };
        if let Err(e) = log.out.write_all(HEADER.as_bytes()) {
            log.error = Some(e);
        }
        log
    }

    /// Log one completed request: `arrival`, its `op`, `bytes`, first logical page
    /// `lpn`, `response` time and queue `wait`. Does nothing after a write error.
    #[inline]
    pub fn record(&mut self, arrival: SimTime, op: IoOp, bytes: u64, lpn: u64, response: Nanos, wait: Nanos) {
        if self.error.is_some() {
            return;
        }
        let op = match op {
            IoOp::Read => "read",
            IoOp::Write => "write",
            IoOp::Trim => "trim",
        };
        self.line.clear();
        let _ = writeln!(self.line, "{},{op},{bytes},{lpn},{},{}", arrival.as_ns(), response.0, wait.0);
        match self.out.write_all(self.line.as_bytes()) {
            Ok(()) => self.lines += 1,
            Err(e) => self.error = Some(e),
        }
    }

    /// Data lines written so far (the header not counted).
    pub fn lines(&self) -> u64 {
        self.lines
    }

    /// Flush and return the number of data lines, or the first write error.
    pub fn finish(mut self) -> io::Result<u64> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.out.flush()?;
        Ok(self.lines)
    }
}

impl std::fmt::Debug for LatencyLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LatencyLog").field("lines", &self.lines).field("error", &self.error).finish()
    }
}

impl Simulation {
    /// Take back the latency log given to [`crate::SimulationBuilder::latency_log`]
    /// (after the run, to [`LatencyLog::finish`] it); `None` if there is none.
    pub fn take_latency_log(&mut self) -> Option<LatencyLog> {
        self.latency_log.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// A writer whose bytes the test can read afterwards.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// Accepts `room` bytes, then fails every write.
    struct Full {
        room: usize,
    }

    impl Write for Full {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            if self.room == 0 {
                return Err(io::Error::new(io::ErrorKind::StorageFull, "disk full"));
            }
            let n = b.len().min(self.room);
            self.room -= n;
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn header_then_one_line_per_record() {
        let buf = Shared::default();
        let mut log = LatencyLog::new(Box::new(buf.clone()));
        log.record(SimTime(0), IoOp::Write, 4096, 0, Nanos(41_226), Nanos(0));
        log.record(SimTime(1000), IoOp::Read, 8192, 7, Nanos(60_226), Nanos(40_226));
        log.record(SimTime(u64::MAX), IoOp::Trim, 512, u64::MAX, Nanos(0), Nanos(0));
        assert_eq!(log.lines(), 3);
        assert_eq!(log.finish().unwrap(), 3);
        let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
        assert_eq!(
            text,
            format!(
                "{HEADER}0,write,4096,0,41226,0\n1000,read,8192,7,60226,40226\n{},trim,512,{},0,0\n",
                u64::MAX,
                u64::MAX
            )
        );
    }

    #[test]
    fn the_first_write_error_is_kept_and_returned() {
        // Room for the header and a bit: the buffer fills past 64 KiB, the flush fails.
        let mut log = LatencyLog::new(Box::new(Full { room: 100 }));
        for i in 0..10_000 {
            log.record(SimTime(i), IoOp::Read, 4096, i, Nanos(1), Nanos(0));
        }
        let lines = log.lines();
        assert!(lines < 10_000, "writing stopped at the error ({lines} lines)");
        let e = log.finish().unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::StorageFull);
        // An error that only shows at the final flush is returned too.
        let mut log = LatencyLog::new(Box::new(Full { room: 10 }));
        log.record(SimTime(0), IoOp::Read, 1, 0, Nanos(1), Nanos(0));
        assert_eq!(log.finish().unwrap_err().kind(), io::ErrorKind::StorageFull);
    }

    #[test]
    fn a_log_is_send() {
        fn send<T: Send>() {}
        send::<LatencyLog>();
    }
}
