"""report.md: every number in its tables equals the record's (the tables are parsed back and
compared with summary.json / experiment.json), for a URL run, a scenario-file run with
thresholds and checks, an interrupted run, an imported run and each experiment kind; charts are
valid SVG with plot content; ``surge report`` rebuilds the same report.md from the history
when the results directory is gone; --format both writes report.html too."""

from __future__ import annotations

import json
import re
import shutil
import signal
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from conftest import MIXED, SCRATCH, intervals_logged, run_and_signal, surge, surge_in, write
from report_pages import Tables, no_python_repr, parse_tables, recorded, row, same

FIXTURES = Path(__file__).parents[1] / "fixtures" / "imports"


def get(document: Any, path: str) -> Any:
    for key in path.split("."):
        document = document.get(key) if isinstance(document, dict) else None
    return document


EXECUTIVE = {
    "responses/s": "throughput.responses_per_s",
    "goodput (successes/s)": "throughput.successes_per_s",
    "success rate": "requests.success_rate",
    "failure rate": "requests.failure_rate",
    "p50 latency (ms)": "latency.all.p50_ms",
    "p95 latency (ms)": "latency.all.p95_ms",
    "p99 latency (ms)": "latency.all.p99_ms",
    "requests sent": "requests.sent",
}
"""EXECUTIVE maps the executive summary's rows to the record's fields."""

REQUESTS = {
    "sent": "sent",
    "responses": "responses",
    "succeeded": "succeeded",
    "failed": "failed",
    "shed (429, 503)": "shed",
    "timed out": "timed_out",
    "interrupted": "interrupted",
    "unanswered": "unanswered",
    "dropped": "dropped",
    "late": "late",
    "connections opened": "connections_opened",
    "bytes sent": "bytes_sent",
    "bytes received": "bytes_received",
}
"""REQUESTS maps the requests table's rows to the record's ``requests`` fields."""

LATENCY = {
    "count": "count",
    "min": "min_ms",
    "mean": "mean_ms",
    "p50": "p50_ms",
    "p90": "p90_ms",
    "p95": "p95_ms",
    "p99": "p99_ms",
    "p99.9": "p99_9_ms",
    "max": "max_ms",
}
LATENCY_ROWS = {
    "every response": "all",
    "successful responses": "success",
    "service time": "service_time",
    "send lag": "send_lag",
    "first byte": "first_byte",
    "first event (streams)": "first_event",
    "gap between events": "event_gap",
    "stream (first event to end)": "stream_duration",
}
BREAKDOWN = {
    "sent": "requests.sent",
    "responses": "requests.responses",
    "failed": "requests.failed",
    "responses/s": "throughput.responses_per_s",
    "p50 ms": "latency.all.p50_ms",
    "p95 ms": "latency.all.p95_ms",
    "p99 ms": "latency.all.p99_ms",
}


def shown(document: dict[str, Any], path: str) -> Any:
    """shown is the record's figure at ``path`` as the report must show it: a latency of a
    summary without samples is missing (None)."""
    if path.startswith("latency.") and get(document, "latency.all.count") == 0:
        return None
    return get(document, path)


def check_run_report(directory: Path) -> tuple[Tables, str]:
    """check_run_report compares every table of DIR/report.md with DIR/summary.json and returns
    the tables and the text."""
    summary = json.loads((directory / "summary.json").read_text())
    text = (directory / "report.md").read_text()
    no_python_repr(text)
    if (directory / "report.html").is_file():
        no_python_repr((directory / "report.html").read_text())
    tables = parse_tables(text)
    for label, path in EXECUTIVE.items():
        same(row(tables["Executive summary"], "figure", label)["value"], shown(summary, path))
    if "requests" in summary:
        for label, key in REQUESTS.items():
            same(row(tables["Requests"], "requests", label)["count"], summary["requests"][key])
        for entry in tables.get("Status codes", []):
            same(entry["responses"], summary["requests"]["status_codes"][entry["status"]])
        assert len(tables.get("Status codes", [])) == len(summary["requests"]["status_codes"] or {})
        for entry in tables.get("Failures by class", []):
            same(entry["requests"], summary["requests"]["failure_classes"][entry["failure class"]])
        assert len(tables.get("Failures by class", [])) == len(summary["requests"]["failure_classes"] or {})
        (throughput,) = tables["Throughput"]
        for column, key in (
            ("window (s)", "window_s"),
            ("responses/s", "responses_per_s"),
            ("successes/s", "successes_per_s"),
            ("sent/s", "sent_per_s"),
        ):
            same(throughput[column], summary["throughput"][key])
        assert {r["latency (ms)"] for r in tables.get("Latency", [])} == {
            label for label, key in LATENCY_ROWS.items() if (summary["latency"].get(key) or {}).get("count")
        }
        for entry in tables.get("Latency", []):
            for column, key in LATENCY.items():
                same(entry[column], summary["latency"][LATENCY_ROWS[entry["latency (ms)"]]][key])
    for entry in tables.get("Per scenario", []):
        scenario = next(s for s in summary["scenarios"] if s["name"] == entry["scenario"])
        same(entry["window (s)"], scenario["duration_s"])
        for column, path in BREAKDOWN.items():
            same(entry[column], shown(scenario, path))
    assert len(tables.get("Per scenario", [])) == len(summary.get("scenarios") or [])
    for entry in tables.get("Per tag", []):
        tag = next(t for t in summary["tags"] if t["tag"] == entry["tag"] and t["scenario"] == entry["scenario"])
        for column, path in BREAKDOWN.items():
            same(entry[column], shown(tag, path))
    assert len(tables.get("Per tag", [])) == len(summary.get("tags") or [])
    for entry, check in zip(tables.get("Checks", []), summary.get("checks") or [], strict=True):
        assert entry["check"] == check["name"]
        same(entry["passes"], check["passes"])
        same(entry["fails"], check["fails"])
    for entry, threshold in zip(
        tables.get("Thresholds, pass or fail", []), summary.get("thresholds") or [], strict=True
    ):
        assert (entry["threshold"], entry["verdict"], entry["observed"]) == (
            threshold["expr"],
            threshold["status"],
            threshold["observed_text"] or "-",
        )
    method = {r["item"]: r["value"] for r in tables["Method"]}
    assert method["target"] == (summary["meta"]["target"] or summary.get("url") or "-")
    assert method["run id"] == summary["meta"]["run_id"]
    return tables, text


def check_svg(path: Path) -> None:
    """check_svg asserts ``path`` is an SVG document with drawn lines or markers in it."""
    root = ET.parse(path).getroot()
    assert root.tag.endswith("svg")
    paths = [e for e in root.iter() if e.tag.endswith("path") and e.get("d")]
    assert len(paths) > 10, path


def check_charts(directory: Path, text: str, names: set[str]) -> None:
    """check_charts asserts report.md links exactly the chart files ``names`` and each is a valid SVG."""
    linked = set(re.findall(r"!\[[^\]]*\]\(charts/([^)]+)\)", text))
    assert linked == names
    assert {p.name for p in (directory / "charts").iterdir()} == names
    for name in names:
        check_svg(directory / "charts" / name)


@pytest.fixture(scope="module")
def url_run(target, tmp_path_factory) -> Path:
    return recorded(tmp_path_factory.mktemp("url"), f"{target.url}/health", "-d", "1s", "-c", "2")


def test_a_url_runs_report_holds_the_records_numbers(url_run):
    tables, text = check_run_report(url_run)
    assert row(tables["Executive summary"], "figure", "record")["value"] == "complete"
    assert row(tables["Executive summary"], "figure", "thresholds")["value"] == "none set"
    assert "same machine as the target (127.0.0.1)" in text
    check_charts(url_run, text, {"throughput.svg", "latency.svg", "spectrum.svg"})


def test_a_scenario_runs_report_has_its_thresholds_checks_and_tags(target, tmp_path):
    scenario = write(tmp_path, MIXED, URL=target.url)
    out = tmp_path / "run"
    run = surge("run", str(scenario), "--out", str(out))
    assert run.code == 99, run.stderr  # the 404s fail failure_rate
    tables, _ = check_run_report(out)
    assert len(tables["Thresholds, pass or fail"]) == 4 and len(tables["Checks"]) == 2 and len(tables["Per tag"]) == 2
    assert (
        row(tables["Executive summary"], "figure", "thresholds")["value"] == "3 of 4 passed (failed: failure_rate < 1%)"
    )
    assert (
        row(tables["Executive summary"], "figure", "exit code")["value"]
        == "99: a threshold failed (or stopped the run)"
    )
    assert row(tables["Thresholds, pass or fail"], "threshold", "p(99) < 10s")["scope"] == "scenario 'ok', tag 'health'"
    assert "404" in {r["status"] for r in tables["Status codes"]}


def test_an_interrupted_runs_report_says_it_is_incomplete_and_why(target, tmp_path):
    out = tmp_path / "run"
    proc = run_and_signal(
        ["run", f"{target.url}/health", "-d", "30s", "-c", "1", "--out", str(out)],
        signal.SIGINT,
        lambda: intervals_logged(out) >= 1,
    )
    assert proc.returncode == 130, proc.stderr
    tables, text = check_run_report(out)
    state = row(tables["Executive summary"], "figure", "record")["value"]
    assert state.startswith("incomplete: the run was stopped early by SIGINT"), state
    assert "incomplete record: the run was stopped early by SIGINT" in text


def test_an_unreachable_runs_report_shows_no_latency(tmp_path):
    out = tmp_path / "run"
    run = surge("run", "http://127.0.0.1:9/", "-d", "1s", "--out", str(out))
    assert run.code == 3, run.stderr
    tables, text = check_run_report(out)
    assert row(tables["Executive summary"], "figure", "p99 latency (ms)")["value"] == "-"
    assert "Latency" not in tables
    assert "the target was not reachable at the start: nothing was sent" in text


def test_an_imported_runs_report_shows_missing_figures_as_missing(tmp_path):
    out = tmp_path / "record"
    run = surge("import", str(FIXTURES / "hey-6k.csv"), "--out", str(out))
    assert run.code == 0, run.stderr
    tables, text = check_run_report(out)
    assert "imported from hey: the machine that ran it is unknown" in text
    method = {r["item"]: r["value"] for r in tables["Method"]}
    assert method["environment"] == "unknown (an imported run)"


def _experiment(args: list[str], out: Path) -> tuple[dict[str, Any], Tables, str]:
    run = surge(*args, "--out", str(out), timeout=300)
    assert run.code == 0, run.stderr
    doc = json.loads((out / "experiment.json").read_text())
    text = (out / "report.md").read_text()
    no_python_repr(text)
    no_python_repr((out / "report.html").read_text())
    tables = parse_tables(text)
    runs = tables[f"Runs ({len(doc['runs'])})"]
    titles = {
        "req/s": "responses_per_s",
        "goodput/s": "successes_per_s",
        "p50 ms": "p50_ms",
        "p95 ms": "p95_ms",
        "p99 ms": "p99_ms",
        "failure rate": "failure_rate",
    }
    for entry, ran in zip(runs, doc["runs"], strict=True):
        assert entry["id"] == ran["run_id"][:8]
        for column, key in titles.items():
            same(entry[column], ran["figures"][key])
    for entry in recorded_runs(out, doc):  # every run wrote its own report too
        check_run_report(entry)
    return doc, tables, text


def recorded_runs(out: Path, doc: dict[str, Any]) -> list[Path]:
    return [out / entry["directory"] for entry in doc["runs"]]


STAT_KEYS = {
    "n": "n",
    "mean": "mean",
    "SD": "sd",
    "CI low": "ci_low",
    "CI high": "ci_high",
    "median": "median",
    "min": "min",
    "max": "max",
    "CV": "cv",
}
FIGURE_KEYS = {
    "req/s": "responses_per_s",
    "goodput/s": "successes_per_s",
    "p50 ms": "p50_ms",
    "p95 ms": "p95_ms",
    "p99 ms": "p99_ms",
    "failure rate": "failure_rate",
}


def test_a_repeats_report_holds_its_statistics(target, tmp_path):
    out = tmp_path / "repeat"
    doc, tables, text = _experiment(["repeat", f"{target.url}/health", "-n", "2", "-d", "1s", "-c", "1"], out)
    rows = tables["Statistics over the runs (95% confidence interval of the mean)"]
    statistics = doc["analysis"]["statistics"]
    assert len(rows) == len(statistics)
    for entry in rows:
        for column, key in STAT_KEYS.items():
            value = statistics[FIGURE_KEYS[entry["figure"]]][key]
            same(entry[column], value)
    assert "only 2 run(s) behind a figure: fewer than 5 repetitions" in text
    check_charts(out, text, {"repeat-responses_per_s.svg", "repeat-p95_ms.svg"})


def test_a_sweeps_report_holds_its_curve(target, tmp_path):
    out = tmp_path / "sweep"
    doc, tables, text = _experiment(
        ["sweep", f"{target.url}/health", "--vus", "1,2", "-d", "1s", "--warmup", "0s"], out
    )
    analysis = doc["analysis"]
    curve = tables["Curve (2 of 2 levels measured)"]
    for entry, level in zip(curve, analysis["levels"], strict=True):
        assert entry["load"] == f"{level['load']:g} VUs" and entry["zone"] == level["zone"]
        for column, key in {**FIGURE_KEYS, "success rate": "success_rate"}.items():
            same(entry[column], level[key])
    points = {r["item"]: r["value"] for r in tables["Peak, knee and USL fit"]}
    same(points["peak req/s"], analysis["peak"]["throughput"])
    assert points["peak load"] == f"{analysis['peak']['load']:g} VUs"
    assert points["USL fit"] == f"none: {analysis['usl']['refused']}"
    check_charts(out, text, {"sweep.svg"})
    # From the history alone, its directory gone: the same report.
    kept = (out / "report.md").read_text()
    shutil.rmtree(out)
    again = surge("report", doc["experiment_id"][:10])
    assert again.code == 0, again.stderr
    written = Path(SCRATCH) / again.stdout.splitlines()[-1]
    assert written == Path(SCRATCH) / "results" / out.name / "report.md"
    assert written.read_text() == kept
    last = surge("report", "last")  # what was done last: the sweep, not its last run
    assert last.stdout == again.stdout, last.stderr
    shutil.rmtree(written.parent)


def test_a_capacity_searchs_report_holds_its_steps(target, tmp_path):
    out = tmp_path / "capacity"
    doc, tables, text = _experiment(
        [
            "capacity",
            f"{target.url}/health",
            "--slo",
            "p(99) < 1s",
            "--start-rate",
            "50",
            "--max-rate",
            "100",
            "--step-duration",
            "1s",
            "--max-late",
            "50%",
            "--retries",
            "1",
        ],
        out,
    )
    analysis = doc["analysis"]
    steps = tables[f"Search steps ({len(analysis['steps'])})"]
    for entry, step in zip(steps, analysis["steps"], strict=True):
        same(entry["offered/s"], step["rate"])
        same(entry["achieved/s"], step["achieved_per_s"])
        assert entry["verdict"] == ("pass" if step["passed"] else "fail")
        for column, key in (
            ("p50 ms", "p50_ms"),
            ("p95 ms", "p95_ms"),
            ("p99 ms", "p99_ms"),
            ("failure rate", "failure_rate"),
            ("late share", "late_share"),
            ("dropped share", "dropped_share"),
        ):
            same(entry[column], step[key])
    found = {r["item"]: r["value"] for r in tables["Rate found"]}
    same(found["rate found (/s)"], analysis["rate"])
    same(found["lowest failing rate (/s)"], analysis["high"])
    assert found["stop reason"] == analysis["stop_reason"]
    check_charts(out, text, {"capacity.svg"})


def test_a_comparisons_report_holds_its_variants(target, tmp_path):
    out = tmp_path / "compare"
    doc, tables, text = _experiment(
        [
            "compare",
            f"{target.url}/health",
            "-n",
            "2",
            "-d",
            "1s",
            "-c",
            "1",
            "--variant",
            f"a={target.url}",
            "--variant",
            f"b={target.url}",
        ],
        out,
    )
    analysis = doc["analysis"]
    variants = tables["Variants (95% confidence intervals)"]
    assert len(variants) == sum(len(e) for e in analysis["estimates"].values())
    for entry in variants:
        estimate = analysis["estimates"][entry["variant"]][FIGURE_KEYS[entry["figure"]]]
        for column in ("n", "mean", "SD", "CI low", "CI high"):
            same(entry[column], estimate[STAT_KEYS[column]])
    pairs = tables["Comparisons (ratio = variant mean / reference mean)"]
    (pair,) = analysis["comparisons"]
    for entry, figure in zip(pairs, pair["figures"], strict=True):
        assert entry["pair"] == "b vs a" and entry["verdict"] == figure["verdict"]
        same(entry["ratio"], figure["ratio"])
        same(entry["Welch p"], figure["welch_p"])
        same(entry["ratio CI low"], (figure["ratio_ci"] or [None])[0])
    assert "variant b: only 2 run(s)" in text
    check_charts(out, text, {"compare-responses_per_s.svg", "compare-p95_ms.svg"})


def test_surge_report_rebuilds_a_deleted_runs_report_from_the_history(target, tmp_path):
    run = surge_in(tmp_path, "run", f"{target.url}/health", "-d", "1s", "-c", "1")
    assert run.returncode == 0, run.stderr
    directory = tmp_path / run.stderr.splitlines()[-1].removeprefix("results: ")
    kept = (directory / "report.md").read_text()
    charts = {p.name: p.read_bytes() for p in (directory / "charts").iterdir()}
    run_id = json.loads((directory / "summary.json").read_text())["meta"]["run_id"]
    shutil.rmtree(directory)
    again = surge_in(tmp_path, "report", run_id[:8])
    assert again.returncode == 0, again.stderr
    assert again.stdout.splitlines()[-1] == str(directory.relative_to(tmp_path) / "report.md")
    assert (directory / "report.md").read_text() == kept
    assert {p.name: p.read_bytes() for p in (directory / "charts").iterdir()} == charts
    elsewhere = surge_in(tmp_path, "report", "last", "--out", "elsewhere")
    assert elsewhere.stdout == "elsewhere/report.md\n"
    assert (tmp_path / "elsewhere" / "report.md").read_text() == kept


def test_surge_report_of_a_directory_writes_into_it(url_run, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(url_run, copy)
    (copy / "report.md").unlink()
    shutil.rmtree(copy / "charts")
    done = surge("report", str(copy))
    assert (done.code, done.stdout) == (0, f"{copy / 'report.md'}\n"), done.stderr
    assert (copy / "report.md").read_text() == (url_run / "report.md").read_text()


def test_surge_report_html_rebuilds_the_runs_report_html(url_run, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(url_run, copy)
    (copy / "report.html").unlink()
    (copy / "report.md").unlink()
    done = surge("report", str(copy), "--format", "both")
    assert done.code == 0, done.stderr
    # The same pages but for where the record is (the HTML names its results directory).
    assert (copy / "report.html").read_text().replace(str(copy), str(url_run)) == (url_run / "report.html").read_text()
    assert (copy / "report.md").read_text() == (url_run / "report.md").read_text()


@pytest.mark.parametrize(
    "args, error",
    [
        (
            ["report", "zzz"],
            "surge: error: RUN|EXPERIMENT: 'zzz' is neither a run id, a prefix of one, 'last', nor a results directory",
        ),
        (["report", "ffffffff"], "surge: error: RUN|EXPERIMENT: no run 'ffffffff' in the history"),
        (["report", "last", "--format", "pdf"], "surge: error: --format: "),
    ],
)
def test_surge_report_bad_input_is_one_line_and_exit_2(args, error):
    done = surge(*args)
    assert done.code == 2 and done.stderr.startswith(error) and done.stderr.count("\n") == 1, done.stderr
