//! The NBD wire protocol (the subset Lamina serves): the fixed newstyle handshake, option
//! haggling and simple replies. Constants and layouts follow the NBD protocol document
//! (`doc/proto.md` of the NetworkBlockDevice/nbd repository).
//!
//! Handshake: the server sends `NBDMAGIC`, `IHAVEOPT` and its handshake flags; the client
//! answers with its flags and then options, each `IHAVEOPT, option, length, data`. The
//! server answers each option with `REPLY_MAGIC, option, reply type, length, data` (except
//! `NBD_OPT_EXPORT_NAME`, answered with the export size and transmission flags only) until
//! `NBD_OPT_GO` or `NBD_OPT_EXPORT_NAME` starts the transmission phase.

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// `NBDMAGIC`, the first eight bytes the server sends.
pub const NBDMAGIC: u64 = 0x4e42_444d_4147_4943;
/// `IHAVEOPT`: starts the newstyle negotiation and every client option.
pub const IHAVEOPT: u64 = 0x4948_4156_454f_5054;
/// Magic of every option reply.
pub const REPLY_MAGIC: u64 = 0x0003_e889_0455_65a9;
/// Magic of every transmission request.
pub const REQUEST_MAGIC: u32 = 0x2560_9513;
/// Magic of a simple reply.
pub const SIMPLE_REPLY_MAGIC: u32 = 0x6744_6698;

/// Handshake flag: the server speaks the fixed newstyle protocol.
pub const FLAG_FIXED_NEWSTYLE: u16 = 1 << 0;
/// Handshake flag: the server can omit the 124 zero bytes after `NBD_OPT_EXPORT_NAME`.
pub const FLAG_NO_ZEROES: u16 = 1 << 1;
/// Client flag: the client speaks fixed newstyle.
pub const CLIENT_FIXED_NEWSTYLE: u32 = 1 << 0;
/// Client flag: the client wants no zero padding after `NBD_OPT_EXPORT_NAME`.
pub const CLIENT_NO_ZEROES: u32 = 1 << 1;

/// `NBD_OPT_EXPORT_NAME`.
pub const OPT_EXPORT_NAME: u32 = 1;
/// `NBD_OPT_ABORT`.
pub const OPT_ABORT: u32 = 2;
/// `NBD_OPT_LIST`.
pub const OPT_LIST: u32 = 3;
/// `NBD_OPT_INFO`.
pub const OPT_INFO: u32 = 6;
/// `NBD_OPT_GO`.
pub const OPT_GO: u32 = 7;

/// `NBD_REP_ACK`.
pub const REP_ACK: u32 = 1;
/// `NBD_REP_SERVER` (one per export in answer to `NBD_OPT_LIST`).
pub const REP_SERVER: u32 = 2;
/// `NBD_REP_INFO`.
pub const REP_INFO: u32 = 3;
/// `NBD_REP_ERR_UNSUP`: the option is unknown to this server.
pub const REP_ERR_UNSUP: u32 = 0x8000_0001;
/// `NBD_REP_ERR_INVALID`: the option's data is malformed.
pub const REP_ERR_INVALID: u32 = 0x8000_0003;
/// `NBD_REP_ERR_UNKNOWN`: no such export.
pub const REP_ERR_UNKNOWN: u32 = 0x8000_0006;

/// `NBD_INFO_EXPORT`: size and transmission flags.
pub const INFO_EXPORT: u16 = 0;
/// `NBD_INFO_NAME`.
pub const INFO_NAME: u16 = 1;
/// `NBD_INFO_DESCRIPTION`.
pub const INFO_DESCRIPTION: u16 = 2;
/// `NBD_INFO_BLOCK_SIZE`: minimum, preferred and maximum block sizes.
pub const INFO_BLOCK_SIZE: u16 = 3;

/// Transmission flag: the flags field is valid.
pub const TFLAG_HAS_FLAGS: u16 = 1 << 0;
/// Transmission flag: `NBD_CMD_FLUSH` is supported.
pub const TFLAG_SEND_FLUSH: u16 = 1 << 2;
/// Transmission flag: `NBD_CMD_FLAG_FUA` is accepted on writes.
pub const TFLAG_SEND_FUA: u16 = 1 << 3;
/// Transmission flag: `NBD_CMD_TRIM` is supported.
pub const TFLAG_SEND_TRIM: u16 = 1 << 5;
/// Transmission flag: several connections see one consistent export (a flush on one
/// covers writes completed on all).
pub const TFLAG_CAN_MULTI_CONN: u16 = 1 << 8;

/// `NBD_CMD_READ`.
pub const CMD_READ: u16 = 0;
/// `NBD_CMD_WRITE`.
pub const CMD_WRITE: u16 = 1;
/// `NBD_CMD_DISC`.
pub const CMD_DISC: u16 = 2;
/// `NBD_CMD_FLUSH`.
pub const CMD_FLUSH: u16 = 3;
/// `NBD_CMD_TRIM`.
pub const CMD_TRIM: u16 = 4;
/// `NBD_CMD_FLAG_FUA`, the only command flag accepted (writes are durable in the
/// server's store when they complete, so it changes nothing).
pub const CMD_FLAG_FUA: u16 = 1 << 0;

/// `NBD_EIO`.
pub const EIO: u32 = 5;
/// `NBD_EINVAL`.
pub const EINVAL: u32 = 22;
/// `NBD_ENOSPC`.
pub const ENOSPC: u32 = 28;
/// `NBD_ENOTSUP`.
pub const ENOTSUP: u32 = 95;
/// `NBD_ESHUTDOWN`: the server is shutting down.
pub const ESHUTDOWN: u32 = 108;

/// The largest read or write payload served: 32 MiB, the limit every client respects
/// without negotiation (the protocol's recommended maximum).
pub const MAX_PAYLOAD_BYTES: u32 = 32 << 20;
/// Requests address whole 512-byte sectors (advertised as the minimum block size): the
/// recorded trace's formats address sectors.
pub const MIN_BLOCK_BYTES: u32 = 512;
/// The longest option data accepted (an export name is at most 4096 bytes).
const MAX_OPTION_BYTES: u32 = 8192;
/// The one export's name; the empty (default) name selects it as well.
pub const EXPORT_NAME: &str = "lamina";

/// What the handshake needs to know about the export.
#[derive(Clone, Copy, Debug)]
pub struct Export {
    /// Size in bytes (the device's logical capacity).
    pub size_bytes: u64,
    /// Transmission flags.
    pub flags: u16,
    /// Preferred block size (the device's page size).
    pub preferred_block_bytes: u32,
}

/// How a handshake ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Handshake {
    /// The client chose the export: transmission starts.
    Transmission,
    /// The client aborted, or sent something the protocol says ends the connection
    /// (bad magic, unknown client flags, an unknown name in `NBD_OPT_EXPORT_NAME`).
    Closed(&'static str),
}

/// Run the server side of the fixed newstyle handshake on `io`. I/O errors (the client
/// went away) are returned; protocol violations end as [`Handshake::Closed`].
pub async fn handshake<S>(io: &mut S, export: &Export) -> std::io::Result<Handshake>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let mut hello = Vec::with_capacity(18);
    hello.extend_from_slice(&NBDMAGIC.to_be_bytes());
    hello.extend_from_slice(&IHAVEOPT.to_be_bytes());
    hello.extend_from_slice(&(FLAG_FIXED_NEWSTYLE | FLAG_NO_ZEROES).to_be_bytes());
    io.write_all(&hello).await?;
    let client_flags = io.read_u32().await?;
    if client_flags & !(CLIENT_FIXED_NEWSTYLE | CLIENT_NO_ZEROES) != 0 {
        return Ok(Handshake::Closed("unknown client flags"));
    }
    let no_zeroes = client_flags & CLIENT_NO_ZEROES != 0;
    loop {
        if io.read_u64().await? != IHAVEOPT {
            return Ok(Handshake::Closed("bad option magic"));
        }
        let option = io.read_u32().await?;
        let len = io.read_u32().await?;
        if len > MAX_OPTION_BYTES {
            // Too long to be any option this server knows; skipping it keeps the stream in
            // step without buffering it.
            skip(io, len as u64).await?;
            reply(io, option, REP_ERR_INVALID, b"option data too long").await?;
            continue;
        }
        let mut data = vec![0; len as usize];
        io.read_exact(&mut data).await?;
        match option {
            OPT_EXPORT_NAME => {
                if !known_name(&data) {
                    return Ok(Handshake::Closed("unknown export name"));
                }
                let mut out = Vec::with_capacity(134);
                out.extend_from_slice(&export.size_bytes.to_be_bytes());
                out.extend_from_slice(&export.flags.to_be_bytes());
                if !no_zeroes {
                    out.extend_from_slice(&[0; 124]);
                }
                io.write_all(&out).await?;
                return Ok(Handshake::Transmission);
            }
            OPT_ABORT => {
                reply(io, option, REP_ACK, &[]).await?;
                return Ok(Handshake::Closed("client aborted"));
            }
            OPT_LIST => {
                if !data.is_empty() {
                    reply(io, option, REP_ERR_INVALID, b"NBD_OPT_LIST takes no data").await?;
                    continue;
                }
                let mut server = (EXPORT_NAME.len() as u32).to_be_bytes().to_vec();
                server.extend_from_slice(EXPORT_NAME.as_bytes());
                reply(io, option, REP_SERVER, &server).await?;
                reply(io, option, REP_ACK, &[]).await?;
            }
            OPT_INFO | OPT_GO => match parse_info_request(&data) {
                Err(why) => reply(io, option, REP_ERR_INVALID, why.as_bytes()).await?,
                Ok((name, _)) if !known_name(name) => {
                    reply(io, option, REP_ERR_UNKNOWN, b"no such export (use \"\" or \"lamina\")").await?
                }
                Ok((_, wants)) => {
                    send_info(io, option, export, &wants).await?;
                    reply(io, option, REP_ACK, &[]).await?;
                    if option == OPT_GO {
                        return Ok(Handshake::Transmission);
                    }
                }
            },
            _ => reply(io, option, REP_ERR_UNSUP, b"option not supported").await?,
        }
    }
}

/// The export's name or the default (empty) name.
fn known_name(name: &[u8]) -> bool {
    name.is_empty() || name == EXPORT_NAME.as_bytes()
}

/// Split `NBD_OPT_INFO`/`NBD_OPT_GO` data: `u32 name length, name, u16 n, n × u16`.
fn parse_info_request(data: &[u8]) -> Result<(&[u8], Vec<u16>), &'static str> {
    let bad = "malformed NBD_OPT_INFO/GO data";
    let name_len = u32::from_be_bytes(data.get(..4).ok_or(bad)?.try_into().expect("4 bytes")) as usize;
    let name = data.get(4..4 + name_len).ok_or(bad)?;
    let rest = &data[4 + name_len..];
    let n = u16::from_be_bytes(rest.get(..2).ok_or(bad)?.try_into().expect("2 bytes")) as usize;
    let items = rest.get(2..).ok_or(bad)?;
    if items.len() != 2 * n {
        return Err(bad);
    }
    Ok((name, items.chunks_exact(2).map(|c| u16::from_be_bytes([c[0], c[1]])).collect()))
}

/// The `NBD_REP_INFO` replies: always the export's size and flags, and the block sizes
/// (sent even unasked: the server does not serve sub-sector requests); name and
/// description when asked.
async fn send_info<S: AsyncWrite + Unpin>(
    io: &mut S,
    option: u32,
    export: &Export,
    wants: &[u16],
) -> std::io::Result<()> {
    let mut info = INFO_EXPORT.to_be_bytes().to_vec();
    info.extend_from_slice(&export.size_bytes.to_be_bytes());
    info.extend_from_slice(&export.flags.to_be_bytes());
    reply(io, option, REP_INFO, &info).await?;
    let mut sizes = INFO_BLOCK_SIZE.to_be_bytes().to_vec();
    for v in [MIN_BLOCK_BYTES, export.preferred_block_bytes, MAX_PAYLOAD_BYTES] {
        sizes.extend_from_slice(&v.to_be_bytes());
    }
    reply(io, option, REP_INFO, &sizes).await?;
    if wants.contains(&INFO_NAME) {
        let mut name = INFO_NAME.to_be_bytes().to_vec();
        name.extend_from_slice(EXPORT_NAME.as_bytes());
        reply(io, option, REP_INFO, &name).await?;
    }
    if wants.contains(&INFO_DESCRIPTION) {
        let mut d = INFO_DESCRIPTION.to_be_bytes().to_vec();
        d.extend_from_slice(b"Lamina simulated 3D-NAND SSD");
        reply(io, option, REP_INFO, &d).await?;
    }
    Ok(())
}

/// Send one option reply.
async fn reply<S: AsyncWrite + Unpin>(
    io: &mut S,
    option: u32,
    kind: u32,
    data: &[u8],
) -> std::io::Result<()> {
    let mut out = Vec::with_capacity(20 + data.len());
    out.extend_from_slice(&REPLY_MAGIC.to_be_bytes());
    out.extend_from_slice(&option.to_be_bytes());
    out.extend_from_slice(&kind.to_be_bytes());
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    out.extend_from_slice(data);
    io.write_all(&out).await
}

/// Read and drop `n` bytes (bounded memory).
pub async fn skip<S: AsyncRead + Unpin>(io: &mut S, mut n: u64) -> std::io::Result<()> {
    let mut buf = [0u8; 64 << 10];
    while n > 0 {
        let k = n.min(buf.len() as u64) as usize;
        io.read_exact(&mut buf[..k]).await?;
        n -= k as u64;
    }
    Ok(())
}

/// A transmission request header (28 bytes on the wire).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    /// Command flags.
    pub flags: u16,
    /// Command type (`CMD_*`).
    pub kind: u16,
    /// The client's cookie, echoed in the reply.
    pub cookie: u64,
    /// Byte offset.
    pub offset: u64,
    /// Byte length.
    pub length: u32,
}

/// Read one request header; `Ok(None)` if its magic is wrong (the stream cannot be
/// resynchronised: the connection ends).
pub async fn read_request<S: AsyncRead + Unpin>(io: &mut S) -> std::io::Result<Option<Request>> {
    let mut h = [0u8; 28];
    io.read_exact(&mut h).await?;
    if u32::from_be_bytes(h[0..4].try_into().expect("4")) != REQUEST_MAGIC {
        return Ok(None);
    }
    Ok(Some(Request {
        flags: u16::from_be_bytes(h[4..6].try_into().expect("2")),
        kind: u16::from_be_bytes(h[6..8].try_into().expect("2")),
        cookie: u64::from_be_bytes(h[8..16].try_into().expect("8")),
        offset: u64::from_be_bytes(h[16..24].try_into().expect("8")),
        length: u32::from_be_bytes(h[24..28].try_into().expect("4")),
    }))
}

/// The 16-byte header of a simple reply.
pub fn simple_reply_header(cookie: u64, error: u32) -> [u8; 16] {
    let mut h = [0u8; 16];
    h[0..4].copy_from_slice(&SIMPLE_REPLY_MAGIC.to_be_bytes());
    h[4..8].copy_from_slice(&error.to_be_bytes());
    h[8..16].copy_from_slice(&cookie.to_be_bytes());
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn info_request_parses_and_rejects_short_data() {
        let mut d = 6u32.to_be_bytes().to_vec();
        d.extend_from_slice(b"lamina");
        d.extend_from_slice(&1u16.to_be_bytes());
        d.extend_from_slice(&INFO_BLOCK_SIZE.to_be_bytes());
        assert_eq!(parse_info_request(&d).unwrap(), (&b"lamina"[..], vec![INFO_BLOCK_SIZE]));
        assert!(parse_info_request(&d[..d.len() - 1]).is_err());
        assert!(parse_info_request(&[0, 0, 0, 9, b'x']).is_err());
        assert!(known_name(b"") && known_name(b"lamina") && !known_name(b"other"));
    }

    #[test]
    fn reply_header_layout() {
        let h = simple_reply_header(0x0102_0304_0506_0708, EINVAL);
        assert_eq!(&h[..4], &[0x67, 0x44, 0x66, 0x98]);
        assert_eq!(u32::from_be_bytes(h[4..8].try_into().unwrap()), 22);
        assert_eq!(&h[8..], &[1, 2, 3, 4, 5, 6, 7, 8]);
    }
}
