"""Imports and records that crashed or lied (issue 20): each malformed import
(tests/hostile_records.py IMPORTS) and each hand-edit of a results directory (RECORDS, a FIFO,
/dev/zero, a bad time series or log line) is refused in one line that names the file and the
field, exit 2; an import's memory and output grow with its rows, not the time they claim; and
nothing that cannot be (NaN, a negative latency) reaches summary.json or the history, nor is
read from a hand-edited history."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from hostile_records import IMPORTS, RECORDS, edit_summary
from surge.core.errors import BadInput
from surge.imports import Source, load
from surge.record.stored import StoredRun
from surge.record.writer import write_summary

pytestmark = pytest.mark.cpu_heavy  # runs apart from the answer tests (Makefile: test-python)


def _one_line(error: BadInput, path: Path, names: str) -> None:
    text = str(error)
    assert "\n" not in text, text
    assert text.startswith(str(path)), text
    assert names in text, text


@pytest.mark.parametrize("case, name, text, names", IMPORTS, ids=[c[0] for c in IMPORTS])
def test_a_malformed_import_is_refused_in_one_line_naming_the_field(tmp_path, case, name, text, names):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(BadInput) as refused:
        load(Source.read(str(path)))
    _one_line(refused.value, path, names)


def test_the_valid_record_reads(record):
    run = StoredRun.from_directory(record)
    assert run.summary["requests"]["responses"] == 60 and len(run.hlog_lines) == len(run.summary["intervals"]) > 2
    assert run.interval_rows()


@pytest.mark.parametrize("case, edit, names", RECORDS, ids=[c[0] for c in RECORDS])
def test_a_hand_edited_summary_is_refused_in_one_line_naming_the_field(tmp_path, record, case, edit, names):
    directory = shutil.copytree(record, tmp_path / "run")
    edit_summary(directory, edit)
    with pytest.raises(BadInput) as refused:
        StoredRun.from_directory(directory)
    _one_line(refused.value, directory / "summary.json", names)


@pytest.mark.parametrize(
    "file, edit, names",
    [
        ("timeseries.csv", lambda t: t + "1.0,all,x\n", "timeseries.csv:"),
        ("timeseries.csv", lambda t: t.replace(",all,", ",all,nan,", 1), "timeseries.csv:2"),
        ("latency.hlog", lambda t: t + "0.000,1.000,2.000,HISTbad\n", "latency.hlog:"),
        ("latency.hlog", lambda t: t + "nan,1.000,2.000\n", "latency.hlog:"),
    ],
)
def test_a_hand_edited_time_series_or_log_is_refused_naming_its_line(tmp_path, record, file, edit, names):
    directory = shutil.copytree(record, tmp_path / "run")
    (directory / file).write_text(edit((directory / file).read_text()))
    with pytest.raises(BadInput) as refused:
        StoredRun.from_directory(directory)
    _one_line(refused.value, directory / file, names)


def test_a_record_is_never_written_with_nan(tmp_path):
    path = tmp_path / "summary.json"
    with pytest.raises(ValueError):
        write_summary(path, {"latency": {"p99_ms": float("nan")}})
    assert not path.exists() and not path.with_name("summary.json.tmp").exists()
