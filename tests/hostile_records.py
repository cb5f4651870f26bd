"""Hostile imports and hand-edited results directories (issue 20, "Imports and records that
crash or lie"), shared by tests/test_record_hostile.py (each defect as a case) and
tests/test_fuzz_records.py (the seeds of its mutations): files in the formats ``surge import``
reads, made small from tests/fixtures/imports, and a results directory made by importing one."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).parent / "fixtures" / "imports"
HEY_HEADER = "response-time,DNS+dialup,DNS,Request-write,Response-delay,Response-read,status-code,offset"
DEEP = 100_000


def hey(*rows: tuple[str, str, str]) -> str:
    """hey is hey's CSV of (response-time, status-code, offset) rows."""
    return HEY_HEADER + "\n" + "".join(f"{t},0.0001,0,0,0.0005,0,{status},{offset}\n" for t, status, offset in rows)


def k6_point(
    value: Any = 1.5,
    *,
    time: str = "2026-11-23T22:00:00.5Z",
    status: str = "200",
    expected: str = "true",
    raw_value: str | None = None,
) -> str:
    """k6_point is one NDJSON ``http_req_duration`` point (``raw_value`` replaces the JSON of
    its value: NaN, Infinity...)."""
    line = json.dumps(
        {
            "type": "Point",
            "metric": "http_req_duration",
            "data": {
                "time": time,
                "value": value,
                "tags": {"status": status, "expected_response": expected, "url": "http://127.0.0.1/"},
            },
        }
    )
    return line.replace(json.dumps(value), raw_value, 1) if raw_value is not None else line


def k6_ndjson(*points: str) -> str:
    """k6_ndjson is k6's NDJSON output: its metric declaration, then ``points``."""
    head = json.dumps(
        {
            "type": "Metric",
            "metric": "http_req_duration",
            "data": {"name": "http_req_duration", "type": "trend", "contains": "time"},
        }
    )
    return "\n".join([head, *points]) + "\n"


def k6_summary(**metrics: Any) -> dict[str, Any]:
    """k6_summary is the fixture's ``--summary-export`` with ``metrics`` replaced."""
    doc: dict[str, Any] = json.loads((FIXTURES / "k6-summary-export.json").read_text())
    doc["metrics"].update(metrics)
    return doc


def oha(**changes: Any) -> dict[str, Any]:
    """oha is the fixture's oha JSON with top-level ``changes`` (``summary`` merged)."""
    doc: dict[str, Any] = json.loads((FIXTURES / "oha-6k.json").read_text())
    for key, value in changes.items():
        doc[key] = {**doc[key], **value} if key == "summary" and isinstance(value, dict) else value
    return doc


def raw(doc: Any, **literals: str) -> str:
    """raw is ``doc`` as JSON with each ``"@NAME@"`` string replaced by ``literals[NAME]``
    (JSON that Python's json cannot write: NaN, Infinity, 5,000-digit numbers)."""
    text = json.dumps(doc)
    for name, literal in literals.items():
        text = text.replace(f'"@{name}@"', literal)
    return text


def deep(prefix: str) -> str:
    """deep is a JSON document nested DEEP levels under ``prefix``."""
    return prefix + "[" * DEEP + "]" * DEEP + "}" * prefix.count("{")


IMPORTS: list[tuple[str, str, str, str]] = [
    # (case, file name, text, what the one-line error names)
    ("hey response-time NaN", "hey.csv", hey(("NaN", "200", "0.1")), "response-time"),
    ("hey response-time Infinity", "hey.csv", hey(("inf", "200", "0.1")), "response-time"),
    ("hey offset NaN", "hey.csv", hey(("0.01", "200", "nan")), "offset"),
    ("hey offset Infinity", "hey.csv", hey(("0.01", "200", "Infinity")), "offset"),
    ("hey offset 1e15", "hey.csv", hey(("0.01", "200", "0"), ("0.01", "200", "1e15")), "offset"),
    ("hey status superscript two", "hey.csv", hey(("0.01", "²", "0.1")), "status-code"),
    ("hey status of 5,000 digits", "hey.csv", hey(("0.01", "9" * 5000, "0.1")), "status-code"),
    ("hey status -200", "hey.csv", hey(("0.01", "-200", "0.1")), "status-code"),
    ("hey status 0", "hey.csv", hey(("0.01", "0", "0.1")), "status-code"),
    ("k6 value NaN", "k6.json", k6_ndjson(k6_point(raw_value="NaN")), "NaN"),
    ("k6 value Infinity", "k6.json", k6_ndjson(k6_point(raw_value="Infinity")), "Infinity"),
    ("k6 value 1e400", "k6.json", k6_ndjson(k6_point(raw_value="1e400")), "too large"),
    ("k6 value negative", "k6.json", k6_ndjson(k6_point(-494.0)), "data.value"),
    ("k6 month 13", "k6.json", k6_ndjson(k6_point(time="2026-13-01T00:00:00Z")), "data.time"),
    ("k6 year 0000", "k6.json", k6_ndjson(k6_point(time="0000-01-01T00:00:00Z")), "data.time"),
    ("k6 status superscript two", "k6.json", k6_ndjson(k6_point(status="²")), "data.tags.status"),
    ("k6 status of 5,000 digits", "k6.json", k6_ndjson(k6_point(status="9" * 5000)), "data.tags.status"),
    ("k6 status -200 a success", "k6.json", k6_ndjson(k6_point(status="-200")), "data.tags.status"),
    ("k6 status 0 a success", "k6.json", k6_ndjson(k6_point(status="0")), "status 0"),
    ("k6 points a century apart", "k6.json", k6_ndjson(k6_point(), k6_point(time="2126-11-23T22:00:00Z")), "data.time"),
    (
        "k6 NDJSON nested 100,000 deep",
        "k6.json",
        k6_ndjson(k6_point()).replace('"value": 1.5', '"value": ' + "[" * DEEP + "]" * DEEP),
        "nested",
    ),
    ("k6 summary count NaN", "k6.json", raw(k6_summary(http_reqs={"count": "@x@", "rate": 10}), x="NaN"), "NaN"),
    (
        "k6 summary count of 5,000 digits",
        "k6.json",
        raw(k6_summary(http_reqs={"count": "@x@", "rate": 10}), x="9" * 5000),
        "too large",
    ),
    (
        "k6 summary passes 5,000 of 1,000",
        "k6.json",
        json.dumps(k6_summary(http_req_failed={"passes": 5000, "fails": 0, "value": 1})),
        "http_req_failed.passes",
    ),
    (
        "k6 summary negative latency",
        "k6.json",
        json.dumps(k6_summary(http_req_duration={"avg": -494.0, "min": 1, "med": 2, "max": 3, "p(90)": 2, "p(95)": 2})),
        "http_req_duration.avg",
    ),
    (
        "k6 summary negative rate",
        "k6.json",
        json.dumps(k6_summary(http_reqs={"count": 1000, "rate": -5})),
        "http_reqs.rate",
    ),
    ("k6 summary nested 100,000 deep", "k6.json", deep('{"metrics": {"http_reqs": '), "nested"),
    ("oha total NaN", "oha.json", raw(oha(summary={"total": "@x@"}), x="NaN"), "NaN"),
    ("oha total Infinity", "oha.json", raw(oha(summary={"total": "@x@"}), x="Infinity"), "Infinity"),
    ("oha total negative", "oha.json", json.dumps(oha(summary={"total": -3.0})), "summary.total"),
    (
        "oha status superscript two",
        "oha.json",
        json.dumps(oha(statusCodeDistribution={"²": 6000})),
        "statusCodeDistribution",
    ),
    ("oha status -200", "oha.json", json.dumps(oha(statusCodeDistribution={"-200": 6000})), "statusCodeDistribution"),
    (
        "oha negative percentile",
        "oha.json",
        json.dumps(oha(latencyPercentiles={**oha()["latencyPercentiles"], "p99": -0.494})),
        "latencyPercentiles.p99",
    ),
    ("oha nested 100,000 deep", "oha.json", deep('{"summary": {}, "latencyPercentiles": '), "nested"),
]
"""IMPORTS are the malformed imports of issue 20, each refused in one line naming the field."""


def record_directory(tmp: Path) -> Path:
    """record_directory is a results directory made by ``surge import`` of a small hey CSV
    (intervals, histograms, timeseries.csv and latency.hlog all written), under ``tmp``."""
    from surge.imports import Source, load
    from surge.record.writer import RecordWriter

    tmp.mkdir(parents=True, exist_ok=True)
    csv = tmp / "small.csv"
    csv.write_text(hey(*((f"0.00{i % 9 + 1}", "200" if i % 7 else "503", f"{i * 0.05:.4f}") for i in range(60))))
    run = load(Source.read(str(csv)))
    directory = tmp / "record"
    directory.mkdir()
    writer = RecordWriter(
        directory,
        name="small",
        target_url="",
        scenario_file=None,
        tool=run.tool,
        started_unix_s=1_795_000_000.0,
        source={"file": csv.name, "sha256": "0" * 64, "format": run.format, "start_from": "source"},
    )
    writer.begin()
    for interval in run.document["intervals"]:
        writer.on_interval(interval)
    writer.finish(
        {
            **run.document,
            "started_at_unix_s": 1_795_000_000.0,
            "intervals": [{k: v for k, v in i.items() if k != "latency_histogram"} for i in run.document["intervals"]],
        },
        interrupted=False,
    )
    for report in ("report.md", "charts"):  # the report is not part of the record
        path = directory / report
        if path.is_dir():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()
    return directory


def _set(path: str, value: Any) -> Any:
    """_set is an edit of summary.json setting the dotted ``path`` (``intervals.1.end_s``)."""

    def edit(doc: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node: Any = doc
        for key in parents:
            node = node[int(key)] if isinstance(node, list) else node[key]
        node[int(last) if isinstance(node, list) else last] = value

    return edit


RECORDS: list[tuple[str, Any, str]] = [
    # (case, an edit of summary.json (a function of its document) or its new text, what the error names)
    ("requests.sent a string", _set("requests.responses", "60"), "requests.responses"),
    ("latency.all null", _set("latency.all", None), "latency.all"),
    ("an interval not an object", _set("intervals.0", "x"), "intervals[0]"),
    ("an interval ending before it starts", _set("intervals.1.end_s", -3.0), "intervals[1].end_s"),
    ("intervals out of order", _set("intervals.0.index", 7), "intervals[1].index"),
    ("an interval without requests", lambda d: d["intervals"][0].pop("requests"), "intervals[0]"),
    ("histogram bytes not base64", _set("histograms.latency", "not base64!"), "histograms.latency"),
    ("histogram bytes corrupt", _set("histograms.latency", "HIST" + "A" * 40), "histograms.latency"),
    ("a negative p99", _set("latency.all.p99_ms", -494.0), "latency.all.p99_ms"),
    ("a negative throughput", _set("throughput.responses_per_s", -3.0), "throughput.responses_per_s"),
    ("status -200", _set("requests.status_codes", {"-200": 60}), "requests.status_codes"),
    ("more successes than responses", _set("requests.succeeded", 600), "requests.succeeded"),
    ("a count of 10^30", _set("requests.failed", 10**30), "requests.failed"),
    ("p99 NaN", lambda d: json.dumps(d).replace('"p99_ms": ', '"p99_ms": NaN, "x": ', 1), "NaN"),
    ("p99 Infinity", lambda d: json.dumps(d).replace('"p99_ms": ', '"p99_ms": Infinity, "x": ', 1), "Infinity"),
    ("nested 100,000 deep", lambda d: deep('{"meta": '), "nested"),
    ("not JSON", lambda d: '{"meta": ', "not valid JSON"),
]
"""RECORDS are hand-edits of a results directory's summary.json, each refused in one line."""


def edit_summary(directory: Path, edit: Any) -> None:
    """edit_summary applies one RECORDS edit to ``directory``'s summary.json."""
    path = directory / "summary.json"
    doc = json.loads(path.read_text())
    text = edit(doc)
    path.write_text(text if isinstance(text, str) else json.dumps(doc))
