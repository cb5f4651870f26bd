#!/usr/bin/env python3
"""surge's benchmark harness: surge vs wrk (and oha) against nginx on loopback, pinned cores.

Usage: .venv/bin/python bench/bench.py [--only cpu,conns,rate,target,template,open] [--quick]
       [--rounds N] [--open-rates 20000,50000,80000]

Prints its method and every raw number, then a Markdown table for docs/benchmarks.md, and
writes everything to bench/out/bench-<timestamp>.json. It never asserts a time: the bars are
printed beside the measurements. Only 127.0.0.1 is ever contacted; every run is bounded.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from surgebench import proc
from surgebench.generators import (
    Generator,
    find_oha,
    find_run_plan,
    find_surge,
    find_target,
    find_wrk,
)
from surgebench.nginx import Nginx, find_nginx
from surgebench.open_model import OHA_CONNS, section_open
from surgebench.sections import (
    Context,
    say,
    section_conns,
    section_cpu,
    section_rate,
    section_target,
    section_template,
    surge_startup,
)

# SECTIONS: every section --only can name, in the order the default run takes them.
SECTIONS = {
    "cpu": section_cpu,
    "conns": section_conns,
    "rate": section_rate,
    "target": section_target,
    "template": section_template,
    "open": section_open,
}

REPO = Path(__file__).resolve().parent.parent

METHOD = """\
Method (docs/benchmarks.md, shared performance.md):
  server   nginx, 1 worker, pinned to core {server_core} (taskset + worker_cpu_affinity),
           `return 200 "ok"` on /health, keep-alive (keepalive_requests 1e9), logs off,
           worker_connections 20000; requests counted by nginx stub_status (delta, with the
           harness's own status requests taken out).
  clients  each generator pinned to core {gen_core} (sched_setaffinity = taskset -c {gen_core}),
           closed loop, one thread; CPU = ru_utime + ru_stime and peak RSS = ru_maxrss
           from os.wait4 on the generator process (surge includes its Python start-up).
  noise    rounds alternate the order of the generators; medians and [min–max] reported;
           "others" = share of each core busy with processes other than the measured ones.
  req/s    server-counted requests / the generator's own measured duration.
  template the engine's run_plan example (no Python) on core {gen_core}, against the reference
           target on core {server_core}: static vs templated GET, CPU / requests.sent.
  open     surge (`-r RATE --threads 1`) and oha (`-q RATE -c {oha_conns} --worker-threads 1
           --latency-correction`) at each --open-rates rate on core {gen_core}, plus surge closed
           (-c 64) in the same rounds; CPU per nginx-counted request, connections = nginx
           accepts delta, not sent = rate × duration − nginx count."""


def parse_args(argv: list[str]) -> argparse.Namespace:
    """parse_args reads the command line."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument(
        "--only",
        default="cpu,conns,rate,target,template,open",
        help="comma-separated sections: cpu, conns, rate, target, template, open (default: all)",
    )
    p.add_argument("--quick", action="store_true", help="short runs (a smoke test, not a result)")
    p.add_argument(
        "--rounds", type=int, default=None, help="rounds per generator in cpu/target/template/open (default 5, quick 2)"
    )
    p.add_argument("--rate", type=int, default=20_000, help="the rate section's open-model rate (default 20000)")
    p.add_argument(
        "--open-rates",
        default="20000,50000,80000",
        metavar="R1,R2,…",
        help="the open section's rates in req/s (default 20000,50000,80000)",
    )
    p.add_argument("--surge", default=None, help="surge executable (default .venv/bin/surge)")
    p.add_argument(
        "--target-cmd", default=None, help="command that starts the reference target and prints 127.0.0.1:PORT"
    )
    p.add_argument(
        "--run-plan",
        default=None,
        metavar="PATH",
        help="the engine's run_plan example for the template section (default: "
        "build it with cargo into target/release/examples/run_plan)",
    )
    p.add_argument(
        "--aa",
        action="store_true",
        help="A/A check: when surge is missing, run wrk again in surge's slot "
        "(the ratio shows the noise floor; it is labelled wrk-AA, never surge)",
    )
    p.add_argument(
        "--wait-quiet",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="before each run, wait up to SECONDS for both cores to be < 10%% busy "
        "(for a machine shared with builds; default 0: do not wait)",
    )
    p.add_argument("--gen-core", type=int, default=0)
    p.add_argument("--server-core", type=int, default=1)
    p.add_argument("--out", default=str(REPO / "bench" / "out"))
    args = p.parse_args(argv)
    args.only = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = [s for s in args.only if s not in SECTIONS]
    if unknown:
        p.error(f"unknown section(s) {', '.join(unknown)}; choose from {', '.join(SECTIONS)}")
    if args.rounds is None:
        args.rounds = 2 if args.quick else 5
    try:
        args.open_rates = [int(r) for r in args.open_rates.split(",") if r.strip()]
    except ValueError:
        p.error(f"--open-rates: whole numbers of req/s separated by commas, got {args.open_rates!r}")
    if not args.open_rates or min(args.open_rates) <= 0:
        p.error(f"--open-rates: at least one positive rate, got {args.open_rates!r}")
    return args


def _tool_version(argv: list[str]) -> str | None:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = (out.stdout + out.stderr).strip()
    return text.splitlines()[0] if text else None


def environment(args, ctx: Context) -> dict:
    """environment records the machine, the tools and the repo state of this run."""
    cpu_model = ""
    try:
        with Path("/proc/cpuinfo").open() as f:
            cpu_model = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), "")
    except OSError:
        pass
    git = subprocess.run(
        ["git", "-C", REPO, "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    dirty = bool(
        subprocess.run(
            ["git", "-C", REPO, "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True
        ).stdout.strip()
    )
    return {
        "kernel": platform.release(),
        "cpu_model": cpu_model,
        "cpus": os.cpu_count(),
        "loadavg_at_start": proc.loadavg(),
        "nofile": list(proc.raise_nofile()),
        "python": sys.version.split()[0],
        "git": git + ("-dirty" if dirty else ""),
        "wrk": _tool_version([ctx.wrk.binary, "-v"]) if ctx.wrk else None,
        "oha": _tool_version([ctx.oha.binary, "--version"]) if ctx.oha else None,
        "oha_missing": ctx.oha_why or None,
        "open_rates": args.open_rates if "open" in args.only else None,
        "nginx": ctx.nginx.version() if ctx.nginx else None,
        "surge": ctx.surge.binary if ctx.surge else None,
        "surge_missing": ctx.surge_why or None,
        "target_command": ctx.target_argv,
        "run_plan": ctx.run_plan_note if "template" in args.only else None,
        "gen_core": args.gen_core,
        "server_core": args.server_core,
        "quick": args.quick,
        "rounds": args.rounds,
        "wait_quiet_s": args.wait_quiet,
        "sections": args.only,
    }


def markdown_table(ctx: Context, stamp: str, env: dict) -> str:
    """markdown_table is the result table to paste into docs/benchmarks.md."""
    lines = [
        f"Measured {stamp} on {env['cpus']} × {env['cpu_model'] or 'unknown CPU'}, "
        f"kernel {env['kernel']}, load average at start {env['loadavg_at_start']}, "
        f"surge {env['git']}{' (quick mode)' if env['quick'] else ''}. "
        "Values are median [min–max] over the rounds.",
        "",
        f"| measurement | baseline (wrk, nginx, static, oha or closed) | {ctx.subject} "
        "(or templated) | ratio | bar | meets bar |",
        "|---|---|---|---|---|---|",
    ]
    for r in ctx.rows:
        lines.append(f"| {r.measurement} | {r.baseline} | {r.surge} | {r.ratio} | {r.bar} | {r.meets} |")
    if ctx.notes:
        lines.append("")
        lines += [f"- {n}" for n in ctx.notes]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    """main runs the selected sections and writes the JSON record."""
    args = parse_args(argv)
    os.sched_setaffinity(0, {args.server_core})  # keep the harness off the generator's core
    wrk_bin = find_wrk()
    surge_bin, surge_why = find_surge(REPO, args.surge)
    surge = Generator("surge", "surge", surge_bin) if surge_bin else None
    if not surge and args.aa and wrk_bin:
        surge = Generator("wrk-AA", "wrk", wrk_bin)
        surge_why = f"A/A run: wrk stands in for surge ({surge_why})"
    if args.target_cmd:
        target_argv, target_why = args.target_cmd.split(), ""
    else:
        target_argv, target_why = find_target(REPO, surge_bin)
    ctx = Context(
        quick=args.quick,
        rounds=args.rounds,
        gen_core=args.gen_core,
        server_core=args.server_core,
        wrk=Generator("wrk", "wrk", wrk_bin) if wrk_bin else None,
        surge=surge,
        surge_why=surge_why if not surge_bin else "",
        nginx=None,
        nginx_why="",
        target_argv=target_argv,
        target_why=target_why,
        rate=args.rate,
        wait_quiet_s=args.wait_quiet,
        open_rates=args.open_rates,
    )
    oha_bin = find_oha()
    if oha_bin:
        ctx.oha = Generator("oha", "oha", oha_bin)
    else:
        ctx.oha_why = "oha not found on PATH or in ~/.cargo/bin (cargo install oha)"
    if "template" in args.only:
        say("building the engine's run_plan example for the template section …")
        ctx.run_plan, ctx.run_plan_note = find_run_plan(REPO, args.run_plan)
    nginx_bin = find_nginx()
    soft, hard = proc.raise_nofile()
    if not nginx_bin:
        ctx.nginx_why = "nginx not found (apt-get install nginx, or `make tools`)"
    else:
        try:
            ctx.nginx = Nginx(nginx_bin, args.server_core, nofile=hard if hard > 0 else 20000)
            ctx.nginx.start()
        except (OSError, RuntimeError) as e:
            ctx.nginx, ctx.nginx_why = None, f"nginx did not start: {e}"
    stamp = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    try:
        env = environment(args, ctx)
        say(f"# surge bench — {stamp}{'  (QUICK: smoke test only)' if args.quick else ''}")
        say(METHOD.format(gen_core=args.gen_core, server_core=args.server_core, oha_conns=OHA_CONNS))
        say(
            f"  tools    wrk: {env['wrk'] or 'MISSING'}; oha: {env['oha'] or ctx.oha_why}; "
            f"nginx: {env['nginx'] or ctx.nginx_why}; "
            f"surge: {ctx.surge.binary + ' (' + ctx.surge.name + ')' if ctx.surge else 'MISSING — ' + surge_why}"
        )
        say(
            f"  machine  {env['cpus']} × {env['cpu_model']}, kernel {env['kernel']}, "
            f"load {env['loadavg_at_start']}, nofile soft/hard {soft}/{hard}, git {env['git']}"
        )
        if ctx.nginx:
            say(f"  target   {ctx.nginx.url} (nginx worker pid {ctx.nginx.worker_pid})")
        if "template" in args.only:
            say(f"  run_plan {ctx.run_plan_note if ctx.run_plan else 'MISSING — ' + ctx.run_plan_note}")
        results: dict = {"startup": surge_startup(ctx)} if ctx.surge else {}
        for name in args.only:
            results[name] = SECTIONS[name](ctx)
    finally:
        if ctx.nginx:
            ctx.nginx.stop()
    table = markdown_table(ctx, stamp, env)
    say("\n## Result (paste into docs/benchmarks.md)\n")
    say(table)
    Path(args.out).mkdir(parents=True, exist_ok=True)
    path = Path(args.out) / f"bench-{datetime.datetime.now():%Y%m%d-%H%M%S}.json"
    with path.open("w") as f:
        json.dump({"environment": env, "sections": results, "markdown": table}, f, indent=1, default=str)
    say(f"\nraw record: {os.path.relpath(path, Path.cwd())}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
