"""Answering one question: a model-backed solver (any VLMBackend + the G.2 prompt) and the edge
baseline, chosen once by `solvers_for`. Both return a record in the upstream result format
(`correct, answer, expected, reason, option_map`) plus `raw`, `error`, `used_num_frames`, ...

The model solver reads a reply in two steps: first the one reasoning rule every parser shares
(components.common.replies.answer_part: closed <think> blocks dropped, a reply whose reasoning never
closed or longer than 64 kB refused), then the released parser unchanged (replies.read_reply).
The raw reply is always kept in the record."""
from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import datetime, UTC
from typing import Protocol
from collections.abc import Callable

from backends.ask import Asked, Unparsed, ask, reasoning_usage, step_down
from backends.base import GenerationParams, GenerationRequest, Message, VLMBackend
from backends.methods import method_for
from backends.pair import method_pair
from backends.registry import resolve_embedder
from components.cloze.edge import VARIANTS, edge_answer
from components.cloze.released_edge import answer_question, default_spec
from components.cloze.frames import clip_frames, clip_jpegs
from components.cloze.data import Instance
from components.cloze.prompts import DEFAULT_STYLE, RELEASED_MAX_TOKENS, eval_prompt, prompt_style, request_content
from components.cloze.replies import ParsedAnswer, read_reply
from components.cloze.questions import LETTERS, Question
from components.base.errors import UserError

FRAME_STEPS = (16, 12, 4, 2, 1)
MAX_ATTEMPTS = 3
#: the released edge baseline (DINOv2); the others are the pixel approximation
RELEASED_VARIANT = "dinov2"
EDGE_VARIANTS = (*VARIANTS, RELEASED_VARIANT)


def released_params(max_tokens: int) -> GenerationParams:
    """What the released evaluators send besides the messages: temperature 0 and max_tokens; no
    top_p (eval.py, eval_vllm.py: `create(model, messages, max_tokens=8192, temperature=0)`)."""
    return GenerationParams(temperature=0.0, top_p=None, max_tokens=max_tokens)
CLIPS_PER_QUESTION = 6  # BEGINNING, END and four candidates


def now_utc() -> str:
    return datetime.now(UTC).isoformat()


class ClozeSolver(Protocol):
    name: str

    def answer(self, inst: Instance, q: Question) -> dict: ...


@dataclass(frozen=True)
class SolverSettings:
    """What the solvers take from the Model panel (max frames) and from the tab's own options."""

    max_frames: int = 16          # frames per clip at most (the Model panel's cap; 16 is the paper's)
    edge_variant: str = "edge1"   # the baseline when the backend is 'baseline' (EDGE_VARIANTS)
    strict: bool = False          # stricter parsing (the vLLM evaluator's: unwraps <A>, needs a reason)
    max_attempts: int = MAX_ATTEMPTS
    retry_sleep: float = 0.0      # seconds before a re-ask, times the attempt number
    cancel: threading.Event | None = None  # set: stop before the next model call
    max_tokens: int = RELEASED_MAX_TOKENS  # the released evaluators' 8192
    prompt_style: str = DEFAULT_STYLE      # "api" (paper) or "open" (released vLLM evaluator)


def _frames(inst: Instance, q: Question, n: int):
    """PIL frames (the edge baseline) as decoded from the JPEGs a model would receive."""
    begin = clip_frames(inst.clip_path("before"), n)
    end = clip_frames(inst.clip_path("after"), n)
    cands = [clip_frames(inst.clip_path(c), n) for c in q.options]
    return begin, end, cands


def _jpegs(inst: Instance, q: Question, n: int, max_height: int | None):
    """The encoded frames sent to a model, clip by clip."""
    begin = clip_jpegs(inst.clip_path("before"), n, max_height=max_height)
    end = clip_jpegs(inst.clip_path("after"), n, max_height=max_height)
    cands = [clip_jpegs(inst.clip_path(c), n, max_height=max_height) for c in q.options]
    return begin, end, cands


def _base_record(q: Question, backend_id: str) -> dict:
    return {"correct": False, "answer": None, "expected": q.expected, "reason": "",
            "option_map": q.option_map, "backend": backend_id, "seed": q.seed,
            "order_rule": q.order_rule}


@dataclass
class EdgeSolver:
    """The edge baseline: `dinov2` is the released one (TempCloze/edge_matching_baseline.py:
    DINOv2 features of the edge frames, components/cloze/released_edge.py); `edge1` / `edge4`
    are this app's offline pixel approximation of it (no model weights; labelled so)."""

    variant: str = "edge1"
    #: the image-feature backend spec of the released variant (released_edge.default_spec())
    features: str = ""

    def __post_init__(self):
        if self.variant not in EDGE_VARIANTS:
            raise UserError(f"Unknown edge baseline '{self.variant}'; use "
                            f"{', '.join(EDGE_VARIANTS)}.")

    @property
    def name(self) -> str:
        if self.variant == RELEASED_VARIANT:
            return "baseline:edge4-dinov2"
        return f"baseline:{self.variant}"  # the pixel approximation (its reason says so)

    def answer(self, inst: Instance, q: Question) -> dict:
        if self.variant == RELEASED_VARIANT:
            return self._released(inst, q)
        begin, end, cands = _frames(inst, q, 16)
        ans = edge_answer(begin, end, cands, VARIANTS[self.variant])
        rec = _base_record(q, self.name)
        rec.update(correct=ans.letter == q.expected, answer=ans.letter, reason=ans.reason,
                   raw=ans.reason, probabilities=ans.probabilities, used_num_frames=16,
                   attempts=1, parsed=True, error=None, timestamp_utc=now_utc())
        return rec

    def _released(self, inst: Instance, q: Question) -> dict:
        """The released baseline's record for the question, with the answer it implies (the
        argmax; the released script reports p_gt and the margin, not an accuracy)."""
        embedder = resolve_embedder(self.features or default_spec())
        released = answer_question(inst, q, embedder)
        letter = LETTERS[released["predicted_index"]]
        probs = dict(zip(LETTERS, released["probabilities"]))
        reason = ("Edge-4 DINOv2 (released): cosine of mean edge features; probabilities "
                  + ", ".join(f"{k} {v:.3f}" for k, v in probs.items())
                  + f"; P(true middle) {released['p_gt']:.3f}, margin {released['gt_margin']:+.4f}.")
        rec = _base_record(q, self.name)
        rec.update(correct=letter == q.expected, answer=letter, reason=reason, raw=reason,
                   probabilities=probs, p_gt=released["p_gt"], gt_margin=released["gt_margin"],
                   scores=released["scores"], features=embedder.backend_id, used_num_frames=16,
                   attempts=1, parsed=True, error=None, timestamp_utc=now_utc())
        return rec


@dataclass
class ModelSolver:
    """The released evaluation's request and parsing, asked through `backends.ask`: a malformed
    reply or a backend failure is asked again within the 3 attempts (released eval.py re-asks
    after any exception), refused image counts step down 16, 12, 4, 2, 1 frames per clip (a
    refused size is not an attempt), a reply cut at max_tokens is recorded as truncated, not
    re-asked."""

    backend: VLMBackend
    strict: bool = False
    max_attempts: int = MAX_ATTEMPTS
    retry_sleep: float = 0.0  # grows linearly with the attempt number
    max_frames: int = 16
    max_tokens: int = RELEASED_MAX_TOKENS
    on_attempt: Callable[[int, str], None] | None = None
    cancel: threading.Event | None = None
    prompt_style: str = DEFAULT_STYLE

    @property
    def name(self) -> str:
        return self.backend.backend_id

    def _steps(self) -> list[int]:
        steps = [n for n in FRAME_STEPS if n <= max(1, self.max_frames)]
        cap = self.backend.max_images
        if cap and not [n for n in steps if CLIPS_PER_QUESTION * n <= cap]:
            raise UserError(f"{self.backend.backend_id} accepts at most {cap} images per request; "
                            "a cloze question needs at least 6 (one frame per clip).")
        return steps

    def _parse(self, text: str) -> ParsedAnswer:
        parsed = read_reply(text, strict=self.strict)
        if not parsed.ok:
            raise Unparsed(parsed.why)
        return parsed

    def answer(self, inst: Instance, q: Question) -> dict:
        asked, frames_of, steps = self.ask(inst, q)
        return self._record(q, asked, frames_of, steps, self.name)

    def answer_pair(self, inst: Instance, q: Question) -> tuple[dict, dict, Asked[ParsedAnswer]]:
        """The records of both backends of a paired backend (backends.pair) for one question,
        from one request sent to both, and what asking gave."""
        asked, frames_of, steps = self.ask(inst, q)
        if asked.partner is None:
            raise UserError("No second backend to compare with: choose one under \"Compare "
                            "with\" in the Model panel.")
        return (self._record(q, asked, frames_of, steps, self.name),
                self._record(q, asked.partner, frames_of, steps, asked.partner.backend), asked)

    def ask(self, inst: Instance, q: Question) -> tuple[Asked[ParsedAnswer], dict[int, int], list[int]]:
        """The released request, asked: (what came of it, images sent -> frames per clip, the
        frame steps). Sent as the released evaluator sends it: temperature 0, max_tokens, no
        top_p; asked again after a failure too, within the attempts (released eval.py)."""
        steps = self._steps()
        style = prompt_style(self.prompt_style)
        frames_of: dict[int, int] = {}  # images in a request -> frames per clip

        def build(n: int) -> GenerationRequest:
            begin, end, cands = _jpegs(inst, q, n, style.max_height)
            content = request_content(eval_prompt(style.name), begin, end, cands)
            req = GenerationRequest([Message("user", content)], released_params(self.max_tokens),
                                    task="cloze.answer", ref=q.key, cancel=self.cancel)
            frames_of[req.num_images()] = n
            return req

        asked = ask(self.backend, build(steps[0]), self._parse, attempts=self.max_attempts,
                    on_too_many=step_down(build, steps[1:]), retry_sleep=self.retry_sleep,
                    on_attempt=self.on_attempt, retry_failures=True)
        return asked, frames_of, steps

    def _record(self, q: Question, asked: Asked[ParsedAnswer], frames_of: dict[int, int],
                steps: list[int], name: str) -> dict:
        rec = _base_record(q, name)
        sent = asked.request.num_images() if asked.request is not None else None
        rec.update(used_num_frames=frames_of.get(sent, steps[0]), prompt_style=self.prompt_style,
                   max_tokens=self.max_tokens, attempts=asked.attempts, timestamp_utc=now_utc(),
                   raw=asked.raw)
        if len(asked.raws) > 1:
            rec["raw_attempts"] = list(asked.raws)
        # extra keys the released analysis ignores (it reads answer, correct, option_map); only
        # when there is something, so records of models without reasoning stay as they were
        if asked.reasoning:
            rec["reasoning"] = asked.reasoning
        if len(asked.reasonings) > 1 and any(asked.reasonings):
            rec["reasoning_attempts"] = list(asked.reasonings)
        usage = reasoning_usage(asked)
        if usage is not None:  # the reasoning / answer token split
            rec["usage"] = usage
        if asked.ok:
            rec.update(correct=asked.value.letter == q.expected, answer=asked.value.letter,
                       reason=asked.value.reason, parsed=True, error=None)
        elif asked.truncated:
            rec.update(parsed=False, truncated=True, error=f"truncated: {asked.error}")
        elif asked.failed:
            rec.update(parsed=False, error=asked.error)
        else:
            rec.update(parsed=False, error=f"unparsed: {read_reply(asked.raw, strict=self.strict).why}")
        return rec


@dataclass(frozen=True)
class ClozeSolvers:
    """The cloze tab's solver bundle: one solver answers every question of a run."""

    solver: ClozeSolver

    @property
    def name(self) -> str:
        return self.solver.name


@dataclass(frozen=True)
class MethodPairSolver:
    """Two no-model methods on the same question ("compare with" between `baseline:<method>`
    backends): the first answers as the solver, both answer for the side-by-side view."""

    first: EdgeSolver
    second: EdgeSolver

    @property
    def name(self) -> str:
        return self.first.name

    def answer(self, inst: Instance, q: Question) -> dict:
        return self.first.answer(inst, q)

    def answer_methods(self, inst: Instance, q: Question) -> tuple[dict, dict]:
        return self.first.answer(inst, q), self.second.answer(inst, q)


def edge_variant_for(backend: VLMBackend, settings: SolverSettings) -> str:
    """The edge method a baseline backend runs: its named one (`baseline:edge4`), else the tab's
    Baseline choice."""
    return method_for(backend, EDGE_VARIANTS, settings.edge_variant)


def solvers_for(backend: VLMBackend, settings: SolverSettings | None = None) -> ClozeSolvers:
    """The edge baseline for the 'baseline' backend (the method it names, else the tab's Baseline
    choice; two methods side by side for a pair of them), else the model solver (the only place
    that asks `is_baseline`)."""
    settings = settings or SolverSettings()
    if backend.is_baseline:
        methods = method_pair(backend)
        if methods is not None:
            return ClozeSolvers(MethodPairSolver(*(EdgeSolver(edge_variant_for(b, settings)) for b in methods)))
        return ClozeSolvers(EdgeSolver(edge_variant_for(backend, settings)))
    return ClozeSolvers(ModelSolver(backend, strict=settings.strict, max_attempts=settings.max_attempts,
                                    retry_sleep=settings.retry_sleep, max_frames=settings.max_frames,
                                    cancel=settings.cancel, max_tokens=settings.max_tokens,
                                    prompt_style=prompt_style(settings.prompt_style).name))
