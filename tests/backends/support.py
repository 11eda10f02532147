"""Helpers shared by the backend tests: an API backend pointed at a scripted server, and a
scripted in-process backend."""
from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass

from backends.base import GenerationRequest, GenerationResult, Usage, VLMBackend
from backends.config import ApiSettings
from backends.errors import TooManyImagesError
from backends.openai_api import OpenAIBackend, RetryPolicy
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
            server.raw_bodies.clear()
            server.abandoned.clear()
            server.script = script if callable(script) else _ListScript(script)
        yield server


class ScriptedBackend(VLMBackend):
    """A fake model: answers from a list (the last entry repeats), and keeps every request.

    An entry is a reply text, `Reply(text, finish_reason)`, or `Failure("why")` for a transport
    failure. `refuse_over=n` makes it
    raise TooManyImagesError for a request of more than n images (with `limit=n` when
    `states_limit`, as an API does; without, as a local model running out of memory does)."""

    kind = "scripted"

    def __init__(self, replies, *, max_images: int | None = None, refuse_over: int | None = None,
                 states_limit: bool = True, on_generate=None, name: str = "test"):
        self.replies = list(replies)
        self.max_images = max_images
        self.refuse_over = refuse_over
        self.states_limit = states_limit
        self.on_generate = on_generate
        self.name = name
        self.requests: list[GenerationRequest] = []

    @property
    def backend_id(self) -> str:
        return f"scripted:{self.name}"

    def generate(self, request: GenerationRequest) -> GenerationResult:
        self.requests.append(request)
        sent = request.num_images()
        if self.refuse_over is not None and sent > self.refuse_over:
            raise TooManyImagesError(f"{self.backend_id} takes at most {self.refuse_over} images",
                                     limit=self.refuse_over if self.states_limit else None, sent=sent)
        if self.on_generate is not None:
            self.on_generate(request)
        reply = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        if isinstance(reply, Failure):
            return GenerationResult(text="", backend=self.backend_id, model=self.name,
                                    latency_s=0.01, error=reply.why)
        text, finish = (reply.text, reply.finish_reason) if isinstance(reply, Reply) else (reply, None)
        return GenerationResult(text=text, backend=self.backend_id, model=self.name,
                                latency_s=0.01, usage=Usage(prompt_tokens=3, completion_tokens=1),
                                finish_reason=finish)

    @property
    def sizes(self) -> list[int]:
        """Images per request, in the order the backend saw them."""
        return [r.num_images() for r in self.requests]


@dataclass(frozen=True)
class Failure:
    why: str


@dataclass(frozen=True)
class Reply:
    text: str
    finish_reason: str | None = None
