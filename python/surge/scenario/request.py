"""Request: what one step sends: method, path (with query), headers and a text or JSON body."""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import quote

from pydantic import Field, field_validator

from surge.scenario.base import FileModel, Finding
from surge.scenario.quantities import Duration
from surge.scenario.templates import display
from surge.scenario.variables import Text

_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_SLOT_SPLIT = re.compile(r"(\{\{.*?\}\})")


def _encode(text: str) -> str:
    """_encode percent-encodes a query key or value, leaving its ``{{slots}}`` as they are."""
    return "".join(p if p.startswith("{{") else quote(p, safe="") for p in _SLOT_SPLIT.split(text))


class Request(FileModel):
    """Request: ``method`` (default GET), ``path`` (default the target's path), ``query``
    (url-encoded onto the path), ``headers``, and either ``body`` (text) or ``json`` (any
    value, sent as JSON with ``Content-Type: application/json`` unless a header sets it);
    ``timeout`` overrides the default. Path, query values, header values and bodies are
    templates."""

    method: str = "GET"
    path: str | None = None
    query: dict[str, Text] = Field(default_factory=dict)
    headers: dict[str, Text] = Field(default_factory=dict)
    body: str | None = None
    json_body: Any = Field(default=None, alias="json")
    timeout: Duration | None = Field(default=None, gt=0)

    @field_validator("method")
    @classmethod
    def _upper(cls, method: str) -> str:
        return method.upper()

    def problems(self) -> list[Finding]:
        """problems reports a bad method, path or header name, and a body given twice."""
        found: list[Finding] = []
        if not _TOKEN.fullmatch(self.method):
            found.append((("method",), f"'{self.method}' is not an HTTP method (e.g. GET, POST, PUT, DELETE)"))
        if self.path is not None and not (self.path.startswith("/") or self.path.startswith("{{")):
            found.append((("path",), f"'{self.path}' must start with '/' (the host comes from target)"))
        if self.path is not None and any(c in self.path for c in " \r\n\t"):
            found.append((("path",), "a path cannot contain spaces or line breaks: encode them (%20)"))
        for name in self.headers:
            if not _TOKEN.fullmatch(name):
                found.append((("headers", name), f"'{name}' is not a valid header name"))
        if self.body is not None and self.has_json():
            found.append((("json",), "give either body (text) or json, not both"))
        return found

    def has_json(self) -> bool:
        """has_json tells whether a ``json`` body was given (``json: null`` counts: it sends ``null``)."""
        return "json_body" in self.model_fields_set

    def full_path(self, default_path: str) -> str:
        """full_path is the path template with the query appended, url-encoded except its slots."""
        path = self.path if self.path is not None else default_path
        if not self.query:
            return path
        query = "&".join(f"{_encode(k)}={_encode(v)}" for k, v in self.query.items())
        return f"{path}{'&' if '?' in path else '?'}{query}"

    def body_text(self) -> str | None:
        """body_text is the body template: ``body`` as given, or ``json`` serialized compactly."""
        if self.has_json():
            return json.dumps(self.json_body, separators=(",", ":"), ensure_ascii=False)
        return self.body

    def default_tag(self, default_path: str) -> str:
        """default_tag names a step without a name: ``GET /tasks/{id}`` (method and path
        template without the query, slots shown as ``{name}``)."""
        path = self.path if self.path is not None else default_path
        return f"{self.method} {display(path.split('?', 1)[0])}"
