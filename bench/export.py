#!/usr/bin/env python3
"""What an export's own thread costs (docs/export.md, "Cost"): ``surge run URL -r RATE -d D``
against the reference target, made in this process with ``--export prometheus=URL`` (a real
Prometheus taking remote writes on loopback, when Debian's ``prometheus`` is installed) and
``--export otlp=URL`` (a loopback OTLP/HTTP receiver in this process): the exporter thread's own
CPU (``ExportSink.cpu_s``, ``time.thread_time``: adding each interval, encoding, sending), per
run, per request sent and as a share of the run's CPU without it. The same run with and without
each export side by side, and beside the other watchers, is bench/observers.py.

Usage: .venv/bin/python bench/export.py [--rounds 5] [--duration 3s] [--rate 5000]

It never asserts a figure; it sends only to 127.0.0.1, each run bounded by its duration.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "python"))

sys.path.insert(0, str(REPO / "tests"))

from receivers import otlp_receiver, prometheus  # noqa: E402
from saving import summary  # noqa: E402
from surge.engine.target import TargetProcess  # noqa: E402


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
    parser.add_argument("--rounds", type=int, default=5, help="runs of each export (default 5)")
    parser.add_argument("--duration", default="3s", help="each run's -d (default 3s)")
    parser.add_argument("--rate", default="5000", help="each run's -r, requests per second (default 5000)")
    args = parser.parse_args(argv)
    with (
        tempfile.TemporaryDirectory(prefix="surge-export-") as tmp,
        TargetProcess() as target,
        otlp_receiver() as receiver,
        prometheus(Path(tmp)) as base,
    ):
        receivers = {"otlp": f"http://127.0.0.1:{receiver.server_address[1]}"}
        if base is None:
            print("(no prometheus binary: its export is left out; make test installs it)")
        else:
            receivers["prometheus"] = f"{base}/api/v1/write"
        print(f"surge run {target.url}/health -d {args.duration} -r {args.rate} --no-save, in this process")
        exporter_cpu(f"{target.url}/health", receivers, args.duration, args.rate, args.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
