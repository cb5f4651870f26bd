//! events: where a server-sent-events body (`text/event-stream`) completes its events.
//!
//! An event ends at a blank line after at least one `data` line (the SSE rule: a blank line
//! dispatches the data buffered since the last one; comment lines, such as a `:` keep-alive,
//! and other fields dispatch nothing). Lines end at CRLF, LF or CR. The scanner sees the
//! de-chunked body bytes as they arrive, split anywhere (across reads and chunks), keeps a few
//! bytes of state and allocates nothing. OpenAI-style streams end with `data: [DONE]`, a
//! sentinel rather than an event: it is not counted, so that it adds neither an event nor a gap.
//!
//! Token streams (OpenAI-compatible completions): an event whose data has a non-empty
//! `"content"` or `"text"` string carries output (a token event: the first of them is the first
//! token, the gaps between them the inter-token latency); a chat stream's role-only chunk
//! (`"content":""`), the finish chunk and the usage chunk carry none. The last
//! `"completion_tokens"` number seen in a data line is the server's own count of the tokens
//! (`usage`). Keys are matched as bytes in the JSON text, never parsed: a string value that
//! holds `"content":"` as escaped text (`\"content\"`) does not match, since the key's quotes
//! would be escaped.

/// DONE is the sentinel data line that ends an OpenAI-style stream (`data:[DONE]` too).
const DONE: &[u8] = b"data: [DONE]";

/// DATA_FIELD is how many bytes of [`DONE`] make a `data:` field.
const DATA_FIELD: u8 = 5;

/// LINE_OTHER marks a line that has stopped matching [`DONE`].
const LINE_OTHER: u8 = u8::MAX;

/// CONTENT, TEXT and COMPLETION_TOKENS are the keys of a chat delta's text, a completion's
/// text and the usage's output token count.
const CONTENT: &[u8] = b"\"content\"";
const TEXT: &[u8] = b"\"text\"";
const COMPLETION_TOKENS: &[u8] = b"\"completion_tokens\"";

/// Scanned is what a piece of an event-stream body completed: events, and of them those that
/// carried output text (token events).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Scanned {
    /// events counts the events completed.
    pub events: u32,
    /// tokens counts those of them whose data had a non-empty `content` or `text` string.
    pub tokens: u32,
}

impl std::ops::AddAssign for Scanned {
    fn add_assign(&mut self, other: Scanned) {
        self.events += other.events;
        self.tokens += other.tokens;
    }
}

/// FieldScan finds a JSON key in a line fed a byte at a time and tells when its value starts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct FieldScan {
    /// at counts the key's bytes matched; key.len() once they all are (waiting for `:`), one
    /// more after the `:` (waiting for the value).
    at: u8,
}

impl FieldScan {
    /// feed moves on by `byte`; true when `byte` is the first of the value of `key` (after
    /// `:` and any blanks). Every key starts with its only `"`, so a mismatch restarts at 0,
    /// or at 1 on a `"`.
    #[inline]
    fn feed(&mut self, key: &[u8], byte: u8) -> bool {
        let n = key.len() as u8;
        let restart = u8::from(byte == b'"');
        if self.at < n {
            self.at = if key[usize::from(self.at)] == byte { self.at + 1 } else { restart };
            return false;
        }
        if byte == b' ' || byte == b'\t' {
            return false;
        }
        if self.at == n {
            self.at = if byte == b':' { n + 1 } else { restart };
            return false;
        }
        self.at = 0;
        true
    }
}

/// EventScanner finds the ends of events in an event-stream body fed in pieces.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct EventScanner {
    /// matched counts the bytes of the current line that match [`DONE`] so far, or
    /// [`LINE_OTHER`] once it differs; 0 at the start of a line.
    matched: u8,
    /// line_bytes tells whether the current line has any byte yet.
    line_bytes: bool,
    /// data tells whether the current line is a `data` field.
    data: bool,
    /// pending tells whether a `data` line came since the last event (one is due at the next
    /// blank line).
    pending: bool,
    /// done tells whether the pending event's data is the `[DONE]` sentinel.
    done: bool,
    /// after_cr tells whether the last byte was a CR (an LF right after it ends nothing more).
    after_cr: bool,
    /// content, text and usage look for their keys in the current data line.
    content: FieldScan,
    text: FieldScan,
    usage: FieldScan,
    /// string_opened tells whether the last byte opened a `content` or `text` string.
    string_opened: bool,
    /// output tells whether the pending event's data had a non-empty `content` or `text`.
    output: bool,
    /// reading_usage tells whether digits of a `completion_tokens` number are being read.
    reading_usage: bool,
    /// usage_digits is the `completion_tokens` number read so far.
    usage_digits: u32,
    /// usage_tokens is the last `completion_tokens` number a data line completed.
    usage_tokens: Option<u32>,
}

impl EventScanner {
    /// scan reads `bytes` of the body and returns the events they completed.
    pub(crate) fn scan(&mut self, bytes: &[u8]) -> Scanned {
        let mut scanned = Scanned::default();
        for &byte in bytes {
            if byte == b'\n' && self.after_cr {
                self.after_cr = false;
                continue;
            }
            self.after_cr = byte == b'\r';
            if byte == b'\r' || byte == b'\n' {
                match self.end_line() {
                    Some(true) => scanned += Scanned { events: 1, tokens: 1 },
                    Some(false) => scanned.events += 1,
                    None => {}
                }
                continue;
            }
            self.line_bytes = true;
            self.matched = match self.matched {
                LINE_OTHER => LINE_OTHER,
                // `data:` may be followed by no space: `data:[DONE]` is the sentinel too.
                m if m == DATA_FIELD && byte == b'[' => m + 2,
                m if usize::from(m) < DONE.len() && DONE[usize::from(m)] == byte => m + 1,
                _ => LINE_OTHER,
            };
            if self.matched == DATA_FIELD {
                self.data = true;
            } else if self.data {
                self.data_byte(byte);
            }
        }
        scanned
    }

    /// data_byte reads a byte of a data line's value for the output text and the usage.
    #[inline]
    fn data_byte(&mut self, byte: u8) {
        if std::mem::take(&mut self.string_opened) && byte != b'"' {
            self.output = true;
        }
        if self.reading_usage {
            if byte.is_ascii_digit() {
                self.usage_digits = self.usage_digits.saturating_mul(10).saturating_add(u32::from(byte - b'0'));
                return;
            }
            self.end_usage();
        }
        if self.content.feed(CONTENT, byte) | self.text.feed(TEXT, byte) {
            self.string_opened = byte == b'"';
        }
        if self.usage.feed(COMPLETION_TOKENS, byte) && byte.is_ascii_digit() {
            self.reading_usage = true;
            self.usage_digits = u32::from(byte - b'0');
        }
    }

    /// end_usage keeps the `completion_tokens` number just read.
    fn end_usage(&mut self) {
        self.reading_usage = false;
        self.usage_tokens = Some(self.usage_digits);
    }

    /// usage_tokens is the last `completion_tokens` number the stream's data gave (its
    /// `usage`), if any.
    pub(crate) fn usage_tokens(&self) -> Option<u32> {
        self.usage_tokens
    }

    /// end_line ends the current line: a blank one dispatches the pending event (Some when that
    /// is an event to count, not the `[DONE]` sentinel; true when it carried output text).
    fn end_line(&mut self) -> Option<bool> {
        if self.reading_usage {
            self.end_usage();
        }
        let blank = !self.line_bytes;
        let counted = if blank && self.pending {
            let event = (!self.done).then_some(self.output);
            self.pending = false;
            self.done = false;
            self.output = false;
            event
        } else {
            if self.data {
                self.pending = true;
                // A stream whose data is `[DONE]` alone ends with the sentinel.
                self.done = usize::from(self.matched) == DONE.len();
            }
            None
        };
        self.matched = 0;
        self.line_bytes = false;
        self.data = false;
        self.content = FieldScan::default();
        self.text = FieldScan::default();
        self.usage = FieldScan::default();
        self.string_opened = false;
        counted
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// events_in_pieces feeds `body` in pieces of `step` bytes and returns the events counted.
    fn events_in_pieces(body: &[u8], step: usize) -> u32 {
        scanned_in_pieces(body, step).0.events
    }

    /// scanned_in_pieces feeds `body` in pieces of `step` bytes: what they completed, and the
    /// usage's token count.
    fn scanned_in_pieces(body: &[u8], step: usize) -> (Scanned, Option<u32>) {
        let mut scanner = EventScanner::default();
        let mut total = Scanned::default();
        for piece in body.chunks(step) {
            total += scanner.scan(piece);
        }
        (total, scanner.usage_tokens())
    }

    #[test]
    fn an_event_ends_at_a_blank_line_however_the_bytes_are_split() {
        let body = b"data: {\"a\":1}\n\ndata: {\"a\":2}\n\ndata: [DONE]\n\n";
        for step in 1..=body.len() {
            assert_eq!(events_in_pieces(body, step), 2, "split every {step} bytes");
        }
    }

    #[test]
    fn crlf_and_cr_end_lines_too() {
        assert_eq!(events_in_pieces(b"data: a\r\n\r\ndata: b\r\rdata: c\n\n", 1), 3);
        assert_eq!(events_in_pieces(b"data: a\r\n\r\ndata: b\r\rdata: c\n\n", 64), 3);
    }

    #[test]
    fn comments_and_fields_without_data_dispatch_nothing() {
        let body = b": keep-alive\n\nevent: ping\n\nid: 7\nretry: 10\n\ndata: x\nid: 8\n\n";
        assert_eq!(events_in_pieces(body, 3), 1);
    }

    #[test]
    fn a_multi_line_event_is_one_event() {
        assert_eq!(events_in_pieces(b"event: token\ndata: a\ndata: b\n\n", 2), 1);
    }

    #[test]
    fn the_done_sentinel_is_not_an_event_in_either_spelling() {
        assert_eq!(events_in_pieces(b"data: x\n\ndata:[DONE]\n\n", 1), 1);
        assert_eq!(events_in_pieces(b"data: [DONE]\n\n", 5), 0);
        // Data that merely starts like the sentinel is an event.
        assert_eq!(events_in_pieces(b"data: [DONE] later\n\ndata: [DON\n\n", 4), 2);
    }

    #[test]
    fn an_event_still_open_at_the_end_is_not_counted_until_its_blank_line() {
        let mut scanner = EventScanner::default();
        assert_eq!(scanner.scan(b"data: x\n").events, 0);
        assert_eq!(scanner.scan(b"\n").events, 1);
    }

    /// CHAT is an OpenAI chat stream: a role-only chunk, two tokens, the finish chunk, the usage
    /// chunk and the sentinel.
    const CHAT: &[u8] = b"data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n\
        data: {\"choices\":[{\"delta\":{\"content\":\"Hel\"},\"finish_reason\":null}]}\n\n\
        data: {\"choices\":[{\"delta\": {\"content\" : \"lo\"}}]}\r\n\r\n\
        data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"length\"}]}\n\n\
        data: {\"choices\":[],\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":12,\"total_tokens\":19}}\n\n\
        data: [DONE]\n\n";

    #[test]
    fn token_events_carry_output_text_and_the_usage_gives_the_servers_count() {
        for step in 1..=CHAT.len() {
            let (scanned, usage) = scanned_in_pieces(CHAT, step);
            assert_eq!(scanned, Scanned { events: 5, tokens: 2 }, "split every {step} bytes");
            assert_eq!(usage, Some(12), "split every {step} bytes");
        }
    }

    #[test]
    fn completions_text_counts_and_lookalike_keys_do_not() {
        let body = b"data: {\"choices\":[{\"text\":\"a\"}]}\n\n\
            data: {\"reasoning_content\":\"x\",\"context\":\"y\",\"note\":\"\\\"content\\\":\\\"z\"}\n\n\
            data: {\"text\":\"\"}\n\n";
        for step in 1..=body.len() {
            assert_eq!(scanned_in_pieces(body, step), (Scanned { events: 3, tokens: 1 }, None), "split every {step}");
        }
    }

    #[test]
    fn the_last_completion_tokens_number_wins_and_ends_at_the_line_end() {
        let body = b"data: {\"usage\":{\"completion_tokens\":3}}\n\ndata: {\"usage\":{\"completion_tokens\": 45\n\n";
        assert_eq!(scanned_in_pieces(body, 1).1, Some(45));
        assert_eq!(scanned_in_pieces(b"data: {\"completion_tokens\":null}\n\n", 1).1, None);
    }
}
