"""Every flag of ``surge run`` either applies to a scenario file, as a documented override
(``--timeout``, ``--grace``, ``--insecure``, ``--threads``, ``--json``, ``--time-scale``,
``--target``, ``-e``), or is refused in one line naming it, exit 2 (the load's shape and the
request are the file's: ``-c``, ``-d``, ``-n``, ``-r``, ``-m``, ``-H``, ``--body``,
``--max-in-flight``)."""

from __future__ import annotations

import pytest

from conftest import FILE, surge, write


def test_timeout_applies_to_a_file_end_to_end(tmp_path, fresh_target):
    path = write(tmp_path, FILE)
    run = surge("run", str(path), "--target", fresh_target.url, "--timeout", "300ms", "--json")
    assert run.code == 0, run.stderr
    doc = run.json()
    slow = next(t for t in doc["tags"] if t["tag"] == "slow")
    assert slow["requests"]["failure_classes"] == {"request_timeout": 1}, slow["requests"]
    assert doc["duration_s"] < 3  # not the 3 s the delay takes, nor the file's 10 s timeout


@pytest.mark.parametrize(
    ("flags", "flag"),
    [
        (["-c", "10"], "-c/--connections"),
        (["-d", "5s"], "-d/--duration"),
        (["-n", "5"], "-n/--requests"),
        (["-r", "5"], "-r/--rate"),
        (["-m", "POST"], "-m/--method"),
        (["-m", "GET"], "-m/--method"),
        (["-H", "X-A: b"], "-H/--header"),
        (["--body", "x"], "--body"),
        (["--max-in-flight", "5"], "--max-in-flight"),
    ],
)
def test_flags_that_shape_the_load_or_the_request_are_refused_with_a_file(tmp_path, flags, flag):
    path = write(tmp_path, FILE)
    run = surge("run", str(path), *flags)
    assert run.code == 2, run.stderr
    assert run.stderr == f"surge: error: {flag}: does not apply to a scenario file ({path}): set it in the file\n"


@pytest.mark.parametrize(
    ("flags", "flag", "message"),
    [
        (["--timeout", "0s"], "--timeout", "must be above zero"),
        (["--timeout", "inf"], "--timeout", "longer than 720h"),
        (["--grace", "1e309"], "--grace", "longer than 720h"),
        (["--grace", "soon"], "--grace", "is not a duration"),
    ],
)
def test_bad_overrides_are_named_with_a_file(tmp_path, flags, flag, message):
    path = write(tmp_path, FILE)
    run = surge("run", str(path), *flags)
    assert run.code == 2, run.stderr
    assert run.stderr.startswith(f"surge: error: {flag}: ") and message in run.stderr, run.stderr
    assert len(run.stderr.splitlines()) == 1
