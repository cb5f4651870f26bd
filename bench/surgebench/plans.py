"""Engine plans (docs/plan.md) for the template section: setup, static and templated reads."""

from __future__ import annotations

import json

# The templated request of the scenarios issue's bar: two variables in the path and query,
# one JSON capture from the response (the task's JSON).
TEMPLATED_PATH = "/tasks/{{id}}?trace={{rid}}"
STATIC_PATH = "/tasks/7"


def _plan(base_url: str, scenario: dict) -> dict:
    return {"target": {"url": base_url}, "threads": 1, "scenarios": [scenario]}


def setup_plan(base_url: str, tasks: int) -> dict:
    """setup_plan creates `tasks` tasks (ids 1..tasks on a fresh target) with POST /tasks."""
    return _plan(
        base_url,
        {
            "name": "setup",
            "executor": {"type": "shared-iterations", "vus": 8, "iterations": tasks},
            "variables": [{"name": "n", "type": "counter", "start": 1}],
            "flow": {
                "sequences": [
                    {
                        "steps": [
                            {
                                "tag": "create",
                                "request": {
                                    "method": "POST",
                                    "path": "/tasks",
                                    "body": '{"title": "task {{n}}", "owner": "bench", "done": false}',
                                },
                                "checks": [{"name": "created", "type": "status", "in": [201]}],
                            }
                        ]
                    }
                ]
            },
        },
    )


def static_plan(base_url: str, vus: int, duration_s: float) -> dict:
    """static_plan reads one fixed task: no variables, no captures (serialized once)."""
    return _plan(
        base_url,
        {
            "name": "static",
            "executor": {"type": "constant-vus", "vus": vus, "duration_s": duration_s},
            "flow": {
                "sequences": [
                    {
                        "steps": [
                            {"tag": "static", "request": {"method": "GET", "path": STATIC_PATH}},
                        ]
                    }
                ]
            },
        },
    )


def templated_plan(base_url: str, vus: int, duration_s: float, tasks: int) -> dict:
    """templated_plan reads a random task with a fresh trace id per iteration and captures
    its title: two variables (uniform, uuid) and one JSON capture."""
    return _plan(
        base_url,
        {
            "name": "templated",
            "executor": {"type": "constant-vus", "vus": vus, "duration_s": duration_s},
            "variables": [
                {"name": "id", "type": "uniform", "min": 1, "max": tasks},
                {"name": "rid", "type": "uuid"},
            ],
            "flow": {
                "sequences": [
                    {
                        "steps": [
                            {
                                "tag": "templated",
                                "request": {"method": "GET", "path": TEMPLATED_PATH},
                                "captures": [{"name": "title", "from": "json", "path": "$.title"}],
                            }
                        ]
                    }
                ]
            },
        },
    )


def encode(plan: dict) -> bytes:
    """encode is the plan as run_plan reads it on stdin."""
    return json.dumps(plan).encode()
