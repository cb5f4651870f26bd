"""USL fit: synthetic sweeps from known σ, κ, λ (with noise) give them back and N* within
tolerance; too few levels and unusable data are refused with a reason."""

from __future__ import annotations

import math

import numpy as np
import pytest

from surge.analysis.usl import MIN_LEVELS, UslFit, UslRefusal, fit_usl, usl_throughput

LEVELS = [1, 2, 4, 8, 16, 32, 64, 128, 256]


def _sweep(sigma: float, kappa: float, lambda_: float, noise: float, seed: int) -> list[float]:
    rng = np.random.default_rng(seed)
    return [usl_throughput(n, sigma, kappa, lambda_) * (1 + rng.normal(0, noise)) for n in LEVELS]


@pytest.mark.parametrize(
    "sigma, kappa, lambda_",
    [
        (0.05, 5e-4, 100.0),  # N* = 43.6
        (0.20, 1e-3, 50.0),  # N* = 28.3
        (0.02, 1e-4, 1000.0),  # N* = 99.0
        (0.10, 2e-5, 20.0),  # N* = 212
    ],
)
def test_fit_recovers_known_parameters_from_noisy_levels(sigma, kappa, lambda_):
    fit = fit_usl(LEVELS, _sweep(sigma, kappa, lambda_, noise=0.02, seed=7))
    assert isinstance(fit, UslFit), fit
    true_peak = math.sqrt((1 - sigma) / kappa)
    assert fit.peak_n is not None and abs(fit.peak_n / true_peak - 1) <= 0.10
    assert abs(fit.sigma - sigma) <= 0.02
    assert abs(fit.kappa / kappa - 1) <= 0.25
    assert abs(fit.lambda_ / lambda_ - 1) <= 0.05
    assert fit.r_squared > 0.98 and fit.levels == len(LEVELS)
    assert fit.peak_throughput == pytest.approx(fit.throughput(fit.peak_n))


def test_exact_data_fits_exactly_and_no_coherency_means_no_peak():
    exact = fit_usl(LEVELS, [usl_throughput(n, 0.05, 5e-4, 100.0) for n in LEVELS])
    assert isinstance(exact, UslFit)
    assert (exact.sigma, exact.kappa, exact.lambda_) == pytest.approx((0.05, 5e-4, 100.0), rel=1e-4)
    assert exact.r_squared == pytest.approx(1.0)
    flat = fit_usl(LEVELS[:7], [usl_throughput(n, 0.1, 0.0, 10.0) for n in LEVELS[:7]])
    assert isinstance(flat, UslFit)
    assert flat.kappa == 0.0 and flat.peak_n is None
    assert flat.peak_throughput == pytest.approx(100.0)  # λ/σ, where throughput levels off


def test_too_few_levels_are_refused_with_the_rule():
    refused = fit_usl([1, 2, 4], [10.0, 19.0, 30.0])
    assert isinstance(refused, UslRefusal)
    assert f"at least {MIN_LEVELS} distinct" in refused.reason and "has 3" in refused.reason
    # repeating a level does not make it count twice
    assert isinstance(fit_usl([1, 2, 4, 4, 4], [10.0, 19.0, 30.0, 31.0, 29.0]), UslRefusal)


@pytest.mark.parametrize(
    "levels, throughput, says",
    [
        ([1, 2, 4, 8], [50.0, 50.0, 50.0, 50.0], "same at every level"),
        ([1, 2, 4, 8], [10.0, 0.0, 30.0, 40.0], "positive throughput"),
        ([0, 2, 4, 8], [10.0, 20.0, 30.0, 40.0], "1 VU or more"),
        ([1, 2, 4, 8], [10.0, float("nan"), 30.0, 40.0], "positive throughput"),
    ],
)
def test_unusable_data_is_refused(levels, throughput, says):
    refused = fit_usl(levels, throughput)
    assert isinstance(refused, UslRefusal) and says in refused.reason


def test_few_levels_and_extrapolated_peaks_carry_warnings():
    fit = fit_usl([1, 2, 4, 8], [usl_throughput(n, 0.05, 1e-4, 10.0) for n in (1, 2, 4, 8)])
    assert isinstance(fit, UslFit)
    assert any("only 4 levels" in w for w in fit.warnings)
    assert any("beyond the heaviest level" in w for w in fit.warnings)
