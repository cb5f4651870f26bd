"""The memory model of a run (docs/scenarios.md, "Memory"), held before it starts: what a
compiled plan will make surge hold for what the file gives it is computed from the plan, and a
plan past a bound is refused at the key that passes it, FILE:LINE, before setup sends a
request. Three costs grow with the input; each has its bound in ``surge.core.limits``:

- CSV data: a ``csv`` variable's table is held once per scenario that uses it, shared by all
  its threads and VUs: about its cells' bytes three times over (the file's text, the plan, the
  engine's table) plus five bytes a cell (a separator and an offset), so the tables of one
  run together are bounded (``MAX_CSV_PLAN_BYTES``).
- Values per VU: a VU keeps the last value of each variable it uses and the request it
  renders from them, about twice their longest values; times the VUs of each scenario, summed
  over the run's scenarios (``MAX_VU_VALUE_BYTES``).
- Tags: every distinct tag of a scenario (a step's name, else ``METHOD /path``) has its own
  metrics in every thread, every interval and the record (``MAX_TAGS``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from surge.core.limits import MAX_CSV_PLAN_BYTES, MAX_TAGS, MAX_VU_VALUE_BYTES
from surge.core.units import size_text
from surge.scenario.base import Path
from surge.scenario.compile import completion_sources
from surge.scenario.completion import Prompts
from surge.scenario.engine_check import file_path, plan_phases
from surge.scenario.models import Phase, ScenarioModel
from surge.scenario.problems import Problem
from surge.scenario.variables import Csv

if TYPE_CHECKING:
    from surge.plan.compiled import CompiledRun

SMALL_VALUE_BYTES = 40
"""SMALL_VALUE_BYTES is what the model counts for a value of bounded size (a counter, a
number, a UUID, a timestamp, a pool's value)."""

_DOC = "(docs/scenarios.md, Memory)"


def value_bytes(spec: Mapping[str, Any], model: Any, base_dir: Any) -> int:
    """value_bytes bounds the UTF-8 bytes of one value the variable ``spec`` (as the plan
    carries it; ``model`` the file's variable, ``base_dir`` where its CSV file is) yields: a
    CSV row counts all its columns together."""
    kind = spec["type"]
    if kind == "random-string":
        alphabet = spec.get("alphabet") or "a"
        return int(spec["length"]) * max(len(c.encode()) for c in alphabet)
    if kind == "rows":
        return model.table(base_dir).widest if isinstance(model, (Csv, Prompts)) else len(spec["cells"])
    if kind == "choice":
        return max((len(str(v).encode()) for v in spec["values"]), default=0)
    if kind == "constant":
        return len(str(spec["value"]).encode())
    return SMALL_VALUE_BYTES


def budget_problems(f: ScenarioModel, compiled: CompiledRun) -> list[Problem]:
    """budget_problems lists what each plan of ``compiled`` would hold past a bound of the
    memory model, each at the file's key that passes it (one problem per bound and plan)."""
    problems: list[Problem] = []
    for name, compiled_plan in compiled.plans():
        phases = plan_phases(f, name)
        plan = compiled_plan.to_dict()
        for parts, message in _plan_problems(f, plan, phases):
            problems.append(Problem(file_path(f, phases, parts, plan), message))
    return problems


def _plan_problems(
    f: ScenarioModel, plan: Mapping[str, Any], phases: list[tuple[Path, str, Phase]]
) -> list[tuple[list[str | int], str]]:
    out: list[tuple[list[str | int], str]] = []
    csv_bytes = vu_bytes = 0
    tags: set[tuple[int, str]] = set()
    for i, (scenario, (_, name, phase)) in enumerate(zip(plan["scenarios"], phases, strict=True)):
        sources = {n: source for n, (_, source) in completion_sources(f, name, phase).items()}
        visible = {**f.variables, **phase.variables, **sources}
        values = []
        for j, spec in enumerate(scenario["variables"]):
            values.append((value_bytes(spec, visible.get(spec["name"]), f.base_dir()), j))
            if spec["type"] != "rows":
                continue
            before, csv_bytes = csv_bytes, csv_bytes + len(spec["cells"])
            if before <= MAX_CSV_PLAN_BYTES < csv_bytes:
                out.append(
                    (
                        ["scenarios", i, "variables", j],
                        f"the CSV data of this run adds up to {size_text(csv_bytes)} of cells (a csv variable "
                        f"counts once for each scenario using it), more than the {size_text(MAX_CSV_PLAN_BYTES)} "
                        f"a run may hold {_DOC}: use a smaller file, or fewer scenarios using it",
                    )
                )
        before, vu_bytes = vu_bytes, vu_bytes + phase.executor.peak_vus() * 2 * sum(v for v, _ in values)
        if before <= MAX_VU_VALUE_BYTES < vu_bytes:
            widest, j = max(values, key=lambda v: (v[0], -v[1]))  # the first of the widest
            out.append(
                (
                    ["scenarios", i, "variables", j],
                    f"{phase.executor.peak_vus():,} VUs each holding {len(values)} variable value(s) of up to "
                    f"{size_text(widest)} and the requests rendered from them need about "
                    f"{size_text(vu_bytes)}, more than the {size_text(MAX_VU_VALUE_BYTES)} a run may hold for "
                    f"them {_DOC}: draw shorter values or run fewer VUs",
                )
            )
        for k, seq in enumerate(scenario["flow"]["sequences"]):
            for m, step in enumerate(seq["steps"]):
                tags.add((i, step["tag"]))
                if len(tags) == MAX_TAGS + 1:
                    out.append(
                        (
                            ["scenarios", i, "flow", "sequences", k, "steps", m],
                            f"this step's tag '{step['tag']}' passes the {MAX_TAGS:,} distinct tags a run "
                            "keeps figures for (a tag is a step's name, else METHOD /path, in its scenario; "
                            "docs/scenarios.md, Memory): give the steps that need no figures of their own "
                            "one name",
                        )
                    )
    return out
