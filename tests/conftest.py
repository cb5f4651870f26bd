"""Shared fixtures: a reference target on a free loopback port, and a way to run the CLI; the
kind of each test (``unit``, ``e2e``, ``browser``, ``seeds``, ``distributed``: the directory it lives in under
tests/) as a marker, and a unit test refused any process or network."""

from __future__ import annotations

import atexit
import inspect
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from hostile_records import record_directory
from surge import _engine
from surge.engine.target import TargetProcess

# Fixtures that tests of two kinds share (a recorded run each): ``watched`` (tests/e2e and
# tests/browser), ``gateway_spike_run`` (tests/e2e and tests/seeds).
pytest_plugins = ["report_pages", "gateway_spike"]

SCRATCH = tempfile.mkdtemp(prefix="surge-tests-")
"""SCRATCH is the working directory of the ``surge`` processes tests start, so that the results
directories their runs write (``results/...``) never land in the repository; removed at exit."""
atexit.register(shutil.rmtree, SCRATCH, ignore_errors=True)
# A history for what runs before the per-test history_db fixture (module-scoped fixtures):
# never the user's own.
os.environ["SURGE_DB"] = str(Path(SCRATCH) / "history.db")

# Surge processes started outside a test function (a module-scoped fixture runs before the
# function-scoped ``history_db``) record into a scratch history too, never the user's own.
os.environ["SURGE_DB"] = str(Path(SCRATCH) / "history.db")


@dataclass
class CliRun:
    """CliRun is one finished ``surge`` invocation."""

    code: int
    stdout: str
    stderr: str

    def said(self) -> str:
        """said is stderr without the ``results: DIR`` line a run that saved its record prints
        (which it must have, just before the line saying why it ended)."""
        lines = self.stderr.splitlines(keepends=True)
        saved = [i for i, line in enumerate(lines) if line.startswith("results: ")]
        assert len(saved) == 1 and saved[0] == len(lines) - 2, self.stderr
        return "".join(lines[: saved[0]] + lines[saved[0] + 1 :])

    def json(self) -> dict[str, Any]:
        """json parses stdout as the one JSON document ``--json`` prints."""
        return json.loads(self.stdout)


def surge(*args: str, timeout: float = 120, within: Callable[[list[str]], list[str]] = list) -> CliRun:
    """surge runs the CLI in a child process (loopback targets only), in SCRATCH, and waits for
    it; ``within`` wraps its command line (a network namespace's ``ip netns exec``)."""
    proc = subprocess.run(
        within([sys.executable, "-m", "surge", *args]),
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        cwd=SCRATCH,
    )
    return CliRun(proc.returncode, proc.stdout, proc.stderr)


def surge_in(cwd: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """surge_in runs ``surge ARGS`` in ``cwd`` (where its results directories go) and waits for it."""
    return subprocess.run(
        [sys.executable, "-m", "surge", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        cwd=cwd,
    )


def start_surge(cwd: Path, *args: str) -> subprocess.Popen[str]:
    """start_surge starts ``surge ARGS`` in ``cwd`` without waiting (stdout discarded, stderr piped)."""
    return subprocess.Popen(
        [sys.executable, "-m", "surge", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        stdin=subprocess.DEVNULL,
        cwd=cwd,
    )


TESTS = Path(__file__).resolve().parent
"""TESTS is the tests/ directory: its first level below names a test's kind."""

KINDS = ("unit", "e2e", "browser", "seeds", "distributed")
"""KINDS are the test directories under tests/, each a marker its tests get (pyproject.toml lists
them): ``make test-fast`` runs ``-m unit``."""


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the xdist_group marks (--dist loadgroup)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """pytest_collection_modifyitems marks each test with its kind (the directory under tests/ it
    lives in) and, when it uses a module- or session-scoped fixture other than the plain target,
    with an xdist_group of that fixture, so that ``--dist loadgroup`` runs them on one worker and
    the fixture (a recorded run, a target of its own) is made once. The tests keep their
    collection order: sorting the longest modules first started the answer tests (seeds,
    capacity, sweep) all at once on a 2-core machine, and their answers suffered."""
    for item in items:
        path = item.path.resolve()
        kind = path.relative_to(TESTS).parts[0] if path.is_relative_to(TESTS) else ""  # bench/tests: none
        if kind in KINDS:
            item.add_marker(getattr(pytest.mark, kind))
        group = _shared_fixture(item) if config.pluginmanager.hasplugin("xdist") else None
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))


def _shared_fixture(item: pytest.Item) -> str | None:
    """_shared_fixture names the first module- or session-scoped fixture ``item`` uses, where it
    is defined (None if only the plain ``target``, cheap to start on each worker)."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return None
    for name in info.names_closure:
        definitions = info.name2fixturedefs.get(name)
        if name == "target" or not definitions or definitions[-1].scope not in ("module", "session"):
            continue
        source = Path(inspect.getfile(definitions[-1].func)).resolve()
        if source.is_relative_to(TESTS):  # not pytest's own (tmp_path_factory)
            return f"{source.relative_to(TESTS)}::{name}"
    return None


class ProcessOrNetwork(BaseException):
    """ProcessOrNetwork is raised when a unit test starts a process, opens a connection or runs the
    engine (a BaseException, so that no ``except Exception`` in the code under test hides it)."""


@pytest.fixture(autouse=True)
def unit_isolation(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """unit_isolation refuses a unit test (tests/unit/) any child process, socket connection or
    bind, and a run of the engine or the reference target in-process: such a test belongs in
    tests/e2e/."""
    if request.node.get_closest_marker("unit") is None:
        return

    def refuse(*args: object, **kwargs: object) -> None:
        raise ProcessOrNetwork(f"{request.node.nodeid}: a unit test starts no process and uses no network")

    monkeypatch.setattr(subprocess.Popen, "_execute_child", refuse)
    monkeypatch.setattr(os, "fork", refuse)
    monkeypatch.setattr(os, "posix_spawn", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "bind", refuse)
    for name in ("run", "serve_target"):
        original = getattr(_engine, name)
        for module in [m for n, m in sys.modules.items() if n == "surge" or n.startswith("surge.")]:
            if getattr(module, name, None) is original:
                monkeypatch.setattr(module, name, refuse)


@pytest.fixture(autouse=True)
def history_db(tmp_path_factory, monkeypatch) -> Path:
    """history_db is the run history every test's surge processes record into: a fresh file
    per test (SURGE_DB), never the user's own."""
    path = tmp_path_factory.mktemp("history") / "history.db"
    monkeypatch.setenv("SURGE_DB", str(path))
    return path


@pytest.fixture(scope="module")
def target():
    """target is a plain reference target (no service model) shared by a test module."""
    with TargetProcess() as t:
        yield t


@pytest.fixture(scope="module")
def record(tmp_path_factory) -> Path:
    """record is (for the hostile-record tests) a valid results directory (an imported hey CSV), copied by each test."""
    return record_directory(tmp_path_factory.mktemp("record"))


@pytest.fixture
def fresh_target(target):
    """fresh_target is the module's target with its counts reset."""
    target.reset_stats()
    return target


def write(tmp_path: Path, text: str, name: str = "test.yaml", **subs: str) -> Path:
    """write dedents ``text`` (a scenario file), replaces each ``@KEY@`` with ``subs[KEY]``
    and writes it to ``tmp_path / name``."""
    text = textwrap.dedent(text)
    for key, value in subs.items():
        text = text.replace(f"@{key}@", value)
    path = tmp_path / name
    path.write_text(text)
    return path


TINY_SCENARIO = """\
target: @URL@
scenarios:
  a:
    executor: {type: per-vu-iterations, vus: 1, iterations: @N@}
    flow:
      - request: {path: /health}
"""
"""TINY_SCENARIO is the smallest scenario file: one scenario, one VU, N requests to /health."""


MIXED = """\
target: @URL@
scenarios:
  ok:
    executor: {type: per-vu-iterations, vus: 1, iterations: 6}
    flow:
      - name: health
        request: {path: /health}
        check: {status: 200}
      - name: missing
        request: {path: /no-such-route}
        check: {status: 200}
thresholds:
  - "p(95) < 10s"
  - "failure_rate < 1%"
  - {expr: "p(99) < 10s", scenario: ok, tag: health}
  - "checks > 0.4"
"""
"""MIXED has thresholds that pass and one that fails (half the requests get 404), and a check
that always passes beside one that always fails."""


FILE = """\
    target: http://127.0.0.1:9
    defaults: {timeout: 10s}
    graceful_stop: 20s
    scenarios:
      s:
        executor: {type: shared-iterations, iterations: 1}
        flow:
          - name: slow
            request: {path: /delay/3000}
          - name: own
            request: {path: /health, timeout: 7s}
    """
"""FILE is a scenario file whose request timeouts (the default and one of its own) the flags
that override a file are tried on: its slow request takes 3 s."""


LEVELS = {
    "repeat": [],
    "sweep": ["--rates", "10,20"],
    "capacity": ["--slo", "p(99) < 1s"],
    "compare": ["--variant", "a", "--variant", "b"],
}
"""LEVELS are the flags each experiment command needs besides the test."""


def tiny_scenario(tmp_path: Path, url: str, *, iterations: int = 2, extra: str = "", name: str = "tiny.yaml") -> Path:
    """tiny_scenario writes TINY_SCENARIO for ``url`` with ``extra`` (top-level YAML, e.g.
    thresholds) appended, and returns its path."""
    return write(tmp_path, TINY_SCENARIO + textwrap.dedent(extra), name=name, URL=url, N=str(iterations))


def wait_for(proc: subprocess.Popen, ready: Callable[[], bool]) -> None:
    """wait_for waits (at most 30 s) until ``ready()``, failing if ``proc`` ends first."""
    deadline = time.monotonic() + 30
    while not ready():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the run never got under way"
        time.sleep(0.05)


def run_and_signal(
    args: list[str], sig: int, ready: Callable[[], bool], *, ignored: tuple[int, ...] = (), cwd: Path | str = SCRATCH
) -> subprocess.CompletedProcess:
    """run_and_signal starts ``surge ARGS`` in ``cwd`` (with the ``ignored`` signals ignored, as
    nohup does), waits until ``ready()`` says the phase to interrupt is under way, sends ``sig``
    (SIGKILL too) and returns the finished process. An ignored signal is sent first: the run
    must go on."""

    def ignore() -> None:
        for other in ignored:
            signal.signal(other, signal.SIG_IGN)

    proc = subprocess.Popen(
        [sys.executable, "-m", "surge", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        stdin=subprocess.DEVNULL,
        preexec_fn=ignore,
        cwd=cwd,
    )
    try:
        wait_for(proc, ready)
        for other in ignored:
            proc.send_signal(other)
            wait_for(proc, ready)  # still running after it: ready() counts on from here
        proc.send_signal(sig)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)


def intervals_logged(record: Path) -> int:
    """intervals_logged counts the interval lines a run has flushed to ``record``/latency.hlog
    so far (0 before the file exists)."""
    try:
        lines = (record / "latency.hlog").read_text().splitlines()
    except FileNotFoundError:
        return 0
    return sum(1 for line in lines if line and not line.startswith(("#", '"')))


def read_experiment(out: Path) -> dict[str, Any]:
    """read_experiment is the experiment.json in ``out`` as it stands ({} before it is written)."""
    try:
        return json.loads((out / "experiment.json").read_text())
    except (FileNotFoundError, ValueError):
        return {}


def ctrl_c_experiment(args: list[str], out: Path, run: str) -> tuple[subprocess.CompletedProcess, dict[str, Any]]:
    """ctrl_c_experiment runs ``surge ARGS --out OUT`` (an experiment), sends SIGINT once the
    run folder ``runs/RUN`` has logged an interval, checks that it ended as an interrupted
    experiment does (exit 130, stdout saying so, experiment.json incomplete by SIGINT) and
    returns the process and experiment.json."""
    from surge.record.schema import validate_experiment

    proc = run_and_signal([*args, "--out", str(out)], signal.SIGINT, lambda: intervals_logged(out / "runs" / run) >= 1)
    assert proc.returncode == 130, proc.stderr
    assert "experiment incomplete: stopped by SIGINT" in proc.stdout, proc.stdout
    doc = read_experiment(out)
    validate_experiment(doc)
    assert doc["complete"] is False and doc["stop_signal"] == "SIGINT"
    return proc, doc


def bad_experiment_input(command: str, args: list[str], error: str) -> None:
    """bad_experiment_input checks that ``surge COMMAND URL ARGS`` (a closed port) ends with the
    one line ``error`` starts, exit 2, before any experiment directory is made."""
    run = surge(command, "http://127.0.0.1:9/", *args)
    assert run.code == 2 and run.stderr.startswith(error) and run.stderr.count("\n") == 1, run.stderr
    results = Path(SCRATCH) / "results"
    assert not results.exists() or not any(p.name.endswith(f"-{command}-127.0.0.1-9") for p in results.iterdir())


def starved_generator_run(target: TargetProcess, cwd: Path) -> subprocess.CompletedProcess[str]:
    """starved_generator_run pins ``target`` to one core and runs one engine thread on the other,
    which a busy loop holds, asked for 100,000/s of ``/health`` for 2 s (``--out cwd/out``): the
    generator, not the target, is the limit. Needs CPU affinity and two cores."""
    busy_core, other_core = sorted(os.sched_getaffinity(0))[:2]
    assert target.pid is not None
    for tid in (p.name for p in Path(f"/proc/{target.pid}/task").iterdir()):
        os.sched_setaffinity(int(tid), {other_core})
    spinner = subprocess.Popen(
        [sys.executable, "-c", "while True: pass"], preexec_fn=lambda: os.sched_setaffinity(0, {busy_core})
    )
    try:
        return subprocess.run(
            [
                sys.executable,
                "-m",
                "surge",
                "run",
                f"{target.url}/health",
                "-r",
                "100000",
                "-d",
                "2s",
                "--threads",
                "1",
                "--out",
                str(cwd / "out"),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
            cwd=cwd,
            preexec_fn=lambda: os.sched_setaffinity(0, {busy_core}),
        )
    finally:
        spinner.kill()
        spinner.wait()


TWO_CORES = hasattr(os, "sched_setaffinity") and len(os.sched_getaffinity(0)) >= 2
"""TWO_CORES tells whether starved_generator_run can pin (CPU affinity and two cores)."""


BUSY = pytest.mark.busy_machine
"""BUSY marks a test that keeps a busy loop on every core, starves a core on purpose, needs a
core to itself beside a target that keeps one busy, or whose truth is a latency of a few
milliseconds (a target's service time) that two other tests sharing the two cores would move
(seed 004's successes at a CPU-burning target's 626 us, 300/s at 10 ms: each failed 2-3 of 5
full runs on a host whose hypervisor stole up to 42 %, and passed alone): ``make test`` runs
these apart, after the parallel suite, so that no other test shares their machine."""


@contextmanager
def busy_loops() -> Iterator[int]:
    """busy_loops keeps a busy-loop process on each core while it lasts (yields how many)."""
    count = os.cpu_count() or 1
    spinners = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"], stdin=subprocess.DEVNULL) for _ in range(count)
    ]
    try:
        yield count
    finally:
        for spinner in spinners:
            spinner.kill()
        for spinner in spinners:
            spinner.wait()
