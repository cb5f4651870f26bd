"""Completion steps against the reference target's inference model (docs/scenarios.md,
"Completions"): a scenario file with two completion steps, chat completions of synthetic prompts
and text completions of CSV prompts holding quotes, line breaks and backslashes, runs against
`surge target`. Every request is one the target parses (it counts each prompt's words as its
prompt tokens and would answer 400 to a body that is not JSON), the prompts are as long as the
file says (the target's prompt-token count, and a TTFT of the prefill of that many tokens), and
the output tokens are the requests times max_tokens, read from the usage each stream ends with."""

from __future__ import annotations

import json

import pytest

from conftest import surge
from surge.engine.target import TargetProcess

PREFILL_MS = 1.0
DECODE_MS = 2.0
CHAT_WORDS, CHAT_TOKENS, CHAT_RUNS = 40, 6, 24
TEXT_WORDS, TEXT_RUNS = 5, 10
CSV_PROMPTS = [
    'say "hi" to me now',  # every prompt TEXT_WORDS words long, however it is written
    "two\nlines and\ttabs here",
    "back\\slash {{x}} é ✓ ok",
]


def test_completion_steps_send_their_prompts_and_count_their_tokens(tmp_path):
    (tmp_path / "prompts.csv").write_text(
        "id,prompt\n" + "".join(f'{i},"' + p.replace('"', '""') + '"\n' for i, p in enumerate(CSV_PROMPTS)),
        newline="",
    )
    assert all(len(p.split()) == TEXT_WORDS for p in CSV_PROMPTS)
    scenario = tmp_path / "completions.yaml"
    with TargetProcess(llm_prefill=f"{PREFILL_MS}ms", llm_decode=f"{DECODE_MS}ms") as target:
        scenario.write_text(
            f"target: {target.url}\n"
            "scenarios:\n"
            "  chat:\n"
            f"    executor: {{type: shared-iterations, vus: 4, iterations: {CHAT_RUNS}}}\n"
            "    flow:\n"
            "      - name: chat\n"
            "        completion:\n"
            "          model: demo\n"
            f"          prompts: {{synthetic: {{tokens: {CHAT_WORDS}, count: 50}}}}\n"
            f"          max_tokens: {CHAT_TOKENS}\n"
            "        check: {status: 200}\n"
            "  text:\n"
            f"    executor: {{type: shared-iterations, vus: 2, iterations: {TEXT_RUNS}}}\n"
            "    flow:\n"
            "      - name: text\n"
            "        completion:\n"
            "          api: text\n"
            "          prompts: {csv: prompts.csv, column: prompt, pick: sequential}\n"
            "          max_tokens: {type: uniform, min: 2, max: 5}\n"
            "        check: {status: 200}\n"
        )
        run = surge("run", str(scenario), "--json", timeout=60)
        llm = target.stats()["llm"]
    assert run.code == 0, run.stderr[-2000:]
    doc = json.loads(run.stdout)
    assert doc["requests"]["failed"] == 0 and doc["requests"]["status_codes"] == {"200": CHAT_RUNS + TEXT_RUNS}
    # The target parsed every body and counted every prompt's words.
    assert llm["started"] == llm["completed"] == CHAT_RUNS + TEXT_RUNS
    assert llm["prompt_tokens"] == CHAT_RUNS * CHAT_WORDS + TEXT_RUNS * TEXT_WORDS
    tags = {t["tag"]: t for t in doc["tags"]}
    chat, text = tags["chat"], tags["text"]
    # Each stream ends with its usage (stream_options.include_usage): its tokens come from it.
    assert chat["requests"]["usage_streams"] == chat["requests"]["token_streams"] == CHAT_RUNS
    assert chat["requests"]["output_tokens"] == CHAT_RUNS * CHAT_TOKENS
    assert text["requests"]["usage_streams"] == TEXT_RUNS
    per_stream = text["requests"]["tokens_per_stream"]
    assert 2 <= per_stream["min"] <= per_stream["max"] <= 5
    assert doc["requests"]["output_tokens"] == llm["output_tokens"]
    # The first token comes after the prefill of the prompt: 40 words, then 5 (6 sequences, a batch of 8).
    for tag, words in ((chat, CHAT_WORDS), (text, TEXT_WORDS)):
        ttft = tag["latency"]["ttft"]
        assert ttft["p50_ms"] == pytest.approx(words * PREFILL_MS, rel=0.1, abs=3), (tag["tag"], ttft)
