"""HAPACT Table 7 prompts for generation-based temporal localization, one variant per backend family.

- "open"   (Qwen3-VL / InternVL-3.5): intervals in seconds as [[start, end], ...];
- "gemini" (Gemini 3.1 Pro): [[MM:SS.SSS, MM:SS.SSS], ...];
- "gpt"    (GPT-4o / GPT-5.4): "The event happens in x1 - y1 seconds; ...", every frame preceded by
  its "Frame at 2.375s:" label;
- "vtimellm", "trace", "groundedvideollm", "unitime", "timelens": the other five Table 7 rows,
  chosen explicitly (never from a model name). `<video>` in their text marks where the frames go;
  `{num_frames}` is the number sent; VTimeLLM's frames carry no timestamp (it answers in frame
  numbers, read as indices of the frames sent: `answer_in_frame_indices`), UniTime's and the
  others' each carry its time ("2.375s"; TimeLens: the bare number, as its prompt says).
The texts live verbatim in assets/prompts/hapact_temporal_<style>.txt.
"""
from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING
from collections.abc import Sequence

from backends.base import Message

if TYPE_CHECKING:
    from components.media import Frame

PROMPT_DIR = Path(__file__).resolve().parents[3] / "assets" / "prompts"
STYLES = ("open", "gemini", "gpt", "vtimellm", "trace", "groundedvideollm", "unitime", "timelens")
#: the Table 7 row each style reproduces (shown in the UI and in docs/prompts.md)
STYLE_ROWS = {"open": "Qwen3-VL / InternVL-3.5", "gemini": "Gemini 3.1 Pro", "gpt": "GPT-4o / GPT-5.4",
              "vtimellm": "VTimeLLM", "trace": "TRACE", "groundedvideollm": "Grounded-Video-LLM",
              "unitime": "UniTime", "timelens": "TimeLens"}
#: A.6.2: "the remaining models received up to 192 frames"
MAX_FRAMES = 192
#: A.6.2: "VTimeLLM, TRACE, and Grounded-Video-LLM were given 100, 128, and 96 sampled frames"
STYLE_FRAMES = {"vtimellm": 100, "trace": 128, "groundedvideollm": 96}
VIDEO_TOKEN = "<video>"


def max_frames_for(style: str) -> int:
    """The paper's frame count for a style (A.6.2)."""
    return STYLE_FRAMES.get(style, MAX_FRAMES)


def answer_in_frame_indices(style: str) -> bool:
    """VTimeLLM's prompt asks "During which frames": its answer numbers the frames sent."""
    return style == "vtimellm"


@cache
def prompt_template(style: str) -> str:
    if style not in STYLES:
        raise ValueError(f"Unknown prompt style '{style}'; choose one of {', '.join(STYLES)}.")
    return (PROMPT_DIR / f"hapact_temporal_{style}.txt").read_text(encoding="utf-8").strip()


def style_for_backend(backend_id: str, override: str | None = None) -> str:
    """Pick the Table 7 variant from the model name ("gemini" -> gemini; gpt/o1/o3/o4 -> gpt;
    else open); the other five rows' styles are only used when chosen (`override`)."""
    if override and override != "auto":
        if override not in STYLES:
            raise ValueError(f"Unknown prompt style '{override}'; choose auto, {', '.join(STYLES)}.")
        return override
    model = backend_id.split(":", 1)[-1].lower()
    name = model.rsplit("/", 1)[-1]
    if "gemini" in model:
        return "gemini"
    if "gpt" in model or re.match(r"^o[134](?:$|[-_.])", name):
        return "gpt"
    return "open"


def render_prompt(style: str, query: str, num_frames: int | None = None) -> str:
    text = prompt_template(style).replace("{query}", query.strip())
    return text.replace("{num_frames}", str(num_frames)) if num_frames is not None else text


def frame_label(style: str, t: float) -> str:
    """The timestamp text placed before each frame (frames carry their start time i/fps)."""
    if style == "gpt":
        return f"Frame at {t:.3f}s:"
    if style == "gemini":
        minutes, rest = divmod(t, 60.0)
        return f"{int(minutes):02d}:{rest:06.3f}"
    if style == "timelens":  # "The numbers before each video frame indicate its sampling timestamp"
        return f"{t:.3f}"
    return f"{t:.3f}s"


def _frame_parts(style: str, frames: Sequence[Frame]) -> list:
    parts: list = []
    for frame in frames:
        if style != "vtimellm":  # VTimeLLM numbers frames itself ("a video with N frames")
            parts.append(frame_label(style, frame.time))
        parts.append(frame.image)
    return parts


def build_messages(style: str, query: str, frames: Sequence[Frame]) -> list[Message]:
    """One user message. GPT style: prompt, then "Frame at X.XXXs:" + frame pairs (the prompt says
    "Each frame is preceded by its timestamp"). Open/Gemini styles: the timestamped frames stand for
    the video, followed by the prompt (video first, question last, as those models take a video)."""
    prompt = render_prompt(style, query, len(frames))
    content: list = []
    if VIDEO_TOKEN in prompt:  # VTimeLLM / TRACE / Grounded-Video-LLM: the frames stand there
        before, after = prompt.split(VIDEO_TOKEN, 1)
        content += ([before.strip()] if before.strip() else []) + _frame_parts(style, frames)
        content += [after.strip()] if after.strip() else []
        return [Message(role="user", content=content)]
    if style == "gpt":
        content.append(prompt)
    content += _frame_parts(style, frames)
    if style != "gpt":
        content.append(prompt)
    return [Message(role="user", content=content)]


def sample_count(total_frames: int, *, backend_max_images: int | None = None,
                 session_max_frames: int | None = None, cap: int = MAX_FRAMES) -> int:
    """How many frames to send: up to 192, fewer if the backend or the session allows fewer; a clip
    shorter than the request just uses all its frames (A.6.2)."""
    limits = [cap, total_frames]
    if backend_max_images:
        limits.append(int(backend_max_images))
    if session_max_frames:
        limits.append(int(session_max_frames))
    return max(0, min(limits))


def uniform_indices(total_frames: int, n: int) -> list[int]:
    """n frame indices (0-based) spread uniformly, each the centre of one of n equal bins;
    all frames when n >= total."""
    if n >= total_frames:
        return list(range(total_frames))
    if n <= 0:
        return []
    return [min(total_frames - 1, int((i + 0.5) * total_frames / n)) for i in range(n)]
