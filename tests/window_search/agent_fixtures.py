"""Test support for the window-search agent: a real small video (PyAV), a MovieView and a character
memory over it, and a scripted in-process VLMBackend. The agent, not these, is under test."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Callable

from backends.base import GenerationRequest, GenerationResult, VLMBackend
from components.media import Cue, open_video

DURATION = 240  # seconds; 4 chunks of 60 s
VIDEO_FPS = 2


def write_test_video(path: Path, duration: int = DURATION, fps: int = VIDEO_FPS) -> Path:
    """64x48 H.264, one grey level per second (so a frame's time is visible in its pixels)."""
    import av
    import numpy as np

    with av.open(str(path), "w") as out:
        stream = out.add_stream("libx264", rate=fps)
        stream.width, stream.height, stream.pix_fmt = 64, 48, "yuv420p"
        stream.options = {"g": str(fps), "preset": "ultrafast"}
        for i in range(duration * fps):
            level = (i // fps) % 256
            img = np.full((48, 64, 3), level, dtype=np.uint8)
            for packet in stream.encode(av.VideoFrame.from_ndarray(img, format="rgb24")):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)
    return path


class VideoMovie:
    """MovieView over a real video file plus handmade cues; decoded frames are memoised."""

    def __init__(self, path: Path, cues: list[Cue], movie_id: str = "test-movie"):
        self.movie_id = movie_id
        self._src = open_video(path)
        self.duration = float(self._src.info.duration)
        self._cues = sorted(cues, key=lambda c: c.start)
        self._memo: dict = {}
        self.frame_calls: list[tuple[float, float, float, int | None]] = []

    def frames(self, start, end, fps=1.0, cap=None):
        self.frame_calls.append((start, end, fps, cap))
        key = (round(start, 3), round(end, 3), fps, cap)
        if key not in self._memo:
            self._memo[key] = self._src.sample_fps(start, min(end, self.duration), fps, cap)
        return list(self._memo[key])

    def cues(self, start, end):
        return [c for c in self._cues if c.end > start and c.start < end]


@dataclass
class Ref:
    ref_id: str
    image: str
    time: float | None = None


@dataclass
class Character:
    char_id: str
    display_name: str
    names: list[str]
    references: list[Ref] = field(default_factory=list)


class Memory:
    """CharacterMemoryView: name lookup (whole words, case-insensitive); images loaded from disk."""

    def __init__(self, characters: list[Character]):
        self.characters = characters

    def match_characters(self, query: str):
        import re
        q = query.lower()
        return [c for c in self.characters
                if any(re.search(rf"\b{re.escape(n.lower())}\b", q) for n in c.names)]

    def load_reference_image(self, ref: Ref):
        from PIL import Image
        try:
            return Image.open(ref.image).convert("RGB")
        except OSError:
            return None


def make_memory(tmp: Path) -> Memory:
    from PIL import Image
    chars = []
    for cid, name, full, colour in (("C1", "Lloyd", "Lloyd Christmas", (200, 30, 30)),
                                    ("C2", "Harry", "Harry Dunne", (30, 30, 200))):
        refs = []
        for j in range(2):
            p = tmp / f"{cid}_r{j + 1}.jpg"
            Image.new("RGB", (16, 16), colour).save(p)
            refs.append(Ref(f"{cid}:r{j + 1}", str(p), 100.0 + j))
        chars.append(Character(cid, full, [name, full], refs))
    return Memory(chars)


CUES = [Cue(5.0, 8.0, "Lloyd, wait for me!"), Cue(70.0, 73.0, "Look, it's snowing."),
        Cue(118.0, 121.0, "Harry walks on the snowy street with Lloyd."),
        Cue(150.0, 153.0, "It is night and the street is empty."),
        Cue(230.0, 234.0, "The end of the road.")]


# -- scripted backend ---------------------------------------------------------------------------
def decompose_reply(n: int = 3, cast: list | None = None) -> str:
    return json.dumps({"statements": [{"id": f"s{i}", "text": f"statement {i}"}
                                      for i in range(1, n + 1)], "cast": cast or []})


def inspect_reply(decision: str, holds: list[str] | None = None, conf: float = 0.8,
                  side: str | None = None, secs: float | None = None, note: str = "seen") -> str:
    holds = holds or ["true", "true", "true"]
    return json.dumps({"statements": [{"id": f"s{i}", "note": note, "holds": h}
                                      for i, h in enumerate(holds, 1)],
                       "cooccurrence": f"{decision.lower()} summary", "decision": decision,
                       "confidence": conf, "expand_direction": side, "expand_seconds": secs})


def select_reply(index: int) -> str:
    return json.dumps({"selected_index": index, "reasoning": "closest"})


class ScriptedBackend(VLMBackend):
    """Answers each request from per-task queues (the last answer of a queue repeats), or from a
    callable(request) -> str. Records every request."""

    kind = "scripted"

    def __init__(self, decompose=None, inspect=None, select=None,
                 fn: Callable[[GenerationRequest], str] | None = None, max_images=None):
        self.queues = {"aws.decompose": list(decompose or [decompose_reply()]),
                       "aws.inspect": list(inspect or [inspect_reply("REJECT")]),
                       "aws.select": list(select or [select_reply(0)])}
        self.fn = fn
        self.max_images = max_images
        self.requests: list[GenerationRequest] = []

    @property
    def backend_id(self) -> str:
        return "scripted:test"

    def generate(self, request: GenerationRequest) -> GenerationResult:
        self.requests.append(request)
        if self.fn is not None:
            text = self.fn(request)
        else:
            q = self.queues[request.task]
            text = q.pop(0) if len(q) > 1 else q[0]
        return GenerationResult(text=text, backend=self.backend_id, model="test")

    def by_task(self, task: str) -> list[GenerationRequest]:
        return [r for r in self.requests if r.task == task]


def texts(message) -> str:
    return "\n".join(p for p in message.content if isinstance(p, str))


def frame_times(message) -> list[float]:
    """Times of the "<T.T seconds>" markers that directly precede an image in a message."""
    import re
    out = []
    parts = message.content
    for i, p in enumerate(parts):
        if not isinstance(p, str) and i > 0 and isinstance(parts[i - 1], str):
            m = re.search(r"<(-?\d+(?:\.\d+)?) seconds>\s*$", parts[i - 1])
            if m:
                out.append(float(m.group(1)))
    return out
