"""Source: an imported file as read (its name, bytes and text), and the one-line errors that
name it (``FILE``, ``FILE:LINE`` or ``FILE: key``), exit code 2."""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from surge.core.errors import BadInput
from surge.core.files import FileReadError, read_bounded
from surge.record.check import MAX_COUNT, RecordError, strict_json

_STATUS = re.compile(r"[1-5][0-9][0-9]")

MAX_IMPORT_BYTES = 2 * 1024 * 1024 * 1024
"""MAX_IMPORT_BYTES bounds an imported file (2 GiB: a k6 NDJSON of a long run is large)."""


@dataclass(frozen=True)
class Source:
    """Source is one file given to ``surge import``: its path as given, its text and the
    SHA-256 of its bytes."""

    path: str
    text: str
    sha256: str

    @classmethod
    def read(cls, path: str) -> Source:
        """read loads ``path``; a missing, unreadable, non-UTF-8 or empty file is BadInput."""
        if not Path(path).is_file():
            raise BadInput(path, "no such file")
        try:
            data = read_bounded(path, MAX_IMPORT_BYTES)
        except FileReadError as e:
            raise BadInput(path, e.message) from None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            line = data[: e.start].count(b"\n") + 1
            raise BadInput(f"{path}:{line}", "not UTF-8 text") from None
        if not text.strip():
            raise BadInput(path, "empty file: nothing to import")
        return cls(path, text, hashlib.sha256(data).hexdigest())

    def error(self, message: str, *, line: int | None = None, key: str | None = None) -> BadInput:
        """error is BadInput naming this file, and the line or the key at fault."""
        where = self.path if line is None else f"{self.path}:{line}"
        return BadInput(where, f"{key}: {message}" if key else message)

    def json_document(self) -> Any:
        """json_document parses the whole file as strict JSON (surge.record.check.strict_json:
        no NaN or Infinity, bounded numbers and nesting); malformed JSON names its line."""
        return self.json_line(self.text)

    def json_line(self, text: str, line: int | None = None) -> Any:
        """json_line parses ``text`` (the whole file, or its ``line``) as strict JSON; BadInput
        naming the file and line otherwise."""
        try:
            return strict_json(text)
        except RecordError as e:
            raise self.error(e.message, line=line if e.line is None or line is not None else e.line) from None

    @property
    def name(self) -> str:
        """name is the file's name without its folders."""
        return Path(self.path).name


def mapping(source: Source, value: Any, key: str) -> dict[str, Any]:
    """mapping is ``value`` if it is a JSON object, else BadInput naming ``key``."""
    if not isinstance(value, dict):
        raise source.error("missing or not an object", key=key)
    return value


def number(source: Source, value: Any, key: str, *, optional: bool = False, high: float | None = None) -> float | None:
    """number is ``value`` as a finite float (None if ``optional`` and absent or null), from 0
    to ``high`` when given, else BadInput naming ``key``."""
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise source.error("missing or not a number", key=key)
    if high is not None and not 0 <= value <= high:
        raise source.error(f"{value!r} is outside 0..{high:,.0f}", key=key)
    return float(value)


def count(source: Source, value: Any, key: str) -> int:
    """count is ``value`` as a whole number of at least zero, else BadInput naming ``key``."""
    n = number(source, value, key)
    if n is None or n < 0 or n != int(n) or n > MAX_COUNT:
        raise source.error(f"not a count (a whole number from 0 to {MAX_COUNT:,}): {value!r}", key=key)
    return int(n)


def http_status(text: Any) -> int | None:
    """http_status is ``text`` as an HTTP status when it is one (three ASCII digits, 100-599),
    else None."""
    return int(text) if isinstance(text, str) and _STATUS.fullmatch(text) else None
