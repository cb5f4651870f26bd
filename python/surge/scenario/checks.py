"""Check: assertions on a response, counted per check (passes and fails) and never aborting
the iteration; thresholds read them as ``checks``. JSON paths, as checks and captures accept them:
exactly those the engine's own parser accepts (``$``, then ``.key``, ``['key']``, ``["key"]``,
``[index]`` or ``[-index]`` steps), checked by that parser so that a scenario file and a run
never disagree."""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import BeforeValidator, Field

from surge.engine.execute import json_path_problem
from surge.scenario.base import FileModel, Finding
from surge.scenario.quantities import Duration

_LITERAL = "checks compare literal values: {{slots}} are not filled in checks"


def _as_list(value: Any) -> Any:
    return value if isinstance(value, list) else [value]


def regex_problem(pattern: str) -> str | None:
    """regex_problem says why ``pattern`` is not a usable regular expression, or None."""
    try:
        compiled = re.compile(pattern)
    except re.error as e:
        return f"'{pattern}' is not a regular expression: {e}"
    if re.search(r"\(\?<?[=!]|\\[1-9]", pattern):
        return f"'{pattern}' uses look-around or back-references, which the engine's regex syntax lacks"
    del compiled
    return None


JSON_PATH_FORMS = "$.id, $.items[0].id, $.items[-1].id, $['odd key']"
"""JSON_PATH_FORMS are examples of accepted JSON paths, for error messages."""


def json_path_error(path: str) -> str | None:
    """json_path_error is the one-line message for a capture's or a check's JSON path the engine
    refuses (the engine's reason after examples of accepted paths), or None when it accepts it."""
    why = json_path_problem(path)
    return None if why is None else f"'{path}' is not a JSON path (e.g. {JSON_PATH_FORMS}): {why}"


class Check(FileModel):
    """Check: ``status`` (a code or a list), ``body_contains`` and ``body_matches`` (text or a
    list), ``json`` (a mapping of JSON path to expected value), ``header_present`` (a name or
    a list) and ``latency_under`` (a duration). Each item is one named check."""

    status: Annotated[list[Annotated[int, Field(ge=100, le=599)]], BeforeValidator(_as_list)] = Field(
        default_factory=list
    )
    body_contains: Annotated[list[str], BeforeValidator(_as_list)] = Field(default_factory=list)
    body_matches: Annotated[list[str], BeforeValidator(_as_list)] = Field(default_factory=list)
    json_equals: dict[str, Any] = Field(default_factory=dict, alias="json")
    header_present: Annotated[list[str], BeforeValidator(_as_list)] = Field(default_factory=list)
    latency_under: Duration | None = Field(default=None, gt=0)

    def problems(self) -> list[Finding]:
        """problems reports an empty check, bad regular expressions and bad JSON paths."""
        found: list[Finding] = []
        if not (
            self.status
            or self.body_contains
            or self.body_matches
            or self.json_equals
            or self.header_present
            or self.latency_under is not None
        ):
            found.append(
                (
                    (),
                    "the check checks nothing: give status, body_contains, body_matches, json, "
                    "header_present or latency_under",
                )
            )
        for i, pattern in enumerate(self.body_matches):
            if (why := regex_problem(pattern)) is not None:
                found.append((("body_matches", i), why))
        for path, expected in self.json_equals.items():
            if (why := json_path_error(path)) is not None:
                found.append((("json", path), why))
            if "{{" in str(expected):
                found.append((("json", path), _LITERAL))
        for key in ("body_contains", "body_matches", "header_present"):
            found += [((key, i), _LITERAL) for i, text in enumerate(getattr(self, key)) if "{{" in text]
        return found
