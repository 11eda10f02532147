"""What one browser session of the Impact tab holds.

`ImpactSession` is the gr.State value: the predictions this session made (another session never
sees them). `ImpactResources` keeps what is too live for a State (the stop event, set when the page
closes so a running model call ends), in the tab's registry.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field, replace
from pathlib import Path

from components.impact.spec import SPEC
from components.base.errors import UserError
from components.common.sessions import Resources, SessionRegistry
from components.common.watched import WatchedFile
from components.impact.data import ImpactAnnotations, ImpactItem, load_annotations


#: how the body is painted for a frame both compared models answered (`ImpactSession.paint`)
PAINTS = ("difference", "first", "second")


@dataclass(frozen=True)
class ImpactSession:
    """Predictions of this session. A handler returns a new session rather than changing one.
    With "compare with", the compared model's answers to the same requests are kept beside the
    session model's (`*_second`); a later run without it drops the clip's old second answers."""

    temporal: dict[str, dict] = field(default_factory=dict)  # qid -> prediction record (JSONL line)
    spatial: dict[str, dict[str, dict]] = field(default_factory=dict)  # qid -> {frame: answer dict}
    temporal_method: str = ""
    spatial_method: str = ""
    #: qid -> the compared model's record, with "only_first" / "only_second" (seconds)
    temporal_second: dict[str, dict] = field(default_factory=dict)
    spatial_second: dict[str, dict[str, dict]] = field(default_factory=dict)
    temporal_second_method: str = ""
    spatial_second_method: str = ""
    paint: str = "difference"  # PAINTS: the two models' difference, or one model against the truth
    runs_heat: bool = False   # the body shows how many runs named each region (the runs panel's toggle)

    def answer_at(self, qid: str, frame: int) -> dict | None:
        """The region answer for one frame of a clip, if this session asked for it."""
        return self.spatial.get(qid, {}).get(str(frame))

    def second_answer_at(self, qid: str, frame: int) -> dict | None:
        """The compared model's region answer for that frame, if there is one."""
        return self.spatial_second.get(qid, {}).get(str(frame))

    def with_temporal(self, qid: str, record: dict, method: str, second: dict | None = None,
                      second_method: str = "") -> ImpactSession:
        seconds = {k: v for k, v in self.temporal_second.items() if k != qid}
        if second is not None:
            seconds[qid] = second
        return replace(self, temporal={**self.temporal, qid: record}, temporal_method=method,
                       temporal_second=seconds,
                       temporal_second_method=second_method or self.temporal_second_method)

    def with_spatial(self, qid: str, answers: dict[str, dict], method: str,
                     second: dict[str, dict] | None = None, second_method: str = "") -> ImpactSession:
        seconds = {k: v for k, v in self.spatial_second.items() if k != qid}
        if second is not None:
            seconds[qid] = second
        return replace(self, spatial={**self.spatial, qid: answers}, spatial_method=method,
                       spatial_second=seconds,
                       spatial_second_method=second_method or self.spatial_second_method)

    def with_paint(self, paint: str) -> ImpactSession:
        return replace(self, paint=paint if paint in PAINTS else PAINTS[0])

    def with_runs_heat(self, on: bool) -> ImpactSession:
        return replace(self, runs_heat=bool(on))


@dataclass
class ImpactResources(Resources):
    """One visitor's heavy objects: the common ones (the stop event its model calls watch), the
    count of camera resets and whether the message line says what to type in the frame box."""

    resets: int = 0
    frame_problem: bool = False   # the message line says what to type in the frame box
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def next_reset(self) -> int:
        """A counter per page: a reset camera differs by a hair from the last one, so the page
        applies it even when the camera itself did not change."""
        with self._lock:
            self.resets += 1
            return self.resets


#: the tab's visitors (one app per process): a closing page's running model calls stop
RESOURCES: SessionRegistry[ImpactResources] = SessionRegistry(ImpactResources)


@dataclass(frozen=True)
class ImpactTab:
    """What the tab read at start: the annotations (None when missing or unreadable) and why not;
    the data folder and the `--runs` folders the runs panel and the runs' heat read."""

    annotations: ImpactAnnotations | None
    load_error: str | None = None
    data_dir: Path | None = None
    runs: tuple[str, ...] = ()

    @property
    def first(self) -> ImpactItem | None:
        return self.annotations.items[0] if self.annotations and self.annotations.items else None

    def splits(self) -> list[str]:
        return sorted({i.split for i in (self.annotations.items if self.annotations else []) if i.split})

    def item(self, qid: str | None) -> ImpactItem:
        if self.annotations is None:
            raise UserError("No impact annotations are loaded; see the note at the top of the tab.")
        items = self.annotations.by_qid()
        if not qid or qid not in items:
            raise UserError("Choose a clip first.")
        return items[qid]


def tab_source(data_dir: Path, runs: tuple[str, ...] = ()) -> WatchedFile[ImpactTab]:
    """The tab's data as each page reads it: the annotation file, read again when it changes
    (`runs`: more runs folders, the app's `--runs`)."""
    return WatchedFile(Path(data_dir) / SPEC.data / "annotations.json", lambda: load_tab(data_dir, runs))


def load_tab(data_dir: Path, runs: tuple[str, ...] = ()) -> ImpactTab:
    path = Path(data_dir) / SPEC.data / "annotations.json"
    where = {"data_dir": Path(data_dir), "runs": tuple(runs)}
    if not path.exists():
        return ImpactTab(None, "No impact annotations in the data folder (impact/annotations.json). Run "
                                "`python -m examples.generate` for example clips, or put your own "
                                "annotations.json (docs/formats.md) there.", **where)
    try:
        return ImpactTab(load_annotations(path), **where)
    except UserError as exc:
        return ImpactTab(None, f"Could not load impact/annotations.json: {exc}", **where)
