"""Per-session backend settings (pure; no gradio). The UI keeps `SessionSettings.to_state()` in a
`gr.State`; handlers call `backend_for(state)`. The API key lives only in that session state: it is
never logged, traced, exported or shown."""
from __future__ import annotations

import os
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

from backends.base import VLMBackend
from backends.config import ApiSettings
from backends.registry import resolve


@dataclass
class SessionSettings:
    backend: str = "baseline"
    base_url: str = ""
    api_key: str = ""
    max_frames: int = 192  # cap on frames per request; each tab applies its paper's own count below it
    record: bool = False  # record this session's model calls to a trace
    trace_path: str = ""  # where the trace goes when record is on

    def to_state(self) -> dict:
        return asdict(self)

    @classmethod
    def from_state(cls, state: dict | None) -> "SessionSettings":
        state = dict(state or {})
        known = {k: state[k] for k in cls.__dataclass_fields__ if k in state}
        return cls(**known)

    def __repr__(self) -> str:
        return (f"SessionSettings(backend={self.backend!r}, base_url={self.base_url!r}, "
                f"api_key={'***' if self.api_key else ''!r}, max_frames={self.max_frames}, "
                f"record={self.record})")


def default_settings() -> SessionSettings:
    return SessionSettings(backend=os.environ.get("APP_BACKEND", "baseline"))


def trace_dir() -> Path:
    path = Path(os.environ.get("APP_TRACE_DIR") or Path(tempfile.gettempdir()) / "video-bench-traces")
    path.mkdir(parents=True, exist_ok=True)
    return path


def backend_for(state: dict | SessionSettings | None) -> VLMBackend:
    """The backend this session chose (raises BackendError with a readable message)."""
    settings = state if isinstance(state, SessionSettings) else SessionSettings.from_state(state)
    api = ApiSettings(base_url=settings.base_url or None, api_key=settings.api_key or None)
    record_to = settings.trace_path or None if settings.record else None
    return resolve(settings.backend, api=api, record_to=record_to)


def _public_url(url: str) -> str:
    """The URL without any user:password part (never show credentials)."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def badge(state: dict | None) -> str:
    s = SessionSettings.from_state(state)
    where = f" @ {_public_url(s.base_url)}" if s.base_url and s.backend.startswith("openai:") else ""
    rec = " · recording" if s.record else ""
    return f"Model: {s.backend}{where}{rec}"
