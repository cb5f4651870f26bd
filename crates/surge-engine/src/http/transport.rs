//! transport: a connection's byte stream, plain TCP or TLS over it, behind one interface.

use std::io::{self, Read, Write};

use mio::net::TcpStream;

/// Transport moves bytes over one connection; all calls are non-blocking and report
/// `WouldBlock` when the socket has no more to give or take.
pub enum Transport {
    /// Plain is cleartext TCP.
    Plain(TcpStream),
    /// Tls is a rustls client session over TCP.
    Tls(TcpStream, Box<rustls::ClientConnection>),
}

impl Transport {
    /// stream is the underlying socket (for registration and error checks).
    pub fn stream_mut(&mut self) -> &mut TcpStream {
        match self {
            Transport::Plain(s) | Transport::Tls(s, _) => s,
        }
    }

    /// is_tls tells whether this is a TLS session.
    pub fn is_tls(&self) -> bool {
        matches!(self, Transport::Tls(..))
    }

    /// write sends as much of `data` as the socket takes now and returns how much that was.
    /// TLS takes the plaintext into its buffer and writes what the socket takes; records it
    /// could not write yet are written first on the next call (or by [`Transport::flush`]),
    /// so the count returned is never lost and never written twice.
    pub fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        match self {
            Transport::Plain(stream) => stream.write(data),
            Transport::Tls(stream, tls) => {
                // Records left from an earlier call go first: plaintext never piles up
                // behind a socket that takes nothing.
                flush_tls(stream, tls)?;
                let accepted = tls.writer().write(data)?;
                match flush_tls(stream, tls) {
                    Err(e) if e.kind() != io::ErrorKind::WouldBlock => Err(e),
                    _ => Ok(accepted),
                }
            }
        }
    }

    /// flush writes buffered TLS records; true when nothing is left to write (always, for
    /// plain TCP: its writes go straight to the socket).
    #[inline]
    pub fn flush(&mut self) -> io::Result<bool> {
        match self {
            Transport::Plain(_) => Ok(true),
            Transport::Tls(stream, tls) => match flush_tls(stream, tls) {
                Ok(()) => Ok(true),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(false),
                Err(e) => Err(e),
            },
        }
    }

    /// handshake drives a TLS handshake as far as the socket allows: true once it is
    /// complete and its last message written, false while it waits for the socket. Plain
    /// TCP has none. A peer that closes, or answers with anything but TLS, fails it with
    /// `InvalidData` (a TLS failure).
    pub fn handshake(&mut self) -> io::Result<bool> {
        let Transport::Tls(stream, tls) = self else { return Ok(true) };
        loop {
            match flush_tls(stream, tls) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) => return Err(e),
            }
            if !tls.is_handshaking() {
                return Ok(true);
            }
            match tls.read_tls(stream) {
                Ok(0) => return Err(io::Error::new(io::ErrorKind::InvalidData, "connection closed during the TLS handshake")),
                Ok(_) => {
                    tls.process_new_packets().map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// read fills `buf` with received bytes; Ok(0) means the peer closed the connection.
    pub fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Transport::Plain(stream) => stream.read(buf),
            Transport::Tls(stream, tls) => loop {
                match tls.reader().read(buf) {
                    Ok(n) => return Ok(n),
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    Err(e) => return Err(e),
                }
                // No plaintext buffered: pull records from the socket.
                match tls.read_tls(stream) {
                    Ok(0) => return Ok(0),
                    Ok(_) => {
                        tls.process_new_packets()
                            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
                        // Handshake messages may need an answer.
                        match flush_tls(stream, tls) {
                            Ok(()) => {}
                            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                            Err(e) => return Err(e),
                        }
                    }
                    Err(e) => return Err(e),
                }
            },
        }
    }
}

fn flush_tls(stream: &mut TcpStream, tls: &mut rustls::ClientConnection) -> io::Result<()> {
    while tls.wants_write() {
        tls.write_tls(stream)?;
    }
    Ok(())
}
