//! Failure classes: every way a request can fail, each counted separately.
use std::io;

use serde::{Deserialize, Serialize};

/// FailureClass names one way a request failed below the HTTP status level.
/// HTTP 4xx/5xx responses are failures too, but they are counted by status code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureClass {
    /// The target actively refused the TCP connection (nothing listening).
    ConnectionRefused,
    /// The TCP or TLS connection did not complete within the timeout.
    ConnectTimeout,
    /// The request was sent but no complete response arrived within the timeout.
    RequestTimeout,
    /// An event stream's next event did not arrive within the stream idle timeout.
    StreamIdleTimeout,
    /// The peer reset the connection (RST) while a request was outstanding.
    ConnectionReset,
    /// The peer closed the connection cleanly before a complete response.
    ClosedBeforeResponse,
    /// The server reset the request's HTTP/2 stream (RST_STREAM) before a complete response.
    StreamReset,
    /// The server's HTTP/2 GOAWAY refused the request's stream: it was sent but not processed.
    GoAway,
    /// The bytes received are not a valid HTTP/1.1 (or HTTP/2) response.
    InvalidResponse,
    /// The target's host name could not be resolved.
    DnsFailure,
    /// The TLS handshake or record layer failed (bad certificate, protocol error).
    TlsFailure,
    /// No local address/port was available for a new connection (EADDRNOTAVAIL).
    AddressExhausted,
    /// The process ran out of file descriptors (EMFILE/ENFILE).
    TooManyOpenFiles,
    /// Any other socket error.
    OtherIo,
    /// The run ended (duration, Ctrl-C) while the request was in flight and the grace period ran out.
    Interrupted,
}

impl FailureClass {
    /// ALL lists every class, in the order reports print them.
    pub const ALL: [FailureClass; 15] = [
        FailureClass::ConnectionRefused,
        FailureClass::ConnectTimeout,
        FailureClass::RequestTimeout,
        FailureClass::StreamIdleTimeout,
        FailureClass::ConnectionReset,
        FailureClass::ClosedBeforeResponse,
        FailureClass::StreamReset,
        FailureClass::GoAway,
        FailureClass::InvalidResponse,
        FailureClass::DnsFailure,
        FailureClass::TlsFailure,
        FailureClass::AddressExhausted,
        FailureClass::TooManyOpenFiles,
        FailureClass::OtherIo,
        FailureClass::Interrupted,
    ];

    /// COUNT is the number of classes, for fixed-size counter arrays.
    pub const COUNT: usize = Self::ALL.len();

    /// index is this class's position in [`FailureClass::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// name is the snake_case key used in JSON and reports.
    pub fn name(self) -> &'static str {
        match self {
            FailureClass::ConnectionRefused => "connection_refused",
            FailureClass::ConnectTimeout => "connect_timeout",
            FailureClass::RequestTimeout => "request_timeout",
            FailureClass::StreamIdleTimeout => "stream_idle_timeout",
            FailureClass::ConnectionReset => "connection_reset",
            FailureClass::ClosedBeforeResponse => "closed_before_response",
            FailureClass::StreamReset => "stream_reset",
            FailureClass::GoAway => "goaway",
            FailureClass::InvalidResponse => "invalid_response",
            FailureClass::DnsFailure => "dns_failure",
            FailureClass::TlsFailure => "tls_failure",
            FailureClass::AddressExhausted => "address_exhausted",
            FailureClass::TooManyOpenFiles => "too_many_open_files",
            FailureClass::OtherIo => "other_io",
            FailureClass::Interrupted => "interrupted",
        }
    }

    /// from_connect_error classifies an error returned while opening a connection.
    pub fn from_connect_error(err: &io::Error) -> FailureClass {
        match err.raw_os_error() {
            Some(libc::ECONNREFUSED) => FailureClass::ConnectionRefused,
            Some(libc::ETIMEDOUT) => FailureClass::ConnectTimeout,
            Some(libc::EADDRNOTAVAIL | libc::EADDRINUSE) => FailureClass::AddressExhausted,
            Some(libc::EMFILE | libc::ENFILE) => FailureClass::TooManyOpenFiles,
            Some(libc::ECONNRESET) => FailureClass::ConnectionReset,
            _ => FailureClass::from_io_error(err),
        }
    }

    /// from_io_error classifies an error returned by read or write on an open connection.
    pub fn from_io_error(err: &io::Error) -> FailureClass {
        match err.kind() {
            io::ErrorKind::ConnectionRefused => FailureClass::ConnectionRefused,
            io::ErrorKind::ConnectionReset | io::ErrorKind::ConnectionAborted => FailureClass::ConnectionReset,
            io::ErrorKind::BrokenPipe | io::ErrorKind::UnexpectedEof => FailureClass::ClosedBeforeResponse,
            io::ErrorKind::TimedOut => FailureClass::RequestTimeout,
            io::ErrorKind::InvalidData => FailureClass::TlsFailure,
            _ => match err.raw_os_error() {
                Some(libc::EMFILE | libc::ENFILE) => FailureClass::TooManyOpenFiles,
                Some(libc::EADDRNOTAVAIL) => FailureClass::AddressExhausted,
                _ => FailureClass::OtherIo,
            },
        }
    }
}

/// is_shed_status tells whether a status code means the server refused load on purpose
/// (429 Too Many Requests, 503 Service Unavailable), as opposed to breaking.
pub(crate) fn is_shed_status(status: u16) -> bool {
    status == 429 || status == 503
}

/// is_failure_status tells whether a status code counts as a failed request (4xx and 5xx).
pub(crate) fn is_failure_status(status: u16) -> bool {
    status >= 400
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indices_match_order_of_all() {
        for (i, class) in FailureClass::ALL.iter().enumerate() {
            assert_eq!(class.index(), i, "{class:?}");
        }
    }

    #[test]
    fn connect_errors_are_classified_by_errno() {
        let cases = [
            (libc::ECONNREFUSED, FailureClass::ConnectionRefused),
            (libc::EADDRNOTAVAIL, FailureClass::AddressExhausted),
            (libc::EMFILE, FailureClass::TooManyOpenFiles),
            (libc::ENFILE, FailureClass::TooManyOpenFiles),
            (libc::ETIMEDOUT, FailureClass::ConnectTimeout),
            (libc::ECONNRESET, FailureClass::ConnectionReset),
            (libc::EPIPE, FailureClass::ClosedBeforeResponse),
        ];
        for (errno, expected) in cases {
            let err = io::Error::from_raw_os_error(errno);
            assert_eq!(FailureClass::from_connect_error(&err), expected, "errno {errno}");
        }
    }

    #[test]
    fn shed_and_failure_statuses() {
        assert!(is_shed_status(429) && is_shed_status(503));
        assert!(!is_shed_status(500) && !is_shed_status(200));
        assert!(is_failure_status(404) && is_failure_status(500));
        assert!(!is_failure_status(204) && !is_failure_status(304));
    }
}
