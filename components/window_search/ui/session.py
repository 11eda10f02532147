"""What the Window search tab keeps per browser session: the typed session state (held in a
gr.State) and the heavy per-session objects (the Stop event, open movies), kept by session hash and
released when the page closes. Releasing sets the Stop event, so a search still running for a
closed page asks the model nothing more."""
from __future__ import annotations

import shutil
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

from components.window_search.movie import Movie
from components.window_search.types import SearchTrace

DEFAULT_CHUNK_SECONDS = 180.0
MOVIES_PER_SESSION = 3   # open movies (decoders) one session keeps; the frame cache is on disk
MAX_SESSIONS = 256       # sessions that never unload (API clients) are forgotten oldest first


@dataclass
class MovieInfo:
    """The movie a session works on (an annotated one, an upload, or the one of a loaded trace)."""

    movie_id: str
    video: str | None               # None: a loaded trace whose video is not on this server
    subtitles: str | None = None
    memory: str = ""                # its character-memory JSON ("" when there is none)
    duration: float = 0.0
    memory_private: bool = False    # `memory` is this session's own copy (or an upload's)
    uploaded: bool = False          # a visitor's upload (not a movie of the annotation file)

    def exported(self) -> dict:
        return {"movie_id": self.movie_id, "video": self.video, "subtitles": self.subtitles,
                "duration": self.duration}


@dataclass
class PickedQuery:
    """A query picked from the annotation file, with its ground truth."""

    qid: str
    query: str
    interval: tuple[float, float]


@dataclass
class Partner:
    """The confusable partner of the picked query (the result line reports the pair)."""

    qid: str
    query: str


@dataclass
class WindowSearchSession:
    """One session's place in the tab."""

    movie: MovieInfo | None = None
    chunk_seconds: float = DEFAULT_CHUNK_SECONDS
    picked: PickedQuery | None = None
    partner: Partner | None = None    # dropped when a typed query runs
    trace: SearchTrace | None = None
    selected: int | None = None       # rank of the window shown
    playhead: float = 0.0             # the one time the player, slider, timeline and checklist show
    # (qid, backend, method) -> IoU of this session's runs: the pair line pairs like with like
    ious: dict[tuple[str, str, str], float | None] = field(default_factory=dict)
    sel_ref: str | None = None        # reference frame picked in the memory gallery
    pending_remove: str | None = None  # reference waiting for the visitor's confirmation
    sel_frame: float | None = None    # time of the window frame picked to add as a reference

    @property
    def has_video(self) -> bool:
        return self.movie is not None and bool(self.movie.video)


@dataclass
class SessionResources:
    """Heavy objects of one browser session."""

    stop: threading.Event = field(default_factory=threading.Event)  # set: the running search stops
    movies: OrderedDict[tuple, Movie] = field(default_factory=OrderedDict)
    scratch: list[Path] = field(default_factory=list)  # the session's own folders, removed on close
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def movie(self, info: MovieInfo, chunk_seconds: float) -> Movie:
        """The session's open Movie for `info` at this chunk length (opened on first use)."""
        key = (info.video, info.subtitles, float(chunk_seconds))
        with self.lock:
            if key in self.movies:
                self.movies.move_to_end(key)
                return self.movies[key]
        movie = Movie(info.video, info.subtitles, movie_id=info.movie_id, chunk_seconds=chunk_seconds)
        with self.lock:
            movie = self.movies.setdefault(key, movie)
            self.movies.move_to_end(key)
            while len(self.movies) > MOVIES_PER_SESSION:
                self.movies.popitem(last=False)[1].close()
        return movie

    def close(self) -> None:
        with self.lock:
            movies, self.movies = list(self.movies.values()), OrderedDict()
            scratch, self.scratch = self.scratch, []
        for movie in movies:
            movie.close()
        for folder in scratch:
            shutil.rmtree(folder, ignore_errors=True)


class SessionRegistry:
    """Per-session resources by `gr.Request.session_hash`; `release` (on page unload) sets the stop
    event and closes the session's movies."""

    def __init__(self, max_sessions: int = MAX_SESSIONS) -> None:
        self._by_session: OrderedDict[str, SessionResources] = OrderedDict()
        self._lock = threading.Lock()
        self.max_sessions = max_sessions

    def get(self, session_hash: str | None) -> SessionResources:
        key = session_hash or ""
        with self._lock:
            resources = self._by_session.get(key)
            if resources is None:
                resources = self._by_session[key] = SessionResources()
            self._by_session.move_to_end(key)
            # forgotten, not stopped: only its own page closing stops a session's search
            evicted = [self._by_session.popitem(last=False)[1]
                       for _ in range(max(0, len(self._by_session) - self.max_sessions))]
        for old in evicted:
            old.close()
        return resources

    def release(self, session_hash: str | None) -> None:
        with self._lock:
            resources = self._by_session.pop(session_hash or "", None)
        if resources is not None:
            resources.stop.set()
            resources.close()

    def __contains__(self, session_hash: str | None) -> bool:
        return (session_hash or "") in self._by_session

    def __len__(self) -> int:
        return len(self._by_session)


#: the tab's sessions (one app per process)
SESSIONS = SessionRegistry()
