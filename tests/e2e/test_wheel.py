"""Install like a Python tool: the abi3 wheel maturin builds installs with pip into a fresh
virtual environment, outside the checkout and with no Rust on PATH, and the installed ``surge``
answers ``--version``, serves ``surge target`` and runs a 2 s test against it, counts exact."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.cpu_heavy

REPO = Path(__file__).resolve().parents[2]
"""REPO is the checkout the wheel is built from."""


def _clean_env(venv: Path) -> dict[str, str]:
    # The venv's bin first; no PYTHONPATH (the checkout's python/ must not be what runs) and no
    # directory that holds cargo or rustc (the installed wheel needs neither).
    path = [str(venv / "bin")] + [
        d for d in os.environ.get("PATH", "").split(os.pathsep) if d and not (Path(d) / "cargo").exists()
    ]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "CARGO", "RUST"))}
    return {**env, "PATH": os.pathsep.join(path)}


def test_the_wheel_installs_without_rust_and_runs_a_test(tmp_path):
    maturin = Path(sys.executable).parent / "maturin"
    built = subprocess.run(
        [str(maturin), "build", "--release", "--quiet", "--out", str(tmp_path / "dist")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    (wheel,) = (tmp_path / "dist").glob("surge-*.whl")
    assert re.search(r"-cp311-abi3-manylinux_\d+_\d+_x86_64\.whl$", wheel.name), wheel.name

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    # The checkout's pip installs into the fresh environment (--python): its cache holds the
    # dependencies' wheels, so no compiler and no Rust are involved.
    installed = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-q", str(wheel)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert installed.returncode == 0, installed.stderr[-3000:]
    env, work = _clean_env(venv), tmp_path / "work"
    work.mkdir()
    surge = str(venv / "bin" / "surge")
    assert not any((Path(d) / "cargo").exists() for d in env["PATH"].split(os.pathsep))

    where = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import surge, surge._engine as e; print(surge.__file__, e.__file__)"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert where.returncode == 0 and all(p.startswith(str(venv)) for p in where.stdout.split()), where

    version = subprocess.run([surge, "--version"], cwd=work, env=env, capture_output=True, text=True, timeout=60)
    assert version.returncode == 0 and version.stdout.startswith("surge "), version

    target = subprocess.Popen(
        [surge, "target", "--bind", "127.0.0.1:0", "--duration", "60s"],
        cwd=work,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert target.stdout is not None
        line = target.stdout.readline()
        found = re.search(r"listening on (http://127\.0\.0\.1:\d+)", line)
        assert found, line
        run = subprocess.run(
            [surge, "run", f"{found.group(1)}/health", "--duration", "2s", "--rate", "50", "--no-save", "--json"],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert run.returncode == 0, run.stderr[-3000:]
        requests = json.loads(run.stdout)["requests"]
        assert requests["sent"] == requests["responses"] == requests["succeeded"] == 100, requests
    finally:
        target.terminate()
        target.wait(timeout=30)
    assert not list(work.iterdir()), "the run wrote files with --no-save"
