"""A sweep's levels: --vus and --rates lists and ranges, and bad levels naming the flag."""

from __future__ import annotations

import pytest

from surge.core.errors import BadInput
from surge.experiments.levels import parse_rates, parse_vus


@pytest.mark.parametrize(
    "text, expected",
    [
        ("100,500,1000", [100, 500, 1000]),
        ("1000, 100,500", [100, 500, 1000]),
        ("1:64:x2", [1, 2, 4, 8, 16, 32, 64]),
        ("100:1000:x2", [100, 200, 400, 800]),
        ("100:500:+100", [100, 200, 300, 400, 500]),
        ("1:10:x1.5", [1, 2, 3, 5, 8]),  # 1, 1.5, 2.25, 3.4, 5.1, 7.6 rounded, repeats dropped
    ],
)
def test_vu_levels(text, expected):
    assert parse_vus(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("100:3200:x2", [100, 200, 400, 800, 1600, 3200]),
        ("0.5:2:x2", [0.5, 1, 2]),
        ("0.1:0.3:+0.1", pytest.approx([0.1, 0.2, 0.3])),
        ("250.5", [250.5]),
    ],
)
def test_rate_levels(text, expected):
    assert parse_rates(text) == expected


@pytest.mark.parametrize(
    "flag, text, error",
    [
        ("--vus", "0,10", "a level must be from 1 to"),
        ("--vus", "1,1", "a level is given twice: 1"),
        ("--vus", "1:10:x1", "the factor after x must be above 1"),
        ("--rates", "100:50:x2", "END (50) is below START (100)"),
        ("--rates", "1:2:3", "expected a list"),
        ("--rates", "a,b", "expected a number for a level, got 'a'"),
        ("--rates", "1:1e9:+1", "more than 100 levels"),
        ("--rates", "", "no levels given"),
    ],
)
def test_bad_levels_name_the_flag(flag, text, error):
    with pytest.raises(BadInput) as e:
        (parse_vus if flag == "--vus" else parse_rates)(text)
    assert e.value.where == flag and error in str(e.value)
