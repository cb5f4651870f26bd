"""--no-save on every experiment command (repeat, sweep, capacity, compare, stats): no results
directory and no history row, the output (tables, --json) still with its figures; --out (and
--db where it is only written) refused with it."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from conftest import surge_in

NEW_RUNS = {
    "repeat": ["-d", "1s", "-c", "1", "-n", "2"],
    "sweep": ["--vus", "1,2", "-d", "1s", "--warmup", "0s"],
    "capacity": [
        "--slo",
        "p(99) < 1s",
        "--start-rate",
        "100",
        "--max-rate",
        "200",
        "--step-duration",
        "1s",
        "--max-steps",
        "3",
        "--max-late",
        "50%",
    ],
    "compare": ["-d", "1s", "-c", "1", "-n", "1", "--vus", "1,2"],
}
"""NEW_RUNS are each experiment command's smallest settings that run new tests (a few 1 s runs)."""


def history_rows(db: Path) -> dict[str, int]:
    """history_rows counts the rows of the history's runs and experiments (none when it does not exist)."""
    if not db.exists():
        return {"runs": 0, "experiments": 0, "experiment_runs": 0}
    with sqlite3.connect(db) as conn:
        return {
            t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
            for t in ("runs", "experiments", "experiment_runs")
        }


def check_figures(doc: dict, runs: int) -> None:
    """check_figures asserts that an experiment's --json document holds ``runs`` runs with their
    figures, recorded nowhere."""
    assert doc["directory"] is None and len(doc["runs"]) == runs, doc["runs"]
    for entry in doc["runs"]:
        assert entry["directory"] is None and len(entry["run_id"]) == 32
        assert entry["figures"]["responses_per_s"] > 0 and entry["figures"]["p99_ms"] > 0, entry
    assert doc["analysis"] is not None


@pytest.mark.parametrize("command", sorted(NEW_RUNS))
def test_no_save_experiment_writes_nothing_and_prints_its_figures(command, target, history_db, tmp_path):
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    before = history_rows(history_db)
    text = surge_in(cwd, command, f"{target.url}/health", *NEW_RUNS[command], "--no-save")
    as_json = surge_in(cwd, command, f"{target.url}/health", *NEW_RUNS[command], "--no-save", "--json")
    assert text.returncode == 0 and as_json.returncode == 0, text.stderr + as_json.stderr
    assert list(cwd.iterdir()) == [] and history_rows(history_db) == before
    assert "p99 ms" in text.stdout and "experiment incomplete" not in text.stdout, text.stdout
    check_figures(json.loads(as_json.stdout), runs=len(json.loads(as_json.stdout)["runs"]))


def test_no_save_over_runs_of_the_history_adds_no_experiment(target, history_db, tmp_path):
    saved, cwd = tmp_path / "saved", tmp_path / "cwd"
    saved.mkdir()
    cwd.mkdir()
    for arch in ("a", "a", "b", "b"):
        made = surge_in(saved, "run", f"{target.url}/health", "-d", "1s", "-c", "1", "--tag", f"arch={arch}")
        assert made.returncode == 0, made.stderr
    before = history_rows(history_db)
    stats = surge_in(cwd, "stats", "--tag", "arch=a", "--no-save", "--json")
    compare = surge_in(
        cwd, "compare", "--group", "arch=a", "--group", "arch=b", "--no-save", "--json", "--db", str(history_db)
    )  # --db names the history read: allowed
    assert stats.returncode == 0 and compare.returncode == 0, stats.stderr + compare.stderr
    assert list(cwd.iterdir()) == [] and history_rows(history_db) == before == {**before, "experiments": 0}
    stats_doc, compare_doc = json.loads(stats.stdout), json.loads(compare.stdout)
    assert stats_doc["directory"] is None and stats_doc["analysis"]["statistics"]["responses_per_s"]["n"] == 2
    assert compare_doc["directory"] is None and len(compare_doc["runs"]) == 4


@pytest.mark.parametrize(
    "args, flag",
    [
        (["repeat", "URL", "--out", "x"], "--out"),
        (["repeat", "URL", "--db", "x.db"], "--db"),
        (["sweep", "URL", "--vus", "1,2", "--out", "x"], "--out"),
        (["sweep", "URL", "--vus", "1,2", "--db", "x.db"], "--db"),
        (["capacity", "URL", "--slo", "p(99) < 1s", "--out", "x"], "--out"),
        (["capacity", "URL", "--slo", "p(99) < 1s", "--db", "x.db"], "--db"),
        (["compare", "URL", "--vus", "1,2", "--out", "x"], "--out"),
        (["compare", "URL", "--vus", "1,2", "--db", "x.db"], "--db"),
        (["compare", "--group", "a=1", "--group", "a=2", "--out", "x"], "--out"),
        (["stats", "last", "--out", "x"], "--out"),
    ],
)
def test_no_save_with_a_flag_that_records_is_refused(args, flag, tmp_path):
    args = [a.replace("URL", "http://127.0.0.1:9/") for a in args]
    run = surge_in(tmp_path, *args, "--no-save")
    assert run.returncode == 2 and run.stderr.splitlines() == [f"surge: error: {flag}: cannot be used with --no-save"]
    assert list(tmp_path.iterdir()) == []
