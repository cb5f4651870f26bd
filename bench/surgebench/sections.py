"""The benchmark sections: cpu, conns, rate, target, template (open is in open_model.py)."""

from __future__ import annotations

import dataclasses

from . import plans, proc
from .generators import Generator
from .measure import Measurement, measure
from .stats import fmt, fmt_summary, steady_rate, summary
from .target import CountedTarget, TargetProc

NOISY = 0.10  # share of a measured core used by other processes that marks a run as noisy


@dataclasses.dataclass
class Row:
    """Row is one line of the final Markdown table."""

    measurement: str
    baseline: str
    surge: str
    ratio: str
    bar: str
    meets: str


@dataclasses.dataclass
class Context:
    """Context is what every section needs: tools found, cores, durations, the output."""

    quick: bool
    rounds: int
    gen_core: int
    server_core: int
    wrk: Generator | None
    surge: Generator | None
    surge_why: str
    nginx: object | None
    nginx_why: str
    target_argv: list[str] | None
    target_why: str
    rate: int
    rows: list[Row] = dataclasses.field(default_factory=list)
    notes: list[str] = dataclasses.field(default_factory=list)
    startup_cpu_s: float | None = None  # CPU of `surge run --help`, set by surge_startup
    wait_quiet_s: float = 0.0  # before each run, wait up to this long for quiet cores
    run_plan: str | None = None  # the engine's run_plan example (template section)
    run_plan_note: str = ""  # how it was found or built, or why it is missing
    oha: Generator | None = None  # the open section's peer
    oha_why: str = ""  # why oha is missing
    open_rates: list[int] = dataclasses.field(default_factory=lambda: [20_000, 50_000, 80_000])

    def dur(self, full: int, quick: int) -> int:
        """dur is the run length in seconds for this mode."""
        return quick if self.quick else full

    @property
    def subject(self) -> str:
        """subject is the name in surge's column: "surge", or "wrk-AA" in an A/A run."""
        return self.surge.name if self.surge else "surge"

    def verdict(self, value, bar: float, below: bool, surge_result: bool = True) -> str:
        """verdict is "yes"/"no" against the bar, "—" without a value, "n/a" in an A/A run."""
        if value is None:
            return "—"
        if surge_result and self.surge and self.surge.kind != "surge":
            return "n/a (A/A)"
        return "yes" if (value <= bar if below else value >= bar) else "no"


def say(text: str = "") -> None:
    """say prints a line of the benchmark's log at once."""
    print(text, flush=True)


def skipped(ctx: Context, name: str, why: str, measurement: str) -> dict:
    """skipped prints and records why a section did not run."""
    say(f"  SKIPPED: {why}")
    ctx.rows.append(Row(measurement, "—", "not yet measured", "—", "—", "—"))
    ctx.notes.append(f"{name}: not measured: {why}")
    return {"skipped": why}


def run_line(label: str, m: Measurement) -> None:
    """run_line prints one measured run with every raw number that goes into the ratios."""
    errors = {k: v for k, v in m.report.errors.items() if v}
    state = (
        "ok"
        if m.ok
        else (
            f"FAILED rc={m.returncode}{' timeout' if m.timed_out else ''} "
            f"{m.report.parse_error or ''} {m.stderr_tail[-200:]!r}"
        )
    )
    say(
        f"  {label:<26} {fmt(m.req_per_s):>9} req/s  {fmt(m.requests):>10} req  "
        f"{fmt(m.cpu_us_per_req, '.2f'):>6} µs/req  CPU {m.gen_cpu_s:6.2f}s "
        f"({m.gen_util:4.0%})  RSS {m.peak_rss_mb:6.1f} MB  "
        f"server {fmt(m.server_util, '4.0%')} {fmt(m.server_us_per_req, '.2f')} µs/req  "
        f"others: gen-core {fmt(m.other_load_gen_core, '.0%')} "
        f"srv-core {fmt(m.other_load_server_core, '.0%')}"
        + (f"  conns {m.peak_active}" if m.peak_active is not None else "")
        + (f"  errors {errors}" if errors else "")
        + (f"  [saturated: {m.saturated}]" if m.saturated else "")
        + (f"  [NOISY: {m.other_load:.0%} of a core used by others]" if m.other_load >= NOISY else "")
        + (f"  [{state}]" if not m.ok else "")
    )


def noise_note(ctx: Context, section: str, runs: list[Measurement]) -> None:
    """noise_note prints and records how many runs shared a measured core with other work."""
    noisy = [m for m in runs if m.other_load >= NOISY]
    if noisy:
        text = (
            f"{section}: {len(noisy)} of {len(runs)} runs had ≥ {NOISY:.0%} of a measured "
            f"core used by other processes (worst {max(m.other_load for m in noisy):.0%}); "
            "a quieter re-run is worth more than these numbers"
        )
        say(f"  NOTE {text}")
        ctx.notes.append(text)


def _gen_summary(runs: list[Measurement]) -> dict:
    ok = [m for m in runs if m.ok]
    return {
        "req_per_s": summary(m.req_per_s for m in ok),
        "cpu_us_per_req": summary(m.cpu_us_per_req for m in ok),
        "peak_rss_mb": summary(m.peak_rss_mb for m in ok),
        "gen_util": summary(m.gen_util for m in ok),
        "failed_runs": len(runs) - len(ok),
    }


def surge_startup(ctx: Context) -> dict | None:
    """surge_startup is the CPU and RSS of `surge run --help`: the Python start-up cost that is
    part of every surge measurement here (reported, not subtracted)."""
    if not ctx.surge or ctx.surge.kind != "surge":
        return None
    res = proc.run_measured([ctx.surge.binary, "run", "--help"], {ctx.gen_core}, timeout_s=60)
    out = {"cpu_s": res.cpu_s, "peak_rss_mb": res.maxrss_mb, "wall_s": res.wall_s}
    ctx.startup_cpu_s = res.cpu_s if res.returncode == 0 else None
    say(
        f"  surge start-up (`surge run --help`): CPU {res.cpu_s * 1e3:.0f} ms, "
        f"RSS {res.maxrss_mb:.1f} MB, wall {res.wall_s * 1e3:.0f} ms (included in every surge run)"
    )
    return out


def _interleaved(
    ctx: Context, section: str, gens: list[Generator], argv_for, nominal: int, rounds: int, server
) -> dict[str, list[Measurement]]:
    """_interleaved runs each generator once per round, reversing the order every round."""
    runs: dict[str, list[Measurement]] = {g.name: [] for g in gens}
    for r in range(rounds):
        order = gens if r % 2 == 0 else list(reversed(gens))
        for g in order:
            m = measure(g, argv_for(g), server, ctx.gen_core, ctx.server_core, nominal, wait_quiet_s=ctx.wait_quiet_s)
            runs[g.name].append(m)
            run_line(f"round {r + 1} {g.name}", m)
    noise_note(ctx, section, [m for v in runs.values() for m in v])
    return runs


def _paired_ratios(a: list[Measurement], b: list[Measurement], key: str, quiet_only: bool = False) -> list[float]:
    """_paired_ratios is b/a for each round where both ran, on attribute key (only rounds in
    which neither run shared a measured core with other work, if quiet_only)."""
    out = []
    for ma, mb in zip(a, b, strict=False):
        va, vb = getattr(ma, key), getattr(mb, key)
        if quiet_only and max(ma.other_load, mb.other_load) >= NOISY:
            continue
        if ma.ok and mb.ok and va and vb is not None:
            out.append(vb / va)
    return out


def section_cpu(ctx: Context) -> dict:
    """section_cpu: req/s and generator CPU per request, wrk vs surge, 64 connections."""
    conns, nominal = 64, ctx.dur(8, 3)
    say(f"\n## cpu: closed loop, {conns} connections, 1 thread, {nominal} s, {ctx.rounds} rounds, order alternating")
    name = f"generator CPU µs/request ({conns} conns)"
    if not ctx.nginx:
        return skipped(ctx, "cpu", ctx.nginx_why, name)
    if not ctx.wrk:
        return skipped(ctx, "cpu", "wrk not found (apt-get install wrk)", name)
    url = ctx.nginx.url
    gens = [ctx.wrk] + ([ctx.surge] if ctx.surge else [])
    if not ctx.surge:
        say(f"  surge not available ({ctx.surge_why}): measuring wrk alone")
    warm = measure(
        ctx.wrk,
        ctx.wrk.closed_argv(url, conns, 1),
        ctx.nginx,
        ctx.gen_core,
        ctx.server_core,
        1,
        wait_quiet_s=ctx.wait_quiet_s,
    )
    run_line("warm-up wrk (discarded)", warm)
    runs = _interleaved(ctx, "cpu", gens, lambda g: g.closed_argv(url, conns, nominal), nominal, ctx.rounds, ctx.nginx)
    result = {
        "connections": conns,
        "duration_s": nominal,
        "url": url,
        "runs": {k: [m.to_json() for m in v] for k, v in runs.items()},
        "summary": {k: _gen_summary(v) for k, v in runs.items()},
    }
    w = result["summary"][ctx.wrk.name]
    s = result["summary"].get(ctx.surge.name) if ctx.surge else None
    cpu_ratio = rps_ratio = rss_ratio = None
    if ctx.surge:
        sr = runs[ctx.surge.name]
        cpu_ratio = summary(_paired_ratios(runs[ctx.wrk.name], sr, "cpu_us_per_req"))
        rps_ratio = summary(_paired_ratios(runs[ctx.wrk.name], sr, "req_per_s"))
        rss_ratio = summary(_paired_ratios(runs[ctx.wrk.name], sr, "peak_rss_mb"))
        result["ratio_cpu_us_per_req"] = cpu_ratio
        quiet = summary(_paired_ratios(runs[ctx.wrk.name], sr, "cpu_us_per_req", quiet_only=True))
        result["ratio_cpu_us_per_req_quiet_rounds"] = quiet
        result["ratio_req_per_s"] = rps_ratio
        if ctx.startup_cpu_s:
            no_start = summary(
                (ms.gen_cpu_s - ctx.startup_cpu_s) / ms.requests * 1e6 / mw.cpu_us_per_req
                for mw, ms in zip(runs[ctx.wrk.name], sr, strict=False)
                if mw.ok and ms.ok and ms.requests and mw.cpu_us_per_req
            )
            result["ratio_cpu_us_per_req_without_startup"] = no_start
    missing = "not yet measured"
    if not ctx.surge:
        ctx.notes.append(f"cpu: surge not measured: {ctx.surge_why}")
    sv = (lambda k, spec: fmt_summary(s[k], spec)) if s else (lambda k, spec: missing)
    say(
        f"  wrk   : {fmt_summary(w['req_per_s'])} req/s, {fmt_summary(w['cpu_us_per_req'], '.2f')}"
        f" µs/req, RSS {fmt_summary(w['peak_rss_mb'], '.1f')} MB   (median [min–max])"
    )
    if s:
        say(
            f"  {ctx.surge.name:<6}: {sv('req_per_s', ',.0f')} req/s, {sv('cpu_us_per_req', '.2f')}"
            f" µs/req, RSS {sv('peak_rss_mb', '.1f')} MB"
        )
        say(
            f"  ratio {ctx.subject}/wrk CPU µs/request, per round: {fmt_summary(cpu_ratio, '.3f')} "
            f"(spread {fmt(cpu_ratio and cpu_ratio['spread_pct'], '.1f')} %); bar ≤ 0.9"
        )
        say(
            f"  same ratio over quiet rounds only (others < {NOISY:.0%} on both cores): "
            + (f"{fmt_summary(quiet, '.3f')} over {quiet['n']} rounds" if quiet else "no quiet round")
        )
    med = cpu_ratio["median"] if cpu_ratio else None
    row0 = len(ctx.rows)
    ctx.rows += [
        Row(
            name,
            fmt_summary(w["cpu_us_per_req"], ".2f"),
            sv("cpu_us_per_req", ".2f"),
            fmt_summary(cpu_ratio, ".3f"),
            "≤ 0.9",
            ctx.verdict(med, 0.9, below=True),
        ),
        Row(
            f"req/s, server-counted ({conns} conns)",
            fmt_summary(w["req_per_s"]),
            sv("req_per_s", ",.0f"),
            fmt_summary(rps_ratio, ".3f"),
            "—",
            "—",
        ),
        Row(
            f"peak RSS MB ({conns} conns)",
            fmt_summary(w["peak_rss_mb"], ".1f"),
            sv("peak_rss_mb", ".1f"),
            fmt_summary(rss_ratio, ".2f"),
            "—",
            "—",
        ),
    ]
    quiet = result.get("ratio_cpu_us_per_req_quiet_rounds")
    if quiet:
        ctx.rows.insert(
            row0 + 1,
            Row(
                f"… rounds with others < {NOISY:.0%} only ({quiet['n']})",
                "—",
                "—",
                fmt_summary(quiet, ".3f"),
                "≤ 0.9",
                ctx.verdict(quiet["median"], 0.9, below=True),
            ),
        )
    if result.get("ratio_cpu_us_per_req_without_startup"):
        no_start = result["ratio_cpu_us_per_req_without_startup"]
        say(
            f"  same ratio less surge's start-up CPU ({ctx.startup_cpu_s:.2f} s, `surge run --help`"
            f"): {fmt_summary(no_start, '.3f')} (information only; the bar is on the whole process)"
        )
        ctx.rows.insert(
            row0 + 1,
            Row("… less surge's Python start-up CPU (information)", "—", "—", fmt_summary(no_start, ".3f"), "—", "—"),
        )
    return result


def section_conns(ctx: Context) -> dict:
    """section_conns: 10,000 keep-alive connections from one thread; RSS and req/s."""
    conns, nominal = 10_000, ctx.dur(10, 4)
    rounds = 1 if ctx.quick else 2
    say(f"\n## conns: closed loop, {conns:,} connections, 1 thread, {nominal} s, {rounds} rounds")
    name = f"peak RSS MB ({conns:,} conns)"
    if not ctx.nginx:
        return skipped(ctx, "conns", ctx.nginx_why, name)
    soft, hard = proc.raise_nofile()
    say(f"  file-descriptor limit: soft raised to {soft}, hard {hard} (children inherit it)")
    if hard != -1 and hard < conns + 100:
        return skipped(ctx, "conns", f"hard RLIMIT_NOFILE {hard} < {conns + 100}", name)
    gens = [g for g in (ctx.wrk, ctx.surge) if g]
    if not gens:
        return skipped(ctx, "conns", "neither wrk nor surge is available", name)
    for label, g in (("wrk", ctx.wrk), ("surge", ctx.surge)):
        if not g:
            say(f"  {label} not available: " + (ctx.surge_why if label == "surge" else "not found"))
    url = ctx.nginx.url
    runs = _interleaved(ctx, "conns", gens, lambda g: g.closed_argv(url, conns, nominal), nominal, rounds, ctx.nginx)
    result = {
        "connections": conns,
        "duration_s": nominal,
        "runs": {k: [m.to_json() for m in v] for k, v in runs.items()},
        "summary": {},
    }
    for g in gens:
        ok = [m for m in runs[g.name] if m.ok]
        result["summary"][g.name] = {
            **_gen_summary(runs[g.name]),
            "peak_server_connections": max((m.peak_active or 0 for m in ok), default=None),
        }
    w = result["summary"].get(ctx.wrk.name) if ctx.wrk else None
    s = result["summary"].get(ctx.surge.name) if ctx.surge else None
    missing = "not yet measured"
    if not ctx.surge:
        ctx.notes.append(f"conns: surge not measured: {ctx.surge_why}")

    def col(d, key, spec):
        return fmt_summary(d[key], spec) if d else missing

    rss_med = s["peak_rss_mb"]["median"] if s and s["peak_rss_mb"] else None
    ratio = f"{rss_med / w['peak_rss_mb']['median']:.2f}" if rss_med and w and w["peak_rss_mb"] else "—"
    ctx.rows += [
        Row(
            name,
            col(w, "peak_rss_mb", ".1f"),
            col(s, "peak_rss_mb", ".1f"),
            ratio,
            "surge < 200 MB",
            ctx.verdict(rss_med, 200, below=True),
        ),
        Row(
            f"req/s, server-counted ({conns:,} conns)",
            col(w, "req_per_s", ",.0f"),
            col(s, "req_per_s", ",.0f"),
            "—",
            "—",
            "—",
        ),
        Row(
            f"generator CPU µs/request ({conns:,} conns)",
            col(w, "cpu_us_per_req", ".2f"),
            col(s, "cpu_us_per_req", ".2f"),
            "—",
            "—",
            "—",
        ),
        Row(
            "connections open at the server (peak, sampled 1/s)",
            fmt(w and w["peak_server_connections"], ","),
            fmt(s and s["peak_server_connections"], ",", missing),
            "—",
            f"{conns:,}",
            "—",
        ),
    ]
    return result


def section_rate(ctx: Context) -> dict:
    """section_rate: open model at a fixed arrival rate; achieved rate counted by nginx."""
    rate, nominal = ctx.rate, ctx.dur(30, 10)
    say(f"\n## rate: open model, {rate:,} req/s requested, {nominal} s (surge only)")
    name = f"achieved rate, server-counted ({rate:,} req/s asked)"
    if not ctx.nginx:
        return skipped(ctx, "rate", ctx.nginx_why, name)
    if not ctx.surge or ctx.surge.kind != "surge":
        return skipped(ctx, "rate", f"surge not available ({ctx.surge_why})", name)
    url = ctx.nginx.url
    m = measure(
        ctx.surge,
        ctx.surge.rate_argv(url, rate, nominal),
        ctx.nginx,
        ctx.gen_core,
        ctx.server_core,
        nominal,
        sample_interval_s=0.5,
        wait_quiet_s=ctx.wait_quiet_s,
    )
    run_line("surge open model", m)
    noise_note(ctx, "rate", [m])
    steady = steady_rate(m.samples)
    span = m.report.configured_s or nominal  # the schedule spans the duration asked for
    total = m.server_requests / span if m.server_requests else None
    reported = m.report.requests_per_s

    def err(v):
        return (v - rate) / rate * 100 if v is not None else None

    result = {
        "requested_rate": rate,
        "duration_s": nominal,
        "run": m.to_json(),
        "steady": steady,
        "server_total_over_duration": total,
        "surge_reported": reported,
        "error_pct": {
            "steady": err(steady and steady["rate"]),
            "server_total": err(total),
            "surge_reported": err(reported),
        },
    }
    e = result["error_pct"]
    if steady:
        say(
            f"  server-side steady rate: {steady['rate']:,.1f} req/s over {steady['window_s']:.1f} s"
            f" (per-0.5 s intervals {steady['interval_min']:,.0f}–{steady['interval_max']:,.0f}); "
            f"error {fmt(e['steady'], '+.3f')} %"
        )
    say(
        f"  surge sent {fmt(m.report.sent, ',')}, completed {fmt(m.report.requests, ',')}; "
        f"nginx counted {fmt(m.server_requests, ',')}; surge: late "
        f"{fmt(m.report.errors.get('late', 0), ',')}, dropped {fmt(m.report.errors.get('dropped', 0), ',')}, "
        f"p99 {fmt(m.report.p99_ms, '.2f')} ms (from intended send time)"
    )
    say(
        f"  nginx count / {span:g} s: {fmt(total, ',.1f')} req/s, error "
        f"{fmt(e['server_total'], '+.3f')} %; surge reports {fmt(reported, ',.1f')} req/s, "
        f"error {fmt(e['surge_reported'], '+.3f')} %; bar ±0.5 %"
    )
    ctx.rows += [
        Row(
            name + ", steady part",
            f"{rate:,}",
            fmt(steady and steady["rate"], ",.1f"),
            f"{fmt(e['steady'], '+.3f')} %",
            "±0.5 %",
            ctx.verdict(e["steady"] and abs(e["steady"]), 0.5, below=True),
        ),
        Row(
            name + ", whole run / duration",
            f"{rate:,}",
            fmt(total, ",.1f"),
            f"{fmt(e['server_total'], '+.3f')} %",
            "±0.5 %",
            ctx.verdict(e["server_total"] and abs(e["server_total"]), 0.5, below=True),
        ),
        Row(
            "rate surge reports (throughput.sent_per_s)",
            f"{rate:,}",
            fmt(reported, ",.1f"),
            f"{fmt(e['surge_reported'], '+.3f')} %",
            "—",
            "—",
        ),
    ]
    return result


def section_target(ctx: Context) -> dict:
    """section_target: wrk against the reference target vs against nginx, server on one core."""
    conns, nominal = 64, ctx.dur(8, 3)
    say(
        f"\n## target: wrk -t1 -c{conns} {nominal} s against surge-target and nginx, "
        f"each server on core {ctx.server_core}, {ctx.rounds} rounds"
    )
    name = "wrk req/s against /health: nginx vs surge-target"
    if not ctx.wrk:
        return skipped(ctx, "target", "wrk not found", name)
    if not ctx.nginx:
        return skipped(ctx, "target", ctx.nginx_why, name)
    if not ctx.target_argv:
        return skipped(ctx, "target", ctx.target_why, name)
    say(f"  target command: {' '.join(ctx.target_argv)} (pinned to core {ctx.server_core})")
    try:
        tgt = TargetProc(ctx.target_argv, ctx.server_core)
        tgt.start()
    except (OSError, RuntimeError) as e:
        return skipped(ctx, "target", f"target did not start: {e}", name)
    runs: dict[str, list[Measurement]] = {"nginx": [], "surge-target": []}
    try:
        servers = [("nginx", ctx.nginx), ("surge-target", tgt)]
        for r in range(ctx.rounds):
            for label, srv in servers if r % 2 == 0 else list(reversed(servers)):
                m = measure(
                    ctx.wrk,
                    ctx.wrk.closed_argv(srv.url, conns, nominal),
                    srv,
                    ctx.gen_core,
                    ctx.server_core,
                    nominal,
                    wait_quiet_s=ctx.wait_quiet_s,
                )
                runs[label].append(m)
                run_line(f"round {r + 1} wrk→{label}", m)
    finally:
        tgt.stop()
    noise_note(ctx, "target", runs["nginx"] + runs["surge-target"])

    def wrk_rps(m: Measurement):  # wrk's own count, so both servers are counted alike
        return m.report.requests / m.duration_s if m.ok and m.report.requests else None

    def server_us(m: Measurement):  # server CPU per wrk-counted request
        if not m.ok or m.server_cpu_s is None or not m.report.requests:
            return None
        return m.server_cpu_s / m.report.requests * 1e6

    def per_round(value, invert: bool = False, quiet_only: bool = False):
        out = []
        for n, t in zip(runs["nginx"], runs["surge-target"], strict=False):
            if quiet_only and max(n.other_load, t.other_load) >= NOISY:
                continue
            vn, vt = value(n), value(t)
            if vn and vt:
                out.append(vn / vt if invert else vt / vn)
        return summary(out)

    summ = {
        k: {"wrk_req_per_s": summary(wrk_rps(m) for m in v), "server_us_per_req": summary(server_us(m) for m in v)}
        for k, v in runs.items()
    }
    ratios = per_round(wrk_rps)
    quiet = per_round(wrk_rps, quiet_only=True)
    per_core = per_round(server_us, invert=True)  # nginx µs/req ÷ target µs/req
    wrk_bound = sum(1 for m in runs["surge-target"] if m.gen_util >= 0.9)
    say(
        f"  req/s nginx {fmt_summary(summ['nginx']['wrk_req_per_s'])}, surge-target "
        f"{fmt_summary(summ['surge-target']['wrk_req_per_s'])}; ratio target/nginx "
        f"{fmt_summary(ratios, '.3f')} (bar ≥ 0.8); quiet rounds only: "
        + (f"{fmt_summary(quiet, '.3f')} over {quiet['n']}" if quiet else "none")
    )
    say(
        f"  server CPU µs/request nginx {fmt_summary(summ['nginx']['server_us_per_req'], '.2f')}, "
        f"surge-target {fmt_summary(summ['surge-target']['server_us_per_req'], '.2f')}: requests per "
        f"server CPU-second, target/nginx {fmt_summary(per_core, '.3f')}"
    )
    if wrk_bound:
        say(
            f"  NOTE wrk ran at ≥ 90 % of its core in {wrk_bound} of {len(runs['surge-target'])} "
            "runs against surge-target: req/s there is bounded by the generator, and the CPU "
            "per request ratio is the better measure of the target's capacity"
        )
    ctx.rows += [
        Row(
            name,
            fmt_summary(summ["nginx"]["wrk_req_per_s"]),
            fmt_summary(summ["surge-target"]["wrk_req_per_s"]),
            fmt_summary(ratios, ".3f"),
            "≥ 0.8",
            ctx.verdict(ratios and ratios["median"], 0.8, below=False, surge_result=False),
        ),
    ]
    if quiet:
        ctx.rows.append(
            Row(
                f"… rounds with others < {NOISY:.0%} only ({quiet['n']})",
                "—",
                "—",
                fmt_summary(quiet, ".3f"),
                "≥ 0.8",
                ctx.verdict(quiet["median"], 0.8, below=False, surge_result=False),
            )
        )
    ctx.rows.append(
        Row(
            "server CPU µs/request: nginx vs surge-target (ratio: requests per CPU-second, target/nginx)",
            fmt_summary(summ["nginx"]["server_us_per_req"], ".2f"),
            fmt_summary(summ["surge-target"]["server_us_per_req"], ".2f"),
            fmt_summary(per_core, ".3f"),
            "—",
            "—",
        )
    )
    return {
        "connections": conns,
        "duration_s": nominal,
        "command": ctx.target_argv,
        "runs": {k: [m.to_json() for m in v] for k, v in runs.items()},
        "summary": summ,
        "ratio_req_per_s": ratios,
        "ratio_req_per_s_quiet_rounds": quiet,
        "ratio_req_per_server_cpu_s": per_core,
        "target_output_tail": list(tgt.output)[-10:],
    }


TEMPLATE_BAR = 1.5  # templated CPU per request at most 1.5 × a static request's


def _template_check(m: Measurement, captured: bool) -> str:
    """_template_check is "" when a template-section run did what its plan says, else why not:
    every response a 200, the capture found in every one, and the target's count of received
    requests equal (within 0.1 %) to the engine's requests.sent."""
    if not m.ok:
        return f"rc={m.returncode}{' timeout' if m.timed_out else ''} {m.report.parse_error or ''}"
    sent = m.report.sent
    if not sent:
        return "no requests sent"
    other = {k: v for k, v in m.report.status_codes.items() if k != "200"}
    if other:
        return f"non-200 responses {other}"
    if captured:
        cap = next((c for c in m.report.captures if c.get("name") == "title"), None)
        if not cap or cap.get("missing") or cap.get("found") != m.report.requests:
            return f"capture not found in every response: {cap}"
    if m.server_requests is None or abs(m.server_requests - sent) > 0.001 * sent:
        return f"target received {m.server_requests} ≠ sent {sent}"
    return ""


def section_template(ctx: Context) -> dict:
    """section_template: engine CPU per request, templated vs static GET, against the
    reference target (the scenarios issue's bar: templated ≤ 1.5 × static)."""
    vus, nominal, tasks = 64, ctx.dur(8, 3), 1000
    say(
        f"\n## template: run_plan, {vus} VUs, 1 thread, {nominal} s, {ctx.rounds} rounds, "
        f"static `GET {plans.STATIC_PATH}` vs templated `GET {plans.TEMPLATED_PATH}` "
        "(uniform id + uuid, capture $.title), order alternating"
    )
    name = f"engine CPU µs/request, templated (2 variables + 1 JSON capture) vs static ({vus} VUs, run_plan)"
    if not ctx.run_plan:
        return skipped(ctx, "template", f"run_plan not available: {ctx.run_plan_note}", name)
    if not ctx.target_argv:
        return skipped(ctx, "template", ctx.target_why, name)
    say(
        f"  generator: {ctx.run_plan_note}, pinned to core {ctx.gen_core}, plan JSON on stdin "
        "(no Python in the measured process); CPU from os.wait4, per request = CPU / the "
        "result's requests.sent, cross-checked with the target's /stats `received` delta"
    )
    say(f"  target command: {' '.join(ctx.target_argv)} (pinned to core {ctx.server_core})")
    gen = Generator("run_plan", "run_plan", ctx.run_plan)
    try:
        tp = TargetProc(ctx.target_argv, ctx.server_core)
        tp.start()
    except (OSError, RuntimeError) as e:
        return skipped(ctx, "template", f"target did not start: {e}", name)
    tgt = CountedTarget(tp)
    base = tgt.base_url()
    kinds = {
        "static": plans.static_plan(base, vus, nominal),
        "templated": plans.templated_plan(base, vus, nominal, tasks),
    }
    runs: dict[str, list[Measurement]] = {"static": [], "templated": []}
    invalid: dict[str, list[str]] = {"static": [], "templated": []}
    try:
        setup = proc.run_measured(
            [ctx.run_plan], None, timeout_s=120, stdin_bytes=plans.encode(plans.setup_plan(base, tasks))
        )
        rep = gen.parse(setup.stdout)
        st = tgt.status()
        first, last = tgt.get("/tasks/1"), tgt.get(f"/tasks/{tasks}")
        say(
            f"  setup: {fmt(rep.sent, ',')} POST /tasks, statuses {rep.status_codes}; target "
            f"holds {st.tasks:,} tasks; GET /tasks/1 → {first[0]}, GET /tasks/{tasks} → {last[0]}"
            f" {last[1][:80]}"
        )
        if setup.returncode != 0 or st.tasks != tasks or first[0] != 200 or last[0] != 200:
            return skipped(
                ctx,
                "template",
                f"setup did not create tasks 1..{tasks}: rc "
                f"{setup.returncode}, {setup.stderr.strip()[-200:]!r}, "
                f"{st.tasks} tasks",
                name,
            )
        warm = measure(
            gen,
            [ctx.run_plan],
            tgt,
            ctx.gen_core,
            ctx.server_core,
            1,
            wait_quiet_s=ctx.wait_quiet_s,
            stdin_bytes=plans.encode(plans.static_plan(base, vus, 1)),
        )
        run_line("warm-up static (discarded)", warm)
        order = ["static", "templated"]
        for r in range(ctx.rounds):
            for kind in order if r % 2 == 0 else list(reversed(order)):
                m = measure(
                    gen,
                    [ctx.run_plan],
                    tgt,
                    ctx.gen_core,
                    ctx.server_core,
                    nominal,
                    wait_quiet_s=ctx.wait_quiet_s,
                    stdin_bytes=plans.encode(kinds[kind]),
                )
                runs[kind].append(m)
                run_line(f"round {r + 1} {kind}", m)
                why = _template_check(m, captured=kind == "templated")
                cap = next((c for c in m.report.captures if c.get("name") == "title"), None)
                say(
                    f"    sent {fmt(m.report.sent, ',')}, target received Δ "
                    f"{fmt(m.server_requests, ',')}, statuses {m.report.status_codes}"
                    + (f", capture title found {fmt(cap['found'], ',')} missing {cap['missing']}" if cap else "")
                    + f", user {m.gen_user_s:.2f}s sys {m.gen_sys_s:.2f}s"
                    + (f", engine's own CPU {m.report.engine_cpu_s:.2f}s" if m.report.engine_cpu_s is not None else "")
                    + (f"  [INVALID: {why}]" if why else "")
                )
                if why:
                    invalid[kind].append(f"round {r + 1}: {why}")
    finally:
        tp.stop()
    all_runs = runs["static"] + runs["templated"]
    noise_note(ctx, "template", all_runs)
    for kind, whys in invalid.items():
        if whys:
            text = f"template: {len(whys)} {kind} run(s) left out: {'; '.join(whys)}"
            say(f"  NOTE {text}")
            ctx.notes.append(text)

    def valid(m: Measurement, kind: str) -> bool:
        return not _template_check(m, captured=kind == "templated")

    def per_req(m: Measurement, cpu_s: float | None, kind: str):
        return cpu_s / m.report.sent * 1e6 if valid(m, kind) and cpu_s is not None else None

    def cpu_us(m, kind):
        return per_req(m, m.gen_cpu_s, kind)

    def user_us(m, kind):
        return per_req(m, m.gen_user_s, kind)

    def sys_us(m, kind):
        return per_req(m, m.gen_sys_s, kind)

    def server_us(m, kind):
        return per_req(m, m.server_cpu_s, kind)

    def rps(m, kind):
        return m.report.sent / m.duration_s if valid(m, kind) and m.duration_s else None

    def ratios(value, quiet_only: bool = False):
        out = []
        for ms, mt in zip(runs["static"], runs["templated"], strict=False):
            if quiet_only and max(ms.other_load, mt.other_load) >= NOISY:
                continue
            vs, vt = value(ms, "static"), value(mt, "templated")
            if vs and vt is not None:
                out.append(vt / vs)
        return summary(out)

    measures = {
        "cpu_us_per_req": cpu_us,
        "user_us_per_req": user_us,
        "sys_us_per_req": sys_us,
        "server_cpu_us_per_req": server_us,
        "req_per_s": rps,
    }
    summ = {kind: {key: summary(f(m, kind) for m in runs[kind]) for key, f in measures.items()} for kind in runs}
    for kind in runs:
        summ[kind]["peak_rss_mb"] = summary(m.peak_rss_mb for m in runs[kind] if valid(m, kind))
        summ[kind]["gen_util"] = summary(m.gen_util for m in runs[kind] if valid(m, kind))
    ratio = {key: ratios(f) for key, f in measures.items()}
    quiet = ratios(cpu_us, quiet_only=True)
    s, t = summ["static"], summ["templated"]
    for kind, d in summ.items():
        say(
            f"  {kind:<9}: {fmt_summary(d['req_per_s'])} req/s, CPU "
            f"{fmt_summary(d['cpu_us_per_req'], '.2f')} µs/req (user "
            f"{fmt_summary(d['user_us_per_req'], '.2f')}, sys {fmt_summary(d['sys_us_per_req'], '.2f')})"
            f", RSS {fmt_summary(d['peak_rss_mb'], '.1f')} MB, target CPU "
            f"{fmt_summary(d['server_cpu_us_per_req'], '.2f')} µs/req   (median [min–max])"
        )
    c = ratio["cpu_us_per_req"]
    say(
        f"  ratio templated/static CPU µs/request, per round: {fmt_summary(c, '.3f')} "
        f"(spread {fmt(c and c['spread_pct'], '.1f')} %); bar ≤ {TEMPLATE_BAR}"
    )
    say(
        f"  same ratio over quiet rounds only (others < {NOISY:.0%} on both cores): "
        + (f"{fmt_summary(quiet, '.3f')} over {quiet['n']} rounds" if quiet else "no quiet round")
    )
    say(
        f"  user-space only: {fmt_summary(ratio['user_us_per_req'], '.3f')}; kernel only: "
        f"{fmt_summary(ratio['sys_us_per_req'], '.3f')} (information: templating is user-space work)"
    )
    saturated = sum(1 for m in all_runs if m.gen_util >= 0.9)
    if saturated:
        say(
            f"  NOTE run_plan ran at ≥ 90 % of its core in {saturated} of {len(all_runs)} runs "
            "(closed loop: req/s is bounded by the generator; CPU per request is the measure)"
        )
    ctx.rows.append(
        Row(
            name,
            fmt_summary(s["cpu_us_per_req"], ".2f"),
            fmt_summary(t["cpu_us_per_req"], ".2f"),
            fmt_summary(c, ".3f"),
            f"≤ {TEMPLATE_BAR}",
            ctx.verdict(c and c["median"], TEMPLATE_BAR, below=True, surge_result=False),
        )
    )
    if quiet:
        ctx.rows.append(
            Row(
                f"… rounds with others < {NOISY:.0%} only ({quiet['n']})",
                "—",
                "—",
                fmt_summary(quiet, ".3f"),
                f"≤ {TEMPLATE_BAR}",
                ctx.verdict(quiet["median"], TEMPLATE_BAR, below=True, surge_result=False),
            )
        )
    ctx.rows += [
        Row(
            "… of which user-space CPU µs/request (information)",
            fmt_summary(s["user_us_per_req"], ".2f"),
            fmt_summary(t["user_us_per_req"], ".2f"),
            fmt_summary(ratio["user_us_per_req"], ".3f"),
            "—",
            "—",
        ),
        Row(
            f"req/s, engine-sent ({vus} VUs, static vs templated)",
            fmt_summary(s["req_per_s"]),
            fmt_summary(t["req_per_s"]),
            fmt_summary(ratio["req_per_s"], ".3f"),
            "—",
            "—",
        ),
    ]
    return {
        "vus": vus,
        "duration_s": nominal,
        "tasks": tasks,
        "run_plan": ctx.run_plan_note,
        "target_command": ctx.target_argv,
        "plans": kinds,
        "runs": {k: [m.to_json() for m in v] for k, v in runs.items()},
        "invalid": invalid,
        "summary": summ,
        "ratio": ratio,
        "ratio_cpu_us_per_req_quiet_rounds": quiet,
        "target_output_tail": list(tp.output)[-10:],
    }
