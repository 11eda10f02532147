"""Text-only baseline for region selection: the body-part words of the query, no model, no image.

"A man is struck behind the knees by a staff." -> left calf, right calf (knee -> calf, plural and
no side -> both sides). A query that names no body part selects nothing, with the reason in
`RegionAnswer.note`. This is a floor to compare models against, not the paper's method.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from components.impact.prompts.regions import RegionAnswer
from components.impact.regions import find_region_words

if TYPE_CHECKING:
    from PIL import Image

BASELINE_NAME = "baseline (text-only: body-part words of the query)"


def baseline_regions(query: str) -> list[str]:
    """Labels named by the query's own words (synonyms included), in order of mention."""
    labels, _ = find_region_words(query or "")
    return labels


def baseline_answer(query: str) -> RegionAnswer:
    labels, words = find_region_words(query or "")
    if labels:
        note = f"text-only baseline: from the query words {', '.join(repr(w) for w in words)}"
    else:
        note = "text-only baseline: the query names no body part, so no region is selected"
    return RegionAnswer(labels=labels, unmapped=[], raw=", ".join(labels), source=BASELINE_NAME,
                        note=note)


class BaselineRegionSolver:
    """Same interface as ModelRegionSolver; the frame is ignored (text only)."""

    name = BASELINE_NAME
    needs_image = False

    def select(self, frame_image: Image.Image | None, query: str, **_: object) -> RegionAnswer:
        return baseline_answer(query)
