"""The history's SQLite connection: WAL mode (readers never wait for the writer), a busy
timeout, and writes in short ``BEGIN IMMEDIATE`` transactions retried while another surge
process holds the lock, so that several processes recording at once lose nothing and never
fail with "database is locked"."""

from __future__ import annotations

import random
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

BUSY_TIMEOUT_MS = 1_000
"""BUSY_TIMEOUT_MS is how long SQLite itself waits for a lock before reporting SQLITE_BUSY (after
which surge says it is waiting, and goes on retrying)."""

RETRY_FOR_S = 120.0
"""RETRY_FOR_S is how long surge keeps retrying a locked write (after SQLite's own wait) before
giving up: far longer than any of its transactions holds the lock (milliseconds)."""

T = TypeVar("T")


def connect(path: Path, check: Callable[[sqlite3.Connection], None] | None = None) -> sqlite3.Connection:
    """connect opens the database at ``path`` (its directory created with its parents) in
    autocommit mode (transactions are explicit), WAL journal, synchronous NORMAL (a committed
    transaction survives the process being killed; only a power cut may lose the last ones).
    ``check`` reads the database first and raises to refuse it (too new, not surge's): a
    refused database is left untouched, its journal mode too."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False)
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        if check is not None:
            check(conn)
        retrying(lambda: conn.execute("PRAGMA journal_mode = WAL").fetchone())
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
    except BaseException:
        conn.close()
        raise
    return conn


def is_busy(error: sqlite3.Error) -> bool:
    """is_busy tells whether ``error`` is SQLITE_BUSY/SQLITE_LOCKED: another connection holds the
    lock, and trying again later succeeds."""
    code = getattr(error, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
    text = str(error).lower()
    return "database is locked" in text or "database is busy" in text or "database table is locked" in text


def retrying(
    action: Callable[[], T], *, retry_for_s: float = RETRY_FOR_S, on_wait: Callable[[], None] | None = None
) -> T:
    """retrying runs ``action`` and, while it fails because the database is busy, runs it again
    after a short random pause (so waiting processes do not retry in step), for up to
    ``retry_for_s``; any other error, or the last busy one, is raised. ``on_wait`` is told
    once, at the first busy failure (SQLite has waited BUSY_TIMEOUT_MS by then)."""
    deadline = time.monotonic() + retry_for_s
    pause = 0.005
    while True:
        try:
            return action()
        except sqlite3.OperationalError as e:
            if not is_busy(e) or time.monotonic() >= deadline:
                raise
            if on_wait is not None:
                on_wait()
                on_wait = None
        time.sleep(pause * (0.5 + random.random()))
        pause = min(pause * 2, 0.25)


def write(
    conn: sqlite3.Connection,
    work: Callable[[sqlite3.Connection], T],
    *,
    on_wait: Callable[[], None] | None = None,
    retry_for_s: float = RETRY_FOR_S,
) -> T:
    """write runs ``work`` in one ``BEGIN IMMEDIATE`` transaction (the write lock taken at the
    start, so it never fails half-way for a lock), committed at the end, retried whole while
    the database is busy (for ``retry_for_s``; ``on_wait`` told once when it first is); rolled
    back on any error."""

    def attempt() -> T:
        conn.execute("BEGIN IMMEDIATE")
        try:
            result = work(conn)
            conn.execute("COMMIT")
            return result
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    return retrying(attempt, retry_for_s=retry_for_s, on_wait=on_wait)
