"""The history database (docs/history.md): where it is, its migrations, what a run records
in it, the listing's filters, finding a run by id, prefix or ``last``, and that a failing
history never costs a run."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from conftest import surge
from history_records import meta, record
from surge.core.errors import BadInput
from surge.history import (
    SCHEMA_VERSION,
    History,
    HistoryTooNew,
    RunQuery,
    list_runs,
    load_run,
    open_history,
    resolve_run,
)
from surge.record import RecordWriter


def _too_new(tmp_path: Path) -> Path:
    path = tmp_path / "new.db"
    raw = sqlite3.connect(path)
    raw.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 5}")
    raw.commit()
    raw.close()
    return path


def test_a_database_from_a_newer_surge_is_refused_and_left_alone(tmp_path):
    path = _too_new(tmp_path)
    with pytest.raises(HistoryTooNew, match=f"history schema version {SCHEMA_VERSION + 5} is newer than this surge"):
        open_history(str(path))
    run = surge("history", "--db", str(path))
    assert run.code == 2 and run.stdout == ""
    assert run.stderr == (
        f"surge: error: {path}: history schema version {SCHEMA_VERSION + 5} is newer than this "
        f"surge reads ({SCHEMA_VERSION}): upgrade surge, or choose another database with --db\n"
    )
    raw = sqlite3.connect(path)
    assert raw.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION + 5
    assert raw.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0


def test_a_run_refuses_to_start_with_a_database_from_a_newer_surge(tmp_path, monkeypatch):
    path = _too_new(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-m", "surge", "run", "http://127.0.0.1:9/", "-d", "1s", "--db", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(f"surge: error: {path}: history schema version") and proc.stderr.count("\n") == 1
    assert not (tmp_path / "results").exists()


def test_a_run_records_its_row_intervals_and_summary(tmp_path):
    with open_history(str(tmp_path / "h.db")) as history:
        directory = tmp_path / "record"
        directory.mkdir()
        writer = RecordWriter(
            directory,
            name="api",
            target_url="http://u:pw@127.0.0.1:1/x?token=abc",
            scenario_file=None,
            argv=["run", "x"],
            history=history,
        )
        writer.meta["tags"] = {"arch": "scale-out"}
        writer.begin()
        row = list_runs(history, RunQuery())[0]
        assert (row.name, row.complete, row.requests, row.tags) == ("api", False, None, {"arch": "scale-out"})
        assert row.target == "http://u:redacted@127.0.0.1:1/x?token=[redacted]"
        stored = load_run(history, row.id)
        assert stored.summary == {"meta": writer.meta} and stored.inputs == "surge run x\n"
        assert stored.directory == str(directory)


def test_an_unwritable_history_costs_a_run_one_warning_line(tmp_path, target):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "surge",
            "run",
            f"{target.url}/health",
            "-c",
            "1",
            "-d",
            "1s",
            "--db",
            str(blocker / "h.db"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 2 and lines[0].startswith(f"surge: warning: {blocker / 'h.db'}: cannot open the history")
    assert lines[1].startswith("results: results/")
    assert json.loads(next((tmp_path / "results").glob("*/summary.json")).read_text())["meta"]["complete"] is True


def _listing(tmp_path: Path) -> tuple[History, dict[str, str]]:
    history = open_history(str(tmp_path / "h.db"))
    ids = {}
    for n, (name, tool, day, tags, target) in enumerate(
        [
            ("api", "surge", 20, {"arch": "scale-out", "build": "a1"}, "http://127.0.0.1:8080/api"),
            ("api", "k6", 21, {"arch": "scale-out", "build": "b2"}, "http://127.0.0.1:8080/api"),
            ("api", "surge", 22, {"arch": "single"}, "http://127.0.0.1:9090/api"),
            ("tasks", "hey", 23, {"arch": "scale-out", "build": "b2"}, "http://127.0.0.1:8080/tasks"),
        ]
    ):
        m = meta(name, tool=tool, started_at=f"2026-11-{day}T10:00:00.000+00:00", tags=tags, target=target)
        record(history, m, p95_ms=float(n + 1))
        ids[f"{name}-{day}"] = m["run_id"]
    return history, ids


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        (RunQuery(), ["tasks-23", "api-22", "api-21", "api-20"]),
        (RunQuery(limit=2), ["tasks-23", "api-22"]),
        (RunQuery(name="api"), ["api-22", "api-21", "api-20"]),
        (RunQuery(tool="surge"), ["api-22", "api-20"]),
        (RunQuery(target=":8080/"), ["tasks-23", "api-21", "api-20"]),
        (RunQuery(tags=(("arch", "scale-out"),)), ["tasks-23", "api-21", "api-20"]),
        (RunQuery(tags=(("arch", "scale-out"), ("build", "b2"))), ["tasks-23", "api-21"]),
        (RunQuery(tags=(("arch", "scale-out"), ("build", "zz"))), []),
        (RunQuery(since=datetime(2026, 11, 21, 10, tzinfo=UTC)), ["tasks-23", "api-22", "api-21"]),
        (RunQuery(name="api", tags=(("arch", "scale-out"),), tool="k6"), ["api-21"]),
    ],
)
def test_history_filters(tmp_path, query, expected):
    history, ids = _listing(tmp_path)
    with history:
        assert [r.id for r in list_runs(history, query)] == [ids[k] for k in expected]


def test_history_command_filters_and_json(tmp_path):
    history, ids = _listing(tmp_path)
    history.close()
    db = str(tmp_path / "h.db")
    run = surge("history", "--db", db, "--tag", "arch=scale-out", "--tag", "build=b2", "--json")
    assert run.code == 0, run.stderr
    rows = run.json()
    assert [r["id"] for r in rows] == [ids["tasks-23"], ids["api-21"]]
    assert rows[0]["tags"] == {"arch": "scale-out", "build": "b2"} and rows[0]["p95_ms"] == 4.0
    assert set(rows[0]) >= {
        "id",
        "name",
        "tool",
        "target",
        "started_at",
        "ended_at",
        "complete",
        "requests",
        "responses_per_s",
        "success_rate",
        "p50_ms",
        "p95_ms",
        "p99_ms",
        "verdict",
    }
    table = surge("history", "--db", db, "--name", "api", "--since", "2026-11-21")
    assert table.code == 0, table.stderr
    lines = [line for line in table.stdout.splitlines() if line[:8] in {i[:8] for i in ids.values()}]
    assert [line[:8] for line in lines] == [ids["api-22"][:8], ids["api-21"][:8]]
    assert "10,000" in lines[0] and "100.000%" in lines[0] and "none" in lines[0] and "yes" in lines[0]
    assert surge("history", "--db", db, "--name", "nothing").stdout == f"no runs match ({db})\n"


def test_empty_history_says_so(tmp_path):
    db = tmp_path / "empty.db"
    run = surge("history", "--db", str(db))
    assert (run.code, run.stdout) == (0, f"no runs in the history ({db})\n")
    assert surge("history", "--db", str(db), "--json").stdout == "[]\n"


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (
            ["--tag", "arch"],
            "surge: error: --tag: expected a key, '=' and a value (e.g. --tag arch=scale-out), got no '='\n",
        ),
        (
            ["--since", "yesterday"],
            "surge: error: --since: 'yesterday' is neither a date or time (2026-11-23, "
            "2026-11-23T14:00) nor a duration (30m, 2h, 7d)\n",
        ),
        (["--limit", "0"], "surge: error: --limit: must be at least 1, got 0\n"),
    ],
)
def test_history_command_refuses_bad_filters_naming_the_flag(args, error):
    run = surge("history", *args)
    assert (run.code, run.stderr) == (2, error)


def test_a_run_is_found_by_id_prefix_or_last_and_an_ambiguous_prefix_lists_the_candidates(tmp_path):
    with open_history(str(tmp_path / "h.db")) as history:
        first = meta("one", run_id="abc1" + "0" * 28, started_at="2026-11-20T10:00:00.000+00:00")
        second = meta("two", run_id="abc2" + "0" * 28, started_at="2026-11-21T10:00:00.000+00:00")
        record(history, first)
        record(history, second)
        assert resolve_run(history, first["run_id"]) == first["run_id"]
        assert resolve_run(history, "abc1") == first["run_id"]
        assert resolve_run(history, "last") == second["run_id"]
        with pytest.raises(
            BadInput,
            match=r"^RUN: 'abc' matches several runs: abc200000000 \(two, 2026-11-21 "
            r"10:00:00\), abc100000000 \(one, 2026-11-20 10:00:00\); give more",
        ):
            resolve_run(history, "abc")
        with pytest.raises(BadInput, match=r"^RUN: no run 'abd' in the history"):
            resolve_run(history, "abd")
    run = surge("show", "abc", "--db", str(tmp_path / "h.db"))
    assert run.code == 2 and run.stderr.startswith("surge: error: RUN: 'abc' matches several runs: ")
    assert run.stderr.count("\n") == 1


def test_processes_writing_at_once_lose_nothing(tmp_path):
    """Four processes each record a run of 150 intervals, one transaction per interval, at once."""
    db = tmp_path / "h.db"
    script = (
        "import sys; sys.path.insert(0, sys.argv[2]); from history_records import meta;"
        "from surge.history import open_history; h = open_history(sys.argv[1]); m = meta('w');"
        "h.begin(m, directory=None, inputs_name=None, inputs=None);"
        "[h.add_interval(m['run_id'], i, float(i), timeseries='x\\n', hlog='y', hlog_start_unix_s=1.0) "
        "for i in range(150)]"
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(db), str(Path(__file__).parents[1])], stderr=subprocess.PIPE, text=True
        )
        for _ in range(4)
    ]
    errors = [p.communicate(timeout=120)[1] for p in procs]
    assert [p.returncode for p in procs] == [0] * 4, errors
    assert errors == [""] * 4
    raw = sqlite3.connect(db)
    assert raw.execute("SELECT count(*) FROM runs").fetchone()[0] == 4
    assert raw.execute("SELECT count(*) FROM intervals GROUP BY run_id").fetchall() == [(150,)] * 4
