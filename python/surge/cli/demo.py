"""``surge demo``: start the reference target and run a short real test past its capacity."""

from __future__ import annotations

from pathlib import Path

import click

from surge import exit_codes, signals
from surge.cli.errors import finish


@click.command("demo")
@click.option("--results", type=click.Path(path_type=Path), default=Path("results"), show_default=True,
              help="Directory to write results into.")
def demo_command(results: Path) -> None:
    """Start the reference target, run a short real test that passes its capacity, write results."""
    from surge.demo import run_demo

    run_demo(results)
    if signals.received() is not None:  # the ramp was cut short: its summary is partial
        finish(exit_codes.stopped(detail="results are partial"))
