"""Baselines: runs stored under a name (``surge baseline set``) and read back for ``surge
baseline check`` (whose arithmetic is surge.analysis.regression)."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime

from surge.core.errors import BadInput
from surge.history.store import History


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
