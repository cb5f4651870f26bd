//! http1: an incremental HTTP/1.1 response parser that tolerates any split of the bytes.
//!
//! The parser keeps no body bytes: it counts them and finds where the response ends
//! (Content-Length, chunked, or close-delimited). Header bytes are copied into a small
//! per-connection stash only when a read ends in the middle of the header block, so the
//! common case (a whole response in one read) copies nothing and allocates nothing.
//!
//! Retention is opt-in, per response: after [`ResponseParser::begin_retaining`] the parser
//! also keeps the final header block and the de-chunked body (up to a limit) in buffers it
//! owns and reuses, for captures and checks to read once the response is complete. After a
//! plain [`ResponseParser::begin`] it keeps nothing, as before.

use std::fmt;

use crate::http::events::{EventScanner, Scanned};

/// MAX_HEADER_BYTES is the largest response header block accepted; beyond it the response
/// is invalid (a server streaming endless headers must not eat the generator's memory).
pub(crate) const MAX_HEADER_BYTES: usize = 64 * 1024;

/// MAX_HEADERS is the largest number of header fields accepted in one response.
pub(crate) const MAX_HEADERS: usize = 96;

/// MAX_CHUNK_EXTENSION is the longest chunk extension accepted (the bytes after `;` on a
/// chunk-size line, from the `;` on); beyond it the response is invalid.
pub(crate) const MAX_CHUNK_EXTENSION: usize = 4096;

/// MAX_TRAILER_LINES is the most trailer fields accepted after the last chunk; the trailer
/// section as a whole is also held to [`MAX_HEADER_BYTES`].
pub(crate) const MAX_TRAILER_LINES: usize = MAX_HEADERS;

/// MAX_INTERIM is the most interim (1xx) responses accepted before the final one.
pub(crate) const MAX_INTERIM: u8 = 8;

/// RESERVE_CAP bounds the body buffer reserved up front from a Content-Length when retaining.
const RESERVE_CAP: usize = 1024 * 1024;

/// ParseError says why the bytes received are not a valid HTTP/1.1 response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ParseError {
    /// The status line or a header line is malformed.
    Malformed(&'static str),
    /// The header block exceeds [`MAX_HEADER_BYTES`] or [`MAX_HEADERS`].
    OversizedHeaders,
    /// Another part of the response exceeds its bound (a chunk extension, the trailer
    /// section, the number of interim responses).
    Oversized(&'static str),
    /// The status code is outside 100-599.
    BadStatus(u16),
    /// Content-Length is not a number, or two differing values were sent.
    BadContentLength,
    /// A chunk-size line is malformed.
    BadChunk,
    /// The connection closed before the response was complete.
    Truncated,
    /// The connection closed before any byte of the response arrived.
    ClosedBeforeResponse,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::Malformed(what) => write!(f, "malformed response: {what}"),
            ParseError::OversizedHeaders => write!(f, "response headers exceed limits"),
            ParseError::Oversized(what) => write!(f, "response exceeds limits: {what}"),
            ParseError::BadStatus(code) => write!(f, "status code {code:03} outside 100-599"),
            ParseError::BadContentLength => write!(f, "invalid Content-Length"),
            ParseError::BadChunk => write!(f, "invalid chunk size line"),
            ParseError::Truncated => write!(f, "connection closed mid-response"),
            ParseError::ClosedBeforeResponse => write!(f, "connection closed before response"),
        }
    }
}

/// Step is the outcome of feeding bytes to the parser.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// All input was consumed and the response is not complete yet.
    NeedMore,
    /// The response is complete; `consumed` bytes of the last input belonged to it.
    Complete {
        /// consumed is how many bytes of the input fed last were part of this response.
        consumed: usize,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Chunk {
    /// Reading hex digits of a chunk size; `ext` is 0 until an extension starts, then the
    /// extension's bytes so far (from its `;`).
    Size { size: u64, digits: u8, ext: u16 },
    /// Saw CR after the size line, expecting LF.
    SizeLf { size: u64 },
    /// Inside chunk data.
    Data { remaining: u64 },
    /// Expecting the CR after chunk data.
    DataCr,
    /// Expecting the LF after chunk data.
    DataLf,
    /// Inside the trailer section; `line_len` counts bytes of the current line.
    Trailer { line_len: usize },
    /// Saw CR in the trailer section.
    TrailerLf { line_len: usize },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Head,
    Fixed { remaining: u64 },
    Chunked(Chunk),
    UntilClose,
    Done,
}

/// ResponseParser parses one response at a time; call [`ResponseParser::begin`] before each.
#[derive(Debug)]
pub(crate) struct ResponseParser {
    state: State,
    stash: Vec<u8>,
    head_request: bool,
    started: bool,
    status: u16,
    keep_alive: bool,
    body_bytes: u64,
    header_bytes: usize,
    /// retain is set by begin_retaining: keep the head and up to `max_body` body bytes.
    retain: bool,
    max_body: usize,
    head_buf: Vec<u8>,
    body_buf: Vec<u8>,
    body_truncated: bool,
    /// interim counts the interim (1xx) responses skipped before the final one.
    interim: u8,
    /// trailer_bytes and trailer_lines measure the trailer section so far.
    trailer_bytes: usize,
    trailer_lines: usize,
    /// event_stream tells whether the final response is `text/event-stream`: its body is
    /// scanned for events.
    event_stream: bool,
    /// events finds where the body's events end.
    events: EventScanner,
    /// new_events counts the events completed since [`ResponseParser::take_events`] last ran.
    new_events: Scanned,
}

impl Default for ResponseParser {
    fn default() -> Self {
        Self::new()
    }
}

impl ResponseParser {
    /// new returns a parser waiting for a response to a non-HEAD request.
    pub(crate) fn new() -> Self {
        ResponseParser {
            state: State::Head,
            stash: Vec::new(),
            head_request: false,
            started: false,
            status: 0,
            keep_alive: true,
            body_bytes: 0,
            header_bytes: 0,
            retain: false,
            max_body: 0,
            head_buf: Vec::new(),
            body_buf: Vec::new(),
            body_truncated: false,
            interim: 0,
            trailer_bytes: 0,
            trailer_lines: 0,
            event_stream: false,
            events: EventScanner::default(),
            new_events: Scanned::default(),
        }
    }

    /// begin resets the parser for the response to the next request; `head_request`
    /// says the request was HEAD, whose response has headers but never a body.
    pub(crate) fn begin(&mut self, head_request: bool) {
        self.state = State::Head;
        self.stash.clear();
        self.head_request = head_request;
        self.started = false;
        self.status = 0;
        self.keep_alive = true;
        self.body_bytes = 0;
        self.header_bytes = 0;
        self.retain = false;
        self.max_body = 0;
        self.head_buf.clear();
        self.body_buf.clear();
        self.body_truncated = false;
        self.interim = 0;
        self.trailer_bytes = 0;
        self.trailer_lines = 0;
        self.event_stream = false;
        self.events = EventScanner::default();
        self.new_events = Scanned::default();
    }

    /// begin_retaining resets the parser like [`ResponseParser::begin`] and also keeps this
    /// response's final header block (status line, headers and the blank line, within
    /// [`MAX_HEADER_BYTES`]) and its first `max_body` body bytes, de-chunked. A longer body is
    /// still parsed to its end, but only its first `max_body` bytes are kept and
    /// [`ResponseParser::body_truncated`] turns true. The buffers are reused across responses.
    pub(crate) fn begin_retaining(&mut self, head_request: bool, max_body: usize) {
        self.begin(head_request);
        self.retain = true;
        self.max_body = max_body;
    }

    /// head is the retained header block of the final response (interim 1xx heads are
    /// dropped); empty unless retaining and the head has been parsed.
    pub(crate) fn head(&self) -> &[u8] {
        &self.head_buf
    }

    /// body is the retained, de-chunked body: at most `max_body` bytes, complete once `feed`
    /// returned `Step::Complete` (or `finish_on_eof` succeeded); empty unless retaining.
    pub(crate) fn body(&self) -> &[u8] {
        &self.body_buf
    }

    /// body_truncated tells whether the body had more than `max_body` bytes, so that
    /// [`ResponseParser::body`] holds only its beginning.
    pub(crate) fn body_truncated(&self) -> bool {
        self.body_truncated
    }

    /// header returns the trimmed value of the first retained header named `name`
    /// (ASCII case-insensitive), or None when absent or not retaining.
    #[cfg(test)]
    pub(crate) fn header(&self, name: &str) -> Option<&[u8]> {
        header_value(&self.head_buf, name)
    }

    /// keep_body appends body bytes to the retained body, up to `max_body`.
    fn keep_body(&mut self, bytes: &[u8]) {
        let room = self.max_body.saturating_sub(self.body_buf.len());
        if bytes.len() > room {
            self.body_buf.extend_from_slice(&bytes[..room]);
            self.body_truncated = true;
        } else {
            self.body_buf.extend_from_slice(bytes);
        }
    }

    /// status is the final status code once the head has been parsed (0 before).
    pub(crate) fn status(&self) -> u16 {
        self.status
    }

    /// keep_alive tells whether the connection may carry another request after this response.
    pub(crate) fn keep_alive(&self) -> bool {
        self.keep_alive
    }

    /// body_bytes counts the body bytes received so far (chunk framing excluded).
    #[cfg(test)]
    pub(crate) fn body_bytes(&self) -> u64 {
        self.body_bytes
    }

    /// is_event_stream tells whether the final response is `text/event-stream` (known once its
    /// head has been parsed).
    pub(crate) fn is_event_stream(&self) -> bool {
        self.event_stream
    }

    /// take_events returns the events of an event stream completed since the last call (by
    /// the bytes fed since), and starts counting again.
    pub(crate) fn take_events(&mut self) -> Scanned {
        std::mem::take(&mut self.new_events)
    }

    /// usage_tokens is the output token count the event stream's `usage` gave, if any.
    pub(crate) fn usage_tokens(&self) -> Option<u32> {
        self.events.usage_tokens()
    }

    /// body_seen passes body bytes (de-chunked) to the retained body and the event scanner.
    #[inline]
    fn body_seen(&mut self, bytes: &[u8]) {
        if self.retain {
            self.keep_body(bytes);
        }
        if self.event_stream {
            self.new_events += self.events.scan(bytes);
        }
    }

    /// reads_until_close tells whether the body ends only when the peer closes.
    pub(crate) fn reads_until_close(&self) -> bool {
        self.state == State::UntilClose
    }

    /// feed consumes bytes of the response. On `NeedMore` every byte was consumed; on
    /// `Complete` the bytes after `consumed` belong to whatever follows the response.
    pub(crate) fn feed(&mut self, input: &[u8]) -> Result<Step, ParseError> {
        if !input.is_empty() {
            self.started = true;
        }
        let mut pos = 0;
        loop {
            match self.state {
                State::Head => match self.feed_head(&input[pos..])? {
                    Some(used) => pos += used,
                    None => return Ok(Step::NeedMore),
                },
                State::Fixed { remaining } => {
                    let available = (input.len() - pos) as u64;
                    let take = remaining.min(available);
                    self.body_bytes += take;
                    self.body_seen(&input[pos..pos + take as usize]);
                    pos += take as usize;
                    if take == remaining {
                        self.state = State::Done;
                    } else {
                        self.state = State::Fixed { remaining: remaining - take };
                        return Ok(Step::NeedMore);
                    }
                }
                State::Chunked(chunk) => {
                    let (next, used) = self.feed_chunked(chunk, &input[pos..])?;
                    pos += used;
                    match next {
                        Some(chunk) => {
                            self.state = State::Chunked(chunk);
                            return Ok(Step::NeedMore);
                        }
                        None => self.state = State::Done,
                    }
                }
                State::UntilClose => {
                    self.body_bytes += (input.len() - pos) as u64;
                    self.body_seen(&input[pos..]);
                    return Ok(Step::NeedMore);
                }
                State::Done => return Ok(Step::Complete { consumed: pos }),
            }
        }
    }

    /// finish_on_eof is called when the peer closed the connection: a close-delimited body
    /// ends there; anything else incomplete is an error.
    pub(crate) fn finish_on_eof(&mut self) -> Result<(), ParseError> {
        match self.state {
            State::UntilClose | State::Done => {
                self.state = State::Done;
                Ok(())
            }
            _ if !self.started => Err(ParseError::ClosedBeforeResponse),
            _ => Err(ParseError::Truncated),
        }
    }

    /// feed_head parses the status line and headers; returns the bytes of `input` used,
    /// or None when the header block is still incomplete (the input is then stashed).
    fn feed_head(&mut self, input: &[u8]) -> Result<Option<usize>, ParseError> {
        let stashed = self.stash.len();
        let parsed = if stashed == 0 {
            parse_head(input, self.head_request)?
        } else {
            self.stash.extend_from_slice(input);
            // The block can only have ended, or a line gone wrong, where a line ended: a
            // server dripping a header byte by byte costs one scan of each byte, not one
            // parse of the whole stash per byte.
            if memchr::memchr(b'\n', input).is_some() {
                parse_head(&self.stash, self.head_request)?
            } else {
                None
            }
        };
        let Some(head) = parsed else {
            if stashed == 0 {
                self.stash.extend_from_slice(input);
            }
            if self.stash.len() > MAX_HEADER_BYTES {
                return Err(ParseError::OversizedHeaders);
            }
            return Ok(None);
        };
        if head.len > MAX_HEADER_BYTES {
            return Err(ParseError::OversizedHeaders);
        }
        let used = head.len - stashed;
        if (100..200).contains(&head.status) {
            self.stash.clear();
            // Interim response (100 Continue, 103 Early Hints): the real one follows.
            if head.status == 101 {
                return Err(ParseError::Malformed("unexpected 101 Switching Protocols"));
            }
            self.interim += 1;
            if self.interim > MAX_INTERIM {
                return Err(ParseError::Oversized("interim responses"));
            }
            return Ok(Some(used));
        }
        if self.retain {
            let block = if stashed == 0 { &input[..head.len] } else { &self.stash[..head.len] };
            self.head_buf.clear();
            self.head_buf.extend_from_slice(block);
            if let Body::Length(n) = head.body {
                // One allocation up front rather than doubling while the body streams in;
                // capped, so a server claiming a huge length allocates nothing it does not send.
                let want = usize::try_from(n).unwrap_or(usize::MAX).min(self.max_body).min(RESERVE_CAP);
                self.body_buf.reserve(want.saturating_sub(self.body_buf.len()));
            }
        }
        self.stash.clear();
        self.status = head.status;
        self.keep_alive = head.keep_alive;
        self.header_bytes = head.len;
        self.event_stream = head.event_stream;
        self.state = match head.body {
            Body::None | Body::Length(0) => State::Done,
            Body::Length(n) => State::Fixed { remaining: n },
            Body::Chunked => State::Chunked(Chunk::Size { size: 0, digits: 0, ext: 0 }),
            Body::UntilClose => {
                self.keep_alive = false;
                State::UntilClose
            }
        };
        Ok(Some(used))
    }

    /// feed_chunked advances the chunked-body state machine; returns the next state
    /// (None when the body is complete) and the bytes used.
    fn feed_chunked(&mut self, mut chunk: Chunk, input: &[u8]) -> Result<(Option<Chunk>, usize), ParseError> {
        let mut pos = 0;
        while pos < input.len() {
            if let Chunk::Data { remaining } = chunk {
                // Skip chunk data in bulk; it is counted, never copied.
                let take = remaining.min((input.len() - pos) as u64);
                self.body_seen(&input[pos..pos + take as usize]);
                pos += take as usize;
                self.body_bytes += take;
                chunk = if take == remaining { Chunk::DataCr } else { Chunk::Data { remaining: remaining - take } };
                continue;
            }
            let byte = input[pos];
            chunk = match chunk {
                // Data is consumed in bulk above and never reaches here.
                Chunk::Data { .. } => chunk,
                Chunk::Size { size, digits, ext } => match byte {
                    b'\r' if digits > 0 => Chunk::SizeLf { size },
                    b'\n' if digits > 0 => size_done(size),
                    _ if usize::from(ext) >= MAX_CHUNK_EXTENSION => {
                        return Err(ParseError::Oversized("chunk extension"))
                    }
                    _ if ext > 0 => Chunk::Size { size, digits, ext: ext + 1 },
                    b';' | b' ' | b'\t' if digits > 0 => Chunk::Size { size, digits, ext: 1 },
                    _ => {
                        let value = hex_value(byte).ok_or(ParseError::BadChunk)?;
                        if digits >= 15 {
                            return Err(ParseError::BadChunk);
                        }
                        Chunk::Size { size: size * 16 + value, digits: digits + 1, ext }
                    }
                },
                Chunk::SizeLf { size } => match byte {
                    b'\n' => size_done(size),
                    _ => return Err(ParseError::BadChunk),
                },
                Chunk::DataCr => match byte {
                    b'\r' => Chunk::DataLf,
                    b'\n' => Chunk::Size { size: 0, digits: 0, ext: 0 },
                    _ => return Err(ParseError::BadChunk),
                },
                Chunk::DataLf => match byte {
                    b'\n' => Chunk::Size { size: 0, digits: 0, ext: 0 },
                    _ => return Err(ParseError::BadChunk),
                },
                Chunk::Trailer { line_len } => {
                    self.trailer_bytes += 1;
                    if self.trailer_bytes > MAX_HEADER_BYTES {
                        return Err(ParseError::Oversized("trailer section"));
                    }
                    match byte {
                        b'\r' => Chunk::TrailerLf { line_len },
                        b'\n' if line_len == 0 => return Ok((None, pos + 1)),
                        b'\n' => self.trailer_line_done()?,
                        _ => Chunk::Trailer { line_len: line_len + 1 },
                    }
                }
                Chunk::TrailerLf { line_len } => match byte {
                    b'\n' if line_len == 0 => return Ok((None, pos + 1)),
                    b'\n' => self.trailer_line_done()?,
                    _ => return Err(ParseError::BadChunk),
                },
            };
            pos += 1;
        }
        Ok((Some(chunk), pos))
    }

    /// trailer_line_done counts a complete trailer field and starts the next line; too many
    /// fields make the response invalid.
    fn trailer_line_done(&mut self) -> Result<Chunk, ParseError> {
        self.trailer_lines += 1;
        if self.trailer_lines > MAX_TRAILER_LINES {
            return Err(ParseError::Oversized("trailer fields"));
        }
        Ok(Chunk::Trailer { line_len: 0 })
    }
}

/// size_done picks the state after a complete chunk-size line: data, or the trailer for 0.
fn size_done(size: u64) -> Chunk {
    if size == 0 {
        Chunk::Trailer { line_len: 0 }
    } else {
        Chunk::Data { remaining: size }
    }
}

/// header_value returns the trimmed value of the first header named `name` (ASCII
/// case-insensitive) in a header block `head` as received (status line first, CRLF or LF
/// line ends), or None when no such header is present.
pub(crate) fn header_value<'a>(head: &'a [u8], name: &str) -> Option<&'a [u8]> {
    let name = name.as_bytes();
    // Skip the status line; the block ends at the first empty line.
    let mut lines = head
        .split(|&b| b == b'\n')
        .skip(1)
        .map(|line| line.strip_suffix(b"\r").unwrap_or(line))
        .take_while(|line| !line.is_empty());
    lines.find_map(|line| {
        let colon = memchr::memchr(b':', line)?;
        let (field, rest) = line.split_at(colon);
        field.eq_ignore_ascii_case(name).then(|| rest[1..].trim_ascii())
    })
}

fn hex_value(byte: u8) -> Option<u64> {
    match byte {
        b'0'..=b'9' => Some(u64::from(byte - b'0')),
        b'a'..=b'f' => Some(u64::from(byte - b'a' + 10)),
        b'A'..=b'F' => Some(u64::from(byte - b'A' + 10)),
        _ => None,
    }
}

/// Body says how the body of a response is delimited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Body {
    None,
    Length(u64),
    Chunked,
    UntilClose,
}

struct Head {
    len: usize,
    status: u16,
    keep_alive: bool,
    body: Body,
    /// event_stream: the media type is `text/event-stream`.
    event_stream: bool,
}

/// parse_head parses a complete header block, or returns None if it is incomplete.
fn parse_head(buf: &[u8], head_request: bool) -> Result<Option<Head>, ParseError> {
    // Uninitialized header slots: initializing 96 of them would cost a 3 KiB memset per
    // response; httparse writes only the slots it fills.
    let mut headers = [const { std::mem::MaybeUninit::<httparse::Header<'_>>::uninit() }; MAX_HEADERS];
    let mut response = httparse::Response::new(&mut []);
    let config = httparse::ParserConfig::default();
    let len = match config.parse_response_with_uninit_headers(&mut response, buf, &mut headers) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(httparse::Error::TooManyHeaders) => return Err(ParseError::OversizedHeaders),
        Err(httparse::Error::Status) => return Err(ParseError::Malformed("bad status line")),
        Err(httparse::Error::Version) => return Err(ParseError::Malformed("bad HTTP version")),
        Err(_) => return Err(ParseError::Malformed("bad header line")),
    };
    let status = response.code.ok_or(ParseError::Malformed("missing status code"))?;
    if !(100..=599).contains(&status) {
        return Err(ParseError::BadStatus(status));
    }
    let http10 = response.version == Some(0);
    let mut keep_alive = !http10;
    let mut content_length: Option<u64> = None;
    let mut chunked = false;
    let mut event_stream = false;
    for header in response.headers.iter() {
        let name = header.name.as_bytes();
        if name.eq_ignore_ascii_case(b"content-length") {
            let value = parse_content_length(header.value)?;
            if content_length.is_some_and(|previous| previous != value) {
                return Err(ParseError::BadContentLength);
            }
            content_length = Some(value);
        } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
            chunked = last_coding_is_chunked(header.value);
        } else if name.eq_ignore_ascii_case(b"content-type") {
            event_stream = is_event_stream(header.value);
        } else if name.eq_ignore_ascii_case(b"connection") {
            for token in header.value.split(|&b| b == b',') {
                let token = token.trim_ascii();
                if token.eq_ignore_ascii_case(b"close") {
                    keep_alive = false;
                } else if token.eq_ignore_ascii_case(b"keep-alive") {
                    keep_alive = true;
                }
            }
        }
    }
    let no_body = head_request || status == 204 || status == 304 || (100..200).contains(&status);
    let body = if no_body {
        Body::None
    } else if chunked {
        Body::Chunked
    } else if let Some(n) = content_length {
        Body::Length(n)
    } else {
        Body::UntilClose
    };
    Ok(Some(Head { len, status, keep_alive, body, event_stream }))
}

/// is_event_stream tells whether a Content-Type value is `text/event-stream` (parameters
/// such as `; charset=utf-8` allowed).
fn is_event_stream(value: &[u8]) -> bool {
    let media = value.split(|&b| b == b';').next().unwrap_or_default();
    media.trim_ascii().eq_ignore_ascii_case(b"text/event-stream")
}

fn parse_content_length(value: &[u8]) -> Result<u64, ParseError> {
    let value = value.trim_ascii();
    if value.is_empty() || value.len() > 19 || !value.iter().all(u8::is_ascii_digit) {
        return Err(ParseError::BadContentLength);
    }
    Ok(value.iter().fold(0u64, |n, d| n * 10 + u64::from(d - b'0')))
}

fn last_coding_is_chunked(value: &[u8]) -> bool {
    value.rsplit(|&b| b == b',').next().is_some_and(|coding| coding.trim_ascii().eq_ignore_ascii_case(b"chunked"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// feed_in_pieces feeds `bytes` split at every `step` bytes and returns the parser and
    /// the bytes left over after completion (or None if never complete).
    fn feed_in_pieces(bytes: &[u8], step: usize, head: bool) -> (ResponseParser, Result<Option<usize>, ParseError>) {
        let mut parser = ResponseParser::new();
        parser.begin(head);
        let mut offset = 0;
        while offset < bytes.len() {
            let end = (offset + step).min(bytes.len());
            match parser.feed(&bytes[offset..end]) {
                Ok(Step::Complete { consumed }) => {
                    let leftover = bytes.len() - (offset + consumed);
                    return (parser, Ok(Some(leftover)));
                }
                Ok(Step::NeedMore) => offset = end,
                Err(e) => return (parser, Err(e)),
            }
        }
        (parser, Ok(None))
    }

    #[test]
    fn an_event_stream_counts_its_events_across_chunks_and_reads() {
        // Chunks split an event; the sentinel and the zero chunk end the stream.
        let response: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\n\
            Transfer-Encoding: chunked\r\n\r\n9\r\ndata: a\n\n\r\n5\r\ndata:\r\n4\r\n b\n\n\r\n\
            e\r\ndata: [DONE]\n\n\r\n0\r\n\r\n";
        for step in 1..=response.len() {
            let mut parser = ResponseParser::new();
            parser.begin(false);
            let (mut events, mut done) = (0, false);
            for piece in response.chunks(step) {
                done = matches!(parser.feed(piece), Ok(Step::Complete { .. }));
                events += parser.take_events().events;
            }
            assert!(done && parser.is_event_stream(), "split every {step} bytes");
            assert_eq!(events, 2, "split every {step} bytes");
        }
        // Any other media type is not scanned.
        let (mut parser, result) = feed_in_pieces(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 9\r\n\r\ndata: a\n\n",
            4,
            false,
        );
        assert_eq!(result, Ok(Some(0)));
        assert!(!parser.is_event_stream());
        assert_eq!(parser.take_events(), Scanned::default());
    }

    #[test]
    fn complete_responses_at_every_split_size() {
        let cases: &[(&str, &[u8], u16, u64, bool)] = &[
            ("content-length", b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", 200, 5, true),
            ("empty body", b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", 200, 0, true),
            ("chunked", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n", 200, 11, true),
            ("chunked ext+trailer", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\nA;name=x\r\n0123456789\r\n0\r\nX-Trailer: 1\r\n\r\n", 200, 10, true),
            ("chunked upper hex", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1F\r\n0123456789012345678901234567890\r\n0\r\n\r\n", 200, 31, true),
            ("204 ignores length", b"HTTP/1.1 204 No Content\r\nContent-Length: 10\r\n\r\n", 204, 0, true),
            ("304", b"HTTP/1.1 304 Not Modified\r\nETag: x\r\n\r\n", 304, 0, true),
            ("connection close", b"HTTP/1.1 503 Busy\r\nConnection: close\r\nContent-Length: 2\r\n\r\nno", 503, 2, false),
            ("http/1.0 default close", b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", 200, 2, false),
            ("http/1.0 keep-alive", b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok", 200, 2, true),
            ("100 continue first", b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 1\r\n\r\nx", 201, 1, true),
            ("lf only lines", b"HTTP/1.1 200 OK\nContent-Length: 2\n\nok", 200, 2, true),
        ];
        for &(name, bytes, status, body, keep_alive) in cases {
            for step in 1..=bytes.len() {
                let (parser, outcome) = feed_in_pieces(bytes, step, false);
                assert_eq!(outcome, Ok(Some(0)), "{name} step {step}");
                assert_eq!(parser.status(), status, "{name} step {step}");
                assert_eq!(parser.body_bytes(), body, "{name} step {step}");
                assert_eq!(parser.keep_alive(), keep_alive, "{name} step {step}");
            }
        }
    }

    #[test]
    fn head_response_has_no_body_despite_length() {
        let bytes = b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n";
        let (parser, outcome) = feed_in_pieces(bytes, bytes.len(), true);
        assert_eq!(outcome, Ok(Some(0)));
        assert_eq!(parser.body_bytes(), 0);
    }

    #[test]
    fn leftover_bytes_after_completion_are_reported() {
        let bytes = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokEXTRA";
        let (_, outcome) = feed_in_pieces(bytes, bytes.len(), false);
        assert_eq!(outcome, Ok(Some(5)));
    }

    #[test]
    fn close_delimited_body_ends_at_eof() {
        let bytes = b"HTTP/1.1 200 OK\r\n\r\nsome body bytes";
        for step in 1..=bytes.len() {
            let (mut parser, outcome) = feed_in_pieces(bytes, step, false);
            assert_eq!(outcome, Ok(None), "step {step}");
            assert_eq!(parser.finish_on_eof(), Ok(()));
            assert_eq!(parser.body_bytes(), 15);
            assert!(!parser.keep_alive());
        }
    }

    #[test]
    fn eof_before_or_during_response_is_an_error() {
        let mut parser = ResponseParser::new();
        parser.begin(false);
        assert_eq!(parser.finish_on_eof(), Err(ParseError::ClosedBeforeResponse));

        let (mut parser, _) = feed_in_pieces(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", 4, false);
        assert_eq!(parser.finish_on_eof(), Err(ParseError::Truncated));

        let (mut parser, _) = feed_in_pieces(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab", 3, false);
        assert_eq!(parser.finish_on_eof(), Err(ParseError::Truncated));
    }

    #[test]
    fn malformed_inputs_are_rejected() {
        let cases: &[(&str, &[u8])] = &[
            ("garbage status line", b"HTTX/1.1 200 OK\r\n\r\n"),
            ("non-numeric status", b"HTTP/1.1 2x0 OK\r\n\r\n"),
            ("bad header line", b"HTTP/1.1 200 OK\r\nBad Header\r\n\r\n"),
            ("bad content-length", b"HTTP/1.1 200 OK\r\nContent-Length: 12a\r\n\r\n"),
            ("negative content-length", b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n"),
            ("conflicting content-length", b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nx"),
            ("bad chunk size", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"),
            ("empty chunk size", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\r\n"),
            ("missing crlf after data", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nabc"),
            ("chunk size overflow", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1234567890abcdef0\r\n"),
            ("101 switching", b"HTTP/1.1 101 Switching Protocols\r\n\r\n"),
            ("status 000", b"HTTP/1.1 000 Zero\r\nContent-Length: 0\r\n\r\n"),
            ("status 099", b"HTTP/1.1 099 Low\r\nContent-Length: 0\r\n\r\n"),
            ("status 600", b"HTTP/1.1 600 High\r\nContent-Length: 0\r\n\r\n"),
            ("status 999", b"HTTP/1.1 999 High\r\nContent-Length: 0\r\n\r\n"),
            ("status 2xx", b"HTTP/1.1 2xx Class\r\nContent-Length: 0\r\n\r\n"),
            ("two-digit status", b"HTTP/1.1 99 Short\r\nContent-Length: 0\r\n\r\n"),
        ];
        for &(name, bytes) in cases {
            for step in [1, 3, bytes.len()] {
                let (_, outcome) = feed_in_pieces(bytes, step, false);
                assert!(outcome.is_err(), "{name} step {step}: {outcome:?}");
            }
        }
    }

    #[test]
    fn oversized_headers_are_rejected_even_when_split() {
        let mut bytes = b"HTTP/1.1 200 OK\r\n".to_vec();
        while bytes.len() <= MAX_HEADER_BYTES {
            bytes.extend_from_slice(
                b"X-Filler: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n",
            );
        }
        for step in [1000, 7, bytes.len()] {
            let (_, outcome) = feed_in_pieces(&bytes, step, false);
            assert_eq!(outcome, Err(ParseError::OversizedHeaders), "step {step}");
        }
        let mut many = b"HTTP/1.1 200 OK\r\n".to_vec();
        for i in 0..=MAX_HEADERS {
            many.extend_from_slice(format!("X-{i}: v\r\n").as_bytes());
        }
        many.extend_from_slice(b"\r\n");
        let (_, outcome) = feed_in_pieces(&many, many.len(), false);
        assert_eq!(outcome, Err(ParseError::OversizedHeaders));
    }

    /// chunked_with builds a chunked response: one chunk, its size line's extension `ext`, then
    /// `trailers` trailer fields.
    fn chunked_with(ext: usize, trailers: usize, trailer_value: usize) -> Vec<u8> {
        let mut bytes = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2".to_vec();
        if ext > 0 {
            bytes.push(b';');
            bytes.extend(std::iter::repeat_n(b'e', ext - 1));
        }
        bytes.extend_from_slice(b"\r\nok\r\n0\r\n");
        for i in 0..trailers {
            bytes.extend_from_slice(format!("X-T{i}: {}\r\n", "v".repeat(trailer_value)).as_bytes());
        }
        bytes.extend_from_slice(b"\r\n");
        bytes
    }

    #[test]
    fn every_part_of_a_response_is_bounded() {
        let interim = |n: usize| {
            let mut bytes = b"HTTP/1.1 100 Continue\r\n\r\n".repeat(n);
            bytes.extend_from_slice(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
            bytes
        };
        // (name, response at its bound, response just past it, the error past it)
        let cases: Vec<(&str, Vec<u8>, Vec<u8>, ParseError)> = vec![
            (
                "chunk extension",
                chunked_with(MAX_CHUNK_EXTENSION, 0, 1),
                chunked_with(MAX_CHUNK_EXTENSION + 1, 0, 1),
                ParseError::Oversized("chunk extension"),
            ),
            (
                "trailer fields",
                chunked_with(0, MAX_TRAILER_LINES, 1),
                chunked_with(0, MAX_TRAILER_LINES + 1, 1),
                ParseError::Oversized("trailer fields"),
            ),
            (
                "trailer bytes",
                chunked_with(0, 2, MAX_HEADER_BYTES / 2 - 20),
                chunked_with(0, 2, MAX_HEADER_BYTES / 2),
                ParseError::Oversized("trailer section"),
            ),
            (
                "interim responses",
                interim(usize::from(MAX_INTERIM)),
                interim(usize::from(MAX_INTERIM) + 1),
                ParseError::Oversized("interim responses"),
            ),
        ];
        for (name, within, beyond, error) in cases {
            for step in [1, 7, 4096, beyond.len()] {
                let (parser, outcome) = feed_in_pieces(&within, step, false);
                assert_eq!(outcome, Ok(Some(0)), "{name} at its bound, step {step}");
                assert_eq!(parser.status(), 200, "{name}");
                let beyond_outcome = feed_in_pieces(&beyond, step, false).1;
                assert_eq!(beyond_outcome, Err(error.clone()), "{name} past its bound, step {step}");
            }
        }
    }

    #[test]
    fn statuses_outside_100_to_599_are_invalid() {
        let cases = [(0, false), (99, false), (100, true), (200, true), (599, true), (600, false), (999, false)];
        for (status, valid) in cases {
            let bytes = format!("HTTP/1.1 {status:03} X\r\nContent-Length: 0\r\n\r\n");
            let (_, outcome) = feed_in_pieces(bytes.as_bytes(), bytes.len(), false);
            match valid {
                // 100 is interim: the final response is still to come.
                true if status == 100 => assert_eq!(outcome, Ok(None), "{status}"),
                true => assert_eq!(outcome, Ok(Some(0)), "{status}"),
                false => assert_eq!(outcome, Err(ParseError::BadStatus(status)), "{status}"),
            }
        }
    }

    #[test]
    fn parser_is_reusable_across_responses() {
        let mut parser = ResponseParser::new();
        for _ in 0..3 {
            parser.begin(false);
            let bytes = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
            assert_eq!(parser.feed(&bytes[..10]), Ok(Step::NeedMore));
            assert_eq!(parser.feed(&bytes[10..]), Ok(Step::Complete { consumed: bytes.len() - 10 }));
        }
    }

    type RetainCase = (&'static str, &'static [u8], bool, &'static [u8], &'static [u8]);
    type TruncateCase = (&'static str, &'static [u8], usize, &'static [u8], bool, u64);

    /// feed_retaining feeds `bytes` split every `step` bytes to a parser retaining up to
    /// `max_body` body bytes, finishing at EOF when the response never completed.
    fn feed_retaining(
        parser: &mut ResponseParser,
        bytes: &[u8],
        step: usize,
        head: bool,
        max_body: usize,
    ) -> Result<(), ParseError> {
        parser.begin_retaining(head, max_body);
        let mut offset = 0;
        while offset < bytes.len() {
            let end = (offset + step).min(bytes.len());
            match parser.feed(&bytes[offset..end])? {
                Step::Complete { .. } => return Ok(()),
                Step::NeedMore => offset = end,
            }
        }
        parser.finish_on_eof()
    }

    #[test]
    fn retained_head_and_body_at_every_split_size() {
        // (name, bytes, HEAD request, expected head, expected body)
        let cases: &[RetainCase] = &[
            (
                "content-length",
                b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
                false,
                b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n",
                b"hello",
            ),
            (
                "chunked ext+trailer",
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;a=b\r\nhello\r\n6\r\n world\r\n0;x\r\nX-Trailer: 1\r\nX-Other: 2\r\n\r\n",
                false,
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
                b"hello world",
            ),
            (
                "close-delimited",
                b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end",
                false,
                b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n",
                b"until the end",
            ),
            (
                "HEAD",
                b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n",
                true,
                b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n",
                b"",
            ),
            (
                "204",
                b"HTTP/1.1 204 No Content\r\nContent-Length: 10\r\n\r\n",
                false,
                b"HTTP/1.1 204 No Content\r\nContent-Length: 10\r\n\r\n",
                b"",
            ),
            (
                "100 continue dropped",
                b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 1\r\n\r\nx",
                false,
                b"HTTP/1.1 201 Created\r\nContent-Length: 1\r\n\r\n",
                b"x",
            ),
            ("lf only", b"HTTP/1.1 200 OK\nContent-Length: 2\n\nok", false, b"HTTP/1.1 200 OK\nContent-Length: 2\n\n", b"ok"),
        ];
        let mut parser = ResponseParser::new();
        for &(name, bytes, head, want_head, want_body) in cases {
            for step in 1..=bytes.len() {
                assert_eq!(feed_retaining(&mut parser, bytes, step, head, 1 << 20), Ok(()), "{name} step {step}");
                assert_eq!(parser.head(), want_head, "{name} step {step}");
                assert_eq!(parser.body(), want_body, "{name} step {step}");
                assert!(!parser.body_truncated(), "{name} step {step}");
            }
        }
    }

    #[test]
    fn retained_body_is_truncated_at_max_body() {
        // (name, bytes, max_body, expected body, truncated, body bytes parsed)
        let cases: &[TruncateCase] = &[
            ("length over", b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", 3, b"hel", true, 5),
            ("length exact", b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", 5, b"hello", false, 5),
            ("zero limit", b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", 0, b"", true, 5),
            ("zero limit empty body", b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", 0, b"", false, 0),
            (
                "chunked across chunks",
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n",
                7,
                b"hello w",
                true,
                11,
            ),
            ("close-delimited", b"HTTP/1.1 200 OK\r\n\r\nsome body bytes", 4, b"some", true, 15),
        ];
        let mut parser = ResponseParser::new();
        for &(name, bytes, max_body, want_body, truncated, total) in cases {
            for step in 1..=bytes.len() {
                assert_eq!(feed_retaining(&mut parser, bytes, step, false, max_body), Ok(()), "{name} step {step}");
                assert_eq!(parser.body(), want_body, "{name} step {step}");
                assert_eq!(parser.body_truncated(), truncated, "{name} step {step}");
                assert_eq!(parser.body_bytes(), total, "{name} step {step}: the whole body is still parsed");
            }
        }
    }

    #[test]
    fn retained_response_leaves_following_bytes_alone() {
        let bytes = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 404 Not Found\r\n";
        let mut parser = ResponseParser::new();
        parser.begin_retaining(false, 100);
        assert_eq!(parser.feed(bytes), Ok(Step::Complete { consumed: 40 }));
        assert_eq!(parser.head(), b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n");
        assert_eq!(parser.body(), b"ok");
    }

    #[test]
    fn retained_headers_are_found_by_name() {
        let bytes = b"HTTP/1.1 201 Created\r\nLocation:  /items/7 \r\nX-Id: 1\r\nx-id: 2\r\nX-Empty:\r\nContent-Length: 0\r\n\r\n";
        let mut parser = ResponseParser::new();
        assert_eq!(feed_retaining(&mut parser, bytes, 5, false, 10), Ok(()));
        let cases: &[(&str, Option<&[u8]>)] = &[
            ("Location", Some(b"/items/7")),
            ("location", Some(b"/items/7")),
            ("X-ID", Some(b"1")),
            ("x-empty", Some(b"")),
            ("Content", None),
            ("Content-Length-X", None),
            ("HTTP/1.1 201 Created\r\nLocation", None),
            ("", None),
        ];
        for &(name, want) in cases {
            assert_eq!(parser.header(name), want, "{name}");
        }
        assert_eq!(header_value(b"HTTP/1.1 200 OK\nA: 1\n\nB: 2\n", "b"), None, "stops at the blank line");
        assert_eq!(header_value(b"HTTP/1.1 200 OK\nA: 1\n\n", "a"), Some(&b"1"[..]));
    }

    #[test]
    fn plain_begin_keeps_no_bytes_and_allocates_nothing() {
        let bytes = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-A: 1\r\n\r\n5\r\nhello\r\n0\r\n\r\n";
        let mut parser = ResponseParser::new();
        parser.begin(false);
        assert_eq!(parser.feed(bytes), Ok(Step::Complete { consumed: bytes.len() }));
        assert!(parser.head().is_empty() && parser.body().is_empty());
        assert_eq!(parser.header("X-A"), None);
        assert_eq!((parser.stash.capacity(), parser.head_buf.capacity(), parser.body_buf.capacity()), (0, 0, 0));

        // After a retained response, a plain one clears what was kept (capacity stays).
        assert_eq!(feed_retaining(&mut parser, bytes, 7, false, 3), Ok(()));
        assert!(parser.body_truncated());
        let capacity = (parser.head_buf.capacity(), parser.body_buf.capacity());
        for step in 1..=bytes.len() {
            parser.begin(false);
            let mut offset = 0;
            while offset < bytes.len() {
                let end = (offset + step).min(bytes.len());
                if let Ok(Step::Complete { .. }) = parser.feed(&bytes[offset..end]) {
                    break;
                }
                offset = end;
            }
            assert_eq!(parser.status(), 200);
            assert!(parser.head().is_empty() && parser.body().is_empty() && !parser.body_truncated(), "step {step}");
        }
        assert_eq!((parser.head_buf.capacity(), parser.body_buf.capacity()), capacity, "buffers are reused");
    }
}
