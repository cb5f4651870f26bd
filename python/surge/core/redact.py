"""Redaction: secrets never reach anything surge prints or writes (summary, ``--json``,
phase lines, errors, records, the history). Every output path passes its text through
``redact_text`` (or its document through ``redact_document``); the record's writers
(``surge.record.writer.write_summary``, ``surge.history``) mask whatever they are given, so
nothing unmasked is written whatever the printer did; the requests sent are never changed.

What counts as a secret (docs: README, "Secrets"):

- a URL's user information: ``http://user:pw@host`` shows as ``http://user:redacted@host``,
  ``https://token@host`` as ``https://redacted@host`` (still a URL: ``urlsplit`` reads its host);
- the value of a query, fragment or path (``;jsessionid=``) parameter, ``NAME=value`` pair,
  ``Name: value`` header or JSON ``"name": value`` field whose name looks secret
  (``is_secret_name``, percent-encoded names decoded): ``?api_key=abc`` shows as
  ``?api_key=[redacted]``, ``{"password": "x"}`` as ``{"password": "[redacted]"}``;
- in an error about a secret-named key or header, every quoted value;
- in a document, a secret-named key's text values (and the text of its keys: an imported
  tool's error texts are failure classes).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any
from urllib.parse import unquote

MASK = "[redacted]"
"""MASK replaces each secret."""

USERINFO_MASK = "redacted"
"""USERINFO_MASK replaces a URL's user information (a password, a token as user): without
brackets, which would make the authority an invalid IPv6 literal (``urlsplit`` refuses it)."""

SECRET_WORDS = frozenset(
    {
        "auth",
        "authorization",
        "authentication",
        "bearer",
        "cookie",
        "credential",
        "credentials",
        "jwt",
        "key",
        "pass",
        "passwd",
        "password",
        "passphrase",
        "pwd",
        "secret",
        "session",
        "sid",
        "sig",
        "signature",
        "token",
    }
)
"""SECRET_WORDS: a name holding one of these words (split at ``_ - .`` and camelCase, any case)
is secret: ``api_key``, ``X-Api-Key``, ``access_token``, ``sig``, ``Set-Cookie``, ``Proxy-Authorization``."""

SECRET_STEMS = (
    "apikey",
    "authoriz",
    "authentic",
    "cookie",
    "credential",
    "passw",
    "privatekey",
    "secret",
    "session",
    "signature",
    "token",
)
"""SECRET_STEMS: a name containing one of these once lowercased without separators is secret:
``apikey``, ``accesstoken``, ``sessionid``, ``xauthtoken``."""


@lru_cache(maxsize=4096)  # a document asks about the same few keys again and again
def is_secret_name(name: str) -> bool:
    """is_secret_name tells whether a parameter, header, key or pool called ``name`` holds a
    secret (SECRET_WORDS, SECRET_STEMS; case-insensitive)."""
    name = unquote(name) if "%" in name else name  # ?api%5Fkey= is ?api_key=
    words = [w for w in re.split(r"[^a-z0-9]+", re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower()) if w]
    compact = "".join(words)
    return any(w in SECRET_WORDS for w in words) or any(stem in compact for stem in SECRET_STEMS)


_USERINFO = re.compile(r"//(?P<info>[^\s'\"<>`@?#]*)@")
"""_USERINFO finds ``//user:password@`` (the text before the first ``@`` of an authority)."""

_BARE_USERINFO = re.compile(r"(?<![\w/@.:%~-])(?P<user>[\w.~%!$&*+,;=-]+):[^\s'\"<>`/@]+@(?=[\w\[])")
"""_BARE_USERINFO finds ``user:password@host`` written without a scheme."""

_PAIR = re.compile(r"(?P<lead>^|[?&;#'\"\s(:,=])(?P<name>[\w.\-\[\]%]{1,100})=")
"""_PAIR finds ``name=`` before a value: a query, fragment or path (``;name=``) parameter, or a
pair in a message or a command line (``-e API_TOKEN=x``, ``--variant a:API_TOKEN=x``)."""

_PAIR_VALUE = re.compile(r"[^&;#\s'\"<>`)]*")
"""_PAIR_VALUE is a pair's value, from its ``=``."""

_PATH_PARAMETER_END = re.compile(r"[/?]")
"""_PATH_PARAMETER_END ends a path parameter's value (``;jsessionid=x/next?query``)."""

_JSON_PAIR = re.compile(
    r"""(?P<q>["'])(?P<name>[^"'\\\r\n]{1,100})(?P=q)[ \t]*:[ \t]*"""
    r"""(?P<value>"(?:[^"\\\r\n]|\\.)*"|'(?:[^'\\\r\n]|\\.)*'|-?\d[\w.+-]*|true|false|null)"""
)
"""_JSON_PAIR finds a JSON (or Python) ``"name": value`` field with a string, number or literal
value: a ``--body`` on a command line (never a message's ``'{{token}}': text``)."""

_HEADER = re.compile(r"(?P<lead>^|['\"\s])(?P<name>[A-Za-z0-9!#$%&*+.^_|~-]{1,100})[ \t]*:[ \t]*(?P<value>[^'\"\r\n]+)")
"""_HEADER finds ``Name: value`` at the start of a line or of a quoted string (a header as
typed, never a ``key.path: message`` of an error)."""

_QUOTED = re.compile(r"'(?P<single>[^'\n]*)'|\"(?P<double>[^\"\n]*)\"")

_NAME_OR_SLOT = re.compile(r"\{\{\s*[A-Za-z_][\w.]*\s*\}\}|[A-Za-z_][\w.]*|\{\{|\}\}")
"""_NAME_OR_SLOT is quoted text an error may show about a secret value: a variable or scenario
name, a whole ``{{slot}}``, or the braces themselves."""


def _userinfo(match: re.Match[str]) -> str:
    info = match["info"]
    if "/" in info.split(":", 1)[0] or ("/" in info and ":" not in info):
        return match[0]  # an '@' in a path (//host/users/@me), not user information
    user, sep, _ = info.partition(":")
    return f"//{user}:{USERINFO_MASK}@" if sep and user else f"//{USERINFO_MASK}@"


def _mask_pairs(text: str) -> str:
    """_mask_pairs masks the value of each secret-named pair of ``text``. Another pair's value is
    searched on (``--variant 'a=http://h/?token=x'``), and a path parameter's ends with its
    segment (``/a;jsessionid=x/b?q``)."""
    out: list[str] = []
    kept = at = 0
    while (match := _PAIR.search(text, at)) is not None:
        start = match.end()
        value = _PAIR_VALUE.match(text, start) if is_secret_name(match["name"]) else None
        end = value.end() if value is not None else start
        if end == start:
            at = start - 1  # from its '=', which may lead the next pair: --env=API_TOKEN=x
            continue
        stop = _PATH_PARAMETER_END.search(text, start, end) if match["lead"] == ";" else None
        end = stop.start() if stop is not None else end
        out += [text[kept:start], MASK]
        kept = at = end
    return "".join(out) + text[kept:] if out else text


def _json_pair(match: re.Match[str]) -> str:
    if not is_secret_name(match["name"]) or match["value"][1:-1] == MASK:
        return match[0]
    quote = match["value"][0] if match["value"][0] in "\"'" else match["q"]
    return f"{match[0][: match.start('value') - match.start()]}{quote}{MASK}{quote}"


def _header(match: re.Match[str]) -> str:
    if match["value"].strip() == MASK or not is_secret_name(match["name"]):
        return match[0]
    return f"{match['lead']}{match['name']}: {MASK}"


def redact_text(text: str) -> str:
    """redact_text is ``text`` with every secret it shows masked: URL user information
    (``redacted``), and the values of secret-named ``name=value`` pairs (query and path
    parameters), JSON ``"name": value`` fields and ``Name: value`` headers (``[redacted]``)."""
    if "@" in text:
        text = _USERINFO.sub(_userinfo, text)
        text = _BARE_USERINFO.sub(lambda m: f"{m['user']}:{USERINFO_MASK}@", text)
    if "=" in text:
        text = _mask_pairs(text)
    if ":" in text and ('"' in text or "'" in text):
        text = _JSON_PAIR.sub(_json_pair, text)
    if ":" in text:
        text = _HEADER.sub(_header, text)
    return text


def redact_url(url: str) -> str:
    """redact_url is ``url`` with its user information and secret-named parameters masked."""
    return redact_text(url)


def mask_quoted(message: str) -> str:
    """mask_quoted replaces every quoted value in ``message`` by ``'[redacted]'``, except names and
    whole ``{{slots}}``: for an error about a key or header whose name is secret, where any
    other quoted text is the secret or part of it."""

    def mask(match: re.Match[str]) -> str:
        quoted = match["single"] if match["single"] is not None else match["double"]
        return match[0] if _NAME_OR_SLOT.fullmatch(quoted) else f"'{MASK}'"

    return _QUOTED.sub(mask, message)


def redact_message(keys: Iterable[object], message: str) -> str:
    """redact_message is an error ``message`` about the value at ``keys`` (a key path, a header
    name) with every quoted value masked when one of the keys is secret
    (``headers.Authorization``), then as ``redact_text``."""
    if any(isinstance(key, str) and is_secret_name(key) for key in keys):
        message = mask_quoted(message)
    return redact_text(message)


_QUOTED_VALUE = re.compile(r"""(?P<name>[A-Za-z0-9_.-]{1,100})[ \t]*:[ \t]*(?P<quote>["'])(?P<value>.*?)(?P=quote)""")
"""_QUOTED_VALUE finds a YAML ``key: "quoted value"`` (which ``redact_text`` leaves to the quotes)."""


_FLOW_VALUE = re.compile(
    r"""(?P<lead>[{,][ \t]*)(?P<name>[A-Za-z0-9_.-]{1,100})[ \t]*:[ \t]+(?P<value>[^,{}\[\]\s"'][^,}\]\r\n]*)"""
)
"""_FLOW_VALUE finds a plain value in a YAML flow mapping, ``{limit: 20, token: abc}``, up to the
next ``,`` or ``}`` (which ``redact_text``, made for headers at a line's start, does not see)."""


_BLOCK_VALUE = re.compile(
    r"""^(?P<indent>[ \t]*(?:-[ \t]+)?)(?P<name>[A-Za-z0-9_.-]{1,100})[ \t]*:[ \t]+(?P<value>[^#\s].*?)[ \t]*$"""
)
"""_BLOCK_VALUE finds a YAML block mapping's ``key: value`` filling the rest of its line (a
secret-named key's whole value is masked, ``{type: choice, values: ["x"]}`` included)."""


def masked_lines(text: str) -> str:
    """masked_lines is ``text`` (a scenario file) with the secrets of each line masked:
    ``redact_text``'s, and the values of secret-named keys: a block key's whole value
    (``session_key: {type: choice, values: [x]}``), quoted ones (``Authorization: "Bearer x"``)
    and plain ones in a flow mapping (``query: {token: abc}``)."""

    def quoted(match: re.Match[str]) -> str:
        if not is_secret_name(match["name"]) or match["value"] == MASK:
            return match[0]
        return f"{match['name']}: {match['quote']}{MASK}{match['quote']}"

    def flow(match: re.Match[str]) -> str:
        if not is_secret_name(match["name"]) or match["value"].strip() == MASK:
            return match[0]
        return f"{match['lead']}{match['name']}: {MASK}"

    def block(line: str) -> str:
        body = line.rstrip("\r\n")
        match = _BLOCK_VALUE.match(body)
        if match is None or not is_secret_name(match["name"]) or match["value"] == MASK:
            return line
        return f"{match['indent']}{match['name']}: {MASK}{line[len(body) :]}"

    return "".join(
        redact_text(_FLOW_VALUE.sub(flow, _QUOTED_VALUE.sub(quoted, block(line))))
        for line in text.splitlines(keepends=True)
    )


BINARY_KEYS = frozenset({"histograms", "latency_histogram"})
"""BINARY_KEYS hold encoded histograms (base64): ``redact_document`` leaves them as they are."""


def redact_document(doc: Any) -> Any:
    """redact_document is a copy of a JSON-ready document with ``redact_text`` applied to every
    string and every key (an imported tool's error texts are keys of ``failure_classes``; two
    counts whose keys mask alike are added), and the text under every secret-named key masked
    (a pool of captured tokens, ``env: {API_TOKEN: x}``); numbers are kept (``pools: {tokens: 2}``),
    and so are the encoded histograms (BINARY_KEYS). Masking a masked document changes nothing."""
    if doc is None or type(doc) in _SCALARS:  # most of a record: numbers
        return doc
    if isinstance(doc, str):
        return redact_text(doc)
    if isinstance(doc, list):
        return [redact_document(item) for item in doc]
    if isinstance(doc, Mapping):
        out: dict[Any, Any] = {}
        for key, value in doc.items():
            if key in BINARY_KEYS:
                out[key] = value
                continue
            secret = isinstance(key, str) and is_secret_name(key)
            masked = _masked_value(value) if secret else redact_document(value)
            key = _redact_key(key) if isinstance(key, str) else key
            if key in out and _is_count(out[key]) and _is_count(masked):
                masked += out[key]
            out[key] = masked
        return out
    return doc


_SCALARS = (int, float, bool)


@lru_cache(maxsize=4096)
def _redact_key(key: str) -> str:
    return redact_text(key)


def _masked_value(value: Any) -> Any:
    """_masked_value is the value of a secret-named key: its text masked, numbers kept."""
    if isinstance(value, str):
        return MASK
    if isinstance(value, list):
        return [_masked_value(item) for item in value]
    return redact_document(value)


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
