//! capture: take a value out of a response (a JSON member, a header, a regex group of the
//! body) to set a VU variable or append to a pool.
//!
//! The plan carries each capture as one flat JSON object; `from` says where the value comes
//! from, `to_pool` (default false) says whether `name` is a VU variable to set or a pool to
//! append to, and no other keys are accepted:
//!
//! ```json
//! {"name": "user_id", "from": "json", "path": "$.data.id"}
//! {"name": "next", "from": "header", "header": "Location"}
//! {"name": "ids", "to_pool": true, "from": "regex", "pattern": "id=(\\d+)", "group": 1}
//! ```
//!
//! `group` defaults to 1; 0 is the whole match. Paths use the subset documented in
//! [`crate::spec::jsonpath`]; patterns use the `regex` crate's syntax on the body's bytes.

use crate::http::response::{JsonCache, ResponseView};
use crate::spec::jsonpath::JsonPath;
use crate::spec::plan_error::PlanError;
use regex::bytes::Regex;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// CaptureSpec is one capture as the plan states it, before validation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "RawCaptureSpec", into = "RawCaptureSpec")]
pub struct CaptureSpec {
    /// name is the VU variable the value sets, or the pool it is appended to when `to_pool`.
    pub name: String,
    /// to_pool appends the value to the pool `name` instead of setting a VU variable.
    pub to_pool: bool,
    /// source says where in the response the value is found.
    pub source: CaptureSource,
}

/// CaptureSource is where a capture looks in the response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CaptureSource {
    /// Json selects one value of the body parsed as JSON (`"from": "json"`).
    Json {
        /// path is a JSONPath of the supported subset, e.g. `$.data.id`.
        path: String,
    },
    /// Header takes the first response header of that name (`"from": "header"`).
    Header {
        /// header is the header name, matched case-insensitively.
        header: String,
    },
    /// Regex takes a group of the first match in the body (`"from": "regex"`).
    Regex {
        /// pattern is a regular expression in the `regex` crate's syntax.
        pattern: String,
        /// group is the capture group taken: 0 is the whole match, 1 (default) the first group.
        group: u32,
    },
}

/// RawCaptureSpec is the flat wire shape; serde cannot combine `flatten` with
/// `deny_unknown_fields`, so name/to_pool are repeated in each variant.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "from", rename_all = "snake_case", deny_unknown_fields)]
enum RawCaptureSpec {
    Json {
        name: String,
        #[serde(default)]
        to_pool: bool,
        path: String,
    },
    Header {
        name: String,
        #[serde(default)]
        to_pool: bool,
        header: String,
    },
    Regex {
        name: String,
        #[serde(default)]
        to_pool: bool,
        pattern: String,
        #[serde(default = "default_group")]
        group: u32,
    },
}

fn default_group() -> u32 {
    1
}

impl From<RawCaptureSpec> for CaptureSpec {
    fn from(raw: RawCaptureSpec) -> Self {
        let (name, to_pool, source) = match raw {
            RawCaptureSpec::Json { name, to_pool, path } => (name, to_pool, CaptureSource::Json { path }),
            RawCaptureSpec::Header { name, to_pool, header } => (name, to_pool, CaptureSource::Header { header }),
            RawCaptureSpec::Regex { name, to_pool, pattern, group } => {
                (name, to_pool, CaptureSource::Regex { pattern, group })
            }
        };
        CaptureSpec { name, to_pool, source }
    }
}

impl From<CaptureSpec> for RawCaptureSpec {
    fn from(spec: CaptureSpec) -> Self {
        let CaptureSpec { name, to_pool, source } = spec;
        match source {
            CaptureSource::Json { path } => RawCaptureSpec::Json { name, to_pool, path },
            CaptureSource::Header { header } => RawCaptureSpec::Header { name, to_pool, header },
            CaptureSource::Regex { pattern, group } => RawCaptureSpec::Regex { name, to_pool, pattern, group },
        }
    }
}

/// Extractor is a compiled source.
#[derive(Clone, Debug)]
enum Extractor {
    Json(JsonPath),
    Header(String),
    Regex { regex: Regex, group: usize },
}

/// Capture is a validated, compiled capture: its path or regex is compiled once and
/// [`Capture::extract`] cannot fail, only find nothing.
#[derive(Clone, Debug)]
pub(crate) struct Capture {
    // Read by the unit tests only; the run names captures and checks by their Probe.
    #[cfg_attr(not(test), allow(dead_code))]
    name: String,
    // Read by the unit tests only; the run names captures and checks by their Probe.
    #[cfg_attr(not(test), allow(dead_code))]
    to_pool: bool,
    extractor: Extractor,
}

impl Capture {
    /// compile validates `spec` and compiles its path or pattern; errors name fields under
    /// `field_prefix` (e.g. `scenarios[0].flow.sequences[1].steps[2].captures[0].path`).
    pub(crate) fn compile(spec: &CaptureSpec, field_prefix: &str) -> Result<Capture, Vec<PlanError>> {
        let mut errors = Vec::new();
        if spec.name.trim().is_empty() {
            errors.push(PlanError::new(format!("{field_prefix}.name"), "must not be empty"));
        }
        let extractor = match &spec.source {
            CaptureSource::Json { path } => match JsonPath::parse(path) {
                Ok(path) => Some(Extractor::Json(path)),
                Err(message) => {
                    errors.push(PlanError::new(format!("{field_prefix}.path"), message));
                    None
                }
            },
            CaptureSource::Header { header } => match check_header_name(header) {
                Ok(()) => Some(Extractor::Header(header.clone())),
                Err(message) => {
                    errors.push(PlanError::new(format!("{field_prefix}.header"), message));
                    None
                }
            },
            CaptureSource::Regex { pattern, group } => match compile_regex(pattern) {
                Ok(regex) => {
                    let groups = regex.captures_len();
                    match usize::try_from(*group) {
                        Ok(group) if group < groups => Some(Extractor::Regex { regex, group }),
                        _ => {
                            let message =
                                format!("group {group} does not exist: the pattern has {} group(s)", groups - 1);
                            errors.push(PlanError::new(format!("{field_prefix}.group"), message));
                            None
                        }
                    }
                }
                Err(message) => {
                    errors.push(PlanError::new(format!("{field_prefix}.pattern"), message));
                    None
                }
            },
        };
        match extractor {
            Some(extractor) if errors.is_empty() => {
                Ok(Capture { name: spec.name.clone(), to_pool: spec.to_pool, extractor })
            }
            _ => Err(errors),
        }
    }

    /// name is the VU variable set, or the pool appended to when [`Capture::to_pool`].
    #[cfg(test)]
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// to_pool tells whether the value is appended to a pool rather than set on the VU.
    #[cfg(test)]
    pub(crate) fn to_pool(&self) -> bool {
        self.to_pool
    }

    /// needs_body tells whether extracting reads the body, so the parser must retain it.
    pub(crate) fn needs_body(&self) -> bool {
        matches!(self.extractor, Extractor::Json(_) | Extractor::Regex { .. })
    }

    /// needs_head tells whether extracting reads the headers, so the parser must retain them.
    pub(crate) fn needs_head(&self) -> bool {
        matches!(self.extractor, Extractor::Header(_))
    }

    /// extract clears `out`, writes the captured value into it and returns true, or returns
    /// false with `out` empty when the value is absent. JSON strings are written unquoted;
    /// numbers, booleans and null as their JSON text; objects and arrays as compact JSON.
    /// Header values are trimmed; regex groups are written as matched.
    pub(crate) fn extract(&self, resp: &ResponseView<'_>, json: &mut JsonCache, out: &mut Vec<u8>) -> bool {
        out.clear();
        match &self.extractor {
            Extractor::Json(path) => match json.get(resp.body).and_then(|doc| path.find(doc)) {
                Some(value) => write_json_text(value, out),
                None => false,
            },
            Extractor::Header(name) => match resp.header(name) {
                Some(value) => {
                    out.extend_from_slice(value);
                    true
                }
                None => false,
            },
            Extractor::Regex { regex, group } => {
                let found = if *group == 0 {
                    regex.find(resp.body)
                } else {
                    regex.captures(resp.body).and_then(|caps| caps.get(*group))
                };
                match found {
                    Some(m) => {
                        out.extend_from_slice(m.as_bytes());
                        true
                    }
                    None => false,
                }
            }
        }
    }
}

/// write_json_text writes `value` as a captured value: strings unquoted, anything else as
/// compact JSON. Returns false (with `out` cleared) only if serialization failed.
fn write_json_text(value: &Value, out: &mut Vec<u8>) -> bool {
    match value {
        Value::String(s) => {
            out.extend_from_slice(s.as_bytes());
            true
        }
        other => {
            let ok = serde_json::to_writer(&mut *out, other).is_ok();
            if !ok {
                out.clear();
            }
            ok
        }
    }
}

/// compile_regex compiles a body pattern, turning the regex crate's error into a message.
pub(crate) fn compile_regex(pattern: &str) -> Result<Regex, String> {
    Regex::new(pattern).map_err(|e| format!("invalid regular expression: {e}"))
}

/// check_header_name accepts a non-empty HTTP token (RFC 9110 field-name characters).
pub(crate) fn check_header_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("must not be empty".to_string());
    }
    match name.chars().find(|&c| !(c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c))) {
        Some(c) => Err(format!("{c:?} cannot appear in a header name {name:?}")),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PREFIX: &str = "scenarios[0].flow.sequences[1].steps[2].captures[0]";

    fn spec(json: &str) -> Result<CaptureSpec, String> {
        serde_json::from_str(json).map_err(|e| e.to_string())
    }

    #[test]
    fn specs_deserialize_from_the_documented_shapes() {
        let cases: &[(&str, CaptureSpec)] = &[
            (
                r#"{"name": "user_id", "from": "json", "path": "$.data.id"}"#,
                CaptureSpec {
                    name: "user_id".into(),
                    to_pool: false,
                    source: CaptureSource::Json { path: "$.data.id".into() },
                },
            ),
            (
                r#"{"from": "header", "name": "next", "header": "Location", "to_pool": false}"#,
                CaptureSpec {
                    name: "next".into(),
                    to_pool: false,
                    source: CaptureSource::Header { header: "Location".into() },
                },
            ),
            (
                r#"{"name": "ids", "to_pool": true, "from": "regex", "pattern": "id=(\\d+)"}"#,
                CaptureSpec {
                    name: "ids".into(),
                    to_pool: true,
                    source: CaptureSource::Regex { pattern: "id=(\\d+)".into(), group: 1 },
                },
            ),
            (
                r#"{"name": "all", "from": "regex", "pattern": "x", "group": 0}"#,
                CaptureSpec {
                    name: "all".into(),
                    to_pool: false,
                    source: CaptureSource::Regex { pattern: "x".into(), group: 0 },
                },
            ),
        ];
        for (json, want) in cases {
            let got = spec(json);
            assert_eq!(got.as_ref(), Ok(want), "{json}");
            // Round trip through the wire shape.
            let again = serde_json::to_string(want).map_err(|e| e.to_string()).and_then(|s| spec(&s));
            assert_eq!(again.as_ref(), Ok(want), "{json}");
        }
    }

    #[test]
    fn specs_with_unknown_or_missing_keys_are_rejected() {
        let cases: &[(&str, &str)] = &[
            (r#"{"name": "a", "from": "json", "path": "$.a", "extra": 1}"#, "unknown field `extra`"),
            (r#"{"name": "a", "from": "json", "header": "X"}"#, "unknown field `header`"),
            (r#"{"name": "a", "from": "header", "header": "X", "group": 1}"#, "unknown field `group`"),
            (r#"{"name": "a", "from": "xml", "path": "/a"}"#, "unknown variant `xml`"),
            (r#"{"name": "a", "path": "$.a"}"#, "missing field `from`"),
            (r#"{"from": "json", "path": "$.a"}"#, "missing field `name`"),
            (r#"{"name": "a", "from": "regex"}"#, "missing field `pattern`"),
            (r#"{"name": "a", "from": "regex", "pattern": "x", "group": -1}"#, "invalid value"),
        ];
        for (json, want) in cases {
            let err = spec(json).err().unwrap_or_default();
            assert!(err.contains(want), "{json}: {err:?}");
        }
    }

    #[test]
    fn invalid_specs_are_reported_per_field() {
        let cases: &[(&str, &[(&str, &str)])] = &[
            (r#"{"name": "", "from": "json", "path": "$.a"}"#, &[(".name", "empty")]),
            (r#"{"name": " ", "from": "json", "path": "$..a"}"#, &[(".name", "empty"), (".path", "recursive")]),
            (r#"{"name": "a", "from": "json", "path": "a.b"}"#, &[(".path", "start with '$'")]),
            (r#"{"name": "a", "from": "header", "header": ""}"#, &[(".header", "empty")]),
            (r#"{"name": "a", "from": "header", "header": "X Id"}"#, &[(".header", "' '")]),
            (r#"{"name": "a", "from": "regex", "pattern": "id=(\\d+"}"#, &[(".pattern", "invalid regular expression")]),
            (r#"{"name": "a", "from": "regex", "pattern": "id=\\d+"}"#, &[(".group", "has 0 group(s)")]),
            (r#"{"name": "a", "from": "regex", "pattern": "(a)(b)", "group": 3}"#, &[(".group", "group 3")]),
        ];
        for (json, want) in cases {
            let spec = spec(json).unwrap_or_else(|e| panic!("{json}: {e}"));
            let errors = Capture::compile(&spec, PREFIX).err().unwrap_or_default();
            assert_eq!(errors.len(), want.len(), "{json}: {errors:?}");
            for (error, (field, message)) in errors.iter().zip(want.iter()) {
                assert_eq!(error.field, format!("{PREFIX}{field}"), "{json}");
                assert!(error.message.contains(message), "{json}: {}", error.message);
            }
        }
    }

    #[test]
    fn extract_takes_values_from_each_source() {
        let head = b"HTTP/1.1 200 OK\r\nLocation:  /items/42 \r\nX-Dup: first\r\nX-Dup: second\r\n\r\n";
        let body = br#"{"id": 42, "name": "caf\u00e9", "ok": true, "none": null, "pi": 3.5,
            "tags": ["a", "b"], "obj": {"k": [1, {"z": "y"}]}, "link": "/next?id=77&x=1"}"#;
        let resp = ResponseView { status: 200, head, body, latency_ns: 1 };
        let cases: &[(&str, Option<&str>)] = &[
            (r#"{"name": "v", "from": "json", "path": "$.id"}"#, Some("42")),
            (r#"{"name": "v", "from": "json", "path": "$.name"}"#, Some("café")),
            (r#"{"name": "v", "from": "json", "path": "$.ok"}"#, Some("true")),
            (r#"{"name": "v", "from": "json", "path": "$.none"}"#, Some("null")),
            (r#"{"name": "v", "from": "json", "path": "$.pi"}"#, Some("3.5")),
            (r#"{"name": "v", "from": "json", "path": "$.tags"}"#, Some(r#"["a","b"]"#)),
            (r#"{"name": "v", "from": "json", "path": "$.obj"}"#, Some(r#"{"k":[1,{"z":"y"}]}"#)),
            (r#"{"name": "v", "from": "json", "path": "$.tags[-1]"}"#, Some("b")),
            (r#"{"name": "v", "from": "json", "path": "$.missing"}"#, None),
            (r#"{"name": "v", "from": "header", "header": "location"}"#, Some("/items/42")),
            (r#"{"name": "v", "from": "header", "header": "X-Dup"}"#, Some("first")),
            (r#"{"name": "v", "from": "header", "header": "ETag"}"#, None),
            (r#"{"name": "v", "from": "regex", "pattern": "id=(\\d+)"}"#, Some("77")),
            (r#"{"name": "v", "from": "regex", "pattern": "id=(\\d+)&(x)=", "group": 2}"#, Some("x")),
            (r#"{"name": "v", "from": "regex", "pattern": "id=\\d+", "group": 0}"#, Some("id=77")),
            (r#"{"name": "v", "from": "regex", "pattern": "(a)|(zzz)", "group": 2}"#, None),
            (r#"{"name": "v", "from": "regex", "pattern": "nomatch(\\d)"}"#, None),
        ];
        let mut json = JsonCache::new();
        let mut out = b"stale".to_vec();
        for (spec_json, want) in cases {
            let capture = spec(spec_json)
                .map_err(|e| vec![PlanError::new("spec", e)])
                .and_then(|s| Capture::compile(&s, PREFIX))
                .unwrap_or_else(|e| panic!("{spec_json}: {e:?}"));
            let found = capture.extract(&resp, &mut json, &mut out);
            assert_eq!(found, want.is_some(), "{spec_json}");
            assert_eq!(out, want.unwrap_or("").as_bytes(), "{spec_json}");
        }
    }

    #[test]
    fn json_capture_on_a_non_json_body_finds_nothing() {
        let resp = ResponseView { status: 200, head: b"", body: b"<html>", latency_ns: 1 };
        let spec = CaptureSpec { name: "v".into(), to_pool: false, source: CaptureSource::Json { path: "$".into() } };
        let capture = Capture::compile(&spec, PREFIX).unwrap_or_else(|e| panic!("{e:?}"));
        let mut out = Vec::new();
        assert!(!capture.extract(&resp, &mut JsonCache::new(), &mut out));
        assert!(out.is_empty());
    }

    #[test]
    fn accessors_say_what_to_retain() {
        let cases: &[(CaptureSource, bool, bool)] = &[
            (CaptureSource::Json { path: "$.a".into() }, true, false),
            (CaptureSource::Header { header: "Location".into() }, false, true),
            (CaptureSource::Regex { pattern: "(a)".into(), group: 1 }, true, false),
        ];
        for (source, body, head) in cases {
            let spec = CaptureSpec { name: "pool".into(), to_pool: true, source: source.clone() };
            let capture = Capture::compile(&spec, PREFIX).unwrap_or_else(|e| panic!("{e:?}"));
            assert_eq!((capture.needs_body(), capture.needs_head()), (*body, *head), "{source:?}");
            assert_eq!((capture.name(), capture.to_pool()), ("pool", true));
        }
    }
}
