"""Query-guided region selection with the paper's prompt (the HAPACT paper, A.6.3).

One frame + the impact query go to any VLM backend with the prompt of
`assets/prompts/hapact_region_selection.txt`; the answer is parsed onto the 18 labels.
A reply that maps to no label (and is not an explicit "None") is asked again (backends.ask), at
most `max_attempts` times in all; after that it is kept raw and counted as unparsed, never guessed.
A backend failure is not asked again: the answer carries "backend error: ...".
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from backends.ask import Asked, Unparsed, ask, reasoning_usage
from backends.base import GenerationParams, GenerationRequest, Message, VLMBackend
from components.impact.regions import OK, NONE, read_region_answer

if TYPE_CHECKING:
    from PIL import Image

PROMPT_FILE = Path(__file__).resolve().parents[3] / "assets" / "prompts" / "hapact_region_selection.txt"
#: The fine-tuning target format printed under the prompt in A.6.3 (the parser strips it).
ANSWER_FORMAT = "The affected body regions are {list of body-region labels}."
DEFAULT_ATTEMPTS = 3


def region_prompt(query: str) -> str:
    """The paper's prompt with the query filled in (replace, so braces in a query are harmless)."""
    template = PROMPT_FILE.read_text(encoding="utf-8").strip()
    return template.replace("{query}", query.strip())


@dataclass
class RegionAnswer:
    """Labels selected for one frame. `error` is set when nothing usable came back (unparsed or a
    backend failure); `raw` keeps the model's last reply as it was."""

    labels: list[str]
    unmapped: list[str] = field(default_factory=list)
    raw: str = ""
    error: str | None = None
    attempts: int = 1
    source: str = ""   # backend id, or the baseline's name
    note: str = ""     # e.g. why the text-only baseline selected nothing
    reasoning: str = ""  # the model's reasoning for its last reply (never parsed)
    usage: dict | None = None  # the last reply's token counts (backends.base.Usage.as_dict)

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def backend_failed(self) -> bool:
        """The backend itself failed (worth asking again later), as opposed to an unread reply."""
        return bool(self.error) and self.error.startswith("backend error")

    def as_dict(self) -> dict:
        out = {"regions": list(self.labels), "unmapped": list(self.unmapped), "raw": self.raw,
               "error": self.error, "attempts": self.attempts, "source": self.source,
               "note": self.note}
        if self.reasoning:  # only when there is some: lines of other models stay as they were
            out["reasoning"] = self.reasoning
        if self.usage:
            out["usage"] = dict(self.usage)
        return out


class RegionSolver(Protocol):
    name: str
    needs_image: bool  # whether `select` reads the frame (the text-only baseline does not)

    def select(self, frame_image: Image.Image | None, query: str, **kwargs) -> RegionAnswer: ...


def _no_label(unmapped: list[str]) -> str:
    return ("no body-region label found in the reply"
            + (f" (unmapped: {', '.join(unmapped)})" if unmapped else ""))


def read_regions(raw: str) -> tuple[list[str], list[str]]:
    """(labels, unmapped) of a reply; raises Unparsed when it names no label and is not "None"
    (also for an echo of the prompt's label list, a reply that only negates, unfinished reasoning
    or an oversized reply: components.impact.regions.read_region_answer)."""
    reading = read_region_answer(raw)
    if reading.status in (OK, NONE):
        return reading.labels, reading.unmapped
    raise Unparsed(reading.reason + (f" (unmapped: {', '.join(reading.unmapped)})"
                                     if reading.unmapped else ""))


class ModelRegionSolver:
    """Region selection by a vision-language model with the paper's prompt."""

    needs_image = True

    def __init__(self, backend: VLMBackend, *, max_attempts: int = DEFAULT_ATTEMPTS,
                 params: GenerationParams | None = None):
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self.backend = backend
        self.max_attempts = max_attempts
        self.params = params
        self.name = backend.backend_id

    def build_request(self, frame_image: Image.Image | None, query: str,
                      ref: str = "") -> GenerationRequest:
        content: list = [] if frame_image is None else [frame_image]
        content.append(region_prompt(query))
        params = self.params or GenerationParams(temperature=0.0, max_tokens=64)
        return GenerationRequest(messages=[Message(role="user", content=content)], params=params,
                                 task="impact.regions", ref=ref)

    def ask(self, frame_image: Image.Image | None, query: str, *, ref: str = "",
            cancel: threading.Event | None = None) -> Asked[tuple[list[str], list[str]]]:
        """The model's reading of one frame (with the partner's, when the backend is paired)."""
        request = self.build_request(frame_image, query, ref)
        request.cancel = cancel
        return ask(self.backend, request, read_regions, attempts=self.max_attempts)

    def select(self, frame_image: Image.Image | None, query: str, *, ref: str = "",
               cancel: threading.Event | None = None) -> RegionAnswer:
        return region_answer(self.ask(frame_image, query, ref=ref, cancel=cancel), self.name)


def region_answer(asked: Asked[tuple[list[str], list[str]]], source: str) -> RegionAnswer:
    """A RegionAnswer from what asking gave (an unparsed or failed call keeps its raw reply)."""
    kept = {"raw": asked.raw, "attempts": asked.attempts, "source": source,
            "reasoning": asked.reasoning, "usage": reasoning_usage(asked)}
    if asked.failed:
        return RegionAnswer([], [], error=f"backend error: {asked.error}", **kept)
    if asked.value is None:
        reading = read_region_answer(asked.raw)
        why = reading.reason or _no_label(reading.unmapped)
        return RegionAnswer([], reading.unmapped, error=f"unparsed: {why}", **kept)
    labels, unmapped = asked.value
    return RegionAnswer(labels, unmapped, **kept)
