"""Plan errors as users read them: the engine names each invalid field of a plan
(``scenarios[0].executor.vus``), except when the plan's JSON itself does not fit its types;
then it gives a column of the JSON text. ``plan_error`` turns both into a field and a
message without the engine's internals, so callers can name the flag or FILE:LINE."""

from __future__ import annotations

import json
import re
from typing import Any

_JSON_ERROR = re.compile(r"^invalid plan JSON: (?P<what>.*?)(?: at line \d+ column (?P<column>\d+))?$")
_TYPES = {
    "u32": "a whole number from 0 to 4,294,967,295",
    "u64": "a whole number from 0 to 2^64 - 1",
    "i64": "a 64-bit whole number",
    "usize": "a whole number from 0 to 2^64 - 1",
    "f64": "a number",
    "value": "a finite number",
}


def plan_error(error: dict[str, str], plan: Any) -> tuple[str, str]:
    """plan_error returns the field an engine error of ``plan`` (a JSON-ready dict) is about
    and its message; for an error of the JSON text, the innermost value at its column."""
    field, message = error["field"], error["message"]
    match = _JSON_ERROR.match(message) if field == "plan" else None
    if match is None:
        return field, message
    column = match.group("column")
    what = re.sub(
        r"expected `?(u32|u64|i64|usize|f64|value)`?", lambda m: f"expected {_TYPES[m.group(1)]}", match.group("what")
    ).replace("`", "'")
    field = field_at(plan, int(column)) if column else ""
    number = re.search(r"integer `(-?\d+)`", match.group("what"))
    if number is not None:
        field = _key_holding(plan, field, int(number.group(1)))
    return field, f"the engine cannot take this value ({what})"


def _key_holding(plan: Any, field: str, number: int) -> str:
    """_key_holding narrows ``field`` to its key that holds ``number``: the engine reports
    some errors at the end of the object around the value (a tagged executor, for one)."""
    node = plan
    try:
        for name, index in re.findall(r"([^.\[\]]+)|\[(\d+)\]", field):
            node = node[int(index)] if index else node[name]
    except (IndexError, KeyError, TypeError):
        return field
    if isinstance(node, dict):
        keys = [k for k, v in node.items() if v == number and not isinstance(v, bool)]
        if len(keys) == 1:
            return f"{field}.{keys[0]}" if field else str(keys[0])
    return field


def field_at(document: Any, column: int) -> str:
    """field_at is the field (``scenarios[0].executor``) of the innermost value of
    ``json.dumps(document)`` whose text holds the 1-based ``column``; "" for the whole."""
    target = column - 1
    best: tuple[int, str] = (-1, "")

    def walk(value: Any, pos: int, field: str, depth: int) -> int:
        nonlocal best
        if isinstance(value, dict):
            end = pos + 1
            for i, (key, item) in enumerate(value.items()):
                end += (2 if i else 0) + len(json.dumps(str(key))) + 2
                end = walk(item, end, f"{field}.{key}" if field else str(key), depth + 1)
            end += 1
        elif isinstance(value, (list, tuple)):
            end = pos + 1
            for i, item in enumerate(value):
                end = walk(item, end + (2 if i else 0), f"{field}[{i}]", depth + 1)
            end += 1
        else:
            end = pos + len(json.dumps(value))
        if pos <= target < end and depth > best[0]:
            best = (depth, field)
        return end

    walk(document, 0, "", 0)
    return best[1]
