"""Every parser of the Impact tab's model replies: the temporal answer (every Table 7 output form
and common drift) and the region list (`read_region_answer`, below).

Temporal answers. Accepted: JSON lists ``[[1.04, 1.375], ...]`` (numbers or time strings, or objects with start/end),
``[[MM:SS.SSS, MM:SS.SSS], ...]``, ``HH:MM:SS(.fff)``, ``The event happens in x1 - y1 seconds; ...``,
``From s to e``, ``between s and e``, ``s-e``, ``s to e``, ``start: s, end: e``, bracketed
``[s, e]`` / ``(s, e)``, stray text around any of them, and echoed ``Frame at 2.375s:`` labels. Intervals are swapped when
reversed, clamped to the clip, and merged when they overlap (one sort and sweep: O(n log n)); the
answer's order is kept as the ranking (a merge keeps the better rank). Scores are the model's own
when it gives one per interval ([s, e, score]), else rank-derived.
"None" / no interval is an empty prediction; text with no interval at all is *unparsed*.
The raw text is always kept. Reading times and JSON pairs is components.common.intervals'.

Reading what the model meant (docs/decisions.md, "Impact"):
- only the answer is read: closed ``<think>`` blocks are dropped and a reply whose reasoning never
  closed, or one longer than components.common.replies.MAX_REPLY_CHARS, is unparsed
  (components.common.replies.answer_part);
- a pair the reply negates ("not 400 - 410 but 430 - 440", "400 - 410, not 430 - 440", "instead of
  1 - 2") is dropped: a negation word (not, no, never, n't, except, excluding, instead of, rather
  than, other than, apart from, besides) between the previous clause break (``, ; : ! ?``, a
  sentence end, "but", "however") or the previous interval and the pair, at most NEGATION_REACH
  characters back. A reply whose only pairs are negated is unparsed;
- a comma only joins two numbers into an interval inside brackets (``[s, e]``, ``(s, e)``):
  "I count 3, 4 or 5 impacts" holds no interval; "and" only after "between" (or in "starts at s
  and ends at e");
- dates (2024-05-01, 2024/05/01, 01/05/2024, with an optional clock time) are not times, and a
  dash chain (``1-2-3``) is no interval.

Region lists (A.6.3). Parser choices (`read_region_answer`; docs/decisions.md, "Impact"):
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
import math
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from backends.ask import Unparsed
from components.common.intervals import DASHES, TIME, UNIT, json_span, pairs_in_json, parse_time
from components.common.replies import ReplyRefused, answer_part
from components.impact.common_words import COMMON_WORDS
from components.impact.regions import FILLERS, MAX_SYNONYM_WORDS, REGION_LABELS, SIDES, SYNONYMS, dedupe, \
    expand_sides, normalise

OK, NONE, UNPARSED = "ok", "none", "unparsed"

_FRAME_AT = re.compile(rf"\bframe\s+at\s+({TIME}){UNIT}\s*:?", re.IGNORECASE)
_NONE = re.compile(r"^\W*(none|null|nil|n/?a|no)\W*$|\bno\s+(?:such\s+|matching\s+|relevant\s+)?"
                   r"(?:impact|interval|moment|event|segment)s?\b|\bdoes\s+not\s+(?:occur|appear|happen)"
                   r"|\bnot\s+(?:found|present|visible|shown)\b|^\W*\[\s*\]\W*$", re.IGNORECASE)
_TOUCH = 1e-3  # seconds
#: one time as written, with its unit; pairs are read from the gaps between consecutive times
_TOKEN = re.compile(rf"(?<![\d.])({TIME}){UNIT}", re.IGNORECASE)
_DASH_GAP = re.compile(r"\s*(?:-|to|~|until|through|till)\s*", re.IGNORECASE)
_BETWEEN_GAP = re.compile(r"\s*(?:and|-|to)\s*", re.IGNORECASE)
_COMMA_GAP = re.compile(r"\s*,\s*")
_BETWEEN = re.compile(r"\bbetween\s*$", re.IGNORECASE)
_START_BEFORE = re.compile(r"\bstart(?:s|ing)?(?:\s+time)?\s*(?:at|:|=|is)?\s*$", re.IGNORECASE)
_END_GAP = re.compile(r"\s*[,;]?\s*(?:and\s+)?(?:the\s+)?end(?:s|ing)?(?:\s+time)?\s*(?:at|:|=|is)?\s*",
                      re.IGNORECASE)
_CHAIN = re.compile(r"\s*[-/]\s*\d")  # "1-2-3" and "1-2/3" are no interval
_OPENERS = {"[": "]", "(": ")"}
_DATE = re.compile(r"(?<![\d.])(?:\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.]\d{4})"
                   r"(?:[T ]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?(?![\d.])")
_BREAK = re.compile(r"[,;:!?\n]|\.(?!\d)|\b(?:but|however)\b", re.IGNORECASE)
_NEGATION = re.compile(r"\b(?:not|no|never|except|excluding|besides)\b|n't\b|\binstead\s+of\b"
                       r"|\brather\s+than\b|\bother\s+than\b|\bapart\s+from\b", re.IGNORECASE)
_NEGATION_HINT = re.compile(r"no|n't|never|except|excluding|instead|rather|other|apart|besides", re.IGNORECASE)
_DIGITS = re.compile(r"\d+")
#: the most digit runs a reply may hold (about 500 intervals written with decimals: HAPACT clips
#: hold a few impacts each); more is a runaway reply, unparsed, so every call stays bounded
MAX_NUMBERS = 2000
#: longest reply read as an explicit "None" ("no such impact occurs"); a longer one without any
#: interval is unparsed
NONE_REACH = 4000
#: how far before a pair a negation is looked for (its clause rarely starts further back)
NEGATION_REACH = 80
#: the most "merged into" notes one answer records (a runaway answer must not grow its record)
MAX_NOTES = 50


@dataclass
class ParsedIntervals:
    intervals: list[tuple[float, float]]  # seconds, clamped, merged, in ranked order
    raw: str
    status: str  # "ok" | "none" | "unparsed"
    out_of_range: int = 0  # intervals dropped because they lay wholly outside the clip
    notes: list[str] = field(default_factory=list)
    scores: list[float] | None = None  # the model's own scores, when it gave one per interval

    @property
    def parsed(self) -> bool:
        return self.status != UNPARSED

    def windows(self) -> list[list[float]]:
        """[start, end, score]: the model's scores when it gave them, else rank-derived
        (1, (n-1)/n, ...) so the answer's order is the ranking."""
        n = len(self.intervals)
        if self.scores is not None and len(self.scores) == n:
            return [[s, e, float(sc)] for (s, e), sc in zip(self.intervals, self.scores)]
        return [[s, e, (n - rank) / n] for rank, (s, e) in enumerate(self.intervals)]


def _note(notes: list[str], text: str) -> None:
    if len(notes) < MAX_NOTES:
        notes.append(text)
    elif len(notes) == MAX_NOTES:
        notes.append("(further notes left out)")


def _clip(pairs: list[tuple], duration: float | None, fps: float | None,
          notes: list[str]) -> tuple[list[tuple[int, float, float, Any]], int]:
    """(rank, start, end, score) of every usable pair: swapped, single instants widened to a frame,
    clamped to the clip; those wholly outside it counted."""
    kept, dropped = [], 0
    for rank, (s, e, score) in enumerate(pairs):
        if e < s:
            s, e = e, s
            _note(notes, f"reversed interval {e}-{s} swapped")
        if s == e and fps:
            # a single instant names the frame that starts there ("Frame at 2.375s")
            e = s + 1.0 / fps
        if duration is not None:
            if s >= duration or e <= 0:
                dropped += 1
                _note(notes, f"interval {s}-{e} lies outside the clip (0-{duration:.3f}s), dropped")
                continue
            if s < 0 or e > duration:
                _note(notes, f"interval {s}-{e} clamped to the clip")
            s, e = max(0.0, s), min(duration, e)
        if e <= s or not math.isfinite(e - s):  # inf survives only without a clip duration
            dropped += 1
            continue
        kept.append((rank, float(s), float(e), score))
    return kept, dropped


def merge_intervals(kept: list[tuple[int, float, float, Any]],
                    notes: list[str] | None = None) -> list[tuple[int, float, float, Any]]:
    """(rank, start, end, score) entries -> the same with overlapping ones merged, in rank order.
    Overlapping (or, within the 1 ms that 3-decimal timestamps lose, touching) intervals become
    one, at the rank and with the score of its best-ranked member: one sort and one sweep."""
    notes = [] if notes is None else notes
    groups: list[list] = []  # [best rank, start, end, score of the best rank]
    for rank, s, e, score in sorted(kept, key=lambda k: (k[1], k[0])):
        if groups and s <= groups[-1][2] + _TOUCH:
            group = groups[-1]
            group[2] = max(group[2], e)
            if rank < group[0]:
                group[0], group[3] = rank, score
            _note(notes, f"interval {s}-{e} merged with an overlapping one")
        else:
            groups.append([rank, s, e, score])
    return sorted((tuple(g) for g in groups), key=lambda g: g[0])


def _json_pairs(text: str) -> list[tuple]:
    try:
        return pairs_in_json(json_span(text))
    except RecursionError:  # absurdly deep nesting: not an answer
        return []


def _seconds(token: str) -> float:
    return float(token) if ":" not in token else parse_time(token)


def _is_pair(text: str, first: re.Match, second: re.Match) -> bool:
    """Whether two consecutive times form an interval: "s - e" / "s to e" (also after "from"),
    "between s and e", or "[s, e]" / "(s, e)" with the brackets; never inside a dash chain."""
    gap = text[first.end():second.start()]
    if first.start() > 0 and text[first.start() - 1] in "-:/":
        return False  # the tail of a chain or of a clock time, not a start
    if _CHAIN.match(text, second.end()):
        return False
    if _DASH_GAP.fullmatch(gap):
        return True
    before = text[max(0, first.start() - 24):first.start()]
    if _BETWEEN_GAP.fullmatch(gap) and _BETWEEN.search(before):
        return True
    if _END_GAP.fullmatch(gap) and _START_BEFORE.search(before):  # "start: 1.0, end: 2.0"
        return True
    if _COMMA_GAP.fullmatch(gap):
        opener = before.rstrip()[-1:]
        after = text[second.end():second.end() + 16].lstrip()[:1]
        return opener in _OPENERS and after == _OPENERS[opener]
    return False


def _text_pairs(text: str) -> tuple[list[tuple[float, float, None]], int]:
    """Pairs written in prose, in order, and how many of them the reply negated (a negation word
    in the same clause, at most NEGATION_REACH characters before the pair). One pass over the
    times of the text (linear)."""
    pairs, negated, last = [], 0, 0
    previous = None
    for token in _TOKEN.finditer(text):
        if previous is None or not _is_pair(text, previous, token):
            previous = token
            continue
        first, previous = previous, None
        before = text[max(last, first.start() - NEGATION_REACH):first.start()]
        last = token.end()
        if _NEGATION_HINT.search(before):
            breaks = list(_BREAK.finditer(before))
            clause = before[breaks[-1].end():] if breaks else before
            if _NEGATION.search(clause):
                negated += 1
                continue
        pairs.append((_seconds(first.group(1)), _seconds(token.group(1)), None))
    return pairs, negated


def _finite(pairs: list[tuple]) -> list[tuple]:
    return [p for p in pairs if math.isfinite(p[0]) and math.isfinite(p[1])]


def parse_intervals(text: str | None, *, duration: float | None = None,
                    fps: float | None = 24.0) -> ParsedIntervals:
    """Parse a model's answer into ranked intervals in seconds within [0, duration]."""
    raw = text if text is not None else ""
    try:
        answer = answer_part(raw)
    except ReplyRefused as exc:
        return ParsedIntervals([], raw, UNPARSED, notes=[str(exc)])
    numbers = len(_DIGITS.findall(answer))
    if numbers > MAX_NUMBERS:
        return ParsedIntervals([], raw, UNPARSED, notes=[
            f"the reply holds {numbers:,} numbers; an answer has at most {MAX_NUMBERS:,} "
            "(a runaway reply is not read)"])
    cleaned = answer.translate(DASHES).replace("\u2026", "...")
    cleaned = re.sub(r"```(?:json)?", " ", cleaned)
    pairs, negated = _json_pairs(cleaned), 0
    if not pairs:
        body = _DATE.sub(" ", cleaned)
        # "Frame at 2.375s:" echoes are labels, not intervals: keep only their time
        frame_times: list[float] = []
        if "frame" in body.lower():
            frame_times = [parse_time(m.group(1)) for m in _FRAME_AT.finditer(body)]
            body = _FRAME_AT.sub(lambda m: f" {m.group(1)} ", body)
        pairs, negated = _text_pairs(body)
        if not pairs and frame_times and not negated:
            pairs = [(t, t, None) for t in frame_times]  # the model named single frames
    pairs = _finite(pairs)
    if pairs:
        notes: list[str] = []
        kept, dropped = _clip(pairs, duration, fps, notes)
        merged = merge_intervals(kept, notes)
        intervals = [(s, e) for _, s, e, _ in merged]
        scores = [sc for _, _, _, sc in merged]
        given = scores if scores and all(sc is not None for sc in scores) else None
        if negated:
            notes.insert(0, f"{negated} interval(s) the reply negated were left out")
        return ParsedIntervals(intervals, raw, OK, dropped, notes, given)
    if len(cleaned) <= NONE_REACH and _NONE.search(cleaned.strip()):
        return ParsedIntervals([], raw, NONE)
    why = [f"the reply only negates interval(s) ({negated})"] if negated else []
    return ParsedIntervals([], raw, UNPARSED, notes=why)


# -- frame numbers and region replies ----------------------------------------------------------

def frame_index_answer(text: str, num_frames: int, duration: float) -> ParsedIntervals:
    """A VTimeLLM-style answer ("From 12 to 30": numbers of the frames sent, 0-based, spread
    uniformly over the clip, as VTimeLLM's own "From 00 to 99" over its 100 frames) in seconds:
    frame i of n stands for [i/n, (i+1)/n] x duration, so "From a to b" is [a/n, (b+1)/n] x duration.
    Read by the one interval parser first (negation, reasoning, size rules), clamped to the clip."""
    # fps=1e9: "From 50 to 50" (one frame) stays an interval of (almost) no width, then frame 50
    parsed = parse_intervals(text, duration=None, fps=1e9)
    if parsed.status != OK or num_frames <= 0:
        return parsed
    step = duration / num_frames
    intervals, scores, notes = [], [], list(parsed.notes)
    for (a, b), window in zip(parsed.intervals, parsed.windows()):
        s, e = max(0.0, a * step), min(duration, (b + 1) * step)
        if e <= s:
            notes.append(f"frames {a:g}-{b:g} lie outside the {num_frames} frames sent, dropped")
            continue
        intervals.append((s, e))
        scores.append(window[2])
    notes.append(f"frame numbers read as indices of the {num_frames} frames sent "
                 f"({step:.3f} s each)")
    return ParsedIntervals(intervals, parsed.raw, OK, parsed.out_of_range, notes, scores)


def no_label_reason(unmapped: list[str]) -> str:
    return ("no body-region label found in the reply"
            + (f" (unmapped: {', '.join(unmapped)})" if unmapped else ""))


def read_regions(raw: str) -> tuple[list[str], list[str]]:
    """(labels, unmapped) of a reply; raises Unparsed when it names no label and is not "None"
    (also for an echo of the prompt's label list, a reply that only negates, unfinished reasoning
    or an oversized reply: read_region_answer below)."""
    reading = read_region_answer(raw)
    if reading.status in (OK, NONE):
        return reading.labels, reading.unmapped
    raise Unparsed(reading.reason + (f" (unmapped: {', '.join(reading.unmapped)})"
                                     if reading.unmapped else ""))


# -- region lists (A.6.3; the rules: the module docstring) ---------------------------------------

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
_KNOWN_WORDS = {word for key in SYNONYMS for word in key.split()} | FILLERS | {"of"}


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
        for size in range(min(MAX_SYNONYM_WORDS, len(words) - i), 0, -1):
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
                if words[i] not in FILLERS and words[i] != "of":
                    leftovers.append(words[i])
                i += 1
    return targets, leftovers


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
    fuzzy = fuzzy and len([w for w in words if w not in FILLERS]) <= FUZZY_MAX_WORDS
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
        elif word not in FILLERS:
            (after if negation else before).append(word)
    targets, leftovers = _match_words(before, fuzzy)
    negated, more = _match_words(after, fuzzy)
    backward = negation and not negated_already and bool(targets) and not negated
    return _Item(sides, targets, negated, leftovers + more, negation, backward)


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
            labels = expand_sides(parsed.targets, own)
            if parsed.backward:
                # "the head and neck are not affected": the parts named just before share it;
                # the negation ends with its subject ("..., and the hand is hit" is not negated)
                self.negated.extend(bare + labels)
                bare, negation = [], False
            else:
                self.labels.extend(labels)
                bare = labels if not parsed.leftovers and not parsed.negation else []
            self.negated.extend(expand_sides(parsed.negated, own))
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
    body = normalise(answer)
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
    labels = dedupe([label for label in reader.labels if label in REGION_LABELS
                      and label not in negated])
    unmapped = dedupe(reader.unmapped)
    if labels:
        return RegionReading(labels, unmapped, OK, dedupe(reader.negated))
    if echoed:
        why = "the reply repeats the prompt's list of all 18 labels (an echo, not an answer)"
    elif reader.negated:
        why = "the reply only names regions it negates"
    else:
        why = "no body-region label found in the reply"
    return RegionReading([], unmapped, UNPARSED, dedupe(reader.negated), why)
