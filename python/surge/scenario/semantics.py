"""Meaning checks of a scenario file, beyond each value's shape: executor consistency,
variables (CSV files, environment, pools), templates naming defined variables and captures,
and thresholds naming scenarios and tags that exist. Every mistake is returned, not only
the first."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

from surge.scenario.base import Finding, Path
from surge.scenario.completion import Completion, Prompts
from surge.scenario.csvdata import CsvError, CsvTable
from surge.scenario.flow import Step
from surge.scenario.models import Phase, ScenarioModel
from surge.scenario.problems import Problem, key_path
from surge.scenario.request import Request
from surge.scenario.templates import NAME_RULE, TemplateError, is_name, slots
from surge.scenario.variables import AnyVariable, Csv, Env, Pool


def suggest(word: str, choices: Any) -> str:
    """suggest is `` (did you mean 'x'?)`` for the closest of ``choices``, or empty."""
    close = difflib.get_close_matches(word, [str(c) for c in choices], n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def _prefixed(base: Path, findings: list[Finding]) -> list[Problem]:
    return [Problem((*base, *path), message) for path, message in findings]


class _Checker:
    def __init__(self, f: ScenarioModel, env: Mapping[str, str] | None) -> None:
        self.f = f
        self.env = env
        self.problems: list[Problem] = []
        self.tables: dict[int, CsvTable | None] = {}

    def add(self, path: Path, message: str) -> None:
        problem = Problem(path, message)
        if problem not in self.problems:
            self.problems.append(problem)

    # variables ------------------------------------------------------------------------
    def variable(self, path: Path, name: str, var: AnyVariable) -> None:
        if not is_name(name):
            self.add(path, f"'{name}' cannot name a variable ({NAME_RULE})")
        self.problems += _prefixed(path, var.problems())
        if isinstance(var, Csv):
            try:
                self.tables[id(var)] = var.table(self.f.base_dir())
            except CsvError as e:
                self.tables[id(var)] = None
                self.add((*path, "file"), str(e))
        elif isinstance(var, Env) and var.resolve(self.env) is None:
            self.add(
                (*path, "name"),
                f"environment variable {var.name} is not set and has no default (set it, or give default:)",
            )

    # templates --------------------------------------------------------------------------
    def template(
        self,
        path: Path,
        text: str,
        defined: dict[str, tuple[Path, AnyVariable | None]],
        later: dict[str, Path],
        phase: str,
        pools: set[str],
        where: str = "",
    ) -> None:
        try:
            found = slots(text)
        except TemplateError as e:
            self.add(path, str(e))
            return
        for slot in found:
            if slot.name not in defined:
                if slot.name in later:
                    hint = (
                        f": it is captured only later, at {key_path(later[slot.name])}; a capture "
                        "serves the steps after it"
                    )
                else:
                    hint = suggest(slot.name, defined)
                self.add(
                    path,
                    f"'{slot}' uses '{slot.name}', which is not a variable or an earlier "
                    f"capture{where or ''} in {phase}{hint}",
                )
                continue
            def_path, var = defined[slot.name]
            if isinstance(var, Csv):
                table = self.tables.get(id(var))
                if slot.column is None:
                    columns = f": one of {', '.join(table.columns)}" if table else ""
                    self.add(path, f"'{slot}' is a CSV row: name a column, {{{{{slot.name}.COLUMN}}}}{columns}")
                elif table is not None and slot.column not in table.columns:
                    self.add(
                        path,
                        f"'{slot}': {var.file} has no column '{slot.column}'"
                        f"{suggest(slot.column, table.columns)} (columns: {', '.join(table.columns)})",
                    )
            elif slot.column is not None:
                self.add(path, f"'{slot}': only CSV variables have columns; write {{{{{slot.name}}}}}")
            if isinstance(var, Pool) and var.pool not in pools:
                self.add(
                    (*def_path, "pool"),
                    f"pool '{var.pool}' is never filled before {phase}: capture values "
                    f"into it with to_pool: true in setup",
                )

    def json_templates(self, path: Path, value: Any, *args: Any) -> None:
        if isinstance(value, str):
            self.template(path, value, *args)
        elif isinstance(value, dict):
            for k, v in value.items():
                if isinstance(k, str) and "{{" in k:
                    self.template((*path, k), k, *args)
                self.json_templates((*path, k), v, *args)
        elif isinstance(value, list):
            for i, v in enumerate(value):
                self.json_templates((*path, i), v, *args)

    # phases -------------------------------------------------------------------------------
    def phase(self, base: Path, name: str, phase: Phase, pools: set[str]) -> None:
        self.problems += _prefixed((*base, "executor"), phase.executor.problems())
        for vname, var in phase.variables.items():
            self.variable((*base, "variables", vname), vname, var)
        self.problems += _prefixed(base, phase.problems())
        if phase.think_time is not None:
            self.problems += _prefixed((*base, "think_time"), phase.think_time.problems())
        visible: dict[str, tuple[Path, AnyVariable | None]] = {
            **{k: (("variables", k), v) for k, v in self.f.variables.items()},
            **{k: ((*base, "variables", k), v) for k, v in phase.variables.items()},
        }
        label = base[0] if base[0] in ("setup", "teardown") else f"scenario '{name}'"
        for i, entry in enumerate(phase.mix or []):
            self.problems += _prefixed((*base, "mix", i), entry.problems())
        for seq in phase.sequences(name, self.f.default_path()):
            defined = dict(visible)
            captured_later = {
                cname: (*base, *spath, "capture", cname)
                for spath, step in seq.steps
                for cname, c in step.capture.items()
                if not c.to_pool
            }
            for spath, step in seq.steps:
                self.step((*base, *spath), step, defined, captured_later, label, pools)
                if step.completion is not None:
                    self.unique_prompts((*base, *spath, "completion", "prompts"), step.completion.prompts, phase, label)
        for hname, value in self.f.defaults.headers.items():
            self.template(("defaults", "headers", hname), value, visible, {}, label, pools)
        for vname, (vpath, seen) in visible.items():
            if isinstance(seen, Csv) and seen.pick == "unique":
                table = self.tables.get(id(seen))
                if table is not None and self._uses(phase, name, vname) and phase.executor.peak_vus() > table.rows:
                    self.add(
                        (*vpath, "pick"),
                        f"pick: unique needs a row per VU: {label} runs up to "
                        f"{phase.executor.peak_vus()} VUs but {seen.file} has "
                        f"{table.rows} rows",
                    )

    def _uses(self, phase: Phase, name: str, variable: str) -> bool:
        texts = list(self.f.defaults.headers.values())
        for seq in phase.sequences(name, self.f.default_path()):
            for _, step in seq.steps:
                r = step.sent()
                texts += [r.full_path(self.f.default_path()), *r.headers.values(), r.body_text() or ""]
        for text in texts:
            try:
                if any(s.name == variable for s in slots(text)):
                    return True
            except TemplateError:
                continue
        return False

    def step(
        self,
        path: Path,
        step: Step,
        defined: dict[str, tuple[Path, AnyVariable | None]],
        later: dict[str, Path],
        label: str,
        pools: set[str],
    ) -> None:
        self.problems += _prefixed(path, step.problems())
        args = (defined, later, label, pools)
        if step.completion is not None:
            self.completion((*path, "completion"), step.completion, *args)
        else:
            self.request((*path, "request"), step.request, *args)
        if step.check is not None:
            self.problems += _prefixed((*path, "check"), step.check.problems())
        if step.think_time is not None:
            self.problems += _prefixed((*path, "think_time"), step.think_time.problems())
        for cname, capture in step.capture.items():
            cpath = (*path, "capture", cname)
            self.problems += _prefixed(cpath, capture.problems())
            if not is_name(cname):
                self.add(cpath, f"'{cname}' cannot name a capture ({NAME_RULE})")
            elif cname in defined and defined[cname][1] is not None and not capture.to_pool:
                self.add(cpath, f"capture '{cname}' has the name of a variable: rename one of them")
            if not capture.to_pool:
                defined[cname] = (cpath, None)
                later.pop(cname, None)

    def request(self, path: Path, r: Request, *args: Any) -> None:
        self.problems += _prefixed(path, r.problems())
        if r.path is not None:
            self.template((*path, "path"), r.path, *args)
        for k, v in r.query.items():
            self.template((*path, "query", k), k, *args)
            self.template((*path, "query", k), v, *args)
        for k, v in r.headers.items():
            self.template((*path, "headers", k), v, *args)
        if r.body is not None:
            self.template((*path, "body"), r.body, *args)
        if r.has_json():
            self.json_templates((*path, "json"), r.json_body, *args)

    def completion(self, path: Path, c: Completion, *args: Any) -> None:
        self.problems += _prefixed(path, c.problems())
        for key, text in (("model", c.model), ("path", c.path)):
            if text is not None:
                self.template((*path, key), text, *args)
        for k, v in c.headers.items():
            self.template((*path, "headers", k), v, *args)
        prompts = c.prompts
        if prompts.csv is None or prompts.values is not None or prompts.synthetic is not None:
            return
        try:
            table = prompts.source_table(self.f.base_dir())
        except CsvError as e:
            self.add((*path, "prompts", "csv"), str(e))
            return
        columns = ", ".join(table.columns)
        if prompts.column is not None and prompts.column not in table.columns:
            self.add(
                (*path, "prompts", "column"),
                f"{prompts.csv} has no column '{prompts.column}'{suggest(prompts.column, table.columns)} "
                f"(columns: {columns})",
            )
        elif prompts.column_in(table) is None:
            self.add((*path, "prompts"), f"{prompts.csv} has columns {columns}: say which holds the prompts (column:)")

    def unique_prompts(self, path: Path, prompts: Prompts, phase: Phase, label: str) -> None:
        if prompts.pick != "unique":
            return
        if prompts.values is not None:
            count = len(prompts.values)
        elif prompts.synthetic is not None:
            count = prompts.synthetic.count
        else:
            try:
                count = prompts.source_table(self.f.base_dir()).rows
            except CsvError:
                return  # reported with the step
        if phase.executor.peak_vus() > count:
            self.add(
                (*path, "pick"),
                f"pick: unique needs a prompt per VU: {label} runs up to {phase.executor.peak_vus()} VUs "
                f"but there {'is 1 prompt' if count == 1 else f'are {count:,} prompts'}",
            )

    # thresholds ---------------------------------------------------------------------------
    def thresholds(self) -> None:
        tags: dict[str, set[str]] = {}
        for name, scenario in self.f.scenarios.items():
            for seq in scenario.sequences(name, self.f.default_path()):
                for _, step in seq.steps:
                    tags.setdefault(self.tag(step), set()).add(name)
        for i, spec in enumerate(self.f.thresholds):
            path: Path = ("thresholds", i)
            if spec.delay > 0 and not spec.abort_on_fail:
                self.add((*path, "delay"), "delay only applies with abort_on_fail: true")
            if spec.scenario is not None and spec.scenario not in self.f.scenarios:
                self.add(
                    (*path, "scenario"),
                    f"no scenario is named '{spec.scenario}'{suggest(spec.scenario, self.f.scenarios)}",
                )
                continue
            if spec.tag is None:
                continue
            where = tags.get(spec.tag, set())
            if spec.scenario is not None:
                where = where & {spec.scenario}
            if not where:
                scope = f" of scenario '{spec.scenario}'" if spec.scenario else ""
                elsewhere = sorted(tags.get(spec.tag, set()))
                hint = f" (it is a tag of scenario {', '.join(elsewhere)})" if elsewhere else suggest(spec.tag, tags)
                self.add(
                    (*path, "tag"),
                    f"no step{scope} has the tag '{spec.tag}'{hint} (a step's tag is its name, else 'METHOD /path')",
                )
            elif len(where) > 1 and spec.threshold().stat == "p":
                self.add(
                    (*path, "tag"),
                    f"tag '{spec.tag}' is in scenarios {', '.join(sorted(where))}: a "
                    "percentile needs one of them, give scenario:",
                )

    def tag(self, step: Step) -> str:
        return step.name or step.default_tag(self.f.default_path())


def check_file(f: ScenarioModel, env: Mapping[str, str] | None = None) -> list[Problem]:
    """check_file returns every meaning mistake of ``f`` (paths, no lines)."""
    c = _Checker(f, env)
    for name, var in f.variables.items():
        c.variable(("variables", name), name, var)
    setup_pools: set[str] = set()
    if f.setup is not None:
        for seq in f.setup.sequences("setup", f.default_path()):
            setup_pools |= {n for _, s in seq.steps for n, cap in s.capture.items() if cap.to_pool}
    run_pools: set[str] = set(setup_pools)
    for _, name, scenario in [(p, n, s) for p, n, s in f.phases() if p[0] == "scenarios"]:
        for seq in scenario.sequences(name, f.default_path()):
            run_pools |= {n for _, s in seq.steps for n, cap in s.capture.items() if cap.to_pool}
    for path, name, phase in f.phases():
        pools = set() if path == ("setup",) else run_pools if path == ("teardown",) else setup_pools
        c.phase(path, name, phase, pools)
    c.thresholds()
    return c.problems
