"""ScenarioFile: a scenario file's model that checks and compiles itself, the top of the scenario
layer. The order is one way: the models (``models``) are checked for meaning (``semantics``),
compiled to plans (``compile``), then held to the memory model (``budget``) and the engine's own
validation (``engine_check``), each problem placed at the file's key and line; a CompiledRun
comes out only when nothing is wrong. Reading and compiling a large file builds millions of
small objects at once, none of them in a reference cycle: Python's cyclic collector, which would
walk them again and again as they are made (a fifth to a third of the time of a 5 MB file),
waits until they are built (``paused_gc``).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from surge.plan.compiled import CompiledRun
from surge.scenario.budget import budget_problems
from surge.scenario.compile import compile_plans
from surge.scenario.engine_check import engine_problems
from surge.scenario.models import ScenarioModel
from surge.scenario.problems import Problem, ScenarioError
from surge.scenario.semantics import check_file
from surge.scenario.time_scale import scale_time


class ScenarioFile(ScenarioModel):
    """ScenarioFile: a whole scenario file (its keys are ScenarioModel's) that checks its meaning
    (``problems``) and compiles to the engine's plans (``compile``). Building one in Python is
    the same as writing the YAML file: both validate the same way and compile to the same plan."""

    def problems(self, env: Mapping[str, str] | None = None) -> list[Problem]:
        """problems checks what the models' shapes cannot (undefined variables, CSV files,
        environment variables, pools, executor consistency, threshold scopes) and returns
        every mistake found, located at lines when the model came from a file."""
        found = [self.locate(p) for p in check_file(self, env)]
        self._checked = None if found else (env,)
        return found

    def is_checked(self, env: Mapping[str, str] | None) -> bool:
        """is_checked tells whether ``problems(env)`` found nothing and no key was set since
        (so that compiling a file just loaded does not check it twice)."""
        return self._checked is not None and self._checked[0] is env

    def compile(self, time_scale: float = 1.0, env: Mapping[str, str] | None = None) -> CompiledRun:
        """compile validates the whole file (ScenarioError lists every mistake) and returns
        the engine plans: the measured run, and setup and teardown runs if the file has
        them; ``time_scale`` multiplies every scheduled duration first."""
        return compile_file(self, time_scale=time_scale, env=env)


def compile_file(f: ScenarioFile, time_scale: float = 1.0, env: Mapping[str, str] | None = None) -> CompiledRun:
    """compile_file checks ``f`` (ScenarioError lists every mistake), applies the time
    scale, compiles every phase, holds every plan to the memory model (``budget``) and has the
    engine validate it (errors placed at the file's keys), so that a CompiledRun is one the
    engine runs from setup to teardown."""
    with paused_gc():
        problems = [] if f.is_checked(env) else f.problems(env)
        if problems:
            raise ScenarioError(problems, f._source)
        compiled = compile_plans(scale_time(f, time_scale), env)
        problems = [f.locate(p) for p in budget_problems(f, compiled) or engine_problems(f, compiled)]
    if problems:
        raise ScenarioError(problems, f._source)
    return compiled


@contextmanager
def paused_gc() -> Iterator[None]:
    """paused_gc turns the cyclic garbage collector off for the block (when it was on), then
    freezes the objects built in it (gc.freeze) so that they are not walked again."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            # What was built is long-lived and acyclic: keep the collector from walking it
            # again (a full collection over millions of objects right after enabling).
            gc.freeze()
            gc.enable()
