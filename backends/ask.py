"""The one way every tab talks to a model: ask, parse, re-ask a malformed reply a bounded number of
times, and keep every raw reply.

Policies, decided here once for all tabs:
- A reply `parse` cannot read (it raises `ValueError`, e.g. `Unparsed`) is asked again, at most
  `attempts` model replies in all; then the result carries `value=None`, every raw reply and the
  last parse error. Nothing is guessed.
- A transport failure (an error result, after the backend's own bounded transport retries) is not
  re-asked: the result carries `failed=True` and the backend's message. The caller records it.
  With `retry_failures=True` (TempCloze: its released evaluator re-asks after any exception within
  its 3 attempts) a failure is an attempt like an unreadable reply and is asked again; when the
  attempts run out the result is `failed` with the last failure's message.
- Too many images: when the backend states a cap (`max_images`) the request is fitted before it is
  sent; when the server refuses a request (`TooManyImagesError`) the `on_too_many` policy returns
  a smaller request, or None to give up. A refused size is not an attempt. The three policies the
  tabs use are below: `step_down` (fewer frames per clip), `resample` (as many frames as the cap
  allows) and a tab's own frame dropper passed as a function.
- A reply cut at max_tokens (`finish_reason == "length"`) is its own error: `truncated=True`, kept
  raw, never parsed as an answer (it may hold half an answer) and not re-asked (the same request
  would be cut again); raise the role's max_tokens instead.
- A set stop event ends the conversation with `GenerationStopped` before the next call.

Each call carries its attempt number (`GenerationRequest.attempt`), which traces record. The
model's reasoning is never parsed: `parse` sees `GenerationResult.text`, the answer alone, and each
reply's reasoning and token counts are kept beside it (`reasonings`, `usages`).

Two backends on one request ("compare with", backends.pair): when `backend` is a `PairedBackend`,
the request is built once and sent to both, each side with its own re-asks, at the same time; both
calls carry one pair id (traces record it). The primary's `Asked` comes back with the partner's in
`partner`; nothing the partner answers steers the caller.
"""
from __future__ import annotations

import dataclasses
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Generic, TypeVar
from collections.abc import Callable, Sequence

from backends.base import GenerationRequest, Usage, VLMBackend
from backends.errors import GenerationStopped, TooManyImagesError

T = TypeVar("T")

#: (the refusal, the request refused) -> a smaller request, or None to give up
TooManyPolicy = Callable[[TooManyImagesError, GenerationRequest], "GenerationRequest | None"]


class Unparsed(ValueError):
    """Raised by a parse function for a reply it cannot read; the message says why."""


@dataclass
class Asked(Generic[T]):
    """What came of asking: the parsed value (None when no reply could be read) and the evidence."""

    value: T | None
    raws: list[str] = field(default_factory=list)  # every reply, in order
    attempts: int = 0          # model replies asked for (a refused image count is not one)
    error: str | None = None   # why `value` is None
    failed: bool = False       # the backend itself failed (transport), as opposed to unparsed
    truncated: bool = False    # the last reply was cut at max_tokens
    request: GenerationRequest | None = None  # the request as finally sent (after any fitting)
    latency_s: float = 0.0
    reasonings: list[str] = field(default_factory=list)    # each reply's reasoning, as `raws`
    usages: list[Usage | None] = field(default_factory=list)  # each reply's token counts
    backend: str = ""          # the backend id that answered
    pair_id: str = ""          # set when the request was also sent to a partner backend
    partner: Asked[T] | None = None  # the partner's answer to the same request

    @property
    def ok(self) -> bool:
        return self.value is not None and self.error is None

    @property
    def raw(self) -> str:
        """The last reply ('' when none came back)."""
        return self.raws[-1] if self.raws else ""

    @property
    def reasoning(self) -> str:
        """The last reply's reasoning ('' when it had none)."""
        return self.reasonings[-1] if self.reasonings else ""

    @property
    def usage(self) -> Usage | None:
        """The last reply's token counts."""
        return self.usages[-1] if self.usages else None

    @property
    def unparsed(self) -> bool:
        return self.value is None and not self.failed and not self.truncated


def reasoning_usage(asked: Asked) -> dict | None:
    """The last reply's token counts as JSON when it reasoned (reasoning text, or a server's
    reasoning token count), else None: records of models that do not reason keep the keys they
    always had."""
    usage = asked.usage
    if usage is None or not (asked.reasoning or usage.reasoning_tokens is not None):
        return None
    return usage.as_dict()


def _image_limit(exc: TooManyImagesError, request: GenerationRequest) -> int:
    """The most images the server will take: its stated limit, else one fewer than was sent."""
    sent = request.num_images()
    if exc.limit is not None and exc.limit < sent:
        return max(0, exc.limit)
    return max(0, sent - 1)


def ask(backend: VLMBackend, request: GenerationRequest, parse: Callable[[str], T], *,
        attempts: int = 3, on_too_many: TooManyPolicy | None = None,
        retry_sleep: float = 0.0, on_attempt: Callable[[int, str], None] | None = None,
        retry_failures: bool = False) -> Asked[T]:
    """Ask `backend`, parse the reply with `parse`, re-ask up to `attempts` replies in all.

    `retry_sleep` seconds (times the attempt number) pass before a re-ask; `on_attempt(n, why)` is
    told of every unreadable reply (and, with `retry_failures`, every failure). See the module
    docstring for the policies."""
    if attempts < 1:
        raise ValueError("attempts must be at least 1")
    partner = getattr(backend, "partner", None)
    if partner is not None:
        return _ask_pair(backend, partner, request, parse, attempts=attempts,
                         on_too_many=on_too_many, retry_sleep=retry_sleep, on_attempt=on_attempt,
                         retry_failures=retry_failures)
    return _ask_one(backend, request, parse, attempts=attempts, on_too_many=on_too_many,
                    retry_sleep=retry_sleep, on_attempt=on_attempt, retry_failures=retry_failures)


def _ask_pair(paired: VLMBackend, partner: VLMBackend, request: GenerationRequest,
              parse: Callable[[str], T], *, on_attempt: Callable[[int, str], None] | None,
              **policy) -> Asked[T]:
    """The same request to the primary (here) and the partner (in a thread), one pair id. It is
    fitted once to the pair's cap (the smaller of the two), so both are sent the same frames."""
    request = dataclasses.replace(request, pair=uuid.uuid4().hex[:12])
    fitted = _fit_to_cap(paired, request, policy["on_too_many"])
    if fitted is None:
        out = _too_many(Asked(value=None, backend=paired.backend_id, pair_id=request.pair),
                        paired, None)
        out.partner = _too_many(Asked(value=None, backend=partner.backend_id,
                                      pair_id=request.pair), paired, None)
        return out
    request = dataclasses.replace(fitted, pair=request.pair)
    box: dict[str, object] = {}

    def partner_side() -> None:
        try:
            box["asked"] = _ask_one(partner, dataclasses.replace(request, pair_side="second"),
                                    parse, on_attempt=None, **policy)
        except GenerationStopped as exc:
            box["stopped"] = exc
        except Exception as exc:  # noqa: BLE001 - the partner's failure never ends the primary's
            failed: Asked[T] = Asked(value=None, failed=True, backend=partner.backend_id,
                                     error=f"{partner.backend_id} failed: {exc}", request=request)
            box["asked"] = failed

    thread = threading.Thread(target=partner_side, name="ask-partner", daemon=True)
    thread.start()
    try:
        out = _ask_one(paired.primary, dataclasses.replace(request, pair_side="first"), parse,
                       on_attempt=on_attempt, **policy)
    finally:
        thread.join()
    if "stopped" in box:
        raise box["stopped"]  # type: ignore[misc]
    out.pair_id = request.pair
    out.partner = box["asked"]  # type: ignore[assignment]
    out.partner.pair_id = request.pair
    return out


def _ask_one(backend: VLMBackend, request: GenerationRequest, parse: Callable[[str], T], *,
             attempts: int, on_too_many: TooManyPolicy | None, retry_sleep: float,
             on_attempt: Callable[[int, str], None] | None, retry_failures: bool) -> Asked[T]:
    out: Asked[T] = Asked(value=None, backend=backend.backend_id)
    request = _fit_to_cap(backend, request, on_too_many)
    if request is None:
        return _too_many(out, backend, None)
    while out.attempts < attempts:
        if request.cancel is not None and request.cancel.is_set():
            raise GenerationStopped("stopped by the user")
        request = dataclasses.replace(request, attempt=out.attempts + 1)
        try:
            result = backend.generate(request)
        except TooManyImagesError as exc:
            smaller = on_too_many(exc, request) if on_too_many else None
            if smaller is None or smaller.num_images() >= request.num_images():
                return _too_many(out, backend, exc, request)
            request = smaller
            continue
        out.attempts += 1
        out.request = request
        out.latency_s += result.latency_s
        if not result.ok:
            out.failed, out.error = True, f"{backend.backend_id} failed: {result.error}"
            if not retry_failures or out.attempts >= attempts:
                return out
            if on_attempt:
                on_attempt(out.attempts, out.error)
            if retry_sleep:
                time.sleep(retry_sleep * out.attempts)
            continue
        out.failed = False
        out.raws.append(result.text)
        out.reasonings.append(result.reasoning)
        out.usages.append(result.usage)
        if result.finish_reason == "length":
            out.truncated = True
            out.error = (f"truncated at max_tokens ({request.params.max_tokens}): the reply was cut "
                         "before it ended; raise the role's max_tokens")
            return out
        try:
            out.value = parse(result.text)
            out.error = None
            return out
        except ValueError as exc:
            out.error = f"unparsed reply ({exc})"
            if on_attempt:
                on_attempt(out.attempts, str(exc))
        if out.attempts < attempts and retry_sleep:
            time.sleep(retry_sleep * out.attempts)
    out.error = f"{out.error}; gave up after {out.attempts} attempts"
    return out


def _fit_to_cap(backend: VLMBackend, request: GenerationRequest,
                on_too_many: TooManyPolicy | None) -> GenerationRequest | None:
    cap = backend.max_images
    if cap is None or request.num_images() <= cap:
        return request
    if on_too_many is None:
        return None
    exc = TooManyImagesError(f"{backend.backend_id} accepts at most {cap} images per request",
                             limit=cap, sent=request.num_images())
    fitted = on_too_many(exc, request)
    return fitted if fitted is not None and fitted.num_images() <= cap else None


def _too_many(out: Asked, backend: VLMBackend, exc: TooManyImagesError | None,
              request: GenerationRequest | None = None) -> Asked:
    out.failed = True
    out.request = request or out.request
    detail = f": {exc}" if exc else f" (it accepts at most {backend.max_images} images per request)"
    out.error = f"{backend.backend_id} refused the request's images{detail}"
    return out


# -- the too-many-images policies ------------------------------------------------------------------

def step_down(build: Callable[[int], GenerationRequest], counts: Sequence[int]) -> TooManyPolicy:
    """Rebuild the request with the next smaller count (e.g. frames per clip 16, 12, 4, 2, 1) whose
    request fits the server's limit; None when even the smallest does not fit."""

    def policy(exc: TooManyImagesError, request: GenerationRequest) -> GenerationRequest | None:
        limit = _image_limit(exc, request)
        for n in counts:
            smaller = build(n)
            if smaller.num_images() <= limit:
                return dataclasses.replace(smaller, cancel=request.cancel, pair=request.pair,
                                           pair_side=request.pair_side)
        return None

    return policy


def resample(build: Callable[[int], GenerationRequest]) -> TooManyPolicy:
    """Rebuild the request with as many frames as the server's limit allows (`build(limit)` must
    return a request of at most `limit` images)."""

    def policy(exc: TooManyImagesError, request: GenerationRequest) -> GenerationRequest | None:
        limit = _image_limit(exc, request)
        if limit < 1:
            return None
        return dataclasses.replace(build(limit), cancel=request.cancel, pair=request.pair,
                                   pair_side=request.pair_side)

    return policy


def trim(drop: Callable[[GenerationRequest, int], GenerationRequest]) -> TooManyPolicy:
    """Keep the request's structure and let `drop(request, limit)` remove images until it fits."""

    def policy(exc: TooManyImagesError, request: GenerationRequest) -> GenerationRequest | None:
        return drop(request, _image_limit(exc, request))

    return policy
