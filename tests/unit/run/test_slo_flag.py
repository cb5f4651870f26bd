"""``--slo EXPR`` on every command that runs a test (docs/cli.md, "SLOs and goodput"): declared
once in the test's options, it adds its conditions to the run's thresholds (goodput joining a
TTFT or TPOT bound), sets the plan's goodput bounds and the percentiles it reads, for a URL and
a scenario file alike; a bad expression is one BadInput naming --slo."""

from __future__ import annotations

import click
import pytest

from conftest import write
from surge.cli import app
from surge.core.errors import BadInput
from surge.run.spec import Overrides, TestSpec

URL = "http://127.0.0.1:9/v1/chat/completions"

FILE = """\
    target: http://127.0.0.1:9
    scenarios:
      s:
        executor: {type: constant-arrival-rate, rate: 10, duration: 1s, max_vus: 4}
        flow: [{request: {path: /health}}]
    thresholds: ["p(95) < 300ms", "failure_rate < 1%"]
    """


@pytest.mark.parametrize(
    ("slo", "thresholds", "goodput", "percentiles"),
    [
        (
            ("ttft p(95) < 500ms", "tpot p(95) < 50ms"),
            ["ttft p(95) < 500ms", "tpot p(95) < 50ms", "goodput >= 95%"],
            {"ttft_s": 0.5, "tpot_s": 0.05},
            [],
        ),
        (("p(99.5) < 80ms",), ["p(99.5) < 80ms"], {"latency_s": 0.08}, [99.5]),
        (("failure_rate < 0.1%",), ["failure_rate < 0.1%"], None, []),
        ((), [], None, []),
    ],
    ids=["tokens", "latency", "no-bound", "none"],
)
def test_slo_becomes_the_url_runs_thresholds_and_goodput_bounds(slo, thresholds, goodput, percentiles):
    prepared = TestSpec(URL, rate=20.0, slo=slo).prepare()
    assert [t.expr for t in prepared.compiled.thresholds] == thresholds
    main = prepared.compiled.main
    assert main.goodput == goodput and main.percentiles == percentiles
    assert prepared.url_plan == main  # the summary's heading and the diagnosis read the same plan


def test_slo_joins_a_scenario_files_thresholds_the_tightest_bound_counting(tmp_path):
    path = write(tmp_path, FILE)
    prepared = TestSpec(str(path), slo=("p(95) < 200ms",)).prepare(Overrides(rate=5.0, duration_s=1.0))
    exprs = [t.expr for t in prepared.compiled.thresholds]
    assert exprs == ["p(95) < 300ms", "failure_rate < 1%", "p(95) < 200ms"]
    assert prepared.compiled.main.goodput == {"latency_s": 0.2}


@pytest.mark.parametrize("expr", ["ttft p(95) <", "p(95) < 5 parsecs", "nonsense"])
def test_a_bad_slo_names_the_flag(expr):
    with pytest.raises(BadInput) as e:
        TestSpec(URL, rate=20.0, slo=("p(99) < 1s", expr)).prepare()
    assert e.value.where == "--slo" and len(e.value.lines) == 1


@pytest.mark.parametrize("command", ["run", "repeat", "compare", "sweep", "capacity"])
def test_every_command_that_runs_a_test_declares_slo_once(command):
    params = app.get_command(click.Context(app), command).params  # type: ignore[union-attr]
    declared = [p for p in params if "--slo" in getattr(p, "opts", ())]
    assert len(declared) == 1 and declared[0].multiple, declared
