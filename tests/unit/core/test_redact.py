"""Redaction: what surge.redact masks and what it leaves alone (table-driven, no engine run)."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from surge.core.redact import is_secret_name, mask_quoted, redact_document, redact_message, redact_text


@pytest.mark.parametrize(
    "name",
    [
        "api_key",
        "apikey",
        "apiKey",
        "API-KEY",
        "key",
        "token",
        "access_token",
        "accessToken",
        "refresh_token",
        "password",
        "passwd",
        "pwd",
        "secret",
        "client_secret",
        "signature",
        "sig",
        "X-Amz-Signature",
        "auth",
        "session",
        "sessionid",
        "JSESSIONID",
        "Authorization",
        "Proxy-Authorization",
        "Cookie",
        "Set-Cookie",
        "X-Api-Key",
        "X-Auth-Token",
        "X-CSRF-Token",
        "credentials",
        "X-Amz-Credential",
        "jwt",
        "private_key",
    ],
)
def test_secret_names(name):
    assert is_secret_name(name)


@pytest.mark.parametrize(
    "name",
    [
        "limit",
        "owner",
        "author",
        "page",
        "id",
        "Content-Type",
        "Accept",
        "User-Agent",
        "Host",
        "monkey",
        "keyword",
        "sort",
        "title",
        "priority",
        "q",
        "x",
    ],
)
def test_ordinary_names(name):
    assert not is_secret_name(name)


REDACT_TEXT_CASES = [
    ("http://user:SECRET@127.0.0.1:8080/x", "http://user:redacted@127.0.0.1:8080/x"),
    ("https://SECRET@host/x", "https://redacted@host/x"),
    (
        "URL: 'http://u:SECRET@h/x': credentials in the URL are not supported",
        "URL: 'http://u:redacted@h/x': credentials in the URL are not supported",
    ),
    ("'http://u:pa/SECRET@h' bad", "'http://u:redacted@h' bad"),
    ("'ftp://u:SECRET@x/' must start with http://", "'ftp://u:redacted@x/' must start with http://"),
    ("URL: 'u:SECRET@127.0.0.1/x' must start", "URL: 'u:redacted@127.0.0.1/x' must start"),
    ("http://h/health?api_key=SECRET", "http://h/health?api_key=[redacted]"),
    ("http://h/p?limit=20&token=SECRET&x=1", "http://h/p?limit=20&token=[redacted]&x=1"),
    ("http://h/p?A=1&Access_Token=SECRET#sig=SECRET", "http://h/p?A=1&Access_Token=[redacted]#sig=[redacted]"),
    ("got 'MY TOKEN=SECRET'", "got 'MY TOKEN=[redacted]'"),
    ("title=x priority=high", "title=x priority=high"),
    ("got 'API_TOKEN=SECRET'", "got 'API_TOKEN=[redacted]'"),
    ("'Authorization: Bearer SECRET' must look like", "'Authorization: [redacted]' must look like"),
    ("Cookie: a=SECRET; b=SECRET", "Cookie: [redacted]"),
    # path parameters, percent-encoded names, pairs inside a pair's value, JSON fields (issue 20)
    ("http://h/a;jsessionid=SECRET/b;token=SECRET?x=1", "http://h/a;jsessionid=[redacted]/b;token=[redacted]?x=1"),
    ("http://h/a;JSESSIONID=SECRET", "http://h/a;JSESSIONID=[redacted]"),
    (
        "http://h/x?api%5Fkey=SECRET&access%5ftoken=SECRET&a%5Fb=1",
        "http://h/x?api%5Fkey=[redacted]&access%5ftoken=[redacted]&a%5Fb=1",
    ),
    ("--variant 'a=http://h/x?token=SECRET'", "--variant 'a=http://h/x?token=[redacted]'"),
    (
        "--variant a:API_TOKEN=SECRET --variant b:X=1,API_KEY=SECRET",
        "--variant a:API_TOKEN=[redacted] --variant b:X=1,API_KEY=[redacted]",
    ),
    (
        '--body \'{"title":"x","password":"SECRET","api_key": 12345,"auth":{"secret":"S\\"ECRET"}}\'',
        '--body \'{"title":"x","password":"[redacted]","api_key": "[redacted]","auth":{"secret":"[redacted]"}}\'',
    ),
    ("{'password': 'SECRET', 'x': 1}", "{'password': '[redacted]', 'x': 1}"),
    (
        "surge run f.yaml --env=API_TOKEN=SECRET x=token=SECRET",
        "surge run f.yaml --env=API_TOKEN=[redacted] x=token=[redacted]",
    ),
    ("a=" * 5000 + "token=SECRET", "a=" * 5000 + "token=[redacted]"),  # no recursion over nested pairs
    # left alone: ordinary URLs, paths with '@', error locations, ordinary pairs
    ("http://127.0.0.1:8080/health?limit=20", "http://127.0.0.1:8080/health?limit=20"),
    ("http://host/users/@me", "http://host/users/@me"),
    (
        "f.yaml:3: defaults.headers.Authorization: a '{{' is never closed",
        "f.yaml:3: defaults.headers.Authorization: a '{{' is never closed",
    ),
    ("value of 'Authorization' contains a line break", "value of 'Authorization' contains a line break"),
    ("GET /tasks/{id}", "GET /tasks/{id}"),
    ("'{{token}}': tokens.csv has no column 'x'", "'{{token}}': tokens.csv has no column 'x'"),
    ("http://h/a;v=1/b?x=1", "http://h/a;v=1/b?x=1"),
    ('{"title": "x", "owner": "me"}', '{"title": "x", "owner": "me"}'),
]


@pytest.mark.parametrize("text, expected", REDACT_TEXT_CASES)
def test_redact_text(text, expected):
    assert redact_text(text) == expected


@pytest.mark.parametrize(
    "url",
    [
        "http://admin:SECRET@127.0.0.1:8080/x?limit=1&token=SECRET",
        "https://SECRET@[::1]:8443/x",
        "http://u:SECRET@h/a;jsessionid=SECRET?api%5Fkey=SECRET#sig=SECRET",
    ],
)
def test_a_masked_url_is_still_a_url_with_its_host(url):
    masked = redact_text(url)
    assert "SECRET" not in masked
    assert (urlsplit(masked).hostname, urlsplit(masked).port) == (urlsplit(url).hostname, urlsplit(url).port)


def test_redact_text_is_idempotent():
    texts = [t for t, _ in REDACT_TEXT_CASES]
    assert [redact_text(redact_text(t)) for t in texts] == [redact_text(t) for t in texts]


def test_redact_message_masks_quoted_values_of_secret_keys():
    message = "'{{ SECRET x}}' is not a slot: write {{name}}"
    assert "SECRET" not in redact_message(("defaults", "headers", "Authorization"), message)
    assert redact_message(("defaults", "headers", "Accept"), message) == message
    assert mask_quoted("a 'b c' \"d-e\" f") == "a '[redacted]' '[redacted]' f"
    kept = "'{{tokn}}' uses 'tokn', which is not a variable in scenario 'a'; a '{{' is never closed with '}}'"
    assert mask_quoted(kept) == kept
    assert (
        mask_quoted("unterminated '{{' at byte 7: '{{SECRET' needs")
        == "unterminated '{{' at byte 7: '[redacted]' needs"
    )


def test_redact_document_masks_strings_and_secret_pools_and_keeps_the_rest():
    doc = {
        "url": "http://h/x?api_key=SECRET",
        "requests": {"sent": 3},
        "notes": ["see http://u:SECRET@h"],
        "pools": {"task_ids": ["1", "2"], "tokens": ["SECRET", "SECRET2"]},
        "histograms": {"all": "HISTFAAAACR4nJNpmSzMwMDAxAABzFCaEUIxMjGxMTIzMTExMQEAPiEDCQ=="},
        "setup": {"pools": {"tokens": 2}},
    }
    out = redact_document(doc)
    assert "SECRET" not in repr(out)
    assert out["requests"] == {"sent": 3}
    assert out["pools"] == {"task_ids": ["1", "2"], "tokens": ["[redacted]", "[redacted]"]}
    assert out["histograms"] == doc["histograms"]
    assert out["setup"] == {"pools": {"tokens": 2}}
    assert doc["url"].endswith("SECRET"), "the input is not changed"


def test_redact_document_masks_keys_and_secret_named_fields():
    doc = {
        "requests": {
            "failure_classes": {
                "error for url (http://u:SECRET@h/?api_key=SECRET)": 3,
                "error for url (http://u:SECRET2@h/?api_key=SECRET2)": 2,
                "Authorization: Bearer SECRET rejected": 1,
                "timeout": 4,
            }
        },
        "parameters": {"variants": [{"name": "a", "env": {"API_TOKEN": "SECRET", "LIMIT": "2"}}]},
        "body": {"password": ["SECRET", 7], "token": 12},
    }
    out = redact_document(doc)
    assert "SECRET" not in repr(out)
    assert out["requests"]["failure_classes"] == {
        "error for url (http://u:redacted@h/?api_key=[redacted])": 5,
        "Authorization: [redacted]": 1,
        "timeout": 4,
    }
    assert out["parameters"]["variants"][0]["env"] == {"API_TOKEN": "[redacted]", "LIMIT": "2"}
    assert out["body"] == {"password": ["[redacted]", 7], "token": 12}
    assert redact_document(out) == out


@pytest.mark.parametrize(
    "line, expected",
    [
        ('  headers: {Authorization: "Bearer SECRET"}', '  headers: {Authorization: "[redacted]"}'),
        ("  headers: {Authorization: Bearer SECRET, Accept: x}", "  headers: {Authorization: [redacted], Accept: x}"),
        ("  query: {limit: 20, token: SECRET}", "  query: {limit: 20, token: [redacted]}"),
        ("  json: {title: t, password: SECRET}", "  json: {title: t, password: [redacted]}"),
        ('  session_key: {type: choice, values: ["SECRET"]}', "  session_key: [redacted]"),
        ("  token: {type: env, name: API_TOKEN, default: SECRET}", "  token: [redacted]"),
        ("    - client_secret: SECRET  ", "    - client_secret: [redacted]"),
        ('  path: "/x?api_key=SECRET&limit=2"', '  path: "/x?api_key=[redacted]&limit=2"'),
        ("  Cookie: sid=SECRET", "  Cookie: [redacted]"),
        (
            '  - request: {path: "/x?api%5Fkey=SECRET&limit=1"}',
            '  - request: {path: "/x?api%5Fkey=[redacted]&limit=1"}',
        ),
        ("  title: keep me", "  title: keep me"),
        ("  query: {limit: 20, owner: me}", "  query: {limit: 20, owner: me}"),
        ("  headers:", "  headers:"),
    ],
)
def test_masked_lines_masks_secret_keys_of_a_scenario_file(line, expected):
    from surge.core.redact import masked_lines

    assert masked_lines(line + "\n") == expected + "\n"


@pytest.mark.parametrize(
    "target, host",
    [
        ("http://u:redacted@127.0.0.1:8080/x?token=[redacted]", "127.0.0.1"),
        ("http://u:[redacted]@127.0.0.1:8080/x", None),  # masked before issue 20: not a URL, and no traceback
    ],
)
def test_a_reports_limitations_read_a_masked_target(target, host):
    from surge.present.limitations import co_located

    assert co_located({"meta": {"target": target}}) == host
