"""HAPACT's 18 body-region labels, their 7 evaluation groups, and a parser for free-text answers.

The vocabulary (labels, groups, colours, synonyms) lives in `assets/regions.json`
(papers/hapact.md A.6.3, reference/body.md).

Parser choices (`parse_region_labels`):
- The answer may carry the paper's answer format ("The affected body regions are ..."); that
  prefix is dropped. Items are split on commas, semicolons, new lines, "and", "&", "/" and "+".
- Each item is matched, longest phrase first, against the 18 labels and the synonym table
  (face/skull/jaw -> head, stomach/ribs -> chest, shin/knee -> calf, buttocks -> butt, ...).
- Left/right are the body's own sides, taken from the words "left"/"right" in the item. An item
  with no side that names a sided part ("hand", "calves", "legs", "both knees") gets both sides:
  the parser never guesses one side. A bare side word ("left and right calves") passes to the
  next item, and a part with no side inherits the side of the item before it within the same
  comma-separated chunk ("left calf and thigh" -> left calf, left thigh).
- "leg(s)" -> thigh + calf, "arm(s)" -> upper arm + forearm, "torso" -> chest + back.
- Typos: words that match nothing are compared with difflib (ratio >= 0.85, words of at least
  3 letters) against the synonym keys, and side words against left/right/both: "rigth calf"
  -> right calf; one swap of neighbouring letters also counts ("lfet" -> left), since difflib
  scores those low. Candidates must share the first letter, and the cutoff is not lower, so
  unrelated words ("harm" ~ arm, "deck" ~ neck) stay unmapped.
- "None"/"nothing"/"no region" is an explicit empty answer: no labels and nothing unmapped.
- Items that match nothing are returned verbatim as unmapped, never guessed.
"""
from __future__ import annotations

import difflib
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
_MAX_WORDS = max(len(key.split()) for key in SYNONYMS)
_FILLERS = {"the", "a", "an", "his", "her", "their", "its", "my", "your", "both", "whole", "entire",
            "area", "areas", "region", "regions", "part", "parts", "body", "side", "sides", "s",
            "possibly", "probably", "likely", "maybe", "also", "mainly", "mostly", "slightly"}
_NONE_ANSWERS = {"none", "nothing", "n/a", "na", "no region", "no regions", "no body region",
                 "no body regions", "no affected region", "no affected regions", "none of them",
                 "none of the above", "no body part", "no body parts"}
_PREFIX = re.compile(r"^.*?\baffected\s+body[\s-]*regions?\s*(?:are|is|:)\s*:?", re.S)
_CHUNK_SPLIT = re.compile(r"[,;\n]+")
_ITEM_SPLIT = re.compile(r"\band\b|&|/|\+|\bplus\b|\bas well as\b")
FUZZY_CUTOFF = 0.85


def _normalise(text: str) -> str:
    text = text.replace("\u201c", '"').replace("\u201d", '"').replace("\u2019", "'")
    return text.strip().lower()


def is_none_answer(text: str) -> bool:
    """True for an explicit empty answer such as "None" or "The affected body regions are none."."""
    body = _PREFIX.sub("", _normalise(text or ""))
    body = re.sub(r"[\"'`.\[\]()*!]", " ", body)
    return " ".join(body.split()) in _NONE_ANSWERS


def _one_swap(a: str, b: str) -> bool:
    """True when b is a with two neighbouring letters swapped ("lfet" -> "left")."""
    if len(a) != len(b) or a == b:
        return False
    diff = [i for i in range(len(a)) if a[i] != b[i]]
    return len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] \
        and a[diff[1]] == b[diff[0]]


def _closest(token: str, candidates) -> str | None:
    """difflib match at FUZZY_CUTOFF, or a single neighbouring-letter swap (difflib scores those low)."""
    swapped = [c for c in candidates if _one_swap(token, c)]
    if swapped:
        return swapped[0]
    same_start = [c for c in candidates if c[:1] == token[:1]]  # typos rarely hit the 1st letter
    close = difflib.get_close_matches(token, same_start, n=1, cutoff=FUZZY_CUTOFF)
    return close[0] if close else None


def _fix_side(token: str) -> str | None:
    if token in ("left", "right", "both"):
        return token
    if len(token) >= 3 and token not in _KNOWN_WORDS:
        return _closest(token, ("left", "right", "both"))
    return None


_KNOWN_WORDS = {word for key in SYNONYMS for word in key.split()} | _FILLERS | {"of"}


def _match_words(words: list[str], fuzzy: bool) -> tuple[list[str], list[str]]:
    """Greedy longest-phrase match of words against the synonym table -> (targets, leftovers)."""
    targets: list[str] = []
    leftovers: list[str] = []
    i = 0
    while i < len(words):
        for size in range(min(_MAX_WORDS, len(words) - i), 0, -1):
            key = " ".join(words[i:i + size])
            if key in SYNONYMS:
                targets.extend(SYNONYMS[key])
                i += size
                break
        else:
            matched = False
            if fuzzy:
                for size in (2, 1):
                    key = " ".join(words[i:i + size])
                    if len(key) < 3 or len(words[i:i + size]) < size or words[i] in _KNOWN_WORDS:
                        continue
                    close = _closest(key, SYNONYMS)
                    if close:
                        targets.extend(SYNONYMS[close])
                        i += size
                        matched = True
                        break
            if not matched:
                if words[i] not in _FILLERS and words[i] != "of":
                    leftovers.append(words[i])
                i += 1
    return targets, leftovers


def _expand(targets: list[str], sides: list[str]) -> list[str]:
    labels: list[str] = []
    for target in targets:
        if target.startswith("SIDE "):
            part = target[len("SIDE "):]
            for side in (sides or list(SIDES)):
                labels.append(f"{side} {part}")
        else:
            labels.append(target)
    return labels


def _parse_item(item: str, fuzzy: bool = True) -> tuple[list[str], list[str], list[str]]:
    """One item -> (sides, targets, leftover words). `targets` may hold 'SIDE <part>' entries."""
    cleaned = re.sub(r"^\s*(?:[-*\u2022]+|\d+[.)])\s*", "", item)
    cleaned = re.sub(r"[^a-z\s'-]", " ", cleaned).replace("-", " ").replace("'s", " ")
    words = cleaned.replace("'", " ").split()
    sides: list[str] = []
    rest: list[str] = []
    for word in words:
        side = _fix_side(word) if fuzzy else (word if word in ("left", "right", "both") else None)
        if side == "both":
            sides.extend(s for s in SIDES if s not in sides)
        elif side is not None:
            if side not in sides:
                sides.append(side)
        elif word not in _FILLERS:
            rest.append(word)
    targets, leftovers = _match_words(rest, fuzzy)
    return sides, targets, leftovers


def _dedupe(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


def parse_region_labels(text: str) -> tuple[list[str], list[str]]:
    """Free text -> (labels among REGION_LABELS in order of mention, phrases that mapped to nothing).

    An explicit "None" gives ([], []). See the module docstring for every rule.
    """
    if not text or not text.strip() or is_none_answer(text):
        return [], []
    body = _PREFIX.sub("", _normalise(text))
    labels: list[str] = []
    unmapped: list[str] = []
    for chunk in _CHUNK_SPLIT.split(body):
        pending: list[str] = []      # bare side words waiting for a part
        pending_items: list[str] = []
        previous: list[str] = []     # sides of the previous item in this chunk
        for raw in _ITEM_SPLIT.split(chunk):
            item = raw.strip().strip("\"'`.:!?[](){}").strip()
            if not item:
                continue
            sides, targets, leftovers = _parse_item(item)
            if not targets:
                if sides and not leftovers:
                    pending.extend(s for s in sides if s not in pending)
                    pending_items.append(item)
                else:
                    unmapped.append(item)
                continue
            own = pending + [s for s in sides if s not in pending]
            if not own and any(t.startswith("SIDE ") for t in targets) and "both" not in item:
                own = previous
            labels.extend(_expand(targets, own))
            previous, pending, pending_items = own, [], []
        unmapped.extend(pending_items)  # a side word that no part followed
    return _dedupe([label for label in labels if label in REGION_LABELS]), _dedupe(unmapped)


def find_region_words(text: str) -> tuple[list[str], list[str]]:
    """Exact (no fuzzy) body-part words found anywhere in running text -> (labels, words found).

    Used by the text-only baseline: sides come from "left"/"right" written just before the part.
    """
    words = re.sub(r"[^a-z\s'-]", " ", _normalise(text)).replace("-", " ").replace("'s", " ").split()
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
        for size in range(min(_MAX_WORDS + 1, len(words) - i), 0, -1):
            key = " ".join(words[i:i + size])
            # "the" inside phrases such as "behind the knees" / "back of the head"
            compact = " ".join(w for w in words[i:i + size] if w != "the")
            hit = key if key in SYNONYMS else (compact if compact in SYNONYMS and
                                                words[i] != "the" else None)
            if hit:
                labels.extend(_expand(list(SYNONYMS[hit]), side))
                found.append(" ".join(words[i:i + size]))
                i += size
                side = []
                break
        else:
            if word not in _FILLERS:
                side = [] if word not in ("and", "his", "her", "their") else side
            i += 1
    return _dedupe([label for label in labels if label in REGION_LABELS]), found


def labels_in_group(group: str) -> tuple[str, ...]:
    return GROUPS[group]
