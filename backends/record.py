"""Records every answered call of a backend to a trace (docs/formats.md, "Model traces").

The wrapper knows nothing of the backend inside it; the backend knows nothing of the trace.
Failed calls (results with `error`) are not written: a trace holds answers only.
"""
from __future__ import annotations

from datetime import datetime, UTC
from pathlib import Path

from backends.base import EncodedImage, GenerationRequest, GenerationResult, VLMBackend
from backends.shared import is_shared
from backends.trace_format import (encode_messages, image_extension, image_relpath, image_sha256,
                                   images_dir, trace_key)
from components.base.io import append_jsonl, atomic_write, atomic_write_bytes


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
        sha, ext = image_sha256(image), image_extension(image)
        target = images_dir(self.trace_path) / f"{sha}.{ext}"
        if not target.exists():  # stored once: the name is the pixels' (or the bytes') hash
            if isinstance(image, EncodedImage):
                atomic_write_bytes(target, image.data)
            else:
                rgb = image.convert("RGB")
                atomic_write(target, lambda fh: rgb.save(fh, format="PNG"))
        entry = {"sha256": sha, "path": image_relpath(self.trace_path, sha, ext)}
        if isinstance(image, EncodedImage):
            entry["mime"] = image.mime
        return entry

    def generate(self, request: GenerationRequest) -> GenerationResult:
        result = self.inner.generate(request)
        if result.ok:
            self._append(request, result)
        return result

    def _append(self, request: GenerationRequest, result: GenerationResult) -> None:
        params = request.params.as_dict()
        messages = encode_messages(request.messages, self._save_image)
        record = {
            "key": trace_key(self.backend_id, params, messages),
            "backend": self.backend_id, "model": result.model, "params": params,
            "messages": messages, "response": result.text, "latency_s": round(result.latency_s, 4),
            "usage": result.usage.as_dict() if result.usage else None,
            "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "task": request.task, "ref": request.ref, "attempt": request.attempt,
            "finish_reason": result.finish_reason,
        }
        if result.reasoning:  # its own field: `response` is the answer alone
            record["reasoning"] = result.reasoning
        if request.pair:  # the two calls of one request sent to two backends share it
            record["pair"] = request.pair
            if request.pair_side:  # which side steered (a replayed pair puts it first again)
                record["pair_side"] = request.pair_side
        append_jsonl(self.trace_path, record)

    def close(self) -> None:
        if not is_shared(self.inner):  # a local model's weights stay loaded for every session
            self.inner.close()
