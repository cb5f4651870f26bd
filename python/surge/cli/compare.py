"""``surge compare``: one test against variants, each repeated n times in a balanced order
(A B, B A, ...) or shuffled per round (seeded, recorded), or groups of runs already in the
history; variants × loads (``--variant`` with ``--vus``/``--rates``, or ``--group`` with
``--loads KEY=L1,L2``); per figure each variant's mean and CI, every pair of variants with
the difference, a bootstrap CI on the ratio, Welch's and Mann–Whitney's p-values and a verdict
(and "may be drift" when a figure trends with run order); between load levels, the scaling
line. Recorded as an experiment of kind ``compare``."""

from __future__ import annotations

import secrets
from dataclasses import fields
from itertools import product
from typing import Any

import click

from surge.analysis.compare import ALPHA
from surge.cli.errors import finish
from surge.cli.repeat import MAX_RUNS, check_experiment_test, experiment_outcome, report_experiment
from surge.cli.test_options import optional_test_options
from surge.core.errors import BadInput
from surge.core.exit_codes import Outcome
from surge.core.units import duration_flag
from surge.experiments import runner
from surge.experiments.recorder import ExperimentRecord
from surge.experiments.runner import run_entry
from surge.experiments.variants import (
    ORDERS,
    RunGroup,
    Variant,
    check_names,
    cross,
    load_variants,
    parse_group,
    parse_loads,
    parse_runs,
    parse_variant,
    run_plan,
)
from surge.run.spec import TestSpec

DEFAULT_REPEATS = 5
"""DEFAULT_REPEATS is how many runs each variant gets unless told (-n)."""

MAX_GROUP_RUNS = 10_000
"""MAX_GROUP_RUNS bounds how many runs one --group may select."""

HISTORY_FLAGS = "--group/--runs"
"""HISTORY_FLAGS names the flags of a comparison of runs from the history in errors."""


def _alpha(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value < 0.5:
        raise BadInput("--alpha", f"expected a significance level between 0 and 0.5 such as 0.05, got '{text}'")
    return value


def _reference(reference: str | None, names: list[str]) -> str:
    if reference is None:
        return names[0]
    if reference not in names:
        raise BadInput("--reference", f"'{reference}' is not one of the variants ({', '.join(names)})")
    return reference


def _check_no_test_flags(test: TestSpec) -> None:
    """_check_no_test_flags refuses, in a comparison of recorded runs, a flag describing a test to run."""
    bare = TestSpec(target="")
    for f in fields(TestSpec):
        if f.name not in ("target", "out", "db", "tags", "no_save", "flags") and getattr(test, f.name) != getattr(
            bare, f.name
        ):
            raise BadInput(
                test.flag(f.name),
                f"describes a test to run; a comparison of runs from the history ({HISTORY_FLAGS}) runs none",
            )


@click.command("compare")
@optional_test_options
@click.option(
    "--variant",
    "variant_specs",
    multiple=True,
    metavar="SPEC",
    help="A variant of the test: NAME=URL (another base URL), NAME:KEY=VALUE,... (-e pairs of its own, "
    "for a scenario file) or NAME (the test as given); repeatable, the first is the reference.",
)
@click.option(
    "--vus",
    help="Closed-model load levels to compare, e.g. 35,75: one variant per level (and the scaling between them).",
)
@click.option(
    "--rates",
    help="Open-model arrival rates to compare, e.g. 100,200: one variant per level (and the scaling between them).",
)
@click.option(
    "--group",
    "group_specs",
    multiple=True,
    metavar="[NAME:]KEY=VALUE,...",
    help="A group of runs from the history: every run with all these tags; repeatable (no FILE|URL).",
)
@click.option(
    "--runs",
    "runs_specs",
    multiple=True,
    metavar="[NAME:]RUN,RUN,...",
    help="A group of runs from the history, each an id, a unique prefix or a results directory; "
    "repeatable (no FILE|URL).",
)
@click.option(
    "--loads",
    help="With --group/--runs: each group's load level (VUs or rate), in the groups' order, "
    "increasing: adds the scaling between them; or KEY=L1,L2,... (e.g. vus=35,75): every "
    "group at every level, a run's level its tag KEY (variants × loads).",
)
@click.option(
    "-n",
    "--repeats",
    type=int,
    default=DEFAULT_REPEATS,
    show_default=True,
    help="How many runs each variant gets (one a round).",
)
@click.option(
    "--order",
    type=click.Choice(ORDERS),
    default="balanced",
    show_default=True,
    help="Run order of each round: balanced (A B, then B A, ...) or shuffle (seeded, recorded).",
)
@click.option(
    "--order-seed",
    type=int,
    help="With --order shuffle: the seed of the shuffles (default: a random "
    "one, recorded and shown so that the order can be made again).",
)
@click.option("--cooldown", default="0s", show_default=True, help="Pause between two runs (nothing sent), e.g. 10s.")
@click.option("--reference", help="The variant the others are compared with (default: the first).")
@click.option("--alpha", default=str(ALPHA), show_default=True, help="Significance level of the verdicts.")
@click.option(
    "--json",
    "json_output",
    is_flag=True,
    help="Print the experiment (parameters, every run's figures, the comparisons, the scaling, the "
    "findings) as one JSON document on stdout.",
)
def compare_command(
    test: TestSpec,
    variant_specs: tuple[str, ...],
    vus: str | None,
    rates: str | None,
    group_specs: tuple[str, ...],
    runs_specs: tuple[str, ...],
    loads: str | None,
    repeats: int,
    order: str,
    order_seed: int | None,
    cooldown: str,
    reference: str | None,
    alpha: str,
    json_output: bool,
) -> None:
    """Compare variants of a test (FILE|URL with --variant, --vus or --rates, or --variant with
    --vus/--rates for variants × loads), each run n times in a balanced or shuffled order, or
    groups of runs from the history (--group, --runs): per figure each variant's mean and 95%
    CI, every pair of variants with the difference, the ratio with its bootstrap CI, Welch's and
    Mann-Whitney's p-values, and better / worse / no significant difference (may be drift when
    a figure trends with run order). Exit code as surge repeat's."""
    level = _alpha(alpha)
    if order_seed is not None and order != "shuffle":
        raise BadInput("--order-seed", "only with --order shuffle (a balanced order has no seed)")
    if group_specs or runs_specs:
        for flag, given in (
            ("--variant", variant_specs),
            ("--vus", vus),
            ("--rates", rates),
            ("--order", order != "balanced"),
            ("--order-seed", order_seed is not None),
        ):
            if given:
                raise BadInput(flag, f"compares new runs; {HISTORY_FLAGS} compare runs from the history: give one")
        if test.target:
            raise BadInput("FILE|URL", f"{HISTORY_FLAGS} compare runs from the history: give no test to run")
        _check_no_test_flags(test)
        _compare_history(test, group_specs, runs_specs, loads, reference, level, json_output)
        return
    if not test.target:
        raise BadInput("FILE|URL", f"give the test to run with --variant, --vus or --rates, or {HISTORY_FLAGS}")
    if loads is not None:
        raise BadInput("--loads", f"only with {HISTORY_FLAGS} (--vus and --rates give the loads of new runs)")
    _compare_runs(
        test, variant_specs, vus, rates, repeats, (order, order_seed), cooldown, reference, level, json_output
    )


Cells = dict[str, tuple[str, float]]
"""Cells maps each cell of a variants × loads comparison to its variant and its load."""


def _variants(variant_specs: tuple[str, ...], vus: str | None, rates: str | None) -> tuple[list[Variant], Cells | None]:
    """_variants are the variants of new runs and, for variants × loads, their cells."""
    if vus and rates:
        raise BadInput("--rates", "give one of --vus, --rates (got --vus and --rates)")
    if not variant_specs and not vus and not rates:
        raise BadInput("--variant", "give the variants: --variant (twice or more), --vus or --rates")
    given = [parse_variant(s) for s in variant_specs]
    levels = load_variants(vus, rates) if vus or rates else []
    if given and levels:
        check_names([v.name for v in given], "--variant")
        variants = cross(given, levels)
        return variants, {c.name: (v.name, float(lv.load or 0)) for c, (v, lv) in zip(variants, product(given, levels))}
    variants = given or levels
    check_names([v.name for v in variants], "--variant" if given else "--vus" if vus else "--rates")
    return variants, None


def _compare_runs(
    test: TestSpec,
    variant_specs: tuple[str, ...],
    vus: str | None,
    rates: str | None,
    repeats: int,
    order: tuple[str, int | None],
    cooldown: str,
    reference: str | None,
    alpha: float,
    json_output: bool,
) -> None:
    if not 1 <= repeats <= MAX_RUNS:
        raise BadInput("-n/--repeats", f"must be from 1 to {MAX_RUNS:,}, got {repeats}")
    pause_s = duration_flag("--cooldown", cooldown, positive=False)
    variants, cells = _variants(variant_specs, vus, rates)
    names = [v.name for v in variants]
    chosen = _reference(reference, names if cells is None else list(dict.fromkeys(v for v, _ in cells.values())))
    if cells is not None:  # the reference names a variant: its cell at the lightest load
        chosen = next(c for c, (v, _) in cells.items() if v == chosen)
    check_experiment_test(test)
    kind, seed = order
    if kind == "shuffle" and seed is None:
        seed = secrets.randbelow(2**31)
    plan = run_plan(names, repeats, kind, seed)
    tests = {v.name: v.apply(test) for v in variants}
    prepared = {v.name: tests[v.name].prepare(v.overrides()) for v in variants}  # every BadInput before any run
    by_name = {v.name: v for v in variants}
    load_of = {v.name: float(v.load) for v in variants if v.load is not None}
    parameters = {
        "runs": repeats,
        "order": kind,
        "order_seed": seed,
        "cooldown_s": pause_s,
        "alpha": alpha,
        "reference": chosen,
        "variants": [v.describe() for v in variants],
        "test": test.describe(),
    }
    experiment = ExperimentRecord.for_test("compare", test, parameters)
    with experiment.running():
        for i, one_round in enumerate(plan, 1):
            for name in one_round:
                if experiment.runs:
                    runner.cooldown(pause_s)
                variant = by_name[name]
                runner.run_one(
                    experiment,
                    tests[name],
                    prepared[name],
                    role=f"variant {name} {i}/{repeats}",
                    label=f"{name} {i}",
                    level=variant.load,
                    variant=name,
                )
    loads = load_of if len(load_of) == len(variants) and cells is None else None
    _finish(experiment, names, chosen, alpha, loads, json_output, cells)
    finish(experiment_outcome(experiment.runs, experiment.stopped, repeats * len(variants), experiment.kept))


def _finish(
    experiment: ExperimentRecord,
    names: list[str],
    reference: str,
    alpha: float,
    loads: dict[str, float] | None,
    json_output: bool,
    cells: Cells | None = None,
) -> None:
    from surge.analysis.comparison import analyse

    experiment.conclude(
        lambda: analyse(experiment.runs, names, reference=reference, alpha=alpha, loads=loads, cells=cells)
    )
    report_experiment(experiment.document, json_output)


def _group_ids(history: Any, group: RunGroup) -> list[str]:
    from surge.history import RunQuery, list_runs, lookup_id

    if group.refs:
        return [lookup_id(history, ref) for ref in group.refs]
    rows = list_runs(history, RunQuery(tags=group.tags, limit=MAX_GROUP_RUNS))
    if not rows:
        raise BadInput("--group", f"no run in the history ({history.path}) has the tags of group '{group.name}'")
    return [r.id for r in reversed(rows)]  # oldest first


def _compare_history(
    test: TestSpec,
    group_specs: tuple[str, ...],
    runs_specs: tuple[str, ...],
    loads: str | None,
    reference: str | None,
    alpha: float,
    json_output: bool,
) -> None:
    from surge.history import load_run, open_history
    from surge.history.experiments import ExperimentRun

    if group_specs and runs_specs:
        raise BadInput("--runs", "give the groups either by tags (--group) or by runs (--runs), not both")
    groups = [parse_group(s) for s in group_specs] or [parse_runs(s, i) for i, s in enumerate(runs_specs)]
    names = [g.name for g in groups]
    flag = "--group" if group_specs else "--runs"
    check_names(names, flag)
    key, levels = _history_loads(loads, len(groups))
    load_of = dict(zip(names, levels)) if levels and key is None else None
    check_experiment_test(test, reads_history=True)
    with open_history(test.db) as history:
        ids = {g.name: _group_ids(history, g) for g in groups}
        seen: dict[str, str] = {}
        for name, group_ids in ids.items():
            for run_id in group_ids:
                if run_id in seen:
                    raise BadInput(flag, f"run {run_id[:12]} is in group '{seen[run_id]}' and group '{name}'")
                seen[run_id] = name
        stored = {name: [load_run(history, i) for i in group_ids] for name, group_ids in ids.items()}
    cells: Cells | None = None
    if key is not None:  # variants × loads: each group split by its runs' tag KEY
        stored, cells = _split_by_load(stored, key, levels)
        chosen = _reference(reference, names)
        chosen = next(c for c, (v, _) in cells.items() if v == chosen)
        names = list(cells)
    else:
        chosen = _reference(reference, names)
    run_names = {str(s.meta.get("name")) for runs in stored.values() for s in runs}
    parameters = {
        "runs": {name: len(runs) for name, runs in stored.items()},
        "alpha": alpha,
        "reference": chosen,
        "groups": [g.describe() for g in groups],
        "loads": load_of,
        "load_tag": key,
        "load_levels": levels if key is not None else None,
        "run_ids": ids,
    }
    experiment = ExperimentRecord.for_test(
        "compare", test, parameters, name=run_names.pop() if len(run_names) == 1 else "runs"
    )
    with experiment.running():
        for name, runs in stored.items():
            for i, run in enumerate(runs, 1):
                role = f"variant {name} {i}/{len(runs)}"
                position = len(experiment.runs) + 1
                level = load_of[name] if load_of else cells[name][1] if cells else None
                experiment.add_run(
                    run_entry(
                        run.summary,
                        position=position,
                        role=role,
                        label=f"{name} {i}",
                        directory=run.directory,
                        exit_code=None,
                        level=level,
                        variant=name,
                    ),
                    ExperimentRun(run.run_id, position, role, f"{name} {i}", level, name),
                )
    _finish(experiment, names, chosen, alpha, load_of, json_output, cells)
    finish(Outcome(0))


def _history_loads(loads: str | None, groups: int) -> tuple[str | None, list[float]]:
    """_history_loads reads --loads of a comparison of history runs: (None, one level per
    group) or, for ``KEY=L1,L2,...``, (KEY, the levels every group is split into)."""
    if loads is None:
        return None, []
    key, sep, rest = loads.partition("=")
    if sep:
        if not key.strip() or not rest:
            raise BadInput("--loads", f"expected a tag and its levels such as vus=35,75, got '{loads}'")
        return key.strip(), parse_loads("--loads", rest, whole=False)
    levels = parse_loads("--loads", loads, whole=False)
    if len(levels) != groups:
        raise BadInput(
            "--loads",
            f"give one load level per group: {groups} groups, {len(levels)} levels (or a "
            "tag and its levels such as vus=35,75, to split every group by that tag of its runs)",
        )
    return None, levels


def _split_by_load(stored: dict[str, list[Any]], key: str, levels: list[float]) -> tuple[dict[str, list[Any]], Cells]:
    """_split_by_load splits each group's runs by their tag ``key`` into cells ``GROUP KEY=LEVEL``;
    a run whose tag is none of the levels is not in the comparison; a cell without runs is
    refused (BadInput naming --loads)."""
    split: dict[str, list[Any]] = {}
    cells: Cells = {}
    for group, runs in stored.items():
        for level in levels:
            cell = f"{group} {key}={level:g}"
            split[cell] = [r for r in runs if _tag_level((r.meta.get("tags") or {}).get(key)) == level]
            cells[cell] = (group, level)
            if not split[cell]:
                raise BadInput("--loads", f"no run of group '{group}' has the tag {key}={level:g}")
    return split, cells


def _tag_level(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None
