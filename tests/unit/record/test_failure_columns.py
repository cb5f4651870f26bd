"""The time series' failure columns follow the engine's failure classes."""

from __future__ import annotations

import re
from pathlib import Path


def test_timeseries_failure_columns_follow_the_engine_classes():
    from surge.record.schema import load_schema
    from surge.record.timeseries import FAILURE_CLASSES

    source = (Path(__file__).parents[3] / "crates" / "surge-engine" / "src" / "measure" / "failure.rs").read_text()
    engine = re.findall(r'FailureClass::\w+ => "(\w+)"', source)
    assert list(FAILURE_CLASSES) == [c for c in engine if c != "interrupted"]
    assert load_schema()["$defs"]["surge_failure_classes"]["propertyNames"]["enum"] == engine
