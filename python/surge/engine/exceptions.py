"""The engine's and the reference target's exceptions, all under ``surge.core.errors.SurgeError``
(the compiled module creates them when it loads), and the engine's JSONPath check."""

from __future__ import annotations

from surge._engine import (
    ConnectionLimitError,
    PlanError,
    SetupError,
    TargetConfigError,
    TargetInternalError,
    TargetServeError,
    UnreachableError,
    check_json_path,
)
from surge.core.errors import SurgeError

__all__ = [
    "ConnectionLimitError",
    "PlanError",
    "SetupError",
    "SurgeError",
    "TargetConfigError",
    "TargetInternalError",
    "TargetServeError",
    "UnreachableError",
    "json_path_problem",
]


def json_path_problem(path: str) -> str | None:
    """json_path_problem is the engine's reason for refusing ``path`` as a capture's or a check's
    JSON path (one line), or None when the engine accepts it: the very parser the run uses."""
    try:
        check_json_path(path)
    except PlanError as e:
        return str(e.args[0])
    return None
