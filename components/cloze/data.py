"""The released on-disk layout: `choices/<stem>/{before,GT,after}.mp4`, `S/`, `A/`, `C/`,
`meta.json` (beside choices/, or `output/<preset>/meta.json` where the released generator writes
it), `mixed/mixed_ids.json` (the released Mixed subset, a bare JSON list of {"stem", "S", "A",
"P"}) (docs/tempcloze-upstream.md) and `sets.json` (our set lists), validated with
components.common.validate so a bad file names its path, record and key. Also safe extraction of an
uploaded zip.

A folder may be a dataset repository (`hf://datasets/...`, components/datasource): its files are
asked about through the data source (answered from the repository's listing) and fetched when read;
a clip is fetched when its frames are made (frames.py), not when the dataset opens."""
from __future__ import annotations

import os
import zipfile
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path, PurePosixPath
from typing import Annotated

from typing_extensions import TypedDict
from typing import NotRequired

from components import datasource
from components.cloze.spec import SPEC
from components.base.errors import UserError
from components.base.io import load_json
from components.base.lru import SingleFlightLRU
from components.common.validate import validated

#: result-file / folder key of each dimension; the paper calls "C" Progression (P)
DIM_FOLDERS = {"S": "S", "A": "A", "C": "C"}
DIM_CLIPS = {"S": ("Rand1", "Rand2", "Rand3"), "A": ("Early", "Late", "Wide"),
             "C": ("Reverse", "Shuffle", "Loop")}
CONTEXT_CLIPS = ("before", "GT", "after")
PAPER_DIM = {"S": "S", "A": "A", "C": "P", "Mixed": "Mixed"}
_CLIP_FOLDERS = ("", *(f"{d}/" for d in DIM_FOLDERS.values()))


def dim_key(name: str) -> str:
    """Accept the paper's names (S, A, P) and the folder names (S, A, C); return S | A | C | Mixed."""
    key = name.strip()
    if key.upper() == "P":
        return "C"
    if key.lower() == "mixed":
        return "Mixed"
    if key.upper() in DIM_FOLDERS:
        return key.upper()
    raise UserError(f"Unknown dimension '{name}'; use S, A, P (folder C) or Mixed.")


def clip_dim(clip: str) -> str | None:
    """Which dimension a distractor clip belongs to (GT -> None)."""
    for dim, names in DIM_CLIPS.items():
        if clip in names:
            return dim
    return None


def _relpath(clip: str) -> str:
    dim = clip_dim(clip)
    return f"{clip}.mp4" if dim is None else f"{DIM_FOLDERS[dim]}/{clip}.mp4"


_RELPATHS = {c: _relpath(c) for c in (*CONTEXT_CLIPS, *(c for names in DIM_CLIPS.values() for c in names))}


def clip_relpath(clip: str) -> str:
    """'GT' -> 'GT.mp4', 'Wide' -> 'A/Wide.mp4'."""
    return _RELPATHS.get(clip) or _relpath(clip)


@dataclass
class Instance:
    """One stem: its folder, its clips found on disk and its meta entry (if any)."""

    stem: str
    folder: Path
    meta: dict = field(default_factory=dict)

    _sizes: dict[str, int] | None = field(default=None, init=False, repr=False, compare=False)

    def clip_path(self, clip: str) -> Path:
        """Where the clip is (for a repository: where it will be once fetched; see clip_file)."""
        return self.folder / clip_relpath(clip)

    def clip_file(self, clip: str) -> Path:
        """The clip as a file on this machine (fetched first when it comes from a repository)."""
        return datasource.local(self.clip_path(clip))

    def _clip_sizes(self) -> dict[str, int]:
        """Relative path -> size of every .mp4 of the stem, read once: a set of 1,521 stems asks
        `missing` about each of its 4,563 questions, 54,756 file checks before this. A
        repository's stem is answered from its listing (nothing fetched)."""
        if self._sizes is None:
            sizes: dict[str, int] = {}
            base = os.fspath(self.folder)
            mounted = datasource.stamp(base) is not None
            for sub in _CLIP_FOLDERS:
                if mounted:
                    sizes.update((sub + name, size) for name, size in datasource.entries(base + "/" + sub).items()
                                 if name.endswith(".mp4") and size is not None)
                    continue
                try:
                    with os.scandir(base + "/" + sub) as entries:
                        for entry in entries:
                            if entry.name.endswith(".mp4") and entry.is_file():
                                sizes[sub + entry.name] = entry.stat().st_size
                except OSError:
                    continue
            self._sizes = sizes
        return self._sizes

    def missing(self, clips) -> list[str]:
        """The clips that are not on disk or are empty (as the stem's folder was when first asked)."""
        sizes = self._clip_sizes()
        return [c for c in clips if not sizes.get(clip_relpath(c))]

    def available_dims(self) -> list[str]:
        if self.missing(CONTEXT_CLIPS):
            return []
        return [d for d, names in DIM_CLIPS.items() if not self.missing(names)]

    def problems(self) -> list[str]:
        out = []
        gone = self.missing(CONTEXT_CLIPS)
        if gone:
            out.append(f"{self.stem}: missing or empty {', '.join(clip_relpath(c) for c in gone)}")
        for dim, names in DIM_CLIPS.items():
            lost = self.missing(names)
            if lost:
                out.append(f"{self.stem}: dimension {PAPER_DIM[dim]} unavailable, missing "
                           f"{', '.join(clip_relpath(c) for c in lost)}")
        return out


@dataclass
class ClozeDataset:
    root: Path                      # folder holding choices/ (and meta.json, sets.json)
    instances: dict[str, Instance]  # stem -> instance, sorted by stem
    meta: dict
    sets: dict

    def instance(self, stem: str) -> Instance:
        if stem not in self.instances:
            raise UserError(f"Stem '{stem}' is not in {self.root / 'choices'}.")
        return self.instances[stem]

    def problems(self) -> list[str]:
        return [p for inst in self.instances.values() for p in inst.problems()]


def find_root(path: str | Path) -> Path:
    """The folder holding choices/: `path` itself, `path/cloze`, or one level below. `path` may be
    a repository spec (`hf://datasets/...`), opened here (listed once, nothing else fetched)."""
    path = datasource.open_data_dir(path)
    for cand in (path, path / SPEC.data):
        if datasource.is_dir(cand / "choices"):
            return cand
    if datasource.is_dir(path):
        for sub in datasource.subfolders(path):
            if datasource.is_dir(sub / "choices"):
                return sub
    raise UserError(f"No TempCloze data in {path}: expected a 'choices/<stem>/' folder "
                    "(before.mp4, GT.mp4, after.mp4, S/, A/, C/) there or in a sub-folder.")


class MetaEntry(TypedDict):
    """One video's entry in meta.json (other keys, e.g. duration, seed, intervals, are kept)."""

    gap_start: float
    gap_end: float


class MixedItem(TypedDict):
    """One Mixed question (sets.json or the released mixed/mixed_ids.json): its stem and one
    distractor clip per dimension ("C" is read where "P" is missing, as the released script does)."""

    stem: str
    S: NotRequired[str]
    A: NotRequired[str]
    P: NotRequired[str]
    C: NotRequired[str]


META_SCHEMA = dict[str, MetaEntry]


@lru_cache(maxsize=1)
def sets_schema():
    """set name -> list of entries, each a stem (read as {"stem": ...}) or a mixed item; one
    schema for both so a bad entry is named as `set[i].key`, not by union member."""
    from pydantic import BeforeValidator

    def as_item(value):
        return {"stem": value} if isinstance(value, str) else value

    return dict[str, list[Annotated[MixedItem, BeforeValidator(as_item)]]]


def _load_checked(path: Path, schema, fix: str):
    """A JSON file read and validated (the raw data is kept: unknown keys survive)."""
    data = load_json(datasource.local(path), path.name)
    validated(schema, data, file=path, fix=f"Fix {path}: {fix}")
    return data


#: meta.json files read, in order: the app's own (beside choices/), then the released generator's
#: `output/meta.json` (older) and `output/<preset>/meta.json`
META_GLOBS = ("meta.json", "output/meta.json", "output/*/meta.json")
MIXED_IDS = Path("mixed") / "mixed_ids.json"
MIXED_SET = "mixed"


def meta_files(root: Path) -> list[Path]:
    return [p for pattern in META_GLOBS for p in datasource.glob(root, pattern)]


def _gap(entry: dict) -> tuple:
    return entry.get("gap_start"), entry.get("gap_end")


def load_meta(root: Path) -> dict:
    """Every meta.json of the data folder merged (video file name -> entry). Entries the released
    filter marked `"keep": false` (rejected videos, gap null) are left out. The same video with two
    different gaps in two files is an error naming both files."""
    merged: dict = {}
    seen_in: dict[str, Path] = {}
    for path in meta_files(root):
        data = load_json(datasource.local(path), path.name)
        if isinstance(data, dict):
            data = {k: v for k, v in data.items() if not (isinstance(v, dict) and v.get("keep") is False)}
        validated(META_SCHEMA, data, file=path,
                  fix=f"Fix {path}: it maps a video file name to {{gap_start, gap_end}}.")
        for name, entry in data.items():
            if name in merged and _gap(merged[name]) != _gap(entry):
                raise UserError(f"{name} has gap {_gap(merged[name])} in {seen_in[name]} but "
                                f"{_gap(entry)} in {path}; keep one of them.")
            merged.setdefault(name, entry)
            seen_in.setdefault(name, path)
    return merged


def load_mixed_ids(root: Path) -> list | None:
    """The released `mixed/mixed_ids.json` (a bare JSON list of {"stem", "S", "A", "P"}), or None."""
    path = root / MIXED_IDS
    if not datasource.is_file(path):
        return None
    return _load_checked(path, list[MixedItem], 'it is a JSON list of {"stem", "S", "A", "P"} objects '
                                                '(e.g. {"stem": "x", "S": "S/Rand2.mp4", "A": "A/Wide.mp4", '
                                                '"P": "C/Loop.mp4"}).')


def load_sets(root: Path) -> dict:
    """sets.json (set name -> stems or mixed items) plus the released Mixed list as the set
    'mixed'. Both naming a different 'mixed' set is an error (the data would be ambiguous)."""
    path = root / "sets.json"
    sets = {}
    if datasource.is_file(path):
        sets = _load_checked(path, sets_schema(), "it maps a set name to a list of stems or of mixed items "
                                                  '{"stem", "S", "A", "P"}.')
    released = load_mixed_ids(root)
    if released is not None:
        if MIXED_SET in sets and sets[MIXED_SET] != released:
            raise UserError(f"{path} and {root / MIXED_IDS} both define the set '{MIXED_SET}' with "
                            f"different items; remove one of them.")
        sets = {**sets, MIXED_SET: released}
    return sets


def load_dataset(path: str | Path) -> ClozeDataset:
    """The TempCloze data of a folder or repository (`hf://datasets/...`)."""
    root = find_root(path)
    # a repository's metadata files fetched side by side (nothing to do for a local folder)
    datasource.fetch_all([*meta_files(root), root / "sets.json", root / MIXED_IDS], progress=False)
    meta = load_meta(root)
    by_stem = {Path(name).stem: entry for name, entry in meta.items()}
    instances = {}
    for folder in datasource.subfolders(root / "choices"):
        if not folder.name.startswith("."):
            instances[folder.name] = Instance(folder.name, folder, by_stem.get(folder.name, {}))
    if not instances:
        raise UserError(f"{root / 'choices'} is empty: add one folder per stem "
                        "(before.mp4, GT.mp4, after.mp4, S/, A/, C/).")
    return ClozeDataset(root, instances, meta, load_sets(root))


def folder_stamp(path: str | Path) -> tuple:
    """What changes when a data folder's stems, meta.json or sets.json change: their times (a
    repository's folder: its commit, which never changes)."""
    base = find_root(path)
    pinned = datasource.stamp(base)
    if pinned:
        return (pinned,)
    return tuple(p.stat().st_mtime_ns if p.exists() else None
                 for p in (base / "choices", base / "meta.json", base / "sets.json"))


#: folders kept loaded by `shared_dataset` (each folder state its own entry)
DATASETS_KEPT = 16
#: the app's loaded folders (`shared_dataset` takes `cache=` another, e.g. a test's own)
DATASETS: SingleFlightLRU[tuple, ClozeDataset] = SingleFlightLRU(DATASETS_KEPT)


def shared_dataset(path: str | Path, *, cache: SingleFlightLRU[tuple, ClozeDataset] = DATASETS) -> ClozeDataset:
    """`load_dataset`, kept per folder until `folder_stamp` changes, so opening a folder, building
    its question sets and starting a study read a 1,521-stem folder (and check its 18,252 clips)
    once, not once each, however many visitors open it at once. Callers must not change the
    dataset they get."""
    key = str(find_root(path).resolve())
    return cache.get((key, folder_stamp(key)), lambda: load_dataset(path))


# ---- zip upload ------------------------------------------------------------------------------
MAX_ZIP_FILES = 20_000
MAX_ZIP_BYTES = 4 * 1024 ** 3


def safe_extract_zip(zip_path: str | Path, dest: str | Path, *, max_files: int = MAX_ZIP_FILES,
                     max_bytes: int = MAX_ZIP_BYTES) -> Path:
    """Extract after checking every name: no absolute paths, no '..', no links, bounded size."""
    zip_path, dest = Path(zip_path), Path(dest)
    try:
        zf = zipfile.ZipFile(zip_path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise UserError(f"{zip_path.name} is not a readable zip file ({exc}).") from None
    with zf:
        infos = zf.infolist()
        if len(infos) > max_files:
            raise UserError(f"{zip_path.name} holds {len(infos)} entries; the limit is {max_files}.")
        total = 0
        for info in infos:
            name = info.filename
            pure = PurePosixPath(name.replace("\\", "/"))
            if name.startswith(("/", "\\")) or pure.is_absolute() or ":" in pure.parts[0] \
                    or ".." in pure.parts:
                raise UserError(f"{zip_path.name}: refusing unsafe entry name '{name}' "
                                "(absolute path or '..'); re-create the zip with relative paths.")
            mode = (info.external_attr >> 16) & 0o170000
            if mode == 0o120000:
                raise UserError(f"{zip_path.name}: refusing symbolic link '{name}'.")
            total += info.file_size
            if total > max_bytes:
                raise UserError(f"{zip_path.name} expands to more than {max_bytes // 1024 ** 2} MiB; "
                                "upload a smaller set or point the data directory at it instead.")
        dest.mkdir(parents=True, exist_ok=True)
        root = dest.resolve()
        for info in infos:
            target = (dest / info.filename).resolve()
            if root not in target.parents and target != root:
                raise UserError(f"{zip_path.name}: entry '{info.filename}' escapes the target folder.")
        zf.extractall(dest)
    return dest
