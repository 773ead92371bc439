//! A small blocking NBD client (std sockets, one request at a time or pipelined by the
//! caller): what the tests and the loopback measurements drive a server with. It speaks
//! the same subset the server does, and lets a test send malformed bytes too.

use std::io::{Read, Write};
use std::net::TcpStream;

use crate::proto::*;

/// An option reply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OptReply {
    /// The option it answers.
    pub option: u32,
    /// `REP_*`.
    pub kind: u32,
    /// Its data.
    pub data: Vec<u8>,
}

/// A simple reply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimpleReply {
    /// The request's cookie.
    pub cookie: u64,
    /// 0 or an `NBD_E*` code.
    pub error: u32,
}

/// A client connection.
pub struct Client {
    /// The socket (public: tests write raw bytes).
    pub stream: TcpStream,
    /// Export size from the handshake (0 before [`Client::go`]).
    pub size_bytes: u64,
    /// Transmission flags from the handshake.
    pub flags: u16,
}

impl Client {
    /// Connect and read the server's greeting; returns the handshake flags too.
    pub fn connect(addr: &str) -> std::io::Result<(Client, u16)> {
        let stream = TcpStream::connect(addr)?;
        stream.set_nodelay(true)?;
        let mut c = Client { stream, size_bytes: 0, flags: 0 };
        let magic = c.u64()?;
        let opt = c.u64()?;
        if magic != NBDMAGIC || opt != IHAVEOPT {
            return Err(std::io::Error::other("not an NBD newstyle server"));
        }
        let flags = c.u16()?;
        Ok((c, flags))
    }

    /// Connect, send the client flags and `NBD_OPT_GO` for the default export.
    pub fn open(addr: &str) -> std::io::Result<Client> {
        let (mut c, _) = Client::connect(addr)?;
        c.send_flags(CLIENT_FIXED_NEWSTYLE | CLIENT_NO_ZEROES)?;
        c.go("")?;
        Ok(c)
    }

    /// Send the client flags.
    pub fn send_flags(&mut self, flags: u32) -> std::io::Result<()> {
        self.stream.write_all(&flags.to_be_bytes())
    }

    /// Send one option.
    pub fn send_option(&mut self, option: u32, data: &[u8]) -> std::io::Result<()> {
        let mut out = IHAVEOPT.to_be_bytes().to_vec();
        out.extend_from_slice(&option.to_be_bytes());
        out.extend_from_slice(&(data.len() as u32).to_be_bytes());
        out.extend_from_slice(data);
        self.stream.write_all(&out)
    }

    /// Read one option reply.
    pub fn option_reply(&mut self) -> std::io::Result<OptReply> {
        if self.u64()? != REPLY_MAGIC {
            return Err(std::io::Error::other("bad option reply magic"));
        }
        let option = self.u32()?;
        let kind = self.u32()?;
        let len = self.u32()? as usize;
        let mut data = vec![0; len];
        self.stream.read_exact(&mut data)?;
        Ok(OptReply { option, kind, data })
    }

    /// `NBD_OPT_INFO` (`go = false`) or `NBD_OPT_GO` for `name`; returns every reply up to
    /// and including the final one (an ACK or an error). After a successful GO the size
    /// and flags are set.
    pub fn info(&mut self, name: &str, go: bool) -> std::io::Result<Vec<OptReply>> {
        let mut d = (name.len() as u32).to_be_bytes().to_vec();
        d.extend_from_slice(name.as_bytes());
        d.extend_from_slice(&1u16.to_be_bytes());
        d.extend_from_slice(&INFO_BLOCK_SIZE.to_be_bytes());
        self.send_option(if go { OPT_GO } else { OPT_INFO }, &d)?;
        let mut replies = Vec::new();
        loop {
            let r = self.option_reply()?;
            if r.kind == REP_INFO && r.data.len() == 12 && r.data[..2] == INFO_EXPORT.to_be_bytes() {
                self.size_bytes = u64::from_be_bytes(r.data[2..10].try_into().expect("8"));
                self.flags = u16::from_be_bytes(r.data[10..12].try_into().expect("2"));
            }
            let last = r.kind != REP_INFO;
            replies.push(r);
            if last {
                return Ok(replies);
            }
        }
    }

    /// `NBD_OPT_GO`; an error reply is an error.
    pub fn go(&mut self, name: &str) -> std::io::Result<()> {
        let replies = self.info(name, true)?;
        match replies.last() {
            Some(r) if r.kind == REP_ACK => Ok(()),
            r => Err(std::io::Error::other(format!("NBD_OPT_GO refused: {r:?}"))),
        }
    }

    /// Send a request header (and payload, for a write).
    pub fn send(
        &mut self,
        kind: u16,
        cookie: u64,
        offset: u64,
        length: u32,
        payload: &[u8],
    ) -> std::io::Result<()> {
        let mut h = Vec::with_capacity(28 + payload.len());
        h.extend_from_slice(&REQUEST_MAGIC.to_be_bytes());
        h.extend_from_slice(&0u16.to_be_bytes());
        h.extend_from_slice(&kind.to_be_bytes());
        h.extend_from_slice(&cookie.to_be_bytes());
        h.extend_from_slice(&offset.to_be_bytes());
        h.extend_from_slice(&length.to_be_bytes());
        h.extend_from_slice(payload);
        self.stream.write_all(&h)
    }

    /// Read a simple reply header.
    pub fn reply(&mut self) -> std::io::Result<SimpleReply> {
        if self.u32()? != SIMPLE_REPLY_MAGIC {
            return Err(std::io::Error::other("bad simple reply magic"));
        }
        let error = self.u32()?;
        let cookie = self.u64()?;
        Ok(SimpleReply { cookie, error })
    }

    /// Read `len` bytes into a vector (a read reply's data).
    pub fn data(&mut self, len: usize) -> std::io::Result<Vec<u8>> {
        let mut d = vec![0; len];
        self.stream.read_exact(&mut d)?;
        Ok(d)
    }

    /// Write `data` at `offset`, wait for the reply; returns its error code.
    pub fn write(&mut self, offset: u64, data: &[u8]) -> std::io::Result<u32> {
        self.send(CMD_WRITE, 1, offset, data.len() as u32, data)?;
        Ok(self.reply()?.error)
    }

    /// Read `len` bytes at `offset`: the data, or the error code.
    pub fn read(&mut self, offset: u64, len: u32) -> std::io::Result<Result<Vec<u8>, u32>> {
        self.send(CMD_READ, 2, offset, len, &[])?;
        let r = self.reply()?;
        if r.error != 0 {
            return Ok(Err(r.error));
        }
        Ok(Ok(self.data(len as usize)?))
    }

    /// A command without payload or data (trim, flush); returns its error code.
    pub fn command(&mut self, kind: u16, offset: u64, len: u32) -> std::io::Result<u32> {
        self.send(kind, 3, offset, len, &[])?;
        Ok(self.reply()?.error)
    }

    /// `NBD_CMD_DISC`: the server closes the connection after it.
    pub fn disconnect(mut self) -> std::io::Result<()> {
        self.send(CMD_DISC, 4, 0, 0, &[])
    }

    fn u64(&mut self) -> std::io::Result<u64> {
        let mut b = [0; 8];
        self.stream.read_exact(&mut b)?;
        Ok(u64::from_be_bytes(b))
    }

    fn u32(&mut self) -> std::io::Result<u32> {
        let mut b = [0; 4];
        self.stream.read_exact(&mut b)?;
        Ok(u32::from_be_bytes(b))
    }

    fn u16(&mut self) -> std::io::Result<u16> {
        let mut b = [0; 2];
        self.stream.read_exact(&mut b)?;
        Ok(u16::from_be_bytes(b))
    }
}
