"""The history database: where it lives, its creation and migrations, its errors costing one warning line, --since."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime

from history_records import meta, record
from surge.history import (
    MIGRATIONS,
    SCHEMA_VERSION,
    History,
    RunQuery,
    baseline_run,
    history_path,
    list_runs,
    migrate,
    open_history,
    set_baseline,
)
from surge.history.connection import connect
from surge.history.queries import parse_since
from surge.record import RecordWriter


def test_location_is_the_flag_then_the_environment_then_the_data_directory(monkeypatch, tmp_path):
    monkeypatch.setenv("SURGE_DB", str(tmp_path / "env.db"))
    assert history_path(str(tmp_path / "flag.db")) == tmp_path / "flag.db"
    assert history_path(None) == tmp_path / "env.db"
    monkeypatch.delenv("SURGE_DB")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert history_path(None) == tmp_path / "data" / "surge" / "history.db"


def test_a_new_database_is_created_with_its_parents_in_wal_mode_at_the_latest_schema(tmp_path):
    path = tmp_path / "a" / "b" / "history.db"
    with open_history(str(path)) as history:
        assert history.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert history.conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == len(MIGRATIONS)
    assert path.is_file()


def test_an_older_database_is_migrated_keeping_its_runs(tmp_path):
    path = tmp_path / "v1.db"
    conn = connect(path)
    assert migrate(conn, path, upto=1) == 1  # as a surge of schema 1 left it, with a run
    m = meta("old")
    conn.execute(
        "INSERT INTO runs (id, name, tool, started_at, complete) VALUES (?, 'old', 'surge', ?, 1)",
        (m["run_id"], m["started_at"]),
    )
    conn.execute("INSERT INTO records (run_id, summary) VALUES (?, ?)", (m["run_id"], json.dumps({"meta": m})))
    assert conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'baselines'").fetchone()[0] == 0
    conn.close()
    with open_history(str(path)) as history:
        assert history.conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert [r.id for r in list_runs(history, RunQuery())] == [m["run_id"]]
        set_baseline(history, "before", m["run_id"])  # the table migration 2 adds
        assert baseline_run(history, "before") == m["run_id"]


def test_a_version_0_database_with_other_tables_is_migrated(tmp_path):
    path = tmp_path / "v0.db"
    raw = sqlite3.connect(path)
    raw.execute("CREATE TABLE notes (text TEXT)")
    raw.execute("INSERT INTO notes VALUES ('kept')")
    raw.commit()
    raw.close()
    with open_history(str(path)) as history:
        assert history.conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert history.conn.execute("SELECT text FROM notes").fetchall() == [("kept",)]
        record(history, meta())
        assert len(list_runs(history, RunQuery())) == 1


def test_history_errors_cost_one_warning_line_never_the_run_or_its_directory(tmp_path, capsys, monkeypatch):
    class Broken(History):
        def add_interval(self, *args, **kwargs):
            raise sqlite3.OperationalError("database or disk is full")

    history = Broken(tmp_path / "h.db")
    directory = tmp_path / "record"
    directory.mkdir()
    writer = RecordWriter(
        directory, name="api", target_url="http://127.0.0.1:1/", scenario_file=None, argv=["run", "x"], history=history
    )
    writer.begin()
    interval = {
        "index": 0,
        "start_s": 0.0,
        "end_s": 1.0,
        "requests": {"succeeded": 1, "failed": 0, "shed": 0},
        "latency": {"all": {k: 1.0 for k in ("p50_ms", "p90_ms", "p95_ms", "p99_ms", "max_ms")}},
        "sent_per_s": 1.0,
        "responses_per_s": 1.0,
        "in_flight": 0,
        "peak_concurrency": 1,
        "open_connections": 1,
        "latency_histogram": "HISTFAAAAA",
    }
    writer.on_interval(interval)
    writer.on_interval({**interval, "index": 1, "start_s": 1.0, "end_s": 2.0})
    writer.finish({"requests": {"sent": 2}, "stop_reason": "duration", "started_at_unix_s": 1.0}, interrupted=False)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(
        f"surge: warning: history {tmp_path / 'h.db'}: database or disk is full; this run is recorded only in"
    )
    assert len((directory / "timeseries.csv").read_text().splitlines()) == 3  # header + 2 intervals
    assert json.loads((directory / "summary.json").read_text())["meta"]["complete"] is True
    assert list_runs(history, RunQuery())[0].complete is False  # recorded up to the failure, then left alone


def test_since_reads_times_and_durations():
    now = datetime(2026, 11, 23, 12, tzinfo=UTC)
    assert parse_since("2h", now) == datetime(2026, 11, 23, 10, tzinfo=UTC)
    assert parse_since("7d", now) == datetime(2026, 11, 16, 12, tzinfo=UTC)
    assert parse_since("1d12h", now) == datetime(2026, 11, 22, 0, tzinfo=UTC)
    assert parse_since("2026-11-20", now) == datetime(2026, 11, 20, tzinfo=UTC)
    assert parse_since("2026-11-20T08:00+02:00", now) == datetime(2026, 11, 20, 6, tzinfo=UTC)


def test_a_migration_committing_while_another_process_checks_the_database_is_not_foreign(tmp_path):
    """CI once saw a new history called "another program's": one process read version 0, another
    committed the schema, then the first read surge's tables. The check reads both in one snapshot:
    here the other process's migration commits exactly between the two reads."""
    from surge.history.migrations import check_ours, migrate

    db = tmp_path / "h.db"
    sqlite3.connect(db).execute("PRAGMA journal_mode = WAL").fetchone()  # version 0, no tables
    checking = sqlite3.connect(db, isolation_level=None)
    other = connect(db)
    migrated = []

    def between_the_reads(statement: str) -> None:
        if "sqlite_master" in statement and not migrated:
            migrated.append(migrate(other, db))

    checking.set_trace_callback(between_the_reads)
    check_ours(checking, db)
    assert migrated == [SCHEMA_VERSION]
    assert check_ours(sqlite3.connect(db), db) is None
