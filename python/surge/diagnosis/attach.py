"""attach_diagnosis: a finished run's result gets its ``findings`` and, when the target was
watched, its ``target_process`` (summary.json, ``--json``, the terminal summary)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from surge.diagnosis.findings import findings
from surge.plan.heading import PlanLike

if TYPE_CHECKING:  # psutil (~6 ms of CPU) loads only when --watch-pid is given
    from surge.diagnosis.watch import TargetWatch


def attach_diagnosis(result: dict[str, Any], plan: PlanLike | None, watch: TargetWatch | None) -> None:
    """attach_diagnosis adds ``target_process`` (when ``watch`` is given; a warning on stderr
    when the process ended before the run did) and ``findings`` to the engine ``result`` in
    place."""
    if watch is not None:
        started = result.get("started_at_unix_s")
        warning = watch.warning(started)
        if warning is not None:
            print(warning, file=sys.stderr, flush=True)
        result["target_process"] = watch.document(started)
    result["findings"] = [f.to_dict() for f in findings(result, plan=plan)]
