"""OpenAI-compatible chat API (OpenAI, vLLM, SGLang, ...) with our own bounded retries.

Frames go out as downscaled JPEG data URLs; an `EncodedImage` goes out as its own bytes (never
decoded, resized or encoded again). `GenerationParams.thinking` goes out as the server understands
it (`backends.thinking`). `max_tokens` is sent as asked, never capped here. Transport failures (429, 5xx, timeouts, dropped
connections, empty or malformed bodies) are retried with exponential backoff that honours
`Retry-After`; when attempts run out the call returns `GenerationResult(error=...)`.
The model's reasoning (a `reasoning_content` / `reasoning` field, a closed `<think>` block in the
content) goes to `GenerationResult.reasoning`, the answer alone to `text` (backends.reasoning).
"""
from __future__ import annotations

import base64
import email.utils
import inspect
import json
import threading
import time
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, TypeVar
from collections.abc import Callable

from backends import thinking as thinking_wire
from backends.base import EncodedImage, GenerationRequest, GenerationResult, Message, Usage, VLMBackend
from backends.errors import BackendError, GenerationStopped, TooManyImagesError
from backends.config import HUNG_AFTER_TIMEOUTS, HUNG_PAUSE_S, TIMEOUT_ENV, ApiSettings
from backends.images import DataURL, data_url, encoded_data_url, jpeg_data_url
from backends.reasoning import join_reasoning, split_reasoning

T = TypeVar("T")

#: phrases a server uses when a request carries too many images / tokens for the model
_TOO_MANY_IMAGES_HINTS = ("too many images", "at most", "image limit", "images per",
                          "context length", "context_length", "maximum context", "too long",
                          "too large", "request entity",
                          "max_model_len", "maximum number of images")
_KEY_HINT = "set OPENAI_API_KEY or paste a key in the Model panel"


class _Retryable(Exception):
    """A failure worth another attempt (message is one readable sentence)."""

    def __init__(self, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 3
    base_delay_s: float = 1.0
    max_delay_s: float = 30.0

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait before attempt `attempt + 1` (attempt counts from 0)."""
        if retry_after is not None and retry_after >= 0:
            return min(self.max_delay_s, retry_after)
        return min(self.max_delay_s, self.base_delay_s * (2 ** attempt))


def shown_url(url: str | None) -> str:
    """A base URL as a message may show it: without any user:password part."""
    from urllib.parse import urlsplit, urlunsplit

    if not url:
        return "the default OpenAI server"
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", "")) if parts.scheme else url


class HungServer:
    """Requests to one server that timed out in a row, with no answer of any kind between them.
    After `limit` of them the server is taken as hung for `timeout_s` seconds: a call then fails at
    once, with one line naming the server and the timeout, instead of waiting for the timeout again
    on each of its tries (a dead server that accepts connections, a stuck queue). Any answer
    (even an error status) clears the count; after the pause (HUNG_PAUSE_S, or the timeout when
    longer) a request may try again."""

    def __init__(self, url: str | None, timeout_s: float, limit: int = HUNG_AFTER_TIMEOUTS):
        self.url, self.timeout_s, self.limit = url, timeout_s, max(1, limit)
        self.pause_s = max(HUNG_PAUSE_S, timeout_s)
        self._lock = threading.Lock()
        self._in_a_row = 0
        self._until = 0.0   # monotonic time until which no request is sent

    @property
    def message(self) -> str:
        return (f"the request timed out: the server at {shown_url(self.url)} did not answer within "
                f"{self.timeout_s:g} s, {self.limit} request(s) in a row, so it looks hung; nothing "
                f"more is sent to it for {self.pause_s:g} s. Check the server, or raise --timeout "
                f"(${TIMEOUT_ENV}) if its answers take longer")

    def hung(self) -> bool:
        with self._lock:
            return time.monotonic() < self._until

    def timed_out(self) -> bool:
        """Count a timed-out request; True when that makes the server hung."""
        with self._lock:
            self._in_a_row += 1
            if self._in_a_row >= self.limit:
                self._in_a_row = 0
                self._until = time.monotonic() + self.pause_s
                return True
            return False

    def answered(self) -> None:
        with self._lock:
            self._in_a_row = 0


def hung_worst_case_s(timeout_s: float, policy: RetryPolicy, limit: int = HUNG_AFTER_TIMEOUTS) -> float:
    """Seconds at most from the first request to a hung server until every call fails at once:
    `limit` timeouts and the backoff waits between them (a call's tries in a row; the calls of a
    batch in a row wait no more than that)."""
    return limit * timeout_s + sum(policy.delay(attempt, None) for attempt in range(limit - 1))


def _sleep(seconds: float, cancel: threading.Event | None) -> None:
    if cancel is not None:
        if cancel.wait(seconds):
            raise GenerationStopped("Generation was stopped.")
    else:
        time.sleep(seconds)


def _check_cancel(cancel: threading.Event | None) -> None:
    if cancel is not None and cancel.is_set():
        raise GenerationStopped("Generation was stopped.")


def parse_retry_after(headers: Any) -> float | None:
    """Seconds from `retry-after-ms` or `Retry-After` (seconds or an HTTP date)."""
    if headers is None:
        return None
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return float(millis) / 1000.0
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        when = email.utils.parsedate_to_datetime(value) if value else None
        return max(0.0, when.timestamp() - time.time()) if when else None


def server_message(error: Exception) -> str:
    """The server's own error text, short, from an openai APIStatusError."""
    body = getattr(error, "body", None)
    message = None
    if isinstance(body, dict):
        inner = body.get("error", body)
        message = inner.get("message") if isinstance(inner, dict) else str(inner)
    elif isinstance(body, str):
        message = body
    message = " ".join(str(message or getattr(error, "message", "") or error).split())
    return message[:300]


def call_with_retries(fn: Callable[[], T], *, label: str, policy: RetryPolicy,
                      secret: str | None, cancel: threading.Event | None = None,
                      on_bad_request: Callable[[str], bool] | None = None,
                      hung: HungServer | None = None) -> T:
    """Run `fn` (one HTTP call) with bounded retries. Raises BackendError with a readable message
    when attempts run out or the server refuses for good; never includes the key.

    `on_bad_request(server_text)` sees 400/413/422 answers: it may raise (e.g. TooManyImagesError)
    or return True to try again at once with changed arguments. `hung` counts timeouts in a row
    across calls: once it takes the server as hung, no try is sent (HungServer)."""
    import openai

    last = "no attempt was made"
    attempts = policy.max_retries + 1
    for attempt in range(attempts):
        _check_cancel(cancel)
        if hung is not None and hung.hung():
            raise BackendError(_scrub(f"{label}: {hung.message}.", secret))
        retry_after = None
        try:
            result = fn()
            if hung is not None:
                hung.answered()
            return result
        except _Retryable as exc:
            last, retry_after = str(exc), exc.retry_after
            if hung is not None:
                hung.answered()   # it answered, if badly
        except openai.APIStatusError as exc:
            if hung is not None:
                hung.answered()
            status, text = exc.status_code, server_message(exc)
            if status == 401:
                raise BackendError(_scrub(f"{label}: the server refused the API key (HTTP 401: "
                                          f"{text}); {_KEY_HINT}.", secret)) from None
            if status == 429 or status >= 500 or status == 408:
                last = f"HTTP {status}: {text}"
                retry_after = parse_retry_after(
                    exc.response.headers if exc.response is not None else None)
            else:
                if (status in (400, 413, 422) and on_bad_request is not None
                        and on_bad_request(text) and attempt + 1 < attempts):
                    last = f"HTTP {status}: {text}"
                    continue
                raise BackendError(_scrub(f"{label}: HTTP {status}: {text}".rstrip(".") + ".",
                                          secret)) from None
        except openai.APITimeoutError:
            last = "the request timed out"
            if hung is not None and hung.timed_out():
                raise BackendError(_scrub(f"{label}: {hung.message}.", secret)) from None
        except openai.APIConnectionError as exc:
            last = f"connection failed ({' '.join(str(exc.__cause__ or exc).split())[:200]})"
        except (openai.APIResponseValidationError, ValueError) as exc:
            last = f"the server sent a malformed response ({type(exc).__name__})"
        if attempt + 1 < attempts:
            _sleep(policy.delay(attempt, retry_after), cancel)
    raise BackendError(_scrub(f"{label} failed after {attempts} attempt(s): {last}.", secret))


def _scrub(text: str, secret: str | None) -> str:
    if secret and secret != "EMPTY" and secret in text:
        text = text.replace(secret, "***")
    return text


def _chat_completion():
    from openai.types.chat import ChatCompletion

    return ChatCompletion


class _Fields(SimpleNamespace):
    """A reply's JSON object read as attributes, a field the server left out reading as None: what
    the SDK's typed ChatCompletion gives the code below, without building its pydantic models
    (~0.4 ms of CPU a reply under the GIL at high concurrency: scripts/bench_batch.py --profile-core)."""

    def __getattr__(self, name: str) -> Any:  # only for names not set
        if name.startswith("__"):
            raise AttributeError(name)
        return None


def _as_fields(value: Any) -> Any:
    if isinstance(value, dict):
        return _Fields(**{str(k): _as_fields(v) for k, v in value.items()})
    if isinstance(value, list):
        return [_as_fields(v) for v in value]
    return value


def read_completion(body: bytes) -> Any:
    """A chat completion's body as attributes (response.choices[0].message.content, .usage, ...);
    ValueError when it is not JSON (retried as a malformed response)."""
    return _as_fields(json.loads(body))


def preload() -> None:
    """Import the client library ahead of a first call (backends.registry.preload)."""
    _chat_completion()


def make_client(settings: ApiSettings):
    import openai

    return openai.OpenAI(base_url=settings.base_url, api_key=settings.api_key or "EMPTY",
                         timeout=settings.timeout_s, max_retries=0)


class PlainHTTP:
    """Posts a chat request's bytes to a plain `http://` server (vLLM, SGLang, a local proxy) with
    the standard library's http.client, one keep-alive connection per thread: the openai SDK's
    request path (options, headers, httpx's connection pool) costs ~2 ms of CPU a request under
    the GIL, this one ~0.5 ms (docs/benchmarks.md "Cloze at c=64"). The SDK's behaviour is kept:
    its headers (the key, User-Agent, X-Stainless-*), its timeout on connect, send and each read,
    and its error types, made by the SDK itself (`_make_status_error_from_response`, APITimeoutError,
    APIConnectionError), so `call_with_retries` retries, times out and words its errors as before.
    A kept connection the server closed meanwhile is reopened once at once (it never read the
    request). Used only where the SDK would connect directly (`for_client`)."""

    def __init__(self, client: Any, base_url: str, timeout_s: float):
        from urllib.parse import urlsplit

        parts = urlsplit(base_url)
        self._sdk = client
        self._host, self._port = parts.hostname or "localhost", parts.port or 80
        self._prefix = parts.path.rstrip("/")
        self._url = f"http://{self._host}:{self._port}{self._prefix}"
        self.timeout_s = timeout_s
        self._httpx = _httpx_of(client)
        headers = {**client.default_headers, **client.auth_headers}
        self._headers = {k: v for k, v in headers.items() if isinstance(v, str)}
        self._headers.update({"x-stainless-retry-count": "0", "x-stainless-read-timeout": str(float(timeout_s))})
        self._local = threading.local()
        self._open: set[Any] = set()
        self._lock = threading.Lock()

    @classmethod
    def for_client(cls, client: Any, settings: ApiSettings) -> PlainHTTP | None:
        """A PlainHTTP for `client`'s server, or None where the SDK must post: an https or
        default server, a proxy from the environment, an SDK that authenticates otherwise than by
        its key (a token provider, custom auth) or lacks what is used here."""
        import urllib.request
        from urllib.parse import urlsplit

        url = settings.base_url or ""
        parts = urlsplit(url)
        if parts.scheme != "http" or parts.username or parts.password or parts.query:
            return None
        proxies = urllib.request.getproxies()
        if (proxies.get("http") or proxies.get("all")) and not urllib.request.proxy_bypass(parts.hostname or ""):
            return None
        if getattr(client, "_provider_runtime", None) is not None or getattr(client, "custom_auth", None) is not None:
            return None
        if _httpx_of(client) is None or not hasattr(client, "_make_status_error_from_response"):
            return None
        try:
            return cls(client, url, settings.timeout_s)
        except Exception:  # noqa: BLE001 - anything unexpected in the SDK's attributes: the SDK posts
            return None

    def _connection(self) -> tuple[Any, bool]:
        import http.client

        conn = getattr(self._local, "conn", None)
        if conn is not None:
            return conn, True
        conn = http.client.HTTPConnection(self._host, self._port, timeout=self.timeout_s)
        self._local.conn = conn
        with self._lock:
            self._open.add(conn)
        return conn, False

    def _drop(self, conn: Any) -> None:
        conn.close()
        self._local.conn = None
        with self._lock:
            self._open.discard(conn)

    def post(self, path: str, body: bytes) -> bytes:
        """The 2xx response's body; an SDK error (openai.APIStatusError and its kinds,
        APITimeoutError, APIConnectionError) otherwise."""
        import http.client
        import openai

        for attempt in range(2):
            conn, reused = self._connection()
            try:
                conn.request("POST", self._prefix + path, body=body, headers=self._headers)
                response = conn.getresponse()
                data = response.read()
            except TimeoutError:
                self._drop(conn)
                raise openai.APITimeoutError(request=self._request(path)) from None
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError) as exc:
                self._drop(conn)
                if reused and attempt == 0:  # a kept connection the server had closed: once more
                    continue
                if isinstance(exc, http.client.RemoteDisconnected):  # worded as httpx words it
                    exc = ConnectionError("Server disconnected without sending a response.")
                raise openai.APIConnectionError(request=self._request(path)) from exc
            except (OSError, http.client.HTTPException) as exc:
                self._drop(conn)
                raise openai.APIConnectionError(request=self._request(path)) from exc
            if response.will_close:
                self._drop(conn)
            encoding = (response.getheader("content-encoding") or "").strip().lower()
            if encoding in ("gzip", "deflate"):
                import zlib

                data = zlib.decompress(data, 47 if encoding == "gzip" else 15)
            if not 200 <= response.status < 300:
                raise self._sdk._make_status_error_from_response(self._httpx.Response(
                    response.status, headers=response.getheaders(), content=data, request=self._request(path)))
            return data
        raise AssertionError("unreachable")

    def _request(self, path: str) -> Any:
        return self._httpx.Request("POST", self._url + path)

    def close(self) -> None:
        with self._lock:
            conns, self._open = list(self._open), set()
        for conn in conns:
            conn.close()


def _httpx_of(client: Any) -> Any:
    """The httpx module the SDK's errors are made of (the SDK's own client's)."""
    import sys

    for cls in type(getattr(client, "_client", None)).__mro__:
        root = cls.__module__.split(".")[0]
        if root.startswith("httpx") and root in sys.modules:
            return sys.modules[root]
    return None


def _spliceable(url: Any) -> bool:
    """A data URL made here (`backends.images.DataURL`: base64 behind a checked prefix), which
    JSON writes as it is, nothing escaped."""
    return type(url) is DataURL


def body_bytes(body: dict[str, Any]) -> bytes:
    """`body` as the JSON bytes the openai SDK posts for it (`openai._utils._json.openapi_dumps`:
    compact separators, ensure_ascii=False, no NaN), byte for byte, without the JSON encoder
    walking the images: each image part (megabytes of base64 a request, which JSON writes as it
    is) stands as a short mark while the rest is encoded, then its bytes are spliced in; a part
    of the usual shape ({"type": "image_url", "image_url": {"url": <DataURL>}}) as a whole, so the
    encoder sees one string a picture, not two dicts."""
    messages = body.get("messages")
    spliced: list[tuple[bool, str]] = []   # (the whole part?, its data URL)
    slim_messages = []
    for message in messages if isinstance(messages, list) else ():
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            slim_messages.append(message)
            continue
        parts = []
        for part in content:
            image = part.get("image_url") if type(part) is dict else None
            url = image.get("url") if type(image) is dict else None
            if not _spliceable(url):
                parts.append(part)
            elif len(image) == 1 and tuple(part) == _IMAGE_PART_KEYS:
                parts.append(_MARK)
                spliced.append((True, url))
            else:
                parts.append({**part, "image_url": {**image, "url": _MARK}})
                spliced.append((False, url))
        slim_messages.append({**message, "content": parts})
    if not spliced:
        return _dumps(body)
    pieces = _dumps({**body, "messages": slim_messages}).split(_MARK_JSON)
    if len(pieces) != len(spliced) + 1:  # the mark met elsewhere (cannot happen by chance): as a whole
        return _dumps(body)
    out = [pieces[0]]
    for (whole, url), piece in zip(spliced, pieces[1:]):
        out += [_PART_HEAD if whole else b'"', url.encode("ascii"), _PART_TAIL if whole else b'"', piece]
    return b"".join(out)


#: stands for a data URL, or a whole image part, while the rest of a body is encoded (a string
#: no request carries)
_MARK = "\x00vbe-image-url-7f3a9c\x00"
_MARK_JSON = json.dumps(_MARK).encode()
_IMAGE_PART_KEYS = ("type", "image_url")
#: an image part of the usual shape as JSON writes it, around its data URL
_PART_HEAD = b'{"type":"image_url","image_url":{"url":"'
_PART_TAIL = b'"}}'


def _encoded_url(image: EncodedImage) -> str:
    """`image.data_url`, made once per object as that property makes it, without its lock
    (`functools.cached_property` takes one lock for every object of the class on a first read:
    64 threads each reading 96 new pictures a request queue there)."""
    url = image.__dict__.get("data_url")
    if url is None:
        prefix = _PLAIN_PREFIXES.get(image.mime)
        if prefix is not None:   # images.data_url's result, its prefix checked once per type
            url = DataURL(prefix + base64.b64encode(image.data).decode("ascii"))
        else:
            url = data_url(image.mime, image.data)
            if type(url) is DataURL:
                _PLAIN_PREFIXES[image.mime] = url[:url.index(",") + 1]
        image.__dict__["data_url"] = url
    return url


#: mime type -> its data URL prefix, for the types whose prefix makes a DataURL
_PLAIN_PREFIXES: dict[str, str] = {}


def _dumps(value: Any) -> bytes:
    """As openai._utils._json.openapi_dumps encodes a body of plain JSON values."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


def to_openai_messages(messages: list[Message], max_side: int | None = None) -> list[dict]:
    """Our messages in OpenAI chat format; a text-only message becomes a plain string."""
    out = []
    for message in messages:
        if all(isinstance(p, str) for p in message.content):
            out.append({"role": message.role, "content": "".join(message.content)})
            continue
        parts = []
        for part in message.content:
            if isinstance(part, str):
                parts.append({"type": "text", "text": part})
            else:
                url = (_encoded_url(part) if type(part) is EncodedImage
                       else encoded_data_url(part) if isinstance(part, EncodedImage)
                       else jpeg_data_url(part, max_side))
                parts.append({"type": "image_url", "image_url": {"url": url}})
        out.append({"role": message.role, "content": parts})
    return out


def _marked_messages(messages: list[Message]) -> tuple[list[dict], list[EncodedImage]] | None:
    """`to_openai_messages(messages)` with each encoded picture of a plain mime type (one whose
    data URL is a DataURL) standing as `_MARK` in place of its whole part, and those pictures in
    order, for `_spliced`; None when there is none (the body is encoded as usual)."""
    out: list[dict] = []
    images: list[EncodedImage] = []
    for message in messages:
        if all(isinstance(p, str) for p in message.content):
            out.append({"role": message.role, "content": "".join(message.content)})
            continue
        parts: list[Any] = []
        for part in message.content:
            if isinstance(part, str):
                parts.append({"type": "text", "text": part})
            elif type(part) is EncodedImage and _plain_prefix(part.mime) is not None:
                parts.append(_MARK)
                images.append(part)
            else:
                url = encoded_data_url(part) if isinstance(part, EncodedImage) else jpeg_data_url(part, None)
                parts.append({"type": "image_url", "image_url": {"url": url}})
        out.append({"role": message.role, "content": parts})
    return (out, images) if images else None


def _spliced(encoded: bytes, images: list[EncodedImage]) -> bytes | None:
    """The JSON `encoded` with each `_MARK` replaced by its picture's image part, as the SDK
    encodes {"type": "image_url", "image_url": {"url": <its data URL>}}; None when the marks do
    not match the pictures."""
    pieces = encoded.split(_MARK_JSON)
    if len(pieces) != len(images) + 1:
        return None
    out = [pieces[0]]
    for image, piece in zip(images, pieces[1:]):
        out += [_PART_HEAD, _plain_prefix(image.mime), _base64_of(image), _PART_TAIL, piece]
    return b"".join(out)


def _plain_prefix(mime: str) -> bytes | None:
    """`data:<mime>;base64,` as bytes when such a data URL is a DataURL (nothing JSON escapes)."""
    found = _PREFIX_BYTES.get(mime)
    if found is None and mime not in _PREFIX_BYTES:
        url = data_url(mime, b"")
        found = _PREFIX_BYTES[mime] = url.encode("ascii") if type(url) is DataURL else None
    return found


def _base64_of(image: EncodedImage) -> bytes:
    """The picture's bytes in base64, made once per object (a clip kept in memory is sent by
    several questions); from its data URL when that was made already."""
    found = image.__dict__.get("_base64")
    if found is None:
        url = image.__dict__.get("data_url")
        found = url[url.index(",") + 1:].encode("ascii") if url else base64.b64encode(image.data)
        image.__dict__["_base64"] = found
    return found


_PREFIX_BYTES: dict[str, bytes | None] = {}


#: message fields in which servers send reasoning apart from the answer: vLLM's and SGLang's
#: reasoning parsers and DeepSeek (`reasoning_content`), newer vLLM and OpenRouter (`reasoning`)
REASONING_FIELDS = ("reasoning_content", "reasoning")


def server_reasoning(message: Any) -> str:
    """The reasoning a server sent beside the answer ('' when none); a field that is not text
    (e.g. OpenRouter's structured `reasoning_details`) is not read."""
    if message is None:
        return ""
    for name in REASONING_FIELDS:
        value = getattr(message, name, None)
        if value is None:
            value = (getattr(message, "model_extra", None) or {}).get(name)
        if isinstance(value, str) and value.strip():
            return value
    return ""


def response_usage(response: Any) -> Usage | None:
    """Token counts of a response; reasoning tokens from
    `usage.completion_tokens_details.reasoning_tokens` when the server gives them."""
    usage = getattr(response, "usage", None)
    if usage is None:
        return None
    details = getattr(usage, "completion_tokens_details", None)
    reasoning = details.get("reasoning_tokens") if isinstance(details, dict) else \
        getattr(details, "reasoning_tokens", None)

    def count(value: Any) -> int | None:
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    return Usage(prompt_tokens=count(getattr(usage, "prompt_tokens", None)),
                 completion_tokens=count(getattr(usage, "completion_tokens", None)),
                 reasoning_tokens=count(reasoning))


class OpenAIBackend(VLMBackend):
    kind = "openai"

    def __init__(self, model: str, settings: ApiSettings | None = None,
                 policy: RetryPolicy | None = None):
        self._model = model
        self.settings = (settings or ApiSettings()).resolved()
        self.max_images = self.settings.max_images
        self.policy = policy or RetryPolicy(max_retries=self.settings.max_retries)
        base_url = self.settings.base_url
        #: the concrete thinking control: "chat_template_kwargs" | "reasoning_effort" | "none"
        self.thinking_control = thinking_wire.resolve_control(
            self.settings.thinking_control or "auto", base_url, model)
        self._effort_off = thinking_wire.disable_effort(base_url, model)
        self._client = make_client(self.settings)
        #: the SDK posts given bytes as they are (`content=`, newer SDKs): the body is encoded
        #: here (body_bytes); an older SDK is given the dict, as before
        self._posts_bytes = "content" in inspect.signature(self._client.post).parameters
        #: a plain http:// server: posted without the SDK's request path (PlainHTTP)
        self._plain = PlainHTTP.for_client(self._client, self.settings) if self._posts_bytes else None
        self.hung = HungServer(base_url, self.settings.timeout_s)
        # reasoning models want max_completion_tokens; a refusal of either name flips it once
        self._use_max_completion_tokens = self.thinking_control == "reasoning_effort"
        self._tokens_key_flipped = False

    @classmethod
    def from_spec(cls, arg: str, api: ApiSettings) -> OpenAIBackend:
        """`openai:<model>`; where the server lives and its key come from `api` (else env)."""
        return cls(arg, settings=api.resolved())

    @classmethod
    def check_spec(cls, arg: str, api: ApiSettings, timeout_s: float) -> str | None:
        return check_reachable(arg, api, timeout_s)

    @property
    def backend_id(self) -> str:
        return f"openai:{self._model}"

    @property
    def model(self) -> str:
        return self._model

    def _too_many(self, sent: int, reason: str) -> TooManyImagesError:
        return TooManyImagesError(
            f"{self.backend_id} {reason}; this request carried {sent} image(s). Use fewer frames "
            "(lower the frame budget) or raise the per-request image limit in the Model panel.",
            limit=self.max_images, sent=sent)

    def thinking_fields(self, thinking: bool | None) -> dict:
        """The request-body fields that carry `thinking` to this server ({} for None)."""
        return thinking_wire.request_fields(self.thinking_control, thinking, self._effort_off)

    def _kwargs(self, messages: list[dict], request: GenerationRequest) -> dict[str, Any]:
        params = request.params
        kwargs: dict[str, Any] = {"model": self._model, "messages": messages,
                                  "temperature": params.temperature}
        if params.top_p is not None:  # None: not sent (the server's default)
            kwargs["top_p"] = params.top_p
        tokens_key = "max_completion_tokens" if self._use_max_completion_tokens else "max_tokens"
        kwargs[tokens_key] = params.max_tokens  # as asked: never capped here
        if params.stop:
            kwargs["stop"] = list(params.stop)
        extra = self.thinking_fields(params.thinking)
        if extra:
            kwargs["extra_body"] = extra
        return kwargs

    def request_body(self, messages: list[dict], request: GenerationRequest) -> dict[str, Any]:
        """The JSON body `chat.completions.create(**kwargs)` sends (extra_body merged at the top
        level, as the SDK does). It is posted as it is: create() walks the whole body against its
        typed schema first (~1.6 ms of CPU a call, an identity for the fields sent here), which a
        batch run at high concurrency pays for every request under the GIL."""
        kwargs = self._kwargs(messages, request)
        extra = kwargs.pop("extra_body", None) or {}
        return {**kwargs, **extra}

    def _on_bad_request(self, text: str, request: GenerationRequest) -> bool:
        """A 400/413/422 answer: True to send again at once with changed arguments."""
        lower, sent = text.lower(), request.num_images()
        if "max_completion_tokens" in lower and not self._tokens_key_flipped:
            self._tokens_key_flipped = True  # newer OpenAI models reject max_tokens, others the reverse
            self._use_max_completion_tokens = not self._use_max_completion_tokens
            return True
        fields = self.thinking_fields(request.params.thinking)
        effort = fields.get("reasoning_effort")
        if effort and effort == self._effort_off:
            lower_one = thinking_wire.lower_effort_offered(text, effort)
            if lower_one is not None:  # e.g. 'minimal' refused, 'low' offered: the lowest offered
                self._effort_off = lower_one
                return True
        refused = [name for name in ("reasoning_effort", "chat_template_kwargs", "enable_thinking")
                   if name in lower and fields]
        if refused:
            raise BackendError(_scrub(
                f"{self.backend_id}: HTTP 400: {text}".rstrip(".") + ". The server refused the "
                f"thinking switch ({refused[0]}); set the thinking control (Model panel or "
                "APP_THINKING_CONTROL) to one it takes, or to 'none'.", self.settings.api_key))
        if sent and any(hint in lower for hint in _TOO_MANY_IMAGES_HINTS):
            raise self._too_many(sent, f"refused the request as too large ({text})")
        return False

    def generate(self, request: GenerationRequest) -> GenerationResult:
        sent = request.num_images()
        if self.max_images is not None and sent > self.max_images:
            raise self._too_many(sent, f"accepts at most {self.max_images} image(s) per request")
        _check_cancel(request.cancel)
        # posted by PlainHTTP: the encoded pictures' base64 goes into the body as bytes (no data
        # URL string made, copied and encoded back); else the messages as the SDK takes them
        marked = _marked_messages(request.messages) if self._plain is not None else None
        messages = to_openai_messages(request.messages) if marked is None else []

        def once():  # the body is built for each attempt: _on_bad_request may change it
            if marked is not None:
                data = _spliced(_dumps(self.request_body(marked[0], request)), marked[1])
                if data is None:   # the mark met elsewhere (cannot happen by chance)
                    data = body_bytes(self.request_body(to_openai_messages(request.messages), request))
                raw = self._plain.post("/chat/completions", data)
            elif self._plain is not None:
                raw = self._plain.post("/chat/completions", body_bytes(self.request_body(messages, request)))
            else:
                body = self.request_body(messages, request)
                sent = {"content": body_bytes(body)} if self._posts_bytes else {"body": body}
                raw = self._client.post("/chat/completions", cast_to=bytes, **sent)
            response = read_completion(raw)
            if not isinstance(response, _Fields) or not isinstance(response.choices, list) \
                    or not response.choices or not isinstance(response.choices[0], _Fields):
                raise _Retryable("the server answered with no choices")
            return response

        start = time.monotonic()
        try:
            response = call_with_retries(once, label=self.backend_id, policy=self.policy,
                                         secret=self.settings.api_key, cancel=request.cancel,
                                         on_bad_request=lambda text: self._on_bad_request(text, request),
                                         hung=self.hung)
        except (TooManyImagesError, GenerationStopped):
            raise
        except BackendError as exc:
            return GenerationResult(text="", backend=self.backend_id, model=self._model,
                                    latency_s=time.monotonic() - start, error=str(exc))
        choice = response.choices[0]
        message = choice.message if isinstance(choice.message, _Fields) else None
        answer, inline = split_reasoning((message.content or "") if message else "")
        return GenerationResult(
            text=answer, backend=self.backend_id, model=self._model,
            latency_s=time.monotonic() - start, usage=response_usage(response),
            finish_reason=getattr(choice, "finish_reason", None) or None,
            reasoning=join_reasoning(server_reasoning(message), inline))

    def close(self) -> None:
        if self._plain is not None:
            self._plain.close()
        self._client.close()


#: where the openai client sends requests when no base URL is given
DEFAULT_BASE_URL = "https://api.openai.com/v1"


def _public(url: str) -> str:
    """`url` without a user:password part (never shown)."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    netloc = (parts.hostname or "") + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def _http(url: str, key: str | None, timeout_s: float, body: dict | None = None) -> tuple[int, bytes]:
    """(status, body) of one GET (or a POST of `body`) with no retry; OSError when no server answers."""
    import urllib.error
    import urllib.request

    data = json.dumps(body).encode() if body is not None else None
    headers = {"Authorization": f"Bearer {key or 'EMPTY'}", "Accept": "application/json"}
    if data is not None:
        headers["Content-Type"] = "application/json"
    request = urllib.request.Request(url, data=data, headers=headers, method="POST" if data else "GET")
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:  # noqa: S310 - the configured API
            return response.status, response.read(1 << 20)
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(1 << 16) if exc.fp else b""


def _reason(exc: BaseException) -> str:
    reason = getattr(exc, "reason", exc)
    if isinstance(reason, TimeoutError) or "timed out" in str(reason):
        return "no answer in time"
    if isinstance(reason, ConnectionRefusedError) or "refused" in str(reason).lower():
        return "connection refused"
    return " ".join(str(reason).split())[:160] or type(exc).__name__


def _server_text(body: bytes) -> str:
    try:
        data = json.loads(body)
    except ValueError:
        return " ".join(body.decode("utf-8", "replace").split())[:200]
    inner = data.get("error", data) if isinstance(data, dict) else data
    text = inner.get("message") if isinstance(inner, dict) else inner
    return " ".join(str(text or "").split())[:200]


def check_reachable(model: str, settings: ApiSettings, timeout_s: float = 2.5) -> str:
    """Ask the server at once whether `model` can answer: its model list (GET /models), or, where
    the server lists none, one tiny request (one token). Returns one line saying what answered;
    raises BackendError with one line naming what failed: no server at the URL, a refused key, a
    model the server does not have. Never retried, never longer than about `timeout_s`; the key
    is never in the line."""
    settings = settings.resolved()
    base = (settings.base_url or DEFAULT_BASE_URL).rstrip("/")
    where, key = _public(base), settings.api_key
    label = f"openai:{model}"
    deadline = time.monotonic() + timeout_s
    try:
        status, body = _http(f"{base}/models", key, timeout_s)
    except (OSError, ValueError) as exc:
        raise BackendError(_scrub(f"{label}: no server answers at {where} ({_reason(exc)}); check the API "
                                  "base URL, or start the server.", key)) from None
    if status in (401, 403):
        raise BackendError(_scrub(f"{label}: the server at {where} refused the API key (HTTP {status}: "
                                  f"{_server_text(body)}); {_KEY_HINT}.", key))
    if status == 200:
        try:
            listed = [str(m.get("id")) for m in json.loads(body).get("data", []) if isinstance(m, dict)]
        except (ValueError, AttributeError):
            listed = []
        if listed and model in listed:
            return f"✓ {label} is served at {where}."
        if listed:
            shown = ", ".join(f"`{m}`" for m in listed[:8]) + (", …" if len(listed) > 8 else "")
            raise BackendError(_scrub(f"{label}: the server at {where} has no model `{model}`; it lists {shown}.",
                                      key))
    # no usable list (a server without /models, or an empty one): one tiny request
    try:
        status, body = _http(f"{base}/chat/completions", key, max(0.2, deadline - time.monotonic()),
                             {"model": model, "max_tokens": 1,
                              "messages": [{"role": "user", "content": "Say OK."}]})
    except (OSError, ValueError) as exc:
        raise BackendError(_scrub(f"{label}: the server at {where} did not answer a one-token request "
                                  f"({_reason(exc)}).", key)) from None
    if status == 200:
        return f"✓ {label} answered a one-token request at {where}."
    text = _server_text(body)
    if status in (401, 403):
        raise BackendError(_scrub(f"{label}: the server at {where} refused the API key (HTTP {status}: "
                                  f"{text}); {_KEY_HINT}.", key))
    if status == 404 or "model" in text.lower():
        raise BackendError(_scrub(f"{label}: the server at {where} has no model `{model}` (HTTP {status}: "
                                  f"{text}).", key))
    raise BackendError(_scrub(f"{label}: the server at {where} answered a one-token request with HTTP "
                              f"{status} ({text}).", key))
