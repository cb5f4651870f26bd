"""History: one open run-history database, and the writes a run makes to it as it goes:
``begin`` (the run's row, incomplete), ``add_interval`` (one committed transaction per
interval), ``finish`` (the figures and the final summary). Reads are in ``surge.history.queries``."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from surge.errors import BadInput
from surge.history.connection import connect, write
from surge.history.figures import FIGURES, figures, has_result, verdict
from surge.history.location import history_path
from surge.history.migrations import migrate

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
        when = when.replace(tzinfo=timezone.utc)
    return when.astimezone(timezone.utc).isoformat(timespec="milliseconds")


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
        try:
            self.conn = connect(path)
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

    def __enter__(self) -> History:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def begin(self, meta: Mapping[str, Any], *, directory: str | None, inputs_name: str | None,
              inputs: str | None) -> None:
        """begin records a run as it starts, from its record's ``meta`` (masked): its row
        (incomplete, no figures yet), its tags, its inputs and the summary so far (``meta`` only)."""
        run_id = meta["run_id"]

        def insert(c: sqlite3.Connection) -> None:
            c.execute("INSERT INTO runs (id, name, tool, target, started_at, ended_at, complete) "
                      "VALUES (?, ?, ?, ?, ?, ?, 0)",
                      (run_id, meta["name"], meta.get("tool") or DEFAULT_TOOL, meta.get("target"),
                       normal_time(meta["started_at"]), normal_time(meta.get("ended_at"))))
            c.executemany("INSERT OR REPLACE INTO run_tags (run_id, key, value) VALUES (?, ?, ?)",
                          [(run_id, k, v) for k, v in tag_pairs(meta.get("tags"))])
            c.execute("INSERT INTO records (run_id, directory, summary, inputs_name, inputs) VALUES (?, ?, ?, ?, ?)",
                      (run_id, directory, json.dumps({"meta": dict(meta)}, allow_nan=False), inputs_name, inputs))

        write(self.conn, insert)

    def add_interval(self, run_id: str, index: int, end_s: float, *, timeseries: str, hlog: str,
                     hlog_start_unix_s: float) -> None:
        """add_interval records one interval, committed at once: its timeseries.csv lines and its
        latency.hlog line; the first one dates the log (``hlog_start_unix_s``)."""
        def insert(c: sqlite3.Connection) -> None:
            c.execute("INSERT OR REPLACE INTO intervals (run_id, idx, end_s, timeseries, hlog) VALUES (?, ?, ?, ?, ?)",
                      (run_id, index, end_s, timeseries, hlog))
            c.execute("UPDATE records SET hlog_start_unix_s = COALESCE(hlog_start_unix_s, ?) WHERE run_id = ?",
                      (hlog_start_unix_s, run_id))

        write(self.conn, insert)

    def finish(self, summary: Mapping[str, Any], *, hlog_start_unix_s: float | None = None) -> None:
        """finish records a run's final summary document (result and ``meta``, masked): the
        figures as columns, the verdict, whether it is complete, and the document itself;
        ``hlog_start_unix_s`` dates the log when no interval did."""
        meta = summary["meta"]
        found = figures(summary) if has_result(summary) else dict.fromkeys(FIGURES)
        start = hlog_start_unix_s

        def update(c: sqlite3.Connection) -> None:
            c.execute(f"UPDATE runs SET ended_at = ?, complete = ?, verdict = ?, "
                      f"{', '.join(f'{k} = ?' for k in FIGURES)} WHERE id = ?",
                      (normal_time(meta.get("ended_at")), int(bool(meta.get("complete"))), verdict(summary),
                       *found.values(), meta["run_id"]))
            c.execute("UPDATE records SET summary = ?, hlog_start_unix_s = COALESCE(hlog_start_unix_s, ?) "
                      "WHERE run_id = ?", (json.dumps(summary, allow_nan=False), start, meta["run_id"]))

        write(self.conn, update)


def _why(error: BaseException) -> str:
    return getattr(error, "strerror", None) or str(error) or type(error).__name__


def open_history(path: str | None) -> History:
    """open_history opens the history ``path`` names (--db), else $SURGE_DB's, else the user's
    (``surge.history.location``), created and migrated as needed. HistoryTooNew when a newer
    surge wrote it, HistoryUnavailable when it cannot be opened (both BadInput: exit 2)."""
    return History(history_path(path))
