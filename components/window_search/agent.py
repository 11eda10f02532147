"""Agentic Window Search: Algorithm 1 (Appendix D.1), cascaded inspection with bounded expansion.

`agentic_window_search` mirrors the pseudocode line by line (the "# k:" comments are its line
numbers). A solver (solvers.py) answers the three roles; everything else here makes no model call.

Budget: at most K(M+1) Inspect calls, one Decompose and at most one Select, i.e. K(M+1) + 2 model
calls, plus at most `max_retries` re-asks of each malformed reply (counted in trace.calls).

Decisions where the paper is silent (see also prompts.py):
- Select is skipped when exactly one candidate was rejected (it is the only choice; K = 1).
- A Select reply that stays unreadable falls back to the first rejected candidate in retrieval
  order (the Movie RAG choice), recorded in trace.errors; nothing is chosen at random.
- A failed Decompose falls back to the query itself as the single statement and an empty cast.
- Every fallback is named in trace.fallbacks ("decompose-unparsed", "inspect-unparsed" when no
  Inspect reply at all could be read, "select-unparsed"); a prediction reached through one is
  labelled "fallback:<why>" and is not scored as a model's answer (pipeline.prediction_record).
- Text-only solvers receive no frames (nothing is decoded for them).
- A backend failure (an error result after the backend's own transport retries) ends the search:
  trace.errors names it and trace.window stays None.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any, Protocol
from collections.abc import Callable, Sequence

from backends.errors import BackendError, GenerationStopped
from components.base.errors import UserError
from components.window_search.prompts import cast_ref_label
from components.window_search.solvers import WindowSolver
from components.window_search.types import CandidateTrace, CastOption, Chunk, DecomposeOutcome, \
    InspectContext, InspectOutcome, InspectStep, Observation, RefOption, SearchTrace, \
    SelectCandidate, Statement, Window


# -- what the agent needs from the movie and the character memory -------------------------------
class MovieView(Protocol):
    movie_id: str
    duration: float

    def frames(self, start: float, end: float, fps: float = 1.0,
               cap: int | None = None) -> list:  # list[components.media.Frame]
        ...

    def cues(self, start: float, end: float) -> list:  # list[components.media.Cue]
        ...


def sent_frames(movie: MovieView):
    """The movie's frames as a model is sent them, made once and kept (`Movie.sent_frames`); a
    movie without them (a test's) gives its frames."""
    return getattr(movie, "sent_frames", movie.frames)


class ReferenceLike(Protocol):
    ref_id: str
    image: str
    time: float | None


class CharacterLike(Protocol):
    char_id: str
    display_name: str
    names: list[str]
    references: Sequence[ReferenceLike]


class CharacterMemoryView(Protocol):
    def match_characters(self, query: str) -> Sequence[CharacterLike]: ...

    def load_reference_image(self, ref: ReferenceLike) -> Any: ...  # PIL.Image | None


#: the smallest expansion applied (one frame at 1 fps); docs/decisions.md
MIN_EXPAND_S = 1.0


class _Stopped(Exception):
    pass


# -- helpers that make no model call -----------------------------------------------------------
def match_characters(query: str, memory: CharacterMemoryView | None) -> list[CastOption]:
    """MatchCharacters (line 1): name lookup in memory, numbered [C1].. for the Decompose prompt."""
    if memory is None:
        return []
    options = []
    for i, ch in enumerate(memory.match_characters(query)):
        cid = f"C{i + 1}"
        refs = []
        for j, ref in enumerate(ch.references):
            try:
                image = memory.load_reference_image(ref)
            except Exception:  # noqa: BLE001 - an unreadable reference is simply not shown
                image = None
            refs.append(RefOption(label=cast_ref_label(cid, j), ref_id=getattr(ref, "ref_id", None),
                                  image_path=str(ref.image) if getattr(ref, "image", None) else None,
                                  time=getattr(ref, "time", None), image=image))
        options.append(CastOption(cid=cid, char_id=ch.char_id, display_name=ch.display_name,
                                  names=list(ch.names), refs=refs))
    return options


def clamp_window(start: float, end: float, duration: float) -> tuple[float, float]:
    s = min(max(0.0, float(start)), duration)
    return s, min(max(s, float(end)), duration)


def expand_window(W: tuple[float, float], h: InspectContext, side: str,
                  requested: float | None, delta_max: float, movie: MovieView,
                  max_new_frames: int, with_frames: bool) -> tuple[tuple[float, float],
                                                                  InspectContext, Observation]:
    """ExpandWindow (line 18): reveal min(max(request, 1 s), delta_max) seconds on one side,
    clamped to the movie, and append the NEW band's frames (at most max_new_frames, 1 fps) and
    cues to h. (The 1 s floor is ours: a shorter step shows no new frame at 1 fps.)"""
    step = min(max(requested, MIN_EXPAND_S) if requested is not None else delta_max, delta_max)
    if side == "left":
        new_start = max(0.0, W[0] - step)
        band, W_new = (new_start, W[0]), (new_start, W[1])
    else:
        new_end = min(movie.duration, W[1] + step)
        band, W_new = (W[1], new_end), (W[0], new_end)
    applied = round(band[1] - band[0], 6)
    frames = sent_frames(movie)(band[0], band[1], fps=1.0, cap=max_new_frames) \
        if with_frames and applied > 0 else []
    frames = list(frames)[:max_new_frames]
    seen = {(c.start, c.end, c.text) for c in h.cues()}
    cues = [c for c in (movie.cues(band[0], band[1]) if applied > 0 else [])
            if (c.start, c.end, c.text) not in seen]
    obs = Observation(kind="expansion", window=W_new, band=band, frames=frames, cues=cues,
                      side=side, requested=requested, applied=applied, applied_cap=delta_max)
    h.observations.append(obs)
    return W_new, h, obs


def _reasoning(step: InspectStep) -> str:
    if step.parse_error:
        return f"(unparsed reply) {step.raw[:300]}"
    checks = "; ".join(f"{c.sid} {c.status}" + (f": {c.note}" if c.note else "")
                       for c in step.checks)
    text = " ".join(t for t in (checks + "." if checks else "", step.summary) if t)
    return text[:600]


# -- Algorithm 1 --------------------------------------------------------------------------------
@dataclass
class _Search:
    """One query's search in progress: the budget, the trace and how to report and stop."""

    query: str
    movie: MovieView
    solver: WindowSolver
    trace: SearchTrace
    M: int
    delta_max: float
    max_new_frames: int
    frame_cap: int | None
    on_update: Callable[[SearchTrace], None] | None
    stop: threading.Event | None
    t0: float = field(default_factory=time.monotonic)

    @property
    def with_frames(self) -> bool:
        return not self.solver.is_text_only

    @property
    def ref(self) -> str:
        return self.trace.qid or ""

    def update(self) -> None:
        self.trace.elapsed_s = time.monotonic() - self.t0
        if self.on_update is not None:
            self.on_update(self.trace)

    def check_stop(self) -> None:
        if self.stop is not None and self.stop.is_set():
            raise _Stopped

    def count(self, role: str, attempts: int) -> None:
        self.trace.calls[role] += 1
        self.trace.calls["retries"] += max(0, attempts - 1)


Rejected = tuple[Window, InspectContext, CandidateTrace, InspectOutcome]


def agentic_window_search(query: str, ranked: list[Chunk], movie: MovieView,
                          memory: CharacterMemoryView | None, solver: WindowSolver, *,
                          K: int = 5, M: int = 3, delta_max: float = 30.0,
                          max_new_frames: int = 32, frame_cap: int | None = None,
                          on_update: Callable[[SearchTrace], None] | None = None,
                          stop: threading.Event | None = None,
                          qid: str | None = None) -> SearchTrace:
    """Cascaded Inspection with Bounded Expansion for one query; returns the full trace, whose
    `window` is W for the downstream localizer (None if stopped or the backend failed)."""
    if not query or not query.strip():
        raise UserError("The query is empty: type a description of the moment to find.")
    if not ranked:
        raise UserError("No ranked chunks to inspect: run retrieval for this movie first.")
    if K < 1 or M < 0 or delta_max <= 0 or max_new_frames < 1:
        raise UserError(f"Invalid search budget K={K}, M={M}, delta_max={delta_max}, "
                        f"max_new_frames={max_new_frames}: need K >= 1, M >= 0, delta_max > 0.")
    candidates = [Chunk(c.index, c.start, c.end, c.score, c.rank if c.rank is not None else r)
                  for r, c in enumerate(ranked[:K], 1)]
    trace = SearchTrace(query=query, qid=qid, backend=solver.backend_id, chunks=candidates,
                        text_only_baseline=solver.is_text_only, method="aws")
    search = _Search(query, movie, solver, trace, M, delta_max, max_new_frames, frame_cap,
                     on_update, stop)
    try:
        P = match_characters(query, memory)                                  # 1: name lookup
        trace.matched_characters = [o.char_id for o in P]
        search.check_stop()
        dec = solver.decompose(query, P, stop=stop, ref=search.ref)          # 2: single call
        search.count("decompose", dec.attempts)
        trace.statements, trace.cast, trace.decompose_raw = dec.statements, dec.cast, dec.raw
        _keep(trace, "decompose", dec)
        if dec.error:
            trace.errors.append(dec.error)
            trace.fallbacks.append("decompose-unparsed")
        search.update()
        H: list[Rejected] = []                                               # 3
        for r, C_r in enumerate(candidates, 1):                              # 4: retrieval order
            if _inspect_candidate(search, dec, r, C_r, H):
                return trace                                                 # 13
        if all(step.parse_error for ct in trace.candidates for step in ct.steps):
            trace.fallbacks.append("inspect-unparsed")  # every rejection was an unread reply
        trace.window = _select(search, dec.statements, H)                    # 22
        search.update()
        return trace                                                         # 23
    except (_Stopped, GenerationStopped):
        trace.stopped = True
    except BackendError as e:
        trace.errors.append(str(e))
    search.update()
    return trace


def _inspect_candidate(search: _Search, dec: DecomposeOutcome, r: int, C_r: Chunk,
                       H: list[Rejected]) -> bool:
    """Lines 5-20 for candidate r: True when it was accepted (trace.window is then set)."""
    movie, trace = search.movie, search.trace
    ct = CandidateTrace(rank=r, chunk=C_r)
    trace.candidates.append(ct)
    W = clamp_window(C_r.start, C_r.end, movie.duration)                     # 5
    h = InspectContext(query=search.query, statements=dec.statements, cast=dec.cast,
                       ref_images=dec.ref_images, chunk=C_r, rank=r, duration=movie.duration,
                       M=search.M, delta_max=search.delta_max)
    frames = sent_frames(movie)(W[0], W[1], fps=1.0, cap=search.frame_cap) if search.with_frames else []
    h.observations.append(Observation(kind="initial", window=W, band=W, frames=list(frames),  # 6
                                      cues=list(movie.cues(W[0], W[1])), applied_cap=search.delta_max))
    for n in range(search.M + 1):                                            # 7
        search.check_stop()
        o, h = search.solver.inspect(h, allow_expand=(n < search.M), stop=search.stop,  # 8
                                     ref=search.ref)
        search.count("inspect", o.attempts)
        step = _record_step(n, W, o)
        if o.partner is not None:
            trace.partner_backend = o.partner.backend
        ct.steps.append(step)
        ct.final_window = W
        if n == search.M and step.decision == "EXPAND":                      # 9
            step.decision = "REJECT"                                         # 10
            step.converted_from_expand = True
        if step.decision == "EMIT":                                          # 12
            ct.outcome = "accepted"
            trace.accepted_rank = r
            trace.window = W
            search.update()
            return True
        if step.decision == "REJECT":                                        # 14
            ct.outcome = "rejected"
            H.append((W, h, ct, o))                                          # 15
            search.update()
            return False                                                     # 16
        W, h, obs = expand_window(W, h, o.reply.expand_direction,            # 17-18: new band only
                                  o.reply.expand_seconds, search.delta_max, movie,
                                  search.max_new_frames, search.with_frames)
        step.applied_seconds = obs.applied
        ct.final_window = W
        search.update()
    return False


def _keep(trace: SearchTrace, role: str, outcome: Any) -> None:
    """A role's reasoning, token counts and the compared backend's answer, into the trace."""
    setattr(trace, f"{role}_reasoning", outcome.reasoning)
    if outcome.usage:
        trace.usage[role] = outcome.usage
    if outcome.partner is not None:
        trace.partner_backend = outcome.partner.backend
        trace.partner[role] = outcome.partner.to_dict()


def _record_step(n: int, W: Window, o: InspectOutcome) -> InspectStep:
    kept = {"num_frames": o.frames_sent, "frames_dropped": o.frames_dropped,
            "reasoning": o.reasoning, "usage": o.usage,
            "partner": o.partner.to_dict() if o.partner is not None else None}
    if o.reply is None:  # unparsed after retries: REJECT, raw kept
        return InspectStep(n=n, window=W, checks=[], decision="REJECT", raw=o.raw,
                           parse_error=o.error or "unparsed reply", **kept)
    rep = o.reply
    return InspectStep(n=n, window=W, checks=rep.checks, decision=rep.decision,
                       confidence=rep.confidence, summary=rep.cooccurrence,
                       expand_side=rep.expand_direction if rep.decision == "EXPAND" else None,
                       expand_seconds=rep.expand_seconds if rep.decision == "EXPAND" else None,
                       raw=o.raw, **kept)


def _select(search: _Search, D: list[Statement], H: list[Rejected]) -> Window:
    """Select (line 22) among the rejected candidates, from their final summaries, confidences and
    midpoint frames."""
    trace = search.trace
    rejected = []
    for i, (W, _h, ct, o) in enumerate(H):
        last = ct.steps[-1]
        frame = None
        if search.with_frames:
            mid = (W[0] + W[1]) / 2.0
            frames = sent_frames(search.movie)(mid, mid + 1.0, fps=1.0, cap=1)
            frame = frames[0] if frames else None
        rejected.append(SelectCandidate(
            index=i, rank=ct.rank, chunk=ct.chunk, window=W, confidence=last.confidence,
            reasoning=_reasoning(last), frame=frame, checks=list(last.checks),
            score=o.reply.score if o.reply is not None else None))
    chosen = 0
    if len(rejected) > 1:
        search.check_stop()
        sel = search.solver.select(search.query, D, rejected, stop=search.stop, ref=search.ref)
        search.count("select", sel.attempts)
        trace.select_raw = sel.raw
        _keep(trace, "select", sel)
        if sel.index is None:
            trace.errors.append(f"{sel.error}; fell back to the highest-ranked rejected candidate")
            trace.fallbacks.append("select-unparsed")
        else:
            chosen = sel.index
    W, _, ct, _ = H[chosen]
    ct.outcome = "selected"
    trace.selected_rank = ct.rank
    return W
