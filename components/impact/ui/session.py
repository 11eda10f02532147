"""What one browser session of the Impact tab holds.

`ImpactSession` is the gr.State value: the predictions this session made (another session never
sees them). `StopEvents` keeps the per-session objects too live for a State: one stop event per
session, set when the page closes (the unload event) so a running model call ends, then dropped.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field, replace


@dataclass(frozen=True)
class ImpactSession:
    """Predictions of this session. A handler returns a new session rather than changing one."""

    temporal: dict[str, dict] = field(default_factory=dict)  # qid -> prediction record (JSONL line)
    spatial: dict[str, dict[str, dict]] = field(default_factory=dict)  # qid -> {frame: answer dict}
    temporal_method: str = ""
    spatial_method: str = ""

    def answer_at(self, qid: str, frame: int) -> dict | None:
        """The region answer for one frame of a clip, if this session asked for it."""
        return self.spatial.get(qid, {}).get(str(frame))

    def with_temporal(self, qid: str, record: dict, method: str) -> ImpactSession:
        return replace(self, temporal={**self.temporal, qid: record}, temporal_method=method)

    def with_spatial(self, qid: str, answers: dict[str, dict], method: str) -> ImpactSession:
        return replace(self, spatial={**self.spatial, qid: answers}, spatial_method=method)


class StopEvents:
    """One stop event per session hash, handed to every model call the session starts."""

    def __init__(self) -> None:
        self._events: dict[str, threading.Event] = {}
        self._lock = threading.Lock()

    def for_session(self, session_hash: str | None) -> threading.Event:
        with self._lock:
            return self._events.setdefault(session_hash or "", threading.Event())

    def release(self, session_hash: str | None) -> None:
        """The page closed: stop what that session runs and forget its event."""
        with self._lock:
            event = self._events.pop(session_hash or "", None)
        if event is not None:
            event.set()

    def __len__(self) -> int:
        return len(self._events)


class BodyViews:
    """What each page's 3D view (gr.Model3D) was sent, so a GLB goes out only when it can show.

    Gradio's Model3D drops its pending viewer when the same value is set again while the viewer's
    code loads, and a tab mounted after its Model3D got a value sets it again itself: the view then
    stays blank. So a browser page (registered by the page-load event) is sent no GLB until its
    Impact tab reports that the body view is on screen, and never the GLB it was sent last. A
    caller that never loaded the page (gradio_client) is always sent one."""

    def __init__(self) -> None:
        self._pages: dict[str, dict] = {}
        self._lock = threading.Lock()

    def page_loaded(self, session_hash: str | None) -> None:
        with self._lock:
            self._pages.setdefault(session_hash or "", {"shown": False, "sent": None, "resets": 0})

    def view_shown(self, session_hash: str | None, glb: str) -> bool:
        """The tab's body view is on screen: send `glb` unless it was already sent."""
        with self._lock:
            page = self._pages.setdefault(session_hash or "", {"shown": False, "sent": None, "resets": 0})
            page["shown"] = True
            return self._take(page, glb)

    def should_send(self, session_hash: str | None, glb: str) -> bool:
        with self._lock:
            page = self._pages.get(session_hash or "")
            if page is None:
                return True
            return page["shown"] and self._take(page, glb)

    def next_reset(self, session_hash: str | None) -> int:
        """A counter per page: a reset camera differs by a hair from the last one, so the page
        applies it even when the camera itself did not change."""
        with self._lock:
            page = self._pages.setdefault(session_hash or "", {"shown": False, "sent": None, "resets": 0})
            page["resets"] += 1
            return page["resets"]

    @staticmethod
    def _take(page: dict, glb: str) -> bool:
        if page["sent"] == glb:
            return False
        page["sent"] = glb
        return True

    def release(self, session_hash: str | None) -> None:
        with self._lock:
            self._pages.pop(session_hash or "", None)

    def __len__(self) -> int:
        return len(self._pages)
