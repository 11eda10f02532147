"""One annotator's answers from two writers: the durable JSONL (this app) and a released-format
`set_N.json` (the released app, or this app in an earlier deployment). Neither source may drop a
response: every record either holds is kept in the JSONL history, and the answer that counts for
a question is its latest record (by `answered_at_utc`, then `redo_count`).

A conflict is two answers to one question neither of which knew the other: the later one does not
carry a higher `redo_count` than the earlier (a redo always counts up from the answer it replaces)
and the letters differ. Both stay in the history; the later one counts; the researcher is told."""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, UTC

from components.cloze.questions import Question

_OLDEST = datetime.min.replace(tzinfo=UTC)


def answered_at(rec: dict) -> datetime:
    try:
        when = datetime.fromisoformat(str(rec.get("answered_at_utc")))
    except ValueError:
        return _OLDEST
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def redo_count(rec: dict) -> int:
    try:
        return int(rec.get("redo_count") or 0)
    except (TypeError, ValueError):
        return 0


def order_key(rec: dict) -> tuple[datetime, int]:
    return answered_at(rec), redo_count(rec)


def identity(rec: dict) -> tuple:
    """Two records are the same answer when task, letter and answer time agree (a record copied
    between the two files keeps all three)."""
    return rec.get("task_index"), str(rec.get("answer")), str(rec.get("answered_at_utc"))


def resolve(history: list[dict]) -> dict[int, dict]:
    """Task index -> the record that counts (latest by time; for equal times the later written)."""
    latest: dict[int, dict] = {}
    for rec in history:
        i = rec.get("task_index")
        if isinstance(i, int) and (i not in latest or order_key(rec) >= order_key(latest[i])):
            latest[i] = rec
    return latest


@dataclass(frozen=True)
class Conflict:
    task_index: int
    kept: dict      # the later answer (the one that counts)
    other: dict     # the earlier answer it did not know about

    def line(self) -> str:
        return (f"question {self.task_index + 1}: answered {self.other.get('answer')} at "
                f"{self.other.get('answered_at_utc')} and {self.kept.get('answer')} at "
                f"{self.kept.get('answered_at_utc')} by two writers that did not see each other; "
                f"the later ({self.kept.get('answer')}) counts, both are kept")


def conflicts(history: list[dict]) -> list[Conflict]:
    by_task: dict[int, list[dict]] = {}
    for rec in history:
        if isinstance(rec.get("task_index"), int):
            by_task.setdefault(rec["task_index"], []).append(rec)
    out = []
    for i, recs in sorted(by_task.items()):
        recs = sorted(recs, key=order_key)
        for earlier, later in zip(recs, recs[1:]):
            if redo_count(later) <= redo_count(earlier) and str(later.get("answer")) != str(earlier.get("answer")):
                out.append(Conflict(i, later, earlier))
    return out


@dataclass
class FileMerge:
    """What a matching result file adds to the history."""

    imported: list[dict] = field(default_factory=list)    # new to the JSONL, task index mapped to ours
    held: set[int] = field(default_factory=set)           # our task indices the file holds an answer for
    unmapped: list[dict] = field(default_factory=list)    # answers to questions this schedule lacks
    remapped: int = 0                                      # answers found at another index (by stem, dim)


def merge_file(history: list[dict], responses: dict[str, dict], questions: tuple[Question, ...] | list[Question]
               ) -> FileMerge:
    """The file's responses placed on this schedule: by their index when the question there is the
    same (stem and dim), else by (stem, dim) (the option maps depend only on seed, stem and dim, so
    an answer keeps its meaning at another index); answers already in the history are not imported
    again."""
    where = {(q.stem, q.dim): i for i, q in enumerate(questions)}
    known = {identity(r) for r in history}
    out = FileMerge()
    for key, rec in sorted(responses.items(), key=lambda kv: int(kv[0]) if kv[0].lstrip("-").isdigit() else 0):
        try:
            index = int(rec.get("task_index", key))
        except (TypeError, ValueError):
            index = -1
        pair = (rec.get("stem"), rec.get("dim"))
        if not (0 <= index < len(questions) and (questions[index].stem, questions[index].dim) == pair):
            if pair not in where:
                out.unmapped.append(rec)
                continue
            index = where[pair]
            out.remapped += 1
        placed = {**rec, "task_index": index}
        out.held.add(index)
        if identity(placed) not in known:
            known.add(identity(placed))
            out.imported.append(placed)
    return out
