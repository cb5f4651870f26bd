"""The run session as a library (surge.run.session): every interval of the run reaches each sink
it is handed, in order, between ``start`` and ``finish``; the reports are written only once the
record is complete; a warm-up run writes none; a PhaseRunner stands in for the engine without a
change to the session; the test's options are one table (surge.run.flags) that TestSpec and the
click commands share."""

from __future__ import annotations

import io
import json
from dataclasses import fields
from pathlib import Path
from typing import Any

import surge.run.session as session
from conftest import read_experiment, surge
from surge.run.flags import TEST_OPTIONS, test_flag_names
from surge.run.phases import run_phases
from surge.run.session import RunOptions, run_prepared, run_test
from surge.run.spec import TestSpec


class Recording:
    """Recording is an IntervalSink that keeps what it is told, in order."""

    def __init__(self) -> None:
        self.events: list[tuple[str, Any]] = []

    def start(self, planned_s: float) -> None:
        self.events.append(("start", planned_s))

    def on_phase(self, name: str, result: Any) -> None:
        self.events.append(("phase", name))

    def on_interval(self, interval: Any) -> None:
        self.events.append(("interval", interval["index"]))

    def finish(self) -> None:
        self.events.append(("finish", None))


def test_every_sink_gets_every_interval_in_order_between_start_and_finish(target, tmp_path):
    first, second = Recording(), Recording()
    test = TestSpec(f"{target.url}/health", duration="2s", connections=2, threads=1)
    end = run_test(test, RunOptions(save=False), stderr=io.StringIO(), sinks=[first, second])
    assert end.error is None and end.outcome.code == 0 and end.directory is None and end.meta is None
    indexes = [i["index"] for i in end.document["intervals"]]
    assert len(indexes) >= 2
    assert first.events == [("start", 2.0), *(("interval", i) for i in indexes), ("finish", None)]
    assert second.events == first.events


def test_a_phase_runner_stands_in_for_the_engine(target, tmp_path):
    calls: list[str] = []

    def runner(compiled, *, threads, on_interval, on_phase):  # e.g. several engines merged into one stream
        calls.append(compiled.main.to_dict()["target"]["url"])
        return run_phases(compiled, threads=threads, on_interval=on_interval, on_phase=on_phase)

    sink = Recording()
    test = TestSpec(f"{target.url}/health", requests=5, connections=1, threads=1)
    end = run_test(test, RunOptions(save=False), stderr=io.StringIO(), sinks=[sink], runner=runner)
    assert calls == [f"{target.url}/health"] and end.document["requests"]["sent"] == 5
    assert sink.events[0][0] == "start" and sink.events[-1] == ("finish", None)


def test_reports_are_written_after_the_record_is_complete(target, tmp_path, monkeypatch):
    seen: list[dict[str, Any]] = []
    real = session.write_reports

    def checked(recorder, stderr):
        summary = json.loads((recorder.directory / "summary.json").read_text())
        seen.append(summary)
        assert not (recorder.directory / "report.md").exists()
        real(recorder, stderr)

    monkeypatch.setattr(session, "write_reports", checked)
    out = tmp_path / "run"
    test = TestSpec(f"{target.url}/health", duration="1s", connections=2, threads=1, out=str(out))
    end = run_test(test, RunOptions.of(test), stderr=io.StringIO())
    [summary] = seen
    assert summary["meta"]["complete"] is True and summary["meta"]["ended_at"] is not None
    assert summary["requests"]["sent"] == end.document["requests"]["sent"] > 0
    assert (out / "report.md").is_file() and (out / "report.html").is_file()
    assert end.directory == out and end.in_history and end.meta is not None and end.meta["complete"]


def test_a_run_without_reports_keeps_its_whole_record(target, tmp_path):
    out = tmp_path / "run"
    test = TestSpec(f"{target.url}/health", requests=20, connections=1, threads=1)
    prepared = test.prepare()
    end = run_prepared(prepared, RunOptions(out=str(out), reports=False), stderr=io.StringIO())
    assert end.meta is not None and end.meta["complete"]
    assert {p.name for p in out.iterdir()} == {"summary.json", "timeseries.csv", "latency.hlog", "command.txt"}


def test_a_sweeps_warmup_runs_write_no_report(target, tmp_path):
    out = tmp_path / "sweep"
    run = surge(
        "sweep", f"{target.url}/health", "--vus", "1", "-d", "1s", "--warmup", "1s", "--drain-wait", "0s",
        "--out", str(out),
    )  # fmt: skip
    assert run.code == 0, run.stderr
    warmup, level = (out / entry["directory"] for entry in read_experiment(out)["runs"])
    assert (warmup / "summary.json").is_file() and not (warmup / "report.md").exists()
    assert (level / "report.md").is_file() and (level / "report.html").is_file()


def test_the_options_table_is_the_test_spec():
    spec_fields = {f.name for f in fields(TestSpec)} - {"target", "flags"}
    assert len(TEST_OPTIONS) == len(spec_fields) and {o.field for o in TEST_OPTIONS} == spec_fields
    assert [(o.field, getattr(TestSpec("x"), o.field)) for o in TEST_OPTIONS] == [
        (o.field, o.default) for o in TEST_OPTIONS
    ]
    assert test_flag_names()["requests"] == "-n/--requests"
    assert test_flag_names(experiment=True)["requests"] == "--requests"
    assert TestSpec("x").flag("env_pairs") == "-e/--env" and TestSpec("x").flag("target_url") == "--target"


def test_the_run_layer_imports_no_click():
    import subprocess
    import sys

    code = "import sys, surge.run.session, surge.run.spec; print('click' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "False\n"


def test_outputs_are_the_callers(tmp_path):
    # The session prints only warnings, on the stderr it is handed: a --junit it cannot write.
    stderr = io.StringIO()
    path = Path("/proc/surge-cannot-write.xml")
    test = TestSpec("http://127.0.0.1:9/", requests=1)
    end = run_test(test, RunOptions(save=False, junit=str(path)), stderr=stderr)
    assert end.error is not None and end.outcome.code == 3
    assert stderr.getvalue().startswith(f"surge: warning: --junit: cannot write {path}: ")
