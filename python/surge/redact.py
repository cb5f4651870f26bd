"""Redaction: secrets never reach anything surge prints or writes (summary, ``--json``,
phase lines, errors). Every output path passes its text through ``redact_text`` (or its
document through ``redact_document``); the requests sent are never changed.

What counts as a secret (docs: README, "Secrets"):

- a URL's user information: ``http://user:pw@host`` shows as ``http://user:[redacted]@host``,
  ``https://token@host`` as ``https://[redacted]@host``;
- the value of a query or fragment parameter, ``NAME=value`` pair or ``Name: value`` header
  whose name looks secret (``is_secret_name``): ``?api_key=abc`` shows as ``?api_key=[redacted]``;
- in an error about a secret-named key or header, every quoted value.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

MASK = "[redacted]"
"""MASK replaces each secret."""

SECRET_WORDS = frozenset({
    "auth", "authorization", "authentication", "bearer", "cookie", "credential", "credentials", "jwt", "key",
    "pass", "passwd", "password", "passphrase", "pwd", "secret", "session", "sid", "sig", "signature", "token",
})
"""SECRET_WORDS: a name holding one of these words (split at ``_ - .`` and camelCase, any case)
is secret: ``api_key``, ``X-Api-Key``, ``access_token``, ``sig``, ``Set-Cookie``, ``Proxy-Authorization``."""

SECRET_STEMS = ("apikey", "authoriz", "authentic", "cookie", "credential", "passw", "privatekey", "secret",
                "session", "signature", "token")
"""SECRET_STEMS: a name containing one of these once lowercased without separators is secret:
``apikey``, ``accesstoken``, ``sessionid``, ``xauthtoken``."""


def is_secret_name(name: str) -> bool:
    """is_secret_name tells whether a parameter, header, key or pool called ``name`` holds a
    secret (SECRET_WORDS, SECRET_STEMS; case-insensitive)."""
    words = [w for w in re.split(r"[^a-z0-9]+", re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower()) if w]
    compact = "".join(words)
    return any(w in SECRET_WORDS for w in words) or any(stem in compact for stem in SECRET_STEMS)


_USERINFO = re.compile(r"//(?P<info>[^\s'\"<>`@?#]*)@")
"""_USERINFO finds ``//user:password@`` (the text before the first ``@`` of an authority)."""

_BARE_USERINFO = re.compile(r"(?<![\w/@.:%~-])(?P<user>[\w.~%!$&*+,;=-]+):[^\s'\"<>`/@]+@(?=[\w\[])")
"""_BARE_USERINFO finds ``user:password@host`` written without a scheme."""

_PAIR = re.compile(r"(?P<lead>^|[?&;#'\"\s(])(?P<name>[\w.\-\[\]%]{1,100})=(?P<value>[^&;#\s'\"<>`)]*)")
"""_PAIR finds ``name=value``: a query or fragment parameter, or a pair in a message."""

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
    return f"//{user}:{MASK}@" if sep and user else f"//{MASK}@"


def _pair(match: re.Match[str]) -> str:
    if not match["value"] or not is_secret_name(match["name"]):
        return match[0]
    return f"{match['lead']}{match['name']}={MASK}"


def _header(match: re.Match[str]) -> str:
    if match["value"].strip() == MASK or not is_secret_name(match["name"]):
        return match[0]
    return f"{match['lead']}{match['name']}: {MASK}"


def redact_text(text: str) -> str:
    """redact_text is ``text`` with every secret it shows replaced by ``[redacted]``: URL user
    information, secret-named ``name=value`` pairs (query parameters) and ``Name: value``
    headers."""
    if "@" in text:
        text = _USERINFO.sub(_userinfo, text)
        text = _BARE_USERINFO.sub(lambda m: f"{m['user']}:{MASK}@", text)
    if "=" in text:
        text = _PAIR.sub(_pair, text)
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


def redact_document(doc: Any) -> Any:
    """redact_document is a copy of a JSON-ready document with ``redact_text`` applied to every
    string, and the values of every pool whose name is secret (captured tokens) masked."""
    if isinstance(doc, str):
        return redact_text(doc)
    if isinstance(doc, list):
        return [redact_document(item) for item in doc]
    if isinstance(doc, Mapping):
        out = {key: redact_document(value) for key, value in doc.items()}
        pools = out.get("pools")
        if isinstance(pools, dict):
            out["pools"] = {name: _masked_pool(values) if is_secret_name(name) else values
                            for name, values in pools.items()}
        return out
    return doc


def _masked_pool(values: Any) -> Any:
    return [MASK] * len(values) if isinstance(values, list) else values
