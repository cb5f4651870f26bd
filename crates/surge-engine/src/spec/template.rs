//! Request templates: a text with `{{name}}` slots that is rendered once per request
//! from per-iteration values (see [`crate::spec::variables`]) without allocating.
//!
//! Syntax: `{{name}}`, with optional spaces or tabs inside the braces (`{{ name }}`).
//! A name matches `[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)?`; the dotted form addresses a
//! column of a row variable (`{{user.email}}`). There is no escape syntax: every `{{`
//! opens a slot, and a lone `}}` is literal text. An unterminated `{{`, an empty name,
//! an invalid name and an unknown name are errors whose message quotes the offending
//! text and says what was expected.
//!
//! Parsing resolves every name to a slot index once; rendering then only copies byte
//! runs into a caller-provided buffer.

/// Part is one piece of a parsed template: a literal byte run or a slot index.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Part {
    Literal(Box<[u8]>),
    Slot(usize),
}

/// Template is a text split into literal byte runs and slots; it renders without
/// allocating when the output buffer has room.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Template {
    parts: Vec<Part>,
}

/// QUOTE_MAX is how many bytes of offending text an error message quotes at most.
const QUOTE_MAX: usize = 40;

/// quote returns `text` cut to at most QUOTE_MAX bytes on a char boundary, with `...`
/// appended when it was cut.
fn quote(text: &str) -> String {
    if text.len() <= QUOTE_MAX {
        return text.to_string();
    }
    let mut end = QUOTE_MAX;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &text[..end])
}

/// is_valid_name reports whether `name` matches `[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)?`.
pub(crate) fn is_valid_name(name: &str) -> bool {
    let (head, column) = match name.split_once('.') {
        Some((head, column)) => (head, Some(column)),
        None => (name, None),
    };
    let word = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    let head_ok = word(head) && head.bytes().next().is_some_and(|b| !b.is_ascii_digit());
    head_ok && column.is_none_or(word)
}

impl Template {
    /// parse splits `text` into literal runs and slots, mapping each slot name to an index
    /// with `resolve`; it fails with a message quoting the offending text on an
    /// unterminated `{{`, an empty or invalid name, or a name `resolve` does not know
    /// (`undefined variable 'tokn'`).
    pub(crate) fn parse(text: &str, resolve: &mut dyn FnMut(&str) -> Option<usize>) -> Result<Template, String> {
        let mut parts = Vec::new();
        let mut rest = text;
        let mut offset = 0;
        while let Some(open) = rest.find("{{") {
            if open > 0 {
                parts.push(Part::Literal(rest.as_bytes()[..open].into()));
            }
            let after = &rest[open + 2..];
            let Some(close) = after.find("}}") else {
                return Err(format!(
                    "unterminated '{{{{' at byte {}: '{}' needs a closing '}}}}'",
                    offset + open,
                    quote(&rest[open..])
                ));
            };
            let raw = &after[..close];
            let name = raw.trim_matches([' ', '\t']);
            let whole = &rest[open..open + 2 + close + 2];
            if name.is_empty() {
                return Err(format!(
                    "empty variable name in '{}' at byte {}: expected '{{{{name}}}}'",
                    quote(whole),
                    offset + open
                ));
            }
            if !is_valid_name(name) {
                return Err(format!(
                    "invalid variable name '{}' in '{}' at byte {}: expected letters, digits and \
                     '_' not starting with a digit, optionally followed by '.column'",
                    quote(name),
                    quote(whole),
                    offset + open
                ));
            }
            match resolve(name) {
                Some(slot) => parts.push(Part::Slot(slot)),
                None => return Err(format!("undefined variable '{name}'")),
            }
            let consumed = open + 2 + close + 2;
            offset += consumed;
            rest = &rest[consumed..];
        }
        if !rest.is_empty() {
            parts.push(Part::Literal(rest.as_bytes().into()));
        }
        Ok(Template { parts })
    }

    /// parse_names parses `text` resolving names by their position in `names` (slot `i` is
    /// `names[i]`); an unknown name's error lists the defined ones:
    /// `undefined variable 'tokn' (defined: id, token, user.email)`.
    pub(crate) fn parse_names<S: AsRef<str>>(text: &str, names: &[S]) -> Result<Template, String> {
        Template::parse(text, &mut |name| names.iter().position(|n| n.as_ref() == name)).map_err(|e| {
            if !e.starts_with("undefined variable") {
                return e;
            }
            if names.is_empty() {
                format!("{e} (no variables are defined)")
            } else {
                let defined: Vec<&str> = names.iter().map(AsRef::as_ref).collect();
                format!("{e} (defined: {})", defined.join(", "))
            }
        })
    }

    /// literal_bytes is a template of fixed bytes (a binary body), never parsed for slots.
    pub(crate) fn literal_bytes(bytes: Vec<u8>) -> Template {
        let parts = if bytes.is_empty() { Vec::new() } else { vec![Part::Literal(bytes.into_boxed_slice())] };
        Template { parts }
    }

    /// is_static reports whether the template has no slots, so it renders the same bytes
    /// every time.
    pub(crate) fn is_static(&self) -> bool {
        self.parts.iter().all(|p| matches!(p, Part::Literal(_)))
    }

    /// literal returns the whole text when the template is static, else None.
    #[cfg(test)]
    pub(crate) fn literal(&self) -> Option<&[u8]> {
        match self.parts.as_slice() {
            [] => Some(&[]),
            [Part::Literal(bytes)] => Some(bytes),
            _ => None,
        }
    }

    /// render appends the template to `out`, writing `slots[i]` for slot `i`; a slot index
    /// beyond `slots` renders as nothing. It allocates only if `out` must grow.
    pub(crate) fn render(&self, slots: &[Vec<u8>], out: &mut Vec<u8>) {
        for part in &self.parts {
            match part {
                Part::Literal(bytes) => out.extend_from_slice(bytes),
                Part::Slot(i) => {
                    if let Some(value) = slots.get(*i) {
                        out.extend_from_slice(value);
                    }
                }
            }
        }
    }

    /// render_escaped is [`Template::render`] with every slot value passed through `escape`
    /// (literal parts are copied as they are), e.g. to keep a value from breaking an HTTP head.
    pub(crate) fn render_escaped(&self, slots: &[Vec<u8>], out: &mut Vec<u8>, escape: impl Fn(&[u8], &mut Vec<u8>)) {
        for part in &self.parts {
            match part {
                Part::Literal(bytes) => out.extend_from_slice(bytes),
                Part::Slot(i) => {
                    if let Some(value) = slots.get(*i) {
                        escape(value, out);
                    }
                }
            }
        }
    }

    /// rendered_len is the number of bytes [`Template::render`] appends for `slots`.
    pub(crate) fn rendered_len(&self, slots: &[Vec<u8>]) -> usize {
        self.parts
            .iter()
            .map(|part| match part {
                Part::Literal(bytes) => bytes.len(),
                Part::Slot(i) => slots.get(*i).map_or(0, Vec::len),
            })
            .sum()
    }

    /// slots_used yields the slot index of every slot in text order (repeats included).
    #[cfg(test)]
    pub(crate) fn slots_used(&self) -> impl Iterator<Item = usize> + '_ {
        self.parts.iter().filter_map(|part| match part {
            Part::Slot(i) => Some(*i),
            Part::Literal(_) => None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ok returns the value of a result that must be Ok, panicking with the error otherwise.
    fn ok<T, E: std::fmt::Debug>(result: Result<T, E>, what: &str) -> T {
        match result {
            Ok(value) => value,
            Err(e) => panic!("{what}: {e:?}"),
        }
    }

    /// fails returns the error of a result that must be Err.
    fn fails<T: std::fmt::Debug>(result: Result<T, String>, what: &str) -> String {
        match result {
            Ok(value) => panic!("{what}: expected an error, got {value:?}"),
            Err(e) => e,
        }
    }

    const NAMES: [&str; 4] = ["id", "token", "user.email", "_x9"];

    fn slots() -> Vec<Vec<u8>> {
        vec![b"42".to_vec(), b"secret".to_vec(), b"a@b.c".to_vec(), b"".to_vec()]
    }

    #[test]
    fn parse_and_render() {
        let cases: &[(&str, &str, bool)] = &[
            ("", "", true),
            ("plain /path?q=1", "plain /path?q=1", true),
            ("/tasks/{{id}}", "/tasks/42", false),
            ("{{id}}/tail", "42/tail", false),
            ("{{id}}", "42", false),
            ("{{ id }}", "42", false),
            ("{{\tid  }}", "42", false),
            ("{{id}}{{token}}", "42secret", false),
            ("{{id}}-{{id}}", "42-42", false),
            ("mail={{user.email}}&x={{_x9}}!", "mail=a@b.c&x=!", false),
            ("{\"id\":{{id}}}", "{\"id\":42}", false),
            ("a }} b", "a }} b", true),
            ("{ {id} }", "{ {id} }", true),
            ("héllo {{id}} wörld", "héllo 42 wörld", false),
        ];
        for (text, want, is_static) in cases {
            let t = ok(Template::parse_names(text, &NAMES), text);
            let mut out = b"prefix:".to_vec();
            t.render(&slots(), &mut out);
            assert_eq!(String::from_utf8_lossy(&out), format!("prefix:{want}"), "{text:?}");
            assert_eq!(t.rendered_len(&slots()), want.len(), "{text:?}");
            assert_eq!(t.is_static(), *is_static, "{text:?}");
            assert_eq!(t.literal().is_some(), *is_static, "{text:?}");
            if *is_static {
                assert_eq!(t.literal(), Some(want.as_bytes()), "{text:?}");
            }
        }
    }

    #[test]
    fn slots_used_in_order() {
        let t = ok(Template::parse_names("{{token}}/{{id}}?{{token}}", &NAMES), "slots");
        assert_eq!(t.slots_used().collect::<Vec<_>>(), vec![1, 0, 1]);
        let t = ok(Template::parse_names("none", &NAMES), "none");
        assert_eq!(t.slots_used().count(), 0);
    }

    #[test]
    fn errors() {
        let cases: &[(&str, &[&str])] = &[
            ("/x/{{id", &["unterminated '{{' at byte 3", "'{{id'", "closing '}}'"]),
            ("{{id}} then {{", &["unterminated '{{' at byte 12"]),
            ("{{}}", &["empty variable name in '{{}}'", "expected '{{name}}'"]),
            ("{{   }}", &["empty variable name"]),
            ("{{9id}}", &["invalid variable name '9id' in '{{9id}}'", "not starting with a digit"]),
            ("{{a-b}}", &["invalid variable name 'a-b'"]),
            ("{{a.b.c}}", &["invalid variable name 'a.b.c'"]),
            ("{{a.}}", &["invalid variable name 'a.'"]),
            ("{{.a}}", &["invalid variable name '.a'"]),
            ("{{ i d }}", &["invalid variable name 'i d'"]),
            ("{{{id}}}", &["invalid variable name '{id'"]),
            ("{{tokn}}", &["undefined variable 'tokn' (defined: id, token, user.email, _x9)"]),
            ("{{user}}", &["undefined variable 'user'"]),
        ];
        for (text, wants) in cases {
            let err = fails(Template::parse_names(text, &NAMES), text);
            for want in *wants {
                assert!(err.contains(want), "{text:?}: {err:?} lacks {want:?}");
            }
        }
        let err = fails(Template::parse_names("{{id}}", &[] as &[&str]), "no names");
        assert_eq!(err, "undefined variable 'id' (no variables are defined)");
    }

    #[test]
    fn long_offending_text_is_cut() {
        let text = format!("{{{{{}", "é".repeat(100));
        let err = fails(Template::parse_names(&text, &NAMES), "unterminated");
        assert!(err.contains("...'"), "{err}");
        assert!(err.len() < 150, "{err}");
    }

    #[test]
    fn parse_uses_resolver() {
        let mut seen = Vec::new();
        let parsed = Template::parse("{{a}}{{b.c}}", &mut |name| {
            seen.push(name.to_string());
            Some(seen.len() + 10)
        });
        let t = ok(parsed, "resolver");
        assert_eq!(seen, ["a", "b.c"]);
        assert_eq!(t.slots_used().collect::<Vec<_>>(), vec![11, 12]);
        let err = fails(Template::parse("{{a}}", &mut |_| None), "unknown");
        assert_eq!(err, "undefined variable 'a'");
    }

    #[test]
    fn missing_slot_renders_empty() {
        let t = ok(Template::parse("<{{x}}>", &mut |_| Some(7)), "missing");
        let mut out = Vec::new();
        t.render(&slots(), &mut out);
        assert_eq!(out, b"<>");
    }

    #[test]
    fn valid_names() {
        let cases = [
            ("a", true),
            ("_", true),
            ("A_1", true),
            ("user.email", true),
            ("user.1", true),
            ("1a", false),
            ("", false),
            ("a.", false),
            ("a.b.c", false),
            ("a b", false),
            ("é", false),
        ];
        for (name, want) in cases {
            assert_eq!(is_valid_name(name), want, "{name:?}");
        }
    }
}
