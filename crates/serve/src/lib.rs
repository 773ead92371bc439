//! `lamina serve`: the simulated SSD as a network block device.
//!
//! A [`Server`] speaks the NBD protocol (fixed newstyle handshake, simple replies) to
//! real, unmodified clients — `qemu-io`, `qemu-img`, `nbdsh`, fio's nbd engine, the Linux
//! nbd driver — and answers each request when the simulated device has completed it.
//!
//! - The front end is tokio (one current-thread runtime: accept, handshake, one reader
//!   and one writer task per connection). The engine stays synchronous and
//!   deterministic: one thread owns the [`lamina_engine::Simulation`] and the served
//!   data and is fed through one bounded channel.
//! - Simulated arrival times come from the wall clock ([`clock`]): **virtual** mode keeps
//!   the clients' inter-arrival gaps and replies as soon as the completion is simulated;
//!   **paced** mode replies when the wall clock reaches the simulated completion.
//! - Data is kept (in memory or a backing file), so every read returns the last write.
//! - Every served request can be recorded as a trace: `lamina run` on it (same device
//!   options, `host.unwritten_reads = "zero"`) reproduces the served latencies exactly.
//!
//! ```no_run
//! use lamina_engine::{SimulationBuilder, config::ConfigBuilder};
//! use lamina_serve::{Listen, ServeOptions, Server};
//!
//! let cfg = ConfigBuilder::new().preset("mbm")?.set("host.unwritten_reads=\"zero\"")?.build()?;
//! let sim = SimulationBuilder::new(cfg).build()?;
//! let server = Server::bind(sim, &Listen::Tcp("127.0.0.1:0".parse()?), ServeOptions::default())?;
//! println!("listening on {}", server.local_addr());
//! let served = server.serve()?; // until the last client disconnects
//! println!("{} reads, {} writes", served.counts.reads, served.counts.writes);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! See `docs/serve.md` for protocol coverage, the modes and how to attach clients.

pub mod client;
pub mod clock;
mod conn;
mod engine;
pub mod proto;
mod store;

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use lamina_engine::{RunError, Simulation};
use lamina_trace::TraceFormat;
use lamina_trace::write::{TraceWriter, WriteError};
use tokio::sync::{Notify, Semaphore};
use tokio::task::JoinSet;

pub use clock::Pacing;
pub use engine::{EngineCounts, Lateness};

use conn::{Ended, PER_CONNECTION_IN_FLIGHT, Shared};
use engine::{Engine, Recorder};
use proto::Export;
use store::{Backing, Store};

/// Clients served at once; further connections wait in the listen backlog.
pub const MAX_CONNECTIONS: usize = 64;
/// Payload bytes the server holds for requests in flight (reads being produced, writes
/// being received), across all connections: the memory bound of the front end.
pub const PAYLOAD_BUDGET_BYTES: usize = 256 << 20;

/// Where to listen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Listen {
    /// A TCP address (port 0 picks a free port: see [`Server::local_addr`]).
    Tcp(SocketAddr),
    /// A Unix socket path (must not exist; removed when the server stops).
    Unix(PathBuf),
}

/// Where and how to record the served requests as a trace.
pub struct RecordTo {
    /// The destination.
    pub sink: Box<dyn Write + Send>,
    /// The trace format ([`record_format_check`] says which can record).
    pub format: TraceFormat,
}

/// How to serve.
pub struct ServeOptions {
    /// Virtual (default) or paced time.
    pub pacing: Pacing,
    /// Keep serving after the last client disconnects (until stopped or SIGINT).
    pub persist: bool,
    /// Keep the data in this file instead of memory (created if missing, extended to the
    /// export's size; a longer file is refused). Data it already holds is served, and
    /// its logical pages are mapped as written before serving (untimed, as the prefill
    /// of `host.unwritten_reads = "prefill"` does): a read of them costs a flash read,
    /// as on a device that holds them. A page that reads as all zeros counts as
    /// unwritten (it reads the same either way).
    pub backing: Option<PathBuf>,
    /// Record the served requests.
    pub record: Option<RecordTo>,
    /// Stop on SIGINT (the command line sets it; tests use [`Stopper`]).
    pub sigint: bool,
    /// Where to say what happens while serving that ends in no session (a connection
    /// closed before its handshake completed); `None`: nowhere.
    pub log: Option<fn(&str)>,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            pacing: Pacing::Virtual,
            persist: false,
            backing: None,
            record: None,
            sigint: false,
            log: None,
        }
    }
}

/// Why a server could not start or run.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The listen address or socket path cannot be bound.
    #[error("--listen/--unix {addr}: {source}")]
    Bind {
        /// The address or path.
        addr: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// The backing file cannot be opened or sized.
    #[error("--backing {path}: {source}")]
    Backing {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The record format cannot record served I/O.
    #[error("--record-format {format}: {why}")]
    RecordFormat {
        /// The format.
        format: TraceFormat,
        /// Why not, and what to use.
        why: String,
    },
    /// The backing file already holds data and the served I/O is to be recorded: the
    /// record cannot carry that data, so its replay would not reproduce the latencies.
    #[error(
        "--backing {} already holds data ({pages} logical pages) and --record cannot carry it: \
         a replay of the record would start from an empty device and not reproduce the served \
         latencies; record with a new (or all-zero) backing file or without --backing, or serve \
         without --record",
        path.display()
    )]
    RecordHeldData {
        /// The backing file.
        path: PathBuf,
        /// Logical pages holding data.
        pages: u64,
    },
    /// The record file cannot be started.
    #[error("--record: {0}")]
    Record(#[from] WriteError),
    /// The async runtime or a thread could not start.
    #[error("starting the server: {0}")]
    Runtime(std::io::Error),
}

/// Whether `format` can record served I/O, and whether it can carry trims. Recording
/// needs arrival times exact to the nanosecond (`blkparse`, `ssdsim`, `mqsim`); only
/// `blkparse` has trims (with another format the export does not advertise TRIM).
pub fn record_format_check(format: TraceFormat) -> Result<bool, ServeError> {
    let probe = |op| lamina_engine::trace::IoRequest {
        arrival: lamina_engine::trace::TraceTime(1),
        device: 0,
        offset_bytes: 512,
        size_bytes: 512,
        op,
    };
    let bad = |why: String| ServeError::RecordFormat { format, why };
    let mut w = TraceWriter::new(Vec::new(), format).map_err(|e| bad(e.to_string()))?;
    if let Err(e) = w.write(&probe(lamina_engine::trace::IoOp::Write)) {
        return Err(bad(format!(
            "{e}; record in a format with nanosecond timestamps: blkparse (default), ssdsim or mqsim"
        )));
    }
    Ok(w.write(&probe(lamina_engine::trace::IoOp::Trim)).is_ok())
}

/// Stops a running server (as SIGINT does) from another thread.
#[derive(Clone)]
pub struct Stopper(Arc<Notify>);

impl Stopper {
    /// Ask the server to stop: connections are closed, the simulation finishes what was
    /// submitted, and [`Server::serve`] returns.
    pub fn stop(&self) {
        self.0.notify_one();
    }
}

enum Listener {
    Tcp(std::net::TcpListener),
    Unix(std::os::unix::net::UnixListener, PathBuf),
}

/// A bound server, ready to [`Server::serve`].
pub struct Server {
    listener: Listener,
    addr: String,
    sim: Simulation,
    store: Store,
    export: Export,
    opts: ServeOptions,
    recorder: Option<Recorder>,
    stop: Arc<Notify>,
    held_pages: u64,
}

/// What a finished server hands back.
pub struct Served {
    /// The simulation, every submitted request completed: build the report from it.
    pub sim: Simulation,
    /// What the engine served.
    pub counts: EngineCounts,
    /// Requests answered with an error by validation (bad length, range, flag, command).
    pub error_replies: u64,
    /// Connections accepted.
    pub connections: u64,
    /// Connections that completed the handshake (client sessions); the others ended
    /// before it (port probes, health checks, aborted negotiations).
    pub sessions: u64,
    /// The simulation's failure, if it failed (a verify mismatch, an FTL error).
    pub failure: Option<RunError>,
    /// Why recording stopped, if it did.
    pub record_error: Option<String>,
    /// Paced mode: how late replies left relative to their simulated completion.
    pub lateness: Option<Lateness>,
    /// Bytes of client data held in memory at the end (0 with a backing file).
    pub resident_bytes: u64,
    /// Logical pages that held data in the backing file before serving, mapped as
    /// written ([`ServeOptions::backing`]).
    pub held_pages: u64,
}

impl Server {
    /// Bind `listen`, open the backing store and start the record. Nothing is served
    /// until [`Server::serve`].
    pub fn bind(mut sim: Simulation, listen: &Listen, mut opts: ServeOptions) -> Result<Server, ServeError> {
        let size_bytes = sim.logical_capacity_bytes();
        let mut flags = proto::TFLAG_HAS_FLAGS
            | proto::TFLAG_SEND_FLUSH
            | proto::TFLAG_SEND_FUA
            | proto::TFLAG_SEND_TRIM
            | proto::TFLAG_CAN_MULTI_CONN;
        let recorder = match opts.record.take() {
            Some(r) => {
                if !record_format_check(r.format)? {
                    flags &= !proto::TFLAG_SEND_TRIM;
                }
                let comment = format!("lamina serve: requests served over NBD, {:?} time", opts.pacing);
                let comment = r.format.comments().then_some(comment.to_lowercase());
                let sink = std::io::BufWriter::with_capacity(1 << 16, r.sink);
                Some(Recorder {
                    writer: TraceWriter::with_comment(sink, r.format, comment.as_deref())?,
                    error: None,
                })
            }
            None => None,
        };
        let (listener, addr) = match listen {
            Listen::Tcp(a) => {
                let l = std::net::TcpListener::bind(a)
                    .map_err(|source| ServeError::Bind { addr: a.to_string(), source })?;
                let bound = l.local_addr().map_err(ServeError::Runtime)?;
                (Listener::Tcp(l), bound.to_string())
            }
            Listen::Unix(p) => {
                let l = std::os::unix::net::UnixListener::bind(p).map_err(|source| ServeError::Bind {
                    addr: format!("{} (remove a stale socket file first)", p.display()),
                    source,
                })?;
                (Listener::Unix(l, p.clone()), p.display().to_string())
            }
        };
        let page_bytes = size_bytes / sim.logical_pages().max(1);
        let (store, held_pages) = match &opts.backing {
            Some(p) => {
                let backing_err = |source| ServeError::Backing { path: p.clone(), source };
                let b = Backing::open(p, size_bytes, page_bytes).map_err(backing_err)?;
                let held_pages = b.held.iter().map(|r| r.end - r.start).sum();
                if held_pages > 0 && recorder.is_some() {
                    return Err(ServeError::RecordHeldData { path: p.clone(), pages: held_pages });
                }
                if held_pages > 0 {
                    map_held(&mut sim, &b.held, page_bytes);
                }
                (b.into_store().map_err(backing_err)?, held_pages)
            }
            None => (Store::memory(), 0),
        };
        let export = Export { size_bytes, flags, preferred_block_bytes: page_bytes as u32 };
        Ok(Server {
            listener,
            addr,
            sim,
            store,
            export,
            opts,
            recorder,
            stop: Arc::new(Notify::new()),
            held_pages,
        })
    }

    /// Logical pages that already held data in the backing file, mapped as written
    /// before serving (see [`ServeOptions::backing`]).
    pub fn held_pages(&self) -> u64 {
        self.held_pages
    }

    /// The bound address (`IP:PORT`) or socket path.
    pub fn local_addr(&self) -> &str {
        &self.addr
    }

    /// The export's size in bytes (the device's logical capacity).
    pub fn export_bytes(&self) -> u64 {
        self.export.size_bytes
    }

    /// A handle that stops the server from another thread.
    pub fn stopper(&self) -> Stopper {
        Stopper(self.stop.clone())
    }

    /// Serve until the last client disconnects (unless [`ServeOptions::persist`]; a
    /// connection that never completes the handshake is no client), a
    /// [`Stopper`] fires, or SIGINT arrives (with [`ServeOptions::sigint`]); then finish
    /// the simulation and hand it back.
    pub fn serve(self) -> Result<Served, ServeError> {
        let Server { listener, sim, store, export, opts, recorder, stop, held_pages, .. } = self;
        let (tx, rx) = std::sync::mpsc::sync_channel(MAX_CONNECTIONS * PER_CONNECTION_IN_FLIGHT);
        let engine = Engine::new(sim, store, opts.pacing, rx, recorder);
        let engine = std::thread::Builder::new()
            .name("lamina-engine".into())
            .spawn(move || engine.run())
            .map_err(ServeError::Runtime)?;
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(ServeError::Runtime)?;
        let shared = Arc::new(Shared {
            export,
            engine: tx,
            bytes: Arc::new(Semaphore::new(PAYLOAD_BUDGET_BYTES)),
            error_replies: AtomicU64::new(0),
            sessions: AtomicU64::new(0),
        });
        let connections = rt.block_on(accept_loop(listener, shared.clone(), &opts, stop))?;
        drop(rt);
        let error_replies = shared.error_replies.load(Ordering::Relaxed);
        let sessions = shared.sessions.load(Ordering::Relaxed);
        drop(shared);
        let out = engine.join().expect("the engine thread does not panic on client input");
        Ok(Served {
            sim: out.sim,
            counts: out.counts,
            error_replies,
            connections,
            sessions,
            failure: out.failure,
            record_error: out.record_error,
            lateness: out.lateness,
            resident_bytes: out.resident_bytes,
            held_pages,
        })
    }
}

/// Map the pages `held` (runs of logical pages) as written, untimed: the prefill pass of
/// `host.unwritten_reads = "prefill"` on a read of each run, so a read of them costs a
/// flash read as on a device that holds the data. Pages preconditioning mapped already
/// are left as they are.
fn map_held(sim: &mut Simulation, held: &[std::ops::Range<u64>], page_bytes: u64) {
    let reads = held.iter().map(|r| {
        Ok(lamina_engine::trace::IoRequest {
            arrival: lamina_engine::trace::TraceTime(0),
            device: 0,
            offset_bytes: r.start * page_bytes,
            size_bytes: (r.end - r.start) * page_bytes,
            op: lamina_engine::trace::IoOp::Read,
        })
    });
    sim.prefill(reads).expect("the prefill of generated requests has no trace to fail");
}

/// Accept connections until told to stop, or (without [`ServeOptions::persist`]) until
/// no connection is left and at least one was a session: a connection that never
/// completes the handshake (a port probe, a health check) does not end the run.
async fn accept_loop(
    listener: Listener,
    shared: Arc<Shared>,
    opts: &ServeOptions,
    stop: Arc<Notify>,
) -> Result<u64, ServeError> {
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    let mut tasks = JoinSet::new();
    let mut accepted = 0u64;
    let listener = AsyncListener::new(listener).map_err(ServeError::Runtime)?;
    let sigint = async {
        if opts.sigint {
            let _ = tokio::signal::ctrl_c().await;
        } else {
            std::future::pending::<()>().await;
        }
    };
    tokio::pin!(sigint);
    loop {
        let accept = async {
            let slot = slots.clone().acquire_owned().await.expect("never closed");
            listener.accept().await.map(|s| (s, slot))
        };
        tokio::select! {
            _ = stop.notified() => break,
            _ = &mut sigint => break,
            Some(ended) = tasks.join_next(), if !tasks.is_empty() => {
                let sessions = shared.sessions.load(Ordering::Relaxed);
                match ended {
                    Ok((_, Ended::Session)) => {}
                    Ok((peer, Ended::NoHandshake(why))) => {
                        if let Some(log) = opts.log {
                            let still = if opts.persist || sessions == 0 { "; still serving" } else { "" };
                            log(&format!(
                                "a connection{peer} ended before completing the NBD handshake ({why}); \
                                 not a client session{still}"
                            ));
                        }
                    }
                    // A connection task panicked (a bug) or was aborted: not a session.
                    Err(_) => {}
                }
                if tasks.is_empty() && !opts.persist && sessions > 0 {
                    break;
                }
            }
            conn = accept => match conn {
                Ok((stream, slot)) => {
                    accepted += 1;
                    let shared = shared.clone();
                    tasks.spawn(async move {
                        let ended = match stream {
                            Stream::Tcp(s, peer) => (format!(" from {peer}"), conn::serve(s, shared).await),
                            Stream::Unix(s) => (String::new(), conn::serve(s, shared).await),
                        };
                        drop(slot);
                        ended
                    });
                }
                // A failed accept (a client reset before accept, too many open files) ends
                // no connection but this one; back off briefly and go on.
                Err(_) => tokio::time::sleep(std::time::Duration::from_millis(10)).await,
            },
        }
    }
    tasks.abort_all();
    while tasks.join_next().await.is_some() {}
    if let AsyncListener::Unix(_, p) = &listener {
        let _ = std::fs::remove_file(p);
    }
    Ok(accepted)
}

/// The bound listener, moved onto the runtime.
enum AsyncListener {
    Tcp(tokio::net::TcpListener),
    Unix(tokio::net::UnixListener, PathBuf),
}

impl AsyncListener {
    fn new(l: Listener) -> std::io::Result<AsyncListener> {
        Ok(match l {
            Listener::Tcp(l) => {
                l.set_nonblocking(true)?;
                AsyncListener::Tcp(tokio::net::TcpListener::from_std(l)?)
            }
            Listener::Unix(l, p) => {
                l.set_nonblocking(true)?;
                AsyncListener::Unix(tokio::net::UnixListener::from_std(l)?, p)
            }
        })
    }

    async fn accept(&self) -> std::io::Result<Stream> {
        match self {
            AsyncListener::Tcp(l) => l.accept().await.map(|(s, peer)| {
                let _ = s.set_nodelay(true);
                Stream::Tcp(s, peer)
            }),
            AsyncListener::Unix(l, _) => l.accept().await.map(|(s, _)| Stream::Unix(s)),
        }
    }
}

enum Stream {
    Tcp(tokio::net::TcpStream, SocketAddr),
    Unix(tokio::net::UnixStream),
}
