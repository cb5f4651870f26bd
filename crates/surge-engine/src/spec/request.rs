//! request: the request an iteration sends, serialized once into the bytes every
//! connection writes (each connection only tracks how much of them it has written).

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

use crate::spec::plan_error::PlanError;
use crate::spec::target::Target;
use crate::spec::template::Template;

/// RequestBytes is a step's request made ready to send: serialized once when it has no
/// template slots, else a template rendered per request into the connection's buffer.
#[derive(Clone, Debug)]
pub enum RequestBytes {
    /// Static bytes shared by every VU.
    Static(Box<[u8]>),
    /// Template: rendered for each request.
    Template(RequestTemplate),
}

/// RequestTemplate is a request whose path, header values or body hold slots.
#[derive(Clone, Debug)]
pub struct RequestTemplate {
    /// line is the request line (with its CRLF).
    line: Template,
    /// headers are the header lines, without Content-Length and the blank line.
    headers: Template,
    /// body is the body template, if the request has or expects one.
    body: Option<Template>,
}

/// escape_target percent-encodes what a value may not put into a request target (spaces,
/// controls, non-ASCII), so that a captured or drawn value cannot break the request line.
fn escape_target(value: &[u8], out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    for &b in value {
        if b.is_ascii_graphic() {
            out.push(b);
        } else {
            out.extend_from_slice(&[b'%', HEX[usize::from(b >> 4)], HEX[usize::from(b & 15)]]);
        }
    }
}

/// escape_header replaces line breaks and NULs in a header value with spaces, so that a
/// value cannot end its header line and inject another.
fn escape_header(value: &[u8], out: &mut Vec<u8>) {
    out.extend(value.iter().map(|&b| if b == b'\r' || b == b'\n' || b == 0 { b' ' } else { b }));
}

impl RequestTemplate {
    /// render writes the request for these slot values into `out` (cleared first).
    pub fn render(&self, values: &[Vec<u8>], out: &mut Vec<u8>) {
        out.clear();
        self.line.render_escaped(values, out, escape_target);
        self.headers.render_escaped(values, out, escape_header);
        if let Some(body) = &self.body {
            let length = body.rendered_len(values);
            out.extend_from_slice(b"Content-Length: ");
            out.extend_from_slice(itoa::Buffer::new().format(length).as_bytes());
            out.extend_from_slice(b"\r\n\r\n");
            body.render(values, out);
        } else {
            out.extend_from_slice(b"\r\n");
        }
    }
}

/// RequestSpec is the request as the user describes it.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequestSpec {
    /// method is the HTTP method (default GET).
    #[serde(default = "default_method")]
    pub method: String,
    /// path is the request target (path and query); default: the target URL's.
    #[serde(default)]
    pub path: Option<String>,
    /// headers are sent in order; Host and User-Agent are added unless given.
    #[serde(default)]
    pub headers: Vec<(String, String)>,
    /// body is a text body.
    #[serde(default)]
    pub body: Option<String>,
    /// body_base64 is a binary body, base64-encoded (exclusive with `body`).
    #[serde(default)]
    pub body_base64: Option<String>,
}

fn default_method() -> String {
    "GET".to_string()
}

impl Default for RequestSpec {
    fn default() -> Self {
        RequestSpec { method: default_method(), path: None, headers: Vec::new(), body: None, body_base64: None }
    }
}

/// USER_AGENT is sent unless the request sets its own.
pub(crate) const USER_AGENT: &str = concat!("surge/", env!("CARGO_PKG_VERSION"));

fn is_token(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

impl RequestSpec {
    /// validate pushes an error for a bad method, path, header or body, under `field`.
    pub fn validate(&self, field: &str, errors: &mut Vec<PlanError>) {
        if !is_token(&self.method) {
            errors.push(PlanError::new(
                format!("{field}.method"),
                format!("'{}' is not a valid HTTP method", self.method),
            ));
        }
        if let Some(path) = &self.path {
            // A path may be all template (e.g. a captured Location): it must then render to
            // a path, which the server will judge.
            if !(path.starts_with('/') || path.starts_with("{{"))
                || path.bytes().any(|b| b.is_ascii_control() || b == b' ')
            {
                errors.push(PlanError::new(
                    format!("{field}.path"),
                    format!("'{path}' must start with '/' (or a template) and hold no spaces or control characters (percent-encode them)"),
                ));
            }
        }
        for (i, (name, value)) in self.headers.iter().enumerate() {
            if !is_token(name) {
                errors.push(PlanError::new(
                    format!("{field}.headers[{i}]"),
                    format!("'{name}' is not a valid header name"),
                ));
            }
            if value.bytes().any(|b| b == b'\r' || b == b'\n' || b == 0) {
                errors.push(PlanError::new(
                    format!("{field}.headers[{i}]"),
                    format!("value of '{name}' contains a line break"),
                ));
            }
            if name.eq_ignore_ascii_case("content-length") || name.eq_ignore_ascii_case("transfer-encoding") {
                errors.push(PlanError::new(
                    format!("{field}.headers[{i}]"),
                    format!("'{name}' is set by surge from the body"),
                ));
            }
        }
        if self.body().is_err() {
            errors.push(PlanError::new(format!("{field}.body_base64"), "is not valid base64"));
        }
        if self.body.is_some() && self.body_base64.is_some() {
            errors.push(PlanError::new(format!("{field}.body"), "give either body or body_base64, not both"));
        }
    }

    /// body decodes the body (empty if none).
    pub fn body(&self) -> Result<Vec<u8>, base64::DecodeError> {
        match (&self.body, &self.body_base64) {
            (Some(text), _) => Ok(text.as_bytes().to_vec()),
            (None, None) => Ok(Vec::new()),
            (None, Some(b64)) => base64::engine::general_purpose::STANDARD.decode(b64),
        }
    }

    /// default_tag names a step without a tag: its method and path (without the query).
    pub fn default_tag(&self, target: &Target) -> String {
        let path = self.path.as_deref().unwrap_or(&target.path_and_query);
        let path = path.split('?').next().unwrap_or(path);
        format!("{} {path}", self.method.to_ascii_uppercase())
    }

    /// is_head tells whether the method is HEAD (whose responses carry no body).
    pub fn is_head(&self) -> bool {
        self.method.eq_ignore_ascii_case("HEAD")
    }

    /// compile prepares the request for `target`, resolving template names against
    /// `names` (the VU's value slots, in order); errors name the field under `field`.
    pub fn compile(&self, target: &Target, field: &str, names: &[String]) -> Result<RequestBytes, Vec<PlanError>> {
        let mut errors = Vec::new();
        let mut parse = |text: &str, at: String| match Template::parse_names(text, names) {
            Ok(t) => Some(t),
            Err(message) => {
                errors.push(PlanError::new(at, message));
                None
            }
        };
        let path = self.path.as_deref().unwrap_or(&target.path_and_query);
        let path_t = parse(path, format!("{field}.path"));
        let header_ts: Vec<Option<Template>> =
            self.headers.iter().enumerate().map(|(i, (_, v))| parse(v, format!("{field}.headers[{i}]"))).collect();
        let body_t = self.body.as_deref().map(|b| parse(b, format!("{field}.body")));
        if !errors.is_empty() {
            return Err(errors);
        }
        let is_static = path_t.as_ref().is_some_and(Template::is_static)
            && header_ts.iter().all(|t| t.as_ref().is_some_and(Template::is_static))
            && body_t.as_ref().is_none_or(|b| b.as_ref().is_some_and(Template::is_static));
        if is_static {
            return self.serialize(target).map(|b| RequestBytes::Static(b.into_boxed_slice())).map_err(|e| vec![e]);
        }
        // The head is two templates: the request line and the headers, literal around the
        // user's templated path and header values (method and names are validated tokens).
        let line = format!("{} {path} HTTP/1.1\r\n", self.method);
        let mut head = String::with_capacity(128);
        let has = |n: &str| self.headers.iter().any(|(name, _)| name.eq_ignore_ascii_case(n));
        if !has("host") {
            let _ = write!(head, "Host: {}\r\n", target.host_header);
        }
        if !has("user-agent") {
            let _ = write!(head, "User-Agent: {USER_AGENT}\r\n");
        }
        for (name, value) in &self.headers {
            let _ = write!(head, "{name}: {value}\r\n");
        }
        let line = Template::parse_names(&line, names).map_err(|m| vec![PlanError::new(format!("{field}.path"), m)])?;
        let headers =
            Template::parse_names(&head, names).map_err(|m| vec![PlanError::new(format!("{field}.headers"), m)])?;
        let body = match (&self.body, &self.body_base64) {
            (Some(text), _) => {
                Some(Template::parse_names(text, names).map_err(|m| vec![PlanError::new(format!("{field}.body"), m)])?)
            }
            (None, Some(_)) => {
                let bytes = self
                    .body()
                    .map_err(|_| vec![PlanError::new(format!("{field}.body_base64"), "is not valid base64")])?;
                // A binary body has no slots: its bytes go in as they are.
                Some(Template::literal_bytes(bytes))
            }
            (None, None) if self.method_expects_body() => Some(Template::literal_bytes(Vec::new())),
            (None, None) => None,
        };
        Ok(RequestBytes::Template(RequestTemplate { line, headers, body }))
    }

    fn method_expects_body(&self) -> bool {
        !matches!(self.method.to_ascii_uppercase().as_str(), "GET" | "HEAD" | "DELETE" | "OPTIONS" | "TRACE")
    }

    /// serialize builds the request's bytes for `target`, once per run.
    pub fn serialize(&self, target: &Target) -> Result<Vec<u8>, PlanError> {
        let body = self.body().map_err(|_| PlanError::new("request.body_base64", "is not valid base64"))?;
        let path = self.path.as_deref().unwrap_or(&target.path_and_query);
        let mut out = Vec::with_capacity(128 + body.len());
        out.extend_from_slice(self.method.as_bytes());
        out.push(b' ');
        out.extend_from_slice(path.as_bytes());
        out.extend_from_slice(b" HTTP/1.1\r\n");
        let has = |n: &str| self.headers.iter().any(|(name, _)| name.eq_ignore_ascii_case(n));
        if !has("host") {
            push_header(&mut out, "Host", &target.host_header);
        }
        if !has("user-agent") {
            push_header(&mut out, "User-Agent", USER_AGENT);
        }
        for (name, value) in &self.headers {
            push_header(&mut out, name, value);
        }
        if !body.is_empty() || self.method_expects_body() {
            push_header(&mut out, "Content-Length", &body.len().to_string());
        }
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(&body);
        Ok(out)
    }
}

fn push_header(out: &mut Vec<u8>, name: &str, value: &str) {
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b": ");
    out.extend_from_slice(value.as_bytes());
    out.extend_from_slice(b"\r\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target() -> Target {
        Target::parse("http://127.0.0.1:8080/tasks?x=1").unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn get_request_bytes() {
        let spec =
            RequestSpec { method: "GET".into(), headers: vec![("Accept".into(), "*/*".into())], ..Default::default() };
        let bytes = spec.serialize(&target()).unwrap_or_default();
        let expected = format!(
            "GET /tasks?x=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: {USER_AGENT}\r\nAccept: */*\r\n\r\n"
        );
        assert_eq!(String::from_utf8_lossy(&bytes), expected);
    }

    #[test]
    fn post_with_body_and_overridden_host() {
        let body = base64::engine::general_purpose::STANDARD.encode(b"{\"a\":1}");
        let spec = RequestSpec {
            method: "POST".into(),
            headers: vec![("Host".into(), "api".into()), ("User-Agent".into(), "me".into())],
            body_base64: Some(body),
            ..Default::default()
        };
        let text = String::from_utf8(spec.serialize(&target()).unwrap_or_default()).unwrap_or_default();
        assert_eq!(
            text,
            "POST /tasks?x=1 HTTP/1.1\r\nHost: api\r\nUser-Agent: me\r\nContent-Length: 7\r\n\r\n{\"a\":1}"
        );
    }

    #[test]
    fn empty_post_sends_zero_length() {
        let spec = RequestSpec { method: "POST".into(), ..Default::default() };
        let text = String::from_utf8(spec.serialize(&target()).unwrap_or_default()).unwrap_or_default();
        assert!(text.contains("Content-Length: 0\r\n"), "{text}");
    }

    #[test]
    fn templated_values_cannot_break_the_request_head() {
        let spec = RequestSpec {
            method: "POST".into(),
            path: Some("/tasks/{{id}}".into()),
            headers: vec![("X-Token".into(), "t={{token}}".into())],
            body: Some("{\"n\": \"{{id}}\"}".into()),
            ..Default::default()
        };
        let names = vec!["id".to_string(), "token".to_string()];
        let Ok(RequestBytes::Template(template)) = spec.compile(&target(), "request", &names) else {
            panic!("templated")
        };
        let mut out = Vec::new();
        template.render(&[b"a b\r\nc".to_vec(), b"x\r\nEvil: 1".to_vec()], &mut out);
        let text = String::from_utf8(out).unwrap_or_default();
        assert_eq!(
            text,
            format!(
                "POST /tasks/a%20b%0D%0Ac HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: {USER_AGENT}\r\nX-Token: t=x  Evil: 1\r\nContent-Length: 15\r\n\r\n{{\"n\": \"a b\r\nc\"}}"
            )
        );
    }

    #[test]
    fn invalid_specs_are_reported() {
        let spec = RequestSpec {
            method: "GE T".into(),
            path: Some("tasks".into()),
            headers: vec![("X".into(), "a\r\nb".into()), ("Content-Length".into(), "3".into())],
            body_base64: Some("!!!".into()),
            body: None,
        };
        let mut errors = Vec::new();
        spec.validate("request", &mut errors);
        assert_eq!(errors.len(), 5, "{errors:?}");
        assert_eq!(errors[1].field, "request.path");
    }
}
