"""A region reply read as (labels, unmapped phrases): the two things the region-parser tests check."""
from __future__ import annotations

from components.impact.replies import read_region_answer


def parse_region_labels(text: str | None) -> tuple[list[str], list[str]]:
    """Free text -> (labels in order of mention, phrases that mapped to nothing)."""
    reading = read_region_answer(text)
    return reading.labels, reading.unmapped
