"""``surge demo``: start the reference target and run a short real experiment (a sweep) that
finds its peak, knee and breaking point."""

from __future__ import annotations

from pathlib import Path

import click

from surge.cli.exit import finish


@click.command("demo")
@click.option(
    "--results",
    type=click.Path(path_type=Path),
    default=Path("results"),
    show_default=True,
    help="Directory under which the experiment's results directory (<UTC yyyymmdd-HHMMSS>-demo) is written.",
)
def demo_command(results: Path) -> None:
    """Start the reference target, sweep 1 → 32 VUs against it (about 35 s), write results."""
    from surge.experiments.demo import run_demo  # start-up: the sweep, the history and Rich only when the demo runs

    _directory, outcome = run_demo(results)
    finish(outcome)  # 0; 128 + signal when the sweep was cut short (its levels so far are kept)
