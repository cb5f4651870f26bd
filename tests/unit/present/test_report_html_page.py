"""report.html as text: network references caught, spectrum points, a data block that cannot end
its script, the vendored files, a masked secret."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

from browser import NETWORK_REFERENCE
from surge.present.html.page import asset, data_block
from surge.present.html.run_page import render_run_html
from surge.present.run_charts import spectrum_points
from surge.record.stored import StoredRun

REPORTS = Path(__file__).parents[2] / "fixtures" / "report_html"


VENDOR = Path(__file__).parents[3] / "python" / "surge" / "present" / "html" / "vendor"


def test_a_network_reference_is_caught():
    for bad in (
        '<img src="https://example.com/x.png">',
        "<link href='http://cdn/x.css'>",
        "body{background:url(//cdn/x.png)}",
        "fetch('/api')",
        "new XMLHttpRequest()",
    ):
        assert NETWORK_REFERENCE.search(bad), bad
    assert not NETWORK_REFERENCE.search(render_run_html(StoredRun.from_directory(REPORTS / "run-scenario")))


def test_spectrum_points_follow_the_summary_percentiles():
    summary = json.loads((REPORTS / "run-scenario" / "summary.json").read_text(encoding="utf-8"))
    points = spectrum_points(summary["histograms"]["latency"])
    latency = summary["latency"]["all"]
    xs = [x for x, _ in points]
    assert xs == sorted(set(xs)) and xs[0] == 1.0 and xs[-1] == latency["count"]
    assert points[-1][1] == pytest.approx(latency["max_ms"])
    for x_at, key in ((2.0, "p50_ms"), (10.0, "p90_ms"), (100.0, "p99_ms")):
        below = max(y for x, y in points if x <= x_at)  # the plot is monotone: the percentile lies between
        above = min(y for x, y in points if x >= x_at)
        assert below * 0.999 <= latency[key] <= above * 1.001, (key, below, latency[key], above)
    assert spectrum_points(None) == [] and spectrum_points("not base64") == []


def test_data_block_cannot_end_its_script_element():
    text = data_block({"name": "</script><script>alert(1)</script>", "amp": "&"})
    assert "</" not in text and "<" not in text and "&" not in text
    assert json.loads(text) == {"name": "</script><script>alert(1)</script>", "amp": "&"}


def test_vendored_files_match_vendor_md_and_load_as_package_data():
    recorded = dict(re.findall(r"\| `([^`]+)` \| `[^`]+` \| `([0-9a-f]{64})` \|", (VENDOR / "VENDOR.md").read_text()))
    assert set(recorded) == {"uPlot.iife.min.js", "uPlot.min.css", "LICENSE"}
    for name, digest in recorded.items():
        assert hashlib.sha256((VENDOR / name).read_bytes()).hexdigest() == digest, name
    assert asset("vendor/uPlot.iife.min.js").startswith("/*! https://github.com/leeoniya/uPlot (v1.6.32)")
    assert "MIT" in asset("vendor/LICENSE")


def test_a_secret_in_the_command_is_masked():
    run = StoredRun.from_directory(REPORTS / "run-scenario")
    run.summary["meta"]["command"] = "surge run http://127.0.0.1:1/ -H 'Authorization: Bearer s3cr3t-token-value'"
    assert "s3cr3t-token-value" not in render_run_html(run)


def _summary_ms(p50: float, count: int) -> dict[str, float]:
    return {"count": count, "p50_ms": p50, "p90_ms": p50, "p95_ms": p50, "p99_ms": p50, "max_ms": p50}


def test_a_run_with_token_streams_and_goodput_shows_them():
    run = StoredRun.from_directory(REPORTS / "run-scenario")
    assert "Streams and goodput" not in render_run_html(run)  # a run without streams: no section
    run.summary["requests"].update(
        streams=10,
        events=90,
        empty_streams=0,
        token_streams=10,
        output_tokens=80,
        usage_streams=0,
        good=9,
        responses=10,
    )
    run.summary["latency"].update(ttft=_summary_ms(20.0, 10), itl=_summary_ms(10.0, 70), tpot=_summary_ms(10.5, 10))
    run.summary["throughput"].update(output_tokens_per_s=40.0, good_per_s=4.5)
    run.summary["goodput"] = {"ttft_s": 0.5, "tpot_s": 0.05}
    page = render_run_html(run)
    assert "Streams and goodput" in page and "time to first token" in page and "time per output token" in page
    assert "10 token streams, 80 output tokens (counted from the deltas), 40.0 output tokens/s." in page
    assert "Goodput: 4.5 good responses/s, 9 of 10 (90.000%) met ttft ≤ 500 ms and tpot ≤ 50 ms." in page
