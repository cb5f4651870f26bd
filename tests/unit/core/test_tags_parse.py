"""--tag parsing: KEY=VALUE pairs, bad tags refused naming the flag, a bad value never echoed."""

from __future__ import annotations

import pytest

from surge.core.errors import BadInput
from surge.core.tags import parse_tags

SECRET = "tag-s3cr3t-value"


@pytest.mark.parametrize(
    "texts, expected",
    [
        ([], {}),
        (["arch=scale-out"], {"arch": "scale-out"}),
        (
            ["arch=scale-out", "build=abc123", "storage=gopool"],
            {"arch": "scale-out", "build": "abc123", "storage": "gopool"},
        ),
        (["empty="], {"empty": ""}),
        (["note=a=b c"], {"note": "a=b c"}),
        (["k.v_1-x=" + "v" * 256], {"k.v_1-x": "v" * 256}),
        (["K" * 64 + "=1"], {"K" * 64: "1"}),
        (
            [f"api_token={SECRET}", f"password={SECRET}", "owner=me"],
            {"api_token": "[redacted]", "password": "[redacted]", "owner": "me"},
        ),
    ],
)
def test_parse_tags(texts, expected):
    tags = parse_tags(texts)
    assert tags == expected
    assert list(tags) == list(expected)


@pytest.mark.parametrize(
    "texts, message",
    [
        (["arch"], "--tag: expected a key, '=' and a value (e.g. --tag arch=scale-out), got no '='"),
        (["=x"], "--tag: key of 0 characters must be 1 to 64 letters, digits, '_', '.' or '-'"),
        (["a b=x"], "--tag: key 'a b' must be 1 to 64 letters, digits, '_', '.' or '-'"),
        (["K" * 65 + "=1"], f"--tag: key '{'K' * 65}' must be 1 to 64 letters, digits, '_', '.' or '-'"),
        (["k=" + "v" * 257], "--tag: value of 'k' is 257 characters long, more than 256"),
        (
            ["k=a\nb"],
            "--tag: value of 'k' holds a character that is not printable (a control character or a line break)",
        ),
        (["k=1", "k=2"], "--tag: key 'k' is given twice"),
    ],
)
def test_bad_tags_are_refused_naming_the_flag(texts, message):
    with pytest.raises(BadInput) as e:
        parse_tags(texts)
    assert str(e.value) == message


def test_a_bad_tag_value_is_never_echoed():
    with pytest.raises(BadInput) as e:
        parse_tags([f"token={SECRET}\x01"])
    assert SECRET not in str(e.value)
