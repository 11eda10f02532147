"""The app's trace folder as the Model panel shows it (pure; no gradio): the recorded traces a
session may replay (newest first), what a `replay:<name>` picked in the panel points at, and what
the panel says while recording.

A visitor replays only traces the panel lists, never a typed server path. On a public Space
(SPACE_ID set, APP_ADMIN unset) the list holds the traces the operator put in the folder and the
visitor's own recording, not other visitors' recordings."""
from __future__ import annotations

import os
import re
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from backends.errors import BackendError
from backends.registry import split_spec, VLM_BACKENDS
from backends.trace_format import BACKEND_SELECTOR, read_trace, split_replay_arg
from components.base.admin import admin_mode

#: a web session's recording is `session-<session hash>.jsonl`
SESSION_PREFIX = "session-"
TRACE_SUFFIX = ".jsonl"


def trace_dir() -> Path:
    path = Path(os.environ.get("APP_TRACE_DIR") or Path(tempfile.gettempdir()) / "video-bench-traces")
    path.mkdir(parents=True, exist_ok=True)
    return path


def is_public() -> bool:
    """A Space without the admin setting: one visitor never sees another's recordings."""
    return bool(os.environ.get("SPACE_ID")) and not admin_mode()


def session_trace_name(session: str) -> str:
    safe = re.sub(r"[^A-Za-z0-9_-]", "_", session or "cli")
    return f"{SESSION_PREFIX}{safe}{TRACE_SUFFIX}"


@dataclass(frozen=True)
class TraceEntry:
    name: str
    calls: int
    modified: float  # seconds since the epoch

    @property
    def label(self) -> str:
        when = datetime.fromtimestamp(self.modified, UTC).strftime("%Y-%m-%d %H:%M UTC")
        return f"{self.name} · {self.calls} call(s) · {when}"


def count_calls(path: Path) -> int:
    """Recorded calls in a trace: its non-blank lines (0 when it cannot be read)."""
    try:
        with open(path, "rb") as fh:
            return sum(1 for line in fh if line.strip())
    except OSError:
        return 0


def list_traces(session: str = "") -> list[TraceEntry]:
    """The traces this session may replay, newest first."""
    own = session_trace_name(session) if session else None
    hide_others = is_public()
    entries = []
    for path in trace_dir().glob(f"*{TRACE_SUFFIX}"):
        if not path.is_file():
            continue
        if hide_others and path.name.startswith(SESSION_PREFIX) and path.name != own:
            continue
        try:
            modified = path.stat().st_mtime
        except OSError:
            continue
        entries.append(TraceEntry(path.name, count_calls(path), modified))
    return sorted(entries, key=lambda e: (-e.modified, e.name))


def listed_trace(name: str, session: str = "") -> Path | None:
    """The trace folder's file `name` when this session may replay it, else None."""
    if not name or Path(name).name != name:
        return None
    if any(entry.name == name for entry in list_traces(session)):
        return trace_dir() / name
    return None


def recorded_backends(name: str, session: str = "") -> list[str]:
    """The backend ids a listed trace holds calls of ([] when the trace is not listed or cannot
    be read): a recorded pair offers `replay:<name>#<id>` for each side ("compare with"). The
    side that steered the recorded session ("pair_side": "first") comes first, the side it was
    compared with after it, then in the order first recorded (both sides of a pair answer at
    the same time, so which was written first says nothing)."""
    path = listed_trace(name, session)
    if path is None:
        return []
    try:
        records = read_trace(path)
    except BackendError:
        return []
    sides: dict[str, set[str]] = {}
    for record in records:
        sides.setdefault(record["backend"], set()).add(str(record.get("pair_side") or ""))
    order = {"first": 0, "": 1, "second": 2}
    return sorted(sides, key=lambda backend: min(order.get(side, 1) for side in sides[backend]))


def resolve_replay_spec(spec: str) -> str:
    """`replay:<name>` of a trace in the trace folder -> `replay:<its path>`; anything else as it is
    (a replay path given on the command line stays the server's own choice)."""
    name, _, arg = spec.strip().partition(":")
    arg, selected = split_replay_arg(arg)
    if name.strip().lower() != "replay" or not arg or Path(arg).name != arg:
        return spec
    path = trace_dir() / arg
    selector = f"{BACKEND_SELECTOR}{selected}" if selected else ""
    return f"replay:{path}{selector}" if path.is_file() else spec


def check_panel_spec(spec: str, server_specs: set[str], session: str = "") -> None:
    """A replay spec from the Model panel must name a listed trace (or be one the server was
    started with); raises BackendError saying what to pick instead."""
    if not spec or spec in server_specs:
        return
    name, arg = split_spec(spec, VLM_BACKENDS)
    arg = split_replay_arg(arg)[0]
    if name != "replay" or listed_trace(arg, session) is not None:
        return
    shown = Path(arg).name or arg
    raise BackendError(f"Replay trace '{shown}' is not one of the recorded traces in the app's "
                       "trace folder: pick one under \"Replay a recorded trace\" (typed server "
                       "paths are not accepted here; on the command line use --backend "
                       "replay:<path>).")


def recording_note(recording: bool, baseline_only: bool, trace_path: str, session: str = "") -> str:
    """What the panel says about recording (markdown; "" when not recording)."""
    if not recording:
        return ""
    if baseline_only:
        return ("**Nothing to record:** the `baseline` backend asks no model, so no trace is "
                "written. Choose a model backend (openai:..., hf:...) and press Apply to record.")
    path = Path(trace_path)
    calls = count_calls(path) if path.is_file() else 0
    public = is_public()  # off a public Space the visitor runs the server: show the folder
    where = "the app's trace folder" if public else f"`{path.parent}`"
    replay_arg = path.name if public else str(path)
    then = ("Download it below, pick it under \"Replay a recorded trace\", or start the app "
            f"offline with `python app.py --backend replay:{replay_arg}`." if calls else
            "The file appears with the first answered call (press Refresh).")
    return (f"**Recording** this session's model calls to `{path.name}` in {where}: "
            f"{calls} call(s) so far. {then}")
