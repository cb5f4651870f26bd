"""One parser per unit (surge.core.units): a value written in a flag and in a scenario file is
read alike, accepted or refused alike, and every refusal names the flag or FILE:LINE."""

from __future__ import annotations

import click
import pytest
from pydantic_core import PydanticCustomError

from surge.cli.options import RATE
from surge.core.errors import BadInput
from surge.core.units import duration_flag, parse_duration, parse_percent, parse_rate, percent_flag, size_text
from surge.scenario import ScenarioError, loads
from surge.scenario.quantities import to_rate, to_seconds

DURATIONS = [
    ("500ms", 0.5),
    ("1.5s", 1.5),
    ("1m30s", 90.0),
    ("200us", 0.0002),
    ("2h", 7200.0),
    ("1d", 86400.0),
    ("1w", 604800.0),
    ("0", 0.0),
    ("500", None),
    ("30", None),
    ("1.5", None),
    ("5 minutes", None),
    ("-1s", None),
    ("-1", None),
    ("nan", None),
    ("", None),
]
"""DURATIONS are texts and the seconds they stand for (None: refused), in a flag and in a file."""


@pytest.mark.parametrize(("text", "seconds"), DURATIONS)
def test_a_duration_reads_the_same_in_a_flag_and_in_a_file(text, seconds):
    if seconds is None:
        with pytest.raises(BadInput):
            duration_flag("--timeout", text, positive=False)
        with pytest.raises(PydanticCustomError):
            to_seconds(text)
    else:
        assert duration_flag("--timeout", text, positive=False) == seconds == parse_duration(text)
        assert to_seconds(text) == seconds


def test_a_bare_duration_asks_for_its_unit_in_a_flag_and_in_a_file():
    with pytest.raises(BadInput) as err:
        duration_flag("--timeout", "500")
    assert str(err.value) == "--timeout: '500' has no unit: write '500s' for seconds or '500ms' for milliseconds"
    text = "target: http://127.0.0.1:9\ndefaults: {timeout: 500}\nscenarios:\n  s:\n"
    text += "    executor: {type: constant-vus, duration: 1s}\n    flow: [{request: {}}]\n"
    with pytest.raises(ScenarioError) as file_err:
        loads(text, source="f.yaml", env={})
    assert str(file_err.value) == (
        "f.yaml:2: defaults.timeout: '500' has no unit: write '500s' for seconds or '500ms' for milliseconds"
    )


@pytest.mark.parametrize("text", ["inf", "1e309"])
def test_an_infinite_duration_is_too_long_in_a_flag_and_in_a_file(text):
    with pytest.raises(BadInput, match="longer than 720h"):
        duration_flag("-d/--duration", text)
    with pytest.raises(PydanticCustomError, match="longer than 720h"):
        to_seconds(text)


RATES = [
    ("300", 300.0),
    ("300/s", 300.0),
    ("100/s", 100.0),
    ("18000/m", 300.0),
    ("2/ms", 2000.0),
    ("7200/hour", 2.0),
    ("1k", None),
    ("1e3/d", None),
    ("fast", None),
]
"""RATES are texts and the rate per second they stand for (None: refused), in a flag and in a file."""


@pytest.mark.parametrize(("text", "per_second"), RATES)
def test_a_rate_reads_the_same_in_a_flag_and_in_a_file(text, per_second):
    if per_second is None:
        with pytest.raises(click.BadParameter, match="is not a rate"):
            RATE.convert(text, None, None)
        with pytest.raises(PydanticCustomError, match="is not a rate"):
            to_rate(text)
    else:
        assert RATE.convert(text, None, None) == pytest.approx(per_second) == parse_rate(text)
        assert to_rate(text) == pytest.approx(per_second)


@pytest.mark.parametrize(
    ("text", "fraction"),
    [("5%", 0.05), ("0.05%", 0.0005), ("0.05", 0.05), ("1", 1.0), ("0", 0.0), ("150%", 1.5), (" 10 % ", 0.1)],
)
def test_a_percentage_is_a_percent_sign_or_a_fraction(text, fraction):
    assert parse_percent(text) == pytest.approx(fraction)


@pytest.mark.parametrize("text", ["5", "lots", "-1%", "nan%", "inf", ""])
def test_a_bare_number_above_one_or_no_number_is_no_percentage(text):
    with pytest.raises(ValueError):
        parse_percent(text)


def test_a_percentage_flag_names_the_flag_and_both_readings():
    with pytest.raises(BadInput) as err:
        percent_flag("--tolerance", "5", above_zero=False, example="5%")
    assert str(err.value) == "--tolerance: '5' is ambiguous: write 5% for 5 percent, or a fraction from 0 to 1"
    with pytest.raises(BadInput) as err:
        percent_flag("--cv-limit", "0", above_zero=True, example="10%")
    assert str(err.value) == "--cv-limit: expected a percentage above 0 such as 10%, got '0'"
    assert percent_flag("--tolerance", "0.05", above_zero=False, example="5%") == 0.05


@pytest.mark.parametrize(
    ("n", "text"), [(512, "512 bytes"), (8 * 2**20, "8 MiB"), (3 * 2**29, "1.5 GiB"), (2**50, "1.02e+03 TiB")]
)
def test_a_size_is_printed_in_binary_units(n, text):
    assert size_text(n) == text
