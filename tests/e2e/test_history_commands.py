"""``surge show``, ``surge export`` and ``surge baseline`` on runs ``surge run`` recorded
(docs/history.md)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import surge_in, write

SECRET = "SECRET-77e1c0de"

SCENARIO = """\
target: @URL@
scenarios:
  reads:
    executor: {type: constant-arrival-rate, rate: 200, duration: 2s, max_vus: 20}
    flow:
      - name: health
        request:
          path: "/health?api_key=@SECRET@"
          headers: {X-Session-Token: "@SECRET@"}
        check: {status: 200}
thresholds:
  - p(95) < 5s
  - expr: failure_rate < 1%
    abort_on_fail: true
    delay: 1s
  - {expr: "p(99) < 10s", tag: health, scenario: reads}
"""


def _record_of(run: subprocess.CompletedProcess[str], cwd: Path) -> Path:
    assert run.stderr.splitlines()[-1].startswith("results: "), run.stderr
    return cwd / run.stderr.splitlines()[-1].removeprefix("results: ")


def _run_id(record: Path) -> str:
    return str(json.loads((record / "summary.json").read_text())["meta"]["run_id"])


@pytest.fixture(scope="module")
def recorded(tmp_path_factory, target):
    """recorded: a URL run and a scenario file run (open model, thresholds), each with its stdout
    and results directory, in one history."""
    cwd = tmp_path_factory.mktemp("cwd")
    db = cwd / "history.db"
    url_run = surge_in(cwd, "run", f"{target.url}/health?token={SECRET}", "-c", "2", "-d", "2s", "--db", str(db))
    assert url_run.returncode == 0, url_run.stderr
    scenario = write(cwd, SCENARIO, "reads.yaml", URL=target.url, SECRET=SECRET)
    file_run = surge_in(cwd, "run", str(scenario), "--db", str(db))
    assert file_run.returncode == 0, file_run.stderr
    return {
        "cwd": cwd,
        "db": str(db),
        "target": target.url,
        "url": (url_run.stdout, _record_of(url_run, cwd)),
        "file": (file_run.stdout, _record_of(file_run, cwd)),
    }


@pytest.mark.parametrize("kind", ["url", "file"])
@pytest.mark.parametrize("how", ["id", "prefix", "dir"])
def test_show_prints_the_summary_exactly_as_it_was_printed(recorded, kind, how):
    printed, record = recorded[kind]
    ref = {"id": _run_id(record), "prefix": _run_id(record)[:8], "dir": str(record)}[how]
    show = surge_in(recorded["cwd"], "show", ref, "--db", recorded["db"])
    assert show.returncode == 0, show.stderr
    assert show.stdout == printed
    assert show.stderr == ""


def test_show_last_is_the_newest_run_and_json_is_its_summary(recorded):
    printed, record = recorded["file"]
    assert "Thresholds" in printed and "✓ failure_rate < 1% [all]" in printed  # the run had thresholds to show
    show = surge_in(recorded["cwd"], "show", "last", "--db", recorded["db"])
    assert (show.returncode, show.stdout) == (0, printed)
    as_json = surge_in(recorded["cwd"], "show", "last", "--json", "--db", recorded["db"])
    assert json.loads(as_json.stdout) == json.loads((record / "summary.json").read_text())


def test_nothing_surge_wrote_holds_the_secret(recorded):
    with Path(recorded["db"]).open("rb") as db:
        assert SECRET.encode() not in db.read()
    for path in Path(recorded["cwd"]).rglob("*"):
        if (path.is_file() and path.suffix != ".yaml") or path.name == "scenario.yaml":
            assert SECRET.encode() not in path.read_bytes(), path


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["show", "ffffffff"], "surge: error: RUN: no run 'ffffffff' in the history"),
        (
            ["show", "no-such-run!"],
            "surge: error: RUN: 'no-such-run!' is neither a run id, a prefix of one, 'last', nor a results directory",
        ),
        (["export", "ffffffff"], "surge: error: RUN: no run 'ffffffff' in the history"),
    ],
)
def test_an_unknown_run_is_one_line_and_exit_2(recorded, args, error):
    run = surge_in(recorded["cwd"], *args, "--db", recorded["db"])
    assert run.returncode == 2 and run.stderr.startswith(error) and run.stderr.count("\n") == 1, run.stderr


def test_show_last_of_an_empty_history_says_so(tmp_path):
    run = surge_in(tmp_path, "show", "last", "--db", str(tmp_path / "h.db"))
    assert (run.returncode, run.stderr) == (2, f"surge: error: RUN: the history is empty ({tmp_path / 'h.db'})\n")


@pytest.mark.parametrize("kind", ["url", "file"])
def test_export_rebuilds_a_deleted_results_directory(recorded, kind, tmp_path):
    _, record = recorded[kind]
    kept = tmp_path / "kept"
    shutil.copytree(record, kept)
    shutil.rmtree(record)
    export = surge_in(recorded["cwd"], "export", _run_id(kept), "--db", recorded["db"])
    assert export.returncode == 0, export.stderr
    assert export.stderr == f"results: results/{record.name}\n"
    assert sorted(p.name for p in record.iterdir()) == sorted(p.name for p in kept.iterdir())
    assert json.loads((record / "summary.json").read_text()) == json.loads((kept / "summary.json").read_text())
    inputs = "command.txt" if kind == "url" else "scenario.yaml"
    for name in ("timeseries.csv", "latency.hlog", inputs, "report.md"):
        assert (record / name).read_bytes() == (kept / name).read_bytes(), name
    again = surge_in(recorded["cwd"], "export", _run_id(kept), str(record), "--db", recorded["db"])
    assert again.returncode == 2
    assert again.stderr == f"surge: error: {record}: exists and is not an empty directory (choose another DIR)\n"


def test_baseline_check_passes_against_itself_and_fails_on_a_real_regression(recorded, tmp_path):
    cwd, db = recorded["cwd"], recorded["db"]
    _, fast = recorded["url"]
    assert surge_in(cwd, "baseline", "set", _run_id(fast), "--name", "fast", "--db", db).returncode == 0
    same = surge_in(cwd, "baseline", "check", str(fast), "--against", "fast", "--db", db)
    assert same.returncode == 0, same.stderr
    assert same.stdout.rstrip().splitlines()[-1] == "no regression beyond 5.0% against baseline 'fast'"
    for metric in ("p95", "p99", "responses_per_s", "failure_rate"):
        assert any(line.split()[:1] == [metric] and line.split()[-1] == "ok" for line in same.stdout.splitlines())

    # The same load against the target's /delay/20, which answers 20 ms later: slower, and less throughput.
    run = surge_in(cwd, "run", f"{recorded['target']}/delay/20", "-c", "2", "-d", "2s", "--db", db)
    assert run.returncode == 0, run.stderr
    check = surge_in(
        cwd,
        "baseline",
        "check",
        "last",
        "--against",
        "fast",
        "--metric",
        "p95",
        "--metric",
        "responses_per_s",
        "--metric",
        "success_rate",
        "--tolerance",
        "10%",
        "--db",
        db,
    )
    assert check.returncode == 99, check.stderr
    verdicts = {
        line.split()[0]: line.split()[-1]
        for line in check.stdout.splitlines()
        if line.split()[:1] in (["p95"], ["responses_per_s"], ["success_rate"])
    }
    assert verdicts == {"p95": "regressed", "responses_per_s": "regressed", "success_rate": "ok"}
    assert check.stderr.startswith("surge: regression against baseline 'fast': p95 +")
    assert ", responses_per_s -" in check.stderr and check.stderr.endswith("(tolerance 10.0%)\n")


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["--against", "nope"], "surge: error: --against: no baseline 'nope' in the history"),
        (["--against", "x", "--metric", "p42"], "surge: error: --metric: 'p42' is not one of"),
        (
            ["--against", "x", "--tolerance", "lots"],
            "surge: error: --tolerance: expected a percentage such as 5%, got 'lots'",
        ),
    ],
)
def test_baseline_check_refuses_an_unknown_baseline_or_metric(recorded, args, error):
    run = surge_in(recorded["cwd"], "baseline", "check", "last", *args, "--db", recorded["db"])
    assert run.returncode == 2 and run.stderr.startswith(error) and run.stderr.count("\n") == 1, run.stderr
