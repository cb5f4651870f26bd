"""Baselines: a run stored under a name (``surge baseline set``), and the comparison of a run
with it (``surge baseline check``): each figure's change, and whether it worsened by more than
the tolerance."""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from surge.core.errors import BadInput
from surge.history.store import History
from surge.record.figures import figures

METRICS: dict[str, tuple[str, str]] = {
    "p50": ("p50_ms", "higher"),
    "p95": ("p95_ms", "higher"),
    "p99": ("p99_ms", "higher"),
    "responses_per_s": ("responses_per_s", "lower"),
    "success_rate": ("success_rate", "lower"),
    "failure_rate": ("failure_rate", "higher"),
}
"""METRICS maps each metric ``--metric`` accepts to its figure (``surge.record.figures``) and
the direction that is worse."""

DEFAULT_METRICS = ("p95", "p99", "responses_per_s", "failure_rate")
"""DEFAULT_METRICS are the metrics ``surge baseline check`` compares unless told."""

DEFAULT_TOLERANCE = 0.05
"""DEFAULT_TOLERANCE is the relative worsening allowed unless told (5%)."""


def set_baseline(history: History, name: str, run_id: str) -> None:
    """set_baseline stores ``run_id`` as the baseline ``name`` (replacing one of that name)."""
    set_baseline_runs(history, name, [run_id])


def set_baseline_runs(history: History, name: str, run_ids: list[str], experiment_id: str | None = None) -> None:
    """set_baseline_runs stores ``run_ids`` (one or more, in order; the runs of ``experiment_id``
    when given) as the baseline ``name``, replacing one of that name."""
    now = datetime.now(UTC).isoformat(timespec="milliseconds")

    def store(c: sqlite3.Connection) -> None:
        c.execute("DELETE FROM baseline_runs WHERE name = ?", (name,))
        c.execute(
            "INSERT OR REPLACE INTO baselines (name, run_id, set_at, experiment_id) VALUES (?, ?, ?, ?)",
            (name, run_ids[0], now, experiment_id),
        )
        c.executemany(
            "INSERT INTO baseline_runs (name, position, run_id) VALUES (?, ?, ?)",
            [(name, i, run_id) for i, run_id in enumerate(run_ids, 1)],
        )

    history.write(store)


@dataclass(frozen=True)
class Baseline:
    """Baseline: the runs stored under a name, in order (one or more), and the experiment they
    were taken from (None when named run by run)."""

    name: str
    run_ids: list[str]
    experiment_id: str | None


def load_baseline(history: History, name: str) -> Baseline:
    """load_baseline is the baseline ``name`` (a baseline set before schema 4 is its one run);
    BadInput when there is none."""
    first = baseline_run(history, name)
    row = history.conn.execute("SELECT experiment_id FROM baselines WHERE name = ?", (name,)).fetchone()
    ids = [
        str(r[0])
        for r in history.conn.execute("SELECT run_id FROM baseline_runs WHERE name = ? ORDER BY position", (name,))
    ]
    return Baseline(name, ids or [first], row[0] if row else None)


def baseline_run(history: History, name: str) -> str:
    """baseline_run is the id of the (first) run stored as baseline ``name``; BadInput when there is none."""
    row = history.conn.execute("SELECT run_id FROM baselines WHERE name = ?", (name,)).fetchone()
    if row is None:
        known = [r[0] for r in history.conn.execute("SELECT name FROM baselines ORDER BY name LIMIT 20")]
        listed = f" (baselines: {', '.join(known)})" if known else " (there are none yet: surge baseline set)"
        raise BadInput("--against", f"no baseline '{name}' in the history{listed}")
    return str(row[0])


@dataclass(frozen=True)
class Comparison:
    """Comparison: one metric of a run against its baseline. ``change`` is (current - baseline)
    / baseline (None when either is missing; ±inf from a baseline of 0); ``verdict`` is
    ``regressed`` (worse by more than the tolerance), ``improved`` (better by more), ``ok``, or
    ``missing`` (a figure not recorded: never counted as a regression)."""

    metric: str
    baseline: float | None
    current: float | None
    change: float | None
    verdict: str


def relative_change(baseline: float, current: float) -> float:
    """relative_change is (current − baseline) / |baseline|; 0 or ±inf from a baseline of 0."""
    if baseline == 0:
        return 0.0 if current == 0 else math.copysign(math.inf, current)
    return (current - baseline) / abs(baseline)


def compare(
    baseline: Mapping[str, Any], current: Mapping[str, Any], metrics: list[str], tolerance: float
) -> list[Comparison]:
    """compare compares the ``metrics`` of two summary documents, allowing ``tolerance``
    (a fraction) of relative worsening."""
    before, after = figures(baseline), figures(current)
    found = []
    for metric in metrics:
        figure, worse = METRICS[metric]
        b, c = before[figure], after[figure]
        if b is None or c is None:
            found.append(Comparison(metric, b, c, None, "missing"))
            continue
        change = relative_change(float(b), float(c))
        worsened = change if worse == "higher" else -change
        verdict = "regressed" if worsened > tolerance else "improved" if worsened < -tolerance else "ok"
        found.append(Comparison(metric, float(b), float(c), change, verdict))
    return found
