"""``surge target``: the reference target, a system under test with known capacity.

``register(app)`` adds the command to a Typer app; ``surge.cli`` calls it. Validation is
the Rust side's (``_engine.check_target_config``), so ``surge target`` and the
``surge-target`` binary accept and reject exactly the same values, each error naming its flag.
"""

from __future__ import annotations

import json
import signal
import sys
from typing import Annotated, Any, Optional

import typer

from surge import _engine

BAD_INPUT = 2
"""BAD_INPUT is the exit code for an invalid flag value (as for every surge command)."""

READY_PREFIX = "surge target listening on http://"
"""READY_PREFIX starts the line printed once the target listens; ``surge.target`` parses it."""


def target_config(**flags: Any) -> str:
    """target_config is the JSON configuration for the given flag values (None means unset)."""
    return json.dumps({key: value for key, value in flags.items() if value is not None})


def _fail(message: str) -> None:
    for line in message.strip().splitlines() or ["invalid configuration"]:
        print(f"surge: error: {line}", file=sys.stderr)
    raise typer.Exit(BAD_INPUT)


def _stop_on_signals() -> None:
    """SIGINT (Ctrl-C) and SIGTERM stop the target cleanly, summary printed, even when the
    parent started it with SIGINT ignored (a background job of a non-interactive shell)."""

    def handler(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    try:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread: leave signals alone
        pass


def _print_summary(summary: dict[str, Any]) -> None:
    statuses = ", ".join(f"{code}: {n}" for code, n in summary.get("by_status", {}).items()) or "none"
    print(
        f"surge target stopped ({summary.get('stopped_by')}) after {summary.get('elapsed_s', 0):.1f} s: "
        f"{summary.get('received', 0)} requests received; responses {statuses}",
        flush=True,
    )


def target_command(
    bind: Annotated[str, typer.Option("--bind", help="HOST:PORT to listen on; port 0 picks a free port.")] = "127.0.0.1:8080",
    threads: Annotated[int, typer.Option("--threads", help="Server threads, each with its own event loop.")] = 1,
    duration: Annotated[Optional[str], typer.Option("--duration", help="Stop by itself after this long, e.g. 30s.")] = None,
    workers: Annotated[Optional[int], typer.Option("--workers", help="Service slots; without it requests are answered at once.")] = None,
    service_time: Annotated[
        Optional[str],
        typer.Option("--service-time", help="Time a request holds a slot: 2ms, exp:2ms, uniform:1ms-3ms, lognormal:2ms,0.5."),
    ] = None,
    queue: Annotated[Optional[int], typer.Option("--queue", help="Most requests waiting for a slot; beyond, 503. Default unbounded.")] = None,
    rate_limit: Annotated[Optional[float], typer.Option("--rate-limit", help="Token bucket, requests per second; beyond, 429.")] = None,
    burst: Annotated[Optional[int], typer.Option("--burst", help="Token bucket size (default: one second of --rate-limit).")] = None,
    stall_every: Annotated[Optional[str], typer.Option("--stall-every", help="Freeze the whole server every this long (GC pause).")] = None,
    stall_for: Annotated[Optional[str], typer.Option("--stall-for", help="How long each freeze lasts.")] = None,
    error_rate: Annotated[Optional[float], typer.Option("--error-rate", help="Share of requests answered 500, 0 to 1.")] = None,
    close_after: Annotated[Optional[int], typer.Option("--close-after", help="Close each connection after this many responses.")] = None,
    max_connections: Annotated[Optional[int], typer.Option("--max-connections", help="Refuse connections beyond this many open.")] = None,
    seed: Annotated[Optional[int], typer.Option("--seed", help="Repeat the same random draws (service times, errors).")] = None,
    shards: Annotated[int, typer.Option("--shards", help="Independently locked parts of the task store.")] = 32,
) -> None:
    """target_command serves the reference target (/health, /delay/{ms}, /tasks, /stats) until
    stopped: Ctrl-C, SIGTERM or ``--duration``; exit code 2 for an invalid value."""
    config = target_config(
        bind=bind, threads=threads, duration=duration, workers=workers, service_time=service_time,
        queue=queue, rate_limit=rate_limit, burst=burst, stall_every=stall_every, stall_for=stall_for,
        error_rate=error_rate, close_after=close_after, max_connections=max_connections, seed=seed,
        shards=shards,
    )
    try:
        report = json.loads(_engine.check_target_config(config))
    except ValueError as e:
        _fail(str(e))
        return
    for warning in report["warnings"]:
        print(f"surge: warning: {warning}", file=sys.stderr, flush=True)

    def on_ready(address: str) -> None:
        print(f"{READY_PREFIX}{address}", flush=True)
        for line in report["describe"]:
            print(f"  {line}", flush=True)

    _stop_on_signals()
    try:
        summary = json.loads(_engine.serve_target(config, on_ready))
    except OSError as e:
        print(f"surge: error: {e}", file=sys.stderr)
        raise typer.Exit(1) from None
    _print_summary(summary)


def register(app: typer.Typer) -> None:
    """register adds the ``target`` command to ``app``."""
    app.command("target", help="Serve the reference target: a system under test with known capacity.")(target_command)


if __name__ == "__main__":  # python -m surge.cli_target target ... (without the main CLI)
    _app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
    _app.callback()(lambda: None)
    register(_app)
    _app()
