"""The over-saturation stop of an experiment's run (surge.experiments.saturation_watch): it reads
each live interval document (peak concurrency, TTFT p50, else latency p50), stops the run the
first time the rule holds with a ``stopped_early`` document, and leaves the drain after the load
window alone."""

from __future__ import annotations

from surge.experiments.saturation_watch import RULE_NAME, SaturationWatch, interval_point, stopped_text


def _interval(t: int, concurrency: int, ttft_ms: float | None, latency_ms: float) -> dict:
    ttft = {"count": 10, "p50_ms": ttft_ms} if ttft_ms is not None else {"count": 0, "p50_ms": None}
    return {
        "start_s": t - 1.0,
        "end_s": float(t),
        "peak_concurrency": concurrency,
        "in_flight": concurrency - 1,
        "latency": {"all": {"count": 10, "p50_ms": latency_ms}, "ttft": ttft},
    }


def test_an_interval_is_read_as_the_rule_reads_it():
    point = interval_point(_interval(3, 40, 12.5, 80.0))
    assert (point.end_s, point.concurrency, point.ttft_ms, point.latency_ms) == (3.0, 40.0, 12.5, 80.0)
    assert interval_point(_interval(3, 40, None, 80.0)).ttft_ms is None
    assert interval_point({"end_s": 1.0, "in_flight": 5, "latency": {}}).concurrency == 5.0


def test_the_watch_stops_a_climbing_run_once_and_says_why():
    watch = SaturationWatch(10.0)
    answers = [watch(_interval(t, 8 + 56 * t, 500.0 * t, 600.0 * t)) for t in range(1, 8)]
    first = next(i for i, a in enumerate(answers) if a is not None)
    stopped = answers[first]
    assert first == 5 and stopped is not None and stopped["rule"] == RULE_NAME  # after the 6th interval
    assert (
        stopped["message"] == "over-saturated after 6.0 s: concurrency 120 → 344, TTFT p50 1.0 s → 3.0 s; stopped early"
    )
    assert stopped["evidence"]["latency_name"] == "TTFT p50"
    assert stopped_text({"stopped_early": stopped}) == stopped["message"]
    assert stopped_text({}) is None and stopped_text({"stopped_early": {"rule": "other"}}) is None


def test_the_drain_after_the_load_window_is_not_watched():
    watch = SaturationWatch(4.0)
    assert all(watch(_interval(t, 8 + 56 * t, 500.0 * t, 600.0 * t)) is None for t in range(1, 10))
    assert len(watch.points) == 4
