//! transport: a connection's byte stream, plain TCP or TLS over it, behind one interface.

use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::os::fd::AsRawFd;

use mio::net::TcpStream;
use mio::{Interest, Registry, Token};

use crate::http::tls::TlsSetup;

/// Transport moves bytes over one connection; all calls are non-blocking and report
/// `WouldBlock` when the socket has no more to give or take.
pub(crate) enum Transport {
    /// Plain is cleartext TCP.
    Plain(TcpStream),
    /// Tls is a rustls client session over TCP.
    Tls(TcpStream, Box<rustls::ClientConnection>),
}

impl Transport {
    /// connect starts a non-blocking connect to `addr` (TLS over it when `tls` is set) and
    /// registers the socket under `token`; `stamped` asks for kernel receive timestamps.
    pub(crate) fn connect(
        addr: SocketAddr,
        tls: Option<&TlsSetup>,
        stamped: bool,
        registry: &Registry,
        token: Token,
    ) -> io::Result<Transport> {
        let mut stream = TcpStream::connect(addr)?;
        stream.set_nodelay(true)?;
        if stamped && tls.is_none() {
            enable_receive_timestamps(&stream)?;
        }
        if addr.ip().is_loopback() {
            // Congestion control has nothing to do on loopback, and the default (often BBR)
            // costs ~1.5 % of the generator's CPU per ACK; reno is the cheapest and always
            // allowed. Real networks keep the system's choice.
            let _ = socket2::SockRef::from(&stream).set_tcp_congestion(b"reno");
        }
        // Registered once, edge-triggered, for both directions: a request is written
        // straight after the previous response, and write interest costs nothing until
        // a write would block.
        registry.register(&mut stream, token, Interest::READABLE | Interest::WRITABLE)?;
        Ok(match tls {
            None => Transport::Plain(stream),
            Some(setup) => {
                let session = setup.connection().map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
                Transport::Tls(stream, Box::new(session))
            }
        })
    }

    /// connect_result checks a connecting socket after an event: Ok(true) once connected,
    /// Ok(false) if still in progress, Err with the connect error otherwise.
    pub(crate) fn connect_result(&mut self) -> io::Result<bool> {
        let stream = self.stream_mut();
        if let Some(err) = stream.take_error()? {
            return Err(err);
        }
        match stream.peer_addr() {
            Ok(_) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::NotConnected => Ok(false),
            Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// negotiated_h2 tells whether TLS agreed on HTTP/2 by ALPN (false for plain TCP).
    pub(crate) fn negotiated_h2(&self) -> bool {
        matches!(self, Transport::Tls(_, tls) if tls.alpn_protocol() == Some(b"h2"))
    }

    /// stream is the underlying socket (for registration and error checks).
    pub(crate) fn stream_mut(&mut self) -> &mut TcpStream {
        match self {
            Transport::Plain(s) | Transport::Tls(s, _) => s,
        }
    }

    /// is_tls tells whether this is a TLS session.
    pub(crate) fn is_tls(&self) -> bool {
        matches!(self, Transport::Tls(..))
    }

    /// write sends as much of `data` as the socket takes now and returns how much that was.
    /// TLS takes the plaintext into its buffer and writes what the socket takes; records it
    /// could not write yet are written first on the next call (or by [`Transport::flush`]),
    /// so the count returned is never lost and never written twice.
    pub(crate) fn write(&mut self, data: &[u8]) -> io::Result<usize> {
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
    pub(crate) fn flush(&mut self) -> io::Result<bool> {
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
    pub(crate) fn handshake(&mut self) -> io::Result<bool> {
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
                Ok(0) => {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        "connection closed during the TLS handshake",
                    ))
                }
                Ok(_) => {
                    tls.process_new_packets().map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// read_stamped is [`Transport::read`] that also reports when the kernel received the
    /// last bytes it returns (CLOCK_REALTIME nanoseconds, from `SO_TIMESTAMPNS`, which
    /// [`enable_receive_timestamps`] turns on); None for TLS, or when the kernel gave no stamp.
    pub(crate) fn read_stamped(&mut self, buf: &mut [u8], stamp: &mut Option<i128>) -> io::Result<usize> {
        let Transport::Plain(stream) = self else { return self.read(buf) };
        let mut iov = libc::iovec { iov_base: buf.as_mut_ptr().cast(), iov_len: buf.len() };
        // Room for one SCM_TIMESTAMPNS message (a timespec), aligned for cmsghdr.
        let mut control = [0u64; 8];
        // SAFETY: msghdr is plain data; every pointer set below outlives the call.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_iov = &raw mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = std::mem::size_of_val(&control) as _;
        // SAFETY: the fd is a live socket we own; iov and control point to writable buffers.
        let n = unsafe { libc::recvmsg(stream.as_raw_fd(), &raw mut msg, 0) };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: CMSG_FIRSTHDR/CMSG_NXTHDR walk the control buffer the kernel filled, within
        // msg_controllen; the payload of SCM_TIMESTAMPNS is a timespec.
        unsafe {
            let mut cmsg = libc::CMSG_FIRSTHDR(&raw const msg);
            while !cmsg.is_null() {
                if (*cmsg).cmsg_level == libc::SOL_SOCKET && (*cmsg).cmsg_type == libc::SCM_TIMESTAMPNS {
                    let ts: libc::timespec = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast());
                    *stamp = Some(i128::from(ts.tv_sec) * 1_000_000_000 + i128::from(ts.tv_nsec));
                }
                cmsg = libc::CMSG_NXTHDR(&raw const msg, cmsg);
            }
        }
        Ok(n as usize)
    }

    /// read fills `buf` with received bytes; Ok(0) means the peer closed the connection.
    pub(crate) fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
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
                        tls.process_new_packets().map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
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

/// enable_receive_timestamps asks the kernel to stamp the bytes `stream` receives, for
/// [`Transport::read_stamped`].
pub(crate) fn enable_receive_timestamps(stream: &TcpStream) -> io::Result<()> {
    let on: libc::c_int = 1;
    // SAFETY: SO_TIMESTAMPNS takes an int flag; the fd is a live socket.
    let rc = unsafe {
        libc::setsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_TIMESTAMPNS,
            (&raw const on).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// realtime_ns is CLOCK_REALTIME now, in nanoseconds (the clock receive stamps are in).
pub(crate) fn realtime_ns() -> i128 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one timespec into a valid pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &raw mut ts) };
    i128::from(ts.tv_sec) * 1_000_000_000 + i128::from(ts.tv_nsec)
}

fn flush_tls(stream: &mut TcpStream, tls: &mut rustls::ClientConnection) -> io::Result<()> {
    while tls.wants_write() {
        tls.write_tls(stream)?;
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn receive_stamps_say_when_bytes_arrived_not_when_they_were_read() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let addr = listener.local_addr().expect("local addr");
        let client = std::net::TcpStream::connect(addr).expect("connect");
        let (mut server, _) = listener.accept().expect("accept");
        client.set_nonblocking(true).expect("nonblocking");
        let stream = TcpStream::from_std(client);
        enable_receive_timestamps(&stream).expect("SO_TIMESTAMPNS");
        let mut transport = Transport::Plain(stream);
        // The kernel turns stamping on from a work item: let it run before the bytes go.
        std::thread::sleep(Duration::from_millis(20));
        server.write_all(b"hello").expect("write");
        let written = realtime_ns();
        std::thread::sleep(Duration::from_millis(50));
        let read_at = realtime_ns();
        let (mut buf, mut stamp) = ([0u8; 16], None);
        let n = transport.read_stamped(&mut buf, &mut stamp).expect("read");
        assert_eq!(&buf[..n], b"hello");
        let stamp = stamp.expect("the kernel stamps loopback bytes");
        // Stamped around the write, 50 ms before the read (a wide margin for a busy machine).
        assert!(
            stamp >= written - 5_000_000 && stamp <= written + 20_000_000,
            "stamp {} ns after the write",
            stamp - written
        );
        assert!(read_at - stamp >= 30_000_000, "stamp only {} ns before the read", read_at - stamp);
    }
}
