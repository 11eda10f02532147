"""The model-trace format shared by record and replay (docs/formats.md, "Model traces").

A trace is JSONL, one line per answered model call. Images are stored once beside the trace, in
`<trace stem>_images/<sha256>.png`, and named in messages as {"sha256", "path"}. The sha256 is over
the decoded pixels (mode, size and raw RGB bytes), so a frame decoded again from the PNG, or
re-sampled from the same video, hashes the same as when it was recorded. An already encoded image
(`backends.base.EncodedImage`, sent to an API as its own bytes) is stored as those bytes,
`<sha256>.<ext of its mime>`, and its sha256 is over those bytes (the file hashes to its name).

Nothing in a trace names a media file by an absolute path: image paths are relative to the
trace's folder, and a call is keyed by its pixels, so a trace recorded in one working directory
(or on one machine) replays from any other. Replay never opens the images, so old traces whose
image paths were absolute replay too.
"""
from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING
from collections.abc import Callable

from backends.base import EncodedImage, Message
from backends.errors import BackendError

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


#: separates a trace from the one recorded backend to replay: `replay:<trace>#<backend id>`
BACKEND_SELECTOR = "#"


def split_replay_arg(arg: str) -> tuple[str, str]:
    """(trace path, recorded backend id or '') of a replay spec's argument."""
    path, _, backend = arg.partition(BACKEND_SELECTOR)
    return path.strip(), backend.strip()


#: what every trace line holds (docs/formats.md, "Model traces")
REQUIRED_KEYS = ("key", "backend", "response")
#: how to make a trace, for messages about a missing or unusable one
HOW_TO_RECORD = ("record one with a live backend: `--record <trace.jsonl>` on the command line, or "
                 "the Model panel's \"Record this session's model calls\" switch")
#: an absolute path (POSIX or Windows) standing alone, not a URL's or a date's slashes
_ABSOLUTE_PATH = re.compile(r"(?<![\w.:/\\])(?:[A-Za-z]:)?[/\\](?:[^\s/\\'\"]+[/\\])+([^\s/\\'\"]+)")


def without_folders(text: str) -> str:
    """Absolute paths in `text` cut to their file names (a server's folders are never shown)."""
    return _ABSOLUTE_PATH.sub(r"\1", text)


def read_trace(path: str | Path) -> list[dict]:
    """Every record of the trace at `path`, or BackendError naming the file (never its folder) and
    what is wrong with it: missing, a folder, unreadable, empty, not JSONL, or lines that are not
    recorded calls."""
    path = Path(path)
    name = f"Replay trace '{path.name}'"
    if not path.exists():
        raise BackendError(f"{name} does not exist; {HOW_TO_RECORD}, or check the name.")
    if path.is_dir():
        raise BackendError(f"{name} is a folder, not a trace file (JSONL, one recorded call per line).")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise BackendError(f"{name} is not a text file; a trace is JSONL, one recorded call per "
                           "line.") from None
    except OSError:
        raise BackendError(f"{name} cannot be read (check its permissions).") from None
    lines = [(number, line) for number, line in enumerate(text.splitlines(), 1) if line.strip()]
    if not lines:
        raise BackendError(f"{name} is empty: it holds no recorded model call; {HOW_TO_RECORD}.")
    records = []
    for number, line in lines:
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            if number == lines[0][0] and _is_one_document(text):
                raise BackendError(f"{name} is a single JSON document, not a trace: a trace is "
                                   "JSONL, one recorded model call per line.") from None
            raise BackendError(f"{name}, line {number}, is not JSON: a trace is JSONL, one "
                               "recorded model call per line.") from None
        missing = [k for k in REQUIRED_KEYS if not isinstance(record, dict) or k not in record]
        if missing or not all(isinstance(record[k], str) for k in REQUIRED_KEYS):
            lacks = ", ".join(f"'{k}'" for k in (missing or REQUIRED_KEYS))
            raise BackendError(f"{name}, line {number}, is not a trace record: it lacks {lacks} "
                               "as text (a trace line holds one recorded model call: key, "
                               "backend, response).")
        records.append(record)
    return records


def _is_one_document(text: str) -> bool:
    try:
        json.loads(text)
    except json.JSONDecodeError:
        return False
    return True


def describe_call(task: str, ref: str, messages: list[Message]) -> str:
    """Short, human description of a call: task, ref, number of images, start of the text."""
    num_images = sum(m.num_images() for m in messages)
    # the user's words tell calls apart; the system prompt is usually the same for all of them
    chosen = [m for m in messages if m.role == "user"] or messages
    text = " ".join(p for m in chosen for p in m.content if isinstance(p, str))
    text = without_folders(" ".join(text.split()))
    return (f"task={task or '-'}, ref={without_folders(ref) or '-'}, {num_images} image(s), "
            f"text starting {text[:80]!r}")
