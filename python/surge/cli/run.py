"""``surge run URL`` and ``surge run FILE.yaml``: flags checked (each error naming its flag),
then the run, its summary or JSON document, and its exit code."""

from __future__ import annotations

import json
import math
import os
import re
import resource
import sys
from pathlib import Path
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Optional

import click

from surge import signals
from surge.cli.errors import finish
from surge.cli.options import db_option, tag_option
from surge.durations import format_limit, parse_duration
from surge.files import FileReadError, read_bounded
from surge.limits import MAX_DATA_FILE_BYTES, MAX_DURATION_S, MAX_ITERATIONS, MAX_RATE, MAX_THREADS, MAX_VUS
from surge.diagnosis.check import watch_process
from surge.errors import BadInput, UnreachableError
from surge.plan_errors import plan_error
from surge.plan import (
    ConstantArrivalRate,
    ConstantVus,
    Executor,
    Limits,
    Plan,
    RequestSpec,
    SharedIterations,
    TargetSpec,
)
from surge.document import result_document
from surge.exit_codes import Outcome
from surge.record.directory import check_out
from surge.redact import redact_message, redact_text
from surge.run import NOTHING_SENT as FILE_NOTHING_SENT
from surge.run import CompiledRun, RunOutcome, planned_s, unreachable_outcome

if TYPE_CHECKING:
    from surge.diagnosis.watch import TargetWatch
    from surge.heading import PlanLike
    from surge.history import History
    from surge.record import RecordWriter


DEFAULT_DURATION = "10s"
DEFAULT_TIMEOUT = "30s"
DEFAULT_GRACE = "5s"
DEFAULT_CONNECTIONS = 64
DEFAULT_MAX_IN_FLIGHT = 10_000


def _duration(flag: str, text: str, *, positive: bool = True) -> float:
    try:
        seconds = parse_duration(text)
    except ValueError as e:
        raise BadInput(flag, str(e)) from None
    if positive and seconds <= 0:
        raise BadInput(flag, f"must be above zero, got '{text}'")
    if not seconds <= MAX_DURATION_S:  # inf too
        raise BadInput(flag, f"'{text}' is longer than {format_limit(MAX_DURATION_S)}, the longest duration surge "
                             "accepts")
    return seconds


def _count(flag: str, value: int | None, most: int) -> None:
    """_count refuses a whole-number flag outside 1..most, naming the flag."""
    if value is not None and not 1 <= value <= most:
        raise BadInput(flag, f"must be from 1 to {most:,}, got {value}")


def check_threads(threads: int | None) -> None:
    """check_threads refuses a --threads value outside the engine's range."""
    _count("--threads", threads, MAX_THREADS)


def _headers(values: list[str]) -> list[tuple[str, str]]:
    headers = []
    for number, value in enumerate(values, 1):
        name, sep, rest = value.partition(":")
        if not sep or not name.strip():
            # Not echoed: without its ':' a header cannot be told from a secret value.
            raise BadInput("-H/--header", f"header {number} has no name before a ':': it must look like 'Name: value'")
        headers.append((name.strip(), rest.strip()))
    return headers


def _body(value: str | None) -> bytes | None:
    if value is None:
        return None
    if value.startswith("@"):
        try:
            return read_bounded(value[1:], MAX_DATA_FILE_BYTES)
        except FileReadError as e:
            raise BadInput("--body", f"{value[1:]}: {e.message}") from None
    return value.encode()


def _default_max_in_flight() -> int:
    """The default in-flight cap: large enough to ride out a stall, within the fd limit."""
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY:
        return DEFAULT_MAX_IN_FLIGHT
    return max(1, min(DEFAULT_MAX_IN_FLIGHT, hard - 256))


def build_plan(
    url: str,
    *,
    connections: int | None,
    duration: str | None,
    requests: int | None,
    rate: float | None,
    method: str,
    headers: list[str],
    body: str | None,
    timeout: str,
    threads: int | None,
    insecure: bool,
    max_in_flight: int | None,
    grace: str,
) -> Plan:
    """build_plan turns ``surge run`` flags into a Plan; BadInput names the bad flag."""
    _count("-c/--connections", connections, MAX_VUS)
    _count("-n/--requests", requests, MAX_ITERATIONS)
    if rate is not None and not (math.isfinite(rate) and rate > 0):
        raise BadInput("-r/--rate", f"must be a positive number of requests per second, got {rate:g}")
    if rate is not None and rate > MAX_RATE:
        raise BadInput("-r/--rate", f"must be at most {MAX_RATE:,.0f} requests per second (the engine's bound), "
                                    f"got {rate:g}")
    check_threads(threads)
    _count("--max-in-flight", max_in_flight, MAX_VUS)
    if max_in_flight is not None and rate is None:
        raise BadInput("--max-in-flight", "only applies with -r/--rate (the open model)")
    target = TargetSpec(url=url, insecure=insecure)
    request = RequestSpec.build(method, _headers(headers), _body(body))
    limits = Limits(timeout_s=_duration("--timeout", timeout), grace_period_s=_duration("--grace", grace, positive=False))

    duration_s = _duration("-d/--duration", duration) if duration is not None else None
    if rate is not None:
        if requests is not None:
            # n requests at the rate take n/rate seconds; -d, if given, may cut it short.
            by_count = requests / rate
            duration_s = min(duration_s, by_count) if duration_s is not None else by_count
        limit = max_in_flight or _default_max_in_flight()
        executor: Executor
        if connections is not None and connections > limit:
            raise BadInput("-c/--connections", f"{connections} connections up front exceed --max-in-flight {limit}")
        executor = ConstantArrivalRate(
            rate=rate,
            duration_s=duration_s or _duration("-d/--duration", DEFAULT_DURATION),
            max_vus=limit,
            pre_allocated_vus=connections,
        )
    elif requests is not None:
        vus = connections or DEFAULT_CONNECTIONS
        executor = SharedIterations(vus=min(vus, requests), iterations=requests, max_duration_s=duration_s or 600.0)
    else:
        executor = ConstantVus(vus=connections or DEFAULT_CONNECTIONS,
                               duration_s=duration_s or _duration("-d/--duration", DEFAULT_DURATION))
    plan = Plan.single(target, request, executor, limits=limits, threads=threads)
    _check_with_engine(plan)
    return plan


# The flag each engine plan field comes from, for one-line errors that name the flag.
_FLAG_FOR_FIELD = {
    "target.url": "URL",
    "request.method": "-m/--method",
    "request.headers": "-H/--header",
    "request.body_base64": "--body",
    "executor.vus": "-c/--connections",
    "executor.pre_allocated_vus": "-c/--connections",
    "executor.iterations": "-n/--requests",
    "executor.rate": "-r/--rate",
    "executor.duration_s": "-d/--duration",
    "executor.max_duration_s": "-d/--duration",
    "executor.max_vus": "--max-in-flight",
    "limits.timeout_s": "--timeout",
    "limits.grace_period_s": "--grace",
    "threads": "--threads",
}


def _check_with_engine(plan: Plan) -> None:
    """_check_with_engine validates the plan in the engine (which owns URL, method and header
    rules) and raises BadInput for the first error, naming the flag it came from."""
    from surge._engine import validate_plan

    text = plan.to_json()
    for error in json.loads(validate_plan(text)):
        header = re.search(r"\.headers\[(\d+)\]$", error["field"])
        names = [plan.request.headers[int(header[1])][0]] if header else []
        field, message = plan_error(error, json.loads(text))
        field = re.sub(r"\[\d+\]", "", field)
        field = re.sub(r"^scenarios\.(flow\.sequences\.steps\.)?", "", field)
        raise BadInput(_FLAG_FOR_FIELD.get(field, field or "surge run"), redact_message(names, message))


NOTHING_SENT = "the run ended before any request was sent: -d/--duration is too short to open a connection"
"""NOTHING_SENT says why a URL run that sent nothing exits 3 (an empty run, not bad input:
how long opening a connection takes depends on the machine, so no minimum is guessed)."""


RunHook = Callable[[RunOutcome], None]
"""RunHook is given a finished run's outcome after its summary is printed (``surge demo``'s
per-second view)."""


def execute(compiled: CompiledRun, *, threads: int | None, json_output: bool, url_plan: Plan | None = None,
            recorder: RecordWriter | None = None, junit: Path | None = None,
            after_summary: RunHook | None = None, watch: TargetWatch | None = None) -> Outcome:
    """execute runs ``compiled`` (a scenario file's, or with ``url_plan`` the one a URL's flags
    made) with progress display and summary (or the JSON document); returns the Outcome (exit
    code and why). ``url_plan`` describes a URL run in its summary. ``recorder`` (unless
    --no-save) writes the results directory as the run goes and is named on stderr at the end;
    ``junit`` is where the thresholds' and checks' verdicts go as JUnit XML; ``after_summary``
    sees the outcome once the summary is printed; ``watch`` samples the target's process during
    the run (--watch-pid, docs/diagnosis.md). Every finished run gets its findings
    (``surge.diagnosis``). A target not reachable at the start still completes the record and
    the JUnit file (nothing sent) before UnreachableError goes on."""
    nothing_sent = NOTHING_SENT if url_plan is not None else FILE_NOTHING_SENT
    if recorder is not None:
        recorder.begin()
        if watch is not None:
            recorder.target_sample = watch.latest
    try:
        if watch is not None:
            watch.start()
        try:
            outcome = _run(compiled, threads, json_output, recorder)
        finally:
            if watch is not None:
                watch.stop()
    except UnreachableError as e:
        with signals.deferred():
            outcome = unreachable_outcome(compiled, str(e.args[0]) if e.args else str(e))
            doc = _document(outcome, url_plan)
            _write_junit(junit, recorder, doc, outcome, error=doc["error"])
            _finish_record(recorder, outcome, doc)
        raise
    # Once the engine has returned, a stop signal waits for the results to be printed.
    with signals.deferred():
        from surge.diagnosis.attach import attach_diagnosis

        attach_diagnosis(outcome.main, url_plan if url_plan is not None else compiled.main, watch)
        if json_output:
            # A URL run's document is the engine's as it is (less per-interval histograms, secrets
            # masked): no need to load and validate the result models on this path.
            doc = _document(outcome, url_plan)
            sys.stdout.write(json.dumps(doc) + "\n")
            sys.stdout.flush()
        else:
            _print_summary(outcome, compiled, url_plan)
            doc = _document(outcome, url_plan)  # drops the per-interval histograms: after the summary
        if after_summary is not None:
            after_summary(outcome)
        _write_junit(junit, recorder, doc, outcome)
        _finish_record(recorder, outcome, doc)
    return outcome.outcome(nothing_sent=nothing_sent, name_phase=url_plan is None)


def _run(compiled: CompiledRun, threads: int | None, json_output: bool, recorder: RecordWriter | None) -> RunOutcome:
    """_run runs the phases, telling the recorder, the progress display (when stderr is a
    terminal and the output is not --json) and stderr's phase lines as it goes."""
    from surge.run import run_phases

    def on_phase(name: str, result: dict[str, Any]) -> None:
        if recorder is not None:
            recorder.on_phase(name, result)
        if not json_output:
            _print_phase(name, result)

    record_interval = recorder.on_interval if recorder is not None else None
    # Rich and the result models load only once the engine has returned (they would count in
    # the run's peak RSS), or before when a terminal shows the progress display.
    if json_output or not sys.stderr.isatty():
        return run_phases(compiled, threads=threads, on_phase=on_phase, on_interval=record_interval)
    from surge.progress import Progress
    from surge.result import Interval

    with Progress(planned_s(compiled.main)) as progress:
        def on_interval(interval: dict[str, Any]) -> None:
            if record_interval is not None:
                record_interval(interval)
            progress.update(Interval.model_validate(interval))

        return run_phases(compiled, threads=threads, on_phase=on_phase, on_interval=on_interval)


def _print_summary(outcome: RunOutcome, compiled: CompiledRun, url_plan: Plan | None) -> None:
    """_print_summary prints the run's summary: a URL run's, or a scenario file's with its
    scenarios, tags, checks and thresholds."""
    from surge.result import RunResult
    from surge.summary import print_scenario_summary, print_summary

    result = RunResult.model_validate(outcome.main)
    if url_plan is not None:
        print_summary(result, url_plan)
    else:
        print_scenario_summary(result, compiled.main, outcome.verdicts, outcome.aborted_by,
                               interrupted_in=outcome.interrupted_in)


def _document(outcome: RunOutcome, url_plan: Plan | None) -> dict[str, Any]:
    """_document is the run's ``--json`` document: a URL run's is the engine's result as it is
    (secrets masked); a scenario file's adds thresholds and the setup/teardown summaries."""
    doc = result_document(outcome.main) if url_plan is not None else outcome.document()
    if outcome.error is not None:
        doc["error"] = redact_text(outcome.error)
    return doc


def _write_junit(junit: Path | None, recorder: RecordWriter | None, doc: dict[str, Any], outcome: RunOutcome,
                 *, error: str | None = None) -> None:
    """_write_junit writes the --junit file, if asked; a failure to write it is one warning."""
    if junit is None:
        return
    from surge.junit import write_junit

    name = recorder.meta["name"] if recorder is not None else "surge run"
    try:
        write_junit(junit, name, doc, outcome.verdicts, error=error)
    except OSError as e:
        print(f"surge: warning: --junit: cannot write {junit}: {e.strerror or e}", file=sys.stderr, flush=True)


def _finish_record(recorder: RecordWriter | None, outcome: RunOutcome, doc: dict[str, Any]) -> None:
    """_finish_record completes the results directory with the result and says where it is."""
    if recorder is None:
        return
    recorder.finish(doc, interrupted=outcome.interrupted_in is not None or signals.received() is not None)
    print(f"results: {recorder.directory}", file=sys.stderr, flush=True)


def check_junit(junit: str | None) -> Path | None:
    """check_junit refuses, before the run, a --junit path that is a directory or whose
    directory does not exist."""
    if junit is None:
        return None
    path = Path(junit)
    if path.is_dir():
        raise BadInput("--junit", f"{junit} is a directory")
    if not path.parent.is_dir():
        raise BadInput("--junit", f"{path.parent} does not exist (create it, or choose another file)")
    return path


def make_recorder(out: str | None, no_save: bool, target: str, scenario_file: Path | None,
                  target_url: str, tags: dict[str, str] | None = None, *, name: str | None = None,
                  results: Path | None = None, db: str | None = None,
                  plan: PlanLike | None = None) -> RecordWriter | None:
    """make_recorder creates the run's results directory (``--out``, or a new one under
    ``results`` (default ``results/``) named after ``name`` or the target) and its RecordWriter
    (with the user's ``tags``), recording into the history ``db`` names too (--db), or None
    with --no-save. ``plan``'s heading is kept (``meta.plan``) for ``surge show``."""
    if no_save:
        return None
    from datetime import datetime, timezone

    from surge.heading import heading
    from surge.record import RecordWriter, create_directory, run_name
    from surge.record.directory import RESULTS_DIR

    history = open_run_history(db)
    name = name or run_name(target, scenario_file)
    directory = create_directory(out, name, datetime.now(timezone.utc), results or Path(RESULTS_DIR))
    recorder = RecordWriter(directory, name=name, target_url=target_url, scenario_file=scenario_file, tags=tags,
                            history=history)
    if plan is not None:
        recorder.meta["plan"] = heading(plan).to_dict()
    return recorder


def open_run_history(db: str | None) -> History | None:
    """open_run_history opens the history a run (or an import) records into; one a newer surge
    wrote refuses the run (exit 2), one that cannot be opened costs a warning line, not the run."""
    from surge.history import HistoryUnavailable, open_history

    try:
        return open_history(db)
    except HistoryUnavailable as e:
        print(redact_text(f"surge: warning: {e}; this run is recorded only in its results directory"),
              file=sys.stderr, flush=True)
        return None


def _print_phase(name: str, result: dict[str, Any]) -> None:
    """_print_phase says on stderr how an unmeasured phase (setup, teardown) went."""
    from rich.console import Console
    from rich.text import Text

    r = result["requests"]
    pools = ", ".join(f"{k} ({len(v):,} values)" for k, v in result.get("pools", {}).items())
    stopped = {"interrupted": " · interrupted", "unreachable": " · did not run: target not reachable"}.get(
        result["stop_reason"], "")
    Console(stderr=True).print(Text.assemble((name, "bold"), redact_text(
        f": {r['sent']:,} requests, {r['failed']:,} failed{stopped}"
        f"{' · captured ' + pools if pools else ''} (not in the measured results)")))


def _is_scenario_file(target: str) -> bool:
    return target.lower().endswith((".yaml", ".yml")) or (not target.lower().startswith(("http://", "https://"))
                                                           and Path(target).is_file())


@click.command("run")
@click.argument("url")
@click.option("-c", "--connections", type=int,
              help="Closed model: virtual users, one connection each (default 64). With -r: connections opened "
                   "up front (default: 10 ms of arrivals).")
@click.option("-d", "--duration", help="How long to send, e.g. 30s, 1m30s (default 10s).")
@click.option("-n", "--requests", type=int, help="Send exactly this many requests.")
@click.option("-r", "--rate", type=float, help="Open model: requests per second, timed from the intended send time.")
@click.option("-m", "--method", help="HTTP method (default GET).")
@click.option("-H", "--header", multiple=True, help="'Name: value' header; repeatable.")
@click.option("--body", help="Request body: text, or @file.")
@click.option("--timeout", help="Per-request timeout (default 30s). With a scenario file: replaces defaults.timeout "
                                "(a request's own timeout stays).")
@click.option("--threads", type=int, help="Event-loop threads (default: one per core).")
@click.option("--max-in-flight", "max_in_flight", type=int,
              help="Open model: cap on outstanding requests (and connections).")
@click.option("--grace", help="How long requests in flight at the end may still finish (default 5s). With a scenario "
                              "file: replaces graceful_stop.")
@click.option("--insecure", is_flag=True, help="Do not verify TLS certificates (with a scenario file too).")
@click.option("--json", "json_output", is_flag=True, help="Print the summary as one JSON document on stdout.")
@click.option("--time-scale", "time_scale", type=float,
              help="Scenario files: multiply executor durations, stages, start times and threshold delays by "
                   "FACTOR (not think times, timeouts or graceful stops: the test is shorter, the load the same).")
@click.option("--target", "target_url", help="Scenario files: send to this base URL instead of the file's target.")
@click.option("-e", "--env", "env_pairs", multiple=True, metavar="NAME=VALUE",
              help="Scenario files: set NAME for the file's env variables (over the process environment); "
                   "repeatable.")
@click.option("--out", "out", metavar="DIR",
              help="Write the run's results directory here (default: results/<UTC yyyymmdd-HHMMSS>-<name>/).")
@click.option("--no-save", "no_save", is_flag=True, help="Write no results directory, and record nothing in the "
                                                           "history.")
@db_option
@click.option("--junit", "junit", metavar="FILE",
              help="Write the thresholds' and checks' verdicts to FILE as JUnit XML (for CI), also when a threshold "
                   "fails or the run is stopped.")
@click.option("--watch-pid", "watch_pid", type=int, metavar="PID",
              help="Sample process PID (the target, with its child processes) every second: CPU, RSS, threads, "
                   "open files, into the time series, summary.json and the findings.")
@tag_option
def run_command(
    url: str,
    connections: Optional[int],
    duration: Optional[str],
    requests: Optional[int],
    rate: Optional[float],
    method: Optional[str],
    header: tuple[str, ...],
    body: Optional[str],
    timeout: Optional[str],
    threads: Optional[int],
    max_in_flight: Optional[int],
    grace: Optional[str],
    insecure: bool,
    json_output: bool,
    time_scale: Optional[float],
    target_url: Optional[str],
    env_pairs: tuple[str, ...],
    out: Optional[str],
    no_save: bool,
    db: Optional[str],
    junit: Optional[str],
    watch_pid: Optional[int],
    tags: dict[str, str],
) -> None:
    """Run a load test against URL, or the scenarios of a YAML file, and print a summary."""
    for saving_flag in [f for f, v in (("--out", out), ("--db", db)) if v is not None and no_save]:
        raise BadInput(saving_flag, "cannot be used with --no-save")
    check_out(out)
    junit_path = check_junit(junit)
    watch = watch_process(watch_pid)
    if _is_scenario_file(url):
        # The load's shape and the request are the file's; the limits and TLS may be overridden.
        given = {"-c/--connections": connections, "-d/--duration": duration, "-n/--requests": requests,
                 "-r/--rate": rate, "-m/--method": method, "-H/--header": header or None, "--body": body,
                 "--max-in-flight": max_in_flight}
        for flag, value in given.items():
            if value is not None:
                raise BadInput(flag, f"does not apply to a scenario file ({url}): set it in the file")
        overrides = {"timeout": _duration("--timeout", timeout) if timeout is not None else None,
                     "graceful_stop": _duration("--grace", grace, positive=False) if grace is not None else None,
                     "insecure": insecure}
        env = _env_overrides(env_pairs)
        finish(_run_scenario_file(url, time_scale, threads, target_url, json_output, env, overrides,
                                  save=(out, no_save, db), tags=tags, junit=junit_path, watch=watch))
    for flag, value in (("--time-scale", time_scale), ("--target", target_url), ("-e/--env", env_pairs or None)):
        if value is not None:
            raise BadInput(flag, "only applies to a scenario file (surge run FILE.yaml)")
    plan = build_plan(
        url,
        connections=connections,
        duration=duration,
        requests=requests,
        rate=rate,
        method=method or "GET",
        headers=list(header),
        body=body,
        timeout=timeout or DEFAULT_TIMEOUT,
        threads=threads,
        insecure=insecure,
        max_in_flight=max_in_flight,
        grace=grace or DEFAULT_GRACE,
    )
    compiled = CompiledRun(main=json.loads(plan.to_json()))
    finish(execute(compiled, threads=None, json_output=json_output, url_plan=plan, junit=junit_path, watch=watch,
                   recorder=make_recorder(out, no_save, url, None, compiled.main["target"]["url"], tags, db=db,
                                          plan=plan)))


ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
"""ENV_NAME is what an environment variable's name may be (as in a POSIX shell)."""


def _env_overrides(pairs: tuple[str, ...]) -> dict[str, str] | None:
    """_env_overrides is the process environment with each -e NAME=VALUE set over it, or
    None when no -e was given."""
    if not pairs:
        return None
    env = dict(os.environ)
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not ENV_NAME.fullmatch(name):
            raise BadInput("-e/--env", f"expected NAME=VALUE with NAME made of letters, digits and _, got {pair!r}")
        env[name] = value
    return env


def _run_scenario_file(path: str, time_scale: float | None, threads: int | None, target_url: str | None,
                       json_output: bool, env: dict[str, str] | None = None,
                       overrides: dict[str, Any] | None = None,
                       save: tuple[str | None, bool, str | None] = (None, True, None),
                       tags: dict[str, str] | None = None, junit: Path | None = None,
                       watch: TargetWatch | None = None) -> Outcome:
    if time_scale is not None and not (math.isfinite(time_scale) and time_scale > 0):
        raise BadInput("--time-scale", f"must be a positive factor, got {time_scale:g}")
    check_threads(threads)
    if not Path(path).exists():
        raise BadInput(path, "no such scenario file")
    from surge.scenario import load

    scenario_file = load(Path(path), env=env)
    if target_url is not None:
        try:
            scenario_file = scenario_file.with_target(target_url)
        except ValueError as e:  # pydantic's PydanticCustomError: the message says what is wrong
            raise BadInput("--target", str(e)) from None
    scenario_file = scenario_file.with_overrides(**(overrides or {}))
    compiled = scenario_file.compile(time_scale=time_scale or 1.0, env=env)
    out, no_save, db = save
    return execute(compiled, threads=threads, json_output=json_output, junit=junit, watch=watch,
                   recorder=make_recorder(out, no_save, path, Path(path), compiled.main["target"]["url"], tags, db=db,
                                          plan=compiled.main))
