"""Offline tests for the harness's parsers and arithmetic: `python -m pytest bench/tests`."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from surgebench.generators import parse_surge, parse_wrk
from surgebench.measure import Sample
from surgebench.nginx import parse_status
from surgebench.stats import steady_rate, summary

WRK = """\
Running 8s test @ http://127.0.0.1:40000/health
  1 threads and 64 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency   794.12us  210.33us  10.01ms   91.20%
    Req/Sec    80.61k     2.10k   84.00k    70.00%
  Latency Distribution
     50%  760.00us
     75%  850.00us
     90%    0.95ms
     99%    1.52ms
  641528 requests in 8.00s, 91.77MB read
  Socket errors: connect 0, read 3, write 0, timeout 2
  Non-2xx or 3xx responses: 7
Requests/sec:  80190.23
Transfer/sec:     11.47MB
"""


def test_parse_wrk_reads_count_duration_p99_and_errors():
    rep = parse_wrk(WRK)
    assert rep.requests == 641528
    assert rep.duration_s == pytest.approx(8.0)
    assert rep.requests_per_s == pytest.approx(80190.23)
    assert rep.p99_ms == pytest.approx(1.52)
    assert rep.errors == {"connect": 0, "read": 3, "write": 0, "timeout": 2, "non_2xx_3xx": 7}


@pytest.mark.parametrize("text", ["", "garbage", "Running 1s test"])
def test_parse_wrk_reports_unparseable_output(text):
    assert parse_wrk(text).parse_error


@pytest.mark.parametrize(
    "text",
    [
        '{"requests": {"sent": 10, "completed": 9}, "duration_s": 2.0,'
        ' "throughput": {"requests_per_s": 4.5}, "latency": {"all": {"p99_ms": 1.25}}}',
        'starting...\n{"requests": {"sent": 10, "completed": 9}, "duration_s": 2.0,\n'
        ' "throughput": {"requests_per_s": 4.5}, "latency": {"all": {"p99_ms": 1.25}}}\n',
    ],
)
def test_parse_surge_reads_the_contract_keys(text):
    rep = parse_surge(text)
    assert (rep.requests, rep.sent, rep.duration_s) == (9, 10, 2.0)
    assert (rep.requests_per_s, rep.p99_ms) == (4.5, 1.25)


def test_parse_surge_reads_schema_1_names():
    rep = parse_surge(
        '{"schema": "surge.result/1", "duration_s": 8.0, "elapsed_s": 8.01,'
        ' "requests": {"sent": 100, "responses": 99, "failed": 1, "late": 0, "dropped": 2},'
        ' "throughput": {"sent_per_s": 12.5}, "latency": {"all": {"p99_ms": 0.5}}}'
    )
    assert (rep.requests, rep.sent, rep.duration_s, rep.requests_per_s) == (99, 100, 8.01, 12.5)
    assert rep.errors == {"failed": 1, "dropped": 2}


def test_parse_surge_without_json_is_a_parse_error():
    assert parse_surge("error: no such option").parse_error


def test_parse_status():
    st = parse_status(
        "Active connections: 65 \nserver accepts handled requests\n 70 70 123456 \nReading: 0 Writing: 3 Waiting: 62 \n"
    )
    assert (st.active, st.accepts, st.handled, st.requests) == (65, 70, 70, 123456)
    assert (st.reading, st.writing, st.waiting) == (0, 3, 62)


def test_steady_rate_trims_start_and_end():
    # idle 1 s, ramp, 10 s at exactly 1000/s, then idle: trimmed window sees exactly 1000/s.
    samples, count = [], 0
    for i in range(30):
        t = i * 0.5
        if 1.0 < t <= 11.0:
            count += 500 if t > 1.5 else 123  # a partial first interval
        samples.append(Sample(t, count, 1))
    got = steady_rate(samples, trim_s=1.0)
    assert got["rate"] == pytest.approx(1000.0)
    assert got["window_s"] == pytest.approx(8.0)  # 1.0–11.0 s less 1 s each end


def test_steady_rate_needs_activity():
    assert steady_rate([Sample(i * 0.5, 0, 1) for i in range(10)]) is None


def test_summary_median_and_spread():
    s = summary([3.0, None, 1.0, 2.0])
    assert (s["n"], s["median"], s["min"], s["max"]) == (3, 2.0, 1.0, 3.0)
    assert s["spread_pct"] == pytest.approx(100.0)
    assert summary([None]) is None


def test_parse_surge_reads_statuses_captures_and_engine_cpu():
    rep = parse_surge(
        '{"schema": "surge.result/1", "duration_s": 8.0, "elapsed_s": 8.0,'
        ' "requests": {"sent": 5, "responses": 5, "status_codes": {"200": 4, "404": 1}},'
        ' "generator": {"cpu": {"user_s": 0.25, "system_s": 1.0}},'
        ' "captures": [{"name": "title", "scenario": "s", "tag": "t", "found": 4, "missing": 1}],'
        ' "notes": ["busy"]}'
    )
    assert rep.status_codes == {"200": 4, "404": 1}
    assert rep.captures == [{"name": "title", "found": 4, "missing": 1}]
    assert rep.engine_cpu_s == pytest.approx(1.25)
    assert rep.notes == ["busy"]


def test_parse_surge_rejects_a_json_array():
    assert parse_surge("[1, 2]").parse_error


def test_template_plans_have_the_issue_shape():
    from surgebench import plans

    static = plans.static_plan("http://127.0.0.1:1", 64, 8)
    tpl = plans.templated_plan("http://127.0.0.1:1", 64, 8, 1000)
    for p in (static, tpl):
        assert p["threads"] == 1
        assert p["scenarios"][0]["executor"] == {"type": "constant-vus", "vus": 64, "duration_s": 8}
    assert "variables" not in static["scenarios"][0]
    step = static["scenarios"][0]["flow"]["sequences"][0]["steps"][0]
    assert step["request"]["path"] == "/tasks/7" and "captures" not in step
    sc = tpl["scenarios"][0]
    assert sc["variables"] == [
        {"name": "id", "type": "uniform", "min": 1, "max": 1000},
        {"name": "rid", "type": "uuid"},
    ]
    step = sc["flow"]["sequences"][0]["steps"][0]
    assert step["request"]["path"] == "/tasks/{{id}}?trace={{rid}}"
    assert step["captures"] == [{"name": "title", "from": "json", "path": "$.title"}]
    setup = plans.setup_plan("http://127.0.0.1:1", 1000)["scenarios"][0]
    assert setup["executor"]["iterations"] == 1000


def _run(sent, received, codes, captures=()):
    from surgebench.generators import GenReport
    from surgebench.measure import Measurement

    rep = GenReport(requests=sent, sent=sent, duration_s=8.0, status_codes=codes, captures=list(captures))
    return Measurement("run_plan", [], 0, False, 8.0, 8.0, 1.0, 7.0, 9.0, rep, received, 8.0, 7.0, 8.0, 8.0, [], "", "")


def test_template_check_wants_200s_every_capture_and_matching_counts():
    from surgebench.sections import _template_check

    ok = [{"name": "title", "found": 1000, "missing": 0}]
    assert _template_check(_run(1000, 1000, {"200": 1000}), captured=False) == ""
    assert _template_check(_run(1000, 1000, {"200": 1000}, ok), captured=True) == ""
    assert "non-200" in _template_check(_run(1000, 1000, {"200": 999, "404": 1}, ok), True)
    assert "capture" in _template_check(_run(1000, 1000, {"200": 1000}), captured=True)
    missing = [{"name": "title", "found": 999, "missing": 1}]
    assert "capture" in _template_check(_run(1000, 1000, {"200": 1000}, missing), True)
    assert "received" in _template_check(_run(1000, 990, {"200": 1000}), captured=False)


FIXTURES = Path(__file__).resolve().parent / "fixtures"


def _fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


def test_parse_oha_reads_a_real_oha_1_16_json():
    # oha 1.16 -q 5000 -z 2s -c 256 --worker-threads 1 --latency-correction against nginx
    from surgebench.generators import parse_oha

    rep = parse_oha(_fixture("oha-1.16-open.json"))
    assert rep.parse_error is None
    assert rep.requests == 9996 and rep.status_codes == {"200": 9996}
    assert rep.duration_s == pytest.approx(2.007893962)
    assert rep.p99_ms == pytest.approx(2.292631)
    assert rep.errors == {"aborted due to deadline": 4}
    assert rep.send_lag_p99_ms is None


@pytest.mark.parametrize("text", ["", "[1]", '{"summary": {}}', "Summary:\n  Success rate: 100%"])
def test_parse_oha_reports_unparseable_output(text):
    from surgebench.generators import parse_oha

    assert parse_oha(text).parse_error


def test_parse_surge_reads_the_open_model_fields_of_a_real_run():
    # surge run URL -r 5000 -d 2s --threads 1 --json --no-save against nginx
    rep = parse_surge(_fixture("surge-open.json"))
    assert (rep.sent, rep.requests, rep.dropped, rep.late) == (10000, 10000, 0, 121)
    assert rep.connections_opened == 50
    assert rep.send_lag_p99_ms == pytest.approx(1.207)
    assert rep.service_p99_ms == pytest.approx(1.768)
    assert rep.p99_ms == pytest.approx(2.505)


def test_open_argv_is_one_thread_for_both_tools():
    from surgebench.generators import Generator

    oha = Generator("oha", "oha", "/bin/oha").open_argv("http://127.0.0.1:1/health", 20000, 10, 256)
    assert oha == [
        "/bin/oha",
        "-q",
        "20000",
        "-z",
        "10s",
        "-c",
        "256",
        "--worker-threads",
        "1",
        "--latency-correction",
        "--no-tui",
        "--output-format",
        "json",
        "http://127.0.0.1:1/health",
    ]
    surge = Generator("surge", "surge", "/bin/surge").open_argv("http://127.0.0.1:1/health", 80000, 3)
    assert surge == [
        "/bin/surge",
        "run",
        "http://127.0.0.1:1/health",
        "-r",
        "80000",
        "-d",
        "3s",
        "--threads",
        "1",
        "--json",
        "--no-save",
    ]


def test_open_figures_count_against_the_offered_rate():
    from surgebench.generators import parse_oha
    from surgebench.open_model import inflight_need, open_figures

    m = _run(10000, 9990, {"200": 10000})
    m.report = parse_surge(_fixture("surge-open.json"))
    m.server_accepts = 51
    f = open_figures(m, 5000, 2)
    assert (f["offered"], f["counted"], f["not_sent"], f["dropped"]) == (10000, 9990, 10, 0)
    assert f["connections"] == 51 and f["own_connections"] == 50
    assert f["cpu_us_per_req"] == pytest.approx(8.0 / 9990 * 1e6)
    assert f["inflight_need"] is None  # no closed run given
    closed = _run(800000, 800000, {"200": 800000})  # 64 conns at 100,000/s over 8 s: 0.64 ms
    assert open_figures(m, 5000, 2, closed)["inflight_need"] == 4  # ⌈5000/s × 0.64 ms⌉
    assert inflight_need(80000, closed) == 52 and inflight_need(1, closed) == 1
    assert inflight_need(80000, None) is None
    m.report = parse_oha(_fixture("oha-1.16-open.json"))
    f = open_figures(m, 5000, 2, closed)
    assert f["send_lag_p99_ms"] is None and f["dropped"] is None and f["inflight_need"] == 4
    m.returncode = 1
    assert open_figures(m, 5000, 2) is None


def test_open_is_a_default_section_with_the_issue_rates():
    import importlib

    bench = importlib.import_module("bench")
    args = bench.parse_args([])
    assert "open" in args.only and "open" in bench.SECTIONS
    assert args.open_rates == [20000, 50000, 80000]
    assert bench.parse_args(["--only", "open", "--open-rates", "1000, 2000"]).open_rates == [1000, 2000]
    with pytest.raises(SystemExit):
        bench.parse_args(["--open-rates", "20k"])
