"""Answers calls from a recorded trace; a call that is not in the trace fails clearly."""
from __future__ import annotations

import threading
from collections import defaultdict
from pathlib import Path

from backends.base import GenerationRequest, GenerationResult, Usage, VLMBackend
from backends.config import ApiSettings
from backends.errors import BackendError, ReplayMissError
from backends.trace_format import HOW_TO_RECORD, describe_call, hashed_messages, read_trace, trace_key


class ReplayBackend(VLMBackend):
    """`replay:<trace.jsonl>`. Identical calls recorded several times (e.g. sampled retries) are
    answered in recorded order; after the last, the last answer repeats."""

    kind = "replay"

    def __init__(self, trace_path: str | Path):
        self.trace_path = Path(trace_path).expanduser()
        self._next: dict[str, int] = defaultdict(int)
        self._lock = threading.Lock()
        self._stamp = self._file_stamp()  # before reading: a change during the read shows later
        self._entries, self._backends = self._read()

    @classmethod
    def from_spec(cls, arg: str, api: ApiSettings) -> ReplayBackend:
        return cls(arg)

    def _read(self) -> tuple[dict[str, list[dict]], list[str]]:
        """The trace's answers by key, and its backend ids (BackendError naming the file and what
        is wrong with it: a bad trace is refused when the backend is built, not at first use)."""
        entries: dict[str, list[dict]] = defaultdict(list)
        backends: list[str] = []
        for entry in read_trace(self.trace_path):
            entries[entry["key"]].append(entry)
            if entry["backend"] not in backends:
                backends.append(entry["backend"])
        return entries, backends

    def _file_stamp(self) -> tuple[int, int] | None:
        try:
            stat = self.trace_path.stat()
        except OSError:
            return None
        return stat.st_size, stat.st_mtime_ns

    def _refresh(self) -> None:
        """Read the trace again when it changed since (a session recording to it meanwhile); the
        recorded-order positions are kept. A trace caught mid-write keeps the answers read before."""
        stamp = self._file_stamp()
        if stamp is None or stamp == self._stamp:
            return
        try:
            entries, backends = self._read()
        except (OSError, BackendError):
            return
        with self._lock:
            self._entries, self._backends, self._stamp = entries, backends, stamp

    @property
    def backend_id(self) -> str:
        return f"replay:{self.trace_path.name}"

    @property
    def model(self) -> str:
        models = {e.get("model") for entries in self._entries.values() for e in entries} - {None, ""}
        return models.pop() if len(models) == 1 else self.trace_path.name

    def __len__(self) -> int:
        return sum(len(v) for v in self._entries.values())

    def _find(self, request: GenerationRequest) -> dict | None:
        self._refresh()
        params = request.params.as_dict()
        messages = hashed_messages(request.messages)
        for backend in self._backends:
            key = trace_key(backend, params, messages)
            with self._lock:
                entries = self._entries.get(key)
                if entries:
                    index = min(self._next[key], len(entries) - 1)
                    self._next[key] += 1
                    return entries[index]
        return None

    def generate(self, request: GenerationRequest) -> GenerationResult:
        entry = self._find(request)
        if entry is None:
            near = [e for es in self._entries.values() for e in es
                    if request.ref and e.get("ref") == request.ref and e.get("task") == request.task]
            hint = (" The trace has this task and ref with other parameters or frames (the "
                    "settings or the data changed since it was recorded)." if near else "")
            raise ReplayMissError(f"Replay trace '{self.trace_path.name}' has no answer for this "
                                  f"call ({describe_call(request.task, request.ref, request.messages)})."
                                  f"{hint} To answer it offline, {HOW_TO_RECORD}, and make this "
                                  "same call while recording.")
        usage = entry.get("usage")
        return GenerationResult(text=entry["response"], backend=self.backend_id,
                                model=entry.get("model", ""),
                                latency_s=float(entry.get("latency_s") or 0.0),
                                usage=Usage(**usage) if isinstance(usage, dict) else None,
                                finish_reason=entry.get("finish_reason"))
