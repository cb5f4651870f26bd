"""--junit FILE: the run's thresholds and checks as JUnit XML, read back with junitparser: one
testsuite, one testcase per threshold (``expr [scope]``) and per check, failures carrying the
observed value; written when thresholds fail (exit 99), when the run is stopped, and when the
target is unreachable."""

from __future__ import annotations

import json
import signal

import pytest
from junitparser import Error, Failure, JUnitXml

from conftest import MIXED, intervals_logged, run_and_signal, surge, tiny_scenario, write


def cases(path):
    """cases is the one testsuite's testcases of the JUnit file at ``path``."""
    xml = JUnitXml.fromfile(str(path))
    suites = list(xml)
    assert len(suites) == 1
    return suites[0], list(suites[0])


def test_thresholds_and_checks_are_testcases_with_failures_carrying_the_observed_value(fresh_target, tmp_path):
    path = write(tmp_path, MIXED, URL=fresh_target.url)
    junit = tmp_path / "verdicts.xml"
    run = surge("run", str(path), "--json", "--junit", str(junit), "--no-save")
    assert run.code == 99, run.stderr
    doc = run.json()
    suite, testcases = cases(junit)
    assert suite.name == "surge run"
    assert suite.tests == len(doc["thresholds"]) + len(doc["checks"]) == 6
    thresholds = [c for c in testcases if c.classname == "surge.thresholds"]
    checks = [c for c in testcases if c.classname.startswith("surge.checks.")]
    assert [c.name for c in thresholds] == [
        "p(95) < 10s [all]",
        "failure_rate < 1% [all]",
        "p(99) < 10s [scenario 'ok', tag 'health']",
        "checks > 0.4 [all]",
    ]
    for case, verdict in zip(thresholds, doc["thresholds"], strict=False):
        failures = [r for r in case.result if isinstance(r, Failure)]
        assert bool(failures) == (not verdict["passed"])
        if failures:
            assert failures[0].message == f"observed {verdict['observed_text']}: {verdict['status']}"
    assert [(c.classname, c.name) for c in checks] == [
        (f"surge.checks.{k['scenario']}.{k['tag']}", k["name"]) for k in doc["checks"]
    ]
    for case, check in zip(checks, doc["checks"], strict=False):
        failures = [r for r in case.result if isinstance(r, Failure)]
        assert bool(failures) == (check["fails"] > 0)
        if failures:
            total = check["passes"] + check["fails"]
            assert failures[0].message == f"{check['fails']} of {total} failed ({check['passes']} passed)"
    failed = sum(not t["passed"] for t in doc["thresholds"]) + sum(c["fails"] > 0 for c in doc["checks"])
    assert suite.failures == failed == 2 and suite.errors == 0


def test_url_run_junit_has_no_testcases_and_names_the_run(fresh_target, tmp_path):
    junit = tmp_path / "v.xml"
    run = surge("run", f"{fresh_target.url}/health", "-n", "3", "--junit", str(junit), "--out", str(tmp_path / "r"))
    assert run.code == 0, run.stderr
    suite, testcases = cases(junit)
    assert testcases == [] and suite.tests == 0
    assert suite.name == json.loads((tmp_path / "r" / "summary.json").read_text())["meta"]["name"]


def test_interrupted_run_still_writes_its_junit(fresh_target, tmp_path):
    path = tiny_scenario(
        tmp_path,
        fresh_target.url,
        iterations=10_000_000,
        extra="""\
        thresholds:
          - "p(95) < 10s"
        """,
    )
    junit, out = tmp_path / "v.xml", tmp_path / "rec"
    done = run_and_signal(
        ["run", str(path), "--junit", str(junit), "--out", str(out)],
        signal.SIGINT,
        lambda: intervals_logged(out) >= 1,
        cwd=tmp_path,
    )
    assert done.returncode == 130, done.stderr
    suite, testcases = cases(junit)
    assert [c.name for c in testcases] == ["p(95) < 10s [all]"] and suite.failures == 0
    assert dict((p.name, p.value) for p in suite.properties())["stop_signal"] == "SIGINT"


def test_unreachable_target_junit_is_an_error(tmp_path):
    junit = tmp_path / "v.xml"
    run = surge("run", "http://127.0.0.1:1/health", "-d", "1s", "--junit", str(junit), "--no-save")
    assert run.code == 3
    suite, testcases = cases(junit)
    assert suite.errors == 1
    errors = [r for c in testcases for r in c.result if isinstance(r, Error)]
    assert errors[0].message == run.stderr.splitlines()[-1].removeprefix("surge: error: ")


@pytest.mark.parametrize(
    "where, message",
    [
        ("dir", "is a directory"),
        ("missing/v.xml", "does not exist (create it, or choose another file)"),
    ],
)
def test_a_junit_path_that_cannot_be_written_is_refused_before_the_run(fresh_target, tmp_path, where, message):
    (tmp_path / "dir").mkdir()
    run = surge("run", f"{fresh_target.url}/health", "-n", "1", "--junit", str(tmp_path / where), "--no-save")
    assert run.code == 2
    assert len(run.stderr.splitlines()) == 1 and run.stderr.startswith("surge: error: --junit: ")
    assert message in run.stderr
    assert fresh_target.received() == 0


def _symlink(tmp_path):
    (tmp_path / "real.xml").write_text("old")
    (tmp_path / "link.xml").symlink_to("real.xml")
    return tmp_path / "link.xml", tmp_path / "real.xml"


def _regular(tmp_path):
    path = tmp_path / "verdicts.xml"
    path.write_text("old")
    path.chmod(0o640)
    return path, path


@pytest.mark.parametrize("make", [_symlink, _regular], ids=["symlink", "regular file"])
def test_junit_replaces_only_a_regular_file_and_follows_a_symlink(fresh_target, tmp_path, make):
    given, written = make(tmp_path)
    mode = written.stat().st_mode
    run = surge("run", f"{fresh_target.url}/health", "-n", "3", "-c", "1", "--no-save", "--junit", str(given))
    assert run.code == 0, run.stderr
    assert given.is_symlink() == (given != written)  # a symlink stays a symlink, its target is written
    assert cases(written)[0].name == "surge run"
    assert written.stat().st_mode == mode  # a replaced file keeps its permissions
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted({given.name, written.name})  # no temporary left


def test_junit_into_a_fifo_writes_into_it_never_replaces_it(fresh_target, tmp_path):
    import os
    import threading

    fifo = tmp_path / "verdicts.xml"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    run = surge("run", f"{fresh_target.url}/health", "-n", "3", "-c", "1", "--no-save", "--junit", str(fifo))
    reader.join(timeout=60)
    assert run.code == 0, run.stderr
    assert fifo.is_fifo()
    assert received and b'<testsuite name="surge run"' in received[0]
