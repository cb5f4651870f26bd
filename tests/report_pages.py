"""report_pages: reading report.md and report.html back as a reader sees them (their text, their
tables, a cell's value, their sections), the recorded runs and experiments to render them from, and
the ``watched`` fixture (a scenario run recorded with its target watched), a pytest plugin of
tests/conftest.py so that every test directory has it."""

from __future__ import annotations

import copy
import html as html_lib
import json
import re
from pathlib import Path
from typing import Any

import pytest

from conftest import surge, write
from surge.engine.target import TargetProcess

Tables = dict[str, list[dict[str, str]]]


REPR = re.compile(r"\b(None|True|False)\b|\{'|\['|\{\}|\[\]|<built-in|object at 0x")
"""REPR matches what Python's str() of a value leaks into text: None, True, False, a dict's or a
list's repr, an empty container, an object's default repr."""


def page_text(page: str) -> str:
    """page_text is what a reader sees of a page: report.md as it is; of report.html the body's
    text without its scripts (the chart data and the chart library), tags and entities resolved."""
    if "<html" not in page:
        return page
    body = page.split("<body>", 1)[-1]
    body = re.sub(r"<script\b.*?</script>", " ", body, flags=re.S)
    return html_lib.unescape(re.sub(r"<[^>]+>", " ", body))


def no_python_repr(page: str) -> None:
    """no_python_repr asserts ``page`` (report.md or report.html) shows no Python repr."""
    text = page_text(page)
    found = [text[max(0, m.start() - 60) : m.end() + 20] for m in REPR.finditer(text)]
    assert not found, found


def parse_tables(markdown: str) -> Tables:
    """parse_tables reads every Markdown table under its nearest heading: heading → rows, each
    a dict column → cell (``\\|`` unescaped)."""
    found: Tables = {}
    heading, lines = "", markdown.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
        elif line.startswith("| ") and i + 1 < len(lines) and re.fullmatch(r"\|( ---:? \|)+", lines[i + 1]):
            columns = _cells(line)
            i += 2
            rows = []
            while i < len(lines) and lines[i].startswith("| "):
                rows.append(dict(zip(columns, _cells(lines[i]), strict=False)))
                i += 1
            assert heading not in found, f"two tables under {heading}"
            found[heading] = rows
            continue
        i += 1
    return found


def _cells(line: str) -> list[str]:
    cells = re.split(r"(?<!\\) \| ", line.strip()[2:-2])
    return [c.replace("\\|", "|").replace("\\\\", "\\") for c in cells]


def same(cell: str, value: Any) -> None:
    """same asserts a table cell shows ``value`` as rounded (a percentage cell a fraction ×100;
    ``-`` for a missing figure)."""
    if value is None:
        assert cell == "-", cell
        return
    text = cell.replace(",", "")
    if text.endswith("%"):
        text, value = text[:-1], value * 100
    decimals = len(text.partition(".")[2]) if "." in text and "e" not in text else 0
    if "e" in text:
        assert float(text) == pytest.approx(value, rel=1e-5), (cell, value)
        return
    assert abs(float(text) - value) <= 0.5 * 10**-decimals + 1e-9 * abs(value), (cell, value)


def row(rows: list[dict[str, str]], column: str, label: str) -> dict[str, str]:
    """row is the row whose ``column`` is ``label``."""
    matches = [r for r in rows if r[column] == label]
    assert len(matches) == 1, (label, rows)
    return matches[0]


def recorded(directory: Path, *args: str, code: int = 0) -> Path:
    """recorded runs ``surge run ARGS --out DIRECTORY/run``, asserts its exit ``code`` and returns
    the record's directory."""
    out = directory / "run"
    run = surge("run", *args, "--out", str(out))
    assert run.code == code, run.stderr
    return out


REPORTS = Path(__file__).parent / "fixtures" / "report_html"
"""REPORTS holds recorded runs and experiments whose report pages the tests render."""


def _document(kind: str) -> dict[str, Any]:
    """_document is the experiment.json of REPORTS' experiment of ``kind``."""
    document: dict[str, Any] = json.loads((REPORTS / f"experiment-{kind}.json").read_text(encoding="utf-8"))
    return document


def _levels_at(document: dict[str, Any], loads: list[float], zones: list[str]) -> dict[str, Any]:
    """_levels_at is a sweep ``document`` moved to ``loads`` with ``zones`` (its USL fit refused)."""
    moved = copy.deepcopy(document)
    analysis = moved["analysis"]
    analysis["levels"] = [
        dict(level, load=load, zone=zone) for level, load, zone in zip(analysis["levels"], loads, zones, strict=False)
    ]
    analysis["planned"] = loads
    analysis["peak"] = dict(analysis["peak"], load=loads[3])
    analysis["usl"] = {"refused": "for this test"}
    return moved


LEVELS = [250.0, 500.0, 1000.0, 2000.0, 4000.0, 8000.0]
"""LEVELS are the loads of a sweep spread over decades (a chart must tick each)."""


ZONES = ["optimal", "optimal", "stress", "degraded", "broken", "broken"]
"""ZONES are the zones of LEVELS, one of each colour the legend shows."""


SCENARIO = """\
target: @URL@
scenarios:
  spike:
    executor:
      type: ramping-vus
      start_vus: 1
      stages:
        - {duration: 2s, target: 4}
        - {duration: 2s, target: 4}
        - {duration: 1s, target: 8}
    flow:
      - name: health
        request: {path: /health}
  steady:
    executor: {type: constant-vus, vus: 2, duration: 5s}
    flow:
      - name: tasks
        request: {path: /health}
thresholds:
  - "p(95) < 200ms"
  - "p(99) < 1us"
  - "rate > 10000000"
"""
"""SCENARIO: a staged scenario (a hold at 4 VUs, a spike to 8) beside a steady one, and three
thresholds of which two must fail (no response comes back within 1 µs, nor 10 million a second)."""


@pytest.fixture(scope="session")  # read only: recorded once for the e2e and the browser tests
def watched(tmp_path_factory) -> Path:
    """watched is the record of SCENARIO against a reference target watched with --watch-pid."""
    tmp = tmp_path_factory.mktemp("watched")
    with TargetProcess() as target:
        return recorded(tmp, str(write(tmp, SCENARIO, URL=target.url)), "--watch-pid", str(target.pid), code=99)


def _sections(markdown: str) -> list[str]:
    """_sections are the titles of ``markdown``'s second-level headings, in order."""
    return [line[3:] for line in markdown.splitlines() if line.startswith("## ")]
