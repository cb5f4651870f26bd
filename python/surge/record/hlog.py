"""latency.hlog: the intervals' latency histograms as an HdrHistogram interval log, the
format HdrHistogram's own tools (HistogramLogProcessor) and the Python ``hdrhistogram``
package read. Values are microseconds; ``MaxValueDivisor: 1000`` makes readers show ms."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import IO, Any

LEGEND = '"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"'
"""LEGEND is the column legend line of an HdrHistogram interval log."""

MAX_VALUE_DIVISOR = 1000.0
"""MAX_VALUE_DIVISOR turns the histograms' microseconds into the milliseconds of Interval_Max."""


def header_lines(start_unix_s: float) -> list[str]:
    """header_lines are the log's header: its start time; the base time, the same, for the
    lines' timestamps are seconds since the start (a base time of 0 would make readers take
    them as absolute and skip every interval as before the start); the max value divisor and
    the legend."""
    date = datetime.fromtimestamp(start_unix_s, UTC).isoformat(timespec="milliseconds")
    return [
        f"#[StartTime: {start_unix_s:.3f} (seconds since epoch), {date}]",
        f"#[BaseTime: {start_unix_s:.3f} (seconds since epoch)]",
        f"#[MaxValueDivisor: {MAX_VALUE_DIVISOR:.3f}]",
        LEGEND,
    ]


def interval_line(interval: dict[str, Any]) -> str:
    """interval_line is an engine interval as a log line: start, length and max (ms), and its
    compressed histogram."""
    start, end = interval["start_s"], interval["end_s"]
    return f"{start:.3f},{end - start:.3f},{interval['latency']['all']['max_ms']:.3f},{interval['latency_histogram']}"


class HlogWriter:
    """HlogWriter writes latency.hlog: the header once the run's start is known, then one line
    per interval, flushed."""

    def __init__(self, file: IO[str]) -> None:
        self._file = file
        self.start_unix_s: float | None = None
        """start_unix_s is the log's StartTime once its header is written."""

    def start(self, start_unix_s: float) -> None:
        """start writes the header (once)."""
        if self.start_unix_s is None:
            self.start_unix_s = start_unix_s
            self._file.write("".join(line + "\n" for line in header_lines(start_unix_s)))
            self._file.flush()

    def write(self, interval: dict[str, Any], now_unix_s: float) -> None:
        """write appends ``interval`` (arriving at ``now_unix_s``: the first one dates the run's
        start) and flushes it."""
        self.start(now_unix_s - interval["end_s"])
        self._file.write(interval_line(interval) + "\n")
        self._file.flush()
