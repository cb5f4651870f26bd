"""The compare experiment (``surge compare``, docs/experiments.md): variants of one test, each
repeated n times in a balanced or shuffled order, or groups of runs already in the history
(variants × loads: each group split by a tag of its runs), analysed pair by pair
(``surge.analysis.comparison``) and recorded as an experiment of kind ``compare``. How variants
and groups are named on the command line is ``surge.experiments.variants``."""

from __future__ import annotations

import secrets
from itertools import product
from typing import Any

from surge.analysis.comparison import analyse
from surge.core import exit_codes
from surge.core.errors import BadInput
from surge.core.exit_codes import Outcome
from surge.experiments import runner
from surge.experiments.outcome import experiment_outcome
from surge.experiments.recorder import ExperimentRecord
from surge.experiments.runner import run_entry
from surge.experiments.variants import RunGroup, Variant, check_names, cross, load_variants, parse_variant, run_plan
from surge.history import RunQuery, list_runs, load_run, lookup_id, open_history
from surge.history.experiment_rows import ExperimentRun
from surge.history.store import History
from surge.record.stored import StoredRun
from surge.run.sinks import COMMAND_VIEW
from surge.run.spec import TestSpec

MAX_GROUP_RUNS = 10_000
"""MAX_GROUP_RUNS bounds how many runs one --group may select."""

Cells = dict[str, tuple[str, float]]
"""Cells maps each cell of a variants × loads comparison to its variant and its load."""


def reference_of(reference: str | None, names: list[str]) -> str:
    """reference_of is the variant the others are compared with: ``reference`` (which must be
    one of ``names``, else BadInput naming --reference), by default the first."""
    if reference is None:
        return names[0]
    if reference not in names:
        raise BadInput("--reference", f"'{reference}' is not one of the variants ({', '.join(names)})")
    return reference


def reference_cell(reference: str | None, variants: list[Variant], cells: Cells | None) -> str:
    """reference_cell is the variant of new runs the others are compared with (reference_of);
    for variants × loads ``reference`` names a variant, and this is its cell at the lightest load."""
    if cells is None:
        return reference_of(reference, [v.name for v in variants])
    chosen = reference_of(reference, list(dict.fromkeys(v for v, _ in cells.values())))
    return next(c for c, (v, _) in cells.items() if v == chosen)


def variants_of(
    variant_specs: tuple[str, ...], vus: str | None, rates: str | None
) -> tuple[list[Variant], Cells | None]:
    """variants_of are the variants of new runs (``--variant`` specs, or one per level of
    ``--vus`` or ``--rates``) and, for variants × loads (both), their cells; BadInput names the
    flag of a missing, doubled or misnamed variant."""
    if vus and rates:
        raise BadInput("--rates", "give one of --vus, --rates (got --vus and --rates)")
    if not variant_specs and not vus and not rates:
        raise BadInput("--variant", "give the variants: --variant (twice or more), --vus or --rates")
    given = [parse_variant(s) for s in variant_specs]
    levels = load_variants(vus, rates) if vus or rates else []
    if given and levels:
        check_names([v.name for v in given], "--variant")
        variants = cross(given, levels)
        return variants, {
            c.name: (v.name, float(lv.load or 0)) for c, (v, lv) in zip(variants, product(given, levels), strict=True)
        }
    variants = given or levels
    check_names([v.name for v in variants], "--variant" if given else "--vus" if vus else "--rates")
    return variants, None


def _conclude(
    experiment: ExperimentRecord,
    names: list[str],
    reference: str,
    alpha: float,
    loads: dict[str, float] | None,
    cells: Cells | None = None,
) -> None:
    experiment.conclude(
        lambda: analyse(experiment.runs, names, reference=reference, alpha=alpha, loads=loads, cells=cells)
    )


def run_compare(
    test: TestSpec,
    variants: list[Variant],
    cells: Cells | None,
    reference: str,
    repeats: int,
    order: tuple[str, int | None],
    cooldown_s: float,
    alpha: float,
) -> tuple[ExperimentRecord, Outcome]:
    """run_compare runs every variant of ``test`` ``repeats`` times, round by round in the
    ``order`` (balanced, or shuffle with its seed: a random one, recorded, when None),
    ``cooldown_s`` between two runs, every variant prepared before any run (BadInput); it
    returns the concluded record (each variant against ``reference`` at significance
    ``alpha``; the scaling between load levels when every variant is one) and the outcome
    (experiment_outcome)."""
    names = [v.name for v in variants]
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
        "cooldown_s": cooldown_s,
        "alpha": alpha,
        "reference": reference,
        "variants": [v.describe() for v in variants],
        "test": test.describe(),
    }
    experiment = ExperimentRecord.for_test("compare", test, parameters)
    experiment.planned_s = [prepared[name].planned_s for one_round in plan for name in one_round]
    with experiment.running():
        for i, one_round in enumerate(plan, 1):
            for name in one_round:
                if experiment.runs:
                    runner.cooldown(cooldown_s)
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
                if (view := COMMAND_VIEW.get()) is not None:  # --dashboard: the variants so far
                    view.on_step(
                        experiment.document,
                        lambda: analyse(
                            experiment.runs, names, reference=reference, alpha=alpha, loads=None, cells=cells
                        )[0],
                    )
    loads = load_of if len(load_of) == len(variants) and cells is None else None
    _conclude(experiment, names, reference, alpha, loads, cells)
    return experiment, experiment_outcome(experiment.runs, experiment.stopped, repeats * len(variants), experiment.kept)


def _group_ids(history: History, group: RunGroup) -> list[str]:
    if group.refs:
        return [lookup_id(history, ref) for ref in group.refs]
    rows = list_runs(history, RunQuery(tags=group.tags, limit=MAX_GROUP_RUNS))
    if not rows:
        raise BadInput("--group", f"no run in the history ({history.path}) has the tags of group '{group.name}'")
    return [r.id for r in reversed(rows)]  # oldest first


def _tag_level(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _split_by_load(
    stored: dict[str, list[StoredRun]], key: str, levels: list[float]
) -> tuple[dict[str, list[StoredRun]], Cells]:
    """_split_by_load splits each group's runs by their tag ``key`` into cells ``GROUP KEY=LEVEL``;
    a run whose tag is none of the levels is not in the comparison; a cell without runs is
    refused (BadInput naming --loads)."""
    split: dict[str, list[StoredRun]] = {}
    cells: Cells = {}
    for group, runs in stored.items():
        for level in levels:
            cell = f"{group} {key}={level:g}"
            split[cell] = [r for r in runs if _tag_level((r.meta.get("tags") or {}).get(key)) == level]
            cells[cell] = (group, level)
            if not split[cell]:
                raise BadInput("--loads", f"no run of group '{group}' has the tag {key}={level:g}")
    return split, cells


def compare_history(
    test: TestSpec,
    groups: list[RunGroup],
    flag: str,
    loads: tuple[str | None, list[float]],
    reference: str | None,
    alpha: float,
) -> tuple[ExperimentRecord, Outcome]:
    """compare_history compares ``groups`` of runs of the history ``test.db`` names (``flag``,
    --group or --runs, is named in errors: a run in two groups, a group without runs), each
    group at one load level (``loads``: (None, a level per group, or none)) or split by its
    runs' tag (``loads``: (KEY, the levels)); it runs nothing and returns the concluded record
    (each group, or cell, against ``reference`` at significance ``alpha``) and outcome 0."""
    names = [g.name for g in groups]
    key, levels = loads
    load_of = dict(zip(names, levels, strict=True)) if levels and key is None else None
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
        chosen = reference_of(reference, names)
        chosen = next(c for c, (v, _) in cells.items() if v == chosen)
        names = list(cells)
    else:
        chosen = reference_of(reference, names)
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
    _conclude(experiment, names, chosen, alpha, load_of, cells)
    return experiment, Outcome(exit_codes.OK)
