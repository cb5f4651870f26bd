"""CompiledRun: what one run runs, whatever it came from. A scenario file compiles to one
(``surge.scenario.compile``); a URL's flags make one with only ``main`` (``surge.run.spec``).
Its plans are ``surge.plan.model.Plan`` objects, serialised once when handed to the engine
(``Plan.to_dict``), so the run phases hand every plan to the engine the same way."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from surge.plan.model import Plan
from surge.plan.thresholds import Threshold, goodput_bounds, percentiles


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

    def with_thresholds(self, extra: Sequence[Threshold]) -> CompiledRun:
        """with_thresholds returns the run judged by ``extra`` too (``surge run --slo``): the
        thresholds appended, the percentiles they read added to the main plan's, and its goodput
        bounds those of every threshold (the tightest per metric), as a scenario file compiles them."""
        if not extra:
            return self
        thresholds = [*self.thresholds, *extra]
        wanted = sorted(set(self.main.percentiles) | set(percentiles(thresholds)))
        main = replace(self.main, percentiles=wanted, goodput=goodput_bounds(thresholds))
        return replace(self, main=main, thresholds=thresholds)

    def plans(self) -> list[tuple[str, Plan]]:
        """plans lists the plans in the order they run: setup, main, teardown."""
        return [
            (n, p)
            for n, p in (("setup", self.setup), ("main", self.main), ("teardown", self.teardown))
            if p is not None
        ]
