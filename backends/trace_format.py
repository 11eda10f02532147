"""The model-trace format shared by record and replay (docs/formats.md, "Model traces").

A trace is JSONL, one line per answered model call. Images are stored once beside the trace, in
`<trace stem>_images/<sha256>.png`, and named in messages as {"sha256", "path"}. The sha256 is over
the decoded pixels (mode, size and raw RGB bytes), so a frame decoded again from the PNG, or
re-sampled from the same video, hashes the same as when it was recorded. An already encoded image
(`backends.base.EncodedImage`, sent to an API as its own bytes) is stored as those bytes,
`<sha256>.<ext of its mime>`, and its sha256 is over those bytes (the file hashes to its name).
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING
from collections.abc import Callable

from backends.base import EncodedImage, Message

if TYPE_CHECKING:
    from PIL import Image

#: file extensions of the encoded images a trace stores
_EXTENSIONS = {"image/jpeg": "jpg", "image/jpg": "jpg", "image/png": "png", "image/webp": "webp",
               "image/gif": "gif"}

#: bump when the key recipe changes, so old traces miss instead of answering wrongly
KEY_VERSION = 1


def image_sha256(image: Image.Image | EncodedImage) -> str:
    """Over the decoded pixels of a picture; over the bytes of an EncodedImage."""
    if isinstance(image, EncodedImage):
        return hashlib.sha256(image.data).hexdigest()
    rgb = image.convert("RGB")
    digest = hashlib.sha256(f"RGB {rgb.width}x{rgb.height}\n".encode())
    digest.update(rgb.tobytes())
    return digest.hexdigest()


def images_dir(trace_path: Path) -> Path:
    trace_path = Path(trace_path)
    return trace_path.parent / f"{trace_path.stem}_images"


def image_extension(image: Image.Image | EncodedImage) -> str:
    """How a stored image's file name ends: "png" for pictures, the mime's for encoded bytes."""
    if isinstance(image, EncodedImage):
        return _EXTENSIONS.get(image.mime.lower(), "bin")
    return "png"


def image_relpath(trace_path: Path, sha: str, ext: str = "png") -> str:
    """Path of an image relative to the trace's folder (keeps the trace folder movable)."""
    return f"{images_dir(trace_path).name}/{sha}.{ext}"


def encode_messages(messages: list[Message],
                    image_entry: Callable[[Image.Image | EncodedImage], dict]) -> list[dict]:
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


def describe_call(task: str, ref: str, messages: list[Message]) -> str:
    """Short, human description of a call: task, ref, number of images, start of the text."""
    num_images = sum(m.num_images() for m in messages)
    # the user's words tell calls apart; the system prompt is usually the same for all of them
    chosen = [m for m in messages if m.role == "user"] or messages
    text = " ".join(p for m in chosen for p in m.content if isinstance(p, str))
    text = " ".join(text.split())
    return (f"task={task or '-'}, ref={ref or '-'}, {num_images} image(s), "
            f"text starting {text[:80]!r}")
