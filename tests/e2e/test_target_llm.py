"""The reference target's inference routes (docs/target.md, "Streaming inference
(OpenAI-compatible)"): the official ``openai`` client talks to them, and the timing over loopback
is the model's known answer.

- TTFT = queue wait + prompt words × ``--llm-prefill``; each next token one decode step later,
  ``--llm-decode × (1 + F(n−1))`` with n sequences in service; E2E = TTFT + (N−1) × step.
- ``--llm-batch 1``: a second request waits, first come first served, for the first's last token.
- The server's own counts (``/stats`` ``llm``) equal what the client saw.

Timing is read from a raw socket, each event stamped by the kernel when its bytes arrived
(``SO_TIMESTAMPNS``), so the test process's own scheduling does not count. The model's times are
lower bounds (a timer never fires early), and a busy machine only adds to them, so a test takes
the best of a few requests (TTFT, E2E, a wait) or the median gap (ITL) and allows 5 % + 2 ms.
"""

from __future__ import annotations

import http.client
import itertools
import json
import selectors
import socket
import statistics
import struct
import time
from dataclasses import dataclass, field
from typing import Any

import openai
import pytest

from surge.engine.target import TargetProcess

REL, ABS_S = 0.05, 0.002
"""REL, ABS_S are the tolerance on a modeled time: 5 % of it plus 2 ms."""

DEADLINE_S = 20.0
"""DEADLINE_S bounds every raw exchange with the target."""

SO_TIMESTAMPNS = 35
"""SO_TIMESTAMPNS is Linux's option (and control message) for receive times in nanoseconds of
the wall clock (Python's socket module does not name it)."""

FAST = {"llm_prefill": "0s", "llm_decode": "1ms"}
"""FAST is a model quick enough for the tests that only check what is said."""


def close_to(measured: float, model: float) -> bool:
    """close_to says whether a measured time is within the tolerance of the model's."""
    return abs(measured - model) <= REL * model + ABS_S


def chat_body(words: int, tokens: int, **extra: Any) -> dict[str, Any]:
    """chat_body is a streaming chat request whose prompt is ``words`` words."""
    content = " ".join(f"w{i}" for i in range(words))
    return {
        "model": "m",
        "messages": [{"role": "user", "content": content}],
        "max_tokens": tokens,
        "stream": True,
    } | extra


@dataclass
class RawStream:
    """RawStream is one streamed completion read from a raw socket: the response head, then
    each server-sent event with the time (wall-clock seconds, the kernel's) its chunk arrived."""

    sock: socket.socket
    sent: float = 0.0
    head: str = ""
    events: list[tuple[float, str]] = field(default_factory=list)
    done: bool = False
    _pending: bytes = b""

    @classmethod
    def open(cls, target: TargetProcess, path: str, body: dict[str, Any]) -> RawStream:
        """open connects and sends the request."""
        sock = socket.create_connection((target.host, target.port), timeout=DEADLINE_S)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        payload = json.dumps(body).encode()
        head = f"POST {path} HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: {len(payload)}\r\n\r\n"
        stream = cls(sock)
        stream.sent = time.time()
        sock.sendall(head.encode() + payload)
        return stream

    def read(self) -> None:
        """read takes what has arrived and parses the head and every complete chunk, each
        stamped with the arrival of the last bytes read with it."""
        data, ancillary, _, _ = self.sock.recvmsg(65536, socket.CMSG_SPACE(16))
        now = time.time()
        for level, kind, value in ancillary:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(value) >= 16:
                seconds, nanos = struct.unpack("qq", value[:16])
                now = seconds + nanos / 1e9
        if not data:
            raise AssertionError(f"the target closed the stream: {self.head!r} {self.events[-1:]}")
        self._pending += data
        if not self.head:
            if b"\r\n\r\n" not in self._pending:
                return
            head, self._pending = self._pending.split(b"\r\n\r\n", 1)
            self.head = head.decode()
        while b"\r\n" in self._pending:
            size_line, rest = self._pending.split(b"\r\n", 1)
            size = int(size_line, 16)
            if len(rest) < size + 2:
                return
            self._pending = rest[size + 2 :]
            if size == 0:
                self.done = True
                return
            self.events.append((now, rest[:size].decode()))

    def tokens(self) -> list[float]:
        """tokens is the arrival time of each token's event, after the send."""
        return [t - self.sent for t, e in self.events if e.startswith("data: {") and '"choices":[]' not in e]

    def gaps(self) -> list[float]:
        """gaps is the time between consecutive tokens."""
        times = self.tokens()
        return [b - a for a, b in itertools.pairwise(times)]


def run_streams(*streams: RawStream) -> None:
    """run_streams reads every stream to its end, together (each chunk stamped on arrival)."""
    selector = selectors.DefaultSelector()
    for s in streams:
        selector.register(s.sock, selectors.EVENT_READ, s)
    deadline = time.monotonic() + DEADLINE_S
    try:
        while any(not s.done for s in streams):
            assert time.monotonic() < deadline, [s.events[-1:] for s in streams]
            for key, _ in selector.select(timeout=1.0):
                stream: RawStream = key.data
                stream.read()
                if stream.done:
                    selector.unregister(stream.sock)
    finally:
        selector.close()
        for s in streams:
            s.sock.close()


def one_stream(target: TargetProcess, body: dict[str, Any], path: str = "/v1/chat/completions") -> RawStream:
    """one_stream sends one streaming request and reads it to its end."""
    stream = RawStream.open(target, path, body)
    run_streams(stream)
    return stream


def client_of(target: TargetProcess) -> openai.OpenAI:
    """client_of is the official client pointed at the target, without retries."""
    return openai.OpenAI(base_url=f"{target.url}/v1", api_key="not-needed", max_retries=0, timeout=DEADLINE_S)


def test_the_openai_client_streams_and_counts_match():
    with TargetProcess(**FAST) as target:
        client = client_of(target)
        # What the client saw, to compare with the server's counts: requests, prompt and output tokens.
        requests, prompt, output = 0, 0, 0

        chunks = list(
            client.chat.completions.create(
                model="surge-7b",
                messages=[{"role": "system", "content": "be brief"}, {"role": "user", "content": "say it five times"}],
                max_tokens=5,
                stream=True,
                stream_options={"include_usage": True},
            )
        )
        deltas = [c for c in chunks if c.choices]
        assert [c.choices[0].delta.content for c in deltas] == ["tok "] * 5
        assert deltas[0].choices[0].delta.role == "assistant"
        assert [c.choices[0].finish_reason for c in deltas] == [None] * 4 + ["length"]
        assert all(c.model == "surge-7b" and c.id == chunks[0].id for c in chunks)
        assert chunks[-1].choices == [] and chunks[-1].usage is not None
        usage = chunks[-1].usage
        assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (6, 5, 11)
        requests, prompt, output = requests + 1, prompt + usage.prompt_tokens, output + len(deltas)

        # Without stream_options, no usage event.
        plain = list(
            client.chat.completions.create(
                model="m", messages=[{"role": "user", "content": "hi"}], max_tokens=3, stream=True
            )
        )
        assert len(plain) == 3 and all(c.usage is None for c in plain)
        requests, prompt, output = requests + 1, prompt + 1, output + len(plain)

        texts = list(client.completions.create(model="m", prompt="once upon a time", max_tokens=4, stream=True))
        assert [c.choices[0].text for c in texts] == ["tok "] * 4
        assert texts[-1].choices[0].finish_reason == "length"
        requests, prompt, output = requests + 1, prompt + 4, output + len(texts)

        chat = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "a b c"}], max_tokens=7)
        assert chat.object == "chat.completion"
        assert chat.choices[0].message.content == "tok " * 7 and chat.choices[0].finish_reason == "length"
        assert chat.usage is not None and (chat.usage.prompt_tokens, chat.usage.completion_tokens) == (3, 7)
        completion = client.completions.create(model="m", prompt="x y", max_tokens=2)
        assert completion.object == "text_completion" and completion.choices[0].text == "tok tok "
        assert completion.usage is not None and completion.usage.total_tokens == 4
        for usage in (chat.usage, completion.usage):
            requests, prompt, output = requests + 1, prompt + usage.prompt_tokens, output + usage.completion_tokens

        # The default length is --llm-output-tokens (32).
        default = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "go"}])
        assert default.usage is not None and default.usage.completion_tokens == 32
        requests, prompt, output = requests + 1, prompt + 1, output + 32

        llm = target.stats()["llm"]
        assert llm["started"] == llm["completed"] == requests == 6, llm
        assert (llm["prompt_tokens"], llm["output_tokens"], llm["cancelled"]) == (prompt, output, 0), llm
        assert (llm["in_service"], llm["waiting"], llm["batch"]) == (0, 0, 8)


def test_keep_alive_after_a_stream():
    with TargetProcess(**FAST) as target:
        conn = http.client.HTTPConnection(target.host, target.port, timeout=DEADLINE_S)
        try:
            for _ in range(2):
                conn.request(
                    "POST", "/v1/completions", body=json.dumps({"prompt": "p", "max_tokens": 3, "stream": True})
                )
                response = conn.getresponse()
                assert response.status == 200
                assert response.getheader("Content-Type") == "text/event-stream"
                assert response.getheader("Cache-Control") == "no-cache"
                assert response.getheader("Transfer-Encoding") == "chunked"
                text = response.read().decode()
                assert text.count("data: {") == 3 and text.endswith("data: [DONE]\n\n"), text
            conn.request("GET", "/health")
            assert conn.getresponse().read() == b"ok"
        finally:
            conn.close()
        assert target.stats()["connections"]["accepted"] == 3  # /health of start, this one, /stats


def test_ttft_itl_and_e2e_match_the_model_at_low_load():
    words, tokens = 10, 12
    prefill_s, decode_s = 0.002, 0.020
    with TargetProcess(llm_prefill="2ms", llm_decode="20ms") as target:
        streams = [one_stream(target, chat_body(words, tokens)) for _ in range(3)]
    ttft = words * prefill_s
    e2e = ttft + (tokens - 1) * decode_s
    for s in streams:
        assert len(s.tokens()) == tokens, s.events
        # Never early: the model's times are lower bounds of what the client sees.
        assert s.tokens()[0] >= ttft - 0.0005, s.tokens()
        assert min(s.gaps()) >= 0 and s.tokens()[-1] >= e2e - 0.0005, s.tokens()
    best_ttft = min(s.tokens()[0] for s in streams)
    best_e2e = min(s.tokens()[-1] for s in streams)
    itl = statistics.median(g for s in streams for g in s.gaps())
    assert close_to(best_ttft, ttft), (best_ttft, ttft)
    assert close_to(itl, decode_s), (itl, decode_s)
    assert close_to(best_e2e, e2e), (best_e2e, e2e)


def test_a_full_batch_makes_the_next_request_wait_its_turn():
    # One place: B, sent while A streams, starts when A's last token is out.
    tokens, words_b = 8, 10
    with TargetProcess(llm_batch=1, llm_prefill="2ms", llm_decode="10ms") as target:
        best_gap, rows = float("inf"), []
        for _ in range(3):
            a = RawStream.open(target, "/v1/chat/completions", chat_body(1, tokens))
            while not a.events:  # A holds the place
                a.read()
            b = RawStream.open(target, "/v1/chat/completions", chat_body(words_b, 2))
            run_streams(a, b)
            a_last = a.sent + a.tokens()[-1]
            b_first = b.sent + b.tokens()[0]
            rows.append((a.tokens(), b.tokens()))
            # B's first token comes B's prefill after A's last: A's whole duration is in B's TTFT.
            assert b_first > a_last, rows
            assert b.tokens()[0] >= a_last - b.sent + words_b * 0.002 - 0.001, rows
            best_gap = min(best_gap, b_first - a_last)
        assert close_to(best_gap, words_b * 0.002), (best_gap, rows)
        llm = target.stats()["llm"]
        assert (llm["started"], llm["completed"], llm["in_service"]) == (6, 6, 0), llm


def test_slowdown_stretches_each_step_by_the_sequences_in_service():
    tokens, slowdown = 10, 0.5
    with TargetProcess(llm_prefill="0s", llm_decode="20ms", llm_slowdown=slowdown) as target:
        alone = one_stream(target, chat_body(1, tokens))
        pair = [RawStream.open(target, "/v1/chat/completions", chat_body(1, tokens)) for _ in range(2)]
        run_streams(*pair)
    assert close_to(statistics.median(alone.gaps()), 0.020), alone.gaps()
    two = statistics.median(g for s in pair for g in s.gaps())
    assert close_to(two, 0.020 * (1 + slowdown)), (two, [s.gaps() for s in pair])


def test_a_full_batch_completes_littles_law_throughput():
    # Batch 4, F = 0.5: TPOT(4) = 5 ms × 2.5 = 12.5 ms and a request holds its place for
    # T = 19 × 12.5 ms = 237.5 ms. Eight at once: four run, four wait their turn, and the last
    # ends after 2T, 8 requests in 475 ms = X = 4 / T = 16.8 requests per second.
    tokens, decode_s, slowdown, batch = 20, 0.005, 0.5, 4
    tpot = decode_s * (1 + slowdown * (batch - 1))
    hold = (tokens - 1) * tpot
    with TargetProcess(llm_batch=batch, llm_prefill="0s", llm_decode="5ms", llm_slowdown=slowdown) as target:
        streams = [
            RawStream.open(target, "/v1/completions", {"prompt": "p", "max_tokens": tokens, "stream": True})
            for _ in range(8)
        ]
        run_streams(*streams)
    ends = sorted(s.sent + s.tokens()[-1] - streams[0].sent for s in streams)
    itl = statistics.median(g for s in streams for g in s.gaps())
    assert close_to(itl, tpot), (itl, tpot)
    assert close_to(ends[batch - 1], hold), ends
    assert close_to(ends[-1], 2 * hold), ends
    assert close_to(len(streams) / ends[-1], batch / hold), ends


@pytest.mark.parametrize(
    ("path", "body", "param"),
    [
        ("/v1/chat/completions", "{not json", None),
        ("/v1/chat/completions", "[]", None),
        ("/v1/chat/completions", {"model": "m"}, "messages"),
        ("/v1/chat/completions", {"messages": [{"role": "user", "content": ["x"]}]}, "messages"),
        ("/v1/chat/completions", {"messages": [{"role": "user", "content": "x"}], "max_tokens": 0}, "max_tokens"),
        ("/v1/completions", {"prompt": "x", "max_completion_tokens": 4097}, "max_completion_tokens"),
        ("/v1/completions", {"prompt": "x", "stream": "yes"}, "stream"),
        ("/v1/completions", {"prompt": "x", "stream_options": {"include_usage": True}}, "stream_options"),
        ("/v1/completions", {"prompt": 7}, "prompt"),
    ],
)
def test_invalid_requests_get_a_one_line_400(target, path, body, param):
    payload = body if isinstance(body, str) else json.dumps(body)
    conn = http.client.HTTPConnection(target.host, target.port, timeout=DEADLINE_S)
    try:
        conn.request("POST", path, body=payload, headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        document = json.loads(response.read())
    finally:
        conn.close()
    assert response.status == 400, document
    error = document["error"]
    assert error["type"] == "invalid_request_error" and error["param"] == param, error
    assert error["message"] and "\n" not in error["message"], error


def test_refusals_and_the_servers_counts_agree_with_the_client():
    with TargetProcess(**FAST) as target:
        client = client_of(target)
        with pytest.raises(openai.BadRequestError, match="max_tokens must be an integer from 1 to 4096, got 5000"):
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}], max_tokens=5000)
        with pytest.raises(openai.BadRequestError, match="prompt is required"):
            client.completions.create(model="m", prompt=None)  # type: ignore[arg-type]
        streamed = list(client.completions.create(model="m", prompt="a b c d", max_tokens=9, stream=True))
        assert status_of(target, "GET", "/v1/chat/completions") == 405
        stats = target.stats()
    assert stats["received_by_route"]["POST /v1/chat/completions"] == 1
    assert stats["received_by_route"]["POST /v1/completions"] == 2
    assert stats["responses"]["POST /v1/chat/completions"] == {"400": 1}
    assert stats["responses"]["POST /v1/completions"] == {"200": 1, "400": 1}
    llm = stats["llm"]
    assert (llm["started"], llm["completed"], llm["cancelled"]) == (1, 1, 0), llm
    assert (llm["prompt_tokens"], llm["output_tokens"]) == (4, len(streamed)), llm


def test_a_client_that_leaves_mid_stream_frees_its_place():
    with TargetProcess(llm_batch=1, llm_prefill="0s", llm_decode="20ms") as target:
        leaver = RawStream.open(target, "/v1/completions", {"prompt": "x", "max_tokens": 1000, "stream": True})
        while len(leaver.events) < 2:
            leaver.read()
        leaver.sock.close()
        began = time.monotonic()
        after = one_stream(target, chat_body(1, 2))
        assert time.monotonic() - began < 5.0  # not the leaver's 20 s
        assert len(after.tokens()) == 2
        deadline = time.monotonic() + 5
        while (llm := target.stats()["llm"])["cancelled"] < 1 and time.monotonic() < deadline:
            time.sleep(0.02)
    assert (llm["started"], llm["completed"], llm["cancelled"]) == (2, 1, 1), llm
    assert llm["output_tokens"] >= 2 + 2, llm


def test_bad_flags_name_themselves():
    with pytest.raises(ValueError, match="--llm-batch: must be from 1 to 1000000, got 0"):
        TargetProcess(llm_batch=0).start()
    with pytest.raises(ValueError, match="--llm-decode: `20` has no unit"):
        TargetProcess(llm_decode="20").start()


def status_of(target: TargetProcess, method: str, path: str) -> int:
    """status_of is the status of one request without a body."""
    return target.request(method, path)[0]
