"""A distributed run's generator: what each Ray actor holds on its node (docs/distributed.md).
It runs the ordinary engine on its share of the plan (the plan's ``stripe``), GIL released, on
a thread of its own, and keeps its workers' reports for the driver, which takes them in
batches (``take``) and merges them with every other generator's as one run's threads. It
never restarts or retries: a run it was asked to make runs once. It imports neither Ray nor
anything above the engine, so a node needs only surge's engine to run it."""

from __future__ import annotations

import contextlib
import os
import queue
import socket
import threading
import time
from typing import Any

from surge.engine.execute import run_plan


class Generator:
    """Generator: one node's engine in a distributed run. ``start`` begins a run in the
    background; ``take`` hands over the reports since the last call (waiting up to
    ``wait_s`` for one) and, once the engine has returned, its own result or error; ``stop``
    asks the run to end (within about 100 ms); ``run_once`` runs an unmeasured phase (setup,
    teardown) to the end."""

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        """_reset is the state before a run: no report, no result, not stopped."""
        self._reports: queue.SimpleQueue[str] = queue.SimpleQueue()
        self._stop = threading.Event()
        self._done = threading.Event()
        self._result: dict[str, Any] | None = None
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None

    def describe(self) -> dict[str, Any]:
        """describe is where the generator runs: its Ray node id (None outside Ray), host
        name, process id and the cores it may use."""
        node: str | None
        try:
            # Function-local: only a generator inside a Ray actor has a runtime context.
            import ray

            node = ray.get_runtime_context().get_node_id()
        except Exception:
            node = None
        return {
            "node_id": node,
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "cores": len(os.sched_getaffinity(0)),
        }

    def clock(self) -> float:
        """clock is this node's wall clock (Unix seconds), for the driver's offset estimate."""
        return time.time()

    def start(self, plan: dict[str, Any]) -> None:
        """start runs ``plan`` (this generator's stripe of a run, with its start instant) on
        a thread of its own; refused while a run is going (the next run of an experiment
        starts once the last has ended and been taken)."""
        if self._thread is not None and not self._done.is_set():
            raise RuntimeError("this generator is still running a plan")
        self._reset()
        self._thread = threading.Thread(target=self._run, args=(plan,), name="surge-generator", daemon=True)
        self._thread.start()

    def _run(self, plan: dict[str, Any]) -> None:
        try:
            self._result = run_plan(plan, on_report=self._forward, poll=self._stop.is_set)
        except BaseException as e:  # handed to the driver with take(), never lost here
            self._error = e
        finally:
            self._done.set()

    def _forward(self, report: str) -> bool:
        self._reports.put(report)
        return self._stop.is_set()

    def take(self, wait_s: float) -> dict[str, Any]:
        """take is what happened since the last take: ``reports`` (encoded, in order), and
        ``done`` once the engine has returned, with its ``result`` or its ``error``; it
        waits up to ``wait_s`` for the first report."""
        reports: list[str] = []
        done = self._done.is_set()
        with contextlib.suppress(queue.Empty):
            reports.append(self._reports.get(timeout=0 if done else wait_s))
        done = self._done.is_set()  # read before draining: every report precedes the end
        while True:
            try:
                reports.append(self._reports.get_nowait())
            except queue.Empty:
                break
        return {
            "reports": reports,
            "done": done,
            "result": self._result if done else None,
            "error": self._error if done else None,
        }

    def stop(self) -> None:
        """stop asks the run to end; what it sent stays counted."""
        self._stop.set()

    def run_once(self, plan: dict[str, Any]) -> dict[str, Any]:
        """run_once runs ``plan`` to its end and returns its result (setup and teardown run
        once, on one generator)."""
        return run_plan(plan)
