//! The engine thread: the one owner of the [`Simulation`] and of the served data. Jobs
//! come in through one bounded channel from the connection tasks; replies go back
//! through each connection's own bounded channel. Everything the simulation sees happens
//! here, in one order, so the run is a pure function of the arrivals the clock assigns
//! (which `--record` writes down).

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::mpsc::{Receiver, RecvTimeoutError, TryRecvError};
use std::time::Instant;

use lamina_engine::trace::{IoOp, IoRequest, TraceTime};
use lamina_engine::{Completion, RunError, Simulation};
use lamina_trace::write::{TraceWriter, WriteError};
use tokio::sync::OwnedSemaphorePermit;
use tokio::sync::mpsc::Sender;

use crate::clock::{Clock, Pacing, wall_now};
use crate::proto::{EIO, ESHUTDOWN};
use crate::store::Store;

/// What a job asks.
pub(crate) enum Op {
    /// Read `len` bytes.
    Read,
    /// Write the payload.
    Write(Vec<u8>),
    /// Discard.
    Trim,
    /// Make completed writes durable.
    Flush,
}

/// The permits a request holds until its reply is written (or dropped): its slot in the
/// connection's in-flight window and its bytes in the server's payload budget.
pub(crate) struct Permits {
    pub _slot: OwnedSemaphorePermit,
    pub _bytes: Option<OwnedSemaphorePermit>,
}

/// One validated request on its way to the engine.
pub(crate) struct Job {
    pub op: Op,
    pub offset: u64,
    pub len: u32,
    pub cookie: u64,
    /// When the server had the whole request (header and payload).
    pub received: Instant,
    pub reply: Sender<Reply>,
    pub permits: Permits,
}

/// One simple reply on its way to a connection's writer.
pub(crate) struct Reply {
    pub cookie: u64,
    pub error: u32,
    /// A successful read's data (empty otherwise).
    pub data: Vec<u8>,
    pub permits: Permits,
}

/// A request submitted to the simulation and not yet completed: its reply, ready but
/// for the completion, and where to send it.
struct Pending {
    to: Sender<Reply>,
    reply: Reply,
}

/// Counters of what the engine thread served.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EngineCounts {
    /// Reads submitted to the simulation.
    pub reads: u64,
    /// Writes submitted.
    pub writes: u64,
    /// Trims submitted.
    pub trims: u64,
    /// Flushes answered.
    pub flushes: u64,
    /// Requests whose data I/O failed (answered `NBD_EIO`; backing-file errors).
    pub data_errors: u64,
}

/// Wall-clock lateness of paced replies: reply sent minus simulated completion mapped to
/// the wall clock (ns). Measured on the engine thread as it hands the reply on.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Lateness {
    /// Replies measured.
    pub count: u64,
    /// Median (ns).
    pub p50_ns: u64,
    /// 99th percentile (ns).
    pub p99_ns: u64,
    /// Largest (ns).
    pub max_ns: u64,
}

/// The first this many paced replies are kept for [`Lateness`] (bounded memory).
const LATENESS_SAMPLES: usize = 1 << 20;

/// What the engine thread hands back.
pub(crate) struct EngineOutcome {
    pub sim: Simulation,
    pub counts: EngineCounts,
    pub failure: Option<RunError>,
    pub record_error: Option<String>,
    pub lateness: Option<Lateness>,
    pub resident_bytes: u64,
}

/// Writes the served requests as a trace, keeping the first error (recording stops
/// there; serving goes on, and the error is reported at the end).
pub(crate) struct Recorder {
    pub writer: TraceWriter<std::io::BufWriter<Box<dyn Write + Send>>>,
    pub error: Option<WriteError>,
}

pub(crate) struct Engine {
    pub sim: Simulation,
    pub store: Store,
    pub clock: Clock,
    pub rx: Receiver<Job>,
    pub record: Option<Recorder>,
    pending: BTreeMap<u64, Pending>,
    next_id: u64,
    counts: EngineCounts,
    failure: Option<RunError>,
    done: Vec<Completion>,
    lateness: Vec<u64>,
}

impl Engine {
    pub fn new(
        sim: Simulation,
        store: Store,
        pacing: Pacing,
        rx: Receiver<Job>,
        record: Option<Recorder>,
    ) -> Engine {
        Engine {
            sim,
            store,
            clock: Clock::new(pacing),
            rx,
            record,
            pending: BTreeMap::new(),
            next_id: 0,
            counts: EngineCounts::default(),
            failure: None,
            done: Vec::new(),
            lateness: Vec::new(),
        }
    }

    /// Serve until every sender is gone, then let the device finish its work.
    pub fn run(mut self) -> EngineOutcome {
        loop {
            let job = if self.pending.is_empty() {
                match self.rx.recv() {
                    Ok(j) => Some(j),
                    Err(_) => break,
                }
            } else {
                match self.wait_for_job() {
                    Ok(j) => j,
                    Err(()) => break,
                }
            };
            if let Some(j) = job {
                self.accept(j);
                // Take whatever else has arrived before simulating further.
                while let Ok(j) = self.rx.try_recv() {
                    self.accept(j);
                }
            }
            self.advance();
        }
        self.finish()
    }

    /// With requests in flight: in virtual mode take a job if one is there (never wait);
    /// in paced mode wait for one until the next event is due in wall-clock time.
    /// `Err` when every sender is gone.
    fn wait_for_job(&mut self) -> Result<Option<Job>, ()> {
        let deadline = match self.clock.pacing() {
            Pacing::Virtual => None,
            Pacing::Paced => self.sim.next_event_time().and_then(|t| self.clock.wall_at(t)),
        };
        match deadline {
            None => match self.rx.try_recv() {
                Ok(j) => Ok(Some(j)),
                Err(TryRecvError::Empty) => Ok(None),
                Err(TryRecvError::Disconnected) => Err(()),
            },
            Some(d) => match self.rx.recv_timeout(d.saturating_duration_since(wall_now())) {
                Ok(j) => Ok(Some(j)),
                Err(RecvTimeoutError::Timeout) => Ok(None),
                Err(RecvTimeoutError::Disconnected) => Err(()),
            },
        }
    }

    /// Do one job's data I/O and submit it to the simulation (a flush is answered here).
    fn accept(&mut self, job: Job) {
        let Job { op, offset, len, cookie, received, reply, permits } = job;
        if self.failure.is_some() {
            let _ = reply.try_send(Reply { cookie, error: ESHUTDOWN, data: Vec::new(), permits });
            return;
        }
        let (io_op, data) = match op {
            Op::Flush => {
                self.counts.flushes += 1;
                let error = if self.store.flush().is_ok() { 0 } else { EIO };
                let _ = reply.try_send(Reply { cookie, error, data: Vec::new(), permits });
                return;
            }
            Op::Read => {
                self.counts.reads += 1;
                (IoOp::Read, self.store.read(offset, len))
            }
            Op::Write(payload) => {
                self.counts.writes += 1;
                (IoOp::Write, self.store.write(offset, &payload).map(|()| Vec::new()))
            }
            Op::Trim => {
                self.counts.trims += 1;
                (IoOp::Trim, self.store.trim(offset, len as u64).map(|()| Vec::new()))
            }
        };
        let (error, data) = match data {
            Ok(d) => (0, d),
            Err(_) => {
                self.counts.data_errors += 1;
                (EIO, Vec::new())
            }
        };
        let arrival = self.clock.arrival(received, self.sim.now());
        let request = IoRequest {
            arrival: TraceTime(arrival.as_ns()),
            device: 0,
            offset_bytes: offset,
            size_bytes: len as u64,
            op: io_op,
        };
        if let Some(r) = self.record.as_mut()
            && r.error.is_none()
            && let Err(e) = r.writer.write(&request)
        {
            r.error = Some(e);
        }
        self.pending
            .insert(self.next_id, Pending { to: reply, reply: Reply { cookie, error, data, permits } });
        self.next_id += 1;
        if let Err(e) = self.sim.submit(request) {
            self.fail(e);
        }
    }

    /// Simulate: in virtual mode up to the next event (the clock jumps with it); in paced
    /// mode up to the wall clock's simulated present. Then hand on the completions.
    fn advance(&mut self) {
        // Requests served at once (a trim, a read of unwritten pages) completed in submit.
        self.reply_completed();
        if self.pending.is_empty() || self.failure.is_some() {
            return;
        }
        let result = match self.clock.pacing() {
            Pacing::Virtual => {
                let t = self.sim.next_event_time().expect("requests in flight have events pending");
                let r = self.sim.advance_until(t);
                self.clock.reached(self.sim.now(), wall_now());
                r
            }
            Pacing::Paced => match self.clock.sim_at(wall_now()) {
                Some(t) => self.sim.advance_until(t),
                None => Ok(()),
            },
        };
        if let Err(e) = result {
            self.fail(e);
        }
        self.reply_completed();
    }

    /// Send the replies of the requests the simulation completed.
    fn reply_completed(&mut self) {
        self.sim.take_completions(&mut self.done);
        let paced = self.clock.pacing() == Pacing::Paced;
        for c in self.done.drain(..) {
            let p = self.pending.remove(&c.id).expect("a completion of a submitted request");
            if paced && self.lateness.len() < LATENESS_SAMPLES {
                let due = self.clock.wall_at(c.done).expect("anchored");
                self.lateness.push(wall_now().saturating_duration_since(due).as_nanos() as u64);
            }
            // A closed channel means the client went away: its reply is dropped.
            let _ = p.to.try_send(p.reply);
        }
    }

    /// The simulation failed (a verify mismatch, a device or FTL error): every request in
    /// flight and every later one gets `NBD_ESHUTDOWN`; the error is reported at the end.
    fn fail(&mut self, e: RunError) {
        self.failure = Some(e);
        for (_, p) in std::mem::take(&mut self.pending) {
            let _ = p.to.try_send(Reply { error: ESHUTDOWN, data: Vec::new(), ..p.reply });
        }
    }

    /// Every client is gone: let the simulation finish what was submitted (and its
    /// background work), so the report covers it as `lamina run`'s would.
    fn finish(mut self) -> EngineOutcome {
        if self.failure.is_none()
            && let Err(e) = self.sim.drain()
        {
            self.failure = Some(e);
        }
        self.sim.take_completions(&mut self.done);
        let record_error = self.record.take().and_then(|r| {
            let e = match (r.error, r.writer.finish()) {
                (Some(e), _) | (None, Err(e)) => Some(e),
                (None, Ok(mut w)) => w.flush().err().map(WriteError::Io),
            };
            e.map(|e| e.to_string())
        });
        let lateness = (self.clock.pacing() == Pacing::Paced).then(|| {
            self.lateness.sort_unstable();
            let at = |q: f64| {
                self.lateness.get(((self.lateness.len() as f64 - 1.0) * q) as usize).copied().unwrap_or(0)
            };
            Lateness {
                count: self.lateness.len() as u64,
                p50_ns: at(0.5),
                p99_ns: at(0.99),
                max_ns: self.lateness.last().copied().unwrap_or(0),
            }
        });
        let resident_bytes = self.store.resident_bytes();
        EngineOutcome {
            sim: self.sim,
            counts: self.counts,
            failure: self.failure,
            record_error,
            lateness,
            resident_bytes,
        }
    }
}
