"""SRT / WebVTT loading with pysubs2. (SKELETON: media helper implements.)"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Cue:
    start: float  # seconds
    end: float
    text: str


def load_subtitles(path: str | Path) -> list[Cue]: ...
def cues_in_window(cues: list[Cue], start: float, end: float) -> list[Cue]: ...
