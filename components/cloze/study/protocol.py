"""The released study app's protocol (`human-eval/human_eval_app.py`, docs/tempcloze-upstream.md,
"Human-study record"): one folder per annotator set `choices_human/set_N/<stem>/...`, stems found
as the released app finds them, a per-set derived seed, the task schedule and the option maps.
The result file `set_N.json` is results_file.py."""
from __future__ import annotations

import hashlib
import os
import random
from dataclasses import dataclass, field
from pathlib import Path

from components import datasource
from components.cloze.data import CONTEXT_CLIPS, DIM_CLIPS, ClozeDataset, Instance, clip_relpath
from components.cloze.questions import ORDER_HUMAN, Question, make_question
from components.base.errors import UserError

SEED_PREFIX = "temporal-cloze-human-eval-folder-v1"
SCHEDULE_POLICY = "single_folder_navigation_v1"
DIMS = ("S", "A", "C")
REQUIRED_CLIPS = (*CONTEXT_CLIPS, *[c for names in DIM_CLIPS.values() for c in names])
REQUIRED_FILES = tuple(clip_relpath(c) for c in REQUIRED_CLIPS)
#: answer-flow values as the released app writes them; ours before it was reproduced -> released
FLOW_ALIASES = {"select_then_submit": "confirm"}


def set_seed(set_name: str) -> int:
    """The released per-set seed: `set_1` -> 8800808831473759713."""
    digest = hashlib.sha256(f"{SEED_PREFIX}:{set_name}".encode()).hexdigest()
    return int(digest[:16], 16)


def _present(folder: str) -> dict[str, int]:
    """Required file (relative path) -> its size (-1 for a folder of that name), for the required
    files that exist in a stem folder. One directory listing per sub-folder instead of twelve
    `exists()` calls: the released test is `(item / rel).exists()`, so a symbolic link counts when
    its target exists and an empty file counts."""
    found: dict[str, int] = {}
    mounted = datasource.stamp(folder) is not None   # a dataset repository's folder: its listing
    for sub in ("", "S/", "A/", "C/"):
        if mounted:
            for name, size in datasource.entries(folder + "/" + sub).items():
                if sub + name in _REQUIRED_SET:
                    found[sub + name] = -1 if size is None else size
            continue
        try:
            with os.scandir(folder + "/" + sub) as entries:
                for entry in entries:
                    rel = sub + entry.name
                    if rel not in _REQUIRED_SET:
                        continue
                    try:
                        st = entry.stat()          # follows a link; a broken one raises
                    except OSError:
                        continue
                    found[rel] = -1 if entry.is_dir() else st.st_size
        except OSError:
            continue
    return found


_REQUIRED_SET = frozenset(REQUIRED_FILES)


@dataclass(frozen=True)
class Discovery:
    """The stems of one set folder as the released app finds them, and what it would choke on."""

    stems: tuple[str, ...]                          # sorted, as the released `discover_stems`
    dropped: tuple[str, ...] = ()                   # "stem: dropped, missing ..." (not a stem there)
    warnings: tuple[str, ...] = field(default=())   # kept, but the released app stumbles on them


def discover(folder: str | Path) -> Discovery:
    """The released `discover_stems`: every sub-folder (a hidden one too) in which every required
    file exists by name (an empty file too), sorted by name. Which stems exist decides the whole
    schedule, so nothing is filtered beyond that; the odd cases are reported instead."""
    folder = Path(folder)
    stems, dropped, warnings = [], [], []
    for item in datasource.subfolders(folder):      # the listing's too, for a dataset repository
        found = _present(os.fspath(item))
        gone = [rel for rel in REQUIRED_FILES if rel not in found]
        if gone:
            if found:   # a folder with none of the files (.git, __MACOSX) is not a stem at all
                dropped.append(f"{item.name}: dropped, missing {', '.join(gone)}")
            continue
        stems.append(item.name)
        if item.name.startswith("."):
            warnings.append(f"{item.name}: a hidden folder, kept as a stem (the released app keeps it "
                            "too); remove or rename it before anyone starts if it is a stray copy, since "
                            "the stems decide the whole schedule")
        empty = [rel for rel, size in found.items() if size == 0]
        if empty:
            warnings.append(f"{item.name}: {', '.join(sorted(empty))} is empty (0 bytes), kept as a stem "
                            "(the released app keeps it too and cannot show that clip); re-cut the clip")
        folders = [rel for rel, size in found.items() if size < 0]
        if folders:
            warnings.append(f"{item.name}: {', '.join(sorted(folders))} is a folder, not a clip; kept as "
                            "the released app keeps it")
    return Discovery(tuple(sorted(stems)), tuple(dropped), tuple(warnings))


def holds_stems(folder: str | Path) -> bool:
    """`discover(folder).stems` is not empty (stops at the first stem)."""
    return any(len(_present(os.fspath(item))) == len(REQUIRED_FILES) for item in datasource.subfolders(folder))


def set_folders(path: str | Path) -> dict[str, Path]:
    """Set name -> folder, as the released `discover_choice_sets`: the folder itself when it holds
    stems directly, else its sub-folders that hold stems (sorted); `choices_human/` inside the
    given folder is looked in too."""
    path = datasource.open_data_dir(path)
    if not datasource.is_dir(path):
        raise UserError(f"No study folder at {path}: expected choices_human/set_N/<stem>/ folders.")
    for root in (path, path / "choices_human"):
        if not datasource.is_dir(root):
            continue
        if holds_stems(root):
            return {root.resolve().name: root}
        found = {p.name: p for p in datasource.subfolders(root) if holds_stems(p)}
        if found:
            return found
    raise UserError(f"No annotator set in {path}: expected choices_human/set_N/<stem>/ with "
                    "before.mp4, GT.mp4, after.mp4, S/, A/, C/ in each stem folder.")


def load_set_folder(folder: str | Path) -> tuple[ClozeDataset, list[str]]:
    """The set's stems as a dataset (found as the released app finds them) and the folders it did
    not take as stems."""
    found = discover(folder)
    return _dataset(Path(folder), found), list(found.dropped)


def _dataset(folder: Path, found: Discovery) -> ClozeDataset:
    if not found.stems:
        raise UserError(f"{folder} holds no complete stem (every stem needs before, GT, after and "
                        "the nine distractors)." + (f" {found.dropped[0]}" if found.dropped else ""))
    return ClozeDataset(folder, {s: Instance(s, folder / s) for s in found.stems}, {}, {})


def load_set(folder: str | Path) -> tuple[ClozeDataset, Discovery]:
    found = discover(folder)
    return _dataset(Path(folder), found), found


def schedule(stems: list[str], seed: int) -> list[tuple[str, str]]:
    """tasks = [(stem, dim) for stem in sorted stems for dim in S, A, C], shuffled by Random(seed)."""
    tasks = [(stem, dim) for stem in sorted(stems) for dim in DIMS]
    random.Random(seed).shuffle(tasks)
    return tasks


def released_questions(ds: ClozeDataset, set_name: str, seed: int | None = None) -> list[Question]:
    """The questions in schedule order, options by Random(f"{seed}:{stem}:{dim}:options")."""
    seed = set_seed(set_name) if seed is None else seed
    return [make_question(stem, dim, seed, ORDER_HUMAN) for stem, dim in schedule(list(ds.instances), seed)]
