"""HAPACT's 18 body-region labels, their 7 evaluation groups, and a parser for free-text answers.

The vocabulary (labels, groups, colours, synonyms) lives in `assets/regions.json`
(the HAPACT paper, A.6.3, docs/body.md).

Parser choices (`read_region_answer`, `parse_region_labels`; docs/decisions.md, "Impact"):
- Only the answer is read: closed `<think>` blocks are dropped; a reply whose reasoning never
  closed, or one longer than components.common.replies.MAX_REPLY_CHARS, is unparsed.
- The answer may carry the paper's answer format ("The affected body regions are ..."); that
  prefix is dropped. A reply that repeats the prompt's list of all 18 labels in the prompt's order
  is an echo, not an answer: the echo is cut out and the rest read; if nothing is left the reply
  is unparsed (naming all 18 labels in any other order is an answer).
- Clauses are split on commas, semicolons, new lines, sentence ends and "but"; items within a
  clause on "and", "&", "/", "+", "plus", "as well as".
- Negation: a negation word (no, not, n't, never, without, nothing, neither, nor, except,
  excluding, besides, other than, apart from) negates the parts after it up to the end of its
  clause ("No head injury; left forearm." -> left forearm; "head and not neck" -> head; "not the
  head but the neck" -> neck). A negation with no part after it negates the parts before it
  (its subject): "The head is not affected; only the right hand." -> right hand; "the head and
  neck are not hit" -> neither; "the head is hit and the neck is not" -> head (a part with words
  of its own, "is hit", is its own statement). "not only" / "not just" are no negation. Negated labels are taken
  out of the answer. "everything / all (regions) / the whole body except X" (also "but X", "other
  than X") is the set complement: every label but X, in the paper's order.
- Each item is matched, longest phrase first, against the 18 labels and the synonym table
  (face/skull/jaw -> head, stomach/ribs -> chest, shin/knee -> calf, buttocks -> butt, ...).
- Left/right are the body's own sides, taken from the words "left"/"right" in the item. An item
  with no side that names a sided part ("hand", "calves", "legs", "both knees") gets both sides:
  the parser never guesses one side. A bare side word ("left and right calves") passes to the
  next item, and a part with no side inherits the side of the item before it within the same
  clause ("left calf and thigh" -> left calf, left thigh).
- "leg(s)" -> thigh + calf, "arm(s)" -> upper arm + forearm, "torso" -> chest + back.
- Typos: in an item of at most FUZZY_MAX_WORDS words, a word that matches nothing is compared with
  difflib (ratio >= 0.85, words of at least 3 letters, same first letter, length within 2) against
  the synonym keys, and side words against left/right/both: "rigth calf" -> right calf; one swap
  of neighbouring letters also counts ("lfet" -> left). Common English words
  (components/impact/common_words.py: "but", "had", "should", "fee", "wait", ...) are never
  fuzzy-matched, nor is any word of a longer sentence.
- "None"/"nothing"/"no region" is an explicit empty answer: no labels and nothing unmapped.
- Items that match nothing are returned verbatim as unmapped, never guessed. A reply that names
  no label (after negations) and is not "None" is unparsed.
"""
from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from components.common.replies import ReplyRefused, answer_part
from components.impact.common_words import COMMON_WORDS

ASSET = Path(__file__).resolve().parents[2] / "assets" / "regions.json"
SIDES = ("left", "right")
OK, NONE, UNPARSED = "ok", "none", "unparsed"


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
_CLAUSE_SPLIT = re.compile(r"[,;\n!?]+|\.(?!\w)|\bbut\b")
_ITEM_SPLIT = re.compile(r"\band\b|&|/|\+|\bplus\b|\bas well as\b")
_NEGATIONS = {"no", "not", "never", "without", "nothing", "neither", "nor", "except", "excluding",
              "besides", "excl", "minus"}
_NEGATION_PHRASES = re.compile(r"\b(?:other\s+than|apart\s+from|save\s+for)\b")
_NOT_ONLY = re.compile(r"\bnot\s+(?:only|just|merely)\b")
_EVERYTHING = re.compile(
    r"\b(?:everything|every\s+(?:body\s+)?(?:region|part)|all(?:\s+(?:the\s+)?(?:body\s+)?"
    r"(?:regions|parts|labels))?|(?:the\s+)?(?:whole|entire|full)\s+body)\s+"
    r"(?:except|but|other\s+than|apart\s+from|excluding|save)\b(?:\s+for\b)?")
_ALL = "\x00all\x00"  # marks "everything except" (NULs of the reply are blanked first)
FUZZY_CUTOFF = 0.85
#: the most items (clauses and "and"-joined parts) a reply may list: 18 labels, each perhaps with a
#: synonym and a negation, fit many times over; more is a runaway reply, unparsed (bounded work)
MAX_ITEMS = 256
#: the most words a region reply may have (an answer with a paragraph of explanation fits)
MAX_WORDS_READ = 2000
#: fuzzy matching is for label lists ("rigth calf"); a longer item is prose, read exactly
FUZZY_MAX_WORDS = 3


def _normalise(text: str) -> str:
    text = text.replace("\u201c", '"').replace("\u201d", '"').replace("\u2019", "'")
    return text.strip().lower()


def _echo_pattern() -> re.Pattern:
    sep = r"[\s,;:.*'\"`\[\]()-]*(?:(?:and|or)\s+)?"
    labels = [r"[\s-]+".join(map(re.escape, label.split())) for label in REGION_LABELS]
    return re.compile(r"(?:(?:the\s+)?possible\s+body[\s-]*regions\s+are\s*:?\s*)?"
                      + sep.join(labels) + r"\b")


_ECHO = _echo_pattern()


def _is_none_body(body: str) -> bool:
    if len(body) > 200:  # "The affected body regions are none of the above." and the like
        return False
    body = _strip_prefix(body)
    body = re.sub(r"[\"'`.\[\]()*!]", " ", body)
    return " ".join(body.split()) in _NONE_ANSWERS


def _one_swap(a: str, b: str) -> bool:
    """True when b is a with two neighbouring letters swapped ("lfet" -> "left")."""
    if len(a) != len(b) or a == b:
        return False
    diff = [i for i in range(len(a)) if a[i] != b[i]]
    return len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] \
        and a[diff[1]] == b[diff[0]]


@lru_cache(maxsize=4096)
def _closest(token: str, candidates: tuple[str, ...]) -> str | None:
    """difflib match at FUZZY_CUTOFF, or a single neighbouring-letter swap (difflib scores those
    low). Only candidates with the same first letter and a length within 2 can reach the cutoff
    here, so only those are compared (bounded work per word)."""
    near = [c for c in candidates if c[:1] == token[:1] and abs(len(c) - len(token)) <= 2]
    swapped = [c for c in near if _one_swap(token, c)]
    if swapped:
        return swapped[0]
    close = difflib.get_close_matches(token, near, n=1, cutoff=FUZZY_CUTOFF)
    return close[0] if close else None


_SIDE_WORDS = ("left", "right", "both")
_SYNONYM_KEYS = tuple(SYNONYMS)
_KNOWN_WORDS = {word for key in SYNONYMS for word in key.split()} | _FILLERS | {"of"}


def _fuzzy_ok(token: str) -> bool:
    return len(token) >= 3 and token not in _KNOWN_WORDS and token not in COMMON_WORDS \
        and token not in _NEGATIONS


def _fix_side(token: str, fuzzy: bool) -> str | None:
    if token in _SIDE_WORDS:
        return token
    if fuzzy and _fuzzy_ok(token):
        return _closest(token, _SIDE_WORDS)
    return None


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
            if fuzzy and _fuzzy_ok(words[i]):
                for size in (2, 1):
                    if i + size > len(words):
                        continue
                    close = _closest(" ".join(words[i:i + size]), _SYNONYM_KEYS)
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


@dataclass
class _Item:
    sides: list[str]
    targets: list[str]      # may hold 'SIDE <part>' entries
    negated: list[str]      # targets after a negation word
    leftovers: list[str]
    negation: bool          # a negation word appeared (it carries to the end of the clause)
    #: the item's own negation names no part after it, but parts come before it ("the head is
    #: not affected", "left hand not hit"): it negates those parts (a negation after the part)
    backward: bool = False


def _words_of(item: str) -> list[str]:
    cleaned = re.sub(r"^\s*(?:[-*\u2022]+|\d+[.)])\s*", "", item)
    cleaned = re.sub(r"[^a-z\s'-]", " ", cleaned).replace("-", " ").replace("'s", " ")
    return cleaned.replace("'", " ").split()


def _parse_item(item: str, negated_already: bool, fuzzy: bool = True) -> _Item:
    """One item -> its sides, positive and negated targets, leftover words."""
    words = _words_of(item)
    fuzzy = fuzzy and len([w for w in words if w not in _FILLERS]) <= FUZZY_MAX_WORDS
    sides: list[str] = []
    before: list[str] = []
    after: list[str] = []
    negation = negated_already
    for word in words:
        if word in _NEGATIONS:
            negation = True
            continue
        side = _fix_side(word, fuzzy)
        if side == "both":
            sides.extend(s for s in SIDES if s not in sides)
        elif side is not None:
            if side not in sides:
                sides.append(side)
        elif word not in _FILLERS:
            (after if negation else before).append(word)
    targets, leftovers = _match_words(before, fuzzy)
    negated, more = _match_words(after, fuzzy)
    backward = negation and not negated_already and bool(targets) and not negated
    return _Item(sides, targets, negated, leftovers + more, negation, backward)


def _dedupe(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


@dataclass
class RegionReading:
    """What a region reply says: labels in order of mention, phrases that mapped to nothing, the
    labels it negated, and its status ("ok" | "none" | "unparsed") with the reason."""

    labels: list[str]
    unmapped: list[str] = field(default_factory=list)
    status: str = OK
    negated: list[str] = field(default_factory=list)
    reason: str = ""


class _Reader:
    """Collects the positive and negated labels of one reply, clause by clause."""

    def __init__(self) -> None:
        self.labels: list[str] = []
        self.negated: list[str] = []
        self.unmapped: list[str] = []

    def clause(self, clause: str) -> None:
        pending: list[str] = []      # bare side words waiting for a part
        pending_items: list[str] = []
        previous: list[str] = []     # sides of the previous item in this clause
        bare: list[str] = []         # labels of the items just before that name parts only
        negation = False
        for raw in _ITEM_SPLIT.split(clause):
            item = raw.strip().strip("\"'`.:!?[](){}").strip()
            if not item:
                continue
            parsed = _parse_item(item, negation)
            negation = parsed.negation
            if not parsed.targets and not parsed.negated:
                if parsed.sides and not parsed.leftovers:
                    pending.extend(s for s in parsed.sides if s not in pending)
                    pending_items.append(item)
                elif not (parsed.negation and not parsed.leftovers):
                    self.unmapped.append(item)
                    bare = []
                continue
            own = pending + [s for s in parsed.sides if s not in pending]
            sided = any(t.startswith("SIDE ") for t in parsed.targets + parsed.negated)
            if not own and sided and "both" not in item:
                own = previous
            labels = _expand(parsed.targets, own)
            if parsed.backward:
                # "the head and neck are not affected": the parts named just before share it;
                # the negation ends with its subject ("..., and the hand is hit" is not negated)
                self.negated.extend(bare + labels)
                bare, negation = [], False
            else:
                self.labels.extend(labels)
                bare = labels if not parsed.leftovers and not parsed.negation else []
            self.negated.extend(_expand(parsed.negated, own))
            previous, pending, pending_items = own, [], []
        self.unmapped.extend(pending_items)  # a side word that no part followed


def _strip_prefix(body: str) -> str:
    return _PREFIX.sub("", body) if "affected" in body else body


def _cut_echo(body: str) -> tuple[str, bool]:
    if "right foot" not in body:  # the list's last label (cheap test before the regex)
        return body, False
    cut = _ECHO.sub(" ", body)
    return cut, cut != body


def _rough_items(body: str) -> int:
    """An upper bound of the items `_read_body` would read, by counting separators (no regex)."""
    return 1 + sum(body.count(sep) for sep in (",", ";", "\n", "!", "?", ".", "but", "and", "&",
                                                "/", "+", "plus", "as well as"))


class _TooLong(ValueError):
    pass


def _read_body(body: str) -> _Reader:
    reader = _Reader()
    body = body.replace("\x00", " ")  # keeps the _ALL marker the parser's own
    items = _rough_items(body)
    if items > MAX_ITEMS:
        raise _TooLong(f"the reply lists about {items:,} items; a region answer has at most "
                       f"{MAX_ITEMS} (a runaway reply is not read)")
    words = body.count(" ") + body.count("\n") + body.count("\t")
    if words > MAX_WORDS_READ:
        raise _TooLong(f"the reply has about {words:,} words; a region answer has at most "
                       f"{MAX_WORDS_READ:,} (a runaway reply is not read)")
    if "n't" in body:
        body = body.replace("n't", " not")
    if "not" in body:
        body = _NOT_ONLY.sub(" ", body)
    if "than" in body or "apart" in body or "save" in body:
        body = _NEGATION_PHRASES.sub(" except ", body)
    # "everything except / but the head": every label, less what follows (before "but" splits)
    body = _EVERYTHING.sub(f" {_ALL} except ", body)
    for clause in _CLAUSE_SPLIT.split(body):
        if _ALL in clause:
            reader.labels.extend(REGION_LABELS)
            clause = clause.replace(_ALL, " ")
        reader.clause(clause)
    return reader


def read_region_answer(text: str | None) -> RegionReading:
    """Free text -> RegionReading (see the module docstring for every rule)."""
    try:
        answer = answer_part(text)
    except ReplyRefused as exc:
        return RegionReading([], [], UNPARSED, reason=str(exc))
    body = _normalise(answer)
    if not body:
        return RegionReading([], [], UNPARSED, reason="empty reply")
    if _is_none_body(body):
        return RegionReading([], [], NONE)
    body, echoed = _cut_echo(body)
    try:
        reader = _read_body(_strip_prefix(body))
    except _TooLong as exc:
        return RegionReading([], [], UNPARSED, reason=str(exc))
    negated = set(reader.negated)
    labels = _dedupe([label for label in reader.labels if label in REGION_LABELS
                      and label not in negated])
    unmapped = _dedupe(reader.unmapped)
    if labels:
        return RegionReading(labels, unmapped, OK, _dedupe(reader.negated))
    if echoed:
        why = "the reply repeats the prompt's list of all 18 labels (an echo, not an answer)"
    elif reader.negated:
        why = "the reply only names regions it negates"
    else:
        why = "no body-region label found in the reply"
    return RegionReading([], unmapped, UNPARSED, _dedupe(reader.negated), why)


def parse_region_labels(text: str | None) -> tuple[list[str], list[str]]:
    """Free text -> (labels among REGION_LABELS in order of mention, phrases that mapped to nothing).

    An explicit "None" gives ([], []); an unparsed reply gives no labels. See the module docstring.
    """
    reading = read_region_answer(text)
    return reading.labels, reading.unmapped


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

