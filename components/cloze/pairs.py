"""Two backends on the same Cloze question ("compare with"): both records from one request and
whether they agree, for the tab's side-by-side view (pure; no gradio).

The session's paired backend (backends.pair) sends the question's one request (the same 96
frames, the same prompt) to both models; each side is re-asked on its own within the released 3
attempts. Each record is the released result record the model would get alone (answer, correct,
raw, reasoning, ...).
"""
from __future__ import annotations

from dataclasses import dataclass

from backends.pair import same_request
from components.cloze.data import Instance
from components.cloze.questions import Question
from components.cloze.solvers import ClozeSolvers
from components.base.errors import UserError


@dataclass(frozen=True)
class ClozePair:
    """Both backends' records for one question. `first` is the session's model, `second` the
    model it is compared with."""

    first: dict
    second: dict
    pair_id: str
    same_request: bool

    @property
    def agree(self) -> bool:
        """Both chose the same letter (both unreadable also counts as agreeing on nothing)."""
        return self.first.get("answer") == self.second.get("answer")

    @property
    def disagreement(self) -> str:
        """One line on where the two differ ('' when they agree)."""
        if self.agree:
            return ""
        omap = self.first.get("option_map") or {}

        def said(rec: dict) -> str:
            letter = rec.get("answer")
            if letter is None:
                return f"{rec.get('backend')}: no answer ({rec.get('error') or 'unparsed'})"
            return f"{rec.get('backend')}: {letter} ({omap.get(letter, '?')})"

        return f"{said(self.first)} vs {said(self.second)}"


def answer_pair(solvers: ClozeSolvers, inst: Instance, q: Question) -> ClozePair:
    """Both records for question `q` (the solvers' backend must be paired): two models from one
    request, or two no-model methods each on the question (no request: `same_request`)."""
    methods = getattr(solvers.solver, "answer_methods", None)
    if methods is not None:
        first_name, second_name = solvers.solver.first.name, solvers.solver.second.name
        if first_name == second_name:
            raise UserError(f"Both sides run the same method here ({first_name}; plain 'baseline' runs "
                            "the Baseline chosen under Model settings): choose two different methods "
                            "(baseline:edge1, baseline:edge4) in the Model panel.")
        first, second = methods(inst, q)
        return ClozePair(first, second, "", True)
    answer_pair_of = getattr(solvers.solver, "answer_pair", None)
    if answer_pair_of is None:
        raise UserError("\"Compare with\" needs two model backends: the edge baseline asks no "
                        "model.")
    first, second, asked = answer_pair_of(inst, q)
    return ClozePair(first, second, asked.pair_id,
                     same_request(asked.request, asked.partner.request))
