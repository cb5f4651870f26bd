"""Reading a results directory (``surge show DIR``, ``surge report DIR``, an experiment's runs):
the files read with the bounded, regular-file-only reads of scenario files (a FIFO, a device or
a symlink to /dev/zero is refused, never waited on or read without end), summary.json checked
(surge.record.check), timeseries.csv and latency.hlog checked line by line. Every problem is
BadInput naming the file, and the line or field (docs/record.md, "Reading a record")."""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path
from typing import Any

from surge.core.errors import BadInput
from surge.core.files import FileReadError, read_bounded
from surge.record.check import RecordError, check_document, histogram_problem, strict_json, upgrade
from surge.record.timeseries import COLUMNS

MAX_RECORD_FILE_BYTES = 512 * 1024 * 1024
"""MAX_RECORD_FILE_BYTES bounds each file of a results directory that surge reads (512 MiB: a
30-day run's time series is ~300 MiB)."""

TEXT_COLUMNS = frozenset({"scenario"})
"""TEXT_COLUMNS are timeseries.csv's columns that are not numbers (every other is a number or empty)."""


def read_text(path: Path, *, missing_ok: bool = False) -> str | None:
    """read_text is the UTF-8 text of the regular file ``path`` (at most MAX_RECORD_FILE_BYTES),
    None when it is missing and ``missing_ok``; BadInput naming it otherwise."""
    if missing_ok and not path.exists() and not path.is_symlink():
        return None
    try:
        data = read_bounded(path, MAX_RECORD_FILE_BYTES)
    except FileReadError as e:
        raise BadInput(str(path), e.message) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise BadInput(f"{path}:{line}", "not UTF-8 text") from None


def parse_summary(text: str, where: str) -> dict[str, Any]:
    """parse_summary is a summary.json's text parsed and checked (strict JSON, the schema,
    physical sense); BadInput naming ``where`` and the field otherwise."""
    try:
        document = strict_json(text)
        upgrade(document)
        check_document(document)
    except RecordError as e:
        raise BadInput(where if e.line is None else f"{where}:{e.line}", str(e)) from None
    result: dict[str, Any] = document
    return result


def read_json_object(file: Path) -> dict[str, Any]:
    """read_json_object is the JSON object in ``file`` (experiment.json), read as read_text
    reads and parsed as strict JSON; BadInput naming the file (and line) otherwise."""
    text = read_text(file)
    assert text is not None
    try:
        document = strict_json(text)
    except RecordError as e:
        raise BadInput(str(file) if e.line is None else f"{file}:{e.line}", str(e)) from None
    if not isinstance(document, dict):
        raise BadInput(str(file), "not a JSON object")
    return document


def read_summary(path: Path) -> dict[str, Any]:
    """read_summary is the checked summary.json of the results directory ``path``; BadInput
    naming the directory when it has none, or the file and field when it cannot be trusted."""
    file = path / "summary.json"
    if not file.exists() and not file.is_symlink():
        raise BadInput(str(path), "not a results directory: it has no summary.json")
    text = read_text(file)
    assert text is not None
    return parse_summary(text, str(file))


def _number_problem(cell: str) -> bool:
    try:
        return cell != "" and not math.isfinite(float(cell))
    except ValueError:
        return True


def check_timeseries(text: str, where: str) -> str:
    """check_timeseries is timeseries.csv's rows (without its header line) once the header
    names known columns (an earlier surge wrote fewer: COLUMNS' first ones) and every row has
    as many cells, numbers where numbers go; BadInput naming ``where``:LINE otherwise."""
    header, _, rows = text.partition("\n")
    names = header.strip().split(",") if header.strip() else list(COLUMNS)
    if any(name not in COLUMNS for name in names):
        raise BadInput(f"{where}:1", "not timeseries.csv's header line (docs/record.md)")
    numbers = [i for i, name in enumerate(names) if name not in TEXT_COLUMNS]
    try:
        for number, cells in enumerate(csv.reader(io.StringIO(rows)), 2):
            if not cells:
                continue
            if len(cells) != len(names):
                raise BadInput(f"{where}:{number}", f"expected {len(names)} cells, found {len(cells)}")
            bad = next((names[i] for i in numbers if _number_problem(cells[i])), None)
            if bad is not None:
                raise BadInput(f"{where}:{number}", f"{bad}: not a number")
    except csv.Error as e:
        raise BadInput(where, f"not CSV: {e}") from None
    return rows


def check_hlog(text: str, where: str) -> list[str]:
    """check_hlog is latency.hlog's interval lines (not its header, comment or legend lines),
    each ``start,length,max,histogram`` with finite numbers and an engine histogram; BadInput
    naming ``where``:LINE otherwise."""
    lines = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line or line.startswith(("#", '"')):
            continue
        cells = line.split(",")
        if len(cells) != 4 or any(_number_problem(c) or not c for c in cells[:3]):
            raise BadInput(f"{where}:{number}", "expected start,length,max,histogram (numbers, then base64)")
        problem = histogram_problem(cells[3])
        if problem is not None:
            raise BadInput(f"{where}:{number}", f"histogram: {problem}")
        lines.append(line)
    return lines
