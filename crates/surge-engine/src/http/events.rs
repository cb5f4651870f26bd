//! events: where a server-sent-events body (`text/event-stream`) completes its events.
//!
//! An event ends at a blank line after at least one `data` line (the SSE rule: a blank line
//! dispatches the data buffered since the last one; comment lines, such as a `:` keep-alive,
//! and other fields dispatch nothing). Lines end at CRLF, LF or CR. The scanner sees the
//! de-chunked body bytes as they arrive, split anywhere (across reads and chunks), keeps a few
//! bytes of state and allocates nothing. OpenAI-style streams end with `data: [DONE]`, a
//! sentinel rather than an event: it is not counted, so that it adds neither an event nor a gap.

/// DONE is the sentinel data line that ends an OpenAI-style stream (`data:[DONE]` too).
const DONE: &[u8] = b"data: [DONE]";

/// DATA_FIELD is how many bytes of [`DONE`] make a `data:` field.
const DATA_FIELD: u8 = 5;

/// LINE_OTHER marks a line that has stopped matching [`DONE`].
const LINE_OTHER: u8 = u8::MAX;

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
}

impl EventScanner {
    /// scan reads `bytes` of the body and returns the number of events they completed.
    pub(crate) fn scan(&mut self, bytes: &[u8]) -> u32 {
        let mut events = 0;
        for &byte in bytes {
            if byte == b'\n' && self.after_cr {
                self.after_cr = false;
                continue;
            }
            self.after_cr = byte == b'\r';
            if byte == b'\r' || byte == b'\n' {
                events += u32::from(self.end_line());
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
            }
        }
        events
    }

    /// end_line ends the current line: a blank one dispatches the pending event (true when that
    /// is an event to count: not the `[DONE]` sentinel).
    fn end_line(&mut self) -> bool {
        let blank = !self.line_bytes;
        let counted = if blank && self.pending {
            let event = !self.done;
            self.pending = false;
            self.done = false;
            event
        } else {
            if self.data {
                self.pending = true;
                // A stream whose data is `[DONE]` alone ends with the sentinel.
                self.done = usize::from(self.matched) == DONE.len();
            }
            false
        };
        self.matched = 0;
        self.line_bytes = false;
        self.data = false;
        counted
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// events_in_pieces feeds `body` in pieces of `step` bytes and returns the events counted.
    fn events_in_pieces(body: &[u8], step: usize) -> u32 {
        let mut scanner = EventScanner::default();
        body.chunks(step).map(|piece| scanner.scan(piece)).sum()
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
        assert_eq!(scanner.scan(b"data: x\n"), 0);
        assert_eq!(scanner.scan(b"\n"), 1);
    }
}
