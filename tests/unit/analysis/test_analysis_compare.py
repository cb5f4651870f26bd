"""Compare statistics: figures equal scipy's recomputed, a real 20 % difference is found,
identical distributions are called different no more often than α says, one run is not
tested; scaling between two load levels (seed 001's numbers, and its mistake warned about);
the baseline check with repeats; every pair of variants; a figure trending with run order
flagged as drift (seed 002's falling throughput); the balanced and seeded run orders; the
decimals a figure's spread supports."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from surge.analysis.comparison import analyse
from surge.analysis.describe import estimate
from surge.analysis.drift import trend
from surge.analysis.regression import baseline_significance
from surge.analysis.scaling import scaling
from surge.analysis.significance import better, compare_figure, compare_variants, ratio_of_means_ci
from surge.experiments.variants import run_plan
from surge.present.numbers import figure_with_spread
from surge.present.terminal.experiment_tables import verdicts_line


def _normal(mean: float, cv: float, n: int, rng: np.random.Generator) -> list[float]:
    return list(rng.normal(mean, mean * cv, n))


def test_every_figure_equals_scipy_recomputed():
    rng = np.random.default_rng(1)
    ref, var = _normal(100, 0.05, 10, rng), _normal(90, 0.08, 8, rng)
    c = compare_figure("p95_ms", ref, var, seed=3, resamples=2000)
    assert c.reference is not None and c.variant is not None
    assert (c.reference.n, c.variant.n) == (10, 8)
    assert c.variant.mean == pytest.approx(np.mean(var)) and c.variant.sd == pytest.approx(np.std(var, ddof=1))
    low, high = stats.t.interval(0.95, 7, loc=np.mean(var), scale=stats.sem(var))
    assert (c.variant.ci_low, c.variant.ci_high) == pytest.approx((low, high))
    assert c.difference == pytest.approx(np.mean(var) - np.mean(ref))
    assert c.ratio == pytest.approx(np.mean(var) / np.mean(ref))
    assert c.welch_scale == "log"  # every value positive
    assert c.welch_p == pytest.approx(stats.ttest_ind(np.log(var), np.log(ref), equal_var=False).pvalue)
    assert c.mann_whitney_p == pytest.approx(stats.mannwhitneyu(var, ref, alternative="two-sided").pvalue)
    boot = stats.bootstrap(
        (np.array(var), np.array(ref)),
        lambda a, b, axis=-1: a.mean(axis) / b.mean(axis),
        n_resamples=2000,
        rng=np.random.default_rng(3),
        vectorized=True,
    )
    assert c.ratio_ci == pytest.approx((boot.confidence_interval.low, boot.confidence_interval.high))
    assert c.ratio_ci[0] < c.ratio < c.ratio_ci[1]
    assert c.verdict == "better"  # 10 % lower p95, n = 8 and 10 at CV 5–8 %


def test_a_faster_variant_with_the_larger_spread_is_tested_on_logs():
    """Seed 002's compare in CI: the 32-shard store against the one-lock store, 4 runs each on a
    busy machine. Every shard run served over 3.5× the best one-lock run, yet on the linear scale
    the shard runs' spread (CV 55 %) left Welch at p = 0.05: "no significant difference"."""
    memory = [990.0, 995.2, 996.1, 991.3]
    shard = [12_500.0, 11_000.0, 4_700.0, 3_755.0]
    assert stats.ttest_ind(shard, memory, equal_var=False).pvalue > 0.05
    c = compare_figure("responses_per_s", memory, shard, seed=1, resamples=500)
    assert c.welch_scale == "log" and c.verdict == "better"
    assert c.welch_p == pytest.approx(stats.ttest_ind(np.log(shard), np.log(memory), equal_var=False).pvalue)
    assert c.welch_p < 0.01 and c.note == ""  # Mann–Whitney agrees (2 / 70 = 0.029)
    # a figure with a zero in it stays on the linear scale
    failures = compare_figure("failure_rate", [0.0, 0.01, 0.02], [0.05, 0.06, 0.04], seed=1, resamples=500)
    assert failures.welch_scale == "linear"
    assert failures.welch_p == pytest.approx(
        stats.ttest_ind([0.05, 0.06, 0.04], [0.0, 0.01, 0.02], equal_var=False).pvalue
    )


def test_a_real_twenty_percent_difference_is_significant_in_the_right_direction():
    rng = np.random.default_rng(20)
    base = [
        {"responses_per_s": x, "p95_ms": y}
        for x, y in zip(_normal(1000, 0.05, 10, rng), _normal(50, 0.05, 10, rng), strict=False)
    ]
    faster = [
        {"responses_per_s": x, "p95_ms": y}
        for x, y in zip(_normal(1200, 0.05, 10, rng), _normal(40, 0.05, 10, rng), strict=False)
    ]
    [result] = compare_variants(
        {"monolith": base, "scale-out": faster}, figures=("responses_per_s", "p95_ms"), seed=1, resamples=1000
    )
    assert (result.reference, result.variant) == ("monolith", "scale-out")
    throughput, p95 = result.figures
    assert throughput.verdict == "better" and p95.verdict == "better"
    assert throughput.welch_p < 0.001 and throughput.mann_whitney_p < 0.001
    assert throughput.ratio_ci is not None and 1.1 < throughput.ratio_ci[0] < 1.2 < throughput.ratio_ci[1] < 1.3
    [reverse] = compare_variants(
        {"scale-out": faster, "monolith": base}, figures=("responses_per_s", "p95_ms"), seed=1, resamples=1000
    )
    assert [f.verdict for f in reverse.figures] == ["worse", "worse"]


def test_identical_distributions_are_called_different_no_more_often_than_alpha():
    rng = np.random.default_rng(2024)
    trials = 400
    significant = sum(
        compare_figure("p95_ms", _normal(50, 0.05, 10, rng), _normal(50, 0.05, 10, rng), resamples=0).verdict
        != "no significant difference"
        for _ in range(trials)
    )
    # α = 0.05; the binomial SD over 400 trials is 1.1 %: allow 3 SD
    assert significant / trials <= 0.05 + 0.033, significant


def test_one_run_a_side_is_not_tested_and_says_so():
    c = compare_figure("p95_ms", [50.0], [40.0, 41.0, 39.0])
    assert c.verdict == "not tested" and c.welch_p is None and c.ratio_ci is None
    assert "1 run on one side: no test" in c.note
    assert c.difference == pytest.approx(-10.0) and c.ratio == pytest.approx(0.8)
    missing = compare_figure("p95_ms", [None, None], [40.0, 41.0])
    assert missing.verdict == "not tested" and missing.note == "the reference has no p95_ms"


def test_constant_values_and_zero_means():
    same = compare_figure("failure_rate", [0.0, 0.0, 0.0], [0.0, 0.0, 0.0])
    assert same.verdict == "no significant difference" and same.ratio is None and same.welch_p == 1.0
    # No variation on either side: Welch is undefined, the exact rank test decides. Three runs a
    # side split apart by chance once in ten (2 / C(6, 3)); five runs a side, 2 / C(10, 5) = 0.8 %.
    steps = compare_figure("failure_rate", [0.0, 0.0, 0.0], [0.01, 0.01, 0.01])
    assert steps.verdict == "no significant difference" and "no run-to-run variation" in steps.note
    assert steps.welch_p is None and steps.mann_whitney_p == pytest.approx(0.1)
    exact = compare_figure("failure_rate", [0.0] * 5, [0.01] * 5)
    assert exact.verdict == "worse" and exact.mann_whitney_p == pytest.approx(2 / 252)
    # The CI failure (test_compare, α = 1 %): identical targets, throughput in steps of 4 req/s.
    quantum = compare_figure("responses_per_s", [396.0] * 4, [400.0] * 4, alpha=0.01)
    assert quantum.verdict == "no significant difference" and quantum.mann_whitney_p == pytest.approx(2 / 70)
    assert ratio_of_means_ci([2.0, 2.0], [1.0, 1.0]) == (2.0, 2.0)
    assert ratio_of_means_ci([1.0, 2.0], [0.0, 0.0]) is None


def test_directions():
    assert [
        better(f)
        for f in (
            "responses_per_s",
            "successes_per_s",
            "p99_ms",
            "failure_rate",
            "p(99) < 100ms",
            "rate > 100/s",
            "mystery",
        )
    ] == ["higher", "higher", "lower", "lower", "lower", "higher", None]
    assert compare_figure("mystery", [1.0, 1.1, 0.9], [5.0, 5.1, 4.9], resamples=0).verdict == "different"


def test_compare_needs_two_variants_and_a_known_reference():
    with pytest.raises(ValueError, match="two variants"):
        compare_variants({"a": [{}]})
    with pytest.raises(ValueError, match="'c' is not one of"):
        compare_variants({"a": [{}], "b": [{}]}, reference="c")


def test_scaling_gives_seed_001s_line():
    light = [{"responses_per_s": 21.88, "p95_ms": 606.93, "p99_ms": 830.69, "failure_rate": 0.0}]
    heavy = [{"responses_per_s": 52.60, "p95_ms": 839.94, "p99_ms": 1268.38, "failure_rate": 0.0}]
    s = scaling(35, light, 75, heavy)
    assert s.text() == "2.14× load → 1.38× p95, 2.40× throughput, 112 % efficiency"
    assert s.degradation["p99_ms"] == pytest.approx(1268.38 / 830.69) and s.degradation["failure_rate"] is None
    assert s.efficiency_ci is None
    assert s.warnings == (
        "efficiency 112% above 100 % from 1 run(s) a level: without repeats it cannot be told "
        "from 100 % (run each level several times)",
    )


def test_super_linear_efficiency_inside_the_noise_is_warned_about():
    rng = np.random.default_rng(1)
    light = [{"responses_per_s": x} for x in _normal(22, 0.15, 10, rng)]
    heavy = [{"responses_per_s": x} for x in _normal(52.6, 0.15, 10, rng)]
    s = scaling(35, light, 75, heavy, seed=1, resamples=2000)
    assert s.efficiency is not None and s.efficiency > 1 and s.efficiency_ci is not None
    assert s.efficiency_ci[0] < 1 < s.efficiency_ci[1]
    assert "cannot be told from 100 %" in s.warnings[0]
    linear = scaling(
        10,
        [{"responses_per_s": x} for x in _normal(100, 0.02, 10, rng)],
        20,
        [{"responses_per_s": x} for x in _normal(160, 0.02, 10, rng)],
        seed=1,
        resamples=2000,
    )
    assert linear.efficiency == pytest.approx(0.8, abs=0.03) and linear.warnings == ()
    with pytest.raises(ValueError):
        scaling(75, light, 35, heavy)


def test_baseline_with_repeats_needs_significance_and_the_tolerance():
    rng = np.random.default_rng(5)
    base = [
        {"p95_ms": p, "responses_per_s": x}
        for p, x in zip(_normal(50, 0.05, 10, rng), _normal(1000, 0.05, 10, rng), strict=False)
    ]
    slower = [
        {"p95_ms": p, "responses_per_s": x}
        for p, x in zip(_normal(60, 0.05, 10, rng), _normal(1000, 0.05, 10, rng), strict=False)
    ]
    p95, throughput = baseline_significance(base, slower, ["p95_ms", "responses_per_s"], 0.05, seed=1, resamples=500)
    assert p95.verdict == "regressed" and p95.reason.startswith("significant (Welch p = ")
    assert throughput.verdict == "ok" and throughput.reason.startswith("within noise")
    # significant but within a generous tolerance
    [lenient] = baseline_significance(base, slower, ["p95_ms"], 0.5, seed=1, resamples=500)
    assert lenient.verdict == "ok" and "≤ tolerance 50.0%" in lenient.reason
    # one run a side: the tolerance alone, said
    [single] = baseline_significance(base[:1], slower[:1], ["p95_ms"], 0.05)
    assert single.verdict in ("regressed", "ok", "improved") and "tolerance only" in single.reason
    [missing] = baseline_significance(base, [{"p95_ms": None}], ["p95_ms"], 0.05)
    assert missing.verdict == "missing"
    with pytest.raises(ValueError, match="no better direction"):
        baseline_significance(base, slower, ["mystery"], 0.05)


def test_estimate_of_one_value_has_no_interval():
    one = estimate([3.0, None])
    assert one is not None and (one.n, one.mean, one.sd, one.ci_low) == (1, 3.0, None, None)
    assert estimate([None]) is None


# Every pair, drift with run order, the run order itself, and the precision rule.


def test_every_pair_of_variants_is_compared_not_only_each_with_the_first():
    rng = np.random.default_rng(5)
    runs = {
        name: [{"responses_per_s": x} for x in _normal(mean, 0.02, 6, rng)]
        for name, mean in (("a", 100), ("b", 120), ("c", 140))
    }
    found = compare_variants(runs, figures=("responses_per_s",), seed=1, resamples=0)
    assert [(c.reference, c.variant) for c in found] == [("a", "b"), ("a", "c"), ("b", "c")]
    assert [c.figures[0].verdict for c in found] == ["better", "better", "better"]
    entries = [
        {"label": f"{name} {i}", "variant": name, "complete": True, "verdict": "none", "figures": r}
        for name, rs in runs.items()
        for i, r in enumerate(rs, 1)
    ]
    analysis, _ = analyse(entries, ["a", "b", "c"], reference="b", resamples=0)
    assert [(p["reference"], p["variant"]) for p in analysis["comparisons"]] == [("b", "a"), ("b", "c"), ("a", "c")]


@pytest.mark.parametrize(
    "values, flagged",
    [
        ([100 - 3 * i + (-1) ** i for i in range(10)], True),  # falls 27 % over ten runs, with noise
        ([100 + 0.2 * i for i in range(10)], False),  # a perfect trend, but under 10 % of the median
        ([100, 130, 96, 125, 99, 131, 101, 128, 97, 127], False),  # noise, no trend
        ([100, 90, 80, 70], False),  # four runs: never judged
    ],
)
def test_drift_is_kendall_tau_and_theil_sen_over_run_order(values, flagged):
    t = trend(list(range(1, len(values) + 1)), values)
    assert t.flagged is flagged
    if t.tau is not None:
        assert t.tau == pytest.approx(stats.kendalltau(range(len(values)), values).statistic)
        slope = stats.theilslopes(values, range(1, len(values) + 1)).slope
        assert t.change == pytest.approx(slope * (len(values) - 1))


def _falling(order: list[str], per_round: int = 2) -> list[dict]:
    """_falling are seed 002's stress compare: throughput falls with run order from 12.3k to
    4.3k/s, by 1,000/s a round and by 3,000/s from a round's first run to its second (the
    target slows down over a round, over the experiment, whichever variant runs); ``order``
    is the variants in the order they ran."""
    rounds = {name: 0 for name in set(order)}
    entries = []
    for place, name in enumerate(order):
        rounds[name] += 1
        x = 12_300 - 1_000 * (place // per_round) - 3_000 * (place % per_round)
        entries.append(
            {
                "label": f"{name} {rounds[name]}",
                "variant": name,
                "complete": True,
                "verdict": "none",
                "figures": {"responses_per_s": x, "p99_ms": 1_000_000 / x},
            }
        )
    return entries


def test_throughput_falling_with_run_order_is_flagged_and_the_verdict_says_drift():
    analysis, findings = analyse(
        _falling(["memory", "shard"] * 6), ["memory", "shard"], reference="memory", resamples=0
    )
    trending = {(d["variant"], d["figure"]) for d in analysis["drift"]}
    assert ("memory", "responses_per_s") in trending and ("shard", "responses_per_s") in trending
    p99 = next(c for c in analysis["comparisons"][0]["figures"] if c["figure"] == "p99_ms")
    assert p99["verdict"] == "worse" and p99["may_be_drift"] is True  # the reference always ran first
    line = verdicts_line(analysis["comparisons"][0])
    assert (
        "worse in req/s, p99 ms" in line
        and "the difference may be drift: req/s trends with run order in memory" in line
    )
    assert any(f["kind"] == "drift" for f in findings)
    assert any(f["kind"] == "difference" and "worse (may be drift)" in f["text"] for f in findings)
    # The same drift in a balanced order (A B B A ...) leaves no difference to misread.
    balanced = [name for one in run_plan(["memory", "shard"], 6, "balanced") for name in one]
    analysis, _ = analyse(_falling(balanced), ["memory", "shard"], reference="memory", resamples=0)
    p99 = next(c for c in analysis["comparisons"][0]["figures"] if c["figure"] == "p99_ms")
    assert p99["verdict"] == "no significant difference"


def test_the_balanced_order_is_abba_and_a_shuffle_is_reproducible_from_its_seed():
    assert run_plan(["A", "B"], 4, "balanced") == [["A", "B"], ["B", "A"], ["A", "B"], ["B", "A"]]
    shuffled = run_plan(["A", "B", "C"], 8, "shuffle", seed=41)
    assert shuffled == run_plan(["A", "B", "C"], 8, "shuffle", seed=41)
    assert all(sorted(one) == ["A", "B", "C"] for one in shuffled)
    assert len({tuple(one) for one in shuffled}) > 1
    assert shuffled != run_plan(["A", "B", "C"], 8, "shuffle", seed=42)


@pytest.mark.parametrize(
    "value, name, spread, shown",
    [
        (21.882, "responses_per_s", 0.3797, "21.88"),  # seed 001: 21.88 ± 0.38, not 21.9 ± 0.4
        (0.3797, "responses_per_s", 0.3797, "0.38"),
        (52.597, "responses_per_s", 1.06, "52.6"),  # SD 1.06 → two digits: 1.1
        (52.597, "responses_per_s", 0.0123, "52.597"),
        (606.926, "p95_ms", 50.253, "606.926"),  # never fewer decimals than the unit's
        (606.926, "p95_ms", 0.00042, "606.92600"),
        (21.882, "responses_per_s", None, "21.9"),  # no spread: the unit's rule
        (None, "p95_ms", 1.0, "-"),
    ],
)
def test_figures_keep_the_decimals_their_spread_supports(value, name, spread, shown):
    assert figure_with_spread(value, name, spread) == shown
