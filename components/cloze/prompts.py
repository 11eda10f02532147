"""The request a model sees, as in the released evaluation (its reply is read by replies.py).

Content order: prompt text, "[BEGINNING]" + 16 images, "[END]" + 16 images, then
"[Candidate A]" + 16 images ... "[Candidate D]" + 16 images (96 images); temperature 0,
max_tokens 8192.

Two prompt styles (`PROMPT_STYLES`): "api", the paper's Appendix G.2 prompt as the released API
evaluator sends it (frames at most 360 px high), the default; "open", the released open-model
(vLLM) evaluator's variant (last line `Output JSON only: {...}` without bold, frames at their
original size). Both send JPEG quality 85.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING
from collections.abc import Sequence

from components.cloze.questions import LETTERS
from components.base.errors import UserError

if TYPE_CHECKING:
    from PIL import Image

    from backends.base import EncodedImage

PROMPTS_DIR = Path(__file__).resolve().parents[2] / "assets" / "prompts"
PROMPT_PATH = PROMPTS_DIR / "cloze_eval.txt"
MAX_HEIGHT = 360
JPEG_QUALITY = 85
#: the released evaluators' request length (a thinking model's reply needed ~2k tokens before
#: its JSON; 512 cut such replies)
RELEASED_MAX_TOKENS = 8192


@dataclass(frozen=True)
class PromptStyle:
    name: str
    file: str
    max_height: int | None   # frames taller than this are resized (None: original size)
    label: str


PROMPT_STYLES = {
    "api": PromptStyle("api", "cloze_eval.txt", MAX_HEIGHT,
                       "paper / API evaluator: G.2 prompt, frames <= 360 px"),
    "open": PromptStyle("open", "cloze_eval_open.txt", None,
                        "released open-model (vLLM) evaluator: unbolded last line, original frame size"),
}
DEFAULT_STYLE = "api"


def prompt_style(name: str | None) -> PromptStyle:
    key = (name or DEFAULT_STYLE).strip().lower()
    if key not in PROMPT_STYLES:
        raise UserError(f"Unknown prompt style '{name}'; use {' or '.join(PROMPT_STYLES)}.")
    return PROMPT_STYLES[key]


@lru_cache(maxsize=4)
def eval_prompt(style: str = DEFAULT_STYLE) -> str:
    """The prompt of `style` ("api": Appendix G.2 as released, the PDF's line breaks inside
    sentences removed; "open": the vLLM evaluator's variant)."""
    return (PROMPTS_DIR / prompt_style(style).file).read_text(encoding="utf-8").strip()


def request_content(prompt: str, beginning: Sequence[Image.Image | EncodedImage],
                    end: Sequence[Image.Image | EncodedImage],
                    candidates: Sequence[Sequence[Image.Image | EncodedImage]]) -> list:
    """Interleaved text/images in the upstream order (images: PIL or EncodedImage)."""
    content: list = [prompt, "[BEGINNING]", *beginning, "[END]", *end]
    for letter, frames in zip(LETTERS, candidates):
        content.append(f"[Candidate {letter}]")
        content.extend(frames)
    return content
