"""surge stats over runs already in the history (imported k6, hey and oha files: figures an
import lacks leave that figure's n short), recorded as an experiment of kind stats; and
surge.analysis.describe against numpy/scipy."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import tempfile
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from conftest import surge
from surge.analysis.describe import MIN_RUNS_FOR_OUTLIERS, describe, flags, modified_z_scores
from surge.experiments.figures import KEY_FIGURES, key_figures
from surge.record.schema import validate_experiment

IMPORTS = Path(__file__).parents[2] / "fixtures" / "imports"
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


# surge.analysis.describe against numpy/scipy, and the outlier and CV rules.


def test_describe_equals_numpy_and_scipy_with_missing_values_left_out():
    rng = np.random.default_rng(12)
    values: list[float | None] = [float(v) for v in rng.normal(100, 7, 12)]
    values[3] = None
    x = np.array([v for v in values if v is not None])
    d = describe(values, confidence=0.9)
    n = len(x)
    half = stats.t.ppf(0.95, n - 1) * np.std(x, ddof=1) / np.sqrt(n)
    low, high = stats.t.interval(0.9, n - 1, loc=np.mean(x), scale=stats.sem(x))
    assert d.n == 11 and d.mean == pytest.approx(np.mean(x), rel=1e-12)
    assert d.sd == pytest.approx(np.std(x, ddof=1), rel=1e-12)
    assert (d.ci_low, d.ci_high) == (pytest.approx(low, rel=1e-12), pytest.approx(high, rel=1e-12))
    assert d.ci_high - d.mean == pytest.approx(half, rel=1e-12)
    assert (d.median, d.min, d.max) == (np.median(x), np.min(x), np.max(x))
    assert d.cv == pytest.approx(np.std(x, ddof=1) / np.mean(x), rel=1e-12)
    assert d.z_scores[3] is None and len(d.z_scores) == 12


def test_describe_below_two_values_has_no_sd_ci_or_cv():
    one = describe([None, 4.0])
    assert (one.n, one.mean, one.median, one.sd, one.ci_low, one.ci_high, one.cv) == (
        1,
        4.0,
        4.0,
        None,
        None,
        None,
        None,
    )
    none = describe([None, None])
    assert none.n == 0 and none.mean is None and none.z_scores == (None, None)
    found = flags({"p99_ms": one}, ["1", "2"])
    assert [f.kind for f in found] == ["few_runs"] and "no SD, CI or CV" in found[0].text


def test_modified_z_scores_follow_iglewicz_and_hoaglin():
    x = np.array([10.0, 10.4, 9.8, 10.1, 10.3, 9.9, 14.0])
    mad = np.median(np.abs(x - np.median(x)))
    assert modified_z_scores(list(x)) == pytest.approx(list(0.6745 * (x - np.median(x)) / mad), rel=1e-12)
    d = describe(list(x))
    assert d.outliers == (6,)
    found = flags({"p95_ms": d}, [str(i) for i in range(1, 8)], titles={"p95_ms": "p95 ms"}, cv_limit=0.5)
    assert [(f.kind, f.runs) for f in found] == [("outlier", ("7",))]
    assert found[0].text.startswith("run 7 is an outlier (|M| > 3.5) in p95 ms (M = +")


def test_a_zero_mad_falls_back_to_the_mean_absolute_deviation():
    x = [5.0, 5.0, 5.0, 5.0, 9.0]
    mean_ad = np.mean(np.abs(np.array(x) - 5.0))
    assert modified_z_scores(x) == pytest.approx([0, 0, 0, 0, 0.7979 * 4 / mean_ad])
    assert describe(x).outliers == (4,)
    assert describe([3.0] * 6).outliers == () and modified_z_scores([3.0] * 6) == [0.0] * 6


def test_outliers_need_enough_runs_and_a_high_cv_is_flagged_with_advice():
    few = [10.0, 10.1, 30.0][: MIN_RUNS_FOR_OUTLIERS - 2]
    assert describe(few).outliers == ()
    d = describe([100.0, 130.0, 80.0, 120.0])
    found = flags({"responses_per_s": d}, ["1", "2", "3", "4"], cv_limit=0.1)
    assert [f.kind for f in found] == ["high_cv"]
    assert "run more of them (-n), longer ones (-d), or on a quieter machine" in found[0].advice
    assert flags({"responses_per_s": d}, ["1", "2", "3", "4"], cv_limit=0.25) == []
    assert json.loads(json.dumps(found[0].to_dict()))["figures"] == ["responses_per_s"]


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
    assert row.rstrip().endswith("1.7%"), row
    report = (out / "report.md").read_text()
    assert "| req/s | 10 | 21.88 | 0.38 | 21.61 | 22.15 |" in report
    assert "| req/s mean (CI) | 21.88 (21.61 – 22.15) |" in report, report
    assert "only 0 run(s)" not in report and "behind a figure" not in report  # 10 runs behind every figure held
    assert "| p95 ms | 10 | 606.926 | 50.253 |" in report
    again = surge("report", str(out))
    assert again.code == 0 and not again.stderr, again.stderr
