"""--tag key=value: parsed once (surge.tags), refused with one line naming --tag (exit 2),
stored in the record's meta.tags for URL and scenario-file runs, secret-keyed values masked."""

from __future__ import annotations

import json

import pytest

from conftest import surge, tiny_scenario

SECRET = "tag-s3cr3t-value"


@pytest.mark.parametrize(
    "args, line",
    [
        (
            ["--tag", "arch"],
            "surge: error: --tag: expected a key, '=' and a value (e.g. --tag arch=scale-out), got no '='",
        ),
        (["--tag", "a=1", "--tag", "a=2"], "surge: error: --tag: key 'a' is given twice"),
        (["--tag", "a/b=1"], "surge: error: --tag: key 'a/b' must be 1 to 64 letters, digits, '_', '.' or '-'"),
    ],
)
def test_cli_refuses_a_bad_tag_before_the_run(fresh_target, args, line):
    run = surge("run", f"{fresh_target.url}/health", "-n", "1", *args)
    assert run.code == 2
    assert run.stderr.splitlines() == [line]
    assert fresh_target.received() == 0


def test_url_run_stores_its_tags_in_meta(fresh_target, tmp_path):
    out = tmp_path / "rec"
    run = surge(
        "run",
        f"{fresh_target.url}/health",
        "-n",
        "3",
        "-c",
        "1",
        "--out",
        str(out),
        "--tag",
        "arch=scale-out",
        "--tag",
        "build=abc123",
        "--tag",
        f"api_key={SECRET}",
    )
    assert run.code == 0, run.stderr
    meta = json.loads((out / "summary.json").read_text())["meta"]
    assert meta["tags"] == {"arch": "scale-out", "build": "abc123", "api_key": "[redacted]"}
    assert meta["tool"] == "surge" and meta["source"] is None
    assert SECRET not in (out / "summary.json").read_text() + (out / "command.txt").read_text()


def test_file_run_stores_its_tags_in_meta(fresh_target, tmp_path):
    path = tiny_scenario(tmp_path, fresh_target.url)
    out = tmp_path / "rec"
    run = surge("run", str(path), "--out", str(out), "--tag", "storage=gopool")
    assert run.code == 0, run.stderr
    assert json.loads((out / "summary.json").read_text())["meta"]["tags"] == {"storage": "gopool"}


def test_run_without_tags_stores_an_empty_object(fresh_target, tmp_path):
    out = tmp_path / "rec"
    assert surge("run", f"{fresh_target.url}/health", "-n", "1", "--out", str(out)).code == 0
    assert json.loads((out / "summary.json").read_text())["meta"]["tags"] == {}
