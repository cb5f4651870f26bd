"""surge stats over runs already in the history (imported k6, hey and oha files: figures an
import lacks leave that figure's n short), recorded as an experiment of kind stats; and
surge.analysis.describe against numpy/scipy."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

from surge.analysis.describe import MIN_RUNS_FOR_OUTLIERS, describe, flags, modified_z_scores

# surge.analysis.describe against numpy/scipy, and the outlier and CV rules.


def test_describe_equals_numpy_and_scipy_with_missing_values_left_out():
    rng = np.random.default_rng(12)
    values: list[float | None] = [float(v) for v in rng.normal(100, 7, 12)]
    values[3] = None
    x = np.array([v for v in values if v is not None])
    d = describe(values, confidence=0.9)
    n = len(x)
    half = stats.t.ppf(0.95, n - 1) * np.std(x, ddof=1) / np.sqrt(n)
    low, high = stats.t.interval(0.9, n - 1, loc=np.mean(x), scale=stats.sem(x))
    assert d.n == 11 and d.mean == pytest.approx(np.mean(x), rel=1e-12)
    assert d.sd == pytest.approx(np.std(x, ddof=1), rel=1e-12)
    assert (d.ci_low, d.ci_high) == (pytest.approx(low, rel=1e-12), pytest.approx(high, rel=1e-12))
    assert d.ci_high - d.mean == pytest.approx(half, rel=1e-12)
    assert (d.median, d.min, d.max) == (np.median(x), np.min(x), np.max(x))
    assert d.cv == pytest.approx(np.std(x, ddof=1) / np.mean(x), rel=1e-12)
    assert d.z_scores[3] is None and len(d.z_scores) == 12


def test_describe_below_two_values_has_no_sd_ci_or_cv():
    one = describe([None, 4.0])
    assert (one.n, one.mean, one.median, one.sd, one.ci_low, one.ci_high, one.cv) == (
        1,
        4.0,
        4.0,
        None,
        None,
        None,
        None,
    )
    none = describe([None, None])
    assert none.n == 0 and none.mean is None and none.z_scores == (None, None)
    found = flags({"p99_ms": one}, ["1", "2"])
    assert [f.kind for f in found] == ["few_runs"] and "no SD, CI or CV" in found[0].text


def test_modified_z_scores_follow_iglewicz_and_hoaglin():
    x = np.array([10.0, 10.4, 9.8, 10.1, 10.3, 9.9, 14.0])
    mad = np.median(np.abs(x - np.median(x)))
    assert modified_z_scores(list(x)) == pytest.approx(list(0.6745 * (x - np.median(x)) / mad), rel=1e-12)
    d = describe(list(x))
    assert d.outliers == (6,)
    found = flags({"p95_ms": d}, [str(i) for i in range(1, 8)], titles={"p95_ms": "p95 ms"}, cv_limit=0.5)
    assert [(f.kind, f.runs) for f in found] == [("outlier", ("7",))]
    assert found[0].text.startswith("run 7 is an outlier (|M| > 3.5) in p95 ms (M = +")


def test_a_zero_mad_falls_back_to_the_mean_absolute_deviation():
    x = [5.0, 5.0, 5.0, 5.0, 9.0]
    mean_ad = np.mean(np.abs(np.array(x) - 5.0))
    assert modified_z_scores(x) == pytest.approx([0, 0, 0, 0, 0.7979 * 4 / mean_ad])
    assert describe(x).outliers == (4,)
    assert describe([3.0] * 6).outliers == () and modified_z_scores([3.0] * 6) == [0.0] * 6


def test_outliers_need_enough_runs_and_a_high_cv_is_flagged_with_advice():
    few = [10.0, 10.1, 30.0][: MIN_RUNS_FOR_OUTLIERS - 2]
    assert describe(few).outliers == ()
    d = describe([100.0, 130.0, 80.0, 120.0])
    found = flags({"responses_per_s": d}, ["1", "2", "3", "4"], cv_limit=0.1)
    assert [f.kind for f in found] == ["high_cv"]
    assert "run more of them (-n), longer ones (-d), or on a quieter machine" in found[0].advice
    assert flags({"responses_per_s": d}, ["1", "2", "3", "4"], cv_limit=0.25) == []
    assert json.loads(json.dumps(found[0].to_dict()))["figures"] == ["responses_per_s"]
