"""The open section: surge and oha at fixed arrival rates, one thread on one pinned core, and
surge's closed model in the same run for the ratio (issue 14's bars, printed, never asserted)."""

from __future__ import annotations

import math

from . import proc
from .generators import Generator
from .measure import Measurement, measure
from .sections import Context, Row, _paired_ratios, noise_note, run_line, say, skipped
from .stats import fmt, fmt_summary, summary

CLOSED_CONNS = 64  # surge's closed-model baseline, as in the cpu section
OHA_CONNS = 256  # oha opens them all up front; far above the in-flight level at 80,000/s
OPEN_CLOSED_BAR = 1.3  # open CPU/request at most 1.3 × closed, at the CPU-bar rates
CPU_BAR_RATES = (20_000, 50_000)  # where the CPU bars apply (open/closed, surge/oha)
FULL_RATE = 80_000  # where "every request sent, lag p99 < 1 ms, connections" applies
# The connections bar: surge opens no more connections than its own run needed at once
# (`peak_concurrency`: requests in flight or due and waiting for a connection, at the peak).
LAG_BAR_MS = 1.0
# Open-model runs of both tools, and nginx's worker during them, run SCHED_FIFO at this
# priority: above the VM's kernel threads (kdamond takes a core for 1-4 ms every ~0.5 s),
# whose stalls otherwise set the send lag p99. Not the closed runs: a FIFO thread that never
# blocks would starve its own process's other threads.
REALTIME_PRIORITY = 10


def inflight_need(rate: float, closed: Measurement | None) -> int | None:
    """inflight_need is the in-flight level a rate needs by Little's law, with the time a
    request holds a connection taken from the same round's closed run (its connections over its
    nginx-counted req/s): ⌈rate × CLOSED_CONNS / closed req/s⌉, at least 1. It comes from a run
    that did not fall behind, so an open run that snowballs does not raise its own bar (its
    latency and service time would); None without a usable closed run."""
    if closed is None or not closed.ok or not closed.req_per_s:
        return None
    return max(1, math.ceil(rate * CLOSED_CONNS / closed.req_per_s))


def open_figures(m: Measurement, rate: int, duration_s: int, closed: Measurement | None = None) -> dict | None:
    """open_figures is what the open section reports for one open-model run (None when the run
    failed): nginx's count against the offered rate × duration, CPU per counted request, send
    lag and latency p99, connections nginx accepted, the generator's own counts, and the
    in-flight need (from the round's closed run, when given)."""
    if not m.ok or not m.server_requests:
        return None
    rep, counted = m.report, m.server_requests
    offered = rate * duration_s
    return {
        "offered": offered,
        "counted": counted,
        "not_sent": offered - counted,
        "dropped": rep.dropped,
        "late": rep.late,
        "cpu_us_per_req": m.cpu_us_per_req,
        "engine_us_per_req": (rep.engine_cpu_s / counted * 1e6 if rep.engine_cpu_s is not None else None),
        "send_lag_p99_ms": rep.send_lag_p99_ms,
        "latency_p99_ms": rep.p99_ms,
        "connections": m.server_accepts,
        "own_connections": rep.connections_opened,
        "peak_concurrency": rep.peak_concurrency,
        # Per run: nginx's accepts at most the run's own peak of requests outstanding.
        "connections_within_peak": (
            None
            if rep.peak_concurrency is None or m.server_accepts is None
            else m.server_accepts <= rep.peak_concurrency
        ),
        "service_p99_ms": rep.service_p99_ms,
        "inflight_need": inflight_need(rate, closed),
    }


def _below(value, bar: float) -> str:
    """_below is "yes" when value < bar (strictly), "no", or "—" without a value."""
    return "—" if value is None else ("yes" if value < bar else "no")


def _detail_line(f: dict | None, kind: str) -> None:
    """_detail_line prints one open run's own figures under its run line."""
    if f is None:
        return
    surge = kind == "surge"
    say(
        f"    nginx counted {f['counted']:,} of {f['offered']:,} offered (not sent "
        f"{f['not_sent']:,}), connections opened {fmt(f['connections'], ',')}"
        + (
            f" (surge's count {fmt(f['own_connections'], ',')}), dropped {fmt(f['dropped'], ',')},"
            f" late {fmt(f['late'], ',')}, peak outstanding {fmt(f['peak_concurrency'], ',')},"
            f" engine CPU {fmt(f['engine_us_per_req'], '.2f')} µs/req"
            if surge
            else ""
        )
        + f", send lag p99 {fmt(f['send_lag_p99_ms'], ',.3f') + ' ms' if surge else 'n/a'}"
        f", latency p99 {fmt(f['latency_p99_ms'], ',.3f')} ms"
        + (f", service time p99 {fmt(f['service_p99_ms'], ',.3f')} ms" if surge else "")
    )


def _jobs(ctx: Context, rates: list[int]) -> list[tuple[Generator, int | None]]:
    """_jobs is one round's runs in order: surge closed, then surge and oha at each rate."""
    jobs: list[tuple[Generator, int | None]] = [(ctx.surge, None)]
    for rate in rates:
        jobs += [(g, rate) for g in (ctx.surge, ctx.oha) if g]
    return jobs


def section_open(ctx: Context) -> dict:
    """section_open: surge (and oha) in the open model at each of ctx.open_rates, one thread on
    the generator core, and surge's closed model in the same rounds for the open/closed ratio."""
    rates, nominal = ctx.open_rates, ctx.dur(10, 3)
    say(
        f"\n## open: open model at {', '.join(f'{r:,}' for r in rates)} req/s, 1 thread, "
        f"{nominal} s each, surge and oha, + surge closed ({CLOSED_CONNS} conns) for the ratio; "
        f"{ctx.rounds} rounds, order alternating"
    )
    name = "open model: CPU µs/request, surge open vs closed"
    if not ctx.nginx:
        return skipped(ctx, "open", ctx.nginx_why, name)
    if not ctx.surge or ctx.surge.kind != "surge":
        return skipped(ctx, "open", f"surge not available ({ctx.surge_why or 'A/A run'})", name)
    if not ctx.oha:
        say(f"  oha half SKIPPED: {ctx.oha_why}")
        ctx.notes.append(f"open: oha not measured: {ctx.oha_why}")
    url = ctx.nginx.url
    realtime_why_not = proc.realtime_why_not()
    realtime = None if realtime_why_not else REALTIME_PRIORITY
    say(
        f"  open-model runs and nginx's worker during them: SCHED_FIFO priority {REALTIME_PRIORITY}"
        if realtime
        else f"  open-model runs at normal priority: {realtime_why_not}"
    )
    if not realtime:
        ctx.notes.append(f"open: not run SCHED_FIFO: {realtime_why_not}")
    say(
        f"  surge: `surge run URL -r RATE -d {nominal}s --threads 1 --json --no-save` (its default "
        f"connections up front and in-flight cap); closed: `surge run URL -c {CLOSED_CONNS} -d "
        f"{nominal}s --threads 1 --json --no-save`"
    )
    if ctx.oha:
        say(
            f"  oha:   `oha -q RATE -z {nominal}s -c {OHA_CONNS} --worker-threads 1 "
            "--latency-correction --no-tui --output-format json URL` (latency from the intended "
            "send time, like surge's; oha reports no send lag)"
        )

    def argv(g: Generator, rate: int | None) -> list[str]:
        if rate is None:
            return [*g.closed_argv(url, CLOSED_CONNS, nominal), "--no-save"]
        return g.open_argv(url, rate, nominal, OHA_CONNS)

    def key(g: Generator, rate: int | None) -> str:
        return "closed" if rate is None else f"{g.name}@{rate}"

    warm = measure(
        ctx.surge,
        [*ctx.surge.closed_argv(url, CLOSED_CONNS, 1), "--no-save"],
        ctx.nginx,
        ctx.gen_core,
        ctx.server_core,
        1,
        wait_quiet_s=ctx.wait_quiet_s,
    )
    run_line("warm-up surge closed (discarded)", warm)
    jobs = _jobs(ctx, rates)
    runs: dict[str, list[Measurement]] = {key(g, r): [] for g, r in jobs}
    for rnd in range(ctx.rounds):
        for g, rate in jobs if rnd % 2 == 0 else list(reversed(jobs)):
            rt = realtime if rate is not None else None
            if rt and ctx.nginx.worker_pid:
                proc.set_realtime(ctx.nginx.worker_pid, rt)
            try:
                m = measure(
                    g,
                    argv(g, rate),
                    ctx.nginx,
                    ctx.gen_core,
                    ctx.server_core,
                    nominal,
                    wait_quiet_s=ctx.wait_quiet_s,
                    realtime_priority=rt,
                )
            finally:
                if rt and ctx.nginx.worker_pid:
                    proc.set_realtime(ctx.nginx.worker_pid, None)
            runs[key(g, rate)].append(m)
            run_line(f"round {rnd + 1} {key(g, rate)}", m)
            if rate is not None:
                _detail_line(open_figures(m, rate, nominal), g.kind)
    noise_note(ctx, "open", [m for v in runs.values() for m in v])
    return _report(ctx, rates, nominal, runs)


def _report(ctx: Context, rates: list[int], nominal: int, runs: dict[str, list[Measurement]]) -> dict:
    """_report prints the per-rate summaries, adds the table rows and builds the JSON record."""
    closed = runs["closed"]
    closed_cpu = summary(m.cpu_us_per_req for m in closed if m.ok)
    closed_engine = summary(
        m.report.engine_cpu_s / m.server_requests * 1e6
        for m in closed
        if m.ok and m.server_requests and m.report.engine_cpu_s is not None
    )
    say(
        f"  surge closed ({CLOSED_CONNS} conns): {fmt_summary(closed_cpu, '.2f')} µs/req "
        f"(engine's own CPU {fmt_summary(closed_engine, '.2f')})   (median [min–max])"
    )
    result: dict = {
        "rates": rates,
        "duration_s": nominal,
        "closed_connections": CLOSED_CONNS,
        "oha_connections": OHA_CONNS if ctx.oha else None,
        "runs": {k: [m.to_json() for m in v] for k, v in runs.items()},
        "closed": {"cpu_us_per_req": closed_cpu, "engine_us_per_req": closed_engine},
        "per_rate": {},
    }
    for rate in rates:
        s_runs = runs[f"{ctx.surge.name}@{rate}"]
        o_runs = runs.get(f"{ctx.oha.name}@{rate}", []) if ctx.oha else []
        figs = {
            gen: [
                open_figures(m, rate, nominal, closed[i] if i < len(closed) else None) for i, m in enumerate(gen_runs)
            ]
            for gen, gen_runs in (("surge", s_runs), ("oha", o_runs))
        }
        summ = {
            gen: {
                k: summary(f[k] for f in fl if f)
                for k in (
                    "counted",
                    "not_sent",
                    "dropped",
                    "cpu_us_per_req",
                    "engine_us_per_req",
                    "send_lag_p99_ms",
                    "latency_p99_ms",
                    "service_p99_ms",
                    "connections",
                    "inflight_need",
                    "peak_concurrency",
                )
            }
            for gen, fl in figs.items()
        }
        open_closed = summary(_paired_ratios(closed, s_runs, "cpu_us_per_req"))
        surge_oha = summary(_paired_ratios(o_runs, s_runs, "cpu_us_per_req")) if o_runs else None
        result["per_rate"][str(rate)] = {
            "offered": rate * nominal,
            "summary": summ,
            "ratio_open_closed": open_closed,
            "ratio_surge_oha": surge_oha,
        }
        s, o = summ["surge"], summ["oha"]

        def col(d: dict, k: str, spec: str, o: dict = o) -> str:
            return fmt_summary(d[k], spec) if d[k] else "not measured" if not ctx.oha and d is o else "—"

        cpu_bar = rate in CPU_BAR_RATES
        full = rate == FULL_RATE
        say(f"  {rate:,}/s (offered {rate * nominal:,}):")
        for label, d in (("surge", s), ("oha", o)):
            if d is o and not ctx.oha:
                continue
            say(
                f"    {label:<5} counted {col(d, 'counted', ',.0f')}, not sent "
                f"{col(d, 'not_sent', ',.0f')}, CPU {col(d, 'cpu_us_per_req', '.2f')} µs/req, "
                f"send lag p99 {col(d, 'send_lag_p99_ms', ',.3f') + ' ms' if d is s else 'n/a'}, "
                f"latency p99 {col(d, 'latency_p99_ms', ',.3f')} ms, connections "
                f"{col(d, 'connections', ',.0f')}"
                + (
                    f", dropped {col(d, 'dropped', ',.0f')}, engine CPU {col(d, 'engine_us_per_req', '.2f')} µs/req"
                    if d is s
                    else ""
                )
            )
        say(
            f"    ratio surge open/closed CPU µs/req, per round: {fmt_summary(open_closed, '.3f')}"
            + (f" (bar ≤ {OPEN_CLOSED_BAR})" if cpu_bar else "")
            + f"; surge/oha: {fmt_summary(surge_oha, '.3f') if ctx.oha else 'oha not measured'}"
            + (" (bar < 1)" if cpu_bar else "")
        )
        if full:
            within = [f["connections_within_peak"] for f in figs["surge"] if f]
            say(
                f"    bars at {FULL_RATE:,}/s: every request sent (not sent ≤ 0 in every round), "
                f"send lag p99 < {LAG_BAR_MS:g} ms, connections ≤ the run's own peak of requests "
                f"outstanding ({col(s, 'peak_concurrency', ',.0f')}) in every round: "
                f"{'yes' if within and all(within) else 'no' if within else '—'}; steady-state "
                f"need by Little's law (⌈rate × {CLOSED_CONNS} / closed req/s⌉, same round): "
                f"{col(s, 'inflight_need', ',.0f')}"
            )
        _rows(ctx, rate, closed_cpu, s, o, open_closed, surge_oha, col, cpu_bar, full, figs["surge"])
    return result


def _rows(
    ctx: Context,
    rate: int,
    closed_cpu,
    s: dict,
    o: dict,
    open_closed,
    surge_oha,
    col,
    cpu_bar: bool,
    full: bool,
    surge_figs: list,
) -> None:
    """_rows adds one rate's lines to the Markdown table."""
    within = [f["connections_within_peak"] for f in surge_figs if f and f["connections_within_peak"] is not None]

    def med(x):
        return x and x["median"]

    worst_not_sent = s["not_sent"] and s["not_sent"]["max"]
    lag, need = med(s["send_lag_p99_ms"]), med(s["inflight_need"])
    ctx.rows += [
        Row(
            f"open {rate:,}/s: CPU µs/request, surge closed ({CLOSED_CONNS} conns) vs open",
            fmt_summary(closed_cpu, ".2f"),
            col(s, "cpu_us_per_req", ".2f"),
            fmt_summary(open_closed, ".3f"),
            f"≤ {OPEN_CLOSED_BAR}" if cpu_bar else "—",
            ctx.verdict(med(open_closed), OPEN_CLOSED_BAR, below=True) if cpu_bar else "—",
        ),
        Row(
            f"open {rate:,}/s: CPU µs/request, oha vs surge",
            col(o, "cpu_us_per_req", ".2f"),
            col(s, "cpu_us_per_req", ".2f"),
            fmt_summary(surge_oha, ".3f"),
            "< 1" if cpu_bar else "—",
            _below(med(surge_oha), 1.0) if cpu_bar else "—",
        ),
        Row(
            f"open {rate:,}/s: requests counted by nginx",
            col(o, "counted", ",.0f"),
            col(s, "counted", ",.0f"),
            "—",
            "—",
            "—",
        ),
        Row(
            f"open {rate:,}/s: not sent (offered − nginx count); surge's dropped",
            col(o, "not_sent", ",.0f"),
            f"{col(s, 'not_sent', ',.0f')}; dropped {col(s, 'dropped', ',.0f')}",
            "—",
            "0 in every round" if full else "—",
            ("—" if worst_not_sent is None else "yes" if worst_not_sent <= 0 else "no") if full else "—",
        ),
        Row(
            f"open {rate:,}/s: send lag p99 ms",
            "n/a (oha has none)",
            col(s, "send_lag_p99_ms", ",.3f"),
            "—",
            f"< {LAG_BAR_MS:g} ms" if full else "—",
            _below(lag, LAG_BAR_MS) if full else "—",
        ),
        Row(
            f"open {rate:,}/s: latency p99 ms (from the intended send time)",
            col(o, "latency_p99_ms", ",.3f"),
            col(s, "latency_p99_ms", ",.3f"),
            "—",
            "—",
            "—",
        ),
        Row(
            f"open {rate:,}/s: connections opened (nginx accepts); surge's peak of requests outstanding",
            col(o, "connections", ",.0f"),
            f"{col(s, 'connections', ',.0f')}; peak {col(s, 'peak_concurrency', ',.0f')}",
            "—",
            "≤ the run's peak, every round" if full else "—",
            ("—" if not within else "yes" if all(within) else "no") if full else "—",
        ),
        Row(
            f"open {rate:,}/s: steady-state in-flight need (Little's law from the closed run)",
            "—",
            fmt(need, ",.0f"),
            "—",
            "—",
            "—",
        ),
    ]
