"""The loaded set and its questions, cached per (folder, set, seed) and invalidated only when the
set folder changes (its modification time: adding, removing or renaming a stem folder). A clip
replaced inside a stem folder is not noticed: call `invalidate()` after such an edit."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from components.base.lru import SingleFlightLRU
from components.cloze.data import ClozeDataset
from components import datasource
from components.cloze.questions import Question
from components.cloze.study.protocol import load_set, released_questions


@dataclass(frozen=True)
class StudySet:
    dataset: ClozeDataset
    questions: tuple[Question, ...]
    dropped: tuple[str, ...]       # folders not taken as stems (a clip missing)
    warnings: tuple[str, ...] = ()  # stems kept as the released app keeps them, that it stumbles on


#: sets kept (each set, seed and folder state its own entry; a study uses one or a few)
SETS_KEPT = 8
#: the app's loaded sets (`study_set` takes `cache=` another, e.g. a test's own)
SETS: SingleFlightLRU[tuple, StudySet] = SingleFlightLRU(SETS_KEPT)


def study_set(folder: str | Path, set_name: str, seed: int, *,
              cache: SingleFlightLRU[tuple, StudySet] = SETS) -> StudySet:
    """The set, loaded once however many annotators open it at the same moment (the others wait
    for that load: 32 starting together once loaded 1,521 stems 32 times)."""
    folder = Path(folder)
    base = (str(folder.resolve()), set_name, seed)
    stamp = datasource.stamp(folder) or folder.stat().st_mtime_ns  # a repository's: its commit

    def load() -> StudySet:
        ds, found = load_set(folder)
        value = StudySet(ds, tuple(released_questions(ds, set_name, seed)), found.dropped, found.warnings)
        for old in [k for k in cache if k[:3] == base and k[3] != stamp]:  # the folder changed
            cache.pop(old)
        return value
    return cache.get((*base, stamp), load)


def invalidate() -> None:
    SETS.clear()
