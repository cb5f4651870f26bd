"""surge repeat: n short runs against the reference target through surge run's path, recorded as
one experiment; every statistic equal to numpy/scipy's recomputed from the runs' own
summary.json files; stop signals during a run and between runs; bad input."""

from __future__ import annotations

import json
import signal
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from conftest import SCRATCH, intervals_logged, run_and_signal, surge, tiny_scenario
from surge.record.figures import KEY_FIGURES
from surge.record.schema import validate_experiment, validate_file


def _recomputed(values: list[float]) -> dict[str, float]:
    x = np.array(values, dtype=float)
    n = len(x)
    mean, sd = float(np.mean(x)), float(np.std(x, ddof=1))
    half = float(stats.t.ppf(0.975, n - 1)) * sd / np.sqrt(n)
    return {
        "n": n,
        "mean": mean,
        "sd": sd,
        "ci_low": mean - half,
        "ci_high": mean + half,
        "median": float(np.median(x)),
        "min": float(np.min(x)),
        "max": float(np.max(x)),
        "cv": sd / abs(mean) if mean else None,
    }


def _figure_of(summary: dict, figure: str) -> float:
    places = {
        "responses_per_s": ("throughput", "responses_per_s"),
        "successes_per_s": ("throughput", "successes_per_s"),
        "failure_rate": ("requests", "failure_rate"),
    }
    keys = places.get(figure, ("latency", "all", figure))
    value = summary
    for key in keys:
        value = value[key]
    return float(value)


def test_repeat_statistics_equal_scipy_recomputed_from_each_run_summary(target, history_db, tmp_path):
    out = tmp_path / "exp"
    run = surge(
        "repeat", f"{target.url}/health", "-d", "1s", "-c", "2", "-n", "3", "--out", str(out), "--tag", "build=abc"
    )
    assert run.code == 0, run.stderr
    progress = [line for line in run.stderr.splitlines() if line.startswith("repeat ")]
    assert [line.split(":")[0] for line in progress] == ["repeat 1/3", "repeat 2/3", "repeat 3/3"], run.stderr
    doc = json.loads((out / "experiment.json").read_text())
    validate_experiment(doc)
    assert doc["kind"] == "repeat" and doc["complete"] is True and doc["parameters"]["runs"] == 3
    assert len(doc["runs"]) == 3 and doc["tags"] == {"build": "abc"}
    summaries = []
    for position, entry in enumerate(doc["runs"], 1):
        directory = out / entry["directory"]
        assert directory.parent.name == "runs" and directory.name.startswith(f"{position:02d}-repeat-")
        summary = validate_file(directory)
        assert summary["meta"]["run_id"] == entry["run_id"] and summary["meta"]["complete"] is True
        assert summary["meta"]["experiment"] == {
            "id": doc["experiment_id"],
            "kind": "repeat",
            "position": position,
            "role": f"repeat {position}/3",
        }
        assert summary["meta"]["tags"] == {"build": "abc"}
        summaries.append(summary)
    statistics = doc["analysis"]["statistics"]
    for figure in KEY_FIGURES:
        expected = _recomputed([_figure_of(s, figure) for s in summaries])
        got = statistics[figure]
        for key, value in expected.items():
            assert got[key] == (None if value is None else pytest.approx(value, rel=1e-9, abs=1e-12)), (figure, key)
    assert doc["analysis"]["verdicts"] == {"runs": 3, "passed": 0, "failed": 0, "none": 3}
    assert "no thresholds" in run.stdout and "Statistics over the runs" in run.stdout

    # The history holds the experiment and its three runs, linked in order.
    db = sqlite3.connect(history_db)
    row = db.execute(
        "SELECT kind, complete, directory FROM experiments WHERE id = ?", (doc["experiment_id"],)
    ).fetchone()
    assert row == ("repeat", 1, str(out))
    linked = db.execute(
        "SELECT run_id, position, role FROM experiment_runs WHERE experiment_id = ? ORDER BY position",
        (doc["experiment_id"],),
    ).fetchall()
    assert linked == [(e["run_id"], i, f"repeat {i}/3") for i, e in enumerate(doc["runs"], 1)]
    assert db.execute("SELECT count(*) FROM runs WHERE complete = 1").fetchone()[0] == 3

    # surge show prints the experiment again, byte for byte; by prefix, by directory and as the last one.
    for ref in (doc["experiment_id"][:10], str(out)):
        again = surge("show", ref)
        assert again.code == 0 and again.stdout == run.stdout, again.stderr
    assert surge("show", "--experiment", "last", "--json").json() == doc
    listed = surge("experiments", "--json").json()
    assert [(e["id"], e["kind"], e["runs"], e["complete"]) for e in listed] == [
        (doc["experiment_id"], "repeat", 3, True)
    ]
    assert surge("experiments", "--kind", "sweep").stdout.startswith("no experiments of kind sweep")


def test_repeat_threshold_verdicts_per_run_and_overall_exit_99(target, tmp_path):
    scenario = tiny_scenario(
        tmp_path,
        target.url,
        iterations=20,
        extra="""
        thresholds:
          - "p(95) < 0.0001ms"
          - "failure_rate < 50%"
        """,
    )
    run = surge("repeat", str(scenario), "-n", "2", "--json")
    assert run.code == 99, run.stderr
    assert run.stderr.rstrip().splitlines()[-1] == "surge: 2 of 2 runs failed a threshold (run 1, 2)"
    doc = run.json()
    validate_experiment(doc)
    assert [e["verdict"] for e in doc["runs"]] == ["failed", "failed"]
    assert [e["exit_code"] for e in doc["runs"]] == [99, 99]
    statistics = doc["analysis"]["statistics"]
    assert statistics["p(95) < 0.0001ms [all]"]["n"] == 2 and statistics["failure_rate < 50% [all]"]["n"] == 2
    observed = [e["figures"]["p(95) < 0.0001ms [all]"] for e in doc["runs"]]
    assert statistics["p(95) < 0.0001ms [all]"]["mean"] == pytest.approx(np.mean(observed), rel=1e-12)
    shown = surge("show", doc["experiment_id"])
    assert "0 of 2 runs passed their thresholds; failed: run 1, run 2" in shown.stdout


def test_repeat_passing_thresholds_say_n_of_n_passed(target, tmp_path):
    scenario = tiny_scenario(
        tmp_path,
        target.url,
        iterations=5,
        extra="""
        thresholds: ["failure_rate < 50%"]
        """,
    )
    run = surge("repeat", str(scenario), "-n", "2")
    assert run.code == 0, run.stderr
    assert "2 of 2 runs passed their thresholds" in run.stdout


def _experiment(out: Path) -> dict:
    try:
        return json.loads((out / "experiment.json").read_text())
    except (FileNotFoundError, ValueError):
        return {}


def test_ctrl_c_during_run_2_keeps_run_1_and_says_incomplete(target, history_db, tmp_path):
    out = tmp_path / "stopped"
    second = out / "runs" / "02-repeat-2-3"
    proc = run_and_signal(
        ["repeat", f"{target.url}/health", "-d", "3s", "-c", "2", "-n", "3", "--out", str(out)],
        signal.SIGINT,
        lambda: intervals_logged(second) >= 1,
    )
    assert proc.returncode == 130, proc.stderr
    assert (
        proc.stderr.rstrip().splitlines()[-1]
        == "surge: stopped by SIGINT: experiment incomplete: 1 of 3 runs completed (kept in the history)"
    )
    assert "experiment incomplete: stopped by SIGINT; 1 completed run(s) kept in the history" in proc.stdout
    doc = _experiment(out)
    validate_experiment(doc)
    assert doc["complete"] is False and doc["stop_signal"] == "SIGINT"
    assert [(e["role"], e["complete"], e["stop_reason"]) for e in doc["runs"]] == [
        ("repeat 1/3", True, "duration"),
        ("repeat 2/3", False, "interrupted"),
    ]
    assert doc["analysis"]["used"] == ["1"] and doc["analysis"]["statistics"]["p50_ms"]["n"] == 1
    assert not (out / "runs" / "03-repeat-3-3").exists()
    db = sqlite3.connect(history_db)
    assert db.execute("SELECT complete FROM experiments").fetchall() == [(0,)]
    runs = db.execute("SELECT r.complete FROM experiment_runs e JOIN runs r ON r.id = e.run_id ORDER BY position")
    assert runs.fetchall() == [(1,), (0,)]


def test_sigterm_during_the_cooldown_keeps_the_runs_done_and_exits_143(target, tmp_path):
    out = tmp_path / "cooling"
    proc = run_and_signal(
        ["repeat", f"{target.url}/health", "-d", "1s", "-c", "2", "-n", "3", "--cooldown", "60s", "--out", str(out)],
        signal.SIGTERM,
        lambda: len(_experiment(out).get("runs", [])) == 1,
    )
    assert proc.returncode == 143, proc.stderr
    assert "experiment incomplete: 1 of 3 runs completed" in proc.stderr
    doc = _experiment(out)
    assert doc["complete"] is False and doc["stop_signal"] == "SIGTERM"
    assert [e["complete"] for e in doc["runs"]] == [True]


@pytest.mark.parametrize(
    "args, error",
    [
        (["-n", "0"], "surge: error: -n/--runs: must be from 1 to 1,000, got 0"),
        (["--cooldown", "soon"], "surge: error: --cooldown: "),
        (["--cooldown", "-1s"], "surge: error: --cooldown: "),
        (["--cv-limit", "lots"], "surge: error: --cv-limit: expected a percentage above 0 such as 10%, got 'lots'"),
        (["--time-scale", "2"], "surge: error: --time-scale: only applies to a scenario file"),
        (["--watch-pid", "0"], "surge: error: --watch-pid: must be a process id above zero, got 0"),
        (["--watch-pid", "4194999"], "surge: error: --watch-pid: no process 4194999"),
    ],
)
def test_repeat_bad_input_is_one_line_exit_2_before_any_run(args, error):
    run = surge("repeat", "http://127.0.0.1:9/", "-d", "1s", *args)
    assert run.code == 2 and run.stderr.startswith(error) and run.stderr.count("\n") == 1, run.stderr
    assert not (Path(SCRATCH) / "results").exists() or not any(
        p.name.endswith("-repeat-127.0.0.1-9") for p in (Path(SCRATCH) / "results").iterdir()
    )


def test_repeat_refuses_an_out_directory_holding_an_experiment(tmp_path):
    (tmp_path / "experiment.json").write_text("{}")
    run = surge("repeat", "http://127.0.0.1:9/", "--out", str(tmp_path))
    assert run.code == 2 and "--out" in run.stderr and "holds an experiment already" in run.stderr
