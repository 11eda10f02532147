"""HAPACT's 18 body-region labels, their 7 evaluation groups, their colours and the words that name
them, and the body-part words of running text (`find_region_words`, the text-only baseline).

The vocabulary (labels, groups, colours, synonyms) lives in `assets/regions.json`
(the HAPACT paper, A.6.3, docs/body.md). A model's region reply is read by replies.py
(`read_region_answer`), with this vocabulary.
"""
from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path

ASSET = Path(__file__).resolve().parents[2] / "assets" / "regions.json"
SIDES = ("left", "right")


@lru_cache(maxsize=1)
def _vocabulary() -> dict:
    with open(ASSET, encoding="utf-8") as handle:
        return json.load(handle)


REGION_LABELS: tuple[str, ...] = tuple(_vocabulary()["labels"])
GROUPS: dict[str, tuple[str, ...]] = {g: tuple(ls) for g, ls in _vocabulary()["groups"].items()}
LABEL_GROUP: dict[str, str] = {label: g for g, labels in GROUPS.items() for label in labels}
REGION_COLORS: dict[str, str] = dict(_vocabulary()["colors"])
PALETTE: dict[str, str] = dict(_vocabulary()["palette"])
LEGEND_TEXT: dict[str, str] = dict(_vocabulary()["legend"])


def _synonyms() -> dict[str, tuple[str, ...]]:
    table = {key: tuple(values) for key, values in _vocabulary()["synonyms"].items()}
    for label in REGION_LABELS:  # every label names itself (sided labels through SIDE)
        words = label.split(" ", 1)
        if words[0] in SIDES:
            table.setdefault(words[1], (f"SIDE {words[1]}",))
        else:
            table.setdefault(label, (label,))
    return table


SYNONYMS: dict[str, tuple[str, ...]] = _synonyms()
#: the longest synonym, in words (phrases are matched longest first)
MAX_SYNONYM_WORDS = max(len(key.split()) for key in SYNONYMS)
#: words that name no part and change nothing ("the left calf area" is the left calf)
FILLERS = {"the", "a", "an", "his", "her", "their", "its", "my", "your", "both", "whole", "entire",
           "area", "areas", "region", "regions", "part", "parts", "body", "side", "sides", "s",
           "possibly", "probably", "likely", "maybe", "also", "mainly", "mostly", "slightly"}


def normalise(text: str) -> str:
    """Curly quotes made straight, stripped, lower case."""
    text = text.replace("\u201c", '"').replace("\u201d", '"').replace("\u2019", "'")
    return text.strip().lower()


def expand_sides(targets: list[str], sides: list[str]) -> list[str]:
    """Synonym targets -> labels: a 'SIDE <part>' target gets each of `sides` (both when none)."""
    labels: list[str] = []
    for target in targets:
        if target.startswith("SIDE "):
            part = target[len("SIDE "):]
            for side in (sides or list(SIDES)):
                labels.append(f"{side} {part}")
        else:
            labels.append(target)
    return labels


def dedupe(items: list[str]) -> list[str]:
    """The items in their first order, each once."""
    return list(dict.fromkeys(items))


def find_region_words(text: str) -> tuple[list[str], list[str]]:
    """Exact (no fuzzy) body-part words found anywhere in running text -> (labels, words found).

    Used by the text-only baseline: sides come from "left"/"right" written just before the part.
    """
    words = re.sub(r"[^a-z\s'-]", " ", normalise(text)).replace("-", " ").replace("'s", " ").split()
    words = [w.replace("'", "") for w in words]
    labels: list[str] = []
    found: list[str] = []
    i = 0
    side: list[str] = []
    while i < len(words):
        word = words[i]
        if word in ("left", "right"):
            side = [word]
            i += 1
            continue
        if word == "both":
            side = list(SIDES)
            i += 1
            continue
        for size in range(min(MAX_SYNONYM_WORDS + 1, len(words) - i), 0, -1):
            key = " ".join(words[i:i + size])
            # "the" inside phrases such as "behind the knees" / "back of the head"
            compact = " ".join(w for w in words[i:i + size] if w != "the")
            hit = key if key in SYNONYMS else (compact if compact in SYNONYMS and
                                                words[i] != "the" else None)
            if hit:
                labels.extend(expand_sides(list(SYNONYMS[hit]), side))
                found.append(" ".join(words[i:i + size]))
                i += size
                side = []
                break
        else:
            if word not in FILLERS:
                side = [] if word not in ("and", "his", "her", "their") else side
            i += 1
    return dedupe([label for label in labels if label in REGION_LABELS]), found

