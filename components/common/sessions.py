"""Per-visitor heavy objects, kept by gradio's session hash (pure; no gradio).

A tab keeps in a gr.State only what can be copied; what cannot (a stop event, open decoders, the
folders a visitor's uploads and runs write) lives in a `Resources` object of the tab's
`SessionRegistry`. The registry is size-limited (sessions that never unload, e.g. API clients,
are forgotten oldest first: closed, not stopped) and `release` runs when the page closes: the
visitor's running work is stopped first and waited for, and only then are its files removed, so a
run never writes into a folder that was just deleted.
"""
from __future__ import annotations

import logging
import shutil
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Generic, TypeVar

log = logging.getLogger(__name__)

MAX_SESSIONS = 256
#: how long a closing page waits for its running work to notice the stop event
RELEASE_WAIT_S = 60.0
#: a Stop pressed this long before a run's handler started is kept for that run: the page shows
#: the run's progress at the click, so a quick Stop can reach the server before the run itself
STOP_GRACE_S = 3.0
#: a second copy of an event within this long is a repeat (see Resources.repeated)
REPEAT_WINDOW_S = 1.0


@dataclass
class Resources:
    """One visitor's heavy objects: the stop event its running work watches, the folders it
    wrote (removed when the page closes) and a count of the work running now. A tab subclasses it
    for what else it keeps (and extends `close`)."""

    stop: threading.Event = field(default_factory=threading.Event)
    folders: list[Path] = field(default_factory=list)
    #: the tab's views drawn for this visitor, by name (TabEvents.on_open: "page", ...)
    opened: set[str] = field(default_factory=set)
    _running: int = field(default=0, repr=False)
    _stop_asked: float = field(default=float("-inf"), repr=False)
    _stop_for_next: bool = field(default=False, repr=False)
    _last_end: float = field(default=float("-inf"), repr=False)
    _idle: threading.Condition = field(default_factory=threading.Condition, repr=False)
    _last_event: tuple | None = field(default=None, repr=False)
    _event_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def repeated(self, event: str, values: tuple) -> bool:
        """Whether this is a copy of the visitor's last event: the same event with the same plain
        values (strings, numbers; the gr.State copies are left out) within REPEAT_WINDOW_S. gradio
        6.31's Dropdown sends `input` twice for one click on an option (the click, then the blur it
        causes), both at once; the copy would redo the handler and redraw every output."""
        key = (event, tuple(v for v in values if v is None or isinstance(v, (str, int, float, bool))))
        now = time.monotonic()
        with self._event_lock:
            last, self._last_event = self._last_event, (key, now)
        return last is not None and last[0] == key and now - last[1] <= REPEAT_WINDOW_S

    def ask_stop(self) -> None:
        """The visitor pressed Stop: the running work ends before its next step; with nothing
        running (and nothing just ended), the run about to start does (its request may still be
        on its way)."""
        self._stop_asked = time.monotonic()
        # a Stop in the moment after a run ended on its own was for that run
        self._stop_for_next = not self.busy and self._stop_asked - self._last_end > STOP_GRACE_S
        self.stop.set()

    def fresh_stop(self) -> threading.Event:
        """At the start of a run: the stop event, cleared of a Stop meant for earlier work but
        keeping one pressed, while nothing ran, in the moment before this run started
        (STOP_GRACE_S). A Stop that stopped a run never stops the next one."""
        if not self._stop_for_next or time.monotonic() - self._stop_asked > STOP_GRACE_S:
            self.stop.clear()
        self._stop_for_next = False
        return self.stop

    @contextmanager
    def working(self) -> Iterator[threading.Event]:
        """Around work that writes into this visitor's folders (a set run): the page's close
        waits for it. Yields the stop event to watch."""
        with self._idle:
            self._running += 1
        try:
            yield self.stop
        finally:
            with self._idle:
                self._running -= 1
                self._last_end = time.monotonic()
                self._idle.notify_all()

    @property
    def busy(self) -> bool:
        return self._running > 0

    def wait_idle(self, timeout: float) -> bool:
        with self._idle:
            return self._idle.wait_for(lambda: self._running == 0, timeout)

    def close(self) -> None:
        """Drop what the visitor holds open (subclasses close decoders etc., then call this)."""

    def release(self, wait_s: float = RELEASE_WAIT_S) -> None:
        """The page closed: stop its work, wait for it, close, then remove its folders."""
        self.stop.set()
        if not self.wait_idle(wait_s):
            log.warning("a closed page's work did not stop within %.0f s; its folders are kept", wait_s)
            self.close()
            return
        self.close()
        folders, self.folders = self.folders, []
        for folder in folders:
            shutil.rmtree(folder, ignore_errors=True)


R = TypeVar("R", bound=Resources)


class SessionRegistry(Generic[R]):
    """`Resources` by session hash, made on first use by `make`."""

    def __init__(self, make: Callable[[], R], max_sessions: int = MAX_SESSIONS) -> None:
        self._make = make
        self._by_session: OrderedDict[str, R] = OrderedDict()
        self._releasing: set[str] = set()
        self._lock = threading.Lock()
        self.max_sessions = max_sessions
        _registries.add(self)

    def get(self, session_hash: str | None) -> R:
        key = session_hash or ""
        with self._lock:
            resources = self._by_session.get(key)
            if resources is None:
                resources = self._by_session[key] = self._make()
            self._by_session.move_to_end(key)
            evicted = [self._by_session.popitem(last=False)[1]
                       for _ in range(max(0, len(self._by_session) - self.max_sessions))]
        for old in evicted:  # forgotten, not stopped: only its own page closing stops its work
            old.close()
        return resources

    def release(self, session_hash: str | None) -> None:
        key = session_hash or ""
        with self._lock:
            resources = self._by_session.pop(key, None)
            if resources is not None:
                self._releasing.add(key)
        if resources is None:
            return
        try:
            resources.release()
        finally:
            with self._lock:
                self._releasing.discard(key)

    def holds(self, session_hash: str | None) -> bool:
        """Whether the session has resources here, or is being released (its work stopping)."""
        key = session_hash or ""
        with self._lock:
            return key in self._by_session or key in self._releasing

    def __contains__(self, session_hash: str | None) -> bool:
        return (session_hash or "") in self._by_session

    def __len__(self) -> int:
        return len(self._by_session)


_registries: weakref.WeakSet[SessionRegistry] = weakref.WeakSet()


def held_anywhere(session_hash: str | None) -> bool:
    """Whether any tab's registry still holds the session (or is releasing it): what the tabs
    share for a visitor (their backends) is released only after the last tab let go."""
    return any(registry.holds(session_hash) for registry in list(_registries))
