//! HTTP/1.1 framing: parse a request head from a buffer, write a response into one.
use std::io::Write;
use std::mem::MaybeUninit;

/// MAX_HEADERS is the most request headers accepted (more is answered 431).
pub const MAX_HEADERS: usize = 32;

/// Head is a parsed request head, borrowing the read buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Head<'a> {
    /// method is the request method, e.g. `GET`.
    pub method: &'a str,
    /// path is the request target up to any `?`.
    pub path: &'a str,
    /// query is what follows `?` (empty when none).
    pub query: &'a str,
    /// head_len is the length of the head in bytes, the body starts there.
    pub head_len: usize,
    /// content_length is the body's length from `Content-Length` (0 when absent).
    pub content_length: usize,
    /// keep_alive says whether the client lets the connection stay open afterwards.
    pub keep_alive: bool,
    /// http10 says the request is HTTP/1.0 (its keep-alive must be acknowledged).
    pub http10: bool,
    /// expect_continue says the client waits for `100 Continue` before sending the body.
    pub expect_continue: bool,
}

/// Parsed is the outcome of [`parse`] on the bytes read so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parsed<'a> {
    /// Complete: a whole head (the body may still be partly unread).
    Complete(Head<'a>),
    /// Partial: more bytes are needed.
    Partial,
    /// Invalid: not HTTP/1.x we serve; answer `status` with `reason` and close.
    Invalid {
        /// status is the status code to answer with.
        status: u16,
        /// reason is a one-line explanation for the body.
        reason: &'static str,
    },
}

/// parse reads one request head from the start of `buf`, never panicking on any input.
pub fn parse(buf: &[u8]) -> Parsed<'_> {
    if buf.is_empty() {
        return Parsed::Partial;
    }
    // httparse fills the slots it uses: no need to zero 32 of them per request.
    let mut slots = [const { MaybeUninit::<httparse::Header<'_>>::uninit() }; MAX_HEADERS];
    let mut req = httparse::Request::new(&mut []);
    let head_len = match req.parse_with_uninit_headers(buf, &mut slots) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Parsed::Partial,
        Err(httparse::Error::TooManyHeaders) => {
            return Parsed::Invalid { status: 431, reason: "too many request headers" }
        }
        Err(_) => return Parsed::Invalid { status: 400, reason: "malformed HTTP request" },
    };
    let (Some(method), Some(target), Some(version)) = (req.method, req.path, req.version) else {
        return Parsed::Partial;
    };
    let http10 = version == 0;
    let mut keep_alive = !http10;
    let mut content_length: Option<usize> = None;
    let mut expect_continue = false;
    for h in req.headers.iter() {
        if h.name.eq_ignore_ascii_case("content-length") {
            let parsed = std::str::from_utf8(h.value)
                .ok()
                .filter(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|v| v.parse::<usize>().ok());
            match (parsed, content_length) {
                (None, _) => return Parsed::Invalid { status: 400, reason: "invalid Content-Length" },
                (Some(n), Some(m)) if n != m => {
                    return Parsed::Invalid { status: 400, reason: "conflicting Content-Length headers" }
                }
                (Some(n), _) => content_length = Some(n),
            }
        } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
            return Parsed::Invalid {
                status: 501,
                reason: "chunked request bodies are not supported; send Content-Length",
            };
        } else if h.name.eq_ignore_ascii_case("connection") {
            for token in h.value.split(|&b| b == b',') {
                let token = token.trim_ascii();
                if token.eq_ignore_ascii_case(b"close") {
                    keep_alive = false;
                } else if token.eq_ignore_ascii_case(b"keep-alive") {
                    keep_alive = true;
                }
            }
        } else if h.name.eq_ignore_ascii_case("expect") {
            expect_continue = h.value.trim_ascii().eq_ignore_ascii_case(b"100-continue");
        }
    }
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    Parsed::Complete(Head {
        method,
        path,
        query,
        head_len,
        content_length: content_length.unwrap_or(0),
        keep_alive,
        http10,
        expect_continue,
    })
}

/// CONTINUE is the interim response for `Expect: 100-continue`.
pub const CONTINUE: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\n";

/// reason is the standard reason phrase for `status`.
pub fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        201 => "Created",
        204 => "No Content",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        413 => "Content Too Large",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        503 => "Service Unavailable",
        _ => "Unknown",
    }
}

/// Framing is how a response is framed for its request: whether the connection closes after
/// it, whether the client speaks HTTP/1.0, and whether it asked with HEAD (headers only).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Framing {
    /// close says the server closes the connection after this response.
    pub close: bool,
    /// http10 says the request was HTTP/1.0 (keep-alive must be acknowledged).
    pub http10: bool,
    /// head_only says the request was HEAD: the headers GET would get, no body.
    pub head_only: bool,
}

impl Framing {
    /// connection_header is the `Connection` line a response needs: `close` when the server
    /// closes, `keep-alive` for an HTTP/1.0 client it keeps, nothing otherwise.
    pub fn connection_header(self) -> &'static [u8] {
        match (self.close, self.http10) {
            (true, _) => b"Connection: close\r\n",
            (false, true) => b"Connection: keep-alive\r\n",
            (false, false) => b"",
        }
    }
}

/// HEALTH_HEAD is the fixed head of `GET /health`'s response, up to the connection line.
pub const HEALTH_HEAD: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n";

/// write_health appends the whole `/health` response (no formatting, no allocation beyond
/// the buffer's growth).
#[inline]
pub fn write_health(out: &mut Vec<u8>, framing: Framing) {
    out.extend_from_slice(HEALTH_HEAD);
    out.extend_from_slice(framing.connection_header());
    out.extend_from_slice(if framing.head_only { b"\r\n" } else { b"\r\nok" });
}

/// write_response appends a complete response: status line, `Content-Type` (when there is a
/// body), `Content-Length`, the `extra` header lines, the connection line, and the body
/// (left out, its length kept, for HEAD).
pub fn write_response(
    out: &mut Vec<u8>,
    status: u16,
    content_type: &str,
    extra: &[(&str, &str)],
    body: &[u8],
    framing: Framing,
) {
    // Writing into a Vec cannot fail.
    let _ = write!(out, "HTTP/1.1 {status} {}\r\n", reason(status));
    if !body.is_empty() {
        let _ = write!(out, "Content-Type: {content_type}\r\n");
    }
    if status != 204 {
        let _ = write!(out, "Content-Length: {}\r\n", body.len());
    }
    for (name, value) in extra {
        let _ = write!(out, "{name}: {value}\r\n");
    }
    out.extend_from_slice(framing.connection_header());
    out.extend_from_slice(b"\r\n");
    if !framing.head_only {
        out.extend_from_slice(body);
    }
}

/// EVENT_STREAM_HEAD is the head of a streamed completion up to the framing lines.
const EVENT_STREAM_HEAD: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n";

/// write_stream_head appends the head of a server-sent event stream: chunked for HTTP/1.1;
/// for HTTP/1.0, which has no chunks, the stream ends where the connection does (so the caller
/// closes it, and `framing.close` must be set).
pub fn write_stream_head(out: &mut Vec<u8>, framing: Framing) {
    out.extend_from_slice(EVENT_STREAM_HEAD);
    if !framing.http10 {
        out.extend_from_slice(b"Transfer-Encoding: chunked\r\n");
    }
    out.extend_from_slice(framing.connection_header());
    out.extend_from_slice(b"\r\n");
}

/// write_chunk appends `data` as one chunk of a chunked body (as it is, without chunks, for
/// HTTP/1.0); empty data is skipped, as an empty chunk would end the body.
pub fn write_chunk(out: &mut Vec<u8>, data: &[u8], framing: Framing) {
    if data.is_empty() {
        return;
    }
    if framing.http10 {
        out.extend_from_slice(data);
        return;
    }
    let _ = write!(out, "{:x}\r\n", data.len());
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
}

/// write_last_chunk appends the zero chunk that ends a chunked body (nothing for HTTP/1.0).
pub fn write_last_chunk(out: &mut Vec<u8>, framing: Framing) {
    if !framing.http10 {
        out.extend_from_slice(b"0\r\n\r\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(raw: &str) -> Head<'_> {
        match parse(raw.as_bytes()) {
            Parsed::Complete(h) => h,
            other => panic!("{raw:?}: {other:?}"),
        }
    }

    #[test]
    #[allow(clippy::type_complexity)]
    fn parses_what_matters() {
        // raw, method, path, query, content length, keep-alive, http10, expect
        let cases: &[(&str, &str, &str, &str, usize, bool, bool, bool)] = &[
            ("GET /health HTTP/1.1\r\nHost: x\r\n\r\n", "GET", "/health", "", 0, true, false, false),
            ("GET /tasks?limit=5 HTTP/1.1\r\n\r\n", "GET", "/tasks", "limit=5", 0, true, false, false),
            ("POST /tasks HTTP/1.1\r\nContent-Length: 12\r\n\r\n", "POST", "/tasks", "", 12, true, false, false),
            ("GET / HTTP/1.1\r\nConnection: close\r\n\r\n", "GET", "/", "", 0, false, false, false),
            ("GET / HTTP/1.0\r\n\r\n", "GET", "/", "", 0, false, true, false),
            ("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", "GET", "/", "", 0, true, true, false),
            (
                "PUT /t HTTP/1.1\r\ncontent-length: 3\r\nExpect: 100-continue\r\n\r\n",
                "PUT",
                "/t",
                "",
                3,
                true,
                false,
                true,
            ),
            ("GET / HTTP/1.1\r\nContent-Length: 0\r\nContent-Length: 0\r\n\r\n", "GET", "/", "", 0, true, false, false),
        ];
        for &(raw, method, path, query, len, keep_alive, http10, expect) in cases {
            let h = head(raw);
            assert_eq!(
                (h.method, h.path, h.query, h.content_length, h.keep_alive, h.http10, h.expect_continue),
                (method, path, query, len, keep_alive, http10, expect),
                "{raw:?}"
            );
            assert_eq!(h.head_len, raw.len());
        }
    }

    #[test]
    fn partial_and_invalid() {
        let many_headers = format!("GET / HTTP/1.1\r\n{}\r\n", "X: y\r\n".repeat(MAX_HEADERS + 1));
        let cases: &[(&str, Option<u16>)] = &[
            ("GET /health HTTP/1.1\r\nHost:", None),
            ("GET /hea", None),
            ("", None),
            ("NOT HTTP\r\n\r\n", Some(400)),
            ("GET / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", Some(400)),
            ("GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", Some(400)),
            ("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", Some(501)),
            (&many_headers, Some(431)),
        ];
        for (raw, want) in cases {
            let got = match parse(raw.as_bytes()) {
                Parsed::Partial => None,
                Parsed::Invalid { status, .. } => Some(status),
                Parsed::Complete(h) => panic!("{raw:?} parsed as {h:?}"),
            };
            assert_eq!(got, *want, "{raw:?}");
        }
    }

    #[test]
    fn writes_responses() {
        let mut out = Vec::new();
        write_health(&mut out, Framing::default());
        assert_eq!(out, b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok");
        out.clear();
        write_health(&mut out, Framing { head_only: true, ..Framing::default() });
        assert_eq!(out, b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\n");
        out.clear();
        let close = Framing { close: true, ..Framing::default() };
        write_response(&mut out, 503, "application/json", &[("Retry-After", "1")], b"{}", close);
        assert_eq!(
            String::from_utf8_lossy(&out),
            "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\
             Retry-After: 1\r\nConnection: close\r\n\r\n{}"
        );
        out.clear();
        write_response(&mut out, 204, "", &[], b"", Framing { http10: true, ..Framing::default() });
        assert_eq!(String::from_utf8_lossy(&out), "HTTP/1.1 204 No Content\r\nConnection: keep-alive\r\n\r\n");
        out.clear();
        write_response(
            &mut out,
            200,
            "application/json",
            &[],
            b"{}",
            Framing { head_only: true, ..Framing::default() },
        );
        assert_eq!(
            String::from_utf8_lossy(&out),
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n"
        );
    }

    #[test]
    fn writes_event_streams() {
        let mut out = Vec::new();
        let framing = Framing::default();
        write_stream_head(&mut out, framing);
        write_chunk(&mut out, b"data: {}\n\n", framing);
        write_chunk(&mut out, b"", framing);
        write_last_chunk(&mut out, framing);
        assert_eq!(
            String::from_utf8_lossy(&out),
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n\
             Transfer-Encoding: chunked\r\n\r\na\r\ndata: {}\n\n\r\n0\r\n\r\n"
        );
        out.clear();
        let http10 = Framing { close: true, http10: true, head_only: false };
        write_stream_head(&mut out, http10);
        write_chunk(&mut out, b"data: {}\n\n", http10);
        write_last_chunk(&mut out, http10);
        assert_eq!(
            String::from_utf8_lossy(&out),
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n\
             Connection: close\r\n\r\ndata: {}\n\n"
        );
    }
}
