"""Reading the history: the runs that match a query (``surge history``), a run named by id,
prefix or ``last`` (``surge show``, ``export``, ``baseline``), and a run's whole record; the run
a command's RUN argument names (``lookup``: ``last``, a results directory, read as it is or by
its run id in the history, a run id or a unique prefix of one); and ``--since`` (an ISO 8601
date or time, UTC when it names no zone, or a duration back from now: ``2h``, ``7d``, ``1w``,
``1d12h``)."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from surge.core.errors import BadInput
from surge.core.units import parse_duration
from surge.history.store import History, open_history
from surge.record.figures import FIGURES
from surge.record.read import parse_summary
from surge.record.stored import StoredRun
from surge.record.writer import iso_utc

DEFAULT_LIMIT = 20
"""DEFAULT_LIMIT is how many runs ``surge history`` lists unless told."""

MAX_LIMIT = 1_000_000_000
"""MAX_LIMIT bounds ``--limit`` (SQLite's integers end at 2**63 - 1)."""


def check_limit(limit: int) -> int:
    """check_limit is ``--limit`` when it is from 1 to MAX_LIMIT; BadInput naming it otherwise."""
    if limit < 1:
        raise BadInput("--limit", f"must be at least 1, got {limit:,}" if limit > -(10**30) else "must be at least 1")
    if limit > MAX_LIMIT:
        raise BadInput("--limit", f"must be at most {MAX_LIMIT:,}" + (f", got {limit:,}" if limit < 10**30 else ""))
    return limit


LAST = "last"
"""LAST names the newest run of the history where a RUN is expected."""

_COLUMNS = ("id", "name", "tool", "target", "started_at", "ended_at", "complete", *FIGURES, "verdict")


@dataclass(frozen=True)
class RunQuery:
    """RunQuery: which runs to list, newest first: all the given conditions hold (``name`` and
    ``tool`` exactly, ``target`` as a substring, every ``tags`` pair, started at or after
    ``since``), at most ``limit``."""

    name: str | None = None
    tool: str | None = None
    target: str | None = None
    tags: tuple[tuple[str, str], ...] = ()
    since: datetime | None = None
    limit: int = DEFAULT_LIMIT


@dataclass(frozen=True)
class RunRow:
    """RunRow: one run as the history lists it: its columns (figures None when missing or not
    yet known) and its tags."""

    id: str
    name: str
    tool: str
    target: str | None
    started_at: str
    ended_at: str | None
    complete: bool
    requests: int | None
    responses_per_s: float | None
    success_rate: float | None
    failure_rate: float | None
    p50_ms: float | None
    p95_ms: float | None
    p99_ms: float | None
    verdict: str
    tags: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """to_dict is the row as a JSON object (``surge history --json``)."""
        return asdict(self)


def list_runs(history: History, query: RunQuery) -> list[RunRow]:
    """list_runs lists the runs ``query`` selects, newest first."""
    where, args = [], []
    if query.name is not None:
        where.append("name = ?")
        args.append(query.name)
    if query.tool is not None:
        where.append("tool = ?")
        args.append(query.tool)
    if query.target is not None:
        where.append("instr(target, ?) > 0")
        args.append(query.target)
    if query.since is not None:
        where.append("started_at >= ?")
        args.append(iso_utc(query.since.timestamp()))
    for key, value in query.tags:
        where.append("id IN (SELECT run_id FROM run_tags WHERE key = ? AND value = ?)")
        args.extend([key, value])
    sql = (
        f"SELECT {', '.join(_COLUMNS)} FROM runs {'WHERE ' + ' AND '.join(where) if where else ''} "
        "ORDER BY started_at DESC, rowid DESC LIMIT ?"
    )
    rows = history.conn.execute(sql, [*args, query.limit]).fetchall()
    tags = _tags(history, [r[0] for r in rows])
    return [
        RunRow(**{**dict(zip(_COLUMNS, r, strict=True)), "complete": bool(r[6])}, tags=tags.get(r[0], {})) for r in rows
    ]


def _tags(history: History, ids: list[str]) -> dict[str, dict[str, str]]:
    found: dict[str, dict[str, str]] = {}
    if ids:
        marks = ", ".join("?" * len(ids))
        for run_id, key, value in history.conn.execute(
            f"SELECT run_id, key, value FROM run_tags WHERE run_id IN ({marks}) ORDER BY key", ids
        ):
            found.setdefault(run_id, {})[key] = value
    return found


def resolve_run(history: History, ref: str, *, where: str = "RUN") -> str:
    """resolve_run is the id of the run ``ref`` names: ``last`` (the newest), a full id or a
    unique prefix of one. BadInput naming ``where`` when none matches, or several do (listing them)."""
    if ref == LAST:
        row = history.conn.execute("SELECT id FROM runs ORDER BY started_at DESC, rowid DESC LIMIT 1").fetchone()
        if row is None:
            raise BadInput(where, f"the history is empty ({history.path})")
        return str(row[0])
    if not re.fullmatch(r"[0-9a-fA-F-]{1,64}", ref):
        raise BadInput(where, f"'{ref}' is neither a run id, a prefix of one, 'last', nor a results directory")
    prefix = ref.lower().replace("-", "")
    rows = history.conn.execute(
        "SELECT id, name, started_at FROM runs WHERE id >= ? AND id < ? ORDER BY started_at DESC LIMIT 11",
        (prefix, prefix + "g"),
    ).fetchall()
    if not rows:
        raise BadInput(where, f"no run '{ref}' in the history ({history.path})")
    exact = [r for r in rows if r[0] == prefix]
    if exact:
        return str(exact[0][0])
    if len(rows) > 1:
        shown = ", ".join(f"{r[0][:12]} ({r[1]}, {r[2][:19].replace('T', ' ')})" for r in rows[:10])
        more = " and more" if len(rows) > 10 else ""
        raise BadInput(where, f"'{ref}' matches several runs: {shown}{more}; give more of the id")
    return str(rows[0][0])


def load_run(history: History, run_id: str) -> StoredRun:
    """load_run is the whole record of the run ``run_id`` (which must exist), its summary
    checked as a results directory's is (BadInput naming the history and the run otherwise)."""
    directory, summary, inputs_name, inputs, start = history.conn.execute(
        "SELECT directory, summary, inputs_name, inputs, hlog_start_unix_s FROM records WHERE run_id = ?", (run_id,)
    ).fetchone()
    intervals = history.conn.execute(
        "SELECT timeseries, hlog FROM intervals WHERE run_id = ? ORDER BY idx", (run_id,)
    ).fetchall()
    return StoredRun(
        summary=parse_summary(summary, f"{history.path}: run {run_id}"),
        directory=directory,
        inputs_name=inputs_name,
        inputs=inputs,
        hlog_start_unix_s=start,
        timeseries="".join(t for t, _ in intervals),
        hlog_lines=[h for _, h in intervals],
    )


def _directory(ref: str) -> Path | None:
    return Path(ref) if ref != LAST and Path(ref).is_dir() else None


def lookup(ref: str, db: str | None) -> StoredRun:
    """lookup is the record RUN (``ref``) names: a results directory's files (no history
    needed), else the history's record (``db`` as --db). BadInput naming RUN when there is none."""
    directory = _directory(ref)
    if directory is not None:
        return StoredRun.from_directory(directory)
    with open_history(db) as history:
        return load_run(history, resolve_run(history, ref))


def lookup_id(history: History, ref: str) -> str:
    """lookup_id is the id of the history's run RUN (``ref``) names; a results directory names
    the run whose id its summary.json holds, which must be in the history."""
    directory = _directory(ref)
    if directory is None:
        return resolve_run(history, ref)
    run_id = StoredRun.from_directory(directory).run_id
    if not run_id or history.conn.execute("SELECT 1 FROM runs WHERE id = ?", (run_id,)).fetchone() is None:
        raise BadInput("RUN", f"{ref}: its run ({run_id or 'no run id'}) is not in the history ({history.path})")
    return run_id


def _duration_s(text: str) -> float | None:
    """_duration_s is ``text`` as seconds (a surge duration, ``surge.core.units``: ``2h``, ``7d``,
    ``1w``), or None."""
    if text.strip().startswith("-"):
        return None
    try:
        return parse_duration(text)
    except ValueError:
        return None


def parse_since(text: str, now: datetime | None = None) -> datetime:
    """parse_since is the UTC time ``--since`` names; BadInput when it is neither a time nor a duration."""
    seconds = _duration_s(text)
    if seconds is not None:
        try:
            return (now or datetime.now(UTC)) - timedelta(seconds=seconds)
        except (OverflowError, ValueError):  # further back than year 1, or not a number of seconds
            raise BadInput(
                "--since", f"'{text}' reaches back before the year 1 (give a shorter duration, or a date)"
            ) from None
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError:
        raise BadInput(
            "--since", f"'{text}' is neither a date or time (2026-11-23, 2026-11-23T14:00) nor a duration (30m, 2h, 7d)"
        ) from None
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)
