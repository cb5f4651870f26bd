"""The engine's exception tree from a run: an invalid plan handed to ``_engine.run`` raises
PlanError, a SurgeError and a ValueError (tests/unit/engine/test_engine_errors.py has the rest)."""

from __future__ import annotations

import json

import pytest

from surge import _engine
from surge.core.errors import SurgeError
from surge.engine import execute as errors


def test_an_invalid_plan_raises_plan_error_a_value_error():
    with pytest.raises(ValueError) as err:
        _engine.run(json.dumps({"target": {"url": "http://127.0.0.1:9"}, "scenarios": []}))
    assert isinstance(err.value, errors.PlanError)
    assert isinstance(err.value, SurgeError)
