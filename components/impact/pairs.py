"""Two backends on the same clip ("compare with"): both answers to one request and where they
disagree, for the Impact tab's side-by-side views (pure; no gradio).

The tab's solvers get a paired backend (backends.pair) from the session; `temporal_pair` and
`region_pair` ask once through it, so both models see the same frames and the same prompt, and
give both predictions, both raw replies, both reasonings and the disagreement.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from backends.pair import partner_id, same_request
from components.base.errors import UserError
from components.impact.solvers import ModelRegionSolver, RegionAnswer, region_answer
from components.impact.solvers import ModelTemporalSolver, TemporalPrediction

if TYPE_CHECKING:
    import threading

    from PIL import Image

    from components.impact.data import ImpactItem

Span = tuple[float, float]


@dataclass(frozen=True)
class TemporalPair:
    """Both moment sets for one clip. `only_first` / `only_second`: the spans (seconds) that one
    side's predicted windows cover and the other's do not, merged and in order."""

    first: TemporalPrediction
    second: TemporalPrediction
    pair_id: str
    same_request: bool
    only_first: list[Span] = field(default_factory=list)
    only_second: list[Span] = field(default_factory=list)

    @property
    def agree(self) -> bool:
        """Same status and the same covered time (to the millisecond)."""
        return (self.first.status == self.second.status and not self.only_first
                and not self.only_second)


@dataclass(frozen=True)
class RegionPair:
    """Both region answers for one frame, with the labels only one side chose."""

    first: RegionAnswer
    second: RegionAnswer
    pair_id: str
    same_request: bool

    @property
    def only_first(self) -> list[str]:
        return [label for label in self.first.labels if label not in self.second.labels]

    @property
    def only_second(self) -> list[str]:
        return [label for label in self.second.labels if label not in self.first.labels]

    @property
    def both(self) -> list[str]:
        return [label for label in self.first.labels if label in self.second.labels]

    @property
    def agree(self) -> bool:
        return (self.first.ok == self.second.ok and not self.only_first
                and not self.only_second)


def merged(spans: list[Span]) -> list[Span]:
    """Spans sorted and merged where they overlap or touch (within 1 ms)."""
    out: list[list[float]] = []
    for start, end in sorted((min(s, e), max(s, e)) for s, e in spans):
        if out and start <= out[-1][1] + 1e-3:
            out[-1][1] = max(out[-1][1], end)
        else:
            out.append([start, end])
    return [(s, e) for s, e in out]


def minus(spans: list[Span], cut: list[Span]) -> list[Span]:
    """The parts of merged `spans` outside merged `cut` (pieces under 1 ms dropped)."""
    out: list[Span] = []
    cut = merged(cut)
    for start, end in merged(spans):
        pos = start
        for c_start, c_end in cut:
            if c_end <= pos or c_start >= end:
                continue
            if c_start > pos:
                out.append((pos, c_start))
            pos = max(pos, c_end)
        if end - pos > 1e-3:
            out.append((pos, end))
    return [(s, e) for s, e in out if e - s > 1e-3]


def _windows(pred: TemporalPrediction) -> list[Span]:
    return [(float(w[0]), float(w[1])) for w in pred.windows]


def _paired(solver) -> str:
    partner = partner_id(solver.backend)
    if not partner:
        raise UserError("No second backend to compare with: choose one under \"Compare with\" in "
                        "the Model panel.")
    return partner


def temporal_pair(solver: ModelTemporalSolver, item: ImpactItem,
                  cancel: threading.Event | None = None) -> TemporalPair:
    """Both backends' moments for `item`, from one request sent to both."""
    partner = _paired(solver)
    asked = solver.ask(item, cancel)
    first = solver.prediction(asked, item)
    second = solver.prediction(asked.partner, item,
                               method=f"{partner} (Table 7, {solver.style} prompt)")
    a, b = _windows(first), _windows(second)
    return TemporalPair(first, second, asked.pair_id,
                        same_request(asked.request, asked.partner.request),
                        only_first=minus(a, b), only_second=minus(b, a))


def region_pair(solver: ModelRegionSolver, frame_image: Image.Image | None, query: str, *,
                ref: str = "", cancel: threading.Event | None = None) -> RegionPair:
    """Both backends' regions for one frame, from one request sent to both."""
    partner = _paired(solver)
    asked = solver.ask(frame_image, query, ref=ref, cancel=cancel)
    return RegionPair(region_answer(asked, solver.name), region_answer(asked.partner, partner),
                      asked.pair_id, same_request(asked.request, asked.partner.request))
