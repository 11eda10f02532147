"""A plain http:// server is posted to with http.client, one kept connection per thread, not
through the openai SDK's request path (issue 35: ~2 ms of CPU a request at concurrency 64); every
behaviour the SDK path has is kept: the same bytes and headers, the same retries, timeouts and
error texts, the key never in an error, the SDK where a proxy or https is configured."""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from backends.config import ApiSettings
from backends.openai_api import OpenAIBackend, PlainHTTP, RetryPolicy
from tests.backends.support import SECRET, api_backend
from tests.backends.test_openai_api import interleaved_request


def test_a_plain_http_server_is_posted_to_without_the_sdk_on_one_kept_connection(serve, monkeypatch):
    with serve(["one", "two", "three"]) as server:
        backend = api_backend(server)

        def no_sdk(*args, **kwargs):
            raise AssertionError("the SDK's request path was used")

        monkeypatch.setattr(backend._client, "post", no_sdk)
        texts = [backend.generate(interleaved_request(1)).text for _ in range(3)]
        assert texts == ["one", "two", "three"]
        assert len(backend._plain._open) == 1                # one connection, kept for the three
        headers = {k.lower(): v for k, v in server.headers_seen[0].items()}
    assert headers["authorization"] == f"Bearer {SECRET}"
    assert headers["content-type"] == "application/json" and headers["user-agent"].startswith("OpenAI/Python")
    backend.close()
    assert backend._plain._open == set()


FAULTS = [
    [{"status": 500, "body": {"error": {"message": "engine overloaded"}}}],
    [{"status": 503, "body": "plain text, not JSON"}],
    [{"status": 429, "body": {"error": {"message": "slow down"}}, "headers": {"Retry-After": "0"}}],
    [{"status": 400, "body": {"error": {"message": "bad field"}}}],
    [{"status": 401, "body": {"error": {"message": f"bad key {SECRET}"}}}],
    [{"status": 404, "body": {"detail": "no such model"}}],
    [{"malformed": True}],
    [{"empty_choices": True}],
    [{"drop": True}],
    [{"content": "late", "delay": 5}],
    [{"status": 500}, {"drop": True}, "recovered"],
]


@pytest.mark.parametrize("script", FAULTS, ids=lambda s: json.dumps(s)[:40])
def test_every_fault_reads_as_it_does_through_the_sdk(serve, script):
    outcomes = []
    for path in ("plain", "sdk"):
        with serve(script) as server:
            backend = api_backend(server, timeout_s=0.5)
            assert backend._plain is not None
            if path == "sdk":
                backend._plain = None
            result = backend.generate(interleaved_request(1))
            outcomes.append((result.text, result.error, len(server.requests)))
    assert outcomes[0] == outcomes[1]
    assert SECRET not in str(outcomes[0])


def test_the_sdk_posts_where_a_proxy_or_https_is_configured(monkeypatch):
    for name in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)

    def plain(url: str):
        return OpenAIBackend("m", ApiSettings(base_url=url, api_key="k", timeout_s=5.0))._plain

    assert isinstance(plain("http://127.0.0.1:9/v1"), PlainHTTP)
    assert plain("https://api.example.com/v1") is None
    assert plain("http://user:pw@127.0.0.1:9/v1") is None
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.invalid:3128")
    assert plain("http://10.1.2.3:8000/v1") is None           # through the proxy, as httpx would
    monkeypatch.setenv("NO_PROXY", "10.1.2.3")
    assert isinstance(plain("http://10.1.2.3:8000/v1"), PlainHTTP)


class _ClosingServer:
    """Answers each request on a connection and then closes it without saying so (no
    `Connection: close`), as a server whose keep-alive expired: the client's kept connection is
    dead when it next sends."""

    def __init__(self):
        self.connections = 0
        self.requests = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self):
                super().setup()
                outer.connections += 1

            def log_message(self, *args):
                pass

            def do_POST(self):
                self.rfile.read(int(self.headers["Content-Length"]))
                outer.requests += 1
                body = json.dumps({"choices": [{"index": 0, "finish_reason": "stop", "message": {
                    "role": "assistant", "content": f"answer {outer.requests}"}}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                self.close_connection = True

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def test_a_kept_connection_the_server_closed_is_opened_again_without_a_retry():
    with _ClosingServer() as url:
        never_again = RetryPolicy(max_retries=0)              # a failed send would be an error
        backend = OpenAIBackend("m", ApiSettings(base_url=url, api_key="k", timeout_s=5.0), policy=never_again)
        results = []
        for _ in range(3):
            results.append(backend.generate(interleaved_request(1)))
            time.sleep(0.05)                                  # the server's close reaches the client
        server = backend._plain
    assert [(r.ok, r.text) for r in results] == [(True, "answer 1"), (True, "answer 2"), (True, "answer 3")]
    assert server is not None
    backend.close()
