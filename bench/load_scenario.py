#!/usr/bin/env python3
"""load_scenario: how long surge takes to load and validate large scenario files.

Usage: .venv/bin/python bench/load_scenario.py [--rounds 3]

Writes four files of about 5 MB to a temporary folder, each of another shape (100,000
variables; a choice of 560,000 values; one JSON body of 75,000 items; 27,000 steps with
JSON bodies and checks), and times `surge.scenario.load(path).compile()` on each: reading,
parsing, validating, the meaning checks, compiling and the engine's own validation of the
plan, i.e. everything `surge run FILE.yaml` does before it sends a request. Prints the size,
the best CPU time of the rounds (process time, which a busy machine disturbs less than wall
time) and the share of it spent in the engine's validate_plan. Sends nothing anywhere.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from surge import _engine
from surge.scenario import load

HEAD = "target: http://127.0.0.1:9/\n"
SCENARIO = (
    "scenarios:\n  s:\n    executor: {type: constant-vus, duration: 1s}\n    flow:\n"
    "      - request:\n          path: '/x/{{c}}'\n          method: POST\n"
)


def variables(n: int) -> str:
    """variables is a file of ``n`` uniform variables (one of them used)."""
    lines = [f"  v{i}: {{type: uniform, min: 1, max: {i + 1}}}" for i in range(n)]
    return HEAD + "variables:\n  c: {type: counter}\n" + "\n".join(lines) + "\n" + SCENARIO


def choice(n: int) -> str:
    """choice is a file whose one variable chooses among ``n`` values."""
    values = ", ".join(f"v{i:06d}" for i in range(n))
    return HEAD + f"variables:\n  c: {{type: choice, values: [{values}]}}\n" + SCENARIO


def body(n: int) -> str:
    """body is a file whose one request sends a JSON body of ``n`` items."""
    items = "\n".join(f"              - {{id: {i}, name: item {i}, tags: [a, b], price: {i * 1.5}}}" for i in range(n))
    return (
        HEAD + "variables:\n  c: {type: counter}\n" + SCENARIO + "          json:\n            items:\n" + items + "\n"
    )


def steps(n: int) -> str:
    """steps is a file of one flow of ``n`` steps, each with a JSON body, a header and a check."""
    out = [HEAD + "scenarios:\n  s:\n    executor: {type: constant-vus, duration: 1s}\n    flow:"]
    for i in range(n):
        out += [
            f"      - name: step {i}",
            f"        request: {{method: POST, path: /tasks/{i}, headers: {{X-A: b}}, "
            f"json: {{a: {i}, b: [1, 2, 3], c: text}}}}",
            "        check: {status: [200, 201]}",
        ]
    return "\n".join(out) + "\n"


SHAPES = [
    ("100,000 variables", variables, 100_000),
    ("a choice of 560,000 values", choice, 560_000),
    ("a JSON body of 75,000 items", body, 75_000),
    ("27,000 steps", steps, 27_000),
]


def main() -> None:
    """main writes the files, times each, and prints one line per shape."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    validate_s = 0.0
    real_validate = _engine.validate_plan

    def timed_validate(text: str) -> str:
        nonlocal validate_s
        start = time.process_time()
        try:
            return real_validate(text)
        finally:
            validate_s += time.process_time() - start

    _engine.validate_plan = timed_validate  # type: ignore[assignment]
    with tempfile.TemporaryDirectory() as folder:
        for name, make, n in SHAPES:
            path = Path(folder) / "scenario.yaml"
            path.write_text(make(n))
            best, engine = float("inf"), 0.0
            for _ in range(args.rounds):
                validate_s = 0.0
                start = time.process_time()
                load(path).compile()
                took = time.process_time() - start
                if took < best:
                    best, engine = took, validate_s
            print(
                f"{name:<30} {path.stat().st_size / 1e6:5.1f} MB   {best:5.2f} s   "
                f"(engine's validate_plan {engine:.2f} s)"
            )


if __name__ == "__main__":
    main()
