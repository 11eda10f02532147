"""A real OpenAI-compatible HTTP server on 127.0.0.1 for tests: scripted answers and faults.

    with ScriptedOpenAIServer(["first answer", {"status": 429, "headers": {"Retry-After": "1"}},
                               "second answer"]) as server:
        backend = resolve("openai:test-model", api=ApiSettings(base_url=server.url, api_key="sk-test"))

Each script entry is consumed by one POST to /v1/chat/completions (or /v1/embeddings):
  - str: a normal completion whose message content is that string;
  - {"content": str, "delay": s}: answer after waiting s seconds (use for timeouts); a client
    that closes the connection during the wait is recorded in `server.abandoned` (the request's
    index in `server.requests`) and gets no answer;
  - {"content": str, "finish_reason": "length"}: a completion with that finish_reason ("stop" else);
  - {"content": str, "reasoning_content": str} (or "reasoning"): the reasoning in that message
    field, as vLLM's / SGLang's reasoning parsers (or newer vLLM, OpenRouter) send it;
  - {"content": str, "usage": {...}}: that usage object (e.g. with
    "completion_tokens_details": {"reasoning_tokens": n}) instead of the default counts;
  - {"status": int, "body": str|dict, "headers": {...}}: an error response;
  - {"malformed": True}: a 200 whose body is not JSON;
  - {"empty_choices": True}: a 200 with "choices": [];
  - {"drop": True}: close the connection without answering.
A callable script is called with the parsed request body and returns one such entry.
GET /v1/models lists `models` (("test-model",) by default); `models=None`: the server has no such
route (404), as some servers. `api_key`: every request with another Bearer key gets a 401.
When a list script runs out, the last entry is repeated. `server.requests` holds every parsed body.
"""
from __future__ import annotations

import json
import select
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from collections.abc import Callable


class ScriptedOpenAIServer:
    def __init__(self, script: list[Any] | Callable[[dict], Any], *, embed_dim: int = 8,
                 models: tuple[str, ...] | None = ("test-model",), api_key: str | None = None):
        self.script = script
        self.models = models
        self.api_key = api_key
        self.embed_dim = embed_dim
        self.requests: list[dict] = []
        self.headers_seen: list[dict] = []
        #: every POST body as the bytes that came over the wire
        self.raw_bodies: list[bytes] = []
        self.abandoned: list[int] = []
        self._lock = threading.Lock()
        self._index = 0
        self._httpd: ThreadingHTTPServer | None = None

    # -- script -------------------------------------------------------------------------------
    def _next(self, body: dict) -> Any:
        if callable(self.script):
            return self.script(body)
        with self._lock:
            entry = self.script[min(self._index, len(self.script) - 1)]
            self._index += 1
        return entry

    @property
    def url(self) -> str:
        assert self._httpd is not None
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def __enter__(self) -> ScriptedOpenAIServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # keep test output clean
                pass

            def _send(self, status: int, payload: bytes, headers: dict | None = None,
                      ctype: str = "application/json"):
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(payload)))
                for k, v in (headers or {}).items():
                    self.send_header(k, str(v))
                self.end_headers()
                self.wfile.write(payload)

            def _client_left_within(self, seconds: float) -> bool:
                """Wait `seconds`; True as soon as the client closes the connection."""
                end = time.monotonic() + seconds
                while (left := end - time.monotonic()) > 0:
                    readable, _, _ = select.select([self.connection], [], [], min(left, 0.05))
                    if not readable:
                        continue
                    try:
                        if self.connection.recv(1, socket.MSG_PEEK) == b"":
                            return True
                    except OSError:
                        return True
                    time.sleep(max(0.0, end - time.monotonic()))  # bytes, not a close: wait on
                    return False
                return False

            def _refused(self) -> bool:
                if server.api_key is None or self.headers.get("Authorization") == f"Bearer {server.api_key}":
                    return False
                self._send(401, b'{"error": {"message": "Incorrect API key provided"}}')
                return True

            def do_GET(self):
                if self._refused():
                    return
                if self.path.rstrip("/").endswith("/models") and server.models is not None:
                    self._send(200, json.dumps({"object": "list", "data": [
                        {"id": m, "object": "model"} for m in server.models]}).encode())
                else:
                    self._send(404, b'{"error": {"message": "not found"}}')

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if self._refused():
                    return
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    body = {"_raw": raw.decode("utf-8", "replace")}
                with server._lock:
                    server.requests.append(body)
                    server.raw_bodies.append(raw)
                    server.headers_seen.append(dict(self.headers))
                    index = len(server.requests) - 1
                entry = server._next(body)
                if isinstance(entry, str):
                    entry = {"content": entry}
                if entry.get("delay") and self._client_left_within(float(entry["delay"])):
                    with server._lock:
                        server.abandoned.append(index)
                    self.close_connection = True
                    return
                if entry.get("drop"):
                    self.close_connection = True
                    try:
                        self.connection.shutdown(2)
                    except OSError:
                        pass
                    return
                if "status" in entry:
                    err = entry.get("body", {"error": {"message": f"scripted {entry['status']}"}})
                    payload = err.encode() if isinstance(err, str) else json.dumps(err).encode()
                    self._send(int(entry["status"]), payload, entry.get("headers"))
                    return
                if entry.get("malformed"):
                    self._send(200, b"{this is not json")
                    return
                if self.path.rstrip("/").endswith("/embeddings"):
                    inputs = body.get("input", [])
                    inputs = [inputs] if isinstance(inputs, str) else inputs
                    data = []
                    for i, text in enumerate(inputs):
                        vec = [float((hash(str(text)) >> (4 * k)) % 17 + 1) for k in range(server.embed_dim)]
                        data.append({"object": "embedding", "index": i, "embedding": vec})
                    self._send(200, json.dumps({"object": "list", "data": data, "model": body.get("model"),
                                                "usage": {"prompt_tokens": 1, "total_tokens": 1}}).encode())
                    return
                message = {"role": "assistant", "content": entry.get("content", "")}
                for name in ("reasoning_content", "reasoning"):
                    if name in entry:
                        message[name] = entry[name]
                choices = [] if entry.get("empty_choices") else [{
                    "index": 0, "finish_reason": entry.get("finish_reason", "stop"),
                    "message": message}]
                usage = entry.get("usage", {"prompt_tokens": 11, "completion_tokens": 7,
                                            "total_tokens": 18})
                self._send(200, json.dumps({
                    "id": "chatcmpl-test", "object": "chat.completion", "created": int(time.time()),
                    "model": body.get("model", "test-model"), "choices": choices, "usage": usage,
                }).encode())

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
