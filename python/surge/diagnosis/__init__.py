"""surge.diagnosis: what limited a run, stated in plain sentences with the numbers behind them
(docs/diagnosis.md). ``findings(result_document, target_samples=..., plan=...)`` diagnoses one
run; ``TargetWatch`` samples the target's process during a run (``--watch-pid``)."""

from surge.diagnosis.finding import ERROR, INFO, SEVERITIES, WARNING, Finding
from surge.diagnosis.findings import findings, generator_bound
from surge.diagnosis.littles_law import LittleInterval, LittlesLaw, littles_law

__all__ = [
    "ERROR",
    "INFO",
    "SEVERITIES",
    "WARNING",
    "Finding",
    "LittleInterval",
    "LittlesLaw",
    "findings",
    "generator_bound",
    "littles_law",
]
