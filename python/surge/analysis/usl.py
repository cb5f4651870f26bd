"""USL: Gunther's Universal Scalability Law fitted to a closed-model sweep,
X(N) = λN / (1 + σ(N−1) + κN(N−1)), by bounded nonlinear least squares (scipy), with the
predicted peak concurrency N* = √((1−σ)/κ). See docs/analysis.md ("USL")."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

MIN_LEVELS = 4
"""MIN_LEVELS is the fewest distinct concurrency levels a fit is made from: three parameters
need at least one level more to be checked against anything."""

FEW_LEVELS = 6
"""FEW_LEVELS: below this many levels the fit carries a warning (as R's ``usl`` package does)."""

POOR_R2 = 0.9
"""POOR_R2: a fit whose R² is below it carries a warning."""

_NEGLIGIBLE = 1e-6

_STARTS = [(sigma, kappa) for sigma in (0.01, 0.1, 0.5) for kappa in (1e-4, 1e-6, 1e-8)]


@dataclass(frozen=True)
class UslFit:
    """UslFit is a fitted USL: ``sigma`` (contention, 0–1), ``kappa`` (coherency, ≥ 0),
    ``lambda_`` (throughput of one user, per second), ``peak_n`` (N* = √((1−σ)/κ); None when κ
    is 0: throughput levels off at λ/σ instead of peaking), ``peak_throughput`` (X(N*), or λ/σ
    when κ is 0 and σ > 0, else None), ``r_squared`` over the levels fitted, ``levels`` (how
    many), and ``warnings`` (few levels, a poor fit, N* beyond the levels measured)."""

    sigma: float
    kappa: float
    lambda_: float
    peak_n: float | None
    peak_throughput: float | None
    r_squared: float
    levels: int
    warnings: tuple[str, ...] = ()

    def throughput(self, n: float) -> float:
        """throughput is the fitted X(n)."""
        return usl_throughput(n, self.sigma, self.kappa, self.lambda_)


@dataclass(frozen=True)
class UslRefusal:
    """UslRefusal says why no USL fit is given (too few levels, unusable data, a degenerate fit)."""

    reason: str


def usl_throughput(n: float, sigma: float, kappa: float, lambda_: float) -> float:
    """usl_throughput is X(n) = λn / (1 + σ(n−1) + κn(n−1))."""
    return lambda_ * n / (1 + sigma * (n - 1) + kappa * n * (n - 1))


def _model(params: np.ndarray, n: np.ndarray) -> np.ndarray:
    sigma, kappa, lambda_ = params
    return np.asarray(lambda_ * n / (1 + sigma * (n - 1) + kappa * n * (n - 1)))


def _best_fit(n: np.ndarray, x: np.ndarray) -> np.ndarray | None:
    from scipy.optimize import least_squares  # type: ignore[import-untyped]  # lazy: 0.5 s of start-up

    lambda_0 = float(np.max(x / n))
    best, best_cost = None, math.inf
    for sigma, kappa in _STARTS:
        try:
            found = least_squares(
                lambda p: _model(p, n) - x,
                [sigma, kappa, lambda_0],
                x_scale="jac",
                bounds=([0.0, 0.0, 1e-12 * lambda_0], [1.0, np.inf, np.inf]),
            )
        except (ValueError, FloatingPointError):
            continue
        if found.success and np.all(np.isfinite(found.x)) and found.cost < best_cost:
            best, best_cost = found.x, float(found.cost)
    return best


def fit_usl(concurrency: Sequence[float], throughput: Sequence[float]) -> UslFit | UslRefusal:
    """fit_usl fits the USL to throughput (responses per second) at each concurrency (VUs);
    a refusal when there are fewer than MIN_LEVELS distinct levels, a level below 1 VU or
    without positive finite throughput, throughput equal everywhere, or a fit that does not
    converge or explains less than a flat line (R² < 0)."""
    if len(concurrency) != len(throughput):
        raise ValueError("fit_usl: concurrency and throughput differ in length")
    n, x = np.asarray(concurrency, dtype=float), np.asarray(throughput, dtype=float)
    if len(set(n.tolist())) < MIN_LEVELS:
        return UslRefusal(
            f"a USL fit needs at least {MIN_LEVELS} distinct concurrency levels, this sweep has {len(set(n.tolist()))}"
        )
    if np.any(n < 1) or not np.all(np.isfinite(n)):
        return UslRefusal("a USL fit needs concurrency levels of 1 VU or more")
    if not np.all(np.isfinite(x)) or np.any(x <= 0):
        return UslRefusal("a USL fit needs a positive throughput at every level")
    total = float(np.sum((x - x.mean()) ** 2))
    if total == 0:
        return UslRefusal("throughput is the same at every level: nothing to fit")
    params = _best_fit(n, x)
    if params is None:
        return UslRefusal("the USL fit did not converge")
    sigma, kappa, lambda_ = (float(p) for p in params)
    heaviest = float(np.max(n))
    # A term worth under a millionth of the denominator at the heaviest level is the optimiser's
    # rounding, not a measured effect: report it as 0 (no retrograde region, no N*).
    sigma = 0.0 if sigma * (heaviest - 1) < _NEGLIGIBLE else sigma
    kappa = 0.0 if kappa * heaviest * (heaviest - 1) < _NEGLIGIBLE else kappa
    r_squared = 1 - float(np.sum((_model(params, n) - x) ** 2)) / total
    if r_squared < 0:
        return UslRefusal(f"the USL fit explains the levels worse than their mean (R² = {r_squared:.2f})")
    peak_n = math.sqrt((1 - sigma) / kappa) if kappa > 0 else None
    if peak_n is not None:
        peak_throughput: float | None = usl_throughput(peak_n, sigma, kappa, lambda_)
    else:
        peak_throughput = lambda_ / sigma if sigma > 0 else None
    warnings = []
    if len(n) < FEW_LEVELS:
        warnings.append(f"only {len(n)} levels: σ and κ are uncertain (fit {FEW_LEVELS} or more)")
    if r_squared < POOR_R2:
        warnings.append(f"poor fit: R² = {r_squared:.2f} < {POOR_R2}")
    if peak_n is not None and peak_n > heaviest:
        warnings.append(f"N* = {peak_n:,.0f} lies beyond the heaviest level measured ({heaviest:,.0f}): extrapolated")
    return UslFit(sigma, kappa, lambda_, peak_n, peak_throughput, r_squared, len(n), tuple(warnings))
