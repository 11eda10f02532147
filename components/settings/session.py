"""Per-session backend settings (pure; no gradio). The UI keeps `SessionSettings.to_state()` in a
`gr.State`; handlers call `backend_for(state)` (the model, paired with the "compare with" backend
when the session chose one) and `localizer_backend_for(state)` (the window-search localizer: its
own backend when the session chose one, else the model's; CoM2 keeps an unchanged localizer apart
from the verifier). The API key lives only in that session state: it
is never logged, traced, exported or shown. The backends a visitor's settings build are that
visitor's (`VisitorBackends`), closed when their page closes (`release_backends`, called by the
tabs' unload once the last tab let go); a local model's weights stay loaded and shared."""
from __future__ import annotations

import hashlib
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Callable
from dataclasses import asdict, dataclass
from urllib.parse import urlsplit, urlunsplit

from backends.base import VLMBackend
from backends.methods import is_method_spec
from backends.config import ApiSettings, check_thinking_control
from backends.errors import BackendError
from backends.pair import pair_backends
from backends.registry import check_reachable, resolve
from backends.shared import is_shared
from components.base.lru import SingleFlightLRU
from components.settings.traces import resolve_replay_spec


MAX_FRAMES_PER_REQUEST = 240


@dataclass
class SessionSettings:
    backend: str = "baseline"
    base_url: str = ""
    api_key: str = ""
    #: cap on images per request; each tab sends its paper's own count when that is lower. 240 is
    #: the most any paper asks for (an AWS Inspect call: a 180 s chunk at 1 fps plus expansions).
    max_frames: int = MAX_FRAMES_PER_REQUEST
    record: bool = False  # record this session's model calls to a trace
    trace_path: str = ""  # where the trace goes when record is on
    #: the browser session that applied these settings: its backend is its own (a replay trace's
    #: recorded-order position is never shared with another visitor)
    session: str = ""
    #: the localizer's backend spec; "" = the same backend as the model (the verifier)
    localizer: str = ""
    #: how the thinking switch is sent (backends.config.THINKING_CONTROLS); "" = the server's
    #: $APP_THINKING_CONTROL, else "auto"
    thinking_control: str = ""
    #: "compare with": a second backend spec sent every request the model is sent (same frames,
    #: same prompt; backends.pair); "" = none
    compare: str = ""
    #: the compared backend's own server and key ("" = the model's, `base_url` / `api_key`):
    #: two models on two servers, e.g. a local vLLM beside an API model. The key, like
    #: `api_key`, lives only in the session state
    compare_base_url: str = ""
    compare_api_key: str = ""

    def to_state(self) -> dict:
        return asdict(self)

    @property
    def baseline_only(self) -> bool:
        """The model, the localizer and any compared backend are the no-model baseline: nothing
        to record."""
        return all(is_method_spec(s or "baseline") for s in (self.backend, self.localizer, self.compare))

    @classmethod
    def from_state(cls, state: dict | None) -> SessionSettings:
        state = dict(state or {})
        known = {k: state[k] for k in cls.__dataclass_fields__ if k in state}
        return cls(**known)

    def __repr__(self) -> str:
        return (f"SessionSettings(backend={self.backend!r}, base_url={self.base_url!r}, "
                f"api_key={'***' if self.api_key else ''!r}, max_frames={self.max_frames}, "
                f"record={self.record}, localizer={self.localizer!r}, "
                f"thinking_control={self.thinking_control!r}, compare={self.compare!r}, "
                f"compare_base_url={self.compare_base_url!r}, "
                f"compare_api_key={'***' if self.compare_api_key else ''!r})")


@dataclass(frozen=True)
class BackendKey:
    """What defines a session's backend. Holds a hash of the API key, never the key."""

    spec: str
    base_url: str | None
    api_key_sha256: str | None
    max_images: int | None
    record_to: str | None
    session: str
    thinking_control: str | None = None


#: most backends kept at once for one visitor, or for the process (the command line, scripts):
#: one per distinct Model-panel setting in use
BACKEND_CACHE_SIZE = 16
#: visitors whose backends are kept (as components/common/sessions.MAX_SESSIONS)
MAX_VISITORS = 256
#: the session of settings applied outside a browser page (the command line, scripts, tests)
NO_VISITOR = ("", "cli")


class VisitorBackends:
    """The backends built for visitors' settings: each visitor's own (their API clients, their
    replay positions, their recorders) apart, made once and closed when their page unloads
    (`release`); settings applied outside a page share one process-wide set. A local model's
    weights are loaded once per process and shared by every visitor (backends.shared): releasing
    a visitor never closes them. A visitor or a backend pushed out of its bound is forgotten,
    not closed (a running call may still use it)."""

    def __init__(self, per_visitor: int = BACKEND_CACHE_SIZE, max_visitors: int = MAX_VISITORS) -> None:
        self.per_visitor = per_visitor
        self.process: SingleFlightLRU[BackendKey, VLMBackend] = SingleFlightLRU(per_visitor)
        self.visitors: SingleFlightLRU[str, SingleFlightLRU[BackendKey, VLMBackend]] = SingleFlightLRU(max_visitors)

    def of(self, session: str) -> SingleFlightLRU[BackendKey, VLMBackend]:
        """The backends kept for `session` (the process-wide ones outside a page)."""
        if session in NO_VISITOR:
            return self.process
        return self.visitors.get(session, lambda: SingleFlightLRU(self.per_visitor))

    def get(self, key: BackendKey, build: Callable[[], VLMBackend]) -> VLMBackend:
        return self.of(key.session).get(key, build)

    def release(self, session: str | None) -> None:
        """The visitor's page closed: their backends are forgotten and closed (shared weights
        kept). Nothing for settings applied outside a page."""
        if not session or session in NO_VISITOR:
            return
        kept = self.visitors.pop(session)
        for backend in kept.clear() if kept is not None else []:
            if not is_shared(backend):
                backend.close()


#: the app's backends (one app per process)
BACKENDS = VisitorBackends()


def release_backends(session: str | None) -> None:
    """Close the backends of a visitor whose page closed (BACKENDS.release)."""
    BACKENDS.release(session)


def _backend_key(settings: SessionSettings, api: ApiSettings, spec: str) -> BackendKey:
    resolved = api.resolved()  # the environment's server, key and thinking control count too
    key_hash = (hashlib.sha256(resolved.api_key.encode("utf-8")).hexdigest()
                if resolved.api_key else None)
    record_to = (settings.trace_path or None) if settings.record else None
    return BackendKey(spec=spec.strip(), base_url=resolved.base_url,
                      api_key_sha256=key_hash, max_images=resolved.max_images,
                      record_to=record_to, session=settings.session,
                      thinking_control=resolved.thinking_control)


def _settings(state: dict | SessionSettings | None) -> SessionSettings:
    return state if isinstance(state, SessionSettings) else SessionSettings.from_state(state)


def _api(settings: SessionSettings, *, compared: bool = False) -> ApiSettings:
    """The session's server settings; `compared`: the compared backend's (its own server and
    key where the session gave them, else the model's)."""
    control = settings.thinking_control.strip()
    base_url, api_key = settings.base_url, settings.api_key
    if compared and settings.compare_base_url.strip():
        base_url, api_key = settings.compare_base_url.strip(), settings.compare_api_key
    elif compared and settings.compare_api_key:
        api_key = settings.compare_api_key
    return ApiSettings(base_url=base_url or None, api_key=api_key or None,
                       thinking_control=check_thinking_control(control) if control else None)


def _cached_backend(settings: SessionSettings, spec: str, *, compared: bool = False) -> VLMBackend:
    """The backend `spec` names under this session's server settings (`compared`: the compared
    backend's), from the cache when built before (least recently used first out)."""
    api = _api(settings, compared=compared)
    spec = resolve_replay_spec(spec)  # a trace picked in the panel: the trace folder's file
    key = _backend_key(settings, api, spec)
    return BACKENDS.get(key, lambda: resolve(spec, api=api, record_to=key.record_to))


def backend_for(state: dict | SessionSettings | None) -> VLMBackend:
    """The backend this session chose (raises BackendError with a readable message); with a
    "compare with" backend, the two paired (backends.pair): every request the tabs send through
    `backends.ask` then goes to both, and the session model's answers steer.

    One backend per distinct setting is kept for the visitor (a few, least recently used first
    out; closed when their page closes), so the clicks of a session share one HTTP client, and a
    replay trace is read once and keeps its recorded-order position from click to click."""
    settings = _settings(state)
    primary = _cached_backend(settings, settings.backend)
    return pair_backends(primary, compare_backend_for(settings))


def own_backend_for(state: dict | SessionSettings | None) -> VLMBackend:
    """The session's model alone, never paired (for calls that are not compared)."""
    settings = _settings(state)
    return _cached_backend(settings, settings.backend)


def compare_backend_for(state: dict | SessionSettings | None) -> VLMBackend | None:
    """The "compare with" backend (its own server and key when the session gave them, else the
    model's; the same recording and reuse as `backend_for`), or None when the session compares
    with nothing. A recorded pair replays with `replay:<trace>#<backend id>` on each side
    (backends.replay)."""
    settings = _settings(state)
    spec = settings.compare.strip()
    return _cached_backend(settings, spec, compared=True) if spec else None


def localizer_backend_for(state: dict | SessionSettings | None) -> VLMBackend:
    """The backend of this session's localizer: its own spec when chosen (same server, key,
    recording and reuse as `backend_for`; a localizer of its own is not compared: both sides
    would use it), else the very backend `backend_for` gives (paired when comparing)."""
    settings = _settings(state)
    spec = settings.localizer.strip()
    if not spec or spec == settings.backend.strip():
        return backend_for(settings)
    return _cached_backend(settings, spec)


def check_compare(state: dict | SessionSettings | None) -> None:
    """Raise BackendError (one readable line) when the "compare with" choice cannot be used: a
    model on one side and a no-model method on the other, or it names the model itself."""
    settings = _settings(state)
    spec = settings.compare.strip()
    if not spec:
        return
    if spec == settings.backend.strip():
        raise BackendError(f"\"Compare with\" names the model itself ({spec}); choose another "
                           "backend to compare with, or leave it empty.")
    backend_for(settings)  # builds the pair: refuses a model beside a no-model method


#: seconds Apply waits for the servers it asks (all at once): the panel answers within 3 s
CHECK_TIMEOUT_S = 2.5


def check_backends(state: dict | SessionSettings | None, timeout_s: float = CHECK_TIMEOUT_S) -> list[str]:
    """Ask each server the session's backends live on (the model, "compare with", the localizer),
    all at once, whether it can answer now: a line per backend asked, "✓ ..." when it can, "⚠ ..."
    naming what failed (no server at the URL, a refused key, a model the server does not have).
    A backend with nothing to ask (the baseline, a method, a local model, a trace) gives none."""
    settings = _settings(state)
    asked = {(settings.backend.strip(), False), (settings.compare.strip(), True), (settings.localizer.strip(), False)}
    asked = sorted((spec, compared) for spec, compared in asked if spec)

    def one(item: tuple[str, bool]) -> str | None:
        spec, compared = item
        try:
            return check_reachable(spec, api=_api(settings, compared=compared), timeout_s=timeout_s)
        except BackendError as exc:
            return f"⚠ {exc}"
    with ThreadPoolExecutor(max_workers=len(asked) or 1) as pool:
        lines = list(pool.map(one, asked))
    return [line for line in lines if line]


def _public_url(url: str) -> str:
    """The URL without any user:password part (never show credentials)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def badge(state: dict | None) -> str:
    s = SessionSettings.from_state(state)
    where = f" @ {_public_url(s.base_url)}" if s.base_url and s.backend.startswith("openai:") else ""
    # "recording" only when calls are written: the baseline asks no model, a replay asks the trace
    rec = " · recording" if s.record and not s.baseline_only and not s.backend.startswith("replay:") else ""
    localizer = f" · localizer: {s.localizer}" if s.localizer.strip() else ""
    compare = f" · compare with: {s.compare}" if s.compare.strip() else ""  # its server: in the panel
    kind = "Method" if is_method_spec(s.backend) and s.backend.strip() != "baseline" else "Model"
    return f"{kind}: {s.backend}{where}{localizer}{compare}{rec}"
