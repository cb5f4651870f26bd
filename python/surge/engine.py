"""The one call into the Rust engine: run a Plan, stream Intervals, get a RunResult."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from surge import _engine
from surge.plan import Plan

if TYPE_CHECKING:
    from surge.result import Interval, RunResult

IntervalCallback = Callable[["Interval"], None]


def run_plan_json(plan: Plan, on_interval: IntervalCallback | None = None) -> str:
    """run_plan_json is run_plan returning the engine's result document as JSON text."""
    callback = None
    if on_interval is not None:
        from surge.result import Interval

        def callback(interval_json: str) -> None:
            on_interval(Interval.model_validate_json(interval_json))

    return _engine.run(plan.to_json(), callback)


def run_plan(plan: Plan, on_interval: IntervalCallback | None = None) -> RunResult:
    """run_plan runs ``plan`` on the engine (GIL released) and returns its result.

    ``on_interval`` receives each Interval as it completes. Ctrl-C stops the run early;
    the partial result comes back with ``stop_reason == "interrupted"``.
    Raises PlanError, UnreachableError, ConnectionLimitError or SetupError.
    """
    from surge.result import RunResult

    return RunResult.from_json(run_plan_json(plan, on_interval))
