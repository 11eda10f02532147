"""Who answers Decompose / Inspect / Select and who localizes: the solver interface, the
model-backed solver (the paper's verifier prompts on any VLMBackend), the offline text-only
baseline, and `solvers_for`, the one place the tab decides model vs baseline.

The agent (agent.py) owns the control flow of Algorithm 1; a solver only answers one call.
Every answer comes back as an outcome dataclass carrying the raw text and the number of model
attempts (1 + retries), so the agent can count calls and keep unparsed text.
"""
from __future__ import annotations

import dataclasses
import json
import math
import re
import threading
from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass
from typing import Any
from collections.abc import Callable, Sequence

from backends.ask import Asked, ask, trim
from backends.base import EmbeddingBackend, GenerationParams, GenerationRequest, Message, VLMBackend
from backends.methods import method_for
from backends.pair import method_pair, same_request
from backends.errors import BackendError, GenerationStopped
from components.window_search import prompts
from components.window_search.localizer import Localizer, ModelLocalizer, SubtitleLocalizer
from components.window_search.memory import CharacterMemory, build_with_vlm
from components.window_search.replies import parse_decompose, parse_inspect, parse_select
from components.window_search.text_baseline import TextSimilarity, decompose_text
# CastOption, InspectContext, Observation, RefImage, RefOption, SelectCandidate and the outcomes
# used to live here; they are re-exported for older imports.
from components.window_search.types import CastOption, CastRef, DecomposeOutcome, InspectContext, \
    InspectOutcome, InspectReply, Observation, PartnerReply, RefImage, RefOption, SelectCandidate, \
    SelectOutcome, SearchSettings, Statement, StatementCheck

__all__ = ["CastOption", "DecomposeOutcome", "InspectContext", "InspectOutcome", "Observation",
           "RefImage", "RefOption", "SelectCandidate", "SelectOutcome", "WindowSolver",
           "ModelWindowSolver", "TextOnlyBaselineSolver", "WindowSearchSolvers", "solvers_for",
           "resolve_cast", "cap_frames", "count_frames", "decompose_text"]

# Section 5: "Decompose and Select use temperature 0.2, while Inspect uses temperature 0.4 and
# top probability 0.9." (top-p of Decompose/Select is not stated: 1.0.) "Thinking is disabled for
# all three roles": thinking=False (SearchSettings.thinking=None gives the server's default).
# max_tokens is ours (the paper states none): 1024 for the two JSON roles, 512 for Select.
DECOMPOSE_PARAMS = GenerationParams(temperature=0.2, top_p=1.0, max_tokens=1024, thinking=False)
INSPECT_PARAMS = GenerationParams(temperature=0.4, top_p=0.9, max_tokens=1024, thinking=False)
SELECT_PARAMS = GenerationParams(temperature=0.2, top_p=1.0, max_tokens=512, thinking=False)
MAX_RETRIES = 2  # re-asks of a malformed reply before it counts as unparsed


class WindowSolver(ABC):
    """Answers the three verifier roles of Algorithm 1."""

    is_text_only: bool = False

    @property
    @abstractmethod
    def backend_id(self) -> str: ...

    @abstractmethod
    def decompose(self, query: str, options: Sequence[CastOption], *,
                  stop: threading.Event | None = None, ref: str = "") -> DecomposeOutcome: ...

    @abstractmethod
    def inspect(self, ctx: InspectContext, *, allow_expand: bool,
                stop: threading.Event | None = None,
                ref: str = "") -> tuple[InspectOutcome, InspectContext]:
        """Answer Inspect call n = ctx.n; appends the raw reply to ctx.replies (the history)."""

    @abstractmethod
    def select(self, query: str, statements: Sequence[Statement],
               rejected: Sequence[SelectCandidate], *, stop: threading.Event | None = None,
               ref: str = "") -> SelectOutcome: ...


def resolve_cast(reply_cast: list[dict], options: Sequence[CastOption]) -> tuple[list[CastRef],
                                                                                 list[RefImage]]:
    """Map the model's cast entries ([C1], "C1:r2") back to memory characters and references.
    Unknown people are dropped (the prompt forbids inventing them); an unknown or missing
    reference label falls back to the person's first loadable reference."""
    by_cid = {o.cid: o for o in options}
    by_char = {o.char_id: o for o in options}
    by_name = {n.lower(): o for o in options for n in [o.display_name, *o.names]}
    cast: list[CastRef] = []
    images: list[RefImage] = []
    seen: set[str] = set()
    for entry in reply_cast:
        cid = str(entry.get("char_id") or entry.get("cid") or "").strip().strip("[]")
        name = str(entry.get("name") or "").strip()
        opt = by_cid.get(cid) or by_char.get(cid) or by_name.get(name.lower())
        if opt is None or opt.cid in seen:
            continue
        seen.add(opt.cid)
        label = str(entry.get("ref") or "").strip().strip("[]")
        usable = [r for r in opt.refs if r.image is not None] or opt.refs
        chosen = next((r for r in usable if r.label.strip("[]") == label), usable[0] if usable else None)
        shown = name or opt.display_name
        cast.append(CastRef(char_id=opt.char_id, name=shown,
                            ref_id=chosen.ref_id if chosen else None,
                            image=chosen.image_path if chosen else None,
                            time=chosen.time if chosen else None))
        images.append(RefImage(name=shown, image=chosen.image if chosen else None))
    return cast, images


# -- frames inside a conversation --------------------------------------------------------------
_MARKER = re.compile(r"<-?\d+(?:\.\d+)? seconds>$")


def _frame_positions(messages: list[Message]) -> list[tuple[int, int]]:
    """(message index, part index) of every timestamped frame: an image right after a text part
    ending in its "<T.T seconds>" marker (reference images have no marker)."""
    positions = []
    for mi, m in enumerate(messages):
        for pi, part in enumerate(m.content):
            if not isinstance(part, str) and pi > 0 and isinstance(m.content[pi - 1], str) \
                    and _MARKER.search(m.content[pi - 1].rstrip()):
                positions.append((mi, pi))
    return positions


def count_frames(messages: list[Message]) -> int:
    return len(_frame_positions(messages))


def cap_frames(messages: list[Message], limit: int) -> tuple[list[Message], int]:
    """Keep the request within `limit` images by dropping timestamped frames (a frame = its
    "<T.T seconds>" marker text plus the image after it) uniformly over the whole conversation;
    reference images are kept. Returns the new messages and the number of frames dropped."""
    positions = _frame_positions(messages)
    excess = sum(m.num_images() for m in messages) - limit
    if excess <= 0 or not positions:
        return messages, 0
    keep_n = max(0, len(positions) - excess)
    kept = set()
    if keep_n:
        step = len(positions) / keep_n
        kept = {positions[min(len(positions) - 1, int(math.floor((i + 0.5) * step)))]
                for i in range(keep_n)}
    drop = set(positions) - kept
    out = []
    for mi, m in enumerate(messages):
        parts = list(m.content)
        for pi in sorted((p for (i, p) in drop if i == mi), reverse=True):
            marker = parts[pi - 1]
            # remove the image and its marker line (the marker ends the preceding text part)
            head = marker.rstrip()[: -len(_MARKER.search(marker.rstrip()).group(0))].rstrip("\n")
            parts[pi - 1] = head
            del parts[pi]
        out.append(Message(m.role, prompts.merge_text(parts)))
    return out, len(drop)


# -- the model-backed solver --------------------------------------------------------------------
def _with_max_tokens(p: GenerationParams, max_tokens: int | None,
                     thinking: bool | None = False) -> GenerationParams:
    p = dataclasses.replace(p, thinking=thinking)
    return p if max_tokens is None else dataclasses.replace(p, max_tokens=max_tokens)


class ModelWindowSolver(WindowSolver):
    """The paper's zero-shot verifier: Appendix G prompts on any VLMBackend, Section 5 sampling.
    Section 5 also disables thinking: every request carries `thinking` (False by default; None
    leaves the server's default), which each backend sends as its server understands it.

    `max_frames` (the Model panel's "Max frames per request") bounds the timestamped frames of
    one request; the backend's image cap bounds all its images. Frames beyond either are dropped
    uniformly over the conversation (reference images are kept)."""

    is_text_only = False

    def __init__(self, backend: VLMBackend, *, max_retries: int = MAX_RETRIES,
                 max_tokens: int | None = None, max_frames: int | None = None,
                 decompose_params: GenerationParams | None = None,
                 inspect_params: GenerationParams | None = None,
                 select_params: GenerationParams | None = None, thinking: bool | None = False):
        self.backend = backend
        self.max_retries = max(0, int(max_retries))
        self.max_frames = max_frames
        self.decompose_params = decompose_params or _with_max_tokens(DECOMPOSE_PARAMS, max_tokens, thinking)
        self.inspect_params = inspect_params or _with_max_tokens(INSPECT_PARAMS, max_tokens, thinking)
        self.select_params = select_params or _with_max_tokens(SELECT_PARAMS, max_tokens, thinking)

    @property
    def backend_id(self) -> str:
        return self.backend.backend_id

    def _image_limit(self, messages: list[Message]) -> int | None:
        limits = []
        if self.max_frames is not None:
            others = sum(m.num_images() for m in messages) - count_frames(messages)
            limits.append(others + max(1, int(self.max_frames)))
        if self.backend.max_images is not None:
            limits.append(self.backend.max_images)
        return min(limits) if limits else None

    def _ask(self, messages: list[Message], params: GenerationParams, task: str, ref: str,
             parse: Callable[[str], Any], stop: threading.Event | None) -> tuple[Asked, int, int]:
        """Ask, parse, and re-ask a malformed reply at most `max_retries` times (backends.ask).
        Returns (what came of it, frames sent, frames dropped); `Asked.attempts` also counts the
        requests the server refused for their image count. A transport failure raises
        BackendError (it ends the search)."""
        limit = self._image_limit(messages)
        sent = cap_frames(messages, limit)[0] if limit is not None else messages
        refused = 0

        def drop(request: GenerationRequest, server_limit: int) -> GenerationRequest:
            nonlocal refused
            refused += 1  # the request fits our own cap, so only a server refusal gets here
            # spread the kept frames over the whole conversation again, as for our own cap
            return dataclasses.replace(request, messages=cap_frames(messages, server_limit)[0])

        request = GenerationRequest(messages=sent, params=params, task=task, ref=ref, cancel=stop)
        asked = ask(self.backend, request, parse, attempts=1 + self.max_retries, on_too_many=trim(drop))
        if asked.failed:
            detail = (asked.error or "").removeprefix(f"{self.backend_id} failed: ")
            raise BackendError(f"{self.backend_id} failed on {task}: {detail}")
        asked.attempts += refused
        frames_sent = count_frames((asked.request or request).messages)
        return asked, frames_sent, count_frames(messages) - frames_sent

    def decompose(self, query, options, *, stop=None, ref=""):
        messages = prompts.decompose_messages(query, options)
        asked, _, _ = self._ask(messages, self.decompose_params, "aws.decompose", ref,
                                parse_decompose, stop)
        kept = {"reasoning": asked.reasoning, "usage": usage_dict(asked),
                "partner": partner_reply(asked, lambda v: {"statements": [asdict(x) for x in v.statements],
                                                           "cast": v.cast})}
        if asked.value is None:
            # No checklist could be read: check the query itself as the single statement.
            return DecomposeOutcome([Statement("s1", query)], [], [], asked.raw, asked.attempts,
                                    f"Decompose: {asked.error}", **kept)
        cast, images = resolve_cast(asked.value.cast, options)
        return DecomposeOutcome(asked.value.statements, cast, images, asked.raw, asked.attempts,
                                **kept)

    def inspect(self, ctx, *, allow_expand, stop=None, ref=""):
        messages = prompts.inspect_messages(ctx, allow_expand)
        ids = [s.sid for s in ctx.statements]
        asked, sent, dropped = self._ask(messages, self.inspect_params, "aws.inspect", ref,
                                         lambda t: parse_inspect(t, ids), stop)
        ctx.replies.append(asked.raw)  # the conversation goes on with the session model's reply
        return InspectOutcome(asked.value, asked.raw, asked.attempts, asked.error, sent, dropped,
                              reasoning=asked.reasoning, usage=usage_dict(asked),
                              partner=partner_reply(asked, asdict)), ctx

    def select(self, query, statements, rejected, *, stop=None, ref=""):
        messages = prompts.select_messages(query, statements, rejected)
        asked, _, _ = self._ask(messages, self.select_params, "aws.select", ref,
                                lambda t: parse_select(t, len(rejected)), stop)
        kept = {"reasoning": asked.reasoning, "usage": usage_dict(asked),
                "partner": partner_reply(asked, lambda v: {"selected_index": v.index})}
        if asked.value is None:
            return SelectOutcome(None, asked.raw, asked.attempts, f"Select: {asked.error}", **kept)
        return SelectOutcome(asked.value.index, asked.raw, asked.attempts, **kept)


def usage_dict(asked: Asked) -> dict | None:
    """The last reply's token counts as JSON (None when the backend gave none)."""
    return asked.usage.as_dict() if asked.usage is not None else None


def partner_reply(asked: Asked, as_json: Callable[[Any], Any]) -> PartnerReply | None:
    """The compared backend's answer to the same request (None when the backend is not paired);
    `as_json` turns its parsed value into JSON."""
    other = asked.partner
    if other is None:
        return None
    return PartnerReply(backend=other.backend, value=as_json(other.value) if other.ok else None,
                        raw=other.raw, reasoning=other.reasoning, error=other.error,
                        attempts=other.attempts, usage=usage_dict(other), pair_id=asked.pair_id,
                        same_request=same_request(asked.request, other.request))


# -- the text-only baseline solver --------------------------------------------------------------
class TextOnlyBaselineSolver(WindowSolver):
    """TEXT-ONLY baseline (no model, no frames): decomposition by rules, inspection from the
    window's subtitles only, Select by the most true statements. Results are labelled
    `text_only_baseline` in the trace.

    Inspect rule, per statement: the best-matching cue in the visible window (similarity >=
    threshold) makes it "true"; a best match within `edge_s` seconds of a window edge that is not
    the movie's own start/end makes it "cutoff" on that side; no cue above threshold: "false".
    Decision: all true -> EMIT (confidence = mean best similarity); any false -> REJECT
    (confidence = share of false statements); else EXPAND by delta_max toward the side with more
    cutoffs (ties: the side of the first cutoff). A residual EXPAND after the budget is converted to
    REJECT by the agent (Algorithm 1 lines 9-10)."""

    is_text_only = True

    def __init__(self, embedder: EmbeddingBackend | str | None = None, *,
                 threshold: float | None = None, edge_s: float = 5.0):
        self.similarity = TextSimilarity(embedder)
        self.threshold = threshold if threshold is not None else self.similarity.threshold
        self.edge_s = edge_s

    @property
    def backend_id(self) -> str:
        return f"baseline:text-only({self.similarity.method})"

    def decompose(self, query, options, *, stop=None, ref=""):
        texts = decompose_text(query)
        statements = [Statement(f"s{i}", t) for i, t in enumerate(texts, 1)] or \
            [Statement("s1", query)]
        lowered = f" {query.lower()} "
        chosen = []
        for opt in options:  # cast: candidates whose name is written in the query, first reference
            if any(re.search(rf"\b{re.escape(n.lower())}\b", lowered) for n in
                   [opt.display_name, *opt.names] if n):
                usable = [r for r in opt.refs if r.image is not None] or opt.refs
                chosen.append({"char_id": opt.cid, "name": opt.display_name,
                               "ref": usable[0].label.strip("[]") if usable else None})
        cast, images = resolve_cast(chosen, options)
        raw = json.dumps({"statements": [{"id": s.sid, "text": s.text} for s in statements],
                          "cast": chosen}, ensure_ascii=False)
        return DecomposeOutcome(statements, cast, images, raw, attempts=1)

    def _check(self, statement: Statement, row: list[float], cues: list, window: tuple[float, float],
               duration: float) -> tuple[StatementCheck, float, str | None]:
        """One statement's verdict, its best similarity, and the cut-off side (if any)."""
        s, e = window
        if not row or max(row) < self.threshold:
            best = max(row) if row else 0.0
            return StatementCheck(statement.sid, "false",
                                  f"no subtitle matches (best similarity {best:.2f})"), best, None
        j = max(range(len(row)), key=row.__getitem__)
        cue, best = cues[j], row[j]
        note = f'subtitle at {cue.start:.1f} s matches ({best:.2f}): "{cue.text[:60]}"'
        if cue.start - s < self.edge_s and s > 0:
            return StatementCheck(statement.sid, "cutoff", note + "; at the left edge"), best, "left"
        if e - cue.end < self.edge_s and e < duration:
            return StatementCheck(statement.sid, "cutoff", note + "; at the right edge"), best, "right"
        return StatementCheck(statement.sid, "true", note), best, None

    def inspect(self, ctx, *, allow_expand, stop=None, ref=""):
        if stop is not None and stop.is_set():
            raise GenerationStopped("stopped by the user")
        s, e = ctx.window
        cues = [c for c in ctx.cues() if c.end > s and c.start < e]
        sims = self.similarity.matrix([st.text for st in ctx.statements], [c.text for c in cues])
        verdicts = [self._check(st, row, cues, (s, e), ctx.duration)
                    for st, row in zip(ctx.statements, sims)]
        checks = [v[0] for v in verdicts]
        sides = [v[2] for v in verdicts if v[2] is not None]
        n_false = sum(c.status == "false" for c in checks)
        mean = sum(v[1] for v in verdicts) / max(1, len(checks))
        decision, conf, side, secs = _baseline_decision(n_false, len(checks), sides, mean, ctx.delta_max)
        summary = (f"text-only: {len(checks) - n_false - len(sides)} true, {len(sides)} cutoff, "
                   f"{n_false} false from {len(cues)} subtitle cues in [{s:.1f}, {e:.1f}] s")
        reply = InspectReply(checks=checks, decision=decision, confidence=round(conf, 4),
                             cooccurrence=summary, expand_direction=side, expand_seconds=secs,
                             score=mean)
        raw = json.dumps({"statements": [{"id": c.sid, "note": c.note, "holds": c.status}
                                         for c in checks], "cooccurrence": summary,
                          "decision": decision, "confidence": round(conf, 4),
                          "expand_direction": side, "expand_seconds": secs}, ensure_ascii=False)
        ctx.replies.append(raw)
        return InspectOutcome(reply, raw, attempts=1), ctx

    def select(self, query, statements, rejected, *, stop=None, ref=""):
        def key(c: SelectCandidate):
            return (sum(ch.status == "true" for ch in c.checks), c.score or 0.0, -c.index)
        best = max(rejected, key=key)
        raw = json.dumps({"selected_index": best.index,
                          "reasoning": "most true statements, then highest mean similarity"})
        return SelectOutcome(best.index, raw, attempts=1)


def _baseline_decision(n_false: int, n: int, sides: list[str], mean: float,
                       delta_max: float) -> tuple[str, float, str | None, float | None]:
    """(decision, confidence, expand side, expand seconds) of the text-only Inspect rule."""
    if n_false:
        return "REJECT", n_false / max(1, n), None, None
    if sides:
        left, right = sides.count("left"), sides.count("right")
        side = "left" if left > right or (left == right and sides[0] == "left") else "right"
        return "EXPAND", 0.5, side, delta_max
    return "EMIT", min(1.0, max(0.0, mean)), None, None


class MethodPairSolver(WindowSolver):
    """Two no-model methods side by side ("compare with" between `baseline:text` and
    `baseline:rag`): the first steers the search; the second answers every call on the same
    checklist and window, its answers kept as the compared side's (`PartnerReply`), as a compared
    model's are."""

    is_text_only = True

    def __init__(self, first: WindowSolver, second: WindowSolver, second_label: str = ""):
        self.first, self.second = first, second
        self.second_label = second_label or second.backend_id

    @property
    def backend_id(self) -> str:
        return self.first.backend_id

    def _partner(self, value: Any, raw: str) -> PartnerReply:
        return PartnerReply(backend=self.second_label, value=value, raw=raw, attempts=1)

    def decompose(self, query, options, *, stop=None, ref=""):
        mine = self.first.decompose(query, options, stop=stop, ref=ref)
        theirs = self.second.decompose(query, options, stop=stop, ref=ref)
        cast = json.loads(theirs.raw).get("cast", []) if theirs.raw else []
        mine.partner = self._partner({"statements": [asdict(x) for x in theirs.statements], "cast": cast},
                                     theirs.raw)
        return mine

    def inspect(self, ctx, *, allow_expand, stop=None, ref=""):
        # the second answers the same context; the conversation goes on with the first's reply
        theirs, _ = self.second.inspect(dataclasses.replace(ctx, replies=list(ctx.replies)),
                                        allow_expand=allow_expand, stop=stop, ref=ref)
        mine, ctx = self.first.inspect(ctx, allow_expand=allow_expand, stop=stop, ref=ref)
        mine.partner = self._partner(asdict(theirs.reply) if theirs.reply else None, theirs.raw)
        return mine, ctx

    def select(self, query, statements, rejected, *, stop=None, ref=""):
        mine = self.first.select(query, statements, rejected, stop=stop, ref=ref)
        theirs = self.second.select(query, statements, rejected, stop=stop, ref=ref)
        mine.partner = self._partner({"selected_index": theirs.index}, theirs.raw)
        return mine


#: window search's no-model methods (backends.methods): text = word overlap, rag = MiniLM
#: embeddings of the subtitles; plain `baseline` keeps MiniLM where it loads (else word overlap)
METHODS = ("text", "rag")


def _method_embedder(backend: VLMBackend, embedder: EmbeddingBackend | str | None) -> EmbeddingBackend | str | None:
    method = method_for(backend, METHODS, "")
    if method == "text":
        return "lexical"
    if method == "rag":
        return embedder if embedder not in (None, "lexical") else "minilm"
    return embedder


# -- the one factory --------------------------------------------------------------------------------
#: (movie, path, progress=..., stop=...) -> (memory, stats); see memory.build_with_vlm
MemoryBuilder = Callable[..., tuple[CharacterMemory, dict]]


@dataclass(frozen=True)
class WindowSearchSolvers:
    """Everything that answers for one backend: the verifier, the localizer, the character-
    memory builder (None without a vision model) and the model itself (None for the baseline;
    chunk captions need it)."""

    verifier: WindowSolver
    localizer: Localizer
    memory_builder: MemoryBuilder | None = None
    model: VLMBackend | None = None

    @property
    def text_only(self) -> bool:
        return self.model is None


def solvers_for(backend: VLMBackend, settings: SearchSettings | None = None, *,
                embedder: EmbeddingBackend | str | None = None,
                localizer_backend: VLMBackend | None = None) -> WindowSearchSolvers:
    """The solvers `backend` gets: the text-only baseline and the subtitle localizer for the
    baseline backend, the paper's verifier and the VLM localizer for any model. The localizer is
    its own model (the paper keeps TimeLens2 apart from the verifier): `localizer_backend`, by
    default the verifier's backend; a baseline localizer backend gets the subtitle localizer.
    `settings` carries the localizer's fps and frame budget, the thinking switch and
    `max_frames`, the Model panel's cap on frames per request (it lowers the paper's counts, never
    raises them)."""
    settings = settings or SearchSettings()
    loc_backend = localizer_backend or backend
    if loc_backend.is_baseline:
        first = (method_pair(loc_backend) or (loc_backend,))[0]
        localizer: Localizer = SubtitleLocalizer(_method_embedder(first, embedder))
    else:
        localizer = ModelLocalizer(loc_backend, fps=settings.localize_fps,
                                   cap=settings.capped(settings.localize_cap), thinking=settings.thinking)
    if backend.is_baseline:
        methods = method_pair(backend)
        if methods is not None:
            first, second = (TextOnlyBaselineSolver(embedder=_method_embedder(b, embedder)) for b in methods)
            label = f"{methods[1].backend_id} ({second.similarity.method})"
            return WindowSearchSolvers(verifier=MethodPairSolver(first, second, label), localizer=localizer)
        return WindowSearchSolvers(verifier=TextOnlyBaselineSolver(embedder=_method_embedder(backend, embedder)),
                                   localizer=localizer)
    max_frames = settings.max_frames
    # the character memory and chunk captions are the session model's own (a compared backend
    # answers the search's requests, not these)
    own = getattr(backend, "primary", backend)

    def memory_builder(movie, path, **kw) -> tuple[CharacterMemory, dict]:
        return build_with_vlm(movie, own, path, max_frames=max_frames, **kw)

    return WindowSearchSolvers(
        verifier=ModelWindowSolver(backend, max_frames=max_frames, thinking=settings.thinking),
        localizer=localizer, memory_builder=memory_builder, model=own)
