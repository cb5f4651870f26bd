"""The one call into the Rust engine: run a Plan, stream Intervals, get a RunResult."""

from __future__ import annotations

from typing import Callable

from surge import _engine
from surge.plan import Plan
from surge.result import Interval, RunResult

IntervalCallback = Callable[[Interval], None]


def run_plan(plan: Plan, on_interval: IntervalCallback | None = None) -> RunResult:
    """run_plan runs ``plan`` on the engine (GIL released) and returns its result.

    ``on_interval`` receives each Interval as it completes. Ctrl-C stops the run early;
    the partial result comes back with ``stop_reason == "interrupted"``.
    Raises PlanError, UnreachableError, ConnectionLimitError or SetupError.
    """
    callback = None
    if on_interval is not None:

        def callback(interval_json: str) -> None:
            on_interval(Interval.model_validate_json(interval_json))

    return RunResult.from_json(_engine.run(plan.to_json(), callback))
