//! jsonpath: the subset of JSONPath that captures and checks use, compiled once.
//!
//! Supported, chained in any order after the leading `$`:
//!
//! | form              | meaning                                                    |
//! |-------------------|------------------------------------------------------------|
//! | `$`               | the whole document (must come first)                       |
//! | `.name`           | member `name` of an object; letters, digits, `_` and `-`   |
//! | `['name']`        | member `name`, any characters; `\'` and `\\` escape        |
//! | `["name"]`        | member `name`, any characters; `\"` and `\\` escape        |
//! | `[3]`             | element 3 of an array, counting from 0                     |
//! | `[-1]`            | the last element of an array (`-2` the one before, ...)    |
//!
//! For example `$.data.items[0].id` or `$['a b'][-1]`. Wildcards (`*`), recursive descent
//! (`..`), filters (`[?(...)]`), slices (`[1:2]`) and unions (`[0,1]`) are rejected with a
//! message naming the supported forms; a path selects at most one value.

use serde_json::Value;
use std::fmt;

/// SUPPORTED names the accepted forms in every parse error message.
const SUPPORTED: &str = "supported forms: $, .name, ['name'], [\"name\"], [index], [-index]";

/// Segment is one step of a compiled path.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Segment {
    /// Member of an object.
    Key(String),
    /// Element of an array; negative counts from the end.
    Index(i64),
}

/// JsonPath is a compiled path of the supported subset; [`JsonPath::find`] never fails,
/// it selects one value or none.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JsonPath {
    source: String,
    segments: Vec<Segment>,
}

impl fmt::Display for JsonPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

/// Cursor walks the path text by character, remembering positions for messages.
struct Cursor<'a> {
    text: &'a str,
    chars: std::iter::Peekable<std::str::CharIndices<'a>>,
}

impl Cursor<'_> {
    fn peek(&mut self) -> Option<(usize, char)> {
        self.chars.peek().copied()
    }

    fn next(&mut self) -> Option<(usize, char)> {
        self.chars.next()
    }

    /// error builds a message pointing at the character at byte offset `at` (or the end).
    fn error(&self, at: usize, what: &str) -> String {
        let column = self.text[..at.min(self.text.len())].chars().count() + 1;
        match self.text[at.min(self.text.len())..].chars().next() {
            Some(c) => format!("{what}: unexpected {c:?} at character {column} of {:?}; {SUPPORTED}", self.text),
            None => format!("{what}: unexpected end at character {column} of {:?}; {SUPPORTED}", self.text),
        }
    }
}

impl JsonPath {
    /// parse compiles `text`, or says which character is wrong and which forms are supported.
    pub fn parse(text: &str) -> Result<JsonPath, String> {
        let mut cur = Cursor { text, chars: text.char_indices().peekable() };
        match cur.next() {
            Some((_, '$')) => {}
            _ => return Err(cur.error(0, "a path must start with '$'")),
        }
        let mut segments = Vec::new();
        while let Some((at, c)) = cur.next() {
            match c {
                '.' => segments.push(Segment::Key(parse_dot_name(&mut cur, at)?)),
                '[' => segments.push(parse_bracket(&mut cur, at)?),
                _ => return Err(cur.error(at, "expected '.' or '['")),
            }
        }
        Ok(JsonPath { source: text.to_string(), segments })
    }

    /// find returns the one value the path selects in `root`, or None when a member is
    /// missing, an index is out of range, or a step meets a value of the wrong kind.
    pub fn find<'v>(&self, root: &'v Value) -> Option<&'v Value> {
        self.segments.iter().try_fold(root, |value, segment| match (segment, value) {
            (Segment::Key(key), Value::Object(map)) => map.get(key),
            (Segment::Index(index), Value::Array(items)) => {
                let len = i64::try_from(items.len()).ok()?;
                let at = if *index < 0 { len.checked_add(*index)? } else { *index };
                items.get(usize::try_from(at).ok()?)
            }
            _ => None,
        })
    }

    /// as_str is the path as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }
}

fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '-'
}

/// parse_dot_name reads the name after a '.' at byte offset `dot`.
fn parse_dot_name(cur: &mut Cursor<'_>, dot: usize) -> Result<String, String> {
    let mut name = String::new();
    while let Some((at, c)) = cur.peek() {
        if is_name_char(c) {
            name.push(c);
            cur.next();
        } else if name.is_empty() {
            let what = match c {
                '.' => "recursive descent '..' is not supported",
                '*' => "wildcards are not supported",
                _ => "expected a member name after '.' (use ['...'] for other characters)",
            };
            return Err(cur.error(at, what));
        } else {
            break;
        }
    }
    if name.is_empty() {
        return Err(cur.error(dot + 1, "expected a member name after '.'"));
    }
    Ok(name)
}

/// parse_bracket reads `['name']`, `["name"]` or `[index]` after the '[' at byte offset `open`.
fn parse_bracket(cur: &mut Cursor<'_>, open: usize) -> Result<Segment, String> {
    let segment = match cur.peek() {
        Some((_, quote @ ('\'' | '"'))) => {
            cur.next();
            Segment::Key(parse_quoted(cur, quote)?)
        }
        Some((_, '-' | '0'..='9')) => Segment::Index(parse_index(cur)?),
        Some((at, c)) => {
            let what = match c {
                '*' => "wildcards are not supported",
                '?' => "filters are not supported",
                ':' => "slices are not supported",
                _ => "expected a quoted name or an index after '['",
            };
            return Err(cur.error(at, what));
        }
        None => return Err(cur.error(open + 1, "unclosed '['")),
    };
    match cur.next() {
        Some((_, ']')) => Ok(segment),
        Some((at, ',')) => Err(cur.error(at, "unions are not supported")),
        Some((at, ':')) => Err(cur.error(at, "slices are not supported")),
        Some((at, _)) => Err(cur.error(at, "expected ']'")),
        None => Err(cur.error(cur.text.len(), "expected ']'")),
    }
}

/// parse_quoted reads a name up to the closing `quote`, which has already been opened.
fn parse_quoted(cur: &mut Cursor<'_>, quote: char) -> Result<String, String> {
    let mut name = String::new();
    loop {
        match cur.next() {
            Some((_, c)) if c == quote => return Ok(name),
            Some((_, '\\')) => match cur.next() {
                Some((_, c)) if c == quote || c == '\\' => name.push(c),
                Some((esc, _)) => {
                    return Err(cur.error(esc, &format!("only \\{quote} and \\\\ are escapes in a quoted name")))
                }
                None => return Err(cur.error(cur.text.len(), "unclosed quoted name")),
            },
            Some((_, c)) => name.push(c),
            None => return Err(cur.error(cur.text.len(), "unclosed quoted name")),
        }
    }
}

/// parse_index reads an optionally negative decimal index.
fn parse_index(cur: &mut Cursor<'_>) -> Result<i64, String> {
    let mut negative = false;
    if let Some((_, '-')) = cur.peek() {
        negative = true;
        cur.next();
    }
    let mut value: i64 = 0;
    let mut digits = 0;
    while let Some((at, c)) = cur.peek() {
        let Some(d) = c.to_digit(10) else { break };
        value = value
            .checked_mul(10)
            .and_then(|v| v.checked_add(i64::from(d)))
            .ok_or_else(|| cur.error(at, "index too large"))?;
        digits += 1;
        cur.next();
    }
    if digits == 0 {
        let at = cur.peek().map_or(cur.text.len(), |(at, _)| at);
        return Err(cur.error(at, "expected digits of an index"));
    }
    Ok(if negative { -value } else { value })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn valid_paths_find_their_value() {
        let doc = json!({
            "id": 7,
            "data": {"items": [{"id": "a1"}, {"id": "b2"}, {"id": "c3"}]},
            "a b": [1, 2, 3],
            "it's": {"q\"uote": true},
            "ключ": "unicode",
            "snake_case-x": null,
        });
        let cases: &[(&str, Option<Value>)] = &[
            ("$", Some(doc.clone())),
            ("$.id", Some(json!(7))),
            ("$.data.items[0].id", Some(json!("a1"))),
            ("$.data.items[-1].id", Some(json!("c3"))),
            ("$.data.items[-3].id", Some(json!("a1"))),
            ("$['a b'][-1]", Some(json!(3))),
            ("$[\"a b\"][1]", Some(json!(2))),
            ("$['it\\'s'][\"q\\\"uote\"]", Some(json!(true))),
            ("$.ключ", Some(json!("unicode"))),
            ("$.snake_case-x", Some(Value::Null)),
            ("$.data['items'][1]['id']", Some(json!("b2"))),
            ("$.missing", None),
            ("$.data.items[3]", None),
            ("$.data.items[-4]", None),
            ("$.id.deeper", None),
            ("$.data[0]", None),
            ("$.data.items.id", None),
            ("$[0]", None),
        ];
        for (text, want) in cases {
            let path = JsonPath::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(path.find(&doc), want.as_ref(), "{text}");
            assert_eq!(path.as_str(), *text);
        }
        let items = json!([10, 20]);
        assert_eq!(JsonPath::parse("$[-9223372036854775807]").map(|p| p.find(&items).cloned()), Ok(None));
    }

    #[test]
    fn invalid_paths_say_where_and_what_is_supported() {
        let cases: &[(&str, &str, &str)] = &[
            ("", "must start with '$'", "unexpected end at character 1"),
            ("data.id", "must start with '$'", "unexpected 'd' at character 1"),
            ("$id", "expected '.' or '['", "'i' at character 2"),
            ("$.", "expected a member name", "end at character 3"),
            ("$..id", "recursive descent", "'.' at character 3"),
            ("$.*", "wildcards", "'*' at character 3"),
            ("$[*]", "wildcards", "'*' at character 3"),
            ("$.a[?(@.x)]", "filters", "'?' at character 5"),
            ("$[1:2]", "slices", "':' at character 4"),
            ("$[:2]", "slices", "':' at character 3"),
            ("$[0,1]", "unions", "',' at character 4"),
            ("$[", "unclosed '['", "end at character 3"),
            ("$['a'", "expected ']'", "end at character 6"),
            ("$['a", "unclosed quoted name", "end"),
            ("$['a\\n']", "escapes", "'n' at character 6"),
            ("$[-]", "expected digits", "']' at character 4"),
            ("$[1x]", "expected ']'", "'x' at character 4"),
            ("$[99999999999999999999]", "index too large", "character"),
            ("$.a b", "expected '.' or '['", "' ' at character 4"),
            ("$.é.[0]", "expected a member name", "'[' at character 5"),
        ];
        for &(text, what, place) in cases {
            let err = JsonPath::parse(text).err().unwrap_or_else(|| panic!("{text:?} should fail"));
            assert!(err.contains(what), "{text:?}: {err}");
            assert!(err.contains(place), "{text:?}: {err}");
            assert!(err.contains(SUPPORTED), "{text:?}: {err}");
        }
    }
}
