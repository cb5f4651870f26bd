//! target: where requests go, parsed from a URL and resolved once before the run.

use std::net::{SocketAddr, ToSocketAddrs};

use serde::{Deserialize, Serialize};

use crate::spec::plan_error::PlanError;

/// TargetSpec is the target as a user gives it.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetSpec {
    /// url is an absolute `http://` or `https://` URL.
    pub url: String,
    /// insecure skips TLS certificate verification.
    #[serde(default)]
    pub insecure: bool,
    /// http2 speaks HTTP/2 to the target (h2 by ALPN over `https://`, h2c with prior
    /// knowledge over `http://`), several VUs' streams on each connection; None: HTTP/1.1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http2: Option<Http2Spec>,
}

/// Http2Spec is how HTTP/2 connections are shared.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Http2Spec {
    /// streams is the most requests one connection carries at once: each connection serves
    /// this many VUs (closed model) or in-flight requests (open model).
    pub streams: u32,
}

/// MAX_STREAMS bounds `http2.streams` (servers advertise 100 to 256 concurrent streams).
pub(crate) const MAX_STREAMS: u32 = 1000;

/// Target is a parsed URL: scheme, host, port and the request target (path and query).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// tls is true for `https`.
    pub tls: bool,
    /// host is the host name or address, without brackets for IPv6.
    pub host: String,
    /// port is the explicit port or the scheme's default.
    pub port: u16,
    /// path_and_query is the origin-form request target, at least `/`.
    pub path_and_query: String,
    /// host_header is the value of the Host header (`host[:port]`, port only if not default).
    pub host_header: String,
}

impl TargetSpec {
    /// validate pushes an error if the URL cannot be parsed.
    pub fn validate(&self, errors: &mut Vec<PlanError>) {
        if let Err(message) = Target::parse(&self.url) {
            errors.push(PlanError::new("target.url", message));
        }
        if let Some(http2) = self.http2 {
            if !(1..=MAX_STREAMS).contains(&http2.streams) {
                errors.push(PlanError::new(
                    "target.http2.streams",
                    format!("must be from 1 to {MAX_STREAMS}, got {}", http2.streams),
                ));
            }
        }
    }
}

impl Target {
    /// parse parses an absolute http(s) URL; the error says what is wrong with it.
    pub fn parse(url: &str) -> Result<Target, String> {
        let (tls, rest) = if let Some(rest) = strip_prefix_ignore_case(url, "http://") {
            (false, rest)
        } else if let Some(rest) = strip_prefix_ignore_case(url, "https://") {
            (true, rest)
        } else {
            return Err(format!("'{url}' must start with http:// or https://"));
        };
        let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let (authority, tail) = rest.split_at(authority_end);
        let tail = tail.split('#').next().unwrap_or("");
        if authority.contains('@') {
            return Err(format!("'{url}': credentials in the URL are not supported; use a header"));
        }
        let default_port = if tls { 443 } else { 80 };
        let (host, port) = split_host_port(authority, default_port).map_err(|e| format!("'{url}': {e}"))?;
        if host.is_empty() {
            return Err(format!("'{url}' has no host"));
        }
        if host.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(format!("'{url}': host contains whitespace"));
        }
        let path_and_query = match tail {
            "" => "/".to_string(),
            t if t.starts_with('?') => format!("/{t}"),
            t => t.to_string(),
        };
        if path_and_query.bytes().any(|b| b <= b' ' || b == 0x7f) {
            return Err(format!("'{url}': path contains spaces or control characters; percent-encode them"));
        }
        let host_header = match (port == default_port, host.contains(':')) {
            (true, false) => host.clone(),
            (true, true) => format!("[{host}]"),
            (false, false) => format!("{host}:{port}"),
            (false, true) => format!("[{host}]:{port}"),
        };
        Ok(Target { tls, host, port, path_and_query, host_header })
    }

    /// resolve looks the host up once (getaddrinfo) and returns its addresses.
    pub fn resolve(&self) -> std::io::Result<Vec<SocketAddr>> {
        let addrs: Vec<SocketAddr> = (self.host.as_str(), self.port).to_socket_addrs()?.collect();
        if addrs.is_empty() {
            return Err(std::io::Error::new(std::io::ErrorKind::NotFound, "host has no addresses"));
        }
        Ok(addrs)
    }
}

fn strip_prefix_ignore_case<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    let head = s.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix).then(|| &s[prefix.len()..])
}

fn split_host_port(authority: &str, default_port: u16) -> Result<(String, u16), String> {
    let (host, port) = if let Some(rest) = authority.strip_prefix('[') {
        let end = rest.find(']').ok_or("unclosed '[' in IPv6 address")?;
        let after = &rest[end + 1..];
        let port = match after.strip_prefix(':') {
            Some(p) => Some(p),
            None if after.is_empty() => None,
            None => return Err("unexpected characters after IPv6 address".into()),
        };
        (rest[..end].to_string(), port)
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h.to_string(), Some(p)),
            None => (authority.to_string(), None),
        }
    };
    let port = match port {
        None => default_port,
        Some(p) => match p.parse::<u16>() {
            Ok(0) | Err(_) => return Err(format!("invalid port '{p}' (expected 1-65535)")),
            Ok(n) => n,
        },
    };
    Ok((host.to_ascii_lowercase(), port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_parse() {
        let cases = [
            ("http://127.0.0.1:8080/health", false, "127.0.0.1", 8080, "/health", "127.0.0.1:8080"),
            ("https://Example.com", true, "example.com", 443, "/", "example.com"),
            ("http://localhost?x=1", false, "localhost", 80, "/?x=1", "localhost"),
            ("http://[::1]:9000/a?b#frag", false, "::1", 9000, "/a?b", "[::1]:9000"),
            ("HTTP://h:80/", false, "h", 80, "/", "h"),
        ];
        for (url, tls, host, port, path, host_header) in cases {
            let t = Target::parse(url).unwrap_or_else(|e| panic!("{url}: {e}"));
            assert_eq!(
                (t.tls, t.host.as_str(), t.port, t.path_and_query.as_str(), t.host_header.as_str()),
                (tls, host, port, path, host_header),
                "{url}"
            );
        }
    }

    #[test]
    fn bad_urls_say_why() {
        let cases = [
            ("ftp://x/", "must start with http"),
            ("http:///path", "no host"),
            ("http://:8080/", "no host"),
            ("http://h:0/", "invalid port"),
            ("http://h:99999/", "invalid port"),
            ("http://h:x/", "invalid port"),
            ("http://[::1/", "unclosed"),
            ("http://u:p@h/", "credentials"),
            ("http://h/a b", "percent-encode"),
            ("127.0.0.1:8080", "must start with http"),
        ];
        for (url, needle) in cases {
            let err = Target::parse(url).err().unwrap_or_default();
            assert!(err.contains(needle), "{url}: {err}");
        }
    }
}
