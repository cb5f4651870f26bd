"""Summary: the end-of-run report printed in the terminal."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from surge.core.redact import redact_text
from surge.diagnosis.finding import Finding
from surge.diagnosis.findings import generator_bound
from surge.engine.result import Generator, LatencySummary, Requests, RunResult
from surge.plan.heading import PlanLike, describe, is_open_model
from surge.present import numbers as fmt
from surge.present.stream_figures import http2_line

PIPE_WIDTH = 1_000_000
"""PIPE_WIDTH is the line width when stdout is not a terminal: wide enough that no line is
ever wrapped or cut (Rich's default, 80 columns, cut figures to ``201.…``)."""


def summary_console() -> Console:
    """summary_console is the console summaries print on: the terminal's width on a terminal
    (tables fold their cells rather than cut them), else lines as long as they need."""
    console = Console()
    return console if console.is_terminal else Console(width=PIPE_WIDTH)


def summary_table(
    title: str, columns: tuple[str, ...], left: tuple[str, ...] = ("",), rows: Iterable[Sequence[Any]] = ()
) -> Table:
    """summary_table is a summary table whose cells fold onto more lines when the terminal is
    narrow, never cut: the columns named in ``left`` are left-aligned, the others right; with
    ``rows`` already in it."""
    table = Table(title=title, title_justify="left", show_edge=False, pad_edge=False)
    for col in columns:
        table.add_column(col, justify="left" if col in left else "right", overflow="fold")
    for row in rows:
        table.add_row(*row)
    return table


def _latency_row(name: str, s: LatencySummary) -> list[str]:
    if s.count == 0:
        return [name, *(fmt.MISSING for _ in range(8)), "0"]
    values = [s.mean_ms, s.min_ms, s.p50_ms, s.p90_ms, s.p95_ms, s.p99_ms, s.p99_9_ms, s.max_ms]
    return [name, *(fmt.ms(v) for v in values), fmt.count(s.count)]


def render_head(plan: PlanLike) -> Text:
    """render_head is the summary's first line: "surge" and what the plan does."""
    head = Text()
    head.append("surge ", style="bold cyan")
    head.append(redact_text(describe(plan)))
    return head


def render_not_started(plan: PlanLike, phase: str) -> Text:
    """render_not_started is the summary of a measured run that never started: a stop
    signal arrived during ``phase`` (setup)."""
    return render_head(plan).append(f"  [stopped during {phase}: the measured run did not start]", style="bold yellow")


def render_summary(result: RunResult, plan: PlanLike) -> Group:
    """render_summary builds the summary: counts, rates, latency table, statuses, failures."""
    r = result.requests
    open_model = is_open_model(plan)
    head = render_head(plan)
    if result.stop_reason == "interrupted":
        head.append("  [interrupted: partial results]", style="bold yellow")
    if result.stop_reason == "aborted":
        stopped = (result.model_extra or {}).get("stopped_early")  # an experiment's rule, else a threshold
        why = f"stopped early: {redact_text(str(stopped.get('message')))}" if isinstance(stopped, dict) else ""
        head.append(f"  [{why or 'aborted by a threshold: partial results'}]", style="bold red")

    counts = Table.grid(padding=(0, 2))
    counts.add_column(style="bold", no_wrap=True)
    counts.add_column(overflow="fold")
    t, drain = result.throughput, result.drain  # a surge run has every figure; imports: render_imported
    findings = _findings(result)
    lower_bound = generator_bound(findings)
    counts.add_row(
        "Throughput",
        Text(f"{'≥ ' if lower_bound else ''}{fmt.rate(t.responses_per_s)} responses/s", style="bold")
        + Text(" (a lower bound: the load generator was the bottleneck)" if lower_bound else "", style="yellow")
        + Text(
            f" · {fmt.rate(t.successes_per_s)} successes/s{'' if result.goodput else ' (goodput)'} · over the "
            f"{fmt.seconds(t.window_s)}s load window"
        ),
    )
    if result.goodput:
        counts.add_row("Goodput", _goodput_line(result))
    counts.add_row(
        "Drain",
        Text(
            f"{fmt.seconds(drain.seconds)}s after the load: {fmt.count(drain.responses)} responses · "
            f"{fmt.count(drain.failed)} failed · "
            f"{fmt.count(drain.interrupted)} interrupted (counted, not in the rates)"
        )
        + (
            Text(" · long: requests outlasted the load (a queue, or hung requests)", style="yellow")
            if drain.is_long(result.duration_s)
            else Text("")
        ),
    )
    counts.add_row(
        "Requests",
        f"{fmt.count(r.sent)} sent ({fmt.rate(t.sent_per_s)}/s) · {fmt.count(r.responses)} responses · "
        f"{fmt.count(r.unanswered)} unanswered "
        f"(connection failed after sending) · {fmt.count(r.interrupted)} interrupted",
    )
    rate_style = "green" if r.failed + (r.interrupted or 0) == 0 else "red"
    counts.add_row(
        "Outcome",
        Text(
            f"{fmt.percent(r.success_rate)} succeeded ({fmt.count(r.succeeded)}) · {fmt.count(r.failed)} failed · "
            f"{fmt.count(r.interrupted)} "
            f"interrupted: failure rate {fmt.percent(r.failure_rate)}",
            style=rate_style,
        )
        + Text(f" · shed (429/503) {fmt.count(r.shed)} · timed out {fmt.count(r.timed_out)}"),
    )
    if open_model:
        counts.add_row(
            "Schedule",
            f"{fmt.count(r.late)} sent >1 ms late · {fmt.count(r.dropped)} not started (all VUs busy) · "
            f"send lag p99 {fmt.ms(result.latency.send_lag.p99_ms)} ms",
        )
    if r.status_codes:
        counts.add_row(
            "Status codes", " · ".join(f"{code} × {fmt.count(n)}" for code, n in sorted(r.status_codes.items()))
        )
    if r.failure_classes:
        counts.add_row(
            "Failures", Text(" · ".join(f"{k} × {fmt.count(n)}" for k, n in r.failure_classes.items()), style="red")
        )
    counts.add_row(
        "Data",
        f"sent {fmt.size(r.bytes_sent or 0)} · received {fmt.size(r.bytes_received or 0)} · "
        f"{fmt.count(r.connections_opened)} connections opened (peak {fmt.count(result.peak_open_connections)} open; "
        f"peak {fmt.count(result.peak_concurrency or 0)} requests outstanding)",
    )
    if result.http2 is not None:
        counts.add_row("HTTP/2", http2_line(result.http2.model_dump()))
    g = result.generator or Generator()
    busy = ", ".join(fmt.busy(b) for b in g.thread_busy)
    counts.add_row(
        "Generator",
        f"{result.threads} threads (busy {busy}) · {fmt.micros(g.cpu_us_per_request)} µs CPU/request · "
        f"peak RSS {fmt.mib(g.max_rss_kib * 1024)}",
    )

    origin = "intended send time" if open_model else "send time"
    table = summary_table(
        f"Latency (ms, from {origin})", ("", "avg", "min", "p50", "p90", "p95", "p99", "p99.9", "max", "count")
    )
    lat = result.latency
    table.add_row(*_latency_row("all", lat.all))
    table.add_row(*_latency_row("success", lat.success))
    if open_model:
        table.add_row(*_latency_row("service", lat.service_time))
    if r.streams:
        table.add_row(*_latency_row("first byte", lat.first_byte))
        table.add_row(*_latency_row("first event", lat.first_event))
        table.add_row(*_latency_row("event gap", lat.event_gap))
        table.add_row(*_latency_row("stream", lat.stream_duration))
        per = r.events_per_stream
        counts.add_row(
            "Streams",
            f"{fmt.count(r.streams)} event streams · {fmt.count(r.events)} events · per stream p50 "
            f"{fmt.count(int(per.get('p50', 0)))}, min {fmt.count(int(per.get('min', 0)))}, max "
            f"{fmt.count(int(per.get('max', 0)))} · {fmt.count(r.empty_streams)} without an event",
        )
    if r.token_streams:
        table.add_row(*_latency_row("TTFT", lat.ttft))
        table.add_row(*_latency_row("ITL", lat.itl))
        table.add_row(*_latency_row("TPOT", lat.tpot))
        tokens = r.tokens_per_stream
        source = (
            "all from usage"
            if r.usage_streams == r.token_streams
            else f"{fmt.count(r.usage_streams)} from usage, the rest counted from the deltas"
            if r.usage_streams
            else "counted from the deltas"
        )
        counts.add_row(
            "Tokens",
            f"{fmt.count(r.output_tokens)} output tokens in {fmt.count(r.token_streams)} streams ({source}) · "
            f"per stream p50 {fmt.count(int(tokens.get('p50', 0)))} · {fmt.rate(t.output_tokens_per_s)} tokens/s",
        )

    distributed = (result.model_extra or {}).get("distributed")
    if distributed:
        counts.add_row("Generators", distributed_line(distributed))

    target = (result.model_extra or {}).get("target_process")
    if target:
        counts.add_row("Target process", _target_process(target))

    parts: list[Any] = [head, counts, table]
    for note in result.notes:
        parts.append(Text(f"note: {redact_text(note)}", style="yellow"))
    parts.extend(render_findings(findings))
    return Group(*parts)


def distributed_line(distributed: dict[str, Any]) -> str:
    """distributed_line is a distributed run's line: its generators and nodes, each one's
    responses/s and CPU per request, the start skew and what was lost."""
    parts = distributed.get("parts") or []
    each = " · ".join(
        f"{p.get('generator')}: {fmt.rate(p.get('responses_per_s'))}/s, "
        f"{fmt.micros(p.get('cpu_us_per_request'))} µs CPU/request" + (" (lost)" if p.get("lost") else "")
        for p in parts
    )
    skew = distributed.get("start_skew_s")
    skew_text = f" · start skew {fmt.ms(skew * 1000)} ms" if skew is not None else ""
    lost = distributed.get("lost") or []
    return (
        f"{len(parts)} on distinct nodes × {distributed.get('threads_per_generator')} threads ({each}){skew_text}"
        + (f" · {len(lost)} lost" if lost else "")
    )


def _findings(result: RunResult) -> list[Finding]:
    """_findings are the findings attached to ``result`` (summary.json's ``findings``)."""
    return [Finding.from_dict(f) for f in (result.model_extra or {}).get("findings") or []]


_SEVERITY_STYLE = {"info": "cyan", "warning": "yellow", "error": "bold red"}


def render_findings(findings: list[Finding]) -> list[Any]:
    """render_findings is the summary's "Findings" block: one paragraph per finding, its
    severity and kind first (docs/diagnosis.md); nothing when there are none."""
    if not findings:
        return []
    parts: list[Any] = [Text("Findings", style="bold")]
    for f in findings:
        parts.append(
            Text.assemble(
                "  ", (f"[{f.severity}] {f.kind}", _SEVERITY_STYLE.get(f.severity, "")), f": {redact_text(f.message)}"
            )
        )
    return parts


def _target_process(target: Mapping[str, Any]) -> str:
    """_target_process is the watched process's line: CPU, memory, threads and files."""

    def cores(key: str) -> str:
        return fmt.cores(target.get(key))

    ended = f" · ended at {fmt.seconds(target['exited_at_s'])}s" if target.get("exited_at_s") is not None else ""
    return redact_text(
        f"pid {target['pid']} ({target['name']}) · CPU mean {cores('cpu_cores_mean')} / max {cores('cpu_cores_max')} "
        f"cores of {target['cores']} · RSS max {fmt.mib(target.get('rss_bytes_max') or 0)} · threads max "
        f"{fmt.count(target.get('threads_max') or 0)} · "
        f"open files max {fmt.count(target.get('open_files_max') or 0)} · "
        f"{fmt.count(target['sample_count'])} samples{ended}"
    )


def print_summary(
    result: RunResult,
    plan: PlanLike,
    console: Console | None = None,
    verdicts: Sequence[Any] = (),
    aborted_by: Sequence[Any] = (),
) -> None:
    """print_summary prints the summary to stdout, never cut (``summary_console``), then the
    thresholds' ``verdicts`` when it has some (a URL run with --slo)."""
    console = console or summary_console()
    console.print(render_summary(result, plan))
    for part in render_verdicts(list(verdicts), list(aborted_by)):
        console.print(part)


def _not_ok(r: Requests) -> str:
    """_not_ok is failed plus interrupted requests and the failure rate they make."""
    return f"{fmt.count(r.failed + (r.interrupted or 0))} ({fmt.percent(r.failure_rate)})"


SCENARIO_COLUMNS = (
    "scenario",
    "iterations",
    "dropped",
    "interrupted",
    "requests",
    "responses/s",
    "failed + cut off",
    "p50 ms",
    "p95 ms",
    "p99 ms",
)
"""SCENARIO_COLUMNS are the columns of the summary's per-scenario table."""

TAG_COLUMNS = (
    "scenario",
    "tag",
    "requests",
    "responses/s",
    "failed + cut off",
    "avg ms",
    "p50 ms",
    "p95 ms",
    "p99 ms",
    "max ms",
)
"""TAG_COLUMNS are the columns of the summary's per-tag table."""


def render_breakdowns(result: RunResult) -> list[Any]:
    """render_breakdowns builds the per-scenario, per-tag and per-check tables of a run."""

    def traffic(entry: Any, latencies: tuple[str, ...]) -> list[str]:
        rq, lat = entry.requests, entry.latency.all
        return [
            fmt.count(rq.sent),
            fmt.rate(entry.throughput.responses_per_s),
            _not_ok(rq),
            *(fmt.ms(getattr(lat, k)) for k in latencies),
        ]

    def check_row(c: Mapping[str, Any]) -> list[Any]:
        total = c["passes"] + c["fails"]
        return [
            c["scenario"],
            redact_text(c["tag"]),
            redact_text(c["name"]),
            fmt.count(c["passes"]),
            Text(fmt.count(c["fails"]), style="red" if c["fails"] else ""),
            fmt.percent(c["passes"] / total) if total else "no data",
        ]

    tables = (  # title, columns, the left-aligned ones, rows
        (
            "Scenarios",
            SCENARIO_COLUMNS,
            ("scenario",),
            [
                [
                    s.name,
                    f"{fmt.count(s.iterations.iterations_completed)}/{fmt.count(s.iterations.iterations_started)}",
                    fmt.count(s.iterations.iterations_dropped),
                    fmt.count(s.iterations.iterations_interrupted),
                    *traffic(s, ("p50_ms", "p95_ms", "p99_ms")),
                ]
                for s in result.scenarios
            ],
        ),
        (
            "Requests by tag",
            TAG_COLUMNS,
            ("scenario", "tag"),
            [
                [t.scenario, redact_text(t.tag), *traffic(t, ("mean_ms", "p50_ms", "p95_ms", "p99_ms", "max_ms"))]
                for t in result.tags
            ],
        ),
        (
            "Checks",
            ("scenario", "tag", "check", "passed", "failed", "rate"),
            ("scenario", "tag", "check"),
            [check_row(c) for c in result.checks],
        ),
    )
    parts: list[Any] = [summary_table(title, columns, left, rows) for title, columns, left, rows in tables if rows]
    for c in result.captures:
        if c["missing"]:
            parts.append(
                Text(
                    f"capture '{c['name']}' ({c['scenario']}, {c['tag']}) found nothing in "
                    f"{fmt.count(c['missing'])} of {fmt.count(c['found'] + c['missing'])} responses: those iterations "
                    "ended there",
                    style="yellow",
                )
            )
    for p in result.truncated_probes():
        kind = "check" if "passes" in p else "capture"
        parts.append(
            Text(
                f"{kind} '{redact_text(p['name'])}' ({p['scenario']}, {redact_text(p['tag'])}) saw only the "
                f"first MiB of {fmt.count(p['truncated'])} longer response bodies",
                style="yellow",
            )
        )
    return parts


def render_verdicts(verdicts: list[Any], aborted_by: list[Any]) -> list[Any]:
    """render_verdicts lists each threshold with its value and verdict."""
    if not verdicts:
        return []
    parts: list[Any] = [Text("Thresholds", style="bold")]
    for v in verdicts:
        parts.append(Text("  " + v.line(), style="green" if v.passed else "red"))
    for v in aborted_by:
        parts.append(
            Text(
                f"run aborted: {v.threshold.expr} [{v.threshold.scope()}] failed "
                f"(abort_on_fail, after {v.threshold.delay_s:g}s)",
                style="bold red",
            )
        )
    return parts


def print_scenario_summary(
    result: RunResult,
    plan: PlanLike,
    verdicts: list[Any],
    aborted_by: list[Any],
    console: Console | None = None,
    interrupted_in: str | None = None,
) -> None:
    """print_scenario_summary prints a scenario run: the summary, its breakdowns and thresholds
    (one line when a stop signal during setup kept the measured run from starting)."""
    console = console or summary_console()
    if interrupted_in == "setup":
        console.print(render_not_started(plan, interrupted_in))
        return
    console.print(render_summary(result, plan))
    for part in render_breakdowns(result) + render_verdicts(verdicts, aborted_by):
        console.print(part)


def _imported_latency_row(name: str, s: Mapping[str, Any]) -> list[str]:
    if s.get("count") == 0:
        return [name, *(fmt.MISSING for _ in range(8)), "0"]
    keys = ("mean_ms", "min_ms", "p50_ms", "p90_ms", "p95_ms", "p99_ms", "p99_9_ms", "max_ms")
    return [name, *(fmt.ms(s.get(k)) for k in keys), fmt.count(s.get("count"))]


def render_imported(document: Mapping[str, Any], meta: Mapping[str, Any]) -> Group:
    """render_imported builds the summary of an imported run (docs/imports.md): the tool and
    file it came from, counts, rates and latency, each figure its source did not keep shown
    as MISSING."""
    source = meta.get("source") or {}
    head = Text()
    head.append(f"{meta.get('tool')} ", style="bold cyan")
    head.append(
        redact_text(
            f"(imported from {source.get('file')}, {source.get('format')})"
            + (f" · {meta['target']}" if meta.get("target") else "")
        )
    )
    r, t = document["requests"], document["throughput"]
    counts = Table.grid(padding=(0, 2))
    counts.add_column(style="bold", no_wrap=True)
    counts.add_column(overflow="fold")
    counts.add_row(
        "Throughput",
        f"{fmt.rate(t.get('responses_per_s'))} responses/s · "
        f"{fmt.rate(t.get('successes_per_s'))} successes/s · over "
        f"{fmt.seconds(t.get('window_s'))}s",
    )
    counts.add_row("Requests", f"{fmt.count(r.get('sent'))} sent · {fmt.count(r.get('responses'))} responses")
    counts.add_row(
        "Outcome",
        Text(
            f"{fmt.percent(r['success_rate'])} succeeded ({fmt.count(r['succeeded'])}) · "
            f"{fmt.count(r['failed'])} failed: "
            f"failure rate {fmt.percent(r['failure_rate'])}",
            style="green" if r["failed"] == 0 else "red",
        ),
    )
    codes = r.get("status_codes")
    counts.add_row(
        "Status codes",
        fmt.MISSING
        if codes is None
        else " · ".join(f"{code} × {fmt.count(n)}" for code, n in sorted(codes.items())) or "none",
    )
    if r.get("failure_classes"):
        counts.add_row(
            "Failures",
            Text(
                redact_text(" · ".join(f"{k} × {fmt.count(n)}" for k, n in r["failure_classes"].items())), style="red"
            ),
        )
    table = summary_table("Latency (ms)", ("", "avg", "min", "p50", "p90", "p95", "p99", "p99.9", "max", "count"))
    table.add_row(*_imported_latency_row("all", document["latency"]["all"]))
    table.add_row(*_imported_latency_row("success", document["latency"]["success"]))
    parts: list[Any] = [head, counts, table]
    parts.extend(Text(f"note: {redact_text(n)}", style="yellow") for n in document.get("notes", []))
    parts.append(Text(f"{fmt.MISSING}: not in the source file (never estimated)", style="dim"))
    return Group(*parts)


def print_imported_summary(
    document: Mapping[str, Any], meta: Mapping[str, Any], console: Console | None = None
) -> None:
    """print_imported_summary prints an imported run's summary (``render_imported``)."""
    (console or summary_console()).print(render_imported(document, meta))


def _goodput_line(result: RunResult) -> str:
    """_goodput_line says how many responses met every goodput bound, and at what rate."""
    r, t = result.requests, result.throughput
    bounds = " and ".join(
        f"{name.removesuffix('_s')} ≤ {limit * 1000:g} ms" for name, limit in (result.goodput or {}).items()
    )
    share = r.good / r.responses if r.responses else 0.0
    return (
        f"{fmt.rate(t.good_per_s)} good responses/s · {fmt.count(r.good)} of {fmt.count(r.responses)} "
        f"({fmt.percent(share)}) met {bounds} each"
    )
