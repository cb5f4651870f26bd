"""The driver's transport (surge.run.distributed.Transport) with stand-ins for Ray and the
generator actors: reports are passed on in order with their generator, a generator's end keeps
its result, a generator that dies is lost at once and one that answers nothing for
SILENT_AFTER_S is lost then; with the stop policy the others are told to stop, with continue
they are not."""

from __future__ import annotations

import time
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest

from surge.run import distributed
from surge.run.distributed import SILENT_AFTER_S, Transport


class RayError(Exception):
    """RayError stands for ray.exceptions.RayError."""


class Ref:
    """Ref is a pending call's answer: ready with an answer or an error, or never ready."""

    def __init__(self, answer: Any = None, error: Exception | None = None, ready: bool = True) -> None:
        self.answer, self.error, self.ready = answer, error, ready


class FakeRay:
    """FakeRay answers wait() with the refs that are ready, get() with their answer."""

    exceptions = SimpleNamespace(RayError=RayError)

    def wait(self, refs: list[Ref], num_returns: int, timeout: float) -> tuple[list[Ref], list[Ref]]:
        return [r for r in refs if r.ready], [r for r in refs if not r.ready]

    def get(self, ref: Ref) -> Any:
        if ref.error is not None:
            raise ref.error
        return ref.answer


class Actor:
    """Actor plays a generator: each take answers the next Ref of its script (then never)."""

    def __init__(self, script: list[Ref]) -> None:
        self._script: Iterator[Ref] = iter(script)
        self.stopped = False
        self.take = SimpleNamespace(remote=lambda _wait: next(self._script, Ref(ready=False)))
        self.stop = SimpleNamespace(remote=self._stop)

    def _stop(self) -> None:
        self.stopped = True


def answer(*reports: str, done: bool = False, result: Any = None, error: Any = None) -> Ref:
    return Ref({"reports": list(reports), "done": done, "result": result, "error": error})


def transport(policy: str, *scripts: list[Ref]) -> tuple[Transport, list[Actor]]:
    actors = [Actor(s) for s in scripts]
    cluster = SimpleNamespace(_ray=FakeRay(), actors=actors)
    return Transport(cluster, policy, time.time()), actors  # type: ignore[arg-type]


def drain(t: Transport, calls: int = 10) -> list[list[tuple[int, str | None]] | None]:
    return [t.receive(0.0, False) for _ in range(calls)]


def test_reports_go_on_in_order_with_their_generator_and_the_end_keeps_each_result():
    t, _ = transport(
        "stop",
        [answer("a1", "a2"), answer("a3", done=True, result={"sent": 3})],
        [answer("b1"), answer(), answer(done=True, result={"sent": 1})],
    )
    got = drain(t, 4)
    assert got[0] == [(0, "a1"), (0, "a2"), (1, "b1")]
    assert got[1] == [(0, "a3")]
    assert got[2] == []
    assert got[3] is None  # both ended
    assert [p.result for p in t.parts] == [{"sent": 3}, {"sent": 1}]
    assert [p.lost for p in t.parts] == [None, None]


@pytest.mark.parametrize("policy, told", [("stop", True), ("continue", False)])
def test_a_generator_that_dies_is_lost_at_once_and_the_policy_says_whether_the_others_stop(policy, told):
    t, actors = transport(
        policy, [answer("a1"), answer("a2"), answer(done=True)], [answer("b1"), Ref(error=RayError())]
    )
    assert t.receive(0.0, False) == [(0, "a1"), (1, "b1")]
    assert t.receive(0.0, False) == [(0, "a2"), (1, None)]
    assert t.parts[1].lost == "it died (RayError)"
    t.receive(0.0, False)  # the next call passes the stop on
    assert actors[0].stopped is told and actors[1].stopped is False


def test_a_generator_that_answers_nothing_is_lost_after_the_silence(monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr(distributed.time, "monotonic", lambda: clock[0])
    t, _ = transport("stop", [answer("a1")], [answer("b1")])  # then both go silent
    assert t.receive(0.0, False) == [(0, "a1"), (1, "b1")]
    clock[0] += SILENT_AFTER_S - 0.1
    assert t.receive(0.0, False) == []
    clock[0] += 0.2
    assert t.receive(0.0, False) == [(0, None), (1, None)]
    assert t.parts[0].lost == f"it answered nothing for {SILENT_AFTER_S:.0f} s"
    assert t.receive(0.0, False) is None  # nothing left to wait for


def test_an_engine_that_failed_is_lost_with_its_error():
    t, _ = transport("continue", [answer(done=True, error=RuntimeError("target 127.0.0.1:9 is not reachable"))])
    assert t.receive(0.0, False) == [(0, None)]
    assert t.parts[0].lost == "its engine failed: target 127.0.0.1:9 is not reachable"
    assert isinstance(t.parts[0].error, RuntimeError)


def test_the_drivers_stop_is_passed_on_once():
    t, actors = transport("continue", [answer(), answer(done=True)])
    t.receive(0.0, True)
    assert actors[0].stopped
    actors[0].stopped = False
    t.receive(0.0, True)
    assert actors[0].stopped is False
