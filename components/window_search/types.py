"""Data shared by the window-search pipeline, its UI and its traces (pure dataclasses).

Shared contract between the agent (agent.py), the baseline solver, the UI and trace export.
Every type round-trips through `to_dict` / `from_dict` (JSON-safe), so a saved trace can be browsed
without any model.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Literal

Status = Literal["true", "false", "cutoff"]
Decision = Literal["EMIT", "EXPAND", "REJECT"]


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
    window: tuple[float, float]
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
    frames_dropped: int = 0                # frames left out to respect the backend's image cap


@dataclass
class CandidateTrace:
    rank: int                   # 1-based retrieval rank
    chunk: Chunk
    steps: list[InspectStep] = field(default_factory=list)
    final_window: tuple[float, float] | None = None
    outcome: Literal["accepted", "rejected", "not_inspected", "selected"] = "not_inspected"


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
    window: tuple[float, float] | None = None       # W handed to the localizer
    prediction: tuple[float, float] | None = None   # localizer output [s, e]
    ground_truth: tuple[float, float] | None = None
    calls: dict[str, int] = field(default_factory=lambda: {"decompose": 0, "inspect": 0, "select": 0,
                                                           "localize": 0, "retries": 0})
    elapsed_s: float = 0.0
    text_only_baseline: bool = False
    stopped: bool = False
    errors: list[str] = field(default_factory=list)
    decompose_raw: str = ""
    select_raw: str = ""

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "SearchTrace":
        d = dict(d)
        def tup(x):
            return tuple(x) if x is not None else None
        trace = cls(query=d.get("query", ""))
        for k in ("qid", "backend", "matched_characters", "accepted_rank", "selected_rank",
                  "elapsed_s", "text_only_baseline", "stopped", "errors", "decompose_raw",
                  "select_raw"):
            if k in d:
                setattr(trace, k, d[k])
        if "calls" in d:
            trace.calls = dict(d["calls"])
        trace.window, trace.prediction = tup(d.get("window")), tup(d.get("prediction"))
        trace.ground_truth = tup(d.get("ground_truth"))
        trace.statements = [Statement(**s) for s in d.get("statements", [])]
        trace.cast = [CastRef(**c) for c in d.get("cast", [])]
        trace.chunks = [Chunk(**c) for c in d.get("chunks", [])]
        for c in d.get("candidates", []):
            steps = []
            for s in c.get("steps", []):
                s = dict(s)
                s["window"] = tuple(s["window"])
                s["checks"] = [StatementCheck(**x) for x in s.get("checks", [])]
                steps.append(InspectStep(**s))
            trace.candidates.append(CandidateTrace(
                rank=c["rank"], chunk=Chunk(**c["chunk"]), steps=steps,
                final_window=tup(c.get("final_window")), outcome=c.get("outcome", "not_inspected")))
        return trace
