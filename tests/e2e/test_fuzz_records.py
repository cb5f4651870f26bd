"""Fuzzing what surge reads back: seeded mutations of every import format (hey CSV, k6 NDJSON,
k6 --summary-export and handleSummary, oha JSON) and of a results directory (summary.json,
timeseries.csv, latency.hlog, the histograms' bytes), plus the known hostile cases
(tests/hostile_records.py). Whatever comes in, surge answers with a record that reads back and
prints, or with one line naming the file (FILE, FILE:LINE, FILE: field), exit 2: no traceback,
no hang, each case under 10 s, never more than 200 MB.

The bulk runs in one child process (``python tests/test_fuzz_records.py TMPDIR SEED CASES``)
whose peak RSS is measured; a dozen cases go through the CLI (``surge import``, ``surge show``,
``surge report``), each a child with 1 GB of address space at most and a timeout.
"""

from __future__ import annotations

import io
import json
import os
import random
import re
import shutil
import sys
import time
import traceback
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from hostile_records import FIXTURES, IMPORTS, RECORDS, edit_summary, record_directory
from test_fuzz_input import run_child

pytestmark = pytest.mark.cpu_heavy  # runs apart from the answer tests (Makefile: test-python)

RUN_RECORD = Path(__file__).parents[1] / "fixtures" / "report_html" / "run-scenario"
"""RUN_RECORD is a surge run's results directory (scenarios, checks, thresholds, a watched target)."""
SEED = 20_261_126
IN_PROCESS_CASES = 360
MAX_RSS_BYTES = 200 << 20
MAX_CASE_S = 10.0

EXTREMES = [
    "NaN",
    "Infinity",
    "-Infinity",
    "-1",
    "-0.0",
    "0",
    "1e400",
    "1e15",
    "1e-320",
    "9" * 5000,
    "4294967296",
    "18446744073709551616",
    '"x"',
    "null",
    "true",
    "[]",
    "{}",
    "[" * 40 + "]" * 40,
    "[" * 100_000 + "]" * 100_000,
    "inf",
    "nan",
    "²",
    "-200",
    "999",
]
DATES = [
    "2026-13-01T00:00:00Z",
    "0000-01-01T00:00:00Z",
    "9999-12-31T23:59:59Z",
    "1969-12-31T23:59:59Z",
    "2026-02-30T00:00:00Z",
    "2026-11-23T25:00:00+99:99",
]
NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w.])")
DATE = re.compile(r"\d{4}-\d\d-\d\dT[\d:.]+(?:Z|[+-]\d\d:\d\d)")
STATUS = re.compile(r'(?<=[",])[1-5]\d\d(?=[",])')


def seeds() -> list[tuple[str, str]]:
    """seeds are a small file of each import format, as (name, text)."""
    hey = (FIXTURES / "hey-6k.csv").read_text().splitlines(keepends=True)
    k6 = (FIXTURES / "k6-ndjson.json").read_text().splitlines(keepends=True)
    return [
        ("hey.csv", "".join(hey[:40])),
        ("k6.ndjson", "".join(k6[:90])),
        ("k6-export.json", (FIXTURES / "k6-summary-export.json").read_text()),
        ("k6-handle.json", (FIXTURES / "k6-handle-summary.json").read_text()),
        ("oha.json", (FIXTURES / "oha-6k.json").read_text()),
    ]


def mutate(rng: random.Random, text: str) -> str:
    """mutate applies one to three random edits to a file's text: a number, a status or a date
    made extreme, a line dropped or repeated, the text cut short, odd characters."""
    for _ in range(rng.randint(1, 3)):
        lines = text.splitlines(keepends=True) or [""]
        i = rng.randrange(len(lines))
        op = rng.randrange(8)
        pattern = (NUMBER, STATUS, DATE)[op] if op < 3 else None
        if pattern is not None:
            found = list(pattern.finditer(text))
            if found:
                m = rng.choice(found)
                new = rng.choice(DATES if pattern is DATE else EXTREMES)
                text = text[: m.start()] + new + text[m.end() :]
        elif op == 3:
            del lines[i]
            text = "".join(lines)
        elif op == 4:
            lines.insert(i, lines[i] * rng.choice([1, 2]))
            text = "".join(lines)
        elif op == 5:
            text = text[: rng.randrange(len(text) + 1)]
        elif op == 6:
            at = rng.randrange(len(text) + 1)
            text = text[:at] + rng.choice(["\x00", "\ufeff", ",", "\n", '"', "{", "]", "\\", "é", "\r"]) + text[at:]
        else:  # one value swapped for another of the file
            found = list(NUMBER.finditer(text))
            if len(found) > 1:
                m, other = rng.sample(found, 2)
                text = text[: m.start()] + other.group(0) + text[m.end() :]
    return text


def json_paths(doc: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """json_paths are the paths (key tuples) of every value in ``doc``."""
    out = [prefix]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += json_paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += json_paths(v, (*prefix, i))
    return out


def mutate_json(rng: random.Random, text: str) -> str:
    """mutate_json edits a JSON document (summary.json, a k6 summary, oha's): a value at a random
    path replaced by an extreme (its JSON text) or a string's bytes flipped, or, one time in
    four, the text mutated as any file is."""
    if rng.random() < 0.25:
        return mutate(rng, text)
    doc = json.loads(text)
    path = rng.choice(json_paths(doc)[1:])
    node = doc
    for key in path[:-1]:
        node = node[key]
    if rng.random() < 0.3 and isinstance(node[path[-1]], str) and len(node[path[-1]]) > 8:  # bytes flipped
        value = node[path[-1]]
        at = rng.randrange(len(value))
        node[path[-1]] = value[:at] + rng.choice("A/+=!") + value[at + 1 :]
        return json.dumps(doc)
    node[path[-1]] = "@EXTREME@"
    return json.dumps(doc).replace('"@EXTREME@"', rng.choice(EXTREMES))


def one_line(message: str, file: str) -> str | None:
    """one_line says what is wrong with an error's text, or None when it is one line naming
    ``file`` (FILE, FILE:LINE or FILE: field)."""
    if "\n" in message or not re.match(rf"^{re.escape(file)}(?::\d+)?: \S", message):
        return f"not one line naming {file}: {message[:300]!r}"
    return None


def read_back(directory: Path) -> None:
    """read_back reads a results directory as ``surge show``/``surge report`` do and renders
    it: the summary printed, report.md's text and report.html's, and the latency spectrum its
    chart draws (matplotlib's drawing itself, seconds a chart on a busy machine, is left to the
    CLI cases)."""
    from rich.console import Console

    from surge.present.html.run_page import render_run_html
    from surge.present.markdown.run_report import render_run_md
    from surge.present.run_charts import spectrum_chart
    from surge.present.terminal.stored_run import print_record
    from surge.record.stored import StoredRun

    run = StoredRun.from_directory(directory)
    print_record(run, Console(file=io.StringIO(), width=200))
    render_run_md(run, {})
    render_run_html(run)
    spectrum_chart(run.summary)


def record_import(source: Any, run: Any, directory: Path) -> None:
    """record_import records an accepted import as ``surge import`` does (no history)."""
    from surge.record.writer import RecordWriter

    directory.mkdir()
    started = run.started_unix_s if run.started_unix_s is not None else 1_795_000_000.0
    writer = RecordWriter(
        directory,
        name="fuzz",
        target_url=run.target,
        scenario_file=None,
        tool=run.tool,
        started_unix_s=started,
        source={"file": source.name, "sha256": source.sha256, "format": run.format, "start_from": "source"},
    )
    writer.begin()
    for interval in run.document["intervals"]:
        writer.on_interval(interval)
    writer.finish(
        {
            **run.document,
            "started_at_unix_s": started,
            "intervals": [{k: v for k, v in i.items() if k != "latency_histogram"} for i in run.document["intervals"]],
        },
        interrupted=False,
    )


def run_in_process(tmp: Path, seed: int, cases: int) -> dict[str, Any]:
    """run_in_process imports the hostile and ``cases`` mutated files (an accepted one is
    recorded and read back) and reads the hostile and mutated results directories; returns the
    outcomes, the slowest case and every failure (an unexpected exception, a malformed error)."""
    from surge.core.errors import BadInput
    from surge.imports import Source, load

    rng = random.Random(seed)
    bases = [record_directory(tmp / "base"), RUN_RECORD]
    files = seeds()
    work: list[tuple[str, str, str, Any]] = [("import", name, file, text) for name, file, text, _ in IMPORTS]
    work += [("record", name, "summary.json", (bases[0], edit)) for name, edit, _ in RECORDS]
    for n in range(cases):
        if n % 2 == 0:
            file, text = rng.choice(files)
            edited = mutate_json(rng, text) if file.endswith(".json") else mutate(rng, text)
            work.append(("import", f"{file} #{n}", file, edited))
        else:
            file, origin = (
                rng.choice(["summary.json", "summary.json", "timeseries.csv", "latency.hlog"]),
                rng.choice(bases),
            )
            text = (origin / file).read_text()
            edited = mutate_json(rng, text) if file == "summary.json" else mutate(rng, text)
            work.append(("record", f"{origin.name}/{file} #{n}", file, (origin, edited)))
    outcomes: Counter[str] = Counter()
    failures: list[dict[str, str]] = []
    slowest = (0.0, "")
    for number, (kind, name, file, content) in enumerate(work):
        case = tmp / f"case-{number}"
        case.mkdir()
        started = time.monotonic()
        where = str(case / file)
        try:
            if kind == "import":
                (case / file).write_text(content)
                source = Source.read(where)
                run = load(source)
                record_import(source, run, case / "record")
                where = str(case / "record")
                read_back(case / "record")
                outcomes["imported"] += 1
            else:
                origin, edit = content
                directory = shutil.copytree(origin, case / "record")
                where = str(directory / file)
                if callable(edit):  # a RECORDS edit
                    edit_summary(directory, edit)
                else:
                    (directory / file).write_text(edit)
                read_back(directory)
                outcomes["read"] += 1
        except BadInput as e:
            outcomes["refused"] += 1
            why = one_line(str(e), where)
            if why:
                failures.append({"case": name, "why": why})
        except BaseException as e:  # anything else is a bug: a traceback would reach the user
            outcomes["crashed"] += 1
            failures.append(
                {
                    "case": name,
                    "why": f"{type(e).__name__}: {str(e)[:300]}",
                    "where": traceback.format_exc()[-1500:],
                    "text": str(content if kind == "import" else content[1])[:1500],
                }
            )
        elapsed = time.monotonic() - started
        slowest = max(slowest, (elapsed, name))
        shutil.rmtree(case, ignore_errors=True)
    return {"outcomes": dict(outcomes), "failures": failures, "cases": len(work), "slowest": slowest}


def test_importing_and_reading_hostile_and_mutated_files_never_crashes(tmp_path):
    code, out, err, rss = run_child([__file__, str(tmp_path), str(SEED), str(IN_PROCESS_CASES)], timeout=240)
    assert code == 0, err[-3000:]
    report = json.loads(out)
    assert report["failures"] == [], json.dumps(report["failures"][:5], indent=1)
    outcomes = report["outcomes"]
    assert outcomes.get("refused", 0) > report["cases"] // 3, outcomes
    assert outcomes.get("imported", 0) > 0 and outcomes.get("read", 0) > 0, outcomes  # some mutations stay valid
    assert report["slowest"][0] < MAX_CASE_S, report["slowest"]
    assert rss < MAX_RSS_BYTES, f"peak RSS {rss / 2**20:.0f} MB"


def cli_cases(tmp: Path) -> list[tuple[list[str], str]]:
    """cli_cases are ``surge`` argument lists over hostile files, and the file each error names."""
    cases = []
    for name, file, text, _ in IMPORTS:
        if any(word in name for word in ("deep", "1e15", "NaN", "5,000")) and len(cases) < 8:
            path = tmp / f"{len(cases)}-{file}"
            path.write_text(text)
            cases.append((["import", str(path), "--out", str(tmp / f"out-{len(cases)}")], str(path)))
    base = record_directory(tmp / "base")
    for n, (_name, edit, _) in enumerate(
        r for r in RECORDS if r[0] in ("latency.all null", "nested 100,000 deep", "histogram bytes corrupt", "p99 NaN")
    ):
        directory = shutil.copytree(base, tmp / f"record-{n}")
        edit_summary(directory, edit)
        command = (
            ["show", str(directory)],
            ["report", str(directory)],
            ["baseline", "set", str(directory), "--name", "b"],
        )[n % 3]
        cases.append((command, str(directory / "summary.json")))
    return cases


def test_the_cli_answers_hostile_imports_and_records_in_one_line_each(tmp_path):
    cases = cli_cases(tmp_path)
    assert len(cases) >= 10
    for args, file in cases:
        code, _out, err, rss = run_child(["-m", "surge", *args, "--db", str(tmp_path / "h.db")], timeout=60)
        assert code == 2, (args, code, err[-2000:])
        assert rss < MAX_RSS_BYTES, (args, f"peak RSS {rss / 2**20:.0f} MB")
        assert err.count("\n") == 1 and err.startswith(f"surge: error: {file}"), (args, err[-2000:])


if __name__ == "__main__":  # the in-process half, in a child whose memory the test measures
    os.fsync = lambda fd: None  # scratch records need no durability; fsync on a shared disk takes seconds
    print(json.dumps(run_in_process(Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]))))
