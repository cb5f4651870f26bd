"""summary.json matches schemas/surge.record-1.schema.json (checked with the jsonschema
library through surge.record.schema) for every kind of run: a URL run, a scenario-file run
with thresholds, setup/teardown, several scenarios and tags, a run stopped by SIGINT, a run
killed outright (meta only); and a drifted document fails."""

from __future__ import annotations

import copy
import json
import signal
from pathlib import Path
from typing import Any

import pytest

from conftest import intervals_logged, run_and_signal, surge
from surge.record.schema import RecordSchemaError, problems, validate, validate_file

TASK_API = Path(__file__).parents[1] / "scenarios" / "task-api.yaml"


@pytest.fixture(scope="module")
def url_record(target, tmp_path_factory) -> dict[str, Any]:
    """url_record is a real URL run's summary.json."""
    out = tmp_path_factory.mktemp("url") / "rec"
    run = surge("run", f"{target.url}/health", "-d", "2s", "-c", "2", "--out", str(out), "--tag", "arch=one")
    assert run.code == 0, run.stderr
    return dict(json.loads((out / "summary.json").read_text()))


def test_url_run_record_validates(url_record):
    validate(url_record)
    assert url_record["meta"]["complete"] is True and url_record["intervals"]
    assert "thresholds" not in url_record


def test_scenario_file_run_record_validates(target, tmp_path):
    out = tmp_path / "rec"
    run = surge(
        "run",
        str(TASK_API),
        "--target",
        target.url,
        "--time-scale",
        "0.03",
        "--out",
        str(out),
        "--tag",
        "storage=gopool",
        "--tag",
        "build=abc123",
    )
    assert run.code in (0, 99), run.stderr
    doc = validate_file(out)
    assert {s["name"] for s in doc["scenarios"]} == {"reads", "writes"}
    assert len(doc["thresholds"]) == 5 and doc["setup"] and doc["teardown"]
    assert doc["tags"] and doc["checks"] and doc["captures"]
    assert doc["meta"]["tags"] == {"storage": "gopool", "build": "abc123"}


def test_sigint_mid_run_record_validates(fresh_target, tmp_path):
    out = tmp_path / "rec"
    done = run_and_signal(
        ["run", f"{fresh_target.url}/health", "-d", "60s", "-c", "2", "--out", str(out)],
        signal.SIGINT,
        lambda: intervals_logged(out) >= 2,
        cwd=tmp_path,
    )
    assert done.returncode == 130, done.stderr
    doc = validate_file(out)
    assert doc["meta"]["complete"] is False
    assert doc["stop_reason"] == "interrupted" and doc["stop_signal"] == "SIGINT"


def test_killed_run_record_holds_meta_alone_and_validates(fresh_target, tmp_path):
    out = tmp_path / "rec"
    done = run_and_signal(
        ["run", f"{fresh_target.url}/health", "-d", "60s", "-c", "2", "--out", str(out)],
        signal.SIGKILL,
        lambda: intervals_logged(out) >= 1,
        cwd=tmp_path,
    )
    assert done.returncode == -signal.SIGKILL
    doc = validate_file(out)
    assert list(doc) == ["meta"] and doc["meta"]["complete"] is False


def test_an_imported_run_with_figures_missing_validates(url_record):
    """What an importer writes: null where the tool kept no figure, no generator, no intervals."""
    doc = copy.deepcopy(url_record)
    for summary in doc["latency"].values():
        summary.update({k: None for k in summary if k != "count"})
    doc["requests"].update(unanswered=None, interrupted_unsent=None, late=None, bytes_sent=None)
    doc.update(generator=None, histograms=None, elapsed_s=None, threads=None, peak_open_connections=None)
    del doc["intervals"]
    doc["meta"].update(
        tool="k6",
        source={"file": "summary.json", "sha256": "0" * 64, "format": "k6-summary-export", "start_from": "file-mtime"},
        environment=None,
        command=None,
    )
    validate(doc)


def _drop(path: str):
    def mutate(doc: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node = doc
        for key in parents:
            node = node[int(key)] if key.isdigit() else node[key]
        del node[last]

    return mutate


MUTATIONS = {
    "unknown top-level field": lambda d: d.update(rps=1.0),
    "renamed meta field": lambda d: d["meta"].update(runid=d["meta"].pop("run_id")),
    "unknown meta field": lambda d: d["meta"].update(host="x"),
    "missing meta.tags": _drop("meta.tags"),
    "missing requests.failed": _drop("requests.failed"),
    "missing interval field": _drop("intervals.0.in_flight"),
    "unknown latency field": lambda d: d["latency"]["all"].update(p99ms=1.0),
    "count as text": lambda d: d["requests"].update(sent="12"),
    "negative count": lambda d: d["requests"].update(responses=-1),
    "unknown stop reason": lambda d: d.update(stop_reason="finished"),
    "unknown failure class": lambda d: d["requests"]["failure_classes"].update(timeout=1),
    "bad run id": lambda d: d["meta"].update(run_id="abc"),
    "bad tag key": lambda d: d["meta"]["tags"].update({"a b": "x"}),
    "unknown tool": lambda d: d["meta"].update(tool="wrk"),
    "result schema version": lambda d: d.update(schema="surge.result/2"),
    "record schema version": lambda d: d["meta"].update(schema="surge.record/2"),
    "meta alone yet complete": lambda d: [d.pop(k) for k in list(d) if k != "meta"],
    "thresholds without interrupted_in": lambda d: d.update(thresholds=[]),
}


@pytest.mark.parametrize("mutation", MUTATIONS)
def test_a_drifted_document_fails(url_record, mutation):
    doc = copy.deepcopy(url_record)
    MUTATIONS[mutation](doc)
    with pytest.raises(RecordSchemaError) as e:
        validate(doc)
    assert e.value.problems == problems(doc) and e.value.problems
