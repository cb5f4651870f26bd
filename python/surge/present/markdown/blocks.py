"""Markdown building blocks for report.md: tables (every cell escaped, so a value holding ``|``
or a newline cannot break the table), headings and bullet lists."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence


def escape(text: str) -> str:
    """escape makes ``text`` safe inside a table cell: ``|`` escaped, newlines as spaces."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\r", " ").replace("\n", " ")


_NUMBER = re.compile(r"-|[-+]?[0-9][0-9,]*(\.[0-9]+)?(e[-+]?[0-9]+)?%?")
"""_NUMBER matches a cell surge.present.numbers wrote (or its MISSING dash)."""


def table(columns: Sequence[str], rows: Iterable[Sequence[str]], *, left: int = 1) -> str:
    """table is a Markdown table: the first ``left`` columns and every column holding text
    aligned left, columns of numbers right. Empty string when there are no rows."""
    body = [list(r) for r in rows]
    if not body:
        return ""
    numeric = [all(_NUMBER.fullmatch(row[i]) for row in body) for i in range(len(columns))]
    align = ["---:" if i >= left and numeric[i] else "---" for i in range(len(columns))]
    lines = ["| " + " | ".join(escape(c) for c in columns) + " |", "| " + " | ".join(align) + " |"]
    lines += ["| " + " | ".join(escape(c) for c in row) + " |" for row in body]
    return "\n".join(lines) + "\n"


def bullets(items: Iterable[str]) -> str:
    """bullets is a Markdown bullet list ("" when there are no items); newlines in an item become spaces."""
    lines = [f"- {' '.join(item.split())}" for item in items]
    return "\n".join(lines) + "\n" if lines else ""


def section(title: str, *parts: str, level: int = 2) -> str:
    """section is a heading of ``level`` followed by its non-empty ``parts``, blank lines between."""
    body = [p.rstrip("\n") for p in parts if p and p.strip()]
    return "\n\n".join([f"{'#' * level} {title}", *body]) + "\n"
