"""HTTP/2 against nginx (Debian's, installed by `make tools`): h2c with prior knowledge over
http://, h2 by ALPN over https:// (a self-signed certificate, --insecure), in both models. Every
response surge counts is one nginx counted (its stub_status, on a plain HTTP/1.1 port), and the
connections are the ones --streams asks for."""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import surge
from surge.record.schema import validate

CONFIG = """\
worker_processes 1;
daemon off;
pid {dir}/nginx.pid;
error_log {dir}/error.log warn;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    client_body_temp_path {dir}/body;
    proxy_temp_path {dir}/proxy;
    fastcgi_temp_path {dir}/fastcgi;
    uwsgi_temp_path {dir}/uwsgi;
    scgi_temp_path {dir}/scgi;
    keepalive_requests 1000000000;
    server {{
        listen 127.0.0.1:{h2c} http2;
        listen 127.0.0.1:{h2} ssl http2;
        listen 127.0.0.1:{plain};
        ssl_certificate {dir}/cert.pem;
        ssl_certificate_key {dir}/key.pem;
        location = /health {{ return 200 "ok"; }}
        location = /nginx_status {{ stub_status; }}
    }}
    server {{
        listen 127.0.0.1:{h2c_short} http2;
        keepalive_requests 100;
        location = /health {{ return 200 "ok"; }}
    }}
}}
"""


@dataclass
class Nginx:
    """Nginx is the running server's ports."""

    h2c: int
    h2: int
    plain: int
    h2c_short: int
    """h2c_short is an h2c port whose connections nginx ends (GOAWAY) after 100 requests."""
    readings: int = 0

    def requests(self) -> int:
        """requests is nginx's count of requests so far, less the status requests (each reading is
        one, counted in itself): a difference of two readings is what the test sent."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.plain}/nginx_status", timeout=5) as r:
            text = r.read().decode()
        match = re.search(r"\n\s*(\d+)\s+(\d+)\s+(\d+)", text)
        assert match, text
        self.readings += 1
        return int(match.group(3)) - self.readings


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def nginx(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Nginx]:
    binary = shutil.which("nginx") or "/usr/sbin/nginx"
    assert Path(binary).exists(), "nginx is installed by `make tools` (Debian's nginx package)"
    folder = tmp_path_factory.mktemp("nginx-h2")
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=localhost"),
            *("-keyout", str(folder / "key.pem"), "-out", str(folder / "cert.pem")),
        ],
        check=True,
        capture_output=True,
    )
    ports = Nginx(h2c=_free_port(), h2=_free_port(), plain=_free_port(), h2c_short=_free_port())
    (folder / "nginx.conf").write_text(
        CONFIG.format(dir=folder, h2c=ports.h2c, h2=ports.h2, plain=ports.plain, h2c_short=ports.h2c_short)
    )
    proc = subprocess.Popen([binary, "-c", str(folder / "nginx.conf"), "-p", str(folder)], stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                ports.requests()
                break
            except OSError:
                assert proc.poll() is None, proc.stderr.read() if proc.stderr else "nginx exited"
                assert time.monotonic() < deadline, "nginx did not start"
                time.sleep(0.05)
        yield ports
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.mark.parametrize("scheme", ["h2c", "h2"])
def test_closed_model_counts_agree_with_nginx_and_connections_carry_their_streams(nginx: Nginx, scheme: str) -> None:
    port = nginx.h2c if scheme == "h2c" else nginx.h2
    url = f"{'http' if scheme == 'h2c' else 'https'}://127.0.0.1:{port}/health"
    before = nginx.requests()
    run = surge("run", url, "--http2", "-c", "2", "--streams", "8", "-d", "1s", "--insecure", "--json", timeout=60)
    assert run.code == 0, run.stderr
    document = json.loads(run.stdout)
    requests, http2 = document["requests"], document["http2"]
    assert nginx.requests() - before == requests["responses"] == requests["sent"], requests
    assert requests["failed"] == 0 and requests["responses"] > 500, requests
    assert requests["connections_opened"] <= 2 * 2, "2 connections (one per thread at most twice)"
    assert http2["connections"] == requests["connections_opened"], http2
    assert http2["streams"] == requests["sent"] and http2["goaways"] == 0, http2
    assert 1 <= http2["concurrent_streams_max"] <= 8, http2
    assert http2["server_max_concurrent_streams"] == 128, "nginx's http2_max_concurrent_streams default"


def test_streams_nginx_refuses_after_keepalive_requests_are_sent_again_and_counted_per_connection(nginx: Nginx) -> None:
    # nginx ends each connection after 100 requests with a GOAWAY: no connection carries more,
    # every connection but one the run's end cut short ended so, and the streams it refused
    # (above the GOAWAY's last) are sent again on the next connection.
    before = nginx.requests()
    run = surge(
        "run",
        f"http://127.0.0.1:{nginx.h2c_short}/health",
        "--http2",
        "-c",
        "1",
        "--streams",
        "4",
        "-n",
        "1000",
        "--json",
        timeout=60,
    )
    assert run.code == 0, run.stderr
    document = json.loads(run.stdout)
    requests, http2 = document["requests"], document["http2"]
    # The streams above a GOAWAY's last were never processed: each was sent again and answered.
    assert requests["responses"] == 1000 and requests["failed"] == 0, requests
    assert requests["retried"] > 0, requests
    assert requests["sent"] == requests["responses"] + requests["retried"], requests
    assert nginx.requests() - before == 1000, "nginx processed each request once"
    assert http2["streams_per_connection_max"] <= 100 + 4, http2
    assert http2["goaways"] >= requests["responses"] // 100 - 1, http2
    assert http2["connections"] >= requests["responses"] // 100, http2


def test_open_model_sends_the_schedule_and_nginx_answers_every_request(nginx: Nginx, tmp_path: Path) -> None:
    before = nginx.requests()
    out = tmp_path / "rec"
    run = surge("run", f"http://127.0.0.1:{nginx.h2c}/health", "--http2", "-r", "500", "-d", "1s", "--out", str(out))
    assert run.code == 0, run.stderr
    summary = json.loads((out / "summary.json").read_text())
    validate(summary)  # the record's http2 figures included
    requests = summary["requests"]
    assert requests["sent"] == requests["responses"] == 500, requests
    assert nginx.requests() - before == 500
    assert summary["http2"]["streams"] == 500, summary["http2"]
    assert re.search(r"500 streams on \d connections? \(", run.stdout), run.stdout


def test_streams_without_http2_is_one_line_exit_2() -> None:
    run = surge("run", "http://127.0.0.1:9/health", "--streams", "10")
    assert run.code == 2
    assert run.stderr.strip().splitlines() == ["surge: error: --streams: only applies with --http2"]


def test_a_server_that_does_not_speak_h2c_fails_every_request(nginx: Nginx) -> None:
    # The plain port speaks HTTP/1.1 only: h2c's preface gets a 400 and a close.
    run = surge("run", f"http://127.0.0.1:{nginx.plain}/health", "--http2", "-n", "5", "--json", timeout=60)
    requests = json.loads(run.stdout)["requests"]
    assert requests["responses"] == 0 and requests["failed"] == 5, requests
