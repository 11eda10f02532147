"""Runs as a collection (docs/architecture.md, "Runs as a collection"): every run file a tab finds
in its runs folders, read once in the background, cached on disk by content, and each malformed
file refused with a line that names it (the others still load). Pure logic, no gradio.

A benchmark describes its files with a `RunReader` (the patterns it looks for in a folder, how a
file becomes a compact JSON-able value, how a file is named); `collect` finds and reads the files;
`BackgroundRuns` does it on a thread so that a page never waits for it. The per-benchmark modules
(components/{cloze,window_search,impact}/runs.py) turn the compact values into per-item tables,
the same tables `eval <benchmark> --items` writes.
"""
from __future__ import annotations

import csv
import gc
import hashlib
import io
import json
import logging
import marshal
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from components.base.errors import UserError
from components.base.io import atomic_write_bytes
from components.base.lru import SingleFlightLRU

log = logging.getLogger(__name__)

#: folders named with `--runs` / APP_RUNS_DIR (os.pathsep-separated) are searched by every tab
RUNS_ENV = "APP_RUNS_DIR"
ITEM_COLUMNS = ("run", "item", "answer", "score", "metric", "source")


@dataclass(frozen=True)
class RunFile:
    """One run file and the name the tables show it by (from its file name)."""
    name: str
    path: Path


@dataclass(frozen=True)
class Refusal:
    """A file that was not loaded, and why."""
    path: str
    reason: str

    def line(self) -> str:
        return f"run file {self.path} not loaded: {self.reason}"


@dataclass(frozen=True)
class RunReader:
    """How one benchmark's run files are found and read.

    `patterns`: relative glob patterns (`*` within a part, no `**`) tried in each runs folder;
    `read(path)`: the file as a compact JSON-able value, raising an error whose text says what is
    wrong (UserError / DataFormatError / ValueError); `name(path)`: the run's name; `skip(path)`:
    files found by a pattern that are no runs (e.g. search traces); `version`: bump when `read`'s
    output changes, so older cache entries are not used."""
    kind: str
    version: int
    patterns: tuple[str, ...]
    read: Callable[[Path], Any]
    name: Callable[[Path], str] = lambda p: p.stem
    skip: Callable[[Path], bool] = lambda p: False
    subfolders: tuple[str, ...] = ()   # searched under a --runs folder too (e.g. "cloze/results")
    #: the variable that names another folder for the last subfolder (the one `run` writes to)
    folder_env: str = ""

    def folders(self, data_dir: str | Path | None) -> list[Path]:
        """The tab's own runs folders in `data_dir`: its `subfolders`, the last one replaced by
        the folder `folder_env` names when that is set (read even without a data folder)."""
        *fixed, last = self.subfolders
        folders = [Path(data_dir) / s for s in fixed] if data_dir is not None else []
        env = os.environ.get(self.folder_env, "") if self.folder_env else ""
        if env:
            folders.append(Path(env))
        elif data_dir is not None:
            folders.append(Path(data_dir) / last)
        return folders

    def loader(self, data_dir: str | Path | None, named: Sequence[str] = (),
               finish: Callable[[LoadedRuns], LoadedRuns] | None = None) -> RunsLoader:
        """The tab's loader over its own folders and the `named` ones (and APP_RUNS_DIR's),
        started (disk cache under APP_CACHE_DIR)."""
        return RunsLoader(self, self.folders(data_dir), tuple(named), finish=finish)


@dataclass
class LoadedRuns:
    """name -> compact value of every run read, in name order; the refused files; how many
    values came from the disk cache."""
    runs: dict[str, Any] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)   # name -> path
    refusals: list[Refusal] = field(default_factory=list)
    from_cache: int = 0
    table: Any = None   # the benchmark's table, when the loader built it (e.g. ClozeRuns)

    def status_line(self) -> str:
        text = f"{len(self.runs)} run(s)"
        if self.refusals:
            text += f"; {len(self.refusals)} refused: " + "; ".join(r.line() for r in self.refusals)
        return text


# -- finding files ------------------------------------------------------------------------------
def named_runs_folders(extra: Iterable[str | Path] | None = None) -> list[str]:
    """The folders or `hf://datasets/...` specs named by `--runs` (`extra`) and APP_RUNS_DIR."""
    named = [str(x) for x in (extra or []) if str(x).strip()]
    env = os.environ.get(RUNS_ENV, "")
    named += [part for part in env.split(os.pathsep) if part.strip()]
    return list(dict.fromkeys(named))


def _open_folder(spec: str | Path) -> Path:
    """A local folder as it is; a repository spec opened as a data folder, else (a plain folder of
    run files, such as TempCloze's `eval_results/overall/eval_results_all`) mounted through one of
    its files, so its listing answers the patterns and each file is fetched when read."""
    from components.datasource import is_hub_spec, open_data_dir, parse_spec
    if not is_hub_spec(spec):
        return Path(spec)
    try:
        return open_data_dir(spec)
    except UserError:
        from components.datasource.repos import listed, open_file
        hub_spec = parse_spec(str(spec))
        _, files = listed(hub_spec)
        prefix = f"{hub_spec.subfolder}/" if hub_spec.subfolder else ""
        inside = sorted(p for p in files if p.startswith(prefix) and "/" not in p[len(prefix):])
        if not inside:
            raise
        return open_file(hub_spec.at(subfolder=inside[0])).parent


def find_run_files(reader: RunReader, defaults: Iterable[str | Path] = (),
                   named: Iterable[str | Path] = (), *, empty_ok: bool = False
                   ) -> tuple[list[RunFile], list[Refusal]]:
    """Every run file in the `defaults` folders (absent ones are skipped: a data folder need not
    have runs) and the `named` folders or files (an absent one is refused, as is a folder holding
    no run unless `empty_ok`: an app-wide folder may hold another tab's runs only). Two files with
    one name are told apart by their folder."""
    from components.datasource import glob, is_dir, is_file
    found: list[Path] = []
    refusals: list[Refusal] = []
    for spec, required in [(d, False) for d in defaults] + [(n, True) for n in named]:
        try:
            root = _open_folder(spec)
        except UserError as exc:
            refusals.append(Refusal(str(spec), str(exc)))
            continue
        if is_file(root):
            found.append(root)
            continue
        if not is_dir(root):
            if required:
                refusals.append(Refusal(str(spec), "no such file or folder"))
            continue
        here = [p for base in [root, *(root / s for s in reader.subfolders if required)]
                for pattern in reader.patterns for p in glob(base, pattern)]
        here = [p for p in here if not p.name.startswith(".") and not reader.skip(p)]  # no temp/marker files
        if required and not here and not empty_ok:
            refusals.append(Refusal(str(spec), f"no {reader.kind} run file in it (looked for "
                                               f"{', '.join(reader.patterns)})"))
        found += here
    unique = list(dict.fromkeys(Path(os.path.abspath(p)) for p in found))
    names: dict[str, list[Path]] = {}
    for path in unique:
        names.setdefault(reader.name(path), []).append(path)
    files = []
    for name, paths in names.items():
        for path in paths:
            files.append(RunFile(name if len(paths) == 1 else f"{name} ({path.parent.name})", path))
    files.sort(key=lambda f: f.name)
    return files, refusals


# -- reading, with a disk cache keyed by content -------------------------------------------------
def default_runs_cache() -> Path:
    from components.media.cache import default_cache_dir
    return default_cache_dir() / "runs"


class ContentCache:
    """Values on disk under `<root>/<kind>/<sha256>.bin`, keyed by the bytes of the file they
    were read from, the reader's version and the Python version: a changed file has another key,
    so it is read again; an entry that cannot be read is treated as absent. Entries are `marshal`
    data (several times quicker to read than JSON; written and read only by this app, in its own
    cache folder)."""

    def __init__(self, root: str | Path | None = None):
        self.root = Path(root) if root is not None else default_runs_cache()

    def key(self, reader: RunReader, data: bytes) -> str:
        h = hashlib.sha256(f"{reader.kind}:{reader.version}:{sys.version_info[:2]}:".encode())
        h.update(data)
        return h.hexdigest()

    def path(self, reader: RunReader, key: str) -> Path:
        return self.root / reader.kind / f"{key}.bin"

    def get(self, reader: RunReader, key: str) -> dict | None:
        try:
            value = marshal.loads(self.path(reader, key).read_bytes())
        except (OSError, ValueError, EOFError, TypeError):
            return None
        return value if isinstance(value, dict) and ("value" in value or "refused" in value) else None

    def put(self, reader: RunReader, key: str, entry: dict) -> None:
        try:
            atomic_write_bytes(self.path(reader, key), marshal.dumps(entry), durable=False)
        except (OSError, ValueError):  # a read-only cache costs a re-read next time, nothing else
            pass


def read_run(reader: RunReader, path: Path, cache: ContentCache | None) -> tuple[Any, str | None, bool]:
    """(value, refusal reason or None, whether it came from the cache) for one file."""
    from components.datasource import local
    try:
        local_path = local(path)
        data = local_path.read_bytes()
    except (OSError, UserError) as exc:
        return None, f"cannot be read ({exc})", False
    key = cache.key(reader, data) if cache is not None else ""
    if cache is not None:
        hit = cache.get(reader, key)
        if hit is not None:
            return hit.get("value"), hit.get("refused"), True
    try:
        value, reason = reader.read(local_path), None
    except Exception as exc:  # noqa: BLE001 - one bad file is refused with its line, never the whole set
        value, reason = None, _reason(exc, path)
    if cache is not None:
        cache.put(reader, key, {"refused": reason} if reason else {"value": value})
    return value, reason, False


def _reason(exc: BaseException, path: Path) -> str:
    """The error's text without the file name the line already starts with (an unexpected
    error also names its type)."""
    text = str(exc).strip() or type(exc).__name__
    if not isinstance(exc, (UserError, ValueError)):
        text = f"{type(exc).__name__}: {text}"
    for prefix in (str(path), str(Path(path).name)):
        if text.startswith(prefix):
            text = text[len(prefix):].lstrip(":, ")
    return text


def load_runs(reader: RunReader, files: Sequence[RunFile], cache: ContentCache | None = None,
              refusals: Iterable[Refusal] = (), *, on_read: Callable[[int], None] | None = None) -> LoadedRuns:
    """Read every file (each once); a file that fails is refused, the others still load.

    The cyclic garbage collector is paused while the files are read: parsing makes hundreds of
    thousands of small containers and no cycle, and the collector's passes over them took most of
    the time (scripts/bench_runs.py: 4-5x faster from the cache without them), and would walk
    them again on every later full pass. `on_read(n)`: told after each file (n read so far)."""
    out = LoadedRuns(refusals=list(refusals))
    paused = gc.isenabled()
    gc.disable()
    try:
        for n, run in enumerate(files, 1):
            value, reason, cached = read_run(reader, run.path, cache)
            out.from_cache += cached
            if on_read is not None:
                on_read(n)
            if reason is not None:
                out.refusals.append(Refusal(str(run.path), reason))
                continue
            out.runs[run.name] = value
            out.files[run.name] = str(run.path)
    finally:
        # what was read lives as long as the page: moved out of the collector's sight, so its
        # later passes do not walk it again (refcounting still frees it once it is dropped)
        gc.freeze()
        if paused:
            gc.enable()
    return out


def collect(reader: RunReader, defaults: Iterable[str | Path] = (), named: Iterable[str | Path] = (),
            cache: ContentCache | None = None, *, empty_ok: bool = False) -> LoadedRuns:
    files, refusals = find_run_files(reader, defaults, named, empty_ok=empty_ok)
    return load_runs(reader, files, cache, refusals)


class BackgroundRuns:
    """`collect` on a daemon thread, started once; readers ask `ready()` / `result()` and never
    wait unless they choose to (`wait`). The thread runs at a lower CPU priority where the OS
    allows it, so a page being served keeps the cores it needs."""

    def __init__(self, load: Callable[[], LoadedRuns]):
        self._load = load
        self._done = threading.Event()
        self._result: LoadedRuns | None = None
        self._error: str | None = None
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def start(self) -> BackgroundRuns:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="runs-loader", daemon=True)
                self._thread.start()
        return self

    def _run(self) -> None:
        try:
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)
        except (AttributeError, OSError):
            pass
        try:
            self._result = self._load()
        except Exception as exc:  # noqa: BLE001 - shown on the tab's message line, never raised into a page
            self._error = f"run files could not be listed: {exc}"
        finally:
            self._done.set()

    def ready(self) -> bool:
        return self._done.is_set()

    def wait(self, timeout: float | None = None) -> LoadedRuns | None:
        self.start()
        self._done.wait(timeout)
        return self.result()

    def result(self) -> LoadedRuns | None:
        """The loaded runs once ready (None while loading; an empty set after a listing error)."""
        if not self._done.is_set():
            return None
        return self._result if self._result is not None else LoadedRuns()

    def status_line(self) -> str:
        if not self._done.is_set():
            return "reading the run files…"
        if self._error:
            return self._error
        return self.result().status_line()


class RunsLoader:
    """A tab's run files (its runs folders and the named ones, `--runs`) read once on a background
    thread: `files` is how many were found (None until listed), `read` how many of them are read
    so far (a panel's "Reading run files… 12 of 30"), `result()` the loaded runs (None while
    reading). `finish` builds what the tab draws from them, on the same thread (the Cloze
    table and its Human row); `derived(key, build)` keeps one view built from them per key (an
    annotation file)."""

    def __init__(self, reader: RunReader, folders: Iterable[str | Path], named: Sequence[str] = (),
                 finish: Callable[[LoadedRuns], LoadedRuns] | None = None):
        self.files: int | None = None
        self.read = 0
        self.listing: tuple | None = None
        self._reader, self._folders, self._named, self._finish = reader, list(folders), tuple(named), finish
        self._derived: tuple[Any, Any] | None = None
        self._background = BackgroundRuns(self._load).start()

    def _list(self) -> tuple[list[RunFile], list[Refusal]]:
        return find_run_files(self._reader, self._folders, named_runs_folders(self._named), empty_ok=True)

    def _load(self) -> LoadedRuns:
        started, cpu = time.perf_counter(), time.thread_time()
        files, refusals = self._list()
        self.files = len(files)
        self.listing = _listing(files)
        loaded = load_runs(self._reader, files, ContentCache(), refusals, on_read=self._count)
        out = self._finish(loaded) if self._finish else loaded
        # a server's one line that its runs are ready (WARNING: the level Python prints unconfigured)
        log.warning("%s runs ready: %d run file(s) read (%d from the cache), %d refused, in %.1f s "
                    "(%.1f s CPU)", self._reader.kind, len(out.runs), out.from_cache, len(out.refusals),
                    time.perf_counter() - started, time.thread_time() - cpu)
        return out

    def _count(self, n: int) -> None:
        self.read = n

    def changed(self) -> bool:
        """Whether the folders' run files differ now (added, removed, rewritten) from the ones
        read; False while reading."""
        if not self._background.ready() or self.listing is None:
            return False
        try:
            return _listing(self._list()[0]) != self.listing
        except Exception:  # noqa: BLE001 - a folder that cannot be listed now keeps what was read
            return False

    def result(self) -> LoadedRuns | None:
        return self._background.result()

    def wait(self, timeout: float | None = None) -> LoadedRuns | None:
        return self._background.wait(timeout)

    def derived(self, key: Any, build: Callable[[LoadedRuns], Any]) -> Any:
        """`build(loaded runs)` for `key`, kept until another key is asked; None while loading."""
        loaded = self.result()
        if loaded is None:
            return None
        if self._derived is None or self._derived[0] is not key:
            self._derived = (key, build(loaded))
        return self._derived[1]


def reading_line(loader: RunsLoader) -> str:
    """What a runs panel says while its loader reads: "Reading run files… 12 of 30" (the count
    grows as the files are read; "Listing the run files…" before they are found)."""
    if loader.files is None:
        return "Listing the run files…"
    return f"Reading run files… {min(loader.read, loader.files)} of {loader.files}"


def _listing(files: Sequence[RunFile]) -> tuple:
    """What identifies the files read: name, path, size and time of each (a Hub file: its path)."""
    out = []
    for f in files:
        try:
            st = os.stat(f.path)
            out.append((f.name, str(f.path), st.st_size, st.st_mtime_ns))
        except OSError:
            out.append((f.name, str(f.path), None, None))
    return tuple(out)


#: the loaders by (tab, data folder, named folders, APP_RUNS_DIR): a handful per process
_LOADERS: SingleFlightLRU[tuple, RunsLoader] = SingleFlightLRU(32)


def runs_loader(kind: str, data_dir: str | Path | None, named: Sequence[str],
                make: Callable[[], RunsLoader], *, recheck: bool = False) -> RunsLoader:
    """The one loader of a tab's (`kind`) runs for these folders in this process, made (and
    started) by `make` on first use; `recheck`: made again when its files changed since they were
    read (the leaderboard's Refresh: a run written since is listed). APP_RUNS_DIR is part of the
    key: another value names other folders."""
    key = (kind, str(data_dir), tuple(named), os.environ.get(RUNS_ENV, ""))
    loader = _LOADERS.peek(key)
    if loader is not None and recheck and loader.changed():
        _LOADERS.pop(key, only=loader)
    return _LOADERS.get(key, make)


def forget_runs_loaders() -> None:
    """Read the runs again on next use (tests; folders whose run files changed)."""
    _LOADERS.clear()


# -- the --items table ---------------------------------------------------------------------------
@dataclass(frozen=True)
class ItemRow:
    """One (run, item) row of `eval --items`: `score` is the item's share of the score `eval`
    prints (correct 1/0, IoU, AP@0.3, F1 as fractions; the mean of the column x 100 is the score;
    None where the eval leaves the item out)."""
    run: str
    item: str
    answer: str
    score: float | None
    metric: str
    source: str

    def as_dict(self) -> dict:
        return {"run": self.run, "item": self.item, "answer": self.answer, "score": self.score,
                "metric": self.metric, "source": self.source}


def write_item_rows(path: str | Path, rows: Iterable[ItemRow]) -> int:
    """`rows` as CSV (`.csv`) or JSON lines (any other suffix, e.g. `.jsonl`), written atomically."""
    path = Path(path)
    rows = list(rows)
    if path.suffix.lower() == ".csv":
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=ITEM_COLUMNS, lineterminator="\n")
        writer.writeheader()
        for row in rows:
            d = row.as_dict()
            writer.writerow({**d, "score": "" if d["score"] is None else repr(d["score"])})
        data = buf.getvalue()
    else:
        data = "".join(json.dumps(r.as_dict(), ensure_ascii=False) + "\n" for r in rows)
    atomic_write_bytes(path, data.encode("utf-8"))
    return len(rows)


def add_items_option(parser, unit: str) -> None:
    """`--items OUT.csv|OUT.jsonl` and the positional RUN files of an eval subcommand."""
    parser.add_argument("--items", type=Path, default=None, metavar="OUT",
                        help=f"also write one row per (run, {unit}) to OUT (.csv, else JSON lines): "
                             "run, item, answer, score, metric, source; the mean score of a run's "
                             "rows x 100 is the score printed")
    parser.add_argument("runs", nargs="*", type=Path, default=[], metavar="RUN",
                        help="with --items: more runs (files, or folders of run files), each its "
                             "own run in the table")


def extra_runs(reader: RunReader, paths: Sequence[Path], items: Path | None) -> LoadedRuns:
    """The positional RUN files of an eval: read without the cache; a refused file is named on
    stderr (the table holds the others)."""
    if paths and items is None:
        raise UserError("RUN files are only read with --items OUT (one row per run and item).")
    if not paths:
        return LoadedRuns()
    loaded = collect(reader, named=paths)
    for refusal in loaded.refusals:
        print(refusal.line(), file=sys.stderr)
    return loaded


def with_scored(name: str, value: Any, others: Mapping[str, Any], files: Mapping[str, str]) -> dict[str, Any]:
    """{name: value} and the other runs; another run of the same name is told apart by its
    folder (then a number), so no run's rows replace another's."""
    runs = {name: value}
    for other, v in others.items():
        key, n = other, 2
        if key in runs:
            key = f"{other} ({Path(files.get(other, '')).parent.name or 'RUN'})"
        while key in runs:
            key, n = f"{other} ({n})", n + 1
        runs[key] = v
    return runs


def run_name(paths: Sequence[Path], reader: RunReader | None = None) -> str:
    """The name of the run an eval scores: its file's (a folder's name when it was given a folder
    or several shards)."""
    if len(paths) == 1:
        p = Path(paths[0])
        return p.name if p.is_dir() else (reader.name(p) if reader else p.stem)
    return os.path.commonpath([str(Path(p).resolve()) for p in paths]).rsplit(os.sep, 1)[-1] or "run"
