"""The engine's entry points as the rest of surge calls them: ``run_plan`` runs one plan (GIL
released) and returns its result document, ``merge_reports`` merges a distributed run's
generators into one, and ``result_document`` makes that document ready for
output; the reference target's ``check_target_config`` and ``serve_target``; the engine's
version and default send slack; the engine's and the reference target's exceptions, all under
``surge.core.errors.SurgeError`` (the compiled module creates them when it loads), and the
engine's JSONPath check. This package is the only one that imports the compiled module
``surge._engine`` (``tests/unit/engine/test_engine_boundary.py`` holds every other module to it)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from surge import _engine
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
from surge.core import signals
from surge.core.errors import SurgeError
from surge.core.redact import redact_document

__all__ = [
    "DEFAULT_SEND_SLACK_S",
    "VERSION",
    "ConnectionLimitError",
    "PlanError",
    "SetupError",
    "SurgeError",
    "TargetConfigError",
    "TargetInternalError",
    "TargetServeError",
    "UnreachableError",
    "check_target_config",
    "json_path_problem",
    "merge_reports",
    "result_document",
    "run_plan",
    "serve_target",
]

VERSION: str = _engine.__version__
"""VERSION is the compiled engine's version (the package's ``surge.__version__``)."""

DEFAULT_SEND_SLACK_S: float = _engine.DEFAULT_SEND_SLACK_S
"""DEFAULT_SEND_SLACK_S is the send slack the engine gives an open-model plan without one
(docs/engine.md, "Pacing"); ``surge.plan.model`` keeps a copy, tested equal to this one."""


def run_plan(
    plan: dict[str, Any],
    on_interval: Callable[[dict[str, Any]], bool] | None = None,
    *,
    on_report: Callable[[str], bool] | None = None,
    poll: Callable[[], bool] | None = None,
) -> dict[str, Any]:
    """run_plan runs one plan (a JSON-ready dict, docs/plan.md) on the engine (GIL released) and
    returns its result document; ``on_interval`` gets each interval and returns True to stop
    the run. A distributed run's generator also gets each worker report encoded for the
    driver (``on_report``) and is asked about ten times a second whether to stop (``poll``);
    True from either stops the run."""
    callback = None
    if on_interval is not None:

        def callback(text: str) -> bool:
            return on_interval(json.loads(text))

    text = _engine.run(json.dumps(plan), callback, on_report, poll)
    with signals.deferred():  # a stop signal now only keeps the next phase from starting
        result: dict[str, Any] = json.loads(text)
        return result


Received = list[tuple[int, str | None]] | None
"""Received is what a distributed run's transport hands the driver at each call: (generator,
report) pairs, report None when that generator is lost; None once every generator has ended."""


def merge_reports(
    plan: dict[str, Any],
    generators: int,
    start_at_unix_s: float,
    receive: Callable[[float, bool], Received],
    on_interval: Callable[[dict[str, Any]], bool] | None = None,
) -> dict[str, Any]:
    """merge_reports is a distributed run's driver (docs/distributed.md): ``plan`` is the whole
    plan its ``generators`` ran, each with its stripe and the same threads, from
    ``start_at_unix_s``; ``receive(wait_s, stopping)`` brings their reports (``stopping``:
    the driver is ending the run early), the engine merges them as one run's threads and
    hands each merged interval to ``on_interval`` (True: abort); returns the merged result."""
    callback = None
    if on_interval is not None:

        def callback(text: str) -> bool:
            return on_interval(json.loads(text))

    text = _engine.merge(json.dumps(plan), generators, start_at_unix_s, receive, callback)
    with signals.deferred():
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


def result_document(doc: dict[str, Any], *, interval_histograms: bool = False) -> dict[str, Any]:
    """result_document is an engine result document made ready for output: secrets masked
    (``surge.core.redact``: the URL's credentials and secret parameters, secret-named pools), the
    per-interval histograms dropped unless asked for (the run's full histograms stay), and
    ``stop_signal`` added: the stop signal that ended the run ("SIGTERM"), or null."""
    if not interval_histograms:
        for interval in doc.get("intervals", []):
            interval.pop("latency_histogram", None)
    out: dict[str, Any] = redact_document(doc)
    signum = signals.received()
    out["stop_signal"] = signals.signal_name(signum) if signum is not None else None
    return out


def json_path_problem(path: str) -> str | None:
    """json_path_problem is the engine's reason for refusing ``path`` as a capture's or a check's
    JSON path (one line), or None when the engine accepts it: the very parser the run uses."""
    try:
        check_json_path(path)
    except PlanError as e:
        return str(e.args[0])
    return None
