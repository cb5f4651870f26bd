"""The run history: every run recorded in an SQLite database (docs/history.md) as it goes,
with the figures people query on as columns and everything needed to rebuild its results
directory; several surge processes may record at once."""

from surge.history.baselines import baseline_run, set_baseline
from surge.history.migrations import MIGRATIONS, SCHEMA_VERSION, HistoryTooNew, migrate
from surge.history.queries import LAST, RunQuery, RunRow, list_runs, load_run, lookup, lookup_id, resolve_run
from surge.history.store import TOOLS, History, HistoryUnavailable, history_path, open_history
from surge.record.stored import StoredRun

__all__ = [
    "LAST",
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "TOOLS",
    "History",
    "HistoryTooNew",
    "HistoryUnavailable",
    "RunQuery",
    "RunRow",
    "StoredRun",
    "baseline_run",
    "history_path",
    "list_runs",
    "load_run",
    "lookup",
    "lookup_id",
    "migrate",
    "open_history",
    "resolve_run",
    "set_baseline",
]
