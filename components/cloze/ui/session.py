"""What the Cloze tab keeps per browser session: the typed session state (held in a gr.State) and
the heavy per-session objects (stop events of running batches), kept by session hash and released
when the page closes."""
from __future__ import annotations

import os
import shutil
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path

from components.common.errors import UserError
from components.common.fields import whole

HUMAN, MODEL = "human", "model"
DEFAULT_DIMS = ("S", "A", "P")
DEFAULT_SEED = 42


def parse_dims(choice: str | None) -> tuple[str, ...]:
    """The Dimension dropdown: "S, A, P" -> ("S", "A", "P"); "Mixed" -> ("Mixed",)."""
    if choice == "Mixed":
        return ("Mixed",)
    return tuple(d.strip() for d in (choice or ", ".join(DEFAULT_DIMS)).split(","))


@dataclass(frozen=True)
class ClozeSession:
    """One session's place in the tab. Handlers return a new one (dataclasses.replace)."""

    data_dir: str = ""          # the app's data folder: study files, runs, uploads, built instances
    mode: str = HUMAN           # HUMAN (study order) or MODEL (evaluation order)
    root: str = ""              # the data folder shown; "" until Start / resume or a model run
    set_name: str = "all"
    dims: tuple[str, ...] = DEFAULT_DIMS
    seed: int = DEFAULT_SEED
    index: int = 0              # the question shown (0-based)
    shown_at: float | None = None  # when it was shown (time.time()), for elapsed_sec
    selected: str | None = None    # a letter chosen in the select-then-submit flow
    annotator: str = ""
    file: str = ""              # the annotator's study file ("" outside the human study)
    session_id: str = ""        # one id per Start / resume, recorded with every answer
    total: int = 0              # questions in the set shown (so the clock needs no I/O)
    own_roots: tuple[str, ...] = ()  # folders this session uploaded or built (only it may open them)

    @property
    def loaded(self) -> bool:
        return bool(self.root)

    @property
    def human(self) -> bool:
        return self.mode == HUMAN

    def with_inputs(self, mode: str | None, root: str, set_name: str | None, dims: str | None,
                    seed: float | None) -> ClozeSession:
        """The session after reading the tab's question controls (mode radio label, folder, ...)."""
        root = resolve_root(root, self.data_dir, self.own_roots) if self.data_dir else root
        return replace(self, mode=HUMAN if mode == "Human study" else MODEL, root=root,
                       set_name=set_name or "all", dims=parse_dims(dims),
                       seed=whole(seed, "Seed", default=DEFAULT_SEED, least=0))


PRIVATE = ("cloze/uploads", "cloze/built")  # under the data folder: each visitor's own folders


def resolve_root(root: str | None, data_dir: str, own: tuple[str, ...] = ()) -> str:
    """The data folder a visitor typed, as a path on the server: relative to the app's data folder
    (an absolute path must lie inside it); an uploaded or built folder only for the session that
    made it. Other visitors' folders and the rest of the server are refused. `..` is resolved but
    links are not: a folder the operator linked into the data folder is inside it."""
    base = Path(os.path.abspath(data_dir))
    typed = Path((root or "").strip() or "cloze")
    path = Path(os.path.abspath(typed if typed.is_absolute() else base / typed))
    if not path.is_relative_to(base):
        raise UserError(f"The data folder must be inside the app's data folder; give a path relative "
                        f"to it, e.g. `cloze` (got `{root}`).")
    if any(path.is_relative_to(base / p) for p in PRIVATE) and not any(
            path.is_relative_to(Path(os.path.abspath(o))) for o in own):
        raise UserError(f"`{shown_root(str(path), data_dir)}` is not a folder this page uploaded or "
                        "built; upload the zip again, or choose `cloze`.")
    return str(path)


def shown_root(root: str, data_dir: str) -> str:
    """A folder as the page shows it: relative to the data folder, never a server path."""
    base, path = Path(os.path.abspath(data_dir)), Path(os.path.abspath(root))
    return str(path.relative_to(base)) if path.is_relative_to(base) else path.name


@dataclass
class SessionResources:
    """Heavy objects of one browser session, and the folders it wrote (removed when it closes)."""

    stop: threading.Event = field(default_factory=threading.Event)  # set: running batches stop
    folders: list[Path] = field(default_factory=list)


class SessionRegistry:
    """Per-session resources by `gr.Request.session_hash`; `release` (on page unload) sets the stop
    events, so a batch still running for a closed page ends before its next question."""

    def __init__(self) -> None:
        self._by_session: dict[str, SessionResources] = {}
        self._lock = threading.Lock()

    def get(self, session_hash: str | None) -> SessionResources:
        with self._lock:
            return self._by_session.setdefault(session_hash or "", SessionResources())

    def release(self, session_hash: str | None) -> None:
        with self._lock:
            resources = self._by_session.pop(session_hash or "", None)
        if resources is not None:
            resources.stop.set()
            for folder in resources.folders:  # this visitor's uploads, builds and runs
                shutil.rmtree(folder, ignore_errors=True)

    def __len__(self) -> int:
        return len(self._by_session)


#: the Cloze tab's per-session resources (keyed by session, never shared between sessions)
RESOURCES = SessionRegistry()
