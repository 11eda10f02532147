"""Helpers shared by the backend tests: an API backend pointed at a scripted server."""
from __future__ import annotations

import contextlib
import threading

from backends.openai_api import OpenAIBackend, RetryPolicy
from backends.config import ApiSettings
from tests.helpers.openai_server import ScriptedOpenAIServer

SECRET = "sk-secret-test-123"

#: short waits so fault tests stay fast; Retry-After from the server still wins when present
FAST = RetryPolicy(max_retries=2, base_delay_s=0.05, max_delay_s=30.0)


def api_backend(server, *, key: str | None = SECRET, max_images: int | None = None,
                timeout_s: float = 5.0, policy: RetryPolicy = FAST,
                model: str = "test-model") -> OpenAIBackend:
    settings = ApiSettings(base_url=server.url, api_key=key, max_images=max_images,
                           timeout_s=timeout_s, max_retries=policy.max_retries)
    return OpenAIBackend(model, settings, policy=policy)



class _ListScript:
    """The ScriptedOpenAIServer list semantics: one entry per request, the last one repeats."""

    def __init__(self, entries):
        self.entries = list(entries)
        self.index = 0
        self.lock = threading.Lock()

    def __call__(self, body):
        with self.lock:
            entry = self.entries[min(self.index, len(self.entries) - 1)]
            self.index += 1
        return entry


class SharedServer:
    """One ScriptedOpenAIServer for a whole test session (starting and stopping one costs ~0.5 s);
    `with shared(script) as server:` gives it a fresh script and empty request logs."""

    def __init__(self, server: ScriptedOpenAIServer):
        self.server = server

    @contextlib.contextmanager
    def __call__(self, script):
        server = self.server
        with server._lock:
            server.requests.clear()
            server.headers_seen.clear()
            server.script = script if callable(script) else _ListScript(script)
        yield server
