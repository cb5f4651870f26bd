"""What the CLI prints around a run: the version, a summary never cut when piped, and one
line on stderr saying why for every non-zero exit."""

from __future__ import annotations

import pytest

import surge as surge_package
from conftest import surge, write
from surge.core import exit_codes


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version(flag):
    run = surge(flag)
    assert run.code == 0, run.stderr
    assert run.stdout == f"surge {surge_package.__version__}\n"
    assert surge_package.__version__[0].isdigit()


LONG_PATH = "/health?" + "&".join(f"padding{i}=" + "x" * 20 for i in range(12))
"""LONG_PATH makes the summary's first line far wider than 80 columns."""


def test_summary_is_not_cut_when_piped(fresh_target):
    url = f"{fresh_target.url}{LONG_PATH}"
    run = surge("run", url, "-r", "200", "-n", "20", "-c", "1")
    assert run.code == 0, run.stderr
    assert "…" not in run.stdout
    assert url in run.stdout.splitlines()[0]
    outcome = next(line for line in run.stdout.splitlines() if line.startswith("Outcome"))
    assert "succeeded (20)" in outcome and "0 interrupted" in outcome
    for label in ("all", "success", "service"):  # the open model's three latency rows, every column
        row = next(line for line in run.stdout.splitlines() if line.startswith(label + " "))
        assert row.rstrip().endswith("20"), row


def test_scenario_summary_is_not_cut_when_piped(fresh_target, tmp_path):
    tag = "a request name far longer than any terminal is wide " * 4
    path = write(
        tmp_path,
        """\
        target: @URL@
        scenarios:
          a:
            executor: {type: per-vu-iterations, vus: 1, iterations: 3}
            flow:
              - {name: "@TAG@", request: {path: /health}}
        """,
        URL=fresh_target.url,
        TAG=tag.strip(),
    )
    run = surge("run", str(path))
    assert run.code == 0, run.stderr
    assert "…" not in run.stdout
    assert any(tag.strip() in line for line in run.stdout.splitlines()), run.stdout


def test_run_too_short_to_send_says_so(fresh_target):
    run = surge("run", f"{fresh_target.url}/health", "-d", "1us")
    assert run.code == exit_codes.UNREACHABLE
    assert run.said().startswith("surge: sent nothing: ") and len(run.said().splitlines()) == 1, run.stderr
    assert "-d/--duration" in run.stderr
    assert fresh_target.received() == 0


def test_file_that_sends_nothing_says_so(fresh_target, tmp_path):
    path = write(
        tmp_path,
        """\
        target: @URL@
        scenarios:
          a:
            executor: {type: constant-vus, vus: 2, duration: 1us}
            flow:
              - request: {path: /health}
        """,
        URL=fresh_target.url,
    )
    for json_flag in ([], ["--json"]):
        run = surge("run", str(path), *json_flag)
        assert run.code == exit_codes.UNREACHABLE
        assert run.said().startswith("surge: sent nothing: no scenario sent a request"), run.stderr
        assert len(run.said().splitlines()) == 1, run.stderr


def test_failed_threshold_says_which(fresh_target, tmp_path):
    path = write(
        tmp_path,
        """\
        target: @URL@
        scenarios:
          a:
            executor: {type: per-vu-iterations, vus: 1, iterations: 3}
            flow:
              - request: {path: /health}
        thresholds:
          - "failure_rate < 1%"
          - "p(99) < 0.000001ms"
        """,
        URL=fresh_target.url,
    )
    run = surge("run", str(path), "--json")
    assert run.code == exit_codes.THRESHOLDS_FAILED
    assert run.said() == "surge: 1 of 2 thresholds failed: p(99) < 0.000001ms [all]\n"
