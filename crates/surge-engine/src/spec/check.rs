//! check: a named pass/fail test of one response (status, body text or pattern, a JSON
//! value, a header, latency), compiled once and evaluated without failing.
//!
//! The plan carries each check as one flat JSON object; `type` says which test and no other
//! keys than those shown are accepted:
//!
//! ```json
//! {"name": "created", "type": "status", "in": [200, 201]}
//! {"name": "greets", "type": "body_contains", "text": "hello"}
//! {"name": "has id", "type": "body_matches", "pattern": "\"id\":\\s*\\d+"}
//! {"name": "is ok", "type": "json_equals", "path": "$.status", "value": "ok"}
//! {"name": "redirects", "type": "header_present", "header": "Location"}
//! {"name": "fast", "type": "latency_under", "ms": 300.0}
//! ```
//!
//! `json_equals` compares numbers by value (`1` equals `1.0`) and everything else exactly;
//! a body that is not JSON, or a path that selects nothing, fails it. `latency_under` passes
//! when the latency is strictly below `ms`.

use crate::http::response::{JsonCache, ResponseView};
use crate::spec::capture::{check_header_name, compile_regex};
use crate::spec::jsonpath::JsonPath;
use crate::spec::plan_error::PlanError;
use memchr::memmem::Finder;
use regex::bytes::Regex;
use serde::{Deserialize, Serialize};
use serde_json::{Number, Value};

/// CheckSpec is one check as the plan states it, before validation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(from = "RawCheckSpec", into = "RawCheckSpec")]
pub struct CheckSpec {
    /// name identifies the check in reports.
    pub name: String,
    /// kind is what the check tests.
    pub kind: CheckKind,
}

/// CheckKind is what a check tests.
#[derive(Clone, Debug, PartialEq)]
pub enum CheckKind {
    /// Status passes when the status code is one of `codes` (`"type": "status"`, `"in"`).
    Status {
        /// codes are the accepted status codes, each within 100..=599.
        codes: Vec<u16>,
    },
    /// BodyContains passes when the body contains `text` (`"type": "body_contains"`).
    BodyContains {
        /// text is searched for as bytes; must not be empty.
        text: String,
    },
    /// BodyMatches passes when `pattern` matches somewhere in the body (`"type": "body_matches"`).
    BodyMatches {
        /// pattern is a regular expression in the `regex` crate's syntax.
        pattern: String,
    },
    /// JsonEquals passes when `path` selects a value equal to `value` (`"type": "json_equals"`).
    JsonEquals {
        /// path is a JSONPath of the supported subset.
        path: String,
        /// value is the expected JSON value.
        value: Value,
    },
    /// HeaderPresent passes when the response has a header `header` (`"type": "header_present"`).
    HeaderPresent {
        /// header is the header name, matched case-insensitively.
        header: String,
    },
    /// LatencyUnder passes when the latency is below `ms` milliseconds (`"type": "latency_under"`).
    LatencyUnder {
        /// ms is the limit in milliseconds; must be positive.
        ms: f64,
    },
}

/// RawCheckSpec is the flat wire shape (see the module doc).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
enum RawCheckSpec {
    Status {
        name: String,
        #[serde(rename = "in")]
        codes: Vec<u16>,
    },
    BodyContains {
        name: String,
        text: String,
    },
    BodyMatches {
        name: String,
        pattern: String,
    },
    JsonEquals {
        name: String,
        path: String,
        value: Value,
    },
    HeaderPresent {
        name: String,
        header: String,
    },
    LatencyUnder {
        name: String,
        ms: f64,
    },
}

impl From<RawCheckSpec> for CheckSpec {
    fn from(raw: RawCheckSpec) -> Self {
        let (name, kind) = match raw {
            RawCheckSpec::Status { name, codes } => (name, CheckKind::Status { codes }),
            RawCheckSpec::BodyContains { name, text } => (name, CheckKind::BodyContains { text }),
            RawCheckSpec::BodyMatches { name, pattern } => (name, CheckKind::BodyMatches { pattern }),
            RawCheckSpec::JsonEquals { name, path, value } => (name, CheckKind::JsonEquals { path, value }),
            RawCheckSpec::HeaderPresent { name, header } => (name, CheckKind::HeaderPresent { header }),
            RawCheckSpec::LatencyUnder { name, ms } => (name, CheckKind::LatencyUnder { ms }),
        };
        CheckSpec { name, kind }
    }
}

impl From<CheckSpec> for RawCheckSpec {
    fn from(spec: CheckSpec) -> Self {
        let CheckSpec { name, kind } = spec;
        match kind {
            CheckKind::Status { codes } => RawCheckSpec::Status { name, codes },
            CheckKind::BodyContains { text } => RawCheckSpec::BodyContains { name, text },
            CheckKind::BodyMatches { pattern } => RawCheckSpec::BodyMatches { name, pattern },
            CheckKind::JsonEquals { path, value } => RawCheckSpec::JsonEquals { name, path, value },
            CheckKind::HeaderPresent { header } => RawCheckSpec::HeaderPresent { name, header },
            CheckKind::LatencyUnder { ms } => RawCheckSpec::LatencyUnder { name, ms },
        }
    }
}

/// Test is a compiled check kind.
#[derive(Clone, Debug)]
enum Test {
    Status(Vec<u16>),
    /// Boxed: a Finder is ~300 bytes, the other variants under 100.
    BodyContains(Box<Finder<'static>>),
    BodyMatches(Regex),
    JsonEquals {
        path: JsonPath,
        value: Value,
    },
    HeaderPresent(String),
    LatencyUnder {
        limit_ns: u64,
    },
}

/// Check is a validated, compiled check; [`Check::evaluate`] cannot fail, only not pass.
#[derive(Clone, Debug)]
pub(crate) struct Check {
    // Read by the unit tests only; the run names captures and checks by their Probe.
    #[cfg_attr(not(test), allow(dead_code))]
    name: String,
    test: Test,
}

impl Check {
    /// compile validates `spec` and compiles its pattern, path or needle; errors name fields
    /// under `field_prefix` (e.g. `scenarios[0].flow.sequences[1].steps[2].checks[0].in`).
    pub(crate) fn compile(spec: &CheckSpec, field_prefix: &str) -> Result<Check, Vec<PlanError>> {
        let mut errors = Vec::new();
        if spec.name.trim().is_empty() {
            errors.push(PlanError::new(format!("{field_prefix}.name"), "must not be empty"));
        }
        let mut fail = |field: &str, message: String| {
            errors.push(PlanError::new(format!("{field_prefix}.{field}"), message));
            None
        };
        let test = match &spec.kind {
            CheckKind::Status { codes } => {
                let mut ok = true;
                if codes.is_empty() {
                    ok = false;
                    fail("in", "must list at least one status code".to_string());
                }
                for (i, code) in codes.iter().enumerate() {
                    if !(100..=599).contains(code) {
                        ok = false;
                        fail(&format!("in[{i}]"), format!("must be a status code from 100 to 599, got {code}"));
                    }
                }
                ok.then(|| Test::Status(codes.clone()))
            }
            CheckKind::BodyContains { text } if text.is_empty() => fail("text", "must not be empty".to_string()),
            CheckKind::BodyContains { text } => {
                Some(Test::BodyContains(Box::new(Finder::new(text.as_bytes()).into_owned())))
            }
            CheckKind::BodyMatches { pattern } => match compile_regex(pattern) {
                Ok(regex) => Some(Test::BodyMatches(regex)),
                Err(message) => fail("pattern", message),
            },
            CheckKind::JsonEquals { path, value } => match JsonPath::parse(path) {
                Ok(path) => Some(Test::JsonEquals { path, value: value.clone() }),
                Err(message) => fail("path", message),
            },
            CheckKind::HeaderPresent { header } => match check_header_name(header) {
                Ok(()) => Some(Test::HeaderPresent(header.clone())),
                Err(message) => fail("header", message),
            },
            CheckKind::LatencyUnder { ms } if !(ms.is_finite() && *ms > 0.0) => {
                fail("ms", format!("must be a positive number of milliseconds, got {ms}"))
            }
            // Saturating float-to-int cast; `latency < ceil(ms * 1e6)` is `latency < ms` in ns.
            CheckKind::LatencyUnder { ms } => Some(Test::LatencyUnder { limit_ns: (ms * 1e6).ceil() as u64 }),
        };
        match test {
            Some(test) if errors.is_empty() => Ok(Check { name: spec.name.clone(), test }),
            _ => Err(errors),
        }
    }

    /// name identifies the check in reports.
    #[cfg(test)]
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// needs_body tells whether evaluating reads the body, so the parser must retain it.
    pub(crate) fn needs_body(&self) -> bool {
        matches!(self.test, Test::BodyContains(_) | Test::BodyMatches(_) | Test::JsonEquals { .. })
    }

    /// needs_head tells whether evaluating reads the headers, so the parser must retain them.
    pub(crate) fn needs_head(&self) -> bool {
        matches!(self.test, Test::HeaderPresent(_))
    }

    /// evaluate tells whether `resp` passes; `json` parses the body at most once across the
    /// captures and checks of one response.
    pub(crate) fn evaluate(&self, resp: &ResponseView<'_>, json: &mut JsonCache) -> bool {
        match &self.test {
            Test::Status(codes) => codes.contains(&resp.status),
            Test::BodyContains(finder) => finder.find(resp.body).is_some(),
            Test::BodyMatches(regex) => regex.is_match(resp.body),
            Test::JsonEquals { path, value } => {
                json.get(resp.body).and_then(|doc| path.find(doc)).is_some_and(|found| json_equal(found, value))
            }
            Test::HeaderPresent(name) => resp.header(name).is_some(),
            Test::LatencyUnder { limit_ns } => resp.latency_ns < *limit_ns,
        }
    }
}

/// json_equal compares JSON values, numbers by numeric value, everything else exactly.
fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => numbers_equal(x, y),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_equal(a, b)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| json_equal(v, w)))
        }
        _ => a == b,
    }
}

fn numbers_equal(x: &Number, y: &Number) -> bool {
    if let (Some(a), Some(b)) = (x.as_i64(), y.as_i64()) {
        return a == b;
    }
    if let (Some(a), Some(b)) = (x.as_u64(), y.as_u64()) {
        return a == b;
    }
    matches!((x.as_f64(), y.as_f64()), (Some(a), Some(b)) if a == b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const PREFIX: &str = "scenarios[0].flow.sequences[1].steps[2].checks[0]";

    fn compile(json: &str) -> Result<Check, Vec<PlanError>> {
        let spec: CheckSpec = serde_json::from_str(json).map_err(|e| vec![PlanError::new("spec", e.to_string())])?;
        Check::compile(&spec, PREFIX)
    }

    #[test]
    fn specs_deserialize_from_the_documented_shapes() {
        let cases: &[(&str, CheckKind)] = &[
            (r#"{"name": "c", "type": "status", "in": [200, 201]}"#, CheckKind::Status { codes: vec![200, 201] }),
            (r#"{"name": "c", "type": "body_contains", "text": "hi"}"#, CheckKind::BodyContains { text: "hi".into() }),
            (
                r#"{"name": "c", "type": "body_matches", "pattern": "\\d"}"#,
                CheckKind::BodyMatches { pattern: "\\d".into() },
            ),
            (
                r#"{"name": "c", "type": "json_equals", "path": "$.a", "value": {"x": [1, null]}}"#,
                CheckKind::JsonEquals { path: "$.a".into(), value: json!({"x": [1, null]}) },
            ),
            (
                r#"{"name": "c", "type": "header_present", "header": "ETag"}"#,
                CheckKind::HeaderPresent { header: "ETag".into() },
            ),
            (r#"{"name": "c", "type": "latency_under", "ms": 300.0}"#, CheckKind::LatencyUnder { ms: 300.0 }),
            (r#"{"type": "latency_under", "ms": 5, "name": "c"}"#, CheckKind::LatencyUnder { ms: 5.0 }),
        ];
        for (json, kind) in cases {
            let want = CheckSpec { name: "c".into(), kind: kind.clone() };
            let got: Result<CheckSpec, String> = serde_json::from_str(json).map_err(|e| e.to_string());
            assert_eq!(got.as_ref(), Ok(&want), "{json}");
            let again: Result<CheckSpec, String> =
                serde_json::to_string(&want).and_then(|s| serde_json::from_str(&s)).map_err(|e| e.to_string());
            assert_eq!(again.as_ref(), Ok(&want), "{json}");
        }
    }

    #[test]
    fn specs_with_unknown_or_missing_keys_are_rejected() {
        let cases: &[(&str, &str)] = &[
            (r#"{"name": "c", "type": "status", "in": [200], "codes": [1]}"#, "unknown field `codes`"),
            (r#"{"name": "c", "type": "body_contains", "text": "a", "pattern": "b"}"#, "unknown field `pattern`"),
            (r#"{"name": "c", "type": "json_equals", "path": "$.a"}"#, "missing field `value`"),
            (r#"{"name": "c", "type": "latency", "ms": 1}"#, "unknown variant `latency`"),
            (r#"{"name": "c", "in": [200]}"#, "missing field `type`"),
            (r#"{"type": "status", "in": [200]}"#, "missing field `name`"),
            (r#"{"name": "c", "type": "status", "in": [70000]}"#, "invalid value"),
        ];
        for (json, want) in cases {
            let err = serde_json::from_str::<CheckSpec>(json).err().map(|e| e.to_string()).unwrap_or_default();
            assert!(err.contains(want), "{json}: {err:?}");
        }
    }

    #[test]
    fn invalid_specs_are_reported_per_field() {
        let cases: &[(&str, &[(&str, &str)])] = &[
            (r#"{"name": "", "type": "status", "in": [200]}"#, &[(".name", "empty")]),
            (r#"{"name": "c", "type": "status", "in": []}"#, &[(".in", "at least one")]),
            (
                r#"{"name": "c", "type": "status", "in": [200, 99, 600]}"#,
                &[(".in[1]", "got 99"), (".in[2]", "got 600")],
            ),
            (r#"{"name": "", "type": "body_contains", "text": ""}"#, &[(".name", "empty"), (".text", "empty")]),
            (r#"{"name": "c", "type": "body_matches", "pattern": "("}"#, &[(".pattern", "invalid regular expression")]),
            (r#"{"name": "c", "type": "json_equals", "path": "$.a[*]", "value": 1}"#, &[(".path", "wildcards")]),
            (r#"{"name": "c", "type": "header_present", "header": "Bad:Name"}"#, &[(".header", "':'")]),
            (r#"{"name": "c", "type": "header_present", "header": ""}"#, &[(".header", "empty")]),
            (r#"{"name": "c", "type": "latency_under", "ms": 0}"#, &[(".ms", "positive")]),
            (r#"{"name": "c", "type": "latency_under", "ms": -5.5}"#, &[(".ms", "got -5.5")]),
        ];
        for (json, want) in cases {
            let errors = compile(json).err().unwrap_or_default();
            assert_eq!(errors.len(), want.len(), "{json}: {errors:?}");
            for (error, (field, message)) in errors.iter().zip(want.iter()) {
                assert_eq!(error.field, format!("{PREFIX}{field}"), "{json}");
                assert!(error.message.contains(message), "{json}: {}", error.message);
            }
        }
    }

    #[test]
    fn every_kind_passes_and_fails() {
        let head = b"HTTP/1.1 201 Created\r\nLocation: /items/9\r\nContent-Type: application/json\r\n\r\n";
        let body = br#"{"status": "ok", "count": 3, "ratio": 0.5, "items": [{"id": 9}], "none": null}"#;
        let resp = ResponseView { status: 201, head, body, latency_ns: 250_000_000 };
        let cases: &[(&str, bool)] = &[
            (r#"{"name": "c", "type": "status", "in": [200, 201]}"#, true),
            (r#"{"name": "c", "type": "status", "in": [200, 204]}"#, false),
            (r#"{"name": "c", "type": "body_contains", "text": "\"count\": 3"}"#, true),
            (r#"{"name": "c", "type": "body_contains", "text": "\"count\": 4"}"#, false),
            (r#"{"name": "c", "type": "body_matches", "pattern": "\"id\":\\s*\\d+"}"#, true),
            (r#"{"name": "c", "type": "body_matches", "pattern": "^\\["}"#, false),
            (r#"{"name": "c", "type": "json_equals", "path": "$.status", "value": "ok"}"#, true),
            (r#"{"name": "c", "type": "json_equals", "path": "$.status", "value": "OK"}"#, false),
            (r#"{"name": "c", "type": "json_equals", "path": "$.count", "value": 3.0}"#, true),
            (r#"{"name": "c", "type": "json_equals", "path": "$.count", "value": "3"}"#, false),
            (r#"{"name": "c", "type": "json_equals", "path": "$.ratio", "value": 0.5}"#, true),
            (r#"{"name": "c", "type": "json_equals", "path": "$.items", "value": [{"id": 9.0}]}"#, true),
            (r#"{"name": "c", "type": "json_equals", "path": "$.items", "value": [{"id": 9, "x": 1}]}"#, false),
            (r#"{"name": "c", "type": "json_equals", "path": "$.none", "value": null}"#, true),
            (r#"{"name": "c", "type": "json_equals", "path": "$.missing", "value": null}"#, false),
            (r#"{"name": "c", "type": "header_present", "header": "location"}"#, true),
            (r#"{"name": "c", "type": "header_present", "header": "ETag"}"#, false),
            (r#"{"name": "c", "type": "latency_under", "ms": 300.0}"#, true),
            (r#"{"name": "c", "type": "latency_under", "ms": 250}"#, false),
            (r#"{"name": "c", "type": "latency_under", "ms": 250.000001}"#, true),
        ];
        let mut json = JsonCache::new();
        for (spec, want) in cases {
            let check = compile(spec).unwrap_or_else(|e| panic!("{spec}: {e:?}"));
            assert_eq!(check.evaluate(&resp, &mut json), *want, "{spec}");
            assert_eq!(check.name(), "c");
        }
    }

    #[test]
    fn json_check_on_a_non_json_body_fails() {
        let resp = ResponseView { status: 200, head: b"", body: b"not json", latency_ns: 0 };
        let check = compile(r#"{"name": "c", "type": "json_equals", "path": "$", "value": null}"#);
        let passed = check.map(|c| c.evaluate(&resp, &mut JsonCache::new()));
        assert!(matches!(passed, Ok(false)), "{passed:?}");
    }

    #[test]
    fn accessors_say_what_to_retain() {
        let cases: &[(&str, bool, bool)] = &[
            (r#"{"name": "c", "type": "status", "in": [200]}"#, false, false),
            (r#"{"name": "c", "type": "body_contains", "text": "a"}"#, true, false),
            (r#"{"name": "c", "type": "body_matches", "pattern": "a"}"#, true, false),
            (r#"{"name": "c", "type": "json_equals", "path": "$", "value": 1}"#, true, false),
            (r#"{"name": "c", "type": "header_present", "header": "A"}"#, false, true),
            (r#"{"name": "c", "type": "latency_under", "ms": 1}"#, false, false),
        ];
        for (spec, body, head) in cases {
            let check = compile(spec).unwrap_or_else(|e| panic!("{spec}: {e:?}"));
            assert_eq!((check.needs_body(), check.needs_head()), (*body, *head), "{spec}");
        }
    }
}
