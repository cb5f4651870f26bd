"""The history's schema, versioned: ``PRAGMA user_version`` is the number of MIGRATIONS applied;
opening a database applies the missing ones in order, in one transaction; a database written by
a newer surge (a version above ``len(MIGRATIONS)``) is refused, never changed."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable
from pathlib import Path

from surge.core.errors import BadInput
from surge.history.connection import retrying, write

_V1 = """
CREATE TABLE runs (
    id TEXT PRIMARY KEY,            -- meta.run_id: 32 hex digits
    name TEXT NOT NULL,
    tool TEXT NOT NULL,             -- surge, k6, hey, oha
    target TEXT,                    -- secrets masked
    started_at TEXT NOT NULL,       -- UTC ISO 8601 (2026-11-23T22:15:33.123+00:00): sorts as it reads
    ended_at TEXT,
    complete INTEGER NOT NULL DEFAULT 0,
    requests INTEGER,               -- requests sent
    responses_per_s REAL,           -- throughput.responses_per_s, the headline throughput
    success_rate REAL,
    failure_rate REAL,
    p50_ms REAL,
    p95_ms REAL,
    p99_ms REAL,
    verdict TEXT NOT NULL DEFAULT 'none'  -- thresholds: passed, failed or none
);
CREATE INDEX runs_started ON runs (started_at DESC);
CREATE INDEX runs_name ON runs (name, started_at DESC);
CREATE INDEX runs_tool ON runs (tool, started_at DESC);
CREATE TABLE run_tags (
    run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (run_id, key)
) WITHOUT ROWID;
CREATE INDEX run_tags_key_value ON run_tags (key, value);
CREATE TABLE records (              -- what rebuilds the results directory, apart from the listing's columns
    run_id TEXT PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    directory TEXT,                 -- the results directory as the run named it, or NULL
    summary TEXT NOT NULL,          -- summary.json's document (JSON)
    inputs_name TEXT,               -- scenario.yaml or command.txt
    inputs TEXT,                    -- its content, secrets masked
    hlog_start_unix_s REAL          -- latency.hlog's StartTime
);
CREATE TABLE intervals (
    run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    idx INTEGER NOT NULL,
    end_s REAL NOT NULL,
    timeseries TEXT NOT NULL,       -- the interval's timeseries.csv lines
    hlog TEXT NOT NULL,             -- its latency.hlog line (the compressed histogram)
    PRIMARY KEY (run_id, idx)
) WITHOUT ROWID;
"""

_V2 = """
CREATE TABLE baselines (
    name TEXT PRIMARY KEY,
    run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    set_at TEXT NOT NULL
);
"""

_V3 = """
CREATE TABLE experiments (
    id TEXT PRIMARY KEY,            -- experiment_id: 32 hex digits
    kind TEXT NOT NULL,             -- repeat, sweep, capacity, compare, stats
    name TEXT NOT NULL,
    parameters TEXT NOT NULL,       -- JSON: what the experiment was asked to do
    started_at TEXT NOT NULL,       -- UTC ISO 8601, as runs.started_at
    ended_at TEXT,
    complete INTEGER NOT NULL DEFAULT 0,
    directory TEXT,                 -- the experiment's results directory, or NULL
    analysis TEXT,                  -- JSON, or NULL until there is one
    findings TEXT,                  -- JSON list, or NULL
    document TEXT NOT NULL          -- experiment.json's document as last written
);
CREATE INDEX experiments_started ON experiments (started_at DESC);
CREATE INDEX experiments_kind ON experiments (kind, started_at DESC);
CREATE TABLE experiment_runs (
    experiment_id TEXT NOT NULL REFERENCES experiments (id) ON DELETE CASCADE,
    run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    position INTEGER NOT NULL,      -- 1, 2, ... in the order the experiment ran (or chose) them
    role TEXT NOT NULL,             -- repeat 3/10, level vus=500, variant A, run 4/20
    label TEXT,                     -- a short name for tables (3, vus=500, A)
    level REAL,                     -- a sweep's or capacity step's VUs or rate, else NULL
    variant TEXT,                   -- a compare variant's name, else NULL
    PRIMARY KEY (experiment_id, position)
) WITHOUT ROWID;
CREATE INDEX experiment_runs_run ON experiment_runs (run_id);
"""

_V4 = """
ALTER TABLE baselines ADD COLUMN experiment_id TEXT;  -- the experiment whose runs it is, or NULL
CREATE TABLE baseline_runs (        -- every run of a baseline (baselines.run_id is the first)
    name TEXT NOT NULL REFERENCES baselines (name) ON DELETE CASCADE,
    position INTEGER NOT NULL,      -- 1, 2, ...
    run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    PRIMARY KEY (name, position)
) WITHOUT ROWID;
"""


def _script(sql: str) -> Callable[[sqlite3.Connection], None]:
    def apply(conn: sqlite3.Connection) -> None:
        for statement in sql.split(";"):
            if statement.strip():
                conn.execute(statement)

    return apply


MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = [
    _script(_V1),  # 1: runs, tags, records, intervals
    _script(_V2),  # 2: baselines
    _script(_V3),  # 3: experiments and their runs
    _script(_V4),  # 4: baselines of several runs (baseline_runs, baselines.experiment_id)
]
"""MIGRATIONS are the schema's steps in order: applying the first N gives schema version N."""

_TABLES = re.findall(r"CREATE TABLE (\w+)", _V1 + _V2 + _V3 + _V4)
"""_TABLES are the tables surge's schema creates."""

SCHEMA_VERSION = len(MIGRATIONS)
"""SCHEMA_VERSION is the history schema this surge writes."""


class HistoryTooNew(BadInput):
    """HistoryTooNew: the database was written by a newer surge (its schema version is above
    SCHEMA_VERSION); it is left as it is."""


class HistoryForeign(BadInput):
    """HistoryForeign: the database is another program's (schema version 0, with a table of a
    name surge's schema uses); it is left as it is."""


def check_ours(conn: sqlite3.Connection, path: Path) -> None:
    """check_ours reads (never writes) the database at ``path`` before anything is written to
    it: HistoryTooNew when a newer surge wrote it, HistoryForeign when another program's tables
    would collide with surge's (a version-0 database with other tables is adopted)."""
    found, names = retrying(lambda: _version_and_tables(conn))
    _check_version(found, path)
    if found == 0:
        taken = sorted(names & set(_TABLES))
        if taken:
            raise HistoryForeign(
                str(path),
                f"not a surge history (it holds a table '{taken[0]}' of another "
                "program): choose another database with --db",
            )


def _version_and_tables(conn: sqlite3.Connection) -> tuple[int, set[str]]:
    """_version_and_tables reads the schema version and the table names in one read transaction:
    read apart, another process's migration committing between them shows version 0 beside
    surge's tables, which looks like another program's database."""
    conn.execute("BEGIN")
    try:
        found = version(conn)
        names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    finally:
        conn.execute("COMMIT")
    return found, names


def _check_version(found: int, path: Path) -> None:
    if found > SCHEMA_VERSION:
        raise HistoryTooNew(
            str(path),
            f"history schema version {found} is newer than this surge reads "
            f"({SCHEMA_VERSION}): upgrade surge, or choose another database with --db",
        )


def version(conn: sqlite3.Connection) -> int:
    """version is the database's schema version (``PRAGMA user_version``)."""
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def migrate(conn: sqlite3.Connection, path: Path, *, upto: int = SCHEMA_VERSION) -> int:
    """migrate brings the database to schema ``upto`` (the latest by default) and returns its
    version; each process checks again inside the write lock, so processes opening a new
    database together apply each step once. HistoryTooNew when the database is newer."""
    found = version(conn)
    _check_version(found, path)
    if found >= upto:
        return found

    def apply(c: sqlite3.Connection) -> int:
        current = version(c)
        _check_version(current, path)
        for number in range(current, upto):
            MIGRATIONS[number](c)
        c.execute(f"PRAGMA user_version = {max(current, upto)}")
        return max(current, upto)

    return write(conn, apply)
