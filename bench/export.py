#!/usr/bin/env python3
"""What an export costs (docs/export.md, "Cost"; issue 23's bar: each at most 2 %): ``surge run
URL -r RATE -d D --no-save --json`` against the reference target without an export, with
``--export prometheus=URL`` (a real Prometheus taking remote writes on loopback, when Debian's
``prometheus`` is installed) and with ``--export otlp=URL`` (a loopback OTLP/HTTP receiver in
this process that reads each push and answers 200). Per mode: the run's CPU per request sent
(``generator.cpu_us_per_request``: the surge process's CPU during the run, the exporter's
thread included); medians of ``--rounds`` runs [min–max], the modes interleaved. On a shared machine their spread
is wider than the exports' cost, so a second section measures that cost apart: the exporter
thread's own CPU (``time.thread_time``: adding each interval, encoding, sending) over runs made
in this process, per request and as a share of the run's CPU.

Usage: .venv/bin/python bench/export.py [--rounds 5] [--duration 3s] [--rate 5000]

The run is open-model (``-r``): the engine does the same work in every mode. It never asserts
a figure; it sends only to 127.0.0.1, each run bounded by its duration (killed after 60 s).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "python"))

sys.path.insert(0, str(REPO / "tests"))

from receivers import otlp_receiver, prometheus  # noqa: E402
from saving import summary  # noqa: E402
from surge.engine.target import TargetProcess  # noqa: E402


def measure(args: list[str], env: dict[str, str], cwd: Path) -> dict[str, float]:
    """measure runs one ``surge ARGS --json`` to its end (refusing a failure or a warning): the
    document's CPU per request (µs) and requests sent."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "surge", *args, "--json"],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        stdout, stderr = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise SystemExit(f"surge {' '.join(args)} did not end within 60 s") from None
    if proc.returncode != 0 or b"warning" in stderr:
        raise SystemExit(f"surge {' '.join(args)} exited {proc.returncode}: {stderr.decode(errors='replace')[-500:]}")
    doc = json.loads(stdout)
    return {"cpu_us_per_request": float(doc["generator"]["cpu_us_per_request"]), "sent": float(doc["requests"]["sent"])}


def exporter_cpu(url: str, receivers: dict[str, str], duration: str, rate: str, rounds: int) -> None:
    """exporter_cpu prints each exporter thread's own CPU (``ExportSink.cpu_s``: adding each
    interval, encoding, sending) over runs made in this process, per request sent and as a
    share of the run's CPU (``generator.cpu``) without it."""
    from surge.run.export import export_sinks, parse_exports
    from surge.run.session import RunOptions, run_prepared
    from surge.run.spec import TestSpec

    prepared = TestSpec(target=url, duration=duration, rate=float(rate), no_save=True).prepare()
    print(f"\nthe exporter thread's own CPU ({rounds} runs in this process)")
    print("| kind | CPU per run ms | CPU per request µs | share of the run's CPU |")
    print("| --- | --- | --- | --- |")
    for kind, receiver in receivers.items():
        cpu_ms, per_request, share = [], [], []
        for _ in range(rounds):
            (sink,) = export_sinks(parse_exports([f"{kind}={receiver}"]), None, sys.stderr, prepared.compiled.main)
            end = run_prepared(prepared, RunOptions(save=False), stderr=sys.stderr, sinks=[sink])
            sent = end.document["requests"]["sent"]
            cpu = end.document["generator"]["cpu"]
            run_cpu_s = cpu["user_s"] + cpu["system_s"] - sink.cpu_s
            cpu_ms.append(sink.cpu_s * 1e3)
            per_request.append(sink.cpu_s / sent * 1e6)
            share.append(sink.cpu_s / run_cpu_s * 100)
        print(f"| {kind} | {summary(cpu_ms, '.1f')} | {summary(per_request, '.3f')} | {summary(share, '.1f')} % |")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="runs of each mode (default 5)")
    parser.add_argument("--duration", default="3s", help="each run's -d (default 3s)")
    parser.add_argument("--rate", default="5000", help="each run's -r, requests per second (default 5000)")
    args = parser.parse_args(argv)
    with (
        tempfile.TemporaryDirectory(prefix="surge-export-") as tmp,
        TargetProcess() as target,
        otlp_receiver() as receiver,
        prometheus(Path(tmp)) as base,
    ):
        otlp = f"http://127.0.0.1:{receiver.server_address[1]}"
        remote_write = None if base is None else f"{base}/api/v1/write"
        cwd = Path(tmp)
        env = dict(os.environ, SURGE_DB=str(cwd / "history.db"), PYTHONPATH=str(REPO / "python"))
        receivers = {"otlp": otlp} | ({"prometheus": remote_write} if remote_write is not None else {})
        modes = {"no export": [], **{kind: ["--export", f"{kind}={url}"] for kind, url in receivers.items()}}
        if remote_write is None:
            print("(no prometheus binary: the prometheus mode is left out; make test installs it)")
        run = ["run", f"{target.url}/health", "-d", args.duration, "-r", args.rate, "--no-save"]
        print(f"surge {' '.join(run)} (against the reference target), {args.rounds} rounds, modes interleaved")
        results: dict[str, list[dict[str, float]]] = {mode: [] for mode in modes}
        for flags in modes.values():  # one unmeasured run each: caches, imports
            measure([*run, *flags], env, cwd)
        for i in range(args.rounds):
            for mode, flags in modes.items():
                m = measure([*run, *flags], env, cwd)
                results[mode].append(m)
                print(
                    f"  round {i + 1} {mode:>10}: {m['cpu_us_per_request']:.2f} µs CPU/request · {m['sent']:,.0f} sent"
                )
        exporter_cpu(f"{target.url}/health", receivers, args.duration, args.rate, args.rounds)
    base = statistics.median(r["cpu_us_per_request"] for r in results["no export"])
    print()
    print("| mode | CPU per request µs | vs no export |")
    print("| --- | --- | --- |")
    for mode, runs in results.items():
        cpu = [r["cpu_us_per_request"] for r in runs]
        print(f"| {mode} | {summary(cpu, '.2f')} | {(statistics.median(cpu) / base - 1) * 100:+.1f} % |")
    print("\nbar (issue 23): each export at most +2 % CPU per request")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
