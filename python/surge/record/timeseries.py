"""timeseries.csv: one row per interval for all scenarios (``all``) and one per scenario."""

from __future__ import annotations

import csv
import io
from typing import IO, Any

COLUMNS = ("time_s", "scenario", "active_vus", "offered_rate_per_s", "sent_per_s", "responses_per_s", "successes",
           "failures", "shed", "p50_ms", "p90_ms", "p95_ms", "p99_ms", "max_ms", "in_flight", "open_connections")
"""COLUMNS are timeseries.csv's columns, in order (docs/record.md says what each holds)."""

ALL_SCENARIOS = "all"
"""ALL_SCENARIOS is the ``scenario`` of the row that sums every scenario of an interval."""


def interval_rows(interval: dict[str, Any]) -> list[dict[str, Any]]:
    """interval_rows are an engine interval's rows: ``all``, then one per scenario (cells the
    engine does not count per scenario are left empty)."""
    scenarios = interval.get("scenarios", [])
    requests = interval["requests"]
    latency = interval["latency"]["all"]
    time_s = round(interval["end_s"], 3)
    offered = interval.get("target_rate_per_s")
    rows = [{"time_s": time_s, "scenario": ALL_SCENARIOS,
             "active_vus": sum(s["active_vus"] for s in scenarios),
             "offered_rate_per_s": "" if offered is None else offered,
             "sent_per_s": interval["sent_per_s"], "responses_per_s": interval["responses_per_s"],
             "successes": requests["succeeded"], "failures": requests["failed"], "shed": requests["shed"],
             **{f"{p}_ms": latency[f"{p}_ms"] for p in ("p50", "p90", "p95", "p99", "max")},
             "in_flight": interval["in_flight"], "open_connections": interval["open_connections"]}]
    for s in scenarios:
        rows.append({"time_s": time_s, "scenario": s["name"], "active_vus": s["active_vus"],
                     "responses_per_s": s["responses_per_s"]})
    return rows


def csv_text(rows: list[dict[str, Any]], *, header: bool = False) -> str:
    """csv_text is ``rows`` as timeseries.csv lines (with the header line first when asked):
    what TimeseriesWriter appends, and what the history keeps to rebuild the file byte for byte."""
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=COLUMNS, restval="", lineterminator="\n")
    if header:
        writer.writeheader()
    writer.writerows(rows)
    return text.getvalue()


class TimeseriesWriter:
    """TimeseriesWriter appends each interval's rows to timeseries.csv, flushed per interval."""

    def __init__(self, file: IO[str]) -> None:
        self._file = file
        file.write(csv_text([], header=True))
        file.flush()

    def write(self, interval: dict[str, Any]) -> None:
        """write appends ``interval``'s rows and flushes them."""
        self._file.write(csv_text(interval_rows(interval)))
        self._file.flush()
