"""The repeat experiment (``surge repeat``, docs/experiments.md): the same test n times as one
recorded experiment, a pause between two runs, then the statistics of every key figure over the
runs (``surge.analysis.over_runs``)."""

from __future__ import annotations

from surge.analysis.over_runs import analyse
from surge.core.exit_codes import Outcome
from surge.experiments import runner
from surge.experiments.outcome import experiment_outcome
from surge.experiments.recorder import ExperimentRecord
from surge.run.spec import TestSpec


def run_repeat(test: TestSpec, runs: int, cooldown_s: float, cv_limit: float) -> tuple[ExperimentRecord, Outcome]:
    """run_repeat prepares ``test`` (every BadInput before any run), runs it ``runs`` times with
    ``cooldown_s`` between two runs, and returns the concluded record (every run and the
    statistics, a figure flagged when its coefficient of variation is above ``cv_limit``, a
    fraction) and the outcome (experiment_outcome). A stop signal ends it early with the runs
    completed so far."""
    prepared = test.prepare()
    experiment = ExperimentRecord.for_test(
        "repeat", test, {"runs": runs, "cooldown_s": cooldown_s, "cv_limit": cv_limit, "test": test.describe()}
    )
    with experiment.running():
        for i in range(1, runs + 1):
            if i > 1:
                runner.cooldown(cooldown_s)
            runner.run_one(experiment, test, prepared, role=f"repeat {i}/{runs}", label=str(i))
    experiment.conclude(lambda: analyse(experiment.runs, cv_limit=cv_limit))
    return experiment, experiment_outcome(experiment.runs, experiment.stopped, runs, experiment.kept)
