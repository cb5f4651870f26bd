"""surge demo runs on the one run path: its record is a run's record (summary.json valid against
the schema, timeseries.csv, latency.hlog, command.txt) plus target-stats.json, and its last
stdout line says where the results are. The ramp is shortened here (the real one takes 20 s)."""

from __future__ import annotations

import io
import json

from rich.console import Console

from surge import demo
from surge.plan import RateStage
from surge.record.schema import validate_file


def test_demo_records_like_a_run(tmp_path, monkeypatch):
    monkeypatch.setattr(demo, "DEMO_STAGES", [RateStage(duration_s=2, target_rate=100)])
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    directory, outcome = demo.run_demo(tmp_path / "results", Console(file=out, width=60))
    assert outcome.code == 0
    assert directory.parent == tmp_path / "results" and directory.name.endswith("-demo")
    assert {p.name for p in directory.iterdir()} == {"summary.json", "timeseries.csv", "latency.hlog", "command.txt",
                                                      "target-stats.json"}
    doc = validate_file(directory)
    assert doc["meta"]["name"] == "demo" and doc["meta"]["complete"] is True
    assert doc["url"].endswith("/delay/0") and len(doc["intervals"]) >= 2
    stats = json.loads((directory / "target-stats.json").read_text())
    assert stats["received_by_route"]["GET /delay/{ms}"] == doc["requests"]["sent"]
    last = out.getvalue().rstrip("\n").splitlines()[-1]
    assert last.startswith(f"Results written to {directory}/ (") and "summary.json" in last
    assert "Per-second view" in out.getvalue()
