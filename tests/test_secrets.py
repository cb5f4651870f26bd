"""No secret in any output: URL credentials, secret query parameters, Authorization and Cookie
headers and captured tokens never appear in what surge prints (summary, --json, phase lines,
errors), for URL runs and scenario files, runs that work, inputs refused and targets unreachable."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import surge, write

SECRET = "s3cr3t-Pa55-value"
"""SECRET is the secret each case passes; it must appear nowhere in the output."""

UNREACHABLE_URL = "http://127.0.0.1:1"
"""UNREACHABLE_URL is a loopback port nothing listens on (connection refused at once)."""

FILE = """\
target: @URL@
defaults:
  headers: {Authorization: "Bearer @SECRET@", Cookie: "sid=@SECRET@"}
scenarios:
  a:
    executor: {type: per-vu-iterations, vus: 1, iterations: 5}
    flow:
      - request: {path: "/health?api_key=@SECRET@&limit=2", headers: {X-Api-Key: "@SECRET@"}}
      - request: {method: POST, path: "/tasks?token=@SECRET@", json: {title: "@SECRET@"}}
        capture: {api_token: {json: $.title, to_pool: true}}
"""
"""FILE sends every kind of secret (header, cookie, query parameter) and captures one into a
pool whose name says it is a token."""

BAD_SLOT = """\
target: @URL@
scenarios:
  a:
    executor: {type: per-vu-iterations, vus: 1, iterations: 1}
    flow:
      - request: {path: /health, headers: {Authorization: "Bearer {{ @SECRET@ x}}"}}
"""
"""BAD_SLOT is refused: its Authorization header holds an invalid slot around the secret."""

Case = Callable[[str, Path], tuple[list[str], int]]


def _file(text: str, url: str, tmp_path: Path) -> str:
    return str(write(tmp_path, text, URL=url, SECRET=SECRET))


CASES: dict[str, Case] = {
    # URL runs
    "url query": lambda u, p: (["run", f"{u}/health?api_key={SECRET}&limit=2", "-n", "5", "-c", "1"], 0),
    "url query --json": lambda u, p: (["run", f"{u}/health?access_token={SECRET}", "-n", "5", "-c", "1", "--json"], 0),
    "url headers": lambda u, p: (["run", f"{u}/health", "-n", "5", "-c", "1", "-H", f"Authorization: Bearer {SECRET}",
                                  "-H", f"Cookie: sid={SECRET}", "-H", f"X-Api-Key: {SECRET}"], 0),
    "url headers --json": lambda u, p: (["run", f"{u}/health", "-n", "5", "-c", "1", "--json",
                                         "-H", f"Authorization: Bearer {SECRET}"], 0),
    "url credentials": lambda u, p: (["run", u.replace("http://", f"http://user:{SECRET}@") + "/health"], 2),
    "url token as user": lambda u, p: (["run", u.replace("http://", f"http://{SECRET}@") + "/health"], 2),
    "url credentials, no scheme": lambda u, p: (["run", f"user:{SECRET}@127.0.0.1/health"], 2),
    "url credentials, bad scheme": lambda u, p: (["run", f"ftp://user:{SECRET}@127.0.0.1/health"], 2),
    "url header without colon": lambda u, p: (["run", f"{u}/health", "-H", f"Authorization Bearer {SECRET}"], 2),
    "url header bad slot": lambda u, p: (["run", f"{u}/health", "-H", "Authorization: Bearer {{" + SECRET], 2),
    "url unreachable": lambda u, p: (["run", f"{UNREACHABLE_URL}/health?token={SECRET}", "-d", "1s"], 3),
    "url unreachable --json": lambda u, p: (["run", f"{UNREACHABLE_URL}/health?token={SECRET}", "-d", "1s",
                                             "--json"], 3),
    # scenario files
    "file": lambda u, p: (["run", _file(FILE, u, p)], 0),
    "file --json": lambda u, p: (["run", _file(FILE, u, p), "--json"], 0),
    "file target credentials": lambda u, p: (["run", _file(FILE, u.replace("http://", f"http://u:{SECRET}@"), p)], 2),
    "file --target credentials": lambda u, p: (["run", _file(FILE, u, p), "--target",
                                                u.replace("http://", f"http://u:{SECRET}@")], 2),
    "file --target bad scheme": lambda u, p: (["run", _file(FILE, u, p), "--target", f"ftp://u:{SECRET}@x"], 2),
    "file bad header slot": lambda u, p: (["run", _file(BAD_SLOT, u, p)], 2),
    "file bad -e": lambda u, p: (["run", _file(FILE, u, p), "-e", f"MY TOKEN={SECRET}"], 2),
    "file unreachable": lambda u, p: (["run", _file(FILE, UNREACHABLE_URL, p)], 3),
}


@pytest.mark.parametrize("case", CASES)
def test_no_secret_in_any_output(target, tmp_path, case):
    args, expected_code = CASES[case](target.url, tmp_path)
    run = surge(*args)
    assert run.code == expected_code, run.stderr
    assert SECRET not in run.stdout + run.stderr, run.stdout + run.stderr
    assert "Traceback" not in run.stderr
    if expected_code:
        assert run.stderr.strip(), "a non-zero exit says why"
