"""Input that cannot hurt: a scenario file is bounded while it is read (size, nesting,
aliases, number lengths, tags) and every refusal is one ``FILE:LINE: message`` (exit code 2),
never a traceback, a hang or gigabytes of memory."""

from __future__ import annotations

import pytest

from hostile_inputs import HEAD, TAIL, alias_bomb
from surge.core.limits import MAX_ALIAS_VALUES, MAX_DEPTH, MAX_PROBLEMS, MAX_SCENARIO_FILE_BYTES
from surge.scenario import ScenarioError, load, loads
from surge.scenario.lines import parse_yaml


def refused(text: str) -> list[str]:
    """refused loads ``text`` and returns the error's lines (it must be refused)."""
    with pytest.raises(ScenarioError) as err:
        loads(text, source="f.yaml")
    return str(err.value).splitlines()


LIMIT_ROWS = [
    # (id, text, "f.yaml:LINE: ..." prefix of the one line, fragment of its message)
    (
        "alias bomb",
        HEAD + alias_bomb(9) + TAIL,
        "f.yaml:7: a5[0]",
        f"aliases repeat more than {MAX_ALIAS_VALUES:,} values, the most a scenario file may (*a4 passes it)",
    ),
    (
        "alias bomb in variables",
        HEAD + "variables:\n" + alias_bomb(6, "  ") + TAIL,
        "f.yaml:8: variables.a5[0]",
        "aliases repeat more than",
    ),
    (
        "alias inside its own value",
        HEAD + "x: &x [*x]\n" + TAIL,
        "f.yaml:2: x[0]",
        "alias *x is inside the value &x names",
    ),
    ("alias of nothing", HEAD + "x: *nothing\n" + TAIL, "f.yaml:2", "*nothing"),
    (
        "nesting past the limit",
        HEAD + "x: " + "[" * 1000 + "]" * 1000 + "\n" + TAIL,
        "f.yaml:2: x",
        f"lists and mappings nest more than {MAX_DEPTH} levels deep",
    ),
    (
        "nesting through aliases",
        HEAD + "a: &a " + "[" * 40 + "]" * 40 + "\nb: &b " + "[" * 30 + "*a" + "]" * 30 + "\n" + TAIL,
        "f.yaml:3: b",
        "through alias *a",
    ),
    ("unknown tag", "target: !foo http://127.0.0.1:9/\n" + TAIL, "f.yaml:1: target", "unknown tag '!foo'"),
    ("python tag", HEAD + "x: !!python/object:os.system {}\n" + TAIL, "f.yaml:2: x", "unknown tag '!!python/"),
    ("set tag", HEAD + "x: !!set {a, b}\n" + TAIL, "f.yaml:2: x", "unknown tag '!!set'"),
    (
        "huge integer",
        HEAD
        + "scenarios: {s: {executor: {type: constant-vus, vus: "
        + "9" * 5000
        + ", duration: 1s}, flow: [{request: {}}]}}\n",
        "f.yaml:2: scenarios.s.executor.vus",
        "a number of 5,000 characters: numbers may have at most 100",
    ),
    ("infinite float", HEAD + "x: 1.0e+400\n" + TAIL, "f.yaml:2: x", "'1.0e+400' is not a finite number"),
    ("not a number", HEAD + "x: .nan\n" + TAIL, "f.yaml:2: x", "'.nan' is not a finite number"),
    ("explicit int that is not one", HEAD + "x: !!int abc\n" + TAIL, "f.yaml:2: x", "'abc' is not a number"),
    ("explicit bool that is not one", HEAD + "x: !!bool maybe\n" + TAIL, "f.yaml:2: x", "not true or false"),
    ("a key that is a list", HEAD + "? [a]\n: 1\n" + TAIL, "f.yaml:2", "a key must be a single value"),
    ("two documents", HEAD + TAIL + "---\n" + HEAD, "f.yaml:3", "a second one starts here"),
]


@pytest.mark.parametrize(("text", "prefix", "message"), [r[1:] for r in LIMIT_ROWS], ids=[r[0] for r in LIMIT_ROWS])
def test_a_file_past_a_limit_is_refused_in_one_line(text, prefix, message):
    lines = refused(text)
    assert len(lines) == 1, lines
    assert lines[0].startswith(prefix + ":"), lines[0]
    assert message in lines[0], lines[0]


def test_aliases_and_merges_within_the_limits_still_work():
    doc = parse_yaml("base: &b {k: 1, z: 0}\nm:\n  <<: *b\n  z: 2\nl: [*b, *b]\n")
    assert doc.data["m"] == {"k": 1, "z": 2}
    assert doc.duplicates == []  # a key over a merged one is not given twice
    assert doc.data["l"][0] is doc.data["base"]  # the anchor's object, not a copy
    assert doc.lines[("m", "k")] == 3  # a merged key is at its <<
    value = parse_yaml("x: " + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1) + "\n").data["x"]
    depth = 1
    while value:
        value, depth = value[0], depth + 1
    assert depth == MAX_DEPTH - 1  # the top mapping and MAX_DEPTH - 1 lists: just within the limit


def test_explicit_plain_tags_are_accepted():
    assert parse_yaml("a: !!str 5\nb: !!int '7'\nc: !!float '1.5'\nd: !!null ''\ne: !!map {}\nf: !!seq []\n").data == {
        "a": "5",
        "b": 7,
        "c": 1.5,
        "d": None,
        "e": {},
        "f": [],
    }


def test_a_file_larger_than_the_limit_is_refused_before_it_is_parsed(tmp_path):
    path = tmp_path / "big.yaml"
    path.write_text(HEAD + TAIL + "#" * MAX_SCENARIO_FILE_BYTES + "\n")
    with pytest.raises(ScenarioError, match=r"big\.yaml: is larger than 8 MiB, the most surge reads from one file"):
        load(path)
    with pytest.raises(ScenarioError, match="is larger than 8 MiB, the most a scenario file may be"):
        loads(path.read_text())


def test_many_mistakes_are_listed_up_to_a_bound_then_counted():
    text = HEAD + "".join(f"bogus{i}: 1\n" for i in range(MAX_PROBLEMS + 30)) + TAIL
    lines = refused(text)
    assert len(lines) == MAX_PROBLEMS + 1
    assert lines[-1] == "f.yaml: 30 more mistakes not listed (fix these first)"


def test_a_file_read_the_quick_way_still_names_the_line_of_each_mistake():
    # A valid-looking file is read without the lines of its keys; they are read again for
    # the mistakes found later (meaning checks), and duplicates are always exact.
    steps = "".join(f"      - request: {{path: /{i}}}\n" for i in range(200))
    text = (
        HEAD
        + "scenarios:\n  s:\n    executor: {type: constant-vus, duration: 1s}\n    flow:\n"
        + steps
        + "      - request: {path: '/{{nope}}'}\n"
    )
    assert parse_yaml(text, lines=False).has_lines is False
    assert refused(text) == [
        "f.yaml:206: scenarios.s.flow[200].request.path: '{{nope}}' uses 'nope', which is "
        "not a variable or an earlier capture in scenario 's'"
    ]
    twice = HEAD + "scenarios:\n  s:\n    executor: {type: constant-vus, duration: 1s}\n    flow: []\n    flow: []\n"
    assert refused(twice)[0] == "f.yaml:6: scenarios.s.flow: duplicate key 'flow' (first given on line 5)"
    thrice = twice + "    flow: []\n"
    assert refused(thrice)[:2] == [
        "f.yaml:6: scenarios.s.flow: duplicate key 'flow' (first given on line 5)",
        "f.yaml:7: scenarios.s.flow: duplicate key 'flow' (first given on line 5)",
    ]
    assert parse_yaml(twice, lines=False).has_lines is True


def test_a_control_character_is_refused_at_its_line():
    assert refused(HEAD + "x: a\x01b\n" + TAIL) == [
        "f.yaml:2: not valid YAML: the character U+0001 is not allowed (write it escaped in a double-quoted string, "
        'e.g. "\\x01")'
    ]
