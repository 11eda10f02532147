"""Every data type of window search, in one module (pure dataclasses; imports nothing of the tab).

- The trace (`SearchTrace` and its parts): the UI's checklists and the exported trace. It
  round-trips through `to_dict` / `from_dict` (JSON-safe), so a saved trace can be browsed
  without any model.
- The verifier's parsed replies (`DecomposeReply`, `InspectReply`, `SelectReply`; replies.py
  parses them).
- What the agent hands a solver (`CastOption`, `InspectContext`, `SelectCandidate`, ...) and what
  a solver answers (`DecomposeOutcome`, `InspectOutcome`, `SelectOutcome`).
- The localizer's answer (`LocalizeResult`) and the search budget (`SearchSettings`).
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from components.base.errors import UserError

if TYPE_CHECKING:  # keep PIL out of `python app.py --help`
    from PIL import Image

Status = Literal["true", "false", "cutoff"]
Decision = Literal["EMIT", "EXPAND", "REJECT"]
Window = tuple[float, float]


# -- the trace ----------------------------------------------------------------------------------
@dataclass
class Statement:
    sid: str   # "s1", "s2", ...
    text: str


@dataclass
class CastRef:
    char_id: str
    name: str
    ref_id: str | None = None
    image: str | None = None  # path of the reference image
    time: float | None = None


@dataclass
class Chunk:
    index: int      # 0-based chunk number in the movie
    start: float
    end: float
    score: float | None = None  # retrieval similarity
    rank: int | None = None     # 1-based retrieval rank


@dataclass
class StatementCheck:
    sid: str
    status: Status
    note: str = ""


@dataclass
class InspectStep:
    """One Inspect call (n = 0..M) on a candidate, with the window it saw."""

    n: int
    window: Window
    checks: list[StatementCheck]
    decision: Decision
    confidence: float | None = None
    summary: str = ""
    expand_side: str | None = None        # "left" | "right" (when decision == EXPAND)
    expand_seconds: float | None = None   # requested; applied value is min(request, 30)
    applied_seconds: float | None = None
    converted_from_expand: bool = False   # residual EXPAND after the budget -> REJECT
    raw: str = ""                          # model text (kept always; the only output when unparsed)
    parse_error: str | None = None         # set when retries ran out and the step became REJECT
    num_frames: int = 0
    frames_dropped: int = 0                # frames left out to respect the request's image cap
    reasoning: str = ""                    # the model's reasoning for this reply (never parsed)
    usage: dict | None = None              # token counts (backends.base.Usage.as_dict)
    #: the compared backend's answer to this same request ("compare with"): a `PartnerReply`
    #: as a dict (to_dict / from_dict keep it as it is)
    partner: dict | None = None


@dataclass
class CandidateTrace:
    rank: int                   # 1-based retrieval rank
    chunk: Chunk
    steps: list[InspectStep] = field(default_factory=list)
    final_window: Window | None = None
    outcome: Literal["accepted", "rejected", "not_inspected", "selected"] = "not_inspected"

    @property
    def span(self) -> Window:
        """The window as finally seen (the chunk when it was never inspected)."""
        return self.final_window or (self.chunk.start, self.chunk.end)


def _no_calls() -> dict[str, int]:
    return {"decompose": 0, "inspect": 0, "select": 0, "localize": 0, "retries": 0}


_SCALAR_KEYS = ("qid", "backend", "matched_characters", "accepted_rank", "selected_rank",
                "elapsed_s", "text_only_baseline", "stopped", "errors", "decompose_raw", "select_raw",
                "method", "source", "fallbacks", "localizer_backend", "localize_method",
                "localize_raw", "thinking", "decompose_reasoning", "select_reasoning",
                "localize_reasoning", "usage", "partner_backend", "partner")

#: how a prediction was obtained (`SearchTrace.source`, the predictions file's "source"):
#: model answers, scored by `eval grounding`
MODEL_SOURCES = {
    "emitted": "the localizer read an interval inside the window Inspect accepted (EMIT)",
    "selected": "every candidate was rejected; Select chose a window, the localizer read an "
                "interval inside it",
    "rag": "Movie RAG: the localizer read an interval inside the top-1 retrieved chunk",
    "oracle-chunk": "the localizer read an interval inside the oracle chunk",
    "baseline": "the text-only baseline (no model): its own rules, a method of its own",
}
#: fallbacks: a step's reply was unreadable and the app continued with a stated default; not
#: scored unless `eval grounding --score-fallbacks` (a diagnostic) asks for it
FALLBACKS = {
    "decompose-unparsed": "Decompose unreadable: the query itself was the only statement",
    "inspect-unparsed": "no Inspect reply could be read: every candidate was rejected unread",
    "select-unparsed": "Select unreadable: the highest-ranked rejected candidate was taken",
    "localizer-unparsed": "the localizer's reply was unreadable: the whole window was kept",
    "localizer-truncated": "the localizer's reply was cut at max_tokens: the whole window was kept",
}
UNPARSED = "unparsed"  # no interval at all


def fallback_source(why: str) -> str:
    return f"fallback:{why}"


def is_scored_source(source: str | None) -> bool:
    """Whether `eval grounding` scores a prediction of this source by default (a line without a
    source, from another tool, is scored as the answer it is)."""
    return not source or source in MODEL_SOURCES


def finite_json(value: Any) -> Any:
    """`value` with every non-finite float replaced by None (JSON has no NaN / Infinity)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite_json(v) for v in value]
    return value


def _window(x: Any) -> Window | None:
    return tuple(x) if x is not None else None


@dataclass
class SearchTrace:
    """Everything one query's search did: the UI's checklists and the exported trace."""

    query: str
    qid: str | None = None
    backend: str = ""
    statements: list[Statement] = field(default_factory=list)
    cast: list[CastRef] = field(default_factory=list)
    matched_characters: list[str] = field(default_factory=list)  # P (char ids)
    chunks: list[Chunk] = field(default_factory=list)            # ranked retrieval list (top K)
    candidates: list[CandidateTrace] = field(default_factory=list)
    accepted_rank: int | None = None
    selected_rank: int | None = None     # set when Select chose among rejected candidates
    window: Window | None = None         # W handed to the localizer
    prediction: Window | None = None     # localizer output [s, e]
    ground_truth: Window | None = None
    calls: dict[str, int] = field(default_factory=_no_calls)
    elapsed_s: float = 0.0
    text_only_baseline: bool = False
    stopped: bool = False
    errors: list[str] = field(default_factory=list)
    decompose_raw: str = ""
    select_raw: str = ""
    method: str = ""                  # "aws" | "rag" | "oracle-chunk"
    source: str = ""                  # how the prediction was obtained (MODEL_SOURCES, FALLBACKS)
    fallbacks: list[str] = field(default_factory=list)  # every fallback taken, in order
    localizer_backend: str = ""
    localize_method: str = ""         # LocalizeResult.method
    localize_raw: str = ""
    thinking: bool | None = None      # the thinking switch the model calls carried
    decompose_reasoning: str = ""     # each role's reasoning, apart from its reply (never parsed)
    select_reasoning: str = ""
    localize_reasoning: str = ""
    #: token counts per role: {"decompose" | "select" | "localize": Usage.as_dict()}
    usage: dict = field(default_factory=dict)
    #: "compare with": the backend asked the same requests, and its answers to the
    #: Decompose / Select / localize requests ({"decompose" | "select" | "localize":
    #: PartnerReply as a dict}); its Inspect answers are in each InspectStep.partner
    partner_backend: str = ""
    partner: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        """JSON-safe (non-finite numbers become null)."""
        return finite_json(asdict(self))

    @classmethod
    def from_dict(cls, d: dict) -> SearchTrace:
        trace = cls(query=d.get("query", ""))
        for key in _SCALAR_KEYS:
            if key in d:
                setattr(trace, key, d[key])
        if "calls" in d:
            trace.calls = dict(d["calls"])
        trace.usage, trace.partner = dict(trace.usage or {}), dict(trace.partner or {})
        trace.window, trace.prediction = _window(d.get("window")), _window(d.get("prediction"))
        trace.ground_truth = _window(d.get("ground_truth"))
        trace.statements = [Statement(**s) for s in d.get("statements", [])]
        trace.cast = [CastRef(**c) for c in d.get("cast", [])]
        trace.chunks = [Chunk(**c) for c in d.get("chunks", [])]
        trace.candidates = [_candidate_from_dict(c) for c in d.get("candidates", [])]
        return trace


def _candidate_from_dict(c: dict) -> CandidateTrace:
    steps = []
    for s in c.get("steps", []):
        s = dict(s)
        s["window"] = tuple(s["window"])
        s["checks"] = [StatementCheck(**x) for x in s.get("checks", [])]
        steps.append(InspectStep(**s))
    return CandidateTrace(rank=c["rank"], chunk=Chunk(**c["chunk"]), steps=steps,
                          final_window=_window(c.get("final_window")),
                          outcome=c.get("outcome", "not_inspected"))


# -- the verifier's replies (parsed by replies.py) ----------------------------------------------
@dataclass
class DecomposeReply:
    statements: list[Statement]
    cast: list[dict]  # {"char_id": "C1", "name": "...", "ref": "C1:r2"} as the model wrote them


@dataclass
class InspectReply:
    checks: list[StatementCheck]
    decision: str                      # EMIT | EXPAND | REJECT
    confidence: float | None = None
    cooccurrence: str = ""
    expand_direction: str | None = None
    expand_seconds: float | None = None  # None: not given (the agent then applies delta_max)
    score: float | None = None           # set by the text-only baseline (mean similarity)
    notes: list[str] = field(default_factory=list)


@dataclass
class SelectReply:
    index: int
    reasoning: str = ""


# -- what the agent hands a solver ---------------------------------------------------------------
@dataclass
class RefOption:
    label: str                      # "[C1:r1]", as shown in the Decompose prompt
    ref_id: str | None
    image_path: str | None
    time: float | None
    image: Image.Image | None     # loaded reference image (None: could not be loaded)


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
    image: Image.Image | None


@dataclass
class Observation:
    """What one user turn of a candidate's conversation shows: the initial window, or the new band
    revealed by one expansion (frames and cues of that band only)."""
    kind: str                             # "initial" | "expansion"
    window: Window                        # the whole visible window after this observation
    band: Window                          # the span this observation's frames/cues cover
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
    def window(self) -> Window:
        return self.observations[-1].window

    def cues(self) -> list:
        return [c for obs in self.observations for c in obs.cues]


@dataclass
class SelectCandidate:
    index: int                      # 0-based position in H
    rank: int
    chunk: Chunk
    window: Window                  # final (possibly expanded) window
    confidence: float | None
    reasoning: str
    frame: Any = None               # midpoint Frame (None for text-only solvers)
    checks: list[StatementCheck] = field(default_factory=list)
    score: float | None = None


# -- what a solver answers ------------------------------------------------------------------------
@dataclass
class PartnerReply:
    """The compared backend's answer to one request the session's backend was sent ("compare
    with"): the parsed answer as JSON (None: unparsed, failed or truncated), its raw reply and
    reasoning. It never steers the search."""

    backend: str
    value: Any = None
    raw: str = ""
    reasoning: str = ""
    error: str | None = None
    attempts: int = 0
    usage: dict | None = None
    pair_id: str = ""
    same_request: bool = True

    def to_dict(self) -> dict:
        return finite_json(asdict(self))


@dataclass
class DecomposeOutcome:
    statements: list[Statement]
    cast: list[CastRef]
    ref_images: list[RefImage]
    raw: str
    attempts: int
    error: str | None = None        # set when retries ran out (fallback: the query as s1)
    reasoning: str = ""
    usage: dict | None = None
    partner: PartnerReply | None = None


@dataclass
class InspectOutcome:
    reply: InspectReply | None      # None: unparsed after retries (the agent treats it as REJECT)
    raw: str
    attempts: int
    error: str | None = None
    frames_sent: int = 0
    frames_dropped: int = 0
    reasoning: str = ""
    usage: dict | None = None
    partner: PartnerReply | None = None


@dataclass
class SelectOutcome:
    index: int | None               # None: unparsed after retries
    raw: str
    attempts: int
    error: str | None = None
    reasoning: str = ""
    usage: dict | None = None
    partner: PartnerReply | None = None


# -- the localizer's answer ------------------------------------------------------------------------
@dataclass
class LocalizeResult:
    interval: Window
    raw: str = ""
    method: str = ""        # "vlm" | "vlm-relative" | "vlm-fallback-window" | "baseline-subtitles"
    #                         | "baseline-window"
    error: str | None = None
    attempts: int = 0
    truncated: bool = False  # the reply was cut at max_tokens
    reasoning: str = ""
    usage: dict | None = None
    partner: PartnerReply | None = None


# -- the search budget ----------------------------------------------------------------------------
@dataclass
class SearchSettings:
    """K, M, Delta_max and the frame counts of one search (paper §5 defaults)."""

    k: int = 5
    m: int = 3
    delta_max: float = 30.0
    max_new_frames: int = 32      # frames per expansion (paper §5)
    frame_cap: int | None = None  # frames per Inspect window (None: the agent's default)
    localize_fps: float = 1.0
    localize_cap: int = 32        # the localizer's frame budget (frames spread over the window)
    #: the thinking switch of every window-search call: False (CoM2 §5, "Thinking is disabled for
    #: all three roles"; the default), None: the server's default
    thinking: bool | None = False
    #: the Model panel's "Max frames per request": lowers the counts above, never raises them
    max_frames: int | None = None

    def __post_init__(self):
        if self.k < 1:
            raise UserError(f"K must be at least 1 (got {self.k}).")
        if self.m < 0:
            raise UserError(f"M must be 0 or more (got {self.m}).")
        if self.delta_max <= 0:
            raise UserError(f"Δmax must be > 0 seconds (got {self.delta_max}).")
        if self.max_frames is not None and self.max_frames < 1:
            raise UserError(f"max frames per request must be at least 1 (got {self.max_frames}).")

    def capped(self, count: int | None) -> int | None:
        """`count` frames lowered to `max_frames` (None: no count given)."""
        if self.max_frames is None:
            return count
        return self.max_frames if count is None else min(count, self.max_frames)
