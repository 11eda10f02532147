#!/usr/bin/env python
"""A tiny OpenAI-compatible chat server on 127.0.0.1 for the throughput benchmarks (not a test).

    python scripts/bench_server.py [--delay 0.2]    # prints its base URL, serves until stdin closes

Every POST to /v1/chat/completions is answered after `--delay` seconds (one thread per request, so
any number of requests wait at once, like a server that batches) with a reply each `run` command
parses: the window-search localizer gets an interval inside the window its prompt names, a cloze
question gets {"answer": "B"}, an impact region question gets "head", anything else a short text.
It counts requests and images (GET /stats).
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

WINDOW = re.compile(r"window runs from ([\d.]+) seconds to ([\d.]+) seconds")


def reply_for(body: dict) -> str:
    texts, images = [], 0
    for message in body.get("messages", []):
        content = message.get("content")
        parts = content if isinstance(content, list) else [{"type": "text", "text": content or ""}]
        for part in parts:
            if part.get("type") == "text":
                texts.append(part.get("text") or "")
            else:
                images += 1
    text = "\n".join(texts)
    if (window := WINDOW.search(text)) is not None:
        start, end = float(window.group(1)), float(window.group(2))
        return f"The event happens in {start + 0.25 * (end - start):.1f} - {start + 0.5 * (end - start):.1f} seconds"
    if "[Candidate A]" in text:
        return '{"answer": "B", "reason": "it connects the beginning to the end"}'
    if "body regions" in text:
        return "head"
    return "ok"


class Stats:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.requests = 0
        self.images = 0


def make_server(delay: float, port: int = 0) -> ThreadingHTTPServer:
    stats = Stats()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:
            pass

        def _send(self, payload: dict, status: int = 200) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path.rstrip("/").endswith("/stats"):
                self._send({"requests": stats.requests, "images": stats.images})
            else:
                self._send({"object": "list", "data": [{"id": "bench", "object": "model"}]})

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
            images = sum(1 for m in body.get("messages", []) if isinstance(m.get("content"), list)
                         for p in m["content"] if p.get("type") != "text")
            with stats.lock:
                stats.requests += 1
                stats.images += images
            content = reply_for(body)
            time.sleep(delay)
            self._send({"id": "bench", "object": "chat.completion", "created": int(time.time()),
                        "model": body.get("model", "bench"),
                        "choices": [{"index": 0, "finish_reason": "stop",
                                     "message": {"role": "assistant", "content": content}}],
                        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})

    ThreadingHTTPServer.request_queue_size = 256  # 64 clients connect at once
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    return server


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--delay", type=float, default=0.2, help="seconds before each answer")
    args = ap.parse_args(argv)
    server = make_server(args.delay)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.5}, daemon=True).start()
    print(f"http://127.0.0.1:{server.server_address[1]}/v1", flush=True)
    sys.stdin.read()  # until the benchmark closes our stdin
    server.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
