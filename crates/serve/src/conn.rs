//! One client connection: the handshake, then a reader (requests in) and a writer
//! (replies out) joined by a bounded channel. A request is validated here; only valid
//! ones reach the engine thread. Nothing a client sends can end another connection or
//! the server: a protocol violation ends this connection, a bad request gets its error
//! reply.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{SyncSender, TrySendError};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufWriter};
use tokio::sync::Semaphore;
use tokio::sync::mpsc;

use crate::clock::wall_now;
use crate::engine::{Job, Op, Permits, Reply};
use crate::proto::{self, Export, Handshake, Request};

/// Requests one connection may have in flight (read but not yet answered); the reader
/// stops reading its socket beyond this (backpressure to the client through TCP).
pub(crate) const PER_CONNECTION_IN_FLIGHT: usize = 128;
/// A client that has not finished its handshake after this long is dropped, so idle
/// sockets cannot hold connection slots forever.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(30);

/// A write's payload must arrive within this long of its header.
const PAYLOAD_TIMEOUT: Duration = Duration::from_secs(60);

/// What every connection shares.
pub(crate) struct Shared {
    pub export: Export,
    pub engine: SyncSender<Job>,
    /// The payload budget in bytes (reads being produced, writes being received).
    pub bytes: Arc<Semaphore>,
    /// Requests answered with an error by the connection tasks (invalid requests).
    pub error_replies: AtomicU64,
    /// Connections that completed the handshake (client sessions), counted as each does.
    pub sessions: AtomicU64,
}

/// How a connection ended, as the accept loop counts it.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Ended {
    /// The client completed the handshake (a session), however it ended after that.
    Session,
    /// The connection ended before the handshake completed (a port probe, a health
    /// check, a client that gave up or aborted): why, in words.
    NoHandshake(String),
}

/// Serve one client until it disconnects or violates the protocol.
pub(crate) async fn serve<S>(mut stream: S, shared: Arc<Shared>) -> Ended
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    match tokio::time::timeout(HANDSHAKE_TIMEOUT, proto::handshake(&mut stream, &shared.export)).await {
        Ok(Ok(Handshake::Transmission)) => {
            shared.sessions.fetch_add(1, Ordering::Relaxed);
        }
        Ok(Ok(Handshake::Closed(why))) => return Ended::NoHandshake(why.to_owned()),
        Ok(Err(e)) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
            return Ended::NoHandshake("closed by the client".to_owned());
        }
        Ok(Err(e)) => return Ended::NoHandshake(e.to_string()),
        Err(_) => {
            return Ended::NoHandshake(format!("no handshake within {} s", HANDSHAKE_TIMEOUT.as_secs()));
        }
    }
    let (rd, wr) = tokio::io::split(stream);
    let (tx, rx) = mpsc::channel(PER_CONNECTION_IN_FLIGHT);
    let writer = tokio::spawn(write_replies(wr, rx));
    read_requests(rd, tx, &shared).await;
    // The writer ends when every in-flight reply has been written (the engine drops its
    // senders as it answers) or the client is gone.
    let _ = writer.await;
    Ended::Session
}

/// Write replies as they come; flush whenever no other reply is ready.
async fn write_replies<W: AsyncWrite + Unpin>(wr: W, mut rx: mpsc::Receiver<Reply>) {
    let mut out = BufWriter::with_capacity(64 << 10, wr);
    while let Some(r) = rx.recv().await {
        let header = proto::simple_reply_header(r.cookie, r.error);
        if out.write_all(&header).await.is_err() || out.write_all(&r.data).await.is_err() {
            return;
        }
        drop(r.permits);
        if rx.is_empty() && out.flush().await.is_err() {
            return;
        }
    }
    let _ = out.flush().await;
    let _ = out.shutdown().await;
}

/// Read requests until `NBD_CMD_DISC`, end of stream, or a bad magic.
async fn read_requests<R: AsyncRead + Unpin>(mut rd: R, tx: mpsc::Sender<Reply>, shared: &Shared) {
    let slots = Arc::new(Semaphore::new(PER_CONNECTION_IN_FLIGHT));
    loop {
        let slot = slots.clone().acquire_owned().await.expect("never closed");
        let req = match proto::read_request(&mut rd).await {
            Ok(Some(r)) => r,
            // A vanished client, or a bad magic: the stream cannot be resynchronised.
            Ok(None) | Err(_) => return,
        };
        if req.kind == proto::CMD_DISC {
            return;
        }
        let permits = Permits { _slot: slot, _bytes: None };
        if let Err(error) = validate(&req, &shared.export) {
            if req.kind == proto::CMD_WRITE && proto::skip(&mut rd, req.length as u64).await.is_err() {
                return;
            }
            shared.error_replies.fetch_add(1, Ordering::Relaxed);
            if tx.send(Reply { cookie: req.cookie, error, data: Vec::new(), permits }).await.is_err() {
                return;
            }
            continue;
        }
        let Some(job) = receive(&mut rd, req, permits, shared, &tx).await else { return };
        match shared.engine.try_send(job) {
            Ok(()) => {}
            Err(TrySendError::Full(job) | TrySendError::Disconnected(job)) => {
                // The engine thread stopped (or, impossibly, its queue is full: it holds
                // every connection's whole window): the server is shutting down.
                let reply = Reply {
                    cookie: job.cookie,
                    error: proto::ESHUTDOWN,
                    data: Vec::new(),
                    permits: job.permits,
                };
                if tx.send(reply).await.is_err() {
                    return;
                }
            }
        }
    }
}

/// Take the payload budget and, for a write, the payload; `None` if the client vanished.
async fn receive<R: AsyncRead + Unpin>(
    rd: &mut R,
    req: Request,
    mut permits: Permits,
    shared: &Shared,
    tx: &mpsc::Sender<Reply>,
) -> Option<Job> {
    let op = match req.kind {
        proto::CMD_READ | proto::CMD_WRITE => {
            permits._bytes =
                Some(shared.bytes.clone().acquire_many_owned(req.length).await.expect("never closed"));
            if req.kind == proto::CMD_READ {
                Op::Read
            } else {
                let mut data = vec![0u8; req.length as usize];
                // A client that stops mid-payload would hold its share of the payload
                // budget forever: it has a deadline, then the connection ends.
                tokio::time::timeout(PAYLOAD_TIMEOUT, rd.read_exact(&mut data)).await.ok()?.ok()?;
                Op::Write(data)
            }
        }
        proto::CMD_TRIM => Op::Trim,
        _ => Op::Flush,
    };
    Some(Job {
        op,
        offset: req.offset,
        len: req.length,
        cookie: req.cookie,
        received: wall_now(),
        reply: tx.clone(),
        permits,
    })
}

/// The error reply a request gets, if any (the protocol's codes: `NBD_EINVAL` for a bad
/// length, flag, alignment or command and for a read or trim beyond the export,
/// `NBD_ENOSPC` for a write beyond it).
pub(crate) fn validate(req: &Request, export: &Export) -> Result<(), u32> {
    let fua_ok = matches!(req.kind, proto::CMD_WRITE | proto::CMD_TRIM);
    let allowed_flags =
        if fua_ok && export.flags & proto::TFLAG_SEND_FUA != 0 { proto::CMD_FLAG_FUA } else { 0 };
    if req.flags & !allowed_flags != 0 {
        return Err(proto::EINVAL);
    }
    match req.kind {
        proto::CMD_FLUSH => return Ok(()),
        proto::CMD_READ | proto::CMD_WRITE => {
            if req.length == 0 || req.length > proto::MAX_PAYLOAD_BYTES {
                return Err(proto::EINVAL);
            }
        }
        proto::CMD_TRIM if export.flags & proto::TFLAG_SEND_TRIM != 0 => {
            if req.length == 0 {
                return Err(proto::EINVAL);
            }
        }
        _ => return Err(proto::EINVAL),
    }
    let min = proto::MIN_BLOCK_BYTES as u64;
    if req.offset % min != 0 || req.length as u64 % min != 0 {
        return Err(proto::EINVAL);
    }
    match req.offset.checked_add(req.length as u64) {
        Some(end) if end <= export.size_bytes => Ok(()),
        _ if req.kind == proto::CMD_WRITE => Err(proto::ENOSPC),
        _ => Err(proto::EINVAL),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::*;

    #[test]
    fn validation_follows_the_protocol() {
        let export = Export {
            size_bytes: 1 << 20,
            flags: TFLAG_HAS_FLAGS | TFLAG_SEND_FLUSH | TFLAG_SEND_FUA | TFLAG_SEND_TRIM,
            preferred_block_bytes: 4096,
        };
        let r = |kind, offset, length| Request { flags: 0, kind, cookie: 1, offset, length };
        assert_eq!(validate(&r(CMD_READ, 0, 4096), &export), Ok(()));
        assert_eq!(validate(&r(CMD_READ, 0, 0), &export), Err(EINVAL));
        assert_eq!(validate(&r(CMD_READ, 0, MAX_PAYLOAD_BYTES + 512), &export), Err(EINVAL));
        assert_eq!(validate(&r(CMD_READ, (1 << 20) - 512, 1024), &export), Err(EINVAL));
        assert_eq!(validate(&r(CMD_WRITE, (1 << 20) - 512, 1024), &export), Err(ENOSPC));
        assert_eq!(validate(&r(CMD_WRITE, u64::MAX - 511, 512), &export), Err(ENOSPC));
        assert_eq!(validate(&r(CMD_TRIM, 1 << 20, 512), &export), Err(EINVAL));
        assert_eq!(validate(&r(CMD_TRIM, 0, 1 << 20), &export), Ok(()));
        assert_eq!(validate(&r(CMD_READ, 100, 512), &export), Err(EINVAL));
        assert_eq!(validate(&r(9, 0, 512), &export), Err(EINVAL));
        assert_eq!(validate(&r(CMD_FLUSH, 0, 0), &export), Ok(()));
        assert_eq!(validate(&Request { flags: CMD_FLAG_FUA, ..r(CMD_WRITE, 0, 512) }, &export), Ok(()));
        assert_eq!(validate(&Request { flags: CMD_FLAG_FUA, ..r(CMD_READ, 0, 512) }, &export), Err(EINVAL));
        let no_trim = Export { flags: TFLAG_HAS_FLAGS, ..export };
        assert_eq!(validate(&r(CMD_TRIM, 0, 512), &no_trim), Err(EINVAL));
    }
}
