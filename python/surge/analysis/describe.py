"""Describing a figure over repeated runs (docs/experiments.md, "Statistics"; the run is the
unit of analysis): an Estimate (the mean with its Student's t interval), and mean, sample SD
(n - 1), a Student's t confidence interval on the mean, median, min, max, coefficient of
variation; runs that are outliers by the modified z-score (Iglewicz & Hoaglin: M = 0.6745 (x -
median) / MAD, an outlier when |M| > 3.5); flags, each with the advice that follows, for
outliers and for a CV above a limit (10 % unless told)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class Estimate:
    """Estimate is ``n`` values' ``mean``, sample standard deviation ``sd`` (n − 1) and the
    ``confidence`` interval ``ci_low``–``ci_high`` of the mean, mean ± t(1 − (1 − confidence)/2,
    n − 1) · sd / √n; ``sd`` and the interval are None with one value."""

    n: int
    mean: float
    sd: float | None
    ci_low: float | None
    ci_high: float | None
    confidence: float = 0.95


def finite(values: Iterable[float | None]) -> list[float]:
    """finite keeps the values that are numbers (a run without the figure has None)."""
    return [float(v) for v in values if v is not None and math.isfinite(v)]


def estimate(values: Iterable[float | None], confidence: float = 0.95) -> Estimate | None:
    """estimate is the Estimate of the finite values, None when there are none."""
    from scipy.stats import t as student_t  # type: ignore[import-untyped]  # lazy: 0.5 s of start-up

    xs = finite(values)
    if not xs:
        return None
    mean = statistics.fmean(xs)
    if len(xs) < 2:
        return Estimate(1, mean, None, None, None, confidence)
    sd = statistics.stdev(xs)
    half = float(student_t.ppf(1 - (1 - confidence) / 2, len(xs) - 1)) * sd / math.sqrt(len(xs))
    return Estimate(len(xs), mean, sd, mean - half, mean + half, confidence)


DEFAULT_CONFIDENCE = 0.95
"""DEFAULT_CONFIDENCE is the confidence level of the interval on the mean."""

DEFAULT_CV_LIMIT = 0.10
"""DEFAULT_CV_LIMIT is the coefficient of variation above which a figure is flagged (10 %)."""

OUTLIER_LIMIT = 3.5
"""OUTLIER_LIMIT is the |modified z-score| above which a run is an outlier (Iglewicz & Hoaglin)."""

MIN_RUNS_FOR_OUTLIERS = 5
"""MIN_RUNS_FOR_OUTLIERS is the fewest values of a figure among which outliers are looked for:
with fewer, the median and MAD are too coarse (of 3 values the MAD is the smaller gap, so any
uneven spacing would call a run an outlier)."""

MAD_SCALE = 0.6745
"""MAD_SCALE makes the MAD of a normal sample estimate its SD: M = 0.6745 (x - median) / MAD."""

MEAN_AD_SCALE = 0.7979
"""MEAN_AD_SCALE replaces MAD_SCALE when the MAD is 0 (more than half the runs share one value):
M = 0.7979 (x - median) / mean absolute deviation (the mean AD of a normal sample is 0.7979 SD)."""

OUTLIER_ADVICE = (
    "find what disturbed those runs (other work on the machine, a GC pause, a cache or JIT warm-up, "
    "the network) before trusting the mean; the median is robust to them; run again rather than "
    "dropping runs"
)
"""OUTLIER_ADVICE is what to do about an outlier."""

HIGH_CV_ADVICE = (
    "the runs disagree: run more of them (-n), longer ones (-d), or on a quieter machine (nothing else "
    "running, a fixed CPU frequency, the generator and target on separate cores)"
)
"""HIGH_CV_ADVICE is what to do about a figure whose CV is high."""


@dataclass(frozen=True)
class Description:
    """Description: one figure over the runs that have it. ``n`` values; ``mean``; ``sd`` the
    sample standard deviation (n - 1); ``ci_low``/``ci_high`` the ``confidence`` interval on the
    mean from Student's t with n - 1 degrees of freedom; ``median``, ``min``, ``max``; ``cv``
    = sd / |mean|; ``outliers`` the indices (into the values given, Nones included) of the
    outlying runs with their ``z_scores`` (modified z-scores, one per value given, None where
    the value was; outliers are looked for from MIN_RUNS_FOR_OUTLIERS values). sd, CI and cv
    are None for n < 2 (cv also for a mean of 0); everything but
    n is None for n = 0."""

    n: int
    mean: float | None
    sd: float | None
    ci_low: float | None
    ci_high: float | None
    confidence: float
    median: float | None
    min: float | None
    max: float | None
    cv: float | None
    outliers: tuple[int, ...]
    z_scores: tuple[float | None, ...]

    def to_dict(self) -> dict[str, Any]:
        """to_dict is the description as a JSON object (lists for tuples)."""
        found = asdict(self)
        found["outliers"], found["z_scores"] = list(self.outliers), list(self.z_scores)
        return found

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Description:
        """from_dict reads ``to_dict``'s object back."""
        return cls(**{**data, "outliers": tuple(data["outliers"]), "z_scores": tuple(data["z_scores"])})


def modified_z_scores(values: Sequence[float]) -> list[float]:
    """modified_z_scores is each value's M = 0.6745 (x - median) / MAD; when the MAD is 0,
    0.7979 (x - median) / mean absolute deviation from the median; all 0 when both are 0
    (every value equal)."""
    if not values:
        return []
    median = statistics.median(values)
    deviations = [abs(v - median) for v in values]
    mad = statistics.median(deviations)
    if mad > 0:
        return [MAD_SCALE * (v - median) / mad for v in values]
    mean_ad = sum(deviations) / len(deviations)
    if mean_ad > 0:
        return [MEAN_AD_SCALE * (v - median) / mean_ad for v in values]
    return [0.0] * len(values)


def describe(values: Sequence[float | None], *, confidence: float = DEFAULT_CONFIDENCE) -> Description:
    """describe describes the figure's values over the runs (None: the run has no such figure,
    left out)."""
    present = [(i, float(v)) for i, v in enumerate(values) if v is not None and math.isfinite(v)]
    xs = [v for _, v in present]
    n = len(xs)
    if n == 0:
        return Description(
            0, None, None, None, None, confidence, None, None, None, None, (), tuple(None for _ in values)
        )
    # The mean, SD and t interval are surge.analysis.describe's, the ones compare uses.
    est = estimate(xs, confidence)
    assert est is not None  # xs holds a value
    mean, sd, ci_low, ci_high = est.mean, est.sd, est.ci_low, est.ci_high
    cv = sd / abs(mean) if sd is not None and mean != 0 else None
    scores = modified_z_scores(xs)
    by_index: dict[int, float] = {i: z for (i, _), z in zip(present, scores, strict=True)}
    outliers = tuple(i for i, z in by_index.items() if abs(z) > OUTLIER_LIMIT) if n >= MIN_RUNS_FOR_OUTLIERS else ()
    return Description(
        n,
        mean,
        sd,
        ci_low,
        ci_high,
        confidence,
        statistics.median(xs),
        min(xs),
        max(xs),
        cv,
        outliers,
        tuple(by_index.get(i) for i in range(len(values))),
    )


def describe_runs(
    runs: Sequence[Mapping[str, float | None]], names: Sequence[str], *, confidence: float = DEFAULT_CONFIDENCE
) -> dict[str, Description]:
    """describe_runs describes each figure of ``names`` over ``runs`` (one mapping of figures per
    run; a figure a run lacks counts as None)."""
    return {name: describe([run.get(name) for run in runs], confidence=confidence) for name in names}


@dataclass(frozen=True)
class Flag:
    """Flag: something about the runs worth a reader's attention: ``kind`` ``outlier`` (one
    run, an outlier in each of ``figures``), ``high_cv`` (the ``figures`` whose CV is above the
    limit) or ``few_runs`` (the ``figures`` with fewer than 2 values); the ``runs`` concerned
    (labels); ``text`` saying what was found with its numbers, and ``advice``."""

    kind: str
    figures: tuple[str, ...]
    runs: tuple[str, ...]
    text: str
    advice: str

    def to_dict(self) -> dict[str, Any]:
        """to_dict is the flag as a finding (a JSON object: kind, figures, runs, text, advice)."""
        return {**asdict(self), "figures": list(self.figures), "runs": list(self.runs)}


def flags(
    descriptions: Mapping[str, Description],
    labels: Sequence[str],
    *,
    cv_limit: float = DEFAULT_CV_LIMIT,
    titles: Mapping[str, str] | None = None,
) -> list[Flag]:
    """flags lists each run that is an outlier in some figure (with its modified z-scores;
    judged from MIN_RUNS_FOR_OUTLIERS values of a figure), the figures whose CV is above
    ``cv_limit``, and the figures with fewer than 2 values (no SD, CI or CV). ``labels`` name the
    runs described, ``titles`` the figures (their keys otherwise)."""
    titles = titles or {}

    def title(figure: str) -> str:
        return titles.get(figure, figure)

    found: list[Flag] = []
    for i, label in enumerate(labels):
        scores = [(f, d.z_scores[i]) for f, d in descriptions.items() if i in d.outliers]
        if scores:
            shown = ", ".join(f"{title(f)} (M = {z:+.1f})" for f, z in scores if z is not None)
            found.append(
                Flag(
                    "outlier",
                    tuple(f for f, _ in scores),
                    (label,),
                    f"run {label} is an outlier (|M| > {OUTLIER_LIMIT}) in {shown}",
                    OUTLIER_ADVICE,
                )
            )
    high = [(f, d.cv) for f, d in descriptions.items() if d.cv is not None and d.cv > cv_limit]
    if high:
        shown = ", ".join(f"{title(f)} {cv:.1%}" for f, cv in high)
        found.append(
            Flag("high_cv", tuple(f for f, _ in high), (), f"CV above {cv_limit:.0%}: {shown}", HIGH_CV_ADVICE)
        )
    few = [f for f, d in descriptions.items() if d.n < 2]
    if few:
        found.append(
            Flag(
                "few_runs",
                tuple(few),
                (),
                f"fewer than 2 values of {', '.join(map(title, few))}: no SD, CI or CV",
                "give at least 2 runs with the figure (10 or more for a useful CI)",
            )
        )
    return found
