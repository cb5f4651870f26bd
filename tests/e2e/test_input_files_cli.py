"""The CLI refuses a body read from anything but a small regular file (a device, a FIFO, a
directory, a file past the limit) in one line."""

from __future__ import annotations

import pytest

from hostile_inputs import KINDS, odd_file
from test_input_limits_cli import surge_limited


@pytest.mark.parametrize("kind", KINDS)
def test_body_from_anything_but_a_small_regular_file_is_refused(tmp_path, kind):
    path = odd_file(tmp_path, kind)
    run = surge_limited("run", "http://127.0.0.1:9/", "--body", f"@{path}", "-d", "1s", timeout=30)
    assert run.returncode == 2, run.stderr[-2000:]
    assert run.stderr == f"surge: error: --body: {path}: {KINDS[kind]}\n"
