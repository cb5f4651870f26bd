"""Flag overrides of a scenario file: limits and --insecure override the file's own, and leave the
loaded model unchanged."""

from __future__ import annotations

import textwrap

from conftest import FILE, write
from surge.scenario import load, loads


def test_limits_and_insecure_override_the_files_own():
    f = loads(textwrap.dedent(FILE))
    plan = f.with_overrides(timeout=0.5, graceful_stop=0.0, insecure=True).compile().main.to_dict()
    assert plan["limits"] == {"timeout_s": 0.5, "grace_period_s": 0.0}
    assert plan["target"]["insecure"] is True
    timeouts = [step["timeout_s"] for step in plan["scenarios"][0]["flow"]["sequences"][0]["steps"]]
    assert timeouts == [None, 7.0]  # a request's own timeout stays: it is more specific than the flag
    untouched = f.with_overrides().compile().main.to_dict()
    assert untouched["limits"] == {"timeout_s": 10.0, "grace_period_s": 20.0}
    assert untouched["target"]["insecure"] is False


def test_the_stream_idle_timeout_comes_from_the_file_or_the_flag():
    f = loads(textwrap.dedent(FILE) + "stream_idle_timeout: 2s\n")
    assert f.compile().main.to_dict()["limits"]["stream_idle_timeout_s"] == 2.0
    overridden = f.with_overrides(stream_idle_timeout=0.25).compile().main.to_dict()
    assert overridden["limits"]["stream_idle_timeout_s"] == 0.25


def test_the_loaded_model_is_not_changed_by_an_override(tmp_path):
    path = write(tmp_path, FILE)
    f = load(path)
    f.with_overrides(timeout=1.0)
    assert f.defaults.timeout == 10.0
