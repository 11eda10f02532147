"""Answers calls from a recorded trace; a call that is not in the trace fails clearly."""
from __future__ import annotations

import threading
from collections import defaultdict
from pathlib import Path

from backends.base import GenerationRequest, GenerationResult, Usage, VLMBackend
from backends.reasoning import join_reasoning, split_reasoning
from backends.config import ApiSettings
from backends.errors import BackendError, ReplayMissError
from backends.trace_format import (BACKEND_SELECTOR, HOW_TO_RECORD, describe_call, hashed_messages,
                                   read_trace, split_replay_arg, trace_key)


class ReplayBackend(VLMBackend):
    """`replay:<trace.jsonl>`, or `replay:<trace.jsonl>#<backend id>` to answer only with the
    calls that backend recorded (each side of a recorded pair, "compare with"). Identical calls
    recorded several times (e.g. sampled retries) are answered in recorded order; after the last,
    the last answer repeats."""

    kind = "replay"

    def __init__(self, trace_path: str | Path, backend: str = ""):
        self.trace_path = Path(trace_path).expanduser()
        self.selected = backend.strip()
        self._next: dict[str, int] = defaultdict(int)
        self._lock = threading.Lock()
        self._stamp = self._file_stamp()  # before reading: a change during the read shows later
        self._entries, self._backends = self._read()
        if self.selected and self.selected not in self._backends:
            raise BackendError(f"Replay trace '{self.trace_path.name}' holds no calls of "
                               f"'{self.selected}'; it holds {', '.join(self._backends)}.")

    @classmethod
    def from_spec(cls, arg: str, api: ApiSettings) -> ReplayBackend:
        path, backend = split_replay_arg(arg)
        return cls(path, backend)

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
        selected = f"{BACKEND_SELECTOR}{self.selected}" if self.selected else ""
        return f"replay:{self.trace_path.name}{selected}"

    @property
    def model(self) -> str:
        models = {e.get("model") for entries in self._entries.values() for e in entries
                  if not self.selected or e.get("backend") == self.selected} - {None, ""}
        return models.pop() if len(models) == 1 else self.trace_path.name

    def _answering(self) -> list[str]:
        """The recorded backends whose calls may answer (the selected one, else all in order)."""
        return [self.selected] if self.selected else list(self._backends)

    def __len__(self) -> int:
        return sum(len(v) for v in self._entries.values())

    def _find(self, request: GenerationRequest) -> dict | None:
        self._refresh()
        messages = hashed_messages(request.messages)
        for params in recorded_params(request.params.as_dict()):
            for backend in self._answering():
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
        # a trace recorded before reasoning had its own field holds any <think> block in the
        # response: it is split off the same way a live backend splits it
        answer, inline = split_reasoning(entry["response"])
        recorded = entry.get("reasoning")
        return GenerationResult(text=answer, backend=self.backend_id,
                                model=entry.get("model", ""),
                                latency_s=float(entry.get("latency_s") or 0.0),
                                usage=Usage.from_dict(entry.get("usage")),
                                finish_reason=entry.get("finish_reason"),
                                reasoning=join_reasoning(recorded if isinstance(recorded, str) else "",
                                                         inline))


def recorded_params(params: dict) -> list[dict]:
    """The parameters a call may have been recorded with: its own, then (for a request that no
    longer sends top_p, as TempCloze's released evaluator sends none) the top_p 1.0 every request
    carried before, so older traces still replay. At temperature 0 top_p selects nothing."""
    if "top_p" in params or params.get("temperature") != 0:
        return [params]
    return [params, {**params, "top_p": 1.0}]
