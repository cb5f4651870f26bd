"""The record: every ``surge run`` leaves a results directory (docs/record.md): the summary
with its ``meta`` block, the time series, the latency histograms as an HdrHistogram interval
log, and the inputs, secrets masked; written as the run goes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from surge.record.directory import check_out, create_directory, run_name

if TYPE_CHECKING:
    from surge.record.writer import RecordWriter

__all__ = ["RecordWriter", "check_out", "create_directory", "run_name"]


def __getattr__(name: str) -> Any:
    """__getattr__ imports RecordWriter on first use: ``surge run --no-save`` checks its flags
    with ``surge.record.directory`` and never needs the writer (~4 ms of CPU with hashlib)."""
    if name == "RecordWriter":
        from surge.record.writer import RecordWriter  # start-up: a plain run never loads the writer (hashlib)

        return RecordWriter
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
