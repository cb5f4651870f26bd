"""surge stats end to end: over imported runs (equal to scipy), by run ids, prefixes and a name,
bad input in one line, and seed 001's baseline exports."""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
from pathlib import Path

import numpy as np
import pytest

from conftest import surge
from surge.record.figures import KEY_FIGURES, key_figures
from surge.record.schema import validate_experiment

IMPORTS = Path(__file__).parents[1] / "fixtures" / "imports"


K6_FILES = ("k6-summary-export.json", "k6-handle-summary.json", "k6-ndjson.json")


PAST = 1_577_836_800  # 2020-01-01 UTC: before any fixture's own start time
"""PAST dates the copies of fixtures that keep no start time (an import is dated by its file's
modification time then), so the history's order does not depend on when git wrote the files."""


def _import(*names: str) -> list[str]:
    """_import imports copies of the fixtures, those without a start time dated an hour apart in
    the order given, and returns their run ids, oldest first (an import is dated by its own
    start, so the history orders them by that, not by when they were imported)."""
    with tempfile.TemporaryDirectory(prefix="surge-stats-") as copies:
        for number, name in enumerate(names):
            copy = Path(copies) / name
            shutil.copyfile(IMPORTS / name, copy)
            os.utime(copy, (PAST + 3600 * number, PAST + 3600 * number))
            run = surge("import", str(copy), "--tag", "set=seed001")
            assert run.code == 0, run.stderr
    return [r["id"] for r in reversed(surge("history", "--json").json())]


def test_stats_over_imported_runs_counts_n_per_figure_and_equals_scipy(history_db):
    ids = _import(*K6_FILES, "hey-6k.csv", "oha-6k.json")
    run = surge("stats", "--tag", "set=seed001", "--json")
    assert run.code == 0, run.stderr
    doc = run.json()
    validate_experiment(doc)
    assert doc["kind"] == "stats" and doc["complete"] is True
    assert [e["run_id"] for e in doc["runs"]] == ids  # oldest first
    summaries = [surge("show", run_id, "--json").json() for run_id in ids]
    statistics = doc["analysis"]["statistics"]
    for figure in KEY_FIGURES:
        values = [v for v in (key_figures(s)[figure] for s in summaries) if v is not None]
        got = statistics[figure]
        assert got["n"] == len(values), figure
        assert got["mean"] == pytest.approx(np.mean(values), rel=1e-12)
        assert got["sd"] == pytest.approx(np.std(values, ddof=1), rel=1e-9, abs=1e-12)
        assert got["median"] == pytest.approx(np.median(values), rel=1e-12)
    # The k6 summary export has no p99: n says so (k6's http_reqs.rate is responses/s).
    assert statistics["p99_ms"]["n"] == 4 and statistics["responses_per_s"]["n"] == 5
    db = sqlite3.connect(history_db)
    assert db.execute("SELECT kind, complete FROM experiments").fetchall() == [("stats", 1)]
    assert [r[0] for r in db.execute("SELECT run_id FROM experiment_runs ORDER BY position")] == ids


def test_stats_by_run_ids_and_prefixes_and_a_name(history_db):
    ids = _import(*K6_FILES)
    run = surge("stats", ids[0][:10], ids[2], "last")
    assert run.code == 2 and "names run" in run.stderr and "a second time" in run.stderr, run.stderr
    run = surge("stats", ids[0][:10], ids[1])
    assert run.code == 0, run.stderr
    assert "Statistics over the runs" in run.stdout and "p99 ms       │ 1 │" in run.stdout
    assert "fewer than 2 values of p99 ms: no SD, CI or CV" in run.stdout  # k6 summaries have req/s
    by_name = surge("stats", "--name", "k6-ndjson", "--json").json()
    ndjson = [r["id"] for r in surge("history", "--name", "k6-ndjson", "--json").json()]
    assert [e["run_id"] for e in by_name["runs"]] == ndjson and by_name["name"] == "k6-ndjson"


@pytest.mark.parametrize(
    "args, error",
    [
        ([], "surge: error: RUN: give the runs"),
        (["abc", "--name", "x"], "surge: error: --name/--tag/--tool: give either RUN... or a selection, not both"),
        (["--name", "nothing-like-it"], "surge: error: --name/--tag/--tool: no run in the history matches"),
        (["0123abcd"], "surge: error: RUN: no run '0123abcd' in the history"),
        (["not-an-id!"], "surge: error: RUN: 'not-an-id!' is neither a run id"),
        (["last", "--cv-limit", "0"], "surge: error: --cv-limit: expected a percentage above 0"),
    ],
)
def test_stats_bad_input_is_one_line_exit_2(args, error):
    run = surge("stats", *args)
    assert run.code == 2 and run.stderr.startswith(error) and run.stderr.count("\n") == 1, run.stderr


SEED_001 = IMPORTS / "seed001"
"""SEED_001 holds seed 001's k6 --summary-export files (its README.md)."""


def test_stats_of_seed_001s_ten_baseline_exports_state_its_figures_at_their_precision(tmp_path):
    copies = tmp_path / "exports"
    copies.mkdir()
    for number, source in enumerate(sorted(SEED_001.glob("baseline-*.json"))):
        (copies / source.name).write_bytes(source.read_bytes())
        os.utime(copies / source.name, (PAST + 3600 * number,) * 2)
    imported = surge("import", *sorted(str(p) for p in copies.iterdir()), "--tag", "vus=35")
    assert imported.code == 0, imported.stderr
    out = tmp_path / "stats"
    run = surge("stats", "--tag", "vus=35", "--out", str(out))
    assert run.code == 0 and "cannot write the report" not in run.stderr, run.stderr
    # The seed's own table: 21.88 ± 0.38 req/s, 95 % CI [21.61, 22.15], CV 1.7 %.
    row = next(line for line in run.stdout.splitlines() if line.startswith("req/s "))
    assert [c.strip() for c in row.split("│")[1:6]] == ["10", "21.88", "0.38", "21.61", "22.15"], row
    assert row.rstrip().endswith("1.727%"), row  # CV: a percentage with three decimals, as in report.md
    report = (out / "report.md").read_text()
    assert "| req/s | 10 | 21.88 | 0.38 | 21.61 | 22.15 |" in report
    assert "| req/s mean (CI) | 21.88 (21.61 – 22.15) |" in report, report
    assert "only 0 run(s)" not in report and "behind a figure" not in report  # 10 runs behind every figure held
    assert "| p95 ms | 10 | 606.926 | 50.253 |" in report
    again = surge("report", str(out))
    assert again.code == 0 and not again.stderr, again.stderr
