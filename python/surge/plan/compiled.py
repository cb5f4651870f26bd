"""CompiledRun: what one run runs, whatever it came from. A scenario file compiles to one
(``surge.scenario.compile``); a URL's flags make one with only ``main`` (``surge.run.spec``).
Its plans are ``surge.plan.model.Plan`` objects, serialised once when handed to the engine
(``Plan.to_dict``), so the run phases hand every plan to the engine the same way."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from surge.plan.model import Plan
from surge.plan.thresholds import Threshold


@dataclass(frozen=True)
class CompiledRun:
    """CompiledRun: what a run runs: the measured ``main`` plan, optional ``setup`` and
    ``teardown`` plans (not measured), and the parsed ``thresholds``. A scenario file compiles
    to one; a URL's flags make one with only ``main``."""

    main: Plan
    setup: Plan | None = None
    teardown: Plan | None = None
    thresholds: list[Threshold] = field(default_factory=list)

    def with_pools(self, pools: Mapping[str, list[str]]) -> CompiledRun:
        """with_pools returns the run with ``pools`` (e.g. what setup captured) added to the
        main and teardown plans."""
        added = {k: [str(v) for v in vs] for k, vs in pools.items()}

        def fill(plan: Plan) -> Plan:
            return replace(plan, pools={**plan.pools, **added})

        return replace(self, main=fill(self.main), teardown=fill(self.teardown) if self.teardown is not None else None)

    def plans(self) -> list[tuple[str, Plan]]:
        """plans lists the plans in the order they run: setup, main, teardown."""
        return [
            (n, p)
            for n, p in (("setup", self.setup), ("main", self.main), ("teardown", self.teardown))
            if p is not None
        ]
