"""The model-trace format shared by record and replay (reference/formats.md, "Model traces").

A trace is JSONL, one line per answered model call. Images are stored once beside the trace, in
`<trace stem>_images/<sha256>.png`, and named in messages as {"sha256", "path"}. The sha256 is over
the decoded pixels (mode, size and raw RGB bytes), so a frame decoded again from the PNG, or
re-sampled from the same video, hashes the same as when it was recorded.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING
from collections.abc import Callable

from backends.base import GenerationParams, Message

if TYPE_CHECKING:
    from PIL import Image

#: bump when the key recipe changes, so old traces miss instead of answering wrongly
KEY_VERSION = 1


def image_sha256(image: Image.Image) -> str:
    rgb = image.convert("RGB")
    digest = hashlib.sha256(f"RGB {rgb.width}x{rgb.height}\n".encode())
    digest.update(rgb.tobytes())
    return digest.hexdigest()


def images_dir(trace_path: Path) -> Path:
    trace_path = Path(trace_path)
    return trace_path.parent / f"{trace_path.stem}_images"


def image_relpath(trace_path: Path, sha: str) -> str:
    """Path of an image relative to the trace's folder (keeps the trace folder movable)."""
    return f"{images_dir(trace_path).name}/{sha}.png"


def encode_messages(messages: list[Message],
                    image_entry: Callable[[Image.Image], dict]) -> list[dict]:
    """Messages as JSON: text parts {"type": "text", "text"}, images {"type": "image", **entry}."""
    out = []
    for message in messages:
        parts = []
        for part in message.content:
            if isinstance(part, str):
                parts.append({"type": "text", "text": part})
            else:
                parts.append({"type": "image", **image_entry(part)})
        out.append({"role": message.role, "content": parts})
    return out


def hashed_messages(messages: list[Message]) -> list[dict]:
    return encode_messages(messages, lambda image: {"sha256": image_sha256(image)})


def trace_key(backend_id: str, params: dict, messages: list[dict]) -> str:
    """sha256 over backend id, parameters and messages (images by pixel hash only)."""
    canonical = [{"role": m["role"], "content": [
        {"type": "text", "text": p["text"]} if p["type"] == "text"
        else {"type": "image", "sha256": p["sha256"]} for p in m["content"]]} for m in messages]
    payload = json.dumps({"v": KEY_VERSION, "backend": backend_id, "params": params,
                          "messages": canonical}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def request_key(backend_id: str, params: GenerationParams, messages: list[Message]) -> str:
    return trace_key(backend_id, params.as_dict(), hashed_messages(messages))


def describe_call(task: str, ref: str, messages: list[Message]) -> str:
    """Short, human description of a call: task, ref, number of images, start of the text."""
    num_images = sum(m.num_images() for m in messages)
    # the user's words tell calls apart; the system prompt is usually the same for all of them
    chosen = [m for m in messages if m.role == "user"] or messages
    text = " ".join(p for m in chosen for p in m.content if isinstance(p, str))
    text = " ".join(text.split())
    return (f"task={task or '-'}, ref={ref or '-'}, {num_images} image(s), "
            f"text starting {text[:80]!r}")
