"""``surge stats RUN... | --name N | --tag k=v ... [--tool T]``: repeat's statistics over runs
already in the history (surge's own or imported), recorded as an experiment of kind ``stats``."""

from __future__ import annotations

import click

from surge.cli.exit import finish
from surge.cli.options import check_no_save, cv_limit_option, db_option, json_option, no_save_option
from surge.cli.repeat_command import report_experiment
from surge.core.errors import BadInput
from surge.core.tags import parse_tags
from surge.core.units import percent_flag
from surge.experiments.recorder import check_experiment_out
from surge.experiments.repeat import SELECTION, run_stats, stored_runs
from surge.history import TOOLS
from surge.record.directory import check_out


@click.command("stats")
@click.argument("runs", nargs=-1, metavar="RUN...")
@click.option("--name", help="Every run of this name (exactly).")
@click.option(
    "--tag", "tags", multiple=True, metavar="KEY=VALUE", help="Every run with this tag; repeatable (all must match)."
)
@click.option("--tool", type=click.Choice(TOOLS), help="Only runs made by this tool (surge, or an import's).")
@cv_limit_option
@json_option("Print the experiment as one JSON document on stdout.")
@click.option(
    "--out",
    "out",
    metavar="DIR",
    help="Write the experiment's directory here (default: results/<UTC yyyymmdd-HHMMSS>-stats-<name>/).",
)
@db_option
@no_save_option
def stats_command(
    runs: tuple[str, ...],
    name: str | None,
    tags: tuple[str, ...],
    tool: str | None,
    cv_limit: str,
    json_output: bool,
    out: str | None,
    db: str | None,
    no_save: bool,
) -> None:
    """Describe key figures over runs of the history: each RUN (an id, a unique prefix, 'last' or
    a results directory), or every run a selection (--name, --tag, --tool) matches, oldest
    first. Mean, SD, 95% CI, median, min, max, CV, outliers; a figure a run lacks (an import's
    tool did not report it) is left out of that figure's n."""
    tag_pairs = tuple(parse_tags(tags).items())
    selection = {"name": name, "tags": dict(tag_pairs), "tool": tool}
    selecting = name is not None or bool(tags) or tool is not None
    if runs and selecting:
        raise BadInput(SELECTION, "give either RUN... or a selection, not both")
    if not runs and not selecting:
        raise BadInput(
            "RUN", f"give the runs (ids, prefixes, 'last', results directories) or a selection ({SELECTION})"
        )
    limit = percent_flag("--cv-limit", cv_limit, above_zero=True, example="10%")
    check_no_save(no_save, {"--out": out})  # --db names the history the runs are read from
    check_out(out)
    check_experiment_out(out)
    ids, stored = stored_runs(db, runs, name, tool, tag_pairs)
    experiment, outcome = run_stats(
        ids, stored, name, limit, selection if selecting else None, out=out, db=db, save=not no_save
    )
    report_experiment(experiment.document, json_output)
    finish(outcome)
