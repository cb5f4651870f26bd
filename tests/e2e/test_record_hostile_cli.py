"""Hostile records through the CLI: a summary that is a FIFO or /dev/zero, an import whose memory
must follow its rows, a refused import and a hand-edited history record."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3

import pytest

from conftest import surge
from hostile_records import IMPORTS, hey
from test_fuzz_input import run_child

pytestmark = pytest.mark.cpu_heavy  # runs apart from the answer tests (Makefile: test-python)


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
