"""Plan errors as users read them, the one place a plan meets the engine's ``validate_plan``:
the engine names each invalid field of a plan (``scenarios[0].executor.vus``), except when the
plan's JSON itself does not fit its types; then it gives a column of the JSON text.
``plan_errors`` turns both into a field and a message without the engine's internals, so
callers can name the flag (``check_url_plan``, for a URL's flags) or FILE:LINE (the scenario
layer's ``engine_problems``)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from surge.core.errors import BadInput
from surge.core.redact import redact_message
from surge.plan.model import Plan
from surge.plan.url import FlagNames

try:
    from surge import _engine
except ImportError:  # the engine is not built: scenario files are checked by Python's rules alone
    _engine = None  # type: ignore[assignment]

_JSON_ERROR = re.compile(r"^invalid plan JSON: (?P<what>.*?)(?: at line \d+ column (?P<column>\d+))?$")
_TYPES = {
    "u32": "a whole number from 0 to 4,294,967,295",
    "u64": "a whole number from 0 to 2^64 - 1",
    "i64": "a 64-bit whole number",
    "usize": "a whole number from 0 to 2^64 - 1",
    "f64": "a number",
    "value": "a finite number",
}


def plan_errors(plan: Mapping[str, Any]) -> list[tuple[str, str]]:
    """plan_errors validates ``plan`` (a JSON-ready dict, docs/plan.md) in the engine and
    returns each error as ``plan_error`` reads it: (field, message); none when it is valid, or
    when the compiled engine is absent (pure-Python use of scenario files)."""
    if _engine is None:
        return []
    return [plan_error(error, plan) for error in json.loads(_engine.validate_plan(json.dumps(plan)))]


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


# The test description's field (its flag, as FlagNames spell it) each engine plan field comes
# from, for one-line errors that name the flag.
_FLAG_FIELD_FOR_PLAN_FIELD = {
    "request.method": "method",
    "request.headers": "header",
    "request.body_base64": "body",
    "executor.vus": "connections",
    "executor.pre_allocated_vus": "connections",
    "executor.iterations": "requests",
    "executor.rate": "rate",
    "executor.duration_s": "duration",
    "executor.max_duration_s": "duration",
    "executor.max_vus": "max_in_flight",
    "limits.timeout_s": "timeout",
    "limits.grace_period_s": "grace",
    "limits.stream_idle_timeout_s": "stream_idle_timeout",
    "threads": "threads",
    "send_slack_s": "send_slack",
    "target.http2.streams": "streams",
}


def _flag_for(field: str, flags: FlagNames) -> str:
    """_flag_for is the flag an engine plan field came from (URL for the target's), else the field."""
    if field == "target.url":
        return "URL"
    flag_field = _FLAG_FIELD_FOR_PLAN_FIELD.get(field)
    return flags[flag_field] if flag_field is not None else field or "surge run"


def check_url_plan(plan: Plan, flags: FlagNames) -> None:
    """check_url_plan validates a URL run's plan (``surge.plan.url.build_plan``'s) in the engine,
    which owns the URL, method and header rules, and raises BadInput for the first error,
    naming the flag it came from as ``flags`` spell it (a secret header's value masked)."""
    for field, message in plan_errors(plan.to_dict()):
        header = re.search(r"\.headers\[(\d+)\]$", field)
        names = [plan.request.headers[int(header[1])][0]] if header else []
        field = re.sub(r"\[\d+\]", "", field)
        field = re.sub(r"^scenarios\.(flow\.sequences\.steps\.)?", "", field)
        raise BadInput(_flag_for(field, flags), redact_message(names, message))
