"""HTTPS targets: verified by default (a self-signed certificate fails), --insecure skips it."""

from __future__ import annotations

import http.server
import ssl
import subprocess
import threading

import pytest

from conftest import surge


class _Ok(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory):
    d = tmp_path_factory.mktemp("tls")
    cert, key = d / "cert.pem", d / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=localhost",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
    )
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Ok)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"https://localhost:{server.server_address[1]}/"
    server.shutdown()


def test_insecure_accepts_self_signed(tls_server):
    run = surge("run", tls_server, "-n", "50", "-c", "2", "--insecure", "--json")
    assert run.code == 0, run.stderr
    doc = run.json()
    assert doc["requests"]["succeeded"] == 50
    assert doc["requests"]["connections_opened"] == 2, "keep-alive over TLS"


def test_verification_rejects_self_signed(tls_server):
    run = surge("run", tls_server, "-n", "5", "-c", "1", "--json", "--timeout", "5s")
    doc = run.json()
    assert doc["requests"]["succeeded"] == 0
    assert doc["requests"]["failure_classes"].get("tls_failure", 0) >= 1, doc["requests"]
