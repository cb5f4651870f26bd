"""Units of the scenario format: durations need a unit, rates are per second."""

from __future__ import annotations

from datetime import timedelta

import pytest
from pydantic_core import PydanticCustomError

from surge.scenario.quantities import format_seconds, to_rate, to_seconds


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("500ms", 0.5),
        ("1.5s", 1.5),
        ("2m", 120.0),
        ("1h", 3600.0),
        ("1m30s", 90.0),
        ("250us", 0.00025),
        (" 10s ", 10.0),
        ("0s", 0.0),
        (timedelta(minutes=2), 120.0),
    ],
)
def test_durations_with_units(text, seconds):
    assert to_seconds(text) == pytest.approx(seconds)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (30, "'30' has no unit: write '30s' for seconds or '30ms' for milliseconds"),
        (1.5, "'1.5' has no unit"),
        ("30", "'30' has no unit"),
        ("5 minutes", "'5 minutes' is not a duration (examples: 500ms, 1.5s, 2m, 1m30s, 1h)"),
        ("-1s", "is not a duration"),
        ("", "is not a duration"),
        (None, "expected a duration such as 500ms"),
        (True, "expected a duration such as 500ms"),
        ([1], "expected a duration such as 500ms"),
    ],
)
def test_bad_durations_say_what_is_expected(value, message):
    with pytest.raises(PydanticCustomError) as err:
        to_seconds(value)
    assert message in str(err.value)


@pytest.mark.parametrize(
    ("value", "per_second"),
    [
        (300, 300.0),
        (2.5, 2.5),
        ("300", 300.0),
        ("300/s", 300.0),
        ("18000/m", 300.0),
        ("7200/h", 2.0),
        ("2/ms", 2000.0),
        (" 10 / min ", 10 / 60),
        ("0", 0.0),
    ],
)
def test_rates(value, per_second):
    assert to_rate(value) == pytest.approx(per_second)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("fast", "'fast' is not a rate (examples: 300, 300/s, 18000/m, 50/h)"),
        ("10/d", "is not a rate"),
        (-5, "a rate cannot be negative"),
        (None, "expected a rate such as 300"),
    ],
)
def test_bad_rates(value, message):
    with pytest.raises(PydanticCustomError) as err:
        to_rate(value)
    assert message in str(err.value)


@pytest.mark.parametrize("seconds", [0.0, 1.0, 0.5, 90.0, 0.000125, 12.345678])
def test_formatted_durations_read_back_exactly(seconds):
    assert to_seconds(format_seconds(seconds)) == pytest.approx(seconds, rel=1e-12)
