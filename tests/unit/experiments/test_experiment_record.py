"""The experiment backbone without traffic: the test description's overrides (URL and scenario
files, and where they cannot apply), history migration 3, experiment.json's schema, and the
ExperimentRecord's writes (directory and history)."""

from __future__ import annotations

import json
import sqlite3

import pytest

from conftest import write
from surge.core.errors import BadInput
from surge.experiments.recorder import ExperimentRecord
from surge.experiments.runner import run_entry
from surge.history import SCHEMA_VERSION, open_history
from surge.history.connection import connect
from surge.history.experiment_rows import ExperimentRun, find_experiments, list_experiments, load_experiment
from surge.history.migrations import migrate
from surge.record.schema import RecordSchemaError, validate_experiment
from surge.run.spec import LEVEL, Overrides, TestSpec, shares

URL = "http://127.0.0.1:9/api"

TWO_SCENARIOS = """\
target: http://127.0.0.1:9
thresholds: ["p(95) < 100ms"]
scenarios:
  reads:
    executor: {type: ramping-vus, stages: [{duration: 4s, target: 10}]}
    start_time: 2s
    flow: [{request: {path: /a}}]
  writes:
    executor: {type: constant-arrival-rate, rate: 5, duration: 3s, max_vus: 7}
    flow: [{request: {path: /b}}]
"""


def test_a_url_test_is_prepared_as_surge_run_and_overridden_per_model():
    plain = TestSpec(URL, connections=4, duration="2s").prepare()
    assert plain.url_plan is not None and plain.threads is None
    assert plain.compiled.main.to_dict()["scenarios"][0]["executor"] == {
        "type": "constant-vus",
        "vus": 4,
        "duration_s": 2.0,
    }
    closed = TestSpec(URL, rate=50.0, duration="2s").prepare(Overrides(vus=7, duration_s=1.5))
    assert closed.compiled.main.to_dict()["scenarios"][0]["executor"] == {
        "type": "constant-vus",
        "vus": 7,
        "duration_s": 1.5,
    }
    open_ = TestSpec(URL, connections=3, duration="2s").prepare(Overrides(rate=120.0))
    executor = open_.compiled.main.to_dict()["scenarios"][0]["executor"]
    assert (executor["type"], executor["rate"], executor["duration_s"], executor["pre_allocated_vus"]) == (
        "constant-arrival-rate",
        120.0,
        2.0,
        3,
    )


@pytest.mark.parametrize(
    "spec, overrides, where, message",
    [
        (TestSpec(URL, requests=100), Overrides(vus=5), "-n/--requests", "an experiment sets each run's load"),
        (
            TestSpec(URL, rate=5.0, max_in_flight=10),
            Overrides(vus=5),
            "--max-in-flight",
            "only applies to the open model",
        ),
        (TestSpec(URL), Overrides(vus=0), LEVEL, "a VU count must be from 1"),
        (TestSpec(URL), Overrides(rate=-1.0), LEVEL, "an arrival rate must be above 0"),
        (TestSpec(URL), Overrides(duration_s=0.0), LEVEL, "a run's duration must be above zero"),
        (TestSpec(URL, time_scale=2.0), Overrides(), "--time-scale", "only applies to a scenario file"),
    ],
)
def test_overrides_that_cannot_apply_are_refused_naming_where(spec, overrides, where, message):
    with pytest.raises(BadInput) as e:
        spec.prepare(overrides)
    assert e.value.where == where and message in e.value.message


def test_a_scenario_files_scenarios_share_the_level_and_start_at_once(tmp_path):
    path = write(tmp_path, TWO_SCENARIOS)
    spec = TestSpec(str(path))
    plain = spec.prepare()
    assert plain.url_plan is None and plain.scenario_file == path and len(plain.compiled.thresholds) == 1
    closed = spec.prepare(Overrides(vus=5, duration_s=1.0)).compiled.main.to_dict()["scenarios"]
    assert [(s["start_time_s"], s["executor"]) for s in closed] == [
        (0.0, {"type": "constant-vus", "vus": 3, "duration_s": 1.0}),
        (0.0, {"type": "constant-vus", "vus": 2, "duration_s": 1.0}),
    ]
    opened = spec.prepare(Overrides(rate=100.0)).compiled.main.to_dict()["scenarios"]
    assert [(s["executor"]["rate"], s["executor"]["duration_s"], s["executor"]["max_vus"]) for s in opened] == [
        (50.0, 4.0, opened[0]["executor"]["max_vus"]),
        (50.0, 3.0, 7),
    ]
    assert [s["flow"] for s in opened] == [s["flow"] for s in plain.compiled.main.to_dict()["scenarios"]]
    with pytest.raises(BadInput, match="1 VUs cannot be shared among the file's 2 scenarios"):
        spec.prepare(Overrides(vus=1))
    with pytest.raises(BadInput, match="ramping-vus executor: only a constant one's duration"):
        spec.prepare(Overrides(duration_s=1.0))
    with pytest.raises(BadInput, match="-c/--connections: does not apply to a scenario file"):
        TestSpec(str(path), connections=3).prepare()


def test_an_iterations_executor_needs_a_duration_to_be_overridden(tmp_path):
    path = write(
        tmp_path,
        "target: http://127.0.0.1:9\nscenarios:\n  a:\n    executor: {type: per-vu-iterations, "
        "vus: 1, iterations: 3}\n    flow: [{request: {path: /}}]\n",
    )
    with pytest.raises(BadInput, match="runs a count of iterations"):
        TestSpec(str(path)).prepare(Overrides(vus=4))
    main = TestSpec(str(path)).prepare(Overrides(vus=4, duration_s=2.0)).compiled.main.to_dict()
    assert main["scenarios"][0]["executor"] == {"type": "constant-vus", "vus": 4, "duration_s": 2.0}


def test_shares_differ_by_at_most_one_and_add_up():
    for total in range(1, 30):
        for parts in range(1, 6):
            found = shares(total, parts)
            assert sum(found) == total and max(found) - min(found) <= 1 and found == sorted(found, reverse=True)


def test_a_version_2_history_is_migrated_to_3_with_the_experiment_tables(tmp_path):
    path = tmp_path / "v2.db"
    conn = connect(path)
    assert migrate(conn, path, upto=2) == 2
    conn.close()
    with open_history(str(path)) as history:
        assert history.conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION >= 3
        names = {r[0] for r in history.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert {"experiments", "experiment_runs"} <= names


def _summary(run_id: str) -> dict:
    return {
        "requests": {"sent": 10, "failure_rate": 0.0},
        "throughput": {"responses_per_s": 5.0},
        "latency": {"all": {"count": 10, "p50_ms": 1.0, "p95_ms": 2.0, "p99_ms": 3.0}},
        "stop_reason": "duration",
        "meta": {
            "run_id": run_id,
            "name": "x",
            "tool": "surge",
            "started_at": "2026-11-23T22:15:33.123+00:00",
            "complete": True,
        },
    }


def test_the_record_writes_experiment_json_and_the_history_as_it_goes(tmp_path, history_db):
    out = tmp_path / "exp"
    record = ExperimentRecord("stats", "seed", {"runs": 1}, out=str(out), tags={"k": "v"})
    with record.running():
        pass
    with open_history(None) as history:
        history.conn.execute(
            "INSERT INTO runs (id, name, tool, started_at) VALUES (?, 'x', 'surge', ?)",
            ("a" * 32, "2026-11-23T22:15:33.123+00:00"),
        )
    record.add_run(
        run_entry(_summary("a" * 32), position=1, role="run 1/1", label="1", directory=None, exit_code=None),
        ExperimentRun("a" * 32, 1, "run 1/1", "1"),
    )
    on_disk = json.loads((out / "experiment.json").read_text())
    assert on_disk["complete"] is False and len(on_disk["runs"]) == 1
    validate_experiment(on_disk)
    record.history = open_history(None)
    record.finish(analysis=None, findings=[{"kind": "note", "text": "a finding"}])
    final = json.loads((out / "experiment.json").read_text())
    validate_experiment(final)
    assert final["complete"] is True and final["ended_at"] is not None
    with open_history(None) as history:
        assert load_experiment(history, record.id) == final
        assert find_experiments(history, record.id[:6]) == [record.id]
        assert [(r.kind, r.runs, r.complete) for r in list_experiments(history)] == [("stats", 1, True)]
    db = sqlite3.connect(history_db)
    assert json.loads(db.execute("SELECT findings FROM experiments").fetchone()[0]) == final["findings"]


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d.update(kind="guess"),
        lambda d: d.update(extra=1),
        lambda d: d["runs"][0].update(verdict="maybe"),
        lambda d: d["runs"][0]["figures"].update(p50_ms="fast"),
        lambda d: d.update(analysis={"statistics": {}}),
    ],
)
def test_the_experiment_schema_refuses_a_mutated_document(tmp_path, change):
    record = ExperimentRecord("repeat", "x", {}, out=str(tmp_path / "e"))
    record.begin()
    record.add_run(
        run_entry(_summary("b" * 32), position=1, role="repeat 1/1", label="1", directory="runs/01", exit_code=0), None
    )
    document = json.loads(json.dumps(record.document))
    validate_experiment(document)
    change(document)
    with pytest.raises(RecordSchemaError):
        validate_experiment(document)
