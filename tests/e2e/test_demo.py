"""surge demo is an experiment like any other: a sweep against the reference target recorded in
results/<time>-demo/ (experiment.json valid against its schema, a run directory per level)
plus target-stats.json, whose counts equal the runs'; its last stdout line says where the
results are. The levels are fewer and shorter here (the real sweep takes about half a minute)."""

from __future__ import annotations

import io
import json

from rich.console import Console

from surge.experiments import demo
from surge.experiments.slo_choice import Slo
from surge.experiments.sweep import SweepPlan
from surge.record.schema import validate_experiment


def test_demo_records_a_sweep_like_any_experiment(tmp_path, monkeypatch):
    monkeypatch.setattr(demo, "DEMO_SWEEP", SweepPlan("closed", [1, 2], 1.0, 0.0, 0.0, False, Slo([], "default"), 60.0))
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    directory, outcome = demo.run_demo(tmp_path / "results", Console(file=out, width=60))
    assert outcome.code == 0
    assert directory.parent == tmp_path / "results" and directory.name.endswith("-demo")
    assert {p.name for p in directory.iterdir()} == {
        "experiment.json",
        "runs",
        "target-stats.json",
        "report.md",
        "report.html",
        "charts",
    }
    doc = json.loads((directory / "experiment.json").read_text())
    validate_experiment(doc)
    assert doc["kind"] == "sweep" and doc["complete"] is True and len(doc["runs"]) == 2
    sent = 0
    for run in doc["runs"]:
        summary = json.loads((directory / run["directory"] / "summary.json").read_text())
        sent += summary["requests"]["sent"]
        assert summary["target_process"]["sample_count"] >= 1  # the target was watched in every run
    analysis = doc["analysis"]
    probes = analysis["idle_probe"]["probe_requests"] + sum(
        (level["settled"] or {}).get("probe_requests", 0) for level in analysis["levels"]
    )
    assert analysis["idle_probe"]["probe_requests"] >= 1 and analysis["levels"][1]["settled"]["drained"]
    stats = json.loads((directory / "target-stats.json").read_text())
    assert stats["received_by_route"]["GET /tasks"] == sent + probes, "the levels' requests and the drain probes"
    *_, written, last = out.getvalue().rstrip("\n").splitlines()
    assert written.startswith(f"Results written to {directory}/ (") and "experiment.json" in written
    assert last == f"Report: {directory / 'report.html'}"
    assert (
        "sweep" in (directory / "report.html").read_text() and "report: sweep" in (directory / "report.md").read_text()
    )
