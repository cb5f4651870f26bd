"""CompiledRun: what one run runs, whatever it came from. A scenario file compiles to one
(``surge.scenario.compile``); a URL's flags make one with only ``main``
(``surge.run.spec``). Its plans are in the engine's JSON form (``PlanDict``, docs/plan.md):
a URL run's ``surge.plan.model.Plan`` serialised once (``Plan.to_dict``), a file's built by the
scenario compiler, so the run phases hand every plan to the engine the same way."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from surge.plan.thresholds import Threshold

PlanDict = dict[str, Any]
"""PlanDict is an engine plan as JSON-ready data (docs/plan.md), as a CompiledRun holds it."""


@dataclass(frozen=True)
class CompiledRun:
    """CompiledRun: what a run runs: the measured ``main`` plan, optional ``setup`` and
    ``teardown`` plans (not measured), and the parsed ``thresholds``. A scenario file compiles
    to one; a URL's flags make one with only ``main``."""

    main: PlanDict
    setup: PlanDict | None = None
    teardown: PlanDict | None = None
    thresholds: list[Threshold] = field(default_factory=list)

    def with_pools(self, pools: Mapping[str, list[str]]) -> CompiledRun:
        """with_pools returns the run with ``pools`` (e.g. what setup captured) added to the
        main and teardown plans."""

        def fill(plan: PlanDict | None) -> PlanDict | None:
            if plan is None:
                return None
            return {**plan, "pools": {**plan["pools"], **{k: [str(v) for v in vs] for k, vs in pools.items()}}}

        return replace(self, main=fill(self.main) or self.main, teardown=fill(self.teardown))

    def plans(self) -> list[tuple[str, PlanDict]]:
        """plans lists the plans in the order they run: setup, main, teardown."""
        return [
            (n, p)
            for n, p in (("setup", self.setup), ("main", self.main), ("teardown", self.teardown))
            if p is not None
        ]

    @staticmethod
    def to_json(plan: PlanDict) -> str:
        """to_json serializes a plan for the engine (``surge.engine.execute.run_plan``)."""
        return json.dumps(plan)
