"""An experiment's dashboard fills in as its runs complete (docs/dashboard.md): /state, read
while the command runs, shows the runs so far and the kind's charts drawn from the analysis of
what ran so far (repeat's statistics, compare's variants, capacity's search path), before the
experiment's own analysis at the end."""

from __future__ import annotations

import json
import socket
import time
import urllib.request
from typing import Any

import pytest

from conftest import start_surge


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _state(url: str) -> dict[str, Any] | None:
    try:
        with urllib.request.urlopen(url + "state", timeout=5) as r:
            state: dict[str, Any] = json.loads(r.read())
            return state
    except OSError:
        return None


@pytest.mark.parametrize(
    ("command", "args", "chart"),
    [
        ("repeat", ["-n", "3", "-d", "1s"], "figure-responses_per_s"),
        ("compare", ["--variant", "a", "--variant", "b", "-n", "2", "-d", "1s"], "compare-responses_per_s"),
        (
            "capacity",
            ["--slo", "p(99) < 1s", "--start-rate", "50", "--step-duration", "1s", "--max-steps", "3"],
            "capacity-path",
        ),
    ],
)
def test_the_kinds_charts_fill_in_before_the_experiment_ends(command, args, chart, target, tmp_path):
    port = _free_port()
    url = f"http://127.0.0.1:{port}/"
    proc = start_surge(
        tmp_path, command, f"{target.url}/health", *args, "--no-save", "--dashboard", f"127.0.0.1:{port}"
    )
    seen: list[tuple[int, list[str]]] = []
    try:
        deadline = time.monotonic() + 90
        while proc.poll() is None and time.monotonic() < deadline:
            state = _state(url)
            experiment = (state or {}).get("experiment")
            if experiment is not None and not state["done"]:
                seen.append((len(experiment["runs"]), [c["id"] for c in experiment["charts"]]))
            time.sleep(0.2)
        # 0, or capacity's 99: its step budget may run out before the rate is confirmed
        assert proc.wait(timeout=60) in (0, 99), proc.stderr.read() if proc.stderr else ""
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    drawn = [runs for runs, charts in seen if chart in charts]
    assert drawn, seen  # while it ran, the chart was drawn from the runs so far
    assert min(drawn) < {"repeat": 3, "compare": 4, "capacity": 3}[command], seen
