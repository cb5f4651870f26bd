"""YAML with line numbers: the line of every key and item, duplicates, merges, and the few
YAML 1.1 surprises the loader avoids."""

from __future__ import annotations

import pytest

from surge.scenario.lines import YamlSyntaxError, line_of, parse_yaml


def test_every_key_and_item_has_its_line():
    doc = parse_yaml("a: 1\nb:\n  - x: 2\n    y: [1, 2]\n  - 3\n")
    assert doc.data == {"a": 1, "b": [{"x": 2, "y": [1, 2]}, 3]}
    assert doc.lines == {
        (): 1,
        ("a",): 1,
        ("b",): 2,
        ("b", 0): 3,
        ("b", 0, "x"): 3,
        ("b", 0, "y"): 4,
        ("b", 0, "y", 0): 4,
        ("b", 0, "y", 1): 4,
        ("b", 1): 5,
    }


def test_a_missing_key_is_placed_at_its_closest_ancestor():
    doc = parse_yaml("a:\n  b:\n    c: 1\n")
    assert line_of(doc.lines, ("a", "b", "missing", 0)) == 2
    assert line_of({}, ("x",)) is None


def test_duplicate_keys_are_reported_with_both_lines():
    doc = parse_yaml("s:\n  a: 1\n  b: 2\n  a: 3\n")
    assert doc.duplicates == [(("s", "a"), 4, 2)]


def test_merge_keys_and_anchors_resolve():
    doc = parse_yaml("base: &b {k: 1}\nm:\n  <<: *b\n  z: 2\n")
    assert doc.data["m"] == {"k": 1, "z": 2}


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("v: yes", "yes"),
        ("v: no", "no"),
        ("v: on", "on"),
        ("v: off", "off"),
        ("v: true", True),
        ("v: False", False),
        ("v: 2024-01-01", "2024-01-01"),
        ("v: 1.5", 1.5),
        ("v: 10", 10),
        ("v: ~", None),
    ],
)
def test_scalars_keep_their_plain_meaning(text, value):
    assert parse_yaml(text).data["v"] == value


def test_syntax_errors_name_the_line():
    with pytest.raises(YamlSyntaxError) as err:
        parse_yaml("a: 1\nb: [1, 2\nc: 3\n")
    assert err.value.line == 3 and "not valid YAML" in err.value.message


def test_an_empty_document_is_none():
    assert parse_yaml("").data is None
