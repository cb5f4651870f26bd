"""No secret in any output: URL credentials, secret query and path parameters, Authorization and
Cookie headers, secret body fields and captured tokens never appear in what surge prints
(summary, --json, phase lines, errors) or writes (records, reports, JUnit files, the history),
for URL runs and scenario files, runs that work, inputs refused, targets unreachable, imports
and experiments."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import surge, write

pytestmark = pytest.mark.cpu_heavy  # runs apart from the answer tests (Makefile: test-python)

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
    "url headers": lambda u, p: (
        [
            "run",
            f"{u}/health",
            "-n",
            "5",
            "-c",
            "1",
            "-H",
            f"Authorization: Bearer {SECRET}",
            "-H",
            f"Cookie: sid={SECRET}",
            "-H",
            f"X-Api-Key: {SECRET}",
        ],
        0,
    ),
    "url headers --json": lambda u, p: (
        ["run", f"{u}/health", "-n", "5", "-c", "1", "--json", "-H", f"Authorization: Bearer {SECRET}"],
        0,
    ),
    "url credentials": lambda u, p: (["run", u.replace("http://", f"http://user:{SECRET}@") + "/health"], 2),
    "url token as user": lambda u, p: (["run", u.replace("http://", f"http://{SECRET}@") + "/health"], 2),
    "url credentials, no scheme": lambda u, p: (["run", f"user:{SECRET}@127.0.0.1/health"], 2),
    "url credentials, bad scheme": lambda u, p: (["run", f"ftp://user:{SECRET}@127.0.0.1/health"], 2),
    "url header without colon": lambda u, p: (["run", f"{u}/health", "-H", f"Authorization Bearer {SECRET}"], 2),
    "url header bad slot": lambda u, p: (["run", f"{u}/health", "-H", "Authorization: Bearer {{" + SECRET], 2),
    "url unreachable": lambda u, p: (["run", f"{UNREACHABLE_URL}/health?token={SECRET}", "-d", "1s"], 3),
    "url unreachable --json": lambda u, p: (
        ["run", f"{UNREACHABLE_URL}/health?token={SECRET}", "-d", "1s", "--json"],
        3,
    ),
    # scenario files
    "file": lambda u, p: (["run", _file(FILE, u, p)], 0),
    "file --json": lambda u, p: (["run", _file(FILE, u, p), "--json"], 0),
    "file target credentials": lambda u, p: (["run", _file(FILE, u.replace("http://", f"http://u:{SECRET}@"), p)], 2),
    "file --target credentials": lambda u, p: (
        ["run", _file(FILE, u, p), "--target", u.replace("http://", f"http://u:{SECRET}@")],
        2,
    ),
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


# Every byte surge writes: secrets in every place a user can put them (README "Secrets"), runs
# that work, fail thresholds, are refused or cannot reach their target, imports (k6, oha) and
# compares; then stdout, stderr, every file and path name under the runs' directory (results
# directories, --junit files, and the history database: SURGE_DB points there) and every row of
# the history's SQL dump are searched for each secret's value.

PLACES = (
    "url_token",
    "url_key",
    "url_secret",
    "url_password",
    "url_session",
    "url_api_key",
    "url_userinfo",
    "authorization",
    "proxy_authorization",
    "cookie",
    "x_auth_token",
    "x_api_key",
    "x_secret",
    "x_password",
    "x_session",
    "file_authorization",
    "file_cookie",
    "file_proxy_authorization",
    "file_header_token",
    "file_query_token",
    "file_path_api_key",
    "file_env_default",
    "file_env_value",
    "file_variable",
    "file_body_password",
    "file_block_secret",
    "tag_api_token",
    "tag_password",
    # issue 20: what the stdout masking missed
    "k6_url_userinfo",
    "k6_url_token",
    "oha_error_userinfo",
    "oha_error_api_key",
    "oha_error_bearer",
    "path_jsessionid",
    "path_access_token",
    "body_password",
    "body_api_key",
    "body_token",
    "body_secret",
    "variant_env_token",
    "variant_url_token",
    "file_path_percent_api_key",
)
"""PLACES names each place a secret goes; each gets its own value, so a leak says where it came from."""

SECRETS = {place: f"S3cr3t-{place.replace('_', '-')}-v4lu3" for place in PLACES}

EVERY_PLACE_FILE = """\
target: @URL@
defaults:
  headers: {Authorization: "Bearer @file_authorization@", Cookie: sid=@file_cookie@}
variables:
  token: {type: env, name: API_TOKEN, default: @file_env_default@}
  session_key: {type: choice, values: ["@file_variable@"]}
scenarios:
  a:
    executor: {type: per-vu-iterations, vus: 1, iterations: 3}
    flow:
      - name: read
        request:
          path: "/health?api_key=@file_path_api_key@&api%5Fkey=@file_path_percent_api_key@"
          query: {limit: 2, token: @file_query_token@}
          headers: {Proxy-Authorization: Basic @file_proxy_authorization@, X-Auth-Token: "{{token}}"}
        check: {status: 200}
      - name: write
        request:
          method: POST
          path: /tasks
          headers:
            X-Session-Key: "{{session_key}}"
            X-Api-Token: @file_header_token@
          json: {title: plain, password: @file_body_password@}
        check: {status: 404}
      - request:
          method: POST
          path: /tasks
          json:
            title: plain
            client_secret: @file_block_secret@
thresholds:
  - "p(95) < 0.000001ms"
  - "failure_rate < 1%"
"""
"""EVERY_PLACE_FILE puts secrets in a scenario file's headers (quoted and plain), query (a name
percent-encoded too), path, env variable default, variable values and body keys; its thresholds
fail (exit 99) and one of its checks fails, so the --junit file holds failures."""

COMPARE_FILE = """\
target: @URL@
variables:
  token: {type: env, name: API_TOKEN, default: plain}
scenarios:
  a:
    executor: {type: per-vu-iterations, vus: 1, iterations: 2}
    flow:
      - request: {path: /health, headers: {X-Auth-Token: "{{token}}"}}
"""
"""COMPARE_FILE is compared with a variant that sets its env variable API_TOKEN."""

IMPORTS = Path(__file__).parents[1] / "fixtures" / "imports"
"""IMPORTS holds the import fixtures the planted k6 and oha files are made from."""


def _planted_imports(inputs: Path) -> list[str]:
    """_planted_imports writes a k6 NDJSON file whose requests' ``url`` holds user information and
    a token, and an oha file whose error texts hold them (as a client library's errors do)."""
    s = SECRETS
    url = f"http://admin:{s['k6_url_userinfo']}@127.0.0.1:18503/tasks?limit=1&token={s['k6_url_token']}"
    k6 = inputs / "k6.ndjson"
    k6.write_text((IMPORTS / "k6-ndjson.json").read_text().replace("http://127.0.0.1:18503/tasks?limit=1", url))
    oha_doc = json.loads((IMPORTS / "oha-refused-6k.json").read_text())
    oha_doc["errorDistribution"] = {
        f"error sending request for url (http://u:{s['oha_error_userinfo']}@127.0.0.1:1/?api_key="
        f"{s['oha_error_api_key']})": 5000,
        f"Authorization: Bearer {s['oha_error_bearer']} was refused": 1000,
    }
    oha = inputs / "oha.json"
    oha.write_text(json.dumps(oha_doc))
    return [str(k6), str(oha)]


def _every_place_runs(url: str, inputs: Path, runs_dir: Path) -> list[tuple[list[str], int]]:
    s = SECRETS
    query = (
        f"token={s['url_token']}&key={s['url_key']}&secret={s['url_secret']}&password={s['url_password']}"
        f"&session={s['url_session']}&api_key={s['url_api_key']}&limit=2"
    )
    headers = [
        "-H",
        f"Authorization: Bearer {s['authorization']}",
        "-H",
        f"Proxy-Authorization: Basic {s['proxy_authorization']}",
        "-H",
        f"Cookie: sid={s['cookie']}",
        "-H",
        f"X-Auth-Token: {s['x_auth_token']}",
        "-H",
        f"X-Api-Key: {s['x_api_key']}",
        "-H",
        f"X-Client-Secret: {s['x_secret']}",
        "-H",
        f"X-Password: {s['x_password']}",
        "-H",
        f"X-Session-Id: {s['x_session']}",
    ]
    tags = ["--tag", f"api_token={s['tag_api_token']}", "--tag", f"password={s['tag_password']}", "--tag", "arch=one"]
    text = EVERY_PLACE_FILE.replace("@URL@", url)
    for place, value in s.items():
        text = text.replace(f"@{place}@", value)
    scenario = inputs / "every-place.yaml"
    scenario.write_text(text)
    file_args = ["run", str(scenario), "-e", f"API_TOKEN={s['file_env_value']}", *tags]
    return [
        (
            [
                "run",
                f"{url}/health?{query}",
                "-n",
                "5",
                "-c",
                "1",
                *headers,
                *tags,
                "--junit",
                str(runs_dir / "url.xml"),
            ],
            0,
        ),
        (["run", f"{url}/health?{query}", "-n", "5", "-c", "1", "--json", *headers, *tags], 0),
        ([*file_args, "--junit", str(runs_dir / "file.xml")], 99),
        ([*file_args, "--json", "--junit", str(runs_dir / "file-json.xml")], 99),
        (
            [
                "run",
                f"{UNREACHABLE_URL}/health?{query}",
                "-d",
                "1s",
                *headers,
                *tags,
                "--junit",
                str(runs_dir / "unreachable.xml"),
            ],
            3,
        ),
        (["run", url.replace("http://", f"http://user:{s['url_userinfo']}@") + "/health", *tags], 2),
        # issue 20
        (["import", *_planted_imports(inputs)], 0),
        (
            [
                "run",
                f"{url}/health;jsessionid={s['path_jsessionid']}",
                "-n",
                "3",
                "-c",
                "1",
                "--junit",
                str(runs_dir / "path.xml"),
            ],
            0,
        ),
        # one path parameter a run: a run's name (its directory's) keeps 80 characters of its path
        (
            [
                "run",
                f"{url}/tasks;access_token={s['path_access_token']}",
                "-n",
                "3",
                "-c",
                "1",
                "-m",
                "POST",
                "--body",
                json.dumps(
                    {
                        "title": "plain",
                        "password": s["body_password"],
                        "api_key": s["body_api_key"],
                        "token": s["body_token"],
                        "secret": s["body_secret"],
                    }
                ),
                "--junit",
                str(runs_dir / "body.xml"),
            ],
            0,
        ),
        (
            [
                "compare",
                f"{url}/health",
                "--requests",
                "3",
                "-c",
                "1",
                "-n",
                "1",
                "--variant",
                "a",
                "--variant",
                f"b={url}/health?token={s['variant_url_token']}",
            ],
            0,
        ),
        (
            [
                "compare",
                _write(inputs / "compare.yaml", COMPARE_FILE.replace("@URL@", url)),
                "-n",
                "1",
                "--variant",
                "a",
                "--variant",
                f"b:API_TOKEN={s['variant_env_token']}",
            ],
            0,
        ),
    ]


def _write(path: Path, text: str) -> str:
    path.write_text(text)
    return str(path)


def test_no_secret_in_any_byte_written(target, tmp_path):
    import os
    import subprocess
    import sys

    inputs, runs_dir = tmp_path / "inputs", tmp_path / "runs"
    inputs.mkdir()
    runs_dir.mkdir()
    env = {**os.environ, "SURGE_DB": str(runs_dir / "history.db")}  # the history, when there is one, is searched too
    written = []
    for args, code in _every_place_runs(target.url, inputs, runs_dir):
        done = subprocess.run(
            [sys.executable, "-m", "surge", *args],
            capture_output=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
            cwd=runs_dir,
            env=env,
        )
        assert done.returncode == code, done.stderr.decode()
        assert b"Traceback" not in done.stderr
        written += [(f"stdout of {args[:2]}", done.stdout), (f"stderr of {args[:2]}", done.stderr)]
    for args in (
        ["history", "--json"],
        ["history"],
        ["show", "last"],
        ["show", "last", "--json"],
        ["report", "last", "--out", "rebuilt-report"],
        ["experiments"],
        ["experiments", "--json"],
    ):
        done = subprocess.run(
            [sys.executable, "-m", "surge", *args],
            capture_output=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
            cwd=runs_dir,
            env=env,
        )
        assert done.returncode == 0, done.stderr.decode()
        written += [(f"stdout of {args}", done.stdout), (f"stderr of {args}", done.stderr)]
    files = [path for path in runs_dir.rglob("*") if path.is_file()]
    assert "history.db" in {p.name for p in files}
    # every run but the refused one: 5, 2 imports, 2 more runs, 2 compares of 2 runs each
    assert len([p for p in files if p.name == "summary.json"]) == 5 + 2 + 2 + 4
    assert len([p for p in files if p.name == "experiment.json"]) == 2
    assert {p.name for p in files} >= {
        "url.xml",
        "file.xml",
        "file-json.xml",
        "unreachable.xml",
        "path.xml",
        "body.xml",
        "scenario.yaml",
        "command.txt",
        "timeseries.csv",
        "latency.hlog",
        "report.md",
        "report.html",
        "throughput.svg",
        "latency.svg",
        "spectrum.svg",
    }
    # every run's and experiment's, and `surge report`'s
    assert len([p for p in files if p.name == "report.md"]) == 6 + 2 + 2 + 4 + 2
    written += [(str(path.relative_to(runs_dir)), path.read_bytes()) for path in files]
    written += [("a path's name", str(path.relative_to(runs_dir)).encode()) for path in runs_dir.rglob("*")]
    with contextlib.closing(sqlite3.connect(runs_dir / "history.db")) as history:
        written += [(f"history row {line[:60]}", line.encode()) for line in history.iterdump()]
    leaks = [
        (place, where, data[:200])
        for where, data in written
        for place, value in SECRETS.items()
        if value.encode() in data
    ]
    assert leaks == []
