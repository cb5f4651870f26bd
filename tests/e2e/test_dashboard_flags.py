"""--dashboard's errors (docs/dashboard.md): a bad HOST:PORT or a port in use is one line naming
--dashboard and exit 2, on ``surge run`` and on an experiment, before anything is sent or written."""

from __future__ import annotations

import socket

import pytest

from conftest import surge


@pytest.mark.parametrize("command", [["run"], ["sweep", "--vus", "1,2"]])
def test_a_bad_address_or_a_port_in_use_is_one_line_naming_the_flag(command, fresh_target, tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        for address, said in (("nonsense", "expects HOST:PORT"), (f"127.0.0.1:{port}", "cannot listen on")):
            out = tmp_path / f"out-{len(address)}"
            result = surge(command[0], fresh_target.url, *command[1:], "--out", str(out), "--dashboard", address)
            assert result.code == 2, result.stderr
            assert result.stderr.splitlines() == [result.stderr.strip()], result.stderr  # one line
            assert "--dashboard" in result.stderr and said in result.stderr, result.stderr
            assert not out.exists()
    assert fresh_target.received() == 0
