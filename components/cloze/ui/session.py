"""What the Cloze tab keeps per browser session: the typed session state (held in a gr.State) and
the heavy per-session objects (stop events of running batches), kept by session hash and released
when the page closes."""
from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path

from components import datasource
from components.cloze.spec import SPEC
from components.base.admin import admin_mode
from components.base.errors import UserError
from components.common.fields import whole
from components.common.sessions import Resources, SessionRegistry

HUMAN, MODEL = "human", "model"
#: the Mode radio's values; "practice" is the human playthrough (HUMAN order), "compare" the leaderboard
PRACTICE, COMPARE = "practice", "compare"
MODE_CHOICES = [("Practice playthrough", PRACTICE), ("Model", MODEL), ("Compare", COMPARE)]
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
    mode: str = HUMAN           # HUMAN (the study's order: the practice playthrough) or MODEL (evaluation order)
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
    navigator: str = ""         # what the page's navigator lists now (its choices are sent when it changes)
    players: str = ""           # the display whose players the page shows ("" before the first question)
    #: the question on screen was asked for (a link, ◀ ▶, the navigator): Start / resume and Load
    #: the question set play it, instead of the first unanswered one / the set's first
    pinned: bool = False
    #: Model mode: the question list in the runs' order (runs_view.SORTS: "hardest", "people", ...),
    #: "" for the set's own; a practice playthrough keeps its own order whatever this says
    order: str = ""
    runs: tuple[str, ...] = ()  # the `--runs` folders beside the data folder's runs (what `order` reads)
    comparing: bool = False     # Compare mode is shown (the leaderboard; `mode` is the order kept for the way back)

    @property
    def loaded(self) -> bool:
        return bool(self.root)

    @property
    def human(self) -> bool:
        return self.mode == HUMAN

    def with_inputs(self, mode: str | None, root: str, set_name: str | None, dims: str | None,
                    seed: float | None) -> ClozeSession:
        """The session after reading the tab's question controls (mode radio value, folder, ...)."""
        root = resolve_root(root, self.data_dir, self.own_roots) if self.data_dir else root
        return replace(self, mode=HUMAN if mode in (PRACTICE, HUMAN) else MODEL, root=root,
                       set_name=set_name or "all", dims=parse_dims(dims),
                       seed=whole(seed, "Seed", default=DEFAULT_SEED, least=0))


PRIVATE = ("cloze/uploads", "cloze/built")  # under the data folder: each visitor's own folders


def resolve_root(root: str | None, data_dir: str, own: tuple[str, ...] = ()) -> str:
    """The data folder a visitor typed, as a path on the server: relative to the app's data folder
    (an absolute path must lie inside it); an uploaded or built folder only for the session that
    made it. Other visitors' folders and the rest of the server are refused. `..` is resolved but
    links are not: a folder the operator linked into the data folder is inside it."""
    if datasource.is_hub_spec((root or "").strip()):
        return _allowed_repository(root.strip())
    base = Path(os.path.abspath(data_dir))
    typed = Path((root or "").strip() or SPEC.data)
    path = Path(os.path.abspath(typed if typed.is_absolute() else base / typed))
    if not path.is_relative_to(base):
        raise UserError(f"The data folder must be inside the app's data folder; give a path relative "
                        f"to it, e.g. `cloze` (got `{root}`).")
    if any(path.is_relative_to(base / p) for p in PRIVATE) and not any(
            path.is_relative_to(Path(os.path.abspath(o))) for o in own):
        raise UserError(f"`{shown_root(str(path), data_dir)}` is not a folder this page uploaded or "
                        "built; upload the zip again, or choose `cloze`.")
    return str(path)


def _allowed_repository(spec: str) -> str:
    """A dataset repository typed in the folder box: the app's own (APP_DATA_DIR's) is open to
    every visitor; another only with APP_ADMIN=1 (else a stranger could make the server list and
    fetch any repository)."""
    own = os.environ.get("APP_DATA_DIR", "").strip().rstrip("/")
    if admin_mode() or (own and (spec.rstrip("/") == own or spec.startswith(own + "/"))):
        return spec
    raise UserError("The data folder may name this app's own dataset repository only"
                    + (f" ({own})" if datasource.is_hub_spec(own) else "")
                    + "; opening another needs APP_ADMIN=1 on the server.")


def shown_root(root: str, data_dir: str) -> str:
    """A folder as the page shows it: relative to the data folder, never a server path (a dataset
    repository as it was typed)."""
    if datasource.is_hub_spec(root):
        return root
    base, path = Path(os.path.abspath(data_dir)), Path(os.path.abspath(root))
    return str(path.relative_to(base)) if path.is_relative_to(base) else path.name


class ClozeResources(Resources):
    """The Cloze tab's per-visitor resources (stop event of running batches, the folders its
    uploads, builds and runs wrote): a closing page's runs stop first, then its folders go."""


RESOURCES: SessionRegistry[ClozeResources] = SessionRegistry(ClozeResources)


@dataclass(frozen=True)
class ClozeTab:
    """What every Cloze handler shares: the app's data folder."""

    data_dir: str
