//! OpenAI's wire format for `POST /v1/chat/completions` and `POST /v1/completions`: reading a
//! request, and writing the completion as one JSON object or as server-sent events.
//!
//! Only what a load test needs is read (the prompt, `max_tokens`, `stream`, `stream_options`,
//! `model`); other fields (`temperature`, `n`, tools, ...) are accepted and ignored. Every
//! token is [`TOKEN`], so a completion of N tokens is N words: the target's own tokenizer
//! ([`crate::model::llm::prompt_tokens`]) counts it back as N.
use std::fmt::Write as _;

use serde_json::{json, Value};

use crate::model::llm::prompt_tokens;
use crate::server::routes::Reply;

/// MAX_TOKENS is the largest `max_tokens` (or `max_completion_tokens`) accepted.
pub const MAX_TOKENS: u32 = 4096;
/// DEFAULT_MODEL is the `model` echoed when a request names none.
pub const DEFAULT_MODEL: &str = "surge-target";
/// TOKEN is the text of every generated token.
pub const TOKEN: &str = "tok ";
/// DONE is the event that ends a stream.
pub const DONE: &[u8] = b"data: [DONE]\n\n";

/// Api is which of the two endpoints a request came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    /// Chat is `POST /v1/chat/completions` (`messages` in, `chat.completion` out).
    Chat,
    /// Completions is `POST /v1/completions` (`prompt` in, `text_completion` out).
    Completions,
}

/// CompletionRequest is what the model needs of one valid request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompletionRequest {
    /// api is the endpoint asked.
    pub api: Api,
    /// model is the `model` to echo back.
    pub model: String,
    /// prompt_tokens is the prompt's length by the target's tokenizer.
    pub prompt_tokens: u32,
    /// max_tokens is how many tokens to generate (every completion runs to its length).
    pub max_tokens: u32,
    /// stream says to answer with server-sent events, a token each.
    pub stream: bool,
    /// include_usage says to end a stream with a usage event (`stream_options`).
    pub include_usage: bool,
}

/// BadRequest is why a request is refused (400), in OpenAI's error shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadRequest {
    /// message is one line saying what is wrong.
    pub message: String,
    /// param is the offending field, when there is one.
    pub param: Option<&'static str>,
}

impl BadRequest {
    fn new(param: Option<&'static str>, message: impl Into<String>) -> Self {
        Self { message: message.into(), param }
    }

    /// reply is the 400: `{"error": {"message", "type": "invalid_request_error", "param",
    /// "code": null}}`, as OpenAI answers (so its clients show the message).
    pub fn reply(&self) -> Reply {
        let error = json!({
            "message": self.message, "type": "invalid_request_error", "param": self.param, "code": null,
        });
        Reply::json(400, json!({ "error": error }).to_string())
    }
}

/// parse_request reads a request to `api`; `default_max_tokens` applies when it gives none.
pub fn parse_request(api: Api, body: &[u8], default_max_tokens: u32) -> Result<CompletionRequest, BadRequest> {
    let fields = match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(fields)) => fields,
        Ok(_) => return Err(BadRequest::new(None, "the request body must be a JSON object")),
        Err(e) => return Err(BadRequest::new(None, format!("invalid JSON: {e}"))),
    };
    // An explicit null is the same as leaving a field out, as in OpenAI's API.
    let field = |name: &str| fields.get(name).filter(|v| !v.is_null());
    let prompt_tokens = match api {
        Api::Chat => chat_prompt_tokens(field("messages"))?,
        Api::Completions => match field("prompt") {
            Some(Value::String(prompt)) => prompt_tokens([prompt.as_str()]),
            Some(_) => return Err(BadRequest::new(Some("prompt"), "prompt must be a string")),
            None => return Err(BadRequest::new(Some("prompt"), "prompt is required (a string)")),
        },
    };
    let mut max_tokens = default_max_tokens;
    for name in ["max_tokens", "max_completion_tokens"] {
        if let Some(value) = field(name) {
            max_tokens = value
                .as_u64()
                .filter(|n| (1..=u64::from(MAX_TOKENS)).contains(n))
                .and_then(|n| u32::try_from(n).ok())
                .ok_or_else(|| {
                    BadRequest::new(
                        Some(name),
                        format!("{name} must be an integer from 1 to {MAX_TOKENS}, got {value}"),
                    )
                })?;
        }
    }
    let stream = match field("stream") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            return Err(BadRequest::new(Some("stream"), format!("stream must be true or false, got {other}")))
        }
    };
    let include_usage = match field("stream_options") {
        None => false,
        Some(_) if !stream => {
            return Err(BadRequest::new(Some("stream_options"), "stream_options is only allowed with stream: true"))
        }
        Some(Value::Object(options)) => match options.get("include_usage").filter(|v| !v.is_null()) {
            None => false,
            Some(Value::Bool(b)) => *b,
            Some(other) => {
                return Err(BadRequest::new(
                    Some("stream_options"),
                    format!("stream_options.include_usage must be true or false, got {other}"),
                ))
            }
        },
        Some(other) => {
            return Err(BadRequest::new(
                Some("stream_options"),
                format!("stream_options must be an object, got {other}"),
            ))
        }
    };
    let model = match field("model") {
        None => DEFAULT_MODEL.to_string(),
        Some(Value::String(model)) => model.clone(),
        Some(other) => return Err(BadRequest::new(Some("model"), format!("model must be a string, got {other}"))),
    };
    Ok(CompletionRequest { api, model, prompt_tokens, max_tokens, stream, include_usage })
}

/// chat_prompt_tokens counts the words of every message's content; each message must be
/// `{"role": string, "content": string}`.
fn chat_prompt_tokens(messages: Option<&Value>) -> Result<u32, BadRequest> {
    let bad = |message: String| BadRequest::new(Some("messages"), message);
    let messages = match messages {
        Some(Value::Array(messages)) if !messages.is_empty() => messages,
        Some(Value::Array(_)) => return Err(bad("messages must not be empty".into())),
        Some(_) => return Err(bad("messages must be an array of {\"role\", \"content\"} objects".into())),
        None => return Err(bad("messages is required (an array of {\"role\", \"content\"} objects)".into())),
    };
    let mut contents = Vec::with_capacity(messages.len());
    for (i, message) in messages.iter().enumerate() {
        let Some(message) = message.as_object() else {
            return Err(bad(format!("messages[{i}] must be an object with role and content")));
        };
        match message.get("role") {
            Some(Value::String(_)) => {}
            Some(_) => return Err(bad(format!("messages[{i}].role must be a string"))),
            None => return Err(bad(format!("messages[{i}].role is required"))),
        }
        match message.get("content") {
            Some(Value::String(content)) => contents.push(content.as_str()),
            Some(_) => return Err(bad(format!("messages[{i}].content must be a string"))),
            None => return Err(bad(format!("messages[{i}].content is required"))),
        }
    }
    Ok(prompt_tokens(contents))
}

/// Completion writes one completion's JSON: its events while streaming, or the whole object.
#[derive(Debug, Clone)]
pub struct Completion {
    api: Api,
    /// head is every chunk's JSON up to its `choices`: id, object, created and model.
    head: String,
    id: String,
    created: u64,
    model_json: String,
}

impl Completion {
    /// new starts completion number `seq` of `api`, created at `created` (Unix seconds), for
    /// `model`.
    pub fn new(api: Api, seq: u64, created: u64, model: &str) -> Self {
        let (prefix, object) = match api {
            Api::Chat => ("chatcmpl", "chat.completion.chunk"),
            Api::Completions => ("cmpl", "text_completion"),
        };
        let id = format!("{prefix}-{seq}");
        let model_json = Value::from(model).to_string();
        let head = format!(r#"{{"id":"{id}","object":"{object}","created":{created},"model":{model_json},"choices":"#);
        Self { api, head, id, created, model_json }
    }

    /// token_event is the event carrying token `index` (from 0); the chat role comes with the
    /// first, `"finish_reason":"length"` with the `last`.
    pub fn token_event(&self, index: u32, last: bool) -> String {
        let finish = if last { r#""length""# } else { "null" };
        let mut event = String::with_capacity(self.head.len() + 96);
        event.push_str("data: ");
        event.push_str(&self.head);
        // Writing to a String cannot fail.
        let _ = match (self.api, index) {
            (Api::Chat, 0) => write!(
                event,
                r#"[{{"index":0,"delta":{{"role":"assistant","content":"{TOKEN}"}},"finish_reason":{finish}}}]}}"#
            ),
            (Api::Chat, _) => {
                write!(event, r#"[{{"index":0,"delta":{{"content":"{TOKEN}"}},"finish_reason":{finish}}}]}}"#)
            }
            (Api::Completions, _) => {
                write!(event, r#"[{{"index":0,"text":"{TOKEN}","finish_reason":{finish}}}]}}"#)
            }
        };
        event.push_str("\n\n");
        event
    }

    /// usage_event is the event after the last token when `stream_options.include_usage` is
    /// set: no choices, the usage.
    pub fn usage_event(&self, prompt_tokens: u32, completion_tokens: u32) -> String {
        format!("data: {}[],\"usage\":{}}}\n\n", self.head, usage(prompt_tokens, completion_tokens))
    }

    /// body is the whole completion as one JSON object (`stream` false): the text of every
    /// token and the usage.
    pub fn body(&self, prompt_tokens: u32, completion_tokens: u32) -> String {
        let text = Value::from(TOKEN.repeat(completion_tokens as usize));
        let (object, choice) = match self.api {
            Api::Chat => (
                "chat.completion",
                format!(r#"{{"index":0,"message":{{"role":"assistant","content":{text}}},"finish_reason":"length"}}"#),
            ),
            Api::Completions => ("text_completion", format!(r#"{{"index":0,"text":{text},"finish_reason":"length"}}"#)),
        };
        format!(
            r#"{{"id":"{}","object":"{object}","created":{},"model":{},"choices":[{choice}],"usage":{}}}"#,
            self.id,
            self.created,
            self.model_json,
            usage(prompt_tokens, completion_tokens)
        )
    }
}

/// usage is OpenAI's usage object.
fn usage(prompt_tokens: u32, completion_tokens: u32) -> String {
    let total = u64::from(prompt_tokens) + u64::from(completion_tokens);
    format!(r#"{{"prompt_tokens":{prompt_tokens},"completion_tokens":{completion_tokens},"total_tokens":{total}}}"#)
}

/// object_fields is a JSON object's fields, for tests reading events back.
#[cfg(test)]
fn object_fields(text: &str) -> serde_json::Map<String, Value> {
    match serde_json::from_str(text) {
        Ok(Value::Object(fields)) => fields,
        other => panic!("not a JSON object: {text}: {other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_valid_requests() {
        let request = |api, model: &str, prompt_tokens, max_tokens, stream, include_usage| CompletionRequest {
            api,
            model: model.into(),
            prompt_tokens,
            max_tokens,
            stream,
            include_usage,
        };
        let cases: &[(Api, &str, CompletionRequest)] = &[
            (
                Api::Chat,
                r#"{"messages": [{"role": "user", "content": "say hello twice"}]}"#,
                request(Api::Chat, DEFAULT_MODEL, 3, 32, false, false),
            ),
            (
                Api::Chat,
                r#"{"model": "m-7b", "messages": [{"role": "system", "content": "be brief"},
                    {"role": "user", "content": " a  b\tc "}], "max_tokens": 5, "stream": true,
                    "stream_options": {"include_usage": true}, "temperature": 0.2}"#,
                request(Api::Chat, "m-7b", 5, 5, true, true),
            ),
            (
                Api::Chat,
                r#"{"messages": [{"role": "user", "content": ""}], "max_completion_tokens": 4096,
                    "stream": true, "stream_options": {}, "max_tokens": null}"#,
                request(Api::Chat, DEFAULT_MODEL, 1, 4096, true, false),
            ),
            (
                Api::Completions,
                r#"{"prompt": "once upon a time", "max_tokens": 1, "stream": false, "model": "x"}"#,
                request(Api::Completions, "x", 4, 1, false, false),
            ),
            (
                Api::Completions,
                r#"{"prompt": "hi", "stream": null, "stream_options": null}"#,
                request(Api::Completions, DEFAULT_MODEL, 1, 32, false, false),
            ),
        ];
        for (api, body, want) in cases {
            assert_eq!(parse_request(*api, body.as_bytes(), 32).as_ref(), Ok(want), "{body}");
        }
    }

    #[test]
    fn refuses_with_one_line() {
        let user = r#""messages": [{"role": "user", "content": "hi"}]"#;
        let cases: Vec<(Api, String, &str)> = vec![
            (Api::Chat, "{not json".into(), "invalid JSON: "),
            (Api::Chat, "[1]".into(), "the request body must be a JSON object"),
            (Api::Chat, "{}".into(), "messages is required"),
            (Api::Chat, r#"{"messages": "hi"}"#.into(), "messages must be an array"),
            (Api::Chat, r#"{"messages": []}"#.into(), "messages must not be empty"),
            (Api::Chat, r#"{"messages": [1]}"#.into(), "messages[0] must be an object"),
            (Api::Chat, r#"{"messages": [{"content": "x"}]}"#.into(), "messages[0].role is required"),
            (Api::Chat, r#"{"messages": [{"role": 1, "content": "x"}]}"#.into(), "messages[0].role must be a string"),
            (Api::Chat, r#"{"messages": [{"role": "user"}]}"#.into(), "messages[0].content is required"),
            (
                Api::Chat,
                r#"{"messages": [{"role": "user", "content": "a"}, {"role": "user", "content": [1]}]}"#.into(),
                "messages[1].content must be a string",
            ),
            (
                Api::Chat,
                format!(r#"{{{user}, "max_tokens": 0}}"#),
                "max_tokens must be an integer from 1 to 4096, got 0",
            ),
            (Api::Chat, format!(r#"{{{user}, "max_tokens": 4097}}"#), "max_tokens must be an integer from 1 to 4096"),
            (Api::Chat, format!(r#"{{{user}, "max_tokens": 2.5}}"#), "max_tokens must be an integer"),
            (Api::Chat, format!(r#"{{{user}, "max_tokens": "8"}}"#), "max_tokens must be an integer"),
            (Api::Chat, format!(r#"{{{user}, "max_completion_tokens": -1}}"#), "max_completion_tokens must be"),
            (Api::Chat, format!(r#"{{{user}, "stream": "yes"}}"#), "stream must be true or false"),
            (
                Api::Chat,
                format!(r#"{{{user}, "stream_options": {{"include_usage": true}}}}"#),
                "stream_options is only allowed with stream: true",
            ),
            (
                Api::Chat,
                format!(r#"{{{user}, "stream": true, "stream_options": 1}}"#),
                "stream_options must be an object",
            ),
            (
                Api::Chat,
                format!(r#"{{{user}, "stream": true, "stream_options": {{"include_usage": 1}}}}"#),
                "stream_options.include_usage must be true or false",
            ),
            (Api::Chat, format!(r#"{{{user}, "model": 7}}"#), "model must be a string"),
            (Api::Completions, "{}".into(), "prompt is required"),
            (Api::Completions, r#"{"prompt": ["a", "b"]}"#.into(), "prompt must be a string"),
        ];
        for (api, body, want) in &cases {
            let got = parse_request(*api, body.as_bytes(), 32).map(|_| ()).map_err(|e| e.message);
            let Err(message) = got else { panic!("{body} was accepted") };
            assert!(message.starts_with(want), "{body}: {message}");
            assert!(!message.contains('\n'), "{body}: {message}");
        }
        let reply = BadRequest::new(Some("max_tokens"), "max_tokens must be ...").reply();
        assert_eq!(reply.status, 400);
        let body = object_fields(std::str::from_utf8(reply.body.bytes()).unwrap_or_default());
        assert_eq!(
            body.get("error"),
            Some(&json!({"message": "max_tokens must be ...", "type": "invalid_request_error",
                         "param": "max_tokens", "code": null}))
        );
    }

    #[test]
    fn formats_chat_chunks_exactly() {
        let c = Completion::new(Api::Chat, 7, 1_700_000_000, "m\"x");
        let head =
            r#"{"id":"chatcmpl-7","object":"chat.completion.chunk","created":1700000000,"model":"m\"x","choices":"#;
        assert_eq!(
            c.token_event(0, false),
            format!(
                "data: {head}[{{\"index\":0,\"delta\":{{\"role\":\"assistant\",\"content\":\"tok \"}},\"finish_reason\":null}}]}}\n\n"
            )
        );
        assert_eq!(
            c.token_event(1, true),
            format!(
                "data: {head}[{{\"index\":0,\"delta\":{{\"content\":\"tok \"}},\"finish_reason\":\"length\"}}]}}\n\n"
            )
        );
        assert_eq!(
            c.usage_event(3, 2),
            format!(
                "data: {head}[],\"usage\":{{\"prompt_tokens\":3,\"completion_tokens\":2,\"total_tokens\":5}}}}\n\n"
            )
        );
        // Every event is one line of JSON after `data: `.
        for event in [c.token_event(0, true), c.token_event(5, false), c.usage_event(1, 1)] {
            let json = event.strip_prefix("data: ").and_then(|e| e.strip_suffix("\n\n")).unwrap_or_default();
            assert!(!json.contains('\n'));
            assert_eq!(object_fields(json).get("model"), Some(&json!("m\"x")));
        }
        let body = object_fields(&c.body(3, 2));
        assert_eq!(body.get("object"), Some(&json!("chat.completion")));
        assert_eq!(
            body.get("choices"),
            Some(
                &json!([{"index": 0, "message": {"role": "assistant", "content": "tok tok "}, "finish_reason": "length"}])
            )
        );
        assert_eq!(body.get("usage"), Some(&json!({"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5})));
    }

    #[test]
    fn formats_completion_chunks() {
        let c = Completion::new(Api::Completions, 2, 5, DEFAULT_MODEL);
        let event = c.token_event(0, false);
        assert_eq!(
            event,
            "data: {\"id\":\"cmpl-2\",\"object\":\"text_completion\",\"created\":5,\"model\":\"surge-target\",\
             \"choices\":[{\"index\":0,\"text\":\"tok \",\"finish_reason\":null}]}\n\n"
        );
        assert!(c.token_event(1, true).contains(r#""text":"tok ","finish_reason":"length""#));
        let body = object_fields(&c.body(1, 3));
        assert_eq!(body.get("id"), Some(&json!("cmpl-2")));
        assert_eq!(body.get("object"), Some(&json!("text_completion")));
        assert_eq!(
            body.get("choices"),
            Some(&json!([{"index": 0, "text": "tok tok tok ", "finish_reason": "length"}]))
        );
        // The completion's text, read by the target's tokenizer, is its completion tokens.
        assert_eq!(prompt_tokens(["tok tok tok "]), 3);
    }
}
