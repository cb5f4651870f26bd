"""The load generators under comparison: how to invoke them and how to read their output."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import subprocess
from pathlib import Path


@dataclasses.dataclass
class GenReport:
    """GenReport is what a generator said about its own run (the server count is separate)."""

    requests: int | None = None
    sent: int | None = None
    duration_s: float | None = None  # measured run time (wrk's "in T", surge's elapsed_s)
    configured_s: float | None = None  # the duration asked for (surge's duration_s)
    requests_per_s: float | None = None
    p99_ms: float | None = None
    errors: dict = dataclasses.field(default_factory=dict)
    parse_error: str | None = None
    # surge.result/1 only (what the template section checks a run against):
    status_codes: dict = dataclasses.field(default_factory=dict)
    captures: list = dataclasses.field(default_factory=list)  # [{name, found, missing}, ...]
    engine_cpu_s: float | None = None  # the engine's own generator.cpu user+system
    notes: list = dataclasses.field(default_factory=list)
    # open model (the open section): surge's send lag, service time and its own counts
    send_lag_p99_ms: float | None = None
    service_p99_ms: float | None = None
    connections_opened: int | None = None  # the generator's own count (nginx's is separate)
    peak_concurrency: int | None = None  # most requests outstanding at once (surge's peak_concurrency)
    dropped: int | None = None
    late: int | None = None


def _seconds(value: str, unit: str) -> float:
    scale = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
    return float(value) * scale[unit]


def parse_wrk(text: str) -> GenReport:
    """parse_wrk reads wrk's summary: count, duration, req/s, p99 (with --latency), errors."""
    rep = GenReport()
    m = re.search(r"(\d+) requests in ([\d.]+)(us|ms|s|m|h)", text)
    if not m:
        rep.parse_error = "no 'N requests in T' line in wrk output"
        return rep
    rep.requests = int(m.group(1))
    rep.duration_s = _seconds(m.group(2), m.group(3))
    m = re.search(r"Requests/sec:\s*([\d.]+)", text)
    rep.requests_per_s = float(m.group(1)) if m else None
    m = re.search(r"^\s*99%\s+([\d.]+)(us|ms|s|m)\s*$", text, re.M)
    rep.p99_ms = _seconds(m.group(1), m.group(2)) * 1e3 if m else None
    m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    if m:
        rep.errors.update(zip(("connect", "read", "write", "timeout"), map(int, m.groups()), strict=False))
    m = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    if m:
        rep.errors["non_2xx_3xx"] = int(m.group(1))
    return rep


def dig(doc, dotted: str):
    """dig returns doc["a"]["b"] for "a.b", or None where any step is missing."""
    for key in dotted.split("."):
        if not isinstance(doc, dict) or key not in doc:
            return None
        doc = doc[key]
    return doc


def _last_json_object(text: str):
    text = text.strip()
    try:
        return json.loads(text)
    except ValueError:
        pass
    # Tolerate log lines before the document: try from each line that opens an object.
    starts = [m.start() for m in re.finditer(r"^\{", text, re.M)]
    for start in starts:
        try:
            return json.loads(text[start:])
        except ValueError:
            continue
    raise ValueError("no JSON document on stdout")


SURGE_ERROR_KEYS = ("failed", "shed", "timed_out", "interrupted", "dropped", "late", "errors")


def _first(doc, *keys):
    return next((v for v in (dig(doc, k) for k in keys) if v is not None), None)


def _json_document(text: str, rep: GenReport) -> dict | None:
    """_json_document is stdout's JSON object, or None with rep.parse_error saying why not."""
    try:
        doc = _last_json_object(text)
    except ValueError as e:
        rep.parse_error = str(e)
        return None
    if not isinstance(doc, dict):
        rep.parse_error = "stdout's JSON document is not an object"
        return None
    return doc


def parse_surge(text: str) -> GenReport:
    """parse_surge reads `surge run --json` (schema surge.result/1: requests.responses,
    elapsed_s, throughput.sent_per_s, latency.all.p99_ms; older names as fallbacks)."""
    rep = GenReport()
    doc = _json_document(text, rep)
    if doc is None:
        return rep
    completed = _first(doc, "requests.completed", "requests.responses")
    rep.requests = int(completed) if isinstance(completed, (int, float)) else None
    rep.sent = dig(doc, "requests.sent")
    rep.duration_s = _first(doc, "elapsed_s", "duration_s")
    rep.configured_s = dig(doc, "duration_s")
    rep.requests_per_s = _first(doc, "throughput.sent_per_s", "throughput.requests_per_s")
    rep.p99_ms = dig(doc, "latency.all.p99_ms")
    for key in SURGE_ERROR_KEYS:
        value = dig(doc, f"requests.{key}")
        if value not in (None, 0, {}, []):
            rep.errors[key] = value
    rep.status_codes = dict(dig(doc, "requests.status_codes") or {})
    rep.captures = [
        {k: c.get(k) for k in ("name", "found", "missing")} for c in (doc.get("captures") or []) if isinstance(c, dict)
    ]
    user, system = dig(doc, "generator.cpu.user_s"), dig(doc, "generator.cpu.system_s")
    if isinstance(user, (int, float)) and isinstance(system, (int, float)):
        rep.engine_cpu_s = user + system
    rep.notes = [str(n) for n in (doc.get("notes") or [])]
    rep.send_lag_p99_ms = dig(doc, "latency.send_lag.p99_ms")
    rep.service_p99_ms = dig(doc, "latency.service_time.p99_ms")
    rep.connections_opened = dig(doc, "requests.connections_opened")
    rep.peak_concurrency = dig(doc, "peak_concurrency")
    rep.dropped = dig(doc, "requests.dropped")
    rep.late = dig(doc, "requests.late")
    return rep


def parse_oha(text: str) -> GenReport:
    """parse_oha reads `oha --output-format json` (1.x): responses = the sum of
    statusCodeDistribution, duration = summary.total, p99 = latencyPercentiles.p99 (seconds),
    errors = errorDistribution (e.g. "aborted due to deadline"). oha has no send lag."""
    rep = GenReport()
    doc = _json_document(text, rep)
    if doc is None:
        return rep
    codes = doc.get("statusCodeDistribution")
    if not isinstance(codes, dict) or not isinstance(doc.get("summary"), dict):
        rep.parse_error = "no summary and statusCodeDistribution in oha's JSON"
        return rep
    rep.status_codes = {str(k): int(v) for k, v in codes.items()}
    rep.requests = sum(rep.status_codes.values())
    rep.duration_s = dig(doc, "summary.total")
    rep.requests_per_s = dig(doc, "summary.requestsPerSec")
    p99_s = dig(doc, "latencyPercentiles.p99")
    rep.p99_ms = p99_s * 1e3 if isinstance(p99_s, (int, float)) else None
    rep.errors = {str(k): int(v) for k, v in (doc.get("errorDistribution") or {}).items()}
    return rep


@dataclasses.dataclass
class Generator:
    """Generator is one load tool: its name in the output, its binary, how to call it."""

    name: str
    kind: str  # "wrk", "surge", "oha" or "run_plan"
    binary: str

    def closed_argv(self, url: str, connections: int, duration_s: int) -> list[str]:
        """closed_argv is a closed-loop run: one thread, N keep-alive connections, T seconds."""
        if self.kind == "wrk":
            return [self.binary, "-t1", f"-c{connections}", f"-d{duration_s}s", "--latency", url]
        return [self.binary, "run", url, "-c", str(connections), "-d", f"{duration_s}s", "--threads", "1", "--json"]

    def rate_argv(self, url: str, rate: int, duration_s: int) -> list[str]:
        """rate_argv is an open-model run at a constant arrival rate (surge only)."""
        return [self.binary, "run", url, "-r", str(rate), "-d", f"{duration_s}s", "--json"]

    def open_argv(self, url: str, rate: int, duration_s: int, connections: int = 256) -> list[str]:
        """open_argv is an open-model run on one thread (the open section): surge with its
        defaults (connections up front, in-flight cap) and no results directory; oha on one
        tokio worker with `connections` opened, latency corrected to the intended send time."""
        if self.kind == "oha":
            return [
                self.binary,
                "-q",
                str(rate),
                "-z",
                f"{duration_s}s",
                "-c",
                str(connections),
                "--worker-threads",
                "1",
                "--latency-correction",
                "--no-tui",
                "--output-format",
                "json",
                url,
            ]
        return [
            self.binary,
            "run",
            url,
            "-r",
            str(rate),
            "-d",
            f"{duration_s}s",
            "--threads",
            "1",
            "--json",
            "--no-save",
        ]

    def parse(self, stdout: str) -> GenReport:
        """parse reads this tool's output."""
        parsers = {"wrk": parse_wrk, "oha": parse_oha}
        return parsers.get(self.kind, parse_surge)(stdout)


def find_wrk() -> str | None:
    """find_wrk is the wrk binary on PATH, or None."""
    return shutil.which("wrk")


def find_oha() -> str | None:
    """find_oha is the oha binary on PATH or in ~/.cargo/bin (where `cargo install oha` puts
    it), or None."""
    cargo_bin = str(Path("~").expanduser() / ".cargo" / "bin")
    return shutil.which("oha") or shutil.which("oha", path=cargo_bin)


def _help_ok(argv: list[str]) -> tuple[bool, str]:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        return False, str(e)
    return out.returncode == 0, (out.stdout + out.stderr)


def find_surge(repo: str | Path, explicit: str | None) -> tuple[str | None, str]:
    """find_surge locates a surge whose `run` has --json; returns (binary, why-not)."""
    candidates = [explicit] if explicit else [str(Path(repo, ".venv", "bin", "surge")), shutil.which("surge")]
    for path in candidates:
        if not path or not Path(path).exists():
            continue
        ok, text = _help_ok([path, "run", "--help"])
        if not ok:
            return None, f"{path} run --help failed: {text.strip()[-300:]}"
        if "--json" not in text:
            return None, f"{path} run has no --json option yet"
        return path, ""
    return None, "no surge in .venv/bin or on PATH (run `make build`)"


def find_target(repo: str | Path, surge: str | None) -> tuple[list[str] | None, str]:
    """find_target is the argv that starts the reference target on a free loopback port."""
    tail = ["--bind", "127.0.0.1:0", "--threads", "1"]
    if surge:
        ok, _ = _help_ok([surge, "target", "--help"])
        if ok:
            return [surge, "target", *tail], ""
    target_dir = os.environ.get("CARGO_TARGET_DIR") or Path(repo, "target")
    binary = str(Path(target_dir, "release", "surge-target"))
    if os.access(binary, os.X_OK):
        return [binary, *tail], ""
    return None, f"neither `surge target` nor {binary} is available yet (or pass --target-cmd)"


RUN_PLAN_BUILD = ["cargo", "build", "--release", "-p", "surge-engine", "--example", "run_plan"]


def find_run_plan(
    repo: str | Path, explicit: str | None, build: bool = True, timeout_s: float = 1800
) -> tuple[str | None, str]:
    """find_run_plan is the engine's run_plan example (plan JSON on stdin, result JSON on
    stdout), built first with cargo so it matches the tree; returns (binary, note or why-not).

    With an explicit path nothing is built. When the build fails, an existing binary is used
    and the note says it may be older than the tree.
    """
    if explicit:
        if os.access(explicit, os.X_OK):
            return explicit, f"{explicit} (given; not rebuilt)"
        return None, f"{explicit} is not an executable file"
    target_dir = os.environ.get("CARGO_TARGET_DIR") or Path(repo, "target")
    binary = str(Path(target_dir, "release", "examples", "run_plan"))
    failure = ""
    if build and shutil.which("cargo"):
        all_cores = set(range(os.cpu_count() or 1))
        try:
            out = subprocess.run(
                RUN_PLAN_BUILD,
                cwd=repo,
                capture_output=True,
                text=True,
                timeout=timeout_s,
                preexec_fn=lambda: os.sched_setaffinity(0, all_cores),
            )
            if out.returncode == 0 and os.access(binary, os.X_OK):
                return binary, f"{binary} (built now: {' '.join(RUN_PLAN_BUILD)})"
            failure = f"`{' '.join(RUN_PLAN_BUILD)}` failed: {out.stderr.strip()[-300:]}"
        except (OSError, subprocess.TimeoutExpired) as e:
            failure = f"`{' '.join(RUN_PLAN_BUILD)}` failed: {e}"
    elif build:
        failure = "cargo not on PATH"
    if os.access(binary, os.X_OK):
        note = (
            f"{binary} (NOT rebuilt: {failure}; it may be older than the tree)"
            if failure
            else f"{binary} (not rebuilt)"
        )
        return binary, note
    return None, failure or f"{binary} not built ({' '.join(RUN_PLAN_BUILD)})"
