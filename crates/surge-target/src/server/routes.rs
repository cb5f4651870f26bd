//! Routing and the handlers that compute a response (waiting is the connection's job).
use serde_json::{json, Map, Value};
use std::fmt::Write as _;

use crate::server::shared::Shared;
use crate::server::store::{Task, Touch};
use crate::stats::counters::Route;

/// DEFAULT_LIMIT is the page size of `GET /tasks` without `limit`.
pub const DEFAULT_LIMIT: usize = 100;
/// MAX_LIMIT is the largest `limit` accepted by `GET /tasks`.
pub const MAX_LIMIT: usize = 1000;
/// MAX_DELAY_MS is the longest `/delay/{ms}` accepted (one hour).
pub const MAX_DELAY_MS: u64 = 3_600_000;

/// JSON is the content type of every JSON body.
pub const JSON: &str = "application/json";
/// TEXT is the content type of plain-text bodies.
pub const TEXT: &str = "text/plain";

/// Reply is a computed response: status, body and at most one extra header.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// status is the status code.
    pub status: u16,
    /// content_type is the body's media type.
    pub content_type: &'static str,
    /// body is the response body.
    pub body: Body,
    /// header is an extra header line (`Location`, `Retry-After` or `Allow`).
    pub header: Option<(&'static str, String)>,
}

/// Body is a response body, borrowed from the store when it can be.
#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    /// Empty: no body.
    Empty,
    /// Static: a constant text.
    Static(&'static str),
    /// Owned: text built for this response.
    Owned(String),
    /// Task: a stored task's JSON.
    Task(Task),
}

impl Body {
    /// bytes is the body's content.
    pub fn bytes(&self) -> &[u8] {
        match self {
            Body::Empty => b"",
            Body::Static(s) => s.as_bytes(),
            Body::Owned(s) => s.as_bytes(),
            Body::Task(t) => t.as_bytes(),
        }
    }
}

impl Reply {
    /// json is a JSON reply.
    pub fn json(status: u16, body: String) -> Self {
        Self { status, content_type: JSON, body: Body::Owned(body), header: None }
    }

    /// error is a reply with body `{"error": message}`.
    pub fn error(status: u16, message: impl Into<String>) -> Self {
        Self::json(status, json!({ "error": message.into() }).to_string())
    }

    /// with_header adds the extra header line.
    pub fn with_header(mut self, name: &'static str, value: String) -> Self {
        self.header = Some((name, value));
        self
    }

    fn task(status: u16, task: Task) -> Self {
        Self { status, content_type: JSON, body: Body::Task(task), header: None }
    }
}

/// classify names the route of a method and path (query already removed).
pub fn classify(method: &str, path: &str) -> Route {
    match (method, path) {
        ("GET", "/health") => Route::Health,
        ("GET", "/stats") => Route::Stats,
        ("GET", "/stats/tasks") => Route::StatsTasks,
        ("POST", "/stats/reset") => Route::StatsReset,
        ("POST", "/tasks") => Route::TasksCreate,
        ("GET", "/tasks") => Route::TasksList,
        ("POST", "/v1/chat/completions") => Route::ChatCompletions,
        ("POST", "/v1/completions") => Route::Completions,
        _ => match (method, item(path, "/tasks/"), item(path, "/delay/")) {
            ("GET", Some(_), _) => Route::TasksGet,
            ("PUT", Some(_), _) => Route::TasksUpdate,
            ("DELETE", Some(_), _) => Route::TasksDelete,
            ("GET", _, Some(_)) => Route::Delay,
            _ => Route::Other,
        },
    }
}

/// item is the single path segment after `prefix`, if `path` is exactly `prefix` + segment.
fn item<'a>(path: &'a str, prefix: &str) -> Option<&'a str> {
    path.strip_prefix(prefix).filter(|rest| !rest.is_empty() && !rest.contains('/'))
}

/// delay_ms is the wait asked for by `GET /delay/{ms}`, or the 400 to answer instead.
pub fn delay_ms(path: &str) -> Result<u64, Reply> {
    item(path, "/delay/")
        .and_then(|ms| ms.parse::<u64>().ok())
        .filter(|&ms| ms <= MAX_DELAY_MS)
        .ok_or_else(|| Reply::error(400, format!("/delay/{{ms}} takes whole milliseconds up to {MAX_DELAY_MS}")))
}

/// handle computes the reply for every route but /health (which the connection answers
/// itself) once any wait is over.
pub fn handle(route: Route, method: &str, path: &str, query: &str, body: &[u8], shared: &Shared) -> Reply {
    let store = &shared.store;
    match route {
        Route::Health | Route::Delay => {
            Reply { status: 200, content_type: TEXT, body: Body::Static("ok"), header: None }
        }
        Route::Stats => Reply::json(200, crate::stats::render(shared)),
        Route::StatsTasks => Reply::json(200, crate::stats::render_task_reads(shared)),
        Route::StatsReset => {
            shared.reset();
            Reply::json(200, r#"{"reset":true}"#.to_string())
        }
        Route::TasksCreate => match task_fields(body) {
            Ok(fields) => {
                let (id, task) = store.create(fields);
                Reply::task(201, task).with_header("Location", format!("/tasks/{id}"))
            }
            Err(reply) => reply,
        },
        Route::TasksList => match page_params(query) {
            Ok((offset, limit)) => {
                let page = store.list(offset, limit);
                let mut out = String::with_capacity(64 + page.tasks.iter().map(|t| t.len() + 1).sum::<usize>());
                out.push_str(r#"{"tasks":["#);
                for (i, t) in page.tasks.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(t);
                }
                let _ = write!(out, r#"],"total":{},"offset":{offset},"limit":{limit}}}"#, page.total);
                Reply::json(200, out)
            }
            Err(reply) => reply,
        },
        Route::TasksGet => match task_id(path).and_then(|id| store.read(id).ok_or_else(|| not_found(path))) {
            Ok(task) => Reply::task(200, task),
            Err(reply) => reply,
        },
        Route::TasksUpdate => match task_fields(body).and_then(|f| task_id(path).map(|id| (id, f))) {
            Ok((id, fields)) => match store.update(id, fields) {
                Some(task) => Reply::task(200, task),
                None => not_found(path),
            },
            Err(reply) => reply,
        },
        Route::TasksDelete => match task_id(path) {
            Ok(id) if store.delete(id) => Reply { status: 204, content_type: JSON, body: Body::Empty, header: None },
            _ => not_found(path),
        },
        // The connection answers these itself: they wait for the batch and stream.
        Route::ChatCompletions | Route::Completions => {
            Reply::error(500, "the inference routes are answered by the connection")
        }
        Route::Other | Route::Invalid => other(method, path),
    }
}

/// touch is what the store locked to compute `reply` for `route` (see
/// [`crate::server::store::TaskStore::lock_until`]): the shard of the task id for a create, read,
/// update or delete that reached the store (found or not), every shard for a listing, nothing
/// for a request refused before the store (a bad body, a non-numeric id, a bad page).
pub fn touch(route: Route, path: &str, reply: &Reply) -> Option<Touch> {
    match route {
        Route::TasksList if reply.status == 200 => Some(Touch::All),
        Route::TasksCreate if reply.status == 201 => reply
            .header
            .as_ref()
            .and_then(|(_, location)| location.strip_prefix("/tasks/")?.parse().ok())
            .map(Touch::One),
        Route::TasksGet | Route::TasksUpdate | Route::TasksDelete if reply.status != 400 => {
            task_id(path).ok().map(Touch::One)
        }
        _ => None,
    }
}

/// other answers a method or path the target does not serve: 405 with `Allow` on a known
/// path, 404 otherwise.
fn other(method: &str, path: &str) -> Reply {
    let allow = match path {
        "/health" | "/stats" | "/stats/tasks" => Some("GET, HEAD"),
        "/stats/reset" | "/v1/chat/completions" | "/v1/completions" => Some("POST"),
        "/tasks" => Some("GET, HEAD, POST"),
        _ if item(path, "/tasks/").is_some() => Some("GET, HEAD, PUT, DELETE"),
        _ if item(path, "/delay/").is_some() => Some("GET, HEAD"),
        _ => None,
    };
    match allow {
        Some(allow) => {
            Reply::error(405, format!("{method} is not allowed on {path}")).with_header("Allow", allow.into())
        }
        None => not_found(path),
    }
}

fn not_found(path: &str) -> Reply {
    Reply::error(404, format!("{path} not found"))
}

/// task_id reads the id in `/tasks/{id}`; an id that is not a number is unknown (404).
fn task_id(path: &str) -> Result<u64, Reply> {
    item(path, "/tasks/").and_then(|id| id.parse().ok()).ok_or_else(|| not_found(path))
}

/// task_fields reads a request body that must be a JSON object.
fn task_fields(body: &[u8]) -> Result<Map<String, Value>, Reply> {
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(fields)) => Ok(fields),
        Ok(_) => Err(Reply::error(400, "a task must be a JSON object")),
        Err(e) => Err(Reply::error(400, format!("invalid JSON: {e}"))),
    }
}

/// page_params reads `offset` and `limit` from a query string (other keys are ignored).
fn page_params(query: &str) -> Result<(usize, usize), Reply> {
    let (mut offset, mut limit) = (0usize, DEFAULT_LIMIT);
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let parsed = value.parse::<usize>();
        match (key, parsed) {
            ("offset", Ok(v)) => offset = v,
            ("limit", Ok(v)) if v <= MAX_LIMIT => limit = v,
            ("offset", Err(_)) => {
                return Err(Reply::error(400, format!("offset must be a whole number, got `{value}`")))
            }
            ("limit", _) => {
                return Err(Reply::error(
                    400,
                    format!("limit must be a whole number from 0 to {MAX_LIMIT}, got `{value}`"),
                ))
            }
            _ => {}
        }
    }
    Ok((offset, limit))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_routes() {
        let cases: &[(&str, &str, Route)] = &[
            ("GET", "/health", Route::Health),
            ("POST", "/health", Route::Other),
            ("GET", "/delay/15", Route::Delay),
            ("GET", "/delay/abc", Route::Delay),
            ("GET", "/delay/", Route::Other),
            ("POST", "/tasks", Route::TasksCreate),
            ("GET", "/tasks", Route::TasksList),
            ("GET", "/tasks/7", Route::TasksGet),
            ("PUT", "/tasks/7", Route::TasksUpdate),
            ("DELETE", "/tasks/7", Route::TasksDelete),
            ("PATCH", "/tasks/7", Route::Other),
            ("GET", "/tasks/7/x", Route::Other),
            ("GET", "/tasks/", Route::Other),
            ("GET", "/stats", Route::Stats),
            ("GET", "/stats/tasks", Route::StatsTasks),
            ("POST", "/stats/tasks", Route::Other),
            ("POST", "/stats/reset", Route::StatsReset),
            ("POST", "/v1/chat/completions", Route::ChatCompletions),
            ("POST", "/v1/completions", Route::Completions),
            ("GET", "/v1/completions", Route::Other),
            ("POST", "/v1/chat/completions/", Route::Other),
            ("GET", "/", Route::Other),
        ];
        for &(method, path, want) in cases {
            assert_eq!(classify(method, path), want, "{method} {path}");
        }
    }

    #[test]
    #[allow(clippy::type_complexity)]
    fn reads_page_params() {
        let cases: &[(&str, Result<(usize, usize), u16>)] = &[
            ("", Ok((0, DEFAULT_LIMIT))),
            ("limit=5", Ok((0, 5))),
            ("offset=10&limit=0", Ok((10, 0))),
            ("x=1&limit=1000", Ok((0, 1000))),
            ("limit=1001", Err(400)),
            ("limit=-1", Err(400)),
            ("offset=abc", Err(400)),
            ("limit", Err(400)),
        ];
        for (query, want) in cases {
            assert_eq!(page_params(query).map_err(|r| r.status), *want, "{query}");
        }
    }

    #[test]
    fn touches_what_reached_the_store() {
        let ok = |status: u16| Reply::json(status, String::new());
        let created = ok(201).with_header("Location", "/tasks/42".into());
        let cases: &[(Route, &str, Reply, Option<Touch>)] = &[
            (Route::TasksList, "/tasks", ok(200), Some(Touch::All)),
            (Route::TasksList, "/tasks", ok(400), None),
            (Route::TasksCreate, "/tasks", created, Some(Touch::One(42))),
            (Route::TasksCreate, "/tasks", ok(400), None),
            (Route::TasksGet, "/tasks/7", ok(200), Some(Touch::One(7))),
            (Route::TasksGet, "/tasks/7", ok(404), Some(Touch::One(7))),
            (Route::TasksGet, "/tasks/x", ok(404), None),
            (Route::TasksUpdate, "/tasks/7", ok(400), None),
            (Route::TasksDelete, "/tasks/9", ok(204), Some(Touch::One(9))),
            (Route::Delay, "/delay/5", ok(200), None),
            (Route::Health, "/health", ok(200), None),
        ];
        for (route, path, reply, want) in cases {
            assert_eq!(touch(*route, path, reply), *want, "{route:?} {path} {}", reply.status);
        }
    }

    #[test]
    fn delay_takes_milliseconds() {
        let cases: &[(&str, Result<u64, u16>)] = &[
            ("/delay/0", Ok(0)),
            ("/delay/250", Ok(250)),
            ("/delay/-5", Err(400)),
            ("/delay/1.5", Err(400)),
            ("/delay/3600001", Err(400)),
        ];
        for (path, want) in cases {
            assert_eq!(delay_ms(path).map_err(|r| r.status), *want, "{path}");
        }
    }
}
