"""surge import: k6 (both summaries, NDJSON), hey CSV and oha JSON made against the reference
target (tests/fixtures/imports/README.md) recorded with the tool's own counts and percentiles,
missing figures null and shown as missing, and every bad input refused in one line, exit 2."""

from __future__ import annotations

import csv
import json
import re
import shutil
from pathlib import Path

import pytest
from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogReader

from conftest import SCRATCH, surge
from surge.record.figures import key_figures

FIXTURES = Path(__file__).parents[1] / "fixtures" / "imports"


def _import(tmp_path: Path, name: str, *args: str):
    out = tmp_path / "record"
    run = surge("import", str(FIXTURES / name), "--out", str(out), *args)
    assert run.code == 0, run.stderr
    assert run.stderr.strip().splitlines()[-1] == f"results: {out}"
    return run, json.loads((out / "summary.json").read_text()), out


def _stats(name: str) -> dict[str, int]:
    """_stats are the target's own response counts for the tool's requests (GET /tasks)."""
    return json.loads((FIXTURES / name).read_text())["responses"]["GET /tasks"]


def _hey_printed(name: str) -> dict[str, object]:
    """_hey_printed reads hey's text report: percentiles, fastest, slowest (seconds), statuses."""
    text = (FIXTURES / name).read_text()
    percentiles = {int(p): float(v) for p, v in re.findall(r"(\d+)%% in ([\d.]+) secs", text)}
    codes = {code: int(n) for code, n in re.findall(r"\[(\d{3})\]\s+(\d+) responses", text)}
    fastest = float(re.search(r"Fastest:\s+([\d.]+)", text)[1])
    slowest = float(re.search(r"Slowest:\s+([\d.]+)", text)[1])
    return {"percentiles": percentiles, "codes": codes, "fastest": fastest, "slowest": slowest}


def test_hey_csv_equals_heys_own_report_and_the_targets_counts(tmp_path):
    run, doc, _ = _import(tmp_path, "hey-both-6k.csv")
    printed = _hey_printed("hey-both-6k.txt")
    lat = doc["latency"]["all"]
    for percent, field in ((50, "p50_ms"), (90, "p90_ms"), (95, "p95_ms"), (99, "p99_ms")):
        assert f"{lat[field] / 1000:4.4f}" == f"{printed['percentiles'][percent]:4.4f}", field
    assert f"{lat['min_ms'] / 1000:4.4f}" == f"{printed['fastest']:4.4f}"
    assert f"{lat['max_ms'] / 1000:4.4f}" == f"{printed['slowest']:4.4f}"
    assert doc["requests"]["status_codes"] == printed["codes"] == _stats("hey-both-6k.stats.json")
    assert doc["requests"]["responses"] == 6000 and doc["requests"]["sent"] is None
    assert doc["meta"]["tool"] == "hey" and doc["meta"]["source"]["file"] == "hey-both-6k.csv"
    assert "- sent" in run.stdout


def test_hey_csv_from_unmodified_hey_matches_the_targets_counts(tmp_path):
    _, doc, _ = _import(tmp_path, "hey-6k.csv")
    stats = _stats("hey-6k.stats.json")
    assert doc["requests"]["status_codes"] == stats
    assert doc["requests"]["succeeded"] == stats["200"] and doc["requests"]["failed"] == stats["500"]


def test_hey_csv_record_has_intervals_and_an_hlog_holding_every_request(tmp_path):
    _, doc, out = _import(tmp_path, "hey-both-6k.csv")
    rows = list(csv.DictReader((out / "timeseries.csv").open()))
    assert len(rows) == len(doc["intervals"]) >= 3
    assert sum(int(r["successes"]) + int(r["failures"]) for r in rows) == 6000
    reader = HistogramLogReader(str(out / "latency.hlog"), HdrHistogram(1, 3_600_000_000, 3))
    total = HdrHistogram(1, 3_600_000_000, 3)
    lines = 0
    while (histogram := reader.get_next_interval_histogram()) is not None:
        assert histogram.get_total_count() == doc["intervals"][lines]["latency"]["all"]["count"]
        total.add(histogram)
        lines += 1
    assert lines == len(doc["intervals"])
    expected = HdrHistogram(1, 3_600_000_000, 3)
    for row in csv.DictReader((FIXTURES / "hey-both-6k.csv").open()):
        expected.record_value(round(float(row["response-time"]) * 1e6))
    assert total.get_total_count() == 6000
    for percent in (50, 90, 99, 99.9, 100):
        assert total.get_value_at_percentile(percent) == expected.get_value_at_percentile(percent)


def test_oha_json_equals_what_oha_printed_and_the_targets_counts(tmp_path):
    _, doc, out = _import(tmp_path, "oha-6k.json")
    printed = json.loads((FIXTURES / "oha-6k.json").read_text())
    lat = doc["latency"]["all"]
    for key, field in (
        ("p50", "p50_ms"),
        ("p90", "p90_ms"),
        ("p95", "p95_ms"),
        ("p99", "p99_ms"),
        ("p99.9", "p99_9_ms"),
    ):
        assert lat[field] == pytest.approx(printed["latencyPercentiles"][key] * 1000, abs=1e-9)
    assert lat["max_ms"] == pytest.approx(printed["summary"]["slowest"] * 1000, abs=1e-9)
    assert doc["requests"]["status_codes"] == printed["statusCodeDistribution"] == _stats("oha-6k.stats.json")
    assert doc["requests"]["sent"] == 6000 and lat["stdev_ms"] is None
    assert doc["intervals"] == [] and doc["meta"]["tool"] == "oha"
    assert (out / "timeseries.csv").read_text().count("\n") == 1  # the header: oha keeps no time series


def test_oha_json_of_a_run_with_only_errors(tmp_path):
    _run, doc, _ = _import(tmp_path, "oha-refused-6k.json")
    assert doc["requests"]["failed"] == 6000 and doc["requests"]["responses"] == 0
    assert doc["requests"]["failure_classes"] == {"Connection refused (os error 111)": 6000}
    assert doc["latency"]["all"]["p50_ms"] is None


def _k6_points() -> list[dict]:
    return [json.loads(line) for line in (FIXTURES / "k6-ndjson.json").read_text().splitlines()]


def test_k6_summary_export_keeps_what_k6_kept_and_nothing_more(tmp_path):
    run, doc, _ = _import(tmp_path, "k6-summary-export.json")
    export = json.loads((FIXTURES / "k6-summary-export.json").read_text())["metrics"]
    lat = doc["latency"]["all"]
    assert lat["p95_ms"] == export["http_req_duration"]["p(95)"]
    assert lat["p50_ms"] == export["http_req_duration"]["med"]
    assert lat["p99_ms"] is None and lat["p99_9_ms"] is None and lat["count"] is None
    # http_req_failed.passes are the failed requests.
    assert doc["requests"]["failed"] == export["http_req_failed"]["passes"] == _stats("k6.stats.json")["500"]
    assert doc["requests"]["sent"] == 1000 and doc["requests"]["status_codes"] is None
    assert doc["intervals"] == [] and set(doc["histograms"].values()) == {None}
    table_row = next(line for line in run.stdout.splitlines() if line.startswith("all"))
    assert table_row.count("-") == 3  # p99, p99.9, count


@pytest.mark.parametrize(
    "name, values", [("k6-summary-export.json", lambda m: m), ("k6-handle-summary.json", lambda m: m["values"])]
)
def test_k6_http_reqs_are_the_responses_and_its_rate_the_responses_per_second(tmp_path, name, values):
    _, doc, _ = _import(tmp_path, name)
    reqs = values(json.loads((FIXTURES / name).read_text())["metrics"]["http_reqs"])
    assert doc["requests"]["responses"] == reqs["count"] == 1000
    assert doc["throughput"]["responses_per_s"] == pytest.approx(reqs["rate"], rel=1e-12)
    shown = surge("show", doc["meta"]["run_id"], "--json").json()
    assert key_figures(shown)["responses_per_s"] == pytest.approx(reqs["rate"], rel=1e-12)


def test_k6_handle_summary_reads_values_and_the_asked_p99(tmp_path):
    _, doc, _ = _import(tmp_path, "k6-handle-summary.json")
    values = json.loads((FIXTURES / "k6-handle-summary.json").read_text())["metrics"]["http_req_duration"]["values"]
    assert doc["latency"]["all"]["p99_ms"] == values["p(99)"] and doc["latency"]["all"]["count"] == 1000
    assert doc["throughput"]["window_s"] == pytest.approx(
        json.loads((FIXTURES / "k6-handle-summary.json").read_text())["state"]["testRunDurationMs"] / 1000
    )


def test_k6_ndjson_rebuilds_what_the_summaries_say(tmp_path):
    _, doc, out = _import(tmp_path, "k6-ndjson.json")
    values = json.loads((FIXTURES / "k6-handle-summary.json").read_text())["metrics"]
    for field, stat in (
        ("p50_ms", "med"),
        ("p90_ms", "p(90)"),
        ("p95_ms", "p(95)"),
        ("p99_ms", "p(99)"),
        ("min_ms", "min"),
        ("max_ms", "max"),
        ("mean_ms", "avg"),
    ):
        assert doc["latency"]["all"][field] == pytest.approx(values["http_req_duration"]["values"][stat], rel=1e-12)
        assert doc["latency"]["success"][field] == pytest.approx(
            values["http_req_duration{expected_response:true}"]["values"][stat], rel=1e-12
        )
    failed_points = sum(
        p["data"]["value"] for p in _k6_points() if p["type"] == "Point" and p["metric"] == "http_req_failed"
    )
    assert doc["requests"]["failed"] == failed_points == values["http_req_failed"]["values"]["passes"]
    assert doc["requests"]["status_codes"] == _stats("k6.stats.json")
    assert doc["started_at_unix_s"] is not None and doc["meta"]["source"]["start_from"] == "source"
    assert doc["meta"]["target"].startswith("http://127.0.0.1:")
    assert (out / "latency.hlog").read_text().count("HISTFAAA") == len(doc["intervals"]) >= 1


@pytest.mark.parametrize(
    "name, fmt",
    [
        ("hey-6k.csv", "hey-csv"),
        ("oha-6k.json", "oha-json"),
        ("k6-ndjson.json", "k6-ndjson"),
        ("k6-summary-export.json", "k6-summary-export"),
        ("k6-handle-summary.json", "k6-handle-summary"),
    ],
)
def test_auto_detection_by_content(tmp_path, name, fmt):
    renamed = tmp_path / "run.data"  # no telling extension
    shutil.copy(FIXTURES / name, renamed)
    run = surge("import", str(renamed), "--out", str(tmp_path / "out"))
    assert run.code == 0, run.stderr
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["meta"]["source"]["format"] == fmt


def test_default_directory_is_named_by_the_runs_start_and_the_file(tmp_path):
    run = surge("import", str(FIXTURES / "k6-ndjson.json"), "--name", "k6run", "--tag", "arch=scale-out")
    assert run.code == 0, run.stderr
    directory = Path(SCRATCH) / run.stderr.strip().splitlines()[-1].removeprefix("results: ")
    doc = json.loads((directory / "summary.json").read_text())
    assert re.fullmatch(r"\d{8}-\d{6}-k6run(-\d+)?", directory.name)
    assert directory.name.startswith(doc["meta"]["started_at"][:10].replace("-", ""))
    assert doc["meta"]["tags"] == {"arch": "scale-out"} and doc["meta"]["complete"] is True
    shutil.rmtree(directory)


def _bad(tmp_path: Path, text: str, name: str = "bad.json") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    "text, tool, message",
    [
        ("", "auto", "{f}: empty file: nothing to import"),
        ("hello\n", "auto", "{f}: not a format surge imports"),
        ('{"metrics": {"http_reqs": \n{"count": 1,}}}', "auto", "{f}:2: not valid JSON"),
        ('{"metrics": {"http_reqs": {"count": 3, "rate": 1}}}', "auto", "{f}: metrics.http_req_failed: missing"),
        (
            '{"metrics": {"http_reqs": {"rate": 1}, "http_req_failed": {"passes": 0, "fails": 1}}}',
            "auto",
            "{f}: metrics.http_reqs.count: missing or not a number",
        ),
        (
            '{"type":"Point","metric":"vus","data":{"time":"2026-01-01T00:00:00Z","value":1}}\n{"type":"Point"\n',
            "auto",
            "{f}:2: not valid JSON",
        ),
        (
            "response-time,DNS+dialup,DNS,Request-write,Response-delay,Response-read,status-code,offset\n"
            "0.0010,0.0000,0.0000,0.0000,0.0010,0.0000,200\n",
            "auto",
            "{f}:2: expected 8 comma-separated columns, found 7",
        ),
        (
            "response-time,DNS+dialup,DNS,Request-write,Response-delay,Response-read,status-code,offset\n"
            "0.0010,0.0000,0.0000,0.0000,0.0010,0.0000,OK,0.1\n",
            "auto",
            "{f}:2: status-code: 'OK' is not an HTTP status",
        ),
    ],
)
def test_bad_input_is_one_line_naming_file_and_line(tmp_path, text, tool, message):
    path = _bad(tmp_path, text)
    run = surge("import", str(path), "--tool", tool)
    assert run.code == 2, run.stderr
    assert run.stderr.splitlines() == [run.stderr.splitlines()[0]]
    assert run.stderr.startswith("surge: error: " + message.format(f=path)), run.stderr
    assert not (Path(SCRATCH) / "results").exists() or not any((Path(SCRATCH) / "results").glob("*bad*"))


def test_wrong_tool_is_refused_naming_the_tool_that_made_it(tmp_path):
    run = surge("import", str(FIXTURES / "hey-6k.csv"), "--tool", "k6")
    assert run.code == 2
    assert run.stderr == f"surge: error: {FIXTURES / 'hey-6k.csv'}: --tool k6, but this is hey's output (hey-csv)\n"


def test_nothing_is_recorded_when_any_file_is_bad(tmp_path):
    bad = _bad(tmp_path, "")
    run = surge("import", str(FIXTURES / "oha-6k.json"), str(bad), "--name", "all-or-nothing")
    assert run.code == 2 and run.stderr == f"surge: error: {bad}: empty file: nothing to import\n"
    assert not list((Path(SCRATCH) / "results").glob("*all-or-nothing*"))


def test_out_with_several_files_and_a_bad_tag_are_refused(tmp_path):
    run = surge("import", str(FIXTURES / "oha-6k.json"), str(FIXTURES / "hey-6k.csv"), "--out", str(tmp_path / "o"))
    assert run.code == 2 and run.stderr.startswith("surge: error: --out: names one record's directory")
    run = surge("import", str(FIXTURES / "oha-6k.json"), "--tag", "novalue")
    assert run.code == 2 and run.stderr.startswith("surge: error: --tag: expected a key")


def test_an_import_is_recorded_in_the_history_and_shown_as_imported(tmp_path):
    run, doc, _ = _import(tmp_path, "oha-6k.json", "--tag", "arch=monolith")
    listed = surge("history", "--tool", "oha", "--tag", "arch=monolith", "--json")
    assert listed.code == 0, listed.stderr
    rows = listed.json()
    assert [r["id"] for r in rows] == [doc["meta"]["run_id"]]
    assert rows[0]["requests"] == doc["requests"]["sent"]
    shown = surge("show", doc["meta"]["run_id"][:8])
    assert shown.code == 0, shown.stderr
    assert shown.stdout == run.stdout
    assert surge("history", "--tool", "hey", "--json").json() == []


@pytest.mark.parametrize(
    "name",
    [
        "k6-summary-export.json",
        "k6-handle-summary.json",
        "k6-ndjson.json",
        "hey-6k.csv",
        "oha-6k.json",
        "oha-refused-6k.json",
    ],
)
def test_every_imported_record_validates_against_the_schema(tmp_path, name):
    from surge.record.schema import validate_file

    _, _, out = _import(tmp_path, name)
    validate_file(out / "summary.json")
