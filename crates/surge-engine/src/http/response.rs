//! response: a borrowed view of one completed response, for captures and checks to read,
//! and a per-response cache so the body is parsed as JSON at most once.

use crate::http::http1::{header_value, ResponseParser};
use serde_json::Value;

/// ResponseView borrows one completed response: its final status, the raw header block and
/// the (de-chunked, possibly truncated) body as retained by the parser, and its latency.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ResponseView<'a> {
    /// status is the final status code.
    pub status: u16,
    /// head is the raw header block (status line, headers, blank line); empty when not retained.
    pub head: &'a [u8],
    /// body is the de-chunked body; empty when not retained.
    pub body: &'a [u8],
    /// latency_ns is the time from sending the request to the end of the response.
    pub latency_ns: u64,
}

impl<'a> ResponseView<'a> {
    /// from_parser views what `parser` retained for the response it just completed.
    pub(crate) fn from_parser(parser: &'a ResponseParser, latency_ns: u64) -> Self {
        ResponseView { status: parser.status(), head: parser.head(), body: parser.body(), latency_ns }
    }

    /// header returns the trimmed value of the first header named `name` (ASCII
    /// case-insensitive), or None when absent.
    pub(crate) fn header(&self, name: &str) -> Option<&'a [u8]> {
        header_value(self.head, name)
    }
}

/// Parsed is what a JsonCache knows about the body.
#[derive(Clone, Debug, Default, PartialEq)]
enum Parsed {
    #[default]
    Unparsed,
    Json(Value),
    Invalid(String),
}

/// JsonCache parses one response body as JSON on first use and remembers the outcome,
/// value or error, so several captures and checks on that response parse it once. It is
/// free to create (nothing is allocated before the first parse); use one per response,
/// or call [`JsonCache::reset`] before passing it a different body.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct JsonCache {
    parsed: Parsed,
}

impl JsonCache {
    /// new returns an empty cache.
    pub(crate) fn new() -> Self {
        JsonCache::default()
    }

    /// reset forgets the parsed body, for the next response.
    pub(crate) fn reset(&mut self) {
        self.parsed = Parsed::Unparsed;
    }

    /// get returns the body parsed as JSON, parsing `body` only on the first call after
    /// new/reset; a body that is not JSON gives None now and on every later call.
    pub(crate) fn get(&mut self, body: &[u8]) -> Option<&Value> {
        if matches!(self.parsed, Parsed::Unparsed) {
            self.parsed = match serde_json::from_slice(body) {
                Ok(value) => Parsed::Json(value),
                Err(e) => Parsed::Invalid(e.to_string()),
            };
        }
        match &self.parsed {
            Parsed::Json(value) => Some(value),
            _ => None,
        }
    }

    /// error is why the body was not JSON, once [`JsonCache::get`] has tried to parse it.
    #[cfg(test)]
    pub(crate) fn error(&self) -> Option<&str> {
        match &self.parsed {
            Parsed::Invalid(message) => Some(message),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::http1::Step;
    use serde_json::json;

    #[test]
    fn view_of_a_retained_response() {
        let bytes = b"HTTP/1.1 201 Created\r\nLocation: /x/1\r\nContent-Length: 8\r\n\r\n{\"id\":1}";
        let mut parser = ResponseParser::new();
        parser.begin_retaining(false, 1024);
        assert_eq!(parser.feed(bytes), Ok(Step::Complete { consumed: bytes.len() }));
        let view = ResponseView::from_parser(&parser, 1234);
        assert_eq!((view.status, view.latency_ns, view.body), (201, 1234, &b"{\"id\":1}"[..]));
        assert_eq!(view.header("location"), Some(&b"/x/1"[..]));
        assert_eq!(view.header("etag"), None);
    }

    #[test]
    fn json_cache_parses_once_and_remembers_errors() {
        let mut cache = JsonCache::new();
        assert_eq!(cache.get(b"{\"a\": [1, 2]}"), Some(&json!({"a": [1, 2]})));
        // Cached: a different body is not looked at until reset.
        assert_eq!(cache.get(b"not json"), Some(&json!({"a": [1, 2]})));
        assert_eq!(cache.error(), None);

        cache.reset();
        assert_eq!(cache.get(b"not json"), None);
        assert!(cache.error().is_some_and(|e| e.contains("expected")), "{:?}", cache.error());
        // Remembered, not retried.
        assert_eq!(cache.get(b"{}"), None);

        cache.reset();
        let cases: &[(&[u8], Option<Value>)] = &[
            (b"", None),
            (b"{\"truncated\": ", None),
            (b" 42 ", Some(json!(42))),
            (b"\"s\"", Some(json!("s"))),
            (b"[1] [2]", None),
        ];
        for (body, want) in cases {
            let mut cache = JsonCache::new();
            assert_eq!(cache.get(body).cloned(), *want, "{:?}", String::from_utf8_lossy(body));
        }
    }
}
