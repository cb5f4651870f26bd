"""History: one open run-history database, and the writes a run makes to it as it goes:
``begin`` (the run's row, incomplete), ``add_interval`` (one committed transaction per
interval), ``finish`` (the figures and the final summary). Reads are in ``surge.history.queries``.
Where the history lives: ``--db PATH``, else ``SURGE_DB``, else ``history.db`` in the user's
data directory (``platformdirs.user_data_dir("surge")``)."""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import platformdirs

from surge.core.errors import BadInput
from surge.core.redact import masked_lines, redact_document, redact_text
from surge.history.connection import BUSY_TIMEOUT_MS, connect, is_busy, write
from surge.history.migrations import check_ours, migrate
from surge.record.figures import FIGURES, figures, has_result, verdict

ENV_VAR = "SURGE_DB"
"""ENV_VAR names the environment variable that chooses the history database when --db is not given."""

FILE_NAME = "history.db"
"""FILE_NAME is the database's file name in the user's data directory."""


def history_path(db: str | None) -> Path:
    """history_path is the database file to use: ``db`` (the --db flag), else $SURGE_DB (when
    set and not empty), else ``<user data dir>/surge/history.db``."""
    if db:
        return Path(db).expanduser()
    env = os.environ.get(ENV_VAR, "")
    if env:
        return Path(env).expanduser()

    return Path(platformdirs.user_data_dir("surge")) / FILE_NAME


DEFAULT_TOOL = "surge"
"""DEFAULT_TOOL is the tool of a record whose ``meta`` names none."""

TOOLS = ("surge", "k6", "hey", "oha")
"""TOOLS are the tools whose runs the history holds (surge's own, and imports)."""


class HistoryUnavailable(BadInput):
    """HistoryUnavailable: the history database cannot be opened or created (an unwritable
    directory, a file that is not a database)."""


def normal_time(text: str | None) -> str | None:
    """normal_time is an ISO 8601 time as UTC with milliseconds (``2026-11-23T22:15:33.123+00:00``,
    a time without a zone taken as UTC), so that the history's times sort as they read."""
    if text is None:
        return None
    when = datetime.fromisoformat(text)
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.astimezone(UTC).isoformat(timespec="milliseconds")


def tag_pairs(tags: Any) -> list[tuple[str, str]]:
    """tag_pairs are a record's ``meta.tags`` as (key, value) pairs: a mapping, or a list of
    ``key=value`` strings or of pairs."""
    if not tags:
        return []
    if isinstance(tags, Mapping):
        return [(str(k), str(v)) for k, v in tags.items()]
    pairs = []
    for tag in tags:
        if isinstance(tag, str):
            key, _, value = tag.partition("=")
            pairs.append((key, value))
        else:
            pairs.append((str(tag[0]), str(tag[1])))
    return pairs


class History:
    """History: the run history database at ``path``, opened (created, migrated) on construction;
    every write is one short transaction retried while another process holds the lock."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._pending: list[Callable[[sqlite3.Connection], None]] = []
        self.waited = False
        """waited: a write had to wait for another process's lock (and said so on stderr)."""
        try:
            self.conn = connect(path, check=lambda c: check_ours(c, path))
        except (sqlite3.Error, OSError) as e:
            raise HistoryUnavailable(str(path), f"cannot open the history: {_why(e)}") from None
        try:
            migrate(self.conn, path)
        except sqlite3.Error as e:
            self.conn.close()
            raise HistoryUnavailable(str(path), f"cannot open the history: {_why(e)}") from None
        except BaseException:
            self.conn.close()
            raise

    def close(self) -> None:
        """close closes the connection."""
        self.conn.close()

    def write(self, work: Callable[[sqlite3.Connection], Any]) -> None:
        """write runs ``work`` in one transaction after the writes still pending (``add_interval``
        without waiting), waiting as long as another process holds the lock, and says so on
        stderr once it has waited a second."""
        self._pending.append(work)
        self._flush(wait=True)

    def _flush(self, *, wait: bool) -> None:
        """_flush writes the pending writes in one transaction; without ``wait``, only if the
        lock is free now (else they stay pending: a run's interval never waits on the history)."""
        pending = list(self._pending)

        def work(c: sqlite3.Connection) -> None:
            for step in pending:
                step(c)

        if wait:
            write(self.conn, work, on_wait=self._waiting)
        else:
            self.conn.execute("PRAGMA busy_timeout = 0")
            try:
                write(self.conn, work, retry_for_s=0)
            except sqlite3.OperationalError as e:
                if is_busy(e):
                    return
                raise
            finally:
                self.conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        del self._pending[: len(pending)]

    def _waiting(self) -> None:
        if not self.waited:
            self.waited = True
            print(
                redact_text(f"surge: waiting for the history {self.path}: another process holds its lock"),
                file=sys.stderr,
                flush=True,
            )

    def __enter__(self) -> History:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def begin(
        self, meta: Mapping[str, Any], *, directory: str | None, inputs_name: str | None, inputs: str | None
    ) -> None:
        """begin records a run as it starts, from its record's ``meta``: its row (incomplete, no
        figures yet), its tags, its inputs and the summary so far (``meta`` only), secrets masked
        (``surge.core.redact``) whatever the caller passed."""
        meta = redact_document(meta)
        inputs = masked_inputs(inputs_name, inputs)
        run_id = meta["run_id"]

        def insert(c: sqlite3.Connection) -> None:
            c.execute(
                "INSERT INTO runs (id, name, tool, target, started_at, ended_at, complete) "
                "VALUES (?, ?, ?, ?, ?, ?, 0)",
                (
                    run_id,
                    meta["name"],
                    meta.get("tool") or DEFAULT_TOOL,
                    meta.get("target"),
                    normal_time(meta["started_at"]),
                    normal_time(meta.get("ended_at")),
                ),
            )
            c.executemany(
                "INSERT OR REPLACE INTO run_tags (run_id, key, value) VALUES (?, ?, ?)",
                [(run_id, k, v) for k, v in tag_pairs(meta.get("tags"))],
            )
            c.execute(
                "INSERT INTO records (run_id, directory, summary, inputs_name, inputs) VALUES (?, ?, ?, ?, ?)",
                (run_id, directory, json.dumps({"meta": dict(meta)}, allow_nan=False), inputs_name, inputs),
            )

        self.write(insert)

    def add_interval(
        self,
        run_id: str,
        index: int,
        end_s: float,
        *,
        timeseries: str,
        hlog: str,
        hlog_start_unix_s: float,
        wait: bool = True,
    ) -> None:
        """add_interval records one interval, committed at once: its timeseries.csv lines and its
        latency.hlog line; the first one dates the log (``hlog_start_unix_s``). Without ``wait``
        (a run's interval, in the engine's time), it is kept pending while another process holds
        the lock, and written with the next write that gets it."""

        def insert(c: sqlite3.Connection) -> None:
            c.execute(
                "INSERT OR REPLACE INTO intervals (run_id, idx, end_s, timeseries, hlog) VALUES (?, ?, ?, ?, ?)",
                (run_id, index, end_s, timeseries, hlog),
            )
            c.execute(
                "UPDATE records SET hlog_start_unix_s = COALESCE(hlog_start_unix_s, ?) WHERE run_id = ?",
                (hlog_start_unix_s, run_id),
            )

        self._pending.append(insert)
        self._flush(wait=wait)

    def finish(self, summary: Mapping[str, Any], *, hlog_start_unix_s: float | None = None) -> None:
        """finish records a run's final summary document (result and ``meta``): the figures as
        columns, the verdict, whether it is complete, and the document itself, secrets masked
        (``surge.core.redact``) whatever the caller passed; ``hlog_start_unix_s`` dates the log when
        no interval did."""
        summary = redact_document(summary)
        meta = summary["meta"]
        found = figures(summary) if has_result(summary) else dict.fromkeys(FIGURES)
        start = hlog_start_unix_s

        def update(c: sqlite3.Connection) -> None:
            c.execute(
                f"UPDATE runs SET started_at = ?, ended_at = ?, complete = ?, verdict = ?, "
                f"{', '.join(f'{k} = ?' for k in FIGURES)} WHERE id = ?",
                (
                    normal_time(meta["started_at"]),
                    normal_time(meta.get("ended_at")),
                    int(bool(meta.get("complete"))),
                    verdict(summary),
                    *found.values(),
                    meta["run_id"],
                ),
            )
            c.execute(
                "UPDATE records SET summary = ?, hlog_start_unix_s = COALESCE(hlog_start_unix_s, ?) WHERE run_id = ?",
                (json.dumps(summary, allow_nan=False), start, meta["run_id"]),
            )

        self.write(update)


def masked_inputs(name: str | None, inputs: str | None) -> str | None:
    """masked_inputs is a run's inputs file as the history keeps it: a scenario file's lines
    masked as its copy is (``surge.core.redact.masked_lines``), a command line as ``redact_text``."""
    if inputs is None:
        return None
    return masked_lines(inputs) if name == "scenario.yaml" else redact_text(inputs)


def _why(error: BaseException) -> str:
    return getattr(error, "strerror", None) or str(error) or type(error).__name__


def open_history(path: str | None) -> History:
    """open_history opens the history ``path`` names (--db), else $SURGE_DB's, else the user's
    (``surge.history.store``), created and migrated as needed. HistoryTooNew when a newer
    surge wrote it, HistoryUnavailable when it cannot be opened (both BadInput: exit 2)."""
    return History(history_path(path))
