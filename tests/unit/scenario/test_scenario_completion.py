"""Completion steps (docs/scenarios.md, "Completions"): an OpenAI-compatible completion compiles
to a streamed POST whose JSON body reads its prompt and max_tokens from variables the compiler
adds (a one-column table of JSON-escaped prompts; a uniform or weighted choice of max_tokens);
synthetic prompts are reproducible and as long as drawn. Each mistake's FILE:LINE line is a row
of test_scenario_errors.py's table (COMPLETION_ROWS). No engine run, no network."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from surge.scenario import (
    Completion,
    ConstantVusInput,
    MixEntry,
    NormalLength,
    Prompts,
    Scenario,
    ScenarioError,
    ScenarioFile,
    Step,
    SyntheticPrompts,
    load,
    loads,
)
from surge.scenario.completion import VOCABULARY

HEAD = "target: http://127.0.0.1:8080\nscenarios:\n  a:\n    executor: {type: constant-vus, vus: 3, duration: 1s}\n"
FLOW = HEAD + "    flow:\n      - "


def compiled(step: str, base_dir: Path | str = ".", head: str = FLOW) -> dict:
    """compiled compiles a file whose scenario ``a`` has the one step ``step`` (YAML flow
    style); returns the scenario's plan."""
    f = loads(head + step + "\n", source="t.yaml", base_dir=base_dir, env={})
    return f.compile(env={}).main.to_dict()["scenarios"][0]


def rows_of(variable: dict) -> list[str]:
    """rows_of is a one-column rows variable's cells (as the plan carries them: escaped)."""
    assert variable["type"] == "rows" and variable["columns"] == ["prompt"]
    return variable["cells"].split("\0")[:-1]


def render(body: str, values: dict[str, str]) -> str:
    """render fills a body template's slots as the engine does: each value as it is."""
    return re.sub(r"\{\{([A-Za-z0-9_.]+)\}\}", lambda m: values[m.group(1)], body)


def test_a_chat_completion_compiles_to_a_streamed_post_with_usage():
    scenario = compiled("{name: chat, completion: {model: demo, prompts: {values: [hi]}, max_tokens: 128}}")
    step = scenario["flow"]["sequences"][0]["steps"][0]
    assert step["tag"] == "chat"
    assert step["request"] == {
        "method": "POST",
        "path": "/v1/chat/completions",
        "headers": [["Content-Type", "application/json"]],
        "body": '{"model":"demo","messages":[{"role":"user","content":"{{_completion1_prompts.prompt}}"}],'
        '"max_tokens":128,"stream":true,"stream_options":{"include_usage":true}}',
        "body_base64": None,
    }
    assert scenario["variables"] == [
        {"name": "_completion1_prompts", "type": "rows", "columns": ["prompt"], "cells": "hi\0", "pick": "random"}
    ]
    body = json.loads(render(step["request"]["body"], {"_completion1_prompts.prompt": "hi"}))
    assert body == {
        "model": "demo",
        "messages": [{"role": "user", "content": "hi"}],
        "max_tokens": 128,
        "stream": True,
        "stream_options": {"include_usage": True},
    }


def test_a_text_completion_sends_prompt_to_its_path_with_its_headers_and_timeout():
    scenario = compiled(
        "completion: {api: text, path: /openai/v1/completions, prompts: {values: [hi]}, max_tokens: 4, "
        "timeout: 90s, headers: {content-type: application/json; charset=utf-8, X-Team: '{{team}}'}}",
        head=HEAD.replace("scenarios:", "variables: {team: infra}\nscenarios:") + "    flow:\n      - ",
    )
    step = scenario["flow"]["sequences"][0]["steps"][0]
    assert step["tag"] == "POST /openai/v1/completions" and step["timeout_s"] == 90.0
    request = step["request"]
    assert request["path"] == "/openai/v1/completions"
    assert request["headers"] == [["content-type", "application/json; charset=utf-8"], ["X-Team", "{{team}}"]]
    assert json.loads(render(request["body"], {"_completion1_prompts.prompt": "p"})) == {
        "prompt": "p",
        "max_tokens": 4,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    assert [v["name"] for v in scenario["variables"]] == ["team", "_completion1_prompts"]


NASTY = [
    'say "hi"',
    "two\nlines\r\nand a tab\there",
    "back\\slash \\n not a newline",
    "unicode: é ✓ 🙂",
    "a {{slot}} stays text",
    "control \x01 char",
    "",
]


def test_prompts_with_quotes_and_line_breaks_make_valid_json_bodies(tmp_path):
    """The engine puts a value into a body as it is: each prompt is JSON-escaped when compiling,
    so the body parses back to the prompt exactly, from a list and from a CSV file."""
    in_csv = [p for p in NASTY if "\x01" not in p] + ["a line\u2028separator"]  # YAML would read U+2028 as a break
    (tmp_path / "p.csv").write_text(
        "prompt\n" + "".join('"' + p.replace('"', '""') + '"\n' for p in in_csv), newline=""
    )
    values = json.dumps(NASTY, ensure_ascii=False)  # YAML flow style reads JSON (\u0001 escaped)
    for source, expected in (
        (f"{{values: {values}}}", NASTY),
        ("{csv: p.csv}", in_csv),
    ):
        scenario = compiled(f"completion: {{prompts: {source}, max_tokens: 1}}", tmp_path)
        body = scenario["flow"]["sequences"][0]["steps"][0]["request"]["body"]
        cells = rows_of(scenario["variables"][0])
        assert len(cells) == len(expected)
        for cell, prompt in zip(cells, expected, strict=True):
            sent = json.loads(render(body, {"_completion1_prompts.prompt": cell}))
            assert sent["messages"][0]["content"] == prompt


def test_a_csv_column_is_read_in_file_order_and_an_only_column_needs_no_name(tmp_path):
    (tmp_path / "two.csv").write_text("id,text\n1,first\n2,second\n3,third\n")
    (tmp_path / "one.csv").write_text("text\nonly\n")
    scenario = compiled(
        "completion: {prompts: {csv: two.csv, column: text, pick: sequential}, max_tokens: 1}", tmp_path
    )
    assert rows_of(scenario["variables"][0]) == ["first", "second", "third"]
    assert scenario["variables"][0]["pick"] == "sequential"
    scenario = compiled("completion: {prompts: {csv: one.csv}, max_tokens: 1}", tmp_path)
    assert rows_of(scenario["variables"][0]) == ["only"] and scenario["variables"][0]["pick"] == "random"


def _synthetic(tokens: str, count: int = 200, seed: str = "") -> list[str]:
    scenario = compiled(
        f"completion: {{prompts: {{synthetic: {{tokens: {tokens}, count: {count}{seed}}}}}, max_tokens: 1}}"
    )
    return rows_of(scenario["variables"][0])


@pytest.mark.parametrize(
    ("tokens", "low", "high"),
    [
        ("64", 64, 64),
        ("{type: uniform, min: 5, max: 9}", 5, 9),
        ("{type: normal, mean: 50, stdev: 10, min: 30, max: 70}", 30, 70),
        ("{type: normal, mean: 500, stdev: 1, max: 20}", 20, 20),  # all clamped to max
        ("{type: normal, mean: 1, stdev: 30}", 1, 200),  # clamped to the default min of 1
    ],
)
def test_synthetic_prompts_are_as_long_as_drawn_within_min_and_max(tokens, low, high):
    """A synthetic prompt of N words is N prompt tokens to the reference target (it counts
    words): every prompt's word count is a length drawn from the distribution, clamped."""
    prompts = _synthetic(tokens)
    assert len(prompts) == 200
    lengths = [len(p.split()) for p in prompts]
    assert all(p == " ".join(p.split()) for p in prompts)  # one space between words, none around
    assert low <= min(lengths) and max(lengths) <= high, (min(lengths), max(lengths))
    assert {w for p in prompts for w in p.split()} <= set(VOCABULARY)
    if low < high - 2:
        assert len(set(lengths)) > 2  # drawn, not one length


def test_a_normal_length_distribution_has_its_mean_and_stdev():
    lengths = [len(p.split()) for p in _synthetic("{type: normal, mean: 100, stdev: 20}", count=2000)]
    mean = sum(lengths) / len(lengths)
    stdev = (sum((n - mean) ** 2 for n in lengths) / len(lengths)) ** 0.5
    assert mean == pytest.approx(100, abs=2) and stdev == pytest.approx(20, abs=2)


def test_synthetic_prompts_are_the_same_for_the_same_seed_and_differ_for_another():
    tokens = "{type: uniform, min: 10, max: 40}"
    first, again, other = _synthetic(tokens), _synthetic(tokens, seed=", seed: 0"), _synthetic(tokens, seed=", seed: 7")
    assert first == again
    assert first != other
    assert len(set(first)) == len(first)  # distinct prompts: no two alike


@pytest.mark.parametrize(
    ("max_tokens", "expected"),
    [
        ("32", None),
        ("{type: fixed, value: 32}", None),
        (
            "{type: uniform, min: 8, max: 64}",
            {"name": "_completion1_max_tokens", "type": "uniform", "min": 8, "max": 64},
        ),
    ],
)
def test_max_tokens_is_a_number_in_the_body_or_a_variable(max_tokens, expected):
    scenario = compiled(f"completion: {{prompts: {{values: [p]}}, max_tokens: {max_tokens}}}")
    body = scenario["flow"]["sequences"][0]["steps"][0]["request"]["body"]
    variables = scenario["variables"][1:]
    if expected is None:
        assert '"max_tokens":32,' in body and variables == []
    else:
        assert '"max_tokens":{{_completion1_max_tokens}},' in body and variables == [expected]


def test_a_normal_max_tokens_is_a_weighted_choice_of_clamped_draws():
    scenario = compiled(
        "completion: {prompts: {values: [p]}, max_tokens: {type: normal, mean: 100, stdev: 30, min: 60, max: 140}}"
    )
    choice = scenario["variables"][1]
    assert choice["name"] == "_completion1_max_tokens" and choice["type"] == "choice"
    values = [int(v) for v in choice["values"]]
    assert values == sorted(set(values)) and values[0] >= 60 and values[-1] <= 140
    assert sum(choice["weights"]) == 1000
    mean = sum(v * w for v, w in zip(values, choice["weights"], strict=True)) / 1000
    assert mean == pytest.approx(100, abs=4)
    # The same file compiles to the same draws.
    again = compiled(
        "completion: {prompts: {values: [p]}, max_tokens: {type: normal, mean: 100, stdev: 30, min: 60, max: 140}}"
    )
    assert again["variables"][1] == choice


def test_each_completion_step_has_its_own_variables_named_apart_from_the_files():
    head = HEAD.replace("scenarios:", "variables: {_completion1_prompts: taken}\nscenarios:")
    text = (
        head + "    flow:\n"
        "      - completion: {prompts: {values: [a]}, max_tokens: {type: uniform, min: 1, max: 2}}\n"
        "        capture: {_completion2_prompts: {json: $.id}}\n"
        "      - completion: {prompts: {values: [b]}, max_tokens: 3}\n"
    )
    scenario = loads(text, source="t.yaml", env={}).compile(env={}).main.to_dict()["scenarios"][0]
    assert [v["name"] for v in scenario["variables"]] == [
        "_completion1_prompts_",
        "_completion1_max_tokens",
        "_completion2_prompts_",
    ]
    steps = scenario["flow"]["sequences"][0]["steps"]
    assert "{{_completion1_prompts_.prompt}}" in steps[0]["request"]["body"]
    assert "{{_completion2_prompts_.prompt}}" in steps[1]["request"]["body"]


def test_a_mix_entry_may_be_a_completion_tagged_by_its_endpoint():
    text = (
        HEAD + "    mix:\n"
        "      - {weight: 3, completion: {prompts: {values: [a]}, max_tokens: 2}}\n"
        "      - {weight: 1, name: text, completion: {api: text, prompts: {values: [b]}, max_tokens: 2}}\n"
    )
    scenario = loads(text, source="t.yaml", env={}).compile(env={}).main.to_dict()["scenarios"][0]
    sequences = scenario["flow"]["sequences"]
    assert [(s["name"], s["steps"][0]["tag"]) for s in sequences] == [
        ("POST /v1/chat/completions", "POST /v1/chat/completions"),
        ("text", "text"),
    ]
    assert [v["name"] for v in scenario["variables"]] == ["_completion1_prompts", "_completion2_prompts"]


def test_models_built_in_python_compile_like_the_file():
    step = (
        "{name: chat, completion: {model: m, prompts: {synthetic: {tokens: {type: normal, mean: 20, stdev: 4, max: 30}, "
        "count: 50, seed: 3}}, max_tokens: 16}}"
    )
    from_file = loads(FLOW + step + "\n", source="t.yaml", env={}).compile(env={}).main.to_dict()
    built = ScenarioFile(
        target="http://127.0.0.1:8080",
        scenarios={
            "a": Scenario(
                executor=ConstantVusInput(vus=3, duration="1s"),
                flow=[
                    Step(
                        name="chat",
                        completion=Completion(
                            model="m",
                            prompts=Prompts(
                                synthetic=SyntheticPrompts(
                                    tokens=NormalLength(mean=20, stdev=4, max=30), count=50, seed=3
                                )
                            ),
                            max_tokens=16,
                        ),
                    )
                ],
            )
        },
    ).compile(env={})
    assert built.main.to_dict() == from_file


def test_a_model_built_in_python_reports_its_mistakes_by_key():
    f = ScenarioFile(
        target="http://127.0.0.1:8080",
        scenarios={
            "a": Scenario(
                executor=ConstantVusInput(vus=1, duration="1s"),
                mix=[MixEntry(weight=1, request={"path": "/"}, completion=Completion(prompts=Prompts(), max_tokens=1))],
            )
        },
    )
    with pytest.raises(ScenarioError) as err:
        f.compile(env={})
    assert str(err.value).splitlines() == [
        "scenarios.a.mix[0].completion: give either request (any request) or completion (an OpenAI-compatible "
        "completion), not both",
        "scenarios.a.mix[0].completion.prompts: no prompts: give values (a list), csv (a file, with column) or "
        "synthetic (generated)",
    ]


def test_a_mix_entry_with_both_a_request_and_a_completion_or_a_flow_is_refused(tmp_path):
    path = tmp_path / "scenario.yaml"
    path.write_text(
        HEAD + "    mix:\n"
        "      - {weight: 1, request: {path: /}, completion: {prompts: {values: [a]}, max_tokens: 1}}\n"
        "      - weight: 1\n"
        "        flow: [{request: {path: /}}]\n"
        "        completion: {prompts: {values: [a]}, max_tokens: 1}\n"
    )
    with pytest.raises(ScenarioError) as err:
        load(path, env={})
    assert str(err.value).splitlines() == [
        f"{path}:6: scenarios.a.mix[0].completion: give either request (any request) or completion "
        "(an OpenAI-compatible completion), not both",
        f"{path}:7: scenarios.a.mix[1]: give either flow (several steps) or completion (one step), not both",
    ]


def test_prompts_too_long_for_the_vus_are_refused_at_the_prompts_key(tmp_path):
    """The memory model counts what each VU holds of a prompt (docs/scenarios.md, Memory): the
    bound is reported at the completion's prompts, not at a variable the file does not have."""
    path = tmp_path / "scenario.yaml"
    path.write_text(
        HEAD.replace("vus: 3,", "vus: 2000,")
        + "    flow:\n      - completion:\n          prompts: {synthetic: {tokens: 40000, count: 2}}\n"
        "          max_tokens: 4\n"
    )
    with pytest.raises(ScenarioError) as err:
        load(path, env={}).compile(env={})
    lines = str(err.value).splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{path}:7: scenarios.a.flow[0].completion.prompts: 2,000 VUs")
