"""What the seed suite shares: the calibrated target of an example (its ``# target:`` line), the
seeds' own numbers, and a busy machine (a busy-loop process on each core) for the answers that
must hold on one. The seed suite (tests/seeds/) asks each seed's central questions of surge,
scaled down to run in at most two minutes each, and asserts the answers against targets whose
true answer is known (docs/experiments.md, "The seed suite"). A busy machine is
conftest.busy_loops."""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from surge.engine.target import TargetProcess

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
"""EXAMPLES is the folder of the example scenario files, each calibrated to its seed."""


def target_flags(example: str) -> list[str]:
    """target_flags are the ``surge target`` flags of the example's one ``# target:`` line."""
    lines = [line for line in (EXAMPLES / example).read_text().splitlines() if line.startswith("# target:")]
    assert len(lines) == 1, f"{example}: one '# target: FLAGS' line expected, found {len(lines)}"
    return shlex.split(lines[0].partition(":")[2])


@contextmanager
def example_target(example: str, *extra: str) -> Iterator[TargetProcess]:
    """example_target runs the example's calibrated target (plus ``extra`` flags) on a free port."""
    with TargetProcess(*target_flags(example), *extra) as target:
        yield target


def say(seed: str, **answers: object) -> None:
    """say prints the answers a seed test checked, one line starting ``SEED``, for the record of the
    seed suite's answers next to the seeds' own numbers (docs/experiments.md: ``pytest -s -p
    no:xdist tests/seeds | grep '^SEED'``)."""
    figures = " ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in answers.items())
    print(f"\nSEED {seed} {figures}")
