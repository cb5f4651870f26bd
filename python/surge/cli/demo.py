"""``surge demo``: start the reference target and run a short real test past its capacity."""

from __future__ import annotations

from pathlib import Path

import click

from surge.cli.errors import finish


@click.command("demo")
@click.option("--results", type=click.Path(path_type=Path), default=Path("results"), show_default=True,
              help="Directory under which the run's results directory (<UTC yyyymmdd-HHMMSS>-demo) is written.")
def demo_command(results: Path) -> None:
    """Start the reference target, run a short real test that passes its capacity, write results."""
    from surge.demo import run_demo

    _directory, outcome = run_demo(results)
    finish(outcome)  # 0; 128 + signal when the ramp was cut short (its summary is partial)
