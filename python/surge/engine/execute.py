"""The engine's entry points as the rest of surge calls them: ``run_plan`` runs one plan (GIL
released) and returns its result document; the reference target's ``check_target_config`` and
``serve_target``; the engine's version and default send slack. This package is the only one
that imports the compiled module ``surge._engine`` (``tests/test_engine_boundary.py`` holds
every other module to it)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from surge import _engine
from surge.core import signals

VERSION: str = _engine.__version__
"""VERSION is the compiled engine's version (the package's ``surge.__version__``)."""

DEFAULT_SEND_SLACK_S: float = _engine.DEFAULT_SEND_SLACK_S
"""DEFAULT_SEND_SLACK_S is the send slack the engine gives an open-model plan without one
(docs/engine.md, "Pacing"); ``surge.plan.model`` keeps a copy, tested equal to this one."""


def run_plan(plan: dict[str, Any], on_interval: Callable[[dict[str, Any]], bool] | None = None) -> dict[str, Any]:
    """run_plan runs one plan (a JSON-ready dict, docs/plan.md) on the engine (GIL released) and
    returns its result document; ``on_interval`` gets each interval and returns True to stop
    the run."""
    callback = None
    if on_interval is not None:

        def callback(text: str) -> bool:
            return on_interval(json.loads(text))

    text = _engine.run(json.dumps(plan), callback)
    with signals.deferred():  # a stop signal now only keeps the next phase from starting
        result: dict[str, Any] = json.loads(text)
        return result


def check_target_config(config: str) -> dict[str, Any]:
    """check_target_config validates a reference target's JSON configuration (ValueError names
    the flag at fault) and returns the engine's report (its ``warnings``)."""
    report: dict[str, Any] = json.loads(_engine.check_target_config(config))
    return report


def serve_target(config: str, on_ready: Callable[[str], None]) -> dict[str, Any]:
    """serve_target serves the reference target with ``config`` until it stops (its duration,
    or a signal), telling ``on_ready`` the address it listens on; returns its summary."""
    summary: dict[str, Any] = json.loads(_engine.serve_target(config, on_ready))
    return summary
