"""Query-guided region selection with the paper's prompt (papers/hapact.md A.6.3).

One frame + the impact query go to any VLM backend with the prompt of
`assets/prompts/hapact_region_selection.txt`; the answer is parsed onto the 18 labels.
A reply that maps to no label (and is not an explicit "None") is asked again, at most
`max_attempts` times in all; after that it is kept raw and counted as unparsed, never guessed.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from components.impact.regions import is_none_answer, parse_region_labels

if TYPE_CHECKING:
    from PIL import Image

    from backends.base import GenerationParams, VLMBackend

PROMPT_FILE = Path(__file__).resolve().parents[2] / "assets" / "prompts" / "hapact_region_selection.txt"
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

    @property
    def ok(self) -> bool:
        return self.error is None

    def as_dict(self) -> dict:
        return {"regions": list(self.labels), "unmapped": list(self.unmapped), "raw": self.raw,
                "error": self.error, "attempts": self.attempts, "source": self.source,
                "note": self.note}


class RegionSolver(Protocol):
    name: str

    def select(self, frame_image: "Image.Image | None", query: str, **kwargs) -> RegionAnswer: ...


class ModelRegionSolver:
    """Region selection by a vision-language model with the paper's prompt."""

    def __init__(self, backend: "VLMBackend", *, max_attempts: int = DEFAULT_ATTEMPTS,
                 params: "GenerationParams | None" = None):
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self.backend = backend
        self.max_attempts = max_attempts
        self.params = params
        self.name = backend.backend_id

    def build_request(self, frame_image: "Image.Image | None", query: str, ref: str = ""):
        from backends.base import GenerationParams, GenerationRequest, Message

        content: list = [] if frame_image is None else [frame_image]
        content.append(region_prompt(query))
        params = self.params or GenerationParams(temperature=0.0, max_tokens=64)
        return GenerationRequest(messages=[Message(role="user", content=content)], params=params,
                                 task="impact.regions", ref=ref)

    def select(self, frame_image: "Image.Image | None", query: str, *, ref: str = "",
               cancel=None) -> RegionAnswer:
        request = self.build_request(frame_image, query, ref)
        request.cancel = cancel
        raw, unmapped, error = "", [], None
        for attempt in range(1, self.max_attempts + 1):
            result = self.backend.generate(request)
            if not result.ok:
                return RegionAnswer([], [], raw=result.text or "", attempts=attempt, source=self.name,
                                    error=f"backend error: {result.error}")
            raw = result.text
            labels, unmapped = parse_region_labels(raw)
            if labels or is_none_answer(raw):
                return RegionAnswer(labels, unmapped, raw=raw, attempts=attempt, source=self.name)
            error = ("unparsed: no body-region label found in the reply"
                     + (f" (unmapped: {', '.join(unmapped)})" if unmapped else ""))
        return RegionAnswer([], unmapped, raw=raw, error=error, attempts=self.max_attempts,
                            source=self.name)


def region_solver_for(backend: "VLMBackend", **kwargs) -> RegionSolver:
    """The baseline backend gets the text-only solver; any other backend the paper's prompt."""
    if getattr(backend, "is_baseline", False):
        from components.impact.region_baseline import BaselineRegionSolver

        return BaselineRegionSolver()
    return ModelRegionSolver(backend, **kwargs)
