"""Records every answered call of a backend to a trace (reference/formats.md, "Model traces").

The wrapper knows nothing of the backend inside it; the backend knows nothing of the trace.
Failed calls (results with `error`) are not written: a trace holds answers only.
"""
from __future__ import annotations

import json
import os
import threading
from datetime import datetime, timezone
from pathlib import Path

from backends.base import GenerationRequest, GenerationResult, VLMBackend
from backends.trace_format import encode_messages, image_relpath, image_sha256, images_dir, trace_key

_file_locks: dict[str, threading.Lock] = {}
_file_locks_guard = threading.Lock()


def _lock_for(path: Path) -> threading.Lock:
    with _file_locks_guard:
        return _file_locks.setdefault(str(path.resolve()), threading.Lock())


class RecordingBackend(VLMBackend):
    def __init__(self, inner: VLMBackend, trace_path: str | Path):
        self.inner = inner
        self.trace_path = Path(trace_path)
        self.kind = inner.kind
        self.max_images = inner.max_images

    @property
    def backend_id(self) -> str:
        return self.inner.backend_id

    @property
    def model(self) -> str:
        return self.inner.model

    @property
    def is_baseline(self) -> bool:
        return self.inner.is_baseline

    def _save_image(self, image) -> dict:
        sha = image_sha256(image)
        target = images_dir(self.trace_path) / f"{sha}.png"
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_name(f".{sha}.{threading.get_ident()}.tmp")
            image.convert("RGB").save(tmp, format="PNG")
            os.replace(tmp, target)
        return {"sha256": sha, "path": image_relpath(self.trace_path, sha)}

    def generate(self, request: GenerationRequest) -> GenerationResult:
        result = self.inner.generate(request)
        if result.ok:
            self._append(request, result)
        return result

    def _append(self, request: GenerationRequest, result: GenerationResult) -> None:
        params = request.params.as_dict()
        messages = encode_messages(request.messages, self._save_image)
        usage = result.usage
        record = {
            "key": trace_key(self.backend_id, params, messages),
            "backend": self.backend_id, "model": result.model, "params": params,
            "messages": messages, "response": result.text, "latency_s": round(result.latency_s, 4),
            "usage": {"prompt_tokens": usage.prompt_tokens,
                      "completion_tokens": usage.completion_tokens} if usage else None,
            "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "task": request.task, "ref": request.ref, "attempt": request.attempt,
        }
        line = json.dumps(record, ensure_ascii=False) + "\n"
        self.trace_path.parent.mkdir(parents=True, exist_ok=True)
        with _lock_for(self.trace_path), open(self.trace_path, "a", encoding="utf-8") as fh:
            fh.write(line)
            fh.flush()
            os.fsync(fh.fileno())

    def close(self) -> None:
        self.inner.close()
