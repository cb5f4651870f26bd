"""Imports and records that crashed or lied (issue 20): each malformed import
(tests/hostile_records.py IMPORTS) and each hand-edit of a results directory (RECORDS, a FIFO,
/dev/zero, a bad time series or log line) is refused in one line that names the file and the
field, exit 2; an import's memory and output grow with its rows, not the time they claim; and
nothing that cannot be (NaN, a negative latency) reaches summary.json or the history, nor is
read from a hand-edited history."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from conftest import surge
from hostile_records import IMPORTS, RECORDS, edit_summary, hey, record_directory
from surge.core.errors import BadInput
from surge.imports import Source, load
from surge.record.stored import StoredRun
from surge.record.writer import write_summary
from test_fuzz_input import run_child

pytestmark = pytest.mark.cpu_heavy  # runs apart from the answer tests (Makefile: test-python)


def _one_line(error: BadInput, path: Path, names: str) -> None:
    text = str(error)
    assert "\n" not in text, text
    assert text.startswith(str(path)), text
    assert names in text, text


@pytest.mark.parametrize("case, name, text, names", IMPORTS, ids=[c[0] for c in IMPORTS])
def test_a_malformed_import_is_refused_in_one_line_naming_the_field(tmp_path, case, name, text, names):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(BadInput) as refused:
        load(Source.read(str(path)))
    _one_line(refused.value, path, names)


@pytest.fixture(scope="module")
def record(tmp_path_factory) -> Path:
    """record is a valid results directory (an imported hey CSV), copied by each test."""
    return record_directory(tmp_path_factory.mktemp("record"))


def test_the_valid_record_reads(record):
    run = StoredRun.from_directory(record)
    assert run.summary["requests"]["responses"] == 60 and len(run.hlog_lines) == len(run.summary["intervals"]) > 2
    assert run.interval_rows()


@pytest.mark.parametrize("case, edit, names", RECORDS, ids=[c[0] for c in RECORDS])
def test_a_hand_edited_summary_is_refused_in_one_line_naming_the_field(tmp_path, record, case, edit, names):
    directory = shutil.copytree(record, tmp_path / "run")
    edit_summary(directory, edit)
    with pytest.raises(BadInput) as refused:
        StoredRun.from_directory(directory)
    _one_line(refused.value, directory / "summary.json", names)


@pytest.mark.parametrize(
    "file, edit, names",
    [
        ("timeseries.csv", lambda t: t + "1.0,all,x\n", "timeseries.csv:"),
        ("timeseries.csv", lambda t: t.replace(",all,", ",all,nan,", 1), "timeseries.csv:2"),
        ("latency.hlog", lambda t: t + "0.000,1.000,2.000,HISTbad\n", "latency.hlog:"),
        ("latency.hlog", lambda t: t + "nan,1.000,2.000\n", "latency.hlog:"),
    ],
)
def test_a_hand_edited_time_series_or_log_is_refused_naming_its_line(tmp_path, record, file, edit, names):
    directory = shutil.copytree(record, tmp_path / "run")
    (directory / file).write_text(edit((directory / file).read_text()))
    with pytest.raises(BadInput) as refused:
        StoredRun.from_directory(directory)
    _one_line(refused.value, directory / file, names)


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
@pytest.mark.parametrize("command", ["show", "report"])
def test_a_summary_that_is_a_fifo_or_dev_zero_is_refused_at_once(tmp_path, record, kind, command):
    directory = shutil.copytree(record, tmp_path / "run")
    (directory / "summary.json").unlink()
    if kind == "fifo":
        os.mkfifo(directory / "summary.json")
    else:
        (directory / "summary.json").symlink_to("/dev/zero")
    code, _out, err, rss = run_child(["-m", "surge", command, str(directory)], timeout=30)
    assert code == 2, err[-2000:]
    assert err.strip().splitlines() == [err.strip()], err
    assert str(directory / "summary.json") in err and ("FIFO" in err or "character device" in err), err
    assert rss < 200 << 20


def test_an_imports_memory_and_output_grow_with_its_rows_not_the_time_it_claims(tmp_path):
    # Two rows 100,000 s apart: main took 55 s and 1.14 GB and wrote 218 MB.
    csv = tmp_path / "far.csv"
    csv.write_text(hey(("0.0100", "200", "0"), ("0.0100", "200", "100000")))
    out = tmp_path / "out"
    code, _out, err, rss = run_child(
        ["-m", "surge", "import", str(csv), "--out", str(out), "--db", str(tmp_path / "h.db")], timeout=60
    )
    assert code == 0, err[-2000:]
    doc = json.loads((out / "summary.json").read_text())
    assert doc["elapsed_s"] == pytest.approx(100_000.01)
    assert [i["index"] for i in doc["intervals"]] == [0, 1, 99_999, 100_000]  # the gap: its first and last
    assert doc["intervals"][1]["requests"]["responses"] == 0
    assert sum(f.stat().st_size for f in out.rglob("*") if f.is_file()) < 1 << 20
    assert rss < 200 << 20, f"peak RSS {rss / 2**20:.0f} MB"


def test_a_refused_import_leaves_nothing_to_poison_the_history(tmp_path):
    bad = tmp_path / "neg.json"
    bad.write_text(IMPORTS[[c[0] for c in IMPORTS].index("k6 summary negative latency")][2])
    db = str(tmp_path / "h.db")
    run = surge("import", str(bad), "--db", db, "--out", str(tmp_path / "out"))
    assert run.code == 2 and run.stderr.count("\n") == 1 and "http_req_duration.avg" in run.stderr, run.stderr
    assert not (tmp_path / "out").exists()
    assert "no runs in the history" in surge("history", "--db", db).stdout


def test_a_record_is_never_written_with_nan(tmp_path):
    path = tmp_path / "summary.json"
    with pytest.raises(ValueError):
        write_summary(path, {"latency": {"p99_ms": float("nan")}})
    assert not path.exists() and not path.with_name("summary.json.tmp").exists()


def test_a_hand_edited_history_record_is_refused_naming_the_history_and_run(tmp_path):
    csv = tmp_path / "ok.csv"
    csv.write_text(hey(("0.0100", "200", "0"), ("0.0200", "200", "0.5")))
    db = tmp_path / "h.db"
    assert surge("import", str(csv), "--db", str(db), "--out", str(tmp_path / "out")).code == 0
    with sqlite3.connect(db) as conn:
        run_id, summary = conn.execute("SELECT run_id, summary FROM records").fetchone()
        doc = json.loads(summary)
        doc["latency"]["all"]["p99_ms"] = -494.0
        conn.execute("UPDATE records SET summary = ? WHERE run_id = ?", (json.dumps(doc), run_id))
    shown = surge("show", run_id, "--db", str(db))
    assert shown.code == 2 and shown.stderr.count("\n") == 1, shown.stderr
    assert f"{db}: run {run_id}: latency.all.p99_ms: -494.0 is outside" in shown.stderr, shown.stderr
