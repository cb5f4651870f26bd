"""Capture: a value taken from a response into a VU variable (for later steps of the same
flow) or, with ``to_pool``, appended to a shared pool (for ``pool`` variables)."""

from __future__ import annotations

import re

from pydantic import Field

from surge.scenario.base import FileModel, Finding
from surge.scenario.checks import json_path_error, regex_problem


class Capture(FileModel):
    """Capture: exactly one source, ``json`` (a JSON path), ``header`` (a name) or ``regex``
    (a pattern over the body, keeping ``group``: 1 if the pattern has a group, else the whole
    match); ``to_pool: true`` appends the value to the pool of the capture's name instead of
    setting a variable."""

    json_path: str | None = Field(default=None, alias="json")
    header: str | None = Field(default=None, min_length=1)
    regex: str | None = Field(default=None, min_length=1)
    group: int | None = Field(default=None, ge=0)
    to_pool: bool = False

    def problems(self) -> list[Finding]:
        """problems reports zero or several sources, a bad JSON path or regex, and a group the
        regex lacks."""
        sources = [
            k for k, v in (("json", self.json_path), ("header", self.header), ("regex", self.regex)) if v is not None
        ]
        if len(sources) != 1:
            what = "none" if not sources else " and ".join(sources)
            return [((), f"give exactly one source, json, header or regex (got {what})")]
        found: list[Finding] = []
        if self.json_path is not None and (why := json_path_error(self.json_path)) is not None:
            found.append((("json",), why))
        if self.group is not None and self.regex is None:
            found.append((("group",), "group only applies to a regex capture"))
        if self.regex is not None:
            why = regex_problem(self.regex)
            if why is not None:
                found.append((("regex",), why))
            elif self.group is not None and self.group > re.compile(self.regex).groups:
                found.append((("group",), f"the regex has {re.compile(self.regex).groups} group(s), not {self.group}"))
        return found

    def regex_group(self) -> int:
        """regex_group is the group a regex capture keeps: as given, else 1 if the pattern has one, else 0."""
        if self.group is not None:
            return self.group
        return 1 if self.regex is not None and re.compile(self.regex).groups >= 1 else 0
