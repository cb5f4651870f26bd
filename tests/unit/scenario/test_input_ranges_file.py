"""Out-of-range values in a scenario file are named by line and key; base-60 numbers stay text."""

from __future__ import annotations

import pytest

from surge.scenario import ScenarioError, loads

HEAD = "target: http://127.0.0.1:9/\n"


def scenario(
    executor: str = "{type: constant-vus, duration: 1s}", flow: str = "[{request: {path: /}}]", extra: str = ""
) -> str:
    """scenario is a one-scenario file with ``executor`` and ``flow`` on lines 4 and 5 and
    ``extra`` keys of the scenario from line 6."""
    return HEAD + f"scenarios:\n  s:\n    executor: {executor}\n    flow: {flow}\n{extra}"


def variable(spec: str) -> str:
    """variable is a file whose line 2 defines the variable ``c`` as ``spec``, used by the one request."""
    return HEAD + f"variables: {{c: {spec}}}\n" + scenario(flow="[{request: {path: '/{{c}}'}}]")[len(HEAD) :]


SCENARIO_ROWS = [
    # (id, text, "LINE: key" of the one mistake, fragment of its message)
    (
        "vus above the engine's",
        scenario("{type: constant-vus, vus: 1000000000000, duration: 1s}"),
        "4: scenarios.s.executor.vus",
        "must be at most 1000000, got 1000000000000",
    ),
    (
        "a stage target above it",
        scenario("{type: ramping-vus, stages: [{duration: 1s, target: 5000000000}]}"),
        "4: scenarios.s.executor.stages[0].target",
        "must be at most 1000000",
    ),
    (
        "start_vus above it",
        scenario("{type: ramping-vus, start_vus: 2000000, stages: [{duration: 1s, target: 1}]}"),
        "4: scenarios.s.executor.start_vus",
        "must be at most 1000000",
    ),
    (
        "iterations",
        scenario("{type: shared-iterations, iterations: 10000000000000}"),
        "4: scenarios.s.executor.iterations",
        "must be at most 1000000000000",
    ),
    (
        "max_vus",
        scenario("{type: constant-arrival-rate, rate: 1, duration: 1s, max_vus: 1099511627776}"),
        "4: scenarios.s.executor.max_vus",
        "must be at most 1000000",
    ),
    (
        "a rate written past float",
        scenario("{type: constant-arrival-rate, rate: '1e400/s', duration: 1s, max_vus: 1}"),
        "4: scenarios.s.executor.rate",
        "'1e400/s' is not a finite rate",
    ),
    (
        "a duration of years",
        scenario("{type: constant-vus, duration: 100000000h}"),
        "4: scenarios.s.executor.duration",
        "'100000000h' is longer than 720h, the longest duration surge accepts",
    ),
    (
        "a start time past a day",
        scenario(extra="    start_time: 25h\n"),
        "6: scenarios.s.start_time",
        "'25h' is longer than 24h, the latest a scenario may start",
    ),
    (
        "a think time past an hour",
        scenario(extra="    think_time: 2h\n"),
        "6: scenarios.s.think_time",
        "'2h' is longer than 1h, the longest think time",
    ),
    (
        "an exponential mean past an hour",
        scenario(extra="    think_time: {type: exponential, mean: 61m}\n"),
        "6: scenarios.s.think_time.mean",
        "'61m' is longer than 1h",
    ),
    (
        "a timeout of years",
        HEAD + "defaults: {timeout: 99999999h}\n" + scenario()[len(HEAD) :],
        "2: defaults.timeout",
        "longer than 720h",
    ),
    (
        "a graceful stop of years",
        HEAD + "graceful_stop: 99999999h\n" + scenario()[len(HEAD) :],
        "2: graceful_stop",
        "longer than 720h",
    ),
    (
        "a request timeout of years",
        scenario(flow="[{request: {path: /, timeout: 99999999h}}]"),
        "5: scenarios.s.flow[0].request.timeout",
        "longer than 720h",
    ),
    (
        "a mix weight past float",
        scenario(flow="null", extra="    mix: [{weight: 1.0e+300, request: {}}]\n"),
        "6: scenarios.s.mix[0].weight",
        "must be at most 1e+09",
    ),
    (
        "a counter past i64",
        variable("{type: counter, start: 9223372036854775808}"),
        "2: variables.c.start",
        "must be at most 9223372036854775807",
    ),
    (
        "a uniform below i64",
        variable("{type: uniform, min: -9223372036854775809, max: 1}"),
        "2: variables.c.min",
        "must be at least -9223372036854775808",
    ),
    (
        "a zipf n past 2^53",
        variable("{type: zipf, n: 9007199254740993, s: 1}"),
        "2: variables.c.n",
        "must be at most 9007199254740992",
    ),
    (
        "a random string of gigabytes",
        variable("{type: random-string, length: 1073741824}"),
        "2: variables.c.length",
        "must be at most 1048576",
    ),
    (
        "a decimal past float",
        variable("{type: decimal, min: -1.0e+300, max: 1}"),
        "2: variables.c.min",
        "must be at least -1e+15",
    ),
    (
        "a choice weight past float",
        variable("{type: choice, values: [a, b], weights: [1.0e+308, 1]}"),
        "2: variables.c.weights[0]",
        "must be at most 1e+09",
    ),
    (
        "a latency check of years",
        scenario(flow="[{request: {}, check: {latency_under: 99999999h}}]"),
        "5: scenarios.s.flow[0].check.latency_under",
        "longer than 720h",
    ),
    (
        "a threshold limit past float",
        scenario() + "thresholds: ['p(95) < 1e400ms']\n",
        "6: thresholds[0]",
        "1e400 is not a finite number",
    ),
    # A boolean is no number (pydantic would read true as 1), and YAML 1.1's base-60 numbers
    # are not read as numbers (190:20:30 was 685,230 VUs, refused only by the descriptor limit).
    (
        "vus: true",
        scenario("{type: constant-vus, vus: true, duration: 1s}"),
        "4: scenarios.s.executor.vus",
        "expected a whole number, got true",
    ),
    (
        "iterations: false",
        scenario("{type: shared-iterations, iterations: false}"),
        "4: scenarios.s.executor.iterations",
        "expected a whole number, got false",
    ),
    (
        "a boolean among weights",
        variable("{type: choice, values: [a, b], weights: [1, true]}"),
        "2: variables.c.weights[1]",
        "expected a number, got true",
    ),
    (
        "a boolean uniform bound",
        variable("{type: uniform, min: 1, max: true}"),
        "2: variables.c.max",
        "expected a whole number, got true",
    ),
    (
        "base-60 vus",
        scenario("{type: constant-vus, vus: 190:20:30, duration: 1s}"),
        "4: scenarios.s.executor.vus",
        "expected a whole number, got '190:20:30'",
    ),
    (
        "base-60 float vus",
        scenario("{type: constant-vus, vus: 1:30.5, duration: 1s}"),
        "4: scenarios.s.executor.vus",
        "expected a whole number, got '1:30.5'",
    ),
    (
        "base-60 with !!int",
        scenario("{type: constant-vus, vus: !!int 1:30, duration: 1s}"),
        "4: scenarios.s.executor.vus",
        "'1:30' is not a number: base-60 numbers",
    ),
    (
        "base-60 duration",
        scenario("{type: constant-vus, duration: 1:30}"),
        "4: scenarios.s.executor.duration",
        "'1:30'",
    ),
]


@pytest.mark.parametrize("text", ["1:30", "190:20:30", "-1:30.5"])
def test_base_60_numbers_stay_text_where_text_is_due(text):
    compiled = loads(
        HEAD + f"variables: {{c: {text}}}\n" + scenario(flow="[{request: {path: '/{{c}}'}}]")[len(HEAD) :], env={}
    ).compile(env={})
    assert compiled.main.to_dict()["scenarios"][0]["variables"][0]["value"] == text


@pytest.mark.parametrize(
    ("text", "prefix", "message"), [r[1:] for r in SCENARIO_ROWS], ids=[r[0] for r in SCENARIO_ROWS]
)
def test_an_out_of_range_value_names_its_line_and_key(text, prefix, message):
    with pytest.raises(ScenarioError) as err:
        loads(text, source="f.yaml", env={}).compile(env={})
    lines = str(err.value).splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"f.yaml:{prefix}: "), lines[0]
    assert message in lines[0], lines[0]
