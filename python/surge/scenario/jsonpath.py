"""JSON paths as captures and checks accept them: exactly those the engine's own parser accepts
(``$``, then ``.key``, ``['key']``, ``["key"]``, ``[index]`` or ``[-index]`` steps), checked by
that parser so that a scenario file and a run never disagree."""

from __future__ import annotations

from surge.engine.exceptions import json_path_problem

JSON_PATH_FORMS = "$.id, $.items[0].id, $.items[-1].id, $['odd key']"
"""JSON_PATH_FORMS are examples of accepted JSON paths, for error messages."""


def json_path_error(path: str) -> str | None:
    """json_path_error is the one-line message for a capture's or a check's JSON path the engine
    refuses (the engine's reason after examples of accepted paths), or None when it accepts it."""
    why = json_path_problem(path)
    return None if why is None else f"'{path}' is not a JSON path (e.g. {JSON_PATH_FORMS}): {why}"
