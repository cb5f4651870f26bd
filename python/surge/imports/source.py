"""Source: an imported file as read (its name, bytes and text), and the one-line errors that
name it (``FILE``, ``FILE:LINE`` or ``FILE: key``), exit code 2."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from surge.errors import BadInput
from surge.files import FileReadError, read_bounded

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
            line = data[:e.start].count(b"\n") + 1
            raise BadInput(f"{path}:{line}", "not UTF-8 text") from None
        if not text.strip():
            raise BadInput(path, "empty file: nothing to import")
        return cls(path, text, hashlib.sha256(data).hexdigest())

    def error(self, message: str, *, line: int | None = None, key: str | None = None) -> BadInput:
        """error is BadInput naming this file, and the line or the key at fault."""
        where = self.path if line is None else f"{self.path}:{line}"
        return BadInput(where, f"{key}: {message}" if key else message)

    def json_document(self) -> Any:
        """json_document parses the whole file as JSON; malformed JSON names its line."""
        try:
            return json.loads(self.text)
        except json.JSONDecodeError as e:
            raise self.error(f"not valid JSON: {e.msg} (column {e.colno})", line=e.lineno) from None

    @property
    def name(self) -> str:
        """name is the file's name without its folders."""
        return Path(self.path).name


def mapping(source: Source, value: Any, key: str) -> dict[str, Any]:
    """mapping is ``value`` if it is a JSON object, else BadInput naming ``key``."""
    if not isinstance(value, dict):
        raise source.error("missing or not an object", key=key)
    return value


def number(source: Source, value: Any, key: str, *, optional: bool = False) -> float | None:
    """number is ``value`` as a float (None if ``optional`` and absent or null), else BadInput
    naming ``key``."""
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise source.error("missing or not a number", key=key)
    return float(value)


def count(source: Source, value: Any, key: str) -> int:
    """count is ``value`` as a whole number of at least zero, else BadInput naming ``key``."""
    n = number(source, value, key)
    if n is None or n < 0 or n != int(n):
        raise source.error(f"not a count (a whole number): {value!r}", key=key)
    return int(n)
