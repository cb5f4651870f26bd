"""Streaming responses timed by the engine (docs/record.md, "Streams"): against a server whose
event stream has a known shape (head at once, the first event FIRST_S later, then one event every
GAP_S, then the `[DONE]` sentinel), every figure is the one the shape gives: time to first byte
near 0, time to first event FIRST_S, gaps GAP_S, EVENTS per stream, duration (EVENTS − 1) × GAP_S,
and the streams and events counted exactly."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from conftest import surge

FIRST_S = 0.05
GAP_S = 0.02
EVENTS = 5
STALL_AFTER = 2
"""STALL_AFTER: on /stall, the stream stops for STALL_S after this many events."""
STALL_S = 3.0


class _StreamHandler(BaseHTTPRequestHandler):
    """_StreamHandler answers every GET with the known event stream, one HTTP chunk per event."""

    protocol_version = "HTTP/1.1"
    served = 0
    lock = threading.Lock()

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.flush()
        time.sleep(FIRST_S)
        for n in range(EVENTS):
            if n:
                time.sleep(GAP_S)
            if n == STALL_AFTER and self.path == "/stall":
                time.sleep(STALL_S)  # the stream stalls mid-way; the client gives up first
                return
            self._chunk(f'data: {{"n": {n}}}\n\n'.encode())
        self._chunk(b"data: [DONE]\n\n")
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()
        with self.lock:
            type(self).served += 1

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def stream_server() -> Iterator[str]:
    """stream_server serves the known stream on a loopback port; yields its URL."""
    _StreamHandler.served = 0
    server = ThreadingHTTPServer(("127.0.0.1", 0), _StreamHandler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/stream"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("model", [("-c", "2"), ("-r", "20")], ids=["closed", "open"])
def test_an_event_stream_is_timed_event_by_event(stream_server, model):
    run = surge("run", stream_server, *model, "-d", "2s", "--json", timeout=60)
    assert run.code == 0, run.stderr[-2000:]
    doc = json.loads(run.stdout)
    requests, latency = doc["requests"], doc["latency"]
    assert requests["responses"] > 0 and requests["failed"] == 0
    assert requests["streams"] == requests["responses"] == _StreamHandler.served
    assert requests["events"] == EVENTS * requests["streams"] and requests["empty_streams"] == 0
    per_stream = requests["events_per_stream"]
    assert (per_stream["min"], per_stream["p50"], per_stream["max"]) == (EVENTS, EVENTS, EVENTS)
    # The head is written at once; the first event FIRST_S later; each next one GAP_S after.
    assert latency["first_byte"]["p50_ms"] < FIRST_S * 1000 / 2, latency["first_byte"]
    assert latency["first_event"]["p50_ms"] == pytest.approx(FIRST_S * 1000, abs=8), latency["first_event"]
    assert latency["event_gap"]["count"] == (EVENTS - 1) * requests["streams"]
    assert latency["event_gap"]["p50_ms"] == pytest.approx(GAP_S * 1000, abs=5), latency["event_gap"]
    duration = (EVENTS - 1) * GAP_S * 1000
    assert latency["stream_duration"]["p50_ms"] == pytest.approx(duration, abs=10), latency["stream_duration"]
    # The whole response ends after its last event: latency is the first event plus the stream.
    assert latency["all"]["p50_ms"] >= latency["first_event"]["p50_ms"] + duration * 0.9
    # Per interval too, merged like latency.
    assert sum(i["requests"]["events"] for i in doc["intervals"]) == requests["events"]
    # Its events carry no output text: no token stream, no token figures.
    assert requests["token_streams"] == requests["output_tokens"] == 0 and latency["ttft"]["count"] == 0


def test_a_response_that_is_no_event_stream_has_a_first_byte_and_no_stream(tmp_path):
    from surge.engine.target import TargetProcess  # function-local: the fixture above needs no target

    with TargetProcess() as target:
        run = surge("run", f"{target.url}/health", "-c", "2", "-n", "200", "--json", timeout=60)
    assert run.code == 0, run.stderr[-2000:]
    doc = json.loads(run.stdout)
    assert doc["requests"]["streams"] == 0 and doc["requests"]["events"] == 0
    assert doc["latency"]["first_byte"]["count"] == doc["requests"]["responses"] == 200
    assert doc["latency"]["first_byte"]["max_ms"] <= doc["latency"]["all"]["max_ms"]
    assert doc["latency"]["first_event"]["count"] == 0


def test_thresholds_read_the_stream_figures(stream_server, tmp_path):
    """`first_event` and `event_gap` are threshold metrics: an LLM stream's TTFT and ITL."""
    plan = tmp_path / "stream.yaml"
    plan.write_text(
        f"target: {stream_server}\n"
        "scenarios:\n  s:\n    executor: {type: constant-vus, vus: 1, duration: 1s}\n"
        "    flow:\n      - request: {path: /stream}\n"
        'thresholds:\n  - "first_event.p(50) < 500ms"\n  - "event_gap.p(50) < 5ms"\n'
    )
    run = surge("run", str(plan), "--json", timeout=60)
    assert run.code == 99, run.stderr[-2000:]
    verdicts = {v["expr"]: v["status"] for v in json.loads(run.stdout)["thresholds"]}
    assert verdicts == {"first_event.p(50) < 500ms": "pass", "event_gap.p(50) < 5ms": "fail"}, verdicts


PROMPT_WORDS = 10
PREFILL_MS = 2.0
DECODE_MS = 10.0
TOKENS = 8


def _chat_plan(tmp_path, url: str, executor: str, *, usage: bool = False, thresholds: str = "") -> str:
    """_chat_plan writes a scenario that streams chat completions of TOKENS tokens for a prompt
    of PROMPT_WORDS words from the target's inference model (with a usage event when ``usage``);
    returns its path."""
    request: dict[str, object] = {
        "model": "m",
        "stream": True,
        "max_tokens": TOKENS,
        "messages": [{"role": "user", "content": " ".join(["word"] * PROMPT_WORDS)}],
    }
    if usage:
        request["stream_options"] = {"include_usage": True}
    body = json.dumps(request)
    plan = tmp_path / "chat.yaml"
    plan.write_text(
        f"target: {url}\nscenarios:\n  chat:\n    executor: {executor}\n    flow:\n"
        f"      - request:\n          method: POST\n          path: /v1/chat/completions\n"
        f"          headers: {{Content-Type: application/json}}\n          body: {json.dumps(body)}\n"
        + (f"thresholds: {thresholds}\n" if thresholds else "")
    )
    return str(plan)


@pytest.mark.parametrize("usage", [False, True], ids=["deltas", "usage"])
def test_the_inference_targets_ttft_itl_and_tpot_are_measured_as_its_model_says(tmp_path, usage):
    """At low load (5/s, open model, a batch of 8 never full) each stream's first token is the
    prefill (10 words × 2 ms = 20 ms) and each next one a decode step (10 ms) later: surge's
    TTFT, ITL and TPOT are those within 5 % + 2 ms, every token is a token event, and the output
    tokens are the target's own count, from the usage event when the request asks for one
    (an event with no output text: not a token, nor a gap between tokens), else from the deltas."""
    from surge.engine.target import TargetProcess  # function-local: the SSE fixture needs no target

    with TargetProcess(llm_prefill=f"{PREFILL_MS}ms", llm_decode=f"{DECODE_MS}ms") as target:
        executor = "{type: constant-arrival-rate, rate: 5, duration: 3s, max_vus: 50}"
        plan = _chat_plan(tmp_path, target.url, executor, usage=usage)
        run = surge("run", plan, "--json", timeout=60)
        llm = target.stats()["llm"]
    assert run.code == 0, run.stderr[-2000:]
    doc = json.loads(run.stdout)
    requests, latency = doc["requests"], doc["latency"]
    assert requests["streams"] == requests["token_streams"] == requests["responses"] == llm["completed"] == 15
    assert requests["output_tokens"] == TOKENS * requests["streams"] == llm["output_tokens"]
    assert requests["events"] == (TOKENS + usage) * requests["streams"]
    assert requests["usage_streams"] == (requests["streams"] if usage else 0)
    per_stream = requests["tokens_per_stream"]
    assert (per_stream["min"], per_stream["max"]) == (TOKENS, TOKENS)
    ttft = PROMPT_WORDS * PREFILL_MS
    for name, expected in (("ttft", ttft), ("first_event", ttft), ("itl", DECODE_MS), ("tpot", DECODE_MS)):
        assert latency[name]["p50_ms"] == pytest.approx(expected, rel=0.05, abs=2), (name, latency[name])
    assert latency["itl"]["count"] == (TOKENS - 1) * requests["streams"] and latency["tpot"]["count"] == 15
    e2e = ttft + (TOKENS - 1) * DECODE_MS
    assert latency["all"]["p50_ms"] == pytest.approx(e2e, rel=0.05, abs=2), latency["all"]
    # Over the same load window, each stream that ended in it brought TOKENS tokens.
    throughput = doc["throughput"]
    assert throughput["output_tokens_per_s"] == pytest.approx(TOKENS * throughput["responses_per_s"])


@pytest.mark.parametrize("tpot_ms, good", [(50, True), (5, False)])
def test_goodput_counts_the_responses_that_met_every_bound(tmp_path, tpot_ms, good):
    """Thresholds on TTFT and TPOT bound each request: a response is good when it met both. At
    low load the model's TTFT (20 ms) and TPOT (10 ms) meet 500 ms and 50 ms, so every response
    is good and goodput is the throughput; a 5 ms TPOT bound no response meets (goodput 0, and
    the thresholds fail the run)."""
    from surge.engine.target import TargetProcess  # function-local: the SSE fixture needs no target

    thresholds = f'["ttft p(95) < 500ms", "tpot p(95) < {tpot_ms}ms"]'
    with TargetProcess(llm_prefill=f"{PREFILL_MS}ms", llm_decode=f"{DECODE_MS}ms") as target:
        executor = "{type: constant-arrival-rate, rate: 5, duration: 2s, max_vus: 50}"
        plan = _chat_plan(tmp_path, target.url, executor, thresholds=thresholds)
        run = surge("run", plan, "--json", timeout=60)
    assert run.code == (0 if good else 99), run.stderr[-2000:]
    doc = json.loads(run.stdout)
    assert doc["goodput"] == {"ttft_s": 0.5, "tpot_s": tpot_ms / 1000}
    requests, throughput = doc["requests"], doc["throughput"]
    assert requests["responses"] == 10
    assert requests["good"] == (requests["responses"] if good else 0)
    assert throughput["good_per_s"] == (pytest.approx(throughput["responses_per_s"]) if good else 0)
    assert sum(i["requests"]["good"] for i in doc["intervals"]) == requests["good"]


def _chat_body() -> str:
    """_chat_body is a chat completion request streaming TOKENS tokens for a prompt of PROMPT_WORDS words."""
    messages = [{"role": "user", "content": " ".join(["word"] * PROMPT_WORDS)}]
    return json.dumps({"model": "m", "stream": True, "max_tokens": TOKENS, "messages": messages})


def test_a_url_run_with_slo_counts_goodput_and_is_judged_by_it(tmp_path):
    """``surge run URL --slo ...`` (docs/cli.md, "SLOs and goodput"): the bounds count goodput
    and the conditions, goodput >= 95 % with them, judge the run. At 5/s the model's TTFT (20 ms)
    and TPOT (10 ms) meet 500 ms and 50 ms: every response is good, the summary says so and
    the run passes; a 5 ms TPOT bound no response meets: goodput 0, exit code 99."""
    from surge.engine.target import TargetProcess  # function-local: the SSE fixture needs no target

    def run(tpot_ms: int, *more: str):
        return surge(
            "run",
            f"{target.url}/v1/chat/completions",
            *("-m", "POST", "-H", "Content-Type: application/json", "--body", _chat_body()),
            *("-r", "5", "-d", "1s", "--slo", "ttft p(95) < 500ms", "--slo", f"tpot p(95) < {tpot_ms}ms"),
            *more,
            timeout=60,
        )

    with TargetProcess(llm_prefill=f"{PREFILL_MS}ms", llm_decode=f"{DECODE_MS}ms") as target:
        good = run(50, "--out", str(tmp_path / "good"))
        bad = run(5, "--json", "--no-save")
    assert good.code == 0, good.stderr[-2000:]
    assert "Goodput" in good.stdout and "✓ goodput >= 95% [all]: 100% → pass" in good.stdout, good.stdout
    summary = json.loads((tmp_path / "good" / "summary.json").read_text())
    requests, throughput = summary["requests"], summary["throughput"]
    assert summary["goodput"] == {"ttft_s": 0.5, "tpot_s": 0.05}
    assert requests["good"] == requests["responses"] == 5
    assert throughput["good_per_s"] == pytest.approx(throughput["responses_per_s"])
    assert [(t["expr"], t["status"]) for t in summary["thresholds"]] == [
        ("ttft p(95) < 500ms", "pass"),
        ("tpot p(95) < 50ms", "pass"),
        ("goodput >= 95%", "pass"),
    ]
    report = (tmp_path / "good" / "report.md").read_text()
    assert "good (met every goodput bound)" in report and "goodput >= 95%" in report, report

    assert bad.code == 99, bad.stderr[-2000:]
    doc = json.loads(bad.stdout)
    assert doc["requests"]["good"] == 0 and doc["throughput"]["good_per_s"] == 0
    statuses = {t["expr"]: t["status"] for t in doc["thresholds"]}
    assert statuses == {"ttft p(95) < 500ms": "pass", "tpot p(95) < 5ms": "fail", "goodput >= 95%": "fail"}
    assert "2 of 3 thresholds failed" in bad.stderr


@pytest.mark.parametrize("command", ["run", "sweep"])
def test_a_bad_slo_is_one_line_naming_the_flag(command):
    more = ("-n", "1") if command == "run" else ("--rates", "10")
    run = surge(command, "http://127.0.0.1:9/", *more, "--slo", "ttft p(95) <")
    assert run.code == 2 and run.stderr.startswith("surge: error: --slo: "), run.stderr
    assert len(run.stderr.strip().splitlines()) == 1, run.stderr


TARGET_FREEZE_S = 1.0
"""TARGET_FREEZE_S: how long the inference target is stopped in the middle of a run."""


def test_a_target_that_freezes_shows_in_ttft_and_itl_from_the_intended_send_time(tmp_path):
    """Open model, 40 chat streams/s for 4 s; the inference target is stopped (SIGSTOP) for 1 s
    once 1.5 s worth of requests have started. The requests due meanwhile get their first token
    only after it: timed from their intended send time, TTFT's maximum is the freeze (not the
    prefill a coordinated-omission client would report) and its p95 and p99 fall inside the band
    of delayed requests (a tenth to a quarter of them); streams in flight wait it out between
    two tokens, so ITL's maximum is the freeze too."""
    import os  # function-local: only this test stops a process
    import signal
    import subprocess
    import sys

    from surge.engine.target import TargetProcess  # function-local: the SSE fixture needs no target

    rate, duration_s = 40, 4
    with TargetProcess(llm_prefill=f"{PREFILL_MS}ms", llm_decode=f"{DECODE_MS}ms") as target:
        assert target.pid is not None
        executor = f"{{type: constant-arrival-rate, rate: {rate}, duration: {duration_s}s, max_vus: 400}}"
        plan = _chat_plan(tmp_path, target.url, executor)
        proc = subprocess.Popen(
            [sys.executable, "-m", "surge", "run", plan, "--json"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=tmp_path,
        )
        try:
            deadline = time.monotonic() + 30
            while target.stats()["llm"]["started"] < rate * 1.5 and time.monotonic() < deadline:
                assert proc.poll() is None, proc.communicate()
                time.sleep(0.01)
            os.kill(target.pid, signal.SIGSTOP)
            time.sleep(TARGET_FREEZE_S)
            os.kill(target.pid, signal.SIGCONT)
            stdout, stderr = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
    assert proc.returncode == 0, stderr[-2000:]
    doc = json.loads(stdout)
    requests, latency = doc["requests"], doc["latency"]
    assert requests["sent"] == requests["token_streams"] == rate * duration_s and requests["failed"] == 0
    freeze_ms = TARGET_FREEZE_S * 1000
    ttft, itl = latency["ttft"], latency["itl"]
    assert ttft["max_ms"] == pytest.approx(freeze_ms + PROMPT_WORDS * PREFILL_MS, abs=150), ttft
    assert ttft["p99_ms"] >= 0.7 * freeze_ms and ttft["p95_ms"] >= 0.3 * freeze_ms, ttft
    assert ttft["p50_ms"] < 0.2 * freeze_ms, ttft  # most requests were not due in the freeze
    assert itl["max_ms"] == pytest.approx(freeze_ms, abs=150), itl


def test_a_stream_that_stalls_fails_at_its_idle_timeout(stream_server):
    """A stream that stops after two events: with --stream-idle-timeout 200ms each request fails
    as stream_idle_timeout 200 ms after its last event (FIRST_S + GAP_S + 0.2 s from the send),
    not at the 10 s request timeout; the events it got are timed."""
    url = stream_server.replace("/stream", "/stall")
    run = surge("run", url, "-c", "1", "-n", "3", "--timeout", "10s", "--stream-idle-timeout", "200ms", "--json")
    assert run.code == 0, run.stderr[-2000:]
    doc = json.loads(run.stdout)
    requests = doc["requests"]
    assert requests["failure_classes"] == {"stream_idle_timeout": 3}, requests
    assert requests["streams"] == 0 and requests["timed_out"] == 0
    stalled_at_ms = (FIRST_S + (STALL_AFTER - 1) * GAP_S + 0.2) * 1000
    assert doc["latency"]["all"]["p50_ms"] == pytest.approx(stalled_at_ms, abs=40), doc["latency"]["all"]
    assert doc["latency"]["first_event"]["count"] == 3 and doc["latency"]["event_gap"]["count"] == 3


@pytest.mark.parametrize("value", ["0s", "soon"])
def test_a_bad_stream_idle_timeout_is_named(value):
    run = surge("run", "http://127.0.0.1:9/", "-n", "1", "--stream-idle-timeout", value)
    assert run.code == 2 and run.stderr.startswith("surge: error: --stream-idle-timeout"), run.stderr
