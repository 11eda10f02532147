"""Answers calls from a recorded trace; a call that is not in the trace fails clearly."""
from __future__ import annotations

import json
import threading
from collections import defaultdict
from pathlib import Path

from backends.base import GenerationRequest, GenerationResult, Usage, VLMBackend
from backends.config import ApiSettings
from backends.errors import BackendError, ReplayMissError
from backends.trace_format import describe_call, hashed_messages, trace_key


class ReplayBackend(VLMBackend):
    """`replay:<trace.jsonl>`. Identical calls recorded several times (e.g. sampled retries) are
    answered in recorded order; after the last, the last answer repeats."""

    kind = "replay"

    def __init__(self, trace_path: str | Path):
        self.trace_path = Path(trace_path).expanduser()
        if not self.trace_path.is_file():
            raise BackendError(f"Replay trace {self.trace_path} does not exist; record one with a "
                               "live backend first (--record-to) or check the path.")
        self._next: dict[str, int] = defaultdict(int)
        self._lock = threading.Lock()
        self._stamp = self._file_stamp()  # before reading: a change during the read shows later
        self._entries, self._backends = self._read()

    @classmethod
    def from_spec(cls, arg: str, api: ApiSettings) -> ReplayBackend:
        return cls(arg)

    def _read(self) -> tuple[dict[str, list[dict]], list[str]]:
        entries: dict[str, list[dict]] = defaultdict(list)
        backends: list[str] = []
        with open(self.trace_path, encoding="utf-8", errors="replace") as fh:  # garbage -> BackendError below
            for number, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    entry = json.loads(line)
                    key = entry["key"]
                    backend = entry["backend"]
                    entry["response"]
                except (json.JSONDecodeError, KeyError, TypeError):
                    raise BackendError(f"Replay trace {self.trace_path.name}, line {number}, is not "
                                       "a trace record (needs key, backend, response).") from None
                entries[key].append(entry)
                if backend not in backends:
                    backends.append(backend)
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
        models = {e["model"] for entries in self._entries.values() for e in entries}
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
            hint = (" The trace has this task and ref with other parameters or frames." if near
                    else "")
            raise ReplayMissError(f"Replay trace {self.trace_path.name} has no answer for this call "
                                  f"({describe_call(request.task, request.ref, request.messages)})."
                                  f"{hint} Record it with a live backend first.")
        usage = entry.get("usage")
        return GenerationResult(text=entry["response"], backend=self.backend_id,
                                model=entry.get("model", ""),
                                latency_s=float(entry.get("latency_s") or 0.0),
                                usage=Usage(**usage) if isinstance(usage, dict) else None,
                                finish_reason=entry.get("finish_reason"))
