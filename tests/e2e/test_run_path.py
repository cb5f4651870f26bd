"""Every run, URL or scenario file, passes through surge.run: one CompiledRun, run_phases,
and finished_phase for each phase that ends."""

from __future__ import annotations

import json

from click.testing import CliRunner

import surge.run.phases
from conftest import write
from surge.cli import app


def _phases_seen(monkeypatch) -> list[str]:
    seen: list[str] = []
    original = surge.run.phases.finished_phase

    def spy(run, name, result, on_phase):
        seen.append(name)
        return original(run, name, result, on_phase)

    monkeypatch.setattr(surge.run.phases, "finished_phase", spy)
    return seen


def test_a_url_run_is_a_one_phase_run(fresh_target, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # where the run's results directory goes
    seen = _phases_seen(monkeypatch)
    result = CliRunner().invoke(app, ["run", f"{fresh_target.url}/health", "-n", "7", "-c", "1", "--json"])
    assert result.exit_code == 0, result.output
    assert seen == ["main"]
    doc = json.loads(result.stdout)
    assert doc["requests"]["sent"] == 7
    assert "thresholds" not in doc  # a URL run's document is the engine's, as before


def test_a_scenario_file_run_passes_each_phase_through_the_same_place(fresh_target, monkeypatch, tmp_path):
    path = write(
        tmp_path,
        f"""\
target: {fresh_target.url}
setup:
  executor: {{type: shared-iterations, vus: 1, iterations: 1}}
  flow:
    - request: {{path: /health}}
scenarios:
  api:
    executor: {{type: shared-iterations, vus: 1, iterations: 3}}
    flow:
      - request: {{path: /health}}
teardown:
  executor: {{type: shared-iterations, vus: 1, iterations: 1}}
  flow:
    - request: {{path: /health}}
""",
    )
    monkeypatch.chdir(tmp_path)  # where the run's results directory goes
    seen = _phases_seen(monkeypatch)
    result = CliRunner().invoke(app, ["run", str(path), "--json"])
    assert result.exit_code == 0, result.output
    assert seen == ["setup", "main", "teardown"]
    assert json.loads(result.stdout)["requests"]["sent"] == 3
