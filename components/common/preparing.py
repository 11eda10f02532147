"""Getting the served data ready while the server already answers: each part (a tab's data folder,
named by its row in the tab registry, components/base/tabs.py) is found on disk, opened from a dataset repository, or generated from the examples in
the background, one part at a time, in a child process at a lower priority (the drawing holds
the GIL; the server's requests must not wait for it). A tab asks `status(part)` when its page
loads, and polls it while the part is not ready.

    preparation = start("data", examples=True)   # returns at once; app.py serves preparation.root
    status("cloze")  # PartStatus(part="cloze", state="building", fraction=0.42, message=..., ...)

A part with data on disk is never generated again (a Space restart reuses it); a part being
generated appears in the data folder only when complete (examples/generate.py builds it aside).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from components import datasource
from components.base import tabs as registry
from components.base.errors import UserError

READY, BUILDING, QUEUED, OPENING, FAILED, ABSENT = "ready", "building", "queued", "opening", "failed", "absent"
ROOT = Path(__file__).resolve().parents[2]


def parts() -> tuple[str, ...]:
    """The parts: every tab's data folder, in tab order."""
    return registry.data_folders()


def build_order() -> tuple[str, ...]:
    """The order parts are generated in: the first tab's (the page opens on it), then the quickest
    first (each row's `example_seconds`, measured on 2 cores)."""
    specs = registry.tabs()
    return (specs[0].data, *(s.data for s in sorted(specs[1:], key=lambda s: s.example_seconds)))


def _label(part: str) -> str:
    return registry.tab(part).title


@dataclass(frozen=True)
class PartStatus:
    """Where a part's data stands, in a form a tab shows as it is."""

    part: str            # a tab's data folder (its registry row's `data`)
    state: str           # ready | building | queued | opening | failed | absent
    fraction: float      # 0..1 of the part's preparation (1.0 when ready)
    message: str         # one line for the tab ("" when ready)
    source: str          # "examples", "folder", or the repository (hf://...@<commit>); "" unknown yet

    @property
    def ready(self) -> bool:
        return self.state == READY

    @property
    def waiting(self) -> bool:
        """Still changing: worth polling again."""
        return self.state in (BUILDING, QUEUED, OPENING)


def has_data(root: Path, part: str) -> bool:
    """Whether `root/<part>` holds that tab's data: any one of its row's `holds` (asked through
    the data source, so a mounted repository answers from its listing)."""
    base = Path(root) / part
    return any(_holds(base, entry) for entry in registry.tab(part).holds)


def _holds(base: Path, entry: str) -> bool:
    if entry.startswith("*/"):
        return any(_holds(sub, entry[2:]) for sub in datasource.subfolders(base))
    if entry.endswith("/"):
        return datasource.is_dir(base / entry.rstrip("/"))
    return datasource.is_file(base / entry)


def _is_complete(root: Path, part: str) -> bool:
    return (Path(root) / part / ".complete").exists()


def generator_command(part: str, root: Path, progress_file: Path) -> list[str]:
    """The child process that builds one example part (examples/generate.py)."""
    return [sys.executable, "-m", "examples.generate", "--out", str(root), "--only", part,
            "--progress-file", str(progress_file)]


class Preparation:
    """One data folder made ready in the background (see the module docstring)."""

    def __init__(self, data: str | Path, *, examples: bool,
                 command: Callable[[str, Path, Path], list[str]] | None = None) -> None:
        self.spec = str(data).strip() if datasource.is_hub_spec(data) else None
        self.root = datasource.mirror_dir(datasource.parse_spec(self.spec)) if self.spec else Path(data)
        self.examples = examples
        self._command = command or generator_command
        self._lock = threading.Lock()
        self._states: dict[str, PartStatus] = {}
        self._progress_dir = Path(tempfile.mkdtemp(prefix="prepare-"))
        self._thread: threading.Thread | None = None
        self._child: subprocess.Popen | None = None
        self._stopped = threading.Event()
        self._source = self.spec or ""
        for part in parts():
            self._set(part, OPENING if self.spec else QUEUED, 0.0,
                      f"Opening {self.spec} (its files are listed once) ..." if self.spec else "", self._source)

    # -- state ------------------------------------------------------------------------------------
    def _set(self, part: str, state: str, fraction: float, message: str, source: str) -> None:
        with self._lock:
            self._states[part] = PartStatus(part, state, fraction, message, source)

    def status(self, part: str) -> PartStatus:
        if part not in parts():
            raise UserError(f"Unknown part {part!r}; one of {', '.join(parts())}.")
        with self._lock:
            current = self._states[part]
        if current.state == BUILDING:
            return PartStatus(part, BUILDING, self._fraction(part), current.message, current.source)
        return current

    def _fraction(self, part: str) -> float:
        try:
            data = json.loads((self._progress_dir / f"{part}.json").read_text(encoding="utf-8"))
            return float(data.get("fraction", 0.0)) if data.get("part") == part else 0.0
        except (OSError, ValueError, AttributeError):
            return 0.0

    # -- work -------------------------------------------------------------------------------------
    def start(self) -> Preparation:
        self._thread = threading.Thread(target=self._run, name="prepare-data", daemon=True)
        self._thread.start()
        return self

    def wait(self, timeout: float | None = None) -> bool:
        """True once nothing is left to do (every part ready, failed or absent)."""
        if self._thread is None:
            return True
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def stop(self) -> None:
        self._stopped.set()
        child = self._child
        if child is not None and child.poll() is None:
            child.terminate()

    def _run(self) -> None:
        if self.spec:
            try:
                opened = datasource.open_repo(self.spec)
            except UserError as exc:
                for part in parts():
                    self._set(part, FAILED, 0.0, str(exc), self.spec)
                return
            self._source = opened.pinned
        todo = []
        for part in parts():
            if has_data(self.root, part):
                source = ("examples" if _is_complete(self.root, part) else
                          (datasource.data_revision(self.root / part) or "folder"))
                self._set(part, READY, 1.0, "", source)
            elif self.examples:
                todo.append(part)
                self._set(part, QUEUED, 0.0, f"The example data for the {_label(part)} tab is waiting to be "
                                             "built (first start; it is kept on disk afterwards).", "examples")
            else:
                where = self.spec or str(self.root)
                self._set(part, ABSENT, 0.0, f"No {_label(part)} data in {where} (expected {part}/ there).", "")
        for part in sorted(todo, key=build_order().index):
            if self._stopped.is_set():
                return
            self._build(part)

    def _build(self, part: str) -> None:
        self._set(part, BUILDING, 0.0, f"Building the example data for the {_label(part)} tab (first "
                                       "start; it is kept on disk afterwards) ...", "examples")
        cmd = self._command(part, self.root, self._progress_dir / f"{part}.json")
        nice = getattr(os, "nice", None)
        try:
            self._child = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL,
                                           preexec_fn=(lambda: nice(10)) if nice else None)
            code = self._child.wait()
        except OSError as exc:
            code, why = -1, str(exc)
        else:
            why = f"exit status {code}"
        if code == 0 and _is_complete(self.root, part):
            self._set(part, READY, 1.0, "", "examples")
        elif not self._stopped.is_set():
            self._set(part, FAILED, self._fraction(part), f"Building the example data for the {_label(part)} "
                      f"tab failed ({why}); the server log says why. Restart to try again.", "examples")


_current: Preparation | None = None
_current_lock = threading.Lock()


def start(data: str | Path, *, examples: bool,
          command: Callable[[str, Path, Path], list[str]] | None = None) -> Preparation:
    """Make `data` (a folder or an `hf://datasets/...` spec) ready in the background, generating
    the example data for parts it lacks when `examples`; returns at once. The folder to serve is
    `.root` (for a repository: its local mirror, which appears as it opens)."""
    global _current
    preparation = Preparation(data, examples=examples, command=command)
    with _current_lock:
        if _current is not None:
            _current.stop()
        _current = preparation
    return preparation.start()


def status(part: str) -> PartStatus:
    """The part's status in the preparation started last; READY when none was started (the data
    folder was given ready-made)."""
    with _current_lock:
        current = _current
    if current is None:
        return PartStatus(part, READY, 1.0, "", "folder")
    return current.status(part)
