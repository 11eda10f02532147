"""What the Window search tab keeps per browser session: the typed session state (held in a
gr.State) and the heavy per-session objects (the Stop event, open movies), kept by session hash and
released when the page closes. Releasing sets the Stop event, so a search still running for a
closed page asks the model nothing more."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from components.window_search.spec import SPEC
from components.base.errors import UserError
from components.base.lru import SingleFlightLRU
from components.common.sessions import Resources, SessionRegistry
from components.common.watched import WatchedFile
from components.window_search.data import GroundingAnnotations, load_annotations
from components.window_search.memory import memory_path
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
class WindowSearchResources(Resources):
    """One visitor's heavy objects: the common ones (stop event, own folders) and its open movies
    (decoders; the sampled frames are cached on disk)."""

    movies: SingleFlightLRU[tuple, Movie] = field(
        default_factory=lambda: SingleFlightLRU(MOVIES_PER_SESSION, on_evict=Movie.close))

    def movie(self, info: MovieInfo, chunk_seconds: float) -> Movie:
        """The session's open Movie for `info` at this chunk length (opened on first use)."""
        key = (info.video, info.subtitles, float(chunk_seconds))
        return self.movies.get(key, lambda: Movie(info.video, info.subtitles, movie_id=info.movie_id,
                                                  chunk_seconds=chunk_seconds))

    def close(self) -> None:
        for movie in self.movies.clear():
            movie.close()


#: the tab's sessions (one app per process); `release` on page unload stops a running search
RESOURCES: SessionRegistry[WindowSearchResources] = SessionRegistry(WindowSearchResources, MAX_SESSIONS)


# -- the tab's data ---------------------------------------------------------------------------------
@dataclass
class WindowSearchTab:
    """The annotation file the tab offers (None, with the reason, when there is none)."""

    annotations: GroundingAnnotations | None
    error: str = ""

    def queries_of(self, movie_id: str | None) -> list:
        if self.annotations is None or movie_id is None:
            return []
        return [q for q in self.annotations.queries if q.movie_id == movie_id]

    def movie_choices(self) -> list[tuple[str, str]]:
        movies = self.annotations.movies.values() if self.annotations else []
        return [(f"{m.movie_id} · {m.extra.get('title', m.video.name)}", m.movie_id) for m in movies]

    def movie_info(self, movie_id: str) -> MovieInfo:
        if self.annotations is None or movie_id not in self.annotations.movies:
            raise UserError(f"Movie: `{movie_id}` is not a movie of the annotation file; pick one from the list.")
        entry = self.annotations.movie(movie_id)
        return MovieInfo(movie_id, str(entry.video), str(entry.subtitles) if entry.subtitles else None,
                         str(memory_path(Path(self.annotations.path).parent, movie_id)))

    @property
    def first_movie(self) -> str | None:
        choices = self.movie_choices()
        return choices[0][1] if choices else None


def tab_source(data_dir: Path) -> WatchedFile[WindowSearchTab]:
    """The tab's data as each page reads it: the annotation file, read again when it changes."""
    path = Path(data_dir) / SPEC.data / "annotations.json"
    return WatchedFile(path, lambda: load_tab(data_dir))


def load_tab(data_dir: Path) -> WindowSearchTab:
    path = Path(data_dir) / SPEC.data / "annotations.json"
    if not path.is_file():
        return WindowSearchTab(None, "No annotation file in the data folder's grounding/ (generate the examples "
                             "with `python -m examples.generate`), or upload a movie.")
    try:
        return WindowSearchTab(load_annotations(path))
    except UserError as exc:
        return WindowSearchTab(None, str(exc))
