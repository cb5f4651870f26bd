"""``surge target``: the reference target, a system under test with known capacity.

``surge.cli`` adds the command to its click group. Validation is
the Rust side's (``surge.engine.execute.check_target_config``), so ``surge target`` and the
``surge-target`` binary accept and reject exactly the same values, each error naming its flag.
"""

from __future__ import annotations

import json
import math
import signal
import sys
from typing import Any

import click

from surge.core.redact import redact_text
from surge.engine.execute import check_target_config, serve_target

BAD_INPUT = 2
"""BAD_INPUT is the exit code for an invalid flag value (as for every surge command)."""

READY_PREFIX = "surge target listening on http://"
"""READY_PREFIX starts the line printed once the target listens; ``surge.engine.target`` parses it."""


def target_config(**flags: Any) -> str:
    """target_config is the JSON configuration for the given flag values (None means unset).
    ValueError names the flag of a value JSON cannot carry to the engine: a number that is
    not finite, or a whole number beyond 64 bits (the engine checks every range)."""
    for key, value in flags.items():
        flag = "--" + key.replace("_", "-")
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"{flag}: must be a finite number, got {value}")
        if isinstance(value, int) and not -(2**63) <= value < 2**64:
            raise ValueError(f"{flag}: {value} is out of range")
    return json.dumps({key: value for key, value in flags.items() if value is not None}, allow_nan=False)


def _fail(message: str) -> None:
    for line in message.strip().splitlines() or ["invalid configuration"]:
        print(f"surge: error: {redact_text(line)}", file=sys.stderr)
    raise click.exceptions.Exit(BAD_INPUT)


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
    llm = summary.get("llm") or {}
    inference = (
        f"; inference {llm.get('started', 0)} started, {llm.get('completed', 0)} completed, "
        f"{llm.get('cancelled', 0)} cancelled, {llm.get('prompt_tokens', 0)} prompt and "
        f"{llm.get('output_tokens', 0)} output tokens"
        if llm.get("started")
        else ""
    )
    print(
        f"surge target stopped ({summary.get('stopped_by')}) after {summary.get('elapsed_s', 0):.1f} s: "
        f"{summary.get('received', 0)} requests received; responses {statuses}{inference}",
        flush=True,
    )


@click.command("target", help="Serve the reference target: a system under test with known capacity.")
@click.option(
    "--bind", default="127.0.0.1:8080", show_default=True, help="HOST:PORT to listen on; port 0 picks a free port."
)
@click.option("--threads", type=int, default=1, show_default=True, help="Server threads, each with its own event loop.")
@click.option("--duration", help="Stop by itself after this long, e.g. 30s.")
@click.option("--workers", type=int, help="Service slots; without it requests are answered at once.")
@click.option(
    "--service-time",
    "service_time",
    help="Time a request holds a slot: 2ms, exp:2ms, uniform:1ms-3ms, lognormal:2ms,0.5.",
)
@click.option(
    "--queue",
    type=int,
    help="Most requests (connections, with --thread-per-connection) waiting for a worker; beyond, 503. "
    "Default unbounded.",
)
@click.option(
    "--contention",
    type=float,
    help="Universal Scalability Law σ, 0 to below 1: service time × (1 + σ(n−1) + κn(n−1)), n in service.",
)
@click.option("--coherency", type=float, help="Universal Scalability Law κ, 0 to 1; throughput peaks at √((1−σ)/κ).")
@click.option(
    "--thread-per-connection",
    "thread_per_connection",
    is_flag=True,
    default=None,
    help="Each worker is held by one connection until it closes; more connections wait unanswered.",
)
@click.option(
    "--service-cpu",
    "service_cpu",
    is_flag=True,
    default=None,
    help="Burn each service time as CPU (the thread's CPU clock) on one of --workers threads instead of "
    "sleeping: --workers 1 is one event loop; capacity min(workers, cores) / mean.",
)
@click.option("--rate-limit", "rate_limit", type=float, help="Token bucket, requests per second; beyond, 429.")
@click.option("--burst", type=int, help="Token bucket size (default: one second of --rate-limit).")
@click.option("--stall-every", "stall_every", help="Freeze the whole server every this long (GC pause).")
@click.option("--stall-for", "stall_for", help="How long each freeze lasts.")
@click.option("--error-rate", "error_rate", type=float, help="Share of requests answered 500, 0 to 1.")
@click.option("--close-after", "close_after", type=int, help="Close each connection after this many responses.")
@click.option("--keepalive-timeout", "keepalive_timeout", help="Close a connection idle this long, e.g. 5s.")
@click.option("--max-connections", "max_connections", type=int, help="Refuse connections beyond this many open.")
@click.option("--seed", type=int, help="Repeat the same random draws (service times, errors).")
@click.option("--shards", type=int, default=32, show_default=True, help="Independently locked parts of the task store.")
@click.option(
    "--lock-hold",
    "lock_hold",
    help="Each Task API operation holds its shard's lock this long, e.g. 1ms: one lock serves 1/hold per "
    "second, N shards N/hold.",
)
@click.option(
    "--llm-prefill",
    "llm_prefill",
    default="200us",
    show_default=True,
    help="Inference model (POST /v1/chat/completions, /v1/completions): time per prompt token before the "
    "first token (a prompt token is a whitespace-separated word).",
)
@click.option(
    "--llm-decode",
    "llm_decode",
    default="20ms",
    show_default=True,
    help="Inference model: one decode step (a token) with one sequence in service.",
)
@click.option(
    "--llm-batch",
    "llm_batch",
    type=int,
    default=8,
    show_default=True,
    help="Inference model: sequences in service at once; more wait in arrival order.",
)
@click.option(
    "--llm-slowdown",
    "llm_slowdown",
    type=float,
    default=0.0,
    show_default=True,
    help="Inference model: a decode step takes decode × (1 + F(n−1)) with n sequences in service.",
)
@click.option(
    "--llm-output-tokens",
    "llm_output_tokens",
    type=int,
    default=32,
    show_default=True,
    help="Inference model: tokens generated when a request gives no max_tokens.",
)
def target_command(
    bind: str,
    threads: int,
    duration: str | None,
    workers: int | None,
    service_time: str | None,
    queue: int | None,
    contention: float | None,
    coherency: float | None,
    thread_per_connection: bool | None,
    service_cpu: bool | None,
    rate_limit: float | None,
    burst: int | None,
    stall_every: str | None,
    stall_for: str | None,
    error_rate: float | None,
    close_after: int | None,
    keepalive_timeout: str | None,
    max_connections: int | None,
    seed: int | None,
    shards: int,
    lock_hold: str | None,
    llm_prefill: str,
    llm_decode: str,
    llm_batch: int,
    llm_slowdown: float,
    llm_output_tokens: int,
) -> None:
    """target_command serves the reference target (/health, /delay/{ms}, /tasks, /stats, the
    inference routes /v1/chat/completions and /v1/completions) until stopped: Ctrl-C, SIGTERM or
    ``--duration``; exit code 2 for an invalid value."""
    try:
        config = target_config(
            bind=bind,
            threads=threads,
            duration=duration,
            workers=workers,
            service_time=service_time,
            queue=queue,
            contention=contention,
            coherency=coherency,
            thread_per_connection=thread_per_connection,
            service_cpu=service_cpu,
            rate_limit=rate_limit,
            burst=burst,
            stall_every=stall_every,
            stall_for=stall_for,
            error_rate=error_rate,
            close_after=close_after,
            keepalive_timeout=keepalive_timeout,
            max_connections=max_connections,
            seed=seed,
            shards=shards,
            lock_hold=lock_hold,
            llm_prefill=llm_prefill,
            llm_decode=llm_decode,
            llm_batch=llm_batch,
            llm_slowdown=llm_slowdown,
            llm_output_tokens=llm_output_tokens,
        )
        report = check_target_config(config)
    except ValueError as e:
        _fail(str(e))
        return
    for warning in report["warnings"]:
        print(f"surge: warning: {redact_text(warning)}", file=sys.stderr, flush=True)

    def on_ready(address: str) -> None:
        print(f"{READY_PREFIX}{address}", flush=True)
        for line in report["describe"]:
            print(f"  {line}", flush=True)

    _stop_on_signals()
    try:
        summary = serve_target(config, on_ready)
    except OSError as e:
        print(f"surge: error: {redact_text(str(e))}", file=sys.stderr)
        raise click.exceptions.Exit(1) from None
    _print_summary(summary)
