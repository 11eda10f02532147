"""Which localizers a backend gets: the one place the Impact tab asks `backend.is_baseline`.

The baseline backend (no model) gets the motion-energy temporal baseline and the text-only region
baseline; any other backend gets the paper's Table 7 temporal prompt and A.6.3 region prompt.
"""
from __future__ import annotations

from dataclasses import dataclass

from backends.base import VLMBackend
from backends.pair import method_pair
from components.impact.region_baseline import BaselineRegionSolver
from components.impact.prompts.regions import ModelRegionSolver, RegionSolver
from components.impact.temporal_solvers import ModelTemporalSolver, MotionEnergyBaseline, TemporalSolver
from components.settings.session import SessionSettings


@dataclass(frozen=True)
class ImpactSolvers:
    """When (temporal) and where (regions) for one backend."""

    temporal: TemporalSolver
    regions: RegionSolver


def solvers_for(backend: VLMBackend, settings: SessionSettings | None = None, *,
                style: str | None = "auto", max_retries: int = 2) -> ImpactSolvers:
    """The solvers for `backend`; `settings.max_frames` (the Model panel's cap) bounds the frames
    sent per clip, `style` picks the Table 7 prompt variant (auto: from the model name)."""
    if backend.is_baseline:
        return ImpactSolvers(temporal=MotionEnergyBaseline(), regions=BaselineRegionSolver())
    max_frames = settings.max_frames if settings is not None else None
    return ImpactSolvers(
        temporal=ModelTemporalSolver(backend, style=style, max_frames=max_frames,
                                     max_retries=max_retries),
        regions=ModelRegionSolver(backend))


def single_method_note(backend: VLMBackend) -> str:
    """With two no-model methods compared (`baseline:<method>` on each side): why this tab shows
    one side ('' otherwise). Impact has one no-model method per task, so there is no second one."""
    methods = method_pair(backend)
    if methods is None:
        return ""
    return (f"Impact has one no-model method per task (motion energy for when, the query's body-part "
            f"words for where), so {methods[1].backend_id} adds no second side here; comparing "
            "methods side by side is for Window search and Cloze.")
