"""Value ranges: every number that reaches the engine is checked in Python first, so that an
out-of-range value is one line naming its FILE:LINE and key (or its flag), never the engine's
``invalid plan JSON: ... expected u32 at line 1 column 331``."""

from __future__ import annotations

import pytest

from conftest import surge

URL_FLAG_ROWS = [
    # (flags, the flag the one line must name, fragment of its message)
    (["-d", "inf"], "-d/--duration", "longer than 720h"),
    (["-d", "1e309"], "-d/--duration", "longer than 720h"),
    (["-d", "nan"], "-d/--duration", "'nan' is not a duration: it must be a finite number of seconds"),
    (["--timeout", "NaN"], "--timeout", "it must be a finite number of seconds"),
    (["-d", "99999999h"], "-d/--duration", "longer than 720h"),
    (["--timeout", "1e309"], "--timeout", "longer than 720h"),
    (["--timeout", "inf"], "--timeout", "longer than 720h"),
    (["--grace", "inf"], "--grace", "longer than 720h"),
    (["--grace=-1"], "--grace", "must not be negative"),
    (["-c", "9223372036854775808"], "-c/--connections", "must be from 1 to 1,000,000"),
    (["-c", "5000000000"], "-c/--connections", "must be from 1 to 1,000,000"),
    (["-c", "-3"], "-c/--connections", "must be from 1 to 1,000,000"),
    (["-n", "99999999999999999999999"], "-n/--requests", "must be from 1 to 1,000,000,000,000"),
    (["-r", "inf"], "-r/--rate", "must be a positive number of requests per second"),
    (["-r", "nan"], "-r/--rate", "must be a positive number of requests per second"),
    (["-r", "1e400"], "-r/--rate", "must be a positive number of requests per second"),
    (["-r", "5", "--max-in-flight", "99999999999999999"], "--max-in-flight", "must be from 1 to 1,000,000"),
    (["--threads", "99999999999999999999"], "--threads", "must be from 1 to 1,024"),
]


@pytest.mark.parametrize(("flags", "flag", "message"), URL_FLAG_ROWS, ids=[" ".join(r[0]) for r in URL_FLAG_ROWS])
def test_an_out_of_range_flag_is_named_in_one_line(flags, flag, message):
    run = surge("run", "http://127.0.0.1:9/", *flags)
    assert run.code == 2, run.stderr
    assert run.stderr.startswith(f"surge: error: {flag}: "), run.stderr
    assert message in run.stderr and len(run.stderr.splitlines()) == 1, run.stderr
    assert "plan" not in run.stderr and "column" not in run.stderr


TARGET_FLAG_ROWS = [
    (["--rate-limit", "nan"], "--rate-limit", "must be a finite number"),
    (["--rate-limit", "inf"], "--rate-limit", "must be a finite number"),
    (["--error-rate", "nan"], "--error-rate", "must be a finite number"),
    (["--workers", "99999999999999999999", "--service-time", "1ms"], "--workers", "is out of range"),
    (["--seed", "-1"], "--seed", ""),
    (["--duration", "inf"], "--duration", ""),
]


@pytest.mark.parametrize(("flags", "flag", "message"), TARGET_FLAG_ROWS, ids=[" ".join(r[0]) for r in TARGET_FLAG_ROWS])
def test_an_out_of_range_target_flag_is_named_in_one_line(flags, flag, message):
    run = surge("target", "--bind", "127.0.0.1:0", "--duration", "1s", *flags, timeout=30)
    assert run.code == 2, (run.code, run.stderr)
    assert run.stderr.startswith(f"surge: error: {flag}: "), run.stderr
    assert message in run.stderr and len(run.stderr.splitlines()) == 1, run.stderr
    assert "--config" not in run.stderr


@pytest.mark.parametrize("url", ["http://127.0.0.1:9/a\r\nb", "http://127.0.0.1:9/a\nb\rc"])
def test_a_url_with_line_breaks_is_named_in_one_escaped_line(url):
    run = surge("run", url, "-d", "1s")
    assert run.code == 2, run.stderr
    assert len(run.stderr.splitlines()) == 1 and run.stderr.startswith("surge: error: URL: "), run.stderr
    assert repr(url)[1:-1] in run.stderr, run.stderr  # written as escapes, backslash r and n


def test_a_rate_too_low_to_send_one_request_in_the_duration_exits_3(fresh_target):
    run = surge("run", fresh_target.url, "-r", "1e-9", "-d", "1s")
    assert run.code == 3, (run.code, run.stderr)
    assert "surge: sent nothing: " in run.stderr and "-r/--rate" in run.stderr, run.stderr
    assert fresh_target.received() == 0
