"""Two backends on the same search ("compare with"): what the side-by-side views show, read from
one SearchTrace (pure; no gradio).

The session's backend runs Algorithm 1 and its answers steer it; the compared backend is sent
exactly the same requests (backends.pair: built once, sent twice, one pair id per call) and its
answers are kept beside each step (`InspectStep.partner`, `SearchTrace.partner`). So both
checklists of a window judge the same frames against the same statements (the session model's
Decompose), and both intervals read the same window's frames. The compared backend's "accepted
window" is the first window on that path it would have accepted (EMIT), else the rejected
candidate its Select answer names; it never had a search of its own.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from components.window_search.types import InspectStep, SearchTrace, StatementCheck, Window


@dataclass(frozen=True)
class Checklist:
    """One backend's Inspect answer for one window."""

    backend: str
    decision: str | None          # EMIT | EXPAND | REJECT; None: unparsed, failed or truncated
    checks: list[StatementCheck]
    confidence: float | None
    raw: str
    reasoning: str
    error: str | None = None


@dataclass(frozen=True)
class StepPair:
    """Both checklists of Inspect call n on candidate `rank` (the same request)."""

    rank: int
    n: int
    window: Window
    first: Checklist
    second: Checklist
    same_request: bool
    pair_id: str

    @property
    def differing_statements(self) -> list[str]:
        """Statement ids the two judged differently (one judged and the other did not counts)."""
        a = {c.sid: c.status for c in self.first.checks}
        b = {c.sid: c.status for c in self.second.checks}
        return [sid for sid in sorted(set(a) | set(b), key=_sid_order) if a.get(sid) != b.get(sid)]

    @property
    def agree(self) -> bool:
        return self.first.decision == self.second.decision and not self.differing_statements


@dataclass(frozen=True)
class SearchPair:
    """Everything the two-backend views of one query need."""

    first_backend: str
    second_backend: str
    steps: list[StepPair] = field(default_factory=list)
    first_window: Window | None = None       # W the session model's search handed on
    second_window: Window | None = None      # the compared backend's choice on the same path
    second_window_how: str = ""              # "emitted" | "selected" | "" (none)
    first_prediction: Window | None = None
    second_prediction: Window | None = None  # its interval for the same localize request
    first_statements: list[str] = field(default_factory=list)
    second_statements: list[str] = field(default_factory=list)
    reasonings: dict[str, tuple[str, str]] = field(default_factory=dict)  # role -> (first, second)
    notes: list[str] = field(default_factory=list)

    @property
    def disagreements(self) -> list[str]:
        """One line per place the two differ, in the order the search met them."""
        out = []
        if self.first_statements and self.second_statements and \
                self.first_statements != self.second_statements:
            out.append("Decompose: different statements (Inspect checks the session model's)")
        for step in self.steps:
            if not step.agree:
                which = ", ".join(step.differing_statements)
                out.append(f"candidate {step.rank}, call {step.n}: {step.first.decision or 'unread'}"
                           f" vs {step.second.decision or 'unread'}"
                           + (f" (statements {which})" if which else ""))
        if self.first_window != self.second_window:
            out.append(f"accepted window: {_span(self.first_window)} vs {_span(self.second_window)}")
        if self.first_prediction != self.second_prediction:
            out.append(f"prediction: {_span(self.first_prediction)} vs "
                       f"{_span(self.second_prediction)}")
        return out


def _sid_order(sid: str) -> tuple[int, str]:
    digits = "".join(ch for ch in sid if ch.isdigit())
    return (int(digits) if digits else 0, sid)


def _span(w: Window | None) -> str:
    return "none" if w is None else f"[{w[0]:.1f}, {w[1]:.1f}] s"


def _first_checklist(trace: SearchTrace, step: InspectStep) -> Checklist:
    decision = None if step.parse_error else step.decision
    return Checklist(trace.backend, decision, list(step.checks), step.confidence, step.raw,
                     step.reasoning, step.parse_error)


def _second_checklist(partner: dict) -> Checklist:
    value = partner.get("value") or None
    checks = [StatementCheck(**c) for c in (value or {}).get("checks", [])]
    decision = value.get("decision") if value else None
    return Checklist(partner.get("backend", ""), decision, checks,
                     value.get("confidence") if value else None, partner.get("raw", ""),
                     partner.get("reasoning", ""), partner.get("error"))


def search_pair(trace: SearchTrace) -> SearchPair | None:
    """The two-backend view of a trace; None when no backend was compared."""
    if not trace.partner_backend:
        return None
    steps: list[StepPair] = []
    second_window, how = None, ""
    for candidate in trace.candidates:
        for step in candidate.steps:
            if step.partner is None:
                continue
            pair = StepPair(candidate.rank, step.n, tuple(step.window),
                            _first_checklist(trace, step), _second_checklist(step.partner),
                            bool(step.partner.get("same_request", True)),
                            step.partner.get("pair_id", ""))
            steps.append(pair)
            if second_window is None and pair.second.decision == "EMIT":
                second_window, how = pair.window, "emitted"
    partner = trace.partner
    notes = []
    select = partner.get("select")
    if second_window is None and select and select.get("value"):
        rejected = [c for c in trace.candidates if c.outcome in ("rejected", "selected")]
        index = select["value"].get("selected_index")
        if isinstance(index, int) and 0 <= index < len(rejected):
            second_window, how = rejected[index].span, "selected"
    localize = partner.get("localize") or {}
    value = localize.get("value") or {}
    second_prediction = tuple(value["interval"]) if value.get("interval") else None
    if localize and second_prediction is None:
        notes.append(f"{trace.partner_backend}: the localizer reply was not read "
                     f"({localize.get('error') or 'unparsed'})")
    decompose = partner.get("decompose") or {}
    second_statements = [s.get("text", "") for s in
                         ((decompose.get("value") or {}).get("statements") or [])]
    reasonings = {role: (getattr(trace, f"{role}_reasoning", ""),
                         (partner.get(role) or {}).get("reasoning", ""))
                  for role in ("decompose", "select", "localize") if role in partner}
    return SearchPair(trace.backend, trace.partner_backend, steps,
                      first_window=tuple(trace.window) if trace.window else None,
                      second_window=second_window, second_window_how=how,
                      first_prediction=tuple(trace.prediction) if trace.prediction else None,
                      second_prediction=second_prediction,
                      first_statements=[s.text for s in trace.statements],
                      second_statements=second_statements, reasonings=reasonings, notes=notes)
