"""Answering one question: a model-backed solver (any VLMBackend + the G.2 prompt) and the edge
baseline, chosen by `backend.is_baseline`. Both return a record in the upstream result format
(`correct, answer, expected, reason, option_map`) plus `raw`, `error`, `used_num_frames`, ..."""
from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Callable, Protocol

from backends.base import GenerationParams, GenerationRequest, Message, VLMBackend
from backends.errors import GenerationStopped, TooManyImagesError
from components.cloze.edge import VARIANTS, edge_answer
from components.cloze.frames import clip_frames
from components.cloze.layout import Instance
from components.cloze.prompt import eval_prompt, parse_answer, request_content
from components.cloze.questions import Question
from components.common.errors import UserError

FRAME_STEPS = (16, 12, 4, 2, 1)
MAX_ATTEMPTS = 3


def now_utc() -> str:
    return datetime.now(timezone.utc).isoformat()


class ClozeSolver(Protocol):
    name: str

    def answer(self, inst: Instance, q: Question) -> dict: ...


def _frames(inst: Instance, q: Question, n: int):
    begin = clip_frames(inst.clip_path("before"), n)
    end = clip_frames(inst.clip_path("after"), n)
    cands = [clip_frames(inst.clip_path(c), n) for c in q.options]
    return begin, end, cands


def _base_record(q: Question, backend_id: str) -> dict:
    return {"correct": False, "answer": None, "expected": q.expected, "reason": "",
            "option_map": q.option_map, "backend": backend_id, "seed": q.seed,
            "order_rule": q.order_rule}


@dataclass
class EdgeSolver:
    """Appendix B.2.2 edge baseline (Edge-1 by default)."""

    variant: str = "edge1"

    def __post_init__(self):
        if self.variant not in VARIANTS:
            raise UserError(f"Unknown edge baseline '{self.variant}'; use edge1 or edge4.")

    @property
    def name(self) -> str:
        return f"baseline:{self.variant}"

    def answer(self, inst: Instance, q: Question) -> dict:
        begin, end, cands = _frames(inst, q, 16)
        ans = edge_answer(begin, end, cands, VARIANTS[self.variant])
        rec = _base_record(q, self.name)
        rec.update(correct=ans.letter == q.expected, answer=ans.letter, reason=ans.reason,
                   raw=ans.reason, probabilities=ans.probabilities, used_num_frames=16,
                   attempts=1, parsed=True, error=None, timestamp_utc=now_utc())
        return rec


@dataclass
class ModelSolver:
    """The released evaluation's request and parsing, with bounded retries and frame step-down."""

    backend: VLMBackend
    strict: bool = False
    max_attempts: int = MAX_ATTEMPTS
    retry_sleep: float = 0.0  # grows linearly with the attempt number
    max_frames: int = 16
    max_tokens: int = 512
    on_attempt: Callable[[int, str], None] | None = None

    @property
    def name(self) -> str:
        return self.backend.backend_id

    def _steps(self) -> list[int]:
        steps = [n for n in FRAME_STEPS if n <= max(1, self.max_frames)]
        cap = getattr(self.backend, "max_images", None)
        if cap:
            fitting = [n for n in steps if 6 * n <= cap]
            if not fitting:
                raise UserError(f"{self.backend.backend_id} accepts at most {cap} images per request; "
                                "a cloze question needs at least 6 (one frame per clip).")
            steps = fitting
        return steps

    def answer(self, inst: Instance, q: Question) -> dict:
        rec = _base_record(q, self.name)
        steps = self._steps()
        step = 0
        attempts = 0
        raws: list[str] = []
        last_error = None
        why = ""
        parsed = None
        while attempts < self.max_attempts:
            n = steps[step]
            begin, end, cands = _frames(inst, q, n)
            content = request_content(eval_prompt(), begin, end, cands)
            req = GenerationRequest([Message("user", content)], GenerationParams(temperature=0.0, max_tokens=self.max_tokens),
                                    task="cloze.answer", ref=q.key)
            try:
                result = self.backend.generate(req)
            except TooManyImagesError as exc:
                if step + 1 >= len(steps):
                    last_error = f"too many images even at {n} frame(s) per clip: {exc}"
                    break
                step += 1  # a rejected size is not an attempt: step down 16, 12, 4, 2, 1
                continue
            except GenerationStopped:
                raise
            attempts += 1
            if not result.ok:
                last_error = result.error
                why = f"backend error: {result.error}"
            else:
                raws.append(result.text)
                parsed = parse_answer(result.text, strict=self.strict)
                if parsed.ok:
                    break
                why = parsed.why
                last_error = None
            if self.on_attempt:
                self.on_attempt(attempts, why)
            if attempts < self.max_attempts and self.retry_sleep:
                time.sleep(self.retry_sleep * attempts)
        rec.update(used_num_frames=steps[step], attempts=attempts, timestamp_utc=now_utc())
        rec["raw"] = raws[-1] if raws else ""
        if len(raws) > 1:
            rec["raw_attempts"] = raws
        if parsed is not None and parsed.ok:
            rec.update(correct=parsed.letter == q.expected, answer=parsed.letter,
                       reason=parsed.reason, parsed=True, error=None)
        else:
            rec.update(parsed=False, error=last_error or f"unparsed: {why}")
        return rec


def solver_for(backend: VLMBackend, *, edge_variant: str = "edge1", strict: bool = False,
               max_attempts: int = MAX_ATTEMPTS, retry_sleep: float = 0.0,
               max_frames: int = 16) -> ClozeSolver:
    if backend.is_baseline:
        return EdgeSolver(edge_variant)
    return ModelSolver(backend, strict=strict, max_attempts=max_attempts, retry_sleep=retry_sleep,
                       max_frames=max_frames)
