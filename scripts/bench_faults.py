"""Benchmark: how long the API backend takes to get past a server's faults, against one plain call.

A scripted OpenAI-compatible server on 127.0.0.1 (in this process); each figure is printed beside a
reference measured in the same run: one call the server answers at once.

  - timeout: the first answer comes 1.5 s late, the request's timeout is 0.4 s, the retry is
    answered at once (goal: the result well before the late answer, < 1.4 s; was an assertion in
    tests/backends/test_openai_api.py); with one retry and both answers late, the error
    (was tests/system/test_faults.py's `< 5 s`);
  - stop: Stop pressed 0.3 s into a 20 s Retry-After wait; from the Stop to the call's end (goal
    < 1 s; was the test's `< 3 s` from the start);
  - retry-after: the gap the backend leaves after HTTP 429 with Retry-After 1 s (goal: 1-2 s, the
    backoff alone would be 0.05 s; was the test's `< 2 s`).

Prints; asserts nothing.

    python scripts/bench_faults.py [--repeats 3]
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import Row, loadavg, print_rows  # noqa: E402


class Server:
    """Answers each POST with the next entry of `script` (the last one repeats): a str is a reply,
    {"delay": s, "content": str} a late one, {"status": n, "retry_after": s} an error."""

    def __init__(self, script: list) -> None:
        self.script, self.sent_at, self.lock = script, [], threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with server.lock:
                    server.sent_at.append(time.monotonic())
                    entry = server.script[min(len(server.sent_at), len(server.script)) - 1]
                entry = {"content": entry} if isinstance(entry, str) else entry
                time.sleep(entry.get("delay", 0))
                status = entry.get("status", 200)
                body = {"error": {"message": "scripted"}} if status != 200 else {
                    "id": "x", "object": "chat.completion", "created": 0, "model": "bench",
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": entry["content"]}}],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
                payload = json.dumps(body).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    if "retry_after" in entry:
                        self.send_header("Retry-After", str(entry["retry_after"]))
                    self.end_headers()
                    self.wfile.write(payload)
                except OSError:
                    pass  # the client left

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True

    def __enter__(self) -> Server:
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"


def _backend(server: Server, timeout_s: float = 5.0, max_retries: int = 2):
    from backends.config import ApiSettings
    from backends.openai_api import OpenAIBackend, RetryPolicy

    policy = RetryPolicy(max_retries=max_retries, base_delay_s=0.05, max_delay_s=30.0)
    settings = ApiSettings(base_url=server.url, api_key="sk-bench", timeout_s=timeout_s,
                           max_retries=max_retries)
    return OpenAIBackend("bench", settings, policy=policy)


def _request():
    from backends.base import GenerationRequest, Message

    return GenerationRequest([Message.text("user", "hello")])


def _timed(call) -> float:
    start = time.monotonic()
    call()
    return time.monotonic() - start


def _median(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:.0f} ms (of {len(values)})"


def run(repeats: int = 3) -> list[Row]:
    from backends.errors import GenerationStopped

    plain, retried, reported, stop, gap = [], [], [], [], []
    with Server(["at once"]) as server:   # imports and the first client: not part of any figure
        _backend(server).generate(_request())
    for _ in range(repeats):
        with Server(["at once"]) as server:
            plain.append(_timed(lambda: _backend(server).generate(_request())))
        with Server([{"content": "late", "delay": 1.5}, "in time"]) as server:
            retried.append(_timed(lambda: _backend(server, timeout_s=0.4).generate(_request())))
        with Server([{"content": "late", "delay": 1.5}]) as server:
            reported.append(_timed(lambda: _backend(server, timeout_s=0.4, max_retries=1).generate(_request())))
        with Server([{"status": 429, "retry_after": 20}]) as server:
            request, stopped_at = _request(), []
            request.cancel = threading.Event()

            def press_stop(cancel=request.cancel, at=stopped_at):
                at.append(time.monotonic())
                cancel.set()

            threading.Timer(0.3, press_stop).start()
            try:
                _backend(server).generate(request)
            except GenerationStopped:
                pass
            stop.append(time.monotonic() - stopped_at[0])
        with Server([{"status": 429, "retry_after": 1}, "after the wait"]) as server:
            _backend(server).generate(_request())
            gap.append(server.sent_at[1] - server.sent_at[0])
    reference = statistics.median(plain)
    load = loadavg()

    def ratio(values: list[float]) -> str:
        return f"{statistics.median(values) / reference:.1f}x one plain call"

    return [
        Row("faults", "reference: one call answered at once", _median(plain), "", None, load),
        Row("faults", "a request timed out (0.4 s) and retried, the late answer due at 1.5 s",
            f"{_median(retried)}, {ratio(retried)}", "< 1.4 s", statistics.median(retried) < 1.4, load),
        Row("faults", "both requests timed out (0.4 s, one retry): the error reported",
            f"{_median(reported)}, {ratio(reported)}", "< 1.5 s", statistics.median(reported) < 1.5, load),
        Row("faults", "Stop 0.3 s into a 20 s Retry-After wait: from the Stop to the call's end",
            f"{_median(stop)}, {ratio(stop)}", "< 1 s", statistics.median(stop) < 1.0, load),
        Row("faults", "HTTP 429 with Retry-After 1 s: the gap to the next request",
            f"{_median(gap)}", "1-2 s", 1.0 <= statistics.median(gap) < 2.0, load),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="runs of each (the median counts)")
    args = parser.parse_args(argv)
    print_rows(run(repeats=args.repeats))
    return 0


if __name__ == "__main__":
    sys.exit(main())
